// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the one join rule of a socket's identity (src/kernel/sockid.c):
 * a socket named by inode before its first dump and by cookie after is
 * one row, in top's model and in report alike.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "sockid.h"

static void test_identity(void **state)
{
	struct ud_key k = { .cookie = 42, .flags = UD_KEY_SOCK };

	assert_true(sockid__of_key(&k) == 42);
	k.flags |= UD_KEY_INODE;
	k.cookie = 900;
	assert_true(sockid__of_key(&k) == (UD_RX_INODE | 900));
	assert_int_equal(sockid__inode(sockid__of_key(&k)), 900);
	assert_int_equal(sockid__inode(42), 0);
	/* no socket: no identity, inode flag or not */
	k.cookie = 0;
	assert_true(sockid__of_key(&k) == 0);
	k.cookie = 42;
	k.flags = 0;
	assert_true(sockid__of_key(&k) == 0);
	/* an inode identity keeps 32 bits of the field */
	assert_true(sockid__of(0x100000384ull, true) == (UD_RX_INODE | 0x384));
}

static void test_joins(void **state)
{
	assert_true(sockid__joins(900, 42));
	assert_false(sockid__joins(0, 42));
	assert_false(sockid__joins(900, 0));
	/* a socket known only by its inode: its "cookie" is the inode */
	assert_false(sockid__joins(900, UD_RX_INODE | 900));
	assert_true(sockid__join(UD_RX_INODE | 900, 42) == 42);
	assert_true(sockid__join(UD_RX_INODE | 900, 0) == (UD_RX_INODE | 900));
	/* a cookie is its own row, whatever an inode maps to */
	assert_true(sockid__join(43, 42) == 43);
}

static void test_table(void **state)
{
	struct htab h;

	assert_int_equal(sockid__init(&h), 0);
	/* before a dump named it: the inode's own row */
	assert_true(sockid__row(&h, UD_RX_INODE | 900) == (UD_RX_INODE | 900));
	assert_int_equal(sockid__learn(&h, 900, UD_RX_INODE | 900), 0);
	assert_true(sockid__row(&h, UD_RX_INODE | 900) == (UD_RX_INODE | 900));
	assert_int_equal(sockid__learn(&h, 0, 42), 0);
	assert_int_equal(h.n, 0);
	/* a dump named both: the inode's counts are the cookie's */
	assert_int_equal(sockid__learn(&h, 900, 42), 0);
	assert_true(sockid__row(&h, UD_RX_INODE | 900) == 42);
	assert_true(sockid__row(&h, 42) == 42);
	assert_true(sockid__row(&h, UD_RX_INODE | 901) == (UD_RX_INODE | 901));
	assert_true(sockid__row(&h, 0) == 0);
	htab__free(&h);
	/* a table never made (freed): nothing joins, nothing crashes */
	assert_true(sockid__row(&h, UD_RX_INODE | 900) == (UD_RX_INODE | 900));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_joins),
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
