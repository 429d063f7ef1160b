// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for src/kernel/netns.c on real files: what -N accepts as a netns
 * file (nsfs, type net) and what it refuses without opening it (a FIFO
 * would block open(2) for ever), "" never naming a netns, and the pin of
 * udpdrop's own netns (never gone). Holding another netns and seeing it
 * go needs root and namespaces: tests/integration/netns.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "netns.h"

static char dir[64];

static void at(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static int files_setup(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char p[128];
	int fd;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/udpdrop-netns.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	at(p, sizeof(p), "fifo");
	if (mkfifo(p, 0600))
		return -1;
	at(p, sizeof(p), "file");
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return -1;
	close(fd);
	at(p, sizeof(p), "dir");
	if (mkdir(p, 0700))
		return -1;
	at(sa.sun_path, sizeof(sa.sun_path), "sock");
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	close(fd);
	return 0;
}

static int files_teardown(void **state)
{
	const char *names[] = { "fifo", "file", "sock" };
	char p[128];

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		at(p, sizeof(p), names[i]);
		unlink(p);
	}
	at(p, sizeof(p), "dir");
	rmdir(p);
	return rmdir(dir);
}

static uint32_t inode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint32_t)st.st_ino;
}

/* A FIFO, socket, file, directory, another namespace type: -EINVAL, at
 * once (the FIFO has no writer: a real open would block this test). */
static void test_open_refuses(void **state)
{
	const char *names[] = { "fifo", "sock", "file", "dir" };
	uint32_t ino = 7;
	char p[128];

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		at(p, sizeof(p), names[i]);
		assert_int_equal(netns__open(p, &ino), -EINVAL);
	}
	assert_int_equal(netns__open("/proc/self/ns/mnt", &ino), -EINVAL);
	assert_int_equal(netns__open("/proc/self/ns", &ino), -EINVAL);
	at(p, sizeof(p), "none");
	assert_int_equal(netns__open(p, &ino), -ENOENT);
	assert_int_equal(ino, 7); /* untouched */
	/* still what they were */
	at(p, sizeof(p), "fifo");
	struct stat st;

	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
}

static void test_open_netns(void **state)
{
	uint32_t ino = 0;
	struct stat st;
	int fd;

	(void)state;
	fd = netns__open("/proc/self/ns/net", &ino);
	assert_true(fd >= 0);
	assert_int_equal(ino, inode_of("/proc/self/ns/net"));
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal((uint32_t)st.st_ino, ino);
	/* non-blocking, close-on-exec */
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
}

/* "" (a script's unset variable) names no netns, not even ours, whose
 * table entry has no name. */
static void test_resolve(void **state)
{
	struct netns_table t;
	uint32_t self = inode_of("/proc/self/ns/net"), ino = 0;
	char spec[32], p[128];
	int fd = -1;

	(void)state;
	assert_int_equal(netns__scan(&t), 0);
	assert_int_equal(t.self, self);
	assert_int_equal(netns__resolve(&t, "", &ino, &fd), -ENOENT);
	assert_int_equal(ino, 0);
	assert_int_equal(fd, -1);
	snprintf(spec, sizeof(spec), "%u", self);
	assert_int_equal(netns__resolve(&t, spec, &ino, &fd), 0);
	assert_int_equal(ino, self);
	assert_true(fd >= 0);
	close(fd);
	ino = 0;
	assert_int_equal(netns__resolve(&t, "/proc/self/ns/net", &ino, NULL), 0);
	assert_int_equal(ino, self);
	at(p, sizeof(p), "fifo");
	assert_int_equal(netns__resolve(&t, p, &ino, &fd), -EINVAL);
	netns__free(&t);
}

/* Our own netns pinned: never gone; let go on unpin. */
static void test_pin_self(void **state)
{
	uint32_t ino = 0;
	int fd;

	(void)state;
	fd = netns__open("/proc/self/ns/net", &ino);
	assert_true(fd >= 0);
	assert_int_equal(netns__pin(fd, ino, NULL), 0);
	assert_int_equal(netns__pinned(), ino);
	assert_false(netns__pin_gone());
	/* no `ip netns` name, no path given: the inode alone */
	char want[16];

	snprintf(want, sizeof(want), "%u", ino);
	assert_string_equal(netns__pin_label(), want);
	netns__unpin();
	assert_int_equal(netns__pinned(), 0);
	assert_int_equal(fcntl(fd, F_GETFD), -1); /* closed */
	assert_false(netns__pin_gone());
	/* the wrong inode for the fd: refused, and the fd closed */
	fd = netns__open("/proc/self/ns/net", &ino);
	assert_true(fd >= 0);
	assert_int_equal(netns__pin(fd, ino + 1, NULL), -EINVAL);
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_int_equal(netns__pinned(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_refuses),
		cmocka_unit_test(test_open_netns),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_pin_self),
	};

	return cmocka_run_group_tests(tests, files_setup, files_teardown);
}
