/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The core tracer and the aggregator driven together, for every subcommand
 * that wants "the drops since I started" (top, sink, gen): open and attach,
 * take the baseline, then refresh each interval into model rows.
 */
#ifndef UD_WATCH_H
#define UD_WATCH_H

#include "htab.h"
#include "lifetimes.h"
#include "model.h"
#include "tracer.h"

struct watch {
	struct tracer t;
	struct model m;
	/* the latest snapshot of the tracer's maps */
	struct htab drops;       /* struct ud_key -> struct ud_val */
	struct htab rx;          /* socket identity -> struct ud_rx */
	struct ud_val *overflow; /* UD_OVERFLOW_SLOTS */
	uint64_t stats[UD_STAT_MAX];
	struct lifetimes life;   /* which sockets with entries have closed */
	uint64_t fold_ns;        /* last fold of long-closed sockets */
	bool open;
};

/*
 * Open the model with `mo` and the tracer with `to` (its filter_netns
 * defaults to mo->netns), attach, and take the baseline. Needs root
 * (caps__check_bpf first). 0, or an exit code (EXIT_KERNEL, EXIT_PRIV,
 * EXIT_FAIL) after one line on stderr saying what to do; nothing is left
 * attached then. `who` prefixes messages ("udpdrop sink").
 */
int watch__open(struct watch *w, struct tracer_opts *to,
		const struct model_opts *mo, const char *who);
/*
 * One interval: counters, maps, join; then the kernel entries of sockets
 * found closed are given back (their counts stay). 0 or a negative errno.
 */
int watch__refresh(struct watch *w);
void watch__close(struct watch *w);

#endif
