// SPDX-License-Identifier: GPL-2.0
/*
 * ktimers benchmark: ktimers, hrtimers and the timer wheel side by side
 *
 * The 2005 posting argued that a time-ordered tree of timers costs a little
 * more per operation than the timer wheel but saves the cascade.  6.12 has
 * both competitors in the same kernel, so one boot runs the same workloads
 * on the three APIs:
 *
 *  - start_stop: start and cancel one timer while n others are pending;
 *  - modify:     re-arm a pending timer among n;
 *  - start_stop_inorder, modify_inorder: the same with timers armed in
 *		  the order they expire, as timeouts of now + a constant are,
 *		  and each new expiry after every pending one;
 *  - expiry:     n timers due at the same time, callbacks per second,
 *		  and the events of the run from its first interrupt on;
 *  - latency:    n timers at random sub-jiffy offsets over 25 jiffies,
 *		  callback time minus the requested expiry (low-resolution
 *		  boots: the bound is one jiffy);
 *  - wakeups:    1,000 timers at random offsets over 25 jiffies, all armed
 *		  at once, while the CPU idles: clock-event interrupts and
 *		  reprograms per 1,000 timers;
 *  - size:       the timer structures, the elements the benchmark embeds
 *		  them in, and the per-CPU bases.
 *
 * A ktimer keeps every field of the 2005 API, so its element is larger than
 * an hrtimer's.  start_stop and modify therefore also run on hrtimers in
 * elements padded to the ktimer element's size and alignment
 * ("hrtimer_padded"): the same memory per timer and the same allocation
 * pattern, which leaves the code as the only difference (in expiry they
 * are soft, the ktimer's peer there).  The soft hrtimer
 * runs every workload too, since ktimers run their callbacks in a softirq
 * as it does.
 *
 * Besides time, every workload counts events, which do not depend on the
 * machine's speed and compare exactly: how often the CPU's clock event
 * device was programmed (reprograms) and how often it interrupted, per
 * 1,000 operations or timers.  The counts come from wrappers around CPU
 * 0's tick device callbacks, installed for the benchmark's run only.
 *
 * Everything runs in one kthread bound to CPU 0; every timer is pinned
 * there (KTIMER bases are per-CPU, HRTIMER_MODE_*_PINNED, TIMER_PINNED),
 * and every measured batch runs with interrupts disabled, the same way for
 * the three.  Expiries come from one seeded generator, so each API sees the
 * same sequence; start_stop and modify give the APIs turns batch by batch.
 * The results are printed as "ktimer_bench: ..." lines of
 * key=value pairs; timing never decides anything here.  The ratios within
 * one boot are the result: under software emulation the absolute figures
 * mean little, and natively (User Mode Linux) they depend on the host.
 * Costs are printed in nanoseconds with three decimals: a batch of 4,096
 * operations makes them exact to well below 1% even with UML's 256 ns
 * clocksource.
 *
 * Runs at boot when the kernel is started with ktimer_bench.run=1.
 */

#define pr_fmt(fmt) "ktimer_bench: " fmt

#include <linux/completion.h>
#include <linux/clockchips.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/ktimer.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/timer.h>

#include "ktimer_internal.h"
#include "tick-internal.h"

static bool run;
module_param(run, bool, 0444);
MODULE_PARM_DESC(run, "run the ktimers benchmark at boot");

static unsigned long max_n = 1000000;
module_param(max_n, ulong, 0444);
MODULE_PARM_DESC(max_n, "skip workloads with more timers than this");

#define BENCH_BATCH		4096	/* operations per timed batch */
#define BENCH_BATCHES		101	/* timed batches per figure */
#define BENCH_SEED		20050919
#define BENCH_LATENCY_N		10000
#define BENCH_WAKEUPS_N		1000
/* Far enough to never expire during a run */
#define BENCH_FAR_NS		(3600LL * NSEC_PER_SEC)
/* Arming the expiry timers must end before they are due */
#define BENCH_LEAD_NS		(40LL * NSEC_PER_MSEC)
#define BENCH_ARM_NS_EACH	(5LL * NSEC_PER_USEC)
/* The latency timers are due over this many jiffies */
#define BENCH_SPREAD_JIFFIES	25

/* Every decade from 100: cost against log2(n) shows where caches bend it */
static const unsigned long bench_sizes[] = {
	0, 100, 1000, 10000, 100000, 1000000,
};

static const unsigned long expiry_sizes[] = { 100, 10000, 100000 };

/* The state the callbacks of one expiry or latency run report to */
static struct {
	atomic_t	fired;
	unsigned long	expect;
	s64		*lateness;	/* one per timer, in firing order */
	ktime_t		first;
	ktime_t		last;
	struct completion done;
} bench;

static void bench_fired(ktime_t target)
{
	ktime_t now = ktime_get();
	unsigned long i = atomic_inc_return(&bench.fired) - 1;

	if (i >= bench.expect)
		return;
	if (bench.lateness)
		bench.lateness[i] = ktime_sub(now, target);
	if (!i)
		bench.first = now;
	bench.last = now;
	if (i + 1 == bench.expect)
		complete(&bench.done);
}

/* ---- event counts: CPU 0's clock event device, wrapped during the run ---- */

/*
 * The original callbacks of the tick device and what the wrappers counted.
 * Only CPU 0, where the benchmark runs, programs and takes interrupts from
 * this device, so plain counters do.
 */
static struct {
	struct clock_event_device *dev;
	int (*set_next_event)(unsigned long evt, struct clock_event_device *dev);
	int (*set_next_ktime)(ktime_t expires, struct clock_event_device *dev);
	void (*event_handler)(struct clock_event_device *dev);
	unsigned long reprograms;
	unsigned long interrupts;
} events;

struct bench_counts {
	unsigned long reprograms;
	unsigned long interrupts;
};

static int count_set_next_event(unsigned long evt,
				struct clock_event_device *dev)
{
	events.reprograms++;
	return events.set_next_event(evt, dev);
}

static int count_set_next_ktime(ktime_t expires, struct clock_event_device *dev)
{
	events.reprograms++;
	return events.set_next_ktime(expires, dev);
}

/*
 * An expiry run counts the events from the first interrupt at or after
 * its due time: the idle wait before it, which the arming lead makes long,
 * counts whatever else wakes the CPU (workqueues, RCU), not the timers.
 */
static struct {
	ktime_t			due;	/* 0: not watching */
	bool			seen;
	struct bench_counts	at;	/* the counts just before that interrupt */
} due_watch;

static void count_event_handler(struct clock_event_device *dev)
{
	if (due_watch.due && !due_watch.seen && ktime_get() >= due_watch.due) {
		due_watch.seen = true;
		due_watch.at.reprograms = events.reprograms;
		due_watch.at.interrupts = events.interrupts;
	}
	events.interrupts++;
	events.event_handler(dev);
}

/* Wrap this CPU's tick device; false if it has none to wrap */
static bool events_attach(void)
{
	struct clock_event_device *dev;
	unsigned long flags;

	local_irq_save(flags);
	dev = tick_get_device(smp_processor_id())->evtdev;
	if (dev && dev->event_handler) {
		events.dev = dev;
		events.set_next_event = dev->set_next_event;
		events.set_next_ktime = dev->set_next_ktime;
		events.event_handler = dev->event_handler;
		if (dev->set_next_event)
			dev->set_next_event = count_set_next_event;
		if (dev->set_next_ktime)
			dev->set_next_ktime = count_set_next_ktime;
		dev->event_handler = count_event_handler;
	}
	local_irq_restore(flags);
	return events.dev;
}

/*
 * Put the device's callbacks back, each only if it is still the wrapper:
 * a tick mode switch during the run (low to high resolution) replaces the
 * handler, and that one must stay.
 */
static void events_detach(void)
{
	struct clock_event_device *dev = events.dev;
	unsigned long flags;

	if (!dev)
		return;
	local_irq_save(flags);
	if (dev->set_next_event == count_set_next_event)
		dev->set_next_event = events.set_next_event;
	if (dev->set_next_ktime == count_set_next_ktime)
		dev->set_next_ktime = events.set_next_ktime;
	if (dev->event_handler == count_event_handler)
		dev->event_handler = events.event_handler;
	else
		pr_info("note the tick device's handler changed during the run: interrupt counts are incomplete\n");
	local_irq_restore(flags);
}

static void counts_now(struct bench_counts *c)
{
	c->reprograms = READ_ONCE(events.reprograms);
	c->interrupts = READ_ONCE(events.interrupts);
}

/* @to - @from, added to @sum */
static void counts_add(struct bench_counts *sum, const struct bench_counts *from,
		       const struct bench_counts *to)
{
	sum->reprograms += to->reprograms - from->reprograms;
	sum->interrupts += to->interrupts - from->interrupts;
}

/* "<count per 1,000 of @ops>" with three decimals, into @buf */
static const char *per_1k(char *buf, size_t size, u64 count, u64 ops)
{
	u64 milli = ops ? div64_u64(count * 1000000, ops) : 0;
	u32 frac;
	u64 whole = div_u64_rem(milli, 1000, &frac);

	snprintf(buf, size, "%llu.%03u", whole, frac);
	return buf;
}

/* ---- the three APIs behind one set of operations ---- */

/* Expiry in both units, so that no API pays for a conversion in a batch */
struct bench_expiry {
	ktime_t		ns;		/* CLOCK_MONOTONIC */
	unsigned long	jiffies;	/* not before .ns */
};

struct bench_api {
	const char	*name;
	unsigned int	size;			/* of one element */
	unsigned int	timer_size;		/* of the API's timer struct */
	unsigned int	percpu_size;		/* 0: not visible from here */
	void		(*init)(void *elem);
	void		(*arm)(void *elem, const struct bench_expiry *e);
	void		(*cancel)(void *elem);
	void		(*destroy)(void *elem);
};

struct bench_ktimer {
	struct ktimer	timer;
	ktime_t		target;
};

static void bench_ktimer_fn(void *data)
{
	struct bench_ktimer *e = data;

	bench_fired(e->target);
}

static void bench_ktimer_init(void *elem)
{
	struct bench_ktimer *e = elem;

	init_ktimer_mono(&e->timer);
	e->timer.function = bench_ktimer_fn;
	e->timer.data = e;
}

/* NOCHECK: an expiry the arming loop has passed fires at once, as with the others */
static void bench_ktimer_arm(void *elem, const struct bench_expiry *exp)
{
	struct bench_ktimer *e = elem;

	e->target = exp->ns;
	modify_ktimer(&e->timer, &exp->ns, KTIMER_ABS | KTIMER_NOCHECK);
}

static void bench_ktimer_cancel(void *elem)
{
	struct bench_ktimer *e = elem;

	try_to_stop_ktimer(&e->timer);
}

static void bench_ktimer_destroy(void *elem)
{
	struct bench_ktimer *e = elem;

	stop_ktimer(&e->timer);
}

struct bench_hrtimer {
	struct hrtimer	timer;
	ktime_t		target;
};

static enum hrtimer_restart bench_hrtimer_fn(struct hrtimer *timer)
{
	struct bench_hrtimer *e = container_of(timer, struct bench_hrtimer, timer);

	bench_fired(e->target);
	return HRTIMER_NORESTART;
}

static void bench_hrtimer_setup(void *elem, clockid_t clock,
				enum hrtimer_mode mode)
{
	struct bench_hrtimer *e = elem;

	hrtimer_init(&e->timer, clock, mode);
	e->timer.function = bench_hrtimer_fn;
}

static void bench_hrtimer_init(void *elem)
{
	bench_hrtimer_setup(elem, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_PINNED);
}

static void bench_hrtimer_soft_init(void *elem)
{
	bench_hrtimer_setup(elem, CLOCK_MONOTONIC,
			    HRTIMER_MODE_ABS_PINNED_SOFT);
}

/*
 * The padded hrtimers are pending together with the plain ones, so they
 * need a tree of their own: on the hard CLOCK_MONOTONIC base each would
 * walk a tree of 2n.  The hard CLOCK_BOOTTIME base runs the same code;
 * only start_stop and modify use it, whose expiries are an hour or more
 * away, so that its offset from CLOCK_MONOTONIC (0 until a suspend) does
 * not matter.
 */
static void bench_hrtimer_padded_init(void *elem)
{
	bench_hrtimer_setup(elem, CLOCK_BOOTTIME, HRTIMER_MODE_ABS_PINNED);
}

static void bench_hrtimer_arm(void *elem, const struct bench_expiry *exp)
{
	struct bench_hrtimer *e = elem;

	e->target = exp->ns;
	hrtimer_start(&e->timer, exp->ns, HRTIMER_MODE_ABS_PINNED);
}

static void bench_hrtimer_soft_arm(void *elem, const struct bench_expiry *exp)
{
	struct bench_hrtimer *e = elem;

	e->target = exp->ns;
	hrtimer_start(&e->timer, exp->ns, HRTIMER_MODE_ABS_PINNED_SOFT);
}

static void bench_hrtimer_cancel(void *elem)
{
	struct bench_hrtimer *e = elem;

	hrtimer_try_to_cancel(&e->timer);
}

static void bench_hrtimer_destroy(void *elem)
{
	struct bench_hrtimer *e = elem;

	hrtimer_cancel(&e->timer);
}

struct bench_wheel {
	struct timer_list timer;
	ktime_t		target;
};

static void bench_wheel_fn(struct timer_list *timer)
{
	struct bench_wheel *e = from_timer(e, timer, timer);

	bench_fired(e->target);
}

static void bench_wheel_init(void *elem)
{
	struct bench_wheel *e = elem;

	timer_setup(&e->timer, bench_wheel_fn, TIMER_PINNED);
}

static void bench_wheel_arm(void *elem, const struct bench_expiry *exp)
{
	struct bench_wheel *e = elem;

	e->target = exp->ns;
	mod_timer(&e->timer, exp->jiffies);
}

static void bench_wheel_cancel(void *elem)
{
	struct bench_wheel *e = elem;

	timer_delete(&e->timer);
}

static void bench_wheel_destroy(void *elem)
{
	struct bench_wheel *e = elem;

	timer_shutdown_sync(&e->timer);
}

/*
 * hrtimers in slots of the ktimer element's size and alignment: one page
 * holds as many as it holds ktimer elements, and the tree's nodes are as
 * far apart in memory, so the cache footprint is the same.
 */
#define BENCH_EQUAL_ALIGN	MAX(__alignof__(struct bench_ktimer), \
				    __alignof__(struct bench_hrtimer))
#define BENCH_EQUAL_SIZE	ALIGN(MAX(sizeof(struct bench_ktimer), \
					  sizeof(struct bench_hrtimer)), \
				      BENCH_EQUAL_ALIGN)

static const struct bench_api api_ktimer = {
	.name = "ktimer",
	.size = sizeof(struct bench_ktimer),
	.timer_size = sizeof(struct ktimer),
	.percpu_size = sizeof(struct ktimer_cpu_bases),
	.init = bench_ktimer_init,
	.arm = bench_ktimer_arm,
	.cancel = bench_ktimer_cancel,
	.destroy = bench_ktimer_destroy,
};

/* The hrtimer APIs differ in element size, clock base and callback context */
#define BENCH_HRTIMER_API(_name, _size, _init, _arm) {		\
	.name = _name,							\
	.size = _size,							\
	.timer_size = sizeof(struct hrtimer),				\
	.percpu_size = sizeof(struct hrtimer_cpu_base),		\
	.init = _init,							\
	.arm = _arm,							\
	.cancel = bench_hrtimer_cancel,					\
	.destroy = bench_hrtimer_destroy,				\
}

static const struct bench_api api_hrtimer =
	BENCH_HRTIMER_API("hrtimer", sizeof(struct bench_hrtimer),
			  bench_hrtimer_init, bench_hrtimer_arm);

static const struct bench_api api_hrtimer_padded =
	BENCH_HRTIMER_API("hrtimer_padded", BENCH_EQUAL_SIZE,
			  bench_hrtimer_padded_init, bench_hrtimer_arm);

/*
 * The padded hrtimers of the expiry workload: soft, the peer there, on the
 * CLOCK_MONOTONIC soft base, which no other pool shares in that workload.
 */
static const struct bench_api api_hrtimer_padded_soft =
	BENCH_HRTIMER_API("hrtimer_padded", BENCH_EQUAL_SIZE,
			  bench_hrtimer_soft_init, bench_hrtimer_soft_arm);

/* Callbacks in the softirq, where ktimers run theirs */
static const struct bench_api api_hrtimer_soft =
	BENCH_HRTIMER_API("hrtimer_soft", sizeof(struct bench_hrtimer),
			  bench_hrtimer_soft_init, bench_hrtimer_soft_arm);

/* The wheel's per-CPU bases are private to timer.c */
static const struct bench_api api_wheel = {
	.name = "timer_list",
	.size = sizeof(struct bench_wheel),
	.timer_size = sizeof(struct timer_list),
	.init = bench_wheel_init,
	.arm = bench_wheel_arm,
	.cancel = bench_wheel_cancel,
	.destroy = bench_wheel_destroy,
};

/* The APIs of start_stop and modify, and of the sizes */
static const struct bench_api *const bench_apis[] = {
	&api_ktimer, &api_hrtimer, &api_hrtimer_padded, &api_hrtimer_soft,
	&api_wheel,
};

/* ---- timers by the million: page-sized chunks, no large vmalloc ---- */

struct bench_pool {
	const struct bench_api *api;
	void		**pages;
	unsigned long	npages;
	unsigned long	n;
	unsigned int	per_page;
};

static void *pool_at(const struct bench_pool *pool, unsigned long i)
{
	return pool->pages[i / pool->per_page] +
	       (i % pool->per_page) * pool->api->size;
}

static void pool_free(struct bench_pool *pool)
{
	unsigned long i;

	for (i = 0; i < pool->npages && pool->pages[i]; i++) {
		free_page((unsigned long)pool->pages[i]);
		if (!(i % 1024))
			cond_resched();
	}
	kvfree(pool->pages);
	pool->pages = NULL;
}

/* @n elements of @api, initialised; destroyed again by pool_release() */
static int pool_get(struct bench_pool *pool, const struct bench_api *api,
		    unsigned long n)
{
	unsigned long i;

	pool->api = api;
	pool->n = n;
	pool->per_page = PAGE_SIZE / api->size;
	pool->npages = DIV_ROUND_UP(n, pool->per_page);
	pool->pages = kvcalloc(max(pool->npages, 1UL), sizeof(void *),
			       GFP_KERNEL | __GFP_NOWARN);
	if (!pool->pages)
		return -ENOMEM;
	for (i = 0; i < pool->npages; i++) {
		pool->pages[i] = (void *)__get_free_page(GFP_KERNEL |
							 __GFP_NOWARN);
		if (!pool->pages[i]) {
			pool_free(pool);
			return -ENOMEM;
		}
	}
	for (i = 0; i < n; i++) {
		api->init(pool_at(pool, i));
		if (!(i % 1024))
			cond_resched();
	}
	return 0;
}

static void pool_release(struct bench_pool *pool)
{
	unsigned long i;

	for (i = 0; i < pool->n; i++) {
		pool->api->destroy(pool_at(pool, i));
		if (!(i % 1024))
			cond_resched();
	}
	pool_free(pool);
}

/* ---- expiries ---- */

/* The clock and jiffies read together, to convert expiries outside batches */
struct bench_epoch {
	ktime_t		ns;
	unsigned long	jiffies;
};

static void epoch_now(struct bench_epoch *epoch)
{
	epoch->jiffies = jiffies;
	epoch->ns = ktime_get();
}

/*
 * @offset ns after @epoch.  For the wheel, the offset rounded up to
 * jiffies: the wheel adds the jiffy that covers the current one having
 * begun before @epoch itself (calc_index() in timer.c rounds up).
 */
static void expiry_at(struct bench_expiry *exp, const struct bench_epoch *epoch,
		      s64 offset)
{
	exp->ns = ktime_add_ns(epoch->ns, offset);
	exp->jiffies = epoch->jiffies +
		       nsecs_to_jiffies(offset + TICK_NSEC - 1);
}

static s64 random_offset(struct rnd_state *rnd, s64 from, s64 span)
{
	u64 r = ((u64)prandom_u32_state(rnd) << 32) | prandom_u32_state(rnd);

	return from + (s64)div64_u64(r, div64_u64(U64_MAX, span) + 1);
}

enum bench_op { BENCH_START_STOP, BENCH_MODIFY };

/* Random expiries make the tree walk's branches unpredictable; in order, they are not */
enum bench_keys { BENCH_RANDOM, BENCH_IN_ORDER };

static const char *const op_names[][2] = {
	[BENCH_START_STOP] = { "start_stop", "start_stop_inorder" },
	[BENCH_MODIFY] = { "modify", "modify_inorder" },
};

/*
 * Offset of the i-th expiry: random over an hour, an hour ahead; in order,
 * 1 us apart for the n pending timers and two hours ahead for the measured
 * one, later than every pending one.
 */
static s64 key_offset(enum bench_keys keys, struct rnd_state *rnd,
		      unsigned long i, bool measured)
{
	if (keys == BENCH_RANDOM)
		return random_offset(rnd, BENCH_FAR_NS, BENCH_FAR_NS);
	return (measured ? 2 * BENCH_FAR_NS : BENCH_FAR_NS) +
	       (s64)i * NSEC_PER_USEC;
}

/* Queue all n elements far in the future, at the same expiries for each API */
static void arm_background(struct bench_pool *pool, const struct bench_epoch *epoch,
			   enum bench_keys keys)
{
	struct rnd_state rnd;
	struct bench_expiry exp;
	unsigned long i;

	prandom_seed_state(&rnd, BENCH_SEED);
	for (i = 0; i < pool->n; i++) {
		expiry_at(&exp, epoch, key_offset(keys, &rnd, i, false));
		pool->api->arm(pool_at(pool, i), &exp);
		if (!(i % 1024))
			cond_resched();
	}
}

/* ---- figures ---- */

static int cmp_s64(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return x < y ? -1 : x > y;
}

/* The value below which @permille of the sorted @v fall */
static s64 quantile(const s64 *v, unsigned long n, unsigned int permille)
{
	return v[div_u64((u64)(n - 1) * permille, 1000)];
}

/* ---- workloads ---- */

/* Too big for the stack of a 32-bit kernel; one benchmark thread uses them */
static struct bench_expiry batch_exps[BENCH_BATCH];
static s64 batch_costs[ARRAY_SIZE(bench_apis)][BENCH_BATCHES];
static struct bench_counts batch_counts[ARRAY_SIZE(bench_apis)];
static struct bench_pool batch_pools[ARRAY_SIZE(bench_apis)];

/* "<ps / 1000>" with three decimals, into @buf */
static const char *ps_as_ns(char *buf, size_t size, s64 ps)
{
	s32 frac;
	s64 whole = div_s64_rem(ps, 1000, &frac);

	snprintf(buf, size, "%lld.%03d", whole, abs(frac));
	return buf;
}

/* One timed batch: picoseconds per operation; its events added to @counts */
static s64 timed_batch(const struct bench_api *api, void *elem,
		       const struct bench_expiry *exps, enum bench_op op,
		       struct bench_counts *counts)
{
	struct bench_counts before, after;
	unsigned long flags;
	ktime_t start, end;
	int i;

	local_irq_save(flags);
	counts_now(&before);
	start = ktime_get();
	for (i = 0; i < BENCH_BATCH; i++) {
		api->arm(elem, &exps[i]);
		if (op == BENCH_START_STOP)
			api->cancel(elem);
	}
	end = ktime_get();
	counts_now(&after);
	local_irq_restore(flags);
	counts_add(counts, &before, &after);
	return div_s64(ktime_sub(end, start) * 1000, BENCH_BATCH);
}

/*
 * start_stop or modify of one more timer while @n others are pending, for
 * every API at once: the APIs take turns batch by batch, each starting
 * the round in turn, on the same expiries, so that a slow spell of the
 * host (under emulation, seconds of it are common) costs them all alike
 * instead of falling on whichever API ran then.
 */
static void bench_ops(enum bench_op op, enum bench_keys keys, unsigned long n)
{
	const char *name = op_names[op][keys];
	const unsigned int napis = ARRAY_SIZE(bench_apis);
	struct bench_expiry *exps = batch_exps;
	struct bench_pool *pools = batch_pools;
	struct bench_epoch epoch;
	struct rnd_state rnd;
	unsigned int a, k;
	int r, i;

	epoch_now(&epoch);
	memset(batch_counts, 0, sizeof(batch_counts));
	for (a = 0; a < napis; a++) {
		struct bench_pool *pool = &pools[a];

		if (n > max_n || pool_get(pool, bench_apis[a], n + 1)) {
			pr_info("skip workload=%s api=%s n=%lu reason=%s\n",
				name, bench_apis[a]->name, n,
				n > max_n ? "max_n" : "nomem");
			pool->api = NULL;
			continue;
		}
		pool->n = n;		/* the last element is measured */
		arm_background(pool, &epoch, keys);
		pool->n = n + 1;
	}

	prandom_seed_state(&rnd, BENCH_SEED + 1);
	expiry_at(&exps[0], &epoch, BENCH_FAR_NS);
	for (a = 0; a < napis; a++)
		if (pools[a].api && op == BENCH_MODIFY)
			pools[a].api->arm(pool_at(&pools[a], n), &exps[0]);
	for (r = 0; r < BENCH_BATCHES; r++) {
		for (i = 0; i < BENCH_BATCH; i++)
			expiry_at(&exps[i], &epoch,
				  key_offset(keys, &rnd, (u64)r * BENCH_BATCH + i, true));
		for (k = 0; k < napis; k++) {
			unsigned int at = (r + k) % napis;
			struct bench_pool *pool = &pools[at];

			if (pool->api)
				batch_costs[at][r] =
					timed_batch(pool->api, pool_at(pool, n),
						    exps, op, &batch_counts[at]);
		}
		cond_resched();
	}

	for (a = 0; a < napis; a++) {
		const u64 ops = (u64)BENCH_BATCH * BENCH_BATCHES;
		s64 *costs = batch_costs[a];
		char median[24], p99[24], reprograms[24];

		if (!pools[a].api)
			continue;
		pool_release(&pools[a]);
		sort(costs, BENCH_BATCHES, sizeof(*costs), cmp_s64, NULL);
		pr_info("result workload=%s api=%s n=%lu median_ns=%s p99_ns=%s reprograms_per_1k=%s\n",
			name, bench_apis[a]->name, n,
			ps_as_ns(median, sizeof(median),
				 quantile(costs, BENCH_BATCHES, 500)),
			ps_as_ns(p99, sizeof(p99),
				 quantile(costs, BENCH_BATCHES, 990)),
			per_1k(reprograms, sizeof(reprograms),
			       batch_counts[a].reprograms, ops));
	}
}

static void fire_begin(unsigned long n)
{
	atomic_set(&bench.fired, 0);
	bench.expect = n;
	reinit_completion(&bench.done);
}

/* Wait for the callbacks of fire_begin(); returns how many ran */
static unsigned long fire_wait(struct bench_pool *pool, s64 until_ns)
{
	s64 wait_ns = until_ns - ktime_get() + 30LL * NSEC_PER_SEC;

	wait_for_completion_timeout(&bench.done,
				    nsecs_to_jiffies(max(wait_ns, 0LL)) + 1);
	return min_t(unsigned long, atomic_read(&bench.fired), pool->n);
}

/* Arm all of @pool's timers for one instant, far enough for the arming */
static unsigned long fire_at_once(struct bench_pool *pool)
{
	s64 lead = BENCH_LEAD_NS + BENCH_ARM_NS_EACH * (s64)pool->n;
	struct bench_epoch epoch;
	struct bench_expiry exp;
	unsigned long i;

	fire_begin(pool->n);
	epoch_now(&epoch);
	expiry_at(&exp, &epoch, lead);
	due_watch.seen = false;
	WRITE_ONCE(due_watch.due, exp.ns);
	for (i = 0; i < pool->n; i++) {
		pool->api->arm(pool_at(pool, i), &exp);
		if (!(i % 1024))
			cond_resched();
	}
	return fire_wait(pool, exp.ns);
}

/*
 * Arm @pool's timers at random offsets below @spread, each one only two
 * jiffies before it is due: the wheel keeps timers that close in its
 * first level, where it is exact to the jiffy, and the other APIs do not
 * care how early they are armed.
 */
static unsigned long fire_spread(struct bench_pool *pool, s64 *offsets,
				 s64 spread)
{
	const s64 lead = 2 * (s64)TICK_NSEC;
	struct bench_epoch epoch;
	struct bench_expiry exp;
	struct rnd_state rnd;
	unsigned long i;

	prandom_seed_state(&rnd, BENCH_SEED + 2);
	for (i = 0; i < pool->n; i++)
		offsets[i] = random_offset(&rnd, lead, spread);
	sort(offsets, pool->n, sizeof(*offsets), cmp_s64, NULL);

	fire_begin(pool->n);
	epoch_now(&epoch);
	for (i = 0; i < pool->n; i++) {
		while (ktime_sub(ktime_get(), epoch.ns) < offsets[i] - lead)
			usleep_range(50, 100);
		expiry_at(&exp, &epoch, offsets[i]);
		pool->api->arm(pool_at(pool, i), &exp);
	}
	return fire_wait(pool, exp.ns);
}

/* n timers due at once: callbacks per second from the first to the last */
static void bench_expiry(const struct bench_api *api, unsigned long n)
{
	struct bench_counts before, after, counts = {};
	char reprograms[24], interrupts[24];
	struct bench_pool pool;
	unsigned long fired;
	s64 span;

	if (n > max_n || pool_get(&pool, api, n)) {
		pr_info("skip workload=expiry api=%s n=%lu reason=%s\n",
			api->name, n, n > max_n ? "max_n" : "nomem");
		return;
	}
	bench.lateness = NULL;
	counts_now(&before);
	fired = fire_at_once(&pool);
	counts_now(&after);
	WRITE_ONCE(due_watch.due, 0);
	/* No interrupt at or after the due time seen: count it all */
	counts_add(&counts, due_watch.seen ? &due_watch.at : &before, &after);
	span = ktime_sub(bench.last, bench.first);
	pool_release(&pool);

	pr_info("result workload=expiry api=%s n=%lu callbacks_per_s=%llu span_ns=%lld fired=%lu reprograms_per_1k=%s interrupts_per_1k=%s\n",
		api->name, n,
		fired > 1 && span > 0 ?
		div64_u64((u64)(fired - 1) * NSEC_PER_SEC, span) : 0,
		span, fired,
		per_1k(reprograms, sizeof(reprograms), counts.reprograms, n),
		per_1k(interrupts, sizeof(interrupts), counts.interrupts, n));
}

/*
 * 1,000 timers at random offsets over 25 jiffies, armed at once, while
 * this thread sleeps and the CPU idles: how often the CPU was woken and
 * its clock event device programmed, per 1,000 timers.
 */
static void bench_wakeups(const struct bench_api *api)
{
	const unsigned long n = BENCH_WAKEUPS_N;
	const s64 lead = 2 * (s64)TICK_NSEC;
	const s64 spread = BENCH_SPREAD_JIFFIES * (s64)TICK_NSEC;
	struct bench_counts before, after, counts = {};
	char reprograms[24], interrupts[24];
	struct bench_epoch epoch;
	struct bench_expiry exp;
	struct bench_pool pool;
	struct rnd_state rnd;
	unsigned long fired, i;
	ktime_t last = 0;

	if (pool_get(&pool, api, n)) {
		pr_info("skip workload=wakeups api=%s n=%lu reason=nomem\n",
			api->name, n);
		return;
	}
	prandom_seed_state(&rnd, BENCH_SEED + 3);
	bench.lateness = NULL;
	fire_begin(n);
	counts_now(&before);
	epoch_now(&epoch);
	for (i = 0; i < n; i++) {
		s64 offset = random_offset(&rnd, lead, spread);

		expiry_at(&exp, &epoch, offset);
		pool.api->arm(pool_at(&pool, i), &exp);
		last = max(last, exp.ns);
	}
	fired = fire_wait(&pool, last);
	counts_now(&after);
	counts_add(&counts, &before, &after);
	pool_release(&pool);

	pr_info("result workload=wakeups api=%s n=%lu interrupts_per_1k=%s reprograms_per_1k=%s fired=%lu\n",
		api->name, n,
		per_1k(interrupts, sizeof(interrupts), counts.interrupts, n),
		per_1k(reprograms, sizeof(reprograms), counts.reprograms, n),
		fired);
}

/* Callback time minus requested expiry, timers spread over 25 jiffies */
static void bench_latency(const struct bench_api *api)
{
	const unsigned long n = BENCH_LATENCY_N;
	struct bench_pool pool;
	unsigned long fired;
	s64 *lateness, *offsets;

	lateness = kvcalloc(n, sizeof(*lateness), GFP_KERNEL);
	offsets = kvcalloc(n, sizeof(*offsets), GFP_KERNEL);
	if (!lateness || !offsets || pool_get(&pool, api, n)) {
		pr_info("skip workload=latency api=%s n=%lu reason=nomem\n",
			api->name, n);
		goto out;
	}
	bench.lateness = lateness;
	fired = fire_spread(&pool, offsets,
			    BENCH_SPREAD_JIFFIES * (s64)TICK_NSEC);
	pool_release(&pool);
	bench.lateness = NULL;

	if (fired) {
		sort(lateness, fired, sizeof(*lateness), cmp_s64, NULL);
		pr_info("result workload=latency api=%s n=%lu p50_ns=%lld p99_ns=%lld max_ns=%lld min_ns=%lld fired=%lu\n",
			api->name, n, quantile(lateness, fired, 500),
			quantile(lateness, fired, 990), lateness[fired - 1],
			lateness[0], fired);
	} else {
		pr_info("result workload=latency api=%s n=%lu fired=0\n",
			api->name, n);
	}
out:
	kvfree(offsets);
	kvfree(lateness);
}

static DECLARE_COMPLETION(bench_finished);

/*
 * hrtimers switch to high resolution from the tick once the clocksource
 * allows it, which on x86 can be after this initcall (the TSC is refined
 * about a second into the boot).  Until then hrtimers run from the tick
 * and the clock event device belongs to it: wait, at most 10 s, so that
 * every workload runs in the mode the boot is about.
 */
static unsigned int wait_for_hres(void)
{
	unsigned long deadline = jiffies + 10 * HZ;
	unsigned int waited_ms = 0;

	if (!IS_ENABLED(CONFIG_HIGH_RES_TIMERS))
		return 0;
	/* A macro without CONFIG_HIGH_RES_TIMERS; msleep() makes it re-read */
	while (hrtimer_resolution != 1 &&
	       time_before(jiffies, deadline)) {
		msleep(20);
		waited_ms += 20;
	}
	return waited_ms;
}

/* Expiry workloads: the APIs above and hrtimers with softirq callbacks, as ktimers have */
static const struct bench_api *const expiry_apis[] = {
	&api_ktimer, &api_hrtimer, &api_hrtimer_padded_soft, &api_hrtimer_soft,
	&api_wheel,
};

static int ktimer_bench_thread(void *unused)
{
	unsigned int waited_ms = wait_for_hres();
	bool highres = ktimer_highres_enabled();
	ktime_t start = ktime_get();
	int a, i;

	init_completion(&bench.done);
	pr_info("begin version=3 engine=%s hz=%d cpu=%d ncpus=%u batch=%d batches=%d counts=%d hres=%d hres_wait_ms=%u\n",
		highres ? "highres" : "lowres", HZ, raw_smp_processor_id(),
		num_online_cpus(), BENCH_BATCH, BENCH_BATCHES,
		events_attach(), hrtimer_resolution == 1, waited_ms);
	for (a = 0; a < ARRAY_SIZE(bench_apis); a++)
		pr_info("size api=%s timer_bytes=%u elem_bytes=%u percpu_bytes=%d\n",
			bench_apis[a]->name, bench_apis[a]->timer_size,
			bench_apis[a]->size, bench_apis[a]->percpu_size ?
			(int)bench_apis[a]->percpu_size : -1);

	/* The costs do not depend on the engine: measured in the highres boot */
	if (highres) {
		for (i = 0; i < ARRAY_SIZE(bench_sizes); i++) {
			bench_ops(BENCH_START_STOP, BENCH_RANDOM, bench_sizes[i]);
			bench_ops(BENCH_MODIFY, BENCH_RANDOM, bench_sizes[i]);
		}
		for (i = 0; i < ARRAY_SIZE(bench_sizes); i++) {
			bench_ops(BENCH_START_STOP, BENCH_IN_ORDER, bench_sizes[i]);
			bench_ops(BENCH_MODIFY, BENCH_IN_ORDER, bench_sizes[i]);
		}
		for (i = 0; i < ARRAY_SIZE(expiry_sizes); i++)
			for (a = 0; a < ARRAY_SIZE(expiry_apis); a++)
				bench_expiry(expiry_apis[a], expiry_sizes[i]);
		bench_latency(&api_hrtimer);
		bench_latency(&api_hrtimer_soft);
		bench_wakeups(&api_hrtimer);
		bench_wakeups(&api_hrtimer_soft);
	}
	bench_latency(&api_ktimer);
	bench_latency(&api_wheel);
	bench_wakeups(&api_ktimer);
	bench_wakeups(&api_wheel);

	events_detach();
	pr_info("end elapsed_ms=%lld\n",
		ktime_to_ms(ktime_sub(ktime_get(), start)));
	complete(&bench_finished);
	return 0;
}

/* Boot waits for the figures: init does not compete with the benchmark */
static int __init ktimer_bench_init(void)
{
	struct task_struct *task;

	if (!run)
		return 0;
	task = kthread_create(ktimer_bench_thread, NULL, "ktimer_bench");
	if (IS_ERR(task)) {
		pr_err("cannot start the benchmark thread: %ld\n", PTR_ERR(task));
		return PTR_ERR(task);
	}
	kthread_bind(task, 0);
	wake_up_process(task);
	wait_for_completion(&bench_finished);
	return 0;
}
late_initcall(ktimer_bench_init);
