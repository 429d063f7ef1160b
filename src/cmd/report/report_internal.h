/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Private to report's own files (report_load.c, report_rows.c,
 * report_timeline.c, report_format.c, report_text.c, report_advice.c,
 * report_json.c): the types, macros and functions they share. Nothing
 * else includes it; report_model.h is report's API. The functions are
 * rp_-prefixed: the program links every command's objects together.
 *
 * Between them, a trace is read into memory, then joined and printed.
 * Causes come from the file's own REASONS table through cause__classify(),
 * never from this machine's BTF; netns are printed as inodes, times as UTC
 * from META: the output depends only on the file.
 */
#ifndef UD_REPORT_INTERNAL_H
#define UD_REPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "advice.h"
#include "causes.h"
#include "pods.h"
#include "rows.h"
#include "report_model.h"

/* ---- report_load.c: loading, keyed indexes, the file's tables ---- */

/* Out of memory in a batch tool: these abort (nothing to save). */
char *rp_xstrdup(const char *s);
void *rp_xrealloc(void *p, size_t n, size_t size);
/* Every table keyed by the file's data goes through these (report_load.c
 * says why: hash flooding). */
void rp_xhtab_init(struct htab *h, size_t key_size, size_t val_size);
void *rp_xupsert(struct htab *h, const void *key, int *created);
void *rp_xfind(const struct htab *h, const void *key);
void *rp_grow_arr(void *p, uint32_t n, size_t size);
uint64_t rp_kx_id(uint64_t id);

/*
 * A name's index key: its bytes hashed as a polynomial mod 2^61 - 1 at a
 * secret point (two names of up to L bytes collide with probability under
 * L / 2^61, whatever the file holds), and which of the names with that
 * hash it is: 0, then 1, ... (a chain that a file cannot make long).
 */
struct name_key {
	uint64_t hash, nth;
};

int64_t rp_meta_find(const struct report *rp, const char *key, struct name_key *nk);
uint32_t *rp_table_slot(struct report *rp, const struct trace_record *rec, struct htab *idx,
			uint64_t key, uint32_t *n, uint32_t limit, const char *what,
			int *created);

/* ---- report_rows.c: one row per socket ---- */

uint64_t rp_report_row(const struct report *rp, uint64_t id);
void rp_merge_sockets(struct report *rp, const struct trace_sockets *ts);
void rp_add_queues(struct report *rp, const struct trace_sockets *ts);
bool rp_add_ifaces(struct report *rp, const struct trace_record *rec);
void rp_add_mib(struct report *rp, const struct trace_mib *tm);

/*
 * The burst a socket's receive buffer must absorb, from per-drop EVENTs:
 * the most datagrams it dropped (per cause) in any BURST_WINDOW_NS. The
 * window is 100 ms: long enough to hold what arrives while a reader is
 * off its CPU (a scheduler delay, a page-fault or GC pause: milliseconds
 * to tens of them), short enough not to sum a steady overload into one
 * "burst" the way a snapshot interval (record -i, often seconds) does: a
 * buffer sized for it covers a stall, and a reader slower than its sender
 * for longer than that needs pacing, not memory (advice.c says so).
 *
 * Stream-friendly, in fixed memory per (socket, cause) whatever the event
 * rate: the datagrams are counted in BURST_SLOT_NS slots on a ring of
 * BURST_RING, and the windows are BURST_SLOTS consecutive slots: 100 ms
 * on a 10 ms grid, so the result lies between the most in any 90 ms and
 * the most in any 110 ms. EVENTs come in ring-buffer order: per CPU in
 * time order, across CPUs slightly out of order (an event's time is taken
 * before its ring space is). The ring keeps BURST_RING - BURST_SLOTS
 * slots (220 ms) behind the newest event for late ones; one later still
 * is counted in the oldest slot kept (never lost, placed late).
 */
#define BURST_SLOT_NS 10000000ull
#define BURST_SLOTS 10
#define BURST_WINDOW_NS (BURST_SLOT_NS * BURST_SLOTS)
#define BURST_RING 32
#define BURST_SLOT_MAX (UINT64_C(1) << 56) /* so ten add up without wrapping */

struct ev_key {
	uint64_t cookie;  /* 0: drops with no socket */
	uint32_t cause, by_inode;
};

struct ev_burst {
	bool started;
	uint64_t head;           /* the newest slot (time_ns / BURST_SLOT_NS) */
	uint64_t best;           /* the most datagrams in one window */
	uint64_t datagrams;      /* all of this key's EVENTs' datagrams */
	uint64_t n[BURST_RING];  /* slot x at n[x % BURST_RING], x in (head - RING, head] */
	/* the drop shape: aligned BURST_WINDOW_NS windows from the first
	 * drop's to the last's, and how many held drops (a late event in an
	 * earlier window than the newest is not counted again) */
	uint64_t first_win, last_win, wins_dropping;
};

uint64_t rp_add_sat(uint64_t a, uint64_t b);
void rp_ev_burst_join(struct ev_burst *into, const struct ev_burst *b);
void rp_add_event(struct report *rp, const struct trace_event *e);
bool rp_add_windows(struct report *rp, const struct trace_windows *ws);

/* ---- report_rows.c: joining ---- */

/* A socket's row and a flow's (agg_flow) are rows.h's, summed by its rule
 * (rp_build), with what the trace knows of the socket beside it. */
struct agg_sock {
	struct row row;        /* its counts, causes, reasons, locations (rows.h) */
	uint64_t cookie;       /* or its inode (by_inode): its row identity, shown */
	bool by_inode;
	uint32_t netns;        /* the socket's if known, else its counts' */
	const struct trace_socket *sock;
};

struct agg_flow {
	struct row row;  /* its counts, reasons and locations; its key the flow */
	int cause;
	bool overflow;   /* the drop table was full: only the reason is known */
	uint32_t netns;
	uint8_t family, proto;
	uint8_t saddr[16], daddr[16];
	uint16_t dport;
};

struct agg_recon {
	uint32_t netns;
	int cause;
	char counters[160];    /* the names summed, "+"-joined */
	bool have_kernel;
	uint64_t kernel, udpdrop; /* udpdrop: in the kernel's unit (ud_kernel_units) */
	uint64_t udpdrop_datagrams;
};

struct agg {
	struct agg_sock *socks;
	int nsocks;
	struct agg_flow *flows;
	int nflows;
	uint64_t drops, skbs;
	uint64_t cause[CAUSE_MAX], cause_skbs[CAUSE_MAX];
	struct agg_recon *recon;
	int nrecon;
};

/* A socket's (reason, cause) rows in rp_build(), and --by reason's rows
 * (sock 0): by socket index (before the sort) and the row's key, to the
 * row's index. */
struct sock_reason_key {
	uint64_t sock;
	uint32_t reason;
	int32_t cause;
};

const char *rp_reason_name(const struct report *rp, uint32_t reason);
const char *rp_symbol_name(const struct report *rp, uint64_t addr);
int rp_key_cause(const struct report *rp, const struct ud_key *k);
const char *rp_meta_get(const struct report *rp, const char *key);
void rp_writer_cause_name(const struct report *rp, unsigned c, char *buf,
			  size_t len);
void rp_fmt_events(const struct report *rp, struct strbuf *out);
int rp_cmp_reason(const void *a, const void *b);
int rp_cmp_loc(const void *a, const void *b);
bool rp_mib_value(const struct report_mib *m, enum mib_id id, uint64_t *v);
const struct report_mib *rp_mib_of(const struct report *rp, uint32_t netns,
				   const struct report_mib **last);
void rp_build(const struct report *rp, struct agg *a);
void rp_agg_free(struct agg *a);

/* ---- report_timeline.c: timeline and --by ---- */

/* One interval between snapshots (or several merged). */
struct tl_row {
	uint64_t start_ns, len_ns; /* start: from the first snapshot */
	uint64_t drops;
	uint64_t cause[CAUSE_MAX];
};

/* A contributor to a cause: a socket or a flow with no socket. */
struct contrib {
	bool flow;
	int idx;       /* in agg's socks or flows */
	uint64_t drops;
};

/* The contributors --by cause names for each cause (rp_cause_contribs). */
#define BY_CAUSE_TOP 3

int rp_timeline(const struct report *rp, struct tl_row **rows);
int rp_timeline_merge(const struct tl_row *rows, int n, int max, struct tl_row **merged);
double rp_tl_rate(const struct tl_row *r);
int rp_tl_top_cause(const struct tl_row *r);
int rp_tl_decimals(const struct tl_row *rows, int n);
void rp_fmt_rate(char *buf, size_t len, double r);
int rp_cause_contribs(const struct agg *a, int c, struct contrib *top);
void rp_fmt_contrib(char *buf, size_t len, const struct agg *a, const struct contrib *k);
int rp_by_reason(const struct report *rp, struct row_reason **out);
int rp_by_location(const struct report *rp, struct row_loc **out);

/* ---- report_format.c: shared formatting ---- */

double rp_duration_s(const struct report *rp);
void rp_fmt_start(char *buf, size_t len, const char *v);
void rp_fmt_local(char *buf, size_t len, const struct agg_sock *s);
void rp_fmt_remote(char *buf, size_t len, const struct agg_sock *s);
const char *rp_kernel_owner(const struct report *rp, const struct agg_sock *s);
/* The pod of the socket's owner as record found it (META k8s_pod.COOKIE). */
bool rp_pod(const struct report *rp, const struct agg_sock *s, struct pod_names *out);
void rp_fmt_owner(const struct report *rp, char *buf, size_t len, const struct agg_sock *s);
void rp_fmt_flow(char *buf, size_t len, const struct agg_flow *f);
void rp_fmt_reason(char *buf, size_t len, const struct report *rp, uint32_t reason);
void rp_fmt_loc(char *buf, size_t len, const struct report *rp, uint64_t addr);
const char *rp_netns_name(const struct report *rp, uint32_t ns);
void rp_fmt_netns(const struct report *rp, char *buf, size_t len, uint32_t ns);
int64_t rp_recon_diff(const struct agg_recon *r);
uint64_t rp_recon_gap(const struct agg_recon *r);

/* ---- report_text.c ---- */

bool rp_report_sites(const struct report *rp);
uint64_t rp_meta_missed(const struct report *rp);
void rp_print_text(const struct report *rp, const struct agg *a, uint64_t top,
		   enum report_by by, struct strbuf *out);

/* ---- report_advice.c ---- */

/* One advice header's findings: a socket shown (or, sock -1, the drops
 * with no socket) and a cause; the text and the JSON print them. */
struct adv_item {
	int sock;  /* index in agg's socks; -1: drops with no socket */
	int cause;
	uint64_t drops;
	char who[320];
	int nf;
	struct advice_finding f[ADVICE_MAX];
};

int rp_rc_cause(const struct report *rp, uint32_t reason, uint32_t flags);
int rp_advice_items(const struct report *rp, const struct agg *a, uint64_t top,
		    struct adv_item **out);
void rp_text_advice(const struct report *rp, const struct agg *a, uint64_t top,
		    struct strbuf *out);

#endif
