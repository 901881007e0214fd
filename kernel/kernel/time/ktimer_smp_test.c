// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for ktimers on several CPUs at once: a stress case with
 * concurrent start, modify and stop from every CPU on self-rearming
 * timers, and pending real timers surviving their CPU going offline.
 *
 * Pass or fail never depends on timing.  The stress case checks a
 * conservation law that holds whatever the interleaving: every successful
 * arming of a timer ends in exactly one expiry or one cancellation.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/ktimer.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "ktimer_test.h"

#define STRESS_TIMERS		16
#define STRESS_REARMS		64
#define WAIT_LIMIT		(60 * HZ)
/* KUnit ends a case after 300 s; stay below that even for a long soak */
#define STRESS_WAIT_LIMIT	(280 * HZ)

/* `make soak` raises this on the kernel command line */
static unsigned long stress_ops = 4000;
module_param(stress_ops, ulong, 0444);
MODULE_PARM_DESC(stress_ops, "operations per CPU in the stress case (default 4000)");

/* A clock of its own, so that its queues can be checked empty at the end */
static struct ktimer_clock stress_clock = {
	.name		= "kunit-stress",
	.clockid	= CLOCK_MONOTONIC,
	.get_time	= ktime_get,
};

struct stress_ctx;

struct stress_timer {
	struct ktimer	timer;
	struct stress_ctx *ctx;
	atomic_t	arms;		/* successful start/modify */
	atomic_t	cancels;	/* pending expiries removed */
	atomic_t	fires;
	atomic_t	rearms_left;
};

struct stress_ctx {
	struct stress_timer	timers[STRESS_TIMERS];
	atomic_t		quiesce;
	atomic_t		running_workers;
	struct completion	workers_done;
};

/* Short random expiries, so that timers fire while others act on them */
static ktime_t stress_delay(u32 *seed)
{
	*seed = *seed * 1103515245 + 12345;
	return 1000 + (*seed >> 8) % (200 * NSEC_PER_USEC);
}

static void stress_callback(void *data)
{
	struct stress_timer *st = data;
	u32 seed = (u32)(unsigned long)st ^ atomic_inc_return(&st->fires);
	ktime_t rel = stress_delay(&seed);

	if (atomic_read(&st->ctx->quiesce) ||
	    atomic_dec_if_positive(&st->rearms_left) < 0)
		return;
	if (start_ktimer(&st->timer, &rel, KTIMER_REL) == 0)
		atomic_inc(&st->arms);
}

/* Account for the outcome of a start or modify */
static void stress_account_arm(struct stress_timer *st, int ret)
{
	if (ret == 0 || ret == 1)
		atomic_inc(&st->arms);
	if (ret == 1)
		atomic_inc(&st->cancels);
}

struct stress_worker {
	struct stress_ctx	*ctx;
	unsigned int		cpu;
};

static int stress_worker_fn(void *data)
{
	struct stress_worker *w = data;
	struct stress_ctx *ctx = w->ctx;
	u32 seed = 0x9e3779b9 * (w->cpu + 1);
	unsigned long op;

	for (op = 0; op < stress_ops; op++) {
		struct stress_timer *st;
		ktime_t rel;
		int ret;

		seed = seed * 1103515245 + 12345;
		st = &ctx->timers[(seed >> 8) % STRESS_TIMERS];
		rel = stress_delay(&seed);
		switch ((seed >> 20) % 5) {
		case 0:
			stress_account_arm(st, start_ktimer(&st->timer, &rel,
							    KTIMER_REL));
			break;
		case 1:
			stress_account_arm(st, modify_ktimer(&st->timer, &rel,
							     KTIMER_REL));
			break;
		case 2:
			stress_account_arm(st, modify_ktimer(&st->timer, &rel,
							     KTIMER_FORWARD));
			break;
		case 3:
			ret = try_to_stop_ktimer(&st->timer);
			if (ret == 1)
				atomic_inc(&st->cancels);
			break;
		case 4:
			if (stop_ktimer(&st->timer) == 1)
				atomic_inc(&st->cancels);
			break;
		}
		if (op % 64 == 63)
			cond_resched();
	}
	/* returns at once; the test holds a reference for kthread_stop() */
	if (atomic_dec_and_test(&ctx->running_workers))
		complete(&ctx->workers_done);
	return 0;
}

static void ktimer_smp_stress_test(struct kunit *test)
{
	struct stress_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	struct stress_worker *workers;
	struct task_struct **tasks;
	unsigned int cpu, n = 0, i;
	long arms_sum = 0, cancels_sum = 0, fires_sum = 0, lost = 0, dups = 0;

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	workers = kunit_kcalloc(test, nr_cpu_ids, sizeof(*workers), GFP_KERNEL);
	tasks = kunit_kcalloc(test, nr_cpu_ids, sizeof(*tasks), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, workers);
	KUNIT_ASSERT_NOT_NULL(test, tasks);
	KUNIT_ASSERT_EQ(test, ktimer_register_clock(&stress_clock), 0);

	for (i = 0; i < STRESS_TIMERS; i++) {
		struct stress_timer *st = &ctx->timers[i];

		ktimer_init(&st->timer, &stress_clock);
		st->ctx = ctx;
		st->timer.function = stress_callback;
		st->timer.data = st;
		/* a longer run lets the timers re-arm themselves longer too */
		atomic_set(&st->rearms_left,
			   max_t(unsigned long, STRESS_REARMS, stress_ops / 64));
	}
	init_completion(&ctx->workers_done);

	cpus_read_lock();
	/* one extra reference, dropped once every worker has started */
	atomic_set(&ctx->running_workers, 1);
	for_each_online_cpu(cpu) {
		workers[n].ctx = ctx;
		workers[n].cpu = cpu;
		tasks[n] = kthread_create_on_cpu(stress_worker_fn, &workers[n],
						 cpu, "ktimer-stress/%u");
		if (IS_ERR(tasks[n]))
			break;
		get_task_struct(tasks[n]);
		atomic_inc(&ctx->running_workers);
		wake_up_process(tasks[n]);
		n++;
	}
	cpus_read_unlock();
	if (atomic_dec_and_test(&ctx->running_workers))
		complete(&ctx->workers_done);
	KUNIT_EXPECT_EQ(test, n, num_online_cpus());

	if (!wait_for_completion_timeout(&ctx->workers_done, STRESS_WAIT_LIMIT))
		KUNIT_FAIL(test, "workers did not finish");
	for (i = 0; i < n; i++) {
		kthread_stop(tasks[i]);
		put_task_struct(tasks[i]);
	}

	/* No new arming from here on; then take every timer down */
	atomic_set(&ctx->quiesce, 1);
	for (i = 0; i < STRESS_TIMERS; i++) {
		struct stress_timer *st = &ctx->timers[i];

		if (stop_ktimer(&st->timer) == 1)
			atomic_inc(&st->cancels);
	}

	for (i = 0; i < STRESS_TIMERS; i++) {
		struct stress_timer *st = &ctx->timers[i];
		int arms = atomic_read(&st->arms);
		int cancels = atomic_read(&st->cancels);
		int fires = atomic_read(&st->fires);

		KUNIT_EXPECT_EQ_MSG(test, fires, arms - cancels,
				    "timer %u: %d armed, %d cancelled", i,
				    arms, cancels);
		KUNIT_EXPECT_FALSE(test, ktimer_active(&st->timer));
		arms_sum += arms;
		cancels_sum += cancels;
		fires_sum += fires;
		lost += max(0, arms - cancels - fires);
		dups += max(0, fires - (arms - cancels));
	}
	kunit_info(test, "figures: cpus=%u ops=%lu arms=%ld expiries=%ld cancels=%ld lost=%ld duplicated=%ld",
		   n, n * stress_ops, arms_sum, fires_sum, cancels_sum, lost,
		   dups);
	KUNIT_EXPECT_GT(test, fires_sum, 0);
	KUNIT_EXPECT_EQ(test, ktimer_clock_pending(&stress_clock), 0);
	/* refuses while anything is queued: a last proof the queues are empty */
	KUNIT_EXPECT_EQ(test, ktimer_unregister_clock(&stress_clock), 0);
}

static void stop_timer_action(void *timer)
{
	stop_ktimer(timer);
}

/* Real timers pending on a CPU that goes offline fire elsewhere */
struct hotplug_timer {
	struct ktimer		timer;
	struct completion	done;
	int			cpu;
	ktime_t			seen;
};

static void hotplug_callback(void *data)
{
	struct hotplug_timer *ht = data;

	ht->cpu = raw_smp_processor_id();
	ht->seen = ktime_get();
	complete(&ht->done);
}

static void ktimer_hotplug_real_timers_test(struct kunit *test)
{
	struct hotplug_timer *ht = kunit_kcalloc(test, 2, sizeof(*ht), GFP_KERNEL);
	unsigned int victim = nr_cpu_ids, cpu;
	ktime_t rel[2] = { 50 * NSEC_PER_MSEC, 100 * NSEC_PER_MSEC };
	int i, ret;

	KUNIT_ASSERT_NOT_NULL(test, ht);
	for_each_online_cpu(cpu) {
		if (cpu != 0 && cpu_is_hotpluggable(cpu)) {
			victim = cpu;
			break;
		}
	}
	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU) || victim >= nr_cpu_ids)
		kunit_skip(test, "needs a second CPU that can go offline");

	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(victim)), 0);
	for (i = 0; i < 2; i++) {
		init_ktimer_mono(&ht[i].timer);
		/* never leave a queued timer in memory the case frees */
		ret = kunit_add_action_or_reset(test, stop_timer_action,
						&ht[i].timer);
		KUNIT_ASSERT_EQ(test, ret, 0);
		ht[i].timer.function = hotplug_callback;
		ht[i].timer.data = &ht[i];
		init_completion(&ht[i].done);
		KUNIT_ASSERT_EQ(test, start_ktimer(&ht[i].timer, &rel[i],
						   KTIMER_REL), 0);
	}
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(0)), 0);
	KUNIT_ASSERT_EQ(test, remove_cpu(victim), 0);

	for (i = 0; i < 2; i++) {
		if (!wait_for_completion_timeout(&ht[i].done, WAIT_LIMIT)) {
			stop_ktimer(&ht[i].timer);
			KUNIT_FAIL(test, "timer %d was lost with its CPU", i);
			continue;
		}
		KUNIT_EXPECT_NE(test, ht[i].cpu, (int)victim);
		KUNIT_EXPECT_GE(test, ht[i].seen, ht[i].timer.expires);
	}
	KUNIT_EXPECT_LE(test, ht[0].timer.expires, ht[1].timer.expires);
	KUNIT_EXPECT_EQ(test, add_cpu(victim), 0);
}

/* A timer goes to the base of the CPU that starts it, not the one it began on */
static void ktimer_runs_on_starting_cpu_test(struct kunit *test)
{
	struct hotplug_timer *ht = kunit_kzalloc(test, sizeof(*ht), GFP_KERNEL);
	unsigned int first = raw_smp_processor_id(), second;
	ktime_t rel = NSEC_PER_MSEC;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, ht);
	second = cpumask_any_but(cpu_online_mask, first);
	if (second >= nr_cpu_ids)
		kunit_skip(test, "needs two online CPUs");

	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(first)), 0);
	init_ktimer_mono(&ht->timer);
	ret = kunit_add_action_or_reset(test, stop_timer_action, &ht->timer);
	KUNIT_ASSERT_EQ(test, ret, 0);
	ht->timer.function = hotplug_callback;
	ht->timer.data = ht;
	init_completion(&ht->done);

	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(second)), 0);
	KUNIT_ASSERT_EQ(test, start_ktimer(&ht->timer, &rel, KTIMER_REL), 0);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&ht->done, WAIT_LIMIT));
	KUNIT_EXPECT_EQ(test, ht->cpu, (int)second);
}

static void period_noop(void *data)
{
}

/* Ends and restores @data's period as fast as it can, as callbacks may */
static int period_flipper_fn(void *data)
{
	struct ktimer *timer = data;

	while (!kthread_should_stop()) {
		WRITE_ONCE(timer->interval, 0);
		WRITE_ONCE(timer->interval, NSEC_PER_SEC);
	}
	return 0;
}

/*
 * modify_ktimer(KTIMER_REARM) while another CPU ends and restores the
 * timer's period: the period is read once, under the base lock, so the
 * one divided by is the one checked.  A second read there divided by zero.
 * The refusals warn (a caller error, once), inside the markers.
 */
static void ktimer_rearm_period_race_test(struct kunit *test)
{
	struct ktimer *timer = kunit_kzalloc(test, sizeof(*timer), GFP_KERNEL);
	struct task_struct *flipper;
	unsigned int other, i, refused = 0;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, timer);
	other = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
	if (other >= nr_cpu_ids)
		kunit_skip(test, "needs a second CPU");
	ktimer_init(timer, &ktimer_clock_monotonic);
	timer->function = period_noop;
	timer->interval = NSEC_PER_SEC;
	flipper = kthread_create_on_cpu(period_flipper_fn, timer, other,
					"ktimer-flip/%u");
	KUNIT_ASSERT_FALSE(test, IS_ERR(flipper));
	get_task_struct(flipper);
	wake_up_process(flipper);
	expect_warning_begin(test);
	for (i = 0; i < 100000; i++) {
		/* in the past: the re-arm has to divide by the period */
		ktimer_set_expires(timer, 0);
		ret = modify_ktimer(timer, NULL, KTIMER_REARM);
		if (ret == -EINVAL)
			refused++;
		else
			KUNIT_EXPECT_GE(test, ret, 0);
		stop_ktimer(timer);
	}
	expect_warning_end(test);
	kthread_stop(flipper);
	put_task_struct(flipper);
	kunit_info(test, "figures: rearms=%u refused=%u", i, refused);
}

static struct kunit_case ktimer_smp_cases[] = {
	KUNIT_CASE_SLOW(ktimer_runs_on_starting_cpu_test),
	KUNIT_CASE_SLOW(ktimer_smp_stress_test),
	KUNIT_CASE_SLOW(ktimer_rearm_period_race_test),
	KUNIT_CASE_SLOW(ktimer_hotplug_real_timers_test),
	{}
};

static struct kunit_suite ktimer_smp_suite = {
	.name = "ktimer_smp",
	.test_cases = ktimer_smp_cases,
};

kunit_test_suites(&ktimer_smp_suite);

MODULE_DESCRIPTION("KUnit SMP and CPU hotplug tests for ktimers");
MODULE_LICENSE("GPL");
