// SPDX-License-Identifier: GPL-2.0
/*
 * Debug objects for ktimers (CONFIG_DEBUG_OBJECTS_KTIMERS)
 *
 * Tracks the life of every ktimer the way CONFIG_DEBUG_OBJECTS_TIMERS
 * tracks hrtimers and timer_lists, so that the three caller errors which
 * would otherwise corrupt a queue are caught, reported once by the debug
 * objects core and repaired:
 *
 *  - initialising a timer that is still pending: the timer is stopped
 *    first, so its queue never holds the cleared node;
 *  - freeing a pending timer: the timer is stopped before the memory goes;
 *  - using memory that was never initialised as a timer: the timer is set
 *    up as an unbound one, and the call that found it returns -EINVAL
 *    instead of following a garbage base pointer.
 */

#include <linux/atomic.h>
#include <linux/debugobjects.h>
#include <linux/ktimer.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#include "ktimer_internal.h"

static const struct debug_obj_descr ktimer_debug_descr;

static atomic_t ktimer_fixups[KTIMER_FIXUP_KINDS];

static void *ktimer_debug_hint(void *addr)
{
	return ((struct ktimer *)addr)->function;
}

/* Re-initialising a pending timer: take it out of its queue first */
static bool ktimer_fixup_init(void *addr, enum debug_obj_state state)
{
	struct ktimer *timer = addr;

	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	stop_ktimer(timer);
	debug_object_init(timer, &ktimer_debug_descr);
	atomic_inc(&ktimer_fixups[KTIMER_FIXUP_INIT]);
	return true;
}

/*
 * Queuing a timer that is queued already would be a bug in ktimer.c
 * itself, not in a caller: nothing to repair, only to report.
 */
static bool ktimer_fixup_activate(void *addr, enum debug_obj_state state)
{
	WARN_ON_ONCE(state == ODEBUG_STATE_ACTIVE);
	return false;
}

/* Freeing a pending timer: stop it while its memory is still there */
static bool ktimer_fixup_free(void *addr, enum debug_obj_state state)
{
	struct ktimer *timer = addr;

	if (state != ODEBUG_STATE_ACTIVE)
		return false;
	stop_ktimer(timer);
	debug_object_free(timer, &ktimer_debug_descr);
	atomic_inc(&ktimer_fixups[KTIMER_FIXUP_FREE]);
	return true;
}

/*
 * A timer that was never initialised: make it a timer bound to no clock.
 * Its base is then NULL, which every entry point refuses with -EINVAL, so
 * the bytes that were there are never taken for a queue linkage or a base.
 * timer_list's fixup installs a stub in the same spirit.
 */
static bool ktimer_fixup_assert_init(void *addr, enum debug_obj_state state)
{
	struct ktimer *timer = addr;

	if (state != ODEBUG_STATE_NOTAVAILABLE)
		return false;
	memset(timer, 0, sizeof(*timer));
	RB_CLEAR_NODE(&timer->node);
	debug_object_init(timer, &ktimer_debug_descr);
	atomic_inc(&ktimer_fixups[KTIMER_FIXUP_ASSERT_INIT]);
	return true;
}

static const struct debug_obj_descr ktimer_debug_descr = {
	.name			= "ktimer",
	.debug_hint		= ktimer_debug_hint,
	.fixup_init		= ktimer_fixup_init,
	.fixup_activate		= ktimer_fixup_activate,
	.fixup_free		= ktimer_fixup_free,
	.fixup_assert_init	= ktimer_fixup_assert_init,
};

void ktimer_debug_init(struct ktimer *timer, bool onstack)
{
	if (onstack)
		debug_object_init_on_stack(timer, &ktimer_debug_descr);
	else
		debug_object_init(timer, &ktimer_debug_descr);
}

void ktimer_debug_activate(struct ktimer *timer)
{
	debug_object_activate(timer, &ktimer_debug_descr);
}

void ktimer_debug_deactivate(struct ktimer *timer)
{
	debug_object_deactivate(timer, &ktimer_debug_descr);
}

void ktimer_debug_assert_init(struct ktimer *timer)
{
	debug_object_assert_init(timer, &ktimer_debug_descr);
}

void ktimer_debug_free(struct ktimer *timer)
{
	debug_object_free(timer, &ktimer_debug_descr);
}

/**
 * ktimer_debug_fixups - how often a kind of caller error was repaired
 * @kind: one of enum ktimer_fixup_kind
 *
 * For the KUnit tests: the debug objects core prints only its first few
 * reports per boot, so a test checks this counter to see that its own
 * provocation was caught.
 *
 * Return: the number of repairs of @kind since boot.
 */
unsigned int ktimer_debug_fixups(enum ktimer_fixup_kind kind)
{
	if (kind >= KTIMER_FIXUP_KINDS)
		return 0;
	return atomic_read(&ktimer_fixups[kind]);
}
EXPORT_SYMBOL_IF_KUNIT(ktimer_debug_fixups);
