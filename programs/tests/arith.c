/* Integer arithmetic, shifts, comparisons, multiply and divide. */
#include "../rt/rt.h"

static volatile i32 sv[] = {0, 1, -1, 7, -7, 0x7fffffff, (i32)0x80000000, 12345, -98765, 255};
static volatile u32 uv[] = {0, 1, 0xffffffffu, 3, 0x80000000u, 0xdeadbeefu, 65536, 1000003};

int main(void)
{
	u32 h = 0;
	int n = sizeof sv / sizeof sv[0], m = sizeof uv / sizeof uv[0];
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			i32 a = sv[i], b = sv[j];
			h = h * 31 + (u32)(a + b);
			h = h * 31 + (u32)(a - b);
			h = h * 31 + (u32)(a * b);
			h = h * 31 + (a < b) + 2 * (a <= b) + 4 * (a == b);
			h = h * 31 + (u32)(a >> (b & 31)) + (u32)((u32)a >> (b & 31)) + (u32)(a << (b & 31));
			h = h * 31 + (u32)(a & b) + (u32)(a | b) + (u32)(a ^ b) + (u32)~(a | b);
			if (b != 0 && !(a == (i32)0x80000000 && b == -1))
				h = h * 31 + (u32)(a / b) + (u32)(a % b);
			long long p = (long long)a * b;
			h = h * 31 + (u32)(p >> 32);
		}
	put_kv("signed", (int)h);
	u32 g = 0;
	for (int i = 0; i < m; i++)
		for (int j = 0; j < m; j++) {
			u32 a = uv[i], b = uv[j];
			g = g * 33 + a + b + (a < b) + (a * b);
			if (b)
				g = g * 33 + a / b + a % b;
			unsigned long long p = (unsigned long long)a * b;
			g = g * 33 + (u32)(p >> 32);
			g ^= (a >> 3) | (b << 5);
		}
	put_str("unsigned=");
	put_hex(g);
	put_str("\n");
	put_kv("neg", -sv[3] * 3);
	put_kv("imm", (sv[3] + 1000) * 65539 - 0x12345);
	return (int)(h & 0x3f);
}
