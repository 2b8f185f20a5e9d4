/* Recursion: deep call chains, stack frames, callee-saved registers. */
#include "../rt/rt.h"

static int __attribute__((noinline)) fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static int __attribute__((noinline)) ack(int m, int n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ack(m - 1, 1);
	return ack(m - 1, ack(m, n - 1));
}

static void hanoi(int n, int from, int to, int via, int *moves)
{
	if (!n)
		return;
	hanoi(n - 1, from, via, to, moves);
	++*moves;
	hanoi(n - 1, via, to, from, moves);
}

static void quicksort(int *a, int lo, int hi)
{
	if (lo >= hi)
		return;
	int p = a[(lo + hi) / 2], i = lo, j = hi;
	while (i <= j) {
		while (a[i] < p)
			i++;
		while (a[j] > p)
			j--;
		if (i <= j) {
			int t = a[i];
			a[i++] = a[j];
			a[j--] = t;
		}
	}
	quicksort(a, lo, j);
	quicksort(a, i, hi);
}

int main(void)
{
	put_kv("fib20", fib(20));
	put_kv("ack2_3", ack(2, 3));
	int moves = 0;
	hanoi(12, 1, 3, 2, &moves);
	put_kv("hanoi12", moves);
	int a[200];
	u32 x = 12345;
	for (int i = 0; i < 200; i++) {
		x = x * 1103515245u + 12345;
		a[i] = (int)(x >> 8) % 1000 - 500;
	}
	quicksort(a, 0, 199);
	int sorted = 1;
	for (int i = 1; i < 200; i++)
		sorted &= a[i - 1] <= a[i];
	put_kv("sorted", sorted);
	put_kv("min", a[0]);
	put_kv("max", a[199]);
	return fib(10);
}
