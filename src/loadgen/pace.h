/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The sender's schedule: slot k is due at t0 + k * period, on an absolute
 * grid, so rounding and late wake-ups never accumulate into drift. Pure
 * bookkeeping on times the caller passes in (nanoseconds, any monotonic
 * origin), plus one waiting helper that takes an injectable clock, so
 * every rule here can be checked exactly without sleeping.
 *
 * Lateness below stall_ns (pace__set_stall; 0 by default) is not a
 * stall: the late slots go out in order, as fast as they can, until the
 * sender is back on the grid (a hiccup of a few slots at a high rate is
 * the kernel's own transmit work on this CPU, not the process stopping).
 *
 * A stall (the process was not running when slots came due):
 *   - by default the first due slot goes out late (its lateness shows the
 *     stall), the others that came due meanwhile are skipped and counted
 *     as missed, and the grid is re-anchored at that send: the next slot
 *     is due one full period later, so a stall never turns into a burst;
 *   - with catch_up every due slot goes out, back to back (a burst).
 *
 * A burst (pace__sent): a slot handed to the kernel less than half a
 * period after the previous slot was. All its datagrams count as sent in
 * a burst; the datagrams of one slot (the --burst batch) are meant to go
 * together and never count among themselves.
 */
#ifndef UD_PACE_H
#define UD_PACE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* The period is kept in 2^-32 ns (128-bit): 1e12 slots of any period are
 * within 1 ns of the ideal grid, and k * period never overflows. */
#define PACE_FP_SHIFT 32
#define PACE_MIN_PERIOD_NS 100.0          /* below: no clock or syscall keeps up */
#define PACE_MAX_PERIOD_NS 3600e9         /* one slot an hour */
#define PACE_SPIN_MIN_NS 20000ull         /* pace__wait's spin margin, bounds */
#define PACE_SPIN_INIT_NS 50000ull
#define PACE_SPIN_MAX_NS 1000000ull

struct pace {
	unsigned __int128 period_fp; /* ns << PACE_FP_SHIFT; 0: unpaced (always due) */
	uint64_t t0;          /* the anchor: slot k is due at t0 + k * period */
	uint64_t k;           /* the next slot, counted from the anchor */
	bool catch_up;
	uint64_t stall_ns;    /* lateness that counts as a stall (beyond one period) */
	/* cumulative */
	uint64_t slots;       /* slots taken */
	uint64_t missed;      /* slots skipped after stalls (never with catch_up) */
	uint64_t reanchors;   /* stalls that re-anchored the grid */
	uint64_t dgrams;      /* datagrams pace__sent was told of */
	uint64_t burst_dgrams;/* ... of them in bursts */
	/* the previous slot's send, for the burst test */
	uint64_t last_sent;
	bool have_last;
	/* pace__wait: how long before a slot to stop sleeping and spin */
	uint64_t spin_ns;
};

/* The slot the caller is about to send. */
struct pace_slot {
	uint64_t sched;       /* when it was due (unpaced: when taken) */
	uint64_t missed;      /* slots skipped right before it */
};

/*
 * period_ns 0: unpaced. Else PACE_MIN_PERIOD_NS..PACE_MAX_PERIOD_NS, or
 * -ERANGE (NaN and negatives too). The first slot is due at t0.
 */
int pace__init(struct pace *p, double period_ns, uint64_t t0, bool catch_up);
/* Lateness up to ns (and one period in any case) is made up, not skipped. */
void pace__set_stall(struct pace *p, uint64_t ns);
/* When slot k of the current anchor is due. */
uint64_t pace__slot_time(const struct pace *p, uint64_t k);
/* When the next slot is due (unpaced: 0, always). */
uint64_t pace__due(const struct pace *p);
/*
 * Take the next slot at `now` (normally at or just after pace__due):
 * fills s, applies the stall rule above, and moves on.
 */
void pace__take(struct pace *p, uint64_t now, struct pace_slot *s);
/*
 * The slot's n datagrams were handed to the kernel at t: burst
 * bookkeeping. Returns the slot's lateness, t - s->sched (0 if early).
 */
uint64_t pace__sent(struct pace *p, const struct pace_slot *s, uint64_t t,
		    uint64_t n);
/* burst_dgrams / dgrams; 0 before any. */
double pace__burst_share(const struct pace *p);

/* Time, injectable: tests pass a fake. */
struct pace_clock {
	uint64_t (*now)(void *ctx);
	/* Sleep until t (absolute, same clock); may return early (a signal). */
	void (*sleep_until)(void *ctx, uint64_t t);
	void *ctx;
};
/* CLOCK_MONOTONIC, clock_nanosleep(TIMER_ABSTIME). */
extern const struct pace_clock pace_clock_monotonic;

/*
 * Wait until `until`: sleep until spin_ns before it, then spin on the
 * clock, as a timer wake-up is late by tens of microseconds and varies.
 * The margin learns: an oversleep of x raises it to 2x (at most
 * PACE_SPIN_MAX_NS); wake-ups on time lower it slowly (to PACE_SPIN_MIN_NS).
 * Returns the clock at the end: >= until, unless *stop was set.
 */
uint64_t pace__wait(struct pace *p, const struct pace_clock *c, uint64_t until,
		    const volatile sig_atomic_t *stop);

#endif
