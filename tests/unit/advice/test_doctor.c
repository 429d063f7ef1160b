// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for doctor's pure parts: the checklist rules (src/advice/checklist.c)
 * with concrete numbers, the machine-readable setting and value of the
 * advice's findings (advice_finding.setting/value), and the doctor's kind
 * of burst (a run of sample intervals with drops).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "advice.h"
#include "checklist.h"
#include "text_assert.h"
#include "util.h"

static struct check_input defaults(void)
{
	struct check_input in = {};

	in.rmem_default = ADVICE_U64(212992);
	in.rmem_max = ADVICE_U64(4194304);
	in.netdev_max_backlog = ADVICE_U64(1000);
	in.ipfrag_high_thresh = ADVICE_U64(4194304);
	in.ipfrag_time = ADVICE_U64(30);
	in.udp_mem[0] = ADVICE_U64(575799);
	in.udp_mem[1] = ADVICE_U64(767732);
	in.udp_mem[2] = ADVICE_U64(1151598);
	in.page_size = ADVICE_U64(4096);
	return in;
}

static struct check_rx rx(double dgps, double size, uint64_t rcvbuf)
{
	struct check_rx r = { .known = true, .who = "10.0.0.2:5001", .dgps = dgps,
			      .rcvbuf = rcvbuf, .mtu = 1500, .family = AF_INET };

	if (size > 0)
		r.size = ADVICE_DBL(size);
	return r;
}

static const struct check_item *find(const struct check_item *v, int n, const char *setting)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].setting, setting))
			return &v[i];
	fail_msg("no checklist item %s", setting);
	return NULL;
}

static void test_truesize(void **state)
{
	struct check_rx r = rx(1000, 1000, 0);

	/* pow2_up(1000 + 8 + 20 + 14 + 384) + 256 */
	assert_int_equal(check__truesize(&r), 2304);
	r.size.known = false; /* unknown: a full-MTU datagram's (1472 B) */
	assert_int_equal(check__truesize(&r), 2304);
	r = rx(1000, 100, 0); /* pow2_up(526) + 256 */
	assert_int_equal(check__truesize(&r), 1280);
	/* 10,000/s for 100 ms: 1,000 x 2304 B = 2,304,000 -> 563 x 4 KiB */
	r = rx(10000, 1000, 0);
	assert_int_equal(check__rcvbuf_for(&r, 0.1), 2306048);
}

static void test_nothing_observed(void **state)
{
	struct check_input in = defaults();
	struct check_item v[CHECK_MAX];
	int n = check__build(&in, v, CHECK_MAX);

	assert_int_equal(n, 5);
	for (int i = 0; i < n; i++) {
		assert_false(v[i].evaluated);
		assert_false(v[i].risky);
		assert_false(v[i].has_value);
		assert_true(v[i].has_now);
	}
	assert_string_equal(v[0].setting, "net.core.rmem_default");
	assert_int_equal(v[0].now, 212992);
	ASSERT_HAS(v[0].why, "No socket with the default buffer (212992 B (208 KiB)) received");
}

static void test_rmem_default(void **state)
{
	struct check_input in = defaults();
	struct check_item v[CHECK_MAX];
	const struct check_item *it;
	int n;

	/* 10,000 datagrams/s of 1000 B: 92 of them fit (92 x 2304 = 211968),
	 * 9.2 ms of arrivals; 100 ms needs 2306048 B */
	in.busiest_default = rx(10000, 1000, 212992);
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.core.rmem_default");
	assert_true(it->evaluated);
	assert_true(it->risky);
	assert_true(it->has_value);
	assert_int_equal(it->value, 2306048);
	ASSERT_HAS(it->why, "it holds 92 of them, 9.2 ms of arrivals");
	ASSERT_HAS(it->why, "sysctl -w net.core.rmem_default=2306048");

	/* 500/s: 92 of them are 184 ms: fine */
	in.busiest_default = rx(500, 1000, 212992);
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.core.rmem_default");
	assert_true(it->evaluated);
	assert_false(it->risky);
	assert_false(it->has_value);
	ASSERT_HAS(it->why, "184.0 ms of arrivals");
}

static void test_rmem_max(void **state)
{
	struct check_input in = defaults();
	struct check_item v[CHECK_MAX];
	const struct check_item *it;
	int n;

	/* 40,000/s of 1000 B: 100 ms is 4000 x 2304 = 9216000 B, asked for
	 * as SO_RCVBUF 4608000 (the kernel doubles it): above 4194304 */
	in.busiest = rx(40000, 1000, 8192);
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.core.rmem_max");
	assert_true(it->risky);
	assert_int_equal(it->value, 4608000);
	ASSERT_HAS(it->why, "SO_RCVBUF 4608000, which rmem_max (4194304 B (4.0 MiB)) silently cuts");
	ASSERT_HAS(it->why, "sysctl -w net.core.rmem_max=4608000");

	/* 10,000/s: 1152000 requested, allowed */
	in.busiest = rx(10000, 1000, 8192);
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.core.rmem_max");
	assert_true(it->evaluated);
	assert_false(it->risky);
	ASSERT_HAS(it->why, "SO_RCVBUF 1153024, which rmem_max (4194304 B (4.0 MiB)) allows");
}

static void test_backlog(void **state)
{
	struct check_input in = defaults();
	struct check_item v[CHECK_MAX];
	const struct check_item *it;
	int n;

	/* 200,000/s: 1000 packets are 5 ms; 10 ms needs 2000: 2048 */
	in.pkt_rate = ADVICE_DBL(200000);
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.core.netdev_max_backlog");
	assert_true(it->risky);
	assert_int_equal(it->value, 2048);
	ASSERT_HAS(it->why, "absorbs 5.00 ms of softirq delay");
	/* 50,000/s: 20 ms */
	in.pkt_rate = ADVICE_DBL(50000);
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.core.netdev_max_backlog");
	assert_true(it->evaluated);
	assert_false(it->risky);
	ASSERT_HAS(it->why, "absorbs 20.00 ms");
}

static void test_ipfrag(void **state)
{
	struct check_input in = defaults();
	struct check_item v[CHECK_MAX];
	const struct check_item *it;
	int n;

	/* 10,000/s of 3 fragments: at 1% fragment loss 1 - 0.99^3 = 2.9701%
	 * stay incomplete, 297/s for 30 s = 8910 held, 2 fragments each of
	 * ~2304 B: 41058662 B, above 4 MiB; 40 MiB */
	in.frag_dgps = ADVICE_DBL(10000);
	in.frag_k = 3;
	in.frag_mtu = 1500;
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.ipv4.ipfrag_high_thresh");
	assert_true(it->risky);
	assert_int_equal(it->value, 41943040);
	ASSERT_HAS(it->why, "297/s stay incomplete for ipfrag_time (30 s), 8910 at once holding ~41058662 B");
	/* 10/s: 8.9 held, ~41059 B: fine */
	in.frag_dgps = ADVICE_DBL(10);
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.ipv4.ipfrag_high_thresh");
	assert_true(it->evaluated);
	assert_false(it->risky);
}

static void test_udp_mem(void **state)
{
	struct check_input in = defaults();
	struct check_item v[CHECK_MAX];
	const struct check_item *it;
	int n;

	/* 4000 sockets of 4 MiB: 4194304 pages, above pressure 767732 */
	in.rcvbuf_sum = ADVICE_U64(4000ull * 4194304);
	in.nsockets = 4000;
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.ipv4.udp_mem");
	assert_true(it->risky);
	assert_int_equal(it->value, 8192000);
	ASSERT_HAS(it->why, "(4096000 pages of 4096 B), above udp_mem's pressure threshold (767732 pages");
	ASSERT_HAS(it->why, "net.ipv4.udp_mem='575799 4096000 8192000'");
	/* 10 sockets at the default: 520 pages */
	in.rcvbuf_sum = ADVICE_U64(10 * 212992);
	in.nsockets = 10;
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.ipv4.udp_mem");
	assert_false(it->risky);
	ASSERT_HAS(it->why, "(520 pages of 4096 B), under");
}

/* Counters only: no socket's arrivals or sizes are observable, which the
 * items say (not evaluated) instead of "nothing received". */
static void test_counters_only(void **state)
{
	struct check_input in = defaults();
	struct check_item v[CHECK_MAX];
	const struct check_item *it;
	int n;

	in.counters_only = true;
	in.nsockets_default = 3;
	in.pkt_rate = ADVICE_DBL(50000);
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.core.rmem_default");
	assert_false(it->evaluated);
	ASSERT_HAS(it->why, "3 UDP sockets use the default buffer");
	ASSERT_HAS(it->why, "not observable without tracing (counters only)");
	ASSERT_LACKS(it->why, "No socket");
	it = find(v, n, "net.core.rmem_max");
	assert_false(it->evaluated);
	ASSERT_HAS(it->why, "not observable without tracing (counters only)");
	ASSERT_LACKS(it->why, "No UDP socket received");
	/* no socket at the default: said so, still not evaluated */
	in.nsockets_default = 0;
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.core.rmem_default");
	assert_false(it->evaluated);
	ASSERT_HAS(it->why, "No UDP socket seen uses the default buffer");
	in.nsockets_default = 3;
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.ipv4.ipfrag_high_thresh");
	assert_false(it->evaluated);
	ASSERT_HAS(it->why, "not observable without tracing (counters only)");
	ASSERT_LACKS(it->why, "No fragmented");
	/* the netns's rate is an average: said so */
	it = find(v, n, "net.core.netdev_max_backlog");
	assert_true(it->evaluated);
	ASSERT_HAS(it->why, "50000 UDP datagrams/s arrived on average over the sample");
}

/* Traced on a kernel without sock:sk_data_ready (before 6.6): the
 * buffers are not judged, and the items say why, not "nothing received". */
static void test_no_arrivals(void **state)
{
	struct check_input in = defaults();
	struct check_item v[CHECK_MAX];
	const struct check_item *it;
	int n;

	in.no_arrivals = true;
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.core.rmem_max");
	assert_false(it->evaluated);
	ASSERT_HAS(it->why, "sock:sk_data_ready tracepoint (Linux 6.6 or later)");
	ASSERT_LACKS(it->why, "No UDP socket received");
	it = find(v, n, "net.core.rmem_default");
	assert_false(it->evaluated);
	ASSERT_HAS(it->why, "which this kernel lacks: not judged");
}

/* A rate says what it is: the busiest tick's, or an average. */
static void test_rate_labels(void **state)
{
	struct check_input in = defaults();
	struct check_item v[CHECK_MAX];
	int n;

	in.busiest = rx(10000, 1000, 8192);
	in.busiest.peak = true;
	in.busiest_default = rx(500, 1000, 212992);
	in.pkt_rate = ADVICE_DBL(50000);
	in.pkt_rate_peak = true;
	n = check__build(&in, v, CHECK_MAX);
	assert_int_equal(n, 5); /* the fixed order: rmem_default, rmem_max, backlog */
	assert_string_equal(v[1].setting, "net.core.rmem_max");
	ASSERT_HAS(v[1].why, "receives 10000 datagrams/s at its busiest 200 ms (rcvbuf");
	assert_string_equal(v[0].setting, "net.core.rmem_default");
	ASSERT_HAS(v[0].why, "receives 500 datagrams/s on average over the sample with the default");
	assert_string_equal(v[2].setting, "net.core.netdev_max_backlog");
	ASSERT_HAS(v[2].why, "50000 UDP datagrams/s arrived in the busiest 200 ms:");
}

/* Sizes are known only for sockets with drops; the family sizes the
 * fragments; a huge rate is clamped, not overflowed. */
static void test_ipfrag_unknown_family(void **state)
{
	struct check_input in = defaults();
	struct check_item v[CHECK_MAX];
	const struct check_item *it;
	char v4[CHECK_TEXT];
	int n;

	in.sizes_unknown = 2;
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.ipv4.ipfrag_high_thresh");
	assert_false(it->evaluated);
	ASSERT_HAS(it->why, "sizes unknown for sockets without drops (2 receiving)");
	ASSERT_LACKS(it->why, "No fragmented datagrams seen during");

	in.frag_dgps = ADVICE_DBL(10000);
	in.frag_k = 3;
	in.frag_mtu = 1500;
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.ipv4.ipfrag_high_thresh");
	assert_true(it->evaluated);
	snprintf(v4, sizeof(v4), "%s", it->why);
	ASSERT_HAS(v4, "(~2304 B per fragment)");
	/* IPv6: 1452 B of payload per full fragment (40 B of header, not
	 * 20), the same skb at the same MTU: the same truesize */
	in.frag_family = AF_INET6;
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.ipv4.ipfrag_high_thresh");
	assert_true(it->evaluated);
	assert_string_equal(it->why, v4);

	in.frag_family = AF_INET;
	in.frag_dgps = ADVICE_DBL(1e300);
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.ipv4.ipfrag_high_thresh");
	assert_true(it->risky);
	assert_int_equal(it->value, UINT64_C(1) << 40);
}

/* Counters only: the socket a count of drops belongs to. */
static void test_drop_owner(void **state)
{
	bool exact;

	/* one socket grew, by exactly the kernel's count */
	assert_int_equal(check__drop_owner((uint64_t[]){ 0, 40, 0 }, 3, 40, &exact), 1);
	assert_true(exact);
	/* by less: read a moment apart, still it ("about") */
	assert_int_equal(check__drop_owner((uint64_t[]){ 0, 37, 0 }, 3, 40, &exact), 1);
	assert_false(exact);
	/* by more than the kernel counted: not this cause's */
	assert_int_equal(check__drop_owner((uint64_t[]){ 41, 0 }, 2, 40, &exact), -1);
	/* several grew, or none */
	assert_int_equal(check__drop_owner((uint64_t[]){ 20, 20 }, 2, 40, &exact), -1);
	assert_int_equal(check__drop_owner((uint64_t[]){ 0, 0 }, 2, 40, &exact), -1);
	assert_int_equal(check__drop_owner(NULL, 0, 40, &exact), -1);
}

/* doctor's and report's wrapping (sb_wrapped): a number keeps its unit and
 * a command its flag on one line. */
static void test_wrapped(void **state)
{
	struct strbuf sb = {};
	char text[256];
	const char *nl;

	/* "8192" ends at column 85: "B" would start the next line */
	snprintf(text, sizeof(text), "%.*s 8192 B more words here to wrap", 80,
		 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	sb_wrapped(&sb, "what", text, 100);
	ASSERT_HAS(sb.buf, "8192 B");
	nl = strchr(sb.buf, '\n');
	assert_non_null(nl);
	assert_true(nl - sb.buf <= 100);
	sb_free(&sb);

	snprintf(text, sizeof(text), "%.*s sysctl -w net.core.rmem_max=1", 78,
		 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	sb_wrapped(&sb, "change", text, 100);
	ASSERT_HAS(sb.buf, "sysctl -w");
	sb_free(&sb);

	assert_true(wrap_glued("ms."));
	assert_true(wrap_glued("-w net"));
	assert_true(wrap_glued("--json"));
	assert_false(wrap_glued("-5"));
	assert_false(wrap_glued("sysctl"));
}

/* ---- advice_finding.setting / value ---- */

static struct advice_input base(enum cause c)
{
	struct advice_input in = { .cause = c, .family = AF_INET };

	in.rmem_default = ADVICE_U64(212992);
	in.rmem_max = ADVICE_U64(4194304);
	in.wmem_default = ADVICE_U64(212992);
	in.udp_mem[0] = ADVICE_U64(575799);
	in.udp_mem[1] = ADVICE_U64(767732);
	in.udp_mem[2] = ADVICE_U64(1151598);
	in.netdev_max_backlog = ADVICE_U64(1000);
	in.ipfrag_time = ADVICE_U64(30);
	in.ipfrag_max_dist = ADVICE_U64(64);
	in.mtu = ADVICE_U64(1500);
	in.txqueuelen = ADVICE_U64(1000);
	in.ifname = "veth0";
	return in;
}

static void test_setting_value(void **state)
{
	struct advice_input in = base(CAUSE_RCVBUF);
	struct advice_finding f[ADVICE_MAX];
	int n;

	/* report's fixture: SO_RCVBUF 4096 asked, 297 x 1000 B dropped in one
	 * burst, room for twice it: 8192 + 2 x 297 x 2304 = 1376768 -> 1380352
	 * (4 KiB), asked as 690176 */
	in.drops = in.skbs = 297;
	in.rcvbuf = ADVICE_U64(8192);
	in.avg_size = ADVICE_DBL(1000);
	in.burst = ADVICE_U64(297);
	in.burst_s = 0.4;
	in.burst_episode = true;
	in.span_s = 5;
	in.intervals = ADVICE_U64(25);
	in.intervals_dropping = ADVICE_U64(2);
	n = advice__build(&in, f, ADVICE_MAX);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].setting, "SO_RCVBUF");
	assert_true(f[0].has_value);
	assert_int_equal(f[0].value, 690176);
	ASSERT_HAS(f[0].change, "SO_RCVBUF, 690176)");
	ASSERT_HAS(f[0].evidence, "all of them in one 400 ms run of sample intervals with drops");
	/* doctor's intervals are its sample intervals, not refreshes */
	ASSERT_HAS(f[0].evidence, "It dropped in 2 of the 25 sample intervals. ");
	ASSERT_LACKS(f[0].evidence, "refresh");
	ASSERT_HAS(f[0].change, "room for twice the worst burst's 297 datagrams (bursts vary)");
	ASSERT_LACKS(f[0].evidence, "record -i");

	/* the default buffer: rmem_default, 212992 + 2 x 297 x 2304 = 1581568
	 * -> 1585152 (387 x 4 KiB) */
	in.rcvbuf = ADVICE_U64(212992);
	n = advice__build(&in, f, ADVICE_MAX);
	assert_string_equal(f[0].setting, "net.core.rmem_default");
	assert_int_equal(f[0].value, 1585152);
	ASSERT_HAS(f[0].change, "net.core.rmem_default=1585152");

	/* steadily overloaded: pace, no setting */
	in.intervals_dropping = ADVICE_U64(25);
	n = advice__build(&in, f, ADVICE_MAX);
	assert_string_equal(f[0].setting, "");
	assert_false(f[0].has_value);

	in = base(CAUSE_CPU_BACKLOG);
	in.drops = in.skbs = 10;
	advice__build(&in, f, ADVICE_MAX);
	assert_string_equal(f[0].setting, "net.core.netdev_max_backlog");
	assert_int_equal(f[0].value, 2000);

	in = base(CAUSE_UDP_MEM);
	in.drops = in.skbs = 10;
	advice__build(&in, f, ADVICE_MAX);
	assert_string_equal(f[0].setting, "net.ipv4.udp_mem");
	assert_int_equal(f[0].value, 2303196);

	in = base(CAUSE_FRAG_TIMEOUT);
	in.drops = 30;
	in.skbs = 60;
	advice__build(&in, f, ADVICE_MAX);
	assert_string_equal(f[0].setting, "datagram_size");
	assert_int_equal(f[0].value, 1472);

	in = base(CAUSE_NO_SOCKET);
	in.drops = in.skbs = 50;
	in.port = ADVICE_U64(5999);
	advice__build(&in, f, ADVICE_MAX);
	assert_string_equal(f[0].setting, "");
	assert_false(f[0].has_value);
	ASSERT_HAS(f[0].what, "nothing listens on port 5999");
}

/* Each item carries its setting's scope, and its command works there:
 * the host's for a host-wide one seen from a container's netns (with the
 * per-socket call that needs no host setting), the netns's own for a
 * per-netns one; the same words as the findings' (advice.h). */
static void test_scope(void **state)
{
	struct check_input in = defaults();
	struct check_item v[CHECK_MAX];
	const struct check_item *it;
	int n;

	in.where.s[in.where.n++] = (struct advice_sysctl_scope){ "net.core.rmem_max", ADVICE_SCOPE_HOST, false };
	in.where.s[in.where.n++] = (struct advice_sysctl_scope){ "net.core.rmem_default", ADVICE_SCOPE_HOST, false };
	in.where.s[in.where.n++] = (struct advice_sysctl_scope){ "net.ipv4.ipfrag_high_thresh", ADVICE_SCOPE_NETNS, true };
	snprintf(in.where.enter, sizeof(in.where.enter), "ip netns exec blue ");
	snprintf(in.where.label, sizeof(in.where.label), "blue");
	in.busiest = rx(40000, 1000, 8192);
	in.frag_dgps = ADVICE_DBL(10000);
	in.frag_k = 3;
	in.frag_mtu = 1500;
	n = check__build(&in, v, CHECK_MAX);

	it = find(v, n, "net.core.rmem_max");
	assert_true(it->risky);
	assert_string_equal(it->scope, "host-wide");
	assert_string_equal(it->command, "sysctl -w net.core.rmem_max=4608000");
	assert_true(it->on_host);
	ASSERT_HAS(it->why, "silently cuts. on the host (net.core.rmem_max is host-wide: one value for "
		   "every netns, read-only in netns blue; no container can set it): sysctl -w "
		   "net.core.rmem_max=4608000 (or SO_RCVBUFFORCE in the application, with CAP_NET_ADMIN: "
		   "it ignores rmem_max).");

	it = find(v, n, "net.ipv4.ipfrag_high_thresh");
	assert_true(it->risky);
	assert_string_equal(it->scope, "per-netns");
	assert_string_equal(it->command, "ip netns exec blue sysctl -w net.ipv4.ipfrag_high_thresh=41943040");
	assert_false(it->on_host);
	ASSERT_HAS(it->why, "ip netns exec blue sysctl -w net.ipv4.ipfrag_high_thresh=41943040 (per-netns: "
		   "netns blue only; for a container set it at its start: docker run --sysctl "
		   "net.ipv4.ipfrag_high_thresh=41943040");

	/* not judged: the scope still, no command */
	it = find(v, n, "net.core.rmem_default");
	assert_string_equal(it->scope, "host-wide");
	assert_string_equal(it->command, "");
	/* untested (netns backlog not listed): no scope, the plain command */
	it = find(v, n, "net.core.netdev_max_backlog");
	assert_string_equal(it->scope, "");
}

/* The checklist and the socket's finding agree: for a steadily overloaded
 * socket it points at the finding's pacing rate, for one nobody reads at
 * that, rather than offer a buffer as the fix. */
static void test_checklist_follows_finding(void **state)
{
	struct check_input in = defaults();
	struct check_item v[CHECK_MAX];
	const struct check_item *it;
	int n;

	(void)state;
	in.busiest = in.busiest_default = rx(40000, 1000, 212992);
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.core.rmem_max");
	assert_true(it->evaluated);
	ASSERT_LACKS(it->why, "Its finding above");
	in.busiest.verdict = in.busiest_default.verdict = "steady_overload";
	in.busiest.pace_dgps = in.busiest_default.pace_dgps = 810;
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.core.rmem_max");
	assert_true(it->evaluated);
	ASSERT_HAS(it->why, "Its finding above: a steady overload, which a buffer only postpones; pace the "
		   "sender to at most 810 datagrams/s.");
	it = find(v, n, "net.core.rmem_default");
	assert_true(it->evaluated);
	ASSERT_HAS(it->why, "pace the sender to at most 810 datagrams/s.");
	in.busiest.verdict = "not_reading";
	n = check__build(&in, v, CHECK_MAX);
	it = find(v, n, "net.core.rmem_max");
	assert_true(it->evaluated);
	ASSERT_HAS(it->why, "Its finding above: nothing reads it");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_truesize),
		cmocka_unit_test(test_checklist_follows_finding),
		cmocka_unit_test(test_nothing_observed),
		cmocka_unit_test(test_rmem_default),
		cmocka_unit_test(test_rmem_max),
		cmocka_unit_test(test_backlog),
		cmocka_unit_test(test_ipfrag),
		cmocka_unit_test(test_udp_mem),
		cmocka_unit_test(test_counters_only),
		cmocka_unit_test(test_no_arrivals),
		cmocka_unit_test(test_scope),
		cmocka_unit_test(test_rate_labels),
		cmocka_unit_test(test_ipfrag_unknown_family),
		cmocka_unit_test(test_drop_owner),
		cmocka_unit_test(test_wrapped),
		cmocka_unit_test(test_setting_value),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
