// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "model.h"
#include "util.h"

/* How often the owners of every socket in view are looked up again. */
#define OWNERS_REFRESH_NS (10 * 1000000000ull)

int model__init(struct model *m, const struct model_opts *o)
{
	int err;

	memset(m, 0, sizeof(*m));
	m->opts = *o;
	memset(m->cause_cache, -1, sizeof(m->cause_cache));
	err = reasons__load(&m->reasons, NULL);
	if (err)
		return err;
	/* without symbols locations print as addresses: not fatal */
	if (ksyms__load(&m->ksyms, NULL))
		pr_warn("cannot read /proc/kallsyms: drop locations stay addresses\n");
	if (netns__scan(&m->nt) || socktab__init(&m->st) ||
	    htab__init(&m->known, sizeof(uint64_t), sizeof(struct sock_info)) ||
	    htab__init(&m->inode2cookie, sizeof(uint32_t), sizeof(uint64_t)) ||
	    htab__init(&m->flow_attr, sizeof(struct ud_key), sizeof(uint64_t)) ||
	    htab__init(&m->by_port, sizeof(struct port_key), sizeof(struct port_socks)) ||
	    htab__init(&m->rows, sizeof(struct row_key), sizeof(struct row)) ||
	    htab__init(&m->pid_inodes, sizeof(uint32_t), 1))
		return -ENOMEM;
	m->start_ns = m->last_ns = now_ns();
	m->start_wall = wall_time();
	return 0;
}

void model__free(struct model *m)
{
	reasons__free(&m->reasons);
	ksyms__free(&m->ksyms);
	netns__free(&m->nt);
	socktab__free(&m->st);
	htab__free(&m->known);
	htab__free(&m->inode2cookie);
	htab__free(&m->flow_attr);
	htab__free(&m->by_port);
	htab__free(&m->rows);
	htab__free(&m->pid_inodes);
	free(m->counters);
	free(m->view_sockets);
	free(m->view_flows);
	memset(m, 0, sizeof(*m));
}

const char *model__reason_name(struct model *m, uint32_t reason, char *buf,
			       int len)
{
	return reasons__name(&m->reasons, reason, buf, len);
}

enum cause model__cause(struct model *m, uint32_t reason, uint32_t flags)
{
	bool cacheable = reason < sizeof(m->cause_cache) &&
			 !(flags & (UD_KEY_FAIL_RCVBUF | UD_KEY_FAIL_MEM));
	char buf[32];
	enum cause c;

	if (cacheable && m->cause_cache[reason] >= 0)
		return m->cause_cache[reason];
	c = cause__classify(reasons__name(&m->reasons, reason, buf, sizeof(buf)),
			    flags);
	if (cacheable)
		m->cause_cache[reason] = c;
	return c;
}

enum cause row__main_cause(const struct row *r)
{
	int best = CAUSE_OTHER;

	for (int c = 0; c < CAUSE_MAX; c++)
		if (r->cause[c] > r->cause[best] ||
		    (r->cause[c] == r->cause[best] &&
		     r->cause_skbs[c] > r->cause_skbs[best]))
			best = c;
	return best;
}

const char *model__netns_label(struct model *m, uint32_t netns, char *buf,
			       int len)
{
	const struct netns_info *ni = netns__find(&m->nt, netns);

	if (ni && ni->name[0])
		return ni->name;
	snprintf(buf, len, "%u", netns);
	return buf;
}

int cause__mibs(enum cause c, enum mib_id *ids, int n)
{
	static const struct {
		enum cause c;
		enum mib_id ids[3];
		int n;
	} map[] = {
		{ CAUSE_RCVBUF, { MIB_UdpRcvbufErrors, MIB_Udp6RcvbufErrors, MIB_UdpLiteRcvbufErrors }, 3 },
		{ CAUSE_UDP_MEM, { MIB_UdpMemErrors, MIB_Udp6MemErrors }, 2 },
		{ CAUSE_NO_SOCKET, { MIB_UdpNoPorts, MIB_Udp6NoPorts }, 2 },
		{ CAUSE_CHECKSUM, { MIB_UdpInCsumErrors, MIB_Udp6InCsumErrors, MIB_UdpLiteInCsumErrors }, 3 },
		{ CAUSE_FRAG_TIMEOUT, { MIB_IpReasmTimeout, MIB_Ip6ReasmTimeout }, 2 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (map[i].c == c) {
			int k = map[i].n < n ? map[i].n : n;

			memcpy(ids, map[i].ids, k * sizeof(*ids));
			return k;
		}
	return 0;
}

/* ---- kernel counters ---------------------------------------------- */

static struct netns_counters *counters_for(struct model *m, uint32_t netns)
{
	struct netns_counters *nc;

	for (int i = 0; i < m->ncounters; i++)
		if (m->counters[i].netns == netns)
			return &m->counters[i];
	nc = realloc(m->counters, (m->ncounters + 1) * sizeof(*nc));
	if (!nc)
		return NULL;
	m->counters = nc;
	nc = &m->counters[m->ncounters++];
	memset(nc, 0, sizeof(*nc));
	nc->netns = netns;
	return nc;
}

static void counters_read(struct model *m, uint32_t netns)
{
	struct netns_counters *nc = counters_for(m, netns);

	if (!nc)
		return;
	if (!nc->have_base) {
		/* first sight: counting starts now for this netns */
		if (mib__read(&m->nt, netns, &nc->base))
			return;
		nc->have_base = true;
		nc->cur = nc->base;
		return;
	}
	mib__read(&m->nt, netns, &nc->cur);
}

static void remember_sockets(struct model *m, bool baseline);

int model__baseline(struct model *m)
{
	netns__free(&m->nt);
	if (netns__scan(&m->nt))
		return -ENOMEM;
	socktab__reset(&m->st);
	for (int i = 0; i < m->nt.n; i++) {
		uint32_t ns = m->nt.v[i].inode;

		if (m->opts.netns && ns != m->opts.netns)
			continue;
		counters_read(m, ns);
		socktab__dump(&m->st, &m->nt, ns, IPPROTO_UDP);
	}
	remember_sockets(m, true);
	return 0;
}

void model__baseline_counts(struct model *m, struct htab *drops)
{
	size_t it = 0;
	const void *key;
	void *val;

	/* what udpdrop had counted when the counters were read */
	while (htab__next(drops, &it, &key, &val)) {
		const struct ud_key *k = key;
		const struct ud_val *v = val;
		struct netns_counters *nc = counters_for(m, k->netns);

		if (nc)
			nc->cause_base[model__cause(m, k->reason, k->flags)] += v->datagrams;
	}
}

void model__read_counters(struct model *m)
{
	for (int i = 0; i < m->ncounters; i++)
		if (m->counters[i].have_base)
			mib__read(&m->nt, m->counters[i].netns, &m->counters[i].cur);
}

uint64_t model__netns_cause(struct model *m, uint32_t netns, enum cause c)
{
	struct netns_counters *nc = NULL;
	uint64_t n = 0;

	for (int i = 0; i < m->nview_sockets; i++)
		if (m->view_sockets[i]->key.netns == netns)
			n += m->view_sockets[i]->cause[c];
	for (int i = 0; i < m->nview_flows; i++)
		if (m->view_flows[i]->key.netns == netns)
			n += m->view_flows[i]->cause[c];
	for (int i = 0; i < m->ncounters; i++)
		if (m->counters[i].netns == netns)
			nc = &m->counters[i];
	if (nc && nc->cause_base[c] <= n)
		n -= nc->cause_base[c];
	return n;
}

/* ---- the socket table --------------------------------------------- */

static void index_port(struct model *m, const struct sock_info *si)
{
	struct port_key pk = { .netns = si->netns, .port = si->sport,
			       .proto = si->proto };
	struct port_socks *ps;

	if (!si->sport)
		return;
	ps = htab__upsert(&m->by_port, &pk, NULL);
	if (!ps)
		return;
	if (ps->n == PORT_SOCKS_MAX) {
		memmove(ps->cookies, ps->cookies + 1,
			(PORT_SOCKS_MAX - 1) * sizeof(ps->cookies[0]));
		ps->n--;
	}
	ps->cookies[ps->n++] = si->cookie;
}

/*
 * Keep the last word on every socket seen, so rows of sockets that have
 * closed still name them. sk_drops counts from the socket's birth: note
 * where it stood when udpdrop started (0 for sockets born later).
 */
static void remember_sockets(struct model *m, bool baseline)
{
	for (int i = 0; i < m->st.n; i++) {
		struct sock_info *si = &m->st.v[i];
		int created;
		struct sock_info *k = htab__upsert(&m->known, &si->cookie, &created);
		uint64_t *c;

		if (!k)
			return;
		si->drops_base = created ? (baseline ? si->drops : 0) : k->drops_base;
		/* the dump knows no owners: keep those found earlier */
		struct sock_info prev = *k;

		*k = *si;
		k->npids = prev.npids;
		memcpy(k->pids, prev.pids, sizeof(k->pids));
		memcpy(k->comm, prev.comm, sizeof(k->comm));
		k->owner_tried = prev.owner_tried;
		if (si->inode && (c = htab__upsert(&m->inode2cookie, &si->inode, NULL)))
			*c = si->cookie;
		if (created)
			index_port(m, si);
	}
}

static bool netns_in_list(const uint32_t *list, int n, uint32_t netns)
{
	for (int i = 0; i < n; i++)
		if (list[i] == netns)
			return true;
	return false;
}

static void refresh_pid_inodes(struct model *m)
{
	uint32_t inodes[4096];
	int n;

	if (!m->opts.pid)
		return;
	n = socktab__pid_inodes(m->opts.pid, inodes, ARRAY_SIZE(inodes));
	for (int i = 0; i < n; i++)
		htab__upsert(&m->pid_inodes, &inodes[i], NULL);
}

/*
 * The socket a socketless drop was headed for, among the sockets seen on
 * its port so far: live ones first (the kernel's own preference among
 * them), then sockets that have closed since (e.g. purged at close).
 */
static uint64_t attribute_flow(struct model *m, const struct ud_key *k)
{
	struct port_key pk = { .netns = k->netns, .port = k->dport, .proto = k->proto };
	struct port_socks *ps = htab__find(&m->by_port, &pk);
	struct sock_info cand[PORT_SOCKS_MAX];
	struct socktab one = { .v = cand, .cap = PORT_SOCKS_MAX };
	uint64_t cookie = 0;

	if (!ps)
		return 0;
	for (int pass = 0; pass < 2 && !cookie; pass++) {
		one.n = 0;
		for (int i = 0; i < ps->n; i++) {
			struct sock_info *ks = htab__find(&m->known, &ps->cookies[i]);
			bool alive = socktab__by_cookie(&m->st, ps->cookies[i]);

			if (ks && alive == (pass == 0))
				cand[one.n++] = *ks;
		}
		struct sock_info *si = socktab__lookup(&one, k->netns, k->family,
						       k->proto, k->saddr, k->daddr,
						       k->dport);
		if (si)
			cookie = si->cookie;
	}
	return cookie;
}

/* Causes whose drops are never a bound socket's, whatever is bound now. */
static bool cause_is_socketless(enum cause c)
{
	return c == CAUSE_NO_SOCKET;
}

/* ---- rows ----------------------------------------------------------- */

static struct row *row_for(struct model *m, const struct row_key *rk)
{
	int created;
	struct row *r = htab__upsert(&m->rows, rk, &created);

	if (r && created)
		r->key = *rk;
	return r;
}

static void row_add(struct model *m, struct row *r, const struct ud_key *k,
		    const struct ud_val *v, enum cause c)
{
	int i;

	r->dirty = true;
	r->drops += v->datagrams;
	r->skbs += v->skbs;
	r->bytes += v->bytes;
	r->cause[c] += v->datagrams;
	r->cause_skbs[c] += v->skbs;
	r->flags |= k->flags;
	for (i = 0; i < r->nreasons; i++)
		if (r->reasons[i].reason == k->reason)
			break;
	if (i == r->nreasons) {
		if (r->nreasons < ROW_MAX_REASONS)
			r->reasons[r->nreasons++].reason = k->reason;
		else
			i = ROW_MAX_REASONS - 1; /* rare: fold into the last */
	}
	r->reasons[i].drops += v->datagrams;
	r->reasons[i].skbs += v->skbs;
	for (i = 0; i < r->nlocs; i++)
		if (r->locs[i].addr == k->location)
			break;
	if (i == r->nlocs) {
		if (r->nlocs < ROW_MAX_LOCS)
			r->locs[r->nlocs++].addr = k->location;
		else
			i = ROW_MAX_LOCS - 1;
	}
	r->locs[i].skbs += v->skbs;
}

static void row_reset(struct row *r)
{
	r->drops = r->skbs = r->bytes = 0;
	memset(r->cause, 0, sizeof(r->cause));
	memset(r->cause_skbs, 0, sizeof(r->cause_skbs));
	memset(r->reasons, 0, sizeof(r->reasons));
	r->nreasons = 0;
	memset(r->locs, 0, sizeof(r->locs));
	r->nlocs = 0;
	r->dirty = false;
	r->sock_alive = false;
}

static bool row_visible(struct model *m, const struct row *r)
{
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

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = *(const struct row **)a, *y = *(const struct row **)b;

	if (x->rate != y->rate)
		return x->rate > y->rate ? -1 : 1;
	if (x->drops != y->drops)
		return x->drops > y->drops ? -1 : 1;
	if (x->skbs != y->skbs)
		return x->skbs > y->skbs ? -1 : 1;
	/* stable tie-breaker: the key itself */
	return memcmp(&x->key, &y->key, sizeof(x->key));
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

	/* which netns are in view: the filter's, or those that dropped */
	netns__free(&m->nt);
	if (netns__scan(&m->nt))
		return -ENOMEM;
	if (m->opts.netns) {
		netns_list[nnetns++] = m->opts.netns;
	} else {
		netns_list[nnetns++] = m->nt.self;
		for (it = 0; htab__next(drops, &it, &key, &val);) {
			const struct ud_key *k = key;

			if (!netns_in_list(netns_list, nnetns, k->netns) &&
			    nnetns < (int)ARRAY_SIZE(netns_list))
				netns_list[nnetns++] = k->netns;
		}
	}

	/* the socket tables of those netns (this also makes cookies) */
	socktab__reset(&m->st);
	for (int i = 0; i < nnetns; i++) {
		err = socktab__dump(&m->st, &m->nt, netns_list[i], IPPROTO_UDP);
		if (err && err != -ENOENT)
			pr_debug("socket dump of netns %u: %s\n", netns_list[i],
				 strerror(-err));
		err = socktab__dump(&m->st, &m->nt, netns_list[i], IPPROTO_UDPLITE);
		(void)err; /* UDP-Lite may be absent: nothing to show then */
	}
	remember_sockets(m, false);
	refresh_pid_inodes(m);

	/* rows: rebuild the cumulative counts from the snapshot */
	for (it = 0; htab__next(&m->rows, &it, &key, &val);)
		row_reset(val);
	for (it = 0; htab__next(drops, &it, &key, &val);) {
		const struct ud_key *k = key;
		const struct ud_val *v = val;
		enum cause c = model__cause(m, k->reason, k->flags);
		struct row_key rk = { .netns = k->netns, .family = k->family,
				      .proto = k->proto };
		uint64_t cookie = 0;
		struct row *r;

		if (k->flags & UD_KEY_SOCK) {
			cookie = k->cookie;
			if (k->flags & UD_KEY_INODE) {
				uint32_t ino = k->cookie;
				uint64_t *c = htab__find(&m->inode2cookie, &ino);

				/* not dumped yet: stays keyed by inode */
				cookie = c ? *c : (1ull << 63) | ino;
			}
		} else if (!cause_is_socketless(c) && k->dport) {
			uint64_t *slot = htab__find(&m->flow_attr, k);

			if (slot && *slot) {
				cookie = *slot;
			} else {
				cookie = attribute_flow(m, k);
				/* once a socket, always that socket */
				if (cookie && (slot = htab__upsert(&m->flow_attr, k, NULL)))
					*slot = cookie;
			}
		}
		if (cookie) {
			rk.kind = ROW_SOCKET;
			rk.cookie = cookie;
			rk.family = rk.proto = 0; /* one row per socket */
		} else {
			rk.kind = ROW_FLOW;
			rk.cause = c;
			memcpy(rk.saddr, k->saddr, 16);
			memcpy(rk.daddr, k->daddr, 16);
			rk.dport = k->dport;
		}
		r = row_for(m, &rk);
		if (!r)
			return -ENOMEM;
		row_add(m, r, k, v, c);
	}

	/* quiet sockets, for --all */
	if (m->opts.all) {
		for (int i = 0; i < m->st.n; i++) {
			struct row_key rk = { .kind = ROW_SOCKET,
					      .netns = m->st.v[i].netns,
					      .cookie = m->st.v[i].cookie };

			if (!row_for(m, &rk))
				return -ENOMEM;
		}
	}

	/* join, rates, view */
	int nsock = 0, nflow = 0;
	bool *want = calloc(m->st.n + 1, sizeof(bool));
	bool any_want = false;
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
	m->totals.drops = m->totals.skbs = m->totals.attributed = 0;
	for (it = 0; htab__next(&m->rows, &it, &key, &val);) {
		struct row *r = val;

		if (r->key.kind == ROW_SOCKET)
			fill_sock(m, r);
		r->rate = m->interval > 0 ? (r->drops - r->prev_drops) / m->interval : 0;
		r->prev_drops = r->drops;
		r->prev_skbs = r->skbs;
		if (!row_visible(m, r))
			continue;
		m->totals.drops += r->drops;
		m->totals.skbs += r->skbs;
		for (int c = 0; c < CAUSE_MAX; c++)
			m->totals.cause[c] += r->cause[c];
		if (r->key.kind == ROW_SOCKET) {
			struct sock_info *live = socktab__by_cookie(&m->st, r->key.cookie);
			struct sock_info *k = htab__find(&m->known, &r->key.cookie);

			m->totals.attributed += r->drops;
			m->view_sockets[nsock++] = r;
			/*
			 * Owners rarely change: look them up for sockets never
			 * looked at, and for all of them every OWNERS_REFRESH.
			 */
			if (live && (refresh_owners || (k && !k->owner_tried))) {
				want[live - m->st.v] = true;
				any_want = true;
				if (k)
					k->owner_tried = true;
			}
		} else {
			m->view_flows[nflow++] = r;
		}
	}
	m->nview_sockets = nsock;
	m->nview_flows = nflow;

	/* owners of the sockets in view (the /proc walk ss -p does) */
	if (any_want) {
		socktab__find_owners(&m->st, want);
		if (refresh_owners)
			m->owners_ns = now;
	}
	free(want);
	for (int i = 0; i < nsock; i++) {
		struct row *r = m->view_sockets[i];
		struct sock_info *live = socktab__by_cookie(&m->st, r->key.cookie);
		struct sock_info *k = htab__find(&m->known, &r->key.cookie);

		if (live && (live->npids || refresh_owners)) {
			/* a refresh also clears owners that have gone */
			r->sock.npids = live->npids;
			memcpy(r->sock.pids, live->pids, sizeof(live->pids));
			memcpy(r->sock.comm, live->comm, sizeof(live->comm));
			if (k) {
				k->npids = live->npids;
				memcpy(k->pids, live->pids, sizeof(live->pids));
				memcpy(k->comm, live->comm, sizeof(live->comm));
			}
		}
	}

	/* the overflow bucket: no socket, but the cause is kept */
	m->totals.overflow = m->totals.overflow_skbs = 0;
	for (int s = 0; s < UD_OVERFLOW_SLOTS; s++) {
		if (!overflow[s].skbs)
			continue;
		m->totals.overflow += overflow[s].datagrams;
		m->totals.overflow_skbs += overflow[s].skbs;
		m->totals.cause[model__cause(m, s, 0)] += overflow[s].datagrams;
	}
	m->totals.drops += m->totals.overflow;
	m->totals.skbs += m->totals.overflow_skbs;
	m->totals.rate = m->interval > 0
		? (m->totals.drops - m->totals.prev_drops) / m->interval : 0;
	m->totals.prev_drops = m->totals.drops;

	qsort(m->view_sockets, nsock, sizeof(*m->view_sockets), cmp_rows);
	qsort(m->view_flows, nflow, sizeof(*m->view_flows), cmp_rows);

	/* netns seen for the first time: their counting starts now */
	for (int i = 0; i < nnetns; i++) {
		struct netns_counters *nc = counters_for(m, netns_list[i]);

		if (nc && !nc->have_base)
			counters_read(m, netns_list[i]);
	}
	return 0;
}
