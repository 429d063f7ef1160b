// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for src/model/causes.c: kernel reason name -> user-facing cause, and the cause names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include "causes.h"
#include "udpdrop.h"
#include "util.h"

struct case_ {
	const char *reason;
	enum cause cause;
};

static void check_cases(const struct case_ *c, size_t n, uint32_t flags)
{
	for (size_t i = 0; i < n; i++) {
		enum cause got = cause__classify(c[i].reason, flags);

		if (got != c[i].cause)
			fail_msg("%s (flags 0x%x): got %s, want %s", c[i].reason,
				 flags, cause__name(got), cause__name(c[i].cause));
	}
}

/* Every exact-name rule in src/model/causes.c. */
static void test_exact_rules(void **state)
{
	static const struct case_ cases[] = {
		{ "SOCKET_RCVBUFF", CAUSE_RCVBUF },
		{ "PROTO_MEM", CAUSE_UDP_MEM },
		{ "NO_SOCKET", CAUSE_NO_SOCKET },
		{ "UDP_CSUM", CAUSE_CHECKSUM },
		{ "IP_CSUM", CAUSE_CHECKSUM },
		{ "SKB_CSUM", CAUSE_CHECKSUM },
		{ "TCP_CSUM", CAUSE_CHECKSUM },   /* not tc (TC_ prefix) */
		{ "ICMP_CSUM", CAUSE_CHECKSUM },
		{ "SOCKET_FILTER", CAUSE_SOCKET_FILTER },
		{ "NETFILTER_DROP", CAUSE_NETFILTER },
		{ "FRAG_REASM_TIMEOUT", CAUSE_FRAG_TIMEOUT },
		{ "FRAG_TOO_FAR", CAUSE_FRAG_TOO_FAR },
		{ "DUP_FRAG", CAUSE_FRAG_DUP },
		{ "CPU_BACKLOG", CAUSE_CPU_BACKLOG },
		{ "XDP", CAUSE_XDP },
		{ "NOMEM", CAUSE_NOMEM },
		{ "PFMEMALLOC", CAUSE_NOMEM },
		{ "SKB_UCOPY_FAULT", CAUSE_NOMEM },
		{ "PKT_TOO_SMALL", CAUSE_HEADER },
		{ "PKT_TOO_BIG", CAUSE_HEADER },
		{ "IP_INHDR", CAUSE_HEADER },     /* not route (IP_IN prefix) */
		{ "HDR_TRUNC", CAUSE_HEADER },
		{ "INVALID_PROTO", CAUSE_HEADER },
		{ "IPV6_BAD_EXTHDR", CAUSE_HEADER },
		{ "UNHANDLED_PROTO", CAUSE_HEADER },
		{ "OTHERHOST", CAUSE_ROUTE },
		{ "IP_RPFILTER", CAUSE_ROUTE },
		{ "IP_NOPROTO", CAUSE_ROUTE },
		{ "UNICAST_IN_L2_MULTICAST", CAUSE_ROUTE },
		{ "IPV6DISABLED", CAUSE_ROUTE },
		{ "IP_OUTNOROUTES", CAUSE_ROUTE },
		{ "SOCKET_CLOSE", CAUSE_SOCKET_CLOSE },
		{ "QUEUE_PURGE", CAUSE_SOCKET_CLOSE },
		{ "BPF_CGROUP_EGRESS", CAUSE_CGROUP_BPF },
	};

	check_cases(cases, ARRAY_SIZE(cases), 0);
}

/* Every prefix rule, with the kernel's current members of each family. */
static void test_prefix_rules(void **state)
{
	static const struct case_ cases[] = {
		{ "QDISC_DROP", CAUSE_QDISC },
		{ "QDISC_OVERLIMIT", CAUSE_QDISC },
		{ "QDISC_CONGESTED", CAUSE_QDISC },
		{ "FQ_FLOW_LIMIT", CAUSE_QDISC },
		{ "FQ_BAND_LIMIT", CAUSE_QDISC },
		{ "FQ_HORIZON_LIMIT", CAUSE_QDISC },
		{ "CAKE_FLOOD", CAUSE_QDISC },
		{ "DUALPI2_STEP_DROP", CAUSE_QDISC },
		{ "TC_INGRESS", CAUSE_TC },
		{ "TC_EGRESS", CAUSE_TC },
		{ "TC_COOKIE_ERROR", CAUSE_TC },
		{ "TC_CHAIN_NOTFOUND", CAUSE_TC },
		{ "TC_RECLASSIFY_LOOP", CAUSE_TC },
		{ "IP_INADDRERRORS", CAUSE_ROUTE },
		{ "IP_INNOROUTES", CAUSE_ROUTE },
		{ "IP_LOCAL_SOURCE", CAUSE_ROUTE },
		{ "IP_LOCALNET", CAUSE_ROUTE },
		{ "IP_INVALID_SOURCE", CAUSE_ROUTE },
		{ "IP_INVALID_DEST", CAUSE_ROUTE },
		{ "NEIGH_QUEUEFULL", CAUSE_NEIGH },
		{ "NEIGH_FAILED", CAUSE_NEIGH },
		{ "NEIGH_CREATEFAIL", CAUSE_NEIGH },
		{ "NEIGH_DEAD", CAUSE_NEIGH },
		{ "NEIGH_HH_FILLFAIL", CAUSE_NEIGH },
		{ "VXLAN_VNI_NOT_FOUND", CAUSE_TUNNEL },
		{ "VXLAN_INVALID_HDR", CAUSE_TUNNEL },
		{ "VXLAN_NO_REMOTE", CAUSE_TUNNEL },
		{ "IP_TUNNEL_ECN", CAUSE_TUNNEL },
		{ "TUNNEL_TXINFO", CAUSE_TUNNEL },
	};

	check_cases(cases, ARRAY_SIZE(cases), 0);
}

/* Names that look close to a rule but are not covered by it. */
static void test_near_misses(void **state)
{
	static const struct case_ cases[] = {
		{ "TCP_FLAGS", CAUSE_OTHER },        /* TCP_ is not TC_ */
		{ "TCP_OFO_DROP", CAUSE_OTHER },
		{ "SOCKET_BACKLOG", CAUSE_OTHER },
		{ "SOCKET_RCVBUF", CAUSE_OTHER },    /* exact rules are exact */
		{ "SOCKET_RCVBUFF_X", CAUSE_OTHER },
		{ "XDP_FOO", CAUSE_OTHER },
		{ "socket_rcvbuff", CAUSE_OTHER },   /* case matters */
		{ "qdisc_drop", CAUSE_OTHER },
		{ "QDISC", CAUSE_OTHER },            /* prefix needs the _ */
		{ "NEIGH", CAUSE_OTHER },
		{ "IP_OUTFOO", CAUSE_OTHER },
		{ "XFRM_POLICY", CAUSE_OTHER },
		{ "SECURITY_HOOK", CAUSE_OTHER },
		{ "IPV6_NDISC_FRAG", CAUSE_OTHER },
		{ "SKB_CONSUMED", CAUSE_OTHER },
		{ "NOT_SPECIFIED", CAUSE_OTHER },
		{ "VXLAN", CAUSE_OTHER },            /* prefix needs the _ */
		{ "MAC_INVALID_SOURCE", CAUSE_OTHER },
	};

	check_cases(cases, ARRAY_SIZE(cases), 0);
}

static void test_unknown_is_other(void **state)
{
	assert_int_equal(cause__classify("SOMETHING_NEW", 0), CAUSE_OTHER);
	assert_int_equal(cause__classify("REASON_999", 0), CAUSE_OTHER);
	assert_int_equal(cause__classify("REASON_0", 0), CAUSE_OTHER);
	assert_int_equal(cause__classify("", 0), CAUSE_OTHER);
	/* flags unrelated to the udp_fail tracepoint do not change it */
	assert_int_equal(cause__classify("SOMETHING_NEW",
					 UD_KEY_SOCK | UD_KEY_RX_SK |
					 UD_KEY_FRAG | UD_KEY_CHILD),
			 CAUSE_OTHER);
}

static void test_fail_flags(void **state)
{
	/* Kernels without reasons: the udp_fail tracepoint's rc decides. */
	assert_int_equal(cause__classify("NOT_SPECIFIED", UD_KEY_FAIL_RCVBUF),
			 CAUSE_RCVBUF);
	assert_int_equal(cause__classify("NOT_SPECIFIED", UD_KEY_FAIL_MEM),
			 CAUSE_UDP_MEM);
	assert_int_equal(cause__classify("NOT_SPECIFIED",
					 UD_KEY_FAIL_RCVBUF | UD_KEY_SOCK |
					 UD_KEY_RX_SK),
			 CAUSE_RCVBUF);
	assert_int_equal(cause__classify("NOT_SPECIFIED",
					 UD_KEY_FAIL_MEM | UD_KEY_SOCK),
			 CAUSE_UDP_MEM);
	assert_int_equal(cause__classify("NOT_SPECIFIED", UD_KEY_SOCK),
			 CAUSE_OTHER);
	assert_int_equal(cause__classify("REASON_999", UD_KEY_FAIL_MEM),
			 CAUSE_UDP_MEM);
	/* a named reason wins over the flags */
	assert_int_equal(cause__classify("NO_SOCKET", UD_KEY_FAIL_RCVBUF),
			 CAUSE_NO_SOCKET);
	assert_int_equal(cause__classify("SOCKET_RCVBUFF", UD_KEY_FAIL_MEM),
			 CAUSE_RCVBUF);
	assert_int_equal(cause__classify("PROTO_MEM", UD_KEY_FAIL_RCVBUF),
			 CAUSE_UDP_MEM);
}

static void test_name_round_trip(void **state)
{
	for (int c = 0; c < CAUSE_MAX; c++) {
		const char *name = cause__name(c);

		assert_non_null(name);
		assert_int_equal(cause__from_name(name), c);
	}
}

static void test_names_lowercase_unique(void **state)
{
	for (int c = 0; c < CAUSE_MAX; c++) {
		const char *name = cause__name(c);

		assert_true(strlen(name) > 0);
		for (const char *p = name; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') ||
			      (*p >= '0' && *p <= '9') || *p == '_'))
				fail_msg("cause %d name \"%s\": bad char '%c'",
					 c, name, *p);
		for (int d = 0; d < c; d++)
			assert_string_not_equal(name, cause__name(d));
	}
}

/* The names are a contract (add, never rename): pin them. */
static void test_names_pinned(void **state)
{
	static const char *want[CAUSE_MAX] = {
		[CAUSE_RCVBUF] = "rcvbuf",
		[CAUSE_UDP_MEM] = "udp_mem",
		[CAUSE_NO_SOCKET] = "no_socket",
		[CAUSE_CHECKSUM] = "checksum",
		[CAUSE_SOCKET_FILTER] = "socket_filter",
		[CAUSE_NETFILTER] = "netfilter",
		[CAUSE_FRAG_TIMEOUT] = "frag_timeout",
		[CAUSE_FRAG_TOO_FAR] = "frag_too_far",
		[CAUSE_FRAG_DUP] = "frag_dup",
		[CAUSE_QDISC] = "qdisc",
		[CAUSE_CPU_BACKLOG] = "cpu_backlog",
		[CAUSE_XDP] = "xdp",
		[CAUSE_TC] = "tc",
		[CAUSE_NOMEM] = "nomem",
		[CAUSE_HEADER] = "header",
		[CAUSE_ROUTE] = "route",
		[CAUSE_NEIGH] = "neigh",
		[CAUSE_SOCKET_CLOSE] = "socket_close",
		[CAUSE_CGROUP_BPF] = "cgroup_bpf",
		[CAUSE_OTHER] = "other",
		[CAUSE_TUNNEL] = "tunnel",
		[CAUSE_MCAST_UNWANTED] = "mcast_unwanted",
		[CAUSE_MCAST_UNJOINED] = "mcast_unjoined",
	};

	for (int c = 0; c < CAUSE_MAX; c++) {
		assert_non_null(want[c]);
		assert_string_equal(cause__name(c), want[c]);
	}
}

static void test_from_name_unknown(void **state)
{
	assert_int_equal(cause__from_name("nope"), -1);
	assert_int_equal(cause__from_name(""), -1);
	assert_int_equal(cause__from_name("RCVBUF"), -1);
	assert_int_equal(cause__from_name("rcvbuf "), -1);
	assert_int_equal(cause__from_name("SOCKET_RCVBUFF"), -1);
}

static void test_out_of_range(void **state)
{
	assert_string_equal(cause__name(CAUSE_MAX), "other");
	assert_string_equal(cause__name((enum cause)1000), "other");
	assert_string_equal(cause__describe(CAUSE_MAX),
			    cause__describe(CAUSE_OTHER));
}

static void test_descriptions(void **state)
{
	for (int c = 0; c < CAUSE_MAX; c++) {
		const char *d = cause__describe(c);

		assert_non_null(d);
		if (strlen(d) < 10)
			fail_msg("cause %s: description \"%s\" too short",
				 cause__name(c), d);
		assert_null(strchr(d, '\n'));
	}
	/* distinct causes, distinct descriptions */
	for (int c = 0; c < CAUSE_MAX; c++)
		for (int d = 0; d < c; d++)
			assert_string_not_equal(cause__describe(c),
						cause__describe(d));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_rules),
		cmocka_unit_test(test_prefix_rules),
		cmocka_unit_test(test_near_misses),
		cmocka_unit_test(test_unknown_is_other),
		cmocka_unit_test(test_fail_flags),
		cmocka_unit_test(test_name_round_trip),
		cmocka_unit_test(test_names_lowercase_unique),
		cmocka_unit_test(test_names_pinned),
		cmocka_unit_test(test_from_name_unknown),
		cmocka_unit_test(test_out_of_range),
		cmocka_unit_test(test_descriptions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
