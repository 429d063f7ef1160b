// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for src/base/hist.c: exact min/max, bounded percentile error, merge. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include "hist.h"

static void test_empty(void **state)
{
	struct hist h;

	hist__reset(&h);
	assert_int_equal(hist__pct(&h, 0.5), 0);
	assert_int_equal(hist__pct(&h, 1), 0);
}

/* below HIST_SUB every value has its own bucket: exact */
static void test_small_values_exact(void **state)
{
	struct hist h;

	hist__reset(&h);
	for (uint64_t v = 1; v <= 20; v++)
		hist__add(&h, v);
	assert_int_equal(hist__pct(&h, 0.5), 10);
	assert_int_equal(hist__pct(&h, 0.95), 19);
	assert_int_equal(hist__pct(&h, 0), 1);
	assert_int_equal(hist__pct(&h, 1), 20);
	assert_int_equal(h.sum, 210);
}

/* 1..100000: each percentile within 1/HIST_SUB above the true value */
static void test_relative_error(void **state)
{
	struct hist h;
	const double ps[] = { 0.01, 0.25, 0.5, 0.9, 0.99, 0.999 };

	hist__reset(&h);
	for (uint64_t v = 1; v <= 100000; v++)
		hist__add(&h, v);
	for (unsigned int i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double want = ps[i] * 100000, got = (double)hist__pct(&h, ps[i]);

		assert_true(got >= want);
		assert_true(got <= want * (1 + 1.0 / HIST_SUB) + 1);
	}
	assert_int_equal(hist__pct(&h, 1), 100000);
}

/* huge values do not overflow the bucket index; max stays exact */
static void test_extremes(void **state)
{
	struct hist h;

	hist__reset(&h);
	hist__add(&h, 0);
	hist__add(&h, UINT64_MAX);
	assert_int_equal(hist__pct(&h, 0), 0);
	assert_true(hist__pct(&h, 1) == UINT64_MAX);
	assert_true(hist__pct(&h, 0.99) == UINT64_MAX);
}

static void test_merge(void **state)
{
	struct hist a, b, all;

	hist__reset(&a);
	hist__reset(&b);
	hist__reset(&all);
	for (uint64_t v = 0; v < 5000; v++) {
		hist__add(v % 2 ? &a : &b, v * 37);
		hist__add(&all, v * 37);
	}
	hist__merge(&a, &b);
	assert_int_equal(a.count, all.count);
	assert_int_equal(a.min, all.min);
	assert_int_equal(a.max, all.max);
	assert_int_equal(hist__pct(&a, 0.5), hist__pct(&all, 0.5));
	assert_int_equal(hist__pct(&a, 0.99), hist__pct(&all, 0.99));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_small_values_exact),
		cmocka_unit_test(test_relative_error),
		cmocka_unit_test(test_extremes),
		cmocka_unit_test(test_merge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
