// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Keeping the socket table: which netns each update dumps whole and
 * which ports of the others (model_plan_dumps), carrying the plans out
 * (model_sync_sockets), and exact requests for the sockets of the rows
 * in view (model_refresh_rows).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "model_internal.h"
#include "util.h"
#include "sockid.h"

static struct dump_plan *plan_of(struct dump_plan *plans, int n, uint32_t netns)
{
	for (int i = 0; i < n; i++)
		if (plans[i].netns == netns)
			return &plans[i];
	return NULL;
}

/* Add a port to a plan; too many ports make a full dump. */
static void plan_port(struct dump_plan *p, uint16_t port)
{
	if (!p || p->full)
		return;
	for (int i = 0; i < p->nports; i++)
		if (p->ports[i] == port)
			return;
	if (p->nports == SOCKTAB_DUMP_PORTS) {
		p->full = true;
		return;
	}
	p->ports[p->nports++] = port;
}

static bool plan_has_port(const struct dump_plan *p, uint16_t port)
{
	for (int i = 0; i < p->nports; i++)
		if (p->ports[i] == port)
			return true;
	return false;
}

/* Does the table hold the sockets of netns (dumped, and in view since)? */
static bool netns_held(const struct model *m, uint32_t netns)
{
	for (int i = 0; i < m->nst_netns; i++)
		if (m->st_netns[i] == netns)
			return true;
	return false;
}

/* The table holds the netns planned, from now on (-1: too many to list). */
static void held_netns(struct model *m, const struct dump_plan *plans, int n)
{
	m->nst_netns = n <= (int)ARRAY_SIZE(m->st_netns) ? n : -1;
	for (int i = 0; i < m->nst_netns; i++)
		m->st_netns[i] = plans[i].netns;
}

/*
 * Which netns to dump whole, and which ports of the others: see the note
 * on MODEL_FULL_DUMP_NS.
 */
void model_plan_dumps(struct model *m, struct htab *drops,
		      struct dump_plan *plans, const uint32_t *netns_list,
		      int nnetns, uint64_t now)
{
	size_t it;
	const void *key;
	void *val;

	for (int i = 0; i < nnetns; i++) {
		uint64_t *t = htab__find(&m->dumped, &netns_list[i]);

		plans[i].netns = netns_list[i];
		/*
		 * Never dumped, or not since it came (back) into view; or
		 * due. (A dump may be later than `now`, taken before it.)
		 */
		uint64_t every = m->watch_sharing && !m->port_shared
					 ? MODEL_SHARING_DUMP_NS : MODEL_FULL_DUMP_NS;

		plans[i].full = m->opts.all || !t || !netns_held(m, netns_list[i]) ||
				(now > *t && now - *t >= every);
	}
	for (it = 0; htab__next(drops, &it, &key, &val);) {
		const struct ud_key *k = key;
		const struct ud_val *v = val;
		enum cause c = model__cause(m, k->reason, k->flags);

		if (k->flags & UD_KEY_SOCK) {
			uint64_t id = k->cookie, row;
			const struct sock_info *si;
			bool known;

			if (k->flags & UD_KEY_INODE)
				id = UD_RX_INODE | (uint32_t)k->cookie;
			row = sockid__row(&m->inode2cookie, id);
			si = row & UD_RX_INODE ? NULL : htab__find(&m->known, &row);
			/*
			 * Seen by one of the model's dumps: known. One a
			 * liveness dump alone named (model__learn_socket) is
			 * not: its netns is dumped, so it is in the table (an
			 * owner, alive) like any other.
			 */
			known = !id || (si && !si->no_flow_match);
			/* a socket not seen yet: all of its netns, once */
			if (!known && !htab__find(&m->unknown, &row)) {
				struct dump_plan *p = plan_of(plans, nnetns, k->netns);

				if (p)
					p->full = true;
			}
			continue;
		}
		if (cause_is_socketless(c) || !k->dport)
			continue;
		/* a flow to attribute (new counts): the sockets on its port */
		const struct flow_attr *fa = htab__find(&m->flow_attr, k);

		if (fa && fa->n && !memcmp(&fa->last, v, sizeof(*v)))
			continue;
		if (k->flags & UD_KEY_CLOSE) {
			size_t pit = 0;
			const void *pkey;
			void *pval;

			while (htab__next(&m->by_port, &pit, &pkey, &pval)) {
				const struct port_key *pk = pkey;

				if (pk->port == k->dport && pk->proto == k->proto)
					plan_port(plan_of(plans, nnetns, pk->netns), k->dport);
			}
		} else if (model_addr_is_local(m, k->netns, k->family, k->daddr)) {
			plan_port(plan_of(plans, nnetns, k->netns), k->dport);
		}
	}
}

struct sync_ctx {
	struct dump_plan *plans;
	int n;
	bool drop_unplanned;
	const struct dump_plan *last; /* the plan of the socket before */
};

static bool sock_replaced(const struct sock_info *si, void *arg)
{
	struct sync_ctx *c = arg;
	const struct dump_plan *p = c->last;

	/* a netns's sockets are mostly together: look its plan up once */
	if (!p || p->netns != si->netns)
		p = c->last = plan_of(c->plans, c->n, si->netns);
	if (!p)
		return c->drop_unplanned; /* its netns is out of view */
	return p->full || (p->nports && plan_has_port(p, si->sport));
}

/*
 * Carry out the plans: what they dump replaces what the table had of it
 * (a socket missing from a dump has closed). drop_unplanned: the table
 * keeps only the netns planned (those in view).
 */
void model_sync_sockets(struct model *m, struct dump_plan *plans, int n,
			bool drop_unplanned, uint64_t now)
{
	struct sync_ctx c = { plans, n, drop_unplanned, NULL };
	bool any = false;
	int first;

	for (int i = 0; i < n && !any; i++)
		any = plans[i].full || plans[i].nports;
	/* the netns out of view: none, unless one has left since last time */
	if (drop_unplanned && m->nst_netns < 0)
		any = true;
	for (int i = 0; drop_unplanned && !any && i < m->nst_netns; i++)
		any = !plan_of(plans, n, m->st_netns[i]);
	if (drop_unplanned)
		held_netns(m, plans, n);
	if (!any)
		return;
	socktab__remove_if(&m->st, sock_replaced, &c);
	first = m->st.n;
	for (int i = 0; i < n; i++) {
		struct dump_plan *p = &plans[i];
		int nports = p->full ? 0 : p->nports, err;

		if (!p->full && !p->nports)
			continue;
		err = socktab__dump_ports(&m->st, &m->nt, p->netns, IPPROTO_UDP,
					  p->ports, nports);
		if (err && err != -ENOENT)
			pr_debug("socket dump of netns %u: %s\n", p->netns,
				 strerror(-err));
		/* UDP-Lite may be absent: nothing to show then */
		socktab__dump_ports(&m->st, &m->nt, p->netns, IPPROTO_UDPLITE,
				    p->ports, nports);
		if (p->full) {
			uint64_t *t = htab__upsert(&m->dumped, &p->netns, NULL);

			if (t)
				*t = now;
			m->sock_stats.full++;
		} else {
			m->sock_stats.ports++;
		}
	}
	model_remember_sockets(m, first, false, now);
}

/*
 * The sockets of the rows in view, where this update's dumps did not
 * cover them: exact requests. One that does not answer is looked for on
 * its port: gone, or alive but out of reach of an exact request (another
 * socket answers for its tuple), which is then refreshed by its port.
 */
int model_refresh_rows(struct model *m, struct dump_plan *plans, int nplans,
		       uint64_t now)
{
	struct dump_plan *again = calloc(nplans, sizeof(*again));
	int cap = m->rows.n + 1, n = 0, nmissed = 0, err = 0;
	int *idx = calloc(cap, sizeof(*idx)), *plan = calloc(cap, sizeof(*plan));
	bool *found = calloc(cap, sizeof(*found));
	struct sock_info *missed = calloc(cap, sizeof(*missed));
	size_t it;
	const void *key;
	void *val;

	if (!again || !idx || !plan || !found || !missed) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < nplans; i++)
		again[i].netns = plans[i].netns;
	/* which sockets, per netns (rows are in no order: sort them by plan) */
	for (it = 0; htab__next(&m->rows, &it, &key, &val) && n < cap;) {
		const struct row *r = val;
		struct sock_info *si, *k;
		struct dump_plan *p;

		if (r->key.kind != ROW_SOCKET || !r->dirty)
			continue;
		si = socktab__by_cookie(&m->st, r->key.cookie);
		p = si ? plan_of(plans, nplans, si->netns) : NULL;
		if (!p || p->full || plan_has_port(p, si->sport))
			continue; /* closed, or just dumped */
		k = htab__find(&m->known, &r->key.cookie);
		if (k && k->no_exact) {
			plan_port(&again[p - plans], si->sport);
			continue;
		}
		plan[n] = p - plans;
		idx[n++] = si - m->st.v;
	}
	for (int first = 0, last; first < n; first = last) {
		int pi = plan[first];

		/* gather this plan's sockets at [first, last) */
		last = first + 1;
		for (int j = last; j < n; j++)
			if (plan[j] == pi) {
				int t = idx[j];

				plan[j] = plan[last];
				idx[j] = idx[last];
				plan[last] = pi;
				idx[last++] = t;
			}
		/* an answer lost, or none: nothing is learnt of the misses */
		bool sure = !socktab__refresh(&m->st, &m->nt, plans[pi].netns,
					      idx + first, last - first, found + first);

		m->sock_stats.exact += last - first;
		for (int j = first; j < last; j++) {
			struct sock_info *si = &m->st.v[idx[j]];

			if (found[j]) {
				model_remember_fresh(m, si, now);
				continue;
			}
			m->sock_stats.exact_missed++;
			if (sure)
				missed[nmissed++] = *si;
			plan_port(&again[pi], si->sport);
		}
	}
	model_sync_sockets(m, again, nplans, false, now);
	/*
	 * Missed, but in the dump of its port as it was: out of reach of
	 * exact requests. (One that has connected since answers next time.)
	 */
	for (int i = 0; i < nmissed; i++) {
		const struct sock_info *was = &missed[i];
		struct sock_info *k = htab__find(&m->known, &was->cookie);
		struct sock_info *now_si = socktab__by_cookie(&m->st, was->cookie);

		if (k && now_si && now_si->family == was->family &&
		    now_si->sport == was->sport && now_si->dport == was->dport &&
		    now_si->ifindex == was->ifindex &&
		    !memcmp(now_si->saddr, was->saddr, 16) &&
		    !memcmp(now_si->daddr, was->daddr, 16))
			k->no_exact = true;
	}
out:
	free(again);
	free(idx);
	free(plan);
	free(found);
	free(missed);
	return err;
}
