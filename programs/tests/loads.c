/* Signed and unsigned byte/halfword loads and stores. */
#include "../rt/rt.h"

static u8 bytes[16] = {0x00, 0x7f, 0x80, 0xff, 0x01, 0xfe, 0x55, 0xaa};
static u16 halves[8] = {0x0000, 0x7fff, 0x8000, 0xffff, 0x1234, 0xfedc};
static volatile signed char sb[4] = {-1, -128, 127, 0};
static volatile short sh[4] = {-1, -32768, 32767, 0};

int main(void)
{
	int s = 0;
	for (int i = 0; i < 8; i++) {
		put_int((signed char)bytes[i]);
		put_str(" ");
		put_int(bytes[i]);
		put_str(" ");
		put_int((short)halves[i]);
		put_str(" ");
		put_int(halves[i]);
		put_str("\n");
		s += (signed char)bytes[i] + (short)halves[i];
	}
	for (int i = 0; i < 4; i++)
		s = s * 7 + sb[i] + sh[i];
	bytes[9] = (u8)s;
	halves[7] = (u16)(s * 3);
	sb[3] = (signed char)(s >> 8);
	put_kv("sum", s);
	put_kv("stored", bytes[9] + halves[7] + sb[3]);
	u32 w = 0x11223344;
	u8 *p = (u8 *)&w;
	put_kv("endian", p[0] * 1000 + p[3]);
	return s & 0x7f;
}
