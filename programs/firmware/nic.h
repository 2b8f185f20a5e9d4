/* The programmable NIC's registers and memory as the firmware sees them
   (crates/firmware/src/nic.rs implements them; docs/models/nic-firmware.md
   lists them). Every core runs fw_main(); shared state is in ordinary
   memory, frames and descriptors are in the NIC's SRAM window. */
#ifndef NIC_H
#define NIC_H

#include "../rt/rt.h"

#define NIC(off) (*(volatile u32 *)(0xBF010000u + (off)))
#define SRAM(off) (*(volatile u32 *)(0xBF020000u + (off)))

/* Event flags: bit k is set while source k's count exceeds its ack. */
#define NIC_EVENTS 0x000
#define NIC_COUNT(k) (0x020 + 8 * (k))
#define NIC_ACK(k) (0x024 + 8 * (k))
#define SRC_DMA_RD 0   /* DMA read descriptors completed */
#define SRC_DMA_WR 1   /* DMA write descriptors completed */
#define SRC_MAC_RX 2   /* frames received into the rx slots */
#define SRC_MAC_TX 3   /* frames the MAC has put on the wire */
#define SRC_MB_SEND 4  /* send descriptors the host has posted (mailbox) */
#define SRC_MB_RECV 5  /* receive buffers the host has posted (mailbox) */
#define NSRC 6
#define SRC_TIMER 6    /* the timer expired (its count: expiries) */

/* DMA engines: write HOST, LOCAL, LEN, then GO enqueues one descriptor. */
#define DMA_RD 0x100
#define DMA_WR 0x200
#define DMA_HOST 0x0
#define DMA_LOCAL 0x4
#define DMA_LEN 0x8
#define DMA_GO 0xC

/* MAC transmit: LOCAL, LEN, then GO. Receive slot k's length and stamp
   are at SRAM RX_STATUS + 8k; the host-side model stamps each accepted
   frame with its arrival number. */
#define MAC_TX_LOCAL 0x300
#define MAC_TX_LEN 0x304
#define MAC_TX_GO 0x308
#define MAC_RX_FREE 0x30C  /* write: frames whose slots are free again */

#define HOST_IRQ 0x400     /* write: interrupt the host */
#define TIMER_ARM 0x404    /* write: the timer expires this many cycles on (0: disarm) */

/* Host memory (addresses the DMA engines understand). */
#define H_SEND_RING 0x10000000u
#define H_RECV_RING 0x11000000u
#define H_RET_RING 0x12000000u
#define H_STATUS 0x13000000u /* +0 send consumer, +4 receive producer */
#define H_RING 256           /* entries in each host ring */
/* Several return rings (-DFW_RSS): ring q at H_RET_RING + q * H_RET_STRIDE,
   its producer index at H_STATUS + H_QSTAT + 4q. */
#define H_RET_STRIDE (H_RING * 16)
#define H_QSTAT 0x10
#define MAX_RINGS 16

/* SRAM layout. */
#define RING 64             /* on-NIC descriptor and buffer rings */
#define S_SBD 0x0000        /* send descriptors: addr, len, seq, 0 */
#define S_RBD 0x0400        /* receive buffers: addr, len */
#define S_RET 0x0800        /* receive return descriptors: addr, len, seq, ring (0 but with -DFW_RSS) */
#define S_TXSTAT 0x0C00     /* staged send-consumer values */
#define S_RXSTAT 0x0D00     /* staged receive-producer values */
#define RX_STATUS 0x0E00    /* per rx slot: length, stamp */
#define RX_HASH 0x1000      /* per rx slot: the flow's RSS hash (the MAC's) */
#define S_QSTAT 0x2000      /* staged per-ring producer values (-DFW_RSS) */
#define S_TXBUF 0x10000     /* 64 x 2 KiB transmit buffers */
#define S_RXBUF 0x30000     /* 64 x 2 KiB receive buffers */
#define BUF 2048

#endif
