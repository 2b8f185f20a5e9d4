/* Linux 2.6.11's slab allocator (mm/slab.c) for the two caches a frame
   uses: skbuff_head_cache, the 320 B sk_buff heads, on-slab, 25 a page;
   and size-4096, the data, off-slab, 2 a page. Each cache has a LIFO array
   per CPU, a shared array that passes objects from the CPU that frees to
   the CPU that allocates, and its slabs on the partial, full and free
   lists; a slab hands out objects by its bufctl chain. Objects have
   Alpha's sizes and offsets (8-byte pointers: each of ours is followed by
   its unused upper half), so the path touches the lines 2.6's touches.
   Inputs and departures: docs/models/smt-hot-thread.md, "The slab
   allocator: the inputs". */
#include "kernel.h"

#define PAGE_SIZE 8192 /* Alpha */
#define NR_CPUS 32     /* kmem_cache_t's array[] */
#define SLAB_CPUS 2    /* num_online_cpus(): the SMT contexts */
#define BATCHREFILL_LIMIT 16
#define BUFCTL_END 0xffff
#define HEAD_SIZE 320  /* sizeof(struct sk_buff), SLAB_HWCACHE_ALIGN */
#define HEADS_PER_SLAB 25
#define HEAD_OBJ_OFF 128 /* ALIGN(sizeof(struct slab) + 25 bufctls, 64) */
#define DATA_PER_SLAB 2
/* The arena: pages for pool data objects and as many heads. */
#define DATA_PAGES(pool) ((pool) / DATA_PER_SLAB)
#define HEAD_PAGES(pool) (((pool) + HEADS_PER_SLAB - 1) / HEADS_PER_SLAB)
#define ARENA_PAGES(pool) (DATA_PAGES(pool) + HEAD_PAGES(pool))

struct list_head {
	union {
		AT(0, struct list_head *, next);
		AT(8, struct list_head *, prev);
		u8 _obj[16];
	};
};

/* struct slab, then its kmem_bufctl_t array. */
struct slab {
	union {
		AT(0, struct list_head, list);
		AT(24, u8 *, s_mem);
		AT(32, u32, inuse);
		AT(36, u16, free);
		AT(40, u16, bufctl[HEADS_PER_SLAB]);
	};
};
#define slab_of(l) ((struct slab *)(l))

/* struct page in mem_map: lru.next names the cache, lru.prev the slab. */
struct page {
	union {
		AT(40, struct kmem_cache *, cache);
		AT(48, struct slab *, slab);
		u8 _obj[56];
	};
};

struct slot {
	void *obj;
	u32 hi;
};
struct array_cache {
	u32 avail, limit, batchcount, touched;
	struct slot entry[];
};

struct kmem_cache {
	union {
		AT(0, struct array_cache *, array[NR_CPUS * 2]); /* [2 cpu]: 8-byte slots */
		AT(256, u32, batchcount);
		AT(260, u32, limit);
		AT(264, struct list_head, slabs_partial);
		AT(280, struct list_head, slabs_full);
		AT(296, struct list_head, slabs_free);
		AT(312, u32, free_objects);
		AT(320, u32, free_touched);
		AT(336, struct array_cache *, shared);
		AT(344, u32, objsize);
		AT(352, u32, num);
		AT(356, u32, free_limit);
		AT(360, volatile u32, spinlock);
		u8 _obj[448];
	};
};

/* The arena's pages (the heads' and the data's apart, so the study can pin
   one and not the other) and their mem_map, data pages first; each cache's
   free pages (a LIFO list, standing for the page allocator: pool / 2 for
   the data, as many as hold pool heads, so kconfig.pool skbs can exist);
   each off-slab slab's management object. */
static u8 head_pages[HEAD_PAGES(POOL_MAX)][PAGE_SIZE] __attribute__((aligned(PAGE_SIZE)));
static u8 data_pages[DATA_PAGES(POOL_MAX)][PAGE_SIZE] __attribute__((aligned(PAGE_SIZE)));
static struct page mem_map[ARENA_PAGES(POOL_MAX)] __attribute__((aligned(64)));
static u8 *free_pages[2][ARENA_PAGES(POOL_MAX)];
static u32 nr_free_pages[2];
static u8 off_slab[ARENA_PAGES(POOL_MAX)][64] __attribute__((aligned(64)));

static struct kmem_cache kmem_caches[2] __attribute__((aligned(64)));
#define head_cache (&kmem_caches[0])
#define data_cache (&kmem_caches[1])

/* The arrays, each in the kmalloc object 2.6 would give it (16 B + 8 B a
   slot): heads 54 (size-512), data 24 (size-256), shared 216 (size-2048)
   and 96 (size-1024). */
#define TICK_CPUS TICK_THREADS /* every thread the machine may run code on */
static struct {
	u8 head[TICK_CPUS][512], data[TICK_CPUS][256], head_shared[2048], data_shared[1024];
} arrays __attribute__((aligned(64)));

static u32 smp_processor_id(void)
{
#ifdef FAKE_NIC
	return fake_cpu;
#else
	return MMIO(REG_THREAD_ID) & 0xff;
#endif
}

static struct array_cache *ac_data(struct kmem_cache *c) { return c->array[2 * smp_processor_id()]; }

static void spin_lock(volatile u32 *l)
{
	while (__sync_lock_test_and_set(l, 1))
		;
}

static void spin_unlock(volatile u32 *l) { __sync_lock_release(l); }

static void list_init(struct list_head *h) { h->next = h->prev = h; }

static void list_del(struct list_head *e)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
}

static void list_add(struct list_head *e, struct list_head *h)
{
	e->next = h->next;
	e->prev = h;
	h->next->prev = e;
	h->next = e;
}

static void list_add_tail(struct list_head *e, struct list_head *h) { list_add(e, h->prev); }

static struct page *virt_to_page(const void *p)
{
	const u8 *b = p;
	if (b >= head_pages[0] && b < head_pages[HEAD_PAGES(POOL_MAX)])
		return &mem_map[DATA_PAGES(POOL_MAX) + (b - head_pages[0]) / PAGE_SIZE];
	return &mem_map[(b - data_pages[0]) / PAGE_SIZE];
}

static void array_init(struct array_cache *ac, u32 limit, u32 batch)
{
	ac->avail = 0;
	ac->limit = limit;
	ac->batchcount = batch;
	ac->touched = 0;
}

/* kmem_cache_create + enable_cpucache: limit by size, batch (limit + 1) / 2,
   a shared array of 8 batches. */
static void cache_init(struct kmem_cache *c, u32 objsize, u32 num, u32 limit, u8 *percpu, u32 stride, void *shared)
{
	list_init(&c->slabs_partial);
	list_init(&c->slabs_full);
	list_init(&c->slabs_free);
	c->objsize = objsize;
	c->num = num;
	c->limit = limit;
	c->batchcount = (limit + 1) / 2;
	c->free_objects = 0;
	c->free_limit = (1 + SLAB_CPUS) * c->batchcount + num;
	c->spinlock = 0;
	for (u32 cpu = 0; cpu < TICK_CPUS; cpu++) {
		c->array[2 * cpu] = (struct array_cache *)(percpu + cpu * stride);
		array_init(c->array[2 * cpu], limit, c->batchcount);
	}
	c->shared = shared;
	array_init(c->shared, 8 * c->batchcount, 0xbaadf00d);
}

void skb_pool_init(void)
{
	nr_free_pages[0] = nr_free_pages[1] = 0;
	for (u32 i = HEAD_PAGES(kconfig.pool); i-- > 0;)
		free_pages[0][nr_free_pages[0]++] = head_pages[i];
	for (u32 i = DATA_PAGES(kconfig.pool); i-- > 0;)
		free_pages[1][nr_free_pages[1]++] = data_pages[i];
	cache_init(head_cache, HEAD_SIZE, HEADS_PER_SLAB, 54, arrays.head[0], 512, arrays.head_shared);
	cache_init(data_cache, BUF_SIZE, DATA_PER_SLAB, 24, arrays.data[0], 256, arrays.data_shared);
}

/* cache_grow: a page from the page list (under the cache's lock, which
   slab_destroy holds when it returns one), its slab (in the page or,
   off-slab, in its management object), the bufctl chain, set_slab_attr. */
static int cache_grow(struct kmem_cache *c)
{
	u32 k = c - kmem_caches;
	spin_lock(&c->spinlock);
	u8 *mem = nr_free_pages[k] ? free_pages[k][--nr_free_pages[k]] : 0;
	spin_unlock(&c->spinlock);
	if (!mem)
		return 0;
	struct page *pg = virt_to_page(mem);
	int on_slab = c == head_cache;
	struct slab *s = (struct slab *)(on_slab ? mem : off_slab[pg - mem_map]);
	s->s_mem = mem + (on_slab ? HEAD_OBJ_OFF : 0);
	s->inuse = 0;
	s->free = 0;
	for (u32 i = 0; i < c->num; i++)
		s->bufctl[i] = i + 1 < c->num ? i + 1 : BUFCTL_END;
	pg->cache = c;
	pg->slab = s;
	spin_lock(&c->spinlock);
	list_add_tail(&s->list, &c->slabs_free);
	c->free_objects += c->num;
	spin_unlock(&c->spinlock);
	return 1;
}

static void *cache_alloc_refill(struct kmem_cache *c)
{
	struct array_cache *ac;
retry:
	ac = ac_data(c);
	int batch = (int)ac->batchcount; /* signed: the take loop leaves it at -1 */
	if (!ac->touched && batch > BATCHREFILL_LIMIT)
		batch = BATCHREFILL_LIMIT;
	spin_lock(&c->spinlock);
	struct array_cache *sh = c->shared;
	if (sh->avail) {
		if (batch > (int)sh->avail)
			batch = (int)sh->avail;
		sh->avail -= batch;
		ac->avail = batch;
		for (int i = 0; i < batch; i++)
			ac->entry[i] = sh->entry[sh->avail + i];
		sh->touched = 1;
	} else {
		while (batch > 0) {
			struct list_head *e = c->slabs_partial.next;
			if (e == &c->slabs_partial) {
				c->free_touched = 1;
				e = c->slabs_free.next;
				if (e == &c->slabs_free)
					break;
			}
			struct slab *s = slab_of(e);
			while (s->inuse < c->num && batch--) {
				ac->entry[ac->avail++].obj = s->s_mem + s->free * c->objsize;
				s->inuse++;
				s->free = s->bufctl[s->free];
			}
			list_del(&s->list);
			list_add(&s->list, s->free == BUFCTL_END ? &c->slabs_full : &c->slabs_partial);
		}
		c->free_objects -= ac->avail;
	}
	spin_unlock(&c->spinlock);
	if (!ac->avail) {
		if (!cache_grow(c))
			return 0;
		goto retry;
	}
	ac->touched = 1;
	return ac->entry[--ac->avail].obj;
}

/* kmem_cache_alloc: the CPU's array, else a refill. */
static void *cache_alloc(struct kmem_cache *c)
{
	void *obj;
	ksvc(KSVC_IRQ_SAVE, 0);
	struct array_cache *ac = ac_data(c);
	if (ac->avail) {
		ac->touched = 1;
		obj = ac->entry[--ac->avail].obj;
	} else {
		obj = cache_alloc_refill(c);
	}
	ksvc(KSVC_IRQ_RESTORE, 0);
	return obj;
}

static void slab_destroy(struct kmem_cache *c, struct slab *s)
{
	u32 k = c - kmem_caches;
	free_pages[k][nr_free_pages[k]++] = s->s_mem - ((u32)s->s_mem % PAGE_SIZE);
}

static void free_block(struct kmem_cache *c, struct slot *objs, u32 n)
{
	c->free_objects += n;
	for (u32 i = 0; i < n; i++) {
		u8 *obj = objs[i].obj;
		struct slab *s = virt_to_page(obj)->slab;
		list_del(&s->list);
		u32 nr = (u32)(obj - s->s_mem) / c->objsize;
		s->bufctl[nr] = s->free;
		s->free = nr;
		s->inuse--;
		if (s->inuse == 0) {
			if (c->free_objects > c->free_limit) {
				c->free_objects -= c->num;
				slab_destroy(c, s);
			} else {
				list_add(&s->list, &c->slabs_free);
			}
		} else {
			list_add_tail(&s->list, &c->slabs_partial);
		}
	}
}

static void cache_flusharray(struct kmem_cache *c, struct array_cache *ac)
{
	u32 batch = ac->batchcount;
	spin_lock(&c->spinlock);
	struct array_cache *sh = c->shared;
	u32 room = sh->limit - sh->avail;
	if (room) {
		if (batch > room)
			batch = room;
		for (u32 i = 0; i < batch; i++)
			sh->entry[sh->avail + i] = ac->entry[i];
		sh->avail += batch;
	} else {
		free_block(c, ac->entry, batch);
	}
	spin_unlock(&c->spinlock);
	ac->avail -= batch;
	for (u32 i = 0; i < ac->avail; i++)
		ac->entry[i] = ac->entry[batch + i];
}

/* kmem_cache_free and kfree (which finds the cache from the page). */
static void cache_free(struct kmem_cache *c, void *obj)
{
	ksvc(KSVC_IRQ_SAVE, 0);
	struct array_cache *ac = ac_data(c);
	if (ac->avail >= ac->limit)
		cache_flusharray(c, ac);
	ac->entry[ac->avail++].obj = obj;
	ksvc(KSVC_IRQ_RESTORE, 0);
}

struct skb *skb_head_alloc(void) { return cache_alloc(head_cache); }
void skb_head_free(struct skb *skb) { cache_free(head_cache, skb); }
u8 *kmalloc_data(void) { return cache_alloc(data_cache); }
void kfree_data(u8 *p) { cache_free(virt_to_page(p)->cache, p); }

/* Data objects that could still be allocated: in every array, in the
   slabs, and two a free page (the tests' conservation check). */
u32 slab_data_free(void)
{
	struct kmem_cache *c = data_cache;
	u32 n = c->free_objects + c->shared->avail + DATA_PER_SLAB * nr_free_pages[1];
	for (u32 cpu = 0; cpu < TICK_CPUS; cpu++)
		n += c->array[2 * cpu]->avail;
	return n;
}
