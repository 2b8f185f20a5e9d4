/* IPv4 input (Linux 2.6's ip_rcv and ip_rcv_finish, reduced): Ethernet
   type, header sanity, header checksum, the route cache (route.c), then
   local delivery to UDP or, with forwarding on, the NAT. Also the Internet checksum (RFC 1071) and
   its incremental update (RFC 1624). The machine is big-endian, so header
   fields in network order are native integers. */
#include "kernel.h"

#define ETH_HLEN 14
#define ETH_P_IP 0x0800
#define IPPROTO_UDP 17
#define IP_MF 0x2000
#define IP_OFFSET 0x1fff

u16 csum_fold(u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16)sum;
}

/* Adds len bytes at p (16-bit aligned) to a ones'-complement sum. */
u32 csum_add(const void *p, u32 len, u32 sum)
{
	const u16 *w = p;
	for (; len > 1; len -= 2)
		sum += *w++;
	if (len)
		sum += (u32)*(const u8 *)w << 8;
	return csum_fold(sum);
}

/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'). */
void csum_replace2(u16 *check, u16 from, u16 to)
{
	u32 s = (u16)~*check + (u32)(u16)~from + to;
	*check = (u16)~csum_fold(s);
}

void csum_replace4(u16 *check, u32 from, u32 to)
{
	u32 s = (u16)~*check + (u32)(u16)~(from >> 16) + (u16)~from + (to >> 16) + (to & 0xffff);
	*check = (u16)~csum_fold(s);
}

/* The ones'-complement sum of UDP's pseudo-header, header and payload:
   0xffff when a received checksum is right. */
u32 udp_sum(const struct iphdr *ip, const struct udphdr *uh)
{
	return csum_add(uh, uh->len, csum_add(&ip->saddr, 8, IPPROTO_UDP + uh->len));
}

/* The checksum to send, computed with the check field zero (a result of 0
   goes out as 0xffff: 0 on the wire means "none"). */
u16 udp_csum(const struct iphdr *ip, const struct udphdr *uh)
{
	u16 c = (u16)~udp_sum(ip, uh);
	return c ? c : 0xffff;
}

void ip_rcv(struct skb *skb)
{
	u8 *eth = skb->data;
	struct iphdr *ip = (struct iphdr *)(eth + ETH_HLEN);
	u32 ihl = (ip->ver_ihl & 15) * 4;
	if (skb->len < ETH_HLEN + 20 || (eth[12] << 8 | eth[13]) != ETH_P_IP || ip->ver_ihl >> 4 != 4 || ihl < 20 ||
	    ip->tot_len < ihl || ip->tot_len > skb->len - ETH_HLEN || csum_add(ip, ihl, 0) != 0xffff ||
	    (ip->frag_off & (IP_MF | IP_OFFSET)) || ip->protocol != IPPROTO_UDP) {
		drop(skb);
		return;
	}
	skb->len = ETH_HLEN + ip->tot_len; /* trim Ethernet padding */
	skb->nh = ip;
	skb->th = (struct udphdr *)((u8 *)ip + ihl);
	u32 input = ip->daddr == kconfig.local_ip ? RT_LOCAL : kconfig.forward ? RT_FORWARD : 0;
	struct rtable *rt = input ? ip_route_input(skb, ip->daddr, ip->saddr, ip->tos, input) : 0;
	if (!rt)
		drop(skb);
	else if (rt->input == RT_LOCAL)
		udp_rcv(skb);
	else
		nat_forward(skb);
}
