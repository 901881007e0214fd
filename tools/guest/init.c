// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's /init: mount what the timer selftests need, run the plan in
 * /plan, print everything on the console between markers, power off.
 *
 * Console protocol (parsed by tools/guest_output.py):
 *   guest: boot <uname -r> <uname -m>
 *   guest: cmdline <kernel command line>
 *   guest: wall clock set to <s> (only when the kernel started at the epoch)
 *   guest: counters before <the "users: " line of /sys/kernel/debug/ktimers>
 *   guest: begin <test> <args...>
 *   guest: <test>| <one line of the test's stdout+stderr>
 *   guest: end <test> exit <n>|signal <n>|timeout <s>|error <errno text> seconds <s.mmm>
 *   guest: counters after <...>
 *   guest: slab ktimer_pclock: <n> object(s) (kernels with ktimers on PTP clocks)
 *   <kmemleak's report, as the kernel writes it> (only in a kmemleak kernel)
 *   guest: kmemleak: <n> suspected leak(s) (only in a kmemleak kernel)
 *   guest: done
 *
 * The plan has one test per line, "<group> <timeout s> <test> [args...]";
 * the tests of consecutive lines with the same group run at the same time,
 * and a group starts when the previous one has finished. Each test runs in
 * its own process group (so a timeout also kills what it started) with its
 * output in a file, printed in one piece when it ends so that the output of
 * tests running together does not interleave. The tests get KTIMERS_GUEST=1
 * in their environment: the project's own clock-stepping test
 * (selftests/user/kt_clock_step.c) refuses to run anywhere else.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define PLAN_FILE	"/plan"
#define TEST_DIR	"/selftests"
#define OUTPUT_DIR	"/tmp/output"
#define COUNTERS_FILE	"/sys/kernel/debug/ktimers"
#define KMEMLEAK_FILE	"/sys/kernel/debug/kmemleak"
#define PCLOCK_SLAB	"/sys/kernel/slab/ktimer_pclock"
/* how long a PTP clock's ktimer clock may take to go after its last user (a work item frees it) */
#define PCLOCK_FREE_S	10
/* kmemleak reports an object only once it has been unreferenced this long (MSECS_MIN_AGE) */
#define KMEMLEAK_MIN_AGE_S	5
#define HOST_TIME_FILE	"/etc/host-time"
#define YEAR_2000	946684800L
#define MAX_TESTS	64
#define MAX_ARGS	16
#define LINE_MAX_LEN	1024

struct test {
	char line[LINE_MAX_LEN];	/* the plan line; argv points into it */
	char *group;
	char *argv[MAX_ARGS + 1];	/* argv[0] is the test's name */
	long timeout_s;
	pid_t pid;
	double start;
	int timed_out;
};

static struct test tests[MAX_TESTS];
static int test_count;

/* One write() per line, so kernel messages cut in between lines, not into them. */
static void say(const char *fmt, ...)
{
	char buf[LINE_MAX_LEN + 128];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	if (len > (int)sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	buf[len++] = '\n';
	if (write(STDOUT_FILENO, buf, len) < 0)
		return;
}

/* BOOTTIME: the clock-setting tests move CLOCK_REALTIME, not this one. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void mount_one(const char *source, const char *target, const char *type)
{
	mkdir(target, 0755);
	if (mount(source, target, type, 0, NULL) && errno != EBUSY)
		say("guest: warning: mount %s on %s: %s", type, target, strerror(errno));
}

static void mount_filesystems(void)
{
	mount_one("proc", "/proc", "proc");
	mount_one("sysfs", "/sys", "sysfs");
	mount_one("debugfs", "/sys/kernel/debug", "debugfs");
	mount_one("devtmpfs", "/dev", "devtmpfs");
	mount_one("tmpfs", "/tmp", "tmpfs");
	mount_one("mqueue", "/dev/mqueue", "mqueue");
	mkdir(OUTPUT_DIR, 0755);
}

/*
 * A guest without an RTC driver (ARM's virt machine here) starts at the
 * epoch, where CLOCK_REALTIME hardly differs from CLOCK_MONOTONIC and the
 * kernel refuses to step it back by a second (valid-adjtimex fails for that
 * alone). A real system has its wall clock set: use the host's time from
 * when the initramfs was made.
 */
static void set_wall_clock(void)
{
	struct timespec now;
	FILE *file;
	long long host = 0;

	clock_gettime(CLOCK_REALTIME, &now);
	if (now.tv_sec >= YEAR_2000)
		return;
	file = fopen(HOST_TIME_FILE, "r");
	if (!file || fscanf(file, "%lld", &host) != 1 || host < YEAR_2000) {
		say("guest: warning: the wall clock is at the epoch and %s has no time",
		    HOST_TIME_FILE);
	} else {
		now.tv_sec = host;
		now.tv_nsec = 0;
		if (clock_settime(CLOCK_REALTIME, &now))
			say("guest: warning: setting the wall clock: %s", strerror(errno));
		else
			say("guest: wall clock set to %lld (the host's time at packing)", host);
	}
	if (file)
		fclose(file);
}

static void print_file_line(const char *path, const char *label)
{
	char buf[LINE_MAX_LEN];
	FILE *file = fopen(path, "r");

	if (!file) {
		say("guest: %s unreadable (%s)", path, strerror(errno));
		return;
	}
	if (fgets(buf, sizeof(buf), file)) {
		buf[strcspn(buf, "\n")] = '\0';
		say("guest: %s %s", label, buf);
	}
	fclose(file);
}

/* The "users: on, nanosleep 12, ..." line: the proof of which path served the syscalls. */
static void print_counters(const char *when)
{
	char buf[LINE_MAX_LEN];
	FILE *file = fopen(COUNTERS_FILE, "r");
	int found = 0;

	if (!file) {
		say("guest: counters %s unavailable (%s: %s)", when, COUNTERS_FILE,
		    strerror(errno));
		return;
	}
	while (fgets(buf, sizeof(buf), file)) {
		if (strncmp(buf, "users: ", 7))
			continue;
		buf[strcspn(buf, "\n")] = '\0';
		say("guest: counters %s %s", when, buf);
		found = 1;
		break;
	}
	if (!found)
		say("guest: counters %s unavailable (no \"users: \" line in %s)", when,
		    COUNTERS_FILE);
	fclose(file);
}

static int read_plan(void)
{
	char buf[LINE_MAX_LEN];
	FILE *file = fopen(PLAN_FILE, "r");

	if (!file) {
		say("guest: error: cannot open %s: %s", PLAN_FILE, strerror(errno));
		return -1;
	}
	while (fgets(buf, sizeof(buf), file)) {
		struct test *t = &tests[test_count];
		char *save, *word, *timeout;
		int argc = 0;

		buf[strcspn(buf, "\n")] = '\0';
		if (buf[0] == '#' || buf[strspn(buf, " \t")] == '\0')
			continue;
		if (test_count == MAX_TESTS) {
			say("guest: error: more than %d tests in %s", MAX_TESTS, PLAN_FILE);
			break;
		}
		memcpy(t->line, buf, sizeof(t->line));
		t->group = strtok_r(t->line, " \t", &save);
		timeout = strtok_r(NULL, " \t", &save);
		while ((word = strtok_r(NULL, " \t", &save)) && argc < MAX_ARGS)
			t->argv[argc++] = word;
		if (!timeout || !argc) {
			say("guest: error: bad plan line: %s", buf);
			continue;
		}
		t->timeout_s = strtol(timeout, NULL, 10);
		test_count++;
	}
	fclose(file);
	return 0;
}

static void start_test(struct test *t)
{
	char path[LINE_MAX_LEN], output[LINE_MAX_LEN], args[LINE_MAX_LEN] = "";
	int i, fd;

	for (i = 1; t->argv[i]; i++) {
		strncat(args, " ", sizeof(args) - strlen(args) - 1);
		strncat(args, t->argv[i], sizeof(args) - strlen(args) - 1);
	}
	say("guest: begin %s%s", t->argv[0], args);
	snprintf(path, sizeof(path), TEST_DIR "/%s", t->argv[0]);
	snprintf(output, sizeof(output), OUTPUT_DIR "/%s", t->argv[0]);
	t->start = now_s();
	t->pid = fork();
	if (t->pid == 0) {
		setpgid(0, 0);
		fd = open(output, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
		/* set-2038 and others run "./inconsistency-check" etc. through system() */
		if (chdir(TEST_DIR))
			_exit(126);
		execv(path, t->argv);
		fprintf(stderr, "guest init: exec %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	if (t->pid < 0)
		say("guest: end %s error fork: %s seconds 0.000", t->argv[0], strerror(errno));
	else
		setpgid(t->pid, t->pid);	/* also here: no race with the kill below */
}

static void print_output(const struct test *t)
{
	char path[LINE_MAX_LEN], buf[LINE_MAX_LEN];
	FILE *file;

	snprintf(path, sizeof(path), OUTPUT_DIR "/%s", t->argv[0]);
	file = fopen(path, "r");
	if (!file)
		return;
	while (fgets(buf, sizeof(buf), file)) {
		buf[strcspn(buf, "\n")] = '\0';
		say("guest: %s| %s", t->argv[0], buf);
	}
	fclose(file);
}

static void finish_test(struct test *t, int status)
{
	double seconds = now_s() - t->start;

	kill(-t->pid, SIGKILL);		/* whatever it left running */
	print_output(t);
	if (t->timed_out)
		say("guest: end %s timeout %ld seconds %.3f", t->argv[0], t->timeout_s, seconds);
	else if (WIFSIGNALED(status))
		say("guest: end %s signal %d seconds %.3f", t->argv[0], WTERMSIG(status), seconds);
	else
		say("guest: end %s exit %d seconds %.3f", t->argv[0], WEXITSTATUS(status), seconds);
	t->pid = 0;
}

/* Run tests[first..last) together; returns when all have ended. */
static void run_group(int first, int last)
{
	sigset_t chld;
	struct timespec tick = { .tv_sec = 1 };
	int running = 0, i, status;
	pid_t pid;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (i = first; i < last; i++) {
		start_test(&tests[i]);
		running += tests[i].pid > 0;
	}
	while (running) {
		sigtimedwait(&chld, NULL, &tick);
		/* also reaps orphans that were reparented to us; they match no test */
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (i = first; i < last; i++) {
				if (tests[i].pid == pid) {
					finish_test(&tests[i], status);
					running--;
				}
			}
		}
		for (i = first; i < last; i++) {
			struct test *t = &tests[i];

			if (t->pid > 0 && !t->timed_out && now_s() - t->start > t->timeout_s) {
				t->timed_out = 1;
				kill(-t->pid, SIGKILL);
			}
		}
	}
}

/* One write() of @text to a sysfs or debugfs control file; 1 if it was taken whole */
static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	int ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);

	if (fd >= 0)
		close(fd);
	return ok;
}

static long pclock_objects(void)
{
	char buf[64] = "";
	FILE *file;

	write_text(PCLOCK_SLAB "/shrink", "1");	/* frees empty slabs: "objects" then counts live ones' slabs */
	file = fopen(PCLOCK_SLAB "/objects", "r");
	if (!file)
		return -1;
	if (!fgets(buf, sizeof(buf), file))
		buf[0] = '\0';
	fclose(file);
	return buf[0] ? strtol(buf, NULL, 10) : -1;
}

/*
 * The ktimer clocks of PTP devices still alive (their own slab cache,
 * kernel/time/ktimer_pclock.c): the programs have ended and removed their
 * devices, so none may be left; each is freed by a work item after its last
 * user, so this waits up to PCLOCK_FREE_S for the count to reach 0. The
 * kernel is booted with slab_nomerge: a merged cache (a symbolic link)
 * would count other objects too.
 */
static void report_pclock_objects(void)
{
	struct stat st;
	long objects;
	int waited;

	if (lstat(PCLOCK_SLAB, &st))
		return;
	if (S_ISLNK(st.st_mode)) {
		say("guest: slab ktimer_pclock: merged with another cache, not counted (boot with slab_nomerge)");
		return;
	}
	for (waited = 0; (objects = pclock_objects()) > 0 && waited < PCLOCK_FREE_S; waited++)
		sleep(1);
	if (objects < 0)
		say("guest: slab ktimer_pclock: %s unreadable, not counted", PCLOCK_SLAB "/objects");
	else
		say("guest: slab ktimer_pclock: %ld object(s)", objects);
}

/*
 * In a kernel with kmemleak (the kmemleak configuration): what the programs
 * left unreferenced, printed raw so that the console scan
 * (tools/kunit/logscan.py) makes each "unreferenced object" a finding. It
 * waits out kmemleak's minimum age and scans twice, as
 * Documentation/dev-tools/kmemleak.rst advises against transient reports.
 * Task stacks are not scanned: once the programs have ended, a stale copy
 * of a pointer in an idle kworker's stack would hide a leaked object. Even
 * so kmemleak misses leaks (a PTP clock's kfree() dropped on purpose went
 * unreported): report_pclock_objects() is the check that does not.
 */
static void report_kmemleak(void)
{
	char line[LINE_MAX_LEN];
	int leaks = 0;
	FILE *file;

	if (access(KMEMLEAK_FILE, W_OK))
		return;
	sleep(KMEMLEAK_MIN_AGE_S + 1);
	if (!write_text(KMEMLEAK_FILE, "stack=off") || !write_text(KMEMLEAK_FILE, "scan") || !write_text(KMEMLEAK_FILE, "scan")) {
		say("guest: kmemleak: scan failed (%s)", strerror(errno));
		return;
	}
	file = fopen(KMEMLEAK_FILE, "r");
	if (!file) {
		say("guest: kmemleak: %s unreadable (%s)", KMEMLEAK_FILE, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), file)) {
		line[strcspn(line, "\n")] = '\0';
		leaks += !strncmp(line, "unreferenced object ", 20);
		say("%s", line);
	}
	fclose(file);
	say("guest: kmemleak: %d suspected leak(s)", leaks);
}

int main(void)
{
	struct utsname uts;
	sigset_t chld;
	int first, last;

	/* SIGCHLD stays pending for sigtimedwait() instead of being discarded */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	setenv("PATH", TEST_DIR ":/bin", 1);
	/* the mark of this guest: tests that step the clock (kt_clock_step) refuse to run without it */
	setenv("KTIMERS_GUEST", "1", 1);

	mount_filesystems();
	uname(&uts);
	say("guest: boot %s %s", uts.release, uts.machine);
	print_file_line("/proc/cmdline", "cmdline");
	set_wall_clock();
	print_counters("before");
	if (read_plan() == 0) {
		for (first = 0; first < test_count; first = last) {
			for (last = first + 1; last < test_count; last++)
				if (strcmp(tests[last].group, tests[first].group))
					break;
			run_group(first, last);
		}
	}
	print_counters("after");
	report_pclock_objects();
	report_kmemleak();
	say("guest: done");
	sync();
	/*
	 * Wait until the console has sent what we wrote: the reboot throws away
	 * what is still queued, and three boots of 150 lost their last lines
	 * (from the middle of a program's output to "guest: done") that way.
	 */
	tcdrain(STDOUT_FILENO);
	/* QEMU runs with -no-reboot, so this ends it */
	reboot(RB_AUTOBOOT);
	return 1;
}
