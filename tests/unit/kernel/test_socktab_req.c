// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the pure parts of keeping the socket table (src/kernel/socktab.c):
 * the exact sock_diag request made from a socket, the port filter's
 * bytecode (checked with copies of the kernel's audit and interpreter),
 * parsing a reply, and removing sockets from the table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "socktab.h"

static void addr(int family, const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	if (s)
		assert_int_equal(inet_pton(family, s, out), 1);
}

/* ---- the exact request ------------------------------------------------ */

static void test_exact_req_v4(void **state)
{
	struct sock_info si = { .family = AF_INET, .proto = IPPROTO_UDP,
				.sport = 5001, .dport = 7000, .ifindex = 3,
				.cookie = 0x1122334455667788ull };
	struct socktab_req rq;
	uint8_t want[16];

	addr(AF_INET, "10.0.0.1", si.saddr);
	addr(AF_INET, "10.0.0.9", si.daddr);
	socktab__exact_req(&si, 42, &rq);
	assert_int_equal(rq.nlh.nlmsg_len, sizeof(rq));
	assert_int_equal(rq.nlh.nlmsg_type, SOCK_DIAG_BY_FAMILY);
	/* one socket, not a dump; no ack: the answer is the reply */
	assert_int_equal(rq.nlh.nlmsg_flags, NLM_F_REQUEST);
	assert_int_equal(rq.nlh.nlmsg_seq, 42);
	assert_int_equal(rq.r.sdiag_family, AF_INET);
	assert_int_equal(rq.r.sdiag_protocol, IPPROTO_UDP);
	/* only the memory info */
	assert_int_equal(rq.r.idiag_ext, 1 << (INET_DIAG_SKMEMINFO - 1));
	/* the kernel's lookup takes src as the remote end, dst as the local */
	assert_memory_equal(rq.r.id.idiag_src, si.daddr, 4);
	assert_int_equal(rq.r.id.idiag_sport, htons(7000));
	assert_memory_equal(rq.r.id.idiag_dst, si.saddr, 4);
	assert_int_equal(rq.r.id.idiag_dport, htons(5001));
	addr(AF_INET, NULL, want);
	assert_memory_equal((uint8_t *)rq.r.id.idiag_src + 4, want, 12);
	assert_int_equal(rq.r.id.idiag_if, 3);
	assert_int_equal(rq.r.id.idiag_cookie[0], 0x55667788u);
	assert_int_equal(rq.r.id.idiag_cookie[1], 0x11223344u);
}

static void test_exact_req_v6_unconnected(void **state)
{
	struct sock_info si = { .family = AF_INET6, .proto = IPPROTO_UDPLITE,
				.sport = 53, .cookie = 7 };
	struct socktab_req rq;
	uint8_t zero[16] = { 0 };

	addr(AF_INET6, "fd00::1", si.saddr);
	socktab__exact_req(&si, 0, &rq);
	assert_int_equal(rq.r.sdiag_family, AF_INET6);
	assert_int_equal(rq.r.sdiag_protocol, IPPROTO_UDPLITE);
	assert_memory_equal(rq.r.id.idiag_dst, si.saddr, 16);
	assert_int_equal(rq.r.id.idiag_dport, htons(53));
	/* any remote end */
	assert_memory_equal(rq.r.id.idiag_src, zero, 16);
	assert_int_equal(rq.r.id.idiag_sport, 0);
	assert_int_equal(rq.r.id.idiag_if, 0);
	assert_int_equal(rq.r.id.idiag_cookie[0], 7);
	assert_int_equal(rq.r.id.idiag_cookie[1], 0);
}

/* Requests go back to back in one sendmsg: each is one netlink message. */
static void test_exact_req_batch(void **state)
{
	struct socktab_req rq[3];
	struct sock_info si = { .family = AF_INET, .proto = IPPROTO_UDP };
	struct nlmsghdr *h = &rq[0].nlh;
	size_t len = sizeof(rq);
	int n = 0;

	for (int i = 0; i < 3; i++) {
		si.sport = 100 + i;
		socktab__exact_req(&si, i, &rq[i]);
	}
	for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len))
		assert_int_equal(h->nlmsg_seq, n++);
	assert_int_equal(n, 3);
	assert_int_equal(len, 0);
}

/* ---- the port filter -------------------------------------------------- */

/* net/ipv4/inet_diag.c's valid_cc: is cc (bytes left) on the yes chain? */
static int valid_cc(const char *bc, int len, int cc)
{
	while (len >= 0) {
		const struct inet_diag_bc_op *op = (const void *)bc;

		if (cc > len)
			return 0;
		if (cc == len)
			return 1;
		if (op->yes < 4 || op->yes & 3)
			return 0;
		len -= op->yes;
		bc += op->yes;
	}
	return 0;
}

/* inet_diag_bc_audit, for the ops the filter uses. */
static int bc_audit(const char *bytecode, int bytecode_len)
{
	const char *bc = bytecode;
	int len = bytecode_len;

	while (len > 0) {
		int min_len = sizeof(struct inet_diag_bc_op);
		const struct inet_diag_bc_op *op = (const void *)bc;

		switch (op->code) {
		case INET_DIAG_BC_S_EQ: /* valid_port_comparison */
			min_len += sizeof(struct inet_diag_bc_op);
			if (len < min_len)
				return -EINVAL;
			break;
		case INET_DIAG_BC_JMP:
			break;
		default:
			return -EINVAL;
		}
		if (op->no < min_len || op->no > len + 4 || op->no & 3)
			return -EINVAL;
		if (op->no < len && !valid_cc(bytecode, bytecode_len, len - op->no))
			return -EINVAL;
		if (op->yes < min_len || op->yes > len + 4 || op->yes & 3)
			return -EINVAL;
		bc += op->yes;
		len -= op->yes;
	}
	return len == 0 ? 0 : -EINVAL;
}

/* inet_diag_bc_run: is a socket on local port sport in? */
static int bc_run(const char *bc, int len, uint16_t sport)
{
	while (len > 0) {
		const struct inet_diag_bc_op *op = (const void *)bc;
		int yes = 1;

		switch (op->code) {
		case INET_DIAG_BC_JMP:
			yes = 0;
			break;
		case INET_DIAG_BC_S_EQ:
			yes = sport == op[1].no;
			break;
		default:
			fail_msg("op %d", op->code);
		}
		if (yes) {
			len -= op->yes;
			bc += op->yes;
		} else {
			len -= op->no;
			bc += op->no;
		}
	}
	return len == 0;
}

static void test_bc_ports(void **state)
{
	uint16_t ports[SOCKTAB_DUMP_PORTS];
	char bc[12 * SOCKTAB_DUMP_PORTS];

	for (int i = 0; i < SOCKTAB_DUMP_PORTS; i++)
		ports[i] = 1000 + 7 * i;
	for (int n = 1; n <= SOCKTAB_DUMP_PORTS; n++) {
		int len = socktab__bc_ports(ports, n, bc, sizeof(bc));

		assert_int_equal(len, 12 * n - 4);
		assert_int_equal(bc_audit(bc, len), 0);
		/* exactly the ports given pass, whatever their order */
		for (int p = 990; p < 1000 + 7 * SOCKTAB_DUMP_PORTS + 10; p++) {
			bool want = p >= 1000 && (p - 1000) % 7 == 0 && (p - 1000) / 7 < n;

			if (bc_run(bc, len, p) != want)
				fail_msg("n %d: port %d %s", n, p, want ? "rejected" : "accepted");
		}
	}
}

static void test_bc_ports_limits(void **state)
{
	uint16_t ports[2] = { 1, 2 };
	char bc[64];

	assert_int_equal(socktab__bc_ports(ports, 0, bc, sizeof(bc)), -ENOSPC);
	assert_int_equal(socktab__bc_ports(ports, 2, bc, 19), -ENOSPC);
	assert_int_equal(socktab__bc_ports(ports, 2, bc, 20), 20);
	/* port 0 and 65535 are ports like any other */
	ports[0] = 0;
	ports[1] = 65535;
	assert_int_equal(socktab__bc_ports(ports, 2, bc, sizeof(bc)), 20);
	assert_true(bc_run(bc, 20, 0));
	assert_true(bc_run(bc, 20, 65535));
	assert_false(bc_run(bc, 20, 1));
}

/* ---- parsing a reply -------------------------------------------------- */

static void test_parse(void **state)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_msg r;
		struct rtattr a;
		uint32_t mem[SK_MEMINFO_VARS];
	} msg;
	struct sock_info si;

	memset(&msg, 0, sizeof(msg));
	msg.h.nlmsg_len = sizeof(msg);
	msg.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	msg.r.idiag_family = AF_INET6;
	msg.r.idiag_state = 7;
	msg.r.id.idiag_sport = htons(5001);
	msg.r.id.idiag_dport = htons(7000);
	addr(AF_INET6, "fd00::1", (uint8_t *)msg.r.id.idiag_src);
	addr(AF_INET6, "fd00::9", (uint8_t *)msg.r.id.idiag_dst);
	msg.r.id.idiag_if = 4;
	msg.r.id.idiag_cookie[0] = 0x55667788u;
	msg.r.id.idiag_cookie[1] = 0x11223344u;
	msg.r.idiag_inode = 4242;
	msg.r.idiag_uid = 1000;
	msg.a.rta_type = INET_DIAG_SKMEMINFO;
	msg.a.rta_len = RTA_LENGTH(sizeof(msg.mem));
	msg.mem[SK_MEMINFO_RMEM_ALLOC] = 2304;
	msg.mem[SK_MEMINFO_RCVBUF] = 8192;
	msg.mem[SK_MEMINFO_WMEM_ALLOC] = 1;
	msg.mem[SK_MEMINFO_SNDBUF] = 212992;
	msg.mem[SK_MEMINFO_DROPS] = 17;

	memset(&si, 0xff, sizeof(si));
	si.npids = 2; /* owners are not the reply's business */
	assert_int_equal(socktab__parse(&msg.h, IPPROTO_UDP, 99, &si), 0);
	assert_int_equal(si.netns, 99);
	assert_int_equal(si.proto, IPPROTO_UDP);
	assert_int_equal(si.family, AF_INET6);
	assert_int_equal(si.state, 7);
	assert_int_equal(si.sport, 5001);
	assert_int_equal(si.dport, 7000);
	assert_memory_equal(si.saddr, msg.r.id.idiag_src, 16);
	assert_memory_equal(si.daddr, msg.r.id.idiag_dst, 16);
	assert_int_equal(si.ifindex, 4);
	assert_int_equal(si.cookie, 0x1122334455667788ull);
	assert_int_equal(si.inode, 4242);
	assert_int_equal(si.uid, 1000);
	assert_true(si.have_mem);
	assert_int_equal(si.rmem, 2304);
	assert_int_equal(si.rcvbuf, 8192);
	assert_int_equal(si.wmem, 1);
	assert_int_equal(si.sndbuf, 212992);
	assert_int_equal(si.drops, 17);
	assert_int_equal(si.npids, 2);

	/* no memory info: none claimed */
	msg.h.nlmsg_len = NLMSG_LENGTH(sizeof(msg.r));
	assert_int_equal(socktab__parse(&msg.h, IPPROTO_UDP, 99, &si), 0);
	assert_false(si.have_mem);
	/* too short to be a socket */
	msg.h.nlmsg_len = NLMSG_LENGTH(sizeof(msg.r) - 1);
	assert_int_equal(socktab__parse(&msg.h, IPPROTO_UDP, 99, &si), -EINVAL);
}

/* ---- removing sockets ------------------------------------------------- */

static void add(struct socktab *st, uint64_t cookie, uint32_t netns)
{
	struct sock_info *si;

	if (st->n == st->cap) {
		int ncap = st->cap ? st->cap * 2 : 4;
		struct sock_info *nv = realloc(st->v, ncap * sizeof(*nv));

		assert_non_null(nv);
		st->v = nv;
		st->cap = ncap;
	}
	si = &st->v[st->n++];
	memset(si, 0, sizeof(*si));
	si->cookie = cookie;
	si->inode = 1000 + cookie;
	si->netns = netns;
}

static bool in_netns_2(const struct sock_info *si, void *arg)
{
	(*(int *)arg)++;
	return si->netns == 2;
}

static bool never(const struct sock_info *si, void *arg)
{
	return false;
}

static void test_remove_if(void **state)
{
	struct socktab st;
	int calls = 0;
	uint32_t ino;

	assert_int_equal(socktab__init(&st), 0);
	for (int i = 1; i <= 6; i++)
		add(&st, i, i % 2 ? 1 : 2);
	socktab__remove_if(&st, in_netns_2, &calls);
	assert_int_equal(calls, 6);
	assert_int_equal(st.n, 3);
	/* the others, in their order, found by cookie and inode at their new places */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(st.v[i].cookie, 2 * i + 1);
		assert_ptr_equal(socktab__by_cookie(&st, 2 * i + 1), &st.v[i]);
		ino = 1000 + 2 * i + 1;
		assert_ptr_equal(socktab__by_inode(&st, ino), &st.v[i]);
		assert_null(socktab__by_cookie(&st, 2 * i + 2));
		ino = 1000 + 2 * i + 2;
		assert_null(socktab__by_inode(&st, ino));
	}
	socktab__remove_if(&st, never, NULL);
	assert_int_equal(st.n, 3);
	assert_ptr_equal(socktab__by_cookie(&st, 5), &st.v[2]);
	socktab__free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_req_v4),
		cmocka_unit_test(test_exact_req_v6_unconnected),
		cmocka_unit_test(test_exact_req_batch),
		cmocka_unit_test(test_bc_ports),
		cmocka_unit_test(test_bc_ports_limits),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_remove_if),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
