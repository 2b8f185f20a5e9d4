/* A receive and forward path shaped like Linux 2.6's: NIC interrupt,
   NET_RX bottom half, IPv4 and UDP input, socket queues, recv, and a NAT
   forwarder with connection tracking. Shared types and the configuration.

   Sizes: each table has a compiled capacity (the *_MAX constants, which a
   build may override with -D) and a size in use, in `kconfig`, a block in
   memory that kernel_init reads, so a run can set it before kernel_init
   without recompiling. */
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
#define POOL_MAX 640 /* skbs, each with one BUF_SIZE buffer */
#endif
#ifndef SOCK_QLEN_MAX
#define SOCK_QLEN_MAX 256
#endif
#ifndef CT_BUCKETS_MAX
#define CT_BUCKETS_MAX 4096
#endif
#ifndef CT_ENTRIES_MAX
#define CT_ENTRIES_MAX 4096
#endif
#define NSOCK 4         /* sockets */
#define UDP_HASH 16     /* UDP port hash buckets (Linux 2.6: 128) */
#define BUF_SIZE 2048   /* receive buffer: e1000's rx_buffer_len for a 1500 B MTU */
#define NET_IP_ALIGN 2  /* frame starts 2 B in, so the IP header is word aligned */
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

/* A socket buffer: metadata apart from the data, as Linux's sk_buff. */
struct skb {
	struct skb *next; /* free list link: first, for pool_get's ll/sc */
	u8 *head;         /* start of the BUF_SIZE buffer */
	u8 *data;         /* the Ethernet header */
	u32 len;          /* frame bytes */
	u32 tag;          /* the machine's frame id */
	struct iphdr *nh;
	struct udphdr *th;
};

/* skb.c */
void skb_pool_init(void);
struct skb *skb_alloc(void);
void skb_free(struct skb *skb);
u32 skb_free_count(void);

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
void udp_rcv(struct skb *skb);
long sys_recv(u32 sock, u8 *buf, u32 len);

/* nat.c */
struct conn {
	struct conn *next;
	u32 saddr, daddr;
	u16 sport, dport;
	u32 nat_addr;
	u16 nat_port;
	u16 proto;
	u32 packets, bytes;
};
void ct_init(void);
struct conn *ct_find(u32 saddr, u32 daddr, u16 sport, u16 dport, u8 proto);
u32 ct_count(void);
void nat_forward(struct skb *skb);

/* init.c */
void kernel_init(void);

#endif
