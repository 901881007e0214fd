// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for ktimers on the real CLOCK_MONOTONIC and CLOCK_REALTIME
 * bases: expiry through the softirq, NO_HZ idle wake-up, sleeping, and
 * callbacks running on one CPU while another CPU acts on their timer.
 *
 * These run under software emulation, so they check only lower bounds and
 * order; every wait has a generous upper bound (WAIT_LIMIT) that turns a
 * lost expiry into a failure instead of a hang.  Timing decides nothing.
 */

#include <kunit/test.h>
#include <kunit/visibility.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/ktimer.h>
#include <linux/mman.h>
#include <linux/sched.h>
#include <linux/restart_block.h>
#include <linux/sched/signal.h>
#include <linux/time.h>
#include <linux/timekeeping.h>

#include "ktimer_internal.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define MS		NSEC_PER_MSEC
#define WAIT_LIMIT	(30 * HZ)
#define SPIN_LIMIT_NS	(30LL * NSEC_PER_SEC)

struct real_timer {
	struct ktimer		timer;
	struct completion	done;
	ktime_t			(*now)(void);
	ktime_t			seen_now;
	ktime_t			seen_expires;
	int			fired;
	int			stop_after;	/* periodic: stop itself then */
	int			stop_ret;
	int			*order;		/* shared fire sequence */
	int			*norder;
	int			id;
};

static void real_callback(void *data)
{
	struct real_timer *rt = data;

	rt->seen_now = rt->now();
	rt->seen_expires = rt->timer.expires;
	rt->fired++;
	if (rt->order)
		rt->order[(*rt->norder)++] = rt->id;
	if (rt->stop_after && rt->fired == rt->stop_after)
		rt->stop_ret = stop_ktimer(&rt->timer);
	if (!rt->timer.interval || rt->fired == rt->stop_after)
		complete(&rt->done);
}

static void stop_timer_action(void *timer)
{
	stop_ktimer(timer);
}

/*
 * Stop @timer when the case ends, even when an assertion ends it early:
 * a timer must never stay queued in memory that the case frees.
 */
static void stop_at_exit(struct kunit *test, struct ktimer *timer)
{
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, stop_timer_action,
							timer), 0);
}

static void real_timer_init(struct kunit *test, struct real_timer *rt,
			    struct ktimer_clock *clock)
{
	memset(rt, 0, sizeof(*rt));
	ktimer_init(&rt->timer, clock);
	stop_at_exit(test, &rt->timer);
	rt->now = clock->get_time;
	rt->timer.function = real_callback;
	rt->timer.data = rt;
	init_completion(&rt->done);
}

/* The generic cases run on every registered clock, new ones included */
static const void *clock_gen_params(const void *prev, char *desc)
{
	struct ktimer_clock *clock = ktimer_next_clock(prev);

	if (clock)
		snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", clock->name);
	return clock;
}

static struct ktimer_clock *param_clock(struct kunit *test)
{
	return (struct ktimer_clock *)test->param_value;
}

static int pin_case_init(struct kunit *test)
{
	return set_cpus_allowed_ptr(current, cpumask_of(raw_smp_processor_id()));
}

/* Sleep on a ktimer: the API under test doubles as the delay */
static void ktimer_delay(struct kunit *test, ktime_t ns)
{
	struct ktimer sleeper;

	ktimer_init_on_stack(&sleeper, &ktimer_clock_monotonic);
	KUNIT_EXPECT_EQ(test, schedule_ktimer(&sleeper, &ns,
					      TASK_UNINTERRUPTIBLE, KTIMER_REL),
			0);
	destroy_ktimer_on_stack(&sleeper);
}

static void check_fires_after_expiry(struct kunit *test,
				     struct ktimer_clock *clock, ktime_t rel)
{
	struct real_timer *rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, rt);
	real_timer_init(test, rt, clock);
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt->timer, &rel, KTIMER_REL), 0);
	if (!wait_for_completion_timeout(&rt->done, WAIT_LIMIT)) {
		stop_ktimer(&rt->timer);
		KUNIT_FAIL(test, "timer did not fire within %d s",
			   WAIT_LIMIT / HZ);
		return;
	}
	KUNIT_EXPECT_EQ(test, rt->fired, 1);
	KUNIT_EXPECT_GE(test, rt->seen_now, rt->timer.expires);
	KUNIT_EXPECT_GE(test, rt->timer.expired, rt->timer.expires);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&rt->timer));
	KUNIT_EXPECT_EQ(test, stop_ktimer(&rt->timer), 0);
}

static void ktimer_fires_after_expiry_test(struct kunit *test)
{
	check_fires_after_expiry(test, param_clock(test), 2 * MS);
}

/* The test sleeps, its CPU goes idle and stops the tick: still woken */
static void ktimer_idle_cpu_wakes_test(struct kunit *test)
{
	check_fires_after_expiry(test, param_clock(test), 200 * MS);
}

static void ktimer_real_order_test(struct kunit *test)
{
	static const int offsets_ms[] = { 3, 1, 2, 5, 4 };
	struct real_timer *rt;
	int order[ARRAY_SIZE(offsets_ms)], norder = 0, i;
	ktime_t start;

	rt = kunit_kcalloc(test, ARRAY_SIZE(offsets_ms), sizeof(*rt),
			   GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rt);
	start = param_clock(test)->get_time();
	for (i = 0; i < ARRAY_SIZE(offsets_ms); i++) {
		/* one absolute base for all, so only the offsets decide */
		ktime_t t = start + offsets_ms[i] * MS;

		real_timer_init(test, &rt[i], param_clock(test));
		rt[i].id = offsets_ms[i];
		rt[i].order = order;
		rt[i].norder = &norder;
		KUNIT_ASSERT_EQ(test, start_ktimer(&rt[i].timer, &t,
						   KTIMER_ABS | KTIMER_NOCHECK), 0);
	}
	for (i = 0; i < ARRAY_SIZE(offsets_ms); i++) {
		if (!wait_for_completion_timeout(&rt[i].done, WAIT_LIMIT))
			KUNIT_FAIL(test, "timer %d did not fire", rt[i].id);
	}
	for (i = 0; i < ARRAY_SIZE(offsets_ms); i++)
		stop_ktimer(&rt[i].timer);
	KUNIT_ASSERT_EQ(test, norder, ARRAY_SIZE(offsets_ms));
	for (i = 1; i < norder; i++)
		KUNIT_EXPECT_LT(test, order[i - 1], order[i]);
}

/* Many timers with random expiries: each fires once, never early */
static void ktimer_many_real_timers_test(struct kunit *test)
{
	const int n = 64;
	struct real_timer *rt;
	int i, late = 0;
	u32 seed = 4242;

	rt = kunit_kcalloc(test, n, sizeof(*rt), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rt);
	for (i = 0; i < n; i++) {
		ktime_t rel;

		seed = seed * 1103515245 + 12345;
		rel = 100 * NSEC_PER_USEC + (seed >> 8) % (5 * MS);
		real_timer_init(test, &rt[i], param_clock(test));
		KUNIT_ASSERT_EQ(test, start_ktimer(&rt[i].timer, &rel,
						   KTIMER_REL), 0);
	}
	for (i = 0; i < n; i++) {
		if (!wait_for_completion_timeout(&rt[i].done, WAIT_LIMIT))
			late++;
	}
	for (i = 0; i < n; i++)
		stop_ktimer(&rt[i].timer);
	KUNIT_EXPECT_EQ(test, late, 0);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, rt[i].fired, 1);
		KUNIT_EXPECT_GE(test, rt[i].seen_now, rt[i].seen_expires);
	}
}

static void ktimer_real_periodic_stop_test(struct kunit *test)
{
	struct real_timer *rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);
	ktime_t rel = MS, start;
	int fired;

	KUNIT_ASSERT_NOT_NULL(test, rt);
	real_timer_init(test, rt, param_clock(test));
	rt->timer.interval = MS;
	start = ktime_get();
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt->timer, &rel, KTIMER_REL), 0);
	/* let at least 5 periods pass */
	ktimer_delay(test, 5 * MS);
	while (READ_ONCE(rt->fired) < 5 && ktime_get() - start < SPIN_LIMIT_NS)
		ktimer_delay(test, MS);
	KUNIT_EXPECT_GE(test, stop_ktimer(&rt->timer), 0);
	fired = READ_ONCE(rt->fired);
	KUNIT_EXPECT_GE(test, fired, 5);
	/* ->overrun counts every period added, missed ones included */
	KUNIT_EXPECT_GE(test, rt->timer.overrun, (u64)fired);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&rt->timer));
	ktimer_delay(test, 5 * MS);
	KUNIT_EXPECT_EQ(test, READ_ONCE(rt->fired), fired);
}

static void ktimer_real_periodic_self_stop_test(struct kunit *test)
{
	struct real_timer *rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);
	ktime_t rel = MS;

	KUNIT_ASSERT_NOT_NULL(test, rt);
	real_timer_init(test, rt, param_clock(test));
	rt->timer.interval = MS;
	rt->stop_after = 3;
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt->timer, &rel, KTIMER_REL), 0);
	if (!wait_for_completion_timeout(&rt->done, WAIT_LIMIT)) {
		stop_ktimer(&rt->timer);
		KUNIT_FAIL(test, "periodic timer did not reach 3 expiries");
		return;
	}
	KUNIT_EXPECT_EQ(test, rt->stop_ret, 0);
	ktimer_delay(test, 5 * MS);
	KUNIT_EXPECT_EQ(test, rt->fired, 3);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&rt->timer));
}

static void ktimer_schedule_rel_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	struct ktimer timer;
	ktime_t start, t = 2 * MS;

	ktimer_init_on_stack(&timer, clock);
	start = clock->get_time();
	KUNIT_EXPECT_EQ(test, schedule_ktimer(&timer, &t, TASK_UNINTERRUPTIBLE,
					      KTIMER_REL), 0);
	KUNIT_EXPECT_GE(test, clock->get_time() - start, 2 * MS);
	/* *t now holds the absolute expiry */
	KUNIT_EXPECT_GE(test, t, start + 2 * MS);
	KUNIT_EXPECT_LE(test, t, clock->get_time());
	KUNIT_EXPECT_FALSE(test, ktimer_active(&timer));
	destroy_ktimer_on_stack(&timer);
}

/*
 * The engine wakes this CPU with an hrtimer on the timer's own clock, from
 * its expiry to its expiry plus half the resolution.  A wake-up on another
 * clock (or none) would still look right whenever something else raised
 * the softirq, so this looks at what was programmed.
 */
static void ktimer_wakeup_event_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	struct real_timer *rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);
	ktime_t rel = 3600LL * NSEC_PER_SEC, soft = 0, hard = 0;
	ktime_t limit = ktime_get() + SPIN_LIMIT_NS;
	clockid_t clockid = -1;
	bool armed = false;

	KUNIT_ASSERT_NOT_NULL(test, rt);
	real_timer_init(test, rt, clock);
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt->timer, &rel, KTIMER_REL), 0);
	/* an event armed earlier for a timer since stopped fires first */
	while (ktime_get() < limit) {
		armed = ktimer_test_event(clock, &clockid, &soft, &hard);
		if (armed && soft == rt->timer.expires)
			break;
		ktimer_delay(test, MS);
	}
	KUNIT_EXPECT_TRUE(test, armed);
	KUNIT_EXPECT_EQ(test, clockid, clock->clockid);
	KUNIT_EXPECT_EQ(test, soft, rt->timer.expires);
	/* may slip by half the resolution; the softirq gets the other half */
	KUNIT_EXPECT_EQ(test, hard - soft,
			(ktime_t)(ktimer_clock_resolution(clock) / 2));
}

/* The resolution and the timespec rounding follow the boot-time engine */
static void ktimer_engine_resolution_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	u32 want = ktimer_highres_enabled() ? hrtimer_resolution : TICK_NSEC;
	struct timespec64 one = { 0, 1 }, res;
	struct ktimer timer;

	kunit_info(test, "%s-resolution engine, %u ns",
		   ktimer_highres_enabled() ? "high" : "low", want);
	KUNIT_EXPECT_EQ(test, ktimer_clock_resolution(clock), want);
	ktimer_init_on_stack(&timer, clock);
	KUNIT_EXPECT_EQ(test, ktimer_convert_timespec(&timer, &one), want);
	destroy_ktimer_on_stack(&timer);
	KUNIT_EXPECT_EQ(test, get_ktimer_mono_res(CLOCK_MONOTONIC, &res), 0);
	KUNIT_EXPECT_EQ(test, timespec64_to_ns(&res), want);
	KUNIT_EXPECT_EQ(test, get_ktimer_real_res(CLOCK_REALTIME, &res), 0);
	KUNIT_EXPECT_EQ(test, timespec64_to_ns(&res), want);
	/* a high-resolution system reports nanoseconds, a low one jiffies */
	if (!ktimer_highres_enabled())
		KUNIT_EXPECT_EQ(test, want, TICK_NSEC);
	else if (IS_ENABLED(CONFIG_HIGH_RES_TIMERS) && hrtimer_resolution == 1)
		KUNIT_EXPECT_EQ(test, want, 1);
}

static void ktimer_schedule_abs_real_test(struct kunit *test)
{
	struct ktimer timer;
	ktime_t t = ktime_get_real() + 2 * MS, want = t;

	ktimer_init_on_stack(&timer, &ktimer_clock_realtime);
	KUNIT_EXPECT_EQ(test, schedule_ktimer(&timer, &t, TASK_INTERRUPTIBLE,
					      KTIMER_ABS), 0);
	destroy_ktimer_on_stack(&timer);
	KUNIT_EXPECT_EQ(test, t, want);
	KUNIT_EXPECT_GE(test, ktime_get_real(), want);
}

struct sleeper {
	struct completion	asleep;
	struct completion	done;
	ktime_t			rem;
	ktime_t			requested;
};

/*
 * Run @fn(@data) in a kthread that accepts SIGUSR1, signal it once it
 * reports @asleep and sleeps, and wait for @done.  Returns the state it
 * slept in.  kthread_stop() keeps @data alive
 * until the thread is gone, even when it does not finish in time.
 */
/* The state @task sleeps in, once it sleeps (TASK_RUNNING if it never did) */
static unsigned int wait_until_asleep(struct task_struct *task)
{
	unsigned long end = jiffies + WAIT_LIMIT;
	unsigned int state;

	while ((state = READ_ONCE(task->__state)) == TASK_RUNNING &&
	       time_before(jiffies, end))
		schedule_timeout_uninterruptible(1);
	return state;
}

static unsigned int run_and_signal(struct kunit *test, int (*fn)(void *),
				   void *data, struct completion *asleep,
				   struct completion *done)
{
	struct task_struct *task = kthread_run(fn, data, "ktimer-sleeper");
	unsigned int state;

	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	get_task_struct(task);
	wait_for_completion(asleep);
	state = wait_until_asleep(task);
	send_sig(SIGUSR1, task, 1);
	if (!wait_for_completion_timeout(done, WAIT_LIMIT))
		KUNIT_FAIL(test, "the signal did not end the sleep");
	kthread_stop(task);
	put_task_struct(task);
	return state;
}

static int sleeper_thread(void *data)
{
	struct sleeper *s = data;
	struct ktimer timer;
	ktime_t t = s->requested;

	allow_signal(SIGUSR1);
	ktimer_init_on_stack(&timer, &ktimer_clock_monotonic);
	complete(&s->asleep);
	s->rem = schedule_ktimer(&timer, &t, TASK_INTERRUPTIBLE, KTIMER_REL);
	destroy_ktimer_on_stack(&timer);
	flush_signals(current);
	complete(&s->done);
	return 0;
}

/* A signal ends an interruptible sleep early with the time that was left */
static void ktimer_schedule_signal_test(struct kunit *test)
{
	struct sleeper *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	init_completion(&s->asleep);
	init_completion(&s->done);
	s->requested = 60LL * NSEC_PER_SEC;
	run_and_signal(test, sleeper_thread, s, &s->asleep, &s->done);
	KUNIT_EXPECT_GT(test, s->rem, 0);
	KUNIT_EXPECT_LE(test, s->rem, s->requested);
}

/* Two CPUs: a callback spinning on one while the other acts on it */
struct running_ctx {
	struct ktimer	timer;
	bool		ready;		/* the test waits on the other CPU */
	bool		in_callback;
	bool		release;
	bool		finished;
	int		calls;
};

static void spinning_callback(void *data)
{
	struct running_ctx *rc = data;
	ktime_t limit = ktime_get() + SPIN_LIMIT_NS;

	/*
	 * Spinning while the test is still being migrated away would block
	 * the migration on this CPU: come back later instead.
	 */
	if (!READ_ONCE(rc->ready)) {
		ktime_t again = MS;

		start_ktimer(&rc->timer, &again, KTIMER_REL);
		return;
	}
	WRITE_ONCE(rc->calls, rc->calls + 1);
	WRITE_ONCE(rc->in_callback, true);
	while (!READ_ONCE(rc->release) && ktime_get() < limit)
		cpu_relax();
	WRITE_ONCE(rc->in_callback, false);
	/* pairs with the acquire in ktimer_try_stop_running_test() */
	smp_store_release(&rc->finished, true);
}

static void release_action(void *data)
{
	struct running_ctx *rc = data;

	WRITE_ONCE(rc->release, true);
	WRITE_ONCE(rc->ready, true);
}

/* Start the timer on this CPU, move to another, wait for the callback */
static struct running_ctx *start_spinning_timer(struct kunit *test)
{
	struct running_ctx *rc = kunit_kzalloc(test, sizeof(*rc), GFP_KERNEL);
	unsigned int here = raw_smp_processor_id(), other;
	ktime_t rel = MS, limit;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	KUNIT_ASSERT_NOT_NULL(test, rc);
	other = cpumask_any_but(cpu_online_mask, here);
	KUNIT_ASSERT_LT(test, other, nr_cpu_ids);

	init_ktimer_mono(&rc->timer);
	/* on failure, release the callback before stopping its timer */
	stop_at_exit(test, &rc->timer);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, release_action,
							rc), 0);
	rc->timer.function = spinning_callback;
	rc->timer.data = rc;
	KUNIT_ASSERT_EQ(test, start_ktimer(&rc->timer, &rel, KTIMER_REL), 0);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(other)),
			0);
	WRITE_ONCE(rc->ready, true);

	limit = ktime_get() + SPIN_LIMIT_NS;
	while (!READ_ONCE(rc->in_callback) && ktime_get() < limit)
		cpu_relax();
	if (!READ_ONCE(rc->in_callback)) {
		WRITE_ONCE(rc->release, true);
		stop_ktimer(&rc->timer);
		KUNIT_FAIL_AND_ABORT(test, "callback did not start");
	}
	return rc;
}

static void ktimer_try_stop_running_test(struct kunit *test)
{
	struct running_ctx *rc = start_spinning_timer(test);

	KUNIT_EXPECT_EQ(test, try_to_stop_ktimer(&rc->timer), -1);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(rc->in_callback));
	WRITE_ONCE(rc->release, true);
	/* stop_ktimer() returns only once the callback has finished */
	KUNIT_EXPECT_EQ(test, stop_ktimer(&rc->timer), 0);
	/* pairs with the release at the end of spinning_callback() */
	KUNIT_EXPECT_TRUE(test, smp_load_acquire(&rc->finished));
	KUNIT_EXPECT_EQ(test, rc->calls, 1);
}

/* Restarting a timer whose callback runs elsewhere neither waits nor loses it */
static void ktimer_modify_running_test(struct kunit *test)
{
	struct running_ctx *rc = start_spinning_timer(test);
	ktime_t rel = MS, limit;

	KUNIT_EXPECT_EQ(test, modify_ktimer(&rc->timer, &rel, KTIMER_REL), 0);
	KUNIT_EXPECT_TRUE(test, ktimer_active(&rc->timer));
	KUNIT_EXPECT_EQ(test, start_ktimer(&rc->timer, &rel, KTIMER_REL),
			-EBUSY);
	WRITE_ONCE(rc->release, true);
	limit = ktime_get() + SPIN_LIMIT_NS;
	while (READ_ONCE(rc->calls) < 2 && ktime_get() < limit)
		ktimer_delay(test, MS);
	KUNIT_EXPECT_EQ(test, stop_ktimer(&rc->timer), 0);
	KUNIT_EXPECT_EQ(test, rc->calls, 2);
}

/* ---- setting the realtime clock ---- */

/* Step the realtime clock by @delta, as settimeofday() would */
static void step_realtime(struct kunit *test, ktime_t delta)
{
	struct timespec64 ts = ktime_to_timespec64(ktime_get_real() + delta);

	KUNIT_ASSERT_EQ(test, do_settimeofday64(&ts), 0);
}

/*
 * The realtime clock cannot be set before the boot time, and a guest
 * without an RTC (ARM's virt machine here) boots in 1970 with realtime
 * equal to monotonic.  Move it a day ahead first, so that the steps
 * below stay legal; the guest is disposable.
 */
static void ensure_realtime_headroom(struct kunit *test)
{
	const ktime_t day = 24 * 3600LL * NSEC_PER_SEC;

	if (ktime_get_real() - ktime_get() < day / 2)
		step_realtime(test, day);
}

/*
 * A forward step past an absolute realtime expiry fires it promptly; a
 * realtime timer not yet reached and monotonic timers keep waiting.
 */
static void ktimer_clock_set_forward_test(struct kunit *test)
{
	struct real_timer *rt = kunit_kcalloc(test, 3, sizeof(*rt), GFP_KERNEL);
	ktime_t hour = 3600LL * NSEC_PER_SEC, t;
	ktime_t rel2h = 2 * hour, rel1h = hour;
	bool fired;

	KUNIT_ASSERT_NOT_NULL(test, rt);
	ensure_realtime_headroom(test);
	real_timer_init(test, &rt[0], &ktimer_clock_realtime);
	real_timer_init(test, &rt[1], &ktimer_clock_realtime);
	real_timer_init(test, &rt[2], &ktimer_clock_monotonic);
	t = ktime_get_real() + hour;
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt[0].timer, &t, KTIMER_ABS), 0);
	/* relative realtime timers become absolute when started */
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt[1].timer, &rel2h, KTIMER_REL), 0);
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt[2].timer, &rel1h, KTIMER_REL), 0);

	step_realtime(test, 90LL * 60 * NSEC_PER_SEC);
	fired = wait_for_completion_timeout(&rt[0].done, WAIT_LIMIT);
	KUNIT_EXPECT_TRUE(test, ktimer_active(&rt[1].timer));
	KUNIT_EXPECT_LE(test, get_remtime_ktimer(&rt[1].timer, 0),
			30LL * 60 * NSEC_PER_SEC);
	KUNIT_EXPECT_TRUE(test, ktimer_active(&rt[2].timer));
	KUNIT_EXPECT_GT(test, get_remtime_ktimer(&rt[2].timer, 0),
			50LL * 60 * NSEC_PER_SEC);
	/* undo the step, keeping the time that really passed */
	step_realtime(test, -90LL * 60 * NSEC_PER_SEC);

	stop_ktimer(&rt[0].timer);
	KUNIT_EXPECT_EQ(test, stop_ktimer(&rt[1].timer), 1);
	KUNIT_EXPECT_EQ(test, stop_ktimer(&rt[2].timer), 1);
	KUNIT_ASSERT_TRUE_MSG(test, fired, "passed realtime timer did not fire");
	KUNIT_EXPECT_GE(test, rt[0].seen_now, t);
}

/* A backward step delays absolute realtime timers; stepping back fires */
static void ktimer_clock_set_backward_test(struct kunit *test)
{
	struct real_timer *rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);
	ktime_t hour = 3600LL * NSEC_PER_SEC, t;

	KUNIT_ASSERT_NOT_NULL(test, rt);
	ensure_realtime_headroom(test);
	real_timer_init(test, rt, &ktimer_clock_realtime);
	t = ktime_get_real() + 20 * MS;
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt->timer, &t, KTIMER_ABS), 0);
	step_realtime(test, -hour);
	KUNIT_EXPECT_GT(test, get_remtime_ktimer(&rt->timer, 0),
			hour - 60LL * NSEC_PER_SEC);
	KUNIT_EXPECT_EQ(test, rt->fired, 0);
	step_realtime(test, hour);
	if (!wait_for_completion_timeout(&rt->done, WAIT_LIMIT)) {
		stop_ktimer(&rt->timer);
		KUNIT_FAIL(test, "timer did not fire after the clock came back");
		return;
	}
	KUNIT_EXPECT_GE(test, rt->seen_now, t);
}

/* ---- nanosleep with restart ---- */

struct nanosleeper {
	struct completion	asleep;
	struct completion	done;
	struct ktimer_clock	*clock;
	struct timespec64	rqtp;
	int			mode;
	long			ret;
	long			restart_ret;
	ktime_t			restart_expires;
	ktime_t			woke;
	unsigned int		slept_in;
	bool			restart_set;
};

static int nanosleep_thread(void *data)
{
	struct nanosleeper *s = data;
	struct restart_block *restart = &current->restart_block;

	allow_signal(SIGUSR1);
	restart->fn = NULL;
	restart->nanosleep.type = TT_NONE;
	complete(&s->asleep);
	s->ret = ktimer_nanosleep(s->clock, &s->rqtp, s->mode);
	flush_signals(current);
	s->restart_set = restart->fn;
	s->restart_expires = restart->nanosleep.expires;
	if (s->ret == -ERESTART_RESTARTBLOCK && restart->fn) {
		/* what the syscall restart does, after a shortened wait */
		restart->nanosleep.expires = s->clock->get_time() + 2 * MS;
		s->restart_ret = restart->fn(restart);
		s->woke = s->clock->get_time();
	}
	complete(&s->done);
	return 0;
}

static struct nanosleeper *interrupt_nanosleep(struct kunit *test,
					       struct ktimer_clock *clock,
					       struct timespec64 rqtp, int mode)
{
	struct nanosleeper *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	init_completion(&s->asleep);
	init_completion(&s->done);
	s->clock = clock;
	s->rqtp = rqtp;
	s->mode = mode;
	s->slept_in = run_and_signal(test, nanosleep_thread, s, &s->asleep,
				     &s->done);
	return s;
}

/* A relative sleep cut by a signal restarts until the same absolute end */
static void ktimer_nanosleep_restart_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	struct timespec64 rqtp = { 60, 0 };
	ktime_t before = clock->get_time();
	struct nanosleeper *s = interrupt_nanosleep(test, clock, rqtp, KTIMER_REL);

	KUNIT_EXPECT_EQ(test, s->ret, -ERESTART_RESTARTBLOCK);
	KUNIT_EXPECT_TRUE(test, s->restart_set);
	KUNIT_EXPECT_GE(test, s->restart_expires, before + 60LL * NSEC_PER_SEC);
	KUNIT_EXPECT_LE(test, s->restart_expires, clock->get_time() + 60LL * NSEC_PER_SEC);
	KUNIT_EXPECT_EQ(test, s->restart_ret, 0);
}

/* An absolute sleep is not restarted with a remaining time (POSIX) */
static void ktimer_nanosleep_abs_signal_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	struct timespec64 rqtp = ktime_to_timespec64(clock->get_time() +
						     60LL * NSEC_PER_SEC);
	struct nanosleeper *s = interrupt_nanosleep(test, clock, rqtp, KTIMER_ABS);

	KUNIT_EXPECT_EQ(test, s->ret, -ERESTARTNOHAND);
	KUNIT_EXPECT_FALSE(test, s->restart_set);
}

/*
 * nanosleep() sleeps freezable, as hrtimer_nanosleep() does: the freezer
 * then freezes the sleeper in place instead of waking it with a fake
 * signal, which user space would see as an EINTR or a restart.
 */
static void ktimer_nanosleep_freezable_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	struct timespec64 rqtp = { 60, 0 };
	struct nanosleeper *s = interrupt_nanosleep(test, clock, rqtp, KTIMER_REL);

	KUNIT_EXPECT_TRUE(test, s->slept_in & TASK_INTERRUPTIBLE);
	KUNIT_EXPECT_TRUE(test, s->slept_in & TASK_FREEZABLE);
}

/*
 * A signal cuts a relative sleep whose caller wants the time left (glibc
 * always passes rmtp): the time is copied out and the syscall restarts
 * (-ERESTART_RESTARTBLOCK; EINTR once a handler runs), as in
 * hrtimer_nanosleep().  The sleep runs in the test's own thread, which
 * kunit_vm_mmap() gives a user address space for rmtp.
 */
static void ktimer_nanosleep_copyout_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	struct restart_block *restart = &current->restart_block;
	struct timespec64 rqtp = { 60, 0 }, left = { -1, 0 };
	struct __kernel_timespec __user *rmtp;
	unsigned long addr;
	long ret, bad_ret;

	addr = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR_VALUE(addr) || !addr,
			       "no user memory for rmtp: %ld", (long)addr);
	rmtp = (struct __kernel_timespec __user *)addr;

	allow_signal(SIGUSR1);
	restart->nanosleep.type = TT_NATIVE;
	restart->nanosleep.rmtp = rmtp;
	/* pending before the sleep starts: it ends at once, time left */
	send_sig(SIGUSR1, current, 1);
	ret = ktimer_nanosleep(clock, &rqtp, KTIMER_REL);
	/* an unmapped rmtp: the time left cannot be stored */
	restart->nanosleep.rmtp = (struct __kernel_timespec __user *)16;
	send_sig(SIGUSR1, current, 1);
	bad_ret = ktimer_nanosleep(clock, &rqtp, KTIMER_REL);
	flush_signals(current);
	disallow_signal(SIGUSR1);
	restart->nanosleep.type = TT_NONE;
	restart->fn = do_no_restart_syscall;

	KUNIT_EXPECT_EQ(test, ret, -ERESTART_RESTARTBLOCK);
	KUNIT_EXPECT_EQ(test, get_timespec64(&left, rmtp), 0);
	KUNIT_EXPECT_GT(test, timespec64_to_ns(&left), 0);
	KUNIT_EXPECT_LE(test, timespec64_to_ns(&left), 60LL * NSEC_PER_SEC);
	KUNIT_EXPECT_EQ(test, bad_ret, -EFAULT);
}

static void ktimer_nanosleep_full_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	struct timespec64 rqtp = { 0, 2 * MS };
	ktime_t start = clock->get_time();

	KUNIT_EXPECT_EQ(test, ktimer_nanosleep(clock, &rqtp, KTIMER_REL), 0);
	KUNIT_EXPECT_GE(test, clock->get_time() - start, 2 * MS);
	/* an absolute time in the past returns at once */
	rqtp = ktime_to_timespec64(start);
	KUNIT_EXPECT_EQ(test, ktimer_nanosleep(clock, &rqtp, KTIMER_ABS), 0);
}

static void ktimer_nanosleep_invalid_test(struct kunit *test)
{
	struct timespec64 bad = { 0, NSEC_PER_SEC }, neg = { -1, 0 };
	struct timespec64 ok = { 0, 1 };

	KUNIT_EXPECT_EQ(test, ktimer_nanosleep_mono(&bad, KTIMER_REL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_nanosleep_mono(&neg, KTIMER_REL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_nanosleep_real(NULL, KTIMER_REL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_nanosleep_mono(&ok, KTIMER_INCR), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_nanosleep(NULL, &ok, KTIMER_REL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_nanosleep_real(&ok, KTIMER_REL), 0);
}

#define KUNIT_CASE_CLOCKS(name) \
	KUNIT_CASE_PARAM_ATTR(name, clock_gen_params, { .speed = KUNIT_SPEED_SLOW })

static struct kunit_case ktimer_realclock_cases[] = {
	KUNIT_CASE_CLOCKS(ktimer_fires_after_expiry_test),
	KUNIT_CASE_CLOCKS(ktimer_idle_cpu_wakes_test),
	KUNIT_CASE_CLOCKS(ktimer_real_order_test),
	KUNIT_CASE_CLOCKS(ktimer_many_real_timers_test),
	KUNIT_CASE_CLOCKS(ktimer_real_periodic_stop_test),
	KUNIT_CASE_CLOCKS(ktimer_real_periodic_self_stop_test),
	KUNIT_CASE_CLOCKS(ktimer_schedule_rel_test),
	KUNIT_CASE_CLOCKS(ktimer_engine_resolution_test),
	KUNIT_CASE_CLOCKS(ktimer_wakeup_event_test),
	KUNIT_CASE_SLOW(ktimer_schedule_abs_real_test),
	KUNIT_CASE_SLOW(ktimer_schedule_signal_test),
	KUNIT_CASE_SLOW(ktimer_clock_set_forward_test),
	KUNIT_CASE_SLOW(ktimer_clock_set_backward_test),
	KUNIT_CASE_CLOCKS(ktimer_nanosleep_restart_test),
	KUNIT_CASE_CLOCKS(ktimer_nanosleep_abs_signal_test),
	KUNIT_CASE_CLOCKS(ktimer_nanosleep_freezable_test),
	KUNIT_CASE_CLOCKS(ktimer_nanosleep_copyout_test),
	KUNIT_CASE_CLOCKS(ktimer_nanosleep_full_test),
	KUNIT_CASE_SLOW(ktimer_nanosleep_invalid_test),
	KUNIT_CASE_SLOW(ktimer_try_stop_running_test),
	KUNIT_CASE_SLOW(ktimer_modify_running_test),
	{}
};

static struct kunit_suite ktimer_realclock_suite = {
	.name = "ktimer_realclock",
	.init = pin_case_init,
	.test_cases = ktimer_realclock_cases,
};

kunit_test_suites(&ktimer_realclock_suite);

MODULE_DESCRIPTION("KUnit tests for ktimers on the real clocks");
MODULE_LICENSE("GPL");
