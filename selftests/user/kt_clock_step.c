// SPDX-License-Identifier: GPL-2.0
/*
 * kt_clock_step - clock_settime(CLOCK_REALTIME) while sleeps and timers are
 * pending, as POSIX and stock Linux 6.12 have it: absolute CLOCK_REALTIME
 * sleeps and timers follow the clock (stepped past their time they end at
 * once, a periodic one with its overruns; stepped back they stay pending,
 * and timer_gettime() shows the longer wait); relative ones (nanosleep(),
 * relative clock_nanosleep() and timers on CLOCK_REALTIME, ITIMER_REAL) and
 * CLOCK_MONOTONIC ones do not: never early when the clock jumps forward,
 * never delayed when it jumps back. timerfds on CLOCK_REALTIME do the same,
 * and one armed with TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET wakes its
 * reader with ECANCELED at each step (timerfd_clock_was_set()).
 *
 * A step forward that also passes such a timerfd's expiry may show the
 * count first and ECANCELED on the next read, on the stock path as on the
 * ktimer path: clock_was_set() (kernel/time/hrtimer.c) re-arms the expired
 * hrtimers on every CPU before it calls timerfd_clock_was_set(), so the
 * expiry can wake the reader before the cancel does. That case accepts
 * both orders (seen on the hrtimer path, i386, 2026-12-06); the plain
 * CANCEL_ON_SET cases keep their expiry out of the step's reach, where
 * ECANCELED must come first.
 *
 * DESTRUCTIVE: it steps the wall clock by 10 s forward and back, and puts it
 * back where it was. It refuses to run (SKIP, exit 4) unless it runs in the
 * ktimers guest: started by the initramfs's /init (PID 1 is /init and is
 * its parent), which sets KTIMERS_GUEST=1 (tools/guest/init.c). Never run
 * it on a real machine.
 *
 * Case 1 steps the clock in two phases; the other cases each arm one sleep
 * or timer in the phase they belong to, all in processes of their own at
 * the same time, coordinated through shared memory:
 *
 *   phase 1: arm; the clock steps 10 s forward; the absolute ones (due 8 s
 *            after arming) end at once, the others run their 1.5 s; the
 *            clock is put back.
 *   phase 2: arm; the clock steps 10 s back; 3.5 s later it is put back;
 *            the absolute ones (due 1.5 s after arming) end only then, the
 *            relative ones (1.5 s) long before.
 */
#include "ktap.h"

#include <poll.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/timerfd.h>

#define STEP		(10 * KT_SEC)
#define FAR		(8 * KT_SEC)	/* phase 1 absolute: stepped past */
#define NEAR		(1500 * KT_MSEC)	/* relative ones, and phase 2 absolute */
#define BACK_FOR	(3500 * KT_MSEC)	/* how long the clock stays stepped back */
#define MARGIN		(3 * KT_SEC)
#define SIG		SIGUSR1
#define MAX_WATCHERS	24

enum kind {
	SLEEP_ABS_RT,		/* clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME) */
	SLEEP_REL_RT,		/* clock_nanosleep(CLOCK_REALTIME, 0) */
	NANOSLEEP,
	SLEEP_ABS_MONO,
	TFD_ABS_RT,		/* a TFD_TIMER_ABSTIME CLOCK_REALTIME timerfd, blocked in read() */
	TFD_ABS_RT_CANCEL,	/* the same with TFD_TIMER_CANCEL_ON_SET, due after the step's reach */
	TFD_ABS_RT_CANCEL_PASSED, /* the same, due within the step forward */
	TFD_REL_RT,		/* a relative CLOCK_REALTIME timerfd */
	TIMER_ABS_RT,
	TIMER_ABS_RT_PERIODIC,
	TIMER_REL_RT,
	ITIMER,
};

struct watch {
	int index;
	int phase;
	enum kind kind;
};

/* Shared by every case's process (mapped before kt_run() forks them). */
static struct plan {
	long long offset;		/* CLOCK_REALTIME - CLOCK_MONOTONIC at the start */
	volatile int phase;
	volatile int armed[3], done[3], stepped[3];
	long long t_step[3];		/* MONOTONIC right before each step */
	long long rt_after_step[3];	/* REALTIME right after it */
	long long t_restore[3];		/* MONOTONIC right before the clock was put back */
	struct {
		volatile int phase;	/* 0: not a watcher */
		volatile int sleeper, ready, done;
		volatile pid_t pid;
	} w[MAX_WATCHERS];
} *plan;

static int settime_rt(long long ns)
{
	struct timespec ts = kt_timespec(ns);

	return clock_settime(CLOCK_REALTIME, &ts) ? errno : 0;
}

/* Put CLOCK_REALTIME back to where it would be without the steps. */
static int restore(void)
{
	return settime_rt(kt_now(CLOCK_MONOTONIC) + plan->offset);
}

static int all(volatile int *count, int phase, long long ms)
{
	long long deadline = kt_now(CLOCK_MONOTONIC) + ms * KT_MSEC;
	int i, n = 0;

	for (i = 0; i < MAX_WATCHERS; i++)
		n += plan->w[i].phase == phase;
	while (*count < n && kt_now(CLOCK_MONOTONIC) < deadline)
		kt_sleep_ms(2);
	return *count >= n;
}

/* All of the phase armed, and its sleepers asleep in their syscall. */
static int armed(int phase)
{
	int i;

	if (!all(&plan->armed[phase], phase, 10000))
		return 0;
	for (i = 0; i < MAX_WATCHERS; i++)
		if (plan->w[i].phase == phase && plan->w[i].sleeper &&
		    !kt_wait_asleep(plan->w[i].pid, plan->w[i].pid, &plan->w[i].ready, &plan->w[i].done))
			return 0;
	return 1;
}

static int step(int phase, long long delta)
{
	int err;

	plan->t_step[phase] = kt_now(CLOCK_MONOTONIC);
	err = settime_rt(kt_now(CLOCK_REALTIME) + delta);
	plan->rt_after_step[phase] = kt_now(CLOCK_REALTIME);
	plan->stepped[phase] = 1;
	return kt_expect(!err, "clock_settime(CLOCK_REALTIME) stepping %+.0f s: %s, expected success",
			 delta / 1e9, strerror(err));
}

static void stepper(const struct kt_case *c)
{
	long long drift;

	(void)c;
	plan->phase = 1;
	if (!kt_expect(armed(1), "phase 1: not every sleep and timer was armed within 10 s"))
		return;
	if (!step(1, STEP))
		return;
	kt_expect(all(&plan->done[1], 1, 10000), "phase 1: not every sleep and timer ended within 10 s of the step");
	plan->t_restore[1] = kt_now(CLOCK_MONOTONIC);
	kt_expect(!restore(), "putting the clock back after phase 1 failed");
	plan->phase = 2;
	if (!kt_expect(armed(2), "phase 2: not every sleep and timer was armed within 10 s"))
		return;
	if (!step(2, -STEP))
		return;
	kt_sleep_ms(BACK_FOR / KT_MSEC);
	plan->t_restore[2] = kt_now(CLOCK_MONOTONIC);
	kt_expect(!restore(), "putting the clock back after phase 2 failed");
	kt_expect(all(&plan->done[2], 2, 10000), "phase 2: not every sleep and timer ended within 10 s of the clock's return");
	drift = kt_now(CLOCK_REALTIME) - kt_now(CLOCK_MONOTONIC) - plan->offset;
	kt_expect(drift > -100 * KT_MSEC && drift < 100 * KT_MSEC,
		  "CLOCK_REALTIME is %.3f ms off where it was before the steps, expected within 100 ms", kt_ms(drift));
}

static const char *kind_name(enum kind kind)
{
	switch (kind) {
	case SLEEP_ABS_RT: return "clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME)";
	case SLEEP_REL_RT: return "clock_nanosleep(CLOCK_REALTIME) relative";
	case NANOSLEEP: return "nanosleep()";
	case SLEEP_ABS_MONO: return "clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)";
	case TFD_ABS_RT: return "read() of a CLOCK_REALTIME TFD_TIMER_ABSTIME timerfd";
	case TFD_ABS_RT_CANCEL: return "read() of a CLOCK_REALTIME TFD_TIMER_ABSTIME|TFD_TIMER_CANCEL_ON_SET timerfd";
	case TFD_ABS_RT_CANCEL_PASSED:
		return "read() of a CLOCK_REALTIME TFD_TIMER_ABSTIME|TFD_TIMER_CANCEL_ON_SET timerfd the step passes";
	case TFD_REL_RT: return "read() of a relative CLOCK_REALTIME timerfd";
	case TIMER_ABS_RT: return "a CLOCK_REALTIME TIMER_ABSTIME timer";
	case TIMER_ABS_RT_PERIODIC: return "a periodic CLOCK_REALTIME TIMER_ABSTIME timer";
	case TIMER_REL_RT: return "a relative CLOCK_REALTIME timer";
	case ITIMER: return "ITIMER_REAL";
	}
	return "?";
}

static void watcher(const struct kt_case *c)
{
	const struct watch *w = c->data;
	int absolute = w->kind == SLEEP_ABS_RT || w->kind == TIMER_ABS_RT || w->kind == TIMER_ABS_RT_PERIODIC ||
		       w->kind == TFD_ABS_RT || w->kind == TFD_ABS_RT_CANCEL ||
		       w->kind == TFD_ABS_RT_CANCEL_PASSED;
	int cancel = w->kind == TFD_ABS_RT_CANCEL || w->kind == TFD_ABS_RT_CANCEL_PASSED;
	int tfd = -1;
	uint64_t ticks = 0, first_count = 0;
	long long arm_mono, arm_rt, target, wake_mono, wake_rt, interval = 500 * KT_MSEC;
	const char *what = kind_name(w->kind);
	struct itimerspec its;
	struct sigevent sev;
	struct timespec ts;
	timer_t timer = 0;
	siginfo_t si;
	int err = 0, overrun = 0, got;
	long long restored;

	kt_block(SIG);
	kt_block(SIGALRM);
	while (plan->phase < w->phase)
		kt_sleep_ms(5);
	arm_mono = kt_now(CLOCK_MONOTONIC);
	arm_rt = kt_now(CLOCK_REALTIME);
	target = absolute ? arm_rt + (w->phase == 1 ? FAR : NEAR) :
		 w->kind == SLEEP_ABS_MONO ? arm_mono + NEAR : NEAR;
	if (w->kind == TFD_ABS_RT_CANCEL && w->phase == 1)
		target += STEP;		/* the step forward does not reach it */
	ts = kt_timespec(target);
	if (w->kind >= TIMER_ABS_RT && w->kind <= TIMER_REL_RT) {
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_SIGNAL;
		sev.sigev_signo = SIG;
		memset(&its, 0, sizeof(its));
		its.it_value = ts;
		if (w->kind == TIMER_ABS_RT_PERIODIC)
			its.it_interval = kt_timespec(interval);
		if (timer_create(CLOCK_REALTIME, &sev, &timer) ||
		    timer_settime(timer, absolute ? TIMER_ABSTIME : 0, &its, NULL)) {
			kt_fail("%s: arming failed: %s", what, strerror(errno));
			__sync_fetch_and_add(&plan->armed[w->phase], 1);
			__sync_fetch_and_add(&plan->done[w->phase], 1);
			return;
		}
	} else if (w->kind >= TFD_ABS_RT && w->kind <= TFD_REL_RT) {
		int flags = w->kind == TFD_ABS_RT ? TFD_TIMER_ABSTIME :
			    cancel ? TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET : 0;

		memset(&its, 0, sizeof(its));
		its.it_value = ts;
		tfd = timerfd_create(CLOCK_REALTIME, 0);
		if (tfd < 0 || timerfd_settime(tfd, flags, &its, NULL)) {
			kt_fail("%s: arming failed: %s", what, strerror(errno));
			__sync_fetch_and_add(&plan->armed[w->phase], 1);
			__sync_fetch_and_add(&plan->done[w->phase], 1);
			return;
		}
	} else if (w->kind == ITIMER) {
		struct itimerval it = { .it_value = { NEAR / KT_SEC, NEAR % KT_SEC / KT_USEC } };

		setitimer(ITIMER_REAL, &it, NULL);
	}
	plan->w[w->index].pid = getpid();
	plan->w[w->index].ready = 1;
	__sync_fetch_and_add(&plan->armed[w->phase], 1);
	switch (w->kind) {
	case SLEEP_ABS_RT:
		err = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL);
		break;
	case SLEEP_REL_RT:
		err = clock_nanosleep(CLOCK_REALTIME, 0, &ts, NULL);
		break;
	case NANOSLEEP:
		err = nanosleep(&ts, NULL) ? errno : 0;
		break;
	case SLEEP_ABS_MONO:
		err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		break;
	case TFD_ABS_RT:
	case TFD_ABS_RT_CANCEL:
	case TFD_REL_RT:
		err = read(tfd, &ticks, sizeof(ticks)) == sizeof(ticks) ? 0 : errno;
		break;
	case TFD_ABS_RT_CANCEL_PASSED:
		/* the expiry may wake the reader before the cancel does: then the next read */
		err = read(tfd, &ticks, sizeof(ticks)) == sizeof(ticks) ? 0 : errno;
		if (!err) {
			struct pollfd pfd = { .fd = tfd, .events = POLLIN };

			first_count = ticks;
			if (poll(&pfd, 1, MARGIN / KT_MSEC) != 1)
				err = ETIMEDOUT;	/* no cancel came */
			else
				err = read(tfd, &ticks, sizeof(ticks)) == sizeof(ticks) ? 0 : errno;
		}
		break;
	case TIMER_ABS_RT:
	case TIMER_ABS_RT_PERIODIC:
	case TIMER_REL_RT:
	case ITIMER:
		if (w->phase == 2 && w->kind != ITIMER) {
			while (!plan->stepped[2] && kt_now(CLOCK_MONOTONIC) < arm_mono + 5 * KT_SEC)
				kt_sleep_ms(2);
			timer_gettime(timer, &its);
			if (absolute)
				kt_expect(kt_ns(&its.it_value) > STEP / 2,
					  "%s due in 1.5 s, clock stepped back 10 s: timer_gettime reads %.3f ms, expected about 11 s",
					  what, kt_ms(kt_ns(&its.it_value)));
			else
				kt_expect(kt_ns(&its.it_value) > 0 && kt_ns(&its.it_value) <= NEAR + KT_CLOCK_SLACK,
					  "%s of 1.5 s, clock stepped back 10 s: timer_gettime reads %.3f ms, expected at most 1500 ms",
					  what, kt_ms(kt_ns(&its.it_value)));
		}
		got = kt_wait_signal(w->kind == ITIMER ? SIGALRM : SIG, 15000, &si);
		err = got ? 0 : ETIMEDOUT;
		overrun = got && w->kind != ITIMER ? timer_getoverrun(timer) : 0;
		break;
	}
	wake_mono = kt_now(CLOCK_MONOTONIC);
	wake_rt = kt_now(CLOCK_REALTIME);
	restored = plan->t_restore[w->phase];	/* 0: the clock has not come back yet */
	plan->w[w->index].done = 1;
	__sync_fetch_and_add(&plan->done[w->phase], 1);
	if (timer)
		timer_delete(timer);
	if (tfd >= 0)
		close(tfd);
	if (cancel) {
		/* stepped either way, the reader learns at once that the clock was set */
		kt_expect(err == ECANCELED, "%s ended with %s, expected ECANCELED", what,
			  err ? strerrorname_np(err) ?: "?" : "the count");
		if (w->kind == TFD_ABS_RT_CANCEL_PASSED) {
			kt_expect(first_count <= 1, "%s: count %llu before ECANCELED, expected 0 or 1", what,
				  (unsigned long long)first_count);
			kt_note("%s: %s", what, first_count ? "the count, then ECANCELED" : "ECANCELED first");
		}
		kt_expect(wake_mono >= plan->t_step[w->phase] && wake_mono < plan->t_step[w->phase] + MARGIN,
			  "%s: ended %.3f ms after the step, expected at once", what,
			  kt_ms(wake_mono - plan->t_step[w->phase]));
		return;
	}
	if (!kt_expect(!err, "%s ended with %s, expected success", what, strerrorname_np(err) ?: "?"))
		return;
	if (tfd >= 0)
		kt_expect(ticks == 1, "%s: count %llu, expected 1", what, (unsigned long long)ticks);
	if (absolute && w->phase == 1) {
		kt_expect(wake_rt >= target, "%s ended %.3f ms before its time, expected never early", what,
			  kt_ms(target - wake_rt));
		kt_expect(wake_mono >= plan->t_step[1] && wake_mono < plan->t_step[1] + MARGIN,
			  "%s due in 8 s, clock stepped 10 s past it: ended %.3f ms after the step, expected at once",
			  what, kt_ms(wake_mono - plan->t_step[1]));
	} else if (absolute) {
		kt_expect(wake_rt >= target, "%s ended %.3f ms before its time, expected never early", what,
			  kt_ms(target - wake_rt));
		kt_expect(wake_mono >= plan->t_restore[2] && wake_mono < plan->t_restore[2] + MARGIN,
			  "%s due in 1.5 s, clock stepped back 10 s, then forward after %.0f ms: ended %.3f ms after the step back, expected right after the clock came back",
			  what, kt_ms(plan->t_restore[2] - plan->t_step[2]), kt_ms(wake_mono - plan->t_step[2]));
	} else {
		kt_expect(wake_mono - arm_mono >= NEAR,
			  "%s of 1.5 s, clock stepped %s 10 s: ended after %.3f ms, expected never early", what,
			  w->phase == 1 ? "forward" : "back", kt_ms(wake_mono - arm_mono));
		if (w->phase == 2)
			kt_expect(!restored || wake_mono < restored,
				  "%s of 1.5 s, clock stepped back 10 s: ended %.3f ms after arming, after the clock came back at %.3f ms, expected before",
				  what, kt_ms(wake_mono - arm_mono), kt_ms(restored - arm_mono));
	}
	if (w->kind == TIMER_ABS_RT_PERIODIC) {
		/* the periods from its time to the dequeue, but the first, which sent the signal */
		long long low = (plan->rt_after_step[1] - target) / interval - 1;
		long long high = (wake_rt - target) / interval + 1;

		kt_expect(overrun >= low && overrun <= high,
			  "%s of 500 ms stepped %.3f ms past its time: overrun %d, expected %lld to %lld", what,
			  kt_ms(plan->rt_after_step[1] - target), overrun, low, high);
	} else if (w->kind >= TIMER_ABS_RT && w->kind <= TIMER_REL_RT) {
		kt_expect(overrun == 0, "%s: overrun %d, expected 0", what, overrun);
	}
}

#define W(name, ph, k) { name, watcher, &(const struct watch){ .index = __COUNTER__, .phase = ph, .kind = k } }

static const struct kt_case cases[] = {
	{ "clock_settime steps CLOCK_REALTIME 10 s forward and back, and puts it back", stepper, NULL },
	W("forward past an absolute REALTIME clock_nanosleep: it ends at once", 1, SLEEP_ABS_RT),
	W("forward past an absolute REALTIME timer: it fires at once", 1, TIMER_ABS_RT),
	W("forward past a periodic absolute REALTIME timer: it fires, with the overruns", 1, TIMER_ABS_RT_PERIODIC),
	W("forward: a relative REALTIME clock_nanosleep is not early", 1, SLEEP_REL_RT),
	W("forward: nanosleep is not early", 1, NANOSLEEP),
	W("forward: a relative REALTIME timer is not early", 1, TIMER_REL_RT),
	W("forward: an absolute MONOTONIC clock_nanosleep is not early", 1, SLEEP_ABS_MONO),
	W("forward: ITIMER_REAL is not early", 1, ITIMER),
	W("forward past an absolute REALTIME timerfd: read returns at once", 1, TFD_ABS_RT),
	W("forward: a TFD_TIMER_CANCEL_ON_SET timerfd reads ECANCELED at once", 1, TFD_ABS_RT_CANCEL),
	W("forward past a TFD_TIMER_CANCEL_ON_SET timerfd: ECANCELED at once, the count may come first", 1,
	  TFD_ABS_RT_CANCEL_PASSED),
	W("forward: a relative REALTIME timerfd is not early", 1, TFD_REL_RT),
	W("back: an absolute REALTIME clock_nanosleep waits for the clock", 2, SLEEP_ABS_RT),
	W("back: an absolute REALTIME timer waits for the clock, gettime shows it", 2, TIMER_ABS_RT),
	W("back: a relative REALTIME clock_nanosleep is not delayed", 2, SLEEP_REL_RT),
	W("back: nanosleep is not delayed", 2, NANOSLEEP),
	W("back: a relative REALTIME timer is not delayed, gettime unchanged", 2, TIMER_REL_RT),
	W("back: ITIMER_REAL is not delayed", 2, ITIMER),
	W("back: an absolute REALTIME timerfd waits for the clock", 2, TFD_ABS_RT),
	W("back: a TFD_TIMER_CANCEL_ON_SET timerfd reads ECANCELED at once", 2, TFD_ABS_RT_CANCEL),
	W("back: a relative REALTIME timerfd is not delayed", 2, TFD_REL_RT),
};

int main(void)
{
	unsigned int i;
	int status;

	if (!kt_in_guest()) {
		printf("TAP version 13\n1..0 # SKIP steps the wall clock: runs only in the ktimers guest "
		       "(KTIMERS_GUEST=1, started by its /init)\n");
		return 4;
	}
	plan = kt_shared(sizeof(*plan));
	plan->offset = kt_now(CLOCK_REALTIME) - kt_now(CLOCK_MONOTONIC);
	for (i = 0; i < KT_ARRAY_SIZE(cases); i++) {
		const struct watch *w = cases[i].data;

		if (w && w->index < MAX_WATCHERS) {
			plan->w[w->index].phase = w->phase;
			plan->w[w->index].sleeper = w->kind <= TFD_REL_RT;
		}
	}
	status = kt_run(cases, KT_ARRAY_SIZE(cases), 1, 40);
	restore();	/* whatever happened to the stepper */
	return status;
}
