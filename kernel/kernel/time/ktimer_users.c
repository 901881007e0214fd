// SPDX-License-Identifier: GPL-2.0
/*
 * ktimers serving user space (CONFIG_KTIMER_USERS): the switch, the
 * counters, nanosleep and the conversions the user paths share (nanosleep,
 * itimers, POSIX timers and timerfd)
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
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/time64.h>
#include <kunit/visibility.h>

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "ktimer."

static bool ktimer_users_enabled = true;
module_param_named(users, ktimer_users_enabled, bool, 0444);
MODULE_PARM_DESC(users, "serve nanosleep, itimers, POSIX timers and timerfd on CLOCK_REALTIME and CLOCK_MONOTONIC (timerfd: and CLOCK_BOOTTIME), and timers on PTP clocks, with ktimers (default on)");

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
 * ktimer_serves_timerfd - does ktimers serve timerfds on this clock?
 * @clockid: the clock of timerfd_create()
 *
 * timerfd came after the 2005 posting.  Its timers on CLOCK_REALTIME,
 * CLOCK_MONOTONIC and CLOCK_BOOTTIME take the ktimer path with the other
 * user paths; CLOCK_BOOTTIME too, because event loops that must count
 * time in suspend arm their timerfds there.  The _ALARM clocks stay on
 * alarmtimers, which wake the system from suspend, as no ktimer can.
 *
 * Return: true for those three clocks unless the kernel was booted with
 * ktimer.users=0.
 */
bool ktimer_serves_timerfd(clockid_t clockid)
{
	return ktimer_serves(clockid) ||
	       (ktimer_users_enabled && clockid == CLOCK_BOOTTIME);
}
EXPORT_SYMBOL_GPL(ktimer_serves_timerfd);

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
 * ktimer_user_count - count one use of a user path
 * @kind: one of enum ktimer_user_kind
 *
 * Context: any context.
 */
void ktimer_user_count(enum ktimer_user_kind kind)
{
	if (!WARN_ON_ONCE(kind >= KTIMER_USER_KINDS))
		atomic_long_inc(&ktimer_user_calls[kind]);
}
EXPORT_SYMBOL_GPL(ktimer_user_count);

/**
 * ktimer_user_remaining - the remaining time of a pending timer, for user space
 * @rem: expiry minus now, in nanoseconds; <= 0 when the timer is due
 * @granularity: the unit user space reads the time in (%NSEC_PER_USEC for
 *		 getitimer(), whose struct timeval has microseconds), > 0
 *
 * Rounds @rem up to a multiple of @granularity, and a due timer up to one
 * unit: a pending timer never reads as zero, which would mean disarmed.
 * The seed's get_remtime_ktimer(timer, NSEC_PER_USEC) did the latter only,
 * so a timer with less than a microsecond left showed as disarmed.
 *
 * Context: any context.
 * Return: the time as a timespec64; KTIME_MAX (never rounded past it) for
 * a timer that never expires.
 */
struct timespec64 ktimer_user_remaining(ktime_t rem, u32 granularity)
{
	u64 units;

	if (WARN_ON_ONCE(!granularity))
		granularity = 1;
	if (rem <= 0)
		return ns_to_timespec64(granularity);
	units = div_u64((u64)rem + granularity - 1, granularity);
	if (units > div_u64(KTIME_MAX, granularity))
		return ns_to_timespec64(KTIME_MAX);
	return ns_to_timespec64((s64)(units * granularity));
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_user_remaining);

/**
 * ktimer_overrun_add - add forwarded periods to a POSIX timer's overrun
 * @overrun: the s64 overrun count of a k_itimer (-1 when none is pending)
 * @periods: periods a forward added, as forward_ktimer() returns them
 *
 * Saturates at S64_MAX instead of wrapping negative; the syscalls then
 * clamp to INT_MAX.  The 2005 posting added through a long, which loses
 * counts of 2^31 and more on 32-bit arches.
 *
 * Return: @overrun + @periods, at most S64_MAX.
 */
s64 ktimer_overrun_add(s64 overrun, u64 periods)
{
	s64 sum;

	if (periods > S64_MAX || check_add_overflow(overrun, (s64)periods, &sum))
		return S64_MAX;
	return sum;
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_overrun_add);

/**
 * ktimer_user_clockid - the clock a user sleep or timer runs on
 * @clockid: the clock user space named, %CLOCK_REALTIME or %CLOCK_MONOTONIC
 * @absolute: the time is absolute (TIMER_ABSTIME), not an interval
 *
 * POSIX: setting the clock does not move a relative %CLOCK_REALTIME sleep
 * or timer, so those run on %CLOCK_MONOTONIC, as hrtimers do it
 * (common_hrtimer_arm(), hrtimer_nanosleep()).  Absolute ones stay on
 * %CLOCK_REALTIME and follow clock_settime().
 *
 * Return: the clock id to queue the ktimer on.
 */
clockid_t ktimer_user_clockid(clockid_t clockid, bool absolute)
{
	return clockid == CLOCK_REALTIME && !absolute ? CLOCK_MONOTONIC : clockid;
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_user_clockid);

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
	struct ktimer_clock *clock;
	struct timespec64 ts = ktime_to_timespec64(rqtp);

	clock = ktimer_clock_find(ktimer_user_clockid(clockid, abs));
	if (WARN_ON_ONCE(!clock))
		return -EINVAL;
	ktimer_user_count(KTIMER_USER_NANOSLEEP);
	return ktimer_nanosleep(clock, &ts, abs ? KTIMER_ABS : KTIMER_REL);
}
