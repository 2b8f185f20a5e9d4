/* Spin locks on ll/sc: test, then test-and-set, so a waiting core spins
   on an ordinary load and only tries sc when the lock looks free. */
#include "sync.h"

void __attribute__((noinline)) lock_acquire(volatile u32 *l)
{
	for (;;) {
		while (*l)
			;
		if (cas(l, 0, 1))
			return;
	}
}

u32 __attribute__((noinline)) try_lock(volatile u32 *l)
{
	return *l == 0 && cas(l, 0, 1);
}

/* Test entry (not used by the firmware): each caller adds 1 to a shared
   counter `times` times by a slow read-modify-write, inside the lock if
   `locked`. The total is exact only if the lock excludes. */
volatile u32 selftest_counter;
static volatile u32 selftest_lock;

void lock_selftest(u32 times, u32 locked)
{
	for (u32 i = 0; i < times; i++) {
		if (locked)
			lock_acquire(&selftest_lock);
		u32 v = selftest_counter;
		for (volatile u32 d = 0; d < 3; d++)
			;
		selftest_counter = v + 1;
		if (locked)
			lock_release(&selftest_lock);
	}
}
