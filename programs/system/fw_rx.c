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
   queue are under a spinlock with interrupts masked (as rx_min.c).

   Built with -DFW_NICS it is fw_rx_nics.elf, for a host with more than
   the programmable NIC: the other NICs beside it (`[[nics.others]]`, each
   one of the machine's e1000-style NICs with one ring, served as
   rx_nics.elf serves them: nic_other_isr(k) off the NAPI path, NAPI
   instance k on it) and RPS (`rss.rps_cpus`): a poll of the return ring
   hands each frame to the backlog of the CPU the kernel names for it,
   whose poll queues it to the socket. Without the flag every FW_NICS line
   is gone and fw_rx.elf is byte for byte what it was
   (programs/build.sh --check).

   Built with -DFW_RSS it is fw_rx_rss.elf, the driver of firmware that
   steers frames over several return rings (nic_rss.elf, `rss.queues` > 1):
   ring q (the NIC's QUEUES register says how many) is at the return
   ring's address + q * 4 KiB with its own producer index in the status
   block, its own interrupt cause and MSI-X vector and its own NAPI
   instance q, whose poll walks that ring alone. The receive ring of
   buffers stays one, posted under a lock (several CPUs' polls refill it). */
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
#ifdef FW_RSS
#define MAX_RINGS 16 /* return rings at most (programs/firmware/nic.h) */
#define RET_STRIDE (RING * 16)
#define RING_STATUS 0x10 /* ring q's producer index: the status block + 0x10 + 4q */
enum { QUEUES = 0x34 };
/* The return rings this driver walks at most (the machine checks the need). */
const u32 nic_return_rings = MAX_RINGS;
static u32 nrings, ring_taken[MAX_RINGS];
static volatile struct bd *ret_rings[MAX_RINGS];
static volatile u32 *ring_produced;
static u32 rx_cause(u32 q) { return q ? 1u << (15 + q) : CAUSE_RX; }
#define RING_ARG u32 q,
#define PRODUCED ring_produced[q]
#define TAKEN ring_taken[q]
#define RET ret_rings[q]
#else
#define RING_ARG
#define PRODUCED status->recv_produced
#define TAKEN taken
#define RET ret_ring
#endif
#define BUF 2048
#define QUEUE 64   /* the socket's receive queue */
#define POOL (RING + QUEUE + 8)
#define COPY 256   /* bytes of a frame the firmware's DMA writes */

#ifdef FW_NICS
#define OTHERS 32  /* [[nics.others]] at most */
#define ORING 16   /* descriptors in each other NIC's ring */
#define MAXCPU 64  /* cpu.threads at most */
#define BACKLOG 8  /* frames each CPU's RPS backlog holds */
#undef POOL
#define POOL (RING + QUEUE + 8 + OTHERS * ORING)
/* NIC k >= 1's registers (code/ports.rs; NICs 8 and up past the queues' blocks). */
#define ONIC(k, off) (*(volatile u32 *)(0xBF010000u + ((k) < 8 ? 0 : 0x2000u) + (k) * 0x100u + (off)))
enum { O_RDBA = 0x10, O_RDLEN = 0x14, O_RDT = 0x1C };
enum { DELIVERED = 0x08, RPS_CPU = 0x24, RPS_CPUS = 0x28, NICS = 0x34 };
enum { DD = 1 };
#define NO_CPU 0xFFFFFFFFu
/* The instances this driver's NAPI serves at most: the return ring, the
   other NICs' rings, a backlog per CPU (checked by the machine). */
const u32 nic_napi_instances = 1 + OTHERS + MAXCPU;
static u32 nothers, rps;
static volatile u32 rx_scheduled[1 + OTHERS]; /* NIC k's bottom half is due */
static void others_init(void);
#endif

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
#ifdef FW_RSS
static u32 posted; /* receive buffers posted (free-running); ring_taken: each ring's descriptors taken */
#else
static u32 posted, taken; /* receive buffers posted, return descriptors taken (free-running) */
#endif

struct entry {
	u8 *buf;
	u32 len;
#ifdef FW_NICS
	u32 tag; /* an other NIC's frame's tag; 0: the programmable NIC's */
#endif
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
#ifdef FW_RSS
	nrings = NIC(QUEUES);
	ring_produced = (volatile u32 *)(FW(STATUS) + RING_STATUS);
	for (u32 q = 0; q < nrings; q++)
		ret_rings[q] = (volatile struct bd *)(FW(RET_RING) + q * RET_STRIDE);
#endif
	for (u32 i = 0; i < POOL; i++)
		buf_put(buffers[i]);
	while (posted < RING)
		post(buf_get());
	FW(MBOX_RECV) = posted;
#ifdef FW_NICS
	others_init();
#endif
#ifdef FW_RSS
	for (u32 q = 0; q < nrings; q++)
		NIC(IMS) = rx_cause(q);
#else
	NIC(IMS) = CAUSE_RX;
#endif
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
#ifdef FW_NICS
		rx_scheduled[0] = 1;
#endif
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

#ifdef FW_NICS
static void protocol(struct entry e);
#else
#define protocol sock_queue
#endif

/* Takes up to `budget` returned frames: each to the socket with a fresh
   buffer posted in its place (or, with none free, dropped and its buffer
   posted again); one mailbox write for them all. Returns the frames. */
static u32 rx_clean(RING_ARG u32 budget)
{
	u32 produced = PRODUCED, work = 0;
	while (TAKEN != produced && work < budget) {
		volatile struct bd *r = &RET[TAKEN % RING];
		struct entry e = { .buf = (u8 *)r->addr, .len = r->len };
		u8 *fresh = buf_get();
		received += plant == 4 ? *(volatile u32 *)(r->addr + 1) : 1;
		if (!fresh) {
			SVC(DROPPED) = number(e.buf) + 1;
			dropped++;
			fresh = e.buf;
		} else if (plant == 2 && number(e.buf) == 10) {
			held = e;
		} else {
			protocol(e);
			if (plant == 2 && number(e.buf) == 11)
				protocol(held);
		}
#ifdef FW_RSS
		/* Several CPUs' polls refill the one receive ring (under the pool's lock). */
		lock_take();
		post(fresh);
		lock_give();
#else
		post(fresh);
#endif
		TAKEN++;
		work++;
	}
	while (plant == 7 && !never)
		;
#ifdef FW_RSS
	if (work) {
		/* Under the lock: a later count never overtaken by an earlier one. */
		lock_take();
		FW(MBOX_RECV) = posted;
		lock_give();
	}
#else
	if (work)
		FW(MBOX_RECV) = posted;
#endif
	if (q_count)
		SVC(WAKE) = 0;
	return work;
}

#ifdef FW_RSS
/* One receive ring with one cause on the Linux path: ring 0 (RSS's rings are NAPI's). */
void net_rx_action(void)
{
	rx_clean(0, ~0u);
	NIC(IMS) = CAUSE_RX;
}

/* NAPI instance q is return ring q: with several its vector clears its own
   cause (MSI-X auto-clear), with one the top half reads the cause register
   as e1000's does. */
void nic_napi_isr(u32 q)
{
	if (nrings == 1 && !(NIC(ICR) & CAUSE_RX))
		return;
	NIC(IMC) = rx_cause(q);
	SVC(NAPI_SCHEDULE) = q;
}

u32 nic_napi_poll(u32 q, u32 budget)
{
	u32 work = rx_clean(q, budget);
	if (work < budget) {
		SVC(NAPI_COMPLETE) = work;
		if (SVC(NAPI_COMPLETE))
			NIC(IMS) = rx_cause(q);
	}
	return work;
}
#elif !defined(FW_NICS)
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
#else
/* The other NICs (rx_min.c's driver for them, rx_nics.elf): NIC k's ring
   is `oring[k - 1]`, refilled from the shared pool; their frames carry
   the machine's tags and are delivered by tag. */
struct desc {
	u32 addr, tag;
	u16 len, rsvd;
	u8 status, pad[3];
};
static struct desc oring[OTHERS][ORING] __attribute__((aligned(16)));
static u8 *oowned[OTHERS][ORING];
static u32 onext[OTHERS], otail[OTHERS];

static int orefill(u32 j, u32 i)
{
	u8 *b = buf_get();
	if (!b)
		return 0;
	oowned[j][i] = b;
	oring[j][i].addr = (u32)b;
	oring[j][i].status = 0;
	return 1;
}

/* Gives NIC j + 1 the descriptors its ring can take a buffer for. */
static void orefill_all(u32 j)
{
	while ((otail[j] + 1) % ORING != onext[j] && orefill(j, otail[j])) {
		otail[j] = (otail[j] + 1) % ORING;
		ONIC(j + 1, O_RDT) = otail[j];
	}
}

static void others_init(void)
{
	nothers = SVC(NICS) - 1;
	rps = SVC(RPS_CPUS);
	for (u32 j = 0; j < nothers; j++) {
		ONIC(j + 1, O_RDBA) = (u32)oring[j];
		ONIC(j + 1, O_RDLEN) = ORING;
		orefill_all(j);
		ONIC(j + 1, IMS) = CAUSE_RX;
	}
}

/* Takes up to `budget` frames off NIC j + 1's ring to the socket. */
static u32 other_clean(u32 j, u32 budget)
{
	u32 work = 0;
	while (work < budget && (oring[j][onext[j]].status & DD)) {
		volatile struct desc *d = &oring[j][onext[j]];
		struct entry e = { oowned[j][onext[j]], d->len, d->tag };
		__sync_fetch_and_add(&received, 1);
		d->status = 0;
		onext[j] = (onext[j] + 1) % ORING;
		orefill_all(j);
		sock_queue(e);
		work++;
	}
	orefill_all(j);
	if (q_count)
		SVC(WAKE) = 0;
	return work;
}

void nic_other_isr(u32 k)
{
	if (ONIC(k, ICR) & CAUSE_RX) {
		ONIC(k, IMC) = CAUSE_RX;
		rx_scheduled[k] = 1;
		SVC(SOFTIRQ_RAISE) = 0;
	}
	SVC(EOI) = k;
}

/* The bottom half drains each NIC whose mark it takes (atomically: one
   CPU's bottom half per NIC) and enables its interrupt again. */
void net_rx_action(void)
{
	if (__sync_bool_compare_and_swap(&rx_scheduled[0], 1, 0)) {
		rx_clean(~0u);
		NIC(IMS) = CAUSE_RX;
	}
	for (u32 k = 1; k <= nothers; k++) {
		if (!__sync_bool_compare_and_swap(&rx_scheduled[k], 1, 0))
			continue;
		other_clean(k - 1, ~0u);
		ONIC(k, IMS) = CAUSE_RX;
	}
}

/* RPS (rx_min.c's): each CPU's backlog, filled by the return ring's poll
   and emptied by that CPU's backlog poll, NAPI instance 1 + nothers + cpu. */
static struct entry backlog[MAXCPU][BACKLOG];
static u32 bl_head[MAXCPU], bl_count[MAXCPU];
static volatile u32 bl_lock[MAXCPU];

static void backlog_enqueue(u32 cpu, struct entry e)
{
	int queued = 0;
	SVC(IRQ_SAVE) = 0;
	while (__sync_lock_test_and_set(&bl_lock[cpu], 1))
		while (bl_lock[cpu])
			;
	if (bl_count[cpu] < BACKLOG) {
		backlog[cpu][(bl_head[cpu] + bl_count[cpu]++) % BACKLOG] = e;
		SVC(NAPI_SCHEDULE) = 1 + nothers + cpu;
		queued = 1;
	}
	__sync_lock_release(&bl_lock[cpu]);
	SVC(IRQ_RESTORE) = 0;
	if (!queued) {
		SVC(DROPPED) = number(e.buf) + 1;
		__sync_fetch_and_add(&dropped, 1);
		buf_put(e.buf);
	}
}

/* A returned frame's protocol work: here, or on the CPU RPS names. */
static void protocol(struct entry e)
{
	u32 cpu = NO_CPU;
	if (rps) {
		SVC(RPS_CPU) = number(e.buf) + 1;
		cpu = SVC(RPS_CPU);
	}
	if (cpu == NO_CPU)
		sock_queue(e);
	else
		backlog_enqueue(cpu, e);
}

/* The backlog poll of `cpu`: at most `budget` frames to the socket;
   emptied, it completes under the backlog's lock. */
static u32 process_backlog(u32 cpu, u32 budget)
{
	u32 work = 0;
	for (;;) {
		SVC(IRQ_SAVE) = 0;
		while (__sync_lock_test_and_set(&bl_lock[cpu], 1))
			while (bl_lock[cpu])
				;
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
		__sync_lock_release(&bl_lock[cpu]);
		SVC(IRQ_RESTORE) = 0;
		sock_queue(e);
		work++;
	}
	__sync_lock_release(&bl_lock[cpu]);
	SVC(IRQ_RESTORE) = 0;
	if (q_count)
		SVC(WAKE) = 0;
	return work;
}

/* NAPI: instance 0 is the return ring, k the other NIC k, past them a
   CPU's backlog. The return ring has one vector, with or without RPS:
   its top half reads (and so clears) the cause, as e1000's does. */
void nic_napi_isr(u32 q)
{
	if (q == 0) {
		if (!(NIC(ICR) & CAUSE_RX))
			return;
		NIC(IMC) = CAUSE_RX;
	} else {
		if (!(ONIC(q, ICR) & CAUSE_RX))
			return;
		ONIC(q, IMC) = CAUSE_RX;
	}
	SVC(NAPI_SCHEDULE) = q;
}

u32 nic_napi_poll(u32 q, u32 budget)
{
	if (q > nothers)
		return process_backlog(q - 1 - nothers, budget);
	u32 work = q ? other_clean(q - 1, budget) : rx_clean(budget);
	if (work < budget) {
		SVC(NAPI_COMPLETE) = work;
		if (SVC(NAPI_COMPLETE)) {
			if (q)
				ONIC(q, IMS) = CAUSE_RX;
			else
				NIC(IMS) = CAUSE_RX;
		}
	}
	return work;
}
#endif

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
#ifdef FW_NICS
	if (e.tag) {
		SVC(DELIVERED) = e.tag;
		__sync_fetch_and_add(&delivered, 1);
		buf_put(e.buf);
		return (int)n;
	}
#endif
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
