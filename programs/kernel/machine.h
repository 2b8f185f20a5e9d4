/* The machine's registers as the kernel sees them: NICs, descriptors and
   the kernel services, as fixed by the contract between this code and the
   machine (docs/models/smt-hot-thread.md, "The machine's registers").
   Big-endian 32-bit words in the uncached device window (kseg1).

   The -DFAKE_NIC test build routes every register access to fake_nic.c, a
   NIC and kernel-service model in ordinary memory, so the same sources run
   under qemu-mips and `irqsim exec`. */
#ifndef MACHINE_H
#define MACHINE_H

#include "../rt/rt.h"

/* NIC k's registers: NIC_BASE(k) + offset (nics.c places NICs 8 and up). */
#define NIC_BASE(k) (0xBF010000u + (u32)(k) * 0x100u)
#define NIC_ICR 0x00       /* R: pending causes, cleared by the read */
#define NIC_IMS 0x04       /* W: enable causes; R: enabled causes */
#define NIC_IMC 0x08       /* W: disable causes */
#define NIC_RDBA 0x10      /* RX ring base (16-byte aligned) */
#define NIC_RDLEN 0x14     /* RX ring length in descriptors (power of two) */
#define NIC_RDH 0x18       /* R: next descriptor the NIC fills */
#define NIC_RDT 0x1C       /* the NIC owns [RDH, RDT) */
#define NIC_TDBA 0x20      /* TX ring base */
#define NIC_TDLEN 0x24     /* TX ring length */
#define NIC_TDH 0x28       /* R: next descriptor the NIC sends */
#define NIC_TDT 0x2C       /* software queues [TDH, TDT) */
#define NIC_RX_MISSED 0x30 /* R: frames dropped for want of a descriptor */

/* Interrupt causes (ICR, IMS, IMC). */
#define ICR_RX 0x1u   /* frames written */
#define ICR_TXDW 0x2u /* a transmit descriptor is done */

/* NIC indices = IRQ numbers. */
#define NIC_RX 0  /* the receiving NIC */
#define NIC_FWD 1 /* the NAT's transmit side */
#define TICK_IRQ 2 /* nic_isr(TICK_IRQ + t): hardware thread t's timer tick (code.ticks_per_s) */

/* Kernel services. */
#define KSVC_BASE 0xBF01F000u
#define KSVC_SOFTIRQ_RAISE 0x00 /* W 0: post net_rx_action */
#define KSVC_WAKE 0x04          /* W socket id: wake its blocked reader */
#define KSVC_DELIVERED 0x08     /* W tag: the frame reached the application */
#define KSVC_DROPPED 0x0C       /* W tag: software dropped the frame */
#define KSVC_EOI 0x10           /* W irq: end of interrupt */
#define KSVC_IRQ_SAVE 0x14      /* W 0: local_irq_save (this thread's interrupts and tick wait) */
#define KSVC_IRQ_RESTORE 0x18   /* W 0: local_irq_restore */
#define KSVC_NAPI_SCHEDULE 0x1C /* W queue: napi_schedule (the NAPI path, napi.c) */
#define KSVC_NAPI_COMPLETE 0x20 /* W frames: napi_complete_done; R: 1 to enable the interrupt */
#define KSVC_RT_OVERFLOW 0x30   /* W tag: no route cache entry for the frame (it is then DROPPED) */
#define KSVC_NICS 0x34          /* R: the NICs the machine has (1 + [[nics.others]]; nics.c) */

#define SOFTIRQ_NET_RX 0

/* A descriptor, RX and TX alike (16 bytes). */
struct desc {
	u32 addr;  /* buffer address */
	u32 tag;   /* the machine's frame id */
	u16 len;   /* bytes */
	u16 rsvd0;
	u8 status; /* DESC_DD | DESC_EOP */
	u8 rsvd1[3];
};
#define DESC_DD 0x1u
#define DESC_EOP 0x2u

#ifdef FAKE_NIC
extern u32 fake_cpu; /* smp_processor_id() in the test build */
u32 fake_read(u32 addr);
void fake_write(u32 addr, u32 value);
#define reg_read(a) fake_read(a)
#define reg_write(a, v) fake_write((a), (v))
#else
static inline u32 reg_read(u32 a) { return *(volatile u32 *)a; }
static inline void reg_write(u32 a, u32 v) { *(volatile u32 *)a = v; }
#endif

#define nic_read(k, r) reg_read(NIC_BASE(k) + (r))
#define nic_write(k, r, v) reg_write(NIC_BASE(k) + (r), (v))
#define ksvc(r, v) reg_write(KSVC_BASE + (r), (v))

#endif
