// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for src/model/lifetimes.c against real UDP sockets of this netns
 * (sock_diag needs no privileges for one's own netns): a socket seen in a
 * snapshot is handed out as closed once, only after it has closed, by its
 * cookie or by its inode; the checks are made every LIFETIMES_CHECK_NS
 * unless urgent.
 */
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
#include <sys/stat.h>
#include <unistd.h>
#include "lifetimes.h"
#include "udpdrop.h"

#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

struct fx {
	struct lifetimes l;
	struct netns_table nt;
	struct htab drops, rx;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || lifetimes__init(&f->l, 1) || netns__scan(&f->nt) ||
	    htab__init(&f->drops, sizeof(struct ud_key), sizeof(struct ud_val)) ||
	    htab__init(&f->rx, sizeof(uint64_t), sizeof(struct ud_rx)))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	lifetimes__free(&f->l);
	netns__free(&f->nt);
	htab__free(&f->drops);
	htab__free(&f->rx);
	free(f);
	return 0;
}

/* A bound UDP socket on loopback; its cookie and inode. */
static int udp_socket(uint64_t *cookie, uint32_t *inode)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(*cookie);
	struct stat st;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (void *)&a, sizeof(a)), 0);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_COOKIE, cookie, &len), 0);
	assert_int_equal(fstat(fd, &st), 0);
	*inode = st.st_ino;
	return fd;
}

/* The socket as a drop bucket names it (cookie, or inode: no cookie yet). */
static void put_drop(struct fx *f, uint64_t cookie, uint32_t inode, bool by_inode)
{
	struct ud_key k = { .cookie = by_inode ? inode : cookie,
			    .netns = f->nt.self,
			    .flags = UD_KEY_SOCK | (by_inode ? UD_KEY_INODE : 0) };

	assert_non_null(htab__upsert(&f->drops, &k, NULL));
}

static int closed(struct fx *f, bool urgent, uint64_t now, uint64_t *ids,
		  bool *had, int max)
{
	uint64_t *v;
	bool *h;
	int n = lifetimes__closed(&f->l, &f->nt, urgent, now, &v, &h);

	assert_true(n >= 0 && n <= max);
	for (int i = 0; i < n; i++) {
		ids[i] = v[i];
		had[i] = h[i];
	}
	free(v);
	free(h);
	return n;
}

static void test_cookie_and_inode(void **state)
{
	struct fx *f = *state;
	uint64_t c1, c2, ids[4];
	uint32_t i1, i2;
	bool had[4];
	int fd1 = udp_socket(&c1, &i1), fd2 = udp_socket(&c2, &i2);

	put_drop(f, c1, i1, false);
	put_drop(f, c2, i2, true);
	assert_int_equal(lifetimes__note(&f->l, &f->drops, NULL, 10), 0);
	/* both alive */
	assert_int_equal(closed(f, true, 20, ids, had, 4), 0);
	assert_int_equal(f->l.dumps, 1);

	close(fd1);
	assert_int_equal(closed(f, true, 30, ids, had, 4), 1);
	assert_true(ids[0] == c1);
	assert_true(had[0]);
	/* handed out once */
	assert_int_equal(closed(f, true, 40, ids, had, 4), 0);

	close(fd2);
	assert_int_equal(closed(f, true, 50, ids, had, 4), 1);
	assert_true(ids[0] == (UD_RX_INODE | i2));
}

/* Not urgent: a netns is looked at again only after LIFETIMES_CHECK_NS. */
static void test_check_interval(void **state)
{
	struct fx *f = *state;
	uint64_t c, ids[2], t0 = 1000000000ull;
	uint32_t ino;
	bool had[2];
	int fd = udp_socket(&c, &ino);
	uint64_t id = c;
	struct ud_rx *v = htab__upsert(&f->rx, &id, NULL);

	assert_non_null(v);
	v->netns = f->nt.self;
	v->datagrams = 1;
	assert_int_equal(lifetimes__note(&f->l, &f->drops, &f->rx, t0), 0);
	assert_int_equal(closed(f, false, t0, ids, had, 2), 0);
	close(fd);
	/* too soon: no dump, nothing known yet */
	assert_int_equal(closed(f, false, t0 + LIFETIMES_CHECK_NS / 2, ids, had, 2), 0);
	assert_int_equal(f->l.dumps, 1);
	assert_int_equal(closed(f, false, t0 + LIFETIMES_CHECK_NS, ids, had, 2), 1);
	assert_true(ids[0] == c);
	assert_false(had[0]); /* known from deliveries only */
}

struct seen {
	int n;
	uint64_t cookies[2];
	uint32_t inodes[2];
	bool found[2];
};

static void note_seen(void *arg, struct sock_info *si)
{
	struct seen *s = arg;

	s->n++;
	for (int i = 0; i < 2; i++)
		if (si->inode == s->inodes[i] && si->cookie == s->cookies[i])
			s->found[i] = true;
}

/*
 * A liveness dump gives every socket it finds a cookie (sock_diag makes
 * one), so whoever joins inodes to cookies hears of each socket with an
 * inode it found: the one counted by its inode (its later drops count
 * under the cookie, and once it closes no other dump could tell), and
 * one tracked by its cookie too (its first drop may have come after the
 * snapshot the dump checks, counted by its inode: CI of 992e4b8).
 */
static void test_seen_by_inode(void **state)
{
	struct fx *f = *state;
	struct seen seen = {};
	uint64_t c1, c2, ids[2];
	uint32_t i1, i2;
	bool had[2];
	int fd1 = udp_socket(&c1, &i1), fd2 = udp_socket(&c2, &i2);

	f->l.seen_by_inode = note_seen;
	f->l.seen_arg = &seen;
	seen.cookies[0] = c1, seen.inodes[0] = i1;
	seen.cookies[1] = c2, seen.inodes[1] = i2;
	put_drop(f, c1, i1, true);
	put_drop(f, c2, i2, false);
	assert_int_equal(lifetimes__note(&f->l, &f->drops, NULL, 10), 0);
	assert_int_equal(closed(f, true, 20, ids, had, 2), 0);
	assert_true(seen.n >= 2);
	assert_true(seen.found[0]);
	assert_true(seen.found[1]);
	close(fd1);
	close(fd2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cookie_and_inode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_interval, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seen_by_inode, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
