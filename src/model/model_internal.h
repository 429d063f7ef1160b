/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the model's own files (model.c, model_*.c) share, and nothing else
 * includes: model.h is the model's API. Each function here is one file's,
 * called from another (the file is named above it); the rest are static.
 */
#ifndef UD_MODEL_INTERNAL_H
#define UD_MODEL_INTERNAL_H

#include "model.h"

/* Deliveries joined per socket row (m->rx_sock). */
struct rx_sock {
	uint64_t datagrams; /* since the baseline, this update */
	uint64_t prev;      /* ... at the previous update, for the rate */
	uint32_t peak;      /* bytes, the most seen since start */
};

/* What to dump of one netns in view, this update. */
struct dump_plan {
	uint32_t netns;
	bool full;       /* all its sockets */
	int nports;      /* else the sockets on these local ports */
	uint16_t ports[SOCKTAB_DUMP_PORTS];
};

/* Causes whose drops are never a bound socket's, whatever is bound now. */
static inline bool cause_is_socketless(enum cause c)
{
	return c == CAUSE_NO_SOCKET || c == CAUSE_MCAST_UNWANTED ||
	       c == CAUSE_MCAST_UNJOINED;
}

/* model_counters.c */
struct netns_counters *model_counters_for(struct model *m, uint32_t netns);
uint64_t model_netns_cause_all(struct model *m, uint32_t netns, enum cause c,
			       bool units);

/* model_sockets.c */
void model_remember_sock(struct model *m, struct sock_info *si, bool baseline,
			 uint64_t now);
void model_remember_fresh(struct model *m, const struct sock_info *si,
			  uint64_t now);
void model_remember_sockets(struct model *m, int first, bool baseline,
			    uint64_t now);
bool model_netns_in_list(const uint32_t *list, int n, uint32_t netns);
void model_forget_sockets(struct model *m, uint64_t now,
			  const uint32_t *dumped, int ndumped);
int model_prune_stale(struct model *m, const struct htab *drops);

/* model_attribution.c */
bool model_addr_is_local(struct model *m, uint32_t netns, int family,
			 const uint8_t *addr);
void model_learn_from_rx(struct model *m, uint64_t now);
int model_add_flow(struct model *m, const struct ud_key *k,
		   const struct ud_val *v, enum cause c);

/* model_dumps.c */
void model_plan_dumps(struct model *m, struct htab *drops,
		      struct dump_plan *plans, const uint32_t *netns_list,
		      int nnetns, uint64_t now);
void model_sync_sockets(struct model *m, struct dump_plan *plans, int n,
			bool drop_unplanned, uint64_t now);
int model_refresh_rows(struct model *m, struct dump_plan *plans, int nplans,
		       uint64_t now);

/* model_rows.c */
void model_row_pods(struct model *m, uint64_t now);
int model_add_to_row(struct model *m, const struct ud_key *k,
		     const struct ud_val *v, enum cause c, uint64_t cookie,
		     uint32_t netns, uint32_t extra_flags);

#endif
