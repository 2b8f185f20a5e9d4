/* NIC 0's receive ring and the loop that cleans it, shared by the NET_RX
   bottom half (nic.c, net_rx_action) and the NAPI poll (napi.c,
   nic_napi_poll): the same driver work, whichever of the two the machine
   runs. Static functions, so each caller gets them inlined as nic.c always
   had them (its code and addresses do not change). */
#ifndef NIC_RX_H
#define NIC_RX_H

#include "kernel.h"

struct ring {
	volatile struct desc *desc;
	struct skb **skb; /* the skb whose buffer each descriptor holds */
	u32 mask;         /* length - 1 */
	u32 next;         /* RX: next to examine; TX: next to clean (free-running) */
	u32 tail;         /* TX: next to fill (free-running) */
};
extern struct ring rx;

static void arm(volatile struct desc *d, struct skb *skb)
{
	d->addr = (u32)skb->data;
	d->status = 0;
}

/* The RDT register of the ring ring_clean's `nic` names: that NIC's (nics.c's
   RSS build numbers rings, each with its queue's RDT). */
#ifndef RING_RDT
#define RING_RDT(nic) (NIC_BASE(nic) + NIC_RDT)
#endif
/* Where ring_clean hands a received skb: IP (nics.c's RSS build: RPS first). */
#ifndef RING_RX
#define RING_RX(skb) ip_rcv(skb)
#endif

static int ring_pending(const struct ring *r) { return r->desc[r->next].status & DESC_DD; }
#define rx_pending() ring_pending(&rx)

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

/* e1000_clean_rx_irq: takes up to `*budget` frames off the ring, each
   handed to IP with a fresh skb on its descriptor (or lost, its skb
   re-armed, when none is free), and gives the descriptors back with one
   RDT write. Returns the frames taken. The budget is read through a
   pointer at each frame, as net_rx_action always read kconfig.budget, so
   its code stays what it was. */
static u32 ring_clean(struct ring *r, u32 nic, const u32 *budget)
{
	u32 done = 0;
	struct netdev *dev = &netdevs[NIC_RX];
	dev->quota = dev->weight; /* the NAPI poll's quota */
	while (done < *budget && ring_pending(r)) {
		volatile struct desc *d = &r->desc[r->next];
		struct skb *skb = r->skb[r->next];
		struct skb *fresh = skb_alloc();
		skb->len = d->len;
		skb->tag = d->tag;
		if (fresh) {
			eth_type_trans(skb, dev);
			r->skb[r->next] = fresh;
			arm(d, fresh);
			RING_RX(skb);
		} else {
			/* No buffer to re-arm with: keep this one, lose the frame. */
			ksvc(KSVC_DROPPED, skb->tag);
			arm(d, skb);
		}
		r->next = (r->next + 1) & r->mask;
		done++;
	}
	dev->quota -= done;
	if (done)
		reg_write(RING_RDT(nic), (r->next - 1) & r->mask);
	return done;
}

static u32 rx_clean(const u32 *budget) { return ring_clean(&rx, NIC_RX, budget); }

#endif
