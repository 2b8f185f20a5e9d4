/* Unbounded recursion: the stack must fault at its limit, as qemu-mips
   dies of SIGSEGV, instead of growing through the address space. */
#include "../rt/rt.h"

static volatile int forever = 1;

static int __attribute__((noinline)) deeper(volatile int *above)
{
	volatile int frame[16];
	frame[0] = *above + 1;
	if (forever)
		frame[1] = deeper(frame);
	return frame[1];
}

int main(void)
{
	int top = 0;
	put_str("recursing\n");
	return deeper(&top);
}
