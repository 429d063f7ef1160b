/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Each live row's worst refresh interval per cause, and its queue between
 * drops: what top and doctor keep across the model's updates so that the
 * advice has a burst to size for (advice_model.h feeds it to the engine).
 * In the advice layer, not the model: it accumulates the advice's own
 * per-interval figures (struct advice_track, advice__track).
 */
#ifndef UD_BURSTS_H
#define UD_BURSTS_H

#include <stdbool.h>
#include <stdint.h>
#include "advice.h"
#include "causes.h"
#include "htab.h"
#include "model.h"

/*
 * Per row (struct row_key -> struct live_burst), since it was first seen
 * with drops: per cause, the most datagrams dropped in one refresh
 * interval, and in how many intervals it dropped. Record after each
 * model__update; tick counts the refreshes (rows out of view meanwhile
 * had quiet intervals).
 */
struct live_burst {
	uint64_t tick;                  /* the refresh of the last look */
	uint32_t intervals;             /* refreshes since first seen dropping */
	uint64_t prev[CAUSE_MAX];       /* cumulative drops at the last look */
	/* per cause: the worst interval, the intervals with drops, and the
	 * socket's own deliveries in them (model.have_rx; advice__track, the
	 * rule report and doctor use too) */
	struct advice_track track[CAUSE_MAX];
	bool have_rx;
	uint64_t rx_prev;               /* deliveries at the last look */
	/* the socket's queue at each look: */
	uint32_t queue_looks;           /* looks at a live socket's queue that
					   more drops followed (between drops: not
					   the quiet after a load ends) */
	uint64_t queue_low, queue_high; /* bytes queued, fewest and most seen */
	uint64_t drops_prev;            /* all causes' drops at the last look */
	bool have_pending;              /* the last look's queue, not yet followed */
	uint64_t pending;               /* by drops */
};
/* h: an empty table of struct live_burst by struct row_key; 0 or -errno. */
int bursts__init(struct htab *h);
/* One look at the model's rows in view, after model__update number tick. */
void bursts__record(struct htab *h, struct model *m, uint64_t tick);

#endif
