/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * udpdrop serve --textfile DIR: the page as DIR/udpdrop.prom for
 * node_exporter's textfile collector, on hosts that allow no new listener.
 * Each write is a new file renamed over the old one, so the collector
 * never reads half a page. As root in a directory others may write to:
 * the temporary file is created O_EXCL|O_NOFOLLOW (a name planted there is
 * never written through), the rename replaces a name (never what a
 * symlink points at), and at the start an udpdrop.prom that is not a
 * regular file (a symlink, FIFO, device, directory) is refused. The file
 * is 0644: the collector runs as another user. At the end the file is
 * removed if it is still the one last written (stale counts would read as
 * a stopped counter).
 */
#ifndef UDPDROP_TEXTFILE_H
#define UDPDROP_TEXTFILE_H

#include <stddef.h>
#include <sys/types.h>

#define TEXTFILE_NAME "udpdrop.prom"

struct textfile {
	int dirfd;         /* -1: closed */
	dev_t dev;         /* the file last renamed into place */
	ino_t ino;
	int written;       /* one is in place */
};

/* Open DIR: 0, or -errno with one line in err saying what to do
 * (-EINVAL: not a directory, or udpdrop.prom there is no regular file). */
int textfile__open(struct textfile *t, const char *dir, char *err, size_t errlen);
/* Put the page in place: 0 or -errno. */
int textfile__write(struct textfile *t, const char *buf, size_t len);
/* Remove the file if it is still ours, and close. Safe twice. */
void textfile__close(struct textfile *t);

#endif
