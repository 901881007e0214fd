// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for ktimers on the real CLOCK_MONOTONIC and CLOCK_REALTIME
 * bases: expiry through the softirq, NO_HZ idle wake-up, sleeping, and
 * callbacks running on one CPU while another CPU acts on their timer.
 *
 * These run under software emulation, where a vCPU can stall for tens of
 * milliseconds or more, so they check only lower bounds and order, with
 * margins of seconds; the waits of a case share one deadline (WAIT_LIMIT)
 * that turns a lost expiry into a failure instead of a hang, well within
 * KUnit's 300 s per case.  Timing decides nothing.  A callback that holds
 * its CPU for another CPU to act on it spins at most CALLBACK_SPIN_NS, far
 * below the RCU stall timeout (21 s).
 */

#include <kunit/test.h>
#include <kunit/visibility.h>
#include <linux/bottom_half.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/jiffies.h>
#include <linux/kstrtox.h>
#include <linux/kthread.h>
#include <linux/ktimer.h>
#include <linux/mman.h>
#include <linux/sched.h>
#include <linux/restart_block.h>
#include <linux/sched/signal.h>
#include <linux/stop_machine.h>
#include <linux/string.h>
#include <linux/tick.h>
#include <linux/time.h>
#include <linux/timekeeping.h>
#include <linux/timex.h>

#include "ktimer_internal.h"
#include "tick-sched.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define MS		NSEC_PER_MSEC
#define SEC		((s64)NSEC_PER_SEC)
/* All the waits of one case together, in jiffies */
#define WAIT_LIMIT	(30 * HZ)
/* The test's own polling loops, in process context */
#define SPIN_LIMIT_NS	(30LL * NSEC_PER_SEC)
/* A callback spinning in the softirq gives up after this */
#define CALLBACK_SPIN_NS	(5LL * NSEC_PER_SEC)

struct real_timer {
	struct ktimer		timer;
	struct completion	done;
	ktime_t			(*now)(void);
	ktime_t			seen_now;
	ktime_t			seen_expires;
	int			fired;
	int			stop_after;	/* periodic: stop itself then */
	int			stop_ret;
	int			*order;		/* shared fire sequence */
	int			*norder;
	int			id;
	/* where and in what the callback ran */
	int			cpu;
	bool			in_idle;	/* interrupted the idle task */
	bool			tick_stopped;
	ktime_t			left_idle;	/* when that CPU last left idle */
	char			comm[TASK_COMM_LEN];
};

/*
 * tick_nohz_tick_stopped() is not exported, so only a built-in test can
 * ask; without NO_HZ the tick never stops.
 */
static bool tick_stopped_here(void)
{
	return IS_ENABLED(CONFIG_NO_HZ_COMMON) &&
	       IS_BUILTIN(CONFIG_KTIMER_KUNIT_TEST) && tick_nohz_tick_stopped();
}

static bool can_see_tick(unsigned int cpu)
{
	/* -1: NO_HZ is not active (nohz=off, or no one-shot clock event) */
	return IS_ENABLED(CONFIG_NO_HZ_COMMON) &&
	       IS_BUILTIN(CONFIG_KTIMER_KUNIT_TEST) &&
	       get_cpu_idle_time_us(cpu, NULL) != (u64)-1;
}

/*
 * When this CPU last left idle with its tick stopped (to run a task), or 0
 * where a test cannot see it: only a built-in test can read tick_sched.
 */
static ktime_t last_left_idle(void)
{
#ifdef CONFIG_NO_HZ_COMMON
	if (IS_BUILTIN(CONFIG_KTIMER_KUNIT_TEST))
		return tick_get_tick_sched(raw_smp_processor_id())->idle_exittime;
#endif
	return 0;
}

static void real_callback(void *data)
{
	struct real_timer *rt = data;

	rt->seen_now = rt->now();
	rt->seen_expires = rt->timer.expires;
	rt->cpu = raw_smp_processor_id();
	rt->in_idle = is_idle_task(current);
	rt->tick_stopped = tick_stopped_here();
	rt->left_idle = last_left_idle();
	strscpy(rt->comm, current->comm, sizeof(rt->comm));
	rt->fired++;
	if (rt->order)
		rt->order[(*rt->norder)++] = rt->id;
	if (rt->stop_after && rt->fired == rt->stop_after)
		rt->stop_ret = stop_ktimer(&rt->timer);
	if (!rt->timer.interval || rt->fired == rt->stop_after)
		complete(&rt->done);
}

static void stop_timer_action(void *timer)
{
	stop_ktimer(timer);
}

/*
 * Stop @timer when the case ends, even when an assertion ends it early:
 * a timer must never stay queued in memory that the case frees.
 */
static void stop_at_exit(struct kunit *test, struct ktimer *timer)
{
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, stop_timer_action,
							timer), 0);
}

static void real_timer_init(struct kunit *test, struct real_timer *rt,
			    struct ktimer_clock *clock)
{
	memset(rt, 0, sizeof(*rt));
	ktimer_init(&rt->timer, clock);
	stop_at_exit(test, &rt->timer);
	rt->now = clock->get_time;
	rt->timer.function = real_callback;
	rt->timer.data = rt;
	init_completion(&rt->done);
}

/* The generic cases run on every registered clock, new ones included */
static const void *clock_gen_params(const void *prev, char *desc)
{
	struct ktimer_clock *clock = ktimer_next_clock(prev);

	if (clock)
		snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", clock->name);
	return clock;
}

static struct ktimer_clock *param_clock(struct kunit *test)
{
	return (struct ktimer_clock *)test->param_value;
}

/* When the event clock reaches @expires of @clock: the same but for a mapped clock */
static ktime_t event_of(const struct ktimer_clock *clock, ktime_t expires)
{
	return clock->map ? ktimer_test_map(clock->map, expires, true) : expires;
}

/*
 * Wait for @done until @deadline (jiffies), which all the waits of a case
 * share: a case that loses every timer still ends within WAIT_LIMIT.
 */
static bool wait_by(struct completion *done, unsigned long deadline)
{
	long left = (long)(deadline - jiffies);

	if (left <= 0)
		return try_wait_for_completion(done);
	return wait_for_completion_timeout(done, left);
}

static int pin_case_init(struct kunit *test)
{
	return set_cpus_allowed_ptr(current, cpumask_of(raw_smp_processor_id()));
}

/* Sleep on a ktimer: the API under test doubles as the delay */
static void ktimer_delay(struct kunit *test, ktime_t ns)
{
	struct ktimer sleeper;

	ktimer_init_on_stack(&sleeper, &ktimer_clock_monotonic);
	KUNIT_EXPECT_EQ(test, schedule_ktimer(&sleeper, &ns,
					      TASK_UNINTERRUPTIBLE, KTIMER_REL),
			0);
	destroy_ktimer_on_stack(&sleeper);
}

static void check_fires_after_expiry(struct kunit *test,
				     struct ktimer_clock *clock, ktime_t rel)
{
	struct real_timer *rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, rt);
	real_timer_init(test, rt, clock);
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt->timer, &rel, KTIMER_REL), 0);
	if (!wait_for_completion_timeout(&rt->done, WAIT_LIMIT)) {
		stop_ktimer(&rt->timer);
		KUNIT_FAIL(test, "timer did not fire within %d s",
			   WAIT_LIMIT / HZ);
		return;
	}
	KUNIT_EXPECT_EQ(test, rt->fired, 1);
	KUNIT_EXPECT_GE(test, rt->seen_now, rt->timer.expires);
	KUNIT_EXPECT_GE(test, rt->timer.expired, rt->timer.expires);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&rt->timer));
	KUNIT_EXPECT_EQ(test, stop_ktimer(&rt->timer), 0);
}

static void ktimer_fires_after_expiry_test(struct kunit *test)
{
	check_fires_after_expiry(test, param_clock(test), 2 * MS);
}

#define IDLE_SLEEP	(2 * SEC)
#define IDLE_SHIFT	(130 * MS)
#define IDLE_ATTEMPTS	8

/*
 * A timer due on a CPU that has nothing to run: the CPU goes idle and (with
 * NO_HZ) stops its tick, and the timer's own wake-up event must wake it.
 * The timer is queued on another CPU than the test's, whose wake-up event
 * is checked there; the callback then proves the premise: it ran on that
 * CPU, in the interrupt that ended the idle task's sleep, with the tick
 * stopped where a built-in test can see it.  With one CPU the test's own
 * CPU goes idle while the test sleeps.  A task that runs on the CPU less
 * than a tick before the expiry (a kworker, or a vCPU the host stalled)
 * leaves the tick running then, since the next event is too close to stop
 * it for: that spoils an attempt, not the case.  It has IDLE_ATTEMPTS,
 * each IDLE_SHIFT longer than the one before, so that work done once a
 * second (the ktimer watchdog's scan) cannot fall on every one.
 */
static void ktimer_idle_cpu_wakes_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	unsigned int home = raw_smp_processor_id(), target;
	unsigned long deadline = jiffies + WAIT_LIMIT;
	bool see_tick, proved = false;
	int attempt;

	target = cpumask_any_but(cpu_online_mask, home);
	if (target >= nr_cpu_ids)
		target = home;
	see_tick = can_see_tick(target);

	for (attempt = 1; attempt <= IDLE_ATTEMPTS && !proved; attempt++) {
		struct real_timer *rt = kunit_kzalloc(test, sizeof(*rt),
						      GFP_KERNEL);
		ktime_t rel = IDLE_SLEEP + (attempt - 1) * IDLE_SHIFT;
		ktime_t soft = 0, hard = 0, mono_expiry;
		clockid_t clockid = -1;
		bool armed;

		KUNIT_ASSERT_NOT_NULL(test, rt);
		real_timer_init(test, rt, clock);
		KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current,
							   cpumask_of(target)), 0);
		mono_expiry = ktime_add(ktime_get(), rel);
		KUNIT_ASSERT_EQ(test, start_ktimer(&rt->timer, &rel, KTIMER_REL), 0);
		armed = ktimer_test_event(clock, &clockid, &soft, &hard);
		/* leave the target CPU with nothing to run */
		KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current,
							   cpumask_of(home)), 0);
		KUNIT_EXPECT_TRUE(test, armed);
		KUNIT_EXPECT_LE(test, soft, event_of(clock, rt->timer.expires));

		if (!wait_by(&rt->done, deadline)) {
			KUNIT_FAIL(test, "timer did not fire within %d s",
				   WAIT_LIMIT / HZ);
			return;
		}
		KUNIT_EXPECT_EQ(test, rt->cpu, (int)target);
		KUNIT_EXPECT_GE(test, rt->seen_now, rt->timer.expires);
		proved = rt->cpu == (int)target && rt->in_idle &&
			 (rt->tick_stopped || !see_tick);
		if (!proved)
			kunit_info(test, "attempt %d: callback on CPU %d in %s, tick %s; the CPU last left idle %lld us before the expiry",
				   attempt, rt->cpu, rt->comm,
				   rt->tick_stopped ? "stopped" : "running",
				   ktime_to_us(mono_expiry - rt->left_idle));
	}
	KUNIT_EXPECT_TRUE_MSG(test, proved,
			      "CPU %u was never idle%s when a timer fell due",
			      target, see_tick ? " with its tick stopped" : "");
}

struct fire_order {
	int	order[8];
	int	norder;
};

/*
 * Five timers started out of order fire in expiry order.  No expiry run
 * may come between the starts: bottom halves are off until every timer is
 * queued, so a slow start sequence cannot let an early timer fire before
 * a later-started, earlier one is queued.
 */
static void ktimer_real_order_test(struct kunit *test)
{
	static const int offsets_ms[] = { 3, 1, 2, 5, 4 };
	struct fire_order *fired = kunit_kzalloc(test, sizeof(*fired), GFP_KERNEL);
	int ret[ARRAY_SIZE(offsets_ms)], i;
	unsigned long deadline;
	struct real_timer *rt;
	ktime_t start;

	BUILD_BUG_ON(ARRAY_SIZE(offsets_ms) > ARRAY_SIZE(fired->order));
	rt = kunit_kcalloc(test, ARRAY_SIZE(offsets_ms), sizeof(*rt),
			   GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fired);
	KUNIT_ASSERT_NOT_NULL(test, rt);
	for (i = 0; i < ARRAY_SIZE(offsets_ms); i++) {
		real_timer_init(test, &rt[i], param_clock(test));
		rt[i].id = offsets_ms[i];
		rt[i].order = fired->order;
		rt[i].norder = &fired->norder;
	}

	local_bh_disable();
	start = ktimer_clock_now(param_clock(test));
	for (i = 0; i < ARRAY_SIZE(offsets_ms); i++) {
		/* one absolute base for all, so only the offsets decide */
		ktime_t t = start + offsets_ms[i] * MS;

		ret[i] = start_ktimer(&rt[i].timer, &t,
				      KTIMER_ABS | KTIMER_NOCHECK);
	}
	local_bh_enable();
	for (i = 0; i < ARRAY_SIZE(offsets_ms); i++)
		KUNIT_ASSERT_EQ(test, ret[i], 0);

	deadline = jiffies + WAIT_LIMIT;
	for (i = 0; i < ARRAY_SIZE(offsets_ms); i++) {
		if (!wait_by(&rt[i].done, deadline))
			KUNIT_FAIL(test, "timer %d did not fire", rt[i].id);
	}
	for (i = 0; i < ARRAY_SIZE(offsets_ms); i++)
		stop_ktimer(&rt[i].timer);
	KUNIT_ASSERT_EQ(test, fired->norder, ARRAY_SIZE(offsets_ms));
	for (i = 1; i < fired->norder; i++)
		KUNIT_EXPECT_LT(test, fired->order[i - 1], fired->order[i]);
}

/* Many timers with random expiries: each fires once, never early */
static void ktimer_many_real_timers_test(struct kunit *test)
{
	const int n = 64;
	unsigned long deadline;
	struct real_timer *rt;
	int i, late = 0;
	u32 seed = 4242;

	rt = kunit_kcalloc(test, n, sizeof(*rt), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rt);
	for (i = 0; i < n; i++) {
		ktime_t rel;

		seed = seed * 1103515245 + 12345;
		rel = 100 * NSEC_PER_USEC + (seed >> 8) % (5 * MS);
		real_timer_init(test, &rt[i], param_clock(test));
		KUNIT_ASSERT_EQ(test, start_ktimer(&rt[i].timer, &rel,
						   KTIMER_REL), 0);
	}
	deadline = jiffies + WAIT_LIMIT;
	for (i = 0; i < n; i++) {
		if (!wait_by(&rt[i].done, deadline))
			late++;
	}
	for (i = 0; i < n; i++)
		stop_ktimer(&rt[i].timer);
	KUNIT_EXPECT_EQ(test, late, 0);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, rt[i].fired, 1);
		KUNIT_EXPECT_GE(test, rt[i].seen_now, rt[i].seen_expires);
	}
}

static void ktimer_real_periodic_stop_test(struct kunit *test)
{
	struct real_timer *rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);
	ktime_t rel = MS, start;
	int fired;

	KUNIT_ASSERT_NOT_NULL(test, rt);
	real_timer_init(test, rt, param_clock(test));
	rt->timer.interval = MS;
	start = ktime_get();
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt->timer, &rel, KTIMER_REL), 0);
	/* let at least 5 periods pass */
	ktimer_delay(test, 5 * MS);
	while (READ_ONCE(rt->fired) < 5 && ktime_get() - start < SPIN_LIMIT_NS)
		ktimer_delay(test, MS);
	/*
	 * The callback runs on this CPU (the case is pinned), in the softirq,
	 * and the timer is re-armed before the softirq returns: to this task
	 * the periodic timer is always pending.  Stopping it finds it so,
	 * and a second stop finds nothing.
	 */
	KUNIT_EXPECT_TRUE(test, ktimer_active(&rt->timer));
	KUNIT_EXPECT_EQ(test, stop_ktimer(&rt->timer), 1);
	KUNIT_EXPECT_EQ(test, stop_ktimer(&rt->timer), 0);
	fired = READ_ONCE(rt->fired);
	KUNIT_EXPECT_GE(test, fired, 5);
	/* ->overrun counts every period added, missed ones included */
	KUNIT_EXPECT_GE(test, rt->timer.overrun, (u64)fired);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&rt->timer));
	ktimer_delay(test, 5 * MS);
	KUNIT_EXPECT_EQ(test, READ_ONCE(rt->fired), fired);
}

static void ktimer_real_periodic_self_stop_test(struct kunit *test)
{
	struct real_timer *rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);
	ktime_t rel = MS;

	KUNIT_ASSERT_NOT_NULL(test, rt);
	real_timer_init(test, rt, param_clock(test));
	rt->timer.interval = MS;
	rt->stop_after = 3;
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt->timer, &rel, KTIMER_REL), 0);
	if (!wait_for_completion_timeout(&rt->done, WAIT_LIMIT)) {
		stop_ktimer(&rt->timer);
		KUNIT_FAIL(test, "periodic timer did not reach 3 expiries");
		return;
	}
	KUNIT_EXPECT_EQ(test, rt->stop_ret, 0);
	ktimer_delay(test, 5 * MS);
	KUNIT_EXPECT_EQ(test, rt->fired, 3);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&rt->timer));
}

static void ktimer_schedule_rel_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	struct ktimer timer;
	ktime_t start, t = 2 * MS;

	ktimer_init_on_stack(&timer, clock);
	start = ktimer_clock_now(clock);
	KUNIT_EXPECT_EQ(test, schedule_ktimer(&timer, &t, TASK_UNINTERRUPTIBLE,
					      KTIMER_REL), 0);
	KUNIT_EXPECT_GE(test, ktimer_clock_now(clock) - start, 2 * MS);
	/* *t now holds the absolute expiry */
	KUNIT_EXPECT_GE(test, t, start + 2 * MS);
	KUNIT_EXPECT_LE(test, t, ktimer_clock_now(clock));
	KUNIT_EXPECT_FALSE(test, ktimer_active(&timer));
	destroy_ktimer_on_stack(&timer);
}

/*
 * The engine wakes this CPU with an hrtimer on the timer's own clock, from
 * its expiry to its expiry plus half the resolution.  A wake-up on another
 * clock (or none) would still look right whenever something else raised
 * the softirq, so this looks at what was programmed.
 */
static void ktimer_wakeup_event_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	struct real_timer *rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);
	ktime_t rel = 3600LL * NSEC_PER_SEC, soft = 0, hard = 0;
	ktime_t limit = ktime_get() + SPIN_LIMIT_NS;
	clockid_t clockid = -1;
	bool armed = false;

	KUNIT_ASSERT_NOT_NULL(test, rt);
	real_timer_init(test, rt, clock);
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt->timer, &rel, KTIMER_REL), 0);
	/* an event armed earlier for a timer since stopped fires first */
	while (ktime_get() < limit) {
		armed = ktimer_test_event(clock, &clockid, &soft, &hard);
		if (armed && soft == event_of(clock, rt->timer.expires))
			break;
		ktimer_delay(test, MS);
	}
	KUNIT_EXPECT_TRUE(test, armed);
	KUNIT_EXPECT_EQ(test, clockid, clock->clockid);
	KUNIT_EXPECT_EQ(test, soft, event_of(clock, rt->timer.expires));
	/* may slip by half the resolution; the softirq gets the other half */
	KUNIT_EXPECT_EQ(test, hard - soft,
			(ktime_t)(ktimer_clock_resolution(clock) / 2));
}

/*
 * A wake-up event that fired on an empty queue (its timer was stopped) is
 * armed again by the next start, however late that timer is.
 */
static void ktimer_event_rearmed_after_idle_fire_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	struct real_timer *rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);
	ktime_t soon = 100 * MS, later = 3600LL * NSEC_PER_SEC;
	ktime_t limit = ktime_get() + SPIN_LIMIT_NS, soft = 0, hard = 0;
	clockid_t clockid = -1;
	bool armed = true;

	KUNIT_ASSERT_NOT_NULL(test, rt);
	real_timer_init(test, rt, clock);
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt->timer, &soon, KTIMER_REL), 0);
	KUNIT_ASSERT_EQ(test, stop_ktimer(&rt->timer), 1);
	/* the event armed for it still fires, and finds the queue empty */
	while (armed && ktime_get() < limit) {
		ktimer_delay(test, 100 * MS);
		armed = ktimer_test_event(clock, &clockid, &soft, &hard);
	}
	KUNIT_ASSERT_FALSE_MSG(test, armed, "the wake-up event stayed armed");

	KUNIT_ASSERT_EQ(test, start_ktimer(&rt->timer, &later, KTIMER_REL), 0);
	armed = ktimer_test_event(clock, &clockid, &soft, &hard);
	KUNIT_EXPECT_TRUE(test, armed);
	KUNIT_EXPECT_EQ(test, soft, event_of(clock, rt->timer.expires));
}

/*
 * An uninterruptible sleep is not ended by a pending signal: it sleeps
 * its full time and reports no time left.
 */
static void ktimer_schedule_uninterruptible_test(struct kunit *test)
{
	struct ktimer sleeper;
	ktime_t t = NSEC_PER_SEC, start = ktime_get(), ret;

	allow_signal(SIGUSR1);
	send_sig(SIGUSR1, current, 1);
	KUNIT_ASSERT_TRUE(test, signal_pending(current));
	ktimer_init_on_stack(&sleeper, &ktimer_clock_monotonic);
	ret = schedule_ktimer(&sleeper, &t, TASK_UNINTERRUPTIBLE, KTIMER_REL);
	destroy_ktimer_on_stack(&sleeper);
	flush_signals(current);
	disallow_signal(SIGUSR1);

	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_GE(test, ktime_get() - start, NSEC_PER_SEC);
}

/*
 * The engine the command line asks for: the last ktimer.highres= before
 * "--" (a bare ktimer.highres means 1), high resolution without one.  This
 * is what the test expects, not what ktimer_highres_enabled() answers.
 * saved_command_line is not exported: a modular test has to trust the
 * core's answer.
 */
static bool cmdline_wants_highres(void)
{
	static const char key[] = "ktimer.highres";
	bool want = true, val;
	const char *p;

	if (!IS_BUILTIN(CONFIG_KTIMER_KUNIT_TEST))
		return ktimer_highres_enabled();
	for (p = saved_command_line; *p; p += strcspn(p, " \t\n")) {
		char arg[32];
		size_t len;

		p += strspn(p, " \t\n");
		len = strcspn(p, " \t\n");
		if (len == 2 && !strncmp(p, "--", 2))
			break;
		if (len >= sizeof(arg))
			continue;
		strscpy(arg, p, len + 1);
		if (!strcmp(arg, key))
			want = true;
		else if (!strncmp(arg, key, strlen(key)) &&
			 arg[strlen(key)] == '=' &&
			 !kstrtobool(arg + strlen(key) + 1, &val))
			want = val;
	}
	return want;
}

/* Do hrtimers run in high-resolution mode?  Asked of a live hrtimer base */
static bool hrtimers_hres_active(void)
{
	struct hrtimer probe;
	bool active;

	hrtimer_init_on_stack(&probe, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	active = hrtimer_is_hres_active(&probe);
	destroy_hrtimer_on_stack(&probe);
	return active;
}

/*
 * The resolution and the timespec rounding follow the boot-time engine
 * (design.md): the high-resolution engine reports 1 ns once hrtimers run in
 * high-resolution mode (one jiffy before that, and without
 * CONFIG_HIGH_RES_TIMERS); the low-resolution engine reports one jiffy.
 * The expected values are the literal 1 and TICK_NSEC, and which applies
 * comes from the command line and the hrtimer base, not from the core.
 */
static void ktimer_engine_resolution_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	bool highres = cmdline_wants_highres();
	bool hres = hrtimers_hres_active();
	struct timespec64 one = { 0, 1 }, res;
	struct ktimer timer;
	u32 engine, want;

	engine = highres && hres ? 1 : TICK_NSEC;
	/* a clock may set a resolution of its own */
	want = clock->resolution ?: engine;
	kunit_info(test, "%s-resolution engine, hrtimers %s, %u ns",
		   highres ? "high" : "low", hres ? "high-res" : "low-res",
		   ktimer_clock_resolution(clock));

	KUNIT_EXPECT_EQ(test, ktimer_highres_enabled(), highres);
	/* every configuration here can and does switch hrtimers to high-res */
	if (IS_ENABLED(CONFIG_HIGH_RES_TIMERS))
		KUNIT_EXPECT_TRUE_MSG(test, hres,
				      "CONFIG_HIGH_RES_TIMERS, but hrtimers run at low resolution");
	KUNIT_EXPECT_EQ(test, ktimer_clock_resolution(clock), want);
	ktimer_init_on_stack(&timer, clock);
	KUNIT_EXPECT_EQ(test, ktimer_convert_timespec(&timer, &one), want);
	destroy_ktimer_on_stack(&timer);
	/* the built-in monotonic and realtime clocks follow the engine */
	KUNIT_EXPECT_EQ(test, get_ktimer_mono_res(CLOCK_MONOTONIC, &res), 0);
	KUNIT_EXPECT_EQ(test, timespec64_to_ns(&res), engine);
	KUNIT_EXPECT_EQ(test, get_ktimer_real_res(CLOCK_REALTIME, &res), 0);
	KUNIT_EXPECT_EQ(test, timespec64_to_ns(&res), engine);
}

static void ktimer_schedule_abs_real_test(struct kunit *test)
{
	struct ktimer timer;
	ktime_t t = ktime_get_real() + 2 * MS, want = t;

	ktimer_init_on_stack(&timer, &ktimer_clock_realtime);
	KUNIT_EXPECT_EQ(test, schedule_ktimer(&timer, &t, TASK_INTERRUPTIBLE,
					      KTIMER_ABS), 0);
	destroy_ktimer_on_stack(&timer);
	KUNIT_EXPECT_EQ(test, t, want);
	KUNIT_EXPECT_GE(test, ktime_get_real(), want);
}

struct sleeper {
	struct completion	asleep;
	struct completion	done;
	ktime_t			rem;
	ktime_t			requested;
};

/*
 * Run @fn(@data) in a kthread that accepts SIGUSR1, signal it once it
 * reports @asleep and sleeps, and wait for @done.  Returns the state it
 * slept in.  kthread_stop() keeps @data alive
 * until the thread is gone, even when it does not finish in time.
 */
/* The state @task sleeps in, once it sleeps (TASK_RUNNING if it never did) */
static unsigned int wait_until_asleep(struct task_struct *task)
{
	unsigned long end = jiffies + WAIT_LIMIT;
	unsigned int state;

	while ((state = READ_ONCE(task->__state)) == TASK_RUNNING &&
	       time_before(jiffies, end))
		schedule_timeout_uninterruptible(1);
	return state;
}

static unsigned int run_and_signal(struct kunit *test, int (*fn)(void *),
				   void *data, struct completion *asleep,
				   struct completion *done)
{
	struct task_struct *task = kthread_run(fn, data, "ktimer-sleeper");
	unsigned int state;

	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	get_task_struct(task);
	wait_for_completion(asleep);
	state = wait_until_asleep(task);
	send_sig(SIGUSR1, task, 1);
	if (!wait_for_completion_timeout(done, WAIT_LIMIT))
		KUNIT_FAIL(test, "the signal did not end the sleep");
	kthread_stop(task);
	put_task_struct(task);
	return state;
}

static int sleeper_thread(void *data)
{
	struct sleeper *s = data;
	struct ktimer timer;
	ktime_t t = s->requested;

	allow_signal(SIGUSR1);
	ktimer_init_on_stack(&timer, &ktimer_clock_monotonic);
	complete(&s->asleep);
	s->rem = schedule_ktimer(&timer, &t, TASK_INTERRUPTIBLE, KTIMER_REL);
	destroy_ktimer_on_stack(&timer);
	flush_signals(current);
	complete(&s->done);
	return 0;
}

/* A signal ends an interruptible sleep early with the time that was left */
static void ktimer_schedule_signal_test(struct kunit *test)
{
	struct sleeper *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	init_completion(&s->asleep);
	init_completion(&s->done);
	s->requested = 60LL * NSEC_PER_SEC;
	run_and_signal(test, sleeper_thread, s, &s->asleep, &s->done);
	KUNIT_EXPECT_GT(test, s->rem, 0);
	KUNIT_EXPECT_LE(test, s->rem, s->requested);
}

/*
 * Two CPUs: a callback spinning on one while the other acts on it.  The
 * callback spins until the test releases it, or gives up after
 * CALLBACK_SPIN_NS; an attempt in which it gave up proves nothing (the
 * test's vCPU stalled, or the call under test waited for the callback),
 * so a case makes up to RUNNING_ATTEMPTS and fails if every one gave up.
 */
#define RUNNING_ATTEMPTS	3
/* try_stop: how long after stop_ktimer() began the callback is released */
#define RELEASE_DELAY_NS	(200 * MS)

struct running_ctx {
	struct ktimer	timer;
	struct hrtimer	releaser;
	bool		ready;		/* the test waits on the other CPU */
	bool		in_callback;
	bool		release;
	bool		gave_up;	/* the spin ended at CALLBACK_SPIN_NS */
	bool		finished;
	int		calls;
	int		cpu[2];		/* where the first two calls ran */
};

static void spinning_callback(void *data)
{
	struct running_ctx *rc = data;
	int calls = rc->calls + 1;
	ktime_t limit;

	/*
	 * Spinning while the test is still being migrated away would block
	 * the migration on this CPU: come back later instead.
	 */
	if (!READ_ONCE(rc->ready)) {
		ktime_t again = MS;

		start_ktimer(&rc->timer, &again, KTIMER_REL);
		return;
	}
	if (calls <= ARRAY_SIZE(rc->cpu))
		rc->cpu[calls - 1] = raw_smp_processor_id();
	WRITE_ONCE(rc->calls, calls);
	WRITE_ONCE(rc->in_callback, true);
	limit = ktime_get() + CALLBACK_SPIN_NS;
	while (!READ_ONCE(rc->release)) {
		if (ktime_get() > limit) {
			WRITE_ONCE(rc->gave_up, true);
			break;
		}
		cpu_relax();
	}
	WRITE_ONCE(rc->in_callback, false);
	/* pairs with the acquire in ktimer_try_stop_running_test() */
	smp_store_release(&rc->finished, true);
}

static void release_action(void *data)
{
	struct running_ctx *rc = data;

	WRITE_ONCE(rc->release, true);
	WRITE_ONCE(rc->ready, true);
}

/* The test's CPU and another one, or a skip */
static void two_cpus(struct kunit *test, unsigned int *here,
		     unsigned int *other)
{
	*here = raw_smp_processor_id();
	*other = cpumask_any_but(cpu_online_mask, *here);
	if (*other >= nr_cpu_ids)
		kunit_skip(test, "needs two online CPUs");
}

/*
 * Start the timer on @cb_cpu, move to @test_cpu, and wait until the
 * callback spins on @cb_cpu.
 */
static struct running_ctx *start_spinning_timer(struct kunit *test,
						unsigned int cb_cpu,
						unsigned int test_cpu)
{
	struct running_ctx *rc = kunit_kzalloc(test, sizeof(*rc), GFP_KERNEL);
	ktime_t rel = MS, limit;

	KUNIT_ASSERT_NOT_NULL(test, rc);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(cb_cpu)),
			0);
	init_ktimer_mono(&rc->timer);
	/* on failure, release the callback before stopping its timer */
	stop_at_exit(test, &rc->timer);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, release_action,
							rc), 0);
	rc->timer.function = spinning_callback;
	rc->timer.data = rc;
	KUNIT_ASSERT_EQ(test, start_ktimer(&rc->timer, &rel, KTIMER_REL), 0);
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current,
						   cpumask_of(test_cpu)), 0);
	WRITE_ONCE(rc->ready, true);

	limit = ktime_get() + SPIN_LIMIT_NS;
	while (!READ_ONCE(rc->in_callback) && ktime_get() < limit)
		cpu_relax();
	if (!READ_ONCE(rc->in_callback)) {
		WRITE_ONCE(rc->release, true);
		stop_ktimer(&rc->timer);
		KUNIT_FAIL_AND_ABORT(test, "callback did not start");
	}
	return rc;
}

static enum hrtimer_restart release_fn(struct hrtimer *releaser)
{
	struct running_ctx *rc = container_of(releaser, struct running_ctx,
					      releaser);

	WRITE_ONCE(rc->release, true);
	return HRTIMER_NORESTART;
}

/*
 * try_to_stop_ktimer() of a timer whose callback runs on another CPU fails
 * with -1; stop_ktimer() waits for it.  The callback is released only
 * while stop_ktimer() waits, by an hrtimer on the test's CPU: a
 * stop_ktimer() that did not wait would return before the callback ends.
 */
static void ktimer_try_stop_running_test(struct kunit *test)
{
	int attempt, try_ret = 0, stop_ret = -EINVAL;
	struct running_ctx *rc = NULL;
	unsigned int here, other;
	bool finished = false;

	two_cpus(test, &here, &other);
	for (attempt = 1; attempt <= RUNNING_ATTEMPTS; attempt++) {
		rc = start_spinning_timer(test, here, other);
		try_ret = try_to_stop_ktimer(&rc->timer);
		hrtimer_init(&rc->releaser, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
		rc->releaser.function = release_fn;
		hrtimer_start(&rc->releaser, RELEASE_DELAY_NS, HRTIMER_MODE_REL);
		stop_ret = stop_ktimer(&rc->timer);
		/* pairs with the release at the end of spinning_callback() */
		finished = smp_load_acquire(&rc->finished);
		hrtimer_cancel(&rc->releaser);
		if (!READ_ONCE(rc->gave_up))
			break;
		kunit_info(test, "attempt %d: the callback gave up spinning",
			   attempt);
	}
	KUNIT_ASSERT_FALSE_MSG(test, READ_ONCE(rc->gave_up),
			       "the callback was not released within %lld s in all %d attempts",
			       CALLBACK_SPIN_NS / SEC, RUNNING_ATTEMPTS);
	KUNIT_EXPECT_EQ(test, try_ret, -1);
	KUNIT_EXPECT_EQ(test, stop_ret, 0);
	/* stop_ktimer() returned only once the callback had finished */
	KUNIT_EXPECT_TRUE(test, finished);
	KUNIT_EXPECT_EQ(test, rc->calls, 1);
	KUNIT_EXPECT_EQ(test, rc->cpu[0], (int)here);
}

/*
 * Restarting a timer whose callback runs on another CPU neither waits nor
 * loses it (bad-input.md): modify_ktimer() returns while the callback still
 * spins, which the test releases only afterwards, and the timer stays on
 * the CPU of the running callback, one expiry per arming.
 */
static void ktimer_modify_running_test(struct kunit *test)
{
	int attempt, mod_ret = -EINVAL, start_ret = 0, stop_ret = -EINVAL;
	bool running = false, active = false;
	struct running_ctx *rc = NULL;
	unsigned int here, other;
	ktime_t rel = MS, limit;

	two_cpus(test, &here, &other);
	for (attempt = 1; attempt <= RUNNING_ATTEMPTS; attempt++) {
		rc = start_spinning_timer(test, here, other);
		mod_ret = modify_ktimer(&rc->timer, &rel, KTIMER_REL);
		running = READ_ONCE(rc->in_callback);
		active = ktimer_active(&rc->timer);
		start_ret = start_ktimer(&rc->timer, &rel, KTIMER_REL);
		WRITE_ONCE(rc->release, true);

		limit = ktime_get() + SPIN_LIMIT_NS;
		while (READ_ONCE(rc->calls) < 2 && ktime_get() < limit)
			ktimer_delay(test, MS);
		stop_ret = stop_ktimer(&rc->timer);
		if (!READ_ONCE(rc->gave_up))
			break;
		kunit_info(test, "attempt %d: the callback gave up spinning",
			   attempt);
	}
	KUNIT_ASSERT_FALSE_MSG(test, READ_ONCE(rc->gave_up),
			       "the callback spun %lld s in all %d attempts: modify_ktimer() waited for it (or this vCPU stalled)",
			       CALLBACK_SPIN_NS / SEC, RUNNING_ATTEMPTS);
	KUNIT_EXPECT_EQ(test, mod_ret, 0);
	KUNIT_EXPECT_TRUE(test, running);
	KUNIT_EXPECT_TRUE(test, active);
	KUNIT_EXPECT_EQ(test, start_ret, -EBUSY);
	KUNIT_EXPECT_EQ(test, stop_ret, 0);
	KUNIT_EXPECT_EQ(test, rc->calls, 2);
	/* ran on the other CPU, and the restart stayed there */
	KUNIT_EXPECT_EQ(test, rc->cpu[0], (int)here);
	KUNIT_EXPECT_NE(test, rc->cpu[0], (int)other);
	KUNIT_EXPECT_EQ(test, rc->cpu[1], (int)here);
}

/* ---- setting the realtime clock ---- */

/* Step the realtime clock by @delta, as settimeofday() would */
static void step_realtime(struct kunit *test, ktime_t delta)
{
	struct timespec64 ts = ktime_to_timespec64(ktime_get_real() + delta);

	KUNIT_ASSERT_EQ(test, do_settimeofday64(&ts), 0);
}

/*
 * The realtime clock cannot be set before the boot time, and a guest
 * without an RTC (ARM's virt machine here) boots in 1970 with realtime
 * equal to monotonic.  Move it a day ahead first, so that the steps
 * below stay legal; the guest is disposable.
 */
static void ensure_realtime_headroom(struct kunit *test)
{
	const ktime_t day = 24 * 3600LL * NSEC_PER_SEC;

	if (ktime_get_real() - ktime_get() < day / 2)
		step_realtime(test, day);
}

/*
 * A forward step past an absolute realtime expiry fires it promptly; a
 * realtime timer not yet reached and monotonic timers keep waiting.
 */
static void ktimer_clock_set_forward_test(struct kunit *test)
{
	struct real_timer *rt = kunit_kcalloc(test, 3, sizeof(*rt), GFP_KERNEL);
	ktime_t hour = 3600LL * NSEC_PER_SEC, t;
	ktime_t rel2h = 2 * hour, rel1h = hour;
	bool fired;

	KUNIT_ASSERT_NOT_NULL(test, rt);
	ensure_realtime_headroom(test);
	real_timer_init(test, &rt[0], &ktimer_clock_realtime);
	real_timer_init(test, &rt[1], &ktimer_clock_realtime);
	real_timer_init(test, &rt[2], &ktimer_clock_monotonic);
	t = ktime_get_real() + hour;
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt[0].timer, &t, KTIMER_ABS), 0);
	/* relative realtime timers become absolute when started */
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt[1].timer, &rel2h, KTIMER_REL), 0);
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt[2].timer, &rel1h, KTIMER_REL), 0);

	step_realtime(test, 90LL * 60 * NSEC_PER_SEC);
	fired = wait_for_completion_timeout(&rt[0].done, WAIT_LIMIT);
	/* half an hour left, less the time the case took: minutes of margin */
	KUNIT_EXPECT_TRUE(test, ktimer_active(&rt[1].timer));
	KUNIT_EXPECT_LE(test, get_remtime_ktimer(&rt[1].timer, 0),
			30LL * 60 * NSEC_PER_SEC);
	KUNIT_EXPECT_GT(test, get_remtime_ktimer(&rt[1].timer, 0),
			20LL * 60 * NSEC_PER_SEC);
	/* the monotonic timer did not move: an hour, less the same */
	KUNIT_EXPECT_TRUE(test, ktimer_active(&rt[2].timer));
	KUNIT_EXPECT_LE(test, get_remtime_ktimer(&rt[2].timer, 0), hour);
	KUNIT_EXPECT_GT(test, get_remtime_ktimer(&rt[2].timer, 0),
			50LL * 60 * NSEC_PER_SEC);
	/* undo the step, keeping the time that really passed */
	step_realtime(test, -90LL * 60 * NSEC_PER_SEC);

	stop_ktimer(&rt[0].timer);
	KUNIT_EXPECT_EQ(test, stop_ktimer(&rt[1].timer), 1);
	KUNIT_EXPECT_EQ(test, stop_ktimer(&rt[2].timer), 1);
	KUNIT_ASSERT_TRUE_MSG(test, fired, "passed realtime timer did not fire");
	KUNIT_EXPECT_GE(test, rt[0].seen_now, t);
}

#define STEP_MARGIN	(10 * SEC)

/*
 * A backward step delays an absolute realtime timer by the step; a step
 * forward past its expiry fires it.  The expiry is STEP_MARGIN ahead when
 * the clock is stepped back, so a stalled vCPU does not let it fire first,
 * and the forward step goes STEP_MARGIN past it so that the case need not
 * wait for it.
 */
static void ktimer_clock_set_backward_test(struct kunit *test)
{
	struct real_timer *rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);
	ktime_t hour = 3600LL * NSEC_PER_SEC, t, rem;
	bool fired;

	KUNIT_ASSERT_NOT_NULL(test, rt);
	ensure_realtime_headroom(test);
	real_timer_init(test, rt, &ktimer_clock_realtime);
	t = ktime_get_real() + STEP_MARGIN;
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt->timer, &t, KTIMER_ABS), 0);
	step_realtime(test, -hour);
	rem = get_remtime_ktimer(&rt->timer, 0);
	KUNIT_EXPECT_EQ(test, rt->fired, 0);
	/* an hour plus what was left of STEP_MARGIN */
	KUNIT_EXPECT_GT(test, rem, hour);
	KUNIT_EXPECT_LE(test, rem, hour + STEP_MARGIN);

	step_realtime(test, hour + 2 * STEP_MARGIN);
	fired = wait_for_completion_timeout(&rt->done, WAIT_LIMIT);
	/* undo the extra step, keeping the time that really passed */
	step_realtime(test, -2 * STEP_MARGIN);
	if (!fired) {
		stop_ktimer(&rt->timer);
		KUNIT_FAIL(test, "timer did not fire after the clock came back");
		return;
	}
	KUNIT_EXPECT_GE(test, rt->seen_now, t);
}

/*
 * REALTIME sleeps on one CPU while another steps the clock forward, as
 * adjtimex(ADJ_SETOFFSET) does, every few hundred microseconds: each step
 * has clock_was_set() send the sleeper's CPU an IPI that reprograms its
 * REALTIME hrtimers, the ktimer wake-up event among them, while the
 * sleeper arms that event an hour ahead (a timer it then stops) and pulls
 * it in for a 2 ms sleep.  Issue 26 saw one boot hang after such a sleep;
 * a lost wake-up in this interleaving leaves a sleep that never ends.
 * Forward steps only: a sleep is then never seen to end early, whatever
 * step lands between its expiry and the check.
 */
#define RACE_SLEEPS	200
#define RACE_SLEEP	(2 * MS)
#define RACE_STEP	(10 * NSEC_PER_USEC)

struct race_sleeper {
	struct completion	done;
	struct ktimer		far;	/* arms the wake-up event an hour ahead */
	int			slept;
	int			early;
	int			cut;	/* sleeps that returned time left */
};

static int race_sleeper_thread(void *data)
{
	struct race_sleeper *rs = data;
	ktime_t hour = 3600LL * NSEC_PER_SEC;
	struct ktimer timer;

	allow_signal(SIGUSR1);
	ktimer_init_on_stack(&timer, &ktimer_clock_realtime);
	for (; rs->slept < RACE_SLEEPS && !signal_pending(current); rs->slept++) {
		ktime_t t = ktime_get_real() + RACE_SLEEP, want = t;

		start_ktimer(&rs->far, &hour, KTIMER_REL);
		if (schedule_ktimer(&timer, &t, TASK_INTERRUPTIBLE, KTIMER_ABS))
			rs->cut++;
		if (ktime_get_real() < want)
			rs->early++;
		stop_ktimer(&rs->far);
	}
	destroy_ktimer_on_stack(&timer);
	flush_signals(current);
	complete(&rs->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/* Step CLOCK_REALTIME by @ns, atomically, as adjtimex(ADJ_SETOFFSET) does */
static int step_realtime_by(s64 ns)
{
	struct timespec64 delta = ns_to_timespec64(ns);
	struct __kernel_timex tx = { .modes = ADJ_SETOFFSET | ADJ_NANO,
				     .time.tv_sec = delta.tv_sec,
				     .time.tv_usec = delta.tv_nsec };

	return do_adjtimex(&tx);
}

static void ktimer_realtime_sleeps_vs_clock_set_test(struct kunit *test)
{
	struct race_sleeper *rs = kunit_kzalloc(test, sizeof(*rs), GFP_KERNEL);
	unsigned int home = raw_smp_processor_id(), other;
	unsigned long deadline = jiffies + WAIT_LIMIT;
	struct task_struct *task;
	int steps = 0;
	bool ended;

	KUNIT_ASSERT_NOT_NULL(test, rs);
	other = cpumask_any_but(cpu_online_mask, home);
	if (other >= nr_cpu_ids)
		kunit_skip(test, "needs a second CPU");
	init_completion(&rs->done);
	ktimer_init(&rs->far, &ktimer_clock_realtime);
	stop_at_exit(test, &rs->far);
	task = kthread_create(race_sleeper_thread, rs, "ktimer-race");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	kthread_bind(task, other);
	get_task_struct(task);
	wake_up_process(task);
	while (!(ended = try_wait_for_completion(&rs->done)) &&
	       time_before(jiffies, deadline)) {
		KUNIT_EXPECT_GE(test, step_realtime_by(RACE_STEP), 0);
		steps++;
		usleep_range(200, 400);
	}
	if (!ended) {
		send_sig(SIGUSR1, task, 1);
		wait_for_completion(&rs->done);
	}
	kthread_stop(task);
	put_task_struct(task);
	/* give the clock its steps back; no sleeper is left to see it */
	KUNIT_EXPECT_GE(test, step_realtime_by(-(s64)steps * RACE_STEP), 0);

	KUNIT_EXPECT_TRUE_MSG(test, ended,
			      "sleep %d of %d did not end within %d s (%d steps)",
			      rs->slept + 1, RACE_SLEEPS, WAIT_LIMIT / HZ, steps);
	KUNIT_EXPECT_EQ(test, rs->slept, RACE_SLEEPS);
	KUNIT_EXPECT_EQ(test, rs->early, 0);
	KUNIT_EXPECT_EQ(test, rs->cut, 0);
	kunit_info(test, "%d sleeps, %d clock steps", rs->slept, steps);
}

/* ---- the leap second ---- */

/* The clock is set this far before midnight, and stopped this far before */
#define LEAP_LEAD	(1100 * MS)
#define LEAP_STOP	(200 * MS)

struct leap_saved {
	ktime_t	real_offset;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	long long maxerror;
	int	status;
	int	tai;
};

/* Clear the leap second and give the clocks their time back */
static void leap_restore(void *data)
{
	struct leap_saved *saved = data;
	struct __kernel_timex tx = { .modes = ADJ_STATUS | ADJ_MAXERROR,
				     .status = saved->status,
				     .maxerror = saved->maxerror };
	struct timespec64 ts;

	do_adjtimex(&tx);
	tx = (struct __kernel_timex){ .modes = ADJ_TAI, .constant = saved->tai };
	do_adjtimex(&tx);
	ts = ktime_to_timespec64(ktime_get() + saved->real_offset);
	do_settimeofday64(&ts);
}

struct leap_window {
	ktime_t	midnight;	/* CLOCK_REALTIME */
	ktime_t	until;		/* CLOCK_MONOTONIC, a bound on the wait */
	ktime_t	now;		/* the ktimer realtime clock in the window */
	bool	seen;
};

/*
 * Every CPU runs this with interrupts off (stop_machine()), so no tick can
 * apply the leap second: once ktime_get_real() reads midnight, the window
 * is open.  A clock that stands still with interrupts off ends the wait by
 * the loop count.
 */
static int leap_window_read(void *data)
{
	struct leap_window *w = data;
	unsigned long us;

	for (us = 0; us < 2 * USEC_PER_SEC && ktime_get() < w->until; us++) {
		if (ktime_get_real() >= w->midnight) {
			w->now = ktimer_clock_realtime.get_time();
			w->seen = true;
			break;
		}
		udelay(1);
	}
	return 0;
}

/*
 * An inserted leap second repeats 23:59:59, but the tick after the leap
 * edge applies it: until that tick ktime_get_real() reads the new day.
 * The leap-a-day selftest caught a realtime ktimer due at midnight
 * expiring in that window ("Early timer expiration!"), as hrtimers did
 * before "time: Prevent early expiry of hrtimers[CLOCK_REALTIME] at the
 * leap second edge" (2015).  The realtime clock of ktimers must read
 * 23:59:59 from the edge on, and the timer due at midnight must fire a
 * second of CLOCK_MONOTONIC after the edge.
 */
static void ktimer_leap_second_test(struct kunit *test)
{
	struct real_timer *rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);
	struct leap_saved *saved = kunit_kzalloc(test, sizeof(*saved), GFP_KERNEL);
	const s64 day = 24 * 3600LL * SEC;
	struct __kernel_timex tx = { };
	struct leap_window w = { };
	struct timespec64 ts;
	ktime_t mono, edge;
	int state;

	KUNIT_ASSERT_NOT_NULL(test, rt);
	KUNIT_ASSERT_NOT_NULL(test, saved);
	ensure_realtime_headroom(test);
	KUNIT_ASSERT_GE(test, do_adjtimex(&tx), 0);
	saved->status = tx.status;
	saved->maxerror = tx.maxerror;
	saved->tai = tx.tai;
	mono = ktime_get();
	saved->real_offset = ktime_get_real() - mono;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, leap_restore, saved), 0);

	w.midnight = (div_s64(div_s64(ktime_get_real(), NSEC_PER_SEC), 24 * 3600) + 2) * day;
	ts = ktime_to_timespec64(w.midnight - LEAP_LEAD);
	KUNIT_ASSERT_EQ(test, do_settimeofday64(&ts), 0);
	/* synchronised, or adjtimex() reports TIME_ERROR instead of the state */
	tx = (struct __kernel_timex){ .modes = ADJ_STATUS | ADJ_MAXERROR,
				      .status = STA_INS };
	KUNIT_ASSERT_GE(test, do_adjtimex(&tx), 0);
	/* monotonic first: the edge errs early, the check below errs lenient */
	mono = ktime_get();
	edge = w.midnight - (ktime_get_real() - mono);

	real_timer_init(test, rt, &ktimer_clock_realtime);
	KUNIT_ASSERT_EQ(test, start_ktimer(&rt->timer, &w.midnight, KTIMER_ABS), 0);

	/* NTP schedules the leap second at the next second boundary */
	do {
		tx = (struct __kernel_timex){ };
		state = do_adjtimex(&tx);
		if (state != TIME_INS)
			usleep_range(1000, 2000);
	} while (state != TIME_INS && ktime_get() < edge - LEAP_STOP);
	while (ktime_get() < edge - LEAP_STOP)
		usleep_range(1000, 2000);
	if (state != TIME_INS || ktime_get() >= edge)
		kunit_skip(test, "NTP state %d at %lld ms before the leap edge",
			   state, div_s64(edge - ktime_get(), NSEC_PER_MSEC));

	w.until = edge + 500 * MS;
	KUNIT_ASSERT_EQ(test, stop_machine(leap_window_read, &w, NULL), 0);
	KUNIT_ASSERT_TRUE_MSG(test, w.seen, "the clock did not reach the leap edge");
	KUNIT_EXPECT_LT_MSG(test, w.now, w.midnight,
			    "realtime read the new day in the inserted second");

	if (!wait_for_completion_timeout(&rt->done, WAIT_LIMIT)) {
		KUNIT_FAIL(test, "the timer due at midnight did not fire");
		return;
	}
	KUNIT_EXPECT_GE(test, ktime_get(), edge + SEC);
	KUNIT_EXPECT_GE(test, rt->seen_now, w.midnight);
}

/* ---- nanosleep with restart ---- */

struct nanosleeper {
	struct completion	asleep;
	struct completion	done;
	struct ktimer_clock	*clock;
	struct timespec64	rqtp;
	int			mode;
	long			ret;
	long			restart_ret;
	ktime_t			restart_expires;
	ktime_t			woke;
	unsigned int		slept_in;
	bool			restart_set;
};

static int nanosleep_thread(void *data)
{
	struct nanosleeper *s = data;
	struct restart_block *restart = &current->restart_block;

	allow_signal(SIGUSR1);
	restart->fn = NULL;
	restart->nanosleep.type = TT_NONE;
	complete(&s->asleep);
	s->ret = ktimer_nanosleep(s->clock, &s->rqtp, s->mode);
	flush_signals(current);
	s->restart_set = restart->fn;
	s->restart_expires = restart->nanosleep.expires;
	if (s->ret == -ERESTART_RESTARTBLOCK && restart->fn) {
		/* what the syscall restart does, after a shortened wait */
		restart->nanosleep.expires = ktimer_clock_now(s->clock) + 2 * MS;
		s->restart_ret = restart->fn(restart);
		s->woke = ktimer_clock_now(s->clock);
	}
	complete(&s->done);
	return 0;
}

static struct nanosleeper *interrupt_nanosleep(struct kunit *test,
					       struct ktimer_clock *clock,
					       struct timespec64 rqtp, int mode)
{
	struct nanosleeper *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	init_completion(&s->asleep);
	init_completion(&s->done);
	s->clock = clock;
	s->rqtp = rqtp;
	s->mode = mode;
	s->slept_in = run_and_signal(test, nanosleep_thread, s, &s->asleep,
				     &s->done);
	return s;
}

/* A relative sleep cut by a signal restarts until the same absolute end */
static void ktimer_nanosleep_restart_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	struct timespec64 rqtp = { 60, 0 };
	ktime_t before = ktimer_clock_now(clock);
	struct nanosleeper *s = interrupt_nanosleep(test, clock, rqtp, KTIMER_REL);

	KUNIT_EXPECT_EQ(test, s->ret, -ERESTART_RESTARTBLOCK);
	KUNIT_EXPECT_TRUE(test, s->restart_set);
	KUNIT_EXPECT_GE(test, s->restart_expires, before + 60LL * NSEC_PER_SEC);
	KUNIT_EXPECT_LE(test, s->restart_expires, ktimer_clock_now(clock) + 60LL * NSEC_PER_SEC);
	KUNIT_EXPECT_EQ(test, s->restart_ret, 0);
}

/* An absolute sleep is not restarted with a remaining time (POSIX) */
static void ktimer_nanosleep_abs_signal_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	struct timespec64 rqtp = ktime_to_timespec64(ktimer_clock_now(clock) +
						     60LL * NSEC_PER_SEC);
	struct nanosleeper *s = interrupt_nanosleep(test, clock, rqtp, KTIMER_ABS);

	KUNIT_EXPECT_EQ(test, s->ret, -ERESTARTNOHAND);
	KUNIT_EXPECT_FALSE(test, s->restart_set);
}

/*
 * nanosleep() sleeps freezable, as hrtimer_nanosleep() does: the freezer
 * then freezes the sleeper in place instead of waking it with a fake
 * signal, which user space would see as an EINTR or a restart.
 */
static void ktimer_nanosleep_freezable_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	struct timespec64 rqtp = { 60, 0 };
	struct nanosleeper *s = interrupt_nanosleep(test, clock, rqtp, KTIMER_REL);

	KUNIT_EXPECT_TRUE(test, s->slept_in & TASK_INTERRUPTIBLE);
	KUNIT_EXPECT_TRUE(test, s->slept_in & TASK_FREEZABLE);
}

/*
 * A signal cuts a relative sleep whose caller wants the time left (glibc
 * always passes rmtp): the time is copied out and the syscall restarts
 * (-ERESTART_RESTARTBLOCK; EINTR once a handler runs), as in
 * hrtimer_nanosleep().  The sleep runs in the test's own thread, which
 * kunit_vm_mmap() gives a user address space for rmtp.
 */
static void ktimer_nanosleep_copyout_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	struct restart_block *restart = &current->restart_block;
	struct timespec64 rqtp = { 60, 0 }, left = { -1, 0 };
	struct __kernel_timespec __user *rmtp;
	unsigned long addr;
	long ret, bad_ret;

	addr = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR_VALUE(addr) || !addr,
			       "no user memory for rmtp: %ld", (long)addr);
	rmtp = (struct __kernel_timespec __user *)addr;

	allow_signal(SIGUSR1);
	restart->nanosleep.type = TT_NATIVE;
	restart->nanosleep.rmtp = rmtp;
	/* pending before the sleep starts: it ends at once, time left */
	send_sig(SIGUSR1, current, 1);
	ret = ktimer_nanosleep(clock, &rqtp, KTIMER_REL);
	/* an unmapped rmtp: the time left cannot be stored */
	restart->nanosleep.rmtp = (struct __kernel_timespec __user *)16;
	send_sig(SIGUSR1, current, 1);
	bad_ret = ktimer_nanosleep(clock, &rqtp, KTIMER_REL);
	flush_signals(current);
	disallow_signal(SIGUSR1);
	restart->nanosleep.type = TT_NONE;
	restart->fn = do_no_restart_syscall;

	KUNIT_EXPECT_EQ(test, ret, -ERESTART_RESTARTBLOCK);
	KUNIT_EXPECT_EQ(test, get_timespec64(&left, rmtp), 0);
	KUNIT_EXPECT_GT(test, timespec64_to_ns(&left), 0);
	KUNIT_EXPECT_LE(test, timespec64_to_ns(&left), 60LL * NSEC_PER_SEC);
	KUNIT_EXPECT_EQ(test, bad_ret, -EFAULT);
}

static void ktimer_nanosleep_full_test(struct kunit *test)
{
	struct ktimer_clock *clock = param_clock(test);
	struct timespec64 rqtp = { 0, 2 * MS };
	ktime_t start = ktimer_clock_now(clock);

	int i;

	KUNIT_EXPECT_EQ(test, ktimer_nanosleep(clock, &rqtp, KTIMER_REL), 0);
	KUNIT_EXPECT_GE(test, ktimer_clock_now(clock) - start, 2 * MS);
	/* an absolute time in the past returns at once */
	rqtp = ktime_to_timespec64(start);
	KUNIT_EXPECT_EQ(test, ktimer_nanosleep(clock, &rqtp, KTIMER_ABS), 0);

	/* the request is rounded up to the resolution: a jiffy under lowres */
	for (i = 0; i < 5; i++) {
		rqtp = (struct timespec64){ 0, 1 };
		start = ktimer_clock_now(clock);
		KUNIT_EXPECT_EQ(test, ktimer_nanosleep(clock, &rqtp, KTIMER_REL), 0);
		KUNIT_EXPECT_GE(test, ktimer_clock_now(clock) - start,
				(ktime_t)ktimer_clock_resolution(clock));
	}
}

static void ktimer_nanosleep_invalid_test(struct kunit *test)
{
	struct timespec64 bad = { 0, NSEC_PER_SEC }, neg = { -1, 0 };
	struct timespec64 ok = { 0, 1 };

	KUNIT_EXPECT_EQ(test, ktimer_nanosleep_mono(&bad, KTIMER_REL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_nanosleep_mono(&neg, KTIMER_REL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_nanosleep_real(NULL, KTIMER_REL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_nanosleep_mono(&ok, KTIMER_INCR), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_nanosleep(NULL, &ok, KTIMER_REL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_nanosleep_real(&ok, KTIMER_REL), 0);
}

/* The cases run on every clock; only the idle case sleeps for seconds */
#define KUNIT_CASE_CLOCKS(name) KUNIT_CASE_PARAM(name, clock_gen_params)
#define KUNIT_CASE_CLOCKS_SLOW(name) \
	KUNIT_CASE_PARAM_ATTR(name, clock_gen_params, { .speed = KUNIT_SPEED_SLOW })

static struct kunit_case ktimer_realclock_cases[] = {
	KUNIT_CASE_CLOCKS(ktimer_fires_after_expiry_test),
	KUNIT_CASE_CLOCKS_SLOW(ktimer_idle_cpu_wakes_test),
	KUNIT_CASE_CLOCKS(ktimer_real_order_test),
	KUNIT_CASE_CLOCKS(ktimer_many_real_timers_test),
	KUNIT_CASE_CLOCKS(ktimer_real_periodic_stop_test),
	KUNIT_CASE_CLOCKS(ktimer_real_periodic_self_stop_test),
	KUNIT_CASE_CLOCKS(ktimer_schedule_rel_test),
	KUNIT_CASE_CLOCKS(ktimer_engine_resolution_test),
	KUNIT_CASE_CLOCKS(ktimer_wakeup_event_test),
	KUNIT_CASE_CLOCKS(ktimer_event_rearmed_after_idle_fire_test),
	KUNIT_CASE_SLOW(ktimer_schedule_uninterruptible_test),
	KUNIT_CASE(ktimer_schedule_abs_real_test),
	KUNIT_CASE(ktimer_schedule_signal_test),
	KUNIT_CASE(ktimer_clock_set_forward_test),
	KUNIT_CASE(ktimer_clock_set_backward_test),
	KUNIT_CASE_SLOW(ktimer_realtime_sleeps_vs_clock_set_test),
	KUNIT_CASE_SLOW(ktimer_leap_second_test),
	KUNIT_CASE_CLOCKS(ktimer_nanosleep_restart_test),
	KUNIT_CASE_CLOCKS(ktimer_nanosleep_abs_signal_test),
	KUNIT_CASE_CLOCKS(ktimer_nanosleep_freezable_test),
	KUNIT_CASE_CLOCKS(ktimer_nanosleep_copyout_test),
	KUNIT_CASE_CLOCKS(ktimer_nanosleep_full_test),
	KUNIT_CASE(ktimer_nanosleep_invalid_test),
	KUNIT_CASE(ktimer_try_stop_running_test),
	KUNIT_CASE(ktimer_modify_running_test),
	{}
};

static struct kunit_suite ktimer_realclock_suite = {
	.name = "ktimer_realclock",
	.init = pin_case_init,
	.test_cases = ktimer_realclock_cases,
};

kunit_test_suites(&ktimer_realclock_suite);

MODULE_DESCRIPTION("KUnit tests for ktimers on the real clocks");
MODULE_LICENSE("GPL");
