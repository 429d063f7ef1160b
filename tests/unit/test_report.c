// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for udpdrop report (src/report_model.c): traces built with the
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
#include <unistd.h>
#include <zlib.h>
#include "report_model.h"
#include "text_assert.h"
#include "trace.h"
#include "util.h"

#define NS1 4026532001u
#define NS2 4026532002u
#define R_RCVBUF 6
#define R_NO_SOCKET 3
#define LOC_RCVBUF 0xffffffff81a0b1c4ull
#define LOC_NOPORT 0xffffffff81a0c000ull

static char dir[64], path[128];

static int setup(void **state)
{
	strcpy(dir, "/tmp/test_report.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/t.data", dir);
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	return rmdir(dir);
}

static uint8_t *slurp(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	uint8_t *b;
	long n;

	if (!f)
		fail_msg("cannot open %s", p);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = malloc(n + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, n, f), n);
	b[n] = 0;
	fclose(f);
	*len = n;
	return b;
}

static void spit(const char *p, const void *b, size_t len)
{
	FILE *f = fopen(p, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, len, f), len);
	fclose(f);
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
	ASSERT_HAS(t, "  10.0.0.2:5001  4026532001  77/rx            300         301  rcvbuf           4.5 KiB\n");
	ASSERT_HAS(t, "  10.0.0.2:5002  4026532001  78/rx2             5           5  rcvbuf           208 KiB\n");
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
	ASSERT_HAS(t, "  4026532001  rcvbuf                305         305  match         UdpRcvbufErrors+Udp6RcvbufErrors\n");
	ASSERT_HAS(t, "  4026532002  no_socket               9           7  differ by 2   UdpNoPorts+Udp6NoPorts\n");
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
	ASSERT_JQ(j, ".unattributed == [{\"cause\":\"no_socket\",\"netns\":%u,\"saddr\":\"10.0.0.1\","
		  "\"daddr\":\"10.0.0.9\",\"dport\":53,\"drops\":7,\"skb_events\":7}]", NS2);
	ASSERT_JQ(j, ".totals.drops == 312 and .totals.skb_events == 313 and .totals.causes.rcvbuf.drops == 305");
	ASSERT_JQ(j, ".reconcile[] | select(.netns == %u and .cause == \"rcvbuf\") | .status == \"match\" and .kernel == 305 and .udpdrop == 305", NS1);
	ASSERT_JQ(j, ".reconcile[] | select(.netns == %u and .cause == \"no_socket\") | .status == \"differ\" and .diff == -2", NS2);
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

static void test_newer(void **state)
{
	uint8_t h[TRACE_HDR_LEN] = "UDPDROPT";
	struct report rp;
	char msg[512];
	uint32_t crc;

	h[8] = 2; /* major 2 */
	crc = crc32(0, h, 16);
	for (int i = 0; i < 4; i++)
		h[16 + i] = crc >> (8 * i);
	spit(path, h, sizeof(h));
	assert_int_equal(report__load(&rp, path), 0);
	assert_false(report__printable(&rp));
	assert_int_equal(report__exit_code(&rp), 1);
	assert_string_equal(report__status_name(&rp), "newer");
	ASSERT_HAS(report__problem(&rp, msg, sizeof(msg)), "trace format 2.0");
	report__free(&rp);
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
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_complete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_short, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_a_trace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer, setup, teardown),
		cmocka_unit_test(test_golden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
