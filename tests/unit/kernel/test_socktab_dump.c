// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * socktab against the real kernel, on our own sockets: dumps (whole and
 * by port) and exact requests via sock_diag, owners via /proc.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* A UDP socket on 127.0.0.1:port (0: any), SO_REUSEPORT if asked. */
static int udp_on(uint16_t *port, bool reuseport)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(*port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0), one = 1;

	assert_true(fd >= 0);
	if (reuseport)
		assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static uint32_t inode_of_fd(int fd)
{
	struct stat sb;

	assert_int_equal(fstat(fd, &sb), 0);
	return sb.st_ino;
}

/* The table index of the socket on fd (dumped). */
static int index_of(struct socktab *st, int fd)
{
	struct sock_info *si = socktab__by_inode(st, inode_of_fd(fd));

	assert_non_null(si);
	return si - st->v;
}

static void send_to(uint16_t port, int n)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(sendto(fd, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)), 1);
	close(fd);
}

/*
 * Exact requests: an unbound-remote socket, a connected one and an IPv6
 * one answer as themselves with fresh memory info; a closed one does not.
 * More sockets than one batch: the batches add up.
 */
static void test_refresh(void **state)
{
	enum { N = SOCKTAB_BATCH + 5 };
	struct netns_table nt;
	struct socktab st;
	int fds[N], idx[N + 2];
	bool found[N + 2];
	uint16_t ports[N];
	int conn, v6, n = 0;
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };

	for (int i = 0; i < N; i++) {
		ports[i] = 0;
		fds[i] = udp_on(&ports[i], false);
	}
	/* connected to the first one's port */
	uint16_t cport = 0;

	conn = udp_on(&cport, false);
	struct sockaddr_in peer = { .sin_family = AF_INET, .sin_port = htons(ports[0]),
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	assert_int_equal(connect(conn, (struct sockaddr *)&peer, sizeof(peer)), 0);
	v6 = socket(AF_INET6, SOCK_DGRAM, 0);
	assert_true(v6 >= 0);
	if (bind(v6, (struct sockaddr *)&a6, sizeof(a6))) {
		close(v6); /* no IPv6 here */
		v6 = -1;
	}

	assert_int_equal(netns__scan(&nt), 0);
	assert_int_equal(socktab__init(&st), 0);
	assert_int_equal(socktab__dump(&st, &nt, nt.self, IPPROTO_UDP), 0);
	for (int i = 0; i < N; i++) {
		idx[n++] = index_of(&st, fds[i]);
		assert_int_equal(st.v[idx[i]].rmem, 0);
	}
	idx[n++] = index_of(&st, conn);
	assert_int_not_equal(st.v[idx[N]].dport, 0);
	if (v6 >= 0)
		idx[n++] = index_of(&st, v6);

	/* something queued on two of them: the refresh sees it */
	send_to(ports[3], 2);
	send_to(ports[N - 1], 1);
	assert_int_equal(socktab__refresh(&st, &nt, nt.self, idx, n, found), 0);
	for (int i = 0; i < n; i++)
		if (!found[i])
			fail_msg("socket %d of %d not found", i, n);
	assert_true(st.v[idx[3]].rmem > 0);
	assert_true(st.v[idx[N - 1]].rmem > 0);
	assert_int_equal(st.v[idx[4]].rmem, 0);
	assert_true(st.v[idx[3]].have_mem);

	/* closed: no answer as itself */
	close(fds[5]);
	fds[5] = -1;
	assert_int_equal(socktab__refresh(&st, &nt, nt.self, idx, n, found), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(found[i], i != 5);

	socktab__free(&st);
	netns__free(&nt);
	for (int i = 0; i < N; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	close(conn);
	if (v6 >= 0)
		close(v6);
}

/* The sockets on some ports, and only those, filtered in the kernel. */
static void test_dump_ports(void **state)
{
	struct netns_table nt;
	struct socktab st;
	uint16_t p[3] = { 0, 0, 0 }, want[2];
	int fds[3];

	for (int i = 0; i < 3; i++)
		fds[i] = udp_on(&p[i], false);
	want[0] = p[0];
	want[1] = p[2];
	assert_int_equal(netns__scan(&nt), 0);
	assert_int_equal(socktab__init(&st), 0);
	assert_int_equal(socktab__dump_ports(&st, &nt, nt.self, IPPROTO_UDP, want, 2), 0);
	assert_non_null(socktab__by_inode(&st, inode_of_fd(fds[0])));
	assert_null(socktab__by_inode(&st, inode_of_fd(fds[1])));
	assert_non_null(socktab__by_inode(&st, inode_of_fd(fds[2])));
	for (int i = 0; i < st.n; i++)
		assert_true(st.v[i].sport == p[0] || st.v[i].sport == p[2]);
	assert_int_equal(socktab__dump_ports(&st, &nt, nt.self, IPPROTO_UDP, want,
					     SOCKTAB_DUMP_PORTS + 1), -EINVAL);
	socktab__free(&st);
	netns__free(&nt);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
}

/*
 * SO_REUSEPORT: an exact request finds one socket of the group, whatever
 * the cookie asks; the dump of the port has them all.
 */
static void test_reuseport(void **state)
{
	struct netns_table nt;
	struct socktab st;
	uint16_t port = 0;
	int a = udp_on(&port, true), b = udp_on(&port, true), idx[2];
	bool found[2];

	assert_int_equal(netns__scan(&nt), 0);
	assert_int_equal(socktab__init(&st), 0);
	assert_int_equal(socktab__dump_ports(&st, &nt, nt.self, IPPROTO_UDP, &port, 1), 0);
	assert_int_equal(st.n, 2);
	idx[0] = index_of(&st, a);
	idx[1] = index_of(&st, b);
	assert_int_equal(socktab__refresh(&st, &nt, nt.self, idx, 2, found), 0);
	/* never the wrong socket's answer under another's name */
	assert_true(found[0] || found[1]);
	socktab__free(&st);
	netns__free(&nt);
	close(a);
	close(b);
}

/* want[] for the socket on fd alone. */
static void want_fd(struct socktab *st, bool *want, int fd)
{
	memset(want, 0, (st->n + 1) * sizeof(*want));
	want[index_of(st, fd)] = true;
}

static char *self_comm(char *buf, size_t len)
{
	FILE *c = fopen("/proc/self/comm", "r");

	assert_non_null(c);
	assert_non_null(fgets(buf, len, c));
	buf[strcspn(buf, "\n")] = '\0';
	fclose(c);
	return buf;
}

/*
 * Owners: found by the walk (pid, fd, comm), then kept up by the cheaper
 * check: the fd moved within the process, a child that inherits it, the
 * child gone.
 */
static void test_owners(void **state)
{
	struct netns_table nt;
	struct socktab st;
	struct sock_info *si;
	uint16_t port = 0;
	int fd = udp_on(&port, false), moved, pipefd[2];
	bool *want;
	char comm[16];
	pid_t child;

	assert_int_equal(netns__scan(&nt), 0);
	assert_int_equal(socktab__init(&st), 0);
	assert_int_equal(socktab__dump(&st, &nt, nt.self, IPPROTO_UDP), 0);
	want = calloc(st.n + 1, sizeof(*want));
	assert_non_null(want);
	/* no walk yet: the check cannot tell */
	want_fd(&st, want, fd);
	assert_int_equal(socktab__check_owners(&st, want), -EAGAIN);

	assert_int_equal(socktab__find_owners(&st, want), 0);
	si = &st.v[index_of(&st, fd)];
	assert_int_equal(si->npids, 1);
	assert_int_equal(si->pids[0], getpid());
	assert_int_equal(si->fds[0], fd);
	assert_string_equal(si->comm, self_comm(comm, sizeof(comm)));

	assert_int_equal(socktab__check_owners(&st, want), 0);
	assert_int_equal(si->npids, 1);
	assert_int_equal(si->fds[0], fd);

	/* the same socket, another fd: the process is looked at again */
	moved = dup(fd);
	assert_true(moved >= 0);
	close(fd);
	assert_int_equal(socktab__check_owners(&st, want), 0);
	assert_int_equal(si->npids, 1);
	assert_int_equal(si->pids[0], getpid());
	assert_int_equal(si->fds[0], moved);

	/* a new process holding it */
	assert_int_equal(pipe(pipefd), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		char c;

		close(pipefd[1]);
		(void)!read(pipefd[0], &c, 1); /* until the parent closes it */
		_exit(0);
	}
	close(pipefd[0]);
	assert_int_equal(socktab__check_owners(&st, want), 0);
	assert_int_equal(si->npids, 2);
	assert_int_equal(si->pids[0], getpid());
	assert_int_equal(si->pids[1], child);

	/* gone again */
	close(pipefd[1]);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(socktab__check_owners(&st, want), 0);
	assert_int_equal(si->npids, 1);
	assert_int_equal(si->pids[0], getpid());

	/* the full walk agrees */
	assert_int_equal(socktab__find_owners(&st, want), 0);
	assert_int_equal(si->npids, 1);
	assert_int_equal(si->fds[0], moved);

	free(want);
	socktab__free(&st);
	netns__free(&nt);
	close(moved);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_udp),
		cmocka_unit_test(test_dump_tcp),
		cmocka_unit_test(test_closed_not_dumped),
		cmocka_unit_test(test_refresh),
		cmocka_unit_test(test_dump_ports),
		cmocka_unit_test(test_reuseport),
		cmocka_unit_test(test_owners),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
