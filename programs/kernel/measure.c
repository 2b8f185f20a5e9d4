/* Per-activity work of the kernel, measured on the execution-driven core
   (`irqsim exec kernel/measure-netperf` or `kernel/measure-nat`, built with
   CONFIG_FORWARD 0 or 1, with caches set by --set): the fake NIC
   of kernel_test feeds frames one per interrupt, and this driver reads the
   hardware thread's instruction, cycle and miss counters around every nic_isr,
   net_rx_action and sys_recv call, minus the fake device's own share (the
   machine's registers are single accesses). It prints,
   per activity, totals over the first WARMUP frames and over the MEASURED
   frames after them:
     ACT.calls ACT.instructions ACT.cycles ACT.l1i ACT.l1d ACT.l2 ACT.accesses
   prefixed warm. and steady.; with caches too large to evict, the warm.
   misses are the lines the activity touched first (its footprint). Then
   each steady frame's cycles after its interrupt (net_rx_action and, through
   the NAT, the TX-done cleanup) as frame_cycles_N: the spread of a
   frame's cost that livelock's driver.isr_rx_spread takes. Run
   with --set core.cores=2 so that core 1 is the NIC's DMA engine (its
   stores invalidate core 0's L1 data lines, as DMA does); with one core
   the NIC's copies go through core 0's caches. kernel_init's data lines
   are flushed before the frames (its code lines, e.g. skb_alloc's, stay). */
#include "fake_nic.h"

#define WARMUP 300
#define MEASURED 1000
#define PAYLOAD 1472 /* 1,514 B frames */
#define NAT_FLOWS 256

enum { ISR_RX, NET_RX, RECV, ISR_TX, NACT };
static const char *const act_name[NACT] = {"nic_isr_rx", "net_rx_action", "sys_recv", "nic_isr_tx"};

struct tally {
	struct meter m;
	u32 calls, accesses;
};
static struct tally tally[NACT];
static u8 frame[1600] __attribute__((aligned(4)));
static u8 ubuf[PAYLOAD] __attribute__((aligned(64)));
/* What a wrapped register access adds around the device, and an empty
   measuring window: instructions and cycles (calibrate()). */
static struct meter overhead, window;
static u32 frame_cycles[MEASURED];

/* Runs one activity, charging its counts (less the device's) to tally[a]. */
#define MEASURE_CALL(a, call)                                                                       \
	do {                                                                                        \
		struct meter x, y, c0 = fake.cost;                                                  \
		u32 n0 = fake.accesses;                                                             \
		meter_read(&x);                                                                     \
		call;                                                                               \
		meter_read(&y);                                                                     \
		struct tally *t = &tally[a];                                                        \
		u32 n = fake.accesses - n0;                                                         \
		t->calls++;                                                                         \
		t->accesses += n;                                                                   \
		t->m.instructions += y.instructions - x.instructions - (fake.cost.instructions - c0.instructions) - n * overhead.instructions - window.instructions; \
		t->m.cycles += y.cycles - x.cycles - (fake.cost.cycles - c0.cycles) - n * overhead.cycles - window.cycles; \
		t->m.l1i += y.l1i - x.l1i - (fake.cost.l1i - c0.l1i);                               \
		t->m.l1d += y.l1d - x.l1d - (fake.cost.l1d - c0.l1d);                               \
		t->m.l2 += y.l2 - x.l2 - (fake.cost.l2 - c0.l2);                                    \
	} while (0)

/* The DMA engine: core 1 copies for the NIC when there are two cores. */
static volatile u32 dma_pending, dma_done, two_cores;
static u8 *volatile dma_to;
static const u8 *volatile dma_from;
static volatile u32 dma_len;

void dma_copy(u8 *to, const u8 *from, u32 n)
{
	if (!two_cores) {
		memcpy(to, from, n);
		return;
	}
	dma_to = to, dma_from = from, dma_len = n;
	__sync_synchronize();
	dma_pending = 1;
	while (dma_pending)
		;
}

static void dma_engine(void)
{
	while (!dma_done) {
		if (!dma_pending)
			continue;
		memcpy(dma_to, dma_from, dma_len);
		__sync_synchronize();
		dma_pending = 0;
	}
}

/* Measured warm: the last of a few rounds. */
static void calibrate(void)
{
	for (int round = 0; round < 4; round++) {
		struct meter x, y, z, c0 = fake.cost;
		meter_read(&x);
		(void)fake_read(NIC_BASE(NIC_RX) + NIC_IMS);
		meter_read(&y);
		meter_read(&z);
		window.instructions = z.instructions - y.instructions;
		window.cycles = z.cycles - y.cycles;
		overhead.instructions = y.instructions - x.instructions - (fake.cost.instructions - c0.instructions) - window.instructions;
		overhead.cycles = y.cycles - x.cycles - (fake.cost.cycles - c0.cycles) - window.cycles;
	}
}

static u32 make_frame(u32 f, u32 tag)
{
	u8 *e = frame + NET_IP_ALIGN;
	struct iphdr *ip = (struct iphdr *)(e + 14);
	struct udphdr *uh = (struct udphdr *)(ip + 1);
	memset(e, 2, 12);
	e[12] = 0x08, e[13] = 0x00;
	ip->ver_ihl = 0x45, ip->tos = 0, ip->tot_len = 28 + PAYLOAD, ip->id = (u16)tag, ip->frag_off = 0;
	ip->ttl = 64, ip->protocol = 17, ip->check = 0;
	ip->saddr = IP4(10, 0, f >> 8, f & 255), ip->daddr = IP4(10, 1, 0, 1);
	ip->check = (u16)~csum_add(ip, 20, 0);
	uh->source = (u16)(1024 + f), uh->dest = 5001, uh->len = 8 + PAYLOAD, uh->check = 0;
	return 14 + 28 + PAYLOAD;
}

static void print_tallies(const char *workload, const char *phase)
{
	static const char *const field[7] = {"calls", "instructions", "cycles", "l1i", "l1d", "l2", "accesses"};
	for (int a = 0; a < NACT; a++) {
		struct tally *t = &tally[a];
		u32 v[7] = {t->calls, t->m.instructions, t->m.cycles, t->m.l1i, t->m.l1d, t->m.l2, t->accesses};
		for (int k = 0; k < 7; k++) {
			put_str(workload);
			put_str(phase);
			put_str(act_name[a]);
			put_str(".");
			put_kv(field[k], (int)v[k]);
		}
	}
	memset(tally, 0, sizeof tally);
}

/* Evicts kernel_init's lines from the data caches and core 0's L2 (LRU):
   reads twice the largest cache the runs configure (1 MiB). */
static volatile u32 flood[(2u << 20) / 4];

static void flush_data(void)
{
	for (u32 i = 0; i < sizeof flood / 4; i += 16)
		(void)flood[i];
}

static void run(const char *workload, u32 forward)
{
	fake_reset();
	kernel_init();
	calibrate();
	flush_data();
	u32 tag = 1;
	for (u32 i = 0; i < WARMUP + MEASURED; i++, tag++) {
		if (i == WARMUP)
			print_tallies(workload, ".warm.");
		u32 len = make_frame(forward ? tag % NAT_FLOWS : 0, tag);
		u32 before = tally[NET_RX].m.cycles + tally[ISR_TX].m.cycles;
		fake_receive(frame + NET_IP_ALIGN, len, tag);
		MEASURE_CALL(ISR_RX, nic_isr(NIC_RX));
		while (fake.softirq_pending) {
			fake.softirq_pending = 0;
			MEASURE_CALL(NET_RX, net_rx_action());
		}
		if (forward) {
			fake_transmit(ubuf, &len);
			MEASURE_CALL(ISR_TX, nic_isr(NIC_FWD));
		} else {
			long n;
			MEASURE_CALL(RECV, n = sys_recv(0, ubuf, sizeof ubuf));
			if (n != PAYLOAD)
				sys_exit(1);
		}
		if (i >= WARMUP)
			frame_cycles[i - WARMUP] = tally[NET_RX].m.cycles + tally[ISR_TX].m.cycles - before;
	}
	print_tallies(workload, ".steady.");
	for (u32 i = 0; i < MEASURED; i++) {
		put_str("frame_cycles_");
		put_uint(i);
		put_kv("", (int)frame_cycles[i]);
	}
}

int main(void)
{
	u32 id = MMIO(REG_THREAD_ID);
	if (id == 0x100)
		dma_engine();
	if (id != 0)
		return 0;
	two_cores = MMIO(0x10) >> 8 >= 2;
	put_kv("dma_on_core_1", (int)two_cores);
	run(kconfig.forward ? "nat" : "netperf", kconfig.forward);
	dma_done = 1;
	return 0;
}
