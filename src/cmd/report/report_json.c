// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop report, the JSON output (report_internal.h), and report__print(),
 * the one entry point to both outputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "json.h"
#include "json_vocab.h"
#include "util.h"
#include "model.h"
#include "report_internal.h"

/* ---- JSON -------------------------------------------------------------- */

static void jkey_u64(struct json *j, const char *k, uint64_t v)
{
	json_key(j, k);
	json_u64(j, v);
}

static void jkey_str(struct json *j, const char *k, const char *v)
{
	json_key(j, k);
	json_str(j, v);
}

static void json_tl_row(struct json *j, const struct tl_row *r, bool top_cause)
{
	int c = rp_tl_top_cause(r);

	json_obj_begin(j);
	json_key(j, "t");
	json_double(j, r->start_ns / 1e9, 3);
	json_key(j, "interval_s");
	json_double(j, r->len_ns / 1e9, 3);
	jkey_u64(j, "drops", r->drops);
	json_key(j, "drops_per_s");
	json_double(j, rp_tl_rate(r), 3);
	if (top_cause) {
		json_key(j, "top_cause");
		json_str(j, c < 0 ? NULL : cause__name(c));
	}
	json_obj_end(j);
}

static void json_by(const struct report *rp, const struct agg *a, enum report_by by,
		    struct json *j)
{
	char buf[200];

	json_key(j, "by");
	json_obj_begin(j);
	jkey_str(j, "key", report__by_name(by));
	json_key(j, "rows");
	json_arr_begin(j);
	if (by == REPORT_BY_CAUSE) {
		struct contrib top[BY_CAUSE_TOP];

		for (int c = 0; c < CAUSE_MAX; c++) {
			int nt;

			if (!a->cause[c] && !a->cause_skbs[c])
				continue;
			json_obj_begin(j);
			jkey_str(j, "cause", cause__name(c));
			jkey_u64(j, "drops", a->cause[c]);
			jkey_u64(j, "skb_events", a->cause_skbs[c]);
			json_key(j, "share");
			json_double(j, a->drops ? (double)a->cause[c] / a->drops : 0.0, 4);
			json_key(j, "top");
			json_arr_begin(j);
			nt = rp_cause_contribs(a, c, top);
			for (int i = 0; i < nt; i++) {
				json_obj_begin(j);
				jkey_str(j, "kind", top[i].flow ? "flow" : "socket");
				rp_fmt_contrib(buf, sizeof(buf), a, &top[i]);
				jkey_str(j, "what", buf);
				jkey_u64(j, "drops", top[i].drops);
				json_obj_end(j);
			}
			json_arr_end(j);
			json_obj_end(j);
		}
	} else if (by == REPORT_BY_REASON) {
		struct row_reason *v;
		int n = rp_by_reason(rp, &v);

		for (int i = 0; i < n; i++)
			vocab__reason(j, v[i].reason, rp_reason_name(rp, v[i].reason), v[i].cause,
				      v[i].drops, v[i].skbs);
		free(v);
	} else if (by == REPORT_BY_LOCATION) {
		struct row_loc *v;
		int n = rp_by_location(rp, &v);

		for (int i = 0; i < n; i++)
			vocab__location(j, v[i].addr, rp_symbol_name(rp, v[i].addr), v[i].drops,
					v[i].skbs);
		free(v);
	} else if (by == REPORT_BY_SECOND) {
		struct tl_row *rows;
		int n = rp_timeline(rp, &rows);

		for (int i = 0; i < n; i++)
			json_tl_row(j, &rows[i], true);
		free(rows);
	}
	json_arr_end(j);
	json_obj_end(j);
}

/* A socket row: top's keys (json_vocab.h), null where a recording does
 * not hold the fact (liveness, attribution, sk_drops, the queue's peak at
 * an enqueue: SOCKETS snapshots see the queue at their instants only). */
static void json_socket(const struct report *rp, struct json *j, const struct agg_sock *k)
{
	const struct trace_socket *ts = k->sock;
	char local[200], remote[200], proto[16];
	double secs = rp_duration_s(rp);
	int32_t pid = ts ? (int32_t)ts->pid : 0;
	const uint32_t *q = ts && rp->queue_idx.cap ? rp_xfind(&rp->queue_idx, &ts->cookie) : NULL;
	const struct report_queue *rq = q ? &rp->queues[*q] : NULL;

	struct pod_names pod;
	bool have_pod = rp_pod(rp, k, &pod);

	rp_fmt_local(local, sizeof(local), k);
	/* as top's: the peer of a connected socket, "*" for none */
	rp_fmt_remote(remote, sizeof(remote), k);

	struct vocab_socket s = {
		.proto = ts ? proto_name(ts->proto, proto, sizeof(proto)) : NULL,
		.family = !ts ? NULL : ts->family == AF_INET6 ? "inet6" : "inet",
		.local = local,
		.remote = ts ? remote : NULL,
		.netns = k->netns,
		.netns_name = rp_netns_name(rp, k->netns),
		.have_cookie = !k->by_inode,
		.cookie = k->cookie,
		.have_inode = k->by_inode || (ts && ts->inode),
		.inode = k->by_inode ? (uint32_t)k->cookie : ts ? ts->inode : 0,
		/* as top's: no process where none holds it (a kernel socket) */
		.npids = pid ? 1 : 0,
		.pids = &pid,
		.comm = ts && ts->comm[0] ? ts->comm : NULL,
		.kernel_owner = rp_kernel_owner(rp, k),
		.pod = have_pod ? &pod : NULL,
		.alive = -1,
		.have_mem = ts != NULL,
		.rcvbuf = ts ? ts->rcvbuf : 0,
		.queued = ts ? ts->queued : 0,
		.drops = k->row.drops,
		.skbs = k->row.skbs,
		.gro_datagrams = k->row.gro_dgrams,
		.gro_skbs = k->row.gro_skbs,
		.bytes = k->row.bytes,
		.drops_per_s = secs > 0 ? k->row.drops / secs : 0,
		.cause = row__main_cause(&k->row),
		.cause_drops = k->row.cause,
		.cause_skbs = k->row.cause_skbs,
		.have_rx = rq && rq->nrx,
		.rx = rq && rq->nrx ? rq->rx[rq->nrx - 1].delivered : 0,
		.rx_per_s = rq && rq->nrx && secs > 0 ? rq->rx[rq->nrx - 1].delivered / secs : 0,
	};

	vocab__socket_begin(j, &s);
	/* report's old shapes (json_vocab.h): lists, as reason_list and
	 * location_list */
	for (int pass = 0; pass < 2; pass++) {
		json_key(j, pass ? "reason_list" : "reasons");
		json_arr_begin(j);
		for (int r = 0; r < k->row.nreasons; r++)
			vocab__reason(j, k->row.reasons[r].reason, rp_reason_name(rp, k->row.reasons[r].reason),
				      k->row.reasons[r].cause, k->row.reasons[r].drops, k->row.reasons[r].skbs);
		json_arr_end(j);
		json_key(j, pass ? "location_list" : "locations");
		json_arr_begin(j);
		for (int r = 0; r < k->row.nlocs; r++)
			vocab__location(j, k->row.locs[r].addr, rp_symbol_name(rp, k->row.locs[r].addr),
					k->row.locs[r].drops, k->row.locs[r].skbs);
		json_arr_end(j);
	}
	vocab__socket_end(j, &s);
	json_obj_end(j);
}

/* Drops no socket is known for: top's keys, and report's saddr/daddr. */
static void json_flow(const struct report *rp, struct json *j, const struct agg_flow *f)
{
	char saddr[64], daddr[64], flow[160], proto[16];
	bool addrs = f->family == AF_INET || f->family == AF_INET6;
	double secs = rp_duration_s(rp);

	if (addrs) {
		fmt_addr(saddr, sizeof(saddr), f->family, f->saddr);
		fmt_addr(daddr, sizeof(daddr), f->family, f->daddr);
		flow__format(flow, sizeof(flow), f->family, f->saddr, f->daddr, f->dport);
	}
	struct vocab_flow v = {
		.cause = f->cause,
		.netns = f->netns,
		.netns_name = rp_netns_name(rp, f->netns),
		.proto = proto_name(f->proto, proto, sizeof(proto)),
		.family = !addrs ? NULL : f->family == AF_INET6 ? "inet6" : "inet",
		.saddr = addrs ? saddr : NULL,
		.daddr = addrs ? daddr : NULL,
		.dport = f->dport,
		.flow = addrs ? flow : NULL,
		.why = f->overflow ? "the kernel's table was full: only the cause is known"
				   : flow__why(false, f->cause, f->netns, f->dport),
		.drops = f->row.drops,
		.skbs = f->row.skbs,
		.gro_datagrams = f->row.gro_dgrams,
		.gro_skbs = f->row.gro_skbs,
		.drops_per_s = secs > 0 ? f->row.drops / secs : 0,
	};

	vocab__flow_begin(j, &v);
	json_key(j, "reason_list");
	json_arr_begin(j);
	for (int r = 0; r < f->row.nreasons; r++)
		vocab__reason(j, f->row.reasons[r].reason, rp_reason_name(rp, f->row.reasons[r].reason),
			      f->row.reasons[r].cause, f->row.reasons[r].drops, f->row.reasons[r].skbs);
	json_arr_end(j);
	json_key(j, "location_list");
	json_arr_begin(j);
	for (int r = 0; r < f->row.nlocs; r++)
		vocab__location(j, f->row.locs[r].addr, rp_symbol_name(rp, f->row.locs[r].addr),
				f->row.locs[r].drops, f->row.locs[r].skbs);
	json_arr_end(j);
	json_obj_end(j);
}

static void print_json(const struct report *rp, const struct agg *a, uint64_t top,
		       enum report_by by, struct strbuf *out)
{
	struct tl_row *rows;
	int nrows;
	int shown = a->nsocks < (int64_t)top ? a->nsocks : (int)top;
	struct json j;
	char buf[200];

	json_init(&j, out);
	json_obj_begin(&j);
	json_key(&j, "file");
	json_obj_begin(&j);
	jkey_str(&j, "path", rp->path);
	json_key(&j, "complete");
	json_bool(&j, rp->status == TRACE_COMPLETE);
	jkey_str(&j, "status", report__status_name(rp));
	jkey_str(&j, "message", rp->message);
	jkey_u64(&j, "blocks", rp->blocks);
	json_key(&j, "error_offset");
	if (rp->status == TRACE_CORRUPT)
		json_u64(&j, rp->error_offset);
	else
		json_null(&j);
	json_obj_end(&j);

	json_key(&j, "meta");
	json_obj_begin(&j);
	for (uint32_t i = 0; i < rp->nmeta; i++)
		jkey_str(&j, rp->meta[i].key, rp->meta[i].value);
	json_obj_end(&j);
	cause__json_derivation(&j, rp_report_sites(rp));
	rp_fmt_start(buf, sizeof(buf), rp_meta_get(rp, TRACE_META_START));
	jkey_str(&j, "start_utc", buf);
	json_key(&j, "duration_s");
	json_double(&j, rp_duration_s(rp), 3);
	jkey_u64(&j, "snapshots", rp->ncounts);
	json_key(&j, "events");
	json_obj_begin(&j);
	json_key(&j, "recorded");
	json_bool(&j, !rp_meta_get(rp, "events") || !strcmp(rp_meta_get(rp, "events"), "recorded"));
	jkey_u64(&j, "written", rp->events);
	jkey_u64(&j, "datagrams", rp->event_datagrams);
	jkey_u64(&j, "with_headers", rp->event_caps);
	jkey_u64(&j, "shed_total", rp->shed_total);
	json_key(&j, "shed");
	json_obj_begin(&j);
	for (unsigned c = 0; c < TRACE_CAUSES_MAX; c++)
		if (rp->shed[c]) {
			rp_writer_cause_name(rp, c, buf, sizeof(buf));
			jkey_u64(&j, buf, rp->shed[c]);
		}
	json_obj_end(&j);
	json_obj_end(&j);

	json_key(&j, "sockets");
	json_arr_begin(&j);
	for (int i = 0; i < shown; i++)
		json_socket(rp, &j, &a->socks[i]);
	json_arr_end(&j);
	jkey_u64(&j, "sockets_total", a->nsocks);

	json_key(&j, "unattributed");
	json_arr_begin(&j);
	for (int i = 0; i < a->nflows; i++)
		json_flow(rp, &j, &a->flows[i]);
	json_arr_end(&j);

	json_key(&j, "totals");
	uint64_t attributed = 0;

	for (int i = 0; i < a->nsocks; i++)
		attributed += a->socks[i].row.drops;
	double secs = rp_duration_s(rp);
	struct vocab_totals t = {
		.drops = a->drops,
		.attributed = attributed,
		.skbs = a->skbs,
		.missed = rp_meta_missed(rp),
		.drops_per_s = secs > 0 ? a->drops / secs : 0,
		.cause_drops = a->cause,
		.cause_skbs = a->cause_skbs,
	};

	vocab__totals_begin(&j, &t);
	/* report's old shape (json_vocab.h): {cause: {drops, skb_events}} */
	json_key(&j, "causes");
	json_obj_begin(&j);
	for (int c = 0; c < CAUSE_MAX; c++) {
		if (!a->cause[c] && !a->cause_skbs[c])
			continue;
		json_key(&j, cause__name(c));
		json_obj_begin(&j);
		jkey_u64(&j, "drops", a->cause[c]);
		jkey_u64(&j, "skb_events", a->cause_skbs[c]);
		json_obj_end(&j);
	}
	json_obj_end(&j);
	json_obj_end(&j);

	json_key(&j, "reconcile");
	json_arr_begin(&j);
	for (int i = 0; i < a->nrecon; i++) {
		const struct agg_recon *r = &a->recon[i];

		/* a recording reads the counters once per snapshot: no spread */
		vocab__reconcile(&j, &(struct vocab_reconcile){
			.netns = r->netns,
			.netns_name = rp_netns_name(rp, r->netns),
			.cause = r->cause,
			.counters = r->counters,
			.have_kernel = r->have_kernel,
			.kernel = r->kernel,
			.udpdrop = r->udpdrop,
			.udpdrop_datagrams = r->udpdrop_datagrams,
		});
	}
	json_arr_end(&j);

	/* every interval between snapshots, unmerged */
	json_key(&j, "timeline");
	json_arr_begin(&j);
	nrows = rp_timeline(rp, &rows);
	for (int i = 0; i < nrows; i++)
		json_tl_row(&j, &rows[i], false);
	free(rows);
	json_arr_end(&j);

	/* the findings, as the text's Advice section (keys are a contract) */
	json_key(&j, "advice");
	json_arr_begin(&j);
	{
		struct adv_item *v;
		int n = rp_advice_items(rp, a, top, &v);

		for (int i = 0; i < n; i++)
			for (int k = 0; k < v[i].nf; k++) {
				const struct adv_item *it = &v[i];
				const struct advice_json_socket sock = {
					.known = it->sock >= 0,
					.id = it->sock >= 0 ? a->socks[it->sock].cookie : 0,
					.by_inode = it->sock >= 0 && a->socks[it->sock].by_inode,
				};

				advice__json_begin(&j, &it->f[k], &sock);
				advice__json_end(&j, &it->f[k], true);
			}
		free(v);
	}
	json_arr_end(&j);
	if (by != REPORT_BY_SOCKET)
		json_by(rp, a, by, &j);
	json_obj_end(&j);
	sb_printf(out, "\n");
}

void report__print(const struct report *rp, const struct report_opts *o,
		   struct strbuf *out)
{
	uint64_t top = o->top ? o->top : REPORT_DEFAULT_TOP;
	size_t start = out->len;
	struct agg a;

	rp_build(rp, &a);
	if (o->json) {
		print_json(rp, &a, top, o->by, out); /* json.c escapes every string */
	} else {
		rp_print_text(rp, &a, top, o->by, out);
		/*
		 * The gate all text passes, whatever section printed it and
		 * however: names from the file are also made printable where
		 * they are formatted (a newline in one must not forge a line),
		 * but a section that forgets cannot reach the terminal.
		 */
		if (out->len > start)
			mem_printable(out->buf + start, out->len - start, true);
	}
	rp_agg_free(&a);
}
