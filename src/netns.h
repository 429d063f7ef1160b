/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Network namespaces: which exist (named ones under /run/netns, and those
 * of running processes), how to name them, and how to step into one to
 * read its counters or dump its sockets.
 */
#ifndef UD_NETNS_H
#define UD_NETNS_H

#include <stdint.h>

struct netns_info {
	uint32_t inode;
	char name[64];  /* `ip netns` name, "" if none */
	char path[96];  /* something to open(2) to enter it */
};

struct netns_table {
	struct netns_info *v;
	int n;
	uint32_t self; /* our own netns */
};

int netns__scan(struct netns_table *t);
void netns__free(struct netns_table *t);
const struct netns_info *netns__find(const struct netns_table *t,
				     uint32_t inode);
/*
 * NAME (from /run/netns), PATH (any nsfs file) or INODE number.
 * Returns 0 and the inode, or -ENOENT.
 */
int netns__resolve(const struct netns_table *t, const char *spec,
		   uint32_t *inode);
#define LOCAL_ADDRS_MAX 64
struct local_addrs {
	int n;
	struct {
		int family;
		uint8_t addr[16];
	} v[LOCAL_ADDRS_MAX];
};

/* The addresses configured in netns `inode` (getifaddrs there). */
int netns__local_addrs(const struct netns_table *t, uint32_t inode,
		       struct local_addrs *out);

/* Inode of the netns of a process; 0 if it has gone. */
uint32_t netns__of_pid(int pid);

/*
 * Run fn in the netns `inode` (setns there and back on this thread), one
 * of the table's. Returns fn's result, or a negative errno if the netns
 * cannot be entered. When the table's path for it has gone (its process
 * has exited since the scan), another process in it is looked for.
 */
int netns__run_in(const struct netns_table *t, uint32_t inode,
		  int (*fn)(void *arg), void *arg);

#endif
