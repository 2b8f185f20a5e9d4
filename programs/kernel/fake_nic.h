/* The test build's fake machine (fake_nic.c). */
#ifndef FAKE_NIC_H
#define FAKE_NIC_H

#include "kernel.h"

struct fake_nic {
	u32 icr, ims, rdlen, rdh, rdt, tdlen, tdh, tdt, missed;
	struct desc *rdba, *tdba;
};

/* Instructions and misses of the calling hardware thread (the measuring
   build, run by `irqsim exec` only: the counters are its registers). */
struct meter {
	u32 instructions, cycles, l1i, l1d, l2;
};
#ifdef MEASURE
static inline void meter_read(struct meter *m)
{
	m->instructions = MMIO(REG_INSTRET);
	m->cycles = MMIO(REG_CYCLE_LO);
	m->l1i = MMIO(CACHE_L1I + PIN_MISSES);
	m->l1d = MMIO(CACHE_L1D + PIN_MISSES);
	m->l2 = MMIO(CACHE_L2 + PIN_MISSES);
}
#endif

struct fake {
	struct fake_nic nic[2];
	u32 softirq_pending, wakes, delivered, dropped, eoi, sent;
	u32 last_delivered, last_dropped;
	struct meter cost; /* MEASURE: the device's own share */
	u32 accesses;      /* MEASURE: register accesses */
#ifndef MEASURE /* (kernel/measure-* keep the layout they were measured with) */
	u32 rt_overflow;   /* RT_OVERFLOW: frames the route cache had no entry for */
#endif
};
extern struct fake fake;
extern u32 fake_irq_depth;

void fake_reset(void);
/* The NIC receives a frame: DMA into the next owned descriptor; 0 if the
   NIC owned none (counted in RX_MISSED). */
int fake_receive(const u8 *frame, u32 len, u32 tag);
/* NIC 1 sends its next queued frame into out; returns its tag (tests use
   tags from 1), 0 if none was queued. */
u32 fake_transmit(u8 *out, u32 *len);
/* The NIC's DMA: a plain copy, except in the measuring build (measure.c),
   where another core does it, so the copy invalidates the kernel core's
   cached lines instead of filling its cache as a CPU copy would. */
void dma_copy(u8 *to, const u8 *from, u32 n);
/* Whether NIC k's interrupt line is asserted (a cause pending and enabled). */
int fake_irq(u32 k);

#endif
