// SPDX-License-Identifier: GPL-2.0
/*
 * kt_threads - POSIX timers and ITIMER_REAL hammered by several threads at
 * once, bounded in time, as stock Linux 6.12 takes it:
 *
 * 1. four threads arm, re-arm, disarm, read, delete and re-create four
 *    shared POSIX timers (CLOCK_MONOTONIC and CLOCK_REALTIME, relative and
 *    TIMER_ABSTIME) and ITIMER_REAL at sub-millisecond intervals for 1.5 s,
 *    while their signals arrive: every call succeeds (or gives EINVAL for a
 *    timer another thread just deleted), every value read back is one that
 *    could have been set (0 <= value <= 500 us, give or take
 *    KT_CLOCK_SLACK; the interval exactly 0 or 100..300 us),
 *    every signal names a timer that existed, with SI_TIMER; the signals and
 *    overruns stay within what the timers could have produced; after the
 *    last timer_delete() and disarm nothing more arrives;
 * 2. four threads create, arm (0..100 us) and delete one-shot timers as
 *    fast as they can for 1 s, racing the expiry: no timer delivers twice,
 *    no more signals than timers, nothing after the last delete;
 * 3. eight threads each get a periodic 1 ms SIGEV_THREAD_ID timer of their
 *    own, take one signal and exit with it still armed: deleting those
 *    timers afterwards works, and no signal reaches another thread.
 *
 * The cases run one after the other, each in a process of its own.
 */
#include "ktap.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/time.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define SIG		SIGUSR1
#define NT		4			/* shared timers */
#define WORKERS		4
#define MAX_VALUE	(500 * KT_USEC)
#define MIN_INTERVAL	(100 * KT_USEC)
#define MAX_INTERVAL	(300 * KT_USEC)
#define QUIET_MS	300
#define MIN_OPS		50			/* calls each worker makes at least */

#define add(counter, n)	__atomic_add_fetch(&(counter), (n), __ATOMIC_RELAXED)
#define load(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)

static long long deadline;

static uint32_t rnd(uint32_t *state)
{
	uint32_t x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *state = x;
}

static void spin_us(long long us)
{
	long long until = kt_now(CLOCK_MONOTONIC) + us * KT_USEC;

	while (kt_now(CLOCK_MONOTONIC) < until)
		;
}

/* ---- what went wrong in a worker: counted, the first one kept for the report ---- */

static long bad_count;
static char first_bad[256];
static pthread_mutex_t bad_lock = PTHREAD_MUTEX_INITIALIZER;

static __attribute__((format(printf, 1, 2))) void bad(const char *fmt, ...)
{
	va_list ap;

	if (add(bad_count, 1) > 1)
		return;
	pthread_mutex_lock(&bad_lock);
	va_start(ap, fmt);
	vsnprintf(first_bad, sizeof(first_bad), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&bad_lock);
}

static void report_bad(void)
{
	kt_expect(!bad_count, "%ld wrong results, the first: %s", bad_count, first_bad);
}

static int wait_quiet(volatile long *counter, const char *what)
{
	long before;

	kt_sleep_ms(50);	/* what was queued before the last delete is taken by now */
	before = *counter;
	kt_sleep_ms(QUIET_MS);
	return kt_expect(*counter == before, "%ld %s came more than 50 ms after the last timer was deleted, expected none",
			 *counter - before, what);
}

/* ---- 1. shared timers ---- */

static timer_t slots[NT];
static int generation[NT];
static long ops, arms, itimer_arms, einval;
static volatile long signals, overruns, alarms, bad_sival, bad_code;

static clockid_t slot_clock(int k)
{
	return k % 2 ? CLOCK_REALTIME : CLOCK_MONOTONIC;
}

static void on_shared_signal(int sig, siginfo_t *si, void *uc)
{
	int id = si->si_value.sival_int;

	(void)sig;
	(void)uc;
	add(signals, 1);
	if (si->si_overrun > 0)
		add(overruns, si->si_overrun);
	if (si->si_code != SI_TIMER || si->si_overrun < 0)
		add(bad_code, 1);
	if (id < 0 || id / NT > load(generation[id % NT]))
		add(bad_sival, 1);
}

static void on_alarm(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	add(alarms, 1);
}

static int create_slot_timer(int k, timer_t *timer)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIG;
	sev.sigev_value.sival_int = k + NT * add(generation[k], 1);
	return timer_create(slot_clock(k), &sev, timer) ? errno : 0;
}

static void check_value(long long value, long long interval, long long res, const char *what)
{
	if (value < 0 || value > MAX_VALUE + KT_CLOCK_SLACK + res || (interval && (interval < MIN_INTERVAL || interval > MAX_INTERVAL + res)))
		bad("%s read value %lld ns interval %lld ns, expected 0..%lld ns and 0 or %lld..%lld ns", what, value,
		    interval, MAX_VALUE + KT_CLOCK_SLACK + res, MIN_INTERVAL, MAX_INTERVAL + res);
}

static void check_err(int err, const char *what)
{
	if (err == EINVAL)
		add(einval, 1);	/* the timer was deleted by another thread */
	else if (err)
		bad("%s: %s, expected success or EINVAL", what, strerrorname_np(err) ?: "?");
}

static void *shared_worker(void *arg)
{
	uint32_t r = 0x9e3779b9u * (uint32_t)(uintptr_t)arg + 1;
	struct itimerspec its, old;
	struct itimerval itv, oitv;
	int mine = 0;

	/* MIN_OPS whatever the clock says: a host that stalls the guest past the deadline is not a hang */
	while (mine++ < MIN_OPS || kt_now(CLOCK_MONOTONIC) < deadline) {
		int op = rnd(&r) % 8, k = rnd(&r) % NT, err = 0;
		timer_t timer = __atomic_load_n(&slots[k], __ATOMIC_ACQUIRE), fresh;
		long long res = kt_res(slot_clock(k));
		int flags = 0;

		add(ops, 1);
		switch (op) {
		case 0:
		case 1:
			memset(&its, 0, sizeof(its));
			its.it_value = kt_timespec(20 * KT_USEC + rnd(&r) % (MAX_VALUE - 20 * KT_USEC));
			if (rnd(&r) % 2)
				its.it_interval = kt_timespec(MIN_INTERVAL + rnd(&r) % (MAX_INTERVAL - MIN_INTERVAL));
			if (rnd(&r) % 4 == 0) {
				flags = TIMER_ABSTIME;
				its.it_value = kt_timespec(kt_now(slot_clock(k)) + kt_ns(&its.it_value));
			}
			err = timer_settime(timer, flags, &its, &old) ? errno : 0;
			check_err(err, "timer_settime");
			if (!err) {
				add(arms, 1);
				check_value(kt_ns(&old.it_value), kt_ns(&old.it_interval), res, "timer_settime's old value");
			}
			break;
		case 2:
			err = timer_gettime(timer, &its) ? errno : 0;
			check_err(err, "timer_gettime");
			if (!err)
				check_value(kt_ns(&its.it_value), kt_ns(&its.it_interval), res, "timer_gettime");
			break;
		case 3:
			memset(&its, 0, sizeof(its));
			err = timer_settime(timer, 0, &its, &old) ? errno : 0;
			check_err(err, "timer_settime to disarm");
			if (!err)
				check_value(kt_ns(&old.it_value), kt_ns(&old.it_interval), res, "disarming's old value");
			break;
		case 4:
			err = create_slot_timer(k, &fresh);
			if (err) {
				bad("timer_create: %s, expected success", strerrorname_np(err) ?: "?");
				break;
			}
			timer = __atomic_exchange_n(&slots[k], fresh, __ATOMIC_ACQ_REL);
			err = timer_delete(timer) ? errno : 0;
			if (err)
				bad("timer_delete of a timer only this thread deletes: %s, expected success",
				    strerrorname_np(err) ?: "?");
			break;
		case 5:
			memset(&itv, 0, sizeof(itv));
			itv.it_value.tv_usec = 50 + rnd(&r) % 450;
			if (rnd(&r) % 2)
				itv.it_interval.tv_usec = MIN_INTERVAL / KT_USEC + rnd(&r) % 200;
			if (setitimer(ITIMER_REAL, &itv, &oitv))
				bad("setitimer: %s, expected success", strerror(errno));
			add(itimer_arms, 1);
			check_value(oitv.it_value.tv_usec * KT_USEC + oitv.it_value.tv_sec * KT_SEC,
				    oitv.it_interval.tv_usec * KT_USEC + oitv.it_interval.tv_sec * KT_SEC, KT_USEC,
				    "setitimer's old value");
			break;
		case 6:
			if (getitimer(ITIMER_REAL, &itv))
				bad("getitimer: %s, expected success", strerror(errno));
			check_value(itv.it_value.tv_usec * KT_USEC + itv.it_value.tv_sec * KT_SEC,
				    itv.it_interval.tv_usec * KT_USEC + itv.it_interval.tv_sec * KT_SEC, KT_USEC,
				    "getitimer");
			break;
		case 7:
			err = timer_getoverrun(timer) < 0 ? errno : 0;
			check_err(err, "timer_getoverrun");
			break;
		}
	}
	return NULL;
}

static void shared_timers(const struct kt_case *c)
{
	pthread_t thread[WORKERS];
	struct itimerval zero;
	long long start, elapsed, bound;
	int i, err;

	(void)c;
	kt_handle(SIG, on_shared_signal, SA_RESTART);
	kt_handle(SIGALRM, on_alarm, SA_RESTART);
	for (i = 0; i < NT; i++) {
		err = create_slot_timer(i, &slots[i]);
		if (!kt_expect(!err, "timer_create: %s", strerror(err)))
			return;
	}
	start = kt_now(CLOCK_MONOTONIC);
	deadline = start + 1500 * KT_MSEC;
	for (i = 0; i < WORKERS; i++)
		if (pthread_create(&thread[i], NULL, shared_worker, (void *)(uintptr_t)i))
			kt_fail("pthread_create failed");
	for (i = 0; i < WORKERS; i++)
		pthread_join(thread[i], NULL);
	for (i = 0; i < NT; i++)
		kt_expect(!timer_delete(slots[i]), "deleting shared timer %d: %s", i, strerror(errno));
	memset(&zero, 0, sizeof(zero));
	setitimer(ITIMER_REAL, &zero, NULL);
	elapsed = kt_now(CLOCK_MONOTONIC) - start;
	kt_note("%ld calls (%ld arms, %ld setitimer, %ld EINVAL on deleted timers), %ld timer signals, %ld overruns, %ld SIGALRMs in %.0f ms",
		ops, arms, itimer_arms, einval, signals, overruns, alarms, kt_ms(elapsed));
	report_bad();
	kt_expect(!bad_code && !bad_sival,
		  "%ld signals without SI_TIMER or with a negative si_overrun, %ld naming no timer that existed, expected none",
		  bad_code, bad_sival);
	/* an armed sub-millisecond timer left alone expires; one re-armed first may not */
	kt_expect((signals > 0 || arms < 2) && (alarms > 0 || itimer_arms < 2),
		  "%ld timer signals of %ld arms and %ld SIGALRMs of %ld setitimer in %.0f ms, expected some of each",
		  signals, arms, alarms, itimer_arms, kt_ms(elapsed));
	kt_expect(ops >= WORKERS * MIN_OPS, "%ld calls in %.0f ms, expected at least %d from each of the %d threads",
		  ops, kt_ms(elapsed), MIN_OPS, WORKERS);
	/* every arm expires at most once, and then at most once per shortest interval */
	bound = arms + NT * (elapsed / MIN_INTERVAL + 1);
	kt_expect(signals + overruns <= bound, "%ld timer signals + %ld overruns in %.0f ms, expected at most %lld",
		  signals, overruns, kt_ms(elapsed), bound);
	bound = itimer_arms + elapsed / MIN_INTERVAL + 1;
	kt_expect(alarms <= bound, "%ld SIGALRMs in %.0f ms, expected at most %lld", alarms, kt_ms(elapsed), bound);
	wait_quiet(&signals, "timer signals");
	wait_quiet(&alarms, "SIGALRMs");
}

/* ---- 2. create, arm and delete racing the expiry ---- */

#define MAX_IDS	(1 << 20)

static unsigned char seen[MAX_IDS];
static int next_id;
static volatile long race_signals, duplicates;

static void on_race_signal(int sig, siginfo_t *si, void *uc)
{
	int id = si->si_value.sival_int;

	(void)sig;
	(void)uc;
	add(race_signals, 1);
	if (id < 0 || id >= MAX_IDS || __atomic_fetch_add(&seen[id], 1, __ATOMIC_RELAXED))
		add(duplicates, 1);
}

static void *race_worker(void *arg)
{
	uint32_t r = 0x85ebca6bu * (uint32_t)(uintptr_t)arg + 7;
	struct itimerspec its;
	struct sigevent sev;
	timer_t timer;
	int id, err, mine = 0;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIG;
	while ((mine++ < MIN_OPS || kt_now(CLOCK_MONOTONIC) < deadline) && (id = add(next_id, 1)) < MAX_IDS) {
		sev.sigev_value.sival_int = id;
		if (timer_create(id % 2 ? CLOCK_REALTIME : CLOCK_MONOTONIC, &sev, &timer)) {
			bad("timer_create: %s, expected success", strerror(errno));
			continue;
		}
		memset(&its, 0, sizeof(its));
		its.it_value.tv_nsec = 1 + rnd(&r) % (100 * KT_USEC);
		err = timer_settime(timer, 0, &its, NULL) ? errno : 0;
		if (err)
			bad("timer_settime of a new timer: %s, expected success", strerror(err));
		if (rnd(&r) % 2)
			spin_us(rnd(&r) % 100);
		if (timer_delete(timer))
			bad("timer_delete: %s, expected success", strerror(errno));
	}
	return NULL;
}

static void delete_races_expiry(const struct kt_case *c)
{
	pthread_t thread[WORKERS];
	int i, created;

	(void)c;
	kt_handle(SIG, on_race_signal, SA_RESTART);
	deadline = kt_now(CLOCK_MONOTONIC) + KT_SEC;
	for (i = 0; i < WORKERS; i++)
		if (pthread_create(&thread[i], NULL, race_worker, (void *)(uintptr_t)i))
			kt_fail("pthread_create failed");
	for (i = 0; i < WORKERS; i++)
		pthread_join(thread[i], NULL);
	created = next_id < MAX_IDS ? next_id : MAX_IDS;
	kt_note("%d one-shot timers created, armed and deleted, %ld signals", created, race_signals);
	report_bad();
	kt_expect(!duplicates, "%ld signals of a one-shot timer that had already signalled (or of no timer), expected none",
		  duplicates);
	kt_expect(race_signals <= created, "%ld signals of %d one-shot timers, expected at most one each",
		  race_signals, created);
	kt_expect(created >= WORKERS * MIN_OPS, "only %d timers created, expected at least %d from each of the %d threads",
		  created, MIN_OPS, WORKERS);
	wait_quiet(&race_signals, "timer signals");
}

/* ---- 3. thread timers left armed by exiting threads ---- */

#define EXITING 8

static timer_t thread_timers[EXITING];
static volatile long thread_got;

static void *exiting_thread(void *arg)
{
	int i = (int)(uintptr_t)arg;
	struct itimerspec its = { .it_interval = { 0, KT_MSEC }, .it_value = { 0, KT_MSEC } };
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIG;
	sev.sigev_notify_thread_id = gettid();
	if (timer_create(i % 2 ? CLOCK_REALTIME : CLOCK_MONOTONIC, &sev, &thread_timers[i]) ||
	    timer_settime(thread_timers[i], 0, &its, NULL)) {
		bad("arming a SIGEV_THREAD_ID timer: %s", strerror(errno));
		return NULL;
	}
	if (kt_wait_signal(SIG, 5000, NULL))
		add(thread_got, 1);
	return NULL;	/* with the timer still armed */
}

static void exiting_threads(const struct kt_case *c)
{
	pthread_t thread[EXITING];
	sigset_t pending;
	int i;

	(void)c;
	kt_block(SIG);
	for (i = 0; i < EXITING; i++)
		if (pthread_create(&thread[i], NULL, exiting_thread, (void *)(uintptr_t)i))
			kt_fail("pthread_create failed");
	for (i = 0; i < EXITING; i++)
		pthread_join(thread[i], NULL);
	kt_sleep_ms(100);	/* the timers keep expiring for threads that are gone */
	for (i = 0; i < EXITING; i++)
		kt_expect(!timer_delete(thread_timers[i]), "deleting the timer of exited thread %d: %s, expected success",
			  i, strerror(errno));
	report_bad();
	kt_expect(thread_got == EXITING, "%ld of %d threads got their timer's signal, expected all", thread_got,
		  EXITING);
	sigpending(&pending);
	kt_expect(!sigismember(&pending, SIG), "a signal of a timer of an exited thread is pending for the process, expected none");
}

static const struct kt_case cases[] = {
	{ "4 threads arm, read, disarm, delete and re-create shared timers and ITIMER_REAL", shared_timers, NULL },
	{ "4 threads create, arm and delete one-shot timers racing their expiry", delete_races_expiry, NULL },
	{ "timers of threads that exit with them armed can be deleted", exiting_threads, NULL },
};

int main(void)
{
	return kt_run(cases, KT_ARRAY_SIZE(cases), 0, 20);
}
