/* Byte loops, struct copies (memcpy), memset and stderr output. */
#include "../rt/rt.h"

struct packet {
	u8 dst[6], src[6];
	u16 type;
	u8 payload[46];
};

static u16 __attribute__((noinline)) checksum(const u8 *p, int n)
{
	u32 s = 0;
	for (int i = 0; i + 1 < n; i += 2)
		s += (p[i] << 8) | p[i + 1];
	if (n & 1)
		s += p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (u16)~s;
}

int main(void)
{
	struct packet a, b;
	memset(&a, 0, sizeof a);
	for (int i = 0; i < 6; i++)
		a.dst[i] = (u8)(0x10 + i), a.src[i] = (u8)(0xa0 + i);
	a.type = 0x0800;
	for (int i = 0; i < 46; i++)
		a.payload[i] = (u8)(i * 7);
	b = a;
	b.payload[3] ^= 0xff;
	put_kv("csum_a", checksum((u8 *)&a, sizeof a));
	put_kv("csum_b", checksum((u8 *)&b, sizeof b));
	put_kv("cmp", memcmp(&a, &b, sizeof a) < 0);
	sys_write(2, "to stderr\n", 10);
	char msg[] = "hello, mips\n";
	for (char *p = msg; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p -= 32;
	put_str(msg);
	return 0;
}
