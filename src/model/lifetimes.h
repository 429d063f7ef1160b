/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Socket lifetimes: which of the sockets the kernel's tables hold entries
 * for (drop buckets, deliveries) have closed, so that their entries can be
 * given back (tracer__retire) and a long run with short-lived sockets (a
 * DNS resolver, any client-heavy host) never fills the tables.
 *
 * A socket is known closed when a dump of its netns's sockets taken after
 * its entry was first seen does not have it: cookies and inodes are never
 * reused while a socket lives, so this cannot mistake one socket for
 * another. Each netns with sockets to check is dumped every
 * LIFETIMES_CHECK_NS, or on every call when the tables are filling.
 */
#ifndef UD_LIFETIMES_H
#define UD_LIFETIMES_H

#include <stdbool.h>
#include <stdint.h>
#include "htab.h"
#include "netns.h"
#include "socktab.h"

#define LIFETIMES_CHECK_NS (10 * 1000000000ull)

struct lifetimes {
	struct htab ids;     /* socket identity -> struct lifetime */
	struct htab checked; /* netns -> uint64_t: when its sockets were last dumped here */
	struct socktab scratch;
	uint64_t prune_ns;
	uint64_t dumps;      /* liveness dumps made (tests, -vv) */
	/*
	 * Called for each socket with an inode a liveness dump found: the
	 * dump gave it a cookie (sock_diag makes one), so its drops from now
	 * on are counted under that cookie, and whoever joins inode and
	 * cookie (the model) must learn of it even if the socket closes
	 * before its own next dump. Every one, not only those tracked by
	 * their inode: a socket whose first drop came after the snapshot
	 * this dump checks was counted by its inode too (it had no cookie
	 * until now). May be NULL.
	 */
	void (*seen_by_inode)(void *arg, struct sock_info *si);
	void *seen_arg;
};

int lifetimes__init(struct lifetimes *l, uint64_t now);
void lifetimes__free(struct lifetimes *l);
/*
 * Note the socket identities of a tracer snapshot: drops (struct ud_key ->
 * struct ud_val; socket buckets only) and rx (identity -> struct ud_rx,
 * may be NULL). Identities as struct ud_rx keys name them (the cookie, or
 * UD_RX_INODE | inode).
 */
int lifetimes__note(struct lifetimes *l, const struct htab *drops,
		    const struct htab *rx, uint64_t now);
/*
 * Dump the netns whose sockets are due a check (all of those with any
 * when urgent) and return the identities found closed since the last
 * call, each once: *ids (malloc'ed, the caller frees) and, per identity,
 * whether it had drop buckets (*had_drops). A netns that has gone closes
 * all of its sockets. Returns how many, or a negative errno.
 */
int lifetimes__closed(struct lifetimes *l, const struct netns_table *nt,
		      bool urgent, uint64_t now, uint64_t **ids, bool **had_drops);

#endif
