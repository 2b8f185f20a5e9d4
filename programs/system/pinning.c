/* Cache pinning from code through irqsim's device registers (so it runs
   under `irqsim exec`, not qemu-mips). A 2 KiB table is read, a 64 KiB
   buffer is streamed through the data cache, and the table is read again:
   first unpinned, then with trace pinning on while the table is brought
   back into the cache, then after unlocking. Prints the L1D misses of each re-read; with
   `--set memory.model=caches` the pinned re-read misses nothing. */
#include "../rt/rt.h"

static volatile u32 table[512];
static volatile u32 stream[16384];

static u32 l1d(u32 reg) { return MMIO(CACHE_L1D + reg); }

static u32 read_table(void)
{
	u32 s = 0;
	for (int i = 0; i < 512; i++)
		s += table[i];
	return s;
}

static void flood(void)
{
	for (int i = 0; i < 16384; i += 8)
		stream[i]++;
}

static u32 reread_misses(void)
{
	u32 before = l1d(PIN_MISSES);
	read_table();
	return l1d(PIN_MISSES) - before;
}

int main(void)
{
	for (int i = 0; i < 512; i++)
		table[i] = i;
	u32 t0 = MMIO(REG_CYCLE_LO);
	read_table();
	flood();
	put_kv("unpinned_misses", (int)reread_misses());

	/* Trace pinning locks lines as they are allocated: flood first so the
	   table's lines are allocated again while the flag is on. */
	flood();
	MMIO(CACHE_L1D + PIN_TRACE) = 1;
	read_table();
	MMIO(CACHE_L1D + PIN_TRACE) = 0;
	flood();
	put_kv("pinned_misses", (int)reread_misses());

	MMIO(CACHE_L1D + PIN_UNLOCK) = 1;
	flood();
	put_kv("unlocked_misses", (int)reread_misses());
	put_kv("thread", (int)MMIO(REG_THREAD_ID));
	put_kv("cycles_advance", MMIO(REG_CYCLE_LO) > t0);
	return 0;
}
