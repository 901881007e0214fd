// SPDX-License-Identifier: GPL-2.0
/*
 * Differential test of the ktimer core against a reference model.
 *
 * A seeded random sequence of operations drives eight timers on a fake
 * clock: start and modify in every mode with and without KTIMER_NOCHECK,
 * try_to_stop and stop, forward_ktimer(), interval changes (negative ones
 * too), caller errors, callbacks that re-arm, modify or stop their own
 * timer or another one, that queue another timer ahead of timers already
 * due, or that move the clock while the run goes on, clock steps of every
 * size in both directions, and queue runs.  Each operation is applied to
 * the ktimer core and to a model written here from docs/design.md, not
 * from the core's structure: a sorted array of pending timers and plain
 * saturating arithmetic.  After every step the two must agree on return
 * values, which callbacks ran in which order and what they saw, ->expires,
 * ->expired, ->overrun, the remaining time, the clock and the exact
 * contents and order of the queue.
 *
 * Each boot draws a new first seed (printed; the case runs it and the next
 * three), so CI explores new sequences every run.  The first step that
 * differs ends the case with the seed and the step, so the shortest
 * failing prefix replays with ktimer_fuzz_test.seed=S ktimer_fuzz_test.ops=N.
 */

#include <kunit/test.h>
#include <linux/cpumask.h>
#include <linux/ktimer.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/timekeeping.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "ktimer_internal.h"
#include "ktimer_test.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define FUZZ_TIMERS	8
#define FUZZ_SEEDS	4
#define FUZZ_LOG	32
#define FUZZ_HISTORY	24
#define FUZZ_START	1000000000LL
/* what get_remtime_ktimer() is asked to report for a due timer */
#define FUZZ_FAKE	7

/* 4 seeds x 65536 per boot: CI's six KUnit boots run over 1.5 million */
static unsigned long fuzz_ops = 65536;
module_param_named(ops, fuzz_ops, ulong, 0444);
MODULE_PARM_DESC(ops, "operations per seed (default 65536)");

static unsigned long long fuzz_seed;
module_param_named(seed, fuzz_seed, ullong, 0444);
MODULE_PARM_DESC(seed, "first seed (default 0: a random one per boot); the case runs this one and the next three");

DEFINE_FAKE_CLOCK(fuzz_clock, 1);

/* What a timer's callback does besides being counted */
enum fuzz_action {
	ACT_NONE,
	ACT_MODIFY_SELF,
	ACT_START_SELF,
	ACT_STOP_SELF,
	ACT_TRY_STOP_SELF,
	ACT_REARM_THEN_STOP_SELF,
	ACT_CLEAR_INTERVAL,
	ACT_MODIFY_OTHER,
	ACT_STOP_OTHER,
	ACT_QUEUE_OTHER_EARLY,	/* NOCHECK, ahead of what is due */
	ACT_MOVE_CLOCK,		/* the clock moves while the run goes on */
	ACT_KINDS
};

struct fuzz_action_spec {
	enum fuzz_action	kind;
	int			other;
	int			mode;
	ktime_t			tim;
};

/* One callback: who ran, what it saw, what its action returned */
struct fuzz_fired {
	int	id;
	ktime_t	now;
	ktime_t	expires;
	int	ret[2];
};

enum fuzz_op_kind {
	OP_START, OP_MODIFY, OP_TRY_STOP, OP_STOP, OP_INTERVAL, OP_ACTION,
	OP_ADVANCE, OP_RUN, OP_SET_CLOCK, OP_FORWARD, OP_ERROR, OP_KINDS
};

static const char * const fuzz_op_names[OP_KINDS] = {
	"start", "modify", "try_to_stop", "stop", "interval", "action",
	"advance", "run", "set_clock", "forward", "caller_error",
};

/* The caller errors OP_ERROR makes; each warns once and changes nothing */
enum fuzz_error {
	ERR_REARM_NO_INTERVAL, ERR_FORWARD_MODE_PERIOD, ERR_BAD_MODE,
	ERR_NULL_TIM, ERR_FORWARD_PERIOD, ERR_FORWARD_PENDING, ERR_KINDS
};

struct fuzz_op {
	enum fuzz_op_kind	kind;
	int			id;
	int			mode;
	ktime_t			val;
	ktime_t			val2;
	s64			ret;		/* from the ktimer core */
	s64			want;		/* from the model */
};

/* The model's view of one timer */
struct model_timer {
	bool		pending;
	bool		stopped_in_callback;
	ktime_t		expires;
	ktime_t		expired;
	ktime_t		interval;
	u32		overrun;
	u64		seq;		/* enqueue order, breaks expiry ties */
	unsigned int	pass;		/* run during which it was queued */
};

struct fuzz_state;

struct fuzz_timer {
	struct ktimer		timer;
	struct fuzz_state	*st;
	int			id;
};

struct fuzz_state {
	struct kunit		*test;
	struct rnd_state	rnd;
	u64			seed;
	unsigned long		step;
	unsigned long		expiries;
	ktime_t			now;

	/* the model */
	struct model_timer	m[FUZZ_TIMERS];
	int			queue[FUZZ_TIMERS];	/* sorted ids */
	int			nqueued;
	unsigned int		pass;
	u64			next_seq;

	/* the implementation */
	struct fuzz_timer	t[FUZZ_TIMERS];

	struct fuzz_action_spec	act[FUZZ_TIMERS];
	struct fuzz_fired	impl_log[FUZZ_LOG], model_log[FUZZ_LOG];
	int			impl_fired, model_fired;
	struct fuzz_op		history[FUZZ_HISTORY];
};

/* Saturating addition, as the model's arithmetic is defined */
static ktime_t model_add(ktime_t a, ktime_t b)
{
	if (b > 0 && a > KTIME_MAX - b)
		return KTIME_MAX;
	if (b < 0 && a < KTIME_MIN - b)
		return KTIME_MIN;
	return a + b;
}

/* ---- random input ---- */

static u32 rnd32(struct fuzz_state *st)
{
	return prandom_u32_state(&st->rnd);
}

static u32 rnd_below(struct fuzz_state *st, u32 n)
{
	return rnd32(st) % n;
}

static u64 rnd64(struct fuzz_state *st)
{
	return (u64)rnd32(st) << 32 | rnd32(st);
}

/* A duration of any order of magnitude, including the extremes */
static ktime_t rnd_duration(struct fuzz_state *st)
{
	switch (rnd_below(st, 8)) {
	case 0:
		return rnd_below(st, 4);
	case 1:
		return rnd_below(st, 2000);
	case 2:
		return rnd_below(st, 1000000);
	case 3:
		return rnd32(st) * 1000LL;
	case 4:
		return (s64)(rnd64(st) >> (2 + rnd_below(st, 40)));
	case 5:
		return KTIME_MAX - rnd_below(st, 3);
	case 6:
		return 1LL << 62;
	default:
		return rnd_below(st, 200);
	}
}

/* A value for *tim: mostly near the clock, sometimes anywhere */
static ktime_t rnd_tim(struct fuzz_state *st, int how)
{
	ktime_t d = rnd_duration(st);

	switch (rnd_below(st, 8)) {
	case 0:
		d = -d;
		break;
	case 1:
		return rnd_below(st, 2) ? KTIME_MIN : (s64)rnd64(st);
	default:
		break;
	}
	if (how == KTIMER_ABS && rnd_below(st, 4))
		return model_add(st->now, d);
	return d;
}

/* A clock step to anywhere (KTIME_MIN is no clock reading) */
static ktime_t rnd_clock(struct fuzz_state *st)
{
	switch (rnd_below(st, 4)) {
	case 0:
		return FUZZ_START;
	case 1:
		return KTIME_MAX - rnd_below(st, 3);
	case 2:
		return -(ktime_t)rnd_below(st, 1000);
	default:
		return (s64)(rnd64(st) >> 1) - (s64)(rnd64(st) >> 1);
	}
}

/* Mostly none, sometimes a period, sometimes a negative one (not periodic) */
static ktime_t rnd_interval(struct fuzz_state *st)
{
	switch (rnd_below(st, 6)) {
	case 0:
	case 1:
		return rnd_duration(st);
	case 2:
		return -rnd_duration(st);
	default:
		return 0;
	}
}

/* REARM without an interval is a caller error: use RESTART then */
static int fuzz_valid_mode(int mode, ktime_t interval)
{
	if ((mode & ~KTIMER_NOCHECK) == KTIMER_REARM && interval <= 0)
		return KTIMER_RESTART | (mode & KTIMER_NOCHECK);
	return mode;
}

/* A mode and a *tim that together are no caller error */
static void rnd_mode_tim(struct fuzz_state *st, int *mode, ktime_t *tim)
{
	int how = KTIMER_ABS + rnd_below(st, KTIMER_RESTART);

	*tim = rnd_tim(st, how);
	if (how == KTIMER_FORWARD && *tim <= 0)
		*tim = 1 + (rnd_duration(st) & (KTIME_MAX - 1));
	*mode = how | (rnd_below(st, 2) ? KTIMER_NOCHECK : 0);
}

static void rnd_action(struct fuzz_state *st, int id)
{
	struct fuzz_action_spec *a = &st->act[id];

	a->kind = rnd_below(st, ACT_KINDS);
	a->other = (id + 1 + rnd_below(st, FUZZ_TIMERS - 1)) % FUZZ_TIMERS;
	rnd_mode_tim(st, &a->mode, &a->tim);
	if (a->kind == ACT_REARM_THEN_STOP_SELF) {
		a->mode = KTIMER_REL;
		a->tim = 1 + rnd_below(st, 1000);
	}
	/* how far back, or forward, from the clock's time in the callback */
	if (a->kind == ACT_QUEUE_OTHER_EARLY || a->kind == ACT_MOVE_CLOCK)
		a->tim = rnd_duration(st);
}

/* ---- the model ---- */

/*
 * Push ->expires past @now in steps of @period: the smallest number of
 * whole periods that does it, counted in ->overrun, both saturating
 * (->overrun at U32_MAX).
 */
static u64 model_forward(struct model_timer *m, ktime_t now, ktime_t period)
{
	u64 gap, periods, fit;

	if (m->expires > now)
		return 0;
	gap = (u64)now - (u64)m->expires;
	periods = div64_u64(gap, period);
	periods = periods == U64_MAX ? U64_MAX : periods + 1;
	m->overrun = periods > U32_MAX - m->overrun ? U32_MAX :
						      m->overrun + periods;
	/* how many periods still fit below KTIME_MAX */
	fit = div64_u64((u64)KTIME_MAX - (u64)m->expires, period);
	if (periods > fit)
		m->expires = KTIME_MAX;
	else
		m->expires += periods * period;
	return periods;
}

static void model_enqueue(struct fuzz_state *st, int id)
{
	struct model_timer *m = &st->m[id];
	int pos = st->nqueued;

	m->pending = true;
	m->seq = st->next_seq++;
	m->pass = st->pass;
	while (pos > 0 && st->m[st->queue[pos - 1]].expires > m->expires) {
		st->queue[pos] = st->queue[pos - 1];
		pos--;
	}
	st->queue[pos] = id;
	st->nqueued++;
}

static void model_dequeue(struct fuzz_state *st, int id)
{
	int pos = 0;

	while (st->queue[pos] != id)
		pos++;
	st->nqueued--;
	memmove(&st->queue[pos], &st->queue[pos + 1],
		(st->nqueued - pos) * sizeof(st->queue[0]));
	st->m[id].pending = false;
}

static int model_arm(struct fuzz_state *st, int id, ktime_t tim, int mode,
		     bool must_idle)
{
	struct model_timer *m = &st->m[id];
	bool was_pending = m->pending;

	if (was_pending && must_idle)
		return -EBUSY;
	if (was_pending)
		model_dequeue(st, id);

	switch (mode & ~KTIMER_NOCHECK) {
	case KTIMER_ABS:
		m->expires = tim;
		break;
	case KTIMER_REL:
		m->expires = model_add(st->now, tim);
		break;
	case KTIMER_INCR:
		m->expires = model_add(m->expires, tim);
		break;
	case KTIMER_FORWARD:
		model_forward(m, st->now, tim);
		goto queue;
	case KTIMER_REARM:
		model_forward(m, st->now, m->interval);
		goto queue;
	case KTIMER_RESTART:
		break;
	}
	if (m->expires <= st->now && !(mode & KTIMER_NOCHECK)) {
		m->expired = st->now;
		/* a refused restart leaves a running timer stopped: no re-arm */
		m->stopped_in_callback = true;
		return -ETIME;
	}
queue:
	m->stopped_in_callback = false;
	model_enqueue(st, id);
	return was_pending;
}

static int model_stop(struct fuzz_state *st, int id, bool own_callback)
{
	struct model_timer *m = &st->m[id];

	if (own_callback)
		m->stopped_in_callback = true;
	if (!m->pending)
		return 0;
	model_dequeue(st, id);
	return 1;
}

static ktime_t model_remtime(const struct model_timer *m, ktime_t now,
			     long fake)
{
	ktime_t rem;

	if (fake && !m->pending)
		return 0;
	rem = model_add(m->expires, -now);
	return fake && rem <= 0 ? fake : rem;
}

static void model_action(struct fuzz_state *st, int id, int ret[2])
{
	const struct fuzz_action_spec *a = &st->act[id];
	int other = a->other;

	switch (a->kind) {
	case ACT_MODIFY_SELF:
	case ACT_START_SELF:
		ret[0] = model_arm(st, id, a->tim,
				   fuzz_valid_mode(a->mode, st->m[id].interval),
				   a->kind == ACT_START_SELF);
		break;
	case ACT_STOP_SELF:
	case ACT_TRY_STOP_SELF:
		ret[0] = model_stop(st, id, true);
		break;
	case ACT_REARM_THEN_STOP_SELF:
		ret[0] = model_arm(st, id, a->tim, a->mode, false);
		ret[1] = model_stop(st, id, true);
		break;
	case ACT_CLEAR_INTERVAL:
		st->m[id].interval = 0;
		break;
	case ACT_MODIFY_OTHER:
		ret[0] = model_arm(st, other, a->tim,
				   fuzz_valid_mode(a->mode,
						   st->m[other].interval),
				   false);
		break;
	case ACT_STOP_OTHER:
		ret[0] = model_stop(st, other, false);
		break;
	case ACT_QUEUE_OTHER_EARLY:
		ret[0] = model_arm(st, other, model_add(st->now, -a->tim),
				   KTIMER_ABS | KTIMER_NOCHECK, false);
		break;
	case ACT_MOVE_CLOCK:
		st->now = model_add(st->now, a->tim);
		break;
	default:
		break;
	}
}

/* The earliest timer queued before the current run began, or -1 */
static int model_first_of_run(const struct fuzz_state *st)
{
	int i;

	for (i = 0; i < st->nqueued; i++) {
		if (st->m[st->queue[i]].pass != st->pass)
			return st->queue[i];
	}
	return -1;
}

/*
 * An expiry run, as docs/design.md defines it: read the clock, run every
 * timer due at that time that was queued before the run began, earliest
 * first (timers queued by the callbacks wait for the next run, even when
 * they sort ahead); when the next one is not due, read the clock once more.
 * ->expired and a periodic re-arm use the time the run read.
 */
static void model_run(struct fuzz_state *st)
{
	ktime_t now = st->now;
	int id;

	st->pass++;
	while ((id = model_first_of_run(st)) >= 0) {
		struct model_timer *m = &st->m[id];
		struct fuzz_fired f = { .id = id };
		bool periodic;

		if (m->expires > now) {
			now = st->now;
			if (m->expires > now)
				break;
		}
		model_dequeue(st, id);
		m->expired = now;
		m->stopped_in_callback = false;
		f.now = st->now;
		f.expires = m->expires;
		/* periodic or not is decided before the callback, which may free it */
		periodic = m->interval > 0;
		model_action(st, id, f.ret);
		if (st->model_fired < FUZZ_LOG)
			st->model_log[st->model_fired] = f;
		st->model_fired++;
		if (periodic && m->interval > 0 && !m->pending &&
		    !m->stopped_in_callback) {
			model_forward(m, now, m->interval);
			model_enqueue(st, id);
		}
	}
}

/* ---- the implementation ---- */

static void impl_action(struct fuzz_state *st, int id, int ret[2])
{
	const struct fuzz_action_spec *a = &st->act[id];
	struct ktimer *self = &st->t[id].timer;
	struct ktimer *other = &st->t[a->other].timer;
	ktime_t tim = a->tim;

	switch (a->kind) {
	case ACT_MODIFY_SELF:
		ret[0] = modify_ktimer(self, &tim,
				       fuzz_valid_mode(a->mode, self->interval));
		break;
	case ACT_START_SELF:
		ret[0] = start_ktimer(self, &tim,
				      fuzz_valid_mode(a->mode, self->interval));
		break;
	case ACT_STOP_SELF:
		ret[0] = stop_ktimer(self);
		break;
	case ACT_TRY_STOP_SELF:
		ret[0] = try_to_stop_ktimer(self);
		break;
	case ACT_REARM_THEN_STOP_SELF:
		ret[0] = modify_ktimer(self, &tim, a->mode);
		ret[1] = try_to_stop_ktimer(self);
		break;
	case ACT_CLEAR_INTERVAL:
		self->interval = 0;
		break;
	case ACT_MODIFY_OTHER:
		ret[0] = modify_ktimer(other, &tim,
				       fuzz_valid_mode(a->mode, other->interval));
		break;
	case ACT_STOP_OTHER:
		ret[0] = try_to_stop_ktimer(other);
		break;
	case ACT_QUEUE_OTHER_EARLY:
		tim = model_add(READ_ONCE(fuzz_clock_now), -a->tim);
		ret[0] = modify_ktimer(other, &tim, KTIMER_ABS | KTIMER_NOCHECK);
		break;
	case ACT_MOVE_CLOCK:
		WRITE_ONCE(fuzz_clock_now,
			   model_add(READ_ONCE(fuzz_clock_now), a->tim));
		break;
	default:
		break;
	}
}

static void fuzz_callback(void *data)
{
	struct fuzz_timer *ft = data;
	struct fuzz_state *st = ft->st;
	struct fuzz_fired f = {
		.id = ft->id,
		.now = fuzz_clock_get_time(),
		.expires = ft->timer.expires,
	};

	impl_action(st, ft->id, f.ret);
	if (st->impl_fired < FUZZ_LOG)
		st->impl_log[st->impl_fired] = f;
	st->impl_fired++;
}

/* ---- one step ---- */

static void set_clock(struct fuzz_state *st, ktime_t now)
{
	st->now = now;
	WRITE_ONCE(fuzz_clock_now, now);
}

/* Caller errors that have warned in this boot, whose next ones are silent */
static bool fuzz_warned[ERR_KINDS];

/*
 * A caller error: the core must refuse it (-EINVAL, or 0 periods from
 * forward_ktimer()) and change nothing, so the model does nothing.  The
 * first of each kind is bracketed for the log scan; WARN_ON_ONCE keeps
 * the rest quiet.
 */
static void fuzz_caller_error(struct fuzz_state *st, struct fuzz_op *op,
			      enum fuzz_error err)
{
	struct ktimer *timer = &st->t[op->id].timer;
	bool marked = !fuzz_warned[err];
	bool start = rnd_below(st, 2);
	const ktime_t *tim = &op->val;

	if (err == ERR_REARM_NO_INTERVAL && timer->interval > 0)
		err = ERR_BAD_MODE;
	if (err == ERR_FORWARD_PENDING && !ktimer_active(timer))
		err = ERR_FORWARD_PERIOD;
	op->val2 = err;
	/* a period or *tim <= 0 is the error, except for a pending timer */
	op->val = -rnd_duration(st);
	switch (err) {
	case ERR_FORWARD_PENDING:
		op->val = max_t(ktime_t, -op->val, 1);
		break;
	case ERR_REARM_NO_INTERVAL:
		op->mode = KTIMER_REARM;
		break;
	case ERR_FORWARD_MODE_PERIOD:
		op->mode = KTIMER_FORWARD;
		break;
	case ERR_BAD_MODE:
		op->mode = rnd_below(st, 2) ? 0 : KTIMER_RESTART + 1 +
						  rnd_below(st, 4);
		break;
	case ERR_NULL_TIM:
		op->mode = KTIMER_ABS + rnd_below(st, KTIMER_FORWARD);
		tim = NULL;
		break;
	default:
		break;
	}
	if (rnd_below(st, 2))
		op->mode |= KTIMER_NOCHECK;

	if (marked)
		expect_warning_begin(st->test);
	if (err == ERR_FORWARD_PERIOD || err == ERR_FORWARD_PENDING) {
		op->ret = forward_ktimer(timer, st->now, op->val);
		op->want = 0;
	} else {
		op->ret = start ? start_ktimer(timer, tim, op->mode) :
				  modify_ktimer(timer, tim, op->mode);
		op->want = -EINVAL;
	}
	if (marked)
		expect_warning_end(st->test);
	fuzz_warned[err] = true;
}

/* forward_ktimer() of an idle timer, to any time, by any period */
static void fuzz_forward(struct fuzz_state *st, struct fuzz_op *op)
{
	struct ktimer *timer = &st->t[op->id].timer;

	if (ktimer_active(timer)) {
		fuzz_caller_error(st, op, ERR_FORWARD_PENDING);
		return;
	}
	op->val = rnd_tim(st, KTIMER_ABS);
	op->val2 = max_t(ktime_t, rnd_duration(st), 1);
	op->ret = forward_ktimer(timer, op->val, op->val2);
	op->want = model_forward(&st->m[op->id], op->val, op->val2);
}

/* Apply one random operation to both sides; returns the op for the log */
static struct fuzz_op fuzz_step(struct fuzz_state *st)
{
	struct fuzz_op op = { .kind = rnd_below(st, OP_KINDS) };
	struct ktimer *timer;

	op.id = rnd_below(st, FUZZ_TIMERS);
	timer = &st->t[op.id].timer;

	switch (op.kind) {
	case OP_START:
	case OP_MODIFY:
		rnd_mode_tim(st, &op.mode, &op.val);
		op.mode = fuzz_valid_mode(op.mode, timer->interval);
		if (op.kind == OP_START)
			op.ret = start_ktimer(timer, &op.val, op.mode);
		else
			op.ret = modify_ktimer(timer, &op.val, op.mode);
		op.want = model_arm(st, op.id, op.val, op.mode,
				    op.kind == OP_START);
		break;
	case OP_TRY_STOP:
		op.ret = try_to_stop_ktimer(timer);
		op.want = model_stop(st, op.id, false);
		break;
	case OP_STOP:
		op.ret = stop_ktimer(timer);
		op.want = model_stop(st, op.id, false);
		break;
	case OP_INTERVAL:
		op.val = rnd_interval(st);
		timer->interval = op.val;
		st->m[op.id].interval = op.val;
		break;
	case OP_ACTION:
		rnd_action(st, op.id);
		op.val = st->act[op.id].kind;
		break;
	case OP_ADVANCE:
	case OP_SET_CLOCK:
	case OP_RUN:
		if (op.kind == OP_ADVANCE)
			op.val = model_add(st->now, rnd_duration(st));
		else if (op.kind == OP_SET_CLOCK)
			op.val = rnd_clock(st);
		else
			op.val = st->now;
		set_clock(st, op.val);
		ktimer_run_clock(&fuzz_clock);
		model_run(st);
		break;
	case OP_FORWARD:
		fuzz_forward(st, &op);
		break;
	case OP_ERROR:
		fuzz_caller_error(st, &op, rnd_below(st, ERR_KINDS));
		break;
	default:
		break;
	}
	st->expiries += st->model_fired;
	return op;
}

/* ---- comparison ---- */

/* The implementation's queue, in order, as timer ids; -1 for a stranger */
static int impl_queue(struct fuzz_state *st, int *ids, int max)
{
	struct ktimer_base *base =
		ktimer_cpu_base(raw_smp_processor_id(), fuzz_clock.index);
	struct rb_node *node;
	int n = 0;

	raw_spin_lock_irq(&base->lock);
	for (node = rb_first_cached(&base->queue); node; node = rb_next(node)) {
		struct ktimer *timer = rb_entry(node, struct ktimer, node);
		struct fuzz_timer *ft = container_of(timer, struct fuzz_timer,
						     timer);

		if (n < max)
			ids[n] = ft >= st->t && ft < st->t + FUZZ_TIMERS ?
				 ft->id : -1;
		n++;
	}
	raw_spin_unlock_irq(&base->lock);
	return n;
}

/* Report the first difference; returns false for the caller to pass on */
static __printf(2, 3) bool fuzz_diverged(struct fuzz_state *st,
					 const char *fmt, ...)
{
	char what[192];
	va_list args;

	va_start(args, fmt);
	vsnprintf(what, sizeof(what), fmt, args);
	va_end(args);
	KUNIT_FAIL(st->test, "seed %llu diverged at step %lu: %s", st->seed,
		   st->step, what);
	return false;
}

static bool fuzz_check_fired(struct fuzz_state *st)
{
	int i;

	if (st->impl_fired != st->model_fired)
		return fuzz_diverged(st, "%d callbacks ran, the model expects %d",
				     st->impl_fired, st->model_fired);
	for (i = 0; i < min(st->impl_fired, FUZZ_LOG); i++) {
		const struct fuzz_fired *a = &st->impl_log[i];
		const struct fuzz_fired *b = &st->model_log[i];

		/* which timer, at what time, for which expiry */
		if (a->id != b->id || a->now != b->now ||
		    a->expires != b->expires)
			return fuzz_diverged(st, "callback %d: t%d %lld/%lld, model t%d %lld/%lld",
					     i, a->id, a->now, a->expires,
					     b->id, b->now, b->expires);
		if (a->ret[0] != b->ret[0] || a->ret[1] != b->ret[1])
			return fuzz_diverged(st, "callback %d (t%d) got %d/%d, the model %d/%d",
					     i, a->id, a->ret[0], a->ret[1],
					     b->ret[0], b->ret[1]);
	}
	return true;
}

static bool fuzz_check_timer(struct fuzz_state *st, int id)
{
	struct ktimer *t = &st->t[id].timer;
	const struct model_timer *m = &st->m[id];
	ktime_t now = 0, expiry, rem, want;

	if (ktimer_active(t) != m->pending)
		return fuzz_diverged(st, "t%d pending %d, the model %d", id,
				     ktimer_active(t), m->pending);
	if (t->expires != m->expires || t->expired != m->expired)
		return fuzz_diverged(st, "t%d expires %lld expired %lld, the model %lld %lld",
				     id, t->expires, t->expired,
				     m->expires, m->expired);
	if (t->overrun != m->overrun)
		return fuzz_diverged(st, "t%d overrun %u, the model %u", id,
				     t->overrun, m->overrun);
	expiry = get_expiry_ktimer(t, &now);
	if (expiry != m->expires || now != st->now)
		return fuzz_diverged(st, "t%d get_expiry_ktimer %lld at %lld, want %lld at %lld",
				     id, expiry, now, m->expires, st->now);
	rem = get_remtime_ktimer(t, 0);
	want = model_remtime(m, st->now, 0);
	if (rem != want)
		return fuzz_diverged(st, "t%d get_remtime_ktimer(0) %lld, want %lld",
				     id, rem, want);
	rem = get_remtime_ktimer(t, FUZZ_FAKE);
	want = model_remtime(m, st->now, FUZZ_FAKE);
	if (rem != want)
		return fuzz_diverged(st, "t%d get_remtime_ktimer(fake) %lld, want %lld",
				     id, rem, want);
	return true;
}

static bool fuzz_check(struct fuzz_state *st, const struct fuzz_op *op)
{
	int ids[FUZZ_TIMERS + 1], n, i;

	if (op->ret != op->want)
		return fuzz_diverged(st, "%s t%d returned %lld, the model %lld",
				     fuzz_op_names[op->kind], op->id, op->ret,
				     op->want);
	/* callbacks move the clock on both sides alike */
	if (READ_ONCE(fuzz_clock_now) != st->now)
		return fuzz_diverged(st, "the clock is at %lld, the model's at %lld",
				     READ_ONCE(fuzz_clock_now), st->now);
	if (!fuzz_check_fired(st))
		return false;
	for (i = 0; i < FUZZ_TIMERS; i++) {
		if (!fuzz_check_timer(st, i))
			return false;
	}
	n = impl_queue(st, ids, ARRAY_SIZE(ids));
	if (n != st->nqueued)
		return fuzz_diverged(st, "the queue holds %d timers, the model %d",
				     n, st->nqueued);
	for (i = 0; i < n; i++) {
		if (ids[i] != st->queue[i])
			return fuzz_diverged(st, "queue position %d holds t%d, the model t%d",
					     i, ids[i], st->queue[i]);
	}
	if (ktimer_clock_pending(&fuzz_clock) != n)
		return fuzz_diverged(st, "ktimer_clock_pending() says %u, the queue holds %d",
				     ktimer_clock_pending(&fuzz_clock), n);
	return true;
}

/* The operations that led to a divergence, oldest first */
static void fuzz_print_history(struct fuzz_state *st)
{
	unsigned long first = st->step >= FUZZ_HISTORY ?
			      st->step - FUZZ_HISTORY + 1 : 0;
	unsigned long s;

	kunit_info(st->test, "replay: ktimer_fuzz_test.seed=%llu ktimer_fuzz_test.ops=%lu; the last operations were:",
		   st->seed, st->step + 1);
	for (s = first; s <= st->step; s++) {
		const struct fuzz_op *op = &st->history[s % FUZZ_HISTORY];
		const char *name = fuzz_op_names[op->kind];

		switch (op->kind) {
		case OP_START:
		case OP_MODIFY:
			kunit_info(st->test, "  step %lu: %s t%d mode %#x tim %lld -> %lld",
				   s, name, op->id, op->mode, op->val, op->ret);
			break;
		case OP_TRY_STOP:
		case OP_STOP:
			kunit_info(st->test, "  step %lu: %s t%d -> %lld", s, name,
				   op->id, op->ret);
			break;
		case OP_FORWARD:
		case OP_ERROR:
			kunit_info(st->test, "  step %lu: %s t%d mode %#x val %lld/%lld -> %lld",
				   s, name, op->id, op->mode, op->val, op->val2,
				   op->ret);
			break;
		case OP_INTERVAL:
		case OP_ACTION:
			kunit_info(st->test, "  step %lu: %s of t%d = %lld", s, name,
				   op->id, op->val);
			break;
		default:
			kunit_info(st->test, "  step %lu: %s, clock at %lld", s, name,
				   op->val);
			break;
		}
	}
}

/* ---- the case ---- */

/*
 * The seeds of one boot: fuzz_seed and the next FUZZ_SEEDS - 1.  The
 * parameters are named by position, not by seed, so that results of
 * different boots line up; the seed is in each case's figures line.
 */
static const void *fuzz_gen_params(const void *prev, char *desc)
{
	static u64 seeds[FUZZ_SEEDS];
	int i = prev ? (const u64 *)prev - seeds + 1 : 0;

	if (i >= FUZZ_SEEDS)
		return NULL;
	seeds[i] = fuzz_seed + i;
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "run %d", i + 1);
	return &seeds[i];
}

static void fuzz_init_state(struct kunit *test, struct fuzz_state *st,
			    u64 seed)
{
	int i;

	st->test = test;
	st->seed = seed;
	prandom_seed_state(&st->rnd, seed);
	set_clock(st, FUZZ_START);
	for (i = 0; i < FUZZ_TIMERS; i++) {
		struct fuzz_timer *ft = &st->t[i];

		ktimer_init(&ft->timer, &fuzz_clock);
		ft->timer.function = fuzz_callback;
		ft->timer.data = ft;
		ft->st = st;
		ft->id = i;
	}
}

static void ktimer_fuzz_test(struct kunit *test)
{
	const u64 *seed = test->param_value;
	struct fuzz_state *st = test->priv;
	u64 start = ktime_get_ns();
	bool ok = true;

	fuzz_init_state(test, st, *seed);
	for (st->step = 0; st->step < fuzz_ops; st->step++) {
		struct fuzz_op op;

		st->impl_fired = 0;
		st->model_fired = 0;
		op = fuzz_step(st);
		st->history[st->step % FUZZ_HISTORY] = op;
		ok = fuzz_check(st, &op);
		if (!ok) {
			fuzz_print_history(st);
			break;
		}
		if (st->step % 1024 == 1023)
			cond_resched();
	}
	/* the time is for reading only: it decides nothing */
	kunit_info(test, "figures: seed=%llu ops=%lu expiries=%lu divergences=%d ms=%llu",
		   st->seed, st->step, st->expiries, !ok,
		   div_u64(ktime_get_ns() - start, NSEC_PER_MSEC));
}

static int fuzz_case_init(struct kunit *test)
{
	test->priv = kunit_kzalloc(test, sizeof(struct fuzz_state), GFP_KERNEL);
	if (!test->priv)
		return -ENOMEM;
	/* Timers go to the starting CPU's queue: stay on one CPU */
	return set_cpus_allowed_ptr(current, cpumask_of(raw_smp_processor_id()));
}

static void fuzz_case_exit(struct kunit *test)
{
	struct fuzz_state *st = test->priv;
	int i;

	for (i = 0; st && i < FUZZ_TIMERS; i++) {
		if (st->t[i].timer.base)
			stop_ktimer(&st->t[i].timer);
	}
}

static int fuzz_suite_init(struct kunit_suite *suite)
{
	/* zero, the default, asks for a fresh seed each boot */
	while (!fuzz_seed)
		fuzz_seed = get_random_u64();
	pr_info("ktimer_fuzz: seeds %llu to %llu; replay with ktimer_fuzz_test.seed=%llu\n",
		fuzz_seed, fuzz_seed + FUZZ_SEEDS - 1, fuzz_seed);
	return ktimer_register_clock(&fuzz_clock);
}

static void fuzz_suite_exit(struct kunit_suite *suite)
{
	ktimer_unregister_clock(&fuzz_clock);
}

static struct kunit_case ktimer_fuzz_cases[] = {
	/* a few seconds per seed under emulation */
	KUNIT_CASE_PARAM_ATTR(ktimer_fuzz_test, fuzz_gen_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite ktimer_fuzz_suite = {
	.name = "ktimer_fuzz",
	.suite_init = fuzz_suite_init,
	.suite_exit = fuzz_suite_exit,
	.init = fuzz_case_init,
	.exit = fuzz_case_exit,
	.test_cases = ktimer_fuzz_cases,
};

kunit_test_suites(&ktimer_fuzz_suite);

MODULE_DESCRIPTION("KUnit differential test of ktimers against a reference model");
MODULE_LICENSE("GPL");
