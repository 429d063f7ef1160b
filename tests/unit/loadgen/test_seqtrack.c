// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for src/loadgen/seqtrack.c: gaps, late arrivals inside and beyond the
 * reorder window, duplicates, the window bitmap wrapping, the loss
 * timeout, tail loss with a known total, the lost-range memory's cap, and
 * a randomized comparison with a reference that remembers every seq.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "seqtrack.h"

#define MS 1000000ull

static struct seqtrack *mk(uint32_t window, uint64_t timeout_ns)
{
	struct seqtrack *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	assert_int_equal(seqtrack__init(t, window, timeout_ns, 16), 0);
	return t;
}

static void rm(struct seqtrack *t)
{
	seqtrack__free(t);
	free(t);
}

static const struct seq_flow *F(struct seqtrack *t, uint32_t flow)
{
	const struct seq_flow *f = seqtrack__flow(t, flow);

	assert_non_null(f);
	return f;
}

static void add(struct seqtrack *t, uint32_t flow, uint64_t seq, int want)
{
	assert_int_equal(seqtrack__add(t, flow, seq, 0, 0), want);
}

static void add_range(struct seqtrack *t, uint32_t flow, uint64_t a, uint64_t b)
{
	for (uint64_t s = a; s < b; s++)
		add(t, flow, s, SEQ_NEW);
}

/* read + unread + lost = total, once finished with the total known */
static void assert_balanced(const struct seq_flow *f)
{
	assert_true(f->have_total);
	assert_true(f->read + f->unread + f->lost == f->total);
}

static void test_init_errors(void **state)
{
	struct seqtrack t;

	assert_int_equal(seqtrack__init(&t, 0, 0, 1), -EINVAL);
	assert_int_equal(seqtrack__init(&t, SEQ_WINDOW_MAX + 1, 0, 1), -EINVAL);
	assert_int_equal(seqtrack__init(&t, 64, 0, 0), -EINVAL);
	assert_int_equal(seqtrack__init(&t, 64, 0, 2), 0);
	assert_int_equal(seqtrack__add(&t, 2, 0, 0, 0), -ERANGE);
	assert_int_equal(seqtrack__set_total(&t, 7, 1, 0), -ERANGE);
	assert_int_equal(seqtrack__size(&t, 3), -ERANGE);
	assert_null(seqtrack__flow(&t, 0));
	assert_int_equal(seqtrack__add(&t, 1, 0, 0, 0), SEQ_NEW);
	/* flow 1 made flow 0 exist too, unseen */
	assert_false(F(&t, 0)->seen);
	assert_true(F(&t, 1)->seen);
	seqtrack__free(&t);
}

static void test_in_order(void **state)
{
	struct seqtrack *t = mk(64, 0);

	add_range(t, 0, 0, 1000);
	seqtrack__set_total(t, 0, 1000, 0);
	assert_true(seqtrack__complete(t));
	seqtrack__finish(t);
	const struct seq_flow *f = F(t, 0);

	assert_int_equal(f->read, 1000);
	assert_int_equal(f->lost, 0);
	assert_int_equal(f->reordered, 0);
	assert_int_equal(f->duplicates, 0);
	assert_balanced(f);
	rm(t);
}

static void test_gap_called_lost_when_window_passes(void **state)
{
	struct seqtrack *t = mk(64, 0);

	add_range(t, 0, 0, 10);
	add_range(t, 0, 15, 74);
	/* window [10, 74): 10..14 still in it, maybe only late */
	assert_int_equal(F(t, 0)->lost, 0);
	add_range(t, 0, 74, 78); /* window [14, 78) */
	assert_int_equal(F(t, 0)->lost, 4);
	add(t, 0, 78, SEQ_NEW); /* window [15, 79): 10..14 left it */
	assert_int_equal(F(t, 0)->lost, 5);
	add_range(t, 0, 79, 100);
	seqtrack__finish(t);
	assert_int_equal(F(t, 0)->read, 95);
	assert_int_equal(F(t, 0)->lost, 5);
	assert_int_equal(F(t, 0)->nlost, 1); /* one range */
	rm(t);
}

static void test_late_within_window(void **state)
{
	struct seqtrack *t = mk(8, 0);

	add(t, 0, 0, SEQ_NEW);
	add(t, 0, 1, SEQ_NEW);
	add(t, 0, 3, SEQ_NEW);
	add(t, 0, 5, SEQ_NEW);
	assert_int_equal(seqtrack__holes(t), 2);
	add(t, 0, 2, SEQ_REORDERED);
	add(t, 0, 4, SEQ_REORDERED);
	assert_int_equal(seqtrack__holes(t), 0);
	seqtrack__set_total(t, 0, 6, 0);
	seqtrack__finish(t);
	const struct seq_flow *f = F(t, 0);

	assert_int_equal(f->read, 6);
	assert_int_equal(f->reordered, 2);
	assert_int_equal(f->late, 0);
	assert_int_equal(f->lost, 0);
	assert_balanced(f);
	rm(t);
}

static void test_late_beyond_window(void **state)
{
	struct seqtrack *t = mk(4, 0);

	add(t, 0, 0, SEQ_NEW);
	add(t, 0, 1, SEQ_NEW);
	add_range(t, 0, 4, 9); /* window [5, 9): 2 and 3 called lost */
	assert_int_equal(F(t, 0)->lost, 2);
	add(t, 0, 3, SEQ_LATE);
	assert_int_equal(F(t, 0)->lost, 1);
	add(t, 0, 3, SEQ_DUP); /* taken back once only */
	add(t, 0, 2, SEQ_LATE);
	add(t, 0, 2, SEQ_DUP);
	const struct seq_flow *f = F(t, 0);

	assert_int_equal(f->lost, 0);
	assert_int_equal(f->nlost, 0);
	assert_int_equal(f->read, 9);
	assert_int_equal(f->reordered, 2);
	assert_int_equal(f->late, 2);
	assert_int_equal(f->duplicates, 2);
	rm(t);
}

static void test_late_splits_a_range(void **state)
{
	struct seqtrack *t = mk(4, 0);

	add(t, 0, 0, SEQ_NEW);
	add(t, 0, 20, SEQ_NEW); /* 1..16 lost at once (window [17, 21)) */
	assert_int_equal(F(t, 0)->lost, 16);
	add(t, 0, 8, SEQ_LATE);  /* middle: two ranges */
	assert_int_equal(F(t, 0)->nlost, 2);
	add(t, 0, 1, SEQ_LATE);  /* a range's start */
	add(t, 0, 16, SEQ_LATE); /* a range's end */
	add(t, 0, 8, SEQ_DUP);
	add(t, 0, 17, SEQ_REORDERED); /* still in the window */
	seqtrack__set_total(t, 0, 21, 0);
	seqtrack__finish(t);
	const struct seq_flow *f = F(t, 0);

	assert_int_equal(f->lost, 21 - 6); /* read 0, 20, 8, 1, 16, 17 */
	assert_int_equal(f->read, 6);
	assert_int_equal(f->late, 3);
	assert_int_equal(f->reordered, 4);
	assert_int_equal(f->duplicates, 1);
	assert_balanced(f);
	rm(t);
}

static void test_duplicates(void **state)
{
	struct seqtrack *t = mk(16, 0);

	add(t, 0, 0, SEQ_NEW);
	add(t, 0, 0, SEQ_DUP);     /* the newest again */
	add_range(t, 0, 1, 10);
	add(t, 0, 5, SEQ_DUP);     /* inside the window */
	add_range(t, 0, 10, 100);
	add(t, 0, 3, SEQ_DUP);     /* far below the window: read before */
	const struct seq_flow *f = F(t, 0);

	assert_int_equal(f->read, 100);
	assert_int_equal(f->duplicates, 3);
	assert_int_equal(f->reordered, 0);
	assert_int_equal(f->lost, 0);
	rm(t);
}

/* Window sizes that are and are not a multiple of 64, over many wraps. */
static void check_wrap(uint32_t window)
{
	struct seqtrack *t = mk(window, 0);
	uint64_t n = 20 * window + 7, lost = 0;

	/* every 5th missing, every 3rd pair swapped (late by one) */
	for (uint64_t s = 0; s < n; s++) {
		if (s % 5 == 4) {
			lost++;
			continue;
		}
		if (s % 3 == 0 && s + 1 < n && (s + 1) % 5 != 4) {
			assert_int_equal(seqtrack__add(t, 0, s + 1, 0, 0), SEQ_NEW);
			assert_int_equal(seqtrack__add(t, 0, s, 0, 0),
					 window > 1 ? SEQ_REORDERED : SEQ_LATE);
			s++;
			continue;
		}
		assert_int_equal(seqtrack__add(t, 0, s, 0, 0), SEQ_NEW);
	}
	seqtrack__set_total(t, 0, n, 0);
	seqtrack__finish(t);
	const struct seq_flow *f = F(t, 0);

	assert_int_equal(f->lost, lost);
	assert_int_equal(f->duplicates, 0);
	assert_int_equal(f->stale, 0);
	assert_balanced(f);
	rm(t);
}

static void test_window_wrap(void **state)
{
	check_wrap(1);
	check_wrap(2);
	check_wrap(63);
	check_wrap(64);
	check_wrap(65);
	check_wrap(100);
	check_wrap(128);
}

/* A hole whose slot is reused after the wrap must not read as received. */
static void test_wrap_slot_reuse(void **state)
{
	struct seqtrack *t = mk(4, 0);

	add(t, 0, 0, SEQ_NEW);
	add(t, 0, 2, SEQ_NEW);
	add(t, 0, 3, SEQ_NEW);
	add(t, 0, 5, SEQ_NEW); /* slot 1 now belongs to 5; 1 left the window */
	assert_int_equal(F(t, 0)->lost, 1);
	add(t, 0, 4, SEQ_REORDERED);
	add(t, 0, 1, SEQ_LATE);
	add(t, 0, 9, SEQ_NEW); /* slot of 5 reused by 9: 6..8 holes */
	add(t, 0, 5, SEQ_DUP);
	add(t, 0, 7, SEQ_REORDERED);
	seqtrack__set_total(t, 0, 10, 0);
	seqtrack__finish(t);
	assert_int_equal(F(t, 0)->lost, 2); /* 6, 8 */
	assert_int_equal(F(t, 0)->read, 8);
	assert_balanced(F(t, 0));
	rm(t);
}

static void test_jump_past_window(void **state)
{
	struct seqtrack *t = mk(8, 0);

	add(t, 0, 0, SEQ_NEW);
	add(t, 0, 100, SEQ_NEW); /* window [93, 101): 1..92 lost now */
	assert_int_equal(F(t, 0)->lost, 92);
	assert_int_equal(F(t, 0)->nlost, 1);
	assert_int_equal(seqtrack__holes(t), 7); /* 93..99 */
	add(t, 0, 95, SEQ_REORDERED);
	add(t, 0, 50, SEQ_LATE);
	seqtrack__finish(t); /* 93, 94, 96..99 */
	assert_int_equal(F(t, 0)->lost, 91 + 6);
	assert_int_equal(F(t, 0)->read, 4);
	rm(t);
}

static void test_first_seq_not_zero(void **state)
{
	struct seqtrack *t = mk(64, 0);

	/* a sink that started after the sender: the start is lost to it */
	add_range(t, 0, 1000, 1010);
	seqtrack__set_total(t, 0, 1010, 0);
	seqtrack__finish(t);
	assert_int_equal(F(t, 0)->lost, 1000);
	assert_balanced(F(t, 0));
	rm(t);
}

static void test_tail_loss(void **state)
{
	struct seqtrack *t = mk(64, 0);

	add_range(t, 0, 0, 90);
	add_range(t, 1, 0, 50);
	seqtrack__set_total(t, 0, 100, 0);
	assert_false(seqtrack__complete(t)); /* 90..99 missing, flow 1 no total */
	seqtrack__finish(t);
	assert_int_equal(F(t, 0)->lost, 10);
	assert_balanced(F(t, 0));
	/* no total: the tail is unknown, nothing more is called lost */
	assert_int_equal(F(t, 1)->lost, 0);
	seqtrack__finish(t); /* idempotent */
	assert_int_equal(F(t, 0)->lost, 10);
	rm(t);
}

static void test_tail_loss_flow_never_seen(void **state)
{
	struct seqtrack *t = mk(64, 0);

	assert_int_equal(seqtrack__size(t, 3), 0);
	add_range(t, 0, 0, 5);
	seqtrack__set_total(t, 0, 5, 0);
	seqtrack__set_total(t, 1, 7, 0);
	seqtrack__set_total(t, 2, 0, 0);
	assert_false(seqtrack__complete(t));
	seqtrack__finish(t);
	assert_int_equal(F(t, 1)->lost, 7);
	assert_int_equal(F(t, 2)->lost, 0);
	/* flow 1's tail was settled as lost, it never arrived: not complete;
	 * flow 2 (total 0) is, without a datagram */
	assert_false(seqtrack__complete(t));
	rm(t);
}

/*
 * A flow below the highest flow id seen was announced by it: while it has
 * never been seen, the run is not complete, whatever the others say; a
 * flow whose total is 0 needs no datagram.
 */
static void test_complete_needs_every_flow_seen(void **state)
{
	struct seqtrack *t = mk(64, 0);

	add_range(t, 0, 0, 3);
	seqtrack__set_total(t, 0, 3, SEQ_TOTAL_LAST);
	add_range(t, 2, 0, 2);
	seqtrack__set_total(t, 2, 2, SEQ_TOTAL_LAST);
	assert_int_equal(t->nflows, 3);
	assert_false(F(t, 1)->seen);
	assert_false(seqtrack__complete(t)); /* flow 1: nothing yet */
	/* a total for it from elsewhere does not make it arrive */
	seqtrack__set_total(t, 1, 4, 0);
	assert_false(seqtrack__complete(t));
	add_range(t, 1, 0, 4);
	assert_true(seqtrack__complete(t));
	rm(t);

	t = mk(64, 0);
	assert_int_equal(seqtrack__size(t, 2), 0);
	add_range(t, 0, 0, 5);
	seqtrack__set_total(t, 0, 5, SEQ_TOTAL_LAST);
	seqtrack__set_total(t, 1, 0, SEQ_TOTAL_LAST); /* sent nothing */
	assert_true(seqtrack__complete(t));
	rm(t);
}

/* Once the last datagram's total arrived, no other datagram changes it. */
static void test_total_last_is_final(void **state)
{
	struct seqtrack *t = mk(64, 0);

	assert_int_equal(seqtrack__set_total(t, 0, 5, 0), 0);
	assert_int_equal(seqtrack__set_total(t, 0, 8, 0), 0); /* not final yet */
	assert_int_equal(F(t, 0)->total, 8);
	assert_int_equal(seqtrack__set_total(t, 0, 10, SEQ_TOTAL_LAST), 0);
	assert_int_equal(seqtrack__set_total(t, 0, 3, 0), 0);
	assert_int_equal(F(t, 0)->total, 10);
	assert_int_equal(seqtrack__set_total(t, 0, 1000000, SEQ_TOTAL_LAST), 0);
	assert_int_equal(F(t, 0)->total, 10);
	assert_true(F(t, 0)->total_last);
	/* no sender numbers that many */
	assert_int_equal(seqtrack__set_total(t, 1, SEQ_LIMIT + 1, 0), -EINVAL);
	assert_int_equal(seqtrack__set_total(t, 1, SEQ_LIMIT, 0), 0);
	add_range(t, 0, 0, 10);
	assert_true(seqtrack__flow(t, 1)->have_total);
	seqtrack__finish(t);
	assert_balanced(F(t, 0));
	assert_int_equal(F(t, 0)->lost, 0);
	rm(t);
}

/*
 * A forged seq = 2^64 - 1 once wrapped `next` to 0: every later datagram
 * then looked new (holes of 2^64, duplicates counted as reads). Numbers
 * at or above SEQ_LIMIT, and jumps of more than SEQ_JUMP_MAX past the
 * flow's next, are refused and change nothing.
 */
static void test_refuse_impossible_seq(void **state)
{
	struct seqtrack *t = mk(64, 0);

	/* nothing is created for a refused first datagram */
	assert_int_equal(seqtrack__add(t, 3, UINT64_MAX, 0, 0), -EINVAL);
	assert_int_equal(t->nflows, 0);
	assert_null(seqtrack__flow(t, 3));
	assert_int_equal(seqtrack__add(t, 0, SEQ_JUMP_MAX + 1, 0, 0), -EINVAL);
	assert_int_equal(t->nflows, 0);

	add_range(t, 0, 0, 10);
	assert_int_equal(seqtrack__add(t, 0, UINT64_MAX, 5 * MS, 0), -EINVAL);
	assert_int_equal(seqtrack__add(t, 0, SEQ_LIMIT, 5 * MS, 0), -EINVAL);
	assert_int_equal(seqtrack__add(t, 0, SEQ_LIMIT - 1, 5 * MS, 0), -EINVAL);
	assert_int_equal(seqtrack__add(t, 0, 10 + SEQ_JUMP_MAX + 1, 5 * MS, 0), -EINVAL);
	assert_int_equal(t->refused, 6);
	const struct seq_flow *f = F(t, 0);

	assert_int_equal(f->next, 10);
	assert_int_equal(f->last_ns, 0); /* refused: not an arrival of the flow */
	/* the flow goes on as if nothing came */
	add(t, 0, 3, SEQ_DUP);
	add(t, 0, 10, SEQ_NEW);
	add(t, 0, 9, SEQ_DUP);
	assert_int_equal(f->read, 11);
	assert_int_equal(f->duplicates, 2);
	assert_int_equal(f->lost, 0);
	assert_int_equal(seqtrack__holes(t), 0);
	seqtrack__set_total(t, 0, 11, SEQ_TOTAL_LAST);
	assert_true(seqtrack__complete(t));
	seqtrack__finish(t);
	assert_int_equal(f->lost, 0);
	assert_balanced(f);

	/* a jump of exactly SEQ_JUMP_MAX is still a sender's (a long gap) */
	add(t, 1, 0, SEQ_NEW);
	add(t, 1, 1 + SEQ_JUMP_MAX, SEQ_NEW);
	assert_int_equal(F(t, 1)->lost, SEQ_JUMP_MAX - 64 + 1);
	assert_int_equal(F(t, 1)->next, SEQ_JUMP_MAX + 2);
	/* and the limit is measured from the flow's own next */
	add(t, 1, 1 + 2 * SEQ_JUMP_MAX, SEQ_NEW);
	assert_int_equal(t->refused, 6);
	seqtrack__reset(t);
	assert_int_equal(t->refused, 0);
	rm(t);
}

static void test_complete(void **state)
{
	struct seqtrack *t = mk(64, 0);

	assert_false(seqtrack__complete(t)); /* no flows */
	add_range(t, 0, 0, 3);
	seqtrack__set_total(t, 0, 4, 0);
	assert_false(seqtrack__complete(t));
	add(t, 0, 3, SEQ_NEW);
	assert_true(seqtrack__complete(t));
	add(t, 0, 4, SEQ_BEYOND);
	assert_int_equal(F(t, 0)->beyond, 1);
	assert_int_equal(F(t, 0)->read, 4);
	rm(t);
}

static void test_loss_timeout(void **state)
{
	struct seqtrack *t = mk(64, 100 * MS);

	assert_int_equal(seqtrack__add(t, 0, 0, 0, 0), SEQ_NEW);
	assert_int_equal(seqtrack__add(t, 0, 1, 0, 0), SEQ_NEW);
	assert_int_equal(seqtrack__add(t, 0, 4, 10 * MS, 0), SEQ_NEW);
	assert_int_equal(seqtrack__add(t, 1, 0, 50 * MS, 0), SEQ_NEW);
	assert_int_equal(seqtrack__expire(t, 109 * MS), 0);
	assert_int_equal(seqtrack__expire(t, 110 * MS), 2); /* flow 0: 2, 3 */
	assert_int_equal(F(t, 0)->lost, 2);
	assert_int_equal(seqtrack__expire(t, 500 * MS), 0);  /* nothing open */
	/* one turns up after all: it was late, not lost */
	assert_int_equal(seqtrack__add(t, 0, 3, 600 * MS, 0), SEQ_LATE);
	assert_int_equal(F(t, 0)->lost, 1);
	assert_int_equal(F(t, 0)->read, 4);
	assert_int_equal(F(t, 0)->late, 1);
	/* without a timeout, expire does nothing */
	struct seqtrack *u = mk(64, 0);

	seqtrack__add(u, 0, 5, 0, 0);
	assert_int_equal(seqtrack__expire(u, UINT64_MAX), 0);
	rm(u);
	rm(t);
}

static void test_unread(void **state)
{
	struct seqtrack *t = mk(64, 0);

	add_range(t, 0, 0, 10);
	/* drained at the end: 12 and 11 sat in the queue, 10 was dropped */
	assert_int_equal(seqtrack__add(t, 0, 12, 0, SEQ_UNREAD), SEQ_NEW);
	assert_int_equal(seqtrack__add(t, 0, 11, 0, SEQ_UNREAD), SEQ_REORDERED);
	seqtrack__set_total(t, 0, 14, 0);
	seqtrack__finish(t);
	const struct seq_flow *f = F(t, 0);

	assert_int_equal(f->read, 10);
	assert_int_equal(f->unread, 2);
	assert_int_equal(f->reordered, 0); /* not read: not reordered */
	assert_int_equal(f->lost, 2);       /* 10 and 13 */
	assert_balanced(f);
	rm(t);
}

/* More separate losses than the range list holds: the oldest are forgotten. */
static void test_lost_range_cap(void **state)
{
	struct seqtrack *t = mk(4, 0);
	uint64_t n = 4 * SEQ_LOST_RANGES;

	for (uint64_t s = 0; s < n; s++)
		if (s % 2 == 0)
			add(t, 0, s, SEQ_NEW);
	seqtrack__set_total(t, 0, n, 0);
	seqtrack__finish(t);
	const struct seq_flow *f = F(t, 0);

	assert_int_equal(f->lost, n / 2);
	assert_true(f->nlost <= SEQ_LOST_RANGES);
	assert_true(f->horizon > 0);
	/* the oldest loss is forgotten: cannot tell late from duplicate */
	add(t, 0, 1, SEQ_STALE);
	/* the newest is remembered */
	add(t, 0, n - 1, SEQ_LATE);
	/* a read one near the end: duplicate */
	add(t, 0, n - 2, SEQ_DUP);
	assert_int_equal(f->lost, n / 2 - 1);
	assert_int_equal(f->stale, 1);
	assert_balanced(f);
	rm(t);
}

static void test_sum_reset(void **state)
{
	struct seqtrack *t = mk(64, 0);
	struct seq_flow s;

	add_range(t, 0, 0, 10);
	add_range(t, 3, 0, 5);
	add(t, 3, 2, SEQ_DUP);
	seqtrack__sum(t, &s);
	assert_int_equal(s.read, 15);
	assert_int_equal(s.duplicates, 1);
	assert_int_equal(t->nflows, 4);
	seqtrack__reset(t);
	assert_int_equal(t->nflows, 0);
	seqtrack__sum(t, &s);
	assert_int_equal(s.read, 0);
	/* usable again after the reset */
	add(t, 0, 0, SEQ_NEW);
	add(t, 0, 0, SEQ_DUP);
	rm(t);
}

/*
 * Random arrivals against a reference that remembers every seq: each seq
 * sent once, some dropped, some duplicated, swapped with one up to twice
 * the window ahead (so some come after being called lost). Few enough
 * losses that no lost range is forgotten: then the counts are exact.
 */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

static void check_random(uint32_t window, uint32_t n)
{
	struct seqtrack *t = mk(window, 0);
	uint64_t *order = malloc(2 * n * sizeof(*order));
	uint8_t *got = calloc(n, 1);
	uint64_t m = 0, unique = 0, dups = 0, reord = 0, max_seen = 0;
	bool any = false;

	assert_non_null(order);
	assert_non_null(got);
	for (uint64_t s = 0; s < n; s++) {
		if (rnd(10) == 0)
			continue; /* dropped */
		order[m++] = s;
		if (rnd(50) == 0)
			order[m++] = s; /* duplicated */
	}
	/* displace: swap with a neighbour up to 2 * window away */
	for (uint64_t i = 0; i + 1 < m; i++) {
		if (rnd(4))
			continue;
		uint64_t j = i + 1 + rnd(2 * window);
		if (j >= m)
			j = m - 1;
		uint64_t x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	for (uint64_t i = 0; i < m; i++) {
		uint64_t s = order[i];
		int v = seqtrack__add(t, 0, s, 0, 0);

		assert_true(v >= 0);
		if (got[s]) {
			dups++;
			assert_int_equal(v, SEQ_DUP);
			continue;
		}
		got[s] = 1;
		unique++;
		if (any && s < max_seen) {
			reord++;
			assert_true(v == SEQ_REORDERED || v == SEQ_LATE);
		} else {
			assert_int_equal(v, SEQ_NEW);
		}
		if (!any || s > max_seen)
			max_seen = s;
		any = true;
	}
	seqtrack__set_total(t, 0, n, 0);
	seqtrack__finish(t);
	assert_int_equal(seqtrack__holes(t), 0);
	const struct seq_flow *f = F(t, 0);

	assert_int_equal(f->read, unique);
	assert_int_equal(f->duplicates, dups);
	assert_int_equal(f->reordered, reord);
	assert_int_equal(f->lost, n - unique);
	assert_int_equal(f->stale, 0);
	assert_balanced(f);
	free(order);
	free(got);
	rm(t);
}

static void test_random_against_reference(void **state)
{
	static const uint32_t windows[] = { 1, 3, 64, 100, 1000 };

	for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++)
		for (int round = 0; round < 5; round++)
			check_random(windows[w], 8000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_errors),
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_gap_called_lost_when_window_passes),
		cmocka_unit_test(test_late_within_window),
		cmocka_unit_test(test_late_beyond_window),
		cmocka_unit_test(test_late_splits_a_range),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_window_wrap),
		cmocka_unit_test(test_wrap_slot_reuse),
		cmocka_unit_test(test_jump_past_window),
		cmocka_unit_test(test_first_seq_not_zero),
		cmocka_unit_test(test_tail_loss),
		cmocka_unit_test(test_tail_loss_flow_never_seen),
		cmocka_unit_test(test_complete_needs_every_flow_seen),
		cmocka_unit_test(test_total_last_is_final),
		cmocka_unit_test(test_refuse_impossible_seq),
		cmocka_unit_test(test_complete),
		cmocka_unit_test(test_loss_timeout),
		cmocka_unit_test(test_unread),
		cmocka_unit_test(test_lost_range_cap),
		cmocka_unit_test(test_sum_reset),
		cmocka_unit_test(test_random_against_reference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
