// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for CONFIG_DEBUG_OBJECTS_KTIMERS: each case commits one of
 * the caller errors that debug objects catch, checks that it was caught
 * and repaired, and that the queue it could have corrupted still works.
 *
 * The debug objects core prints only its first five reports per boot, so
 * "caught" is read from ktimer_debug_fixups(), which counts the repairs.
 */

#include <kunit/test.h>
#include <linux/cpumask.h>
#include <linux/ktimer.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "ktimer_internal.h"
#include "ktimer_test.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define START	1000000LL

DEFINE_FAKE_CLOCK(debugobj_clock, 1);

struct debugobj_ctx {
	int	fired_a;	/* callbacks of the timer the case abuses */
	int	fired_b;	/* callbacks of a bystander in the same queue */
	struct ktimer *bystander;
};

static void count_a(void *data)
{
	((struct debugobj_ctx *)data)->fired_a++;
}

static void count_b(void *data)
{
	((struct debugobj_ctx *)data)->fired_b++;
}

static void run_until(ktime_t t)
{
	WRITE_ONCE(debugobj_clock_now, t);
	ktimer_run_clock(&debugobj_clock);
}

static void start_at(struct kunit *test, struct ktimer *timer, ktime_t t)
{
	KUNIT_ASSERT_EQ(test, start_ktimer(timer, &t, KTIMER_ABS), 0);
}

static int debugobj_suite_init(struct kunit_suite *suite)
{
	return ktimer_register_clock(&debugobj_clock);
}

static void debugobj_suite_exit(struct kunit_suite *suite)
{
	ktimer_unregister_clock(&debugobj_clock);
}

/*
 * Every case queues a bystander timer after the abused one: if the repair
 * left a stale node behind, running the queue would trip over it.
 */
static int debugobj_case_init(struct kunit *test)
{
	struct debugobj_ctx *ctx;

	if (!IS_ENABLED(CONFIG_DEBUG_OBJECTS_KTIMERS))
		kunit_skip(test, "needs CONFIG_DEBUG_OBJECTS_KTIMERS");

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->bystander = kunit_kzalloc(test, sizeof(*ctx->bystander),
				       GFP_KERNEL);
	if (!ctx->bystander)
		return -ENOMEM;
	test->priv = ctx;
	WRITE_ONCE(debugobj_clock_now, START);
	ktimer_init(ctx->bystander, &debugobj_clock);
	ctx->bystander->function = count_b;
	ctx->bystander->data = ctx;
	/* Timers go to the starting CPU's queue: stay on one CPU */
	return set_cpus_allowed_ptr(current, cpumask_of(raw_smp_processor_id()));
}

static void debugobj_case_exit(struct kunit *test)
{
	struct debugobj_ctx *ctx = test->priv;

	if (ctx)
		stop_ktimer(ctx->bystander);
}

/* Queue @timer, due first, and the bystander after it */
static void queue_with_bystander(struct kunit *test, struct ktimer *timer)
{
	struct debugobj_ctx *ctx = test->priv;

	start_at(test, timer, START + 10);
	start_at(test, ctx->bystander, START + 20);
}

/* The queue holds the bystander alone and runs it once, at its time */
static void expect_queue_intact(struct kunit *test, ktime_t bystander_at)
{
	struct debugobj_ctx *ctx = test->priv;

	KUNIT_EXPECT_EQ(test, ktimer_clock_pending(&debugobj_clock), 1);
	KUNIT_EXPECT_TRUE(test, ktimer_active(ctx->bystander));
	run_until(bystander_at);
	KUNIT_EXPECT_EQ(test, ctx->fired_a, 0);
	KUNIT_EXPECT_EQ(test, ctx->fired_b, 1);
	KUNIT_EXPECT_EQ(test, ktimer_clock_pending(&debugobj_clock), 0);
}

static struct ktimer *new_abused_timer(struct kunit *test)
{
	struct ktimer *timer = kzalloc(sizeof(*timer), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, timer);
	ktimer_init(timer, &debugobj_clock);
	timer->function = count_a;
	timer->data = test->priv;
	return timer;
}

/* ktimer_init() on a pending timer stops it instead of clearing its node */
static void ktimer_debugobj_reinit_pending_test(struct kunit *test)
{
	struct debugobj_ctx *ctx = test->priv;
	struct ktimer *timer = new_abused_timer(test);
	unsigned int before = ktimer_debug_fixups(KTIMER_FIXUP_INIT);

	queue_with_bystander(test, timer);

	expect_warning_begin(test);
	ktimer_init(timer, &debugobj_clock);
	expect_warning_end(test);

	KUNIT_EXPECT_EQ(test, ktimer_debug_fixups(KTIMER_FIXUP_INIT),
			before + 1);
	KUNIT_EXPECT_FALSE(test, ktimer_active(timer));
	expect_queue_intact(test, START + 20);

	/* and the re-initialised timer works like a new one */
	timer->function = count_a;
	timer->data = ctx;
	start_at(test, timer, START + 30);
	run_until(START + 30);
	KUNIT_EXPECT_EQ(test, ctx->fired_a, 1);
	kfree(timer);
}

/* Freeing a pending timer takes it out of its queue first */
static void ktimer_debugobj_free_pending_test(struct kunit *test)
{
	unsigned int before = ktimer_debug_fixups(KTIMER_FIXUP_FREE);
	struct ktimer *timer;

	/* without it kfree() checks nothing and would free a queued node */
	if (!IS_ENABLED(CONFIG_DEBUG_OBJECTS_FREE))
		kunit_skip(test, "needs CONFIG_DEBUG_OBJECTS_FREE");
	timer = new_abused_timer(test);
	queue_with_bystander(test, timer);

	expect_warning_begin(test);
	kfree(timer);
	expect_warning_end(test);

	KUNIT_EXPECT_EQ(test, ktimer_debug_fixups(KTIMER_FIXUP_FREE),
			before + 1);
	expect_queue_intact(test, START + 20);
}

/* The same for a timer on the stack that is destroyed while pending */
static void ktimer_debugobj_destroy_pending_on_stack_test(struct kunit *test)
{
	struct debugobj_ctx *ctx = test->priv;
	unsigned int before = ktimer_debug_fixups(KTIMER_FIXUP_FREE);
	struct ktimer timer;

	ktimer_init_on_stack(&timer, &debugobj_clock);
	timer.function = count_a;
	timer.data = ctx;
	queue_with_bystander(test, &timer);

	expect_warning_begin(test);
	destroy_ktimer_on_stack(&timer);
	expect_warning_end(test);

	KUNIT_EXPECT_EQ(test, ktimer_debug_fixups(KTIMER_FIXUP_FREE),
			before + 1);
	KUNIT_EXPECT_FALSE(test, ktimer_active(&timer));
	expect_queue_intact(test, START + 20);
}

/*
 * Memory that never went through ktimer_init(), full of slab poison: the
 * first call is refused and leaves an unbound timer, not a wild pointer.
 */
static void ktimer_debugobj_uninitialised_test(struct kunit *test)
{
	struct debugobj_ctx *ctx = test->priv;
	unsigned int before = ktimer_debug_fixups(KTIMER_FIXUP_ASSERT_INIT);
	struct ktimer *timer = kmalloc(sizeof(*timer), GFP_KERNEL);
	ktime_t rel = 10;

	KUNIT_ASSERT_NOT_NULL(test, timer);
	memset(timer, 0x6b, sizeof(*timer));
	start_at(test, ctx->bystander, START + 20);

	expect_warning_begin(test);
	KUNIT_EXPECT_EQ(test, start_ktimer(timer, &rel, KTIMER_REL), -EINVAL);
	expect_warning_end(test);

	KUNIT_EXPECT_EQ(test, ktimer_debug_fixups(KTIMER_FIXUP_ASSERT_INIT),
			before + 1);
	KUNIT_EXPECT_PTR_EQ(test, timer->base, NULL);
	KUNIT_EXPECT_FALSE(test, ktimer_active(timer));
	/* reported once: the repaired timer is known now */
	expect_warning_begin(test);
	KUNIT_EXPECT_EQ(test, try_to_stop_ktimer(timer), -EINVAL);
	expect_warning_end(test);
	KUNIT_EXPECT_EQ(test, ktimer_debug_fixups(KTIMER_FIXUP_ASSERT_INIT),
			before + 1);
	expect_queue_intact(test, START + 20);
	kfree(timer);
}

static struct kunit_case ktimer_debugobj_cases[] = {
	KUNIT_CASE(ktimer_debugobj_reinit_pending_test),
	KUNIT_CASE(ktimer_debugobj_free_pending_test),
	KUNIT_CASE(ktimer_debugobj_destroy_pending_on_stack_test),
	KUNIT_CASE(ktimer_debugobj_uninitialised_test),
	{}
};

static struct kunit_suite ktimer_debugobj_suite = {
	.name = "ktimer_debugobjects",
	.suite_init = debugobj_suite_init,
	.suite_exit = debugobj_suite_exit,
	.init = debugobj_case_init,
	.exit = debugobj_case_exit,
	.test_cases = ktimer_debugobj_cases,
};

kunit_test_suites(&ktimer_debugobj_suite);

MODULE_DESCRIPTION("KUnit tests for ktimer debug objects");
MODULE_LICENSE("GPL");
