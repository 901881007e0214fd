// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for what ktimers show of themselves: the trace events, the
 * /sys/kernel/debug/ktimers listing and its console copy, the watchdog's
 * scan for overdue timers, and the lock round trips lockdep counts.
 */

#include <kunit/test.h>
#include <kunit/visibility.h>
#include <linux/align.h>
#include <linux/bottom_half.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/kernel.h>
#include <linux/ktimer.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/trace.h>
#include <linux/trace_events.h>
#include <linux/tracepoint.h>
#include <trace/events/printk.h>

#include "ktimer_internal.h"
#include "ktimer_test.h"

#ifdef CONFIG_LOCKDEP
#include <trace/events/lock.h>
#endif

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define WAIT_LIMIT	(30 * HZ)

#ifdef CONFIG_EVENT_TRACING

/*
 * The trace events are checked in what they recorded: the entries that
 * their TP_fast_assign() wrote for the trace buffer, not the tracepoint's
 * arguments.  A trace export (TRACE_EXPORT_EVENT) is handed each event
 * as it is committed to the top-level buffer, and the fields are found in
 * it the way the event's format file describes them: by name, at the
 * offsets that trace_event_raw_init() gives them.
 */
enum {
	EV_INIT,
	EV_START,
	EV_ENTRY,
	EV_EXIT,
	EV_CANCEL,
	EV_KINDS
};

static const char * const event_names[EV_KINDS] = {
	[EV_INIT]	= "ktimer_init",
	[EV_START]	= "ktimer_start",
	[EV_ENTRY]	= "ktimer_expire_entry",
	[EV_EXIT]	= "ktimer_expire_exit",
	[EV_CANCEL]	= "ktimer_cancel",
};

/* Enough for every ktimer event's entry */
#define RECORD_MAX	64

struct record {
	unsigned int	size;
	int		seq;		/* place among the recorded events */
	u8		data[RECORD_MAX];
};

struct recorded {
	int		count;
	struct record	first;
	struct record	last;
};

struct observed {
	struct ktimer		timer;
	struct completion	done;
	struct trace_export	export;
	raw_spinlock_t		lock;
	struct trace_event_file	*file[EV_KINDS];
	int			id[EV_KINDS];
	int			timer_offset[EV_KINDS];
	bool			enabled[EV_KINDS];	/* by this test */
	bool			exporting;
	bool			tracing_was_off;
	int			seq;
	struct recorded		rec[EV_KINDS];
};

/*
 * Offset and size of field @name in the entries of @call, laid out as
 * trace_event_raw_init() lays them out: after the common fields, each
 * aligned to its type.  -1 if the event has no such field.
 */
static int field_offset(struct trace_event_call *call, const char *name,
			int *size)
{
	const struct trace_event_fields *field = call->class->fields_array;
	unsigned int offset = sizeof(struct trace_entry);

	for (; field && field->type; field++) {
		if (field->type == TRACE_FUNCTION_TYPE)
			return -1;
		offset = ALIGN(offset, field->align);
		if (!strcmp(field->name, name)) {
			*size = field->size;
			return offset;
		}
		offset += field->size;
	}
	return -1;
}

static void keep_record(struct record *rec, int seq, const void *entry,
			unsigned int size)
{
	rec->seq = seq;
	rec->size = min_t(unsigned int, size, RECORD_MAX);
	memcpy(rec->data, entry, rec->size);
}

/* Called for every event committed to the top-level trace buffer */
static void record_event(struct trace_export *export, const void *entry,
			 unsigned int size)
{
	struct observed *o = container_of(export, struct observed, export);
	const struct trace_entry *ent = entry;
	struct recorded *rec;
	unsigned long flags;
	void *timer;
	int ev;

	for (ev = 0; ev < EV_KINDS; ev++) {
		if (ent->type == o->id[ev])
			break;
	}
	if (ev == EV_KINDS || o->timer_offset[ev] + sizeof(timer) > size)
		return;
	memcpy(&timer, (const u8 *)entry + o->timer_offset[ev], sizeof(timer));
	if (timer != &o->timer)
		return;

	raw_spin_lock_irqsave(&o->lock, flags);
	rec = &o->rec[ev];
	if (!rec->count++)
		keep_record(&rec->first, o->seq + 1, entry, size);
	keep_record(&rec->last, ++o->seq, entry, size);
	raw_spin_unlock_irqrestore(&o->lock, flags);
}

/* Undo observe_start(), whatever part of it was done */
static void observe_stop(void *data)
{
	struct observed *o = data;
	int ev;

	for (ev = 0; ev < EV_KINDS; ev++) {
		if (o->enabled[ev])
			trace_set_clr_event("ktimer", event_names[ev], 0);
	}
	if (o->tracing_was_off)
		tracing_off();
	if (o->exporting) {
		unregister_ftrace_export(&o->export);
		/* ftrace_exports() walks the list with preemption off */
		synchronize_rcu();
	}
	for (ev = 0; ev < EV_KINDS; ev++) {
		if (!IS_ERR_OR_NULL(o->file[ev]))
			trace_put_event_file(o->file[ev]);
	}
}

/* Record what the ktimer events of @o->timer write to the trace buffer */
static void observe_start(struct kunit *test, struct observed *o)
{
	int ev, size;

	raw_spin_lock_init(&o->lock);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, observe_stop, o),
			0);
	for (ev = 0; ev < EV_KINDS; ev++) {
		struct trace_event_call *call;

		o->file[ev] = trace_get_event_file(NULL, "ktimer",
						   event_names[ev]);
		KUNIT_ASSERT_NOT_ERR_OR_NULL_MSG(test, o->file[ev], "no event %s",
						 event_names[ev]);
		call = o->file[ev]->event_call;
		o->id[ev] = call->event.type;
		o->timer_offset[ev] = field_offset(call, "timer", &size);
		KUNIT_ASSERT_GE_MSG(test, o->timer_offset[ev], 0,
				    "%s records no timer", event_names[ev]);
		KUNIT_ASSERT_EQ(test, size, (int)sizeof(void *));
	}

	o->export.write = record_event;
	o->export.flags = TRACE_EXPORT_EVENT;
	KUNIT_ASSERT_EQ(test, register_ftrace_export(&o->export), 0);
	o->exporting = true;
	for (ev = 0; ev < EV_KINDS; ev++) {
		if (o->file[ev]->flags & EVENT_FILE_FL_ENABLED)
			continue;
		KUNIT_ASSERT_EQ(test, trace_set_clr_event("ktimer",
							  event_names[ev], 1),
				0);
		o->enabled[ev] = true;
	}
	/* a buffer that records nothing commits nothing */
	if (!tracing_is_on()) {
		o->tracing_was_off = true;
		tracing_on();
	}
}

/* Field @name of a recorded event, which must be @size bytes */
static bool recorded_field(struct kunit *test, struct observed *o, int ev,
			   const struct record *rec, const char *name,
			   void *val, int size)
{
	int field_size = 0;
	int offset = field_offset(o->file[ev]->event_call, name, &field_size);

	if (offset < 0 || field_size != size ||
	    offset + size > (int)rec->size) {
		KUNIT_FAIL(test, "%s: no %d-byte field %s in the %u recorded bytes",
			   event_names[ev], size, name, rec->size);
		return false;
	}
	memcpy(val, rec->data + offset, size);
	return true;
}

static s64 recorded_s64(struct kunit *test, struct observed *o, int ev,
			const struct record *rec, const char *name)
{
	s64 val = 0;

	recorded_field(test, o, ev, rec, name, &val, sizeof(val));
	return val;
}

static int recorded_int(struct kunit *test, struct observed *o, int ev,
			const struct record *rec, const char *name)
{
	int val = 0;

	recorded_field(test, o, ev, rec, name, &val, sizeof(val));
	return val;
}

static void *recorded_ptr(struct kunit *test, struct observed *o, int ev,
			  const struct record *rec, const char *name)
{
	void *val = NULL;

	recorded_field(test, o, ev, rec, name, &val, sizeof(val));
	return val;
}

static void observed_callback(void *data)
{
	complete(data);
}

/*
 * Init, a start that expires, a start that is cancelled: each event
 * recorded once or twice, in that order, with the fields the timer had.
 */
static void ktimer_trace_events_test(struct kunit *test)
{
	struct observed *o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
	ktime_t rel = NSEC_PER_MSEC, far, first_expires, interval;
	struct recorded *rec;
	bool fired;

	KUNIT_ASSERT_NOT_NULL(test, o);
	init_completion(&o->done);
	observe_start(test, o);

	init_ktimer_mono(&o->timer);
	o->timer.function = observed_callback;
	o->timer.data = &o->done;
	KUNIT_EXPECT_EQ(test, start_ktimer(&o->timer, &rel, KTIMER_REL), 0);
	first_expires = o->timer.expires;
	fired = wait_for_completion_timeout(&o->done, WAIT_LIMIT);
	/* the exit event follows the callback: wait for the run to end */
	stop_ktimer(&o->timer);
	/* periodic and absolute this time, so that every field differs */
	interval = 7LL * NSEC_PER_SEC;
	o->timer.interval = interval;
	far = ktime_get() + 3600LL * NSEC_PER_SEC;
	KUNIT_EXPECT_EQ(test, start_ktimer(&o->timer, &far, KTIMER_ABS), 0);
	KUNIT_EXPECT_EQ(test, stop_ktimer(&o->timer), 1);

	KUNIT_ASSERT_TRUE(test, fired);
	KUNIT_EXPECT_EQ(test, o->rec[EV_INIT].count, 1);
	KUNIT_EXPECT_EQ(test, o->rec[EV_START].count, 2);
	KUNIT_EXPECT_EQ(test, o->rec[EV_ENTRY].count, 1);
	KUNIT_EXPECT_EQ(test, o->rec[EV_EXIT].count, 1);
	KUNIT_EXPECT_EQ(test, o->rec[EV_CANCEL].count, 1);

	/* in the order they happened */
	KUNIT_EXPECT_LT(test, o->rec[EV_INIT].last.seq,
			o->rec[EV_START].first.seq);
	KUNIT_EXPECT_LT(test, o->rec[EV_START].first.seq,
			o->rec[EV_ENTRY].last.seq);
	KUNIT_EXPECT_LT(test, o->rec[EV_ENTRY].last.seq,
			o->rec[EV_EXIT].last.seq);
	KUNIT_EXPECT_LT(test, o->rec[EV_EXIT].last.seq,
			o->rec[EV_START].last.seq);
	KUNIT_EXPECT_LT(test, o->rec[EV_START].last.seq,
			o->rec[EV_CANCEL].last.seq);

	rec = &o->rec[EV_INIT];
	KUNIT_EXPECT_EQ(test, recorded_int(test, o, EV_INIT, &rec->last,
					   "clockid"), CLOCK_MONOTONIC);

	rec = &o->rec[EV_START];
	KUNIT_EXPECT_PTR_EQ(test, recorded_ptr(test, o, EV_START, &rec->first,
					       "function"),
			    (void *)observed_callback);
	KUNIT_EXPECT_EQ(test, recorded_s64(test, o, EV_START, &rec->first,
					   "expires"), first_expires);
	KUNIT_EXPECT_EQ(test, recorded_s64(test, o, EV_START, &rec->first,
					   "interval"), 0);
	KUNIT_EXPECT_EQ(test, recorded_int(test, o, EV_START, &rec->first,
					   "mode"), KTIMER_REL);
	KUNIT_EXPECT_EQ(test, recorded_s64(test, o, EV_START, &rec->last,
					   "expires"), far);
	KUNIT_EXPECT_EQ(test, recorded_s64(test, o, EV_START, &rec->last,
					   "interval"), interval);
	KUNIT_EXPECT_EQ(test, recorded_int(test, o, EV_START, &rec->last,
					   "mode"), KTIMER_ABS);

	/* the expiry it ran for, and the time the run read (->expired) */
	rec = &o->rec[EV_ENTRY];
	KUNIT_EXPECT_PTR_EQ(test, recorded_ptr(test, o, EV_ENTRY, &rec->last,
					       "function"),
			    (void *)observed_callback);
	KUNIT_EXPECT_EQ(test, recorded_s64(test, o, EV_ENTRY, &rec->last,
					   "expires"), first_expires);
	KUNIT_EXPECT_EQ(test, recorded_s64(test, o, EV_ENTRY, &rec->last,
					   "now"), o->timer.expired);
	KUNIT_EXPECT_GE(test, recorded_s64(test, o, EV_ENTRY, &rec->last,
					   "now"), first_expires);
}

#else /* !CONFIG_EVENT_TRACING */

static void ktimer_trace_events_test(struct kunit *test)
{
	kunit_skip(test, "needs CONFIG_EVENT_TRACING");
}

#endif /* CONFIG_EVENT_TRACING */

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

DEFINE_FAKE_CLOCK(watched_clock, 1);

static void unregister_watched_clock(void *unused)
{
	WARN_ON(ktimer_unregister_clock(&watched_clock));
}

/*
 * The watchdog's scan: a timer is overdue by how long its queue holds it
 * past its expiry, on the clock it is queued on; stopped, it is not.
 */
static void ktimer_watchdog_overdue_test(struct kunit *test)
{
	ktime_t expiry = 10LL * NSEC_PER_SEC, late = 3600LL * NSEC_PER_SEC;
	unsigned int cpu = raw_smp_processor_id();
	struct ktimer_overdue worst;
	struct ktimer timer;
	int ret;

	/* the timer goes to this CPU's queue */
	ret = set_cpus_allowed_ptr(current, cpumask_of(cpu));
	KUNIT_ASSERT_EQ(test, ret, 0);
	WRITE_ONCE(watched_clock_now, NSEC_PER_SEC);
	KUNIT_ASSERT_EQ(test, ktimer_register_clock(&watched_clock), 0);
	ret = kunit_add_action_or_reset(test, unregister_watched_clock, NULL);
	KUNIT_ASSERT_EQ(test, ret, 0);
	ktimer_init_on_stack(&timer, &watched_clock);
	timer.function = debugfs_marker;

	KUNIT_EXPECT_EQ(test, ktimer_overdue(&watched_clock, &worst), 0);
	KUNIT_ASSERT_EQ(test, start_ktimer(&timer, &expiry, KTIMER_ABS), 0);
	KUNIT_EXPECT_EQ(test, ktimer_overdue(&watched_clock, &worst), 0);
	WRITE_ONCE(watched_clock_now, expiry);
	KUNIT_EXPECT_EQ(test, ktimer_overdue(&watched_clock, &worst), 0);

	WRITE_ONCE(watched_clock_now, expiry + late);
	KUNIT_EXPECT_EQ(test, ktimer_overdue(&watched_clock, &worst), late);
	KUNIT_EXPECT_EQ(test, worst.late, late);
	KUNIT_EXPECT_EQ(test, worst.cpu, cpu);
	KUNIT_EXPECT_TRUE(test, worst.function == debugfs_marker);
	KUNIT_EXPECT_STREQ(test, worst.clock, "watched_clock");
	/* The scan of the softirq's clocks does not see a manual clock */
	KUNIT_EXPECT_LT(test, ktimer_overdue(NULL, &worst), late / 2);

	stop_ktimer(&timer);
	KUNIT_EXPECT_EQ(test, ktimer_overdue(&watched_clock, &worst), 0);
	destroy_ktimer_on_stack(&timer);
}

/*
 * A stall is printed when two scans in a row find a timer more than the
 * limit overdue (one scan may fall between a step of CLOCK_REALTIME and
 * the run that follows it), and once until a scan finds none.
 */
static void ktimer_watchdog_report_test(struct kunit *test)
{
	struct ktimer_watchdog_state state = {};
	const s64 limit = 10LL * NSEC_PER_SEC;

	KUNIT_EXPECT_FALSE(test, ktimer_watchdog_report(&state, 0, limit));
	KUNIT_EXPECT_FALSE(test, ktimer_watchdog_report(&state, limit, limit));
	KUNIT_EXPECT_FALSE(test, ktimer_watchdog_report(&state, limit, limit));
	KUNIT_EXPECT_FALSE(test, ktimer_watchdog_report(&state, limit + 1, limit));
	KUNIT_EXPECT_TRUE(test, ktimer_watchdog_report(&state, limit + 1, limit));
	KUNIT_EXPECT_FALSE(test, ktimer_watchdog_report(&state, 2 * limit, limit));
	KUNIT_EXPECT_FALSE(test, ktimer_watchdog_report(&state, 3 * limit, limit));
	/* a scan without a stall ends it: the next one is printed */
	KUNIT_EXPECT_FALSE(test, ktimer_watchdog_report(&state, 0, limit));
	KUNIT_EXPECT_FALSE(test, ktimer_watchdog_report(&state, 2 * limit, limit));
	KUNIT_EXPECT_TRUE(test, ktimer_watchdog_report(&state, 2 * limit, limit));
	/* a step: overdue at one scan only */
	KUNIT_EXPECT_FALSE(test, ktimer_watchdog_report(&state, 0, limit));
	KUNIT_EXPECT_FALSE(test, ktimer_watchdog_report(&state, 3600 * limit, limit));
	KUNIT_EXPECT_FALSE(test, ktimer_watchdog_report(&state, 0, limit));
}

#ifdef CONFIG_TRACEPOINTS

/* What the test's own task printed, through printk's console tracepoint */
static struct {
	struct task_struct	*task;
	char			*buf;
	size_t			size;
	size_t			len;
} printed;

static void record_printed(void *data, const char *text, size_t len)
{
	if (current != READ_ONCE(printed.task) ||
	    printed.len + len + 2 > printed.size)
		return;
	memcpy(printed.buf + printed.len, text, len);
	printed.len += len;
	printed.buf[printed.len++] = '\n';
	printed.buf[printed.len] = '\0';
}

/* The watchdog's report lists the bases on the console as the file does */
static void ktimer_console_listing_test(struct kunit *test)
{
	ktime_t far = 3600LL * NSEC_PER_SEC;
	struct ktimer timer;
	char expect[64];

	printed.size = 64 * 1024;
	printed.buf = kunit_kzalloc(test, printed.size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, printed.buf);
	printed.len = 0;
	ktimer_init_on_stack(&timer, &ktimer_clock_realtime);
	timer.function = debugfs_marker;
	KUNIT_ASSERT_EQ(test, start_ktimer(&timer, &far, KTIMER_REL), 0);
	snprintf(expect, sizeof(expect), "expires %lld ", timer.expires);

	KUNIT_ASSERT_EQ(test, register_trace_console(record_printed, NULL), 0);
	WRITE_ONCE(printed.task, current);
	KUNIT_EXPECT_EQ(test, ktimer_debug_show(NULL, NULL), 0);
	WRITE_ONCE(printed.task, NULL);
	unregister_trace_console(record_printed, NULL);
	tracepoint_synchronize_unregister();
	stop_ktimer(&timer);
	destroy_ktimer_on_stack(&timer);

	KUNIT_EXPECT_NOT_NULL(test, strstr(printed.buf, "resolution engine"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(printed.buf, "clock monotonic"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(printed.buf, "clock realtime"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(printed.buf, "debugfs_marker"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(printed.buf, expect));
}

#else /* !CONFIG_TRACEPOINTS */

static void ktimer_console_listing_test(struct kunit *test)
{
	kunit_skip(test, "needs CONFIG_TRACEPOINTS (printk's console tracepoint)");
}

#endif /* CONFIG_TRACEPOINTS */

#ifdef CONFIG_LOCKDEP

/*
 * Acquisitions of the timer bases' locks, counted through lockdep's
 * lock_acquire tracepoint: the ktimer base's lock, and the hrtimer CPU
 * base's lock, which hrtimers take and a ktimer takes to arm its wake-up
 * event.  Only acquisitions on the counting CPU count, and the operations
 * run with interrupts off there, so nothing else adds to the count.
 */
static struct {
	const struct lockdep_map *ktimer_lock;
	const struct lockdep_map *hrtimer_lock;
	int cpu;
	unsigned int count;
} lock_count = { .cpu = -1 };

static void count_timer_lock(void *data, struct lockdep_map *lock,
			     unsigned int subclass, int trylock, int read,
			     int check, struct lockdep_map *next_lock,
			     unsigned long ip)
{
	if (raw_smp_processor_id() == READ_ONCE(lock_count.cpu) && in_task() &&
	    (lock == lock_count.ktimer_lock || lock == lock_count.hrtimer_lock))
		lock_count.count++;
}

static enum hrtimer_restart lock_count_hrtimer_fn(struct hrtimer *timer)
{
	return HRTIMER_NORESTART;
}

static void lock_count_ktimer_fn(void *data)
{
}

struct lock_case {
	struct ktimer	earlier;	/* keeps the wake-up event armed */
	struct ktimer	ktimer;
	struct hrtimer	hrtimer;
};

#define COUNT_LOCKS(ops) ({ lock_count.count = 0; ops; lock_count.count; })

/*
 * Timer-base lock round trips per operation, for ktimers and hrtimers in
 * the same way: a start and a stop take one each (the wake-up event is
 * armed for an earlier timer already), as an hrtimer start and cancel do;
 * a modify of a pending timer takes one.  A start that becomes the new
 * earliest expiry takes one more, the hrtimer base's, to re-arm the
 * wake-up event: the price of running on top of hrtimers.  An expiry run
 * with nothing due (the timer wheel raises the softirq too) takes the
 * base's lock once and leaves the armed event alone.
 */
static void ktimer_lock_round_trips_test(struct kunit *test)
{
	struct lock_case *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	unsigned int start_stop[2], modify[2], earliest[2], idle_run;
	ktime_t now = ktime_get(), hour = 3600LL * NSEC_PER_SEC;
	ktime_t earlier = now + hour, later = now + 2 * hour;
	ktime_t latest = now + 3 * hour, past = 1;
	const struct cpumask *here;
	unsigned long flags;

	KUNIT_ASSERT_NOT_NULL(test, c);
	here = cpumask_of(raw_smp_processor_id());
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, here), 0);
	KUNIT_ASSERT_EQ(test, register_trace_lock_acquire(count_timer_lock, NULL), 0);

	local_irq_save(flags);
	init_ktimer_mono(&c->earlier);
	init_ktimer_mono(&c->ktimer);
	c->earlier.function = lock_count_ktimer_fn;
	c->ktimer.function = lock_count_ktimer_fn;
	hrtimer_init(&c->hrtimer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_PINNED);
	c->hrtimer.function = lock_count_hrtimer_fn;
	start_ktimer(&c->earlier, &earlier, KTIMER_ABS);
	lock_count.ktimer_lock = &c->ktimer.base->lock.dep_map;
	lock_count.hrtimer_lock = &c->hrtimer.base->cpu_base->lock.dep_map;
	WRITE_ONCE(lock_count.cpu, smp_processor_id());

	start_stop[0] = COUNT_LOCKS(start_ktimer(&c->ktimer, &later, KTIMER_ABS);
				    try_to_stop_ktimer(&c->ktimer));
	start_stop[1] = COUNT_LOCKS(hrtimer_start(&c->hrtimer, later,
						  HRTIMER_MODE_ABS_PINNED);
				    hrtimer_try_to_cancel(&c->hrtimer));
	start_ktimer(&c->ktimer, &later, KTIMER_ABS);
	hrtimer_start(&c->hrtimer, later, HRTIMER_MODE_ABS_PINNED);
	modify[0] = COUNT_LOCKS(modify_ktimer(&c->ktimer, &latest, KTIMER_ABS));
	modify[1] = COUNT_LOCKS(hrtimer_start(&c->hrtimer, latest,
					      HRTIMER_MODE_ABS_PINNED));
	try_to_stop_ktimer(&c->ktimer);
	hrtimer_try_to_cancel(&c->hrtimer);
	WRITE_ONCE(lock_count.cpu, -1);
	local_irq_restore(flags);

	/* Bottom halves off, as in the softirq; interrupts are not counted */
	local_bh_disable();
	WRITE_ONCE(lock_count.cpu, smp_processor_id());
	idle_run = COUNT_LOCKS(ktimer_run_queues());
	WRITE_ONCE(lock_count.cpu, -1);
	local_bh_enable();

	local_irq_save(flags);
	WRITE_ONCE(lock_count.cpu, smp_processor_id());
	/* Long past, NOCHECK: earlier than anything, fires only once irqs are on */
	earliest[0] = COUNT_LOCKS(start_ktimer(&c->ktimer, &past,
					       KTIMER_ABS | KTIMER_NOCHECK);
				  try_to_stop_ktimer(&c->ktimer));
	earliest[1] = COUNT_LOCKS(hrtimer_start(&c->hrtimer, past,
						HRTIMER_MODE_ABS_PINNED);
				  hrtimer_try_to_cancel(&c->hrtimer));
	WRITE_ONCE(lock_count.cpu, -1);
	local_irq_restore(flags);

	stop_ktimer(&c->earlier);
	unregister_trace_lock_acquire(count_timer_lock, NULL);
	tracepoint_synchronize_unregister();
	set_cpus_allowed_ptr(current, cpu_possible_mask);

	kunit_info(test, "timer-base lock acquisitions, ktimer/hrtimer: start+stop %u/%u, modify %u/%u, start+stop of the earliest %u/%u; expiry run, nothing due: %u\n",
		   start_stop[0], start_stop[1], modify[0], modify[1],
		   earliest[0], earliest[1], idle_run);
	KUNIT_EXPECT_EQ(test, start_stop[0], 2);
	KUNIT_EXPECT_LE(test, start_stop[0], start_stop[1]);
	KUNIT_EXPECT_EQ(test, modify[0], 1);
	KUNIT_EXPECT_LE(test, modify[0], modify[1]);
	KUNIT_EXPECT_EQ(test, earliest[0], 3);
	KUNIT_EXPECT_EQ(test, idle_run, 1);
}

#else /* !CONFIG_LOCKDEP */

static void ktimer_lock_round_trips_test(struct kunit *test)
{
	kunit_skip(test, "needs CONFIG_LOCKDEP (its lock_acquire tracepoint counts)");
}

#endif /* CONFIG_LOCKDEP */

static struct kunit_case ktimer_observe_cases[] = {
	KUNIT_CASE(ktimer_trace_events_test),
	KUNIT_CASE(ktimer_debugfs_listing_test),
	KUNIT_CASE(ktimer_console_listing_test),
	KUNIT_CASE(ktimer_watchdog_overdue_test),
	KUNIT_CASE(ktimer_watchdog_report_test),
	KUNIT_CASE(ktimer_lock_round_trips_test),
	{}
};

static struct kunit_suite ktimer_observe_suite = {
	.name = "ktimer_observe",
	.test_cases = ktimer_observe_cases,
};

kunit_test_suites(&ktimer_observe_suite);

MODULE_DESCRIPTION("KUnit tests for the ktimer trace events and debugfs file");
MODULE_LICENSE("GPL");
