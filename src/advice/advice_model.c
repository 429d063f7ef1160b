// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The live model into the advice engine's input (advice_model.h): what
 * top and doctor know of a row, its bursts and its netns, as numbers the
 * rules take. Pure: the environment comes read (cmd/live_env.c).
 */
#include <string.h>
#include "advice_model.h"
#include "caps.h"
#include "bursts.h"
#include "util.h"
#include "windows.h"

static const struct netns_counters *counters_of(const struct model *m, uint32_t netns)
{
	for (int i = 0; i < m->ncounters; i++)
		if (m->counters[i].netns == netns && m->counters[i].have_base)
			return &m->counters[i];
	return NULL;
}

/* Two counters summed (IPv4 + IPv6), known if the kernel has either. */
static struct advice_u64 mib_pair(const struct mib *base, const struct mib *cur, enum mib_id a,
				  enum mib_id b)
{
	struct advice_u64 r = { false, 0 };

	if (cur->present[a])
		r = ADVICE_U64(mib__diff(base, cur, a));
	if (cur->present[b]) {
		r.v += mib__diff(base, cur, b);
		r.known = true;
	}
	return r;
}

void advice_model__mibs(struct advice_input *in, const struct mib *base, const struct mib *cur)
{
	in->mib_rcvbuf_errors = mib_pair(base, cur, MIB_UdpRcvbufErrors, MIB_Udp6RcvbufErrors);
	in->mib_mem_errors = mib_pair(base, cur, MIB_UdpMemErrors, MIB_Udp6MemErrors);
	in->mib_sndbuf_errors = mib_pair(base, cur, MIB_UdpSndbufErrors, MIB_Udp6SndbufErrors);
	in->mib_no_ports = mib_pair(base, cur, MIB_UdpNoPorts, MIB_Udp6NoPorts);
	in->mib_ignored_multi = mib_pair(base, cur, MIB_UdpIgnoredMulti, MIB_Udp6IgnoredMulti);
	in->mib_csum_errors = mib_pair(base, cur, MIB_UdpInCsumErrors, MIB_Udp6InCsumErrors);
	in->mib_reasm_fails = mib_pair(base, cur, MIB_IpReasmFails, MIB_Ip6ReasmFails);
	in->mib_reasm_timeout = mib_pair(base, cur, MIB_IpReasmTimeout, MIB_Ip6ReasmTimeout);
	in->reads = mib_pair(base, cur, MIB_UdpInDatagrams, MIB_Udp6InDatagrams);
}

void advice_model__env(struct advice_input *in, const struct live_env *e)
{
	in->rmem_default = e->rmem_default;
	in->rmem_max = e->rmem_max;
	in->wmem_default = e->wmem_default;
	in->wmem_max = e->wmem_max;
	memcpy(in->udp_mem, e->udp_mem, sizeof(in->udp_mem));
	in->page_size = e->page_size;
	in->netdev_max_backlog = e->netdev_max_backlog;
	in->ipfrag_time = e->ipfrag_time;
	in->ipfrag_high_thresh = e->ipfrag_high_thresh;
	in->ipfrag_max_dist = e->ipfrag_max_dist;
	/* each sysctl's scope: the commands in the text work where it applies */
	in->where = e->where.n ? &e->where : NULL;
	if (e->ifname[0]) {
		in->ifname = e->ifname;
		in->mtu = e->mtu;
		in->txqueuelen = e->txqueuelen;
	}
}

/*
 * A no_socket flow's port with a socket on it all the same (connected to
 * another peer, bound to another address): words in in->port_taken.
 */
static void port_taken(struct advice_input *in, struct model *m, const struct row *r)
{
	const struct sock_info *best = model__port_holder(m, r->key.netns, r->key.dport,
							  r->key.proto);

	if (best)
		advice__port_taken(in, best->family, best->saddr, best->sport, best->daddr,
				   best->dport, best->npids > 0 ? best->pids[0] : 0, best->comm);
}

static void input_one(struct advice_input *in, struct model *m, const struct row *r,
		      enum cause c, const struct live_burst *b, const struct live_env *e,
		      char *who, size_t wholen, bool sibling);

/*
 * One buffer value for a process's sockets on one port (its REUSEPORT
 * threads take one setting): the most any of the others needs. Each is
 * judged as its own row would be, with r's environment (the same netns
 * and port) and the kernel's drop windows (the same in every view); a
 * view's own bursts are r's alone, so without the windows a sibling's
 * need is not known here.
 */
static void sibling_needs(struct advice_input *in, struct model *m, const struct row *r,
			  enum cause c, const struct live_env *e)
{
	struct row *const *v;
	int n = c == CAUSE_RCVBUF ? model__owner_port_rows(m, r, &v) : 0;

	if (n < 2)
		return;
	in->siblings = n;
	for (int i = 0; i < n; i++) {
		struct advice_input s;
		char who[128];
		uint64_t need;

		if (v[i] == r || !v[i]->cause[c])
			continue;
		input_one(&s, m, v[i], c, NULL, e, who, sizeof(who), true);
		need = advice__rcvbuf_need(&s);
		if (need > in->sibling_need)
			in->sibling_need = need;
	}
}

void advice_model__input(struct advice_input *in, struct model *m, const struct row *r,
			 enum cause c, const struct live_burst *b, const struct live_env *e,
			 char *who, size_t wholen)
{
	input_one(in, m, r, c, b, e, who, wholen, false);
	sibling_needs(in, m, r, c, e);
}

static void input_one(struct advice_input *in, struct model *m, const struct row *r,
		      enum cause c, const struct live_burst *b, const struct live_env *e,
		      char *who, size_t wholen, bool sibling)
{
	const struct netns_counters *nc = counters_of(m, r->key.netns);
	bool sock = r->key.kind == ROW_SOCKET;
	double span = m->last_ns > m->start_ns ? (m->last_ns - m->start_ns) / 1e9 : 0;

	memset(in, 0, sizeof(*in));
	in->cause = c;
	in->live = true;
	in->has_socket = sock;
	in->sender_side = c == CAUSE_QDISC || c == CAUSE_NEIGH;
	in->drops = r->cause[c];
	in->skbs = r->cause_skbs[c];
	in->units = r->cause_units[c];
	in->group = sock && (r->flags & UD_KEY_GROUP);
	if (sock && r->have_sock && r->sock.npids > 0) {
		/* a sibling's need does not read its owner's (the same) */
		int na = sibling ? -1 : caps__of_pid(r->sock.pids[0], 12 /* CAP_NET_ADMIN */);

		in->owner_comm = r->sock.comm;
		if (na >= 0)
			in->owner_net_admin = ADVICE_U64(na);
	}
	in->span_s = span;
	if (sock) {
		if (r->have_sock) {
			fmt_endpoint(who, wholen, r->sock.family, r->sock.saddr, r->sock.sport);
			in->who = who;
			in->family = r->sock.family;
			if (r->sock.sport)
				in->port = ADVICE_U64(r->sock.sport);
			if (r->sock.have_mem) {
				if (r->sock.rcvbuf)
					in->rcvbuf = ADVICE_U64(r->sock.rcvbuf);
				if (r->sock.sndbuf)
					in->sndbuf = ADVICE_U64(r->sock.sndbuf);
				in->queued = ADVICE_U64(r->sock.rmem);
			}
		}
		if (m->have_rx && r->queue_peak)
			in->queue_peak = ADVICE_U64(r->queue_peak);
	} else {
		row__flow(r, who, (int)wholen);
		in->who = who;
		in->family = r->key.family;
		if (r->key.dport)
			in->port = ADVICE_U64(r->key.dport);
		if (c == CAUSE_NO_SOCKET && r->key.dport)
			port_taken(in, m, r);
	}
	/* the cause's own datagrams' size, as every view takes it */
	double size;

	if (row__avg_size(r, c, &size))
		in->avg_size = ADVICE_DBL(size);
	/* arrivals over the last interval, when it dropped then: delivered
	 * (queued to the socket) + dropped; else unknown, and the advice
	 * bounds them by the worst interval's drops and says so */
	if (sock && m->have_rx && r->rate > 0) {
		in->rate_dgps = ADVICE_DBL(r->rx_rate + r->rate);
		if (in->avg_size.known)
			in->rate_Bps = ADVICE_DBL(in->rate_dgps.v * in->avg_size.v);
	}
	if (b && b->intervals) {
		/* the burst and the socket's own deliveries: what "not
		 * reading", "bursts" and the pacing rate are judged by (the
		 * netns's counters below are context only) */
		advice__track_input(in, &b->track[c], b->intervals);
		if (sock && b->queue_looks) {
			in->queue_low = ADVICE_U64(b->queue_low);
			in->queue_looks = ADVICE_U64(b->queue_looks);
			in->queue_between_drops = true;
			if (!in->queue_peak.known || b->queue_high > in->queue_peak.v)
				in->queue_peak = ADVICE_U64(b->queue_high);
		}
	}
	/* the kernel's drop windows: the burst and the drop pattern every
	 * view of the run sees alike (windows.h) */
	if (sock) {
		const struct win_agg *wa = model__windows(m, r, c);

		if (wa)
			advice__kernel_windows(in, win_agg__span(wa), wa->dropping, wa->best,
					       m->have_rx, wa->delivered, wa->stalled);
	}
	if (nc)
		advice_model__mibs(in, &nc->base, &nc->cur);
	if (e)
		advice_model__env(in, e);
}
