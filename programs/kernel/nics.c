/* Other NICs ([[nics.others]]) for the Linux-shaped kernel: kernel/host-nics.elf
   (programs/build.sh) is the host kernel with this file. NIC k >= 1 has a
   receive ring of its own (OTHER_RING descriptors, skbs from the same
   slab) and interrupts through nic_other_isr(k); its frames enter IP as NIC
   0's do (e1000_clean_rx_irq: nic_rx.h's ring_clean) and reach the same
   sockets. The socket queues, the route cache and conntrack have one
   producer (socket.c), so every NIC's receive work, NIC 0's too, runs
   under one spinlock with this CPU's interrupts masked: two CPUs' bottom
   halves or polls take turns, where Linux 2.6 would contend on each
   socket's lock instead.

   The build renames init.c's kernel_init and nic.c's net_rx_action
   (-Dkernel_init=kernel_init_nic0, -Dnet_rx_action=net_rx_action_nic0) and
   this file wraps them; napi.c is not linked: the top half and poll here
   serve NIC 0 as instance 0 (the kernel has one receive queue) and NIC k
   as instance k, and nic_napi_instances says how many. */
#include "kernel.h"
/* NICs 8 and up sit past the receive queues' blocks (code/ports.rs); before
   nic_rx.h, whose ring_clean writes RDT. */
#undef NIC_BASE
#define NIC_BASE(k) (0xBF010000u + ((u32)(k) < 8 ? 0 : 0x2000u) + (u32)(k) * 0x100u)
#include "nic_rx.h"

#undef kernel_init
#undef net_rx_action

#define OTHERS 32     /* [[nics.others]] at most */
#define OTHER_RING 16 /* descriptors each: 32 NICs' rings and NIC 0's fit the slab */

void kernel_init_nic0(void);
void net_rx_action_nic0(void);

static struct desc other_desc[OTHERS][OTHER_RING] __attribute__((aligned(64)));
static struct skb *other_skb[OTHERS][OTHER_RING];
static struct ring others[OTHERS];
static u32 nothers;
/* NIC k's interrupt ran and its bottom half has not taken it yet. */
static volatile u32 marked[OTHERS];
static volatile u32 rx_lock;

const u32 nic_napi_instances = 1 + OTHERS;

static void rx_lock_take(void)
{
	ksvc(KSVC_IRQ_SAVE, 0);
	while (__sync_lock_test_and_set(&rx_lock, 1))
		while (rx_lock)
			;
}

static void rx_lock_give(void)
{
	__sync_lock_release(&rx_lock);
	ksvc(KSVC_IRQ_RESTORE, 0);
}

/* The boot of NIC 0's kernel, then each other NIC's ring (the machine
   says how many NICs it has); a slab too small for them stops the machine
   at `break 8`. */
void kernel_init(void)
{
	kernel_init_nic0();
	nothers = reg_read(KSVC_BASE + KSVC_NICS) - 1;
	for (u32 k = 0; k < nothers; k++) {
		struct ring *r = &others[k];
		r->desc = other_desc[k];
		r->skb = other_skb[k];
		r->mask = OTHER_RING - 1;
		for (u32 i = 0; i < OTHER_RING; i++) {
			r->skb[i] = skb_alloc();
			if (!r->skb[i])
				__asm__ volatile("break 0, 8");
			arm(&r->desc[i], r->skb[i]);
		}
		nic_write(k + 1, NIC_RDBA, (u32)r->desc);
		nic_write(k + 1, NIC_RDLEN, OTHER_RING);
		nic_write(k + 1, NIC_RDT, r->mask);
		nic_write(k + 1, NIC_IMS, ICR_RX);
	}
}

/* NIC k's interrupt: with a receive cause it masks it, marks the NIC for
   NET_RX and raises it on this CPU (netif_rx_schedule). */
void nic_other_isr(u32 nic)
{
	if (nic_read(nic, NIC_ICR) & ICR_RX) {
		nic_write(nic, NIC_IMC, ICR_RX);
		marked[nic - 1] = 1;
		ksvc(KSVC_SOFTIRQ_RAISE, SOFTIRQ_NET_RX);
	}
	ksvc(KSVC_EOI, nic);
}

/* NET_RX: NIC 0's work as nic.c does it, then each marked NIC's ring up
   to the budget (a NIC that used it stays marked and NET_RX is raised
   again), its cause enabled once its ring is drained. */
void net_rx_action(void)
{
	rx_lock_take();
	net_rx_action_nic0();
	for (u32 k = 0; k < nothers; k++) {
		if (!__sync_bool_compare_and_swap(&marked[k], 1, 0))
			continue;
		if (ring_clean(&others[k], k + 1, &kconfig.budget) == kconfig.budget) {
			marked[k] = 1;
			ksvc(KSVC_SOFTIRQ_RAISE, SOFTIRQ_NET_RX);
			continue;
		}
		nic_write(k + 1, NIC_IMS, ICR_RX);
	}
	rx_lock_give();
}

/* NAPI (napi.c's contract): instance q is NIC q's ring. The top half
   reads its NIC's cause, masks it and asks for a poll; the poll takes at
   most `budget` frames under the lock and, below it, completes and enables
   the cause if napi_complete_done answers 1. */
void nic_napi_isr(u32 queue)
{
	if (!(nic_read(queue, NIC_ICR) & ICR_RX))
		return;
	nic_write(queue, NIC_IMC, ICR_RX);
	ksvc(KSVC_NAPI_SCHEDULE, queue);
}

u32 nic_napi_poll(u32 queue, u32 budget)
{
	rx_lock_take();
	u32 done = queue ? ring_clean(&others[queue - 1], queue, &budget) : rx_clean(&budget);
	rx_lock_give();
	if (done < budget) {
		ksvc(KSVC_NAPI_COMPLETE, done);
		if (reg_read(KSVC_BASE + KSVC_NAPI_COMPLETE))
			nic_write(queue, NIC_IMS, ICR_RX);
	}
	return done;
}
