/* The test build's machine (-DFAKE_NIC): two NICs and the kernel services
   in ordinary memory, behaving as the contract says (docs/models/
   smt-hot-thread.md), so the kernel's sources run unchanged under
   qemu-mips and `irqsim exec` with a driver (test.c) in place of the
   machine's scheduler. */
#include "fake_nic.h"

struct fake fake;
#ifndef SKB_POOL
u32 fake_cpu;
u32 fake_irq_depth; /* local_irq_save sections open (the slab's) */
#endif

static struct fake_nic *nic_of(u32 addr) { return &fake.nic[(addr - NIC_BASE(0)) >> 8]; }

static void bad_register(u32 addr)
{
	put_str("fake_nic: bad register ");
	put_hex(addr);
	put_str("\n");
	sys_exit(71);
}

static u32 device_read(u32 addr)
{
	if (addr >= NIC_BASE(0) && addr < NIC_BASE(2)) {
		struct fake_nic *n = nic_of(addr);
		switch (addr & 0xff) {
		case NIC_ICR: {
			u32 v = n->icr;
			n->icr = 0;
			return v;
		}
		case NIC_IMS: return n->ims;
		case NIC_RDH: return n->rdh;
		case NIC_RDT: return n->rdt;
		case NIC_TDH: return n->tdh;
		case NIC_TDT: return n->tdt;
		case NIC_RX_MISSED: return n->missed;
		}
	}
	bad_register(addr);
	return 0;
}

static void device_write(u32 addr, u32 v)
{
	if (addr >= NIC_BASE(0) && addr < NIC_BASE(2)) {
		struct fake_nic *n = nic_of(addr);
		switch (addr & 0xff) {
		case NIC_IMS: n->ims |= v; return;
		case NIC_IMC: n->ims &= ~v; return;
		case NIC_RDBA: n->rdba = (struct desc *)v; return;
		case NIC_RDLEN: n->rdlen = v; return;
		case NIC_RDT: n->rdt = v; return;
		case NIC_TDBA: n->tdba = (struct desc *)v; return;
		case NIC_TDLEN: n->tdlen = v; return;
		case NIC_TDT: n->tdt = v; return;
		}
	}
	switch (addr) {
	case KSVC_BASE + KSVC_SOFTIRQ_RAISE: fake.softirq_pending = 1; return;
	case KSVC_BASE + KSVC_WAKE: fake.wakes++; return;
	case KSVC_BASE + KSVC_DELIVERED: fake.delivered++; fake.last_delivered = v; return;
	case KSVC_BASE + KSVC_DROPPED: fake.dropped++; fake.last_dropped = v; return;
	case KSVC_BASE + KSVC_EOI: fake.eoi++; return;
#ifndef MEASURE
	case KSVC_BASE + KSVC_RT_OVERFLOW: fake.rt_overflow++; return;
#endif
#ifndef SKB_POOL
	case KSVC_BASE + KSVC_IRQ_SAVE: fake_irq_depth++; return;
	case KSVC_BASE + KSVC_IRQ_RESTORE: fake_irq_depth--; return;
#endif
	}
	bad_register(addr);
}

#ifndef MEASURE
void dma_copy(u8 *to, const u8 *from, u32 n) { memcpy(to, from, n); }
#endif

#ifdef MEASURE
/* The measuring build charges the fake device's own work to fake.cost, so
   an activity's counts are its own (machine registers cost one access). */
static void meter_add(struct meter *m, const struct meter *a, const struct meter *b)
{
	m->instructions += b->instructions - a->instructions;
	m->cycles += b->cycles - a->cycles;
	m->l1i += b->l1i - a->l1i;
	m->l1d += b->l1d - a->l1d;
	m->l2 += b->l2 - a->l2;
}

u32 fake_read(u32 addr)
{
	struct meter a, b;
	meter_read(&a);
	u32 v = device_read(addr);
	meter_read(&b);
	meter_add(&fake.cost, &a, &b);
	fake.accesses++;
	return v;
}

void fake_write(u32 addr, u32 v)
{
	struct meter a, b;
	meter_read(&a);
	device_write(addr, v);
	meter_read(&b);
	meter_add(&fake.cost, &a, &b);
	fake.accesses++;
}
#else
u32 fake_read(u32 addr) { return device_read(addr); }
void fake_write(u32 addr, u32 v) { device_write(addr, v); }
#endif

void fake_reset(void) { memset(&fake, 0, sizeof fake); }

int fake_receive(const u8 *frame, u32 len, u32 tag)
{
	struct fake_nic *n = &fake.nic[NIC_RX];
	if (n->rdh == n->rdt) {
		n->missed++;
		return 0;
	}
	struct desc *d = &n->rdba[n->rdh];
	dma_copy((u8 *)d->addr, frame, len);
	d->tag = tag;
	d->len = (u16)len;
	d->status = DESC_DD | DESC_EOP;
	n->rdh = (n->rdh + 1) & (n->rdlen - 1);
	n->icr |= ICR_RX;
	return 1;
}

u32 fake_transmit(u8 *out, u32 *len)
{
	struct fake_nic *n = &fake.nic[NIC_FWD];
	if (n->tdh == n->tdt)
		return 0;
	struct desc *d = &n->tdba[n->tdh];
	*len = d->len;
	dma_copy(out, (const u8 *)d->addr, d->len);
	d->status = DESC_DD;
	n->tdh = (n->tdh + 1) & (n->tdlen - 1);
	n->icr |= ICR_TXDW;
	fake.sent++;
	return d->tag;
}

int fake_irq(u32 k) { return (fake.nic[k].icr & fake.nic[k].ims) != 0; }
