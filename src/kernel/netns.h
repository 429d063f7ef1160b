/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Network namespaces: which exist (named ones under /run/netns, and those
 * of running processes), how to name them, and how to step into one to
 * read its counters or dump its sockets.
 */
#ifndef UD_NETNS_H
#define UD_NETNS_H

#include <stdbool.h>
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
 * NAME (from /run/netns), PATH (any nsfs file) or INODE number: 0, the
 * inode and, with fd, an fd of that netns (the caller's to close or to
 * pin); -ENOENT (no such netns), -EINVAL (PATH is something else: a FIFO,
 * socket, device, directory, another namespace type), -EACCES.
 */
int netns__resolve(const struct netns_table *t, const char *spec,
		   uint32_t *inode, int *fd);
/*
 * An fd of the network namespace file at path (and its inode), or the
 * errors of netns__resolve. Nothing but an nsfs file is ever opened for
 * real: a FIFO would block open(2) forever, a device could act on it.
 */
int netns__open(const char *path, uint32_t *inode);

/*
 * The pin: an fd of the traced netns (-N, or -p's) held for the whole
 * run. While it is open the kernel cannot free that netns, so its inode
 * (the tracer's filter, every row's key) cannot go to a new netns and
 * merge another namespace's drops into it. One per process; takes fd
 * (closed on failure too). label: the path the user gave, or NULL.
 */
int netns__pin(int fd, uint32_t inode, const char *label);
void netns__unpin(void);
/* The pinned netns's inode, 0 if none. */
uint32_t netns__pinned(void);
/* "NAME (inode N)", "PATH (inode N)", or the inode alone: printable. */
const char *netns__pin_label(void);
/*
 * Is the pinned netns gone for the user, kept by nothing but the pin: no
 * process or thread in it, no mount of it (ip netns add's /run/netns/NAME,
 * or any other bind mount, in any mount namespace)? Cheap when not: the
 * last place that proved it alive is looked at first (one stat); a full
 * look is linear in the processes, threads and mounts. Never for our own
 * netns. Open file descriptors (another program's, another udpdrop's pin)
 * and sockets do not count.
 */
bool netns__pin_gone(void);
#define LOCAL_ADDRS_MAX 64
struct local_addrs {
	int n;
	struct {
		int family;
		uint8_t addr[16];
	} v[LOCAL_ADDRS_MAX];
};

/*
 * The addresses a datagram in netns `inode` may be delivered to: those
 * configured there (getifaddrs), each IPv4 subnet's broadcast address,
 * and the multicast groups some socket or the kernel joined on one of its
 * interfaces (/proc/net/igmp, /proc/net/igmp6 there). The list is cut at
 * LOCAL_ADDRS_MAX (n == LOCAL_ADDRS_MAX: maybe more).
 */
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
