// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udpdrop serve's metrics page: see serve_page.h and docs/serve.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "htab.h"
#include "reconcile.h"
#include "serve_page.h"

struct drop_series_key {
	uint32_t netns;   /* 0: not known (the kernel's table was full) */
	uint32_t reason;
	int32_t cause;
};

struct drop_series {
	struct drop_series_key k;
	uint64_t drops, skbs;
};

static int add(struct htab *h, uint32_t netns, uint32_t reason, enum cause c,
	       uint64_t drops, uint64_t skbs)
{
	struct drop_series_key k = { netns, reason, c };
	struct drop_series *s;
	int created;

	if (!drops && !skbs)
		return 0;
	s = htab__upsert(h, &k, &created);
	if (!s)
		return -1;
	if (created)
		s->k = k;
	s->drops += drops;
	s->skbs += skbs;
	return 0;
}

static void add_rows(struct htab *h, struct row **rows, int n)
{
	for (int i = 0; i < n; i++) {
		const struct row *r = rows[i];

		for (int k = 0; k < r->nreasons; k++)
			add(h, r->key.netns, r->reasons[k].reason, r->reasons[k].cause,
			    r->reasons[k].drops, r->reasons[k].skbs);
	}
}

static int cmp_series(const void *a, const void *b)
{
	const struct drop_series_key *x = &((const struct drop_series *)a)->k;
	const struct drop_series_key *y = &((const struct drop_series *)b)->k;

	if (x->netns != y->netns)
		return x->netns < y->netns ? -1 : 1;
	if (x->cause != y->cause)
		return x->cause < y->cause ? -1 : 1;
	return x->reason < y->reason ? -1 : x->reason > y->reason;
}

/* The drops per (netns, cause, reason), sorted: every row in view, and the
 * overflow (no socket, no netns), so they sum to the JSON totals. */
static struct drop_series *drop_series(struct model *m, const struct serve_self *self, int *n)
{
	struct htab h;
	struct drop_series *v = NULL;
	size_t it = 0;
	const void *key;
	void *val;

	*n = 0;
	if (htab__init(&h, sizeof(struct drop_series_key), sizeof(struct drop_series)))
		return NULL;
	add_rows(&h, m->view_sockets, m->nview_sockets);
	add_rows(&h, m->view_flows, m->nview_flows);
	for (int s = 0; self->overflow && s < UD_OVERFLOW_SLOTS; s++)
		add(&h, 0, s, model__cause(m, s, 0), self->overflow[s].datagrams,
		    self->overflow[s].skbs);
	v = calloc(h.n + 1, sizeof(*v));
	while (v && htab__next(&h, &it, &key, &val))
		v[(*n)++] = *(struct drop_series *)val;
	htab__free(&h);
	if (v)
		qsort(v, *n, sizeof(*v), cmp_series);
	return v;
}

static void netns_str(char *buf, size_t len, uint32_t netns)
{
	if (netns)
		snprintf(buf, len, "%u", netns);
	else
		buf[0] = '\0'; /* the kernel's table was full: no socket, no netns */
}

/* The netns named in the page, once each (for udpdrop_netns_info), in
 * the order they came. */
struct netns_set {
	struct htab seen;
	uint32_t *v;
	int n, cap;
};

static void netns_note(struct netns_set *s, uint32_t netns)
{
	int created;

	if (!netns || !htab__upsert(&s->seen, &netns, &created) || !created)
		return;
	if (s->n == s->cap) {
		uint32_t *v = realloc(s->v, (s->cap ? s->cap * 2 : 64) * sizeof(*v));

		if (!v)
			return;
		s->v = v;
		s->cap = s->cap ? s->cap * 2 : 64;
	}
	s->v[s->n++] = netns;
}

void serve_page__render(struct model *m, const struct serve_self *self,
			enum expo_format f, struct strbuf *out)
{
	struct expo e;
	struct netns_set seen = { .n = 0 };
	char ns[16], reason[48];
	int n = 0;
	struct drop_series *v = drop_series(m, self, &n);
	/* every netns in view, every cause reconciled: no line cut off */
	int maxrl = (m->ncounters + 1) * CAUSE_MAX;
	struct reconcile_line *rl = calloc(maxrl, sizeof(*rl));
	int nrl = rl ? reconcile__lines(m, rl, maxrl) : 0;

	htab__init(&seen.seen, sizeof(uint32_t), 1);

	expo__init(&e, out, f, m->start_wall);

	expo__family(&e, "udpdrop_drops", EXPO_COUNTER,
		     "UDP datagrams the kernel dropped, by network namespace (inode), cause and "
		     "kernel drop reason, since udpdrop began counting.");
	for (int i = 0; i < n; i++) {
		netns_str(ns, sizeof(ns), v[i].k.netns);
		netns_note(&seen, v[i].k.netns);
		struct expo_label l[] = {
			{ "netns", ns },
			{ "cause", cause__name(v[i].k.cause) },
			{ "reason", model__reason_name(m, v[i].k.reason, reason, sizeof(reason)) },
		};
		expo__sample_u64(&e, l, 3, v[i].drops);
	}
	expo__family(&e, "udpdrop_drop_skb_events", EXPO_COUNTER,
		     "Socket buffers freed behind those drops (a fragment, a GRO segment: more "
		     "than one per datagram), by the same labels.");
	for (int i = 0; i < n; i++) {
		netns_str(ns, sizeof(ns), v[i].k.netns);
		struct expo_label l[] = {
			{ "netns", ns },
			{ "cause", cause__name(v[i].k.cause) },
			{ "reason", model__reason_name(m, v[i].k.reason, reason, sizeof(reason)) },
		};
		expo__sample_u64(&e, l, 3, v[i].skbs);
	}
	free(v);
	if (self->sockets)
		socket_series__render(self->sockets, &e);
	if (self->advice)
		serve_advice__render(self->advice, &e);

	/* the reconciliation: the kernel's counters beside udpdrop's count,
	 * so coverage is a ratio in PromQL */
	expo__family(&e, "udpdrop_kernel_counted_drops", EXPO_COUNTER,
		     "The kernel's own drop counters (nstat's names, summed per cause) since udpdrop "
		     "began counting, per netns and cause.");
	for (int i = 0; i < nrl; i++) {
		netns_str(ns, sizeof(ns), rl[i].netns);
		netns_note(&seen, rl[i].netns);
		struct expo_label l[] = { { "netns", ns }, { "cause", cause__name(rl[i].cause) } };

		expo__sample_u64(&e, l, 2, rl[i].kernel);
	}
	expo__family(&e, "udpdrop_traced_drops", EXPO_COUNTER,
		     "udpdrop's count of the drops those kernel counters count, same labels: "
		     "traced / kernel_counted is the coverage.");
	for (int i = 0; i < nrl; i++) {
		netns_str(ns, sizeof(ns), rl[i].netns);
		struct expo_label l[] = { { "netns", ns }, { "cause", cause__name(rl[i].cause) } };

		expo__sample_u64(&e, l, 2, rl[i].ours);
	}

	expo__family(&e, "udpdrop_netns", EXPO_INFO,
		     "A network namespace in the page: its inode and name (ip netns, docker, ...).");
	for (int i = 0; i < seen.n; i++) {
		char nbuf[64];
		const char *name = model__netns_label(m, seen.v[i], nbuf, sizeof(nbuf));

		netns_str(ns, sizeof(ns), seen.v[i]);
		struct expo_label l[] = {
			{ "netns", ns },
			{ "name", model__netns_named(m, seen.v[i]) ? name : "" },
		};
		expo__sample_u64(&e, l, 2, 1);
	}
	htab__free(&seen.seen);
	free(seen.v);
	free(rl);

	/* udpdrop itself */
	expo__family(&e, "udpdrop_build", EXPO_INFO, "udpdrop's version, the kernel it runs on and how it attached.");
	{
		struct expo_label l[] = { { "version", self->version }, { "kernel", self->kernel },
					  { "attach", self->attach } };

		expo__sample_u64(&e, l, 3, 1);
	}
	expo__family(&e, "udpdrop_start_time_seconds", EXPO_GAUGE,
		     "When udpdrop began counting (Unix time): drops before it are in no count.");
	expo__sample(&e, NULL, 0, m->start_wall);
	expo__family(&e, "udpdrop_overflow_drops", EXPO_COUNTER,
		     "Drops counted while the kernel's socket table was full: their cause is kept, "
		     "their socket and netns are not (an empty netns label above).");
	expo__sample_u64(&e, NULL, 0, m->totals.overflow);
	expo__family(&e, "udpdrop_missed_events", EXPO_COUNTER,
		     "Drop events the kernel did not run udpdrop's programs for (a drop inside a drop "
		     "on one CPU): in no count.");
	expo__sample_u64(&e, NULL, 0, m->missed);
	expo__family(&e, "udpdrop_kernel_events", EXPO_COUNTER,
		     "Every event udpdrop's drop programs saw, UDP or not.");
	expo__sample_u64(&e, NULL, 0, self->kernel_events);
	/* what udpdrop's programs cost the kernel, when it counts that */
	expo__family(&e, "udpdrop_bpf_stats_enabled", EXPO_GAUGE,
		     "kernel.bpf_stats_enabled: 1 while the kernel times BPF programs (the run "
		     "counters below stay 0 otherwise), -1 unknown.");
	expo__sample(&e, NULL, 0, self->bpf_stats_enabled);
	expo__family(&e, "udpdrop_bpf_run_seconds", EXPO_COUNTER,
		     "Time the kernel spent in each of udpdrop's programs (kernel.bpf_stats_enabled).");
	for (int i = 0; i < self->nprogs; i++)
		expo__sample(&e, &(struct expo_label){ "program", self->progs[i].name }, 1,
			     self->progs[i].run_ns / 1e9);
	expo__family(&e, "udpdrop_bpf_runs", EXPO_COUNTER,
		     "Runs of each of udpdrop's programs (kernel.bpf_stats_enabled).");
	for (int i = 0; i < self->nprogs; i++)
		expo__sample_u64(&e, &(struct expo_label){ "program", self->progs[i].name }, 1,
				 self->progs[i].runs);
	expo__family(&e, "udpdrop_refreshes", EXPO_COUNTER, "Reads of the kernel's tables into this page.");
	expo__sample_u64(&e, NULL, 0, self->refreshes);
	expo__family(&e, "udpdrop_http_requests", EXPO_COUNTER, "HTTP requests answered.");
	expo__sample_u64(&e, NULL, 0, self->http_requests);
	expo__family(&e, "udpdrop_http_refused", EXPO_COUNTER,
		     "HTTP connections closed without an answer or with an error, by why.");
	{
		const struct { const char *why; uint64_t n; } r[] = {
			{ "too_many_connections", self->http_rejected },
			{ "timeout", self->http_timeouts },
			{ "request_too_large", self->http_too_large },
			{ "bad_request", self->http_bad },
			{ "host", self->http_bad_host },
		};

		for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
			expo__sample_u64(&e, &(struct expo_label){ "why", r[i].why }, 1, r[i].n);
	}
	expo__family(&e, "udpdrop_render_seconds", EXPO_GAUGE, "How long the last page took to render.");
	expo__sample(&e, NULL, 0, self->render_seconds);
	expo__family(&e, "udpdrop_series", EXPO_GAUGE, "Samples in this page, this one included.");
	expo__sample_u64(&e, NULL, 0, e.samples + 1);
	expo__end(&e);
}
