// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * top's batch printers (top_print.h): each interval, and the summary, as
 * text or as one JSON line. In cmd/top/ because only top prints this;
 * what the printers show comes from the layers below: the reconciliation
 * (reconcile.h), the advice's input from the model (advice_model.h), the
 * live environment (live_env.h).
 */
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "advice_model.h"
#include "bursts.h"
#include "caps.h"
#include "json.h"
#include "json_vocab.h"
#include "live_env.h"
#include "reconcile.h"
#include "sockid.h"
#include "top_print.h"

/* Sockets closed long ago, folded into one row per netns (UD_KEY_FOLDED). */
static bool row_folded(const struct row *r)
{
	return r->key.kind == ROW_SOCKET && (r->key.cookie & UD_COOKIE_FOLDED);
}

static void sock_local(const struct row *r, char *buf, int len)
{
	if (row_folded(r))
		snprintf(buf, len, "(closed sockets)");
	else if (!r->have_sock)
		snprintf(buf, len, "?");
	else
		fmt_endpoint(buf, len, r->sock.family, r->sock.saddr, r->sock.sport);
}

/*
 * A socket row as the summary's reason and advice lines head it: its
 * address and who holds it ("*:5000 1234/unbound"), else a kernel
 * device or its id ("*:5000 cookie 4242"), so that two sockets on one
 * address (REUSEPORT members, a group's receivers) never read the same.
 */
static void sock_label(const struct row *r, char *buf, int len)
{
	char local[64], comm[sizeof(r->sock.comm)];

	sock_local(r, local, sizeof(local));
	if (row_folded(r)) {
		snprintf(buf, len, "%s", local);
	} else if (r->have_sock && r->sock.npids > 0) {
		snprintf(comm, sizeof(comm), "%s", r->sock.comm);
		str_printable(comm);
		snprintf(buf, len, "%s %d/%s", local, r->sock.pids[0], comm);
	} else if (r->have_sock && r->sock.kowner[0]) {
		snprintf(buf, len, "%s %s", local, r->sock.kowner);
	} else if (sockid__inode(r->key.cookie)) {
		snprintf(buf, len, "%s inode %u", local, sockid__inode(r->key.cookie));
	} else {
		snprintf(buf, len, "%s cookie %llu", local, (unsigned long long)r->key.cookie);
	}
}

static void sock_remote(const struct row *r, char *buf, int len)
{
	if (!r->have_sock)
		snprintf(buf, len, "?");
	else if (!r->sock.dport)
		snprintf(buf, len, "*");
	else
		fmt_endpoint(buf, len, r->sock.family, r->sock.daddr, r->sock.dport);
}

/* Per interval: the last interval's rate; in the summary: the average. */
static double row_rate(const struct model *m, const struct row *r, bool final)
{
	double elapsed = (m->last_ns - m->start_ns) / 1e9;

	if (!final)
		return r->rate;
	return elapsed > 0 ? r->drops / elapsed : 0;
}

/* Deliveries per second: the same two spans as row_rate. */
static double rx_rate(const struct model *m, const struct row *r, bool final)
{
	double elapsed = (m->last_ns - m->start_ns) / 1e9;

	if (!final)
		return r->rx_rate;
	return elapsed > 0 ? r->rx / elapsed : 0;
}

/*
 * The `counters` object lists the netns the reconciliation covers
 * (reconcile__covers) whose counters moved, or where udpdrop counted.
 */
static bool netns_moved(struct model *m, const struct netns_counters *nc)
{
	if (!reconcile__covers(nc))
		return false;
	for (int k = 0; k < MIB_MAX; k++)
		if (mib__diff(&nc->base, &nc->cur, k))
			return true;
	for (int c = 0; c < CAUSE_MAX; c++)
		if (model__netns_cause(m, nc->netns, c))
			return true;
	return false;
}

/* ---- advice: the summary's findings per row ------------------------ */

/* The env of each netns (and loopback or not) the summary needs, read once. */
#define ENV_CACHE 16
struct env_cache {
	struct live_env v[ENV_CACHE];
	int n;
};

static const struct live_env *env_get(struct env_cache *ec, struct model *m, const struct row *r)
{
	uint32_t ns = r->key.netns;
	bool lo = live_env__row_loopback(r);

	for (int i = 0; i < ec->n; i++)
		if (ec->v[i].netns == ns && ec->v[i].loopback == lo)
			return &ec->v[i];
	if (ec->n == ENV_CACHE)
		return NULL;
	live_env__read(m, ns, lo, &ec->v[ec->n]);
	return &ec->v[ec->n++];
}

/* The findings for every cause of a row: returns how many (into f[max]). */
static int row_advice(struct model *m, const struct top_print_ctx *o, struct env_cache *ec,
		      const struct row *r, struct advice_finding *f, int max)
{
	const struct live_burst *b = o->bursts ? htab__find(o->bursts, &r->key) : NULL;
	const struct live_env *e = ec ? env_get(ec, m, r) : NULL;
	int n = 0;

	for (int c = 0; c < CAUSE_MAX && n < max; c++) {
		struct advice_input in;
		char who[128];

		if (!r->cause[c] && !r->cause_skbs[c])
			continue;
		if (r->key.kind == ROW_FLOW && c != r->key.cause)
			continue;
		advice_model__input(&in, m, r, c, b, e, who, sizeof(who));
		n += advice__build(&in, f + n, max - n);
	}
	return n;
}

/* Enough for a row with several causes, each with its findings. */
#define ROW_ADVICE_MAX (2 * ADVICE_MAX)

static void plain_advice(struct model *m, const struct top_print_ctx *o, struct strbuf *sb)
{
	struct advice_finding *f = calloc(ROW_ADVICE_MAX, sizeof(*f));
	struct env_cache *ec = calloc(1, sizeof(*ec));
	bool header = false;

	if (!f || !ec)
		goto out;
	for (int p = 0; p < 2; p++) {
		int nrows = p ? m->nview_flows : m->nview_sockets;

		for (int i = 0; i < nrows; i++) {
			struct row *r = p ? m->view_flows[i] : m->view_sockets[i];
			char where[128];
			int n = row_advice(m, o, ec, r, f, ROW_ADVICE_MAX);

			if (!n)
				continue;
			if (!header)
				sb_printf(sb, "advice (--json adds the evidence and how to verify):\n");
			header = true;
			if (p)
				row__flow(r, where, sizeof(where));
			else
				sock_label(r, where, sizeof(where));
			for (int k = 0; k < n; k++)
				sb_printf(sb, "  %s %s: %s\n    change: %s\n", where, cause__name(f[k].cause),
					  f[k].what, f[k].change);
		}
	}
out:
	free(f);
	free(ec);
}

static void json_advice(struct model *m, const struct top_print_ctx *o, struct env_cache *ec,
			struct json *j, const struct row *r)
{
	struct advice_finding *f = calloc(ROW_ADVICE_MAX, sizeof(*f));
	int n = f ? row_advice(m, o, ec, r, f, ROW_ADVICE_MAX) : 0;

	/* report's keys, the socket's too (one vocabulary: json_vocab.h),
	 * with the setting's and its value, as report and doctor emit them */
	const struct advice_json_socket sock = {
		.known = r->key.kind == ROW_SOCKET && r->key.cookie &&
			 !(r->key.cookie & UD_COOKIE_FOLDED),
		.id = sockid__inode(r->key.cookie) ? sockid__inode(r->key.cookie) : r->key.cookie,
		.by_inode = sockid__inode(r->key.cookie) != 0,
	};

	json_key(j, "advice");
	json_arr_begin(j);
	for (int k = 0; k < n; k++) {
		advice__json_begin(j, &f[k], &sock);
		advice__json_end(j, &f[k], true);
	}
	json_arr_end(j);
	free(f);
}

/* ---- plain ---------------------------------------------------------- */

/*
 * An interval lists what happened in it: rows whose drops or deliveries
 * moved (all of them with --all, and in the summary), so its size follows
 * the interval's activity, not every socket the run has seen.
 */
static bool row_listed(const struct model *m, const struct row *r, bool final)
{
	return final || m->opts.all || r->moved || r->rx_rate > 0;
}

static int rows_unlisted(const struct model *m, bool final)
{
	int n = 0;

	for (int i = 0; i < m->nview_sockets; i++)
		n += !row_listed(m, m->view_sockets[i], final);
	for (int i = 0; i < m->nview_flows; i++)
		n += !row_listed(m, m->view_flows[i], final);
	return n;
}

/* PID/COMM: the process(es), or the kernel device owning it (kowner.h) */
static void sock_owner(const struct row *r, char *buf, size_t len)
{
	if (r->sock.npids > 1)
		snprintf(buf, len, "%d/%s +%d", r->sock.pids[0], r->sock.comm, r->sock.npids - 1);
	else if (r->sock.npids == 1)
		snprintf(buf, len, "%d/%s", r->sock.pids[0], r->sock.comm);
	else if (r->sock.kowner[0])
		snprintf(buf, len, "%s", r->sock.kowner);
	else
		snprintf(buf, len, "-");
	str_printable(buf);
}

static void plain_sockets(struct model *m, struct strbuf *sb, bool final)
{
	char local[64], remote[64], ns[32], nsbuf[64], owner[64], rate[24],
		total[24], rcvbuf[16], queue[16], pbuf[8], rx[24];
	double elapsed = (m->last_ns - m->start_ns) / 1e9;
	int wo = 22; /* wider for a kernel device's name, whole */

	for (int i = 0; i < m->nview_sockets; i++) {
		if (!row_listed(m, m->view_sockets[i], final))
			continue;
		sock_owner(m->view_sockets[i], owner, sizeof(owner));
		if ((int)strlen(owner) > wo)
			wo = strlen(owner);
	}
	/* RX/s: datagrams delivered to the socket (the summary: on average) */
	sb_printf(sb, "%-5s %-22s %-22s %-14s %-*s %9s %9s %9s %-13s %8s %5s\n",
		  "PROTO", "LOCAL", "REMOTE", "NETNS", wo, "PID/COMM",
		  final ? "RX AVG/s" : "RX/s", final ? "AVG/s" : "DROPS/s", "DROPS",
		  "CAUSE", "RCVBUF", "QUEUE");
	for (int i = 0; i < m->nview_sockets; i++) {
		struct row *r = m->view_sockets[i];

		if (!row_listed(m, r, final))
			continue;
		sock_local(r, local, sizeof(local));
		sock_remote(r, remote, sizeof(remote));
		snprintf(ns, sizeof(ns), "%s",
			 model__netns_label(m, r->key.netns, nsbuf, sizeof(nsbuf)));
		sock_owner(r, owner, sizeof(owner));
		str_printable(ns);
		snprintf(rate, sizeof(rate), "%.0f", row_rate(m, r, final));
		if (!m->have_rx)
			snprintf(rx, sizeof(rx), "-");
		else
			snprintf(rx, sizeof(rx), "%.0f",
				 final ? (elapsed > 0 ? r->rx / elapsed : 0) : r->rx_rate);
		fmt_count(total, sizeof(total), r->drops);
		if (r->have_sock && r->sock.have_mem) {
			fmt_bytes(rcvbuf, sizeof(rcvbuf), r->sock.rcvbuf);
			snprintf(queue, sizeof(queue), "%u%%",
				 r->sock.rcvbuf ? (unsigned)(100.0 * r->sock.rmem / r->sock.rcvbuf) : 0);
		} else {
			snprintf(rcvbuf, sizeof(rcvbuf), "-");
			snprintf(queue, sizeof(queue), "-");
		}
		sb_printf(sb, "%-5s %-22s %-22s %-14.14s %-*.*s %9s %9s %9s %-13s %8s %5s\n",
			  r->have_sock ? proto_name(r->sock.proto, pbuf, sizeof(pbuf)) : "?",
			  local, remote, ns, wo, wo, owner, rx, rate, total,
			  r->drops || r->skbs ? cause__name(row__main_cause(r)) : "-",
			  rcvbuf, queue);
	}
}

static void plain_flows(struct model *m, struct strbuf *sb, bool final)
{
	char flow[128], ns[32], nsbuf[64], rate[24], total[24], skbs[24];

	sb_printf(sb, "no socket:\n%-14s %-14s %-44s %9s %9s %9s\n", "CAUSE",
		  "NETNS", "FLOW", final ? "AVG/s" : "DROPS/s", "DROPS", "SKBS");
	for (int i = 0; i < m->nview_flows; i++) {
		struct row *r = m->view_flows[i];

		if (!row_listed(m, r, final))
			continue;
		row__flow(r, flow, sizeof(flow));
		snprintf(ns, sizeof(ns), "%s",
			 model__netns_label(m, r->key.netns, nsbuf, sizeof(nsbuf)));
		snprintf(rate, sizeof(rate), "%.0f", row_rate(m, r, final));
		fmt_count(total, sizeof(total), r->drops);
		fmt_count(skbs, sizeof(skbs), r->skbs);
		sb_printf(sb, "%-14s %-14.14s %-44s %9s %9s %9s\n",
			  cause__name(r->key.cause), ns, flow, rate, total, skbs);
	}
}

static void plain_causes(struct model *m, struct strbuf *sb)
{
	char n[24];
	bool any = false;

	for (int c = 0; c < CAUSE_MAX; c++) {
		if (!m->totals.cause[c])
			continue;
		fmt_count(n, sizeof(n), m->totals.cause[c]);
		sb_printf(sb, "%s %s %s", any ? "," : "  by cause:", cause__name(c), n);
		any = true;
	}
	if (any)
		sb_printf(sb, "\n");
}

static void plain_reconcile(struct model *m, struct strbuf *sb)
{
	const char *caveat = model__reconcile_caveat(m);
	struct reconcile_line rl[64];
	int n = reconcile__lines(m, rl, ARRAY_SIZE(rl));

	if (caveat)
		sb_printf(sb, "kernel counters: %s\n", caveat);
	for (int i = 0; i < n; i++) {
		char nsbuf[64], a[24], b[24], verdict[96], gro[128];

		if (!i || rl[i].netns != rl[i - 1].netns)
			sb_printf(sb, "kernel counters, netns %s (%u):\n",
				  model__netns_label(m, rl[i].netns, nsbuf, sizeof(nsbuf)),
				  rl[i].netns);
		fmt_count(a, sizeof(a), rl[i].kernel);
		fmt_count(b, sizeof(b), rl[i].ours);
		reconcile__verdict(&rl[i], verdict, sizeof(verdict));
		reconcile__units_note(rl[i].cause, rl[i].ours, rl[i].ours_datagrams, gro, sizeof(gro));
		sb_printf(sb, "  %-18s +%-10s udpdrop %-14s %-10s %s%s\n",
			  rl[i].label, a, cause__name(rl[i].cause), b, verdict, gro);
	}
}

/*
 * The kernel's tables: said only when one is half full (a full one loses
 * which socket a drop was, not the drop: see the overflow bucket).
 */
static void plain_tables(const struct top_print_ctx *o, struct strbuf *sb)
{
	const struct tracer_fill *f = o->fill;

	if (!f)
		return;
	if ((f->drops_max && f->drops >= f->drops_max / 2) ||
	    (f->flows_max && f->flows >= f->flows_max / 2) ||
	    (f->rx_max && f->rx >= f->rx_max / 2))
		sb_printf(sb, "kernel tables: sockets %u/%u, flows %u/%u, deliveries %u/%u entries in use (closed sockets' entries are given back; raise --map-entries if this stays high)\n",
			  f->drops, f->drops_max, f->flows, f->flows_max, f->rx, f->rx_max);
}

void top_print__plain(struct model *m, const struct top_print_ctx *o, struct strbuf *sb)
{
	char tbuf[32], drops[24], skbs[24], att[24];
	time_t now = time(NULL);
	struct tm tm;
	double elapsed = (m->last_ns - m->start_ns) / 1e9;

	localtime_r(&now, &tm);
	strftime(tbuf, sizeof(tbuf), "%H:%M:%S", &tm);
	fmt_count(drops, sizeof(drops), m->totals.drops);
	fmt_count(skbs, sizeof(skbs), m->totals.skbs);
	fmt_count(att, sizeof(att), m->totals.attributed);
	if (o->final && m->start_wall > 0) {
		time_t since = (time_t)m->start_wall;
		char sbuf[16];

		localtime_r(&since, &tm);
		strftime(sbuf, sizeof(sbuf), "%H:%M:%S", &tm);
		sb_printf(sb, "\n=== summary: %.1f s traced via %s, counting since %s ===\n",
			  elapsed, o->attach, sbuf);
	} else if (o->final) {
		sb_printf(sb, "\n=== summary: %.1f s traced via %s ===\n", elapsed, o->attach);
	}
	else
		sb_printf(sb, "%s  %.0f drops/s  interval %.2f s\n", tbuf,
			  m->totals.rate, m->interval);
	sb_printf(sb, "total %s datagrams dropped (%s skb events), %s attributed to sockets",
		  drops, skbs, att);
	if (m->missed)
		sb_printf(sb, ", %" PRIu64 " events the kernel skipped (a drop inside a drop on one CPU)",
			  m->missed);
	if (m->totals.overflow_skbs)
		sb_printf(sb, ", %" PRIu64 " in the overflow bucket (map full: raise --map-entries)",
			  m->totals.overflow);
	if (m->totals.netns_unknown)
		sb_printf(sb, ", %" PRIu64 " socket_close of a socket in an unknown netns (not counted above)",
			  m->totals.netns_unknown);
	sb_printf(sb, "\n");
	if (m->sites) {
		char note[512];

		cause__sites_note(note, sizeof(note));
		sb_printf(sb, "%s\n", note);
	}
	plain_causes(m, sb);
	plain_tables(o, sb);
	int quiet = rows_unlisted(m, o->final);

	if (quiet)
		sb_printf(sb, "(%d rows with no new drops this interval not listed)\n", quiet);
	if (m->nview_sockets)
		plain_sockets(m, sb, o->final);
	if (m->nview_flows)
		plain_flows(m, sb, o->final);
	if (o->final) {
		for (int i = 0; i < m->nview_sockets; i++) {
			struct row *r = m->view_sockets[i];
			char local[128], reason[48], a[24], b[24];

			if (!r->skbs)
				continue;
			sock_label(r, local, sizeof(local));
			sb_printf(sb, "%s:", local);
			for (int k = 0; k < r->nreasons; k++)
				sb_printf(sb, " %s %" PRIu64 " (%" PRIu64 " skbs%s%s)",
					  model__reason_name(m, r->reasons[k].reason, reason, sizeof(reason)),
					  r->reasons[k].drops, r->reasons[k].skbs,
					  row__reason_shared(r, k) ? ", " : "",
					  row__reason_shared(r, k) ? cause__name(r->reasons[k].cause) : "");
			if (r->have_sock && r->sock.have_mem)
				sb_printf(sb, "; kernel sk_drops +%u since start%s",
					  r->sock.drops - r->sock.drops_base,
					  r->sock_alive ? ""
					  : " when last read (closed since: its later drops are not in it)");
			if (r->gro_skbs) {
				/* why sk_drops (per skb) is not the datagrams */
				fmt_count(a, sizeof(a), r->gro_dgrams);
				fmt_count(b, sizeof(b), r->gro_skbs);
				sb_printf(sb, "; %s of its datagrams came in %s GSO/GRO skbs, which the "
					  "kernel counts once each (sk_drops, UdpRcvbufErrors)", a, b);
			}
			sb_printf(sb, "\n");
		}
		plain_reconcile(m, sb);
		plain_advice(m, o, sb);
	}
	sb_printf(sb, "\n");
}

/* ---- JSON ----------------------------------------------------------- */

/* The view's old shapes, kept for scripts (json_vocab.h): reasons
 * {NAME: drops}, locations {"sym+off": skb events}; then the lists. */
static void json_reasons(struct model *m, struct json *j, const struct row *r)
{
	char buf[48];

	json_key(j, "reasons");
	json_obj_begin(j);
	for (int i = 0; i < r->nreasons; i++) {
		uint64_t drops = 0;
		int first = i;

		/* one key per reason: a reason under two causes is summed here */
		for (int k = 0; k < r->nreasons; k++)
			if (r->reasons[k].reason == r->reasons[i].reason) {
				if (k < first)
					first = k;
				drops += r->reasons[k].drops;
			}
		if (first != i)
			continue;
		json_key(j, model__reason_name(m, r->reasons[i].reason, buf, sizeof(buf)));
		json_u64(j, drops);
	}
	json_obj_end(j);
	json_key(j, "locations");
	json_obj_begin(j);
	for (int i = 0; i < r->nlocs; i++) {
		json_key(j, ksyms__format(&m->ksyms, r->locs[i].addr, buf, sizeof(buf)));
		json_u64(j, r->locs[i].skbs);
	}
	json_obj_end(j);
	json_key(j, "reason_list");
	json_arr_begin(j);
	for (int i = 0; i < r->nreasons; i++) {
		const struct row_reason *rr = &r->reasons[i];

		vocab__reason(j, rr->reason, model__reason_name(m, rr->reason, buf, sizeof(buf)),
			      rr->cause, rr->drops, rr->skbs);
	}
	json_arr_end(j);
	json_key(j, "location_list");
	json_arr_begin(j);
	for (int i = 0; i < r->nlocs; i++)
		vocab__location(j, r->locs[i].addr,
				ksyms__format(&m->ksyms, r->locs[i].addr, buf, sizeof(buf)),
				r->locs[i].drops, r->locs[i].skbs);
	json_arr_end(j);
}

static void json_socket(struct model *m, const struct top_print_ctx *o, struct env_cache *ec,
			struct json *j, const struct row *r)
{
	bool final = o->final, mem = r->have_sock && r->sock.have_mem;
	char proto[16], local[80], remote[80], nsbuf[64];
	const char *name = model__netns_label(m, r->key.netns, nsbuf, sizeof(nsbuf));
	const char *attr[3];
	int nattr = 0;

	if (r->flags & (UD_KEY_FAIL_RCVBUF | UD_KEY_FAIL_MEM))
		attr[nattr++] = "udp_fail_queue_rcv_skb";
	else if (r->flags & UD_KEY_RX_SK)
		attr[nattr++] = "rx_sk";
	if (r->flags & UD_KEY_SKB_SK)
		attr[nattr++] = "skb_sk";
	if (r->flags & ROW_VIA_FLOW)
		attr[nattr++] = "flow";
	sock_local(r, local, sizeof(local));
	sock_remote(r, remote, sizeof(remote));

	struct vocab_socket s = {
		.proto = r->have_sock ? proto_name(r->sock.proto, proto, sizeof(proto)) : NULL,
		.family = !r->have_sock ? NULL : r->sock.family == AF_INET6 ? "inet6" : "inet",
		.local = r->have_sock || row_folded(r) ? local : NULL,
		.remote = r->have_sock ? remote : NULL,
		.netns = r->key.netns,
		.netns_name = model__netns_named(m, r->key.netns) ? name : NULL,
		/* a row known by its inode alone: no cookie, its inode */
		.have_cookie = !sockid__inode(r->key.cookie),
		.cookie = r->key.cookie,
		.have_inode = (r->have_sock && r->sock.inode) || sockid__inode(r->key.cookie),
		.inode = r->have_sock && r->sock.inode ? r->sock.inode : sockid__inode(r->key.cookie),
		.npids = r->sock.npids < SOCK_MAX_PIDS ? r->sock.npids : SOCK_MAX_PIDS,
		.pids = r->sock.pids,
		.comm = r->sock.comm,
		/* a kernel device's socket, which no process holds (kowner.h) */
		.kernel_owner = r->sock.kowner[0] ? r->sock.kowner : NULL,
		.pod = model__pod(m, r),
		.alive = r->sock_alive,
		.attribution = attr,
		.nattribution = nattr,
		.have_mem = mem,
		.rcvbuf = r->sock.rcvbuf,
		.queued = r->sock.rmem,
		.have_sk_drops = mem,
		.sk_drops = r->sock.drops,
		.sk_drops_since_start = r->sock.drops - r->sock.drops_base,
		.sk_drops_stale = !r->sock_alive,
		.drops = r->drops,
		.skbs = r->skbs,
		.gro_datagrams = r->gro_dgrams,
		.gro_skbs = r->gro_skbs,
		.bytes = r->bytes,
		.drops_per_s = row_rate(m, r, final),
		.cause = r->skbs ? row__main_cause(r) : CAUSE_MAX,
		.cause_drops = r->cause,
		.cause_skbs = r->cause_skbs,
		/* deliveries: null where the tracer does not count them */
		.have_rx = m->have_rx,
		.rx = r->rx,
		.rx_per_s = rx_rate(m, r, final),
		.have_queue_peak = m->have_rx,
		.queue_peak = r->queue_peak,
	};

	vocab__socket_begin(j, &s);
	json_reasons(m, j, r);
	vocab__socket_end(j, &s);
	if (final)
		json_advice(m, o, ec, j, r);
	json_obj_end(j);
}

static void json_flow(struct model *m, const struct top_print_ctx *o, struct env_cache *ec,
		      struct json *j, const struct row *r)
{
	char flow[128], nsbuf[64], proto[16], saddr[64], daddr[64];
	const char *name = model__netns_label(m, r->key.netns, nsbuf, sizeof(nsbuf));
	bool addrs = r->key.family == AF_INET || r->key.family == AF_INET6;

	row__flow(r, flow, sizeof(flow));
	if (addrs) {
		fmt_addr(saddr, sizeof(saddr), r->key.family, r->key.saddr);
		fmt_addr(daddr, sizeof(daddr), r->key.family, r->key.daddr);
	}
	struct vocab_flow f = {
		.cause = r->key.cause,
		.netns = r->key.netns,
		.netns_name = model__netns_named(m, r->key.netns) ? name : NULL,
		.proto = proto_name(r->key.proto, proto, sizeof(proto)),
		.family = r->key.family == AF_INET6 ? "inet6" : "inet",
		.saddr = addrs ? saddr : NULL,
		.daddr = addrs ? daddr : NULL,
		.dport = r->key.dport,
		.flow = flow,
		.why = row__flow_why(r),
		.drops = r->drops,
		.skbs = r->skbs,
		.gro_datagrams = r->gro_dgrams,
		.gro_skbs = r->gro_skbs,
		.drops_per_s = row_rate(m, r, o->final),
		.cause_drops = r->cause,
		.cause_skbs = r->cause_skbs,
	};

	vocab__flow_begin(j, &f);
	json_reasons(m, j, r);
	if (o->final)
		json_advice(m, o, ec, j, r);
	json_obj_end(j);
}

static void json_table(struct json *j, const char *name, uint32_t used, uint32_t max)
{
	json_key(j, name);
	json_obj_begin(j);
	json_key(j, "entries");
	json_u64(j, used);
	json_key(j, "max");
	json_u64(j, max);
	json_obj_end(j);
}

/* The kernel's tables, after the last read (null when not known). */
static void json_tables(struct json *j, const struct tracer_fill *f)
{
	json_key(j, "tables");
	if (!f) {
		json_null(j);
		return;
	}
	json_obj_begin(j);
	json_table(j, "sockets", f->drops, f->drops_max);
	json_table(j, "flows", f->flows, f->flows_max);
	json_table(j, "slots", f->slots, f->slots_max);
	json_table(j, "deliveries", f->rx, f->rx_max);
	json_key(j, "given_back");
	json_u64(j, f->retired);
	json_obj_end(j);
}

void top_print__json(struct model *m, const struct top_print_ctx *o, struct strbuf *sb)
{
	double elapsed = (m->last_ns - m->start_ns) / 1e9;
	struct env_cache *ec = o->final ? calloc(1, sizeof(*ec)) : NULL;
	struct json j;

	json_init(&j, sb);
	json_obj_begin(&j);
	json_key(&j, "time");
	json_double(&j, wall_time(), 3);
	json_key(&j, "interval");
	json_double(&j, o->final ? (m->last_ns - m->start_ns) / 1e9 : m->interval, 3);
	json_key(&j, "final");
	json_bool(&j, o->final);
	json_key(&j, "attach");
	json_str(&j, o->attach);
	cause__json_derivation(&j, m->sites);
	json_key(&j, "netns_filter");
	if (m->opts.netns)
		json_u64(&j, m->opts.netns);
	else
		json_null(&j);
	json_key(&j, "port_filter");
	if (m->opts.port)
		json_u64(&j, m->opts.port);
	else
		json_null(&j);
	json_key(&j, "pid_filter");
	if (m->opts.pid)
		json_i64(&j, m->opts.pid);
	else
		json_null(&j);

	json_key(&j, "sockets");
	json_arr_begin(&j);
	for (int i = 0; i < m->nview_sockets; i++)
		if (row_listed(m, m->view_sockets[i], o->final))
			json_socket(m, o, ec, &j, m->view_sockets[i]);
	json_arr_end(&j);
	json_key(&j, "unattributed");
	json_arr_begin(&j);
	for (int i = 0; i < m->nview_flows; i++)
		if (row_listed(m, m->view_flows[i], o->final))
			json_flow(m, o, ec, &j, m->view_flows[i]);
	json_arr_end(&j);
	/* rows with counts but nothing new this interval (the summary lists all) */
	json_key(&j, "unchanged_rows");
	json_u64(&j, rows_unlisted(m, o->final));
	json_tables(&j, o->fill);

	json_key(&j, "totals");
	struct vocab_totals t = {
		.drops = m->totals.drops,
		.attributed = m->totals.attributed,
		.skbs = m->totals.skbs,
		.missed = m->missed,
		.drops_per_s = o->final ? (elapsed > 0 ? m->totals.drops / elapsed : 0)
					: m->totals.rate,
		.cause_drops = m->totals.cause,
		.cause_skbs = m->totals.cause_skbs,
	};

	vocab__totals_begin(&j, &t);
	/* top's old shape (json_vocab.h): {cause: drops} */
	json_key(&j, "causes");
	json_obj_begin(&j);
	for (int c = 0; c < CAUSE_MAX; c++)
		if (m->totals.cause[c]) {
			json_key(&j, cause__name(c));
			json_u64(&j, m->totals.cause[c]);
		}
	json_obj_end(&j);
	json_key(&j, "overflow");
	json_u64(&j, m->totals.overflow);
	json_key(&j, "overflow_skb_events");
	json_u64(&j, m->totals.overflow_skbs);
	json_key(&j, "kernel_events");
	json_u64(&j, m->stats[UD_STAT_EVENTS]);
	json_key(&j, "not_udp");
	json_u64(&j, m->stats[UD_STAT_NOT_OURS]);
	json_key(&j, "filtered");
	json_u64(&j, m->stats[UD_STAT_FILTERED]);
	json_key(&j, "rx_overflow");
	if (m->have_rx)
		json_u64(&j, m->stats[UD_STAT_RX_OVERFLOW]);
	else
		json_null(&j);
	json_key(&j, "netns_unknown");
	json_u64(&j, m->totals.netns_unknown);
	json_obj_end(&j);

	json_key(&j, "counters");
	json_obj_begin(&j);
	for (int i = 0; i < m->ncounters; i++) {
		struct netns_counters *nc = &m->counters[i];

		if (netns_moved(m, nc))
			vocab__mib_deltas(&j, nc->netns, &nc->base, &nc->cur);
	}
	json_obj_end(&j);

	/*
	 * When counting began (the counters' baseline): drops before it are
	 * neither the run's nor lost ones.
	 */
	json_key(&j, "counting_since");
	if (m->start_wall > 0)
		json_double(&j, m->start_wall, 3);
	else
		json_null(&j);
	json_key(&j, "reconcile_caveat");
	json_str(&j, model__reconcile_caveat(m));
	json_key(&j, "reconcile");
	json_arr_begin(&j);
	struct reconcile_line rl[64];
	int nrl = reconcile__lines(m, rl, ARRAY_SIZE(rl));

	for (int i = 0; i < nrl; i++) {
		enum mib_id ids[3];
		int nids = cause__mibs(rl[i].cause, ids, 3);
		char counters[160] = "", nsbuf[64];
		const char *name = model__netns_label(m, rl[i].netns, nsbuf, sizeof(nsbuf));

		for (int k = 0; k < nids; k++)
			snprintf(counters + strlen(counters), sizeof(counters) - strlen(counters),
				 "%s%s", k ? "+" : "", mib__name(ids[k]));
		vocab__reconcile(&j, &(struct vocab_reconcile){
			.netns = rl[i].netns,
			.netns_name = model__netns_named(m, rl[i].netns) ? name : NULL,
			.cause = rl[i].cause,
			.counters = counters,
			.have_kernel = true,
			.kernel = rl[i].kernel,
			.udpdrop = rl[i].ours,
			.udpdrop_datagrams = rl[i].ours_datagrams,
			.have_spread = true,
			.spread = rl[i].spread,
		});
	}
	json_arr_end(&j);
	if (o->final) {
		json_key(&j, "stopped");
		json_str(&j, o->stopped);
	}
	/* the parts these privileges left out (caps__survey) */
	caps__json(&j);
	json_obj_end(&j);
	sb_printf(sb, "\n");
	free(ec);
}
