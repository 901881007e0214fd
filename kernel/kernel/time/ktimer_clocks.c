// SPDX-License-Identifier: GPL-2.0
/*
 * CLOCK_BOOTTIME and CLOCK_TAI for ktimers.
 *
 * Also the worked example of adding a clock base: a struct ktimer_clock
 * and one ktimer_register_clock() call.  Nothing in ktimer.c knows about
 * these clocks.
 */

#include <linux/init.h>
#include <linux/ktimer.h>
#include <linux/printk.h>
#include <linux/timekeeping.h>

struct ktimer_clock ktimer_clock_boottime = {
	.name		= "boottime",
	.clockid	= CLOCK_BOOTTIME,
	.get_time	= ktime_get_boottime,
};
EXPORT_SYMBOL_GPL(ktimer_clock_boottime);

struct ktimer_clock ktimer_clock_tai = {
	.name		= "tai",
	.clockid	= CLOCK_TAI,
	.get_time	= ktime_get_clocktai,
};
EXPORT_SYMBOL_GPL(ktimer_clock_tai);

/**
 * init_ktimer_boottime - initialise a timer on CLOCK_BOOTTIME
 * @timer: the timer
 *
 * Context: any context.
 */
void init_ktimer_boottime(struct ktimer *timer)
{
	ktimer_init(timer, &ktimer_clock_boottime);
}
EXPORT_SYMBOL_GPL(init_ktimer_boottime);

/**
 * init_ktimer_tai - initialise a timer on CLOCK_TAI
 * @timer: the timer
 *
 * Context: any context.
 */
void init_ktimer_tai(struct ktimer *timer)
{
	ktimer_init(timer, &ktimer_clock_tai);
}
EXPORT_SYMBOL_GPL(init_ktimer_tai);

/* After ktimers_init(), an early_initcall, and before any user */
static int __init ktimer_clocks_init(void)
{
	int ret = ktimer_register_clock(&ktimer_clock_boottime);

	if (!ret)
		ret = ktimer_register_clock(&ktimer_clock_tai);
	if (ret)
		pr_err("ktimers: cannot register boottime/tai: %d\n", ret);
	return ret;
}
core_initcall(ktimer_clocks_init);
