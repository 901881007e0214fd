/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the ktimer KUnit suites; not an API.
 */
#ifndef _KERNEL_TIME_KTIMER_TEST_H
#define _KERNEL_TIME_KTIMER_TEST_H

#include <kunit/test.h>
#include <linux/ktimer.h>
#include <linux/printk.h>

/*
 * A call that is meant to warn is bracketed by these lines, so that the
 * harness reading the kernel log can tell its warning from a real one.
 */
static inline void expect_warning_begin(struct kunit *test)
{
	pr_info("ktimer-test: expect-warning-begin %s\n", test->name);
}

static inline void expect_warning_end(struct kunit *test)
{
	pr_info("ktimer-test: expect-warning-end %s\n", test->name);
}

/*
 * DEFINE_FAKE_CLOCK(name, res) defines a clock that reads the variable
 * name_now, counts its reads in name_reads, and whose timers expire only
 * when the test calls ktimer_run_clock(&name): the test owns time and
 * expiry.
 */
#define DEFINE_FAKE_CLOCK(_name, _res)					\
static ktime_t _name##_now;						\
static unsigned int _name##_reads;					\
static ktime_t _name##_get_time(void)					\
{									\
	WRITE_ONCE(_name##_reads, READ_ONCE(_name##_reads) + 1);	\
	return READ_ONCE(_name##_now);					\
}									\
static struct ktimer_clock _name = {					\
	.name		= #_name,					\
	.clockid	= CLOCK_MONOTONIC,				\
	.get_time	= _name##_get_time,				\
	.resolution	= (_res),					\
	.flags		= KTIMER_CLOCK_MANUAL,				\
}

#endif /* _KERNEL_TIME_KTIMER_TEST_H */
