// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "caps.h"
#include "json.h"
#include "netcfg.h"
#include "output.h"
#include "reconcile.h"
#include "sockid.h"

const char *proto_name(int proto, char *buf, int len)
{
	if (proto == IPPROTO_UDP)
		return "udp";
	if (proto == IPPROTO_UDPLITE)
		return "udplite";
	snprintf(buf, len, "%d", proto);
	return buf;
}

void row_flow(const struct row *r, char *buf, int len)
{
	char src[64], dst[80];

	fmt_addr(src, sizeof(src), r->key.family, r->key.saddr);
	if (r->key.dport)
		fmt_endpoint(dst, sizeof(dst), r->key.family, r->key.daddr,
			     r->key.dport);
	else /* a non-first fragment: no UDP header, no port */
		fmt_addr(dst, sizeof(dst), r->key.family, r->key.daddr);
	snprintf(buf, len, "%s -> %s", src, dst);
}

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

static void sock_remote(const struct row *r, char *buf, int len)
{
	if (!r->have_sock)
		snprintf(buf, len, "?");
	else if (!r->sock.dport)
		snprintf(buf, len, "*");
	else
		fmt_endpoint(buf, len, r->sock.family, r->sock.daddr, r->sock.dport);
}

const char *row_flow_why(const struct row *r)
{
	if (r->flags & UD_KEY_SOCK)
		return "a socket with no cookie or inode (a kernel socket)";
	if (r->key.cause == CAUSE_NO_SOCKET)
		return "no socket bound to the port";
	if (!r->key.netns)
		return "netns unknown: no socket matches the flow";
	if (!r->key.dport)
		return "IP fragment without a UDP header";
	return "no socket matches the destination";
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

static uint64_t mib_diff(const struct mib *base, const struct mib *cur, enum mib_id id)
{
	/* counters only grow: less than the base means another netns now
	 * has this inode (reused), so no honest delta exists: say 0 */
	return cur->v[id] >= base->v[id] ? cur->v[id] - base->v[id] : 0;
}

static uint64_t mib_delta(const struct netns_counters *nc, enum mib_id id)
{
	return mib_diff(&nc->base, &nc->cur, id);
}

/* Which causes reconcile with counters, in print order. */
static const enum cause reconciled[] = { CAUSE_RCVBUF, CAUSE_UDP_MEM,
					 CAUSE_NO_SOCKET, CAUSE_CHECKSUM,
					 CAUSE_FRAG_TIMEOUT };

/*
 * The counters and the reconciliation cover every netns in view (the one
 * --netns names, else every netns) with a base, rows or not: a netns whose
 * UdpRcvbufErrors rose while udpdrop counted nothing there is exactly the
 * miss to show. Within it, a line shows where either side counted.
 */
static bool netns_reconciled(const struct netns_counters *nc)
{
	return nc->have_base && nc->in_view;
}

/* ... and the `counters` object lists those whose counters moved. */
static bool netns_moved(struct model *m, const struct netns_counters *nc)
{
	if (!netns_reconciled(nc))
		return false;
	for (int k = 0; k < MIB_MAX; k++)
		if (mib_delta(nc, k))
			return true;
	for (int c = 0; c < CAUSE_MAX; c++)
		if (model__netns_cause(m, nc->netns, c))
			return true;
	return false;
}

/* ---- advice: what top feeds the engine ----------------------------- */

int output__bursts_init(struct htab *h)
{
	return htab__init(h, sizeof(struct row_key), sizeof(struct live_burst));
}

static void burst_add(struct htab *h, const struct row *r, uint64_t tick, double dt, bool have_rx)
{
	uint64_t rxd;

	struct live_burst *b;
	int created;

	/* a quiet row (-a) has nothing to size for */
	if (!r->drops && !r->skbs && !htab__find(h, &r->key))
		return;
	b = htab__upsert(h, &r->key, &created);
	if (!b || (!created && b->tick == tick))
		return;
	/* refreshes it was out of view: quiet ones */
	if (!created && tick > b->tick + 1)
		b->intervals += (uint32_t)(tick - b->tick - 1);
	b->intervals++;
	b->tick = tick;
	/* deliveries since the last look; a row first seen now has no last
	 * look (its rx runs from the start, before it dropped), so its first
	 * interval is not measured */
	b->have_rx = have_rx && r->key.kind == ROW_SOCKET;
	rxd = r->rx > b->rx_prev ? r->rx - b->rx_prev : 0;
	b->rx_prev = r->rx;
	for (int c = 0; c < CAUSE_MAX; c++) {
		uint64_t d = r->cause[c] > b->prev[c] ? r->cause[c] - b->prev[c] : 0;

		advice__track(&b->track[c], d, dt, b->have_rx && !created, rxd);
		b->prev[c] = r->cause[c];
	}
	/* the queue of a socket the last dump found (a closed one's last
	 * figure would repeat as if looked at again), counted once more
	 * drops follow it: a queue drained between drops says bursts; one
	 * drained after the load ended says nothing */
	if (b->have_pending && r->drops > b->drops_prev) {
		if (!b->queue_looks || b->pending < b->queue_low)
			b->queue_low = b->pending;
		if (b->pending > b->queue_high)
			b->queue_high = b->pending;
		b->queue_looks++;
	}
	b->drops_prev = r->drops;
	b->have_pending = r->key.kind == ROW_SOCKET && r->have_sock && r->sock_alive && r->sock.have_mem;
	b->pending = b->have_pending ? r->sock.rmem : 0;
}

static bool row_exists(const void *key, void *val, void *rows)
{
	return htab__find(rows, key) != NULL;
}

void output__bursts_record(struct htab *h, struct model *m, uint64_t tick)
{
	/* rows the model has dropped (folded sockets): theirs go too (if
	 * out of memory they stay: they only cost room) */
	if (h->n > 64 && h->n > 2 * m->rows.n)
		htab__retain(h, row_exists, &m->rows);
	for (int i = 0; i < m->nview_sockets; i++)
		burst_add(h, m->view_sockets[i], tick, m->interval, m->have_rx);
	for (int i = 0; i < m->nview_flows; i++)
		burst_add(h, m->view_flows[i], tick, m->interval, false);
}

static struct advice_u64 sysctl_u64(const struct netcfg_sysctls *sv, enum netcfg_sysctl i,
				     unsigned field)
{
	uint64_t v;

	return netcfg__u64(sv, i, field, &v) ? ADVICE_U64(v) : (struct advice_u64){ false, 0 };
}

void output__env_sysctls(struct live_env *e, const struct netcfg_sysctls *sv)
{
	long ps = sysconf(_SC_PAGESIZE);

	if (ps > 0)
		e->page_size = ADVICE_U64((uint64_t)ps);
	e->rmem_default = sysctl_u64(sv, NETCFG_RMEM_DEFAULT, 0);
	e->rmem_max = sysctl_u64(sv, NETCFG_RMEM_MAX, 0);
	e->wmem_default = sysctl_u64(sv, NETCFG_WMEM_DEFAULT, 0);
	e->wmem_max = sysctl_u64(sv, NETCFG_WMEM_MAX, 0);
	e->netdev_max_backlog = sysctl_u64(sv, NETCFG_NETDEV_MAX_BACKLOG, 0);
	for (unsigned i = 0; i < 3; i++)
		e->udp_mem[i] = sysctl_u64(sv, NETCFG_UDP_MEM, i);
	/* udp_mem's three go together: all or none */
	if (!e->udp_mem[0].known || !e->udp_mem[1].known || !e->udp_mem[2].known)
		memset(e->udp_mem, 0, sizeof(e->udp_mem));
	e->ipfrag_time = sysctl_u64(sv, NETCFG_IPFRAG_TIME, 0);
	e->ipfrag_high_thresh = sysctl_u64(sv, NETCFG_IPFRAG_HIGH_THRESH, 0);
	e->ipfrag_max_dist = sysctl_u64(sv, NETCFG_IPFRAG_MAX_DIST, 0);
	e->where = sv->where;
}

void output__env_iface(struct live_env *e, const struct trace_iface *f)
{
	snprintf(e->ifname, sizeof(e->ifname), "%s", f->name);
	str_printable(e->ifname); /* the advice quotes it; any byte but '/', ':', space is allowed */
	if (f->mtu)
		e->mtu = ADVICE_U64(f->mtu);
	e->txqueuelen = ADVICE_U64(f->txqueuelen);
}

void output__read_env(struct model *m, uint32_t netns, bool loopback, struct live_env *e)
{
	struct netcfg_sysctls sv;
	struct netcfg_ifaces *il;
	const struct trace_iface *found = NULL;

	memset(e, 0, sizeof(*e));
	e->netns = netns;
	e->loopback = loopback;
	e->read_ns = now_ns();
	/* the netns's own, or udpdrop's where it has none (netcfg says which) */
	netcfg__sysctls(&m->nt, netns, &sv);
	output__env_sysctls(e, &sv);

	/* the interface: lo, or the only other one (else none: ambiguous) */
	il = calloc(1, sizeof(*il));
	if (!il || netcfg__ifaces(&m->nt, netns ? netns : m->nt.self, il)) {
		free(il);
		return;
	}
	for (uint32_t i = 0; i < il->n; i++) {
		if (!strcmp(il->v[i].name, "lo") != loopback)
			continue;
		if (found) {
			found = NULL;
			break;
		}
		found = &il->v[i];
	}
	if (found)
		output__env_iface(e, found);
	free(il);
}

bool output__addr_loopback(int family, const uint8_t *a)
{
	static const uint8_t v6lo[16] = { [15] = 1 };

	if (family == AF_INET)
		return a[0] == 127;
	return family == AF_INET6 && !memcmp(a, v6lo, 16);
}

bool output__row_loopback(const struct row *r)
{
	if (r->key.kind == ROW_SOCKET && !r->have_sock)
		return false;
	if (r->key.kind == ROW_SOCKET)
		return output__addr_loopback(r->sock.family, r->sock.saddr);
	return output__addr_loopback(r->key.family, r->key.daddr);
}

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
		r = ADVICE_U64(mib_diff(base, cur, a));
	if (cur->present[b]) {
		r.v += mib_diff(base, cur, b);
		r.known = true;
	}
	return r;
}

void output__advice_mibs(struct advice_input *in, const struct mib *base, const struct mib *cur)
{
	in->mib_rcvbuf_errors = mib_pair(base, cur, MIB_UdpRcvbufErrors, MIB_Udp6RcvbufErrors);
	in->mib_mem_errors = mib_pair(base, cur, MIB_UdpMemErrors, MIB_Udp6MemErrors);
	in->mib_sndbuf_errors = mib_pair(base, cur, MIB_UdpSndbufErrors, MIB_Udp6SndbufErrors);
	in->mib_no_ports = mib_pair(base, cur, MIB_UdpNoPorts, MIB_Udp6NoPorts);
	in->mib_csum_errors = mib_pair(base, cur, MIB_UdpInCsumErrors, MIB_Udp6InCsumErrors);
	in->mib_reasm_fails = mib_pair(base, cur, MIB_IpReasmFails, MIB_Ip6ReasmFails);
	in->mib_reasm_timeout = mib_pair(base, cur, MIB_IpReasmTimeout, MIB_Ip6ReasmTimeout);
	in->reads = mib_pair(base, cur, MIB_UdpInDatagrams, MIB_Udp6InDatagrams);
}

void output__env_apply(struct advice_input *in, const struct live_env *e)
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

static bool frag_cause(enum cause c)
{
	return c == CAUSE_FRAG_TIMEOUT || c == CAUSE_FRAG_TOO_FAR || c == CAUSE_FRAG_DUP;
}

void output__advice_input(struct advice_input *in, struct model *m, const struct row *r,
			  enum cause c, const struct live_burst *b, const struct live_env *e,
			  char *who, size_t wholen)
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
		row_flow(r, who, (int)wholen);
		in->who = who;
		in->family = r->key.family;
		if (r->key.dport)
			in->port = ADVICE_U64(r->key.dport);
	}
	/* skb->len per datagram (GRO skbs hold several); the row's, not the
	 * cause's: the model keeps bytes per row. A fragment's size says
	 * nothing of its datagram's. */
	if (r->bytes && r->drops && !frag_cause(c))
		in->avg_size = ADVICE_DBL((double)r->bytes / r->drops);
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
		output__advice_mibs(in, &nc->base, &nc->cur);
	if (e)
		output__env_apply(in, e);
}

/* The env of each netns (and loopback or not) the summary needs, read once. */
#define ENV_CACHE 16
struct env_cache {
	struct live_env v[ENV_CACHE];
	int n;
};

static const struct live_env *env_get(struct env_cache *ec, struct model *m, const struct row *r)
{
	uint32_t ns = r->key.netns;
	bool lo = output__row_loopback(r);

	for (int i = 0; i < ec->n; i++)
		if (ec->v[i].netns == ns && ec->v[i].loopback == lo)
			return &ec->v[i];
	if (ec->n == ENV_CACHE)
		return NULL;
	output__read_env(m, ns, lo, &ec->v[ec->n]);
	return &ec->v[ec->n++];
}

/* The findings for every cause of a row: returns how many (into f[max]). */
static int row_advice(struct model *m, const struct output_ctx *o, struct env_cache *ec,
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
		output__advice_input(&in, m, r, c, b, e, who, sizeof(who));
		n += advice__build(&in, f + n, max - n);
	}
	return n;
}

/* Enough for a row with several causes, each with its findings. */
#define ROW_ADVICE_MAX (2 * ADVICE_MAX)

static void plain_advice(struct model *m, const struct output_ctx *o, struct strbuf *sb)
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
				row_flow(r, where, sizeof(where));
			else
				sock_local(r, where, sizeof(where));
			for (int k = 0; k < n; k++)
				sb_printf(sb, "  %s %s: %s\n    change: %s\n", where, cause__name(f[k].cause),
					  f[k].what, f[k].change);
		}
	}
out:
	free(f);
	free(ec);
}

static void json_advice(struct model *m, const struct output_ctx *o, struct env_cache *ec,
			struct json *j, const struct row *r)
{
	struct advice_finding *f = calloc(ROW_ADVICE_MAX, sizeof(*f));
	int n = f ? row_advice(m, o, ec, r, f, ROW_ADVICE_MAX) : 0;

	/* report's keys but the socket's (the row has them), with the
	 * setting's and its value, as report and doctor emit them */
	json_key(j, "advice");
	json_arr_begin(j);
	for (int k = 0; k < n; k++) {
		advice__json_begin(j, &f[k], NULL);
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

	sb_printf(sb, "no socket:\n%-13s %-14s %-44s %9s %9s %9s\n", "CAUSE",
		  "NETNS", "FLOW", final ? "AVG/s" : "DROPS/s", "DROPS", "SKBS");
	for (int i = 0; i < m->nview_flows; i++) {
		struct row *r = m->view_flows[i];

		if (!row_listed(m, r, final))
			continue;
		row_flow(r, flow, sizeof(flow));
		snprintf(ns, sizeof(ns), "%s",
			 model__netns_label(m, r->key.netns, nsbuf, sizeof(nsbuf)));
		snprintf(rate, sizeof(rate), "%.0f", row_rate(m, r, final));
		fmt_count(total, sizeof(total), r->drops);
		fmt_count(skbs, sizeof(skbs), r->skbs);
		sb_printf(sb, "%-13s %-14.14s %-44s %9s %9s %9s\n",
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
	int n = output__reconcile(m, rl, ARRAY_SIZE(rl));

	if (caveat)
		sb_printf(sb, "kernel counters: %s\n", caveat);
	for (int i = 0; i < n; i++) {
		char nsbuf[64], a[24], b[24], verdict[96];

		if (!i || rl[i].netns != rl[i - 1].netns)
			sb_printf(sb, "kernel counters, netns %s (%u):\n",
				  model__netns_label(m, rl[i].netns, nsbuf, sizeof(nsbuf)),
				  rl[i].netns);
		fmt_count(a, sizeof(a), rl[i].kernel);
		fmt_count(b, sizeof(b), rl[i].ours);
		output__reconcile_verdict(&rl[i], verdict, sizeof(verdict));
		sb_printf(sb, "  %-18s +%-10s udpdrop %-13s %-10s %s\n",
			  mib__name(rl[i].counter), a, cause__name(rl[i].cause), b,
			  verdict);
	}
}

bool output__reconcile_ok(const struct reconcile_line *l)
{
	uint64_t d = l->ours > l->kernel ? l->ours - l->kernel : l->kernel - l->ours;

	return d <= l->spread;
}

void output__reconcile_verdict(const struct reconcile_line *l, char *buf, size_t len)
{
	long long d = l->ours >= l->kernel ? (long long)(l->ours - l->kernel)
					   : -(long long)(l->kernel - l->ours);
	char s[24];

	fmt_count(s, sizeof(s), l->spread);
	if (!d)
		snprintf(buf, len, "match");
	else if (output__reconcile_ok(l))
		snprintf(buf, len, "match within +-%s (the counters moved by %s while udpdrop read)",
			 s, s);
	else if (l->spread)
		snprintf(buf, len, "differ by %lld (beyond the +-%s the counters moved while udpdrop read)",
			 d, s);
	else
		snprintf(buf, len, "differ by %lld", d);
}

/*
 * The kernel's tables: said only when one is half full (a full one loses
 * which socket a drop was, not the drop: see the overflow bucket).
 */
static void plain_tables(const struct output_ctx *o, struct strbuf *sb)
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

void output__plain(struct model *m, const struct output_ctx *o, struct strbuf *sb)
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
			char local[64], reason[48];

			if (!r->skbs)
				continue;
			sock_local(r, local, sizeof(local));
			sb_printf(sb, "%s:", local);
			for (int k = 0; k < r->nreasons; k++)
				sb_printf(sb, " %s %" PRIu64 " (%" PRIu64 " skbs)",
					  model__reason_name(m, r->reasons[k].reason, reason, sizeof(reason)),
					  r->reasons[k].drops, r->reasons[k].skbs);
			if (r->have_sock && r->sock.have_mem)
				sb_printf(sb, "; kernel sk_drops +%u since start%s",
					  r->sock.drops - r->sock.drops_base,
					  r->sock_alive ? ""
					  : " when last read (closed since: its later drops are not in it)");
			sb_printf(sb, "\n");
		}
		plain_reconcile(m, sb);
		plain_advice(m, o, sb);
	}
	sb_printf(sb, "\n");
}

/* ---- JSON ----------------------------------------------------------- */

static void json_reasons(struct model *m, struct json *j, const struct row *r)
{
	char buf[48];

	json_key(j, "reasons");
	json_obj_begin(j);
	for (int i = 0; i < r->nreasons; i++) {
		json_key(j, model__reason_name(m, r->reasons[i].reason, buf, sizeof(buf)));
		json_u64(j, r->reasons[i].drops);
	}
	json_obj_end(j);
	json_key(j, "locations");
	json_obj_begin(j);
	for (int i = 0; i < r->nlocs; i++) {
		json_key(j, ksyms__format(&m->ksyms, r->locs[i].addr, buf, sizeof(buf)));
		json_u64(j, r->locs[i].skbs);
	}
	json_obj_end(j);
}

static void json_causes(struct json *j, const uint64_t *cause)
{
	json_key(j, "causes");
	json_obj_begin(j);
	for (int c = 0; c < CAUSE_MAX; c++) {
		if (!cause[c])
			continue;
		json_key(j, cause__name(c));
		json_u64(j, cause[c]);
	}
	json_obj_end(j);
}

static void json_socket(struct model *m, const struct output_ctx *o, struct env_cache *ec,
			struct json *j, const struct row *r)
{
	bool final = o->final;
	char buf[80], nsbuf[64];
	const char *name;

	json_obj_begin(j);
	json_key(j, "proto");
	json_str(j, r->have_sock ? proto_name(r->sock.proto, buf, sizeof(buf)) : NULL);
	json_key(j, "family");
	json_str(j, !r->have_sock ? NULL : r->sock.family == AF_INET6 ? "inet6" : "inet");
	json_key(j, "local");
	sock_local(r, buf, sizeof(buf));
	json_str(j, r->have_sock || row_folded(r) ? buf : NULL);
	json_key(j, "remote");
	sock_remote(r, buf, sizeof(buf));
	json_str(j, r->have_sock ? buf : NULL);
	json_key(j, "netns");
	json_u64(j, r->key.netns);
	json_key(j, "netns_name");
	name = model__netns_label(m, r->key.netns, nsbuf, sizeof(nsbuf));
	json_str(j, model__netns_named(m, r->key.netns) ? name : NULL);
	/* a row known by its inode alone (no dump named its cookie yet):
	 * no cookie, its inode, as report shows it (sockid.h) */
	json_key(j, "cookie");
	if (sockid__inode(r->key.cookie))
		json_null(j);
	else
		json_u64(j, r->key.cookie);
	json_key(j, "inode");
	if (r->have_sock && r->sock.inode)
		json_u64(j, r->sock.inode);
	else if (sockid__inode(r->key.cookie))
		json_u64(j, sockid__inode(r->key.cookie));
	else
		json_null(j);
	json_key(j, "pid");
	if (r->sock.npids)
		json_i64(j, r->sock.pids[0]);
	else
		json_null(j);
	json_key(j, "comm");
	json_str(j, r->sock.npids ? r->sock.comm : NULL);
	/* a kernel device's socket, which no process holds (kowner.h) */
	json_key(j, "kernel_owner");
	json_str(j, !r->sock.npids && r->sock.kowner[0] ? r->sock.kowner : NULL);
	json_key(j, "nprocs");
	json_i64(j, r->sock.npids);
	json_key(j, "pids");
	json_arr_begin(j);
	for (int i = 0; i < r->sock.npids && i < SOCK_MAX_PIDS; i++)
		json_i64(j, r->sock.pids[i]);
	json_arr_end(j);
	json_key(j, "alive");
	json_bool(j, r->sock_alive);
	json_key(j, "attribution");
	json_arr_begin(j);
	if (r->flags & (UD_KEY_FAIL_RCVBUF | UD_KEY_FAIL_MEM))
		json_str(j, "udp_fail_queue_rcv_skb");
	else if (r->flags & UD_KEY_RX_SK)
		json_str(j, "rx_sk");
	if (r->flags & UD_KEY_SKB_SK)
		json_str(j, "skb_sk");
	if (r->flags & ROW_VIA_FLOW)
		json_str(j, "flow");
	json_arr_end(j);
	json_key(j, "rcvbuf");
	if (r->have_sock && r->sock.have_mem)
		json_u64(j, r->sock.rcvbuf);
	else
		json_null(j);
	json_key(j, "queued");
	if (r->have_sock && r->sock.have_mem)
		json_u64(j, r->sock.rmem);
	else
		json_null(j);
	json_key(j, "sk_drops");
	if (r->have_sock && r->sock.have_mem)
		json_u64(j, r->sock.drops);
	else
		json_null(j);
	json_key(j, "sk_drops_since_start");
	if (r->have_sock && r->sock.have_mem)
		json_u64(j, r->sock.drops - r->sock.drops_base);
	else
		json_null(j);
	/* closed: the kernel's counter went with it, these are its last
	 * read (a dump before the close), no match for the drops expected */
	json_key(j, "sk_drops_stale");
	if (r->have_sock && r->sock.have_mem)
		json_bool(j, !r->sock_alive);
	else
		json_null(j);
	json_key(j, "drops");
	json_u64(j, r->drops);
	json_key(j, "skb_events");
	json_u64(j, r->skbs);
	json_key(j, "bytes");
	json_u64(j, r->bytes);
	json_key(j, "drops_per_s");
	json_double(j, row_rate(m, r, final), 1);
	json_key(j, "cause");
	json_str(j, r->skbs ? cause__name(row__main_cause(r)) : NULL);
	json_causes(j, r->cause);
	json_reasons(m, j, r);
	/* deliveries: null where the tracer does not count them */
	json_key(j, "rx");
	if (m->have_rx)
		json_u64(j, r->rx);
	else
		json_null(j);
	json_key(j, "rx_per_s");
	if (m->have_rx)
		json_double(j, rx_rate(m, r, final), 1);
	else
		json_null(j);
	json_key(j, "queue_peak");
	if (m->have_rx)
		json_u64(j, r->queue_peak);
	else
		json_null(j);
	if (final)
		json_advice(m, o, ec, j, r);
	json_obj_end(j);
}

static void json_flow(struct model *m, const struct output_ctx *o, struct env_cache *ec,
		      struct json *j, const struct row *r)
{
	bool final = o->final;
	char buf[128], nsbuf[64];
	const char *name;

	json_obj_begin(j);
	json_key(j, "cause");
	json_str(j, cause__name(r->key.cause));
	json_key(j, "netns");
	json_u64(j, r->key.netns);
	json_key(j, "netns_name");
	name = model__netns_label(m, r->key.netns, nsbuf, sizeof(nsbuf));
	json_str(j, model__netns_named(m, r->key.netns) ? name : NULL);
	json_key(j, "proto");
	json_str(j, proto_name(r->key.proto, nsbuf, sizeof(nsbuf)));
	json_key(j, "family");
	json_str(j, r->key.family == AF_INET6 ? "inet6" : "inet");
	json_key(j, "flow");
	row_flow(r, buf, sizeof(buf));
	json_str(j, buf);
	json_key(j, "why");
	json_str(j, row_flow_why(r));
	json_key(j, "drops");
	json_u64(j, r->drops);
	json_key(j, "skb_events");
	json_u64(j, r->skbs);
	json_key(j, "drops_per_s");
	json_double(j, row_rate(m, r, final), 1);
	json_reasons(m, j, r);
	if (final)
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

void output__json(struct model *m, const struct output_ctx *o, struct strbuf *sb)
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
	json_obj_begin(&j);
	json_key(&j, "drops");
	json_u64(&j, m->totals.drops);
	json_key(&j, "attributed");
	json_u64(&j, m->totals.attributed);
	json_key(&j, "skb_events");
	json_u64(&j, m->totals.skbs);
	json_key(&j, "overflow");
	json_u64(&j, m->totals.overflow);
	json_key(&j, "overflow_skb_events");
	json_u64(&j, m->totals.overflow_skbs);
	json_key(&j, "drops_per_s");
	json_double(&j, o->final ? (elapsed > 0 ? m->totals.drops / elapsed : 0)
				 : m->totals.rate, 1);
	json_causes(&j, m->totals.cause);
	json_key(&j, "missed");
	json_u64(&j, m->missed);
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
		char ino[16];

		if (!netns_moved(m, nc))
			continue;
		snprintf(ino, sizeof(ino), "%u", nc->netns);
		json_key(&j, ino);
		json_obj_begin(&j);
		for (int k = 0; k < MIB_MAX; k++) {
			if (!nc->cur.present[k])
				continue;
			json_key(&j, mib__name(k));
			json_u64(&j, mib_delta(nc, k));
		}
		json_obj_end(&j);
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
	int nrl = output__reconcile(m, rl, ARRAY_SIZE(rl));

	for (int i = 0; i < nrl; i++) {
		json_obj_begin(&j);
		json_key(&j, "netns");
		json_u64(&j, rl[i].netns);
		json_key(&j, "cause");
		json_str(&j, cause__name(rl[i].cause));
		json_key(&j, "counter");
		json_str(&j, mib__name(rl[i].counter));
		json_key(&j, "kernel");
		json_u64(&j, rl[i].kernel);
		json_key(&j, "udpdrop");
		json_u64(&j, rl[i].ours);
		/* the kernel's side is exact to within this (see reconcile_line) */
		json_key(&j, "kernel_spread");
		json_u64(&j, rl[i].spread);
		json_key(&j, "match");
		json_bool(&j, output__reconcile_ok(&rl[i]));
		json_obj_end(&j);
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

int output__reconcile(struct model *m, struct reconcile_line *out, int max)
{
	int n = 0;

	for (int i = 0; i < m->ncounters; i++) {
		struct netns_counters *nc = &m->counters[i];

		if (!netns_reconciled(nc))
			continue;
		for (size_t j = 0; j < ARRAY_SIZE(reconciled) && n < max; j++) {
			enum mib_id ids[3];
			int k, nids = cause__mibs(reconciled[j], ids, 3);
			uint64_t kern = 0, ours = model__netns_cause(m, nc->netns, reconciled[j]);

			uint64_t spread = 0;

			for (k = 0; k < nids; k++) {
				kern += mib_delta(nc, ids[k]);
				spread += model__counter_spread(nc, ids[k]);
			}
			if (!kern && !ours)
				continue;
			out[n++] = (struct reconcile_line){ .netns = nc->netns,
							    .cause = reconciled[j],
							    .counter = ids[0],
							    .kernel = kern,
							    .ours = ours,
							    .spread = spread };
		}
	}
	return n;
}
