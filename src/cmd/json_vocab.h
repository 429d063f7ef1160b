/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One JSON vocabulary: the emitter of each object more than one command
 * prints (a socket row, an unattributed flow, a cause, a kernel reason, a
 * drop location, the totals, a reconciliation line), so top, report and
 * doctor write the same keys with the same types for the same thing
 * (docs/json.md; tests/integration/json.sh checks it). The advice object
 * has its own, in advice.h (advice__json_begin/end).
 *
 * Every command fills the same struct from what it knows; what it cannot
 * know is null, never a guess (report has no live sk_drops; a recording's
 * counters have no read spread). The values are the caller's: these
 * functions only write them.
 *
 * Three keys had a different shape in top and in report before this
 * vocabulary, and scripts read them: they keep each command's old shape
 * (top: `reasons` {NAME: drops}, `locations` {"sym+off": skb events},
 * `totals.causes` {cause: drops}; report: the lists of objects, and
 * `totals.causes` {cause: {drops, skb_events}}). The same facts are in
 * `reason_list`, `location_list` and `cause_list`, one shape everywhere.
 * Pure: no I/O, no live system (report and the fuzz target link it).
 */
#ifndef UDPDROP_JSON_VOCAB_H
#define UDPDROP_JSON_VOCAB_H

#include <stdbool.h>
#include <stdint.h>
#include "causes.h"
#include "json.h"
#include "pods.h"
#include "mib.h"

/* A socket row (top's sockets[], report's sockets[]). NULL strings and
 * have_* false write null. */
struct vocab_socket {
	const char *proto, *family;  /* "udp"/"udplite", "inet"/"inet6" */
	const char *local, *remote;  /* "addr:port"; remote "*" unconnected */
	uint32_t netns;
	const char *netns_name;
	bool have_cookie, have_inode;
	uint64_t cookie;
	uint32_t inode;
	int npids;                   /* processes holding it (0: none known) */
	const int32_t *pids;         /* npids of them */
	const char *comm;            /* the first holder's, NULL with none */
	const char *kernel_owner;    /* a kernel device's socket (kowner.h) */
	const struct pod_names *pod; /* its owner's Kubernetes pod (pods.h); NULL: none */
	int alive;                   /* 1, 0, -1 unknown */
	const char *const *attribution; /* how it was found; NULL: unknown */
	int nattribution;
	bool have_mem;               /* rcvbuf and queued */
	uint64_t rcvbuf, queued;
	bool have_sk_drops;
	uint64_t sk_drops, sk_drops_since_start;
	bool sk_drops_stale;
	uint64_t drops, skbs, bytes;
	/* of drops: those that came in GSO/GRO skbs, and those skbs (rows.h) */
	uint64_t gro_datagrams, gro_skbs;
	double drops_per_s;
	enum cause cause;            /* the main one; CAUSE_MAX: none (no drops) */
	const uint64_t *cause_drops, *cause_skbs; /* [CAUSE_MAX] */
	bool have_rx;                /* rx and rx_per_s */
	uint64_t rx;
	double rx_per_s;
	bool have_queue_peak;
	uint64_t queue_peak;
};

/*
 * Opens the object and writes its keys up to `causes` and `cause_list`;
 * the caller writes the view's `reasons` and `locations` (their old
 * shapes), then vocab__reason_list/vocab__location_list, then
 * vocab__socket_end, then what only it has (top's `advice`) and closes
 * the object.
 */
void vocab__socket_begin(struct json *j, const struct vocab_socket *s);
/* k8s_namespace, k8s_pod, k8s_container, k8s_pod_uid (each null where
 * unknown): the socket's and a finding's. */
void vocab__pod(struct json *j, const struct pod_names *p);
/* rx, rx_per_s, queue_peak. */
void vocab__socket_end(struct json *j, const struct vocab_socket *s);

/* Drops no socket is known for (top's and report's unattributed[]). */
struct vocab_flow {
	enum cause cause;
	uint32_t netns;
	const char *netns_name;
	const char *proto, *family;  /* NULL: unknown */
	const char *saddr, *daddr;   /* NULL: unknown (a fragment, overflow) */
	uint16_t dport;
	const char *flow;            /* "src -> dst:port" */
	const char *why;
	uint64_t drops, skbs;
	uint64_t gro_datagrams, gro_skbs; /* as vocab_socket's */
	double drops_per_s;
	const uint64_t *cause_drops, *cause_skbs; /* [CAUSE_MAX], or NULL: all the cause's */
};
/* Opens the object and writes its keys through cause_list; the caller
 * goes on as with a socket (reasons, locations, the lists) and closes it. */
void vocab__flow_begin(struct json *j, const struct vocab_flow *f);

/* "cause_list": [{cause, drops, skb_events}], causes with counts only. */
void vocab__cause_list(struct json *j, const uint64_t *drops, const uint64_t *skbs);

/* One kernel reason: {reason, name, cause, drops, skb_events}. */
void vocab__reason(struct json *j, uint32_t reason, const char *name,
		   enum cause cause, uint64_t drops, uint64_t skbs);
/* One drop location: {addr, symbol, drops, skb_events} ("0x..."). */
void vocab__location(struct json *j, uint64_t addr, const char *symbol,
		     uint64_t drops, uint64_t skbs);

/* The totals' keys every view has (drops, attributed, skb_events,
 * missed, cause_list); the object stays open for the view's own keys
 * and its old `causes`. */
struct vocab_totals {
	uint64_t drops, attributed, skbs, missed;
	double drops_per_s;
	const uint64_t *cause_drops, *cause_skbs; /* [CAUSE_MAX] */
};
void vocab__totals_begin(struct json *j, const struct vocab_totals *t);

/* A reconciliation line: the kernel's counters against udpdrop's count. */
struct vocab_reconcile {
	uint32_t netns;
	const char *netns_name;
	enum cause cause;
	const char *counters;  /* the counters summed, "+"-joined */
	bool have_kernel;      /* false: the kernel has no such counter here */
	uint64_t kernel, udpdrop;
	/* udpdrop's datagrams; udpdrop is in the kernel's unit, skbs, which
	 * differs for GSO/GRO skbs alone (rows.h, ud_kernel_units) */
	uint64_t udpdrop_datagrams;
	bool have_spread;      /* false: how far the counters moved is unknown */
	uint64_t spread;       /* kernel is exact to within it */
};
/* {netns, netns_name, cause, counter (the first), counters [...], kernel,
 * udpdrop, udpdrop_datagrams, kernel_spread, match, status ("match",
 * "differ", "no_counter"), diff (udpdrop - kernel)}. */
void vocab__reconcile(struct json *j, const struct vocab_reconcile *r);
/*
 * One netns's entry of `counters`: "NETNS": {name as nstat prints it:
 * delta from base to cur}, for each counter both readings have.
 */
void vocab__mib_deltas(struct json *j, uint32_t netns, const struct mib *base,
		       const struct mib *cur);

/* Does a line agree: within the spread, where one is known. */
bool vocab__reconcile_match(const struct vocab_reconcile *r);

#endif
