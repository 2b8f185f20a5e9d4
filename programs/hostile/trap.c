/* Output written before a trap is kept: qemu-mips prints it, then dies of
   SIGTRAP (gcc guards the division with `teq`). */
#include "../rt/rt.h"

static volatile int zero, hundred = 100;

int main(void)
{
	put_str("before the trap\n");
	return hundred / zero;
}
