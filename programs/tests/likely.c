/* Compiled with -mbranch-likely: loops whose delay slots are annulled on exit. */
#include "../rt/rt.h"

static int __attribute__((noinline)) count_bits(u32 x)
{
	int n = 0;
	while (x) {
		x &= x - 1;
		n++;
	}
	return n;
}

static int __attribute__((noinline)) find(const int *a, int n, int key)
{
	for (int i = 0; i < n; i++)
		if (a[i] == key)
			return i;
	return -1;
}

int main(void)
{
	int a[64], s = 0;
	for (int i = 0; i < 64; i++)
		a[i] = i * i % 61;
	for (int k = 0; k < 70; k += 3)
		s = s * 5 + find(a, 64, k);
	put_kv("find", s);
	u32 t = 0;
	for (u32 x = 1; x < 5000; x = x * 3 + 1)
		t = t * 7 + count_bits(x);
	put_kv("bits", (int)t);
	return 0;
}
