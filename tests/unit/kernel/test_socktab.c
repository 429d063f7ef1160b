// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for src/kernel/socktab.c: socktab__lookup's choice of receiving socket, on a hand-built table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "socktab.h"

#define NS1 4026531840u
#define NS2 4026532000u
#define PORT 5001
#define TCP_CLOSE_STATE 7 /* what sock_diag reports for UDP sockets */

static int setup(void **state)
{
	struct socktab *st = calloc(1, sizeof(*st));

	if (!st || socktab__init(st))
		return -1;
	*state = st;
	return 0;
}

static int teardown(void **state)
{
	socktab__free(*state);
	free(*state);
	return 0;
}

/* Parse a v4 or v6 address into 16 bytes (IPv4 in the first 4). */
static void addr(int family, const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	if (s)
		assert_int_equal(inet_pton(family, s, out), 1);
}

/*
 * Append a UDP socket: bound to local:lport, connected to peer:pport if
 * peer is non-NULL. Returns its index (pointers move on realloc).
 */
static int add_sock(struct socktab *st, uint64_t cookie, uint32_t netns,
		    int family, int proto, const char *local, uint16_t lport,
		    const char *peer, uint16_t pport)
{
	struct sock_info *si;

	if (st->n == st->cap) {
		int ncap = st->cap ? st->cap * 2 : 8;
		struct sock_info *nv = realloc(st->v, ncap * sizeof(*nv));

		assert_non_null(nv);
		st->v = nv;
		st->cap = ncap;
	}
	si = &st->v[st->n];
	memset(si, 0, sizeof(*si));
	si->cookie = cookie;
	si->inode = 1000 + cookie;
	si->netns = netns;
	si->family = family;
	si->proto = proto;
	si->state = TCP_CLOSE_STATE;
	addr(family, local, si->saddr);
	si->sport = lport;
	if (peer) {
		addr(family, peer, si->daddr);
		si->dport = pport;
	}
	return st->n++;
}

/* The cookie of the socket a datagram src -> dst:dport would reach; 0 if none. */
static uint64_t lookup(struct socktab *st, uint32_t netns, int family,
		       int proto, const char *src, const char *dst,
		       uint16_t dport)
{
	uint8_t s[16], d[16];
	struct sock_info *si;

	addr(family, src, s);
	addr(family, dst, d);
	si = socktab__lookup(st, netns, family, proto, src ? s : NULL, d, dport);
	if (!si)
		return 0;
	assert_true(si >= st->v && si < st->v + st->n);
	return si->cookie;
}

#define L4(st, src, dst) lookup(st, NS1, AF_INET, IPPROTO_UDP, src, dst, PORT)
#define L6(st, src, dst) lookup(st, NS1, AF_INET6, IPPROTO_UDP, src, dst, PORT)

static void test_empty_table(void **state)
{
	struct socktab *st = *state;

	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 0);
	assert_int_equal(L6(st, "fd00::9", "fd00::1"), 0);
}

static void test_wildcard_v4(void **state)
{
	struct socktab *st = *state;

	add_sock(st, 1, NS1, AF_INET, IPPROTO_UDP, NULL, PORT, NULL, 0);
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 1);
	assert_int_equal(L4(st, "192.168.1.1", "127.0.0.1"), 1);
	/* other port: nothing */
	assert_int_equal(lookup(st, NS1, AF_INET, IPPROTO_UDP, "10.0.0.9",
				"10.0.0.1", PORT + 1), 0);
	/* an AF_INET socket never takes IPv6 */
	assert_int_equal(L6(st, "fd00::9", "fd00::1"), 0);
}

static void test_bound_beats_wildcard(void **state)
{
	struct socktab *st = *state;

	/* in both orders, so the table order is not what decides */
	add_sock(st, 1, NS1, AF_INET, IPPROTO_UDP, NULL, PORT, NULL, 0);
	add_sock(st, 2, NS1, AF_INET, IPPROTO_UDP, "10.0.0.1", PORT, NULL, 0);
	add_sock(st, 3, NS1, AF_INET, IPPROTO_UDP, NULL, PORT, NULL, 0);
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 2);
	/* another local address: only the wildcard (the first one) */
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.2"), 1);
}

static void test_bound_other_address_never(void **state)
{
	struct socktab *st = *state;

	add_sock(st, 1, NS1, AF_INET, IPPROTO_UDP, "10.0.0.2", PORT, NULL, 0);
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 0);
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.2"), 1);
}

static void test_connected_beats_all(void **state)
{
	struct socktab *st = *state;

	add_sock(st, 1, NS1, AF_INET, IPPROTO_UDP, NULL, PORT, NULL, 0);
	add_sock(st, 2, NS1, AF_INET, IPPROTO_UDP, "10.0.0.1", PORT, NULL, 0);
	add_sock(st, 3, NS1, AF_INET, IPPROTO_UDP, "10.0.0.1", PORT,
		 "10.0.0.9", 7000);
	add_sock(st, 4, NS1, AF_INET6, IPPROTO_UDP, NULL, PORT, NULL, 0);
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 3);
	/* from another source the connected one is out: bound wins */
	assert_int_equal(L4(st, "10.0.0.8", "10.0.0.1"), 2);
}

static void test_connected_wildcard_beats_bound(void **state)
{
	struct socktab *st = *state;

	/* connected but bound to the wildcard: still the first choice */
	add_sock(st, 1, NS1, AF_INET, IPPROTO_UDP, "10.0.0.1", PORT, NULL, 0);
	add_sock(st, 2, NS1, AF_INET, IPPROTO_UDP, NULL, PORT, "10.0.0.9", 53);
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 2);
	assert_int_equal(L4(st, "10.0.0.7", "10.0.0.1"), 1);
}

static void test_connected_elsewhere_never(void **state)
{
	struct socktab *st = *state;

	add_sock(st, 1, NS1, AF_INET, IPPROTO_UDP, "10.0.0.1", PORT,
		 "10.0.0.8", 7000);
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 0);
	assert_int_equal(L4(st, "10.0.0.8", "10.0.0.1"), 1);

	add_sock(st, 2, NS1, AF_INET, IPPROTO_UDP, NULL, PORT, NULL, 0);
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 2);
	assert_int_equal(L4(st, "10.0.0.8", "10.0.0.1"), 1);
}

static void test_v6_wildcard_takes_v4(void **state)
{
	struct socktab *st = *state;

	add_sock(st, 1, NS1, AF_INET6, IPPROTO_UDP, NULL, PORT, NULL, 0);
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 1);
	assert_int_equal(L6(st, "fd00::9", "fd00::1"), 1);
	/* an AF_INET wildcard is preferred for IPv4 */
	add_sock(st, 2, NS1, AF_INET, IPPROTO_UDP, NULL, PORT, NULL, 0);
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 2);
	assert_int_equal(L6(st, "fd00::9", "fd00::1"), 1);
}

static void test_v4_mapped_bound(void **state)
{
	struct socktab *st = *state;

	add_sock(st, 1, NS1, AF_INET6, IPPROTO_UDP, NULL, PORT, NULL, 0);
	add_sock(st, 2, NS1, AF_INET, IPPROTO_UDP, NULL, PORT, NULL, 0);
	add_sock(st, 3, NS1, AF_INET6, IPPROTO_UDP, "::ffff:10.0.0.1", PORT,
		 NULL, 0);
	/* bound (mapped) beats both wildcards */
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 3);
	/* a mapped address of another host does not match */
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.2"), 2);
	/* a native AF_INET bind to the address beats the mapped one */
	add_sock(st, 4, NS1, AF_INET, IPPROTO_UDP, "10.0.0.1", PORT, NULL, 0);
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 4);
}

static void test_v6_bound_not_v4(void **state)
{
	struct socktab *st = *state;

	/* a real IPv6 address never takes IPv4; nor does ::ffff:other */
	add_sock(st, 1, NS1, AF_INET6, IPPROTO_UDP, "fd00::1", PORT, NULL, 0);
	add_sock(st, 2, NS1, AF_INET6, IPPROTO_UDP, "::ffff:10.0.0.2", PORT,
		 NULL, 0);
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 0);
	assert_int_equal(L6(st, "fd00::9", "fd00::1"), 1);
}

static void test_ipv6(void **state)
{
	struct socktab *st = *state;

	add_sock(st, 1, NS1, AF_INET6, IPPROTO_UDP, NULL, PORT, NULL, 0);
	add_sock(st, 2, NS1, AF_INET6, IPPROTO_UDP, "fd00::1", PORT, NULL, 0);
	add_sock(st, 3, NS1, AF_INET6, IPPROTO_UDP, "fd00::1", PORT,
		 "fd00::9", 9000);
	add_sock(st, 4, NS1, AF_INET6, IPPROTO_UDP, "fd00::1", PORT,
		 "fd00::8", 9000);
	assert_int_equal(L6(st, "fd00::9", "fd00::1"), 3);
	assert_int_equal(L6(st, "fd00::8", "fd00::1"), 4);
	assert_int_equal(L6(st, "fd00::7", "fd00::1"), 2);
	assert_int_equal(L6(st, "fd00::9", "fd00::2"), 1);
}

static void test_netns_and_proto(void **state)
{
	struct socktab *st = *state;

	add_sock(st, 1, NS2, AF_INET, IPPROTO_UDP, "10.0.0.1", PORT, NULL, 0);
	add_sock(st, 2, NS1, AF_INET, IPPROTO_UDPLITE, "10.0.0.1", PORT, NULL, 0);
	add_sock(st, 3, NS1, AF_INET, IPPROTO_TCP, NULL, PORT, NULL, 0);
	/* none of them is a UDP socket in NS1 */
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 0);
	assert_int_equal(lookup(st, NS2, AF_INET, IPPROTO_UDP, "10.0.0.9",
				"10.0.0.1", PORT), 1);
	assert_int_equal(lookup(st, NS1, AF_INET, IPPROTO_UDPLITE, "10.0.0.9",
				"10.0.0.1", PORT), 2);
	assert_int_equal(lookup(st, NS2, AF_INET, IPPROTO_UDPLITE, "10.0.0.9",
				"10.0.0.1", PORT), 0);
	/* and a better-scoring socket elsewhere does not steal it */
	add_sock(st, 4, NS1, AF_INET, IPPROTO_UDP, NULL, PORT, NULL, 0);
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 4);
	assert_int_equal(lookup(st, NS2, AF_INET, IPPROTO_UDP, "10.0.0.9",
				"10.0.0.1", PORT), 1);
}

/* A dual-stack socket connected to a v4-mapped peer receives from it. */
static void test_v6_connected_to_v4_peer(void **state)
{
	struct socktab *st = *state;

	add_sock(st, 1, NS1, AF_INET, IPPROTO_UDP, NULL, PORT, NULL, 0);
	add_sock(st, 2, NS1, AF_INET6, IPPROTO_UDP, NULL, PORT,
		 "::ffff:10.0.0.9", 7000);
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 2);
	/* from anyone else: the unconnected wildcard */
	assert_int_equal(L4(st, "10.0.0.8", "10.0.0.1"), 1);
}

static void test_lookup_ignores_hashes(void **state)
{
	struct socktab *st = *state;

	/* the by_cookie/by_inode maps stay empty: lookup scans st->v */
	add_sock(st, 42, NS1, AF_INET, IPPROTO_UDP, NULL, PORT, NULL, 0);
	assert_int_equal(st->by_cookie.n, 0);
	assert_null(socktab__by_cookie(st, 42));
	assert_int_equal(L4(st, "10.0.0.9", "10.0.0.1"), 42);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_empty_table),
		T(test_wildcard_v4),
		T(test_bound_beats_wildcard),
		T(test_bound_other_address_never),
		T(test_connected_beats_all),
		T(test_connected_wildcard_beats_bound),
		T(test_connected_elsewhere_never),
		T(test_v6_wildcard_takes_v4),
		T(test_v4_mapped_bound),
		T(test_v6_bound_not_v4),
		T(test_ipv6),
		T(test_netns_and_proto),
		T(test_v6_connected_to_v4_peer),
		T(test_lookup_ignores_hashes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
