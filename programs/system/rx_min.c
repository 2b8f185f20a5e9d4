/* The smallest receive path the machine can run as code (scenario key
   `code.program`): an e1000-style RX ring refilled from a buffer pool, an
   ISR that masks the NIC and raises NET_RX, a bottom half that checks each
   frame's IP header and queues it to the socket, and a recv() that copies
   the payload out. On the NAPI path (irq_path.kind = "napi") the same
   driver as NAPI's: a top half that asks for a poll, and a poll with a
   budget (nic_napi_isr and nic_napi_poll). The register map is the machine's (docs/models/cores.md,
   "Code on the machine"). Sizes are small on purpose: tests drive the
   pool, the ring and the socket queue to their limits. */
#include "../rt/rt.h"

#define NIC(k, off) (*(volatile u32 *)(0xBF010000u + (k) * 0x100u + (off)))
#define SVC(off) (*(volatile u32 *)(0xBF01F000u + (off)))
enum { ICR = 0x00, IMS = 0x04, IMC = 0x08, RDBA = 0x10, RDLEN = 0x14, RDH = 0x18, RDT = 0x1C };
enum { SOFTIRQ_RAISE = 0x00, WAKE = 0x04, DELIVERED = 0x08, DROPPED = 0x0C, EOI = 0x10, IRQ_SAVE = 0x14, IRQ_RESTORE = 0x18,
       NAPI_SCHEDULE = 0x1C, NAPI_COMPLETE = 0x20 };
enum { CAUSE_RX = 1, DD = 1 };

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

struct desc {
	u32 addr, tag;
	u16 len, rsvd;
	u8 status, pad[3];
};

static struct desc ring[RING] __attribute__((aligned(16)));
static u8 buffers[POOL][BUF];
static u8 *free_list[POOL];
static u32 free_count;
static u32 next_rx;           /* next descriptor the driver looks at */
static u8 *owned[RING];       /* the buffer each descriptor carries */

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
static void lock_take(void)
{
	SVC(IRQ_SAVE) = 0;
	while (__sync_lock_test_and_set(&lock, 1))
		while (lock)
			;
}
static void lock_give(void)
{
	__sync_lock_release(&lock);
	SVC(IRQ_RESTORE) = 0;
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

/* Gives descriptor i a fresh buffer; 0 if the pool is empty. */
static int refill(u32 i)
{
	u8 *b = buf_get();
	if (!b)
		return 0;
	owned[i] = b;
	ring[i].addr = (u32)b;
	ring[i].status = 0;
	return 1;
}

void kernel_init(void)
{
	for (u32 i = 0; i < POOL; i++)
		buf_put(buffers[i]);
	u32 n = 0;
	while (n < RING - 1 && refill(n))
		n++;
	NIC(0, RDBA) = (u32)ring;
	NIC(0, RDLEN) = RING;
	NIC(0, RDT) = n;
	NIC(0, IMS) = CAUSE_RX;
}

void nic_isr(u32 irq)
{
	u32 cause = NIC(irq, ICR);
	if (cause & CAUSE_RX) {
		NIC(irq, IMC) = CAUSE_RX;
		SVC(SOFTIRQ_RAISE) = 0;
	}
	SVC(EOI) = irq;
}

static u16 ip_sum(const u8 *h)
{
	u32 s = 0;
	for (u32 i = 0; i < 20; i += 2)
		s += (u32)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (u16)~s;
}

/* One frame off the ring into the socket queue (or dropped); the
   descriptor goes back to the NIC with a fresh buffer when one is free. */
static void rx_frame(u32 *tail)
{
	struct desc *d = &ring[next_rx];
	u8 *b = owned[next_rx];
	received++;
	int queued = 0;
	if (ip_sum(b + 14) == 0) {
		lock_take();
		if (q_count < QUEUE) {
			struct entry *e = &queue[(q_head + q_count++) % QUEUE];
			e->buf = b;
			e->tag = d->tag;
			e->len = d->len;
			queued = 1;
		}
		lock_give();
	}
	if (!queued) {
		SVC(DROPPED) = d->tag;
		dropped++;
		buf_put(b);
	}
	d->status = 0;
	next_rx = (next_rx + 1) % RING;
	/* Hand the NIC a descriptor back for each one taken, if a buffer is free. */
	if ((*tail + 1) % RING != next_rx && refill(*tail)) {
		*tail = (*tail + 1) % RING;
		NIC(0, RDT) = *tail;
	}
}

/* Descriptors left without a buffer get one now if the pool refilled, and
   the reader wakes if its queue holds frames. */
static void rx_end(u32 tail)
{
	while ((tail + 1) % RING != next_rx && refill(tail)) {
		tail = (tail + 1) % RING;
		NIC(0, RDT) = tail;
	}
	if (q_count)
		SVC(WAKE) = 0;
}

void net_rx_action(void)
{
	u32 tail = NIC(0, RDT);
	while (ring[next_rx].status & DD)
		rx_frame(&tail);
	rx_end(tail);
	NIC(0, IMS) = CAUSE_RX;
}

/* NAPI (Linux 5.x net/core/dev.c; e1000's e1000_intr and e1000_clean): the
   top half masks the receive cause and asks the kernel for a poll of queue
   0; the kernel's NAPI part decides when the poll runs (NET_RX, the NAPI
   thread or a busy-polling recv). */
void nic_napi_isr(u32 irq)
{
	u32 cause = NIC(irq, ICR);
	if (cause & CAUSE_RX) {
		NIC(irq, IMC) = CAUSE_RX;
		SVC(NAPI_SCHEDULE) = 0;
	}
	SVC(EOI) = irq;
}

/* The poll: at most `budget` frames. Below the budget the ring is empty:
   napi_complete_done, and the interrupt enabled again only if it answers
   1 (it answers 0 when the kernel defers the interrupt or a busy poller
   owns the queue). A poll that used its whole budget leaves the queue
   scheduled and its interrupt masked. */
u32 nic_napi_poll(u32 q, u32 budget)
{
	u32 tail = NIC(0, RDT), work = 0;
	while (work < budget && (ring[next_rx].status & DD)) {
		rx_frame(&tail);
		work++;
	}
	rx_end(tail);
	if (work < budget) {
		SVC(NAPI_COMPLETE) = work;
		if (SVC(NAPI_COMPLETE))
			NIC(0, IMS) = CAUSE_RX;
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

static long recv(u32 sock, u8 *buf, u32 len)
{
	register long v0 __asm__("$2") = 4003;
	register long a0 __asm__("$4") = sock;
	register long a1 __asm__("$5") = (long)buf;
	register long a2 __asm__("$6") = len;
	register long a3 __asm__("$7");
	__asm__ volatile("syscall" : "+r"(v0), "=r"(a3) : "r"(a0), "r"(a1), "r"(a2) : "memory", "$8", "$9", "$10", "$11", "$12", "$13", "$14", "$15", "$24", "$25", "hi", "lo");
	return v0;
}

static u8 user_buf[BUF];
u32 app_bytes;

void app_main(void)
{
	for (;;) {
		long n = recv(0, user_buf, sizeof user_buf);
		if (n > 0)
			app_bytes += (u32)n;
	}
}

/* An application that never makes a system call (tests: a long stretch of code). */
void spin(void)
{
	for (;;)
		(*(volatile u32 *)&app_bytes)++;
}

int main(void)
{
	put_str("rx_min runs on the machine (scenario key code.program), not alone\n");
	return 1;
}

