/* Every hardware thread of every core runs main(): each adds 1 to a shared
   counter 5,000 times with ll/sc (gcc's __sync builtins), then thread 0 of
   core 0 waits for the others and prints the total. Run with e.g.
   `--set core.cores=2 --set core.threads=2`: the total is exact only if
   ll/sc is atomic across threads and cores. */
#include "../rt/rt.h"

#define REG_TOPOLOGY 0x10
#define ADDS 5000

static volatile int counter, finished;

int main(void)
{
	u32 topo = MMIO(REG_TOPOLOGY);
	int threads = (int)((topo >> 8) * (topo & 0xff));
	for (int i = 0; i < ADDS; i++)
		__sync_fetch_and_add(&counter, 1);
	__sync_fetch_and_add(&finished, 1);
	if (MMIO(REG_THREAD_ID) != 0)
		return 0;
	while (finished < threads)
		;
	put_kv("threads", threads);
	put_kv("counter", counter);
	return counter == threads * ADDS ? 0 : 1;
}
