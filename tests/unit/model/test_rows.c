// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for src/model/rows.c, the one rule by which top's model and
 * report's replay sum counts into rows: one row per socket whatever its
 * counts' family, protocol or cause; socketless flows per cause and
 * overflow bucket; every reason and location kept (none folded into
 * another's name); a datagram's size from whole datagrams only.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include "rows.h"

static struct ud_key key(uint32_t reason, uint64_t loc, uint32_t flags)
{
	struct ud_key k;

	memset(&k, 0, sizeof(k));
	k.netns = 4026531840u;
	k.family = 2;
	k.proto = 17;
	k.dport = 5001;
	k.reason = reason;
	k.location = loc;
	k.flags = flags;
	k.daddr[0] = 10;
	return k;
}

static const struct ud_val val1 = { .datagrams = 1, .skbs = 1, .bytes = 100 };

/* a socket's counts of two causes, two families and two protocols: one row */
static void test_one_row_per_socket(void **state)
{
	struct htab rows;
	struct ud_key a = key(1, 0x10, UD_KEY_SOCK), b = key(2, 0x20, UD_KEY_SOCK);
	struct ud_val v3 = { .datagrams = 3, .skbs = 2, .bytes = 900 };
	struct row *r, *r2;

	assert_int_equal(rows__init(&rows), 0);
	b.family = 10;
	b.proto = 136;
	assert_int_equal(rows__add(&rows, &a, &val1, CAUSE_RCVBUF, 7, a.netns, &r), 0);
	assert_int_equal(rows__add(&rows, &b, &v3, CAUSE_OTHER, 7, a.netns, &r2), 0);
	assert_ptr_equal(r, r2);
	assert_int_equal(rows.n, 1);
	assert_int_equal(r->key.kind, ROW_SOCKET);
	assert_int_equal(r->drops, 4);
	assert_int_equal(r->skbs, 3);
	assert_int_equal(r->bytes, 1000);
	assert_int_equal(r->cause[CAUSE_RCVBUF], 1);
	assert_int_equal(r->cause[CAUSE_OTHER], 3);
	assert_int_equal(r->cause_bytes[CAUSE_OTHER], 900);
	assert_int_equal(r->nreasons, 2);
	assert_int_equal(r->nlocs, 2);
	assert_int_equal(row__main_cause(r), CAUSE_OTHER);
	/* another socket: another row */
	assert_int_equal(rows__add(&rows, &a, &val1, CAUSE_RCVBUF, 8, a.netns, NULL), 0);
	assert_int_equal(rows.n, 2);
	rows__free(&rows);
}

/* socketless counts: a row per flow and cause, the overflow bucket apart */
static void test_flows(void **state)
{
	struct htab rows;
	struct ud_key k = key(3, 0x30, 0), ov = key(3, 0x30, UD_KEY_OVERFLOW);
	struct row *r1, *r2, *r3;

	assert_int_equal(rows__init(&rows), 0);
	assert_int_equal(rows__add(&rows, &k, &val1, CAUSE_NO_SOCKET, 0, k.netns, &r1), 0);
	assert_int_equal(rows__add(&rows, &k, &val1, CAUSE_OTHER, 0, k.netns, &r2), 0);
	assert_int_equal(rows__add(&rows, &ov, &val1, CAUSE_NO_SOCKET, 0, k.netns, &r3), 0);
	assert_int_equal(rows.n, 3);
	r1 = NULL;
	assert_int_equal(rows__add(&rows, &k, &val1, CAUSE_NO_SOCKET, 0, k.netns, &r1), 0);
	assert_int_equal(rows.n, 3);
	assert_int_equal(r1->key.kind, ROW_FLOW);
	assert_int_equal(r1->drops, 2);
	assert_int_equal(r3->key.overflow, 1);
	rows__free(&rows);
}

/* twelve reasons and locations: all kept, each under its own name */
static void test_every_reason_kept(void **state)
{
	struct htab rows;
	struct row *r = NULL;

	assert_int_equal(rows__init(&rows), 0);
	for (uint32_t i = 1; i <= 12; i++) {
		struct ud_key k = key(i, 0x100 * i, UD_KEY_SOCK);

		for (uint32_t n = 0; n < i; n++)
			assert_int_equal(rows__add(&rows, &k, &val1, CAUSE_OTHER, 9, k.netns, &r), 0);
	}
	assert_int_equal(r->nreasons, 12);
	assert_int_equal(r->nlocs, 12);
	for (int i = 0; i < 12; i++) {
		assert_int_equal(r->reasons[i].reason, i + 1);
		assert_int_equal(r->reasons[i].drops, i + 1);
		assert_int_equal(r->locs[i].addr, 0x100 * (i + 1));
	}
	/* one reason under two causes is two entries, marked shared */
	struct ud_key k = key(1, 0x100, UD_KEY_SOCK | UD_KEY_CLOSE);

	assert_int_equal(rows__add(&rows, &k, &val1, CAUSE_SOCKET_CLOSE, 9, k.netns, &r), 0);
	assert_int_equal(r->nreasons, 13);
	assert_true(row__reason_shared(r, 0));
	assert_false(row__reason_shared(r, 1));
	assert_int_equal(r->close_port, 5001);
	/* a new snapshot: counts zeroed, lists refilled from it */
	row__reset(r);
	assert_int_equal(r->drops, 0);
	assert_int_equal(r->nreasons, 0);
	assert_int_equal(row__add(r, &k, &val1, CAUSE_SOCKET_CLOSE), 0);
	assert_int_equal(r->nreasons, 1);
	assert_int_equal(r->reasons[0].drops, 1);
	rows__free(&rows);
}

/* fragments and frag_list members count, but not into the datagram size */
static void test_size_whole_datagrams(void **state)
{
	struct htab rows;
	struct ud_key whole = key(1, 1, UD_KEY_SOCK), frag = key(1, 1, UD_KEY_SOCK | UD_KEY_FRAG),
		      child = key(1, 1, UD_KEY_SOCK | UD_KEY_CHILD);
	struct ud_val f = { .datagrams = 1, .skbs = 1, .bytes = 1480 };
	struct ud_val c = { .datagrams = 0, .skbs = 1, .bytes = 700 };
	struct row *r;

	assert_int_equal(rows__init(&rows), 0);
	assert_int_equal(rows__add(&rows, &whole, &val1, CAUSE_RCVBUF, 5, 1, &r), 0);
	assert_int_equal(rows__add(&rows, &frag, &f, CAUSE_RCVBUF, 5, 1, &r), 0);
	assert_int_equal(rows__add(&rows, &child, &c, CAUSE_RCVBUF, 5, 1, &r), 0);
	assert_int_equal(r->drops, 2);
	assert_int_equal(r->bytes, 2280);
	assert_int_equal(r->size_bytes[CAUSE_RCVBUF], 100);
	assert_int_equal(r->size_dgrams[CAUSE_RCVBUF], 1);
	rows__free(&rows);
}

/*
 * The size the advice takes is the cause's own: a socket of 100 B
 * rcvbuf drops and 1400 B closing-queue drops sizes its buffer by 100 B
 * (every view: top, doctor and report once took the row's average, or
 * none), and a reassembly cause has none.
 */
static void test_avg_size_per_cause(void **state)
{
	struct htab rows;
	struct ud_key k = key(1, 1, UD_KEY_SOCK), close_k = key(1, 2, UD_KEY_SOCK | UD_KEY_CLOSE);
	struct ud_val big = { .datagrams = 2, .skbs = 2, .bytes = 2800 };
	struct row *r;
	double size = -1;

	assert_int_equal(rows__init(&rows), 0);
	assert_int_equal(rows__add(&rows, &k, &val1, CAUSE_RCVBUF, 5, 1, &r), 0);
	assert_false(row__avg_size(r, CAUSE_SOCKET_CLOSE, &size));
	assert_int_equal(rows__add(&rows, &close_k, &big, CAUSE_SOCKET_CLOSE, 5, 1, &r), 0);
	assert_true(row__avg_size(r, CAUSE_RCVBUF, &size));
	assert_true(size == 100);
	assert_true(row__avg_size(r, CAUSE_SOCKET_CLOSE, &size));
	assert_true(size == 1400);
	r->size_bytes[CAUSE_FRAG_TIMEOUT] = 1000;
	r->size_dgrams[CAUSE_FRAG_TIMEOUT] = 1;
	assert_false(row__avg_size(r, CAUSE_FRAG_TIMEOUT, &size));
	assert_false(row__avg_size(r, CAUSE_MAX, &size));
	rows__free(&rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_row_per_socket),
		cmocka_unit_test(test_flows),
		cmocka_unit_test(test_every_reason_kept),
		cmocka_unit_test(test_size_whole_datagrams),
		cmocka_unit_test(test_avg_size_per_cause),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
