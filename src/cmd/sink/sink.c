// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop sink: the receiving end of `udpdrop gen`. It reads datagrams
 * (recvmmsg), tracks every flow's sequence numbers (seqtrack.c), and at
 * the end of each run builds the ledger: where every datagram went, each
 * term from its own witness (ledger.h). Beside the reads:
 *   - the socket's own drop counter (SO_RXQ_OVFL) and kernel receive
 *     timestamps (SO_TIMESTAMPNS);
 *   - with --xdp IFACE, an XDP program that counts the run's datagrams at
 *     the interface and stamps their arrival (xdpstamp.c), so "lost before
 *     the host" and XDP-arrival -> read latency are measured;
 *   - as root, the core drop tracer restricted to the sink's netns, for
 *     the receiver's kernel drops by cause (watch.c).
 * It can be made a slow reader on purpose (--read-delay, --stall) to
 * reproduce receive-buffer drops.
 *
 * Runs: a generator announces one on the control channel (ctl.h: HELLO,
 * READY, DONE, LEDGER over TCP to the same port number); without it
 * (gen --no-control) the first datagram of a new run id starts one and
 * the flows' last datagrams, a loss timeout or --duration end it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <endian.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "caps.h"
#include "cli.h"
#include "opts.h"
#include "ctl.h"
#include "hist.h"
#include "json.h"
#include "ledger.h"
#include "log.h"
#include "seqtrack.h"
#include "udpgen.h"
#include "units.h"
#include "util.h"
#include "watch.h"
#include "xdpstamp.h"

#ifndef SO_RXQ_OVFL
#define SO_RXQ_OVFL 40
#endif
#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif
#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull
#define LOSS_TIMEOUT_NS (2 * NS_PER_S)  /* no-control: no arrivals this long ends a run */
#define INFLIGHT_QUIET_NS (300 * NS_PER_MS) /* after the end: this long without arrivals */
#define INFLIGHT_MAX_NS (2 * NS_PER_S)  /* ... and never longer than this */
#define ENDING_POLL_MS 20
/*
 * At a run's end, XDP stops counting it first; this long later, what it
 * counted has reached the socket or a drop (microseconds: the stack runs
 * right after XDP, in the same softirq), and the final readings start.
 * No longer: if the run's traffic still flows, each of its datagrams the
 * kernel drops meanwhile is in the tracer's count and not in XDP's.
 */
#define XDP_SETTLE_NS (2 * NS_PER_MS)
/*
 * The control channel never holds up the datagrams: its peer's bytes are
 * read as they come, without waiting, into a buffer of their own. A peer
 * silent this long (no message, and no datagram of a run it announced) is
 * dropped; and at most this much of its input is taken per wake-up.
 */
#define CTL_IDLE_NS (10 * NS_PER_S)
#define CTL_READ_MAX (256 * 1024)
#define CTL_KEEPIDLE_S 10
#define CTL_KEEPINTVL_S 5
#define CTL_KEEPCNT 3
#define BATCH 64
/*
 * Only the gen header is needed from a datagram: each buffer holds that
 * much, and MSG_TRUNC makes recvmmsg report the real length anyway, so a
 * 64 KiB datagram costs no more to read than a small one.
 */
#define HDR_BUF 64
#define CMSG_BUF 128
#define DRAIN_MAX 10000000 /* datagrams drained at a run's end, at most */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

enum tracer_want { TRACER_AUTO, TRACER_ON, TRACER_OFF };

struct sink_opts {
	const char *spec;           /* ADDR:PORT as given */
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int family;
	uint16_t port;
	bool wildcard;              /* bound to the unspecified address */
	uint8_t addr_bytes[16];
	uint64_t rcvbuf;            /* 0: the default */
	uint64_t read_delay_us;
	double stall_ms, every_ms;
	const char *xdp_if;
	double duration;            /* s, 0: until Ctrl-C */
	double interval;
	uint32_t window;
	bool json, one_off;
	enum tracer_want tracer;
};

/* The witnesses' counts when a run started (or when the sink was idle). */
struct baseline {
	struct ug_xdp_flow xdp[UG_XDP_FLOWS];
	uint64_t xs[UG_XS_MAX];
	struct htab rows;           /* struct row_key -> uint64_t[CAUSE_MAX] */
	uint64_t sk_drops;          /* SK_MEMINFO_DROPS */
	uint64_t ns;                /* when it was taken */
};

struct run {
	bool active;
	bool control;               /* announced on the control channel */
	bool done;                  /* gen's DONE arrived */
	bool ending;                /* waiting for datagrams still in flight */
	uint32_t id;
	uint32_t nflows;            /* announced (control); else seqtrack's */
	const char *end_reason;
	uint64_t start_ns, end_ns, ending_ns, last_activity_ns;
	struct seqtrack st;
	struct baseline base;
	bool have_peer;
	int peer_family;
	uint8_t peer[16];
	char peer_str[64];
	uint64_t foreign;           /* datagrams to the port that were not the run's */
	uint64_t after_end;         /* drained at the end, but past XDP after its
				       counting stopped: in no count, left out */
	uint64_t data_ns;           /* the run's latest datagram (read, or
				       counted by XDP): the control peer's
				       idle timeout */
	struct hist lat;            /* XDP arrival -> read */
	uint64_t lat_unknown;
	struct hist qwait;          /* kernel receive timestamp -> read */
	uint32_t ovfl_last;         /* SO_RXQ_OVFL of the latest datagram */
	bool ovfl_seen;
	/* from DONE */
	uint64_t *sent, *sender_drops;
	uint64_t snd_errors, snd_cause[CAUSE_MAX];
	bool sender_tracer;
	/* for the interval lines */
	uint64_t iv_read, iv_ns;
	/* what note_activity saw last */
	uint64_t act_xdp;
	uint32_t act_rmem;
	uint64_t bytes;
};

struct sink {
	struct sink_opts *o;
	int ufd, lfd, cfd;
	/* the control peer's input: complete lines are handled, the rest waits */
	char *cbuf;
	size_t clen, ccap;
	uint64_t ctl_last_ns;       /* accepted, or its latest complete message */
	uint64_t cookie;
	uint32_t netns;
	int rcvbuf;                 /* granted */
	struct xdpstamp xdp;
	bool have_xdp;
	struct watch w;
	bool have_tracer;
	struct run r;
	struct baseline idle;       /* kept fresh while no run is active */
	uint64_t idle_xdp_total, idle_reads;
	uint32_t last_run;          /* the run that ended last (stragglers are foreign) */
	bool have_last_run;
	uint64_t reads_total;       /* datagrams read, ever: the idle check */
	int runs_done;
	struct ug_xdp_flow xdp_now[UG_XDP_FLOWS];
	/* recvmmsg */
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	uint8_t bufs[BATCH][HDR_BUF];
	uint8_t cbufs[BATCH][CMSG_BUF] __attribute__((aligned(8)));
	struct sockaddr_storage from[BATCH];
	uint64_t t0;                /* the sink's start, for --stall and --duration */
};

/* ---- options -------------------------------------------------------- */

#define STR_(x) #x
#define STR(x) STR_(x)

enum {
	SINK_RCVBUF = 1, SINK_READ_DELAY, SINK_STALL, SINK_EVERY, SINK_XDP, SINK_DURATION,
	SINK_ONE_OFF, SINK_REORDER_WINDOW, SINK_INTERVAL, SINK_JSON, SINK_TRACER, SINK_NO_TRACER,
};

/* iperf3's letters where they mean what iperf3's do: -i, -1 */
static const struct opt_spec sink_specs[] = {
	{ SINK_RCVBUF, "rcvbuf", 0, OT_SIZE, "BYTES", 1, INT32_MAX / 2,
	  /* the kernel's own limit on SO_RCVBUF is INT_MAX / 2 */
	  .want = "a size in bytes, 1 to 1 GiB (4096, 64K, 4MiB)",
	  .help = "ask for this SO_RCVBUF (64K, 4MiB, 212992); the\n"
		  "kernel doubles it and caps it at net.core.rmem_max" },
	{ SINK_READ_DELAY, "read-delay", 0, OT_COUNT, "USEC", 0, 10000000,
	  .want = "microseconds per datagram, %r",
	  .help = "a slow reader: sleep USEC after each datagram read" },
	{ SINK_STALL, "stall", 0, OT_REAL, "MS", 0.001, 3600000,
	  .want = "milliseconds, more than 0",
	  .help = "a stalling reader: stop reading for MS of every\n--every MS" },
	{ SINK_EVERY, "every", 0, OT_REAL, "MS", 0.001, 3600000,
	  .want = "milliseconds, more than 0",
	  .help = "the period of --stall, in milliseconds" },
	{ SINK_XDP, "xdp", 'x', OT_STRING, "IFACE", .want = "an interface name",
	  .help = "count and stamp the run's datagrams at IFACE (XDP):\n"
		  "loss before the host, arrival -> read latency" },
	{ SINK_DURATION, "duration", 'd', OT_SECONDS, "SECS", 0.1, 31536000,
	  .want = "seconds, 0.1 or more",
	  .help = "stop after SECS (default: until Ctrl-C)" },
	{ SINK_ONE_OFF, "one-off", '1', OT_FLAG, .help = "exit after the first run" },
	{ SINK_REORDER_WINDOW, "reorder-window", 'w', OT_COUNT, "N", 1, SEQ_WINDOW_MAX,
	  .def = STR(SEQ_WINDOW_DEFAULT), .flags = OPTS_F_APPLY_DEFAULT,
	  .want = "a number of datagrams, %r",
	  .help = "sequence numbers a datagram may be late by before\n"
		  "it is called lost (default %d)" },
	{ SINK_INTERVAL, "interval", 'i', OT_SECONDS, "SECS", 0.1, 3600, .def = "1",
	  .flags = OPTS_F_APPLY_DEFAULT, .want = "seconds from %r",
	  .help = "a progress line every SECS during a run (default %d)" },
	{ SINK_JSON, "json", 'j', OT_FLAG,
	  .help = "one JSON object per line: per interval (\"final\":\n"
		  "false) and per run (\"final\": true, with the ledger)" },
	{ SINK_TRACER, "tracer", 0, OT_FLAG,
	  .help = "fail rather than run without the drop tracer" },
	{ SINK_NO_TRACER, "no-tracer", 0, OT_FLAG,
	  .help = "do not trace the kernel's drops (no root needed)" },
	OPTS_VERBOSE("loader and libbpf details (twice: more)"),
	OPTS_VERSION,
	OPTS_HELP,
	{},
};

const struct opts_cmd sink_opts_cmd = {
	.prog = "udpdrop", .name = "sink", .version = UDPDROP_VERSION, .usage = "ADDR:PORT [OPTIONS]",
	.about =
"Receive `udpdrop gen` datagrams on ADDR:PORT (UDP), and the generator's\n"
"control channel on the same port (TCP); after each run, its ledger: where\n"
"every datagram went (sent, dropped by the sender, lost on the way, dropped\n"
"by this host's kernel and why, still queued, read).\n",
	.epilog =
"ADDR is an address of this host (0.0.0.0 or [::] for any), PORT 1..65535.\n"
"Tracing drops and --xdp need root. Exit codes: 0 ok, 1 runtime error,\n"
"2 bad usage, 3 missing privileges, 4 kernel feature missing.\n",
	.specs = sink_specs,
};

static int bad_value(const char *opt, const char *val, const char *want)
{
	return cli__bad_value("sink", opt, val, want);
}

static int bad_usage(const char *msg)
{
	return cli__bad_usage("sink", msg);
}

/* "10.0.0.2:5001", "[fe80::1%veth0]:5001", "host:5001"; port 1..65535. */
static int parse_endpoint(const char *spec, struct sink_opts *o)
{
	char host[256];
	const char *colon, *port_s;
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	uint64_t port;
	size_t hl;
	int err;

	if (spec[0] == '[') {
		const char *close_b = strchr(spec, ']');

		if (!close_b || close_b[1] != ':')
			return bad_value("address", spec, "ADDR:PORT, an IPv6 address in brackets: [::1]:5001");
		hl = close_b - spec - 1;
		if (hl >= sizeof(host))
			return bad_value("address", spec, "too long");
		memcpy(host, spec + 1, hl);
		host[hl] = 0;
		port_s = close_b + 2;
	} else {
		colon = strrchr(spec, ':');
		if (!colon)
			return bad_value("address", spec, "ADDR:PORT, e.g. 10.0.0.2:5001");
		if (strchr(spec, ':') != colon)
			return bad_value("address", spec, "an IPv6 address goes in brackets: [::1]:5001");
		hl = colon - spec;
		if (hl >= sizeof(host))
			return bad_value("address", spec, "too long");
		memcpy(host, spec, hl);
		host[hl] = 0;
		port_s = colon + 1;
	}
	if (parse_u64(port_s, 1, 65535, &port))
		return bad_value("port", port_s, "a port from 1 to 65535");
	if (!host[0])
		return bad_value("address", spec, "no address before the port (0.0.0.0 for any)");
	err = getaddrinfo(host, port_s, &hints, &res);
	if (err || !res) {
		fprintf(stderr, "udpdrop sink: cannot resolve '%s': %s\n"
			"Try 'udpdrop sink --help'.\n", host,
			err == EAI_SYSTEM ? strerror(errno) : gai_strerror(err));
		if (res)
			freeaddrinfo(res);
		return -EXIT_USAGE;
	}
	memcpy(&o->addr, res->ai_addr, res->ai_addrlen);
	o->addrlen = res->ai_addrlen;
	o->family = res->ai_family;
	o->port = port;
	if (o->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&o->addr;

		memcpy(o->addr_bytes, &sin->sin_addr, 4);
		o->wildcard = sin->sin_addr.s_addr == htonl(INADDR_ANY);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&o->addr;

		memcpy(o->addr_bytes, &sin6->sin6_addr, 16);
		o->wildcard = IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr);
	}
	freeaddrinfo(res);
	return 0;
}

/* 0 to go on, 1 to exit 0 (--help, -V), or minus an exit code. */
static int parse_args(int argc, char **argv, struct sink_opts *o)
{
	bool have_stall = false, have_every = false;
	struct opts_parser p;
	int id, err;

	opts__begin(&p, &sink_opts_cmd, argc, argv);
	while ((id = opts__next(&p)) > 0) {
		switch (id) {
		case SINK_RCVBUF: o->rcvbuf = p.u; break;
		case SINK_READ_DELAY: o->read_delay_us = p.u; break;
		case SINK_STALL:
			o->stall_ms = p.d;
			have_stall = true;
			break;
		case SINK_EVERY:
			o->every_ms = p.d;
			have_every = true;
			break;
		case SINK_XDP: o->xdp_if = p.arg; break;
		case SINK_DURATION: o->duration = p.d; break;
		case SINK_ONE_OFF: o->one_off = true; break;
		case SINK_REORDER_WINDOW: o->window = p.u; break;
		case SINK_INTERVAL: o->interval = p.d; break;
		case SINK_JSON: o->json = true; break;
		case SINK_TRACER: o->tracer = TRACER_ON; break;
		case SINK_NO_TRACER: o->tracer = TRACER_OFF; break;
		}
	}
	if (id < 0)
		return cli__opts_end(id);
	if (have_stall != have_every)
		return bad_usage(have_stall ? "--stall needs --every (stop reading for MS every MS)"
					    : "--every needs --stall (stop reading for MS every MS)");
	if (have_stall && o->stall_ms >= o->every_ms)
		return bad_usage("--stall must be shorter than --every (else it never reads)");
	if (p.optind >= argc)
		return bad_usage("missing ADDR:PORT to listen on");
	if (p.optind + 1 < argc)
		return cli__bad_arg("sink", argv[p.optind + 1]);
	o->spec = argv[p.optind];
	err = parse_endpoint(o->spec, o);
	if (err)
		return err;
	cli__verbosity(p.verbose);
	return 0;
}

/* ---- small helpers --------------------------------------------------- */

static uint64_t read_sysctl(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long long v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/*
 * The socket's queue (bytes the kernel charges against SO_RCVBUF) and its
 * drop counter (sk_drops, what SO_RXQ_OVFL reports). Not SIOCINQ: on a
 * UDP socket it gives only the next datagram's length, not the queue.
 */
static void sk_meminfo(int fd, uint32_t *rmem, uint32_t *drops)
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

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / NS_PER_S, .tv_nsec = ns % NS_PER_S };

	while (!stop_signal && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Datagrams waiting for their other fragments in this netns (FRAG inuse
 * in /proc/net/sockstat): still in flight, until reassembled or timed
 * out (net.ipv4.ipfrag_time) into a drop the tracer sees.
 */
static uint64_t frags_pending(void)
{
	static const char *const files[] = { "/proc/self/net/sockstat",
					      "/proc/self/net/sockstat6" };
	unsigned long long inuse, n = 0;
	char line[256];

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		FILE *f = fopen(files[i], "r");

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if ((sscanf(line, "FRAG: inuse %llu", &inuse) == 1 ||
			     sscanf(line, "FRAG6: inuse %llu", &inuse) == 1))
				n += inuse;
		fclose(f);
	}
	return n;
}

/* Is the reader in a deliberate stall now, and until when? */
static bool stalled(const struct sink *s, uint64_t now, uint64_t *until)
{
	uint64_t every, stall, pos;

	if (!s->o->every_ms)
		return false;
	every = (uint64_t)(s->o->every_ms * NS_PER_MS);
	stall = (uint64_t)(s->o->stall_ms * NS_PER_MS);
	/* each period: read for every - stall, then stall */
	pos = (now - s->t0) % every;
	if (pos < every - stall)
		return false;
	if (until)
		*until = now + (every - pos);
	return true;
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
 * socket's row cannot be split by sender: run_finish says when others
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

static int take_baseline(struct sink *s, struct baseline *b)
{
	const void *k;
	void *v;
	uint32_t drops;

	b->ns = now_ns();
	sk_meminfo(s->ufd, NULL, &drops);
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
static void rcv_causes(struct sink *s, uint64_t out[CAUSE_MAX])
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

static uint64_t sum_causes(const uint64_t c[CAUSE_MAX])
{
	uint64_t n = 0;

	for (int i = 0; i < CAUSE_MAX; i++)
		n += c[i];
	return n;
}

/* XDP's counts for the run's flows, since the baseline, into s->xdp_now. */
static uint64_t xdp_seen(struct sink *s, uint32_t nflows)
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

static uint32_t run_flows(const struct run *r)
{
	return r->control ? r->nflows : r->st.nflows;
}

static int tracer_refresh(struct sink *s)
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

static void run_clear(struct sink *s)
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

static void set_peer(struct run *r, const struct sockaddr *sa)
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
static int run_start(struct sink *s, uint32_t id, bool control, uint32_t nflows,
		     const struct sockaddr *peer, bool fresh)
{
	struct run *r = &s->r;
	int err;

	run_clear(s);
	r->active = true;
	r->control = control;
	r->id = id;
	r->nflows = nflows;
	if (peer)
		set_peer(r, peer);
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
		tracer_refresh(s);
		err = take_baseline(s, &r->base);
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
static void run_abort(struct sink *s)
{
	run_clear(s);
	if (s->have_xdp) {
		xdpstamp__set_run(&s->xdp, UG_RUN_ANY);
		xdpstamp__set_flows(&s->xdp, 0);
	}
	take_baseline(s, &s->idle);
	s->idle_reads = s->reads_total;
	s->idle_xdp_total = 0;
}

/* Datagrams of the run in the queue now: unread. Returns how many. */
static uint64_t drain(struct sink *s);

static int emit(struct sink *s, struct strbuf *sb)
{
	if ((sb->len && fwrite(sb->buf, 1, sb->len, stdout) != sb->len) || fflush(stdout)) {
		int err = errno ? -errno : -EIO;

		sb_free(sb);
		return err;
	}
	sb_free(sb);
	return 0;
}

/*
 * Build the run's ledger; the caller frees it. XDP's counts are the ones
 * run_finish read into s->xdp_now, for every flow, when XDP stopped.
 */
static int build_ledger(struct sink *s, struct ledger *l)
{
	struct run *r = &s->r;
	uint32_t n = run_flows(r);
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
	rcv_causes(s, l->rcv_cause);
	memcpy(l->snd_cause, r->snd_cause, sizeof(l->snd_cause));
	l->snd_errors = r->snd_errors;
	/* the counter only grows; the latest of both readings is the truth */
	sk_meminfo(s->ufd, NULL, &drops);
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
static int run_finish(struct sink *s)
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
		xdp_seen(s, UG_XDP_FLOWS);
		if (xdpstamp__read_stats(&s->xdp, xs) == 0)
			for (int i = 0; i < UG_XS_MAX; i++)
				xs[i] -= r->base.xs[i];
		else
			memset(xs, 0, sizeof(xs));
	}
	tracer_refresh(s);
	if (s->have_xdp) {
		uint64_t now_xs[UG_XS_MAX];

		/* stragglers by the tracer's reading: dropped ones are in it */
		if (xdpstamp__read_stats(&s->xdp, now_xs) == 0)
			late = now_xs[UG_XS_AFTER_END] - r->base.xs[UG_XS_AFTER_END];
	}
	drain(s);
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
	if (s->o->json) {
		struct json j;

		json_init(&j, &sb);
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
		ledger__json(&j, &l);
		json_obj_end(&j);
		json_obj_end(&j);
		sb_printf(&sb, "\n");
	} else {
		FILE *mf;
		char *buf = NULL;
		size_t len = 0;

		sb_printf(&sb, "run %u%s%s ended (%s)\n", r->id,
			  r->have_peer ? " from " : "", r->peer_str,
			  r->end_reason ? r->end_reason : "stopped");
		mf = open_memstream(&buf, &len);
		if (mf) {
			ledger__print(mf, &l);
			fclose(mf);
			sb_append(&sb, buf, len);
			free(buf);
		}
		if (foreign) {
			char a[32];

			fmt_count(a, sizeof(a), foreign);
			sb_printf(&sb, "  note: %s datagrams to the port were not the run's: the socket's drops (receiver kernel drops, SO_RXQ_OVFL) may include other senders' datagrams, so the ledger may not be exact\n", a);
		}
		if (r->after_end) {
			char a[32];

			fmt_count(a, sizeof(a), r->after_end);
			sb_printf(&sb, "  (and %s of the run's datagrams queued after XDP's final count: left out)\n", a);
		}
		if (late) {
			char a[32];

			fmt_count(a, sizeof(a), late);
			sb_printf(&sb, "  note: the run's datagrams were still arriving: %s passed XDP after its final count, and any of them the kernel dropped are receiver drops XDP did not see (unexplained may be off by that many)\n", a);
		}
		if (s->have_xdp) {
			char a[32], b[32], c[32], d[32], e[32], g[32];

			fmt_count(a, sizeof(a), xs[UG_XS_PACKETS]);
			fmt_count(b, sizeof(b), xs[UG_XS_FRAGS]);
			fmt_count(c, sizeof(c), xs[UG_XS_FOREIGN]);
			fmt_count(d, sizeof(d), xs[UG_XS_SHORT]);
			fmt_count(e, sizeof(e), xs[UG_XS_AFTER_END]);
			fmt_count(g, sizeof(g), xs[UG_XS_OTHER]);
			sb_printf(&sb, "    %-24s %s packets: later fragments %s, to the port but not the run's %s, too short %s, after the end %s, other %s\n",
				  "XDP on the interface", a, b, c, d, e, g);
		}
		if (r->qwait.count) {
			char p50[32], p99[32];

			fmt_ns(p50, sizeof(p50), (double)hist__pct(&r->qwait, 0.5));
			fmt_ns(p99, sizeof(p99), (double)hist__pct(&r->qwait, 0.99));
			sb_printf(&sb, "    %-24s p50 ~%s, p99 ~%s (SO_TIMESTAMPNS)\n",
				  "kernel receive -> read", p50, p99);
		}
	}
	err = emit(s, &sb);
	if (err == -EPIPE)
		err = 0; /* the reader has gone: the run is still served */
	ledger__free(&l);
out:
	s->last_run = r->id;
	s->have_last_run = true;
	s->runs_done++;
	run_clear(s);
	if (s->have_xdp) {
		xdpstamp__set_run(&s->xdp, UG_RUN_ANY);
		xdpstamp__set_flows(&s->xdp, 0);
	}
	/* what arrives from now on belongs to no run: start counting afresh */
	take_baseline(s, &s->idle);
	s->idle_reads = s->reads_total;
	s->idle_xdp_total = 0;
	return err;
}

/* ---- reading --------------------------------------------------------- */

static uint64_t be64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be64toh(v);
}

static uint32_t be32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

/* One datagram; unread: drained at the end, not read by the application. */
static void on_datagram(struct sink *s, const uint8_t *p, size_t len,
			struct msghdr *mh, uint64_t read_ns, double read_wall,
			bool unread)
{
	struct run *r = &s->r;
	uint32_t run, flow;
	uint64_t seq, total;
	uint16_t flags;
	int v;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SO_RXQ_OVFL && c->cmsg_len >= CMSG_LEN(sizeof(uint32_t))) {
			memcpy(&r->ovfl_last, CMSG_DATA(c), sizeof(uint32_t));
			r->ovfl_seen = true;
		} else if (c->cmsg_type == SO_TIMESTAMPNS &&
			   c->cmsg_len >= CMSG_LEN(sizeof(struct timespec)) && !unread) {
			struct timespec ts;
			double wait;

			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			/* the stamp is CLOCK_REALTIME: compared with the wall
			 * clock read beside the monotonic one at the read */
			wait = read_wall - ((double)ts.tv_sec + ts.tv_nsec / 1e9);
			if (r->active && wait >= 0)
				hist__add(&r->qwait, (uint64_t)(wait * 1e9));
		}
	}
	if (len < UG_HDR_LEN || be32(p) != UG_MAGIC)
		goto foreign;
	run = be32(p + 8);
	flow = be32(p + 12);
	seq = be64(p + 16);
	total = be64(p + 40);
	memcpy(&flags, p + 6, 2);
	flags = ntohs(flags);
	/* gen never uses these: to XDP they mean any run and none */
	if (run == UG_RUN_ANY || run == UG_RUN_NONE)
		goto foreign;
	if (!r->active) {
		/* a straggler of the run that just ended is no new run */
		if (unread || (s->have_last_run && run == s->last_run))
			goto foreign;
		if (run_start(s, run, false, 0, mh->msg_name, false)) {
			fprintf(stderr, "udpdrop sink: out of memory starting a run\n");
			run_abort(s);
			goto foreign;
		}
	}
	if (run != r->id || (r->control && flow >= r->nflows))
		goto foreign;
	/*
	 * Drained at the end, but it passed XDP after XDP stopped counting
	 * the run (run_finish): in none of XDP's counts, so in none of the
	 * ledger's either.
	 */
	if (unread && s->have_xdp && flow < UG_XDP_FLOWS &&
	    xdpstamp__uncounted(&s->xdp, flow, seq)) {
		r->after_end++;
		return;
	}
	if (!r->have_peer && mh->msg_name)
		set_peer(r, mh->msg_name);
	v = seqtrack__add(&r->st, flow, seq, read_ns, unread ? SEQ_UNREAD : 0);
	if (v < 0)
		goto foreign; /* a flow id beyond what the sink tracks, or a
				 sequence number no sender reaches */
	r->data_ns = read_ns;
	/*
	 * Without control channel the datagrams carry their flow's total. A
	 * datagram's own total is above its sequence number (and not wildly
	 * so); once the flow's last datagram has brought it, it is final.
	 */
	if (!r->control && (total || (flags & UG_F_LAST)) && total > seq &&
	    total - seq <= SEQ_JUMP_MAX)
		seqtrack__set_total(&r->st, flow, total,
				    flags & UG_F_LAST ? SEQ_TOTAL_LAST : 0);
	/* not while draining: the stamps are looked up as they were spread */
	if (s->have_xdp && !unread && r->st.nflows > (1u << s->xdp.shift))
		xdpstamp__set_flows(&s->xdp, r->st.nflows);
	if (unread || v == SEQ_DUP || v == SEQ_STALE || v == SEQ_BEYOND)
		return;
	r->iv_read++;
	if (s->have_xdp) {
		uint64_t at;

		/*
		 * A tag names (flow, seq), not the run: a stamp older than the
		 * run's baseline is an earlier run's datagram of the same name.
		 */
		if (!xdpstamp__stamp(&s->xdp, flow, seq, &at) &&
		    at >= r->base.ns && at <= read_ns)
			hist__add(&r->lat, read_ns - at);
		else
			r->lat_unknown++;
	}
	return;
foreign:
	if (r->active)
		r->foreign++;
}

/* One recvmmsg; returns datagrams read, or a negative errno. */
static int read_batch(struct sink *s, int vlen, int flags, bool unread)
{
	struct timespec wall;
	uint64_t t;
	int n;

	for (int i = 0; i < vlen; i++) {
		s->iov[i] = (struct iovec){ s->bufs[i], HDR_BUF };
		s->msgs[i].msg_hdr = (struct msghdr){
			.msg_name = &s->from[i], .msg_namelen = sizeof(s->from[i]),
			.msg_iov = &s->iov[i], .msg_iovlen = 1,
			.msg_control = s->cbufs[i], .msg_controllen = CMSG_BUF,
		};
		s->msgs[i].msg_len = 0;
	}
	n = recvmmsg(s->ufd, s->msgs, vlen, flags | MSG_TRUNC | MSG_DONTWAIT, NULL);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
	t = now_ns();
	clock_gettime(CLOCK_REALTIME, &wall);
	for (int i = 0; i < n; i++) {
		struct msghdr *mh = &s->msgs[i].msg_hdr;
		size_t len = s->msgs[i].msg_len;

		if (len > HDR_BUF && !(mh->msg_flags & MSG_TRUNC))
			len = HDR_BUF;
		on_datagram(s, s->bufs[i], len, mh, t,
			    (double)wall.tv_sec + wall.tv_nsec / 1e9, unread);
	}
	if (!unread)
		s->reads_total += n;
	return n;
}

static uint64_t drain(struct sink *s)
{
	uint64_t n = 0;
	int got;

	/* bounded: a generator that keeps sending must not keep us here */
	while (n < DRAIN_MAX && (got = read_batch(s, BATCH, 0, true)) > 0)
		n += got;
	return n;
}

/* ---- the control channel --------------------------------------------- */

/*
 * The control peer is served from the same loop as the datagrams, so
 * nothing here waits for it: its bytes are read when poll says they are
 * there (recv MSG_DONTWAIT into s->cbuf), and only complete lines are
 * parsed. Replies are small, bar the LEDGER, and sent whole (ctl_send).
 */

static void ctl_error(int fd, const char *msg)
{
	struct ctl_msg m;

	ctl_msg__init(&m, "ERROR");
	ctl_msg__set(&m, "msg", msg);
	ctl_send(fd, &m);
	ctl_msg__free(&m);
}

static void close_ctl(struct sink *s)
{
	if (s->cfd >= 0)
		close(s->cfd);
	s->cfd = -1;
	free(s->cbuf);
	s->cbuf = NULL;
	s->clen = s->ccap = 0;
}

/*
 * Drop the control peer, with an ERROR saying why (`tell`) if it may
 * still listen. A run it announced and has not said DONE to ends here, as
 * interrupted (`why`); after DONE the run ends as it would have, without
 * the LEDGER. Returns run_finish's error, if it came to that.
 */
static int ctl_drop(struct sink *s, const char *why, const char *tell)
{
	struct run *r = &s->r;

	if (tell && s->cfd >= 0)
		ctl_error(s->cfd, tell);
	close_ctl(s);
	if (why)
		pr_info("control channel: %s\n", why);
	if (r->active && r->control && !r->ending) {
		r->end_reason = why ? why : "the generator left without DONE";
		return run_finish(s);
	}
	return 0;
}

static int on_hello(struct sink *s, const struct ctl_msg *m)
{
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	uint64_t run, flows;
	struct ctl_msg reply;
	int err;

	/* run 0 and 0xffffffff mean any run and none to the XDP program */
	if (ctl_msg__get_u64(m, "run", &run) || run == UG_RUN_ANY || run >= UG_RUN_NONE ||
	    ctl_msg__get_u64(m, "flows", &flows) || !flows || flows > UG_XDP_FLOWS)
		return ctl_drop(s, "a HELLO without a valid run= or flows=",
				"HELLO needs run= (1 to 4294967294) and flows= (1 to 1024)");
	if (s->r.active) {
		/* a run without control channel was going on: it ends here */
		s->r.end_reason = "a new run was announced";
		err = run_finish(s);
		if (err)
			return err;
	}
	if (s->o->one_off && s->runs_done)
		return ctl_drop(s, NULL, "the sink (--one-off) has served its run and is exiting");
	if (getpeername(s->cfd, (struct sockaddr *)&peer, &plen))
		plen = 0;
	err = run_start(s, run, true, flows, plen ? (struct sockaddr *)&peer : NULL, true);
	if (err) {
		run_abort(s);
		return ctl_drop(s, NULL, "the sink could not start the run");
	}
	ctl_msg__init(&reply, "READY");
	ctl_msg__set_u64(&reply, "run", run);
	ctl_msg__set_u64(&reply, "rcvbuf", s->rcvbuf);
	ctl_msg__set_u64(&reply, "rcvbuf_asked", s->o->rcvbuf);
	ctl_msg__set_u64(&reply, "xdp", s->have_xdp);
	ctl_msg__set_u64(&reply, "tracer", s->have_tracer);
	err = ctl_send(s->cfd, &reply);
	ctl_msg__free(&reply);
	if (err) {
		/* gen sends nothing before READY: the run never began */
		pr_info("control channel: cannot send READY: %s\n", strerror(-err));
		run_abort(s);
		return ctl_drop(s, NULL, NULL);
	}
	return 0;
}

/* "f<i>.sent", "f<i>.sender_drops": 1, 2 (flow in *flow), or 0 */
static int done_key(const char *k, uint32_t nflows, uint32_t *flow)
{
	char num[8];
	const char *dot;
	uint64_t v;
	size_t n;

	if (k[0] != 'f' || !(dot = strchr(k, '.')))
		return 0;
	n = dot - k - 1;
	if (!n || n >= sizeof(num))
		return 0;
	memcpy(num, k + 1, n);
	num[n] = 0;
	if (strspn(num, "0123456789") != n || (n > 1 && num[0] == '0') ||
	    parse_u64(num, 0, nflows - 1, &v))
		return 0;
	*flow = (uint32_t)v;
	if (!strcmp(dot + 1, "sent"))
		return 1;
	if (!strcmp(dot + 1, "sender_drops"))
		return 2;
	return 0;
}

static void on_done(struct sink *s, const struct ctl_msg *m)
{
	struct run *r = &s->r;
	uint8_t have[UG_XDP_FLOWS] = {};
	char key[48];
	uint64_t v;

	if (!r->active || !r->control || r->done)
		return;
	/*
	 * One pass over the keys (2 per flow: a lookup each would be
	 * quadratic); the first of a key repeated counts, as ctl_msg__get.
	 */
	for (int i = 0; i < m->n; i++) {
		uint32_t flow;
		int which = done_key(m->kv[i].key, r->nflows, &flow);

		if (!which || (have[flow] & which))
			continue;
		have[flow] |= which;
		if (parse_u64(m->kv[i].val, 0, UINT64_MAX, &v))
			continue;
		if (which == 1) {
			r->sent[flow] = v;
			seqtrack__set_total(&r->st, flow, v, SEQ_TOTAL_LAST);
		} else {
			r->sender_drops[flow] = v;
		}
	}
	ctl_msg__get_u64(m, "snd_errors", &r->snd_errors);
	r->sender_tracer = !ctl_msg__get_u64(m, "sender_tracer", &v) && v;
	for (int c = 0; c < CAUSE_MAX; c++) {
		snprintf(key, sizeof(key), "snd.%s", cause__name(c));
		if (!ctl_msg__get_u64(m, key, &v))
			r->snd_cause[c] = v;
	}
	r->done = true;
	r->ending = true;
	r->ending_ns = r->last_activity_ns = now_ns();
	r->end_reason = "the generator is done";
}

/* One complete line (NUL in place of its newline). */
static int ctl_line(struct sink *s, const char *line, size_t n)
{
	struct ctl_msg m;
	int err;

	ctl_msg__init(&m, "");
	err = memchr(line, 0, n) ? -EINVAL : ctl_msg__parse(line, &m);
	if (err) {
		ctl_msg__free(&m);
		if (err == -EPROTO)
			return ctl_drop(s, "another version of the control protocol",
					"another version of the udpdrop protocol (UDPDROP1 here)");
		return ctl_drop(s, "a malformed control message", "malformed message");
	}
	if (!strcmp(m.type, "HELLO"))
		err = on_hello(s, &m);
	else if (!strcmp(m.type, "DONE"))
		on_done(s, &m);
	else
		ctl_error(s->cfd, "unexpected message");
	ctl_msg__free(&m);
	return err;
}

/* The complete lines in the buffer; the partial one stays, if not too long. */
static int ctl_lines(struct sink *s)
{
	size_t start = 0;
	int err = 0;

	while (s->cfd >= 0 && start < s->clen) {
		char *line = s->cbuf + start;
		char *nl = memchr(line, '\n', s->clen - start);
		size_t n;

		if (!nl)
			break;
		n = nl - line;
		if (n > CTL_LINE_MAX)
			break; /* said below */
		*nl = 0;
		start += n + 1;
		s->ctl_last_ns = now_ns();
		err = ctl_line(s, line, n); /* may drop the peer, buffer and all */
		if (err || (s->o->one_off && s->runs_done))
			return err;
	}
	if (s->cfd < 0)
		return 0;
	memmove(s->cbuf, s->cbuf + start, s->clen - start);
	s->clen -= start;
	if (s->clen > CTL_LINE_MAX)
		return ctl_drop(s, "a control line over the size limit",
				"line too long (the limit is 256 KiB)");
	return 0;
}

/*
 * The peer has something (or has gone): take what is there without
 * waiting, CTL_READ_MAX at most (poll tells again), and act on the
 * complete lines.
 */
static int ctl_input(struct sink *s)
{
	size_t got = 0;
	int err;

	while (s->cfd >= 0 && got < CTL_READ_MAX) {
		ssize_t n;

		if (s->clen == s->ccap) {
			/* a line and its newline at most: ctl_lines says the rest */
			size_t cap = s->ccap ? s->ccap * 2 : 4096;
			char *b;

			if (cap > CTL_LINE_MAX + 1)
				cap = CTL_LINE_MAX + 1;
			if (cap <= s->ccap)
				return ctl_drop(s, "a control line over the size limit",
						"line too long (the limit is 256 KiB)");
			b = realloc(s->cbuf, cap);
			if (!b)
				return ctl_drop(s, "out of memory for the control channel",
						"the sink is out of memory");
			s->cbuf = b;
			s->ccap = cap;
		}
		n = recv(s->cfd, s->cbuf + s->clen, s->ccap - s->clen, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0) {
			pr_info("control channel: %s\n", strerror(errno));
			return ctl_drop(s, "the control channel failed", NULL);
		}
		if (n == 0) {
			/* gone: a partial line is dropped with it */
			return ctl_drop(s, NULL, NULL);
		}
		s->clen += n;
		got += n;
		err = ctl_lines(s);
		if (err || (s->o->one_off && s->runs_done))
			return err;
	}
	return 0;
}

/*
 * The control peer's deadline: CTL_IDLE_NS after its latest message (or
 * its connection), or after the latest datagram of the run it announced.
 */
static uint64_t ctl_deadline(const struct sink *s)
{
	uint64_t last = s->ctl_last_ns;

	if (s->r.active && s->r.control && s->r.data_ns > last)
		last = s->r.data_ns;
	return last + CTL_IDLE_NS;
}

static void ctl_keepalive(int fd)
{
	int one = 1, idle = CTL_KEEPIDLE_S, intvl = CTL_KEEPINTVL_S, cnt = CTL_KEEPCNT;

	/* a generator's host that vanished during a long run: found in ~25 s */
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

static int on_accept(struct sink *s)
{
	int fd = ctl_accept(s->lfd, 0), err = 0;

	if (fd < 0)
		return 0;
	if (s->cfd >= 0) {
		/*
		 * The current peer may be done and gone, its EOF (or its
		 * last lines) not read yet: see to it first.
		 */
		char c;
		ssize_t n = recv(s->cfd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

		if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			err = ctl_input(s);
	}
	if (err) {
		close(fd);
		return err;
	}
	if (s->o->one_off && s->runs_done) {
		ctl_error(fd, "the sink (--one-off) has served its run and is exiting");
		close(fd);
		return 0;
	}
	if (s->cfd >= 0) {
		/* one run at a time: the socket and its counters are shared */
		ctl_error(fd, "busy: the sink is serving another generator");
		close(fd);
		return 0;
	}
	ctl_keepalive(fd);
	s->cfd = fd;
	s->clen = 0;
	s->ctl_last_ns = now_ns();
	return 0;
}

/* ---- progress lines -------------------------------------------------- */

static int interval_line(struct sink *s, uint64_t now)
{
	struct run *r = &s->r;
	struct seq_flow sum;
	uint64_t rc[CAUSE_MAX], xdp = 0;
	uint32_t rmem, drops;
	double dt = (double)(now - r->iv_ns) / 1e9;
	double rate = dt > 0 ? (double)r->iv_read / dt : 0;
	struct strbuf sb = {};

	seqtrack__sum(&r->st, &sum);
	rcv_causes(s, rc);
	xdp = xdp_seen(s, run_flows(r));
	sk_meminfo(s->ufd, &rmem, &drops);
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
		json_key(&j, "xdp_seen");
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
	return emit(s, &sb);
}

/* ---- setup ----------------------------------------------------------- */

/* The receive buffer: what was asked, what the kernel granted, and why. */
static void report_rcvbuf(const struct sink *s)
{
	uint64_t rmax = read_sysctl("/proc/sys/net/core/rmem_max");
	uint64_t rdef = read_sysctl("/proc/sys/net/core/rmem_default");
	char a[32], g[32], m[32];

	fmt_bytes(g, sizeof(g), s->rcvbuf);
	if (!s->o->rcvbuf) {
		fprintf(stderr, "udpdrop sink: receive buffer %s (%d B): net.core.rmem_default is %llu B; --rcvbuf to change\n",
			g, s->rcvbuf, (unsigned long long)rdef);
		return;
	}
	fmt_bytes(a, sizeof(a), s->o->rcvbuf);
	if (rmax && s->o->rcvbuf > rmax) {
		fmt_bytes(m, sizeof(m), rmax);
		fprintf(stderr, "udpdrop sink: receive buffer: asked %s, granted %s (%d B): the kernel caps SO_RCVBUF at net.core.rmem_max (%s) without telling the application, then doubles it; raise the cap: sysctl -w net.core.rmem_max=%llu\n",
			a, g, s->rcvbuf, m, (unsigned long long)s->o->rcvbuf);
	} else {
		fprintf(stderr, "udpdrop sink: receive buffer: asked %s, granted %s (%d B): the kernel doubles SO_RCVBUF for its bookkeeping (net.core.rmem_max %llu B)\n",
			a, g, s->rcvbuf, (unsigned long long)rmax);
	}
}

static int open_sockets(struct sink *s)
{
	struct sink_opts *o = s->o;
	int one = 1, fd, err;
	socklen_t len;
	char ep[80];

	fmt_endpoint(ep, sizeof(ep), o->family, o->addr_bytes, o->port);
	fd = socket(o->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "udpdrop sink: cannot open a UDP socket: %s\n", strerror(errno));
		return -EXIT_FAIL;
	}
	s->ufd = fd;
	if (o->rcvbuf) {
		int v = (int)o->rcvbuf;

		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	}
	/* the socket's drop counter and kernel receive time with each datagram */
	setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&o->addr, o->addrlen)) {
		err = errno;
		if (err == EADDRINUSE) {
			fprintf(stderr, "udpdrop sink: %s (UDP) is already in use: another sink or program has it (ss -uapn 'sport = :%u')\n",
				ep, o->port);
			return -EXIT_FAIL;
		}
		if (err == EADDRNOTAVAIL) {
			fprintf(stderr, "udpdrop sink: %s is not an address of this host (ip addr)\n"
				"Try 'udpdrop sink --help'.\n", ep);
			return -EXIT_USAGE;
		}
		fprintf(stderr, "udpdrop sink: cannot bind %s (UDP): %s\n", ep, strerror(err));
		return err == EACCES ? -EXIT_PRIV : -EXIT_FAIL;
	}
	len = sizeof(s->rcvbuf);
	getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &s->rcvbuf, &len);
	len = sizeof(s->cookie);
	if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &s->cookie, &len))
		s->cookie = 0;
	s->lfd = ctl_listen((struct sockaddr *)&o->addr, o->addrlen);
	if (s->lfd < 0) {
		err = -s->lfd;
		s->lfd = -1;
		if (err == EADDRINUSE)
			fprintf(stderr, "udpdrop sink: %s (TCP, the control channel) is already in use: another sink or program has it (ss -tlpn 'sport = :%u')\n",
				ep, o->port);
		else
			fprintf(stderr, "udpdrop sink: cannot listen on %s (TCP): %s\n", ep, strerror(err));
		return -EXIT_FAIL;
	}
	return 0;
}

static int open_xdp(struct sink *s)
{
	/* [::] receives IPv4 too: then the program looks at both families */
	bool dual = s->o->wildcard && s->o->family == AF_INET6;
	struct xdpstamp_opts xo = { .ifname = s->o->xdp_if, .port = s->o->port,
				    .family = dual ? 0 : s->o->family,
				    .match_addr = !s->o->wildcard };
	char msg[256];
	int err;

	memcpy(xo.addr, s->o->addr_bytes, 16);
	err = xdpstamp__open(&s->xdp, &xo, msg, sizeof(msg));
	if (err == -EBUSY || err == -EEXIST) {
		/*
		 * One XDP program per interface: a second sink on the same
		 * interface (another port) runs without, rather than not at all.
		 */
		fprintf(stderr, "udpdrop sink: %s; continuing without XDP (no loss-before-host or latency figures)\n", msg);
		return 0;
	}
	if (err) {
		fprintf(stderr, "udpdrop sink: %s\n", msg);
		if (err == -ENODEV)
			return -EXIT_USAGE;
		return err == -EPERM ? -EXIT_PRIV : -EXIT_KERNEL;
	}
	s->have_xdp = true;
	pr_info("XDP attached to %s (ifindex %d) in %s mode\n", s->o->xdp_if,
		s->xdp.ifindex, s->xdp.native ? "native" : "generic");
	return 0;
}

static uint32_t own_netns(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : (uint32_t)st.st_ino;
}

static int open_tracer(struct sink *s, bool privileged)
{
	struct tracer_opts to = {};
	struct model_opts mo = {};
	int ret;

	if (s->o->tracer == TRACER_OFF)
		return 0;
	if (!privileged) {
		if (s->o->tracer == TRACER_ON)
			return -EXIT_PRIV; /* said by the caller */
		fprintf(stderr, "udpdrop sink: not root (tracing needs CAP_BPF and CAP_PERFMON): the receiver's kernel drops are not traced (sudo udpdrop sink ... for the full ledger)\n");
		return 0;
	}
	/*
	 * Only our netns, in the kernel; no port filter there: a non-first
	 * fragment has no port, and its drop is one of ours too.
	 */
	mo.netns = to.filter_netns = s->netns;
	ret = watch__open(&s->w, &to, &mo, "udpdrop sink");
	if (ret) {
		if (s->o->tracer == TRACER_ON)
			return -ret;
		fprintf(stderr, "udpdrop sink: continuing without the drop tracer: receiver kernel drops unknown\n");
		return 0;
	}
	s->have_tracer = true;
	/* only its own netns and socket: what could be missing is the close-time ranges */
	caps__survey(&(struct caps_scope){ .ks = &s->w.m.ksyms });
	caps__warn("udpdrop sink");
	return 0;
}

/* ---- the loop -------------------------------------------------------- */

/*
 * Has the run's traffic stopped arriving? Activity is a read, the XDP
 * count or the socket's queue moving. Polled every ENDING_POLL_MS while
 * a run ends, and every interval otherwise.
 */
static void note_activity(struct sink *s, uint64_t now, uint64_t reads_before)
{
	struct run *r = &s->r;
	uint32_t rmem;
	uint64_t xdp = xdp_seen(s, run_flows(r));

	sk_meminfo(s->ufd, &rmem, NULL);
	if (s->reads_total != reads_before || xdp != r->act_xdp || rmem != r->act_rmem)
		r->last_activity_ns = now;
	if (xdp != r->act_xdp)
		r->data_ns = now; /* XDP counts the run's datagrams only */
	/* a datagram in reassembly has arrived in part: wait for its fate */
	if (r->ending && frags_pending())
		r->last_activity_ns = now;
	r->act_xdp = xdp;
	r->act_rmem = rmem;
}

/* While idle: baselines from a quiet moment, for a run without control. */
static void idle_tick(struct sink *s)
{
	uint64_t xdp_total = 0;
	uint32_t rmem;

	sk_meminfo(s->ufd, &rmem, NULL);
	if (s->have_xdp) {
		struct ug_xdp_flow *f = s->xdp_now;

		/* a wildcard bind: addresses come and go; XDP follows them */
		xdpstamp__refresh_local(&s->xdp);

		if (!xdpstamp__read_flows(&s->xdp, f, UG_XDP_FLOWS))
			for (int i = 0; i < UG_XDP_FLOWS; i++)
				xdp_total += f[i].datagrams;
	}
	/* nothing read, nothing queued, nothing new at the interface */
	if (s->reads_total == s->idle_reads && !rmem &&
	    (!s->have_xdp || xdp_total == s->idle_xdp_total))
		take_baseline(s, &s->idle);
	s->idle_reads = s->reads_total;
	s->idle_xdp_total = xdp_total;
}

static int serve(struct sink *s)
{
	struct sink_opts *o = s->o;
	uint64_t step = (uint64_t)(o->interval * NS_PER_S);
	uint64_t next_tick = s->t0 + step;
	uint64_t end = o->duration ? s->t0 + (uint64_t)(o->duration * NS_PER_S) : 0;
	int vlen = o->read_delay_us ? 1 : BATCH;
	int err = 0;

	while (!stop_signal) {
		struct run *r = &s->r;
		struct pollfd pfd[3];
		uint64_t now = now_ns(), until = 0, wake = next_tick;
		bool stall = stalled(s, now, &until);
		int npfd = 0, timeout, n;
		uint64_t reads_before = s->reads_total;

		if (end && now >= end)
			break;
		if (stall && until < wake)
			wake = until;
		if (end && end < wake)
			wake = end;
		if (r->active && (r->ending || !r->control) &&
		    now + ENDING_POLL_MS * NS_PER_MS < wake)
			wake = now + ENDING_POLL_MS * NS_PER_MS;
		if (s->cfd >= 0 && ctl_deadline(s) < wake)
			wake = ctl_deadline(s);
		timeout = wake > now ? (int)((wake - now + NS_PER_MS - 1) / NS_PER_MS) : 0;

		int ui = -1, li, ci = -1;

		if (!stall) {
			ui = npfd;
			pfd[npfd++] = (struct pollfd){ .fd = s->ufd, .events = POLLIN };
		}
		li = npfd;
		pfd[npfd++] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
		if (s->cfd >= 0) {
			ci = npfd;
			pfd[npfd++] = (struct pollfd){ .fd = s->cfd, .events = POLLIN };
		}
		n = poll(pfd, npfd, timeout);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "udpdrop sink: poll: %s\n", strerror(errno));
			return -EXIT_FAIL;
		}
		if (n > 0 && ui >= 0 && (pfd[ui].revents & POLLIN)) {
			int got = read_batch(s, vlen, 0, false);

			if (got < 0) {
				fprintf(stderr, "udpdrop sink: recvmmsg: %s\n", strerror(-got));
				return -EXIT_FAIL;
			}
			if (o->read_delay_us && got)
				sleep_ns(o->read_delay_us * 1000ull * got);
		}
		/* the current peer before a new one: it may have just left */
		if (n > 0 && ci >= 0 && s->cfd >= 0 &&
		    (pfd[ci].revents & (POLLIN | POLLHUP | POLLERR))) {
			err = ctl_input(s);
			if (err)
				return -EXIT_FAIL;
			if (o->one_off && s->runs_done)
				return 0;
		}
		if (n > 0 && (pfd[li].revents & POLLIN)) {
			err = on_accept(s);
			if (err)
				return -EXIT_FAIL;
			if (o->one_off && s->runs_done)
				return 0;
		}

		now = now_ns();
		r = &s->r;
		if (s->cfd >= 0 && now >= ctl_deadline(s)) {
			/* silent for CTL_IDLE_NS: gone, or never meant to talk */
			err = ctl_drop(s, "the control channel was idle for 10 s",
				       "idle for 10 s: closing the control channel");
			if (err && err != -EPIPE)
				return -EXIT_FAIL;
			if (o->one_off && s->runs_done)
				return 0;
		}
		if (r->active) {
			if (s->reads_total != reads_before)
				r->last_activity_ns = now;
			if (r->ending || !r->control)
				note_activity(s, now, reads_before);
			/*
			 * A deliberate stall with datagrams waiting is not the
			 * traffic stopping (the queue may be full and still,
			 * while the sender goes on); with the queue empty it is.
			 */
			if (!r->ending && r->act_rmem && stalled(s, now, NULL)) {
				r->last_activity_ns = now;
				r->data_ns = now;
			}
			seqtrack__expire(&r->st, now);
			if (!r->control && !r->ending && seqtrack__complete(&r->st)) {
				r->ending = true;
				r->ending_ns = now;
				r->end_reason = "every flow's last datagram arrived";
			}
			if (!r->control && !r->ending &&
			    now - r->last_activity_ns >= LOSS_TIMEOUT_NS) {
				/* nothing for the loss timeout: no need to wait more */
				r->end_reason = "no datagrams for 2 s";
				err = run_finish(s);
			} else if (r->ending &&
				   ((seqtrack__complete(&r->st) && !seqtrack__holes(&r->st)) ||
				    now - r->last_activity_ns >= INFLIGHT_QUIET_NS ||
				    now - r->ending_ns >= INFLIGHT_MAX_NS)) {
				err = run_finish(s);
			}
			if (err && err != -EPIPE)
				return -EXIT_FAIL;
			if (o->one_off && s->runs_done)
				return 0;
		}
		if (now >= next_tick) {
			next_tick += step;
			if (next_tick < now)
				next_tick = now + step;
			tracer_refresh(s);
			if (s->r.active) {
				/* an announced run's traffic, for its peer's idle timeout */
				if (s->r.control && !s->r.ending)
					note_activity(s, now, reads_before);
				err = interval_line(s, now);
				if (err && err != -EPIPE) {
					fprintf(stderr, "udpdrop sink: write error on standard output: %s\n", strerror(-err));
					return -EXIT_FAIL;
				}
			} else {
				idle_tick(s);
			}
		}
	}
	/* Ctrl-C, SIGTERM or --duration: the current run's ledger as far as known */
	if (s->r.active) {
		if (!s->r.end_reason || !s->r.ending)
			s->r.end_reason = stop_signal ? "the sink was stopped" : "--duration reached";
		err = run_finish(s);
		if (err && err != -EPIPE)
			return -EXIT_FAIL;
	}
	return 0;
}

int do_sink(int argc, char **argv)
{
	struct sink_opts o = {};
	struct sink *s;
	char missing[128];
	bool privileged;
	int err, ret = EXIT_FAIL;

	err = parse_args(argc, argv, &o);
	if (err)
		return err > 0 ? EXIT_OK : -err;
	/* a typo in the interface is a usage error, before any privilege check */
	if (o.xdp_if && xdpstamp__ifindex(o.xdp_if) < 0) {
		return -cli__bad_value("sink", "--xdp", o.xdp_if, "no interface of that name (ip link lists them)");
	}
	/*
	 * The capabilities each part needs, as top and record ask them: XDP
	 * CAP_BPF + CAP_NET_ADMIN, the tracer CAP_BPF + CAP_PERFMON (or
	 * CAP_SYS_ADMIN); root has them all.
	 */
	if (o.xdp_if && caps__check_xdp(missing, sizeof(missing))) {
		fprintf(stderr, "udpdrop sink: permission denied: --xdp loads a BPF program on %s, which needs %s; run as root (sudo udpdrop sink ...)\n",
			o.xdp_if, missing);
		return EXIT_PRIV;
	}
	privileged = !caps__check_bpf(missing, sizeof(missing));
	if (o.tracer == TRACER_ON && !privileged) {
		fprintf(stderr, "udpdrop sink: permission denied: --tracer needs %s; run as root (sudo udpdrop sink ...)\n",
			missing[0] ? missing : "root");
		return EXIT_PRIV;
	}

	s = calloc(1, sizeof(*s));
	if (!s) {
		fprintf(stderr, "udpdrop sink: out of memory\n");
		return EXIT_FAIL;
	}
	s->o = &o;
	s->ufd = s->lfd = s->cfd = -1;
	s->xdp.link_fd = -1;
	s->netns = own_netns();
	if (seqtrack__init(&s->r.st, o.window, LOSS_TIMEOUT_NS, UG_XDP_FLOWS) ||
	    htab__init(&s->idle.rows, sizeof(struct row_key), CAUSE_MAX * sizeof(uint64_t)) ||
	    htab__init(&s->r.base.rows, sizeof(struct row_key), CAUSE_MAX * sizeof(uint64_t))) {
		fprintf(stderr, "udpdrop sink: out of memory\n");
		goto out;
	}

	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	err = open_sockets(s);
	if (!err && o.xdp_if)
		err = open_xdp(s);
	if (!err)
		err = open_tracer(s, privileged);
	if (err) {
		ret = -err;
		goto out;
	}
	report_rcvbuf(s);
	{
		char ep[80];

		fmt_endpoint(ep, sizeof(ep), o.family, o.addr_bytes, o.port);
		fprintf(stderr, "udpdrop sink: listening on %s (UDP; TCP for the control channel)%s%s%s%s (Ctrl-C to stop)\n",
			ep, s->have_xdp ? ", XDP on " : "", s->have_xdp ? o.xdp_if : "",
			s->have_xdp ? (s->xdp.native ? " (native)" : " (generic)") : "",
			s->have_tracer ? ", tracing drops" : "");
	}
	s->t0 = now_ns();
	take_baseline(s, &s->idle);
	ret = -serve(s);
out:
	run_clear(s);
	seqtrack__free(&s->r.st);
	htab__free(&s->idle.rows);
	htab__free(&s->r.base.rows);
	if (s->have_tracer)
		watch__close(&s->w);
	if (s->have_xdp)
		xdpstamp__close(&s->xdp);
	close_ctl(s);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->ufd >= 0)
		close(s->ufd);
	free(s);
	return ret;
}
