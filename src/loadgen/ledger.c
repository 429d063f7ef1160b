// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The end-to-end ledger: arithmetic and printing (see ledger.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "ledger.h"
#include "units.h"
#include "util.h"

int ledger__init(struct ledger *l, int nflows)
{
	memset(l, 0, sizeof(*l));
	if (nflows < 0)
		return -EINVAL;
	if (nflows) {
		l->flows = calloc(nflows, sizeof(*l->flows));
		if (!l->flows)
			return -ENOMEM;
	}
	l->nflows = nflows;
	hist__reset(&l->latency);
	return 0;
}

void ledger__free(struct ledger *l)
{
	free(l->flows);
	l->flows = NULL;
	l->nflows = 0;
}

void ledger__sum(struct ledger *l)
{
	struct ledger_flow *t = &l->total;

	memset(t, 0, sizeof(*t));
	for (int i = 0; i < l->nflows; i++) {
		const struct ledger_flow *f = &l->flows[i];

		t->sent += f->sent;
		t->sender_drops += f->sender_drops;
		t->xdp_seen += f->xdp_seen;
		t->read += f->read;
		t->unread += f->unread;
		t->gap_lost += f->gap_lost;
		t->reordered += f->reordered;
		t->duplicates += f->duplicates;
	}
}

uint64_t ledger__rcv_drops(const struct ledger *l)
{
	uint64_t n = 0;

	for (int c = 0; c < CAUSE_MAX; c++)
		n += l->rcv_cause[c];
	return n;
}

int64_t ledger__lost_before_host(const struct ledger_flow *f)
{
	return (int64_t)f->sent - (int64_t)f->sender_drops - (int64_t)f->xdp_seen;
}

int64_t ledger__unexplained(const struct ledger *l)
{
	const struct ledger_flow *t = &l->total;
	int64_t after = (int64_t)ledger__rcv_drops(l) + (int64_t)t->unread +
			(int64_t)t->read;

	/* XDP saw every copy of a duplicate; read counts each datagram once */
	if (l->have_xdp)
		return (int64_t)t->xdp_seen - after - (int64_t)t->duplicates;
	/* sent counts each once too: a duplicate is no part of either side */
	if (l->have_sent)
		return (int64_t)t->sent - (int64_t)t->sender_drops - after;
	return 0;
}

const char *ledger__sent_unknown(const struct ledger *l)
{
	return l->sent_unknown ? l->sent_unknown :
	       "no control channel, and no flow's last datagram arrived";
}

const char *ledger__caveat(const struct ledger *l)
{
	if (l->fragmented && l->have_xdp && l->have_sender && l->total.sender_drops)
		return "fragmented datagrams and sender drops: a datagram cut after its first fragment left is both a sender drop and seen by XDP, so lost before the host and unexplained are off by those";
	return NULL;
}

int64_t ledger__flow_unexplained(const struct ledger_flow *f)
{
	return (int64_t)f->gap_lost -
	       ((int64_t)f->sent - (int64_t)f->read - (int64_t)f->unread);
}

/*
 * The tracer does not split a socket's drops by sender: what XDP saw and
 * the application did not get is the flow's share.
 */
static int64_t flow_rcv_drops(const struct ledger_flow *f)
{
	return (int64_t)f->xdp_seen - (int64_t)f->unread - (int64_t)f->read -
	       (int64_t)f->duplicates;
}

/* ---- plain text ---- */

static void pct(char *buf, size_t len, int64_t n, uint64_t of)
{
	if (!of)
		buf[0] = 0;
	else
		snprintf(buf, len, "%7.2f %%", 100.0 * (double)n / (double)of);
}

static void count(char *buf, size_t len, int64_t n)
{
	if (n < 0) {
		buf[0] = '-';
		fmt_count(buf + 1, len - 1, (uint64_t)-n);
	} else {
		fmt_count(buf, len, (uint64_t)n);
	}
}

static void line(FILE *f, const char *what, bool known, int64_t n,
		 uint64_t of, const char *note)
{
	char c[32] = "-", p[32] = "", out[256];
	int len;

	if (known) {
		count(c, sizeof(c), n);
		pct(p, sizeof(p), n, of);
	}
	len = snprintf(out, sizeof(out), "  %-26s %14s %9s  %s", what, c, p,
		       note ? note : "");
	if (len >= (int)sizeof(out))
		len = sizeof(out) - 1;
	while (len > 0 && out[len - 1] == ' ')
		out[--len] = 0;
	fprintf(f, "%s\n", out);
}

void ledger__print(FILE *f, const struct ledger *l)
{
	const struct ledger_flow *t = &l->total;
	uint64_t of = l->have_sent ? t->sent : 0;
	int64_t unexpl = ledger__unexplained(l);
	char a[32], b[32], c[32];

	char why[200];

	fprintf(f, "ledger: %d flow%s, %.2f s at the sink, datagrams\n",
		l->nflows, l->nflows == 1 ? "" : "s", l->seconds);
	snprintf(why, sizeof(why), "unknown: %s", ledger__sent_unknown(l));
	line(f, "sent", l->have_sent, (int64_t)t->sent, of, l->have_sent ? NULL : why);
	line(f, "sender drops", l->have_sender, (int64_t)t->sender_drops, of,
	     !l->have_sender ? (l->sent_unknown ? "unknown: the generator's counts never came"
					       : "unknown without the control channel") :
	     l->have_sender_tracer ? NULL : "refused sends only: the sender ran without its tracer");
	for (int i = 0; i < CAUSE_MAX; i++)
		if (l->snd_cause[i]) {
			fmt_count(a, sizeof(a), l->snd_cause[i]);
			fprintf(f, "    %-24s %14s  (sender's tracer)\n", cause__name(i), a);
		}
	char lbh[160];

	if (!l->have_xdp)
		snprintf(lbh, sizeof(lbh), "not measured: run the sink with --xdp IFACE");
	else if (l->have_sent && !l->have_sender) {
		count(a, sizeof(a), (int64_t)t->sent - (int64_t)t->xdp_seen);
		snprintf(lbh, sizeof(lbh), "sent - seen by XDP = %s, sender drops included", a);
	} else
		snprintf(lbh, sizeof(lbh), "sent - sender drops - seen by XDP");
	line(f, "lost before the host", l->have_xdp && l->have_sent && l->have_sender,
	     ledger__lost_before_host(t), of, lbh);
	line(f, "receiver kernel drops", l->have_tracer, (int64_t)ledger__rcv_drops(l), of,
	     l->have_tracer ? NULL : "not measured: the sink's tracer did not run (needs root)");
	for (int i = 0; i < CAUSE_MAX; i++)
		if (l->rcv_cause[i]) {
			fmt_count(a, sizeof(a), l->rcv_cause[i]);
			fprintf(f, "    %-24s %14s\n", cause__name(i), a);
		}
	line(f, "unread at end", true, (int64_t)t->unread, of, "queued when the run ended");
	line(f, "read by the application", true, (int64_t)t->read, of, NULL);
	if (!l->have_xdp && !l->have_sent) {
		line(f, "unexplained", false, 0, 0, "cannot be checked: neither sent nor XDP counts");
	} else {
		const char *note;

		if (!l->have_sent)
			/* XDP's side balances, but what was sent is not known */
			note = unexpl ? "seen by XDP - receiver drops - unread - read - duplicates; sent is unknown: the ledger cannot be checked" :
			       l->have_tracer ? "of the datagrams XDP saw; sent is unknown: the ledger cannot be checked" :
			       "(receiver drops not measured); sent is unknown: the ledger cannot be checked";
		else if (!unexpl)
			note = l->have_tracer ? "every datagram accounted for" :
			       "(receiver drops not measured)";
		else if (l->have_xdp)
			note = "seen by XDP - receiver drops - unread - read - duplicates";
		else
			note = "includes network loss: add --xdp IFACE to tell it apart";
		line(f, "unexplained", true, unexpl, of, note);
	}
	if (ledger__caveat(l))
		fprintf(f, "  caveat: %s\n", ledger__caveat(l));
	fprintf(f, "  cross-checks:\n");
	if (l->have_xdp) {
		fmt_count(a, sizeof(a), t->xdp_seen);
		fprintf(f, "    %-24s %14s\n", "seen at the interface", a);
	}
	fmt_count(a, sizeof(a), t->gap_lost);
	fmt_count(b, sizeof(b), t->reordered);
	fmt_count(c, sizeof(c), t->duplicates);
	fprintf(f, "    %-24s %14s  (reordered %s, duplicated %s)\n",
		"lost by sequence number", a, b, c);
	fmt_count(a, sizeof(a), l->rxq_ovfl);
	fprintf(f, "    %-24s %14s  (the socket's own drop counter)\n", "SO_RXQ_OVFL", a);
	if (l->have_xdp && l->latency.count) {
		char p50[32], p99[32], mx[32];

		fmt_ns(p50, sizeof(p50), (double)hist__pct(&l->latency, 0.5));
		fmt_ns(p99, sizeof(p99), (double)hist__pct(&l->latency, 0.99));
		fmt_ns(mx, sizeof(mx), (double)l->latency.max);
		/* percentiles from hist.c's buckets: within 3 %, so marked ~ */
		fprintf(f, "    %-24s p50 ~%s, p99 ~%s, max %s", "XDP arrival -> read",
			p50, p99, mx);
		if (l->latency_unknown) {
			fmt_count(a, sizeof(a), l->latency_unknown);
			fprintf(f, " (%s reads without a stamp)", a);
		}
		fprintf(f, "\n");
	}
	if (l->nflows <= 1)
		return;
	fprintf(f, "  %4s %12s %9s %9s %9s %9s %12s %9s %9s\n", "FLOW", "SENT",
		"SNDDROP", "LOSTNET", "RCVDROP*", "UNREAD", "READ", "SEQLOST", "UNEXPL");
	for (int i = 0; i < l->nflows; i++) {
		const struct ledger_flow *fl = &l->flows[i];
		char s[32], sd[32], ln[32], rd[32], ur[32], rr[32], gl[32], ux[32];

		if (l->have_sent)
			fmt_count(s, sizeof(s), fl->sent);
		else
			strcpy(s, "-");
		if (l->have_sender)
			fmt_count(sd, sizeof(sd), fl->sender_drops);
		else
			strcpy(sd, "-");
		if (l->have_xdp && l->have_sent && l->have_sender)
			count(ln, sizeof(ln), ledger__lost_before_host(fl));
		else
			strcpy(ln, "-");
		if (l->have_xdp)
			count(rd, sizeof(rd), flow_rcv_drops(fl));
		else
			strcpy(rd, "-");
		fmt_count(ur, sizeof(ur), fl->unread);
		fmt_count(rr, sizeof(rr), fl->read);
		fmt_count(gl, sizeof(gl), fl->gap_lost);
		if (l->have_sent)
			count(ux, sizeof(ux), ledger__flow_unexplained(fl));
		else
			strcpy(ux, "-");
		fprintf(f, "  %4d %12s %9s %9s %9s %9s %12s %9s %9s\n", i, s, sd, ln,
			rd, ur, rr, gl, ux);
	}
	fprintf(f, "  * per flow, derived: seen by XDP - unread - read - duplicates (the tracer counts per socket)\n");
}

/* ---- JSON ---- */

static void jnum(struct json *j, const char *key, bool known, int64_t v)
{
	json_key(j, key);
	if (known)
		json_i64(j, v);
	else
		json_null(j);
}

static void jcauses(struct json *j, const char *key, const uint64_t *c)
{
	json_key(j, key);
	json_obj_begin(j);
	for (int i = 0; i < CAUSE_MAX; i++)
		if (c[i]) {
			json_key(j, cause__name(i));
			json_u64(j, c[i]);
		}
	json_obj_end(j);
}

void ledger__json(struct json *j, const struct ledger *l)
{
	const struct ledger_flow *t = &l->total;
	bool checkable = l->have_xdp || l->have_sent;

	jnum(j, "sent", l->have_sent, (int64_t)t->sent);
	jnum(j, "sender_drops", l->have_sender, (int64_t)t->sender_drops);
	jcauses(j, "sender_drops_by_cause", l->snd_cause);
	jnum(j, "sender_refused", l->have_sender, (int64_t)l->snd_errors);
	jnum(j, "lost_before_host", l->have_xdp && l->have_sent && l->have_sender,
	     ledger__lost_before_host(t));
	jnum(j, "receiver_drops", l->have_tracer, (int64_t)ledger__rcv_drops(l));
	jcauses(j, "receiver_drops_by_cause", l->rcv_cause);
	jnum(j, "unread", true, (int64_t)t->unread);
	jnum(j, "read", true, (int64_t)t->read);
	jnum(j, "unexplained", checkable, ledger__unexplained(l));
	jnum(j, "xdp_seen", l->have_xdp, (int64_t)t->xdp_seen);
	jnum(j, "seq_lost", true, (int64_t)t->gap_lost);
	jnum(j, "reordered", true, (int64_t)t->reordered);
	jnum(j, "duplicates", true, (int64_t)t->duplicates);
	jnum(j, "rxq_ovfl", true, (int64_t)l->rxq_ovfl);
	json_key(j, "seconds");
	json_double(j, l->seconds, 3);
	json_key(j, "latency_ns");
	if (l->have_xdp && l->latency.count) {
		json_obj_begin(j);
		json_key(j, "p50");
		json_u64(j, hist__pct(&l->latency, 0.5));
		json_key(j, "p99");
		json_u64(j, hist__pct(&l->latency, 0.99));
		json_key(j, "max");
		json_u64(j, l->latency.max);
		json_key(j, "samples");
		json_u64(j, l->latency.count);
		json_key(j, "unstamped");
		json_u64(j, l->latency_unknown);
		json_obj_end(j);
	} else {
		json_null(j);
	}
	json_key(j, "caveat");
	json_str(j, ledger__caveat(l));
	/* sent known: the identity was checked (unexplained holds all of it) */
	json_key(j, "identity_checked");
	json_bool(j, l->have_sent);
	json_key(j, "sent_unknown");
	json_str(j, l->have_sent ? NULL : ledger__sent_unknown(l));
	json_key(j, "measured");
	json_obj_begin(j);
	json_key(j, "sent");
	json_bool(j, l->have_sent);
	json_key(j, "sender");
	json_bool(j, l->have_sender);
	json_key(j, "sender_tracer");
	json_bool(j, l->have_sender_tracer);
	json_key(j, "xdp");
	json_bool(j, l->have_xdp);
	json_key(j, "tracer");
	json_bool(j, l->have_tracer);
	json_obj_end(j);
	json_key(j, "flows");
	json_arr_begin(j);
	for (int i = 0; i < l->nflows; i++) {
		const struct ledger_flow *f = &l->flows[i];

		json_obj_begin(j);
		json_key(j, "flow");
		json_u64(j, i);
		jnum(j, "sent", l->have_sent, (int64_t)f->sent);
		jnum(j, "sender_drops", l->have_sender, (int64_t)f->sender_drops);
		jnum(j, "lost_before_host", l->have_xdp && l->have_sent && l->have_sender,
		     ledger__lost_before_host(f));
		jnum(j, "xdp_seen", l->have_xdp, (int64_t)f->xdp_seen);
		jnum(j, "receiver_drops", l->have_xdp, flow_rcv_drops(f));
		jnum(j, "unread", true, (int64_t)f->unread);
		jnum(j, "read", true, (int64_t)f->read);
		jnum(j, "seq_lost", true, (int64_t)f->gap_lost);
		jnum(j, "reordered", true, (int64_t)f->reordered);
		jnum(j, "duplicates", true, (int64_t)f->duplicates);
		jnum(j, "unexplained", l->have_sent, ledger__flow_unexplained(f));
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* ---- the control channel ---- */

#define FLOW_FIELDS(X) \
	X(sent) X(sender_drops) X(xdp_seen) X(read) X(unread) X(gap_lost) \
	X(reordered) X(duplicates)

void ledger__to_msg(const struct ledger *l, struct ctl_msg *m)
{
	char key[48];

	ctl_msg__set_u64(m, "flows", l->nflows);
	ctl_msg__set_u64(m, "have_sent", l->have_sent);
	ctl_msg__set_u64(m, "have_sender", l->have_sender);
	ctl_msg__set_u64(m, "have_sender_tracer", l->have_sender_tracer);
	ctl_msg__set_u64(m, "have_xdp", l->have_xdp);
	ctl_msg__set_u64(m, "have_tracer", l->have_tracer);
	ctl_msg__set_u64(m, "fragmented", l->fragmented);
	ctl_msg__set_u64(m, "snd_errors", l->snd_errors);
	ctl_msg__set_u64(m, "rxq_ovfl", l->rxq_ovfl);
	ctl_msg__set_u64(m, "latency_unknown", l->latency_unknown);
	ctl_msg__set_double(m, "seconds", l->seconds);
	for (int i = 0; i < CAUSE_MAX; i++) {
		if (l->rcv_cause[i]) {
			snprintf(key, sizeof(key), "rcv.%s", cause__name(i));
			ctl_msg__set_u64(m, key, l->rcv_cause[i]);
		}
		if (l->snd_cause[i]) {
			snprintf(key, sizeof(key), "snd.%s", cause__name(i));
			ctl_msg__set_u64(m, key, l->snd_cause[i]);
		}
	}
	for (int i = 0; i < l->nflows; i++) {
#define X(field) \
		snprintf(key, sizeof(key), "f%d." #field, i); \
		ctl_msg__set_u64(m, key, l->flows[i].field);
		FLOW_FIELDS(X)
#undef X
	}
	/* the histogram whole, so the other side's percentiles are the same */
	ctl_msg__set_u64(m, "lat.count", l->latency.count);
	ctl_msg__set_u64(m, "lat.sum", l->latency.sum);
	ctl_msg__set_u64(m, "lat.min", l->latency.min);
	ctl_msg__set_u64(m, "lat.max", l->latency.max);
	for (unsigned int i = 0; i < HIST_BUCKETS; i++)
		if (l->latency.b[i]) {
			snprintf(key, sizeof(key), "lat.b%u", i);
			ctl_msg__set_u64(m, key, l->latency.b[i]);
		}
}

#define MAX_FLOWS 65536

/* "f<i>.<field>": which flow field, or -1 */
static int flow_key(const char *k, uint64_t nflows, uint64_t *flow)
{
	static const char *const fields[] = {
#define X(field) #field,
		FLOW_FIELDS(X)
#undef X
	};
	char num[24];
	const char *dot;

	if (k[0] != 'f' || !(dot = strchr(k, '.')) || dot - k - 1 <= 0 ||
	    dot - k - 1 >= (long)sizeof(num))
		return -1;
	memcpy(num, k + 1, dot - k - 1);
	num[dot - k - 1] = 0;
	if (parse_u64(num, 0, nflows ? nflows - 1 : 0, flow) || !nflows)
		return -1;
	for (unsigned int i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!strcmp(dot + 1, fields[i]))
			return (int)i;
	return -1;
}

/*
 * One pass over the keys (a LEDGER of 1024 flows has about 10,000): a
 * lookup per expected key would be quadratic. Every flow field must be
 * there; unknown keys (a newer sink's) are skipped.
 */
int ledger__from_msg(struct ledger *l, const struct ctl_msg *msg)
{
	uint64_t n, v;
	uint8_t *have = NULL;
	int err, nfields = 0;

#define X(field) nfields++;
	FLOW_FIELDS(X)
#undef X
	if (ctl_msg__get_u64(msg, "flows", &n) || n > MAX_FLOWS)
		return -EINVAL;
	err = ledger__init(l, (int)n);
	if (err)
		return err;
	have = calloc(n ? n : 1, 1);
	if (!have) {
		ledger__free(l);
		return -ENOMEM;
	}
#define FLAG(name) \
	if (ctl_msg__get_u64(msg, #name, &v) || v > 1) \
		goto bad; \
	l->name = v;
	FLAG(have_sent) FLAG(have_sender) FLAG(have_sender_tracer) FLAG(have_xdp)
	FLAG(have_tracer)
#undef FLAG
	/* added after the first version: absent means no */
	if (!ctl_msg__get_u64(msg, "fragmented", &v))
		l->fragmented = v == 1;
	if (ctl_msg__get_u64(msg, "snd_errors", &l->snd_errors) ||
	    ctl_msg__get_u64(msg, "rxq_ovfl", &l->rxq_ovfl) ||
	    ctl_msg__get_u64(msg, "latency_unknown", &l->latency_unknown) ||
	    ctl_msg__get_double(msg, "seconds", &l->seconds) ||
	    ctl_msg__get_u64(msg, "lat.count", &l->latency.count) ||
	    ctl_msg__get_u64(msg, "lat.sum", &l->latency.sum) ||
	    ctl_msg__get_u64(msg, "lat.min", &l->latency.min) ||
	    ctl_msg__get_u64(msg, "lat.max", &l->latency.max))
		goto bad;
	for (int i = 0; i < msg->n; i++) {
		const char *k = msg->kv[i].key;
		uint64_t *dst = NULL, flow;
		int c, field;

		if (!strncmp(k, "rcv.", 4) && (c = cause__from_name(k + 4)) >= 0) {
			dst = &l->rcv_cause[c];
		} else if (!strncmp(k, "snd.", 4) && (c = cause__from_name(k + 4)) >= 0) {
			dst = &l->snd_cause[c];
		} else if (!strncmp(k, "lat.b", 5)) {
			uint64_t b;

			if (parse_u64(k + 5, 0, HIST_BUCKETS - 1, &b))
				goto bad;
			dst = &l->latency.b[b];
		} else if ((field = flow_key(k, n, &flow)) >= 0) {
			struct ledger_flow *f = &l->flows[flow];
			uint64_t *fields[] = {
#define X(name) &f->name,
				FLOW_FIELDS(X)
#undef X
			};

			if (have[flow] & (1u << field))
				continue; /* given twice: the first counts */
			have[flow] |= 1u << field;
			dst = fields[field];
		}
		/* a newer sink's causes or keys this side does not know: skipped */
		if (dst && parse_u64(msg->kv[i].val, 0, UINT64_MAX, dst))
			goto bad;
	}
	for (uint64_t i = 0; i < n; i++)
		if (have[i] != (1u << nfields) - 1)
			goto bad;
	free(have);
	ledger__sum(l);
	return 0;
bad:
	free(have);
	ledger__free(l);
	return -EINVAL;
}
