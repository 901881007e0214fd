// SPDX-License-Identifier: GPL-2.0
/*
 * kt_timerfd - timerfd as event loops use it, on the clocks ktimers serve
 * (CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME): one-shot and periodic
 * timers, relative and TFD_TIMER_ABSTIME, the expiry count read as a u64,
 * TFD_NONBLOCK, poll and epoll readiness, TFD_IOC_SET_TICKS,
 * timerfd_gettime() of disarmed, pending, expired and periodic timers,
 * two threads reading one timerfd, closing timerfds with timers pending,
 * and bad input with the stock error codes. Both columns must agree.
 * What a clock step does to timerfds (TFD_TIMER_CANCEL_ON_SET) is in
 * kt_clock_step.
 */
#include "ktap.h"

#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>

#ifndef TFD_IOC_SET_TICKS
#define TFD_IOC_SET_TICKS _IOW('T', 0, uint64_t)
#endif

#define SHORT		(50 * KT_MSEC)
#define LONG		(10 * KT_SEC)
#define PERIOD		(20 * KT_MSEC)
#define WAIT_MS		5000

struct tfd_case {
	clockid_t clock;
	int flags;		/* of timerfd_settime() */
};

static int tfd_create(clockid_t clock, int flags)
{
	int fd = timerfd_create(clock, flags);

	if (fd < 0)
		kt_fail("timerfd_create(%s, %#x): %s, expected a descriptor", kt_clock_name(clock), flags,
			strerror(errno));
	return fd;
}

static int tfd_set(int fd, int flags, long long value, long long interval, struct itimerspec *old)
{
	struct itimerspec its = { .it_interval = kt_timespec(interval), .it_value = kt_timespec(value) };

	if (timerfd_settime(fd, flags, &its, old)) {
		kt_fail("timerfd_settime(flags %#x, value %.3f ms, interval %.3f ms): %s, expected success",
			flags, kt_ms(value), kt_ms(interval), strerror(errno));
		return 0;
	}
	return 1;
}

static void tfd_get(int fd, long long *value, long long *interval)
{
	struct itimerspec its;

	if (timerfd_gettime(fd, &its)) {
		kt_fail("timerfd_gettime: %s, expected success", strerror(errno));
		memset(&its, 0, sizeof(its));
	}
	*value = kt_ns(&its.it_value);
	*interval = kt_ns(&its.it_interval);
}

/* read(2) of the count: the count, or -errno */
static long long tfd_read(int fd)
{
	uint64_t ticks = 0;
	ssize_t n = read(fd, &ticks, sizeof(ticks));

	if (n < 0)
		return -errno;
	return n == sizeof(ticks) ? (long long)ticks : -EIO;
}

/* Readable within ms? 1, 0, or -errno of poll() */
static int tfd_poll(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, ms);

	return n < 0 ? -errno : n == 1 && (p.revents & POLLIN);
}

/* The clock the expiry of a timer armed with flags counts on */
static clockid_t timer_clock(const struct tfd_case *t)
{
	return t->clock == CLOCK_REALTIME && !(t->flags & TFD_TIMER_ABSTIME) ? CLOCK_MONOTONIC : t->clock;
}

/* One-shot: blocks until its time, never early; the count is 1; then EAGAIN */
static void one_shot(const struct kt_case *c)
{
	const struct tfd_case *t = c->data;
	int abs = t->flags & TFD_TIMER_ABSTIME;
	clockid_t clock = timer_clock(t);
	int fd = tfd_create(t->clock, 0);
	long long start, target, ticks, end, value, interval;

	if (fd < 0)
		return;
	start = kt_now(clock);
	target = start + SHORT;
	if (!tfd_set(fd, t->flags, abs ? target : SHORT, 0, NULL))
		return;
	ticks = tfd_read(fd);
	end = kt_now(clock);
	kt_expect(ticks == 1, "read: %lld, expected the count 1", ticks);
	kt_expect(end >= target, "read returned %.3f ms before the expiry, expected never early",
		  kt_ms(target - end));
	kt_expect(end - start < SHORT + 3 * KT_SEC, "read returned after %.3f ms, expected about %.0f ms",
		  kt_ms(end - start), kt_ms(SHORT));
	fcntl(fd, F_SETFL, O_NONBLOCK);
	ticks = tfd_read(fd);
	kt_expect(ticks == -EAGAIN, "second read: %lld, expected -EAGAIN (%d)", ticks, -EAGAIN);
	tfd_get(fd, &value, &interval);
	kt_expect_disarmed("timerfd_gettime", "after the expiry", value, interval, 0, 0);
	if (abs && tfd_set(fd, t->flags, 1, 0, NULL)) {
		/* an absolute time in the past expires at once */
		kt_expect(tfd_poll(fd, WAIT_MS) == 1, "TFD_TIMER_ABSTIME at 1 ns: not readable within %d ms, "
			  "expected at once", WAIT_MS);
		ticks = tfd_read(fd);
		kt_expect(ticks == 1, "TFD_TIMER_ABSTIME at 1 ns: read %lld, expected 1", ticks);
	}
	close(fd);
}

/*
 * Periodic: a read counts every period that passed since the first expiry,
 * floor((now - first) / period) + 1 for a now between the clock reads
 * around it, and re-arms; gettime shows the period and 0 < value <= period.
 */
static void periodic(const struct kt_case *c)
{
	const struct tfd_case *t = c->data;
	clockid_t clock = timer_clock(t);
	int fd = tfd_create(t->clock, 0);
	long long a0, a1, r0, r1, ticks, lo, hi, value, interval;

	if (fd < 0)
		return;
	a0 = kt_now(clock);
	if (!tfd_set(fd, t->flags, PERIOD, PERIOD, NULL))
		return;
	a1 = kt_now(clock);
	kt_sleep_ms(10 * PERIOD / KT_MSEC);
	r0 = kt_now(clock);
	ticks = tfd_read(fd);
	r1 = kt_now(clock);
	lo = (r0 - (a1 + PERIOD)) / PERIOD + 1;
	hi = (r1 - (a0 + PERIOD)) / PERIOD + 1;
	kt_expect(ticks >= lo && ticks <= hi, "read after %.3f ms: count %lld, expected %lld to %lld",
		  kt_ms(r0 - a0), ticks, lo, hi);
	kt_tfd_gettime(fd, &value, &interval);
	kt_expect(interval == PERIOD && value > 0 && value <= PERIOD,
		  "timerfd_gettime: value %.3f ms interval %.3f ms, expected 0 < value <= %.0f ms and that interval",
		  kt_ms(value), kt_ms(interval), kt_ms(PERIOD));
	ticks = tfd_read(fd);
	kt_expect(ticks >= 1, "read after the re-arm: %lld, expected at least 1", ticks);
	close(fd);
}

/* TFD_NONBLOCK: EAGAIN while pending, the count once due */
static void nonblock(const struct kt_case *c)
{
	int fd = tfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	long long ticks, armed, took;

	(void)c;
	if (fd < 0)
		return;
	armed = kt_now(CLOCK_MONOTONIC);
	if (!tfd_set(fd, 0, SHORT, 0, NULL))
		return;
	ticks = tfd_read(fd);
	took = kt_now(CLOCK_MONOTONIC) - armed;
	if (ticks == 1 && took >= SHORT) {
		/* due before the first read (a stalled vCPU): that read took the count */
		kt_skip("first read %.3f ms after arming a %.0f ms timer", kt_ms(took), kt_ms(SHORT));
		close(fd);
		return;
	}
	kt_expect(ticks == -EAGAIN, "read of a pending timer %.3f ms after arming: %lld, expected -EAGAIN (%d)",
		  kt_ms(took), ticks, -EAGAIN);
	kt_expect(tfd_poll(fd, WAIT_MS) == 1, "poll: not readable within %d ms of a %.0f ms timer", WAIT_MS,
		  kt_ms(SHORT));
	ticks = tfd_read(fd);
	kt_expect(ticks == 1, "read once readable: %lld, expected 1", ticks);
	close(fd);
}

/* poll and epoll: not readable while pending, readable at the expiry, not after the read */
static void readiness(const struct kt_case *c)
{
	int fd = tfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK), ep = epoll_create1(0), n;
	struct epoll_event ev = { .events = EPOLLIN }, got;
	long long armed, end;

	(void)c;
	if (fd < 0)
		return;
	if (!kt_expect(ep >= 0 && !epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), "epoll: %s", strerror(errno)))
		return;
	armed = kt_now(CLOCK_MONOTONIC);
	if (!tfd_set(fd, 0, 300 * KT_MSEC, 0, NULL))
		return;
	/* not readable before the expiry: a vCPU the host stalls 300 ms may see it readable */
	n = tfd_poll(fd, 0);
	end = kt_now(CLOCK_MONOTONIC);
	kt_expect(n == 0 || end - armed >= 300 * KT_MSEC,
		  "poll: readable %.3f ms after arming a 300 ms timer, expected not before the expiry",
		  kt_ms(end - armed));
	n = epoll_wait(ep, &got, 1, 0);
	end = kt_now(CLOCK_MONOTONIC);
	kt_expect(n == 0 || end - armed >= 300 * KT_MSEC,
		  "epoll_wait: %d events %.3f ms after arming a 300 ms timer, expected 0 before the expiry",
		  n, kt_ms(end - armed));
	n = epoll_wait(ep, &got, 1, WAIT_MS);
	end = kt_now(CLOCK_MONOTONIC);
	kt_expect(n == 1 && (got.events & EPOLLIN), "epoll_wait: %d events within %d ms, expected EPOLLIN",
		  n, WAIT_MS);
	kt_expect(end - armed >= 300 * KT_MSEC || n != 1,
		  "epoll_wait: EPOLLIN %.3f ms after arming a 300 ms timer, expected never early", kt_ms(end - armed));
	kt_expect(tfd_poll(fd, 0) == 1, "poll: not readable after the expiry");
	kt_expect(tfd_read(fd) == 1, "read: expected the count 1");
	kt_expect(tfd_poll(fd, 0) == 0, "poll: readable after the read, expected not");
	n = epoll_wait(ep, &got, 1, 0);
	kt_expect(n == 0, "epoll_wait: %d events after the read, expected 0", n);
	close(ep);
	close(fd);
}

/* TFD_IOC_SET_TICKS (checkpoint/restore): the count read is the one set */
static void set_ticks(const struct kt_case *c)
{
	int fd = tfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	uint64_t ticks = 42, zero = 0;
	long long got;

	(void)c;
	if (fd < 0 || !tfd_set(fd, 0, LONG, 0, NULL))
		return;
	if (!kt_expect(!ioctl(fd, TFD_IOC_SET_TICKS, &ticks),
		       "ioctl(TFD_IOC_SET_TICKS, 42): %s, expected success (CONFIG_CHECKPOINT_RESTORE)",
		       strerror(errno)))
		return;
	kt_expect(tfd_poll(fd, 0) == 1, "poll: not readable after TFD_IOC_SET_TICKS");
	got = tfd_read(fd);
	kt_expect(got == 42, "read: %lld, expected the 42 set", got);
	kt_expect(ioctl(fd, TFD_IOC_SET_TICKS, &zero) == -1 && errno == EINVAL,
		  "ioctl(TFD_IOC_SET_TICKS, 0): %s, expected EINVAL", strerror(errno));
	kt_expect(ioctl(fd, TFD_IOC_SET_TICKS, NULL) == -1 && errno == EFAULT,
		  "ioctl(TFD_IOC_SET_TICKS, NULL): %s, expected EFAULT", strerror(errno));
	kt_expect(ioctl(fd, _IOW('T', 9, uint64_t), &ticks) == -1 && errno == ENOTTY,
		  "an unknown ioctl: %s, expected ENOTTY", strerror(errno));
	close(fd);
}

/* gettime: disarmed 0/0; pending 0 < value <= set; settime returns the old value */
static void gettime(const struct kt_case *c)
{
	const struct tfd_case *t = c->data;
	int fd = tfd_create(t->clock, TFD_NONBLOCK);
	long long value, interval;
	struct itimerspec old;

	if (fd < 0)
		return;
	tfd_get(fd, &value, &interval);
	kt_expect_disarmed("timerfd_gettime", "new timerfd", value, interval, 0, 0);
	if (!tfd_set(fd, 0, LONG, 2 * LONG, &old))
		return;
	kt_expect_disarmed("timerfd_settime's old value", "new timerfd", kt_ns(&old.it_value),
			   kt_ns(&old.it_interval), 0, 0);
	tfd_get(fd, &value, &interval);
	kt_expect(value > 0 && value <= LONG && value > LONG - 3 * KT_SEC && interval == 2 * LONG,
		  "pending: value %.3f ms interval %.3f ms, expected just under %.0f ms and %.0f ms", kt_ms(value),
		  kt_ms(interval), kt_ms(LONG), kt_ms(2 * LONG));
	if (!tfd_set(fd, 0, 0, 0, &old))
		return;
	kt_expect(kt_ns(&old.it_value) > 0 && kt_ns(&old.it_value) <= LONG && kt_ns(&old.it_interval) == 2 * LONG,
		  "disarming: old value %.3f ms interval %.3f ms, expected under %.0f ms and %.0f ms",
		  kt_ms(kt_ns(&old.it_value)), kt_ms(kt_ns(&old.it_interval)), kt_ms(LONG), kt_ms(2 * LONG));
	tfd_get(fd, &value, &interval);
	kt_expect_disarmed("timerfd_gettime", "disarmed", value, interval, 0, 0);
	/* a period without a value: disarmed, the period shown */
	if (!tfd_set(fd, 0, 0, PERIOD, NULL))
		return;
	kt_sleep_ms(3 * PERIOD / KT_MSEC);
	tfd_get(fd, &value, &interval);
	kt_expect(value == 0 && interval == PERIOD && tfd_read(fd) == -EAGAIN,
		  "interval only: value %.3f ms interval %.3f ms, expected 0, %.0f ms and no expiry",
		  kt_ms(value), kt_ms(interval), kt_ms(PERIOD));
	close(fd);
}

/* An expired periodic timer not read: gettime and settime move it on, read still gets every period */
static void gettime_periodic(const struct kt_case *c)
{
	int fd = tfd_create(CLOCK_MONOTONIC, 0);
	long long value, interval, ticks;
	struct itimerspec old;

	(void)c;
	if (fd < 0 || !tfd_set(fd, 0, PERIOD, PERIOD, NULL))
		return;
	kt_sleep_ms(6 * PERIOD / KT_MSEC);
	kt_tfd_gettime(fd, &value, &interval);
	kt_expect(value > 0 && value <= PERIOD && interval == PERIOD,
		  "gettime of an unread periodic timer: value %.3f ms interval %.3f ms, expected 0 < value <= %.0f ms",
		  kt_ms(value), kt_ms(interval), kt_ms(PERIOD));
	ticks = tfd_read(fd);
	kt_expect(ticks >= 5, "read after 6 periods and a gettime: %lld, expected at least 5", ticks);
	/* settime of an expired, unread periodic timer returns the time to its next period */
	kt_sleep_ms(3 * PERIOD / KT_MSEC);
	if (tfd_set(fd, 0, 0, 0, &old))
		kt_expect(kt_ns(&old.it_value) > 0 && kt_ns(&old.it_value) <= PERIOD &&
			  kt_ns(&old.it_interval) == PERIOD,
			  "settime's old value of an unread periodic timer: %.3f ms interval %.3f ms, "
			  "expected 0 < value <= %.0f ms", kt_ms(kt_ns(&old.it_value)),
			  kt_ms(kt_ns(&old.it_interval)), kt_ms(PERIOD));
	close(fd);
}

/* The largest relative time a struct itimerspec holds: pending, never due */
static void huge(const struct kt_case *c)
{
	const long long tmax = (long long)((1ULL << (8 * sizeof(time_t) - 1)) - 1);
	const long long ktime_sec_max = 9223372036LL;	/* KTIME_MAX in seconds: relative times saturate there */
	int fd = tfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)tmax, .tv_nsec = 999999999 } };
	long long value, interval, expect = (tmax < ktime_sec_max ? tmax : ktime_sec_max) / 2;

	(void)c;
	if (fd < 0)
		return;
	if (!kt_expect(!timerfd_settime(fd, 0, &its, NULL), "timerfd_settime(the largest time_t): %s",
		       strerror(errno)))
		return;
	tfd_get(fd, &value, &interval);
	kt_expect(value / KT_SEC > expect, "gettime: %.0f s left, expected more than %lld s", value / 1e9, expect);
	kt_expect(tfd_poll(fd, 100) == 0 && tfd_read(fd) == -EAGAIN, "the huge timer expired");
	close(fd);
}

struct reader {
	int fd;
	volatile long long ticks;
	volatile int done;
};

static void *blocking_reader(void *arg)
{
	struct reader *r = arg;

	r->ticks = tfd_read(r->fd);
	r->done = 1;
	return NULL;
}

/* Two threads blocked in read(): one expiry wakes one of them with the count, the next the other */
static void two_readers(const struct kt_case *c)
{
	int fd = tfd_create(CLOCK_MONOTONIC, 0), i, done = 0;
	struct reader r[2];
	pthread_t th[2];
	long long deadline;

	(void)c;
	if (fd < 0)
		return;
	for (i = 0; i < 2; i++) {
		r[i] = (struct reader){ .fd = fd };
		pthread_create(&th[i], NULL, blocking_reader, &r[i]);
	}
	kt_sleep_ms(200);
	if (!tfd_set(fd, 0, SHORT, 0, NULL))
		return;
	deadline = kt_now(CLOCK_MONOTONIC) + WAIT_MS * KT_MSEC;
	while (!r[0].done && !r[1].done && kt_now(CLOCK_MONOTONIC) < deadline)
		kt_sleep_ms(5);
	kt_sleep_ms(500);
	done = r[0].done + r[1].done;
	kt_expect(done == 1, "one expiry: %d readers returned, expected exactly 1", done);
	for (i = 0; i < 2; i++)
		if (r[i].done)
			kt_expect(r[i].ticks == 1, "reader %d: %lld, expected the count 1", i, r[i].ticks);
	if (!tfd_set(fd, 0, SHORT, 0, NULL))
		return;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	kt_expect(r[0].ticks == 1 && r[1].ticks == 1, "second expiry: the readers got %lld and %lld, expected 1 each",
		  r[0].ticks, r[1].ticks);
	close(fd);
}

static void *close_pending_loop(void *arg)
{
	long i, *bad = arg;

	for (i = 0; i < 500; i++) {
		int fd = timerfd_create(i & 1 ? CLOCK_REALTIME : CLOCK_MONOTONIC, TFD_NONBLOCK);
		struct itimerspec its = { .it_interval = { 0, 100000 }, .it_value = { 0, (i % 7) * 20000 + 1 } };

		if (fd < 0 || timerfd_settime(fd, 0, &its, NULL)) {
			(*bad)++;
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (i % 3 == 0)
			tfd_read(fd);
		close(fd);
	}
	return NULL;
}

/* Closing timerfds whose timers are pending or firing, from two threads at once */
static void close_pending(const struct kt_case *c)
{
	long bad[2] = { 0, 0 };
	pthread_t th[2];
	int i;

	(void)c;
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, close_pending_loop, &bad[i]);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	kt_expect(!bad[0] && !bad[1], "%ld of 1000 create/settime calls failed, expected none", bad[0] + bad[1]);
}

static void expect_errno(const char *what, int ret, int err)
{
	kt_expect(ret == -1 && errno == err, "%s: returned %d (%s), expected -1 (%s)", what, ret,
		  ret == -1 ? strerrorname_np(errno) : "no error", strerrorname_np(err));
}

/* Bad input: the stock error codes, and nothing lost */
static void bad_input(const struct kt_case *c)
{
	struct itimerspec its = { .it_value = { 1, 0 } }, bad;
	int fd = tfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK), pipefd[2], closed;
	uint64_t ticks;
	long long value, interval;

	(void)c;
	if (fd < 0)
		return;
	expect_errno("timerfd_create(CLOCK_PROCESS_CPUTIME_ID)", timerfd_create(CLOCK_PROCESS_CPUTIME_ID, 0), EINVAL);
	expect_errno("timerfd_create(CLOCK_TAI)", timerfd_create(CLOCK_TAI, 0), EINVAL);
	expect_errno("timerfd_create(-1)", timerfd_create(-1, 0), EINVAL);
	expect_errno("timerfd_create(flags 0x1)", timerfd_create(CLOCK_MONOTONIC, 1), EINVAL);
	expect_errno("timerfd_settime(flags 0x4)", timerfd_settime(fd, 4, &its, NULL), EINVAL);
	bad = its;
	bad.it_value.tv_nsec = -1;
	expect_errno("timerfd_settime(tv_nsec -1)", timerfd_settime(fd, 0, &bad, NULL), EINVAL);
	bad.it_value.tv_nsec = 1000000000;
	expect_errno("timerfd_settime(tv_nsec 1e9)", timerfd_settime(fd, 0, &bad, NULL), EINVAL);
	bad = its;
	bad.it_value.tv_sec = -1;
	expect_errno("timerfd_settime(tv_sec -1)", timerfd_settime(fd, 0, &bad, NULL), EINVAL);
	bad = its;
	bad.it_interval.tv_nsec = -5;
	expect_errno("timerfd_settime(interval tv_nsec -5)", timerfd_settime(fd, 0, &bad, NULL), EINVAL);
	/*
	 * Straight to the kernel: a 32-bit libc with 64-bit time_t converts the
	 * itimerspec itself and faults on NULL before any syscall is made.
	 */
	expect_errno("timerfd_settime(NULL)", (int)syscall(SYS_timerfd_settime, fd, 0, NULL, NULL),
		     EFAULT);
	expect_errno("timerfd_gettime(NULL)", (int)syscall(SYS_timerfd_gettime, fd, NULL), EFAULT);
	expect_errno("read of 4 bytes", (int)read(fd, &ticks, 4), EINVAL);
	/* the refused calls changed nothing */
	tfd_get(fd, &value, &interval);
	kt_expect_disarmed("timerfd_gettime", "after refused settimes", value, interval, 0, 0);
	if (kt_expect(!pipe(pipefd), "pipe: %s", strerror(errno))) {
		expect_errno("timerfd_settime(a pipe)", timerfd_settime(pipefd[0], 0, &its, NULL), EINVAL);
		expect_errno("timerfd_gettime(a pipe)", timerfd_gettime(pipefd[0], &bad), EINVAL);
		close(pipefd[0]);
		close(pipefd[1]);
	}
	closed = dup(fd);
	close(closed);
	expect_errno("timerfd_settime(a closed fd)", timerfd_settime(closed, 0, &its, NULL), EBADF);
	expect_errno("timerfd_gettime(a closed fd)", timerfd_gettime(closed, &bad), EBADF);
	expect_errno("timerfd_gettime(-1)", timerfd_gettime(-1, &bad), EBADF);
	close(fd);
}

#define CLOCKS(name, fn, flags)                                                               \
	{ name " (CLOCK_REALTIME)", fn, &(const struct tfd_case){ CLOCK_REALTIME, flags } },   \
	{ name " (CLOCK_MONOTONIC)", fn, &(const struct tfd_case){ CLOCK_MONOTONIC, flags } }, \
	{ name " (CLOCK_BOOTTIME)", fn, &(const struct tfd_case){ CLOCK_BOOTTIME, flags } }

static const struct kt_case cases[] = {
	CLOCKS("relative one-shot: read blocks until the expiry, count 1, then EAGAIN", one_shot, 0),
	CLOCKS("TFD_TIMER_ABSTIME one-shot: never before the absolute time; in the past: at once", one_shot, TFD_TIMER_ABSTIME),
	CLOCKS("periodic: read returns every period that passed and re-arms", periodic, 0),
	CLOCKS("gettime: disarmed, pending and interval-only; settime returns the old value", gettime, 0),
	{ "gettime and settime of an expired periodic timer move it on; read keeps the count", gettime_periodic, NULL },
	{ "TFD_NONBLOCK: EAGAIN while pending, then the count", nonblock, NULL },
	{ "poll and epoll: readable at the expiry, not before, not after the read", readiness, NULL },
	{ "TFD_IOC_SET_TICKS: read returns the count set; 0 is EINVAL", set_ticks, NULL },
	{ "the largest relative time: pending, never due, gettime shows it", huge, NULL },
	{ "two threads reading one timerfd: one expiry wakes one of them", two_readers, NULL },
	{ "closing timerfds with timers pending or firing, from two threads", close_pending, NULL },
	{ "bad input: EINVAL, EFAULT and EBADF, and the timer unchanged", bad_input, NULL },
};

int main(void)
{
	return kt_run(cases, KT_ARRAY_SIZE(cases), 1, 40);
}
