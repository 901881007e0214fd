// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for CONFIG_KTIMER_USERS: the syscall paths that ktimers
 * serve take the ktimer path exactly when they should, and still sleep
 * as long as they are asked to.
 *
 * The sleeps are real but short; only lower bounds are checked.
 */

#include <kunit/test.h>
#include <linux/hrtimer.h>
#include <linux/moduleparam.h>
#include <linux/ktimer.h>
#include <linux/restart_block.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define SLEEP_NS	(2 * NSEC_PER_MSEC)

/* What the configuration asked for, told independently of ktimer.users= */
static bool expect_on = true;
module_param(expect_on, bool, 0444);
MODULE_PARM_DESC(expect_on, "the configuration booted with ktimer.users on (default)");

static unsigned long nanosleeps(void)
{
	return ktimer_user_calls_count(KTIMER_USER_NANOSLEEP);
}

/* A kernel caller: no user pointer for the remaining time */
static long sleep_via_hrtimer_nanosleep(ktime_t t, enum hrtimer_mode mode,
					clockid_t clockid)
{
	current->restart_block.nanosleep.type = TT_NONE;
	return hrtimer_nanosleep(t, mode, clockid);
}

/*
 * The configurations boot with the path on (default) and off (users-off in
 * kunit_configs/matrix); each case checks the path that was chosen.
 */
static void ktimer_users_clocks_test(struct kunit *test)
{
	bool on = ktimer_users_on();

	kunit_info(test, "ktimer.users=%d", on);
	KUNIT_EXPECT_EQ(test, on, IS_ENABLED(CONFIG_KTIMER_USERS) && expect_on);
	KUNIT_EXPECT_EQ(test, ktimer_serves(CLOCK_MONOTONIC), on);
	KUNIT_EXPECT_EQ(test, ktimer_serves(CLOCK_REALTIME), on);
	KUNIT_EXPECT_FALSE(test, ktimer_serves(CLOCK_BOOTTIME));
	KUNIT_EXPECT_FALSE(test, ktimer_serves(CLOCK_TAI));
	KUNIT_EXPECT_FALSE(test, ktimer_serves(CLOCK_PROCESS_CPUTIME_ID));
	KUNIT_EXPECT_FALSE(test, ktimer_serves(CLOCK_MONOTONIC_RAW));
	KUNIT_EXPECT_FALSE(test, ktimer_serves(-1));
}

/*
 * A relative sleep on @clockid, read back with @now, lasts long enough and
 * takes the ktimer path exactly when @via_ktimers.
 */
static void check_rel_sleep(struct kunit *test, clockid_t clockid,
			    ktime_t (*now)(void), bool via_ktimers)
{
	unsigned long before = nanosleeps();
	ktime_t start = now();

	KUNIT_EXPECT_EQ(test, sleep_via_hrtimer_nanosleep(SLEEP_NS,
							  HRTIMER_MODE_REL,
							  clockid), 0);
	KUNIT_EXPECT_GE(test, now() - start, SLEEP_NS);
	KUNIT_EXPECT_EQ(test, nanosleeps(), before + via_ktimers);
}

static void ktimer_users_nanosleep_rel_test(struct kunit *test)
{
	check_rel_sleep(test, CLOCK_MONOTONIC, ktime_get, ktimer_users_on());
	/* measured on the monotonic clock it runs on */
	check_rel_sleep(test, CLOCK_REALTIME, ktime_get, ktimer_users_on());
}

/* An absolute realtime nanosleep ends at the requested wall-clock time */
static void ktimer_users_nanosleep_abs_real_test(struct kunit *test)
{
	unsigned long before = nanosleeps();
	ktime_t until = ktime_get_real() + SLEEP_NS;

	KUNIT_EXPECT_EQ(test, sleep_via_hrtimer_nanosleep(until,
							  HRTIMER_MODE_ABS,
							  CLOCK_REALTIME), 0);
	KUNIT_EXPECT_GE(test, ktime_get_real(), until);
	KUNIT_EXPECT_EQ(test, nanosleeps(), before + ktimer_users_on());
}

/* Other clocks keep the hrtimer path */
static void ktimer_users_boottime_stays_hrtimer_test(struct kunit *test)
{
	check_rel_sleep(test, CLOCK_BOOTTIME, ktime_get_boottime, false);
}

static struct kunit_case ktimer_users_cases[] = {
	KUNIT_CASE(ktimer_users_clocks_test),
	KUNIT_CASE(ktimer_users_nanosleep_rel_test),
	KUNIT_CASE(ktimer_users_nanosleep_abs_real_test),
	KUNIT_CASE(ktimer_users_boottime_stays_hrtimer_test),
	{}
};

static struct kunit_suite ktimer_users_suite = {
	.name = "ktimer_users",
	.test_cases = ktimer_users_cases,
};

kunit_test_suites(&ktimer_users_suite);

MODULE_DESCRIPTION("KUnit tests for the syscall paths ktimers serve");
MODULE_LICENSE("GPL");
