// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop gen's output (see gen_internal.h): the interval lines and the
 * summary, as text or JSON. Nothing here changes a count.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "gen_internal.h"
#include "json.h"
#include "util.h"

static const char *const refusal_names[RF_MAX] = {
	"ENOBUFS", "EAGAIN", "EPERM", "ECONNREFUSED", "unknown", "other",
};
static const char *const errq_names[EQ_MAX] = {
	"port_unreachable", "unreachable", "too_big", "icmp_other", "local",
};

/* ---- the interval lines ---- */

/*
 * A percentile of a lateness histogram, as text: the histogram keeps
 * buckets, and hist__pct gives the top of the one the percentile falls
 * in, at most 3.2 % above the true value (1/HIST_SUB of it): an estimate,
 * printed as such ("~97 ns"). The max is the sample itself: exact.
 */
static void fmt_pct(char *buf, int len, const struct hist *h, double p)
{
	char v[24];

	fmt_ns(v, sizeof(v), (double)hist__pct(h, p));
	snprintf(buf, len, "~%s", v);
}

static void print_header(struct gen *g)
{
	if (g->header_printed || g->o.json)
		return;
	printf("%-13s %12s %10s %9s %9s %9s %6s %7s %8s %8s %6s\n", "TIME (s)",
	       "PAYLOAD RATE", "DGRAMS/s", "LATE p50", "p99", "max", "MISSED",
	       "BURSTS", "REFUSED", "SNDDROP", "ICMP");
	g->header_printed = true;
}

static void print_interval(struct gen *g, const struct report *r)
{
	double secs = r->end - r->start;
	char span[32], rate[32], pps[32], p50[32], p99[32], mx[32], burst[16];

	snprintf(span, sizeof(span), "%.2f-%.2f", r->start, r->end);
	fmt_bitrate(rate, sizeof(rate), secs > 0 ? r->bytes * 8.0 / secs : 0);
	fmt_pps(pps, sizeof(pps), secs > 0 ? r->dgrams / secs : 0);
	if (r->late && r->late->count) {
		fmt_pct(p50, sizeof(p50), r->late, 0.5);
		fmt_pct(p99, sizeof(p99), r->late, 0.99);
		fmt_ns(mx, sizeof(mx), (double)r->late->max);
	} else {
		strcpy(p50, "-"), strcpy(p99, "-"), strcpy(mx, "-");
	}
	if (r->dgrams_paced)
		snprintf(burst, sizeof(burst), "%.2f%%", 100.0 * r->burst_dgrams / r->dgrams_paced);
	else
		strcpy(burst, "-");
	print_header(g);
	printf("%-13s %12s %10s %9s %9s %9s %6" PRIu64 " %7s %8" PRIu64 " %8" PRIu64 " %6" PRIu64 "\n",
	       span, rate, pps, p50, p99, mx, r->missed, burst, r->refused_all,
	       r->snd_drops, r->icmp);
}

/* p50 and p99 are hist__pct's estimates (see fmt_pct; --help says so),
 * under the same keys as ever; max, mean and slots are exact. */
static void json_lateness(struct json *j, const struct hist *h)
{
	json_key(j, "lateness_ns");
	if (!h || !h->count) {
		json_null(j);
		return;
	}
	json_obj_begin(j);
	json_key(j, "p50");
	json_u64(j, hist__pct(h, 0.5));
	json_key(j, "p99");
	json_u64(j, hist__pct(h, 0.99));
	json_key(j, "max");
	json_u64(j, h->max);
	json_key(j, "mean");
	json_u64(j, h->sum / h->count);
	json_key(j, "slots");
	json_u64(j, h->count);
	json_obj_end(j);
}

static void json_refused(struct json *j, const uint64_t *refused)
{
	uint64_t all = 0;

	json_key(j, "refused");
	json_obj_begin(j);
	for (int i = 0; i < RF_MAX; i++)
		all += refused[i];
	json_key(j, "total");
	json_u64(j, all);
	for (int i = 0; i < RF_MAX; i++) {
		json_key(j, refusal_names[i]);
		json_u64(j, refused[i]);
	}
	json_obj_end(j);
}

/* The members an interval and the summary share. */
static void json_common(struct json *j, const struct report *r)
{
	double secs = r->end - r->start;

	json_key(j, "start");
	json_double(j, r->start, 3);
	json_key(j, "end");
	json_double(j, r->end, 3);
	json_key(j, "datagrams");
	json_u64(j, r->dgrams);
	json_key(j, "bytes");
	json_u64(j, r->bytes);
	json_key(j, "bits_per_second");
	json_double(j, secs > 0 ? r->bytes * 8.0 / secs : 0, 1);
	json_key(j, "datagrams_per_second");
	json_double(j, secs > 0 ? r->dgrams / secs : 0, 1);
	json_lateness(j, r->late);
	json_key(j, "slots");
	json_u64(j, r->slots);
	json_key(j, "missed_slots");
	json_u64(j, r->missed);
	json_key(j, "burst_share");
	if (r->dgrams_paced)
		json_double(j, (double)r->burst_dgrams / r->dgrams_paced, 4);
	else
		json_null(j);
	json_refused(j, r->refused);
	json_key(j, "sender_drops");
	json_u64(j, r->snd_drops);
	json_key(j, "icmp_errors");
	json_u64(j, r->icmp);
}

/*
 * Write out what sb holds. A reader that went away (`| head`) stops the
 * run, quietly as top does; the run still closes at the sink.
 */
static void flush_out(struct gen *g, struct strbuf *sb)
{
	errno = 0;
	if ((sb->len && fwrite(sb->buf, 1, sb->len, stdout) != sb->len) || fflush(stdout)) {
		if (!g->write_failed && errno != EPIPE)
			fprintf(stderr, GEN_WHO ": write error on standard output: %s; stopping\n",
				strerror(errno ? errno : EIO));
		g->write_failed = true;
		pthread_kill(g->sender_thread, SIGTERM);
	}
	sb_free(sb);
}

void gen_report__interval(struct gen *g, const struct report *r)
{
	struct strbuf sb = {};

	if (g->o.json) {
		struct json j;

		json_init(&j, &sb);
		json_obj_begin(&j);
		json_key(&j, "final");
		json_bool(&j, false);
		json_common(&j, r);
		json_obj_end(&j);
		sb_append(&sb, "\n", 1);
	} else {
		print_interval(g, r);
	}
	flush_out(g, &sb);
}

/* ---- the summary ---- */

/*
 * --no-control: the sender's half of the ledger, in the sink's layout.
 * What reached the sink is not known here, so those lines are left out
 * rather than printed as zeros.
 */
static void print_own_ledger(struct gen *g, const struct report *r)
{
	uint64_t sent = g->tally.numbered;
	char a[32], p[32];

#define ROW(what, n, note) do {						\
		fmt_count(a, sizeof(a), (n));				\
		if (sent)						\
			snprintf(p, sizeof(p), "%7.2f %%", 100.0 * (double)(n) / (double)sent); \
		else							\
			p[0] = 0;					\
		printf("  %-26s %14s %9s%s%s\n", what, a, p, *(note) ? "  " : "", note); \
	} while (0)

	printf("ledger: the sender's side only (--no-control: what reached the sink is not known here), datagrams\n");
	ROW("sent", sent, "");
	ROW("sender drops", r->snd_drops, g->tracer ? "refused sends + drops the tracer saw after a send"
						     : "refused sends only: no tracer");
	for (int c = 0; c < CAUSE_MAX; c++)
		if (g->snd_cause[c]) {
			fmt_count(a, sizeof(a), g->snd_cause[c]);
			printf("    %-24s %14s  (sender's tracer)\n", cause__name(c), a);
		}
	ROW("left this host", sent - r->snd_drops, "sent - sender drops");
	if (g->tracer && r->refused[RF_UNKNOWN]) {
		fmt_count(a, sizeof(a), r->refused[RF_UNKNOWN]);
		printf("  %-26s %14s  sender drops may be up to this many more, left this host as many fewer\n",
		       "refused, cause unknown", a);
	}
	fmt_count(a, sizeof(a), r->icmp);
	printf("  %-26s %14s%s\n", "errors that came back", a,
	       g->errq[EQ_PORT_UNREACH] ? "            ICMP port unreachable among them: nobody listens there" : "");
#undef ROW
}

static void summary_report(struct gen *g, struct report *r)
{
	const struct tally *t = &g->tally;

	memset(r, 0, sizeof(*r));
	r->start = 0;
	r->end = g->elapsed;
	r->dgrams = t->accepted;
	r->bytes = t->bytes;
	r->slots = t->slots;
	r->missed = t->missed;
	r->dgrams_paced = g->o.max ? 0 : t->dgrams;
	r->burst_dgrams = t->burst_dgrams;
	for (int i = 0; i < RF_MAX; i++) {
		r->refused[i] = t->refused[i];
		r->refused_all += t->refused[i];
	}
	for (int i = 0; i < g->nflows; i++)
		r->snd_drops += gen_flow_snd_drops(g, &g->flows[i]);
	r->icmp = gen_icmp_total(g);
	r->late = g->o.max ? NULL : &g->late_all;
}

/*
 * Refusals of unknown cause (partial_refusal) count as ones the tracer
 * saw: had they no skb, the silent drops are short by up to that many.
 */
static void print_unknown(const struct gen *g, const struct report *r)
{
	char a[32];

	if (!g->tracer || !r->refused[RF_UNKNOWN])
		return;
	fmt_count(a, sizeof(a), r->refused[RF_UNKNOWN]);
	printf("uncertain     %s refusal%s of unknown cause (a batch cut short): the silent drops, and sender drops, may be up to %s more\n",
	       a, r->refused[RF_UNKNOWN] == 1 ? "" : "s", a);
}

static void print_summary(struct gen *g, const struct report *r)
{
	const struct tally *t = &g->tally;
	double secs = r->end > 0 ? r->end : 1e-9;
	char a[32], b[32], c[32], d[32], e[32];
	uint64_t tracer_silent = r->snd_drops - r->refused_all;

	printf("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
	fmt_count(a, sizeof(a), t->numbered);
	fmt_count(b, sizeof(b), t->accepted + t->closing);
	fmt_bytes(c, sizeof(c), t->bytes);
	printf("sent          %s datagrams of %" PRIu64 " B in %.2f s to %s; %s accepted by the kernel",
	       a, g->o.size, r->end, g->dst_str, b);
	if (t->closing)
		printf(" (%" PRIu64 " closing datagram%s after the schedule: not in the rate)", t->closing, t->closing == 1 ? "" : "s");
	printf("\n");
	if (t->copies)
		printf("copies        %" PRIu64 " more of the closing datagram%s (--no-control: the sink counts them as duplicates; not counted here)\n",
		       t->copies, t->closing == 1 ? "" : "s");
	fmt_bitrate(a, sizeof(a), r->bytes * 8.0 / secs);
	fmt_pps(b, sizeof(b), r->dgrams / secs);
	fmt_bytes(d, sizeof(d), r->bytes);
	if (g->o.max) {
		printf("rate          %s of UDP payload (%s), %s (unpaced)\n", a, d, b);
	} else {
		double target_bps = g->pps * 8.0 * g->o.size;

		fmt_bitrate(c, sizeof(c), target_bps);
		printf("rate          %s of UDP payload (%s), %s (target %s: %.2f %%)\n", a, d, b, c,
		       100.0 * (r->bytes * 8.0 / secs) / target_bps);
		fmt_pct(a, sizeof(a), &g->late_all, 0.5);
		fmt_pct(b, sizeof(b), &g->late_all, 0.99);
		fmt_ns(c, sizeof(c), (double)g->late_all.max);
		fmt_count(d, sizeof(d), g->late_all.count);
		printf("lateness      p50 %s, p99 %s, max %s over %s slots (due -> handed to the kernel; ~: an estimate, at most 3.2 %% high)\n",
		       a, b, c, d);
		fmt_count(a, sizeof(a), t->missed);
		printf("missed        %s slots (%" PRIu64 " stall%s re-anchored the schedule)%s\n", a,
		       t->reanchors, t->reanchors == 1 ? "" : "s",
		       g->o.catch_up ? "; --catch-up: none skipped" : "");
		printf("bursts        %.2f %% of datagrams went less than half a slot after the previous slot\n",
		       t->dgrams ? 100.0 * t->burst_dgrams / t->dgrams : 0.0);
	}
	fmt_count(a, sizeof(a), r->refused_all);
	printf("refused       %s datagrams (", a);
	for (int i = 0; i < RF_MAX; i++)
		printf("%s%s %" PRIu64, i ? ", " : "", refusal_names[i], r->refused[i]);
	printf(")%s%s\n", g->other_errno ? "; other: " : "",
	       g->other_errno ? strerror(g->other_errno) : "");
	fmt_count(a, sizeof(a), r->icmp + g->errq[EQ_LOCAL]);
	printf("errors back   %s", a);
	for (int i = 0; i < EQ_MAX; i++)
		if (g->errq[i])
			printf(", %s %" PRIu64, errq_names[i], g->errq[i]);
	printf("%s\n", g->errq[EQ_PORT_UNREACH] ? " (port unreachable: nobody listens there)" : "");
	fmt_count(a, sizeof(a), r->snd_drops);
	fmt_count(b, sizeof(b), r->refused_all);
	fmt_count(c, sizeof(c), tracer_silent);
	if (g->tracer)
		printf("sender drops  %s = %s refused + %s dropped silently after a send succeeded (the tracer)\n",
		       a, b, c);
	else
		printf("sender drops  %s refused; drops after a send succeeded are not counted (%s)\n",
		       a, g->o.no_tracer ? "--no-tracer" :
		       g->tracer_failed ? "the tracer failed to open" : "no tracer: it needs root");
	print_unknown(g, r);
	for (int cz = 0; cz < CAUSE_MAX; cz++)
		if (g->snd_cause[cz]) {
			fmt_count(a, sizeof(a), g->snd_cause[cz]);
			printf("    %-24s %12s  (the tracer: refused or not)\n", cause__name(cz), a);
		}
	printf("  %4s %6s %14s %14s %10s %10s\n", "FLOW", "SPORT", "SENT", "ACCEPTED",
	       "REFUSED", "SNDDROPS");
	for (int i = 0; i < g->nflows; i++) {
		const struct flow *f = &g->flows[i];

		fmt_count(a, sizeof(a), f->seq);
		fmt_count(b, sizeof(b), f->accepted);
		fmt_count(c, sizeof(c), f->refused);
		fmt_count(e, sizeof(e), gen_flow_snd_drops(g, f));
		printf("  %4d %6u %14s %14s %10s %10s\n", i, f->sport, a, b, c, e);
	}
}

static void json_summary(struct gen *g, const struct report *r, const struct ledger *l,
			 struct strbuf *sb)
{
	const struct tally *t = &g->tally;
	struct json j;

	json_init(&j, sb);
	json_obj_begin(&j);
	json_key(&j, "final");
	json_bool(&j, true);
	json_key(&j, "target");
	json_str(&j, g->dst_str);
	json_key(&j, "family");
	json_str(&j, gen_is_v6(g) ? "inet6" : "inet");
	json_key(&j, "run");
	json_u64(&j, g->run);
	json_key(&j, "size");
	json_u64(&j, g->o.size);
	json_key(&j, "path_mtu");
	json_u64(&j, g->mtu);
	json_key(&j, "fragmented");
	json_bool(&j, g->mtu_payload && g->o.size > g->mtu_payload);
	json_key(&j, "flows");
	json_u64(&j, g->nflows);
	json_key(&j, "burst");
	json_u64(&j, g->o.burst);
	json_key(&j, "gso");
	json_bool(&j, g->o.gso);
	json_key(&j, "rate_counts");
	json_str(&j, "udp_payload");
	json_key(&j, "target_bits_per_second");
	if (g->o.max)
		json_null(&j);
	else
		json_double(&j, g->pps * 8.0 * g->o.size, 1);
	json_key(&j, "target_datagrams_per_second");
	if (g->o.max)
		json_null(&j);
	else
		json_double(&j, g->pps, 3);
	json_common(&j, r);
	json_key(&j, "numbered");
	json_u64(&j, t->numbered);
	json_key(&j, "closing_datagrams");
	json_u64(&j, t->closing);
	json_key(&j, "closing_copies");
	json_u64(&j, t->copies);
	json_key(&j, "reanchors");
	json_u64(&j, t->reanchors);
	json_key(&j, "errors_back");
	json_obj_begin(&j);
	for (int i = 0; i < EQ_MAX; i++) {
		json_key(&j, errq_names[i]);
		json_u64(&j, g->errq[i]);
	}
	json_obj_end(&j);
	json_key(&j, "sender_tracer");
	json_bool(&j, g->tracer);
	json_key(&j, "sender_drops_by_cause");
	json_obj_begin(&j);
	for (int c = 0; c < CAUSE_MAX; c++)
		if (g->snd_cause[c]) {
			json_key(&j, cause__name(c));
			json_u64(&j, g->snd_cause[c]);
		}
	json_obj_end(&j);
	json_key(&j, "per_flow");
	json_arr_begin(&j);
	for (int i = 0; i < g->nflows; i++) {
		const struct flow *f = &g->flows[i];

		json_obj_begin(&j);
		json_key(&j, "flow");
		json_u64(&j, i);
		json_key(&j, "sport");
		json_u64(&j, f->sport);
		json_key(&j, "sent");
		json_u64(&j, f->seq);
		json_key(&j, "accepted");
		json_u64(&j, f->accepted);
		json_key(&j, "refused");
		json_u64(&j, f->refused);
		json_key(&j, "tracer_drops");
		if (g->tracer)
			json_u64(&j, f->tracer);
		else
			json_null(&j);
		json_key(&j, "sender_drops");
		json_u64(&j, gen_flow_snd_drops(g, f));
		json_obj_end(&j);
	}
	json_arr_end(&j);
	/* why the sink went mid-run (gen stopped then), or null */
	json_key(&j, "sink_gone");
	json_str(&j, g->sink_gone[0] ? g->sink_gone : NULL);
	json_key(&j, "ledger");
	if (l) {
		json_obj_begin(&j);
		ledger__json(&j, l);
		json_obj_end(&j);
	} else {
		json_null(&j);
	}
	json_obj_end(&j);
	sb_append(sb, "\n", 1);
}

void gen_report__plan(const struct gen *g)
{
	char rate[32], pps[32], per[32], dur[64];

	if (g->o.json)
		return;
	if (g->o.max) {
		snprintf(rate, sizeof(rate), "max");
		snprintf(pps, sizeof(pps), "unpaced");
	} else {
		fmt_bitrate(rate, sizeof(rate), g->pps * 8.0 * g->o.size);
		fmt_pps(pps, sizeof(pps), g->pps);
	}
	if (g->o.count)
		snprintf(dur, sizeof(dur), "%" PRIu64 " datagrams", g->o.count);
	else
		snprintf(dur, sizeof(dur), "%g s", g->o.duration);
	printf(GEN_WHO ": %s, %d flow%s, %" PRIu64 " B datagrams, %s of UDP payload (%s), %s\n",
	       g->dst_str, g->nflows, g->nflows == 1 ? "" : "s", g->o.size, rate, pps, dur);
	if (!g->o.max) {
		fmt_ns(per, sizeof(per), g->period_ns);
		printf(GEN_WHO ": a slot every %s, %" PRIu64 " datagram%s each%s; path MTU %d%s; run %u\n",
		       per, g->o.burst, g->o.burst == 1 ? "" : "s",
		       g->o.gso ? " (GSO)" : "", g->mtu,
		       g->o.catch_up ? "; --catch-up" : "", g->run);
	}
	fflush(stdout);
}

void gen_report__results(struct gen *g, const struct ledger *l)
{
	struct report r;

	summary_report(g, &r);
	if (g->o.json) {
		struct strbuf sb = {};

		json_summary(g, &r, g->ctl >= 0 ? l : NULL, &sb);
		flush_out(g, &sb);
		return;
	}
	if (g->write_failed)
		return;
	print_summary(g, &r);
	if (g->ctl < 0)
		print_own_ledger(g, &r);
	else if (l)
		ledger__print(stdout, l);
	fflush(stdout);
}
