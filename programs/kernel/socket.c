/* UDP sockets: demultiplexing by destination port (Linux 2.6's udp_rcv
   and its port hash), a bounded receive queue per socket, and recv.

   The queue has one producer (the NET_RX bottom half) and one consumer
   (sys_recv, on the application's thread), which may run on different
   hardware threads at once, so it is a single-producer single-consumer
   ring on free-running indices: no lock, hence no deadlock when a bottom
   half preempts a recv on the same thread. Blocking: sys_recv sets
   `waiting`, re-checks, and returns -EAGAIN; the producer publishes a
   frame, then reads `waiting` and writes WAKE. Each side stores, then
   loads the other's word (with a barrier), so one of them sees the other.
   `waiting` stays set until a recv succeeds, so every frame wakes the
   reader again: a WAKE that lands between sys_recv's -EAGAIN and the
   machine blocking the reader (the bottom half runs on another thread) is
   not the last. */
#include "kernel.h"

struct sock {
	struct sock *hash_next;
	u16 port, id;
	volatile u32 head, tail; /* frames queued: head - tail */
	volatile u32 waiting;
	u32 drops;
	struct skb *queue[SOCK_QLEN_MAX];
};

static struct sock socks[NSOCK];
static struct sock *udp_hash[UDP_HASH];
static u32 nsock;

static void sock_bind(u16 port)
{
	struct sock *s = &socks[nsock];
	s->id = (u16)nsock++;
	s->port = port;
	s->head = s->tail = s->waiting = s->drops = 0;
	s->hash_next = udp_hash[port & (UDP_HASH - 1)];
	udp_hash[port & (UDP_HASH - 1)] = s;
}

void sock_init(void)
{
	nsock = 0;
	for (u32 i = 0; i < UDP_HASH; i++)
		udp_hash[i] = 0;
	sock_bind((u16)kconfig.udp_port);
}

void udp_rcv(struct skb *skb)
{
	struct iphdr *ip = skb->nh;
	struct udphdr *uh = skb->th;
	u32 room = ip->tot_len - (u32)((u8 *)uh - (u8 *)ip);
	if (uh->len < 8 || uh->len > room || (uh->check && udp_sum(ip, uh) != 0xffff)) {
		drop(skb);
		return;
	}
	struct sock *s = udp_hash[uh->dest & (UDP_HASH - 1)];
	while (s && s->port != uh->dest)
		s = s->hash_next;
	if (!s || s->head - s->tail >= kconfig.sock_qlen) {
		if (s)
			s->drops++;
		drop(skb);
		return;
	}
	s->queue[s->head & (kconfig.sock_qlen - 1)] = skb;
	__sync_synchronize();
	s->head++;
	__sync_synchronize();
	if (s->waiting)
		ksvc(KSVC_WAKE, s->id);
}

/* copy_to_user: words when both ends are aligned (NET_IP_ALIGN makes the
   UDP payload so), as Linux's MIPS __copy_user, else bytes. */
static void copy_to_user(u8 *to, const u8 *from, u32 n)
{
	if ((((u32)to | (u32)from) & 3) == 0) {
		u32 *t = (u32 *)to;
		const u32 *f = (const u32 *)from;
		for (; n >= 16; n -= 16, t += 4, f += 4) {
			u32 a = f[0], b = f[1], c = f[2], d = f[3];
			t[0] = a, t[1] = b, t[2] = c, t[3] = d;
		}
		for (; n >= 4; n -= 4)
			*t++ = *f++;
		to = (u8 *)t, from = (const u8 *)f;
	}
	while (n--)
		*to++ = *from++;
}

long sys_recv(u32 sock, u8 *buf, u32 len)
{
	if (sock >= nsock)
		return -EBADF;
	struct sock *s = &socks[sock];
	if (s->head == s->tail) {
		s->waiting = 1;
		__sync_synchronize();
		if (s->head == s->tail)
			return -EAGAIN;
	}
	s->waiting = 0;
	struct skb *skb = s->queue[s->tail & (kconfig.sock_qlen - 1)];
	u32 n = skb->th->len - 8;
	if (n > len)
		n = len; /* the rest is discarded, as UDP's MSG_TRUNC */
	copy_to_user(buf, (const u8 *)(skb->th + 1), n);
	__sync_synchronize();
	s->tail++;
	ksvc(KSVC_DELIVERED, skb->tag);
	skb_free(skb);
	return (long)n;
}
