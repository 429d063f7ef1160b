// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop sink's runs: the witnesses' baselines (the socket's drop
 * counter, XDP, the tracer's rows), a run's start and abort, and its end:
 * the final readings in order, the ledger built, sent to gen and printed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "ctl.h"
#include "ledger.h"
#include "log.h"
#include "seqtrack.h"
#include "sink_internal.h"
#include "udpgen.h"
#include "util.h"
#include "watch.h"
#include "xdpstamp.h"

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif

/*
 * At a run's end, XDP stops counting it first; this long later, what it
 * counted has reached the socket or a drop (microseconds: the stack runs
 * right after XDP, in the same softirq), and the final readings start.
 * No longer: if the run's traffic still flows, each of its datagrams the
 * kernel drops meanwhile is in the tracer's count and not in XDP's.
 */
#define XDP_SETTLE_NS (2 * NS_PER_MS)

/*
 * The socket's queue (bytes the kernel charges against SO_RCVBUF) and its
 * drop counter (sk_drops, what SO_RXQ_OVFL reports). Not SIOCINQ: on a
 * UDP socket it gives only the next datagram's length, not the queue.
 */
void sink_meminfo(int fd, uint32_t *rmem, uint32_t *drops)
{
	uint32_t mi[SK_MEMINFO_VARS] = {};
	socklen_t len = sizeof(mi);

	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &len))
		memset(mi, 0, sizeof(mi));
	if (rmem)
		*rmem = mi[SK_MEMINFO_RMEM_ALLOC];
	if (drops)
		*drops = mi[SK_MEMINFO_DROPS];
}

/* ---- baselines and the witnesses' counts ----------------------------- */

static bool addr_eq(int family, const uint8_t *a, const uint8_t *b)
{
	return !memcmp(a, b, family == AF_INET ? 4 : 16);
}

/*
 * Is this tracer row one of the run's receiver drops? Our socket's row;
 * drops with no socket headed for our port (and address); and fragments
 * that never made a datagram (a non-first fragment has no port: its
 * addresses must do); the last two from the generator, once its address
 * is known (any_peer: from anyone, for a baseline taken before). The
 * socket's row cannot be split by sender: sink_run_finish says when others
 * sent to the port during the run.
 */
static bool row_is_ours(const struct sink *s, const struct row *row, bool any_peer)
{
	const struct row_key *k = &row->key;
	const struct sink_opts *o = s->o;

	if (k->kind == ROW_SOCKET)
		return k->cookie == s->cookie;
	if (k->kind != ROW_FLOW)
		return false;
	/* [::] takes IPv4 too (unless IPV6_V6ONLY): any family then */
	if (k->family && k->family != o->family &&
	    !(o->wildcard && o->family == AF_INET6))
		return false;
	if (!o->wildcard && k->family && !addr_eq(o->family, k->daddr, o->addr_bytes))
		return false;
	if (k->dport && k->dport != o->port)
		return false;
	if (any_peer)
		return true;
	if (k->dport && (!s->r.have_peer || !k->family))
		return true; /* the generator, or the sender, is not known: anyone's */
	return s->r.have_peer && k->family == s->r.peer_family &&
	       addr_eq(k->family, k->saddr, s->r.peer);
}

int sink_take_baseline(struct sink *s, struct baseline *b)
{
	const void *k;
	void *v;
	uint32_t drops;

	b->ns = now_ns();
	sink_meminfo(s->ufd, NULL, &drops);
	b->sk_drops = drops;
	if (s->have_xdp) {
		int err = xdpstamp__read_flows(&s->xdp, b->xdp, UG_XDP_FLOWS);

		if (!err)
			err = xdpstamp__read_stats(&s->xdp, b->xs);
		if (err)
			return err;
	}
	htab__clear(&b->rows);
	if (!s->have_tracer)
		return 0;
	/* every row that may turn out to be the run's: the generator's
	 * address may only be known later (no control channel) */
	for (size_t i = 0; htab__next(&s->w.m.rows, &i, &k, &v);) {
		const struct row *row = v;
		uint64_t *c;

		if (!row_is_ours(s, row, true))
			continue;
		c = htab__upsert(&b->rows, &row->key, NULL);
		if (!c)
			return -ENOMEM;
		memcpy(c, row->cause, sizeof(row->cause));
	}
	return 0;
}

static void baseline_swap(struct baseline *a, struct baseline *b)
{
	struct baseline t;

	memcpy(&t, a, sizeof(t));
	memcpy(a, b, sizeof(t));
	memcpy(b, &t, sizeof(t));
}

/* The run's receiver drops by cause, since its baseline. */
void sink_rcv_causes(struct sink *s, uint64_t out[CAUSE_MAX])
{
	const void *k;
	void *v;

	memset(out, 0, CAUSE_MAX * sizeof(out[0]));
	if (!s->have_tracer)
		return;
	for (size_t i = 0; htab__next(&s->w.m.rows, &i, &k, &v);) {
		const struct row *row = v;
		const uint64_t *base;

		if (!row_is_ours(s, row, false))
			continue;
		base = htab__find(&s->r.base.rows, &row->key);
		for (int c = 0; c < CAUSE_MAX; c++)
			out[c] += row->cause[c] - (base ? base[c] : 0);
	}
}

/* XDP's counts for the run's flows, since the baseline, into s->xdp_now. */
uint64_t sink_xdp_seen(struct sink *s, uint32_t nflows)
{
	uint64_t total = 0;

	if (!s->have_xdp || !nflows)
		return 0;
	if (nflows > UG_XDP_FLOWS)
		nflows = UG_XDP_FLOWS;
	if (xdpstamp__read_flows(&s->xdp, s->xdp_now, nflows))
		return 0;
	for (uint32_t i = 0; i < nflows; i++) {
		s->xdp_now[i].datagrams -= s->r.base.xdp[i].datagrams;
		s->xdp_now[i].bytes -= s->r.base.xdp[i].bytes;
		total += s->xdp_now[i].datagrams;
	}
	return total;
}

int sink_tracer_refresh(struct sink *s)
{
	int err;

	if (!s->have_tracer)
		return 0;
	err = watch__refresh(&s->w);
	if (err)
		fprintf(stderr, "udpdrop sink: reading the drop counts failed: %s\n", strerror(-err));
	return err;
}

/* ---- runs ------------------------------------------------------------ */

void sink_run_clear(struct sink *s)
{
	struct run *r = &s->r;

	seqtrack__reset(&r->st);
	free(r->sent);
	free(r->sender_drops);
	r->sent = r->sender_drops = NULL;
	r->active = r->control = r->done = r->ending = false;
	r->end_reason = NULL;
	r->nflows = 0;
	r->have_peer = false;
	r->peer_str[0] = 0;
	r->foreign = r->after_end = r->lat_unknown = r->snd_errors = 0;
	r->data_ns = 0;
	r->act_xdp = 0;
	r->act_rmem = 0;
	memset(r->snd_cause, 0, sizeof(r->snd_cause));
	r->sender_tracer = false;
	r->ovfl_seen = false;
	hist__reset(&r->lat);
	hist__reset(&r->qwait);
}

void sink_set_peer(struct run *r, const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)sa;

		memcpy(r->peer, &sin->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			/* an IPv4 peer of a dual-stack socket: as the tracer has it */
			memcpy(r->peer, &sin6->sin6_addr.s6_addr[12], 4);
			r->peer_family = AF_INET;
			goto known;
		}
		memcpy(r->peer, &sin6->sin6_addr, 16);
	} else {
		return;
	}
	r->peer_family = sa->sa_family;
known:
	r->have_peer = true;
	fmt_addr(r->peer_str, sizeof(r->peer_str), r->peer_family, r->peer);
}

/*
 * A run begins. `fresh`: take the baselines now (the control channel
 * announced it before any datagram); else the idle ones stand, taken
 * while nothing was arriving, since the run's first datagrams may have
 * been dropped before the first was read.
 */
int sink_run_start(struct sink *s, uint32_t id, bool control, uint32_t nflows,
		     const struct sockaddr *peer, bool fresh)
{
	struct run *r = &s->r;
	int err;

	sink_run_clear(s);
	r->active = true;
	r->control = control;
	r->id = id;
	r->nflows = nflows;
	if (peer)
		sink_set_peer(r, peer);
	if (nflows) {
		err = seqtrack__size(&r->st, nflows);
		if (err)
			return err;
		r->sent = calloc(nflows, sizeof(*r->sent));
		r->sender_drops = calloc(nflows, sizeof(*r->sender_drops));
		if (!r->sent || !r->sender_drops)
			return -ENOMEM;
	}
	if (s->have_xdp) {
		/* a wildcard bind: the host's addresses as they are now */
		if (control)
			xdpstamp__refresh_local(&s->xdp);
		xdpstamp__set_run(&s->xdp, id);
		/* without control the flows show up one by one: grown below */
		xdpstamp__set_flows(&s->xdp, nflows ? nflows : 1);
	}
	if (fresh) {
		sink_tracer_refresh(s);
		err = sink_take_baseline(s, &r->base);
		if (err)
			return err;
	} else {
		baseline_swap(&r->base, &s->idle);
	}
	r->start_ns = r->last_activity_ns = r->iv_ns = r->data_ns = now_ns();
	r->iv_read = 0;
	if (!s->o->json)
		fprintf(stderr, "udpdrop sink: run %u%s%s: %s\n", id,
			r->have_peer ? " from " : "", r->peer_str,
			control ? "announced on the control channel" :
				  "no control channel (its first datagram started it)");
	return 0;
}

/*
 * A run that failed to start, or whose generator never got READY (it
 * sends nothing before): gone as if it never began, XDP back to any run,
 * the idle baselines taken again. Not a run served (--one-off waits on).
 */
void sink_run_abort(struct sink *s)
{
	sink_run_clear(s);
	if (s->have_xdp) {
		xdpstamp__set_run(&s->xdp, UG_RUN_ANY);
		xdpstamp__set_flows(&s->xdp, 0);
	}
	sink_take_baseline(s, &s->idle);
	s->idle_reads = s->reads_total;
	s->idle_xdp_total = 0;
}

/*
 * Build the run's ledger; the caller frees it. XDP's counts are the ones
 * sink_run_finish read into s->xdp_now, for every flow, when XDP stopped.
 */
static int build_ledger(struct sink *s, struct ledger *l)
{
	struct run *r = &s->r;
	uint32_t n = sink_run_flows(r);
	uint32_t drops;
	bool all_totals = n > 0;
	int err;

	if (n > UG_XDP_FLOWS)
		n = UG_XDP_FLOWS;
	err = ledger__init(l, n);
	if (err)
		return err;
	for (uint32_t i = 0; i < n; i++) {
		const struct seq_flow *sf = seqtrack__flow(&r->st, i);
		struct ledger_flow *f = &l->flows[i];

		if (r->control) {
			f->sent = r->sent[i];
			f->sender_drops = r->sender_drops[i];
		} else if (sf && sf->have_total) {
			f->sent = sf->total;
		} else {
			all_totals = false;
		}
		if (s->have_xdp)
			f->xdp_seen = s->xdp_now[i].datagrams;
		if (sf) {
			f->read = sf->read;
			f->unread = sf->unread;
			f->gap_lost = sf->lost;
			f->reordered = sf->reordered;
			/*
			 * Stale and beyond arrivals were read (or drained) and
			 * seen by XDP, so the ledger must hold them for
			 *   seen = drops + unread + read + duplicates
			 * to balance. A first arrival of a sequence number not
			 * counted yet belongs in read; neither kind can be one:
			 * a stale one is below the horizon, where every number
			 * was counted once already (read, or lost in a range
			 * since forgotten, and a late one cannot be told from a
			 * duplicate there), and a beyond one is at or past the
			 * sender's total, no datagram it sent. So both are
			 * duplicates, "arrivals the sender did not send" (at
			 * worst a late one is counted lost instead of read),
			 * and read + unread + lost = sent holds as well.
			 */
			f->duplicates = sf->duplicates + sf->stale + sf->beyond;
		}
	}
	l->have_sent = r->control ? r->done : all_totals;
	if (r->control && !r->done) {
		static char why[160];

		/* the channel still open: the sink ended the run, not the generator */
		if (s->cfd >= 0)
			snprintf(why, sizeof(why), "the run ended at the sink (%s) before the generator's DONE with its counts",
				 r->end_reason ? r->end_reason : "stopped");
		else
			snprintf(why, sizeof(why), "the generator's DONE with its counts never came (it was killed, or its control channel broke)");
		l->sent_unknown = why;
	}
	l->have_sender = r->control && r->done;
	l->have_sender_tracer = l->have_sender && r->sender_tracer;
	l->have_xdp = s->have_xdp;
	l->have_tracer = s->have_tracer;
	sink_rcv_causes(s, l->rcv_cause);
	memcpy(l->snd_cause, r->snd_cause, sizeof(l->snd_cause));
	l->snd_errors = r->snd_errors;
	/* the counter only grows; the latest of both readings is the truth */
	sink_meminfo(s->ufd, NULL, &drops);
	if (r->ovfl_seen && (uint32_t)(r->ovfl_last - drops) < (1u << 31))
		drops = r->ovfl_last;
	l->rxq_ovfl = (uint32_t)(drops - (uint32_t)r->base.sk_drops);
	l->latency = r->lat;
	l->latency_unknown = r->lat_unknown;
	l->seconds = (double)(r->end_ns - r->start_ns) / 1e9;
	ledger__sum(l);
	return 0;
}

/* A short sleep that a signal does not cut: the final readings need it. */
static void settle_sleep(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / NS_PER_S, .tv_nsec = ns % NS_PER_S };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Datagrams to the port during the run that were not the run's, as far as
 * the witnesses saw them: read by the socket (wrong magic, run, flow or
 * sequence number), or at XDP (to the port but not the run's, or too short
 * to tell). Each witness misses some of the other's (XDP sees the ones the
 * kernel dropped; the socket, those that came another way), and a datagram
 * seen by both counts once: the larger of the two, a lower bound.
 */
static uint64_t foreign_traffic(const struct sink *s, const uint64_t xs[UG_XS_MAX])
{
	uint64_t at_xdp = s->have_xdp ? xs[UG_XS_FOREIGN] + xs[UG_XS_SHORT] : 0;

	return s->r.foreign > at_xdp ? s->r.foreign : at_xdp;
}

/*
 * The end of a run. The final readings, in an order that leaves no gap
 * between the witnesses: XDP stops counting the run first (its stragglers
 * from then on are only stamped as uncounted), and a moment later, when
 * what it counted has reached the socket or been dropped, its counts are
 * read; then the tracer's; then the queue is drained (unread: a datagram
 * XDP did not count is left out of those too). Then the holes are settled
 * and the ledger sent to gen and printed. The baselines for a run without
 * control channel are taken again.
 *
 * What this order cannot see: a straggler that passes XDP after it
 * stopped and is dropped before the tracer is read is a receiver drop
 * that XDP did not count. The end of a run waits for its traffic to stop
 * first (but not when the sink itself is stopped); when it did not stop,
 * how many stragglers there were by the tracer's reading is said, as the
 * most the ledger can be off by.
 */
int sink_run_finish(struct sink *s)
{
	struct run *r = &s->r;
	uint64_t xs[UG_XS_MAX] = {}, foreign, late = 0;
	struct ledger l;
	struct strbuf sb = {};
	int err;

	r->end_ns = now_ns();
	if (s->have_xdp) {
		xdpstamp__stop_run(&s->xdp, r->id);
		settle_sleep(XDP_SETTLE_NS);
		/* every flow: a drained datagram may name one not seen yet */
		sink_xdp_seen(s, UG_XDP_FLOWS);
		if (xdpstamp__read_stats(&s->xdp, xs) == 0)
			for (int i = 0; i < UG_XS_MAX; i++)
				xs[i] -= r->base.xs[i];
		else
			memset(xs, 0, sizeof(xs));
	}
	sink_tracer_refresh(s);
	if (s->have_xdp) {
		uint64_t now_xs[UG_XS_MAX];

		/* stragglers by the tracer's reading: dropped ones are in it */
		if (xdpstamp__read_stats(&s->xdp, now_xs) == 0)
			late = now_xs[UG_XS_AFTER_END] - r->base.xs[UG_XS_AFTER_END];
	}
	sink_drain(s);
	seqtrack__finish(&r->st);
	foreign = foreign_traffic(s, xs);
	err = build_ledger(s, &l);
	/* later fragments reached XDP: the run's datagrams were fragmented */
	if (!err)
		l.fragmented = s->have_xdp && xs[UG_XS_FRAGS] > 0;
	if (err) {
		fprintf(stderr, "udpdrop sink: out of memory building the ledger\n");
		goto out;
	}
	if (s->cfd >= 0 && r->control) {
		struct ctl_msg m;

		if (r->done) {
			ctl_msg__init(&m, "LEDGER");
			ctl_msg__set_u64(&m, "run", r->id);
			ledger__to_msg(&l, &m);
		} else {
			ctl_msg__init(&m, "ERROR");
			ctl_msg__set(&m, "msg", "the sink stopped before the run's DONE");
		}
		if (ctl_send(s->cfd, &m))
			pr_info("cannot send the ledger to the generator\n");
		ctl_msg__free(&m);
	}
	sink_format_run(s, &l, xs, foreign, late, &sb);
	err = sink_emit(s, &sb);
	if (err == -EPIPE)
		err = 0; /* the reader has gone: the run is still served */
	ledger__free(&l);
out:
	s->last_run = r->id;
	s->have_last_run = true;
	s->runs_done++;
	sink_run_clear(s);
	if (s->have_xdp) {
		xdpstamp__set_run(&s->xdp, UG_RUN_ANY);
		xdpstamp__set_flows(&s->xdp, 0);
	}
	/* what arrives from now on belongs to no run: start counting afresh */
	sink_take_baseline(s, &s->idle);
	s->idle_reads = s->reads_total;
	s->idle_xdp_total = 0;
	return err;
}
