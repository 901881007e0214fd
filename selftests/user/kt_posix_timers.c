// SPDX-License-Identifier: GPL-2.0
/*
 * kt_posix_timers - POSIX timers on CLOCK_REALTIME and CLOCK_MONOTONIC as
 * POSIX and stock Linux 6.12 have them:
 *
 * - timer_create() with SIGEV_SIGNAL (the signal comes once, never early,
 *   with si_code SI_TIMER and the sigev_value), SIGEV_THREAD_ID (only the
 *   named thread gets it) and SIGEV_NONE (no signal; timer_gettime()
 *   counts down to 0, or stays within the interval for a periodic timer);
 * - timer_settime() relative and TIMER_ABSTIME (an absolute time in the
 *   past fires at once), periodic (each expiry never early, counting the
 *   overruns), disarming and re-arming while pending (the old value is
 *   returned and the new time counts);
 * - timer_gettime() on a pending, expired, periodic and disarmed timer;
 * - timer_getoverrun() after the signal was blocked for many periods;
 * - timer_delete() while the signal is pending (6.12 still delivers that
 *   signal, 6.13 and later drop it), and no signal after timer_delete()
 *   returns; a deleted timer gives EINVAL;
 * - many timers at once each fire once; execve() deletes the timers, exit
 *   with armed timers is clean, the child of fork() has none; invalid
 *   arguments give EINVAL.
 *
 * Each case runs in a process of its own, all at the same time.
 */
#include "ktap.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define SIG		SIGUSR1
#define AFTER_EXEC	"timers-after-exec"

struct tcase {
	clockid_t clock;
	int abs;
	int periodic;
};

static int make_timer(clockid_t clock, int notify, int signo, int value, pid_t tid, timer_t *timer)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = notify;
	sev.sigev_signo = signo;
	sev.sigev_value.sival_int = value;
	if (notify == SIGEV_THREAD_ID)
		sev.sigev_notify_thread_id = tid;
	return timer_create(clock, &sev, timer) ? errno : 0;
}

/* timer_create() that must work: 0, or fails the case. */
static int new_timer(clockid_t clock, int notify, int value, timer_t *timer)
{
	int err = make_timer(clock, notify, SIG, value, 0, timer);

	return kt_expect(!err, "timer_create(%s): %s, expected success", kt_clock_name(clock),
			 strerror(err)) ? 0 : -1;
}

static int settime(timer_t timer, int flags, long long value, long long interval, struct itimerspec *old)
{
	struct itimerspec its = { .it_interval = kt_timespec(interval), .it_value = kt_timespec(value) };

	return timer_settime(timer, flags, &its, old) ? errno : 0;
}

static struct itimerspec gettime(timer_t timer)
{
	struct itimerspec its;

	memset(&its, 0xff, sizeof(its));
	if (timer_gettime(timer, &its))
		kt_fail("timer_gettime: %s, expected success", strerror(errno));
	return its;
}

static const char *err_name(int err)
{
	const char *name = err ? strerrorname_np(err) : "0";

	return name ? name : "an unknown error";
}

static void expect_disarmed(timer_t timer, const char *when, long long ms)
{
	struct itimerspec its = gettime(timer);

	kt_expect_disarmed("timer_gettime", when, kt_ns(&its.it_value),
			   kt_ns(&its.it_interval), SIG, ms);
}

static void one_shot(const struct kt_case *c)
{
	const struct tcase *tc = c->data;
	const char *clock = kt_clock_name(tc->clock);
	long long t0, t1, value = 200 * KT_MSEC;
	timer_t timer;
	siginfo_t si;

	kt_block(SIG);
	if (new_timer(tc->clock, SIGEV_SIGNAL, 42, &timer))
		return;
	t0 = kt_now(tc->clock);
	if (!kt_expect(!settime(timer, tc->abs ? TIMER_ABSTIME : 0, tc->abs ? t0 + value : value, 0, NULL),
		       "timer_settime failed, expected success"))
		return;
	if (!kt_expect(kt_wait_signal(SIG, 5000, &si), "%s timer of 200 ms: no signal within 5 s, expected one",
		       clock))
		return;
	t1 = kt_now(tc->clock);
	kt_expect(t1 - t0 >= value, "%s timer of 200 ms%s: the signal came after %.3f ms, expected never early",
		  clock, tc->abs ? " (TIMER_ABSTIME)" : "", kt_ms(t1 - t0));
	kt_expect(si.si_code == SI_TIMER && si.si_value.sival_int == 42 && si.si_overrun == 0,
		  "the signal has si_code %d, sival %d, si_overrun %d, expected SI_TIMER (%d), 42 and 0",
		  si.si_code, si.si_value.sival_int, si.si_overrun, SI_TIMER);
	kt_expect(timer_getoverrun(timer) == 0, "timer_getoverrun %d after one expiry, expected 0",
		  timer_getoverrun(timer));
	expect_disarmed(timer, "after the expiry of a one-shot timer", 300);
	timer_delete(timer);
}

static void past_absolute(const struct kt_case *c)
{
	const struct tcase *tc = c->data;
	long long t0, t1;
	timer_t timer;

	kt_block(SIG);
	if (new_timer(tc->clock, SIGEV_SIGNAL, 1, &timer))
		return;
	t0 = kt_now(CLOCK_MONOTONIC);
	settime(timer, TIMER_ABSTIME, kt_now(tc->clock) - KT_SEC, 0, NULL);
	kt_expect(kt_wait_signal(SIG, 5000, NULL), "%s timer armed a second in the past: no signal in 5 s",
		  kt_clock_name(tc->clock));
	t1 = kt_now(CLOCK_MONOTONIC);
	kt_expect(t1 - t0 < 2 * KT_SEC, "%s timer armed a second in the past fired after %.3f ms, expected at once",
		  kt_clock_name(tc->clock), kt_ms(t1 - t0));
	kt_expect(timer_getoverrun(timer) == 0, "timer_getoverrun %d, expected 0", timer_getoverrun(timer));
	expect_disarmed(timer, "after the expiry", 0);
	timer_delete(timer);
}

static void periodic(const struct kt_case *c)
{
	const struct tcase *tc = c->data;
	long long t0, t, value = 100 * KT_MSEC, interval = 50 * KT_MSEC, expiries = 0;
	struct itimerspec its;
	timer_t timer;
	siginfo_t si;
	int k;

	kt_block(SIG);
	if (new_timer(tc->clock, SIGEV_SIGNAL, 7, &timer))
		return;
	t0 = kt_now(tc->clock);
	settime(timer, 0, value, interval, NULL);
	for (k = 1; k <= 5; k++) {
		if (!kt_expect(kt_wait_signal(SIG, 5000, &si), "signal %d of a periodic 100 ms + 50 ms %s timer did not come in 5 s",
			       k, kt_clock_name(tc->clock)))
			return;
		t = kt_now(tc->clock) - t0;
		expiries += 1 + si.si_overrun;
		kt_expect(si.si_overrun >= 0 && t >= value + (expiries - 1) * interval,
			  "signal %d (overrun %d) of a periodic 100 ms + 50 ms %s timer after %.3f ms, expected never before %.3f ms",
			  k, si.si_overrun, kt_clock_name(tc->clock), kt_ms(t),
			  kt_ms(value + (expiries - 1) * interval));
	}
	its = gettime(timer);
	kt_expect(kt_ns(&its.it_interval) == interval, "timer_gettime interval %.3f ms, expected 50 ms as set",
		  kt_ms(kt_ns(&its.it_interval)));
	kt_expect(kt_ns(&its.it_value) > 0 && kt_ns(&its.it_value) <= interval + KT_CLOCK_SLACK,
		  "timer_gettime of a periodic timer reads %.3f ms, expected 0 < value <= the 50 ms interval",
		  kt_ms(kt_ns(&its.it_value)));
	settime(timer, 0, 0, 0, NULL);
	kt_wait_signal(SIG, 0, NULL);
	expect_disarmed(timer, "after disarming a periodic timer", 200);
	timer_delete(timer);
}

/* ---- SIGEV_THREAD_ID ---- */

struct target {
	volatile pid_t tid;
	int got;
	siginfo_t si;
	int expected;
};

static volatile int wrong_thread;

static void on_wrong_thread(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	wrong_thread++;
}

static void *target_thread(void *arg)
{
	struct target *t = arg;
	int k;

	kt_block(SIG);
	t->tid = gettid();
	for (k = 0; k < t->expected; k++)
		t->got += kt_wait_signal(SIG, 5000, &t->si);
	return NULL;
}

static void thread_id(const struct kt_case *c)
{
	const struct tcase *tc = c->data;
	struct target t = { .expected = tc->periodic ? 3 : 1 };
	pthread_t thread;
	timer_t timer;
	int err;

	kt_handle(SIG, on_wrong_thread, SA_RESTART);	/* the main thread takes a misdirected signal */
	if (pthread_create(&thread, NULL, target_thread, &t)) {
		kt_fail("pthread_create failed");
		return;
	}
	while (!t.tid)
		kt_sleep_ms(1);
	err = make_timer(tc->clock, SIGEV_THREAD_ID, SIG, 9, t.tid, &timer);
	if (!kt_expect(!err, "timer_create(SIGEV_THREAD_ID): %s, expected success", strerror(err))) {
		pthread_kill(thread, SIG);
		pthread_join(thread, NULL);
		return;
	}
	settime(timer, 0, 100 * KT_MSEC, tc->periodic ? 50 * KT_MSEC : 0, NULL);
	pthread_join(thread, NULL);
	timer_delete(timer);
	kt_expect(t.got == t.expected && !wrong_thread,
		  "the named thread got %d of %d signals and another thread %d, expected all in the named thread",
		  t.got, t.expected, wrong_thread);
	if (t.got)
		kt_expect(t.si.si_code == SI_TIMER && t.si.si_value.sival_int == 9,
			  "the signal has si_code %d, sival %d, expected SI_TIMER (%d) and 9", t.si.si_code,
			  t.si.si_value.sival_int, SI_TIMER);
}

/* ---- SIGEV_NONE ---- */

static void sigev_none(const struct kt_case *c)
{
	const struct tcase *tc = c->data;
	long long value = 200 * KT_MSEC, interval = tc->periodic ? 50 * KT_MSEC : 0;
	struct itimerspec its;
	long long armed, took;
	timer_t timer;

	kt_block(SIG);
	if (new_timer(tc->clock, SIGEV_NONE, 0, &timer))
		return;
	armed = kt_now(CLOCK_MONOTONIC);
	settime(timer, 0, value, interval, NULL);
	its = gettime(timer);
	took = kt_now(CLOCK_MONOTONIC) - armed;
	/* a one-shot may read 0 only once its time passed (a vCPU the host stalled) */
	kt_expect(kt_ns(&its.it_value) <= value + KT_CLOCK_SLACK && (kt_ns(&its.it_value) > 0 || took >= value),
		  "timer_gettime %.3f ms after arming for 200 ms reads %.3f ms, expected 0 < value <= 200 ms",
		  kt_ms(took), kt_ms(kt_ns(&its.it_value)));
	kt_sleep_ms(330);
	its = gettime(timer);
	if (tc->periodic)
		kt_expect(kt_ns(&its.it_value) > 0 && kt_ns(&its.it_value) <= interval + KT_CLOCK_SLACK &&
			  kt_ns(&its.it_interval) == interval,
			  "periodic SIGEV_NONE timer past its expiry reads value %.3f ms interval %.3f ms, expected 0 < value <= 50 ms and 50 ms",
			  kt_ms(kt_ns(&its.it_value)), kt_ms(kt_ns(&its.it_interval)));
	else
		expect_disarmed(timer, "SIGEV_NONE one-shot timer past its expiry", 0);
	kt_expect(!kt_wait_signal(SIG, 0, NULL), "a SIGEV_NONE timer sent a signal, expected none");
	timer_delete(timer);
}

/* ---- settime and gettime ---- */

static void disarm(const struct kt_case *c)
{
	struct itimerspec old;
	timer_t timer;

	(void)c;
	long long armed, took;

	kt_block(SIG);
	if (new_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL, 0, &timer))
		return;
	armed = kt_now(CLOCK_MONOTONIC);
	settime(timer, 0, 300 * KT_MSEC, 0, NULL);
	settime(timer, 0, 0, 0, &old);
	took = kt_now(CLOCK_MONOTONIC) - armed;
	if (took >= 300 * KT_MSEC) {
		/* the timer was due before it was disarmed: nothing to check */
		kt_skip("disarmed %.3f ms after arming a 300 ms timer (a stalled vCPU)", kt_ms(took));
		timer_delete(timer);
		return;
	}
	kt_expect(kt_ns(&old.it_value) > 0 && kt_ns(&old.it_value) <= 300 * KT_MSEC + KT_CLOCK_SLACK,
		  "disarming returned the old value %.3f ms, expected 0 < old <= 300 ms", kt_ms(kt_ns(&old.it_value)));
	expect_disarmed(timer, "after disarming a 300 ms timer", 600);
	timer_delete(timer);
}

static void rearm_pending(const struct kt_case *c)
{
	const struct tcase *tc = c->data;
	struct itimerspec old;
	long long t0, t;
	timer_t timer;

	kt_block(SIG);
	if (new_timer(tc->clock, SIGEV_SIGNAL, 0, &timer))
		return;
	settime(timer, 0, 4 * KT_SEC, 0, NULL);
	t0 = kt_now(tc->clock);
	settime(timer, 0, 200 * KT_MSEC, 0, &old);
	kt_expect(kt_ns(&old.it_value) > 0 && kt_ns(&old.it_value) <= 4 * KT_SEC + KT_CLOCK_SLACK,
		  "re-arming returned the old value %.3f ms, expected 0 < old <= 4000 ms", kt_ms(kt_ns(&old.it_value)));
	if (!kt_expect(kt_wait_signal(SIG, 3000, NULL), "no signal within 3 s of re-arming a 4 s %s timer for 200 ms",
		       kt_clock_name(tc->clock)))
		return;
	t = kt_now(tc->clock) - t0;
	kt_expect(t >= 200 * KT_MSEC, "the signal came %.3f ms after re-arming for 200 ms, expected never early",
		  kt_ms(t));
	expect_disarmed(timer, "after the re-armed timer expired (the 4 s one is gone)", 300);
	timer_delete(timer);
}

static void gettime_states(const struct kt_case *c)
{
	struct itimerspec its, old;
	timer_t timer;

	(void)c;
	kt_block(SIG);
	if (new_timer(CLOCK_REALTIME, SIGEV_SIGNAL, 0, &timer))
		return;
	expect_disarmed(timer, "a new timer", 0);
	settime(timer, 0, KT_SEC, 0, NULL);
	its = gettime(timer);
	kt_expect(kt_ns(&its.it_value) > 0 && kt_ns(&its.it_value) <= KT_SEC + KT_CLOCK_SLACK && kt_ns(&its.it_interval) == 0,
		  "a pending 1 s timer reads value %.3f ms interval %.3f ms, expected 0 < value <= 1000 ms and 0",
		  kt_ms(kt_ns(&its.it_value)), kt_ms(kt_ns(&its.it_interval)));
	settime(timer, 0, KT_SEC, 250 * KT_MSEC, &old);
	kt_expect(kt_ns(&old.it_value) > 0 && kt_ns(&old.it_value) <= kt_ns(&its.it_value) + KT_CLOCK_SLACK,
		  "re-arming returned the old value %.3f ms, expected 0 < old <= %.3f ms (read before)",
		  kt_ms(kt_ns(&old.it_value)), kt_ms(kt_ns(&its.it_value)));
	its = gettime(timer);
	kt_expect(kt_ns(&its.it_interval) == 250 * KT_MSEC, "a periodic timer reads interval %.3f ms, expected 250 ms",
		  kt_ms(kt_ns(&its.it_interval)));
	settime(timer, 0, 0, 0, &old);
	kt_expect(kt_ns(&old.it_interval) == 250 * KT_MSEC,
		  "disarming returned the old interval %.3f ms, expected 250 ms", kt_ms(kt_ns(&old.it_interval)));
	expect_disarmed(timer, "after disarming a periodic timer", 0);
	timer_delete(timer);
}

/* ---- overruns ---- */

static void overrun(const struct kt_case *c)
{
	const struct tcase *tc = c->data;
	long long interval = 20 * KT_MSEC, ta, tb, tc_, td, low, high;
	timer_t timer;
	siginfo_t si;
	int n;

	kt_block(SIG);
	if (new_timer(tc->clock, SIGEV_SIGNAL, 0, &timer))
		return;
	ta = kt_now(tc->clock);
	settime(timer, 0, interval, interval, NULL);
	tb = kt_now(tc->clock);
	kt_sleep_ms(500);
	tc_ = kt_now(tc->clock);
	if (!kt_expect(kt_wait_signal(SIG, 5000, &si), "no signal of a 20 ms periodic %s timer", kt_clock_name(tc->clock)))
		return;
	td = kt_now(tc->clock);
	n = timer_getoverrun(timer);
	/* the expiries up to the dequeue, but the first, which queued the signal */
	low = (tc_ - tb) / interval - 1;
	high = (td - ta) / interval;
	kt_expect(n >= low - 1 && n <= high + 1,
		  "%s timer of 20 ms blocked for %.3f ms: timer_getoverrun %d, expected %lld to %lld",
		  kt_clock_name(tc->clock), kt_ms(tc_ - tb), n, low - 1, high + 1);
	kt_expect(si.si_overrun == n, "si_overrun %d, timer_getoverrun %d, expected the same", si.si_overrun, n);
	timer_delete(timer);
}

/* ---- timer_delete ---- */

static int kernel_before(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	uname(&u);
	sscanf(u.release, "%d.%d", &ma, &mi);
	return ma < major || (ma == major && mi < minor);
}

static void delete_pending(const struct kt_case *c)
{
	/* the posix-timers signal rework of 6.13 drops the signal of a deleted timer */
	int delivered = kernel_before(6, 13);
	sigset_t pending;
	timer_t timer;
	siginfo_t si;
	int got, err;

	(void)c;
	kt_block(SIG);
	if (new_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL, 5, &timer))
		return;
	settime(timer, 0, 20 * KT_MSEC, 20 * KT_MSEC, NULL);
	kt_sleep_ms(100);
	sigpending(&pending);
	if (!kt_expect(sigismember(&pending, SIG), "after 100 ms of a 20 ms timer its signal is not pending"))
		return;
	err = timer_delete(timer) ? errno : 0;
	kt_expect(!err, "timer_delete with its signal pending returned %s, expected 0", err_name(err));
	got = kt_wait_signal(SIG, 100, &si);
	kt_expect(got == delivered, "after timer_delete the pending signal %s, expected it %s (as stock %s)",
		  got ? "came" : "was dropped", delivered ? "to come" : "dropped", delivered ? "6.12" : ">= 6.13");
	if (got)
		kt_expect(si.si_code == SI_TIMER && si.si_value.sival_int == 5,
			  "the signal has si_code %d, sival %d, expected SI_TIMER (%d) and 5", si.si_code,
			  si.si_value.sival_int, SI_TIMER);
	kt_expect(!kt_wait_signal(SIG, 200, NULL), "a second signal came after timer_delete, expected none");
}

static volatile int handled;

static void on_timer(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	handled++;
}

static void nothing_after_delete(const struct kt_case *c)
{
	struct itimerspec its;
	timer_t timer;
	int before, err;

	(void)c;
	kt_handle(SIG, on_timer, SA_RESTART);
	if (new_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL, 0, &timer))
		return;
	settime(timer, 0, 2 * KT_MSEC, 2 * KT_MSEC, NULL);
	kt_sleep_ms(100);
	err = timer_delete(timer) ? errno : 0;
	before = handled;	/* a signal queued before the delete was taken on its return */
	kt_expect(!err, "timer_delete returned %s, expected 0", err_name(err));
	kt_expect(before > 0, "no signal of a 2 ms periodic timer in 100 ms, expected some");
	kt_sleep_ms(200);
	kt_expect(handled == before, "%d signals came in the 200 ms after timer_delete returned, expected none",
		  handled - before);
	err = timer_gettime(timer, &its) ? errno : 0;
	kt_expect(err == EINVAL, "timer_gettime of a deleted timer returned %s, expected EINVAL", err_name(err));
	err = settime(timer, 0, KT_MSEC, 0, NULL);
	kt_expect(err == EINVAL, "timer_settime of a deleted timer returned %s, expected EINVAL", err_name(err));
	err = timer_getoverrun(timer) < 0 ? errno : 0;
	kt_expect(err == EINVAL, "timer_getoverrun of a deleted timer returned %s, expected EINVAL", err_name(err));
	err = timer_delete(timer) ? errno : 0;
	kt_expect(err == EINVAL, "timer_delete of a deleted timer returned %s, expected EINVAL", err_name(err));
}

/* ---- many timers, exec, exit, fork ---- */

#define MANY 20

static void many(const struct kt_case *c)
{
	long long t0, t, value[MANY];
	int seen[MANY] = { 0 }, i, k;
	timer_t timer[MANY];
	siginfo_t si;

	(void)c;
	kt_block(SIGRTMIN);
	t0 = kt_now(CLOCK_MONOTONIC);
	for (i = 0; i < MANY; i++) {
		int err = make_timer(i % 2 ? CLOCK_REALTIME : CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGRTMIN, i, 0,
				     &timer[i]);

		if (!kt_expect(!err, "timer_create %d: %s", i, strerror(err)))
			return;
		value[i] = (50 + 10 * ((i * 7) % MANY)) * KT_MSEC;	/* not in creation order */
		settime(timer[i], 0, value[i], 0, NULL);
	}
	for (k = 0; k < MANY; k++) {
		if (!kt_expect(kt_wait_signal(SIGRTMIN, 5000, &si), "only %d of %d timers fired within 5 s", k, MANY))
			break;
		t = kt_now(CLOCK_MONOTONIC) - t0;
		i = si.si_value.sival_int;
		if (!kt_expect(i >= 0 && i < MANY && !seen[i]++, "a signal with sival %d, expected each of 0..%d once",
			       i, MANY - 1))
			continue;
		kt_expect(t >= value[i], "timer %d of %.0f ms fired after %.3f ms, expected never early", i,
			  kt_ms(value[i]), kt_ms(t));
	}
	kt_expect(!kt_wait_signal(SIGRTMIN, 200, NULL), "a signal more than the %d expected came", MANY);
}

/*
 * After execve() (the mask survived): a signal the timer sent before the
 * exec may still be pending, so take it; a timer that survived would then
 * send another within its 100 ms period.
 */
static int after_exec(void)
{
	kt_wait_signal(SIG, 0, NULL);
	return kt_wait_signal(SIG, 600, NULL) ? 11 : 0;
}

static void deleted_by_exec(const struct kt_case *c)
{
	char buf[64];
	int status;
	pid_t pid;

	(void)c;
	pid = fork();
	if (pid == 0) {
		timer_t timer;

		kt_block(SIG);
		if (new_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL, 0, &timer))
			_exit(12);
		settime(timer, 0, 100 * KT_MSEC, 100 * KT_MSEC, NULL);
		kt_reexec(AFTER_EXEC);
	}
	waitpid(pid, &status, 0);
	kt_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "after execve(): %s",
		  WIFEXITED(status) && WEXITSTATUS(status) == 11 ? "the timer created before it sent its signal, expected it deleted" :
		  kt_status_text(status, buf, sizeof(buf)));
}

static void exit_with_armed_timers(const struct kt_case *c)
{
	char buf[64];
	int status, i;
	pid_t pid;

	(void)c;
	pid = fork();
	if (pid == 0) {
		timer_t timer;

		/*
		 * Ignored, the signals re-arm the timers from their expiry (at most once a
		 * jiffy), so they are still armed at exit; handled, ten 1 ms timers are a
		 * signal every 100 us, which a guest the host starves cannot keep up with.
		 */
		signal(SIG, SIG_IGN);
		for (i = 0; i < 10; i++) {
			if (make_timer(i % 2 ? CLOCK_REALTIME : CLOCK_MONOTONIC, SIGEV_SIGNAL, SIG, i, 0, &timer))
				_exit(10);
			settime(timer, 0, KT_MSEC, KT_MSEC, NULL);
		}
		kt_sleep_ms(50);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	kt_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "a process with 10 armed 1 ms timers ended with %s, expected exit 0",
		  kt_status_text(status, buf, sizeof(buf)));
}

static void fork_has_none(const struct kt_case *c)
{
	struct itimerspec its;
	timer_t timer;
	int status;
	pid_t pid;

	(void)c;
	kt_block(SIG);
	if (new_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL, 0, &timer))
		return;
	settime(timer, 0, 200 * KT_MSEC, 0, NULL);
	pid = fork();
	if (pid == 0)
		_exit(timer_gettime(timer, &its) == 0 ? 10 : kt_wait_signal(SIG, 400, NULL) ? 11 : 0);
	waitpid(pid, &status, 0);
	kt_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child of fork() %s",
		  WIFEXITED(status) && WEXITSTATUS(status) == 10 ? "has the parent's timer, expected none" :
		  WIFEXITED(status) && WEXITSTATUS(status) == 11 ? "got the parent's timer signal, expected none" :
		  "crashed, expected exit 0");
	kt_expect(kt_wait_signal(SIG, 5000, NULL), "the parent's 200 ms timer did not fire within 5 s");
	timer_delete(timer);
}

/* ---- invalid arguments ---- */

static void invalid(const struct kt_case *c)
{
	static const struct { long long sec, nsec; int in_interval; } bad[] = {
		{ 0, KT_SEC, 0 }, { 0, -1, 0 }, { -1, 0, 0 }, { 0, KT_SEC, 1 }, { 0, -1, 1 },
	};
	struct itimerspec its;
	timer_t timer, other;
	unsigned int i;
	int err;

	(void)c;
	kt_block(SIG);
	err = make_timer(100, SIGEV_SIGNAL, SIG, 0, 0, &other);
	kt_expect(err == EINVAL, "timer_create(clock 100) returned %s, expected EINVAL", err_name(err));
	err = make_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL, 0, 0, 0, &other);
	kt_expect(err == EINVAL, "timer_create with signal 0 returned %s, expected EINVAL", err_name(err));
	err = make_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL, 200, 0, 0, &other);
	kt_expect(err == EINVAL, "timer_create with signal 200 returned %s, expected EINVAL", err_name(err));
	err = make_timer(CLOCK_MONOTONIC, SIGEV_THREAD_ID, SIG, 0, 1, &other);
	kt_expect(err == EINVAL, "timer_create(SIGEV_THREAD_ID of pid 1, another process) returned %s, expected EINVAL",
		  err_name(err));
	if (new_timer(CLOCK_MONOTONIC, SIGEV_SIGNAL, 0, &timer))
		return;
	for (i = 0; i < KT_ARRAY_SIZE(bad); i++) {
		memset(&its, 0, sizeof(its));
		its.it_value.tv_nsec = 100 * KT_MSEC;
		if (bad[i].in_interval) {
			its.it_interval.tv_sec = bad[i].sec;
			its.it_interval.tv_nsec = bad[i].nsec;
		} else {
			its.it_value.tv_sec = bad[i].sec;
			its.it_value.tv_nsec = bad[i].nsec;
		}
		err = timer_settime(timer, 0, &its, NULL) ? errno : 0;
		kt_expect(err == EINVAL, "timer_settime with %s {%lld, %lld} returned %s, expected EINVAL",
			  bad[i].in_interval ? "interval" : "value", bad[i].sec, bad[i].nsec, err_name(err));
	}
	expect_disarmed(timer, "after the invalid timer_settime calls", 0);
	timer_delete(timer);
}

#define T(name, fn, ...) { name, fn, &(const struct tcase){ __VA_ARGS__ } }
#define RT CLOCK_REALTIME
#define MONO CLOCK_MONOTONIC

/*
 * A periodic timer whose signal is ignored re-arms itself (nothing will
 * dequeue a signal), but at most once a jiffy, as posix_timer_fn() does in
 * 6.12: timer_gettime() then reads up to a jiffy left, which a 100 us
 * interval alone never shows.  Without the limit the CPU would spend its
 * time re-arming the timer in the softirq.
 */
static void ignored_signal_rearms_once_a_jiffy(const struct kt_case *c)
{
	const struct tcase *tc = c->data;
	const long long interval = 100 * KT_USEC;
	long long most = 0, deadline;
	timer_t timer;
	sigset_t set;

	signal(SIG, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIG);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	if (new_timer(tc->clock, SIGEV_SIGNAL, 1, &timer))
		return;
	if (!kt_expect(!settime(timer, 0, interval, interval, NULL), "timer_settime failed"))
		goto out;
	kt_sleep_ms(50);
	/*
	 * Read for up to 2 s, not a fixed number of times: a loaded host can
	 * hold the guest's timer interrupt back for longer than 1,000 reads
	 * take, and every read then finds the timer overdue (0 ms left).
	 */
	deadline = kt_now(CLOCK_MONOTONIC) + 2 * KT_SEC;
	do {
		struct itimerspec its = gettime(timer);

		if (kt_ns(&its.it_value) > most)
			most = kt_ns(&its.it_value);
	} while (most <= interval && kt_now(CLOCK_MONOTONIC) < deadline);
	kt_expect(most > interval,
		  "timer_gettime read at most %.3f ms left of a 0.1 ms interval in 2 s of reads: re-armed at each interval, expected at most once a jiffy",
		  kt_ms(most));
out:
	timer_delete(timer);
}

static const struct kt_case cases[] = {
	T("SIGEV_SIGNAL MONOTONIC relative: one signal, never early, SI_TIMER and the value", one_shot, .clock = MONO),
	T("SIGEV_SIGNAL REALTIME relative: one signal, never early, SI_TIMER and the value", one_shot, .clock = RT),
	T("SIGEV_SIGNAL MONOTONIC TIMER_ABSTIME: one signal, never early", one_shot, .clock = MONO, .abs = 1),
	T("SIGEV_SIGNAL REALTIME TIMER_ABSTIME: one signal, never early", one_shot, .clock = RT, .abs = 1),
	T("MONOTONIC TIMER_ABSTIME in the past: fires at once", past_absolute, .clock = MONO),
	T("REALTIME TIMER_ABSTIME in the past: fires at once", past_absolute, .clock = RT),
	T("periodic MONOTONIC: expiries never early, overruns counted, gettime within the interval", periodic, .clock = MONO),
	T("periodic REALTIME: expiries never early, overruns counted, gettime within the interval", periodic, .clock = RT),
	T("SIGEV_THREAD_ID MONOTONIC: the named thread gets the signal", thread_id, .clock = MONO),
	T("SIGEV_THREAD_ID REALTIME periodic: the named thread gets every signal", thread_id, .clock = RT, .periodic = 1),
	T("SIGEV_NONE MONOTONIC one-shot: gettime counts down to 0, no signal", sigev_none, .clock = MONO),
	T("SIGEV_NONE REALTIME periodic: gettime stays within the interval, no signal", sigev_none, .clock = RT, .periodic = 1),
	T("disarm: the old value is returned, no signal after", disarm, .clock = MONO),
	T("re-arming a pending MONOTONIC timer: the old value is returned, the new time counts", rearm_pending, .clock = MONO),
	T("re-arming a pending REALTIME timer: the old value is returned, the new time counts", rearm_pending, .clock = RT),
	T("timer_gettime of a new, pending, periodic and disarmed timer", gettime_states, .clock = RT),
	T("timer_getoverrun MONOTONIC after the signal was blocked for 25 periods", overrun, .clock = MONO),
	T("timer_getoverrun REALTIME after the signal was blocked for 25 periods", overrun, .clock = RT),
	T("timer_delete with the signal pending: as stock", delete_pending, .clock = MONO),
	T("no signal after timer_delete returns; a deleted timer gives EINVAL", nothing_after_delete, .clock = MONO),
	T("20 timers at once: each fires once, never early", many, .clock = MONO),
	T("execve deletes the timers", deleted_by_exec, .clock = MONO),
	T("exit with armed periodic timers", exit_with_armed_timers, .clock = MONO),
	T("the child of fork has no timers", fork_has_none, .clock = MONO),
	T("invalid clocks, signals, threads and times: EINVAL", invalid, .clock = MONO),
	T("a periodic timer whose signal is ignored re-arms at most once a jiffy",
	  ignored_signal_rearms_once_a_jiffy, .clock = MONO),
};

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], AFTER_EXEC))
		return after_exec();
	return kt_run(cases, KT_ARRAY_SIZE(cases), 1, 20);
}
