// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in for kernel/time/ktimer.c: the mutant tests (tools/tests/test_mutants*.py)
 * apply the catalogue next to this file to it, in a throw-away git repository.
 */

u64 ktimer_forward(struct ktimer *timer, ktime_t now)
{
	u64 overrun = 0;

	if (now < timer->expires)
		return 0;
	overrun = (now - timer->expires) / timer->interval + 1;
	timer->expires += overrun * timer->interval;
	return overrun;
}

int ktimer_rearm(struct ktimer *timer)
{
	if (!timer->interval)
		return 0;
	timer->expired = 0;
	return 1;
}
