// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for src/loadgen/ctl.c: the control channel's lines, and a real TCP exchange over loopback. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include "ctl.h"
#include "util.h"

static void test_round_trip(void **state)
{
	struct ctl_msg m, back;
	uint64_t v;
	double d;
	char *line;

	ctl_msg__init(&m, "HELLO");
	ctl_msg__set_u64(&m, "run", 3735928559u);
	ctl_msg__set_double(&m, "pps", 85034.5);
	ctl_msg__set(&m, "msg", "bind: Address in use=%");
	ctl_msg__set_u64(&m, "run", 7); /* replaces */
	line = ctl_msg__format(&m);
	assert_non_null(line);
	assert_string_equal(line, "UDPDROP1 HELLO run=7 pps=85034.5 msg=bind:%20Address%20in%20use%3D%25");
	assert_int_equal(ctl_msg__parse(line, &back), 0);
	assert_string_equal(back.type, "HELLO");
	assert_int_equal(back.n, 3);
	assert_int_equal(ctl_msg__get_u64(&back, "run", &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(ctl_msg__get_double(&back, "pps", &d), 0);
	assert_true(d == 85034.5);
	assert_string_equal(ctl_msg__get(&back, "msg"), "bind: Address in use=%");
	assert_int_equal(ctl_msg__get_u64(&back, "nope", &v), -ENOENT);
	assert_int_equal(ctl_msg__get_u64(&back, "msg", &v), -EINVAL);
	free(line);
	ctl_msg__free(&m);
	ctl_msg__free(&back);
}

static void test_bad_lines(void **state)
{
	static const char *const bad[] = {
		"", "HELLO run=1", "UDPDROP1", "UDPDROP1 ", "UDPDROP1 hello",
		"UDPDROP1 HELLO run", "UDPDROP1 HELLO =1", "UDPDROP1 HELLO Run=1",
		"UDPDROP1 HELLO run=1 ", "UDPDROP1 HELLOHELLOHELLOHELLO1",
		"GET / HTTP/1.1",
	};
	struct ctl_msg m;

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (ctl_msg__parse(bad[i], &m) != -EINVAL)
			fail_msg("accepted: '%s'", bad[i]);
		assert_null(m.kv);
	}
	/* another protocol version is told apart from garbage */
	assert_int_equal(ctl_msg__parse("UDPDROP2 HELLO run=1", &m), -EPROTO);
	ctl_msg__free(&m);
	/* an empty value and a truncated escape are taken as they are */
	assert_int_equal(ctl_msg__parse("UDPDROP1 X a= b=%4", &m), 0);
	assert_string_equal(ctl_msg__get(&m, "a"), "");
	assert_string_equal(ctl_msg__get(&m, "b"), "%4");
	ctl_msg__free(&m);
}

/* more than CTL_MAX_KEYS keys is refused; a repeated key: the first counts */
static void test_limits(void **state)
{
	struct strbuf sb = {};
	struct ctl_msg m;

	sb_printf(&sb, "UDPDROP1 X");
	for (int i = 0; i <= CTL_MAX_KEYS; i++)
		sb_printf(&sb, " k%d=1", i);
	assert_int_equal(ctl_msg__parse(sb.buf, &m), -EINVAL);
	assert_null(m.kv);
	sb.len = 0;
	sb_printf(&sb, "UDPDROP1 X");
	for (int i = 0; i < CTL_MAX_KEYS; i++)
		sb_printf(&sb, " k%d=%d", i, i);
	assert_int_equal(ctl_msg__parse(sb.buf, &m), 0);
	assert_int_equal(m.n, CTL_MAX_KEYS);
	assert_string_equal(ctl_msg__get(&m, "k16383"), "16383");
	ctl_msg__free(&m);
	assert_int_equal(ctl_msg__parse("UDPDROP1 X a=1 a=2", &m), 0);
	assert_string_equal(ctl_msg__get(&m, "a"), "1");
	ctl_msg__free(&m);
	sb_free(&sb);
}

/* listen, connect, a message each way, a timeout, and the peer closing */
static void test_tcp(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	struct ctl_msg m, got;
	int lfd, cfd, sfd;
	uint64_t v;

	lfd = ctl_listen((struct sockaddr *)&a, sizeof(a));
	assert_true(lfd >= 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &alen), 0);
	assert_int_equal(ctl_accept(lfd, 0), -ETIMEDOUT);
	cfd = ctl_connect((struct sockaddr *)&a, sizeof(a), 2000);
	assert_true(cfd >= 0);
	sfd = ctl_accept(lfd, 2000);
	assert_true(sfd >= 0);

	ctl_msg__init(&m, "DONE");
	ctl_msg__set_u64(&m, "f0.sent", 12345);
	assert_int_equal(ctl_send(cfd, &m), 0);
	ctl_msg__set_u64(&m, "f0.sent", 2);
	assert_int_equal(ctl_send(cfd, &m), 0); /* two lines in one segment */
	assert_int_equal(ctl_recv(sfd, &got, 2000), 0);
	assert_string_equal(got.type, "DONE");
	assert_int_equal(ctl_msg__get_u64(&got, "f0.sent", &v), 0);
	assert_int_equal(v, 12345);
	ctl_msg__free(&got);
	assert_int_equal(ctl_recv(sfd, &got, 2000), 0);
	assert_int_equal(ctl_msg__get_u64(&got, "f0.sent", &v), 0);
	assert_int_equal(v, 2);
	ctl_msg__free(&got);
	assert_int_equal(ctl_recv(sfd, &got, 50), -ETIMEDOUT);
	ctl_msg__free(&got);
	close(cfd);
	assert_int_equal(ctl_recv(sfd, &got, 2000), -ECONNRESET);
	ctl_msg__free(&got);
	ctl_msg__free(&m);
	close(sfd);
	close(lfd);
}

/* nobody listening: refused at once, not after the timeout */
static void test_connect_refused(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int lfd = ctl_listen((struct sockaddr *)&a, sizeof(a));

	assert_true(lfd >= 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &alen), 0);
	close(lfd); /* the port is free again: nothing listens there */
	assert_int_equal(ctl_connect((struct sockaddr *)&a, sizeof(a), 2000), -ECONNREFUSED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_tcp),
		cmocka_unit_test(test_connect_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
