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
#include <linux/inet_diag.h>
#include <linux/netlink.h>
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
	uint32_t ifindex;      /* the device it is bound to (idiag_if), 0: none */
	/* an exact request finds another socket in its place (SO_REUSEPORT,
	 * SO_REUSEADDR, a BPF sk_lookup): the model dumps its port instead */
	bool no_exact;
	uint32_t drops_base;   /* sk_drops when udpdrop first saw it (0 if born later) */
	/* owners: filled by socktab__find_owners */
	int npids;             /* processes holding it; may exceed SOCK_MAX_PIDS */
	int pids[SOCK_MAX_PIDS];
	int fds[SOCK_MAX_PIDS]; /* where pids[i] holds it (one of its fds) */
	char comm[16];         /* of pids[0] */
	/*
	 * No process holds it and a kernel device owns its port (kowner.h):
	 * "kernel vxlan vxlan0 vni 42", printable; "" otherwise. Filled by
	 * the model for the sockets in view, kept after they close.
	 */
	char kowner[64];
	bool owner_tried;      /* looked for owners at least once */
	uint8_t owner_retries; /* looked again, having found no holder (model_rows.c) */
	uint64_t last_seen_ns; /* alive in a dump or an exact request (model's clock) */
	/*
	 * Known from its deliveries alone (the tracer's struct ud_rx: netns,
	 * family, protocol, local port), never dumped: no address (taken as
	 * the wildcard), no owner. cookie is UD_RX_INODE | inode when the
	 * socket had no cookie yet.
	 */
	bool partial;
	/*
	 * The model learnt it from another dump than its own (lifetimes'),
	 * to join the socket's drops under inode and cookie: it names its
	 * rows but is no candidate for a flow's drops (which a socket with
	 * an address would win over the sockets known only by their port)
	 * until the model's own dump finds it.
	 */
	bool no_flow_match;
};

struct socktab {
	struct sock_info *v;
	int n, cap;
	struct htab by_cookie; /* cookie -> index */
	struct htab by_inode;  /* inode -> index */
	/* the processes there were at the last owner lookup, ascending */
	int *procs;
	int nprocs, procs_cap;
};

int socktab__init(struct socktab *st);
void socktab__free(struct socktab *st);
void socktab__reset(struct socktab *st);
/* Dump sockets of `proto` (IPPROTO_UDP, IPPROTO_TCP) in netns `inode`. */
int socktab__dump(struct socktab *st, const struct netns_table *nt,
		  uint32_t inode, int proto);
/*
 * The same, only the sockets bound to one of `ports` (local ports, up to
 * SOCKTAB_DUMP_PORTS; none: all), filtered in the kernel: it still walks
 * every socket, but fills in only those.
 */
#define SOCKTAB_DUMP_PORTS 32
int socktab__dump_ports(struct socktab *st, const struct netns_table *nt,
			uint32_t inode, int proto, const uint16_t *ports,
			int nports);
/*
 * The inet_diag bytecode "local port is one of ports" (n >= 1) into buf;
 * returns its length, or -ENOSPC.
 */
int socktab__bc_ports(const uint16_t *ports, int n, void *buf, int len);
/*
 * Remove the sockets for which gone(si, arg) is true; the others keep
 * their order (indexes move down).
 */
void socktab__remove_if(struct socktab *st,
			bool (*gone)(const struct sock_info *si, void *arg),
			void *arg);

/*
 * Refresh sockets already in the table, all of netns `inode`, without a
 * dump: one exact sock_diag request each (the socket's tuple, bound
 * device and cookie; up to SOCKTAB_BATCH per sendmsg), for its state and
 * memory info. found[i] says whether idx[i] answered as itself: a socket
 * that did not has closed, or an exact request finds another socket in
 * its place (see no_exact); only a dump can tell. Returns 0, how many
 * requests went unanswered (their answers lost to a full buffer: nothing
 * is known of those), or a negative errno when the requests could not be
 * made or read.
 */
#define SOCKTAB_BATCH 64
int socktab__refresh(struct socktab *st, const struct netns_table *nt,
		     uint32_t inode, const int *idx, int n, bool *found);

/* One exact request, as socktab__refresh sends it. */
struct socktab_req {
	struct nlmsghdr nlh;
	struct inet_diag_req_v2 r;
};
/* Fill the exact request for si (pure: no I/O). */
void socktab__exact_req(const struct sock_info *si, uint32_t seq,
			struct socktab_req *out);
/*
 * Parse one sock_diag reply (a dump's or an exact request's) into si,
 * owners and bookkeeping untouched; -EINVAL if it is too short.
 */
int socktab__parse(const struct nlmsghdr *h, int proto, uint32_t netns,
		   struct sock_info *si);
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
/*
 * Fill pids/comm of the sockets with want[index] true (their owners are
 * found again from scratch), by a walk of every /proc/PID/fd.
 */
int socktab__find_owners(struct socktab *st, const bool *want);
/*
 * The same, cheaper, from the owners found before: each (pid, fd) still
 * holding its socket stays; a process that no longer holds it there, and
 * each process started since the last lookup, has its fds walked. Misses
 * only a process that was running and has been handed the socket since
 * (SCM_RIGHTS): a full walk now and then finds those. -EAGAIN when only a
 * full walk can tell (a socket with more holders than it remembers, or no
 * lookup before); nothing has changed then.
 */
int socktab__check_owners(struct socktab *st, const bool *want);
/* The inodes of sockets process `pid` holds; returns how many (max n). */
int socktab__pid_inodes(int pid, uint32_t *inodes, int n);

#endif
