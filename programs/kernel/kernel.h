/* A receive and forward path shaped like Linux 2.6's: NIC interrupt,
   NET_RX bottom half, IPv4 and UDP input, socket queues, recv, and a NAT
   forwarder with connection tracking. Shared types and the configuration.

   Sizes: each table has a compiled capacity (the *_MAX constants, which a
   build may override with -D) and a size in use, in `kconfig`, a block in
   memory that kernel_init reads, so a run can set it before kernel_init
   without recompiling.

   Objects have Linux 2.6.11's sizes and field offsets as built for the
   paper's machine (Alpha: LP64, 64-byte lines; the computation is in
   docs/models/smt-hot-thread.md, "Linux 2.6's footprint"): each field of
   ours sits at the offset of the 2.6 field it stands for (AT), so the path
   touches the lines 2.6's does. */
#ifndef KERNEL_H
#define KERNEL_H

#include "machine.h"

#ifndef RX_RING_MAX
#define RX_RING_MAX 256 /* e1000's default RxDescriptors */
#endif
#ifndef TX_RING_MAX
#define TX_RING_MAX 256
#endif
#ifndef POOL_MAX
#ifdef SKB_POOL
#define POOL_MAX 640 /* skbs, each with one BUF_SIZE buffer */
#else
#define POOL_MAX 1024 /* data objects the slab arena holds (skb.c, slab.c) */
#endif
#endif
#ifndef SOCK_QLEN_MAX
#define SOCK_QLEN_MAX 256
#endif
#ifndef CT_BUCKETS_MAX
#define CT_BUCKETS_MAX 512 /* ip_conntrack_htable_size with 128 MiB of memory */
#endif
#ifndef CT_ENTRIES_MAX
#define CT_ENTRIES_MAX 4096 /* ip_conntrack_max: 8 per bucket */
#endif
#define NSOCK 4          /* sockets */
#define UDP_HASH 128     /* UDP_HTABLE_SIZE */
#define RT_HASH 1024     /* route cache buckets (rt_hash_mask + 1) with 128 MiB */
#define RT_ENTRIES 512   /* route cache entries we provide room for */
#define NNETDEV 2        /* NIC 0 receives, NIC 1 forwards */
#define RX_BUFFER_LEN 2048 /* e1000's rx_buffer_len for a 1500 B MTU */
#define NET_SKB_PAD 16   /* dev_alloc_skb's headroom */
#define NET_IP_ALIGN 2   /* frame starts 2 B further, so the IP header is word aligned */
/* alloc_skb(2048 + 2 + 16): the data and skb_shared_info at its end,
   SKB_DATA_ALIGN(2066) = 2112 bytes in, from kmalloc's 4096-byte cache. */
#define SHINFO_OFF 2112
#define BUF_SIZE 4096
#define SKB_TRUESIZE (SHINFO_OFF + 264) /* skb->truesize: data + sizeof(struct sk_buff) */
#define HZ 1024          /* Alpha's (include/asm-alpha/param.h) */

/* A member at byte offset `off` of its object: the objects below are
   unions of these, so every member keeps the 2.6 offset given. */
#define AT(off, type, name) struct { u8 _at_##name[off]; type name; }
/* A read that the path makes for its own sake (2.6 reads the field; the
   value changes nothing here). */
#define TOUCH(x) ((void)*(volatile __typeof__(x) *)&(x))
#define IP4(a, b, c, d) ((u32)(a) << 24 | (u32)(b) << 16 | (u32)(c) << 8 | (u32)(d))
#define EAGAIN 11
#define EBADF 9

/* Settings, read by kernel_init. Ring, queue and bucket counts are powers
   of two no larger than the compiled capacity. */
struct kconfig {
	u32 rx_ring;     /* RX descriptors on NIC 0 */
	u32 tx_ring;     /* TX descriptors on NIC 1 */
	u32 pool;        /* skbs */
	u32 sock_qlen;   /* frames a socket queue holds */
	u32 ct_buckets;  /* conntrack hash buckets */
	u32 ct_entries;  /* conntrack entries (nf_conntrack_max) */
	u32 budget;      /* frames per net_rx_action (NAPI weight) */
	u32 local_ip;    /* this host's address: frames to it go to UDP */
	u32 forward;     /* 1: route other destinations through the NAT (ip_forward) */
	u32 nat_ip;      /* the NAT's public source address */
	u32 nat_port;    /* first source port the NAT hands out */
	u32 udp_port;    /* port socket 0 is bound to */
};
extern struct kconfig kconfig;

struct iphdr {
	u8 ver_ihl, tos;
	u16 tot_len, id, frag_off;
	u8 ttl, protocol;
	u16 check;
	u32 saddr, daddr;
};

struct udphdr {
	u16 source, dest, len, check;
};

struct sock;
struct conn;
struct rtable;
struct netdev;

/* A socket buffer, metadata apart from the data: struct sk_buff (264 B)
   in skbuff_head_cache, whose SLAB_HWCACHE_ALIGN makes it 320. */
struct skb {
	union {
		AT(0, struct skb *, next); /* next: also the free list link, for skb_alloc's ll/sc */
		AT(24, struct sock *, sk);
		AT(48, struct netdev *, dev);
		AT(56, struct netdev *, input_dev);
		AT(72, struct udphdr *, th);      /* h */
		AT(80, struct iphdr *, nh);
		AT(88, u8 *, mac);
		AT(96, struct rtable *, dst);
		AT(112, u32, tag);                /* cb[]: the machine's frame id */
		AT(152, u32, len);
		AT(170, u8, pkt_type);
		AT(176, u16, protocol);
		AT(184, u32, owned);              /* destructor: sock_rfree when a socket owns it */
		AT(208, struct conn *, nfct);
		AT(220, u32, truesize);
		AT(224, u32, users);
		AT(232, u8 *, head);              /* start of the BUF_SIZE buffer */
		AT(240, u8 *, data);              /* the Ethernet header */
		AT(248, u8 *, tail);
		AT(256, u8 *, end);
		u8 _obj[320];
	};
};
#define SKB_CLEARED 220 /* alloc_skb clears up to offsetof(struct sk_buff, truesize) */

/* The head of struct skb_shared_info (184 B) at the end of the data. */
struct shinfo {
	volatile u32 dataref, nr_frags;
	volatile u16 tso_size, tso_segs;
	u32 _pad;
	struct skb *volatile frag_list;
};
#define skb_shinfo(skb) ((struct shinfo *)((skb)->head + SHINFO_OFF))

/* A route cache entry: struct rtable (312 B) in ip_dst_cache,
   SLAB_HWCACHE_ALIGN: 320. `input` is 2.6's dst.input function. */
enum { RT_LOCAL = 1, RT_FORWARD = 2 };
struct rtable {
	union {
		AT(0, struct rtable *, next); /* u.rt_next */
		AT(8, volatile u32, refcnt);  /* u.dst.__refcnt */
		AT(12, u32, use);             /* u.dst.__use */
		AT(24, struct netdev *, dev);
		AT(40, u32, lastuse);
		AT(64, u32, mtu);             /* u.dst.metrics[RTAX_MTU - 1] */
		AT(136, u32, hh);             /* u.dst.hh */
		AT(152, u32, input);
		AT(160, u32, output);
		AT(200, u32, rt_flags);
		AT(228, u32, iif);            /* fl.iif */
		AT(232, u32, fl_dst);         /* fl.fl4_dst */
		AT(236, u32, fl_src);         /* fl.fl4_src */
		AT(244, u8, tos);             /* fl.fl4_tos */
		u8 _obj[320];
	};
};

/* A network device: struct net_device (872 B), which alloc_netdev aligns
   to NETDEV_ALIGN (32): 896, the fields the receive and transmit paths use. */
struct netdev {
	union {
		AT(48, u32, state);
		AT(80, u32, ifindex);
		AT(136, u32, last_rx);
		AT(144, u16, flags);
		AT(152, u32, mtu);
		AT(208, u32, dev_addr_hi);     /* dev_addr[0..3] */
		AT(212, u16, dev_addr_lo);     /* dev_addr[4..5] */
		AT(384, u32, poll_list);
		AT(400, u32, quota);
		AT(404, u32, weight);
		AT(408, u32, qdisc);
		AT(460, volatile u32, xmit_lock);
		AT(468, volatile u32, queue_lock);
		AT(568, u32, hard_start_xmit);
		u8 _obj[896];
	};
};
extern struct netdev netdevs[NNETDEV];
extern volatile u32 jiffies; /* advanced by thread 0's timer tick (code.ticks_per_s), if any */
#define TICK_THREADS 8
extern volatile u32 ticks[TICK_THREADS];

/* skb.c; slab.c (2.6.11's slab allocator) unless -DSKB_POOL, the stack of
   fixed skb and buffer pairs that kernel/measure-* keep. */
void skb_pool_init(void);
struct skb *skb_alloc(void);
void skb_free(struct skb *skb);
u32 skb_free_count(void);
struct skb *skb_head_alloc(void); /* kmem_cache_alloc(skbuff_head_cache) */
void skb_head_free(struct skb *skb);
u8 *kmalloc_data(void);           /* kmalloc(2296): size-4096 */
void kfree_data(u8 *p);
u32 slab_data_free(void);

/* nic.c */
void nic_init(void);
void nic_isr(u32 irq);
void net_rx_action(void);
int nic_xmit(struct skb *skb);
void drop(struct skb *skb);

/* ip.c */
void ip_rcv(struct skb *skb);
u16 csum_fold(u32 sum);
u32 csum_add(const void *p, u32 len, u32 sum);
void csum_replace2(u16 *check, u16 from, u16 to);
void csum_replace4(u16 *check, u32 from, u32 to);
u32 udp_sum(const struct iphdr *ip, const struct udphdr *uh);
u16 udp_csum(const struct iphdr *ip, const struct udphdr *uh);

/* socket.c */
void sock_init(void);
void sock_rfree(struct skb *skb);
u32 sock_rmem(u32 sock);
void udp_rcv(struct skb *skb);
long sys_recv(u32 sock, u8 *buf, u32 len);

/* route.c */
void route_init(void);
struct rtable *ip_route_input(struct skb *skb, u32 daddr, u32 saddr, u8 tos, u32 input);
void dst_release(struct rtable *rt);
u32 rt_count(void);
u32 rt_in_use(void);
u32 rt_refs(void);
void netdev_init(void);

/* nat.c: a connection, struct ip_conntrack (304 B; its slab cache is not
   line aligned). The reply tuple's destination is the NAT's address and
   port; our counters sit in the protocol union, which UDP leaves unused. */
struct conn {
	union {
		AT(0, volatile u32, use);       /* ct_general.use */
		AT(16, u32, status);
		AT(24, u32, timer_entry);       /* timeout.entry */
		AT(40, u32, expires);           /* timeout.expires */
		AT(112, u32, packets);          /* proto */
		AT(116, u32, bytes);
		AT(240, struct conn *, next);   /* tuplehash[ORIGINAL].list */
		AT(256, u32, saddr);            /* tuplehash[ORIGINAL].tuple */
		AT(260, u16, sport);
		AT(264, u32, daddr);
		AT(268, u16, dport);
		AT(270, u8, proto);
		AT(296, u32, nat_addr);         /* tuplehash[REPLY].tuple.dst */
		AT(300, u16, nat_port);
		u8 _obj[304];
	};
};
void ct_put(struct conn *c);
void ct_init(void);
struct conn *ct_find(u32 saddr, u32 daddr, u16 sport, u16 dport, u8 proto);
u32 ct_count(void);
void nat_forward(struct skb *skb);

/* init.c */
void kernel_init(void);

/* sched.c, only in the *-sched ELFs (-DCONFIG_SCHED): 2.6.11's scheduler
   on the reader's sleeps and wakes and on the tick. */
#ifdef CONFIG_SCHED
void sched_init(void);
void sched_sleep(void);
void sched_wake(void);
void sched_resume(void);
void scheduler_tick(u32 cpu);
#define SCHED(call) call
#else
#define SCHED(call) ((void)0)
#endif

#endif
