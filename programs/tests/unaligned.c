/* Unaligned words through packed structs (gcc emits lwl/lwr, swl/swr). */
#include "../rt/rt.h"

struct __attribute__((packed)) rec {
	u8 tag;
	u32 value;
	u16 port;
	u32 next;
};

static struct rec recs[5];
static u8 raw[32];

static u32 __attribute__((noinline)) get32(const u8 *p)
{
	struct __attribute__((packed)) w { u32 v; };
	return ((const struct w *)p)->v;
}

static void __attribute__((noinline)) put32(u8 *p, u32 v)
{
	struct __attribute__((packed)) w { u32 v; };
	((struct w *)p)->v = v;
}

int main(void)
{
	for (int i = 0; i < 32; i++)
		raw[i] = (u8)(i * 37 + 11);
	for (int off = 0; off < 8; off++) {
		put_hex(get32(raw + off));
		put_str("\n");
	}
	for (int off = 0; off < 4; off++)
		put32(raw + 16 + off * 5, 0xa1b2c3d4u + off);
	u32 h = 0;
	for (int i = 0; i < 32; i++)
		h = h * 131 + raw[i];
	put_str("raw=");
	put_hex(h);
	put_str("\n");
	for (int i = 0; i < 5; i++) {
		recs[i].tag = (u8)i;
		recs[i].value = 0x01020304u * (i + 1);
		recs[i].port = (u16)(8000 + i);
		recs[i].next = ~recs[i].value;
	}
	u32 s = 0;
	for (int i = 0; i < 5; i++)
		s += recs[i].value ^ recs[i].next ^ recs[i].port ^ recs[i].tag;
	put_str("recs=");
	put_hex(s);
	put_str("\n");
	return 0;
}
