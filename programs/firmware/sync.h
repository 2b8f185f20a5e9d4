/* Synchronisation for the firmware's cores: ll/sc compare-and-swap, spin
   locks and atomic maximum. The simulator bins cycles by the function a
   core is in, so spinning lives in lock_acquire() alone (sync.c). */
#ifndef SYNC_H
#define SYNC_H

#include "../rt/rt.h"

#define barrier() __asm__ volatile("" ::: "memory")

/* 1 if *p was old and is now new; 0 if *p was not old. */
static inline u32 cas(volatile u32 *p, u32 old, u32 new)
{
	u32 seen, ok;
	__asm__ volatile(
		".set push\n\t.set noreorder\n"
		"1:\tll\t%0, %2\n\t"
		"bne\t%0, %3, 2f\n\t"
		"move\t%1, $0\n\t"
		"move\t%1, %4\n\t"
		"sc\t%1, %2\n\t"
		"beqz\t%1, 1b\n\t"
		"nop\n"
		"2:\n\t.set pop"
		: "=&r"(seen), "=&r"(ok), "+m"(*p)
		: "r"(old), "r"(new)
		: "memory");
	return ok;
}

void lock_acquire(volatile u32 *l);
u32 try_lock(volatile u32 *l);

static inline void lock_release(volatile u32 *l)
{
	barrier();
	*l = 0;
}

#endif
