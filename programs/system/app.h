/* The receiving application of the system programs run as kernel code
   (rx_min.c, fw_rx.c): a loop of recv() system calls (read, 4003) into a
   buffer of BUF bytes, counting the bytes. Included where each program had
   it, so its code and addresses stay where they were. */
#ifndef APP_H
#define APP_H

static long recv(u32 sock, u8 *buf, u32 len)
{
	register long v0 __asm__("$2") = 4003;
	register long a0 __asm__("$4") = sock;
	register long a1 __asm__("$5") = (long)buf;
	register long a2 __asm__("$6") = len;
	register long a3 __asm__("$7");
	__asm__ volatile("syscall" : "+r"(v0), "=r"(a3) : "r"(a0), "r"(a1), "r"(a2) : "memory", "$8", "$9", "$10", "$11", "$12", "$13", "$14", "$15", "$24", "$25", "hi", "lo");
	return v0;
}

static u8 user_buf[BUF];
u32 app_bytes;

void app_main(void)
{
	for (;;) {
		long n = recv(0, user_buf, sizeof user_buf);
		if (n > 0)
			app_bytes += (u32)n;
	}
}

#endif
