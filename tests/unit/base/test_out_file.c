// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for src/base/util.c's output files (out_file__*): what a name given
 * as output may point at, and what is left of it after a success and after
 * a failure. Real files, FIFOs and sockets in a scratch directory; a
 * character device only where mknod is allowed (root), as a stand-in made
 * there, never one in /dev.
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
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>
#include "util.h"

static char dir[64];
static char msg[512];

/* dir/name in a static buffer (one per call site is enough here). */
static const char *at(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
	return buf;
}
#define AT(name) at((char[128]){ 0 }, 128, name)

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/test_out_file.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static void put(const char *p, const char *text, mode_t mode)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, mode), 0); /* whatever the umask */
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static off_t size_of(const char *p)
{
	struct stat st;

	assert_int_equal(stat(p, &st), 0);
	return st.st_size;
}

/* Nothing there: created 0600, and removed by discard. */
static void test_new_file(void **state)
{
	const char *p = AT("new");
	struct out_file of;
	struct stat st;

	/* msg is the caller's until an error: report --pcap keeps its word
	 * on a trace cut short there */
	strcpy(msg, "untouched");
	assert_int_equal(out_file__check(p, false, msg, sizeof(msg)), 0);
	assert_int_equal(out_file__open(&of, p, false, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "untouched");
	assert_int_equal(of.kind, OUT_FILE_NEW);
	assert_int_equal(write(of.fd, "abc", 3), 3);
	assert_int_equal(out_file__sync(&of), 0);
	assert_int_equal(out_file__close(&of), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_size, 3);
	unlink(p);

	assert_int_equal(out_file__open(&of, p, true, msg, sizeof(msg)), 0);
	assert_int_equal(of.kind, OUT_FILE_NEW);
	out_file__discard(&of);
	assert_int_equal(access(p, F_OK), -1);
}

/* Discard removes only the file it made: not one put under the name since. */
static void test_discard_spares_a_replacement(void **state)
{
	const char *p = AT("swapped");
	struct out_file of;

	assert_int_equal(out_file__open(&of, p, false, msg, sizeof(msg)), 0);
	assert_int_equal(unlink(p), 0);
	put(p, "someone else's", 0644);
	out_file__discard(&of);
	assert_int_equal(size_of(p), 14);
}

/* A regular file: refused without force; with it, emptied in place, its
 * mode and inode kept, and left empty (not removed) by discard. */
static void test_existing_file(void **state)
{
	const char *p = AT("old");
	struct out_file of;
	struct stat before, after;

	put(p, "precious", 0640);
	assert_int_equal(stat(p, &before), 0);
	assert_int_equal(out_file__check(p, false, msg, sizeof(msg)), -EEXIST);
	assert_non_null(strstr(msg, "exists: give -f"));
	assert_int_equal(out_file__open(&of, p, false, msg, sizeof(msg)), -EEXIST);
	assert_int_equal(of.fd, -1);
	assert_int_equal(size_of(p), 8);

	assert_int_equal(out_file__check(p, true, msg, sizeof(msg)), 0);
	assert_int_equal(out_file__open(&of, p, true, msg, sizeof(msg)), 0);
	assert_int_equal(of.kind, OUT_FILE_EXISTING);
	assert_int_equal(size_of(p), 0);
	assert_int_equal(write(of.fd, "new", 3), 3);
	assert_int_equal(out_file__close(&of), 0);
	assert_int_equal(stat(p, &after), 0);
	assert_int_equal(after.st_mode & 07777, 0640);
	assert_true(after.st_ino == before.st_ino);
	assert_int_equal(after.st_size, 3);

	assert_int_equal(out_file__open(&of, p, true, msg, sizeof(msg)), 0);
	assert_int_equal(write(of.fd, "half", 4), 4);
	out_file__discard(&of);
	assert_int_equal(size_of(p), 0);
	assert_int_equal(stat(p, &after), 0);
	assert_int_equal(after.st_mode & 07777, 0640);
}

/* A symlink is followed to its target, and stays a symlink. */
static void test_symlink_followed(void **state)
{
	const char *target = AT("target"), *link = AT("link");
	struct out_file of;
	struct stat st;

	put(target, "old", 0644);
	assert_int_equal(symlink("target", link), 0);
	assert_int_equal(out_file__open(&of, link, false, msg, sizeof(msg)), -EEXIST);
	assert_int_equal(out_file__open(&of, link, true, msg, sizeof(msg)), 0);
	assert_int_equal(write(of.fd, "through", 7), 7);
	out_file__close(&of);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(size_of(target), 7);

	/* a failure empties the target, never unlinks the link */
	assert_int_equal(out_file__open(&of, link, true, msg, sizeof(msg)), 0);
	out_file__discard(&of);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(size_of(target), 0);
}

/* A symlink to nothing: refused, force or not, and nothing created. */
static void test_dangling_symlink(void **state)
{
	const char *link = AT("dangling");
	struct out_file of;

	assert_int_equal(symlink("missing", link), 0);
	for (int force = 0; force < 2; force++) {
		assert_int_equal(out_file__check(link, force, msg, sizeof(msg)), -EINVAL);
		assert_int_equal(out_file__open(&of, link, force, msg, sizeof(msg)), -EINVAL);
		assert_non_null(strstr(msg, "symlink to a file that does not exist"));
	}
	assert_int_equal(access(AT("missing"), F_OK), -1);
}

/* A FIFO: no reader, -ENXIO at once (never a hang) and the line; with
 * one, written through, blocking, and left in place by discard. */
static void test_fifo(void **state)
{
	const char *p = AT("fifo");
	struct out_file of;
	struct stat st;
	char got[8] = {};
	int rd;

	assert_int_equal(mkfifo(p, 0644), 0);
	assert_int_equal(out_file__check(p, false, msg, sizeof(msg)), 0);
	assert_int_equal(out_file__open(&of, p, false, msg, sizeof(msg)), -ENXIO);
	assert_non_null(strstr(msg, "is a FIFO with no reader: start the reader first"));

	rd = open(p, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	assert_int_equal(out_file__open(&of, p, false, msg, sizeof(msg)), 0);
	assert_int_equal(of.kind, OUT_FILE_STREAM);
	assert_int_equal(fcntl(of.fd, F_GETFL) & O_NONBLOCK, 0);
	assert_int_equal(write(of.fd, "pipe", 4), 4);
	assert_int_equal(out_file__sync(&of), 0); /* nothing to sync, no EINVAL */
	out_file__discard(&of);
	assert_int_equal(read(rd, got, sizeof(got)), 4);
	assert_string_equal(got, "pipe");
	close(rd);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0644);
}

/* A character device (a stand-in for /dev/null, made here): written
 * through with or without force; mode and node untouched, even by a
 * discard. */
static void test_char_device(void **state)
{
	const char *p = AT("null");
	struct out_file of;
	struct stat st;

	if (mknod(p, S_IFCHR | 0666, makedev(1, 3)))
		skip(); /* not root */
	assert_int_equal(chmod(p, 0666), 0);
	for (int force = 0; force < 2; force++) {
		assert_int_equal(out_file__open(&of, p, force, msg, sizeof(msg)), 0);
		assert_int_equal(of.kind, OUT_FILE_STREAM);
		assert_int_equal(write(of.fd, "x", 1), 1);
		if (force)
			out_file__discard(&of);
		else
			assert_int_equal(out_file__close(&of), 0);
		assert_int_equal(lstat(p, &st), 0);
		assert_true(S_ISCHR(st.st_mode));
		assert_int_equal(st.st_mode & 07777, 0666);
		assert_true(st.st_rdev == makedev(1, 3));
	}
}

/* A directory, a socket and a block device are refused, force or not. */
static void test_refused_types(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *d = AT("dir"), *s = AT("sock"), *b = AT("blk");
	struct out_file of;
	bool have_blk;
	int fd;

	assert_int_equal(mkdir(d, 0755), 0);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", s);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	/* a major for local use, no driver behind it; never opened anyway */
	have_blk = !mknod(b, S_IFBLK | 0600, makedev(240, 0));

	for (int force = 0; force < 2; force++) {
		assert_int_equal(out_file__check(d, force, msg, sizeof(msg)), -EINVAL);
		assert_int_equal(out_file__open(&of, d, force, msg, sizeof(msg)), -EINVAL);
		assert_non_null(strstr(msg, "is a directory"));
		assert_int_equal(out_file__open(&of, s, force, msg, sizeof(msg)), -EINVAL);
		assert_non_null(strstr(msg, "is a socket"));
		if (have_blk) {
			assert_int_equal(out_file__open(&of, b, force, msg, sizeof(msg)), -EINVAL);
			assert_non_null(strstr(msg, "is a block device"));
		}
	}
	close(fd);
}

/* A directory that is not there: no refusal from check; open says why. */
static void test_missing_directory(void **state)
{
	const char *p = AT("no/such/dir/file");
	struct out_file of;

	assert_int_equal(out_file__check(p, false, msg, sizeof(msg)), 0);
	assert_int_equal(out_file__open(&of, p, false, msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "cannot create"));
	assert_non_null(strstr(msg, "No such file or directory"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_new_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_discard_spares_a_replacement, setup, teardown),
		cmocka_unit_test_setup_teardown(test_existing_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dangling_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_char_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_directory, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
