// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel's counters of each netns in view, read next to udpdrop's own
 * (at the baseline, then every update), and what the reconciliation
 * compares them with: a cause's drops per netns, since the base.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include "model_internal.h"
#include "util.h"

struct netns_counters *model_counters_for(struct model *m, uint32_t netns)
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
	struct netns_counters *nc = model_counters_for(m, netns);

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
		struct netns_counters *nc = model_counters_for(m, ns);

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
	model_remember_sockets(m, 0, true, now);

	/* what udpdrop had counted when the counters were read */
	while (htab__next(drops, &it, &key, &val)) {
		const struct ud_key *k = key;
		const struct ud_val *v = val;
		struct netns_counters *nc = model_counters_for(m, model__key_netns(m, k));

		if (nc) {
			enum cause c = model__cause(m, k->reason, k->flags);

			nc->cause_base[c] += ud_drops(k, v);
			nc->cause_units_base[c] += ud_kernel_units(k, v);
		}
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

/*
 * A cause's datagrams in one netns, over every row (shown or not); with
 * units, in the kernel's unit (ud_kernel_units).
 */
uint64_t model_netns_cause_all(struct model *m, uint32_t netns, enum cause c,
			       bool units)
{
	size_t it = 0;
	const void *key;
	void *val;
	uint64_t n = 0;

	while (htab__next(&m->rows, &it, &key, &val)) {
		const struct row *r = val;

		if (r->key.netns == netns)
			n += units ? r->cause_units[c] : r->cause[c];
	}
	/* with --netns the overflow bucket is all this netns's */
	if (m->opts.netns == netns)
		for (int s = 0; s < UD_OVERFLOW_SLOTS; s++)
			if (model__cause(m, s, 0) == c)
				n += m->overflow[s].datagrams;
	return n;
}

static uint64_t netns_cause_since(struct model *m, uint32_t netns, enum cause c,
				  bool units)
{
	uint64_t n = model_netns_cause_all(m, netns, c, units);

	for (int i = 0; i < m->ncounters; i++)
		if (m->counters[i].netns == netns) {
			uint64_t base = units ? m->counters[i].cause_units_base[c]
					      : m->counters[i].cause_base[c];

			return n >= base ? n - base : 0;
		}
	return n;
}

uint64_t model__netns_cause(struct model *m, uint32_t netns, enum cause c)
{
	return netns_cause_since(m, netns, c, false);
}

uint64_t model__netns_cause_units(struct model *m, uint32_t netns, enum cause c)
{
	return netns_cause_since(m, netns, c, true);
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
