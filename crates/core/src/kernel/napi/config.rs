//! `[napi]`: the NAPI receive path's parameters (`irq_path.kind = "napi"`).
//! Defaults are Linux's: `NAPI_POLL_WEIGHT` 64 (include/linux/netdevice.h),
//! `netdev_budget` 300 and `netdev_budget_usecs` 2000 (net/core/dev.c at
//! HZ = 1000); docs/models/napi-coalescing.md cites each.

use crate::params::{Param, d};
use serde::{Deserialize, Serialize};

/// The NAPI path's keys are used only when it is chosen.
const NAPI: &[&str] = &["napi"];

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NapiConfig {
    pub weight: u32,
    pub budget: u32,
    pub budget_usecs: f64,
    pub poll_cycles: u64,
    pub complete_cycles: u64,
    pub rotting: bool,
    pub late_ack: bool,
    pub poll_within_budget: bool,
    pub gro_flush_timeout_ns: u64,
    pub defer_hard_irqs: u32,
    pub threaded: bool,
    pub thread_wakeup_cycles: u64,
    pub busy_poll_usecs: u32,
    pub busy_poll_budget: u32,
    pub prefer_busy_poll: bool,
}

impl NapiConfig {
    /// The section's keys.
    pub const PARAMS: &'static [Param] = &[
        Param::int("weight", "", d("64"), 1, 65_536, "frames one poll may take (the budget `napi_poll` passes the driver; NAPI_POLL_WEIGHT)").when("irq_path.kind", NAPI),
        Param::int("budget", "", d("300"), 1, 1 << 24, "frames one NET_RX softirq run may take over all its polls before it yields (net.core.netdev_budget)")
            .when("irq_path.kind", NAPI),
        Param::float("budget_usecs", "µs", d("2000.0"), true, 0.0, 1e6, "time one NET_RX softirq run may poll before it yields (net.core.netdev_budget_usecs)")
            .when("irq_path.kind", NAPI),
        Param::cycles("poll_cycles", d("200"), "one call of the driver's poll besides its frames: napi_poll, the ring check, the refill; with kernel code (whose polls are its own instructions), a busy loop's turn while NET_RX owns the instance").when("irq_path.kind", NAPI),
        Param::cycles("complete_cycles", d("150"), "napi_complete_done and the MMIO write that enables the NIC's interrupt again").when("irq_path.kind", NAPI),
        Param::flag(
            "rotting",
            d("false"),
            "the NIC does not interrupt for frames that arrived before its interrupt was enabled again: they wait for the next arrival (NAPI_HOWTO's \"rotting packet\"; counted in `napi_rotted`)",
        )
        .when("irq_path.kind", NAPI),
        Param::flag(
            "late_ack",
            d("false"),
            "the driver acknowledges the receive cause only at its poll's start (the 2002 e1000's ICR read): a frame that arrives after it leaves the cause set, so enabling the interrupt raises it even when the poll took that frame (NAPI_HOWTO's \"redundant irqs\"; counted in `napi_late_acks`)",
        )
        .when("irq_path.kind", NAPI),
        Param::flag(
            "poll_within_budget",
            d("false"),
            "each poll may take only what is left of the NET_RX run's budget, min(budget left, weight), and one that reaches it with frames waiting stays scheduled (Linux 2.4 and early 2.6: `dev->poll(dev, &budget)`, the 2002 e1000's `rx_work_limit`); false: each poll may take its whole weight and the run stops once the budget is spent (the `napi_struct` interface)",
        )
        .when("irq_path.kind", NAPI),
        Param::int(
            "gro_flush_timeout_ns",
            "ns",
            d("0"),
            0,
            1_000_000_000,
            "with `defer_hard_irqs`: a completing poll leaves the interrupt masked and polls again after this long (the netdev's gro_flush_timeout)",
        )
        .when("irq_path.kind", NAPI),
        Param::int(
            "defer_hard_irqs",
            "",
            d("0"),
            0,
            1 << 20,
            "empty polls, one per `gro_flush_timeout_ns`, before the interrupt is enabled again (the netdev's napi_defer_hard_irqs)",
        )
        .when("irq_path.kind", NAPI),
        Param::flag(
            "threaded",
            d("false"),
            "poll in a kernel thread per instance instead of the NET_RX softirq (the netdev's `threaded`): woken instead of raised, no netdev budget",
        )
        .when("irq_path.kind", NAPI),
        Param::cycles("thread_wakeup_cycles", d("3000"), "waking the NAPI thread and switching to it (wake_up_process, schedule, the context switch)")
            .when("napi.threaded", &["true"]),
        Param::int(
            "busy_poll_usecs",
            "µs",
            d("0"),
            0,
            1_000_000,
            "the receiving application (on `app.thread`) busy-polls the NIC from recv for up to this long before it sleeps (SO_BUSY_POLL, net.core.busy_read); with RSS, the instance of the queue its last frame came through; 0: off",
        )
        .when("irq_path.kind", NAPI),
        Param::int("busy_poll_budget", "", d("8"), 1, 65_536, "frames one busy poll takes before recv returns (BUSY_POLL_BUDGET)").when("irq_path.kind", NAPI),
        Param::flag(
            "prefer_busy_poll",
            d("false"),
            "SO_PREFER_BUSY_POLL: the interrupt stays masked between busy polls, the softirq taking over after `gro_flush_timeout_ns` without one (needs `busy_poll_usecs`, `defer_hard_irqs` and `gro_flush_timeout_ns`)",
        )
        .when("irq_path.kind", NAPI),
    ];
}
