// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/ktimers: the per-CPU ktimer bases and their pending
 * timers, in the spirit of /proc/timer_list.  As there, the listing goes
 * to the console when there is no seq_file (the watchdog's report).
 */

#include <kunit/visibility.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/ktimer.h>
#include <linux/printk.h>
#include <linux/seq_file.h>

#include "ktimer_internal.h"

/* Enough to see what is going on without holding a base lock for long */
#define KTIMER_DEBUG_MAX_TIMERS	64

/*
 * kernel/time/timer_list.c's SEQ_printf(): to @m, or to the console.
 * Every call prints whole lines, so that the console gets no continuation.
 */
__printf(2, 3)
static void ktimer_print(struct seq_file *m, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	if (m)
		seq_vprintf(m, fmt, args);
	else
		vprintk(fmt, args);
	va_end(args);
}

static void ktimer_debug_base(struct seq_file *m, struct ktimer_base *base)
{
	struct ktimer_clock *clock;
	struct rb_node *node;
	unsigned int shown = 0;
	char next[40] = "";
	ktime_t now;

	raw_spin_lock_irq(&base->lock);
	clock = base->clock;
	if (!clock)
		goto unlock;

	now = ktimer_clock_now(clock);
	if (base->next_event != KTIME_MAX)
		snprintf(next, sizeof(next), ", next event %lld",
			 base->next_event);
	ktimer_print(m, "cpu %u clock %s (clockid %d): %u pending, now %lld%s\n",
		     base->cpu, clock->name, clock->clockid, base->count, now,
		     next);

	for (node = rb_first_cached(&base->queue); node; node = rb_next(node)) {
		struct ktimer *timer = rb_entry(node, struct ktimer, node);

		if (shown++ == KTIMER_DEBUG_MAX_TIMERS) {
			ktimer_print(m, "  ... %u more\n",
				     base->count - KTIMER_DEBUG_MAX_TIMERS);
			break;
		}
		ktimer_print(m, "  #%u: %ps expires %lld (in %lld ns) interval %lld overrun %u%s\n",
			     shown - 1, timer->function, timer->expires,
			     timer->expires - now, timer->interval,
			     timer->overrun,
			     base->running == timer ? " [running]" : "");
	}
unlock:
	raw_spin_unlock_irq(&base->lock);
}

/**
 * ktimer_debug_show - print every registered clock's bases and timers
 * @m: the seq_file to print to, or NULL for the console
 * @v: unused
 *
 * Return: 0.
 */
int ktimer_debug_show(struct seq_file *m, void *v)
{
	unsigned int cpu;
	int i;

	ktimer_print(m, "ktimers: %s-resolution engine, resolution %u ns\n",
		     ktimer_highres_enabled() ? "high" : "low",
		     ktimer_clock_resolution(NULL));
	/* proof that syscalls took the ktimer path (CONFIG_KTIMER_USERS) */
	ktimer_print(m,
		     "users: %s, nanosleep %lu, itimer %lu, posix_timer %lu, timerfd %lu, pclock %lu\n",
		     ktimer_serves(CLOCK_MONOTONIC) ? "on" : "off",
		     ktimer_user_calls_count(KTIMER_USER_NANOSLEEP),
		     ktimer_user_calls_count(KTIMER_USER_ITIMER),
		     ktimer_user_calls_count(KTIMER_USER_POSIX_TIMER),
		     ktimer_user_calls_count(KTIMER_USER_TIMERFD),
		     ktimer_user_calls_count(KTIMER_USER_PCLOCK));
	for_each_possible_cpu(cpu) {
		ktimer_print(m, "cpu %u%s\n", cpu,
			     cpu_online(cpu) ? "" : " (offline)");
		for (i = 0; i < KTIMER_MAX_CLOCKS; i++)
			ktimer_debug_base(m, ktimer_cpu_base(cpu, i));
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_debug_show);

DEFINE_SHOW_ATTRIBUTE(ktimer_debug);

static int __init ktimer_debugfs_init(void)
{
	debugfs_create_file("ktimers", 0444, NULL, NULL, &ktimer_debug_fops);
	return 0;
}
late_initcall(ktimer_debugfs_init);
