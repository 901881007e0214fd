// SPDX-License-Identifier: GPL-2.0
/*
 * The ktimer watchdog (ktimer.watchdog=<seconds>): when a timer stays
 * queued that long past its expiry, print every CPU's bases and the
 * blocked tasks to the console, once per stall, as SysRq-Q and SysRq-W
 * would.  A wake-up event that was never programmed, or an expiry run that
 * never came, leaves a timer queued and overdue; the hung-task detector
 * then sees only the task that waits, this sees the queue it waits on.
 *
 * The scan runs from a delayed work, which the timer wheel drives, so it
 * goes on when the ktimer events of a CPU are lost.
 */

#include <kunit/visibility.h>
#include <linux/cpumask.h>
#include <linux/init.h>
#include <linux/ktimer.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>
#include <linux/sched/debug.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "ktimer_internal.h"

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "ktimer."

static unsigned int ktimer_watchdog_secs;
module_param_named(watchdog, ktimer_watchdog_secs, uint, 0444);
MODULE_PARM_DESC(watchdog, "seconds overdue that make a ktimer a stall to report (0: off)");

/* How late the first timer of @base is, if its clock is @only's */
static void ktimer_base_overdue(struct ktimer_base *base,
				const struct ktimer_clock *only,
				struct ktimer_overdue *worst)
{
	struct ktimer_clock *clock;
	struct rb_node *node;
	struct ktimer *first;
	unsigned long flags;
	s64 late;

	raw_spin_lock_irqsave(&base->lock, flags);
	clock = base->clock;
	node = rb_first_cached(&base->queue);
	if (!clock || !node || (only ? clock != only :
				clock->flags & KTIMER_CLOCK_MANUAL))
		goto unlock;
	first = rb_entry(node, struct ktimer, node);
	late = ktimer_clock_now(clock) - first->expires;
	if (late > worst->late) {
		worst->late = late;
		worst->cpu = base->cpu;
		worst->function = first->function;
		strscpy(worst->clock, clock->name, sizeof(worst->clock));
	}
unlock:
	raw_spin_unlock_irqrestore(&base->lock, flags);
}

/**
 * ktimer_overdue - find the timer that is the most overdue
 * @only: a registered clock to look at, or NULL for every clock that the
 *	  softirq runs (not the %KTIMER_CLOCK_MANUAL ones)
 * @worst: filled with that timer's lateness, CPU, clock and function
 *
 * Looks at the first timer of each CPU's queue.  A timer is overdue while
 * it is queued after its expiry: for the time between the wake-up and its
 * expiry run, and for ever if its event is lost.
 *
 * Context: any context; takes each base's lock in turn.
 * Return: @worst->late: how long, in ns, that timer is overdue; 0 if no
 * timer is.
 */
s64 ktimer_overdue(const struct ktimer_clock *only,
		   struct ktimer_overdue *worst)
{
	unsigned int cpu;
	int i;

	memset(worst, 0, sizeof(*worst));
	for_each_possible_cpu(cpu) {
		for (i = 0; i < KTIMER_MAX_CLOCKS; i++)
			ktimer_base_overdue(ktimer_cpu_base(cpu, i), only, worst);
	}
	return worst->late;
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_overdue);

/**
 * ktimer_watchdog_report - should this scan print a stall?
 * @state: the watchdog's state, kept from scan to scan
 * @late: how long the most overdue timer is overdue, from ktimer_overdue()
 * @limit: the lateness that makes a stall, > 0
 *
 * A stall is a timer more than @limit overdue at two scans in a row, so
 * that a step of CLOCK_REALTIME, which leaves its timers overdue until
 * clock_was_set() has the CPUs run them, is not one.  Each stall is
 * printed once; the next one after a scan without a stall.
 *
 * Return: true if the caller prints the stall now.
 */
bool ktimer_watchdog_report(struct ktimer_watchdog_state *state, s64 late,
			    s64 limit)
{
	bool overdue = late > limit;
	bool report = overdue && state->overdue && !state->reported;

	state->overdue = overdue;
	state->reported = overdue && (state->reported || report);
	return report;
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_watchdog_report);

static struct ktimer_watchdog_state ktimer_watchdog_state;

static void ktimer_watchdog_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(ktimer_watchdog_work, ktimer_watchdog_fn);

static void ktimer_watchdog_fn(struct work_struct *work)
{
	s64 limit = (s64)ktimer_watchdog_secs * NSEC_PER_SEC;
	struct ktimer_overdue worst;
	s64 late = ktimer_overdue(NULL, &worst);

	if (ktimer_watchdog_report(&ktimer_watchdog_state, late, limit)) {
		pr_warn("ktimer: watchdog: %ps on CPU %u (clock %s) is %lld ms overdue\n",
			worst.function, worst.cpu, worst.clock,
			div_s64(late, NSEC_PER_MSEC));
		ktimer_debug_show(NULL, NULL);
		show_state_filter(TASK_UNINTERRUPTIBLE);
		pr_warn("---[ end ktimer watchdog report ]---\n");
	}
	queue_delayed_work(system_unbound_wq, &ktimer_watchdog_work, HZ);
}

static int __init ktimer_watchdog_init(void)
{
	if (ktimer_watchdog_secs)
		queue_delayed_work(system_unbound_wq, &ktimer_watchdog_work, HZ);
	return 0;
}
late_initcall(ktimer_watchdog_init);
