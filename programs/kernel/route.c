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
static u32 nroutes;        /* entries carved from rtables so far */
static struct rtable *rt_free; /* entries the collector freed, by `next` */
static u32 rt_rover;       /* the bucket the next collection starts after */
struct netdev netdevs[NNETDEV] __attribute__((aligned(64)));
volatile u32 jiffies;

void route_init(void)
{
	nroutes = 0;
	rt_free = 0;
	rt_rover = 0;
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
   this kernel does not provide. Returns a free entry, or null if every
   entry is held by a frame. */
static struct rtable *rt_garbage_collect(void)
{
	u32 goal = RT_GC_GOAL, now = jiffies;
	for (u32 expire = RT_GC_TIMEOUT;; expire >>= 1) {
		for (u32 i = 0; i < RT_HASH && goal; i++) {
			rt_rover = (rt_rover + 1) & (RT_HASH - 1);
			struct rtable **p = &rt_hash[rt_rover].chain, *rt;
			u32 tmo = expire;
			while ((rt = *p)) {
				if (rt->refcnt || now - rt->lastuse < tmo) {
					tmo >>= 1;
					p = &rt->next;
					continue;
				}
				*p = rt->next;
				rt->next = rt_free;
				rt_free = rt;
				if (!--goal)
					break;
			}
		}
		if (!goal || !expire)
			break;
	}
	return rt_free;
}

/* dst_alloc from ip_dst_cache: a fresh entry, a freed one, or one the
   collector frees; null (and counted) when all are held. */
static struct rtable *rt_alloc(u32 tag)
{
	if (nroutes < RT_ENTRIES)
		return &rtables[nroutes++];
	struct rtable *rt = rt_free ? rt_free : rt_garbage_collect();
	if (!rt) {
		ksvc(KSVC_RT_OVERFLOW, tag);
		return 0;
	}
	rt_free = rt->next;
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
		if (!(rt = rt_alloc(skb->tag)))
			return 0;
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
/* For the test driver: the entries in the cache, and the references
   frames still hold. */
u32 rt_count(void)
{
	u32 n = nroutes;
	for (struct rtable *rt = rt_free; rt; rt = rt->next)
		n--;
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
