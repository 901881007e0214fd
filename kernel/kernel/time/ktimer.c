// SPDX-License-Identifier: GPL-2.0
/*
 * ktimers - nanosecond timers on per-CPU clock bases
 *
 * Follows the design of the ktimers subsystem posted by Thomas Gleixner in
 * September 2005: timers live in a time-ordered queue per CPU and per
 * clock, expire from the timer softirq, and are started in one of the
 * modes ABS, REL, INCR, FORWARD, REARM and RESTART.  Reimplemented for
 * Linux 6.12 with these differences from the posting:
 *
 *  - The queue is an rbtree with a cached leftmost node, so the earliest
 *    timer is found in O(1); ties keep their start order.
 *  - 6.12 owns the clock event device through hrtimers.  Each per-CPU base
 *    therefore keeps one pinned hrtimer armed at its earliest expiry, whose
 *    only job is to raise the timer softirq.  This keeps an idle NO_HZ CPU
 *    waking up for its ktimers; the 2005 code relied on a periodic tick.
 *  - FORWARD and REARM compute the number of periods with one division
 *    instead of a loop, so a zero or tiny period can never hang the CPU, and
 *    all expiry arithmetic saturates at KTIME_MAX/KTIME_MIN.
 *  - Caller errors get a warning and an error code; the 2005 code crashed.
 *  - Periodic timers are re-armed after their callback returns, so the
 *    callback sees the expiry it was run for and can end the period.
 *  - Timers of a dead CPU are moved by a CPU hotplug callback (the 2005
 *    notifier did not compile).
 */

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/export.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/ktimer.h>
#include <linux/lockdep.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/restart_block.h>
#include <linux/sched/signal.h>
#include <linux/seqlock.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/thread_info.h>
#include <linux/timekeeping.h>
#include <kunit/visibility.h>

#include "ktimer_internal.h"
#include "timekeeping.h"

#define CREATE_TRACE_POINTS
#include <trace/events/ktimer.h>

/* Aligned: the first base's start and stop fields share one cache line */
DEFINE_PER_CPU_ALIGNED(struct ktimer_cpu_bases, ktimer_cpu_bases);

struct ktimer_clock *ktimer_clocks[KTIMER_MAX_CLOCKS];
static DEFINE_MUTEX(ktimer_clocks_mutex);

/*
 * A timer that changes base points here between dropping the old base's
 * lock and taking the new one; ktimer_lock_base() waits it out.  The same
 * "timer->base is the lock" scheme as the 2005 posting and timer.c.
 */
static struct ktimer_base ktimer_migrating_base;

static struct ktimer_base *ktimer_local_base(int index)
{
	return &this_cpu_ptr(&ktimer_cpu_bases)->base[index];
}

static bool ktimer_clock_registered(const struct ktimer_clock *clock)
{
	return clock && clock->index >= 0 && clock->index < KTIMER_MAX_CLOCKS &&
	       READ_ONCE(ktimer_clocks[clock->index]) == clock;
}

/*
 * Saturating arithmetic: an expiry that would pass KTIME_MAX stays at
 * KTIME_MAX (never fires) instead of wrapping into the past.
 */
static ktime_t ktimer_add_sat(ktime_t a, ktime_t b)
{
	ktime_t sum;

	if (check_add_overflow(a, b, &sum))
		return b > 0 ? KTIME_MAX : KTIME_MIN;
	return sum;
}

/*
 * Add @period to @timer->expires as often as needed to make it later than
 * @now, and count the additions in @timer->overrun.  One division instead
 * of the posting's loop: a tiny period cannot make this slow.  The unsigned
 * distance covers the whole ktime_t range, so nothing here can overflow.
 */
static u64 ktimer_forward_past(struct ktimer *timer, ktime_t now,
			       ktime_t period)
{
	u64 delta, periods, step, room;

	if (timer->expires > now)
		return 0;

	delta = (u64)now - (u64)timer->expires;
	periods = div64_u64(delta, (u64)period);
	if (check_add_overflow(periods, 1ULL, &periods))
		periods = U64_MAX;
	if (check_add_overflow(timer->overrun, periods, &timer->overrun))
		timer->overrun = U32_MAX;

	room = (u64)KTIME_MAX - (u64)timer->expires;
	if (check_mul_overflow(periods, (u64)period, &step) || step > room)
		timer->expires = KTIME_MAX;
	else
		timer->expires = (ktime_t)((u64)timer->expires + step);
	return periods;
}

static bool ktimer_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct ktimer, node)->expires <
	       rb_entry(b, struct ktimer, node)->expires;
}

static struct ktimer *ktimer_first(struct ktimer_base *base)
{
	struct rb_node *node = rb_first_cached(&base->queue);

	return node ? rb_entry(node, struct ktimer, node) : NULL;
}

/*
 * Mapped clocks (struct ktimer_clock_map): the time of a clock that no
 * hrtimer clock serves is a linear function of one that does.  The map is
 * read under a base's lock with interrupts disabled, and written with
 * interrupts disabled too, so a reader never spins on a writer it
 * interrupted.  Distances of 2^62 ns (146 years) and more saturate, which
 * keeps the products below within 64 bits on every arch.
 */
#define KTIMER_MAP_MAX_DELTA	BIT_ULL(62)

static noinline ktime_t ktimer_map(struct ktimer_clock_map *map, ktime_t in,
				   bool to_event)
{
	ktime_t from, to, delta;
	unsigned int seq;
	u64 dist, scaled;
	bool ended;
	u32 mult;

	do {
		seq = read_seqcount_begin(&map->seq);
		ended = map->ended;
		from = to_event ? map->time_base : map->event_base;
		to = to_event ? map->event_base : map->time_base;
		mult = map->mult;
	} while (read_seqcount_retry(&map->seq, seq));

	/* An ended clock is past every expiry, and its events are all due */
	if (unlikely(ended))
		return to_event ? 0 : KTIME_MAX;

	delta = ktimer_add_sat(in, -from);
	dist = delta < 0 ? -(u64)delta : (u64)delta;
	if (dist >= KTIMER_MAP_MAX_DELTA)
		return delta < 0 ? KTIME_MIN : KTIME_MAX;
	if (to_event) {
		/*
		 * Rounded up to the first event time at which the mapped
		 * clock reads the expiry: never early, never later than
		 * that.  mult >= 1/2 keeps the quotient below 2^63.
		 */
		scaled = mul_u64_u32_div(dist, BIT(KTIMER_MAP_SHIFT), mult);
		if (delta > 0 &&
		    mul_u64_u32_shr(scaled, mult, KTIMER_MAP_SHIFT) < dist)
			scaled++;
	} else {
		/* Rounded toward the past: timers are never early either */
		u64 frac = BIT_ULL(KTIMER_MAP_SHIFT) - 1;

		scaled = mul_u64_u32_shr(dist, mult, KTIMER_MAP_SHIFT);
		if (delta < 0 && ((dist & frac) * mult) & frac)
			scaled++;
	}
	return ktimer_add_sat(to, delta < 0 ? -(ktime_t)scaled : (ktime_t)scaled);
}

/* The clock's time: what every expiry of the clock is compared with */
static __always_inline ktime_t ktimer_now(const struct ktimer_clock *clock)
{
	ktime_t now = clock->get_time();

	return unlikely(clock->map) ? ktimer_map(clock->map, now, false) : now;
}

/* Has ktimer_clock_end() ended @clock?  Its timers have no next period. */
static bool ktimer_ended(const struct ktimer_clock *clock)
{
	return unlikely(clock->map) && READ_ONCE(clock->map->ended);
}

/* When the event clock (->clockid) reaches @expires of @clock */
static ktime_t ktimer_event_time(const struct ktimer_clock *clock,
				 ktime_t expires)
{
	return unlikely(clock->map) ? ktimer_map(clock->map, expires, true) :
				      expires;
}

/*
 * The expiry engine, chosen at boot with ktimer.highres=.  High resolution
 * wakes the CPU at the exact expiry.  Low resolution lets the wake-up slip
 * by up to a jiffy, so that it coalesces with the tick, and reports one
 * jiffy of resolution: the behaviour of the 2005 code, which expired
 * ktimers from the tick.  Both wake an idle NO_HZ CPU.
 */
static bool ktimer_highres = true;
module_param_named(highres, ktimer_highres, bool, 0444);
MODULE_PARM_DESC(highres, "expire ktimers at high resolution (default) or at jiffy resolution");

/**
 * ktimer_highres_enabled - is the high-resolution expiry engine in use?
 *
 * Return: true unless the kernel was booted with ktimer.highres=0.
 */
bool ktimer_highres_enabled(void)
{
	return ktimer_highres;
}
EXPORT_SYMBOL_GPL(ktimer_highres_enabled);

/*
 * hrtimer_resolution is 1 ns once hrtimers run in high resolution mode,
 * one jiffy before that and without CONFIG_HIGH_RES_TIMERS.
 */
static u32 ktimer_engine_resolution(void)
{
	return ktimer_highres ? hrtimer_resolution : TICK_NSEC;
}

/*
 * How late the wake-up event may fire, so that it can share an interrupt
 * with another hrtimer (the tick, in low resolution): half the resolution,
 * which leaves the other half for the softirq and the callbacks due
 * before, so that a callback runs less than one resolution unit late.
 */
static u64 ktimer_event_slack(const struct ktimer_clock *clock)
{
	return ktimer_clock_resolution(clock) / 2;
}

/*
 * Arm the base's wake-up event for @expires unless it is armed at least as
 * early already.  An expiry run reprograms at its end, so nothing is done
 * while one is in progress; that is also the only time a timer is queued
 * on another CPU's base (a callback running there keeps its timer there).
 */
static void ktimer_program_event(struct ktimer_base *base, ktime_t expires)
{
	lockdep_assert_held(&base->lock);

	/*
	 * Armed early enough already: the common case, tested first.  A
	 * fired event is no longer queued, whatever next_event says.
	 */
	if (expires >= base->next_event && hrtimer_is_queued(&base->event))
		return;
	if (base->expiring || base->clock->flags & KTIMER_CLOCK_MANUAL)
		return;
	if (WARN_ON_ONCE(base->cpu != smp_processor_id()))
		return;

	base->next_event = expires;
	hrtimer_start_range_ns(&base->event,
			       ktimer_event_time(base->clock, expires),
			       ktimer_event_slack(base->clock),
			       HRTIMER_MODE_ABS_PINNED_HARD);
}

static __always_inline void ktimer_enqueue(struct ktimer *timer, struct ktimer_base *base)
{
	ktimer_debug_activate(timer);
	timer->pass = base->pass;
	base->count++;
	if (rb_add_cached(&timer->node, &base->queue, ktimer_less))
		ktimer_program_event(base, timer->expires);
}

static __always_inline void ktimer_dequeue(struct ktimer *timer, struct ktimer_base *base)
{
	ktimer_debug_deactivate(timer);
	rb_erase_cached(&timer->node, &base->queue);
	RB_CLEAR_NODE(&timer->node);
	base->count--;
}

/*
 * The helpers of the start and stop paths are always inlined: a start or a
 * stop costs 20-30 ns natively, and each call of these small functions
 * measurably added to it (issue 18's profile under User Mode Linux).
 */
static __always_inline struct ktimer_base *
ktimer_base_unlocked(const struct ktimer *timer)
{
	struct ktimer_base *base;

	while ((base = READ_ONCE(timer->base)) == &ktimer_migrating_base)
		cpu_relax();
	return base;
}

static __always_inline struct ktimer_base *
ktimer_lock_base(const struct ktimer *timer, unsigned long *flags)
{
	struct ktimer_base *base;

	for (;;) {
		base = ktimer_base_unlocked(timer);
		raw_spin_lock_irqsave(&base->lock, *flags);
		if (likely(base == READ_ONCE(timer->base)))
			return base;
		raw_spin_unlock_irqrestore(&base->lock, *flags);
	}
}

/*
 * Move @timer to this CPU's base, as the posting does, unless its callback
 * runs right now: then it stays where it is, so that nobody has to wait for
 * the callback (two callbacks restarting each other's timers would
 * deadlock otherwise).  Called with @base locked and interrupts disabled;
 * returns the locked base the timer belongs to now.
 */
static struct ktimer_base *ktimer_switch_base(struct ktimer *timer,
					      struct ktimer_base *base)
{
	struct ktimer_base *local;

	if (likely(base->cpu == smp_processor_id()) || base->running == timer)
		return base;

	/* The same slot on this CPU: the slot is the index in the array */
	local = ktimer_local_base(base - ktimer_cpu_base(base->cpu, 0));
	WRITE_ONCE(timer->base, &ktimer_migrating_base);
	raw_spin_unlock(&base->lock);
	raw_spin_lock(&local->lock);
	WRITE_ONCE(timer->base, local);
	return local;
}

/*
 * Compute the new expiry.  Return -ETIME if it is not in the future and
 * the mode asks for the check; FORWARD and REARM always end in the future.
 * The clock is read only when the mode needs it: ABS, INCR and RESTART
 * with KTIMER_NOCHECK queue without it, as hrtimer_start() does, so
 * ->expired is set here only when the expiry is refused.  FORWARD and
 * REARM read it once their period has passed its check.
 */
static int ktimer_set_expiry(struct ktimer *timer, struct ktimer_clock *clock,
			     const ktime_t *tim, int mode)
{
	int how = mode & ~KTIMER_NOCHECK;
	ktime_t now = 0, period;

	if ((!(mode & KTIMER_NOCHECK) || how == KTIMER_REL) &&
	    how != KTIMER_FORWARD && how != KTIMER_REARM)
		now = ktimer_now(clock);

	switch (how) {
	case KTIMER_ABS:
		timer->expires = *tim;
		break;
	case KTIMER_REL:
		timer->expires = ktimer_add_sat(now, *tim);
		break;
	case KTIMER_INCR:
		timer->expires = ktimer_add_sat(timer->expires, *tim);
		break;
	case KTIMER_FORWARD:
	case KTIMER_REARM:
		/*
		 * Read once, under the base lock: a callback on another CPU
		 * may end the period (->interval = 0) after
		 * ktimer_check_start() looked at it, or while the clock is
		 * read, which comes after the check so that it cannot be
		 * wasted on a refused period.
		 */
		period = how == KTIMER_FORWARD ? *tim : READ_ONCE(timer->interval);
		if (WARN_ON_ONCE(period <= 0))
			return -EINVAL;
		now = ktimer_now(clock);
		ktimer_forward_past(timer, now, period);
		return 0;
	case KTIMER_RESTART:
		break;
	}

	if (mode & KTIMER_NOCHECK || timer->expires > now)
		return 0;
	timer->expired = now;
	return -ETIME;
}

/*
 * The warnings about a bad timer, out of line: the check is inlined into
 * every API call, and each warning must still warn once, whichever call
 * met the bad timer first.
 */
static noinline int ktimer_bad_timer(const struct ktimer *timer)
{
	WARN_ON_ONCE(!timer);
	WARN_ON_ONCE(timer && !timer->base);
	return -EINVAL;
}

static __always_inline int ktimer_check_timer(struct ktimer *timer)
{
	if (unlikely(!timer))
		return ktimer_bad_timer(timer);
	/* With debug objects, never-initialised memory gets a NULL base here */
	ktimer_debug_assert_init(timer);
	if (unlikely(!timer->base))
		return ktimer_bad_timer(timer);
	return 0;
}

/* Everything a caller can get wrong, checked before anything changes. */
static __always_inline int ktimer_check_start(struct ktimer *timer, const ktime_t *tim,
					      int mode)
{
	int how = mode & ~KTIMER_NOCHECK;

	if (ktimer_check_timer(timer))
		return -EINVAL;
	if (WARN_ON_ONCE(!timer->function))
		return -EINVAL;
	if (WARN_ON_ONCE(how < KTIMER_ABS || how > KTIMER_RESTART))
		return -EINVAL;
	if (WARN_ON_ONCE(!tim && how <= KTIMER_FORWARD))
		return -EINVAL;
	if (WARN_ON_ONCE(how == KTIMER_FORWARD && *tim <= 0))
		return -EINVAL;
	if (WARN_ON_ONCE(how == KTIMER_REARM && timer->interval <= 0))
		return -EINVAL;
	return 0;
}

/*
 * @timer, the earliest of @base, has its new expiry: if that is still
 * before the next timer's, the queue's order holds and the timer stays
 * where it is, as if dequeued and queued again (a tie with the next timer
 * does not hold: a restarted timer goes behind the timers waiting at its
 * expiry).  Saves the two tree operations a modify costs otherwise.
 * Returns false, changing nothing, when the timer must be requeued.
 */
static bool ktimer_requeue_in_place(struct ktimer *timer,
				    struct ktimer_base *base)
{
	struct rb_node *next = rb_next(&timer->node);

	if (next && timer->expires >= rb_entry(next, struct ktimer, node)->expires)
		return false;
	timer->pass = base->pass;
	ktimer_program_event(base, timer->expires);
	return true;
}

/*
 * Start or restart @timer.  Not inlined into its two callers, so that each
 * caller-error warning of ktimer_check_start() has one site and warns once.
 * Returns -EBUSY if it is pending and @must_idle, otherwise whether it was
 * pending, or -ETIME.
 */
static noinline int ktimer_arm(struct ktimer *timer, const ktime_t *tim,
			       int mode, bool must_idle)
{
	struct ktimer_base *base;
	unsigned long flags;
	int was_pending, ret;
	bool in_place;

	ret = ktimer_check_start(timer, tim, mode);
	if (ret)
		return ret;

	base = ktimer_lock_base(timer, &flags);
	was_pending = ktimer_active(timer);
	if (was_pending && must_idle) {
		ret = -EBUSY;
		goto unlock;
	}
	/*
	 * The earliest timer of this CPU's base (a lone timer, a watchdog
	 * pushed forward) may keep its place: see ktimer_requeue_in_place().
	 */
	in_place = was_pending && base->cpu == smp_processor_id() &&
		   base->queue.rb_leftmost == &timer->node;
	if (was_pending && !in_place)
		ktimer_dequeue(timer, base);

	base = ktimer_switch_base(timer, base);
	/*
	 * The clock may be going away (ktimer_unregister_clock()); it closes
	 * only bases without timers, so a pending timer never sees this.
	 */
	if (WARN_ON_ONCE(!base->clock)) {
		ret = -EINVAL;
		goto unlock;
	}
	ret = ktimer_set_expiry(timer, base->clock, tim, mode);
	/*
	 * A restart of a timer whose callback runs replaces the periodic
	 * re-arm; a refused one leaves the timer stopped, as documented for
	 * modify_ktimer(), so the run must not re-arm it either.
	 */
	if (base->running == timer)
		base->running_stopped = ret != 0;
	if (!in_place || ret || !ktimer_requeue_in_place(timer, base)) {
		if (in_place)
			ktimer_dequeue(timer, base);
		if (!ret)
			ktimer_enqueue(timer, base);
	}
	if (!ret) {
		trace_ktimer_start(timer, mode);
		ret = was_pending;
	}
unlock:
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return ret;
}

/**
 * start_ktimer - start a timer on the current CPU
 * @timer: an initialised timer that is not pending, with ->function set
 * @tim: expiry, read as @mode says; may be NULL for %KTIMER_REARM and
 *	 %KTIMER_RESTART
 * @mode: one of enum ktimer_mode, optionally ORed with %KTIMER_NOCHECK
 *
 * %KTIMER_ABS, %KTIMER_REL, %KTIMER_INCR and %KTIMER_RESTART refuse an
 * expiry that is not in the future: the timer is then not queued and
 * ->expired is set to the current time.  With %KTIMER_NOCHECK the timer
 * is queued whatever its expiry, and ABS, INCR and RESTART do not read
 * the clock at all.
 * %KTIMER_FORWARD and %KTIMER_REARM add their period until the expiry is
 * in the future and count the additions in ->overrun.
 *
 * Context: any context; takes a raw spinlock with interrupts disabled.
 * Return: 0 when queued, -ETIME when already expired, -EBUSY when @timer
 * is pending, -EINVAL (with a warning) on a caller error.
 */
int start_ktimer(struct ktimer *timer, const ktime_t *tim, int mode)
{
	return ktimer_arm(timer, tim, mode, true);
}
EXPORT_SYMBOL_GPL(start_ktimer);

/**
 * modify_ktimer - (re)start a timer, pending or not
 * @timer: an initialised timer with ->function set
 * @tim: expiry, read as @mode says; may be NULL for %KTIMER_REARM and
 *	 %KTIMER_RESTART
 * @mode: one of enum ktimer_mode, optionally ORed with %KTIMER_NOCHECK
 *
 * Like start_ktimer(), but a pending timer is first removed from its
 * queue.  If the new expiry is refused with -ETIME the timer stays stopped.
 *
 * Context: any context; takes a raw spinlock with interrupts disabled.
 * Return: 1 if @timer was pending, 0 if not, -ETIME when the new expiry
 * is not in the future, -EINVAL (with a warning) on a caller error.
 */
int modify_ktimer(struct ktimer *timer, const ktime_t *tim, int mode)
{
	return ktimer_arm(timer, tim, mode, false);
}
EXPORT_SYMBOL_GPL(modify_ktimer);

/* Is the caller @timer's own callback (or interrupting it on its CPU)? */
static bool ktimer_in_own_callback(const struct ktimer *timer,
				   const struct ktimer_base *base)
{
	return base->running == timer && base->running_task == current;
}

/**
 * try_to_stop_ktimer - stop a timer unless its callback is running
 * @timer: an initialised timer
 *
 * Called from the timer's own callback it never fails: it removes a re-arm
 * the callback made and cancels the automatic re-arm of a periodic timer.
 *
 * Unlike the 2005 posting, a stop does not read the clock to record the
 * stop time in ->expired: that read was most of the cost of a cancel, and
 * only a sleeper woken early wants the time that is left, which
 * schedule_ktimer() and get_remtime_ktimer() read when asked.  hrtimers
 * dropped the field for the same reason when they were merged in 2.6.16.
 *
 * Context: any context.
 * Return: 1 if @timer was pending and is now stopped, 0 if it was not
 * pending, -1 if its callback is running on another CPU right now,
 * -EINVAL (with a warning) if @timer is NULL or not initialised.
 */
int try_to_stop_ktimer(struct ktimer *timer)
{
	struct ktimer_base *base;
	unsigned long flags;
	int ret = 0;

	if (ktimer_check_timer(timer))
		return -EINVAL;

	base = ktimer_lock_base(timer, &flags);
	if (base->running == timer) {
		if (!ktimer_in_own_callback(timer, base)) {
			ret = -1;
			goto unlock;
		}
		base->running_stopped = true;
	}
	if (ktimer_active(timer)) {
		ktimer_dequeue(timer, base);
		trace_ktimer_cancel(timer);
		ret = 1;
	}
unlock:
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(try_to_stop_ktimer);

/**
 * ktimer_wait_callback - wait until a timer's callback is not running
 * @timer: an initialised timer
 *
 * Only waits: the timer is left as it is, so this may be called without
 * the lock that serialises its owner's restarts, while another CPU
 * restarts @timer (posix-timers.c's timer_wait_running does that, and then
 * retries its cancel).  Callbacks run in softirq context, which tasks do
 * not preempt, so the wait is short; a spin keeps it usable in atomic
 * context, as hrtimer_cancel() is.
 *
 * Context: any context, but not @timer's own callback (it would wait for
 * itself).
 */
void ktimer_wait_callback(const struct ktimer *timer)
{
	if (ktimer_check_timer((struct ktimer *)timer))
		return;
	while (READ_ONCE(ktimer_base_unlocked(timer)->running) == timer)
		cpu_relax();
}
EXPORT_SYMBOL_GPL(ktimer_wait_callback);

/**
 * stop_ktimer - stop a timer and wait for its running callback
 * @timer: an initialised timer
 *
 * When this returns, @timer is not pending and its callback does not run
 * (unless the callback runs on another CPU and someone restarts the timer
 * concurrently).  A periodic timer is ended either from any other context
 * with stop_ktimer(), which waits for the running callback and then
 * removes the re-armed timer, or from its own callback with stop_ktimer()
 * or try_to_stop_ktimer(), which never wait there and cancel the re-arm.
 * Do not call it while holding a lock that the callback takes, nor from
 * a callback whose timer the other callback stops in turn: like
 * hrtimer_cancel(), both would wait for each other.
 *
 * Context: any context.
 * Return: 1 if @timer was pending, 0 if not, -EINVAL (with a warning) if
 * @timer is NULL or not initialised.
 */
int stop_ktimer(struct ktimer *timer)
{
	int ret;

	while ((ret = try_to_stop_ktimer(timer)) == -1)
		ktimer_wait_callback(timer);
	return ret;
}
EXPORT_SYMBOL_GPL(stop_ktimer);

/**
 * ktimer_change_clock - move an idle timer to another clock
 * @timer: an initialised timer that is not pending and whose callback
 *	   does not run
 * @clock: a registered clock
 *
 * Unlike ktimer_init(), keeps the rest of @timer and moves it under the
 * base locks, so that another CPU that still looks at @timer (waiting
 * for its callback with ktimer_wait_callback(), say) sees the old base or
 * the new one, never a cleared timer.  The timer goes to the current
 * CPU's base of @clock, as a start would move it.
 *
 * Context: any context.
 * Return: 0; -EBUSY if @timer is pending or its callback runs; -EINVAL
 * (with a warning) for an uninitialised timer or an unregistered clock.
 */
int ktimer_change_clock(struct ktimer *timer, struct ktimer_clock *clock)
{
	struct ktimer_base *base, *local;
	unsigned long flags;

	if (ktimer_check_timer(timer) ||
	    WARN_ON_ONCE(!ktimer_clock_registered(clock)))
		return -EINVAL;

	base = ktimer_lock_base(timer, &flags);
	if (ktimer_active(timer) || base->running == timer) {
		raw_spin_unlock_irqrestore(&base->lock, flags);
		return -EBUSY;
	}
	local = ktimer_local_base(clock->index);
	if (local != base) {
		WRITE_ONCE(timer->base, &ktimer_migrating_base);
		raw_spin_unlock(&base->lock);
		raw_spin_lock(&local->lock);
		WRITE_ONCE(timer->base, local);
		base = local;
	}
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return 0;
}
EXPORT_SYMBOL_GPL(ktimer_change_clock);

/**
 * get_remtime_ktimer - time left until a timer expires
 * @timer: an initialised timer
 * @fake: if non-zero, returned for a pending timer that is already due,
 *	  and 0 is returned for a timer that is not pending (what itimers
 *	  report)
 *
 * The time is read now, for a stopped timer too: a stop does not record
 * it (see try_to_stop_ktimer()), so a stopped timer keeps counting down,
 * as with hrtimer_get_remaining().
 *
 * Context: any context.
 * Return: ->expires minus the clock's current time; if @fake is non-zero,
 * @fake instead for a pending timer that is already due, and 0 for a timer
 * that is not pending.  0 for a timer whose clock was unregistered, and
 * (with a warning) for a NULL or uninitialised timer.
 */
ktime_t get_remtime_ktimer(struct ktimer *timer, long fake)
{
	struct ktimer_base *base;
	unsigned long flags;
	ktime_t rem;

	if (ktimer_check_timer(timer))
		return 0;

	base = ktimer_lock_base(timer, &flags);
	rem = 0;
	if ((ktimer_active(timer) || !fake) && base->clock) {
		rem = ktimer_add_sat(timer->expires,
				     -ktimer_now(base->clock));
		if (fake && rem <= 0)
			rem = fake;
	}
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return rem;
}
EXPORT_SYMBOL_GPL(get_remtime_ktimer);

/**
 * get_expiry_ktimer - a timer's expiry and, optionally, the current time
 * @timer: an initialised timer
 * @now: if not NULL, receives the current time of the timer's clock, read
 *	 under the same lock as the expiry
 *
 * Context: any context.
 * Return: ->expires of @timer; 0 (with a warning) for a NULL or
 * uninitialised timer.
 */
ktime_t get_expiry_ktimer(struct ktimer *timer, ktime_t *now)
{
	struct ktimer_base *base;
	unsigned long flags;
	ktime_t expires;

	if (ktimer_check_timer(timer))
		return 0;

	base = ktimer_lock_base(timer, &flags);
	expires = timer->expires;
	if (now)
		*now = base->clock ? ktimer_now(base->clock) : 0;
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return expires;
}
EXPORT_SYMBOL_GPL(get_expiry_ktimer);

/**
 * forward_ktimer - move the expiry of a stopped timer past a time
 * @timer: an initialised timer that is not pending
 * @now: the time the expiry must end up after
 * @period: the period to add, > 0; a period below the resolution of the
 *	    timer's clock counts as one resolution unit, as in hrtimer_forward()
 *
 * Adds @period to ->expires as often as needed to make it later than @now
 * and counts the additions in ->overrun, as %KTIMER_FORWARD does, but does
 * not queue the timer.  This is what hrtimer_forward() is to hrtimers: a
 * caller that re-arms a timer from a signal (POSIX timers) or reports a
 * timer that is never queued (SIGEV_NONE) moves the expiry first.  One
 * division, as for %KTIMER_FORWARD; the 2005 posting's 32-bit
 * forward_posix_timer() looped forever on a period of 2^32 ns or more.
 *
 * Context: any context.
 * Return: the number of periods added (0 if ->expires was later than @now
 * already), saturated at U64_MAX; 0 with a warning for a pending timer or a
 * @period <= 0, which are left alone.
 */
u64 forward_ktimer(struct ktimer *timer, ktime_t now, ktime_t period)
{
	struct ktimer_base *base;
	unsigned long flags;
	u64 periods = 0;

	if (ktimer_check_timer(timer) || WARN_ON_ONCE(period <= 0))
		return 0;

	base = ktimer_lock_base(timer, &flags);
	/* as hrtimer_forward(): a period below the resolution is one unit */
	if (base->clock)
		period = max_t(ktime_t, period,
			       ktimer_clock_resolution(base->clock));
	if (!WARN_ON_ONCE(ktimer_active(timer)))
		periods = ktimer_forward_past(timer, now, period);
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return periods;
}
EXPORT_SYMBOL_GPL(forward_ktimer);

/**
 * ktimer_clock_resolution - resolution of timers on a clock
 * @clock: a clock
 *
 * Return: the clock's own resolution if it registered one, else that of
 * the expiry engine (one jiffy), in nanoseconds.
 */
u32 ktimer_clock_resolution(const struct ktimer_clock *clock)
{
	return clock && clock->resolution ? clock->resolution :
					    ktimer_engine_resolution();
}
EXPORT_SYMBOL_GPL(ktimer_clock_resolution);

/* Round @t up to a multiple of @res, saturating */
static ktime_t ktimer_round_up(ktime_t t, u32 res)
{
	s32 rem;

	if (t == KTIME_MAX)
		return t;
	div_s64_rem(t, res, &rem);
	if (rem > 0)
		return ktimer_add_sat(t, res - rem);
	return t - rem;
}

/**
 * ktimer_convert_timespec - convert a timespec for use with a timer
 * @timer: an initialised timer; its clock gives the resolution
 * @ts: the time to convert
 *
 * The result is rounded up to the resolution of the timer's clock, so that
 * a timer never fires before the requested time (as in the posting).
 * Values beyond the ktime_t range saturate.
 *
 * Context: any context.
 * Return: @ts in nanoseconds, rounded up; 0 (with a warning) for a NULL
 * or uninitialised timer or a NULL @ts.
 */
ktime_t ktimer_convert_timespec(struct ktimer *timer,
				const struct timespec64 *ts)
{
	struct ktimer_clock *clock;

	if (ktimer_check_timer(timer) || WARN_ON_ONCE(!ts))
		return 0;

	clock = READ_ONCE(ktimer_base_unlocked(timer)->clock);
	return ktimer_round_up(timespec64_to_ktime(*ts),
			       ktimer_clock_resolution(clock));
}
EXPORT_SYMBOL_GPL(ktimer_convert_timespec);

static int ktimer_getres(struct ktimer_clock *clock, struct timespec64 *tp)
{
	if (WARN_ON_ONCE(!tp))
		return -EINVAL;
	*tp = ns_to_timespec64(ktimer_clock_resolution(clock));
	return 0;
}

/**
 * get_ktimer_mono_res - resolution of monotonic ktimers
 * @which_clock: the POSIX clock asked about (unused, as in the posting)
 * @tp: receives the resolution
 *
 * Return: 0, or -EINVAL (with a warning) if @tp is NULL.
 */
int get_ktimer_mono_res(clockid_t which_clock, struct timespec64 *tp)
{
	return ktimer_getres(&ktimer_clock_monotonic, tp);
}
EXPORT_SYMBOL_GPL(get_ktimer_mono_res);

/**
 * get_ktimer_real_res - resolution of realtime ktimers
 * @which_clock: the POSIX clock asked about (unused, as in the posting)
 * @tp: receives the resolution
 *
 * Return: 0, or -EINVAL (with a warning) if @tp is NULL.
 */
int get_ktimer_real_res(clockid_t which_clock, struct timespec64 *tp)
{
	return ktimer_getres(&ktimer_clock_realtime, tp);
}
EXPORT_SYMBOL_GPL(get_ktimer_real_res);

/*
 * The earliest timer that was queued before the current expiry run began.
 * Timers a callback queued during the run (pass == base->pass) are passed
 * over: they may sort ahead of timers that are due, which still run now.
 */
static struct ktimer *ktimer_first_of_run(struct ktimer_base *base)
{
	struct rb_node *node;

	for (node = rb_first_cached(&base->queue); node; node = rb_next(node)) {
		struct ktimer *timer = rb_entry(node, struct ktimer, node);

		if (timer->pass != base->pass)
			return timer;
	}
	return NULL;
}

/*
 * Run the callbacks of the expired timers of @base: every timer that was
 * queued when the run began and is due, earliest first.  Timers queued
 * during this run (a callback restarting its timer with KTIMER_NOCHECK in
 * the past, say) wait for the next run, even when they sort ahead of due
 * ones, so a run always ends: it runs at most the timers that were queued
 * when it began.
 */
static void ktimer_run_base(struct ktimer_base *base)
{
	struct ktimer *timer;
	ktime_t now;

	raw_spin_lock_irq(&base->lock);
	if (!base->clock)
		goto unlock;

	now = ktimer_now(base->clock);
	base->pass++;
	base->expiring = true;
	while ((timer = ktimer_first_of_run(base))) {
		void (*fn)(void *data);
		void *data;
		bool periodic;
		ktime_t period;

		/*
		 * Callbacks take time: what fell due meanwhile runs now, not
		 * after another wake-up (hrtimer_interrupt() retries too).
		 */
		if (timer->expires > now) {
			now = ktimer_now(base->clock);
			if (timer->expires > now)
				break;
		}

		ktimer_dequeue(timer, base);
		timer->expired = now;
		base->running_stopped = false;
		fn = timer->function;
		data = timer->data;
		periodic = READ_ONCE(timer->interval) > 0;
		WRITE_ONCE(base->running, timer);
		base->running_task = current;
		raw_spin_unlock_irq(&base->lock);

		trace_ktimer_expire_entry(timer, now);
		fn(data);
		trace_ktimer_expire_exit(timer);

		raw_spin_lock_irq(&base->lock);
		/*
		 * The callback may have freed @timer, as hrtimer and timer_list
		 * callbacks may: it is looked at again only if it was periodic
		 * and the callback did not stop it, which a callback freeing
		 * a periodic timer must do first.  The callback may also have
		 * ended (->interval = 0) or changed the period: read it once.
		 */
		if (periodic && !base->running_stopped && !ktimer_active(timer) &&
		    !ktimer_ended(base->clock)) {
			period = READ_ONCE(timer->interval);
			if (period > 0) {
				ktimer_forward_past(timer, now, period);
				ktimer_enqueue(timer, base);
			}
		}
		base->running_task = NULL;
		WRITE_ONCE(base->running, NULL);
	}
	base->expiring = false;

	/*
	 * Re-arm the event if it fired, or if a callback queued a timer
	 * earlier than it is armed for.  A run that the softirq made for
	 * another reason (the timer wheel raises it too) finds the event
	 * armed early enough and leaves it alone: no hrtimer restart, no
	 * reprogramming.
	 */
	timer = ktimer_first(base);
	if (timer)
		ktimer_program_event(base, timer->expires);
unlock:
	raw_spin_unlock_irq(&base->lock);
}

/**
 * ktimer_run_queues - run the expired timers of this CPU
 *
 * Called from the timer softirq, which each base's wake-up event raises.
 * Clocks registered with %KTIMER_CLOCK_MANUAL are left to their owner.
 */
void ktimer_run_queues(void)
{
	int i;

	for (i = 0; i < KTIMER_MAX_CLOCKS; i++) {
		struct ktimer_clock *clock = READ_ONCE(ktimer_clocks[i]);
		struct ktimer_base *base;

		if (!clock || clock->flags & KTIMER_CLOCK_MANUAL)
			continue;
		base = ktimer_local_base(i);
		if (READ_ONCE(base->queue.rb_leftmost))
			ktimer_run_base(base);
	}
}

/**
 * ktimer_run_clock - run the expired timers of a manual clock on this CPU
 * @clock: a clock registered with %KTIMER_CLOCK_MANUAL
 *
 * The owner of a manual clock (a simulation, or a test driving a fake
 * clock) decides when its timers expire.  Callbacks run in this CPU's
 * context with bottom halves disabled, as they would in the softirq.
 *
 * Context: process context, or softirq context.
 */
void ktimer_run_clock(struct ktimer_clock *clock)
{
	if (WARN_ON_ONCE(!ktimer_clock_registered(clock) ||
			 !(clock->flags & KTIMER_CLOCK_MANUAL)))
		return;

	local_bh_disable();
	ktimer_run_base(ktimer_local_base(clock->index));
	local_bh_enable();
}
EXPORT_SYMBOL_GPL(ktimer_run_clock);

static void __ktimer_init(struct ktimer *timer, struct ktimer_clock *clock,
			  bool onstack)
{
	if (WARN_ON_ONCE(!timer))
		return;

	/* Before the memset: debug objects stop a timer that is still queued */
	ktimer_debug_init(timer, onstack);
	memset(timer, 0, sizeof(*timer));
	RB_CLEAR_NODE(&timer->node);
	if (WARN_ON_ONCE(!ktimer_clock_registered(clock)))
		return;
	timer->base = ktimer_cpu_base(raw_smp_processor_id(), clock->index);
	trace_ktimer_init(timer, clock);
}

/**
 * ktimer_init - initialise a timer on a clock
 * @timer: the timer
 * @clock: a registered clock
 *
 * Clears @timer and binds it to @clock and, until it is started, the
 * current CPU.  Must not be called on a pending timer (with
 * CONFIG_DEBUG_OBJECTS_KTIMERS that is reported, and the timer is stopped
 * first).  The caller sets ->function and ->data afterwards.  With an
 * unregistered @clock the timer is left unusable and every later call on
 * it returns -EINVAL.  A timer on the stack uses ktimer_init_on_stack().
 *
 * Context: any context.
 */
void ktimer_init(struct ktimer *timer, struct ktimer_clock *clock)
{
	__ktimer_init(timer, clock, false);
}
EXPORT_SYMBOL_GPL(ktimer_init);

/**
 * ktimer_init_on_stack - initialise a timer that lives on the stack
 * @timer: the timer, a local variable
 * @clock: a registered clock
 *
 * As ktimer_init(), and tells the debug objects code that @timer is on
 * the stack.  Pair it with destroy_ktimer_on_stack() before returning.
 *
 * Context: any context.
 */
void ktimer_init_on_stack(struct ktimer *timer, struct ktimer_clock *clock)
{
	__ktimer_init(timer, clock, true);
}
EXPORT_SYMBOL_GPL(ktimer_init_on_stack);

/**
 * destroy_ktimer_on_stack - end the life of a timer on the stack
 * @timer: a timer set up with ktimer_init_on_stack(), no longer pending
 *
 * Only does something with CONFIG_DEBUG_OBJECTS_KTIMERS, which then
 * reports (and stops) a timer that is still pending.
 *
 * Context: any context.
 */
void destroy_ktimer_on_stack(struct ktimer *timer)
{
	ktimer_debug_free(timer);
}
EXPORT_SYMBOL_GPL(destroy_ktimer_on_stack);

/**
 * init_ktimer_mono - initialise a timer on CLOCK_MONOTONIC
 * @timer: the timer
 *
 * Context: any context.
 */
void init_ktimer_mono(struct ktimer *timer)
{
	ktimer_init(timer, &ktimer_clock_monotonic);
}
EXPORT_SYMBOL_GPL(init_ktimer_mono);

/**
 * init_ktimer_real - initialise a timer on CLOCK_REALTIME
 * @timer: the timer
 *
 * Context: any context.
 */
void init_ktimer_real(struct ktimer *timer)
{
	ktimer_init(timer, &ktimer_clock_realtime);
}
EXPORT_SYMBOL_GPL(init_ktimer_real);

/*
 * The wake-up event, in hard interrupt context, only raises the softirq.
 * It does not re-arm itself for the next timer: the expiry run does that
 * at its end, after catching up with the timers that fell due meanwhile.
 * Re-arming here saves one reprogramming per wake-up when timers are
 * sparse, but when they are dense it makes the device interrupt again
 * for timers the run would have caught up with: measured under User Mode
 * Linux, that doubled the p99 lateness (docs/design.md, "The wake-up
 * event").  hrtimers with softirq callbacks make the same choice.
 */
static enum hrtimer_restart ktimer_event_fn(struct hrtimer *event)
{
	raise_softirq_irqoff(TIMER_SOFTIRQ);
	return HRTIMER_NORESTART;
}

/**
 * ktimer_register_clock - make a clock available to ktimers
 * @clock: the clock, with ->name, ->clockid, ->get_time and optionally
 *	   ->resolution and ->flags filled in; it must stay valid until
 *	   ktimer_unregister_clock()
 *
 * Sets up the clock's queue on every possible CPU.
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL (with a warning) for an incomplete registration,
 * -EBUSY if @clock is registered already, -ENOSPC if all
 * %KTIMER_MAX_CLOCKS slots are taken.
 */
int ktimer_register_clock(struct ktimer_clock *clock)
{
	unsigned int cpu;
	int i, ret = -ENOSPC;

	if (WARN_ON_ONCE(!clock || !clock->name || !clock->get_time ||
			 clock->resolution > NSEC_PER_SEC ||
			 (clock->map &&
			  clock->map->mult < BIT(KTIMER_MAP_SHIFT - 1))))
		return -EINVAL;

	mutex_lock(&ktimer_clocks_mutex);
	if (ktimer_clock_registered(clock)) {
		ret = -EBUSY;
		goto unlock;
	}
	for (i = 0; i < KTIMER_MAX_CLOCKS; i++) {
		if (!ktimer_clocks[i])
			break;
	}
	if (i == KTIMER_MAX_CLOCKS)
		goto unlock;

	for_each_possible_cpu(cpu) {
		struct ktimer_base *base = ktimer_cpu_base(cpu, i);

		if (!(clock->flags & KTIMER_CLOCK_MANUAL)) {
			hrtimer_init(&base->event, clock->clockid,
				     HRTIMER_MODE_ABS_PINNED_HARD);
			base->event.function = ktimer_event_fn;
		}
		raw_spin_lock_irq(&base->lock);
		base->next_event = KTIME_MAX;
		base->clock = clock;
		raw_spin_unlock_irq(&base->lock);
	}
	clock->index = i;
	/* Publish the slot only once every base is set up */
	smp_store_release(&ktimer_clocks[i], clock);
	ret = 0;
unlock:
	mutex_unlock(&ktimer_clocks_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(ktimer_register_clock);

/**
 * ktimer_clock_now - the current time of a clock
 * @clock: a clock, registered or not
 *
 * ->get_time, through the clock's map if it has one.
 *
 * Context: any context.
 * Return: the time every expiry on @clock is compared with.
 */
ktime_t ktimer_clock_now(const struct ktimer_clock *clock)
{
	return ktimer_now(clock);
}
EXPORT_SYMBOL_GPL(ktimer_clock_now);

/**
 * ktimer_clock_map_init - set up the map of a mapped clock
 * @map: the map, before the clock that points to it is registered
 *
 * The identity until the owner calls ktimer_clock_set_map().
 */
void ktimer_clock_map_init(struct ktimer_clock_map *map)
{
	raw_spin_lock_init(&map->lock);
	seqcount_raw_spinlock_init(&map->seq, &map->lock);
	map->event_base = 0;
	map->time_base = 0;
	map->mult = BIT(KTIMER_MAP_SHIFT);
	map->ended = false;
}
EXPORT_SYMBOL_GPL(ktimer_clock_map_init);

/*
 * Arm this CPU's event of @info's clock again after its map moved, as
 * clock_was_set() has every CPU retrigger its next hrtimer event.  A run in
 * progress here (this IPI interrupted a callback) reprograms at its end,
 * which the forgotten ->next_event makes it do.
 */
static void ktimer_remap_cpu(void *info)
{
	struct ktimer_clock *clock = info;
	struct ktimer_base *base = ktimer_local_base(clock->index);
	struct ktimer *first;

	raw_spin_lock(&base->lock);
	if (base->clock == clock) {
		base->next_event = KTIME_MAX;
		first = ktimer_first(base);
		if (first)
			ktimer_program_event(base, first->expires);
	}
	raw_spin_unlock(&base->lock);
}

/* After the map of @clock moved: arm each CPU's event for the new map */
static void ktimer_remap(struct ktimer_clock *clock)
{
	if (ktimer_clock_registered(clock) &&
	    !(clock->flags & KTIMER_CLOCK_MANUAL))
		on_each_cpu(ktimer_remap_cpu, clock, 1);
}

/**
 * ktimer_clock_set_map - move the map of a mapped clock
 * @clock: a clock with a ->map, registered or not
 * @event_time: a time of the clock that ->get_time reads, >= 0
 * @time: the time of @clock at @event_time, >= 0
 * @mult: nanoseconds of @clock per nanosecond of ->get_time's clock, in
 *	  units of 2^-%KTIMER_MAP_SHIFT: at least one half, below two
 *
 * Timers keep their expiries in @clock's time, so a step makes them due
 * earlier or later, as a step of CLOCK_REALTIME does for its timers: every
 * CPU's wake-up event is armed again for its earliest timer.  The owner
 * serialises this with the registration and removal of @clock.
 *
 * Context: process context with interrupts enabled; interrupts every CPU.
 * Return: 0, -ENODEV if ktimer_clock_end() ended @clock, or -EINVAL (with
 * a warning) for a clock without a map, a negative time or a rate outside
 * [1/2, 2).
 */
int ktimer_clock_set_map(struct ktimer_clock *clock, ktime_t event_time,
			 ktime_t time, u32 mult)
{
	struct ktimer_clock_map *map;
	unsigned long flags;
	bool ended;

	if (WARN_ON_ONCE(!clock || !clock->map || event_time < 0 || time < 0 ||
			 mult < BIT(KTIMER_MAP_SHIFT - 1)))
		return -EINVAL;

	map = clock->map;
	raw_spin_lock_irqsave(&map->lock, flags);
	ended = map->ended;
	if (!ended) {
		write_seqcount_begin(&map->seq);
		map->event_base = event_time;
		map->time_base = time;
		map->mult = mult;
		write_seqcount_end(&map->seq);
	}
	raw_spin_unlock_irqrestore(&map->lock, flags);
	if (ended)
		return -ENODEV;

	ktimer_remap(clock);
	return 0;
}
EXPORT_SYMBOL_GPL(ktimer_clock_set_map);

/**
 * ktimer_clock_end - end a mapped clock: every timer on it expires now
 * @clock: a clock with a ->map, registered or not
 *
 * For a clock that goes away while timers are pending, as a PTP clock whose
 * device is removed: the clock reads %KTIME_MAX from now on, so each
 * pending timer runs its callback at once, on its CPU, with ->expired set
 * to %KTIME_MAX, and a timer started later expires at once too (with
 * %KTIMER_NOCHECK) or is refused with -ETIME.  Owners tell their users from
 * the callback; no timer is left in a queue of a clock that is gone.  The
 * map no longer moves (ktimer_clock_set_map() returns -ENODEV), and the
 * clock stays registered until its owner unregisters it, after the last
 * timer on it is gone, so that no timer ever sees its slot taken by
 * another clock.
 *
 * Context: process context with interrupts enabled; interrupts every CPU.
 * Return: 0, or -EINVAL (with a warning) for a clock without a map.
 */
int ktimer_clock_end(struct ktimer_clock *clock)
{
	struct ktimer_clock_map *map;
	unsigned long flags;

	if (WARN_ON_ONCE(!clock || !clock->map))
		return -EINVAL;

	map = clock->map;
	raw_spin_lock_irqsave(&map->lock, flags);
	write_seqcount_begin(&map->seq);
	map->ended = true;
	write_seqcount_end(&map->seq);
	raw_spin_unlock_irqrestore(&map->lock, flags);

	ktimer_remap(clock);
	return 0;
}
EXPORT_SYMBOL_GPL(ktimer_clock_end);

/* Close every base of slot @index for new timers unless one is in use. */
static bool ktimer_close_bases(int index, struct ktimer_clock *clock)
{
	unsigned int cpu, undo;

	for_each_possible_cpu(cpu) {
		struct ktimer_base *base = ktimer_cpu_base(cpu, index);
		bool busy;

		raw_spin_lock_irq(&base->lock);
		busy = !RB_EMPTY_ROOT(&base->queue.rb_root) || base->running;
		if (!busy)
			base->clock = NULL;
		raw_spin_unlock_irq(&base->lock);
		if (!busy)
			continue;

		for_each_possible_cpu(undo) {
			if (undo == cpu)
				break;
			base = ktimer_cpu_base(undo, index);
			raw_spin_lock_irq(&base->lock);
			base->clock = clock;
			raw_spin_unlock_irq(&base->lock);
		}
		return false;
	}
	return true;
}

/**
 * ktimer_unregister_clock - remove a clock registered by ktimer_register_clock()
 * @clock: the clock
 *
 * Fails while any timer on @clock is pending or running.  Afterwards,
 * timers still bound to @clock are refused with -EINVAL.
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL if @clock is not registered, -EBUSY if a timer on it
 * is pending or running.
 */
int ktimer_unregister_clock(struct ktimer_clock *clock)
{
	unsigned int cpu;
	int ret = 0;

	mutex_lock(&ktimer_clocks_mutex);
	if (!ktimer_clock_registered(clock)) {
		ret = -EINVAL;
		goto unlock;
	}
	if (!ktimer_close_bases(clock->index, clock)) {
		ret = -EBUSY;
		goto unlock;
	}
	WRITE_ONCE(ktimer_clocks[clock->index], NULL);
	/* The softirq walks the slots with bottom halves disabled */
	synchronize_rcu();
	if (!(clock->flags & KTIMER_CLOCK_MANUAL)) {
		for_each_possible_cpu(cpu)
			hrtimer_cancel(&ktimer_cpu_base(cpu, clock->index)->event);
	}
unlock:
	mutex_unlock(&ktimer_clocks_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(ktimer_unregister_clock);

/**
 * ktimer_clock_find - the registered clock that implements a POSIX clock
 * @clockid: e.g. CLOCK_MONOTONIC
 *
 * Clocks registered with %KTIMER_CLOCK_MANUAL are not found, nor mapped
 * ones: their ->clockid is only the clock their map starts from.
 *
 * Return: the clock, or NULL if none is registered for @clockid.
 */
struct ktimer_clock *ktimer_clock_find(clockid_t clockid)
{
	struct ktimer_clock *clock = NULL;

	while ((clock = ktimer_next_clock(clock))) {
		if (clock->clockid == clockid && !clock->map)
			return clock;
	}
	return NULL;
}
EXPORT_SYMBOL_GPL(ktimer_clock_find);

/**
 * ktimer_next_clock - walk the registered clocks
 * @prev: NULL to start, else the clock the previous call returned
 *
 * Visits every registered clock that the softirq runs (not the
 * %KTIMER_CLOCK_MANUAL ones) in registration slot order.  Meant for
 * clocks that stay registered, such as the built-in ones.
 *
 * Return: the next clock, or NULL after the last.
 */
struct ktimer_clock *ktimer_next_clock(const struct ktimer_clock *prev)
{
	int i = prev ? prev->index + 1 : 0;

	for (; i < KTIMER_MAX_CLOCKS; i++) {
		struct ktimer_clock *clock = READ_ONCE(ktimer_clocks[i]);

		if (clock && !(clock->flags & KTIMER_CLOCK_MANUAL))
			return clock;
	}
	return NULL;
}
EXPORT_SYMBOL_GPL(ktimer_next_clock);

/**
 * ktimer_clock_pending - number of timers pending on a clock
 * @clock: a registered clock
 *
 * Return: the sum over all CPUs, a snapshot without locking.
 */
unsigned int ktimer_clock_pending(const struct ktimer_clock *clock)
{
	unsigned int cpu, sum = 0;

	if (!ktimer_clock_registered(clock))
		return 0;
	for_each_possible_cpu(cpu)
		sum += READ_ONCE(ktimer_cpu_base(cpu, clock->index)->count);
	return sum;
}
EXPORT_SYMBOL_GPL(ktimer_clock_pending);

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * ktimer_test_event - the wake-up event of this CPU's base of a clock
 * @clock: a registered clock that is not %KTIMER_CLOCK_MANUAL
 * @clockid: receives the hrtimer clock the event runs on
 * @soft: receives the earliest time the event may fire
 * @hard: receives the latest time the event may fire
 *
 * For the KUnit tests only: what the expiry engine programmed.  The caller
 * keeps itself on one CPU.
 *
 * Return: true if the event is armed.
 */
bool ktimer_test_event(struct ktimer_clock *clock, clockid_t *clockid,
		       ktime_t *soft, ktime_t *hard)
{
	struct ktimer_base *base;
	bool armed;

	if (!ktimer_clock_registered(clock) ||
	    clock->flags & KTIMER_CLOCK_MANUAL)
		return false;
	base = ktimer_cpu_base(raw_smp_processor_id(), clock->index);
	raw_spin_lock_irq(&base->lock);
	armed = hrtimer_is_queued(&base->event);
	*clockid = base->event.base->clockid;
	*soft = hrtimer_get_softexpires(&base->event);
	*hard = hrtimer_get_expires(&base->event);
	raw_spin_unlock_irq(&base->lock);
	return armed;
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_test_event);

/**
 * ktimer_test_map - convert through a clock map
 * @map: an initialised map
 * @in: a time of the event clock, or with @to_event of the mapped clock
 * @to_event: convert a mapped time to the event clock's
 *
 * For the KUnit tests only: the conversions the expiry engine makes.
 *
 * Return: the converted time, saturated at KTIME_MIN and KTIME_MAX.
 */
ktime_t ktimer_test_map(struct ktimer_clock_map *map, ktime_t in, bool to_event)
{
	return ktimer_map(map, in, to_event);
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_test_map);

static unsigned int ktimer_subtree_height(const struct rb_node *node)
{
	if (!node)
		return 0;
	return 1 + max(ktimer_subtree_height(node->rb_left),
		       ktimer_subtree_height(node->rb_right));
}

/**
 * ktimer_test_queue_height - height of this CPU's queue of a clock
 * @clock: a registered clock
 *
 * For the KUnit tests only: the most nodes a start walks on this CPU.
 * The caller keeps itself on one CPU.
 *
 * Return: the number of nodes on the longest path from the root, 0 for an
 * empty queue or an unregistered clock.
 */
unsigned int ktimer_test_queue_height(struct ktimer_clock *clock)
{
	struct ktimer_base *base;
	unsigned int height;

	if (!ktimer_clock_registered(clock))
		return 0;
	base = ktimer_cpu_base(raw_smp_processor_id(), clock->index);
	raw_spin_lock_irq(&base->lock);
	height = ktimer_subtree_height(base->queue.rb_root.rb_node);
	raw_spin_unlock_irq(&base->lock);
	return height;
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_test_queue_height);
#endif

/* Wake @data, a task sleeping in schedule_ktimer() */
static void ktimer_wake_sleeper(void *data)
{
	wake_up_process(data);
}

/**
 * schedule_ktimer - sleep until a timer expires
 * @timer: an initialised timer that is not pending; its ->function and
 *	   ->data are overwritten (a pending timer is refused untouched)
 * @t: expiry as for start_ktimer(); receives the absolute expiry
 * @state: %TASK_INTERRUPTIBLE (a signal ends the sleep early) or
 *	   %TASK_UNINTERRUPTIBLE, optionally with %TASK_FREEZABLE
 * @mode: as for start_ktimer()
 *
 * Context: process context; sleeps.
 * Return: 0 after the full sleep (or when @t had already passed), the
 * time that was left when a signal ended the sleep, -EBUSY for a pending
 * @timer, or a negative error code from start_ktimer() for a caller error.
 */
ktime_t schedule_ktimer(struct ktimer *timer, ktime_t *t, unsigned int state,
			int mode)
{
	struct ktimer_base *base;
	unsigned long flags;
	ktime_t rem;
	int ret;

	if (ktimer_check_timer(timer) || WARN_ON_ONCE(!t))
		return -EINVAL;
	base = ktimer_lock_base(timer, &flags);
	ret = ktimer_active(timer) ? -EBUSY : 0;
	raw_spin_unlock_irqrestore(&base->lock, flags);
	if (ret)
		return ret;

	timer->function = ktimer_wake_sleeper;
	timer->data = current;

	set_current_state(state);
	ret = start_ktimer(timer, t, mode);
	if (ret) {
		__set_current_state(TASK_RUNNING);
		if (ret != -ETIME)
			return ret;
		*t = timer->expires;
		return 0;
	}

	while (ktimer_active(timer) && !signal_pending_state(state, current)) {
		schedule();
		set_current_state(state);
	}
	__set_current_state(TASK_RUNNING);
	*t = timer->expires;
	if (stop_ktimer(timer) != 1)
		return 0;	/* it fired: the full sleep */

	/* Woken early: only here is the time left worth a clock read */
	rem = get_remtime_ktimer(timer, 0);
	return rem > 0 ? rem : 0;
}
EXPORT_SYMBOL_GPL(schedule_ktimer);

/*
 * Sleep until @t on @clock (@mode: KTIMER_ABS or KTIMER_REL), interruptibly
 * and freezable.  Returns 0 after the full sleep, else the time that was
 * left when a signal ended it; *@expires receives the absolute expiry.
 */
ktime_t ktimer_sleep(struct ktimer_clock *clock, ktime_t t, int mode,
		     ktime_t *expires)
{
	struct ktimer timer;
	ktime_t rem;

	ktimer_init_on_stack(&timer, clock);
	/*
	 * Freezable: the freezer must not fake a signal.  NOCHECK: an expiry
	 * that has passed (nanosleep(0)) still sleeps until the softirq runs
	 * the timer, so the task yields the CPU as do_nanosleep() makes it.
	 */
	rem = schedule_ktimer(&timer, &t, TASK_INTERRUPTIBLE | TASK_FREEZABLE,
			      mode | KTIMER_NOCHECK);
	destroy_ktimer_on_stack(&timer);
	*expires = t;
	return rem;
}

/*
 * Sleep until @t on @clock.  After a signal, copy the time left to user
 * space if the syscall asked for it (nanosleep_copyout() knows where) and
 * ask for a restart.
 */
static long ktimer_sleep_until(struct ktimer_clock *clock, ktime_t t,
			       int mode, ktime_t *expires)
{
	struct restart_block *restart = &current->restart_block;
	ktime_t rem = ktimer_sleep(clock, t, mode, expires);

	if (rem <= 0)
		return rem;

	if (restart->nanosleep.type != TT_NONE) {
		struct timespec64 left = ktime_to_timespec64(rem);

		/* -ERESTART_RESTARTBLOCK once stored, -EFAULT if it cannot be */
		return nanosleep_copyout(restart, &left);
	}
	return -ERESTART_RESTARTBLOCK;
}

static long ktimer_nanosleep_restart(struct restart_block *restart)
{
	struct ktimer_clock *clock = ktimer_clock_find(restart->nanosleep.clockid);
	ktime_t expires;

	if (WARN_ON_ONCE(!clock))
		return -EINVAL;
	return ktimer_sleep_until(clock, restart->nanosleep.expires, KTIMER_ABS,
				  &expires);
}

/**
 * ktimer_nanosleep - nanosleep on a ktimer clock, with restart after signals
 * @clock: a registered clock
 * @rqtp: the time to sleep (%KTIMER_REL) or to sleep until (%KTIMER_ABS)
 * @mode: %KTIMER_REL or %KTIMER_ABS
 *
 * The path the nanosleep() and clock_nanosleep() syscalls take through
 * ktimers.  The caller sets current->restart_block.nanosleep.type (and the
 * user pointer for the remaining time) as for hrtimer_nanosleep(); a
 * kernel caller leaves it at %TT_NONE.  @rqtp is rounded up to the clock's
 * resolution, as in the 2005 posting.  After a signal a relative sleep is
 * restarted for the time that was left, by restart_block.fn, and an
 * absolute one as it was (POSIX).
 *
 * Context: process context; sleeps.
 * Return: 0 after the full sleep, -ERESTART_RESTARTBLOCK or -ERESTARTNOHAND
 * after a signal, -EFAULT if the remaining time could not be stored,
 * -EINVAL for an unregistered clock, an invalid @rqtp or @mode.
 */
long ktimer_nanosleep(struct ktimer_clock *clock, const struct timespec64 *rqtp,
		      int mode)
{
	struct restart_block *restart = &current->restart_block;
	ktime_t t, expires;
	long ret;

	if (!ktimer_clock_registered(clock) || !rqtp ||
	    !timespec64_valid(rqtp) ||
	    (mode != KTIMER_REL && mode != KTIMER_ABS))
		return -EINVAL;

	t = ktimer_round_up(timespec64_to_ktime(*rqtp),
			    ktimer_clock_resolution(clock));
	ret = ktimer_sleep_until(clock, t, mode, &expires);
	if (ret != -ERESTART_RESTARTBLOCK)
		return ret;
	if (mode == KTIMER_ABS)
		return -ERESTARTNOHAND;

	restart->nanosleep.clockid = clock->clockid;
	restart->nanosleep.expires = expires;
	/* also records the syscall's ABI, so a compat task restarts as one */
	return set_restart_fn(restart, ktimer_nanosleep_restart);
}
EXPORT_SYMBOL_GPL(ktimer_nanosleep);

/**
 * ktimer_nanosleep_mono - ktimer_nanosleep() on CLOCK_MONOTONIC
 * @rqtp: the time to sleep, or to sleep until
 * @mode: %KTIMER_REL or %KTIMER_ABS
 *
 * Return: as ktimer_nanosleep().
 */
long ktimer_nanosleep_mono(const struct timespec64 *rqtp, int mode)
{
	return ktimer_nanosleep(&ktimer_clock_monotonic, rqtp, mode);
}
EXPORT_SYMBOL_GPL(ktimer_nanosleep_mono);

/**
 * ktimer_nanosleep_real - ktimer_nanosleep() on CLOCK_REALTIME
 * @rqtp: the time to sleep, or to sleep until
 * @mode: %KTIMER_REL or %KTIMER_ABS
 *
 * Return: as ktimer_nanosleep().
 */
long ktimer_nanosleep_real(const struct timespec64 *rqtp, int mode)
{
	return ktimer_nanosleep(&ktimer_clock_realtime, rqtp, mode);
}
EXPORT_SYMBOL_GPL(ktimer_nanosleep_real);

/*
 * Move the timers of dead CPU @cpu to this CPU, in expiry order, and
 * re-arm this CPU's wake-up events.  Runs on the control CPU after @cpu
 * is dead, so nothing runs on its bases any more.
 */
static int ktimer_cpu_dead(unsigned int cpu)
{
	int i;

	for (i = 0; i < KTIMER_MAX_CLOCKS; i++) {
		struct ktimer_clock *clock = READ_ONCE(ktimer_clocks[i]);

		if (clock && !(clock->flags & KTIMER_CLOCK_MANUAL))
			hrtimer_cancel(&ktimer_cpu_base(cpu, i)->event);
	}

	local_irq_disable();
	for (i = 0; i < KTIMER_MAX_CLOCKS; i++) {
		struct ktimer_base *old = ktimer_cpu_base(cpu, i);
		struct ktimer_base *new = ktimer_local_base(i);
		struct ktimer *timer;

		if (!READ_ONCE(ktimer_clocks[i]))
			continue;

		raw_spin_lock(&new->lock);
		raw_spin_lock_nested(&old->lock, SINGLE_DEPTH_NESTING);
		WARN_ON_ONCE(old->running);
		while ((timer = ktimer_first(old))) {
			ktimer_dequeue(timer, old);
			WRITE_ONCE(timer->base, new);
			ktimer_enqueue(timer, new);
		}
		old->next_event = KTIME_MAX;
		raw_spin_unlock(&old->lock);
		raw_spin_unlock(&new->lock);
	}
	local_irq_enable();
	return 0;
}

struct ktimer_clock ktimer_clock_monotonic = {
	.name		= "monotonic",
	.clockid	= CLOCK_MONOTONIC,
	.get_time	= ktime_get,
};
EXPORT_SYMBOL_GPL(ktimer_clock_monotonic);

/*
 * An inserted leap second repeats 23:59:59, but only the tick after the
 * leap edge steps the realtime offset back: until then ktime_get_real()
 * reads the new day, and a run of the softirq in that window (the timer
 * wheel raises it too) would expire a timer due at midnight a second
 * early.  ktime_get_update_offsets_now() applies the leap second from the
 * edge on, which is how hrtimers read the offset since "time: Prevent
 * early expiry of hrtimers[CLOCK_REALTIME] at the leap second edge"
 * (2015).  It hands out the offsets only for a sequence that differs
 * from the timekeeper's, so ask again with another one when it matched.
 */
static ktime_t ktimer_get_real(void)
{
	ktime_t mono, offs_real, offs_boot, offs_tai;
	unsigned int asked = 0, seq;

	do {
		seq = asked++;
		mono = ktime_get_update_offsets_now(&seq, &offs_real,
						    &offs_boot, &offs_tai);
	} while (seq == asked - 1);
	return ktime_add(mono, offs_real);
}

struct ktimer_clock ktimer_clock_realtime = {
	.name		= "realtime",
	.clockid	= CLOCK_REALTIME,
	.get_time	= ktimer_get_real,
};
EXPORT_SYMBOL_GPL(ktimer_clock_realtime);

EXPORT_TRACEPOINT_SYMBOL_GPL(ktimer_init);
EXPORT_TRACEPOINT_SYMBOL_GPL(ktimer_start);
EXPORT_TRACEPOINT_SYMBOL_GPL(ktimer_expire_entry);
EXPORT_TRACEPOINT_SYMBOL_GPL(ktimer_expire_exit);
EXPORT_TRACEPOINT_SYMBOL_GPL(ktimer_cancel);

/* Locks and queues of every slot are set up once, before any clock */
static void __init ktimer_init_bases(void)
{
	unsigned int cpu;
	int i;

	for_each_possible_cpu(cpu) {
		for (i = 0; i < KTIMER_MAX_CLOCKS; i++) {
			struct ktimer_base *base = ktimer_cpu_base(cpu, i);

			raw_spin_lock_init(&base->lock);
			base->queue = RB_ROOT_CACHED;
			base->cpu = cpu;
			base->next_event = KTIME_MAX;
		}
	}
}

/**
 * ktimers_init - set up the bases and register the built-in clocks
 *
 * Called by start_kernel() once interrupts are on and before the first
 * fork, so that every process's ITIMER_REAL ktimer (CONFIG_KTIMER_USERS)
 * finds CLOCK_MONOTONIC registered; an initcall would run after init and
 * kthreadd are forked.
 *
 * Context: early boot, process context.
 */
void __init ktimers_init(void)
{
	int ret;

	ktimer_init_bases();
	ret = ktimer_register_clock(&ktimer_clock_monotonic);
	if (!ret)
		ret = ktimer_register_clock(&ktimer_clock_realtime);
	if (ret)
		pr_err("ktimers: cannot register the clock bases: %d\n", ret);
}

/* CPU hotplug states can only be set up once the initcalls run */
static int __init ktimers_hotplug_init(void)
{
	int ret;

	ret = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "ktimer:dead",
					NULL, ktimer_cpu_dead);
	return ret < 0 ? ret : 0;
}
early_initcall(ktimers_hotplug_init);
