// SPDX-License-Identifier: GPL-2.0
/*
 * kt_ptp - timers on a PTP hardware clock (a dynamic POSIX clock,
 * FD_TO_CLOCKID() of /dev/ptp0), which stock Linux cannot serve:
 * clock_nanosleep() relative, TIMER_ABSTIME and cut by signals,
 * timer_create(), timer_settime(), timer_gettime(), timer_getoverrun() and
 * timer_delete(), timerfd one-shot and periodic, all while the clock is
 * stepped (clock_settime(), ADJ_SETOFFSET) and its rate adjusted
 * (ADJ_FREQUENCY), bad input, and the device removed with timers pending.
 *
 * The clock is the ptp_mock clock of a netdevsim port, which this program
 * creates in the ktimers guest (/sys/bus/netdevsim/new_device). On the
 * ktimer column every case checks the service; on the hrtimer column, the
 * stock path, it checks the stock refusal (EOPNOTSUPP; EINVAL from
 * timerfd_create()) and then skips with a reason that starts with
 * "feature:", which the report shows as a feature the stock path lacks.
 * Cases run one after the other: they step the one clock they share.
 */
#include "ktap.h"

#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/timex.h>

#define CLOCKFD			3
#define FD_TO_CLOCKID(fd)	((~(clockid_t)(fd) << 3) | CLOCKFD)

#define PTP_DEV			"/dev/ptp0"
#define NSIM_NEW		"/sys/bus/netdevsim/new_device"
#define NSIM_DEL		"/sys/bus/netdevsim/del_device"
#define NSIM_ID			"7"
#define USERS_PARAM		"/sys/module/ktimer/parameters/users"

#define SHORT			(50 * KT_MSEC)
#define HOUR			(3600 * KT_SEC)
#define WAIT_MS			5000
/* scaled ppm (struct timex::freq) of +2%: ptp_mock takes up to 3.2% */
#define FREQ_2PC		(20000L * 65536)

static clockid_t ptp;		/* the PTP clock, opened before the cases fork */
static int on;			/* 1 on the ktimer column, 0 on the stock one */

static void expect_errno(const char *what, int ret, int err)
{
	kt_expect(ret == -1 && errno == err, "%s: returned %d (%s), expected -1 (%s)", what, ret,
		  ret == -1 ? strerrorname_np(errno) : "no error", strerrorname_np(err));
}

/* clock_nanosleep() returns the error number itself */
static void expect_sleep_error(const char *what, int ret, int err)
{
	kt_expect(ret == err, "%s: returned %d (%s), expected %s", what, ret,
		  ret ? strerrorname_np(ret) : "success", strerrorname_np(err));
}

/*
 * On the stock column: check that the call was refused as stock 6.12
 * refuses it, then skip the case as a feature. Returns 1 there, else 0.
 */
static int stock_refused(const char *what, int ret, int err)
{
	if (on)
		return 0;
	if (kt_expect(ret == -1 && errno == err, "%s on a PTP clock: returned %d (%s), expected -1 (%s) as stock 6.12",
		      what, ret, ret == -1 ? strerrorname_np(errno) : "no error", strerrorname_np(err)))
		kt_skip("feature: stock 6.12 refuses %s on a PTP clock (%s); ktimers serve it", what,
			strerrorname_np(err));
	return 1;
}

/* The same for clock_nanosleep(), which returns the error number */
static int stock_refused_sleep(int ret)
{
	errno = ret;
	return stock_refused("clock_nanosleep()", ret ? -1 : 0, EOPNOTSUPP);
}

static int new_timer(clockid_t clock, int sig, timer_t *id)
{
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = sig };

	return timer_create(clock, &sev, id);
}

static int set_timer(timer_t id, int flags, long long value, long long interval)
{
	struct itimerspec its = { .it_interval = kt_timespec(interval), .it_value = kt_timespec(value) };

	return timer_settime(id, flags, &its, NULL);
}

static int set_tfd(int fd, int flags, long long value, long long interval)
{
	struct itimerspec its = { .it_interval = kt_timespec(interval), .it_value = kt_timespec(value) };

	return timerfd_settime(fd, flags, &its, NULL);
}

/* read(2) of a timerfd's count: the count, or -errno */
static long long tfd_read(int fd)
{
	uint64_t ticks = 0;
	ssize_t n = read(fd, &ticks, sizeof(ticks));

	return n < 0 ? -errno : n == sizeof(ticks) ? (long long)ticks : -EIO;
}

/* poll() of fd for ms: the revents, 0 on timeout, -errno */
static int poll_events(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, ms);

	return n < 0 ? -errno : n ? p.revents : 0;
}

static int step_clock(long long delta)
{
	struct timespec ts = kt_timespec(kt_now(ptp) + delta);

	return kt_expect(!clock_settime(ptp, &ts), "clock_settime(PTP): %s", strerror(errno));
}

static int set_freq(long freq)
{
	struct timex tx = { .modes = ADJ_FREQUENCY, .freq = freq };

	return kt_expect(clock_adjtime(ptp, &tx) >= 0, "clock_adjtime(ADJ_FREQUENCY %ld): %s", freq,
			 strerror(errno));
}

/* A relative sleep: never early on the PTP clock's time */
static void sleep_relative(const struct kt_case *c)
{
	struct timespec rq = kt_timespec(SHORT);
	long long start, end;
	int ret;

	(void)c;
	start = kt_now(ptp);
	ret = clock_nanosleep(ptp, 0, &rq, NULL);
	end = kt_now(ptp);
	if (stock_refused_sleep(ret))
		return;
	expect_sleep_error("clock_nanosleep(PTP, 50 ms)", ret, 0);
	kt_expect(end - start >= SHORT, "slept %.3f ms of the PTP clock, expected at least %.0f ms",
		  kt_ms(end - start), kt_ms(SHORT));
	kt_expect(end - start < SHORT + 3 * KT_SEC, "slept %.3f ms, expected about %.0f ms",
		  kt_ms(end - start), kt_ms(SHORT));
}

/* TIMER_ABSTIME: never before the time; a time in the past returns at once */
static void sleep_absolute(const struct kt_case *c)
{
	long long target = kt_now(ptp) + SHORT, end;
	struct timespec rq = kt_timespec(target);
	int ret;

	(void)c;
	ret = clock_nanosleep(ptp, TIMER_ABSTIME, &rq, NULL);
	end = kt_now(ptp);
	if (stock_refused_sleep(ret))
		return;
	expect_sleep_error("clock_nanosleep(PTP, TIMER_ABSTIME)", ret, 0);
	kt_expect(end >= target, "returned %.3f ms before the absolute time, expected never early",
		  kt_ms(target - end));
	rq = kt_timespec(kt_now(ptp) - KT_SEC);
	end = kt_now(CLOCK_MONOTONIC);
	expect_sleep_error("clock_nanosleep(PTP, TIMER_ABSTIME, a second ago)",
			   clock_nanosleep(ptp, TIMER_ABSTIME, &rq, NULL), 0);
	end = kt_now(CLOCK_MONOTONIC) - end;
	kt_expect(end < 3 * KT_SEC, "a sleep until a second ago took %.3f ms, expected to return at once",
		  kt_ms(end));
}

static void on_alarm(int sig, siginfo_t *info, void *uc)
{
	(void)sig;
	(void)info;
	(void)uc;
}

struct stopped_sleep {
	volatile int ready, done;
	int ret;
	long long slept;
	struct timespec rem;
};

/*
 * A signal with a handler cuts a relative sleep: EINTR (SA_RESTART or not,
 * as for every nanosleep) and the time left; SIGSTOP and SIGCONT do not: the
 * sleep restarts by itself (the restart block) and lasts to the same end.
 */
static void sleep_signal(const struct kt_case *c)
{
	struct timespec rq = kt_timespec(10 * KT_SEC);
	struct stopped_sleep *st = kt_shared(sizeof(*st));
	struct stopped_sleep *cut = kt_shared(sizeof(*cut));
	long long asleep, signalled, start;
	pid_t pid;

	(void)c;
	/*
	 * The device time between the sleeper seen asleep and the signal is
	 * a lower bound of what it slept whatever the emulator stalls: the
	 * time left may not exceed the rest. (Reads around the call in the
	 * sleeper itself would count a stall before the call as sleep: 26 ms
	 * over a 20 ms slack on a loaded host, 2026-12-06.)
	 */
	pid = fork();
	if (pid == 0) {
		kt_handle(SIGALRM, on_alarm, SA_RESTART);
		cut->ready = 1;
		cut->ret = clock_nanosleep(ptp, 0, &rq, &cut->rem);
		cut->done = 1;
		_exit(0);
	}
	if (!kt_wait_asleep(pid, pid, &cut->ready, &cut->done) && !cut->done)
		kt_fail("the sleeper did not fall asleep within 10 s");
	asleep = kt_now(ptp);
	kt_sleep_ms(100);
	signalled = kt_now(ptp);
	kill(pid, SIGALRM);
	waitpid(pid, NULL, 0);
	if (stock_refused_sleep(cut->ret))
		return;
	expect_sleep_error("clock_nanosleep(PTP, 10 s) cut by SIGALRM", cut->ret, EINTR);
	kt_expect(kt_ns(&cut->rem) > 0 && kt_ns(&cut->rem) <= 10 * KT_SEC - (signalled - asleep),
		  "time left %.3f ms, %.3f ms of device time after it was seen asleep, expected at most the rest",
		  kt_ms(kt_ns(&cut->rem)), kt_ms(signalled - asleep));

	pid = fork();
	if (pid == 0) {
		rq = kt_timespec(300 * KT_MSEC);
		st->ready = 1;
		start = kt_now(ptp);
		st->ret = clock_nanosleep(ptp, 0, &rq, NULL);
		st->slept = kt_now(ptp) - start;
		st->done = 1;
		_exit(0);
	}
	if (kt_expect(kt_wait_asleep(pid, pid, &st->ready, &st->done), "the sleeper did not fall asleep")) {
		kill(pid, SIGSTOP);
		kt_sleep_ms(50);
		kill(pid, SIGCONT);
	}
	waitpid(pid, NULL, 0);
	expect_sleep_error("clock_nanosleep(PTP, 300 ms) stopped and continued", st->ret, 0);
	kt_expect(st->slept >= 300 * KT_MSEC, "slept %.3f ms across the stop, expected at least 300 ms",
		  kt_ms(st->slept));
}

/* A one-shot POSIX timer, relative then absolute: one signal, never early */
static void timer_one_shot(const struct kt_case *c)
{
	int flags = c->data ? TIMER_ABSTIME : 0, sig = SIGRTMIN;
	struct itimerspec cur;
	long long start, target, end;
	siginfo_t info;
	timer_t id;

	kt_block(sig);
	if (stock_refused("timer_create()", new_timer(ptp, sig, &id), EOPNOTSUPP))
		return;
	if (!kt_expect(!new_timer(ptp, sig, &id), "timer_create(PTP): %s", strerror(errno)))
		return;
	start = kt_now(ptp);
	target = start + SHORT;
	if (!kt_expect(!set_timer(id, flags, flags ? target : SHORT, 0), "timer_settime: %s", strerror(errno)))
		return;
	/* 0 only once its time passed (a vCPU the host stalled) */
	kt_expect(!timer_gettime(id, &cur) && kt_ns(&cur.it_value) <= SHORT + KT_CLOCK_SLACK &&
		  (kt_ns(&cur.it_value) > 0 || kt_now(ptp) >= target),
		  "timer_gettime of the pending timer: %.3f ms, expected (0, 50] ms", kt_ms(kt_ns(&cur.it_value)));
	if (!kt_expect(kt_wait_signal(sig, WAIT_MS, &info), "no signal within %d ms", WAIT_MS))
		return;
	end = kt_now(ptp);
	kt_expect(end >= target, "signal %.3f ms before the expiry on the PTP clock, expected never early",
		  kt_ms(target - end));
	kt_expect(info.si_code == SI_TIMER, "si_code %d, expected SI_TIMER", info.si_code);
	kt_expect(timer_getoverrun(id) == 0, "timer_getoverrun: %d, expected 0", timer_getoverrun(id));
	kt_expect(!timer_gettime(id, &cur) && !kt_ns(&cur.it_value),
		  "timer_gettime after the expiry: %.3f ms, expected 0 (disarmed)", kt_ms(kt_ns(&cur.it_value)));
	kt_expect(!timer_delete(id), "timer_delete: %s", strerror(errno));
	expect_errno("timer_gettime of the deleted timer", timer_gettime(id, &cur), EINVAL);
}

/* A periodic POSIX timer whose signal is blocked: the overruns are counted */
static void timer_periodic(const struct kt_case *c)
{
	int sig = SIGRTMIN + 1, overrun;
	struct itimerspec cur;
	timer_t id;

	(void)c;
	kt_block(sig);
	if (stock_refused("timer_create()", new_timer(ptp, sig, &id), EOPNOTSUPP))
		return;
	if (!kt_expect(!new_timer(ptp, sig, &id), "timer_create(PTP): %s", strerror(errno)))
		return;
	if (!kt_expect(!set_timer(id, 0, 20 * KT_MSEC, 20 * KT_MSEC), "timer_settime: %s", strerror(errno)))
		return;
	kt_sleep_ms(300);
	if (!kt_expect(kt_wait_signal(sig, WAIT_MS, NULL), "no signal within %d ms", WAIT_MS))
		return;
	overrun = timer_getoverrun(id);
	/* 300 ms of a clock that runs with CLOCK_MONOTONIC: 15 periods, give or take */
	kt_expect(overrun >= 5, "timer_getoverrun after 300 ms of 20 ms periods: %d, expected at least 5", overrun);
	kt_expect(!timer_gettime(id, &cur) && kt_ns(&cur.it_interval) == 20 * KT_MSEC &&
		  kt_ns(&cur.it_value) > 0 && kt_ns(&cur.it_value) <= 20 * KT_MSEC + KT_CLOCK_SLACK,
		  "timer_gettime: value %.3f ms interval %.3f ms, expected (0, 20] and 20",
		  kt_ms(kt_ns(&cur.it_value)), kt_ms(kt_ns(&cur.it_interval)));
	kt_expect(!timer_delete(id), "timer_delete: %s", strerror(errno));
}

/* timerfd: a one-shot read blocks until the expiry; periodic counts add up */
static void timerfd_cases(const struct kt_case *c)
{
	int fd = timerfd_create(ptp, 0);
	long long start, target, ticks, end, value, interval;

	(void)c;
	if (stock_refused("timerfd_create()", fd, EINVAL))
		return;
	if (!kt_expect(fd >= 0, "timerfd_create(PTP): %s", strerror(errno)))
		return;
	start = kt_now(ptp);
	target = start + SHORT;
	kt_expect(!set_tfd(fd, TFD_TIMER_ABSTIME, target, 0), "timerfd_settime(ABSTIME): %s", strerror(errno));
	ticks = tfd_read(fd);
	end = kt_now(ptp);
	kt_expect(ticks == 1, "read: %lld, expected the count 1", ticks);
	kt_expect(end >= target, "read returned %.3f ms before the expiry, expected never early",
		  kt_ms(target - end));

	kt_expect(!set_tfd(fd, 0, 20 * KT_MSEC, 20 * KT_MSEC), "timerfd_settime(periodic): %s", strerror(errno));
	kt_sleep_ms(300);
	ticks = tfd_read(fd);
	kt_expect(ticks >= 5, "read after 300 ms of 20 ms periods: %lld, expected at least 5", ticks);
	kt_tfd_gettime(fd, &value, &interval);
	kt_expect(interval == 20 * KT_MSEC && value > 0 && value <= 20 * KT_MSEC + KT_CLOCK_SLACK,
		  "timerfd_gettime: value %.3f ms interval %.3f ms, expected (0, 20] ms and 20 ms",
		  kt_ms(value), kt_ms(interval));
	close(fd);
}

struct sleeper {
	int flags;
	long long value;
	int ret;
};

static void *sleeper_fn(void *arg)
{
	struct sleeper *s = arg;
	struct timespec rq = kt_timespec(s->value);

	s->ret = clock_nanosleep(ptp, s->flags, &rq, NULL);
	return NULL;
}

/* Wait up to WAIT_MS for a thread; 1 if it ended */
static int join_within(pthread_t th)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WAIT_MS / 1000;
	return !pthread_timedjoin_np(th, NULL, &until);
}

/*
 * Stepping the clock forward makes what waits for an hour from now due at
 * once: an absolute timerfd, a relative POSIX timer (a PTP clock has no
 * monotonic twin: relative timers follow its steps) and a sleeper; a step
 * back delays a timer that was due. ADJ_SETOFFSET steps as clock_settime().
 */
static void steps(const struct kt_case *c)
{
	int sig = SIGRTMIN + 2, fd, events;
	struct sleeper s = { .flags = 0, .value = HOUR };
	struct timex tx = { .modes = ADJ_SETOFFSET | ADJ_NANO };
	struct itimerspec cur;
	pthread_t th;
	timer_t id;

	(void)c;
	kt_block(sig);
	if (stock_refused("timer_create()", new_timer(ptp, sig, &id), EOPNOTSUPP))
		return;
	fd = timerfd_create(ptp, TFD_NONBLOCK);
	if (!kt_expect(fd >= 0 && !new_timer(ptp, sig, &id), "timerfd_create/timer_create(PTP): %s",
		       strerror(errno)))
		return;
	kt_expect(!set_tfd(fd, TFD_TIMER_ABSTIME, kt_now(ptp) + HOUR, 0), "timerfd_settime: %s", strerror(errno));
	kt_expect(!set_timer(id, 0, HOUR, 0), "timer_settime: %s", strerror(errno));
	pthread_create(&th, NULL, sleeper_fn, &s);
	kt_sleep_ms(100);
	if (!step_clock(HOUR + KT_SEC))
		return;
	/* the clock's timers follow at once, not at the next resync (once a second) */
	kt_expect(!timerfd_gettime(fd, &cur) && kt_ns(&cur.it_value) < HOUR / 2,
		  "timerfd_gettime right after the step forward: %.3f s, expected the expiry passed",
		  kt_ns(&cur.it_value) / 1e9);
	kt_expect(poll_events(fd, WAIT_MS) & POLLIN, "timerfd not readable within %d ms of the step", WAIT_MS);
	kt_expect(tfd_read(fd) == 1, "timerfd read after the step: expected the count 1");
	kt_expect(kt_wait_signal(sig, WAIT_MS, NULL), "no timer signal within %d ms of the step", WAIT_MS);
	if (kt_expect(join_within(th), "the sleeper still sleeps %d ms after the step", WAIT_MS))
		expect_sleep_error("the sleeper's clock_nanosleep", s.ret, 0);

	/* back by an hour: a timer due in 100 ms is due in an hour */
	kt_expect(!set_tfd(fd, 0, 100 * KT_MSEC, 0), "timerfd_settime: %s", strerror(errno));
	tx.time.tv_sec = -3600;
	kt_expect(clock_adjtime(ptp, &tx) >= 0, "clock_adjtime(ADJ_SETOFFSET -1 h): %s", strerror(errno));
	kt_expect(!timerfd_gettime(fd, &cur) && kt_ns(&cur.it_value) > HOUR - 10 * KT_SEC,
		  "timerfd_gettime right after the step back: %.3f s, expected about an hour",
		  kt_ns(&cur.it_value) / 1e9);
	events = poll_events(fd, 500);
	kt_expect(events == 0, "timerfd readable (%#x) within 500 ms after the step back, expected not for an hour",
		  events);
	kt_expect(!timerfd_gettime(fd, &cur) && kt_ns(&cur.it_value) > HOUR - 10 * KT_SEC,
		  "timerfd_gettime after the step back: %.3f s, expected about an hour", kt_ns(&cur.it_value) / 1e9);
	tx.time.tv_sec = 3600;
	kt_expect(clock_adjtime(ptp, &tx) >= 0, "clock_adjtime(ADJ_SETOFFSET +1 h): %s", strerror(errno));
	kt_expect(poll_events(fd, WAIT_MS) & POLLIN, "timerfd not readable within %d ms of the step forward",
		  WAIT_MS);
	close(fd);
	timer_delete(id);
}

/* A timerfd of 200 ms at the rate set: the count 1, never early on the clock's time */
static void timerfd_at_rate(int fd, const char *rate)
{
	long long start, end, ticks;

	/* read before arming: time taken after it would make a stalled caller see the timer early */
	start = kt_now(ptp);
	if (!kt_expect(!set_tfd(fd, 0, 200 * KT_MSEC, 0), "timerfd_settime at %s: %s", rate, strerror(errno)))
		return;
	ticks = tfd_read(fd);
	end = kt_now(ptp);
	kt_expect(ticks == 1 && end - start >= 200 * KT_MSEC,
		  "timerfd at %s: count %lld after %.3f ms of the PTP clock, expected 1 after at least 200 ms", rate,
		  ticks, kt_ms(end - start));
}

/*
 * The rate adjusted by 2% either way while timers are pending: timerfds
 * (which trust the map) and sleeps are still never early on the clock.
 */
static void rate(const struct kt_case *c)
{
	struct timespec rq = kt_timespec(200 * KT_MSEC);
	long long start, end;
	int fd, ret;

	(void)c;
	fd = timerfd_create(ptp, 0);
	if (stock_refused("timerfd_create()", fd, EINVAL))
		return;
	if (!kt_expect(fd >= 0, "timerfd_create(PTP): %s", strerror(errno)) || !set_freq(FREQ_2PC))
		return;
	timerfd_at_rate(fd, "+2%");
	set_freq(-FREQ_2PC);
	timerfd_at_rate(fd, "-2%");
	start = kt_now(ptp);
	ret = clock_nanosleep(ptp, 0, &rq, NULL);
	end = kt_now(ptp);
	expect_sleep_error("clock_nanosleep at -2%", ret, 0);
	kt_expect(end - start >= 200 * KT_MSEC, "slept %.3f ms of the PTP clock at -2%%, expected at least 200 ms",
		  kt_ms(end - start));
	set_freq(0);
	close(fd);
}

/* Bad input: the stock error codes, and a pending timer unharmed */
static void bad_input(const struct kt_case *c)
{
	struct timespec neg = { 0, -1 }, one = { 0, 1000 };
	struct itimerspec bad = { .it_value = { 0, -1 } };
	int closed = dup(0), null_fd = open("/dev/null", O_RDONLY), fd;
	clockid_t gone, notptp = FD_TO_CLOCKID(null_fd);
	timer_t id;

	(void)c;
	close(closed);
	gone = FD_TO_CLOCKID(closed);
	/* stock refuses before it looks at the clock or the time */
	if (!on) {
		expect_sleep_error("clock_nanosleep(a closed fd's clock)", clock_nanosleep(gone, 0, &one, NULL),
				   EOPNOTSUPP);
		expect_sleep_error("clock_nanosleep(PTP, tv_nsec -1)", clock_nanosleep(ptp, 0, &neg, NULL),
				   EOPNOTSUPP);
		expect_errno("timer_create(/dev/null's clock)", new_timer(notptp, SIGRTMIN, &id), EOPNOTSUPP);
		expect_errno("timerfd_create(PTP)", timerfd_create(ptp, 0), EINVAL);
		kt_skip("feature: stock 6.12 refuses every timer on a PTP clock, bad or not");
		close(null_fd);
		return;
	}
	fd = timerfd_create(ptp, TFD_NONBLOCK);
	kt_expect(fd >= 0 && !set_tfd(fd, 0, SHORT, 0), "timerfd on PTP: %s", strerror(errno));
	expect_sleep_error("clock_nanosleep(a closed fd's clock)", clock_nanosleep(gone, 0, &one, NULL), EINVAL);
	expect_sleep_error("clock_nanosleep(/dev/null's clock)", clock_nanosleep(notptp, 0, &one, NULL), EINVAL);
	expect_sleep_error("clock_nanosleep(PTP, tv_nsec -1)", clock_nanosleep(ptp, 0, &neg, NULL), EINVAL);
	expect_errno("timer_create(a closed fd's clock)", new_timer(gone, SIGRTMIN, &id), EINVAL);
	expect_errno("timer_create(/dev/null's clock)", new_timer(notptp, SIGRTMIN, &id), EINVAL);
	expect_errno("timerfd_create(a closed fd's clock)", timerfd_create(gone, 0), EINVAL);
	expect_errno("timerfd_create(/dev/null's clock)", timerfd_create(notptp, 0), EINVAL);
	expect_errno("timerfd_settime(PTP, tv_nsec -1)", timerfd_settime(fd, 0, &bad, NULL), EINVAL);
	if (kt_expect(!new_timer(ptp, SIGRTMIN, &id), "timer_create(PTP): %s", strerror(errno))) {
		struct itimerspec cur;

		expect_errno("timer_settime(PTP, tv_nsec -1)", timer_settime(id, 0, &bad, NULL), EINVAL);
		/* the largest relative time: pending, never due */
		kt_expect(!set_timer(id, 0, 0x7fffffffLL * KT_SEC, 0), "timer_settime(2^31 s): %s", strerror(errno));
		kt_expect(!timer_gettime(id, &cur) && cur.it_value.tv_sec > 0x7fff0000,
			  "timer_gettime of a 2^31 s timer: %lld s", (long long)cur.it_value.tv_sec);
		timer_delete(id);
	}
	/* the pending timerfd lost nothing */
	kt_expect(poll_events(fd, WAIT_MS) & POLLIN, "the pending timerfd did not fire after the bad calls");
	kt_expect(tfd_read(fd) == 1, "its count: expected 1");
	close(fd);
	close(null_fd);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return 0;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok;
}

/* Is the ktimer clock of the device still listed in /sys/kernel/debug/ktimers? */
static int ptp_clock_listed(void)
{
	char line[512];
	FILE *f = fopen("/sys/kernel/debug/ktimers", "r");
	int found = 0;

	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, " clock ptp") != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * The device goes away with a sleeper, a POSIX timer and a timerfd pending:
 * the sleeper returns ENODEV, the timer sends no signal and settime answers
 * ENODEV, the timerfd polls POLLERR and reads ENODEV; deleting them works,
 * and then the device's ktimer clock is gone too. The last case: it
 * removes the clock.
 */
static void removed(const struct kt_case *c)
{
	struct sleeper s = { .flags = 0, .value = HOUR };
	int sig = SIGRTMIN + 3, fd = -1, events, i;
	struct timespec ts, one = { 0, 1000 };
	struct itimerspec cur;
	pthread_t th = 0;
	timer_t id = 0;

	(void)c;
	kt_block(sig);
	if (on) {
		fd = timerfd_create(ptp, 0);
		if (!kt_expect(fd >= 0 && !new_timer(ptp, sig, &id), "timerfd_create/timer_create(PTP): %s",
			       strerror(errno)))
			return;
		kt_expect(!set_tfd(fd, 0, HOUR, 0) && !set_timer(id, 0, HOUR, HOUR), "settime: %s",
			  strerror(errno));
		pthread_create(&th, NULL, sleeper_fn, &s);
		kt_sleep_ms(100);
	}
	if (!kt_expect(write_file(NSIM_DEL, NSIM_ID), "removing the netdevsim device: %s", strerror(errno)))
		return;
	expect_errno("clock_gettime(the removed PTP clock)", clock_gettime(ptp, &ts), ENODEV);
	if (stock_refused("timer_create()", new_timer(ptp, sig, &id), EOPNOTSUPP))
		return;

	if (kt_expect(join_within(th), "the sleeper still sleeps %d ms after the removal", WAIT_MS))
		expect_sleep_error("the sleeper's clock_nanosleep", s.ret, ENODEV);
	events = poll_events(fd, WAIT_MS);
	kt_expect(events & POLLERR, "poll of the timerfd: %#x, expected POLLERR", events);
	kt_expect(tfd_read(fd) == -ENODEV, "read of the timerfd: expected ENODEV");
	expect_errno("timerfd_settime", set_tfd(fd, 0, SHORT, 0), ENODEV);
	expect_errno("timerfd_gettime", timerfd_gettime(fd, &cur), ENODEV);
	kt_expect(!kt_wait_signal(sig, 500, NULL), "the timer of the removed clock sent its signal");
	expect_errno("timer_settime", set_timer(id, 0, SHORT, 0), ENODEV);
	kt_expect(!timer_gettime(id, &cur) && !kt_ns(&cur.it_value) && !kt_ns(&cur.it_interval),
		  "timer_gettime of the removed clock's timer: expected disarmed");
	kt_expect(!timer_delete(id), "timer_delete: %s", strerror(errno));
	expect_sleep_error("clock_nanosleep(the removed clock)", clock_nanosleep(ptp, 0, &one, NULL), ENODEV);
	expect_errno("timer_create(the removed clock)", new_timer(ptp, sig, &id), ENODEV);
	expect_errno("timerfd_create(the removed clock)", timerfd_create(ptp, 0), ENODEV);
	close(fd);
	/* the clock is freed from a work item after its last user */
	for (i = 0; i < 50 && ptp_clock_listed(); i++)
		kt_sleep_ms(100);
	kt_expect(!ptp_clock_listed(), "the removed device's ktimer clock is still listed in "
		  "/sys/kernel/debug/ktimers after its last timer was deleted");
}

static const struct kt_case cases[] = {
	{ "clock_nanosleep relative on a PTP clock: never early", sleep_relative, NULL },
	{ "clock_nanosleep TIMER_ABSTIME: never before the time; in the past: at once", sleep_absolute, NULL },
	{ "clock_nanosleep cut by a signal: EINTR and the time left; stopped: restarts to the same end",
	  sleep_signal, NULL },
	{ "timer_create and a relative one-shot timer: one signal, never early, then disarmed",
	  timer_one_shot, NULL },
	{ "an absolute one-shot timer: one signal, never early", timer_one_shot, "abs" },
	{ "a periodic timer with its signal blocked: overruns counted, gettime in the period",
	  timer_periodic, NULL },
	{ "timerfd: absolute one-shot never early, periodic counts, gettime", timerfd_cases, NULL },
	{ "steps: forward makes an hour-away timerfd, timer and sleep due; back delays", steps, NULL },
	{ "rate adjusted by 2% either way: timerfd and sleep never early", rate, NULL },
	{ "bad input: EINVAL for closed and non-PTP fds and bad times; nothing lost", bad_input, NULL },
	{ "the device removed with timers pending: ENODEV, no signal, deletes work", removed, NULL },
};

/* Create the netdevsim port whose ptp_mock clock is /dev/ptp0; 1 once it is there */
static int make_ptp_device(void)
{
	int i;

	if (access(PTP_DEV, F_OK) && !write_file(NSIM_NEW, NSIM_ID " 1"))
		return 0;
	for (i = 0; i < 50 && access(PTP_DEV, F_OK); i++)
		kt_sleep_ms(100);
	return !access(PTP_DEV, F_OK);
}

int main(void)
{
	struct timespec now;
	FILE *users;
	int fd;

	if (!kt_in_guest()) {
		printf("TAP version 13\n1..0 # SKIP creates, steps and removes a PTP clock: runs only in the ktimers "
		       "guest (KTIMERS_GUEST=1, started by its /init)\n");
		return 4;
	}
	if (!make_ptp_device()) {
		printf("TAP version 13\n1..0 # SKIP no %s: this kernel has no netdevsim with ptp_mock "
		       "(CONFIG_NETDEVSIM, CONFIG_PTP_1588_CLOCK_MOCK)\n", PTP_DEV);
		return 4;
	}
	fd = open(PTP_DEV, O_RDWR);
	if (fd < 0) {
		printf("TAP version 13\n1..0 # SKIP cannot open %s: %s\n", PTP_DEV, strerror(errno));
		return 4;
	}
	ptp = FD_TO_CLOCKID(fd);
	/* a PTP clock keeps TAI, about the wall clock's time, not the mock's count from 0 */
	clock_gettime(CLOCK_REALTIME, &now);
	if (clock_settime(ptp, &now)) {
		printf("TAP version 13\n1..0 # SKIP cannot set %s: %s\n", PTP_DEV, strerror(errno));
		return 4;
	}
	users = fopen(USERS_PARAM, "r");
	on = users && fgetc(users) == 'Y';
	if (users)
		fclose(users);
	return kt_run(cases, KT_ARRAY_SIZE(cases), 0, 60);
}
