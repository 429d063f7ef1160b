// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* socktab__dump against the real kernel: our own UDP and TCP sockets, via sock_diag. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "netns.h"
#include "socktab.h"

/* A socket bound to 127.0.0.1 on a kernel-chosen port; returns the fd. */
static int bound(int type, uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, type, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static void check_dump(int type, int proto, uint8_t want_state)
{
	struct netns_table nt;
	struct socktab st;
	struct sock_info *si;
	struct stat sb;
	uint16_t port;
	int fd = bound(type, &port), rcvbuf = 0;
	socklen_t len = sizeof(rcvbuf);

	if (type == SOCK_STREAM)
		assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len), 0);
	assert_int_equal(netns__scan(&nt), 0);
	assert_int_equal(socktab__init(&st), 0);
	assert_int_equal(socktab__dump(&st, &nt, nt.self, proto), 0);

	si = socktab__by_inode(&st, sb.st_ino);
	assert_non_null(si);
	assert_int_equal(si->proto, proto);
	assert_int_equal(si->family, AF_INET);
	assert_int_equal(si->sport, port);
	assert_int_equal(si->state, want_state);
	assert_int_equal(si->netns, nt.self);
	assert_true(si->cookie != 0);
	assert_ptr_equal(socktab__by_cookie(&st, si->cookie), si);
	assert_true(si->have_mem);
	assert_int_equal(si->rcvbuf, rcvbuf);
	assert_int_equal(si->drops, 0);
	/* the loopback address as bound */
	assert_int_equal(memcmp(si->saddr, &(uint32_t){ htonl(INADDR_LOOPBACK) }, 4), 0);

	socktab__free(&st);
	netns__free(&nt);
	close(fd);
}

static void test_dump_udp(void **state) { check_dump(SOCK_DGRAM, IPPROTO_UDP, 7 /* TCP_CLOSE */); }
static void test_dump_tcp(void **state) { check_dump(SOCK_STREAM, IPPROTO_TCP, 10 /* TCP_LISTEN */); }

/* A socket closed before the dump is not in it. */
static void test_closed_not_dumped(void **state)
{
	struct netns_table nt;
	struct socktab st;
	struct stat sb;
	uint16_t port;
	int fd = bound(SOCK_DGRAM, &port);

	assert_int_equal(fstat(fd, &sb), 0);
	close(fd);
	assert_int_equal(netns__scan(&nt), 0);
	assert_int_equal(socktab__init(&st), 0);
	assert_int_equal(socktab__dump(&st, &nt, nt.self, IPPROTO_UDP), 0);
	assert_null(socktab__by_inode(&st, sb.st_ino));
	socktab__free(&st);
	netns__free(&nt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_udp),
		cmocka_unit_test(test_dump_tcp),
		cmocka_unit_test(test_closed_not_dumped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
