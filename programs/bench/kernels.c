/* Speed benchmark (docs/performance.md): integer kernels a handler or
   firmware spends its time in, about 300 M instructions in all: a prime
   sieve, CRC-32 over a buffer, a small integer matrix product and an
   insertion sort. Prints one checksum per kernel. */
#include "../rt/rt.h"

/* Rounds of the four kernels (bench/long.c includes this file with more). */
#ifndef ROUNDS
#define ROUNDS 4
#endif

#define SIEVE 200000
static u8 composite[SIEVE];
static u8 buf[65536];
static int ma[48][48], mb[48][48], mc[48][48];
static int arr[2048];

static int sieve(void)
{
	memset(composite, 0, sizeof composite);
	int n = 0;
	for (int i = 2; i < SIEVE; i++) {
		if (composite[i])
			continue;
		n++;
		for (int j = i + i; j < SIEVE; j += i)
			composite[j] = 1;
	}
	return n;
}

static u32 crc32(const u8 *p, u32 len)
{
	u32 c = 0xffffffffu;
	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & -(c & 1));
	}
	return ~c;
}

static int matmul(void)
{
	for (int i = 0; i < 48; i++)
		for (int j = 0; j < 48; j++) {
			int s = 0;
			for (int k = 0; k < 48; k++)
				s += ma[i][k] * mb[k][j];
			mc[i][j] = s;
		}
	int t = 0;
	for (int i = 0; i < 48; i++)
		t ^= mc[i][(i * 7) % 48];
	return t;
}

static int isort(u32 seed)
{
	for (int i = 0; i < 2048; i++) {
		seed = seed * 1664525u + 1013904223u;
		arr[i] = (int)(seed >> 12);
	}
	for (int i = 1; i < 2048; i++) {
		int v = arr[i], j = i - 1;
		while (j >= 0 && arr[j] > v) {
			arr[j + 1] = arr[j];
			j--;
		}
		arr[j + 1] = v;
	}
	return arr[0] ^ arr[1024] ^ arr[2047];
}

int main(void)
{
	for (u32 i = 0; i < sizeof buf; i++)
		buf[i] = (u8)(i * 2654435761u >> 24);
	for (int i = 0; i < 48; i++)
		for (int j = 0; j < 48; j++)
			ma[i][j] = i - j, mb[i][j] = i * j + 1;
	int primes = 0, mm = 0, so = 0;
	u32 crc = 0;
	for (int r = 0; r < ROUNDS; r++) {
		primes += sieve();
		crc += crc32(buf, sizeof buf) >> r;
		mm += matmul() + r;
		so += isort(r + 1);
	}
	put_kv("primes", primes);
	put_str("crc=");
	put_hex(crc);
	put_str("\n");
	put_kv("matmul", mm);
	put_kv("isort", so);
	return 0;
}
