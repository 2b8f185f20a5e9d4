/* Never exits: Ctrl-C must stop irqsim exec (tests/test_long_runs.py). */
#include "../rt/rt.h"

static volatile int spinning = 1;

int main(void)
{
	put_str("spinning\n");
	while (spinning)
		;
	return 0;
}
