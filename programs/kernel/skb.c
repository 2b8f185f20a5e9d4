/* Socket buffers, which several activities use at once (the bottom half
   allocates, recv and the TX cleanup free), on different hardware threads
   or preempting one another on one. By default each skb's head and data
   come from 2.6.11's slab allocator (slab.c), as alloc_skb takes them.
   With -DSKB_POOL (kernel/measure-*) they are fixed pairs on a free list
   instead, lock-free: a stack whose pop is one ll/sc sequence. An sc fails
   if any store hit the head word since the ll, or if the context was
   switched in between, so a pop that raced another retries, and the ABA
   case cannot succeed.

   Allocation and release do what 2.6's alloc_skb and __kfree_skb do to
   the objects (net/core/skbuff.c): clear the sk_buff up to truesize, set
   the head fields and skb_shared_info; on release drop the route, the
   socket's memory charge and the connection, and read the shared info. */
#include "kernel.h"

#ifdef SKB_POOL
static struct skb skbs[POOL_MAX] __attribute__((aligned(64)));
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
	if (!h)
		return 0;
#else
struct skb *skb_alloc(void)
{
	struct skb *h = skb_head_alloc();
	if (!h)
		return 0;
	u8 *data = kmalloc_data();
	if (!data) {
		skb_head_free(h);
		return 0;
	}
	h->head = data;
#endif
	u32 *w = (u32 *)h;
	for (u32 i = 0; i < SKB_CLEARED / 4; i++)
		w[i] = 0;
	h->truesize = SKB_TRUESIZE;
	h->users = 1;
	h->data = h->tail = h->head + NET_SKB_PAD + NET_IP_ALIGN;
	h->end = h->head + SHINFO_OFF;
	struct shinfo *sh = skb_shinfo(h);
	sh->dataref = 1;
	sh->nr_frags = 0;
	sh->tso_size = sh->tso_segs = 0;
	sh->frag_list = 0;
	return h;
}

void skb_free(struct skb *skb)
{
	if (skb->dst)
		dst_release(skb->dst);
	if (skb->owned)
		sock_rfree(skb);
	if (skb->nfct)
		ct_put(skb->nfct);
	/* skb_release_data reads these (the path builds no fragments). */
	TOUCH(skb_shinfo(skb)->nr_frags);
	TOUCH(skb_shinfo(skb)->frag_list);
#ifdef SKB_POOL
	struct skb *h;
	do {
		h = pool_head;
		skb->next = h;
	} while (!__sync_bool_compare_and_swap(&pool_head, h, skb));
#else
	kfree_data(skb->head);
	skb_head_free(skb);
#endif
}

u32 skb_free_count(void)
{
#ifdef SKB_POOL
	u32 n = 0;
	for (struct skb *s = pool_head; s; s = s->next)
		n++;
	return n;
#else
	return slab_data_free();
#endif
}
