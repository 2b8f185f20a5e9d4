/* Layout probes for the SMT study: linked first into the kernel/ *-padK ELFs
   (-DLAYOUT_PAD=K), they move every function of the kernel K × 16 bytes
   and every object of its data K × 64 bytes further, and run nothing
   (docs/models/smt-hot-thread.md, "How much the rows move with layout"). */
#include "kernel.h"

#define STR_(x) #x
#define STR(x) STR_(x)

__asm__(".text\n\t.globl layout_pad_text\nlayout_pad_text:\n\t.fill " STR(LAYOUT_PAD) " * 16, 1, 0\n");

u8 layout_pad_data[LAYOUT_PAD * 64] __attribute__((aligned(64)));
