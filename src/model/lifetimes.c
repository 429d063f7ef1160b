// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Socket lifetimes: see lifetimes.h. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include "lifetimes.h"
#include "log.h"
#include "sockid.h"
#include "udpdrop.h"

/* Forget closed sockets' records this long after they were handed out. */
#define LIFETIMES_PRUNE_NS (60 * 1000000000ull)

struct lifetime {
	uint32_t netns;    /* 0: not known yet */
	bool had_drops;    /* a drop bucket names it */
	bool closed;       /* found closed and handed out */
};

int lifetimes__init(struct lifetimes *l, uint64_t now)
{
	memset(l, 0, sizeof(*l));
	l->prune_ns = now;
	if (htab__init(&l->ids, sizeof(uint64_t), sizeof(struct lifetime)) ||
	    htab__init(&l->checked, sizeof(uint32_t), sizeof(uint64_t)) ||
	    socktab__init(&l->scratch)) {
		lifetimes__free(l);
		return -ENOMEM;
	}
	return 0;
}

void lifetimes__free(struct lifetimes *l)
{
	htab__free(&l->ids);
	htab__free(&l->checked);
	socktab__free(&l->scratch);
	memset(l, 0, sizeof(*l));
}

static struct lifetime *note_one(struct lifetimes *l, uint64_t id,
				 uint32_t netns)
{
	struct lifetime *lt = htab__upsert(&l->ids, &id, NULL);

	if (!lt)
		return NULL;
	if (!lt->netns)
		lt->netns = netns;
	return lt;
}

/*
 * Keep the records of sockets still to be checked; those handed out as
 * closed are dropped after a while (a snapshot that still names one, from
 * the counts kept of it, makes it pending again: checked, found closed,
 * and handing it out again gives nothing back, harmlessly).
 */
static bool pending(const void *key, void *val, void *arg)
{
	return !((const struct lifetime *)val)->closed;
}

static int prune(struct lifetimes *l, uint64_t now)
{
	if (now - l->prune_ns < LIFETIMES_PRUNE_NS)
		return 0;
	l->prune_ns = now;
	return htab__retain(&l->ids, pending, NULL);
}

int lifetimes__note(struct lifetimes *l, const struct htab *drops,
		    const struct htab *rx, uint64_t now)
{
	size_t it = 0;
	const void *key;
	void *val;
	int err = prune(l, now);

	if (err)
		return err;
	while (htab__next(drops, &it, &key, &val)) {
		const struct ud_key *k = key;
		struct lifetime *lt;
		uint64_t id;

		if (!(k->flags & UD_KEY_SOCK) || !k->cookie)
			continue;
		id = sockid__of(k->cookie, k->flags & UD_KEY_INODE);
		lt = note_one(l, id, k->netns);
		if (!lt)
			return -ENOMEM;
		lt->had_drops = true;
	}
	for (it = 0; rx && htab__next(rx, &it, &key, &val);) {
		const struct ud_rx *v = val;
		uint64_t id = *(const uint64_t *)key;

		if (id && !note_one(l, id, v->netns))
			return -ENOMEM;
	}
	return 0;
}

/* Is the socket in the scratch table (just dumped)? */
static bool alive(struct lifetimes *l, uint64_t id)
{
	if (id & UD_RX_INODE)
		return socktab__by_inode(&l->scratch, (uint32_t)id) != NULL;
	return socktab__by_cookie(&l->scratch, id) != NULL;
}

/* Dump one netns's UDP and UDP-Lite sockets into the scratch table. */
static int dump_netns(struct lifetimes *l, const struct netns_table *nt,
		      uint32_t netns)
{
	int err;

	socktab__reset(&l->scratch);
	err = socktab__dump_ports(&l->scratch, nt, netns, IPPROTO_UDP, NULL, 0);
	if (err)
		return err;
	/* UDP-Lite may be absent from the kernel: then none are open */
	socktab__dump_ports(&l->scratch, nt, netns, IPPROTO_UDPLITE, NULL, 0);
	l->dumps++;
	for (int i = 0; l->seen_by_inode && i < l->scratch.n; i++) {
		struct sock_info *si = &l->scratch.v[i];

		if (si->inode)
			l->seen_by_inode(l->seen_arg, si);
	}
	return 0;
}

/* Is netns still there? A fresh scan of /proc and the mounts says. */
static bool netns_gone(uint32_t netns)
{
	struct netns_table fresh;
	bool gone;

	if (netns__scan(&fresh))
		return false; /* cannot tell: keep it */
	gone = !netns__find(&fresh, netns);
	netns__free(&fresh);
	return gone;
}

int lifetimes__closed(struct lifetimes *l, const struct netns_table *nt,
		      bool urgent, uint64_t now, uint64_t **ids_out,
		      bool **had_out)
{
	uint32_t todo[64];
	int ntodo = 0;
	size_t it = 0, n = 0, cap = 0;
	const void *key;
	void *val;
	uint64_t *ids = NULL;
	bool *had = NULL;

	*ids_out = NULL;
	*had_out = NULL;
	/* the netns due a check: with sockets pending and not checked lately */
	while (htab__next(&l->ids, &it, &key, &val)) {
		const struct lifetime *lt = val;
		uint64_t *when;
		bool listed = false;

		if (lt->closed || !lt->netns)
			continue;
		for (int i = 0; i < ntodo && !listed; i++)
			listed = todo[i] == lt->netns;
		if (listed || ntodo == (int)(sizeof(todo) / sizeof(todo[0])))
			continue;
		when = htab__find(&l->checked, &lt->netns);
		if (!urgent && when && now - *when < LIFETIMES_CHECK_NS)
			continue;
		todo[ntodo++] = lt->netns;
	}
	for (int i = 0; i < ntodo; i++) {
		uint32_t netns = todo[i];
		int err = dump_netns(l, nt, netns);
		bool gone = false;
		uint64_t *when;

		if (err == -ENOENT)
			gone = netns_gone(netns);
		if (err && !gone) {
			pr_debug("liveness dump of netns %u: %s\n", netns, strerror(-err));
			continue;
		}
		when = htab__upsert(&l->checked, &netns, NULL);
		if (!when)
			goto nomem;
		*when = now;
		for (it = 0; htab__next(&l->ids, &it, &key, &val);) {
			struct lifetime *lt = val;
			uint64_t id = *(const uint64_t *)key;

			/*
			 * Every pending socket was seen in a snapshot read
			 * before this dump: its entry was made while it lived,
			 * so a dump without it means it has closed since.
			 */
			if (lt->closed || lt->netns != netns)
				continue;
			if (!gone && alive(l, id))
				continue;
			if (n == cap) {
				size_t ncap = cap ? 2 * cap : 64;
				uint64_t *ni = realloc(ids, ncap * sizeof(*ids));
				bool *nh;

				if (!ni)
					goto nomem;
				ids = ni;
				nh = realloc(had, ncap * sizeof(*had));
				if (!nh)
					goto nomem;
				had = nh;
				cap = ncap;
			}
			ids[n] = id;
			had[n++] = lt->had_drops;
			lt->closed = true;
		}
	}
	socktab__reset(&l->scratch);
	*ids_out = ids;
	*had_out = had;
	return (int)n;
nomem:
	free(ids);
	free(had);
	return -ENOMEM;
}
