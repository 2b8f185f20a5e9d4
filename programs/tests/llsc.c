/* ll/sc through gcc's atomic builtins: add, compare-and-swap, exchange. */
#include "../rt/rt.h"

static volatile int counter;
static volatile u32 flags;

int main(void)
{
	for (int i = 0; i < 1000; i++)
		__sync_fetch_and_add(&counter, i);
	put_kv("counter", counter);
	int old = __sync_val_compare_and_swap(&counter, 499500, 7);
	put_kv("cas_old", old);
	put_kv("cas_new", counter);
	put_kv("cas_fail", __sync_bool_compare_and_swap(&counter, 8, 9));
	for (int b = 0; b < 32; b += 3)
		__sync_fetch_and_or(&flags, 1u << b);
	__sync_fetch_and_and(&flags, 0x0ff0ff0fu);
	put_str("flags=");
	put_hex(flags);
	put_str("\n");
	put_kv("xchg", __sync_lock_test_and_set(&counter, 42));
	__sync_synchronize();
	put_kv("final", counter);
	return 0;
}
