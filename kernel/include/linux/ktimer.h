/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktimers - nanosecond timers on per-CPU clock bases
 *
 * The design follows the ktimers subsystem that Thomas Gleixner posted in
 * September 2005 ("[PATCH] ktimers subsystem", described in LWN's "A new
 * approach to kernel timers"): timers, as opposed to timeouts, are kept in
 * a time-ordered queue per CPU and per clock, expressed in nanoseconds and
 * not bound to jiffies.  This is a reimplementation for Linux 6.12.
 */
#ifndef _LINUX_KTIMER_H
#define _LINUX_KTIMER_H

#include <linux/bits.h>
#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/init.h>
#include <linux/ktime.h>
#include <linux/rbtree.h>
#include <linux/seqlock_types.h>
#include <linux/spinlock_types.h>
#include <linux/time64.h>
#include <linux/types.h>

struct ktimer_base;

/**
 * struct ktimer - a timer on one clock
 * @base:	per-CPU clock base the timer belongs to (internal)
 * @node:	queue linkage; empty while the timer is not queued (internal)
 * @expires:	absolute expiry time on the timer's clock
 * @function:	callback, run from the timer softirq with @data
 * @data:	argument passed to @function
 * @pass:	expiry pass of @base in which the timer was queued (internal)
 * @overrun:	number of periods added by %KTIMER_FORWARD, %KTIMER_REARM
 *		and the automatic re-arm of periodic timers (saturates at
 *		U32_MAX; forward_ktimer() returns the full 64-bit count)
 * @interval:	period; a value > 0 re-arms the timer after each expiry
 * @expired:	the clock's time when the timer last expired or when a start
 *		refused its expiry (a stop leaves it alone)
 *
 * A timer must be initialised with init_ktimer_mono(), init_ktimer_real()
 * or ktimer_init() before use.  The caller then sets @function, @data and,
 * for a periodic timer, @interval.
 *
 * The layout is for the cache lines of a big queue.  A walk down the tree
 * reads the child links of @node and @expires: they are adjacent, as in a
 * timerqueue_node, with @base before them (on 32-bit arches that align
 * 64-bit values to 8 bytes it fills the hole a 12-byte rb_node would leave
 * before @expires).  Everything a start, a stop and an expiry touch comes
 * next, and what only periodic timers and readers of the 2005 fields use
 * comes last: on 64-bit arches the first 64 bytes hold all but @interval
 * and @expired.  @overrun is 32 bits, as the posting's int was, and the
 * stopped-in-callback state lives in the base, which only needs it for the
 * one running timer: 56 bytes on 32-bit arches, 80 on 64-bit ones.
 */
struct ktimer {
	struct ktimer_base	*base;
	struct rb_node		node;
	ktime_t			expires;
	void			(*function)(void *data);
	void			*data;
	unsigned int		pass;
	u32			overrun;
	ktime_t			interval;
	ktime_t			expired;
};

/*
 * Values of the mode argument of start_ktimer() and modify_ktimer().  The
 * numbers are those of the 2005 posting.
 */
enum ktimer_mode {
	KTIMER_ABS = 1,		/* *tim is the absolute expiry time */
	KTIMER_REL,		/* *tim is relative to now */
	KTIMER_INCR,		/* *tim is added to the previous expiry */
	KTIMER_FORWARD,		/* add *tim until in the future, count overruns */
	KTIMER_REARM,		/* add ->interval until in the future, count */
	KTIMER_RESTART,		/* restart with the stored expiry */
};

/* Queue the timer even if its expiry is not in the future */
#define KTIMER_NOCHECK		0x10000

/**
 * struct ktimer_clock_map - a clock that runs as a linear function of another
 * @seq:	readers retry while the map changes
 * @lock:	serialises the writers of @seq
 * @event_base:	a time of the event clock (the one ->get_time reads)
 * @time_base:	the mapped clock's time at @event_base
 * @mult:	mapped nanoseconds per event clock nanosecond, in units of
 *		2^-%KTIMER_MAP_SHIFT
 * @ended:	ktimer_clock_end() was called: the clock reads %KTIME_MAX
 *
 * A clock that no hrtimer clock serves (a PTP hardware clock, whose reads
 * may sleep) can still have ktimers: it registers the hrtimer clock it is
 * measured against as ->clockid and ->get_time, and a map from that clock
 * to its own time.  Timers keep their expiries in the mapped time and the
 * wake-up event is armed at the inverse.  The owner moves the map with
 * ktimer_clock_set_map() whenever the clock is set or its rate adjusted,
 * as clock_was_set() re-evaluates the CLOCK_REALTIME hrtimers.
 */
struct ktimer_clock_map {
	seqcount_raw_spinlock_t	seq;
	raw_spinlock_t		lock;
	ktime_t			event_base;
	ktime_t			time_base;
	u32			mult;
	bool			ended;
};

/* @mult of struct ktimer_clock_map is a fixed-point number with this many bits of fraction */
#define KTIMER_MAP_SHIFT	31

/**
 * struct ktimer_clock - registration of a clock that ktimers can run on
 * @name:	short name for diagnostics
 * @clockid:	the POSIX clock it implements; unless %KTIMER_CLOCK_MANUAL is
 *		set, also the hrtimer clock that wakes the CPU at the earliest
 *		expiry.  With a @map, only the latter: the clock the map
 *		starts from
 * @get_time:	reads the clock (with a @map: the clock the map starts
 *		from); called with interrupts disabled
 * @resolution:	timer resolution in nanoseconds (at most NSEC_PER_SEC);
 *		0 means the resolution of the expiry engine
 * @flags:	%KTIMER_CLOCK_MANUAL: expired timers are run only when the
 *		owner calls ktimer_run_clock(), never from the softirq
 * @index:	slot assigned by ktimer_register_clock() (internal)
 * @map:	NULL, or the map from @get_time's clock to this clock's time:
 *		see struct ktimer_clock_map
 *
 * Adding a clock is one registration: see ktimer_register_clock().
 */
struct ktimer_clock {
	const char		*name;
	clockid_t		clockid;
	ktime_t			(*get_time)(void);
	u32			resolution;
	unsigned int		flags;
	int			index;
	struct ktimer_clock_map	*map;
};

#define KTIMER_CLOCK_MANUAL	BIT(0)

/* At most this many clocks can be registered at once */
#define KTIMER_MAX_CLOCKS	8

#ifdef CONFIG_KTIMERS

extern struct ktimer_clock ktimer_clock_monotonic;
extern struct ktimer_clock ktimer_clock_realtime;
extern struct ktimer_clock ktimer_clock_boottime;
extern struct ktimer_clock ktimer_clock_tai;

int ktimer_register_clock(struct ktimer_clock *clock);
int ktimer_unregister_clock(struct ktimer_clock *clock);
void ktimer_run_clock(struct ktimer_clock *clock);

void ktimer_clock_map_init(struct ktimer_clock_map *map);
int ktimer_clock_set_map(struct ktimer_clock *clock, ktime_t event_time,
			 ktime_t time, u32 mult);
ktime_t ktimer_clock_now(const struct ktimer_clock *clock);
int ktimer_clock_end(struct ktimer_clock *clock);

void ktimer_init(struct ktimer *timer, struct ktimer_clock *clock);
void ktimer_init_on_stack(struct ktimer *timer, struct ktimer_clock *clock);
void destroy_ktimer_on_stack(struct ktimer *timer);
void init_ktimer_mono(struct ktimer *timer);
void init_ktimer_real(struct ktimer *timer);
void init_ktimer_boottime(struct ktimer *timer);
void init_ktimer_tai(struct ktimer *timer);

int start_ktimer(struct ktimer *timer, const ktime_t *tim, int mode);
int modify_ktimer(struct ktimer *timer, const ktime_t *tim, int mode);
int try_to_stop_ktimer(struct ktimer *timer);
int stop_ktimer(struct ktimer *timer);
void ktimer_wait_callback(const struct ktimer *timer);
int ktimer_change_clock(struct ktimer *timer, struct ktimer_clock *clock);

ktime_t get_remtime_ktimer(struct ktimer *timer, long fake);
ktime_t get_expiry_ktimer(struct ktimer *timer, ktime_t *now);
u64 forward_ktimer(struct ktimer *timer, ktime_t now, ktime_t period);
ktime_t ktimer_convert_timespec(struct ktimer *timer,
				const struct timespec64 *ts);
int get_ktimer_mono_res(clockid_t which_clock, struct timespec64 *tp);
int get_ktimer_real_res(clockid_t which_clock, struct timespec64 *tp);
u32 ktimer_clock_resolution(const struct ktimer_clock *clock);

ktime_t schedule_ktimer(struct ktimer *timer, ktime_t *t, unsigned int state,
			int mode);
long ktimer_nanosleep(struct ktimer_clock *clock, const struct timespec64 *rqtp,
		      int mode);
long ktimer_nanosleep_mono(const struct timespec64 *rqtp, int mode);
long ktimer_nanosleep_real(const struct timespec64 *rqtp, int mode);

bool ktimer_highres_enabled(void);
struct ktimer_clock *ktimer_clock_find(clockid_t clockid);
struct ktimer_clock *ktimer_next_clock(const struct ktimer_clock *prev);
unsigned int ktimer_clock_pending(const struct ktimer_clock *clock);

/* Called from the timer softirq */
void ktimer_run_queues(void);
/* Called from start_kernel() */
void __init ktimers_init(void);

#else /* !CONFIG_KTIMERS */

static inline void ktimer_run_queues(void) { }
static inline void ktimers_init(void) { }

#endif /* CONFIG_KTIMERS */

/* The user-space paths that CONFIG_KTIMER_USERS serves with ktimers */
enum ktimer_user_kind {
	KTIMER_USER_NANOSLEEP,
	KTIMER_USER_ITIMER,
	KTIMER_USER_POSIX_TIMER,
	KTIMER_USER_TIMERFD,
	/* sleeps, POSIX timers and timerfds on dynamic POSIX (PTP) clocks */
	KTIMER_USER_PCLOCK,
	KTIMER_USER_KINDS
};

struct itimerspec64;
struct ktimer_pclock;
struct posix_clock;
struct signal_struct;
struct task_struct;

#ifdef CONFIG_KTIMER_USERS

bool ktimer_users_on(void);
bool ktimer_serves(clockid_t clockid);
bool ktimer_serves_timerfd(clockid_t clockid);
unsigned long ktimer_user_calls_count(enum ktimer_user_kind kind);
clockid_t ktimer_user_clockid(clockid_t clockid, bool absolute);
long ktimer_user_nanosleep(ktime_t rqtp, bool abs, clockid_t clockid);
void ktimer_user_count(enum ktimer_user_kind kind);
struct timespec64 ktimer_user_remaining(ktime_t rem, u32 granularity);
s64 ktimer_overrun_add(s64 overrun, u64 periods);

void ktimer_itimer_init(struct signal_struct *sig);
void ktimer_itimer_exit(struct signal_struct *sig);
struct timespec64 ktimer_itimer_remaining(struct signal_struct *sig);
void ktimer_setitimer(struct task_struct *tsk,
		      const struct itimerspec64 *value,
		      struct itimerspec64 *ovalue);
void ktimer_itimer_rearm(struct signal_struct *sig);

struct ktimer_pclock *ktimer_pclock_create(struct posix_clock *pc,
					   const char *name);
void ktimer_pclock_remove(struct ktimer_pclock *kp);
void ktimer_pclock_adjusted(struct ktimer_pclock *kp);
struct ktimer_pclock *ktimer_pclock_get(struct ktimer_pclock *kp);
void ktimer_pclock_put(struct ktimer_pclock *kp);
struct ktimer_clock *ktimer_pclock_clock(struct ktimer_pclock *kp);
bool ktimer_pclock_gone(const struct ktimer_pclock *kp);
long ktimer_pclock_nanosleep(struct ktimer_pclock *kp, clockid_t which_clock,
			     int flags, const struct timespec64 *rqtp);

#else /* !CONFIG_KTIMER_USERS */

static inline bool ktimer_users_on(void)
{
	return false;
}

static inline bool ktimer_serves(clockid_t clockid)
{
	return false;
}

static inline bool ktimer_serves_timerfd(clockid_t clockid)
{
	return false;
}

static inline unsigned long ktimer_user_calls_count(enum ktimer_user_kind kind)
{
	return 0;
}

/* Never called: ktimer_serves() is false */
static inline long ktimer_user_nanosleep(ktime_t rqtp, bool abs,
					 clockid_t clockid)
{
	return -EINVAL;
}

static inline void ktimer_itimer_init(struct signal_struct *sig) { }
static inline void ktimer_itimer_exit(struct signal_struct *sig) { }

/* The three below are never called: ktimer_users_on() is false */
static inline struct timespec64 ktimer_itimer_remaining(struct signal_struct *sig)
{
	return (struct timespec64){};
}

static inline void ktimer_setitimer(struct task_struct *tsk,
				    const struct itimerspec64 *value,
				    struct itimerspec64 *ovalue) { }
static inline void ktimer_itimer_rearm(struct signal_struct *sig) { }

#endif /* CONFIG_KTIMER_USERS */

/**
 * ktimer_active - is the timer queued?
 * @timer: the timer
 *
 * Return: true while @timer waits in a queue for its expiry.  A timer whose
 * callback runs and which was not re-armed is not active, nor is a NULL
 * @timer.  The answer is a snapshot unless the caller serialises against
 * the timer's users.
 */
static inline bool ktimer_active(const struct ktimer *timer)
{
	return timer && !RB_EMPTY_NODE(&timer->node);
}

/**
 * ktimer_set_expires - set the expiry of a timer that is not pending
 * @timer: an initialised timer that is not pending
 * @expires: the expiry, on the timer's clock
 *
 * For a timer that keeps an expiry without being queued, as a POSIX timer
 * with SIGEV_NONE does (hrtimer_set_expires() for hrtimers).  A pending
 * timer must be changed with modify_ktimer() instead.
 */
static inline void ktimer_set_expires(struct ktimer *timer, ktime_t expires)
{
	if (!WARN_ON_ONCE(ktimer_active(timer)))
		timer->expires = expires;
}

#endif /* _LINUX_KTIMER_H */
