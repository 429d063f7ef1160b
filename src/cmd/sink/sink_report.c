// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What udpdrop sink prints on standard output: a progress line (or JSON
 * object) per --interval during a run, and at a run's end its ledger,
 * as text or one JSON object.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "hist.h"
#include "json.h"
#include "ledger.h"
#include "seqtrack.h"
#include "sink_internal.h"
#include "udpgen.h"
#include "units.h"
#include "util.h"

int sink_emit(struct sink *s, struct strbuf *sb)
{
	if ((sb->len && fwrite(sb->buf, 1, sb->len, stdout) != sb->len) || fflush(stdout)) {
		int err = errno ? -errno : -EIO;

		sb_free(sb);
		return err;
	}
	sb_free(sb);
	return 0;
}

static uint64_t sum_causes(const uint64_t c[CAUSE_MAX])
{
	uint64_t n = 0;

	for (int i = 0; i < CAUSE_MAX; i++)
		n += c[i];
	return n;
}

/*
 * The end of a run as printed into sb: one JSON object (--json), or the
 * ledger l and the notes that go with it. xs: XDP's packet counts for the
 * run; foreign: datagrams to the port that were not the run's (a lower
 * bound); late: the run's datagrams past XDP after its final count.
 */
void sink_format_run(const struct sink *s, const struct ledger *l,
		     const uint64_t xs[UG_XS_MAX], uint64_t foreign, uint64_t late,
		     struct strbuf *sb)
{
	const struct run *r = &s->r;

	if (s->o->json) {
		struct json j;

		json_init(&j, sb);
		json_obj_begin(&j);
		json_key(&j, "final");
		json_bool(&j, true);
		json_key(&j, "time");
		json_double(&j, wall_time(), 3);
		json_key(&j, "run");
		json_u64(&j, r->id);
		json_key(&j, "control");
		json_bool(&j, r->control);
		json_key(&j, "peer");
		json_str(&j, r->have_peer ? r->peer_str : NULL);
		json_key(&j, "end");
		json_str(&j, r->end_reason);
		json_key(&j, "foreign");
		json_u64(&j, r->foreign);
		/* > 0: the socket's drops may include other senders' datagrams */
		json_key(&j, "foreign_traffic");
		json_u64(&j, foreign);
		json_key(&j, "after_end");
		json_u64(&j, r->after_end);
		/* the most receiver drops XDP did not count (traffic still flowing) */
		json_key(&j, "late_dropped_max");
		json_u64(&j, late);
		json_key(&j, "xdp_packets");
		if (s->have_xdp) {
			static const char *const names[UG_XS_MAX] = {
				[UG_XS_PACKETS] = "all", [UG_XS_OTHER] = "other",
				[UG_XS_FRAGS] = "later_fragments", [UG_XS_SHORT] = "short",
				[UG_XS_FOREIGN] = "foreign", [UG_XS_AFTER_END] = "after_end",
			};

			json_obj_begin(&j);
			for (int i = 0; i < UG_XS_MAX; i++) {
				json_key(&j, names[i]);
				json_u64(&j, xs[i]);
			}
			json_obj_end(&j);
		} else {
			json_null(&j);
		}
		json_key(&j, "ledger");
		json_obj_begin(&j);
		ledger__json(&j, l);
		json_obj_end(&j);
		json_obj_end(&j);
		sb_printf(sb, "\n");
	} else {
		FILE *mf;
		char *buf = NULL;
		size_t len = 0;

		sb_printf(sb, "run %u%s%s ended (%s)\n", r->id,
			  r->have_peer ? " from " : "", r->peer_str,
			  r->end_reason ? r->end_reason : "stopped");
		mf = open_memstream(&buf, &len);
		if (mf) {
			ledger__print(mf, l);
			fclose(mf);
			sb_append(sb, buf, len);
			free(buf);
		}
		if (foreign) {
			char a[32];

			fmt_count(a, sizeof(a), foreign);
			sb_printf(sb, "  note: %s datagrams to the port were not the run's: the socket's drops (receiver kernel drops, SO_RXQ_OVFL) may include other senders' datagrams, so the ledger may not be exact\n", a);
		}
		if (r->after_end) {
			char a[32];

			fmt_count(a, sizeof(a), r->after_end);
			sb_printf(sb, "  (and %s of the run's datagrams queued after XDP's final count: left out)\n", a);
		}
		if (late) {
			char a[32];

			fmt_count(a, sizeof(a), late);
			sb_printf(sb, "  note: the run's datagrams were still arriving: %s passed XDP after its final count, and any of them the kernel dropped are receiver drops XDP did not see (unexplained may be off by that many)\n", a);
		}
		if (s->have_xdp) {
			char a[32], b[32], c[32], d[32], e[32], g[32];

			fmt_count(a, sizeof(a), xs[UG_XS_PACKETS]);
			fmt_count(b, sizeof(b), xs[UG_XS_FRAGS]);
			fmt_count(c, sizeof(c), xs[UG_XS_FOREIGN]);
			fmt_count(d, sizeof(d), xs[UG_XS_SHORT]);
			fmt_count(e, sizeof(e), xs[UG_XS_AFTER_END]);
			fmt_count(g, sizeof(g), xs[UG_XS_OTHER]);
			sb_printf(sb, "    %-24s %s packets: later fragments %s, to the port but not the run's %s, too short %s, after the end %s, other %s\n",
				  "XDP on the interface", a, b, c, d, e, g);
		}
		if (r->qwait.count) {
			char p50[32], p99[32];

			fmt_ns(p50, sizeof(p50), (double)hist__pct(&r->qwait, 0.5));
			fmt_ns(p99, sizeof(p99), (double)hist__pct(&r->qwait, 0.99));
			sb_printf(sb, "    %-24s p50 ~%s, p99 ~%s (SO_TIMESTAMPNS)\n",
				  "kernel receive -> read", p50, p99);
		}
	}
}

/* ---- progress lines -------------------------------------------------- */

int sink_interval_line(struct sink *s, uint64_t now)
{
	struct run *r = &s->r;
	struct seq_flow sum;
	uint64_t rc[CAUSE_MAX], xdp = 0;
	uint32_t rmem, drops;
	double dt = (double)(now - r->iv_ns) / 1e9;
	double rate = dt > 0 ? (double)r->iv_read / dt : 0;
	struct strbuf sb = {};

	seqtrack__sum(&r->st, &sum);
	sink_rcv_causes(s, rc);
	xdp = sink_xdp_seen(s, sink_run_flows(r));
	sink_meminfo(s->ufd, &rmem, &drops);
	if (s->o->json) {
		struct json j;

		json_init(&j, &sb);
		json_obj_begin(&j);
		json_key(&j, "final");
		json_bool(&j, false);
		json_key(&j, "time");
		json_double(&j, wall_time(), 3);
		json_key(&j, "run");
		json_u64(&j, r->id);
		json_key(&j, "elapsed");
		json_double(&j, (double)(now - r->start_ns) / 1e9, 3);
		json_key(&j, "read_per_s");
		json_double(&j, rate, 1);
		json_key(&j, "read");
		json_u64(&j, sum.read);
		json_key(&j, "lost");
		json_u64(&j, sum.lost);
		json_key(&j, "reordered");
		json_u64(&j, sum.reordered);
		json_key(&j, "duplicates");
		json_u64(&j, sum.duplicates + sum.stale + sum.beyond); /* as the ledger's */
		json_key(&j, "foreign");
		json_u64(&j, r->foreign);
		json_key(&j, "receiver_drops");
		if (s->have_tracer)
			json_u64(&j, sum_causes(rc));
		else
			json_null(&j);
		json_key(&j, "sink_xdp_seen");
		if (s->have_xdp)
			json_u64(&j, xdp);
		else
			json_null(&j);
		json_key(&j, "queue_bytes");
		json_u64(&j, rmem);
		json_key(&j, "rcvbuf");
		json_u64(&j, s->rcvbuf);
		json_key(&j, "rxq_ovfl");
		json_u64(&j, (uint32_t)(drops - (uint32_t)r->base.sk_drops));
		json_obj_end(&j);
		sb_printf(&sb, "\n");
	} else {
		char rd[32], tot[32], lost[32], ro[32], dr[32] = "-", xs[32] = "-", q[32], rb[32];

		fmt_count(rd, sizeof(rd), (uint64_t)(rate + 0.5));
		fmt_count(tot, sizeof(tot), sum.read);
		fmt_count(lost, sizeof(lost), sum.lost);
		fmt_count(ro, sizeof(ro), sum.reordered);
		if (s->have_tracer)
			fmt_count(dr, sizeof(dr), sum_causes(rc));
		if (s->have_xdp)
			fmt_count(xs, sizeof(xs), xdp);
		fmt_bytes(q, sizeof(q), rmem);
		fmt_bytes(rb, sizeof(rb), s->rcvbuf);
		sb_printf(&sb, "%6.1f s  run %u  read %s/s (%s)  lost %s  reordered %s  rcv drops %s  xdp %s  queue %s of %s\n",
			  (double)(now - r->start_ns) / 1e9, r->id, rd, tot, lost, ro,
			  dr, xs, q, rb);
	}
	r->iv_read = 0;
	r->iv_ns = now;
	return sink_emit(s, &sb);
}
