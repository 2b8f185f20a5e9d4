/* The host driver of the programmable NIC (programs/firmware) as kernel
   code (scenario keys `code.program` and `nic_firmware.program`): it speaks
   the firmware's mailbox and ring protocol (docs/models/nic-firmware.md,
   "The host driver as code"). At init it posts a buffer for each of the
   receive ring's 256 descriptors and writes the receive mailbox. The
   interrupt handler masks the NIC and raises NET_RX (or, on the NAPI path,
   asks for a poll); the bottom half reads the status block's receive
   producer, walks the return descriptors from the last one it took, hands
   each frame to the socket with a fresh buffer posted in its place, writes
   the receive mailbox once and unmasks. recv() copies the frame out and
   tells the kernel what it delivered (service FRAME: the machine checks
   the bytes are the next frame, whole). send() writes a send descriptor
   and the frame's header (its number and length, which the firmware's
   MAC reads) and the send mailbox. One receive queue; the bottom half and
   recv() may run on two hardware threads, so the pool and the socket
   queue are under a spinlock with interrupts masked (as rx_min.c). */
#include "../rt/rt.h"

#define NIC(off) (*(volatile u32 *)(0xBF010000u + (off)))
#define FW(off) (*(volatile u32 *)(0xBF010800u + (off)))
#define SVC(off) (*(volatile u32 *)(0xBF01F000u + (off)))
enum { ICR = 0x00, IMS = 0x04, IMC = 0x08 };
enum { MBOX_SEND = 0x00, MBOX_RECV = 0x04, SEND_RING = 0x08, RECV_RING = 0x0C, RET_RING = 0x10, STATUS = 0x14, RING_LEN = 0x18 };
enum { SOFTIRQ_RAISE = 0x00, WAKE = 0x04, DROPPED = 0x0C, EOI = 0x10, IRQ_SAVE = 0x14, IRQ_RESTORE = 0x18,
       NAPI_SCHEDULE = 0x1C, NAPI_COMPLETE = 0x20, FRAME = 0x2C };
enum { CAUSE_RX = 1 };

#define RING 256   /* descriptors in each of the firmware's host rings */
#define BUF 2048
#define QUEUE 64   /* the socket's receive queue */
#define POOL (RING + QUEUE + 8)
#define COPY 256   /* bytes of a frame the firmware's DMA writes */

/* The firmware's descriptors (programs/firmware/nic.h): a send descriptor
   and a return descriptor are (buffer, length, frame number); a receive
   descriptor is (buffer, length). The status block is the send consumer
   and the receive producer. */
struct bd {
	u32 addr, len, seq, rsvd;
};
struct status {
	u32 send_done, recv_produced;
};
static volatile struct bd *send_ring, *recv_ring, *ret_ring;
static volatile struct status *status;

static u8 buffers[POOL][BUF];
static u8 *free_list[POOL];
static u32 free_count;
static u32 posted, taken; /* receive buffers posted, return descriptors taken (free-running) */

struct entry {
	u8 *buf;
	u32 len;
};
static struct entry queue[QUEUE];
static u32 q_head, q_count;
u32 received, dropped, delivered;

/* A planted fault, for the tests that show each of the machine's checks
   catches it (`code.poke = ["plant=N"]`): 1 delivers frame 10 twice, 2
   queues frame 10 after frame 11, 3 corrupts a byte of frame 10; 4 makes
   the bottom half load a word from an unaligned address (a fault), 5 the
   interrupt handler run a floating-point instruction (unsupported); 6 the
   interrupt handler spin forever, 7 the bottom half wait forever for a flag
   nobody sets (lockups). */
u32 plant;
static volatile u32 never;
static struct entry held;

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

/* The frame's number: its first word, as the MAC stamped it. */
static u32 number(const u8 *b)
{
	return *(const u32 *)b;
}

/* Receive descriptor `posted` gets buffer b. */
static void post(u8 *b)
{
	volatile struct bd *d = &recv_ring[posted % RING];
	d->addr = (u32)b;
	d->len = BUF;
	posted++;
}

void kernel_init(void)
{
	send_ring = (volatile struct bd *)FW(SEND_RING);
	recv_ring = (volatile struct bd *)FW(RECV_RING);
	ret_ring = (volatile struct bd *)FW(RET_RING);
	status = (volatile struct status *)FW(STATUS);
	for (u32 i = 0; i < POOL; i++)
		buf_put(buffers[i]);
	while (posted < RING)
		post(buf_get());
	FW(MBOX_RECV) = posted;
	NIC(IMS) = CAUSE_RX;
}

void nic_isr(u32 irq)
{
	if (irq != 0)
		return; /* a timer tick: nothing to do */
	if (plant == 5)
		__asm__ volatile(".word 0x46000000"); /* add.s $f0, $f0, $f0 */
	if (NIC(ICR) & CAUSE_RX) {
		NIC(IMC) = CAUSE_RX;
		while (plant == 6)
			;
		SVC(SOFTIRQ_RAISE) = 0;
	}
	SVC(EOI) = irq;
}

/* The socket's part: the frame joins the receive queue, or is dropped
   (and its buffer freed) when the queue is full. */
static void sock_queue(struct entry e)
{
	int queued = 0;
	lock_take();
	if (q_count < QUEUE) {
		queue[(q_head + q_count++) % QUEUE] = e;
		queued = 1;
	}
	lock_give();
	if (!queued) {
		SVC(DROPPED) = number(e.buf) + 1;
		__sync_fetch_and_add(&dropped, 1);
		buf_put(e.buf);
	}
}

/* Takes up to `budget` returned frames: each to the socket with a fresh
   buffer posted in its place (or, with none free, dropped and its buffer
   posted again); one mailbox write for them all. Returns the frames. */
static u32 rx_clean(u32 budget)
{
	u32 produced = status->recv_produced, work = 0;
	while (taken != produced && work < budget) {
		volatile struct bd *r = &ret_ring[taken % RING];
		struct entry e = { (u8 *)r->addr, r->len };
		u8 *fresh = buf_get();
		received += plant == 4 ? *(volatile u32 *)(r->addr + 1) : 1;
		if (!fresh) {
			SVC(DROPPED) = number(e.buf) + 1;
			dropped++;
			fresh = e.buf;
		} else if (plant == 2 && number(e.buf) == 10) {
			held = e;
		} else {
			sock_queue(e);
			if (plant == 2 && number(e.buf) == 11)
				sock_queue(held);
		}
		post(fresh);
		taken++;
		work++;
	}
	while (plant == 7 && !never)
		;
	if (work)
		FW(MBOX_RECV) = posted;
	if (q_count)
		SVC(WAKE) = 0;
	return work;
}

void net_rx_action(void)
{
	rx_clean(~0u);
	NIC(IMS) = CAUSE_RX;
}

/* NAPI: the top half masks the NIC and asks for a poll; the poll takes at
   most `budget` frames and, below it, completes and unmasks if the kernel
   answers 1. */
void nic_napi_isr(u32 q)
{
	if (!(NIC(ICR) & CAUSE_RX))
		return;
	NIC(IMC) = CAUSE_RX;
	SVC(NAPI_SCHEDULE) = q;
}

u32 nic_napi_poll(u32 q, u32 budget)
{
	u32 work = rx_clean(budget);
	if (work < budget) {
		SVC(NAPI_COMPLETE) = work;
		if (SVC(NAPI_COMPLETE))
			NIC(IMS) = CAUSE_RX;
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
	struct entry e = queue[q_head];
	q_head = (q_head + 1) % QUEUE;
	q_count--;
	lock_give();
	u32 n = e.len < len ? e.len : len;
	memcpy(user, e.buf, n < COPY ? n : COPY);
	u32 k = number(e.buf);
	if (plant == 3 && k == 10)
		user[COPY / 2 < n ? COPY / 2 : n - 1] ^= 0x40;
	SVC(FRAME) = (u32)user;
	if (plant == 1 && k == 10)
		SVC(FRAME) = (u32)user;
	__sync_fetch_and_add(&delivered, 1);
	buf_put(e.buf);
	return (int)n;
}

#include "app.h"

/* The send path, run for each send the workload makes: descriptor
   `sent` of the send ring gets a buffer headed with the frame's number
   and length, then the send mailbox. Descriptors the status block has
   given back are free again; a full ring drops the send (-ENOBUFS). */
static u8 tx_buf[RING][BUF];
static u32 sent;

int sys_send(u32 len)
{
	if (len > BUF)
		return -90;
	if (sent - status->send_done >= RING)
		return -105;
	u8 *f = tx_buf[sent % RING];
	((u32 *)f)[0] = sent;
	((u32 *)f)[1] = len;
	volatile struct bd *d = &send_ring[sent % RING];
	d->addr = (u32)f;
	d->len = len;
	d->seq = sent;
	sent++;
	FW(MBOX_SEND) = sent;
	return (int)len;
}

int main(void)
{
	put_str("fw_rx runs on the machine (scenario keys code.program and nic_firmware.program), not alone\n");
	return 1;
}
