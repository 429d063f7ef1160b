/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One socket, one row: the identity rule top's model and report share.
 *
 * The BPF programs name a socket by its cookie, or by its inode while it
 * has no cookie yet (UD_KEY_INODE; the first socket dump gives it one).
 * A socket counted first by inode and later by cookie is one socket: once
 * a dump has named both, the inode's counts go to the cookie's row. Until
 * then the row is the inode's, as UD_RX_INODE | inode (the identity
 * struct ud_rx keys use).
 */
#ifndef UDPDROP_SOCKID_H
#define UDPDROP_SOCKID_H

#include <stdbool.h>
#include <stdint.h>
#include "htab.h"
#include "udpdrop.h"

/* A socket identity from a cookie field and whether it holds an inode. */
static inline uint64_t sockid__of(uint64_t cookie, bool by_inode)
{
	return by_inode ? UD_RX_INODE | (uint32_t)cookie : cookie;
}

/* A drop key's socket identity; 0 when it names no socket. */
static inline uint64_t sockid__of_key(const struct ud_key *k)
{
	if (!(k->flags & UD_KEY_SOCK) || !k->cookie)
		return 0;
	return sockid__of(k->cookie, k->flags & UD_KEY_INODE);
}

/* An inode identity's inode; 0 for a cookie. */
static inline uint32_t sockid__inode(uint64_t id)
{
	return id & UD_RX_INODE ? (uint32_t)id : 0;
}

/*
 * Does a dump (or a trace's SOCKETS entry) that names a socket by both
 * join its inode to its cookie? Not where the cookie is itself an inode
 * identity (UD_RX_INODE set: the socket had no cookie yet) or either is 0.
 */
static inline bool sockid__joins(uint32_t inode, uint64_t cookie)
{
	return inode && cookie && !(cookie & UD_RX_INODE);
}

/*
 * The row an identity counts on, given the cookie a dump named for its
 * inode (0: none yet): that cookie's row once there is one, else its own.
 * Every view goes through this, so no socket is two rows in one and one
 * row in another.
 */
static inline uint64_t sockid__join(uint64_t id, uint64_t cookie_of_inode)
{
	return (id & UD_RX_INODE) && cookie_of_inode ? cookie_of_inode : id;
}

/*
 * The same over a struct htab inode -> cookie (u32 keys, u64 values), as
 * the live model keeps it (report keeps a keyed table of its own: a trace
 * file is untrusted input).
 */
int sockid__init(struct htab *inode2cookie);
/* Learn a dump's (inode, cookie) if sockid__joins: 0 or -ENOMEM. */
int sockid__learn(struct htab *inode2cookie, uint32_t inode, uint64_t cookie);
/* sockid__join with the cookie the table has for the id's inode. */
uint64_t sockid__row(const struct htab *inode2cookie, uint64_t id);

#endif
