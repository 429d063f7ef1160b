// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udpdrop serve --textfile: see textfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "textfile.h"
#include "util.h"

int textfile__open(struct textfile *t, const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int e;

	memset(t, 0, sizeof(*t));
	t->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->dirfd < 0) {
		e = errno;
		snprintf(err, errlen, "--textfile %s: %s", dir,
			 e == ENOTDIR ? "not a directory: name node_exporter's textfile directory"
			 : e == ENOENT ? "no such directory: create it, or name node_exporter's"
			 : strerror(e));
		return e == ENOTDIR || e == ENOENT ? -EINVAL : -e;
	}
	if (!fstatat(t->dirfd, TEXTFILE_NAME, &st, AT_SYMLINK_NOFOLLOW) && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "--textfile %s: %s there is %s, not a file udpdrop wrote: "
			 "remove it, or name another directory", dir, TEXTFILE_NAME,
			 S_ISLNK(st.st_mode) ? "a symlink" : S_ISDIR(st.st_mode) ? "a directory"
			 : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket");
		close(t->dirfd);
		t->dirfd = -1;
		return -EINVAL;
	}
	return 0;
}

int textfile__write(struct textfile *t, const char *buf, size_t len)
{
	char tmp[64];
	struct stat st;
	int fd, err;

	/*
	 * A dot name (the collector reads *.prom only) no one can guess: a
	 * name planted in the directory (a symlink, a directory) cannot
	 * block the writes, and O_EXCL|O_NOFOLLOW never opens one.
	 */
	fd = -1;
	for (int tries = 0; fd < 0 && tries < 16; tries++) {
		uint64_t r;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = now_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)tries;
		snprintf(tmp, sizeof(tmp), "." TEXTFILE_NAME ".%016llx", (unsigned long long)r);
		fd = openat(t->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	/* 0644 whatever the umask: the collector is another user */
	err = fchmod(fd, 0644) ? -errno : write_all(fd, buf, len, NULL);
	if (!err && fstat(fd, &st))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(t->dirfd, tmp, t->dirfd, TEXTFILE_NAME))
		err = -errno;
	if (err) {
		unlinkat(t->dirfd, tmp, 0);
		return err;
	}
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	t->written = 1;
	return 0;
}

void textfile__close(struct textfile *t)
{
	struct stat st;

	if (t->dirfd < 0)
		return;
	if (t->written && !fstatat(t->dirfd, TEXTFILE_NAME, &st, AT_SYMLINK_NOFOLLOW) &&
	    st.st_dev == t->dev && st.st_ino == t->ino)
		unlinkat(t->dirfd, TEXTFILE_NAME, 0);
	close(t->dirfd);
	t->dirfd = -1;
	t->written = 0;
}
