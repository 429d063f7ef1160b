// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include "owner.h"
#include "udpdrop.h"

void owner__init(struct owner *o, struct model *m)
{
	memset(o, 0, sizeof(*o));
	o->m = m;
}

void owner__free(struct owner *o)
{
	free(o->ports);
	memset(o, 0, sizeof(*o));
}

static void add_port(struct owner *o, uint32_t netns, uint16_t port)
{
	for (int i = 0; i < o->nports; i++)
		if (o->ports[i].netns == netns && o->ports[i].port == port)
			return;
	if (o->nports == o->cap) {
		int cap = o->cap ? 2 * o->cap : 16;
		void *p = realloc(o->ports, cap * sizeof(*o->ports));

		if (!p)
			return; /* a port less: its socketless drops are not kept */
		o->ports = p;
		o->cap = cap;
	}
	o->ports[o->nports].netns = netns;
	o->ports[o->nports].port = port;
	o->nports++;
}

int owner__scan(struct owner *o, uint64_t now_ns)
{
	struct model *m = o->m;
	size_t it = 0;
	const void *key;
	void *val;
	int added;

	if (!m->opts.pid)
		return 0;
	added = model__refresh_pid_inodes(m);
	o->scan_ns = now_ns;
	o->nports = 0;
	while (htab__next(&m->known, &it, &key, &val)) {
		const struct sock_info *si = val;

		if (si->inode && si->sport && htab__find(&m->pid_inodes, &si->inode))
			add_port(o, si->netns, si->sport);
	}
	return added;
}

bool owner__described(const struct owner *o, uint64_t cookie, uint32_t flags)
{
	struct model *m = o->m;
	uint64_t id = cookie;

	if (!(flags & UD_KEY_SOCK) || !cookie)
		return true;
	if (flags & UD_KEY_INODE) {
		uint32_t ino = cookie;

		if (htab__find(&m->inode2cookie, &ino))
			return true;
		id = UD_RX_INODE | ino;
	} else if (htab__find(&m->known, &id)) {
		return true;
	}
	return htab__find(&m->unknown, &id) != NULL;
}

/* -N: a closing queue is the netns's if its flow went to a socket there. */
static enum owner_verdict close_in_netns(const struct owner *o,
					 const struct ud_key *k, bool final)
{
	const struct flow_attr *fa = htab__find(&o->m->flow_attr, k);

	if (!fa || !fa->n) {
		/*
		 * No flow counts for it: the kernel counted the purge as its
		 * socket's (close_owner), and the event, made before the
		 * socket was known, is this netns's if a socket of this
		 * netns had its port.
		 */
		struct port_key pk = { .netns = o->m->opts.netns, .port = k->dport,
				       .proto = k->proto };
		const struct port_socks *ps = htab__find(&o->m->by_port, &pk);

		if (ps && ps->n)
			return OWNER_YES;
		return final ? OWNER_NO : OWNER_UNKNOWN;
	}
	for (int i = 0; i < fa->n; i++)
		if (fa->seg[i].cookie && fa->seg[i].netns == o->m->opts.netns)
			return OWNER_YES;
	return OWNER_NO;
}

/* A closing queue the kernel named no socket (and so no netns) for. */
static bool close_unnamed(const struct ud_key *k)
{
	return (k->flags & (UD_KEY_CLOSE | UD_KEY_SOCK)) == UD_KEY_CLOSE;
}

bool owner__scoped(const struct owner *o, const struct ud_key *k)
{
	return o->m->opts.pid || (o->m->opts.netns && close_unnamed(k));
}

enum owner_verdict owner__judge(const struct owner *o, const struct ud_key *k,
				bool final)
{
	struct model *m = o->m;
	const struct sock_info *si;
	uint32_t inode;

	if (m->opts.netns && close_unnamed(k)) {
		enum owner_verdict v = close_in_netns(o, k, final);

		if (v != OWNER_YES)
			return v;
	}
	if (!m->opts.pid)
		return OWNER_YES;
	if (!(k->flags & UD_KEY_SOCK)) {
		/* a closing socket's queue has no netns (0): by port alone */
		for (int i = 0; k->dport && i < o->nports; i++)
			if (o->ports[i].port == k->dport &&
			    (!k->netns || o->ports[i].netns == k->netns))
				return OWNER_YES;
		return final ? OWNER_NO : OWNER_UNKNOWN;
	}
	if (!k->cookie)
		return OWNER_NO; /* a kernel socket */
	if (k->flags & UD_KEY_INODE) {
		inode = k->cookie;
	} else {
		si = htab__find(&m->known, &k->cookie);
		if (!si)
			return final ? OWNER_NO : OWNER_UNKNOWN;
		inode = si->inode;
	}
	if (inode && htab__find(&m->pid_inodes, &inode))
		return OWNER_YES;
	/* an inode the last look missed may be a newer socket of the process */
	if (!final && !owner__described(o, k->cookie, k->flags))
		return OWNER_UNKNOWN;
	return OWNER_NO;
}
