// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-flow sequence tracking: see seqtrack.h for the rules. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "seqtrack.h"

#define LOST_CAP_MIN 16

int seqtrack__init(struct seqtrack *t, uint32_t window, uint64_t timeout_ns,
		   uint32_t max_flows)
{
	memset(t, 0, sizeof(*t));
	if (!window || window > SEQ_WINDOW_MAX || !max_flows)
		return -EINVAL;
	t->window = window;
	t->timeout_ns = timeout_ns;
	t->max_flows = max_flows;
	return 0;
}

static void flow_free(struct seq_flow *f)
{
	free(f->bits);
	free(f->lost_v);
	memset(f, 0, sizeof(*f));
}

void seqtrack__reset(struct seqtrack *t)
{
	for (uint32_t i = 0; i < t->nflows; i++)
		flow_free(&t->flows[i]);
	t->nflows = 0;
	t->refused = 0;
}

void seqtrack__free(struct seqtrack *t)
{
	seqtrack__reset(t);
	free(t->flows);
	t->flows = NULL;
	t->cap = 0;
}

int seqtrack__size(struct seqtrack *t, uint32_t n)
{
	if (n > t->max_flows)
		return -ERANGE;
	if (n > t->cap) {
		uint32_t cap = t->cap ? t->cap : 4;
		struct seq_flow *v;

		while (cap < n)
			cap *= 2;
		if (cap > t->max_flows)
			cap = t->max_flows;
		v = realloc(t->flows, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + t->cap, 0, (cap - t->cap) * sizeof(*v));
		t->flows = v;
		t->cap = cap;
	}
	if (n > t->nflows)
		t->nflows = n;
	return 0;
}

const struct seq_flow *seqtrack__flow(const struct seqtrack *t, uint32_t flow)
{
	return flow < t->nflows ? &t->flows[flow] : NULL;
}

/* ---- the window bits --------------------------------------------- */

static inline uint32_t slot_of(const struct seqtrack *t, uint64_t seq)
{
	return seq % t->window;
}

static inline bool bit_test(const struct seqtrack *t, const struct seq_flow *f,
			    uint64_t seq)
{
	uint32_t s = slot_of(t, seq);

	return f->bits[s / 64] & (1ull << (s % 64));
}

static inline void bit_set(const struct seqtrack *t, struct seq_flow *f,
			   uint64_t seq)
{
	uint32_t s = slot_of(t, seq);

	f->bits[s / 64] |= 1ull << (s % 64);
	f->inwin++;
}

static inline void bit_clear(const struct seqtrack *t, struct seq_flow *f,
			     uint64_t seq)
{
	uint32_t s = slot_of(t, seq);

	f->bits[s / 64] &= ~(1ull << (s % 64));
	f->inwin--;
}

/* ---- the lost ranges: ascending, disjoint ------------------------ */

/*
 * Forget the n oldest ranges. At the cap, a quarter goes at once, so the
 * shift costs a constant per loss event on average even under heavy loss.
 */
static void lost_forget(struct seq_flow *f, int n)
{
	if (n > f->nlost)
		n = f->nlost;
	if (n <= 0)
		return;
	/* below the newest forgotten range's end, a hole may be unknown */
	if (f->lost_v[n - 1].end > f->horizon)
		f->horizon = f->lost_v[n - 1].end;
	memmove(f->lost_v, f->lost_v + n, (f->nlost - n) * sizeof(*f->lost_v));
	f->nlost -= n;
}

/* Room for one more range; false when none could be made. */
static bool lost_room(struct seq_flow *f)
{
	if (f->nlost < f->lost_cap)
		return true;
	if (f->lost_cap < SEQ_LOST_RANGES) {
		int cap = f->lost_cap ? f->lost_cap * 2 : LOST_CAP_MIN;
		struct seq_range *v = realloc(f->lost_v, cap * sizeof(*v));

		if (v) {
			f->lost_v = v;
			f->lost_cap = cap;
			return true;
		}
		if (!f->nlost)
			return false; /* no memory at all: nothing to forget */
	}
	lost_forget(f, f->nlost > 4 ? f->nlost / 4 : f->nlost);
	return f->nlost < f->lost_cap;
}

/* [a, b) is lost: always counted; remembered while there is room. */
static void mark_lost(struct seq_flow *f, uint64_t a, uint64_t b)
{
	if (a >= b)
		return;
	f->lost += b - a;
	if (f->nlost && f->lost_v[f->nlost - 1].end == a) {
		f->lost_v[f->nlost - 1].end = b;
		return;
	}
	if (!lost_room(f)) {
		/* out of memory: forget this range, as if it were the oldest */
		if (b > f->horizon)
			f->horizon = b;
		return;
	}
	f->lost_v[f->nlost++] = (struct seq_range){ a, b };
}

/* The index of the range holding seq, or -1. */
static int lost_find(const struct seq_flow *f, uint64_t seq)
{
	int lo = 0, hi = f->nlost - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (seq < f->lost_v[mid].start)
			hi = mid - 1;
		else if (seq >= f->lost_v[mid].end)
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}

/*
 * Take seq out of the lost ranges. true if it was there (it is no longer
 * lost); false if it is not known to have been lost.
 */
static bool lost_take(struct seq_flow *f, uint64_t seq)
{
	int i = lost_find(f, seq);
	struct seq_range *r;

	if (i < 0)
		return false;
	r = &f->lost_v[i];
	if (r->start == seq && r->end == seq + 1) {
		memmove(r, r + 1, (f->nlost - i - 1) * sizeof(*r));
		f->nlost--;
	} else if (r->start == seq) {
		r->start++;
	} else if (r->end == seq + 1) {
		r->end--;
	} else {
		struct seq_range tail = { seq + 1, r->end };

		/* the split needs a slot; making one may forget the oldest */
		/*
		 * lost_room fails only with no ranges at all, and may forget
		 * the oldest ones, this one among them: then seq stays counted
		 * lost, below the horizon (stale), which keeps the sums right.
		 */
		if (!lost_room(f) || (i = lost_find(f, seq)) < 0)
			return false;
		r = &f->lost_v[i];
		r->end = seq;
		memmove(r + 2, r + 1, (f->nlost - i - 1) * sizeof(*r));
		r[1] = tail;
		f->nlost++;
	}
	f->lost--;
	return true;
}

/* ---- sliding -------------------------------------------------------- */

/* Settle [low, upto) (upto <= next): holes there are lost now. */
static void settle(const struct seqtrack *t, struct seq_flow *f, uint64_t upto)
{
	uint64_t hole = f->low; /* start of the current run of holes */

	for (uint64_t q = f->low; q < upto; q++) {
		if (bit_test(t, f, q)) {
			mark_lost(f, hole, q);
			hole = q + 1;
			bit_clear(t, f, q); /* the slot is the next seqs' */
		}
	}
	mark_lost(f, hole, upto);
	f->low = upto;
}

/* seq >= next: it becomes the highest; the window follows it. */
static void advance(const struct seqtrack *t, struct seq_flow *f, uint64_t seq)
{
	uint64_t next = seq + 1;
	uint64_t low = next > t->window ? next - t->window : 0;

	if (low > f->low) {
		settle(t, f, low < f->next ? low : f->next);
		if (low > f->next) {
			/* a jump past the whole window: never seen, lost at once */
			mark_lost(f, f->next, low);
		}
		f->low = low;
	}
	f->next = next;
}

static struct seq_flow *flow_get(struct seqtrack *t, uint32_t flow, int *err)
{
	struct seq_flow *f;

	*err = 0;
	if (flow >= t->max_flows) {
		*err = -ERANGE;
		return NULL;
	}
	if (flow >= t->nflows) {
		*err = seqtrack__size(t, flow + 1);
		if (*err)
			return NULL;
	}
	f = &t->flows[flow];
	if (!f->bits) {
		f->bits = calloc((t->window + 63) / 64, sizeof(uint64_t));
		if (!f->bits) {
			*err = -ENOMEM;
			return NULL;
		}
	}
	return f;
}

int seqtrack__add(struct seqtrack *t, uint32_t flow, uint64_t seq,
		  uint64_t now_ns, unsigned int flags)
{
	bool unread = flags & SEQ_UNREAD;
	struct seq_flow *f;
	uint64_t next;
	int err;

	if (flow >= t->max_flows)
		return -ERANGE;
	/*
	 * Numbers no sender reaches, checked before anything changes: seq + 1
	 * must not wrap (advance), and one datagram must not call 2^62 lost.
	 */
	next = flow < t->nflows ? t->flows[flow].next : 0;
	if (seq >= SEQ_LIMIT || (seq > next && seq - next > SEQ_JUMP_MAX)) {
		t->refused++;
		return -EINVAL;
	}
	f = flow_get(t, flow, &err);
	if (!f)
		return err;
	f->seen = true;
	f->last_ns = now_ns;
	if (f->have_total && seq >= f->total) {
		f->beyond++;
		return SEQ_BEYOND;
	}
	if (seq >= f->next) {
		advance(t, f, seq);
		bit_set(t, f, seq);
		if (unread)
			f->unread++;
		else
			f->read++;
		return SEQ_NEW;
	}
	if (seq >= f->low) {
		if (bit_test(t, f, seq)) {
			f->duplicates++;
			return SEQ_DUP;
		}
		bit_set(t, f, seq);
		if (unread) {
			f->unread++;
		} else {
			f->read++;
			f->reordered++;
		}
		return SEQ_REORDERED;
	}
	/* below the window: settled, as read or as lost */
	if (!lost_take(f, seq)) {
		if (seq < f->horizon) {
			f->stale++; /* its range may have been forgotten */
			return SEQ_STALE;
		}
		f->duplicates++;
		return SEQ_DUP;
	}
	if (unread) {
		f->unread++;
	} else {
		f->read++;
		f->reordered++;
		f->late++;
	}
	return SEQ_LATE;
}

int seqtrack__set_total(struct seqtrack *t, uint32_t flow, uint64_t total,
			unsigned int flags)
{
	struct seq_flow *f;
	int err;

	if (flow >= t->max_flows)
		return -ERANGE;
	if (total > SEQ_LIMIT)
		return -EINVAL;
	f = flow_get(t, flow, &err);
	if (!f)
		return err;
	if (f->total_last)
		return 0; /* the last datagram's (or DONE's) total stands */
	f->have_total = true;
	f->total = total;
	f->total_last = flags & SEQ_TOTAL_LAST;
	return 0;
}

uint64_t seqtrack__expire(struct seqtrack *t, uint64_t now_ns)
{
	uint64_t n = 0;

	if (!t->timeout_ns)
		return 0;
	for (uint32_t i = 0; i < t->nflows; i++) {
		struct seq_flow *f = &t->flows[i];
		uint64_t before = f->lost;

		if (!f->seen || f->low == f->next || now_ns < f->last_ns ||
		    now_ns - f->last_ns < t->timeout_ns)
			continue;
		settle(t, f, f->next);
		n += f->lost - before;
	}
	return n;
}

void seqtrack__finish(struct seqtrack *t)
{
	for (uint32_t i = 0; i < t->nflows; i++) {
		struct seq_flow *f = &t->flows[i];

		if (f->bits)
			settle(t, f, f->next);
		if (f->have_total && f->total > f->next) {
			mark_lost(f, f->next, f->total);
			f->next = f->low = f->total;
		}
	}
}

bool seqtrack__complete(const struct seqtrack *t)
{
	if (!t->nflows)
		return false;
	for (uint32_t i = 0; i < t->nflows; i++) {
		const struct seq_flow *f = &t->flows[i];

		if (!f->have_total || f->next < f->total || (!f->seen && f->total))
			return false;
	}
	return true;
}

uint64_t seqtrack__holes(const struct seqtrack *t)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < t->nflows; i++)
		n += t->flows[i].next - t->flows[i].low - t->flows[i].inwin;
	return n;
}

void seqtrack__sum(const struct seqtrack *t, struct seq_flow *s)
{
	memset(s, 0, sizeof(*s));
	for (uint32_t i = 0; i < t->nflows; i++) {
		const struct seq_flow *f = &t->flows[i];

		s->seen |= f->seen;
		s->read += f->read;
		s->unread += f->unread;
		s->lost += f->lost;
		s->reordered += f->reordered;
		s->late += f->late;
		s->duplicates += f->duplicates;
		s->stale += f->stale;
		s->beyond += f->beyond;
		if (f->last_ns > s->last_ns)
			s->last_ns = f->last_ns;
	}
}
