// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the reconciliation (src/model/model_reconcile.c,
 * src/model/model_counters.c, printed by src/cmd/top/top_print.c): udpdrop's
 * counts per netns and cause beside the kernel's MIB deltas, in JSON
 * (counters, reconcile, reconcile_caveat), in the plain summary and in
 * reconcile__lines. The kernel's counters are set by hand in struct
 * netns_counters (base, cur), as the tracer's snapshots are built by hand.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "causes.h"
#include "htab.h"
#include "model.h"
#include "reasons.h"
#include "reconcile.h"
#include "top_print.h"
#include "udpdrop.h"
#include "util.h"

#define COOKIE 123456789ull       /* matches no real socket */
#define OTHER_NETNS 4026599999u    /* no such netns: its counters are hand-set */

struct fx {
	struct model_fx x; /* first: the model and the snapshot */
	uint32_t r_rcvbuff, r_no_socket;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || model_fx__open(&f->x)) {
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
	free(f);
	return 0;
}

static void fx_init(struct fx *f, const struct model_opts *o)
{
	model_fx__init(&f->x, o);
	f->r_rcvbuff = model_fx__reason(&f->x, "SOCKET_RCVBUFF");
	f->r_no_socket = model_fx__reason(&f->x, "NO_SOCKET");
}

/* Set (the tracer's counts are cumulative) a socket's rcvbuf drops. */
static void put_sock(struct fx *f, uint32_t netns, uint64_t datagrams)
{
	struct ud_key k;
	struct ud_val *v;

	memset(&k, 0, sizeof(k));
	k.netns = netns;
	k.reason = f->r_rcvbuff;
	k.cookie = COOKIE;
	k.flags = UD_KEY_SOCK | UD_KEY_RX_SK;
	v = htab__upsert(&f->x.drops, &k, NULL);
	assert_non_null(v);
	v->datagrams = v->skbs = datagrams;
	v->bytes = datagrams * 100;
}

/* Set a no_socket flow's drops (a flow to port 9999). */
static void put_no_socket(struct fx *f, uint32_t netns, uint64_t datagrams)
{
	struct ud_key k;
	struct ud_val *v;

	memset(&k, 0, sizeof(k));
	k.netns = netns;
	k.reason = f->r_no_socket;
	k.family = AF_INET;
	k.proto = IPPROTO_UDP;
	k.dport = 9999;
	inet_pton(AF_INET, "10.1.2.3", k.saddr);
	inet_pton(AF_INET, "10.1.2.4", k.daddr);
	v = htab__upsert(&f->x.drops, &k, NULL);
	assert_non_null(v);
	v->datagrams = v->skbs = datagrams;
}

static void update_at(struct fx *f, uint64_t ms)
{
	assert_int_equal(model__update(&f->x.m, &f->x.drops, f->x.overflow, f->x.stats,
				       f->x.m.start_ns + ms * 1000000ull), 0);
}

static struct netns_counters *nc_of(struct fx *f, uint32_t netns)
{
	for (int i = 0; i < f->x.m.ncounters; i++)
		if (f->x.m.counters[i].netns == netns)
			return &f->x.m.counters[i];
	return NULL;
}

/*
 * The kernel's counters of a netns the model knows, by hand: in view,
 * with a base, every counter present and 0 but those set with mib().
 */
static struct netns_counters *hand_counters(struct fx *f, uint32_t netns)
{
	struct netns_counters *nc = nc_of(f, netns);

	assert_non_null(nc);
	nc->have_base = nc->in_view = true;
	nc->base_fresh = false;
	memset(&nc->base, 0, sizeof(nc->base));
	memset(&nc->cur, 0, sizeof(nc->cur));
	memset(nc->base.present, 1, sizeof(nc->base.present));
	memset(nc->cur.present, 1, sizeof(nc->cur.present));
	return nc;
}

static void mib(struct netns_counters *nc, enum mib_id id, uint64_t base, uint64_t cur)
{
	nc->base.v[id] = base;
	nc->cur.v[id] = cur;
}

static const char *json(struct fx *f)
{
	struct top_print_ctx oc = { .attach = "tp_btf", .final = true };

	sb_free(&f->x.sb);
	top_print__json(&f->x.m, &oc, &f->x.sb);
	assert_non_null(f->x.sb.buf);
	return f->x.sb.buf;
}

static const char *plain(struct fx *f)
{
	struct top_print_ctx oc = { .attach = "tp_btf", .final = true };

	sb_free(&f->x.sb);
	top_print__plain(&f->x.m, &oc, &f->x.sb);
	assert_non_null(f->x.sb.buf);
	return f->x.sb.buf;
}





/* One reconciliation line of the plain summary. */
static void line(char *buf, size_t len, const char *counter, const char *kern,
		 const char *cause, const char *ours, const char *verdict)
{
	snprintf(buf, len, "  %-18s +%-10s udpdrop %-14s %-10s %s\n", counter,
		 kern, cause, ours, verdict);
}

/* ---- tests ---------------------------------------------------------- */

/*
 * GSO/GRO: skbs of 16 datagrams dropped whole (a UDP_GRO socket's full
 * buffer), 2 of them with frag_list members freed along (UD_KEY_CHILD).
 * The kernel counts each skb once (UdpRcvbufErrors, sk_drops): the line
 * compares skbs and matches, keeps the datagrams beside, and says so.
 */
static void test_gro_match(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct netns_counters *nc;
	struct ud_key k;
	struct ud_val *v;
	const char *j, *p;

	fx_init(f, &o);
	put_sock(f, f->x.netns, 3); /* three plain datagrams too */
	update_at(f, 1000);
	nc = hand_counters(f, f->x.netns);
	mib(nc, MIB_UdpRcvbufErrors, 100, 100 + 3 + 50);
	memset(&k, 0, sizeof(k));
	k.netns = f->x.netns;
	k.reason = f->r_rcvbuff;
	k.cookie = COOKIE;
	k.flags = UD_KEY_SOCK | UD_KEY_RX_SK | UD_KEY_GRO;
	v = htab__upsert(&f->x.drops, &k, NULL);
	assert_non_null(v);
	v->datagrams = 50 * 16;
	v->skbs = 50;
	v->bytes = 50 * 16 * 1200;
	k.flags |= UD_KEY_CHILD;
	v = htab__upsert(&f->x.drops, &k, NULL);
	assert_non_null(v);
	v->skbs = 2;
	v->bytes = 2 * 1200;
	update_at(f, 2000);

	assert_int_equal(model__netns_cause(&f->x.m, f->x.netns, CAUSE_RCVBUF), 3 + 800);
	assert_int_equal(model__netns_cause_units(&f->x.m, f->x.netns, CAUSE_RCVBUF), 3 + 50);
	j = json(f);
	ASSERT_JQ(j, "[.reconcile[] | select(.netns == %u) | [.cause, .kernel, .udpdrop, .udpdrop_datagrams, .status]]"
		  " == [[\"rcvbuf\",53,53,803,\"match\"]]", f->x.netns);
	ASSERT_JQ(j, ".sockets[0] | .drops == 803 and .skb_events == 55 and .gro_datagrams == 800 "
		  "and .gro_skbs == 50");
	p = plain(f);
	ASSERT_HAS(p, "match (of 803 datagrams: a GSO/GRO skb counted once, as the kernel counts)");
	ASSERT_HAS(p, "800 of its datagrams came in 50 GSO/GRO skbs");
	ASSERT_LACKS(p, "differ");
}

/*
 * Reassembly timeouts of datagrams whose first fragment was dropped here
 * (a netfilter drop counted each): the kernel counts the timeouts, udpdrop
 * their units (UD_KEY_REASM_UNIT: no drops of their own), so the two
 * match, the datagrams are not counted twice, and the note says why.
 */
static void test_reasm_units_match(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct netns_counters *nc;
	struct ud_key k;
	struct ud_val *v;
	const char *j, *p;

	fx_init(f, &o);
	update_at(f, 1000);
	nc = hand_counters(f, f->x.netns);
	mib(nc, MIB_IpReasmTimeout, 7, 7 + 30);
	memset(&k, 0, sizeof(k));
	k.netns = f->x.netns;
	k.reason = model_fx__reason(&f->x, "FRAG_REASM_TIMEOUT");
	k.family = AF_INET;
	k.proto = IPPROTO_UDP;
	k.flags = UD_KEY_FRAG;
	inet_pton(AF_INET, "10.1.2.3", k.saddr);
	inet_pton(AF_INET, "10.1.2.4", k.daddr);
	v = htab__upsert(&f->x.drops, &k, NULL); /* each failure's other skb */
	assert_non_null(v);
	v->skbs = 30;
	v->bytes = 30 * 1480;
	k.flags |= UD_KEY_REASM_UNIT; /* each failure's first skb: the unit */
	v = htab__upsert(&f->x.drops, &k, NULL);
	assert_non_null(v);
	v->datagrams = v->skbs = 30;
	v->bytes = 30 * 1480;
	update_at(f, 2000);

	assert_int_equal(model__netns_cause(&f->x.m, f->x.netns, CAUSE_FRAG_TIMEOUT), 0);
	assert_int_equal(model__netns_cause_units(&f->x.m, f->x.netns, CAUSE_FRAG_TIMEOUT), 30);
	j = json(f);
	ASSERT_JQ(j, "[.reconcile[] | select(.netns == %u) | [.cause, .kernel, .udpdrop, .udpdrop_datagrams, .status]]"
		  " == [[\"frag_timeout\",30,30,0,\"match\"]]", f->x.netns);
	ASSERT_JQ(j, ".totals.drops == 0 and .totals.skb_events == 60");
	ASSERT_JQ(j, "[.unattributed[] | [.cause, .drops, .skb_events]] == [[\"frag_timeout\",0,60]]");
	p = plain(f);
	ASSERT_HAS(p, "match (30 of them are datagrams counted as another cause's: their first fragment was "
		   "dropped here)");
	ASSERT_LACKS(p, "GSO/GRO");
}

/* The kernel's delta (IPv4 + IPv6 summed) equals udpdrop's count. */
static void test_match(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct reconcile_line rl[8];
	struct netns_counters *nc;
	const char *j, *p;
	char want[160];

	fx_init(f, &o);
	put_sock(f, f->x.netns, 5);
	update_at(f, 1000);
	nc = hand_counters(f, f->x.netns);
	mib(nc, MIB_UdpRcvbufErrors, 100, 103);
	mib(nc, MIB_Udp6RcvbufErrors, 7, 9);
	update_at(f, 2000);

	assert_int_equal(model__netns_cause(&f->x.m, f->x.netns, CAUSE_RCVBUF), 5);
	assert_null(model__reconcile_caveat(&f->x.m));
	j = json(f);
	ASSERT_JQ(j, ".reconcile_caveat == null");
	ASSERT_JQ(j, "[.reconcile[] | select(.netns == %u) | {netns, cause, counter, kernel, udpdrop, kernel_spread, match}] == [{\"netns\":%u,"
		  "\"cause\":\"rcvbuf\",\"counter\":\"UdpRcvbufErrors\","
		  "\"kernel\":5,\"udpdrop\":5,\"kernel_spread\":0,\"match\":true}]", f->x.netns, f->x.netns);
	/* report's keys too (one vocabulary, json_vocab.h) */
	ASSERT_JQ(j, "[.reconcile[] | select(.netns == %u) | {counters, status, diff}] == "
		  "[{\"counters\":[\"UdpRcvbufErrors\",\"Udp6RcvbufErrors\",\"UdpLiteRcvbufErrors\"],"
		  "\"status\":\"match\",\"diff\":0}]", f->x.netns);
	ASSERT_JQ(j, ".counters[\"%u\"] | .UdpRcvbufErrors == 3 and "
		  ".Udp6RcvbufErrors == 2 and .UdpNoPorts == 0", f->x.netns);
	p = plain(f);
	/* Udp 3 + Udp6 2: the sum is named as one, never under Udp's name */
	line(want, sizeof(want), "UdpRcvbufErrors+Udp6RcvbufErrors", "5", "rcvbuf", "5", "match");
	ASSERT_HAS(p, "%s", want);
	ASSERT_LACKS(p, "  UdpRcvbufErrors    +5");
	ASSERT_LACKS(p, "differ");
	ASSERT_LACKS(p, "kernel counters: ");
	assert_int_equal(reconcile__lines(&f->x.m, rl, 8), 1);
	assert_int_equal(rl[0].netns, f->x.netns);
	assert_int_equal(rl[0].cause, CAUSE_RCVBUF);
	assert_int_equal(rl[0].counter, MIB_UdpRcvbufErrors);
	assert_int_equal(rl[0].kernel, 5);
	assert_int_equal(rl[0].ours, 5);
	/* max bounds what it writes */
	assert_int_equal(reconcile__lines(&f->x.m, rl, 0), 0);
}

/* A mismatch either way: "differ by" udpdrop minus the kernel. */
static void test_differ(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct reconcile_line rl[8];
	struct netns_counters *nc;
	const char *j, *p;
	char want[160];

	fx_init(f, &o);
	put_sock(f, f->x.netns, 5);
	put_no_socket(f, f->x.netns, 10);
	update_at(f, 1000);
	nc = hand_counters(f, f->x.netns);
	mib(nc, MIB_UdpRcvbufErrors, 0, 8);  /* kernel 8, udpdrop 5 */
	mib(nc, MIB_UdpNoPorts, 50, 54);     /* kernel 4, udpdrop 10 */
	update_at(f, 2000);

	j = json(f);
	ASSERT_JQ(j, "[.reconcile[] | select(.netns == %u) | [.cause, .kernel, .udpdrop]]"
		  " == [[\"rcvbuf\",8,5],[\"no_socket\",4,10]]", f->x.netns);
	p = plain(f);
	line(want, sizeof(want), "UdpRcvbufErrors", "8", "rcvbuf", "5", "differ by -3");
	ASSERT_HAS(p, "%s", want);
	line(want, sizeof(want), "UdpNoPorts", "4", "no_socket", "10", "differ by 6");
	ASSERT_HAS(p, "%s", want);
	ASSERT_LACKS(p, "match");
	assert_int_equal(reconcile__lines(&f->x.m, rl, 8), 2);
	assert_int_equal(rl[0].kernel, 8);
	assert_int_equal(rl[0].ours, 5);
	assert_int_equal(rl[1].cause, CAUSE_NO_SOCKET);
	assert_int_equal(rl[1].counter, MIB_UdpNoPorts);
	assert_int_equal(rl[1].kernel, 4);
	assert_int_equal(rl[1].ours, 10);
	/* cut at max: the first line only */
	assert_int_equal(reconcile__lines(&f->x.m, rl, 1), 1);
	assert_int_equal(rl[0].cause, CAUSE_RCVBUF);
}

/*
 * The miss the tool exists to show: the kernel counted rcvbuf errors in a
 * netns where udpdrop counted nothing (no rows at all). Counters and
 * reconciliation show it, with --netns or not; a netns whose counters did
 * not move is not listed.
 */
static void test_kernel_only(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct reconcile_line rl[8];
	struct netns_counters *nc;
	const char *j, *p;
	char want[160], hdr[96], nsbuf[16];

	for (int pass = 0; pass < 2; pass++) {
		o.netns = pass ? f->x.netns : 0;
		fx_init(f, &o);
		update_at(f, 1000);
		assert_int_equal(f->x.m.nview_sockets + f->x.m.nview_flows, 0);
		nc = hand_counters(f, f->x.netns);
		update_at(f, 2000);
		/* nothing moved yet: not listed */
		j = json(f);
		ASSERT_JQ(j, ".counters | has(\"%u\") | not", f->x.netns);
		ASSERT_JQ(j, "[.reconcile[] | select(.netns == %u)] == []", f->x.netns);

		nc = nc_of(f, f->x.netns); /* an update may move the array */
		mib(nc, MIB_UdpRcvbufErrors, 10, 14);
		update_at(f, 3000);
		nc = nc_of(f, f->x.netns);
		j = json(f);
		ASSERT_JQ(j, ".sockets == [] and .unattributed == []");
		ASSERT_JQ(j, ".counters[\"%u\"].UdpRcvbufErrors == 4", f->x.netns);
		ASSERT_JQ(j, "[.reconcile[] | select(.netns == %u) | {netns, cause, counter, kernel, udpdrop, kernel_spread, match}] == [{\"netns\":%u,"
			  "\"cause\":\"rcvbuf\",\"counter\":\"UdpRcvbufErrors\","
			  "\"kernel\":4,\"udpdrop\":0,\"kernel_spread\":0,\"match\":false}]", f->x.netns, f->x.netns);
		p = plain(f);
		snprintf(hdr, sizeof(hdr), "kernel counters, netns %s (%u):\n",
			 model__netns_label(&f->x.m, f->x.netns, nsbuf, sizeof(nsbuf)),
			 f->x.netns);
		ASSERT_HAS(p, "%s", hdr);
		line(want, sizeof(want), "UdpRcvbufErrors", "4", "rcvbuf", "0", "differ by -4");
		ASSERT_HAS(p, "%s", want);
		int n = reconcile__lines(&f->x.m, rl, 8), k;

		for (k = 0; k < n && rl[k].netns != f->x.netns; k++)
			;
		assert_true(k < n);
		assert_int_equal(rl[k].cause, CAUSE_RCVBUF);
		assert_int_equal(rl[k].kernel, 4);
		assert_int_equal(rl[k].ours, 0);

		/* a netns not read each interval (not in view) is not shown */
		nc->in_view = false;
		j = json(f);
		ASSERT_JQ(j, ".counters | has(\"%u\") | not", f->x.netns);
		ASSERT_JQ(j, "[.reconcile[] | select(.netns == %u)] == []", f->x.netns);
		model__free(&f->x.m);
		f->x.model_up = false;
	}
}

/*
 * Without --netns every netns is in view: each one the model can see has
 * counters that are read each interval, drops there or not. A netns where
 * udpdrop counted but the kernel did not is listed too.
 */
static void test_every_netns_in_view(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct netns_counters *nc;
	const char *j;

	fx_init(f, &o);
	put_no_socket(f, OTHER_NETNS, 3);
	update_at(f, 1000);
	for (int i = 0; i < f->x.m.nt.n; i++) {
		nc = nc_of(f, f->x.m.nt.v[i].inode);
		assert_non_null(nc);
		assert_true(nc->in_view);
	}
	assert_non_null(nc_of(f, f->x.netns));
	nc = nc_of(f, OTHER_NETNS);
	assert_non_null(nc);
	assert_true(nc->in_view);
	/* no base (no such netns to read): not shown */
	assert_false(nc->have_base);
	j = json(f);
	ASSERT_JQ(j, ".counters | has(\"%u\") | not", OTHER_NETNS);
	/* a base by hand (udpdrop's is 0: all 5 count), the kernel silent */
	hand_counters(f, OTHER_NETNS);
	put_no_socket(f, OTHER_NETNS, 5);
	update_at(f, 2000);
	j = json(f);
	ASSERT_JQ(j, ".counters[\"%u\"] | length > 0 and all(.[]; . == 0)", OTHER_NETNS);
	ASSERT_JQ(j, "[.reconcile[] | select(.netns == %u) | {netns, cause, counter, kernel, udpdrop, kernel_spread, match}] == [{\"netns\":%u,"
		  "\"cause\":\"no_socket\",\"counter\":\"UdpNoPorts\","
		  "\"kernel\":0,\"udpdrop\":5,\"kernel_spread\":0,\"match\":false}]", OTHER_NETNS, OTHER_NETNS);
}

/* --port and --pid count part of what the netns counters count. */
static void test_caveat(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	const char *caveat = "not comparable: --port/--pid count part of what "
			     "the netns counters count";
	const char *j, *p;

	for (int pass = 0; pass < 2; pass++) {
		memset(&o, 0, sizeof(o));
		if (pass)
			o.pid = getpid();
		else
			o.port = 5020;
		fx_init(f, &o);
		put_sock(f, f->x.netns, 5);
		update_at(f, 1000);
		mib(hand_counters(f, f->x.netns), MIB_UdpRcvbufErrors, 0, 9);
		update_at(f, 2000);
		assert_non_null(model__reconcile_caveat(&f->x.m));
		assert_string_equal(model__reconcile_caveat(&f->x.m), caveat);
		j = json(f);
		ASSERT_JQ(j, ".reconcile_caveat == \"%s\"", caveat);
		/* the lines are still there, with the caveat beside them */
		ASSERT_JQ(j, "[.reconcile[] | select(.netns == %u) | [.kernel, .udpdrop]]"
			  " == [[9,5]]", f->x.netns);
		p = plain(f);
		ASSERT_HAS(p, "kernel counters: %s\n", caveat);
		model__free(&f->x.m);
		f->x.model_up = false;
	}
	/* missed events: inexact, whatever the filters */
	memset(&o, 0, sizeof(o));
	fx_init(f, &o);
	update_at(f, 1000);
	assert_null(model__reconcile_caveat(&f->x.m));
	f->x.m.missed = 2;
	ASSERT_JQ(json(f), ".reconcile_caveat | startswith(\"inexact: the kernel skipped\")");
}

/*
 * A netns first seen mid-run: its kernel base is read before the next
 * tracer read, and what udpdrop had counted by then is udpdrop's base
 * (cause_base), subtracted from then on.
 */
static void test_cause_base(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct netns_counters *nc;
	const char *j, *p;
	char want[160];

	fx_init(f, &o);
	put_sock(f, f->x.netns, 4);
	update_at(f, 1000);
	nc = nc_of(f, f->x.netns);
	assert_non_null(nc);
	assert_false(nc->have_base); /* first sight: no base yet, no deltas */
	ASSERT_JQ(json(f), ".counters | has(\"%u\") | not", f->x.netns);
	model__read_counters(&f->x.m); /* the kernel's base, as top reads it */
	nc = nc_of(f, f->x.netns);
	assert_true(nc->have_base);
	assert_true(nc->base_fresh);
	update_at(f, 2000); /* ... and udpdrop's, from this snapshot */
	nc = nc_of(f, f->x.netns);
	assert_false(nc->base_fresh);
	assert_int_equal(nc->cause_base[CAUSE_RCVBUF], 4);
	assert_int_equal(nc->cause_units_base[CAUSE_RCVBUF], 4);
	assert_int_equal(model__netns_cause(&f->x.m, f->x.netns, CAUSE_RCVBUF), 0);

	/* 3 more on both sides: they match, the first 4 are not counted */
	nc = hand_counters(f, f->x.netns);
	nc->cause_base[CAUSE_RCVBUF] = nc->cause_units_base[CAUSE_RCVBUF] = 4;
	mib(nc, MIB_UdpRcvbufErrors, 20, 23);
	put_sock(f, f->x.netns, 7);
	update_at(f, 3000);
	assert_int_equal(model__netns_cause(&f->x.m, f->x.netns, CAUSE_RCVBUF), 3);
	j = json(f);
	ASSERT_JQ(j, ".sockets[0].drops == 7");
	ASSERT_JQ(j, "[.reconcile[] | select(.netns == %u) | [.cause, .kernel, .udpdrop]]"
		  " == [[\"rcvbuf\",3,3]]", f->x.netns);
	p = plain(f);
	line(want, sizeof(want), "UdpRcvbufErrors", "3", "rcvbuf", "3", "match");
	ASSERT_HAS(p, "%s", want);

	/* a base above the count never wraps: 0 */
	nc = nc_of(f, f->x.netns);
	nc->cause_base[CAUSE_RCVBUF] = nc->cause_units_base[CAUSE_RCVBUF] = 100;
	assert_int_equal(model__netns_cause(&f->x.m, f->x.netns, CAUSE_RCVBUF), 0);
	assert_int_equal(model__netns_cause_units(&f->x.m, f->x.netns, CAUSE_RCVBUF), 0);
	ASSERT_JQ(json(f), "[.reconcile[] | select(.netns == %u) | [.cause, .kernel, .udpdrop]]"
		  " == [[\"rcvbuf\",3,0]]", f->x.netns);
}

/* cur < base (the inode now names another netns): the delta is 0, never a wrap. */
static void test_mib_no_wrap(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct reconcile_line rl[8];
	struct netns_counters *nc;
	const char *j;

	fx_init(f, &o);
	update_at(f, 1000);
	nc = hand_counters(f, f->x.netns);
	mib(nc, MIB_UdpRcvbufErrors, 1000, 40);
	mib(nc, MIB_UdpNoPorts, 5, 2);
	update_at(f, 2000);
	/* only went backwards: nothing moved */
	j = json(f);
	ASSERT_JQ(j, ".counters | has(\"%u\") | not", f->x.netns);
	ASSERT_JQ(j, "[.reconcile[] | select(.netns == %u)] == []", f->x.netns);

	/* with udpdrop's count beside it: kernel 0, not 2^64 - 960 */
	put_sock(f, f->x.netns, 6);
	update_at(f, 3000);
	j = json(f);
	ASSERT_JQ(j, ".counters[\"%u\"] | .UdpRcvbufErrors == 0 and .UdpNoPorts == 0", f->x.netns);
	ASSERT_JQ(j, "[.reconcile[] | select(.netns == %u) | [.cause, .kernel, .udpdrop]]"
		  " == [[\"rcvbuf\",0,6]]", f->x.netns);
	ASSERT_LACKS(j, "18446744073709");
	int n = reconcile__lines(&f->x.m, rl, 8), k;

	for (k = 0; k < n && rl[k].netns != f->x.netns; k++)
		;
	assert_true(k < n);
	assert_int_equal(rl[k].kernel, 0);
	assert_int_equal(rl[k].ours, 6);
}

/*
 * The counters are read just before and just after udpdrop's maps: a
 * difference within how far they moved meanwhile (a storm) is no
 * disagreement, and is said with its bound; beyond it, it is.
 */
static void test_verdict_spread(void **state)
{
	struct reconcile_line l = { .kernel = 45400000, .ours = 45399797 };
	char v[128];

	reconcile__verdict(&l, v, sizeof(v));
	assert_string_equal(v, "differ by -203");
	assert_false(reconcile__ok(&l));
	l.spread = 1024;
	reconcile__verdict(&l, v, sizeof(v));
	assert_string_equal(v, "match within +-1,024 (the counters moved by 1,024 while udpdrop read)");
	assert_true(reconcile__ok(&l));
	l.spread = 100;
	reconcile__verdict(&l, v, sizeof(v));
	assert_string_equal(v, "differ by -203 (beyond the +-100 the counters moved while udpdrop read)");
	assert_false(reconcile__ok(&l));
	l.ours = l.kernel;
	reconcile__verdict(&l, v, sizeof(v));
	assert_string_equal(v, "match");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_match),
		T(test_differ),
		T(test_kernel_only),
		T(test_every_netns_in_view),
		T(test_caveat),
		T(test_cause_base),
		T(test_gro_match),
		T(test_reasm_units_match),
		T(test_mib_no_wrap),
		cmocka_unit_test(test_verdict_spread),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
