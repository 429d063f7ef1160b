// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop report, one row per socket and the join (report_internal.h): the
 * SOCKETS, IFACES, MIB, EVENT and WINDOWS records folded per socket as they
 * load, then the last COUNTS added to the model's rows (rows.h: the rule
 * top's model sums by, so report's rows are top's), each with what the
 * trace knows of its socket, and the reconciliation: what every output
 * prints (struct agg).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reconcile.h"
#include "report_internal.h"
#include "sockid.h"

/* ---- one row per socket (sockid.h) ----------------------------------- */

/* A SOCKETS entry's identity: its cookie (record writes UD_RX_INODE |
 * inode there for a socket known only by its inode), else its inode. */
static uint64_t entry_id(const struct trace_socket *s)
{
	if (s->cookie)
		return s->cookie;
	return s->inode ? sockid__of(s->inode, true) : 0;
}

static uint64_t cookie_of_inode(const struct report *rp, uint32_t inode)
{
	uint64_t k = inode;
	const uint64_t *c = inode ? rp_xfind(&rp->inode_cookie, &k) : NULL;

	return c ? *c : 0;
}

/* The row an identity counts on: sockid.h's rule over the file's SOCKETS. */
uint64_t rp_report_row(const struct report *rp, uint64_t id)
{
	return sockid__join(id, cookie_of_inode(rp, sockid__inode(id)));
}

static bool has_owner(const struct trace_socket *s)
{
	return s->pid || s->comm[0];
}

static const struct trace_socket *socket_of_row(const struct report *rp, uint64_t id)
{
	const uint32_t *i = rp_xfind(&rp->sock_idx, &id);

	return i ? &rp->sockets[*i] : NULL;
}

/*
 * A SOCKETS record into rp->sockets, one entry per row: the newest look
 * at each socket, keeping the owner an earlier look found (under either
 * identity) where the newest has none: the socket closed, or its process
 * left, but the drops were that process's.
 */
void rp_merge_sockets(struct report *rp, const struct trace_sockets *ts)
{
	if (!rp->sock_idx.cap) {
		rp_xhtab_init(&rp->sock_idx, sizeof(uint64_t), sizeof(uint32_t));
		rp_xhtab_init(&rp->inode_cookie, sizeof(uint64_t), sizeof(uint64_t));
	}
	for (uint32_t i = 0; i < ts->n; i++) {
		const struct trace_socket *e = &ts->v[i];
		uint64_t ino = e->inode;

		if (sockid__joins(e->inode, e->cookie))
			*(uint64_t *)rp_xupsert(&rp->inode_cookie, &ino, NULL) = e->cookie;
	}
	for (uint32_t i = 0; i < ts->n; i++) {
		const struct trace_socket *e = &ts->v[i];
		uint64_t id = rp_report_row(rp, entry_id(e));
		struct trace_socket prev = { 0 }, *s;
		const struct trace_socket *by_inode;
		uint32_t *slot;
		int created;

		if (!id)
			continue;
		slot = rp_xupsert(&rp->sock_idx, &id, &created);
		if (created) {
			*slot = rp->nsockets;
			rp->sockets = rp_grow_arr(rp->sockets, rp->nsockets, sizeof(*rp->sockets));
			rp->nsockets++;
			/* known by its inode before a dump named its cookie */
			by_inode = e->inode && !(id & UD_RX_INODE)
				   ? socket_of_row(rp, sockid__of(e->inode, true)) : NULL;
			if (by_inode)
				prev = *by_inode;
		} else {
			prev = rp->sockets[*slot];
		}
		s = &rp->sockets[*slot];
		*s = *e;
		if (!(id & UD_RX_INODE))
			s->cookie = id; /* an inode's look joined to its cookie */
		if (!has_owner(s) && has_owner(&prev)) {
			s->pid = prev.pid;
			memcpy(s->comm, prev.comm, sizeof(s->comm));
		}
	}
}

/* Each socket's queue: how full at every SOCKETS snapshot that listed it. */
void rp_add_queues(struct report *rp, const struct trace_sockets *ts)
{
	for (uint32_t i = 0; i < ts->n; i++) {
		const struct trace_socket *k = &ts->v[i];
		struct report_queue *q;
		uint32_t j, *slot;
		int created;

		if (!rp->queue_idx.cap)
			rp_xhtab_init(&rp->queue_idx, sizeof(uint64_t), sizeof(uint32_t));
		slot = rp_xupsert(&rp->queue_idx, &k->cookie, &created);
		if (created) {
			j = rp->nqueues;
			*slot = j;
			rp->queues = rp_grow_arr(rp->queues, rp->nqueues, sizeof(*rp->queues));
			memset(&rp->queues[j], 0, sizeof(rp->queues[j]));
			rp->queues[j].cookie = k->cookie;
			rp->queues[j].low = k->queued;
			rp->nqueues++;
		}
		q = &rp->queues[*slot];
		if (ts->have_rx && (!q->nrx || ts->time_ns > q->rx[q->nrx - 1].time_ns)) {
			q->rx = rp_grow_arr(q->rx, q->nrx, sizeof(*q->rx));
			q->rx[q->nrx++] = (struct report_rx){ ts->time_ns, k->delivered };
		}
		q->looks++;
		if (k->queued < q->low)
			q->low = k->queued;
		if (k->queued > q->peak)
			q->peak = k->queued;
		q->last = k->queued;
	}
}

bool rp_add_ifaces(struct report *rp, const struct trace_record *rec)
{
	const struct trace_ifaces *ti = &rec->ifaces;

	for (uint32_t i = 0; i < ti->n; i++) {
		uint64_t key = (uint64_t)ti->v[i].netns << 32 | ti->v[i].ifindex;
		int created;
		uint32_t n = rp->nifaces, *j = rp_table_slot(rp, rec, &rp->iface_idx, key,
							   &rp->nifaces, TRACE_IFACES_MAX,
							   "IFACES interfaces", &created);

		if (!j)
			return false;
		if (created)
			rp->ifaces = rp_grow_arr(rp->ifaces, n, sizeof(*rp->ifaces));
		else
			free((char *)rp->ifaces[*j].name);
		rp->ifaces[*j] = ti->v[i];
		rp->ifaces[*j].name = rp_xstrdup(ti->v[i].name);
	}
	return true;
}

/* The counters this build knows, by id: the others are never used. A
 * name listed twice counts once, the first time (as a lookup finds it). */
static void set_mib(struct report_mib *m, const struct trace_mib *tm)
{
	memset(m, 0, sizeof(*m));
	m->netns = tm->netns;
	m->time_ns = tm->time_ns;
	for (uint32_t i = 0; i < tm->n; i++)
		for (int id = 0; id < MIB_MAX; id++)
			if (!strcmp(tm->v[i].name, mib__name(id))) {
				if (!m->c.present[id]) {
					m->c.present[id] = 1;
					m->c.v[id] = tm->v[i].value;
				}
				break;
			}
}

void rp_add_mib(struct report *rp, const struct trace_mib *tm)
{
	uint64_t key = tm->netns;
	int created;
	uint32_t *i;

	if (!rp->mib_idx.cap)
		rp_xhtab_init(&rp->mib_idx, sizeof(key), sizeof(uint32_t));
	i = rp_xupsert(&rp->mib_idx, &key, &created);
	if (!created) {
		set_mib(&rp->mib_last[*i], tm);
		return;
	}
	*i = rp->nmibs;
	rp->mib_first = rp_grow_arr(rp->mib_first, rp->nmibs, sizeof(*rp->mib_first));
	rp->mib_last = rp_grow_arr(rp->mib_last, rp->nmibs, sizeof(*rp->mib_last));
	set_mib(&rp->mib_first[rp->nmibs], tm);
	set_mib(&rp->mib_last[rp->nmibs], tm);
	rp->nmibs++;
}

/* The burst windows (BURST_*, struct ev_burst): report_internal.h. */

uint64_t rp_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void ev_burst_add(struct ev_burst *b, uint64_t time_ns, uint64_t datagrams)
{
	const uint64_t keep = BURST_RING - BURST_SLOTS;
	uint64_t s = time_ns / BURST_SLOT_NS, w[2 * BURST_SLOTS - 1], sum = 0;

	b->datagrams = rp_add_sat(b->datagrams, datagrams);
	if (!datagrams)
		return;
	if (!b->started) {
		b->started = true;
		b->head = s;
		b->first_win = b->last_win = time_ns / BURST_WINDOW_NS;
		b->wins_dropping = 1;
	} else if (time_ns / BURST_WINDOW_NS > b->last_win) {
		b->last_win = time_ns / BURST_WINDOW_NS;
		b->wins_dropping++;
	}
	if (s > b->head) {
		if (s - b->head >= BURST_RING)
			memset(b->n, 0, sizeof(b->n));
		else
			for (uint64_t x = b->head + 1; x <= s; x++)
				b->n[x % BURST_RING] = 0;
		b->head = s;
	} else if (b->head - s > keep) {
		s = b->head - keep;
	}
	b->n[s % BURST_RING] += datagrams;
	if (b->n[s % BURST_RING] > BURST_SLOT_MAX)
		b->n[s % BURST_RING] = BURST_SLOT_MAX;
	/* the windows holding slot s end at s .. s + BURST_SLOTS - 1: w holds
	 * slots s - (BURST_SLOTS - 1) .. s + BURST_SLOTS - 1 (0 before slot 0
	 * and after head); counts only grow, so their sums now can only be
	 * beaten by later events, which look again */
	for (uint64_t i = 0; i < ARRAY_SIZE(w); i++) {
		uint64_t x = s + i - (BURST_SLOTS - 1);

		w[i] = s + i >= BURST_SLOTS - 1 && x <= b->head ? b->n[x % BURST_RING] : 0;
	}
	for (int i = 0; i < (int)ARRAY_SIZE(w); i++) {
		sum += w[i];
		if (i >= BURST_SLOTS)
			sum -= w[i - BURST_SLOTS];
		if (i >= BURST_SLOTS - 1 && sum > b->best)
			b->best = sum;
	}
}

/*
 * One socket's events under two keys (by inode until a dump gave it a
 * cookie, by cookie after) as one: into takes b's slots in time order, so
 * a window across the change counts both sides where the rings still hold
 * them, and each side's best window stands.
 */
void rp_ev_burst_join(struct ev_burst *into, const struct ev_burst *b)
{
	const struct ev_burst *late = b;
	struct ev_burst early;
	uint64_t datagrams, best;

	if (!b->started)
		return;
	if (!into->started) {
		*into = *b;
		return;
	}
	datagrams = rp_add_sat(into->datagrams, b->datagrams);
	best = into->best > b->best ? into->best : b->best;
	early = *into;
	if (b->head < into->head) {
		early = *b;
		late = into;
	}
	/* the later ring's slots, oldest first, replayed onto the earlier */
	for (uint64_t x = late->head >= BURST_RING - 1 ? late->head - (BURST_RING - 1) : 0;
	     x <= late->head; x++)
		if (late->n[x % BURST_RING])
			ev_burst_add(&early, x * BURST_SLOT_NS, late->n[x % BURST_RING]);
	*into = early;
	into->datagrams = datagrams;
	if (best > into->best)
		into->best = best;
}

void rp_add_event(struct report *rp, const struct trace_event *e)
{
	/* the cause as the counts give it (the file's REASONS come first) */
	struct ev_key key = {
		.cookie = e->cookie,
		.cause = (uint32_t)rp_rc_cause(rp, e->reason, e->flags),
		.by_inode = e->cookie && (e->flags & UD_KEY_INODE),
	};

	if (!rp->ev_burst.cap)
		rp_xhtab_init(&rp->ev_burst, sizeof(key), sizeof(struct ev_burst));
	ev_burst_add(rp_xupsert(&rp->ev_burst, &key, NULL), e->time_ns, e->datagrams);
}

static int writer_cause(const struct report *rp, unsigned c);

/*
 * WINDOWS: each window is whole and written once, per socket and cause in
 * time order, so it folds now (memory stays one figure per socket and
 * cause). The identity stays as written (inode or cookie): advice joins a
 * socket's two (set_kernel_windows), as top's model does.
 */
bool rp_add_windows(struct report *rp, const struct trace_windows *ws)
{
	if (!rp->have_windows) {
		if (windows__init(&rp->win))
			abort();
		rp->have_windows = true;
	}
	for (uint32_t i = 0; i < ws->n; i++) {
		int c = ws->v[i].cause == WIN_DELIVERED ? WIN_DELIVERED
						      : writer_cause(rp, ws->v[i].cause);

		if (c < 0 || !ws->v[i].datagrams)
			continue;
		if (windows__add(&rp->win, rp_kx_id(ws->v[i].id), c, ws->v[i].win,
				  ws->v[i].datagrams))
			abort(); /* out of memory, as rp_xupsert */
	}
	/* the record's whole: a window's deliveries meet its drops in one fold */
	if (windows__fold(&rp->win, UINT32_MAX))
		abort();
	return true;
}

/* ---- joining ---------------------------------------------------------- */

const char *rp_reason_name(const struct report *rp, uint32_t reason)
{
	uint64_t key = reason;
	const uint32_t *i = rp_xfind(&rp->reason_idx, &key);

	return i ? rp->reasons[*i].name : NULL;
}

const char *rp_symbol_name(const struct report *rp, uint64_t addr)
{
	const uint32_t *i = rp_xfind(&rp->symbol_idx, &addr);

	return i ? rp->symbols[*i].name : NULL;
}

int rp_key_cause(const struct report *rp, const struct ud_key *k)
{
	const char *name = rp_reason_name(rp, k->reason);

	return cause__classify(name ? name : "", k->flags);
}

const char *rp_meta_get(const struct report *rp, const char *key)
{
	struct name_key nk;
	int64_t i = rp_meta_find(rp, key, &nk);

	return i >= 0 ? rp->meta[i].value : NULL;
}

/*
 * The name of the writer's cause number c: META causes lists them by
 * number, so a file from another version names its own; this build's
 * names when the file has no list.
 */
void rp_writer_cause_name(const struct report *rp, unsigned c, char *buf,
			  size_t len)
{
	const char *list = rp_meta_get(rp, TRACE_META_CAUSES), *p = list;

	if (!list) {
		snprintf(buf, len, "%s", c < CAUSE_MAX ? cause__name(c) : "other");
		return;
	}
	for (unsigned i = 0; i < c && p; i++) {
		p = strchr(p, ',');
		if (p)
			p++;
	}
	if (!p || !*p || *p == ',') {
		snprintf(buf, len, "cause_%u", c);
		return;
	}
	snprintf(buf, len, "%.*s", (int)strcspn(p, ","), p);
}

/* The writer's cause number c as ours (-1: none of ours), looked up once. */
static int writer_cause(const struct report *rp, unsigned c)
{
	struct report *w = (struct report *)rp; /* a cache, not the file's state */
	char name[64];

	if (c >= TRACE_CAUSES_MAX)
		return -1;
	if (!w->wcause[c]) {
		rp_writer_cause_name(rp, c, name, sizeof(name));
		w->wcause[c] = (int16_t)(cause__from_name(name) + 2);
	}
	return w->wcause[c] - 2;
}

/* "297 written, 0 shed" and the rest of the events line. */
void rp_fmt_events(const struct report *rp, struct strbuf *out)
{
	const char *m = rp_meta_get(rp, "events"), *h = rp_meta_get(rp, "headers");
	char name[64], n[32];
	bool first = true;

	if (m && strcmp(m, "recorded")) {
		sb_printf(out, "%s", m);
		return;
	}
	fmt_count(n, sizeof(n), rp->events);
	sb_printf(out, "%s written", n);
	if (h && strcmp(h, "0"))
		sb_printf(out, " (with the first %s B of each packet)", h);
	fmt_count(n, sizeof(n), rp->shed_total);
	sb_printf(out, ", %s shed", n);
	for (unsigned c = 0; c < TRACE_CAUSES_MAX; c++) {
		if (!rp->shed[c])
			continue;
		rp_writer_cause_name(rp, c, name, sizeof(name));
		fmt_count(n, sizeof(n), rp->shed[c]);
		sb_printf(out, "%s%s %s", first ? " (" : ", ", name, n);
		first = false;
	}
	if (!first)
		sb_printf(out, "; the counts are exact)");
	/* -p / COMMAND: the kernel sheds before user space knows the owner */
	const char *pid = rp_meta_get(rp, "pid"), *ns = rp_meta_get(rp, "netns");

	if (rp->shed_total && pid && strcmp(pid, "0") && rp_meta_get(rp, "shed_scope")) {
		sb_printf(out, "; the shed may include other processes' events");
		return;
	}
	/* -N: a closing queue has no netns in the kernel, which sheds first */
	for (unsigned c = 0; ns && strcmp(ns, "0") && c < TRACE_CAUSES_MAX; c++) {
		if (!rp->shed[c])
			continue;
		rp_writer_cause_name(rp, c, name, sizeof(name));
		if (!strcmp(name, "socket_close"))
			sb_printf(out, "; the socket_close shed may include other namespaces' events");
	}
}

static int cmp_sock(const void *a, const void *b)
{
	const struct agg_sock *x = a, *y = b;

	if (x->row.drops != y->row.drops)
		return x->row.drops > y->row.drops ? -1 : 1;
	if (x->row.skbs != y->row.skbs)
		return x->row.skbs > y->row.skbs ? -1 : 1;
	return x->cookie < y->cookie ? -1 : x->cookie > y->cookie;
}

static int cmp_flow(const void *a, const void *b)
{
	const struct agg_flow *x = a, *y = b;
	int c;

	if (x->row.drops != y->row.drops)
		return x->row.drops > y->row.drops ? -1 : 1;
	if (x->row.skbs != y->row.skbs)
		return x->row.skbs > y->row.skbs ? -1 : 1;
	if (x->cause != y->cause)
		return x->cause - y->cause;
	if (x->netns != y->netns)
		return x->netns < y->netns ? -1 : 1;
	if ((c = memcmp(x->daddr, y->daddr, 16)))
		return c;
	if (x->dport != y->dport)
		return x->dport - y->dport;
	if ((c = memcmp(x->saddr, y->saddr, 16)))
		return c;
	/* rows come from a hash table: the order must not depend on it */
	if (x->proto != y->proto)
		return x->proto - y->proto;
	if (x->family != y->family)
		return x->family - y->family;
	return (int)x->overflow - (int)y->overflow;
}

int rp_cmp_reason(const void *a, const void *b)
{
	const struct row_reason *x = a, *y = b;

	if (x->drops != y->drops)
		return x->drops > y->drops ? -1 : 1;
	if (x->skbs != y->skbs)
		return x->skbs > y->skbs ? -1 : 1;
	if (x->reason != y->reason)
		return x->reason < y->reason ? -1 : 1;
	return x->cause - y->cause;
}

int rp_cmp_loc(const void *a, const void *b)
{
	const struct row_loc *x = a, *y = b;

	if (x->skbs != y->skbs)
		return x->skbs > y->skbs ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* (netns, cause) -> datagrams in a COUNTS snapshot: one pass, then a
 * lookup per netns with counters and cause. */
struct ns_cause_key {
	uint32_t netns;
	int32_t cause;
};

/* A netns's cause: datagrams, and the same in the kernel's unit (rows.h). */
struct ns_cause_sum {
	uint64_t dgrams, units;
};

static void counts_by_cause(const struct report *rp, const struct report_counts *c,
			    struct htab *h)
{
	rp_xhtab_init(h, sizeof(struct ns_cause_key), sizeof(struct ns_cause_sum));
	for (uint32_t i = 0; i < c->n; i++) {
		struct ns_cause_key k = { c->v[i].key.netns, rp_key_cause(rp, &c->v[i].key) };
		struct ns_cause_sum *n = rp_xupsert(h, &k, NULL);

		/* wraps as the sum it replaces did */
		n->dgrams += ud_drops(&c->v[i].key, &c->v[i].val);
		n->units += ud_kernel_units(&c->v[i].key, &c->v[i].val);
	}
}

static struct ns_cause_sum counts_cause(const struct htab *h, uint32_t netns, int cause)
{
	struct ns_cause_key k = { netns, cause };
	const struct ns_cause_sum *n = rp_xfind(h, &k);

	return n ? *n : (struct ns_cause_sum){ 0, 0 };
}

bool rp_mib_value(const struct report_mib *m, enum mib_id id, uint64_t *v)
{
	*v = m->c.v[id];
	return m->c.present[id];
}

/* The first and last MIB of netns, or NULL. */
const struct report_mib *rp_mib_of(const struct report *rp, uint32_t netns,
				   const struct report_mib **last)
{
	uint64_t key = netns;
	const uint32_t *i = rp_xfind(&rp->mib_idx, &key);

	if (!i)
		return NULL;
	*last = &rp->mib_last[*i];
	return &rp->mib_first[*i];
}

/* A row of rows.h as report's: the socket's, with what the SOCKETS said
 * of it; its lists move over (rows__free leaves them). */
static void sock_of_row(const struct report *rp, struct row *r, struct agg_sock *s)
{
	uint64_t id = r->key.cookie;

	memset(s, 0, sizeof(*s));
	s->row = *r;
	r->reasons = NULL;
	r->locs = NULL;
	s->by_inode = sockid__inode(id) != 0;
	s->cookie = s->by_inode ? sockid__inode(id) : id;
	s->sock = socket_of_row(rp, id);
	s->netns = s->sock && s->sock->netns ? s->sock->netns : r->key.netns;
}

static void flow_of_row(struct row *r, struct agg_flow *f)
{
	memset(f, 0, sizeof(*f));
	f->row = *r;
	r->reasons = NULL;
	r->locs = NULL;
	f->cause = r->key.cause;
	f->overflow = r->key.overflow;
	f->netns = r->key.netns;
	f->family = r->key.family;
	f->proto = r->key.proto;
	f->dport = r->key.dport;
	memcpy(f->saddr, r->key.saddr, 16);
	memcpy(f->daddr, r->key.daddr, 16);
}

void rp_build(const struct report *rp, struct agg *a)
{
	const struct report_counts *last = &rp->last;
	struct htab rows, sums_first, sums_last;
	size_t it = 0;
	const void *key;
	void *val;

	memset(a, 0, sizeof(*a));
	if (rows__init(&rows))
		abort(); /* out of memory, as rp_xupsert */
	/*
	 * The last COUNTS into rows.h's rows, as top's model adds its
	 * snapshot: one row per socket (its inode's counts and its cookie's
	 * together once a SOCKETS record named both: rp_report_row is the
	 * model's sockid.h join), one per socketless flow and cause.
	 */
	for (uint32_t i = 0; i < last->n; i++) {
		const struct trace_count *tc = &last->v[i];
		const struct ud_key *k = &tc->key;
		int cause = rp_key_cause(rp, k);
		uint64_t id = k->cookie
			? rp_report_row(rp, sockid__of(k->cookie, k->flags & UD_KEY_INODE)) : 0;

		a->drops += ud_drops(k, &tc->val);
		a->skbs += tc->val.skbs;
		a->cause[cause] += ud_drops(k, &tc->val);
		a->cause_skbs[cause] += tc->val.skbs;
		if (rows__add(&rows, k, &tc->val, cause, id, k->netns, NULL))
			abort();
	}
	for (it = 0; htab__next(&rows, &it, &key, &val);) {
		struct row *r = val;

		if (r->key.kind == ROW_SOCKET) {
			a->socks = rp_grow_arr(a->socks, a->nsocks, sizeof(*a->socks));
			sock_of_row(rp, r, &a->socks[a->nsocks++]);
		} else {
			a->flows = rp_grow_arr(a->flows, a->nflows, sizeof(*a->flows));
			flow_of_row(r, &a->flows[a->nflows++]);
		}
	}
	rows__free(&rows);
	if (a->nsocks)
		qsort(a->socks, a->nsocks, sizeof(*a->socks), cmp_sock);
	if (a->nflows)
		qsort(a->flows, a->nflows, sizeof(*a->flows), cmp_flow);
	for (int j = 0; j < a->nsocks; j++) {
		if (a->socks[j].row.nreasons)
			qsort(a->socks[j].row.reasons, a->socks[j].row.nreasons,
			      sizeof(*a->socks[j].row.reasons), rp_cmp_reason);
		if (a->socks[j].row.nlocs)
			qsort(a->socks[j].row.locs, a->socks[j].row.nlocs,
			      sizeof(*a->socks[j].row.locs), rp_cmp_loc);
	}

	/* reconciliation: per netns with MIB records, per cause with counters */
	counts_by_cause(rp, &rp->last, &sums_last);
	counts_by_cause(rp, &rp->first, &sums_first);
	for (uint32_t i = 0; i < rp->nmibs; i++) {
		const struct report_mib *mf = &rp->mib_first[i], *ml = &rp->mib_last[i];

		for (int c = 0; c < CAUSE_MAX; c++) {
			enum mib_id ids[4];
			int n = cause__mibs(c, ids, ARRAY_SIZE(ids));
			struct agg_recon *r;
			size_t o = 0;

			if (n <= 0)
				continue;
			a->recon = rp_grow_arr(a->recon, a->nrecon, sizeof(*a->recon));
			r = &a->recon[a->nrecon++];
			memset(r, 0, sizeof(*r));
			r->netns = mf->netns;
			r->cause = c;
			for (int k = 0; k < n; k++) {
				const char *name = mib__name(ids[k]);
				uint64_t v0, v1;

				if (!rp_mib_value(mf, ids[k], &v0) ||
				    !rp_mib_value(ml, ids[k], &v1))
					continue;
				r->have_kernel = true;
				/* a counter that went down adds nothing (as mib_delta) */
				r->kernel = rp_add_sat(r->kernel, v1 > v0 ? v1 - v0 : 0);
				if (o < sizeof(r->counters))
					o += snprintf(r->counters + o, sizeof(r->counters) - o,
						      "%s%s", o ? "+" : "", name);
			}
			{
				struct ns_cause_sum u1 = counts_cause(&sums_last, mf->netns, c);
				struct ns_cause_sum u0 = rp->first.have
					? counts_cause(&sums_first, mf->netns, c)
					: (struct ns_cause_sum){ 0, 0 };

				r->udpdrop = u1.units > u0.units ? u1.units - u0.units : 0;
				r->udpdrop_datagrams = u1.dgrams > u0.dgrams ? u1.dgrams - u0.dgrams : 0;
			}
		}
	}
	htab__free(&sums_first);
	htab__free(&sums_last);
}

void rp_agg_free(struct agg *a)
{
	for (int i = 0; i < a->nsocks; i++)
		row__free(&a->socks[i].row);
	for (int i = 0; i < a->nflows; i++)
		row__free(&a->flows[i].row);
	free(a->socks);
	free(a->flows);
	free(a->recon);
}
