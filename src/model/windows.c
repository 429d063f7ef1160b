// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Drop windows: per-(socket, cause) figures from the kernel's windows (windows.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "windows.h"

struct win_pkey { /* a window not folded yet */
	uint64_t id;
	uint32_t win;
	uint16_t cause;
	uint16_t pad;
};

struct win_akey { /* a socket's figures of one cause */
	uint64_t id;
	uint16_t cause;
	uint16_t pad;
	uint32_t pad2;
};

static uint64_t win_sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void win_agg__add(struct win_agg *a, uint32_t win, uint64_t n)
{
	uint64_t in_win = n;

	if (!n)
		return;
	a->datagrams = win_sat_add(a->datagrams, n);
	if (a->dropping && win == a->last) {
		a->last_n = win_sat_add(a->last_n, n);
		if (a->first == a->last)
			a->first_n = a->last_n;
		in_win = a->last_n;
	} else if (!a->dropping || win > a->last) {
		if (!a->dropping) {
			a->first = win;
			a->first_n = n;
		}
		a->dropping++;
		a->last = win;
		a->last_n = n;
	} else {
		/* an earlier window (not expected): one more, never merged */
		a->dropping++;
		if (win < a->first) {
			a->first = win;
			a->first_n = n;
		}
	}
	if (in_win > a->best)
		a->best = in_win;
}

void win_agg__join(struct win_agg *a, const struct win_agg *b)
{
	if (!b->dropping)
		return;
	if (!a->dropping) {
		*a = *b;
		return;
	}
	a->datagrams = win_sat_add(a->datagrams, b->datagrams);
	a->delivered = win_sat_add(a->delivered, b->delivered);
	/* b's latest run, continued from a's when all of b's windows are in
	 * it (one window on both sides is one: stalled only if on both) */
	if (b->stalled < b->dropping)
		a->stalled = b->stalled;
	else if (b->first != a->last)
		a->stalled += b->stalled;
	else
		a->stalled = a->stalled ? a->stalled + b->stalled - 1 : b->stalled - 1;
	if (b->best > a->best)
		a->best = b->best;
	if (b->first == a->last) {
		/* the window of the change: both sides' parts are one window */
		uint64_t both = win_sat_add(a->last_n, b->first_n);

		if (both > a->best)
			a->best = both;
		a->dropping += b->dropping - 1;
		if (b->dropping == 1) {
			a->last_n = both;
		} else {
			a->last = b->last;
			a->last_n = b->last_n;
		}
		if (a->first == a->last)
			a->first_n = a->last_n;
		else if (a->first == b->first)
			a->first_n = both;
		return;
	}
	a->dropping += b->dropping;
	if (b->last > a->last) {
		a->last = b->last;
		a->last_n = b->last_n;
	}
	if (b->first < a->first) {
		a->first = b->first;
		a->first_n = b->first_n;
	}
}

uint64_t win_agg__span(const struct win_agg *a)
{
	return a->dropping ? (uint64_t)(a->last - a->first) + 1 : 0;
}

int windows__init(struct windows *w)
{
	memset(w, 0, sizeof(*w));
	if (htab__init(&w->pending, sizeof(struct win_pkey), sizeof(uint64_t)))
		return -ENOMEM;
	if (htab__init(&w->aggs, sizeof(struct win_akey), sizeof(struct win_agg))) {
		htab__free(&w->pending);
		return -ENOMEM;
	}
	return 0;
}

void windows__free(struct windows *w)
{
	htab__free(&w->pending);
	htab__free(&w->aggs);
	free(w->folded);
	memset(w, 0, sizeof(*w));
}

int windows__add(struct windows *w, uint64_t id, int cause, uint32_t win, uint64_t n)
{
	struct win_pkey k = { .id = id, .win = win, .cause = (uint16_t)cause };
	uint64_t *v;

	if (!n)
		return 0;
	v = htab__upsert(&w->pending, &k, NULL);
	if (!v)
		return -ENOMEM;
	*v = win_sat_add(*v, n);
	return 0;
}

static int folded_cmp(const void *x, const void *y)
{
	const struct win_folded *a = x, *b = y;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	if (a->cause != b->cause)
		return a->cause < b->cause ? -1 : 1;
	return a->win < b->win ? -1 : a->win > b->win;
}

static bool not_folded(const void *key, void *val, void *arg)
{
	return ((const struct win_pkey *)key)->win >= *(uint32_t *)arg;
}

int windows__fold(struct windows *w, uint32_t before)
{
	size_t it = 0, n = 0;
	const void *key;
	void *val;

	size_t from;

	if (!w->keep_folded)
		w->nfolded = 0;
	from = w->nfolded;
	while (htab__next(&w->pending, &it, &key, &val))
		n += ((const struct win_pkey *)key)->win < before;
	if (!n)
		return 0;
	if (from + n > w->cap) {
		struct win_folded *p = realloc(w->folded, (from + n) * sizeof(*p));

		if (!p)
			return -ENOMEM;
		w->folded = p;
		w->cap = from + n;
	}
	for (it = 0; htab__next(&w->pending, &it, &key, &val);) {
		const struct win_pkey *k = key;

		if (k->win >= before)
			continue;
		w->folded[w->nfolded++] = (struct win_folded){
			.id = k->id, .cause = k->cause, .win = k->win,
			.datagrams = *(uint64_t *)val,
		};
	}
	/* in time order per socket and cause: win_agg__add's contract (a
	 * socket's deliveries sort after its causes) */
	qsort(w->folded + from, w->nfolded - from, sizeof(*w->folded), folded_cmp);
	size_t kept = from;

	for (size_t i = from; i < w->nfolded; i++) {
		struct win_folded *f = &w->folded[i], dk, *d;
		struct win_akey ak = { .id = f->id, .cause = f->cause };
		struct win_agg *a;

		if (f->cause == WIN_DELIVERED) {
			/* kept where a drop window of the socket's is (marked below) */
			if (f->datagrams & (1ull << 63)) {
				f->datagrams &= ~(1ull << 63);
				w->folded[kept++] = *f;
			}
			continue;
		}
		a = htab__upsert(&w->aggs, &ak, NULL);
		if (!a)
			return -ENOMEM;
		bool again = a->dropping && f->win == a->last; /* more of the last */

		win_agg__add(a, f->win, f->datagrams);
		dk = (struct win_folded){ .id = f->id, .cause = WIN_DELIVERED, .win = f->win };
		d = bsearch(&dk, w->folded + i, w->nfolded - i, sizeof(*w->folded), folded_cmp);
		if (d) {
			a->delivered = win_sat_add(a->delivered, d->datagrams & ~(1ull << 63));
			d->datagrams |= 1ull << 63; /* a drop window's: kept */
			a->stalled = 0;
		} else if (!again) {
			a->stalled++;
		}
		w->folded[kept++] = *f;
	}
	w->nfolded = kept;
	return htab__retain(&w->pending, not_folded, &before);
}

struct rejoin_ctx {
	uint64_t (*join)(void *arg, uint64_t id);
	void *arg;
};

static bool counts_as_itself(const void *key, void *val, void *arg)
{
	const struct rejoin_ctx *c = arg;
	uint64_t id = ((const struct win_akey *)key)->id;

	return c->join(c->arg, id) == id;
}

int windows__rejoin(struct windows *w, uint64_t (*join)(void *arg, uint64_t id), void *arg)
{
	struct rejoin_ctx c = { join, arg };
	size_t it = 0, n = 0;
	const void *key;
	void *val;
	struct win_akey *keys;
	struct win_agg *vals;
	int err = 0;

	while (htab__next(&w->aggs, &it, &key, &val))
		n += !counts_as_itself(key, val, &c);
	if (!n)
		return 0;
	keys = calloc(n, sizeof(*keys));
	vals = calloc(n, sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	n = 0;
	for (it = 0; htab__next(&w->aggs, &it, &key, &val);) {
		if (counts_as_itself(key, val, &c))
			continue;
		keys[n] = *(const struct win_akey *)key;
		keys[n].id = join(arg, keys[n].id);
		vals[n++] = *(struct win_agg *)val;
	}
	if (htab__retain(&w->aggs, counts_as_itself, &c))
		err = -ENOMEM;
	/* the inode's windows came first: the cookie's go after them */
	for (size_t i = 0; !err && i < n; i++) {
		int created;
		struct win_agg *dst = htab__upsert(&w->aggs, &keys[i], &created);

		if (!dst) {
			err = -ENOMEM;
			break;
		}
		if (!created)
			win_agg__join(&vals[i], dst);
		*dst = vals[i];
	}
	free(keys);
	free(vals);
	return err;
}

static bool agg_kept(const void *key, void *val, void *ids)
{
	return !htab__find(ids, &((const struct win_akey *)key)->id);
}

static bool pending_kept(const void *key, void *val, void *ids)
{
	return !htab__find(ids, &((const struct win_pkey *)key)->id);
}

int windows__forget(struct windows *w, const struct htab *ids)
{
	if (!ids->n)
		return 0;
	if (htab__retain(&w->aggs, agg_kept, (void *)ids) ||
	    htab__retain(&w->pending, pending_kept, (void *)ids))
		return -ENOMEM;
	return 0;
}

const struct win_agg *windows__find(const struct windows *w, uint64_t id, int cause)
{
	struct win_akey k = { .id = id, .cause = (uint16_t)cause };

	return htab__find(&w->aggs, &k);
}
