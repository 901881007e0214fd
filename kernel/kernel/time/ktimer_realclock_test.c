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
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktimer.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/timekeeping.h>

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

static void real_timer_init(struct real_timer *rt, bool realtime)
{
	memset(rt, 0, sizeof(*rt));
	if (realtime) {
		init_ktimer_real(&rt->timer);
		rt->now = ktime_get_real;
	} else {
		init_ktimer_mono(&rt->timer);
		rt->now = ktime_get;
	}
	rt->timer.function = real_callback;
	rt->timer.data = rt;
	init_completion(&rt->done);
}

static int pin_case_init(struct kunit *test)
{
	return set_cpus_allowed_ptr(current, cpumask_of(raw_smp_processor_id()));
}

/* Sleep on a ktimer: the API under test doubles as the delay */
static void ktimer_delay(struct kunit *test, ktime_t ns)
{
	struct ktimer sleeper;

	init_ktimer_mono(&sleeper);
	KUNIT_EXPECT_EQ(test, schedule_ktimer(&sleeper, &ns,
					      TASK_UNINTERRUPTIBLE, KTIMER_REL),
			0);
}

static void check_fires_after_expiry(struct kunit *test, bool realtime,
				     ktime_t rel)
{
	struct real_timer *rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, rt);
	real_timer_init(rt, realtime);
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

static void ktimer_mono_fires_after_expiry_test(struct kunit *test)
{
	check_fires_after_expiry(test, false, 2 * MS);
}

static void ktimer_real_fires_after_expiry_test(struct kunit *test)
{
	check_fires_after_expiry(test, true, 2 * MS);
}

/* The test sleeps, its CPU goes idle and stops the tick: still woken */
static void ktimer_idle_cpu_wakes_test(struct kunit *test)
{
	check_fires_after_expiry(test, false, 200 * MS);
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
	start = ktime_get();
	for (i = 0; i < ARRAY_SIZE(offsets_ms); i++) {
		/* one absolute base for all, so only the offsets decide */
		ktime_t t = start + offsets_ms[i] * MS;

		real_timer_init(&rt[i], false);
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
		real_timer_init(&rt[i], i & 1);
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
	real_timer_init(rt, false);
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
	real_timer_init(rt, true);
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
	struct ktimer timer;
	ktime_t start, t = 2 * MS;

	init_ktimer_mono(&timer);
	start = ktime_get();
	KUNIT_EXPECT_EQ(test, schedule_ktimer(&timer, &t, TASK_UNINTERRUPTIBLE,
					      KTIMER_REL), 0);
	KUNIT_EXPECT_GE(test, ktime_get() - start, 2 * MS);
	/* *t now holds the absolute expiry */
	KUNIT_EXPECT_GE(test, t, start + 2 * MS);
	KUNIT_EXPECT_LE(test, t, ktime_get());
	KUNIT_EXPECT_FALSE(test, ktimer_active(&timer));
}

static void ktimer_schedule_abs_real_test(struct kunit *test)
{
	struct ktimer timer;
	ktime_t t = ktime_get_real() + 2 * MS, want = t;

	init_ktimer_real(&timer);
	KUNIT_EXPECT_EQ(test, schedule_ktimer(&timer, &t, TASK_INTERRUPTIBLE,
					      KTIMER_ABS), 0);
	KUNIT_EXPECT_EQ(test, t, want);
	KUNIT_EXPECT_GE(test, ktime_get_real(), want);
}

struct sleeper {
	struct completion	asleep;
	struct completion	done;
	ktime_t			rem;
	ktime_t			requested;
};

static int sleeper_thread(void *data)
{
	struct sleeper *s = data;
	struct ktimer timer;
	ktime_t t = s->requested;

	allow_signal(SIGUSR1);
	init_ktimer_mono(&timer);
	complete(&s->asleep);
	s->rem = schedule_ktimer(&timer, &t, TASK_INTERRUPTIBLE, KTIMER_REL);
	flush_signals(current);
	complete(&s->done);
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

/* A signal ends an interruptible sleep early with the time that was left */
static void ktimer_schedule_signal_test(struct kunit *test)
{
	struct sleeper *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	struct task_struct *task;

	KUNIT_ASSERT_NOT_NULL(test, s);
	init_completion(&s->asleep);
	init_completion(&s->done);
	s->requested = 60LL * NSEC_PER_SEC;
	task = kthread_run(sleeper_thread, s, "ktimer-sleeper");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	get_task_struct(task);
	wait_for_completion(&s->asleep);
	send_sig(SIGUSR1, task, 1);
	if (!wait_for_completion_timeout(&s->done, WAIT_LIMIT))
		KUNIT_FAIL(test, "the signal did not end the sleep");
	kthread_stop(task);
	put_task_struct(task);
	KUNIT_EXPECT_GT(test, s->rem, 0);
	KUNIT_EXPECT_LE(test, s->rem, s->requested);
}

/* Two CPUs: a callback spinning on one while the other acts on it */
struct running_ctx {
	struct ktimer	timer;
	bool		in_callback;
	bool		release;
	bool		finished;
	int		calls;
};

static void spinning_callback(void *data)
{
	struct running_ctx *rc = data;
	ktime_t limit = ktime_get() + SPIN_LIMIT_NS;

	WRITE_ONCE(rc->calls, rc->calls + 1);
	WRITE_ONCE(rc->in_callback, true);
	while (!READ_ONCE(rc->release) && ktime_get() < limit)
		cpu_relax();
	WRITE_ONCE(rc->in_callback, false);
	/* pairs with the acquire in ktimer_try_stop_running_test() */
	smp_store_release(&rc->finished, true);
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
	rc->timer.function = spinning_callback;
	rc->timer.data = rc;
	KUNIT_ASSERT_EQ(test, start_ktimer(&rc->timer, &rel, KTIMER_REL), 0);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(other)),
			0);

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

static struct kunit_case ktimer_realclock_cases[] = {
	KUNIT_CASE_SLOW(ktimer_mono_fires_after_expiry_test),
	KUNIT_CASE_SLOW(ktimer_real_fires_after_expiry_test),
	KUNIT_CASE_SLOW(ktimer_idle_cpu_wakes_test),
	KUNIT_CASE_SLOW(ktimer_real_order_test),
	KUNIT_CASE_SLOW(ktimer_many_real_timers_test),
	KUNIT_CASE_SLOW(ktimer_real_periodic_stop_test),
	KUNIT_CASE_SLOW(ktimer_real_periodic_self_stop_test),
	KUNIT_CASE_SLOW(ktimer_schedule_rel_test),
	KUNIT_CASE_SLOW(ktimer_schedule_abs_real_test),
	KUNIT_CASE_SLOW(ktimer_schedule_signal_test),
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
