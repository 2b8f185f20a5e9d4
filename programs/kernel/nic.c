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

struct ring {
	volatile struct desc *desc;
	struct skb **skb; /* the skb whose buffer each descriptor holds */
	u32 mask;         /* length - 1 */
	u32 next;         /* RX: next to examine; TX: next to clean (free-running) */
	u32 tail;         /* TX: next to fill (free-running) */
};

static struct desc rx_desc[RX_RING_MAX] __attribute__((aligned(64)));
static struct desc tx_desc[TX_RING_MAX] __attribute__((aligned(64)));
static struct skb *rx_skb[RX_RING_MAX], *tx_skb[TX_RING_MAX];
static struct ring rx = {rx_desc, rx_skb, 0, 0, 0};
static struct ring tx = {tx_desc, tx_skb, 0, 0, 0};

static void arm(volatile struct desc *d, struct skb *skb)
{
	d->addr = (u32)skb->data;
	d->status = 0;
}

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

static int rx_pending(void) { return rx.desc[rx.next].status & DESC_DD; }

/* eth_type_trans and netif_receive_skb's marks on a received frame. */
static void eth_type_trans(struct skb *skb, struct netdev *dev)
{
	u8 *eth = skb->data;
	skb->dev = skb->input_dev = dev;
	skb->mac = eth;
	u32 dst_hi = (u32)eth[0] << 24 | (u32)eth[1] << 16 | (u32)eth[2] << 8 | eth[3];
	u16 dst_lo = (u16)(eth[4] << 8 | eth[5]);
	/* PACKET_BROADCAST, PACKET_HOST or PACKET_OTHERHOST (not acted on here) */
	skb->pkt_type = (eth[0] & 1) ? 1 : (dst_hi == dev->dev_addr_hi && dst_lo == dev->dev_addr_lo) ? 0 : 3;
	skb->protocol = (u16)(eth[12] << 8 | eth[13]);
	dev->last_rx = jiffies;
}

void net_rx_action(void)
{
	u32 done = 0;
	struct netdev *dev = &netdevs[NIC_RX];
	dev->quota = dev->weight; /* the NAPI poll's quota */
	while (done < kconfig.budget && rx_pending()) {
		volatile struct desc *d = &rx.desc[rx.next];
		struct skb *skb = rx.skb[rx.next];
		struct skb *fresh = skb_alloc();
		skb->len = d->len;
		skb->tag = d->tag;
		if (fresh) {
			eth_type_trans(skb, dev);
			rx.skb[rx.next] = fresh;
			arm(d, fresh);
			ip_rcv(skb);
		} else {
			/* No buffer to re-arm with: keep this one, lose the frame. */
			ksvc(KSVC_DROPPED, skb->tag);
			arm(d, skb);
		}
		rx.next = (rx.next + 1) & rx.mask;
		done++;
	}
	dev->quota -= done;
	if (done)
		nic_write(NIC_RX, NIC_RDT, (rx.next - 1) & rx.mask);
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
