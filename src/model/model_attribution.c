// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Flow attribution: the socket a socketless drop headed for a port was
 * for (attribute_flow, among the sockets seen on the port), and a flow's
 * counts split between the sockets it went to in turn (struct flow_attr).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include "model_internal.h"
#include "util.h"
#include "sockid.h"

/*
 * Could a datagram to addr be for netns itself, as the kernel would
 * deliver it? Its own addresses, all of 127/8, the limited broadcast and
 * each subnet's, and a multicast group only where some socket (or the
 * kernel) joined it on one of the netns's interfaces: the IP layer drops
 * a group nobody joined before any socket is looked up, so a socket bound
 * to the port is not its receiver (netns__local_addrs). When the list
 * cannot be read or was cut short, say yes: better a match by port than
 * no match at all.
 */
bool model_addr_is_local(struct model *m, uint32_t netns, int family,
			 const uint8_t *addr)
{
	struct local_addrs *la = htab__find(&m->local_addrs, &netns);
	static const uint8_t limited_bcast[4] = { 255, 255, 255, 255 };

	if (family == AF_INET &&
	    (addr[0] == 127 || !memcmp(addr, limited_bcast, 4)))
		return true;
	if (!la) {
		la = htab__upsert(&m->local_addrs, &netns, NULL);
		if (!la)
			return true;
		if (netns__local_addrs(&m->nt, netns, la))
			la->n = -1; /* unreadable */
	}
	if (la->n < 0 || la->n >= LOCAL_ADDRS_MAX)
		return true;
	for (int i = 0; i < la->n; i++)
		if (la->v[i].family == family &&
		    !memcmp(la->v[i].addr, addr, family == AF_INET6 ? 16 : 4))
			return true;
	return false;
}

uint32_t model__key_netns(struct model *m, const struct ud_key *k)
{
	uint32_t found = 0;

	if (k->netns || !(k->flags & UD_KEY_NETNS_ADDR))
		return k->netns;
	if (m->opts.netns)
		return model_addr_is_local(m, m->opts.netns, k->family, k->daddr) ? m->opts.netns : 0;
	for (int i = 0; i < m->nt.n; i++) {
		uint32_t ns = m->nt.v[i].inode;

		if (!model_addr_is_local(m, ns, k->family, k->daddr))
			continue;
		if (found)
			return 0; /* local in two: not told apart (loopback, say) */
		found = ns;
	}
	return found;
}

/* A multicast or broadcast destination (IPv4 224/4 and above, IPv6 ff00::/8). */
static bool addr_is_group(int family, const uint8_t *addr)
{
	return family == AF_INET ? addr[0] >= 224 : family == AF_INET6 && addr[0] == 0xff;
}

static int cmp_last_seen(const void *a, const void *b)
{
	const struct sock_info *x = a, *y = b;

	return x->last_seen_ns > y->last_seen_ns ? -1 : x->last_seen_ns < y->last_seen_ns;
}

/*
 * Has the model's own dump named the socket of this inode? (One that only
 * lifetimes' dump saw is no flow's candidate: its partial record, known by
 * the port, stands in for it.)
 */
static bool named_by_dump(struct model *m, uint32_t ino)
{
	uint64_t *c = htab__find(&m->inode2cookie, &ino);
	const struct sock_info *full = c ? htab__find(&m->known, c) : NULL;

	return c && !(full && full->no_flow_match);
}

/* A socket known by its inode from deliveries that a dump named since. */
static bool superseded(struct model *m, const struct sock_info *si)
{
	return si->partial && (si->cookie & UD_RX_INODE) &&
	       named_by_dump(m, (uint32_t)si->cookie);
}

static void candidates(struct model *m, const struct port_socks *ps,
		       bool alive, struct socktab *one)
{
	for (int i = 0; i < ps->n && one->n < one->cap; i++) {
		struct sock_info *ks = htab__find(&m->known, &ps->cookies[i]);

		if (ks && !superseded(m, ks) &&
		    !!socktab__by_cookie(&m->st, ps->cookies[i]) == alive) {
			one->v[one->n] = *ks;
			/*
			 * A partial record whose socket lifetimes' dump named:
			 * it still matches by port alone, but its drops are the
			 * cookie's row, where its deliveries are.
			 */
			if (ks->partial)
				one->v[one->n].cookie = sockid__row(&m->inode2cookie, ks->cookie);
			one->n++;
		}
	}
}

/*
 * Sockets known from their deliveries alone (struct ud_rx says where each
 * lives): one that queues datagrams and closes between two dumps is still
 * known by netns and port, so the purge of its queue at close, which the
 * kernel reports with no socket and no netns, is given to it. (A dump
 * that finds it replaces this with the whole story.)
 */
void model_learn_from_rx(struct model *m, uint64_t now)
{
	size_t it = 0;
	const void *key;
	void *val;

	while (htab__next(&m->rx, &it, &key, &val)) {
		uint64_t id = *(const uint64_t *)key;
		const struct ud_rx *v = val;
		struct sock_info si = {};

		if (!id || !v->netns || !v->lport)
			continue;
		if (m->opts.netns && v->netns != m->opts.netns)
			continue;
		if ((id & UD_RX_INODE) && named_by_dump(m, (uint32_t)id))
			continue; /* dumped: known by its cookie */
		/*
		 * Seen once: its last_seen stays when it was learnt, so of
		 * two sockets that had the same port in turn, the later one
		 * is the likelier owner of a purge (candidates' order).
		 */
		const struct sock_info *k = htab__find(&m->known, &id);

		if (k) {
			/*
			 * Known from a liveness dump alone (model__learn_socket:
			 * no flow candidate, no owner looked up): its deliveries
			 * say it lives on its port, so it is one now, as a
			 * socket the model dumped itself (a second socket on
			 * the port makes it shared: record arms the close).
			 */
			if (k->no_flow_match) {
				si = *k;
				si.no_flow_match = false;
				model_remember_sock(m, &si, false, now);
			}
			continue;
		}
		si.cookie = id;
		si.inode = id & UD_RX_INODE ? (uint32_t)id : 0;
		si.netns = v->netns;
		si.family = v->family;
		si.proto = v->proto;
		si.sport = v->lport;
		si.partial = true;
		model_remember_sock(m, &si, false, now);
	}
}

/*
 * The socket a socketless drop was headed for, among the sockets seen on
 * its port so far: live ones first (the kernel's own preference among
 * them), then sockets that have closed since. Only datagrams addressed to
 * this netns qualify: a packet leaving or forwarded is no local socket's.
 * A closing socket's purged queue (UD_KEY_CLOSE) has no netns: look in
 * every netns, closed sockets first; *netns gets the socket's.
 */
static uint64_t attribute_flow(struct model *m, const struct ud_key *k,
			       uint32_t *netns)
{
	bool closing = k->flags & UD_KEY_CLOSE;
	struct sock_info cand[PORT_SOCKS_MAX * 4];
	struct socktab one = { .v = cand, .cap = ARRAY_SIZE(cand) };

	if (!closing && !model_addr_is_local(m, k->netns, k->family, k->daddr))
		return 0;
	for (int pass = 0; pass < 2; pass++) {
		bool alive = closing ? pass == 1 : pass == 0;
		size_t it = 0;
		const void *key;
		void *val;

		one.n = 0;
		if (!closing) {
			struct port_key pk = { .netns = k->netns, .port = k->dport,
					       .proto = k->proto };
			struct port_socks *ps = htab__find(&m->by_port, &pk);

			if (ps)
				candidates(m, ps, alive, &one);
		} else {
			while (htab__next(&m->by_port, &it, &key, &val)) {
				const struct port_key *pk = key;

				if (pk->port == k->dport && pk->proto == k->proto)
					candidates(m, val, alive, &one);
			}
		}
		if (closing) /* the socket that closed last is the likeliest */
			qsort(cand, one.n, sizeof(cand[0]), cmp_last_seen);
		for (int i = 0; i < one.n; i++) {
			struct sock_info *si;

			/*
			 * a closing queue: only a netns the datagram was for (a
			 * group's, queued, was delivered: its socket joined it,
			 * and may have been its last member, gone with it)
			 */
			if (closing && !addr_is_group(k->family, k->daddr) &&
			    !model_addr_is_local(m, cand[i].netns, k->family, k->daddr))
				continue;
			/* each candidate in its own netns (one netns if not closing) */
			si = socktab__lookup(&one, cand[i].netns, k->family, k->proto,
					     k->saddr, k->daddr, k->dport);
			if (si) {
				*netns = si->netns;
				return si->cookie;
			}
		}
	}
	return 0;
}

static void val_sub(struct ud_val *out, const struct ud_val *a,
		    const struct ud_val *b)
{
	/* cumulative counts only grow: a >= b field by field */
	out->datagrams = a->datagrams - b->datagrams;
	out->skbs = a->skbs - b->skbs;
	out->bytes = a->bytes - b->bytes;
}

/*
 * A socketless drop headed for a port: it belongs to the socket that
 * would have received it *when it was dropped*. Each interval the flow's
 * new counts go to the socket that matches now; a socket that closes and
 * another that binds the port later each keep their own share, and
 * counts from before any socket matched stay with the flow.
 */
int model_add_flow(struct model *m, const struct ud_key *k,
		   const struct ud_val *v, enum cause c)
{
	struct flow_attr *fa = htab__upsert(&m->flow_attr, k, NULL);
	uint32_t netns = k->netns;
	uint64_t match;

	if (!fa)
		return -ENOMEM;
	if (fa->n == 0 || memcmp(&fa->last, v, sizeof(*v))) {
		match = attribute_flow(m, k, &netns);
		if (fa->n == 0) {
			fa->n = 1;
			fa->seg[0].cookie = match;
			fa->seg[0].netns = netns;
		} else if (match != fa->seg[fa->n - 1].cookie && fa->n < FLOW_SEGS) {
			/*
			 * The last segment is kept for "no socket": once the
			 * others are used up, what follows stays with the flow
			 * rather than going to a socket that has gone.
			 */
			if (fa->n == FLOW_SEGS - 1)
				match = 0;
			if (match != fa->seg[fa->n - 1].cookie) {
				fa->seg[fa->n].cookie = match;
				fa->seg[fa->n].netns = netns;
				fa->seg[fa->n].start = fa->last;
				fa->n++;
			}
		}
		fa->last = *v;
	}
	struct flow_part parts[FLOW_SEGS];
	int n = model__flow_parts(m, k, v, parts, FLOW_SEGS);

	for (int i = 0; i < n; i++) {
		int err = model_add_to_row(m, k, &parts[i].val, c, parts[i].cookie,
					   parts[i].netns, parts[i].cookie ? ROW_VIA_FLOW : 0);

		if (err)
			return err;
	}
	return 0;
}

int model__flows_to_split(struct model *m, struct ud_key *out, int max)
{
	size_t it = 0;
	const void *key;
	void *val;
	int n = 0;

	while (n < max && htab__next(&m->flow_attr, &it, &key, &val)) {
		const struct flow_attr *fa = val;

		if (fa->n >= FLOW_SEGS - 2)
			out[n++] = *(const struct ud_key *)key;
	}
	return n;
}

void model__flow_restart(struct model *m, const struct ud_key *k)
{
	struct flow_attr *fa = htab__find(&m->flow_attr, k);

	if (fa)
		memset(fa, 0, sizeof(*fa));
}

int model__flow_parts(struct model *m, const struct ud_key *k,
		      const struct ud_val *v, struct flow_part *out, int max)
{
	const struct flow_attr *fa = htab__find(&m->flow_attr, k);
	int n = 0;

	for (int i = 0; fa && i < fa->n && n < max; i++) {
		struct ud_val part;

		val_sub(&part, i + 1 < fa->n ? &fa->seg[i + 1].start : v,
			&fa->seg[i].start);
		if (!part.skbs)
			continue;
		out[n].cookie = fa->seg[i].cookie;
		out[n].netns = fa->seg[i].netns;
		out[n++].val = part;
	}
	return n;
}
