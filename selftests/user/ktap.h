/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the project's own guest selftests (the C files of selftests/user) share: KTAP
 * output, a runner that gives every case a process of its own, and time and
 * signal helpers. See docs/running.md#the-projects-own-user-space-suite.
 *
 * A program lists its cases and calls kt_run(). Each case runs in a child
 * process (its own ITIMER_REAL, POSIX timers, signal dispositions and
 * process group), all of them at the same time or one after the other. A
 * case says what went wrong with kt_fail() (or why it cannot run with
 * kt_skip(); kt_note() adds a line of information) into shared memory; the
 * parent prints KTAP in case order, the diagnostics first:
 *
 *   TAP version 13
 *   1..3
 *   # nanosleep: returned -1 (Bad address), expected -1 (Interrupted system call)
 *   not ok 1 nanosleep interrupted by a signal: EINTR and the time left
 *   ok 2 ...
 *   ok 3 ... # SKIP why
 *   # Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0
 *
 * Exit status as kselftest's: 0 when nothing failed, 1 on any failure (or a
 * case that crashed or ran out of time), 4 when every case was skipped.
 *
 * Timing rule of every case: QEMU's software emulation stalls vCPUs for tens
 * of milliseconds and more. Lower bounds are exact (a sleep or timer never
 * ends early, measured around the syscall so that the bound is sound);
 * upper bounds only with margins of seconds.
 */
#ifndef KTAP_H
#define KTAP_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KT_USEC		1000LL
#define KT_MSEC		1000000LL
#define KT_SEC		1000000000LL
#define KT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * How much more than was set a remaining time read back may show: when the
 * clocksource watchdog drops the TSC under load (QEMU TCG, i386), the CPUs'
 * clocks disagree for a moment (2.4 ms measured on the stock path).
 */
#define KT_CLOCK_SLACK	(20 * KT_MSEC)
#define KT_DIAG_SIZE	2048

enum { KT_NONE, KT_PASS, KT_FAIL, KT_SKIP };

struct kt_result {
	volatile int status;		/* KT_NONE until the case says otherwise */
	int len;
	char diag[KT_DIAG_SIZE];	/* '\n'-separated lines, printed as "# <line>" */
	char why[256];			/* the reason of a skip */
};

struct kt_case {
	const char *name;		/* the KTAP name: stable, no '#', no measured values */
	void (*run)(const struct kt_case *c);
	const void *data;		/* whatever run() needs */
};

/* The result of the case running in this process (set in each case's child). */
static struct kt_result *kt_current;

static inline void kt_vnote(int status, const char *fmt, va_list ap)
{
	struct kt_result *r = kt_current;
	int n;

	if (!r)
		return;
	if (status == KT_FAIL || r->status == KT_NONE)
		r->status = status;
	if (status == KT_SKIP) {
		if (!r->why[0])
			vsnprintf(r->why, sizeof(r->why), fmt, ap);
		return;
	}
	if (r->len >= KT_DIAG_SIZE - 2)
		return;
	n = vsnprintf(r->diag + r->len, KT_DIAG_SIZE - 1 - r->len, fmt, ap);
	if (n < 0)
		return;
	r->len += n;
	if (r->len > KT_DIAG_SIZE - 2)
		r->len = KT_DIAG_SIZE - 2;
	r->diag[r->len++] = '\n';
	r->diag[r->len] = '\0';
}

/* The case fails; the message (one line) says what was measured and what was expected. */
static inline __attribute__((format(printf, 1, 2))) void kt_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kt_vnote(KT_FAIL, fmt, ap);
	va_end(ap);
}

/* The case is skipped (unless it also failed); the message is the reason. */
static inline __attribute__((format(printf, 1, 2))) void kt_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kt_vnote(KT_SKIP, fmt, ap);
	va_end(ap);
}

/* A diagnostic line printed whatever the verdict (counts, what was measured). */
static inline __attribute__((format(printf, 1, 2))) void kt_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kt_vnote(KT_NONE, fmt, ap);
	va_end(ap);
}

/*
 * KT_BREAK=1 in the environment (a kernel argument in the guest: `make
 * breaks`) inverts the verdict of every expectation, so that each case must
 * fail: the proof that it checks something and that its failure reaches
 * the report. What kt_expect() returns stays what held, so the case runs
 * as it always does (a step of the clock still happens).
 */
static int kt_break;

/* kt_expect(cond, "fmt", ...): fail with the message unless cond; returns whether cond held. */
#define kt_expect(cond, ...) ({						\
	int kt_held_ = !!(cond);					\
									\
	if (kt_held_ == kt_break)					\
		kt_fail(__VA_ARGS__);					\
	kt_held_;							\
})

/* ---- time ---- */

static inline long long kt_ns(const struct timespec *ts)
{
	return (long long)ts->tv_sec * KT_SEC + ts->tv_nsec;
}

static inline struct timespec kt_timespec(long long ns)
{
	struct timespec ts = { .tv_sec = ns / KT_SEC, .tv_nsec = ns % KT_SEC };

	return ts;
}

static inline long long kt_now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return kt_ns(&ts);
}

static inline long long kt_res(clockid_t clock)
{
	struct timespec ts = { 0, 0 };

	clock_getres(clock, &ts);
	return kt_ns(&ts);
}

/* Milliseconds with three decimals, for diagnostics: kt_ms(1234567) = 1.235 */
static inline double kt_ms(long long ns)
{
	return ns / 1e6;
}

/* Sleep at least ms milliseconds, whatever signals arrive. */
static inline void kt_sleep_ms(long long ms)
{
	struct timespec until = kt_timespec(kt_now(CLOCK_MONOTONIC) + ms * KT_MSEC);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
}

static inline const char *kt_clock_name(clockid_t clock)
{
	return clock == CLOCK_REALTIME ? "CLOCK_REALTIME" :
	       clock == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" : "clock";
}

/* ---- signals ---- */

static inline void kt_block(int sig)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/*
 * Wait for the blocked signal sig for up to ms milliseconds: 1 when it came
 * (info filled in if not NULL), 0 when it did not.
 */
static inline int kt_wait_signal(int sig, long long ms, siginfo_t *info)
{
	long long deadline = kt_now(CLOCK_MONOTONIC) + ms * KT_MSEC;
	struct timespec left;
	siginfo_t dummy;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	for (;;) {
		long long ns = deadline - kt_now(CLOCK_MONOTONIC);

		left = kt_timespec(ns > 0 ? ns : 0);
		if (sigtimedwait(&set, info ? info : &dummy, &left) == sig)
			return 1;
		if (errno != EINTR || ns <= 0)
			return 0;
	}
}

/*
 * A disarmed timer reads 0 and 0 (reader: the call that read them), and,
 * if ms > 0, sends no sig within ms milliseconds.
 */
static inline void kt_expect_disarmed(const char *reader, const char *when, long long value_ns,
				      long long interval_ns, int sig, long long ms)
{
	kt_expect(value_ns == 0 && interval_ns == 0,
		  "%s: %s reads value %.3f ms interval %.3f ms, expected 0 and 0", when, reader,
		  kt_ms(value_ns), kt_ms(interval_ns));
	if (ms)
		kt_expect(!kt_wait_signal(sig, ms, NULL), "%s: signal %d came, expected none", when,
			  sig);
}

/* Install handler for sig (SA_SIGINFO; flags such as SA_RESTART added). */
static inline void kt_handle(int sig, void (*handler)(int, siginfo_t *, void *), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* ---- timerfd ---- */

/*
 * timerfd_gettime() of a periodic timerfd: the value and the interval in ns,
 * or -1 and -1 when the call fails. 6.12 reports a periodic timer that is
 * due but whose expiry the kernel has not handled yet as 0, disarmed
 * (timerfd_get_remaining() clamps the negative time left), on both paths:
 * seen on the stock path under QEMU, i386, 2026-12-06. The expiry comes
 * within milliseconds, and the next call forwards the timer; so a 0 with
 * an interval is asked again, up to three times, 5 ms apart. A timer that
 * really reads 0 keeps reading 0.
 */
static inline void kt_tfd_gettime(int fd, long long *value, long long *interval)
{
	struct itimerspec its;
	int i;

	for (i = 0; i < 3; i++) {
		if (timerfd_gettime(fd, &its)) {
			*value = *interval = -1;
			return;
		}
		*value = kt_ns(&its.it_value);
		*interval = kt_ns(&its.it_interval);
		if (*value || !*interval)
			return;
		kt_sleep_ms(5);
	}
}

/* ---- processes ---- */

/*
 * Is this the ktimers guest, the program started by its /init? Programs
 * that step clocks or create devices run only there: the environment mark
 * alone could leak into a shell, and an orphan's parent is PID 1 too, so
 * PID 1 must also be the initramfs's /init.
 */
static inline int kt_in_guest(void)
{
	const char *mark = getenv("KTIMERS_GUEST");
	char init[64];
	ssize_t n = readlink("/proc/1/exe", init, sizeof(init) - 1);

	if (n < 0)
		return 0;
	init[n] = '\0';
	return mark && !strcmp(mark, "1") && getppid() == 1 && !strcmp(init, "/init");
}

/* The task's state letter in /proc (R, S, T, t, Z...), or 0 if it is gone. */
static inline char kt_task_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512];
	char *paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' ? paren[2] : 0;
}

/*
 * Wait until a task that sets *ready right before a blocking call is in it
 * (asleep, 'S'): 1, or 0 when it set *done first or 10 s passed.
 */
static inline int kt_wait_asleep(pid_t pid, pid_t tid, volatile int *ready, volatile int *done)
{
	long long deadline = kt_now(CLOCK_MONOTONIC) + 10 * KT_SEC;

	while (kt_now(CLOCK_MONOTONIC) < deadline && !*done) {
		if (*ready && kt_task_state(pid, tid) == 'S')
			return 1;
		kt_sleep_ms(1);
	}
	return 0;
}

/* Zeroed memory shared with the children forked after this call. */
static inline void *kt_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

/* How a child ended, for diagnostics: "exit 0", "signal 11". */
static inline const char *kt_status_text(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "status 0x%x", status);
	return buf;
}

/*
 * Run the program itself again as "<argv0> <mode>" (execve keeps the
 * signal mask, pending signals and ITIMER_REAL, and deletes POSIX timers):
 * its main() hands such a mode to the code that checks what survived.
 */
static inline void kt_reexec(const char *mode)
{
	char *argv[] = { (char *)"kt-reexec", (char *)mode, NULL };

	execv("/proc/self/exe", argv);
	_exit(127);
}

/* ---- the runner ---- */

static inline void kt_run_case(const struct kt_case *c, struct kt_result *r, const sigset_t *mask)
{
	setpgid(0, 0);		/* one group per case: what it leaves behind is killed with it */
	sigprocmask(SIG_SETMASK, mask, NULL);
	kt_current = r;
	c->run(c);
	if (r->status == KT_NONE)
		r->status = KT_PASS;
	_exit(0);
}

/*
 * Run the n cases, each in a child process: all at once when parallel,
 * else one after the other. A case still running after timeout_s seconds
 * (of the whole run when parallel, of the case otherwise) is killed and
 * fails. Prints KTAP; returns the exit status.
 */
static inline int kt_run(const struct kt_case *cases, int n, int parallel, int timeout_s)
{
	struct kt_result *results = kt_shared(sizeof(*results) * n);
	pid_t *pids = calloc(n, sizeof(*pids));
	int *how = calloc(n, sizeof(*how));	/* waitpid status, or -1: timed out */
	long long start = kt_now(CLOCK_MONOTONIC), deadline = 0;
	int pass = 0, fail = 0, skip = 0, next = 0, running = 0, i;
	sigset_t chld, old;
	char buf[64];

	if (!pids || !how) {
		perror("calloc");
		return 1;
	}
	kt_break = getenv("KT_BREAK") && !strcmp(getenv("KT_BREAK"), "1");
	printf("TAP version 13\n");
	if (kt_break)
		printf("# KT_BREAK=1: the verdict of every expectation is inverted, each case must fail\n");
	printf("1..%d\n", n);
	fflush(stdout);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	while (next < n || running) {
		struct timespec tick = { 0, 50 * KT_MSEC };
		int status;
		pid_t pid;

		while (next < n && (parallel || !running)) {
			pids[next] = fork();
			if (pids[next] == 0)
				kt_run_case(&cases[next], &results[next], &old);
			if (pids[next] < 0) {
				snprintf(results[next].diag, KT_DIAG_SIZE, "fork: %s\n", strerror(errno));
				results[next].status = KT_FAIL;
				pids[next] = 0;
			} else {
				setpgid(pids[next], pids[next]);
				running++;
			}
			if (!parallel || !deadline)
				deadline = kt_now(CLOCK_MONOTONIC) + timeout_s * KT_SEC;
			next++;
		}
		sigtimedwait(&chld, NULL, &tick);
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (i = 0; i < next; i++) {
				if (pids[i] == pid) {
					kill(-pid, SIGKILL);
					how[i] = status;
					pids[i] = 0;
					running--;
				}
			}
		}
		if (kt_now(CLOCK_MONOTONIC) > deadline) {
			for (i = 0; i < next; i++) {
				if (pids[i] > 0) {
					kill(-pids[i], SIGKILL);
					waitpid(pids[i], NULL, 0);
					how[i] = -1;
					pids[i] = 0;
					running--;
				}
			}
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (i = 0; i < n; i++) {
		struct kt_result *r = &results[i];
		char *line, *save = NULL;
		int status = r->status;

		if (how[i] == -1) {
			printf("# %s: still running after %d s, killed\n", cases[i].name, timeout_s);
			status = KT_FAIL;
		} else if (status == KT_NONE || !WIFEXITED(how[i]) || WEXITSTATUS(how[i])) {
			printf("# %s: the case's process ended (%s) without a verdict\n", cases[i].name,
			       kt_status_text(how[i], buf, sizeof(buf)));
			status = KT_FAIL;
		}
		for (line = strtok_r(r->diag, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			printf("# %s\n", line);
		if (status == KT_SKIP) {
			r->why[strcspn(r->why, "\n#")] = '\0';
			printf("ok %d %s # SKIP %s\n", i + 1, cases[i].name, r->why);
			skip++;
			continue;
		}
		printf("%sok %d %s\n", status == KT_PASS ? "" : "not ", i + 1, cases[i].name);
		if (status == KT_PASS)
			pass++;
		else
			fail++;
	}
	printf("# %d cases in %.3f s\n", n, (kt_now(CLOCK_MONOTONIC) - start) / 1e9);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n", pass, fail, skip);
	fflush(stdout);
	return fail ? 1 : skip == n ? 4 : 0;
}

#endif /* KTAP_H */
