/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A log-linear histogram of non-negative values (nanoseconds, mostly):
 * constant memory, O(1) add, percentiles within 1/HIST_SUB relative
 * error (HdrHistogram's idea, small). min, max, count and sum are exact.
 */
#ifndef UD_HIST_H
#define UD_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 5                 /* 32 sub-buckets: < 3.2 % error */
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS (64 * HIST_SUB)

struct hist {
	uint64_t count, sum, min, max;
	uint64_t b[HIST_BUCKETS];
};

void hist__reset(struct hist *h);
void hist__add(struct hist *h, uint64_t v);
void hist__merge(struct hist *dst, const struct hist *src);
/* The value at or below which p (0..1) of the samples lie; 0 if empty.
 * Exact at p = 0 (min) and p = 1 (max); elsewhere the bucket's upper
 * bound, clamped to [min, max]. */
uint64_t hist__pct(const struct hist *h, double p);
/* The largest value bucket i holds (for histograms filled elsewhere, e.g. in BPF). */
uint64_t hist__bucket_top(unsigned int i);

#endif
