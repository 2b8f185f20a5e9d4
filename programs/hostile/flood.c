/* Writes 64 MiB to stdout in 64 KiB calls: irqsim exec streams it, and
   --json keeps only the first 1 MiB (tests/test_exec_hostile.py). */
#include "../rt/rt.h"

static char buf[65536];

int main(void)
{
	memset(buf, 'x', sizeof buf);
	for (int i = 0; i < 1024; i++)
		sys_write(1, buf, sizeof buf);
	return 0;
}
