/* The application: a netperf-style UDP receiver (UDP_STREAM's receive
   side), which loops on recv and counts messages and bytes. recv is the
   o32 system call 4003 (read) on socket 0; the machine blocks the caller
   while sys_recv says -EAGAIN, so every return here carries data. */
#include "kernel.h"

#define RECV_SIZE 1472 /* the largest UDP payload in a 1500 B MTU */

static u8 ubuf[RECV_SIZE] __attribute__((aligned(64)));
volatile u32 app_messages, app_bytes;

static long recv(u32 sock, u8 *buf, u32 len)
{
	register long v0 __asm__("$2") = 4003;
	register long a0 __asm__("$4") = (long)sock;
	register long a1 __asm__("$5") = (long)buf;
	register long a2 __asm__("$6") = (long)len;
	register long a3 __asm__("$7");
	__asm__ volatile("syscall"
			 : "+r"(v0), "=r"(a3)
			 : "r"(a0), "r"(a1), "r"(a2)
			 : "$1", "$3", "$8", "$9", "$10", "$11", "$12", "$13", "$14", "$15", "$24", "$25", "hi", "lo",
			   "memory");
	return a3 ? -v0 : v0;
}

void app_main(void)
{
	for (;;) {
		long n = recv(0, ubuf, sizeof ubuf);
		if (n > 0) {
			app_messages++;
			app_bytes += (u32)n;
		}
	}
}
