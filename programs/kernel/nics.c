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
   as instance k, and nic_napi_instances says how many.

   Built with -DNICS_RSS it is kernel/host-nics-rss.elf: each other NIC may
   have several receive queues (its own RSS, `nics.others[i].queues`). The
   rings are numbered as the machine numbers their NAPI instances: NIC 0's
   one, then each other NIC's queues in turn; queue i of NIC k has its
   registers in its block (0x5000 + (k - 1) * 0x400 + i * 0x40 past the
   NICs' base, code/ports.rs) and cause bit 15 + i (bit 0 for queue 0), and
   `nic_other_queues` tells the machine it serves them. Off the NAPI path
   a NIC's bottom half serves its queue 0 (the machine gives several
   queues NAPI only). With RPS (`rss.rps_cpus`) every ring's poll asks the
   machine for each frame's CPU (get_rps_cpu, the frame's own NIC's flow)
   and queues it to that CPU's backlog, NAPI instance nrings + cpu, whose
   poll (process_backlog) hands it to IP, under the one receive lock as
   every NIC's receive work. */
#include "kernel.h"
/* NICs 8 and up sit past the receive queues' blocks (code/ports.rs); before
   nic_rx.h, whose ring_clean writes RDT. */
#undef NIC_BASE
#define NIC_BASE(k) (0xBF010000u + ((u32)(k) < 8 ? 0 : 0x2000u) + (u32)(k) * 0x100u)
#ifdef NICS_RSS
#define QUEUES_MAX 16 /* a NIC's receive queues at most (code/ports.rs MAX_QUEUES) */
#define NIC_QUEUES 0x34 /* R: the NIC's receive queues */
/* Ring q >= 1 is queue qidx[q] of NIC qnic[q]; its block's registers. */
#define RXQ_REG(k, i, off) (0xBF015000u + ((u32)(k) - 1) * 0x400u + (u32)(i) * 0x40u + (off))
#define Q_RDBA 0x00
#define Q_RDLEN 0x08
#define Q_RDT 0x18
static u8 qnic[33], qidx[33];
/* ring_clean's `nic` is a ring's number: ring 0 is NIC 0's. */
#define RING_RDT(q) ((q) ? RXQ_REG(qnic[q], qidx[q], Q_RDT) : NIC_BASE(0) + NIC_RDT)
static void rps_rcv(struct skb *skb);
#define RING_RX(skb) rps_rcv(skb)
#endif
#include "nic_rx.h"

#undef kernel_init
#undef net_rx_action

#define OTHERS 32     /* [[nics.others]] at most */
#define OTHER_RING 16 /* descriptors each: 32 NICs' rings and NIC 0's fit the slab */

void kernel_init_nic0(void);
void net_rx_action_nic0(void);

/* The other NICs' rings: one each, or with NICS_RSS one per queue (32 in
   all), ring q - 1 for ring number q. */
static struct desc other_desc[OTHERS][OTHER_RING] __attribute__((aligned(64)));
static struct skb *other_skb[OTHERS][OTHER_RING];
static struct ring others[OTHERS];
static u32 nothers;
#ifdef NICS_RSS
const u32 nic_other_queues = QUEUES_MAX;
static u32 nq[1 + OTHERS], first[1 + OTHERS]; /* each NIC's queues, its first ring */
static u32 nrings = 1;                        /* rings over all NICs */
#define FIRST(k) first[k]
#define CAUSE(q) (qidx[q] ? 1u << (15 + qidx[q]) : ICR_RX)
#define KSVC_RPS_CPU 0x24  /* W tag: get_rps_cpu; R: its CPU (NO_CPU: RPS is off) */
#define KSVC_RPS_CPUS 0x28 /* R: the CPUs RPS steers to (0: off) */
#define NO_CPU 0xFFFFFFFFu
#define MAXCPU 64  /* cpu.threads at most */
#define BACKLOG 16 /* skbs each CPU's backlog holds */
const u32 nic_napi_instances = 1 + OTHERS + MAXCPU;
#else
const u32 nic_napi_instances = 1 + OTHERS;
#define FIRST(k) (k)
#endif
/* The first NIC's receive rings and the RPS backlogs this driver serves:
   the machine refuses rss.queues and rss.rps_cpus beyond them at load
   (nic_napi_instances counts every NIC's instances together). */
const u32 nic_first_queues = 1;
#ifdef NICS_RSS
const u32 nic_rps_backlogs = MAXCPU;
#else
const u32 nic_rps_backlogs = 0;
#endif
/* NIC k's interrupt ran and its bottom half has not taken it yet. */
static volatile u32 marked[OTHERS];
static volatile u32 rx_lock;

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
static void ring_init(u32 k)
{
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
}

#ifdef NICS_RSS
/* RPS: each CPU's backlog (softnet_data's input_pkt_queue), filled by the
   rings' polls and emptied by that CPU's backlog poll (enqueue_to_backlog,
   process_backlog); its lock is held while the backlog is scheduled or
   completed, so no frame slips between. */
static u32 rps;
static struct skb *backlog[MAXCPU][BACKLOG];
static u32 bl_head[MAXCPU], bl_count[MAXCPU];
static volatile u32 bl_lock[MAXCPU];

static void bl_take(u32 cpu)
{
	ksvc(KSVC_IRQ_SAVE, 0);
	while (__sync_lock_test_and_set(&bl_lock[cpu], 1))
		while (bl_lock[cpu])
			;
}

static void bl_give(u32 cpu)
{
	__sync_lock_release(&bl_lock[cpu]);
	ksvc(KSVC_IRQ_RESTORE, 0);
}

/* ring_clean's hand-off (under the receive lock): to IP, or with RPS to
   the backlog of the frame's CPU (dropped when it is full). */
static void rps_rcv(struct skb *skb)
{
	if (!rps) {
		ip_rcv(skb);
		return;
	}
	ksvc(KSVC_RPS_CPU, skb->tag);
	u32 cpu = reg_read(KSVC_BASE + KSVC_RPS_CPU), queued = 0;
	bl_take(cpu);
	if (bl_count[cpu] < BACKLOG) {
		backlog[cpu][(bl_head[cpu] + bl_count[cpu]++) % BACKLOG] = skb;
		ksvc(KSVC_NAPI_SCHEDULE, nrings + cpu);
		queued = 1;
	}
	bl_give(cpu);
	if (!queued) {
		ksvc(KSVC_DROPPED, skb->tag);
		skb_free(skb);
	}
}

/* The backlog poll of `cpu`: IP's part of at most `budget` frames, each
   under the receive lock; emptied, it completes under the backlog's lock. */
static u32 process_backlog(u32 cpu, u32 budget)
{
	u32 work = 0;
	for (;;) {
		bl_take(cpu);
		if (work == budget)
			break;
		if (!bl_count[cpu]) {
			ksvc(KSVC_NAPI_COMPLETE, work);
			(void)reg_read(KSVC_BASE + KSVC_NAPI_COMPLETE);
			break;
		}
		struct skb *skb = backlog[cpu][bl_head[cpu]];
		bl_head[cpu] = (bl_head[cpu] + 1) % BACKLOG;
		bl_count[cpu]--;
		bl_give(cpu);
		rx_lock_take();
		ip_rcv(skb);
		rx_lock_give();
		work++;
	}
	bl_give(cpu);
	return work;
}
#endif

void kernel_init(void)
{
	kernel_init_nic0();
	nothers = reg_read(KSVC_BASE + KSVC_NICS) - 1;
#ifdef NICS_RSS
	rps = reg_read(KSVC_BASE + KSVC_RPS_CPUS);
	/* More rings than the arrays hold stop the machine at `break 9`. */
	for (u32 k = 1; k <= nothers; k++) {
		u32 mine = 0;
		nq[k] = nic_read(k, NIC_QUEUES);
		first[k] = nrings;
		for (u32 i = 0; i < nq[k]; i++, nrings++) {
			if (nrings > OTHERS)
				__asm__ volatile("break 0, 9");
			qnic[nrings] = (u8)k, qidx[nrings] = (u8)i;
			ring_init(nrings - 1);
			reg_write(RXQ_REG(k, i, Q_RDBA), (u32)others[nrings - 1].desc);
			reg_write(RXQ_REG(k, i, Q_RDLEN), OTHER_RING);
			reg_write(RXQ_REG(k, i, Q_RDT), OTHER_RING - 1);
			mine |= CAUSE(nrings);
		}
		nic_write(k, NIC_IMS, mine);
	}
#else
	for (u32 k = 0; k < nothers; k++) {
		ring_init(k);
		struct ring *r = &others[k];
		nic_write(k + 1, NIC_RDBA, (u32)r->desc);
		nic_write(k + 1, NIC_RDLEN, OTHER_RING);
		nic_write(k + 1, NIC_RDT, r->mask);
		nic_write(k + 1, NIC_IMS, ICR_RX);
	}
#endif
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
		if (ring_clean(&others[FIRST(k + 1) - 1], FIRST(k + 1), &kconfig.budget) == kconfig.budget) {
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
#ifdef NICS_RSS
/* With several queues, each queue's vector clears its own cause (MSI-X
   auto-clear); a NIC's one vector reads ICR, as e1000's does. */
#define NIC_OF(q) ((q) ? qnic[q] : 0)
#define ONE_VECTOR(q) (!(q) || nq[qnic[q]] == 1)
#else
#define NIC_OF(q) (q)
#define ONE_VECTOR(q) 1
#define CAUSE(q) ICR_RX
#endif

void nic_napi_isr(u32 queue)
{
	if (ONE_VECTOR(queue) && !(nic_read(NIC_OF(queue), NIC_ICR) & ICR_RX))
		return;
	nic_write(NIC_OF(queue), NIC_IMC, CAUSE(queue));
	ksvc(KSVC_NAPI_SCHEDULE, queue);
}

u32 nic_napi_poll(u32 queue, u32 budget)
{
#ifdef NICS_RSS
	if (queue >= nrings)
		return process_backlog(queue - nrings, budget);
#endif
	rx_lock_take();
	u32 done = queue ? ring_clean(&others[queue - 1], queue, &budget) : rx_clean(&budget);
	rx_lock_give();
	if (done < budget) {
		ksvc(KSVC_NAPI_COMPLETE, done);
		if (reg_read(KSVC_BASE + KSVC_NAPI_COMPLETE))
			nic_write(NIC_OF(queue), NIC_IMS, CAUSE(queue));
	}
	return done;
}
