/* The speed benchmark against qemu-mips (docs/performance.md): the kernels
   of kernels.c for 16 rounds, about 277 M instructions, long enough that
   qemu's start-up is a small part of its time. */
#define ROUNDS 16
#include "kernels.c"
