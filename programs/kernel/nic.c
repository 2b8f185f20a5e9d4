/* The NIC driver, shaped like e1000 under NAPI in Linux 2.6: the ISR acks
   and masks receive interrupts and raises NET_RX; the bottom half pulls up
   to `budget` frames from the RX ring, re-arms each descriptor with a
   fresh skb, gives the descriptors back with one RDT write, and unmasks
   when the ring is drained. NIC 1 transmits the NAT's frames; its
   TX-done interrupt frees them.

   Ring ownership: the NIC owns [RDH, RDT). Software's next descriptor to
   examine is rx.next; it keeps RDT one short of it, so the NIC never owns
   the whole ring and RDH == RDT always means "none". */
#include "kernel.h"
#include "nic_rx.h"

static struct desc rx_desc[RX_RING_MAX] __attribute__((aligned(64)));
static struct desc tx_desc[TX_RING_MAX] __attribute__((aligned(64)));
static struct skb *rx_skb[RX_RING_MAX], *tx_skb[TX_RING_MAX];
struct ring rx = {rx_desc, rx_skb, 0, 0, 0};
static struct ring tx = {tx_desc, tx_skb, 0, 0, 0};

void nic_init(void)
{
	rx.mask = kconfig.rx_ring - 1;
	rx.next = 0;
	for (u32 i = 0; i <= rx.mask; i++) {
		rx.skb[i] = skb_alloc();
		arm(&rx.desc[i], rx.skb[i]);
	}
	nic_write(NIC_RX, NIC_RDBA, (u32)rx.desc);
	nic_write(NIC_RX, NIC_RDLEN, kconfig.rx_ring);
	nic_write(NIC_RX, NIC_RDT, rx.mask);
	nic_write(NIC_RX, NIC_IMS, ICR_RX);
	if (!kconfig.forward)
		return;
	tx.mask = kconfig.tx_ring - 1;
	tx.next = tx.tail = 0;
	nic_write(NIC_FWD, NIC_TDBA, (u32)tx.desc);
	nic_write(NIC_FWD, NIC_TDLEN, kconfig.tx_ring);
	nic_write(NIC_FWD, NIC_TDT, 0);
	nic_write(NIC_FWD, NIC_IMS, ICR_TXDW);
}

void drop(struct skb *skb)
{
	ksvc(KSVC_DROPPED, skb->tag);
	skb_free(skb);
}

/* Frees the skbs of sent frames (only nic_isr(1) cleans: one consumer). */
static void tx_clean(void)
{
	while (tx.next != tx.tail) {
		u32 i = tx.next & tx.mask;
		if (!(tx.desc[i].status & DESC_DD))
			break;
		skb_free(tx.skb[i]);
		tx.next++;
	}
}

/* Hardware thread `cpu`'s timer tick: 2.6's do_timer advances jiffies on
   one CPU only, and every CPU accounts the tick (update_process_times);
   here the tick counts per thread stand for that accounting. The *-sched
   ELFs add scheduler_tick; the timer softirq is not modelled. */
volatile u32 ticks[TICK_THREADS];

static void timer_tick(u32 cpu)
{
	if (cpu == 0)
		jiffies++;
	if (cpu < TICK_THREADS)
		ticks[cpu]++;
	SCHED(scheduler_tick(cpu));
}

void nic_isr(u32 irq)
{
	if (irq >= TICK_IRQ) {
		timer_tick(irq - TICK_IRQ);
		return;
	}
	u32 icr = nic_read(irq, NIC_ICR);
	if (irq == NIC_RX && (icr & ICR_RX)) {
		nic_write(NIC_RX, NIC_IMC, ICR_RX);
		ksvc(KSVC_SOFTIRQ_RAISE, SOFTIRQ_NET_RX);
	}
	if (irq == NIC_FWD && (icr & ICR_TXDW))
		tx_clean();
	ksvc(KSVC_EOI, irq);
}

/* Queues a frame on NIC 1; -1 if the ring is full (the caller drops).
   First what 2.6's dev_queue_xmit does to the device: read its qdisc,
   take and release the queue and transmit locks (uncontended: only the
   bottom half transmits), call hard_start_xmit. */
int nic_xmit(struct skb *skb)
{
	struct netdev *dev = &netdevs[NIC_FWD];
	TOUCH(dev->qdisc);
	dev->queue_lock = 1;
	dev->queue_lock = 0;
	dev->xmit_lock = 1;
	TOUCH(dev->hard_start_xmit);
	dev->xmit_lock = 0;
	if (tx.tail - tx.next >= tx.mask)
		return -1;
	u32 i = tx.tail & tx.mask;
	volatile struct desc *d = &tx.desc[i];
	tx.skb[i] = skb;
	d->addr = (u32)skb->data;
	d->tag = skb->tag;
	d->len = (u16)skb->len;
	d->status = 0;
	__sync_synchronize();
	tx.tail++;
	nic_write(NIC_FWD, NIC_TDT, tx.tail & tx.mask);
	return 0;
}

void net_rx_action(void)
{
	u32 done = rx_clean(&kconfig.budget);
	if (done == kconfig.budget) {
		ksvc(KSVC_SOFTIRQ_RAISE, SOFTIRQ_NET_RX);
		return;
	}
	nic_write(NIC_RX, NIC_IMS, ICR_RX);
	/* A frame that landed between the last check and the unmask raised
	   no interrupt: poll again for it (as napi_complete's recheck). */
	if (rx_pending()) {
		nic_write(NIC_RX, NIC_IMC, ICR_RX);
		ksvc(KSVC_SOFTIRQ_RAISE, SOFTIRQ_NET_RX);
	}
}
