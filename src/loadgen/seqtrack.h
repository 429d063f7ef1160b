/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Sequence tracking for the sink: per flow, which sequence numbers were
 * read, and from the holes, how many datagrams were lost, reordered or
 * duplicated. Pure (no clock, no I/O): the caller passes the time in.
 *
 * Each flow keeps a reorder window of the `window` sequence numbers below
 * the highest seen, one bit each. A hole is not called lost at once: the
 * datagram may only be late. It is lost when the window slides past it,
 * when the flow has been quiet for the loss timeout (seqtrack__expire), or
 * at the end (seqtrack__finish; with the flow's total known, the tail that
 * never arrived is lost too). A datagram that turns up after it was called
 * lost is found in the flow's list of lost ranges and taken back out: it
 * was read, late ("late", counted as reordered too). Sequence numbers below
 * the window and not in a lost range were read before: duplicates. The
 * list holds SEQ_LOST_RANGES ranges; past that the oldest are forgotten
 * and an arrival there cannot be told from a duplicate ("stale", counted
 * in neither read nor duplicates). An arrival at or past the flow's known
 * total is "beyond" (not the sender's), also in neither. Both are real
 * arrivals: a caller that balances them against another witness (the
 * sink's ledger, against XDP) must count them somewhere: see build_ledger
 * in sink_run.c.
 *
 * Sequence numbers no sender could have reached are refused (-EINVAL) and
 * change nothing: SEQ_LIMIT and above, and jumps of more than SEQ_JUMP_MAX
 * past a flow's next expected one (a forged 2^64 - 1 would wrap `next`).
 *
 * Invariant, per flow, once finished with its total known:
 *   read + unread + lost = total   (duplicates, stale, beyond are extra)
 */
#ifndef UD_SEQTRACK_H
#define UD_SEQTRACK_H

#include <stdbool.h>
#include <stdint.h>

#define SEQ_WINDOW_DEFAULT 64
#define SEQ_WINDOW_MAX (1u << 20)
#define SEQ_LOST_RANGES 1024    /* per flow, oldest forgotten first */
#define SEQ_LIMIT (1ull << 62)  /* sequence numbers (and totals) above: refused */
#define SEQ_JUMP_MAX (1ull << 40) /* further past a flow's next: refused */

/* seqtrack__add flags */
#define SEQ_UNREAD (1u << 0)    /* drained from the queue at the end: not
				   read by the application, but not lost */

/* seqtrack__set_total flags */
#define SEQ_TOTAL_LAST (1u << 0) /* from the flow's last datagram (or the
				    control channel): final, later totals
				    are ignored */

/* What seqtrack__add made of a datagram (>= 0), or a negative errno. */
enum seq_verdict {
	SEQ_NEW,        /* the highest so far (gap before it or not) */
	SEQ_REORDERED,  /* below the highest, inside the window, first time */
	SEQ_LATE,       /* already called lost: taken back (reordered too) */
	SEQ_DUP,        /* read before */
	SEQ_STALE,      /* too old to tell late from duplicate */
	SEQ_BEYOND,     /* at or past the flow's known total: not the sender's */
};

struct seq_range {
	uint64_t start, end; /* [start, end) */
};

struct seq_flow {
	bool seen;            /* any datagram of the flow arrived */
	bool have_total;
	bool total_last;      /* the total is final (SEQ_TOTAL_LAST) */
	uint64_t total;       /* datagrams the sender numbered (have_total) */
	uint64_t next;        /* one past the highest sequence number seen */
	uint64_t low;         /* the window: [low, next); below it is settled */
	uint64_t horizon;     /* below it, lost ranges may have been forgotten */
	uint64_t last_ns;     /* latest arrival */
	uint64_t *bits;       /* window bits, slot = seq % window */
	uint32_t inwin;       /* bits set: holes in the window = next - low - inwin */
	struct seq_range *lost_v; /* lost ranges, ascending, disjoint */
	int nlost, lost_cap;
	/* counts */
	uint64_t read;        /* unique sequence numbers read */
	uint64_t unread;      /* unique sequence numbers drained (SEQ_UNREAD) */
	uint64_t lost;        /* called lost and not taken back */
	uint64_t reordered;   /* read after a higher sequence number */
	uint64_t late;        /* ... of those, after they were called lost */
	uint64_t duplicates;  /* read again (not in read) */
	uint64_t stale;       /* see above (not in read) */
	uint64_t beyond;      /* at or past a known total (not in read) */
};

struct seqtrack {
	uint32_t window;      /* reorder window, sequence numbers */
	uint64_t timeout_ns;  /* loss timeout; 0: only the window and the end */
	uint32_t max_flows;   /* flow ids at or above: -ERANGE */
	uint32_t nflows;      /* one past the highest flow id seen or sized */
	uint32_t cap;
	struct seq_flow *flows;
	uint64_t refused;     /* seqtrack__add -EINVAL: no sender's number */
};

/* 0, or -EINVAL (window 0 or above SEQ_WINDOW_MAX, max_flows 0). */
int seqtrack__init(struct seqtrack *t, uint32_t window, uint64_t timeout_ns,
		   uint32_t max_flows);
void seqtrack__free(struct seqtrack *t);
/* Forget every flow (a new run); the options stay. */
void seqtrack__reset(struct seqtrack *t);
/* Make flows 0 .. n-1 exist (a run that announced its flows). */
int seqtrack__size(struct seqtrack *t, uint32_t n);
/*
 * One datagram: a verdict, or -ERANGE (flow id too high), -EINVAL (a
 * sequence number no sender reaches: counted in `refused`, nothing else
 * changes, the flow is not even created), -ENOMEM.
 */
int seqtrack__add(struct seqtrack *t, uint32_t flow, uint64_t seq,
		  uint64_t now_ns, unsigned int flags);
/*
 * The sender's total for a flow (a datagram's, UG_F_LAST's, or the
 * control channel's). Once one came with SEQ_TOTAL_LAST, later ones are
 * ignored (0). -EINVAL above SEQ_LIMIT, -ERANGE for the flow id.
 */
int seqtrack__set_total(struct seqtrack *t, uint32_t flow, uint64_t total,
			unsigned int flags);
/*
 * Loss timeout: holes of flows quiet since now - timeout are lost.
 * Returns the datagrams newly called lost.
 */
uint64_t seqtrack__expire(struct seqtrack *t, uint64_t now_ns);
/* The end: every hole is lost, and with a total, the missing tail. */
void seqtrack__finish(struct seqtrack *t);
/*
 * Has every flow's tail arrived (total known and next == total)? A flow
 * that exists (below the highest flow id seen, or sized) but was never
 * seen is not complete unless its total is 0.
 */
bool seqtrack__complete(const struct seqtrack *t);
/* Holes in the windows of all flows: datagrams that may still come. */
uint64_t seqtrack__holes(const struct seqtrack *t);
/* NULL if the flow does not exist. */
const struct seq_flow *seqtrack__flow(const struct seqtrack *t, uint32_t flow);
/* The counts summed over flows (pointers and window state left zero). */
void seqtrack__sum(const struct seqtrack *t, struct seq_flow *sum);

#endif
