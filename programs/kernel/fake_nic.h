/* The test build's fake machine (fake_nic.c). */
#ifndef FAKE_NIC_H
#define FAKE_NIC_H

#include "kernel.h"

struct fake_nic {
	u32 icr, ims, rdlen, rdh, rdt, tdlen, tdh, tdt, missed;
	struct desc *rdba, *tdba;
};

struct fake {
	struct fake_nic nic[2];
	u32 softirq_pending, wakes, delivered, dropped, eoi, sent;
	u32 last_delivered, last_dropped;
};
extern struct fake fake;

void fake_reset(void);
/* The NIC receives a frame: DMA into the next owned descriptor; 0 if the
   NIC owned none (counted in RX_MISSED). */
int fake_receive(const u8 *frame, u32 len, u32 tag);
/* NIC 1 sends its next queued frame into out; returns its tag (tests use
   tags from 1), 0 if none was queued. */
u32 fake_transmit(u8 *out, u32 *len);
/* Whether NIC k's interrupt line is asserted (a cause pending and enabled). */
int fake_irq(u32 k);

#endif
