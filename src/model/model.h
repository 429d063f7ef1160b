/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The aggregator: each interval it joins the tracer's counts with the
 * socket table and the kernel's counters into rows (one per socket that
 * dropped, one per socketless flow and cause), rates and totals. Printing
 * lives elsewhere (top's top_print.c, report, doctor); this holds no
 * terminal or JSON knowledge.
 */
#ifndef UD_MODEL_H
#define UD_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include "causes.h"
#include "htab.h"
#include "kowner.h"
#include "ksyms.h"
#include "mib.h"
#include "netns.h"
#include "pods.h"
#include "reasons.h"
#include "rows.h"
#include "socktab.h"
#include "tracer.h"
#include "udpdrop.h"
#include "windows.h"

/* Sockets ever seen on a local port: flow attribution looks only here. */
#define PORT_SOCKS_MAX 8
struct port_key {
	uint32_t netns;
	uint16_t port;
	uint8_t proto, pad;
};
struct port_socks {
	int n;
	uint64_t cookies[PORT_SOCKS_MAX]; /* oldest first; the oldest goes when full */
};

/* Which sockets a socketless flow's counts went to, in order. */
#define FLOW_SEGS 8 /* the last is kept for "no socket" */
struct flow_attr {
	int n;
	struct {
		uint64_t cookie;     /* 0: no socket matched */
		uint32_t netns;      /* the socket's (a closing queue has none) */
		struct ud_val start; /* the flow's counts when this one began */
	} seg[FLOW_SEGS];
	struct ud_val last;      /* the flow's counts last interval */
};

struct model_opts {
	int pid;               /* 0: any */
	bool pid_tree;         /* pid and its descendants (record -- COMMAND), not pid alone */
	uint32_t netns;        /* 0: any */
	uint16_t port;         /* 0: any */
	bool all;              /* list quiet sockets too */
	/* the kubelet's log directory, to name the pods of the sockets'
	 * owners (pods.h; the caller's, watch__open looks there); NULL: none */
	const char *k8s_logs;
};

/* Per netns: the kernel's counters at start and now. */
struct netns_counters {
	uint32_t netns;
	bool have_base;
	struct mib base, cur;
	uint64_t cause_base[CAUSE_MAX]; /* udpdrop's counts at the baseline */
	uint64_t cause_units_base[CAUSE_MAX]; /* ... in the kernel's unit (rows.h) */
	bool in_view;                   /* read each interval */
	bool base_fresh;                /* base just read: take udpdrop's next */
	/*
	 * The counters read again right after the tracer's maps: the maps
	 * were read at an instant between the two readings, so while drops
	 * come in (a storm) the kernel's side of the reconciliation is known
	 * only to within how far the counters moved meanwhile.
	 */
	struct mib base_after, cur_after;
	bool have_base_after, have_cur_after;
};

struct model_totals {
	uint64_t drops, skbs, attributed, overflow, overflow_skbs;
	/*
	 * With -N: a closing socket's purged queue, addressed to one of this
	 * netns's addresses, that no socket known explains (the kernel gives
	 * it no netns): maybe this netns's, maybe another's with the same
	 * address. Counted here, in no row and no total.
	 */
	uint64_t netns_unknown;
	uint64_t cause[CAUSE_MAX];      /* datagrams */
	uint64_t cause_skbs[CAUSE_MAX]; /* skb events */
	double rate;
	uint64_t prev_drops;
};

/*
 * The socket table (st) lives on from one update to the next. All sockets
 * of a netns are dumped when it comes into view, every MODEL_FULL_DUMP_NS,
 * on every update with --all, and when a drop names a socket not seen yet;
 * the sockets on a port when a flow to it is to be attributed. In between,
 * the sockets of the rows in view are refreshed by exact requests; one
 * that does not answer is looked for by its port (closed, or not reachable
 * that way).
 */
#define MODEL_FULL_DUMP_NS (30 * 1000000000ull)
/*
 * Kernels without deliveries counted (before 6.6) learn of a socket only
 * from its drops or a dump, so two sockets sharing a port that never
 * dropped stay unknown until they close, when their purged queues can no
 * longer be told apart (watch.c arms the socket's free once a port is
 * shared). Until then (model.watch_sharing), the netns in view are dumped
 * whole this often instead, as `ss -ua` would be.
 */
#define MODEL_SHARING_DUMP_NS (1000000000ull)

struct model {
	struct model_opts opts;
	struct reasons reasons;
	/*
	 * The kernel has no drop reasons (before 5.17), or the tests said to
	 * act so (UDPDROP_NO_DROP_REASONS=1): `reasons` holds udpdrop's sites
	 * (enum ud_site), derived from the drop locations.
	 */
	bool sites;
	uint32_t site_base;       /* NOT_SPECIFIED drops named by site: reason site_base + site (reasons__site_base) */
	struct ksyms ksyms;
	struct netns_table nt;
	struct socktab st;
	struct htab known;      /* cookie -> struct sock_info, last seen */
	struct htab inode2cookie;
	struct htab flow_attr;  /* struct ud_key (flow) -> struct flow_attr */
	struct htab local_addrs;/* netns -> struct local_addrs, per interval */
	struct htab by_port;    /* struct port_key -> struct port_socks: known sockets per port */
	bool port_shared;       /* some port has had two sockets (model__port_shared) */
	bool watch_sharing;     /* dump every MODEL_SHARING_DUMP_NS (set by the caller) */
	struct htab rows;       /* struct row_key -> struct row */
	struct htab pid_inodes; /* inodes the --pid process (pid_tree: the tree) ever held */
	struct htab rx;         /* socket identity -> struct ud_rx, since the baseline */
	struct htab rx_base;    /* socket identity -> struct ud_rx at the baseline */
	struct htab rx_sock;    /* row cookie -> struct rx_sock: rx joined per socket */
	struct htab dumped;     /* netns -> uint64_t: when all its sockets were last dumped */
	struct htab unknown;    /* socket id a dump has not found (cookie, or UD_RX_INODE | inode) */
	struct htab kowners;    /* netns -> struct kowner_list: its tunnel devices, read since the last owner refresh */
	/*
	 * The Kubernetes pods of the sockets' owners (pods.h): the caller's
	 * cache (NULL: pods not looked up), and per socket row (cookie ->
	 * struct model_pod) the pod its owner was in, kept after it closes.
	 */
	struct pod_cache *pods;
	struct htab pod_of;
	struct windows win;     /* drop windows per (socket row, cause): model__update_windows */
	uint32_t st_netns[256]; /* the netns whose sockets st holds */
	int nst_netns;          /* -1: too many to list (any may be there) */
	struct netns_counters *counters;
	int ncounters;
	struct model_totals totals;
	uint64_t stats[UD_STAT_MAX];
	uint64_t missed;         /* events the kernel skipped (recursion_misses) */
	struct ud_val overflow[UD_OVERFLOW_SLOTS];
	int8_t cause_cache[1024]; /* reason value -> cause, -1 unknown yet */
	uint64_t start_ns, last_ns;
	uint64_t nt_ns;          /* when nt was scanned */
	uint64_t owners_ns;      /* last lookup of the owners of the sockets in view */
	uint64_t owners_full_ns; /* ... by a full walk of /proc */
	bool owners_new;         /* a dump learnt a socket whose owner is not looked up */
	struct model_sock_stats {
		uint64_t full, ports, exact, exact_missed; /* dumps, requests */
	} sock_stats;            /* how the socket table was kept (-vv, tests) */
	uint64_t forget_ns;      /* last pruning of long-closed sockets */
	uint64_t fold_after_ns;  /* MODEL_FOLD_AFTER_NS, or the environment's */
	uint32_t closed_rows_max; /* MODEL_CLOSED_ROWS_MAX, or the environment's */
	double interval;         /* seconds covered by the last update */
	bool have_rx;            /* rows carry rx, rx_rate, queue_peak */
	double start_wall;       /* start_ns as wall-clock time (s): when counting began */
	/* the sorted view of the last update */
	struct row **view_sockets, **view_flows;
	int nview_sockets, nview_flows;
	uint64_t view_gen;       /* bumped each time the view is made anew */
	/* the view's socket rows with an owner and a port, by (netns, first
	 * pid, port), made at the first model__owner_port_rows of a view */
	struct row **op_rows;
	int nop_rows;
	uint64_t op_gen;         /* the view_gen op_rows was made for (0: none) */
};

/* The kernel functions the classifier names drops by: enum ud_range's,
 * and (kernels without drop reasons, NOT_SPECIFIED) the sites' (enum ud_loc) */
extern const char *const model__range_syms[UD_RANGE_MAX];
struct model_site_sym {
	const char *name;
	uint8_t loc;
};
extern const struct model_site_sym model__site_syms[];
extern const int model__nsite_syms;

int model__init(struct model *m, const struct model_opts *o);
/* /proc/kallsyms for the classifier's function ranges (model__range_syms
 * ahead, in one short read; model__site_syms from the whole table) */
void model__load_syms(struct model *m);
/*
 * A testing aid: UDPDROP_NO_DROP_REASONS=1 makes udpdrop act as on a
 * kernel without drop reasons (causes from the drop locations).
 */
bool model__no_drop_reasons(void);
void model__free(struct model *m);
/*
 * Call model__baseline right after the programs are attached, then
 * model__baseline_counts with the tracer's first snapshot: the kernel's
 * counters, each socket's sk_drops and udpdrop's own counts at (nearly)
 * one instant, so the reconciliation compares like with like even when
 * traffic is already flowing.
 */
int model__baseline(struct model *m);
void model__baseline_counts(struct model *m, struct htab *drops);
/*
 * Read the kernel counters of the netns in view. Called right before each
 * tracer read, as the baseline is, so both sides cover the same span.
 */
void model__read_counters(struct model *m);
/*
 * Read them again right after the tracer (the baseline's, then each
 * interval's): the reconciliation's uncertainty (model__counter_spread).
 */
void model__read_counters_after(struct model *m, bool baseline);
/*
 * How far counter `id` of nc moved while the maps were read, at the
 * baseline and now together: the kernel's side is exact to within it.
 */
uint64_t model__counter_spread(const struct netns_counters *nc, int id);
/* A cause's datagrams in one netns since the baseline, shown or not. */
uint64_t model__netns_cause(struct model *m, uint32_t netns, enum cause c);
/* The same in the kernel's unit (ud_kernel_units: a GRO skb is one). */
uint64_t model__netns_cause_units(struct model *m, uint32_t netns, enum cause c);
/* Why the reconciliation cannot be exact now, or NULL. */
const char *model__reconcile_caveat(struct model *m);
/*
 * Deliveries, where the tracer counts them (tracer.rx). Optionally
 * model__baseline_rx with the snapshot read beside the baseline's drops
 * (counts then run from there, as sk_drops_since_start does; else from
 * the program's attach). Then each interval model__update_rx with the
 * snapshot read beside the drops (tracer__read_rx), before model__update,
 * which joins it into the socket rows (rx, rx_rate, queue_peak) and sets
 * have_rx; rx NULL: deliveries unknown (have_rx false).
 */
int model__baseline_rx(struct model *m, const struct htab *rx);
int model__update_rx(struct model *m, const struct htab *rx);
/* Join a tracer snapshot (ud_key -> ud_val) into rows; now in ns. */
int model__update(struct model *m, struct htab *drops,
		  const struct ud_val *overflow, const uint64_t *stats,
		  uint64_t now);
enum cause model__cause(struct model *m, uint32_t reason, uint32_t flags);
/*
 * The drop windows the tracer took (tracer__windows): each to its socket's
 * row and cause, summed over CPUs, and those before `before` folded
 * (windows.h; m->win.folded lists them until the next call).
 */
int model__update_windows(struct model *m, const struct tracer_win *w, size_t n,
			  uint32_t before);
/* A socket row's drop windows of one cause (NULL: none). */
const struct win_agg *model__windows(const struct model *m, const struct row *r, enum cause c);
/*
 * How a socketless bucket's counts (k, v: as last passed to model__update)
 * split between the sockets its flow matched over time (cookie 0: none
 * matched then): the rows' own split, so that a recording can carry it.
 * Returns the number of parts (0 if the flow was never attributed).
 */
struct flow_part {
	uint64_t cookie; /* the socket's (UD_RX_INODE | inode if it had none) */
	uint32_t netns;
	struct ud_val val;
};
int model__flow_parts(struct model *m, const struct ud_key *k,
		      const struct ud_val *v, struct flow_part *out, int max);
/*
 * Flows whose attribution is nearly out of room (FLOW_SEGS sockets in
 * turn): up to max of their keys into out (tracer__split_flow them, then
 * model__flow_restart). Returns how many.
 */
int model__flows_to_split(struct model *m, struct ud_key *out, int max);
/* The flow's counts were split into its sockets': attribute it afresh. */
void model__flow_restart(struct model *m, const struct ud_key *k);
/*
 * Sockets to fold (tracer__fold): closed, quiet for MODEL_FOLD_AFTER_NS,
 * into ids (socket identity -> uint32_t netns; a socket first counted by
 * inode has that identity too) and the flows that went to them alone into
 * flows (struct ud_key -> struct tracer_fold_flow). Their rows go once
 * no count names them. 0 or -ENOMEM.
 */
#define MODEL_FOLD_AFTER_NS (120 * 1000000000ull) /* UDPDROP_FOLD_AFTER_S overrides */
/*
 * ... and, while more closed sockets than MODEL_CLOSED_ROWS_MAX keep rows
 * of their own (churn: 200 sockets a second is 24,000 in 120 s), the
 * longest quiet of them too, once quiet MODEL_FOLD_QUIET_MIN_NS (their
 * closing queues are long purged then), so memory and the summary stay
 * bounded at any rate. UDPDROP_CLOSED_ROWS_MAX overrides (tests).
 */
#define MODEL_CLOSED_ROWS_MAX 512
#define MODEL_FOLD_QUIET_MIN_NS (2 * 1000000000ull)
int model__foldable(struct model *m, uint64_t now, struct htab *ids,
		    struct htab *flows);
/*
 * A live socket bound to (netns, port, proto) all the same, the latest
 * seen, or NULL: what a no_socket flow to that port found there (connected
 * to another peer, bound to another address).
 */
const struct sock_info *model__port_holder(struct model *m, uint32_t netns,
					   uint16_t port, uint8_t proto);
/*
 * The socket rows in view of r's process (its first pid) on r's port in
 * its netns, r among them: REUSEPORT threads, an IPv4 and an IPv6 socket,
 * which one setting of the application sizes (a server's receive
 * buffer). *out points into the model's index, valid until the next
 * update. Returns how many (0: r has no owner or port known).
 */
int model__owner_port_rows(struct model *m, const struct row *r, struct row *const **out);
/*
 * A key's netns: its own, or for one the program could not place
 * (UD_KEY_NETNS_ADDR, netns 0) the netns in view its destination address
 * is local to: --netns's if local there, else the one netns that has it;
 * 0 where none or several do (or, under --netns, another netns's).
 */
uint32_t model__key_netns(struct model *m, const struct ud_key *k);
/* Do more closed sockets than closed_rows_max have rows of their own? */
bool model__closed_over(const struct model *m);
/*
 * Is a local port (netns, proto) known to more than one socket: a
 * REUSEPORT group, connected sockets on one port, a port bound again and
 * again? From the sockets seen on ports (by_port: dumps' and the
 * deliveries' sockets, a socket's inode and cookie joined). The purge of a closing socket's queue
 * names only its flow, which cannot tell such sockets apart.
 */
bool model__port_shared(struct model *m);
/* The summary's order: most drops first (not the last interval's rate). */
void model__sort_by_total(struct model *m);
/*
 * Add the sockets the --pid process (pid_tree: its tree) holds now to
 * those it held (model__update does it too): a caller that must not miss
 * a short-lived socket between updates calls it more often. Returns how
 * many sockets were new.
 */
int model__refresh_pid_inodes(struct model *m);
/*
 * A socket another dump than the model's found (lifetimes): learn its
 * cookie for its inode, so drops counted under either join in one row.
 */
void model__learn_socket(struct model *m, struct sock_info *si, uint64_t now);
const char *model__reason_name(struct model *m, uint32_t reason, char *buf,
			       int len);
/* The pod of a socket row's owner (model.pods), or NULL. */
struct model_pod {
	int pid;           /* the owner it was looked up for */
	uint32_t netns;    /* the row's (to find it) */
	bool found;
	bool none;         /* the owner is in no pod: not asked again */
	uint64_t at_ns;
	struct pod_names names;
};
const struct pod_names *model__pod(const struct model *m, const struct row *r);
/* Has netns an `ip netns` name? */
bool model__netns_named(struct model *m, uint32_t netns);
/* The netns name if it has one (made printable), else its inode as text; in buf. */
const char *model__netns_label(struct model *m, uint32_t netns, char *buf,
			       int len);

#endif
