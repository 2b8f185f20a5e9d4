/* Unbounded recursion in one hardware thread of several: run with
   core.threads = 2. Thread 0's stack lies above thread 1's; it must fault
   at its own limit instead of growing into thread 1's stack. */
#include "../rt/rt.h"

/* Thread 1's stack starts 1 MiB below thread 0's (crates/mips/src/run.rs). */
#define THREAD0_STACK_BOTTOM 0x7FEFF000u

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
	if ((unsigned)&top < THREAD0_STACK_BOTTOM) {
		/* Not thread 0: leave a frame in this stack's top page, then wait. */
		volatile int mine[64];
		mine[0] = 1;
		while (forever)
			mine[1] = mine[0];
		return 0;
	}
	put_str("recursing\n");
	return deeper(&top);
}
