/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The live view's model: what `udpdrop top` shows, apart from how it is
 * drawn. Each refresh turns the aggregator's rows into display rows
 * (text and numbers per column), filters and sorts them, keeps the cursor
 * on the same socket, and remembers each row's recent drop rates for the
 * detail view's sparkline. No curses here: tui.c draws, tests check this.
 */
#ifndef UD_VIEW_H
#define UD_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "advice.h"
#include "advice_model.h"
#include "htab.h"
#include "model.h"

/* The socket table's columns, left to right. */
enum view_col {
	COL_PROTO,
	COL_LOCAL,
	COL_REMOTE,
	COL_NETNS,
	COL_OWNER,
	COL_RX_RATE,
	COL_DROP_RATE,
	COL_DROPS,
	COL_CAUSE,
	COL_RCVBUF,
	COL_QUEUE,
	COL_HINT,
	COL_MAX,
};

struct view_col_def {
	const char *name;   /* sort key for -s and the sort menu */
	const char *title;  /* header text */
	const char *help;   /* one line for --sort-key=help */
	int width;          /* natural width */
	int min_width;      /* a flexible column may shrink to this */
	bool right;         /* right-aligned (numbers) */
	bool desc;          /* sorts largest first by default */
	bool flex;          /* takes spare width */
	int keep;           /* when space runs out, lower goes first */
};

extern const struct view_col_def view_cols[COL_MAX];

/* -1 if no column has that name or title (case-insensitive). */
int view_col__from_name(const char *name);

/*
 * A row kind of the view's own: unconnected sockets bound to the same
 * address and port in one netns (SO_REUSEPORT, or SO_REUSEADDR for
 * multicast) shown as one service. Key: netns, family, proto, and the
 * local address and port in daddr/dport.
 */
#define VIEW_ROW_GROUP 3

/* One display row (a socket, a group of them, or a socketless flow). */
struct view_row {
	/*
	 * A copy, not a pointer into the model: a frozen display keeps its
	 * rows while the model moves on. The detail view finds the live row
	 * by this key.
	 */
	struct row_key key;
	char text[COL_MAX][64];  /* what each column prints */
	/* numbers behind the text, for sorting and the detail view */
	double rx_rate, drop_rate;
	bool have_rx;
	uint64_t drops;
	uint32_t rcvbuf;
	int queue_pct, queue_peak_pct; /* -1: unknown */
	int pid;                 /* 0: none */
	int npids, pids[SOCK_MAX_PIDS];
	char comm[16];
	uint16_t port;           /* local port (a flow's destination port) */
	enum cause cause;        /* main cause; CAUSE_MAX if none */
	uint32_t cause_mask;     /* every cause it has drops of */
	int members;             /* VIEW_ROW_GROUP: sockets in it */
};

/* A drop-rate history per row: one sample per refresh. */
#define HIST_LEN 300 /* 5 minutes at the default 1 s */
struct view_hist {
	uint64_t last_tick;  /* the refresh of the newest sample */
	uint32_t n;          /* samples held (<= HIST_LEN) */
	uint32_t head;       /* index of the newest */
	float v[HIST_LEN];   /* drops/s over that refresh's interval */
	int8_t q[HIST_LEN];  /* receive queue, % of rcvbuf when read; -1 unknown */
	float dt[HIST_LEN];  /* seconds the sample covers (the interval may change) */
};

struct view {
	enum view_col sort;
	bool reverse;            /* against the column's default direction */
	char filter[96];         /* terms: "port:5001 cause:rcvbuf comm:dns 10.0" */
	char search[96];
	/* the table after filter and sort */
	struct view_row *rows, *flows;
	int nrows, nflows, cap_rows, cap_flows;
	int total_rows, total_flows; /* before the filter */
	int content[2][COL_MAX];     /* widest cell per column, per panel */
	/* the cursor: a row index in the panel, and the key it points at */
	int panel;               /* 0 sockets, 1 socketless flows */
	int cursor[2], scroll[2];
	struct row_key cursor_key[2];
	bool have_cursor_key[2];
	/* history */
	struct htab hist;        /* struct row_key -> struct view_hist */
	uint64_t tick;
	bool utf8;
	bool group;              /* SO_REUSEPORT groups as one row (default) */
	struct htab groups;      /* group key -> struct view_group, per rebuild */
	/* the advice (detail view, HINT): each row's worst interval per
	 * cause (struct row_key -> struct live_burst, kept by view__record),
	 * and the sysctls and interface of a row's netns (NULL, or env
	 * returning NULL: unknown, and the advice says so) */
	struct htab bursts;
	const struct live_env *(*env)(void *ctx, struct model *m, const struct row *r);
	void *env_ctx;
};

/* A group being built: how many members, and their sums. */
struct view_group {
	int n, row;              /* members; its index in rows, -1 before */
	uint64_t cause[CAUSE_MAX], skbs, bytes;
	double rate;
};

/*
 * The group a socket row belongs to (its key in *gk), or false if it is
 * in none: connected sockets are their own service.
 */
bool view__group_key(const struct row *r, struct row_key *gk);

int view__init(struct view *v);
void view__free(struct view *v);

/*
 * Rebuild the rows from the model's last update: format, filter, sort,
 * put the cursor back on the same key.
 */
int view__refresh(struct view *v, struct model *m);
/* Append each row's drop rate of the model's last update to its history. */
void view__record(struct view *v, struct model *m);
/* Re-sort/re-filter the rows already built (after a key press). */
void view__resort(struct view *v);

/* Set the filter; returns -EINVAL with *why set for a bad term. */
int view__set_filter(struct view *v, const char *filter, const char **why);
/* Does a display row pass the filter? (exposed for tests) */
bool view__match(const struct view *v, const struct view_row *vr);
/* Three-way comparison in the current sort order (exposed for tests). */
int view__cmp(const struct view *v, const struct view_row *a,
	      const struct view_row *b);

/* Cursor movement in the current panel; keeps the key it lands on. */
void view__move(struct view *v, int delta);
void view__move_to(struct view *v, int index);
/* Make the cursor visible in a window of `height` rows. */
void view__scroll(struct view *v, int panel, int height);
/*
 * Move to a row matching v->search, over both panels, wrapping: from the
 * cursor's row itself (as the search is typed), or with next from the
 * one after it (n, F3).
 */
bool view__search(struct view *v, bool next);
const struct view_row *view__current(const struct view *v);

/*
 * The drop-rate history of a row, oldest first, and (each if not NULL)
 * the queue fill sampled at each refresh and the seconds each sample
 * covers; returns the count.
 */
int view__history(const struct view *v, const struct row_key *k, float *out,
		  int8_t *queue, float *dt, int max);

/*
 * Column layout for a terminal `width` wide: which columns show and how
 * wide. Each column wants its widest cell (content[], or its default
 * width when content is NULL; -1 hides it), at most VIEW_COL_CAP; columns with the
 * lowest `keep` go first until the rest fit at their minimum widths.
 * Returns the number of columns shown; widths[c] is 0 for hidden ones.
 */
#define VIEW_COL_CAP 46
int view__fit(int width, const int content[COL_MAX], int widths[COL_MAX]);
/* The widest cell of each column over n rows. */
void view__content_widths(const struct view_row *rows, int n, int out[COL_MAX]);
/*
 * Fit text into `width` cells: pad, or cut with a marker ("…" in UTF-8,
 * "~" otherwise). Addresses cut on the left, so the port stays.
 */
void view__cell(char *out, size_t outlen, const char *text, int width,
		bool right, bool cut_left, bool utf8);

/*
 * A counter's rate: (now - prev) / seconds; 0 when no time has passed or
 * the counter went backwards (a reset is not a negative rate).
 */
double rate_per_s(uint64_t now, uint64_t prev, double seconds);
/* How a socket overflows its receive buffer, from its recent history. */
enum rcvbuf_pattern {
	RCVBUF_QUIET,       /* no drops in the recent samples */
	RCVBUF_NOT_READING, /* drops, and nothing delivered: the app takes nothing out */
	RCVBUF_SUSTAINED,   /* the queue stays full: arrivals outpace the reader */
	RCVBUF_BURSTS,      /* the queue drains between drops: bursts overflow it */
	RCVBUF_UNKNOWN,     /* drops, but too few refreshes with a known queue
			       fill (fewer than 3) to tell sustained from bursts */
};
/*
 * From the newest `n` samples (oldest first) of drop rate and queue fill,
 * and the last interval's deliveries when known (have_rx).
 */
enum rcvbuf_pattern view__rcvbuf_pattern(const float *rate, const int8_t *queue,
					 int n, bool have_rx, double rx_rate);

/*
 * The advice input for cause c of a model row, with what the view keeps
 * (its worst interval) and knows (v->env): advice_model__input's.
 */
void view__advice_input(const struct view *v, struct model *m, const struct row *r,
			enum cause c, struct advice_input *in, char *who, size_t wholen);
/*
 * The HINT column: the advice's short form for the row's main cause
 * (advice__hint), except that a socket dropping with nothing delivered to
 * it in the last interval says "app is not reading it" first: the HINT
 * follows the latest refresh, the advice (which judges the socket's own
 * deliveries too) the latest two or more intervals with drops.
 */
void view__hint(const struct advice_input *in, bool have_rx, double rx_rate,
		double drop_rate, char *buf, size_t len);

/* "0", "12", "1.2k", "45k", "1.2M": a rate with at most 4 digits. */
void fmt_rate(char *buf, size_t len, double per_s);
/* A sparkline of n samples into `width` cells (UTF-8 blocks or ASCII). */
void view__sparkline(char *out, size_t outlen, const float *v, int n,
		     int width, bool utf8, float *max_out);

#endif
