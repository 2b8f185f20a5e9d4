/* Event-driven NIC firmware for 1-6 cores (after Kim, Pai and Rixner,
   PPoPP 2003, and Willmann et al., HPCA 2005). Every core runs fw_main():
   a dispatch loop that serves hardware events by priority, then software
   tasks from a distributed queue. fw_cfg (written by the simulator before
   the cores start) picks the organisation:
   - frame-level: any core runs any handler; hardware events are claimed a
     batch of frames at a time with ll/sc, so one handler type runs on
     several cores for different frames; frames reach the wire and the
     host in order through deliver_in_order();
   - task-level: handler type h runs only on core fw_cfg.owner[h].
   The shared DMA engines are behind spin locks; the MAC is behind the
   transmit delivery lock. */
#include "nic.h"
#include "sync.h"

enum handler {
	H_MAILBOX, H_FETCH_SEND_BDS, H_FETCH_RECV_BDS, H_DMA_READ_COMPLETE,
	H_FETCH_FRAME_DATA, H_RECEIVE, H_DMA_WRITE_COMPLETE, H_SEND_COMPLETE, NH
};

struct cfg {
	u32 frame_level;
	u32 batch;        /* frames or descriptors claimed at a time */
	u32 owner[NH];    /* task-level: the core of each handler */
};
volatile struct cfg fw_cfg = { 1, 4, { 0 } };

#define MAXCORES 8
#define QN 256           /* DMA descriptors in flight per engine (its queue's depth) */
#define TQ 256           /* software tasks per core (never full: each task covers a batch of
                            the at most RING frames in flight per ring) */

struct task { u32 type, first, n; };
struct tqueue { volatile u32 lock, head, tail; struct task t[TQ]; };
static struct tqueue queues[MAXCORES];

/* Kinds of DMA descriptor, kept beside each one the firmware enqueues. */
enum kind { K_NONE, K_SBD, K_RBD, K_DATA, K_NOTIFY_TX, K_RXDONE };
struct dma { volatile u32 lock, enq; struct task tag[QN]; };
static struct dma drd, dwr;

/* In-order delivery of frames [first, n): ready flags and one deliverer. */
struct order { volatile u32 lock, next; volatile u8 ready[RING]; };
static struct order tx_order, rx_order, rbd_order;

#ifdef FW_RSS
/* Receive-side scaling (nic_rss.elf): the MAC stamps each frame with its
   flow's Toeplitz hash (RX_HASH), receive() looks its low 7 bits up in
   the indirection table the host wrote before the cores started (as a
   driver writes an RSS NIC's, `ethtool -X`) and host_deliver() returns
   the frame on that ring, each ring with its own producer index in the
   status block and its own interrupt vector (the ring's number). */
#define INDIR 128
volatile u32 fw_rings = 1;
volatile u8 fw_indir[INDIR];
static u32 ring_prod[MAX_RINGS];   /* frames returned on each ring */
static u32 rxdone_rings[QN];       /* per write descriptor: rings its batch returned on */
#endif

#ifdef FW_COAL
/* Host interrupt moderation (nic_coal.elf), after the Tigon's
   host-coalescing timer and frame count, with ethtool's rx-frames and
   rx-usecs semantics: each receive batch the host has been given counts
   its frames; the count reaching fw_coal.frames interrupts at once, and
   the first frame counted arms the NIC's timer for fw_coal.cycles, whose
   expiry interrupts if frames are counted. Any interrupt (a send
   completion's too) clears the count and disarms the timer; 0 turns a
   rule off. The host writes fw_coal before the cores start. HOST_IRQ's
   value says which rule fired: 1 frames (or a send completion), 2 the
   timer. While the host has masked the interrupt (bit q of fw_masked,
   ring q's: the host writes it as the Tigon's MaskInt) nothing counts
   and nothing is raised: the count and the timer start over, as the
   host's poll takes the frames; its re-enable with frames waiting
   interrupts at once. The timer keeps its deadline, so an expiry from
   before a re-arm raises nothing early. */
#define NEV (NSRC + 1)
struct coal { u32 frames, cycles; };
volatile u32 fw_masked;
static int before(u32 a, u32 b) { return (int)(a - b) < 0; }
#ifdef FW_RSS
/* With several return rings (nic_rss_coal.elf, -DFW_RSS -DFW_COAL) each
   ring has its own count and rules, fw_coal[q], as a multi-queue NIC
   coalesces per vector (tg3's HOSTCC_RXCOL_TICKS_VEC1 + 0x18 q). The NIC
   has one timer: each ring keeps its own deadline (read from the core's
   cycle counter) and the timer is armed for the earliest; at its expiry
   every ring whose deadline has come interrupts and the timer is armed
   for the next. HOST_IRQ's value is the ring, with the rule in bits 8
   up. */
volatile struct coal fw_coal[MAX_RINGS] = { [0 ... MAX_RINGS - 1] = { 1, 0 } };
static volatile u32 coal_lock, coal_counts[MAX_RINGS], coal_due[MAX_RINGS], coal_armed[MAX_RINGS];
static volatile u32 timer_due, timer_armed;
static u8 rxdone_counts[QN][MAX_RINGS];  /* per write descriptor: frames its batch returned on each ring */
#else
volatile struct coal fw_coal = { 1, 0 };
static volatile u32 coal_lock, coal_count, coal_due, coal_armed;
#endif
#else
#define NEV NSRC
#endif

/* Claimed prefixes of each event source, and other shared progress. */
static volatile u32 claimed[NEV];
static volatile u32 recv_bds_ready;   /* receive buffers whose descriptors are in SRAM, in order */

/* Which core this is (the built-in identity register, docs/models/cores.md). */
static u32 core_id(void) { return MMIO(REG_THREAD_ID) >> 8; }

static u32 min(u32 a, u32 b) { return a < b ? a : b; }

/* Handlers stay separate functions so the simulator can attribute cycles to them. */
#define HANDLER static __attribute__((noinline))

/* Claims up to max of [claimed[src], limit), never across the end of an
   SRAM ring; returns how many, the first in *first. */
static u32 claim(u32 src, u32 limit, u32 max, u32 *first)
{
	for (;;) {
		u32 c = claimed[src];
		if (c >= limit)
			return 0;
		u32 n = min(min(limit - c, max), RING - c % RING);
		if (cas(&claimed[src], c, c + n)) {
			NIC(NIC_ACK(src)) = c + n;
			*first = c;
			return n;
		}
	}
}

static void push(enum handler h, u32 first, u32 n)
{
	struct tqueue *q = &queues[fw_cfg.frame_level ? core_id() : fw_cfg.owner[h]];
	lock_acquire(&q->lock);
	struct task *t = &q->t[q->tail % TQ];
	t->type = h;
	t->first = first;
	t->n = n;
	q->tail++;
	lock_release(&q->lock);
}

static u32 pop(struct tqueue *q, struct task *out)
{
	if (q->head == q->tail)
		return 0;
	lock_acquire(&q->lock);
	u32 got = q->head != q->tail;
	if (got)
		*out = q->t[q->head++ % TQ];
	lock_release(&q->lock);
	return got;
}

/* Waits while engine `src`'s queue is full (the caller holds its lock). */
static void __attribute__((noinline)) dma_wait_space(struct dma *e, u32 src)
{
	while (e->enq - NIC(NIC_COUNT(src)) >= QN)
		;
}

static inline void dma_room(struct dma *e, u32 src)
{
	if (e->enq - NIC(NIC_COUNT(src)) >= QN)
		dma_wait_space(e, src);
}

/* One DMA descriptor; the caller holds e->lock. */
static void dma_put(struct dma *e, u32 base, u32 host, u32 local, u32 len, u32 kind, u32 first, u32 n)
{
	dma_room(e, base == DMA_RD ? SRC_DMA_RD : SRC_DMA_WR);
	struct task *t = &e->tag[e->enq % QN];
	t->type = kind;
	t->first = first;
	t->n = n;
	e->enq++;
	NIC(base + DMA_HOST) = host;
	NIC(base + DMA_LOCAL) = local;
	NIC(base + DMA_LEN) = len;
	NIC(base + DMA_GO) = 1;
}

HANDLER void transmit(u32 first, u32 n)
{
	for (u32 i = first; i < first + n; i++) {
		u32 s = i % RING;
		NIC(MAC_TX_LOCAL) = S_TXBUF + s * BUF;
		NIC(MAC_TX_LEN) = SRAM(S_SBD + 16 * s + 4);
		NIC(MAC_TX_GO) = 1;
	}
}

/* Data, return descriptors and the status word of received frames, in order. */
HANDLER void host_deliver(u32 first, u32 n)
{
	lock_acquire(&dwr.lock);
#ifdef FW_RSS
	u32 rings = 0;
#ifdef FW_COAL
	u8 counts[MAX_RINGS] = { 0 };
#endif
#endif
	for (u32 i = first; i < first + n; i++) {
		u32 s = i % RING;
		u32 len = SRAM(RX_STATUS + 8 * s);
		dma_put(&dwr, DMA_WR, SRAM(S_RET + 16 * s), S_RXBUF + s * BUF, len, K_NONE, 0, 0);
#ifdef FW_RSS
		u32 q = SRAM(S_RET + 16 * s + 12);
		rings |= 1u << q;
#ifdef FW_COAL
		counts[q]++;
#endif
		dma_put(&dwr, DMA_WR, H_RET_RING + q * H_RET_STRIDE + (ring_prod[q]++ % H_RING) * 16, S_RET + 16 * s, 16, K_NONE, 0, 0);
#else
		dma_put(&dwr, DMA_WR, H_RET_RING + (i % H_RING) * 16, S_RET + 16 * s, 16, K_NONE, 0, 0);
#endif
	}
	u32 end = first + n;
#ifdef FW_RSS
	/* Each ring's producer before the total, whose write interrupts them. */
	for (u32 q = 0; q < fw_rings; q++) {
		if (!(rings & (1u << q)))
			continue;
		u32 at = S_QSTAT + 4 * (q * RING + end % RING);
		SRAM(at) = ring_prod[q];
		dma_put(&dwr, DMA_WR, H_STATUS + H_QSTAT + 4 * q, at, 4, K_NONE, 0, 0);
	}
	dma_room(&dwr, SRC_DMA_WR);
	rxdone_rings[dwr.enq % QN] = rings;
#ifdef FW_COAL
	for (u32 q = 0; q < fw_rings; q++)
		rxdone_counts[dwr.enq % QN][q] = counts[q];
#endif
#endif
	SRAM(S_RXSTAT + 4 * (end % RING)) = end;
	dma_put(&dwr, DMA_WR, H_STATUS + 4, S_RXSTAT + 4 * (end % RING), 4, K_RXDONE, first, n);
	lock_release(&dwr.lock);
}

/* Marks [first, first+n) ready, then whoever holds the order's lock hands
   every ready frame at the head to emit(), in order. A core that finds the
   lock taken leaves its frames to the holder, which looks again after
   releasing (so no frame is stranded). */
static void __attribute__((noinline)) deliver_in_order(struct order *o, u32 first, u32 n, void (*emit)(u32, u32))
{
	for (u32 i = first; i < first + n; i++)
		o->ready[i % RING] = 1;
	barrier();
	while (o->ready[o->next % RING] && try_lock(&o->lock)) {
		u32 start = o->next, end = start;
		while (o->ready[end % RING] && end - start < RING - end % RING) {
			o->ready[end % RING] = 0;
			end++;
		}
		if (end > start)
			emit(start, end - start);
		o->next = end;
		lock_release(&o->lock);
	}
}

/* ---- Handlers (the paper's, section 2.2). ---- */

HANDLER u32 mailbox(void)
{
	u32 first, n, done = 0;
	u32 sent = NIC(NIC_COUNT(SRC_MAC_TX));
	n = claim(SRC_MB_SEND, min(NIC(NIC_COUNT(SRC_MB_SEND)), sent + RING), fw_cfg.batch * 2, &first);
	if (n) {
		push(H_FETCH_SEND_BDS, first, n);
		done = 1;
	}
	u32 taken = claimed[SRC_MAC_RX];
	n = claim(SRC_MB_RECV, min(NIC(NIC_COUNT(SRC_MB_RECV)), taken + RING), fw_cfg.batch * 2, &first);
	if (n) {
		push(H_FETCH_RECV_BDS, first, n);
		done = 1;
	}
	return done;
}

HANDLER void fetch_send_bds(u32 first, u32 n)
{
	lock_acquire(&drd.lock);
	dma_put(&drd, DMA_RD, H_SEND_RING + (first % H_RING) * 16, S_SBD + (first % RING) * 16, n * 16, K_SBD, first, n);
	lock_release(&drd.lock);
}

HANDLER void fetch_recv_bds(u32 first, u32 n)
{
	lock_acquire(&drd.lock);
	dma_put(&drd, DMA_RD, H_RECV_RING + (first % H_RING) * 16, S_RBD + (first % RING) * 16, n * 16, K_RBD, first, n);
	lock_release(&drd.lock);
}

HANDLER void fetch_frame_data(u32 first, u32 n)
{
	lock_acquire(&drd.lock);
	for (u32 i = first; i < first + n; i++) {
		u32 s = i % RING;
		u32 last = i + 1 == first + n;
		dma_put(&drd, DMA_RD, SRAM(S_SBD + 16 * s), S_TXBUF + s * BUF, SRAM(S_SBD + 16 * s + 4), last ? K_DATA : K_NONE, first, n);
	}
	lock_release(&drd.lock);
}

/* Fetches of receive descriptors may complete out of order across cores. */
static void recv_bds_arrived(u32 first, u32 n)
{
	recv_bds_ready = first + n;
}

HANDLER u32 dma_read_complete(void)
{
	u32 first, n = claim(SRC_DMA_RD, NIC(NIC_COUNT(SRC_DMA_RD)), fw_cfg.batch, &first);
	for (u32 d = first; d < first + n; d++) {
		struct task t = drd.tag[d % QN];
		if (t.type == K_SBD)
			push(H_FETCH_FRAME_DATA, t.first, t.n);
		else if (t.type == K_RBD)
			deliver_in_order(&rbd_order, t.first, t.n, recv_bds_arrived);
		else if (t.type == K_DATA)
			deliver_in_order(&tx_order, t.first, t.n, transmit);  /* transmit */
	}
	return n;
}

HANDLER u32 receive(void)
{
	u32 first, n = claim(SRC_MAC_RX, min(NIC(NIC_COUNT(SRC_MAC_RX)), recv_bds_ready), fw_cfg.batch, &first);
	for (u32 i = first; i < first + n; i++) {
		u32 s = i % RING;
		SRAM(S_RET + 16 * s) = SRAM(S_RBD + 16 * s);
		SRAM(S_RET + 16 * s + 4) = SRAM(RX_STATUS + 8 * s);
		SRAM(S_RET + 16 * s + 8) = SRAM(RX_STATUS + 8 * s + 4);
#ifdef FW_RSS
		SRAM(S_RET + 16 * s + 12) = fw_indir[SRAM(RX_HASH + 4 * s) % INDIR];
#endif
	}
	if (n)
		deliver_in_order(&rx_order, first, n, host_deliver);
	return n;
}

#if defined(FW_COAL) && defined(FW_RSS)
/* The NIC's timer expires by `at` (the caller holds coal_lock). */
static void timer_by(u32 at, u32 now)
{
	if (timer_armed && !before(at, timer_due))
		return;
	timer_armed = 1;
	timer_due = at;
	NIC(TIMER_ARM) = before(now, at) ? at - now : 1;
}

/* The caller holds coal_lock. */
static void coal_raise(u32 q, u32 why)
{
	coal_counts[q] = 0;
	coal_armed[q] = 0;
	NIC(HOST_IRQ) = q | why << 8;
}

static void coal_frames(u32 q, u32 n)
{
	lock_acquire(&coal_lock);
	if (fw_masked & (1u << q)) {
		coal_counts[q] = 0;
		coal_armed[q] = 0;
		lock_release(&coal_lock);
		return;
	}
	u32 first = coal_counts[q] == 0;
	coal_counts[q] += n;
	if (fw_coal[q].frames && coal_counts[q] >= fw_coal[q].frames) {
		coal_raise(q, 1);
	} else if (first && fw_coal[q].cycles) {
		u32 now = MMIO(REG_CYCLE_LO);
		coal_due[q] = now + fw_coal[q].cycles;
		coal_armed[q] = 1;
		timer_by(coal_due[q], now);
	}
	lock_release(&coal_lock);
}
#elif defined(FW_COAL)
/* The caller holds coal_lock. */
static void coal_raise(u32 why)
{
	coal_count = 0;
	coal_armed = 0;
	NIC(TIMER_ARM) = 0;
	NIC(HOST_IRQ) = why;
}

static void coal_frames(u32 n)
{
	lock_acquire(&coal_lock);
	if (fw_masked & 1) {
		coal_count = 0;
		coal_armed = 0;
	} else if (fw_coal.frames && coal_count + n >= fw_coal.frames) {
		coal_raise(1);
	} else if (coal_count == 0 && fw_coal.cycles) {
		coal_count = n;
		coal_due = MMIO(REG_CYCLE_LO) + fw_coal.cycles;
		coal_armed = 1;
		NIC(TIMER_ARM) = fw_coal.cycles;
	} else {
		coal_count += n;
	}
	lock_release(&coal_lock);
}

#endif

#ifdef FW_COAL
HANDLER u32 coalesce_timer(void)
{
	u32 first, n = claim(SRC_TIMER, NIC(NIC_COUNT(SRC_TIMER)), 1, &first);
	if (!n)
		return 0;
	lock_acquire(&coal_lock);
#ifdef FW_RSS
	/* Every ring whose deadline has come; the timer then for the next. */
	u32 now = MMIO(REG_CYCLE_LO);
	timer_armed = 0;
	for (u32 q = 0; q < fw_rings; q++) {
		if (!coal_armed[q])
			continue;
		if (before(now, coal_due[q]))
			timer_by(coal_due[q], now);
		else if (coal_counts[q] && !(fw_masked & (1u << q)))
			coal_raise(q, 2);
		else
			coal_counts[q] = coal_armed[q] = 0;
	}
#else
	/* An expiry from before the timer was cleared and re-armed: the re-armed one comes later. */
	if (coal_armed && !before(MMIO(REG_CYCLE_LO), coal_due)) {
		if (coal_count && !(fw_masked & 1))
			coal_raise(2);
		coal_count = coal_armed = 0;
	}
#endif
	lock_release(&coal_lock);
	return n;
}
#endif

HANDLER u32 dma_write_complete(void)
{
	u32 first, n = claim(SRC_DMA_WR, NIC(NIC_COUNT(SRC_DMA_WR)), fw_cfg.batch * 4, &first);
	for (u32 d = first; d < first + n; d++) {
		struct task t = dwr.tag[d % QN];
		if (t.type == K_RXDONE)
			NIC(MAC_RX_FREE) = t.first + t.n;
#ifdef FW_RSS
		/* A vector per ring that got frames; send completions on ring 0's. */
		if (t.type == K_RXDONE) {
			u32 rings = rxdone_rings[d % QN];
			for (u32 q = 0; q < fw_rings; q++)
				if (rings & (1u << q))
#ifdef FW_COAL
					coal_frames(q, rxdone_counts[d % QN][q]);
#else
					NIC(HOST_IRQ) = q;
#endif
		} else if (t.type == K_NOTIFY_TX) {
#ifdef FW_COAL
			lock_acquire(&coal_lock);
			coal_raise(0, 1);
			lock_release(&coal_lock);
#else
			NIC(HOST_IRQ) = 0;
#endif
		}
#elif defined(FW_COAL)
		if (t.type == K_RXDONE) {
			coal_frames(t.n);
		} else if (t.type == K_NOTIFY_TX) {
			lock_acquire(&coal_lock);
			coal_raise(1);
			lock_release(&coal_lock);
		}
#else
		if (t.type == K_RXDONE || t.type == K_NOTIFY_TX)
			NIC(HOST_IRQ) = 1;
#endif
	}
	return n;
}

/* Tells the host how far sending has got (the notify step). */
HANDLER u32 send_complete(void)
{
	u32 first, n = claim(SRC_MAC_TX, NIC(NIC_COUNT(SRC_MAC_TX)), fw_cfg.batch * 2, &first);
	if (!n)
		return 0;
	u32 end = first + n;
	SRAM(S_TXSTAT + 4 * (end % RING)) = end;
	lock_acquire(&dwr.lock);
	dma_put(&dwr, DMA_WR, H_STATUS, S_TXSTAT + 4 * (end % RING), 4, K_NOTIFY_TX, first, n);
	lock_release(&dwr.lock);
	return n;
}

static void run_task(struct task *t)
{
	switch (t->type) {
	case H_FETCH_SEND_BDS: fetch_send_bds(t->first, t->n); break;
	case H_FETCH_RECV_BDS: fetch_recv_bds(t->first, t->n); break;
	case H_FETCH_FRAME_DATA: fetch_frame_data(t->first, t->n); break;
	}
}

/* Hardware events by priority: receive first so the MAC's slots drain. */
#ifdef FW_COAL
/* The timer's expiry is the notify step's: the owner of DMA writes done serves it. */
static const u8 prio_src[NEV] = { SRC_MAC_RX, SRC_DMA_WR, SRC_TIMER, SRC_DMA_RD, SRC_MAC_TX, SRC_MB_SEND, SRC_MB_RECV };
static const u8 src_handler[NEV] = { H_DMA_READ_COMPLETE, H_DMA_WRITE_COMPLETE, H_RECEIVE, H_SEND_COMPLETE, H_MAILBOX, H_MAILBOX, H_DMA_WRITE_COMPLETE };
#else
static const u8 prio_src[NSRC] = { SRC_MAC_RX, SRC_DMA_WR, SRC_DMA_RD, SRC_MAC_TX, SRC_MB_SEND, SRC_MB_RECV };
static const u8 src_handler[NSRC] = { H_DMA_READ_COMPLETE, H_DMA_WRITE_COMPLETE, H_RECEIVE, H_SEND_COMPLETE, H_MAILBOX, H_MAILBOX };
#endif

static u32 run_event(u32 src)
{
	switch (src) {
	case SRC_DMA_RD: return dma_read_complete();
	case SRC_DMA_WR: return dma_write_complete();
	case SRC_MAC_RX: return receive();
	case SRC_MAC_TX: return send_complete();
#ifdef FW_COAL
	case SRC_TIMER: return coalesce_timer();
#endif
	default: return mailbox();
	}
}

void fw_main(void)
{
	u32 self = core_id();
	u32 mine = 0;
	for (u32 s = 0; s < NEV; s++)
		if (fw_cfg.frame_level || fw_cfg.owner[src_handler[s]] == self)
			mine |= 1u << s;
	u32 cores = MMIO(0x10) >> 8;
	for (;;) {
		/* The most urgent hardware event with work, then one software
		   task, so a steady stream of events cannot starve the tasks. */
		u32 ev = NIC(NIC_EVENTS) & mine;
		for (u32 k = 0; k < NEV; k++)
			if ((ev & (1u << prio_src[k])) && run_event(prio_src[k]))
				break;
		struct task t;
		for (u32 k = 0, q = self; k < cores; k++, q = q + 1 == cores ? 0 : q + 1) {
			/* (no % here: a divide takes the R4000 69 cycles) */
			if ((k == 0 || fw_cfg.frame_level) && pop(&queues[q], &t)) {
				run_task(&t);
				break;
			}
		}
	}
}

int main(void)
{
	fw_main();
	return 0;
}
