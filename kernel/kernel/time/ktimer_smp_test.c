// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for ktimers on several CPUs at once: a stress case with
 * concurrent start, modify and stop from every CPU on self-rearming
 * timers, and pending real timers surviving their CPU going offline.
 *
 * The stress case checks a conservation law that holds whatever the
 * interleaving: every successful arming of a timer ends in exactly one
 * expiry or one cancellation; and that the interleaving was concurrent:
 * calls on two CPUs overlapped, and callbacks ran on more than one CPU.
 * Timing decides nothing, except through margins of seconds: CPU removal,
 * slow under emulation, has five seconds before the timers on that CPU
 * fall due, and the waits of a case share one deadline.
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
/* All the waits of one case together, in jiffies */
#define WAIT_LIMIT		(60 * HZ)
/* KUnit ends a case after 300 s; stay below that even for a long soak */
#define STRESS_WAIT_LIMIT	(280 * HZ)
/* A worker past its operations goes on this long for an overlap */
#define STRESS_OVERLAP_NS	(30LL * NSEC_PER_SEC)

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
	atomic_long_t		ops;		/* calls made, extra ones included */
	struct cpumask		in_call;	/* CPUs in a ktimer call now */
	atomic_t		overlaps;	/* calls begun while another CPU was in one */
	struct cpumask		fired_on;	/* CPUs that ran a callback */
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

	cpumask_set_cpu(raw_smp_processor_id(), &st->ctx->fired_on);
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

/*
 * Mark this CPU as in a ktimer call, and count the call as an overlap if
 * another CPU is in one too.  The CPU is the one the worker runs on, not
 * the one it was meant for: two workers sharing a CPU share a bit and
 * never overlap.
 */
static void stress_call_begin(struct stress_ctx *ctx, unsigned int cpu)
{
	cpumask_set_cpu(cpu, &ctx->in_call);
	/*
	 * Orders the set before the read; pairs with the same barrier on
	 * the other CPU: of two CPUs entering at once, one sees the other.
	 */
	smp_mb__after_atomic();
	if (cpumask_weight(&ctx->in_call) > 1)
		atomic_inc(&ctx->overlaps);
}

static int stress_worker_fn(void *data)
{
	struct stress_worker *w = data;
	struct stress_ctx *ctx = w->ctx;
	u32 seed = 0x9e3779b9 * (w->cpu + 1);
	ktime_t until = ktime_get() + STRESS_OVERLAP_NS;
	unsigned long op;

	/*
	 * Until the calls of two CPUs have overlapped, go on past stress_ops
	 * for a while: a vCPU stalled while the other did all its work would
	 * otherwise leave nothing concurrent.
	 */
	for (op = 0; op < stress_ops || (!atomic_read(&ctx->overlaps) &&
					 ktime_get() < until); op++) {
		unsigned int cpu = raw_smp_processor_id();
		struct stress_timer *st;
		ktime_t rel;
		int ret;

		seed = seed * 1103515245 + 12345;
		st = &ctx->timers[(seed >> 8) % STRESS_TIMERS];
		rel = stress_delay(&seed);
		stress_call_begin(ctx, cpu);
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
		cpumask_clear_cpu(cpu, &ctx->in_call);
		if (op % 64 == 63)
			cond_resched();
	}
	atomic_long_add(op, &ctx->ops);
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

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs: nothing would run concurrently");
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
	kunit_info(test, "figures: cpus=%u ops=%ld arms=%ld expiries=%ld cancels=%ld lost=%ld duplicated=%ld overlaps=%d callback_cpus=%u",
		   n, atomic_long_read(&ctx->ops), arms_sum, fires_sum,
		   cancels_sum, lost, dups, atomic_read(&ctx->overlaps),
		   cpumask_weight(&ctx->fired_on));
	KUNIT_EXPECT_GT(test, fires_sum, 0);
	/* it was concurrent: calls on two CPUs overlapped, callbacks ran on two */
	KUNIT_EXPECT_GT(test, atomic_read(&ctx->overlaps), 0);
	KUNIT_EXPECT_GE(test, cpumask_weight(&ctx->fired_on), 2);
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
	atomic_t		*fired;		/* shared count of callbacks */
	int			seq;		/* this one's place in it */
};

static void hotplug_callback(void *data)
{
	struct hotplug_timer *ht = data;

	ht->cpu = raw_smp_processor_id();
	ht->seen = ktime_get();
	if (ht->fired)
		ht->seq = atomic_inc_return(ht->fired);
	complete(&ht->done);
}

static void online_action(void *cpu)
{
	add_cpu((unsigned long)cpu);
}

/*
 * remove_cpu() synchronises RCU and stops the machine, which under
 * emulation can take a while: the timers fall due seconds after it began,
 * and the case checks that they were still pending when it returned.
 */
#define HOTPLUG_FIRST_NS	(5LL * NSEC_PER_SEC)

/*
 * Two timers pending on a CPU that goes offline fire on a CPU still
 * online, in expiry order: timer 0 a second before timer 1.
 */
static void ktimer_hotplug_real_timers_test(struct kunit *test)
{
	struct hotplug_timer *ht = kunit_kcalloc(test, 2, sizeof(*ht), GFP_KERNEL);
	atomic_t *fired = kunit_kzalloc(test, sizeof(*fired), GFP_KERNEL);
	ktime_t rel[2] = { HOTPLUG_FIRST_NS, HOTPLUG_FIRST_NS + NSEC_PER_SEC };
	unsigned int victim = nr_cpu_ids, cpu;
	unsigned long deadline;
	ktime_t offline_at;
	int i, ret;

	KUNIT_ASSERT_NOT_NULL(test, ht);
	KUNIT_ASSERT_NOT_NULL(test, fired);
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
		ht[i].fired = fired;
		init_completion(&ht[i].done);
		KUNIT_ASSERT_EQ(test, start_ktimer(&ht[i].timer, &rel[i],
						   KTIMER_REL), 0);
	}
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(0)), 0);
	KUNIT_ASSERT_EQ(test, remove_cpu(victim), 0);
	offline_at = ktime_get();
	/* whatever happens below, the CPU comes back */
	ret = kunit_add_action_or_reset(test, online_action,
					(void *)(unsigned long)victim);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_LT_MSG(test, offline_at, ht[0].timer.expires,
			    "remove_cpu() took more than %lld s: the timers fell due before their CPU went",
			    HOTPLUG_FIRST_NS / NSEC_PER_SEC);

	deadline = jiffies + WAIT_LIMIT;
	for (i = 0; i < 2; i++) {
		long left = (long)(deadline - jiffies);

		if (!wait_for_completion_timeout(&ht[i].done, max(left, 1L))) {
			stop_ktimer(&ht[i].timer);
			KUNIT_FAIL(test, "timer %d was lost with its CPU", i);
			continue;
		}
		KUNIT_EXPECT_NE(test, ht[i].cpu, (int)victim);
		KUNIT_EXPECT_GE(test, ht[i].seen, ht[i].timer.expires);
	}
	/* what the callbacks saw: the earlier expiry fired first */
	KUNIT_EXPECT_EQ(test, ht[0].seq, 1);
	KUNIT_EXPECT_EQ(test, ht[1].seq, 2);
	kunit_remove_action(test, online_action, (void *)(unsigned long)victim);
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

/*
 * The stress case is slow under emulation and far slower in a soak
 * (stress_ops); the period race makes 100000 calls that warn.
 */
static struct kunit_case ktimer_smp_cases[] = {
	KUNIT_CASE(ktimer_runs_on_starting_cpu_test),
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
