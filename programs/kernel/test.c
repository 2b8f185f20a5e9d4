/* The kernel's test driver (the kernel_test program): crafted frames go
   through the fake NIC's ring and the driver calls nic_isr, net_rx_action
   and sys_recv directly, as the machine would. Each phase prints its
   counts; any failed check prints FAIL and makes the exit status 1.
   Same output under qemu-mips and `irqsim exec` (tests/test_smt_hot_thread_kernel.py). */
#include "fake_nic.h"

static int failed;
static u8 frame[1600] __attribute__((aligned(4)));
static u8 ubuf[2048] __attribute__((aligned(4)));
static u32 rng = 12345;

static u32 rand32(void)
{
	rng = rng * 1103515245u + 12345u;
	return rng >> 8 ^ rng << 16;
}

static void check(int ok, const char *what)
{
	if (!ok) {
		put_str("FAIL ");
		put_str(what);
		put_str("\n");
		failed = 1;
	}
}

static u32 payload_byte(u32 tag, u32 i) { return (tag * 31 + i * 7) & 0xff; }

/* The contract's frame of flow f, `payload` bytes after the UDP header
   (frame starts 2 bytes in, as the kernel's buffers do). */
static u32 make_frame(u32 f, u32 payload, u32 tag, int udp_check)
{
	u8 *e = frame + NET_IP_ALIGN;
	struct iphdr *ip = (struct iphdr *)(e + 14);
	struct udphdr *uh = (struct udphdr *)(ip + 1);
	for (int i = 0; i < 12; i++)
		e[i] = (u8)(i < 6 ? 0x02 : 0x04 + i);
	e[12] = 0x08, e[13] = 0x00;
	ip->ver_ihl = 0x45, ip->tos = 0, ip->tot_len = (u16)(28 + payload), ip->id = (u16)tag, ip->frag_off = 0;
	ip->ttl = 64, ip->protocol = 17, ip->check = 0;
	ip->saddr = IP4(10, 0, f >> 8, f & 255), ip->daddr = IP4(10, 1, 0, 1);
	ip->check = (u16)~csum_add(ip, 20, 0);
	uh->source = (u16)(1024 + f), uh->dest = 5001, uh->len = (u16)(8 + payload), uh->check = 0;
	for (u32 i = 0; i < payload; i++)
		((u8 *)(uh + 1))[i] = (u8)payload_byte(tag, i);
	if (udp_check)
		uh->check = udp_csum(ip, uh);
	return 14 + 28 + payload;
}

static struct iphdr *frame_ip(void) { return (struct iphdr *)(frame + NET_IP_ALIGN + 14); }

/* After editing a header field: a valid header checksum again. */
static void refresh(void)
{
	frame_ip()->check = 0;
	frame_ip()->check = (u16)~csum_add(frame_ip(), 20, 0);
}

static int receive(u32 len, u32 tag) { return fake_receive(frame + NET_IP_ALIGN, len, tag); }

/* What the machine does between frames: interrupts, then the softirq until
   it stops re-raising itself. Returns net_rx_action's runs. */
static u32 service(void)
{
	u32 runs = 0;
	for (u32 k = 0; k < 2; k++)
		if (fake_irq(k))
			nic_isr(k);
	while (fake.softirq_pending) {
		fake.softirq_pending = 0;
		net_rx_action();
		runs++;
	}
	return runs;
}

static int payload_ok(long n, u32 tag)
{
	for (long i = 0; i < n; i++)
		if (ubuf[i] != payload_byte(tag, (u32)i))
			return 0;
	return 1;
}

static void boot(u32 ring, u32 pool, u32 qlen, u32 forward)
{
	fake_reset();
	kconfig.rx_ring = ring, kconfig.pool = pool, kconfig.sock_qlen = qlen, kconfig.forward = forward;
	kconfig.tx_ring = 8, kconfig.ct_buckets = 4, kconfig.ct_entries = 6, kconfig.budget = 64;
	kconfig.local_ip = forward ? IP4(10, 1, 0, 254) : IP4(10, 1, 0, 1);
	kernel_init();
}

static void phase_receive(void)
{
	static const u32 sizes[3] = {100, 1472, 18};
	boot(8, 32, 4, 0);
	for (u32 t = 1; t <= 3; t++)
		receive(make_frame(t, sizes[t - 1], t, t == 2), t);
	u32 runs = service();
	for (u32 t = 1; t <= 3; t++) {
		long n = sys_recv(0, ubuf, sizeof ubuf);
		check(n == (long)sizes[t - 1] && payload_ok(n, t) && fake.last_delivered == t, "receive: payload and tag");
	}
	long n = sys_recv(0, ubuf, 64);
	check(n == -EAGAIN, "receive: empty queue gives -EAGAIN");
	receive(make_frame(4, 200, 4, 0), 4);
	service();
	check(fake.wakes == 1, "receive: a frame wakes the blocked reader");
	check(sys_recv(0, ubuf, 64) == 64 && payload_ok(64, 4), "receive: short buffer truncates");
	check(sys_recv(7, ubuf, 64) == -EBADF, "receive: bad socket");
	check(fake.eoi == 2 && nic_read(NIC_RX, NIC_IMS) == ICR_RX, "receive: EOI per interrupt, unmasked when drained");
	/* __kfree_skb's undoing: the socket's charge and the routes' references
	   return to zero; one route cache entry per source. */
	check(sock_rmem(0) == 0 && rt_refs() == 0 && rt_count() == 4, "receive: frees release the socket's memory and the routes");
	put_kv("receive.delivered", (int)fake.delivered);
	put_kv("receive.net_rx_runs", (int)runs);
	put_kv("receive.wakes", (int)fake.wakes);
}

static void phase_bad_frames(void)
{
	boot(16, 32, 4, 0);
	u32 len, tag = 1;
	len = make_frame(1, 64, tag, 0), frame_ip()->check ^= 1, receive(len, tag++);
	len = make_frame(1, 64, tag, 0), frame_ip()->ver_ihl = 0x65, receive(len, tag++);
	len = make_frame(1, 64, tag, 0), frame_ip()->protocol = 6, refresh(), receive(len, tag++);
	len = make_frame(1, 64, tag, 0), frame_ip()->frag_off = 0x2000, refresh(), receive(len, tag++);
	len = make_frame(1, 64, tag, 0), receive(len - 10, tag++); /* tot_len beyond the frame */
	len = make_frame(1, 64, tag, 1), frame[len - 1] ^= 0x40, receive(len, tag++); /* UDP checksum */
	len = make_frame(1, 64, tag, 0), ((struct udphdr *)(frame_ip() + 1))->dest = 9, receive(len, tag++);
	len = make_frame(1, 64, tag, 1), receive(len, tag++); /* good, with a UDP checksum */
	service();
	check(fake.dropped == 7 && sys_recv(0, ubuf, sizeof ubuf) == 64 && fake.last_delivered == 8, "bad frames: 7 dropped, the good one delivered");
	put_kv("bad.dropped", (int)fake.dropped);
	put_kv("bad.delivered", (int)fake.delivered);
}

/* 8 descriptors, the NIC owns 7: 40 frames in bursts of 1..4 wrap the ring
   five times; then a burst of 10 overflows it and a full socket queue drops. */
static void phase_ring(void)
{
	boot(8, 32, 4, 0);
	u32 tag = 1, in = 0, got = 0, order_ok = 1, burst = 1;
	while (in < 40) {
		for (u32 i = 0; i < burst && in < 40; i++, in++, tag++)
			receive(make_frame(tag, 32, tag, 0), tag);
		service();
		while (sys_recv(0, ubuf, sizeof ubuf) == 32)
			order_ok &= fake.last_delivered == ++got && payload_ok(32, got);
		burst = burst % 4 + 1;
	}
	check(got == 40 && order_ok && fake.dropped == 0, "ring: 40 frames in order through a wrapping ring");
	put_kv("ring.rdh", (int)nic_read(NIC_RX, NIC_RDH));
	put_kv("ring.rdt", (int)nic_read(NIC_RX, NIC_RDT));
	for (u32 i = 0; i < 10; i++, tag++)
		receive(make_frame(tag, 32, tag, 0), tag);
	service();
	u32 missed = nic_read(NIC_RX, NIC_RX_MISSED), queued = 0;
	while (sys_recv(0, ubuf, sizeof ubuf) > 0)
		queued++;
	check(missed == 3 && fake.dropped == 3 && queued == 4, "ring: overflow missed 3, full socket queue dropped 3");
	check(fake.delivered + fake.dropped + missed == tag - 1, "ring: frames conserved");
	put_kv("ring.missed", (int)missed);
	put_kv("ring.sock_dropped", (int)fake.dropped);
	put_kv("ring.free_skbs", (int)skb_free_count());
}

static void phase_budget_and_pool(void)
{
	boot(8, 32, 8, 0);
	kconfig.budget = 3;
	for (u32 t = 1; t <= 7; t++)
		receive(make_frame(t, 40, t, 0), t);
	u32 runs = service();
	u32 got = 0;
	while (sys_recv(0, ubuf, sizeof ubuf) > 0)
		got++;
	check(runs == 3 && got == 7, "budget: 7 frames at 3 per run take 3 runs");
	put_kv("budget.net_rx_runs", (int)runs);
	boot(8, 8, 4, 0); /* every skb sits in the ring: none to re-arm with */
	receive(make_frame(1, 40, 1, 0), 1);
	service();
	check(fake.dropped == 1 && fake.last_dropped == 1 && sys_recv(0, ubuf, 64) == -EAGAIN, "pool: empty pool drops at the ring");
	check(skb_free_count() == 0 && nic_read(NIC_RX, NIC_RDT) == 0, "pool: the buffer is re-armed");
	put_kv("pool.dropped", (int)fake.dropped);
}

/* The slab (2.6.11's allocator): frames received on CPU 1 and read on CPU 0,
   as with the hot thread, so heads and data pass between the CPUs' arrays
   through the shared ones; bursts of 200 overfill CPU 0's array and the
   shared array, so slabs are freed back and destroyed. Every frame arrives
   in order and every object comes back. */
static void phase_slab(void)
{
	boot(8, 256, 256, 0);
	u32 tag = 1, got = 0, order_ok = 1;
	for (u32 round = 0; round < 3; round++) {
		fake_cpu = 1;
		for (u32 i = 0; i < 200; i++, tag++) {
			receive(make_frame(1, 48, tag, 0), tag);
			if (i % 7 == 6)
				service();
		}
		service();
		fake_cpu = 0;
		while (sys_recv(0, ubuf, sizeof ubuf) == 48)
			order_ok &= fake.last_delivered == ++got && payload_ok(48, got);
	}
	check(got == 600 && order_ok && fake.dropped == 0, "slab: 600 frames across the CPUs, in order");
	check(skb_free_count() == 256 - 8 && fake_irq_depth == 0, "slab: every object back, every irq section closed");
	put_kv("slab.delivered", (int)got);
	put_kv("slab.free_skbs", (int)skb_free_count());
	/* Drain on CPU 1: all but the 24 data objects CPU 0's array keeps (2.6
	   hands those back only when cache_reap drains it), each head and data
	   object once (a stamp in each survives the others'), then refused;
	   all freed on CPU 0. */
	static struct skb *all[256];
	u32 n = 0, distinct = 1;
	fake_cpu = 1;
	while (n < 256 && (all[n] = skb_alloc()) != 0)
		all[n]->tag = n, *(u32 *)all[n]->head = n, n++;
	for (u32 i = 0; i < n; i++)
		distinct &= all[i]->tag == i && *(u32 *)all[i]->head == i;
	fake_cpu = 0;
	for (u32 i = 0; i < n; i++)
		skb_free(all[i]);
	check(n == 248 - 24 && distinct && skb_free_count() == 248, "slab: every object allocated once, then back");
	put_kv("slab.drained", (int)n);
}

/* Forwarding: flows 0..5 twice through the NAT; each frame out of NIC 1
   must carry the NAT's address and port, TTL 63, and checksums equal to a
   full recomputation. */
static void phase_nat(void)
{
	boot(8, 32, 4, 1);
	u32 tag = 1, sent = 0, ok = 1;
	u32 base = skb_free_count();
	for (u32 round = 0; round < 2; round++)
		for (u32 f = 0; f < 6; f++, tag++) {
			receive(make_frame(f * 37, 100 + f, tag, f & 1), tag);
			service();
			u32 len, t = fake_transmit(ubuf, &len);
			service(); /* TX done: nic_isr(1) frees the skb */
			struct iphdr *ip = (struct iphdr *)(ubuf + 14);
			struct udphdr *uh = (struct udphdr *)(ip + 1);
			u16 sent_check = uh->check;
			ok &= t == tag && len == 14 + 28 + 100 + f && ip->saddr == IP4(192, 0, 2, 1) && ip->ttl == 63;
			ok &= uh->source == 20000 + f && csum_add(ip, 20, 0) == 0xffff;
			uh->check = 0;
			ok &= sent_check == ((f & 1) ? udp_csum(ip, uh) : 0);
			sent++;
		}
	check(ok && sent == 12 && fake.sent == 12 && ct_count() == 6, "nat: 12 frames rewritten, 6 connections");
	struct conn *c = ct_find(IP4(10, 0, 0, 37), IP4(10, 1, 0, 1), 1024 + 37, 5001, 17);
	check(c && c->packets == 2 && c->nat_port == 20001, "nat: lookup finds the connection");
	receive(make_frame(999, 40, tag, 0), tag), tag++;
	u32 len = make_frame(37, 40, tag, 0);
	frame_ip()->ttl = 1, refresh(), receive(len, tag++);
	receive(make_frame(37, 40, tag, 0), tag), tag++;
	service();
	check(fake.dropped == 2 && fake.last_dropped == tag - 2 && ct_count() == 6, "nat: a full table and TTL 1 drop");
	check(((fake.nic[NIC_FWD].tdt - fake.nic[NIC_FWD].tdh) & 7) == 1, "nat: the known flow is queued");
	fake_transmit(ubuf, &len);
	service();
	check(skb_free_count() == base, "nat: TX cleanup returns every skb");
	/* Only the hash table's reference is left on a connection, none on a
	   route; 7 sources were routed (the 7th's frame met a full table). */
	check(c->use == 1 && rt_refs() == 0 && rt_count() == 7, "nat: frees release the connections and the routes");
	put_kv("nat.sent", (int)fake.sent);
	put_kv("nat.connections", (int)ct_count());
	put_kv("nat.dropped", (int)fake.dropped);
}

/* The route cache with more sources than entries: the collector frees
   unreferenced entries, so every frame is delivered; with every entry held
   by a frame, a new source's frame is dropped and counted, not lost. */
static void phase_route_gc(void)
{
	boot(8, 32, 4, 0);
	u32 n = RT_ENTRIES + RT_ENTRIES / 2, ok = 1;
	for (u32 f = 0; f < n; f++) {
		receive(make_frame(f, 20, f + 1, 0), f + 1);
		service();
		ok &= sys_recv(0, ubuf, sizeof ubuf) == 20 && fake.last_delivered == f + 1;
	}
	check(ok && fake.delivered == n && fake.dropped == 0 && fake.rt_overflow == 0, "route: more sources than entries, all delivered");
	check(rt_count() == RT_ENTRIES && rt_in_use() <= RT_ENTRIES && rt_refs() == 0, "route: the collector keeps the cache within its entries");
	put_kv("route.sources", (int)n);
	put_kv("route.entries", (int)rt_in_use());
	/* References taken as frames in flight would hold them. */
	static struct rtable *held[RT_ENTRIES];
	static struct skb skb;
	skb.dev = &netdevs[NIC_RX];
	for (u32 i = 0; i < RT_ENTRIES; i++)
		ok &= (held[i] = ip_route_input(&skb, IP4(10, 1, 0, 1), IP4(10, 2, i >> 8, i & 255), 0, RT_LOCAL)) != 0;
	check(ok && rt_in_use() == RT_ENTRIES, "route: every entry held");
	receive(make_frame(n, 20, n + 1, 0), n + 1);
	service();
	check(fake.dropped == 1 && fake.last_dropped == n + 1 && fake.rt_overflow == 1, "route: a full cache drops the frame and counts it");
	for (u32 i = 0; i < RT_ENTRIES; i++)
		dst_release(held[i]);
	receive(make_frame(n, 20, n + 2, 0), n + 2);
	service();
	check(sys_recv(0, ubuf, sizeof ubuf) == 20 && fake.last_delivered == n + 2, "route: released entries are collected again");
	put_kv("route.overflows", (int)fake.rt_overflow);
}

/* RFC 1624 incremental updates against full recomputation, on random
   headers: source address, TTL and, for UDP, address and port. */
static void phase_checksums(void)
{
	u32 mismatches = 0, n = 5000;
	for (u32 i = 0; i < n; i++) {
		make_frame(rand32() & 0xffff, rand32() % 64, rand32(), 1);
		struct iphdr *ip = frame_ip();
		struct udphdr *uh = (struct udphdr *)(ip + 1);
		ip->id = (u16)rand32(), ip->ttl = (u8)(rand32() | 2), ip->check = 0, ip->check = (u16)~csum_add(ip, 20, 0);
		uh->check = 0, uh->check = udp_csum(ip, uh);
		u32 to = rand32();
		u16 port = (u16)rand32(), ttl_proto = (u16)(ip->ttl << 8 | ip->protocol);
		u16 ipc = ip->check, udpc = uh->check;
		csum_replace2(&ipc, ttl_proto, (u16)(ttl_proto - 0x100));
		csum_replace4(&ipc, ip->saddr, to);
		csum_replace4(&udpc, ip->saddr, to);
		csum_replace2(&udpc, uh->source, port);
		if (!udpc)
			udpc = 0xffff;
		ip->ttl--, ip->saddr = to, uh->source = port;
		ip->check = 0, uh->check = 0;
		mismatches += ipc != (u16)~csum_add(ip, 20, 0);
		mismatches += udpc != udp_csum(ip, uh);
	}
	check(mismatches == 0, "checksums: incremental equals full");
	put_kv("checksums.cases", (int)n);
	put_kv("checksums.mismatches", (int)mismatches);
}

int main(void)
{
	phase_receive();
	phase_bad_frames();
	phase_ring();
	phase_budget_and_pool();
	phase_slab();
	phase_nat();
	phase_route_gc();
	phase_checksums();
	put_str(failed ? "kernel_test: FAILED\n" : "kernel_test: ok\n");
	return failed;
}
