// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for how the model keeps its socket table (src/model/model_dumps.c, see
 * MODEL_FULL_DUMP_NS): which update dumps a netns whole, which dumps the
 * sockets of a port, which refreshes the sockets in view by exact requests,
 * and how owners are looked up again; on real sockets of this process, in
 * its own netns (m->sock_stats counts what was done).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "model_fixture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "htab.h"
#include "model.h"
#include "udpdrop.h"

#define NFDS 4
#define UNKNOWN_COOKIE 0x7fff0000deadbeefull

struct fx {
	struct model_fx x; /* first: the model and the snapshot */
	uint32_t r_rcvbuff, r_netfilter;
	int fds[NFDS];
	uint64_t cookies[NFDS];
	uint16_t ports[NFDS];
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || model_fx__open(&f->x)) {
		free(f);
		return -1;
	}
	for (int i = 0; i < NFDS; i++)
		f->fds[i] = -1;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	model_fx__close(&f->x);
	for (int i = 0; i < NFDS; i++)
		if (f->fds[i] >= 0)
			close(f->fds[i]);
	free(f);
	return 0;
}

static void fx_init(struct fx *f, const struct model_opts *o)
{
	model_fx__init(&f->x, o);
	f->r_rcvbuff = model_fx__reason(&f->x, "SOCKET_RCVBUFF");
	f->r_netfilter = model_fx__reason(&f->x, "NETFILTER_DROP");
}

/* A UDP socket in slot i on 127.0.0.1:port (0: any port), optionally SO_REUSEPORT. */
static void open_udp(struct fx *f, int i, uint16_t port, bool reuseport)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a), clen = sizeof(f->cookies[i]);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), one = 1;

	assert_true(fd >= 0);
	f->fds[i] = fd;
	if (reuseport)
		assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	f->ports[i] = ntohs(a.sin_port);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_COOKIE, &f->cookies[i], &clen), 0);
}

static void close_udp(struct fx *f, int i)
{
	close(f->fds[i]);
	f->fds[i] = -1;
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

/* Set a socket's rcvbuf drops (the tracer's counts are cumulative). */
static void put_sock(struct fx *f, uint64_t cookie, uint64_t n)
{
	struct ud_key k;
	struct ud_val *v;

	memset(&k, 0, sizeof(k));
	k.netns = f->x.netns;
	k.reason = f->r_rcvbuff;
	k.cookie = cookie;
	k.flags = UD_KEY_SOCK | UD_KEY_RX_SK;
	v = htab__upsert(&f->x.drops, &k, NULL);
	assert_non_null(v);
	v->datagrams = v->skbs = n;
}

/* Set a netfilter flow's drops to 127.0.0.1:port (no socket on record). */
static void put_flow(struct fx *f, uint16_t port, uint64_t n)
{
	struct ud_key k;
	struct ud_val *v;

	memset(&k, 0, sizeof(k));
	k.netns = f->x.netns;
	k.reason = f->r_netfilter;
	k.family = AF_INET;
	k.proto = IPPROTO_UDP;
	k.dport = port;
	inet_pton(AF_INET, "127.0.0.1", k.saddr);
	inet_pton(AF_INET, "127.0.0.1", k.daddr);
	v = htab__upsert(&f->x.drops, &k, NULL);
	assert_non_null(v);
	v->datagrams = v->skbs = n;
}

static void update_at(struct fx *f, uint64_t ms)
{
	assert_int_equal(model__update(&f->x.m, &f->x.drops, f->x.overflow, f->x.stats,
				       f->x.m.start_ns + ms * 1000000ull), 0);
}

static struct row *row_of(struct fx *f, uint64_t cookie)
{
	for (int i = 0; i < f->x.m.nview_sockets; i++)
		if (f->x.m.view_sockets[i]->key.cookie == cookie)
			return f->x.m.view_sockets[i];
	return NULL;
}

#define S(f) (f)->x.m.sock_stats

/*
 * The first update dumps the netns whole; the next ones ask for the
 * sockets in view alone, and see what changed (a queue filling up).
 */
static void test_exact_between_dumps(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct row *r;

	fx_init(f, &o);
	open_udp(f, 0, 0, false);
	open_udp(f, 1, 0, false); /* quiet: never asked for */
	put_sock(f, f->cookies[0], 3);
	update_at(f, 1000);
	assert_int_equal(S(f).full, 1);
	assert_int_equal(S(f).exact, 0);
	r = row_of(f, f->cookies[0]);
	assert_non_null(r);
	assert_true(r->sock_alive && r->sock.have_mem);
	assert_int_equal(r->sock.rmem, 0);
	assert_int_equal(r->sock.sport, f->ports[0]);

	send_to(f->ports[0], 2);
	update_at(f, 2000);
	assert_int_equal(S(f).full, 1);
	assert_int_equal(S(f).ports, 0);
	assert_int_equal(S(f).exact, 1);
	assert_int_equal(S(f).exact_missed, 0);
	r = row_of(f, f->cookies[0]);
	assert_true(r->sock_alive);
	assert_true(r->sock.rmem > 0);
	assert_int_equal(f->x.m.nview_sockets, 1);
}

/* A socket in view that closes: missed, looked for on its port, gone. */
static void test_closed_in_view(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct row *r;

	fx_init(f, &o);
	open_udp(f, 0, 0, false);
	put_sock(f, f->cookies[0], 3);
	update_at(f, 1000);
	close_udp(f, 0);
	update_at(f, 2000);
	assert_int_equal(S(f).full, 1);
	assert_int_equal(S(f).exact_missed, 1);
	assert_int_equal(S(f).ports, 1);
	r = row_of(f, f->cookies[0]);
	assert_non_null(r);
	assert_false(r->sock_alive);
	assert_true(r->have_sock); /* still named */
	assert_int_equal(r->drops, 3);
	/* gone for good: not asked for again */
	update_at(f, 3000);
	assert_int_equal(S(f).exact, 1);
	assert_int_equal(S(f).ports, 1);
	assert_int_equal(S(f).full, 1);
}

/*
 * A drop names a socket born since the last dump: the netns is dumped
 * whole at once. One that no dump finds (it closed first) is looked for
 * once only.
 */
static void test_new_and_unknown_sockets(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};

	fx_init(f, &o);
	update_at(f, 1000);
	assert_int_equal(S(f).full, 1);
	open_udp(f, 0, 0, false);
	put_sock(f, f->cookies[0], 1);
	update_at(f, 2000);
	assert_int_equal(S(f).full, 2);
	assert_true(row_of(f, f->cookies[0])->sock_alive);
	update_at(f, 3000);
	assert_int_equal(S(f).full, 2);

	put_sock(f, UNKNOWN_COOKIE, 1);
	update_at(f, 4000);
	assert_int_equal(S(f).full, 3);
	assert_false(row_of(f, UNKNOWN_COOKIE)->have_sock);
	put_sock(f, UNKNOWN_COOKIE, 2);
	update_at(f, 5000);
	assert_int_equal(S(f).full, 3);
	assert_int_equal(row_of(f, UNKNOWN_COOKIE)->drops, 2);
}

/* Whole dumps come back every MODEL_FULL_DUMP_NS, and always with --all. */
static void test_periodic_and_all(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	uint64_t period = MODEL_FULL_DUMP_NS / 1000000ull;

	fx_init(f, &o);
	update_at(f, 1000);
	update_at(f, 1000 + period - 1);
	assert_int_equal(S(f).full, 1);
	update_at(f, 1000 + period);
	assert_int_equal(S(f).full, 2);
	update_at(f, 1000 + period + 1000);
	assert_int_equal(S(f).full, 2);
	model__free(&f->x.m);
	f->x.model_up = false;

	o.all = true;
	fx_init(f, &o);
	open_udp(f, 0, 0, false);
	update_at(f, 1000);
	update_at(f, 2000);
	assert_int_equal(S(f).full, 2);
	open_udp(f, 1, 0, false);
	update_at(f, 3000);
	assert_int_equal(S(f).full, 3);
	assert_int_equal(S(f).exact, 0);
	assert_true(row_of(f, f->cookies[1])->sock_alive); /* at once */
}

/* A flow to attribute: the sockets on its port are dumped, no more. */
static void test_flow_port_dump(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct row *r;

	fx_init(f, &o);
	open_udp(f, 0, 0, false);
	put_flow(f, f->ports[0], 4);
	update_at(f, 1000);
	assert_int_equal(S(f).full, 1);
	r = row_of(f, f->cookies[0]);
	assert_non_null(r);
	assert_int_equal(r->drops, 4);
	assert_true(r->flags & ROW_VIA_FLOW);

	/* no new counts: nothing to attribute, nothing dumped */
	update_at(f, 2000);
	assert_int_equal(S(f).ports, 0);
	assert_int_equal(S(f).exact, 1);
	/* new counts: the port's sockets, fresh (a new one there included) */
	close_udp(f, 0);
	open_udp(f, 1, f->ports[0], false);
	put_flow(f, f->ports[0], 10);
	update_at(f, 3000);
	assert_int_equal(S(f).full, 1);
	assert_int_equal(S(f).ports, 1);
	assert_int_equal(row_of(f, f->cookies[0])->drops, 4);
	assert_false(row_of(f, f->cookies[0])->sock_alive);
	r = row_of(f, f->cookies[1]);
	assert_non_null(r);
	assert_int_equal(r->drops, 6);
	assert_true(r->sock_alive);
}

/*
 * SO_REUSEPORT: an exact request reaches one socket of the group; the
 * other is found alive by its port, and refreshed that way from then on.
 */
static void test_reuseport(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};

	fx_init(f, &o);
	open_udp(f, 0, 0, true);
	open_udp(f, 1, f->ports[0], true);
	put_sock(f, f->cookies[0], 1);
	put_sock(f, f->cookies[1], 1);
	update_at(f, 1000);
	update_at(f, 2000);
	assert_int_equal(S(f).exact, 2);
	if (S(f).exact_missed == 0) {
		print_message("both sockets of the group answered exact requests\n");
		return; /* a kernel that looks further: nothing to fall back from */
	}
	assert_int_equal(S(f).exact_missed, 1);
	assert_int_equal(S(f).ports, 1);
	assert_true(row_of(f, f->cookies[0])->sock_alive);
	assert_true(row_of(f, f->cookies[1])->sock_alive);
	send_to(f->ports[0], 4); /* spread over the group */
	update_at(f, 3000);
	assert_int_equal(S(f).exact, 3);    /* the one that answers */
	assert_int_equal(S(f).exact_missed, 1);
	assert_int_equal(S(f).ports, 2);    /* the other, by its port */
	assert_int_equal(row_of(f, f->cookies[0])->sock.rmem +
			 row_of(f, f->cookies[1])->sock.rmem > 0, 1);
	assert_true(row_of(f, f->cookies[0])->sock_alive);
	assert_true(row_of(f, f->cookies[1])->sock_alive);
}

/*
 * Owners: a full /proc walk when a socket comes into view, a check of the
 * holders found every 10 s, a full walk again a minute on.
 */
static void test_owners(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	struct row *r;
	uint64_t first;

	fx_init(f, &o);
	open_udp(f, 0, 0, false);
	put_sock(f, f->cookies[0], 1);
	update_at(f, 1000);
	first = f->x.m.owners_full_ns;
	assert_int_equal(first, f->x.m.start_ns + 1000 * 1000000ull);
	r = row_of(f, f->cookies[0]);
	assert_int_equal(r->sock.npids, 1);
	assert_int_equal(r->sock.pids[0], getpid());

	/* the fd moves: the check finds it there */
	int moved = dup(f->fds[0]);

	assert_true(moved >= 0);
	close(f->fds[0]);
	f->fds[0] = moved;
	update_at(f, 11000);
	assert_int_equal(f->x.m.owners_full_ns, first);
	assert_int_equal(f->x.m.owners_ns, f->x.m.start_ns + 11000 * 1000000ull);
	r = row_of(f, f->cookies[0]);
	assert_int_equal(r->sock.npids, 1);
	assert_int_equal(r->sock.pids[0], getpid());
	assert_int_equal(r->sock.fds[0], moved);

	update_at(f, 62000);
	assert_int_equal(f->x.m.owners_full_ns, f->x.m.start_ns + 62000 * 1000000ull);
	assert_int_equal(row_of(f, f->cookies[0])->sock.pids[0], getpid());
}

/*
 * A child that forks a grandchild holding a UDP socket on 127.0.0.1; both
 * stay until *release is closed (or this process dies). The socket's
 * cookie into *cookie.
 */
static pid_t fork_holder(int *release, uint64_t *cookie)
{
	int rel[2], tell[2];
	pid_t a;

	assert_int_equal(pipe2(rel, O_CLOEXEC), 0);
	assert_int_equal(pipe2(tell, O_CLOEXEC), 0);
	a = fork();
	assert_true(a >= 0);
	if (a == 0) {
		pid_t b;
		char c;

		close(rel[1]);
		close(tell[0]);
		b = fork();
		if (b < 0)
			_exit(1);
		if (b == 0) {
			struct sockaddr_in sa = { .sin_family = AF_INET,
						  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
			uint64_t ck = 0;
			socklen_t len = sizeof(ck);
			int fd = socket(AF_INET, SOCK_DGRAM, 0);

			if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
			    getsockopt(fd, SOL_SOCKET, SO_COOKIE, &ck, &len))
				ck = 0;
			if (write(tell[1], &ck, sizeof(ck)) != sizeof(ck))
				_exit(1);
			close(tell[1]);
			while (read(rel[0], &c, 1) > 0)
				;
			_exit(0);
		}
		close(tell[1]);
		while (waitpid(b, NULL, 0) < 0)
			;
		_exit(0);
	}
	close(rel[0]);
	close(tell[1]);
	assert_int_equal(read(tell[0], cookie, sizeof(*cookie)), sizeof(*cookie));
	close(tell[0]);
	assert_true(*cookie != 0);
	*release = rel[1];
	return a;
}

/*
 * --pid with pid_tree (record -- COMMAND): a socket held by a grandchild
 * of pid is its own; without pid_tree (top -p) it is not. Once the
 * grandchild has exited, its socket stays attributed.
 */
static void test_pid_tree(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	uint64_t cookie;
	int release, status;
	pid_t a;
	struct row *r;

	a = fork_holder(&release, &cookie);
	open_udp(f, 0, 0, false); /* this process's own: not in a's tree */

	/* pid alone: a holds no socket */
	o.pid = a;
	fx_init(f, &o);
	put_sock(f, cookie, 5);
	put_sock(f, f->cookies[0], 2);
	update_at(f, 1000);
	assert_null(row_of(f, cookie));
	assert_null(row_of(f, f->cookies[0]));
	model__free(&f->x.m);
	f->x.model_up = false;

	/* its tree: the grandchild's socket */
	o.pid_tree = true;
	fx_init(f, &o);
	update_at(f, 1000);
	r = row_of(f, cookie);
	assert_non_null(r);
	assert_true(r->owned_by_pid);
	assert_int_equal(r->drops, 5);
	assert_null(row_of(f, f->cookies[0]));
	assert_int_equal(f->x.m.nview_sockets, 1);

	/* the tree exits: what it held stays its own */
	close(release);
	assert_int_equal(waitpid(a, &status, 0), a);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	put_sock(f, cookie, 9);
	update_at(f, 2000);
	r = row_of(f, cookie);
	assert_non_null(r);
	assert_int_equal(r->drops, 9);
	assert_null(row_of(f, f->cookies[0]));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_exact_between_dumps),
		T(test_closed_in_view),
		T(test_new_and_unknown_sockets),
		T(test_periodic_and_all),
		T(test_flow_port_dump),
		T(test_reuseport),
		T(test_owners),
		T(test_pid_tree),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
