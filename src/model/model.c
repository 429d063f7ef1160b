// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "model.h"
#include "proc.h"
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
#define OWNERS_FULL_NS (60 * 1000000000ull)

/*
 * The functions whose ranges the classifier needs (enum ud_range; top.c
 * asks ksyms__range for them before the programs load): looked up ahead,
 * in one short read of /proc/kallsyms. Any other name loads the table.
 */
static const char *const classifier_syms[] = {
	"inet_frag_rbtree_purge", "udp_destruct_common", "inet_sock_destruct",
};

/* Deliveries joined per socket row (m->rx_sock). */
struct rx_sock {
	uint64_t datagrams; /* since the baseline, this update */
	uint64_t prev;      /* ... at the previous update, for the rate */
	uint32_t peak;      /* bytes, the most seen since start */
};

int model__init(struct model *m, const struct model_opts *o)
{
	int err;

	memset(m, 0, sizeof(*m));
	m->opts = *o;
	memset(m->cause_cache, -1, sizeof(m->cause_cache));
	err = model__no_drop_reasons() ? -ENOENT : reasons__load(&m->reasons, NULL);
	if (err == -ENOENT) {
		/* no enum skb_drop_reason: causes from the drop locations */
		err = reasons__load_sites(&m->reasons);
		m->sites = !err;
	} else if (!err) {
		/* and where the kernel says NOT_SPECIFIED, from the site */
		m->site_base = reasons__site_base(&m->reasons);
		err = reasons__add_sites(&m->reasons, m->site_base);
	}
	if (err)
		return err;
	/* without symbols locations print as addresses: not fatal */
	if (ksyms__prefetch(&m->ksyms, NULL, classifier_syms, ARRAY_SIZE(classifier_syms)))
		pr_warn("cannot read /proc/kallsyms: drop locations stay addresses\n");
	if (netns__scan(&m->nt) || socktab__init(&m->st) ||
	    htab__init(&m->known, sizeof(uint64_t), sizeof(struct sock_info)) ||
	    sockid__init(&m->inode2cookie) ||
	    windows__init(&m->win) ||
	    htab__init(&m->kowners, sizeof(uint32_t), sizeof(struct kowner_list)) ||
	    htab__init(&m->flow_attr, sizeof(struct ud_key), sizeof(struct flow_attr)) ||
	    htab__init(&m->by_port, sizeof(struct port_key), sizeof(struct port_socks)) ||
	    htab__init(&m->local_addrs, sizeof(uint32_t), sizeof(struct local_addrs)) ||
	    htab__init(&m->rows, sizeof(struct row_key), sizeof(struct row)) ||
	    htab__init(&m->pid_inodes, sizeof(uint32_t), 1) ||
	    htab__init(&m->rx, sizeof(uint64_t), sizeof(struct ud_rx)) ||
	    htab__init(&m->rx_base, sizeof(uint64_t), sizeof(struct ud_rx)) ||
	    htab__init(&m->rx_sock, sizeof(uint64_t), sizeof(struct rx_sock)) ||
	    htab__init(&m->dumped, sizeof(uint32_t), sizeof(uint64_t)) ||
	    htab__init(&m->unknown, sizeof(uint64_t), 1))
		return -ENOMEM;
	/* nothing to forget for a while */
	m->start_ns = m->last_ns = m->nt_ns = m->forget_ns = now_ns();
	/* how long a closed socket keeps a row of its own (tests shorten it) */
	const char *fa = getenv("UDPDROP_FOLD_AFTER_S");
	uint64_t secs;

	m->fold_after_ns = MODEL_FOLD_AFTER_NS;
	if (fa && !parse_u64(fa, 1, 86400, &secs)) {
		m->fold_after_ns = secs * 1000000000ull;
	} else if (fa) {
		char shown[64];

		snprintf(shown, sizeof(shown), "%s", fa);
		str_printable(shown);
		pr_warn("ignoring UDPDROP_FOLD_AFTER_S='%s': give whole seconds, 1 to 86400 (120 is used)\n",
			shown);
	}
	m->nst_netns = -1;
	m->start_wall = wall_time();
	return 0;
}

void model__free(struct model *m)
{
	pr_debug("socket table: %llu full dumps, %llu port dumps, %llu exact requests (%llu not answered by their socket)\n",
		 (unsigned long long)m->sock_stats.full, (unsigned long long)m->sock_stats.ports,
		 (unsigned long long)m->sock_stats.exact,
		 (unsigned long long)m->sock_stats.exact_missed);
	reasons__free(&m->reasons);
	ksyms__free(&m->ksyms);
	netns__free(&m->nt);
	socktab__free(&m->st);
	htab__free(&m->known);
	htab__free(&m->inode2cookie);
	windows__free(&m->win);
	htab__free(&m->flow_attr);
	htab__free(&m->kowners);
	htab__free(&m->by_port);
	htab__free(&m->local_addrs);
	htab__free(&m->rows);
	htab__free(&m->pid_inodes);
	htab__free(&m->rx);
	htab__free(&m->rx_base);
	htab__free(&m->rx_sock);
	htab__free(&m->dumped);
	htab__free(&m->unknown);
	free(m->counters);
	free(m->view_sockets);
	free(m->view_flows);
	memset(m, 0, sizeof(*m));
}

bool model__no_drop_reasons(void)
{
	const char *v = getenv("UDPDROP_NO_DROP_REASONS");

	return v && !strcmp(v, "1");
}

const char *model__reason_name(struct model *m, uint32_t reason, char *buf,
			       int len)
{
	return reasons__name(&m->reasons, reason, buf, len);
}

static uint64_t win_join(void *m, uint64_t id)
{
	return sockid__row(&((struct model *)m)->inode2cookie, id);
}

int model__update_windows(struct model *m, const struct tracer_win *w, size_t n,
			  uint32_t before)
{
	int err = 0;

	for (size_t i = 0; !err && i < n; i++) {
		uint64_t id = sockid__of_key(&w[i].key);

		if (!id)
			continue;
		err = windows__add(&m->win, sockid__row(&m->inode2cookie, id),
				   w[i].key.flags & UD_KEY_DELIVERED
					   ? WIN_DELIVERED
					   : (int)model__cause(m, w[i].key.reason, w[i].key.flags),
				   w[i].win, w[i].datagrams);
	}
	if (!err)
		err = windows__fold(&m->win, before);
	/* a socket a dump has named since: its windows by inode are its cookie's */
	if (!err)
		err = windows__rejoin(&m->win, win_join, m);
	return err;
}

const struct win_agg *model__windows(const struct model *m, const struct row *r, enum cause c)
{
	if (r->key.kind != ROW_SOCKET || !r->key.cookie)
		return NULL;
	return windows__find(&m->win, r->key.cookie, c);
}

enum cause model__cause(struct model *m, uint32_t reason, uint32_t flags)
{
	bool cacheable = reason < sizeof(m->cause_cache) &&
			 !(flags & (UD_KEY_FAIL_RCVBUF | UD_KEY_FAIL_MEM | UD_KEY_CLOSE));
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

bool model__netns_named(struct model *m, uint32_t netns)
{
	const struct netns_info *ni = netns__find(&m->nt, netns);

	return ni && ni->name[0];
}

const char *model__netns_label(struct model *m, uint32_t netns, char *buf,
			       int len)
{
	const struct netns_info *ni = netns__find(&m->nt, netns);

	if (ni && ni->name[0]) {
		/* a name from /run/netns may hold anything: printable */
		snprintf(buf, len, "%s", ni->name);
		str_printable(buf);
		return buf;
	}
	snprintf(buf, len, "%u", netns);
	return buf;
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

static void remember_sockets(struct model *m, int first, bool baseline,
			     uint64_t now);
static bool netns_in_list(const uint32_t *list, int n, uint32_t netns);
static void index_port(struct model *m, const struct sock_info *si);
static uint64_t netns_cause_all(struct model *m, uint32_t netns, enum cause c);

int model__baseline(struct model *m)
{
	netns__free(&m->nt);
	if (netns__scan(&m->nt))
		return -ENOMEM;
	m->nt_ns = now_ns();
	/* counters first, all of them, then the caller reads the tracer:
	 * the two sides' starting points as close together as they can be */
	for (int i = 0; i < m->nt.n; i++) {
		uint32_t ns = m->nt.v[i].inode;

		if (m->opts.netns && ns != m->opts.netns)
			continue;
		struct netns_counters *nc = counters_for(m, ns);

		if (!nc)
			return -ENOMEM;
		counters_read(m, ns);
		nc->in_view = true; /* every netns traced, drops or not */
	}
	return 0;
}

void model__baseline_counts(struct model *m, struct htab *drops)
{
	size_t it = 0;
	const void *key;
	void *val;

	/* sockets and their sk_drops at the start (this also makes cookies) */
	uint64_t now = now_ns();

	socktab__reset(&m->st);
	m->nst_netns = m->ncounters <= (int)ARRAY_SIZE(m->st_netns) ? m->ncounters : -1;
	for (int i = 0; i < m->ncounters; i++) {
		if (i < m->nst_netns)
			m->st_netns[i] = m->counters[i].netns;
		uint64_t *t = htab__upsert(&m->dumped, &m->counters[i].netns, NULL);

		socktab__dump(&m->st, &m->nt, m->counters[i].netns, IPPROTO_UDP);
		socktab__dump(&m->st, &m->nt, m->counters[i].netns, IPPROTO_UDPLITE);
		if (t)
			*t = now;
		m->sock_stats.full++;
	}
	remember_sockets(m, 0, true, now);

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
	for (int i = 0; i < m->ncounters; i++) {
		struct netns_counters *nc = &m->counters[i];
		struct mib now;

		if (!nc->in_view)
			continue; /* only the netns on show */
		if (!nc->have_base) {
			/* first sight (see model__update): the base, now */
			if (!mib__read(&m->nt, nc->netns, &nc->base)) {
				nc->cur = nc->base;
				nc->have_base = nc->base_fresh = true;
			}
			continue;
		}
		/* a failed read keeps the last good one */
		if (!mib__read(&m->nt, nc->netns, &now))
			nc->cur = now;
	}
}

void model__read_counters_after(struct model *m, bool baseline)
{
	for (int i = 0; i < m->ncounters; i++) {
		struct netns_counters *nc = &m->counters[i];

		if (!nc->in_view || !nc->have_base)
			continue;
		if (baseline || nc->base_fresh) {
			/* the base taken now: its second reading */
			nc->have_base_after = !mib__read(&m->nt, nc->netns, &nc->base_after);
			nc->cur_after = nc->base_after;
			nc->have_cur_after = nc->have_base_after;
			continue;
		}
		nc->have_cur_after = !mib__read(&m->nt, nc->netns, &nc->cur_after);
	}
}

static uint64_t moved(const struct mib *a, const struct mib *b, int id)
{
	return b->v[id] > a->v[id] ? b->v[id] - a->v[id] : 0;
}

uint64_t model__counter_spread(const struct netns_counters *nc, int id)
{
	uint64_t s = 0;

	if (nc->have_base_after)
		s += moved(&nc->base, &nc->base_after, id);
	if (nc->have_cur_after)
		s += moved(&nc->cur, &nc->cur_after, id);
	return s;
}

/* A cause's datagrams in one netns, over every row (shown or not). */
static uint64_t netns_cause_all(struct model *m, uint32_t netns, enum cause c)
{
	size_t it = 0;
	const void *key;
	void *val;
	uint64_t n = 0;

	while (htab__next(&m->rows, &it, &key, &val)) {
		const struct row *r = val;

		if (r->key.netns == netns)
			n += r->cause[c];
	}
	/* with --netns the overflow bucket is all this netns's */
	if (m->opts.netns == netns)
		for (int s = 0; s < UD_OVERFLOW_SLOTS; s++)
			if (model__cause(m, s, 0) == c)
				n += m->overflow[s].datagrams;
	return n;
}

uint64_t model__netns_cause(struct model *m, uint32_t netns, enum cause c)
{
	uint64_t n = netns_cause_all(m, netns, c);

	for (int i = 0; i < m->ncounters; i++)
		if (m->counters[i].netns == netns)
			return n >= m->counters[i].cause_base[c]
				       ? n - m->counters[i].cause_base[c] : 0;
	return n;
}

const char *model__reconcile_caveat(struct model *m)
{
	if (m->opts.port || m->opts.pid)
		return "not comparable: --port/--pid count part of what the netns counters count";
	if (m->missed)
		return "inexact: the kernel skipped some events (see missed)";
	if (m->totals.overflow_skbs && !m->opts.netns)
		return "inexact: some drops are in the overflow bucket, which has no netns";
	return NULL;
}
/* ---- the socket table --------------------------------------------- */

static void index_port(struct model *m, const struct sock_info *si)
{
	struct port_key pk = { .netns = si->netns, .port = si->sport,
			       .proto = si->proto };
	struct port_socks *ps;

	if (!si->sport || si->no_flow_match)
		return;
	ps = htab__upsert(&m->by_port, &pk, NULL);
	if (!ps)
		return;
	/* a second socket on the port (a socket's inode and cookie are one) */
	for (int i = 0; i < ps->n && !m->port_shared; i++)
		if (sockid__row(&m->inode2cookie, ps->cookies[i]) !=
		    sockid__row(&m->inode2cookie, si->cookie))
			m->port_shared = true;
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
static void remember_sock(struct model *m, struct sock_info *si, bool baseline,
			  uint64_t now)
{
	int created;
	struct sock_info *k = htab__upsert(&m->known, &si->cookie, &created);

	if (!k)
		return;
	si->drops_base = created ? (baseline ? si->drops : 0) : k->drops_base;
	/* the table knows no owners of its own: keep those found earlier */
	struct sock_info prev = *k;

	*k = *si;
	k->npids = prev.npids;
	memcpy(k->pids, prev.pids, sizeof(k->pids));
	memcpy(k->fds, prev.fds, sizeof(k->fds));
	memcpy(k->comm, prev.comm, sizeof(k->comm));
	memcpy(k->kowner, prev.kowner, sizeof(k->kowner));
	k->owner_tried = prev.owner_tried;
	k->no_exact = prev.no_exact;
	k->last_seen_ns = now;
	/* and the table's entry too: owner lookups start from them */
	si->npids = k->npids;
	memcpy(si->pids, k->pids, sizeof(si->pids));
	memcpy(si->fds, k->fds, sizeof(si->fds));
	memcpy(si->comm, k->comm, sizeof(si->comm));
	/* a dump's socket: its owner is looked up while it lives (see update) */
	if (created && !si->partial && !si->no_flow_match)
		m->owners_new = true;
	/* inode2cookie maps to real cookies only (a partial one may be the inode) */
	if (!si->partial)
		sockid__learn(&m->inode2cookie, si->inode, si->cookie);
	if (created || prev.no_flow_match)
		index_port(m, si);
}

/* A known socket's state and memory, just refreshed in the table. */
static void remember_fresh(struct model *m, const struct sock_info *si,
			   uint64_t now)
{
	struct sock_info *k = htab__find(&m->known, &si->cookie);

	if (!k) {
		remember_sock(m, (struct sock_info *)si, false, now);
		return;
	}
	k->state = si->state;
	k->uid = si->uid;
	k->rmem = si->rmem;
	k->rcvbuf = si->rcvbuf;
	k->wmem = si->wmem;
	k->sndbuf = si->sndbuf;
	k->drops = si->drops;
	k->have_mem = si->have_mem;
	k->last_seen_ns = now;
	/* the model's own look at it: a flow's candidate from now on */
	if (k->no_flow_match) {
		k->no_flow_match = false;
		index_port(m, k);
	}
}

void model__learn_socket(struct model *m, struct sock_info *si, uint64_t now)
{
	if (si->inode && !si->partial && !htab__find(&m->inode2cookie, &si->inode)) {
		si->no_flow_match = true;
		remember_sock(m, si, false, now);
	}
}

/* The sockets of the table from index first on: just dumped. */
static void remember_sockets(struct model *m, int first, bool baseline,
			     uint64_t now)
{
	for (int i = first; i < m->st.n; i++)
		remember_sock(m, &m->st.v[i], baseline, now);
}

static bool netns_in_list(const uint32_t *list, int n, uint32_t netns)
{
	for (int i = 0; i < n; i++)
		if (list[i] == netns)
			return true;
	return false;
}

/*
 * The sockets the --pid process holds now (pid_tree: every process of its
 * tree) join those it held before: a socket it closed, or one of a child
 * that has exited, stays its own.
 */
static bool sock_in_netns(const struct sock_info *si, void *arg)
{
	return si->netns == *(const uint32_t *)arg;
}

int model__refresh_pid_inodes(struct model *m)
{
	uint32_t inodes[4096], described[16];
	int pids[1024]; /* the processes of a tree looked at */
	int npids = 1, n, added = 0, ndescribed = 0;

	if (!m->opts.pid)
		return 0;
	pids[0] = m->opts.pid;
	if (m->opts.pid_tree) {
		npids = proc__descendants(m->opts.pid, pids, ARRAY_SIZE(pids));
		if (npids <= 0)
			return 0; /* gone: what it held stays */
	}
	for (int p = 0; p < npids; p++) {
		int fresh = 0;

		n = socktab__pid_inodes(pids[p], inodes, ARRAY_SIZE(inodes));
		for (int i = 0; i < n; i++) {
			int created = 0;

			htab__upsert(&m->pid_inodes, &inodes[i], &created);
			fresh += created;
		}
		added += fresh;
		/*
		 * New sockets: describe them now, while they exist (a dump of
		 * the process's netns), so that a socket that drops and closes
		 * before the next update is still named, with its port.
		 */
		uint32_t ns = fresh ? netns__of_pid(pids[p]) : 0;

		if (ns && !netns_in_list(described, ndescribed, ns) &&
		    ndescribed < (int)ARRAY_SIZE(described)) {
			int first;

			described[ndescribed++] = ns;
			/* the dump replaces what the table had of that netns */
			socktab__remove_if(&m->st, sock_in_netns, &ns);
			first = m->st.n;
			socktab__dump(&m->st, &m->nt, ns, IPPROTO_UDP);
			socktab__dump(&m->st, &m->nt, ns, IPPROTO_UDPLITE);
			remember_sockets(m, first, false, now_ns());
		}
	}
	return added;
}

/*
 * Could a datagram to addr be for netns itself? Its own addresses, all of
 * 127/8, broadcast and multicast (delivered to bound sockets too). When
 * the address list cannot be read or was cut short, say yes: better a
 * match by port than no match at all.
 */
static bool addr_is_local(struct model *m, uint32_t netns, int family,
			  const uint8_t *addr)
{
	struct local_addrs *la = htab__find(&m->local_addrs, &netns);

	if (family == AF_INET &&
	    (addr[0] == 127 || addr[0] >= 224 /* multicast, class E, broadcast */))
		return true;
	if (family == AF_INET6 && addr[0] == 0xff)
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
static void learn_from_rx(struct model *m, uint64_t now)
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
		if (htab__find(&m->known, &id))
			continue;
		si.cookie = id;
		si.inode = id & UD_RX_INODE ? (uint32_t)id : 0;
		si.netns = v->netns;
		si.family = v->family;
		si.proto = v->proto;
		si.sport = v->lport;
		si.partial = true;
		remember_sock(m, &si, false, now);
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

	if (!closing && !addr_is_local(m, k->netns, k->family, k->daddr))
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

			/* a closing queue: only a netns the datagram was for */
			if (closing && !addr_is_local(m, cand[i].netns, k->family, k->daddr))
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

/*
 * Sockets come and go (a DNS client may open one per query): forget those
 * closed for a while that never dropped, so memory follows what is
 * running rather than everything that ever ran. A socket with a row is
 * kept: its row names it. Runs once a minute.
 */
#define FORGET_AFTER_NS (60 * 1000000000ull)

static void forget_sockets(struct model *m, uint64_t now,
			   const uint32_t *dumped, int ndumped)
{
	struct htab known, inodes, ports;
	size_t it = 0;
	const void *key;
	void *val;

	if (now - m->forget_ns < FORGET_AFTER_NS)
		return;
	m->forget_ns = now;
	if (htab__init(&known, sizeof(uint64_t), sizeof(struct sock_info)))
		return;
	if (sockid__init(&inodes)) {
		htab__free(&known);
		return;
	}
	if (htab__init(&ports, sizeof(struct port_key), sizeof(struct port_socks))) {
		htab__free(&known);
		htab__free(&inodes);
		return;
	}
	while (htab__next(&m->known, &it, &key, &val)) {
		const struct sock_info *si = val;
		struct row_key rk = { .kind = ROW_SOCKET, .netns = si->netns,
				      .cookie = si->cookie };
		struct sock_info *ns;

		struct row *r = htab__find(&m->rows, &rk);

		/*
		 * Closed (a dump of its netns did not have it) and last seen
		 * a minute ago; a netns out of view now tells nothing.
		 */
		bool stale = (si->partial || netns_in_list(dumped, ndumped, si->netns)) &&
			     !socktab__by_cookie(&m->st, si->cookie) &&
			     now > si->last_seen_ns &&
			     now - si->last_seen_ns > FORGET_AFTER_NS;

		if (stale && !(r && r->skbs))
			continue;
		ns = htab__upsert(&known, &si->cookie, NULL);
		if (!ns)
			goto fail;
		*ns = *si;
		if (!si->partial && sockid__learn(&inodes, si->inode, si->cookie))
			goto fail;
	}
	/* the port index and the inode map now name only kept sockets */
	htab__free(&m->known);
	htab__free(&m->inode2cookie);
	m->known = known;
	m->inode2cookie = inodes;
	htab__free(&m->by_port);
	m->by_port = ports;
	it = 0;
	while (htab__next(&m->known, &it, &key, &val))
		index_port(m, val);
	return;
fail:
	htab__free(&known);
	htab__free(&inodes);
	htab__free(&ports);
}

/* A fold candidate: its netns, and the row's cookie (for an inode alias). */
struct fold_cand {
	uint32_t netns;
	uint64_t row;
};

int model__foldable(struct model *m, uint64_t now, struct htab *ids,
		    struct htab *flows)
{
	struct htab cand, blocked;
	size_t it = 0;
	const void *key;
	void *val;
	int err = -ENOMEM;

	/*
	 * --pid/-- COMMAND: a socket's drops are the process's only while
	 * the socket is known as its own: folded, they would be no one's.
	 */
	if (m->opts.pid)
		return 0;
	if (htab__init(&cand, sizeof(uint64_t), sizeof(struct fold_cand)))
		return -ENOMEM;
	if (htab__init(&blocked, sizeof(uint64_t), 1)) {
		htab__free(&cand);
		return -ENOMEM;
	}
	while (htab__next(&m->rows, &it, &key, &val)) {
		const struct row *r = val;
		const struct sock_info *k;
		struct fold_cand *c;

		if (r->key.kind != ROW_SOCKET || !r->key.cookie ||
		    (r->key.cookie & UD_COOKIE_FOLDED) || r->sock_alive ||
		    !r->skbs || now - r->moved_ns < m->fold_after_ns)
			continue;
		c = htab__upsert(&cand, &r->key.cookie, NULL);
		if (!c)
			goto out;
		*c = (struct fold_cand){ r->key.netns, r->key.cookie };
		/* counted by its inode before a dump named it: that too */
		k = htab__find(&m->known, &r->key.cookie);
		if (k && k->inode && !k->partial) {
			uint64_t id = UD_RX_INODE | k->inode;

			c = htab__upsert(&cand, &id, NULL);
			if (!c)
				goto out;
			*c = (struct fold_cand){ r->key.netns, r->key.cookie };
		}
	}
	/*
	 * A flow that went to several sockets in turn cannot go to one
	 * folded row: its sockets stay as they are (their rows keep it).
	 */
	for (it = 0; htab__next(&m->flow_attr, &it, &key, &val);) {
		const struct flow_attr *fa = val;

		if (fa->n == 1)
			continue;
		for (int i = 0; i < fa->n; i++) {
			const struct fold_cand *c = htab__find(&cand, &fa->seg[i].cookie);

			if (c && !htab__upsert(&blocked, &c->row, NULL))
				goto out;
		}
	}
	for (it = 0; htab__next(&cand, &it, &key, &val);) {
		const struct fold_cand *c = val;
		uint32_t *ns;

		if (htab__find(&blocked, &c->row))
			continue;
		ns = htab__upsert(ids, key, NULL);
		if (!ns)
			goto out;
		*ns = c->netns;
	}
	/* flows that went to one such socket alone */
	for (it = 0; htab__next(&m->flow_attr, &it, &key, &val);) {
		const struct flow_attr *fa = val;
		const uint32_t *ns;
		struct tracer_fold_flow *ff;

		if (fa->n != 1 || !fa->seg[0].cookie ||
		    !(ns = htab__find(ids, &fa->seg[0].cookie)))
			continue;
		ff = htab__upsert(flows, key, NULL);
		if (!ff)
			goto out;
		ff->id = fa->seg[0].cookie;
		ff->netns = *ns;
	}
	err = 0;
out:
	htab__free(&cand);
	htab__free(&blocked);
	return err;
}

/*
 * Rows, flow attributions and socket ids no count names any more (their
 * sockets were folded, tracer__fold) are dropped, so memory follows what
 * the counts hold. Each table is rebuilt when a quarter of it is stale.
 */
static bool row_counted(const void *key, void *val, void *arg)
{
	const struct row *r = val;
	const struct model *m = arg;

	return r->skbs || (m->opts.all && r->key.kind == ROW_SOCKET);
}

static bool in_table(const void *key, void *val, void *arg)
{
	return htab__find(arg, key) != NULL;
}

static int prune_stale(struct model *m, const struct htab *drops)
{
	size_t it = 0, stale = 0;
	const void *key;
	void *val;

	for (it = 0; htab__next(&m->rows, &it, &key, &val);)
		stale += !row_counted(key, val, m);
	if (stale > 64 && stale > m->rows.n / 4 && htab__retain(&m->rows, row_counted, m))
		return -ENOMEM;
	stale = 0;
	for (it = 0; htab__next(&m->flow_attr, &it, &key, &val);)
		stale += !htab__find(drops, key);
	if (stale > 64 && stale > m->flow_attr.n / 4 &&
	    htab__retain(&m->flow_attr, in_table, (void *)drops))
		return -ENOMEM;
	/* ids a dump did not find: kept while a count names them */
	if (m->unknown.n > 256) {
		struct htab named;
		int err;

		if (htab__init(&named, sizeof(uint64_t), 1))
			return -ENOMEM;
		for (it = 0; htab__next(drops, &it, &key, &val);) {
			const struct ud_key *k = key;
			uint64_t id = sockid__of(k->cookie, k->flags & UD_KEY_INODE);

			if ((k->flags & UD_KEY_SOCK) && !htab__upsert(&named, &id, NULL)) {
				htab__free(&named);
				return -ENOMEM;
			}
		}
		err = htab__retain(&m->unknown, in_table, &named);
		htab__free(&named);
		if (err)
			return err;
	}
	/* deliveries joined per row: only rows that are left */
	if (m->rx_sock.n > 64 && m->rx_sock.n > 2 * m->rows.n) {
		struct htab cookies;
		int err;

		if (htab__init(&cookies, sizeof(uint64_t), 1))
			return -ENOMEM;
		for (it = 0; htab__next(&m->rows, &it, &key, &val);) {
			const struct row *r = val;

			if (r->key.kind == ROW_SOCKET &&
			    !htab__upsert(&cookies, &r->key.cookie, NULL)) {
				htab__free(&cookies);
				return -ENOMEM;
			}
		}
		err = htab__retain(&m->rx_sock, in_table, &cookies);
		htab__free(&cookies);
		if (err)
			return err;
	}
	return 0;
}

/* Causes whose drops are never a bound socket's, whatever is bound now. */
static bool cause_is_socketless(enum cause c)
{
	return c == CAUSE_NO_SOCKET;
}

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
	if ((k->flags & (UD_KEY_SOCK | UD_KEY_CLOSE)) == (UD_KEY_SOCK | UD_KEY_CLOSE) &&
	    k->dport) {
		r->close_port = k->dport;
		r->close_family = k->family;
		r->close_proto = k->proto;
	}
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

/* Most drops first; the key itself is the stable tie-breaker. */
static int cmp_rows_total(const void *a, const void *b)
{
	const struct row *x = *(const struct row **)a, *y = *(const struct row **)b;

	if (x->drops != y->drops)
		return x->drops > y->drops ? -1 : 1;
	if (x->skbs != y->skbs)
		return x->skbs > y->skbs ? -1 : 1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

void model__sort_by_total(struct model *m)
{
	qsort(m->view_sockets, m->nview_sockets, sizeof(*m->view_sockets), cmp_rows_total);
	qsort(m->view_flows, m->nview_flows, sizeof(*m->view_flows), cmp_rows_total);
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

static int add_to_row(struct model *m, const struct ud_key *k,
		      const struct ud_val *v, enum cause c, uint64_t cookie,
		      uint32_t netns, uint32_t extra_flags)
{
	struct row_key rk = { .netns = netns, .family = k->family,
			      .proto = k->proto };
	struct row *r;

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
	r->flags |= extra_flags;
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
static int add_flow(struct model *m, const struct ud_key *k,
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
		int err = add_to_row(m, k, &parts[i].val, c, parts[i].cookie,
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

/* ---- keeping the socket table ------------------------------------- */

/* What to dump of one netns in view, this update. */
struct dump_plan {
	uint32_t netns;
	bool full;       /* all its sockets */
	int nports;      /* else the sockets on these local ports */
	uint16_t ports[SOCKTAB_DUMP_PORTS];
};

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
static void plan_dumps(struct model *m, struct htab *drops,
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
			uint64_t id = k->cookie;
			bool known;

			if (k->flags & UD_KEY_INODE) {
				uint32_t ino = k->cookie;

				known = htab__find(&m->inode2cookie, &ino);
				id = UD_RX_INODE | ino;
			} else {
				known = !id || htab__find(&m->known, &id);
			}
			/* a socket not seen yet: all of its netns, once */
			if (!known && !htab__find(&m->unknown, &id)) {
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
		} else if (addr_is_local(m, k->netns, k->family, k->daddr)) {
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
static void sync_sockets(struct model *m, struct dump_plan *plans, int n,
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
	remember_sockets(m, first, false, now);
}

/*
 * The sockets of the rows in view, where this update's dumps did not
 * cover them: exact requests. One that does not answer is looked for on
 * its port: gone, or alive but out of reach of an exact request (another
 * socket answers for its tuple), which is then refreshed by its port.
 */
static int refresh_rows(struct model *m, struct dump_plan *plans, int nplans,
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
				remember_fresh(m, si, now);
				continue;
			}
			m->sock_stats.exact_missed++;
			if (sure)
				missed[nmissed++] = *si;
			plan_port(&again[pi], si->sport);
		}
	}
	sync_sockets(m, again, nplans, false, now);
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

			if (k->netns && !netns_in_list(netns_list, nnetns, k->netns) &&
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
					    !netns_in_list(netns_list, nnetns, pk->netns) &&
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
	plan_dumps(m, drops, plans, netns_list, nnetns, now);
	sync_sockets(m, plans, nnetns, true, now);
	learn_from_rx(m, now);
	forget_sockets(m, now, netns_list, nnetns);
	model__refresh_pid_inodes(m);

	/* rows: rebuild the cumulative counts from the snapshot */
	for (it = 0; htab__next(&m->rows, &it, &key, &val);)
		row_reset(val);
	for (it = 0; htab__next(drops, &it, &key, &val);) {
		const struct ud_key *k = key;
		const struct ud_val *v = val;
		enum cause c = model__cause(m, k->reason, k->flags);

		if (k->flags & UD_KEY_SOCK) {
			/* not dumped yet: stays keyed by inode */
			uint64_t cookie = sockid__row(&m->inode2cookie, sockid__of_key(k));

			/* dumped and not found: no dump is done for it again */
			if (cookie && !htab__find(&m->known, &cookie))
				htab__upsert(&m->unknown, &cookie, NULL);
			/* cookie 0: a socket with neither cookie nor inode
			 * (a kernel socket): shown with its flow */
			err = add_to_row(m, k, v, c, cookie, k->netns, 0);
		} else if (!cause_is_socketless(c) && k->dport) {
			err = add_flow(m, k, v, c);
		} else {
			err = add_to_row(m, k, v, c, 0, k->netns, 0);
		}
		if (err) {
			free(plans);
			return err;
		}
	}

	err = prune_stale(m, drops);
	if (err) {
		free(plans);
		return err;
	}
	/* the sockets of the rows in view, fresh */
	err = refresh_rows(m, plans, nnetns, now);
	free(plans);
	if (err)
		return err;

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
		    addr_is_local(m, m->opts.netns, r->key.family, r->key.daddr))
			m->totals.netns_unknown += r->drops;
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
			 * Owners rarely change: look them up when a socket
			 * never looked at comes into view, and every
			 * OWNERS_REFRESH; for all sockets in view then.
			 */
			if (live) {
				want[live - m->st.v] = any_want = true;
				if (k && !k->owner_tried) {
					any_new = true;
					k->owner_tried = true;
				}
			}
		} else {
			m->view_flows[nflow++] = r;
		}
	}
	m->nview_sockets = nsock;
	m->nview_flows = nflow;
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
		struct netns_counters *nc = counters_for(m, ns);

		if (!nc)
			continue;
		/*
		 * First sight: the kernel's base is read by the next
		 * model__read_counters, just before the next tracer read,
		 * and udpdrop's base is taken from that read's snapshot (the
		 * order the start-up baseline has). Until then, no deltas.
		 */
		if (nc->base_fresh) {
			for (int c = 0; c < CAUSE_MAX; c++)
				nc->cause_base[c] = netns_cause_all(m, nc->netns, c);
			nc->base_fresh = false;
		} else if (nc->have_base && !nc->in_view) {
			mib__read(&m->nt, nc->netns, &nc->cur);
		}
		nc->in_view = true;
	}
	return 0;
}
