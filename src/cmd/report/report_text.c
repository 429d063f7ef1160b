// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop report, the text output (report_internal.h): the header, then
 * each section, or the one --by table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reconcile.h"
#include "report_internal.h"

/* ---- text -------------------------------------------------------------- */

static void printable_line(struct strbuf *out, const char *label, const char *v)
{
	char *s = rp_xstrdup(v ? v : "");

	str_printable(s);
	sb_printf(out, "  %-10s %s\n", label, s[0] ? s : "-");
	free(s);
}

/* Recorded on a kernel without drop reasons: causes from locations. */
bool rp_report_sites(const struct report *rp)
{
	const char *from = rp_meta_get(rp, TRACE_META_CAUSES_FROM);

	return from && !strcmp(from, "location");
}

static void text_header(const struct report *rp, struct strbuf *out)
{
	const char *netns = rp_meta_get(rp, "netns"), *port = rp_meta_get(rp, "port");
	char when[64], buf[128], *path = rp_xstrdup(rp->path);

	str_printable(path); /* a name listed from a directory may hold anything */
	sb_printf(out, "udpdrop report: %s\n", path);
	free(path);
	if (rp->status == TRACE_CUT)
		sb_printf(out, "\n*** CUT SHORT: %s ***\n"
			  "*** the recording did not end cleanly: this report covers the %llu whole block%s there ***\n\n",
			  rp->message, (unsigned long long)rp->blocks, rp->blocks == 1 ? "" : "s");
	else if (rp->status == TRACE_CORRUPT)
		sb_printf(out, "\n*** CORRUPT: %s ***\n"
			  "*** this report covers the %llu block%s before offset %llu only ***\n\n",
			  rp->message, (unsigned long long)rp->blocks, rp->blocks == 1 ? "" : "s",
			  (unsigned long long)rp->error_offset);
	printable_line(out, "file:", rp->message);
	printable_line(out, "host:", rp_meta_get(rp, TRACE_META_HOST));
	printable_line(out, "kernel:", rp_meta_get(rp, TRACE_META_KERNEL));
	rp_fmt_start(when, sizeof(when), rp_meta_get(rp, TRACE_META_START));
	printable_line(out, "started:", when);
	snprintf(buf, sizeof(buf), "%.1f s, first to last of %llu snapshot%s%s", rp_duration_s(rp),
		 (unsigned long long)rp->ncounts, rp->ncounts == 1 ? "" : "s",
		 rp->have_end ? "" : " (no END: up to the last whole block)");
	printable_line(out, "duration:", buf);
	printable_line(out, "command:", rp_meta_get(rp, TRACE_META_CMDLINE));
	const char *pid = rp_meta_get(rp, "pid"), *tree = rp_meta_get(rp, "pid_tree");

	/* -N's netns by its name where the recorder knew one, as top shows it */
	char nsname[96] = "";

	if (netns && strcmp(netns, "0")) {
		char key[48];
		const char *name;

		snprintf(key, sizeof(key), "netns_name.%s", netns);
		name = rp_meta_get(rp, key);
		if (name && name[0])
			snprintf(nsname, sizeof(nsname), "%.63s (inode %.20s)", name, netns);
	}
	snprintf(buf, sizeof(buf), "netns %s, port %s%s%s%s",
		 nsname[0] ? nsname : netns && strcmp(netns, "0") ? netns : "any",
		 port && strcmp(port, "0") ? port : "any",
		 pid && strcmp(pid, "0") ? ", pid " : "",
		 pid && strcmp(pid, "0") ? pid : "",
		 pid && strcmp(pid, "0") && tree && !strcmp(tree, "1") ? " and its children" : "");
	printable_line(out, "filters:", buf);
	struct strbuf ev = {};

	rp_fmt_events(rp, &ev);
	printable_line(out, "events:", ev.buf ? ev.buf : "");
	sb_free(&ev);
	printable_line(out, "recorder:", rp_meta_get(rp, TRACE_META_VERSION));
	if (rp_report_sites(rp)) {
		char note[512];

		cause__sites_note(note, sizeof(note));
		printable_line(out, "causes:", note);
	}
	sb_printf(out, "\n");
}

static void text_sockets(const struct report *rp, const struct agg *a, uint64_t top,
			 struct strbuf *out)
{
	int shown = a->nsocks < (int64_t)top ? a->nsocks : (int)top;
	int wl = 5, wr = 6, wn = 10, wo = 8;
	char l[96], r[96], o[64], d[32], s[32], rb[32], ns[64];

	sb_printf(out, "Sockets (the last snapshot; drops are datagrams, skbs the kernel's events):\n");
	if (!a->nsocks) {
		sb_printf(out, "  none dropped\n\n");
		return;
	}
	for (int i = 0; i < shown; i++) {
		rp_fmt_local(l, sizeof(l), &a->socks[i]);
		rp_fmt_remote(r, sizeof(r), &a->socks[i]);
		rp_fmt_netns(rp, ns, sizeof(ns), a->socks[i].netns);
		rp_fmt_owner(rp, o, sizeof(o), &a->socks[i]);
		if ((int)strlen(l) > wl)
			wl = strlen(l);
		if ((int)strlen(r) > wr)
			wr = strlen(r);
		if ((int)strlen(ns) > wn)
			wn = strlen(ns);
		if ((int)strlen(o) > wo)
			wo = strlen(o);
	}
	sb_printf(out, "  %-*s  %-*s  %-*s  %-*s  %10s  %10s  %-13s  %9s\n", wl, "LOCAL", wr,
		  "REMOTE", wn, "NETNS", wo, "PID/COMM", "DROPS", "SKBS", "CAUSE", "RCVBUF");
	for (int i = 0; i < shown; i++) {
		const struct agg_sock *k = &a->socks[i];

		rp_fmt_local(l, sizeof(l), k);
		rp_fmt_remote(r, sizeof(r), k);
		rp_fmt_owner(rp, o, sizeof(o), k);
		fmt_count(d, sizeof(d), k->row.drops);
		fmt_count(s, sizeof(s), k->row.skbs);
		rp_fmt_netns(rp, ns, sizeof(ns), k->netns);
		if (k->sock && k->sock->rcvbuf)
			fmt_bytes(rb, sizeof(rb), k->sock->rcvbuf);
		else
			snprintf(rb, sizeof(rb), "?");
		sb_printf(out, "  %-*s  %-*s  %-*s  %-*s  %10s  %10s  %-13s  %9s\n", wl, l, wr, r,
			  wn, ns, wo, o, d, s, cause__name(row__main_cause(&k->row)), rb);
	}
	if (shown < a->nsocks)
		sb_printf(out, "  ... %d more socket%s (--top to show more)\n",
			  a->nsocks - shown, a->nsocks - shown == 1 ? "" : "s");
	sb_printf(out, "\n");
}

static void text_flows(const struct report *rp, const struct agg *a, struct strbuf *out)
{
	char f[200], d[32], s[32], ns[64];
	int wf = 4, wn = 10;

	sb_printf(out, "Drops that belong to no socket:\n");
	if (!a->nflows) {
		sb_printf(out, "  none\n\n");
		return;
	}
	for (int i = 0; i < a->nflows; i++) {
		rp_fmt_flow(f, sizeof(f), &a->flows[i]);
		rp_fmt_netns(rp, ns, sizeof(ns), a->flows[i].netns);
		if ((int)strlen(f) > wf)
			wf = strlen(f);
		if ((int)strlen(ns) > wn)
			wn = strlen(ns);
	}
	sb_printf(out, "  %-13s  %-*s  %-*s  %10s  %10s\n", "CAUSE", wn, "NETNS", wf, "FLOW",
		  "DROPS", "SKBS");
	for (int i = 0; i < a->nflows; i++) {
		const struct agg_flow *fl = &a->flows[i];

		rp_fmt_flow(f, sizeof(f), fl);
		fmt_count(d, sizeof(d), fl->row.drops);
		fmt_count(s, sizeof(s), fl->row.skbs);
		rp_fmt_netns(rp, ns, sizeof(ns), fl->netns);
		sb_printf(out, "  %-13s  %-*s  %-*s  %10s  %10s\n", cause__name(fl->cause), wn, ns,
			  wf, f, d, s);
	}
	sb_printf(out, "\n");
}

/* META "missed" (record_snapshot.c write_missed): 0 when absent (an older file). */
uint64_t rp_meta_missed(const struct report *rp)
{
	const char *v = rp_meta_get(rp, "missed");
	char *end;
	unsigned long long n;

	if (!v)
		return 0;
	errno = 0;
	n = strtoull(v, &end, 10);
	return errno || end == v || *end ? 0 : n;
}

static void text_totals(const struct report *rp, const struct agg *a, struct strbuf *out)
{
	char d[32], s[32];

	sb_printf(out, "Totals by cause:\n");
	sb_printf(out, "  %-13s  %10s  %10s\n", "CAUSE", "DROPS", "SKBS");
	for (int c = 0; c < CAUSE_MAX; c++) {
		if (!a->cause[c] && !a->cause_skbs[c])
			continue;
		fmt_count(d, sizeof(d), a->cause[c]);
		fmt_count(s, sizeof(s), a->cause_skbs[c]);
		sb_printf(out, "  %-13s  %10s  %10s\n", cause__name(c), d, s);
	}
	fmt_count(d, sizeof(d), a->drops);
	fmt_count(s, sizeof(s), a->skbs);
	sb_printf(out, "  %-13s  %10s  %10s\n", "total", d, s);
	if (rp_meta_missed(rp)) {
		fmt_count(d, sizeof(d), rp_meta_missed(rp));
		sb_printf(out, "  and %s events the kernel skipped (a drop inside a drop on one CPU): in no count above\n", d);
	}
	sb_printf(out, "\n");
}

static void text_detail(const struct report *rp, const struct agg *a, uint64_t top,
			struct strbuf *out)
{
	int shown = a->nsocks < (int64_t)top ? a->nsocks : (int)top;
	char l[96], o[64], ns[64], n[160], d[32], s[32];

	if (!shown)
		return;
	sb_printf(out, "Kernel reasons and locations, per socket:\n");
	for (int i = 0; i < shown; i++) {
		const struct agg_sock *k = &a->socks[i];

		rp_fmt_local(l, sizeof(l), k);
		rp_fmt_owner(rp, o, sizeof(o), k);
		rp_fmt_netns(rp, ns, sizeof(ns), k->netns);
		sb_printf(out, "  %s  netns %s  %s\n", l, ns, o);
		for (int j = 0; j < k->row.nreasons; j++) {
			rp_fmt_reason(n, sizeof(n), rp, k->row.reasons[j].reason);
			fmt_count(d, sizeof(d), k->row.reasons[j].drops);
			fmt_count(s, sizeof(s), k->row.reasons[j].skbs);
			sb_printf(out, "    reason   %-40s %10s drops %10s skbs  (%s)\n", n, d, s,
				  cause__name(k->row.reasons[j].cause));
		}
		for (int j = 0; j < k->row.nlocs; j++) {
			rp_fmt_loc(n, sizeof(n), rp, k->row.locs[j].addr);
			fmt_count(d, sizeof(d), k->row.locs[j].drops);
			fmt_count(s, sizeof(s), k->row.locs[j].skbs);
			sb_printf(out, "    at       %-40s %10s drops %10s skbs\n", n, d, s);
		}
		if (k->row.gro_skbs) {
			/* why the kernel's sk_drops and counters say less */
			fmt_count(d, sizeof(d), k->row.gro_dgrams);
			fmt_count(s, sizeof(s), k->row.gro_skbs);
			sb_printf(out, "    gro      %s of the drops came in %s GSO/GRO skbs, which the kernel "
				  "counts once each (sk_drops, UdpRcvbufErrors)\n", d, s);
		}
	}
	sb_printf(out, "\n");
}

static void text_recon(const struct report *rp, const struct agg *a, struct strbuf *out)
{
	char k[32], u[32], ns[64], verdict[64], gro[128];
	int shown = 0, wn = 10;

	sb_printf(out, "Reconciliation with the kernel's counters (last snapshot minus first, per netns):\n");
	if (!rp->nmibs) {
		sb_printf(out, "  no kernel counters in the file\n");
		return;
	}
	for (int i = 0; i < a->nrecon; i++) {
		rp_fmt_netns(rp, ns, sizeof(ns), a->recon[i].netns);
		if ((a->recon[i].kernel || a->recon[i].udpdrop) && (int)strlen(ns) > wn)
			wn = strlen(ns);
	}
	for (int i = 0; i < a->nrecon; i++) {
		const struct agg_recon *r = &a->recon[i];
		int64_t diff = rp_recon_diff(r);

		if (!r->kernel && !r->udpdrop)
			continue;
		if (!shown++)
			sb_printf(out, "  %-*s  %-14s  %10s  %10s  %-12s  %s\n", wn, "NETNS", "CAUSE",
				  "KERNEL", "UDPDROP", "VERDICT", "COUNTERS");
		rp_fmt_netns(rp, ns, sizeof(ns), r->netns);
		if (r->have_kernel)
			fmt_count(k, sizeof(k), r->kernel);
		else
			snprintf(k, sizeof(k), "n/a");
		fmt_count(u, sizeof(u), r->udpdrop);
		if (!r->have_kernel)
			snprintf(verdict, sizeof(verdict), "no counter");
		else if (!diff)
			snprintf(verdict, sizeof(verdict), "match");
		else
			snprintf(verdict, sizeof(verdict), "differ by %llu",
				 (unsigned long long)rp_recon_gap(r));
		reconcile__units_note(r->cause, r->udpdrop, r->udpdrop_datagrams, gro, sizeof(gro));
		sb_printf(out, "  %-*s  %-14s  %10s  %10s  %-12s  %s%s\n", wn, ns, cause__name(r->cause),
			  k, u, verdict, r->counters[0] ? r->counters : "-", gro);
	}
	if (!shown)
		sb_printf(out, "  no drops on either side (%u netns with counters)\n", rp->nmibs);
}

static void text_timeline(const struct report *rp, struct strbuf *out)
{
	struct tl_row *rows, *m;
	int n = rp_timeline(rp, &rows), nm, dec;
	char off[32], rate[32], top[32];
	double max = 0;

	sb_printf(out, "Timeline (drops/s: datagrams per second in each interval between snapshots;\n"
		  "offsets in s from the first snapshot):\n");
	if (!n) {
		sb_printf(out, "  fewer than 2 snapshots: no intervals\n\n");
		free(rows);
		return;
	}
	nm = rp_timeline_merge(rows, n, REPORT_TIMELINE_LINES, &m);
	dec = rp_tl_decimals(m, nm);
	for (int i = 0; i < nm; i++)
		if (rp_tl_rate(&m[i]) > max)
			max = rp_tl_rate(&m[i]);
	if (nm < n)
		sb_printf(out, "  (%d intervals merged evenly into %d lines of %d or %d)\n", n, nm,
			  n / nm, (n + nm - 1) / nm);
	rp_fmt_rate(top, sizeof(top), max);
	sb_printf(out, "  %9s  %9s  each # is 1/%d of the busiest, %s/s\n", "OFFSET", "DROPS/S",
		  REPORT_BAR_MAX, top);
	for (int i = 0; i < nm; i++) {
		double r = rp_tl_rate(&m[i]);
		int bar = max > 0 ? (int)(r * REPORT_BAR_MAX / max + 0.5) : 0;

		if (bar > REPORT_BAR_MAX)
			bar = REPORT_BAR_MAX;
		if (!bar && m[i].drops)
			bar = 1;
		snprintf(off, sizeof(off), "+%.*f", dec, m[i].start_ns / 1e9);
		rp_fmt_rate(rate, sizeof(rate), r);
		sb_printf(out, "  %7s s  %7s/s", off, rate);
		if (bar)
			sb_printf(out, "  %.*s", bar,
				  "##################################################");
		sb_printf(out, "\n");
	}
	sb_printf(out, "\n");
	free(m);
	free(rows);
}

static void text_by_cause(const struct agg *a, struct strbuf *out)
{
	struct contrib top[BY_CAUSE_TOP];
	char d[32], s[32], sh[16], who[200], list[720];

	sb_printf(out, "Drops by cause (the last snapshot; SHARE of all datagrams dropped):\n");
	if (!a->drops && !a->skbs) {
		sb_printf(out, "  none dropped\n");
		return;
	}
	sb_printf(out, "  %-13s  %10s  %10s  %6s  %s\n", "CAUSE", "DROPS", "SKBS", "SHARE",
		  "MOST FROM (socket or flow: drops)");
	for (int c = 0; c < CAUSE_MAX; c++) {
		int nt;
		size_t o = 0;

		if (!a->cause[c] && !a->cause_skbs[c])
			continue;
		fmt_count(d, sizeof(d), a->cause[c]);
		fmt_count(s, sizeof(s), a->cause_skbs[c]);
		snprintf(sh, sizeof(sh), "%.1f%%", a->drops ? 100.0 * a->cause[c] / a->drops : 0.0);
		nt = rp_cause_contribs(a, c, top);
		list[0] = 0;
		for (int i = 0; i < nt; i++) {
			rp_fmt_contrib(who, sizeof(who), a, &top[i]);
			fmt_count(d, sizeof(d), top[i].drops);
			if (o < sizeof(list))
				o += snprintf(list + o, sizeof(list) - o, "%s%s: %s",
					      i ? ", " : "", who, d);
		}
		fmt_count(d, sizeof(d), a->cause[c]);
		sb_printf(out, "  %-13s  %10s  %10s  %6s  %s\n", cause__name(c), d, s, sh,
			  list[0] ? list : "-");
	}
}

static void text_by_reason(const struct report *rp, struct strbuf *out)
{
	struct row_reason *v;
	int n = rp_by_reason(rp, &v), w = 6;
	char name[160], d[32], s[32];

	sb_printf(out, "Drops by kernel reason (the last snapshot; names from the file's REASONS table):\n");
	if (!n) {
		sb_printf(out, "  none dropped\n");
		free(v);
		return;
	}
	for (int i = 0; i < n; i++) {
		rp_fmt_reason(name, sizeof(name), rp, v[i].reason);
		if ((int)strlen(name) > w)
			w = strlen(name);
	}
	sb_printf(out, "  %-*s  %5s  %10s  %10s  %s\n", w, "REASON", "VALUE", "DROPS", "SKBS",
		  "CAUSE");
	for (int i = 0; i < n; i++) {
		rp_fmt_reason(name, sizeof(name), rp, v[i].reason);
		fmt_count(d, sizeof(d), v[i].drops);
		fmt_count(s, sizeof(s), v[i].skbs);
		sb_printf(out, "  %-*s  %5u  %10s  %10s  %s\n", w, name, v[i].reason, d, s,
			  cause__name(v[i].cause));
	}
	free(v);
}

static void text_by_location(const struct report *rp, struct strbuf *out)
{
	struct row_loc *v;
	int n = rp_by_location(rp, &v), w = 8;
	char name[160], addr[32], d[32], s[32];

	sb_printf(out, "Drops by location (the last snapshot; symbols from the file's SYMBOLS table):\n");
	if (!n) {
		sb_printf(out, "  none dropped\n");
		free(v);
		return;
	}
	for (int i = 0; i < n; i++) {
		rp_fmt_loc(name, sizeof(name), rp, v[i].addr);
		if ((int)strlen(name) > w)
			w = strlen(name);
	}
	sb_printf(out, "  %-*s  %-18s  %10s  %10s\n", w, "LOCATION", "ADDRESS", "DROPS", "SKBS");
	for (int i = 0; i < n; i++) {
		rp_fmt_loc(name, sizeof(name), rp, v[i].addr);
		snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)v[i].addr);
		fmt_count(d, sizeof(d), v[i].drops);
		fmt_count(s, sizeof(s), v[i].skbs);
		sb_printf(out, "  %-*s  %-18s  %10s  %10s\n", w, name, addr, d, s);
	}
	free(v);
}

static void text_by_second(const struct report *rp, struct strbuf *out)
{
	struct tl_row *rows;
	int n = rp_timeline(rp, &rows), dec;
	char off[32], len[32], d[32], rate[32];

	sb_printf(out, "Drops per interval between snapshots (START: offset in s from the first\n"
		  "snapshot; INTERVAL in s; DROPS/S: datagrams per second):\n");
	if (!n) {
		sb_printf(out, "  fewer than 2 snapshots: no intervals\n");
		free(rows);
		return;
	}
	dec = rp_tl_decimals(rows, n);
	sb_printf(out, "  %9s  %9s  %10s  %10s  %s\n", "START", "INTERVAL", "DROPS", "DROPS/S",
		  "TOP CAUSE");
	for (int i = 0; i < n; i++) {
		int c = rp_tl_top_cause(&rows[i]);

		snprintf(off, sizeof(off), "+%.*f", dec, rows[i].start_ns / 1e9);
		snprintf(len, sizeof(len), "%.*f", dec, rows[i].len_ns / 1e9);
		fmt_count(d, sizeof(d), rows[i].drops);
		rp_fmt_rate(rate, sizeof(rate), rp_tl_rate(&rows[i]));
		sb_printf(out, "  %9s  %9s  %10s  %10s  %s\n", off, len, d, rate,
			  c < 0 ? "-" : cause__name(c));
	}
	free(rows);
}

void rp_print_text(const struct report *rp, const struct agg *a, uint64_t top,
		   enum report_by by, struct strbuf *out)
{
	text_header(rp, out);
	switch (by) {
	case REPORT_BY_CAUSE:
		text_by_cause(a, out);
		return;
	case REPORT_BY_REASON:
		text_by_reason(rp, out);
		return;
	case REPORT_BY_LOCATION:
		text_by_location(rp, out);
		return;
	case REPORT_BY_SECOND:
		text_by_second(rp, out);
		return;
	default:
		break;
	}
	text_sockets(rp, a, top, out);
	text_flows(rp, a, out);
	text_totals(rp, a, out);
	text_timeline(rp, out);
	text_detail(rp, a, top, out);
	text_recon(rp, a, out);
	rp_text_advice(rp, a, top, out);
}
