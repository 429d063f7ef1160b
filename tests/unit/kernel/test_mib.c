// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for src/kernel/mib.c: parsing /proc/net/snmp and /proc/net/snmp6 text into counters. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <unistd.h>
#include "mib.h"

/* /proc/net/snmp as a 6.x kernel prints it, values made distinct. */
static const char snmp[] =
	"Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams InUnknownProtos InDiscards InDelivers OutRequests OutDiscards OutNoRoutes ReasmTimeout ReasmReqds ReasmOKs ReasmFails FragOKs FragFails FragCreates OutTransmits\n"
	"Ip: 2 64 721376 0 0 0 0 0 721376 720805 0 0 31 40 5 33 0 0 0 720805\n"
	"Icmp: InMsgs InErrors InCsumErrors InDestUnreachs InTimeExcds InParmProbs InSrcQuenchs InRedirects InEchos InEchoReps InTimestamps InTimestampReps InAddrMasks InAddrMaskReps OutMsgs OutErrors OutRateLimitGlobal OutRateLimitHost OutDestUnreachs OutTimeExcds OutParmProbs OutSrcQuenchs OutRedirects OutEchos OutEchoReps OutTimestamps OutTimestampReps OutAddrMasks OutAddrMaskReps\n"
	"Icmp: 121 0 0 121 0 0 0 0 0 0 0 0 0 0 120 0 0 0 120 0 0 0 0 0 0 0 0 0 0\n"
	"IcmpMsg: InType3 OutType3\n"
	"IcmpMsg: 121 120\n"
	"Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n"
	"Tcp: 1 200 120000 -1 16 2 0 0 0 1294 724 0 0 6 0\n"
	"Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n"
	"Udp: 51 120 719790 719962 719700 3 4 0 86\n"
	"UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n"
	"UdpLite: 9 1 8 2 6 0 2 0 0\n";

/* The head of /proc/net/snmp6: name, spaces and a tab, value. */
static const char snmp6[] =
	"Ip6InReceives                   \t1\n"
	"Ip6ReasmTimeout                 \t17\n"
	"Ip6ReasmReqds                   \t0\n"
	"Ip6ReasmFails                   \t19\n"
	"Icmp6InMsgs                     \t1\n"
	"Udp6InDatagrams                 \t1000\n"
	"Udp6NoPorts                     \t11\n"
	"Udp6InErrors                    \t14\n"
	"Udp6OutDatagrams                \t900\n"
	"Udp6RcvbufErrors  \t12\n"
	"Udp6SndbufErrors                \t2\n"
	"Udp6InCsumErrors                \t1\n"
	"Udp6IgnoredMulti                \t0\n"
	"Udp6MemErrors                   \t1\n"
	"UdpLite6InDatagrams             \t0\n"
	"UdpLite6RcvbufErrors            \t77\n";

static void check(const struct mib *m, enum mib_id id, uint64_t want)
{
	if (!m->present[id])
		fail_msg("%s not present", mib__name(id));
	if (m->v[id] != want)
		fail_msg("%s = %llu, want %llu", mib__name(id),
			 (unsigned long long)m->v[id], (unsigned long long)want);
}

static void check_absent(const struct mib *m, enum mib_id id)
{
	if (m->present[id])
		fail_msg("%s present (%llu), want absent", mib__name(id),
			 (unsigned long long)m->v[id]);
	assert_true(m->v[id] == 0);
}

static void test_snmp(void **state)
{
	struct mib m;

	memset(&m, 0, sizeof(m));
	mib__parse(&m, snmp);
	check(&m, MIB_UdpInDatagrams, 51);
	check(&m, MIB_UdpNoPorts, 120);
	check(&m, MIB_UdpInErrors, 719790);
	check(&m, MIB_UdpRcvbufErrors, 719700);
	check(&m, MIB_UdpSndbufErrors, 3);
	check(&m, MIB_UdpInCsumErrors, 4);
	check(&m, MIB_UdpMemErrors, 86);
	check(&m, MIB_UdpLiteRcvbufErrors, 6);
	check(&m, MIB_UdpLiteInCsumErrors, 2);
	check(&m, MIB_IpReasmTimeout, 31);
	check(&m, MIB_IpReasmFails, 33);
	/* snmp6's counters are not in this file */
	for (int i = MIB_Udp6InDatagrams; i <= MIB_Udp6SndbufErrors; i++)
		check_absent(&m, i);
	check_absent(&m, MIB_Ip6ReasmFails);
	check_absent(&m, MIB_Ip6ReasmTimeout);
}

static void test_snmp6(void **state)
{
	struct mib m;

	memset(&m, 0, sizeof(m));
	mib__parse(&m, snmp6);
	check(&m, MIB_Udp6InDatagrams, 1000);
	check(&m, MIB_Udp6NoPorts, 11);
	check(&m, MIB_Udp6InErrors, 14);
	check(&m, MIB_Udp6RcvbufErrors, 12);
	check(&m, MIB_Udp6SndbufErrors, 2);
	check(&m, MIB_Udp6InCsumErrors, 1);
	check(&m, MIB_Udp6MemErrors, 1);
	check(&m, MIB_Ip6ReasmTimeout, 17);
	check(&m, MIB_Ip6ReasmFails, 19);
	/* UdpLite6RcvbufErrors is not UdpLiteRcvbufErrors */
	check_absent(&m, MIB_UdpLiteRcvbufErrors);
	for (int i = MIB_UdpInDatagrams; i <= MIB_UdpSndbufErrors; i++)
		check_absent(&m, i);
}

static void test_single_snmp6_line(void **state)
{
	struct mib m;

	memset(&m, 0, sizeof(m));
	mib__parse(&m, "Udp6RcvbufErrors  \t12");  /* no trailing newline */
	check(&m, MIB_Udp6RcvbufErrors, 12);
	for (int i = 0; i < MIB_MAX; i++)
		if (i != MIB_Udp6RcvbufErrors)
			check_absent(&m, i);
}

static void test_both_files_accumulate(void **state)
{
	struct mib m;

	memset(&m, 0, sizeof(m));
	mib__parse(&m, snmp);
	mib__parse(&m, snmp6);
	check(&m, MIB_UdpRcvbufErrors, 719700);
	check(&m, MIB_Udp6RcvbufErrors, 12);
	check(&m, MIB_UdpLiteRcvbufErrors, 6);
	check(&m, MIB_Ip6ReasmFails, 19);
}

/* An older kernel: no MemErrors column, no UdpLite, no IgnoredMulti. */
static void test_missing_counter(void **state)
{
	static const char old[] =
		"Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors\n"
		"Udp: 10 20 30 40 50 60 70\n";
	struct mib m;

	memset(&m, 0, sizeof(m));
	mib__parse(&m, old);
	check(&m, MIB_UdpInDatagrams, 10);
	check(&m, MIB_UdpNoPorts, 20);
	check(&m, MIB_UdpInErrors, 30);
	check(&m, MIB_UdpRcvbufErrors, 50);
	check(&m, MIB_UdpSndbufErrors, 60);
	check(&m, MIB_UdpInCsumErrors, 70);
	check_absent(&m, MIB_UdpMemErrors);
	check_absent(&m, MIB_UdpLiteRcvbufErrors);
	check_absent(&m, MIB_UdpLiteInCsumErrors);
	check_absent(&m, MIB_IpReasmFails);
	check_absent(&m, MIB_Udp6RcvbufErrors);
}

/* A value line shorter than its header: the unmatched names stay absent. */
static void test_short_value_line(void **state)
{
	struct mib m;

	memset(&m, 0, sizeof(m));
	mib__parse(&m, "Udp: InDatagrams NoPorts InErrors\nUdp: 5 6\n");
	check(&m, MIB_UdpInDatagrams, 5);
	check(&m, MIB_UdpNoPorts, 6);
	check_absent(&m, MIB_UdpInErrors);
}

/* Pairs are header, values, header, values: a repeated prefix re-pairs. */
static void test_repeated_prefix(void **state)
{
	struct mib m;

	memset(&m, 0, sizeof(m));
	mib__parse(&m, "Udp: InDatagrams NoPorts\nUdp: 1 2\n"
		       "Udp: InDatagrams NoPorts\nUdp: 3 4\n");
	check(&m, MIB_UdpInDatagrams, 3);
	check(&m, MIB_UdpNoPorts, 4);
}

/*
 * Groups with none of udpdrop's counters are skipped whole, and the
 * header/value pairing goes on right after them.
 */
static void test_other_groups_skipped(void **state)
{
	struct mib m;

	memset(&m, 0, sizeof(m));
	mib__parse(&m, "TcpExt: RcvbufErrors ReasmFails\nTcpExt: 7 8\n"
		       "Udp: RcvbufErrors\nUdp: 9\n"
		       "Tcp: InErrs\nTcp: 3\n"
		       "IpExt: ReasmOverlaps\nIpExt: 4\n"
		       "Icmp6InMsgs 5\nIp6ReasmFails 6\nUdpLite6InErrors 2\n");
	check(&m, MIB_UdpRcvbufErrors, 9);
	check(&m, MIB_IpExtReasmOverlaps, 4);
	check(&m, MIB_Ip6ReasmFails, 6);
	check_absent(&m, MIB_IpReasmFails);
	check_absent(&m, MIB_UdpInErrors);
}

static void test_above_2_32(void **state)
{
	static const char big[] =
		"Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n"
		"Udp: 4294967296 0 5000000000 0 18446744073709551615 0 0 0 4294967295\n";
	struct mib m;

	memset(&m, 0, sizeof(m));
	mib__parse(&m, big);
	check(&m, MIB_UdpInDatagrams, 4294967296ull);
	check(&m, MIB_UdpInErrors, 5000000000ull);
	check(&m, MIB_UdpRcvbufErrors, 18446744073709551615ull);
	check(&m, MIB_UdpMemErrors, 4294967295ull);

	memset(&m, 0, sizeof(m));
	mib__parse(&m, "Udp6InDatagrams \t12345678901234\n"
		       "Udp6RcvbufErrors\t4294967297\n");
	check(&m, MIB_Udp6InDatagrams, 12345678901234ull);
	check(&m, MIB_Udp6RcvbufErrors, 4294967297ull);
}

static void test_empty_and_junk(void **state)
{
	struct mib m;

	memset(&m, 0, sizeof(m));
	mib__parse(&m, "");
	mib__parse(&m, "\n\n");
	mib__parse(&m, "Udp6RcvbufErrors\n");        /* no value */
	mib__parse(&m, "Udp6RcvbufErrors abc\n");    /* not a number */
	mib__parse(&m, "Udp: InDatagrams NoPorts\n"); /* header alone */
	for (int i = 0; i < MIB_MAX; i++)
		check_absent(&m, i);
}

static void test_names(void **state)
{
	assert_string_equal(mib__name(MIB_UdpInDatagrams), "UdpInDatagrams");
	assert_string_equal(mib__name(MIB_Udp6RcvbufErrors), "Udp6RcvbufErrors");
	assert_string_equal(mib__name(MIB_UdpLiteInCsumErrors),
			    "UdpLiteInCsumErrors");
	assert_string_equal(mib__name(MIB_Ip6ReasmTimeout), "Ip6ReasmTimeout");
	assert_string_equal(mib__name(MIB_MAX), "?");
	for (int i = 0; i < MIB_MAX; i++)
		for (int k = 0; k < i; k++)
			assert_string_not_equal(mib__name(i), mib__name(k));
}

/* The current netns, as any user may read it. */
static void test_read_here(void **state)
{
	struct mib m;

	memset(&m, 0xa5, sizeof(m));
	assert_int_equal(mib__read_here(&m), 0);
	assert_true(m.present[MIB_UdpInDatagrams]);
	assert_true(m.present[MIB_UdpRcvbufErrors]);
	assert_true(m.present[MIB_UdpNoPorts]);
	assert_true(m.present[MIB_IpReasmFails]);
	if (access("/proc/net/snmp6", R_OK) == 0) {
		assert_true(m.present[MIB_Udp6InDatagrams]);
		assert_true(m.present[MIB_Udp6RcvbufErrors]);
	}
	/* mib__read_here starts from zero: every flag is 0 or 1 */
	for (int i = 0; i < MIB_MAX; i++)
		assert_true(m.present[i] <= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snmp),
		cmocka_unit_test(test_snmp6),
		cmocka_unit_test(test_single_snmp6_line),
		cmocka_unit_test(test_both_files_accumulate),
		cmocka_unit_test(test_missing_counter),
		cmocka_unit_test(test_short_value_line),
		cmocka_unit_test(test_repeated_prefix),
		cmocka_unit_test(test_other_groups_skipped),
		cmocka_unit_test(test_above_2_32),
		cmocka_unit_test(test_empty_and_junk),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_read_here),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
