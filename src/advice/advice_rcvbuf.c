// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The rcvbuf rule: a socket's receive buffer overflowed. The plan
 * (advice_rcvbuf_plan, which the hint shares) judges the drops: a burst a
 * bigger buffer absorbs, a steady overload to pace, or a reader that
 * stopped; advice_rcvbuf says so, with the numbers behind it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "advice_internal.h"

/* Why a burst is per snapshot interval, when it is: the buffer advice
 * sizes for it, so the reader must know how coarse it is. */
static void burst_note(const struct advice_input *in, char *e, size_t len)
{
	if (!in->burst.known || !in->burst.v || in->burst_s <= 0 || in->burst_window ||
	    in->burst_episode)
		return;
	if (in->live) {
		add(e, len, "The burst is per refresh interval (%s): the drops may have come in a "
		    "shorter burst. ", S(in->burst_s));
		return;
	}
	if (in->event_drops.known && in->event_drops.v < in->drops)
		add(e, len, "Per-drop events cover only %s of these drops (the rest were shed or not "
		    "recorded), too few to time the burst: it is per snapshot interval (%s, record -i), "
		    "so the drops may have come in a shorter burst. ", N(in->event_drops.v),
		    S(in->burst_s));
	else
		add(e, len, "The trace holds no per-drop events, so the burst is per snapshot interval "
		    "(%s, record -i): the drops may have come in a shorter burst, and a longer interval "
		    "makes it larger (record with events to time it). ", S(in->burst_s));
}

/* Is sysctl `name` host-wide and not settable in the netns viewed? */
static bool host_only(const struct advice_input *in, const char *name)
{
	const struct advice_sysctl_scope *sc = advice__scope_of(in->where, name);

	return sc && sc->scope == ADVICE_SCOPE_HOST && !sc->settable;
}

/* The arrival rate in bit/s: known, or the worst interval's drops (a lower
 * bound); 0 if neither. *bound set when it is the lower bound. */
static double arrival_bits(const struct advice_input *in, double payload, bool *bound)
{
	*bound = false;
	if (in->rate_Bps.known && in->rate_Bps.v > 0)
		return in->rate_Bps.v * 8;
	if (in->rate_dgps.known && in->rate_dgps.v > 0 && payload > 0)
		return in->rate_dgps.v * payload * 8;
	if (payload > 0 && in->burst.known && in->burst.v && in->burst_s > 0) {
		*bound = true;
		return in->burst.v / in->burst_s * payload * 8;
	}
	if (payload > 0 && in->drops && in->span_s > 0) {
		*bound = true;
		return in->drops / in->span_s * payload * 8;
	}
	return 0;
}

struct rcvbuf_plan advice_rcvbuf_plan(const struct advice_input *in)
{
	bool ts_known = in->truesize.known && in->truesize.v > 0 && isfinite(in->truesize.v);
	struct rcvbuf_plan p;

	p.payload = in->avg_size.known ? (double)payload_u(in->avg_size.v) : 0;
	p.ts_est = !ts_known;
	p.ts = ts_known ? in->truesize.v
	       : p.payload > 0 ? (double)advice__truesize_estimate((uint64_t)p.payload,
								   in->mtu.known ? in->mtu.v : 0,
								   in->family)
			       : 0;
	p.rb = in->rcvbuf.known ? in->rcvbuf.v : 0;
	p.large = p.rb >= ADVICE_LARGE_RCVBUF;
	p.have_burst = in->burst.known && in->burst.v && p.ts > 0 && p.rb;
	/* what a buffer that absorbs twice the worst burst must hold, in
	 * double: a hostile burst x truesize does not fit an integer */
	_Static_assert(ADVICE_BURST_MARGIN == 2, "the advice's text says twice");
	p.need_d = p.have_burst ? (double)p.rb + ADVICE_BURST_MARGIN * (double)in->burst.v * p.ts : 0;
	/*
	 * The queue seen below half the buffer at one look or more: the
	 * reader had caught up, so the drops came in bursts (a bursty sender)
	 * however many intervals they touch; a steady overload keeps the
	 * queue full at every look.
	 */
	p.drained = in->queue_between_drops && in->queue_low.known && in->queue_looks.known &&
		    in->queue_looks.v >= 2 &&
		    p.rb && in->queue_low.v < p.rb / 2;
	/*
	 * Drops in most intervals, the queue never seen drained: a steady
	 * overload, not a burst. Three intervals suffice (a 3 s sample at
	 * 1 s intervals judges as a 30 s one does); fewer say too little.
	 */
	p.sparse = in->windows.known && in->windows_dropping.known && in->windows.v >= 10 &&
		   in->windows_dropping.v < in->windows.v - in->windows.v / 4;
	p.sustained = in->intervals.known && in->intervals_dropping.known &&
		      in->intervals.v >= 3 && in->intervals_dropping.v <= in->intervals.v &&
		      in->intervals_dropping.v >= in->intervals.v - in->intervals.v / 4 && !p.drained &&
		      !p.sparse;
	/*
	 * The kernel's windows, a second of them or more: they alone decide
	 * (every view of the run has the same ones; a view's intervals and
	 * its looks at the queue are its own). Drops in half the windows of
	 * their stretch or more: steady (a paced sender on a busy host leaves
	 * some windows quiet, and is still faster than its reader); in fewer:
	 * bursts, between which the reader caught up for 100 ms or more.
	 */
	if (in->kernel_windows) {
		/* a view's looks at the queue are its own: not with the windows */
		p.drained = false;
		p.sparse = in->windows.v >= 10 &&
			   in->windows_dropping.v < (in->windows.v + 1) / 2;
		/* under a second of drops says neither steady nor bursts */
		p.sustained = in->windows.v >= 10 && !p.sparse;
	}
	p.too_big = !p.large && p.have_burst && p.need_d > ADVICE_RCVBUF_CAP;
	p.pace = p.large || p.sustained || p.too_big;
	/* did the app set SO_RCVBUF? only when rmem_default says */
	p.set = in->rcvbuf.known && in->rmem_default.known ? p.rb != in->rmem_default.v : -1;
	/*
	 * Not reading, from the socket's own deliveries when known: none in
	 * the intervals it dropped in, or none in its latest two or more (a
	 * reader stopped mid-run: its queue stays full, every arrival is
	 * dropped). The netns-wide UdpInDatagrams decides only without them,
	 * and only at 0 (then no socket there read): a sibling's reads say
	 * nothing of this socket.
	 */
	if (in->delivered.known)
		p.not_reading = in->drops && (!in->delivered.v ||
					      (in->stalled_intervals.known && in->stalled_intervals.v >= 2 &&
					       in->stalled_s >= ADVICE_STALL_MIN_S));
	else
		p.not_reading = in->reads.known && !in->reads.v && in->drops;
	p.drained_dgps = in->delivered.known && in->delivered.v && in->delivered_s > 0 &&
				 isfinite(in->delivered_s)
			 ? (double)in->delivered.v / in->delivered_s : 0;
	p.pace_dgps = p.pace && !p.not_reading
		      ? d2u(floor(p.drained_dgps * ADVICE_PACE_PCT / 100), UINT64_MAX) : 0;
	/* need_d <= ADVICE_RCVBUF_CAP here: the conversion is exact */
	p.need = !p.pace && p.have_burst
			 ? advice__round_up(p.rb + (uint64_t)ceil(ADVICE_BURST_MARGIN * (double)in->burst.v * p.ts),
					    4096) : 0;
	p.fallback = !p.pace && !p.have_burst
			     ? (p.rb >= ADVICE_FALLBACK_RCVBUF ? 2 * ADVICE_FALLBACK_RCVBUF : ADVICE_FALLBACK_RCVBUF)
			     : 0;
	/* one setting sizes the process's sockets on the port: the most any
	 * of them needs, for each (a fallback gives way to a sized need) */
	p.own = p.need;
	p.shared = !p.pace && in->siblings > 1 && in->sibling_need > p.own;
	if (p.shared) {
		p.need = in->sibling_need;
		p.fallback = 0;
	}
	return p;
}

uint64_t advice__rcvbuf_need(const struct advice_input *in)
{
	const struct rcvbuf_plan p = advice_rcvbuf_plan(in);

	return p.own;
}

/*
 * The rcvbuf change that grows the buffer to `need` (as the kernel keeps
 * it): the setsockopt request (half: the kernel doubles it) when the
 * application sets SO_RCVBUF or may, net.core.rmem_default (not doubled:
 * the same size) when it sets none or may; `why` says what the size is for.
 */
/*
 * Well-known servers, named by their owner's comm, and what their own
 * documentation gives for the buffer. Those with a setting ask for it
 * with SO_RCVBUF, which the kernel doubles; `forces`: also with
 * SO_RCVBUFFORCE where they may, so net.core.rmem_max does not cap them
 * then (unbound.conf(5) so-rcvbuf: "needs root permission to bypass the
 * limit"; rsyslog's imudp RcvBufSize: "and SO_RCVBUFFORCE if it is
 * available"); BIND's ARM, udp-receive-buffer: "values exceeding the
 * maximum are silently reduced". No `how`: the documentation names no
 * such setting (dnsmasq(8); memcached(1) and memcached -h; the Knot DNS
 * reference manual, 3.2), so the host's default is the way. CoreDNS: not
 * checked yet (no documentation at hand); it gets the generic advice.
 */
static const struct server_rcvbuf {
	const char *comm, *product, *how, *doc;
	bool forces;
} servers[] = {
	{ "unbound", "Unbound", "so-rcvbuf: %llu in the server: clause of unbound.conf",
	  "unbound.conf(5), so-rcvbuf", true },
	{ "rsyslogd", "rsyslog", "rcvbufSize=\"%llu\" on its imudp input (input(type=\"imudp\" "
	  "port=\"...\" rcvbufSize=\"...\"))", "rsyslog's imudp documentation, RcvBufSize", true },
	{ "named", "BIND", "udp-receive-buffer %llu; in the options block of named.conf (BIND 9.18 "
	  "and later)", "the BIND 9 Administrator Reference Manual, udp-receive-buffer", false },
	{ "dnsmasq", "dnsmasq", NULL, "dnsmasq(8)", false },
	{ "memcached", "memcached", NULL, "memcached(1)", false },
	{ "knotd", "Knot DNS", NULL, "the Knot DNS reference manual", false },
};

static const struct server_rcvbuf *server_of(const struct advice_input *in)
{
	for (size_t i = 0; in->owner_comm && i < ARRAY_SIZE(servers); i++)
		if (!strcmp(in->owner_comm, servers[i].comm))
			return &servers[i];
	return NULL;
}

static void rcvbuf_change(const struct advice_input *in, struct advice_finding *f, uint64_t need,
			  int set, bool not_reading, const char *why)
{
	const struct server_rcvbuf *srv = server_of(in);
	bool forces = in->owner_net_admin.known && in->owner_net_admin.v;
	char *c = f->change;
	size_t cl = sizeof(f->change);
	uint64_t req = need / 2;

	if (not_reading)
		add(c, cl, "First make the application read it (below); then ");
	if (set != 0)
		advice_set_value(f, "SO_RCVBUF", req);
	else
		advice_set_sysctl(in, f, "net.core.rmem_default", need, NULL);
	if (set != 0) {
		add(c, cl, "%s", not_reading ? "have" : "Have");
		add(c, cl, " the application call setsockopt(fd, SOL_SOCKET, SO_RCVBUF, %llu): the kernel "
		    "doubles it to %s, %s", (unsigned long long)req, B(need), why);
		if (srv && srv->how) {
			char how[200];

			snprintf(how, sizeof(how), srv->how, (unsigned long long)req);
			add(c, cl, " (%s sets it itself: %s, from %s)", srv->product, how, srv->doc);
		} else if (srv) {
			add(c, cl, " (%s has no setting for it that %s names: this takes a change to its "
			    "code)", srv->product, srv->doc);
		}
		if (in->rmem_max.known && req > in->rmem_max.v && forces && (!srv || srv->forces)) {
			/* it may pass the cap: no host setting needed */
			add(c, cl, "; it holds CAP_NET_ADMIN, so SO_RCVBUFFORCE (the same value) passes "
			    "net.core.rmem_max (now %s)%s", B(in->rmem_max.v),
			    srv ? ", as it asks when it can" : "");
		} else if (in->rmem_max.known && req > in->rmem_max.v) {
			add(c, cl, "; allow it first: ");
			advice_add_sysctl(in, c, cl, "net.core.rmem_max", req);
			add(c, cl, " (now %s: a larger request is silently cut to it)", B(in->rmem_max.v));
			/* a container cannot raise a host-wide cap: the call that
			 * ignores it, where the application may */
			if (host_only(in, "net.core.rmem_max"))
				add(c, cl, "; or, with no host setting, SO_RCVBUFFORCE instead of SO_RCVBUF "
				    "(the same value; it ignores rmem_max but needs CAP_NET_ADMIN)");
		} else if (in->rmem_max.known) {
			add(c, cl, "; net.core.rmem_max (%s) already allows it", B(in->rmem_max.v));
		} else {
			add(c, cl, "; net.core.rmem_max must be at least %llu", (unsigned long long)req);
		}
		add(c, cl, ". ");
	}
	if (set == 0) {
		add(c, cl, "%s ", not_reading ? "run" : "Run");
		advice_add_sysctl(in, c, cl, "net.core.rmem_default", need);
		add(c, cl, ": every new socket that sets no SO_RCVBUF gets %s, %s. ", B(need), why);
		if (srv && srv->how) {
			char how[200];

			snprintf(how, sizeof(how), srv->how, (unsigned long long)req);
			add(c, cl, "Or for %s alone: %s (from %s; the kernel doubles it to %s)%s. ",
			    srv->product, how, srv->doc, B(need),
			    !srv->forces && in->rmem_max.known && req > in->rmem_max.v
			    ? ", with net.core.rmem_max raised to it first: it asks with SO_RCVBUF alone, "
			      "which the cap silently cuts" : "");
		} else if (srv) {
			add(c, cl, "%s has no setting of its own for it (%s names none): this sysctl is "
			    "the way. ", srv->product, srv->doc);
		}
	} else if (set == -1) {
		add(c, cl, "Or, if it sets none: ");
		advice_add_sysctl(in, c, cl, "net.core.rmem_default", need);
		add(c, cl, ": every new socket that sets no SO_RCVBUF gets %s (the same size: "
		    "rmem_default is not doubled). ", B(need));
	}
	/* rmem_default host-wide and out of reach from the netns: the
	 * per-socket call does the same for this application alone */
	if (set == 0 && host_only(in, "net.core.rmem_default"))
		add(c, cl, "Or, per socket, with no host setting: setsockopt(fd, SOL_SOCKET, SO_RCVBUF, "
		    "%llu) (doubled to %s; capped at net.core.rmem_max%s), or SO_RCVBUFFORCE with "
		    "CAP_NET_ADMIN past that cap. ", (unsigned long long)req, B(need),
		    in->rmem_max.known && req > in->rmem_max.v ? ", which is lower" : "");
	add(c, cl, "Existing sockets keep their size: restart the application; make a sysctl "
	    "permanent in /etc/sysctl.d/.");
}

int advice_rcvbuf(const struct advice_input *in, struct advice_finding *out, int max)
{
	int n = 0;
	struct advice_finding *f = advice_next(out, max, &n, in->cause);
	const struct rcvbuf_plan p = advice_rcvbuf_plan(in);
	double payload = p.payload, ts = p.ts;
	bool ts_est = p.ts_est, large = p.large, have_burst = p.have_burst;
	bool sustained = p.sustained, too_big = p.too_big, pace = p.pace, bound;
	bool not_reading = p.not_reading;
	uint64_t rb = p.rb;
	int set = p.set;
	double bits = arrival_bits(in, payload, &bound);
	char *e = f->evidence, *c = f->change, flt[48] = "", over[48] = "";
	size_t el = sizeof(f->evidence), cl = sizeof(f->change);

	/* every verdict says how long it judged: a 3 s and a 30 s sample of
	 * one load give the same verdict, each with its own span */
	if (in->span_s > 0)
		snprintf(over, sizeof(over), " (sampled %s)", S(in->span_s));
	snprintf(f->verdict, sizeof(f->verdict), "%s",
		 pace ? "steady_overload" : have_burst ? "bursts" : "unsized");
	if (large)
		snprintf(f->what, sizeof(f->what), "the receive buffer is already very large (%s) and still "
			 "overflowed: the sender is faster than the reader%s", B(rb), over);
	else if (sustained && in->kernel_windows && in->windows.v >= 10)
		snprintf(f->what, sizeof(f->what), "the socket dropped in %llu of %llu %s windows: "
			 "the sender is faster than the reader, steadily%s",
			 (unsigned long long)in->windows_dropping.v, (unsigned long long)in->windows.v,
			 S(in->window_s), over);
	else if (sustained)
		/* the interval's kind (sample, refresh, snapshot) in the
		 * evidence only: the same verdict reads the same in every view */
		snprintf(f->what, sizeof(f->what), "the socket dropped in %llu of %llu intervals: "
			 "the sender is faster than the reader, steadily%s", (unsigned long long)in->intervals_dropping.v,
			 (unsigned long long)in->intervals.v, over);
	else if (too_big)
		snprintf(f->what, sizeof(f->what), "the socket's receive buffer was full, and one for twice "
			 "its worst burst would exceed %s: the sender is faster than the reader%s",
			 B(ADVICE_RCVBUF_CAP), over);
	else if (p.drained || p.sparse)
		snprintf(f->what, sizeof(f->what), "bursts overflowed the socket's receive buffer: the reader "
			 "caught up between them%s", over);
	else
		snprintf(f->what, sizeof(f->what), "the socket's receive buffer was full: the reader fell "
			 "behind the arrivals%s", over);
	advice_drops_line(in, e, el);
	burst_note(in, e, el);
	if (in->kernel_windows && in->windows.v >= 10)
		/* the kernel's windows decided: the same sentence in every view */
		add(e, el, "Its drops came in %s of the %s %s windows from its first drop to its "
		    "last (the kernel's drop windows)%s. ", N(in->windows_dropping.v),
		    N(in->windows.v), S(in->window_s),
		    sustained ? ": a steady overload, which any buffer only postpones"
			      : ": bursts, between which the reader kept up");
	else if (in->intervals.known && in->intervals_dropping.known && in->intervals.v > 1)
		add(e, el, "It dropped in %s of the %s %s%s. ", N(in->intervals_dropping.v),
		    N(in->intervals.v), in->burst_episode ? "sample intervals"
		    : in->live ? "intervals between refreshes" : "intervals between snapshots",
		    sustained ? ": a steady overload, which any buffer only postpones"
		    : p.drained && in->intervals_dropping.v >= in->intervals.v - in->intervals.v / 4
		    ? ", yet its queue drained between them: a bursty sender, not a steady overload"
		    : p.sparse && in->intervals_dropping.v >= in->intervals.v - in->intervals.v / 4
		    ? ", yet in bursts (below): a bursty sender, not a steady overload" : "");
	if (p.sparse && !(in->kernel_windows && in->windows.v >= 10))
		add(e, el, "Its drops came in %s of the %s %s windows from its first drop to its last "
		    "(per-drop events): bursts, between which the reader kept up. ",
		    N(in->windows_dropping.v), N(in->windows.v), S(in->window_s));
	if (p.drained)
		add(e, el, "Its queue held as little as %s of its %s at one of %s looks (at most %s). ",
		    B(in->queue_low.v), B(rb), N(in->queue_looks.v),
		    in->queue_peak.known ? B(in->queue_peak.v) : "unknown");
	if (p.drained_dgps > 0)
		add(e, el, "Its reader took %s datagrams (its own deliveries) in the %s it dropped in: "
		    "%s. ", N(in->delivered.v), S(in->delivered_s), R(p.drained_dgps));

	if (in->rcvbuf.known) {
		add(e, el, "Its buffer: rcvbuf %s", B(rb));
		if (set == 0)
			add(e, el, ", which is net.core.rmem_default: the application did not set SO_RCVBUF. ");
		else if (set == 1) {
			add(e, el, ", not net.core.rmem_default (%s): the application set SO_RCVBUF, asking for "
			    "about %s (the kernel doubles the request", B(in->rmem_default.v), B(rb / 2));
			if (in->rmem_max.known && rb / 2 > in->rmem_max.v)
				add(e, el, "; that is above net.core.rmem_max, %s: set with SO_RCVBUFFORCE, or "
				    "before rmem_max was lowered", B(in->rmem_max.v));
			else if (in->rmem_max.known)
				add(e, el, " after capping it at net.core.rmem_max, %s%s", B(in->rmem_max.v),
				    rb / 2 == in->rmem_max.v ? ": it got the cap" : "");
			add(e, el, "). ");
		} else
			add(e, el, ". ");
	}
	if (ts > 0 && payload > 0) {
		add(e, el, "The kernel charges the buffer each datagram's truesize (buffer and overhead), "
		    "not its payload: %s%.0f B per %.0f B datagram%s", ts_est ? "~" : "", ts, payload,
		    ts_est ? " (estimated for an skb the stack allocates; NIC drivers differ)" : "");
		if (rb)
			add(e, el, ", so %s holds about %.0f of them", B(rb), floor(rb / ts));
		add(e, el, ". ");
		if (ts_est && !in->mtu.known && payload > advice__max_unfragmented(1500, in->family))
			add(e, el, "The interface is not known (check its MTU with ip link): if its MTU is "
			    "below %.0f B (the payload + %u), the datagrams are fragmented and each fragment "
			    "is charged, more than this. ", payload + (in->family == AF_INET6 ? 48 : 28),
			    in->family == AF_INET6 ? 48 : 28);
	} else if (payload <= 0) {
		add(e, el, "The kernel charges the buffer each datagram's truesize, more than its payload. ");
	}
	if (too_big)
		add(e, el, "A buffer with room for twice the worst burst (bursts vary) would hold rcvbuf + "
		    "%u x burst x truesize = %s + %u x %s x %s%.0f B = about %s, above the %s this advice "
		    "goes to: at that size the reader is not briefly behind, the sender is faster. ",
		    ADVICE_BURST_MARGIN, B(rb), ADVICE_BURST_MARGIN, N(in->burst.v), ts_est ? "~" : "", ts,
		    B(d2u(p.need_d, UINT64_MAX)), B(ADVICE_RCVBUF_CAP));
	if (rb && bits > 0) {
		double ms = advice__time_to_fill_ms(rb, bits);

		add(e, el, "A stalled reader had at most %s before the buffer was full: %s x 8 / %s", S(ms / 1e3),
		    B(rb), BPS(bits));
		if (bound)
			add(e, el, ", the worst interval's drop rate (arrivals were at least that%s)",
			    in->live ? "" : "; deliveries are unknown");
		add(e, el, ", counting the payload only");
		if (ts > payload && payload > 0)
			add(e, el, "; by truesize (%s%.0f B per datagram) it filled in about %s",
			    ts_est ? "~" : "", ts, S(ms / 1e3 * payload / ts));
		add(e, el, ". ");
	}
	trim(e);

	if (pace) {
		if (not_reading)
			add(c, cl, "First make the application read it (below). ");
		if (large)
			add(c, cl, "A bigger buffer will not help (past a Very Large buffer only flow control "
			    "helps: Jones and Zhu, \"Considerations When Benchmarking UDP Bulk Flows\"). ");
		else
			add(c, cl, "A bigger buffer would only postpone the drops: when arrivals outpace "
			    "reads for good, any buffer fills. ");
		if (in->group) {
			/* every receiver of the group shares the sender */
			add(c, cl, "This socket is one receiver of a multicast group (or of broadcasts): "
			    "pacing the sender would slow every receiver, and its others may keep up. Make "
			    "this one keep up: read faster (recvmmsg() batches, a reader pinned to its own "
			    "CPU, less work per datagram before the next read; more SO_REUSEPORT sockets do "
			    "not share a group's load, each gets every datagram)%s, or, if its drops come in "
			    "bursts, a buffer for them.",
			    p.drained_dgps ? " so that it takes the group's rate" : "");
		} else if (p.pace_dgps) {
			advice_set_value(f, "sender_pps", p.pace_dgps);
			add(c, cl, "Pace the sender to at most %llu datagrams/s", (unsigned long long)p.pace_dgps);
			if (payload > 0)
				add(c, cl, " (%s of %.0f B payloads)", BPS(p.pace_dgps * payload * 8), payload);
			add(c, cl, ", %u%% of the %s its reader took while it dropped (udpdrop gen --pps %llu "
			    "tests it), add flow control between them, or read faster: more reader threads "
			    "on SO_REUSEPORT sockets, recvmmsg() batches, a reader pinned to its own CPU.",
			    ADVICE_PACE_PCT, R(p.drained_dgps), (unsigned long long)p.pace_dgps);
		} else {
			add(c, cl, "Pace the sender below the rate the reader sustains (its deliveries are "
			    "not known here: kernels before 6.6 do not report them, and on 6.6+ top, "
			    "doctor and record count them; udpdrop gen --pps finds it), add flow control between them, or read faster: more reader threads on "
			    "SO_REUSEPORT sockets, recvmmsg() batches, a reader pinned to its own CPU.");
		}
	} else {
		char why[256];

		if (p.shared && p.own)
			snprintf(why, sizeof(why), "the most that any of its owner's %d sockets on this "
				 "port needs (one setting sizes them all; this one alone needs %s)",
				 in->siblings, B(p.own));
		else if (p.shared)
			snprintf(why, sizeof(why), "the most that any of its owner's %d sockets on this "
				 "port needs (one setting sizes them all; this one's own bursts are not known)",
				 in->siblings);
		else if (have_burst)
			snprintf(why, sizeof(why), "room for twice the worst %s's %s datagrams (bursts vary) at "
				 "%s%.0f B each on top of today's %s, even if it read nothing meanwhile",
				 in->burst_window ? "window" : in->burst_episode ? "burst" : "interval",
				 N(in->burst.v), ts_est ? "~" : "", ts, B(rb));
		else
			snprintf(why, sizeof(why), "%s (%s is not known, so the advice cannot size it)",
				 p.fallback > ADVICE_FALLBACK_RCVBUF ? "a step up from today's"
				 : "the usual starting point (Jones and Zhu, \"Considerations When Benchmarking UDP Bulk Flows\")",
				 rb ? "the worst burst's size in bytes" : "today's buffer");
		rcvbuf_change(in, f, p.need ? p.need : p.fallback, set, not_reading, why);
	}
	if (in->port.known)
		snprintf(flt, sizeof(flt), " 'sport = :%llu'", (unsigned long long)in->port.v);
	snprintf(f->verify, sizeof(f->verify), "Under the same load the socket drops nothing: nstat -az "
		 "UdpRcvbufErrors Udp6RcvbufErrors stays put, ss -uam%s shows rb%s and its d (drops) "
		 "counter not moving, and udpdrop top (or record + report) shows 0 rcvbuf drops for it.",
		 flt, pace ? " unchanged" : " at the new size");

	if (not_reading && (f = advice_next(out, max, &n, in->cause))) {
		e = f->evidence;
		snprintf(f->verdict, sizeof(f->verdict), "not_reading");
		snprintf(f->what, sizeof(f->what), "nothing read the socket while it dropped%s", over);
		if (in->delivered.known && in->delivered.v) {
			add(e, el, "Nothing was delivered to it (its own deliveries, sock:sk_data_ready) in "
			    "its latest %s intervals with drops (%s): its reader stopped, %s delivered before",
			    N(in->stalled_intervals.v), S(in->stalled_s), N(in->delivered.v));
		} else if (in->delivered.known) {
			add(e, el, "Nothing was delivered to it (its own deliveries, sock:sk_data_ready) in "
			    "the intervals it dropped in");
			if (in->delivered_s > 0)
				add(e, el, " (%s)", S(in->delivered_s));
		} else {
			add(e, el, "Applications in its namespace read 0 datagrams");
			if (in->span_s > 0)
				add(e, el, " in %s", S(in->span_s));
			add(e, el, " (UdpInDatagrams +0, netns-wide: no socket there read)");
		}
		/* one look is no history: "never drained" needs two or more */
		if (in->queue_low.known && in->queue_peak.known && in->queue_low.v == in->queue_peak.v &&
		    in->queue_peak.v && in->queue_looks.known && in->queue_looks.v >= 2) {
			add(e, el, ", and its queue held %s", B(in->queue_peak.v));
			if (rb)
				add(e, el, " (%.0f%% of rcvbuf)", 100.0 * in->queue_peak.v / rb);
			add(e, el, " at every one of %s looks: it never drained", N(in->queue_looks.v));
		} else if (in->queued.known) {
			add(e, el, "; queued at the end: %s", B(in->queued.v));
			if (rb)
				add(e, el, " (%.0f%% of rcvbuf)", 100.0 * in->queued.v / rb);
		}
		add(e, el, ". A buffer of any size only postpones the drops of a socket nobody reads.");
		snprintf(f->change, sizeof(f->change), "Check that the owning process is alive and reads "
			 "this socket (strace -f -e trace=recvfrom,recvmsg,recvmmsg -p PID); if it reads "
			 "only at times, size the buffer for what arrives in between (above).");
		if (in->delivered.known && in->reads.known)
			add(e, el, " Netns-wide context (every socket in the namespace, not this one): "
			    "UdpInDatagrams +%s.", N(in->reads.v));
		snprintf(f->verify, sizeof(f->verify), "ss -uam shows the socket's r (bytes queued) "
			 "falling back between bursts, and udpdrop top shows its RX/s above 0.");
	}
	/* the kernel's counter last, labelled: it counts every socket of
	 * the namespace, not this one */
	f = &out[0];
	if (in->mib_rcvbuf_errors.known) {
		add(f->evidence, sizeof(f->evidence), " Netns-wide context (every socket in the namespace, "
		    "not this one alone): UdpRcvbufErrors +%s.", N(in->mib_rcvbuf_errors.v));
		if (in->reads.known)
			add(f->evidence, sizeof(f->evidence), " UdpInDatagrams +%s.", N(in->reads.v));
	}
	return n;
}
