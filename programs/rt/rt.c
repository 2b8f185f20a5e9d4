#include "rt.h"

static long syscall3(long n, long a, long b, long c)
{
	register long v0 __asm__("$2") = n;
	register long a0 __asm__("$4") = a;
	register long a1 __asm__("$5") = b;
	register long a2 __asm__("$6") = c;
	register long a3 __asm__("$7");
	__asm__ volatile("syscall" : "+r"(v0), "=r"(a3) : "r"(a0), "r"(a1), "r"(a2)
			 : "$1", "$3", "$8", "$9", "$10", "$11", "$12", "$13", "$14", "$15",
			   "$24", "$25", "hi", "lo", "memory");
	return a3 ? -v0 : v0;
}

long sys_write(int fd, const void *buf, size_t len) { return syscall3(4004, fd, (long)buf, len); }

void sys_exit(int code)
{
	syscall3(4001, code, 0, 0);
	for (;;)
		;
}

size_t strlen(const char *s)
{
	const char *p = s;
	while (*p)
		p++;
	return p - s;
}

void *memcpy(void *d, const void *s, size_t n)
{
	u8 *dp = d;
	const u8 *sp = s;
	while (n--)
		*dp++ = *sp++;
	return d;
}

void *memset(void *d, int c, size_t n)
{
	u8 *dp = d;
	while (n--)
		*dp++ = (u8)c;
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const u8 *x = a, *y = b;
	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

void put_str(const char *s) { sys_write(1, s, strlen(s)); }

void put_uint(u32 v)
{
	char buf[12];
	int i = sizeof buf;
	buf[--i] = 0;
	do {
		buf[--i] = '0' + v % 10;
		v /= 10;
	} while (v);
	put_str(buf + i);
}

void put_int(int v)
{
	if (v < 0) {
		put_str("-");
		put_uint(-(u32)v);
	} else {
		put_uint(v);
	}
}

void put_hex(u32 v)
{
	char buf[11] = "0x";
	for (int i = 0; i < 8; i++)
		buf[2 + i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 15];
	buf[10] = 0;
	put_str(buf);
}

void put_kv(const char *name, int v)
{
	put_str(name);
	put_str("=");
	put_int(v);
	put_str("\n");
}
