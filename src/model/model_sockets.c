// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The sockets the model knows (m->known: every socket seen, closed ones
 * too, indexed by port and by inode): remembering what a dump found, the
 * --pid process's sockets, and forgetting or folding sockets and rows no
 * count needs any more.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include "model_internal.h"
#include "proc.h"
#include "util.h"
#include "sockid.h"

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
void model_remember_sock(struct model *m, struct sock_info *si, bool baseline,
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
	/*
	 * a dump's socket: its owner is looked up while it lives (see
	 * update); also one a liveness dump taught us first (no_flow_match,
	 * model__learn_socket), which no owner lookup has looked at
	 */
	if ((created || prev.no_flow_match) && !si->partial && !si->no_flow_match)
		m->owners_new = true;
	/* inode2cookie maps to real cookies only (a partial one may be the inode) */
	if (!si->partial)
		sockid__learn(&m->inode2cookie, si->inode, si->cookie);
	if (created || prev.no_flow_match)
		index_port(m, si);
}

/* A known socket's state and memory, just refreshed in the table. */
void model_remember_fresh(struct model *m, const struct sock_info *si,
			  uint64_t now)
{
	struct sock_info *k = htab__find(&m->known, &si->cookie);

	if (!k) {
		model_remember_sock(m, (struct sock_info *)si, false, now);
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
		model_remember_sock(m, si, false, now);
	}
}

/* The sockets of the table from index first on: just dumped. */
void model_remember_sockets(struct model *m, int first, bool baseline,
			    uint64_t now)
{
	for (int i = first; i < m->st.n; i++)
		model_remember_sock(m, &m->st.v[i], baseline, now);
}

bool model_netns_in_list(const uint32_t *list, int n, uint32_t netns)
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

		if (ns && !model_netns_in_list(described, ndescribed, ns) &&
		    ndescribed < (int)ARRAY_SIZE(described)) {
			int first;

			described[ndescribed++] = ns;
			/* the dump replaces what the table had of that netns */
			socktab__remove_if(&m->st, sock_in_netns, &ns);
			first = m->st.n;
			socktab__dump(&m->st, &m->nt, ns, IPPROTO_UDP);
			socktab__dump(&m->st, &m->nt, ns, IPPROTO_UDPLITE);
			model_remember_sockets(m, first, false, now_ns());
		}
	}
	return added;
}

/*
 * Sockets come and go (a DNS client may open one per query): forget those
 * closed for a while that never dropped, so memory follows what is
 * running rather than everything that ever ran. A socket with a row is
 * kept: its row names it. Runs once a minute; under churn (more than
 * FORGET_MANY known), every FORGET_FAST_NS those closed that long: 200
 * sockets a second would otherwise keep 12,000 to 24,000 closed ones
 * (about 10 MB) for nothing but a late purge's flow, which comes in
 * milliseconds.
 */
#define FORGET_AFTER_NS (60 * 1000000000ull)
#define FORGET_MANY 4096
#define FORGET_FAST_NS (10 * 1000000000ull)

void model_forget_sockets(struct model *m, uint64_t now,
			  const uint32_t *dumped, int ndumped)
{
	struct htab known, inodes, ports;
	size_t it = 0;
	const void *key;
	void *val;
	uint64_t age = m->known.n > FORGET_MANY ? FORGET_FAST_NS : FORGET_AFTER_NS;

	if (now - m->forget_ns < age)
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
		bool stale = (si->partial || model_netns_in_list(dumped, ndumped, si->netns)) &&
			     !socktab__by_cookie(&m->st, si->cookie) &&
			     now > si->last_seen_ns &&
			     now - si->last_seen_ns > age;

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

/* A closed socket's row that may fold early (over the cap): when it last moved. */
struct fold_early {
	uint64_t moved_ns;
	const struct row *r;
};

static int cmp_moved(const void *a, const void *b)
{
	const struct fold_early *x = a, *y = b;

	if (x->moved_ns != y->moved_ns)
		return x->moved_ns < y->moved_ns ? -1 : 1;
	return memcmp(&x->r->key, &y->r->key, sizeof(x->r->key));
}

const struct sock_info *model__port_holder(struct model *m, uint32_t netns,
					   uint16_t port, uint8_t proto)
{
	struct port_key pk = { .netns = netns, .port = port, .proto = proto };
	const struct port_socks *ps = htab__find(&m->by_port, &pk);
	const struct sock_info *best = NULL;

	for (int i = 0; ps && i < ps->n; i++) {
		const struct sock_info *si = socktab__by_cookie(&m->st, ps->cookies[i]);

		if (si && si->sport == port && si->proto == proto &&
		    (!best || si->last_seen_ns > best->last_seen_ns))
			best = si;
	}
	return best;
}

/* A closed socket's own row, with counts to fold. */
static bool closed_row(const struct row *r)
{
	return r->key.kind == ROW_SOCKET && r->key.cookie &&
	       !(r->key.cookie & UD_COOKIE_FOLDED) && !r->sock_alive && r->skbs;
}

bool model__closed_over(const struct model *m)
{
	size_t it = 0, closed = 0;
	const void *key;
	void *val;

	while (htab__next(&m->rows, &it, &key, &val))
		if (closed_row(val) && ++closed > m->closed_rows_max)
			return true;
	return false;
}

/* A fold candidate: its netns, and the row's cookie (for an inode alias). */
struct fold_cand {
	uint32_t netns;
	uint64_t row;
};

/* r's socket into cand, and its inode when it was counted by that before
 * a dump named it; -ENOMEM. */
static int add_fold_cand(struct model *m, struct htab *cand, const struct row *r)
{
	struct fold_cand *c = htab__upsert(cand, &r->key.cookie, NULL);
	const struct sock_info *k;

	if (!c)
		return -ENOMEM;
	*c = (struct fold_cand){ r->key.netns, r->key.cookie };
	k = htab__find(&m->known, &r->key.cookie);
	if (k && k->inode && !k->partial) {
		uint64_t id = UD_RX_INODE | k->inode;

		c = htab__upsert(cand, &id, NULL);
		if (!c)
			return -ENOMEM;
		*c = (struct fold_cand){ r->key.netns, r->key.cookie };
	}
	return 0;
}

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
	/*
	 * Closed sockets with rows of their own: those quiet for the fold
	 * age fold; of the rest, while more than closed_rows_max remain, the
	 * longest quiet (at least MODEL_FOLD_QUIET_MIN_NS) fold too.
	 */
	struct fold_early *early = NULL;
	size_t nearly = 0, cap_early = 0, closed = 0, folding = 0;

	while (htab__next(&m->rows, &it, &key, &val)) {
		const struct row *r = val;

		if (!closed_row(r))
			continue;
		closed++;
		if (now - r->moved_ns >= m->fold_after_ns) {
			folding++;
			continue;
		}
		if (now - r->moved_ns < MODEL_FOLD_QUIET_MIN_NS)
			continue;
		if (nearly == cap_early) {
			size_t nc = cap_early ? 2 * cap_early : 256;
			struct fold_early *ne = realloc(early, nc * sizeof(*ne));

			if (!ne)
				goto out;
			early = ne;
			cap_early = nc;
		}
		early[nearly++] = (struct fold_early){ r->moved_ns, r };
	}
	size_t take = 0;

	if (closed - folding > m->closed_rows_max) {
		take = closed - folding - m->closed_rows_max;
		if (take > nearly)
			take = nearly;
		qsort(early, nearly, sizeof(*early), cmp_moved);
	}
	it = 0;
	while (htab__next(&m->rows, &it, &key, &val)) {
		const struct row *r = val;

		if (closed_row(r) && now - r->moved_ns >= m->fold_after_ns &&
		    add_fold_cand(m, &cand, r))
			goto out;
	}
	/* over the cap: the longest quiet, oldest first */
	for (size_t i = 0; i < take; i++)
		if (add_fold_cand(m, &cand, early[i].r))
			goto out;
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
	free(early);
	htab__free(&cand);
	htab__free(&blocked);
	return err;
}

/*
 * Rows, flow attributions and socket ids no count names any more (their
 * sockets were folded, tracer__fold) are dropped, so memory follows what
 * the counts hold. Each table is rebuilt when a quarter of it is stale.
 */
static bool row_counted(const struct row *r, const struct model *m)
{
	return r->skbs || (m->opts.all && r->key.kind == ROW_SOCKET);
}

/* htab__retain's test: a row that goes frees its lists */
static bool keep_row(const void *key, void *val, void *arg)
{
	if (row_counted(val, arg))
		return true;
	row__free(val);
	return false;
}

static bool in_table(const void *key, void *val, void *arg)
{
	return htab__find(arg, key) != NULL;
}

static bool pod_row_exists(const void *key, void *val, void *arg)
{
	const struct model *m = arg;
	const struct model_pod *p = val;
	struct row_key rk = { .kind = ROW_SOCKET, .netns = p->netns,
			      .cookie = *(const uint64_t *)key };

	return htab__find(&m->rows, &rk) != NULL;
}

int model_prune_stale(struct model *m, const struct htab *drops)
{
	size_t it = 0, stale = 0;
	const void *key;
	void *val;

	for (it = 0; htab__next(&m->rows, &it, &key, &val);)
		stale += !row_counted(val, m);
	if (stale > 64 && stale > m->rows.n / 4 && htab__retain(&m->rows, keep_row, m))
		return -ENOMEM;
	/* pods of sockets whose rows went (a row's key: its netns and cookie) */
	if (m->pod_of.n > 64 && m->pod_of.n > 2 * m->rows.n &&
	    htab__retain(&m->pod_of, pod_row_exists, m))
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
