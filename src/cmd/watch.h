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
	struct pod_cache pods;   /* the model's (model.pods), with opts.k8s_logs */
	uint64_t fold_ns;        /* last fold of long-closed sockets */
	bool open;
	/*
	 * The traced netns (-N, -p's) has gone: only udpdrop's pin keeps it
	 * (netns__pin_gone, looked at by each refresh). The caller says so
	 * (cli__say_netns_gone) and ends as at a normal end.
	 */
	bool netns_gone;
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
 * found closed are given back (their counts stay), and whether the traced
 * netns has gone (netns_gone). 0 or a negative errno.
 */
int watch__refresh(struct watch *w);
/* Detach and free; the netns pin is let go after the tracer. */
void watch__close(struct watch *w);

#endif
