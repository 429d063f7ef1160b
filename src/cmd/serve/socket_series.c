// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udpdrop serve's per-socket series: see socket_series.h. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "socket_series.h"
#include "sockid.h"

enum ss_port_kind { SS_PORT_NUMBER, SS_PORT_EPHEMERAL, SS_PORT_OTHER };

struct ss_key {
	uint32_t netns;
	uint8_t family;         /* AF_INET, AF_INET6 */
	uint8_t kind;           /* enum ss_port_kind */
	uint16_t port;          /* SS_PORT_NUMBER's */
	int32_t cause;
	char comm[16];          /* the owner's; "" none known */
	struct pod_names pod;   /* "" each: not in a pod */
};

struct ss_val {
	struct ss_key k;
	uint64_t drops;
	uint64_t grew_ns;       /* when it last grew (retention) */
};

struct ss_socket {
	uint64_t last[CAUSE_MAX]; /* the row's counts at the last refresh */
	uint64_t seen_ns;
	bool pod_looked;          /* once, when it first had an owner */
	struct pod_names pod;
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
};

int socket_series__init(struct socket_series *s)
{
	memset(s, 0, sizeof(*s));
	s->port_cap = SOCKET_SERIES_PORT_CAP;
	s->retention_ns = SOCKET_SERIES_RETENTION_NS;
	if (htab__init(&s->series, sizeof(struct ss_key), sizeof(struct ss_val)) ||
	    htab__init(&s->sockets, sizeof(uint64_t), sizeof(struct ss_socket)) ||
	    htab__init(&s->ports, sizeof(struct ss_port), sizeof(uint64_t)) ||
	    htab__init(&s->port_count, sizeof(struct ss_fam), sizeof(uint32_t)) ||
	    htab__init(&s->ranges, sizeof(uint32_t), sizeof(struct ss_range))) {
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
}

/* The netns's ephemeral range, read once per netns and run. */
static const struct ss_range *range_of(struct socket_series *s, uint32_t netns)
{
	struct ss_range *r;
	int created;

	r = htab__upsert(&s->ranges, &netns, &created);
	if (r && created) {
		r->lo = r->hi = 0;
		if (s->port_range && s->port_range(s->port_range_arg, netns, &r->lo, &r->hi))
			r->lo = r->hi = 0;
	}
	return r;
}

/*
 * The port label of a socket: its number, "ephemeral" or, past the cap,
 * "other" (first: the socket's first labelling, counted in folded then).
 * A numeric port is kept while it is in use and for retention_ns after
 * (socket_series__update). -ENOMEM.
 */
static int port_label(struct socket_series *s, const struct row *r, struct ss_key *k,
		      bool first, uint64_t now)
{
	uint64_t *used;
	const struct sock_info *si = &r->sock;
	const struct ss_range *rg = range_of(s, r->key.netns);
	struct ss_port p = { r->key.netns, si->sport, si->family, 0 };
	struct ss_fam f = { r->key.netns, si->family };
	uint32_t *n;
	int created;

	if (!rg)
		return -ENOMEM;
	if (si->dport && rg->lo && si->sport >= rg->lo && si->sport <= rg->hi) {
		k->kind = SS_PORT_EPHEMERAL;
		return 0;
	}
	used = htab__find(&s->ports, &p);
	if (used) {
		*used = now;
		k->kind = SS_PORT_NUMBER;
		k->port = si->sport;
		return 0;
	}
	n = htab__upsert(&s->port_count, &f, &created);
	if (!n)
		return -ENOMEM;
	if (created)
		*n = 0;
	if (*n >= s->port_cap) {
		k->kind = SS_PORT_OTHER;
		if (first)
			s->folded++;
		return 0;
	}
	used = htab__upsert(&s->ports, &p, NULL);
	if (!used)
		return -ENOMEM;
	*used = now;
	(*n)++;
	k->kind = SS_PORT_NUMBER;
	k->port = si->sport;
	return 0;
}

static int add(struct socket_series *s, const struct ss_key *k, uint64_t n, uint64_t now)
{
	struct ss_val *v;
	int created;

	v = htab__upsert(&s->series, k, &created);
	if (!v)
		return -ENOMEM;
	if (created) {
		v->k = *k;
		v->drops = 0;
	}
	v->drops += n;
	v->grew_ns = now;
	return 0;
}

static bool fresh_socket(const void *key, void *val, void *arg)
{
	const struct socket_series *s = ((void **)arg)[0];
	uint64_t now = *(const uint64_t *)((void **)arg)[1];

	return now - ((struct ss_socket *)val)->seen_ns < s->retention_ns;
}

static bool fresh_series(const void *key, void *val, void *arg)
{
	const struct socket_series *s = ((void **)arg)[0];
	uint64_t now = *(const uint64_t *)((void **)arg)[1];

	return now - ((struct ss_val *)val)->grew_ns < s->retention_ns;
}

static bool fresh_port(const void *key, void *val, void *arg)
{
	const struct socket_series *s = ((void **)arg)[0];
	uint64_t now = *(const uint64_t *)((void **)arg)[1];

	return now - *(uint64_t *)val < s->retention_ns;
}

/* The numeric ports per (netns, family), from those kept. */
static int count_ports(struct socket_series *s)
{
	size_t it = 0;
	const void *key;
	void *val;

	htab__clear(&s->port_count);
	while (htab__next(&s->ports, &it, &key, &val)) {
		const struct ss_port *p = key;
		struct ss_fam f = { p->netns, p->family };
		int created;
		uint32_t *n = htab__upsert(&s->port_count, &f, &created);

		if (!n)
			return -ENOMEM;
		*n = created ? 1 : *n + 1;
	}
	return 0;
}

int socket_series__update(struct socket_series *s, struct model *m, uint64_t now)
{
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
			if (old)
				memcpy(sk->last, old->last, sizeof(sk->last));
		}
		sk->seen_ns = now;
		/* its pod, once: a process does not change pods */
		if (!sk->pod_looked && r->sock.npids && s->pod_of) {
			sk->pod_looked = true;
			if (!s->pod_of(s->pod_of_arg, r->sock.pids[0], &sk->pod))
				memset(&sk->pod, 0, sizeof(sk->pod));
		}
		memset(&k, 0, sizeof(k));
		k.pod = sk->pod;
		k.netns = r->key.netns;
		k.family = r->sock.family == AF_INET6 ? AF_INET6 : AF_INET;
		/* a kernel device's socket (a tunnel) has no process: "kernel" */
		snprintf(k.comm, sizeof(k.comm), "%s",
			 r->sock.npids ? r->sock.comm : r->sock.kowner[0] ? "kernel" : "");
		err = port_label(s, r, &k, created, now);
		if (err)
			return err;
		for (int c = 0; c < CAUSE_MAX; c++) {
			if (r->cause[c] <= sk->last[c])
				continue;
			k.cause = c;
			err = add(s, &k, r->cause[c] - sk->last[c], now);
			if (err)
				return err;
			sk->last[c] = r->cause[c];
		}
	}
	/* memory bounded: sockets gone, series quiet, for retention_ns */
	void *arg[2] = { s, &now };

	if (htab__retain(&s->sockets, fresh_socket, arg) ||
	    htab__retain(&s->series, fresh_series, arg) ||
	    htab__retain(&s->ports, fresh_port, arg))
		return -ENOMEM;
	return count_ports(s);
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
	return memcmp(&x->pod, &y->pod, sizeof(x->pod));
}

void socket_series__render(const struct socket_series *s, struct expo *e)
{
	const struct ss_val **v = calloc(s->series.n + 1, sizeof(*v));
	size_t it = 0, n = 0;
	const void *key;
	void *val;

	while (v && htab__next(&s->series, &it, &key, &val))
		v[n++] = val;
	if (v)
		qsort(v, n, sizeof(*v), cmp_series);
	expo__family(e, "udpdrop_socket_drops", EXPO_COUNTER,
		     "UDP datagrams dropped per socket port: by netns, family, local port "
		     "(ephemeral: a connected socket on the netns's ip_local_port_range; other: "
		     "past the cap of ports), cause, the owner's comm and its Kubernetes pod.");
	for (size_t i = 0; i < n; i++) {
		const struct ss_key *k = &v[i]->k;
		char ns[16], port[8];

		snprintf(ns, sizeof(ns), "%u", k->netns);
		if (k->kind == SS_PORT_NUMBER)
			snprintf(port, sizeof(port), "%u", k->port);
		struct expo_label l[] = {
			{ "netns", ns },
			{ "family", k->family == AF_INET6 ? "inet6" : "inet" },
			{ "port", k->kind == SS_PORT_NUMBER ? port
				  : k->kind == SS_PORT_EPHEMERAL ? "ephemeral" : "other" },
			{ "cause", cause__name(k->cause) },
			{ "comm", k->comm },
			{ "k8s_namespace", k->pod.ns },
			{ "k8s_pod", k->pod.pod },
			{ "k8s_container", k->pod.container },
		};
		expo__sample_u64(e, l, 8, v[i]->drops);
	}
	/* the pods named above, once each, with their UID to join
	 * kube-state-metrics on */
	struct htab uids;
	bool have_uids = !htab__init(&uids, sizeof(v[0]->k.pod.uid), 1);

	expo__family(e, "udpdrop_pod", EXPO_INFO,
		     "A Kubernetes pod of the socket series: its namespace, name and UID.");
	for (size_t i = 0; have_uids && i < n; i++) {
		const struct pod_names *p = &v[i]->k.pod;
		int created;

		if (!p->uid[0] || !htab__upsert(&uids, p->uid, &created) || !created)
			continue;
		struct expo_label l[] = {
			{ "k8s_namespace", p->ns }, { "k8s_pod", p->pod }, { "uid", p->uid },
		};
		expo__sample_u64(e, l, 3, 1);
	}
	if (have_uids)
		htab__free(&uids);
	free(v);
	expo__family(e, "udpdrop_socket_series_folded", EXPO_COUNTER,
		     "Sockets whose port went to port=\"other\": past the cap of ports per netns "
		     "and family.");
	expo__sample_u64(e, NULL, 0, s->folded);
}
