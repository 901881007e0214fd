// SPDX-License-Identifier: GPL-2.0
/*
 * ITIMER_REAL served by ktimers (CONFIG_KTIMER_USERS)
 *
 * The 2005 posting turned signal_struct's real_timer into a ktimer whose
 * callback sends SIGALRM.  Here the ktimer sits beside 6.12's hrtimer,
 * and itimer.c takes this path while ktimer_users_on().  As in 6.12 (not
 * as in 2005), an interval timer is re-armed when its SIGALRM is dequeued,
 * not from the callback: a tiny interval then cannot flood the CPU with
 * expiries that only pile up on one pending signal.
 *
 * sighand->siglock serialises the syscalls and the re-arm; the callback
 * takes it too (to send the signal), so it is never held while waiting for
 * the callback.
 */

#include <linux/ktimer.h>
#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/time64.h>
#include <kunit/visibility.h>

#include <trace/events/timer.h>

static void ktimer_it_real_fn(void *data)
{
	struct signal_struct *sig = data;
	struct pid *leader_pid = sig->pids[PIDTYPE_TGID];

	trace_itimer_expire(ITIMER_REAL, leader_pid, 0);
	kill_pid_info(SIGALRM, SEND_SIG_PRIV, leader_pid);
}

/**
 * ktimer_itimer_init - set up the ITIMER_REAL ktimer of a new process
 * @sig: the signal_struct copy_signal() is filling in
 *
 * Context: process context.
 */
void ktimer_itimer_init(struct signal_struct *sig)
{
	ktimer_init(&sig->real_ktimer, &ktimer_clock_monotonic);
	sig->real_ktimer.function = ktimer_it_real_fn;
	sig->real_ktimer.data = sig;
}

/**
 * ktimer_itimer_exit - stop the ITIMER_REAL ktimer of a dying process
 * @sig: the signal_struct of the last exiting thread
 *
 * Context: process context, no locks held (waits for a running callback).
 */
void ktimer_itimer_exit(struct signal_struct *sig)
{
	stop_ktimer(&sig->real_ktimer);
}

/**
 * ktimer_itimer_remaining - what getitimer(ITIMER_REAL) reports as it_value
 * @sig: the process's signal_struct
 *
 * The seed's get_remtime_ktimer(timer, NSEC_PER_USEC), rounded up to whole
 * microseconds by ktimer_user_remaining(), so that an armed timer never
 * reads as disarmed.
 *
 * Context: sighand->siglock held.
 * Return: the time left, 0 for a disarmed timer.
 */
struct timespec64 ktimer_itimer_remaining(struct signal_struct *sig)
{
	ktime_t rem = get_remtime_ktimer(&sig->real_ktimer, NSEC_PER_USEC);

	if (!rem)
		return (struct timespec64){};
	return ktimer_user_remaining(rem, NSEC_PER_USEC);
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_itimer_remaining);

/**
 * ktimer_setitimer - setitimer(ITIMER_REAL) and alarm() on ktimers
 * @tsk: current
 * @value: the new value and interval (validated by the caller)
 * @ovalue: if not NULL, receives the old ones
 *
 * Context: process context, no locks held.
 */
void ktimer_setitimer(struct task_struct *tsk,
		      const struct itimerspec64 *value,
		      struct itimerspec64 *ovalue)
{
	struct signal_struct *sig = tsk->signal;
	struct ktimer *timer = &sig->real_ktimer;
	/* only exec and exit replace ->sighand, and @tsk is current */
	spinlock_t *siglock = &rcu_dereference_protected(tsk->sighand,
							  tsk == current)->siglock;
	ktime_t expires;

	ktimer_user_count(KTIMER_USER_ITIMER);
	for (;;) {
		spin_lock_irq(siglock);
		if (ovalue) {
			ovalue->it_value = ktimer_itimer_remaining(sig);
			ovalue->it_interval = ktime_to_timespec64(sig->it_real_incr);
		}
		if (try_to_stop_ktimer(timer) >= 0)
			break;
		/* The callback runs elsewhere and needs the siglock */
		spin_unlock_irq(siglock);
		stop_ktimer(timer);
	}

	expires = timespec64_to_ktime(value->it_value);
	if (expires) {
		sig->it_real_incr = timespec64_to_ktime(value->it_interval);
		start_ktimer(timer, &expires, KTIMER_REL | KTIMER_NOCHECK);
	} else {
		sig->it_real_incr = 0;
	}
	trace_itimer_state(ITIMER_REAL, value, 0);
	spin_unlock_irq(siglock);
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_setitimer);

/**
 * ktimer_itimer_rearm - re-arm an interval ITIMER_REAL as its SIGALRM is dequeued
 * @sig: the signal_struct of the dequeuing task
 *
 * Moves the expiry past now by whole intervals (%KTIMER_FORWARD), so the
 * timer keeps its phase and expiries missed while the signal was pending
 * are dropped, as hrtimer_forward() does for the hrtimer path.
 *
 * Context: sighand->siglock held.
 */
void ktimer_itimer_rearm(struct signal_struct *sig)
{
	struct ktimer *timer = &sig->real_ktimer;

	if (!ktimer_active(timer) && sig->it_real_incr > 0)
		start_ktimer(timer, &sig->it_real_incr, KTIMER_FORWARD);
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_itimer_rearm);
