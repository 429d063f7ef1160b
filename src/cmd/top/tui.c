// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The full-screen view: htop's conventions (F-keys and letters, a sort
 * menu, incremental search, a filter, a detail view), drawn with
 * erase() + doupdate() from the view model (view.c). Nothing here writes
 * to stdout or stderr while curses owns the terminal: log lines and
 * errors go to the status line.
 */
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <ncurses.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "live_env.h"
#include "log.h"
#include "reconcile.h"
#include "top_print.h"
#include "tui.h"
#include "util.h"

#define CTRL(c) ((c) & 0x1f)
#define KEY_ESC 27

enum mode { MODE_TABLE, MODE_DETAIL, MODE_HELP, MODE_SORT };
enum prompt { PROMPT_NONE, PROMPT_SEARCH, PROMPT_FILTER, PROMPT_INTERVAL };

enum pair {
	PAIR_TITLE = 1, /* column headers */
	PAIR_CURSOR,
	PAIR_BAD,       /* disagreement, errors */
	PAIR_GOOD,
	PAIR_WARN,      /* paused, frozen, hints */
	PAIR_LABEL,     /* header labels */
	PAIR_SPARK,
};

struct tui {
	struct model *m;
	struct view v;
	const struct tui_opts *o;
	double interval;
	enum mode mode;
	enum prompt prompt;
	char input[96], saved[96];
	bool paused, frozen, color, utf8;
	char status[256];
	bool status_bad;
	uint64_t status_until;
	int sort_idx;             /* in the sort menu */
	struct row_key detail_key;
	int detail_panel, detail_scroll;
	/* per-cause rates for the header */
	uint64_t prev_cause[CAUSE_MAX];
	double cause_rate[CAUSE_MAX];
	bool have_prev_cause;
	char host[64], kernel[65];
	uint64_t refreshes;
	uint64_t next;             /* monotonic ns of the next refresh */
	int table_h, flows_h;      /* rows each panel showed last draw */
	int help_scroll;
	/* the sysctls and interface per (netns, loopback), for the advice */
	struct live_env envs[16];
	int nenvs;
};

/*
 * The advice's view of the system (v->env): read at most every 10 s per
 * netns (live_env__read, through netcfg.c), as the HINT column asks
 * for it on every refresh.
 */
#define ENV_TTL_NS (10 * 1000000000ull)
static const struct live_env *tui_env(void *ctx, struct model *m, const struct row *r)
{
	struct tui *t = ctx;
	uint32_t ns = r->key.netns;
	bool lo = live_env__row_loopback(r);
	uint64_t now = now_ns();
	int slot = -1;

	for (int i = 0; i < t->nenvs; i++) {
		struct live_env *e = &t->envs[i];

		if (e->netns != ns || e->loopback != lo)
			continue;
		if (now - e->read_ns < ENV_TTL_NS)
			return e;
		slot = i;
		break;
	}
	if (slot < 0 && t->nenvs < (int)ARRAY_SIZE(t->envs))
		slot = t->nenvs++;
	if (slot < 0) { /* full: the oldest goes */
		slot = 0;
		for (int i = 1; i < t->nenvs; i++)
			if (t->envs[i].read_ns < t->envs[slot].read_ns)
				slot = i;
	}
	live_env__read(m, ns, lo, &t->envs[slot]);
	return &t->envs[slot];
}

/* A shorter interval takes effect now, not after the old one has run out. */
static void reschedule(struct tui *t)
{
	uint64_t soon = now_ns() + (uint64_t)(t->interval * 1e9);

	if (t->next > soon)
		t->next = soon;
}

/* The log module's sink: the newest line shows in the status line. */
static struct tui *log_tui;

static void set_status(struct tui *t, bool bad, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_status(struct tui *t, bool bad, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->status, sizeof(t->status), fmt, ap);
	va_end(ap);
	t->status_bad = bad;
	t->status_until = now_ns() + 5000000000ull;
}

static void log_sink(enum log_level level, const char *line)
{
	if (log_tui)
		set_status(log_tui, level <= LOG_WARN, "%s", line);
}

/* ---- terminal lifetime -------------------------------------------------- */

static bool curses_up;

/* A crash must not leave the terminal raw: restore it, then die as before. */
static void on_fatal(int sig)
{
	if (curses_up)
		endwin();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void restore_terminal(void)
{
	if (curses_up) {
		endwin();
		curses_up = false;
	}
}

static int setup_terminal(struct tui *t)
{
	const char *term = getenv("TERM");

	if (!term || !*term || !strcmp(term, "dumb"))
		return -ENOTTY;
	/* character classes only: numbers keep their C format ("0.5", not "0,5") */
	setlocale(LC_CTYPE, "");
	t->utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	/* newterm, unlike initscr, returns NULL instead of exiting */
	if (!newterm(NULL, stdout, stdin))
		return -ENOTTY;
	curses_up = true;
	atexit(restore_terminal);
	signal(SIGSEGV, on_fatal);
	signal(SIGBUS, on_fatal);
	signal(SIGFPE, on_fatal);
	signal(SIGABRT, on_fatal);
	signal(SIGQUIT, on_fatal);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	t->color = t->o->color && has_colors() && !getenv("NO_COLOR");
	if (t->color) {
		start_color();
		use_default_colors();
		init_pair(PAIR_TITLE, COLOR_BLACK, COLOR_GREEN);
		init_pair(PAIR_CURSOR, COLOR_BLACK, COLOR_CYAN);
		init_pair(PAIR_BAD, COLOR_RED, -1);
		init_pair(PAIR_GOOD, COLOR_GREEN, -1);
		init_pair(PAIR_WARN, COLOR_YELLOW, -1);
		init_pair(PAIR_LABEL, COLOR_CYAN, -1);
		init_pair(PAIR_SPARK, COLOR_RED, -1);
	}
	return 0;
}

static attr_t pair(struct tui *t, enum pair p, attr_t mono)
{
	return t->color ? COLOR_PAIR(p) : mono;
}

/* Write at most the cells left on the line; never wrap, never scroll. */
static void put(int y, int x, attr_t a, const char *s)
{
	int room = COLS - x;

	if (y < 0 || y >= LINES || room <= 0)
		return;
	attrset(a);
	/* mvaddnstr counts bytes, not cells: cut UTF-8 ourselves */
	char cut[512];

	view__cell(cut, sizeof(cut), s, room, false, false, log_tui && log_tui->utf8);
	/* the padding view__cell adds would paint the rest of the line */
	size_t n = strlen(cut);

	while (n && cut[n - 1] == ' ' && (size_t)room > n - 1 &&
	       strlen(s) < n)
		cut[--n] = 0;
	mvaddstr(y, x, cut);
	attrset(A_NORMAL);
}

static int putf(int y, int x, attr_t a, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Returns the column after what was written (for runs of pieces). */
static int putf(int y, int x, attr_t a, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int len = 0;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	put(y, x, a, buf);
	for (const char *p = buf; *p; p++)
		len += (*p & 0xc0) != 0x80;
	return x + len;
}

/* "0.1", "2.5", "3600": an interval without exponent or trailing zeros. */
static const char *secs(char *buf, size_t len, double s)
{
	snprintf(buf, len, "%.10g", s);
	return buf;
}

/* ---- header ------------------------------------------------------------- */

static void fmt_uptime(char *buf, size_t len, double s)
{
	unsigned long t = s > 0 ? (unsigned long)s : 0;

	if (t >= 86400)
		snprintf(buf, len, "%lud %02lu:%02lu:%02lu", t / 86400, t / 3600 % 24,
			 t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%02lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
}

static void cause_rates(struct tui *t)
{
	struct model *m = t->m;

	for (int c = 0; c < CAUSE_MAX; c++) {
		t->cause_rate[c] = t->have_prev_cause
			? rate_per_s(m->totals.cause[c], t->prev_cause[c], m->interval) : 0;
		t->prev_cause[c] = m->totals.cause[c];
	}
	t->have_prev_cause = true;
}

static int draw_header(struct tui *t)
{
	struct model *m = t->m;
	char up[32], total[24], rate[16], skbs[24], att[24];
	int y = 0, x;
	attr_t lab = pair(t, PAIR_LABEL, A_BOLD);

	fmt_uptime(up, sizeof(up), (m->last_ns - m->start_ns) / 1e9);
	/* what matters most first: a narrow terminal cuts the end */
	x = putf(y, 0, A_BOLD, "udpdrop top");
	char sb[32];

	x = putf(y, x, A_NORMAL, " - %s - traced %s - every %s s - %s - kernel %s",
		 t->host, up, secs(sb, sizeof(sb), t->interval), t->o->attach, t->kernel);
	if (t->paused)
		x = putf(y, x + 1, pair(t, PAIR_WARN, A_REVERSE) | A_BOLD, "[PAUSED]");
	if (t->frozen)
		x = putf(y, x + 1, pair(t, PAIR_WARN, A_REVERSE) | A_BOLD, "[FROZEN]");
	y++;

	/* totals and causes */
	fmt_rate(rate, sizeof(rate), m->totals.rate);
	fmt_count(total, sizeof(total), m->totals.drops);
	fmt_count(skbs, sizeof(skbs), m->totals.skbs);
	fmt_count(att, sizeof(att), m->totals.attributed);
	x = putf(y, 0, lab, "Drops:");
	x = putf(y, x, A_BOLD, " %s/s", rate);
	x = putf(y, x, A_NORMAL, "  %s datagrams total, %s to sockets, %s skb events", total, att, skbs);
	if (m->totals.overflow)
		x = putf(y, x, pair(t, PAIR_BAD, A_BOLD), "  %llu in overflow (raise --map-entries)",
			 (unsigned long long)m->totals.overflow);
	if (m->missed)
		x = putf(y, x, pair(t, PAIR_BAD, A_BOLD), "  %llu missed by the kernel",
			 (unsigned long long)m->missed);
	y++;
	x = putf(y, 0, lab, "Causes:");
	bool any = false;

	for (int c = 0; c < CAUSE_MAX; c++) {
		if (!m->totals.cause[c])
			continue;
		fmt_rate(rate, sizeof(rate), t->cause_rate[c]);
		fmt_count(total, sizeof(total), m->totals.cause[c]);
		x = putf(y, x, A_BOLD, " %s", cause__name(c));
		x = putf(y, x, A_NORMAL, " %s/s %s%s", rate, total, " ");
		any = true;
	}
	if (!any)
		putf(y, x, A_NORMAL, " none yet");
	y++;
	/* as batch mode and report say it: the causes are a derivation here */
	if (m->sites) {
		char note[512];

		cause__sites_note(note, sizeof(note));
		putf(y++, 0, pair(t, PAIR_WARN, A_NORMAL), "%s", note);
	}

	/* reconciliation with the kernel's counters */
	struct reconcile_line rl[16];
	int n = reconcile__lines(m, rl, 16);
	const char *caveat = model__reconcile_caveat(m);

	x = putf(y, 0, lab, "Kernel:");
	if (!n)
		x = putf(y, x, A_NORMAL, " no drop counters moved in the netns in view");
	uint32_t last_ns = 0;

	for (int i = 0; i < n; i++) {
		char nsbuf[64], a[24], b[24];
		bool ok = reconcile__ok(&rl[i]);

		if (rl[i].netns != last_ns)
			x = putf(y, x, A_NORMAL, " %s:",
				 model__netns_label(m, rl[i].netns, nsbuf, sizeof(nsbuf)));
		last_ns = rl[i].netns;
		fmt_count(a, sizeof(a), rl[i].kernel);
		fmt_count(b, sizeof(b), rl[i].ours);
		x = putf(y, x, A_NORMAL, " %s +%s / attributed %s", rl[i].label, a, b);
		if (rl[i].ours != rl[i].ours_datagrams) {
			char d[24];

			/* GSO/GRO skbs: each counted once, as the kernel counts */
			fmt_count(d, sizeof(d), rl[i].ours_datagrams);
			x = putf(y, x, A_NORMAL, " skbs (%s datagrams)", d);
		}
		/* never round a disagreement to "100%" */
		if (ok && rl[i].kernel == rl[i].ours)
			x = putf(y, x, pair(t, PAIR_GOOD, A_NORMAL), " = 100%%");
		else if (ok)
			/* the counters moved while read: equal to within that */
			x = putf(y, x, pair(t, PAIR_GOOD, A_NORMAL), " = 100%% +-%llu",
				 (unsigned long long)rl[i].spread);
		else if (rl[i].kernel) {
			/* a disagreement never prints as 100.0% */
			double pct = 100.0 * rl[i].ours / rl[i].kernel;

			pct = rl[i].ours < rl[i].kernel ? fmin(floor(pct * 10) / 10, 99.9)
							: fmax(ceil(pct * 10) / 10, 100.1);
			x = putf(y, x, pair(t, PAIR_BAD, A_BOLD | A_REVERSE), " = %.1f%% (%+lld)",
				 pct, (long long)(rl[i].ours - rl[i].kernel));
		}
		else
			x = putf(y, x, pair(t, PAIR_BAD, A_BOLD | A_REVERSE), " (kernel counted none)");
		if (i + 1 < n)
			x = putf(y, x, A_NORMAL, ",");
	}
	if (caveat)
		putf(y, x, pair(t, PAIR_WARN, A_NORMAL), "  (%s)", caveat);
	y++;

	/* what the table shows */
	x = putf(y, 0, lab, "View:");
	x = putf(y, x, A_NORMAL, " %d of %d sockets, %d of %d socketless flows; sort %s %s",
		 t->v.nrows, t->v.total_rows, t->v.nflows, t->v.total_flows,
		 view_cols[t->v.sort].title,
		 (view_cols[t->v.sort].desc != t->v.reverse) ? "(high first)" : "(low first)");
	if (t->v.filter[0])
		x = putf(y, x, pair(t, PAIR_WARN, A_BOLD), "; filter \"%s\"", t->v.filter);
	if (t->m->opts.all)
		x = putf(y, x, A_NORMAL, "; quiet sockets shown");
	y++;
	return y;
}

/* ---- the two tables ----------------------------------------------------- */

static void draw_cols_header(struct tui *t, int y, const int *w, bool flows)
{
	char line[1024], cell[128];
	size_t o = 0;

	for (int c = 0; c < COL_MAX; c++) {
		const char *title = view_cols[c].title;

		if (!w[c])
			continue;
		if (flows) /* the flow panel reuses the columns */
			title = c == COL_LOCAL ? "DESTINATION" : c == COL_REMOTE ? "SOURCE" :
				c == COL_HINT ? "WHY" : title;
		char t2[32];

		/* the sort column carries the direction */
		if (!flows && c == (int)t->v.sort) {
			bool down = view_cols[c].desc != t->v.reverse;

			snprintf(t2, sizeof(t2), "%s%s", title,
				 t->utf8 ? (down ? "\xe2\x96\xbc" : "\xe2\x96\xb2") : (down ? "v" : "^"));
			title = t2;
		}
		view__cell(cell, sizeof(cell), title, w[c], view_cols[c].right, false, t->utf8);
		o += snprintf(line + o, sizeof(line) - o, "%s%s", o ? " " : "", cell);
		if (o >= sizeof(line))
			break;
	}
	attrset(pair(t, PAIR_TITLE, A_REVERSE) | A_BOLD);
	mvhline(y, 0, ' ', COLS);
	attrset(A_NORMAL);
	put(y, 0, pair(t, PAIR_TITLE, A_REVERSE) | A_BOLD, line);
}

static void draw_row(struct tui *t, int y, const struct view_row *vr,
		     const int *w, bool cursor)
{
	char line[1024], cell[128];
	size_t o = 0;

	for (int c = 0; c < COL_MAX; c++) {
		if (!w[c])
			continue;
		view__cell(cell, sizeof(cell), vr->text[c], w[c], view_cols[c].right,
			   c == COL_LOCAL || c == COL_REMOTE, t->utf8);
		o += snprintf(line + o, sizeof(line) - o, "%s%s", o ? " " : "", cell);
		if (o >= sizeof(line))
			break;
	}
	attr_t a = A_NORMAL;

	if (cursor) {
		a = pair(t, PAIR_CURSOR, A_REVERSE);
		attrset(a);
		mvhline(y, 0, ' ', COLS);
	} else if (!vr->drop_rate && vr->drops) {
		a = A_NORMAL; /* quiet now: plain */
	} else if (vr->drop_rate) {
		a = A_BOLD;
	}
	put(y, 0, a, line);
}

static void draw_tables(struct tui *t, int y)
{
	struct view *v = &t->v;
	int w[COL_MAX], avail = LINES - 1 - y; /* the status line is last */

	int content[COL_MAX], cflow[COL_MAX];

	/* size the columns to what they hold */
	memcpy(content, v->content[0], sizeof(content));
	memcpy(cflow, v->content[1], sizeof(cflow));
	/* one netns in view (-N): the header names it, the column would repeat it */
	if (t->m->opts.netns)
		content[COL_NETNS] = -1;
	view__fit(COLS, content, w);
	/* the flow panel: a title, a header and up to a third of the space */
	int fl = 0;

	if (v->nflows || v->total_flows) {
		fl = v->nflows ? v->nflows : 1;
		int cap = avail / 3 > 3 ? avail / 3 : 3;

		if (fl > cap)
			fl = cap;
		fl += 2;
		if (fl > avail - 2)
			fl = avail - 2 > 0 ? avail - 2 : 0;
	}
	int th = avail - fl - 1; /* socket rows */

	if (th < 1) {
		th = avail - 1;
		fl = 0;
	}
	if (th < 0)
		return;
	t->table_h = th;
	draw_cols_header(t, y++, w, false);
	view__scroll(v, 0, th);
	if (!v->nrows) {
		put(y, 1, pair(t, PAIR_WARN, A_NORMAL),
		    v->total_rows ? "no socket matches the filter (\\ to change it)" :
		    t->m->opts.all ? "no UDP sockets in view" :
				     "no socket has dropped a datagram yet (a: show quiet sockets too)");
	}
	for (int i = 0; i < th && v->scroll[0] + i < v->nrows; i++) {
		int idx = v->scroll[0] + i;

		draw_row(t, y + i, &v->rows[idx], w,
			 v->panel == 0 && idx == v->cursor[0]);
	}
	y += th;
	if (fl < 3)
		return;
	t->flows_h = fl - 2;
	/* the flow panel: its own layout, without the socket-only columns */
	cflow[COL_OWNER] = cflow[COL_RX_RATE] = cflow[COL_RCVBUF] = cflow[COL_QUEUE] = -1;
	if (t->m->opts.netns)
		cflow[COL_NETNS] = -1;
	view__fit(COLS, cflow, w);
	put(y, 0, A_BOLD, "Drops with no socket:");
	put(y, 22, A_NORMAL, v->panel == 1 ? "" : "(Tab to move here)");
	y++;
	draw_cols_header(t, y++, w, true);
	view__scroll(v, 1, fl - 2);
	if (!v->nflows)
		put(y, 1, pair(t, PAIR_WARN, A_NORMAL), "none match the filter");
	for (int i = 0; i < fl - 2 && v->scroll[1] + i < v->nflows; i++) {
		int idx = v->scroll[1] + i;

		draw_row(t, y + i, &v->flows[idx], w, v->panel == 1 && idx == v->cursor[1]);
	}
}

/* ---- status line, prompts, menus ---------------------------------------- */

static const char *prompt_label(enum prompt p)
{
	switch (p) {
	case PROMPT_SEARCH: return "Search: ";
	case PROMPT_FILTER: return "Filter (port:N pid:N comm:S netns:S cause:C, or text): ";
	case PROMPT_INTERVAL: return "Refresh interval, seconds (0.1 to 3600): ";
	default: return "";
	}
}

static void draw_status(struct tui *t)
{
	int y = LINES - 1;

	move(y, 0);
	clrtoeol();
	if (t->prompt) {
		int x = putf(y, 0, A_BOLD, "%s", prompt_label(t->prompt));

		x = putf(y, x, A_NORMAL, "%s", t->input);
		put(y, x, A_REVERSE, " ");
		if (t->status[0] && now_ns() < t->status_until)
			putf(y, x + 2, pair(t, PAIR_BAD, A_BOLD), "%s", t->status);
		return;
	}
	if (t->status[0] && now_ns() < t->status_until) {
		put(y, 0, t->status_bad ? pair(t, PAIR_BAD, A_BOLD) : A_BOLD, t->status);
		return;
	}
	static const char *const keys[][2] = {
		{ "F1", "Help" }, { "F3", "Search" }, { "F4", "Filter" }, { "F6", "Sort" },
		{ "Enter", "Detail" }, { "p", "Pause" }, { "Space", "Freeze" },
		{ "a", "Quiet" }, { "q", "Quit" },
	};
	int x = 0;

	for (size_t i = 0; i < ARRAY_SIZE(keys) && x < COLS; i++) {
		x = putf(y, x, A_BOLD, "%s", keys[i][0]);
		x = putf(y, x, pair(t, PAIR_CURSOR, A_REVERSE), "%s", keys[i][1]);
		x += 1;
	}
}

static void draw_sort_menu(struct tui *t, int y)
{
	int h = COL_MAX + 2, w = 22;

	if (y + h > LINES - 1)
		y = LINES - 1 - h;
	if (y < 0)
		y = 0;
	for (int i = 0; i < h && y + i < LINES - 1; i++) {
		move(y + i, 0);
		attrset(A_NORMAL);
		for (int k = 0; k < w && k < COLS; k++)
			addch(' ');
	}
	put(y, 0, pair(t, PAIR_TITLE, A_REVERSE) | A_BOLD, " Sort by              ");
	for (int c = 0; c < COL_MAX; c++) {
		attr_t a = c == t->sort_idx ? pair(t, PAIR_CURSOR, A_REVERSE) : A_NORMAL;

		putf(y + 1 + c, 0, a, " %c %-18s", c == (int)t->v.sort ? '*' : ' ',
		     view_cols[c].title);
	}
	putf(y + 1 + COL_MAX, 0, A_DIM, " Enter: sort, Esc: back");
}

static const char *const help_text[] = {
	"udpdrop top: which socket drops UDP datagrams, and why",
	"",
	"Each row is a socket that dropped datagrams in this trace (a: also quiet",
	"ones). The lower panel holds drops that belong to no socket. Counts are",
	"datagrams, exact, from the kernel's drop points; rates cover the last",
	"refresh interval. Kernel: compares udpdrop's counts with the netns's own",
	"counters (nstat names) since udpdrop started.",
	"",
	"  q F10       quit                   h F1 ?      this help",
	"  Up Down j k move                   PgUp PgDn   a page",
	"  Home End g G first, last row       Tab         the other panel",
	"  Enter       the row's detail       Esc         back",
	"  s F6        sort column menu       < >         previous, next sort column",
	"  r           reverse the sort       / F3        search (then n: next)",
	"  \\ F4        filter the rows        a           quiet sockets too",
	"  H           a port's SO_REUSEPORT sockets: one row, or one each",
	"  p           pause reading          Space       freeze the display",
	"  d           set the interval       + -         slower, faster refresh",
	"  Ctrl-L      redraw",
	"",
	"Filter terms (all must match): port:5001 pid:42 comm:named netns:blue",
	"cause:rcvbuf, or any text found in a column (10.0.0.2, [::1], udp).",
	"",
	"The detail (Enter) ends with the advice for each cause the row has: what",
	"happened, the evidence (numbers), the change (the exact sysctl or",
	"setsockopt, its value computed) and how to verify it; HINT is its change",
	"in short. Up Down PgUp PgDn Home End scroll it.",
	"",
	"Columns (-s NAME sorts by one from the start):",
	NULL,
};

static void draw_help(struct tui *t)
{
	char line[256];
	int n = 0, rows = LINES - 1;

	/* the text, then one line per column; scrolled by help_scroll */
	for (int i = 0; help_text[i]; i++, n++)
		if (n >= t->help_scroll && n - t->help_scroll < rows)
			put(n - t->help_scroll, 1, i == 0 ? A_BOLD : A_NORMAL, help_text[i]);
	for (int c = 0; c < COL_MAX; c++, n++) {
		snprintf(line, sizeof(line), "%-9s %-7s %s", view_cols[c].title, view_cols[c].name,
			 view_cols[c].help);
		if (n >= t->help_scroll && n - t->help_scroll < rows)
			put(n - t->help_scroll, 3, A_NORMAL, line);
	}
	if (t->help_scroll > n - rows)
		t->help_scroll = n - rows > 0 ? n - rows : 0;
	put(LINES - 1, 0, A_BOLD, n > rows ? "Up/Down: scroll; any other key: back"
					   : "Any key: back");
}

/* ---- detail view --------------------------------------------------------- */

/* detail_scroll for End: resolved by the next draw */
#define DETAIL_END (1 << 20)

/* One line of the detail text; lines above the scroll are skipped. */
struct dctx {
	struct tui *t;
	int y, line;
};

static int dline(struct dctx *d)
{
	int y = d->line++ - d->t->detail_scroll + 1;

	return y >= 1 && y < LINES - 1 ? y : -1;
}

static void dput(struct dctx *d, attr_t a, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void dput(struct dctx *d, attr_t a, const char *label, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int w = COLS - 12, y;
	const char *p = buf;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (w < 10)
		w = 10;
	/* word-wrap: continuation lines sit under the text, not the label */
	do {
		int n = (int)strlen(p), cut = n;

		if (n > w) {
			cut = w;
			while (cut > w / 2 && p[cut] != ' ')
				cut--;
			if (p[cut] != ' ')
				cut = w;
		}
		y = dline(d);
		if (y >= 0) {
			char piece[4096];

			snprintf(piece, sizeof(piece), "%.*s", cut, p);
			if (p == buf)
				putf(y, 1, pair(d->t, PAIR_LABEL, A_BOLD), "%-9s", label);
			put(y, 11, a, piece);
		}
		p += cut;
		while (*p == ' ')
			p++;
	} while (*p);
}

/* How the socket overflows, from its recent history: what the advice
 * (which sees the whole span) cannot tell. */
static void rcvbuf_pattern(struct dctx *d, const struct row *r, const float *hist,
			   const int8_t *queue, int nhist)
{
	struct tui *t = d->t;
	double rx = t->m->have_rx ? r->rx_rate : 0, arrival = r->rate + rx;

	switch (view__rcvbuf_pattern(hist, queue, nhist, t->m->have_rx, rx)) {
	case RCVBUF_NOT_READING:
		dput(d, pair(t, PAIR_WARN, A_BOLD), "pattern", "nothing was delivered to this socket in "
		     "the last interval while %.0f datagrams/s were dropped: the queue is full and the "
		     "application is not reading it. Check that the process (PID/COMM) is alive and "
		     "reads this socket; no buffer size helps a socket nobody reads.", r->rate);
		break;
	case RCVBUF_SUSTAINED:
		if (t->m->have_rx && arrival > 0)
			dput(d, A_NORMAL, "pattern", "the queue was full at nearly every refresh that saw "
			     "drops: arrivals outpace the reader (it kept up with %.0f%% of them last "
			     "interval, %.0f delivered/s of %.0f/s), so a bigger buffer only delays the drops",
			     100.0 * rx / arrival, rx, arrival);
		else
			dput(d, A_NORMAL, "pattern", "the queue was full at nearly every refresh that saw "
			     "drops: arrivals outpace the reader, so a bigger buffer only delays the drops");
		break;
	case RCVBUF_BURSTS:
		/* what was seen, not a fix: the advice below weighs the span */
		dput(d, A_NORMAL, "pattern", "the queue drained between the refreshes that saw drops: "
		     "bursts overflow it (see the advice below)");
		break;
	case RCVBUF_UNKNOWN: /* too few looks at the queue: say nothing */
	default:
		break;
	}
}

/* The advice for every cause the row has (advice.c), as report prints it. */
static void draw_advice(struct dctx *d, const struct row *r)
{
	struct tui *t = d->t;
	struct advice_finding *f = calloc(ADVICE_MAX, sizeof(*f));

	if (!f)
		return;
	for (int c = 0; c < CAUSE_MAX; c++) {
		struct advice_input in;
		char who[128];
		int n;

		if ((!r->cause[c] && !r->cause_skbs[c]) ||
		    (r->key.kind == ROW_FLOW && c != r->key.cause))
			continue;
		view__advice_input(&t->v, t->m, r, c, &in, who, sizeof(who));
		n = advice__build(&in, f, ADVICE_MAX);
		for (int k = 0; k < n; k++) {
			dline(d);
			dput(d, A_BOLD, "advice", "%s: %s", cause__name(f[k].cause), f[k].what);
			dput(d, A_NORMAL, "evidence", "%s", f[k].evidence);
			dput(d, pair(t, PAIR_WARN, A_BOLD), "change", "%s", f[k].change);
			dput(d, A_NORMAL, "verify", "%s", f[k].verify);
		}
	}
	free(f);
}

/* A group of sockets on one port: the sums, then each member. */
static void draw_group_detail(struct tui *t, struct dctx *d, const float *hist, int nh)
{
	struct model *m = t->m;
	const struct row_key *gk = &t->detail_key;
	char a[64], b[64], c[64], nsbuf[64], spark[4 * 512];
	uint64_t drops = 0, causes[CAUSE_MAX] = {};
	double rate = 0, rx = 0;
	int n = 0;

	fmt_endpoint(a, sizeof(a), gk->family, gk->daddr, gk->dport);
	for (int i = 0; i < m->nview_sockets; i++) {
		const struct row *r = m->view_sockets[i];
		struct row_key k;

		if (!view__group_key(r, &k) || memcmp(&k, gk, sizeof(k)))
			continue;
		n++;
		drops += r->drops;
		rate += r->rate;
		rx += r->rx_rate;
		for (int x = 0; x < CAUSE_MAX; x++)
			causes[x] += r->cause[x];
	}
	dput(d, A_BOLD, "service", "%s, %s, netns %s (%u): %d sockets bound to it (SO_REUSEPORT: "
	     "the kernel spreads datagrams over them)", a, proto_name(gk->proto, c, sizeof(c)),
	     model__netns_label(m, gk->netns, nsbuf, sizeof(nsbuf)), gk->netns, n);
	fmt_count(b, sizeof(b), drops);
	if (m->have_rx)
		dput(d, A_NORMAL, "drops", "%s datagrams, %.0f/s now; delivered %.0f/s now", b, rate, rx);
	else
		dput(d, A_NORMAL, "drops", "%s datagrams, %.0f/s now", b, rate);
	for (int x = 0; x < CAUSE_MAX; x++)
		if (causes[x]) {
			fmt_count(b, sizeof(b), causes[x]);
			dput(d, A_NORMAL, "cause", "%-13s %s datagrams: %s", cause__name(x), b,
			     cause__describe(x));
		}
	if (nh && COLS > 12) {
		float max = 0;
		int w = COLS - 12 < 512 ? COLS - 12 : 512;

		view__sparkline(spark, sizeof(spark), hist, nh, w, t->utf8, &max);
		dput(d, A_NORMAL, "history", "drops/s of all members, peak %.0f/s", max);
		int y = dline(d);

		if (y >= 0)
			put(y, 11, pair(t, PAIR_SPARK, A_BOLD), spark);
	}
	dput(d, A_BOLD, "members", "%-8s %-20s %9s %8s %8s %8s %6s", "COOKIE", "PID/COMM", "DROPS",
	     "DROPS/s", "RX/s", "RCVBUF", "QUEUE");
	for (int i = 0; i < m->nview_sockets; i++) {
		const struct row *r = m->view_sockets[i];
		struct row_key k;
		char owner[64], q[16];

		if (!view__group_key(r, &k) || memcmp(&k, gk, sizeof(k)))
			continue;
		if (r->sock.npids)
			snprintf(owner, sizeof(owner), "%d/%s", r->sock.pids[0], r->sock.comm);
		else
			snprintf(owner, sizeof(owner), "%s", r->sock.kowner[0] ? r->sock.kowner : "-");
		fmt_count(b, sizeof(b), r->drops);
		fmt_bytes(c, sizeof(c), r->sock.rcvbuf);
		snprintf(q, sizeof(q), "%.0f%%", r->sock.have_mem && r->sock.rcvbuf
			 ? 100.0 * r->sock.rmem / r->sock.rcvbuf : 0);
		dput(d, A_NORMAL, "", "%-8llu %-20.20s %9s %8.0f %8s %8s %6s",
		     (unsigned long long)r->key.cookie, owner, b, r->rate,
		     m->have_rx ? (snprintf(a, sizeof(a), "%.0f", r->rx_rate), a) : "-", c, q);
	}
	dline(d);
	dput(d, A_NORMAL, "advice", "one member dropping while others idle means the kernel's hash "
	     "sends it more flows than it can read; all dropping means the service as a whole is "
	     "too slow. H shows one row per socket, each with its own advice.");
}

static void draw_detail(struct tui *t)
{
	struct model *m = t->m;
	const struct row *r = htab__find(&m->rows, &t->detail_key);
	struct dctx d = { .t = t };
	char a[64], b[64], c[64], nsbuf[64];
	float hist[HIST_LEN], dt[HIST_LEN];
	int8_t queue[HIST_LEN];
	int nh = view__history(&t->v, &t->detail_key, hist, queue, dt, HIST_LEN);

	put(0, 0, A_BOLD, "udpdrop top - detail (Esc: back, Up/Down/PgUp/PgDn: scroll)");
	if (t->detail_key.kind == VIEW_ROW_GROUP) {
		draw_group_detail(t, &d, hist, nh);
		goto clamp;
	}
	if (!r) {
		put(2, 1, A_NORMAL, "this row is no longer tracked");
		return;
	}
	if (r->key.kind == ROW_SOCKET && r->have_sock) {
		const struct sock_info *s = &r->sock;

		fmt_endpoint(a, sizeof(a), s->family, s->saddr, s->sport);
		if (s->dport)
			fmt_endpoint(b, sizeof(b), s->family, s->daddr, s->dport);
		else
			snprintf(b, sizeof(b), "*");
		dput(&d, A_BOLD, "socket", "%s -> %s  %s %s, netns %s (%u)", a, b,
		     proto_name(s->proto, c, sizeof(c)), s->family == 10 ? "inet6" : "inet",
		     model__netns_label(m, r->key.netns, nsbuf, sizeof(nsbuf)), r->key.netns);
		if (s->npids)
			dput(&d, A_NORMAL, "owner", "%d/%s%s  cookie %llu  inode %u  %s",
			     s->pids[0], s->comm,
			     s->npids > 1 ? " and other processes share it" : "",
			     (unsigned long long)r->key.cookie, s->inode,
			     r->sock_alive ? "open" : "closed");
		/* its owner's Kubernetes pod (pods.h), as serve labels it */
		if (s->npids && model__pod(m, r)) {
			char pl[256];

			pods__label(model__pod(m, r), pl, sizeof(pl));
			dput(&d, A_NORMAL, "pod", "%s  uid %s", pl + strlen("pod "),
			     model__pod(m, r)->uid);
		}
		else if (s->kowner[0])
			dput(&d, A_NORMAL, "owner", "%s  cookie %llu  inode %u  %s", s->kowner,
			     (unsigned long long)r->key.cookie, s->inode, r->sock_alive ? "open" : "closed");
		else
			dput(&d, A_NORMAL, "owner", "no process found  cookie %llu  inode %u  %s",
			     (unsigned long long)r->key.cookie, s->inode, r->sock_alive ? "open" : "closed");
	} else if (r->key.kind == ROW_SOCKET) {
		dput(&d, A_BOLD, "socket", "cookie %llu (gone before udpdrop could read it)",
		     (unsigned long long)r->key.cookie);
	} else {
		row__flow(r, a, sizeof(a));
		dput(&d, A_BOLD, "flow", "%s  %s, netns %s: no socket", a,
		     proto_name(r->key.proto, c, sizeof(c)),
		     r->key.netns ? model__netns_label(m, r->key.netns, nsbuf, sizeof(nsbuf)) : "unknown");
	}
	fmt_count(a, sizeof(a), r->drops);
	fmt_count(b, sizeof(b), r->skbs);
	if (m->have_rx && r->key.kind == ROW_SOCKET)
		dput(&d, A_NORMAL, "drops", "%s datagrams (%s skb events), %.0f/s now; delivered %llu, %.0f/s now",
		     a, b, r->rate, (unsigned long long)r->rx, r->rx_rate);
	else
		dput(&d, A_NORMAL, "drops", "%s datagrams (%s skb events), %.0f/s now", a, b, r->rate);
	for (int k = 0; k < CAUSE_MAX; k++) {
		if (!r->cause[k] && !r->cause_skbs[k])
			continue;
		fmt_count(a, sizeof(a), r->cause[k]);
		dput(&d, A_NORMAL, "cause", "%-13s %s datagrams (%.0f%%): %s", cause__name(k), a,
		     r->drops ? 100.0 * r->cause[k] / r->drops : 0, cause__describe(k));
	}
	for (int k = 0; k < r->nreasons; k++) {
		fmt_count(a, sizeof(a), r->reasons[k].drops);
		fmt_count(b, sizeof(b), r->reasons[k].skbs);
		dput(&d, A_NORMAL, "reason", "%-22s %s datagrams, %s skb events%s%s",
		     model__reason_name(m, r->reasons[k].reason, c, sizeof(c)), a, b,
		     row__reason_shared(r, k) ? ", " : "",
		     row__reason_shared(r, k) ? cause__name(r->reasons[k].cause) : "");
	}
	for (int k = 0; k < r->nlocs; k++) {
		fmt_count(a, sizeof(a), r->locs[k].skbs);
		dput(&d, A_NORMAL, "location", "%-32s %s skb events",
		     ksyms__format(&m->ksyms, r->locs[k].addr, c, sizeof(c)), a);
	}
	if (r->gro_skbs) {
		/* why the kernel's own count below says less */
		fmt_count(a, sizeof(a), r->gro_dgrams);
		fmt_count(b, sizeof(b), r->gro_skbs);
		dput(&d, A_NORMAL, "gro", "%s datagrams came in %s GSO/GRO skbs: the kernel counts "
		     "each skb once", a, b);
	}
	if (r->key.kind == ROW_SOCKET && r->have_sock && r->sock.have_mem) {
		fmt_bytes(a, sizeof(a), r->sock.rcvbuf);
		fmt_bytes(b, sizeof(b), r->sock.rmem);
		dput(&d, A_NORMAL, "buffer", "rcvbuf %s (%u B), queued now %s (%.0f%%)%s", a,
		     r->sock.rcvbuf, b, r->sock.rcvbuf ? 100.0 * r->sock.rmem / r->sock.rcvbuf : 0,
		     "");
		if (r->queue_peak)
			dput(&d, A_NORMAL, "", "queue peak %u B (%.0f%% of rcvbuf) since start",
			     r->queue_peak, r->sock.rcvbuf ? 100.0 * r->queue_peak / r->sock.rcvbuf : 0);
		dput(&d, A_NORMAL, "kernel", "the socket's own drop counter (ss -uam d): %u, +%u since udpdrop started%s",
		     r->sock.drops, r->sock.drops - r->sock.drops_base,
		     r->sock_alive ? "" : ", when last read before it closed");
	}

	/* the history: one mark per refresh, as wide as the screen allows */
	int w = COLS - 12;
	float max = 0;
	char spark[4 * 512];

	if (w > 512)
		w = 512;
	if (nh && w > 0) {
		int shown = nh < w ? nh : w;
		double span = 0;

		for (int i = nh - shown; i < nh; i++)
			span += dt[i];
		view__sparkline(spark, sizeof(spark), hist, nh, w, t->utf8, &max);
		dput(&d, A_NORMAL, "history", "drops/s, last %.0f s (a mark per refresh), peak %.0f/s",
		     span, max);
		int y = dline(&d);

		if (y >= 0)
			put(y, 11, pair(t, PAIR_SPARK, A_BOLD), spark);
	}

	/* what to do */
	enum cause mc = r->key.kind == ROW_SOCKET ? row__main_cause(r) : r->key.cause;

	dline(&d);
	dput(&d, A_BOLD, "why", "%s: %s", cause__name(mc), cause__describe(mc));
	if (r->key.kind == ROW_FLOW)
		dput(&d, A_NORMAL, "", "no socket: %s", row__flow_why(r));
	if (mc == CAUSE_RCVBUF && r->key.kind == ROW_SOCKET)
		rcvbuf_pattern(&d, r, hist, queue, nh);
	draw_advice(&d, r);
clamp:
	if (t->detail_scroll >= DETAIL_END) {
		/* End: the text's last line on the screen's last but one */
		t->detail_scroll = d.line - LINES + 2 > 0 ? d.line - LINES + 2 : 0;
		erase();
		draw_detail(t);
		return;
	}
	/* keep the scroll inside the text */
	if (t->detail_scroll > d.line - 3)
		t->detail_scroll = d.line - 3 > 0 ? d.line - 3 : 0;
}

/* ---- one frame ----------------------------------------------------------- */

static void draw(struct tui *t)
{
	erase();
	if (t->mode == MODE_HELP) {
		draw_help(t);
	} else if (t->mode == MODE_DETAIL) {
		draw_detail(t);
		draw_status(t);
	} else {
		int y = draw_header(t);

		draw_tables(t, y);
		if (t->mode == MODE_SORT)
			draw_sort_menu(t, y);
		draw_status(t);
	}
	wnoutrefresh(stdscr);
	doupdate();
}

/* ---- input --------------------------------------------------------------- */

static const double steps[] = { 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600 };

static void step_interval(struct tui *t, int dir)
{
	int i = 0;

	/* the nearest step in that direction */
	if (dir > 0) {
		while (i < (int)ARRAY_SIZE(steps) - 1 && steps[i] <= t->interval + 1e-9)
			i++;
	} else {
		i = ARRAY_SIZE(steps) - 1;
		while (i > 0 && steps[i] >= t->interval - 1e-9)
			i--;
	}
	t->interval = steps[i];
	char sb[32];

	set_status(t, false, "refresh every %s s", secs(sb, sizeof(sb), t->interval));
	reschedule(t);
}

static void rebuild(struct tui *t)
{
	if (view__refresh(&t->v, t->m))
		set_status(t, true, "out of memory building the view");
}

/* Enter in a prompt, or each key of an incremental one. */
static void prompt_apply(struct tui *t, bool final)
{
	const char *why;

	switch (t->prompt) {
	case PROMPT_SEARCH:
		snprintf(t->v.search, sizeof(t->v.search), "%s", t->input);
		if (final)
			break; /* Enter: the cursor stays where typing put it */
		/* each key: from the cursor's own row, so "u", "ud", "udp" stay put */
		if (t->input[0] && !view__search(&t->v, false))
			set_status(t, true, "no match for \"%s\"", t->input);
		else
			t->status[0] = 0;
		break;
	case PROMPT_FILTER:
		if (view__set_filter(&t->v, t->input, &why)) {
			set_status(t, true, "%s", why);
			return;
		}
		t->status[0] = 0;
		if (!t->frozen)
			rebuild(t);
		break;
	case PROMPT_INTERVAL:
		if (!final)
			return;
		double s;

		if (parse_seconds(t->input, 0.1, 3600, &s))
			set_status(t, true, "not an interval from 0.1 to 3600 s: \"%s\"", t->input);
		else {
			char sb[32];

			t->interval = s;
			set_status(t, false, "refresh every %s s", secs(sb, sizeof(sb), s));
			reschedule(t);
		}
		break;
	default:
		break;
	}
}

static void prompt_key(struct tui *t, int ch)
{
	size_t n = strlen(t->input);

	switch (ch) {
	case KEY_ESC:
		/* cancel: a filter goes back to what it was */
		if (t->prompt == PROMPT_FILTER) {
			const char *why;

			view__set_filter(&t->v, t->saved, &why);
			if (!t->frozen)
				rebuild(t);
		}
		t->prompt = PROMPT_NONE;
		t->status[0] = 0;
		return;
	case '\r':
	case '\n':
	case KEY_ENTER:
		prompt_apply(t, true);
		if (t->prompt == PROMPT_FILTER && t->status[0] && t->status_bad)
			return; /* stay in the prompt until the filter is valid */
		t->prompt = PROMPT_NONE;
		return;
	case KEY_F(3):
	case CTRL('n'):
		if (t->prompt == PROMPT_SEARCH && !view__search(&t->v, true))
			set_status(t, true, "no match for \"%s\"", t->input);
		return;
	case KEY_BACKSPACE:
	case 127:
	case CTRL('h'):
		if (n)
			t->input[n - 1] = 0;
		break;
	case CTRL('u'):
		t->input[0] = 0;
		break;
	default:
		if (ch >= 32 && ch < 127 && n + 1 < sizeof(t->input)) {
			t->input[n] = ch;
			t->input[n + 1] = 0;
		} else {
			return;
		}
	}
	/* search and filter follow each key, as in htop */
	if (t->prompt != PROMPT_INTERVAL)
		prompt_apply(t, false);
}

static void open_prompt(struct tui *t, enum prompt p, const char *init)
{
	t->prompt = p;
	snprintf(t->input, sizeof(t->input), "%s", init);
	snprintf(t->saved, sizeof(t->saved), "%s", init);
	t->status[0] = 0;
}

static void set_sort(struct tui *t, int col)
{
	t->v.sort = (col + COL_MAX) % COL_MAX;
	t->v.reverse = false;
	view__resort(&t->v);
}

/* Returns false to quit. */
static bool table_key(struct tui *t, int ch)
{
	struct view *v = &t->v;
	int page = (v->panel ? t->flows_h : t->table_h);

	if (page < 1)
		page = 1;
	switch (ch) {
	case 'q':
	case 'Q':
	case KEY_F(10):
		return false;
	case 'h':
	case '?':
	case KEY_F(1):
		t->mode = MODE_HELP;
		break;
	case 's':
	case KEY_F(6):
		t->mode = MODE_SORT;
		t->sort_idx = v->sort;
		break;
	case '<':
	case ',':
		set_sort(t, v->sort - 1);
		break;
	case '>':
	case '.':
		set_sort(t, v->sort + 1);
		break;
	case 'r':
	case 'I':
		v->reverse = !v->reverse;
		view__resort(v);
		break;
	case '/':
	case KEY_F(3):
		open_prompt(t, PROMPT_SEARCH, "");
		break;
	case 'n':
		if (v->search[0] && !view__search(v, true))
			set_status(t, true, "no match for \"%s\"", v->search);
		break;
	case '\\':
	case KEY_F(4):
		open_prompt(t, PROMPT_FILTER, v->filter);
		break;
	case 'p':
	case 'P':
		t->paused = !t->paused;
		set_status(t, false, t->paused ? "paused: counts are not read until p" :
						 "resumed: the next rates cover the pause");
		break;
	case ' ':
		t->frozen = !t->frozen;
		set_status(t, false, t->frozen ? "display frozen: tracing goes on (Space to thaw)" :
						 "display follows the trace again");
		if (!t->frozen)
			rebuild(t);
		break;
	case 'H':
		v->group = !v->group;
		set_status(t, false, v->group ? "sockets sharing a port (SO_REUSEPORT) shown as one row" :
						 "one row per socket");
		if (!t->frozen)
			rebuild(t);
		break;
	case 'a':
		t->m->opts.all = !t->m->opts.all;
		set_status(t, false, t->m->opts.all ? "quiet sockets shown from the next refresh" :
						       "only sockets that dropped, from the next refresh");
		break;
	case 'd':
		open_prompt(t, PROMPT_INTERVAL, "");
		break;
	case '+':
	case '=':
		step_interval(t, 1);
		break;
	case '-':
	case '_':
		step_interval(t, -1);
		break;
	case '\t':
		if (v->nflows || v->panel == 1)
			v->panel = !v->panel;
		break;
	case KEY_UP:
	case 'k':
		view__move(v, -1);
		break;
	case KEY_DOWN:
	case 'j':
		view__move(v, 1);
		break;
	case KEY_PPAGE:
		view__move(v, -page);
		break;
	case KEY_NPAGE:
		view__move(v, page);
		break;
	case KEY_HOME:
	case 'g':
		view__move_to(v, 0);
		break;
	case KEY_END:
	case 'G':
		view__move_to(v, 1 << 30);
		break;
	case '\r':
	case '\n':
	case KEY_ENTER: {
		const struct view_row *vr = view__current(v);

		if (vr) {
			t->detail_key = vr->key;
			t->detail_scroll = 0;
			t->mode = MODE_DETAIL;
		}
		break;
	}
	default:
		break;
	}
	return true;
}

static bool handle_key(struct tui *t, int ch)
{
	if (ch == KEY_RESIZE)
		return true; /* ncurses has resized stdscr: the next draw reflows */
	if (ch == CTRL('l')) {
		clearok(curscr, TRUE);
		return true;
	}
	if (t->prompt) {
		prompt_key(t, ch);
		return true;
	}
	switch (t->mode) {
	case MODE_HELP:
		if (ch == 'q' || ch == KEY_F(10))
			return false;
		if (ch == KEY_UP || ch == 'k' || ch == KEY_PPAGE)
			t->help_scroll -= ch == KEY_PPAGE && LINES > 3 ? LINES - 2 : 1;
		else if (ch == KEY_DOWN || ch == 'j' || ch == KEY_NPAGE)
			t->help_scroll += ch == KEY_NPAGE && LINES > 3 ? LINES - 2 : 1; /* draw_help clamps */
		else
			t->mode = MODE_TABLE;
		if (t->help_scroll < 0)
			t->help_scroll = 0;
		return true;
	case MODE_SORT:
		if (ch == KEY_UP || ch == 'k')
			t->sort_idx = (t->sort_idx + COL_MAX - 1) % COL_MAX;
		else if (ch == KEY_DOWN || ch == 'j')
			t->sort_idx = (t->sort_idx + 1) % COL_MAX;
		else if (ch == '\r' || ch == '\n' || ch == KEY_ENTER) {
			set_sort(t, t->sort_idx);
			t->mode = MODE_TABLE;
		} else if (ch == KEY_ESC || ch == 's' || ch == KEY_F(6) || ch == 'q')
			t->mode = MODE_TABLE;
		return true;
	case MODE_DETAIL:
		if (ch == KEY_ESC || ch == KEY_BACKSPACE || ch == 127 || ch == KEY_LEFT ||
		    ch == '\r' || ch == '\n' || ch == KEY_ENTER)
			t->mode = MODE_TABLE;
		else if (ch == 'q' || ch == KEY_F(10))
			return false;
		else if (ch == KEY_UP || ch == 'k')
			t->detail_scroll = t->detail_scroll > 0 ? t->detail_scroll - 1 : 0;
		else if (ch == KEY_DOWN || ch == 'j')
			t->detail_scroll++;
		else if (ch == KEY_NPAGE)
			t->detail_scroll += LINES > 6 ? LINES - 4 : 1;
		else if (ch == KEY_PPAGE) /* a page of at least one line: never down */
			t->detail_scroll = t->detail_scroll > (LINES > 6 ? LINES - 4 : 1)
						   ? t->detail_scroll - (LINES > 6 ? LINES - 4 : 1) : 0;
		else if (ch == KEY_HOME || ch == 'g')
			t->detail_scroll = 0;
		else if (ch == KEY_END || ch == 'G')
			t->detail_scroll = DETAIL_END; /* the draw puts the last line at the bottom */
		else if (ch == 'h' || ch == '?' || ch == KEY_F(1))
			t->mode = MODE_HELP;
		return true;
	default:
		return table_key(t, ch);
	}
}

/* ---- the loop ------------------------------------------------------------ */

static int do_refresh(struct tui *t, tui_refresh_fn refresh_fn, void *ctx)
{
	int err = refresh_fn(ctx);

	if (err) {
		set_status(t, true, "reading the drop counts failed: %s (retrying each interval)",
			   strerror(-err));
		return err;
	}
	t->refreshes++;
	cause_rates(t);
	view__record(&t->v, t->m);
	if (!t->frozen)
		rebuild(t);
	return 0;
}

int tui__run(struct model *m, const struct tui_opts *o, tui_refresh_fn refresh_fn,
	     void *ctx, volatile sig_atomic_t *stop)
{
	/* counts start at zero: the first refresh has a rate per cause too */
	struct tui t = { .m = m, .o = o, .interval = o->interval, .have_prev_cause = true };
	struct utsname un;
	int err = 0;

	if (view__init(&t.v))
		return -ENOMEM;
	t.v.env = tui_env;
	t.v.env_ctx = &t;
	t.v.sort = o->sort;
	t.v.reverse = o->reverse;
	gethostname(t.host, sizeof(t.host) - 1);
	if (!uname(&un))
		snprintf(t.kernel, sizeof(t.kernel), "%s", un.release);
	err = setup_terminal(&t);
	if (err) {
		view__free(&t.v);
		return err;
	}
	t.v.utf8 = t.utf8;
	log_tui = &t;
	log__set_sink(log_sink);
	rebuild(&t);

	/*
	 * The stop signals stay blocked except inside ppoll, which unblocks
	 * them atomically: one that lands between the check of *stop and the
	 * wait ends the wait at once instead of after a whole interval.
	 */
	sigset_t stops, waitmask;

	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGHUP);
	sigprocmask(SIG_BLOCK, &stops, &waitmask);
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGHUP);

	t.next = now_ns() + (uint64_t)(t.interval * 1e9);
	while (!*stop) {
		draw(&t);

		/* wait for a key or the next refresh, whichever comes first */
		uint64_t now = now_ns(), until = t.next;
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };

		/* a status message expires on its own: redraw then */
		if (t.status[0] && t.status_until > now && t.status_until < until)
			until = t.status_until;
		uint64_t wait = until > now ? until - now : 0;
		struct timespec ts = { .tv_sec = wait / 1000000000ull,
				       .tv_nsec = wait % 1000000000ull };
		int pr = ppoll(&pfd, 1, &ts, &waitmask);

		if (pr < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		/*
		 * ppoll delivers a pending signal only when it fails with
		 * EINTR; when input is ready at once it leaves the signal
		 * pending: open the window briefly so it is delivered now.
		 */
		if (pr > 0) {
			sigprocmask(SIG_SETMASK, &waitmask, NULL);
			sigprocmask(SIG_BLOCK, &stops, NULL);
		}
		/* the terminal went away (hangup, error): nobody is watching */
		if (pr > 0 && (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)))
			break;
		/* every key that is waiting (and KEY_RESIZE after SIGWINCH) */
		bool quit = false;
		int ch;

		while (!quit && (ch = getch()) != ERR)
			quit = !handle_key(&t, ch);
		if (quit)
			break;
		if (now_ns() < t.next)
			continue;
		t.next += (uint64_t)(t.interval * 1e9);
		/* late (a stopped terminal, a loaded host): no catch-up burst */
		if (t.next < now_ns())
			t.next = now_ns() + (uint64_t)(t.interval * 1e9);
		if (t.paused)
			continue;
		/* a failed read shows in the status line; the next may work */
		do_refresh(&t, refresh_fn, ctx);
		if (o->count && t.refreshes >= o->count)
			break;
	}
	sigprocmask(SIG_UNBLOCK, &stops, NULL);
	log__set_sink(NULL);
	log_tui = NULL;
	restore_terminal();
	view__free(&t.v);
	return err;
}
