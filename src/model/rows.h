/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The rows every view prints, built from counted (struct ud_key, struct
 * ud_val) pairs: one row per socket for its whole life (the caller gives
 * the socket's row identity, sockid.h's join of inode and cookie), one
 * per socketless flow and cause. top's model__update and report's replay
 * of a trace's COUNTS both add their counts here, so a socket's counts,
 * causes, reasons and locations are summed by one rule in every view.
 *
 * Pure: no kernel, no files; the table is a struct htab of struct row_key
 * -> struct row, and a row owns its reason and location lists (free a
 * row with row__free, the table with rows__free).
 */
#ifndef UD_ROWS_H
#define UD_ROWS_H

#include <stdbool.h>
#include <stdint.h>
#include "causes.h"
#include "htab.h"
#include "socktab.h"
#include "udpdrop.h"

enum row_kind { ROW_SOCKET = 1, ROW_FLOW = 2 };

/* row flags beside the UD_KEY_* ones: matched to the socket by its flow */
#define ROW_VIA_FLOW (1u << 31)

struct row_key {
	uint64_t cookie;      /* ROW_SOCKET: its row identity (sockid.h) */
	uint32_t netns;
	uint8_t kind;
	uint8_t family, proto, cause; /* cause: ROW_FLOW only */
	uint8_t saddr[16], daddr[16]; /* ROW_FLOW only */
	uint16_t dport;
	/* ROW_FLOW: the counts of a recording's overflow bucket (UD_KEY_OVERFLOW:
	 * the drop table was full, only the reason is known) */
	uint8_t overflow;
	uint8_t pad;
	uint32_t pad2;
};

/* A kernel reason's counts under one cause (a reason can mean two: a
 * closing socket's NOT_SPECIFIED is socket_close, another's other). */
struct row_reason {
	uint32_t reason;
	enum cause cause;
	uint64_t drops, skbs;
};

struct row_loc {
	uint64_t addr;
	uint64_t drops, skbs;
};

struct row {
	struct row_key key;
	/* cumulative since start */
	uint64_t drops, skbs, bytes;
	uint64_t cause[CAUSE_MAX];       /* datagrams */
	uint64_t cause_skbs[CAUSE_MAX];  /* skb events */
	uint64_t cause_bytes[CAUSE_MAX]; /* skb->len summed */
	/* in the kernel's unit (ud_kernel_units): what its counters count */
	uint64_t cause_units[CAUSE_MAX];
	/* GSO/GRO skbs (UD_KEY_GRO) and the datagrams they carried, all causes */
	uint64_t gro_skbs, gro_dgrams;
	/* whole datagrams only (no fragment, no frag_list member freed with its
	 * parent, whose bytes are its parent's): their average size */
	uint64_t size_bytes[CAUSE_MAX], size_dgrams[CAUSE_MAX];
	/* every (reason, cause) and every location counted, in first-seen
	 * order; the row owns them (grown as needed, kept across row__reset) */
	struct row_reason *reasons;
	int nreasons, reasons_cap;
	struct row_loc *locs;
	int nlocs, locs_cap;
	uint32_t flags;       /* UD_KEY_* seen */
	/* the previous interval's cumulative drops, for rates */
	uint64_t prev_drops, prev_skbs;
	double rate;          /* drops/s over the last interval */
	bool moved;           /* drops or skb events came in the last interval */
	uint64_t moved_ns;    /* when they last did (the model's clock) */
	bool dirty;           /* has counts this snapshot */
	/* ROW_SOCKET: what the socket table says (last seen) */
	bool have_sock;
	bool sock_alive;      /* in the latest socket dump */
	struct sock_info sock;
	bool owned_by_pid;    /* the --pid filter's process (or pid_tree, one of its
	                       * descendants) holds it or held it */
	/* ROW_SOCKET, when the tracer counts deliveries (model.have_rx) */
	uint64_t rx;          /* datagrams queued to the socket since start */
	double rx_rate;       /* ... per second over the last interval */
	uint32_t queue_peak;  /* most bytes queued seen at an enqueue, since start */
	/*
	 * ROW_SOCKET: the port, family and protocol of a closing queue the
	 * kernel counted as this socket's (UD_KEY_SOCK | UD_KEY_CLOSE): what
	 * is known of a socket that closed before any dump saw it
	 */
	uint16_t close_port;
	uint8_t close_family, close_proto;
};

/*
 * A bucket's count in the kernel's own unit, as UdpRcvbufErrors, sk_drops
 * and UdpNoPorts count it: one per skb freed (a GSO or GRO skb of n
 * datagrams is one; its frag_list members none), where udpdrop counts
 * datagrams (n). The two differ only for UD_KEY_GRO buckets.
 */
static inline uint64_t ud_kernel_units(const struct ud_key *k, const struct ud_val *v)
{
	if (!(k->flags & UD_KEY_GRO))
		return v->datagrams; /* a UD_KEY_REASM_UNIT bucket's too: its units */
	return k->flags & UD_KEY_CHILD ? 0 : v->skbs;
}

/* The datagrams a bucket lost: its datagrams, but for a UD_KEY_REASM_UNIT
 * bucket's (the kernel's units of a loss counted elsewhere). */
static inline uint64_t ud_drops(const struct ud_key *k, const struct ud_val *v)
{
	return k->flags & UD_KEY_REASM_UNIT ? 0 : v->datagrams;
}

/*
 * The row a count goes to: the socket's (row_id, its sockid.h identity,
 * non-zero) in netns, or else the flow's (netns, family, protocol,
 * addresses, port, cause; and whether it is the overflow bucket).
 */
void rows__key(struct row_key *rk, const struct ud_key *k, enum cause c,
	       uint64_t row_id, uint32_t netns);
int rows__init(struct htab *rows);
/* The row of rk, made empty if new; NULL: out of memory. */
struct row *rows__get(struct htab *rows, const struct row_key *rk);
/* Add one count of cause c to its row (rows__key); 0 or -ENOMEM. */
int rows__add(struct htab *rows, const struct ud_key *k, const struct ud_val *v,
	      enum cause c, uint64_t row_id, uint32_t netns, struct row **out);
/* Add one count to r itself; 0 or -ENOMEM. */
int row__add(struct row *r, const struct ud_key *k, const struct ud_val *v,
	     enum cause c);
/* Zero r's counts (a snapshot is cumulative: rows are rebuilt from each). */
void row__reset(struct row *r);
void row__free(struct row *r);
/* Every row's lists, then the table. */
void rows__free(struct htab *rows);
/* Most drops first, then skb events; the key breaks ties (stable). */
int row__cmp_total(const struct row *x, const struct row *y);
/* The row's main cause: the most datagrams, then the most skb events. */
enum cause row__main_cause(const struct row *r);
/*
 * The average size of a datagram of cause c (skb->len of whole datagrams
 * only, see size_bytes): the figure every view sizes buffers by, so one
 * socket gets one size in top, doctor and report. False where none is
 * known (no whole datagram, or a reassembly cause: a fragment's size says
 * nothing of its datagram's).
 */
bool row__avg_size(const struct row *r, enum cause c, double *out);
/* "10.0.0.1 -> 10.0.0.2:5001" for a socketless row */
void row__flow(const struct row *r, char *buf, int len);
/* Why a socketless row has no socket, in a few words. */
const char *row__flow_why(const struct row *r);
/* Is the row's reason i also listed under another cause (a closing
 * socket's NOT_SPECIFIED is socket_close, another's other)? The text
 * views then name the cause beside it. */
bool row__reason_shared(const struct row *r, int i);

#endif
