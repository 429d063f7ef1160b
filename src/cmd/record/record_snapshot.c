// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop record's records other than EVENT (docs/trace-format.md): META,
 * REASONS and IFACES at the start, and each snapshot's SHED, SYMBOLS,
 * COUNTS, WINDOWS, MIB, SOCKETS and the names and "missed" in META.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "caps.h"
#include "log.h"
#include "model.h"
#include "netcfg.h"
#include "owner.h"
#include "record_internal.h"
#include "sockid.h"
#include "trace.h"
#include "tracer.h"
#include "util.h"
#include "watch.h"

/* ---- META ------------------------------------------------------------- */

/* /proc/stat's btime (boot, wall-clock seconds), 0 if unknown. */
static uint64_t proc_btime(void)
{
	char line[256];
	unsigned long long v = 0;
	FILE *f = fopen("/proc/stat", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

struct kvlist {
	struct trace_kv v[48];
	char *own[48];
	uint32_t n;
};

static void kv_add(struct kvlist *l, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void kv_add(struct kvlist *l, const char *key, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	if (l->n >= ARRAY_SIZE(l->v))
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	l->own[l->n] = s;
	l->v[l->n].key = key;
	l->v[l->n].value = s;
	l->n++;
}

static void kv_free(struct kvlist *l)
{
	for (uint32_t i = 0; i < l->n; i++)
		free(l->own[i]);
	l->n = 0;
}

/* The netns whose sysctls and interfaces are recorded: -N's, else ours. */
static uint32_t context_netns(const struct model *m)
{
	return m->opts.netns ? m->opts.netns : m->nt.self;
}

int record_write_meta(struct trace_writer *tw, struct model *m, int argc,
		      char **argv, double start_wall, bool m_events,
		      uint32_t cap_len)
{
	struct kvlist l = {};
	struct utsname un;
	char host[256] = "";
	struct strbuf cmd = {}, causes = {}, fallback = {};
	struct netcfg_sysctls sv;
	uint32_t ns = context_netns(m);
	double boot = wall_time() - now_ns() / 1e9;
	int err;

	gethostname(host, sizeof(host) - 1);
	kv_add(&l, TRACE_META_HOST, "%s", host);
	kv_add(&l, TRACE_META_KERNEL, "%s", uname(&un) ? "" : un.release);
	kv_add(&l, TRACE_META_BOOT_TIME, "%.9f", boot);
	kv_add(&l, "proc_stat_btime", "%llu", (unsigned long long)proc_btime());
	kv_add(&l, TRACE_META_START, "%.9f", start_wall);
	sb_printf(&cmd, "udpdrop");
	for (int i = 0; i < argc; i++)
		sb_printf(&cmd, " %s", argv[i]);
	kv_add(&l, TRACE_META_CMDLINE, "%s", cmd.buf);
	kv_add(&l, TRACE_META_VERSION, "%s", UDPDROP_VERSION);
	for (int c = 0; c < CAUSE_MAX; c++)
		sb_printf(&causes, "%s%s", c ? "," : "", cause__name(c));
	kv_add(&l, TRACE_META_CAUSES, "%s", causes.buf);
	kv_add(&l, TRACE_META_CAUSES_FROM, "%s", m->sites ? "location" : "drop_reason");
	kv_add(&l, "netns", "%u", m->opts.netns);
	kv_add(&l, "port", "%u", m->opts.port);
	/* -p or the COMMAND's pid (with its descendants: pid_tree 1) */
	kv_add(&l, "pid", "%d", m->opts.pid);
	kv_add(&l, "pid_tree", "%d", m->opts.pid_tree);
	if (m->opts.pid)
		kv_add(&l, "shed_scope", "%s", "shed events are counted before the process filter: any process's");
	else if (m->opts.netns)
		kv_add(&l, "shed_scope", "%s", "socket_close shed events are counted before the netns filter: any netns's");
	kv_add(&l, "events", "%s", m_events ? "recorded" : "not recorded (--no-events)");
	kv_add(&l, "headers", "%u", cap_len);
	/* "part:needs,...": what this run's privileges left out (caps.h) */
	char unavailable[256];

	caps__list(unavailable, sizeof(unavailable));
	kv_add(&l, "unavailable", "%s", unavailable);

	/* the sysctls of the recorded netns; the ones a netns does not have
	 * of its own (host-wide ones) from udpdrop's netns, and said so */
	netcfg__sysctls(&m->nt, ns, &sv);
	for (size_t i = 0; i < NETCFG_NSYSCTLS; i++)
		if (sv.from_self[i])
			sb_printf(&fallback, "%s%s", fallback.len ? "," : "", netcfg__sysctl_names[i]);
	for (size_t i = 0; i < NETCFG_NSYSCTLS; i++)
		if (sv.ok[i])
			kv_add(&l, netcfg__sysctl_names[i], "%s", sv.v[i]);
	kv_add(&l, "sysctl_netns", "%u", ns);
	if (fallback.len)
		kv_add(&l, "sysctl_from_udpdrop_netns", "%s", fallback.buf);
	/* each one's scope as tested (netcfg.h), and how to reach the netns,
	 * so that report's commands work where they apply, as top's do */
	struct strbuf hostwide = {}, own = {}, settable = {};

	for (int i = 0; i < sv.where.n; i++) {
		const struct advice_sysctl_scope *sc = &sv.where.s[i];
		struct strbuf *b = sc->scope == ADVICE_SCOPE_HOST ? &hostwide
				   : sc->scope == ADVICE_SCOPE_NETNS ? &own : NULL;

		if (b)
			sb_printf(b, "%s%s", b->len ? "," : "", sc->name);
		if (b && sc->settable)
			sb_printf(&settable, "%s%s", settable.len ? "," : "", sc->name);
	}
	if (hostwide.len)
		kv_add(&l, "sysctl_host_wide", "%s", hostwide.buf);
	if (own.len)
		kv_add(&l, "sysctl_per_netns", "%s", own.buf);
	if (hostwide.len || own.len)
		kv_add(&l, "sysctl_settable", "%s", settable.len ? settable.buf : "");
	if (sv.where.name[0])
		kv_add(&l, "sysctl_netns_name", "%s", sv.where.name);
	sb_free(&hostwide);
	sb_free(&own);
	sb_free(&settable);

	struct trace_meta meta = { .n = l.n, .v = l.v };

	err = trace_writer__meta(tw, &meta);
	kv_free(&l);
	sb_free(&cmd);
	sb_free(&causes);
	sb_free(&fallback);
	return err;
}

/* ---- REASONS, IFACES --------------------------------------------------- */

int record_write_reasons(struct trace_writer *tw, const struct model *m)
{
	struct trace_reason *v = calloc(m->reasons.n + 1, sizeof(*v));
	struct trace_reasons r = { .n = m->reasons.n, .v = v };
	int err;

	if (!v)
		return -ENOMEM;
	for (int i = 0; i < m->reasons.n; i++) {
		v[i].value = m->reasons.v[i].value;
		v[i].name = m->reasons.v[i].name;
	}
	err = trace_writer__reasons(tw, &r);
	free(v);
	return err;
}

int record_write_ifaces(struct trace_writer *tw, struct model *m)
{
	struct netcfg_ifaces *il = calloc(1, sizeof(*il));
	int err;

	if (!il)
		return -ENOMEM;
	err = netcfg__ifaces(&m->nt, context_netns(m), il);
	if (err)
		pr_warn(WHO ": cannot list the interfaces of netns %u: %s\n",
			il->netns, strerror(-err));
	struct trace_ifaces ti = { .n = il->n, .v = il->v };

	err = trace_writer__ifaces(tw, &ti);
	free(il);
	return err;
}

/* ---- snapshots: SYMBOLS, COUNTS, MIB, SOCKETS ------------------------- */

/* The drop locations not named yet, before the COUNTS that uses them. */
static int write_symbols(struct recorder *rc)
{
	struct trace_symbol *v = NULL;
	char (*names)[128] = NULL;
	uint32_t n = 0, cap = 0;
	size_t it = 0;
	const void *key;
	void *val;
	int err = 0;

	while (htab__next(&rc->w->drops, &it, &key, &val)) {
		const struct ud_key *k = key;
		int created = 0;

		if (!k->location || !htab__upsert(&rc->syms, &k->location, &created)) {
			if (k->location) {
				err = -ENOMEM;
				goto out;
			}
			continue;
		}
		if (!created)
			continue;
		if (n == cap) {
			uint32_t ncap = cap ? 2 * cap : 16;
			void *nv = realloc(v, ncap * sizeof(*v));
			void *nn = nv ? realloc(names, ncap * sizeof(*names)) : NULL;

			if (nv)
				v = nv;
			if (!nv || !nn) {
				err = -ENOMEM;
				goto out;
			}
			names = nn;
			cap = ncap;
		}
		ksyms__format(&rc->w->m.ksyms, k->location, names[n], sizeof(names[n]));
		if (!strncmp(names[n], "0x", 2))
			continue; /* unknown or hidden: nothing to say */
		v[n].addr = k->location;
		n++;
	}
	for (uint32_t i = 0; i < n; i++)
		v[i].name = names[i];
	if (n) {
		struct trace_symbols s = { .n = n, .v = v };

		err = trace_writer__symbols(rc->tw, &s);
	}
out:
	free(v);
	free(names);
	return err;
}

/*
 * A socketless bucket's share that the live model gave to a socket (its
 * flow matched it then): written as that socket's, flagged, so the report
 * shows each drop where top showed it. A share matched to no socket stays
 * a flow; cookie 0 keeps the key as it was.
 */
static void flow_part_key(const struct ud_key *k, const struct flow_part *p,
			  struct ud_key *out)
{
	*out = *k;
	if (!p->cookie)
		return;
	out->flags |= UD_KEY_SOCK | UD_KEY_FLOW_MATCHED;
	if (p->cookie & UD_RX_INODE) {
		/* a socket known by its inode (it had no cookie yet) */
		out->cookie = (uint32_t)p->cookie;
		out->flags |= UD_KEY_INODE;
	} else {
		out->cookie = p->cookie;
	}
	out->netns = p->netns;
}

/* -N: a closing queue's share goes in only if it was a socket's there. */
static bool flow_part_in_scope(const struct recorder *rc, const struct ud_key *k,
			       const struct flow_part *p)
{
	uint32_t ns = rc->w->m.opts.netns;

	return !ns || !(k->flags & UD_KEY_CLOSE) || (p->cookie && p->netns == ns);
}

static int write_counts(struct recorder *rc, uint64_t t)
{
	struct htab *d = &rc->w->drops;
	size_t cap = d->n + UD_OVERFLOW_SLOTS;
	struct trace_count *v = calloc(cap, sizeof(*v));
	struct trace_counts c = { .time_ns = t, .v = v };
	size_t it = 0;
	const void *key;
	void *val;
	uint64_t sum = 0;
	int err;

	if (!v)
		return -ENOMEM;
	while (htab__next(d, &it, &key, &val)) {
		const struct ud_key *k = key;
		struct flow_part parts[FLOW_SEGS];
		int np = 0;

		if (owner__judge(&rc->own, k, true) != OWNER_YES)
			continue;
		/*
		 * A drop the kernel named no socket for (a closing socket's
		 * purged queue, which has no netns there either; a full
		 * receive queue's from 5.17 to 6.9, whose
		 * udp_fail_queue_rcv_skb comes after the free; a datagram a
		 * kernel tunnel's socket refused, say an unknown VXLAN VNI; a
		 * fragment whose reassembly failed): wherever the live model
		 * matched its flow to a socket, that share is written as the
		 * socket's, so the report shows each drop where top did. The
		 * model holds the one rule (add_flow); the report matches
		 * nothing itself.
		 */
		if (!(k->flags & UD_KEY_SOCK))
			np = model__flow_parts(&rc->w->m, k, val, parts, FLOW_SEGS);
		if (np) {
			/* a flow may split in up to FLOW_SEGS: room for them */
			struct trace_count *nv;

			cap += np - 1;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			c.v = v = nv;
			for (int i = 0; i < np; i++) {
				if (!flow_part_in_scope(rc, k, &parts[i]))
					continue;
				flow_part_key(k, &parts[i], &v[c.n].key);
				v[c.n].val = parts[i].val;
				sum += ud_drops(&v[c.n].key, &v[c.n].val);
				c.n++;
			}
			continue;
		}
		memcpy(&v[c.n].key, key, sizeof(struct ud_key));
		memcpy(&v[c.n].val, val, sizeof(struct ud_val));
		/* a fragment the program could not place: the netns the live
		 * model gives it (as top shows it); -N: only if it is that one */
		if (!k->netns && (k->flags & UD_KEY_NETNS_ADDR)) {
			v[c.n].key.netns = model__key_netns(&rc->w->m, k);
			if (rc->w->m.opts.netns && v[c.n].key.netns != rc->w->m.opts.netns)
				continue;
		}
		sum += ud_drops(&v[c.n].key, &v[c.n].val);
		c.n++;
		/* -p: a socket kept here has its drop windows kept too */
		uint64_t id = sockid__of_key(k);

		if (id && rc->w->m.opts.pid &&
		    (!htab__upsert(&rc->win_ids, &id, NULL) ||
		     !htab__upsert(&rc->win_ids,
				   &(uint64_t){ sockid__row(&rc->w->m.inode2cookie, id) }, NULL))) {
			free(v);
			return -ENOMEM;
		}
	}
	/*
	 * Drops that found the drop table full keep only their reason: one
	 * entry each, so the file's totals stay exact (no process owns them).
	 */
	for (uint32_t r = 0; r < UD_OVERFLOW_SLOTS && !rc->w->m.opts.pid; r++) {
		if (!rc->w->overflow[r].skbs)
			continue;
		v[c.n].key.reason = r;
		v[c.n].key.flags = UD_KEY_OVERFLOW;
		v[c.n].val = rc->w->overflow[r];
		sum += ud_drops(&v[c.n].key, &v[c.n].val);
		c.n++;
	}
	err = write_symbols(rc);
	if (!err)
		err = trace_writer__counts(rc->tw, &c);
	if (!err)
		rc->drops = sum;
	free(v);
	return err;
}

/*
 * The drop windows the model folded since the last snapshot (each whole:
 * every CPU's part in): report folds them again into the same figures top
 * and doctor show (windows.h). -p: only the process's sockets'.
 */
static int write_windows(struct recorder *rc, uint64_t t)
{
	struct windows *w = &rc->w->m.win;
	struct trace_windows ws = { .time_ns = t };
	struct trace_window *v;
	int err = 0;

	if (!w->nfolded)
		return 0;
	v = calloc(w->nfolded, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < w->nfolded; i++) {
		const struct win_folded *f = &w->folded[i];

		if (rc->w->m.opts.pid && !htab__find(&rc->win_ids, &f->id))
			continue;
		v[ws.n++] = (struct trace_window){ f->id, f->cause, f->win, f->datagrams };
	}
	ws.v = v;
	if (ws.n)
		err = trace_writer__windows(rc->tw, &ws);
	if (!err)
		w->nfolded = 0;
	free(v);
	return err;
}

static int write_mibs(struct recorder *rc, uint64_t t)
{
	struct model *m = &rc->w->m;
	struct trace_mib_entry v[MIB_MAX];

	for (int i = 0; i < m->ncounters; i++) {
		const struct netns_counters *nc = &m->counters[i];
		struct trace_mib tm = { .time_ns = t, .netns = nc->netns, .v = v };
		int err;

		if (!nc->in_view || !nc->have_base)
			continue;
		for (int id = 0; id < MIB_MAX; id++) {
			if (!nc->cur.present[id])
				continue;
			v[tm.n].name = mib__name(id);
			v[tm.n].value = nc->cur.v[id];
			tm.n++;
		}
		err = trace_writer__mib(rc->tw, &tm);
		if (err)
			return err;
	}
	return 0;
}

/* sock_info as a SOCKETS entry (without deliveries). */
static void trace_sock_of(struct trace_socket *ts, const struct sock_info *si,
			  uint64_t cookie, uint32_t netns)
{
	ts->cookie = si->cookie ? si->cookie : cookie;
	ts->netns = si->netns ? si->netns : netns;
	ts->inode = si->inode;
	ts->pid = si->npids ? (uint32_t)si->pids[0] : 0;
	ts->family = si->family;
	ts->proto = si->proto;
	memcpy(ts->laddr, si->saddr, 16);
	memcpy(ts->raddr, si->daddr, 16);
	ts->lport = si->sport;
	ts->rport = si->dport;
	memcpy(ts->comm, si->comm, sizeof(ts->comm));
	ts->comm[sizeof(ts->comm) - 1] = 0;
	if (si->have_mem) {
		ts->rcvbuf = si->rcvbuf;
		ts->queued = si->rmem;
	}
}

/*
 * A socket bound to a no_socket flow's port all the same (connected to
 * another peer, bound to another address): written beside the sockets
 * with drops, so that report's advice says the port is taken, as top's
 * does, not that nothing listens. One per flow, the latest seen.
 */
static void add_port_holder(struct model *m, const struct row *r, struct trace_sockets *s,
			    struct trace_socket *v)
{
	const struct sock_info *best = model__port_holder(m, r->key.netns, r->key.dport,
							  r->key.proto);

	if (!best)
		return;
	for (uint32_t i = 0; i < s->n; i++)
		if (v[i].cookie == best->cookie)
			return;
	trace_sock_of(&v[s->n++], best, best->cookie, r->key.netns);
}

static int write_sockets(struct recorder *rc, uint64_t t)
{
	struct model *m = &rc->w->m;
	/* a row each, and a port holder per no_socket flow */
	struct trace_socket *v = calloc(2 * m->rows.n + 1, sizeof(*v));
	struct trace_sockets s = { .time_ns = t, .v = v };
	size_t it = 0;
	const void *key;
	void *val;
	int err;

	if (!v)
		return -ENOMEM;
	while (htab__next(&m->rows, &it, &key, &val)) {
		const struct row *r = val;
		const struct sock_info *si = &r->sock;
		struct trace_socket *ts = &v[s.n];

		if (r->key.kind != ROW_SOCKET || !r->have_sock ||
		    (m->opts.pid && !r->owned_by_pid))
			continue;
		trace_sock_of(ts, si, r->key.cookie, r->key.netns);
		/* the socket's own deliveries: the advice judges "not reading"
		 * and the pacing rate by them, in report as in top */
		ts->delivered = r->rx;
		s.n++;
	}
	for (it = 0; !m->opts.pid && htab__next(&m->rows, &it, &key, &val);) {
		const struct row *r = val;

		if (r->key.kind == ROW_FLOW && r->key.cause == CAUSE_NO_SOCKET && r->key.dport)
			add_port_holder(m, r, &s, v);
	}
	s.have_rx = m->have_rx;
	err = trace_writer__sockets(rc->tw, &s);
	free(v);
	return err;
}

/*
 * The names top shows, for the report to show the same (META, written
 * again whenever one is new or changed): "netns_name.INODE" (the `ip
 * netns` name of a namespace in view), "kernel_owner.COOKIE" (the kernel
 * device that owns a socket no process holds, kowner.h) and
 * "k8s_pod.COOKIE" (the Kubernetes pod of the socket's owner, pods.h:
 * "NAMESPACE/POD/CONTAINER/UID"; a name the kubelet's logs did not give
 * is empty). At most NAMES_MAX keys per trace, far below TRACE_META_MAX;
 * rc->names keeps a hash of each one's last value.
 */
#define NAME_NETNS (1ull << 63)
#define NAME_POD (1ull << 62)
#define NAME_ID_MASK (~(NAME_NETNS | NAME_POD))
#define NAMES_MAX 2048u
#define NAME_VALUE_LEN 448 /* a pod's four names, '/'-joined */

struct names {
	struct trace_kv *v;
	char (*keys)[40];
	char (*vals)[NAME_VALUE_LEN];
	uint32_t n, max;
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static void name_add(struct recorder *rc, struct names *nm, uint64_t id,
		     const char *value)
{
	uint64_t *last, h = name_hash(value);
	int created;

	if (nm->n >= nm->max || (rc->names.n >= NAMES_MAX && !htab__find(&rc->names, &id)))
		return;
	last = htab__upsert(&rc->names, &id, &created);
	if (!last || (!created && *last == h))
		return;
	*last = h;
	if (id & NAME_NETNS)
		snprintf(nm->keys[nm->n], sizeof(nm->keys[0]), "netns_name.%u", (uint32_t)id);
	else if (id & NAME_POD)
		snprintf(nm->keys[nm->n], sizeof(nm->keys[0]), "k8s_pod.%llu",
			 (unsigned long long)(id & NAME_ID_MASK));
	else
		snprintf(nm->keys[nm->n], sizeof(nm->keys[0]), "kernel_owner.%llu",
			 (unsigned long long)id);
	snprintf(nm->vals[nm->n], sizeof(nm->vals[0]), "%s", value);
	nm->v[nm->n].key = nm->keys[nm->n];
	nm->v[nm->n].value = nm->vals[nm->n];
	nm->n++;
}

static int write_names(struct recorder *rc)
{
	struct model *m = &rc->w->m;
	struct names nm = { .max = 2 * m->rows.n + m->ncounters + 1 };
	char nsbuf[64], pod[NAME_VALUE_LEN];
	size_t it = 0;
	const void *key;
	void *val;
	int err = 0;

	nm.v = calloc(nm.max, sizeof(*nm.v));
	nm.keys = calloc(nm.max, sizeof(*nm.keys));
	nm.vals = calloc(nm.max, sizeof(*nm.vals));
	if (!nm.v || !nm.keys || !nm.vals) {
		err = -ENOMEM;
		goto out;
	}
	while (htab__next(&m->rows, &it, &key, &val)) {
		const struct row *r = val;
		uint32_t ns = r->key.kind == ROW_SOCKET && r->have_sock && r->sock.netns
				      ? r->sock.netns : r->key.netns;
		/* the cookie write_sockets gives it */
		uint64_t id = (r->sock.cookie ? r->sock.cookie : r->key.cookie) & NAME_ID_MASK;
		const struct pod_names *p;

		/* -p: the process's sockets only, as SOCKETS */
		if (m->opts.pid && (r->key.kind != ROW_SOCKET || !r->owned_by_pid))
			continue;
		if (ns && model__netns_named(m, ns))
			name_add(rc, &nm, NAME_NETNS | ns,
				 model__netns_label(m, ns, nsbuf, sizeof(nsbuf)));
		if (r->key.kind != ROW_SOCKET || !r->have_sock)
			continue;
		if (!r->sock.npids && r->sock.kowner[0])
			name_add(rc, &nm, id, r->sock.kowner);
		if (r->sock.npids && (p = model__pod(m, r))) {
			snprintf(pod, sizeof(pod), "%s/%s/%s/%s", p->ns, p->pod, p->container, p->uid);
			name_add(rc, &nm, NAME_POD | id, pod);
		}
	}
	for (int i = 0; i < m->ncounters; i++) {
		uint32_t ns = m->counters[i].netns;

		if (m->counters[i].in_view && ns && model__netns_named(m, ns))
			name_add(rc, &nm, NAME_NETNS | ns,
				 model__netns_label(m, ns, nsbuf, sizeof(nsbuf)));
	}
	if (nm.n) {
		struct trace_meta meta = { .n = nm.n, .v = nm.v };

		err = trace_writer__meta(rc->tw, &meta);
	}
out:
	free(nm.v);
	free(nm.keys);
	free(nm.vals);
	return err;
}

/*
 * META "missed": the runs of the programs the kernel skipped (a drop
 * inside a drop on one CPU; recursion_misses, as top's "missed"), since
 * the attach, written again whenever it grows: their drops are in no
 * count, so report says so as top does.
 */
static int write_missed(struct recorder *rc)
{
	uint64_t missed = rc->w->m.missed;
	char val[24];
	struct trace_kv kv = { .key = "missed", .value = val };

	if (missed == rc->missed)
		return 0;
	rc->missed = missed;
	snprintf(val, sizeof(val), "%llu", (unsigned long long)missed);
	return trace_writer__meta(rc->tw, &(struct trace_meta){ .n = 1, .v = &kv });
}

/* The cause a shed slot stands for (layout in udpdrop.h). */
static enum cause shed_cause(struct model *m, uint32_t slot)
{
	static const uint32_t class_flags[UD_SHED_CLASSES] = {
		[UD_SHED_PLAIN] = 0,
		[UD_SHED_CLOSE] = UD_KEY_CLOSE,
		[UD_SHED_FAIL_RCVBUF] = UD_KEY_FAIL_RCVBUF,
		[UD_SHED_FAIL_MEM] = UD_KEY_FAIL_MEM,
	};
	uint32_t reason = slot / UD_SHED_CLASSES;

	/* the last reason slot holds every reason from it on: no one name */
	if (reason == UD_SHED_REASONS - 1)
		return CAUSE_OTHER;
	return model__cause(m, reason, class_flags[slot % UD_SHED_CLASSES]);
}

/* A SHED record with what was shed since the last one, if anything. */
static int write_shed(struct recorder *rc, uint64_t t)
{
	uint64_t per_cause[CAUSE_MAX] = {};
	struct trace_cause_count v[CAUSE_MAX];
	struct trace_shed sh = { .time_ns = t, .v = v };
	int err;

	if (!rc->events_on)
		return 0;
	err = tracer__read_shed(&rc->w->t, rc->shed_now);
	if (err)
		return err;
	for (uint32_t i = 0; i < UD_SHED_SLOTS; i++) {
		uint64_t d = rc->shed_now[i] - rc->shed_seen[i];

		if (d)
			per_cause[shed_cause(&rc->w->m, i)] += d;
		if (rc->w->m.opts.netns && i % UD_SHED_CLASSES == UD_SHED_CLOSE)
			rc->shed_any_netns += d;
		rc->shed_seen[i] = rc->shed_now[i];
	}
	for (int c = 0; c < CAUSE_MAX; c++) {
		/* -N alone holds only closing queues' events: unjudged, any netns's */
		if (rc->w->m.opts.netns && !rc->w->m.opts.pid)
			rc->shed_any_netns += rc->held_shed[c];
		per_cause[c] += rc->held_shed[c];
		rc->held_shed[c] = 0;
	}
	for (int c = 0; c < CAUSE_MAX; c++)
		if (per_cause[c]) {
			v[sh.n].cause = c;
			v[sh.n].n = per_cause[c];
			sh.n++;
			rc->shed += per_cause[c];
		}
	return sh.n ? trace_writer__shed(rc->tw, &sh) : 0;
}

/* One snapshot: what the last refresh (or the baseline) read. */
int record_snapshot(struct recorder *rc, uint64_t t)
{
	int err = 0;

	/* the refresh has described what it could: the held are decided */
	owner__scan(&rc->own, now_ns());
	if (rc->held_len)
		err = record_release_held(rc, true);
	if (!err)
		err = write_shed(rc, t);
	if (!err)
		err = write_counts(rc, t);
	if (!err)
		err = write_windows(rc, t);

	if (!err)
		err = write_mibs(rc, t);
	if (!err)
		err = write_sockets(rc, t);
	if (!err)
		err = write_names(rc);
	if (!err)
		err = write_missed(rc);
	if (!err)
		err = trace_writer__flush(rc->tw);
	return err;
}
