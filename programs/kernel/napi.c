/* The driver's NAPI entries, for the machine's NAPI part (irq_path.kind =
   "napi"; docs/models/cores.md, "NAPI with code"): a top half and a poll
   in place of nic_isr's NIC 0 branch and net_rx_action, following Linux
   5.x's contract (net/core/dev.c) as e1000e's interrupt handler and poll
   do. The poll does the same ring work as net_rx_action (nic_rx.h); the
   NAPI part decides when it runs (NET_RX, the NAPI thread or a
   busy-polling recv) and whether the interrupt comes back.

   NIC 0 has one receive ring, and the socket queues, the route cache
   and conntrack have one producer, the one bottom half (socket.c): polls
   of several queues or RPS backlogs on several CPUs would race there. So
   this driver serves one NAPI instance, queue 0, and no RPS backlog:
   `nic_napi_instances` says so, and the machine refuses rss.queues > 1
   and rss.rps_cpus with this kernel.

   Linked last, its text after the kernel's rodata and its data in a
   section of its own, so every address the other paths use stays put
   (programs/build.sh; docs/models/smt-hot-thread.md). */
#include "kernel.h"
#include "nic_rx.h"

#define NAPI_TEXT __attribute__((section(".napi.text")))

const u32 nic_napi_instances __attribute__((section(".napi.rodata"))) = 1;

/* The top half: e1000's single vector reads (and so clears) ICR; with a
   receive cause it masks it and asks for a poll (napi_schedule). */
NAPI_TEXT void nic_napi_isr(u32 queue)
{
	if (!(nic_read(NIC_RX, NIC_ICR) & ICR_RX))
		return;
	nic_write(NIC_RX, NIC_IMC, ICR_RX);
	ksvc(KSVC_NAPI_SCHEDULE, queue);
}

/* The poll: at most `budget` frames. Below the budget the ring is empty:
   napi_complete_done, and the receive cause enabled again only if it
   answers 1 (0 while the NAPI part defers the interrupt or a busy poller
   owns the instance). A poll that used its whole budget leaves the
   instance scheduled and the cause masked. */
NAPI_TEXT u32 nic_napi_poll(u32 queue, u32 budget)
{
	u32 done = rx_clean(&budget);
	if (done < budget) {
		ksvc(KSVC_NAPI_COMPLETE, done);
		if (reg_read(KSVC_BASE + KSVC_NAPI_COMPLETE))
			nic_write(NIC_RX, NIC_IMS, ICR_RX);
	}
	return done;
}
