// SPDX-License-Identifier: GPL-2.0
/*
 * ktimers on dynamic POSIX clocks (CONFIG_KTIMER_USERS)
 *
 * A dynamic POSIX clock, the clock of a /dev/ptpN descriptor
 * (FD_TO_CLOCKID()), has no hrtimer clock: stock Linux refuses
 * clock_nanosleep() and timer_create() on it with EOPNOTSUPP, and
 * timerfd_create() with EINVAL.  ktimers are built around registered clock
 * bases, so a PTP clock can have one: a clock mapped over CLOCK_MONOTONIC
 * (struct ktimer_clock_map), its offset and rate fitted to samples of the
 * device's clock_gettime().
 *
 * The map moves whenever the clock is set or adjusted through the POSIX
 * clock (clock_settime(), clock_adjtime()), as clock_was_set() re-evaluates
 * the CLOCK_REALTIME hrtimers, and once a second while timers use the
 * clock, which keeps it on a hardware clock that the kernel does not
 * discipline.  A rate change of the device (ADJ_FREQUENCY) scales the map
 * by the same factor at once; the next sample fits it.  Timers fire when
 * the mapped time reaches their expiry, so they are as exact as the map,
 * which is off by the uncertainty of a sample (the time one clock_gettime()
 * takes) plus the clock's drift since the last one; a sleeper reads the
 * device when it wakes and sleeps on if the device has not reached the
 * expiry yet, so a sleep never ends early.
 *
 * When the device goes away, the clock is ended (ktimer_clock_end()):
 * every pending timer expires at once, each user sees that the clock is
 * gone and answers ENODEV, and the clock's slot is given back when the
 * last timer on it is deleted.
 */

#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/kref.h>
#include <linux/ktimer.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/posix-clock.h>
#include <linux/restart_block.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>
#include <kunit/visibility.h>

#include "ktimer_internal.h"

/* Reads of the device a sample takes at most; the fastest is kept */
#define PCLOCK_SAMPLES		8
/* A read this fast is good enough: no more are taken */
#define PCLOCK_NARROW		(20 * NSEC_PER_USEC)
/* Resync period while timers use the clock */
#define PCLOCK_RESYNC		HZ
/* A rate is fitted over at least this much of CLOCK_MONOTONIC */
#define PCLOCK_MIN_FIT		(NSEC_PER_SEC / 2)
/*
 * A fit more than 1/PCLOCK_MAX_CHANGE (1%) off the rate in use is a step
 * the device took without clock_settime() (a driver setting its own
 * clock), not a rate: oscillators differ by parts per million.
 */
#define PCLOCK_MAX_CHANGE	100
#define PCLOCK_ONE		BIT(KTIMER_MAP_SHIFT)

/**
 * struct ktimer_pclock - the ktimer clock of a dynamic POSIX clock
 * @clock:	the registered ktimer clock, mapped over CLOCK_MONOTONIC
 * @map:	its map
 * @ref:	one for the owner, one per user (timer, timerfd, sleeper)
 * @users:	users other than the owner; resyncs run while there are any
 * @lock:	serialises samples and map changes, protects @pc and the
 *		fields below it
 * @pc:		the POSIX clock, NULL once it is removed
 * @gone:	the device is gone: the clock is ended
 * @resync:	the periodic resync
 * @release:	unregisters and frees the clock after the last put
 * @last_event:	CLOCK_MONOTONIC time of the last sample
 * @last_time:	the clock's time at @last_event
 * @freq:	frequency adjustment of the device at the last sample, in
 *		scaled ppm (struct __kernel_timex::freq)
 * @name:	the device's name, for /sys/kernel/debug/ktimers
 */
struct ktimer_pclock {
	struct ktimer_clock	clock;
	struct ktimer_clock_map	map;
	struct kref		ref;
	atomic_t		users;
	struct mutex		lock;	/* samples, map changes, @pc */
	struct posix_clock	*pc;
	bool			gone;
	struct delayed_work	resync;
	struct work_struct	release;
	ktime_t			last_event;
	ktime_t			last_time;
	long			freq;
	char			name[24];
};

/*
 * Their own cache, so that /sys/kernel/slab/ktimer_pclock counts the live
 * ones: none may be left once every PTP device and every user of its clock
 * is gone, which the project's guest selftests check (booted with
 * slab_nomerge, so that the count is this cache's alone).
 */
static struct kmem_cache *pclock_cache;

static int __init ktimer_pclock_init(void)
{
	pclock_cache = KMEM_CACHE(ktimer_pclock, SLAB_PANIC);
	return 0;
}
core_initcall(ktimer_pclock_init);

/*
 * Read the device, bracketed by CLOCK_MONOTONIC, and keep the read with the
 * narrowest bracket: its middle is when the device was read, give or take
 * half its width (the method of PTP_SYS_OFFSET).  A read that another task
 * or an interrupt cut into is wide; the device may sleep, so nothing here
 * can keep them out: up to PCLOCK_SAMPLES reads, yielding between them,
 * until one is narrower than PCLOCK_NARROW.
 */
static int pclock_sample(struct ktimer_pclock *kp, ktime_t *event,
			 ktime_t *time, ktime_t *width)
{
	ktime_t before, after;
	struct timespec64 ts;
	int i, ret;

	lockdep_assert_held(&kp->lock);
	if (!kp->pc)
		return -ENODEV;
	*width = KTIME_MAX;
	for (i = 0; i < PCLOCK_SAMPLES && *width > PCLOCK_NARROW; i++) {
		if (i)
			cond_resched();
		before = ktime_get();
		ret = kp->pc->ops.clock_gettime(kp->pc, &ts);
		after = ktime_get();
		if (ret)
			return ret;
		if (after - before < *width) {
			*width = after - before;
			*event = before + *width / 2;
			*time = timespec64_to_ktime(ts);
		}
	}
	return 0;
}

/* The device's frequency adjustment, in scaled ppm; @old if it cannot say */
static long pclock_freq(struct ktimer_pclock *kp, long old)
{
	struct __kernel_timex tx = {};

	if (!kp->pc->ops.clock_adjtime || kp->pc->ops.clock_adjtime(kp->pc, &tx))
		return old;
	return tx.freq;
}

/* @mult scaled by (1 + @to) / (1 + @from), frequencies in scaled ppm */
static u64 pclock_scale(u64 mult, long from, long to)
{
	/* 1.0 in scaled ppm; a device adjusts by far less than that */
	const s64 one = 65536LL * USEC_PER_SEC;

	if (WARN_ON_ONCE(one + from <= 0 || one + to <= 0))
		return mult;
	return mul_u64_u64_div_u64(mult, one + to, one + from);
}

/* @dtime / @devent in units of 2^-KTIMER_MAP_SHIFT */
static u64 pclock_rate(u64 dtime, u64 devent)
{
	while (devent > U32_MAX) {
		dtime >>= 1;
		devent >>= 1;
	}
	return mul_u64_u32_div(dtime, PCLOCK_ONE, (u32)devent);
}

/*
 * Take a sample and move the map to it; the device's time read goes to
 * @now.  The rate is the one since the last sample when the device was
 * not adjusted in between (@adjusted false), enough time passed for a fit
 * and the fit is close to the rate in use; after an adjustment, the old
 * rate scaled by the change of the device's frequency, if any.  The map
 * starts a bracket's width behind the
 * sample: the device read at most half of it more at the bracket's middle,
 * and the other half covers the error of the fitted rate until the next
 * sample, so that the mapped time does not run ahead of the device's and
 * timers do not fire early.
 */
static int pclock_resync(struct ktimer_pclock *kp, bool adjusted, ktime_t *now)
{
	ktime_t event, time, width;
	u64 mult, fit;
	long freq;
	int ret;

	lockdep_assert_held(&kp->lock);
	ret = pclock_sample(kp, &event, &time, &width);
	if (ret)
		return ret;
	freq = pclock_freq(kp, kp->freq);
	mult = READ_ONCE(kp->map.mult);
	if (freq != kp->freq) {
		mult = pclock_scale(mult, kp->freq, freq);
	} else if (!adjusted && event - kp->last_event >= PCLOCK_MIN_FIT &&
		   time > kp->last_time) {
		fit = pclock_rate(time - kp->last_time, event - kp->last_event);
		if (abs_diff(fit, mult) <= mult / PCLOCK_MAX_CHANGE)
			mult = fit;
	}
	mult = clamp_t(u64, mult, PCLOCK_ONE / 2, 2 * (u64)PCLOCK_ONE - 1);

	kp->last_event = event;
	kp->last_time = time;
	kp->freq = freq;
	if (now)
		*now = time;
	time -= width;
	return ktimer_clock_set_map(&kp->clock, event, time < 0 ? 0 : time,
				    (u32)mult);
}

static void pclock_resync_work(struct work_struct *work)
{
	struct ktimer_pclock *kp = container_of(to_delayed_work(work),
						struct ktimer_pclock, resync);

	mutex_lock(&kp->lock);
	if (!kp->gone) {
		pclock_resync(kp, false, NULL);
		if (atomic_read(&kp->users))
			schedule_delayed_work(&kp->resync, PCLOCK_RESYNC);
	}
	mutex_unlock(&kp->lock);
}

static void pclock_release_work(struct work_struct *work)
{
	struct ktimer_pclock *kp = container_of(work, struct ktimer_pclock,
						release);

	/* A get after ktimer_pclock_remove() may have queued a resync */
	cancel_delayed_work_sync(&kp->resync);
	/* Every timer on the clock is gone: ktimer_pclock_put() */
	WARN_ON_ONCE(ktimer_unregister_clock(&kp->clock));
	kmem_cache_free(pclock_cache, kp);
}

static void pclock_release(struct kref *ref)
{
	struct ktimer_pclock *kp = container_of(ref, struct ktimer_pclock, ref);

	/* Puts come under spinlocks (timer_delete()); unregistering sleeps */
	schedule_work(&kp->release);
}

/**
 * ktimer_pclock_create - give a dynamic POSIX clock a ktimer clock
 * @pc: the POSIX clock, registered; its ->ops.clock_gettime must work in
 *	process context for as long as the ktimer clock exists
 * @name: a name for diagnostics, e.g. "ptp0"
 *
 * Registers a ktimer clock mapped over CLOCK_MONOTONIC and fits the map to
 * a first sample of @pc.
 *
 * Context: process context; may sleep.
 * Return: the clock, or an ERR_PTR(): -ENOSPC when all %KTIMER_MAX_CLOCKS
 * slots are taken, -ENOMEM, or the error of the first sample.
 */
struct ktimer_pclock *ktimer_pclock_create(struct posix_clock *pc,
					   const char *name)
{
	struct ktimer_pclock *kp;
	int ret;

	if (WARN_ON_ONCE(!pc || !pc->ops.clock_gettime || !name))
		return ERR_PTR(-EINVAL);
	kp = kmem_cache_zalloc(pclock_cache, GFP_KERNEL);
	if (!kp)
		return ERR_PTR(-ENOMEM);

	strscpy(kp->name, name, sizeof(kp->name));
	ktimer_clock_map_init(&kp->map);
	kp->clock.name = kp->name;
	kp->clock.clockid = CLOCK_MONOTONIC;
	kp->clock.get_time = ktime_get;
	kp->clock.map = &kp->map;
	kref_init(&kp->ref);
	mutex_init(&kp->lock);
	kp->pc = pc;
	INIT_DELAYED_WORK(&kp->resync, pclock_resync_work);
	INIT_WORK(&kp->release, pclock_release_work);

	mutex_lock(&kp->lock);
	kp->freq = pclock_freq(kp, 0);
	ret = pclock_resync(kp, true, NULL);
	mutex_unlock(&kp->lock);
	if (!ret)
		ret = ktimer_register_clock(&kp->clock);
	if (ret) {
		kmem_cache_free(pclock_cache, kp);
		return ERR_PTR(ret);
	}
	return kp;
}
EXPORT_SYMBOL_GPL(ktimer_pclock_create);

/**
 * ktimer_pclock_remove - the POSIX clock of a ktimer clock goes away
 * @kp: the clock, from ktimer_pclock_create()
 *
 * Ends the clock: every pending timer on it expires at once, and its users
 * answer ENODEV from then on.  @pc is not used once this returns; @kp is
 * freed when its last user is gone.
 *
 * Context: process context; may sleep.
 */
void ktimer_pclock_remove(struct ktimer_pclock *kp)
{
	if (!kp)
		return;
	mutex_lock(&kp->lock);
	WRITE_ONCE(kp->gone, true);
	kp->pc = NULL;
	mutex_unlock(&kp->lock);
	cancel_delayed_work_sync(&kp->resync);
	ktimer_clock_end(&kp->clock);
	kref_put(&kp->ref, pclock_release);
}
EXPORT_SYMBOL_GPL(ktimer_pclock_remove);

/**
 * ktimer_pclock_adjusted - the POSIX clock was set or adjusted
 * @kp: the clock, or NULL
 *
 * Called after a successful clock_settime() or clock_adjtime() of the
 * POSIX clock: the map moves to a new sample, and pending timers become
 * due earlier or later, as clock_was_set() does for CLOCK_REALTIME.
 *
 * Context: process context; may sleep.
 */
void ktimer_pclock_adjusted(struct ktimer_pclock *kp)
{
	if (!kp)
		return;
	mutex_lock(&kp->lock);
	if (!kp->gone)
		pclock_resync(kp, true, NULL);
	mutex_unlock(&kp->lock);
}
EXPORT_SYMBOL_GPL(ktimer_pclock_adjusted);

/**
 * ktimer_pclock_get - take a reference for a user of the clock
 * @kp: the clock
 *
 * A timer, a timerfd or a sleeper holds one for as long as it may use the
 * clock; resyncs run while there is any.
 *
 * Context: any context.
 * Return: @kp.
 */
struct ktimer_pclock *ktimer_pclock_get(struct ktimer_pclock *kp)
{
	kref_get(&kp->ref);
	if (atomic_inc_return(&kp->users) == 1)
		schedule_delayed_work(&kp->resync, PCLOCK_RESYNC);
	return kp;
}
EXPORT_SYMBOL_GPL(ktimer_pclock_get);

/**
 * ktimer_pclock_put - a user of ktimer_pclock_get() is done
 * @kp: the clock, or NULL
 *
 * Resyncs stop with the last user.  After the last put and
 * ktimer_pclock_remove(), the clock is unregistered and freed from a work
 * item.
 *
 * Context: any context.
 */
void ktimer_pclock_put(struct ktimer_pclock *kp)
{
	if (!kp)
		return;
	atomic_dec(&kp->users);
	kref_put(&kp->ref, pclock_release);
}
EXPORT_SYMBOL_GPL(ktimer_pclock_put);

/**
 * ktimer_pclock_clock - the ktimer clock to put a user's timer on
 * @kp: the clock
 *
 * Return: the registered ktimer clock.
 */
struct ktimer_clock *ktimer_pclock_clock(struct ktimer_pclock *kp)
{
	return &kp->clock;
}
EXPORT_SYMBOL_GPL(ktimer_pclock_clock);

/**
 * ktimer_pclock_gone - is the device of the clock gone?
 * @kp: the clock
 *
 * Context: any context.
 * Return: true once ktimer_pclock_remove() ended the clock: its timers
 * have expired and must not be started again.
 */
bool ktimer_pclock_gone(const struct ktimer_pclock *kp)
{
	return READ_ONCE(kp->gone);
}
EXPORT_SYMBOL_GPL(ktimer_pclock_gone);

/*
 * Read the device itself and move the map: a sleeper that woke because the
 * mapped time reached its expiry checks that the device did too.
 */
static int pclock_read(struct ktimer_pclock *kp, ktime_t *now)
{
	int ret;

	mutex_lock(&kp->lock);
	ret = kp->gone ? -ENODEV : pclock_resync(kp, false, now);
	mutex_unlock(&kp->lock);
	return ret;
}

static long pclock_nanosleep_restart(struct restart_block *restart);

/*
 * Sleep until @t of the device: on the mapped clock, then again for as
 * long as the device itself reads less, so that the sleep never ends
 * early whatever the map's error.  After a signal the time left is the
 * device's, read then, not the map's, which lags the device by the
 * width of a sample.
 */
static long pclock_sleep_until(struct ktimer_pclock *kp, ktime_t t)
{
	struct restart_block *restart = &current->restart_block;
	struct timespec64 left;
	ktime_t now, rem;
	long ret;

	for (;;) {
		rem = ktimer_sleep(&kp->clock, t, KTIMER_ABS, &t);
		if (rem < 0)
			return rem;
		ret = pclock_read(kp, &now);
		if (ret)
			return ret;
		if (now >= t)
			return 0;
		if (!rem)
			continue;
		if (restart->nanosleep.type == TT_NONE)
			return -ERESTART_RESTARTBLOCK;
		left = ktime_to_timespec64(t - now);
		/* -ERESTART_RESTARTBLOCK once stored, -EFAULT if it cannot be */
		return nanosleep_copyout(restart, &left);
	}
}

/**
 * ktimer_pclock_nanosleep - clock_nanosleep() on a dynamic POSIX clock
 * @kp: the clock, with a reference the caller holds until this returns
 * @which_clock: the clock id user space passed, for the restart
 * @flags: 0 or %TIMER_ABSTIME
 * @rqtp: the time to sleep, or the device's time to sleep until
 *
 * Called by the syscall as a k_clock's nsleep, with
 * current->restart_block prepared for the remaining time.  A relative
 * sleep becomes absolute on the device's time read at its start; a sleep
 * cut by a signal restarts through restart_block.fn, which finds the
 * clock again by @which_clock.
 *
 * Context: process context; sleeps.
 * Return: 0 after the full sleep, -ERESTART_RESTARTBLOCK or
 * -ERESTARTNOHAND after a signal, -EFAULT if the remaining time could not
 * be stored, -ENODEV when the device went away.
 */
long ktimer_pclock_nanosleep(struct ktimer_pclock *kp, clockid_t which_clock,
			     int flags, const struct timespec64 *rqtp)
{
	struct restart_block *restart = &current->restart_block;
	ktime_t t = timespec64_to_ktime(*rqtp), now;
	long ret;

	ktimer_user_count(KTIMER_USER_PCLOCK);
	if (!(flags & TIMER_ABSTIME)) {
		ret = pclock_read(kp, &now);
		if (ret)
			return ret;
		t = ktime_add_safe(now, t);
	}
	ret = pclock_sleep_until(kp, t);
	if (ret != -ERESTART_RESTARTBLOCK)
		return ret;
	if (flags & TIMER_ABSTIME)
		return -ERESTARTNOHAND;
	restart->nanosleep.clockid = which_clock;
	restart->nanosleep.expires = t;
	return set_restart_fn(restart, pclock_nanosleep_restart);
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_pclock_nanosleep);

static long pclock_nanosleep_restart(struct restart_block *restart)
{
	struct ktimer_pclock *kp;
	long ret;

	kp = posix_clock_ktimer_get(restart->nanosleep.clockid);
	if (IS_ERR(kp))
		return PTR_ERR(kp);
	ret = pclock_sleep_until(kp, restart->nanosleep.expires);
	ktimer_pclock_put(kp);
	return ret;
}

/**
 * ktimer_pclock_test_resync - resync now, as the periodic work does
 * @kp: the clock
 *
 * For the KUnit tests only: the fit of the rate happens when they say.
 */
void ktimer_pclock_test_resync(struct ktimer_pclock *kp)
{
	mutex_lock(&kp->lock);
	if (!kp->gone)
		pclock_resync(kp, false, NULL);
	mutex_unlock(&kp->lock);
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_pclock_test_resync);
