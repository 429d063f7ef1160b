// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reading the kernel's counters of a live netns. Apart from mib.c (names
 * and the parser), which the offline side (report, the fuzz target) links
 * without any of the live system's code.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mib.h"
#include "netns.h"

static int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

int mib__read_here(struct mib *m)
{
	static const char *files[] = { "/proc/thread-self/net/snmp",
				       "/proc/thread-self/net/snmp6",
				       "/proc/thread-self/net/netstat" };
	char *buf = malloc(65536);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int e = read_file(files[i], buf, 65536);

		if (e) {
			if (i == 0)
				err = e; /* snmp6 is absent without IPv6 */
			continue;
		}
		mib__parse(m, buf);
	}
	free(buf);
	return err;
}

static int read_cb(void *arg)
{
	return mib__read_here(arg);
}

int mib__read(const struct netns_table *t, uint32_t inode, struct mib *m)
{
	return netns__run_in(t, inode, read_cb, m);
}
