// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for src/base/htab.c: the open-addressing byte-key hash map (upsert, find, next, growth, clear). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include "htab.h"

struct key64 {
	uint8_t b[64];
};

struct val {
	uint64_t a, b;
};

_Static_assert(sizeof(struct key64) == 64, "64-byte key");

/* Keys that differ in one place only, at either end, or in the middle. */
static struct key64 mk(uint32_t i)
{
	struct key64 k;

	memset(&k, 0x5a, sizeof(k));
	switch (i % 3) {
	case 0:
		memcpy(&k.b[0], &i, sizeof(i));
		break;
	case 1:
		memcpy(&k.b[30], &i, sizeof(i));
		break;
	default:
		memcpy(&k.b[60], &i, sizeof(i));
		break;
	}
	return k;
}

static uint32_t key_id(const struct key64 *k)
{
	/* recover i: the 4 bytes that differ from the fill pattern sit at 0, 30 or 60 */
	for (int off = 0; off <= 60; off += 30) {
		uint32_t i;

		memcpy(&i, &k->b[off], sizeof(i));
		if (i % 3 == (uint32_t)off / 30) {
			struct key64 t = mk(i);

			if (!memcmp(&t, k, sizeof(t)))
				return i;
		}
	}
	fail_msg("key not produced by mk()");
	return 0;
}

static int setup(void **state)
{
	struct htab *h = calloc(1, sizeof(*h));

	if (!h || htab__init(h, sizeof(struct key64), sizeof(struct val)))
		return -1;
	*state = h;
	return 0;
}

static int teardown(void **state)
{
	htab__free(*state);
	free(*state);
	return 0;
}

static void test_init(void **state)
{
	struct htab *h = *state;
	struct key64 k = mk(1);
	size_t it = 0;
	const void *kp;
	void *vp;

	assert_int_equal(h->n, 0);
	assert_int_equal(h->key_size, 64);
	assert_int_equal(h->val_size, sizeof(struct val));
	assert_true(h->cap > 0 && (h->cap & (h->cap - 1)) == 0);
	assert_null(htab__find(h, &k));
	assert_int_equal(htab__next(h, &it, &kp, &vp), 0);
}

static void test_upsert_find(void **state)
{
	struct htab *h = *state;
	struct key64 k1 = mk(1), k2 = mk(2), k1b = mk(1);
	struct val *v, *v2;
	int created = -1;

	v = htab__upsert(h, &k1, &created);
	assert_non_null(v);
	assert_int_equal(created, 1);
	assert_true(v->a == 0 && v->b == 0); /* created zeroed */
	v->a = 11;
	v->b = 12;

	v2 = htab__upsert(h, &k2, &created);
	assert_non_null(v2);
	assert_int_equal(created, 1);
	assert_ptr_not_equal(v, v2);
	v2->a = 21;

	/* the same key again: same slot, value kept, not created */
	created = -1;
	assert_ptr_equal(htab__upsert(h, &k1b, &created), v);
	assert_int_equal(created, 0);
	assert_true(v->a == 11 && v->b == 12);
	/* created may be NULL */
	assert_ptr_equal(htab__upsert(h, &k2, NULL), v2);

	assert_ptr_equal(htab__find(h, &k1), v);
	assert_ptr_equal(htab__find(h, &k2), v2);
	assert_int_equal(h->n, 2);

	struct key64 k3 = mk(3);

	assert_null(htab__find(h, &k3));
	/* one byte off at the very end is a different key */
	struct key64 kx = k1;

	kx.b[63] ^= 1;
	assert_null(htab__find(h, &kx));
	kx = k1;
	kx.b[0] ^= 0x80;
	assert_null(htab__find(h, &kx));
}

static void test_next(void **state)
{
	struct htab *h = *state;
	int seen[5] = { 0 };
	size_t it = 0;
	const void *kp;
	void *vp;
	int count = 0;

	for (uint32_t i = 0; i < 5; i++) {
		struct key64 k = mk(i);
		struct val *v = htab__upsert(h, &k, NULL);

		assert_non_null(v);
		v->a = i * 100;
	}
	while (htab__next(h, &it, &kp, &vp)) {
		uint32_t i = key_id(kp);
		struct val *v = vp;

		assert_true(i < 5);
		assert_true(v->a == i * 100);
		assert_ptr_equal(htab__find(h, kp), vp);
		seen[i]++;
		count++;
	}
	assert_int_equal(count, 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(seen[i], 1);
	/* exhausted stays exhausted */
	assert_int_equal(htab__next(h, &it, &kp, &vp), 0);
}

#define MANY 20000u

static void test_growth(void **state)
{
	struct htab *h = *state;
	size_t cap0 = h->cap, it = 0;
	const void *kp;
	void *vp;
	uint8_t *seen = calloc(MANY, 1);
	size_t count = 0;

	assert_non_null(seen);
	for (uint32_t i = 0; i < MANY; i++) {
		struct key64 k = mk(i);
		int created = -1;
		struct val *v = htab__upsert(h, &k, &created);

		assert_non_null(v);
		assert_int_equal(created, 1);
		v->a = (uint64_t)i * 3 + 1;
		v->b = ~(uint64_t)i;
		assert_int_equal(h->n, i + 1);
	}
	assert_true(h->cap > cap0);
	assert_true((h->cap & (h->cap - 1)) == 0);
	assert_true(h->n * 4 <= h->cap * 3); /* load factor kept */

	/* every value survived every regrow */
	for (uint32_t i = 0; i < MANY; i++) {
		struct key64 k = mk(i);
		struct val *v = htab__find(h, &k);

		if (!v)
			fail_msg("key %u lost", i);
		if (v->a != (uint64_t)i * 3 + 1 || v->b != ~(uint64_t)i)
			fail_msg("key %u: value %llu/%llu", i,
				 (unsigned long long)v->a,
				 (unsigned long long)v->b);
	}
	/* upserting them again creates nothing */
	for (uint32_t i = 0; i < MANY; i += 97) {
		struct key64 k = mk(i);
		int created = -1;
		struct val *v = htab__upsert(h, &k, &created);

		assert_int_equal(created, 0);
		assert_true(v->a == (uint64_t)i * 3 + 1);
	}
	assert_int_equal(h->n, MANY);

	while (htab__next(h, &it, &kp, &vp)) {
		uint32_t i = key_id(kp);

		assert_true(i < MANY);
		assert_int_equal(seen[i], 0);
		seen[i] = 1;
		assert_true(((struct val *)vp)->a == (uint64_t)i * 3 + 1);
		count++;
	}
	assert_int_equal(count, MANY);
	free(seen);

	struct key64 absent = mk(MANY);

	assert_null(htab__find(h, &absent));
}

static void test_clear(void **state)
{
	struct htab *h = *state;
	size_t it = 0;
	const void *kp;
	void *vp;

	for (uint32_t i = 0; i < 1000; i++) {
		struct key64 k = mk(i);
		struct val *v = htab__upsert(h, &k, NULL);

		assert_non_null(v);
		v->a = 7;
	}
	assert_int_equal(h->n, 1000);
	htab__clear(h);
	assert_int_equal(h->n, 0);
	for (uint32_t i = 0; i < 1000; i++) {
		struct key64 k = mk(i);

		assert_null(htab__find(h, &k));
	}
	assert_int_equal(htab__next(h, &it, &kp, &vp), 0);

	/* usable again; values come back zeroed */
	struct key64 k = mk(5);
	int created = -1;
	struct val *v = htab__upsert(h, &k, &created);

	assert_non_null(v);
	assert_int_equal(created, 1);
	assert_true(v->a == 0 && v->b == 0);
	assert_int_equal(h->n, 1);
	assert_ptr_equal(htab__find(h, &k), v);
}

static void test_free_then_find(void **state)
{
	struct htab h;
	struct key64 k = mk(9);

	assert_int_equal(htab__init(&h, sizeof(k), sizeof(int)), 0);
	assert_non_null(htab__upsert(&h, &k, NULL));
	htab__free(&h);
	assert_int_equal(h.cap, 0);
	assert_int_equal(h.n, 0);
	assert_null(htab__find(&h, &k));
}

static void test_small_key(void **state)
{
	struct htab h;

	/* the socket table's shapes: u64 -> int and u32 -> int */
	assert_int_equal(htab__init(&h, sizeof(uint64_t), sizeof(int)), 0);
	for (uint64_t c = 1; c <= 5000; c++) {
		uint64_t key = c << 32 | c;
		int *slot = htab__upsert(&h, &key, NULL);

		assert_non_null(slot);
		*slot = (int)c;
	}
	for (uint64_t c = 1; c <= 5000; c++) {
		uint64_t key = c << 32 | c;
		int *slot = htab__find(&h, &key);

		assert_non_null(slot);
		assert_int_equal(*slot, (int)c);
	}
	uint64_t zero = 0;

	assert_null(htab__find(&h, &zero));
	htab__free(&h);
}

static bool keep_even(const void *key, void *val, void *arg)
{
	(*(int *)arg)++;
	return ((const struct val *)val)->a % 2 == 0;
}

/* retain: only the entries kept, with their values, in a smaller table */
static void test_retain(void **state)
{
	struct htab *h = *state;
	int calls = 0;
	size_t big;

	for (uint64_t i = 0; i < 1000; i++) {
		struct key64 k = mk(i);
		struct val *v = htab__upsert(h, &k, NULL);

		assert_non_null(v);
		v->a = i;
	}
	big = h->cap;
	assert_int_equal(htab__retain(h, keep_even, &calls), 0);
	assert_int_equal(calls, 1000);
	assert_int_equal(h->n, 500);
	assert_true(h->cap < big);
	for (uint64_t i = 0; i < 1000; i++) {
		struct key64 k = mk(i);
		struct val *v = htab__find(h, &k);

		if (i % 2) {
			assert_null(v);
		} else {
			assert_non_null(v);
			assert_int_equal(v->a, i);
		}
	}
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_init),
		T(test_upsert_find),
		T(test_next),
		T(test_growth),
		T(test_clear),
		T(test_retain),
		cmocka_unit_test(test_free_then_find),
		cmocka_unit_test(test_small_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
