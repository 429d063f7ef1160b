// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for src/cmd/top/view.c, the live view's model: sorting (three-way,
 * stable tie-breaker), filtering, the cursor that follows its socket,
 * rates, units, history, column fitting and cell truncation. Hand-made
 * rows and a zeroed model: no BPF, no root, no terminal.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "advice.h"
#include "model.h"
#include "view.h"

/* ---- helpers ------------------------------------------------------------ */

/* A socket row as the aggregator leaves it. */
static struct row sock_row(uint64_t cookie, const char *ip, uint16_t port,
			   double rate, uint64_t drops, int pid, const char *comm)
{
	struct row r;

	memset(&r, 0, sizeof(r));
	r.key.kind = ROW_SOCKET;
	r.key.cookie = cookie;
	r.key.netns = 4026531840u;
	r.rate = rate;
	r.drops = drops;
	r.skbs = drops;
	r.bytes = drops * 1000;
	r.cause[CAUSE_RCVBUF] = drops;
	/* whole datagrams of 1000 B: the size the advice takes (rows.c) */
	r.size_bytes[CAUSE_RCVBUF] = r.bytes;
	r.size_dgrams[CAUSE_RCVBUF] = drops;
	r.have_sock = true;
	r.sock_alive = true;
	r.sock.cookie = cookie;
	r.sock.family = AF_INET;
	r.sock.proto = 17;
	assert_int_equal(inet_pton(AF_INET, ip, r.sock.saddr), 1);
	r.sock.sport = port;
	r.sock.have_mem = true;
	r.sock.rcvbuf = 8192;
	r.sock.rmem = 4096;
	if (pid) {
		r.sock.npids = 1;
		r.sock.pids[0] = pid;
		snprintf(r.sock.comm, sizeof(r.sock.comm), "%s", comm);
	}
	return r;
}

static struct row flow_row(const char *dst, uint16_t dport, double rate,
			   uint64_t drops, enum cause c)
{
	struct row r;

	memset(&r, 0, sizeof(r));
	r.key.kind = ROW_FLOW;
	r.key.netns = 4026531840u;
	r.key.family = AF_INET;
	r.key.proto = 17;
	r.key.cause = c;
	r.key.dport = dport;
	assert_int_equal(inet_pton(AF_INET, "10.0.0.1", r.key.saddr), 1);
	assert_int_equal(inet_pton(AF_INET, dst, r.key.daddr), 1);
	r.rate = rate;
	r.drops = r.skbs = drops;
	r.cause[c] = drops;
	return r;
}

/* A zeroed model whose last update left these rows in view. */
struct fx {
	struct model m;
	struct view v;
	struct row rows[8];
	struct row *socks[8], *flows[8];
};

static void fx_view(struct fx *f, int nsock, int nflow)
{
	f->m.view_sockets = f->socks;
	f->m.view_flows = f->flows;
	f->m.nview_sockets = nsock;
	f->m.nview_flows = nflow;
	f->m.interval = 1;
	f->m.view_gen++; /* a new view, as model__update makes */
	assert_int_equal(view__refresh(&f->v, &f->m), 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || view__init(&f->v))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	view__free(&f->v);
	free(f->m.op_rows); /* the model's index (model__owner_port_rows) */
	free(f);
	return 0;
}

/* Three sockets (rates 5, 10, 10; the last two differ in total drops) and a flow. */
static void fx_three(struct fx *f)
{
	f->rows[0] = sock_row(1, "10.0.0.2", 5001, 5, 50, 100, "alpha");
	f->rows[1] = sock_row(2, "10.0.0.2", 5002, 10, 20, 200, "beta");
	f->rows[2] = sock_row(3, "10.0.0.3", 53, 10, 90, 300, "named");
	f->rows[3] = flow_row("10.0.0.2", 5999, 2, 7, CAUSE_NO_SOCKET);
	for (int i = 0; i < 3; i++)
		f->socks[i] = &f->rows[i];
	f->flows[0] = &f->rows[3];
	fx_view(f, 3, 1);
}

static const char *local_at(struct fx *f, int i)
{
	return f->v.rows[i].text[COL_LOCAL];
}

/* Sockets no dump named (gone first): by cookie, or by inode (sockid.h). */
static void test_unnamed_sockets(void **state)
{
	struct fx *f = *state;

	for (int i = 0; i < 2; i++) {
		memset(&f->rows[i], 0, sizeof(f->rows[i]));
		f->rows[i].key.kind = ROW_SOCKET;
		f->rows[i].drops = f->rows[i].skbs = 10 - i;
		f->socks[i] = &f->rows[i];
	}
	f->rows[0].key.cookie = 42;
	f->rows[1].key.cookie = UD_RX_INODE | 900;
	fx_view(f, 2, 0);
	assert_string_equal(local_at(f, 0), "? (cookie 42)");
	assert_string_equal(local_at(f, 1), "? (inode 900)");
}

/* ---- units ---------------------------------------------------------------- */

static void test_fmt_rate(void **state)
{
	char b[16];
	static const struct { double in; const char *out; } cases[] = {
		{ 0, "0" }, { 0.4, "0" }, { 12, "12" }, { 9999, "9999" },
		{ 10000, "10.0k" }, { 99949, "99.9k" }, { 123456, "123k" },
		{ 1.5e6, "1.5M" }, { 250e6, "250M" }, { 2e9, "2.0G" },
		{ -3, "0" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fmt_rate(b, sizeof(b), cases[i].in);
		assert_string_equal(b, cases[i].out);
	}
	fmt_rate(b, sizeof(b), NAN);
	assert_string_equal(b, "0");
}

static void test_rate_per_s(void **state)
{
	assert_true(rate_per_s(150, 50, 2.0) == 50.0);
	/* no time, or no measurable time: no rate rather than infinity */
	assert_true(rate_per_s(150, 50, 0) == 0);
	assert_true(rate_per_s(150, 50, 1e-9) == 0);
	assert_true(rate_per_s(150, 50, -1) == 0);
	assert_true(rate_per_s(150, 50, NAN) == 0);
	/* a very short but real interval gives a large, finite rate */
	assert_true(rate_per_s(101, 100, 1e-6) == 1e6);
	/* a counter that went backwards (reset) is not a negative rate */
	assert_true(rate_per_s(5, 50, 1) == 0);
}

/* ---- sorting -------------------------------------------------------------- */

static void test_default_sort(void **state)
{
	struct fx *f = *state;

	fx_three(f);
	/* rate desc; the two at 10/s: more total drops first */
	assert_int_equal(f->v.nrows, 3);
	assert_string_equal(local_at(f, 0), "10.0.0.3:53");
	assert_string_equal(local_at(f, 1), "10.0.0.2:5002");
	assert_string_equal(local_at(f, 2), "10.0.0.2:5001");
}

static void test_sort_columns_and_reverse(void **state)
{
	struct fx *f = *state;

	fx_three(f);
	f->v.sort = COL_LOCAL; /* by port, ascending */
	view__resort(&f->v);
	assert_string_equal(local_at(f, 0), "10.0.0.3:53");
	assert_string_equal(local_at(f, 2), "10.0.0.2:5002");
	f->v.reverse = true;
	view__resort(&f->v);
	assert_string_equal(local_at(f, 0), "10.0.0.2:5002");
	f->v.reverse = false;
	f->v.sort = COL_DROPS; /* largest first */
	view__resort(&f->v);
	assert_string_equal(local_at(f, 0), "10.0.0.3:53");
	assert_string_equal(local_at(f, 1), "10.0.0.2:5001");
	f->v.sort = COL_OWNER; /* by pid */
	view__resort(&f->v);
	assert_int_equal(f->v.rows[0].pid, 100);
	assert_int_equal(f->v.rows[2].pid, 300);
}

/* Every column's comparison is a total order: antisymmetric, reflexive. */
static void test_cmp_three_way(void **state)
{
	struct fx *f = *state;

	f->rows[0] = sock_row(1, "10.0.0.2", 5001, 5, 50, 100, "alpha");
	f->rows[1] = sock_row(2, "10.0.0.2", 5001, 5, 50, 100, "alpha"); /* same but the key */
	f->rows[2] = sock_row(3, "10.0.0.9", 9, 0, 0, 0, "");
	f->rows[2].sock.have_mem = false;
	for (int i = 0; i < 3; i++)
		f->socks[i] = &f->rows[i];
	f->v.group = false; /* the first two share a port: keep them apart */
	fx_view(f, 3, 0);
	assert_int_equal(f->v.nrows, 3);
	for (int c = 0; c < COL_MAX; c++) {
		f->v.sort = c;
		for (int rev = 0; rev < 2; rev++) {
			f->v.reverse = rev;
			for (int i = 0; i < 3; i++) {
				assert_int_equal(view__cmp(&f->v, &f->v.rows[i], &f->v.rows[i]), 0);
				for (int j = 0; j < 3; j++) {
					int a = view__cmp(&f->v, &f->v.rows[i], &f->v.rows[j]);
					int b = view__cmp(&f->v, &f->v.rows[j], &f->v.rows[i]);

					assert_true((a > 0) == (b < 0));
					if (i != j)
						assert_int_not_equal(a, 0); /* the key breaks every tie */
				}
			}
		}
	}
}

static void test_col_from_name(void **state)
{
	assert_int_equal(view_col__from_name("rate"), COL_DROP_RATE);
	assert_int_equal(view_col__from_name("DROPS/s"), COL_DROP_RATE);
	assert_int_equal(view_col__from_name("drops"), COL_DROPS);
	assert_int_equal(view_col__from_name("Pid"), COL_OWNER);
	assert_int_equal(view_col__from_name("PID/COMM"), COL_OWNER);
	assert_int_equal(view_col__from_name("nope"), -1);
	assert_int_equal(view_col__from_name(""), -1);
	for (int c = 0; c < COL_MAX; c++)
		assert_int_equal(view_col__from_name(view_cols[c].name), c);
}

/* ---- filter --------------------------------------------------------------- */

static int filtered(struct fx *f, const char *filter)
{
	const char *why;

	assert_int_equal(view__set_filter(&f->v, filter, &why), 0);
	assert_int_equal(view__refresh(&f->v, &f->m), 0);
	return f->v.nrows + f->v.nflows;
}

static void test_filter_terms(void **state)
{
	struct fx *f = *state;

	fx_three(f);
	f->rows[1].cause[CAUSE_SOCKET_FILTER] = 1; /* a second cause */
	assert_int_equal(filtered(f, ""), 4);
	assert_int_equal(filtered(f, "port:5001"), 1);
	assert_string_equal(local_at(f, 0), "10.0.0.2:5001");
	assert_int_equal(filtered(f, "port=53"), 1);
	assert_int_equal(filtered(f, "port:5999"), 1); /* the flow's destination */
	assert_int_equal(f->v.nflows, 1);
	assert_int_equal(filtered(f, "port:500"), 0);  /* whole numbers only */
	assert_int_equal(filtered(f, "pid:200"), 1);
	assert_int_equal(filtered(f, "pid:20"), 0);
	assert_int_equal(filtered(f, "comm:NAM"), 1);  /* substring, any case */
	assert_int_equal(filtered(f, "cause:rcvbuf"), 3);
	assert_int_equal(filtered(f, "cause:socket_filter"), 1); /* not only the main cause */
	assert_int_equal(filtered(f, "cause:no_socket"), 1);
	assert_int_equal(filtered(f, "netns:4026531840"), 4);
	assert_int_equal(filtered(f, "netns:99"), 0);
	/* bare words match any column's text */
	assert_int_equal(filtered(f, "10.0.0.3"), 1);
	assert_int_equal(filtered(f, "beta"), 1);
	/* terms must all match */
	assert_int_equal(filtered(f, "10.0.0.2 cause:rcvbuf"), 2);
	assert_int_equal(filtered(f, "10.0.0.2   port:5002 "), 1);
	assert_int_equal(filtered(f, "10.0.0.3 port:5002"), 0);
	assert_int_equal(f->v.total_rows, 3);
}

static void test_filter_rejects(void **state)
{
	struct fx *f = *state;
	const char *why;
	static const char *const bad[] = { "port:", "port:abc", "pid:1x", "cause:bogus",
					   "comm:", "10.0.0.2 cause:nope" };

	fx_three(f);
	assert_int_equal(filtered(f, "port:5001"), 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		assert_int_equal(view__set_filter(&f->v, bad[i], &why), -EINVAL);
		assert_non_null(why);
		/* a bad filter leaves the one in force */
		assert_string_equal(f->v.filter, "port:5001");
	}
	/* an address with a port is a bare word, not a field */
	assert_int_equal(filtered(f, "10.0.0.2:5002"), 1);
}

/* ---- cursor --------------------------------------------------------------- */

static void test_cursor_follows_socket(void **state)
{
	struct fx *f = *state;
	const struct view_row *cur;

	fx_three(f);
	view__move_to(&f->v, 2); /* 10.0.0.2:5001, the quietest */
	assert_string_equal(view__current(&f->v)->text[COL_LOCAL], "10.0.0.2:5001");
	/* it becomes the busiest: the order changes, the cursor stays on it */
	f->rows[0].rate = 1000;
	assert_int_equal(view__refresh(&f->v, &f->m), 0);
	cur = view__current(&f->v);
	assert_string_equal(cur->text[COL_LOCAL], "10.0.0.2:5001");
	assert_int_equal(f->v.cursor[0], 0);
	/* a resort by another column: still on it */
	f->v.sort = COL_LOCAL;
	view__resort(&f->v);
	assert_string_equal(view__current(&f->v)->text[COL_LOCAL], "10.0.0.2:5001");
	assert_int_equal(f->v.cursor[0], 1);
	/* filtered away: the cursor stays in range */
	assert_int_equal(filtered(f, "port:53"), 1);
	assert_int_equal(f->v.cursor[0], 0);
	assert_non_null(view__current(&f->v));
	/* nothing left: no current row, no crash */
	assert_int_equal(filtered(f, "port:1"), 0);
	assert_null(view__current(&f->v));
	view__move(&f->v, 5);
	view__move(&f->v, -5);
	assert_null(view__current(&f->v));
}

static void test_move_and_scroll(void **state)
{
	struct fx *f = *state;

	fx_three(f);
	view__move(&f->v, -1);
	assert_int_equal(f->v.cursor[0], 0);
	view__move(&f->v, 100);
	assert_int_equal(f->v.cursor[0], 2);
	view__scroll(&f->v, 0, 2); /* a two-line window shows rows 1 and 2 */
	assert_int_equal(f->v.scroll[0], 1);
	view__move_to(&f->v, 0);
	view__scroll(&f->v, 0, 2);
	assert_int_equal(f->v.scroll[0], 0);
	view__scroll(&f->v, 0, 10); /* a tall window never scrolls */
	assert_int_equal(f->v.scroll[0], 0);
	view__scroll(&f->v, 0, 0); /* no room at all: no crash */
}

static void test_search(void **state)
{
	struct fx *f = *state;

	fx_three(f);
	snprintf(f->v.search, sizeof(f->v.search), "10.0.0.2");
	assert_true(view__search(&f->v, true));
	assert_string_equal(view__current(&f->v)->text[COL_LOCAL], "10.0.0.2:5002");
	assert_true(view__search(&f->v, true));
	assert_string_equal(view__current(&f->v)->text[COL_LOCAL], "10.0.0.2:5001");
	/* next: the flow panel (destination 10.0.0.2:5999) */
	assert_true(view__search(&f->v, true));
	assert_int_equal(f->v.panel, 1);
	snprintf(f->v.search, sizeof(f->v.search), "named");
	assert_true(view__search(&f->v, true));
	assert_int_equal(f->v.panel, 0);
	assert_string_equal(view__current(&f->v)->text[COL_LOCAL], "10.0.0.3:53");
	/* as the search is typed: the cursor's own row first */
	snprintf(f->v.search, sizeof(f->v.search), "10.0.0.3");
	assert_true(view__search(&f->v, false));
	assert_string_equal(view__current(&f->v)->text[COL_LOCAL], "10.0.0.3:53");
	snprintf(f->v.search, sizeof(f->v.search), "10.0.0.");
	assert_true(view__search(&f->v, false));
	assert_string_equal(view__current(&f->v)->text[COL_LOCAL], "10.0.0.3:53");
	snprintf(f->v.search, sizeof(f->v.search), "nothing-like-this");
	assert_false(view__search(&f->v, true));
	assert_false(view__search(&f->v, false));
	assert_string_equal(view__current(&f->v)->text[COL_LOCAL], "10.0.0.3:53");
}

/* ---- row text ------------------------------------------------------------- */

static void test_row_text(void **state)
{
	struct fx *f = *state;
	const struct view_row *vr;

	f->rows[0] = sock_row(1, "10.0.0.2", 5001, 12345, 1234567, 42, "app");
	f->rows[0].sock.npids = 3;
	f->rows[0].queue_peak = 8192;
	f->socks[0] = &f->rows[0];
	f->m.have_rx = true;
	f->rows[0].rx_rate = 250;
	fx_view(f, 1, 0);
	vr = &f->v.rows[0];
	assert_string_equal(vr->text[COL_PROTO], "udp");
	assert_string_equal(vr->text[COL_REMOTE], "*");
	assert_string_equal(vr->text[COL_OWNER], "42/app +2");
	assert_string_equal(vr->text[COL_DROP_RATE], "12.3k");
	assert_string_equal(vr->text[COL_DROPS], "1,234,567");
	assert_string_equal(vr->text[COL_RX_RATE], "250");
	assert_string_equal(vr->text[COL_CAUSE], "rcvbuf");
	assert_string_equal(vr->text[COL_RCVBUF], "8.0 KiB");
	assert_string_equal(vr->text[COL_QUEUE], "50/100%");
	assert_string_equal(vr->text[COL_NETNS], "4026531840");
	/* the advice's first change; no interval recorded yet, so no burst
	 * to size a buffer for (test_hint has one) */
	assert_string_equal(vr->text[COL_HINT], "raise rcvbuf (8 MiB)");
	/* dropping with nothing delivered: nobody reads it */
	f->rows[0].rx_rate = 0;
	fx_view(f, 1, 0);
	assert_string_equal(f->v.rows[0].text[COL_HINT], "app is not reading it");
	/* without the rx program: a dash, not a zero */
	f->m.have_rx = false;
	fx_view(f, 1, 0);
	assert_string_equal(f->v.rows[0].text[COL_RX_RATE], "-");
	/* a closed socket says so */
	f->rows[0].sock_alive = false;
	fx_view(f, 1, 0);
	assert_string_equal(f->v.rows[0].text[COL_HINT], "socket closed");
}

/* ---- SO_REUSEPORT groups ---------------------------------------------------- */

static void test_groups(void **state)
{
	struct fx *f = *state;
	struct row_key gk;
	const struct view_row *g = NULL;

	/* three unconnected sockets on 10.0.0.2:53, one connected on :53 too */
	f->rows[0] = sock_row(1, "10.0.0.2", 53, 10, 100, 100, "named");
	f->rows[1] = sock_row(2, "10.0.0.2", 53, 5, 50, 100, "named");
	f->rows[2] = sock_row(3, "10.0.0.2", 53, 0, 7, 200, "named2");
	f->rows[2].sock.rmem = 8000; /* the fullest queue is the group's */
	f->rows[2].cause[CAUSE_RCVBUF] = 0;
	f->rows[2].cause[CAUSE_SOCKET_FILTER] = 7;
	f->rows[3] = sock_row(4, "10.0.0.2", 53, 1, 1, 300, "client");
	f->rows[3].sock.dport = 4000;
	f->rows[3].sock.daddr[0] = 10;
	for (int i = 0; i < 4; i++)
		f->socks[i] = &f->rows[i];
	f->m.have_rx = true;
	f->rows[0].rx_rate = 20;
	f->rows[1].rx_rate = 30;
	fx_view(f, 4, 0);
	assert_true(view__group_key(&f->rows[0], &gk));
	assert_false(view__group_key(&f->rows[3], &gk)); /* connected: its own row */
	assert_int_equal(f->v.nrows, 2);
	assert_int_equal(f->v.total_rows, 2);
	for (int i = 0; i < f->v.nrows; i++)
		if (f->v.rows[i].key.kind == VIEW_ROW_GROUP)
			g = &f->v.rows[i];
	assert_non_null(g);
	assert_int_equal(g->members, 3);
	assert_int_equal(g->drops, 157);
	assert_true(g->drop_rate == 15);
	assert_true(g->rx_rate == 50);
	assert_string_equal(g->text[COL_DROPS], "157");
	assert_string_equal(g->text[COL_RX_RATE], "50");
	assert_string_equal(g->text[COL_CAUSE], "rcvbuf"); /* 150 of 157 */
	assert_string_equal(g->text[COL_OWNER], "2 processes");
	assert_string_equal(g->text[COL_QUEUE], "98%");
	assert_string_equal(g->text[COL_HINT], "3 sockets share the port (H: each)");
	/* the filter sees every member's pid and cause */
	assert_int_equal(filtered(f, "pid:200"), 1);
	assert_int_equal(f->v.rows[0].key.kind, VIEW_ROW_GROUP);
	assert_int_equal(filtered(f, "cause:socket_filter"), 1);
	assert_int_equal(filtered(f, "pid:300"), 1);
	assert_int_equal(f->v.rows[0].key.kind, ROW_SOCKET);
	/* H: one row per socket */
	assert_int_equal(filtered(f, ""), 2);
	f->v.group = false;
	assert_int_equal(view__refresh(&f->v, &f->m), 0);
	assert_int_equal(f->v.nrows, 4);
	/* a closed socket on the port (a restarted service) is not a member */
	f->rows[1].sock_alive = false;
	assert_int_equal(view__refresh(&f->v, &f->m), 0);
	assert_int_equal(f->v.nrows, 4); /* grouping off still */
	f->v.group = true;
	assert_int_equal(view__refresh(&f->v, &f->m), 0);
	assert_int_equal(f->v.nrows, 3); /* the group of two, the closed one, the client */
	assert_false(view__group_key(&f->rows[1], &gk));
	f->rows[1].sock_alive = true;
	/* a lone member is not a group */
	f->v.group = true;
	fx_view(f, 1, 0);
	assert_int_equal(f->v.nrows, 1);
	assert_int_equal(f->v.rows[0].key.kind, ROW_SOCKET);
	/* the group's history is the members' summed rate */
	fx_view(f, 4, 0);
	view__record(&f->v, &f->m);
	float h[4];

	assert_true(view__group_key(&f->rows[0], &gk));
	assert_int_equal(view__history(&f->v, &gk, h, NULL, NULL, 4), 1);
	assert_true(h[0] == 15);
}

/* ---- history -------------------------------------------------------------- */

static void test_history(void **state)
{
	struct fx *f = *state;
	float h[HIST_LEN];
	int8_t q[HIST_LEN];
	int n;

	fx_three(f);
	for (int i = 1; i <= 3; i++) {
		f->rows[0].rate = i;
		view__record(&f->v, &f->m);
	}
	n = view__history(&f->v, &f->rows[0].key, h, q, NULL, HIST_LEN);
	assert_int_equal(n, 3);
	assert_true(h[0] == 1 && h[1] == 2 && h[2] == 3);
	/* two refreshes out of view: zeros keep the time axis */
	f->m.nview_sockets = 0;
	view__record(&f->v, &f->m);
	view__record(&f->v, &f->m);
	f->m.nview_sockets = 3;
	f->rows[0].rate = 9;
	view__record(&f->v, &f->m);
	n = view__history(&f->v, &f->rows[0].key, h, q, NULL, HIST_LEN);
	assert_int_equal(n, 6);
	assert_true(h[2] == 3 && h[3] == 0 && h[4] == 0 && h[5] == 9);
	/* the queue sampled alongside (4096 of 8192 B), unknown in the gap */
	assert_int_equal(q[2], 50);
	assert_int_equal(q[3], -1);
	assert_int_equal(q[5], 50);
	/* each sample keeps the interval it covered */
	float dt[HIST_LEN];

	f->m.interval = 0.25;
	view__record(&f->v, &f->m);
	n = view__history(&f->v, &f->rows[0].key, h, q, dt, HIST_LEN);
	assert_int_equal(n, 7);
	assert_true(dt[5] == 1 && dt[6] == 0.25f);
	f->m.interval = 1;
	/* max: the newest ones */
	n = view__history(&f->v, &f->rows[0].key, h, q, NULL, 2);
	assert_int_equal(n, 2);
	assert_true(h[0] == 9 && h[1] == 9);
	/* the ring wraps: the newest HIST_LEN stay */
	for (int i = 0; i < HIST_LEN + 5; i++) {
		f->rows[0].rate = i;
		view__record(&f->v, &f->m);
	}
	n = view__history(&f->v, &f->rows[0].key, h, q, NULL, HIST_LEN);
	assert_int_equal(n, HIST_LEN);
	assert_true(h[HIST_LEN - 1] == HIST_LEN + 4);
	assert_true(h[0] == 5);
	/* a row never seen has none */
	struct row_key k = { .kind = ROW_SOCKET, .cookie = 999 };

	assert_int_equal(view__history(&f->v, &k, h, NULL, NULL, HIST_LEN), 0);
}

static void test_sparkline(void **state)
{
	char out[256];
	float max;
	const float v[] = { 0, 1, 4, 8 };

	view__sparkline(out, sizeof(out), v, 4, 10, false, &max);
	assert_true(max == 8);
	assert_string_equal(out, " .=@");
	/* only the newest `width` samples */
	view__sparkline(out, sizeof(out), v, 4, 2, false, &max);
	assert_string_equal(out, "=@");
	/* UTF-8 blocks: 3 bytes each, the lowest for any drop at all */
	view__sparkline(out, sizeof(out), v, 4, 10, true, &max);
	assert_string_equal(out, " \xe2\x96\x81\xe2\x96\x84\xe2\x96\x88");
	/* all quiet */
	const float z[] = { 0, 0 };

	view__sparkline(out, sizeof(out), z, 2, 10, false, &max);
	assert_string_equal(out, "  ");
	assert_true(max == 0);
	/* a tiny buffer is never overrun */
	view__sparkline(out, 3, v, 4, 10, true, NULL);
	assert_true(strlen(out) < 3);
}

static void test_rcvbuf_pattern(void **state)
{
	const float quiet[] = { 0, 0, 0 }, drops[] = { 5, 9, 7, 8, 6 }, old[] = { 9, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0 };
	const int8_t full[] = { 84, 90, 84, 99, 84 }, drained[] = { 0, 3, 84, 0, 1 },
		     unknown[] = { -1, -1, -1, -1, -1 };

	assert_int_equal(view__rcvbuf_pattern(quiet, NULL, 3, true, 10), RCVBUF_QUIET);
	/* drops, the last over ten refreshes ago: quiet now */
	assert_int_equal(view__rcvbuf_pattern(old, NULL, 12, true, 0), RCVBUF_QUIET);
	assert_int_equal(view__rcvbuf_pattern(drops, full, 5, true, 0), RCVBUF_NOT_READING);
	/* without the rx program nothing says "not reading" */
	assert_int_equal(view__rcvbuf_pattern(drops, full, 5, false, 0), RCVBUF_SUSTAINED);
	assert_int_equal(view__rcvbuf_pattern(drops, full, 5, true, 300), RCVBUF_SUSTAINED);
	assert_int_equal(view__rcvbuf_pattern(drops, drained, 5, true, 300), RCVBUF_BURSTS);
	/* too few queue samples to tell sustained from bursts: no pattern
	 * (not "bursts", which would contradict a reader that never reads) */
	assert_int_equal(view__rcvbuf_pattern(drops, unknown, 5, true, 300), RCVBUF_UNKNOWN);
	assert_int_equal(view__rcvbuf_pattern(drops, full, 2, true, 300), RCVBUF_UNKNOWN);
	assert_int_equal(view__rcvbuf_pattern(drops, NULL, 5, true, 300), RCVBUF_UNKNOWN);
	assert_int_equal(view__rcvbuf_pattern(drops, unknown, 5, false, 0), RCVBUF_UNKNOWN);
	assert_int_equal(view__rcvbuf_pattern(drops, drained, 2, true, 300), RCVBUF_UNKNOWN);
	/* three known looks are enough */
	assert_int_equal(view__rcvbuf_pattern(drops, drained, 3, true, 300), RCVBUF_BURSTS);
}

/* ---- layout --------------------------------------------------------------- */

static int line_width(const int *w)
{
	int used = 0, n = 0;

	for (int c = 0; c < COL_MAX; c++)
		if (w[c]) {
			used += w[c];
			n++;
		}
	return used + (n ? n - 1 : 0);
}

static void test_fit_widths(void **state)
{
	static const int widths[] = { 250, 160, 120, 100, 80, 60, 40, 20, 5 };
	int w[COL_MAX], content[COL_MAX];

	/* typical content: "10.0.0.2:5001", "1234/named" ... */
	for (int c = 0; c < COL_MAX; c++)
		content[c] = 8;
	content[COL_LOCAL] = 15;
	content[COL_OWNER] = 13;
	content[COL_HINT] = 26;
	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		int shown = view__fit(widths[i], content, w);

		assert_true(shown >= 1);
		/* the local address is the last to go */
		assert_true(w[COL_LOCAL] > 0);
		if (widths[i] >= 20)
			assert_true(line_width(w) <= widths[i]);
		if (widths[i] >= 80) {
			/* at 80 columns: what matters most is all there */
			assert_true(w[COL_DROP_RATE] >= 8);
			assert_true(w[COL_DROPS] > 0 && w[COL_CAUSE] > 0 && w[COL_OWNER] >= 13);
		}
	}
	/* wide: every column at its content width, the hint to the edge */
	view__fit(250, content, w);
	for (int c = 0; c < COL_MAX; c++)
		assert_true(w[c] > 0);
	assert_int_equal(w[COL_LOCAL], 15);
	assert_int_equal(line_width(w), 250);
	/* a hidden column stays hidden, however wide */
	content[COL_NETNS] = -1;
	view__fit(250, content, w);
	assert_int_equal(w[COL_NETNS], 0);
	/* titles are never cut: a column of short cells is as wide as its title + mark */
	view__fit(250, NULL, w);
	assert_true(w[COL_DROP_RATE] >= (int)strlen("DROPS/s") + 1);
	/* an overlong cell is capped */
	content[COL_HINT] = 500;
	view__fit(1000, content, w);
	assert_true(w[COL_HINT] >= VIEW_COL_CAP); /* the hint also takes the slack */
	content[COL_LOCAL] = 500;
	view__fit(1000, content, w);
	assert_int_equal(w[COL_LOCAL], VIEW_COL_CAP);
}

static void test_cell(void **state)
{
	char out[128];

	view__cell(out, sizeof(out), "abc", 5, false, false, false);
	assert_string_equal(out, "abc  ");
	view__cell(out, sizeof(out), "abc", 5, true, false, false);
	assert_string_equal(out, "  abc");
	view__cell(out, sizeof(out), "abcde", 5, false, false, false);
	assert_string_equal(out, "abcde");
	view__cell(out, sizeof(out), "abcdef", 5, false, false, false);
	assert_string_equal(out, "abcd~");
	view__cell(out, sizeof(out), "abcdef", 5, false, false, true);
	assert_string_equal(out, "abcd\xe2\x80\xa6");
	/* addresses keep their port */
	view__cell(out, sizeof(out), "[fd00:213:17::2]:5001", 10, false, true, false);
	assert_string_equal(out, "~::2]:5001");
	view__cell(out, sizeof(out), "[fd00:213:17::2]:5001", 10, false, true, true);
	assert_string_equal(out, "\xe2\x80\xa6::2]:5001");
	/* UTF-8 input counts cells, not bytes */
	view__cell(out, sizeof(out), "\xe2\x96\x88\xe2\x96\x88", 3, true, false, true);
	assert_string_equal(out, " \xe2\x96\x88\xe2\x96\x88");
	view__cell(out, sizeof(out), "\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88", 2, false, false, true);
	assert_string_equal(out, "\xe2\x96\x88\xe2\x80\xa6");
	/* no room */
	view__cell(out, sizeof(out), "abc", 0, false, false, false);
	assert_string_equal(out, "");
	view__cell(out, sizeof(out), "abc", 1, false, false, false);
	assert_string_equal(out, "~");
	/* a small output buffer is never overrun */
	view__cell(out, 4, "abcdefgh", 20, false, false, false);
	assert_string_equal(out, "abc");
}

/* ---- advice: the input from a row, the HINT ------------------------------ */

static struct live_env test_env;

static const struct live_env *env_cb(void *ctx, struct model *m, const struct row *r)
{
	(void)m;
	(void)r;
	return ctx;
}

/* One refresh of the model: the rows' counts as they are now. */
static void fx_tick(struct fx *f, int nsock, int nflow)
{
	f->m.view_sockets = f->socks;
	f->m.view_flows = f->flows;
	f->m.nview_sockets = nsock;
	f->m.nview_flows = nflow;
	f->m.interval = 1;
	view__record(&f->v, &f->m);
	fx_view(f, nsock, nflow);
}

static void test_advice_input(void **state)
{
	struct fx *f = *state;
	struct advice_input in;
	char who[128];

	memset(&test_env, 0, sizeof(test_env));
	test_env.rmem_default = ADVICE_U64(212992);
	test_env.rmem_max = ADVICE_U64(4194304);
	test_env.udp_mem[0] = ADVICE_U64(1);
	test_env.udp_mem[1] = ADVICE_U64(2);
	test_env.udp_mem[2] = ADVICE_U64(3);
	test_env.netdev_max_backlog = ADVICE_U64(1000);
	test_env.mtu = ADVICE_U64(1500); /* no ifname: ambiguous, not passed */
	f->v.env = env_cb;
	f->v.env_ctx = &test_env;
	f->m.have_rx = true;
	f->m.start_ns = 1000000000ull;
	f->m.last_ns = 3000000000ull;
	f->rows[0] = sock_row(1, "10.0.0.2", 5001, 0, 10, 42, "app");
	f->rows[0].queue_peak = 8000;
	f->rows[0].rx = 500;
	f->rows[0].rx_rate = 90;
	f->socks[0] = &f->rows[0];
	fx_tick(f, 1, 0);                   /* 10 drops in the first interval */
	f->rows[0].drops = f->rows[0].skbs = f->rows[0].cause[CAUSE_RCVBUF] = 14;
	f->rows[0].cause_skbs[CAUSE_RCVBUF] = 7;
	f->rows[0].bytes = f->rows[0].size_bytes[CAUSE_RCVBUF] = 14000;
	f->rows[0].size_dgrams[CAUSE_RCVBUF] = 14;
	f->rows[0].rate = 4;
	fx_tick(f, 1, 0);                   /* 4 more in the second */

	view__advice_input(&f->v, &f->m, &f->rows[0], CAUSE_RCVBUF, &in, who, sizeof(who));
	assert_int_equal(in.cause, CAUSE_RCVBUF);
	assert_true(in.has_socket);
	assert_false(in.sender_side);
	assert_string_equal(in.who, "10.0.0.2:5001");
	assert_int_equal(in.family, AF_INET);
	assert_true(in.port.known && in.port.v == 5001);
	assert_int_equal(in.drops, 14);
	assert_int_equal(in.skbs, 7);
	assert_true(in.span_s == 2.0);
	assert_true(in.avg_size.known && in.avg_size.v == 1000);
	/* arrivals: delivered + dropped over the last interval */
	assert_true(in.rate_dgps.known && in.rate_dgps.v == 94);
	assert_true(in.rate_Bps.known && in.rate_Bps.v == 94000);
	assert_false(in.truesize.known); /* estimated by the advice, and said so */
	assert_true(in.rcvbuf.known && in.rcvbuf.v == 8192);
	assert_true(in.queued.known && in.queued.v == 4096);
	assert_true(in.queue_peak.known && in.queue_peak.v == 8000);
	/* the worst interval: 10 drops in 1 s; two intervals, both dropping */
	assert_true(in.burst.known && in.burst.v == 10);
	assert_true(in.burst_s == 1.0);
	assert_false(in.burst_window);
	assert_true(in.intervals.known && in.intervals.v == 2);
	assert_true(in.intervals_dropping.known && in.intervals_dropping.v == 2);
	assert_true(in.rmem_default.known && in.rmem_default.v == 212992);
	assert_true(in.rmem_max.known && in.rmem_max.v == 4194304);
	assert_true(in.udp_mem[2].known && in.udp_mem[2].v == 3);
	assert_true(in.netdev_max_backlog.known && in.netdev_max_backlog.v == 1000);
	assert_null(in.ifname);
	assert_false(in.mtu.known);
	/* no counters base in this model: the kernel's deltas are unknown */
	assert_false(in.reads.known);
	assert_false(in.mib_rcvbuf_errors.known);

	/* not dropping now: the last interval says nothing of the arrivals
	 * during the drops (the advice bounds them by the burst) */
	f->rows[0].rate = 0;
	view__advice_input(&f->v, &f->m, &f->rows[0], CAUSE_RCVBUF, &in, who, sizeof(who));
	assert_false(in.rate_dgps.known);
	/* without the rx program: no queue peak, no arrivals */
	f->m.have_rx = false;
	f->rows[0].rate = 4;
	view__advice_input(&f->v, &f->m, &f->rows[0], CAUSE_RCVBUF, &in, who, sizeof(who));
	assert_false(in.rate_dgps.known);
	/* the queue peak then is the most the socket table's looks saw */
	assert_true(in.queue_peak.known && in.queue_peak.v == 4096);
	/* a known interface goes in */
	snprintf(test_env.ifname, sizeof(test_env.ifname), "eth0");
	view__advice_input(&f->v, &f->m, &f->rows[0], CAUSE_RCVBUF, &in, who, sizeof(who));
	assert_string_equal(in.ifname, "eth0");
	assert_true(in.mtu.known && in.mtu.v == 1500);

	/* a socketless flow: its destination, no socket facts */
	f->rows[1] = flow_row("10.0.0.2", 53, 2, 7, CAUSE_NO_SOCKET);
	view__advice_input(&f->v, &f->m, &f->rows[1], CAUSE_NO_SOCKET, &in, who, sizeof(who));
	assert_false(in.has_socket);
	assert_string_equal(in.who, "10.0.0.1 -> 10.0.0.2:53");
	assert_true(in.port.known && in.port.v == 53);
	assert_false(in.rcvbuf.known);
	assert_int_equal(in.drops, 7);
}

static void test_hint(void **state)
{
	struct fx *f = *state;
	struct advice_input in;
	struct advice_finding fd[ADVICE_MAX];
	char who[128];

	memset(&test_env, 0, sizeof(test_env));
	test_env.rmem_default = ADVICE_U64(212992);
	test_env.rmem_max = ADVICE_U64(4194304);
	f->v.env = env_cb;
	f->v.env_ctx = &test_env;
	f->m.have_rx = true;
	/* a burst of 100 datagrams of 1000 B into 8 KiB, then quiet */
	f->rows[0] = sock_row(1, "10.0.0.2", 5001, 100, 100, 42, "app");
	f->rows[0].rx_rate = 50;
	f->rows[0].rx = 50; /* delivered while it dropped: it reads */
	f->socks[0] = &f->rows[0];
	f->rows[1] = flow_row("10.0.0.2", 53, 2, 7, CAUSE_NO_SOCKET);
	f->flows[0] = &f->rows[1];
	fx_tick(f, 1, 1);
	/*
	 * rcvbuf 8192 is not rmem_default: the app set SO_RCVBUF. Truesize
	 * ~2304 B (estimated), room for twice the burst: 8192 + 2 x 100 x
	 * 2304 = 468992, to pages 471040, asked as 235520 B = 230 KiB (the
	 * kernel doubles it).
	 */
	assert_string_equal(f->v.rows[0].text[COL_HINT], "SO_RCVBUF >= 230 KiB");
	/* the hint is the advice's change, shortened */
	view__advice_input(&f->v, &f->m, &f->rows[0], CAUSE_RCVBUF, &in, who, sizeof(who));
	assert_true(advice__build(&in, fd, ADVICE_MAX) >= 1);
	assert_non_null(strstr(fd[0].change, "setsockopt(fd, SOL_SOCKET, SO_RCVBUF, 235520)"));
	/* the default buffer: rmem_default is the change, at the full size */
	test_env.rmem_default = ADVICE_U64(8192);
	fx_view(f, 1, 1);
	assert_string_equal(f->v.rows[0].text[COL_HINT], "rmem_default >= 460 KiB");
	view__advice_input(&f->v, &f->m, &f->rows[0], CAUSE_RCVBUF, &in, who, sizeof(who));
	assert_true(advice__build(&in, fd, ADVICE_MAX) >= 1);
	assert_non_null(strstr(fd[0].change, "sysctl -w net.core.rmem_default=471040"));
	/* sysctls unknown: the buffer, as the RCVBUF column shows it */
	f->v.env = NULL;
	fx_view(f, 1, 1);
	assert_string_equal(f->v.rows[0].text[COL_HINT], "rcvbuf >= 460 KiB");
	/* the flows' panel says why no socket took them (its WHY column) */
	assert_string_equal(f->v.flows[0].text[COL_HINT], "no socket bound to the port");
	view__advice_input(&f->v, &f->m, &f->rows[1], CAUSE_NO_SOCKET, &in, who, sizeof(who));
	char h[ADVICE_HINT];
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "nothing on :53");
	/* dropping with nothing delivered: the socket's own fact first */
	f->rows[0].rx_rate = 0;
	fx_view(f, 1, 1);
	assert_string_equal(f->v.rows[0].text[COL_HINT], "app is not reading it");
	f->rows[0].rx_rate = 50;
	/* dropping in (nearly) every interval: a steady overload */
	for (int i = 2; i <= 5; i++) {
		f->rows[0].drops = f->rows[0].skbs = f->rows[0].cause[CAUSE_RCVBUF] = 100 * i;
		f->rows[0].bytes = f->rows[0].size_bytes[CAUSE_RCVBUF] = 100000ull * i;
		f->rows[0].size_dgrams[CAUSE_RCVBUF] = 100 * i;
		f->rows[0].rx = 50 * i; /* it reads, 50 a second */
		fx_tick(f, 1, 1);
	}
	/* to 90 % of the 50/s its reader took while it dropped */
	assert_string_equal(f->v.rows[0].text[COL_HINT], "pace <= 45/s");
	/* an already very large buffer: pace, whatever the burst */
	f->rows[0].sock.rcvbuf = 32u << 20;
	fx_view(f, 1, 1);
	assert_string_equal(f->v.rows[0].text[COL_HINT], "pace <= 45/s");
}

/* advice__hint for the causes the rows above do not reach. */
static void test_hint_causes(void **state)
{
	struct advice_input in;
	char h[ADVICE_HINT];

	(void)state;
	memset(&in, 0, sizeof(in));
	in.drops = 3;
	advice__hint(&in, h, sizeof(h)); /* rcvbuf, nothing known */
	assert_string_equal(h, "raise rcvbuf (8 MiB)");
	in.reads = ADVICE_U64(0);
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "not reading");
	in.cause = CAUSE_FRAG_TIMEOUT;
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "send <= MTU - 28 B");
	in.mtu = ADVICE_U64(1500);
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "send <= 1472 B");
	in.family = AF_INET6;
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "send <= 1452 B");
	in.cause = CAUSE_NO_SOCKET;
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "nothing on the port");
	in.cause = CAUSE_CPU_BACKLOG;
	in.netdev_max_backlog = ADVICE_U64(1000);
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "netdev_max_backlog=2000");
	/* the sender: a send buffer above size x txqueuelen */
	in.cause = CAUSE_QDISC;
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "pace the sender");
	in.avg_size = ADVICE_DBL(1000);
	in.txqueuelen = ADVICE_U64(100);
	in.sndbuf = ADVICE_U64(212992);
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "SO_SNDBUF <= 49 KiB"); /* 100000 / 2 */
	in.cause = CAUSE_UDP_MEM;
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "udp_mem full: ss -uam");
	/* every hint fits the column's natural width */
	for (int c = 0; c < CAUSE_MAX; c++) {
		in.cause = c;
		advice__hint(&in, h, sizeof(h));
		assert_true(strlen(h) >= 1 && strlen(h) <= 23);
	}
	/* nothing dropped: nothing to say */
	in.drops = 0;
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmt_rate),
		cmocka_unit_test(test_rate_per_s),
		cmocka_unit_test_setup_teardown(test_default_sort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unnamed_sockets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sort_columns_and_reverse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cmp_three_way, setup, teardown),
		cmocka_unit_test(test_col_from_name),
		cmocka_unit_test_setup_teardown(test_filter_terms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filter_rejects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cursor_follows_socket, setup, teardown),
		cmocka_unit_test_setup_teardown(test_move_and_scroll, setup, teardown),
		cmocka_unit_test_setup_teardown(test_search, setup, teardown),
		cmocka_unit_test_setup_teardown(test_row_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_history, setup, teardown),
		cmocka_unit_test_setup_teardown(test_groups, setup, teardown),
		cmocka_unit_test(test_sparkline),
		cmocka_unit_test(test_rcvbuf_pattern),
		cmocka_unit_test_setup_teardown(test_advice_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hint, setup, teardown),
		cmocka_unit_test(test_hint_causes),
		cmocka_unit_test(test_fit_widths),
		cmocka_unit_test(test_cell),
	};

	return cmocka_run_group_tests_name("view", tests, NULL, NULL);
}
