/* Linux 2.6.11's O(1) scheduler as the receive path drives it: built only
   into the *-sched ELFs (-DCONFIG_SCHED), a non-default option of the SMT
   study (docs/models/smt-hot-thread.md, "The scheduler").

   The machine still blocks, wakes and switches the threads; this code
   does to 2.6's objects what kernel/sched.c does on those events, at
   2.6.11's offsets on Alpha: try_to_wake_up when the bottom half wakes the
   reader, schedule() when the reader blocks (netperf to idle) and when it
   runs again (idle to netperf), scheduler_tick on every CPU's tick.
   Not modelled: sched domains and load balancing, the IPI of a remote
   wake, the mm switch's page tables.

   The control: a run that pokes `sched_hooks_only` = 1 (code.poke) gets
   the same ELF, calls and layout, with every entry returning at once. */
#include "kernel.h"

volatile u32 sched_hooks_only;
#define HOOK_ONLY()           \
	if (sched_hooks_only) \
		return

#define NCPU 2             /* the SMT core's two threads: two CPUs to Linux */
#define APP_CPU 0          /* netperf's CPU: the scenarios' code.app_thread */
#define THREAD_SIZE 16384  /* Alpha: 2 pages of 8 KiB (asm-alpha/thread_info.h) */
#define MAX_RT_PRIO 100
#define MAX_PRIO 140
#define NICE_0 120         /* NICE_TO_PRIO(0) */
#define MAX_BONUS 10       /* MAX_USER_PRIO * PRIO_BONUS_RATIO / 100 */
#define DEF_TIMESLICE (100 * HZ / 1000)
#define NS_PER_JIFFY (1000000000u / HZ)
#define MAX_SLEEP_AVG (DEF_TIMESLICE * MAX_BONUS)
#define NS_MAX_SLEEP_AVG (MAX_SLEEP_AVG * NS_PER_JIFFY)
#define TASK_RUNNING 0
#define TASK_INTERRUPTIBLE 1
#define TIF_NEED_RESCHED (1u << 3)

/* struct list_head as on Alpha: two 8-byte pointers. */
struct list_head {
	struct list_head *next;
	u32 _next_hi;
	struct list_head *prev;
	u32 _prev_hi;
};

/* struct prio_array (2,272 B): BITMAP_SIZE is 3 longs on Alpha. */
struct prio_array {
	u32 nr_active, _pad;
	u32 bitmap[6];
	struct list_head queue[MAX_PRIO];
};

/* struct thread_info, at the bottom of each task's kernel stack. */
struct thread_info {
	union {
		AT(72, volatile u32, flags);
		AT(96, u32, cpu);
		u8 _obj[128];
	};
};

/* struct task_struct (1,040 B) in its cache, aligned to L1_CACHE_BYTES
   (ARCH_MIN_TASKALIGN, kernel/fork.c): 1,088. */
struct task {
	union {
		AT(0, volatile u32, state);
		AT(8, struct thread_info *, ti);
		AT(44, u32, prio);
		AT(48, u32, static_prio);
		AT(56, struct list_head, run_list);
		AT(72, struct prio_array *, array);
		AT(80, u32, sleep_avg);
		AT(88, u32, timestamp);
		AT(96, u32, last_ran);
		AT(104, i32, activated);
		AT(120, u32, cpus_allowed);
		AT(128, u32, time_slice);
		AT(132, u32, first_time_slice);
		AT(184, u32, mm);
		AT(192, u32, active_mm);
		AT(632, u32, nvcsw);
		AT(640, u32, nivcsw);
		u8 _obj[1088];
	};
};

/* struct runqueue (4,688 B), one per CPU (DEFINE_PER_CPU), each here in
   its own cache-aligned area. */
struct runqueue {
	union {
		AT(0, volatile u32, lock);
		AT(8, u32, nr_running);
		AT(16, u32, cpu_load);
		AT(24, u32, nr_switches);
		AT(40, u32, expired_timestamp);
		AT(48, u32, timestamp_last_tick);
		AT(56, struct task *, curr);
		AT(64, struct task *, idle);
		AT(72, u32, prev_mm);
		AT(80, struct prio_array *, active);
		AT(88, struct prio_array *, expired);
		AT(96, struct prio_array, array0);
		AT(2368, struct prio_array, array1);
		AT(4640, u32, best_expired_prio);
		u8 _obj[4736];
	};
};

/* struct socket (80 B): its wait queue head at 48 (include/linux/net.h). */
struct socket {
	union {
		AT(48, volatile u32, wq_lock);
		AT(56, struct list_head, wq_list);
		u8 _obj[128];
	};
};

/* wait_queue_t (40 B), DEFINE_WAIT in wait_for_packet's frame on the
   reader's kernel stack. */
struct waiter {
	u32 flags, _pad;
	struct task *task;
	u32 _task_hi;
	u32 func, _func_hi;
	struct list_head list;
};

enum { NETPERF, IDLE0, IDLE1, NTASK };
static struct task tasks[NTASK] __attribute__((aligned(64)));
static union {
	struct thread_info ti;
	u8 bytes[THREAD_SIZE];
} stacks[NTASK] __attribute__((aligned(THREAD_SIZE)));
static struct runqueue rqs[NCPU] __attribute__((aligned(64)));
static struct socket sock0 __attribute__((aligned(64)));
#define WAITER ((struct waiter *)(stacks[NETPERF].bytes + THREAD_SIZE - 256))

/* spin_lock_irqsave and spin_unlock_irqrestore: the machine's section
   holds this thread's interrupts and tick while the lock is held. */
static void lock(volatile u32 *l)
{
	ksvc(KSVC_IRQ_SAVE, 0);
	while (__sync_lock_test_and_set(l, 1))
		;
}

static void unlock(volatile u32 *l)
{
	__sync_lock_release(l);
	ksvc(KSVC_IRQ_RESTORE, 0);
}

static void list_init(struct list_head *h) { h->next = h->prev = h; }

static void list_add_tail(struct list_head *n, struct list_head *h)
{
	struct list_head *prev = h->prev;
	n->next = h;
	n->prev = prev;
	prev->next = n;
	h->prev = n;
}

static void list_del(struct list_head *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
}

/* sched_clock: jiffies in nanoseconds (32 bits: it wraps after 4.3 s,
   and the differences taken of it stay right). */
static u32 sched_clock(void) { return jiffies * NS_PER_JIFFY; }

/* smp_processor_id(): the machine's thread, read as Alpha reads it, from
   the running task's thread_info. */
static u32 this_cpu(void)
{
	u32 cpu = MMIO(REG_THREAD_ID) & 0xff;
	TOUCH(rqs[cpu].curr->ti->cpu);
	return cpu;
}

/* sched_find_first_bit: the lowest set bit (the delimiter at MAX_PRIO
   stops an empty array), by halves as the generic __ffs. */
static u32 find_first_bit(const u32 *bitmap)
{
	u32 w = 0;
	while (!bitmap[w])
		w++;
	u32 x = bitmap[w], n = w * 32;
	if (!(x & 0xffff))
		n += 16, x >>= 16;
	if (!(x & 0xff))
		n += 8, x >>= 8;
	if (!(x & 0xf))
		n += 4, x >>= 4;
	if (!(x & 0x3))
		n += 2, x >>= 2;
	return n + !(x & 1);
}

static u32 current_bonus(struct task *p) { return p->sleep_avg / NS_PER_JIFFY * MAX_BONUS / MAX_SLEEP_AVG; }

static u32 effective_prio(struct task *p)
{
	i32 prio = (i32)p->static_prio - ((i32)current_bonus(p) - MAX_BONUS / 2);
	return prio < MAX_RT_PRIO ? MAX_RT_PRIO : prio > MAX_PRIO - 1 ? MAX_PRIO - 1 : (u32)prio;
}

static void recalc_task_prio(struct task *p, u32 now)
{
	u32 sleep = now - p->timestamp;
	if (sleep > NS_MAX_SLEEP_AVG)
		sleep = NS_MAX_SLEEP_AVG;
	if (sleep) {
		u32 bonus = MAX_BONUS - current_bonus(p);
		bonus = bonus ? bonus : 1;
		/* sleep_avg += sleep × bonus, capped (2.6's unsigned long does
		   not overflow; a 32-bit product could) */
		u32 room = NS_MAX_SLEEP_AVG - p->sleep_avg;
		p->sleep_avg = sleep >= room / bonus ? NS_MAX_SLEEP_AVG : p->sleep_avg + sleep * bonus;
	}
	p->prio = effective_prio(p);
}

static void enqueue_task(struct task *p, struct prio_array *a)
{
	list_add_tail(&p->run_list, &a->queue[p->prio]);
	a->bitmap[p->prio / 32] |= 1u << (p->prio % 32);
	a->nr_active++;
	p->array = a;
}

static void dequeue_task(struct task *p, struct prio_array *a)
{
	a->nr_active--;
	list_del(&p->run_list);
	if (a->queue[p->prio].next == &a->queue[p->prio])
		a->bitmap[p->prio / 32] &= ~(1u << (p->prio % 32));
}

/* The switch's common half: prev's accounting, rq->curr, the lazy mm. */
static void switch_tasks(struct runqueue *rq, struct task *prev, struct task *next, u32 now, u32 *count)
{
	prev->ti->flags &= ~TIF_NEED_RESCHED;
	u32 run = (now - prev->timestamp) / (current_bonus(prev) ? current_bonus(prev) : 1);
	prev->sleep_avg = prev->sleep_avg > run ? prev->sleep_avg - run : 0;
	prev->timestamp = prev->last_ran = now;
	next->timestamp = now;
	rq->nr_switches++;
	rq->curr = next;
	(*count)++;
	if (!next->mm)
		next->active_mm = prev->active_mm; /* a kernel thread borrows the mm */
	rq->prev_mm = prev->mm ? 0 : prev->active_mm;
	unlock(&rq->lock);
}

/* The reader is about to block in recv: prepare_to_wait_exclusive, then
   schedule() from netperf to the idle task. */
void sched_sleep(void)
{
	HOOK_ONLY();
	struct task *p = &tasks[NETPERF];
	struct runqueue *rq = &rqs[APP_CPU];
	struct waiter *w = WAITER;
	lock(&sock0.wq_lock);
	w->task = p;
	if (w->list.next == &w->list)
		list_add_tail(&w->list, &sock0.wq_list);
	p->state = TASK_INTERRUPTIBLE;
	unlock(&sock0.wq_lock);
	u32 now = sched_clock();
	lock(&rq->lock);
	if (p->array) {
		rq->nr_running--;
		dequeue_task(p, p->array);
		p->array = 0;
	}
	rq->expired_timestamp = 0;
	switch_tasks(rq, p, rq->idle, now, &p->nvcsw);
}

/* try_to_wake_up(p, TASK_INTERRUPTIBLE, 0) for the reader. */
static void try_to_wake_up(struct task *p)
{
	struct runqueue *rq = &rqs[p->ti->cpu];
	lock(&rq->lock);
	u32 here = this_cpu();
	if (p->state & TASK_INTERRUPTIBLE && !p->array) {
		u32 now = sched_clock();
		if (p->ti->cpu != here) {
			/* source_load, target_load; now on the task's runqueue's clock */
			TOUCH(rq->cpu_load);
			TOUCH(rqs[here].cpu_load);
			TOUCH(rqs[here].nr_running);
			now = now - rqs[here].timestamp_last_tick + rq->timestamp_last_tick;
		}
		recalc_task_prio(p, now);
		if (!p->activated)
			p->activated = 2; /* woken from an interrupt */
		p->timestamp = now;
		enqueue_task(p, rq->active);
		rq->nr_running++;
		if (p->prio < rq->curr->prio)
			rq->curr->ti->flags |= TIF_NEED_RESCHED; /* resched_task */
	}
	p->state = TASK_RUNNING;
	unlock(&rq->lock);
}

/* sk_data_ready: wake_up_interruptible(sk->sk_sleep) if anyone waits. */
void sched_wake(void)
{
	HOOK_ONLY();
	lock(&sock0.wq_lock);
	struct list_head *e = sock0.wq_list.next;
	if (e != &sock0.wq_list)
		try_to_wake_up(((struct waiter *)((u8 *)e - 24))->task);
	unlock(&sock0.wq_lock);
}

/* The reader runs again: the idle task's schedule() picks it (woken by
   now, or here if the machine restarted its call before a wake came),
   then finish_wait takes its entry off the socket's queue. */
void sched_resume(void)
{
	HOOK_ONLY();
	struct runqueue *rq = &rqs[APP_CPU];
	struct task *prev = rq->curr;
	if (prev != rq->idle)
		return;
	if (!tasks[NETPERF].array)
		try_to_wake_up(&tasks[NETPERF]);
	u32 now = sched_clock();
	lock(&rq->lock);
	struct prio_array *a = rq->active;
	struct task *next = (struct task *)((u8 *)a->queue[find_first_bit(a->bitmap)].next - 56);
	if (next->activated > 0) {
		u32 delta = now - next->timestamp;
		if (next->activated == 1)
			delta = delta * (30 * 128 / 100) / 128; /* ON_RUNQUEUE_WEIGHT */
		dequeue_task(next, a);
		recalc_task_prio(next, next->timestamp + delta);
		enqueue_task(next, a);
	}
	next->activated = 0;
	switch_tasks(rq, prev, next, now, &prev->nivcsw);
	struct waiter *w = WAITER;
	lock(&sock0.wq_lock);
	list_del(&w->list);
	list_init(&w->list);
	unlock(&sock0.wq_lock);
}

/* scheduler_tick on `cpu`, then rebalance_tick's load average. */
void scheduler_tick(u32 cpu)
{
	HOOK_ONLY();
	if (cpu >= NCPU)
		return;
	struct runqueue *rq = &rqs[cpu];
	struct task *p = rq->curr;
	rq->timestamp_last_tick = sched_clock();
	if (p == rq->idle) {
		lock(&rq->lock); /* wake_priority_sleeper (CONFIG_SCHED_SMT) */
		if (rq->nr_running)
			p->ti->flags |= TIF_NEED_RESCHED;
		unlock(&rq->lock);
	} else if (p->array == rq->active) {
		lock(&rq->lock);
		if (!--p->time_slice) {
			dequeue_task(p, rq->active);
			p->ti->flags |= TIF_NEED_RESCHED;
			p->prio = effective_prio(p);
			p->time_slice = DEF_TIMESLICE;
			p->first_time_slice = 0;
			if (!rq->expired_timestamp)
				rq->expired_timestamp = jiffies;
			enqueue_task(p, rq->active); /* interactive: stays active */
		}
		unlock(&rq->lock);
	}
	u32 load = rq->nr_running * 128; /* SCHED_LOAD_SCALE */
	u32 old = rq->cpu_load + (load > rq->cpu_load);
	rq->cpu_load = (old + load) / 2;
}

static void init_array(struct prio_array *a)
{
	for (u32 i = 0; i < MAX_PRIO; i++)
		list_init(&a->queue[i]);
	/* the delimiter bit at MAX_PRIO, set by sched_init */
	a->bitmap[MAX_PRIO / 32] |= 1u << (MAX_PRIO % 32);
}

/* sched_init: each CPU's runqueue with its idle task; netperf runnable on
   APP_CPU, running. */
void sched_init(void)
{
	HOOK_ONLY();
	for (u32 t = 0; t < NTASK; t++) {
		struct task *p = &tasks[t];
		p->ti = &stacks[t].ti;
		p->ti->cpu = t == NETPERF ? APP_CPU : t - IDLE0;
		p->static_prio = p->prio = t == NETPERF ? NICE_0 : MAX_PRIO;
		p->time_slice = DEF_TIMESLICE;
		p->mm = p->active_mm = t == NETPERF ? 1 : 0;
		p->cpus_allowed = (1u << NCPU) - 1;
		p->state = TASK_RUNNING;
	}
	for (u32 c = 0; c < NCPU; c++) {
		struct runqueue *rq = &rqs[c];
		init_array(&rq->array0);
		init_array(&rq->array1);
		rq->active = &rq->array0;
		rq->expired = &rq->array1;
		rq->best_expired_prio = MAX_PRIO;
		rq->idle = rq->curr = &tasks[IDLE0 + c];
	}
	list_init(&sock0.wq_list);
	list_init(&WAITER->list);
	struct runqueue *rq = &rqs[APP_CPU];
	enqueue_task(&tasks[NETPERF], rq->active);
	rq->nr_running = 1;
	rq->curr = &tasks[NETPERF];
}
