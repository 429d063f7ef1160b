// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop report, the JSON output (report_internal.h), and report__print(),
 * the one entry point to both outputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"
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
		struct agg_reason *v;
		int n = rp_by_reason(rp, &v);

		for (int i = 0; i < n; i++) {
			json_obj_begin(j);
			jkey_u64(j, "reason", v[i].reason);
			json_key(j, "name");
			json_str(j, rp_reason_name(rp, v[i].reason));
			jkey_str(j, "cause", cause__name(v[i].cause));
			jkey_u64(j, "drops", v[i].drops);
			jkey_u64(j, "skb_events", v[i].skbs);
			json_obj_end(j);
		}
		free(v);
	} else if (by == REPORT_BY_LOCATION) {
		struct agg_loc *v;
		int n = rp_by_location(rp, &v);

		for (int i = 0; i < n; i++) {
			json_obj_begin(j);
			snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v[i].addr);
			jkey_str(j, "addr", buf);
			json_key(j, "symbol");
			json_str(j, rp_symbol_name(rp, v[i].addr));
			jkey_u64(j, "drops", v[i].drops);
			jkey_u64(j, "skb_events", v[i].skbs);
			json_obj_end(j);
		}
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
	for (int i = 0; i < shown; i++) {
		const struct agg_sock *k = &a->socks[i];

		json_obj_begin(&j);
		jkey_u64(&j, k->by_inode ? "inode" : "cookie", k->cookie);
		rp_fmt_local(buf, sizeof(buf), k);
		jkey_str(&j, "local", buf);
		/* as top's: the peer of a connected socket, "*" for none */
		rp_fmt_remote(buf, sizeof(buf), k);
		json_key(&j, "remote");
		json_str(&j, k->sock ? buf : NULL);
		jkey_u64(&j, "netns", k->netns);
		json_key(&j, "netns_name");
		json_str(&j, rp_netns_name(rp, k->netns));
		json_key(&j, "kernel_owner");
		json_str(&j, rp_kernel_owner(rp, k));
		json_key(&j, "pid");
		if (k->sock && k->sock->pid)
			json_u64(&j, k->sock->pid);
		else
			json_null(&j);
		/* as top's: null where no process holds it (a kernel socket) */
		json_key(&j, "comm");
		json_str(&j, k->sock && k->sock->comm[0] ? k->sock->comm : NULL);
		jkey_u64(&j, "drops", k->drops);
		jkey_u64(&j, "skb_events", k->skbs);
		jkey_u64(&j, "bytes", k->bytes);
		jkey_str(&j, "cause", cause__name(rp_main_cause(k)));
		json_key(&j, "rcvbuf");
		if (k->sock)
			json_u64(&j, k->sock->rcvbuf);
		else
			json_null(&j);
		json_key(&j, "queued");
		if (k->sock)
			json_u64(&j, k->sock->queued);
		else
			json_null(&j);
		json_key(&j, "causes");
		json_obj_begin(&j);
		for (int c = 0; c < CAUSE_MAX; c++)
			if (k->cause[c] || k->cause_skbs[c])
				jkey_u64(&j, cause__name(c), k->cause[c]);
		json_obj_end(&j);
		json_key(&j, "reasons");
		json_arr_begin(&j);
		for (int r = 0; r < k->nreasons; r++) {
			json_obj_begin(&j);
			jkey_u64(&j, "reason", k->reasons[r].reason);
			json_key(&j, "name");
			json_str(&j, rp_reason_name(rp, k->reasons[r].reason));
			jkey_str(&j, "cause", cause__name(k->reasons[r].cause));
			jkey_u64(&j, "drops", k->reasons[r].drops);
			jkey_u64(&j, "skb_events", k->reasons[r].skbs);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_key(&j, "locations");
		json_arr_begin(&j);
		for (int r = 0; r < k->nlocs; r++) {
			json_obj_begin(&j);
			snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)k->locs[r].addr);
			jkey_str(&j, "addr", buf);
			json_key(&j, "symbol");
			json_str(&j, rp_symbol_name(rp, k->locs[r].addr));
			jkey_u64(&j, "drops", k->locs[r].drops);
			jkey_u64(&j, "skb_events", k->locs[r].skbs);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	jkey_u64(&j, "sockets_total", a->nsocks);

	json_key(&j, "unattributed");
	json_arr_begin(&j);
	for (int i = 0; i < a->nflows; i++) {
		const struct agg_flow *f = &a->flows[i];

		json_obj_begin(&j);
		jkey_str(&j, "cause", cause__name(f->cause));
		jkey_u64(&j, "netns", f->netns);
		json_key(&j, "netns_name");
		json_str(&j, rp_netns_name(rp, f->netns));
		if (f->family == AF_INET || f->family == AF_INET6) {
			fmt_addr(buf, sizeof(buf), f->family, f->saddr);
			jkey_str(&j, "saddr", buf);
			fmt_addr(buf, sizeof(buf), f->family, f->daddr);
			jkey_str(&j, "daddr", buf);
		} else {
			json_key(&j, "saddr");
			json_null(&j);
			json_key(&j, "daddr");
			json_null(&j);
		}
		jkey_u64(&j, "dport", f->dport);
		jkey_u64(&j, "drops", f->drops);
		jkey_u64(&j, "skb_events", f->skbs);
		json_obj_end(&j);
	}
	json_arr_end(&j);

	json_key(&j, "totals");
	json_obj_begin(&j);
	jkey_u64(&j, "drops", a->drops);
	jkey_u64(&j, "skb_events", a->skbs);
	/* as top's: runs the kernel skipped, their drops in no count */
	jkey_u64(&j, "missed", rp_meta_missed(rp));
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
		int64_t diff = rp_recon_diff(r);

		json_obj_begin(&j);
		jkey_u64(&j, "netns", r->netns);
		json_key(&j, "netns_name");
		json_str(&j, rp_netns_name(rp, r->netns));
		jkey_str(&j, "cause", cause__name(r->cause));
		json_key(&j, "counters");
		json_arr_begin(&j);
		for (const char *p = r->counters; *p;) {
			size_t n = strcspn(p, "+");

			snprintf(buf, sizeof(buf), "%.*s", (int)n, p);
			json_str(&j, buf);
			p += n;
			if (*p)
				p++;
		}
		json_arr_end(&j);
		json_key(&j, "kernel");
		if (r->have_kernel)
			json_u64(&j, r->kernel);
		else
			json_null(&j);
		jkey_u64(&j, "udpdrop", r->udpdrop);
		jkey_str(&j, "status", !r->have_kernel ? "no_counter" : diff ? "differ" : "match");
		json_key(&j, "diff");
		json_i64(&j, r->have_kernel ? diff : 0);
		json_obj_end(&j);
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
