// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for udpdrop report (src/cmd/report/report_model.h): traces built with the
 * trace writer into /tmp, read back and printed as text and JSON: sockets
 * joined by cookie, causes from the file's REASONS table, flows with no
 * socket, the reconciliation (match, differ), a file cut short, a corrupt
 * one, not a trace, a newer version. Then the golden files: the report of
 * real recordings in tests/fixtures/ must come out byte for byte (run from
 * the source tree, as make does).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "report_model.h"
#include "text_assert.h"
#include "trace.h"
#include "util.h"
#include "tmp_file.h"

#define NS1 4026532001u
#define NS2 4026532002u
#define R_RCVBUF 6
#define R_NO_SOCKET 3
#define LOC_RCVBUF 0xffffffff81a0b1c4ull
#define LOC_NOPORT 0xffffffff81a0c000ull

static int setup(void **state)
{
	return tmp_file_setup("test_report", "t.data");
}

static int teardown(void **state)
{
	return tmp_file_teardown();
}

static struct trace_count count(uint64_t cookie, uint32_t netns, uint32_t reason,
				uint64_t loc, uint64_t dgrams, uint64_t skbs)
{
	struct trace_count c = {};

	c.key.cookie = cookie;
	c.key.netns = netns;
	c.key.reason = reason;
	c.key.location = loc;
	c.key.family = AF_INET;
	c.key.proto = 17;
	if (cookie)
		c.key.flags = UD_KEY_SOCK | UD_KEY_RX_SK;
	c.val.datagrams = dgrams;
	c.val.skbs = skbs;
	c.val.bytes = dgrams * 1000;
	return c;
}

static void mib(struct trace_writer *w, uint64_t t, uint32_t ns, uint64_t rcvbuf,
		uint64_t noports)
{
	struct trace_mib_entry v[] = {
		{ "UdpRcvbufErrors", rcvbuf }, { "Udp6RcvbufErrors", 0 },
		{ "UdpNoPorts", noports }, { "Udp6NoPorts", 0 },
	};
	struct trace_mib m = { .time_ns = t, .netns = ns, .n = ARRAY_SIZE(v), .v = v };

	assert_int_equal(trace_writer__mib(w, &m), 0);
}

/*
 * Two netns: in NS1 a socket (cookie 42, 10.0.0.2:5001, pid 77 "rx") drops
 * 300 datagrams (301 skbs) to its rcvbuf, the kernel counts 300; a second
 * socket (cookie 43) drops 5; in NS2 a flow to 10.0.0.9:53 has no socket,
 * 7 datagrams, the kernel counts 9 (differ by 2). Returns the file offset
 * after the first block (META .. first snapshot), and of the second.
 */
static void build(bool close_it, uint64_t *off1, uint64_t *off2)
{
	struct trace_writer *w;
	static const struct trace_kv meta_v[] = {
		{ TRACE_META_HOST, "testhost" },
		{ TRACE_META_KERNEL, "6.18.0-test" },
		{ TRACE_META_START, "1763880000.250000000" },
		{ TRACE_META_CMDLINE, "udpdrop record -o t.data --port 5001" },
		{ TRACE_META_VERSION, "0.1.0" },
		{ "netns", "0" },
		{ "port", "5001" },
	};
	struct trace_meta meta = { ARRAY_SIZE(meta_v), meta_v };
	static const struct trace_reason reasons_v[] = {
		{ 2, "NOT_SPECIFIED" }, { R_NO_SOCKET, "NO_SOCKET" },
		{ R_RCVBUF, "SOCKET_RCVBUFF" },
	};
	struct trace_reasons reasons = { ARRAY_SIZE(reasons_v), reasons_v };
	static const struct trace_symbol syms_v[] = {
		{ LOC_RCVBUF, "__udp_queue_rcv_skb+0x1a4" },
	};
	struct trace_symbols syms = { ARRAY_SIZE(syms_v), syms_v };
	struct trace_counts c0 = { .time_ns = 1000000000ull };
	struct trace_count cv[4];
	struct trace_counts c1 = { .time_ns = 4000000000ull, .v = cv };
	struct trace_socket sv[2] = {
		{ .cookie = 42, .netns = NS1, .inode = 900, .pid = 77, .family = AF_INET,
		  .proto = 17, .laddr = { 10, 0, 0, 2 }, .lport = 5001, .comm = "rx",
		  .rcvbuf = 4608, .queued = 4352 },
		{ .cookie = 43, .netns = NS1, .inode = 901, .pid = 78, .family = AF_INET,
		  .proto = 17, .laddr = { 10, 0, 0, 2 }, .lport = 5002, .comm = "rx2",
		  .rcvbuf = 212992 },
	};
	struct trace_sockets socks = { .time_ns = 4000000000ull, .n = 2, .v = sv };

	unlink(path);
	assert_int_equal(trace_writer__open(path, false, &w), 0);
	assert_int_equal(trace_writer__meta(w, &meta), 0);
	assert_int_equal(trace_writer__reasons(w, &reasons), 0);
	assert_int_equal(trace_writer__counts(w, &c0), 0);
	mib(w, 1000000000ull, NS1, 1000, 50);
	mib(w, 1000000000ull, NS2, 0, 100);
	assert_int_equal(trace_writer__flush(w), 0);
	*off1 = trace_writer__offset(w);

	cv[0] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, 300, 301);
	cv[1] = count(0, NS2, R_NO_SOCKET, LOC_NOPORT, 7, 7);
	cv[1].key.saddr[0] = 10, cv[1].key.saddr[3] = 1;
	cv[1].key.daddr[0] = 10, cv[1].key.daddr[3] = 9;
	cv[1].key.dport = 53;
	cv[2] = count(43, NS1, R_RCVBUF, LOC_RCVBUF, 5, 5);
	c1.n = 3;
	assert_int_equal(trace_writer__symbols(w, &syms), 0);
	assert_int_equal(trace_writer__counts(w, &c1), 0);
	mib(w, 4000000000ull, NS1, 1305, 50);
	mib(w, 4000000000ull, NS2, 0, 109);
	assert_int_equal(trace_writer__sockets(w, &socks), 0);
	assert_int_equal(trace_writer__flush(w), 0);
	*off2 = trace_writer__offset(w);
	if (close_it)
		assert_int_equal(trace_writer__close(w), 0);
	else {
		/* a second, identical snapshot, then the file is cut in it */
		assert_int_equal(trace_writer__counts(w, &c1), 0);
		assert_int_equal(trace_writer__close(w), 0);
	}
}

static char *render(struct report *rp, bool json, uint64_t top)
{
	struct report_opts o = { .json = json, .top = top };
	struct strbuf sb = {};

	report__print(rp, &o, &sb);
	sb_printf(&sb, "%s", "");
	return sb.buf;
}

static void test_complete(void **state)
{
	struct report rp;
	uint64_t o1, o2;
	char *t, *j;

	build(true, &o1, &o2);
	assert_int_equal(report__load(&rp, path), 0);
	assert_true(report__printable(&rp));
	assert_int_equal(report__exit_code(&rp), 0);
	assert_string_equal(report__status_name(&rp), "complete");
	t = render(&rp, false, 0);
	ASSERT_HAS(t, "  host:      testhost\n");
	ASSERT_HAS(t, "  kernel:    6.18.0-test\n");
	ASSERT_HAS(t, "  started:   2025-11-23 06:40:00 UTC\n");
	ASSERT_HAS(t, "  command:   udpdrop record -o t.data --port 5001\n");
	ASSERT_HAS(t, "  filters:   netns any, port 5001\n");
	ASSERT_HAS(t, "  duration:  3.0 s, first to last of 2 snapshots\n");
	ASSERT_LACKS(t, "CUT SHORT");
	/* sockets, by drops: cookie 42 first, joined with SOCKETS */
	ASSERT_HAS(t, "  LOCAL          REMOTE  NETNS       PID/COMM       DROPS        SKBS  CAUSE             RCVBUF\n");
	ASSERT_HAS(t, "  10.0.0.2:5001  *       4026532001  77/rx            300         301  rcvbuf           4.5 KiB\n");
	ASSERT_HAS(t, "  10.0.0.2:5002  *       4026532001  78/rx2             5           5  rcvbuf           208 KiB\n");
	assert_true(strstr(t, "10.0.0.2:5001  ") < strstr(t, "10.0.0.2:5002  "));
	/* the flow with no socket */
	ASSERT_HAS(t, "  no_socket      4026532002  10.0.0.1 -> 10.0.0.9:53           7           7\n");
	/* totals by cause */
	ASSERT_HAS(t, "  rcvbuf                305         306\n");
	ASSERT_HAS(t, "  no_socket               7           7\n");
	ASSERT_HAS(t, "  total                 312         313\n");
	/* reasons and locations, named from the file */
	ASSERT_HAS(t, "    reason   SOCKET_RCVBUFF                                  300 drops        301 skbs  (rcvbuf)\n");
	ASSERT_HAS(t, "    at       __udp_queue_rcv_skb+0x1a4                       300 drops        301 skbs\n");
	/* reconciliation: rcvbuf matches in NS1, no_socket differs in NS2 */
	ASSERT_HAS(t, "  4026532001  rcvbuf                 305         305  match         UdpRcvbufErrors+Udp6RcvbufErrors\n");
	ASSERT_HAS(t, "  4026532002  no_socket                9           7  differ by 2   UdpNoPorts+Udp6NoPorts\n");
	/* advice, after the reconciliation: per socket shown and cause, then
	 * per cause of the drops with no socket (src/advice/ has the rules) */
	ASSERT_HAS(t, "\nAdvice (");
	assert_true(strstr(t, "\nAdvice (") > strstr(t, "Reconciliation"));
	ASSERT_HAS(t, "  10.0.0.2:5001  netns 4026532001  77/rx: rcvbuf, 300 datagrams\n");
	ASSERT_HAS(t, "  10.0.0.2:5002  netns 4026532001  78/rx2: rcvbuf, 5 datagrams\n");
	ASSERT_HAS(t, "  no socket: 10.0.0.1 -> 10.0.0.9:53  netns 4026532002: no_socket, 7 datagrams\n");
	ASSERT_HAS(t, "    what      nothing listens on port 53\n");
	/* 300 in the one 3 s interval; rcvbuf 4608 B, rmem_default unknown */
	ASSERT_HAS(t, "all of them in one 3.00 s");
	ASSERT_HAS(t, "UdpNoPorts +9");
	free(t);

	t = render(&rp, false, 1);
	ASSERT_HAS(t, "  ... 1 more socket (--top to show more)\n");
	ASSERT_LACKS(t, "10.0.0.2:5002");
	free(t);

	j = render(&rp, true, 0);
	ASSERT_JQ(j, ".file.complete == true and .file.status == \"complete\"");
	ASSERT_JQ(j, ".meta.host == \"testhost\" and .meta.port == \"5001\"");
	ASSERT_JQ(j, ".duration_s == 3");
	ASSERT_JQ(j, ".sockets | length == 2");
	ASSERT_JQ(j, ".sockets[0] | .cookie == 42 and .local == \"10.0.0.2:5001\" and .netns == %u"
		  " and .pid == 77 and .comm == \"rx\" and .drops == 300 and .skb_events == 301"
		  " and .cause == \"rcvbuf\" and .rcvbuf == 4608", NS1);
	ASSERT_JQ(j, ".sockets[0].reasons[0] | .name == \"SOCKET_RCVBUFF\" and .cause == \"rcvbuf\"");
	ASSERT_JQ(j, ".sockets[0].locations[0].symbol == \"__udp_queue_rcv_skb+0x1a4\"");
	ASSERT_JQ(j, "[.unattributed[] | {cause, netns, netns_name, saddr, daddr, dport, drops, skb_events}] == "
		  "[{\"cause\":\"no_socket\",\"netns\":%u,\"netns_name\":null,\"saddr\":\"10.0.0.1\","
		  "\"daddr\":\"10.0.0.9\",\"dport\":53,\"drops\":7,\"skb_events\":7}]", NS2);
	/* top's keys too (one vocabulary, json_vocab.h) */
	ASSERT_JQ(j, ".unattributed[0] | .flow == \"10.0.0.1 -> 10.0.0.9:53\" and "
		  ".why == \"no socket bound to the port\" and .proto == \"udp\" and .family == \"inet\" and "
		  ".cause_list == [{\"cause\":\"no_socket\",\"drops\":7,\"skb_events\":7}] and "
		  "(.reason_list | length) == 1");
	ASSERT_JQ(j, ".totals.drops == 312 and .totals.skb_events == 313 and .totals.causes.rcvbuf.drops == 305");
	ASSERT_JQ(j, ".reconcile[] | select(.netns == %u and .cause == \"rcvbuf\") | .status == \"match\" and .kernel == 305 and .udpdrop == 305", NS1);
	ASSERT_JQ(j, ".reconcile[] | select(.netns == %u and .cause == \"no_socket\") | .status == \"differ\" and .diff == -2", NS2);
	ASSERT_JQ(j, ".advice | all(keys == [\"carries_drops\",\"cause\",\"change\",\"drop_windows\",\"evidence\",\"sampled_s\",\"setting\",\"setting_command\",\"setting_run_on\",\"setting_scope\",\"socket\",\"socket_id_kind\",\"value\",\"verdict\",\"verify\",\"what\"])");
	ASSERT_JQ(j, "[.advice[] | select(.socket != null) | .socket_id_kind] | unique == [\"cookie\"]");
	ASSERT_JQ(j, "[.advice[] | select(.socket == null) | .socket_id_kind] | unique == [null]");
	ASSERT_JQ(j, "[.advice[] | select(.socket == 42)] | length == 1 and .[0].cause == \"rcvbuf\"");
	ASSERT_JQ(j, "[.advice[] | select(.socket == null)] | length == 1 and .[0].cause == \"no_socket\""
		  " and (.[0].change | test(\"sport = :53\"))");
	free(j);
	report__free(&rp);
}

/* The file cut in its third block: the two whole ones are reported. */
static void test_cut_short(void **state)
{
	struct report rp;
	uint64_t o1, o2;
	size_t len;
	uint8_t *b;
	char *t, *j, msg[512];

	build(false, &o1, &o2);
	b = slurp(path, &len);
	assert_true(len > o2 + 10);
	spit(path, b, o2 + 10);
	free(b);
	assert_int_equal(report__load(&rp, path), 0);
	assert_true(report__printable(&rp));
	assert_int_equal(report__exit_code(&rp), 0);
	assert_string_equal(report__status_name(&rp), "cut");
	assert_non_null(report__problem(&rp, msg, sizeof(msg)));
	ASSERT_HAS(msg, "cut short");
	t = render(&rp, false, 0);
	ASSERT_HAS(t, "*** CUT SHORT: cut short after 2 whole blocks");
	ASSERT_HAS(t, "10.0.0.2:5001");
	ASSERT_HAS(t, "match");
	free(t);
	j = render(&rp, true, 0);
	ASSERT_JQ(j, ".file.complete == false and .file.status == \"cut\" and (.file.message | test(\"cut short\"))");
	ASSERT_JQ(j, ".sockets[0].drops == 300");
	free(j);
	report__free(&rp);
}

/* A flipped byte in the second block: the first is reported, exit 1. */
static void test_corrupt(void **state)
{
	struct report rp;
	uint64_t o1, o2;
	size_t len;
	uint8_t *b;
	char *t, *j, msg[512];

	build(true, &o1, &o2);
	b = slurp(path, &len);
	b[o1 + 30] ^= 0x40;
	spit(path, b, len);
	free(b);
	assert_int_equal(report__load(&rp, path), 0);
	assert_true(report__printable(&rp));
	assert_int_equal(report__exit_code(&rp), 1);
	assert_string_equal(report__status_name(&rp), "corrupt");
	ASSERT_HAS(report__problem(&rp, msg, sizeof(msg)), "corrupt at offset %llu",
		   (unsigned long long)o1);
	t = render(&rp, false, 0);
	ASSERT_HAS(t, "*** CORRUPT: corrupt at offset %llu", (unsigned long long)o1);
	ASSERT_HAS(t, "  host:      testhost\n");
	ASSERT_HAS(t, "  none dropped\n");
	free(t);
	j = render(&rp, true, 0);
	ASSERT_JQ(j, ".file.status == \"corrupt\" and .file.error_offset == %llu and .sockets == []",
		  (unsigned long long)o1);
	free(j);
	report__free(&rp);
}

static void test_not_a_trace(void **state)
{
	struct report rp;
	char msg[512];

	spit(path, "hello, world\n", 13);
	assert_int_equal(report__load(&rp, path), 0);
	assert_false(report__printable(&rp));
	assert_int_equal(report__exit_code(&rp), 1);
	ASSERT_HAS(report__problem(&rp, msg, sizeof(msg)), "not a udpdrop trace");
	report__free(&rp);

	unlink(path);
	assert_true(report__load(&rp, path) < 0);
	assert_false(report__printable(&rp));
	assert_int_equal(report__exit_code(&rp), 1);
	ASSERT_HAS(report__problem(&rp, msg, sizeof(msg)), "No such file or directory");
	assert_string_equal(report__status_name(&rp), "missing");
	report__free(&rp);
}

/*
 * Nothing to report: an empty file (not a trace), a trace cut before its
 * first whole block (its header only, or part of it), a directory, a
 * FIFO: exit 1, one line, no report (an empty one would read as "no
 * drops").
 */
static void test_nothing_to_report(void **state)
{
	static const struct { size_t len; const char *status, *says; } cases[] = {
		{ 0, "not_trace", ": not a udpdrop trace (an empty file)" },
		{ 5, "cut", ": cut short in the file header (5 bytes); no record in it: nothing to report" },
		{ TRACE_HDR_LEN, "cut", ": cut short after 0 whole blocks (20 bytes): no END record; "
		  "no record in it: nothing to report" },
	};
	struct trace_writer *w;
	struct report rp;
	char msg[512], want[320], fifo[192];
	uint8_t *b;
	size_t len;

	unlink(path);
	assert_int_equal(trace_writer__open(path, false, &w), 0);
	assert_int_equal(trace_writer__close(w), 0);
	b = slurp(path, &len);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		spit(path, b, cases[i].len);
		assert_int_equal(report__load(&rp, path), 0);
		assert_false(report__printable(&rp));
		assert_int_equal(report__exit_code(&rp), 1);
		assert_string_equal(report__status_name(&rp), cases[i].status);
		snprintf(want, sizeof(want), "%s%s", path, cases[i].says);
		assert_string_equal(report__problem(&rp, msg, sizeof(msg)), want);
		report__free(&rp);
	}
	free(b);
	unlink(path);

	assert_int_equal(report__load(&rp, tmp_dir), 0);
	assert_int_equal(report__exit_code(&rp), 1);
	ASSERT_HAS(report__problem(&rp, msg, sizeof(msg)), ": not a udpdrop trace (a directory:");
	report__free(&rp);
	snprintf(fifo, sizeof(fifo), "%s/fifo", tmp_dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(10); /* no writer: the open must not wait for one */
	assert_int_equal(report__load(&rp, fifo), 0);
	alarm(0);
	assert_int_equal(report__exit_code(&rp), 1);
	ASSERT_HAS(report__problem(&rp, msg, sizeof(msg)), ": not a udpdrop trace (a FIFO:");
	report__free(&rp);
	unlink(fifo);
}

static void test_newer(void **state)
{
	uint8_t h[TRACE_HDR_LEN] = "UDPDROPT";
	struct report rp;
	char msg[512];
	uint32_t crc;

	h[8] = 3; /* major 3: this udpdrop reads 1 and 2 */
	crc = crc32(0, h, 16);
	for (int i = 0; i < 4; i++)
		h[16 + i] = crc >> (8 * i);
	spit(path, h, sizeof(h));
	assert_int_equal(report__load(&rp, path), 0);
	assert_false(report__printable(&rp));
	assert_int_equal(report__exit_code(&rp), 1);
	assert_string_equal(report__status_name(&rp), "newer");
	ASSERT_HAS(report__problem(&rp, msg, sizeof(msg)), "trace format 3.0");
	report__free(&rp);
}

/* ---- the timeline and --by ---- */

static void tl_meta(struct trace_writer *w, bool syms)
{
	static const struct trace_kv meta_v[] = {
		{ TRACE_META_HOST, "testhost" },
		{ TRACE_META_START, "1763880000.250000000" },
		{ "netns", "0" },
		{ "port", "0" },
	};
	struct trace_meta meta = { ARRAY_SIZE(meta_v), meta_v };
	static const struct trace_reason reasons_v[] = {
		{ R_NO_SOCKET, "NO_SOCKET" }, { R_RCVBUF, "SOCKET_RCVBUFF" },
	};
	struct trace_reasons reasons = { ARRAY_SIZE(reasons_v), reasons_v };
	static const struct trace_symbol syms_v[] = {
		{ LOC_RCVBUF, "__udp_queue_rcv_skb+0x1a4" },
	};
	struct trace_symbols symbols = { ARRAY_SIZE(syms_v), syms_v };

	assert_int_equal(trace_writer__meta(w, &meta), 0);
	assert_int_equal(trace_writer__reasons(w, &reasons), 0);
	if (syms)
		assert_int_equal(trace_writer__symbols(w, &symbols), 0);
}

static struct trace_count tl_flow(uint64_t n)
{
	struct trace_count c = count(0, NS2, R_NO_SOCKET, LOC_NOPORT, n, n);

	c.key.saddr[0] = 10, c.key.saddr[3] = 1;
	c.key.daddr[0] = 10, c.key.daddr[3] = 9;
	c.key.dport = 53;
	return c;
}

/*
 * Four snapshots 1 s apart, cumulative: socket 42 (rcvbuf) 0, 100, 100,
 * 400 datagrams (one skb more than datagrams once it drops); a flow with
 * no socket 0, 10, 30, 30; socket 43 (rcvbuf) 5 in the last only. So the
 * intervals drop 110 (100 rcvbuf + 10 no_socket), 20 (no_socket) and 305
 * (rcvbuf).
 */
static void build_tl3(void)
{
	static const uint64_t s42[] = { 0, 100, 100, 400 }, fl[] = { 0, 10, 30, 30 };
	struct trace_socket sv[2] = {
		{ .cookie = 42, .netns = NS1, .inode = 900, .pid = 77, .family = AF_INET,
		  .proto = 17, .laddr = { 10, 0, 0, 2 }, .lport = 5001, .comm = "rx" },
		{ .cookie = 43, .netns = NS1, .inode = 901, .pid = 78, .family = AF_INET,
		  .proto = 17, .laddr = { 10, 0, 0, 2 }, .lport = 5002, .comm = "rx2" },
	};
	struct trace_sockets socks = { .time_ns = 4000000000ull, .n = 2, .v = sv };
	struct trace_writer *w;

	unlink(path);
	assert_int_equal(trace_writer__open(path, false, &w), 0);
	tl_meta(w, true);
	for (int i = 0; i < 4; i++) {
		struct trace_count cv[3];
		struct trace_counts c = { .time_ns = (1 + i) * 1000000000ull, .v = cv };

		if (s42[i])
			cv[c.n++] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, s42[i], s42[i] + 1);
		if (fl[i])
			cv[c.n++] = tl_flow(fl[i]);
		if (i == 3)
			cv[c.n++] = count(43, NS1, R_RCVBUF, LOC_RCVBUF, 5, 5);
		assert_int_equal(trace_writer__counts(w, &c), 0);
		assert_int_equal(trace_writer__flush(w), 0);
	}
	assert_int_equal(trace_writer__sockets(w, &socks), 0);
	assert_int_equal(trace_writer__close(w), 0);
}

static char *render_by(struct report *rp, bool json, enum report_by by)
{
	struct report_opts o = { .json = json, .by = by };
	struct strbuf sb = {};

	report__print(rp, &o, &sb);
	sb_printf(&sb, "%s", "");
	return sb.buf;
}

static void test_by_names(void **state)
{
	assert_int_equal(report__by_parse("socket"), REPORT_BY_SOCKET);
	assert_int_equal(report__by_parse("cause"), REPORT_BY_CAUSE);
	assert_int_equal(report__by_parse("reason"), REPORT_BY_REASON);
	assert_int_equal(report__by_parse("location"), REPORT_BY_LOCATION);
	assert_int_equal(report__by_parse("second"), REPORT_BY_SECOND);
	assert_int_equal(report__by_parse("Cause"), -1);
	assert_int_equal(report__by_parse(""), -1);
	assert_int_equal(report__by_parse(NULL), -1);
	for (int i = 0; i < REPORT_BY_MAX; i++)
		assert_int_equal(report__by_parse(report__by_name(i)), i);
	assert_null(report__by_name(REPORT_BY_MAX));
}

static void test_timeline(void **state)
{
	struct report rp;
	char *t, *j;

	build_tl3();
	assert_int_equal(report__load(&rp, path), 0);
	assert_string_equal(report__status_name(&rp), "complete");
	t = render(&rp, false, 0);
	ASSERT_HAS(t, "  duration:  3.0 s, first to last of 4 snapshots\n");
	ASSERT_HAS(t, "  total                 435         436\n\n"
		   "Timeline (drops/s: datagrams per second in each interval between snapshots;\n"
		   "offsets in s from the first snapshot):\n"
		   "     OFFSET    DROPS/S  each # is 1/50 of the busiest, 305/s\n"
		   "     +0.0 s      110/s  ##################\n"
		   "     +1.0 s     20.0/s  ###\n"
		   "     +2.0 s      305/s  ##################################################\n"
		   "\nKernel reasons");
	ASSERT_LACKS(t, "merged");
	free(t);

	j = render(&rp, true, 0);
	ASSERT_JQ(j, ".timeline == [{\"t\":0,\"interval_s\":1,\"drops\":110,\"drops_per_s\":110},"
		  "{\"t\":1,\"interval_s\":1,\"drops\":20,\"drops_per_s\":20},"
		  "{\"t\":2,\"interval_s\":1,\"drops\":305,\"drops_per_s\":305}]");
	ASSERT_JQ(j, "has(\"by\") | not");
	free(j);
	report__free(&rp);
}

static void test_by(void **state)
{
	struct report rp;
	char *t, *j;

	build_tl3();
	assert_int_equal(report__load(&rp, path), 0);

	t = render_by(&rp, false, REPORT_BY_SOCKET);
	j = render(&rp, false, 0);
	assert_string_equal(t, j); /* the default */
	free(j);
	free(t);

	t = render_by(&rp, false, REPORT_BY_CAUSE);
	ASSERT_HAS(t, "Drops by cause (the last snapshot; SHARE of all datagrams dropped):\n"
		   "  CAUSE               DROPS        SKBS   SHARE  MOST FROM (socket or flow: drops)\n"
		   "  rcvbuf                405         406   93.1%%  10.0.0.2:5001: 400, 10.0.0.2:5002: 5\n"
		   "  no_socket              30          30    6.9%%  10.0.0.1 -> 10.0.0.9:53: 30\n");
	ASSERT_LACKS(t, "Sockets (");
	ASSERT_LACKS(t, "Timeline");
	free(t);
	j = render_by(&rp, true, REPORT_BY_CAUSE);
	ASSERT_JQ(j, ".by.key == \"cause\" and (.by.rows | length == 2)");
	ASSERT_JQ(j, ".by.rows[0] == {\"cause\":\"rcvbuf\",\"drops\":405,\"skb_events\":406,"
		  "\"share\":0.931,\"top\":[{\"kind\":\"socket\",\"what\":\"10.0.0.2:5001\",\"drops\":400},"
		  "{\"kind\":\"socket\",\"what\":\"10.0.0.2:5002\",\"drops\":5}]}");
	ASSERT_JQ(j, ".by.rows[1] | .cause == \"no_socket\" and .drops == 30 and .share == 0.069"
		  " and .top == [{\"kind\":\"flow\",\"what\":\"10.0.0.1 -> 10.0.0.9:53\",\"drops\":30}]");
	ASSERT_JQ(j, ".timeline | length == 3"); /* still there */
	ASSERT_JQ(j, ".sockets | length == 2");
	free(j);

	t = render_by(&rp, false, REPORT_BY_REASON);
	ASSERT_HAS(t, "  REASON          VALUE       DROPS        SKBS  CAUSE\n"
		   "  SOCKET_RCVBUFF      6         405         406  rcvbuf\n"
		   "  NO_SOCKET           3          30          30  no_socket\n");
	free(t);
	j = render_by(&rp, true, REPORT_BY_REASON);
	ASSERT_JQ(j, ".by == {\"key\":\"reason\",\"rows\":["
		  "{\"reason\":6,\"name\":\"SOCKET_RCVBUFF\",\"cause\":\"rcvbuf\",\"drops\":405,\"skb_events\":406},"
		  "{\"reason\":3,\"name\":\"NO_SOCKET\",\"cause\":\"no_socket\",\"drops\":30,\"skb_events\":30}]}");
	free(j);

	t = render_by(&rp, false, REPORT_BY_LOCATION);
	ASSERT_HAS(t, "  LOCATION                   ADDRESS                  DROPS        SKBS\n"
		   "  __udp_queue_rcv_skb+0x1a4  0xffffffff81a0b1c4         405         406\n"
		   "  0xffffffff81a0c000         0xffffffff81a0c000          30          30\n");
	free(t);
	j = render_by(&rp, true, REPORT_BY_LOCATION);
	ASSERT_JQ(j, ".by == {\"key\":\"location\",\"rows\":["
		  "{\"addr\":\"0xffffffff81a0b1c4\",\"symbol\":\"__udp_queue_rcv_skb+0x1a4\",\"drops\":405,\"skb_events\":406},"
		  "{\"addr\":\"0xffffffff81a0c000\",\"symbol\":null,\"drops\":30,\"skb_events\":30}]}");
	free(j);

	t = render_by(&rp, false, REPORT_BY_SECOND);
	ASSERT_HAS(t, "      START   INTERVAL       DROPS     DROPS/S  TOP CAUSE\n"
		   "       +0.0        1.0         110         110  rcvbuf\n"
		   "       +1.0        1.0          20        20.0  no_socket\n"
		   "       +2.0        1.0         305         305  rcvbuf\n");
	free(t);
	j = render_by(&rp, true, REPORT_BY_SECOND);
	ASSERT_JQ(j, ".by.key == \"second\" and (.by.rows | map(.drops)) == [110,20,305]"
		  " and (.by.rows | map(.top_cause)) == [\"rcvbuf\",\"no_socket\",\"rcvbuf\"]"
		  " and .by.rows[1] == {\"t\":1,\"interval_s\":1,\"drops\":20,\"drops_per_s\":20,\"top_cause\":\"no_socket\"}");
	free(j);
	report__free(&rp);
}

/*
 * 91 snapshots 1 s apart, cumulative i*i datagrams: interval i drops 2i+1.
 * 90 intervals: the text merges them into 60 lines (line g: intervals
 * g*90/60 up to (g+1)*90/60, so 1 or 2 of them); JSON keeps all 90.
 */
static void test_timeline_merged(void **state)
{
	struct trace_writer *w;
	struct report rp;
	int lines = 0;
	char *t, *j, *p;

	unlink(path);
	assert_int_equal(trace_writer__open(path, false, &w), 0);
	tl_meta(w, false);
	for (int i = 0; i <= 90; i++) {
		struct trace_count cv[1] = { count(42, NS1, R_RCVBUF, LOC_RCVBUF, i * i, i * i) };
		struct trace_counts c = { .time_ns = (10 + i) * 1000000000ull, .n = i ? 1 : 0, .v = cv };

		assert_int_equal(trace_writer__counts(w, &c), 0);
	}
	assert_int_equal(trace_writer__close(w), 0);
	assert_int_equal(report__load(&rp, path), 0);

	t = render(&rp, false, 0);
	ASSERT_HAS(t, "  (90 intervals merged evenly into 60 lines of 1 or 2)\n"
		   "     OFFSET    DROPS/S  each # is 1/50 of the busiest, 178/s\n"
		   "     +0.0 s      1.0/s  #\n"     /* interval 0: 1 */
		   "     +1.0 s      4.0/s  #\n"     /* 1 and 2: 3 + 5 in 2 s */
		   "     +3.0 s      7.0/s  ##\n");  /* 3: 7 */
	/* the last: 88 and 89, 177 + 179 in 2 s */
	ASSERT_HAS(t, "    +88.0 s      178/s  ##################################################\n\n");
	for (p = strstr(t, "Timeline"); p && (p = strstr(p, " s  ")); p++)
		lines++;
	assert_int_equal(lines, 60);
	free(t);

	j = render(&rp, true, 0);
	ASSERT_JQ(j, ".timeline | length == 90");
	ASSERT_JQ(j, "[.timeline[].drops] | add == 8100");
	ASSERT_JQ(j, ".timeline[89] == {\"t\":89,\"interval_s\":1,\"drops\":179,\"drops_per_s\":179}");
	free(j);
	t = render_by(&rp, false, REPORT_BY_SECOND);
	ASSERT_HAS(t, "      +89.0        1.0         179         179  rcvbuf\n");
	free(t);
	report__free(&rp);
}

/* One snapshot: no intervals, said so. */
static void test_timeline_one(void **state)
{
	struct trace_writer *w;
	struct trace_counts c = { .time_ns = 1000000000ull };
	struct report rp;
	char *t, *j;

	unlink(path);
	assert_int_equal(trace_writer__open(path, false, &w), 0);
	tl_meta(w, false);
	assert_int_equal(trace_writer__counts(w, &c), 0);
	assert_int_equal(trace_writer__close(w), 0);
	assert_int_equal(report__load(&rp, path), 0);
	t = render(&rp, false, 0);
	ASSERT_HAS(t, "offsets in s from the first snapshot):\n  fewer than 2 snapshots: no intervals\n");
	free(t);
	j = render_by(&rp, true, REPORT_BY_SECOND);
	ASSERT_JQ(j, ".timeline == [] and .by == {\"key\":\"second\",\"rows\":[]}");
	free(j);
	report__free(&rp);
}

/* ---- hostile and edge-case traces ---- */

static struct trace_writer *w_open(bool events)
{
	static const struct trace_kv meta_ev[] = {
		{ TRACE_META_START, "1763880000.250000000" }, { "events", "recorded" },
	};
	struct trace_meta meta = { events ? 2 : 1, meta_ev };
	static const struct trace_reason reasons_v[] = {
		{ R_NO_SOCKET, "NO_SOCKET" }, { R_RCVBUF, "SOCKET_RCVBUFF" },
	};
	struct trace_reasons reasons = { ARRAY_SIZE(reasons_v), reasons_v };
	struct trace_writer *w;

	unlink(path);
	assert_int_equal(trace_writer__open(path, false, &w), 0);
	assert_int_equal(trace_writer__meta(w, &meta), 0);
	assert_int_equal(trace_writer__reasons(w, &reasons), 0);
	return w;
}

static void w_counts(struct trace_writer *w, uint64_t t, struct trace_count *cv, uint32_t n)
{
	struct trace_counts c = { .time_ns = t, .n = n, .v = cv };

	assert_int_equal(trace_writer__counts(w, &c), 0);
}

static struct trace_socket sock42(void)
{
	struct trace_socket k = { .cookie = 42, .netns = NS1, .inode = 900, .pid = 77,
				  .family = AF_INET, .proto = 17, .laddr = { 10, 0, 0, 2 },
				  .lport = 5001, .comm = "rx", .rcvbuf = 8192, .queued = 100 };

	return k;
}

/* Every output of the file at path: it must come out (and terminate).
 * Returns the JSON one (the advice's text in one line each). */
static char *render_all(struct report *rp)
{
	char *t = NULL;

	assert_int_equal(report__load(rp, path), 0);
	assert_true(report__printable(rp));
	for (int json = 0; json < 2; json++)
		for (int by = REPORT_BY_MAX - 1; by >= 0; by--) {
			struct report_opts o = { .json = json, .by = by };
			struct strbuf sb = {};

			report__print(rp, &o, &sb);
			sb_printf(&sb, "%s", "");
			assert_true(sb.len > 0);
			free(t);
			t = sb.buf; /* the last: JSON by socket, whose advice is unwrapped */
		}
	return t;
}

/*
 * A hostile trace: UINT64_MAX datagrams, skbs and bytes (avg size and
 * burst x truesize overflow every integer; pow2_up used to spin for
 * ever), a kernel counter that moved 2^63 against udpdrop's 0 (the
 * "differ by" negated INT64_MIN), and one that went down.
 */
static void test_hostile_numbers(void **state)
{
	struct trace_writer *w = w_open(false);
	struct trace_count cv[3];
	struct trace_socket sv[1] = { sock42() };
	struct trace_sockets socks = { .time_ns = 2, .n = 1, .v = sv };
	struct trace_mib_entry m0v[] = { { "UdpNoPorts", 0 }, { "UdpRcvbufErrors", UINT64_MAX } };
	struct trace_mib_entry m1v[] = { { "UdpNoPorts", 1ull << 63 }, { "UdpRcvbufErrors", 5 } };
	struct trace_mib m0 = { .time_ns = 1, .netns = NS2, .n = 2, .v = m0v };
	struct trace_mib m1 = { .time_ns = 2, .netns = NS2, .n = 2, .v = m1v };
	struct report rp;
	char *t;

	cv[0] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, 0, 0);
	w_counts(w, 1, cv, 1);
	assert_int_equal(trace_writer__mib(w, &m0), 0);
	cv[0] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, UINT64_MAX, UINT64_MAX);
	cv[0].val.bytes = UINT64_MAX;
	cv[1] = count(43, NS1, R_RCVBUF, LOC_RCVBUF, 1, UINT64_MAX);
	cv[1].val.bytes = UINT64_MAX;
	cv[2] = count(44, NS1, R_RCVBUF, LOC_RCVBUF, UINT64_MAX, 1);
	cv[2].val.bytes = 0;
	w_counts(w, UINT64_MAX, cv, 3);
	assert_int_equal(trace_writer__mib(w, &m1), 0);
	assert_int_equal(trace_writer__sockets(w, &socks), 0);
	assert_int_equal(trace_writer__close(w), 0);

	t = render_all(&rp);
	ASSERT_JQ(t, ".reconcile[] | select(.netns == %u and .cause == \"no_socket\") | .status == \"differ\" and .diff < -9e18", NS2);
	free(t);
	t = render(&rp, false, 0);
	ASSERT_HAS(t, "differ by 9223372036854775808");
	free(t);
	t = render(&rp, true, 0);
	/* a counter that went down (UINT64_MAX to 5) adds nothing */
	ASSERT_JQ(t, ".reconcile[] | select(.netns == %u and .cause == \"rcvbuf\") | .kernel == 0 and .status == \"match\"", NS2);
	/* 2^64 - 1 B over 2^64 - 1 datagrams: 1 B each; the burst no buffer
	 * holds: pace the sender */
	ASSERT_HAS(t, "datagrams of ~1 B dropped");
	ASSERT_HAS(t, "the sender is faster than the reader");
	/* 2^64 - 1 bytes in one datagram: at most a UDP payload's 65535 B */
	ASSERT_HAS(t, "per 65535 B datagram");
	free(t);
	report__free(&rp);

	/* zeros everywhere, a socket with no drops, snapshots at one time */
	w = w_open(true);
	cv[0] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, 0, 0);
	w_counts(w, 5, cv, 1);
	w_counts(w, 5, cv, 1);
	w_counts(w, 0, cv, 0);
	assert_int_equal(trace_writer__close(w), 0);
	t = render_all(&rp);
	ASSERT_JQ(t, ".advice == []");
	free(t);
	report__free(&rp);
}

/* A GSO/GRO skb of 10 datagrams of 1400 B: the size is per datagram, not
 * per skb; a frag_list member's bytes (already in its parent) are not
 * counted twice. */
static void test_datagram_size(void **state)
{
	struct trace_writer *w = w_open(false);
	struct trace_count cv[2];
	struct report rp;
	char *t;

	cv[0] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, 0, 0);
	w_counts(w, 1000000000ull, cv, 1);
	cv[0] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, 100, 10);
	cv[0].val.bytes = 140000;
	cv[1] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, 0, 20);
	cv[1].key.flags |= UD_KEY_CHILD;
	cv[1].val.bytes = 90000;
	w_counts(w, 2000000000ull, cv, 2);
	assert_int_equal(trace_writer__close(w), 0);
	t = render_all(&rp);
	ASSERT_HAS(t, "100 datagrams of ~1400 B (30 skb events) dropped");
	ASSERT_LACKS(t, "~14000 B");
	free(t);
	report__free(&rp);
}

/* The interface: used only when the netns has one besides lo. */
static void iface_case(int nifaces, const char *want, const char *lacks)
{
	struct trace_iface iv[] = {
		{ .ifindex = 1, .netns = NS1, .mtu = 65536, .txqueuelen = 1000, .name = "lo" },
		{ .ifindex = 2, .netns = NS1, .mtu = 1500, .txqueuelen = 1000, .name = "eth0" },
		{ .ifindex = 3, .netns = NS1, .mtu = 1400, .txqueuelen = 500, .name = "wg0" },
		{ .ifindex = 4, .netns = NS2, .mtu = 9000, .txqueuelen = 1000, .name = "eth9" },
	};
	struct trace_ifaces ifs = { .n = ARRAY_SIZE(iv), .v = iv };
	struct trace_writer *w = w_open(false);
	struct trace_count cv[1];
	struct trace_socket sv[1] = { sock42() };
	struct trace_sockets socks = { .time_ns = 2, .n = 1, .v = sv };
	struct report rp;
	char *t;

	if (nifaces == 1) /* lo and eth0 in NS1 (and one elsewhere) */
		iv[2].netns = NS2;
	assert_int_equal(trace_writer__ifaces(w, &ifs), 0);
	cv[0] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, 0, 0);
	w_counts(w, 1000000000ull, cv, 1);
	cv[0] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, 10, 10);
	cv[0].val.bytes = 40000;
	w_counts(w, 2000000000ull, cv, 1);
	assert_int_equal(trace_writer__sockets(w, &socks), 0);
	assert_int_equal(trace_writer__close(w), 0);
	t = render_all(&rp);
	ASSERT_HAS(t, want);
	ASSERT_LACKS(t, lacks);
	free(t);
	report__free(&rp);
}

static void test_iface(void **state)
{
	/* one: its MTU (1500) fragments 4000 B into 3, each charged 2304 B */
	iface_case(1, "~6912 B per 4000 B datagram", "interface is not known");
	/* two: no guess (the smallest MTU, 1400, was stated as fact) */
	iface_case(2, "The interface is not known (check its MTU with ip link): if its MTU is below "
		   "4028 B (the payload + 28), the datagrams are fragmented", "~6912 B");
}

static void ev(struct trace_writer *w, uint64_t t, uint64_t cookie, uint32_t dgrams, uint32_t cpu)
{
	struct trace_event e = { .time_ns = t, .cpu = cpu, .netns = NS1, .cookie = cookie,
				 .cause = 0, .reason = R_RCVBUF, .family = AF_INET, .proto = 17,
				 .len = 1000, .datagrams = dgrams };

	e.flags = cookie ? UD_KEY_SOCK | UD_KEY_RX_SK : 0;
	assert_int_equal(trace_writer__event(w, &e), 0);
}

/*
 * Per-drop events: the burst is the most in any 100 ms window, not the
 * 10 s snapshot interval. Socket 42: 60 drops in 59 ms (two CPUs, slightly
 * out of order), then 240 spread 30 ms apart (at most 4 in 100 ms), one of
 * them 300 ms late. Socket 43: 50 drops, only 10 with events (shed): per
 * interval, and said so.
 */
static void test_event_burst(void **state)
{
	struct trace_writer *w = w_open(true);
	struct trace_count cv[2];
	struct trace_socket sv[2] = { sock42(), sock42() };
	struct trace_sockets socks = { .time_ns = 2, .n = 2, .v = sv };
	struct report rp;
	char *t, *j;

	sv[1].cookie = 43;
	sv[1].lport = 5002;
	cv[0] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, 0, 0);
	w_counts(w, 1000000000ull, cv, 1);
	for (int i = 0; i < 60; i += 2) {
		/* CPU 1's event is written before CPU 0's earlier one */
		ev(w, 2000000000ull + (i + 1) * 1000000ull, 42, 1, 1);
		ev(w, 2000000000ull + i * 1000000ull, 42, 1, 0);
	}
	for (int i = 0; i < 240; i++)
		ev(w, 3000000000ull + i * 30000000ull, 42, 1, i & 1);
	ev(w, 3000000000ull + 100 * 30000000ull - 300000000ull, 42, 0, 0); /* late, no datagram */
	for (int i = 0; i < 10; i++)
		ev(w, 2000000000ull + i, 43, 1, 0);
	cv[0] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, 300, 300);
	cv[1] = count(43, NS1, R_RCVBUF, LOC_RCVBUF, 50, 50);
	w_counts(w, 11000000000ull, cv, 2);
	assert_int_equal(trace_writer__sockets(w, &socks), 0);
	assert_int_equal(trace_writer__close(w), 0);
	t = render_all(&rp);
	ASSERT_HAS(t, "at most 60 in one 100 ms window (per-drop events) (600/s)");
	ASSERT_HAS(t, "room for twice the worst window's 60 datagrams");
	ASSERT_HAS(t, "Per-drop events cover only 10 of these drops");
	ASSERT_HAS(t, "all of them in one 10.0 s snapshot interval");
	free(t);
	j = render(&rp, true, 0);
	ASSERT_JQ(j, "[.advice[] | select(.socket == 42) | .evidence | test(\"at most 60 in one 100 ms window\")] | any");
	free(j);
	report__free(&rp);
}

/*
 * One socket, one row (sockid.h): socket 42 (inode 900) drops 5 while it
 * has no cookie yet (counted by inode), then a dump names it by both and
 * it drops 3 more by cookie; the last SOCKETS, after it closed, has lost
 * its owner. The report shows one row of 8 with the owner it had, one
 * advice, and a burst window over the change of key (events 5 + 3 in
 * 70 ms).
 */
static void test_inode_then_cookie(void **state)
{
	struct trace_writer *w = w_open(true);
	struct trace_count cv[2];
	struct trace_socket sv[1] = { sock42() };
	struct trace_sockets socks = { .time_ns = 1500000000ull, .n = 1, .v = sv };
	struct report rp;
	char *t, *j;

	cv[0] = count(900, NS1, R_RCVBUF, LOC_RCVBUF, 0, 0);
	cv[0].key.flags |= UD_KEY_INODE;
	w_counts(w, 1000000000ull, cv, 1);
	for (int i = 0; i < 5; i++) {
		struct trace_event e = { .time_ns = 1950000000ull + i * 10000000ull, .netns = NS1,
					 .cookie = 900, .reason = R_RCVBUF, .family = AF_INET,
					 .proto = 17, .len = 1000, .datagrams = 1,
					 .flags = UD_KEY_SOCK | UD_KEY_RX_SK | UD_KEY_INODE };

		assert_int_equal(trace_writer__event(w, &e), 0);
	}
	assert_int_equal(trace_writer__sockets(w, &socks), 0);
	for (int i = 0; i < 3; i++)
		ev(w, 2000000000ull + i * 10000000ull, 42, 1, 0);
	cv[0] = count(900, NS1, R_RCVBUF, LOC_RCVBUF, 5, 5);
	cv[0].key.flags |= UD_KEY_INODE;
	cv[1] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, 3, 3);
	w_counts(w, 3000000000ull, cv, 2);
	/* closed: the owner lookup found no process any more */
	sv[0].pid = 0;
	sv[0].comm[0] = 0;
	socks.time_ns = 3000000000ull;
	assert_int_equal(trace_writer__sockets(w, &socks), 0);
	assert_int_equal(trace_writer__close(w), 0);
	t = render_all(&rp);
	free(t);
	j = render(&rp, true, 0);
	ASSERT_JQ(j, ".sockets | length == 1");
	ASSERT_JQ(j, ".sockets[0] | .cookie == 42 and .drops == 8 and .causes.rcvbuf == 8");
	ASSERT_JQ(j, ".sockets[0] | .pid == 77 and .comm == \"rx\" and .local == \"10.0.0.2:5001\"");
	ASSERT_JQ(j, "[.advice[] | .socket] == [42]");
	ASSERT_JQ(j, ".advice[0].evidence | test(\"all of them in one 100 ms window \\\\(per-drop events\\\\)\")");
	free(j);
	t = render(&rp, false, 0);
	ASSERT_HAS(t, "  10.0.0.2:5001  *       4026532001  77/rx              8           8  rcvbuf");
	free(t);
	report__free(&rp);
}

/* A socket keyed by inode: JSON advice says what "socket" holds. */
static void test_socket_id_kind(void **state)
{
	struct trace_writer *w = w_open(false);
	struct trace_count cv[2];
	struct report rp;
	char *j;

	cv[0] = count(900, NS1, R_RCVBUF, LOC_RCVBUF, 5, 5);
	cv[0].key.flags |= UD_KEY_INODE;
	cv[1] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, 3, 3);
	w_counts(w, 1000000000ull, cv, 2);
	assert_int_equal(trace_writer__close(w), 0);
	assert_int_equal(report__load(&rp, path), 0);
	j = render(&rp, true, 0);
	ASSERT_JQ(j, "[.advice[] | select(.socket == 900) | .socket_id_kind] == [\"inode\"]");
	ASSERT_JQ(j, "[.advice[] | select(.socket == 42) | .socket_id_kind] == [\"cookie\"]");
	free(j);
	report__free(&rp);
}

/*
 * 5,000 sockets over 40 snapshots, each dropping in every interval: the
 * joins are indexed (add_snap, the bursts, SOCKETS by cookie were
 * quadratic), and a steady overload gets pacing advice, not a buffer.
 * No time is asserted (a busy machine): tools/bench-report.sh INSTR=1
 * counts the instructions as the tables double.
 */
static void test_many_sockets(void **state)
{
	enum { NS = 5000, NSNAP = 40 };
	struct trace_writer *w = w_open(false);
	struct trace_count *cv = calloc(NS, sizeof(*cv));
	struct trace_socket *sv = calloc(NS, sizeof(*sv));
	struct trace_sockets socks = { .time_ns = 2, .n = NS, .v = sv };
	struct report rp;
	char *t;

	assert_non_null(cv);
	assert_non_null(sv);
	for (int i = 0; i < NS; i++) {
		sv[i] = sock42();
		sv[i].cookie = 1000 + i;
		sv[i].lport = 1024 + i;
		/* overloaded: the queue full at every look (a queue seen
		 * drained would make the drops bursts) */
		sv[i].queued = 8000;
	}
	for (int s = 0; s < NSNAP; s++) {
		for (int i = 0; i < NS; i++)
			cv[i] = count(1000 + i, NS1, R_RCVBUF, LOC_RCVBUF, (uint64_t)s * (1 + i % 5),
				      (uint64_t)s * (1 + i % 5));
		w_counts(w, (1 + s) * 1000000000ull, cv, NS);
		if (s % 10 == 0)
			assert_int_equal(trace_writer__sockets(w, &socks), 0);
	}
	assert_int_equal(trace_writer__close(w), 0);
	assert_int_equal(report__load(&rp, path), 0);
	t = render(&rp, false, 0);
	ASSERT_HAS(t, "the socket dropped in 39 of 39 intervals: the sender is faster than the");
	free(t);
	report__free(&rp);
	free(cv);
	free(sv);
}

/* ---- tables at and over their limits (trace.h) ---- */

/* A META record of n keys "PREFIXi" = "v", the last one key_last. */
static void meta_keys(struct trace_writer *w, const char *prefix, uint32_t n, const char *key_last)
{
	struct trace_kv *v = calloc(n, sizeof(*v));
	char (*keys)[24] = calloc(n, 24);
	struct trace_meta m = { n, v };

	assert_non_null(v);
	assert_non_null(keys);
	for (uint32_t i = 0; i < n; i++) {
		snprintf(keys[i], 24, "%s%u", prefix, i);
		v[i] = (struct trace_kv){ keys[i], "v" };
	}
	if (key_last)
		v[n - 1] = (struct trace_kv){ key_last, "the-last-key" };
	assert_int_equal(trace_writer__meta(w, &m), 0);
	free(v);
	free(keys);
}

/*
 * The issue's hostile traces: META records of 20,000 and 200,000 keys
 * (quadratic: 0.4 s and over 30 s) are refused at once, exit 1, said so;
 * keys or reasons spread over several records are counted in all; and at
 * the limits a trace reads whole, its names found.
 */
static void test_table_limits(void **state)
{
	static const uint32_t big[] = { 20000, 200000 };
	struct trace_writer *w;
	struct report rp;
	char msg[512], *t;

	for (size_t i = 0; i < ARRAY_SIZE(big); i++) {
		unlink(path);
		assert_int_equal(trace_writer__open(path, false, &w), 0);
		w_counts(w, 1, NULL, 0);
		meta_keys(w, "key", big[i], NULL);
		assert_int_equal(trace_writer__close(w), 0);
		assert_int_equal(report__load(&rp, path), 0);
		assert_int_equal(report__exit_code(&rp), 1);
		assert_string_equal(report__status_name(&rp), "corrupt");
		ASSERT_HAS(report__problem(&rp, msg, sizeof(msg)),
			   "corrupt at offset 20 (block 0): a META record lists %u entries, more than "
			   "the 4096 a trace may hold: corrupt or hostile", big[i]);
		report__free(&rp);
	}

	/* 4096 keys twice, all different: 8192 in all */
	unlink(path);
	assert_int_equal(trace_writer__open(path, false, &w), 0);
	w_counts(w, 1, NULL, 0);
	meta_keys(w, "a", TRACE_META_MAX, NULL);
	assert_int_equal(trace_writer__flush(w), 0);
	meta_keys(w, "b", TRACE_META_MAX, NULL);
	assert_int_equal(trace_writer__close(w), 0);
	assert_int_equal(report__load(&rp, path), 0);
	assert_int_equal(report__exit_code(&rp), 1);
	assert_true(report__printable(&rp)); /* the blocks before it */
	assert_string_equal(report__status_name(&rp), "corrupt");
	ASSERT_HAS(report__problem(&rp, msg, sizeof(msg)),
		   "corrupt or hostile trace at offset %llu: more than 4096 META keys in all (the most "
		   "a trace may hold); the report covers the blocks before it",
		   (unsigned long long)rp.error_offset);
	assert_true(rp.error_offset > TRACE_HDR_LEN);
	t = render(&rp, false, 0);
	ASSERT_HAS(t, "*** CORRUPT: corrupt or hostile trace at offset");
	ASSERT_HAS(t, "*** this report covers the 1 block before offset");
	free(t);
	report__free(&rp);

	/* 40,000 reasons twice, all different */
	unlink(path);
	assert_int_equal(trace_writer__open(path, false, &w), 0);
	for (uint32_t r = 0; r < 2; r++) {
		struct trace_reason *v = calloc(40000, sizeof(*v));
		struct trace_reasons rs = { 40000, v };

		for (uint32_t i = 0; i < 40000; i++)
			v[i] = (struct trace_reason){ r * 40000 + i, "R" };
		assert_int_equal(trace_writer__reasons(w, &rs), 0);
		free(v);
	}
	assert_int_equal(trace_writer__close(w), 0);
	assert_int_equal(report__load(&rp, path), 0);
	assert_int_equal(report__exit_code(&rp), 1);
	ASSERT_HAS(report__problem(&rp, msg, sizeof(msg)), "more than 65536 REASONS values in all");
	report__free(&rp);

	/*
	 * At the limits: 4096 META keys (host the last one), 65,536 reasons
	 * each dropping one datagram; the same keys and values repeated in
	 * later records replace, never add. Before, each insertion and each
	 * count's lookup walked the table (2 x 10^9 comparisons here).
	 */
	unlink(path);
	assert_int_equal(trace_writer__open(path, false, &w), 0);
	for (int rep = 0; rep < 2; rep++) {
		struct trace_reason *v = calloc(TRACE_REASONS_MAX, sizeof(*v));
		char (*names)[16] = calloc(TRACE_REASONS_MAX, 16);
		struct trace_reasons rs = { TRACE_REASONS_MAX, v };

		meta_keys(w, "k", TRACE_META_MAX, TRACE_META_HOST);
		for (uint32_t i = 0; i < TRACE_REASONS_MAX; i++) {
			snprintf(names[i], 16, "R_%u", i);
			v[i] = (struct trace_reason){ 1000000 + i, names[i] };
		}
		assert_int_equal(trace_writer__reasons(w, &rs), 0);
		free(v);
		free(names);
	}
	{
		struct trace_count *cv = calloc(TRACE_REASONS_MAX, sizeof(*cv));

		w_counts(w, 1000000000ull, NULL, 0);
		for (uint32_t i = 0; i < TRACE_REASONS_MAX; i++)
			cv[i] = count(0, NS1, 1000000 + i, 0, 1, 1);
		w_counts(w, 2000000000ull, cv, TRACE_REASONS_MAX);
		free(cv);
	}
	assert_int_equal(trace_writer__close(w), 0);
	assert_int_equal(report__load(&rp, path), 0);
	assert_int_equal(report__exit_code(&rp), 0);
	assert_int_equal(rp.nmeta, TRACE_META_MAX);
	assert_int_equal(rp.nreasons, TRACE_REASONS_MAX);
	t = render_by(&rp, false, REPORT_BY_REASON);
	ASSERT_HAS(t, "  host:      the-last-key\n");
	ASSERT_HAS(t, "  R_0 ");
	ASSERT_HAS(t, "  R_65535 ");
	free(t);
	report__free(&rp);
}

/* ---- strings from the file reach no terminal raw ---- */

/* An xterm title, clear screen, red: what a hostile name would send. */
#define ESCS "\x1b]0;owned\x07\x1b[2J\x1b[31m"
/* ... the same in 15 bytes, for a comm */
#define ESCS15 "\x1b]0;x\x07\x1b[2J\x1b[31m"
/* CSI as a C1 control in UTF-8 and as a raw byte; a NEL; invalid UTF-8 */
#define C1S "\xc2\x9b" "2J\x9b" "31m\xc2\x85\xff\xfe"
#define R_QDISC 90
#define R_HOSTILE 99

/* The first byte a terminal would act on in t (text), or NULL. */
static const char *unsafe_byte(const char *t)
{
	const unsigned char *p = (const unsigned char *)t;
	size_t left = strlen(t);

	while (left) {
		int n = utf8_seq_len(p, left);

		if (!n || !mem_is_printable((const char *)p, n, true))
			return (const char *)p;
		p += n;
		left -= n;
	}
	return NULL;
}

/*
 * A CRC-valid trace whose every string holds terminal escapes: META keys
 * and values (host, kernel, command, version, the filters' netns and port,
 * the cause names that name shed events, header bytes), REASONS and
 * SYMBOLS names, a socket's comm, an interface's name (quoted by the
 * advice). No section of the text, in any --by, may print them raw; the
 * JSON escapes them (\u001b) and stays valid.
 */
static void test_hostile_strings(void **state)
{
	static const struct trace_kv meta_v[] = {
		{ TRACE_META_HOST, ESCS "host" C1S },
		{ TRACE_META_KERNEL, ESCS "6.18" },
		{ TRACE_META_START, "1763880000.250000000" },
		{ TRACE_META_CMDLINE, "udpdrop record -N " ESCS "blue\nforged line" },
		{ TRACE_META_VERSION, ESCS "0.1.0" },
		{ TRACE_META_CAUSES, ESCS "rcvbuf" C1S ",x" },
		{ "events", "recorded" },
		{ "headers", ESCS },
		{ "netns", ESCS "blue" },
		{ "port", ESCS },
		{ "pid", ESCS },
		{ ESCS "key" C1S, ESCS "value" },
		/* the scopes: a hostile name is dropped, never quoted in a command */
		{ "sysctl_netns", "4026532001" },
		{ "sysctl_host_wide", "net.core.rmem_default," ESCS "evil" },
		{ "sysctl_settable", "" },
		{ "sysctl_netns_name", ESCS "blue" },
	};
	struct trace_meta meta = { ARRAY_SIZE(meta_v), meta_v };
	static const struct trace_reason reasons_v[] = {
		{ R_RCVBUF, "SOCKET_RCVBUFF" }, { R_QDISC, "QDISC_DROP" },
		{ R_HOSTILE, ESCS "REASON\nforged line" C1S },
	};
	struct trace_reasons reasons = { ARRAY_SIZE(reasons_v), reasons_v };
	static const struct trace_symbol syms_v[] = {
		{ LOC_RCVBUF, ESCS "udp_queue_rcv_one_skb+0x1a4" C1S },
	};
	struct trace_symbols syms = { ARRAY_SIZE(syms_v), syms_v };
	static const struct trace_iface if_v[] = {
		{ .ifindex = 1, .netns = NS1, .mtu = 65536, .txqueuelen = 1000, .name = "lo" },
		{ .ifindex = 2, .netns = NS1, .mtu = 1500, .txqueuelen = 1000,
		  .name = ESCS "eth0" C1S },
	};
	struct trace_ifaces ifaces = { ARRAY_SIZE(if_v), if_v };
	struct trace_socket sv[1] = { sock42() };
	struct trace_sockets socks = { .time_ns = 2000000000ull, .n = 1, .v = sv };
	struct trace_cause_count shed_v[] = { { 0, 5 } };
	struct trace_shed shed = { .time_ns = 2000000000ull, .n = 1, .v = shed_v };
	struct trace_count cv[3];
	struct trace_writer *w;
	struct report rp;
	char msg[512], *t;

	memcpy(sv[0].comm, ESCS15, sizeof(sv[0].comm));
	cv[0] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, 10, 10);
	cv[1] = count(42, NS1, R_HOSTILE, LOC_RCVBUF, 3, 3);
	cv[2] = count(42, NS1, R_QDISC, LOC_NOPORT, 4, 4);
	unlink(path);
	assert_int_equal(trace_writer__open(path, false, &w), 0);
	assert_int_equal(trace_writer__meta(w, &meta), 0);
	assert_int_equal(trace_writer__reasons(w, &reasons), 0);
	assert_int_equal(trace_writer__ifaces(w, &ifaces), 0);
	w_counts(w, 1000000000ull, NULL, 0);
	assert_int_equal(trace_writer__symbols(w, &syms), 0);
	w_counts(w, 2000000000ull, cv, ARRAY_SIZE(cv));
	assert_int_equal(trace_writer__sockets(w, &socks), 0);
	assert_int_equal(trace_writer__shed(w, &shed), 0);
	assert_int_equal(trace_writer__close(w), 0);

	assert_int_equal(report__load(&rp, path), 0);
	assert_int_equal(report__exit_code(&rp), 0);
	for (int by = 0; by < REPORT_BY_MAX; by++) {
		const char *bad;

		t = render_by(&rp, false, by);
		bad = unsafe_byte(t);
		if (bad)
			fail_msg("--by %s: byte 0x%02x at %zu of the text:\n%s", report__by_name(by),
				 (unsigned char)*bad, (size_t)(bad - t), t);
		/* nor can a name start a line of its own */
		ASSERT_LACKS(t, "\nforged line");
		if (by == REPORT_BY_SOCKET) {
			/* every section that names something from the file */
			ASSERT_HAS(t, "  host:      ?]0;owned??[2J?[31mhost??2J?31m????\n");
			ASSERT_HAS(t, "  command:   udpdrop record -N ?]0;owned??[2J?[31mblue?forged line\n");
			ASSERT_HAS(t, "  filters:   netns ?]0;owned??[2J?[31mblue, port ?]0;owned??[2J?[31m,"
				   " pid ?]0;owned??[2J?[31m\n");
			ASSERT_HAS(t, "(?]0;owned??[2J?[31mrcvbuf??2J?31m???? 5;");
			ASSERT_HAS(t, "77/?]0;x??[2J?[31m");
			ASSERT_HAS(t, "    reason   ?]0;owned??[2J?[31mREASON?forged line??2J?31m????");
			ASSERT_HAS(t, "    at       ?]0;owned??[2J?[31mudp_queue_rcv_one_skb+0x1a4??2J?31m????");
			/* the advice quotes the interface */
			ASSERT_HAS(t, "tc -s qdisc show dev ?]0;owned??[2J?[31meth0??2J?31m???? shows which");
		}
		free(t);
	}
	t = render_by(&rp, true, REPORT_BY_SOCKET);
	assert_null(unsafe_byte(t));
	ASSERT_JQ(t, ".advice | map(.change) | join(\" \") | contains(\"on the host (net.core.rmem_default "
		  "is host-wide: one value for every netns, read-only in netns 4026532001; no container "
		  "can set it): sysctl -w net.core.rmem_default=\")");
	ASSERT_JQ(t, ".advice | map(.change) | join(\" \") | contains(\"evil\") | not");
	ASSERT_JQ(t, ".meta.host == \"\\u001b]0;owned\\u0007\\u001b[2J\\u001b[31mhost\\u009b2J\\ufffd31m\\u0085\\ufffd\\ufffd\"");
	ASSERT_JQ(t, ".sockets[0].comm == \"%s\"", "\\u001b]0;x\\u0007\\u001b[2J\\u001b[31m");
	ASSERT_JQ(t, "[.sockets[0].reasons[].name] | index(\"\\u001b]0;owned\\u0007\\u001b[2J\\u001b[31mREASON\\nforged line\\u009b2J\\ufffd31m\\u0085\\ufffd\\ufffd\") != null");
	free(t);
	for (int by = 1; by < REPORT_BY_MAX; by++) {
		t = render_by(&rp, true, by);
		assert_null(unsafe_byte(t));
		ASSERT_JQ(t, ".by.key == \"%s\"", report__by_name(by));
		free(t);
	}
	report__free(&rp);

	/* the one line on stderr: a path with escapes in it */
	assert_int_equal(report__load(&rp, "/nonexistent/" ESCS), -ENOENT);
	assert_null(unsafe_byte(report__problem(&rp, msg, sizeof(msg))));
	ASSERT_HAS(msg, "/nonexistent/?]0;owned??[2J?[31m: cannot open");
	report__free(&rp);
}

/* META "missed" (written again as it grows): the last one, in the totals
 * of the text and JSON, as top shows it; none: 0 and no line. */
static void test_missed(void **state)
{
	struct trace_writer *w;
	static const struct trace_kv meta_v[] = { { TRACE_META_START, "1763880000.250000000" } };
	static const struct trace_kv m1_v[] = { { "missed", "3" } };
	static const struct trace_kv m2_v[] = { { "missed", "1207" } };
	struct trace_meta meta = { 1, meta_v }, m1 = { 1, m1_v }, m2 = { 1, m2_v };
	struct trace_count cv[1];
	struct trace_counts c0 = { .time_ns = 1000000000ull };
	struct trace_counts c1 = { .time_ns = 2000000000ull, .n = 1, .v = cv };
	struct report rp;
	char *t, *j;

	(void)state;
	for (int with = 0; with < 2; with++) {
		unlink(path);
		assert_int_equal(trace_writer__open(path, false, &w), 0);
		assert_int_equal(trace_writer__meta(w, &meta), 0);
		assert_int_equal(trace_writer__counts(w, &c0), 0);
		if (with)
			assert_int_equal(trace_writer__meta(w, &m1), 0);
		cv[0] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, 30, 30);
		assert_int_equal(trace_writer__counts(w, &c1), 0);
		if (with)
			assert_int_equal(trace_writer__meta(w, &m2), 0);
		assert_int_equal(trace_writer__close(w), 0);
		assert_int_equal(report__load(&rp, path), 0);
		t = render(&rp, false, 0);
		j = render(&rp, true, 0);
		if (with) {
			ASSERT_HAS(t, "  and 1,207 events the kernel skipped (a drop inside a drop on one CPU): in no count above\n");
			ASSERT_JQ(j, ".totals | .drops == 30 and .skb_events == 30 and .missed == 1207");
		} else {
			ASSERT_LACKS(t, "skipped");
			ASSERT_JQ(j, ".totals | .drops == 30 and .skb_events == 30 and .missed == 0");
		}
		free(t);
		free(j);
		report__free(&rp);
	}
}

/*
 * The names top shows, as record writes them in META (a later META adds
 * to the first): netns_name.INODE and kernel_owner.COOKIE; and the REMOTE
 * column of a connected socket. A name from the file is made printable.
 * A trace without them reads as before (inodes; test_complete).
 */
static void test_names_and_remote(void **state)
{
	struct trace_writer *w;
	static const struct trace_kv meta_v[] = {
		{ TRACE_META_START, "1763880000.250000000" },
		{ TRACE_META_VERSION, "0.1.0" },
	};
	static const struct trace_kv names_v[] = {
		{ "netns_name.4026532001", "blue" },
		{ "netns_name.4026532002", "red\033[2J" },
		{ "kernel_owner.44", "kernel vxlan vxlan0 vni 42" },
	};
	struct trace_meta meta = { ARRAY_SIZE(meta_v), meta_v };
	struct trace_meta names = { ARRAY_SIZE(names_v), names_v };
	static const struct trace_reason reasons_v[] = {
		{ R_NO_SOCKET, "NO_SOCKET" }, { R_RCVBUF, "SOCKET_RCVBUFF" },
		{ 110, "VXLAN_VNI_NOT_FOUND" },
	};
	struct trace_reasons reasons = { ARRAY_SIZE(reasons_v), reasons_v };
	struct trace_count cv[3];
	struct trace_counts c0 = { .time_ns = 1000000000ull };
	struct trace_counts c1 = { .time_ns = 2000000000ull, .n = 3, .v = cv };
	struct trace_socket sv[2] = {
		{ .cookie = 42, .netns = NS1, .inode = 900, .pid = 77, .family = AF_INET,
		  .proto = 17, .laddr = { 10, 0, 0, 2 }, .lport = 5001, .raddr = { 10, 0, 0, 1 },
		  .rport = 40000, .comm = "rx", .rcvbuf = 4608 },
		{ .cookie = 44, .netns = NS1, .inode = 902, .family = AF_INET, .proto = 17,
		  .lport = 4789, .rcvbuf = 212992 },
	};
	struct trace_sockets socks = { .time_ns = 2000000000ull, .n = 2, .v = sv };
	struct report rp;
	char *t, *j;

	unlink(path);
	assert_int_equal(trace_writer__open(path, false, &w), 0);
	assert_int_equal(trace_writer__meta(w, &meta), 0);
	assert_int_equal(trace_writer__reasons(w, &reasons), 0);
	assert_int_equal(trace_writer__counts(w, &c0), 0);
	cv[0] = count(42, NS1, R_RCVBUF, LOC_RCVBUF, 30, 30);
	cv[1] = count(44, NS1, 110, 0, 9, 9);
	cv[2] = count(0, NS2, R_NO_SOCKET, LOC_NOPORT, 7, 7);
	cv[2].key.daddr[0] = 10, cv[2].key.daddr[3] = 9, cv[2].key.dport = 53;
	assert_int_equal(trace_writer__counts(w, &c1), 0);
	assert_int_equal(trace_writer__sockets(w, &socks), 0);
	assert_int_equal(trace_writer__meta(w, &names), 0);
	assert_int_equal(trace_writer__close(w), 0);

	assert_int_equal(report__load(&rp, path), 0);
	t = render(&rp, false, 0);
	ASSERT_HAS(t, "  LOCAL          REMOTE          NETNS       PID/COMM                         DROPS        SKBS  CAUSE             RCVBUF\n");
	ASSERT_HAS(t, "  10.0.0.2:5001  10.0.0.1:40000  blue        77/rx                               30          30  rcvbuf           4.5 KiB\n");
	ASSERT_HAS(t, "  *:4789         *               blue        kernel vxlan vxlan0 vni 42           9           9  tunnel           208 KiB\n");
	ASSERT_HAS(t, "  no_socket      red?[2J     ");
	ASSERT_LACKS(t, "\033");
	j = render(&rp, true, 0);
	ASSERT_JQ(j, "[.sockets[] | {local, remote, netns, netns_name, kernel_owner, pid, comm}] == "
		  "[{\"local\":\"10.0.0.2:5001\",\"remote\":\"10.0.0.1:40000\",\"netns\":4026532001,"
		  "\"netns_name\":\"blue\",\"kernel_owner\":null,\"pid\":77,\"comm\":\"rx\"},"
		  "{\"local\":\"*:4789\",\"remote\":\"*\",\"netns\":4026532001,\"netns_name\":\"blue\","
		  "\"kernel_owner\":\"kernel vxlan vxlan0 vni 42\",\"pid\":null,\"comm\":null}]");
	free(t);
	free(j);
	report__free(&rp);
}

/*
 * The socket's own deliveries, recorded in SOCKETS (minor 2): a steady
 * overload gets the rate to pace to, as top and doctor give it (90 % of
 * the 900/s its reader took); a socket whose deliveries stopped while it
 * dropped (a stopped reader) is called not reading, whatever the netns.
 */
static void test_socket_deliveries(void **state)
{
	for (int stopped = 0; stopped < 2; stopped++) {
		struct trace_writer *w = w_open(false);
		struct trace_socket sv = sock42();
		struct trace_sockets socks = { .n = 1, .v = &sv, .have_rx = true };
		struct trace_count cv;
		struct report rp;
		char *j;

		sv.rcvbuf = 212992;
		sv.queued = 212480;
		for (int s = 0; s <= 5; s++) {
			cv = count(42, NS1, R_RCVBUF, LOC_RCVBUF, 300ull * s, 300ull * s);
			w_counts(w, (1 + s) * 1000000000ull, &cv, 1);
			socks.time_ns = (1 + s) * 1000000000ull;
			sv.delivered = stopped ? 100 : 900ull * s;
			assert_int_equal(trace_writer__sockets(w, &socks), 0);
		}
		assert_int_equal(trace_writer__close(w), 0);
		assert_int_equal(report__load(&rp, path), 0);
		j = render(&rp, true, 0);
		if (!stopped) {
			ASSERT_JQ(j, "[.advice[] | select(.cause == \"rcvbuf\")] | length == 1");
			ASSERT_JQ(j, ".advice[0].verdict == \"steady_overload\"");
			ASSERT_JQ(j, ".advice[0].setting == \"sender_pps\" and .advice[0].value == 810");
			ASSERT_JQ(j, ".advice[0].change | contains(\"Pace the sender to at most 810 datagrams/s\")");
		} else {
			ASSERT_JQ(j, "[.advice[] | .verdict] == [\"steady_overload\", \"not_reading\"]");
			ASSERT_JQ(j, ".advice[1].evidence | startswith(\"Nothing was delivered to it (its own deliveries\")");
		}
		free(j);
		report__free(&rp);
	}
}

/* ---- golden: real recordings in tests/fixtures ---- */

static void golden(const char *data, const char *want, bool json, int exit_code)
{
	struct report rp;
	size_t len;
	char *t, *g;

	report__load(&rp, data);
	assert_true(report__printable(&rp));
	assert_int_equal(report__exit_code(&rp), exit_code);
	t = render(&rp, json, 0);
	g = (char *)slurp(want, &len);
	if (strcmp(t, g))
		fail_msg("%s differs from the report of %s; got:\n%s", want, data, t);
	free(g);
	free(t);
	report__free(&rp);
}

static void test_golden(void **state)
{
	golden("tests/fixtures/rcvbuf.data", "tests/fixtures/rcvbuf.report.txt", false, 0);
	golden("tests/fixtures/rcvbuf.data", "tests/fixtures/rcvbuf.report.json", true, 0);
	golden("tests/fixtures/rcvbuf-cut.data", "tests/fixtures/rcvbuf-cut.report.txt", false, 0);
	/* events with headers through a one-page ring: most of them shed */
	golden("tests/fixtures/shed.data", "tests/fixtures/shed.report.txt", false, 0);
	golden("tests/fixtures/shed.data", "tests/fixtures/shed.report.json", true, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_complete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names_and_remote, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_short, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_a_trace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_to_report, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer, setup, teardown),
		cmocka_unit_test(test_by_names),
		cmocka_unit_test_setup_teardown(test_timeline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_by, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeline_merged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeline_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_datagram_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_iface, setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_burst, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_id_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inode_then_cookie, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_sockets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_strings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_deliveries, setup, teardown),
		cmocka_unit_test(test_golden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
