// SPDX-License-Identifier: GPL-2.0
/*
 * ktimers serving user space (CONFIG_KTIMER_USERS)
 *
 * The 2005 posting converted nanosleep, POSIX timers and itimers to
 * ktimers.  Here the conversion is opt-in: with CONFIG_KTIMER_USERS the
 * syscalls on CLOCK_REALTIME and CLOCK_MONOTONIC take the ktimer path
 * unless the kernel is booted with ktimer.users=0, so one image runs
 * either path and the two can be compared.  Every other clock keeps its
 * hrtimer implementation.
 *
 * Each path counts its uses, so that a test (or /sys/kernel/debug/ktimers)
 * can tell that a syscall really went through ktimers.
 */

#include <linux/atomic.h>
#include <linux/ktimer.h>
#include <linux/moduleparam.h>
#include <linux/time64.h>

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "ktimer."

static bool ktimer_users_enabled = true;
module_param_named(users, ktimer_users_enabled, bool, 0444);
MODULE_PARM_DESC(users, "serve nanosleep on CLOCK_REALTIME and CLOCK_MONOTONIC with ktimers (default on)");

static atomic_long_t ktimer_user_calls[KTIMER_USER_KINDS];

/**
 * ktimer_users_on - was the kernel booted with the ktimer user paths on?
 *
 * Return: false after ktimer.users=0 on the command line, else true.
 */
bool ktimer_users_on(void)
{
	return ktimer_users_enabled;
}
EXPORT_SYMBOL_GPL(ktimer_users_on);

/**
 * ktimer_serves - does ktimers serve user timers on this clock?
 * @clockid: the POSIX clock of a syscall
 *
 * Return: true for CLOCK_REALTIME and CLOCK_MONOTONIC unless the kernel was
 * booted with ktimer.users=0.
 */
bool ktimer_serves(clockid_t clockid)
{
	return ktimer_users_enabled &&
	       (clockid == CLOCK_REALTIME || clockid == CLOCK_MONOTONIC);
}
EXPORT_SYMBOL_GPL(ktimer_serves);

/**
 * ktimer_user_calls_count - how often a user path went through ktimers
 * @kind: one of enum ktimer_user_kind
 *
 * Return: the number of calls since boot.
 */
unsigned long ktimer_user_calls_count(enum ktimer_user_kind kind)
{
	if (kind >= KTIMER_USER_KINDS)
		return 0;
	return atomic_long_read(&ktimer_user_calls[kind]);
}
EXPORT_SYMBOL_GPL(ktimer_user_calls_count);

/**
 * ktimer_user_nanosleep - hrtimer_nanosleep() served by ktimers
 * @rqtp: the time to sleep, or to sleep until
 * @abs: @rqtp is an absolute time (%HRTIMER_MODE_ABS), not a duration
 * @clockid: %CLOCK_REALTIME or %CLOCK_MONOTONIC (see ktimer_serves())
 *
 * The nanosleep() and clock_nanosleep() syscalls arrive here through
 * hrtimer_nanosleep(), with current->restart_block set up for the copy-out
 * of the remaining time, as hrtimer_nanosleep() expects it.
 *
 * Context: process context; sleeps.
 * Return: as ktimer_nanosleep().
 */
long ktimer_user_nanosleep(ktime_t rqtp, bool abs, clockid_t clockid)
{
	struct ktimer_clock *clock = ktimer_clock_find(clockid);
	struct timespec64 ts = ktime_to_timespec64(rqtp);

	if (WARN_ON_ONCE(!clock))
		return -EINVAL;
	atomic_long_inc(&ktimer_user_calls[KTIMER_USER_NANOSLEEP]);
	return ktimer_nanosleep(clock, &ts, abs ? KTIMER_ABS : KTIMER_REL);
}
