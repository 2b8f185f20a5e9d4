/* A sample handler: the Internet checksum of a received frame. Entry
   `rx_checksum(frame, len)` is an activity the machine can run until it
   returns; main() runs it on a test frame so the program also stands alone. */
#include "../rt/rt.h"

u32 rx_checksum(const u8 *frame, u32 len)
{
	u32 s = 0;
	for (u32 i = 0; i + 1 < len; i += 2)
		s += (u32)frame[i] << 8 | frame[i + 1];
	if (len & 1)
		s += (u32)frame[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s & 0xffff;
}

u8 frame[1514];

int main(void)
{
	for (u32 i = 0; i < sizeof frame; i++)
		frame[i] = (u8)(i * 13 + 5);
	put_kv("checksum", (int)rx_checksum(frame, sizeof frame));
	return 0;
}
