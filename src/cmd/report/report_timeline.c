// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop report, the timeline and --by (report_internal.h): drops per
 * interval between COUNTS snapshots, and the per-cause, per-reason and
 * per-location tables that --by prints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report_internal.h"

/* ---- timeline and --by ------------------------------------------------- */

static const char *const by_names[REPORT_BY_MAX] = {
	[REPORT_BY_SOCKET] = "socket",
	[REPORT_BY_CAUSE] = "cause",
	[REPORT_BY_REASON] = "reason",
	[REPORT_BY_LOCATION] = "location",
	[REPORT_BY_SECOND] = "second",
};

const char *report__by_name(enum report_by by)
{
	return (unsigned)by < REPORT_BY_MAX ? by_names[by] : NULL;
}

int report__by_parse(const char *s)
{
	for (int i = 0; i < REPORT_BY_MAX; i++)
		if (s && !strcmp(s, by_names[i]))
			return i;
	return -1;
}

static void snap_causes(const struct report *rp, const struct report_snap *sn,
			uint64_t cause[CAUSE_MAX])
{
	memset(cause, 0, CAUSE_MAX * sizeof(*cause));
	for (uint32_t i = 0; i < sn->n; i++) {
		const char *name = rp_reason_name(rp, sn->v[i].reason);

		/* a reassembly failure's unit is no drop (UD_KEY_REASM_UNIT) */
		if (!(sn->v[i].flags & UD_KEY_REASM_UNIT))
			cause[cause__classify(name ? name : "", sn->v[i].flags)] += sn->v[i].datagrams;
	}
}

/*
 * The intervals between consecutive COUNTS snapshots: each one's drops are
 * the later snapshot's minus the earlier's, per cause (never below 0: a
 * count that went down adds nothing). Returns how many (ncounts - 1).
 */
int rp_timeline(const struct report *rp, struct tl_row **rows)
{
	uint64_t prev[CAUSE_MAX], cur[CAUSE_MAX];
	int n = rp->ncounts >= 2 ? (int)(rp->ncounts - 1) : 0;
	uint64_t t0;

	*rows = NULL;
	if (!n)
		return 0;
	*rows = rp_xrealloc(NULL, n, sizeof(**rows));
	t0 = rp->snaps[0].time_ns;
	snap_causes(rp, &rp->snaps[0], prev);
	for (int i = 0; i < n; i++) {
		uint64_t ta = rp->snaps[i].time_ns, tb = rp->snaps[i + 1].time_ns;
		struct tl_row *r = &(*rows)[i];

		memset(r, 0, sizeof(*r));
		r->start_ns = ta > t0 ? ta - t0 : 0;
		r->len_ns = tb > ta ? tb - ta : 0;
		snap_causes(rp, &rp->snaps[i + 1], cur);
		for (int c = 0; c < CAUSE_MAX; c++) {
			r->cause[c] = cur[c] > prev[c] ? cur[c] - prev[c] : 0;
			r->drops += r->cause[c];
		}
		memcpy(prev, cur, sizeof(prev));
	}
	return n;
}

/* n rows merged evenly into at most max (group g: rows g*n/max up to
 * (g+1)*n/max); *merged set to the result, returns its length. */
int rp_timeline_merge(const struct tl_row *rows, int n, int max, struct tl_row **merged)
{
	int m = n > max ? max : n;

	*merged = rp_xrealloc(NULL, m, sizeof(**merged));
	if (n <= max) {
		if (n)
			memcpy(*merged, rows, n * sizeof(*rows));
		return n;
	}
	for (int g = 0; g < m; g++) {
		int lo = (int)((int64_t)g * n / m), hi = (int)((int64_t)(g + 1) * n / m);
		struct tl_row *r = &(*merged)[g];

		memset(r, 0, sizeof(*r));
		r->start_ns = rows[lo].start_ns;
		for (int i = lo; i < hi; i++) {
			r->len_ns += rows[i].len_ns;
			r->drops += rows[i].drops;
			for (int c = 0; c < CAUSE_MAX; c++)
				r->cause[c] += rows[i].cause[c];
		}
	}
	return m;
}

double rp_tl_rate(const struct tl_row *r)
{
	return r->len_ns ? r->drops * 1e9 / r->len_ns : 0;
}

/* The cause with the most drops in r (the lowest on a tie), -1 if none. */
int rp_tl_top_cause(const struct tl_row *r)
{
	int best = -1;

	for (int c = 0; c < CAUSE_MAX; c++)
		if (r->cause[c] && (best < 0 || r->cause[c] > r->cause[best]))
			best = c;
	return best;
}

/* Decimals for offsets and lengths: 1, or 3 when an interval is under 0.1 s. */
int rp_tl_decimals(const struct tl_row *rows, int n)
{
	for (int i = 0; i < n; i++)
		if (rows[i].len_ns < 100000000ull)
			return 3;
	return 1;
}

void rp_fmt_rate(char *buf, size_t len, double r)
{
	if (r <= 0)
		snprintf(buf, len, "0");
	else if (r >= 100)
		snprintf(buf, len, "%.0f", r);
	else
		snprintf(buf, len, "%.1f", r);
}

static int cmp_contrib(const void *a, const void *b)
{
	const struct contrib *x = a, *y = b;

	if (x->drops != y->drops)
		return x->drops > y->drops ? -1 : 1;
	if (x->flow != y->flow)
		return x->flow ? 1 : -1;
	return x->idx - y->idx;
}

/* The (at most BY_CAUSE_TOP) sockets and flows with the most drops of cause c. */
int rp_cause_contribs(const struct agg *a, int c, struct contrib *top)
{
	struct contrib *all = rp_xrealloc(NULL, a->nsocks + a->nflows, sizeof(*all));
	int n = 0;

	for (int i = 0; i < a->nsocks; i++)
		if (a->socks[i].row.cause[c])
			all[n++] = (struct contrib){ false, i, a->socks[i].row.cause[c] };
	for (int i = 0; i < a->nflows; i++)
		if (a->flows[i].cause == c && a->flows[i].row.drops)
			all[n++] = (struct contrib){ true, i, a->flows[i].row.drops };
	if (n)
		qsort(all, n, sizeof(*all), cmp_contrib);
	if (n > BY_CAUSE_TOP)
		n = BY_CAUSE_TOP;
	if (n)
		memcpy(top, all, n * sizeof(*all));
	free(all);
	return n;
}

void rp_fmt_contrib(char *buf, size_t len, const struct agg *a, const struct contrib *k)
{
	if (k->flow)
		rp_fmt_flow(buf, len, &a->flows[k->idx]);
	else
		rp_fmt_local(buf, len, &a->socks[k->idx]);
}

/* The last snapshot's datagrams per (reason, cause), most first. */
int rp_by_reason(const struct report *rp, struct row_reason **out)
{
	const struct report_counts *last = &rp->last;
	struct row_reason *v = NULL;
	struct htab idx;
	int n = 0;

	rp_xhtab_init(&idx, sizeof(struct sock_reason_key), sizeof(int));
	for (uint32_t i = 0; i < last->n; i++) {
		const struct trace_count *tc = &last->v[i];
		int cause = rp_key_cause(rp, &tc->key), j, created;
		struct sock_reason_key k = { 0, tc->key.reason, cause };
		int *slot = rp_xupsert(&idx, &k, &created);

		if (created) {
			j = *slot = n;
			v = rp_grow_arr(v, n, sizeof(*v));
			memset(&v[j], 0, sizeof(v[j]));
			v[j].reason = tc->key.reason;
			v[j].cause = cause;
			n++;
		}
		j = *slot;
		v[j].drops += ud_drops(&tc->key, &tc->val);
		v[j].skbs += tc->val.skbs;
	}
	htab__free(&idx);
	if (n)
		qsort(v, n, sizeof(*v), rp_cmp_reason);
	*out = v;
	return n;
}

static int cmp_loc_drops(const void *a, const void *b)
{
	const struct row_loc *x = a, *y = b;

	if (x->drops != y->drops)
		return x->drops > y->drops ? -1 : 1;
	return rp_cmp_loc(a, b);
}

/* The last snapshot's datagrams per drop location, most first. */
int rp_by_location(const struct report *rp, struct row_loc **out)
{
	const struct report_counts *last = &rp->last;
	struct row_loc *v = NULL;
	struct htab idx;
	int n = 0;

	rp_xhtab_init(&idx, sizeof(uint64_t), sizeof(int));
	for (uint32_t i = 0; i < last->n; i++) {
		const struct trace_count *tc = &last->v[i];
		int j, created, *slot = rp_xupsert(&idx, &tc->key.location, &created);

		if (created) {
			j = *slot = n;
			v = rp_grow_arr(v, n, sizeof(*v));
			memset(&v[j], 0, sizeof(v[j]));
			v[j].addr = tc->key.location;
			n++;
		}
		j = *slot;
		v[j].drops += ud_drops(&tc->key, &tc->val);
		v[j].skbs += tc->val.skbs;
	}
	htab__free(&idx);
	if (n)
		qsort(v, n, sizeof(*v), cmp_loc_drops);
	*out = v;
	return n;
}
