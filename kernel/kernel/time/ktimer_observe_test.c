// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for what ktimers show of themselves: the trace events and
 * the /sys/kernel/debug/ktimers listing.
 */

#include <kunit/test.h>
#include <kunit/visibility.h>
#include <linux/completion.h>
#include <linux/ktimer.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <trace/events/ktimer.h>

#include "ktimer_internal.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define WAIT_LIMIT	(30 * HZ)

struct observed {
	struct ktimer		timer;
	struct completion	done;
	int			inits;
	int			starts;
	int			entries;
	int			exits;
	int			cancels;
	int			mode;
	ktime_t			traced_expires;
	ktime_t			traced_now;
};

static void probe_init(void *data, struct ktimer *timer,
		       struct ktimer_clock *clock)
{
	struct observed *o = data;

	if (timer == &o->timer)
		o->inits++;
}

static void probe_start(void *data, struct ktimer *timer, int mode)
{
	struct observed *o = data;

	if (timer != &o->timer)
		return;
	o->starts++;
	o->mode = mode;
	o->traced_expires = timer->expires;
}

static void probe_entry(void *data, struct ktimer *timer, ktime_t now)
{
	struct observed *o = data;

	if (timer != &o->timer)
		return;
	o->entries++;
	o->traced_now = now;
}

static void probe_exit(void *data, struct ktimer *timer)
{
	struct observed *o = data;

	if (timer == &o->timer)
		o->exits++;
}

static void probe_cancel(void *data, struct ktimer *timer)
{
	struct observed *o = data;

	if (timer == &o->timer)
		o->cancels++;
}

static void observed_callback(void *data)
{
	complete(data);
}

static void unregister_probes(struct observed *o)
{
	unregister_trace_ktimer_init(probe_init, o);
	unregister_trace_ktimer_start(probe_start, o);
	unregister_trace_ktimer_expire_entry(probe_entry, o);
	unregister_trace_ktimer_expire_exit(probe_exit, o);
	unregister_trace_ktimer_cancel(probe_cancel, o);
	tracepoint_synchronize_unregister();
}

static void ktimer_trace_events_test(struct kunit *test)
{
	struct observed *o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
	ktime_t rel = NSEC_PER_MSEC, far = 3600LL * NSEC_PER_SEC;
	bool fired;

	KUNIT_ASSERT_NOT_NULL(test, o);
	if (!IS_ENABLED(CONFIG_TRACEPOINTS))
		kunit_skip(test, "needs CONFIG_TRACEPOINTS");
	init_completion(&o->done);
	KUNIT_ASSERT_EQ(test, register_trace_ktimer_init(probe_init, o), 0);
	KUNIT_ASSERT_EQ(test, register_trace_ktimer_start(probe_start, o), 0);
	KUNIT_ASSERT_EQ(test, register_trace_ktimer_expire_entry(probe_entry, o), 0);
	KUNIT_ASSERT_EQ(test, register_trace_ktimer_expire_exit(probe_exit, o), 0);
	KUNIT_ASSERT_EQ(test, register_trace_ktimer_cancel(probe_cancel, o), 0);

	init_ktimer_mono(&o->timer);
	o->timer.function = observed_callback;
	o->timer.data = &o->done;
	KUNIT_EXPECT_EQ(test, start_ktimer(&o->timer, &rel, KTIMER_REL), 0);
	fired = wait_for_completion_timeout(&o->done, WAIT_LIMIT);
	/* the exit event follows the callback: wait for the run to end */
	stop_ktimer(&o->timer);
	KUNIT_EXPECT_EQ(test, start_ktimer(&o->timer, &far, KTIMER_REL), 0);
	KUNIT_EXPECT_EQ(test, stop_ktimer(&o->timer), 1);
	unregister_probes(o);

	KUNIT_ASSERT_TRUE(test, fired);
	KUNIT_EXPECT_EQ(test, o->inits, 1);
	KUNIT_EXPECT_EQ(test, o->starts, 2);
	KUNIT_EXPECT_EQ(test, o->mode, KTIMER_REL);
	KUNIT_EXPECT_EQ(test, o->entries, 1);
	KUNIT_EXPECT_EQ(test, o->exits, 1);
	KUNIT_EXPECT_EQ(test, o->cancels, 1);
	/* the last start traced the expiry the timer still holds */
	KUNIT_EXPECT_EQ(test, o->traced_expires, o->timer.expires);
	KUNIT_EXPECT_GT(test, o->traced_now, 0);
}

static void debugfs_marker(void *data)
{
}

/* The listing names the engine, each clock, and a pending timer */
static void ktimer_debugfs_listing_test(struct kunit *test)
{
	struct seq_file m = { .size = 64 * 1024 };
	struct ktimer timer;
	ktime_t far = 3600LL * NSEC_PER_SEC;
	char expect[64];

	m.buf = kunit_kzalloc(test, m.size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m.buf);
	ktimer_init_on_stack(&timer, &ktimer_clock_realtime);
	timer.function = debugfs_marker;
	KUNIT_ASSERT_EQ(test, start_ktimer(&timer, &far, KTIMER_REL), 0);

	KUNIT_EXPECT_EQ(test, ktimer_debug_show(&m, NULL), 0);
	snprintf(expect, sizeof(expect), "expires %lld ", timer.expires);
	stop_ktimer(&timer);
	destroy_ktimer_on_stack(&timer);
	m.buf[min(m.count, m.size - 1)] = '\0';

	KUNIT_EXPECT_LT(test, m.count, m.size);
	KUNIT_EXPECT_NOT_NULL(test, strstr(m.buf, "resolution engine"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(m.buf, "users: "));
	KUNIT_EXPECT_NOT_NULL(test, strstr(m.buf, "clock monotonic"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(m.buf, "clock realtime"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(m.buf, "clock boottime"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(m.buf, "clock tai"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(m.buf, "debugfs_marker"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(m.buf, expect));
}

static struct kunit_case ktimer_observe_cases[] = {
	KUNIT_CASE(ktimer_trace_events_test),
	KUNIT_CASE(ktimer_debugfs_listing_test),
	{}
};

static struct kunit_suite ktimer_observe_suite = {
	.name = "ktimer_observe",
	.test_cases = ktimer_observe_cases,
};

kunit_test_suites(&ktimer_observe_suite);

MODULE_DESCRIPTION("KUnit tests for the ktimer trace events and debugfs file");
MODULE_LICENSE("GPL");
