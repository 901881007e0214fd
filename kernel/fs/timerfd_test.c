// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of timerfd's timers (CONFIG_KTIMER_KUNIT_TEST): which clocks
 * take the ktimer path (CONFIG_KTIMER_USERS, ktimer.users=1) and which the
 * hrtimer one, and that both behave the same: expiry counts, the periodic
 * re-arm in read(), timerfd_gettime() of disarmed, pending, expired and
 * periodic timers, TFD_TIMER_CANCEL_ON_SET, and release with a timer
 * pending.  Every case runs in both configurations (ktimer.users=1 and 0).
 *
 * Included by fs/timerfd.c, whose context and file operations are private.
 * The timers run on the real clocks: lower bounds are exact, upper bounds
 * have seconds of margin (QEMU's software emulation stalls vCPUs).  The
 * cases that wait for an expiry are marked slow, so that a run with
 * --filter "speed>slow" keeps only the ones that never wait.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/timekeeping.h>

#define TFD_WAIT_JIFFIES	(5 * HZ)
#define TFD_SHORT_NS		(2 * NSEC_PER_MSEC)
#define TFD_LONG_NS		(10LL * NSEC_PER_SEC)
/* above a jiffy, so that no resolution rounding is involved */
#define TFD_PERIOD_NS		(20 * NSEC_PER_MSEC)

static const int tfd_clocks[] = {
	CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME,
};

static void tfd_clock_desc(const int *clockid, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s",
		 *clockid == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" :
		 *clockid == CLOCK_REALTIME ? "CLOCK_REALTIME" :
		 "CLOCK_BOOTTIME");
}

KUNIT_ARRAY_PARAM(tfd_clock, tfd_clocks, tfd_clock_desc);

static ktime_t tfd_now(int clockid)
{
	switch (clockid) {
	case CLOCK_REALTIME:
		return ktime_get_real();
	case CLOCK_BOOTTIME:
		return ktime_get_boottime();
	default:
		return ktime_get();
	}
}

/* The clock a timer armed with @flags counts on: relative realtime is monotonic */
static int tfd_timer_clock(int clockid, int flags)
{
	return clockid == CLOCK_REALTIME && !(flags & TFD_TIMER_ABSTIME) ?
	       CLOCK_MONOTONIC : clockid;
}

/*
 * Sleep until @clockid reads @until.  msleep() counts jiffies, which lag
 * the clocks when QEMU stalls a vCPU before its tick is handled: a
 * msleep(200) was seen to end after 195 ms of CLOCK_BOOTTIME (i386, stock
 * path, 2026-12-06), so a count of periods must wait on the clock itself.
 */
static void tfd_sleep_until(int clockid, ktime_t until)
{
	ktime_t now;

	while ((now = tfd_now(clockid)) < until)
		msleep(1 + div_s64(until - now, NSEC_PER_MSEC));
}

KUNIT_DEFINE_ACTION_WRAPPER(tfd_release, __fput_sync, struct file *);

/* A timerfd as timerfd_create(@clockid, @flags) makes it, closed at the end */
static struct file *tfd_open(struct kunit *test, int clockid, int flags)
{
	struct timerfd_ctx *ctx = timerfd_alloc_ctx(clockid);
	struct file *file;

	KUNIT_ASSERT_FALSE(test, IS_ERR(ctx));
	file = anon_inode_getfile("[timerfd]", &timerfd_fops, ctx,
				  O_RDWR | (flags & TFD_SHARED_FCNTL_FLAGS));
	if (IS_ERR(file))
		timerfd_free_ctx(ctx);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tfd_release, file), 0);
	return file;
}

static struct timerfd_ctx *tfd_ctx(struct file *file)
{
	return file->private_data;
}

static int tfd_settime(struct file *file, int flags, ktime_t value,
		       ktime_t interval, struct itimerspec64 *old)
{
	struct itimerspec64 new = {
		.it_value = ktime_to_timespec64(value),
		.it_interval = ktime_to_timespec64(interval),
	};
	struct itimerspec64 dummy;

	return timerfd_ctx_settime(tfd_ctx(file), flags, &new, old ?: &dummy);
}

static void tfd_gettime(struct file *file, ktime_t *value, ktime_t *interval)
{
	struct itimerspec64 cur;

	timerfd_ctx_gettime(tfd_ctx(file), &cur);
	*value = timespec64_to_ktime(cur.it_value);
	*interval = timespec64_to_ktime(cur.it_interval);
}

/* read(2) of the expiry count: the count, or a negative error */
static s64 tfd_read(struct file *file)
{
	loff_t pos = 0;
	u64 ticks = 0;
	ssize_t ret;

	ret = kernel_read(file, &ticks, sizeof(ticks), &pos);
	if (ret < 0)
		return ret;
	return ret == sizeof(ticks) ? (s64)ticks : -EIO;
}

/* Wait up to seconds for the first expiry; false if none came */
static bool tfd_wait_ticks(struct file *file)
{
	struct timerfd_ctx *ctx = tfd_ctx(file);

	return wait_event_timeout(ctx->wqh, READ_ONCE(ctx->ticks),
				  TFD_WAIT_JIFFIES) > 0;
}

static bool tfd_readable(struct file *file)
{
	return vfs_poll(file, NULL) & EPOLLIN;
}

/* The path follows ktimer.users; the alarm clocks stay on alarmtimers */
static void timerfd_path_test(struct kunit *test)
{
	static const int clocks[] = {
		CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME,
		CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM,
	};
	bool on = ktimer_users_on();
	unsigned long before;
	struct file *file;
	int i;

	for (i = 0; i < ARRAY_SIZE(clocks); i++) {
		bool alarm = clocks[i] == CLOCK_REALTIME_ALARM ||
			     clocks[i] == CLOCK_BOOTTIME_ALARM;

		before = ktimer_user_calls_count(KTIMER_USER_TIMERFD);
		file = tfd_open(test, clocks[i], 0);
		KUNIT_EXPECT_EQ_MSG(test, iskt(tfd_ctx(file)), on && !alarm,
				    "clock %d", clocks[i]);
		KUNIT_EXPECT_EQ_MSG(test, ktimer_serves_timerfd(clocks[i]),
				    on && !alarm, "clock %d", clocks[i]);
		KUNIT_EXPECT_EQ(test, ktimer_user_calls_count(KTIMER_USER_TIMERFD),
				before + (on && !alarm));
	}
	KUNIT_EXPECT_FALSE(test, ktimer_serves_timerfd(CLOCK_TAI));
	KUNIT_EXPECT_FALSE(test, ktimer_serves_timerfd(-1));
}

/*
 * A pending one-shot timer is not readable and reads EAGAIN without
 * blocking; re-armed to a short relative expiry, settime() returns the
 * time that was left, and the expiry comes no earlier than asked, once.
 */
static void timerfd_oneshot_test(struct kunit *test)
{
	const int clockid = *(const int *)test->param_value;
	struct file *file = tfd_open(test, clockid, TFD_NONBLOCK);
	int clk = tfd_timer_clock(clockid, 0);
	struct itimerspec64 old;
	ktime_t value, interval, start;

	KUNIT_ASSERT_EQ(test, tfd_settime(file, 0, TFD_LONG_NS, 0, NULL), 0);
	KUNIT_EXPECT_FALSE(test, tfd_readable(file));
	KUNIT_EXPECT_EQ(test, tfd_read(file), -EAGAIN);
	tfd_gettime(file, &value, &interval);
	KUNIT_EXPECT_GT(test, value, TFD_LONG_NS / 2);
	KUNIT_EXPECT_LE(test, value, TFD_LONG_NS);
	KUNIT_EXPECT_EQ(test, interval, 0);

	start = tfd_now(clk);
	KUNIT_ASSERT_EQ(test, tfd_settime(file, 0, TFD_SHORT_NS, 0, &old), 0);
	KUNIT_EXPECT_GT(test, timespec64_to_ktime(old.it_value), TFD_LONG_NS / 2);
	KUNIT_EXPECT_LE(test, timespec64_to_ktime(old.it_value), TFD_LONG_NS);
	KUNIT_ASSERT_TRUE_MSG(test, tfd_wait_ticks(file), "no expiry within 5 s");
	KUNIT_EXPECT_GE(test, tfd_now(clk) - start, TFD_SHORT_NS);
	KUNIT_EXPECT_TRUE(test, tfd_readable(file));
	KUNIT_EXPECT_EQ(test, tfd_read(file), 1);
	KUNIT_EXPECT_EQ(test, tfd_read(file), -EAGAIN);
	KUNIT_EXPECT_FALSE(test, tfd_readable(file));
	/* an expired one-shot timer reads as disarmed */
	tfd_gettime(file, &value, &interval);
	KUNIT_EXPECT_EQ(test, value, 0);
	KUNIT_EXPECT_EQ(test, interval, 0);
}

/* TFD_TIMER_ABSTIME: the expiry comes at or after the time on the clock */
static void timerfd_abstime_test(struct kunit *test)
{
	const int clockid = *(const int *)test->param_value;
	struct file *file = tfd_open(test, clockid, 0);
	ktime_t until = tfd_now(clockid) + TFD_SHORT_NS;

	KUNIT_ASSERT_EQ(test, tfd_settime(file, TFD_TIMER_ABSTIME, until, 0, NULL), 0);
	KUNIT_ASSERT_TRUE_MSG(test, tfd_wait_ticks(file), "no expiry within 5 s");
	KUNIT_EXPECT_GE(test, tfd_now(clockid), until);
	KUNIT_EXPECT_EQ(test, tfd_read(file), 1);

	/* an absolute time in the past expires at once */
	KUNIT_ASSERT_EQ(test, tfd_settime(file, TFD_TIMER_ABSTIME, 1, 0, NULL), 0);
	KUNIT_ASSERT_TRUE_MSG(test, tfd_wait_ticks(file), "a past expiry did not fire");
	KUNIT_EXPECT_EQ(test, tfd_read(file), 1);
}

/*
 * A periodic timer counts every period that passed: read() returns
 * floor((now - first) / period) + 1 for a now between the clock reads
 * around it, and re-arms; gettime() shows the period and the time to the
 * next expiry.
 */
static void timerfd_periodic_test(struct kunit *test)
{
	const int clockid = *(const int *)test->param_value;
	struct file *file = tfd_open(test, clockid, 0);
	int clk = tfd_timer_clock(clockid, 0);
	ktime_t a0, a1, r0, r1, value, interval;
	s64 ticks, lo, hi;

	a0 = tfd_now(clk);
	KUNIT_ASSERT_EQ(test, tfd_settime(file, 0, TFD_PERIOD_NS, TFD_PERIOD_NS, NULL), 0);
	a1 = tfd_now(clk);
	/* the first expiry is at a1 + period at the latest: 11 periods from a1 see 10 */
	tfd_sleep_until(clk, a1 + 11 * TFD_PERIOD_NS);
	KUNIT_ASSERT_TRUE_MSG(test, tfd_wait_ticks(file), "no expiry within 5 s");
	r0 = tfd_now(clk);
	ticks = tfd_read(file);
	r1 = tfd_now(clk);
	lo = div64_s64(r0 - (a1 + TFD_PERIOD_NS), TFD_PERIOD_NS) + 1;
	hi = div64_s64(r1 - (a0 + TFD_PERIOD_NS), TFD_PERIOD_NS) + 1;
	KUNIT_EXPECT_GE(test, ticks, lo);
	KUNIT_EXPECT_LE(test, ticks, hi);
	KUNIT_EXPECT_GE(test, ticks, 10);

	tfd_gettime(file, &value, &interval);
	KUNIT_EXPECT_EQ(test, interval, TFD_PERIOD_NS);
	KUNIT_EXPECT_GT(test, value, 0);
	KUNIT_EXPECT_LE(test, value, TFD_PERIOD_NS);
	/* re-armed by the read: it expires again */
	KUNIT_ASSERT_TRUE_MSG(test, tfd_wait_ticks(file), "not re-armed");
	KUNIT_EXPECT_GE(test, tfd_read(file), 1);
}

/*
 * gettime() of a periodic timer that expired and was not read moves it to
 * its next period and keeps the count for read(), as hrtimer_forward_now()
 * in do_timerfd_gettime() does.
 */
static void timerfd_gettime_forwards_test(struct kunit *test)
{
	const int clockid = *(const int *)test->param_value;
	struct file *file = tfd_open(test, clockid, 0);
	int clk = tfd_timer_clock(clockid, 0);
	ktime_t value, interval;

	KUNIT_ASSERT_EQ(test, tfd_settime(file, 0, TFD_PERIOD_NS, TFD_PERIOD_NS, NULL), 0);
	KUNIT_ASSERT_TRUE_MSG(test, tfd_wait_ticks(file), "no expiry within 5 s");
	/* one expiry is behind us: five periods more make at least five */
	tfd_sleep_until(clk, tfd_now(clk) + 5 * TFD_PERIOD_NS);
	tfd_gettime(file, &value, &interval);
	KUNIT_EXPECT_GT(test, value, 0);
	KUNIT_EXPECT_LE(test, value, TFD_PERIOD_NS);
	KUNIT_EXPECT_EQ(test, interval, TFD_PERIOD_NS);
	KUNIT_EXPECT_GE(test, tfd_read(file), 5);
}

/* A disarmed timer reads 0; a period without a value stays disarmed */
static void timerfd_disarmed_test(struct kunit *test)
{
	const int clockid = *(const int *)test->param_value;
	struct file *file = tfd_open(test, clockid, TFD_NONBLOCK);
	struct itimerspec64 old;
	ktime_t value, interval;

	tfd_gettime(file, &value, &interval);
	KUNIT_EXPECT_EQ(test, value, 0);
	KUNIT_EXPECT_EQ(test, interval, 0);
	KUNIT_ASSERT_EQ(test, tfd_settime(file, 0, 0, TFD_PERIOD_NS, &old), 0);
	KUNIT_EXPECT_EQ(test, timespec64_to_ktime(old.it_value), 0);
	msleep(3 * TFD_PERIOD_NS / NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, tfd_read(file), -EAGAIN);
	tfd_gettime(file, &value, &interval);
	KUNIT_EXPECT_EQ(test, value, 0);
	KUNIT_EXPECT_EQ(test, interval, TFD_PERIOD_NS);
	/* disarming a pending timer stops it */
	KUNIT_ASSERT_EQ(test, tfd_settime(file, 0, TFD_SHORT_NS, 0, NULL), 0);
	KUNIT_ASSERT_EQ(test, tfd_settime(file, 0, 0, 0, NULL), 0);
	msleep(3 * TFD_SHORT_NS / NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, tfd_read(file), -EAGAIN);
}

/* A relative expiry past KTIME_MAX saturates: pending, never due */
static void timerfd_huge_test(struct kunit *test)
{
	const int clockid = *(const int *)test->param_value;
	struct file *file = tfd_open(test, clockid, TFD_NONBLOCK);
	struct itimerspec64 new = {
		.it_value = { .tv_sec = KTIME_SEC_MAX, .tv_nsec = NSEC_PER_SEC - 1 },
	};
	struct itimerspec64 old, cur;

	KUNIT_ASSERT_EQ(test, timerfd_ctx_settime(tfd_ctx(file), 0, &new, &old), 0);
	timerfd_ctx_gettime(tfd_ctx(file), &cur);
	KUNIT_EXPECT_GT(test, cur.it_value.tv_sec, KTIME_SEC_MAX / 2);
	KUNIT_EXPECT_EQ(test, tfd_read(file), -EAGAIN);
}

static void tfd_step_realtime(struct kunit *test, ktime_t delta)
{
	struct timespec64 ts = ktime_to_timespec64(ktime_get_real() + delta);

	KUNIT_ASSERT_EQ(test, do_settimeofday64(&ts), 0);
}

/*
 * TFD_TIMER_CANCEL_ON_SET: setting the clock wakes the reader with
 * ECANCELED (timerfd_clock_was_set()); an absolute realtime timer without
 * the flag, and a relative one with it, stay pending.
 */
static void timerfd_cancel_on_set_test(struct kunit *test)
{
	const int abs_cancel = TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET;
	struct file *cancel = tfd_open(test, CLOCK_REALTIME, TFD_NONBLOCK);
	struct file *plain = tfd_open(test, CLOCK_REALTIME, TFD_NONBLOCK);
	struct file *rel = tfd_open(test, CLOCK_REALTIME, TFD_NONBLOCK);
	ktime_t hour = 3600LL * NSEC_PER_SEC, value, interval;

	KUNIT_ASSERT_EQ(test, tfd_settime(cancel, abs_cancel,
					  ktime_get_real() + hour, 0, NULL), 0);
	KUNIT_ASSERT_EQ(test, tfd_settime(plain, TFD_TIMER_ABSTIME,
					  ktime_get_real() + hour, 0, NULL), 0);
	KUNIT_ASSERT_EQ(test, tfd_settime(rel, TFD_TIMER_CANCEL_ON_SET, hour, 0, NULL), 0);
	KUNIT_EXPECT_EQ(test, tfd_read(cancel), -EAGAIN);

	/* a step there and back: the clock ends where it was */
	tfd_step_realtime(test, NSEC_PER_SEC);
	tfd_step_realtime(test, -NSEC_PER_SEC);
	KUNIT_ASSERT_TRUE_MSG(test, tfd_wait_ticks(cancel), "not woken by the clock set");
	KUNIT_EXPECT_TRUE(test, tfd_readable(cancel));
	KUNIT_EXPECT_EQ(test, tfd_read(cancel), -ECANCELED);
	/* reported once: the timer itself is still pending */
	KUNIT_EXPECT_EQ(test, tfd_read(cancel), -EAGAIN);
	tfd_gettime(cancel, &value, &interval);
	KUNIT_EXPECT_GT(test, value, hour / 2);

	KUNIT_EXPECT_EQ(test, tfd_read(plain), -EAGAIN);
	tfd_gettime(plain, &value, &interval);
	KUNIT_EXPECT_GT(test, value, hour / 2);
	KUNIT_EXPECT_EQ(test, tfd_read(rel), -EAGAIN);
	tfd_gettime(rel, &value, &interval);
	KUNIT_EXPECT_GT(test, value, hour / 2);
}

/*
 * Closing a timerfd whose timer is pending, or periodic and firing, stops
 * the timer before the context is freed (debug objects and KASAN would
 * report a freed active timer or a callback on freed memory).
 */
static void timerfd_release_pending_test(struct kunit *test)
{
	const int clockid = *(const int *)test->param_value;
	struct timerfd_ctx *ctx;
	struct file *file;
	int i;

	for (i = 0; i < 20; i++) {
		ctx = timerfd_alloc_ctx(clockid);
		KUNIT_ASSERT_FALSE(test, IS_ERR(ctx));
		file = anon_inode_getfile("[timerfd]", &timerfd_fops, ctx, O_RDWR);
		if (IS_ERR(file))
			timerfd_free_ctx(ctx);
		KUNIT_ASSERT_FALSE(test, IS_ERR(file));
		KUNIT_EXPECT_EQ(test, tfd_settime(file, 0, i * NSEC_PER_USEC + 1,
						  NSEC_PER_MSEC, NULL), 0);
		udelay(i * 10);
		__fput_sync(file);
	}
	rcu_barrier();
	msleep(20);
}

/* Cases that wait on a real clock: KUnit's "slow", over a second under QEMU */
#define KUNIT_CASE_CLOCKS_SLOW(name) \
	KUNIT_CASE_PARAM_ATTR(name, tfd_clock_gen_params, { .speed = KUNIT_SPEED_SLOW })

static struct kunit_case timerfd_ktimer_cases[] = {
	KUNIT_CASE(timerfd_path_test),
	KUNIT_CASE_CLOCKS_SLOW(timerfd_oneshot_test),
	KUNIT_CASE_CLOCKS_SLOW(timerfd_abstime_test),
	KUNIT_CASE_CLOCKS_SLOW(timerfd_periodic_test),
	KUNIT_CASE_CLOCKS_SLOW(timerfd_gettime_forwards_test),
	KUNIT_CASE_CLOCKS_SLOW(timerfd_disarmed_test),
	KUNIT_CASE_PARAM(timerfd_huge_test, tfd_clock_gen_params),
	KUNIT_CASE(timerfd_cancel_on_set_test),
	KUNIT_CASE_CLOCKS_SLOW(timerfd_release_pending_test),
	{}
};

static struct kunit_suite timerfd_ktimer_suite = {
	.name = "ktimer_timerfd",
	.test_cases = timerfd_ktimer_cases,
};

kunit_test_suites(&timerfd_ktimer_suite);
