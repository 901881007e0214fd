// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the conversions the ktimer user paths make: remaining
 * time as user space reads it, overrun counts of POSIX timers across the
 * 32-bit boundaries, forward_ktimer(), and the POSIX timer operations on
 * a fake clock that the test drives.
 *
 * The 2005 posting got these wrong on 32-bit arches: forward_posix_timer()
 * looped forever on an interval of 2^32 ns or more, and added the overrun
 * through a long.  The cases below use values just past 2^31 and 2^32 so
 * that a truncation to 32 bits anywhere shows.
 */

#include <kunit/test.h>
#include <linux/ktimer.h>
#include <linux/limits.h>
#include <linux/posix-timers.h>
#include <linux/time64.h>

#include "ktimer_internal.h"
#include "ktimer_test.h"
#include "posix-timers.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

DEFINE_FAKE_CLOCK(conv_clock, 1);
DEFINE_FAKE_CLOCK(coarse_clock, 1000);

#define BIT32		((s64)BIT_ULL(32))

static void conv_fn(void *data)
{
}

static int conv_init(struct kunit *test)
{
	WRITE_ONCE(conv_clock_now, 0);
	return ktimer_register_clock(&conv_clock);
}

static void conv_exit(struct kunit *test)
{
	ktimer_unregister_clock(&conv_clock);
}

/* ---- remaining time for user space ---- */

struct remaining_case {
	ktime_t rem;
	u32 granularity;
	s64 want_ns;
};

static const struct remaining_case remaining_cases[] = {
	{ 0, NSEC_PER_USEC, NSEC_PER_USEC },		/* due: one unit */
	{ -5, NSEC_PER_USEC, NSEC_PER_USEC },
	{ KTIME_MIN, NSEC_PER_USEC, NSEC_PER_USEC },
	{ 1, NSEC_PER_USEC, NSEC_PER_USEC },		/* never reads 0 */
	{ 999, NSEC_PER_USEC, NSEC_PER_USEC },
	{ 1000, NSEC_PER_USEC, 1000 },
	{ 1001, NSEC_PER_USEC, 2000 },
	{ 1, 1, 1 },
	{ BIT32 * NSEC_PER_SEC + 1, NSEC_PER_USEC,	/* tv_sec past 2^32 */
	  BIT32 * NSEC_PER_SEC + NSEC_PER_USEC },
	{ KTIME_MAX, NSEC_PER_USEC, KTIME_MAX },	/* never past KTIME_MAX */
	{ KTIME_MAX - 1, 1, KTIME_MAX - 1 },
};

static void ktimer_user_remaining_test(struct kunit *test)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(remaining_cases); i++) {
		const struct remaining_case *c = &remaining_cases[i];
		struct timespec64 ts = ktimer_user_remaining(c->rem,
							     c->granularity);
		struct timespec64 want = ns_to_timespec64(c->want_ns);

		/* fields, not timespec64_to_ns(), which saturates near KTIME_MAX */
		KUNIT_EXPECT_EQ_MSG(test, ts.tv_sec, want.tv_sec,
				    "rem %lld granularity %u", c->rem,
				    c->granularity);
		KUNIT_EXPECT_EQ_MSG(test, ts.tv_nsec, want.tv_nsec,
				    "rem %lld granularity %u", c->rem,
				    c->granularity);
		KUNIT_EXPECT_TRUE_MSG(test, timespec64_valid(&ts),
				      "rem %lld", c->rem);
	}
}

/* The seconds of a remaining time are split with 64-bit division */
static void ktimer_user_remaining_split_test(struct kunit *test)
{
	struct timespec64 ts;

	ts = ktimer_user_remaining(BIT32 * NSEC_PER_SEC + 1500, NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, ts.tv_sec, BIT32);
	KUNIT_EXPECT_EQ(test, ts.tv_nsec, 2000);
	ts = ktimer_user_remaining(3LL * NSEC_PER_SEC - 1, NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, ts.tv_sec, 3);
	KUNIT_EXPECT_EQ(test, ts.tv_nsec, 0);
}

/* ---- overrun accounting ---- */

static void ktimer_overrun_add_test(struct kunit *test)
{
	/* k_itimer::it_overrun starts at -1 */
	KUNIT_EXPECT_EQ(test, ktimer_overrun_add(-1, 1), 0);
	KUNIT_EXPECT_EQ(test, ktimer_overrun_add(-1, 1ULL << 31),
			(1LL << 31) - 1);
	KUNIT_EXPECT_EQ(test, ktimer_overrun_add(INT_MAX, 1),
			(s64)INT_MAX + 1);
	KUNIT_EXPECT_EQ(test, ktimer_overrun_add(-1, BIT32 + 1), BIT32);
	KUNIT_EXPECT_EQ(test, ktimer_overrun_add(BIT32, BIT32), 2 * BIT32);
	/* saturates instead of wrapping negative */
	KUNIT_EXPECT_EQ(test, ktimer_overrun_add(S64_MAX - 1, 5), S64_MAX);
	KUNIT_EXPECT_EQ(test, ktimer_overrun_add(0, U64_MAX), S64_MAX);
	KUNIT_EXPECT_EQ(test, ktimer_overrun_add(-1, (u64)S64_MAX + 1),
			S64_MAX);
}

/* ---- forward_ktimer() ---- */

struct forward_case {
	ktime_t expires, now, period;
	u64 want_periods;
	ktime_t want_expires;
};

static const struct forward_case forward_cases[] = {
	{ 10, 5, 3, 0, 10 },				/* in the future */
	{ 10, 10, 3, 1, 13 },				/* due now */
	{ 0, BIT32 + 5, 1, BIT32 + 6, BIT32 + 6 },	/* 2^32 periods */
	{ 0, (1LL << 31) - 1, 1, 1ULL << 31, 1LL << 31 },
	/* a period of 2^32 ns and more: the posting's 32-bit loop hung */
	{ 0, 3 * BIT32, BIT32, 4, 4 * BIT32 },
	{ 0, 3 * 5000000000LL + 1, 5000000000LL, 4, 4 * 5000000000LL },
	/* saturates at KTIME_MAX */
	{ KTIME_MIN, KTIME_MAX, 1, U64_MAX, KTIME_MAX },
	{ 0, KTIME_MAX, KTIME_MAX / 2 + 1, 2, KTIME_MAX },
};

static void ktimer_forward_test(struct kunit *test)
{
	struct ktimer *timer = kunit_kzalloc(test, sizeof(*timer), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, timer);
	for (i = 0; i < ARRAY_SIZE(forward_cases); i++) {
		const struct forward_case *c = &forward_cases[i];

		ktimer_init(timer, &conv_clock);
		ktimer_set_expires(timer, c->expires);
		KUNIT_EXPECT_EQ_MSG(test, forward_ktimer(timer, c->now,
							 c->period),
				    c->want_periods, "case %d", i);
		KUNIT_EXPECT_EQ_MSG(test, timer->expires, c->want_expires,
				    "case %d", i);
		/* the 32-bit field saturates; the return value does not */
		KUNIT_EXPECT_EQ_MSG(test, timer->overrun,
				    min_t(u64, c->want_periods, U32_MAX),
				    "case %d", i);
	}
}

/* A pending timer or a period <= 0: a warning, 0, nothing changed */
static void ktimer_forward_errors_test(struct kunit *test)
{
	struct ktimer *timer = kunit_kzalloc(test, sizeof(*timer), GFP_KERNEL);
	ktime_t t = 100;

	KUNIT_ASSERT_NOT_NULL(test, timer);
	ktimer_init(timer, &conv_clock);
	timer->function = conv_fn;

	expect_warning_begin(test);
	KUNIT_EXPECT_EQ(test, forward_ktimer(timer, 1000, 0), 0);
	KUNIT_EXPECT_EQ(test, forward_ktimer(timer, 1000, -1), 0);
	KUNIT_EXPECT_EQ(test, forward_ktimer(NULL, 1000, 1), 0);
	KUNIT_ASSERT_EQ(test, start_ktimer(timer, &t, KTIMER_ABS), 0);
	KUNIT_EXPECT_EQ(test, forward_ktimer(timer, 1000, 1), 0);
	expect_warning_end(test);

	KUNIT_EXPECT_EQ(test, timer->expires, 100);
	KUNIT_EXPECT_EQ(test, timer->overrun, 0);
	KUNIT_EXPECT_EQ(test, ktimer_clock_pending(&conv_clock), 1);
	KUNIT_EXPECT_EQ(test, stop_ktimer(timer), 1);
}

/* ---- the clock a user sleep or timer runs on ---- */

/* Relative CLOCK_REALTIME moves to CLOCK_MONOTONIC: a clock step must not move it */
static void ktimer_user_clockid_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ktimer_user_clockid(CLOCK_REALTIME, false),
			CLOCK_MONOTONIC);
	KUNIT_EXPECT_EQ(test, ktimer_user_clockid(CLOCK_REALTIME, true),
			CLOCK_REALTIME);
	KUNIT_EXPECT_EQ(test, ktimer_user_clockid(CLOCK_MONOTONIC, false),
			CLOCK_MONOTONIC);
	KUNIT_EXPECT_EQ(test, ktimer_user_clockid(CLOCK_MONOTONIC, true),
			CLOCK_MONOTONIC);
}

/* ---- POSIX timer operations on the fake clock ---- */

static struct k_itimer *fake_posix_timer(struct kunit *test, ktime_t interval,
					 ktime_t expires)
{
	struct k_itimer *timr = kunit_kzalloc(test, sizeof(*timr), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, timr);
	spin_lock_init(&timr->it_lock);
	timr->it_clock = CLOCK_MONOTONIC;
	timr->it_overrun = -1;
	timr->it_interval = interval;
	ktimer_init(&timr->it.kt.timer, &conv_clock);
	timr->it.kt.timer.function = conv_fn;
	ktimer_set_expires(&timr->it.kt.timer, expires);
	return timr;
}

/* The signal re-arm counts 2^32 + 5 overruns exactly and queues again */
static void ktimer_posix_rearm_test(struct kunit *test)
{
	struct k_itimer *timr = fake_posix_timer(test, 1, 0);
	struct ktimer *timer = &timr->it.kt.timer;

	WRITE_ONCE(conv_clock_now, BIT32 + 5);
	ktimer_posix_timer_rearm(timr);
	KUNIT_EXPECT_EQ(test, timr->it_overrun, BIT32 + 5);
	KUNIT_EXPECT_TRUE(test, ktimer_active(timer));
	KUNIT_EXPECT_EQ(test, timer->expires, BIT32 + 6);
	KUNIT_EXPECT_EQ(test, ktimer_posix_timer_remaining(timr, BIT32 + 5), 1);

	/* due: the remaining time goes negative, the caller reports it */
	WRITE_ONCE(conv_clock_now, BIT32 + 9);
	KUNIT_EXPECT_EQ(test, ktimer_posix_timer_remaining(timr, BIT32 + 9), -3);
	KUNIT_EXPECT_EQ(test, stop_ktimer(timer), 1);
}

/* An interval above 2^32 ns, and a count that would pass S64_MAX */
static void ktimer_posix_forward_test(struct kunit *test)
{
	const ktime_t interval = 5LL * NSEC_PER_SEC;	/* > 2^32 ns */
	struct k_itimer *timr = fake_posix_timer(test, interval, interval);

	KUNIT_EXPECT_EQ(test, ktimer_posix_timer_forward(timr, interval - 1), 0);
	KUNIT_EXPECT_EQ(test, ktimer_posix_timer_forward(timr, 3 * interval), 3);
	KUNIT_EXPECT_EQ(test, timr->it.kt.timer.expires, 4 * interval);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&timr->it.kt.timer));

	timr = fake_posix_timer(test, 1, KTIME_MIN);
	timr->it_overrun = S64_MAX - 1;
	WRITE_ONCE(conv_clock_now, KTIME_MAX - 1);
	ktimer_posix_timer_rearm(timr);
	KUNIT_EXPECT_EQ(test, timr->it_overrun, S64_MAX);
	KUNIT_EXPECT_EQ(test, stop_ktimer(&timr->it.kt.timer), 1);
}

/*
 * Arming binds the timer to the real clock: a relative CLOCK_REALTIME
 * timer runs on CLOCK_MONOTONIC (POSIX: a clock step must not move it),
 * an absolute one on CLOCK_REALTIME.  SIGEV_NONE keeps the expiry only.
 */
static void ktimer_posix_arm_clock_test(struct kunit *test)
{
	struct k_itimer *timr = fake_posix_timer(test, 0, 0);
	struct ktimer *timer = &timr->it.kt.timer;
	ktime_t before;

	timr->it_clock = CLOCK_REALTIME;
	before = ktime_get();
	ktimer_posix_timer_arm(timr, NSEC_PER_SEC, false, true);
	KUNIT_EXPECT_EQ(test, timer->base->clock->clockid, CLOCK_MONOTONIC);
	KUNIT_EXPECT_PTR_EQ(test, timr->kclock, &clock_monotonic_ktimer);
	KUNIT_EXPECT_GE(test, timer->expires, before + NSEC_PER_SEC);
	KUNIT_EXPECT_LE(test, timer->expires, ktime_get() + NSEC_PER_SEC);
	KUNIT_EXPECT_FALSE(test, ktimer_active(timer));

	ktimer_posix_timer_arm(timr, 12345, true, true);
	KUNIT_EXPECT_EQ(test, timer->base->clock->clockid, CLOCK_REALTIME);
	KUNIT_EXPECT_PTR_EQ(test, timr->kclock, &clock_realtime_ktimer);
	KUNIT_EXPECT_EQ(test, timer->expires, 12345);

	/* not SIGEV_NONE: queued */
	timr->it_clock = CLOCK_MONOTONIC;
	ktimer_posix_timer_arm(timr, KTIME_MAX, true, false);
	KUNIT_EXPECT_EQ(test, timer->base->clock->clockid, CLOCK_MONOTONIC);
	KUNIT_EXPECT_TRUE(test, ktimer_active(timer));
	KUNIT_EXPECT_EQ(test, stop_ktimer(timer), 1);
}

/*
 * timer_wait_running runs without it_lock, while another thread may re-arm
 * the timer: it only waits for a running callback and leaves the timer
 * alone (posix-timers.c retries the cancel itself, as for hrtimers).
 */
static void ktimer_posix_wait_running_only_waits_test(struct kunit *test)
{
	struct k_itimer *timr = fake_posix_timer(test, 0, 0);
	struct ktimer *timer = &timr->it.kt.timer;
	ktime_t t = 100;

	KUNIT_ASSERT_EQ(test, start_ktimer(timer, &t, KTIMER_ABS), 0);
	ktimer_posix_timer_wait_running(timr);
	KUNIT_EXPECT_TRUE(test, ktimer_active(timer));
	KUNIT_EXPECT_EQ(test, timer->expires, 100);
	KUNIT_EXPECT_EQ(test, stop_ktimer(timer), 1);
}

/*
 * clock_getres() on a clock ktimers serve reports the resolution its
 * sleeps and timers are rounded to: one jiffy under ktimer.highres=0
 * (the lowres configuration), as get_ktimer_real_res() did in 2005.
 */
static void ktimer_posix_getres_test(struct kunit *test)
{
	struct timespec64 res = {};

	KUNIT_ASSERT_EQ(test, clock_realtime_ktimer.clock_getres(CLOCK_REALTIME, &res), 0);
	KUNIT_EXPECT_EQ(test, timespec64_to_ns(&res),
			(s64)ktimer_clock_resolution(&ktimer_clock_realtime));
	KUNIT_ASSERT_EQ(test, clock_monotonic_ktimer.clock_getres(CLOCK_MONOTONIC, &res), 0);
	KUNIT_EXPECT_EQ(test, timespec64_to_ns(&res),
			(s64)ktimer_clock_resolution(&ktimer_clock_monotonic));
}

/*
 * A period below the clock's resolution counts as one resolution unit, as
 * hrtimer_forward() clamps to hrtimer_resolution: under ktimer.highres=0 a
 * POSIX timer's overruns then count as a low-resolution hrtimer's do.
 */
static void ktimer_forward_clamps_to_resolution_test(struct kunit *test)
{
	struct ktimer timer;

	KUNIT_ASSERT_EQ(test, ktimer_register_clock(&coarse_clock), 0);
	ktimer_init_on_stack(&timer, &coarse_clock);
	ktimer_set_expires(&timer, 0);
	KUNIT_EXPECT_EQ(test, forward_ktimer(&timer, 5000, 10), 6);
	KUNIT_EXPECT_EQ(test, timer.expires, 6000);
	/* a period of whole units is taken as it is */
	KUNIT_EXPECT_EQ(test, forward_ktimer(&timer, 9000, 2000), 2);
	KUNIT_EXPECT_EQ(test, timer.expires, 10000);
	destroy_ktimer_on_stack(&timer);
	KUNIT_EXPECT_EQ(test, ktimer_unregister_clock(&coarse_clock), 0);
}

static struct kunit_case ktimer_user_conv_cases[] = {
	KUNIT_CASE(ktimer_user_remaining_test),
	KUNIT_CASE(ktimer_user_remaining_split_test),
	KUNIT_CASE(ktimer_overrun_add_test),
	KUNIT_CASE(ktimer_forward_test),
	KUNIT_CASE(ktimer_forward_errors_test),
	KUNIT_CASE(ktimer_forward_clamps_to_resolution_test),
	KUNIT_CASE(ktimer_user_clockid_test),
	KUNIT_CASE(ktimer_posix_rearm_test),
	KUNIT_CASE(ktimer_posix_forward_test),
	KUNIT_CASE(ktimer_posix_arm_clock_test),
	KUNIT_CASE(ktimer_posix_wait_running_only_waits_test),
	KUNIT_CASE(ktimer_posix_getres_test),
	{}
};

static struct kunit_suite ktimer_user_conv_suite = {
	.name = "ktimer_user_conv",
	.init = conv_init,
	.exit = conv_exit,
	.test_cases = ktimer_user_conv_cases,
};

kunit_test_suites(&ktimer_user_conv_suite);

MODULE_DESCRIPTION("KUnit tests for the conversions of the ktimer user paths");
MODULE_LICENSE("GPL");
