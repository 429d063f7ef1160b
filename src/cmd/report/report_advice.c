// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop report, the advice (report_internal.h): the advice engine fed
 * with the file's numbers (bursts, MIB deltas, interfaces, scopes), and
 * its text section.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "report_internal.h"
#include "sockid.h"

/* ---- advice ------------------------------------------------------------ */

/*
 * The advice engine (advice.h) fed with this file's numbers: per socket
 * shown and cause, then per cause of the drops with no socket. The file
 * holds no deliveries, so the arrival rate stays unknown (the engine then
 * bounds it by the drop rate and says so), and no truesize (estimated).
 */

int rp_rc_cause(const struct report *rp, uint32_t reason, uint32_t flags)
{
	const char *name = rp_reason_name(rp, reason);

	return cause__classify(name ? name : "", flags);
}

static void meta_u64(const struct report *rp, const char *key, struct advice_u64 *out)
{
	const char *v = rp_meta_get(rp, key);
	uint64_t x;

	if (v && !parse_u64(v, 0, UINT64_MAX, &x))
		*out = ADVICE_U64(x);
}

/* The delta of the counters named (summed) in netns, if it has them all. */
static struct advice_u64 mib_delta(const struct report *rp, uint32_t netns,
				   const enum mib_id *ids)
{
	struct advice_u64 r = { false, 0 };
	const struct report_mib *ml, *mf = rp_mib_of(rp, netns, &ml);

	for (const enum mib_id *id = ids; mf && *id != MIB_MAX; id++) {
		uint64_t v0, v1;

		if (!rp_mib_value(mf, *id, &v0) || !rp_mib_value(ml, *id, &v1))
			continue;
		r.known = true;
		r.v += v1 > v0 ? v1 - v0 : 0;
	}
	return r;
}

/*
 * The interface a socket's traffic uses, when the file tells: lo for a
 * loopback address, else the netns's only other interface. With two or
 * more, NULL: which one carries the traffic depends on routes the file
 * does not hold, and a guess would be stated as fact; the advice then says
 * the interface (its MTU, its txqueuelen) is not known.
 *
 * Counted once per report (iface_picks), not per advice item: per netns
 * (any: a socket whose netns is unknown) and lo or not, how many
 * interfaces and the first.
 */
struct pick_key {
	uint32_t netns, lo, any, pad;
};

struct pick {
	uint32_t n, first;
};

static void iface_picks(const struct report *rp, struct htab *h)
{
	rp_xhtab_init(h, sizeof(struct pick_key), sizeof(struct pick));
	for (uint32_t i = 0; i < rp->nifaces; i++) {
		uint32_t lo = !strcmp(rp->ifaces[i].name, "lo");
		struct pick_key keys[2] = { { rp->ifaces[i].netns, lo, 0, 0 }, { 0, lo, 1, 0 } };

		for (int k = 0; k < 2; k++) {
			int created;
			struct pick *p = rp_xupsert(h, &keys[k], &created);

			if (created)
				p->first = i;
			p->n++;
		}
	}
}

static const struct trace_iface *pick_iface(const struct report *rp, const struct htab *picks,
					    uint32_t netns, bool loopback)
{
	struct pick_key k = { netns, loopback, !netns, 0 };
	const struct pick *p = rp_xfind(picks, &k);

	return p && p->n == 1 ? &rp->ifaces[p->first] : NULL;
}

static bool is_loopback(const struct trace_socket *k)
{
	static const uint8_t v6lo[16] = { [15] = 1 };

	if (k->family == AF_INET)
		return k->laddr[0] == 127;
	return k->family == AF_INET6 && !memcmp(k->laddr, v6lo, 16);
}

/* ifname: room for the interface's name, made printable (the advice
 * quotes it); it must outlive *in. */
#define ADV_IFNAME 64

/* a token of a META list, safe in a command as it is (a hostile file's
 * bytes never reach the advice's commands) */
static bool meta_token_safe(const char *s, size_t n, bool name)
{
	if (!n || n >= 40)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
		      s[i] == '_' || (name && ((s[i] >= 'A' && s[i] <= 'Z') || s[i] == '-'))))
			return false;
	return true;
}

/* Is tok (n bytes) an item of the comma-separated list? */
static bool meta_list_has(const char *list, const char *tok, size_t n)
{
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l == n && !memcmp(p, tok, n))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

static void meta_scopes(struct advice_where *w, const char *list, enum advice_scope scope,
			const char *settable)
{
	for (const char *p = list; p && *p && w->n < ADVICE_SCOPES;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (meta_token_safe(p, l, false)) {
			struct advice_sysctl_scope *sc = &w->s[w->n++];

			memcpy(sc->name, p, l);
			sc->name[l] = 0;
			sc->scope = scope;
			sc->settable = meta_list_has(settable, p, l);
		}
		p = e ? e + 1 : NULL;
	}
}

/*
 * The sysctls' scope as record tested it (META sysctl_host_wide,
 * sysctl_per_netns, sysctl_settable, sysctl_netns_name), for the advice of
 * a row in the recorded netns, so report's commands are top's; false (the
 * plain commands) for another netns's row or a file without them.
 */
static bool meta_where(const struct report *rp, uint32_t netns, struct advice_where *w)
{
	const char *host = rp_meta_get(rp, "sysctl_host_wide"), *own = rp_meta_get(rp, "sysctl_per_netns");
	const char *set = rp_meta_get(rp, "sysctl_settable"), *name = rp_meta_get(rp, "sysctl_netns_name");
	const char *sn = rp_meta_get(rp, "sysctl_netns"), *opt = rp_meta_get(rp, "netns");
	uint64_t sysns, optns = 0;

	memset(w, 0, sizeof(*w));
	if ((!host && !own) || !sn || parse_u64(sn, 0, UINT32_MAX, &sysns) || sysns != netns)
		return false;
	meta_scopes(w, host, ADVICE_SCOPE_HOST, set);
	meta_scopes(w, own, ADVICE_SCOPE_NETNS, set);
	/* recorded without -N: the netns record ran in, where its commands run */
	w->self = !opt || parse_u64(opt, 0, UINT32_MAX, &optns) || !optns;
	if (!w->self && name && meta_token_safe(name, strlen(name), true)) {
		snprintf(w->name, sizeof(w->name), "%s", name);
		snprintf(w->enter, sizeof(w->enter), "ip netns exec %s ", name);
	}
	snprintf(w->label, sizeof(w->label), "%s", w->name[0] ? w->name : sn);
	return w->n > 0;
}

static void adv_common(const struct report *rp, const struct htab *picks, uint32_t netns,
		       bool loopback, struct advice_input *in, char ifname[ADV_IFNAME],
		       struct advice_where *where)
{
	static const enum mib_id rcvbuf_n[] = { MIB_UdpRcvbufErrors, MIB_Udp6RcvbufErrors, MIB_MAX };
	static const enum mib_id mem_n[] = { MIB_UdpMemErrors, MIB_Udp6MemErrors, MIB_MAX };
	static const enum mib_id sndbuf_n[] = { MIB_UdpSndbufErrors, MIB_Udp6SndbufErrors, MIB_MAX };
	static const enum mib_id noports_n[] = { MIB_UdpNoPorts, MIB_Udp6NoPorts, MIB_MAX };
	static const enum mib_id multi_n[] = { MIB_UdpIgnoredMulti, MIB_Udp6IgnoredMulti, MIB_MAX };
	static const enum mib_id csum_n[] = { MIB_UdpInCsumErrors, MIB_Udp6InCsumErrors, MIB_MAX };
	static const enum mib_id fails_n[] = { MIB_IpReasmFails, MIB_Ip6ReasmFails, MIB_MAX };
	static const enum mib_id timeout_n[] = { MIB_IpReasmTimeout, MIB_Ip6ReasmTimeout, MIB_MAX };
	static const enum mib_id reads_n[] = { MIB_UdpInDatagrams, MIB_Udp6InDatagrams, MIB_MAX };
	const struct trace_iface *f = pick_iface(rp, picks, netns, loopback);
	const char *um = rp_meta_get(rp, "net.ipv4.udp_mem");
	unsigned long long m0, m1, m2;

	in->span_s = rp_duration_s(rp);
	in->where = meta_where(rp, netns, where) ? where : NULL;
	meta_u64(rp, "net.core.rmem_default", &in->rmem_default);
	meta_u64(rp, "net.core.rmem_max", &in->rmem_max);
	meta_u64(rp, "net.core.wmem_default", &in->wmem_default);
	meta_u64(rp, "net.core.wmem_max", &in->wmem_max);
	meta_u64(rp, "net.core.netdev_max_backlog", &in->netdev_max_backlog);
	meta_u64(rp, "net.ipv4.ipfrag_time", &in->ipfrag_time);
	meta_u64(rp, "net.ipv4.ipfrag_high_thresh", &in->ipfrag_high_thresh);
	meta_u64(rp, "net.ipv4.ipfrag_max_dist", &in->ipfrag_max_dist);
	if (um && sscanf(um, "%llu %llu %llu", &m0, &m1, &m2) == 3) {
		in->udp_mem[0] = ADVICE_U64(m0);
		in->udp_mem[1] = ADVICE_U64(m1);
		in->udp_mem[2] = ADVICE_U64(m2);
	}
	if (f) {
		snprintf(ifname, ADV_IFNAME, "%s", f->name);
		str_printable(ifname);
		in->ifname = ifname;
		if (f->mtu)
			in->mtu = ADVICE_U64(f->mtu);
		if (f->txqueuelen)
			in->txqueuelen = ADVICE_U64(f->txqueuelen);
	}
	in->mib_rcvbuf_errors = mib_delta(rp, netns, rcvbuf_n);
	in->mib_mem_errors = mib_delta(rp, netns, mem_n);
	in->mib_sndbuf_errors = mib_delta(rp, netns, sndbuf_n);
	in->mib_no_ports = mib_delta(rp, netns, noports_n);
	in->mib_ignored_multi = mib_delta(rp, netns, multi_n);
	in->mib_csum_errors = mib_delta(rp, netns, csum_n);
	in->mib_reasm_fails = mib_delta(rp, netns, fails_n);
	in->mib_reasm_timeout = mib_delta(rp, netns, timeout_n);
	in->reads = mib_delta(rp, netns, reads_n);
}

/*
 * Each (socket, cause)'s worst interval between snapshots, and in how many
 * intervals it dropped: one pass over every snapshot's socket entries,
 * indexed by (cookie, cause), so 10,000 sockets over 100 snapshots cost
 * 10^6 lookups, not 10^6 per socket. An interval's drops are the later
 * snapshot's count minus the earlier's (0 if the socket was not in the
 * earlier one; nothing if the count went down).
 */
struct iv_burst {
	uint64_t prev, cur;       /* at snapshots prev_snap - 1, cur_snap - 1 */
	uint64_t prev_snap, cur_snap; /* 1-based, 0: none */
	/* the worst interval, the intervals with drops, and the socket's own
	 * deliveries (SOCKETS, minor 2) in those whose both ends have them */
	const struct report_queue *q;
	struct advice_track track;   /* the rule top and doctor use */
};

/* The socket's deliveries at exactly time t (a SOCKETS look), if known. */
static bool rx_at(const struct report_queue *q, uint64_t t, uint64_t *v)
{
	uint32_t lo = 0, hi = q ? q->nrx : 0;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (q->rx[mid].time_ns < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!q || lo == q->nrx || q->rx[lo].time_ns != t)
		return false;
	*v = q->rx[lo].delivered;
	return true;
}

static void iv_close(const struct report *rp, struct iv_burst *b)
{
	uint64_t s, p, r0 = 0, r1 = 0;

	if (!b->cur_snap)
		return;
	s = b->cur_snap - 1;
	p = s && b->prev_snap == s ? b->prev : 0;
	if (s && b->cur > p) {
		double len = rp->snaps[s].time_ns > rp->snaps[s - 1].time_ns
				     ? (rp->snaps[s].time_ns - rp->snaps[s - 1].time_ns) / 1e9 : 0;
		bool rx = rx_at(b->q, rp->snaps[s - 1].time_ns, &r0) &&
			  rx_at(b->q, rp->snaps[s].time_ns, &r1);

		advice__track(&b->track, b->cur - p, len, rx, rx && r1 > r0 ? r1 - r0 : 0);
	}
	b->prev = b->cur;
	b->prev_snap = b->cur_snap;
	b->cur_snap = 0;
}

static void interval_bursts(const struct report *rp, struct htab *h)
{
	struct htab causes; /* (reason, flags) -> cause + 1: classify once */
	const void *k;
	void *v;

	rp_xhtab_init(h, sizeof(struct ev_key), sizeof(struct iv_burst));
	rp_xhtab_init(&causes, 2 * sizeof(uint32_t), sizeof(int));
	for (uint64_t i = 0; i < rp->ncounts; i++) {
		const struct report_snap *sn = &rp->snaps[i];

		for (uint32_t j = 0; j < sn->nsk; j++) {
			uint32_t rf[2] = { sn->sk[j].reason, sn->sk[j].flags };
			int created, *c = rp_xupsert(&causes, rf, &created);
			struct ev_key key;
			struct iv_burst *b;

			if (created)
				*c = rp_rc_cause(rp, rf[0], rf[1]) + 1;
			/* by row: a socket's inode and cookie counts add up */
			key = (struct ev_key){ rp_report_row(rp, sockid__of(sn->sk[j].cookie,
									    sn->sk[j].flags & UD_KEY_INODE)),
					       (uint32_t)(*c - 1), 0 };
			b = rp_xupsert(h, &key, &created);
			/* its deliveries: SOCKETS name a row by its cookie */
			if (created && !sockid__inode(key.cookie) && rp->queue_idx.cap) {
				const uint32_t *qi = rp_xfind(&rp->queue_idx, &key.cookie);

				b->q = qi ? &rp->queues[*qi] : NULL;
			}
			if (b->cur_snap != i + 1) {
				iv_close(rp, b);
				b->cur = 0;
				b->cur_snap = i + 1;
			}
			b->cur = rp_add_sat(b->cur, sn->sk[j].datagrams);
		}
	}
	for (size_t it = 0; htab__next(h, &it, &k, &v);)
		iv_close(rp, v);
	htab__free(&causes);
}

static bool have_events(const struct report *rp)
{
	const char *m = rp_meta_get(rp, "events");

	return rp->events || (m && !strcmp(m, "recorded"));
}

/*
 * The burst for one (socket, cause), cookie 0 for drops with no socket:
 * from the EVENTs when they cover every drop (the most in any 100 ms);
 * else per snapshot interval, with how many drops the EVENTs cover (most
 * were shed: the events' burst would be a lower bound, and the buffer
 * sized from it too small, so the exact interval counts are used, and
 * the advice says the burst is per interval and why).
 */
static void set_burst(const struct report *rp, const struct agg_sock *k, int cause,
		      uint64_t drops, struct advice_input *in)
{
	struct ev_key key = { k ? k->cookie : 0, (uint32_t)cause, k && k->by_inode };
	const struct ev_burst *own = rp_xfind(&rp->ev_burst, &key), *eb = own;
	struct ev_burst joined;

	/* a row by cookie holds its socket's events by inode too (sockid.h) */
	if (k && !k->by_inode && k->sock && k->sock->inode) {
		struct ev_key ik = { k->sock->inode, (uint32_t)cause, 1 };
		const struct ev_burst *ib = rp_xfind(&rp->ev_burst, &ik);

		if (ib) {
			joined = *ib;
			if (own)
				rp_ev_burst_join(&joined, own);
			eb = &joined;
		}
	}

	if (!have_events(rp))
		return;
	in->event_drops = ADVICE_U64(eb ? eb->datagrams : 0);
	if (eb && eb->datagrams >= drops && drops) {
		in->burst = ADVICE_U64(eb->best);
		in->burst_s = BURST_WINDOW_NS / 1e9;
		in->burst_window = true;
		/* and the drop shape: in how many of the windows of their
		 * stretch the drops came (a bursty sender: few) */
		in->windows = ADVICE_U64(eb->last_win - eb->first_win + 1);
		in->windows_dropping = ADVICE_U64(eb->wins_dropping);
		in->window_s = BURST_WINDOW_NS / 1e9;
	}
}

/*
 * The kernel's drop windows of a socket row (WINDOWS): its windows by
 * inode (before a dump gave it a cookie) first, then by cookie, joined as
 * top's model joins them. Nothing for a file without them (before 1.3).
 */
static void set_kernel_windows(const struct report *rp, const struct agg_sock *k, int cause,
			       struct advice_input *in)
{
	const struct win_agg *by_inode = NULL, *own;
	struct win_agg a = { 0 };

	if (!rp->have_windows || !k)
		return;
	own = windows__find(&rp->win, rp_kx_id(sockid__of(k->cookie, k->by_inode)), cause);
	if (!k->by_inode && k->sock && k->sock->inode)
		by_inode = windows__find(&rp->win, rp_kx_id(sockid__of(k->sock->inode, true)), cause);
	if (by_inode)
		a = *by_inode;
	if (own)
		win_agg__join(&a, own);
	if (a.dropping)
		advice__kernel_windows(in, win_agg__span(&a), a.dropping, a.best, rp->sockets_rx,
				       a.delivered, a.stalled);
}

/*
 * A socket row's input for cause c, as every view gives it (its who
 * aside): the engine's facts from the recording. ifname and where
 * outlive it.
 */
static void sock_input(const struct report *rp, const struct htab *picks, const struct htab *ivb,
		       const struct agg_sock *k, int c, struct advice_input *in,
		       char *ifname, struct advice_where *where)
{
	const struct trace_socket *ts = k->sock;

	memset(in, 0, sizeof(*in));
	in->cause = c;
	in->has_socket = true;
	adv_common(rp, picks, k->netns, ts && is_loopback(ts), in, ifname, where);
	in->drops = k->row.cause[c];
	in->skbs = k->row.cause_skbs[c];
	in->units = k->row.cause_units[c];
	in->group = (k->row.flags & UD_KEY_GROUP) != 0;
	/* a recording keeps the owner's comm, not its capabilities */
	in->owner_comm = ts && ts->comm[0] ? ts->comm : NULL;
	in->sender_side = c == CAUSE_QDISC || c == CAUSE_NEIGH;
	if (ts) {
		in->family = ts->family;
		if (ts->lport)
			in->port = ADVICE_U64(ts->lport);
		if (ts->rcvbuf)
			in->rcvbuf = ADVICE_U64(ts->rcvbuf);
		in->queued = ADVICE_U64(ts->queued);
		const uint32_t *q = rp_xfind(&rp->queue_idx, &ts->cookie);

		if (q) {
			in->queue_low = ADVICE_U64(rp->queues[*q].low);
			in->queue_peak = ADVICE_U64(rp->queues[*q].peak);
			in->queue_looks = ADVICE_U64(rp->queues[*q].looks);
		}
	}
	/* bytes per datagram, not per skb (GSO/GRO skbs hold several) */
	double size;

	if (row__avg_size(&k->row, c, &size))
		in->avg_size = ADVICE_DBL(size);
	if (rp->ncounts >= 2) {
		struct ev_key key = { sockid__of(k->cookie, k->by_inode), (uint32_t)c, 0 };
		const struct iv_burst *b = rp_xfind(ivb, &key);

		/* the burst, and the socket's own deliveries (recorded
		 * from minor 2 on), as top and doctor give them */
		advice__track_input(in, b ? &b->track : &(struct advice_track){ 0 }, rp->ncounts - 1);
	}
	set_burst(rp, k, c, k->row.cause[c], in);
	set_kernel_windows(rp, k, c, in);
}

/* A socket's process and port (model__owner_port_rows' key), and the
 * most buffer any socket of them needs. */
struct sib {
	int n;
	uint64_t need;
};

/* a socket's (netns, pid, port), sortable, with its index */
struct sib_key {
	uint32_t netns, pid;
	uint16_t port;
	int i;
};

static int sib_cmp(const void *x, const void *y)
{
	const struct sib_key *a = x, *b = y;

	if (a->netns != b->netns)
		return a->netns < b->netns ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->port == b->port ? 0 : a->port < b->port ? -1 : 1;
}

/*
 * One buffer value for a process's sockets on one port (REUSEPORT
 * threads take one setting), as the live views give it
 * (advice_model.c): per socket, how many of its process's sockets share
 * its port and the most rcvbuf any of them needs alone.
 */
static struct sib *siblings(const struct report *rp, const struct agg *a, const struct htab *picks,
			    const struct htab *ivb)
{
	struct sib *sib = calloc(a->nsocks + 1, sizeof(*sib));
	struct sib_key *v = calloc(a->nsocks + 1, sizeof(*v));
	char ifname[ADV_IFNAME];
	struct advice_where where;
	int n = 0;

	if (!sib || !v) {
		free(v);
		return sib;
	}
	for (int i = 0; i < a->nsocks; i++) {
		const struct trace_socket *ts = a->socks[i].sock;

		if (ts && ts->pid && ts->lport)
			v[n++] = (struct sib_key){ a->socks[i].netns, ts->pid, ts->lport, i };
	}
	qsort(v, n, sizeof(*v), sib_cmp);
	for (int first = 0, last; first < n; first = last) {
		uint64_t most = 0;

		for (last = first; last < n && !sib_cmp(&v[first], &v[last]); last++) {
			const struct agg_sock *k = &a->socks[v[last].i];
			struct advice_input in;
			uint64_t need;

			if (!k->row.cause[CAUSE_RCVBUF])
				continue;
			sock_input(rp, picks, ivb, k, CAUSE_RCVBUF, &in, ifname, &where);
			need = advice__rcvbuf_need(&in);
			most = need > most ? need : most;
		}
		for (int j = first; j < last; j++)
			sib[v[j].i] = (struct sib){ last - first, most };
	}
	free(v);
	return sib;
}

int rp_advice_items(const struct report *rp, const struct agg *a, uint64_t top,
		    struct adv_item **out)
{
	int shown = a->nsocks < (int64_t)top ? a->nsocks : (int)top, n = 0;
	struct adv_item *v = NULL;
	struct tl_row *rows;
	int nrows = rp_timeline(rp, &rows);
	struct htab ivb, picks;
	char ifname[ADV_IFNAME];
	struct advice_where where; /* outlives each in, as ifname */
	struct sib *sib;

	interval_bursts(rp, &ivb);
	iface_picks(rp, &picks);
	sib = siblings(rp, a, &picks, &ivb);

	for (int i = 0; i < shown; i++) {
		const struct agg_sock *k = &a->socks[i];

		for (int c = 0; c < CAUSE_MAX; c++) {
			struct advice_input in;
			struct adv_item *it;
			char l[96], o[64], ns[64], podl[256] = "";
			struct pod_names pod;

			if (!k->row.cause[c] && !k->row.cause_skbs[c])
				continue;
			v = rp_grow_arr(v, n, sizeof(*v));
			it = &v[n];
			memset(it, 0, sizeof(*it));
			it->sock = i;
			it->cause = c;
			it->drops = k->row.cause[c];
			rp_fmt_local(l, sizeof(l), k);
			rp_fmt_owner(rp, o, sizeof(o), k);
			rp_fmt_netns(rp, ns, sizeof(ns), k->netns);
			if (rp_pod(rp, k, &pod))
				pods__label(&pod, podl, sizeof(podl));
			snprintf(it->who, sizeof(it->who), "%s  netns %s  %s%s%s", l, ns, o,
				 podl[0] ? "  " : "", podl);
			sock_input(rp, &picks, &ivb, k, c, &in, ifname, &where);
			in.who = l;
			if (c == CAUSE_RCVBUF && sib) {
				in.siblings = sib[i].n;
				in.sibling_need = sib[i].need;
			}
			it->nf = advice__build(&in, it->f, ADVICE_MAX);
			n++;
		}
	}
	/* drops with no socket: per cause, named by its busiest flow */
	for (int c = 0; c < CAUSE_MAX; c++) {
		struct advice_input in = { .cause = c };
		const struct agg_flow *topf = NULL;
		uint64_t drops = 0, skbs = 0, units = 0, best = 0, dropping = 0;
		int nflows = 0;
		bool one_port = true;
		struct adv_item *it;
		char f[200], ns[64];

		for (int i = 0; i < a->nflows; i++) {
			const struct agg_flow *fl = &a->flows[i];

			if (fl->cause != c || (!fl->row.drops && !fl->row.skbs))
				continue;
			if (!topf)
				topf = fl; /* flows are sorted, busiest first */
			else if (fl->dport != topf->dport || fl->netns != topf->netns)
				one_port = false;
			drops += fl->row.drops;
			skbs += fl->row.skbs;
			units += fl->row.cause_units[c];
			nflows++;
		}
		if (!topf)
			continue;
		v = rp_grow_arr(v, n, sizeof(*v));
		it = &v[n];
		memset(it, 0, sizeof(*it));
		it->sock = -1;
		it->cause = c;
		it->drops = drops;
		rp_fmt_flow(f, sizeof(f), topf);
		rp_fmt_netns(rp, ns, sizeof(ns), topf->netns);
		if (nflows == 1)
			snprintf(it->who, sizeof(it->who), "no socket: %s  netns %s", f, ns);
		else
			snprintf(it->who, sizeof(it->who), "no socket: %d flows, the most from %s  netns %s",
				 nflows, f, ns);
		adv_common(rp, &picks, topf->netns, false, &in, ifname, &where);
		in.who = f;
		in.family = topf->family;
		in.drops = drops;
		in.skbs = skbs;
		in.units = units;
		if (topf->dport && one_port)
			in.port = ADVICE_U64(topf->dport);
		/* a socket on the port all the same (connected elsewhere): the
		 * recording's last look at it */
		for (uint32_t s = 0; c == CAUSE_NO_SOCKET && topf->dport && one_port &&
				     s < rp->nsockets; s++) {
			const struct trace_socket *ts = &rp->sockets[s];

			if (ts->netns == topf->netns && ts->lport == topf->dport &&
			    ts->proto == topf->proto) {
				advice__port_taken(&in, ts->family, ts->laddr, ts->lport, ts->raddr,
						   ts->rport, (int)ts->pid, ts->comm);
				break;
			}
		}
		for (int i = 0; i < nrows; i++) {
			if (rows[i].cause[c] > best) {
				best = rows[i].cause[c];
				in.burst_s = rows[i].len_ns / 1e9;
			}
			dropping += rows[i].cause[c] > 0;
		}
		if (nrows) {
			in.burst = ADVICE_U64(best);
			in.intervals = ADVICE_U64(nrows);
			in.intervals_dropping = ADVICE_U64(dropping);
		}
		set_burst(rp, NULL, c, drops, &in);
		it->nf = advice__build(&in, it->f, ADVICE_MAX);
		n++;
	}
	free(rows);
	free(sib);
	htab__free(&ivb);
	htab__free(&picks);
	*out = v;
	return n;
}

/* the advice's text wraps at REPORT_WRAP columns (sb_wrapped, util.h) */
#define REPORT_WRAP 100

void rp_text_advice(const struct report *rp, const struct agg *a, uint64_t top,
		    struct strbuf *out)
{
	struct adv_item *v;
	int n = rp_advice_items(rp, a, top, &v);
	char d[32];

	sb_printf(out, "\nAdvice (published UDP tuning rules, see udpdrop(8) SOURCES, applied to this\n"
		  "recording's numbers; ~ marks an estimate; arrival rates are at least the drop rates):\n");
	if (!n)
		sb_printf(out, "  no drops: nothing to advise\n");
	for (int i = 0; i < n; i++) {
		fmt_count(d, sizeof(d), v[i].drops);
		sb_printf(out, "%s  %s: %s, %s datagram%s\n", i ? "\n" : "", v[i].who,
			  cause__name(v[i].cause), d, v[i].drops == 1 ? "" : "s");
		for (int j = 0; j < v[i].nf; j++) {
			const struct advice_finding *f = &v[i].f[j];

			if (j)
				sb_printf(out, "\n");
			sb_wrapped(out, "what", f->what, REPORT_WRAP);
			sb_wrapped(out, "evidence", f->evidence, REPORT_WRAP);
			sb_wrapped(out, "change", f->change, REPORT_WRAP);
			sb_wrapped(out, "verify", f->verify, REPORT_WRAP);
		}
	}
	free(v);
}
