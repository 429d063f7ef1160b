// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop doctor: a short look at this host (or one netns) and what to
 * change. It reads the UDP/IP sysctls and the interfaces (netcfg.h),
 * samples the drops for a few seconds (the tracer and the model, per
 * socket and cause, with deliveries; or, without root or BPF, the
 * kernel's counters and each socket's own drop counter), and prints the
 * advice engine's findings (advice.h) ranked by drops, then a checklist
 * of settings risky even without drops (checklist.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "advice.h"
#include "advice_model.h"
#include "bursts.h"
#include "caps.h"
#include "checklist.h"
#include "cli.h"
#include "live_env.h"
#include "opts.h"
#include "json.h"
#include "json_vocab.h"
#include "log.h"
#include "mib.h"
#include "reconcile.h"
#include "model.h"
#include "netcfg.h"
#include "sockid.h"
#include "socktab.h"
#include "tracer.h"
#include "util.h"
#include "watch.h"

#define WHO "udpdrop doctor"
#define TICK_NS 200000000ull /* the sample's intervals: bursts are timed by them */
#define NS_MAX 16            /* netns whose settings are read */
#define FINDINGS_MAX 256     /* (socket or flow, cause) pairs advised */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

enum { DOC_DURATION = 1, DOC_NETNS, DOC_JSON, DOC_COUNTERS_ONLY, DOC_K8S_LOGS };

static const struct opt_spec doctor_specs[] = {
	{ DOC_DURATION, "duration", 'd', OT_SECONDS, "SECS", 0.5, 3600, .def = "5",
	  .flags = OPTS_F_APPLY_DEFAULT, .want = "seconds from %r",
	  .help = "sample for SECS (default %d, %r); Ctrl-C\nends it early" },
	{ DOC_NETNS, "netns", 'N', OT_NETNS, "NS",
	  .help = "only this network namespace: ip-netns NAME, nsfs PATH\nor INODE (needs root)" },
	{ DOC_JSON, "json", 'j', OT_FLAG,
	  .help = "one JSON document: mode, sysctls, interfaces, counter\n"
		  "deltas, findings (as report's advice, with setting and\n"
		  "value), checklist" },
	{ DOC_COUNTERS_ONLY, "counters-only", 0, OT_FLAG,
	  .help = "do not load BPF: the kernel's counters and the\nsockets' own drop counters only" },
	CLI_K8S_LOGS_SPEC(DOC_K8S_LOGS),
	OPTS_VERBOSE("loader and libbpf details (twice: more)"),
	OPTS_VERSION,
	OPTS_HELP,
	{},
};

const struct opts_cmd doctor_opts_cmd = {
	.prog = "udpdrop", .name = "doctor", .version = UDPDROP_VERSION,
	.usage = "[-d SECS] [-N NETNS] [--json] [--counters-only]",
	.about =
"Look at this host for a few seconds and say what to change: the UDP/IP\n"
"sysctls, each interface's MTU and txqueuelen, and the drops of a short\n"
"sample, per socket and cause. Prints the findings, most drops first (what,\n"
"the evidence with its numbers, the change with its value, how to verify\n"
"it), then a checklist of settings risky even without drops, judged\n"
"against the rates observed.\n",
	.epilog =
"As root it traces the drops (BPF): each socket's drops by cause, its\n"
"arrival rate and buffer. Without root, or when BPF cannot load, it says so\n"
"in one line and samples counters only: the kernel's counters of its own\n"
"netns and each socket's drop counter (ss -uam d), no causes per socket.\n"
"\n"
"Exit codes: 0 ok (with or without findings), 1 runtime error, 2 bad\n"
"usage, 3 missing privileges (-N without root).\n",
	.specs = doctor_specs,
};

struct doctor_opts {
	double duration;
	const char *netns_spec;
	bool json, counters_only;
	struct model_opts model;
	struct tracer_opts tracer;
};

/* 0, 1 (--help, -V: done) or -EXIT_USAGE. */
static int parse_args(int argc, char **argv, struct doctor_opts *o)
{
	struct opts_parser p;
	int id;

	o->model.k8s_logs = CLI_K8S_LOGS_DEFAULT;
	opts__begin(&p, &doctor_opts_cmd, argc, argv);
	while ((id = opts__next(&p)) > 0) {
		switch (id) {
		case DOC_DURATION: o->duration = p.d; break;
		case DOC_NETNS: o->netns_spec = p.arg; break;
		case DOC_JSON: o->json = true; break;
		case DOC_COUNTERS_ONLY: o->counters_only = true; break;
		case DOC_K8S_LOGS:
			if (cli__k8s_logs("doctor", p.arg))
				return -EXIT_USAGE;
			o->model.k8s_logs = p.arg;
			break;
		}
	}
	if (id < 0)
		return cli__opts_end(id);
	if (p.optind < argc)
		return cli__bad_arg("doctor", argv[p.optind]);
	cli__verbosity(p.verbose);
	return 0;
}

/* ---- settings per netns ------------------------------------------------ */

struct ns_cfg {
	uint32_t netns;
	struct netcfg_sysctls sc;
	struct netcfg_ifaces *ifs; /* NULL: not readable */
};

struct doctor {
	struct doctor_opts *o;
	struct netns_table *nt;
	uint32_t ctx_netns;        /* -N's, else ours: the checklist's */
	struct ns_cfg ns[NS_MAX];
	int nns;
	struct ns_cfg unknown;     /* past NS_MAX netns: nothing read (not known) */
	bool bpf;
	const char *mode_note;     /* why counters only */
	double span_s;
	bool netns_gone;           /* -N's netns went: the sample ended early */
	uint64_t ticks;
	uint64_t tick_ns;          /* the previous tick's model time */
	/* bpf */
	struct watch *w;
	struct htab eps;           /* struct ep_key -> struct ep */
	struct htab bursts;        /* struct row_key -> struct live_burst: what
				      top keeps per row (bursts__record),
				      so both feed the advice the same figures */
	/* counters only */
	struct mib mib0, mib1;
	bool have_mib;
	struct socktab st0, st1;
};

static struct ns_cfg *ns_cfg(struct doctor *d, uint32_t netns)
{
	for (int i = 0; i < d->nns; i++)
		if (d->ns[i].netns == netns)
			return &d->ns[i];
	if (d->nns == NS_MAX) {
		/* more netns than that: their settings are not known (no
		 * sysctls, no interfaces), never another netns's */
		memset(&d->unknown, 0, sizeof(d->unknown));
		d->unknown.netns = netns;
		return &d->unknown;
	}
	struct ns_cfg *c = &d->ns[d->nns++];

	c->netns = netns;
	netcfg__sysctls(d->nt, netns, &c->sc);
	c->ifs = calloc(1, sizeof(*c->ifs));
	if (c->ifs && netcfg__ifaces(d->nt, netns, c->ifs)) {
		free(c->ifs);
		c->ifs = NULL;
	}
	return c;
}

/*
 * The interface a socket's traffic uses: the one it is bound to, lo for a
 * loopback address, else the netns's only other interface; NULL when
 * there are several (routes decide, and a guess would be stated as fact).
 */
static const struct trace_iface *pick_iface(const struct ns_cfg *c, uint32_t ifindex,
					    bool loopback)
{
	const struct trace_iface *found = NULL;

	if (!c->ifs)
		return NULL;
	for (uint32_t i = 0; i < c->ifs->n; i++) {
		const struct trace_iface *f = &c->ifs->v[i];
		bool lo = !strcmp(f->name, "lo");

		if (ifindex) {
			if (f->ifindex == ifindex)
				return f;
			continue;
		}
		if (lo != loopback)
			continue;
		if (found)
			return NULL;
		found = f;
	}
	return found;
}

/*
 * What the advice reads of the system (advice_model.h's struct
 * live_env): the netns's sysctls (read once, ns_cfg) and, with iface, the
 * interface the traffic uses (pick_iface: a socket's bound one first).
 */
static void ns_env(struct doctor *d, uint32_t netns, bool iface, uint32_t ifindex, bool loopback,
		   struct live_env *e)
{
	const struct ns_cfg *c = ns_cfg(d, netns);
	const struct trace_iface *f = iface ? pick_iface(c, ifindex, loopback) : NULL;

	memset(e, 0, sizeof(*e));
	e->netns = netns;
	e->loopback = loopback;
	live_env__sysctls(e, &c->sc);
	if (f) {
		live_env__iface(e, f);
		/* a txqueuelen of 0: not known */
		if (!f->txqueuelen)
			e->txqueuelen = (struct advice_u64){ false, 0 };
	}
}

/* The kernel counters a cause reconciles with, summed: delta base -> cur. */
static struct advice_u64 mib_sum(const struct mib *a, const struct mib *b, const enum mib_id *ids,
				 int n)
{
	struct advice_u64 r = { false, 0 };

	for (int i = 0; i < n; i++) {
		if (!a->present[ids[i]] || !b->present[ids[i]])
			continue;
		r.known = true;
		r.v += b->v[ids[i]] >= a->v[ids[i]] ? b->v[ids[i]] - a->v[ids[i]] : 0;
	}
	return r;
}

/* UDP datagrams into the netns over the span: delivered + errors + no port. */
static double mib_arrivals(const struct mib *a, const struct mib *b)
{
	const enum mib_id ids[] = { MIB_UdpInDatagrams, MIB_Udp6InDatagrams, MIB_UdpInErrors,
				    MIB_Udp6InErrors, MIB_UdpNoPorts, MIB_Udp6NoPorts };

	return (double)mib_sum(a, b, ids, ARRAY_SIZE(ids)).v;
}

/* ---- the BPF sample: bursts per (row, cause) --------------------------- */

/*
 * A burst is the most drops in one run of consecutive sample intervals
 * with drops: a reader's stall that spans two intervals is one burst, and
 * what a buffer must absorb is the whole of it.
 */
struct ep_key {
	struct row_key rk;
	uint32_t cause, pad;       /* CAUSE_MAX: the socket's arrivals (ARRIVALS) */
};
#define ARRIVALS CAUSE_MAX

struct ep {
	uint64_t prev, cur, best;
	uint64_t cur_ticks, best_ticks, dropping;
	double peak_dgps;          /* ARRIVALS: the most datagrams (delivered +
				      dropped) in one tick, per second */
};

/*
 * A socket's arrivals (rx + drops) in the tick just read, as a rate: the
 * peak tick's is "the observed rate" (an average over the sample would
 * count its idle time). A tick shorter than TICK_NS (the last one) counts
 * as TICK_NS long, so its rate is never overstated.
 */
static int track_arrivals(struct doctor *d, const struct row *r, double tick_s)
{
	struct ep_key key;
	struct ep *e;
	uint64_t total = r->rx + r->drops, delta;

	memset(&key, 0, sizeof(key));
	key.rk = r->key;
	key.cause = ARRIVALS;
	e = htab__find(&d->eps, &key);
	if (!e && !total)
		return 0;
	if (!e && !(e = htab__upsert(&d->eps, &key, NULL)))
		return -ENOMEM;
	delta = total >= e->prev ? total - e->prev : 0;
	e->prev = total;
	if (delta && delta / tick_s > e->peak_dgps)
		e->peak_dgps = delta / tick_s;
	return 0;
}

/* The socket row's peak tick rate (track_arrivals); 0 when not known. */
static double peak_dgps(struct doctor *d, const struct row *r)
{
	struct ep_key key;
	const struct ep *e;

	memset(&key, 0, sizeof(key));
	key.rk = r->key;
	key.cause = ARRIVALS;
	e = htab__find(&d->eps, &key);
	return e ? e->peak_dgps : 0;
}

static int track_bursts(struct doctor *d)
{
	struct model *m = &d->w->m;
	const void *k;
	void *v;
	uint64_t dt = m->last_ns - (d->tick_ns ? d->tick_ns : m->start_ns);
	double tick_s = (dt > TICK_NS ? dt : TICK_NS) / 1e9;

	d->ticks++;
	d->tick_ns = m->last_ns;
	bursts__record(&d->bursts, m, d->ticks);
	for (size_t it = 0; htab__next(&m->rows, &it, &k, &v);) {
		const struct row *r = v;

		if (r->key.kind == ROW_SOCKET && m->have_rx && track_arrivals(d, r, tick_s))
			return -ENOMEM;

		for (int c = 0; c < CAUSE_MAX; c++) {
			struct ep_key key;
			struct ep *e;
			uint64_t delta;

			memset(&key, 0, sizeof(key));
			key.rk = r->key;
			key.cause = c;
			e = htab__find(&d->eps, &key);
			if (!e && !r->cause[c])
				continue;
			if (!e && !(e = htab__upsert(&d->eps, &key, NULL)))
				return -ENOMEM;
			delta = r->cause[c] >= e->prev ? r->cause[c] - e->prev : 0;
			e->prev = r->cause[c];
			if (!delta) {
				e->cur = e->cur_ticks = 0;
				continue;
			}
			e->cur += delta;
			e->cur_ticks++;
			e->dropping++;
			if (e->cur > e->best) {
				e->best = e->cur;
				e->best_ticks = e->cur_ticks;
			}
		}
	}
	return 0;
}

/* ---- findings ---------------------------------------------------------- */

struct item {
	enum cause cause;
	uint64_t drops;
	bool has_socket, by_inode;
	uint64_t socket;           /* cookie (or inode) */
	uint32_t netns;
	char local[64];            /* the socket's address, or the flow's destination */
	char who[256];             /* the header line */
	char kowner[64];           /* a kernel device's socket: "kernel vxlan vxlan0 vni 42" */
	uint64_t port;
	bool have_port;
	uint64_t rcvbuf;
	bool have_rcvbuf;
	/* the socket's owner, as top's JSON rows give it: the first process
	 * holding it and how many do (0: none found) */
	int npids;
	int pid;
	char comm[16];
	bool have_pod;             /* the owner's Kubernetes pod (pods.h) */
	struct pod_names pod;
	int nf;
	struct advice_finding f[ADVICE_MAX];
};

static int cmp_items(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->drops != y->drops)
		return x->drops < y->drops ? 1 : -1;
	return x->cause - y->cause;
}

/* One (socket row, cause) or (flow row, cause) of the BPF sample. */
static void bpf_item(struct doctor *d, const struct row *r, int c, struct item *it)
{
	struct model *m = &d->w->m;
	bool sock = r->key.kind == ROW_SOCKET;
	struct advice_input in;
	struct live_env env;
	struct ep_key key;
	const struct ep *e;
	char ns[64], who[128];

	memset(it, 0, sizeof(*it));
	it->cause = c;
	it->drops = r->cause[c];
	it->netns = r->key.netns;
	/* the input top gives the engine for the row (advice_model.c), with the
	 * netns's sysctls and the interface (a socket's: only when found) */
	ns_env(d, r->key.netns, !sock || r->have_sock, sock && r->have_sock ? r->sock.ifindex : 0,
	       live_env__row_loopback(r), &env);
	advice_model__input(&in, m, r, c, htab__find(&d->bursts, &r->key), &env, who, sizeof(who));
	/* and what doctor knows differently: the sample's span; the
	 * arrivals of the sample's busiest tick (not the last interval's,
	 * nor an average over the span, which counts its idle time) */
	in.span_s = d->span_s;
	in.rate_dgps = in.rate_Bps = (struct advice_dbl){ false, 0 };
	if (sock && m->have_rx && peak_dgps(d, r) > 0) {
		double rate = peak_dgps(d, r);

		in.rate_dgps = ADVICE_DBL(rate);
		if (in.avg_size.known)
			in.rate_Bps = ADVICE_DBL(rate * in.avg_size.v);
	}
	if (sock && r->have_sock)
		in.port = ADVICE_U64(r->sock.sport);
	it->port = in.port.v;
	it->have_port = in.port.known;
	it->rcvbuf = in.rcvbuf.v;
	it->have_rcvbuf = in.rcvbuf.known;
	snprintf(ns, sizeof(ns), "%s", model__netns_label(m, r->key.netns, (char[64]){ 0 }, 64));
	if (sock) {
		it->has_socket = true;
		/* the row's own identity (sockid.h): a row joined from its
		 * inode's counts is its cookie's, whatever its keys' flags */
		it->by_inode = sockid__inode(r->key.cookie) != 0;
		it->socket = it->by_inode ? sockid__inode(r->key.cookie) : r->key.cookie;
		if (r->have_sock)
			fmt_endpoint(it->local, sizeof(it->local), r->sock.family, r->sock.saddr,
				     r->sock.sport);
		else
			snprintf(it->local, sizeof(it->local), "socket %llu",
				 (unsigned long long)r->key.cookie);
		if (r->have_sock && r->sock.npids) {
			const struct pod_names *pod = model__pod(m, r);
			char podl[256] = "";

			if (pod) {
				it->have_pod = true;
				it->pod = *pod;
				pods__label(pod, podl, sizeof(podl));
			}
			it->npids = r->sock.npids;
			it->pid = r->sock.pids[0];
			snprintf(it->comm, sizeof(it->comm), "%s", r->sock.comm);
			snprintf(it->who, sizeof(it->who), "%s  netns %s  %d/%s%s%s%s", it->local, ns,
				 r->sock.pids[0], r->sock.comm,
				 r->sock.npids > 1 ? " and others" : "", podl[0] ? "  " : "", podl);
			str_printable(it->who); /* a comm may hold anything */
		} else if (r->have_sock && r->sock.kowner[0]) {
			snprintf(it->kowner, sizeof(it->kowner), "%s", r->sock.kowner);
			snprintf(it->who, sizeof(it->who), "%s  netns %s  %s", it->local, ns,
				 it->kowner);
		} else {
			snprintf(it->who, sizeof(it->who), "%s  netns %s  (no owner found)", it->local,
				 ns);
		}
	} else {
		char src[64], dst[64];

		fmt_addr(src, sizeof(src), r->key.family, r->key.saddr);
		fmt_endpoint(dst, sizeof(dst), r->key.family, r->key.daddr, r->key.dport);
		snprintf(it->local, sizeof(it->local), "%s", dst);
		snprintf(it->who, sizeof(it->who), "no socket: %s -> %s  netns %s", src, dst, ns);
	}
	in.who = it->local;
	memset(&key, 0, sizeof(key));
	key.rk = r->key;
	key.cause = c;
	e = htab__find(&d->eps, &key);
	/* its runs of sample ticks, where the kernel's windows are not known
	 * (they are the burst every view gives: windows.h) */
	if (e && d->ticks && !in.kernel_windows) {
		in.burst = ADVICE_U64(e->best);
		in.burst_s = e->best_ticks * (d->span_s / d->ticks);
		in.burst_episode = true;
		in.intervals = ADVICE_U64(d->ticks);
		in.intervals_dropping = ADVICE_U64(e->dropping);
	}
	it->nf = advice__build(&in, it->f, ADVICE_MAX);
}

static int bpf_items(struct doctor *d, struct item **out)
{
	struct model *m = &d->w->m;
	struct item *v = calloc(FINDINGS_MAX, sizeof(*v));
	int n = 0;
	struct row **lists[2] = { m->view_sockets, m->view_flows };
	int counts[2] = { m->nview_sockets, m->nview_flows };

	if (!v)
		return -ENOMEM;
	for (int l = 0; l < 2; l++)
		for (int i = 0; i < counts[l] && n < FINDINGS_MAX; i++) {
			const struct row *r = lists[l][i];

			for (int c = 0; c < CAUSE_MAX && n < FINDINGS_MAX; c++) {
				if (!r->cause[c] && !r->cause_skbs[c])
					continue;
				bpf_item(d, r, c, &v[n]);
				if (v[n].nf)
					n++;
			}
		}
	qsort(v, n, sizeof(*v), cmp_items);
	*out = v;
	return n;
}

/* counters only: one finding per cause the kernel counted, for the netns */
static int counter_items(struct doctor *d, struct item **out)
{
	struct item *v = calloc(CAUSE_MAX, sizeof(*v));
	char ns[64] = "";
	int n = 0;
	const struct netns_info *ni = netns__find(d->nt, d->ctx_netns);

	if (!v)
		return -ENOMEM;
	if (ni && ni->name[0])
		snprintf(ns, sizeof(ns), "%s", ni->name);
	else
		snprintf(ns, sizeof(ns), "%u", d->ctx_netns);
	str_printable(ns);
	for (int c = 0; c < CAUSE_MAX && d->have_mib; c++) {
		enum mib_id ids[4];
		int k = cause__mibs(c, ids, 4);
		struct advice_u64 delta;
		struct advice_input in = { .cause = c, .live = true };
		struct live_env env;
		struct item *it = &v[n];
		const struct sock_info *only = NULL;
		bool exact = false;

		if (!k)
			continue;
		delta = mib_sum(&d->mib0, &d->mib1, ids, k);
		if (!delta.known || !delta.v)
			continue;
		memset(it, 0, sizeof(*it));
		it->cause = c;
		it->drops = delta.v;
		it->netns = d->ctx_netns;
		advice_model__mibs(&in, &d->mib0, &d->mib1);
		in.span_s = d->span_s;
		in.drops = in.skbs = delta.v;
		in.sender_side = c == CAUSE_QDISC;
		snprintf(it->who, sizeof(it->who), "netns %s (the kernel's counters: no socket or flow)", ns);
		if (c == CAUSE_RCVBUF && d->st1.n > 0) {
			/* the sockets whose own drop counter grew (from 0 for one
			 * born during the sample): the one that grew, by at most
			 * the kernel's count (sample_counters reads the sockets
			 * inside the counters' span), is the socket */
			uint64_t *grew = calloc(d->st1.n, sizeof(*grew));
			int k1;

			for (int i = 0; grew && i < d->st1.n; i++) {
				const struct sock_info *s1 = &d->st1.v[i];
				struct sock_info *s0 = socktab__by_cookie(&d->st0, s1->cookie);
				uint32_t before = s0 ? s0->drops : 0;

				grew[i] = s1->drops > before ? s1->drops - before : 0;
			}
			k1 = grew ? check__drop_owner(grew, d->st1.n, delta.v, &exact) : -1;
			if (k1 >= 0)
				only = &d->st1.v[k1];
			free(grew);
		}
		if (only) {
			uint32_t before = 0;
			const struct sock_info *s0 = socktab__by_cookie(&d->st0, only->cookie);

			if (s0)
				before = s0->drops;
			fmt_endpoint(it->local, sizeof(it->local), only->family, only->saddr, only->sport);
			it->has_socket = in.has_socket = true;
			it->socket = only->cookie;
			it->port = only->sport;
			if (only->npids) {
				it->npids = only->npids;
				it->pid = only->pids[0];
				snprintf(it->comm, sizeof(it->comm), "%s", only->comm);
			}
			it->have_port = true;
			in.port = ADVICE_U64(only->sport);
			in.family = only->family;
			if (only->have_mem && only->rcvbuf) {
				in.rcvbuf = ADVICE_U64(only->rcvbuf);
				it->rcvbuf = only->rcvbuf;
				it->have_rcvbuf = true;
				in.queued = ADVICE_U64(only->rmem);
			}
			ns_env(d, d->ctx_netns, true, only->ifindex,
			       live_env__addr_loopback(only->family, only->saddr), &env);
			in.who = it->local;
			if (exact)
				snprintf(it->who, sizeof(it->who), "%s  netns %s  (its drop counter, ss -uam d: "
					 "+%llu)", it->local, ns, (unsigned long long)delta.v);
			else /* read a moment apart: about the kernel's count */
				snprintf(it->who, sizeof(it->who), "%s  netns %s  (its drop counter, ss -uam d: "
					 "+%llu, about the kernel's %llu)", it->local, ns,
					 (unsigned long long)(only->drops - before),
					 (unsigned long long)delta.v);
		} else {
			ns_env(d, d->ctx_netns, true, 0, false, &env);
		}
		advice_model__env(&in, &env);
		it->nf = advice__build(&in, it->f, ADVICE_MAX);
		if (it->nf)
			n++;
	}
	qsort(v, n, sizeof(*v), cmp_items);
	*out = v;
	return n;
}

/* ---- the checklist's inputs -------------------------------------------- */

/* The rcvbuf finding of a socket row among the items: its verdict (the
 * not-reading one first) and pacing rate go with the checklist's rx. */
static void rx_verdict(const struct item *items, int n, const struct row *r, struct check_rx *rx)
{
	for (int i = 0; i < n; i++) {
		const struct item *it = &items[i];

		if (!it->has_socket || it->socket != r->key.cookie || it->cause != CAUSE_RCVBUF || !it->nf)
			continue;
		rx->verdict = it->f[0].verdict[0] ? it->f[0].verdict : NULL;
		for (int k = 1; k < it->nf; k++)
			if (!strcmp(it->f[k].verdict, "not_reading"))
				rx->verdict = it->f[k].verdict;
		if (it->f[0].has_value && !strcmp(it->f[0].setting, "sender_pps"))
			rx->pace_dgps = it->f[0].value;
		return;
	}
}

static void check_input(struct doctor *d, const struct item *items, int nitems, struct check_input *ci)
{
	struct live_env env;
	static char who[2][64];

	memset(ci, 0, sizeof(*ci));
	ns_env(d, d->ctx_netns, false, 0, false, &env);
	ci->rmem_default = env.rmem_default;
	ci->rmem_max = env.rmem_max;
	ci->netdev_max_backlog = env.netdev_max_backlog;
	ci->ipfrag_high_thresh = env.ipfrag_high_thresh;
	ci->ipfrag_time = env.ipfrag_time;
	memcpy(ci->udp_mem, env.udp_mem, sizeof(ci->udp_mem));
	ci->page_size = env.page_size;
	ci->where = env.where;
	if (!d->bpf) {
		/* no socket's arrivals or datagram sizes: the checklist says
		 * so rather than "none received" */
		ci->counters_only = true;
		if (d->have_mib && d->span_s > 0)
			ci->pkt_rate = ADVICE_DBL(mib_arrivals(&d->mib0, &d->mib1) / d->span_s);
		for (int i = 0; i < d->st1.n; i++)
			if (d->st1.v[i].have_mem) {
				ci->rcvbuf_sum.known = true;
				ci->rcvbuf_sum.v += d->st1.v[i].rcvbuf;
				ci->nsockets++;
				ci->nsockets_default += ci->rmem_default.known &&
							d->st1.v[i].rcvbuf == ci->rmem_default.v;
			}
		return;
	}

	struct model *m = &d->w->m;
	double arrivals = 0;
	bool any = false;

	for (int i = 0; i < m->ncounters; i++) {
		const struct netns_counters *c = &m->counters[i];

		if (!c->have_base || (d->o->model.netns && c->netns != d->o->model.netns))
			continue;
		arrivals += mib_arrivals(&c->base, &c->cur);
		any = true;
	}
	if (any && d->span_s > 0)
		ci->pkt_rate = ADVICE_DBL(arrivals / d->span_s);
	/* every socket seen in the sample is a row (model opts.all) */
	for (int i = 0; i < m->nview_sockets; i++) {
		const struct sock_info *s = &m->view_sockets[i]->sock;

		if (!m->view_sockets[i]->have_sock || !s->have_mem || (d->o->model.netns && s->netns != d->o->model.netns))
			continue;
		ci->rcvbuf_sum.known = true;
		ci->rcvbuf_sum.v += s->rcvbuf;
		ci->nsockets++;
	}
	ci->no_arrivals = !m->have_rx;
	if (!m->have_rx || !(d->span_s > 0))
		return;
	for (int i = 0; i < m->nview_sockets; i++) {
		const struct row *r = m->view_sockets[i];
		double peak = peak_dgps(d, r), rate = peak > 0 ? peak : (r->rx + r->drops) / d->span_s;
		struct ns_cfg *rc;
		const struct trace_iface *f;
		struct check_rx rx = {};

		if (!r->have_sock || !r->sock.have_mem || !(rate > 0) ||
		    (d->o->model.netns && r->key.netns != d->o->model.netns))
			continue;
		rc = ns_cfg(d, r->key.netns);
		f = pick_iface(rc, r->sock.ifindex,
			       live_env__addr_loopback(r->sock.family, r->sock.saddr));
		rx.known = true;
		rx.dgps = rate;
		rx_verdict(items, nitems, r, &rx);
		rx.peak = peak > 0;
		rx.rcvbuf = r->sock.rcvbuf;
		rx.family = r->sock.family;
		rx.mtu = f ? f->mtu : 0;
		/* bytes are counted per drop: sizes only for sockets with drops */
		if (r->drops && r->bytes)
			rx.size = ADVICE_DBL((double)r->bytes / r->drops);
		else
			ci->sizes_unknown++;
		if (!ci->busiest.known || rate > ci->busiest.dgps) {
			fmt_endpoint(who[0], sizeof(who[0]), r->sock.family, r->sock.saddr, r->sock.sport);
			rx.who = who[0];
			ci->busiest = rx;
		}
		if (ci->rmem_default.known && r->sock.rcvbuf == ci->rmem_default.v &&
		    (!ci->busiest_default.known || rate > ci->busiest_default.dgps)) {
			fmt_endpoint(who[1], sizeof(who[1]), r->sock.family, r->sock.saddr, r->sock.sport);
			rx.who = who[1];
			ci->busiest_default = rx;
		}
		if (rx.size.known && rx.mtu &&
		    rx.size.v > advice__max_unfragmented(rx.mtu, rx.family) &&
		    (!ci->frag_dgps.known || rate > ci->frag_dgps.v)) {
			ci->frag_dgps = ADVICE_DBL(rate);
			ci->frag_peak = rx.peak;
			ci->frag_k = advice__fragments((uint64_t)rx.size.v, rx.mtu, rx.family);
			ci->frag_mtu = rx.mtu;
			ci->frag_family = rx.family;
		}
	}
}

/* ---- printing ---------------------------------------------------------- */

/* Text under a label column, wrapped as report's advice (sb_wrapped:
 * a number keeps its unit, a command its flags). */
#define WRAP 100
static void wrapped(FILE *out, const char *label, const char *text)
{
	struct strbuf sb = {};

	sb_wrapped(&sb, label, text, WRAP);
	if (sb.len)
		fwrite(sb.buf, 1, sb.len, out);
	sb_free(&sb);
}

static const char *ns_name(struct doctor *d, uint32_t netns, char *buf, size_t len)
{
	const struct netns_info *ni = netns__find(d->nt, netns);

	if (ni && ni->name[0])
		snprintf(buf, len, "%s", ni->name);
	else
		snprintf(buf, len, "%u", netns);
	str_printable(buf); /* a name from /run/netns may hold anything */
	return buf;
}

/* How to change the settings listed, by scope: one line each. */
static void scope_note(const struct advice_where *w)
{
	bool host = false, host_here = false, netns = false;
	char cmd[320], line[512];
	const char *example = NULL;
	bool on_host;

	for (int i = 0; i < w->n; i++) {
		host |= w->s[i].scope == ADVICE_SCOPE_HOST;
		host_here |= w->s[i].scope == ADVICE_SCOPE_HOST && w->s[i].settable;
		if (w->s[i].scope == ADVICE_SCOPE_NETNS && !netns) {
			netns = true;
			example = w->s[i].name;
		}
	}
	if (host && !host_here)
		printf("  host-wide: one value for all netns, read-only in this one: sysctl -w on the "
		       "host sets them\n");
	else if (host)
		printf("  host-wide: one value for all netns: sysctl -w here sets them for all\n");
	if (netns && advice__sysctl_cmd(w, example, "VALUE", cmd, sizeof(cmd), &on_host)) {
		snprintf(line, sizeof(line), "  per-netns: this netns's own: %s", cmd);
		printf("%s\n", line);
	} else if (netns) {
		printf("  per-netns: this netns's own, read-only from here: set them at its start (docker "
		       "run --sysctl, Kubernetes securityContext.sysctls)\n");
	}
}

static void print_text(struct doctor *d, const struct item *v, int n, const struct check_item *ck,
		       int nck)
{
	char ns[64], dr[32];
	struct ns_cfg *nc = ns_cfg(d, d->ctx_netns);

	printf("udpdrop doctor: %.1f s sample%s of %s%s, %s\n", d->span_s,
	       d->netns_gone ? " (cut short: the netns is gone)" : "",
	       d->o->model.netns || !d->bpf ? "netns " : "",
	       d->o->model.netns || !d->bpf ? ns_name(d, d->ctx_netns, ns, sizeof(ns)) : "every netns",
	       d->bpf ? "traced (BPF): drops per socket and cause, arrival rates"
		      : "counters only: the kernel's counters and the sockets' drop counters");
	struct kernel_features kf;
	char kline[512];

	tracer__features(&kf);
	tracer__features_line(&kf, kline, sizeof(kline));
	printf("\nKernel:\n");
	wrapped(stdout, "features", kline);
	if (d->bpf)
		wrapped(stdout, "attach", attach_mode__name(d->w->t.mode));
	if (d->bpf && d->w->m.sites) {
		cause__sites_note(kline, sizeof(kline));
		wrapped(stdout, "causes", kline);
	} else if (!d->bpf && !kf.drop_reasons) {
		wrapped(stdout, "causes", "from the kernel's counters only (this kernel has no drop reasons, before 5.17)");
	} else {
		wrapped(stdout, "causes", "from the kernel's drop reasons");
	}
	printf("\nSettings (netns %s):\n", ns_name(d, d->ctx_netns, ns, sizeof(ns)));
	for (int i = 0; i < NETCFG_NSYSCTLS; i++) {
		const char *scope = advice__scope_name(nc->sc.where.s[i].scope);

		/* the scope as tested (netcfg.c); untested: host-wide when the
		 * netns has none of its own, as before */
		if (!scope && nc->sc.from_self[i])
			scope = "host-wide";
		if (nc->sc.ok[i])
			printf("  %-28s %s%s%s%s\n", netcfg__sysctl_names[i], nc->sc.v[i],
			       scope ? "  (" : "", scope ? scope : "", scope ? ")" : "");
	}
	if (nc->ifs)
		for (uint32_t i = 0; i < nc->ifs->n; i++) {
			char ifname[64]; /* any byte but '/', ':' and space is allowed */

			snprintf(ifname, sizeof(ifname), "%s", nc->ifs->v[i].name);
			str_printable(ifname);
			printf("  %-28s mtu %u txqueuelen %u\n", ifname, nc->ifs->v[i].mtu,
			       nc->ifs->v[i].txqueuelen);
		}
	scope_note(&nc->sc.where);

	printf("\nFindings (most drops first):\n");
	if (!n)
		printf("  no drops in the sample: nothing to fix now (see the checklist)\n");
	for (int i = 0; i < n; i++) {
		fmt_count(dr, sizeof(dr), v[i].drops);
		printf("\n%d. %s: %s, %s datagram%s\n", i + 1, v[i].who, cause__name(v[i].cause), dr,
		       v[i].drops == 1 ? "" : "s");
		for (int j = 0; j < v[i].nf; j++) {
			const struct advice_finding *f = &v[i].f[j];

			if (j)
				printf("\n");
			wrapped(stdout, "what", f->what);
			wrapped(stdout, "evidence", f->evidence);
			wrapped(stdout, "change", f->change);
			wrapped(stdout, "verify", f->verify);
		}
	}
	printf("\nChecklist (settings risky even without drops, against the rates observed):\n");
	for (int i = 0; i < nck; i++) {
		char line[96];

		if (ck[i].has_now)
			snprintf(line, sizeof(line), "%.40s = %llu", ck[i].setting,
				 (unsigned long long)ck[i].now);
		else
			snprintf(line, sizeof(line), "%.40s", ck[i].setting);
		printf("  [%s] %s\n", ck[i].risky ? "RISK" : ck[i].evaluated ? " ok " : " -- ", line);
		wrapped(stdout, "", ck[i].why);
	}
}

static void print_json(struct doctor *d, const struct item *v, int n, const struct check_item *ck,
		       int nck)
{
	struct json j;
	struct strbuf sb = {};
	struct ns_cfg *nc = ns_cfg(d, d->ctx_netns);
	char buf[64];

	json_init(&j, &sb);
	json_obj_begin(&j);
	json_key(&j, "mode");
	json_str(&j, d->bpf ? "bpf" : "counters");
	json_key(&j, "mode_note");
	if (d->mode_note)
		json_str(&j, d->mode_note);
	else
		json_null(&j);
	json_key(&j, "duration_s");
	json_double(&j, d->span_s, 3);
	struct kernel_features kf;

	tracer__features(&kf);
	json_key(&j, "kernel");
	json_obj_begin(&j);
	json_key(&j, "release");
	json_str(&j, kf.release);
	json_key(&j, "btf");
	json_bool(&j, kf.btf);
	json_key(&j, "drop_reasons");
	json_bool(&j, kf.drop_reasons);
	json_key(&j, "kfree_skb_rx_sk");
	json_bool(&j, kf.rx_sk);
	json_key(&j, "sk_data_ready");
	json_bool(&j, kf.sk_data_ready);
	json_key(&j, "udp_fail_queue_rcv_skb");
	json_bool(&j, kf.fail_tp);
	json_key(&j, "udp_fail_queue_rcv_skb_skb");
	json_bool(&j, kf.fail_tp_skb);
	json_key(&j, "tracefs");
	json_bool(&j, kf.tracefs);
	json_obj_end(&j);
	json_key(&j, "attach");
	json_str(&j, d->bpf ? attach_mode__name(d->w->t.mode) : NULL);
	if (d->bpf) {
		cause__json_derivation(&j, d->w->m.sites);
	} else { /* no BPF: the causes are the counters' */
		json_key(&j, "causes_from");
		json_str(&j, "counters");
	}
	json_key(&j, "stopped");
	json_str(&j, d->netns_gone ? "netns_gone" : NULL);
	json_key(&j, "netns");
	json_u64(&j, d->ctx_netns);
	json_key(&j, "netns_name");
	json_str(&j, ns_name(d, d->ctx_netns, buf, sizeof(buf)));
	json_key(&j, "sysctls");
	json_obj_begin(&j);
	for (int i = 0; i < NETCFG_NSYSCTLS; i++)
		if (nc->sc.ok[i]) {
			json_key(&j, netcfg__sysctl_names[i]);
			json_str(&j, nc->sc.v[i]);
		}
	json_obj_end(&j);
	/* each one's scope, as tested (null: not known), and whether a write
	 * in the netns works */
	json_key(&j, "sysctl_scope");
	json_obj_begin(&j);
	for (int i = 0; i < NETCFG_NSYSCTLS; i++)
		if (nc->sc.ok[i]) {
			json_key(&j, netcfg__sysctl_names[i]);
			json_str(&j, advice__scope_name(nc->sc.where.s[i].scope));
		}
	json_obj_end(&j);
	json_key(&j, "sysctl_settable");
	json_obj_begin(&j);
	for (int i = 0; i < NETCFG_NSYSCTLS; i++)
		if (nc->sc.ok[i] && nc->sc.where.s[i].scope != ADVICE_SCOPE_UNKNOWN) {
			json_key(&j, netcfg__sysctl_names[i]);
			json_bool(&j, nc->sc.where.s[i].settable);
		}
	json_obj_end(&j);
	json_key(&j, "interfaces");
	json_arr_begin(&j);
	for (uint32_t i = 0; nc->ifs && i < nc->ifs->n; i++) {
		json_obj_begin(&j);
		json_key(&j, "name");
		json_str(&j, nc->ifs->v[i].name);
		json_key(&j, "mtu");
		json_u64(&j, nc->ifs->v[i].mtu);
		json_key(&j, "txqueuelen");
		json_u64(&j, nc->ifs->v[i].txqueuelen);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	/* the kernel's counters over the sample, per netns inode */
	json_key(&j, "counters");
	json_obj_begin(&j);
	if (d->bpf) {
		struct model *m = &d->w->m;

		for (int i = 0; i < m->ncounters; i++) {
			const struct netns_counters *c = &m->counters[i];

			if (!c->have_base || (d->o->model.netns && c->netns != d->o->model.netns))
				continue;
			vocab__mib_deltas(&j, c->netns, &c->base, &c->cur);
		}
	} else if (d->have_mib) {
		vocab__mib_deltas(&j, d->ctx_netns, &d->mib0, &d->mib1);
	}
	json_obj_end(&j);
	json_key(&j, "findings");
	json_arr_begin(&j);
	for (int i = 0; i < n; i++)
		for (int k = 0; k < v[i].nf; k++) {
			const struct advice_json_socket sock = { v[i].has_socket, v[i].socket,
								 v[i].by_inode };

			advice__json_begin(&j, &v[i].f[k], &sock);
			/* doctor's keys, between report's */
			json_key(&j, "local");
			json_str(&j, v[i].local[0] ? v[i].local : NULL);
			json_key(&j, "port");
			if (v[i].have_port)
				json_u64(&j, v[i].port);
			else
				json_null(&j);
			json_key(&j, "netns");
			json_u64(&j, v[i].netns);
			json_key(&j, "kernel_owner");
			json_str(&j, v[i].kowner[0] ? v[i].kowner : NULL);
			json_key(&j, "drops");
			json_u64(&j, v[i].drops);
			json_key(&j, "rcvbuf");
			if (v[i].have_rcvbuf)
				json_u64(&j, v[i].rcvbuf);
			else
				json_null(&j);
			/* top's keys for the owner */
			json_key(&j, "pid");
			if (v[i].npids)
				json_i64(&j, v[i].pid);
			else
				json_null(&j);
			json_key(&j, "comm");
			json_str(&j, v[i].npids ? v[i].comm : NULL);
			json_key(&j, "nprocs");
			json_i64(&j, v[i].npids);
			vocab__pod(&j, v[i].have_pod ? &v[i].pod : NULL);
			advice__json_end(&j, &v[i].f[k], true);
		}
	json_arr_end(&j);
	json_key(&j, "checklist");
	json_arr_begin(&j);
	for (int i = 0; i < nck; i++) {
		json_obj_begin(&j);
		json_key(&j, "setting");
		json_str(&j, ck[i].setting);
		json_key(&j, "now");
		if (ck[i].has_now)
			json_u64(&j, ck[i].now);
		else
			json_null(&j);
		json_key(&j, "evaluated");
		json_bool(&j, ck[i].evaluated);
		json_key(&j, "risky");
		json_bool(&j, ck[i].risky);
		json_key(&j, "value");
		if (ck[i].has_value)
			json_u64(&j, ck[i].value);
		else
			json_null(&j);
		json_key(&j, "why");
		json_str(&j, ck[i].why);
		json_key(&j, "scope");
		json_str(&j, ck[i].scope[0] ? ck[i].scope : NULL);
		json_key(&j, "command");
		json_str(&j, ck[i].command[0] ? ck[i].command : NULL);
		json_key(&j, "run_on");
		json_str(&j, !ck[i].command[0] ? NULL : ck[i].on_host ? "host" : "here");
		json_obj_end(&j);
	}
	json_arr_end(&j);
	caps__json(&j); /* the parts these privileges left out */
	json_obj_end(&j);
	fwrite(sb.buf, 1, sb.len, stdout);
	printf("\n");
	sb_free(&sb);
}

/* ---- the sample ---------------------------------------------------------- */

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	nanosleep(&ts, NULL); /* a signal ends it early: the loop checks */
}

static int sample_bpf(struct doctor *d)
{
	uint64_t start = d->w->m.start_ns, end = start + (uint64_t)(d->o->duration * 1e9);
	uint64_t next = start + TICK_NS;
	int err;

	fprintf(stderr, WHO ": sampling for %.1f s via %s\n", d->o->duration,
		attach_mode__name(d->w->t.mode));
	while (!stop) {
		uint64_t now = now_ns(), t = next < end ? next : end;

		if (t > now)
			sleep_ns(t - now);
		if (stop)
			break;
		if (t >= end)
			d->w->t.win_all = true; /* the last read: every drop window closes */
		err = watch__refresh(d->w);
		if (!err)
			err = track_bursts(d);
		if (err) {
			fprintf(stderr, WHO ": reading the drop counts failed: %s\n", strerror(-err));
			return EXIT_FAIL;
		}
		if (d->w->netns_gone) {
			d->netns_gone = true;
			break;
		}
		if (now_ns() >= end)
			break;
		next += TICK_NS;
	}
	if (stop) { /* the last stretch, up to the signal */
		d->w->t.win_all = true; /* the end: every drop window closes */
		err = watch__refresh(d->w);
		if (!err)
			err = track_bursts(d);
		if (err)
			return EXIT_FAIL;
	}
	d->span_s = (d->w->m.last_ns - start) / 1e9;
	if (d->netns_gone)
		cli__say_netns_gone(WHO, "the sample ends early");
	return 0;
}

static int sample_counters(struct doctor *d)
{
	uint64_t start, end;
	int err;

	if (socktab__init(&d->st0) || socktab__init(&d->st1))
		return EXIT_FAIL;
	err = mib__read(d->nt, d->ctx_netns, &d->mib0);
	if (err) {
		fprintf(stderr, WHO ": cannot read the counters of netns %u: %s\n", d->ctx_netns,
			strerror(-err));
		return EXIT_FAIL;
	}
	/* the counters, then the sockets; at the end the sockets, then the
	 * counters: the sockets' span lies inside the counters', so a socket's
	 * drops are at most the kernel's (counter_items) */
	socktab__dump(&d->st0, d->nt, d->ctx_netns, IPPROTO_UDP);
	start = now_ns();
	end = start + (uint64_t)(d->o->duration * 1e9);
	fprintf(stderr, WHO ": sampling for %.1f s (counters only)\n", d->o->duration);
	/* a tick at a time: a -N netns that goes ends the sample there */
	while (!stop && now_ns() < end && !(d->netns_gone = netns__pin_gone()))
		sleep_ns(end - now_ns() < TICK_NS ? end - now_ns() : TICK_NS);
	if (d->netns_gone)
		cli__say_netns_gone(WHO, "the sample ends early");
	socktab__dump(&d->st1, d->nt, d->ctx_netns, IPPROTO_UDP);
	err = mib__read(d->nt, d->ctx_netns, &d->mib1);
	if (err) {
		fprintf(stderr, WHO ": cannot read the counters of netns %u: %s\n", d->ctx_netns,
			strerror(-err));
		return EXIT_FAIL;
	}
	d->span_s = (now_ns() - start) / 1e9;
	d->have_mib = true;
	return 0;
}

int do_doctor(int argc, char **argv)
{
	struct doctor_opts o = {};
	struct doctor d = { .o = &o };
	struct watch w = {};
	struct netns_table own_nt = {};
	struct item *items = NULL;
	struct check_item ck[CHECK_MAX];
	struct check_input ci;
	char missing[128];
	bool privileged;
	int err, n, nck, ret = EXIT_FAIL;

	err = parse_args(argc, argv, &o);
	if (err)
		return err > 0 ? EXIT_OK : -err;
	privileged = !caps__check_bpf(missing, sizeof(missing));
	err = cli__resolve_scope("doctor", o.netns_spec, 0, privileged, &o.model.netns,
				 &o.tracer.filter_netns);
	if (err == EXIT_PRIV && o.netns_spec) {
		fprintf(stderr, WHO ": permission denied: -N reads another netns, which needs root (%s); run sudo udpdrop doctor -N %s\n",
			missing, o.netns_spec);
		return EXIT_PRIV;
	}
	if (err && err != EXIT_PRIV)
		return err;
	if (!privileged) {
		d.mode_note = "not root: counters only";
		fprintf(stderr, WHO ": not root (tracing needs %s): counters only, this netns, no causes per socket; sudo udpdrop doctor traces them\n",
			missing);
	} else if (o.counters_only) {
		d.mode_note = "--counters-only";
	}

	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (privileged && !o.counters_only) {
		o.model.all = true; /* quiet sockets too: their rates for the checklist */
		err = watch__open(&w, &o.tracer, &o.model, WHO);
		if (!err) {
			d.bpf = true;
			d.w = &w;
			d.nt = &w.m.nt;
			if (htab__init(&d.eps, sizeof(struct ep_key), sizeof(struct ep)) ||
			    bursts__init(&d.bursts)) {
				fprintf(stderr, WHO ": out of memory\n");
				goto out;
			}
		} else {
			d.mode_note = "BPF unavailable: counters only";
			fprintf(stderr, WHO ": BPF unavailable (above): counters only\n");
		}
	}
	if (!d.bpf) {
		if (netns__scan(&own_nt)) {
			fprintf(stderr, WHO ": out of memory\n");
			goto out;
		}
		d.nt = &own_nt;
	}
	d.ctx_netns = o.model.netns ? o.model.netns : d.nt->self;
	/* what these privileges leave out: said once, and in JSON */
	caps__survey(&(struct caps_scope){ .ks = d.bpf ? &w.m.ksyms : NULL, .owners = d.bpf, .locations = false,
		.other_netns = d.bpf ? o.tracer.filter_netns != d.nt->self : d.ctx_netns != d.nt->self,
		.netns_spec = o.netns_spec });
	caps__warn(WHO);
	ns_cfg(&d, d.ctx_netns); /* the settings before the sample */

	err = d.bpf ? sample_bpf(&d) : sample_counters(&d);
	if (err) {
		ret = err;
		goto out;
	}
	n = d.bpf ? bpf_items(&d, &items) : counter_items(&d, &items);
	if (n < 0) {
		fprintf(stderr, WHO ": out of memory\n");
		goto out;
	}
	check_input(&d, items, n > 0 ? n : 0, &ci);
	nck = check__build(&ci, ck, CHECK_MAX);
	if (o.json)
		print_json(&d, items, n, ck, nck);
	else
		print_text(&d, items, n, ck, nck);
	fflush(stdout);
	ret = EXIT_OK;
out:
	free(items);
	for (int i = 0; i < d.nns; i++)
		free(d.ns[i].ifs);
	if (d.bpf) {
		htab__free(&d.eps);
		htab__free(&d.bursts);
	}
	watch__close(&w);
	if (!d.bpf) {
		socktab__free(&d.st0);
		socktab__free(&d.st1);
		netns__free(&own_nt);
	}
	return ret;
}
