/* The skb pool: socket buffers on a free list that several activities use
   at once (the bottom half allocates, recv and the TX cleanup free), on
   different hardware threads or preempting one another on one. There is
   no interrupt disabling in this machine, so the list is lock-free: a
   stack whose pop is one ll/sc sequence. An sc fails if any store hit the
   head word since the ll, or if the context was switched in between, so
   a pop that raced another retries, and the ABA case cannot succeed. */
#include "kernel.h"

static struct skb skbs[POOL_MAX];
static u8 buffers[POOL_MAX][BUF_SIZE] __attribute__((aligned(64)));
static struct skb *pool_head;

void skb_pool_init(void)
{
	pool_head = 0;
	for (u32 i = kconfig.pool; i-- > 0;) {
		skbs[i].head = buffers[i];
		skbs[i].next = pool_head;
		pool_head = &skbs[i];
	}
}

struct skb *skb_alloc(void)
{
	struct skb *h, *n;
	u32 ok;
	do {
		__asm__ volatile(".set push\n\t.set noreorder\n\t"
				 "ll\t%0, 0(%3)\n\t"
				 "beqz\t%0, 1f\n\t"
				 " li\t%2, 1\n\t"
				 "lw\t%1, 0(%0)\n\t"
				 "move\t%2, %1\n\t"
				 "sc\t%2, 0(%3)\n"
				 "1:\n\t.set pop"
				 : "=&r"(h), "=&r"(n), "=&r"(ok)
				 : "r"(&pool_head)
				 : "memory");
	} while (!ok);
	if (h)
		h->data = h->head + NET_IP_ALIGN;
	return h;
}

void skb_free(struct skb *skb)
{
	struct skb *h;
	do {
		h = pool_head;
		skb->next = h;
	} while (!__sync_bool_compare_and_swap(&pool_head, h, skb));
}

u32 skb_free_count(void)
{
	u32 n = 0;
	for (struct skb *s = pool_head; s; s = s->next)
		n++;
	return n;
}
