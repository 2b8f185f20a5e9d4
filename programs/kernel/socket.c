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

/* struct udp_sock (792 B) in its SLAB_HWCACHE_ALIGN cache: 832. The
   receive queue's head and tail stand in sk_receive_queue's next and prev;
   `waiting` is whether sk_sleep has a sleeper; the ring of queued skbs is
   ours (2.6 links them through skb->next, on the skb's first line). */
struct sock {
	union {
		AT(0, u16, id);                    /* skc_family's place */
		AT(8, struct sock *, hash_next);   /* skc_node */
		AT(96, u32, rcvbuf);               /* sk_rcvbuf */
		AT(104, volatile u32, waiting);    /* sk_sleep */
		AT(144, volatile u32, rmem_alloc); /* sk_rmem_alloc */
		AT(152, volatile u32, head);       /* sk_receive_queue */
		AT(160, volatile u32, tail);
		AT(376, u32, filter);              /* sk_filter */
		AT(560, u32, data_ready);          /* sk_data_ready */
		AT(604, u32, rcv_saddr);
		AT(610, u16, port);                /* num */
		u8 _obj[832];
	};
};

static struct sock socks[NSOCK] __attribute__((aligned(64)));
static struct skb *queues[NSOCK][SOCK_QLEN_MAX];
/* udp_hash: hlist heads, 8 bytes each. */
static struct {
	struct sock *first;
	u32 _pad;
} udp_hash[UDP_HASH];
static u32 udp_in_errors; /* UDP_MIB_INERRORS */
static u32 nsock;

static void sock_bind(u16 port)
{
	struct sock *s = &socks[nsock];
	s->id = (u16)nsock++;
	s->port = port;
	s->head = s->tail = s->waiting = s->rmem_alloc = 0;
	s->rcvbuf = (264 + 256) * 256; /* SK_RMEM_MAX; the limit here is sock_qlen frames */
	s->rcv_saddr = 0;  /* INADDR_ANY */
	s->hash_next = udp_hash[port & (UDP_HASH - 1)].first;
	udp_hash[port & (UDP_HASH - 1)].first = s;
}

void sock_init(void)
{
	nsock = 0;
	for (u32 i = 0; i < UDP_HASH; i++)
		udp_hash[i].first = 0;
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
	struct sock *s = udp_hash[uh->dest & (UDP_HASH - 1)].first;
	while (s && !(s->port == uh->dest && (!s->rcv_saddr || s->rcv_saddr == ip->daddr)))
		s = s->hash_next;
	/* sock_queue_rcv_skb reads the filter and the memory charged. */
	if (!s || s->filter || s->head - s->tail >= kconfig.sock_qlen) {
		udp_in_errors++;
		drop(skb);
		return;
	}
	TOUCH(s->rcvbuf);
	/* skb_set_owner_r: the socket owns it and is charged its truesize. */
	skb->sk = s;
	skb->owned = 1;
	__sync_fetch_and_add(&s->rmem_alloc, skb->truesize);
	queues[s->id][s->head & (kconfig.sock_qlen - 1)] = skb;
	__sync_synchronize();
	s->head++;
	__sync_synchronize();
	TOUCH(s->data_ready);
	SCHED(sched_wake());
	if (s->waiting)
		ksvc(KSVC_WAKE, s->id);
}

#ifdef FAKE_NIC
/* The bytes charged to a socket (for the test driver). */
u32 sock_rmem(u32 sock) { return socks[sock].rmem_alloc; }
#endif

/* sock_rfree, the destructor of an skb a socket owns. */
void sock_rfree(struct skb *skb) { __sync_fetch_and_sub(&skb->sk->rmem_alloc, skb->truesize); }

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
	SCHED(sched_resume());
	if (s->head == s->tail) {
		s->waiting = 1;
		__sync_synchronize();
		if (s->head == s->tail) {
			SCHED(sched_sleep());
			return -EAGAIN;
		}
	}
	s->waiting = 0;
	struct skb *skb = queues[sock][s->tail & (kconfig.sock_qlen - 1)];
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
