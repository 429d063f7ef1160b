// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include "hist.h"

/*
 * Bucket of v: values below HIST_SUB get one bucket each (exact); above,
 * the top HIST_SUB_BITS + 1 significant bits pick the bucket, so each
 * power of two is split into HIST_SUB equal parts.
 */
static unsigned int bucket_of(uint64_t v)
{
	if (v < HIST_SUB)
		return (unsigned int)v;
	int msb = 63 - __builtin_clzll(v);            /* >= HIST_SUB_BITS */
	int shift = msb - HIST_SUB_BITS;
	unsigned int sub = (unsigned int)(v >> shift) & (HIST_SUB - 1);

	return (unsigned int)(shift + 1) * HIST_SUB + sub;
}

uint64_t hist__bucket_top(unsigned int i)
{
	if (i < HIST_SUB)
		return i;
	unsigned int shift = i / HIST_SUB - 1, sub = i % HIST_SUB;
	uint64_t base = ((uint64_t)(HIST_SUB + sub)) << shift;

	if (shift >= 58 && sub == HIST_SUB - 1)
		return UINT64_MAX;
	return base + ((1ull << shift) - 1);
}

void hist__reset(struct hist *h)
{
	memset(h, 0, sizeof(*h));
}

void hist__add(struct hist *h, uint64_t v)
{
	if (!h->count || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->count++;
	h->sum += v;
	h->b[bucket_of(v)]++;
}

void hist__merge(struct hist *dst, const struct hist *src)
{
	if (!src->count)
		return;
	if (!dst->count || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->sum += src->sum;
	for (unsigned int i = 0; i < HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
}

uint64_t hist__pct(const struct hist *h, double p)
{
	if (!h->count)
		return 0;
	if (p <= 0)
		return h->min;
	if (p >= 1)
		return h->max;
	/* the rank of the sample asked for, 1-based, rounded up */
	uint64_t rank = (uint64_t)(p * (double)h->count);

	if ((double)rank < p * (double)h->count)
		rank++;
	if (!rank)
		rank = 1;
	uint64_t seen = 0;

	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			uint64_t v = hist__bucket_top(i);

			return v < h->min ? h->min : v > h->max ? h->max : v;
		}
	}
	return h->max;
}
