// SPDX-License-Identifier: GPL-2.0
/*
 * kt_itimer - setitimer(ITIMER_REAL), getitimer() and alarm() as POSIX and
 * stock Linux 6.12 have them: SIGALRM comes once for a one-shot timer,
 * never early; a periodic timer is re-armed at each expiry; getitimer()
 * reads 0 < remaining <= what was set and the interval as set, 0 when
 * disarmed or expired; setitimer() returns the old value and disarms with
 * a zero value; re-arming a pending timer replaces it; a new interval
 * applies from the next period; alarm() returns the seconds left, rounded,
 * and 1 (not 0) for a pending alarm with less than half a second left;
 * fork() gives the child no timer, execve() keeps it, a thread that arms it
 * and exits leaves it to the process; invalid values give EINVAL.
 *
 * Each case runs in a process of its own (ITIMER_REAL is per process), all
 * at the same time.
 */
#include "ktap.h"

#include <pthread.h>
#include <sys/time.h>

#define AFTER_EXEC	"itimer-after-exec"

static long long tv_ns(const struct timeval *tv)
{
	return (long long)tv->tv_sec * KT_SEC + tv->tv_usec * KT_USEC;
}

static struct timeval ns_tv(long long ns)
{
	struct timeval tv = { .tv_sec = ns / KT_SEC, .tv_usec = ns % KT_SEC / KT_USEC };

	return tv;
}

/* setitimer(ITIMER_REAL); 0 or the errno. */
static int set_real(long long value, long long interval, struct itimerval *old)
{
	struct itimerval it = { .it_interval = ns_tv(interval), .it_value = ns_tv(value) };

	return setitimer(ITIMER_REAL, &it, old) ? errno : 0;
}

static struct itimerval get_real(void)
{
	struct itimerval it;

	memset(&it, 0xff, sizeof(it));
	if (getitimer(ITIMER_REAL, &it))
		kt_fail("getitimer: %s, expected success", strerror(errno));
	return it;
}

static int alarm_pending(void)
{
	sigset_t set;

	sigpending(&set);
	return sigismember(&set, SIGALRM);
}

/* getitimer() reads 0/0, and no SIGALRM comes within ms. */
static void expect_disarmed(const char *when, long long ms)
{
	struct itimerval it = get_real();

	kt_expect_disarmed("getitimer", when, tv_ns(&it.it_value), tv_ns(&it.it_interval),
			   SIGALRM, ms);
}

static void alarm_returns(const struct kt_case *c)
{
	long long t0, t1, t2;
	unsigned int a;

	(void)c;
	kt_block(SIGALRM);
	kt_expect((a = alarm(0)) == 0, "alarm(0) in a new process returned %u, expected 0", a);
	t0 = kt_now(CLOCK_MONOTONIC);
	kt_expect((a = alarm(5)) == 0, "alarm(5) with none pending returned %u, expected 0", a);
	a = alarm(3);
	t1 = kt_now(CLOCK_MONOTONIC);
	kt_expect(a <= 5 && a >= (5 * KT_SEC - (t1 - t0)) / KT_SEC,
		  "alarm(3) %.3f ms after alarm(5) returned %u, expected 5 rounded (4 or 5)",
		  kt_ms(t1 - t0), a);
	a = alarm(0);
	t2 = kt_now(CLOCK_MONOTONIC);
	kt_expect(a <= 3 && a >= (3 * KT_SEC - (t2 - t1)) / KT_SEC,
		  "alarm(0) %.3f ms after alarm(3) returned %u, expected 3 rounded", kt_ms(t2 - t1), a);
	expect_disarmed("after alarm(0)", 0);
}

static void alarm_under_half_second(const struct kt_case *c)
{
	unsigned int a;

	(void)c;
	kt_block(SIGALRM);
	set_real(400 * KT_MSEC, 0, NULL);
	a = alarm(0);
	if (a == 0 && alarm_pending()) {
		kt_skip("the 400 ms timer expired before alarm(0) (a stalled vCPU?)");
		return;
	}
	kt_expect(a == 1, "alarm(0) with 400 ms left returned %u, expected 1 (never 0 for a pending alarm)",
		  a);
	expect_disarmed("after alarm(0)", 600);
}

static void one_shot(const struct kt_case *c)
{
	long long t0, t1;
	siginfo_t si;

	(void)c;
	kt_block(SIGALRM);
	t0 = kt_now(CLOCK_MONOTONIC);
	set_real(200 * KT_MSEC, 0, NULL);
	if (!kt_expect(kt_wait_signal(SIGALRM, 5000, &si), "no SIGALRM within 5 s of a 200 ms timer, expected one"))
		return;
	t1 = kt_now(CLOCK_MONOTONIC);
	kt_expect(t1 - t0 >= 200 * KT_MSEC, "SIGALRM after %.3f ms of a 200 ms timer, expected never early",
		  kt_ms(t1 - t0));
	kt_expect(si.si_code == SI_KERNEL, "SIGALRM with si_code %d, expected SI_KERNEL (%d)", si.si_code,
		  SI_KERNEL);
	expect_disarmed("after the expiry of a one-shot timer", 300);
}

static void periodic(const struct kt_case *c)
{
	long long t0, t, value = 100 * KT_MSEC, interval = 50 * KT_MSEC;
	struct itimerval it;
	int k;

	(void)c;
	kt_block(SIGALRM);
	t0 = kt_now(CLOCK_MONOTONIC);
	set_real(value, interval, NULL);
	for (k = 1; k <= 5; k++) {
		if (!kt_expect(kt_wait_signal(SIGALRM, 5000, NULL),
			       "SIGALRM %d of a periodic 100 ms + 50 ms timer did not come within 5 s, expected it", k))
			return;
		t = kt_now(CLOCK_MONOTONIC) - t0;
		kt_expect(t >= value + (k - 1) * interval,
			  "SIGALRM %d of a periodic 100 ms + 50 ms timer after %.3f ms, expected never before %.3f ms",
			  k, kt_ms(t), kt_ms(value + (k - 1) * interval));
	}
	it = get_real();
	kt_expect(tv_ns(&it.it_interval) == interval, "getitimer interval %.3f ms, expected 50 ms as set",
		  kt_ms(tv_ns(&it.it_interval)));
	/* 0 only if it expired again and waits for SIGALRM to be taken to re-arm */
	kt_expect((tv_ns(&it.it_value) > 0 || alarm_pending()) && tv_ns(&it.it_value) <= interval + KT_CLOCK_SLACK,
		  "getitimer of a periodic timer reads %.3f ms, expected 0 < value <= the 50 ms interval",
		  kt_ms(tv_ns(&it.it_value)));
	set_real(0, 0, NULL);
	kt_wait_signal(SIGALRM, 0, NULL);
	expect_disarmed("after disarming a periodic timer", 200);
}

static void remaining(const struct kt_case *c)
{
	long long value = 2 * KT_SEC, interval = 300 * KT_MSEC;
	struct itimerval it, old;

	(void)c;
	kt_block(SIGALRM);
	set_real(value, interval, NULL);
	it = get_real();
	kt_expect(tv_ns(&it.it_value) > 0 && tv_ns(&it.it_value) <= value + KT_CLOCK_SLACK,
		  "getitimer after setting 2 s reads %.3f ms, expected 0 < remaining <= 2000 ms",
		  kt_ms(tv_ns(&it.it_value)));
	kt_expect(tv_ns(&it.it_interval) == interval, "getitimer interval %.3f ms, expected 300 ms as set",
		  kt_ms(tv_ns(&it.it_interval)));
	kt_expect(set_real(0, 0, &old) == 0, "setitimer to disarm failed, expected success");
	kt_expect(tv_ns(&old.it_value) > 0 && tv_ns(&old.it_value) <= tv_ns(&it.it_value) + KT_CLOCK_SLACK,
		  "setitimer returned the old value %.3f ms, expected 0 < old <= %.3f ms (what getitimer read before)",
		  kt_ms(tv_ns(&old.it_value)), kt_ms(tv_ns(&it.it_value)));
	kt_expect(tv_ns(&old.it_interval) == interval,
		  "setitimer returned the old interval %.3f ms, expected 300 ms", kt_ms(tv_ns(&old.it_interval)));
	expect_disarmed("after disarming", 0);
}

static void disarm(const struct kt_case *c)
{
	struct itimerval old;

	(void)c;
	long long armed, took;

	kt_block(SIGALRM);
	armed = kt_now(CLOCK_MONOTONIC);
	set_real(300 * KT_MSEC, 0, NULL);
	set_real(0, 0, &old);
	took = kt_now(CLOCK_MONOTONIC) - armed;
	if (took >= 300 * KT_MSEC) {
		/* the timer was due before it was disarmed: nothing to check */
		kt_skip("disarmed %.3f ms after arming a 300 ms timer (a stalled vCPU)", kt_ms(took));
		kt_wait_signal(SIGALRM, 0, NULL);
		return;
	}
	kt_expect(tv_ns(&old.it_value) > 0 && tv_ns(&old.it_value) <= 300 * KT_MSEC + KT_CLOCK_SLACK,
		  "disarming returned the old value %.3f ms, expected 0 < old <= 300 ms",
		  kt_ms(tv_ns(&old.it_value)));
	expect_disarmed("after disarming a 300 ms timer", 600);
}

static void rearm_pending(const struct kt_case *c)
{
	struct itimerval old;
	long long t0, t;

	(void)c;
	kt_block(SIGALRM);
	set_real(4 * KT_SEC, 0, NULL);
	t0 = kt_now(CLOCK_MONOTONIC);
	set_real(200 * KT_MSEC, 0, &old);
	kt_expect(tv_ns(&old.it_value) > 0 && tv_ns(&old.it_value) <= 4 * KT_SEC + KT_CLOCK_SLACK,
		  "re-arming returned the old value %.3f ms, expected 0 < old <= 4000 ms",
		  kt_ms(tv_ns(&old.it_value)));
	if (!kt_expect(kt_wait_signal(SIGALRM, 3000, NULL),
		       "no SIGALRM within 3 s of re-arming a 4 s timer for 200 ms, expected one"))
		return;
	t = kt_now(CLOCK_MONOTONIC) - t0;
	kt_expect(t >= 200 * KT_MSEC, "SIGALRM %.3f ms after re-arming for 200 ms, expected never early",
		  kt_ms(t));
	expect_disarmed("after the re-armed timer expired (the 4 s one is gone)", 0);
}

static void interval_change(const struct kt_case *c)
{
	long long tc, t;
	struct itimerval old, it;
	int k;

	(void)c;
	kt_block(SIGALRM);
	set_real(50 * KT_MSEC, 50 * KT_MSEC, NULL);
	for (k = 0; k < 2; k++)
		if (!kt_expect(kt_wait_signal(SIGALRM, 5000, NULL), "no SIGALRM of a 50 ms periodic timer in 5 s"))
			return;
	tc = kt_now(CLOCK_MONOTONIC);
	set_real(100 * KT_MSEC, 200 * KT_MSEC, &old);
	/*
	 * The old timer is re-armed only as its signal is taken: an old value
	 * of 0 says its next 50 ms period ended before the change (a stalled
	 * vCPU), and its SIGALRM is pending.  It is not one of the new timer's.
	 */
	if (!tv_ns(&old.it_value))
		kt_wait_signal(SIGALRM, 0, NULL);
	kt_expect(tv_ns(&old.it_interval) == 50 * KT_MSEC,
		  "changing the interval returned the old interval %.3f ms, expected 50 ms",
		  kt_ms(tv_ns(&old.it_interval)));
	for (k = 0; k < 2; k++) {
		if (!kt_expect(kt_wait_signal(SIGALRM, 5000, NULL),
			       "SIGALRM %d after the change to 100 ms + 200 ms did not come in 5 s", k + 1))
			return;
		t = kt_now(CLOCK_MONOTONIC) - tc;
		kt_expect(t >= 100 * KT_MSEC + k * 200 * KT_MSEC,
			  "SIGALRM %d after the change to 100 ms + 200 ms came after %.3f ms, expected never before %d ms",
			  k + 1, kt_ms(t), 100 + k * 200);
	}
	it = get_real();
	kt_expect(tv_ns(&it.it_interval) == 200 * KT_MSEC, "getitimer interval %.3f ms, expected the new 200 ms",
		  kt_ms(tv_ns(&it.it_interval)));
	set_real(0, 0, NULL);
}

static void zero_value(const struct kt_case *c)
{
	(void)c;
	kt_block(SIGALRM);
	kt_expect(set_real(0, 100 * KT_MSEC, NULL) == 0, "setitimer(value 0, interval 100 ms) failed");
	expect_disarmed("after setitimer with value 0 and an interval (it stays disarmed)", 300);
}

static void tiny(const struct kt_case *c)
{
	(void)c;
	kt_block(SIGALRM);
	set_real(KT_USEC, 0, NULL);
	kt_expect(kt_wait_signal(SIGALRM, 5000, NULL), "no SIGALRM within 5 s of a 1 us timer, expected one");
	expect_disarmed("after a 1 us timer expired", 0);
}

static void invalid(const struct kt_case *c)
{
	static const struct { long sec, usec; int in_interval; } bad[] = {
		{ 0, 1000000, 0 }, { 0, -1, 0 }, { -1, 0, 0 }, { 0, 1000000, 1 }, { 0, -1, 1 },
	};
	struct itimerval it;
	unsigned int i;
	int err;

	(void)c;
	for (i = 0; i < KT_ARRAY_SIZE(bad); i++) {
		struct timeval tv = { .tv_sec = bad[i].sec, .tv_usec = bad[i].usec };

		memset(&it, 0, sizeof(it));
		it.it_value.tv_usec = 100000;
		if (bad[i].in_interval)
			it.it_interval = tv;
		else
			it.it_value = tv;
		err = setitimer(ITIMER_REAL, &it, NULL) ? errno : 0;
		kt_expect(err == EINVAL, "setitimer with %s {%ld, %ld} returned %s, expected EINVAL",
			  bad[i].in_interval ? "interval" : "value", bad[i].sec, bad[i].usec,
			  err ? strerrorname_np(err) : "0");
	}
	memset(&it, 0, sizeof(it));
	err = setitimer(99, &it, NULL) ? errno : 0;
	kt_expect(err == EINVAL, "setitimer(99, ...) returned %s, expected EINVAL", err ? strerrorname_np(err) : "0");
	err = getitimer(99, &it) ? errno : 0;
	kt_expect(err == EINVAL, "getitimer(99, ...) returned %s, expected EINVAL", err ? strerrorname_np(err) : "0");
	expect_disarmed("after the invalid calls", 0);
}

static void not_inherited(const struct kt_case *c)
{
	int status;
	pid_t pid;

	(void)c;
	kt_block(SIGALRM);
	set_real(300 * KT_MSEC, 0, NULL);
	pid = fork();
	if (pid == 0) {
		struct itimerval it;

		getitimer(ITIMER_REAL, &it);
		if (tv_ns(&it.it_value) || tv_ns(&it.it_interval))
			_exit(10);
		_exit(kt_wait_signal(SIGALRM, 600, NULL) ? 11 : 0);
	}
	kt_expect(kt_wait_signal(SIGALRM, 5000, NULL), "the parent's SIGALRM did not come within 5 s of a 300 ms timer");
	waitpid(pid, &status, 0);
	kt_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s",
		  WIFEXITED(status) && WEXITSTATUS(status) == 10 ? "the child of fork() has a timer, expected none" :
		  WIFEXITED(status) && WEXITSTATUS(status) == 11 ? "the child of fork() got SIGALRM, expected none" :
		  "the child of fork() crashed, expected exit 0");
}

/*
 * After execve(): the periodic timer armed before it is still there (its
 * interval, whether or not it expired during the exec, which may take long
 * under emulation) and still fires once its pending signal is taken.
 */
static int after_exec(void)
{
	struct itimerval it;

	getitimer(ITIMER_REAL, &it);
	if (tv_ns(&it.it_interval) != 300 * KT_MSEC || tv_ns(&it.it_value) > 300 * KT_MSEC)
		return 10;
	kt_wait_signal(SIGALRM, 0, NULL);
	return kt_wait_signal(SIGALRM, 5000, NULL) ? 0 : 11;
}

static void kept_across_exec(const struct kt_case *c)
{
	int status;
	pid_t pid;

	(void)c;
	pid = fork();
	if (pid == 0) {
		kt_block(SIGALRM);	/* the mask survives execve() too */
		set_real(300 * KT_MSEC, 300 * KT_MSEC, NULL);
		kt_reexec(AFTER_EXEC);
	}
	waitpid(pid, &status, 0);
	kt_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "after execve() %s",
		  WIFEXITED(status) && WEXITSTATUS(status) == 10 ? "getitimer reads no 300 ms periodic timer, expected it kept" :
		  WIFEXITED(status) && WEXITSTATUS(status) == 11 ? "no SIGALRM came within 5 s, expected the timer's" :
		  WIFEXITED(status) && WEXITSTATUS(status) == 127 ? "failed: could not exec /proc/self/exe" :
		  "the process crashed, expected exit 0");
}

static void *arm_and_exit(void *arg)
{
	(void)arg;
	set_real(200 * KT_MSEC, 0, NULL);
	return NULL;
}

static void armed_by_a_thread(const struct kt_case *c)
{
	pthread_t thread;

	(void)c;
	kt_block(SIGALRM);
	if (pthread_create(&thread, NULL, arm_and_exit, NULL)) {
		kt_fail("pthread_create failed");
		return;
	}
	pthread_join(thread, NULL);
	kt_expect(kt_wait_signal(SIGALRM, 5000, NULL),
		  "no SIGALRM within 5 s of a 200 ms timer armed by a thread that exited, expected one");
}

static const struct kt_case cases[] = {
	{ "alarm returns the seconds left of the previous alarm, rounded", alarm_returns, NULL },
	{ "alarm returns 1 for a pending alarm with under half a second left", alarm_under_half_second, NULL },
	{ "one-shot timer: one SIGALRM, never early, then disarmed", one_shot, NULL },
	{ "periodic timer: re-armed at each expiry, never early", periodic, NULL },
	{ "getitimer: 0 < remaining <= set, interval as set; setitimer returns the old value", remaining, NULL },
	{ "disarm: the old value is returned, no SIGALRM after", disarm, NULL },
	{ "re-arming a pending timer replaces it", rearm_pending, NULL },
	{ "a new interval applies from the next period", interval_change, NULL },
	{ "a zero value with an interval leaves the timer disarmed", zero_value, NULL },
	{ "a 1 us timer fires", tiny, NULL },
	{ "invalid values and timers: EINVAL", invalid, NULL },
	{ "the child of fork has no timer", not_inherited, NULL },
	{ "the timer is kept across execve", kept_across_exec, NULL },
	{ "a timer armed by a thread that exits still fires", armed_by_a_thread, NULL },
};

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], AFTER_EXEC))
		return after_exec();
	return kt_run(cases, KT_ARRAY_SIZE(cases), 1, 20);
}
