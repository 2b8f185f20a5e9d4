/* Strided loads for `make validate`: the L1D model against an independent
   LRU reference (python/irqsim/validate.py). Each phase first streams a
   64 KiB buffer through the data cache (so no line of `data` survives in
   an LRU cache of up to 64 KiB), then loads `data[0], data[stride], ...`
   below `footprint`, `passes` times (with `hot`, `data[0]` before each of
   them: a line that LRU keeps and FIFO would not), and prints the L1D misses and
   accesses the phase's loop made. The loop touches nothing but `data`
   (its counters stay in registers; the device registers are uncached). */
#include "../rt/rt.h"

#define KIB 1024u

static volatile u8 data[256 * KIB] __attribute__((aligned(4096)));
static volatile u32 flush_buf[16 * KIB] __attribute__((aligned(4096)));

/* stride, footprint (bytes), passes, hot: the table validate.py mirrors. */
static const u32 phases[][4] = {
	{4, 2 * KIB, 3, 0},     {32, 4 * KIB, 3, 0},   {32, 6 * KIB, 3, 0},    {64, 8 * KIB, 3, 0},
	{64, 16 * KIB, 2, 0},   {128, 12 * KIB, 3, 0}, {2048, 16 * KIB, 4, 0}, {4096, 20 * KIB, 4, 0},
	{4160, 64 * KIB, 2, 0}, {96, 7 * KIB, 5, 0},   {8, 5 * KIB, 2, 0},     {1024, 256 * KIB, 2, 0},
	{64, 8 * KIB, 2, 1},    {4096, 20 * KIB, 3, 1}, {1024, 12 * KIB, 3, 1},
};

static u32 l1d(u32 reg) { return MMIO(CACHE_L1D + reg); }

static void flush(void)
{
	for (u32 i = 0; i < 16 * KIB; i++)
		(void)flush_buf[i];
}

int main(void)
{
	put_kv("data", (int)(u32)data);
	for (u32 k = 0; k < sizeof phases / sizeof phases[0]; k++) {
		u32 stride = phases[k][0], footprint = phases[k][1], passes = phases[k][2], hot = phases[k][3];
		flush();
		u32 m0 = l1d(PIN_MISSES), a0 = l1d(PIN_ACCESSES);
		for (u32 p = 0; p < passes; p++)
			for (u32 i = 0; i < footprint; i += stride) {
				if (hot)
					(void)data[0];
				(void)data[i];
			}
		u32 m1 = l1d(PIN_MISSES), a1 = l1d(PIN_ACCESSES);
		put_kv("misses", (int)(m1 - m0));
		put_kv("accesses", (int)(a1 - a0));
	}
	return 0;
}
