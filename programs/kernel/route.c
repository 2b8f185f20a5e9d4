/* The route cache and the network devices (Linux 2.6's ip_route_input
   fast path in net/ipv4/route.c, and the struct net_device fields the
   receive and transmit paths read and write). Every frame looks its
   (destination, source, input device, TOS) up in a hash table of chains of
   struct rtable; a hit takes a reference and stamps the entry's use, as
   2.6's does. A miss stands for ip_route_input_slow, whose FIB lookup this
   kernel does not have: it fills a new entry from what the caller decided
   (local delivery or forwarding). When the RT_ENTRIES entries are all in
   use, a miss runs a forced garbage collection (2.6's rt_garbage_collect,
   which dst_alloc calls past gc_thresh): unreferenced entries unused for
   longer than a timeout are freed, the timeout halving until enough are;
   if every entry is referenced by a frame in flight, the allocation fails
   and the frame is dropped and counted (2.6's "dst cache overflow",
   ENOBUFS). Only the bottom half inserts and collects. */
#include "kernel.h"

/* struct rt_hash_bucket: the chain and its lock, aligned to 8: 16 bytes. */
struct rt_bucket {
	struct rtable *chain;
	u32 lock, _pad[2];
};

static struct rt_bucket rt_hash[RT_HASH];
static struct rtable rtables[RT_ENTRIES] __attribute__((aligned(64)));
static u32 nroutes; /* entries carved from rtables so far */

/* The collector's code and state lie after everything else (the code after
   the rodata, the state after the bss: kernel/napi.ld), so no address of
   the paths that run when the cache is not full moves (the SMT study's
   cache sets). */
#define LATE_TEXT __attribute__((section(".late.text"), noinline))
/* A freed entry has iif 0 (no device has ifindex 0); entries carved since
   route_init are filled, so neither position below needs resetting. */
static struct {
	u32 next;  /* the entry the next search for a freed one starts at */
	u32 rover; /* the bucket the next collection starts after */
} rt_gc __attribute__((section(".late.data"))) = {0, 0};
struct netdev netdevs[NNETDEV] __attribute__((aligned(64)));
volatile u32 jiffies;

void route_init(void)
{
	nroutes = 0;
	for (u32 i = 0; i < RT_HASH; i++)
		rt_hash[i].chain = 0;
}

void netdev_init(void)
{
	for (u32 i = 0; i < NNETDEV; i++) {
		struct netdev *d = &netdevs[i];
		d->ifindex = i + 2; /* 1 is the loopback */
		d->mtu = 1500;
		d->dev_addr_hi = 0x02000000u;
		d->dev_addr_lo = (u16)i;
		d->weight = kconfig.budget;
		d->quota = 0;
		d->xmit_lock = d->queue_lock = 0;
	}
}

/* Our own mix of the key (2.6's rt_hash_code is Jenkins' hash). */
static u32 rt_bucket_of(u32 daddr, u32 saddr, u32 iif, u8 tos)
{
	u32 h = (daddr * 0x9e3779b1u) ^ (saddr ^ iif << 5) * 0x85ebca77u ^ tos;
	return (h ^ h >> 16) & (RT_HASH - 1);
}

#define RT_GC_TIMEOUT (300 * HZ) /* net/ipv4/route.c */
#define RT_GC_GOAL (RT_ENTRIES / 8) /* ours: a sweep's cost spread over 64 misses */

/* rt_garbage_collect's forced pass: sweeps the buckets from the rover,
   unlinking unreferenced entries older than `tmo` (halved for each entry a
   chain keeps, so long chains shrink first), with the timeout halving
   after each sweep short of the goal; its last sweep (timeout 0) takes any
   unreferenced entry, where 2.6 would grow towards ip_rt_max_size, memory
   this kernel does not provide. Returns whether it freed any. */
LATE_TEXT static u32 rt_garbage_collect(void)
{
	u32 goal = RT_GC_GOAL, now = jiffies;
	for (u32 expire = RT_GC_TIMEOUT;; expire >>= 1) {
		for (u32 i = 0; i < RT_HASH && goal; i++) {
			rt_gc.rover = (rt_gc.rover + 1) & (RT_HASH - 1);
			struct rtable **p = &rt_hash[rt_gc.rover].chain, *rt;
			u32 tmo = expire;
			while ((rt = *p)) {
				if (rt->refcnt || now - rt->lastuse < tmo) {
					tmo >>= 1;
					p = &rt->next;
					continue;
				}
				*p = rt->next;
				rt->iif = 0;
				if (!--goal)
					break;
			}
		}
		if (!goal || !expire)
			return goal < RT_GC_GOAL;
	}
}

/* The next freed entry from rt_gc.next on, or null. */
LATE_TEXT static struct rtable *rt_freed(void)
{
	for (u32 i = 0; i < RT_ENTRIES; i++) {
		struct rtable *rt = &rtables[(rt_gc.next + i) % RT_ENTRIES];
		if (!rt->iif) {
			rt_gc.next = (u32)(rt - rtables) + 1;
			return rt;
		}
	}
	return 0;
}

/* ip_route_input's miss once every entry has been carved: dst_alloc from
   a full ip_dst_cache takes an entry the collector freed, and
   ip_route_input fills it as it fills a fresh one (it carves at nroutes);
   with every entry held, the frame's overflow is counted and it is
   dropped by the caller. */
LATE_TEXT static struct rtable *rt_cache_full(struct skb *skb, u32 daddr, u32 saddr, u8 tos, u32 input)
{
	struct rtable *rt = rt_freed();
	if (!rt && (!rt_garbage_collect() || !(rt = rt_freed()))) {
		ksvc(KSVC_RT_OVERFLOW, skb->tag);
		return 0;
	}
	nroutes = (u32)(rt - rtables);
	rt = ip_route_input(skb, daddr, saddr, tos, input);
	nroutes = RT_ENTRIES;
	return rt;
}

/* Sets skb->dst to the route of (daddr, saddr, tos) from skb->dev; null
   if every cache entry is held by a frame (counted). `input` (RT_LOCAL, RT_FORWARD) fills a new entry. */
struct rtable *ip_route_input(struct skb *skb, u32 daddr, u32 saddr, u8 tos, u32 input)
{
	u32 iif = skb->dev->ifindex;
	struct rt_bucket *b = &rt_hash[rt_bucket_of(daddr, saddr, iif, tos)];
	struct rtable *rt = b->chain;
	while (rt && !(rt->fl_dst == daddr && rt->fl_src == saddr && rt->iif == iif && rt->tos == tos))
		rt = rt->next;
	if (!rt) {
		if (nroutes >= RT_ENTRIES)
			return rt_cache_full(skb, daddr, saddr, tos, input);
		rt = &rtables[nroutes++];
		rt->fl_dst = daddr, rt->fl_src = saddr, rt->iif = iif, rt->tos = tos;
		rt->input = input;
		rt->output = input;
		rt->dev = &netdevs[input == RT_FORWARD ? NIC_FWD : NIC_RX];
		rt->mtu = 1500;
		rt->refcnt = 0;
		rt->next = b->chain;
		b->chain = rt;
	}
	rt->lastuse = jiffies;
	__sync_fetch_and_add(&rt->refcnt, 1);
	rt->use++;
	skb->dst = rt;
	return rt;
}

#ifdef FAKE_NIC
/* For the test driver: the entries carved, those of them in the cache (not
   freed by the collector), and the references frames still hold. */
u32 rt_count(void) { return nroutes; }

LATE_TEXT u32 rt_in_use(void)
{
	u32 n = 0;
	for (u32 i = 0; i < nroutes; i++)
		n += rtables[i].iif != 0;
	return n;
}

u32 rt_refs(void)
{
	u32 n = 0;
	for (u32 i = 0; i < nroutes; i++)
		n += rtables[i].refcnt;
	return n;
}
#endif

/* dst_release: the reference a frame held (sys_recv on the application's
   thread and the bottom half both drop them, so atomically). */
void dst_release(struct rtable *rt) { __sync_fetch_and_sub(&rt->refcnt, 1); }
