/* The smallest receive path the machine can run as code (scenario key
   `code.program`): an e1000-style RX ring refilled from a buffer pool, an
   ISR that masks the NIC and raises NET_RX, a bottom half that checks each
   frame's IP header and queues it to the socket, and a recv() that copies
   the payload out. On the NAPI path (irq_path.kind = "napi") the same
   driver as NAPI's, for every receive queue the NIC has (RSS): a top half
   that asks for a poll and a poll with a budget, which hands each frame to
   another CPU's backlog when the kernel steers it there (RPS). The
   register map is the machine's (docs/models/cores.md, "Code on the
   machine"). Sizes are small on purpose: tests drive the pool, the ring
   and the socket queue to their limits. The send path (sys_send, at the
   end) puts the workload's sends on NIC 0's transmit ring.

   Built with -DRX_NICS it is rx_nics.elf, the same driver for every NIC
   the machine has (`[[nics.others]]`): NIC k >= 1 has one receive ring,
   its queue numbered after NIC 0's (nqueues + k - 1, as the machine
   numbers its NAPI instance), its ring registers the legacy ones at NIC
   k's base and an interrupt of its own: nic_other_isr(k) off the NAPI
   path, the same top half and poll as NIC 0's queues on it. Without the
   flag every RX_NICS line is gone and rx_min.elf is byte for byte what it
   was (programs/build.sh --check).

   Built with -DRX_NICS_RSS it is rx_nics_rss.elf: as rx_nics, and each
   other NIC may have several receive queues (its own RSS). At init it
   reads every NIC's QUEUES and numbers all their queues one after another
   from NIC 0's, as the machine numbers their NAPI instances; queue i of
   NIC k >= 1 has its registers in its block (0x5000 + (k - 1) * 0x400 +
   i * 0x40, queue 0's also its legacy RDBA..RDT) and cause bit 15 + i
   (bit 0 for queue 0), as NIC 0's queues. Its frames may go to RPS
   backlogs as NIC 0's do, the backlogs numbered after every NIC's queues.
   `nic_other_queues` tells the machine it serves them. */
#include "../rt/rt.h"

#ifdef RX_NICS_RSS
#define RX_NICS
#endif

#ifdef RX_NICS
/* NICs 8 and up sit past the receive queues' blocks (code/ports.rs). */
#define NIC(k, off) (*(volatile u32 *)(0xBF010000u + ((k) < 8 ? 0 : 0x2000u) + (k) * 0x100u + (off)))
#else
#define NIC(k, off) (*(volatile u32 *)(0xBF010000u + (k) * 0x100u + (off)))
#endif
/* Receive queue q's registers (queue 0's are also NIC 0's RDBA..RDT). */
#define RXQ0(q, off) (*(volatile u32 *)(0xBF011000u + (q) * 0x40u + (off)))
#ifdef RX_NICS_RSS
#define OTHERS 32 /* [[nics.others]] at most */
#define RINGS 256 /* every NIC's queues: the machine's NAPI instances at most */
/* Queue q is queue QI(q) of NIC QNIC(q); NIC k's queue i's block. */
#define QNIC(q) qnic[q]
#define QI(q) qidx[q]
#define RXQK(k, i, off) (*(volatile u32 *)(0xBF015000u + ((k) - 1) * 0x400u + (i) * 0x40u + (off)))
#define RXQ(q, off) (*(QNIC(q) ? &RXQK(QNIC(q), QI(q), off) : &RXQ0(QI(q), off)))
#define ONE_VECTOR(q) (nq[QNIC(q)] == 1)
#define FIRSTQ(k) first[k]
#define NRX nrx
#elif defined(RX_NICS)
#define OTHERS 32 /* [[nics.others]] at most */
/* Past NIC 0's queues, NIC k's RDBA, RDLEN and RDT (0x10, 0x14, 0x1C). */
#define QNIC(q) ((q) < nqueues ? 0 : (q) - nqueues + 1)
#define RXQ(q, off) (*((q) < nqueues ? &RXQ0(q, off) : &NIC(QNIC(q), 0x10 + (off) / 2)))
/* A NIC's one vector reads (and so clears) its cause register. */
#define ONE_VECTOR(q) (nqueues == 1 || (q) >= nqueues)
#define FIRSTQ(k) ((k) ? nqueues + (k) - 1 : 0)
#else
#define OTHERS 0
#define QNIC(q) 0
#define RXQ(q, off) RXQ0(q, off)
#define ONE_VECTOR(q) (nqueues == 1)
#endif
#define SVC(off) (*(volatile u32 *)(0xBF01F000u + (off)))
enum { ICR = 0x00, IMS = 0x04, IMC = 0x08, TDBA = 0x20, TDLEN = 0x24, TDT = 0x2C, QUEUES = 0x34 };
enum { Q_RDBA = 0x00, Q_RDLEN = 0x08, Q_RDT = 0x18 };
enum { SOFTIRQ_RAISE = 0x00, WAKE = 0x04, DELIVERED = 0x08, DROPPED = 0x0C, EOI = 0x10, IRQ_SAVE = 0x14, IRQ_RESTORE = 0x18,
       NAPI_SCHEDULE = 0x1C, NAPI_COMPLETE = 0x20, RPS_CPU = 0x24, RPS_CPUS = 0x28, NICS = 0x34 };
enum { CAUSE_RX = 1, DD = 1 };
#define NO_CPU 0xFFFFFFFFu

#ifndef RING
#define RING 16
#endif
#ifndef POOL
#define POOL 24
#endif
#ifndef QUEUE
#define QUEUE 8
#endif
#define BUF 2048
#define MAXQ 16      /* rss.queues at most */
#define MAXCPU 64    /* cpu.threads at most */
#define BACKLOG 8    /* frames each CPU's RPS backlog holds */
#ifndef RINGS
#define RINGS (MAXQ + OTHERS)
#endif
#ifndef NRX
#define NRX (nqueues + nothers) /* receive queues over all NICs */
#endif

struct desc {
	u32 addr, tag;
	u16 len, rsvd;
	u8 status, pad[3];
};

static struct desc ring[RINGS][RING] __attribute__((aligned(16)));
static u8 buffers[POOL][BUF];
static u8 extra[(RINGS - 1) * RING][BUF]; /* the other queues' buffers */
static u8 *free_list[POOL + (RINGS - 1) * RING];
static u32 free_count;
static u32 next_rx[RINGS];     /* next descriptor the driver looks at */
static u8 *owned[RINGS][RING]; /* the buffer each descriptor carries */
static u32 nqueues, rps;
#ifdef RX_NICS
static u32 nothers; /* NICs beside NIC 0 */
#endif
#ifdef RX_NICS_RSS
static u32 nrx;                                  /* queues over all NICs */
static u32 nq[1 + OTHERS], first[1 + OTHERS];    /* each NIC's queues, its first */
static u8 qnic[RINGS], qidx[RINGS];
const u32 nic_other_queues = MAXQ;
#endif
#ifndef RX_NICS
#define nothers 0
#endif

struct entry {
	u8 *buf;
	u32 tag, len;
};
static struct entry queue[QUEUE];
static u32 q_head, q_count;
u32 received, dropped, delivered;

/* The pool and the socket queue are shared by the bottom half and recv(),
   which may run on two hardware threads at once: an ll/sc spinlock guards
   them with this CPU's interrupts masked, as spin_lock_irqsave guards a
   socket's receive queue (skb_queue_tail, skb_dequeue) and the slab's
   free lists in Linux 2.6. The machine's masking part decides what the
   mask costs and how it is kept (conventional or optimistic). */
static volatile u32 lock;
static void spin_lock_irqsave(volatile u32 *l)
{
	SVC(IRQ_SAVE) = 0;
	while (__sync_lock_test_and_set(l, 1))
		while (*l)
			;
}
static void spin_unlock_irqrestore(volatile u32 *l)
{
	__sync_lock_release(l);
	SVC(IRQ_RESTORE) = 0;
}
static void lock_take(void)
{
	spin_lock_irqsave(&lock);
}
static void lock_give(void)
{
	spin_unlock_irqrestore(&lock);
}

static u8 *buf_get(void)
{
	lock_take();
	u8 *b = free_count ? free_list[--free_count] : 0;
	lock_give();
	return b;
}
static void buf_put(u8 *b)
{
	lock_take();
	free_list[free_count++] = b;
	lock_give();
}

/* Gives descriptor i of queue q a fresh buffer; 0 if the pool is empty. */
static int refill(u32 q, u32 i)
{
	u8 *b = buf_get();
	if (!b)
		return 0;
	owned[q][i] = b;
	ring[q][i].addr = (u32)b;
	ring[q][i].status = 0;
	return 1;
}

static u32 rx_cause(u32 q)
{
#ifdef RX_NICS_RSS
	q = QI(q);
#elif defined(RX_NICS)
	if (q >= nqueues)
		return CAUSE_RX;
#endif
	return q ? 1u << (15 + q) : CAUSE_RX;
}

void kernel_init(void)
{
	nqueues = NIC(0, QUEUES);
	rps = SVC(RPS_CPUS);
#ifdef RX_NICS
	nothers = SVC(NICS) - 1;
#endif
#ifdef RX_NICS_RSS
	for (u32 k = 0; k <= nothers; k++) {
		nq[k] = NIC(k, QUEUES);
		first[k] = nrx;
		for (u32 i = 0; i < nq[k]; i++, nrx++)
			qnic[nrx] = (u8)k, qidx[nrx] = (u8)i;
	}
#endif
	for (u32 i = 0; i < POOL; i++)
		buf_put(buffers[i]);
	for (u32 i = 0; i < (NRX - 1) * RING; i++)
		buf_put(extra[i]);
	u32 causes = 0;
	for (u32 q = 0; q < NRX; q++) {
		u32 n = 0;
		while (n < RING - 1 && refill(q, n))
			n++;
		RXQ(q, Q_RDBA) = (u32)ring[q];
		RXQ(q, Q_RDLEN) = RING;
		RXQ(q, Q_RDT) = n;
#ifdef RX_NICS_RSS
		if (QNIC(q))
			continue;
#endif
		causes |= rx_cause(q);
	}
	NIC(0, IMS) = causes;
#ifdef RX_NICS_RSS
	for (u32 k = 1; k <= nothers; k++) {
		u32 mine = 0;
		for (u32 q = first[k]; q < first[k] + nq[k]; q++)
			mine |= rx_cause(q);
		NIC(k, IMS) = mine;
	}
#elif defined(RX_NICS)
	for (u32 k = 1; k <= nothers; k++)
		NIC(k, IMS) = CAUSE_RX;
#endif
}

#ifndef RX_NICS
void nic_isr(u32 irq)
{
	u32 cause = NIC(irq, ICR);
	if (cause & CAUSE_RX) {
		NIC(irq, IMC) = CAUSE_RX;
		SVC(SOFTIRQ_RAISE) = 0;
	}
	SVC(EOI) = irq;
}
#endif

static u16 ip_sum(const u8 *h)
{
	u32 s = 0;
	for (u32 i = 0; i < 20; i += 2)
		s += (u32)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (u16)~s;
}

/* The driver's part of a frame: off queue q's ring; the descriptor goes
   back to the NIC with a fresh buffer when one is free. */
static struct entry rx_take(u32 q, u32 *tail)
{
	struct desc *d = &ring[q][next_rx[q]];
	struct entry e = { owned[q][next_rx[q]], d->tag, d->len };
	__sync_fetch_and_add(&received, 1);
	d->status = 0;
	next_rx[q] = (next_rx[q] + 1) % RING;
	if ((*tail + 1) % RING != next_rx[q] && refill(q, *tail)) {
		*tail = (*tail + 1) % RING;
		RXQ(q, Q_RDT) = *tail;
	}
	return e;
}

/* The protocol's part: a frame whose IP header checks joins the socket
   queue; the rest, and what a full queue cannot take, are dropped. */
static void rx_deliver(const struct entry *e)
{
	int queued = 0;
	if (ip_sum(e->buf + 14) == 0) {
		lock_take();
		if (q_count < QUEUE) {
			queue[(q_head + q_count++) % QUEUE] = *e;
			queued = 1;
		}
		lock_give();
	}
	if (!queued) {
		SVC(DROPPED) = e->tag;
		__sync_fetch_and_add(&dropped, 1);
		buf_put(e->buf);
	}
}

/* Descriptors left without a buffer get one now if the pool refilled, and
   the reader wakes if its queue holds frames. */
static void rx_end(u32 q, u32 tail)
{
	while ((tail + 1) % RING != next_rx[q] && refill(q, tail)) {
		tail = (tail + 1) % RING;
		RXQ(q, Q_RDT) = tail;
	}
	if (q_count)
		SVC(WAKE) = 0;
}

#ifdef RX_NICS
/* NIC k's interrupt (nic_isr for NIC 0, nic_other_isr for the others):
   with a receive cause it masks it, marks the NIC for the bottom half and
   raises NET_RX on this CPU, as a driver's ISR puts its device on this
   CPU's poll list (netif_rx_schedule). */
static volatile u32 rx_scheduled[1 + OTHERS];

static void rx_isr(u32 k)
{
	if (NIC(k, ICR) & CAUSE_RX) {
		NIC(k, IMC) = CAUSE_RX;
		rx_scheduled[k] = 1;
		SVC(SOFTIRQ_RAISE) = 0;
	}
	SVC(EOI) = k;
}

void nic_isr(u32 irq)
{
	rx_isr(irq);
}

void nic_other_isr(u32 nic)
{
	rx_isr(nic);
}

/* The bottom half drains each NIC it takes from the marks (one CPU's
   bottom half per NIC: the mark is taken atomically) and enables its
   cause again; a frame that landed meanwhile interrupts at once. */
void net_rx_action(void)
{
	for (u32 k = 0; k <= nothers; k++) {
		if (!__sync_bool_compare_and_swap(&rx_scheduled[k], 1, 0))
			continue;
		u32 q = FIRSTQ(k), tail = RXQ(q, Q_RDT);
		while (ring[q][next_rx[q]].status & DD) {
			struct entry e = rx_take(q, &tail);
			rx_deliver(&e);
		}
		rx_end(q, tail);
		NIC(k, IMS) = CAUSE_RX;
	}
}
#else
void net_rx_action(void)
{
	u32 tail = RXQ(0, Q_RDT);
	while (ring[0][next_rx[0]].status & DD) {
		struct entry e = rx_take(0, &tail);
		rx_deliver(&e);
	}
	rx_end(0, tail);
	NIC(0, IMS) = CAUSE_RX;
}
#endif

/* NAPI (Linux 5.x net/core/dev.c; e1000e's and ixgbe's interrupt handlers
   and polls). The top half of queue q masks its cause and asks the kernel
   for a poll; the kernel's NAPI part decides when the poll runs (NET_RX,
   the NAPI thread or a busy-polling recv). With one queue the NIC's cause
   register is read (and cleared) as e1000's single vector does; with
   several, each queue's vector clears its own cause (MSI-X auto-clear). */
void nic_napi_isr(u32 q)
{
	if (ONE_VECTOR(q) && !(NIC(QNIC(q), ICR) & CAUSE_RX))
		return;
	NIC(QNIC(q), IMC) = rx_cause(q);
	SVC(NAPI_SCHEDULE) = q;
}

/* RPS: each CPU's backlog (softnet_data's input_pkt_queue), filled by the
   polls of the receive queues and emptied by that CPU's backlog poll
   (enqueue_to_backlog, process_backlog). Its lock is held while the
   backlog is scheduled or completed, so no frame slips between. */
static struct entry backlog[MAXCPU][BACKLOG];
static u32 bl_head[MAXCPU], bl_count[MAXCPU];
static volatile u32 bl_lock[MAXCPU];

static void backlog_enqueue(u32 cpu, const struct entry *e)
{
	int queued = 0;
	spin_lock_irqsave(&bl_lock[cpu]);
	if (bl_count[cpu] < BACKLOG) {
		backlog[cpu][(bl_head[cpu] + bl_count[cpu]++) % BACKLOG] = *e;
		SVC(NAPI_SCHEDULE) = NRX + cpu;
		queued = 1;
	}
	spin_unlock_irqrestore(&bl_lock[cpu]);
	if (!queued) {
		SVC(DROPPED) = e->tag;
		__sync_fetch_and_add(&dropped, 1);
		buf_put(e->buf);
	}
}

/* The backlog poll of `cpu`: the protocol's part of at most `budget`
   frames; emptied, it completes under the backlog's lock. */
static u32 process_backlog(u32 cpu, u32 budget)
{
	u32 work = 0;
	for (;;) {
		spin_lock_irqsave(&bl_lock[cpu]);
		if (work == budget)
			break;
		if (!bl_count[cpu]) {
			SVC(NAPI_COMPLETE) = work;
			(void)SVC(NAPI_COMPLETE);
			break;
		}
		struct entry e = backlog[cpu][bl_head[cpu]];
		bl_head[cpu] = (bl_head[cpu] + 1) % BACKLOG;
		bl_count[cpu]--;
		spin_unlock_irqrestore(&bl_lock[cpu]);
		rx_deliver(&e);
		work++;
	}
	spin_unlock_irqrestore(&bl_lock[cpu]);
	if (q_count)
		SVC(WAKE) = 0;
	return work;
}

/* The poll of instance q: a receive queue, or past them a CPU's backlog.
   At most `budget` frames. Below the budget the ring is empty:
   napi_complete_done, and the interrupt enabled again only if it answers
   1 (it answers 0 when the kernel defers the interrupt or a busy poller
   owns the queue). A poll that used its whole budget leaves the queue
   scheduled and its interrupt masked. */
u32 nic_napi_poll(u32 q, u32 budget)
{
	if (q >= NRX)
		return process_backlog(q - NRX, budget);
	u32 tail = RXQ(q, Q_RDT), work = 0;
	while (work < budget && (ring[q][next_rx[q]].status & DD)) {
		struct entry e = rx_take(q, &tail);
		u32 cpu = NO_CPU;
		if (rps) {
			SVC(RPS_CPU) = e.tag;
			cpu = SVC(RPS_CPU);
		}
		if (cpu == NO_CPU)
			rx_deliver(&e);
		else
			backlog_enqueue(cpu, &e);
		work++;
	}
	rx_end(q, tail);
	if (work < budget) {
		SVC(NAPI_COMPLETE) = work;
		if (SVC(NAPI_COMPLETE))
			NIC(QNIC(q), IMS) = rx_cause(q);
	}
	return work;
}

int sys_recv(u32 sock, u8 *user, u32 len)
{
	lock_take();
	if (!q_count) {
		lock_give();
		return -11;
	}
	struct entry e0 = queue[q_head], *e = &e0;
	q_head = (q_head + 1) % QUEUE;
	q_count--;
	lock_give();
	u32 n = e->len - 42 < len ? e->len - 42 : len;
	memcpy(user, e->buf + 42, n);
	SVC(DELIVERED) = e->tag;
	__sync_fetch_and_add(&delivered, 1);
	buf_put(e->buf);
	return (int)n;
}

#include "app.h"

/* An application that never makes a system call (tests: a long stretch of code). */
void spin(void)
{
	for (;;)
		(*(volatile u32 *)&app_bytes)++;
}

/* The send path: the machine runs sys_send(len) at software-interrupt
   level on the application's thread for each send the workload makes (a
   script's send event, a frame a trace's host sent, a synthetic load's
   transmitted share), as the socket layer's sendto reaches the driver's
   start_xmit. It builds a UDP/IPv4 frame of `len` bytes in the buffer of
   the next transmit descriptor, copying the payload from the sender, and
   hands the descriptor to NIC 0 (TDT). Descriptors the NIC has sent (DD)
   are reclaimed before each send, as drivers that clean their ring in
   start_xmit do, so no transmit interrupt is needed. A frame larger than
   a buffer (-EMSGSIZE) or a full ring (-ENOBUFS) drops the send; the
   machine counts it. Only the application's thread sends: no lock. */
#define TX_RING 16
/* In a section of its own, after the receive path's data: adding the send
   path moves none of the receive path's addresses (cache sets). */
#define TX_DATA __attribute__((section(".bss.tx")))
static struct {
	struct desc ring[TX_RING] __attribute__((aligned(16)));
	u8 buf[TX_RING][BUF];
	u8 payload[BUF];
	u32 next, clean, ready, sent;
} tx TX_DATA;

static void put16(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

int sys_send(u32 len)
{
	if (!tx.ready) {
		NIC(0, TDBA) = (u32)tx.ring;
		NIC(0, TDLEN) = TX_RING;
		tx.ready = 1;
	}
	while (tx.clean != tx.next && (tx.ring[tx.clean].status & DD))
		tx.clean = (tx.clean + 1) % TX_RING;
	if (len > BUF)
		return -90;
	if ((tx.next + 1) % TX_RING == tx.clean)
		return -105;
	u8 *f = tx.buf[tx.next];
	u32 ip_len = len > 14 ? len - 14 : 0, udp_len = len > 34 ? len - 34 : 0;
	memset(f, 0, 42);
	memset(f, 0x02, 12);           /* destination and source MAC */
	put16(f + 12, 0x0800);         /* IPv4 */
	f[14] = 0x45;                  /* version 4, 20-byte header */
	put16(f + 16, ip_len);
	f[22] = 64;                    /* TTL */
	f[23] = 17;                    /* UDP */
	f[26] = 10, f[29] = 1;         /* 10.0.0.1 -> 10.0.0.2 */
	f[30] = 10, f[33] = 2;
	put16(f + 24, ip_sum(f + 14));
	put16(f + 34, 9);              /* discard port, both ends */
	put16(f + 36, 9);
	put16(f + 38, udp_len);
	if (len > 42)
		memcpy(f + 42, tx.payload, len - 42);
	struct desc *d = &tx.ring[tx.next];
	d->addr = (u32)f;
	d->tag = 0;
	d->len = (u16)len;
	d->status = 0;
	tx.next = (tx.next + 1) % TX_RING;
	NIC(0, TDT) = tx.next;
	tx.sent++;
	return (int)len;
}

int main(void)
{
	put_str("rx_min runs on the machine (scenario key code.program), not alone\n");
	return 1;
}

