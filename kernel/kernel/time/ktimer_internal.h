/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktimers internals shared by ktimer.c and its debugfs view; not an API.
 */
#ifndef _KERNEL_TIME_KTIMER_INTERNAL_H
#define _KERNEL_TIME_KTIMER_INTERNAL_H

#include <linux/hrtimer.h>
#include <linux/ktimer.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/rbtree.h>
#include <linux/spinlock.h>

/**
 * struct ktimer_base - the queue of one clock on one CPU
 * @lock:		protects the queue and the state of its timers
 * @count:		number of pending timers
 * @queue:		pending timers ordered by expiry, ties in start order
 * @clock:		the clock; NULL while the slot is not registered
 * @running:		timer whose callback runs right now, or NULL
 * @next_event:		expiry @event is armed for, KTIME_MAX if none
 * @pass:		incremented at each expiry run
 * @cpu:		the CPU the base belongs to
 * @expiring:		an expiry run is in progress and reprograms at its end
 * @running_stopped:	@running was stopped from its own callback: no
 *			automatic re-arm of its period
 * @running_task:	task in whose context @running's callback runs
 * @event:		wakes the CPU for the earliest expiry
 *
 * Everything a start or a stop reads comes before @running_task, within
 * 64 bytes on 64-bit arches; the expiry run and @event follow.
 */
struct ktimer_base {
	raw_spinlock_t		lock;
	unsigned int		count;
	struct rb_root_cached	queue;
	struct ktimer_clock	*clock;
	struct ktimer		*running;
	ktime_t			next_event;
	unsigned int		pass;
	unsigned int		cpu;
	bool			expiring;
	bool			running_stopped;
	struct task_struct	*running_task;
	struct hrtimer		event;
};

struct ktimer_cpu_bases {
	struct ktimer_base	base[KTIMER_MAX_CLOCKS];
};

DECLARE_PER_CPU_ALIGNED(struct ktimer_cpu_bases, ktimer_cpu_bases);

/* Registered clocks by slot; written under ktimer_clocks_mutex */
extern struct ktimer_clock *ktimer_clocks[KTIMER_MAX_CLOCKS];

static inline struct ktimer_base *ktimer_cpu_base(unsigned int cpu, int index)
{
	return &per_cpu_ptr(&ktimer_cpu_bases, cpu)->base[index];
}

int ktimer_debug_show(struct seq_file *m, void *v);

/**
 * struct ktimer_overdue - the most overdue timer, as ktimer_overdue() found it
 * @late:	how long it is overdue, in ns; 0 if no timer is
 * @cpu:	the CPU whose queue holds it
 * @function:	its callback
 * @clock:	the name of its clock
 */
struct ktimer_overdue {
	s64		late;
	unsigned int	cpu;
	void		(*function)(void *data);
	char		clock[16];
};

/**
 * struct ktimer_watchdog_state - what the watchdog keeps from scan to scan
 * @overdue:	the last scan found a timer overdue beyond the limit
 * @reported:	the stall in progress was printed
 */
struct ktimer_watchdog_state {
	bool	overdue;
	bool	reported;
};

s64 ktimer_overdue(const struct ktimer_clock *only,
		   struct ktimer_overdue *worst);
bool ktimer_watchdog_report(struct ktimer_watchdog_state *state, s64 late,
			    s64 limit);

/* For the KUnit tests of ktimer_pclock.c: a resync, as once a second */
void ktimer_pclock_test_resync(struct ktimer_pclock *kp);

/* The sleep of ktimer_nanosleep(), for the sleeps on dynamic POSIX clocks */
ktime_t ktimer_sleep(struct ktimer_clock *clock, ktime_t t, int mode,
		     ktime_t *expires);

/* What CONFIG_DEBUG_OBJECTS_KTIMERS repaired (ktimer_debugobjects.c) */
enum ktimer_fixup_kind {
	KTIMER_FIXUP_INIT,		/* a pending timer was initialised */
	KTIMER_FIXUP_FREE,		/* a pending timer was freed */
	KTIMER_FIXUP_ASSERT_INIT,	/* an uninitialised timer was used */
	KTIMER_FIXUP_KINDS
};

#ifdef CONFIG_DEBUG_OBJECTS_KTIMERS
void ktimer_debug_init(struct ktimer *timer, bool onstack);
void ktimer_debug_activate(struct ktimer *timer);
void ktimer_debug_deactivate(struct ktimer *timer);
void ktimer_debug_assert_init(struct ktimer *timer);
void ktimer_debug_free(struct ktimer *timer);
unsigned int ktimer_debug_fixups(enum ktimer_fixup_kind kind);
#else
static inline void ktimer_debug_init(struct ktimer *timer, bool onstack) { }
static inline void ktimer_debug_activate(struct ktimer *timer) { }
static inline void ktimer_debug_deactivate(struct ktimer *timer) { }
static inline void ktimer_debug_assert_init(struct ktimer *timer) { }
static inline void ktimer_debug_free(struct ktimer *timer) { }
static inline unsigned int ktimer_debug_fixups(enum ktimer_fixup_kind kind)
{
	return 0;
}
#endif
bool ktimer_test_event(struct ktimer_clock *clock, clockid_t *clockid,
		       ktime_t *soft, ktime_t *hard);
ktime_t ktimer_test_map(struct ktimer_clock_map *map, ktime_t in, bool to_event);
unsigned int ktimer_test_queue_height(struct ktimer_clock *clock);

#endif /* _KERNEL_TIME_KTIMER_INTERNAL_H */
