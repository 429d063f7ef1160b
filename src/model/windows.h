/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Drop windows: each socket's drops of each cause in consecutive 100 ms
 * windows of the kernel's clock (UD_WIN_NS; win_index in the programs),
 * the figures the advice judges a drop pattern by: in how many windows of
 * their stretch drops came (a steady overload: nearly all; a bursty
 * sender: few) and the most in one (the burst a buffer must absorb).
 *
 * The kernel counts them (bpf/udpdrop.bpf.c, win_count); the tracer hands
 * each CPU's closed windows over; this sums the CPUs' parts of a window
 * and folds the windows every CPU has closed into per-(socket, cause)
 * figures. top and doctor feed it from the tracer, report from the
 * WINDOWS records a recording wrote of what its own copy folded: the same
 * windows, the same figures, in every view of one run.
 *
 * Pure: no I/O, no kernel. Errors are 0 or -ENOMEM.
 */
#ifndef UD_WINDOWS_H
#define UD_WINDOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "htab.h"

/* One socket's (or identity's) windows of one cause, in time order. */
struct win_agg {
	uint32_t first, last;      /* window indexes (the kernel's: win_index) */
	uint64_t first_n, last_n;  /* datagrams in those two */
	uint64_t dropping;         /* windows with drops */
	uint64_t best;             /* the most datagrams in one window */
	uint64_t datagrams;        /* in all of them */
	uint64_t delivered;        /* the socket's deliveries in those windows
				      (when they are counted: the caller knows) */
	uint64_t stalled;          /* the latest run of them with no delivery */
};

/*
 * The cause number a window of a socket's deliveries goes by (not a drop
 * cause): the fold adds each to the same socket's drop windows of the same
 * window, and keeps it (folded, for a recording) only where it is one.
 */
#define WIN_DELIVERED 0xffff

/*
 * Add a window of n datagrams (n > 0). Windows come in time order: one
 * equal to the last is more of it; an earlier one (not expected: the
 * fold goes in order) is counted as one more window, never merged.
 */
void win_agg__add(struct win_agg *a, uint32_t win, uint64_t n);
/* Put b's windows after a's (a socket known first by inode, then by
 * cookie: a's windows all come before b's, the last maybe the same one). */
void win_agg__join(struct win_agg *a, const struct win_agg *b);
/* Windows from the first with drops to the last (0 for none). */
uint64_t win_agg__span(const struct win_agg *a);

/* A window folded: what a recording writes (TRACE_WINDOWS). */
struct win_folded {
	uint64_t id;    /* socket identity (sockid.h) */
	uint16_t cause; /* enum cause */
	uint32_t win;
	uint64_t datagrams;
};

struct windows {
	struct htab pending;       /* struct win_pkey -> uint64_t: not yet folded */
	struct htab aggs;          /* struct win_akey -> struct win_agg */
	struct win_folded *folded; /* what the last windows__fold folded (with
				      keep_folded: every fold since the caller
				      last set nfolded to 0: a recording's) */
	size_t nfolded, cap;
	bool keep_folded;
};

int windows__init(struct windows *w);
void windows__free(struct windows *w);
/* A part of a window (one CPU's, or a recorded whole): summed until folded. */
int windows__add(struct windows *w, uint64_t id, int cause, uint32_t win, uint64_t n);
/*
 * Fold every pending window before `before` (all CPUs have closed it) into
 * its socket's figures, in time order; the folded ones are listed in
 * w->folded until the next call (keep_folded: added to it). UINT32_MAX
 * folds them all (the end).
 */
int windows__fold(struct windows *w, uint32_t before);
/*
 * A socket counted by inode before a dump gave it a cookie: its figures
 * go to the cookie's. join(arg, id) is the row an identity counts on
 * (sockid__row); figures whose identity now joins elsewhere move there.
 */
int windows__rejoin(struct windows *w, uint64_t (*join)(void *arg, uint64_t id), void *arg);
/*
 * Forget the figures of sockets no view shows one by one any more (closed
 * long ago, folded into one row per netns): ids is a table whose keys are
 * socket identities (uint64_t). 0 or -ENOMEM.
 */
int windows__forget(struct windows *w, const struct htab *ids);
/* The figures of one socket and cause; NULL when it has none. */
const struct win_agg *windows__find(const struct windows *w, uint64_t id, int cause);

#endif
