// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The rows and their totals: model__update rebuilds them from the
 * tracer's snapshot each interval (socket rows, flow rows, the overflow
 * bucket), joins the deliveries to the socket rows, finds the owners of
 * the sockets in view and makes the sorted view.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include "model_internal.h"
#include "util.h"
#include "sockid.h"

/* How often the list of netns is made again (see model__update). */
#define NETNS_RESCAN_NS (10 * 1000000000ull)

/*
 * How often the owners of every socket in view are looked up again: from
 * the owners found before (socktab__check_owners), and by a full walk of
 * /proc at least every OWNERS_FULL_NS (or when a new socket comes into view).
 */
#define OWNERS_REFRESH_NS (10 * 1000000000ull)
/*
 * A live socket in view whose first lookup found no holder (seen in a
 * SO_REUSEPORT group made while top ran: report and doctor named the
 * members, top's summary did not) is looked for again, a second apart, a
 * few times, not only every OWNERS_REFRESH_NS.
 */
#define OWNERS_RETRY_NS (1000000000ull)
#define OWNERS_RETRIES 3
#define OWNERS_FULL_NS (60 * 1000000000ull)

/* ---- deliveries ----------------------------------------------------- */

int model__baseline_rx(struct model *m, const struct htab *rx)
{
	size_t it = 0;
	const void *key;
	void *val;

	htab__clear(&m->rx_base);
	while (htab__next(rx, &it, &key, &val)) {
		struct ud_rx *b = htab__upsert(&m->rx_base, key, NULL);

		if (!b)
			return -ENOMEM;
		*b = *(const struct ud_rx *)val;
	}
	return 0;
}

int model__update_rx(struct model *m, const struct htab *rx)
{
	size_t it = 0;
	const void *key;
	void *val;

	htab__clear(&m->rx);
	m->have_rx = rx != NULL;
	while (rx && htab__next(rx, &it, &key, &val)) {
		const struct ud_rx *v = val, *b = htab__find(&m->rx_base, key);
		struct ud_rx *d = htab__upsert(&m->rx, key, NULL);

		if (!d)
			return -ENOMEM;
		/* counts since the baseline; the peak is one since the attach */
		*d = *v;
		if (b && v->datagrams >= b->datagrams)
			d->datagrams -= b->datagrams;
	}
	return 0;
}

bool model__port_shared(struct model *m)
{
	return m->port_shared; /* set by index_port: O(1) per refresh */
}

/*
 * The deliveries per row cookie: an identity that is an inode goes to the
 * socket's cookie once a dump has named it (inode2cookie), as drop keys
 * do, so a socket counted first by inode and later by cookie adds up.
 */
static int rx_join(struct model *m)
{
	size_t it;
	const void *key;
	void *val;

	for (it = 0; htab__next(&m->rx_sock, &it, &key, &val);) {
		struct rx_sock *rs = val;

		rs->prev = rs->datagrams;
		rs->datagrams = 0;
	}
	for (it = 0; htab__next(&m->rx, &it, &key, &val);) {
		uint64_t id = *(const uint64_t *)key;
		const struct ud_rx *v = val;
		struct rx_sock *rs;

		if (!id)
			continue; /* a socket with neither cookie nor inode: no row */
		/* not dumped yet: the row stays keyed by inode too */
		id = sockid__row(&m->inode2cookie, id);
		rs = htab__upsert(&m->rx_sock, &id, NULL);
		if (!rs)
			return -ENOMEM;
		rs->datagrams += v->datagrams;
		if (v->peak > rs->peak)
			rs->peak = v->peak;
	}
	return 0;
}

static void row_rx(struct model *m, struct row *r)
{
	const struct rx_sock *rs = htab__find(&m->rx_sock, &r->key.cookie);

	if (!rs) {
		r->rx = 0;
		r->rx_rate = 0;
		return;
	}
	r->rx = rs->datagrams;
	r->rx_rate = m->interval > 0 && rs->datagrams >= rs->prev
		? (rs->datagrams - rs->prev) / m->interval : 0;
	r->queue_peak = rs->peak;
}

/* ---- rows ----------------------------------------------------------- */

static bool row_visible(struct model *m, const struct row *r)
{
	/* the kernel filters by netns, except where it cannot know it */
	if (m->opts.netns && r->key.netns != m->opts.netns)
		return false;
	if (r->key.kind == ROW_SOCKET) {
		if (m->opts.pid && !r->owned_by_pid)
			return false;
		if (m->opts.port && r->have_sock && r->sock.sport != m->opts.port)
			return false;
		return r->dirty || (m->opts.all && r->sock_alive);
	}
	/* socketless drops belong to no process */
	if (m->opts.pid)
		return false;
	return r->dirty;
}

static int cmp_rows_total(const void *a, const void *b)
{
	return row__cmp_total(*(const struct row **)a, *(const struct row **)b);
}

void model__sort_by_total(struct model *m)
{
	qsort(m->view_sockets, m->nview_sockets, sizeof(*m->view_sockets), cmp_rows_total);
	qsort(m->view_flows, m->nview_flows, sizeof(*m->view_flows), cmp_rows_total);
}

/* A socket row's owner and port, the key of model__owner_port_rows. */
static bool owner_port(const struct row *r, uint32_t *pid, uint16_t *port)
{
	if (r->key.kind != ROW_SOCKET || !r->have_sock || r->sock.npids < 1 || !r->sock.sport)
		return false;
	*pid = (uint32_t)r->sock.pids[0];
	*port = r->sock.sport;
	return true;
}

static int cmp_owner_port(const struct row *x, uint32_t netns, uint32_t pid, uint16_t port)
{
	uint32_t xpid = 0;
	uint16_t xport = 0;

	owner_port(x, &xpid, &xport);
	if (x->key.netns != netns)
		return x->key.netns < netns ? -1 : 1;
	if (xpid != pid)
		return xpid < pid ? -1 : 1;
	return xport == port ? 0 : xport < port ? -1 : 1;
}

static int cmp_op_rows(const void *a, const void *b)
{
	const struct row *x = *(const struct row **)a, *y = *(const struct row **)b;
	uint32_t pid = 0;
	uint16_t port = 0;

	owner_port(y, &pid, &port);
	return cmp_owner_port(x, y->key.netns, pid, port);
}

int model__owner_port_rows(struct model *m, const struct row *r, struct row *const **out)
{
	uint32_t pid;
	uint16_t port;
	int lo = 0, hi, first;

	if (!owner_port(r, &pid, &port))
		return 0;
	if (m->op_gen != m->view_gen || !m->op_rows) {
		free(m->op_rows);
		m->nop_rows = 0;
		m->op_rows = calloc(m->nview_sockets + 1, sizeof(*m->op_rows));
		if (!m->op_rows)
			return 0;
		for (int i = 0; i < m->nview_sockets; i++)
			if (owner_port(m->view_sockets[i], &(uint32_t){ 0 }, &(uint16_t){ 0 }))
				m->op_rows[m->nop_rows++] = m->view_sockets[i];
		qsort(m->op_rows, m->nop_rows, sizeof(*m->op_rows), cmp_op_rows);
		m->op_gen = m->view_gen;
	}
	/* the first of the key, then its run */
	hi = m->nop_rows;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (cmp_owner_port(m->op_rows[mid], r->key.netns, pid, port) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	while (lo < m->nop_rows && !cmp_owner_port(m->op_rows[lo], r->key.netns, pid, port))
		lo++;
	*out = m->op_rows + first;
	return lo - first;
}

/* Busiest in the last interval first, then the summary's order. */
static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = *(const struct row **)a, *y = *(const struct row **)b;

	if (x->rate != y->rate)
		return x->rate > y->rate ? -1 : 1;
	return cmp_rows_total(a, b);
}

/*
 * A UDP socket in view that no process holds: the tunnel device of its
 * netns that owns its port names it (read once per netns between owner
 * refreshes). The name stays with the socket (known) after it closes.
 */
static void kernel_owner(struct model *m, struct row *r)
{
	struct sock_info *k = htab__find(&m->known, &r->key.cookie);
	struct kowner_list *l;
	int created;
	char label[sizeof(r->sock.kowner)];

	if (!r->have_sock || r->sock.npids || r->sock.proto != IPPROTO_UDP || !r->sock.sport ||
	    r->sock.partial)
		return;
	l = htab__upsert(&m->kowners, &r->key.netns, &created);
	if (!l)
		return;
	if (created && kowner__read(&m->nt, r->key.netns, l))
		l->n = 0; /* not readable (privileges, gone): no name */
	if (!kowner__label(l, r->sock.sport, label, sizeof(label)))
		return;
	memcpy(r->sock.kowner, label, sizeof(label));
	if (k)
		memcpy(k->kowner, label, sizeof(label));
}

static void fill_sock(struct model *m, struct row *r)
{
	struct sock_info *si = htab__find(&m->known, &r->key.cookie);

	if (si) {
		r->have_sock = true;
		r->sock = *si;
		r->sock_alive = socktab__by_cookie(&m->st, r->key.cookie) != NULL;
		if (m->opts.pid && si->inode &&
		    htab__find(&m->pid_inodes, &si->inode))
			r->owned_by_pid = true;
	} else if (r->close_port && !r->have_sock) {
		/* closed unseen: its purge said where it lived */
		r->have_sock = true;
		r->sock = (struct sock_info){
			.cookie = r->key.cookie, .netns = r->key.netns,
			.family = r->close_family, .proto = r->close_proto,
			.sport = r->close_port, .partial = true,
		};
	}
}

int model_add_to_row(struct model *m, const struct ud_key *k,
		     const struct ud_val *v, enum cause c, uint64_t cookie,
		     uint32_t netns, uint32_t extra_flags)
{
	struct row *r;
	int err = rows__add(&m->rows, k, v, c, cookie, netns, &r);

	if (!err)
		r->flags |= extra_flags;
	return err;
}

/*
 * The pod of each socket in view, looked up when its owner is new to it
 * (its cgroup: one small read), again after POD_MISS_NS while a pod's
 * names are not found (never for an owner in no pod);
 * what was found stays the socket's after it closes, as its owner does.
 */
void model_row_pods(struct model *m, uint64_t now)
{
	for (int i = 0; m->pods && i < m->nview_sockets; i++) {
		struct row *r = m->view_sockets[i];
		struct model_pod *p;
		int created;

		if (!r->have_sock || !r->sock.npids)
			continue;
		p = htab__upsert(&m->pod_of, &r->key.cookie, &created);
		if (!p)
			return; /* out of memory: no pod names, nothing wrong */
		if (!created && p->pid == r->sock.pids[0] &&
		    (p->found || p->none || now - p->at_ns < POD_MISS_NS))
			continue;
		p->pid = r->sock.pids[0];
		p->netns = r->key.netns;
		p->at_ns = now;
		memset(&p->names, 0, sizeof(p->names));
		enum pod_lookup got = pods__cache_of_pid(m->pods, p->pid, now, &p->names);

		p->found = got == POD_FOUND;
		p->none = got == POD_NONE;
	}
}

int model__update(struct model *m, struct htab *drops,
		  const struct ud_val *overflow, const uint64_t *stats,
		  uint64_t now)
{
	uint32_t netns_list[256];
	int nnetns = 0, err;
	size_t it;
	const void *key;
	void *val;

	m->interval = (now - m->last_ns) / 1e9;
	m->last_ns = now;
	memcpy(m->stats, stats, sizeof(m->stats));
	memcpy(m->overflow, overflow, sizeof(m->overflow));

	/*
	 * The netns there are: scanned again every NETNS_RESCAN_NS, or when
	 * a drop names one not in the table (netns__run_in copes with a path
	 * that has gone meanwhile).
	 */
	bool rescan = now < m->nt_ns || now - m->nt_ns >= NETNS_RESCAN_NS ||
		      (m->opts.netns && !netns__find(&m->nt, m->opts.netns));

	for (it = 0; !rescan && htab__next(drops, &it, &key, &val);) {
		const struct ud_key *k = key;

		rescan = k->netns && !netns__find(&m->nt, k->netns);
	}
	if (rescan) {
		netns__free(&m->nt);
		if (netns__scan(&m->nt))
			return -ENOMEM;
		m->nt_ns = now;
	}

	/* which netns are in view: the filter's, or those that dropped */
	if (m->opts.netns) {
		netns_list[nnetns++] = m->opts.netns;
	} else {
		netns_list[nnetns++] = m->nt.self;
		for (it = 0; htab__next(drops, &it, &key, &val);) {
			const struct ud_key *k = key;

			if (k->netns && !model_netns_in_list(netns_list, nnetns, k->netns) &&
			    nnetns < (int)ARRAY_SIZE(netns_list))
				netns_list[nnetns++] = k->netns;
			/*
			 * A closing queue has no netns: dump every netns with a
			 * socket on its port, so which of them is gone is known.
			 */
			if ((k->flags & (UD_KEY_CLOSE | UD_KEY_SOCK)) == UD_KEY_CLOSE) {
				size_t pit = 0;
				const void *pkey;
				void *pval;

				while (htab__next(&m->by_port, &pit, &pkey, &pval)) {
					const struct port_key *pk = pkey;

					if (pk->port == k->dport && pk->proto == k->proto &&
					    !model_netns_in_list(netns_list, nnetns, pk->netns) &&
					    nnetns < (int)ARRAY_SIZE(netns_list))
						netns_list[nnetns++] = pk->netns;
				}
			}
		}
	}

	/* addresses can change: learn them again when needed */
	htab__clear(&m->local_addrs);

	/* the socket tables of those netns (this also makes cookies) */
	struct dump_plan *plans = calloc(nnetns, sizeof(*plans));

	if (!plans)
		return -ENOMEM;
	model_plan_dumps(m, drops, plans, netns_list, nnetns, now);
	model_sync_sockets(m, plans, nnetns, true, now);
	model_learn_from_rx(m, now);
	model_forget_sockets(m, now, netns_list, nnetns);
	model__refresh_pid_inodes(m);

	/* rows: rebuild the cumulative counts from the snapshot */
	for (it = 0; htab__next(&m->rows, &it, &key, &val);)
		row__reset(val);
	for (it = 0; htab__next(drops, &it, &key, &val);) {
		const struct ud_key *k = key;
		const struct ud_val *v = val;
		enum cause c = model__cause(m, k->reason, k->flags);
		struct ud_key placed;

		/* a fragment's netns by its address, where the program had none */
		if (!k->netns && (k->flags & UD_KEY_NETNS_ADDR)) {
			placed = *k;
			placed.netns = model__key_netns(m, k);
			k = &placed;
		}
		if (k->flags & UD_KEY_SOCK) {
			/* not dumped yet: stays keyed by inode */
			uint64_t cookie = sockid__row(&m->inode2cookie, sockid__of_key(k));

			/* dumped and not found: no dump is done for it again
			 * (model_plan_dumps; one a liveness dump alone named
			 * counts as not found) */
			const struct sock_info *si = cookie ? htab__find(&m->known, &cookie) : NULL;

			if (cookie && (!si || si->no_flow_match))
				htab__upsert(&m->unknown, &cookie, NULL);
			/* cookie 0: a socket with neither cookie nor inode
			 * (a kernel socket): shown with its flow */
			err = model_add_to_row(m, k, v, c, cookie, k->netns, 0);
		} else if (!cause_is_socketless(c) && k->dport) {
			err = model_add_flow(m, k, v, c);
		} else {
			err = model_add_to_row(m, k, v, c, 0, k->netns, 0);
		}
		if (err) {
			free(plans);
			return err;
		}
	}

	err = model_prune_stale(m, drops);
	if (err) {
		free(plans);
		return err;
	}
	/* the sockets of the rows in view, fresh */
	err = model_refresh_rows(m, plans, nnetns, now);
	free(plans);
	if (err)
		return err;

	/* quiet sockets, for --all */
	if (m->opts.all) {
		for (int i = 0; i < m->st.n; i++) {
			struct row_key rk = { .kind = ROW_SOCKET,
					      .netns = m->st.v[i].netns,
					      .cookie = m->st.v[i].cookie };

			if (!rows__get(&m->rows, &rk))
				return -ENOMEM;
		}
	}

	/* deliveries per socket, for the join below */
	if (m->have_rx) {
		err = rx_join(m);
		if (err)
			return err;
	}

	/* join, rates, view */
	int nsock = 0, nflow = 0;
	bool *want = calloc(m->st.n + 1, sizeof(bool));
	bool any_want = false, any_new = false;
	bool refresh_owners = now - m->owners_ns >= OWNERS_REFRESH_NS;

	free(m->view_sockets);
	free(m->view_flows);
	m->view_sockets = calloc(m->rows.n + 1, sizeof(struct row *));
	m->view_flows = calloc(m->rows.n + 1, sizeof(struct row *));
	if (!want || !m->view_sockets || !m->view_flows) {
		free(want);
		return -ENOMEM;
	}
	memset(&m->totals.cause, 0, sizeof(m->totals.cause));
	memset(&m->totals.cause_skbs, 0, sizeof(m->totals.cause_skbs));
	m->totals.drops = m->totals.skbs = m->totals.attributed = 0;
	m->totals.netns_unknown = 0;
	for (it = 0; htab__next(&m->rows, &it, &key, &val);) {
		struct row *r = val;

		if (r->key.kind == ROW_SOCKET) {
			fill_sock(m, r);
			if (m->have_rx)
				row_rx(m, r);
		}
		r->rate = m->interval > 0 ? (r->drops - r->prev_drops) / m->interval : 0;
		r->moved = r->drops != r->prev_drops || r->skbs != r->prev_skbs;
		if (r->moved || !r->moved_ns)
			r->moved_ns = now;
		r->prev_drops = r->drops;
		r->prev_skbs = r->skbs;
		/* -N: an unexplained purge addressed to one of this netns's addresses */
		if (m->opts.netns && !r->key.netns && (r->flags & UD_KEY_CLOSE) &&
		    model_addr_is_local(m, m->opts.netns, r->key.family, r->key.daddr))
			m->totals.netns_unknown += r->drops;
		if (!row_visible(m, r))
			continue;
		m->totals.drops += r->drops;
		m->totals.skbs += r->skbs;
		for (int c = 0; c < CAUSE_MAX; c++) {
			m->totals.cause[c] += r->cause[c];
			m->totals.cause_skbs[c] += r->cause_skbs[c];
		}
		if (r->key.kind == ROW_SOCKET) {
			struct sock_info *live = socktab__by_cookie(&m->st, r->key.cookie);
			struct sock_info *k = htab__find(&m->known, &r->key.cookie);

			m->totals.attributed += r->drops;
			m->view_sockets[nsock++] = r;
			/*
			 * Owners rarely change: look them up when a socket
			 * never looked at comes into view, and every
			 * OWNERS_REFRESH; for all sockets in view then.
			 */
			if (live) {
				want[live - m->st.v] = any_want = true;
				if (k && !k->owner_tried) {
					any_new = true;
					k->owner_tried = true;
				} else if (k && !k->npids && !k->kowner[0] &&
					   k->owner_retries < OWNERS_RETRIES &&
					   now - m->owners_ns >= OWNERS_RETRY_NS) {
					any_new = true;
					k->owner_retries++;
				}
			}
		} else {
			m->view_flows[nflow++] = r;
		}
	}
	m->nview_sockets = nsock;
	m->nview_flows = nflow;
	m->view_gen++;
	/*
	 * And the owners of sockets a dump has just learnt, in view or not:
	 * one that drops and closes between two refreshes is gone before it
	 * comes into view, but the drops were its process's (the row keeps
	 * the owner found while it lived). One /proc walk per dump that
	 * found new sockets, as for a new socket in view.
	 */
	if (m->owners_new) {
		for (int i = 0; i < m->st.n; i++) {
			struct sock_info *k = htab__find(&m->known, &m->st.v[i].cookie);

			if (k && !k->owner_tried) {
				want[i] = any_want = any_new = true;
				k->owner_tried = true;
			}
		}
		m->owners_new = false;
	}

	/* owners of the sockets in view (the /proc walk ss -p does) */
	bool looked = any_want && (any_new || refresh_owners);

	if (looked) {
		bool full = any_new || now - m->owners_full_ns >= OWNERS_FULL_NS;

		if (full || socktab__check_owners(&m->st, want)) {
			socktab__find_owners(&m->st, want);
			m->owners_full_ns = now;
		}
		m->owners_ns = now;
	}
	/* what the walk found is the socket's from now on, closed or not */
	for (int i = 0; looked && i < m->st.n; i++) {
		const struct sock_info *live = &m->st.v[i];
		struct sock_info *k = want[i] ? htab__find(&m->known, &live->cookie) : NULL;

		if (k) {
			k->npids = live->npids;
			memcpy(k->pids, live->pids, sizeof(live->pids));
			memcpy(k->fds, live->fds, sizeof(live->fds));
			memcpy(k->comm, live->comm, sizeof(live->comm));
		}
	}
	free(want);
	for (int i = 0; i < nsock; i++) {
		struct row *r = m->view_sockets[i];
		struct sock_info *live = socktab__by_cookie(&m->st, r->key.cookie);
		struct sock_info *k = htab__find(&m->known, &r->key.cookie);

		/*
		 * A lookup that finds no holder keeps the owner found before:
		 * a socket whose last fd is closed lives on a moment (its queue
		 * freed after an RCU grace period), and its drops stay its
		 * process's in every view (a new holder replaces it).
		 */
		if (live && live->npids) {
			r->sock.npids = live->npids;
			memcpy(r->sock.pids, live->pids, sizeof(live->pids));
			memcpy(r->sock.fds, live->fds, sizeof(live->fds));
			memcpy(r->sock.comm, live->comm, sizeof(live->comm));
			if (k) {
				k->npids = live->npids;
				memcpy(k->pids, live->pids, sizeof(live->pids));
				memcpy(k->fds, live->fds, sizeof(live->fds));
				memcpy(k->comm, live->comm, sizeof(live->comm));
			}
		}
	}

	/* the pods of their owners (pods.h), where pods are looked up */
	model_row_pods(m, now);

	/* sockets no process holds: a kernel tunnel device's? (kowner.h) */
	if (looked)
		htab__clear(&m->kowners);
	for (int i = 0; i < nsock; i++)
		kernel_owner(m, m->view_sockets[i]);

	/* the overflow bucket: no socket, but the cause is kept */
	m->totals.overflow = m->totals.overflow_skbs = 0;
	for (int s = 0; s < UD_OVERFLOW_SLOTS; s++) {
		if (!overflow[s].skbs)
			continue;
		m->totals.overflow += overflow[s].datagrams;
		m->totals.overflow_skbs += overflow[s].skbs;
		m->totals.cause[model__cause(m, s, 0)] += overflow[s].datagrams;
		m->totals.cause_skbs[model__cause(m, s, 0)] += overflow[s].skbs;
	}
	m->totals.drops += m->totals.overflow;
	m->totals.skbs += m->totals.overflow_skbs;
	m->totals.rate = m->interval > 0
		? (m->totals.drops - m->totals.prev_drops) / m->interval : 0;
	m->totals.prev_drops = m->totals.drops;

	qsort(m->view_sockets, nsock, sizeof(*m->view_sockets), cmp_rows);
	qsort(m->view_flows, nflow, sizeof(*m->view_flows), cmp_rows);

	/*
	 * netns seen for the first time: the kernel's counting starts now,
	 * and so does udpdrop's (what it has counted so far is the base).
	 * Without --netns every netns is in view, drops or not: a netns whose
	 * counters rise while udpdrop counts nothing there must show.
	 */
	for (int i = 0; i < nnetns + (m->opts.netns ? 0 : m->nt.n); i++) {
		uint32_t ns = i < nnetns ? netns_list[i] : m->nt.v[i - nnetns].inode;
		struct netns_counters *nc = model_counters_for(m, ns);

		if (!nc)
			continue;
		/*
		 * First sight: the kernel's base is read by the next
		 * model__read_counters, just before the next tracer read,
		 * and udpdrop's base is taken from that read's snapshot (the
		 * order the start-up baseline has). Until then, no deltas.
		 */
		if (nc->base_fresh) {
			for (int c = 0; c < CAUSE_MAX; c++) {
				nc->cause_base[c] = model_netns_cause_all(m, nc->netns, c, false);
				nc->cause_units_base[c] = model_netns_cause_all(m, nc->netns, c, true);
			}
			nc->base_fresh = false;
		} else if (nc->have_base && !nc->in_view) {
			mib__read(&m->nt, nc->netns, &nc->cur);
		}
		nc->in_view = true;
	}
	return 0;
}
