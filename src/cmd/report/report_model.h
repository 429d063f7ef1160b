/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * udpdrop report's core, pure: read a trace (docs/trace-format.md) into
 * memory, then print it as text or JSON into a strbuf. No BPF, no BTF, no
 * root, nothing from the machine it runs on: the output depends only on
 * the file (and the options), so it can be compared byte for byte.
 */
#ifndef UD_REPORT_MODEL_H
#define UD_REPORT_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include "htab.h"
#include "mib.h"
#include "trace.h"
#include "util.h"
#include "windows.h"

#define REPORT_DEFAULT_TOP 20
/* The text timeline's most lines: more intervals are merged evenly. */
#define REPORT_TIMELINE_LINES 60
/* Its longest bar, in '#'. */
#define REPORT_BAR_MAX 50

/* --by: what the report's table is grouped by. */
enum report_by {
	REPORT_BY_SOCKET, /* the default: sockets, flows, totals, timeline, ... */
	REPORT_BY_CAUSE,
	REPORT_BY_REASON,
	REPORT_BY_LOCATION,
	REPORT_BY_SECOND,
	REPORT_BY_MAX,
};

struct report_opts {
	bool json;
	uint64_t top; /* socket rows shown; 0: REPORT_DEFAULT_TOP */
	enum report_by by;
};

/* "socket", "cause", ...; NULL out of range. */
const char *report__by_name(enum report_by by);
/* The --by value named s, or -1. */
int report__by_parse(const char *s);
/* "socket|cause|reason|location|second" */
#define REPORT_BY_VALUES "socket|cause|reason|location|second"

/* One (reason, key flags) pair's totals in a COUNTS snapshot: enough to
 * classify (the cause depends on both) without keeping every entry. */
struct report_rc {
	uint32_t reason, flags;
	uint64_t datagrams, skbs;
};

/* One socket's datagrams per (reason, flags) in a COUNTS snapshot. */
struct report_skrc {
	uint64_t cookie;       /* or inode, per UD_KEY_INODE in flags */
	uint32_t reason, flags;
	uint64_t datagrams;
};

/* Every COUNTS snapshot, summed per (reason, flags): the timeline; and
 * per socket: each socket's worst interval (the advice's burst). */
struct report_snap {
	uint64_t time_ns;
	uint32_t n;
	struct report_rc *v;
	uint32_t nsk;
	struct report_skrc *sk;
};

/* A socket's queue over every SOCKETS snapshot that listed it. */
struct report_queue {
	uint64_t cookie;
	uint32_t looks;
	uint32_t low, peak, last; /* bytes queued */
	/* its deliveries at each SOCKETS look that has them (minor 2), in
	 * time order: the advice's per-socket evidence */
	struct report_rx {
		uint64_t time_ns, delivered;
	} *rx;
	uint32_t nrx;
};

struct report_kv {
	char *key, *value;
};

/* A netns's MIB record: the counters this build knows (mib.h), by id. */
struct report_mib {
	uint32_t netns;
	uint64_t time_ns;
	struct mib c;
};

struct report_counts {
	bool have;
	uint64_t time_ns;
	uint32_t n;
	struct trace_count *v;
};

struct report {
	char *path;
	enum trace_status status;
	char message[256];
	uint64_t blocks, error_offset, records;
	bool opened;       /* the file could be opened at all */
	int open_err;      /* its errno, negative */
	/* what the file holds (the last of each snapshot) */
	uint32_t nmeta;
	struct report_kv *meta;
	uint32_t nreasons;
	struct trace_reason *reasons; /* names owned */
	uint32_t nsymbols;
	struct trace_symbol *symbols; /* names owned */
	struct report_counts first, last;
	uint64_t ncounts;  /* COUNTS records */
	struct report_snap *snaps; /* ncounts of them, in file order */
	bool have_sockets;
	/* every socket the file's SOCKETS named, one entry per row (sockid.h:
	 * a socket named first by inode, then by cookie, is one): the newest
	 * look at it, with the owner an earlier look found where the newest
	 * has none (the socket closed, its process left) */
	uint32_t nsockets;
	struct trace_socket *sockets;
	uint32_t nqueues;
	struct report_queue *queues;
	uint32_t nifaces;  /* the last IFACES per (netns, ifindex); names owned */
	struct trace_iface *ifaces;
	uint32_t nmibs;    /* netns with MIB records: first and last of each */
	struct report_mib *mib_first, *mib_last;
	bool have_end;
	uint64_t end_duration_ns, end_events;
	/* per-drop events: what was written, and what SHED says was shed,
	 * by the writer's cause numbers (META causes names them) */
	uint64_t events, event_datagrams, event_caps;
	uint64_t shed[TRACE_CAUSES_MAX];
	uint64_t shed_total;
	/* the load stopped at a table over its limit (trace.h): corrupt */
	bool hostile;
	/* internal: queues by cookie (uint32_t index into queues), and the
	 * per-(socket, cause) burst windows from EVENTs (report_rows.c) */
	struct htab queue_idx;
	struct htab ev_burst;
	/* the kernel's drop windows from WINDOWS (format 1.3), per (socket
	 * identity as written, keyed (kx_id), cause): top's and doctor's figures */
	struct windows win;
	bool have_windows;
	bool sockets_rx;   /* SOCKETS carry each socket's deliveries (minor 2) */
	int16_t wcause[TRACE_CAUSES_MAX]; /* writer's cause -> ours + 2 (0: not looked up) */
	/* sockets by row id (uint32_t index), and inode -> cookie as the
	 * SOCKETS named both (the join of sockid.h) */
	struct htab sock_idx, inode_cookie;
	/* the tables above by key, to their uint32_t index: META keys,
	 * reason values, symbol addresses, (netns, ifindex), MIB netns */
	struct htab meta_idx, reason_idx, symbol_idx, iface_idx, mib_idx;
};

/*
 * Read path to its end (or its error) into rp. Returns 0 when the file
 * was opened (rp->status says how it ended), a negative errno when it
 * could not be opened (message set).
 */
int report__load(struct report *rp, const char *path);
/* The same over a buffer (tests). */
int report__load_mem(struct report *rp, const char *name, const void *buf,
		     size_t len);
void report__free(struct report *rp);
/* Whether there is a report to print (a trace, with records read). */
bool report__printable(const struct report *rp);
/* The report, text or JSON per o, appended to out. */
void report__print(const struct report *rp, const struct report_opts *o,
		   struct strbuf *out);
/* One line for stderr about how the file ended, or NULL if it is complete. */
const char *report__problem(const struct report *rp, char *buf, size_t len);
/* The exit code for it: 0 complete or cut short (with records), 1 otherwise. */
int report__exit_code(const struct report *rp);
/* "complete", "cut", "corrupt", "not_trace", "newer", "io_error", "missing" */
const char *report__status_name(const struct report *rp);

#endif
