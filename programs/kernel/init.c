/* Boot: the settings block and kernel_init, which the machine runs once on
   thread 0 before anything else. */
#include "kernel.h"

#ifndef CONFIG_FORWARD
#define CONFIG_FORWARD 0
#endif

/* The defaults. A host (CONFIG_FORWARD 0) is 10.1.0.1, the workload's
   destination; a NAT box (1) is 10.1.0.254 and forwards it. */
struct kconfig kconfig = {
	.rx_ring = RX_RING_MAX,
	.tx_ring = TX_RING_MAX,
	.pool = POOL_MAX,
	.sock_qlen = 64,
	.ct_buckets = CT_BUCKETS_MAX,
	.ct_entries = CT_ENTRIES_MAX,
	.budget = 64, /* NAPI_POLL_WEIGHT */
	.local_ip = CONFIG_FORWARD ? IP4(10, 1, 0, 254) : IP4(10, 1, 0, 1),
	.forward = CONFIG_FORWARD,
	.nat_ip = IP4(192, 0, 2, 1),
	.nat_port = 20000,
	.udp_port = 5001,
};

static int pow2_upto(u32 v, u32 max) { return v && !(v & (v - 1)) && v <= max; }

/* A bad setting stops the machine at `break N`, N the setting's place
   (1-based) in struct kconfig: the machine's error names the instruction
   and kernel_init. The test build prints it and exits. */
#ifdef FAKE_NIC
#define kernel_panic(n) (put_kv("kernel_panic", n), sys_exit(70))
#else
#define kernel_panic(n) __asm__ volatile("break 0, " #n)
#endif

void kernel_init(void)
{
	struct kconfig *k = &kconfig;
	if (!pow2_upto(k->rx_ring, RX_RING_MAX) || k->rx_ring < 2)
		kernel_panic(1);
	if (!pow2_upto(k->tx_ring, TX_RING_MAX) || k->tx_ring < 2)
		kernel_panic(2);
	if (k->pool < k->rx_ring || k->pool > POOL_MAX)
		kernel_panic(3);
	if (!pow2_upto(k->sock_qlen, SOCK_QLEN_MAX))
		kernel_panic(4);
	if (!pow2_upto(k->ct_buckets, CT_BUCKETS_MAX))
		kernel_panic(5);
	if (k->ct_entries > CT_ENTRIES_MAX)
		kernel_panic(6);
	if (!k->budget)
		kernel_panic(7);
	skb_pool_init();
	netdev_init();
	route_init();
	sock_init();
	ct_init();
	nic_init();
	SCHED(sched_init());
}
