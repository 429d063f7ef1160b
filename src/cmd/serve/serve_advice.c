// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udpdrop serve's advice as numbers: see serve_advice.h. */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bursts.h"
#include "live_env.h"
#include "serve_advice.h"

struct sa_key {
	struct socket_series_labels l;
	char setting[40];
};

struct sa_val {
	struct sa_key k;
	uint64_t recommended;
	bool have_current;
	uint64_t current;
};

int serve_advice__init(struct serve_advice *a)
{
	memset(a, 0, sizeof(*a));
	if (bursts__init(&a->bursts) ||
	    htab__init(&a->gauges, sizeof(struct sa_key), sizeof(struct sa_val))) {
		serve_advice__free(a);
		return -ENOMEM;
	}
	return 0;
}

void serve_advice__free(struct serve_advice *a)
{
	htab__free(&a->bursts);
	htab__free(&a->gauges);
}

static bool known(struct advice_u64 v, uint64_t *out)
{
	*out = v.v;
	return v.known;
}

bool serve_advice__current(const struct advice_input *in, const struct advice_finding *f,
			   uint64_t *out)
{
	const char *s = f->setting;

	/* the setsockopt requests: the kernel keeps twice the request */
	if (!strcmp(s, "SO_RCVBUF") || !strcmp(s, "SO_SNDBUF")) {
		struct advice_u64 b = !strcmp(s, "SO_RCVBUF") ? in->rcvbuf : in->sndbuf;

		*out = b.v / 2;
		return b.known;
	}
	if (!strcmp(s, "net.core.rmem_default"))
		return known(in->rmem_default, out);
	if (!strcmp(s, "net.core.rmem_max"))
		return known(in->rmem_max, out);
	if (!strcmp(s, "net.core.wmem_default"))
		return known(in->wmem_default, out);
	if (!strcmp(s, "net.core.wmem_max"))
		return known(in->wmem_max, out);
	if (!strcmp(s, "net.ipv4.udp_mem")) /* the advice sizes its max */
		return known(in->udp_mem[2], out);
	if (!strcmp(s, "net.core.netdev_max_backlog"))
		return known(in->netdev_max_backlog, out);
	if (!strcmp(s, "net.ipv4.ipfrag_max_dist"))
		return known(in->ipfrag_max_dist, out);
	if (!strcmp(s, "txqueuelen"))
		return known(in->txqueuelen, out);
	/* ceilings: what arrives now (delivered + dropped over the last
	 * interval, known while it drops), the datagrams' size */
	if (!strcmp(s, "sender_pps") && in->rate_dgps.known && isfinite(in->rate_dgps.v)) {
		*out = (uint64_t)llround(in->rate_dgps.v);
		return true;
	}
	if (!strcmp(s, "datagram_size") && in->avg_size.known && isfinite(in->avg_size.v)) {
		*out = (uint64_t)llround(in->avg_size.v);
		return true;
	}
	return false;
}

/* The advice's environment of a row's netns (and loopback or not): read
 * at most every SERVE_ADVICE_ENV_TTL_NS, the oldest slot reused. */
static const struct live_env *env_of(struct serve_advice *a, struct model *m, const struct row *r,
				     uint64_t now)
{
	uint32_t ns = r->key.netns;
	bool lo = live_env__row_loopback(r);
	int slot = -1;

	if (!a->env_read)
		return NULL;
	for (int i = 0; i < a->nenvs; i++) {
		struct live_env *e = &a->envs[i];

		if (e->netns != ns || e->loopback != lo)
			continue;
		if (now - e->read_ns < SERVE_ADVICE_ENV_TTL_NS)
			return e;
		slot = i;
		break;
	}
	if (slot < 0 && a->nenvs < SERVE_ADVICE_ENVS)
		slot = a->nenvs++;
	if (slot < 0) {
		slot = 0;
		for (int i = 1; i < a->nenvs; i++)
			if (a->envs[i].read_ns < a->envs[slot].read_ns)
				slot = i;
	}
	a->env_read(m, ns, lo, &a->envs[slot]);
	a->envs[slot].read_ns = now;
	return &a->envs[slot];
}

/* One finding under the row's labels: the one recommending the most wins. */
static int note(struct serve_advice *a, const struct socket_series_labels *l,
		const struct advice_input *in, const struct advice_finding *f)
{
	struct sa_key k;
	struct sa_val *v;
	int created;

	memset(&k, 0, sizeof(k));
	k.l = *l;
	snprintf(k.setting, sizeof(k.setting), "%s", f->setting);
	v = htab__upsert(&a->gauges, &k, &created);
	if (!v)
		return -ENOMEM;
	if (!created && v->recommended >= f->value)
		return 0;
	v->k = k;
	v->recommended = f->value;
	v->have_current = serve_advice__current(in, f, &v->current);
	return 0;
}

int serve_advice__update(struct serve_advice *a, struct model *m, const struct socket_series *s,
			 bool refreshed, uint64_t now)
{
	struct advice_finding f[ADVICE_MAX];

	if (refreshed)
		bursts__record(&a->bursts, m, ++a->ticks);
	htab__clear(&a->gauges);
	for (int i = 0; i < m->nview_sockets; i++) {
		const struct row *r = m->view_sockets[i];
		const struct live_burst *b = htab__find(&a->bursts, &r->key);
		struct socket_series_labels l;
		const struct live_env *e;

		if (!socket_series__numeric(s, r, &l))
			continue;
		e = env_of(a, m, r, now);
		for (int c = 0; c < CAUSE_MAX; c++) {
			struct advice_input in;
			char who[128];
			int n;

			if (!r->cause[c] && !r->cause_skbs[c])
				continue;
			advice_model__input(&in, m, r, c, b, e, who, sizeof(who));
			n = advice__build(&in, f, ADVICE_MAX);
			for (int k = 0; k < n; k++) {
				if (!f[k].has_value || !f[k].setting[0])
					continue;
				if (note(a, &l, &in, &f[k]))
					return -ENOMEM;
			}
		}
	}
	return 0;
}

static int cmp_gauges(const void *x, const void *y)
{
	const struct sa_key *p = &(*(const struct sa_val *const *)x)->k;
	const struct sa_key *q = &(*(const struct sa_val *const *)y)->k;

	if (p->l.netns != q->l.netns)
		return p->l.netns < q->l.netns ? -1 : 1;
	if (p->l.family != q->l.family)
		return p->l.family < q->l.family ? -1 : 1;
	if (p->l.port != q->l.port)
		return p->l.port < q->l.port ? -1 : 1;
	if (strcmp(p->l.comm, q->l.comm))
		return strcmp(p->l.comm, q->l.comm);
	return strcmp(p->setting, q->setting);
}

void serve_advice__render(const struct serve_advice *a, struct expo *e)
{
	const struct sa_val **v = calloc(a->gauges.n + 1, sizeof(*v));
	size_t it = 0, n = 0;
	const void *key;
	void *val;

	while (v && htab__next(&a->gauges, &it, &key, &val))
		v[n++] = val;
	if (v)
		qsort(v, n, sizeof(*v), cmp_gauges);
	for (int pass = 0; pass < 2; pass++) {
		if (!pass)
			expo__family(e, "udpdrop_advice_current", EXPO_GAUGE,
				     "A setting the advice engine would change for a socket series, its value "
				     "now in the unit it recommends (SO_RCVBUF: the request, half the buffer "
				     "the kernel keeps; sender_pps: datagrams/s arriving while it drops).");
		else
			expo__family(e, "udpdrop_advice_recommended", EXPO_GAUGE,
				     "The value the advice engine recommends for that setting: at least it, "
				     "except sender_pps and datagram_size, ceilings (at most it).");
		for (size_t i = 0; i < n; i++) {
			const struct sa_key *k = &v[i]->k;
			char ns[16], port[8];

			if (!pass && !v[i]->have_current)
				continue;
			snprintf(ns, sizeof(ns), "%u", k->l.netns);
			snprintf(port, sizeof(port), "%u", k->l.port);
			struct expo_label l[] = {
				{ "netns", ns },
				{ "family", k->l.family == AF_INET6 ? "inet6" : "inet" },
				{ "port", port },
				{ "comm", k->l.comm },
				{ "setting", k->setting },
			};
			expo__sample_u64(e, l, 5, pass ? v[i]->recommended : v[i]->current);
		}
	}
	free(v);
}
