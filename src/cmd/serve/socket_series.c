// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udpdrop serve's per-socket series: see socket_series.h. */
#include <errno.h>
#include <stddef.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "socket_series.h"
#include "sockid.h"
#include "util.h"

enum ss_port_kind { SS_PORT_NUMBER, SS_PORT_EPHEMERAL, SS_PORT_OTHER };

/* The cause of a socket's own series: its deliveries and gauges. */
#define SS_CAUSE_NONE (-1)

struct ss_key {
	uint32_t netns;
	uint8_t family;         /* AF_INET, AF_INET6 */
	uint8_t kind;           /* enum ss_port_kind */
	uint16_t port;          /* SS_PORT_NUMBER's */
	int32_t cause;          /* SS_CAUSE_NONE: the sockets' own series */
	char comm[16];          /* the owner's; "" none known */
	uint32_t pod;           /* interned (struct ss_pod_ref), 0: none */
};

struct ss_val {
	struct ss_key k;
	uint64_t drops;         /* a cause's: datagrams dropped */
	uint64_t bytes;         /* ... and skb->len summed over their events */
	uint64_t rx;            /* SS_CAUSE_NONE: datagrams delivered */
	uint64_t grew_ns;       /* when it last grew (retention) */
	double created;         /* when it began (Unix s): OpenMetrics _created */
	/*
	 * SS_CAUSE_NONE on a numeric port: the gauges of its live sockets at
	 * the update gauge_update (the largest of each when several share
	 * the series: a REUSEPORT group); none from an older update.
	 */
	uint64_t gauge_update;
	uint32_t rcvbuf, queued, queue_peak;
};

struct ss_socket {
	uint64_t last[CAUSE_MAX]; /* the row's counts at the last refresh */
	uint64_t last_bytes[CAUSE_MAX];
	uint64_t last_rx;
	uint64_t seen_ns;
	uint64_t pod_next_ns;     /* when to look its pod up (again); ~0: found */
	uint32_t pod;
	bool capped;              /* counted in folded for the series cap */
};

/* An interned pod: its names (the key) and latest UID. */
struct ss_pod_ref {
	struct pod_names names;
};

struct ss_port {
	uint32_t netns;
	uint16_t port;
	uint8_t family, pad;
};

struct ss_fam {
	uint32_t netns;
	uint32_t family;
};

struct ss_range {
	uint16_t lo, hi;        /* 0, 0: not known (nothing is ephemeral) */
	uint64_t used_ns;       /* last asked for: kept for retention_ns after */
};

/* A series of udpdrop_noport_drops_total. */
struct np_key {
	uint32_t netns;
	uint8_t family;         /* AF_INET, AF_INET6 */
	uint8_t kind;           /* enum ss_port_kind */
	uint16_t port;          /* SS_PORT_NUMBER's */
};

struct np_val {
	struct np_key k;
	uint64_t drops;
	uint64_t grew_ns;
	double created;
	/* the last flow that added to it (OpenMetrics' exemplar): its source
	 * address, the datagrams it added at that refresh, when */
	uint8_t ex_family;
	uint8_t ex_saddr[16];
	uint64_t ex_drops;
	double ex_time;
};

/* A flow row of the model (source, destination, port): its drops at the
 * last update, as a socket's are kept. */
struct np_flow {
	uint64_t last;
	uint64_t seen_ns;
};

int socket_series__init(struct socket_series *s)
{
	memset(s, 0, sizeof(*s));
	s->port_cap = SOCKET_SERIES_PORT_CAP;
	s->series_cap = SOCKET_SERIES_CAP;
	s->retention_ns = SOCKET_SERIES_RETENTION_NS;
	if (htab__init(&s->series, sizeof(struct ss_key), sizeof(struct ss_val)) ||
	    htab__init(&s->sockets, sizeof(uint64_t), sizeof(struct ss_socket)) ||
	    htab__init(&s->ports, sizeof(struct ss_port), sizeof(uint64_t)) ||
	    htab__init(&s->port_count, sizeof(struct ss_fam), sizeof(uint32_t)) ||
	    htab__init(&s->ranges, sizeof(uint32_t), sizeof(struct ss_range)) ||
	    htab__init(&s->pods, offsetof(struct pod_names, uid), sizeof(uint32_t)) ||
	    htab__init(&s->noport, sizeof(struct np_key), sizeof(struct np_val)) ||
	    htab__init(&s->noport_flows, sizeof(struct row_key), sizeof(struct np_flow)) ||
	    htab__init(&s->noport_ports, sizeof(struct ss_port), sizeof(uint64_t)) ||
	    htab__init(&s->noport_port_count, sizeof(struct ss_fam), sizeof(uint32_t))) {
		socket_series__free(s);
		return -ENOMEM;
	}
	return 0;
}

void socket_series__free(struct socket_series *s)
{
	htab__free(&s->series);
	htab__free(&s->sockets);
	htab__free(&s->ports);
	htab__free(&s->port_count);
	htab__free(&s->ranges);
	htab__free(&s->pods);
	htab__free(&s->noport);
	htab__free(&s->noport_flows);
	htab__free(&s->noport_ports);
	htab__free(&s->noport_port_count);
	free(s->pod_by_id);
	s->pod_by_id = NULL;
	s->npods = 0;
}

/* The pod's id by its names (the UID updated): 0 if out of memory. The
 * key is the names alone (pod_names up to its uid). */
static uint32_t intern_pod(struct socket_series *s, const struct pod_names *p)
{
	uint32_t *id;
	int created;

	id = htab__upsert(&s->pods, p, &created);
	if (!id)
		return 0;
	if (created) {
		struct ss_pod_ref *v = realloc(s->pod_by_id, (s->npods + 1) * sizeof(*v));

		if (!v) {
			*id = 0;
			return 0;
		}
		s->pod_by_id = v;
		*id = ++s->npods;
	}
	if (*id)
		s->pod_by_id[*id - 1].names = *p;
	return *id;
}

/* The netns's ephemeral range, read once while the netns is in use (a
 * netns unused for retention_ns is forgotten: netns come and go). */
static const struct ss_range *range_of(struct socket_series *s, uint32_t netns, uint64_t now)
{
	struct ss_range *r;
	int created;

	r = htab__upsert(&s->ranges, &netns, &created);
	if (r && created) {
		r->lo = r->hi = 0;
		if (s->port_range && s->port_range(s->port_range_arg, netns, &r->lo, &r->hi))
			r->lo = r->hi = 0;
	}
	if (r)
		r->used_ns = now;
	return r;
}

/*
 * Has port p a number of its own in ports (the numeric ports named, last
 * used) under the cap of port_cap per netns and family (count)? A port
 * keeps its number while in use and for retention_ns after
 * (socket_series__update). 1 yes, 0 no (past the cap), -ENOMEM.
 */
static int numbered(struct socket_series *s, struct htab *ports, struct htab *count,
		    const struct ss_port *p, uint64_t now)
{
	struct ss_fam f = { p->netns, p->family };
	uint64_t *used = htab__find(ports, p);
	uint32_t *n;
	int created;

	if (used) {
		*used = now;
		return 1;
	}
	n = htab__upsert(count, &f, &created);
	if (!n)
		return -ENOMEM;
	if (created)
		*n = 0;
	if (*n >= s->port_cap)
		return 0;
	used = htab__upsert(ports, p, NULL);
	if (!used)
		return -ENOMEM;
	*used = now;
	(*n)++;
	return 1;
}

/* Is port one of the netns's ip_local_port_range? -ENOMEM. */
static int ephemeral(struct socket_series *s, uint32_t netns, uint16_t port, uint64_t now)
{
	const struct ss_range *rg = range_of(s, netns, now);

	if (!rg)
		return -ENOMEM;
	return rg->lo && port >= rg->lo && port <= rg->hi;
}

/*
 * The port label of a socket: its number, "ephemeral" or, past the cap,
 * "other" (first: the socket's first labelling, counted in folded then).
 * -ENOMEM.
 */
static int port_label(struct socket_series *s, const struct row *r, struct ss_key *k,
		      bool first, uint64_t now)
{
	const struct sock_info *si = &r->sock;
	struct ss_port p = { r->key.netns, si->sport, si->family, 0 };
	int eph = si->dport ? ephemeral(s, r->key.netns, si->sport, now) : 0, num;

	if (eph < 0)
		return eph;
	if (eph) {
		k->kind = SS_PORT_EPHEMERAL;
		return 0;
	}
	num = numbered(s, &s->ports, &s->port_count, &p, now);
	if (num < 0)
		return num;
	if (!num) {
		k->kind = SS_PORT_OTHER;
		if (first)
			s->folded++;
		return 0;
	}
	k->kind = SS_PORT_NUMBER;
	k->port = si->sport;
	return 0;
}

/* The series k names for the socket sk (past the cap of series: its
 * netns, family and cause's port="other"), made if new; NULL: no memory. */
static struct ss_val *series_of(struct socket_series *s, struct ss_socket *sk,
				const struct ss_key *k, double wall)
{
	struct ss_val *v = htab__find(&s->series, k);
	struct ss_key other;
	int created;

	/* past the cap of series: one per netns, family and cause */
	if (!v && s->series.n >= s->series_cap) {
		other = *k;
		other.kind = SS_PORT_OTHER;
		other.port = 0;
		other.pod = 0;
		memset(other.comm, 0, sizeof(other.comm));
		strcpy(other.comm, "other");
		k = &other;
		if (!sk->capped)
			s->folded++;
		sk->capped = true;
	}
	v = htab__upsert(&s->series, k, &created);
	if (v && created) {
		memset(v, 0, sizeof(*v));
		v->k = *k;
		v->created = wall;
	}
	return v;
}

/* A cause's new drops and bytes to the series k names. */
static int add(struct socket_series *s, struct ss_socket *sk, const struct ss_key *k,
	       uint64_t drops, uint64_t bytes, uint64_t now, double wall)
{
	struct ss_val *v = series_of(s, sk, k, wall);

	if (!v)
		return -ENOMEM;
	v->drops += drops;
	v->bytes += bytes;
	v->grew_ns = now;
	return 0;
}

/*
 * The socket's own series (k with SS_CAUSE_NONE): its new deliveries
 * (when the tracer counts them) and, while it lives on a numeric port, its
 * buffer and queue now (the largest of the sockets sharing the series).
 * Gauges of a port="ephemeral" or "other" series would mix sockets that
 * have nothing in common: it has none.
 */
static int own_series(struct socket_series *s, struct ss_socket *sk, const struct ss_key *k,
		      const struct row *r, bool have_rx, uint64_t now, double wall)
{
	uint64_t rx = have_rx && r->rx > sk->last_rx ? r->rx - sk->last_rx : 0;
	bool gauges = k->kind == SS_PORT_NUMBER && r->sock_alive && r->sock.have_mem;
	struct ss_val *v;

	if (!rx && !gauges)
		return 0;
	v = series_of(s, sk, k, wall);
	if (!v)
		return -ENOMEM;
	if (rx) {
		v->rx += rx;
		sk->last_rx = r->rx;
	}
	v->grew_ns = now;
	/* a capped socket's series is port="other": no gauges */
	if (!gauges || v->k.kind != SS_PORT_NUMBER)
		return 0;
	if (v->gauge_update != s->updates) {
		v->gauge_update = s->updates;
		v->rcvbuf = v->queued = v->queue_peak = 0;
	}
	v->rcvbuf = r->sock.rcvbuf > v->rcvbuf ? r->sock.rcvbuf : v->rcvbuf;
	v->queued = r->sock.rmem > v->queued ? r->sock.rmem : v->queued;
	v->queue_peak = r->queue_peak > v->queue_peak ? r->queue_peak : v->queue_peak;
	return 0;
}

/*
 * The tables' htab__retain tests; their arg is { the series, &now }: an
 * entry last used at `at` stays for the retention (and at most `cap`).
 */
static bool young(void *arg, uint64_t at, uint64_t cap)
{
	const struct socket_series *s = ((void **)arg)[0];
	uint64_t age = *(const uint64_t *)((void **)arg)[1] - at;

	return age < s->retention_ns && age < cap;
}

static bool fresh_socket(const void *key, void *val, void *arg)
{
	return young(arg, ((struct ss_socket *)val)->seen_ns, SOCKET_SERIES_SOCKET_RETENTION_NS);
}

static bool fresh_series(const void *key, void *val, void *arg)
{
	return young(arg, ((struct ss_val *)val)->grew_ns, UINT64_MAX);
}

static bool fresh_port(const void *key, void *val, void *arg)
{
	return young(arg, *(uint64_t *)val, UINT64_MAX);
}

static bool fresh_range(const void *key, void *val, void *arg)
{
	return young(arg, ((const struct ss_range *)val)->used_ns, UINT64_MAX);
}

/* The numeric ports per (netns, family) into count, from those kept. */
static int count_ports(struct htab *ports, struct htab *count)
{
	size_t it = 0;
	const void *key;
	void *val;

	htab__clear(count);
	while (htab__next(ports, &it, &key, &val)) {
		const struct ss_port *p = key;
		struct ss_fam f = { p->netns, p->family };
		int created;
		uint32_t *n = htab__upsert(count, &f, &created);

		if (!n)
			return -ENOMEM;
		*n = created ? 1 : *n + 1;
	}
	return 0;
}

/* ---- datagrams to a port with no socket -------------------------------- */

static bool fresh_flow(const void *key, void *val, void *arg)
{
	return young(arg, ((struct np_flow *)val)->seen_ns, SOCKET_SERIES_SOCKET_RETENTION_NS);
}

static bool fresh_noport(const void *key, void *val, void *arg)
{
	return young(arg, ((struct np_val *)val)->grew_ns, UINT64_MAX);
}

/*
 * The model's flow rows of cause no_socket into the noport series, by
 * delta as the sockets' (a flow row's count never goes down, but a flow
 * seen again after its entry was forgotten must not count twice). The
 * destination port is the label: "ephemeral" on the netns's
 * ip_local_port_range (a reply come after its client closed: a DNS
 * client's ports are random), past port_cap numeric ports per netns and
 * family "other" (the flow counted in noport_folded once).
 */
static int noport_update(struct socket_series *s, struct model *m, uint64_t now, double wall)
{
	for (int i = 0; i < m->nview_flows; i++) {
		const struct row *r = m->view_flows[i];
		uint64_t n = r->cause[CAUSE_NO_SOCKET];
		struct np_flow *fl;
		struct np_val *v;
		struct np_key k = { .netns = r->key.netns,
				    .family = r->key.family == AF_INET6 ? AF_INET6 : AF_INET };
		struct ss_port p = { r->key.netns, r->key.dport, k.family, 0 };
		int created, eph, num;

		if (r->key.kind != ROW_FLOW || r->key.cause != CAUSE_NO_SOCKET)
			continue;
		fl = htab__upsert(&s->noport_flows, &r->key, &created);
		if (!fl)
			return -ENOMEM;
		if (created)
			memset(fl, 0, sizeof(*fl));
		fl->seen_ns = now;
		eph = ephemeral(s, k.netns, r->key.dport, now);
		if (eph < 0)
			return eph;
		num = eph ? 0 : numbered(s, &s->noport_ports, &s->noport_port_count, &p, now);
		if (num < 0)
			return num;
		k.kind = eph ? SS_PORT_EPHEMERAL : num ? SS_PORT_NUMBER : SS_PORT_OTHER;
		k.port = num ? r->key.dport : 0;
		if (created && k.kind == SS_PORT_OTHER)
			s->noport_folded++;
		if (n <= fl->last)
			continue;
		v = htab__upsert(&s->noport, &k, &created);
		if (!v)
			return -ENOMEM;
		if (created) {
			memset(v, 0, sizeof(*v));
			v->k = k;
			v->created = wall;
		}
		v->drops += n - fl->last;
		v->grew_ns = now;
		v->ex_family = r->key.family;
		memcpy(v->ex_saddr, r->key.saddr, 16);
		v->ex_drops = n - fl->last;
		v->ex_time = wall;
		fl->last = n;
	}
	return 0;
}

static int cmp_noport(const void *a, const void *b)
{
	const struct np_key *x = &(*(const struct np_val *const *)a)->k;
	const struct np_key *y = &(*(const struct np_val *const *)b)->k;

	if (x->netns != y->netns)
		return x->netns < y->netns ? -1 : 1;
	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

/* A table's values, sorted by cmp (on pointers to them), for a page in a
 * stable order; *n of them (0 and NULL: out of memory, nothing shown). */
static const void **sorted_values(const struct htab *h, int (*cmp)(const void *, const void *),
				  size_t *n)
{
	const void **v = calloc(h->n + 1, sizeof(*v));
	size_t it = 0;
	const void *key;
	void *val;

	*n = 0;
	while (v && htab__next(h, &it, &key, &val))
		v[(*n)++] = val;
	if (v)
		qsort(v, *n, sizeof(*v), cmp);
	return v;
}

static void noport_render(const struct socket_series *s, struct expo *e)
{
	size_t n;
	const struct np_val **v = (const struct np_val **)sorted_values(&s->noport, cmp_noport, &n);

	expo__family(e, "udpdrop_noport_drops", EXPO_COUNTER,
		     "UDP datagrams to a port with no socket (cause no_socket: the kernel's "
		     "UdpNoPorts), by netns, family and destination port (ephemeral: on the netns's "
		     "ip_local_port_range; other: past the cap of ports).");
	for (size_t i = 0; i < n; i++) {
		const struct np_key *k = &v[i]->k;
		char ns[16], port[8];

		snprintf(ns, sizeof(ns), "%u", k->netns);
		snprintf(port, sizeof(port), "%u", k->port);
		struct expo_label l[] = {
			{ "netns", ns },
			{ "family", k->family == AF_INET6 ? "inet6" : "inet" },
			{ "port", k->kind == SS_PORT_NUMBER ? port
				  : k->kind == SS_PORT_EPHEMERAL ? "ephemeral" : "other" },
		};
		/* the last flow to it, as an exemplar: its source is no label
		 * (unbounded), but one example is what a user asks for next */
		char src[64];
		struct expo_label xl[] = { { "src", src } };
		struct expo_exemplar x = { xl, 1, v[i]->ex_drops, v[i]->ex_time };

		fmt_addr(src, sizeof(src), v[i]->ex_family, v[i]->ex_saddr);
		expo__sample_u64_exemplar(e, l, 3, v[i]->drops, v[i]->created,
					  v[i]->ex_drops ? &x : NULL);
	}
	free(v);
	expo__family(e, "udpdrop_noport_flows_folded", EXPO_COUNTER,
		     "Flows (source, destination, port) to no socket whose drops went to "
		     "port=\"other\": past the cap of ports per netns and family.");
	expo__sample_u64(e, NULL, 0, s->noport_folded);
}

/* The comm label of a socket row (16 bytes): its owner's; a kernel
 * device's socket (a tunnel) has no process: "kernel". */
static void comm_of(const struct row *r, char *comm)
{
	snprintf(comm, 16, "%s", r->sock.npids ? r->sock.comm : r->sock.kowner[0] ? "kernel" : "");
}

bool socket_series__numeric(const struct socket_series *s, const struct row *r,
			    struct socket_series_labels *out)
{
	uint64_t id = r->key.cookie;
	const struct ss_socket *sk;
	const struct ss_range *rg;
	struct ss_port p = { r->key.netns, r->sock.sport, r->sock.family, 0 };

	if (r->key.kind != ROW_SOCKET || !id || (id & UD_COOKIE_FOLDED) || !r->have_sock ||
	    !r->sock.sport)
		return false;
	sk = htab__find(&s->sockets, &id);
	if (!sk || sk->capped)
		return false;
	rg = htab__find(&s->ranges, &r->key.netns);
	if (r->sock.dport && rg && rg->lo && r->sock.sport >= rg->lo && r->sock.sport <= rg->hi)
		return false;
	if (!htab__find(&s->ports, &p))
		return false;
	memset(out, 0, sizeof(*out));
	out->netns = r->key.netns;
	out->family = r->sock.family == AF_INET6 ? AF_INET6 : AF_INET;
	out->port = r->sock.sport;
	comm_of(r, out->comm);
	return true;
}

int socket_series__update(struct socket_series *s, struct model *m, uint64_t now)
{
	double wall = wall_time();

	s->updates++;
	s->have_rx = m->have_rx;

	for (int i = 0; i < m->nview_sockets; i++) {
		const struct row *r = m->view_sockets[i];
		uint64_t id = r->key.cookie;
		struct ss_socket *sk;
		struct ss_key k;
		int created, err;

		/* closed sockets folded: counted while they had rows */
		if (!id || (id & UD_COOKIE_FOLDED))
			continue;
		/* labels not known yet: its counts wait (rows are cumulative) */
		if (!r->have_sock || !r->sock.sport)
			continue;
		sk = htab__upsert(&s->sockets, &id, &created);
		if (!sk)
			return -ENOMEM;
		if (created) {
			/*
			 * Counted by its inode before a dump named its cookie:
			 * the cookie's row holds those counts too, so it
			 * starts where the inode's left off.
			 */
			uint64_t ino = r->sock.inode ? sockid__of(r->sock.inode, true) : 0;
			struct ss_socket *old = ino && !sockid__inode(id) ? htab__find(&s->sockets, &ino)
									 : NULL;

			memset(sk, 0, sizeof(*sk));
			if (old) {
				memcpy(sk->last, old->last, sizeof(sk->last));
				memcpy(sk->last_bytes, old->last_bytes, sizeof(sk->last_bytes));
				sk->last_rx = old->last_rx;
				sk->pod = old->pod;
				sk->pod_next_ns = old->pod_next_ns;
				created = false; /* labelled before, under its inode */
			}
		}
		sk->seen_ns = now;
		/* its pod, until found (a process does not change pods; its
		 * logs may come a moment after it) */
		if (r->sock.npids && s->pod_of && sk->pod_next_ns != ~0ull && now >= sk->pod_next_ns) {
			struct pod_names pn;
			int got = s->pod_of(s->pod_of_arg, r->sock.pids[0], &pn);

			if (got == POD_FOUND)
				sk->pod = intern_pod(s, &pn);
			/* found, or in no pod: never asked again */
			sk->pod_next_ns = got == POD_LATER ? now + SOCKET_SERIES_POD_RETRY_NS
							   : ~0ull;
		}
		memset(&k, 0, sizeof(k));
		k.pod = sk->pod;
		k.netns = r->key.netns;
		k.family = r->sock.family == AF_INET6 ? AF_INET6 : AF_INET;
		comm_of(r, k.comm);
		err = port_label(s, r, &k, created, now);
		if (err)
			return err;
		for (int c = 0; c < CAUSE_MAX; c++) {
			/* a fragment's events add bytes, not datagrams */
			uint64_t d = r->cause[c] > sk->last[c] ? r->cause[c] - sk->last[c] : 0;
			uint64_t b = r->cause_bytes[c] > sk->last_bytes[c]
					     ? r->cause_bytes[c] - sk->last_bytes[c] : 0;

			if (!d && !b)
				continue;
			k.cause = c;
			err = add(s, sk, &k, d, b, now, wall);
			if (err)
				return err;
			if (d)
				sk->last[c] = r->cause[c];
			if (b)
				sk->last_bytes[c] = r->cause_bytes[c];
		}
		k.cause = SS_CAUSE_NONE;
		err = own_series(s, sk, &k, r, m->have_rx, now, wall);
		if (err)
			return err;
	}
	/* memory bounded: sockets gone, series quiet, for retention_ns */
	void *arg[2] = { s, &now };
	int err;

	if (htab__retain(&s->sockets, fresh_socket, arg) ||
	    htab__retain(&s->series, fresh_series, arg) ||
	    htab__retain(&s->ports, fresh_port, arg))
		return -ENOMEM;
	err = noport_update(s, m, now, wall);
	if (err)
		return err;
	if (htab__retain(&s->noport_flows, fresh_flow, arg) ||
	    htab__retain(&s->noport, fresh_noport, arg) ||
	    htab__retain(&s->noport_ports, fresh_port, arg) ||
	    htab__retain(&s->ranges, fresh_range, arg))
		return -ENOMEM;
	err = count_ports(&s->ports, &s->port_count);
	return err ? err : count_ports(&s->noport_ports, &s->noport_port_count);
}

static int cmp_series(const void *a, const void *b)
{
	const struct ss_key *x = &(*(const struct ss_val *const *)a)->k;
	const struct ss_key *y = &(*(const struct ss_val *const *)b)->k;

	if (x->netns != y->netns)
		return x->netns < y->netns ? -1 : 1;
	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	if (x->cause != y->cause)
		return x->cause < y->cause ? -1 : 1;
	if (strcmp(x->comm, y->comm))
		return strcmp(x->comm, y->comm);
	return x->pod < y->pod ? -1 : x->pod > y->pod;
}

/* Room for a series' label values (socket_labels). */
struct ss_label_buf {
	char ns[16], port[8];
};

/*
 * The labels of series k into l (8 at most): netns, family, port, cause
 * (with_cause), comm and the pod's. Returns how many.
 */
static int socket_labels(const struct socket_series *s, const struct ss_key *k, bool with_cause,
			 struct ss_label_buf *b, struct expo_label *l)
{
	static const struct pod_names none;
	const struct pod_names *pod = k->pod ? &s->pod_by_id[k->pod - 1].names : &none;
	int n = 0;

	snprintf(b->ns, sizeof(b->ns), "%u", k->netns);
	if (k->kind == SS_PORT_NUMBER)
		snprintf(b->port, sizeof(b->port), "%u", k->port);
	l[n++] = (struct expo_label){ "netns", b->ns };
	l[n++] = (struct expo_label){ "family", k->family == AF_INET6 ? "inet6" : "inet" };
	l[n++] = (struct expo_label){ "port", k->kind == SS_PORT_NUMBER ? b->port
					      : k->kind == SS_PORT_EPHEMERAL ? "ephemeral" : "other" };
	if (with_cause)
		l[n++] = (struct expo_label){ "cause", cause__name(k->cause) };
	l[n++] = (struct expo_label){ "comm", k->comm };
	l[n++] = (struct expo_label){ "k8s_namespace", pod->ns };
	l[n++] = (struct expo_label){ "k8s_pod", pod->pod };
	l[n++] = (struct expo_label){ "k8s_container", pod->container };
	return n;
}

/* What a family of the socket series shows of each series. */
enum ss_family { SS_DROPS, SS_BYTES, SS_RX, SS_RCVBUF, SS_QUEUED, SS_QUEUE_PEAK };

static void render_family(const struct socket_series *s, struct expo *e,
			  const struct ss_val **v, size_t n, enum ss_family fam)
{
	for (size_t i = 0; i < n; i++) {
		const struct ss_val *x = v[i];
		bool own = x->k.cause == SS_CAUSE_NONE;
		struct ss_label_buf b;
		struct expo_label l[8];
		int nl;

		if (own != (fam != SS_DROPS && fam != SS_BYTES))
			continue;
		/* gauges: of live sockets at the last update only */
		if (fam >= SS_RCVBUF && (x->gauge_update != s->updates || !x->gauge_update))
			continue;
		nl = socket_labels(s, &x->k, !own, &b, l);
		switch (fam) {
		case SS_DROPS: expo__sample_u64_since(e, l, nl, x->drops, x->created); break;
		case SS_BYTES: expo__sample_u64_since(e, l, nl, x->bytes, x->created); break;
		case SS_RX: expo__sample_u64_since(e, l, nl, x->rx, x->created); break;
		case SS_RCVBUF: expo__sample_u64(e, l, nl, x->rcvbuf); break;
		case SS_QUEUED: expo__sample_u64(e, l, nl, x->queued); break;
		case SS_QUEUE_PEAK: expo__sample_u64(e, l, nl, x->queue_peak); break;
		}
	}
}

void socket_series__render(const struct socket_series *s, struct expo *e)
{
	size_t n;
	const struct ss_val **v = (const struct ss_val **)sorted_values(&s->series, cmp_series, &n);

	expo__family(e, "udpdrop_socket_drops", EXPO_COUNTER,
		     "UDP datagrams dropped per socket port: by netns, family, local port "
		     "(ephemeral: a connected socket on the netns's ip_local_port_range; other: "
		     "past the cap of ports), cause, the owner's comm and its Kubernetes pod.");
	render_family(s, e, v, n, SS_DROPS);
	expo__family(e, "udpdrop_socket_dropped_bytes", EXPO_COUNTER,
		     "Bytes of those drops, same labels: skb->len at each drop (at a socket: the "
		     "payload, the UDP header pulled by then).");
	render_family(s, e, v, n, SS_BYTES);
	/* deliveries only where the tracer counts them (sock:sk_data_ready,
	 * Linux 6.6): absent, not 0, elsewhere */
	if (s->have_rx) {
		expo__family(e, "udpdrop_socket_received", EXPO_COUNTER,
			     "UDP datagrams queued to those sockets (delivered: read or still queued), "
			     "since udpdrop began counting; the same labels without cause.");
		render_family(s, e, v, n, SS_RX);
	}
	expo__family(e, "udpdrop_socket_rcvbuf_bytes", EXPO_GAUGE,
		     "The receive buffer (SO_RCVBUF as the kernel keeps it, ss's rb) of the live "
		     "sockets of a numeric port (the largest when several share it); none for "
		     "port=\"ephemeral\" or \"other\".");
	render_family(s, e, v, n, SS_RCVBUF);
	expo__family(e, "udpdrop_socket_queue_bytes", EXPO_GAUGE,
		     "Bytes queued now on those sockets (sk_rmem_alloc, truesize, ss's r), same "
		     "labels and rule.");
	render_family(s, e, v, n, SS_QUEUED);
	if (s->have_rx) {
		expo__family(e, "udpdrop_socket_queue_peak_bytes", EXPO_GAUGE,
			     "The most bytes queued seen right after a delivery since udpdrop began "
			     "counting (not per interval), same labels and rule.");
		render_family(s, e, v, n, SS_QUEUE_PEAK);
	}
	/* the pods of the series on the page, once per (namespace, pod), with
	 * the latest UID, to join kube-state-metrics on */
	struct htab seen;
	bool have_seen = !htab__init(&seen, 64 + 254, 1);

	expo__family(e, "udpdrop_pod", EXPO_INFO,
		     "A Kubernetes pod of the socket series: its namespace, name and latest UID.");
	for (size_t i = 0; have_seen && i < n; i++) {
		const struct pod_names *p;
		char key[64 + 254] = { 0 };
		int created;

		if (!v[i]->k.pod)
			continue;
		p = &s->pod_by_id[v[i]->k.pod - 1].names;
		memcpy(key, p->ns, sizeof(p->ns));
		memcpy(key + 64, p->pod, sizeof(p->pod));
		if (!htab__upsert(&seen, key, &created) || !created)
			continue;
		struct expo_label l[] = {
			{ "k8s_namespace", p->ns }, { "k8s_pod", p->pod }, { "uid", p->uid },
		};
		expo__sample_u64(e, l, 3, 1);
	}
	if (have_seen)
		htab__free(&seen);
	free(v);
	expo__family(e, "udpdrop_socket_series_folded", EXPO_COUNTER,
		     "Sockets whose series went to the port other: past the cap of ports per netns "
		     "and family, or of series in all.");
	expo__sample_u64(e, NULL, 0, s->folded);
	noport_render(s, e);
}
