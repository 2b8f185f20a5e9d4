/* Calls through function pointers (jalr) and tables of them. */
#include "../rt/rt.h"

typedef int (*op_fn)(int, int);
static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int mul(int a, int b) { return a * b; }
static int mx(int a, int b) { return a > b ? a : b; }
static op_fn ops[] = {add, sub, mul, mx};

static int __attribute__((noinline)) fold(op_fn f, const int *v, int n)
{
	int acc = v[0];
	for (int i = 1; i < n; i++)
		acc = f(acc, v[i]);
	return acc;
}

struct shape {
	int (*area)(const struct shape *);
	int w, h;
};
static int rect(const struct shape *s) { return s->w * s->h; }
static int tri(const struct shape *s) { return s->w * s->h / 2; }

int main(void)
{
	int v[] = {3, -4, 5, 9, -2, 7};
	for (unsigned i = 0; i < sizeof ops / sizeof ops[0]; i++)
		put_kv("fold", fold(ops[i], v, 6));
	struct shape shapes[] = {{rect, 3, 4}, {tri, 5, 6}, {rect, 7, 1}};
	int total = 0;
	for (int i = 0; i < 3; i++)
		total += shapes[i].area(&shapes[i]);
	put_kv("area", total);
	return total;
}
