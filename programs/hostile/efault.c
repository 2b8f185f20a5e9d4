/* write() with buffers the program does not own: each fails with EFAULT
   (14), as under qemu-mips, instead of writing zeros. */
#include "../rt/rt.h"

int main(void)
{
	put_kv("null", (int)sys_write(1, (const void *)0, 5));
	put_kv("low", (int)sys_write(1, (const void *)0x1000, 5));
	put_kv("wraps", (int)sys_write(1, (const void *)0xfffffff0u, 32));
	put_kv("ok", (int)sys_write(1, "fine\n", 5));
	return 0;
}
