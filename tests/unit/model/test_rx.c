// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the deliveries' join in src/model/model_rows.c and their JSON: hand-made
 * rx snapshots (socket identity -> struct ud_rx, as tracer__read_rx gives)
 * joined into socket rows: the baseline, inode -> cookie, rates, peaks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "text_assert.h"
#include "model_fixture.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "htab.h"
#include "model.h"
#include "top_print.h"
#include "udpdrop.h"
#include "util.h"

#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

#define UNKNOWN_COOKIE 123456789ull /* matches no real socket */
#define UNKNOWN_INODE 987654321u

struct fx {
	struct model_fx x; /* first: the model and the snapshot */
	struct htab rx;              /* socket identity -> struct ud_rx */
	uint32_t r_rcvbuff;
	int fd;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || model_fx__open(&f->x)) {
		free(f);
		return -1;
	}
	f->fd = -1;
	if (htab__init(&f->rx, sizeof(uint64_t), sizeof(struct ud_rx))) {
		model_fx__close(&f->x);
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	model_fx__close(&f->x);
	htab__free(&f->rx);
	if (f->fd >= 0)
		close(f->fd);
	free(f);
	return 0;
}

static void fx_init(struct fx *f, const struct model_opts *o)
{
	model_fx__init(&f->x, o);
	f->r_rcvbuff = model_fx__reason(&f->x, "SOCKET_RCVBUFF");
}

/* Set (the tracer's counts are cumulative) one identity's deliveries. */
static void put_rx(struct fx *f, uint64_t id, uint64_t datagrams, uint32_t peak)
{
	struct ud_rx *v = htab__upsert(&f->rx, &id, NULL);

	assert_non_null(v);
	v->datagrams = datagrams;
	v->peak = peak;
}

/* A socket's drops, keyed by cookie (or by inode with UD_KEY_INODE). */
static void put_drop(struct fx *f, uint64_t id, uint32_t flags, uint64_t n)
{
	struct ud_key k;
	struct ud_val *v;

	memset(&k, 0, sizeof(k));
	k.netns = f->x.netns;
	k.reason = f->r_rcvbuff;
	k.cookie = id;
	k.flags = UD_KEY_SOCK | UD_KEY_RX_SK | flags;
	v = htab__upsert(&f->x.drops, &k, NULL);
	assert_non_null(v);
	v->datagrams = v->skbs = n;
	v->bytes = n * 100;
}

/* One interval as top reads it: deliveries first, then the update. */
static void update_at(struct fx *f, uint64_t ms, bool with_rx)
{
	assert_int_equal(model__update_rx(&f->x.m, with_rx ? &f->rx : NULL), 0);
	assert_int_equal(model__update(&f->x.m, &f->x.drops, f->x.overflow, f->x.stats,
				       f->x.m.start_ns + ms * 1000000ull), 0);
}

static struct row *find_sock(struct model *m, uint64_t cookie)
{
	for (int i = 0; i < m->nview_sockets; i++)
		if (m->view_sockets[i]->key.cookie == cookie)
			return m->view_sockets[i];
	return NULL;
}

static const char *json(struct fx *f, bool final)
{
	struct top_print_ctx oc = { .attach = "tp_btf", .final = final };

	sb_free(&f->x.sb);
	top_print__json(&f->x.m, &oc, &f->x.sb);
	assert_non_null(f->x.sb.buf);
	return f->x.sb.buf;
}


/* A UDP socket of ours on 127.0.0.1; its cookie and inode. */
static uint64_t open_udp(struct fx *f, uint32_t *inode)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	uint64_t cookie = 0;
	socklen_t clen = sizeof(cookie);
	struct stat st;

	f->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(f->fd >= 0);
	assert_int_equal(bind(f->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockopt(f->fd, SOL_SOCKET, SO_COOKIE, &cookie, &clen), 0);
	assert_int_not_equal(cookie, 0);
	assert_int_equal(fstat(f->fd, &st), 0);
	*inode = st.st_ino;
	return cookie;
}

/* ---- tests ---------------------------------------------------------- */

/* Counts before the baseline are not the run's; rates per interval. */
static void test_baseline_and_rate(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct row *r;

	fx_init(f, &o);
	put_rx(f, UNKNOWN_COOKIE, 40, 2304);
	assert_int_equal(model__baseline_rx(&f->x.m, &f->rx), 0);
	put_rx(f, UNKNOWN_COOKIE, 50, 4608);
	put_drop(f, UNKNOWN_COOKIE, 0, 4);
	update_at(f, 2000, true);

	assert_true(f->x.m.have_rx);
	r = find_sock(&f->x.m, UNKNOWN_COOKIE);
	assert_non_null(r);
	assert_int_equal(r->rx, 10);
	assert_true(r->rx_rate == 5.0);
	assert_int_equal(r->queue_peak, 4608);
	assert_true(r->rate == 2.0); /* the drops' rate is its own */

	/* next interval: 30 more in 3 s; the peak never goes down */
	put_rx(f, UNKNOWN_COOKIE, 80, 2304);
	update_at(f, 5000, true);
	r = find_sock(&f->x.m, UNKNOWN_COOKIE);
	assert_int_equal(r->rx, 40);
	assert_true(r->rx_rate == 10.0);
	assert_int_equal(r->queue_peak, 4608);

	/* nothing new: rate 0, counts stay */
	update_at(f, 6000, true);
	r = find_sock(&f->x.m, UNKNOWN_COOKIE);
	assert_int_equal(r->rx, 40);
	assert_true(r->rx_rate == 0.0);
}

/*
 * A socket first counted by inode (no cookie yet), then by cookie once a
 * dump made one: both are the socket's, summed on its cookie's row.
 */
static void test_inode_to_cookie(void **state)
{
	struct fx *f = *state;
	struct model_opts o = { .all = true }; /* the quiet socket has a row */
	uint32_t inode;
	uint64_t cookie;
	struct row *r;

	fx_init(f, &o);
	cookie = open_udp(f, &inode);
	put_rx(f, UD_RX_INODE | inode, 7, 1000);
	put_rx(f, cookie, 5, 3000);
	update_at(f, 1000, true);

	r = find_sock(&f->x.m, cookie);
	assert_non_null(r);
	assert_true(r->have_sock);
	assert_int_equal(r->drops, 0);
	assert_int_equal(r->rx, 12);
	assert_true(r->rx_rate == 12.0);
	assert_int_equal(r->queue_peak, 3000);

	/* an inode no dump has named stays an inode row, as its drops do */
	put_drop(f, UNKNOWN_INODE, UD_KEY_INODE, 2);
	put_rx(f, UD_RX_INODE | UNKNOWN_INODE, 9, 500);
	update_at(f, 2000, true);
	r = find_sock(&f->x.m, UD_RX_INODE | UNKNOWN_INODE);
	assert_non_null(r);
	assert_int_equal(r->drops, 2);
	assert_int_equal(r->rx, 9);
	assert_int_equal(r->queue_peak, 500);
	/* identity 0 (no cookie, no inode) belongs to no row */
	put_rx(f, 0, 100, 100);
	update_at(f, 3000, true);
	assert_int_equal(find_sock(&f->x.m, cookie)->rx, 12);
}

/*
 * A socket counted by inode, then by the cookie another dump (lifetimes')
 * made, that closed before the model's own dump could name it: the model
 * learns the pair from that dump, and the drops are one row, not two.
 */
static void test_inode_cookie_learned(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct sock_info si = { .cookie = UNKNOWN_COOKIE, .inode = UNKNOWN_INODE,
				.family = AF_INET, .proto = IPPROTO_UDP,
				.sport = 5000 };
	struct row *r;

	fx_init(f, &o);
	si.netns = f->x.netns;
	put_drop(f, UNKNOWN_INODE, UD_KEY_INODE, 2);
	put_drop(f, UNKNOWN_COOKIE, 0, 3);
	model__learn_socket(&f->x.m, &si, f->x.m.start_ns);
	update_at(f, 1000, false);
	r = find_sock(&f->x.m, UNKNOWN_COOKIE);
	assert_non_null(r);
	assert_int_equal(r->drops, 5);
	assert_null(find_sock(&f->x.m, UD_RX_INODE | UNKNOWN_INODE));
}

/*
 * A row made late (its first drop comes after deliveries) gets the last
 * interval's rate, not everything since start over one interval.
 */
static void test_row_made_late(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct row *r;

	fx_init(f, &o);
	put_rx(f, UNKNOWN_COOKIE, 1000, 2304);
	update_at(f, 1000, true);
	assert_null(find_sock(&f->x.m, UNKNOWN_COOKIE)); /* quiet: no row */
	put_rx(f, UNKNOWN_COOKIE, 1100, 9216);
	put_drop(f, UNKNOWN_COOKIE, 0, 1);
	update_at(f, 2000, true);
	r = find_sock(&f->x.m, UNKNOWN_COOKIE);
	assert_non_null(r);
	assert_int_equal(r->rx, 1100);
	assert_true(r->rx_rate == 100.0);
	assert_int_equal(r->queue_peak, 9216);
}

/* JSON: the fields when counted, null when not; the summary averages. */
static void test_json(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	const char *j;

	fx_init(f, &o);
	put_drop(f, UNKNOWN_COOKIE, 0, 3);
	update_at(f, 1000, false);
	assert_false(f->x.m.have_rx);
	j = json(f, false);
	ASSERT_HAS(j, "\"rx\":null,\"rx_per_s\":null,\"queue_peak\":null}");
	ASSERT_HAS(j, "\"filtered\":0,\"rx_overflow\":null,\"netns_unknown\":0}");

	put_rx(f, UNKNOWN_COOKIE, 30, 6912);
	f->x.stats[UD_STAT_RX_OVERFLOW] = 4;
	update_at(f, 2000, true);
	j = json(f, false);
	ASSERT_HAS(j, "\"locations\":{");
	ASSERT_HAS(j, "],\"rx\":30,\"rx_per_s\":30.0,\"queue_peak\":6912}");
	ASSERT_HAS(j, "\"filtered\":0,\"rx_overflow\":4,\"netns_unknown\":0}");
	/* the summary: 30 over the 2 s since start */
	f->x.m.last_ns = f->x.m.start_ns + 2000000000ull;
	j = json(f, true);
	ASSERT_HAS(j, "\"rx\":30,\"rx_per_s\":15.0,\"queue_peak\":6912,\"advice\":[");
}

/*
 * A socket that closed before any dump saw it, whose purged queue the
 * kernel counted as its own (UD_KEY_SOCK | UD_KEY_CLOSE, the port kept):
 * one row, socket_close, in its netns, shown as *:PORT rather than ?.
 */
static void test_closed_unseen_named_by_purge(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct ud_key k;
	struct ud_val *v;
	struct row *r;
	const char *j;

	fx_init(f, &o);
	memset(&k, 0, sizeof(k));
	k.netns = f->x.netns;
	k.reason = model_fx__reason(&f->x, "NOT_SPECIFIED");
	k.cookie = UNKNOWN_COOKIE;
	k.flags = UD_KEY_SOCK | UD_KEY_CLOSE;
	k.dport = 5066;
	k.family = AF_INET;
	k.proto = IPPROTO_UDP;
	v = htab__upsert(&f->x.drops, &k, NULL);
	assert_non_null(v);
	v->datagrams = v->skbs = 7;
	update_at(f, 1000, false);

	r = find_sock(&f->x.m, UNKNOWN_COOKIE);
	assert_non_null(r);
	assert_int_equal(r->drops, 7);
	assert_int_equal(r->cause[CAUSE_SOCKET_CLOSE], 7);
	assert_true(r->have_sock);
	assert_true(r->sock.partial);
	assert_int_equal(r->sock.sport, 5066);
	assert_int_equal(r->key.netns, f->x.netns);
	assert_int_equal(f->x.m.nview_flows, 0);
	j = json(f, false);
	ASSERT_HAS(j, "\"local\":\"*:5066\"");
	ASSERT_HAS(j, "\"causes\":{\"socket_close\":7}");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_baseline_and_rate),
		T(test_inode_to_cookie),
		T(test_inode_cookie_learned),
		T(test_row_made_late),
		T(test_json),
		T(test_closed_unseen_named_by_purge),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
