// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for src/model/model_rows.c and src/cmd/top/top_print.c: hand-built tracer snapshots joined into rows, totals and rates, printed as plain text and JSON. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "text_assert.h"
#include "model_fixture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bursts.h"
#include "causes.h"
#include "htab.h"
#include "model.h"
#include "reasons.h"
#include "top_print.h"
#include "udpdrop.h"
#include "util.h"

#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

#define NS_PER_S 1000000000ull
#define UNKNOWN_COOKIE 123456789ull  /* matches no real socket (checked) */
#define UNKNOWN_COOKIE2 987654321ull
#define UNKNOWN_REASON 60000u        /* in no kernel's table (checked) */

struct fx {
	struct model_fx x; /* first: the model and the snapshot */
	uint32_t r_no_socket, r_rcvbuff;
	int fds[2];                     /* real sockets, -1 if none */
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || model_fx__open(&f->x)) {
		free(f);
		return -1;
	}
	f->fds[0] = f->fds[1] = -1;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	model_fx__close(&f->x);
	for (int i = 0; i < 2; i++)
		if (f->fds[i] >= 0)
			close(f->fds[i]);
	free(f);
	return 0;
}

/* model__init with these options, and the reasons the tests use. */
static void fx_init(struct fx *f, const struct model_opts *o)
{
	model_fx__init(&f->x, o);
	f->r_no_socket = model_fx__reason(&f->x, "NO_SOCKET");
	f->r_rcvbuff = model_fx__reason(&f->x, "SOCKET_RCVBUFF");
	/* the stats the JSON totals echo */
	f->x.stats[UD_STAT_EVENTS] = 20;
	f->x.stats[UD_STAT_NOT_OURS] = 11;
	f->x.stats[UD_STAT_FILTERED] = 2;
}

static void ip4(const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	assert_int_equal(inet_pton(AF_INET, s, out), 1);
}

static struct ud_key flow_key(struct fx *f, uint32_t reason, const char *src,
			      const char *dst, uint16_t dport, uint32_t flags)
{
	struct ud_key k;

	memset(&k, 0, sizeof(k));
	k.netns = f->x.netns;
	k.reason = reason;
	k.family = AF_INET;
	k.proto = IPPROTO_UDP;
	k.flags = flags;
	k.dport = dport;
	ip4(src, k.saddr);
	ip4(dst, k.daddr);
	return k;
}

static struct ud_key sock_key(struct fx *f, uint32_t reason, uint64_t cookie)
{
	struct ud_key k;

	memset(&k, 0, sizeof(k));
	k.netns = f->x.netns;
	k.reason = reason;
	k.cookie = cookie;
	k.flags = UD_KEY_SOCK | UD_KEY_RX_SK;
	return k;
}

/* Set (not add: the tracer's counts are cumulative) a key's counts. */
static void put(struct fx *f, struct ud_key k, uint64_t datagrams,
		uint64_t skbs, uint64_t bytes)
{
	struct ud_val *v = htab__upsert(&f->x.drops, &k, NULL);

	assert_non_null(v);
	v->datagrams = datagrams;
	v->skbs = skbs;
	v->bytes = bytes;
}

/* model__update at start + ms milliseconds. */
static void update_at(struct fx *f, uint64_t ms)
{
	assert_int_equal(model__update(&f->x.m, &f->x.drops, f->x.overflow, f->x.stats,
				       f->x.m.start_ns + ms * 1000000ull), 0);
}

static const char *json(struct fx *f, bool final)
{
	struct top_print_ctx oc = { .attach = "tp_btf", .final = final };

	sb_free(&f->x.sb);
	top_print__json(&f->x.m, &oc, &f->x.sb);
	assert_non_null(f->x.sb.buf);
	/* one line: the only newline ends it */
	assert_ptr_equal(strchr(f->x.sb.buf, '\n'), f->x.sb.buf + f->x.sb.len - 1);
	return f->x.sb.buf;
}

static const char *plain(struct fx *f, bool final)
{
	struct top_print_ctx oc = { .attach = "tp_btf", .final = final };

	sb_free(&f->x.sb);
	top_print__plain(&f->x.m, &oc, &f->x.sb);
	assert_non_null(f->x.sb.buf);
	return f->x.sb.buf;
}

/* jq -e FILTER on text: its exit status (0: the filter was true). */




static struct row *find_sock(struct model *m, uint64_t cookie)
{
	for (int i = 0; i < m->nview_sockets; i++)
		if (m->view_sockets[i]->key.cookie == cookie)
			return m->view_sockets[i];
	return NULL;
}

/* A UDP socket of ours bound to 127.0.0.1:<ephemeral>; its cookie. */
static uint64_t open_udp(struct fx *f, int slot, uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a), clen;
	uint64_t cookie = 0;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	f->fds[slot] = fd;
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	*port = ntohs(a.sin_port);
	clen = sizeof(cookie);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &clen), 0);
	assert_int_not_equal(cookie, 0);
	return cookie;
}

static void self_comm(char *buf, size_t len)
{
	FILE *c = fopen("/proc/self/comm", "r");

	assert_non_null(c);
	assert_non_null(fgets(buf, len, c));
	buf[strcspn(buf, "\n")] = '\0';
	fclose(c);
}

/* ---- tests ---------------------------------------------------------- */

/* The jq helper itself: it must be able to say no. */
static void test_jq_helper(void **state)
{
	assert_int_equal(jq_status("{\"a\":1}\n", "."), 0);
	assert_int_equal(jq_status("{\"a\":1}\n", ".a == 1"), 0);
	assert_int_not_equal(jq_status("{\"a\":1}\n", ".a == 2"), 0);
	assert_int_not_equal(jq_status("{\"a\":1,}\n", "."), 0);
	assert_int_not_equal(jq_status("{\"a\":1}{\n", "."), 0);
}

static void test_socketless_flow(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	const char *j;
	struct row *r;

	fx_init(f, &o);
	put(f, flow_key(f, f->r_no_socket, "10.1.2.3", "10.1.2.4", 9999, 0), 7, 7, 700);
	update_at(f, 2000);

	assert_true(f->x.m.interval == 2.0);
	assert_int_equal(f->x.m.nview_sockets, 0);
	assert_int_equal(f->x.m.nview_flows, 1);
	r = f->x.m.view_flows[0];
	assert_int_equal(r->key.kind, ROW_FLOW);
	assert_int_equal(r->key.cause, CAUSE_NO_SOCKET);
	assert_int_equal(r->key.netns, f->x.netns);
	assert_int_equal(r->key.dport, 9999);
	assert_int_equal(r->drops, 7);
	assert_int_equal(r->skbs, 7);
	assert_int_equal(r->bytes, 700);
	assert_int_equal(r->cause[CAUSE_NO_SOCKET], 7);
	assert_int_equal(r->nreasons, 1);
	assert_int_equal(r->reasons[0].reason, f->r_no_socket);
	assert_int_equal(r->reasons[0].drops, 7);
	assert_true(r->rate == 3.5);
	assert_int_equal(row__main_cause(r), CAUSE_NO_SOCKET);
	assert_int_equal(f->x.m.totals.drops, 7);
	assert_int_equal(f->x.m.totals.skbs, 7);
	assert_int_equal(f->x.m.totals.attributed, 0);
	assert_int_equal(f->x.m.totals.overflow, 0);
	assert_int_equal(f->x.m.totals.cause[CAUSE_NO_SOCKET], 7);
	assert_true(f->x.m.totals.rate == 3.5);

	char flow[128];

	row__flow(r, flow, sizeof(flow));
	assert_string_equal(flow, "10.1.2.3 -> 10.1.2.4:9999");

	j = json(f, false);
	assert_int_equal(jq_status(j, "."), 0);
	ASSERT_HAS(j, "{\"time\":");
	ASSERT_HAS(j, ",\"interval\":2.000,\"final\":false,\"attach\":\"tp_btf\","
		   "\"causes_from\":\"drop_reason\",\"causes_guessed\":{},\"causes_unknown\":[],"
		   "\"netns_filter\":null,\"port_filter\":null,\"pid_filter\":null,"
		   "\"sockets\":[],\"unattributed\":[{\"cause\":\"no_socket\","
		   "\"netns\":%u,\"netns_name\":", f->x.netns);
	ASSERT_HAS(j, ",\"proto\":\"udp\",\"family\":\"inet\","
		   "\"flow\":\"10.1.2.3 -> 10.1.2.4:9999\","
		   "\"why\":\"no socket bound to the port\",\"saddr\":\"10.1.2.3\","
		   "\"daddr\":\"10.1.2.4\",\"dport\":9999,\"drops\":7,"
		   "\"skb_events\":7,\"gro_datagrams\":0,\"gro_skbs\":0,\"drops_per_s\":3.5,"
		   "\"cause_list\":[{\"cause\":\"no_socket\",\"drops\":7,\"skb_events\":7}],"
		   "\"reasons\":{\"NO_SOCKET\":7},\"locations\":{");
	ASSERT_HAS(j, "\"reason_list\":[{\"reason\":%u,\"name\":\"NO_SOCKET\","
		   "\"cause\":\"no_socket\",\"drops\":7,\"skb_events\":7}],", f->r_no_socket);
	ASSERT_HAS(j, "}]}],\"unchanged_rows\":0,\"tables\":null,"
		   "\"totals\":{\"drops\":7,\"attributed\":0,"
		   "\"skb_events\":7,\"missed\":0,\"drops_per_s\":3.5,"
		   "\"cause_list\":[{\"cause\":\"no_socket\",\"drops\":7,\"skb_events\":7}],"
		   "\"causes\":{\"no_socket\":7},\"overflow\":0,\"overflow_skb_events\":0,"
		   "\"kernel_events\":20,\"not_udp\":11,\"filtered\":2,"
		   "\"rx_overflow\":null,\"netns_unknown\":0}");
	ASSERT_JQ(j, ".unattributed | length == 1");
	ASSERT_JQ(j, ".unattributed[0].netns == %u", f->x.netns);
	ASSERT_JQ(j, "[.unattributed[0].locations[]] == [7]");
	/* a netns first seen in this update: its kernel base is read before
	 * the next tracer read, so no counters or reconciliation yet */
	ASSERT_JQ(j, ".counters | has(\"%u\") | not", f->x.netns);
	ASSERT_JQ(j, ".reconcile == []");
	/* then both sides count from the same instant: deltas 0, 0, so
	 * nothing has moved and the netns is not listed yet */
	model__read_counters(&f->x.m);
	update_at(f, 3000);
	j = json(f, false);
	ASSERT_JQ(j, ".counters | has(\"%u\") | not", f->x.netns);
	ASSERT_JQ(j, ".reconcile == []");
	/* udpdrop counts 2 more (the kernel's cur is not read again here) */
	put(f, flow_key(f, f->r_no_socket, "10.1.2.3", "10.1.2.4", 9999, 0), 9, 9, 900);
	update_at(f, 4000);
	j = json(f, false);
	ASSERT_JQ(j, ".counters[\"%u\"] | length > 0 and all(.[]; . == 0)", f->x.netns);
	ASSERT_JQ(j, ".reconcile == [{\"netns\":%u,\"netns_name\":null,\"cause\":\"no_socket\","
		  "\"counter\":\"UdpNoPorts\",\"counters\":[\"UdpNoPorts\",\"Udp6NoPorts\"],"
		  "\"kernel\":0,\"udpdrop\":2,\"udpdrop_datagrams\":2,\"kernel_spread\":0,\"match\":false,"
		  "\"status\":\"differ\",\"diff\":2}]", f->x.netns);
}

static void test_socket_row_unknown_socket(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	const char *j;
	struct row *r;

	fx_init(f, &o);
	put(f, flow_key(f, f->r_no_socket, "10.1.2.3", "10.1.2.4", 9999, 0), 7, 7, 700);
	put(f, sock_key(f, f->r_rcvbuff, UNKNOWN_COOKIE), 5, 5, 500);
	update_at(f, 2000);
	assert_null(socktab__by_cookie(&f->x.m.st, UNKNOWN_COOKIE));

	assert_int_equal(f->x.m.nview_sockets, 1);
	assert_int_equal(f->x.m.nview_flows, 1);
	r = f->x.m.view_sockets[0];
	assert_int_equal(r->key.kind, ROW_SOCKET);
	assert_int_equal(r->key.cookie, UNKNOWN_COOKIE);
	assert_int_equal(r->drops, 5);
	assert_int_equal(r->skbs, 5);
	assert_int_equal(r->cause[CAUSE_RCVBUF], 5);
	assert_int_equal(r->flags, UD_KEY_SOCK | UD_KEY_RX_SK);
	assert_false(r->have_sock);
	assert_false(r->sock_alive);
	assert_true(r->rate == 2.5);
	assert_int_equal(f->x.m.totals.attributed, 5);
	assert_int_equal(f->x.m.totals.drops, 12);
	assert_int_equal(f->x.m.totals.skbs, 12);
	assert_int_equal(f->x.m.totals.cause[CAUSE_RCVBUF], 5);
	assert_int_equal(f->x.m.totals.cause[CAUSE_NO_SOCKET], 7);

	j = json(f, false);
	assert_int_equal(jq_status(j, "."), 0);
	ASSERT_HAS(j, "\"sockets\":[{\"proto\":null,\"family\":null,\"local\":null,"
		   "\"remote\":null,\"netns\":%u,\"netns_name\":", f->x.netns);
	ASSERT_HAS(j, ",\"cookie\":123456789,\"inode\":null,\"pid\":null,"
		   "\"comm\":null,\"kernel_owner\":null,\"k8s_namespace\":null,\"k8s_pod\":null,\"k8s_container\":null,\"k8s_pod_uid\":null,\"nprocs\":0,\"pids\":[],\"alive\":false,"
		   "\"attribution\":[\"rx_sk\"],\"rcvbuf\":null,\"queued\":null,\"sk_drops\":null,"
		   "\"sk_drops_since_start\":null,\"sk_drops_stale\":null,\"drops\":5,\"skb_events\":5,"
		   "\"gro_datagrams\":0,\"gro_skbs\":0,\"bytes\":500,\"drops_per_s\":2.5,\"cause\":\"rcvbuf\","
		   "\"causes\":{\"rcvbuf\":5},"
		   "\"cause_list\":[{\"cause\":\"rcvbuf\",\"drops\":5,\"skb_events\":5}],"
		   "\"reasons\":{\"SOCKET_RCVBUFF\":5},\"locations\":{");
	ASSERT_HAS(j, "\"totals\":{\"drops\":12,\"attributed\":5,\"skb_events\":12,");
	ASSERT_JQ(j, ".sockets | length == 1");
	ASSERT_JQ(j, ".totals.causes == {\"rcvbuf\":5,\"no_socket\":7}");
	ASSERT_JQ(j, ".totals.drops_per_s == 6");
}

/* Fragments without a datagram of their own: drops 0, the cause from skbs. */
static void test_fragment_only(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	uint32_t r_frag;
	const char *j;
	struct row *r;
	char flow[128];

	fx_init(f, &o);
	r_frag = model_fx__reason(&f->x, "FRAG_REASM_TIMEOUT");
	put(f, flow_key(f, f->r_no_socket, "10.1.2.3", "10.1.2.4", 9999, 0), 7, 7, 700);
	/* a non-first fragment: no UDP header, so no port */
	put(f, flow_key(f, r_frag, "10.1.2.3", "10.1.2.4", 0, UD_KEY_FRAG), 0, 3, 4500);
	/* a socket with fragment skbs only (3) and one rcvbuf skb (no datagram) */
	put(f, sock_key(f, r_frag, UNKNOWN_COOKIE), 0, 3, 3000);
	put(f, sock_key(f, f->r_rcvbuff, UNKNOWN_COOKIE), 0, 1, 100);
	update_at(f, 2000);

	assert_int_equal(f->x.m.nview_flows, 2);
	/* sorted by drops: the 7-drop flow first */
	assert_int_equal(f->x.m.view_flows[0]->drops, 7);
	r = f->x.m.view_flows[1];
	assert_int_equal(r->key.cause, CAUSE_FRAG_TIMEOUT);
	assert_int_equal(r->key.dport, 0);
	assert_int_equal(r->drops, 0);
	assert_int_equal(r->skbs, 3);
	assert_int_equal(r->bytes, 4500);
	assert_int_equal(r->cause[CAUSE_FRAG_TIMEOUT], 0);
	assert_int_equal(r->cause_skbs[CAUSE_FRAG_TIMEOUT], 3);
	assert_int_equal(row__main_cause(r), CAUSE_FRAG_TIMEOUT);
	assert_true(r->rate == 0.0);
	row__flow(r, flow, sizeof(flow));
	assert_string_equal(flow, "10.1.2.3 -> 10.1.2.4");

	assert_int_equal(f->x.m.nview_sockets, 1);
	r = f->x.m.view_sockets[0];
	assert_int_equal(r->drops, 0);
	assert_int_equal(r->skbs, 4);
	assert_int_equal(r->nreasons, 2);
	assert_int_equal(row__main_cause(r), CAUSE_FRAG_TIMEOUT);

	assert_int_equal(f->x.m.totals.drops, 7);
	assert_int_equal(f->x.m.totals.skbs, 14); /* 7 + 3 + 3 + 1 */
	assert_int_equal(f->x.m.totals.attributed, 0);
	/* causes count datagrams: skb-only causes are not listed */
	assert_int_equal(f->x.m.totals.cause[CAUSE_FRAG_TIMEOUT], 0);

	j = json(f, false);
	assert_int_equal(jq_status(j, "."), 0);
	ASSERT_HAS(j, "\"flow\":\"10.1.2.3 -> 10.1.2.4\","
		   "\"why\":\"IP fragment without a UDP header\",\"saddr\":\"10.1.2.3\","
		   "\"daddr\":\"10.1.2.4\",\"dport\":0,\"drops\":0,"
		   "\"skb_events\":3,\"gro_datagrams\":0,\"gro_skbs\":0,\"drops_per_s\":0.0,"
		   "\"cause_list\":[{\"cause\":\"frag_timeout\",\"drops\":0,\"skb_events\":3}],"
		   "\"reasons\":{\"FRAG_REASM_TIMEOUT\":0},");
	ASSERT_JQ(j, ".unattributed[1].cause == \"frag_timeout\"");
	ASSERT_JQ(j, ".sockets[0] | .drops == 0 and .skb_events == 4 and "
		  ".cause == \"frag_timeout\" and .causes == {}");
	ASSERT_JQ(j, ".totals.causes == {\"no_socket\":7}");

	/* one datagram outweighs any number of skb events */
	put(f, sock_key(f, f->r_rcvbuff, UNKNOWN_COOKIE), 1, 1, 100);
	update_at(f, 3000);
	r = find_sock(&f->x.m, UNKNOWN_COOKIE);
	assert_non_null(r);
	assert_int_equal(r->drops, 1);
	assert_int_equal(row__main_cause(r), CAUSE_RCVBUF);
	j = json(f, false);
	ASSERT_JQ(j, ".sockets[0] | .cause == \"rcvbuf\" and .causes == {\"rcvbuf\":1}");
}

/* row__main_cause on hand-made rows. */
static void test_main_cause(void **state)
{
	struct row r;

	memset(&r, 0, sizeof(r));
	assert_int_equal(row__main_cause(&r), CAUSE_OTHER);
	r.cause_skbs[CAUSE_CHECKSUM] = 2;
	assert_int_equal(row__main_cause(&r), CAUSE_CHECKSUM);
	r.cause_skbs[CAUSE_XDP] = 3;
	assert_int_equal(row__main_cause(&r), CAUSE_XDP);
	r.cause[CAUSE_RCVBUF] = 1;
	assert_int_equal(row__main_cause(&r), CAUSE_RCVBUF);
	r.cause[CAUSE_UDP_MEM] = 2;
	assert_int_equal(row__main_cause(&r), CAUSE_UDP_MEM);
	/* a tie in datagrams: the skb events decide */
	r.cause[CAUSE_RCVBUF] = 2;
	r.cause_skbs[CAUSE_RCVBUF] = 5;
	r.cause_skbs[CAUSE_UDP_MEM] = 4;
	assert_int_equal(row__main_cause(&r), CAUSE_RCVBUF);
}

static void test_rates(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	const char *j, *p;
	struct row *r;
	char line[256], ns[32], nsbuf[16];

	fx_init(f, &o);
	put(f, flow_key(f, f->r_no_socket, "10.1.2.3", "10.1.2.4", 9999, 0), 7, 7, 700);
	/* GRO skbs of several datagrams: rates count datagrams, not skbs */
	put(f, sock_key(f, f->r_rcvbuff, UNKNOWN_COOKIE), 5, 2, 500);
	update_at(f, 2000);
	r = find_sock(&f->x.m, UNKNOWN_COOKIE);
	assert_non_null(r);
	assert_true(r->rate == 2.5);

	/* one second later: 10 more datagrams on the socket, none elsewhere */
	put(f, sock_key(f, f->r_rcvbuff, UNKNOWN_COOKIE), 15, 4, 1500);
	update_at(f, 3000);
	assert_true(f->x.m.interval == 1.0);
	r = find_sock(&f->x.m, UNKNOWN_COOKIE);
	assert_non_null(r);
	assert_int_equal(r->drops, 15);
	assert_int_equal(r->prev_drops, 15);
	assert_int_equal(r->prev_skbs, 4);
	assert_true(r->rate == 10.0);
	assert_int_equal(f->x.m.nview_flows, 1);
	assert_int_equal(f->x.m.view_flows[0]->drops, 7);
	assert_true(f->x.m.view_flows[0]->rate == 0.0);
	assert_int_equal(f->x.m.totals.drops, 22);
	assert_true(f->x.m.totals.rate == 10.0);

	j = json(f, false);
	assert_int_equal(jq_status(j, "."), 0);
	ASSERT_HAS(j, "\"interval\":1.000,");
	ASSERT_HAS(j, "\"drops\":15,\"skb_events\":4,\"gro_datagrams\":0,\"gro_skbs\":0,\"bytes\":1500,\"drops_per_s\":10.0,");
	/* an interval lists what moved in it: the quiet flow is counted, not listed */
	ASSERT_JQ(j, ".unattributed | length == 0");
	ASSERT_JQ(j, ".unchanged_rows == 1");
	ASSERT_JQ(j, ".totals.drops_per_s == 10");

	/* the summary: averages over the whole 3 s */
	j = json(f, true);
	assert_int_equal(jq_status(j, "."), 0);
	ASSERT_HAS(j, "\"interval\":3.000,\"final\":true,");
	ASSERT_JQ(j, ".sockets[0].drops_per_s == 5");
	ASSERT_JQ(j, "(.unattributed[0].drops_per_s * 10 | round) == 23");

	/* the plain socket row, column for column */
	p = plain(f, false);
	snprintf(ns, sizeof(ns), "%s",
		 model__netns_label(&f->x.m, f->x.netns, nsbuf, sizeof(nsbuf)));
	snprintf(line, sizeof(line),
		 "%-5s %-22s %-22s %-14.14s %-22.22s %9s %9s %9s %-13s %8s %5s\n",
		 "?", "?", "?", ns, "-", "-" /* no rx program here */, "10", "15", "rcvbuf",
		 "-", "-");
	ASSERT_HAS(p, "%s", line);
	ASSERT_HAS(p, "  10 drops/s  interval 1.00 s\n"
		   "total 22 datagrams dropped (11 skb events), 15 attributed to sockets\n"
		   "  by cause: rcvbuf 15, no_socket 7\n");
	ASSERT_HAS(p, "  RX/s   DROPS/s");
	ASSERT_LACKS(p, "AVG/s");
}

static void test_unknown_reason(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	char buf[32];
	const char *j, *p;
	struct row *r;

	fx_init(f, &o);
	assert_string_equal(reasons__name(&f->x.m.reasons, UNKNOWN_REASON, buf, sizeof(buf)),
			    "REASON_60000");
	assert_string_equal(model__reason_name(&f->x.m, UNKNOWN_REASON, buf, sizeof(buf)),
			    "REASON_60000");
	assert_int_equal(model__cause(&f->x.m, UNKNOWN_REASON, 0), CAUSE_OTHER);
	/* the udp_fail tracepoint's verdict, not the (cached) reason, decides */
	assert_int_equal(model__cause(&f->x.m, UNKNOWN_REASON, UD_KEY_FAIL_RCVBUF), CAUSE_RCVBUF);
	assert_string_equal(reasons__name(&f->x.m.reasons, 1000, buf, sizeof(buf)),
			    "REASON_1000");
	assert_int_equal(model__cause(&f->x.m, 1000, 0), CAUSE_OTHER);
	assert_int_equal(model__cause(&f->x.m, 1000, UD_KEY_FAIL_MEM), CAUSE_UDP_MEM);
	assert_int_equal(model__cause(&f->x.m, 1000, 0), CAUSE_OTHER);
	assert_int_equal(model__cause(&f->x.m, f->r_no_socket, 0), CAUSE_NO_SOCKET);

	put(f, sock_key(f, UNKNOWN_REASON, UNKNOWN_COOKIE2), 2, 2, 200);
	put(f, flow_key(f, UNKNOWN_REASON, "10.9.9.9", "10.9.9.8", 0, 0), 4, 4, 400);
	update_at(f, 2000);

	r = find_sock(&f->x.m, UNKNOWN_COOKIE2);
	assert_non_null(r);
	assert_int_equal(r->cause[CAUSE_OTHER], 2);
	assert_int_equal(row__main_cause(r), CAUSE_OTHER);
	assert_int_equal(f->x.m.nview_flows, 1);
	assert_int_equal(f->x.m.view_flows[0]->key.cause, CAUSE_OTHER);
	assert_int_equal(f->x.m.totals.cause[CAUSE_OTHER], 6);

	j = json(f, false);
	assert_int_equal(jq_status(j, "."), 0);
	ASSERT_HAS(j, "\"cause\":\"other\",\"causes\":{\"other\":2},"
		   "\"cause_list\":[{\"cause\":\"other\",\"drops\":2,\"skb_events\":2}],"
		   "\"reasons\":{\"REASON_60000\":2},");
	ASSERT_HAS(j, "\"unattributed\":[{\"cause\":\"other\",");
	ASSERT_HAS(j, "\"drops\":4,\"skb_events\":4,\"gro_datagrams\":0,\"gro_skbs\":0,\"drops_per_s\":2.0,"
		   "\"cause_list\":[{\"cause\":\"other\",\"drops\":4,\"skb_events\":4}],"
		   "\"reasons\":{\"REASON_60000\":4},");
	ASSERT_JQ(j, ".totals.causes == {\"other\":6}");

	p = plain(f, true);
	ASSERT_HAS(p, "? cookie %llu: REASON_60000 2 (2 skbs)\n", (unsigned long long)UNKNOWN_COOKIE2);
	ASSERT_HAS(p, "  by cause: other 6\n");
}

/*
 * One reason under two causes on one socket: one no rule names is
 * socket_close for a closing socket's purge (6.18 frees it with none),
 * other for the rest. The
 * reason list keeps them apart (as report does), the old {NAME: drops}
 * map sums them under one key (no key twice), and the text names each
 * one's cause.
 */
static void test_reason_under_two_causes(void **state)
{
	struct fx *f = *state;
	uint32_t r_ns = UNKNOWN_REASON; /* no rule names it: other, or socket_close */
	struct model_opts o = {};
	struct ud_key close;
	const char *j, *p;

	fx_init(f, &o);
	close = sock_key(f, r_ns, UNKNOWN_COOKIE);
	close.flags |= UD_KEY_CLOSE;
	put(f, sock_key(f, r_ns, UNKNOWN_COOKIE), 2, 2, 200);
	put(f, close, 3, 3, 300);
	update_at(f, 2000);
	j = json(f, false);
	assert_int_equal(jq_status(j, "."), 0);
	ASSERT_JQ(j, ".sockets[0].reasons == {\"REASON_60000\":5}");
	ASSERT_JQ(j, "[.sockets[0].reason_list[] | [.name, .cause, .drops]] | sort == "
		  "[[\"REASON_60000\",\"other\",2],[\"REASON_60000\",\"socket_close\",3]]");
	ASSERT_JQ(j, ".sockets[0].causes == {\"other\":2,\"socket_close\":3}");
	p = plain(f, true);
	ASSERT_HAS(p, " (2 skbs, other)");
	ASSERT_HAS(p, " (3 skbs, socket_close)");
}

static void test_overflow(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	const char *j, *p;

	fx_init(f, &o);
	put(f, flow_key(f, f->r_no_socket, "10.1.2.3", "10.1.2.4", 9999, 0), 7, 7, 700);
	assert_true(f->r_no_socket < UD_OVERFLOW_SLOTS);
	f->x.overflow[f->r_no_socket].datagrams = 4;
	f->x.overflow[f->r_no_socket].skbs = 4;
	f->x.overflow[f->r_no_socket].bytes = 400;
	update_at(f, 2000);

	assert_int_equal(f->x.m.totals.overflow, 4);
	assert_int_equal(f->x.m.totals.overflow_skbs, 4);
	assert_int_equal(f->x.m.totals.drops, 11);
	assert_int_equal(f->x.m.totals.skbs, 11);
	assert_int_equal(f->x.m.totals.cause[CAUSE_NO_SOCKET], 11);
	assert_int_equal(f->x.m.totals.attributed, 0);
	/* no row for the overflow: the cause is all that is left */
	assert_int_equal(f->x.m.nview_flows, 1);
	assert_int_equal(f->x.m.view_flows[0]->drops, 7);
	assert_true(f->x.m.totals.rate == 5.5);
	assert_int_equal(f->x.m.overflow[f->r_no_socket].datagrams, 4);

	j = json(f, false);
	assert_int_equal(jq_status(j, "."), 0);
	ASSERT_HAS(j, "\"totals\":{\"drops\":11,\"attributed\":0,\"skb_events\":11,"
		   "\"missed\":0,\"drops_per_s\":5.5,"
		   "\"cause_list\":[{\"cause\":\"no_socket\",\"drops\":11,\"skb_events\":11}],"
		   "\"causes\":{\"no_socket\":11},\"overflow\":4,\"overflow_skb_events\":4,");

	p = plain(f, false);
	ASSERT_HAS(p, "total 11 datagrams dropped (11 skb events), 0 attributed to sockets, "
		   "4 in the overflow bucket (map full: raise --map-entries)\n");
	ASSERT_HAS(p, "  by cause: no_socket 11\n");

	/* counted once more, a second later: the rate includes it */
	f->x.overflow[f->r_no_socket].datagrams = 6;
	f->x.overflow[f->r_no_socket].skbs = 6;
	update_at(f, 3000);
	assert_int_equal(f->x.m.totals.overflow, 6);
	assert_int_equal(f->x.m.totals.drops, 13);
	assert_true(f->x.m.totals.rate == 2.0);
}

static void test_plain(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	const char *p;
	char line[256], ns[32], nsbuf[16];

	fx_init(f, &o);
	/* a baseline before any drop, as top takes one: the reconciliation
	 * counts from there (a netns first seen later counts from then) */
	struct htab empty;

	assert_int_equal(htab__init(&empty, sizeof(struct ud_key), sizeof(struct ud_val)), 0);
	assert_int_equal(model__baseline(&f->x.m), 0);
	model__baseline_counts(&f->x.m, &empty);
	htab__free(&empty);
	put(f, flow_key(f, f->r_no_socket, "10.1.2.3", "10.1.2.4", 9999, 0), 8, 8, 800);
	put(f, sock_key(f, f->r_rcvbuff, UNKNOWN_COOKIE), 5, 5, 500);
	update_at(f, 2000);
	snprintf(ns, sizeof(ns), "%s",
		 model__netns_label(&f->x.m, f->x.netns, nsbuf, sizeof(nsbuf)));

	p = plain(f, false);
	ASSERT_LACKS(p, "=== summary");
	ASSERT_HAS(p, "  6 drops/s  interval 2.00 s\n"
		   "total 13 datagrams dropped (13 skb events), 5 attributed to sockets\n"
		   "  by cause: rcvbuf 5, no_socket 8\n"
		   "PROTO LOCAL");
	snprintf(line, sizeof(line), "no socket:\n%-14s %-14s %-44s %9s %9s %9s\n",
		 "CAUSE", "NETNS", "FLOW", "DROPS/s", "DROPS", "SKBS");
	ASSERT_HAS(p, "%s", line);
	snprintf(line, sizeof(line), "%-14s %-14.14s %-44s %9s %9s %9s\n",
		 "no_socket", ns, "10.1.2.3 -> 10.1.2.4:9999", "4", "8", "8");
	ASSERT_HAS(p, "%s", line);
	/* the kernel counters are the summary's */
	ASSERT_LACKS(p, "kernel counters");
	ASSERT_LACKS(p, "SOCKET_RCVBUFF");
	ASSERT_LACKS(p, "overflow bucket");
	assert_int_equal(p[strlen(p) - 1], '\n');
	assert_int_equal(p[strlen(p) - 2], '\n');

	p = plain(f, true);
	{
		/* when counting began, in local time, as the header says it */
		time_t since = (time_t)f->x.m.start_wall;
		struct tm tm;
		char hms[16];

		localtime_r(&since, &tm);
		strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
		ASSERT_HAS(p, "\n=== summary: 2.0 s traced via tp_btf, counting since %s ===\n"
			   "total 13 datagrams dropped (13 skb events), 5 attributed to sockets\n", hms);
	}
	ASSERT_HAS(p, "AVG/s");
	ASSERT_LACKS(p, "DROPS/s");
	snprintf(line, sizeof(line), "%-14s %-14.14s %-44s %9s %9s %9s\n",
		 "no_socket", ns, "10.1.2.3 -> 10.1.2.4:9999", "4", "8", "8");
	ASSERT_HAS(p, "%s", line);
	ASSERT_HAS(p, "? cookie 123456789: SOCKET_RCVBUFF 5 (5 skbs)\n");
	snprintf(line, sizeof(line), "kernel counters, netns %s (%u):\n", ns, f->x.netns);
	ASSERT_HAS(p, "%s", line);
	ASSERT_HAS(p, "  %-18s +%-10s udpdrop %-14s %-10s %s\n", "UdpRcvbufErrors",
		   "0", "rcvbuf", "5", "differ by 5");
	ASSERT_HAS(p, "  %-18s +%-10s udpdrop %-14s %-10s %s\n", "UdpNoPorts",
		   "0", "no_socket", "8", "differ by 8");
}

/* A real socket of ours: the socket table names it, /proc its owner. */
static void test_known_socket(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	uint16_t port;
	uint64_t cookie;
	struct stat st;
	int rcvbuf;
	socklen_t len = sizeof(rcvbuf);
	char comm[32];
	const char *j, *p;
	struct row *r;

	fx_init(f, &o);
	cookie = open_udp(f, 0, &port);
	assert_int_equal(fstat(f->fds[0], &st), 0);
	assert_int_equal(getsockopt(f->fds[0], SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len), 0);
	self_comm(comm, sizeof(comm));
	put(f, sock_key(f, f->r_rcvbuff, cookie), 3, 3, 300);
	update_at(f, 2000);

	r = find_sock(&f->x.m, cookie);
	assert_non_null(r);
	assert_true(r->have_sock);
	assert_true(r->sock_alive);
	assert_int_equal(r->sock.sport, port);
	assert_int_equal(r->sock.inode, st.st_ino);
	assert_int_equal(r->sock.npids, 1);
	assert_int_equal(r->sock.pids[0], getpid());
	assert_string_equal(r->sock.comm, comm);

	j = json(f, false);
	assert_int_equal(jq_status(j, "."), 0);
	ASSERT_HAS(j, "{\"proto\":\"udp\",\"family\":\"inet\","
		   "\"local\":\"127.0.0.1:%u\",\"remote\":\"*\",\"netns\":%u,",
		   port, f->x.netns);
	ASSERT_HAS(j, ",\"cookie\":%" PRIu64 ",\"inode\":%lu,\"pid\":%d,"
		   "\"comm\":\"%s\",\"kernel_owner\":null,\"k8s_namespace\":null,\"k8s_pod\":null,\"k8s_container\":null,\"k8s_pod_uid\":null,\"nprocs\":1,\"pids\":[%d],\"alive\":true,"
		   "\"attribution\":[\"rx_sk\"],\"rcvbuf\":%d,\"queued\":0,\"sk_drops\":0,"
		   "\"sk_drops_since_start\":0,\"sk_drops_stale\":false,\"drops\":3,\"skb_events\":3,"
		   "\"gro_datagrams\":0,\"gro_skbs\":0,\"bytes\":300,\"drops_per_s\":1.5,\"cause\":\"rcvbuf\",",
		   cookie, (unsigned long)st.st_ino, (int)getpid(), comm,
		   (int)getpid(), rcvbuf);

	p = plain(f, true);
	/* the owner heads the line: two sockets on one address never read the same */
	ASSERT_HAS(p, "127.0.0.1:%u %d/%s: SOCKET_RCVBUFF 3 (3 skbs); kernel sk_drops +0 since start\n",
		   port, (int)getpid(), comm);
	ASSERT_HAS(p, "%d/%s", (int)getpid(), comm);

	/* closed: the row keeps its name, and says it is gone */
	close(f->fds[0]);
	f->fds[0] = -1;
	update_at(f, 3000);
	r = find_sock(&f->x.m, cookie);
	assert_non_null(r);
	assert_true(r->have_sock);
	assert_false(r->sock_alive);
	j = json(f, false);
	ASSERT_JQ(j, ".sockets | length == 0"); /* nothing new this interval */
	ASSERT_JQ(j, ".unchanged_rows == 1");
	j = json(f, true);
	ASSERT_JQ(j, ".sockets[0] | .local == \"127.0.0.1:%u\" and .alive == false "
		  "and .drops == 3", port);
	/* its sk_drops is the last read, before the close: said so */
	ASSERT_JQ(j, ".sockets[0] | .sk_drops == 0 and .sk_drops_stale == true");
	p = plain(f, true);
	ASSERT_HAS(p, "127.0.0.1:%u %d/%s: SOCKET_RCVBUFF 3 (3 skbs); kernel sk_drops +0 since start "
		   "when last read (closed since: its later drops are not in it)\n", port,
		   (int)getpid(), comm);
}

/*
 * Rows by inode (sockid.h): a socket whose drops name its inode and then
 * its cookie is one row (the cookie's); an inode no dump named is a row
 * of its own, whose JSON says inode, not a cookie.
 */
static void test_inode_rows(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct ud_key k;
	struct stat st;
	uint16_t port;
	uint64_t cookie;
	const char *j;

	fx_init(f, &o);
	cookie = open_udp(f, 0, &port);
	assert_int_equal(fstat(f->fds[0], &st), 0);
	k = sock_key(f, f->r_rcvbuff, st.st_ino);
	k.flags |= UD_KEY_INODE;
	put(f, k, 2, 2, 200);
	put(f, sock_key(f, f->r_rcvbuff, cookie), 3, 3, 300);
	k = sock_key(f, f->r_rcvbuff, 4242); /* no socket has it */
	k.flags |= UD_KEY_INODE;
	put(f, k, 7, 7, 700);
	update_at(f, 2000);
	assert_int_equal(f->x.m.nview_sockets, 2);
	j = json(f, true);
	ASSERT_JQ(j, "[.sockets[] | select(.local == \"127.0.0.1:%u\")] | length == 1", port);
	ASSERT_JQ(j, ".sockets[] | select(.local == \"127.0.0.1:%u\") | .cookie == %" PRIu64
		  " and .inode == %lu and .drops == 5", port, cookie, (unsigned long)st.st_ino);
	ASSERT_JQ(j, ".sockets[] | select(.drops == 7) | .cookie == null and .inode == 4242");
}

/*
 * A socket a dump found before it dropped (so never in view while alive)
 * that drops and closes between two updates: its owner was looked up when
 * the dump found it, and the row names it after the close.
 */
static void test_owner_before_view(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	uint16_t port;
	uint64_t cookie;
	char comm[32];
	const char *j;
	struct row *r;

	fx_init(f, &o);
	cookie = open_udp(f, 0, &port);
	self_comm(comm, sizeof(comm));
	update_at(f, 1000);
	assert_non_null(htab__find(&f->x.m.known, &cookie)); /* dumped */
	assert_int_equal(f->x.m.nview_sockets, 0);            /* not in view */
	put(f, sock_key(f, f->r_rcvbuff, cookie), 4, 4, 400);
	close(f->fds[0]);
	f->fds[0] = -1;
	update_at(f, 2000);
	r = find_sock(&f->x.m, cookie);
	assert_non_null(r);
	assert_false(r->sock_alive);
	assert_int_equal(r->sock.npids, 1);
	assert_int_equal(r->sock.pids[0], getpid());
	assert_string_equal(r->sock.comm, comm);
	j = json(f, true);
	ASSERT_JQ(j, ".sockets[0] | .alive == false and .drops == 4 and .pid == %d "
		  "and .comm == \"%s\" and .sk_drops_stale == true", (int)getpid(), comm);
}

/* A socketless drop to a port a socket of ours is bound to goes to it. */
static void test_flow_attributed(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	uint32_t r_csum;
	uint16_t port;
	uint64_t cookie;
	struct row *r;
	const char *j;

	fx_init(f, &o);
	r_csum = model_fx__reason(&f->x, "UDP_CSUM");
	cookie = open_udp(f, 0, &port);
	put(f, flow_key(f, r_csum, "127.0.0.1", "127.0.0.1", port, 0), 6, 6, 600);
	/* no_socket drops are never a socket's, whatever is bound now */
	put(f, flow_key(f, f->r_no_socket, "127.0.0.1", "127.0.0.1", port, 0), 2, 2, 200);
	update_at(f, 2000);

	assert_int_equal(f->x.m.nview_sockets, 1);
	r = f->x.m.view_sockets[0];
	assert_int_equal(r->key.cookie, cookie);
	assert_int_equal(r->drops, 6);
	assert_int_equal(r->cause[CAUSE_CHECKSUM], 6);
	assert_int_equal(f->x.m.nview_flows, 1);
	assert_int_equal(f->x.m.view_flows[0]->key.cause, CAUSE_NO_SOCKET);
	assert_int_equal(f->x.m.view_flows[0]->drops, 2);
	assert_int_equal(f->x.m.totals.attributed, 6);
	assert_int_equal(f->x.m.totals.drops, 8);
	j = json(f, false);
	ASSERT_JQ(j, ".sockets[0] | .cookie == %" PRIu64 " and .cause == \"checksum\" "
		  "and .causes == {\"checksum\":6}", cookie);

	/* once a socket's, always: even after it closes */
	close(f->fds[0]);
	f->fds[0] = -1;
	put(f, flow_key(f, r_csum, "127.0.0.1", "127.0.0.1", port, 0), 9, 9, 900);
	update_at(f, 3000);
	r = find_sock(&f->x.m, cookie);
	assert_non_null(r);
	assert_int_equal(r->drops, 9);
	assert_true(r->rate == 3.0);
	assert_false(r->sock_alive);
}

/* --pid: only the process's sockets; socketless rows belong to no one. */
static void test_pid_filter(void **state)
{
	struct fx *f = *state;
	struct model_opts o = { .pid = getpid() };
	uint16_t port;
	uint64_t cookie;
	const char *j, *p;
	struct row *r;

	fx_init(f, &o);
	cookie = open_udp(f, 0, &port);
	put(f, flow_key(f, f->r_no_socket, "10.1.2.3", "10.1.2.4", 9999, 0), 7, 7, 700);
	put(f, sock_key(f, f->r_rcvbuff, UNKNOWN_COOKIE), 5, 5, 500);
	put(f, sock_key(f, f->r_rcvbuff, cookie), 3, 3, 300);
	update_at(f, 2000);

	assert_int_equal(f->x.m.nview_flows, 0);
	assert_int_equal(f->x.m.nview_sockets, 1);
	r = f->x.m.view_sockets[0];
	assert_int_equal(r->key.cookie, cookie);
	assert_true(r->owned_by_pid);
	assert_int_equal(f->x.m.totals.drops, 3);
	assert_int_equal(f->x.m.totals.attributed, 3);
	assert_int_equal(f->x.m.totals.cause[CAUSE_NO_SOCKET], 0);

	j = json(f, false);
	assert_int_equal(jq_status(j, "."), 0);
	ASSERT_HAS(j, "\"pid_filter\":%d,", (int)getpid());
	ASSERT_HAS(j, "\"unattributed\":[],");
	ASSERT_JQ(j, ".sockets | length == 1");
	ASSERT_JQ(j, ".sockets[0].local == \"127.0.0.1:%u\"", port);

	p = plain(f, false);
	ASSERT_LACKS(p, "no socket:");
	ASSERT_LACKS(p, "10.1.2.3");
	ASSERT_HAS(p, "127.0.0.1:%u", port);

	/* without the filter the same snapshot shows all three */
	model__free(&f->x.m);
	f->x.model_up = false;
	o.pid = 0;
	fx_init(f, &o);
	update_at(f, 2000);
	assert_int_equal(f->x.m.nview_flows, 1);
	assert_int_equal(f->x.m.nview_sockets, 2);
	assert_int_equal(f->x.m.totals.drops, 15);
}

/* --port: sockets on other ports are hidden. */
static void test_port_filter(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	uint16_t port_a, port_b;
	uint64_t cookie_a, cookie_b;
	const char *j;

	cookie_a = open_udp(f, 0, &port_a);
	cookie_b = open_udp(f, 1, &port_b);
	o.port = port_a;
	fx_init(f, &o);
	put(f, sock_key(f, f->r_rcvbuff, cookie_a), 3, 3, 300);
	put(f, sock_key(f, f->r_rcvbuff, cookie_b), 4, 4, 400);
	update_at(f, 2000);

	assert_int_equal(f->x.m.nview_sockets, 1);
	assert_int_equal(f->x.m.view_sockets[0]->key.cookie, cookie_a);
	assert_int_equal(f->x.m.totals.drops, 3);
	j = json(f, false);
	ASSERT_HAS(j, "\"port_filter\":%u,", port_a);
	ASSERT_JQ(j, ".sockets | length == 1 and .[0].local == \"127.0.0.1:%u\"", port_a);
}

/* --all: quiet sockets are listed, with no cause. */
static void test_all_quiet(void **state)
{
	struct fx *f = *state;
	struct model_opts o = { .all = true };
	uint16_t port;
	uint64_t cookie;
	const char *j, *p;
	struct row *r;

	fx_init(f, &o);
	cookie = open_udp(f, 0, &port);
	update_at(f, 2000);

	assert_true(f->x.m.nview_sockets >= 1);
	assert_int_equal(f->x.m.nview_flows, 0);
	r = find_sock(&f->x.m, cookie);
	assert_non_null(r);
	assert_int_equal(r->drops, 0);
	assert_true(r->sock_alive);
	assert_int_equal(f->x.m.totals.drops, 0);

	j = json(f, false);
	assert_int_equal(jq_status(j, "."), 0);
	ASSERT_JQ(j, "[.sockets[] | select(.cookie == %" PRIu64 ")] | length == 1 "
		  "and .[0].cause == null and .[0].drops == 0 and .[0].causes == {}",
		  cookie);
	p = plain(f, false);
	ASSERT_HAS(p, "127.0.0.1:%u", port);
	ASSERT_HAS(p, "total 0 datagrams dropped (0 skb events), 0 attributed to sockets\n");
	ASSERT_LACKS(p, "by cause:");
}

/*
 * Closed sockets are forgotten a minute after they were last seen, unless
 * they dropped (their row names them); live ones never are.
 */
static void test_forget_closed_sockets(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	uint16_t p0, p1;
	uint64_t quiet, dropped;

	fx_init(f, &o);
	quiet = open_udp(f, 0, &p0);
	dropped = open_udp(f, 1, &p1);
	put(f, sock_key(f, f->r_rcvbuff, dropped), 2, 2, 200);
	update_at(f, 1000);
	assert_non_null(htab__find(&f->x.m.known, &quiet));
	assert_non_null(htab__find(&f->x.m.known, &dropped));
	close(f->fds[0]);
	close(f->fds[1]);
	f->fds[0] = f->fds[1] = -1;
	update_at(f, 2000); /* closed, but seen a moment ago: kept */
	assert_non_null(htab__find(&f->x.m.known, &quiet));
	update_at(f, 2000 + 61000);
	assert_null(htab__find(&f->x.m.known, &quiet));
	assert_non_null(htab__find(&f->x.m.known, &dropped));
	/* the row still names its socket */
	struct row *r = find_sock(&f->x.m, dropped);

	assert_non_null(r);
	assert_true(r->have_sock);
	assert_int_equal(r->sock.sport, p1);
}

/* The summary's advice: per row and cause, report's keys; with the worst
 * interval tracked, the rcvbuf advice sizes a buffer for it. */
static void test_summary_advice(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct top_print_ctx oc = { .attach = "tp_btf", .final = true };
	struct htab bursts;
	const char *j, *p;

	fx_init(f, &o);
	assert_int_equal(bursts__init(&bursts), 0);
	oc.bursts = &bursts;
	put(f, flow_key(f, f->r_no_socket, "10.1.2.3", "10.1.2.4", 9999, 0), 7, 7, 700);
	put(f, sock_key(f, f->r_rcvbuff, UNKNOWN_COOKIE), 5, 5, 500);
	update_at(f, 1000);
	bursts__record(&bursts, &f->x.m, 1);
	put(f, sock_key(f, f->r_rcvbuff, UNKNOWN_COOKIE), 45, 45, 4500);
	update_at(f, 2000);
	bursts__record(&bursts, &f->x.m, 2);

	/* intervals are not the summary: no advice there */
	j = json(f, false);
	ASSERT_LACKS(j, "\"advice\"");
	sb_free(&f->x.sb);
	top_print__json(&f->x.m, &oc, &f->x.sb);
	j = f->x.sb.buf;
	assert_int_equal(jq_status(j, "."), 0);
	ASSERT_JQ(j, ".sockets[0].advice | length >= 1");
	ASSERT_JQ(j, ".sockets[0].advice[0] | keys == [\"carries_drops\",\"cause\",\"change\",\"drop_windows\",\"evidence\",\"sampled_s\",\"setting\",\"setting_command\",\"setting_run_on\",\"setting_scope\",\"socket\",\"socket_id_kind\",\"value\",\"verdict\",\"verify\",\"what\"]");
	/* the socket's id, as report's and doctor's advice name it */
	ASSERT_JQ(j, ".sockets[0] | .advice[0].socket == .cookie and .advice[0].socket_id_kind == \"cookie\"");
	ASSERT_JQ(j, ".sockets[0].advice[0].cause == \"rcvbuf\"");
	/* the worst interval: 40 of the 45, in 1 s */
	ASSERT_JQ(j, ".sockets[0].advice[0].evidence | contains(\"at most 40 in one 1.00 s refresh interval\")");
	ASSERT_JQ(j, ".unattributed[0].advice[0].cause == \"no_socket\"");
	ASSERT_JQ(j, ".unattributed[0].advice[0].what == \"nothing listens on port 9999\"");
	/* with the setting and its value, as report and doctor (none here) */
	ASSERT_JQ(j, ".unattributed[0].advice[0].setting == null and .unattributed[0].advice[0].value == null");
	/* the keys before it stay as they were */
	ASSERT_JQ(j, ".sockets[0].queue_peak == null and .sockets[0].drops == 45");

	sb_free(&f->x.sb);
	top_print__plain(&f->x.m, &oc, &f->x.sb);
	p = f->x.sb.buf;
	ASSERT_HAS(p, "advice (--json adds the evidence and how to verify):\n");
	ASSERT_HAS(p, "  ? cookie 123456789 rcvbuf: the socket's receive buffer was full");
	ASSERT_HAS(p, "  10.1.2.3 -> 10.1.2.4:9999 no_socket: nothing listens on port 9999\n"
		   "    change: Start the service");
	/* per interval: none */
	p = plain(f, false);
	ASSERT_LACKS(p, "advice");
	htab__free(&bursts);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jq_helper),
		cmocka_unit_test(test_main_cause),
		T(test_socketless_flow),
		T(test_socket_row_unknown_socket),
		T(test_fragment_only),
		T(test_rates),
		T(test_summary_advice),
		T(test_unknown_reason),
		T(test_reason_under_two_causes),
		T(test_overflow),
		T(test_plain),
		T(test_known_socket),
		T(test_owner_before_view),
		T(test_inode_rows),
		T(test_forget_closed_sockets),
		T(test_flow_attributed),
		T(test_pid_filter),
		T(test_port_filter),
		T(test_all_quiet),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
