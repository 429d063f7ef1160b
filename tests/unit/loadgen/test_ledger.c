// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for src/loadgen/ledger.c: the identity, what is unknown, printing, and the LEDGER message. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ledger.h"
#include "text_assert.h"

/*
 * Jones and Zhu's case: 1 KiB datagrams into a 212992-byte buffer with a
 * stalling reader, two flows. Flow 0: 5000 sent, 3 refused by the sender,
 * 4997 at the interface, 700 dropped for rcvbuf, 97 queued at the end.
 * Flow 1: 5000 sent, 2 lost on the wire, 4998 at the interface, 500
 * dropped, 0 queued, one datagram read twice (a duplicate: 4497 unique).
 */
static void fill(struct ledger *l)
{
	assert_int_equal(ledger__init(l, 2), 0);
	l->have_sent = l->have_sender = l->have_xdp = l->have_tracer = true;
	l->flows[0] = (struct ledger_flow){ .sent = 5000, .sender_drops = 3,
		.xdp_seen = 4997, .read = 4200, .unread = 97, .gap_lost = 703,
		.reordered = 4 };
	l->flows[1] = (struct ledger_flow){ .sent = 5000, .xdp_seen = 4998,
		.read = 4497, .gap_lost = 503, .duplicates = 1 };
	l->rcv_cause[CAUSE_RCVBUF] = 1200;
	l->rxq_ovfl = 1200;
	l->seconds = 5.25;
	for (uint64_t v = 1; v <= 1000; v++)
		hist__add(&l->latency, v * 1000);
	ledger__sum(l);
}

static void test_identity(void **state)
{
	struct ledger l;

	fill(&l);
	assert_int_equal(l.total.sent, 10000);
	assert_int_equal(l.total.read, 8697);
	assert_int_equal(ledger__rcv_drops(&l), 1200);
	assert_int_equal(ledger__lost_before_host(&l.total), 2);
	assert_int_equal(ledger__lost_before_host(&l.flows[0]), 0);
	assert_int_equal(ledger__unexplained(&l), 0);
	assert_int_equal(ledger__flow_unexplained(&l.flows[0]), 0);
	assert_int_equal(ledger__flow_unexplained(&l.flows[1]), 0);
	/* one drop the tracer did not see: shows as -1, not hidden */
	l.rcv_cause[CAUSE_RCVBUF]--;
	assert_int_equal(ledger__unexplained(&l), 1);
	/* a duplicate counted as a read shows: -1 in total, +1 in its flow */
	l.rcv_cause[CAUSE_RCVBUF]++;
	l.flows[1].read++;
	ledger__sum(&l);
	assert_int_equal(ledger__unexplained(&l), -1);
	assert_int_equal(ledger__flow_unexplained(&l.flows[1]), 1);
	ledger__free(&l);
}

/* without XDP the check falls back to sent, network loss included */
static void test_without_xdp(void **state)
{
	struct ledger l;

	fill(&l);
	l.have_xdp = false;
	/* the wire lost 3 of flow 1's datagrams: XDP saw 4,998 arrivals, one of
	 * them a copy (the duplicate), so 4,997 distinct ones */
	assert_int_equal(ledger__unexplained(&l), 3);
	l.have_sent = false;
	assert_int_equal(ledger__unexplained(&l), 0);
	ledger__free(&l);
}

static char *print(const struct ledger *l)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	ledger__print(f, l);
	fclose(f);
	return buf;
}

static void test_print(void **state)
{
	struct ledger l;
	char *out;

	fill(&l);
	out = print(&l);
	ASSERT_HAS(out, "  sent                               10,000  100.00 %%");
	ASSERT_HAS(out, "  lost before the host                    2    0.02 %%  sent - sender drops - seen by XDP");
	ASSERT_HAS(out, "  receiver kernel drops               1,200   12.00 %%");
	ASSERT_HAS(out, "    rcvbuf                            1,200");
	ASSERT_HAS(out, "  unexplained                             0    0.00 %%  every datagram accounted for");
	ASSERT_HAS(out, "reordered 4, duplicated 1");
	ASSERT_HAS(out, "XDP arrival -> read");
	ASSERT_HAS(out, "     1        5,000         0         2       500         0        4,497       503         0");
	free(out);
	/* unknowns print as '-' with the reason, never as 0 */
	l.have_xdp = l.have_tracer = l.have_sender = false;
	out = print(&l);
	ASSERT_HAS(out, "lost before the host                    -            not measured: run the sink with --xdp IFACE");
	ASSERT_HAS(out, "receiver kernel drops                   -            not measured");
	ASSERT_HAS(out, "includes network loss");
	ASSERT_LACKS(out, "XDP arrival");
	free(out);
	/* XDP but no sender counts: the difference is shown, with what it holds */
	l.have_xdp = true;
	out = print(&l);
	ASSERT_HAS(out, "lost before the host                    -            sent - seen by XDP = 5, sender drops included");
	ASSERT_HAS(out, "  * per flow, derived: seen by XDP - unread - read - duplicates");
	ASSERT_LACKS(out, "caveat");
	free(out);
	/* fragmented datagrams cut by the sender's qdisc: said, not hidden */
	l.have_sender = l.fragmented = true;
	assert_non_null(ledger__caveat(&l));
	out = print(&l);
	ASSERT_HAS(out, "  caveat: fragmented datagrams and sender drops");
	free(out);
	l.flows[0].sender_drops = 0;
	ledger__sum(&l);
	assert_null(ledger__caveat(&l));
	ledger__free(&l);
}

static void test_json(void **state)
{
	struct strbuf sb = {};
	struct json j;
	struct ledger l;

	fill(&l);
	l.have_sender = false;
	json_init(&j, &sb);
	json_obj_begin(&j);
	ledger__json(&j, &l);
	json_obj_end(&j);
	ASSERT_JQ(sb.buf, ".sent == 10000 and .sender_drops == null and .unexplained == 0");
	ASSERT_JQ(sb.buf, ".receiver_drops == 1200 and .receiver_drops_by_cause.rcvbuf == 1200");
	/* without the sender's counts, what was lost before the host is not
	 * known apart from the sender's drops: null, not a number */
	ASSERT_JQ(sb.buf, ".lost_before_host == null and .xdp_seen == 9995 and .read == 8697 and .unread == 97");
	ASSERT_JQ(sb.buf, ".flows | length == 2");
	ASSERT_JQ(sb.buf, ".flows[1].receiver_drops == 500 and .flows[1].lost_before_host == null");
	ASSERT_JQ(sb.buf, ".latency_ns.max == 1000000 and .latency_ns.samples == 1000");
	ASSERT_JQ(sb.buf, ".measured == {\"sent\":true,\"sender\":false,\"sender_tracer\":false,\"xdp\":true,\"tracer\":true}");
	sb_free(&sb);
	ledger__free(&l);
}

/*
 * The generator killed mid-run: XDP's side balances, but sent is unknown,
 * so the ledger must say it cannot be checked, not that every datagram is
 * accounted for; JSON: sent null, identity_checked false, and why.
 */
static void test_sent_unknown(void **state)
{
	struct strbuf sb = {};
	struct json j;
	struct ledger l;
	char *out;

	fill(&l);
	l.have_sent = l.have_sender = false;
	l.sent_unknown = "the generator's DONE with its counts never came (it was killed, or its control channel broke)";
	assert_int_equal(ledger__unexplained(&l), 0);
	out = print(&l);
	ASSERT_LACKS(out, "every datagram accounted for");
	ASSERT_HAS(out, "  sent                                    -            unknown: the generator's DONE with its counts never came");
	ASSERT_HAS(out, "  sender drops                            -            unknown: the generator's counts never came");
	ASSERT_HAS(out, "  unexplained                             0            of the datagrams XDP saw; sent is unknown: the ledger cannot be checked");
	free(out);
	json_init(&j, &sb);
	json_obj_begin(&j);
	ledger__json(&j, &l);
	json_obj_end(&j);
	ASSERT_JQ(sb.buf, ".sent == null and .identity_checked == false and .unexplained == 0");
	ASSERT_JQ(sb.buf, ".sent_unknown | startswith(\"the generator\") and contains(\"DONE\")");
	sb_free(&sb);
	/* no control channel, no closing datagram: the usual reason */
	l.sent_unknown = NULL;
	out = print(&l);
	ASSERT_HAS(out, "unknown: no control channel, and no flow's last datagram arrived");
	ASSERT_HAS(out, "unknown without the control channel");
	ASSERT_LACKS(out, "every datagram accounted for");
	free(out);
	/* known: checked, and said so */
	l.have_sent = true;
	json_init(&j, &sb);
	json_obj_begin(&j);
	ledger__json(&j, &l);
	json_obj_end(&j);
	ASSERT_JQ(sb.buf, ".identity_checked == true and .sent_unknown == null");
	sb_free(&sb);
	ledger__free(&l);
}

static void test_msg_round_trip(void **state)
{
	struct ledger l, back;
	struct ctl_msg m, parsed;
	char *line;

	fill(&l);
	l.snd_cause[CAUSE_QDISC] = 3;
	ctl_msg__init(&m, "LEDGER");
	ledger__to_msg(&l, &m);
	line = ctl_msg__format(&m);
	assert_int_equal(ctl_msg__parse(line, &parsed), 0);
	assert_int_equal(ledger__from_msg(&back, &parsed), 0);
	assert_int_equal(back.nflows, 2);
	assert_memory_equal(back.flows, l.flows, 2 * sizeof(*l.flows));
	assert_memory_equal(&back.total, &l.total, sizeof(l.total));
	assert_memory_equal(back.rcv_cause, l.rcv_cause, sizeof(l.rcv_cause));
	assert_memory_equal(back.snd_cause, l.snd_cause, sizeof(l.snd_cause));
	assert_memory_equal(&back.latency, &l.latency, sizeof(l.latency));
	assert_true(back.have_xdp && back.have_sent && !back.have_sender_tracer);
	assert_true(back.seconds == 5.25);
	ledger__free(&back);
	/* a missing flow field is an error, not a zero */
	ctl_msg__free(&parsed);
	assert_int_equal(ctl_msg__parse("UDPDROP1 LEDGER flows=1 have_sent=1 have_sender=1 have_sender_tracer=0 have_xdp=0 have_tracer=0 snd_errors=0 rxq_ovfl=0 latency_unknown=0 seconds=1 f0.sent=5 lat.count=0 lat.sum=0 lat.min=0 lat.max=0", &parsed), 0);
	assert_int_equal(ledger__from_msg(&back, &parsed), -EINVAL);
	ctl_msg__free(&parsed);
	/* absurd flow counts are refused before allocating */
	assert_int_equal(ctl_msg__parse("UDPDROP1 LEDGER flows=99999999999", &parsed), 0);
	assert_int_equal(ledger__from_msg(&back, &parsed), -EINVAL);
	ctl_msg__free(&parsed);
	free(line);
	ctl_msg__free(&m);
	ledger__free(&l);
}

/* the largest ledger gen and sink exchange: 1024 flows, every bucket */
static void test_msg_many_flows(void **state)
{
	struct ledger l, back;
	struct ctl_msg m, parsed;
	char *line;

	assert_int_equal(ledger__init(&l, 1024), 0);
	l.have_sent = l.have_sender = true;
	for (int i = 0; i < 1024; i++)
		l.flows[i] = (struct ledger_flow){ .sent = 1000 + i, .read = 900 + i, .gap_lost = 100 };
	for (unsigned int b = 0; b < HIST_BUCKETS; b++)
		l.latency.b[b] = b + 1;
	l.latency.count = 1;
	ctl_msg__init(&m, "LEDGER");
	ledger__to_msg(&l, &m);
	line = ctl_msg__format(&m);
	assert_true(strlen(line) < CTL_LINE_MAX);
	assert_int_equal(ctl_msg__parse(line, &parsed), 0);
	assert_int_equal(ledger__from_msg(&back, &parsed), 0);
	assert_int_equal(back.nflows, 1024);
	assert_memory_equal(back.flows, l.flows, 1024 * sizeof(*l.flows));
	assert_memory_equal(back.latency.b, l.latency.b, sizeof(l.latency.b));
	ledger__free(&back);
	ctl_msg__free(&parsed);
	free(line);
	ctl_msg__free(&m);
	ledger__free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_without_xdp),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_sent_unknown),
		cmocka_unit_test(test_msg_round_trip),
		cmocka_unit_test(test_msg_many_flows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
