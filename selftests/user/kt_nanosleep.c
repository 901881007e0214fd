// SPDX-License-Identifier: GPL-2.0
/*
 * kt_nanosleep - nanosleep(), clock_nanosleep(), sleep() and usleep() on
 * CLOCK_REALTIME and CLOCK_MONOTONIC, relative and TIMER_ABSTIME, as POSIX
 * and stock Linux 6.12 have them:
 *
 * - interrupted by a handled signal (sent by another process, by another
 *   thread, or by the sleeper's own ITIMER_REAL) a sleep returns EINTR
 *   (clock_nanosleep() returns it), and a relative one with a remaining-time
 *   pointer stores the time left: never more than the request, at most the
 *   request minus how long the sleeper was seen asleep before the signal,
 *   at least the request minus the time the call took; an absolute one
 *   leaves it alone; without the pointer too; with SA_RESTART too;
 * - stopped (SIGSTOP, SIGCONT) or stopped by a tracer (PTRACE_SEIZE and
 *   PTRACE_INTERRUPT, PTRACE_ATTACH), then resumed, a sleep restarts by
 *   itself: it returns 0, and not before the requested time;
 * - sleep() returns the seconds left, usleep() -1 with EINTR;
 * - invalid times give EINVAL, an unknown clock EINVAL, a bad request
 *   pointer EFAULT, a bad remaining-time pointer EFAULT when a relative
 *   sleep is interrupted (and nothing for an absolute one);
 * - in a time namespace, an absolute CLOCK_MONOTONIC sleep is in the
 *   namespace's time (kernels without CONFIG_TIME_NS skip it).
 *
 * Each entry point counts: glibc's functions (which use the time64
 * syscall on 32-bit arches, and there pass a buffer of their own for the
 * remaining time even when the caller gives NULL), and the raw nanosleep
 * and clock_nanosleep syscalls, which on 32-bit arches are the time32
 * (compat) ones, with their own way of storing the remaining time and of
 * restarting; only the raw syscalls give the kernel a NULL pointer there.
 *
 * Every case runs in a process of its own, all at the same time; the
 * sleeper is a child of the case's process, which interrupts it.
 */
#include "ktap.h"

#include <pthread.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/time.h>

#ifdef SYS_clock_nanosleep_time64
/* a 32-bit arch: SYS_nanosleep and SYS_clock_nanosleep take the old 32-bit timespec */
#define SYS_CLOCK_NANOSLEEP64	SYS_clock_nanosleep_time64
#define HAVE_TIME32		1
#else
#define SYS_CLOCK_NANOSLEEP64	SYS_clock_nanosleep
#define HAVE_TIME32		0
#endif

#define SIGNAL_REQUEST	(5 * KT_SEC)	/* interrupted long before its end */
#define RESTART_REQUEST	(1 * KT_SEC)	/* slept in full, around a stop */
#define SIGNAL_DELAY_MS	300		/* asleep this long before the signal */
#define STOPPED_MS	100
#define BAD_POINTER	((void *)8)
#define SENTINEL_SEC	0x5a5a
#define SENTINEL_NSEC	0x1234

enum api {
	API_NANOSLEEP,		/* glibc nanosleep() */
	API_CLOCK_NANOSLEEP,	/* glibc clock_nanosleep() */
	API_SYS_NANOSLEEP,	/* the nanosleep syscall (time32 on 32-bit arches) */
	API_SYS_CLOCK_NANOSLEEP,	/* clock_nanosleep with the 64-bit timespec */
	API_SYS_CLOCK_NANOSLEEP32,	/* clock_nanosleep with the 32-bit timespec (32-bit arches) */
	API_SLEEP,		/* glibc sleep() */
	API_USLEEP,		/* glibc usleep() */
};

enum rem_kind { REM, REM_NULL, REM_BAD };

enum how {
	NOT_INTERRUPTED,
	BY_SIGNAL,		/* SIGUSR1 from the case's process */
	BY_THREAD,		/* SIGUSR1 from another thread of the sleeper */
	BY_ITIMER,		/* SIGALRM of the sleeper's own ITIMER_REAL */
	BY_STOP,		/* SIGSTOP, then SIGCONT, from the case's process */
	BY_SEIZE,		/* PTRACE_SEIZE, PTRACE_INTERRUPT, PTRACE_DETACH */
	BY_ATTACH,		/* PTRACE_ATTACH (a SIGSTOP), PTRACE_DETACH */
};

struct sleep_case {
	enum api api;
	clockid_t clock;
	int abs;
	enum rem_kind rem;
	enum how how;
	int sa_restart;
	long long request;	/* ns; 0: the default for `how`; TIMER_ABSTIME: now + request */
};

struct ts64 {
	long long sec, nsec;
};

/* Written by the sleeper, read by its case's process (shared memory). */
struct sleeper {
	volatile int ready;		/* about to call: the interrupter may look */
	volatile int done;
	long long t0, t1;		/* the case's clock, around the call */
	long long request;
	int err;			/* 0 or the error (errno, or clock_nanosleep()'s return) */
	struct ts64 rem;		/* as read back; SENTINEL_* if not written */
	unsigned int sleep_ret;		/* sleep()'s return */
	volatile int handled;		/* signal handler runs */
	long long t_handled;		/* when the handler ran */
	long long t_seen, t_sig;	/* set by an interrupter thread of the sleeper */
};

static struct sleeper *me;		/* in the sleeper */
static clockid_t my_clock;

static const char *api_name(enum api api)
{
	switch (api) {
	case API_NANOSLEEP: return "nanosleep";
	case API_CLOCK_NANOSLEEP: return "clock_nanosleep";
	case API_SYS_NANOSLEEP: return "nanosleep syscall";
	case API_SYS_CLOCK_NANOSLEEP: return "clock_nanosleep syscall";
	case API_SYS_CLOCK_NANOSLEEP32: return "clock_nanosleep time32 syscall";
	case API_SLEEP: return "sleep";
	case API_USLEEP: return "usleep";
	}
	return "?";
}

static const char *err_name(int err)
{
	const char *name = err ? strerrorname_np(err) : "0";

	return name ? name : "an unknown error";
}

/*
 * One call of the API: req NULL means a bad request pointer. Returns 0 or
 * the error; *rem is what the remaining-time buffer holds afterwards.
 */
static int call_sleep(enum api api, clockid_t clock, int flags, const struct ts64 *req,
		      enum rem_kind kind, struct ts64 *rem)
{
	long ret;

	rem->sec = SENTINEL_SEC;
	rem->nsec = SENTINEL_NSEC;
	switch (api) {
	case API_NANOSLEEP:
	case API_CLOCK_NANOSLEEP: {
		struct timespec r = { .tv_sec = req->sec, .tv_nsec = req->nsec };
		struct timespec m = { SENTINEL_SEC, SENTINEL_NSEC };
		int err;

		if (api == API_NANOSLEEP)
			err = nanosleep(&r, kind == REM ? &m : NULL) ? errno : 0;
		else
			err = clock_nanosleep(clock, flags, &r, kind == REM ? &m : NULL);
		rem->sec = m.tv_sec;
		rem->nsec = m.tv_nsec;
		return err;
	}
	case API_SYS_NANOSLEEP:
	case API_SYS_CLOCK_NANOSLEEP32: {
		struct { long sec, nsec; } r = { 0, 0 }, m = { SENTINEL_SEC, SENTINEL_NSEC };
		void *mp = kind == REM ? (void *)&m : kind == REM_BAD ? BAD_POINTER : NULL;
		void *rp = req ? (void *)&r : BAD_POINTER;

		if (req) {
			r.sec = req->sec;
			r.nsec = req->nsec;
		}
		if (api == API_SYS_NANOSLEEP)
			ret = syscall(SYS_nanosleep, rp, mp);
		else if (HAVE_TIME32)
			ret = syscall(SYS_clock_nanosleep, clock, flags, rp, mp);
		else
			return ENOSYS;
		rem->sec = m.sec;
		rem->nsec = m.nsec;
		return ret ? errno : 0;
	}
	case API_SYS_CLOCK_NANOSLEEP: {
		struct { long long sec, nsec; } r = { 0, 0 }, m = { SENTINEL_SEC, SENTINEL_NSEC };
		void *mp = kind == REM ? (void *)&m : kind == REM_BAD ? BAD_POINTER : NULL;
		void *rp = req ? (void *)&r : BAD_POINTER;

		if (req) {
			r.sec = req->sec;
			r.nsec = req->nsec;
		}
		ret = syscall(SYS_CLOCK_NANOSLEEP64, clock, flags, rp, mp);
		rem->sec = m.sec;
		rem->nsec = m.nsec;
		return ret ? errno : 0;
	}
	case API_SLEEP:
	case API_USLEEP:
		break;
	}
	return ENOSYS;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	me->t_handled = kt_now(my_clock);
	me->handled++;
}

static void *thread_interrupter(void *arg)
{
	pthread_t target = *(pthread_t *)arg;

	if (!kt_wait_asleep(getpid(), getpid(), &me->ready, &me->done))
		return NULL;
	me->t_seen = kt_now(my_clock);
	kt_sleep_ms(SIGNAL_DELAY_MS);
	me->t_sig = kt_now(my_clock);
	pthread_kill(target, SIGUSR1);
	return NULL;
}

static long long default_request(const struct sleep_case *sc)
{
	if (sc->request)
		return sc->request;
	return sc->how == BY_STOP || sc->how == BY_SEIZE || sc->how == BY_ATTACH ?
	       RESTART_REQUEST : SIGNAL_REQUEST;
}

static void sleeper_main(const struct sleep_case *sc, struct sleeper *s)
{
	static pthread_t self;
	pthread_t thread;
	struct ts64 req;
	long long target;

	me = s;
	my_clock = sc->clock;
	kt_handle(SIGUSR1, on_signal, sc->sa_restart ? SA_RESTART : 0);
	kt_handle(SIGALRM, on_signal, 0);
	self = pthread_self();
	if (sc->how == BY_THREAD && pthread_create(&thread, NULL, thread_interrupter, &self))
		_exit(2);
	if (sc->how == BY_ITIMER) {
		struct itimerval it = { .it_value = { 0, SIGNAL_DELAY_MS * 1000 } };

		setitimer(ITIMER_REAL, &it, NULL);
	}
	s->request = default_request(sc);
	s->t0 = kt_now(sc->clock);
	target = sc->abs ? s->t0 + s->request : s->request;
	req.sec = target / KT_SEC;
	req.nsec = target % KT_SEC;
	s->ready = 1;
	if (sc->api == API_SLEEP) {
		s->sleep_ret = sleep(s->request / KT_SEC);
		s->err = 0;
	} else if (sc->api == API_USLEEP) {
		s->err = usleep(s->request / KT_USEC) ? errno : 0;
	} else {
		s->err = call_sleep(sc->api, sc->clock, sc->abs ? TIMER_ABSTIME : 0, &req, sc->rem,
				    &s->rem);
	}
	s->t1 = kt_now(sc->clock);
	s->done = 1;
	_exit(0);
}

/* Interrupt the sleeper as the case says; returns 0 when it could not be done (skip). */
static int interrupt(const struct sleep_case *sc, pid_t pid, struct sleeper *s, long long *t_seen,
		     long long *t_sig, int *exited, int *status)
{
	const char *what = "";
	int st;

	if (sc->how == NOT_INTERRUPTED || sc->how == BY_THREAD || sc->how == BY_ITIMER)
		return 1;
	if (!kt_wait_asleep(pid, pid, &s->ready, &s->done))
		return 1;	/* it ended first: check_sleep() says how */
	*t_seen = kt_now(sc->clock);
	switch (sc->how) {
	case BY_SIGNAL:
		kt_sleep_ms(SIGNAL_DELAY_MS);
		*t_sig = kt_now(sc->clock);
		kill(pid, SIGUSR1);
		return 1;
	case BY_STOP:
		*t_sig = kt_now(sc->clock);
		kill(pid, SIGSTOP);
		what = "SIGSTOP";
		if (waitpid(pid, &st, WUNTRACED) != pid)
			break;
		if (!WIFSTOPPED(st)) {
			*exited = 1;
			*status = st;
			return 1;
		}
		kt_sleep_ms(STOPPED_MS);
		kill(pid, SIGCONT);
		return 1;
	case BY_SEIZE:
	case BY_ATTACH:
		what = sc->how == BY_SEIZE ? "PTRACE_SEIZE" : "PTRACE_ATTACH";
		if (ptrace(sc->how == BY_SEIZE ? PTRACE_SEIZE : PTRACE_ATTACH, pid, 0, 0)) {
			if (errno == EPERM) {
				kill(pid, SIGKILL);
				kt_skip("%s is not permitted here", what);
				return 0;
			}
			break;
		}
		*t_sig = kt_now(sc->clock);
		what = "PTRACE_INTERRUPT";
		if (sc->how == BY_SEIZE && ptrace(PTRACE_INTERRUPT, pid, 0, 0))
			break;
		what = "waitpid for the ptrace stop";
		if (waitpid(pid, &st, __WALL) != pid)
			break;
		if (!WIFSTOPPED(st)) {
			*exited = 1;
			*status = st;
			return 1;
		}
		kt_expect(sc->how == BY_SEIZE ? st >> 16 == PTRACE_EVENT_STOP : WSTOPSIG(st) == SIGSTOP,
			  "the tracee stopped with status 0x%x, expected %s", st,
			  sc->how == BY_SEIZE ? "PTRACE_EVENT_STOP" : "SIGSTOP");
		kt_sleep_ms(STOPPED_MS);
		what = "PTRACE_DETACH";
		if (ptrace(PTRACE_DETACH, pid, 0, 0))
			break;
		return 1;
	default:
		return 1;
	}
	kt_fail("%s: %s, expected success", what, strerror(errno));
	kill(pid, SIGKILL);
	return 0;
}

static void check_sleep(const struct sleep_case *sc, struct sleeper *s, long long t_seen, long long t_sig)
{
	int handled = sc->how == BY_SIGNAL || sc->how == BY_THREAD || sc->how == BY_ITIMER;
	long long margin = kt_res(sc->clock) + KT_CLOCK_SLACK;
	long long took = s->t1 - s->t0, request = s->request;
	long long rem = s->rem.sec * KT_SEC + s->rem.nsec;
	int expected = handled ? (sc->rem == REM_BAD && !sc->abs ? EFAULT : EINTR) : 0;
	char call[160];

	if (sc->how == BY_THREAD || sc->how == BY_ITIMER) {
		t_seen = s->t_seen;
		t_sig = s->t_sig;
	}
	snprintf(call, sizeof(call), "%s(%s%s%.0f ms%s)%s", api_name(sc->api),
		 sc->api == API_CLOCK_NANOSLEEP || sc->api == API_SYS_CLOCK_NANOSLEEP ||
		 sc->api == API_SYS_CLOCK_NANOSLEEP32 ? kt_clock_name(sc->clock) : "",
		 sc->api == API_CLOCK_NANOSLEEP || sc->api == API_SYS_CLOCK_NANOSLEEP ||
		 sc->api == API_SYS_CLOCK_NANOSLEEP32 ? (sc->abs ? ", TIMER_ABSTIME now + " : ", ") : "",
		 kt_ms(request),
		 sc->api == API_SLEEP || sc->api == API_USLEEP ? "" :
		 sc->rem == REM ? ", &rem" : sc->rem == REM_NULL ? ", NULL" : ", bad pointer",
		 sc->sa_restart ? " with an SA_RESTART handler" : "");
	if (t_sig && s->t1 < t_sig) {
		kt_skip("%s ended after %.3f ms, before it could be interrupted (a stalled vCPU?)", call,
			kt_ms(took));
		return;
	}
	if (sc->how == BY_ITIMER && s->handled && s->t_handled < s->t0) {
		kt_skip("the timer's signal came before %s started (a stalled vCPU?)", call);
		return;
	}
	if (sc->api == API_SLEEP) {
		/* sleep() truncates the time left: between request - took and request - delay */
		long long low = request - took - margin;

		kt_expect(s->sleep_ret > 0 && (long long)s->sleep_ret * KT_SEC < request &&
			  (long long)s->sleep_ret * KT_SEC >= low / KT_SEC * KT_SEC,
			  "%s interrupted after %.3f ms returned %u, expected %lld s (the whole seconds left)",
			  call, kt_ms(took), s->sleep_ret, low / KT_SEC);
	} else if (!kt_expect(s->err == expected, "%s %s after %.3f ms: returned %s, expected %s", call,
			      sc->how == NOT_INTERRUPTED ? "returned" : "interrupted", kt_ms(took),
			      err_name(s->err), err_name(expected))) {
		return;
	}
	if (handled)
		kt_expect(s->handled == 1, "%s: the signal handler ran %d times, expected once", call,
			  s->handled);
	else
		kt_expect(s->handled == 0, "%s: a signal handler ran %d times, expected none", call,
			  s->handled);
	if (!handled && request >= 0) {
		long long slept = sc->abs ? s->t1 - (s->t0 + request) : took - request;

		kt_expect(slept >= 0, "%s returned %.3f ms early (after %.3f ms), expected never early",
			  call, kt_ms(-slept), kt_ms(took));
	}
	if (!handled && request < 0)
		kt_expect(took < 2 * KT_SEC, "%s of a time in the past took %.3f ms, expected at once",
			  call, kt_ms(took));
	if (sc->abs && sc->rem != REM_NULL && sc->api < API_SLEEP)
		kt_expect(s->rem.sec == SENTINEL_SEC && s->rem.nsec == SENTINEL_NSEC,
			  "%s: the remaining time was written ({%lld, %lld}), expected untouched for TIMER_ABSTIME",
			  call, s->rem.sec, s->rem.nsec);
	if (handled && expected == EINTR && sc->rem == REM && !sc->abs && sc->api < API_SLEEP) {
		if (!kt_expect(s->rem.sec >= 0 && s->rem.nsec >= 0 && s->rem.nsec < KT_SEC &&
			       !(s->rem.sec == SENTINEL_SEC && s->rem.nsec == SENTINEL_NSEC),
			       "%s: remaining time {%lld, %lld}, expected a valid time", call,
			       s->rem.sec, s->rem.nsec))
			return;
		kt_expect(rem <= request, "%s: remaining time %.3f ms, expected at most the request",
			  call, kt_ms(rem));
		kt_expect(rem >= request - took - margin,
			  "%s interrupted after %.3f ms: remaining time %.3f ms, expected at least %.3f ms",
			  call, kt_ms(took), kt_ms(rem), kt_ms(request - took - margin));
		if (t_seen)
			kt_expect(rem <= request - (t_sig - t_seen) + margin,
				  "%s asleep %.3f ms before the signal: remaining time %.3f ms, expected at most %.3f ms",
				  call, kt_ms(t_sig - t_seen), kt_ms(rem),
				  kt_ms(request - (t_sig - t_seen) + margin));
	}
}

static void run_sleep_case(const struct kt_case *c)
{
	const struct sleep_case *sc = c->data;
	struct sleeper *s = kt_shared(sizeof(*s));
	long long t_seen = 0, t_sig = 0;
	int exited = 0, status = 0;
	char buf[64];
	pid_t pid;

	if (sc->api == API_SYS_CLOCK_NANOSLEEP32 && !HAVE_TIME32) {
		kt_skip("a 64-bit arch has no time32 syscalls");
		return;
	}
	pid = fork();
	if (pid == 0)
		sleeper_main(sc, s);
	if (pid < 0) {
		kt_fail("fork: %s", strerror(errno));
		return;
	}
	if (!interrupt(sc, pid, s, &t_seen, &t_sig, &exited, &status))
		return;
	if (!exited && waitpid(pid, &status, 0) != pid) {
		kt_fail("waitpid: %s", strerror(errno));
		return;
	}
	if (!kt_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0 && s->done,
		       "the sleeper ended with %s, expected exit 0 after its sleep",
		       kt_status_text(status, buf, sizeof(buf))))
		return;
	check_sleep(sc, s, t_seen, t_sig);
}

/* ---- invalid arguments ---- */

struct bad_call {
	enum api api;
	clockid_t clock;
	int abs;
};

static const struct bad_call every_api[] = {
	{ API_NANOSLEEP, CLOCK_REALTIME, 0 },
	{ API_CLOCK_NANOSLEEP, CLOCK_REALTIME, 0 },
	{ API_CLOCK_NANOSLEEP, CLOCK_MONOTONIC, 0 },
	{ API_CLOCK_NANOSLEEP, CLOCK_REALTIME, 1 },
	{ API_CLOCK_NANOSLEEP, CLOCK_MONOTONIC, 1 },
	{ API_SYS_NANOSLEEP, CLOCK_REALTIME, 0 },
	{ API_SYS_CLOCK_NANOSLEEP, CLOCK_MONOTONIC, 0 },
	{ API_SYS_CLOCK_NANOSLEEP, CLOCK_REALTIME, 1 },
	{ API_SYS_CLOCK_NANOSLEEP32, CLOCK_MONOTONIC, 0 },
	{ API_SYS_CLOCK_NANOSLEEP32, CLOCK_REALTIME, 1 },
};

struct bad_case {
	struct ts64 req;
	int bad_request;	/* a bad pointer instead of req: raw syscalls only */
	clockid_t clock;	/* if not 0: this clock instead of each call's own */
	int expected;
};

static void run_bad_case(const struct kt_case *c)
{
	const struct bad_case *bc = c->data;
	unsigned int i;

	for (i = 0; i < KT_ARRAY_SIZE(every_api); i++) {
		const struct bad_call *call = &every_api[i];
		clockid_t clock = bc->clock ? bc->clock : call->clock;
		struct ts64 rem;
		int err;

		if (call->api == API_SYS_CLOCK_NANOSLEEP32 && !HAVE_TIME32)
			continue;
		if (bc->bad_request && call->api < API_SYS_NANOSLEEP)
			continue;	/* glibc would read the bad pointer itself */
		if (bc->clock && call->api == API_NANOSLEEP)
			continue;
		if (bc->clock && call->api == API_SYS_NANOSLEEP)
			continue;
		err = call_sleep(call->api, clock, call->abs ? TIMER_ABSTIME : 0,
				 bc->bad_request ? NULL : &bc->req, REM, &rem);
		kt_expect(err == bc->expected, "%s(clock %d%s, {%lld, %lld}) returned %s, expected %s",
			  api_name(call->api), (int)clock, call->abs ? ", TIMER_ABSTIME" : "",
			  bc->req.sec, bc->req.nsec, err_name(err), err_name(bc->expected));
	}
}

/* ---- the cases ---- */

#define SLEEP(name, ...) { name, run_sleep_case, &(const struct sleep_case){ __VA_ARGS__ } }
#define BAD(name, ...) { name, run_bad_case, &(const struct bad_case){ __VA_ARGS__ } }
#define RT CLOCK_REALTIME
#define MONO CLOCK_MONOTONIC

#define TIMENS_OFFSET_S	100

/* In the namespace: sleep to 200 ms ahead on its own CLOCK_MONOTONIC */
static void timens_sleeper(long long outside)
{
	long long inside = kt_now(CLOCK_MONOTONIC);
	struct timespec until = kt_timespec(inside + 200 * KT_MSEC);

	if (inside - outside < (TIMENS_OFFSET_S - 10) * KT_SEC)
		_exit(3);	/* the offset did not apply */
	alarm(10);		/* ignoring the offset would sleep 100 s */
	_exit(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) ? 2 : 0);
}

static void timens_absolute_sleep(const struct kt_case *c)
{
	char status_text[64];
	long long t0, t1;
	int fd, status;
	pid_t pid;

	(void)c;
	if (unshare(CLONE_NEWTIME)) {
		if (errno == EINVAL)
			kt_skip("no time namespaces in this kernel (CONFIG_TIME_NS)");
		else
			kt_fail("unshare(CLONE_NEWTIME): %s", strerror(errno));
		return;
	}
	fd = open("/proc/self/timens_offsets", O_WRONLY);
	if (!kt_expect(fd >= 0, "open /proc/self/timens_offsets: %s", strerror(errno)))
		return;
	if (!kt_expect(dprintf(fd, "monotonic %d 0\n", TIMENS_OFFSET_S) > 0,
		       "write timens_offsets: %s", strerror(errno))) {
		close(fd);
		return;
	}
	close(fd);
	t0 = kt_now(CLOCK_MONOTONIC);
	pid = fork();
	if (pid == 0)
		timens_sleeper(t0);
	if (!kt_expect(pid > 0, "fork: %s", strerror(errno)))
		return;
	waitpid(pid, &status, 0);
	t1 = kt_now(CLOCK_MONOTONIC);
	kt_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the sleeper in the namespace ended with %s after %.0f ms (3: no offset, 2: error, SIGALRM: slept to the time outside the namespace)",
		  kt_status_text(status, status_text, sizeof(status_text)), kt_ms(t1 - t0));
	kt_expect(t1 - t0 >= 200 * KT_MSEC, "the sleep took %.3f ms, expected at least 200",
		  kt_ms(t1 - t0));
}

static const struct kt_case cases[] = {
	/* a handled signal: EINTR and the time left */
	SLEEP("nanosleep interrupted by a signal: EINTR and the time left",
	      .api = API_NANOSLEEP, .clock = RT, .how = BY_SIGNAL),
	SLEEP("nanosleep without rem interrupted by a signal: EINTR",
	      .api = API_NANOSLEEP, .clock = RT, .rem = REM_NULL, .how = BY_SIGNAL),
	SLEEP("nanosleep syscall interrupted by a signal: EINTR and the time left",
	      .api = API_SYS_NANOSLEEP, .clock = RT, .how = BY_SIGNAL),
	SLEEP("nanosleep syscall without rem interrupted by a signal: EINTR",
	      .api = API_SYS_NANOSLEEP, .clock = RT, .rem = REM_NULL, .how = BY_SIGNAL),
	SLEEP("clock_nanosleep REALTIME interrupted by a signal: EINTR and the time left",
	      .api = API_CLOCK_NANOSLEEP, .clock = RT, .how = BY_SIGNAL),
	SLEEP("clock_nanosleep REALTIME without rem interrupted by a signal: EINTR",
	      .api = API_CLOCK_NANOSLEEP, .clock = RT, .rem = REM_NULL, .how = BY_SIGNAL),
	SLEEP("clock_nanosleep REALTIME TIMER_ABSTIME interrupted by a signal: EINTR, rem untouched",
	      .api = API_CLOCK_NANOSLEEP, .clock = RT, .abs = 1, .how = BY_SIGNAL),
	SLEEP("clock_nanosleep MONOTONIC interrupted by a signal: EINTR and the time left",
	      .api = API_CLOCK_NANOSLEEP, .clock = MONO, .how = BY_SIGNAL),
	SLEEP("clock_nanosleep MONOTONIC without rem interrupted by a signal: EINTR",
	      .api = API_CLOCK_NANOSLEEP, .clock = MONO, .rem = REM_NULL, .how = BY_SIGNAL),
	SLEEP("clock_nanosleep MONOTONIC TIMER_ABSTIME interrupted by a signal: EINTR, rem untouched",
	      .api = API_CLOCK_NANOSLEEP, .clock = MONO, .abs = 1, .how = BY_SIGNAL),
	SLEEP("clock_nanosleep syscall MONOTONIC interrupted by a signal: EINTR and the time left",
	      .api = API_SYS_CLOCK_NANOSLEEP, .clock = MONO, .how = BY_SIGNAL),
	SLEEP("clock_nanosleep syscall REALTIME without rem interrupted by a signal: EINTR",
	      .api = API_SYS_CLOCK_NANOSLEEP, .clock = RT, .rem = REM_NULL, .how = BY_SIGNAL),
	SLEEP("clock_nanosleep time32 syscall MONOTONIC interrupted by a signal: EINTR and the time left",
	      .api = API_SYS_CLOCK_NANOSLEEP32, .clock = MONO, .how = BY_SIGNAL),
	SLEEP("clock_nanosleep time32 syscall REALTIME TIMER_ABSTIME interrupted by a signal: EINTR",
	      .api = API_SYS_CLOCK_NANOSLEEP32, .clock = RT, .abs = 1, .how = BY_SIGNAL),
	SLEEP("nanosleep interrupted by an SA_RESTART handler: still EINTR and the time left",
	      .api = API_NANOSLEEP, .clock = RT, .how = BY_SIGNAL, .sa_restart = 1),
	SLEEP("clock_nanosleep MONOTONIC TIMER_ABSTIME interrupted by an SA_RESTART handler: still EINTR",
	      .api = API_CLOCK_NANOSLEEP, .clock = MONO, .abs = 1, .how = BY_SIGNAL, .sa_restart = 1),
	SLEEP("nanosleep interrupted by a signal from another thread: EINTR and the time left",
	      .api = API_NANOSLEEP, .clock = RT, .how = BY_THREAD),
	SLEEP("clock_nanosleep MONOTONIC interrupted by its own ITIMER_REAL: EINTR and the time left",
	      .api = API_CLOCK_NANOSLEEP, .clock = MONO, .how = BY_ITIMER),
	SLEEP("sleep interrupted by a signal: returns the seconds left",
	      .api = API_SLEEP, .clock = RT, .how = BY_SIGNAL, .request = 3 * KT_SEC),
	SLEEP("usleep interrupted by a signal: -1 and EINTR",
	      .api = API_USLEEP, .clock = RT, .rem = REM_NULL, .how = BY_SIGNAL),
	SLEEP("nanosleep syscall with a bad rem interrupted by a signal: EFAULT",
	      .api = API_SYS_NANOSLEEP, .clock = RT, .rem = REM_BAD, .how = BY_SIGNAL),
	SLEEP("clock_nanosleep syscall MONOTONIC with a bad rem interrupted by a signal: EFAULT",
	      .api = API_SYS_CLOCK_NANOSLEEP, .clock = MONO, .rem = REM_BAD, .how = BY_SIGNAL),
	SLEEP("clock_nanosleep syscall REALTIME with a bad rem interrupted by a signal: EFAULT",
	      .api = API_SYS_CLOCK_NANOSLEEP, .clock = RT, .rem = REM_BAD, .how = BY_SIGNAL),
	SLEEP("clock_nanosleep syscall MONOTONIC TIMER_ABSTIME with a bad rem interrupted: EINTR",
	      .api = API_SYS_CLOCK_NANOSLEEP, .clock = MONO, .abs = 1, .rem = REM_BAD, .how = BY_SIGNAL),

	/* stopped and resumed: the sleep restarts by itself */
	SLEEP("nanosleep across SIGSTOP and SIGCONT: restarts, sleeps the whole time",
	      .api = API_NANOSLEEP, .clock = RT, .how = BY_STOP),
	SLEEP("nanosleep without rem across SIGSTOP and SIGCONT: restarts",
	      .api = API_NANOSLEEP, .clock = RT, .rem = REM_NULL, .how = BY_STOP),
	SLEEP("nanosleep syscall across SIGSTOP and SIGCONT: restarts",
	      .api = API_SYS_NANOSLEEP, .clock = RT, .how = BY_STOP),
	SLEEP("clock_nanosleep REALTIME across SIGSTOP and SIGCONT: restarts",
	      .api = API_CLOCK_NANOSLEEP, .clock = RT, .how = BY_STOP),
	SLEEP("clock_nanosleep MONOTONIC across SIGSTOP and SIGCONT: restarts",
	      .api = API_CLOCK_NANOSLEEP, .clock = MONO, .how = BY_STOP),
	SLEEP("clock_nanosleep MONOTONIC TIMER_ABSTIME across SIGSTOP and SIGCONT: restarts",
	      .api = API_CLOCK_NANOSLEEP, .clock = MONO, .abs = 1, .how = BY_STOP),
	SLEEP("clock_nanosleep time32 syscall MONOTONIC across SIGSTOP and SIGCONT: restarts",
	      .api = API_SYS_CLOCK_NANOSLEEP32, .clock = MONO, .how = BY_STOP),
	SLEEP("nanosleep across PTRACE_SEIZE and PTRACE_INTERRUPT: restarts",
	      .api = API_NANOSLEEP, .clock = RT, .how = BY_SEIZE),
	SLEEP("clock_nanosleep REALTIME TIMER_ABSTIME across PTRACE_SEIZE and PTRACE_INTERRUPT: restarts",
	      .api = API_CLOCK_NANOSLEEP, .clock = RT, .abs = 1, .how = BY_SEIZE),
	SLEEP("clock_nanosleep MONOTONIC across PTRACE_ATTACH and PTRACE_DETACH: restarts",
	      .api = API_CLOCK_NANOSLEEP, .clock = MONO, .how = BY_ATTACH),
	SLEEP("nanosleep syscall across PTRACE_ATTACH and PTRACE_DETACH: restarts",
	      .api = API_SYS_NANOSLEEP, .clock = RT, .how = BY_ATTACH),

	/* not interrupted */
	SLEEP("nanosleep of 100 ms: returns 0, never early",
	      .api = API_NANOSLEEP, .clock = RT, .how = NOT_INTERRUPTED, .request = 100 * KT_MSEC),
	SLEEP("nanosleep syscall of 100 ms: returns 0, never early",
	      .api = API_SYS_NANOSLEEP, .clock = RT, .how = NOT_INTERRUPTED, .request = 100 * KT_MSEC),
	SLEEP("clock_nanosleep MONOTONIC of 100 ms: returns 0, never early",
	      .api = API_CLOCK_NANOSLEEP, .clock = MONO, .rem = REM_NULL, .how = NOT_INTERRUPTED, .request = 100 * KT_MSEC),
	SLEEP("clock_nanosleep REALTIME TIMER_ABSTIME 100 ms ahead: returns 0, never early",
	      .api = API_CLOCK_NANOSLEEP, .clock = RT, .abs = 1, .how = NOT_INTERRUPTED, .request = 100 * KT_MSEC),
	SLEEP("clock_nanosleep time32 syscall MONOTONIC TIMER_ABSTIME 100 ms ahead: returns 0, never early",
	      .api = API_SYS_CLOCK_NANOSLEEP32, .clock = MONO, .abs = 1, .how = NOT_INTERRUPTED, .request = 100 * KT_MSEC),
	SLEEP("clock_nanosleep MONOTONIC TIMER_ABSTIME in the past: returns 0 at once",
	      .api = API_CLOCK_NANOSLEEP, .clock = MONO, .abs = 1, .how = NOT_INTERRUPTED, .request = -KT_SEC),
	SLEEP("clock_nanosleep REALTIME TIMER_ABSTIME in the past: returns 0 at once",
	      .api = API_CLOCK_NANOSLEEP, .clock = RT, .abs = 1, .how = NOT_INTERRUPTED, .request = -KT_SEC),
	SLEEP("nanosleep of 1 ns: returns 0",
	      .api = API_NANOSLEEP, .clock = RT, .how = NOT_INTERRUPTED, .request = 1),

	/* invalid arguments */
	BAD("a negative tv_nsec: EINVAL", { 0, -1 }, 0, 0, EINVAL),
	BAD("tv_nsec of 1000000000: EINVAL", { 0, KT_SEC }, 0, 0, EINVAL),
	BAD("a negative tv_sec: EINVAL", { -1, 0 }, 0, 0, EINVAL),
	BAD("an unknown clock: EINVAL", { 0, 1000 }, 0, 100, EINVAL),
	BAD("a bad request pointer: EFAULT", { 0, 0 }, 1, 0, EFAULT),

	{ "clock_nanosleep MONOTONIC TIMER_ABSTIME in a time namespace: the namespace's time",
	  timens_absolute_sleep, NULL },
};

int main(void)
{
	return kt_run(cases, KT_ARRAY_SIZE(cases), 1, 25);
}
