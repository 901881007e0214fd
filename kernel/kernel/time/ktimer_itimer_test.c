// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for ITIMER_REAL on ktimers (CONFIG_KTIMER_USERS): the
 * process's ktimer reports, re-arms and stops as setitimer() and
 * getitimer() need, whichever path ktimer.users= chose for the syscalls.
 *
 * The cases arm the test thread's own ITIMER_REAL (a kernel thread ignores
 * the SIGALRM) and wait for real expiries with a generous upper bound.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/ktimer.h>
#include <linux/math64.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/time64.h>

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

static void set_itimer(const struct timespec64 *value,
		       const struct timespec64 *interval,
		       struct itimerspec64 *old)
{
	struct itimerspec64 it = { .it_value = *value,
				   .it_interval = *interval };

	ktimer_setitimer(current, &it, old);
}

/* ->sighand is __rcu for exec and exit, neither of which runs under a test */
static spinlock_t *current_siglock(void)
{
	return &rcu_dereference_protected(current->sighand, 1)->siglock;
}

static struct timespec64 itimer_remaining(void)
{
	struct timespec64 rem;

	spin_lock_irq(current_siglock());
	rem = ktimer_itimer_remaining(current->signal);
	spin_unlock_irq(current_siglock());
	return rem;
}

/* setitimer() arms, reports the old setting and disarms; getitimer() reads */
static void ktimer_itimer_set_get_test(struct kunit *test)
{
	const struct timespec64 sec = { .tv_sec = 1 };
	const struct timespec64 half = { .tv_nsec = NSEC_PER_SEC / 2 };
	const struct timespec64 zero = {};
	unsigned long before;
	struct itimerspec64 old;
	struct timespec64 rem;

	before = ktimer_user_calls_count(KTIMER_USER_ITIMER);

	set_itimer(&sec, &half, &old);
	KUNIT_EXPECT_EQ(test, timespec64_to_ns(&old.it_value), 0);
	KUNIT_EXPECT_TRUE(test, ktimer_active(&current->signal->real_ktimer));
	rem = itimer_remaining();
	KUNIT_EXPECT_GT(test, timespec64_to_ns(&rem), 0);
	KUNIT_EXPECT_LE(test, timespec64_to_ns(&rem), NSEC_PER_SEC);
	/* getitimer() has microseconds: whole ones, rounded up */
	KUNIT_EXPECT_EQ(test, rem.tv_nsec % NSEC_PER_USEC, 0);

	set_itimer(&zero, &zero, &old);
	KUNIT_EXPECT_GT(test, timespec64_to_ns(&old.it_value), 0);
	KUNIT_EXPECT_LE(test, timespec64_to_ns(&old.it_value), NSEC_PER_SEC);
	KUNIT_EXPECT_EQ(test, timespec64_to_ns(&old.it_interval),
			NSEC_PER_SEC / 2);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&current->signal->real_ktimer));
	rem = itimer_remaining();
	KUNIT_EXPECT_EQ(test, timespec64_to_ns(&rem), 0);
	KUNIT_EXPECT_EQ(test, current->signal->it_real_incr, 0);
	KUNIT_EXPECT_EQ(test, ktimer_user_calls_count(KTIMER_USER_ITIMER),
			before + 2);
}

/* Wait (generously) until @timer has expired; false if it never did */
static bool wait_expired(struct ktimer *timer)
{
	int i;

	for (i = 0; i < 5000 && ktimer_active(timer); i++)
		usleep_range(1000, 2000);
	return !ktimer_active(timer);
}

/*
 * After expiry an interval timer waits for its SIGALRM to be dequeued;
 * the re-arm then moves it past now in whole intervals (keeping its phase).
 */
static void ktimer_itimer_rearm_test(struct kunit *test)
{
	const struct timespec64 nsec = { .tv_nsec = 1 };
	const struct timespec64 sec = { .tv_sec = 1 };
	const struct timespec64 zero = {};
	struct ktimer *timer = &current->signal->real_ktimer;
	ktime_t first, now;
	s32 phase;

	set_itimer(&nsec, &sec, NULL);
	first = get_expiry_ktimer(timer, NULL);
	KUNIT_ASSERT_TRUE(test, wait_expired(timer));
	/* no periodic re-arm by the ktimer core: that is the dequeue's job */
	KUNIT_EXPECT_FALSE(test, ktimer_active(timer));

	spin_lock_irq(current_siglock());
	ktimer_itimer_rearm(current->signal);
	spin_unlock_irq(current_siglock());

	KUNIT_EXPECT_TRUE(test, ktimer_active(timer));
	KUNIT_EXPECT_GT(test, get_expiry_ktimer(timer, &now), now);
	div_s64_rem(get_expiry_ktimer(timer, NULL) - first, NSEC_PER_SEC,
		    &phase);
	KUNIT_EXPECT_EQ(test, phase, 0);
	set_itimer(&zero, &zero, NULL);
	KUNIT_EXPECT_FALSE(test, ktimer_active(timer));
}

/* A one-shot timer is not re-armed by the dequeue */
static void ktimer_itimer_oneshot_test(struct kunit *test)
{
	const struct timespec64 nsec = { .tv_nsec = 1 };
	const struct timespec64 zero = {};
	struct ktimer *timer = &current->signal->real_ktimer;
	struct timespec64 rem;

	set_itimer(&nsec, &zero, NULL);
	KUNIT_ASSERT_TRUE(test, wait_expired(timer));

	spin_lock_irq(current_siglock());
	ktimer_itimer_rearm(current->signal);
	spin_unlock_irq(current_siglock());
	KUNIT_EXPECT_FALSE(test, ktimer_active(timer));
	rem = itimer_remaining();
	KUNIT_EXPECT_EQ(test, timespec64_to_ns(&rem), 0);
}

static struct kunit_case ktimer_itimer_cases[] = {
	KUNIT_CASE(ktimer_itimer_set_get_test),
	KUNIT_CASE(ktimer_itimer_rearm_test),
	KUNIT_CASE(ktimer_itimer_oneshot_test),
	{}
};

static struct kunit_suite ktimer_itimer_suite = {
	.name = "ktimer_itimer",
	.test_cases = ktimer_itimer_cases,
};

kunit_test_suites(&ktimer_itimer_suite);

MODULE_DESCRIPTION("KUnit tests for ITIMER_REAL on ktimers");
MODULE_LICENSE("GPL");
