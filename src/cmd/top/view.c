// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "advice_model.h"
#include "bursts.h"
#include "sockid.h"
#include "top_print.h"
#include "util.h"
#include "view.h"

const struct view_col_def view_cols[COL_MAX] = {
	/* name      title       help                                        w  min  right desc   flex  keep */
	[COL_PROTO] = { "proto", "PROTO", "protocol (udp, udplite)", 5, 5, false, false, false, 2 },
	[COL_LOCAL] = { "local", "LOCAL", "local address:port", 21, 12, false, false, true, 12 },
	[COL_REMOTE] = { "remote", "REMOTE", "connected peer, * if none", 15, 9, false, false, true, 3 },
	[COL_NETNS] = { "netns", "NETNS", "network namespace (name or inode)", 12, 6, false, false, true, 6 },
	[COL_OWNER] = { "pid", "PID/COMM", "owning process (+N: more share it)", 16, 10, false, false, true, 9 },
	[COL_RX_RATE] = { "rx", "RX/s", "datagrams queued to the socket per second", 6, 6, true, true, false, 6 },
	[COL_DROP_RATE] = { "rate", "DROPS/s", "datagrams dropped per second, last interval", 8, 8, true, true, false, 11 },
	[COL_DROPS] = { "drops", "DROPS", "datagrams dropped since start", 9, 7, true, true, false, 10 },
	[COL_CAUSE] = { "cause", "CAUSE", "main cause of its drops", 12, 9, false, false, false, 8 },
	[COL_RCVBUF] = { "rcvbuf", "RCVBUF", "receive buffer (SO_RCVBUF as the kernel keeps it)", 8, 8, true, true, false, 5 },
	[COL_QUEUE] = { "queue", "QUEUE", "receive queue fill now/peak, % of rcvbuf", 9, 9, true, true, false, 7 },
	[COL_HINT] = { "hint", "HINT", "what to look at first", 22, 12, false, false, true, 4 },
};

int view_col__from_name(const char *name)
{
	for (int c = 0; c < COL_MAX; c++)
		if (!strcasecmp(name, view_cols[c].name) ||
		    !strcasecmp(name, view_cols[c].title))
			return c;
	return -1;
}

int view__init(struct view *v)
{
	memset(v, 0, sizeof(*v));
	v->sort = COL_DROP_RATE;
	v->group = true;
	if (htab__init(&v->groups, sizeof(struct row_key), sizeof(struct view_group)) ||
	    bursts__init(&v->bursts))
		return -ENOMEM;
	return htab__init(&v->hist, sizeof(struct row_key), sizeof(struct view_hist));
}

void view__free(struct view *v)
{
	free(v->rows);
	free(v->flows);
	htab__free(&v->hist);
	htab__free(&v->groups);
	htab__free(&v->bursts);
	memset(v, 0, sizeof(*v));
}

/* ---- units ----------------------------------------------------------- */

double rate_per_s(uint64_t now, uint64_t prev, double seconds)
{
	/* below a microsecond the quotient says nothing but noise */
	if (!(seconds >= 1e-6) || now < prev)
		return 0;
	return (now - prev) / seconds;
}

void fmt_rate(char *buf, size_t len, double x)
{
	if (x < 0 || isnan(x))
		x = 0;
	if (x < 9999.5)
		snprintf(buf, len, "%.0f", x);
	else if (x < 99950)
		snprintf(buf, len, "%.1fk", x / 1e3);
	else if (x < 999500)
		snprintf(buf, len, "%.0fk", x / 1e3);
	else if (x < 99950000)
		snprintf(buf, len, "%.1fM", x / 1e6);
	else if (x < 999500000)
		snprintf(buf, len, "%.0fM", x / 1e6);
	else
		snprintf(buf, len, "%.1fG", x / 1e9);
}

/* ---- advice inputs -------------------------------------------------------- */

enum rcvbuf_pattern view__rcvbuf_pattern(const float *rate, const int8_t *queue,
					 int n, bool have_rx, double rx_rate)
{
	int recent = 0, dropping = 0, known = 0, full = 0;

	for (int i = n - 1; i >= 0 && recent < 10; i--, recent++) {
		if (rate[i] <= 0)
			continue;
		dropping++;
		if (queue && queue[i] >= 0) {
			known++;
			/* truesize rounding keeps a "full" queue a little under 100% */
			full += queue[i] >= 75;
		}
	}
	if (!dropping)
		return RCVBUF_QUIET;
	/* a full queue with room made for nothing: no read happened */
	if (have_rx && rx_rate <= 0 && n && rate[n - 1] > 0)
		return RCVBUF_NOT_READING;
	/* fewer than 3 looks at the queue while dropping: no pattern */
	if (known < 3)
		return RCVBUF_UNKNOWN;
	if (full * 10 >= known * 8)
		return RCVBUF_SUSTAINED;
	return RCVBUF_BURSTS;
}

/* ---- formatting one row ----------------------------------------------- */

void view__advice_input(const struct view *v, struct model *m, const struct row *r,
			enum cause c, struct advice_input *in, char *who, size_t wholen)
{
	const struct live_env *e = v->env ? v->env(v->env_ctx, m, r) : NULL;

	advice_model__input(in, m, r, c, htab__find(&v->bursts, &r->key), e, who, wholen);
}

void view__hint(const struct advice_input *in, bool have_rx, double rx_rate,
		double drop_rate, char *buf, size_t len)
{
	if (in->cause == CAUSE_RCVBUF && in->has_socket && have_rx && rx_rate <= 0 &&
	    drop_rate > 0) {
		/* dropping, yet nothing got in: nobody makes room */
		snprintf(buf, len, "app is not reading it");
		return;
	}
	advice__hint(in, buf, len);
}

/* The short hint: the advice's first change for this row's main cause. */
static void row_hint(const struct view *v, struct model *m, const struct view_row *vr,
		     const struct row *r, char *buf, size_t len)
{
	struct advice_input in;
	char who[128];

	if (vr->cause >= CAUSE_MAX) {
		snprintf(buf, len, "%s", "");
		return;
	}
	view__advice_input(v, m, r, vr->cause, &in, who, sizeof(who));
	view__hint(&in, vr->have_rx, vr->rx_rate, vr->drop_rate, buf, len);
	if (!buf[0] && vr->drops)
		snprintf(buf, len, "see detail (Enter)");
}

static void fill_socket_row(const struct view *v, struct view_row *vr, struct model *m,
			    const struct row *r)
{
	char nsbuf[64], pbuf[8];
	const struct sock_info *s = &r->sock;

	memset(vr, 0, sizeof(*vr));
	vr->key = r->key;
	vr->drops = r->drops;
	vr->drop_rate = r->rate;
	for (int c = 0; c < CAUSE_MAX; c++)
		if (r->cause[c] || r->cause_skbs[c])
			vr->cause_mask |= 1u << c;
	vr->have_rx = m->have_rx;
	vr->rx_rate = r->rx_rate;
	vr->cause = r->drops || r->skbs ? row__main_cause(r) : CAUSE_MAX;
	vr->queue_pct = vr->queue_peak_pct = -1;
	if (r->have_sock) {
		vr->port = s->sport;
		vr->pid = s->npids ? s->pids[0] : 0;
		vr->npids = s->npids < SOCK_MAX_PIDS ? s->npids : SOCK_MAX_PIDS;
		memcpy(vr->pids, s->pids, sizeof(vr->pids));
		if (s->npids)
			snprintf(vr->comm, sizeof(vr->comm), "%s", s->comm);
		snprintf(vr->text[COL_PROTO], 64, "%s", proto_name(s->proto, pbuf, sizeof(pbuf)));
		fmt_endpoint(vr->text[COL_LOCAL], 64, s->family, s->saddr, s->sport);
		if (s->dport)
			fmt_endpoint(vr->text[COL_REMOTE], 64, s->family, s->daddr, s->dport);
		else
			snprintf(vr->text[COL_REMOTE], 64, "*");
		if (s->npids > 1)
			snprintf(vr->text[COL_OWNER], 64, "%d/%s +%d", s->pids[0], s->comm,
				 s->npids - 1);
		else if (s->npids == 1)
			snprintf(vr->text[COL_OWNER], 64, "%d/%s", s->pids[0], s->comm);
		else if (s->kowner[0])
			snprintf(vr->text[COL_OWNER], 64, "%s", s->kowner);
		else
			snprintf(vr->text[COL_OWNER], 64, "-");
		if (s->have_mem) {
			vr->rcvbuf = s->rcvbuf;
			fmt_bytes(vr->text[COL_RCVBUF], 64, s->rcvbuf);
			if (s->rcvbuf) {
				vr->queue_pct = (int)(100.0 * s->rmem / s->rcvbuf + 0.5);
				if (r->queue_peak)
					vr->queue_peak_pct = (int)(100.0 * r->queue_peak / s->rcvbuf + 0.5);
			}
		}
	} else if (r->key.cookie & UD_COOKIE_FOLDED) {
		/* sockets of the netns closed long ago, folded into one row */
		snprintf(vr->text[COL_PROTO], 64, "udp");
		snprintf(vr->text[COL_LOCAL], 64, "(closed sockets)");
		snprintf(vr->text[COL_REMOTE], 64, "*");
		snprintf(vr->text[COL_OWNER], 64, "-");
	} else {
		snprintf(vr->text[COL_PROTO], 64, "?");
		/* gone before a dump named it: by inode until then (sockid.h) */
		if (sockid__inode(r->key.cookie))
			snprintf(vr->text[COL_LOCAL], 64, "? (inode %u)",
				 sockid__inode(r->key.cookie));
		else
			snprintf(vr->text[COL_LOCAL], 64, "? (cookie %llu)",
				 (unsigned long long)r->key.cookie);
		snprintf(vr->text[COL_REMOTE], 64, "?");
		snprintf(vr->text[COL_OWNER], 64, "-");
	}
	if (!s->have_mem || !r->have_sock)
		snprintf(vr->text[COL_RCVBUF], 64, "-");
	if (vr->queue_pct < 0)
		snprintf(vr->text[COL_QUEUE], 64, "-");
	else if (vr->queue_peak_pct < 0)
		snprintf(vr->text[COL_QUEUE], 64, "%d%%", vr->queue_pct);
	else
		snprintf(vr->text[COL_QUEUE], 64, "%d/%d%%", vr->queue_pct,
			 vr->queue_peak_pct > vr->queue_pct ? vr->queue_peak_pct : vr->queue_pct);
	snprintf(vr->text[COL_NETNS], 64, "%s",
		 model__netns_label(m, r->key.netns, nsbuf, sizeof(nsbuf)));
	str_printable(vr->text[COL_OWNER]);
	str_printable(vr->text[COL_NETNS]);
	str_printable(vr->comm);
	if (vr->have_rx)
		fmt_rate(vr->text[COL_RX_RATE], 64, vr->rx_rate);
	else
		snprintf(vr->text[COL_RX_RATE], 64, "-");
	fmt_rate(vr->text[COL_DROP_RATE], 64, vr->drop_rate);
	fmt_count(vr->text[COL_DROPS], 64, vr->drops);
	snprintf(vr->text[COL_CAUSE], 64, "%s",
		 vr->cause < CAUSE_MAX ? cause__name(vr->cause) : "-");
	row_hint(v, m, vr, r, vr->text[COL_HINT], 64);
	if (r->have_sock && !r->sock_alive)
		snprintf(vr->text[COL_HINT], 64, "socket closed");
}

/*
 * A socketless flow uses the same columns: LOCAL is the destination,
 * REMOTE the source, HINT says why no socket took it; the socket-only
 * columns (owner, rx, buffer) stay empty and the panel hides them.
 */
static void fill_flow_row(const struct view *v, struct view_row *vr, struct model *m,
			  const struct row *r)
{
	char nsbuf[64], pbuf[8];

	memset(vr, 0, sizeof(*vr));
	vr->key = r->key;
	vr->drops = r->drops;
	vr->drop_rate = r->rate;
	vr->cause = r->key.cause;
	vr->cause_mask = 1u << r->key.cause;
	vr->port = r->key.dport;
	vr->queue_pct = vr->queue_peak_pct = -1;
	snprintf(vr->text[COL_PROTO], 64, "%s", proto_name(r->key.proto, pbuf, sizeof(pbuf)));
	if (r->key.dport)
		fmt_endpoint(vr->text[COL_LOCAL], 64, r->key.family, r->key.daddr, r->key.dport);
	else
		fmt_addr(vr->text[COL_LOCAL], 64, r->key.family, r->key.daddr);
	if (r->key.family)
		fmt_addr(vr->text[COL_REMOTE], 64, r->key.family, r->key.saddr);
	else
		snprintf(vr->text[COL_REMOTE], 64, "?");
	snprintf(vr->text[COL_NETNS], 64, "%s",
		 r->key.netns ? model__netns_label(m, r->key.netns, nsbuf, sizeof(nsbuf)) : "?");
	snprintf(vr->text[COL_OWNER], 64, "-");
	snprintf(vr->text[COL_RX_RATE], 64, "-");
	fmt_rate(vr->text[COL_DROP_RATE], 64, vr->drop_rate);
	fmt_count(vr->text[COL_DROPS], 64, vr->drops);
	snprintf(vr->text[COL_CAUSE], 64, "%s", cause__name(vr->cause));
	snprintf(vr->text[COL_RCVBUF], 64, "-");
	snprintf(vr->text[COL_QUEUE], 64, "-");
	/* the panel's WHY: why no socket took them (the detail has the advice) */
	snprintf(vr->text[COL_HINT], 64, "%s", row__flow_why(r));
	(void)v;
}

/* ---- filter ------------------------------------------------------------ */

enum term_field { TERM_ANY, TERM_PORT, TERM_PID, TERM_COMM, TERM_NETNS, TERM_CAUSE };

static const char *const term_names[] = {
	[TERM_PORT] = "port", [TERM_PID] = "pid", [TERM_COMM] = "comm",
	[TERM_NETNS] = "netns", [TERM_CAUSE] = "cause",
};

/* Split "field:value" (or "field=value"); TERM_ANY for a bare word. */
static int parse_term(const char *t, size_t n, enum term_field *f,
		      const char **val, size_t *vlen)
{
	const char *sep = memchr(t, ':', n);

	if (!sep)
		sep = memchr(t, '=', n);
	*f = TERM_ANY;
	*val = t;
	*vlen = n;
	if (!sep)
		return 0;
	for (int i = TERM_PORT; i <= TERM_CAUSE; i++) {
		if (strlen(term_names[i]) == (size_t)(sep - t) &&
		    !strncasecmp(t, term_names[i], sep - t)) {
			*f = i;
			*val = sep + 1;
			*vlen = n - (sep + 1 - t);
			return *vlen ? 0 : -EINVAL;
		}
	}
	/* "[::1]:53" and "10.0.0.2:5001" are bare words with a colon */
	return 0;
}

int view__set_filter(struct view *v, const char *filter, const char **why)
{
	const char *p = filter;

	*why = NULL;
	while (*p) {
		size_t n = strcspn(p, " \t");
		enum term_field f;
		const char *val;
		size_t vlen;

		if (n) {
			if (parse_term(p, n, &f, &val, &vlen)) {
				*why = "a field needs a value (port:5001, pid:42, comm:name, netns:name, cause:rcvbuf)";
				return -EINVAL;
			}
			if (f == TERM_PORT || f == TERM_PID) {
				for (size_t i = 0; i < vlen; i++)
					if (val[i] < '0' || val[i] > '9') {
						*why = f == TERM_PORT ? "port: a number" : "pid: a number";
						return -EINVAL;
					}
			}
			if (f == TERM_CAUSE) {
				char name[32];

				snprintf(name, sizeof(name), "%.*s", (int)vlen, val);
				if (cause__from_name(name) < 0) {
					*why = "cause: one of the cause names (rcvbuf, no_socket, ...)";
					return -EINVAL;
				}
			}
		}
		p += n;
		p += strspn(p, " \t");
	}
	snprintf(v->filter, sizeof(v->filter), "%s", filter);
	return 0;
}

static bool contains(const char *hay, const char *needle, size_t n)
{
	size_t hl = strlen(hay);

	for (size_t i = 0; n <= hl && i <= hl - n; i++)
		if (!strncasecmp(hay + i, needle, n))
			return true;
	return false;
}

static bool number_is(const char *val, size_t vlen, uint64_t x)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)x);
	return strlen(buf) == vlen && !strncmp(buf, val, vlen);
}

static bool term_matches(const struct view_row *vr, enum term_field f,
			 const char *val, size_t n)
{
	switch (f) {
	case TERM_PORT:
		return vr->port && number_is(val, n, vr->port);
	case TERM_PID:
		for (int i = 0; i < vr->npids; i++)
			if (number_is(val, n, vr->pids[i]))
				return true;
		return false;
	case TERM_COMM:
		return vr->npids && contains(vr->comm, val, n);
	case TERM_NETNS:
		return contains(vr->text[COL_NETNS], val, n) ||
		       number_is(val, n, vr->key.netns);
	case TERM_CAUSE:
		/* any cause the row has drops of, not only the main one */
		for (int c = 0; c < CAUSE_MAX; c++)
			if ((vr->cause_mask & (1u << c)) && strlen(cause__name(c)) == n &&
			    !strncasecmp(cause__name(c), val, n))
				return true;
		return false;
	case TERM_ANY:
	default:
		for (int c = 0; c < COL_MAX; c++)
			if (c != COL_HINT && contains(vr->text[c], val, n))
				return true;
		return false;
	}
}

bool view__match(const struct view *v, const struct view_row *vr)
{
	const char *p = v->filter;

	while (*p) {
		size_t n = strcspn(p, " \t");
		enum term_field f;
		const char *val;
		size_t vlen;

		if (n && (parse_term(p, n, &f, &val, &vlen) ||
			  !term_matches(vr, f, val, vlen)))
			return false;
		p += n;
		p += strspn(p, " \t");
	}
	return true;
}

/* ---- sort -------------------------------------------------------------- */

static int cmp_num(double a, double b)
{
	return a < b ? -1 : a > b ? 1 : 0;
}

/* The column's own order, ascending. */
static int cmp_col(enum view_col c, const struct view_row *a,
		   const struct view_row *b)
{
	switch (c) {
	case COL_RX_RATE:
		return cmp_num(a->have_rx ? a->rx_rate : -1, b->have_rx ? b->rx_rate : -1);
	case COL_DROP_RATE: return cmp_num(a->drop_rate, b->drop_rate);
	case COL_DROPS: return cmp_num(a->drops, b->drops);
	case COL_RCVBUF: return cmp_num(a->rcvbuf, b->rcvbuf);
	case COL_QUEUE: {
		int x = a->queue_peak_pct > a->queue_pct ? a->queue_peak_pct : a->queue_pct;
		int y = b->queue_peak_pct > b->queue_pct ? b->queue_peak_pct : b->queue_pct;

		return x != y ? cmp_num(x, y) : cmp_num(a->queue_pct, b->queue_pct);
	}
	case COL_OWNER:
		if (a->pid != b->pid)
			return cmp_num(a->pid, b->pid);
		return strcmp(a->text[c], b->text[c]);
	case COL_LOCAL:
		if (a->port != b->port)
			return cmp_num(a->port, b->port);
		return strcmp(a->text[c], b->text[c]);
	default:
		return strcmp(a->text[c], b->text[c]);
	}
}

int view__cmp(const struct view *v, const struct view_row *a,
	      const struct view_row *b)
{
	int d = cmp_col(v->sort, a, b);

	if (view_cols[v->sort].desc)
		d = -d;
	if (v->reverse)
		d = -d;
	if (d)
		return d;
	/* ties: the busiest first, then the key, so the order never flickers */
	if ((d = -cmp_num(a->drop_rate, b->drop_rate)))
		return d;
	if ((d = -cmp_num(a->drops, b->drops)))
		return d;
	return memcmp(&a->key, &b->key, sizeof(a->key));
}

static const struct view *sort_view; /* qsort has no context argument */

static int cmp_qsort(const void *a, const void *b)
{
	return view__cmp(sort_view, a, b);
}

/* ---- cursor ------------------------------------------------------------ */

static int panel_len(const struct view *v, int p)
{
	return p ? v->nflows : v->nrows;
}

static struct view_row *panel_rows(const struct view *v, int p)
{
	return p ? v->flows : v->rows;
}

static void remember_cursor(struct view *v, int p)
{
	int n = panel_len(v, p);

	if (v->cursor[p] >= n)
		v->cursor[p] = n - 1;
	if (v->cursor[p] < 0)
		v->cursor[p] = 0;
	v->have_cursor_key[p] = n > 0;
	if (n)
		v->cursor_key[p] = panel_rows(v, p)[v->cursor[p]].key;
}

/* After a rebuild: the cursor goes back to the row it was on, if there. */
static void restore_cursor(struct view *v, int p)
{
	struct view_row *rows = panel_rows(v, p);
	int n = panel_len(v, p);

	if (v->have_cursor_key[p])
		for (int i = 0; i < n; i++)
			if (!memcmp(&rows[i].key, &v->cursor_key[p], sizeof(rows[i].key))) {
				/* the row moved: keep it on the same screen line */
				v->scroll[p] += i - v->cursor[p];
				if (v->scroll[p] < 0)
					v->scroll[p] = 0;
				v->cursor[p] = i;
				return;
			}
	/* gone (filtered out, forgotten): stay at the same index */
	remember_cursor(v, p);
}

void view__move(struct view *v, int delta)
{
	int p = v->panel;

	v->cursor[p] += delta;
	remember_cursor(v, p);
}

void view__move_to(struct view *v, int index)
{
	v->cursor[v->panel] = index;
	remember_cursor(v, v->panel);
}

void view__scroll(struct view *v, int p, int height)
{
	int n = panel_len(v, p);

	if (height < 1)
		height = 1;
	if (v->cursor[p] < v->scroll[p])
		v->scroll[p] = v->cursor[p];
	if (v->cursor[p] >= v->scroll[p] + height)
		v->scroll[p] = v->cursor[p] - height + 1;
	/* no empty lines below the last row while rows sit above */
	if (v->scroll[p] > n - height)
		v->scroll[p] = n - height;
	if (v->scroll[p] < 0)
		v->scroll[p] = 0;
}

const struct view_row *view__current(const struct view *v)
{
	int p = v->panel;

	if (!panel_len(v, p))
		return NULL;
	return &panel_rows(v, p)[v->cursor[p]];
}

bool view__search(struct view *v, bool next)
{
	size_t n = strlen(v->search);
	int total = v->nrows + v->nflows;
	/* one ring over both panels: sockets, then flows, from the cursor */
	int at = (v->panel ? v->nrows : 0) + v->cursor[v->panel];

	for (int step = next ? 1 : 0; n && step < total + (next ? 1 : 0); step++) {
		int pos = (at + step) % total;
		int p = pos >= v->nrows, idx = p ? pos - v->nrows : pos;
		struct view_row *row = &panel_rows(v, p)[idx];

		for (int c = 0; c < COL_MAX; c++) {
			if (!contains(row->text[c], v->search, n))
				continue;
			v->panel = p;
			v->cursor[p] = idx;
			remember_cursor(v, p);
			return true;
		}
	}
	return false;
}

/* ---- rebuild ----------------------------------------------------------- */

static int grow(struct view_row **rows, int *cap, int want)
{
	if (want <= *cap)
		return 0;
	int ncap = *cap ? *cap : 64;

	while (ncap < want)
		ncap *= 2;
	void *p = realloc(*rows, ncap * sizeof(**rows));

	if (!p)
		return -ENOMEM;
	*rows = p;
	*cap = ncap;
	return 0;
}

static void hist_add(struct view *v, const struct row_key *k, double rate, int qpct,
		     double dt)
{
	int created;
	struct view_hist *h = htab__upsert(&v->hist, k, &created);

	if (!h)
		return; /* history is a nicety: out of memory, go without */
	/* refreshes the row was not in view: zeros keep the time axis true */
	uint64_t gap = created || !h->n ? 0 : v->tick - h->last_tick - 1;

	for (uint64_t i = 0; i < gap && i < HIST_LEN; i++) {
		h->head = (h->head + 1) % HIST_LEN;
		h->v[h->head] = 0;
		h->q[h->head] = -1;
		h->dt[h->head] = dt; /* not seen: as long as this one, the best guess */
		if (h->n < HIST_LEN)
			h->n++;
	}
	h->head = h->n ? (h->head + 1) % HIST_LEN : 0;
	h->v[h->head] = rate;
	h->q[h->head] = qpct > 127 ? 127 : qpct;
	h->dt[h->head] = dt;
	if (h->n < HIST_LEN)
		h->n++;
	h->last_tick = v->tick;
}

int view__history(const struct view *v, const struct row_key *k, float *out,
		  int8_t *queue, float *dt, int max)
{
	const struct view_hist *h = htab__find(&v->hist, k);
	int n, gap;

	if (!h || !h->n)
		return 0;
	/* a row out of view since: the missing refreshes were quiet */
	gap = v->tick > h->last_tick ? (int)(v->tick - h->last_tick) : 0;
	n = (int)h->n + gap;
	if (n > max)
		n = max;
	for (int i = 0; i < n; i++) {
		int back = n - 1 - i; /* 0: newest */
		int at = (h->head + HIST_LEN - (back - gap)) % HIST_LEN;
		bool held = back >= gap && back - gap < (int)h->n;

		out[i] = held ? h->v[at] : 0;
		if (queue)
			queue[i] = held ? h->q[at] : -1;
		if (dt) /* refreshes since it left the view: as long as its last */
			dt[i] = held ? h->dt[at] : h->dt[h->head];
	}
	return n;
}

void view__resort(struct view *v)
{
	/* rows are rebuilt from the model; here only the order changes */
	sort_view = v;
	if (v->nrows > 1) /* qsort's base must not be NULL, even for 0 rows */
		qsort(v->rows, v->nrows, sizeof(*v->rows), cmp_qsort);
	if (v->nflows > 1)
		qsort(v->flows, v->nflows, sizeof(*v->flows), cmp_qsort);
	sort_view = NULL;
	restore_cursor(v, 0);
	restore_cursor(v, 1);
}

bool view__group_key(const struct row *r, struct row_key *gk)
{
	/* a closed socket is history, not a member: a restarted service's
	 * old socket must keep its own row (and its "socket closed") */
	if (r->key.kind != ROW_SOCKET || !r->have_sock || r->sock.dport || !r->sock_alive)
		return false;
	memset(gk, 0, sizeof(*gk));
	gk->kind = VIEW_ROW_GROUP;
	gk->netns = r->key.netns;
	gk->family = r->sock.family;
	gk->proto = r->sock.proto;
	memcpy(gk->daddr, r->sock.saddr, sizeof(gk->daddr));
	gk->dport = r->sock.sport;
	return true;
}

/* Count each group's members among the rows in view, and their sums. */
static int count_groups(struct view *v, struct model *m)
{
	htab__clear(&v->groups);
	for (int i = 0; i < m->nview_sockets; i++) {
		const struct row *r = m->view_sockets[i];
		struct row_key gk;
		struct view_group *g;
		int created;

		if (!view__group_key(r, &gk))
			continue;
		g = htab__upsert(&v->groups, &gk, &created);
		if (!g)
			return -ENOMEM;
		if (created)
			g->row = -1;
		g->n++;
		g->skbs += r->skbs;
		g->bytes += r->bytes;
		g->rate += r->rate;
		for (int c = 0; c < CAUSE_MAX; c++)
			g->cause[c] += r->cause[c];
	}
	return 0;
}

/* The group a row is shown in, if it has two members or more. */
static struct view_group *group_of(struct view *v, const struct row *r,
				   struct row_key *gk)
{
	struct view_group *g;

	if (!v->group || !view__group_key(r, gk))
		return NULL;
	g = htab__find(&v->groups, gk);
	return g && g->n >= 2 ? g : NULL;
}

/* Add a member's numbers to its group's row. */
static void group_add(struct view_row *gr, const struct view_row *mr)
{
	gr->drops += mr->drops;
	gr->drop_rate += mr->drop_rate;
	gr->rx_rate += mr->rx_rate;
	gr->cause_mask |= mr->cause_mask;
	if (mr->rcvbuf > gr->rcvbuf)
		gr->rcvbuf = mr->rcvbuf;
	if (mr->queue_pct > gr->queue_pct)
		gr->queue_pct = mr->queue_pct;
	if (mr->queue_peak_pct > gr->queue_peak_pct)
		gr->queue_peak_pct = mr->queue_peak_pct;
	for (int i = 0; i < mr->npids && gr->npids < SOCK_MAX_PIDS; i++) {
		bool known = false;

		for (int j = 0; j < gr->npids; j++)
			known |= gr->pids[j] == mr->pids[i];
		if (!known)
			gr->pids[gr->npids++] = mr->pids[i];
	}
	gr->members++;
}

/* The group row's text, once all members are in. */
static void group_text(struct view_row *gr, const struct view_group *g)
{
	uint64_t best = 0;

	gr->cause = CAUSE_MAX;
	for (int c = 0; c < CAUSE_MAX; c++)
		if (g->cause[c] > best) {
			best = g->cause[c];
			gr->cause = c;
		}
	snprintf(gr->text[COL_CAUSE], 64, "%s", gr->cause < CAUSE_MAX ? cause__name(gr->cause) : "-");
	if (gr->npids > 1)
		snprintf(gr->text[COL_OWNER], 64, "%d processes", gr->npids);
	else if (gr->npids == 1)
		snprintf(gr->text[COL_OWNER], 64, "%d/%s", gr->pids[0], gr->comm);
	if (gr->have_rx)
		fmt_rate(gr->text[COL_RX_RATE], 64, gr->rx_rate);
	fmt_rate(gr->text[COL_DROP_RATE], 64, gr->drop_rate);
	fmt_count(gr->text[COL_DROPS], 64, gr->drops);
	if (gr->rcvbuf)
		fmt_bytes(gr->text[COL_RCVBUF], 64, gr->rcvbuf);
	if (gr->queue_pct >= 0)
		snprintf(gr->text[COL_QUEUE], 64, gr->queue_peak_pct > gr->queue_pct ? "%d/%d%%" : "%d%%",
			 gr->queue_pct, gr->queue_peak_pct);
	snprintf(gr->text[COL_HINT], 64, "%d sockets share the port (H: each)", gr->members);
}

int view__refresh(struct view *v, struct model *m)
{
	int n = 0;

	if (grow(&v->rows, &v->cap_rows, m->nview_sockets) ||
	    grow(&v->flows, &v->cap_flows, m->nview_flows) || count_groups(v, m))
		return -ENOMEM;
	/* every socket row, its group's members folded into one */
	for (int i = 0; i < m->nview_sockets; i++) {
		const struct row *r = m->view_sockets[i];
		struct row_key gk;
		struct view_group *g = group_of(v, r, &gk);

		if (g && g->row >= 0) {
			struct view_row tmp;

			fill_socket_row(v, &tmp, m, r);
			group_add(&v->rows[g->row], &tmp);
			continue;
		}
		fill_socket_row(v, &v->rows[n], m, r);
		if (g) {
			struct view_row *gr = &v->rows[n];
			struct view_row first = *gr;

			/* the first member's text, the numbers from zero */
			gr->key = gk;
			gr->drops = 0;
			gr->drop_rate = gr->rx_rate = 0;
			gr->cause_mask = 0;
			gr->npids = 0;
			gr->rcvbuf = 0;
			gr->queue_pct = gr->queue_peak_pct = -1;
			gr->members = 0;
			group_add(gr, &first);
			g->row = n;
		}
		n++;
	}
	/* finish the groups, then filter */
	v->total_rows = n;
	v->nrows = 0;
	for (int i = 0; i < n; i++) {
		struct view_row *vr = &v->rows[i];

		if (vr->key.kind == VIEW_ROW_GROUP)
			group_text(vr, htab__find(&v->groups, &vr->key));
		if (view__match(v, vr)) {
			if (v->nrows != i)
				v->rows[v->nrows] = *vr;
			v->nrows++;
		}
	}
	v->nflows = 0;
	v->total_flows = m->nview_flows;
	for (int i = 0; i < m->nview_flows; i++) {
		struct view_row *vr = &v->flows[v->nflows];

		fill_flow_row(v, vr, m, m->view_flows[i]);
		if (view__match(v, vr))
			v->nflows++;
	}
	/* measured once per rebuild, not per frame */
	view__content_widths(v->rows, v->nrows, v->content[0]);
	view__content_widths(v->flows, v->nflows, v->content[1]);
	view__resort(v);
	return 0;
}

void view__record(struct view *v, struct model *m)
{
	v->tick++;
	bursts__record(&v->bursts, m, v->tick);
	/* groups first: their summed rates, whether shown grouped now or not */
	if (!count_groups(v, m)) {
		size_t it;
		const void *k;
		void *val;

		for (it = 0; htab__next(&v->groups, &it, &k, &val);) {
			const struct view_group *g = val;

			if (g->n >= 2 && (g->skbs || htab__find(&v->hist, k)))
				hist_add(v, k, g->rate, -1, m->interval);
		}
	}
	for (int i = 0; i < m->nview_sockets; i++) {
		const struct row *r = m->view_sockets[i];
		int q = r->have_sock && r->sock.have_mem && r->sock.rcvbuf
			? (int)(100.0 * r->sock.rmem / r->sock.rcvbuf + 0.5) : -1;

		/* a quiet socket (-a) has nothing to draw: 10,000 of them
		 * would cost 30 MB of zeros */
		if (!r->drops && !htab__find(&v->hist, &r->key))
			continue;
		hist_add(v, &r->key, r->rate, q, m->interval);
	}
	for (int i = 0; i < m->nview_flows; i++)
		hist_add(v, &m->view_flows[i]->key, m->view_flows[i]->rate, -1, m->interval);
}

/* ---- layout ------------------------------------------------------------ */

static int utf8_len(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += (*s & 0xc0) != 0x80;
	return n;
}


int view__fit(int width, const int content[COL_MAX], int widths[COL_MAX])
{
	int natural[COL_MAX], min[COL_MAX];
	bool shown[COL_MAX];

	for (int c = 0; c < COL_MAX; c++) {
		/* as wide as the widest cell or the title (with the sort mark) */
		int title = (int)strlen(view_cols[c].title) + 1;

		natural[c] = content ? content[c] : view_cols[c].width;
		shown[c] = !content || content[c] >= 0; /* -1: hide */
		if (natural[c] > VIEW_COL_CAP)
			natural[c] = VIEW_COL_CAP;
		if (natural[c] < title)
			natural[c] = title;
		min[c] = view_cols[c].min_width < natural[c] ? view_cols[c].min_width : natural[c];
	}
	/*
	 * Most important first: each column takes its natural width if that
	 * fits, else its minimum, else it is left out. Less important columns
	 * never squeeze a more important one.
	 */
	int left = width, nshown = 0;

	for (int c = 0; c < COL_MAX; c++)
		widths[c] = 0;
	for (int k = 100; k >= 0; k--)
		for (int c = 0; c < COL_MAX; c++) {
			if (!shown[c] || view_cols[c].keep != k)
				continue;
			int sep = nshown ? 1 : 0;

			if (natural[c] + sep <= left)
				widths[c] = natural[c];
			else if (min[c] + sep <= left)
				widths[c] = min[c];
			else if (!nshown && left > 0)
				widths[c] = left; /* the first column gets what there is */
			else
				continue;
			left -= widths[c] + sep;
			nshown++;
		}
	/* the hint, last on the line, may run to the edge */
	if (widths[COL_HINT] && left > 0)
		widths[COL_HINT] += left;
	return nshown;
}

void view__content_widths(const struct view_row *rows, int n, int out[COL_MAX])
{
	for (int c = 0; c < COL_MAX; c++)
		out[c] = 0;
	for (int i = 0; i < n; i++)
		for (int c = 0; c < COL_MAX; c++) {
			int w = utf8_len(rows[i].text[c]);

			if (w > out[c])
				out[c] = w;
		}
}

/* Byte length of the first `cells` UTF-8 characters (one cell each). */
static size_t utf8_prefix(const char *s, int cells)
{
	size_t i = 0;

	while (s[i] && cells > 0) {
		i++;
		while ((s[i] & 0xc0) == 0x80)
			i++;
		cells--;
	}
	return i;
}

void view__cell(char *out, size_t outlen, const char *text, int width,
		bool right, bool cut_left, bool utf8)
{
	const char *mark = utf8 ? "\xe2\x80\xa6" : "~";
	int len = utf8_len(text);

	if (width <= 0) {
		if (outlen)
			out[0] = 0;
		return;
	}
	if (len <= width) {
		if (right)
			snprintf(out, outlen, "%*s%s", width - len, "", text);
		else
			snprintf(out, outlen, "%s%*s", text, width - len, "");
		return;
	}
	if (cut_left) {
		/* keep the end: "…:1]:5001" */
		const char *tail = text;
		int skip = len - (width - 1);

		while (skip-- > 0) {
			tail++;
			while ((*tail & 0xc0) == 0x80)
				tail++;
		}
		snprintf(out, outlen, "%s%s", mark, tail);
	} else {
		snprintf(out, outlen, "%.*s%s", (int)utf8_prefix(text, width - 1), text, mark);
	}
}

void view__sparkline(char *out, size_t outlen, const float *v, int n,
		     int width, bool utf8, float *max_out)
{
	static const char *const blocks[] = { " ", "\xe2\x96\x81", "\xe2\x96\x82",
		"\xe2\x96\x83", "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86",
		"\xe2\x96\x87", "\xe2\x96\x88" };
	static const char ascii[] = " .:-=+*#@";
	float max = 0;
	size_t o = 0;
	int first = n > width ? n - width : 0;

	for (int i = first; i < n; i++)
		if (v[i] > max)
			max = v[i];
	if (max_out)
		*max_out = max;
	for (int i = first; i < n && o + 4 < outlen; i++) {
		/* any drop at all shows at least the lowest mark */
		int lvl = max > 0 ? (int)ceilf(v[i] / max * 8) : 0;

		if (lvl > 8)
			lvl = 8;
		if (lvl < 0)
			lvl = 0;
		if (utf8) {
			size_t bl = strlen(blocks[lvl]);

			memcpy(out + o, blocks[lvl], bl);
			o += bl;
		} else {
			out[o++] = ascii[lvl];
		}
	}
	if (outlen)
		out[o < outlen ? o : outlen - 1] = 0;
}
