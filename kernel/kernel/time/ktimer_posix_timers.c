// SPDX-License-Identifier: GPL-2.0
/*
 * POSIX timers on CLOCK_REALTIME and CLOCK_MONOTONIC served by ktimers
 * (CONFIG_KTIMER_USERS)
 *
 * The k_clock timer operations of clock_realtime_ktimer and
 * clock_monotonic_ktimer (posix-timers.c), which clockid_to_kclock() hands
 * out while ktimer_serves() the clock.  The generic code (timer_settime(),
 * timer_gettime(), timer_delete(), the signal re-arm) stays as it is; only
 * what touched the hrtimer is replaced.  The 2005 posting converted
 * posix-timers.c the same way, with the ktimer in k_itimer::it.
 *
 * Timers are armed by the syscalls under k_itimer::it_lock, and expire in
 * the timer softirq, whose callback takes it_lock to queue the signal.
 */

#include <linux/err.h>
#include <linux/ktimer.h>
#include <linux/posix-clock.h>
#include <linux/posix-timers.h>
#include <linux/sched/signal.h>
#include <kunit/visibility.h>

#include "posix-timers.h"

static struct ktimer *ktimer_of(struct k_itimer *timr)
{
	return &timr->it.kt.timer;
}

/* The expiry run's callback: queue the timer's signal */
static void ktimer_posix_timer_fn(void *data)
{
	struct k_itimer *timr = data;
	struct ktimer *timer = ktimer_of(timr);
	unsigned long flags;
	u64 periods;
	ktime_t now;

	spin_lock_irqsave(&timr->it_lock, flags);
	/*
	 * The signal was not queued (SIG_IGN), so no dequeue will re-arm an
	 * interval timer; re-arm it here, no more often than once a jiffy,
	 * as posix_timer_fn() does for hrtimers.
	 */
	if (posix_timer_queue_signal(timr) && timr->it_interval) {
		get_expiry_ktimer(timer, &now);
		if (timr->it_interval < TICK_NSEC)
			now = ktime_add(now, TICK_NSEC);
		periods = forward_ktimer(timer, now, timr->it_interval);
		timr->it_overrun = ktimer_overrun_add(timr->it_overrun, periods);
		start_ktimer(timer, NULL, KTIMER_RESTART | KTIMER_NOCHECK);
		++timr->it_requeue_pending;
		timr->it_active = 1;
	}
	spin_unlock_irqrestore(&timr->it_lock, flags);
}

/**
 * ktimer_posix_timer_create - k_clock::timer_create
 * @timr: the new timer, with ->it_clock set
 *
 * Return: 0, or -EINVAL if ktimers does not have the clock.
 */
int ktimer_posix_timer_create(struct k_itimer *timr)
{
	struct ktimer *timer = ktimer_of(timr);
	struct ktimer_clock *clock = ktimer_clock_find(timr->it_clock);

	if (WARN_ON_ONCE(!clock))
		return -EINVAL;
	ktimer_init(timer, clock);
	timer->function = ktimer_posix_timer_fn;
	timer->data = timr;
	ktimer_user_count(KTIMER_USER_POSIX_TIMER);
	return 0;
}

/*
 * Queue @timer at @expires of its clock, absolute or from now, or with
 * SIGEV_NONE only keep the expiry.  A past expiry fires at once
 * (KTIMER_NOCHECK), as common_hrtimer_arm() starts its hrtimer.
 */
static void ktimer_posix_timer_queue(struct ktimer *timer, ktime_t expires,
				     bool absolute, bool sigev_none)
{
	ktime_t now;

	if (!absolute) {
		get_expiry_ktimer(timer, &now);
		expires = ktime_add_safe(expires, now);
	}
	if (sigev_none)
		ktimer_set_expires(timer, expires);
	else
		start_ktimer(timer, &expires, KTIMER_ABS | KTIMER_NOCHECK);
}

/**
 * ktimer_posix_timer_arm - k_clock::timer_arm
 * @timr: a timer that is not pending, ->it_lock held
 * @expires: the expiry, absolute or relative to now
 * @absolute: @expires is absolute (TIMER_ABSTIME)
 * @sigev_none: SIGEV_NONE: keep the expiry, do not queue the timer
 */
void ktimer_posix_timer_arm(struct k_itimer *timr, ktime_t expires,
			    bool absolute, bool sigev_none)
{
	struct ktimer *timer = ktimer_of(timr);
	clockid_t clockid = ktimer_user_clockid(timr->it_clock, absolute);

	/*
	 * ->kclock follows the clock the timer runs on, for the clock reads of
	 * the generic code; ->it_clock stays, for the next timer_settime().
	 */
	timr->kclock = clockid == CLOCK_REALTIME ? &clock_realtime_ktimer :
						   &clock_monotonic_ktimer;
	/*
	 * Never ktimer_init() here: timer_wait_running may look at the
	 * timer from another CPU, without it_lock (a cleared ->base there
	 * was a NULL dereference, a cleared node a wiped queue).
	 */
	if (WARN_ON_ONCE(ktimer_change_clock(timer, ktimer_clock_find(clockid))))
		return;
	ktimer_posix_timer_queue(timer, expires, absolute, sigev_none);
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_posix_timer_arm);

/**
 * ktimer_posix_timer_forward - k_clock::timer_forward
 * @timr: an interval timer that is not pending, ->it_lock held
 * @now: the current time of its clock
 *
 * Return: the number of intervals the expiry moved to pass @now.
 */
s64 ktimer_posix_timer_forward(struct k_itimer *timr, ktime_t now)
{
	return ktimer_overrun_add(0, forward_ktimer(ktimer_of(timr), now,
						    timr->it_interval));
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_posix_timer_forward);

/**
 * ktimer_posix_timer_rearm - k_clock::timer_rearm, as the signal is dequeued
 * @timr: an interval timer that is not pending, ->it_lock held
 *
 * Moves the expiry past now by whole intervals, counts them in
 * ->it_overrun and queues the timer again.
 */
void ktimer_posix_timer_rearm(struct k_itimer *timr)
{
	struct ktimer *timer = ktimer_of(timr);
	ktime_t now;

	get_expiry_ktimer(timer, &now);
	timr->it_overrun = ktimer_overrun_add(timr->it_overrun,
					      ktimer_posix_timer_forward(timr, now));
	start_ktimer(timer, NULL, KTIMER_RESTART | KTIMER_NOCHECK);
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_posix_timer_rearm);

/**
 * ktimer_posix_timer_remaining - k_clock::timer_remaining
 * @timr: the timer, ->it_lock held
 * @now: the current time of its clock
 *
 * Return: expiry minus @now; <= 0 once due.
 */
ktime_t ktimer_posix_timer_remaining(struct k_itimer *timr, ktime_t now)
{
	return ktime_sub(get_expiry_ktimer(ktimer_of(timr), NULL), now);
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_posix_timer_remaining);

/**
 * ktimer_posix_timer_try_to_cancel - k_clock::timer_try_to_cancel
 * @timr: the timer, ->it_lock held
 *
 * Return: as try_to_stop_ktimer(): -1 while its callback runs elsewhere.
 */
int ktimer_posix_timer_try_to_cancel(struct k_itimer *timr)
{
	return try_to_stop_ktimer(ktimer_of(timr));
}

/**
 * ktimer_posix_timer_wait_running - k_clock::timer_wait_running
 * @timr: the timer, ->it_lock not held, inside an RCU read section
 *
 * Waits (spinning, never sleeping) for a callback running on another CPU,
 * and changes nothing: another thread may re-arm the timer meanwhile, and
 * the caller retries its cancel (hrtimer_cancel_wait_running() likewise).
 */
void ktimer_posix_timer_wait_running(struct k_itimer *timr)
{
	ktimer_wait_callback(ktimer_of(timr));
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_posix_timer_wait_running);

/*
 * Timers on dynamic (PTP) clocks: clock_posix_dynamic_ktimer (posix-clock.c).
 * The timer holds a reference to the ktimer clock of the device it was
 * created on, and never looks at the clock id again: the descriptor it
 * was made from may be closed, or reused for another device.  When the
 * device goes away, pending timers expire without a signal, and
 * timer_settime() answers ENODEV.
 */
static struct ktimer_pclock *pclock_of(struct k_itimer *timr)
{
	return timr->it.kt.pclock;
}

static void ktimer_pclock_timer_fn(void *data)
{
	struct k_itimer *timr = data;

	/* The clock ended with its device: that is no expiry */
	if (!ktimer_pclock_gone(pclock_of(timr)))
		ktimer_posix_timer_fn(data);
}

/**
 * ktimer_pclock_timer_create - k_clock::timer_create of a dynamic clock
 * @timr: the new timer, with ->it_clock set
 *
 * Return: 0, -EINVAL if ->it_clock is not an open dynamic clock, -ENODEV
 * if its device is gone, -EOPNOTSUPP if the clock has no ktimer clock.
 */
int ktimer_pclock_timer_create(struct k_itimer *timr)
{
	struct ktimer *timer = ktimer_of(timr);
	struct ktimer_pclock *kp = posix_clock_ktimer_get(timr->it_clock);

	if (IS_ERR(kp))
		return PTR_ERR(kp);
	ktimer_init(timer, ktimer_pclock_clock(kp));
	timer->function = ktimer_pclock_timer_fn;
	timer->data = timr;
	timr->it.kt.pclock = kp;
	ktimer_user_count(KTIMER_USER_PCLOCK);
	return 0;
}

/**
 * ktimer_pclock_timer_get - k_clock::timer_get of a dynamic clock
 * @timr: the timer, ->it_lock held
 * @cur_setting: zeroed by the caller; receives the remaining time and the
 *		 interval
 *
 * What common_timer_get() reports, on the time of the timer's own clock
 * rather than through the clock id.  A timer whose device is gone reads
 * as disarmed.
 */
void ktimer_pclock_timer_get(struct k_itimer *timr,
			     struct itimerspec64 *cur_setting)
{
	bool sig_none = timr->it_sigev_notify == SIGEV_NONE;
	struct ktimer *timer = ktimer_of(timr);
	ktime_t now, remaining;
	u64 periods;

	if (ktimer_pclock_gone(pclock_of(timr)))
		return;
	if (timr->it_interval)
		cur_setting->it_interval = ktime_to_timespec64(timr->it_interval);
	else if (!timr->it_active)
		return;

	get_expiry_ktimer(timer, &now);
	if (timr->it_interval &&
	    (timr->it_requeue_pending & REQUEUE_PENDING || sig_none)) {
		periods = forward_ktimer(timer, now, timr->it_interval);
		timr->it_overrun = ktimer_overrun_add(timr->it_overrun, periods);
	}
	remaining = ktimer_posix_timer_remaining(timr, now);
	if (remaining > 0)
		cur_setting->it_value = ktime_to_timespec64(remaining);
	else if (!sig_none)
		cur_setting->it_value.tv_nsec = 1;	/* its signal is pending */
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_pclock_timer_get);

/**
 * ktimer_pclock_timer_set - k_clock::timer_set of a dynamic clock
 * @timr: the timer, ->it_lock held
 * @flags: 0 or %TIMER_ABSTIME
 * @new_setting: the new expiry and interval
 * @old_setting: NULL, or receives the previous setting
 *
 * Return: as common_timer_set(); -ENODEV once the device is gone.
 */
int ktimer_pclock_timer_set(struct k_itimer *timr, int flags,
			    struct itimerspec64 *new_setting,
			    struct itimerspec64 *old_setting)
{
	if (old_setting)
		ktimer_pclock_timer_get(timr, old_setting);
	if (ktimer_pclock_gone(pclock_of(timr)))
		return -ENODEV;
	return common_timer_set(timr, flags, new_setting, NULL);
}

/**
 * ktimer_pclock_timer_arm - k_clock::timer_arm of a dynamic clock
 * @timr: a timer that is not pending, ->it_lock held
 * @expires: the expiry on the device's time, absolute or relative to now
 * @absolute: @expires is absolute (TIMER_ABSTIME)
 * @sigev_none: SIGEV_NONE: keep the expiry, do not queue the timer
 */
void ktimer_pclock_timer_arm(struct k_itimer *timr, ktime_t expires,
			     bool absolute, bool sigev_none)
{
	ktimer_posix_timer_queue(ktimer_of(timr), expires, absolute, sigev_none);
}

/**
 * ktimer_pclock_timer_rearm - k_clock::timer_rearm of a dynamic clock
 * @timr: an interval timer that is not pending, ->it_lock held
 *
 * As ktimer_posix_timer_rearm(), unless the device is gone.
 */
void ktimer_pclock_timer_rearm(struct k_itimer *timr)
{
	if (!ktimer_pclock_gone(pclock_of(timr)))
		ktimer_posix_timer_rearm(timr);
}

/**
 * ktimer_pclock_timer_del - k_clock::timer_del of a dynamic clock
 * @timr: the timer, ->it_lock held
 *
 * Return: as common_timer_del(); on success the timer no longer holds its
 * clock.
 */
int ktimer_pclock_timer_del(struct k_itimer *timr)
{
	int ret = common_timer_del(timr);

	if (!ret) {
		ktimer_pclock_put(pclock_of(timr));
		timr->it.kt.pclock = NULL;
	}
	return ret;
}
