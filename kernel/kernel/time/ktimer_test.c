// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for ktimers on a fake clock that the tests drive.
 *
 * Every case here is deterministic: the clock is a variable the test sets,
 * registered with KTIMER_CLOCK_MANUAL so that its timers expire only when
 * the test runs the queue, on the CPU the test is pinned to.  Calls that
 * are meant to trigger a warning are bracketed by markers in the kernel log
 * so that the harness can tell those warnings from real ones.
 */

#include <asm/sections.h>
#include <kunit/test.h>
#include <linux/bug.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/jiffies.h>
#include <linux/ktimer.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>
#include <trace/events/error_report.h>

#include "ktimer_internal.h"
#include "ktimer_test.h"

/* The fake clock reads this value */
#define NOW		1000000000LL
#define FAKE_RES	1000

DEFINE_FAKE_CLOCK(fake_clock, FAKE_RES);

#define MAX_TEST_TIMERS	16
#define MAX_FIRED	64

struct test_ctx;

/* A timer of a test and what its callback saw */
struct test_timer {
	struct ktimer	timer;
	struct test_ctx	*ctx;
	int		id;
	int		fired;
	ktime_t		seen_now;
	ktime_t		seen_expires;
	bool		seen_bh_off;	/* as in the softirq */
	bool		seen_irqs_off;
	/* optional extra work done by the callback */
	void		(*action)(struct test_timer *tt);
	struct test_timer *other;
	int		action_ret;
};

struct test_ctx {
	struct test_timer	*timers[MAX_TEST_TIMERS];
	int			ntimers;
	/* plain timers of a case, also stopped by the case's exit */
	struct ktimer		*bulk;
	int			nbulk;
	int			bulk_fired;
	int			fired_ids[MAX_FIRED];
	int			nfired;
};

static void test_callback(void *data)
{
	struct test_timer *tt = data;
	struct test_ctx *ctx = tt->ctx;

	tt->fired++;
	tt->seen_now = fake_clock_get_time();
	tt->seen_expires = tt->timer.expires;
	tt->seen_bh_off = in_softirq();
	tt->seen_irqs_off = irqs_disabled();
	if (ctx->nfired < MAX_FIRED)
		ctx->fired_ids[ctx->nfired] = tt->id;
	ctx->nfired++;
	if (tt->action)
		tt->action(tt);
}

/* A fake-clock timer that the case's exit stops, even after a failure */
static struct test_timer *new_timer(struct kunit *test, int id)
{
	struct test_ctx *ctx = test->priv;
	struct test_timer *tt;

	KUNIT_ASSERT_LT(test, ctx->ntimers, MAX_TEST_TIMERS);
	tt = kunit_kzalloc(test, sizeof(*tt), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tt);
	ktimer_init(&tt->timer, &fake_clock);
	tt->timer.function = test_callback;
	tt->timer.data = tt;
	tt->ctx = ctx;
	tt->id = id;
	ctx->timers[ctx->ntimers++] = tt;
	return tt;
}

/* Set the fake clock and run its expired timers, as the softirq would */
static void advance_to(ktime_t t)
{
	WRITE_ONCE(fake_clock_now, t);
	ktimer_run_clock(&fake_clock);
}

static void start_abs(struct kunit *test, struct test_timer *tt, ktime_t t)
{
	KUNIT_ASSERT_EQ(test, start_ktimer(&tt->timer, &t, KTIMER_ABS), 0);
}

static int fake_suite_init(struct kunit_suite *suite)
{
	return ktimer_register_clock(&fake_clock);
}

static void fake_suite_exit(struct kunit_suite *suite)
{
	int ret = ktimer_unregister_clock(&fake_clock);

	if (ret)
		pr_err("ktimer-test: cannot unregister the fake clock: %d\n", ret);
}

static int fake_case_init(struct kunit *test)
{
	struct test_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);

	if (!ctx)
		return -ENOMEM;
	test->priv = ctx;
	WRITE_ONCE(fake_clock_now, NOW);
	/* Timers go to the starting CPU's queue: stay on one CPU */
	return set_cpus_allowed_ptr(current, cpumask_of(raw_smp_processor_id()));
}

static void fake_case_exit(struct kunit *test)
{
	struct test_ctx *ctx = test->priv;
	int i;

	for (i = 0; ctx && i < ctx->ntimers; i++)
		stop_ktimer(&ctx->timers[i]->timer);
	for (i = 0; ctx && i < ctx->nbulk; i++)
		stop_ktimer(&ctx->bulk[i]);
}

/* ---- modes ---- */

#define PAST	(NOW - 1)

struct mode_case {
	const char	*name;
	int		mode;
	ktime_t		prev_expires;	/* ->expires before the call */
	ktime_t		interval;
	ktime_t		tim;
	bool		null_tim;	/* pass tim as NULL */
	int		ret;		/* from start_ktimer() */
	ktime_t		expires;
	u64		overrun;
};

#define NC KTIMER_NOCHECK
static const struct mode_case mode_cases[] = {
	{ "abs_future", KTIMER_ABS, 0, 0, NOW + 100, false, 0, NOW + 100, 0 },
	{ "abs_now", KTIMER_ABS, 0, 0, NOW, false, -ETIME, NOW, 0 },
	{ "abs_past", KTIMER_ABS, 0, 0, PAST, false, -ETIME, PAST, 0 },
	{ "abs_future_nocheck", KTIMER_ABS | NC, 0, 0, NOW + 1, false, 0, NOW + 1, 0 },
	{ "abs_now_nocheck", KTIMER_ABS | NC, 0, 0, NOW, false, 0, NOW, 0 },
	{ "abs_past_nocheck", KTIMER_ABS | NC, 0, 0, PAST, false, 0, PAST, 0 },
	{ "abs_max", KTIMER_ABS, 0, 0, KTIME_MAX, false, 0, KTIME_MAX, 0 },
	{ "abs_min", KTIMER_ABS, 0, 0, KTIME_MIN, false, -ETIME, KTIME_MIN, 0 },
	{ "rel_future", KTIMER_REL, 5, 0, 100, false, 0, NOW + 100, 0 },
	{ "rel_zero", KTIMER_REL, 5, 0, 0, false, -ETIME, NOW, 0 },
	{ "rel_negative", KTIMER_REL, 5, 0, -7, false, -ETIME, NOW - 7, 0 },
	{ "rel_future_nocheck", KTIMER_REL | NC, 5, 0, 1, false, 0, NOW + 1, 0 },
	{ "rel_zero_nocheck", KTIMER_REL | NC, 5, 0, 0, false, 0, NOW, 0 },
	{ "rel_negative_nocheck", KTIMER_REL | NC, 5, 0, -7, false, 0, NOW - 7, 0 },
	{ "rel_max_saturates", KTIMER_REL, 5, 0, KTIME_MAX, false, 0, KTIME_MAX, 0 },
	{ "rel_min", KTIMER_REL, 5, 0, KTIME_MIN, false, -ETIME,
	  NOW + KTIME_MIN, 0 },
	{ "incr_future", KTIMER_INCR, NOW - 50, 0, 100, false, 0, NOW + 50, 0 },
	{ "incr_now", KTIMER_INCR, NOW - 100, 0, 100, false, -ETIME, NOW, 0 },
	{ "incr_past", KTIMER_INCR, NOW - 200, 0, 50, false, -ETIME, NOW - 150, 0 },
	{ "incr_future_nocheck", KTIMER_INCR | NC, NOW, 0, 1, false, 0, NOW + 1, 0 },
	{ "incr_now_nocheck", KTIMER_INCR | NC, NOW - 100, 0, 100, false, 0, NOW, 0 },
	{ "incr_past_nocheck", KTIMER_INCR | NC, NOW - 200, 0, 50, false, 0,
	  NOW - 150, 0 },
	{ "incr_max_saturates", KTIMER_INCR, KTIME_MAX - 10, 0, 100, false, 0,
	  KTIME_MAX, 0 },
	{ "forward_future", KTIMER_FORWARD, NOW + 10, 0, 100, false, 0, NOW + 10, 0 },
	{ "forward_now", KTIMER_FORWARD, NOW, 0, 100, false, 0, NOW + 100, 1 },
	{ "forward_past", KTIMER_FORWARD, NOW - 250, 0, 100, false, 0, NOW + 50, 3 },
	{ "forward_exact_multiple", KTIMER_FORWARD, NOW - 200, 0, 100, false, 0,
	  NOW + 100, 3 },
	{ "forward_past_nocheck", KTIMER_FORWARD | NC, NOW - 250, 0, 100, false, 0,
	  NOW + 50, 3 },
	{ "forward_period_1ns", KTIMER_FORWARD, 0, 0, 1, false, 0, NOW + 1, NOW + 1 },
	{ "forward_period_above_2e32", KTIMER_FORWARD, NOW - 1, 0,
	  (5LL << 32) + 3, false, 0, NOW - 1 + (5LL << 32) + 3, 1 },
	/* KTIME_MIN + 3 * 2^62 == 2^62 */
	{ "forward_from_min", KTIMER_FORWARD, KTIME_MIN, 0, 1LL << 62, false, 0,
	  1LL << 62, 3 },
	{ "forward_saturates", KTIMER_FORWARD, PAST, 0, KTIME_MAX, false, 0,
	  KTIME_MAX, 1 },
	{ "rearm_future", KTIMER_REARM, NOW + 10, 100, 0, true, 0, NOW + 10, 0 },
	{ "rearm_now", KTIMER_REARM, NOW, 100, 0, true, 0, NOW + 100, 1 },
	{ "rearm_past", KTIMER_REARM, NOW - 250, 100, 0, true, 0, NOW + 50, 3 },
	{ "rearm_past_nocheck", KTIMER_REARM | NC, NOW - 250, 100, 0, true, 0,
	  NOW + 50, 3 },
	{ "rearm_period_above_2e32", KTIMER_REARM, NOW - (7LL << 32), 1LL << 32, 0,
	  true, 0, NOW + (1LL << 32), 8 },
	{ "rearm_ignores_tim", KTIMER_REARM, NOW - 250, 100, -5, false, 0,
	  NOW + 50, 3 },
	{ "restart_future", KTIMER_RESTART, NOW + 100, 0, 0, true, 0, NOW + 100, 0 },
	{ "restart_now", KTIMER_RESTART, NOW, 0, 0, true, -ETIME, NOW, 0 },
	{ "restart_past", KTIMER_RESTART, PAST, 0, 0, true, -ETIME, PAST, 0 },
	{ "restart_future_nocheck", KTIMER_RESTART | NC, NOW + 100, 0, 0, true, 0,
	  NOW + 100, 0 },
	{ "restart_now_nocheck", KTIMER_RESTART | NC, NOW, 0, 0, true, 0, NOW, 0 },
	{ "restart_past_nocheck", KTIMER_RESTART | NC, PAST, 0, 0, true, 0, PAST, 0 },
};

KUNIT_ARRAY_PARAM_DESC(mode_cases, mode_cases, name);

static struct test_timer *prepare_mode_timer(struct kunit *test,
					     const struct mode_case *c)
{
	struct test_timer *tt = new_timer(test, 0);

	tt->timer.expires = c->prev_expires;
	tt->timer.interval = c->interval;
	tt->timer.expired = -1;
	return tt;
}

static void check_mode_result(struct kunit *test, const struct mode_case *c,
			      struct test_timer *tt, int ret, int ret_if_queued)
{
	bool queued = c->ret == 0;

	KUNIT_EXPECT_EQ(test, ret, queued ? ret_if_queued : c->ret);
	KUNIT_EXPECT_EQ(test, ktimer_active(&tt->timer), queued);
	KUNIT_EXPECT_EQ(test, tt->timer.expires, c->expires);
	KUNIT_EXPECT_EQ(test, tt->timer.overrun, c->overrun);
	/* ->expired records the time an expiry was refused, and only then */
	if (c->ret == -ETIME)
		KUNIT_EXPECT_EQ(test, tt->timer.expired, NOW);
	else
		KUNIT_EXPECT_EQ(test, tt->timer.expired, -1);
}

static void ktimer_start_mode_test(struct kunit *test)
{
	const struct mode_case *c = test->param_value;
	struct test_timer *tt = prepare_mode_timer(test, c);
	int ret;

	ret = start_ktimer(&tt->timer, c->null_tim ? NULL : &c->tim, c->mode);
	check_mode_result(test, c, tt, ret, 0);
}

static void ktimer_modify_pending_mode_test(struct kunit *test)
{
	const struct mode_case *c = test->param_value;
	struct test_timer *tt = prepare_mode_timer(test, c);
	ktime_t later = KTIME_MAX - 1;
	int ret;

	/* Make it pending without changing ->expires, then restore it */
	KUNIT_ASSERT_EQ(test, start_ktimer(&tt->timer, &later, KTIMER_ABS), 0);
	tt->timer.expires = c->prev_expires;

	ret = modify_ktimer(&tt->timer, c->null_tim ? NULL : &c->tim, c->mode);
	check_mode_result(test, c, tt, ret, 1);
}

/*
 * Starts that need neither the time nor the check, and stops, do not read
 * the clock, as hrtimer_start() and hrtimer_try_to_cancel() do not.
 */
static void ktimer_nocheck_skips_clock_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);
	ktime_t t = NOW + 100, step = 10;
	unsigned int before = READ_ONCE(fake_clock_reads), reads;

	KUNIT_EXPECT_EQ(test, modify_ktimer(&tt->timer, &t,
					    KTIMER_ABS | KTIMER_NOCHECK), 0);
	KUNIT_EXPECT_EQ(test, modify_ktimer(&tt->timer, &step,
					    KTIMER_INCR | KTIMER_NOCHECK), 1);
	KUNIT_EXPECT_EQ(test, modify_ktimer(&tt->timer, NULL,
					    KTIMER_RESTART | KTIMER_NOCHECK), 1);
	KUNIT_EXPECT_EQ(test, try_to_stop_ktimer(&tt->timer), 1);
	KUNIT_EXPECT_EQ(test, modify_ktimer(&tt->timer, NULL,
					    KTIMER_RESTART | KTIMER_NOCHECK), 0);
	KUNIT_EXPECT_EQ(test, stop_ktimer(&tt->timer), 1);
	reads = READ_ONCE(fake_clock_reads) - before;
	KUNIT_EXPECT_EQ(test, reads, 0);
	KUNIT_EXPECT_EQ(test, tt->timer.expires, NOW + 110);

	KUNIT_EXPECT_EQ(test, modify_ktimer(&tt->timer, &t, KTIMER_ABS), 0);
	KUNIT_EXPECT_EQ(test, modify_ktimer(&tt->timer, &step,
					    KTIMER_REL | KTIMER_NOCHECK), 1);
	reads = READ_ONCE(fake_clock_reads) - before;
	KUNIT_EXPECT_EQ(test, reads, 2);
}

static void ktimer_modify_idle_mode_test(struct kunit *test)
{
	const struct mode_case *c = test->param_value;
	struct test_timer *tt = prepare_mode_timer(test, c);
	int ret;

	ret = modify_ktimer(&tt->timer, c->null_tim ? NULL : &c->tim, c->mode);
	check_mode_result(test, c, tt, ret, 0);
}

/*
 * A queued timer fires at its expiry, not a nanosecond earlier; a refused
 * start leaves nothing that could fire, however far the clock moves.
 */
static void ktimer_mode_fires_at_expiry_test(struct kunit *test)
{
	const struct mode_case *c = test->param_value;
	struct test_timer *tt = prepare_mode_timer(test, c);
	ktime_t due;
	int ret;

	ret = start_ktimer(&tt->timer, c->null_tim ? NULL : &c->tim, c->mode);
	KUNIT_ASSERT_EQ(test, ret, c->ret);
	if (ret) {
		KUNIT_EXPECT_FALSE(test, ktimer_active(&tt->timer));
		KUNIT_EXPECT_EQ(test, ktimer_clock_pending(&fake_clock), 0);
		advance_to(NOW);
		advance_to(KTIME_MAX);
		KUNIT_EXPECT_EQ(test, tt->fired, 0);
		KUNIT_EXPECT_EQ(test, tt->timer.expired, NOW);
		return;
	}
	/* ->interval only served the REARM computation: no re-arm here */
	tt->timer.interval = 0;

	due = max_t(ktime_t, c->expires, NOW);
	if (due > NOW) {
		advance_to(due - 1);
		KUNIT_EXPECT_EQ(test, tt->fired, 0);
	}
	if (due == KTIME_MAX) {
		KUNIT_EXPECT_TRUE(test, ktimer_active(&tt->timer));
		return;
	}
	advance_to(due);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
	KUNIT_EXPECT_EQ(test, tt->seen_now, due);
	KUNIT_EXPECT_EQ(test, tt->timer.expired, due);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&tt->timer));
}

static struct kunit_case ktimer_modes_cases[] = {
	KUNIT_CASE_PARAM(ktimer_start_mode_test, mode_cases_gen_params),
	KUNIT_CASE_PARAM(ktimer_modify_pending_mode_test, mode_cases_gen_params),
	KUNIT_CASE_PARAM(ktimer_modify_idle_mode_test, mode_cases_gen_params),
	KUNIT_CASE(ktimer_nocheck_skips_clock_test),
	KUNIT_CASE_PARAM(ktimer_mode_fires_at_expiry_test, mode_cases_gen_params),
	{}
};

static struct kunit_suite ktimer_modes_suite = {
	.name = "ktimer_modes",
	.suite_init = fake_suite_init,
	.suite_exit = fake_suite_exit,
	.init = fake_case_init,
	.exit = fake_case_exit,
	.test_cases = ktimer_modes_cases,
};

/* ---- caller errors ---- */

static void ktimer_null_timer_test(struct kunit *test)
{
	ktime_t t = 100, now = 0;

	expect_warning_begin(test);
	KUNIT_EXPECT_EQ(test, start_ktimer(NULL, &t, KTIMER_REL), -EINVAL);
	KUNIT_EXPECT_EQ(test, modify_ktimer(NULL, &t, KTIMER_REL), -EINVAL);
	KUNIT_EXPECT_EQ(test, try_to_stop_ktimer(NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, stop_ktimer(NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, get_remtime_ktimer(NULL, 0), 0);
	KUNIT_EXPECT_EQ(test, get_expiry_ktimer(NULL, &now), 0);
	KUNIT_EXPECT_EQ(test, schedule_ktimer(NULL, &t, TASK_UNINTERRUPTIBLE,
					      KTIMER_REL), -EINVAL);
	expect_warning_end(test);
	KUNIT_EXPECT_FALSE(test, ktimer_active(NULL));
}

/* A timer that was never initialised has no base: refused, not crashed */
static void ktimer_uninitialised_timer_test(struct kunit *test)
{
	struct ktimer *timer = kunit_kzalloc(test, sizeof(*timer), GFP_KERNEL);
	ktime_t t = 100;

	KUNIT_ASSERT_NOT_NULL(test, timer);
	timer->function = test_callback;
	expect_warning_begin(test);
	KUNIT_EXPECT_EQ(test, start_ktimer(timer, &t, KTIMER_REL), -EINVAL);
	KUNIT_EXPECT_EQ(test, modify_ktimer(timer, &t, KTIMER_REL), -EINVAL);
	KUNIT_EXPECT_EQ(test, stop_ktimer(timer), -EINVAL);
	expect_warning_end(test);
}

static void ktimer_null_function_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);
	ktime_t t = 100;

	tt->timer.function = NULL;
	tt->timer.expires = 42;
	expect_warning_begin(test);
	KUNIT_EXPECT_EQ(test, start_ktimer(&tt->timer, &t, KTIMER_REL), -EINVAL);
	KUNIT_EXPECT_EQ(test, modify_ktimer(&tt->timer, &t, KTIMER_REL), -EINVAL);
	expect_warning_end(test);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&tt->timer));
	KUNIT_EXPECT_EQ(test, tt->timer.expires, 42);
}

static const int bad_modes[] = {
	0, 7, -1, KTIMER_NOCHECK, KTIMER_ABS | 0x20000, KTIMER_REL | BIT(30),
	INT_MIN,
};

static void bad_mode_desc(const int *mode, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "mode_%#x", *mode);
}

KUNIT_ARRAY_PARAM(bad_modes, bad_modes, bad_mode_desc);

/* An unknown mode changes nothing, even on a pending timer */
static void ktimer_unknown_mode_test(struct kunit *test)
{
	const int *mode = test->param_value;
	struct test_timer *tt = new_timer(test, 0);
	ktime_t t = NOW + 100;

	KUNIT_ASSERT_EQ(test, start_ktimer(&tt->timer, &t, KTIMER_ABS), 0);
	expect_warning_begin(test);
	KUNIT_EXPECT_EQ(test, modify_ktimer(&tt->timer, &t, *mode), -EINVAL);
	expect_warning_end(test);
	KUNIT_EXPECT_TRUE(test, ktimer_active(&tt->timer));
	KUNIT_EXPECT_EQ(test, tt->timer.expires, NOW + 100);
	advance_to(NOW + 100);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
}

static const int modes_needing_tim[] = {
	KTIMER_ABS, KTIMER_REL, KTIMER_INCR, KTIMER_FORWARD,
	KTIMER_ABS | KTIMER_NOCHECK,
};

KUNIT_ARRAY_PARAM(modes_needing_tim, modes_needing_tim, bad_mode_desc);

static void ktimer_null_tim_test(struct kunit *test)
{
	const int *mode = test->param_value;
	struct test_timer *tt = new_timer(test, 0);

	tt->timer.expires = NOW + 5;
	expect_warning_begin(test);
	KUNIT_EXPECT_EQ(test, start_ktimer(&tt->timer, NULL, *mode), -EINVAL);
	KUNIT_EXPECT_EQ(test, modify_ktimer(&tt->timer, NULL, *mode), -EINVAL);
	expect_warning_end(test);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&tt->timer));
	KUNIT_EXPECT_EQ(test, tt->timer.expires, NOW + 5);
}

static const ktime_t bad_periods[] = { 0, -1, KTIME_MIN };

static void bad_period_desc(const ktime_t *period, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "period_%lld", *period);
}

KUNIT_ARRAY_PARAM(bad_periods, bad_periods, bad_period_desc);

/* A zero or negative period is refused: the 2005 code looped forever */
static void ktimer_forward_bad_period_test(struct kunit *test)
{
	const ktime_t *period = test->param_value;
	struct test_timer *tt = new_timer(test, 0);
	ktime_t t = NOW + 100;

	KUNIT_ASSERT_EQ(test, start_ktimer(&tt->timer, &t, KTIMER_ABS), 0);
	tt->timer.interval = *period;
	expect_warning_begin(test);
	KUNIT_EXPECT_EQ(test, modify_ktimer(&tt->timer, period, KTIMER_FORWARD),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, modify_ktimer(&tt->timer, NULL, KTIMER_REARM),
			-EINVAL);
	expect_warning_end(test);
	KUNIT_EXPECT_TRUE(test, ktimer_active(&tt->timer));
	KUNIT_EXPECT_EQ(test, tt->timer.expires, NOW + 100);
	KUNIT_EXPECT_EQ(test, tt->timer.overrun, 0);
}

/* start_ktimer() on a pending timer: -EBUSY, and it still fires once */
static void ktimer_start_pending_busy_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);
	ktime_t t = NOW + 100, other = NOW + 5;

	KUNIT_ASSERT_EQ(test, start_ktimer(&tt->timer, &t, KTIMER_ABS), 0);
	KUNIT_EXPECT_EQ(test, start_ktimer(&tt->timer, &other, KTIMER_ABS),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, tt->timer.expires, NOW + 100);
	advance_to(NOW + 99);
	KUNIT_EXPECT_EQ(test, tt->fired, 0);
	advance_to(KTIME_MAX - 1);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
	KUNIT_EXPECT_EQ(test, stop_ktimer(&tt->timer), 0);
}

/* A refused expiry does not leave a pending timer queued */
static void ktimer_modify_to_past_stops_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);
	ktime_t t = NOW + 100, past = PAST;

	KUNIT_ASSERT_EQ(test, start_ktimer(&tt->timer, &t, KTIMER_ABS), 0);
	KUNIT_EXPECT_EQ(test, modify_ktimer(&tt->timer, &past, KTIMER_ABS),
			-ETIME);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&tt->timer));
	KUNIT_EXPECT_EQ(test, tt->timer.expired, NOW);
	advance_to(NOW + 1000);
	KUNIT_EXPECT_EQ(test, tt->fired, 0);
}

static ktime_t zero_get_time(void)
{
	return 0;
}

static void ktimer_register_bad_clock_test(struct kunit *test)
{
	struct ktimer_clock no_time = { .name = "bad" };
	struct ktimer_clock no_name = { .get_time = zero_get_time };
	struct ktimer_clock coarse = {
		.name = "bad", .get_time = zero_get_time,
		.resolution = NSEC_PER_SEC + 1,
	};

	expect_warning_begin(test);
	KUNIT_EXPECT_EQ(test, ktimer_register_clock(NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_register_clock(&no_time), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_register_clock(&no_name), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_register_clock(&coarse), -EINVAL);
	expect_warning_end(test);
	KUNIT_EXPECT_EQ(test, ktimer_register_clock(&fake_clock), -EBUSY);
	KUNIT_EXPECT_EQ(test, ktimer_unregister_clock(&no_time), -EINVAL);
}

/* A clock with a pending timer cannot go away under it */
static void ktimer_unregister_busy_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);
	ktime_t t = NOW + 100;

	KUNIT_ASSERT_EQ(test, start_ktimer(&tt->timer, &t, KTIMER_ABS), 0);
	KUNIT_EXPECT_EQ(test, ktimer_unregister_clock(&fake_clock), -EBUSY);
	/* still fully usable */
	advance_to(NOW + 100);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
	KUNIT_EXPECT_EQ(test, start_ktimer(&tt->timer, &t, KTIMER_INCR), 0);
}

/* The coarsest resolution a clock may have, NSEC_PER_SEC, is accepted */
static void ktimer_register_coarsest_clock_test(struct kunit *test)
{
	struct ktimer_clock coarsest = {
		.name = "coarsest", .get_time = zero_get_time,
		.resolution = NSEC_PER_SEC, .flags = KTIMER_CLOCK_MANUAL,
	};

	KUNIT_ASSERT_EQ(test, ktimer_register_clock(&coarsest), 0);
	KUNIT_EXPECT_EQ(test, ktimer_clock_resolution(&coarsest), NSEC_PER_SEC);
	KUNIT_EXPECT_EQ(test, ktimer_unregister_clock(&coarsest), 0);
}

DEFINE_FAKE_CLOCK(spare_clock, FAKE_RES);

/* A callback that spins on another CPU until the test releases it */
struct remote_run {
	struct work_struct	work;
	struct test_timer	*tt;
	struct completion	in_callback;
	bool			release;
	bool			gave_up;
	int			start_ret;
};

static struct remote_run *remote_run;

static void spin_until_released(struct test_timer *tt)
{
	struct remote_run *rr = READ_ONCE(remote_run);
	ktime_t limit = ktime_get() + 5LL * NSEC_PER_SEC;

	complete(&rr->in_callback);
	while (!READ_ONCE(rr->release)) {
		if (ktime_get() > limit) {
			WRITE_ONCE(rr->gave_up, true);
			break;
		}
		cpu_relax();
	}
}

/* On the other CPU: queue the timer there and run its clock */
static void remote_run_fn(struct work_struct *work)
{
	struct remote_run *rr = container_of(work, struct remote_run, work);
	ktime_t t = NOW + 10;

	rr->start_ret = start_ktimer(&rr->tt->timer, &t, KTIMER_ABS);
	WRITE_ONCE(spare_clock_now, NOW + 10);
	ktimer_run_clock(&spare_clock);
}

static void unregister_spare_clock(void *unused)
{
	ktimer_unregister_clock(&spare_clock);
}

/*
 * While a timer's callback runs on another CPU, its clock cannot be
 * unregistered and the timer cannot change clocks: both would pull the
 * base from under the running expiry.
 */
static void ktimer_busy_while_callback_runs_test(struct kunit *test)
{
	struct remote_run *rr = kunit_kzalloc(test, sizeof(*rr), GFP_KERNEL);
	unsigned int here = raw_smp_processor_id(), other;
	int unregister_ret, change_ret;

	KUNIT_ASSERT_NOT_NULL(test, rr);
	other = cpumask_any_but(cpu_online_mask, here);
	if (other >= nr_cpu_ids)
		kunit_skip(test, "needs a second CPU");
	KUNIT_ASSERT_EQ(test, ktimer_register_clock(&spare_clock), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							unregister_spare_clock,
							NULL), 0);
	rr->tt = new_timer(test, 0);
	ktimer_init(&rr->tt->timer, &spare_clock);
	rr->tt->timer.function = test_callback;
	rr->tt->timer.data = rr->tt;
	rr->tt->action = spin_until_released;
	init_completion(&rr->in_callback);
	INIT_WORK_ONSTACK(&rr->work, remote_run_fn);
	WRITE_ONCE(remote_run, rr);

	schedule_work_on(other, &rr->work);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&rr->in_callback,
							  30 * HZ), 0);
	unregister_ret = ktimer_unregister_clock(&spare_clock);
	change_ret = ktimer_change_clock(&rr->tt->timer, &fake_clock);
	WRITE_ONCE(rr->release, true);
	flush_work(&rr->work);
	destroy_work_on_stack(&rr->work);

	KUNIT_ASSERT_FALSE_MSG(test, READ_ONCE(rr->gave_up),
			       "the callback was not released within 5 s");
	KUNIT_EXPECT_EQ(test, rr->start_ret, 0);
	KUNIT_EXPECT_EQ(test, rr->tt->fired, 1);
	KUNIT_EXPECT_EQ(test, unregister_ret, -EBUSY);
	KUNIT_EXPECT_EQ(test, change_ret, -EBUSY);
	KUNIT_EXPECT_PTR_EQ(test, rr->tt->timer.base->clock, &spare_clock);
	KUNIT_EXPECT_EQ(test, ktimer_unregister_clock(&spare_clock), 0);
}

/* Slots run out with -ENOSPC; an unregistered clock's timers are refused */
static void ktimer_clock_slots_test(struct kunit *test)
{
	struct ktimer_clock *extra;
	struct ktimer timer;
	ktime_t t = 100;
	int i, n = 0, ret = 0;

	extra = kunit_kcalloc(test, KTIMER_MAX_CLOCKS, sizeof(*extra),
			      GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, extra);
	for (i = 0; i < KTIMER_MAX_CLOCKS; i++) {
		extra[i].name = "extra";
		extra[i].get_time = fake_clock_get_time;
		extra[i].flags = KTIMER_CLOCK_MANUAL;
		ret = ktimer_register_clock(&extra[i]);
		if (ret)
			break;
		n++;
	}
	KUNIT_EXPECT_EQ(test, ret, -ENOSPC);
	KUNIT_EXPECT_GT(test, n, 0);

	ktimer_init_on_stack(&timer, &extra[0]);
	timer.function = test_callback;
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, ktimer_unregister_clock(&extra[i]), 0);

	expect_warning_begin(test);
	KUNIT_EXPECT_EQ(test, start_ktimer(&timer, &t, KTIMER_REL), -EINVAL);
	ktimer_init_on_stack(&timer, &extra[0]);
	KUNIT_EXPECT_PTR_EQ(test, timer.base, NULL);
	expect_warning_end(test);
	destroy_ktimer_on_stack(&timer);
}

/* The softirq runs the real clocks; running one by hand is refused */
static void ktimer_run_clock_refused_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);
	/* claims the fake clock's slot without being registered */
	struct ktimer_clock forged = fake_clock;

	start_abs(test, tt, NOW + 10);
	WRITE_ONCE(fake_clock_now, NOW + 10);
	expect_warning_begin(test);
	ktimer_run_clock(&ktimer_clock_monotonic);
	ktimer_run_clock(&forged);
	ktimer_run_clock(NULL);
	expect_warning_end(test);
	KUNIT_EXPECT_EQ(test, tt->fired, 0);
	ktimer_run_clock(&fake_clock);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
}

/* ---- each caller error warns, and only once ---- */

static atomic_t warnings;

static void count_warning(void *data, enum error_detector detector,
			  unsigned long id)
{
	if (detector == ERROR_DETECTOR_WARN)
		atomic_inc(&warnings);
}

/* Make every WARN_ON_ONCE() warn again, as debugfs clear_warn_once does */
static void rearm_warn_once(void)
{
	generic_bug_clear_once();
	memset(__start_once, 0, __end_once - __start_once);
}

struct caller_error {
	const char	*name;
	int		(*make)(struct test_timer *tt);
	int		ret;
};

static int err_null_timer(struct test_timer *tt)
{
	ktime_t t = NOW + 100;

	return start_ktimer(NULL, &t, KTIMER_ABS);
}

static int err_null_function(struct test_timer *tt)
{
	ktime_t t = NOW + 100;
	int ret;

	tt->timer.function = NULL;
	ret = start_ktimer(&tt->timer, &t, KTIMER_ABS);
	tt->timer.function = test_callback;
	return ret;
}

static int err_bad_mode(struct test_timer *tt)
{
	ktime_t t = NOW + 100;

	return start_ktimer(&tt->timer, &t, 7);
}

static int err_null_tim(struct test_timer *tt)
{
	return start_ktimer(&tt->timer, NULL, KTIMER_ABS);
}

static int err_forward_mode_period(struct test_timer *tt)
{
	ktime_t neg = -1;

	return start_ktimer(&tt->timer, &neg, KTIMER_FORWARD);
}

static int err_rearm_no_interval(struct test_timer *tt)
{
	tt->timer.interval = 0;
	return start_ktimer(&tt->timer, NULL, KTIMER_REARM);
}

static int err_forward_period(struct test_timer *tt)
{
	return forward_ktimer(&tt->timer, NOW, 0);
}

static int err_forward_pending(struct test_timer *tt)
{
	ktime_t t = NOW + 100;
	u64 periods;

	if (start_ktimer(&tt->timer, &t, KTIMER_ABS))
		return -1;
	periods = forward_ktimer(&tt->timer, NOW, 10);
	return stop_ktimer(&tt->timer) == 1 ? periods : -1;
}

static int err_run_clock_not_manual(struct test_timer *tt)
{
	ktimer_run_clock(&ktimer_clock_monotonic);
	return 0;
}

static const struct caller_error caller_errors[] = {
	{ "NULL timer", err_null_timer, -EINVAL },
	{ "NULL ->function", err_null_function, -EINVAL },
	{ "unknown mode", err_bad_mode, -EINVAL },
	{ "NULL tim", err_null_tim, -EINVAL },
	{ "FORWARD by a period <= 0", err_forward_mode_period, -EINVAL },
	{ "REARM without an interval", err_rearm_no_interval, -EINVAL },
	{ "forward_ktimer() by 0", err_forward_period, 0 },
	{ "forward_ktimer() of a pending timer", err_forward_pending, 0 },
	{ "ktimer_run_clock() of a clock that is not manual",
	  err_run_clock_not_manual, 0 },
};

static int err_null_timer_modify(struct test_timer *tt)
{
	ktime_t t = NOW + 100;

	return modify_ktimer(NULL, &t, KTIMER_ABS);
}

static int err_null_timer_stop(struct test_timer *tt)
{
	return try_to_stop_ktimer(NULL);
}

static int err_null_timer_remtime(struct test_timer *tt)
{
	return get_remtime_ktimer(NULL, 0);
}

static int err_bad_mode_modify(struct test_timer *tt)
{
	ktime_t t = NOW + 100;

	return modify_ktimer(&tt->timer, &t, 7);
}

static int err_rearm_no_interval_modify(struct test_timer *tt)
{
	tt->timer.interval = 0;
	return modify_ktimer(&tt->timer, NULL, KTIMER_REARM);
}

/* Kinds of caller_errors[] again, met by other API calls */
static const struct caller_error caller_errors_elsewhere[] = {
	{ "NULL timer to modify_ktimer()", err_null_timer_modify, -EINVAL },
	{ "NULL timer to try_to_stop_ktimer()", err_null_timer_stop, -EINVAL },
	{ "NULL timer to get_remtime_ktimer()", err_null_timer_remtime, 0 },
	{ "unknown mode to modify_ktimer()", err_bad_mode_modify, -EINVAL },
	{ "REARM without an interval to modify_ktimer()",
	  err_rearm_no_interval_modify, -EINVAL },
};

/* Make each caller error of @errors once; each must warn @warned times */
static void make_errors(struct kunit *test, struct test_timer *tt,
			const struct caller_error *errors, int n, int warned)
{
	int i;

	for (i = 0; i < n; i++) {
		const struct caller_error *e = &errors[i];
		int before = atomic_read(&warnings);

		KUNIT_EXPECT_EQ_MSG(test, e->make(tt), e->ret, "%s", e->name);
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&warnings) - before, warned,
				    "warnings from %s", e->name);
	}
}

static void make_caller_errors(struct kunit *test, struct test_timer *tt,
			       int warned)
{
	make_errors(test, tt, caller_errors, ARRAY_SIZE(caller_errors), warned);
}

static void stop_counting_warnings(void *unused)
{
	unregister_trace_error_report_end(count_warning, NULL);
	tracepoint_synchronize_unregister();
}

/*
 * A caller error warns (so that the bug is seen) once per boot, not at
 * each call (so that a buggy caller in a loop cannot flood the log).  The
 * case re-arms the once-only warnings, as debugfs clear_warn_once does,
 * and counts the warnings through the error_report_end tracepoint that
 * every WARN passes: one per kind the first time, none after, also when
 * another API call meets the same kind (the checks are inlined into every
 * call; their warnings must not be).
 */
static void ktimer_caller_errors_warn_once_test(struct kunit *test)
{
	struct test_timer *tt;

	/* without tracepoints the registration fails with -ENOSYS */
	if (!IS_ENABLED(CONFIG_TRACEPOINTS))
		kunit_skip(test, "needs CONFIG_TRACEPOINTS (counts WARNs at error_report_end)");
	tt = new_timer(test, 0);
	KUNIT_ASSERT_EQ(test, register_trace_error_report_end(count_warning,
							      NULL), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							stop_counting_warnings,
							NULL), 0);
	rearm_warn_once();
	expect_warning_begin(test);
	make_caller_errors(test, tt, 1);
	expect_warning_end(test);
	make_caller_errors(test, tt, 0);
	make_errors(test, tt, caller_errors_elsewhere,
		    ARRAY_SIZE(caller_errors_elsewhere), 0);
	make_caller_errors(test, tt, 0);
	KUNIT_EXPECT_EQ(test, tt->fired, 0);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&tt->timer));
}

static struct kunit_case ktimer_errors_cases[] = {
	KUNIT_CASE(ktimer_null_timer_test),
	KUNIT_CASE(ktimer_uninitialised_timer_test),
	KUNIT_CASE(ktimer_null_function_test),
	KUNIT_CASE_PARAM(ktimer_unknown_mode_test, bad_modes_gen_params),
	KUNIT_CASE_PARAM(ktimer_null_tim_test, modes_needing_tim_gen_params),
	KUNIT_CASE_PARAM(ktimer_forward_bad_period_test, bad_periods_gen_params),
	KUNIT_CASE(ktimer_start_pending_busy_test),
	KUNIT_CASE(ktimer_modify_to_past_stops_test),
	KUNIT_CASE(ktimer_register_bad_clock_test),
	KUNIT_CASE(ktimer_unregister_busy_test),
	KUNIT_CASE(ktimer_register_coarsest_clock_test),
	KUNIT_CASE(ktimer_busy_while_callback_runs_test),
	KUNIT_CASE(ktimer_clock_slots_test),
	KUNIT_CASE(ktimer_run_clock_refused_test),
	KUNIT_CASE(ktimer_caller_errors_warn_once_test),
	{}
};

static struct kunit_suite ktimer_errors_suite = {
	.name = "ktimer_errors",
	.suite_init = fake_suite_init,
	.suite_exit = fake_suite_exit,
	.init = fake_case_init,
	.exit = fake_case_exit,
	.test_cases = ktimer_errors_cases,
};

/* ---- queue order and expiry ---- */

static void ktimer_fire_in_expiry_order_test(struct kunit *test)
{
	static const ktime_t offsets[] = { 50, 10, 40, 20, 30, 60 };
	struct test_ctx *ctx = test->priv;
	int i;

	for (i = 0; i < ARRAY_SIZE(offsets); i++)
		start_abs(test, new_timer(test, offsets[i]), NOW + offsets[i]);
	advance_to(NOW + 100);
	KUNIT_ASSERT_EQ(test, ctx->nfired, ARRAY_SIZE(offsets));
	for (i = 0; i < ARRAY_SIZE(offsets); i++)
		KUNIT_EXPECT_EQ(test, ctx->fired_ids[i], 10 * (i + 1));
}

/* Equal expiries fire in the order they were started */
static void ktimer_equal_expiry_fifo_test(struct kunit *test)
{
	struct test_ctx *ctx = test->priv;
	struct test_timer *tt[6];
	int i;

	for (i = 0; i < 6; i++)
		tt[i] = new_timer(test, i);
	/* interleave a later and an earlier one between the ties */
	start_abs(test, tt[0], NOW + 10);
	start_abs(test, tt[1], NOW + 10);
	start_abs(test, tt[5], NOW + 20);
	start_abs(test, tt[2], NOW + 10);
	start_abs(test, tt[4], NOW + 5);
	start_abs(test, tt[3], NOW + 10);
	advance_to(NOW + 20);
	KUNIT_ASSERT_EQ(test, ctx->nfired, 6);
	KUNIT_EXPECT_EQ(test, ctx->fired_ids[0], 4);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, ctx->fired_ids[i + 1], i);
	KUNIT_EXPECT_EQ(test, ctx->fired_ids[5], 5);
}

/* A restarted timer goes behind the timers already waiting at its expiry */
static void ktimer_restart_requeues_behind_ties_test(struct kunit *test)
{
	struct test_ctx *ctx = test->priv;
	struct test_timer *a = new_timer(test, 1), *b = new_timer(test, 2);
	ktime_t t = NOW + 10;

	start_abs(test, a, t);
	start_abs(test, b, t);
	KUNIT_EXPECT_EQ(test, modify_ktimer(&a->timer, &t, KTIMER_ABS), 1);
	advance_to(t);
	KUNIT_ASSERT_EQ(test, ctx->nfired, 2);
	KUNIT_EXPECT_EQ(test, ctx->fired_ids[0], 2);
	KUNIT_EXPECT_EQ(test, ctx->fired_ids[1], 1);
}

/*
 * Modifying the earliest timer: to a time still before the next timer's
 * it stays first (the core changes it in place), to a time past the next
 * timer's it goes behind it.  Either way it fires at its new time.
 */
static void ktimer_modify_earliest_test(struct kunit *test)
{
	struct test_ctx *ctx = test->priv;
	struct test_timer *a = new_timer(test, 1), *b = new_timer(test, 2);
	ktime_t sooner = NOW + 5, after_b = NOW + 30;

	start_abs(test, a, NOW + 10);
	start_abs(test, b, NOW + 20);
	KUNIT_EXPECT_EQ(test, modify_ktimer(&a->timer, &sooner, KTIMER_ABS), 1);
	advance_to(NOW + 4);
	KUNIT_EXPECT_EQ(test, ctx->nfired, 0);
	advance_to(NOW + 5);
	KUNIT_ASSERT_EQ(test, ctx->nfired, 1);

	start_abs(test, a, NOW + 10);
	KUNIT_EXPECT_EQ(test, modify_ktimer(&a->timer, &after_b, KTIMER_ABS), 1);
	advance_to(NOW + 20);
	KUNIT_EXPECT_EQ(test, ctx->nfired, 2);
	KUNIT_EXPECT_EQ(test, a->fired, 1);
	advance_to(NOW + 30);
	KUNIT_ASSERT_EQ(test, ctx->nfired, 3);
	KUNIT_EXPECT_EQ(test, ctx->fired_ids[0], 1);
	KUNIT_EXPECT_EQ(test, ctx->fired_ids[1], 2);
	KUNIT_EXPECT_EQ(test, ctx->fired_ids[2], 1);
}

static void ktimer_partial_run_test(struct kunit *test)
{
	struct test_timer *a = new_timer(test, 1), *b = new_timer(test, 2);

	start_abs(test, a, NOW + 10);
	start_abs(test, b, NOW + 20);
	advance_to(NOW + 15);
	KUNIT_EXPECT_EQ(test, a->fired, 1);
	KUNIT_EXPECT_EQ(test, b->fired, 0);
	KUNIT_EXPECT_TRUE(test, ktimer_active(&b->timer));
	advance_to(NOW + 20);
	KUNIT_EXPECT_EQ(test, b->fired, 1);
}

/* A callback that takes time: the clock moves on by 10 while it runs */
static void slow_callback_action(struct test_timer *tt)
{
	WRITE_ONCE(fake_clock_now, fake_clock_get_time() + 10);
}

/*
 * Timers that fell due while callbacks ran are run in the same run, not
 * after another wake-up; a timer not yet due when the run ends waits.
 */
static void ktimer_run_catches_up_test(struct kunit *test)
{
	struct test_timer *a = new_timer(test, 1), *b = new_timer(test, 2);
	struct test_timer *c = new_timer(test, 3);

	a->action = slow_callback_action;
	b->action = slow_callback_action;
	start_abs(test, a, NOW + 10);
	start_abs(test, b, NOW + 20);
	start_abs(test, c, NOW + 31);
	advance_to(NOW + 10);
	KUNIT_EXPECT_EQ(test, a->fired, 1);
	KUNIT_EXPECT_EQ(test, b->fired, 1);
	KUNIT_EXPECT_EQ(test, b->timer.expired, NOW + 20);
	KUNIT_EXPECT_EQ(test, c->fired, 0);
	KUNIT_EXPECT_TRUE(test, ktimer_active(&c->timer));
}

/* ->expired is the clock's time at the run, which may be late */
static void ktimer_expired_is_run_time_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	start_abs(test, tt, NOW + 10);
	advance_to(NOW + 17);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
	KUNIT_EXPECT_EQ(test, tt->timer.expired, NOW + 17);
	KUNIT_EXPECT_EQ(test, tt->seen_expires, NOW + 10);
	KUNIT_EXPECT_EQ(test, get_remtime_ktimer(&tt->timer, 0), -7);
}

/* The clock does not move while nobody runs the queue */
static void ktimer_no_run_no_fire_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	start_abs(test, tt, NOW + 10);
	WRITE_ONCE(fake_clock_now, NOW + 1000);
	KUNIT_EXPECT_EQ(test, tt->fired, 0);
	KUNIT_EXPECT_TRUE(test, ktimer_active(&tt->timer));
	ktimer_run_clock(&fake_clock);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
}

static void ktimer_negative_clock_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	WRITE_ONCE(fake_clock_now, -1000);
	start_abs(test, tt, -500);
	advance_to(-501);
	KUNIT_EXPECT_EQ(test, tt->fired, 0);
	advance_to(-500);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
}

static void ktimer_max_never_fires_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);
	ktime_t rel = KTIME_MAX;

	KUNIT_ASSERT_EQ(test, start_ktimer(&tt->timer, &rel, KTIMER_REL), 0);
	KUNIT_EXPECT_EQ(test, tt->timer.expires, KTIME_MAX);
	advance_to(KTIME_MAX - 1);
	KUNIT_EXPECT_EQ(test, tt->fired, 0);
	KUNIT_EXPECT_EQ(test, try_to_stop_ktimer(&tt->timer), 1);
}

static void count_bulk(void *data)
{
	struct test_ctx *ctx = data;

	ctx->bulk_fired++;
}

/* Expiry of the i-th of n starts, in the order a case names */
struct queue_order {
	const char *name;
	ktime_t (*expiry)(unsigned int i, unsigned int n);
};

static ktime_t ascending_expiry(unsigned int i, unsigned int n)
{
	return NOW + 1 + i;
}

static ktime_t descending_expiry(unsigned int i, unsigned int n)
{
	return NOW + n - i;
}

static ktime_t equal_expiry(unsigned int i, unsigned int n)
{
	return NOW + 1;
}

static const struct queue_order queue_orders[] = {
	{ "ascending", ascending_expiry },
	{ "descending", descending_expiry },
	/* ties queue in start order: always the rightmost place */
	{ "equal", equal_expiry },
};

static void queue_order_desc(const struct queue_order *o, char *desc)
{
	strscpy(desc, o->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(queue_order, queue_orders, queue_order_desc);

/*
 * The queue stays a balanced tree whatever the order of the starts, so a
 * start or stop walks O(log n) nodes: the logarithmic growth that the
 * benchmark cannot show under emulation, where a million timers are bound
 * by memory.  A sorted list or an unbalanced tree would be n high here.
 */
static void ktimer_queue_height_test(struct kunit *test)
{
	const struct queue_order *order = test->param_value;
	struct test_ctx *ctx = test->priv;
	const unsigned int n = 1023;	/* a perfect tree is 10 high */
	/* a red-black tree of n nodes is at most 2 log2(n + 1) high */
	const unsigned int lowest = ilog2(n + 1), highest = 2 * lowest;
	unsigned int i, height;
	struct ktimer *timers;

	timers = kunit_kcalloc(test, n, sizeof(*timers), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, timers);
	ctx->bulk = timers;
	migrate_disable();	/* every timer on this CPU's queue */
	for (i = 0; i < n; i++) {
		ktime_t t = order->expiry(i, n);

		ktimer_init(&timers[i], &fake_clock);
		timers[i].function = count_bulk;
		timers[i].data = ctx;
		ctx->nbulk = i + 1;
		if (start_ktimer(&timers[i], &t, KTIMER_ABS))
			break;
	}
	height = ktimer_test_queue_height(&fake_clock);
	migrate_enable();

	KUNIT_ASSERT_EQ(test, i, n);
	KUNIT_EXPECT_LE(test, height, highest);
	KUNIT_EXPECT_GE(test, height, lowest);
}

/* Many timers in pseudo-random order expire exactly when due */
static void ktimer_many_timers_sorted_test(struct kunit *test)
{
	struct test_ctx *ctx = test->priv;
	const int n = 512;
	struct ktimer *timers;
	ktime_t last = KTIME_MIN;
	u32 seed = 12345;
	int i, fired = 0;

	timers = kunit_kcalloc(test, n, sizeof(*timers), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, timers);
	ctx->bulk = timers;
	for (i = 0; i < n; i++) {
		ktime_t t;

		seed = seed * 1103515245 + 12345;
		t = NOW + 1 + (seed >> 8) % 100000;
		ktimer_init(&timers[i], &fake_clock);
		timers[i].function = count_bulk;
		timers[i].data = ctx;
		ctx->nbulk = i + 1;
		KUNIT_ASSERT_EQ(test, start_ktimer(&timers[i], &t, KTIMER_ABS), 0);
	}
	/* Step the clock from one expiry to the next */
	while (fired < n) {
		ktime_t next = KTIME_MAX;

		for (i = 0; i < n; i++)
			if (ktimer_active(&timers[i]) && timers[i].expires < next)
				next = timers[i].expires;
		KUNIT_ASSERT_NE(test, next, KTIME_MAX);
		KUNIT_ASSERT_GE(test, next, last);
		last = next;
		for (i = 0; i < n; i++)
			if (ktimer_active(&timers[i]) && timers[i].expires == next)
				fired++;
		WRITE_ONCE(fake_clock_now, next);
		ktimer_run_clock(&fake_clock);
		for (i = 0; i < n; i++)
			KUNIT_ASSERT_EQ(test, ktimer_active(&timers[i]),
					timers[i].expires > next);
		KUNIT_ASSERT_EQ(test, ctx->bulk_fired, fired);
	}
}

static void ktimer_periodic_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);
	ktime_t rel = 100;
	int i;

	tt->timer.interval = 100;
	KUNIT_ASSERT_EQ(test, start_ktimer(&tt->timer, &rel, KTIMER_REL), 0);
	for (i = 1; i <= 3; i++) {
		advance_to(NOW + 100 * i);
		KUNIT_EXPECT_EQ(test, tt->fired, i);
		KUNIT_EXPECT_EQ(test, tt->seen_expires, NOW + 100 * i);
		KUNIT_EXPECT_EQ(test, tt->timer.expires, NOW + 100 * (i + 1));
		KUNIT_EXPECT_TRUE(test, ktimer_active(&tt->timer));
	}
	KUNIT_EXPECT_EQ(test, tt->timer.overrun, 3);
	KUNIT_EXPECT_EQ(test, stop_ktimer(&tt->timer), 1);
	advance_to(NOW + 10000);
	KUNIT_EXPECT_EQ(test, tt->fired, 3);
}

/* A late periodic timer fires once and skips the missed periods */
static void ktimer_periodic_late_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	tt->timer.interval = 100;
	start_abs(test, tt, NOW + 100);
	advance_to(NOW + 350);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
	KUNIT_EXPECT_EQ(test, tt->timer.expires, NOW + 400);
	KUNIT_EXPECT_EQ(test, tt->timer.overrun, 3);
}

/* Periods above 2^32 ns and jumps above 2^40 ns: 64-bit safe on 32-bit */
static void ktimer_periodic_huge_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);
	const ktime_t period = (3LL << 32) + 7;
	const ktime_t jump = (1LL << 40) + 12345;
	ktime_t first = NOW + period;
	u64 periods = div64_u64(jump - period, period) + 1;

	tt->timer.interval = period;
	start_abs(test, tt, first);
	advance_to(NOW + jump);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
	KUNIT_EXPECT_EQ(test, tt->timer.overrun, periods);
	KUNIT_EXPECT_EQ(test, tt->timer.expires,
			(ktime_t)(first + periods * period));
	KUNIT_EXPECT_GT(test, tt->timer.expires, NOW + jump);
	KUNIT_EXPECT_LE(test, tt->timer.expires - period, NOW + jump);
}

/* A 1 ns period across a huge clock jump is one division, not a loop */
static void ktimer_periodic_tiny_period_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	tt->timer.interval = 1;
	start_abs(test, tt, NOW + 1);
	advance_to(KTIME_MAX - 5);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
	KUNIT_EXPECT_EQ(test, tt->timer.expires, KTIME_MAX - 4);
	/* KTIME_MAX - 5 - NOW periods: ->overrun saturates */
	KUNIT_EXPECT_EQ(test, tt->timer.overrun, U32_MAX);
}

static void restart_self_in_past(struct test_timer *tt)
{
	ktime_t past = fake_clock_get_time() - 10;

	tt->action_ret = start_ktimer(&tt->timer, &past,
				      KTIMER_ABS | KTIMER_NOCHECK);
}

/* A callback re-queuing itself in the past runs again in the next run */
static void ktimer_self_restart_nocheck_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	tt->action = restart_self_in_past;
	start_abs(test, tt, NOW + 10);
	advance_to(NOW + 10);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
	KUNIT_EXPECT_EQ(test, tt->action_ret, 0);
	KUNIT_EXPECT_TRUE(test, ktimer_active(&tt->timer));
	ktimer_run_clock(&fake_clock);
	KUNIT_EXPECT_EQ(test, tt->fired, 2);
	tt->action = NULL;
	ktimer_run_clock(&fake_clock);
	KUNIT_EXPECT_EQ(test, tt->fired, 3);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&tt->timer));
}

static void stop_self(struct test_timer *tt)
{
	tt->action_ret = stop_ktimer(&tt->timer);
}

/* A periodic timer ends itself from its callback without deadlock */
static void ktimer_periodic_stop_from_callback_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	tt->timer.interval = 100;
	tt->action = stop_self;
	start_abs(test, tt, NOW + 100);
	advance_to(NOW + 100);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
	KUNIT_EXPECT_EQ(test, tt->action_ret, 0);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&tt->timer));
	advance_to(NOW + 1000);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
}

static void rearm_then_try_stop_self(struct test_timer *tt)
{
	ktime_t rel = 5;

	modify_ktimer(&tt->timer, &rel, KTIMER_REL);
	tt->action_ret = try_to_stop_ktimer(&tt->timer);
}

/*
 * A clock whose read ends the period of period_ender_target, as a callback
 * on another CPU may at any time.  A re-arm reads the clock between its
 * read of the period and the use of it.
 */
static struct ktimer *period_ender_target;

static ktime_t period_ender_get_time(void)
{
	struct ktimer *timer = READ_ONCE(period_ender_target);

	if (timer)
		WRITE_ONCE(timer->interval, 0);
	return NOW;
}

static struct ktimer_clock period_ender = {
	.name		= "period_ender",
	.clockid	= CLOCK_MONOTONIC,
	.get_time	= period_ender_get_time,
	.resolution	= FAKE_RES,
	.flags		= KTIMER_CLOCK_MANUAL,
};

static void unregister_period_ender(void *timer)
{
	WRITE_ONCE(period_ender_target, NULL);
	stop_ktimer(timer);
	WARN_ON(ktimer_unregister_clock(&period_ender));
}

/*
 * KTIMER_REARM reads the period once, under the base lock, and checks it:
 * the re-arm goes on with that period even when the period ends before
 * it is used (a second read would divide by zero).  The clock ends it at
 * the one point between the read and the use, every time, where
 * ktimer_smp.ktimer_rearm_period_race_test can only try by chance.
 */
static void ktimer_rearm_period_read_once_test(struct kunit *test)
{
	struct ktimer *timer = kunit_kzalloc(test, sizeof(*timer), GFP_KERNEL);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, timer);
	KUNIT_ASSERT_EQ(test, ktimer_register_clock(&period_ender), 0);
	ktimer_init(timer, &period_ender);
	timer->function = count_bulk;
	timer->data = test->priv;
	ret = kunit_add_action_or_reset(test, unregister_period_ender, timer);
	KUNIT_ASSERT_EQ(test, ret, 0);

	ktimer_set_expires(timer, NOW - 250);
	timer->interval = 100;
	WRITE_ONCE(period_ender_target, timer);
	ret = start_ktimer(timer, NULL, KTIMER_REARM);
	WRITE_ONCE(period_ender_target, NULL);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, timer->interval, 0);
	KUNIT_EXPECT_EQ(test, timer->expires, NOW + 50);
	KUNIT_EXPECT_EQ(test, timer->overrun, 3);
}

/* From its own callback try_to_stop_ktimer() never returns -1 */
static void ktimer_try_stop_from_callback_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	tt->timer.interval = 100;
	tt->action = rearm_then_try_stop_self;
	start_abs(test, tt, NOW + 100);
	advance_to(NOW + 100);
	KUNIT_EXPECT_EQ(test, tt->action_ret, 1);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&tt->timer));
	advance_to(NOW + 1000);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
}

static void clear_interval(struct test_timer *tt)
{
	tt->timer.interval = 0;
}

static void ktimer_periodic_clear_interval_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	tt->timer.interval = 100;
	tt->action = clear_interval;
	start_abs(test, tt, NOW + 100);
	advance_to(NOW + 100);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&tt->timer));
	KUNIT_EXPECT_EQ(test, tt->timer.overrun, 0);
}

static void restart_self_rel(struct test_timer *tt)
{
	ktime_t rel = 30;

	tt->action_ret = start_ktimer(&tt->timer, &rel, KTIMER_REL);
}

/* A callback that restarts its periodic timer replaces the re-arm */
static void ktimer_periodic_restart_in_callback_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	tt->timer.interval = 100;
	tt->action = restart_self_rel;
	start_abs(test, tt, NOW + 100);
	advance_to(NOW + 100);
	KUNIT_EXPECT_EQ(test, tt->action_ret, 0);
	KUNIT_EXPECT_EQ(test, tt->timer.expires, NOW + 130);
	KUNIT_EXPECT_EQ(test, tt->timer.overrun, 0);
}

static void restart_self_refused(struct test_timer *tt)
{
	ktime_t past = PAST;

	tt->action_ret = start_ktimer(&tt->timer, &past, KTIMER_ABS);
}

/*
 * A restart the callback asks for and start_ktimer() refuses (-ETIME)
 * leaves the timer stopped, as modify_ktimer() documents: the periodic
 * re-arm must not bring it back.
 */
static void ktimer_refused_restart_stops_periodic_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	tt->timer.interval = 100;
	tt->action = restart_self_refused;
	start_abs(test, tt, NOW + 100);
	advance_to(NOW + 100);
	KUNIT_EXPECT_EQ(test, tt->action_ret, -ETIME);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&tt->timer));
	advance_to(NOW + 1000);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
}

/* Memory that held a fired one-shot timer and now holds someone else's */
struct reused_timer {
	struct ktimer	timer;
	int		fired;
};

static void fired_and_reused(void *data)
{
	struct reused_timer *r = data;

	r->fired++;
	/*
	 * What a kfree() in the callback and a new owner do to the memory:
	 * a fresh, periodic, not yet started timer.  The expiry run must not
	 * look at it again, let alone queue it.
	 */
	ktimer_init(&r->timer, &fake_clock);
	r->timer.function = fired_and_reused;
	r->timer.data = r;
	r->timer.interval = 100;
}

/*
 * A callback may free its timer (hrtimers and timer_list allow it): the
 * run decides the re-arm from what it read before the call.
 */
static void ktimer_callback_reuses_memory_test(struct kunit *test)
{
	struct reused_timer *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	ktime_t t = NOW + 100;

	KUNIT_ASSERT_NOT_NULL(test, r);
	ktimer_init(&r->timer, &fake_clock);
	r->timer.function = fired_and_reused;
	r->timer.data = r;
	KUNIT_ASSERT_EQ(test, start_ktimer(&r->timer, &t, KTIMER_ABS), 0);
	advance_to(NOW + 100);
	KUNIT_EXPECT_EQ(test, r->fired, 1);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&r->timer));
	stop_ktimer(&r->timer);
}

static void fired_and_freed(void *data)
{
	struct ktimer *timer = data;

	stop_ktimer(timer);	/* ends a periodic timer's period */
	kfree(timer);
}

/*
 * The same with a real kfree(), of a one-shot and of a periodic timer
 * that stops itself first: under KASAN (the kasan configuration) any read
 * of the timer after its callback is reported as a use-after-free.
 */
static void ktimer_callback_frees_timer_test(struct kunit *test)
{
	ktime_t period;

	for (period = 0; period <= 100; period += 100) {
		struct ktimer *timer = kzalloc(sizeof(*timer), GFP_KERNEL);
		ktime_t t = fake_clock_now + 100;

		KUNIT_ASSERT_NOT_NULL(test, timer);
		ktimer_init(timer, &fake_clock);
		timer->function = fired_and_freed;
		timer->data = timer;
		timer->interval = period;
		KUNIT_ASSERT_EQ(test, start_ktimer(timer, &t, KTIMER_ABS), 0);
		advance_to(t);
	}
	advance_to(fake_clock_now + 1000);
}

static void stop_other(struct test_timer *tt)
{
	tt->action_ret = stop_ktimer(&tt->other->timer);
}

/* A callback stops another timer due in the same run: it does not fire */
static void ktimer_callback_stops_other_test(struct kunit *test)
{
	struct test_timer *a = new_timer(test, 1), *b = new_timer(test, 2);

	a->action = stop_other;
	a->other = b;
	start_abs(test, a, NOW + 10);
	start_abs(test, b, NOW + 10);
	advance_to(NOW + 10);
	KUNIT_EXPECT_EQ(test, a->action_ret, 1);
	KUNIT_EXPECT_EQ(test, b->fired, 0);
	KUNIT_EXPECT_EQ(test, b->timer.expired, 0);
}

static void queue_other_at(struct test_timer *tt, ktime_t t)
{
	tt->action_ret = modify_ktimer(&tt->other->timer, &t,
				       KTIMER_ABS | KTIMER_NOCHECK);
}

static void restart_other_now(struct test_timer *tt)
{
	queue_other_at(tt, fake_clock_get_time());
}

/* A timer queued during a run waits for the next run */
static void ktimer_queued_during_run_waits_test(struct kunit *test)
{
	struct test_timer *a = new_timer(test, 1), *b = new_timer(test, 2);

	a->action = restart_other_now;
	a->other = b;
	start_abs(test, a, NOW + 10);
	advance_to(NOW + 10);
	KUNIT_EXPECT_EQ(test, a->action_ret, 0);
	KUNIT_EXPECT_EQ(test, b->fired, 0);
	ktimer_run_clock(&fake_clock);
	KUNIT_EXPECT_EQ(test, b->fired, 1);
}

/*
 * Callbacks of a manual clock run as they would in the timer softirq:
 * bottom halves off, interrupts on (the base lock is dropped around them).
 */
static void ktimer_callback_context_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	start_abs(test, tt, NOW + 10);
	advance_to(NOW + 10);
	KUNIT_ASSERT_EQ(test, tt->fired, 1);
	KUNIT_EXPECT_TRUE(test, tt->seen_bh_off);
	KUNIT_EXPECT_FALSE(test, tt->seen_irqs_off);
	KUNIT_EXPECT_FALSE(test, in_softirq());
}

/* Queue the other timer ahead of everything else on the clock */
static void queue_other_in_past(struct test_timer *tt)
{
	queue_other_at(tt, NOW);
}

/*
 * A timer a callback queues ahead of a timer that was already due does not
 * hold that one back: the run runs every timer that was queued when it
 * began and is due, and the newcomer waits for the next run.
 */
static void ktimer_run_passes_over_newcomers_test(struct kunit *test)
{
	struct test_timer *a = new_timer(test, 1), *b = new_timer(test, 2);
	struct test_timer *c = new_timer(test, 3);
	struct test_ctx *ctx = test->priv;

	a->action = queue_other_in_past;
	a->other = c;
	start_abs(test, a, NOW + 10);
	start_abs(test, b, NOW + 30);
	advance_to(NOW + 30);
	KUNIT_EXPECT_EQ(test, a->action_ret, 0);
	KUNIT_ASSERT_EQ(test, ctx->nfired, 2);
	KUNIT_EXPECT_EQ(test, ctx->fired_ids[0], 1);
	KUNIT_EXPECT_EQ(test, ctx->fired_ids[1], 2);
	KUNIT_EXPECT_EQ(test, c->fired, 0);
	KUNIT_EXPECT_TRUE(test, ktimer_active(&c->timer));
	ktimer_run_clock(&fake_clock);
	KUNIT_EXPECT_EQ(test, c->fired, 1);
	KUNIT_EXPECT_EQ(test, ctx->nfired, 3);
}

static void restart_incr(struct test_timer *tt)
{
	ktime_t step = 100;

	tt->action_ret = start_ktimer(&tt->timer, &step, KTIMER_INCR);
}

/* INCR from the callback gives a drift-free sequence of expiries */
static void ktimer_incr_chain_from_callback_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);
	int i;

	tt->action = restart_incr;
	start_abs(test, tt, NOW + 100);
	for (i = 1; i <= 4; i++) {
		/* run late each time: the next expiry does not drift */
		advance_to(NOW + 100 * i + 30);
		KUNIT_EXPECT_EQ(test, tt->fired, i);
		KUNIT_EXPECT_EQ(test, tt->seen_expires, NOW + 100 * i);
		KUNIT_EXPECT_EQ(test, tt->timer.expires, NOW + 100 * (i + 1));
	}
	KUNIT_EXPECT_EQ(test, tt->timer.overrun, 0);
}

static void forward_self(struct test_timer *tt)
{
	ktime_t period = 100;

	tt->action_ret = start_ktimer(&tt->timer, &period, KTIMER_FORWARD);
}

/* FORWARD from the callback skips and counts the periods it missed */
static void ktimer_forward_from_callback_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	tt->action = forward_self;
	start_abs(test, tt, NOW + 100);
	advance_to(NOW + 100);
	KUNIT_EXPECT_EQ(test, tt->timer.expires, NOW + 200);
	KUNIT_EXPECT_EQ(test, tt->timer.overrun, 1);
	advance_to(NOW + 520);
	KUNIT_EXPECT_EQ(test, tt->fired, 2);
	KUNIT_EXPECT_EQ(test, tt->action_ret, 0);
	KUNIT_EXPECT_EQ(test, tt->timer.expires, NOW + 600);
	KUNIT_EXPECT_EQ(test, tt->timer.overrun, 1 + 4);
}

/* Initialising clears everything the caller may have left behind */
static void ktimer_init_clears_timer_test(struct kunit *test)
{
	struct ktimer *timer = kunit_kzalloc(test, sizeof(*timer), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, timer);
	memset(timer, 0x5a, sizeof(*timer));
	ktimer_init(timer, &fake_clock);
	KUNIT_EXPECT_FALSE(test, ktimer_active(timer));
	KUNIT_EXPECT_EQ(test, timer->expires, 0);
	KUNIT_EXPECT_EQ(test, timer->expired, 0);
	KUNIT_EXPECT_EQ(test, timer->interval, 0);
	KUNIT_EXPECT_EQ(test, timer->overrun, 0);
	KUNIT_EXPECT_PTR_EQ(test, timer->function, NULL);
	KUNIT_EXPECT_PTR_EQ(test, timer->data, NULL);
	KUNIT_EXPECT_NOT_NULL(test, timer->base);
	KUNIT_EXPECT_EQ(test, try_to_stop_ktimer(timer), 0);
}

static struct kunit_case ktimer_queue_cases[] = {
	KUNIT_CASE(ktimer_fire_in_expiry_order_test),
	KUNIT_CASE(ktimer_equal_expiry_fifo_test),
	KUNIT_CASE(ktimer_restart_requeues_behind_ties_test),
	KUNIT_CASE(ktimer_modify_earliest_test),
	KUNIT_CASE(ktimer_partial_run_test),
	KUNIT_CASE(ktimer_run_catches_up_test),
	KUNIT_CASE(ktimer_expired_is_run_time_test),
	KUNIT_CASE(ktimer_no_run_no_fire_test),
	KUNIT_CASE(ktimer_negative_clock_test),
	KUNIT_CASE(ktimer_max_never_fires_test),
	KUNIT_CASE(ktimer_many_timers_sorted_test),
	KUNIT_CASE_PARAM(ktimer_queue_height_test, queue_order_gen_params),
	KUNIT_CASE(ktimer_periodic_test),
	KUNIT_CASE(ktimer_periodic_late_test),
	KUNIT_CASE(ktimer_periodic_huge_test),
	KUNIT_CASE(ktimer_periodic_tiny_period_test),
	KUNIT_CASE(ktimer_self_restart_nocheck_test),
	KUNIT_CASE(ktimer_periodic_stop_from_callback_test),
	KUNIT_CASE(ktimer_try_stop_from_callback_test),
	KUNIT_CASE(ktimer_rearm_period_read_once_test),
	KUNIT_CASE(ktimer_periodic_clear_interval_test),
	KUNIT_CASE(ktimer_periodic_restart_in_callback_test),
	KUNIT_CASE(ktimer_refused_restart_stops_periodic_test),
	KUNIT_CASE(ktimer_callback_reuses_memory_test),
	KUNIT_CASE(ktimer_callback_frees_timer_test),
	KUNIT_CASE(ktimer_callback_stops_other_test),
	KUNIT_CASE(ktimer_queued_during_run_waits_test),
	KUNIT_CASE(ktimer_run_passes_over_newcomers_test),
	KUNIT_CASE(ktimer_callback_context_test),
	KUNIT_CASE(ktimer_incr_chain_from_callback_test),
	KUNIT_CASE(ktimer_forward_from_callback_test),
	KUNIT_CASE(ktimer_init_clears_timer_test),
	{}
};

static struct kunit_suite ktimer_queue_suite = {
	.name = "ktimer_queue",
	.suite_init = fake_suite_init,
	.suite_exit = fake_suite_exit,
	.init = fake_case_init,
	.exit = fake_case_exit,
	.test_cases = ktimer_queue_cases,
};

/* ---- stopping and queries ---- */

static void ktimer_try_stop_pending_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	start_abs(test, tt, NOW + 100);
	WRITE_ONCE(fake_clock_now, NOW + 40);
	tt->timer.expired = 77;
	KUNIT_EXPECT_EQ(test, try_to_stop_ktimer(&tt->timer), 1);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&tt->timer));
	KUNIT_EXPECT_EQ(test, tt->timer.expired, 77);
	KUNIT_EXPECT_EQ(test, try_to_stop_ktimer(&tt->timer), 0);
	advance_to(NOW + 1000);
	KUNIT_EXPECT_EQ(test, tt->fired, 0);
}

static void ktimer_stop_idle_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	tt->timer.expired = 77;
	KUNIT_EXPECT_EQ(test, try_to_stop_ktimer(&tt->timer), 0);
	KUNIT_EXPECT_EQ(test, stop_ktimer(&tt->timer), 0);
	KUNIT_EXPECT_EQ(test, tt->timer.expired, 77);
}

static void ktimer_stop_after_expiry_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	start_abs(test, tt, NOW + 10);
	advance_to(NOW + 10);
	KUNIT_EXPECT_EQ(test, try_to_stop_ktimer(&tt->timer), 0);
	KUNIT_EXPECT_EQ(test, stop_ktimer(&tt->timer), 0);
	KUNIT_EXPECT_EQ(test, tt->timer.expired, NOW + 10);
}

static void ktimer_stop_pending_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	tt->timer.interval = 5;
	start_abs(test, tt, NOW + 10);
	KUNIT_EXPECT_EQ(test, stop_ktimer(&tt->timer), 1);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&tt->timer));
	advance_to(NOW + 1000);
	KUNIT_EXPECT_EQ(test, tt->fired, 0);
}

/* A stopped timer can be restarted where it left off */
static void ktimer_restart_after_stop_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	start_abs(test, tt, NOW + 10);
	KUNIT_EXPECT_EQ(test, stop_ktimer(&tt->timer), 1);
	KUNIT_EXPECT_EQ(test, start_ktimer(&tt->timer, NULL, KTIMER_RESTART), 0);
	advance_to(NOW + 10);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
}

static void ktimer_remtime_pending_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	start_abs(test, tt, NOW + 100);
	KUNIT_EXPECT_EQ(test, get_remtime_ktimer(&tt->timer, 0), 100);
	KUNIT_EXPECT_EQ(test, get_remtime_ktimer(&tt->timer, 9), 100);
	/* due but not yet run: the real value, or @fake */
	WRITE_ONCE(fake_clock_now, NOW + 130);
	KUNIT_EXPECT_EQ(test, get_remtime_ktimer(&tt->timer, 0), -30);
	KUNIT_EXPECT_EQ(test, get_remtime_ktimer(&tt->timer, 9), 9);
}

static void ktimer_remtime_stopped_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);

	start_abs(test, tt, NOW + 100);
	WRITE_ONCE(fake_clock_now, NOW + 30);
	KUNIT_ASSERT_EQ(test, stop_ktimer(&tt->timer), 1);
	WRITE_ONCE(fake_clock_now, NOW + 60);
	/* read at the query, as hrtimer_get_remaining() does, not at the stop */
	KUNIT_EXPECT_EQ(test, get_remtime_ktimer(&tt->timer, 0), 40);
	KUNIT_EXPECT_EQ(test, get_remtime_ktimer(&tt->timer, 9), 0);
	WRITE_ONCE(fake_clock_now, NOW + 150);
	KUNIT_EXPECT_EQ(test, get_remtime_ktimer(&tt->timer, 0), -50);
}

static void ktimer_expiry_query_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);
	ktime_t now = 0;

	start_abs(test, tt, NOW + 100);
	WRITE_ONCE(fake_clock_now, NOW + 3);
	KUNIT_EXPECT_EQ(test, get_expiry_ktimer(&tt->timer, &now), NOW + 100);
	KUNIT_EXPECT_EQ(test, now, NOW + 3);
	KUNIT_EXPECT_EQ(test, get_expiry_ktimer(&tt->timer, NULL), NOW + 100);
}

struct convert_case {
	const char	*name;
	struct timespec64 ts;
	ktime_t		ns;
};

static const struct convert_case convert_cases[] = {
	{ "zero", { 0, 0 }, 0 },
	{ "one_ns", { 0, 1 }, FAKE_RES },
	{ "just_below", { 0, FAKE_RES - 1 }, FAKE_RES },
	{ "exact", { 0, FAKE_RES }, FAKE_RES },
	{ "just_above", { 0, FAKE_RES + 1 }, 2 * FAKE_RES },
	{ "seconds", { 3, 0 }, 3LL * NSEC_PER_SEC },
	{ "seconds_plus_one", { 1, 1 }, NSEC_PER_SEC + FAKE_RES },
	{ "max_nsec", { 0, NSEC_PER_SEC - 1 }, NSEC_PER_SEC },
	{ "negative_exact", { -1, 0 }, -NSEC_PER_SEC },
	{ "negative_rounds_up", { -1, 1 }, -NSEC_PER_SEC + FAKE_RES },
	{ "beyond_range", { KTIME_SEC_MAX + 1, 0 }, KTIME_MAX },
};

KUNIT_ARRAY_PARAM_DESC(convert_cases, convert_cases, name);

static void ktimer_convert_timespec_test(struct kunit *test)
{
	const struct convert_case *c = test->param_value;
	struct test_timer *tt = new_timer(test, 0);

	KUNIT_EXPECT_EQ(test, ktimer_convert_timespec(&tt->timer, &c->ts), c->ns);
}

/* A clock's own resolution wins over the engine's */
static void ktimer_clock_own_resolution_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ktimer_clock_resolution(&fake_clock), FAKE_RES);
	expect_warning_begin(test);
	KUNIT_EXPECT_EQ(test, get_ktimer_mono_res(CLOCK_MONOTONIC, NULL), -EINVAL);
	expect_warning_end(test);
}

/* Sleeping on the fake clock: a past expiry returns at once */
static void ktimer_schedule_past_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);
	ktime_t t = PAST;

	KUNIT_EXPECT_EQ(test, schedule_ktimer(&tt->timer, &t,
					      TASK_UNINTERRUPTIBLE, KTIMER_ABS), 0);
	KUNIT_EXPECT_EQ(test, t, PAST);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&tt->timer));
	KUNIT_EXPECT_EQ(test, get_current_state(), TASK_RUNNING);
}

/*
 * schedule_ktimer() on a pending timer is refused without touching it: the
 * timer keeps its callback and fires as its owner set it up.
 */
static void ktimer_schedule_pending_busy_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);
	ktime_t t = 100;

	start_abs(test, tt, NOW + 100);
	KUNIT_EXPECT_EQ(test, schedule_ktimer(&tt->timer, &t,
					      TASK_UNINTERRUPTIBLE, KTIMER_REL),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, get_current_state(), TASK_RUNNING);
	KUNIT_EXPECT_TRUE(test, tt->timer.function == test_callback);
	KUNIT_EXPECT_PTR_EQ(test, tt->timer.data, (void *)tt);
	advance_to(NOW + 100);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
}

/* A refused relative sleep still reports the absolute expiry in *t */
static void ktimer_schedule_rel_past_test(struct kunit *test)
{
	struct test_timer *tt = new_timer(test, 0);
	ktime_t t = -5;

	KUNIT_EXPECT_EQ(test, schedule_ktimer(&tt->timer, &t,
					      TASK_UNINTERRUPTIBLE, KTIMER_REL), 0);
	KUNIT_EXPECT_EQ(test, t, NOW - 5);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&tt->timer));
	KUNIT_EXPECT_EQ(test, get_current_state(), TASK_RUNNING);
}

static struct kunit_case ktimer_stop_cases[] = {
	KUNIT_CASE(ktimer_try_stop_pending_test),
	KUNIT_CASE(ktimer_stop_idle_test),
	KUNIT_CASE(ktimer_stop_after_expiry_test),
	KUNIT_CASE(ktimer_stop_pending_test),
	KUNIT_CASE(ktimer_restart_after_stop_test),
	KUNIT_CASE(ktimer_remtime_pending_test),
	KUNIT_CASE(ktimer_remtime_stopped_test),
	KUNIT_CASE(ktimer_expiry_query_test),
	KUNIT_CASE_PARAM(ktimer_convert_timespec_test, convert_cases_gen_params),
	KUNIT_CASE(ktimer_clock_own_resolution_test),
	KUNIT_CASE(ktimer_schedule_past_test),
	KUNIT_CASE(ktimer_schedule_rel_past_test),
	KUNIT_CASE(ktimer_schedule_pending_busy_test),
	{}
};

static struct kunit_suite ktimer_stop_suite = {
	.name = "ktimer_stop_query",
	.suite_init = fake_suite_init,
	.suite_exit = fake_suite_exit,
	.init = fake_case_init,
	.exit = fake_case_exit,
	.test_cases = ktimer_stop_cases,
};

/* ---- CPU hotplug ---- */

/* A CPU that can go offline while the test runs elsewhere, or -1 */
static int pick_victim_cpu(void)
{
	unsigned int cpu;

	for_each_online_cpu(cpu) {
		if (cpu != 0 && cpu_is_hotpluggable(cpu))
			return cpu;
	}
	return -1;
}

/*
 * Queue timers at NOW + @offsets[i] on a CPU that can go offline, then take
 * that CPU offline so that its timers move here.  Returns the CPU, for
 * add_cpu(); skips the case without one.
 */
static int offline_cpu_with_timers(struct kunit *test, struct test_timer **tt,
				   const ktime_t *offsets, int n)
{
	int victim = pick_victim_cpu(), i;

	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU) || victim < 0)
		kunit_skip(test, "needs a second CPU that can go offline");

	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(victim)), 0);
	for (i = 0; i < n; i++) {
		tt[i] = new_timer(test, i);
		start_abs(test, tt[i], NOW + offsets[i]);
	}
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(0)), 0);
	KUNIT_ASSERT_EQ_MSG(test, remove_cpu(victim), 0, "remove_cpu(%d)", victim);
	return victim;
}

/* Timers of a CPU that goes offline move, in expiry order, and still fire */
static void ktimer_hotplug_migrates_in_order_test(struct kunit *test)
{
	static const ktime_t offsets[] = { 40, 10, 30, 10, 20 };
	struct test_ctx *ctx = test->priv;
	struct test_timer *tt[ARRAY_SIZE(offsets)];
	int victim, ret;

	victim = offline_cpu_with_timers(test, tt, offsets, ARRAY_SIZE(offsets));
	/* this CPU now holds them: running its queue fires them all */
	advance_to(NOW + 100);
	ret = add_cpu(victim);
	KUNIT_EXPECT_EQ_MSG(test, ret, 0, "add_cpu(%d)", victim);

	KUNIT_ASSERT_EQ(test, ctx->nfired, ARRAY_SIZE(offsets));
	KUNIT_EXPECT_EQ(test, ctx->fired_ids[0], 1);
	KUNIT_EXPECT_EQ(test, ctx->fired_ids[1], 3);
	KUNIT_EXPECT_EQ(test, ctx->fired_ids[2], 4);
	KUNIT_EXPECT_EQ(test, ctx->fired_ids[3], 2);
	KUNIT_EXPECT_EQ(test, ctx->fired_ids[4], 0);
	KUNIT_EXPECT_EQ(test, ktimer_clock_pending(&fake_clock), 0);
}

/* A CPU that came back online runs its own timers again */
static void ktimer_hotplug_cpu_back_test(struct kunit *test)
{
	struct test_timer *tt;
	int victim = pick_victim_cpu();

	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU) || victim < 0)
		kunit_skip(test, "needs a second CPU that can go offline");

	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(0)), 0);
	KUNIT_ASSERT_EQ(test, remove_cpu(victim), 0);
	KUNIT_ASSERT_EQ(test, add_cpu(victim), 0);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(victim)), 0);
	tt = new_timer(test, 0);
	start_abs(test, tt, NOW + 10);
	advance_to(NOW + 10);
	KUNIT_EXPECT_EQ(test, tt->fired, 1);
	KUNIT_EXPECT_EQ(test, ktimer_clock_pending(&fake_clock), 0);
}

/*
 * A migrated timer belongs to its new base: stopping or restarting it
 * before it fires works there, and leaves the others in order.
 */
static void ktimer_hotplug_migrated_then_stopped_test(struct kunit *test)
{
	struct test_ctx *ctx = test->priv;
	static const ktime_t offsets[] = { 10, 20, 30 };
	struct test_timer *tt[ARRAY_SIZE(offsets)];
	ktime_t later = NOW + 50;
	int victim, ret;

	victim = offline_cpu_with_timers(test, tt, offsets, ARRAY_SIZE(offsets));
	KUNIT_EXPECT_EQ(test, stop_ktimer(&tt[1]->timer), 1);
	KUNIT_EXPECT_EQ(test, modify_ktimer(&tt[0]->timer, &later, KTIMER_ABS), 1);
	KUNIT_EXPECT_EQ(test, ktimer_clock_pending(&fake_clock), 2);
	advance_to(NOW + 100);
	ret = add_cpu(victim);
	KUNIT_EXPECT_EQ_MSG(test, ret, 0, "add_cpu(%d)", victim);

	KUNIT_ASSERT_EQ(test, ctx->nfired, 2);
	KUNIT_EXPECT_EQ(test, ctx->fired_ids[0], 2);
	KUNIT_EXPECT_EQ(test, ctx->fired_ids[1], 0);
	KUNIT_EXPECT_EQ(test, tt[1]->fired, 0);
	KUNIT_EXPECT_EQ(test, ktimer_clock_pending(&fake_clock), 0);
}

static struct kunit_case ktimer_hotplug_cases[] = {
	KUNIT_CASE(ktimer_hotplug_migrates_in_order_test),
	KUNIT_CASE(ktimer_hotplug_cpu_back_test),
	KUNIT_CASE(ktimer_hotplug_migrated_then_stopped_test),
	{}
};

static struct kunit_suite ktimer_hotplug_suite = {
	.name = "ktimer_hotplug",
	.suite_init = fake_suite_init,
	.suite_exit = fake_suite_exit,
	.init = fake_case_init,
	.exit = fake_case_exit,
	.test_cases = ktimer_hotplug_cases,
};

kunit_test_suites(&ktimer_modes_suite, &ktimer_errors_suite,
		  &ktimer_queue_suite, &ktimer_stop_suite, &ktimer_hotplug_suite);

MODULE_DESCRIPTION("KUnit tests for ktimers on a fake clock");
MODULE_LICENSE("GPL");
