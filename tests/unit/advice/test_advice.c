// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the advice engine (src/advice/). The helpers must
 * reproduce the tables of Rick Jones and Andy Zhu, "Considerations When Benchmarking
 * UDP Bulk Flows" (Jones, Zhu) exactly: "Time To Fill Socket Buffer
 * (milliseconds)" and "Message Loss % versus Packet Loss %", whose values
 * are copied below from the paper as printed. Then the findings: each rule
 * with its numbers filled in.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "advice.h"
#include "netcfg.h"
#include "text_assert.h"
#include "util.h"

/* ---- the seed's time-to-fill table ---- */

/* Copied from the paper: buffer size (bytes), then ms at 10, 30, 100,
 * 300, 1000, 3000 and 10000 Mbit/s (Mbit = 10^6 bits). */
static const char *const seed_fill[] = {
	"262144 209.715 69.905 20.972 6.991 2.097 0.699 0.210",
	"786432 629.146 209.715 62.915 20.972 6.291 2.097 0.629",
	"1310720 1048.576 349.525 104.858 34.953 10.486 3.495 1.049",
	"1835008 1468.006 489.335 146.801 48.934 14.680 4.893 1.468",
	"2359296 1887.437 629.146 188.744 62.915 18.874 6.291 1.887",
	"2883584 2306.867 768.956 230.687 76.896 23.069 7.690 2.307",
	"3407872 2726.298 908.766 272.630 90.877 27.263 9.088 2.726",
	"3932160 3145.728 1048.576 314.573 104.858 31.457 10.486 3.146",
	"4456448 3565.158 1188.386 356.516 118.839 35.652 11.884 3.565",
	"4980736 3984.589 1328.196 398.459 132.820 39.846 13.282 3.985",
	"5505024 4404.019 1468.006 440.402 146.801 44.040 14.680 4.404",
	"6029312 4823.450 1607.817 482.345 160.782 48.234 16.078 4.823",
	"6553600 5242.880 1747.627 524.288 174.763 52.429 17.476 5.243",
	"7077888 5662.310 1887.437 566.231 188.744 56.623 18.874 5.662",
	"7602176 6081.741 2027.247 608.174 202.725 60.817 20.272 6.082",
	"8126464 6501.171 2167.057 650.117 216.706 65.012 21.671 6.501",
};

static void test_time_to_fill_table(void **state)
{
	static const double mbits[] = { 10, 30, 100, 300, 1000, 3000, 10000 };
	struct strbuf got = {}, want = {};

	/* the rows: 262144 B, then +524288 B each (the paper's) */
	for (uint64_t buf = 262144, row = 0; buf <= 8126464; buf += 524288, row++) {
		sb_printf(&got, "%llu", (unsigned long long)buf);
		for (size_t i = 0; i < ARRAY_SIZE(mbits); i++)
			sb_printf(&got, " %.3f", advice__time_to_fill_ms(buf, mbits[i] * 1e6));
		sb_printf(&got, "\n");
		assert_true(row < ARRAY_SIZE(seed_fill));
	}
	for (size_t i = 0; i < ARRAY_SIZE(seed_fill); i++)
		sb_printf(&want, "%s\n", seed_fill[i]);
	if (strcmp(got.buf, want.buf))
		fail_msg("time to fill differs from the paper:\n%s\nwant:\n%s", got.buf, want.buf);
	sb_free(&got);
	sb_free(&want);
	assert_true(advice__time_to_fill_ms(212992, 0) == 0);
}

/* ---- the seed's message-loss table ---- */

/* Copied from the paper as printed: packet loss %, then message loss % at
 * 1, 3, 6, 10, 20, 30 and 45 fragments per message. Its first two rows
 * drop trailing zeros (".01" for 0.010) and its small values the leading
 * 0; the comparison reads every cell as printed to three decimals. */
static const char *const seed_loss[] = {
	".001 .001 .003 .006 .01 .02 .03 .045",
	".003 .003 .009 .018 .03 .06 .09 .135",
	".01 .010 .030 .060 .100 .200 .300 .449",
	".03 .030 .090 .180 .300 .598 .896 1.341",
	"0.1 0.100 0.300 0.599 0.996 1.981 2.957 4.402",
	"0.3 0.300 0.897 1.787 2.960 5.832 8.619 12.646",
	"1 1.000 2.970 5.852 9.562 18.209 26.030 36.381",
	"3 3.000 8.733 16.703 26.258 45.621 59.899 74.606",
	"10 10.000 27.100 46.856 65.132 87.842 95.761 99.127",
};

/* A cell as the paper prints it, as "%.3f" prints it: "0.020" for ".02". */
static void three_decimals(char *out, size_t len, const char *cell)
{
	const char *dot = strchr(cell, '.');
	int have = dot ? (int)strlen(dot + 1) : 0;

	snprintf(out, len, "%s%s%s%.*s", cell[0] == '.' ? "0" : "", cell, dot ? "" : ".",
		 3 - have, "000");
}

static void test_message_loss_table(void **state)
{
	static const unsigned frags[] = { 1, 3, 6, 10, 20, 30, 45 };

	for (size_t r = 0; r < ARRAY_SIZE(seed_loss); r++) {
		char row[128], *save = NULL, *cell;
		double p;
		size_t i = 0;

		snprintf(row, sizeof(row), "%s", seed_loss[r]);
		cell = strtok_r(row, " ", &save);
		p = strtod(cell, NULL) / 100;
		while ((cell = strtok_r(NULL, " ", &save))) {
			char want[32], got[32];

			assert_true(i < ARRAY_SIZE(frags));
			three_decimals(want, sizeof(want), cell);
			snprintf(got, sizeof(got), "%.3f", 100 * advice__message_loss(p, frags[i]));
			if (strcmp(got, want))
				fail_msg("packet loss %s%%, %u fragments: %s%%, the paper says %s (%s)",
					 seed_loss[r], frags[i], got, cell, want);
			i++;
		}
		assert_int_equal(i, ARRAY_SIZE(frags));
	}
	/* the paper's worked examples: 0.01% and 1% over 45 fragments */
	assert_true(fabs(100 * advice__message_loss(0.0001, 45) - 0.45) < 0.005);
	assert_true(fabs(100 * advice__message_loss(0.01, 45) - 36.38) < 0.005);
	assert_true(advice__message_loss(0, 45) == 0);
	assert_true(advice__message_loss(1, 3) == 1);
}

/* ---- the other helpers ---- */

static void test_fragments(void **state)
{
	/* the paper: MTU 1460 leaves 1432 B; 1500 leaves 1472 (RHEL: -28) */
	assert_int_equal(advice__max_unfragmented(1460, AF_INET), 1432);
	assert_int_equal(advice__max_unfragmented(1500, AF_INET), 1472);
	assert_int_equal(advice__max_unfragmented(1500, AF_INET6), 1452);
	assert_int_equal(advice__fragments(1432, 1460, AF_INET), 1);
	assert_int_equal(advice__fragments(1433, 1460, AF_INET), 2);
	/* the demo: 4000-byte datagrams are 3 fragments at MTU 1500 */
	assert_int_equal(advice__fragments(4000, 1500, AF_INET), 3);
	/* netperf's 65507 B at MTU 1460: 65515 B of IP payload in 1440-byte
	 * pieces is 46 fragments (the paper rounds to "45") */
	assert_int_equal(advice__fragments(65507, 1460, AF_INET), 46);
	/* IPv6: 1452 fits; 1453 needs two of (1500 - 48) & ~7 = 1448 */
	assert_int_equal(advice__fragments(1452, 1500, AF_INET6), 1);
	assert_int_equal(advice__fragments(1453, 1500, AF_INET6), 2);
	assert_int_equal(advice__fragments(100, 20, AF_INET), 0);
}

/* The paper's setsockopt() table under rmem_max = wmem_max = 212992:
 * request, then the receive and send buffers the kernel set. */
static void test_sockbuf_effective(void **state)
{
	static const struct { uint64_t req, rcv, snd; } t[] = {
		{ 0, 2304, 4608 }, { 1, 2304, 4608 }, { 2303, 4606, 4608 },
		{ 2304, 4608, 4608 }, { 2305, 4610, 4610 }, { 4608, 9216, 9216 },
		{ 4609, 9218, 9218 }, { 65536, 131072, 131072 },
		{ 212991, 425982, 425982 }, { 212993, 425984, 425984 },
		{ 212994, 425984, 425984 }, { 1048576, 425984, 425984 },
		{ 2097152, 425984, 425984 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		assert_int_equal(advice__sockbuf_effective(t[i].req, 212992, true), t[i].rcv);
		assert_int_equal(advice__sockbuf_effective(t[i].req, 212992, false), t[i].snd);
	}
	/* the paper's -S 24M under rmem_max 48M: 50331648 */
	assert_int_equal(advice__sockbuf_effective(24u << 20, 50331648, true), 50331648);
}

static void test_small_helpers(void **state)
{
	assert_int_equal(advice__round_up(692480, 4096), 696320);
	assert_int_equal(advice__round_up(4096, 4096), 4096);
	assert_int_equal(advice__round_up(0, 4096), 0);
	/* measured: 1000 and 1024 B datagrams over veth queue 2304 B each
	 * (tests/fixtures/rcvbuf.data: 3 queued = 6912 B; docs/json.md's
	 * demo: a 211968-byte peak = 92 x 2304) */
	assert_int_equal(advice__truesize_estimate(1000, 1500, AF_INET), 2304);
	assert_int_equal(advice__truesize_estimate(1024, 1500, AF_INET), 2304);
	assert_int_equal(advice__truesize_estimate(1000, 0, AF_INET), 2304);
	/* 4000 B at MTU 1500: three fragments, each charged */
	assert_int_equal(advice__truesize_estimate(4000, 1500, AF_INET), 3 * 2304);
	assert_true(advice__ipid_wrap_s(65536) == 1.0);
	assert_true(advice__ipid_wrap_s(0) == 0);
}

/* ---- findings ---- */

static struct advice_input sysctls(enum cause c)
{
	struct advice_input in = { .cause = c, .family = AF_INET };

	in.rmem_default = ADVICE_U64(212992);
	in.rmem_max = ADVICE_U64(4194304);
	in.wmem_default = ADVICE_U64(212992);
	in.wmem_max = ADVICE_U64(4194304);
	in.udp_mem[0] = ADVICE_U64(575799);
	in.udp_mem[1] = ADVICE_U64(767732);
	in.udp_mem[2] = ADVICE_U64(1151598);
	in.netdev_max_backlog = ADVICE_U64(1000);
	in.ipfrag_time = ADVICE_U64(30);
	in.ipfrag_high_thresh = ADVICE_U64(4194304);
	in.ipfrag_max_dist = ADVICE_U64(64);
	in.mtu = ADVICE_U64(1500);
	in.txqueuelen = ADVICE_U64(1000);
	in.ifname = "veth0";
	return in;
}

static char *all(const struct advice_finding *f, int n)
{
	struct strbuf sb = {};

	for (int i = 0; i < n; i++)
		sb_printf(&sb, "[%s] what: %s\nevidence: %s\nchange: %s\nverify: %s\n",
			  cause__name(f[i].cause), f[i].what, f[i].evidence, f[i].change, f[i].verify);
	return sb.buf;
}

/* The fixture's case: SO_RCVBUF 4096 (kernel 8192), 297 of 1000 B dropped
 * in one 0.502 s interval, nothing read. */
/*
 * A socket on port whose application set SO_RCVBUF to 4096 (8 KiB
 * granted), 297 datagrams of 1000 B dropped in one 502 ms interval.
 */
static struct advice_input app_burst(uint64_t port)
{
	struct advice_input in = sysctls(CAUSE_RCVBUF);

	in.port = ADVICE_U64(port);
	in.has_socket = true;
	in.drops = in.skbs = 297;
	in.span_s = 3.001;
	in.burst = ADVICE_U64(297);
	in.burst_s = 0.502;
	in.avg_size = ADVICE_DBL(1000);
	in.rcvbuf = ADVICE_U64(8192);
	return in;
}

/*
 * A well-known server sets its buffer in its own configuration: the
 * advice names that setting with the value (unbound's so-rcvbuf,
 * rsyslog's imudp rcvbufSize); an owner with CAP_NET_ADMIN passes
 * net.core.rmem_max with SO_RCVBUFFORCE, so no host setting is asked.
 */
static void test_rcvbuf_known_servers(void **state)
{
	struct advice_input in = app_burst(53);
	struct advice_finding f[ADVICE_MAX];
	char *t;
	int n;

	(void)state;
	in.rmem_max = ADVICE_U64(212992);
	in.owner_comm = "unbound";
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "(Unbound sets it itself: so-rcvbuf: 690176 in the server: clause of unbound.conf, "
		   "from unbound.conf(5), so-rcvbuf)");
	ASSERT_HAS(t, "allow it first:");
	free(t);
	in.owner_net_admin = ADVICE_U64(1);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "it holds CAP_NET_ADMIN, so SO_RCVBUFFORCE (the same value) passes net.core.rmem_max "
		   "(now 212992 B (208 KiB)), as it asks when it can");
	ASSERT_LACKS(t, "allow it first:");
	free(t);
	in.owner_net_admin = ADVICE_U64(0);
	in.owner_comm = "rsyslogd";
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "(rsyslog sets it itself: rcvbufSize=\"690176\" on its imudp input");
	free(t);
	in.owner_comm = "myserver";
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_LACKS(t, "sets it itself");
	free(t);
	/* BIND asks with SO_RCVBUF alone (its ARM: values above the maximum
	 * are silently reduced): CAP_NET_ADMIN does not pass the cap for it */
	in.owner_comm = "named";
	in.owner_net_admin = ADVICE_U64(1);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "(BIND sets it itself: udp-receive-buffer 690176; in the options block of named.conf");
	ASSERT_HAS(t, "allow it first:");
	ASSERT_LACKS(t, "SO_RCVBUFFORCE (the same value) passes");
	free(t);
	/* the default buffer: BIND's own setting, with the cap raised first */
	in.rcvbuf = ADVICE_U64(212992);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "Or for BIND alone: udp-receive-buffer");
	ASSERT_HAS(t, "with net.core.rmem_max raised to it first: it asks with SO_RCVBUF alone");
	free(t);
	/* a server whose manual names no setting: the sysctl is the way */
	in.owner_comm = "dnsmasq";
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "dnsmasq has no setting of its own for it (dnsmasq(8) names none): this sysctl is the way.");
	ASSERT_LACKS(t, "Or for dnsmasq alone");
	free(t);
	in.rcvbuf = ADVICE_U64(8192);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "(dnsmasq has no setting for it that dnsmasq(8) names: this takes a change to its code)");
	free(t);
}

/*
 * A process's sockets on one port take one setting (unbound's so-rcvbuf
 * for all its threads): each gets the most any of them needs, and the
 * one whose own need is smaller says why; the largest states its own.
 */
static void test_rcvbuf_one_value_per_process_port(void **state)
{
	struct advice_input in = app_burst(53);
	struct advice_finding f[ADVICE_MAX];
	uint64_t own = advice__rcvbuf_need(&in);
	char *t;
	int n;

	(void)state;
	/* 8192 + 2 x 297 x ~2304, to pages: 1380352 (as test_rcvbuf_app_set) */
	assert_int_equal(own, 1380352);
	in.siblings = 2;
	in.sibling_need = 4 * own;
	assert_int_equal(advice__rcvbuf_need(&in), own); /* its own, always */
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	assert_int_equal(f[0].value, 2 * own); /* the request: half */
	ASSERT_HAS(t, "the most that any of its owner's 2 sockets on this port needs (one setting sizes them "
		   "all; this one alone needs 1380352 B (1.3 MiB))");
	free(t);
	char h[ADVICE_HINT];
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "SO_RCVBUF >= 2.7 MiB"); /* 2760704 B, rounded up */
	/* a smaller sibling: its own value */
	in.sibling_need = own / 2;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	assert_int_equal(f[0].value, own / 2);
	ASSERT_LACKS(t, "one setting sizes them all");
	free(t);
	/* no burst of its own: a sibling's sized need over the fallback */
	in.burst = (struct advice_u64){ false, 0 };
	in.sibling_need = 4 * own;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	assert_int_equal(f[0].value, 2 * own);
	ASSERT_HAS(t, "this one's own bursts are not known");
	free(t);
	/* alone (siblings 1): the sibling figure is not used */
	in.siblings = 1;
	n = advice__build(&in, f, ADVICE_MAX);
	assert_true(f[0].value != 2 * own);
}

static void test_rcvbuf_app_set(void **state)
{
	struct advice_input in = app_burst(5031);
	struct advice_finding f[ADVICE_MAX];
	int n;
	char *t;

	in.reads = ADVICE_U64(0);
	in.queued = in.queue_peak = in.queue_low = ADVICE_U64(6912);
	in.queue_looks = ADVICE_U64(7);
	in.intervals = ADVICE_U64(6);
	in.intervals_dropping = ADVICE_U64(1);
	n = advice__build(&in, f, ADVICE_MAX);
	assert_int_equal(n, 2);
	t = all(f, n);
	ASSERT_HAS(t, "the application set SO_RCVBUF, asking for about 4096 B");
	ASSERT_HAS(t, "net.core.rmem_max, 4194304 B (4.0 MiB)");
	ASSERT_HAS(t, "~2304 B per 1000 B datagram");
	ASSERT_HAS(t, "so 8192 B holds about 3 of them");
	/* 8192 x 8 / (297 / 0.502 x 8000) = 13.85 ms; x 1000/2304 = 6.01 ms */
	ASSERT_HAS(t, "at most 13.8 ms before the buffer was full: 8192 B x 8 / 4.73 Mbit/s, the worst interval's drop rate");
	ASSERT_HAS(t, "by truesize (~2304 B per datagram) it filled in about 6.01 ms");
	/* room for twice the burst: 8192 + 2 x 297 x 2304 = 1376768 -> 1380352
	 * (337 x 4 KiB), asked as half */
	ASSERT_HAS(t, "setsockopt(fd, SOL_SOCKET, SO_RCVBUF, 690176): the kernel doubles it to 1380352 B (1.3 MiB), "
		   "room for twice the worst interval's 297 datagrams (bursts vary) at ~2304 B each on top of today's 8192 B");
	assert_string_equal(f[0].setting, "SO_RCVBUF");
	assert_int_equal(f[0].value, 690176);
	ASSERT_HAS(t, "net.core.rmem_max (4194304 B (4.0 MiB)) already allows it");
	ASSERT_LACKS(t, "rmem_default=");
	ASSERT_HAS(t, "ss -uam 'sport = :5031' shows rb at the new size");
	ASSERT_HAS(t, "[rcvbuf] what: nothing read the socket while it dropped");
	ASSERT_HAS(t, "(UdpInDatagrams +0, netns-wide: no socket there read), and its queue held 6912 B (84%% of rcvbuf) at every one of 7 looks: it never drained");
	/* no events: the burst is per snapshot interval, and said so */
	ASSERT_HAS(t, "all of them in one 502 ms snapshot interval (592/s)");
	ASSERT_HAS(t, "The trace holds no per-drop events, so the burst is per snapshot interval (502 ms, record -i)");
	ASSERT_HAS(t, "It dropped in 1 of the 6 intervals between snapshots. ");
	/* the kernel's own count, unknown here: not stated */
	ASSERT_LACKS(t, "UdpRcvbufErrors +");
	free(t);

	/* known: stated, labelled netns-wide (it counts every socket there),
	 * last, after the socket's own figures */
	in.mib_rcvbuf_errors = ADVICE_U64(297);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "Netns-wide context (every socket in the namespace, not this one alone): "
		   "UdpRcvbufErrors +297. UdpInDatagrams +0.\n");
	free(t);
	in.mib_rcvbuf_errors.known = false;

	/* one look is no history: low == peak says nothing about draining */
	in.queue_looks = ADVICE_U64(1);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_LACKS(t, "never drained");
	ASSERT_HAS(t, "; queued at the end: 6912 B (84%% of rcvbuf)");
	free(t);
	in.queue_looks.known = false;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_LACKS(t, "never drained");
	free(t);

	/* events covering only some drops: still per interval, and why */
	in.event_drops = ADVICE_U64(25);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "Per-drop events cover only 25 of these drops");
	ASSERT_HAS(t, "it is per snapshot interval (502 ms, record -i)");
	free(t);

	/* events covering all: the most in any 100 ms window sizes the buffer */
	in.event_drops = ADVICE_U64(297);
	in.burst = ADVICE_U64(120);
	in.burst_s = 0.1;
	in.burst_window = true;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "at most 120 in one 100 ms window (per-drop events) (1200/s)");
	ASSERT_LACKS(t, "snapshot interval");
	/* 8192 + 2 x 120 x 2304 = 561152 (137 x 4 KiB) */
	ASSERT_HAS(t, "SO_RCVBUF, 280576): the kernel doubles it to 561152 B (548 KiB), room for twice the worst window's 120 datagrams");
	free(t);
}

/* Steady drops, or a burst no sane buffer holds: pace, not memory. */
static void test_rcvbuf_overload(void **state)
{
	struct advice_input in = sysctls(CAUSE_RCVBUF);
	struct advice_finding f[ADVICE_MAX];
	int n;
	char *t;

	in.drops = in.skbs = 600000;
	in.span_s = 600;
	in.avg_size = ADVICE_DBL(1000);
	in.rcvbuf = ADVICE_U64(212992);
	in.rmem_default = ADVICE_U64(212992);
	/* record -i 60: the worst interval holds 60,000 drops: 138 MB */
	in.burst = ADVICE_U64(60000);
	in.burst_s = 60;
	in.intervals = ADVICE_U64(10);
	in.intervals_dropping = ADVICE_U64(5);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "one for twice its worst burst would exceed 67108864 B (64 MiB): the sender is faster than the reader");
	/* 212992 + 2 x 60000 x 2304 = 276692992 */
	ASSERT_HAS(t, "rcvbuf + 2 x burst x truesize = 212992 B (208 KiB) + 2 x 60,000 x ~2304 B = about 276692992 B (264 MiB), above the 67108864 B (64 MiB)");
	ASSERT_HAS(t, "A bigger buffer would only postpone the drops");
	ASSERT_HAS(t, "Pace the sender below the rate the reader sustains");
	ASSERT_LACKS(t, "setsockopt(fd");
	ASSERT_LACKS(t, "rmem_default=");
	ASSERT_HAS(t, "shows rb unchanged");
	free(t);

	/* drops in 9 of 10 intervals, a small burst: still an overload */
	in.burst = ADVICE_U64(100);
	in.intervals_dropping = ADVICE_U64(9);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "the socket dropped in 9 of 10 intervals: the sender is faster than the reader, steadily");
	ASSERT_HAS(t, "It dropped in 9 of the 10 intervals between snapshots: a steady overload");
	ASSERT_HAS(t, "A bigger buffer would only postpone the drops");
	free(t);

	/* 7 of 10: a burst pattern, sized as before */
	in.intervals_dropping = ADVICE_U64(7);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "sysctl -w net.core.rmem_default=");
	ASSERT_LACKS(t, "steadily");
	free(t);
}

static void test_extreme_helpers(void **state)
{
	/* pow2_up past 2^63 used to spin for ever */
	uint64_t ts = advice__truesize_estimate(65535, 0, AF_INET);

	assert_true(ts > 65535 && ts < 200000);
	assert_true(advice__truesize_estimate(UINT64_MAX, 0, AF_INET) == ts);
	assert_true(advice__truesize_estimate(UINT64_MAX, 1500, AF_INET) ==
		    advice__truesize_estimate(65535, 1500, AF_INET));
	assert_true(advice__truesize_estimate(UINT64_MAX, UINT32_MAX, AF_INET6) > 0);
	assert_true(advice__truesize_estimate(0, 0, 0) > 0);
	assert_int_equal(advice__fragments(UINT64_MAX, 1500, AF_INET),
			 advice__fragments(65535, 1500, AF_INET));
	assert_int_equal(advice__fragments(UINT64_MAX, UINT32_MAX, AF_INET), 1);
	assert_true(advice__round_up(UINT64_MAX, 4096) == UINT64_MAX);
	assert_true(advice__round_up(UINT64_MAX - 5000, 4096) == UINT64_MAX - 4095);
	assert_true(advice__round_up(UINT64_MAX - 100, 4096) == UINT64_MAX);
	assert_true(advice__round_up(5, 0) == 5);
	assert_true(advice__sockbuf_effective(UINT64_MAX, UINT64_MAX, true) == UINT64_MAX);
	assert_true(advice__time_to_fill_ms(UINT64_MAX, NAN) == 0);
	assert_true(advice__ipid_wrap_s(NAN) == 0);
}

/* Every cause with every number at its most, at 0, and unknowable ones
 * (NaN, inf): findings come back, terminated, and nothing hangs. */
static void test_extreme_inputs(void **state)
{
	struct advice_finding f[ADVICE_MAX];
	const double odd[] = { NAN, INFINITY, -1, 0, 1e300, 18446744073709551616.0 };

	for (int c = 0; c < CAUSE_MAX; c++) {
		struct advice_input in = { .cause = c, .family = AF_INET6, .who = "x" };
		struct advice_u64 max = ADVICE_U64(UINT64_MAX);
		int n;

		/* all zeros but the drops */
		in.drops = 1;
		n = advice__build(&in, f, ADVICE_MAX);
		assert_true(n >= 1 && n <= ADVICE_MAX);

		in.port = max;
		in.sender_side = in.has_socket = true;
		in.drops = in.skbs = UINT64_MAX;
		in.span_s = 1e-300;
		in.burst = max;
		in.burst_s = 1e-300;
		in.event_drops = ADVICE_U64(UINT64_MAX - 1);
		in.intervals = in.intervals_dropping = max;
		in.reads = ADVICE_U64(0);
		in.rcvbuf = in.sndbuf = in.queued = in.queue_peak = in.queue_low = max;
		in.queue_looks = max;
		in.rmem_default = in.rmem_max = in.wmem_default = in.wmem_max = max;
		in.udp_mem[0] = in.udp_mem[1] = in.udp_mem[2] = max;
		in.page_size = max;
		in.netdev_max_backlog = in.ipfrag_time = in.ipfrag_high_thresh = max;
		in.ipfrag_max_dist = max;
		in.mtu = in.txqueuelen = max;
		in.ifname = "eth0";
		in.mib_rcvbuf_errors = in.mib_mem_errors = in.mib_sndbuf_errors = max;
		in.mib_no_ports = in.mib_csum_errors = in.mib_reasm_fails = max;
		in.mib_reasm_timeout = max;
		for (size_t i = 0; i < ARRAY_SIZE(odd); i++) {
			in.rate_dgps = in.rate_Bps = ADVICE_DBL(odd[i]);
			in.avg_size = in.truesize = ADVICE_DBL(odd[i]);
			n = advice__build(&in, f, ADVICE_MAX);
			assert_true(n >= 1 && n <= ADVICE_MAX);
			for (int k = 0; k < n; k++) {
				assert_true(memchr(f[k].evidence, 0, sizeof(f[k].evidence)) != NULL);
				assert_true(f[k].what[0] && f[k].change[0] && f[k].verify[0]);
			}
		}
		/* the same with the interface unknown and burst in a window */
		in.mtu.known = in.txqueuelen.known = false;
		in.ifname = NULL;
		in.burst_window = true;
		in.burst = ADVICE_U64(UINT64_MAX / 3);
		in.burst_s = 0;
		in.rcvbuf = ADVICE_U64(1);
		in.avg_size = ADVICE_DBL(65535);
		in.truesize.known = false;
		n = advice__build(&in, f, ADVICE_MAX);
		assert_true(n >= 1 && n <= ADVICE_MAX);
		/* zero drops, zero skbs: nothing to say */
		in.drops = in.skbs = 0;
		assert_int_equal(advice__build(&in, f, ADVICE_MAX), 0);
	}
}

static void test_rcvbuf_default_and_cap(void **state)
{
	struct advice_input in = sysctls(CAUSE_RCVBUF);
	struct advice_finding f[ADVICE_MAX];
	int n;
	char *t;

	in.drops = in.skbs = 20000;
	in.span_s = 10;
	in.burst = ADVICE_U64(4000);
	in.burst_s = 1;
	in.avg_size = ADVICE_DBL(1024);
	in.rate_dgps = ADVICE_DBL(10000);
	in.rate_Bps = ADVICE_DBL(10240000);
	in.rcvbuf = ADVICE_U64(212992);
	n = advice__build(&in, f, ADVICE_MAX);
	assert_int_equal(n, 1); /* reads unknown: no "not reading" finding */
	t = all(f, n);
	ASSERT_HAS(t, "which is net.core.rmem_default: the application did not set SO_RCVBUF");
	/* 212992 x 8 / 81.92 Mbit/s = 20.8 ms */
	ASSERT_HAS(t, "at most 20.8 ms before the buffer was full: 212992 B (208 KiB) x 8 / 81.9 Mbit/s, counting the payload only; by truesize (~2304 B per datagram) it filled in about 9.24 ms");
	/* 212992 + 2 x 4000 x 2304 = 18644992 (already a 4 KiB multiple) */
	ASSERT_HAS(t, "sysctl -w net.core.rmem_default=18644992: every new socket that sets no SO_RCVBUF gets "
		   "18644992 B (18 MiB), room for twice the worst interval's 4,000 datagrams (bursts vary)");
	ASSERT_LACKS(t, "SO_RCVBUF, ");
	assert_string_equal(f[0].setting, "net.core.rmem_default");
	assert_int_equal(f[0].value, 18644992);
	free(t);

	/* the app set one above what rmem_max allows */
	in.rcvbuf = ADVICE_U64(425984);
	in.rmem_max = ADVICE_U64(212992);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "asking for about 212992 B (208 KiB) (the kernel doubles the request after capping "
		   "it at net.core.rmem_max, 212992 B (208 KiB): it got the cap)");
	/* 425984 + 2 x 9216000 = 18857984 (4 KiB multiple); half 9428992 > rmem_max */
	ASSERT_HAS(t, "SO_RCVBUF, 9428992)");
	ASSERT_HAS(t, "allow it first: sysctl -w net.core.rmem_max=9428992 (now 212992 B (208 KiB)");
	free(t);
}

static void test_rcvbuf_large(void **state)
{
	struct advice_input in = sysctls(CAUSE_RCVBUF);
	struct advice_finding f[ADVICE_MAX];
	int n;
	char *t;

	in.drops = in.skbs = 5000;
	in.avg_size = ADVICE_DBL(1472);
	in.rcvbuf = ADVICE_U64(50331648);
	in.burst = ADVICE_U64(1000);
	in.burst_s = 1;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "already very large (50331648 B (48 MiB)) and still overflowed: the sender is faster");
	ASSERT_HAS(t, "A bigger buffer will not help");
	ASSERT_HAS(t, "that is above net.core.rmem_max, 4194304 B (4.0 MiB): set with SO_RCVBUFFORCE");
	ASSERT_LACKS(t, "setsockopt(fd");
	free(t);
}

/* No burst to size a buffer for: the seed's 8 MiB, the same size by
 * either alternative, after making a socket nobody reads read. */
static void test_rcvbuf_fallback(void **state)
{
	struct advice_input in = sysctls(CAUSE_RCVBUF);
	struct advice_finding f[ADVICE_MAX];
	char h[ADVICE_HINT];
	int n;
	char *t;

	in.port = ADVICE_U64(5031);
	in.drops = in.skbs = 50;
	in.avg_size = ADVICE_DBL(1000);
	in.rcvbuf = ADVICE_U64(8192); /* not rmem_default: the app set it */
	n = advice__build(&in, f, ADVICE_MAX);
	assert_int_equal(n, 1);
	t = all(f, n);
	ASSERT_HAS(t, "change: Have the application call setsockopt(fd, SOL_SOCKET, SO_RCVBUF, 4194304): the kernel "
		   "doubles it to 8388608 B (8.0 MiB), the usual starting point (Jones and Zhu, \"Considerations When Benchmarking UDP Bulk Flows\") (the worst burst's size in "
		   "bytes is not known, so the advice cannot size it); net.core.rmem_max (4194304 B (4.0 MiB)) "
		   "already allows it. Existing sockets keep their size");
	ASSERT_LACKS(t, "rmem_default=");
	ASSERT_LACKS(t, "16 MiB");
	assert_string_equal(f[0].setting, "SO_RCVBUF");
	assert_int_equal(f[0].value, 4194304);
	assert_int_equal(advice__sockbuf_effective(f[0].value, 4194304, true), ADVICE_FALLBACK_RCVBUF);
	free(t);
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "raise rcvbuf (8 MiB)");

	/* rmem_max below the request: raised to it first */
	in.rmem_max = ADVICE_U64(212992);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "; allow it first: sysctl -w net.core.rmem_max=4194304 (now 212992 B (208 KiB)");
	free(t);
	in.rmem_max = ADVICE_U64(4194304);

	/* whether it sets SO_RCVBUF unknown: both ways, the same 8 MiB */
	in.rmem_default.known = false;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "SO_RCVBUF, 4194304): the kernel doubles it to 8388608 B (8.0 MiB)");
	ASSERT_HAS(t, "Or, if it sets none: sysctl -w net.core.rmem_default=8388608: every new socket that sets no "
		   "SO_RCVBUF gets 8388608 B (8.0 MiB) (the same size: rmem_default is not doubled)");
	ASSERT_LACKS(t, "8388608)");
	free(t);

	/* the default buffer: rmem_default, 8 MiB as it is */
	in.rmem_default = ADVICE_U64(212992);
	in.rcvbuf = ADVICE_U64(212992);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "change: Run sysctl -w net.core.rmem_default=8388608: every new socket that sets no SO_RCVBUF "
		   "gets 8388608 B (8.0 MiB), the usual starting point (Jones and Zhu, \"Considerations When Benchmarking UDP Bulk Flows\")");
	ASSERT_LACKS(t, "setsockopt(fd");
	assert_string_equal(f[0].setting, "net.core.rmem_default");
	assert_int_equal(f[0].value, ADVICE_FALLBACK_RCVBUF);
	free(t);

	/* nobody reads it: that first, as the other branches say */
	in.reads = ADVICE_U64(0);
	n = advice__build(&in, f, ADVICE_MAX);
	assert_int_equal(n, 2);
	t = all(f, n);
	ASSERT_HAS(t, "change: First make the application read it (below); then run sysctl -w "
		   "net.core.rmem_default=8388608");
	ASSERT_HAS(t, "what: nothing read the socket while it dropped");
	free(t);
	in.rcvbuf = ADVICE_U64(8192);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "change: First make the application read it (below); then have the application call "
		   "setsockopt(fd, SOL_SOCKET, SO_RCVBUF, 4194304)");
	free(t);
	in.reads.known = false;

	/* already 8 MiB or more (not yet very large): a step up, to 16 MiB,
	 * never down to 8 */
	in.rcvbuf = ADVICE_U64(12u << 20);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "SO_RCVBUF, 8388608): the kernel doubles it to 16777216 B (16 MiB), a step up from today's");
	ASSERT_HAS(t, "allow it first: sysctl -w net.core.rmem_max=8388608");
	free(t);
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "raise rcvbuf (16 MiB)");

	/* today's buffer unknown: said so */
	in.rcvbuf.known = false;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "the usual starting point (Jones and Zhu, \"Considerations When Benchmarking UDP Bulk Flows\") (today's buffer is not known, so the advice cannot size it)");
	ASSERT_HAS(t, "SO_RCVBUF, 4194304)");
	ASSERT_HAS(t, "Or, if it sets none: sysctl -w net.core.rmem_default=8388608");
	free(t);
}

/* A hint's size, "1.3 MiB", in bytes. */
static double hint_bytes(const char *h)
{
	char unit[8] = "";
	double v = 0;

	assert_int_equal(sscanf(strstr(h, ">= ") + 3, "%lf %7s", &v, unit), 2);
	if (!strcmp(unit, "KiB"))
		return v * 1024;
	if (!strcmp(unit, "MiB"))
		return v * 1048576;
	assert_string_equal(unit, "B");
	return v;
}

/* The hint rounds up: it never shows less than the size advised (a
 * "SO_RCVBUF >= 1.2 MiB" for 1.24 MiB would advise too little), and at
 * most one printed step more. */
static void test_hint_rounds_up(void **state)
{
	struct advice_input in = sysctls(CAUSE_RCVBUF);
	struct advice_finding f[ADVICE_MAX];
	char h[ADVICE_HINT];

	in.drops = in.skbs = 300;
	in.avg_size = ADVICE_DBL(1000);
	in.rcvbuf = ADVICE_U64(8192);
	/* 8192 + 2 x 280 x 2304 = 1298432 (317 x 4 KiB): 1.238 MiB */
	in.burst = ADVICE_U64(280);
	in.burst_s = 0.5;
	in.rmem_default.known = false;
	assert_true(advice__build(&in, f, ADVICE_MAX) >= 1);
	assert_int_equal(f[0].value, 1298432 / 2);
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "rcvbuf >= 1.3 MiB");

	for (int set = -1; set <= 1; set++) {
		in.rmem_default = set < 0 ? (struct advice_u64){ false, 0 }
				  : ADVICE_U64(set ? 212992 : 8192);
		for (uint64_t b = 1; b <= 14000; b += 1 + b / 7) {
			double got, want, step;

			in.burst = ADVICE_U64(b);
			assert_true(advice__build(&in, f, ADVICE_MAX) >= 1);
			assert_true(f[0].has_value);
			advice__hint(&in, h, sizeof(h));
			assert_non_null(strstr(h, set < 0 ? "rcvbuf >= " : set ? "SO_RCVBUF >= " : "rmem_default >= "));
			/* the hint shows the kernel's size for rcvbuf (twice
			 * the request), the request for SO_RCVBUF */
			want = set < 0 ? 2.0 * f[0].value : (double)f[0].value;
			got = hint_bytes(h);
			step = got >= 10 * 1048576 ? 1048576 : got >= 1048576 ? 104857.6
			       : got >= 10 * 1024 ? 1024 : 102.4;
			if (got < want || got - want >= step + 0.5)
				fail_msg("burst %llu: hint \"%s\" for %.0f B", (unsigned long long)b, h, want);
		}
	}
}

/* Which intervals the text names: a recording's snapshots, top's
 * refreshes, doctor's sample intervals (its bursts are runs of them). */
static void test_interval_words(void **state)
{
	struct advice_input in = sysctls(CAUSE_RCVBUF);
	struct advice_finding f[ADVICE_MAX];
	char *t;
	int n;

	in.drops = in.skbs = 900;
	in.avg_size = ADVICE_DBL(1000);
	in.rcvbuf = ADVICE_U64(212992);
	in.burst = ADVICE_U64(100);
	in.burst_s = 1;
	in.intervals = ADVICE_U64(10);
	in.intervals_dropping = ADVICE_U64(9);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "the socket dropped in 9 of 10 intervals: the sender is faster");
	ASSERT_HAS(t, "It dropped in 9 of the 10 intervals between snapshots: a steady overload");
	free(t);

	in.live = true; /* top */
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "the socket dropped in 9 of 10 intervals: the sender is faster");
	ASSERT_HAS(t, "It dropped in 9 of the 10 intervals between refreshes: a steady overload");
	ASSERT_HAS(t, "one 1.00 s refresh interval");
	free(t);

	in.burst_episode = true; /* doctor: its sample ticks */
	in.burst_s = 0.4;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "the socket dropped in 9 of 10 intervals: the sender is faster");
	ASSERT_HAS(t, "It dropped in 9 of the 10 sample intervals: a steady overload");
	ASSERT_HAS(t, "one 400 ms run of sample intervals with drops");
	ASSERT_LACKS(t, "refresh");
	ASSERT_LACKS(t, "snapshot");
	free(t);

	in.intervals_dropping = ADVICE_U64(2);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "It dropped in 2 of the 10 sample intervals. ");
	ASSERT_HAS(t, "room for twice the worst burst's 100 datagrams (bursts vary)");
	ASSERT_LACKS(t, "refresh");
	free(t);
}

static void test_udp_mem(void **state)
{
	struct advice_input in = sysctls(CAUSE_UDP_MEM);
	struct advice_finding f[ADVICE_MAX];
	char *t;
	int n;

	in.drops = in.skbs = 12;
	in.mib_mem_errors = ADVICE_U64(12);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "net.ipv4.udp_mem = 575799 767732 1151598 pages (~4096 B pages: min 2358472704 B (2.2 GiB), "
		   "pressure 3144630272 B (2.9 GiB), max 4716945408 B (4.4 GiB)) (assuming 4 KiB pages)");
	ASSERT_HAS(t, "UdpMemErrors +12");
	ASSERT_HAS(t, "sysctl -w net.ipv4.udp_mem='575799 1535464 2303196'");
	free(t);
}

static void test_qdisc(void **state)
{
	struct advice_input in = sysctls(CAUSE_QDISC);
	struct advice_finding f[ADVICE_MAX];
	char *t;
	int n;

	in.sender_side = true;
	in.drops = in.skbs = 5294;
	in.avg_size = ADVICE_DBL(1024);
	in.txqueuelen = ADVICE_U64(100);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	/* 1024 x 100 = 102400 < wmem_default 212992: the send buffer defeats it */
	ASSERT_HAS(t, "(1024 B x 100 = 102400 B (100 KiB))");
	ASSERT_HAS(t, "212992 B (208 KiB) is above that.");
	ASSERT_HAS(t, "setsockopt(fd, SOL_SOCKET, SO_SNDBUF, 51200) (the kernel doubles it to 102400 B (100 KiB))");
	ASSERT_HAS(t, "sysctl -w net.core.wmem_default=102400");
	ASSERT_HAS(t, "tc -s qdisc show dev veth0");
	free(t);

	/* which qdisc uses txqueuelen: pfifo_fast/pfifo do, fq_codel does not */
	in.txqueuelen = ADVICE_U64(1000);
	in.wmem_default = ADVICE_U64(4096);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "for pfifo_fast or pfifo, which hold txqueuelen packets, ip link set dev veth0 txqueuelen 2000 (twice today's)");
	ASSERT_HAS(t, "fq_codel and fq ignore txqueuelen and have their own limit (fq_codel's default is 10240 packets): tc qdisc change dev veth0 root fq_codel limit 20480");
	ASSERT_LACKS(t, "pfifo_fast/fq_codel default");
	free(t);

	/* the interface not known: say so, and how to look */
	in.ifname = NULL;
	in.mtu.known = in.txqueuelen.known = false;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "The interface is not known (the namespace has several, or the trace lists none), so neither is its txqueuelen: ip -s link");
	ASSERT_HAS(t, "ip link set dev IF txqueuelen N (ip link show dev IF shows today's)");
	ASSERT_HAS(t, "tc qdisc change dev IF root fq_codel limit");
	ASSERT_LACKS(t, "message size x txqueuelen");
	free(t);
	in.wmem_default = ADVICE_U64(212992);
	in.ifname = "veth0";
	in.mtu = ADVICE_U64(1500);

	/* the demo: txqueuelen 1000 allows the default buffer: a shaper */
	in.txqueuelen = ADVICE_U64(1000);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "is below that.");
	/* the qdisc's limit is not known: likely, and what to check */
	ASSERT_HAS(t, "Likely the qdisc's own limit holds less than the send buffer allows, or a shaper is "
		   "slower than the sender: tc -s qdisc show dev veth0 shows which (its limit, rate and drops)");
	ASSERT_LACKS(t, "The queue that overflows is smaller");
	ASSERT_LACKS(t, "SO_SNDBUF, ");
	free(t);
}

static void test_frag(void **state)
{
	struct advice_input in = sysctls(CAUSE_FRAG_TIMEOUT);
	struct advice_finding f[ADVICE_MAX];
	char *t;
	int n;

	/* the demo: 4000 B datagrams, the last fragment of one in ten dropped */
	in.drops = 81;
	in.skbs = 162;
	in.span_s = 13;
	in.mib_reasm_fails = ADVICE_U64(81);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "MTU 1,500 on veth0: UDP payloads above 1472 B (MTU - 28) are fragmented");
	ASSERT_HAS(t, "Each lost datagram left ~2.0 fragments behind, so it had ~3 or more");
	ASSERT_HAS(t, "1 - (1 - p)^3 with ~3 fragments, 0.300%% at 0.1%% packet loss and 2.970%% at 1%%");
	ASSERT_HAS(t, "net.ipv4.ipfrag_time = 30 s");
	/* 4194304 / (3 x 2304) = 606.8 */
	ASSERT_HAS(t, "about 606 incomplete datagrams of 3 fragments");
	ASSERT_HAS(t, "above 2185 datagrams/s from one host to another (65536 / 30 s)");
	ASSERT_HAS(t, "send at most 1472 B per datagram");
	ASSERT_HAS(t, "IpReasmFails +81");
	ASSERT_LACKS(t, "not known");
	free(t);

	/* timeouts of datagrams counted as another cause's (their first
	 * fragment dropped here): the kernel's units, no drops, nothing to
	 * tune here, and no share of the drops (carries_drops false) */
	{
		struct advice_input u = in;

		u.drops = 0;
		u.units = 30;
		u.skbs = 90;
		n = advice__build(&u, f, ADVICE_MAX);
		assert_int_equal(n, 1);
		assert_true(f[0].secondary);
		t = all(f, n);
		ASSERT_HAS(t, "IP reassembly timed out for datagrams whose first fragment was dropped here "
			   "(each counted as that drop)");
		ASSERT_HAS(t, "30 reassembly failures (the kernel counts each: IpReasmFails, IpReasmTimeout), "
			   "90 fragment skbs freed with them");
		ASSERT_HAS(t, "Nothing to tune for these");
		ASSERT_LACKS(t, "GSO/GRO");
		free(t);
		/* some of each: the drops line says what the kernel counts more */
		u.drops = 10;
		u.units = 30;
		n = advice__build(&u, f, ADVICE_MAX);
		t = all(f, n);
		ASSERT_HAS(t, "10 datagrams (the kernel counts 30 failures: 20 of them are datagrams counted as "
			   "another cause's, their first fragment dropped here) dropped");
		ASSERT_LACKS(t, "GSO/GRO");
		free(t);
	}

	/* the interface not known: its MTU is not stated, but asked for */
	in.mtu.known = false;
	in.ifname = NULL;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "The interface is not known, so neither is its MTU: check it with ip link (UDP payloads above MTU - 28 B are fragmented)");
	ASSERT_HAS(t, "Each lost datagram left ~2.0 fragments behind, so it had ~3 or more");
	ASSERT_HAS(t, "send datagrams no larger than the path MTU - 28 B");
	free(t);
	in.mtu = ADVICE_U64(1500);
	in.ifname = "veth0";

	/* a known size and rate: the fragments and the IP ID wrap from them */
	in.cause = CAUSE_FRAG_TOO_FAR;
	in.avg_size = ADVICE_DBL(65507);
	in.rate_dgps = ADVICE_DBL(17555);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "1 - (1 - p)^45 with 45 fragments");
	ASSERT_HAS(t, "at 17555/s it wraps every 3.73 s: stale fragments can be joined");
	ASSERT_HAS(t, "sysctl -w net.ipv4.ipfrag_max_dist=128 (now 64");
	free(t);
}

static void test_others(void **state)
{
	struct advice_input in = sysctls(CAUSE_NO_SOCKET);
	struct advice_finding f[ADVICE_MAX];
	char *t;
	int n;

	in.drops = in.skbs = 292;
	in.port = ADVICE_U64(5003);
	in.who = "10.202.80.1 -> 10.202.80.2:5003";
	in.mib_no_ports = ADVICE_U64(292);
	n = advice__build(&in, f, ADVICE_MAX);
	assert_int_equal(n, 1);
	t = all(f, n);
	ASSERT_HAS(t, "what: nothing listens on port 5003");
	ASSERT_HAS(t, "ss -ulpn 'sport = :5003' must list it");
	ASSERT_HAS(t, "UdpNoPorts +292");
	free(t);

	/* the port unknown (doctor's counters only): no placeholder, and how
	 * to find the port */
	in.port.known = false;
	in.who = NULL;
	n = advice__build(&in, f, ADVICE_MAX);
	assert_int_equal(n, 1);
	t = all(f, n);
	ASSERT_HAS(t, "what: datagrams to ports nobody listens on\n");
	ASSERT_HAS(t, "UdpNoPorts +292 in the namespace. No socket was bound to their destination ports");
	ASSERT_HAS(t, "sudo udpdrop top lists the flows no socket took, by destination");
	ASSERT_HAS(t, "tcpdump -ni any 'icmp[icmptype] == 3 and icmp[icmpcode] == 3'");
	ASSERT_HAS(t, "verify: nstat -az UdpNoPorts Udp6NoPorts stays put, and udpdrop shows 0 no_socket drops.");
	ASSERT_LACKS(t, "PORT");
	ASSERT_LACKS(t, "port  ");
	ASSERT_LACKS(t, ":'");
	free(t);

	in = sysctls(CAUSE_CPU_BACKLOG);
	in.drops = in.skbs = 10;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "sysctl -w net.core.netdev_max_backlog=2000 (twice today's)");
	ASSERT_HAS(t, "/proc/net/softnet_stat");
	free(t);

	in = sysctls(CAUSE_NETFILTER);
	in.skbs = 19;
	n = advice__build(&in, f, ADVICE_MAX);
	assert_int_equal(n, 1);
	t = all(f, n);
	ASSERT_HAS(t, "19 fragments or skbs dropped (no whole datagram counted here");
	ASSERT_HAS(t, "nft list ruleset");
	free(t);

	for (int c = 0; c < CAUSE_MAX; c++) {
		in = (struct advice_input){ .cause = c, .drops = 1, .skbs = 1 };
		n = advice__build(&in, f, ADVICE_MAX);
		assert_true(n >= 1);
		for (int i = 0; i < n; i++) {
			assert_true(f[i].what[0] && f[i].evidence[0] && f[i].change[0] && f[i].verify[0]);
			assert_int_equal(f[i].cause, c);
		}
	}
	in = (struct advice_input){ .cause = CAUSE_RCVBUF };
	assert_int_equal(advice__build(&in, f, ADVICE_MAX), 0);
	in.drops = 1;
	assert_int_equal(advice__build(&in, f, 0), 0);
	assert_int_equal(advice__build(&in, f, 1), 1);
}

/* ---- where a sysctl applies ---- */

/* A container netns as doctor -N sees it on this kernel: the socket
 * buffers and udp_mem host-wide (read-only in it), ipfrag_* its own. */
static struct advice_where container_where(void)
{
	static const char *const host[] = { "net.core.rmem_default", "net.core.rmem_max",
					     "net.core.wmem_default", "net.core.netdev_max_backlog",
					     "net.ipv4.udp_mem" };
	struct advice_where w = { .self = false };

	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++) {
		snprintf(w.s[w.n].name, sizeof(w.s[w.n].name), "%s", host[i]);
		w.s[w.n++].scope = ADVICE_SCOPE_HOST;
	}
	w.s[w.n++] = (struct advice_sysctl_scope){ "net.ipv4.ipfrag_max_dist", ADVICE_SCOPE_NETNS, true };
	w.s[w.n++] = (struct advice_sysctl_scope){ "net.ipv4.ipfrag_time", ADVICE_SCOPE_NETNS, false };
	snprintf(w.enter, sizeof(w.enter), "ip netns exec blue ");
	snprintf(w.name, sizeof(w.name), "blue");
	snprintf(w.label, sizeof(w.label), "blue");
	return w;
}

static void test_sysctl_scope(void **state)
{
	struct advice_where w = container_where();
	char cmd[320], buf[1024] = "";
	bool on_host = true;

	/* not tested: the plain command, run here */
	assert_true(advice__sysctl_cmd(NULL, "net.core.rmem_max", "8388608", cmd, sizeof(cmd), &on_host));
	assert_string_equal(cmd, "sysctl -w net.core.rmem_max=8388608");
	assert_false(on_host);
	advice__sysctl_phrase(NULL, "net.core.rmem_max", "8388608", buf, sizeof(buf));
	assert_string_equal(buf, "sysctl -w net.core.rmem_max=8388608");
	assert_null(advice__scope_name(ADVICE_SCOPE_UNKNOWN));
	assert_string_equal(advice__scope_name(ADVICE_SCOPE_HOST), "host-wide");
	assert_string_equal(advice__scope_name(ADVICE_SCOPE_NETNS), "per-netns");

	/* host-wide from a container's netns: the host's command, run there
	 * (not ip netns exec, not nsenter -t 1 -n) */
	assert_true(advice__sysctl_cmd(&w, "net.core.rmem_max", "8388608", cmd, sizeof(cmd), &on_host));
	assert_string_equal(cmd, "sysctl -w net.core.rmem_max=8388608");
	assert_true(on_host);
	buf[0] = 0;
	advice__sysctl_phrase(&w, "net.core.rmem_max", "8388608", buf, sizeof(buf));
	assert_string_equal(buf, "on the host (net.core.rmem_max is host-wide: one value for every netns, "
			    "read-only in netns blue; no container can set it): sysctl -w "
			    "net.core.rmem_max=8388608");
	/* udp_mem's three values, quoted for the shell */
	assert_true(advice__sysctl_cmd(&w, "net.ipv4.udp_mem", "1 2 3", cmd, sizeof(cmd), &on_host));
	assert_string_equal(cmd, "sysctl -w net.ipv4.udp_mem='1 2 3'");

	/* per-netns, settable: run in that netns, or set by the runtime */
	assert_true(advice__sysctl_cmd(&w, "net.ipv4.ipfrag_max_dist", "128", cmd, sizeof(cmd), &on_host));
	assert_string_equal(cmd, "ip netns exec blue sysctl -w net.ipv4.ipfrag_max_dist=128");
	assert_false(on_host);
	buf[0] = 0;
	advice__sysctl_phrase(&w, "net.ipv4.ipfrag_max_dist", "128", buf, sizeof(buf));
	assert_string_equal(buf, "ip netns exec blue sysctl -w net.ipv4.ipfrag_max_dist=128 (per-netns: "
			    "netns blue only; for a container set it at its start: docker run --sysctl "
			    "net.ipv4.ipfrag_max_dist=128, or Kubernetes securityContext.sysctls (an "
			    "unsafe sysctl: the kubelet must allow it))");
	/* an unnamed netns: through its nsfs file */
	snprintf(w.enter, sizeof(w.enter), "nsenter --net=/proc/4242/ns/net ");
	w.name[0] = 0;
	assert_true(advice__sysctl_cmd(&w, "net.ipv4.ipfrag_max_dist", "128", cmd, sizeof(cmd), &on_host));
	assert_string_equal(cmd, "nsenter --net=/proc/4242/ns/net sysctl -w net.ipv4.ipfrag_max_dist=128");
	/* no safe way in: no command, and the text names the netns */
	w.enter[0] = 0;
	assert_false(advice__sysctl_cmd(&w, "net.ipv4.ipfrag_max_dist", "128", cmd, sizeof(cmd), &on_host));
	buf[0] = 0;
	advice__sysctl_phrase(&w, "net.ipv4.ipfrag_max_dist", "128", buf, sizeof(buf));
	ASSERT_HAS(buf, "in netns blue: sysctl -w net.ipv4.ipfrag_max_dist=128 (per-netns: that netns only");
	/* per-netns but read-only here: the runtime's option, no command */
	assert_false(advice__sysctl_cmd(&w, "net.ipv4.ipfrag_time", "5", cmd, sizeof(cmd), &on_host));
	buf[0] = 0;
	advice__sysctl_phrase(&w, "net.ipv4.ipfrag_time", "5", buf, sizeof(buf));
	ASSERT_HAS(buf, "read-only from here");
	ASSERT_HAS(buf, "docker run --sysctl net.ipv4.ipfrag_time=5");

	/* udpdrop's own netns, the initial one: host-wide ones writable there */
	w.self = true;
	w.s[1].settable = true;
	w.s[5].settable = true;
	assert_true(advice__sysctl_cmd(&w, "net.core.rmem_max", "8388608", cmd, sizeof(cmd), &on_host));
	assert_string_equal(cmd, "sysctl -w net.core.rmem_max=8388608");
	assert_false(on_host);
	buf[0] = 0;
	advice__sysctl_phrase(&w, "net.core.rmem_max", "8388608", buf, sizeof(buf));
	assert_string_equal(buf, "sysctl -w net.core.rmem_max=8388608 (host-wide: every netns gets it)");
	assert_true(advice__sysctl_cmd(&w, "net.ipv4.ipfrag_max_dist", "128", cmd, sizeof(cmd), &on_host));
	assert_string_equal(cmd, "sysctl -w net.ipv4.ipfrag_max_dist=128");
	buf[0] = 0;
	advice__sysctl_phrase(&w, "net.ipv4.ipfrag_max_dist", "128", buf, sizeof(buf));
	assert_string_equal(buf, "sysctl -w net.ipv4.ipfrag_max_dist=128 (per-netns: netns blue only)");
}

/* the probes decide the scope, never the name */
static void test_sysctl_scope_probes(void **state)
{
	/* writable in a fresh netns: every netns has its own */
	assert_int_equal(netcfg__scope(NETCFG_PROBE_WRITABLE, NETCFG_PROBE_WRITABLE, true), ADVICE_SCOPE_NETNS);
	assert_int_equal(netcfg__scope(NETCFG_PROBE_ABSENT, NETCFG_PROBE_WRITABLE, true), ADVICE_SCOPE_NETNS);
	/* read-only (6.x's socket buffers) or missing there: the host's */
	assert_int_equal(netcfg__scope(NETCFG_PROBE_READONLY, NETCFG_PROBE_READONLY, true), ADVICE_SCOPE_HOST);
	assert_int_equal(netcfg__scope(NETCFG_PROBE_WRITABLE, NETCFG_PROBE_READONLY, false), ADVICE_SCOPE_HOST);
	assert_int_equal(netcfg__scope(NETCFG_PROBE_ABSENT, NETCFG_PROBE_ABSENT, true), ADVICE_SCOPE_HOST);
	/* no fresh netns (no privileges): only a file missing from another
	 * netns says host-wide; anything else is not known */
	assert_int_equal(netcfg__scope(NETCFG_PROBE_ABSENT, NETCFG_PROBE_UNKNOWN, true), ADVICE_SCOPE_HOST);
	assert_int_equal(netcfg__scope(NETCFG_PROBE_ABSENT, NETCFG_PROBE_UNKNOWN, false), ADVICE_SCOPE_UNKNOWN);
	assert_int_equal(netcfg__scope(NETCFG_PROBE_READONLY, NETCFG_PROBE_UNKNOWN, true), ADVICE_SCOPE_UNKNOWN);
	assert_int_equal(netcfg__scope(NETCFG_PROBE_WRITABLE, NETCFG_PROBE_UNKNOWN, true), ADVICE_SCOPE_UNKNOWN);
}

/* the findings' commands follow the scope: rcvbuf at the default in a
 * container's netns, udp_mem, backlog, ipfrag_max_dist; a live view's
 * "record, then report" */
static void test_scope_in_findings(void **state)
{
	struct advice_where w = container_where();
	struct advice_input in = sysctls(CAUSE_RCVBUF);
	struct advice_finding f[ADVICE_MAX];
	int n;
	char *t;

	in.where = &w;
	in.drops = in.skbs = 20000;
	in.span_s = 10;
	in.burst = ADVICE_U64(4000);
	in.burst_s = 1;
	in.avg_size = ADVICE_DBL(1024);
	in.rcvbuf = ADVICE_U64(212992);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "Run on the host (net.core.rmem_default is host-wide: one value for every netns, "
		   "read-only in netns blue; no container can set it): sysctl -w "
		   "net.core.rmem_default=18644992: every new socket");
	ASSERT_HAS(t, "Or, per socket, with no host setting: setsockopt(fd, SOL_SOCKET, SO_RCVBUF, "
		   "9322496) (doubled to 18644992 B (18 MiB); capped at net.core.rmem_max, which is "
		   "lower), or SO_RCVBUFFORCE with CAP_NET_ADMIN past that cap.");
	assert_string_equal(f[0].setting, "net.core.rmem_default");
	assert_string_equal(f[0].setting_scope, "host-wide");
	assert_string_equal(f[0].setting_command, "sysctl -w net.core.rmem_default=18644992");
	assert_true(f[0].setting_on_host);
	free(t);

	/* the app set one above a host-wide rmem_max: SO_RCVBUFFORCE too */
	in.rcvbuf = ADVICE_U64(425984);
	in.rmem_max = ADVICE_U64(212992);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "allow it first: on the host (net.core.rmem_max is host-wide");
	ASSERT_HAS(t, "): sysctl -w net.core.rmem_max=9428992 (now 212992 B (208 KiB)");
	ASSERT_HAS(t, "SO_RCVBUFFORCE instead of SO_RCVBUF");
	assert_string_equal(f[0].setting, "SO_RCVBUF");
	assert_string_equal(f[0].setting_scope, "");
	assert_string_equal(f[0].setting_command, "");
	free(t);

	in = sysctls(CAUSE_UDP_MEM);
	in.where = &w;
	in.drops = in.skbs = 10;
	in.page_size = ADVICE_U64(4096);
	n = advice__build(&in, f, ADVICE_MAX);
	assert_string_equal(f[0].setting_command, "sysctl -w net.ipv4.udp_mem='575799 1535464 2303196'");
	assert_true(f[0].setting_on_host);
	ASSERT_HAS(f[0].change, "on the host (net.ipv4.udp_mem is host-wide");

	in = sysctls(CAUSE_CPU_BACKLOG);
	in.where = &w;
	in.drops = in.skbs = 10;
	n = advice__build(&in, f, ADVICE_MAX);
	assert_string_equal(f[0].setting_command, "sysctl -w net.core.netdev_max_backlog=2000");
	assert_string_equal(f[0].setting_scope, "host-wide");
	ASSERT_HAS(f[0].change, "on the host (net.core.netdev_max_backlog is host-wide");

	in = sysctls(CAUSE_FRAG_TOO_FAR);
	in.where = &w;
	in.drops = in.skbs = 10;
	n = advice__build(&in, f, ADVICE_MAX);
	assert_string_equal(f[0].setting_scope, "per-netns");
	assert_string_equal(f[0].setting_command, "ip netns exec blue sysctl -w net.ipv4.ipfrag_max_dist=128");
	assert_false(f[0].setting_on_host);
	ASSERT_HAS(f[0].change, "Tolerate more reordering: ip netns exec blue sysctl -w "
		   "net.ipv4.ipfrag_max_dist=128 (per-netns: netns blue only; for a container");

	/* live: no recording to report on; the record command for the netns */
	in = sysctls(CAUSE_NEIGH);
	in.where = &w;
	in.live = true;
	in.drops = in.skbs = 10;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "record the drops (udpdrop record -N blue -d 30), then udpdrop report --by reason");
	free(t);
	in.live = false;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "are in the report's per-socket detail (udpdrop report --by reason, --by location)");
	ASSERT_LACKS(t, "udpdrop record");
	free(t);
	in = sysctls(CAUSE_OTHER);
	in.live = true;
	in.drops = in.skbs = 10;
	n = advice__build(&in, f, ADVICE_MAX);
	ASSERT_HAS(f[0].change, "Start from the kernel reason and drop location: udpdrop record -d 30, "
		   "then udpdrop report --by reason");
}

/* A steady overload the way top, doctor and report see it: 256 B
 * datagrams into the default 208 KiB buffer, drops in every interval,
 * the queue full at every look, the reader taking 900/s. */
static struct advice_input steady(double span, uint64_t intervals)
{
	struct advice_input in = sysctls(CAUSE_RCVBUF);

	in.port = ADVICE_U64(6001);
	in.has_socket = true;
	in.span_s = span;
	in.drops = in.skbs = (uint64_t)(3000 * span);
	in.avg_size = ADVICE_DBL(256);
	in.rcvbuf = ADVICE_U64(212992);
	in.rmem_default = ADVICE_U64(212992);
	in.burst = ADVICE_U64((uint64_t)(3000 * span / intervals));
	in.burst_s = span / intervals;
	in.intervals = in.intervals_dropping = ADVICE_U64(intervals);
	in.queue_low = ADVICE_U64(211000);
	in.queue_peak = ADVICE_U64(212480);
	in.queue_looks = ADVICE_U64(intervals);
	in.queue_between_drops = true;
	in.delivered = ADVICE_U64((uint64_t)(900 * span));
	in.delivered_s = span;
	in.stalled_intervals = ADVICE_U64(0);
	in.reads = ADVICE_U64((uint64_t)(900 * span));
	in.mib_rcvbuf_errors = ADVICE_U64(in.drops);
	return in;
}

/* "what" with its digits dropped: the verdict's wording, not its numbers */
static void shape(char *out, size_t len, const char *what)
{
	size_t o = 0;

	for (; *what && o + 1 < len; what++)
		if (!(*what >= '0' && *what <= '9') && *what != '.')
			out[o++] = *what;
	out[o] = 0;
}

/* 3 s and 30 s (and 3 refreshes vs 30) of one steady load: one verdict,
 * one wording, each with its span; before, fewer than 4 intervals sized a
 * buffer and 4 or more said pace. */
static void test_verdict_sample_length(void **state)
{
	struct advice_finding f3[ADVICE_MAX], f30[ADVICE_MAX];
	struct advice_input a = steady(3, 3), b = steady(30, 30);
	char w3[ADVICE_WHAT], w30[ADVICE_WHAT], h3[ADVICE_HINT], h30[ADVICE_HINT];
	int n3, n30;

	(void)state;
	n3 = advice__build(&a, f3, ADVICE_MAX);
	n30 = advice__build(&b, f30, ADVICE_MAX);
	assert_int_equal(n3, 1);
	assert_int_equal(n30, 1);
	assert_string_equal(f3[0].verdict, "steady_overload");
	assert_string_equal(f30[0].verdict, "steady_overload");
	shape(w3, sizeof(w3), f3[0].what);
	shape(w30, sizeof(w30), f30[0].what);
	assert_string_equal(w3, w30);
	ASSERT_HAS(f3[0].what, "dropped in 3 of 3 intervals: the sender is faster than the reader, "
		   "steadily (sampled 3.00 s)");
	ASSERT_HAS(f30[0].what, "(sampled 30.0 s)");
	assert_true(f3[0].sampled_s == 3 && f30[0].sampled_s == 30);
	assert_string_equal(f3[0].setting, f30[0].setting);
	assert_int_equal(f3[0].value, f30[0].value);
	advice__hint(&a, h3, sizeof(h3));
	advice__hint(&b, h30, sizeof(h30));
	assert_string_equal(h3, h30);
	/* two intervals say too little: not yet a steady overload */
	a = steady(2, 2);
	n3 = advice__build(&a, f3, ADVICE_MAX);
	assert_string_equal(f3[0].verdict, "bursts");
}

/* A bursty sender: drops in every interval, but the queue seen drained
 * between them: bursts, sized by a buffer, not "steadily". */
static void test_verdict_bursty_sender(void **state)
{
	struct advice_finding f[ADVICE_MAX];
	struct advice_input in = steady(10, 10);
	char *t;
	int n;

	(void)state;
	in.queue_low = ADVICE_U64(0);
	in.burst = ADVICE_U64(120);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	assert_string_equal(f[0].verdict, "bursts");
	ASSERT_HAS(t, "what: bursts overflowed the socket's receive buffer: the reader caught up between "
		   "them (sampled 10.0 s)");
	ASSERT_HAS(t, "It dropped in 10 of the 10 intervals between snapshots, yet its queue drained between "
		   "them: a bursty sender, not a steady overload. ");
	ASSERT_HAS(t, "Its queue held as little as 0 B of its 212992 B (208 KiB) at one of 10 looks");
	ASSERT_LACKS(t, "steadily");
	assert_string_equal(f[0].setting, "net.core.rmem_default");
	free(t);
	/* a recording's looks (the quiet after the load among them) do not
	 * judge it */
	in.queue_between_drops = false;
	advice__build(&in, f, ADVICE_MAX);
	assert_string_equal(f[0].verdict, "steady_overload");
	in.queue_between_drops = true;
	/* one look is no history */
	in.queue_looks = ADVICE_U64(1);
	advice__build(&in, f, ADVICE_MAX);
	assert_string_equal(f[0].verdict, "steady_overload");
}

/* The same from a recording's per-drop events: drops in every snapshot
 * interval, but in 12 of the 100 100-ms windows of their stretch: a
 * bursty sender, sized as bursts; in 95 of them: steady. */
static void test_verdict_bursty_windows(void **state)
{
	struct advice_finding f[ADVICE_MAX];
	struct advice_input in = steady(10, 10);
	char *t;
	int n;

	(void)state;
	in.queue_between_drops = false; /* a recording's looks */
	in.burst_window = true;
	in.burst = ADVICE_U64(150);
	in.burst_s = 0.1;
	in.windows = ADVICE_U64(100);
	in.windows_dropping = ADVICE_U64(12);
	in.window_s = 0.1;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	assert_string_equal(f[0].verdict, "bursts");
	ASSERT_HAS(t, "It dropped in 10 of the 10 intervals between snapshots, yet in bursts (below): a bursty "
		   "sender, not a steady overload. ");
	ASSERT_HAS(t, "Its drops came in 12 of the 100 100 ms windows from its first drop to its last "
		   "(per-drop events)");
	ASSERT_LACKS(t, "steadily");
	free(t);
	in.windows_dropping = ADVICE_U64(95);
	advice__build(&in, f, ADVICE_MAX);
	assert_string_equal(f[0].verdict, "steady_overload");
	/* too few windows to say */
	in.windows = in.windows_dropping = ADVICE_U64(1);
	advice__build(&in, f, ADVICE_MAX);
	assert_string_equal(f[0].verdict, "steady_overload");
}

/* The one rule every view accumulates its intervals by: a reader that
 * took 90 in each of two intervals with drops, then stopped for two. */
static void test_track(void **state)
{
	struct advice_track t = { 0 };
	struct advice_input in;

	(void)state;
	advice__track(&t, 40, 1.0, false, 0);   /* first seen: deliveries unknown */
	advice__track(&t, 0, 1.0, true, 500);   /* no drops: nothing */
	advice__track(&t, 50, 1.0, true, 90);
	advice__track(&t, 70, 0.5, true, 90);
	advice__track(&t, 60, 1.0, true, 0);
	advice__track(&t, 60, 1.0, true, 0);
	memset(&in, 0, sizeof(in));
	advice__track_input(&in, &t, 6);
	assert_int_equal(in.intervals.v, 6);
	assert_int_equal(in.intervals_dropping.v, 5);
	assert_int_equal(in.burst.v, 70);
	assert_true(in.burst_s == 0.5);
	assert_true(in.delivered.known && in.delivered.v == 180);
	assert_true(in.delivered_s == 3.5);
	assert_true(in.stalled_intervals.known && in.stalled_intervals.v == 2);
	assert_true(in.stalled_s == 2.0);
	/* nothing measured: deliveries stay unknown (the netns decides) */
	t = (struct advice_track){ 0 };
	advice__track(&t, 40, 1.0, false, 0);
	memset(&in, 0, sizeof(in));
	advice__track_input(&in, &t, 1);
	assert_false(in.delivered.known);
	assert_false(in.stalled_intervals.known);
}

/* "Pace the sender" gives the rate: 90 % of what the reader drained. */
static void test_pace_rate(void **state)
{
	struct advice_finding f[ADVICE_MAX];
	struct advice_input in = steady(10, 10);
	char h[ADVICE_HINT], *t;
	int n;

	(void)state;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	/* 9000 delivered in 10 s: 900/s; 90 %: 810/s; x 256 B x 8 = 1.66 Mbit/s */
	ASSERT_HAS(t, "Its reader took 9,000 datagrams (its own deliveries) in the 10.0 s it dropped in: 900/s. ");
	ASSERT_HAS(t, "Pace the sender to at most 810 datagrams/s (1.66 Mbit/s of 256 B payloads), 90%% of "
		   "the 900/s its reader took while it dropped (udpdrop gen --pps 810 tests it)");
	assert_string_equal(f[0].setting, "sender_pps");
	assert_true(f[0].has_value);
	assert_int_equal(f[0].value, 810);
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "pace <= 810/s");
	free(t);
	/* deliveries unknown: no rate, and it says why */
	in.delivered.known = false;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	ASSERT_HAS(t, "Pace the sender below the rate the reader sustains (its deliveries are not known here");
	assert_false(f[0].has_value);
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "pace the sender");
	free(t);
}

/*
 * A group's receiver (multicast or broadcast): its sender is every
 * receiver's, so the same steady overload is never "pace the sender" for
 * it, no sender_pps, and the hint says so.
 */
static void test_group_member_never_paces(void **state)
{
	struct advice_finding f[ADVICE_MAX];
	struct advice_input in = steady(10, 10);
	char h[ADVICE_HINT], *t;
	int n;

	(void)state;
	in.group = true;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	assert_string_equal(f[0].verdict, "steady_overload");
	ASSERT_HAS(t, "This socket is one receiver of a multicast group (or of broadcasts): pacing the "
		   "sender would slow every receiver");
	ASSERT_LACKS(t, "Pace the sender");
	assert_false(f[0].has_value);
	assert_string_equal(f[0].setting, "");
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "member: read faster");
	free(t);
}

/* Not reading, from the socket's own deliveries: a stopped member of a
 * SO_REUSEPORT group while its siblings read (netns UdpInDatagrams grows);
 * and a slow reader in a netns where nothing else reads is not one. */
static void test_not_reading_per_socket(void **state)
{
	struct advice_finding f[ADVICE_MAX];
	struct advice_input in = steady(3, 15);
	char h[ADVICE_HINT], *t;
	int n;

	(void)state;
	in.burst_episode = true;
	/* the stopped member: nothing delivered, its siblings read 3000 */
	in.delivered = ADVICE_U64(0);
	in.reads = ADVICE_U64(3000);
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	assert_int_equal(n, 2);
	assert_string_equal(f[1].verdict, "not_reading");
	/* two diagnoses of the same drops: the first carries them (JSON carries_drops) */
	assert_false(f[0].secondary);
	assert_true(f[1].secondary);
	ASSERT_HAS(t, "what: nothing read the socket while it dropped (sampled 3.00 s)");
	ASSERT_HAS(t, "Nothing was delivered to it (its own deliveries, sock:sk_data_ready) in the intervals "
		   "it dropped in (3.00 s)");
	ASSERT_HAS(t, "Netns-wide context (every socket in the namespace, not this one): UdpInDatagrams +3,000.");
	/* no rate to pace a socket nobody reads to */
	ASSERT_LACKS(t, "at most 0 datagrams/s");
	advice__hint(&in, h, sizeof(h));
	assert_string_equal(h, "not reading");
	free(t);
	/* stopped mid-run: delivered before, none in its latest 2 intervals */
	in.delivered = ADVICE_U64(500);
	in.stalled_intervals = ADVICE_U64(2);
	in.stalled_s = 2.0;
	n = advice__build(&in, f, ADVICE_MAX);
	t = all(f, n);
	assert_int_equal(n, 2);
	ASSERT_HAS(t, "in its latest 2 intervals with drops (2.00 s): its reader stopped, 500 delivered before");
	free(t);
	/* the tail of a run: 2 short intervals (0.4 s) of no reads is no stop,
	 * in any view, whatever its interval */
	in.stalled_s = 0.4;
	n = advice__build(&in, f, ADVICE_MAX);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].verdict, "steady_overload");
	in.stalled_s = 2.0;
	/* a busy sibling: delivered, reading; the netns count does not matter */
	in.delivered = ADVICE_U64(2700);
	in.stalled_intervals = ADVICE_U64(1);
	in.reads = ADVICE_U64(0);
	n = advice__build(&in, f, ADVICE_MAX);
	assert_int_equal(n, 1);
	assert_string_equal(f[0].verdict, "steady_overload");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_to_fill_table),
		cmocka_unit_test(test_message_loss_table),
		cmocka_unit_test(test_fragments),
		cmocka_unit_test(test_sockbuf_effective),
		cmocka_unit_test(test_small_helpers),
		cmocka_unit_test(test_rcvbuf_app_set),
		cmocka_unit_test(test_rcvbuf_default_and_cap),
		cmocka_unit_test(test_rcvbuf_large),
		cmocka_unit_test(test_rcvbuf_overload),
		cmocka_unit_test(test_rcvbuf_fallback),
		cmocka_unit_test(test_hint_rounds_up),
		cmocka_unit_test(test_interval_words),
		cmocka_unit_test(test_extreme_helpers),
		cmocka_unit_test(test_extreme_inputs),
		cmocka_unit_test(test_udp_mem),
		cmocka_unit_test(test_qdisc),
		cmocka_unit_test(test_frag),
		cmocka_unit_test(test_others),
		cmocka_unit_test(test_sysctl_scope),
		cmocka_unit_test(test_sysctl_scope_probes),
		cmocka_unit_test(test_scope_in_findings),
		cmocka_unit_test(test_verdict_sample_length),
		cmocka_unit_test(test_verdict_bursty_sender),
		cmocka_unit_test(test_verdict_bursty_windows),
		cmocka_unit_test(test_track),
		cmocka_unit_test(test_pace_rate),
		cmocka_unit_test(test_group_member_never_paces),
		cmocka_unit_test(test_rcvbuf_known_servers),
		cmocka_unit_test(test_rcvbuf_one_value_per_process_port),
		cmocka_unit_test(test_not_reading_per_socket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
