/* Unbounded recursion: the stack must fault at its limit, as qemu-mips
   dies of SIGSEGV, instead of growing through the address space. With
   several hardware threads (core.threads = 2), thread 0 recurses while thread 1
   waits: it must fault at its own stack's limit, not grow into the
   stack below it. */
#include "../rt/rt.h"

/* Thread 1's stack: the 1 MiB below thread 0's (crates/mips/src/run.rs).
   qemu-mips puts its one stack elsewhere (near 0x40800000). */
#define THREAD1_STACK_TOP 0x7FEFF000u
#define THREAD1_STACK_BOTTOM 0x7FDFF000u

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
	if ((unsigned)&top < THREAD1_STACK_TOP && (unsigned)&top >= THREAD1_STACK_BOTTOM) {
		/* Thread 1: use this stack's top page, then wait. */
		volatile int mine[64];
		mine[0] = 1;
		while (forever)
			mine[1] = mine[0];
		return 0;
	}
	put_str("recursing\n");
	return deeper(&top);
}
