/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The scope of `udpdrop record` that the kernel cannot apply: which drops
 * belong to the process (or its tree) of `-p PID` or `-- COMMAND`, and,
 * with -N, whether a closing socket's purged queue (UD_KEY_CLOSE: the
 * kernel's record has no netns for it) was that namespace's.
 *
 * A drop with a socket is the process's when the process holds (or held)
 * that socket, as /proc shows its file descriptors; a drop with no socket
 * (socket_close, netfilter, reassembly) when it went to the port of one
 * of the process's sockets, in that socket's netns; a closing queue is
 * the netns's when the model attributed its flow to a socket there: the
 * attributions `top` makes.
 */
#ifndef UD_OWNER_H
#define UD_OWNER_H

#include <stdbool.h>
#include <stdint.h>
#include "model.h"

enum owner_verdict {
	OWNER_YES,
	OWNER_NO,
	OWNER_UNKNOWN, /* the socket is newer than the socket table: ask later */
};

struct owned_port {
	uint32_t netns;
	uint16_t port;
};

struct owner {
	struct model *m;         /* its opts.pid (and pid_tree) name the process */
	struct owned_port *ports;/* the ports of its sockets the table describes */
	int nports, cap;
	uint64_t scan_ns;        /* when the process's sockets were last looked for */
};

/* No filter (pid 0) judges everything OWNER_YES. */
void owner__init(struct owner *o, struct model *m);
void owner__free(struct owner *o);
/*
 * Look for the process's sockets again (/proc) and gather the ports of
 * those the socket table describes. Returns how many sockets were new.
 */
int owner__scan(struct owner *o, uint64_t now_ns);
/*
 * Is a drop (its key) in scope? `final`: no later look will come (the
 * socket table will not learn more): UNKNOWN becomes NO.
 */
enum owner_verdict owner__judge(const struct owner *o, const struct ud_key *k,
				bool final);
/* Does a drop need judging at all (is there a scope the kernel missed)? */
bool owner__scoped(const struct owner *o, const struct ud_key *k);
/* Is the socket of (cookie, flags) in the socket table, or known gone? */
bool owner__described(const struct owner *o, uint64_t cookie, uint32_t flags);

#endif
