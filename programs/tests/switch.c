/* Dense switches (jump tables through jr) and sparse ones (compare chains). */
#include "../rt/rt.h"

static int __attribute__((noinline)) dense(int x)
{
	switch (x) {
	case 0: return 11;
	case 1: return 23;
	case 2: return 37;
	case 3: return 41;
	case 4: return 59;
	case 5: return 67;
	case 6: return 73;
	case 7: return 89;
	case 8: return 97;
	case 9: return 101;
	default: return -1;
	}
}

static const char *__attribute__((noinline)) sparse(int x)
{
	switch (x) {
	case 7: return "seven";
	case 100: return "hundred";
	case 4004: return "write";
	case -3: return "minus three";
	default: return "other";
	}
}

int main(void)
{
	int s = 0;
	for (int i = -2; i < 13; i++)
		s = s * 3 + dense(i);
	put_kv("dense", s);
	int probes[] = {7, 100, 4004, -3, 5};
	for (int i = 0; i < 5; i++) {
		put_str(sparse(probes[i]));
		put_str("\n");
	}
	return 3;
}
