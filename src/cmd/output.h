/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Plain-text and JSON printers of the model: one interval, or the summary. */
#ifndef UD_OUTPUT_H
#define UD_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "advice.h"
#include "htab.h"
#include "model.h"
#include "tracer.h"
#include "util.h"

struct output_ctx {
	const char *attach;    /* the tracer variant in use */
	bool final;            /* the exit summary */
	/* the summary's advice: each row's worst interval (output__bursts_*),
	 * NULL if not tracked (the advice then has no burst to size for) */
	const struct htab *bursts;
	/* how full the kernel's tables are (JSON "tables"), NULL: not shown */
	const struct tracer_fill *fill;
	/* the summary's JSON "stopped": "count", "signal", "netns_gone" (NULL: null) */
	const char *stopped;
};

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
int output__bursts_init(struct htab *h);
void output__bursts_record(struct htab *h, struct model *m, uint64_t tick);

/*
 * What the advice needs from the system, read live for one netns: its
 * sysctls (host-wide ones from udpdrop's netns when the netns has none of
 * its own) and the interface its traffic uses when that is unambiguous
 * (lo for a loopback address, else the netns's only other interface), as
 * report picks it from a recording.
 */
struct live_env {
	uint32_t netns;
	bool loopback;
	uint64_t read_ns;               /* when it was read (monotonic) */
	struct advice_u64 rmem_default, rmem_max, wmem_default, wmem_max;
	struct advice_u64 udp_mem[3], page_size, netdev_max_backlog;
	struct advice_u64 ipfrag_time, ipfrag_high_thresh, ipfrag_max_dist;
	char ifname[16];                /* "": not known */
	struct advice_u64 mtu, txqueuelen;
	struct advice_where where;      /* each sysctl's scope (n 0: not known) */
};
void output__read_env(struct model *m, uint32_t netns, bool loopback, struct live_env *e);
/* Its parts, for a caller that has read the sysctls or the interfaces
 * itself (doctor): the sysctls (and the page size) into e; the interface
 * into e (its name, MTU when not 0, txqueuelen). */
struct netcfg_sysctls;
struct trace_iface;
void output__env_sysctls(struct live_env *e, const struct netcfg_sysctls *sv);
void output__env_iface(struct live_env *e, const struct trace_iface *f);
/* Does the row's traffic use loopback (its local address is)? */
bool output__row_loopback(const struct row *r);
/* Is the address (AF_INET or AF_INET6) a loopback one? */
bool output__addr_loopback(int family, const uint8_t *a);
/*
 * The advice input for one cause of a row of the live model (pure): the
 * drops, the arrivals (delivered + dropped over the last interval, when
 * deliveries are counted and it dropped then), the socket's buffer and
 * queue peak, the burst (b, or NULL), the kernel counters' deltas of its
 * netns, the sysctls and interface (e, or NULL: unknown). The truesize
 * stays unknown (the advice estimates it and says so): the model has the
 * queue's peak bytes but not how many datagrams it held then. in->who
 * points into who.
 */
void output__advice_input(struct advice_input *in, struct model *m, const struct row *r,
			  enum cause c, const struct live_burst *b, const struct live_env *e,
			  char *who, size_t wholen);
/* Its parts: the kernel counters' deltas base -> cur (each IPv4 + IPv6
 * pair known when cur has either), and e's sysctls and interface. */
void output__advice_mibs(struct advice_input *in, const struct mib *base, const struct mib *cur);
void output__env_apply(struct advice_input *in, const struct live_env *e);

void output__plain(struct model *m, const struct output_ctx *o, struct strbuf *sb);
void output__json(struct model *m, const struct output_ctx *o, struct strbuf *sb);

/* "udp", "udplite", or the number */
const char *proto_name(int proto, char *buf, int len);
/* "10.0.0.1 -> 10.0.0.2:5001" for a socketless row */
void row_flow(const struct row *r, char *buf, int len);
/* Why a socketless row has no socket, in a few words. */
const char *row_flow_why(const struct row *r);

/* One line of the reconciliation: a kernel counter beside udpdrop's count. */
struct reconcile_line {
	uint32_t netns;
	enum cause cause;
	enum mib_id counter;   /* the first of the counters summed */
	uint64_t kernel, ours; /* both since udpdrop started (or first saw the netns) */
	/*
	 * How far the kernel's counters moved while udpdrop read its maps
	 * (the baseline's and the latest reading): kernel is exact to within
	 * it, so a difference no larger is no disagreement.
	 */
	uint64_t spread;
};
/* "match", "match within +-N (...)" or "differ by N[ (+-M ...)]". */
void output__reconcile_verdict(const struct reconcile_line *l, char *buf, size_t len);
/* Does the line agree, to within the spread? */
bool output__reconcile_ok(const struct reconcile_line *l);

/*
 * The reconciliation for the netns in view: up to max lines, in netns
 * then cause order, only where either side counted something.
 */
int output__reconcile(struct model *m, struct reconcile_line *out, int max);

#endif
