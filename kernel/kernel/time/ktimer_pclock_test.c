// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the ktimer clocks of dynamic POSIX clocks (ktimer_pclock.c)
 *
 * Most cases drive a fake device: a struct posix_clock whose clock_gettime()
 * and clock_adjtime() the test owns (an offset and a rate over
 * CLOCK_MONOTONIC), so steps, rate changes, read errors and removal happen
 * when the test says.  One case registers a real PTP clock, the ptp_mock
 * driver's, and checks what ptp_clock_register() and ptp_clock_unregister()
 * do to the ktimer clocks.  Timing is only ever a lower bound or a wait
 * of seconds: under QEMU a loaded host stalls the guest for tens of
 * milliseconds.  The cases that wait on the clock are marked slow.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/ktimer.h>
#include <linux/math64.h>
#include <linux/posix-clock.h>
#include <linux/ptp_mock.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/timex.h>

#include "ktimer_internal.h"
#include "ktimer_test.h"

#define MS		((ktime_t)NSEC_PER_MSEC)
#define SEC		((ktime_t)NSEC_PER_SEC)
#define ONE		BIT(KTIMER_MAP_SHIFT)
/* The fake device starts this far ahead of CLOCK_MONOTONIC */
#define AHEAD		(1000 * SEC)
/* 1.0 in scaled ppm (struct __kernel_timex::freq) */
#define SCALED_ONE	(65536LL * USEC_PER_SEC)

/*
 * The fake device: time = base_time + (mono - base_mono) * (1 + drift_ppm
 * + freq), with freq what clock_adjtime() dialed and drift_ppm an error
 * of its oscillator that it does not report.
 */
struct fake_dev {
	struct posix_clock pc;
	spinlock_t lock;	/* the fields below */
	ktime_t base_mono;
	ktime_t base_time;
	long long freq;
	long drift_ppm;
	int error;
	unsigned int reads;
};

static ktime_t fake_time_locked(struct fake_dev *fd, ktime_t mono)
{
	s64 ppb = div_s64((s64)fd->freq * 1000, 65536) + fd->drift_ppm * 1000LL;
	ktime_t d = mono - fd->base_mono;

	return fd->base_time + d + div_s64(div_s64(d, 1000) * ppb, 1000000);
}

static ktime_t fake_now(struct fake_dev *fd)
{
	unsigned long flags;
	ktime_t t;

	spin_lock_irqsave(&fd->lock, flags);
	t = fake_time_locked(fd, ktime_get());
	spin_unlock_irqrestore(&fd->lock, flags);
	return t;
}

/* Rebase at now, then set the time (@time) or the frequency (@freq) */
static void fake_set(struct fake_dev *fd, const ktime_t *time, const long long *freq)
{
	unsigned long flags;
	ktime_t mono;

	spin_lock_irqsave(&fd->lock, flags);
	mono = ktime_get();
	fd->base_time = time ? *time : fake_time_locked(fd, mono);
	fd->base_mono = mono;
	if (freq)
		fd->freq = *freq;
	spin_unlock_irqrestore(&fd->lock, flags);
}

static int fake_gettime(struct posix_clock *pc, struct timespec64 *ts)
{
	struct fake_dev *fd = container_of(pc, struct fake_dev, pc);

	WRITE_ONCE(fd->reads, READ_ONCE(fd->reads) + 1);
	if (READ_ONCE(fd->error))
		return READ_ONCE(fd->error);
	*ts = ktime_to_timespec64(fake_now(fd));
	return 0;
}

static int fake_adjtime(struct posix_clock *pc, struct __kernel_timex *tx)
{
	struct fake_dev *fd = container_of(pc, struct fake_dev, pc);

	if (tx->modes & ADJ_FREQUENCY)
		fake_set(fd, NULL, &tx->freq);
	else if (!tx->modes)
		tx->freq = READ_ONCE(fd->freq);
	return 0;
}

static struct fake_dev *new_fake_dev(struct kunit *test)
{
	struct fake_dev *fd = kunit_kzalloc(test, sizeof(*fd), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, fd);
	spin_lock_init(&fd->lock);
	fd->pc.ops.clock_gettime = fake_gettime;
	fd->pc.ops.clock_adjtime = fake_adjtime;
	fd->base_mono = ktime_get();
	fd->base_time = fd->base_mono + AHEAD;
	return fd;
}

/* The ktimer clock of @fd, removed (the device goes) at the end */
KUNIT_DEFINE_ACTION_WRAPPER(remove_pclock, ktimer_pclock_remove,
			    struct ktimer_pclock *);

static struct ktimer_pclock *new_pclock(struct kunit *test, struct fake_dev *fd)
{
	struct ktimer_pclock *kp = ktimer_pclock_create(&fd->pc, "fake-ptp");

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(kp), "create: %ld", PTR_ERR(kp));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, remove_pclock, kp), 0);
	return kp;
}

/* A timer on a clock, held through a user reference of its ktimer clock */
struct pc_timer {
	struct ktimer timer;
	struct ktimer_pclock *kp;
	struct fake_dev *fd;
	struct completion done;
	int fired;
	ktime_t seen;		/* the device's time in the callback */
};

static void pc_timer_fn(void *data)
{
	struct pc_timer *pt = data;

	pt->fired++;
	if (pt->fd)
		pt->seen = fake_now(pt->fd);
	complete(&pt->done);
}

static void pc_timer_release(void *data)
{
	struct pc_timer *pt = data;

	stop_ktimer(&pt->timer);
	ktimer_pclock_put(pt->kp);
}

static struct pc_timer *new_pc_timer(struct kunit *test, struct ktimer_pclock *kp,
				     struct fake_dev *fd)
{
	struct pc_timer *pt = kunit_kzalloc(test, sizeof(*pt), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, pt);
	pt->kp = ktimer_pclock_get(kp);
	pt->fd = fd;
	init_completion(&pt->done);
	ktimer_init(&pt->timer, ktimer_pclock_clock(kp));
	pt->timer.function = pc_timer_fn;
	pt->timer.data = pt;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pc_timer_release, pt), 0);
	return pt;
}

/* The clock reads the device's time, never ahead of it */
static void ktimer_pclock_reads_device_time_test(struct kunit *test)
{
	struct fake_dev *fd = new_fake_dev(test);
	struct ktimer_pclock *kp = new_pclock(test, fd);
	ktime_t before, mapped, after;
	int i;

	before = fake_now(fd);
	mapped = ktimer_clock_now(ktimer_pclock_clock(kp));
	after = fake_now(fd);
	KUNIT_EXPECT_GE(test, mapped, before - SEC);
	KUNIT_EXPECT_LE(test, mapped, after + SEC);
	KUNIT_EXPECT_GT(test, fd->reads, 0U);
	/*
	 * Never ahead of the device, so that no timer fires early: the map
	 * starts a sample's bracket behind, and this device's rate is exact.
	 */
	for (i = 0; i < 100; i++) {
		mapped = ktimer_clock_now(ktimer_pclock_clock(kp));
		after = fake_now(fd);
		KUNIT_EXPECT_LE_MSG(test, mapped, after, "read %d", i);
	}
	/* a mapped clock, over CLOCK_MONOTONIC, and not a POSIX clock of its own */
	KUNIT_EXPECT_EQ(test, ktimer_pclock_clock(kp)->clockid, CLOCK_MONOTONIC);
	KUNIT_EXPECT_NOT_NULL(test, ktimer_pclock_clock(kp)->map);
	KUNIT_EXPECT_STREQ(test, ktimer_pclock_clock(kp)->name, "fake-ptp");
}

/* The resolution of its timers is the expiry engine's, as on every clock */
static void ktimer_pclock_resolution_test(struct kunit *test)
{
	struct ktimer_pclock *kp = new_pclock(test, new_fake_dev(test));

	KUNIT_EXPECT_EQ(test, ktimer_clock_resolution(ktimer_pclock_clock(kp)),
			ktimer_clock_resolution(NULL));
}

/* A timer on the device's time fires through the softirq */
static void ktimer_pclock_timer_fires_test(struct kunit *test)
{
	struct fake_dev *fd = new_fake_dev(test);
	struct ktimer_pclock *kp = new_pclock(test, fd);
	struct pc_timer *pt = new_pc_timer(test, kp, fd);
	ktime_t t = fake_now(fd) + 20 * MS;

	KUNIT_ASSERT_EQ(test, start_ktimer(&pt->timer, &t, KTIMER_ABS), 0);
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&pt->done, 10 * HZ), 0UL);
	KUNIT_EXPECT_EQ(test, pt->fired, 1);
	/* the map is off by the time a read takes, not by milliseconds */
	KUNIT_EXPECT_GE(test, pt->seen, t - MS);
}

/*
 * A step of the device (clock_settime(), ADJ_SETOFFSET) moves its pending
 * timers: forward makes a timer an hour away due, backward delays one.
 */
static void ktimer_pclock_step_test(struct kunit *test)
{
	struct fake_dev *fd = new_fake_dev(test);
	struct ktimer_pclock *kp = new_pclock(test, fd);
	struct pc_timer *hour = new_pc_timer(test, kp, fd);
	struct pc_timer *soon = new_pc_timer(test, kp, fd);
	ktime_t t = 3600 * SEC, back;

	KUNIT_ASSERT_EQ(test, start_ktimer(&hour->timer, &t, KTIMER_REL), 0);
	t = fake_now(fd) + 3600 * SEC - 10 * MS;
	fake_set(fd, &t, NULL);
	ktimer_pclock_adjusted(kp);
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&hour->done, 10 * HZ), 0UL);
	KUNIT_EXPECT_GE(test, hour->seen, hour->timer.expires - MS);

	t = 100 * MS;
	KUNIT_ASSERT_EQ(test, start_ktimer(&soon->timer, &t, KTIMER_REL), 0);
	back = fake_now(fd) - 3600 * SEC;
	fake_set(fd, &back, NULL);
	ktimer_pclock_adjusted(kp);
	msleep(300);
	/* a lower bound: due an hour later now, it cannot have fired */
	KUNIT_EXPECT_EQ(test, soon->fired, 0);
	KUNIT_EXPECT_GT(test, get_remtime_ktimer(&soon->timer, 0), 3500 * SEC);
}

/*
 * A frequency adjustment scales the map at once; an oscillator error the
 * device does not report is fitted from the samples of the resyncs.
 */
static void ktimer_pclock_rate_test(struct kunit *test)
{
	struct fake_dev *fd = new_fake_dev(test);
	struct ktimer_pclock *kp = new_pclock(test, fd);
	struct ktimer_clock_map *map = ktimer_pclock_clock(kp)->map;
	long long freq = 100 * 65536;		/* +100 ppm */
	u64 want;

	KUNIT_EXPECT_EQ(test, READ_ONCE(map->mult), ONE);
	fake_set(fd, NULL, &freq);
	ktimer_pclock_adjusted(kp);
	want = mul_u64_u64_div_u64(ONE, SCALED_ONE + freq, SCALED_ONE);
	KUNIT_EXPECT_EQ(test, (u64)READ_ONCE(map->mult), want);

	/* +1000 ppm more that nobody dialed: the next fit finds it */
	fd->drift_ppm = 1000;
	fake_set(fd, NULL, NULL);
	ktimer_pclock_adjusted(kp);	/* a rebase, not a fit */
	msleep(600);
	ktimer_pclock_get(kp);
	ktimer_pclock_test_resync(kp);
	ktimer_pclock_put(kp);
	want = mul_u64_u64_div_u64(ONE, SCALED_ONE + freq + 1000 * 65536, SCALED_ONE);
	/* within 50 ppm: a sample is off by microseconds over 600 ms */
	KUNIT_EXPECT_LE(test, abs_diff((u64)READ_ONCE(map->mult), want),
			(u64)ONE / 20000);
}

/*
 * A step the device takes by itself (a driver setting its own clock, no
 * clock_settime()) is no rate: the next resync moves the map to the device
 * and keeps the rate, instead of fitting a second's worth of step into it
 * (which would run the clock twice as fast, and fire timers early).
 */
static void ktimer_pclock_unseen_step_test(struct kunit *test)
{
	struct fake_dev *fd = new_fake_dev(test);
	struct ktimer_pclock *kp = new_pclock(test, fd);
	struct ktimer_clock_map *map = ktimer_pclock_clock(kp)->map;
	ktime_t t = fake_now(fd) + 600 * MS, mapped, after;
	u32 mult;

	fake_set(fd, &t, NULL);			/* 600 ms ahead, unannounced */
	msleep(600);
	ktimer_pclock_get(kp);
	ktimer_pclock_test_resync(kp);
	ktimer_pclock_put(kp);
	mult = READ_ONCE(map->mult);
	KUNIT_EXPECT_EQ(test, mult, ONE);
	mapped = ktimer_clock_now(ktimer_pclock_clock(kp));
	after = fake_now(fd);
	KUNIT_EXPECT_LE(test, mapped, after);
	KUNIT_EXPECT_GT(test, mapped, after - SEC);
}

struct sleeper {
	struct ktimer_pclock *kp;
	struct fake_dev *fd;
	struct timespec64 ts;
	int flags;
	long ret;
	ktime_t woke;		/* the device's time when the sleep returned */
	struct completion done;
};

static int sleeper_fn(void *data)
{
	struct sleeper *s = data;

	s->ret = ktimer_pclock_nanosleep(s->kp, CLOCK_REALTIME, s->flags, &s->ts);
	s->woke = fake_now(s->fd);
	complete(&s->done);
	while (!kthread_should_stop())
		schedule_timeout_idle(HZ);
	return 0;
}

KUNIT_DEFINE_ACTION_WRAPPER(stop_kthread, kthread_stop, struct task_struct *);

/* Sleep in a kthread, so that the test can remove the device meanwhile */
static struct sleeper *start_sleeper(struct kunit *test, struct ktimer_pclock *kp,
				     struct fake_dev *fd, int flags, ktime_t t)
{
	struct sleeper *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	struct task_struct *task;

	KUNIT_ASSERT_NOT_NULL(test, s);
	s->kp = kp;
	s->fd = fd;
	s->flags = flags;
	s->ts = ktime_to_timespec64(t);
	init_completion(&s->done);
	task = kthread_run(sleeper_fn, s, "ktimer-pclock-sleeper");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, stop_kthread, task), 0);
	return s;
}

/*
 * A sleep never ends before the device reads its end, however far the
 * map is off: here the device runs 5% slower than anyone said, so the
 * mapped time reaches the end 20 ms early, well beyond the wake-up
 * latency (with 2000 ppm, 400 us early, a sleep that trusted the map
 * still returned after the end under QEMU: mutant 119 survived).
 */
static void ktimer_pclock_sleep_never_early_test(struct kunit *test)
{
	struct fake_dev *fd = new_fake_dev(test);
	struct ktimer_pclock *kp = new_pclock(test, fd);
	struct sleeper *abs, *rel;
	ktime_t start, end;

	fd->drift_ppm = -50000;
	fake_set(fd, NULL, NULL);
	start = fake_now(fd);
	end = start + 400 * MS;
	abs = start_sleeper(test, kp, fd, TIMER_ABSTIME, end);
	rel = start_sleeper(test, kp, fd, 0, 400 * MS);
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&abs->done, 10 * HZ), 0UL);
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&rel->done, 10 * HZ), 0UL);
	KUNIT_EXPECT_EQ(test, abs->ret, 0L);
	KUNIT_EXPECT_GE(test, abs->woke, end);
	KUNIT_EXPECT_EQ(test, rel->ret, 0L);
	KUNIT_EXPECT_GE(test, rel->woke, start + 400 * MS);
}

/* A device that cannot be read: the sleep says why */
static void ktimer_pclock_read_error_test(struct kunit *test)
{
	struct fake_dev *fd = new_fake_dev(test);
	struct ktimer_pclock *kp = new_pclock(test, fd);
	struct timespec64 ts = { .tv_nsec = 1000 };

	WRITE_ONCE(fd->error, -EIO);
	ktimer_pclock_get(kp);
	KUNIT_EXPECT_EQ(test, ktimer_pclock_nanosleep(kp, CLOCK_REALTIME, 0, &ts),
			(long)-EIO);
	ktimer_pclock_put(kp);

	/* nor a clock made of it */
	KUNIT_EXPECT_EQ(test, PTR_ERR(ktimer_pclock_create(&fd->pc, "fake-ptp")),
			(long)-EIO);
}

static bool clock_registered(const char *name)
{
	struct ktimer_clock *clock = NULL;

	while ((clock = ktimer_next_clock(clock))) {
		if (!strcmp(clock->name, name))
			return true;
	}
	return false;
}

static bool wait_unregistered(const char *name)
{
	int i;

	for (i = 0; i < 100 && clock_registered(name); i++)
		msleep(100);
	return !clock_registered(name);
}

/*
 * The device goes away with timers pending and a task asleep: the timers
 * expire at once (no later than the removal, never on a freed clock), the
 * sleeper returns ENODEV, and the clock is unregistered when the last user
 * lets go of it, not before.
 */
static void ktimer_pclock_remove_with_timers_test(struct kunit *test)
{
	struct fake_dev *fd = new_fake_dev(test);
	struct ktimer_pclock *kp = ktimer_pclock_create(&fd->pc, "fake-ptp-gone");
	struct pc_timer *pt;
	struct sleeper *s;
	ktime_t t = 3600 * SEC;

	KUNIT_ASSERT_FALSE(test, IS_ERR(kp));
	pt = new_pc_timer(test, kp, NULL);
	KUNIT_ASSERT_EQ(test, start_ktimer(&pt->timer, &t, KTIMER_REL), 0);
	s = start_sleeper(test, ktimer_pclock_get(kp), fd, 0, 3600 * SEC);
	msleep(100);

	ktimer_pclock_remove(kp);
	KUNIT_EXPECT_TRUE(test, ktimer_pclock_gone(kp));
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&pt->done, 10 * HZ), 0UL);
	KUNIT_EXPECT_EQ(test, pt->timer.expired, KTIME_MAX);
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&s->done, 10 * HZ), 0UL);
	KUNIT_EXPECT_EQ(test, s->ret, (long)-ENODEV);

	/* a start later is refused, and a NOCHECK one expires at once */
	t = SEC;
	KUNIT_EXPECT_EQ(test, start_ktimer(&pt->timer, &t, KTIMER_REL), -ETIME);
	KUNIT_EXPECT_TRUE(test, clock_registered("fake-ptp-gone"));
	ktimer_pclock_put(s->kp);
	KUNIT_EXPECT_TRUE(test, clock_registered("fake-ptp-gone"));
	kunit_release_action(test, pc_timer_release, pt);
	KUNIT_EXPECT_TRUE(test, wait_unregistered("fake-ptp-gone"));
}

/* Bad input gets an error, changes nothing and leaks nothing */
static void ktimer_pclock_bad_input_test(struct kunit *test)
{
	struct fake_dev *fd = new_fake_dev(test);
	struct posix_clock unreadable = {};

	expect_warning_begin(test);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ktimer_pclock_create(NULL, "x")), (long)-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ktimer_pclock_create(&unreadable, "x")),
			(long)-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ktimer_pclock_create(&fd->pc, NULL)),
			(long)-EINVAL);
	expect_warning_end(test);
	/* the NULL clock of a POSIX clock without timers: nothing to do */
	ktimer_pclock_adjusted(NULL);
	ktimer_pclock_put(NULL);
	ktimer_pclock_remove(NULL);
	KUNIT_EXPECT_FALSE(test, clock_registered("x"));
}

/*
 * A real PTP clock: ptp_clock_register() gives it a ktimer clock named
 * after its device, which reads the device's time (the mock counts from 0
 * at creation on CLOCK_MONOTONIC_RAW), and ptp_clock_unregister() takes it
 * away again.
 */
static void ktimer_pclock_ptp_mock_test(struct kunit *test)
{
	struct ktimer_clock *clock = NULL;
	struct mock_phc *phc;
	ktime_t raw0, raw1, now, raw;
	char name[16];

	if (!IS_ENABLED(CONFIG_PTP_1588_CLOCK_MOCK))
		kunit_skip(test, "no ptp_mock driver (CONFIG_PTP_1588_CLOCK_MOCK)");
	if (!ktimer_users_on())
		kunit_skip(test, "booted with ktimer.users=0: PTP clocks get no ktimer clock");

	raw0 = ktime_get_raw();
	phc = mock_phc_create(NULL);
	raw1 = ktime_get_raw();
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(phc));
	snprintf(name, sizeof(name), "ptp%d", mock_phc_index(phc));

	while ((clock = ktimer_next_clock(clock)) && strcmp(clock->name, name))
		;
	KUNIT_EXPECT_NOT_NULL(test, clock);
	if (clock) {
		now = ktimer_clock_now(clock);
		raw = ktime_get_raw();
		KUNIT_EXPECT_GE(test, now, raw - raw1 - SEC);
		KUNIT_EXPECT_LE(test, now, raw - raw0 + SEC);
		KUNIT_EXPECT_EQ(test, clock->clockid, CLOCK_MONOTONIC);
	}
	mock_phc_destroy(phc);
	KUNIT_EXPECT_TRUE(test, wait_unregistered(name));
}

static struct kunit_case ktimer_pclock_cases[] = {
	KUNIT_CASE(ktimer_pclock_reads_device_time_test),
	KUNIT_CASE(ktimer_pclock_resolution_test),
	KUNIT_CASE_SLOW(ktimer_pclock_timer_fires_test),
	KUNIT_CASE_SLOW(ktimer_pclock_step_test),
	KUNIT_CASE_SLOW(ktimer_pclock_rate_test),
	KUNIT_CASE_SLOW(ktimer_pclock_unseen_step_test),
	KUNIT_CASE_SLOW(ktimer_pclock_sleep_never_early_test),
	KUNIT_CASE_SLOW(ktimer_pclock_read_error_test),
	KUNIT_CASE_SLOW(ktimer_pclock_remove_with_timers_test),
	KUNIT_CASE(ktimer_pclock_bad_input_test),
	KUNIT_CASE(ktimer_pclock_ptp_mock_test),
	{}
};

static struct kunit_suite ktimer_pclock_suite = {
	.name = "ktimer_pclock",
	.test_cases = ktimer_pclock_cases,
};

kunit_test_suites(&ktimer_pclock_suite);

MODULE_DESCRIPTION("KUnit tests of the ktimer clocks of dynamic POSIX clocks");
MODULE_LICENSE("GPL");
