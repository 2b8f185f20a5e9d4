/* The NAT forwarder (Linux 2.6's ip_forward with netfilter's conntrack and
   source NAT, reduced to UDP): look the flow's tuple up in the connection
   hash table, insert a connection with a fresh public port on its first
   frame, rewrite source address and port, decrement the TTL, update the
   IP and UDP checksums incrementally (RFC 1624), set the MACs of the next
   hop and transmit on NIC 1. Connections never expire (the runs are
   shorter than conntrack's UDP timeouts). Only the bottom half touches
   the table, so it takes no lock. */
#include "kernel.h"

static struct conn conns[CT_ENTRIES_MAX] __attribute__((aligned(64)));
/* The hash: list heads, 16 bytes each on a 64-bit kernel. */
static struct {
	struct conn *first;
	u32 _pad[3];
} ct_hash[CT_BUCKETS_MAX];
#define IPS_CONFIRMED 0x8
#define UDP_TIMEOUT (30 * HZ) /* ip_ct_udp_timeout */
static u32 nconn;

static const u8 next_hop_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x01, 0x01};
static const u8 nic1_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};

void ct_init(void)
{
	nconn = 0;
	for (u32 i = 0; i < kconfig.ct_buckets; i++)
		ct_hash[i].first = 0;
}

u32 ct_count(void) { return nconn; }

/* A multiplicative mix of the tuple (our own; Linux uses Jenkins' hash
   with a random seed). */
static u32 ct_bucket(u32 saddr, u32 daddr, u16 sport, u16 dport, u8 proto)
{
	u32 h = saddr * 0x9e3779b1u;
	h = (h ^ daddr) * 0x85ebca77u;
	h = (h ^ ((u32)sport << 16 | dport) ^ proto) * 0xc2b2ae3du;
	return (h ^ h >> 15) & (kconfig.ct_buckets - 1);
}

struct conn *ct_find(u32 saddr, u32 daddr, u16 sport, u16 dport, u8 proto)
{
	struct conn *c = ct_hash[ct_bucket(saddr, daddr, sport, dport, proto)].first;
	while (c && !(c->saddr == saddr && c->daddr == daddr && c->sport == sport && c->dport == dport && c->proto == proto))
		c = c->next;
	return c;
}

static struct conn *ct_insert(u32 saddr, u32 daddr, u16 sport, u16 dport, u8 proto)
{
	if (nconn >= kconfig.ct_entries)
		return 0; /* table full: Linux drops the frame too */
	struct conn *c = &conns[nconn];
	u32 b = ct_bucket(saddr, daddr, sport, dport, proto);
	c->saddr = saddr, c->daddr = daddr, c->sport = sport, c->dport = dport, c->proto = proto;
	c->nat_addr = kconfig.nat_ip;
	c->nat_port = (u16)(kconfig.nat_port + nconn);
	c->packets = c->bytes = 0;
	c->use = 1; /* the hash table's reference */
	c->status = IPS_CONFIRMED;
	c->next = ct_hash[b].first;
	ct_hash[b].first = c;
	nconn++;
	return c;
}

/* nf_conntrack_put: a frame's reference (the TX cleanup and the bottom
   half may run on different threads, so atomically). */
void ct_put(struct conn *c) { __sync_fetch_and_sub(&c->use, 1); }

/* ip_ct_refresh_acct on a confirmed connection: re-arm its timeout, which
   unlinks and relinks the timer (no timer wheel runs here: the entry is
   written, not moved). */
static void ct_refresh(struct conn *c)
{
	if (c->status & IPS_CONFIRMED) {
		c->timer_entry = 0;
		c->expires = jiffies + UDP_TIMEOUT;
	}
}

void nat_forward(struct skb *skb)
{
	struct iphdr *ip = skb->nh;
	struct udphdr *uh = skb->th;
	if (ip->ttl <= 1) {
		drop(skb); /* Linux also sends ICMP time exceeded */
		return;
	}
	struct conn *c = ct_find(ip->saddr, ip->daddr, uh->source, uh->dest, ip->protocol);
	if (!c)
		c = ct_insert(ip->saddr, ip->daddr, uh->source, uh->dest, ip->protocol);
	if (!c) {
		drop(skb);
		return;
	}
	__sync_fetch_and_add(&c->use, 1);
	skb->nfct = c;
	ct_refresh(c);
	c->packets++;
	c->bytes += ip->tot_len;

	u16 ttl_proto = (u16)(ip->ttl << 8 | ip->protocol);
	ip->ttl--;
	csum_replace2(&ip->check, ttl_proto, (u16)(ttl_proto - 0x100));
	csum_replace4(&ip->check, ip->saddr, c->nat_addr);
	if (uh->check) {
		csum_replace4(&uh->check, ip->saddr, c->nat_addr);
		csum_replace2(&uh->check, uh->source, c->nat_port);
		if (!uh->check)
			uh->check = 0xffff;
	}
	ip->saddr = c->nat_addr;
	uh->source = c->nat_port;

	u8 *eth = skb->data;
	for (int i = 0; i < 6; i++) {
		eth[i] = next_hop_mac[i];
		eth[6 + i] = nic1_mac[i];
	}
	/* ip_forward and ip_finish_output's reads of the route. */
	struct rtable *rt = skb->dst;
	if (skb->len - 14 > rt->mtu || rt->dev != &netdevs[NIC_FWD]) {
		drop(skb);
		return;
	}
	TOUCH(rt->hh);
	TOUCH(rt->output);
	if (nic_xmit(skb))
		drop(skb); /* TX ring full (no qdisc here) */
}
