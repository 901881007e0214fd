/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trace events for ktimers, modelled on the hrtimer events in timer.h:
 * init, start, expire entry/exit and cancel.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ktimer

#if !defined(_TRACE_KTIMER_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_KTIMER_H

#include <linux/ktimer.h>
#include <linux/tracepoint.h>

TRACE_EVENT(ktimer_init,
	    TP_PROTO(struct ktimer *timer, struct ktimer_clock *clock),
	    TP_ARGS(timer, clock),
	    TP_STRUCT__entry(__field(void *, timer)
			     __field(clockid_t, clockid)),
	    TP_fast_assign(__entry->timer = timer;
			   __entry->clockid = clock->clockid;),
	    TP_printk("ktimer=%p clockid=%d", __entry->timer, __entry->clockid)
);

TRACE_EVENT(ktimer_start,
	    TP_PROTO(struct ktimer *timer, int mode),
	    TP_ARGS(timer, mode),
	    TP_STRUCT__entry(__field(void *, timer)
			     __field(void *, function)
			     __field(s64, expires)
			     __field(s64, interval)
			     __field(int, mode)),
	    TP_fast_assign(__entry->timer = timer;
			   __entry->function = timer->function;
			   __entry->expires = timer->expires;
			   __entry->interval = timer->interval;
			   __entry->mode = mode;),
	    TP_printk("ktimer=%p function=%ps expires=%lld interval=%lld mode=%#x",
		      __entry->timer, __entry->function, __entry->expires,
		      __entry->interval, __entry->mode)
);

TRACE_EVENT(ktimer_expire_entry,
	    TP_PROTO(struct ktimer *timer, ktime_t now),
	    TP_ARGS(timer, now),
	    TP_STRUCT__entry(__field(void *, timer)
			     __field(void *, function)
			     __field(s64, expires)
			     __field(s64, now)),
	    TP_fast_assign(__entry->timer = timer;
			   __entry->function = timer->function;
			   __entry->expires = timer->expires;
			   __entry->now = now;),
	    TP_printk("ktimer=%p function=%ps expires=%lld now=%lld",
		      __entry->timer, __entry->function, __entry->expires,
		      __entry->now)
);

/* Only the pointer: the callback may have freed the timer by now */
DECLARE_EVENT_CLASS(ktimer_class,
		    TP_PROTO(struct ktimer *timer),
		    TP_ARGS(timer),
		    TP_STRUCT__entry(__field(void *, timer)),
		    TP_fast_assign(__entry->timer = timer;),
		    TP_printk("ktimer=%p", __entry->timer)
);

DEFINE_EVENT(ktimer_class, ktimer_expire_exit,
	     TP_PROTO(struct ktimer *timer),
	     TP_ARGS(timer)
);

DEFINE_EVENT(ktimer_class, ktimer_cancel,
	     TP_PROTO(struct ktimer *timer),
	     TP_ARGS(timer)
);

#endif /* _TRACE_KTIMER_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
