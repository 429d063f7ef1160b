// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for src/model/windows.c: CPUs' parts of a window summed, windows
 * folded only once every CPU closed them and in time order, a socket's
 * inode figures joined to its cookie's, and the same figures however the
 * parts are split over refreshes (what makes top and report agree).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include "windows.h"

static void test_agg_add(void **state)
{
	struct win_agg a = { 0 };

	win_agg__add(&a, 10, 5);
	win_agg__add(&a, 10, 3);  /* more of the same window */
	win_agg__add(&a, 12, 20);
	win_agg__add(&a, 13, 0);  /* nothing: no window */
	win_agg__add(&a, 15, 1);
	assert_int_equal(a.dropping, 3);
	assert_int_equal(a.first, 10);
	assert_int_equal(a.first_n, 8);
	assert_int_equal(a.last, 15);
	assert_int_equal(a.last_n, 1);
	assert_int_equal(a.best, 20);
	assert_int_equal(a.datagrams, 29);
	assert_int_equal(win_agg__span(&a), 6);
}

/* two CPUs' parts of window 7 are one window of 9, not two of 4 and 5 */
static void test_cpus_summed(void **state)
{
	struct windows w;
	const struct win_agg *a;

	assert_int_equal(windows__init(&w), 0);
	assert_int_equal(windows__add(&w, 42, 1, 7, 4), 0);
	assert_int_equal(windows__add(&w, 42, 1, 7, 5), 0);
	assert_int_equal(windows__add(&w, 42, 1, 8, 1), 0);
	assert_int_equal(windows__add(&w, 42, 2, 7, 6), 0); /* another cause */
	/* window 8 is still open on some CPU: only 7 folds */
	assert_int_equal(windows__fold(&w, 8), 0);
	assert_int_equal(w.nfolded, 2);
	a = windows__find(&w, 42, 1);
	assert_non_null(a);
	assert_int_equal(a->dropping, 1);
	assert_int_equal(a->best, 9);
	/* a later CPU's part of 8 arrives before 8 folds */
	assert_int_equal(windows__add(&w, 42, 1, 8, 2), 0);
	assert_int_equal(windows__fold(&w, 9), 0);
	assert_int_equal(w.nfolded, 1);
	assert_int_equal(w.folded[0].win, 8);
	assert_int_equal(w.folded[0].datagrams, 3);
	a = windows__find(&w, 42, 1);
	assert_int_equal(a->dropping, 2);
	assert_int_equal(a->best, 9);
	assert_int_equal(a->datagrams, 12);
	assert_int_equal(windows__find(&w, 42, 2)->best, 6);
	assert_null(windows__find(&w, 43, 1));
	windows__free(&w);
}

/* folding in one go or over many refreshes: the same figures */
static void test_fold_split_same(void **state)
{
	struct windows once, inc;
	static const uint32_t wins[] = { 3, 3, 4, 9, 10, 10, 11, 30, 31, 32 };
	static const uint64_t ns[] = { 1, 2, 7, 1, 1, 1, 4, 2, 2, 9 };

	assert_int_equal(windows__init(&once), 0);
	assert_int_equal(windows__init(&inc), 0);
	for (size_t i = 0; i < sizeof(wins) / sizeof(wins[0]); i++) {
		assert_int_equal(windows__add(&once, 1, 0, wins[i], ns[i]), 0);
		assert_int_equal(windows__add(&inc, 1, 0, wins[i], ns[i]), 0);
		assert_int_equal(windows__fold(&inc, wins[i]), 0); /* before it: never itself */
	}
	assert_int_equal(windows__fold(&once, UINT32_MAX), 0);
	assert_int_equal(windows__fold(&inc, UINT32_MAX), 0);
	const struct win_agg *a = windows__find(&once, 1, 0), *b = windows__find(&inc, 1, 0);

	assert_memory_equal(a, b, sizeof(*a));
	assert_int_equal(a->dropping, 8);
	assert_int_equal(a->best, 9);
	assert_int_equal(win_agg__span(a), 30);
	windows__free(&once);
	windows__free(&inc);
}

/* identity 1|inode joins cookie 77 (sockid__row) */
#define INODE_ID ((1ull << 63) | 1000)
static uint64_t join77(void *arg, uint64_t id)
{
	return id == INODE_ID ? 77 : id;
}

/* a socket by inode, then by cookie, window 5 on both sides: one window */
static void test_rejoin(void **state)
{
	struct windows w, whole;
	const struct win_agg *a;

	assert_int_equal(windows__init(&w), 0);
	assert_int_equal(windows__add(&w, INODE_ID, 0, 4, 10), 0);
	assert_int_equal(windows__add(&w, INODE_ID, 0, 5, 3), 0);
	assert_int_equal(windows__fold(&w, 6), 0);
	assert_int_equal(windows__add(&w, 77, 0, 5, 1), 0); /* not expected, but exact */
	assert_int_equal(windows__add(&w, 77, 0, 8, 4), 0);
	assert_int_equal(windows__fold(&w, 9), 0);
	assert_int_equal(windows__rejoin(&w, join77, NULL), 0);
	assert_null(windows__find(&w, INODE_ID, 0));
	a = windows__find(&w, 77, 0);
	assert_non_null(a);
	/* report joins first and adds in file order: the same figures */
	assert_int_equal(windows__init(&whole), 0);
	assert_int_equal(windows__add(&whole, 77, 0, 4, 10), 0);
	assert_int_equal(windows__add(&whole, 77, 0, 5, 3), 0);
	assert_int_equal(windows__add(&whole, 77, 0, 5, 1), 0);
	assert_int_equal(windows__add(&whole, 77, 0, 8, 4), 0);
	assert_int_equal(windows__fold(&whole, UINT32_MAX), 0);
	assert_memory_equal(a, windows__find(&whole, 77, 0), sizeof(*a));
	assert_int_equal(a->dropping, 3);
	assert_int_equal(a->best, 10);
	assert_int_equal(a->datagrams, 18);
	/* an inode whose cookie has no figures yet takes the cookie's name */
	assert_int_equal(windows__add(&w, INODE_ID, 3, 20, 2), 0);
	assert_int_equal(windows__fold(&w, UINT32_MAX), 0);
	assert_int_equal(windows__rejoin(&w, join77, NULL), 0);
	assert_int_equal(windows__find(&w, 77, 3)->datagrams, 2);
	windows__free(&w);
	windows__free(&whole);
}

/*
 * A socket's deliveries count where it dropped: in the windows with drops
 * of each cause (the reader's rate while it dropped), and a recording
 * keeps only those (the others fold away).
 */
static void test_deliveries(void **state)
{
	struct windows w;
	const struct win_agg *a;

	assert_int_equal(windows__init(&w), 0);
	w.keep_folded = true;
	assert_int_equal(windows__add(&w, 9, 0, 100, 50), 0);
	assert_int_equal(windows__add(&w, 9, 0, 102, 5), 0);
	assert_int_equal(windows__add(&w, 9, WIN_DELIVERED, 100, 30), 0);
	assert_int_equal(windows__add(&w, 9, WIN_DELIVERED, 101, 70), 0); /* no drops then */
	assert_int_equal(windows__add(&w, 9, WIN_DELIVERED, 102, 7), 0);
	assert_int_equal(windows__add(&w, 9, WIN_DELIVERED, 102, 3), 0); /* another CPU */
	assert_int_equal(windows__fold(&w, UINT32_MAX), 0);
	a = windows__find(&w, 9, 0);
	assert_non_null(a);
	assert_int_equal(a->delivered, 40);
	assert_int_equal(a->stalled, 0);
	assert_null(windows__find(&w, 9, WIN_DELIVERED));
	/* kept: the two drop windows and their deliveries, not window 101's */
	assert_int_equal(w.nfolded, 4);
	for (size_t i = 0; i < w.nfolded; i++)
		assert_true(w.folded[i].win != 101);
	/* folded again (a report reading them back): the same figures */
	struct windows again;

	assert_int_equal(windows__init(&again), 0);
	for (size_t i = 0; i < w.nfolded; i++)
		assert_int_equal(windows__add(&again, w.folded[i].id, w.folded[i].cause,
					      w.folded[i].win, w.folded[i].datagrams), 0);
	assert_int_equal(windows__fold(&again, UINT32_MAX), 0);
	assert_memory_equal(windows__find(&again, 9, 0), a, sizeof(*a));
	/* a reader that stops: its latest drop windows have no deliveries */
	w.nfolded = 0;
	assert_int_equal(windows__add(&w, 9, 0, 103, 9), 0);
	assert_int_equal(windows__add(&w, 9, 0, 104, 9), 0);
	assert_int_equal(windows__fold(&w, UINT32_MAX), 0);
	assert_int_equal(windows__find(&w, 9, 0)->stalled, 2);
	windows__free(&again);
	windows__free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agg_add),
		cmocka_unit_test(test_cpus_summed),
		cmocka_unit_test(test_fold_split_same),
		cmocka_unit_test(test_rejoin),
		cmocka_unit_test(test_deliveries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
