/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The socket table: UDP (and TCP) sockets of a network namespace from
 * sock_diag netlink (what `ss -uam` shows), and their owners (pid, comm)
 * found through the socket inode in /proc/PID/fd, as `ss -p` does.
 */
#ifndef UD_SOCKTAB_H
#define UD_SOCKTAB_H

#include <stdbool.h>
#include <stdint.h>
#include "htab.h"
#include "netns.h"

#define SOCK_MAX_PIDS 4

struct sock_info {
	uint64_t cookie;
	uint32_t inode;
	uint32_t netns;
	uint8_t family, proto, state;
	uint8_t saddr[16], daddr[16];
	uint16_t sport, dport; /* host order */
	uint32_t uid;
	uint32_t rmem, rcvbuf, wmem, sndbuf, drops; /* SK_MEMINFO_* */
	bool have_mem;
	uint32_t drops_base;   /* sk_drops when udpdrop first saw it (0 if born later) */
	/* owners: filled by socktab__find_owners */
	int npids;             /* processes holding it; may exceed SOCK_MAX_PIDS */
	int pids[SOCK_MAX_PIDS];
	char comm[16];         /* of pids[0] */
	bool owner_tried;      /* looked for owners at least once */
	uint64_t last_seen_ns; /* in a dump (model's clock), for forgetting */
};

struct socktab {
	struct sock_info *v;
	int n, cap;
	struct htab by_cookie; /* cookie -> index */
	struct htab by_inode;  /* inode -> index */
};

int socktab__init(struct socktab *st);
void socktab__free(struct socktab *st);
void socktab__reset(struct socktab *st);
/* Dump sockets of `proto` (IPPROTO_UDP, IPPROTO_TCP) in netns `inode`. */
int socktab__dump(struct socktab *st, const struct netns_table *nt,
		  uint32_t inode, int proto);
struct sock_info *socktab__by_cookie(struct socktab *st, uint64_t cookie);
struct sock_info *socktab__by_inode(struct socktab *st, uint32_t inode);
/*
 * The socket a datagram to (family, daddr, dport) from saddr would be
 * delivered to in netns, following the kernel's preference: connected
 * to that source, then bound to that address, then the wildcard (an
 * AF_INET6 wildcard socket also takes IPv4). NULL if none.
 */
struct sock_info *socktab__lookup(struct socktab *st, uint32_t netns,
				  int family, int proto, const uint8_t *saddr,
				  const uint8_t *daddr, uint16_t dport);
/* Fill pids/comm of the sockets in `wanted` (inodes with want=true). */
int socktab__find_owners(struct socktab *st, const bool *want);
/* The inodes of sockets process `pid` holds; returns how many (max n). */
int socktab__pid_inodes(int pid, uint32_t *inodes, int n);

#endif
