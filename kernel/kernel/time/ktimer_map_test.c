// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of mapped ktimer clocks (struct ktimer_clock_map): clocks whose
 * time is a linear function of an hrtimer clock, as a PTP hardware clock's
 * is of CLOCK_MONOTONIC.
 *
 * The arithmetic is checked on maps alone, the queue on a manual clock with
 * a map over a fake clock, and the wake-up event on a clock mapped over
 * CLOCK_MONOTONIC.  Waits for real expiries allow seconds: under QEMU a
 * loaded host stalls the guest for tens of milliseconds.
 */

#include <kunit/test.h>
#include <linux/bottom_half.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/jiffies.h>
#include <linux/ktimer.h>
#include <linux/sched.h>
#include <linux/time.h>
#include <linux/timekeeping.h>

#include "ktimer_internal.h"
#include "ktimer_test.h"

#define ONE		BIT(KTIMER_MAP_SHIFT)	/* a rate of 1 */
#define HALF		BIT(KTIMER_MAP_SHIFT - 1)
#define MS		((ktime_t)NSEC_PER_MSEC)
#define SEC		((ktime_t)NSEC_PER_SEC)
#define FAR		BIT_ULL(61)
/* 1 + 100 ppm, as close as 2^-31 gets */
#define FAST		(ONE + ONE / 10000)

static ktime_t to_clock(struct ktimer_clock_map *map, ktime_t event)
{
	return ktimer_test_map(map, event, false);
}

static ktime_t to_event(struct ktimer_clock_map *map, ktime_t time)
{
	return ktimer_test_map(map, time, true);
}

/* A map on its own, not registered: the arithmetic only */
static struct ktimer_clock_map *new_map(struct kunit *test, ktime_t event,
					ktime_t time, u32 mult)
{
	struct ktimer_clock_map *map = kunit_kzalloc(test, sizeof(*map), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, map);
	ktimer_clock_map_init(map);
	map->event_base = event;
	map->time_base = time;
	map->mult = mult;
	return map;
}

/* A fresh map is the identity, and converts exactly both ways */
static void ktimer_map_identity_test(struct kunit *test)
{
	static const ktime_t times[] = { 0, 1, 999, SEC, 1LL << 40 };
	struct ktimer_clock_map *map = new_map(test, 0, 0, ONE);
	int i;

	for (i = 0; i < ARRAY_SIZE(times); i++) {
		KUNIT_EXPECT_EQ(test, to_clock(map, times[i]), times[i]);
		KUNIT_EXPECT_EQ(test, to_event(map, times[i]), times[i]);
	}
}

static void ktimer_map_offset_and_rate_test(struct kunit *test)
{
	struct ktimer_clock_map *map = new_map(test, 5 * SEC, 100 * SEC, ONE);

	KUNIT_EXPECT_EQ(test, to_clock(map, 5 * SEC), 100 * SEC);
	KUNIT_EXPECT_EQ(test, to_clock(map, 6 * SEC), 101 * SEC);
	KUNIT_EXPECT_EQ(test, to_clock(map, 4 * SEC), 99 * SEC);
	KUNIT_EXPECT_EQ(test, to_event(map, 101 * SEC), 6 * SEC);

	map->mult = FAST;
	/* 10^9 * (2^31 + 214748) / 2^31, rounded down */
	KUNIT_EXPECT_EQ(test, to_clock(map, 6 * SEC), 100 * SEC + 1000099999);
	KUNIT_EXPECT_EQ(test, to_event(map, 100 * SEC + 1000099999), 6 * SEC);

	map->mult = 2 * (u64)HALF + HALF;	/* 1.5 */
	KUNIT_EXPECT_EQ(test, to_clock(map, 7 * SEC), 103 * SEC);
	KUNIT_EXPECT_EQ(test, to_event(map, 103 * SEC), 7 * SEC);
}

/*
 * The event for an expiry is the first event clock time at which the
 * mapped clock reads the expiry or later: a timer is never early and its
 * event is not late, at every rate and on both sides of the base.
 */
static void ktimer_map_round_trip_test(struct kunit *test)
{
	static const u32 mults[] = { HALF, ONE - 12345, ONE, ONE + 7, FAST,
				     U32_MAX };
	static const ktime_t offsets[] = { 0, 1, -1, 3, -3, 999999937,
					   -999999937, 3 * SEC + 17,
					   -(3 * SEC + 17), 1LL << 40,
					   -(1LL << 40) };
	int i, j;

	for (i = 0; i < ARRAY_SIZE(mults); i++) {
		struct ktimer_clock_map *map = new_map(test, 50 * SEC, 7000 * SEC,
						       mults[i]);

		for (j = 0; j < ARRAY_SIZE(offsets); j++) {
			ktime_t t = 7000 * SEC + offsets[j];
			ktime_t e = to_event(map, t);

			KUNIT_EXPECT_GE_MSG(test, to_clock(map, e), t,
					    "mult %u, time %lld", mults[i], t);
			KUNIT_EXPECT_LT_MSG(test, to_clock(map, e - 1), t,
					    "mult %u, time %lld", mults[i], t);
		}
	}
}

/* Distances up to 2^62 ns stay exact on 32-bit arches; beyond, saturate */
static void ktimer_map_far_times_test(struct kunit *test)
{
	struct ktimer_clock_map *map = new_map(test, 0, 0, U32_MAX);

	/* 2^61 * (2^32 - 1) / 2^31 */
	KUNIT_EXPECT_EQ(test, to_clock(map, FAR), (ktime_t)(BIT_ULL(62) - BIT_ULL(30)));
	map->mult = HALF;
	KUNIT_EXPECT_EQ(test, to_clock(map, FAR), (ktime_t)BIT_ULL(60));
	KUNIT_EXPECT_EQ(test, to_event(map, FAR), (ktime_t)BIT_ULL(62));
	KUNIT_EXPECT_EQ(test, to_clock(map, -(ktime_t)FAR), -(ktime_t)BIT_ULL(60));

	map->mult = ONE;
	KUNIT_EXPECT_EQ(test, to_clock(map, (ktime_t)BIT_ULL(62)), KTIME_MAX);
	KUNIT_EXPECT_EQ(test, to_clock(map, -(ktime_t)BIT_ULL(62)), KTIME_MIN);
	KUNIT_EXPECT_EQ(test, to_event(map, KTIME_MAX), KTIME_MAX);
	map->time_base = SEC;
	KUNIT_EXPECT_EQ(test, to_event(map, KTIME_MIN), KTIME_MIN);
}

/* The fake time the manual mapped clock is measured against */
static ktime_t event_clock_now;

static ktime_t event_clock_get_time(void)
{
	return READ_ONCE(event_clock_now);
}

static struct ktimer_clock_map manual_map;
static struct ktimer_clock manual_mapped = {
	.name		= "mapped-fake",
	.clockid	= CLOCK_MONOTONIC,
	.get_time	= event_clock_get_time,
	.resolution	= 1,
	.flags		= KTIMER_CLOCK_MANUAL,
	.map		= &manual_map,
};

struct map_timer {
	struct ktimer		timer;
	struct ktimer_clock	*clock;
	struct completion	done;
	int			fired;
	ktime_t			seen_now;
};

static void map_timer_fn(void *data)
{
	struct map_timer *mt = data;

	mt->fired++;
	mt->seen_now = ktimer_clock_now(mt->clock);
	complete(&mt->done);
}

static void stop_map_timer(void *data)
{
	stop_ktimer(&((struct map_timer *)data)->timer);
}

static struct map_timer *new_map_timer(struct kunit *test,
				       struct ktimer_clock *clock)
{
	struct map_timer *mt = kunit_kzalloc(test, sizeof(*mt), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, mt);
	ktimer_init(&mt->timer, clock);
	mt->timer.function = map_timer_fn;
	mt->timer.data = mt;
	mt->clock = clock;
	init_completion(&mt->done);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, stop_map_timer, mt), 0);
	return mt;
}

static void unregister_clock(void *clock)
{
	int ret = ktimer_unregister_clock(clock);

	if (ret)
		pr_err("ktimer-map-test: cannot unregister %s: %d\n",
		       ((struct ktimer_clock *)clock)->name, ret);
}

static void register_clock(struct kunit *test, struct ktimer_clock *clock)
{
	KUNIT_ASSERT_EQ(test, ktimer_register_clock(clock), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, unregister_clock, clock), 0);
}

/* Set the event clock and run what is due, as the softirq would */
static void advance_event_clock(ktime_t t)
{
	WRITE_ONCE(event_clock_now, t);
	ktimer_run_clock(&manual_mapped);
}

static void setup_manual(struct kunit *test, ktime_t event, ktime_t time, u32 mult)
{
	ktimer_clock_map_init(&manual_map);
	WRITE_ONCE(event_clock_now, event);
	KUNIT_ASSERT_EQ(test, ktimer_clock_set_map(&manual_mapped, event, time, mult), 0);
	register_clock(test, &manual_mapped);
}

static void ktimer_map_bad_input_test(struct kunit *test)
{
	struct ktimer_clock no_map = { .name = "no-map", .get_time = ktime_get };
	struct ktimer_clock_map slow_map;
	struct ktimer_clock slow = {
		.name = "slow", .clockid = CLOCK_MONOTONIC,
		.get_time = ktime_get, .map = &slow_map,
	};

	ktimer_clock_map_init(&slow_map);
	slow_map.mult = HALF - 1;
	setup_manual(test, SEC, 10 * SEC, ONE);

	expect_warning_begin(test);
	KUNIT_EXPECT_EQ(test, ktimer_clock_set_map(NULL, 0, 0, ONE), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_clock_set_map(&no_map, 0, 0, ONE), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_clock_set_map(&manual_mapped, 0, 0, HALF - 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_clock_set_map(&manual_mapped, -1, 0, ONE), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_clock_set_map(&manual_mapped, 0, -1, ONE), -EINVAL);
	KUNIT_EXPECT_EQ(test, ktimer_register_clock(&slow), -EINVAL);
	expect_warning_end(test);
	/* the refused maps changed nothing */
	KUNIT_EXPECT_EQ(test, ktimer_clock_now(&manual_mapped), 10 * SEC);
	KUNIT_EXPECT_EQ(test, ktimer_clock_set_map(&manual_mapped, 0, 0, HALF), 0);
}

/* Expiries, REL starts and remaining times are in the mapped clock's time */
static void ktimer_map_timers_follow_mapped_time_test(struct kunit *test)
{
	struct map_timer *rel, *abs;
	ktime_t t = 100;

	setup_manual(test, SEC, 10 * SEC, 2 * (u64)ONE - 1);	/* twice as fast */
	rel = new_map_timer(test, &manual_mapped);
	abs = new_map_timer(test, &manual_mapped);

	KUNIT_ASSERT_EQ(test, start_ktimer(&rel->timer, &t, KTIMER_REL), 0);
	KUNIT_EXPECT_EQ(test, rel->timer.expires, 10 * SEC + 100);
	t = 10 * SEC + 1000;
	KUNIT_ASSERT_EQ(test, start_ktimer(&abs->timer, &t, KTIMER_ABS), 0);
	KUNIT_EXPECT_EQ(test, get_remtime_ktimer(&abs->timer, 0), 1000);

	advance_event_clock(SEC + 49);		/* mapped: 10 s + 97 */
	KUNIT_EXPECT_EQ(test, rel->fired, 0);
	advance_event_clock(SEC + 51);		/* mapped: 10 s + 101 */
	KUNIT_EXPECT_EQ(test, rel->fired, 1);
	KUNIT_EXPECT_GE(test, rel->seen_now, 10 * SEC + 100);
	KUNIT_EXPECT_EQ(test, abs->fired, 0);
	KUNIT_EXPECT_EQ(test, get_remtime_ktimer(&abs->timer, 0), 899);
	advance_event_clock(SEC + 500);		/* mapped: 10 s + 999 */
	KUNIT_EXPECT_EQ(test, abs->fired, 0);
	advance_event_clock(SEC + 501);
	KUNIT_EXPECT_EQ(test, abs->fired, 1);
}

/* A step of the map makes pending timers due earlier or later */
static void ktimer_map_step_test(struct kunit *test)
{
	struct map_timer *early, *late;
	ktime_t t;

	setup_manual(test, SEC, 10 * SEC, ONE);
	early = new_map_timer(test, &manual_mapped);
	late = new_map_timer(test, &manual_mapped);
	t = 10 * SEC + MS;
	KUNIT_ASSERT_EQ(test, start_ktimer(&early->timer, &t, KTIMER_ABS), 0);
	t = 10 * SEC + 2 * MS;
	KUNIT_ASSERT_EQ(test, start_ktimer(&late->timer, &t, KTIMER_ABS), 0);

	/* forward by 1.5 ms: the first is due at once, the second not yet */
	KUNIT_ASSERT_EQ(test, ktimer_clock_set_map(&manual_mapped, SEC,
						   10 * SEC + 3 * MS / 2, ONE), 0);
	advance_event_clock(SEC);
	KUNIT_EXPECT_EQ(test, early->fired, 1);
	KUNIT_EXPECT_EQ(test, late->fired, 0);
	KUNIT_EXPECT_EQ(test, get_remtime_ktimer(&late->timer, 0), MS / 2);

	/* back by a second: the event clock passes the old due time in vain */
	KUNIT_ASSERT_EQ(test, ktimer_clock_set_map(&manual_mapped, SEC,
						   9 * SEC + 3 * MS / 2, ONE), 0);
	advance_event_clock(SEC + MS);
	KUNIT_EXPECT_EQ(test, late->fired, 0);
	KUNIT_EXPECT_EQ(test, get_remtime_ktimer(&late->timer, 0), SEC - MS / 2);
	advance_event_clock(2 * SEC + MS / 2);
	KUNIT_EXPECT_EQ(test, late->fired, 1);
}

/*
 * An ended clock (its device is gone): every pending timer expires at the
 * next run, a periodic one once, later starts expire at once or are
 * refused, and the map no longer moves.
 */
static void ktimer_map_end_test(struct kunit *test)
{
	struct map_timer *near, *far, *periodic, *later;
	ktime_t t = 10 * SEC + MS;

	setup_manual(test, SEC, 10 * SEC, ONE);
	near = new_map_timer(test, &manual_mapped);
	far = new_map_timer(test, &manual_mapped);
	periodic = new_map_timer(test, &manual_mapped);
	later = new_map_timer(test, &manual_mapped);
	KUNIT_ASSERT_EQ(test, start_ktimer(&near->timer, &t, KTIMER_ABS), 0);
	t = KTIME_MAX;
	KUNIT_ASSERT_EQ(test, start_ktimer(&far->timer, &t, KTIMER_ABS), 0);
	periodic->timer.interval = MS;
	t = 3600 * SEC;
	KUNIT_ASSERT_EQ(test, start_ktimer(&periodic->timer, &t, KTIMER_REL), 0);

	KUNIT_ASSERT_EQ(test, ktimer_clock_end(&manual_mapped), 0);
	KUNIT_EXPECT_EQ(test, ktimer_clock_now(&manual_mapped), KTIME_MAX);
	advance_event_clock(SEC);		/* the event clock did not move */
	KUNIT_EXPECT_EQ(test, near->fired, 1);
	KUNIT_EXPECT_EQ(test, far->fired, 1);
	KUNIT_EXPECT_EQ(test, periodic->fired, 1);
	KUNIT_EXPECT_EQ(test, near->timer.expired, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, ktimer_clock_pending(&manual_mapped), 0U);
	advance_event_clock(2 * SEC);
	KUNIT_EXPECT_EQ(test, periodic->fired, 1);

	t = 20 * SEC;
	KUNIT_EXPECT_EQ(test, start_ktimer(&later->timer, &t, KTIMER_ABS), -ETIME);
	KUNIT_EXPECT_EQ(test, start_ktimer(&later->timer, &t, KTIMER_REL), -ETIME);
	KUNIT_EXPECT_EQ(test, start_ktimer(&later->timer, &t,
					   KTIMER_ABS | KTIMER_NOCHECK), 0);
	advance_event_clock(2 * SEC);
	KUNIT_EXPECT_EQ(test, later->fired, 1);

	KUNIT_EXPECT_EQ(test, ktimer_clock_set_map(&manual_mapped, SEC, SEC, ONE),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, ktimer_clock_now(&manual_mapped), KTIME_MAX);
}

/* A clock mapped over CLOCK_MONOTONIC, as a PTP clock's base is */
static struct ktimer_clock_map real_map;
static struct ktimer_clock real_mapped = {
	.name		= "mapped-mono",
	.clockid	= CLOCK_MONOTONIC,
	.get_time	= ktime_get,
	.map		= &real_map,
};

static void setup_real(struct kunit *test, ktime_t ahead, u32 mult)
{
	ktime_t now = ktime_get();

	ktimer_clock_map_init(&real_map);
	KUNIT_ASSERT_EQ(test, ktimer_clock_set_map(&real_mapped, now, now + ahead, mult), 0);
	register_clock(test, &real_mapped);
}

/* The real cases check this CPU's clock base: stay on it */
static void pin_here(struct kunit *test)
{
	const struct cpumask *here = cpumask_of(raw_smp_processor_id());

	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, here), 0);
}

/*
 * The wake-up event runs on the event clock at the mapped expiry's
 * inverse, and a step or a rate change of the map arms it again.
 */
static void ktimer_map_event_follows_map_test(struct kunit *test)
{
	ktime_t rel = 3600 * SEC, soft = 0, hard = 0, event, now;
	clockid_t clockid = -1;
	struct map_timer *mt;

	pin_here(test);
	setup_real(test, 1000 * SEC, ONE);
	mt = new_map_timer(test, &real_mapped);
	KUNIT_ASSERT_EQ(test, start_ktimer(&mt->timer, &rel, KTIMER_REL), 0);
	KUNIT_EXPECT_TRUE(test, ktimer_test_event(&real_mapped, &clockid, &soft, &hard));
	KUNIT_EXPECT_EQ(test, clockid, CLOCK_MONOTONIC);
	event = to_event(&real_map, mt->timer.expires);
	KUNIT_EXPECT_EQ(test, soft, event);
	KUNIT_EXPECT_EQ(test, event, mt->timer.expires - 1000 * SEC);

	/* the clock is set 1800 s ahead: its timer is due 1800 s earlier */
	now = ktime_get();
	KUNIT_ASSERT_EQ(test, ktimer_clock_set_map(&real_mapped, now,
						   now + 2800 * SEC, ONE), 0);
	KUNIT_EXPECT_TRUE(test, ktimer_test_event(&real_mapped, &clockid, &soft, &hard));
	KUNIT_EXPECT_EQ(test, soft, event - 1800 * SEC);

	/* and runs faster: the event comes earlier again */
	now = ktime_get();
	KUNIT_ASSERT_EQ(test, ktimer_clock_set_map(&real_mapped, now,
						   ktimer_clock_now(&real_mapped), FAST), 0);
	KUNIT_EXPECT_TRUE(test, ktimer_test_event(&real_mapped, &clockid, &soft, &hard));
	KUNIT_EXPECT_EQ(test, soft, to_event(&real_map, mt->timer.expires));
	KUNIT_EXPECT_LT(test, soft, event - 1800 * SEC);
	KUNIT_EXPECT_EQ(test, clockid, CLOCK_MONOTONIC);
}

/* A timer on a mapped clock fires through the softirq, never early */
static void ktimer_map_real_timer_fires_test(struct kunit *test)
{
	ktime_t rel = 20 * MS, start, expires;
	struct map_timer *mt;

	setup_real(test, 5000 * SEC, 2 * (u64)ONE - 1);		/* twice as fast */
	mt = new_map_timer(test, &real_mapped);
	start = ktime_get();
	KUNIT_ASSERT_EQ(test, start_ktimer(&mt->timer, &rel, KTIMER_REL), 0);
	expires = mt->timer.expires;
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&mt->done, 10 * HZ), 0UL);
	KUNIT_EXPECT_EQ(test, mt->fired, 1);
	KUNIT_EXPECT_GE(test, mt->seen_now, expires);
	/* 20 ms of a clock that runs twice as fast: 10 ms of CLOCK_MONOTONIC */
	KUNIT_EXPECT_GE(test, ktime_get() - start, 10 * MS - 1);
}

/*
 * Ending a clock wakes its CPUs: each CPU's event is armed again, for at
 * once, and a timer an hour away fires.  The event is read with bottom
 * halves off, before the run it raises: any timer softirq (the wheel's)
 * would run the ended clock's timers too, but an idle CPU has none.
 */
static void ktimer_map_real_end_test(struct kunit *test)
{
	ktime_t rel = 3600 * SEC, soft = KTIME_MAX, hard;
	clockid_t clockid;
	struct map_timer *mt;

	pin_here(test);
	setup_real(test, 0, ONE);
	mt = new_map_timer(test, &real_mapped);
	KUNIT_ASSERT_EQ(test, start_ktimer(&mt->timer, &rel, KTIMER_REL), 0);
	local_bh_disable();
	KUNIT_EXPECT_EQ(test, ktimer_clock_end(&real_mapped), 0);
	ktimer_test_event(&real_mapped, &clockid, &soft, &hard);
	local_bh_enable();
	KUNIT_EXPECT_LT(test, soft, ktime_get());
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&mt->done, 10 * HZ), 0UL);
	KUNIT_EXPECT_EQ(test, mt->fired, 1);
	KUNIT_EXPECT_EQ(test, mt->timer.expired, KTIME_MAX);
}

/* A mapped clock is not the POSIX clock its map starts from */
static void ktimer_map_not_found_test(struct kunit *test)
{
	clockid_t id;

	setup_real(test, 0, ONE);
	for (id = 0; id < MAX_CLOCKS; id++)
		KUNIT_EXPECT_PTR_NE(test, ktimer_clock_find(id), &real_mapped);
	KUNIT_EXPECT_PTR_EQ(test, ktimer_clock_find(CLOCK_MONOTONIC),
			    &ktimer_clock_monotonic);
}

static struct kunit_case ktimer_map_cases[] = {
	KUNIT_CASE(ktimer_map_identity_test),
	KUNIT_CASE(ktimer_map_offset_and_rate_test),
	KUNIT_CASE(ktimer_map_round_trip_test),
	KUNIT_CASE(ktimer_map_far_times_test),
	KUNIT_CASE(ktimer_map_bad_input_test),
	KUNIT_CASE(ktimer_map_timers_follow_mapped_time_test),
	KUNIT_CASE(ktimer_map_step_test),
	KUNIT_CASE(ktimer_map_end_test),
	KUNIT_CASE(ktimer_map_event_follows_map_test),
	KUNIT_CASE(ktimer_map_real_timer_fires_test),
	KUNIT_CASE(ktimer_map_real_end_test),
	KUNIT_CASE(ktimer_map_not_found_test),
	{}
};

static struct kunit_suite ktimer_map_suite = {
	.name = "ktimer_map",
	.test_cases = ktimer_map_cases,
};

kunit_test_suites(&ktimer_map_suite);

MODULE_DESCRIPTION("KUnit tests of mapped ktimer clocks");
MODULE_LICENSE("GPL");
