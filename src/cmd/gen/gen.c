// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop gen: a paced UDP generator that keeps the sender's side of the
 * books. Datagrams carry the header of include/udpgen.h; the schedule is
 * pace.c's; what the kernel refused comes back from each send (IP_RECVERR
 * makes qdisc drops return ENOBUFS), what it dropped silently from the
 * core tracer (watch.c) restricted to our own sockets; the control
 * channel (ctl.c) tells `udpdrop sink` what was sent and brings back its
 * ledger (ledger.c).
 *
 * Two threads: the sender does nothing but wait for slots and send, so a
 * slow interval report (the tracer's refresh dumps sockets) never makes
 * a slot late; the reporter wakes every --interval, drains the error
 * queues, refreshes the tracer and prints. They share the counters under
 * one mutex, held for a few additions per slot. What is printed, and how
 * (text or JSON), is gen_report.c's; the state is in gen_report.h.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "caps.h"
#include "causes.h"
#include "cli.h"
#include "opts.h"
#include "ctl.h"
#include "gen_report.h"
#include "hist.h"
#include "ledger.h"
#include "log.h"
#include "pace.h"
#include "udpgen.h"
#include "units.h"
#include "util.h"
#include "watch.h"

#define WHO GEN_WHO
#define GEN_MAX_FLOWS 1024      /* the sink's XDP program tells 1024 flows apart */
#define GEN_MAX_BURST 1024      /* one sendmmsg: UIO_MAXIOV messages */
#define GEN_GSO_SEGS 64         /* datagrams per UDP_SEGMENT send, at most */
#define GEN_MAX_V4 65507        /* 65535 - IPv4 header - UDP header */
#define GEN_MAX_V6 65527        /* 65535 - UDP header (IPv6's length excludes its header) */
#define CONNECT_MS 3000
#define READY_MS 5000
#define LEDGER_MS 10000
#define CTL_WATCH_NS (200 * 1000000ull) /* how often the reporter looks for a sink gone */
#define CTL_MIDRUN_MS 1000      /* the rest of a message the sink sends mid-run */
#define LAST_TRIES 5            /* a refused LAST datagram is numbered anew, this often */
#define LAST_COPIES 2           /* --no-control: each closing datagram goes 1 + this many times */
#define GEN_STALL_NS 500000ull  /* lateness beyond this (and a period) is a stall: slots skipped */

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

/* A refusal after which the kernel had built an skb and freed it (qdisc,
 * netfilter...): the tracer saw that drop too. RF_UNKNOWN counts as one
 * (see partial_refusal). */
static bool refusal_has_skb(enum refusal r)
{
	return r == RF_ENOBUFS || r == RF_EPERM || r == RF_UNKNOWN;
}

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

enum {
	GEN_RATE = 1, GEN_PPS, GEN_SIZE, GEN_BURST, GEN_DURATION, GEN_COUNT, GEN_FLOWS,
	GEN_SNDBUF, GEN_GSO, GEN_CATCH_UP, GEN_REORDER, GEN_INTERVAL, GEN_JSON, GEN_IPV4,
	GEN_IPV6, GEN_NO_CONTROL, GEN_NO_TRACER,
};

/* iperf3's letters where they mean what iperf3's do: -b -l -t -n -P -i -4 -6 */
static const struct opt_spec gen_specs[] = {
	{ GEN_RATE, "rate", 'b', OT_STRING, "RATE", .def = "1M",
	  .want = "bits per second above 0, at most 1T (100M, 1.5G), datagrams with pps (250kpps), or max",
	  .help = "bits/s of UDP payload (default %d, as iperf3 -u),\n"
		  "or datagrams/s with a pps suffix (250kpps); max: unpaced,\n"
		  "as fast as the kernel takes them (sends then block)" },
	{ GEN_PPS, "pps", 0, OT_STRING, "N",
	  .want = "datagrams per second above 0, at most 1G (250k, 1.5M), or max",
	  .help = "datagrams/s (k/M/G prefixes), or max" },
	{ GEN_SIZE, "size", 'l', OT_SIZE, "BYTES", UG_HDR_LEN, GEN_MAX_V6,
	  .want = "bytes from 48 (the header) to 65507 (IPv4) or 65527 (IPv6)",
	  .help = "UDP payload per datagram, 48 to 65507 (IPv4) or 65527\n"
		  "(IPv6); default: what fits the path MTU, at most 1500.\n"
		  "Larger than the path MTU: sent, fragmented, with a warning" },
	{ GEN_BURST, "burst", 0, OT_COUNT, "N", 1, GEN_MAX_BURST, .def = "1",
	  .want = "datagrams per slot, %r",
	  .help = "datagrams per slot, in one sendmmsg (default %d; %r);\n"
		  "the slot period grows to keep the rate" },
	{ GEN_DURATION, "duration", 't', OT_SECONDS, "SECS", 0.001, 31536000, .def = "10",
	  .want = "seconds, from 0.001 to a year", .alias_letter = 'd',
	  .alias_note = "as in udpdrop's other commands",
	  .help = "how long to send (default %d)" },
	{ GEN_COUNT, "count", 'n', OT_COUNT, "N", 1, 1ull << 48,
	  .want = "a number of datagrams, at least 1",
	  .help = "how many datagrams, over all flows (instead of --duration)" },
	{ GEN_FLOWS, "flows", 'P', OT_COUNT, "N", 1, GEN_MAX_FLOWS, .want = "%r flows",
	  .help = "N sockets, each its own source port and sequence\n"
		  "(%r); slots go round-robin over them, a slot's\n"
		  "--burst to one flow (one sendmmsg is one socket)" },
	{ GEN_SNDBUF, "sndbuf", 0, OT_SIZE, "BYTES", 1024, INT32_MAX / 2,
	  .want = "bytes, 1K to 1G (64K, 4M)", .help = "SO_SNDBUF of each socket" },
	{ GEN_GSO, "gso", 0, OT_FLAG,
	  .help = "UDP_SEGMENT: one send carries up to 64 datagrams (each with\n"
		  "its own header); --burst then defaults to a full send" },
	{ GEN_CATCH_UP, "catch-up", 0, OT_FLAG,
	  .help = "after a stall, send the slots it missed back to back\n"
		  "(default: skip them, count them missed, re-anchor)" },
	{ GEN_REORDER, "reorder", 0, OT_COUNT, "N", 2, 1000000,
	  .want = "every Nth datagram goes late, N from %r",
	  .help = "a test aid: in each --burst batch, the datagrams whose\n"
		  "sequence number is a multiple of N go one place late\n"
		  "(the receiver must call them reordered, not lost)" },
	{ GEN_INTERVAL, "interval", 'i', OT_SECONDS, "SECS", 0.1, 3600, .def = "1",
	  .flags = OPTS_F_APPLY_DEFAULT, .want = "seconds from %r",
	  .help = "report every SECS (default %d, %r)" },
	{ GEN_JSON, "json", 'j', OT_FLAG,
	  .help = "one JSON object per interval, then the summary (see\nEstimates below)" },
	{ GEN_IPV4, NULL, '4', OT_FLAG, .help = "IPv4 only" },
	{ GEN_IPV6, NULL, '6', OT_FLAG, .help = "IPv6 only" },
	{ GEN_NO_CONTROL, "no-control", 0, OT_FLAG,
	  .help = "no TCP control channel: the datagrams' total and last\n"
		  "flags close the run at the sink. A closing datagram sent\n"
		  "after the schedule (--duration, or a run stopped early)\n"
		  "is the only one with its flow's total, so it goes 3\n"
		  "times: the same datagram, the 2 copies from a socket of\n"
		  "their own (the sink counts them as duplicates; the\n"
		  "sender's counts leave them out). With --count every\n"
		  "datagram carries the total: nothing is repeated" },
	{ GEN_NO_TRACER, "no-tracer", 0, OT_FLAG,
	  .help = "do not trace this host's drops of our datagrams" },
	OPTS_VERBOSE("more details (twice: libbpf's too)"),
	OPTS_VERSION,
	OPTS_HELP,
	{},
};

const struct opts_cmd gen_opts_cmd = {
	.prog = "udpdrop", .name = "gen", .version = UDPDROP_VERSION, .usage = "HOST:PORT [OPTIONS]",
	.about =
"Send paced UDP datagrams to HOST:PORT and account for every one of them:\n"
"what the kernel refused, what it dropped silently on this host (the\n"
"tracer, as root), and, with `udpdrop sink` at the other end, the ledger.\n"
"\n"
"HOST:PORT: a name, an IPv4 address or [IPv6]:PORT.\n",
	.epilog =
"Units: rates take k, M, G, T (powers of 1000; m is mega too) and may end in\n"
"bit, bits, bps, b/s or bit/s: 100M, 1.5G, 64kbit, 1e9. Datagram rates end in\n"
"pps: 5000pps, 250kpps, 1Mpps. A rate must be above 0 and at most 1 Tbit/s\n"
"or 1 Gpps, and a slot (--burst datagrams) may not be shorter than 100 ns\n"
"(raise --burst, add --gso, or use max) nor longer than an hour. Sizes take\n"
"K, M, G (powers of 1024), optionally KiB or KB: 1472, 9000, 64K, 1.5KiB.\n"
"\n"
"Rates count UDP payload bits (as iperf3 does), not headers. Each interval\n"
"line shows the rate achieved (datagrams the kernel accepted), the lateness\n"
"of the slots (due -> handed to the kernel: p50/p99/max), slots missed,\n"
"the share of datagrams sent in bursts (a slot handed to the kernel less\n"
"than half a slot period after the previous one; the datagrams of one\n"
"--burst batch do not count against each other), datagrams the kernel\n"
"refused (not retried: their sequence numbers are used), sender drops\n"
"(refused + those the tracer saw dropped after a send succeeded) and ICMP\n"
"errors that came back.\n"
"\n"
"Estimates: the lateness p50 and p99 (text: ~97 ns; JSON: lateness_ns.p50,\n"
".p99) come from a histogram: at most 3.2 % above the true percentile. max,\n"
"mean and the counts are exact. A --burst batch the kernel stops partway\n"
"does not say why: gen then reads the socket's send queue, and a full one\n"
"is EAGAIN (no packet was built); otherwise the refusal's cause is\n"
"\"unknown\" and counts as one the tracer saw, so the silent drops (and\n"
"sender_drops) may be short by up to that many: the summary says so.\n"
"\n"
"Exit codes: 0 ok (also when stopped by Ctrl-C or SIGTERM: the run is closed\n"
"and summed up), 1 runtime error (also: no sink answered, or the control\n"
"channel failed before the sink had the counts: the sender's summary is\n"
"still printed), 2 bad usage, 4 the kernel lacks a feature asked for (--gso).\n",
	.specs = gen_specs,
};

static int bad_value(const char *opt, const char *val, const char *want)
{
	return cli__bad_value("gen", opt, val, want);
}

static int bad_usage(const char *msg)
{
	return cli__bad_usage("gen", msg);
}

/* "host:port", "[v6]:port"; a bare IPv6 address needs the brackets. */
static int parse_target(const char *s, struct gen_opts *o)
{
	const char *colon, *host = s;
	size_t hlen;
	uint64_t port;

	if (*s == '[') {
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':')
			return bad_value("HOST:PORT", s, "[IPv6 address]:PORT");
		host = s + 1;
		hlen = end - host;
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return bad_value("HOST:PORT", s, "a port is missing (HOST:PORT)");
		hlen = colon - s;
		if (memchr(s, ':', hlen))
			return bad_value("HOST:PORT", s, "an IPv6 address goes in brackets: [ADDRESS]:PORT");
	}
	if (!hlen || hlen >= sizeof(o->host))
		return bad_value("HOST:PORT", s, "a host name or address, then :PORT");
	if (parse_u64(colon + 1, 1, 65535, &port))
		return bad_value("port", colon + 1, "a port from 1 to 65535");
	memcpy(o->host, host, hlen);
	o->host[hlen] = 0;
	o->port = port;
	return 0;
}

/* --rate / --pps: "max", or a rate; --pps takes a bare number as datagrams. */
static int parse_rate_opt(const char *opt, const char *val, bool pps_only,
			  struct gen_opts *o)
{
	if (!strcmp(val, "max")) {
		o->max = true;
		return 0;
	}
	o->max = false;
	if (pps_only && !strchr(val, 'b') && !strchr(val, 'B')) {
		char buf[64];

		/* "250k" is 250k datagrams/s here: reuse the rate grammar */
		snprintf(buf, sizeof(buf), "%s%s", val, strstr(val, "pps") ? "" : "pps");
		if (!parse_rate(buf, &o->rate))
			return 0;
	} else if (!pps_only && !parse_rate(val, &o->rate)) {
		return 0;
	}
	return bad_value(opt, val, pps_only ?
			 "datagrams per second above 0, at most 1G (250k, 1.5M), or max" :
			 "bits per second above 0, at most 1T (100M, 1.5G), datagrams with pps (250kpps), or max");
}

/* 0, 1 (--help, -V: done), or -exit code. */
static int parse_args(int argc, char **argv, struct gen_opts *o)
{
	bool have_rate = false, have_pps = false, have_duration = false;
	struct opts_parser p;
	int id, err;

	o->flows = 1;
	o->rate.bps = 1e6;
	opts__begin(&p, &gen_opts_cmd, argc, argv);
	while ((id = opts__next(&p)) > 0) {
		switch (id) {
		case GEN_RATE:
			have_rate = true;
			if ((err = parse_rate_opt("--rate", p.arg, false, o)))
				return err;
			break;
		case GEN_PPS:
			have_pps = true;
			if ((err = parse_rate_opt("--pps", p.arg, true, o)))
				return err;
			break;
		case GEN_SIZE: o->size = p.u; break;
		case GEN_BURST: o->burst = p.u; break;
		case GEN_DURATION:
			have_duration = true;
			o->duration = p.d;
			break;
		case GEN_COUNT: o->count = p.u; break;
		case GEN_FLOWS: o->flows = p.u; break;
		case GEN_SNDBUF: o->sndbuf = p.u; break;
		case GEN_GSO: o->gso = true; break;
		case GEN_CATCH_UP: o->catch_up = true; break;
		case GEN_REORDER: o->reorder = p.u; break;
		case GEN_INTERVAL: o->interval = p.d; break;
		case GEN_JSON: o->json = true; break;
		case GEN_IPV4: o->family = AF_INET; break;
		case GEN_IPV6: o->family = AF_INET6; break;
		case GEN_NO_CONTROL: o->no_control = true; break;
		case GEN_NO_TRACER: o->no_tracer = true; break;
		}
	}
	if (id < 0)
		return cli__opts_end(id);
	if (p.optind >= argc)
		return bad_usage("where to? give HOST:PORT");
	if (argc - p.optind > 1)
		return cli__bad_arg("gen", argv[p.optind + 1]);
	if (have_rate && have_pps)
		return bad_usage("--rate and --pps both set the rate: give one");
	if (have_duration && o->count)
		return bad_usage("--duration and --count both end the run: give one");
	if (!o->count && !have_duration)
		o->duration = 10;
	o->target = argv[p.optind];
	if ((err = parse_target(o->target, o)))
		return err;
	cli__verbosity(p.verbose);
	return 0;
}

/* ---- setup: where to, the sockets, the schedule ---- */

static int resolve(struct gen *g)
{
	struct addrinfo hints = { .ai_family = g->o.family, .ai_socktype = SOCK_DGRAM,
				  .ai_protocol = IPPROTO_UDP };
	struct addrinfo *res = NULL;
	char a[INET6_ADDRSTRLEN];
	int err = getaddrinfo(g->o.host, NULL, &hints, &res);

	if (err || !res) {
		fprintf(stderr, WHO ": cannot resolve '%s'%s: %s\nTry 'udpdrop gen --help'.\n",
			g->o.host, g->o.family == AF_INET6 ? " as IPv6" :
			g->o.family == AF_INET ? " as IPv4" : "",
			err == EAI_SYSTEM ? strerror(errno) : gai_strerror(err));
		if (res)
			freeaddrinfo(res);
		return -EXIT_USAGE;
	}
	memcpy(&g->dst, res->ai_addr, res->ai_addrlen);
	g->dstlen = res->ai_addrlen;
	freeaddrinfo(res);
	if (g->dst.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&g->dst;

		s6->sin6_port = htons(g->o.port);
		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(g->dst_str, sizeof(g->dst_str), "[%s]:%u", a, g->o.port);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&g->dst;

		s4->sin_port = htons(g->o.port);
		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(g->dst_str, sizeof(g->dst_str), "%s:%u", a, g->o.port);
	}
	return 0;
}

/* UDP + IP header bytes in front of the payload. */
static int hdr_overhead(const struct gen *g)
{
	return gen_is_v6(g) ? 48 : 28;
}

/*
 * One connected socket per flow. Connected: sends name no address, the
 * route's MTU is readable (IP_MTU), and ICMP errors come back to it.
 * IP_RECVERR: without it the kernel turns a qdisc's ENOBUFS into success.
 */
static int open_flow(struct gen *g, struct flow *f)
{
	int one = 1, fd;
	socklen_t len;
	struct sockaddr_storage src;

	fd = socket(g->dst.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0)
		return -errno;
	f->fd = fd;
	if (gen_is_v6(g) ? setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof(one))
		     : setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof(one)))
		return -errno;
	if (g->o.sndbuf) {
		int v = (int)g->o.sndbuf;

		/* FORCE passes net.core.wmem_max as root; the plain one caps there */
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)) &&
		    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)))
			return -errno;
	}
	if (connect(fd, (struct sockaddr *)&g->dst, g->dstlen))
		return -errno;
	/* what the kernel made of it (doubled, capped): send_batch compares
	 * the send queue with it */
	len = sizeof(f->sndbuf);
	if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &f->sndbuf, &len))
		f->sndbuf = 0;
	len = sizeof(src);
	if (getsockname(fd, (struct sockaddr *)&src, &len))
		return -errno;
	f->sport = ntohs(src.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&src)->sin6_port
						   : ((struct sockaddr_in *)&src)->sin_port);
	len = sizeof(f->cookie);
	if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &f->cookie, &len))
		f->cookie = 0; /* before 4.12: the tracer cannot find it */
	return 0;
}

static int cmp_cookie(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int flow_of_cookie(const struct gen *g, uint64_t cookie)
{
	const struct cookie_ix key = { .cookie = cookie }, *hit;

	if (!cookie)
		return -1;
	hit = bsearch(&key, g->by_cookie, g->nflows, sizeof(*g->by_cookie), cmp_cookie);
	return hit ? hit->flow : -1;
}

/* The path MTU of the route to the target: the first flow's connected socket. */
static void read_mtu(struct gen *g)
{
	int mtu = 0;
	socklen_t len = sizeof(mtu);

	if (gen_is_v6(g) ? getsockopt(g->flows[0].fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &len)
		     : getsockopt(g->flows[0].fd, IPPROTO_IP, IP_MTU, &mtu, &len))
		mtu = 0;
	g->mtu = mtu;
	g->mtu_payload = mtu > hdr_overhead(g) ? (uint64_t)(mtu - hdr_overhead(g)) : 0;
}

/* IP fragments of one datagram of `size` payload bytes at the path MTU. */
static uint64_t fragments(const struct gen *g, uint64_t size)
{
	/* fragment payloads are multiples of 8; IPv6 adds its fragment header */
	uint64_t per = gen_is_v6(g) ? (uint64_t)(g->mtu - 48) & ~7ull : (uint64_t)(g->mtu - 20) & ~7ull;

	return per ? (size + 8 + per - 1) / per : 1;
}

/* What plan_for decides for one datagram size. */
struct plan_out {
	uint64_t burst;
	int segs;
	double pps, period_ns;
};

/*
 * Everything that depends on the target for datagrams of `size` bytes:
 * the size limit of the family, GSO, the slot period. A value that cannot
 * work is a usage error (exit 2), found before the first datagram: 0, or
 * -EXIT_USAGE after a message (none when quiet). The path MTU counts only
 * once it is known (g->mtu_payload not 0): before the sockets it is not.
 */
static int plan_for(const struct gen *g, uint64_t size, struct plan_out *p, bool quiet)
{
	const struct gen_opts *o = &g->o;
	uint64_t max = gen_is_v6(g) ? GEN_MAX_V6 : GEN_MAX_V4;
	char a[32], b[32], msg[256];

	memset(p, 0, sizeof(*p));
	if (size > max) {
		if (quiet)
			return -EXIT_USAGE;
		snprintf(a, sizeof(a), "%" PRIu64, size);
		return bad_value("--size", a, gen_is_v6(g) ? "at most 65527 bytes over IPv6"
						       : "at most 65507 bytes over IPv4");
	}
	p->burst = o->burst;
	p->segs = 1;
	if (o->gso) {
		/* a segment must fit the MTU: the kernel refuses GSO otherwise */
		if (g->mtu_payload && size > g->mtu_payload) {
			if (quiet)
				return -EXIT_USAGE;
			snprintf(msg, sizeof(msg), "--gso needs datagrams that fit the path MTU (%d: at most %" PRIu64 " B of payload); --size %" PRIu64 " would be fragmented",
				 g->mtu, g->mtu_payload, size);
			return bad_usage(msg);
		}
		p->segs = (int)(max / size);
		if (p->segs > GEN_GSO_SEGS)
			p->segs = GEN_GSO_SEGS;
		if (!p->burst)
			p->burst = p->segs;
	}
	if (!p->burst)
		p->burst = 1;
	if (o->reorder && (p->burst < 2 || o->gso))
		return quiet ? -EXIT_USAGE :
		       bad_usage("--reorder swaps datagrams within a --burst batch: give --burst 2 or more (and no --gso)");
	if (o->max)
		return 0;
	p->pps = o->rate.pps ? o->rate.pps : o->rate.bps / (8.0 * size);
	p->period_ns = 1e9 * p->burst / p->pps;
	if (p->period_ns < PACE_MIN_PERIOD_NS) {
		if (quiet)
			return -EXIT_USAGE;
		fmt_pps(a, sizeof(a), p->pps);
		snprintf(msg, sizeof(msg), "%s of %" PRIu64 " B datagrams at --burst %" PRIu64 " is a slot every %.1f ns: below 100 ns no schedule holds; raise --burst (or --gso), or use --rate max",
			 a, size, p->burst, p->period_ns);
		return bad_usage(msg);
	}
	if (p->period_ns > PACE_MAX_PERIOD_NS) {
		if (quiet)
			return -EXIT_USAGE;
		fmt_ns(b, sizeof(b), p->period_ns);
		snprintf(msg, sizeof(msg), "that rate is one slot every %s of %" PRIu64 " B datagrams: the slowest schedule is one slot an hour",
			 b, size);
		return bad_usage(msg);
	}
	return 0;
}

/* The size without --size: what fits the path MTU, at most 1500 bytes of
 * IP packet (so 1500 bytes while the path MTU is not known). */
static uint64_t default_size(const struct gen *g)
{
	uint64_t fit = g->mtu_payload && g->mtu <= 1500 ? g->mtu_payload
						       : (uint64_t)(1500 - hdr_overhead(g));

	return fit < UG_HDR_LEN ? UG_HDR_LEN : fit;
}

/*
 * Before any socket, once the address family is known: every check that
 * the route does not decide, so that a bad value is exit 2 even where the
 * target cannot be reached. Without --size the size comes from the path
 * MTU: the options fail here only if no MTU could make them work (any
 * default size, from the smallest MTU of the family to 1500 bytes); else
 * plan() decides once the MTU is known. The GSO segment against the path
 * MTU is the one check that needs the route.
 */
static int precheck(struct gen *g)
{
	struct plan_out p;
	uint64_t lo, hi;

	if (g->o.size)
		return plan_for(g, g->o.size, &p, false);
	hi = default_size(g); /* mtu_payload is 0 here */
	/* the smallest MTU: IPv4's 68 (48 B, the header), IPv6's 1280 */
	lo = gen_is_v6(g) ? 1280 - 48 : UG_HDR_LEN;
	for (uint64_t size = hi; size >= lo; size--)
		if (!plan_for(g, size, &p, true))
			return 0;
	return plan_for(g, hi, &p, false); /* the message for the usual path */
}

/* With the path MTU known: the size, then the schedule. 0 or -exit code. */
static int plan(struct gen *g)
{
	struct gen_opts *o = &g->o;
	struct plan_out p;
	int err;

	if (!o->size)
		o->size = default_size(g);
	err = plan_for(g, o->size, &p, false);
	if (err)
		return err;
	o->burst = p.burst;
	g->segs = p.segs;
	g->pps = p.pps;
	g->period_ns = p.period_ns;
	if (o->count && o->count < o->flows * o->burst)
		fprintf(stderr, WHO ": warning: --count %" PRIu64 " fills fewer slots than there are flows: some flows send nothing\n",
			o->count);
	return 0;
}

/*
 * --count: which datagrams each flow sends. Slot s goes to flow s % flows
 * with min(burst, what is left) datagrams: the same rule the sender follows.
 */
static void plan_totals(struct gen *g)
{
	uint64_t n = g->o.count, B = g->o.burst, F = g->nflows;
	uint64_t full = n / B, rem = n % B;

	for (uint64_t f = 0; f < F; f++)
		g->flows[f].total = B * (full / F + (f < full % F)) +
				    (full % F == f ? rem : 0);
}

static int alloc_send_path(struct gen *g)
{
	uint64_t B = g->o.burst;

	g->hdrs = calloc(B, sizeof(*g->hdrs));
	g->msgs = calloc(B, sizeof(*g->msgs));
	g->iov = calloc(2 * B, sizeof(*g->iov));
	g->filler = malloc(g->o.size - UG_HDR_LEN + 1);
	if (!g->hdrs || !g->msgs || !g->iov || !g->filler)
		return -ENOMEM;
	/* bytes 0x00..0xff repeating from offset 48 (udpgen.h) */
	for (uint64_t i = 0; i < g->o.size - UG_HDR_LEN; i++)
		g->filler[i] = (uint8_t)i;
	return 0;
}

/* ---- sending ---- */

/* The outcome of one slot, committed to the shared counts at once. */
struct slot_result {
	uint64_t numbered, accepted;
	uint64_t refused[RF_MAX];
	int other_errno;
};

static enum refusal refusal_of(int e)
{
	switch (e) {
	case ENOBUFS: return RF_ENOBUFS;
	case EAGAIN: return RF_EAGAIN;
	case EPERM: return RF_EPERM;
	case ECONNREFUSED: return RF_ECONNREFUSED;
	}
	return RF_OTHER;
}

/*
 * Why the message a sendmmsg stopped at was refused: the call returns the
 * count sent before it and drops the error. A paced send (MSG_DONTWAIT)
 * is refused EAGAIN, with no skb built, when the socket's send queue
 * (SIOCOUTQ: sk_wmem_alloc) is at or above its SO_SNDBUF as the kernel
 * allocates; after the refusal the queue only shrinks (nothing else sends
 * on this socket, and a refused skb is freed at once), so a queue still
 * at or above SO_SNDBUF now was there then: no skb was built, for
 * certain, and the refusal was EAGAIN (or, were an ICMP error pending on
 * the socket, which the kernel reports first, ECONNREFUSED: no skb
 * either). Below it, the queue may have drained since, or the cause was
 * another (ENOBUFS or EPERM with an skb, an ICMP error without): unknown,
 * counted as one the tracer saw, so the silent drops may be short by up
 * to as many (the summary says how many). Fragmented datagrams stay
 * unknown: fragments of the refused one may still be queued. Blocking
 * sends never see EAGAIN.
 */
static enum refusal partial_refusal(const struct gen *g, const struct flow *f,
				    int send_flags)
{
	int queued = 0;

	if (!(send_flags & MSG_DONTWAIT) || f->sndbuf <= 0 ||
	    !g->mtu_payload || g->o.size > g->mtu_payload)
		return RF_UNKNOWN;
	if (ioctl(f->fd, SIOCOUTQ, &queued) || queued < f->sndbuf)
		return RF_UNKNOWN;
	return RF_EAGAIN;
}

/*
 * The n datagrams of one slot to flow f, in one sendmmsg (a message per
 * datagram, or per GSO send of up to g->segs). Each datagram is tried
 * once: a refused message's datagrams keep their sequence numbers and
 * count as refused, and the rest of the batch still goes. `flags` ends
 * in the last datagram's header (UG_F_LAST), and `total` in every one.
 */
static void send_batch(struct gen *g, struct flow *f, uint64_t n, uint64_t sched,
		       uint16_t last_flags, uint64_t total, int send_flags,
		       uint64_t *t_send, struct slot_result *r)
{
	int nmsgs = 0, first = 0;
	int msg_dgrams[GEN_MAX_BURST];
	uint64_t d = 0;
	uint64_t t;

	memset(r, 0, sizeof(*r));
	for (uint64_t i = 0; i < n; i++) {
		struct ug_hdr *h = &g->hdrs[i];

		h->magic = htobe32(UG_MAGIC);
		h->version = htobe16(UG_VERSION);
		h->flags = htobe16(i == n - 1 ? last_flags : 0);
		h->run = htobe32(g->run);
		h->flow = htobe32((uint32_t)(f - g->flows));
		h->seq = htobe64(f->seq + i);
		h->sched_ns = htobe64(sched);
		h->total = htobe64(total);
	}
	/* --reorder: a multiple of N trades places with the datagram after it
	 * (never with a closing one, which must stay the flow's last) */
	for (uint64_t i = 0; g->o.reorder && i + 1 < n; i++)
		if ((f->seq + i) % g->o.reorder == 0 && !(last_flags && i + 2 == n)) {
			uint64_t a = g->hdrs[i].seq;

			g->hdrs[i].seq = g->hdrs[i + 1].seq;
			g->hdrs[i + 1].seq = a;
			i++;
		}
	/* messages: each datagram is its header, then the shared filler */
	while (d < n) {
		int k = (int)(n - d < (uint64_t)g->segs ? n - d : (uint64_t)g->segs);
		struct iovec *iov = &g->iov[2 * d];

		for (int i = 0; i < k; i++) {
			iov[2 * i] = (struct iovec){ &g->hdrs[d + i], UG_HDR_LEN };
			iov[2 * i + 1] = (struct iovec){ g->filler, g->o.size - UG_HDR_LEN };
		}
		g->msgs[nmsgs] = (struct mmsghdr){ .msg_hdr = {
			.msg_iov = iov, .msg_iovlen = 2 * k } };
		msg_dgrams[nmsgs++] = k;
		d += k;
	}
	t = now_ns();
	for (uint64_t i = 0; i < n; i++)
		g->hdrs[i].sent_ns = htobe64(t);
	*t_send = t;
	while (first < nmsgs) {
		int s = sendmmsg(f->fd, g->msgs + first, nmsgs - first, send_flags);
		enum refusal why;

		if (s < 0 && errno == EINTR) {
			if (stop_signal)
				break; /* not refused: interrupted, and not numbered */
			continue;
		}
		if (s < 0) {
			why = refusal_of(errno);
			if (why == RF_OTHER && !r->other_errno)
				r->other_errno = errno;
		} else {
			for (int i = 0; i < s; i++) {
				r->accepted += msg_dgrams[first + i];
				r->numbered += msg_dgrams[first + i];
			}
			first += s;
			if (first == nmsgs)
				break;
			/* a blocking send cut short by a signal: not a refusal */
			if (stop_signal && !(send_flags & MSG_DONTWAIT))
				break;
			/* message `first` failed; sendmmsg does not say why */
			why = partial_refusal(g, f, send_flags);
		}
		r->refused[why] += msg_dgrams[first];
		r->numbered += msg_dgrams[first];
		first++;
	}
}

/* Commit a slot's outcome to the shared counts. */
static void commit(struct gen *g, struct flow *f, const struct slot_result *r,
		   const struct pace *p, uint64_t late, bool record_late)
{
	pthread_mutex_lock(&g->lock);
	f->seq += r->numbered;
	f->accepted += r->accepted;
	g->tally.numbered += r->numbered;
	if (p) {
		g->tally.accepted += r->accepted;
		g->tally.bytes += r->accepted * g->o.size;
	} else {
		/* send_last's: outside the schedule, so not in the rates */
		g->tally.closing += r->accepted;
	}
	for (int i = 0; i < RF_MAX; i++) {
		g->tally.refused[i] += r->refused[i];
		f->refused += r->refused[i];
		if (refusal_has_skb(i))
			f->refused_skb += r->refused[i];
	}
	if (r->other_errno && !g->other_errno)
		g->other_errno = r->other_errno;
	if (p) {
		g->tally.slots = p->slots;
		g->tally.missed = p->missed;
		g->tally.reanchors = p->reanchors;
		g->tally.dgrams = p->dgrams;
		g->tally.burst_dgrams = p->burst_dgrams;
	}
	if (record_late)
		hist__add(g->late, late);
	pthread_mutex_unlock(&g->lock);
}

/*
 * The sender: wait for each slot, send its batch, count. Paced sends do
 * not block (MSG_DONTWAIT): a full send buffer is a refusal (EAGAIN), not
 * a stall that would shift the schedule; unpaced ones block, which is
 * their back-pressure. Returns when the run is over or stopped.
 */
static void run_sender(struct gen *g)
{
	const struct gen_opts *o = &g->o;
	bool paced = !o->max;
	int send_flags = paced ? MSG_DONTWAIT : 0;
	uint64_t end = o->count ? UINT64_MAX : g->t0 + (uint64_t)(o->duration * 1e9);
	uint64_t numbered = 0, slot_no = 0;
	struct pace p;

	/* pace__init cannot fail: plan() checked the period */
	pace__init(&p, g->period_ns, g->t0, o->catch_up);
	/* at a high rate this CPU's own transmit softirq makes hiccups of a
	 * few slots: made up in order, only a longer delay is a stall */
	pace__set_stall(&p, GEN_STALL_NS);
	g->t_end = g->t0;
	while (!stop_signal) {
		struct pace_slot s;
		struct slot_result r;
		uint64_t now, n, t_send, late;
		struct flow *f;
		uint16_t flags = 0;

		if (o->count && numbered >= o->count)
			break;
		if (paced) {
			uint64_t due = pace__due(&p);

			if (due >= end) {
				/* the run lasts --duration, even past its last slot */
				pace__wait(&p, &pace_clock_monotonic, end, &stop_signal);
				break;
			}
			now = pace__wait(&p, &pace_clock_monotonic, due, &stop_signal);
			if (stop_signal)
				break;
		} else {
			now = now_ns();
			if (now >= end)
				break;
		}
		pace__take(&p, now, &s);
		f = &g->flows[slot_no % g->nflows];
		n = o->burst;
		if (o->count && o->count - numbered < n)
			n = o->count - numbered;
		if (f->total && f->seq + n >= f->total)
			flags = UG_F_LAST;
		send_batch(g, f, n, s.sched, flags, f->total, send_flags, &t_send, &r);
		if (!r.numbered)
			break; /* interrupted before anything went */
		late = pace__sent(&p, &s, t_send, r.numbered);
		if (flags && r.numbered == n)
			f->last_sent = true;
		commit(g, f, &r, &p, late, paced);
		g->last_sched = s.sched;
		numbered += r.numbered;
		slot_no++;
	}
	g->t_end = now_ns();
}

static void wait_outq(struct gen *g, uint64_t max_ns);

/*
 * --no-control: the copies of flow f's closing datagram, just handed over
 * (g->hdrs[0]): the very same bytes, LAST_COPIES times, back to back, so
 * that one lost datagram does not leave the sink without the flow's total.
 * They go from a socket of their own (opened at the first need), so that
 * neither a refusal nor a drop the tracer sees of a copy enters the
 * flow's counts: only the numbered datagrams do. Accepted copies are
 * counted apart (copies); a refused one is not retried.
 */
static void send_copies(struct gen *g)
{
	struct iovec iov[2] = {
		{ &g->hdrs[0], UG_HDR_LEN },
		{ g->filler, g->o.size - UG_HDR_LEN },
	};
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

	if (g->copy_fd == -1) {
		int fd = socket(g->dst.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);

		if (fd < 0 || connect(fd, (struct sockaddr *)&g->dst, g->dstlen)) {
			fprintf(stderr, WHO ": warning: no socket for the closing datagrams' copies (%s): each goes once\n",
				strerror(errno));
			if (fd >= 0)
				close(fd);
			g->copy_fd = -2; /* said once */
			return;
		}
		g->copy_fd = fd;
	}
	if (g->copy_fd < 0)
		return;
	for (int i = 0; i < LAST_COPIES; i++) {
		ssize_t n;

		do {
			n = sendmsg(g->copy_fd, &mh, MSG_DONTWAIT);
		} while (n < 0 && errno == EINTR);
		if (n >= 0) {
			pthread_mutex_lock(&g->lock);
			g->tally.copies++;
			pthread_mutex_unlock(&g->lock);
		}
	}
}

/*
 * Close each flow at the sink: a datagram with UG_F_LAST and total =
 * seq + 1 (what --no-control relies on; with the control channel it is
 * the same datagram the header promises). With --count it went with the
 * flow's last slot; stopped early or with --duration it goes now, once
 * the send queues have drained. A refused one is numbered anew a few
 * times, 10 ms apart: without it the sink would wait for more. Without
 * the control channel it is the only datagram with the flow's total: it
 * goes 1 + LAST_COPIES times (send_copies).
 */
static void send_last(struct gen *g)
{
	wait_outq(g, 1000000000ull);
	for (int i = 0; i < g->nflows; i++) {
		struct flow *f = &g->flows[i];

		if (f->last_sent || (g->o.count && !f->total))
			continue;
		for (int tries = 0; tries < LAST_TRIES && !f->last_sent; tries++) {
			struct slot_result r;
			uint64_t t;

			if (tries)
				usleep(10000);
			send_batch(g, f, 1, now_ns(), UG_F_LAST, f->seq + 1, MSG_DONTWAIT, &t, &r);
			commit(g, f, &r, NULL, 0, false);
			f->last_sent = r.accepted == 1;
		}
		if (f->last_sent && g->o.no_control)
			send_copies(g);
		if (!f->last_sent)
			fprintf(stderr, WHO ": warning: flow %d: the kernel refused its closing datagram %d times: %s\n",
				i, LAST_TRIES, g->ctl >= 0 ? "the sink learns its end from DONE"
							   : "the sink may not see this flow end");
	}
}

/* ---- what comes back: error queues and the tracer ---- */

static void drain_errqueue(struct gen *g, int fd)
{
	char data[64];
	char ctrl[CMSG_SPACE(sizeof(struct sock_extended_err) + sizeof(struct sockaddr_in6))];

	for (;;) {
		struct iovec iov = { data, sizeof(data) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctrl, .msg_controllen = sizeof(ctrl) };

		if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			struct sock_extended_err ee;

			if (!((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
			      (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR)))
				continue;
			memcpy(&ee, CMSG_DATA(c), sizeof(ee));
			if (ee.ee_origin != SO_EE_ORIGIN_ICMP && ee.ee_origin != SO_EE_ORIGIN_ICMP6)
				g->errq[EQ_LOCAL]++;
			else if (ee.ee_errno == ECONNREFUSED)
				g->errq[EQ_PORT_UNREACH]++;
			else if (ee.ee_errno == EHOSTUNREACH || ee.ee_errno == ENETUNREACH)
				g->errq[EQ_UNREACH]++;
			else if (ee.ee_errno == EMSGSIZE)
				g->errq[EQ_TOO_BIG]++;
			else
				g->errq[EQ_ICMP_OTHER]++;
		}
	}
}

/* The tracer's drops of our sockets: per flow, and per cause over all. */
static void tracer_collect(struct gen *g)
{
	size_t it = 0;
	const void *k;
	void *v;

	if (!g->tracer)
		return;
	if (watch__refresh(&g->w)) {
		fprintf(stderr, WHO ": warning: reading the sender's drop counts failed; they may be short\n");
		return;
	}
	memset(g->snd_cause, 0, sizeof(g->snd_cause));
	while (htab__next(&g->w.m.rows, &it, &k, &v)) {
		const struct row *r = v;
		int fl;

		if (r->key.kind != ROW_SOCKET || (fl = flow_of_cookie(g, r->key.cookie)) < 0)
			continue;
		g->flows[fl].tracer = r->drops;
		for (int c = 0; c < CAUSE_MAX; c++)
			g->snd_cause[c] += r->cause[c];
	}
}

/*
 * One interval, from the previous report to `now`: drain, refresh, take
 * the sender's counts and swap its lateness histogram, print.
 */
static void report_interval(struct gen *g, uint64_t now)
{
	struct tally t;
	struct hist *late;
	struct report r = {};
	uint64_t snd = 0;

	for (int i = 0; i < g->nflows; i++)
		drain_errqueue(g, g->flows[i].fd);
	tracer_collect(g);
	pthread_mutex_lock(&g->lock);
	t = g->tally;
	late = g->late;
	g->late = late == &g->hists[0] ? &g->hists[1] : &g->hists[0];
	for (int i = 0; i < g->nflows; i++)
		snd += gen_flow_snd_drops(g, &g->flows[i]);
	pthread_mutex_unlock(&g->lock);

	r.start = (g->prev_ns - g->t0) / 1e9;
	r.end = (now - g->t0) / 1e9;
	r.dgrams = t.accepted - g->prev.accepted;
	r.bytes = t.bytes - g->prev.bytes;
	r.slots = t.slots - g->prev.slots;
	r.missed = t.missed - g->prev.missed;
	r.dgrams_paced = g->o.max ? 0 : t.dgrams - g->prev.dgrams;
	r.burst_dgrams = t.burst_dgrams - g->prev.burst_dgrams;
	for (int i = 0; i < RF_MAX; i++) {
		r.refused[i] = t.refused[i] - g->prev.refused[i];
		r.refused_all += r.refused[i];
	}
	r.snd_drops = snd - g->prev_snd_drops;
	r.icmp = gen_icmp_total(g) - g->prev_icmp;
	r.late = late;
	gen_report__interval(g, &r);
	hist__merge(&g->late_all, late);
	hist__reset(late);
	g->prev = t;
	g->prev_snd_drops = snd;
	g->prev_icmp = gen_icmp_total(g);
	g->prev_ns = now;
}

/*
 * Has the sink gone mid-run? Between READY and the LEDGER it sends
 * nothing unless it ends the run (an ERROR saying why, then it closes);
 * killed, its kernel closes the connection (EOF) or resets it. true, with
 * why in g->sink_gone; false while it is there (or without the channel).
 */
static bool sink_gone(struct gen *g)
{
	struct ctl_msg m;
	ssize_t n;
	char c;
	int err;

	if (g->ctl < 0 || g->sink_gone[0])
		return g->sink_gone[0];
	n = recv(g->ctl, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return false;
	if (n < 0) {
		snprintf(g->sink_gone, sizeof(g->sink_gone), "the control channel failed (%s)",
			 strerror(errno));
		return true;
	}
	if (n == 0) {
		snprintf(g->sink_gone, sizeof(g->sink_gone),
			 "closed the control channel (it stopped or was killed)");
		return true;
	}
	err = ctl_recv(g->ctl, &m, CTL_MIDRUN_MS);
	if (!err && !strcmp(m.type, "ERROR"))
		snprintf(g->sink_gone, sizeof(g->sink_gone), "ended the run: %s",
			 ctl_msg__get(&m, "msg") ?: "(no reason given)");
	else if (!err)
		snprintf(g->sink_gone, sizeof(g->sink_gone), "sent %s mid-run", m.type);
	else
		snprintf(g->sink_gone, sizeof(g->sink_gone), "the control channel failed (%s)",
			 err == -ECONNRESET ? "closed mid-message" : strerror(-err));
	ctl_msg__free(&m);
	return true;
}

/*
 * The reporter thread: an interval report at t0 + k * interval until
 * done; between them, every CTL_WATCH_NS, a look at the control channel:
 * a sink gone stops the sender (as a write error does).
 */
static void *reporter(void *arg)
{
	struct gen *g = arg;
	uint64_t step = (uint64_t)(g->o.interval * 1e9), tick = g->t0 + step;

	pthread_mutex_lock(&g->lock);
	while (!g->done) {
		uint64_t wake = tick, now = now_ns();

		if (g->ctl >= 0 && !g->sink_gone[0] && now + CTL_WATCH_NS < wake)
			wake = now + CTL_WATCH_NS;
		struct timespec ts = { .tv_sec = wake / 1000000000ull,
				       .tv_nsec = wake % 1000000000ull };

		pthread_cond_timedwait(&g->cond, &g->lock, &ts);
		if (g->done)
			break;
		if (g->ctl >= 0 && !g->sink_gone[0]) {
			bool gone;

			/* not under the lock: the sender commits its slots meanwhile */
			pthread_mutex_unlock(&g->lock);
			gone = sink_gone(g);
			if (gone)
				pthread_kill(g->sender_thread, SIGTERM);
			pthread_mutex_lock(&g->lock);
		}
		now = now_ns();
		if (now < tick)
			continue;
		pthread_mutex_unlock(&g->lock);
		report_interval(g, now);
		pthread_mutex_lock(&g->lock);
		tick += step;
		if (tick <= now) /* a stopped process: no flurry of empty intervals */
			tick = now + step;
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

/* ---- the control channel ---- */

static int ctl_fail(struct gen *g, const char *what, int err)
{
	if (err == -EINTR && stop_signal) {
		fprintf(stderr, WHO ": interrupted\n");
		return EXIT_OK;
	}
	fprintf(stderr, WHO ": %s %s: %s; is `udpdrop sink %s` running there? (--no-control sends without it)\n",
		what, g->dst_str, err == -ETIMEDOUT ? "no answer" : strerror(-err),
		g->dst_str);
	return EXIT_FAIL;
}

static int ctl_hello(struct gen *g)
{
	struct ctl_msg m;
	uint64_t run;
	int err, fd;

	fd = ctl_connect((struct sockaddr *)&g->dst, g->dstlen, CONNECT_MS);
	if (fd < 0)
		return ctl_fail(g, "no control channel (TCP) at", fd);
	g->ctl = fd;
	ctl_msg__init(&m, "HELLO");
	ctl_msg__set_u64(&m, "run", g->run);
	ctl_msg__set_u64(&m, "flows", g->nflows);
	ctl_msg__set_u64(&m, "size", g->o.size);
	ctl_msg__set_double(&m, "pps", g->pps);
	ctl_msg__set_u64(&m, "count", g->o.count);
	ctl_msg__set_double(&m, "duration", g->o.count ? 0 : g->o.duration);
	ctl_msg__set_u64(&m, "gso", g->o.gso);
	ctl_msg__set_u64(&m, "family", gen_is_v6(g) ? 6 : 4);
	ctl_msg__set_u64(&m, "burst", g->o.burst);
	err = ctl_send(fd, &m);
	ctl_msg__free(&m);
	if (err)
		return ctl_fail(g, "the control channel to", err);
	err = ctl_recv(fd, &m, READY_MS);
	if (err) {
		ctl_msg__free(&m);
		return ctl_fail(g, "no READY from", err);
	}
	if (!strcmp(m.type, "ERROR")) {
		const char *msg = ctl_msg__get(&m, "msg");

		fprintf(stderr, WHO ": the sink at %s refused the run: %s\n", g->dst_str,
			msg ? msg : "(no reason given)");
		ctl_msg__free(&m);
		return EXIT_FAIL;
	}
	if (strcmp(m.type, "READY") || ctl_msg__get_u64(&m, "run", &run) || run != g->run) {
		fprintf(stderr, WHO ": the sink at %s answered HELLO with %s, not READY for run %u\n",
			g->dst_str, m.type, g->run);
		ctl_msg__free(&m);
		return EXIT_FAIL;
	}
	if (!g->o.json) {
		uint64_t rcvbuf = 0, xdp = 0, tracer = 0;
		char b[32];

		ctl_msg__get_u64(&m, "rcvbuf", &rcvbuf);
		ctl_msg__get_u64(&m, "xdp", &xdp);
		ctl_msg__get_u64(&m, "tracer", &tracer);
		fmt_bytes(b, sizeof(b), rcvbuf);
		printf(WHO ": sink ready: rcvbuf %s, XDP %s, tracer %s\n", b,
		       xdp ? "on" : "off", tracer ? "on" : "off");
	}
	ctl_msg__free(&m);
	return 0;
}

/* ctl_fail for ctl_done: 1 when it was a Ctrl-C, else -EXIT_FAIL. */
static int done_fail(struct gen *g, const char *what, int err)
{
	return ctl_fail(g, what, err) ? -EXIT_FAIL : 1;
}

/*
 * DONE with the sender's counts, then the sink's LEDGER into l. 0 with
 * the ledger; 1 without, interrupted (a Ctrl-C while waiting for the
 * ledger: not an error, the sink has the counts); or -EXIT_FAIL after one
 * line on stderr (also when sending DONE failed or was interrupted: ctl_send
 * gives up on a sink that stops reading, and returns at a signal).
 */
static int ctl_done(struct gen *g, struct ledger *l)
{
	struct ctl_msg m;
	uint64_t refused = 0;
	char key[48];
	int err;

	ctl_msg__init(&m, "DONE");
	ctl_msg__set_u64(&m, "run", g->run);
	ctl_msg__set_u64(&m, "flows", g->nflows);
	for (int i = 0; i < g->nflows; i++) {
		snprintf(key, sizeof(key), "f%d.sent", i);
		ctl_msg__set_u64(&m, key, g->flows[i].seq);
		snprintf(key, sizeof(key), "f%d.sender_drops", i);
		ctl_msg__set_u64(&m, key, gen_flow_snd_drops(g, &g->flows[i]));
		refused += g->flows[i].refused;
	}
	ctl_msg__set_u64(&m, "snd_errors", refused);
	ctl_msg__set_u64(&m, "sender_tracer", g->tracer);
	for (int c = 0; c < CAUSE_MAX; c++)
		if (g->snd_cause[c]) {
			snprintf(key, sizeof(key), "snd.%s", cause__name(c));
			ctl_msg__set_u64(&m, key, g->snd_cause[c]);
		}
	ctl_msg__set_double(&m, "seconds", g->elapsed);
	err = ctl_send(g->ctl, &m);
	ctl_msg__free(&m);
	if (err) {
		/* a sink that stops reading, or a signal (Ctrl-C, -EINTR):
		 * either way it has not got the counts, so no ledger will
		 * come; a failure, not a stop, whatever ended it */
		fprintf(stderr, WHO ": the control channel failed: sending DONE to %s: %s; the sink did not get this run's counts, no ledger (the sender's side follows)\n",
			g->dst_str, err == -EINTR ? "interrupted" :
			err == -ETIMEDOUT ? "the sink stopped reading" : strerror(-err));
		return -EXIT_FAIL;
	}
	/* the Ctrl-C that ended the run must not also end this wait */
	stop_signal = 0;
	err = ctl_recv(g->ctl, &m, LEDGER_MS);
	if (err == -EINTR) {
		ctl_msg__free(&m);
		fprintf(stderr, WHO ": interrupted while waiting for the sink's ledger\n");
		return 1;
	}
	if (err) {
		ctl_msg__free(&m);
		return done_fail(g, "no LEDGER from", err);
	}
	if (!strcmp(m.type, "ERROR")) {
		const char *msg = ctl_msg__get(&m, "msg");

		fprintf(stderr, WHO ": the sink at %s: %s\n", g->dst_str, msg ? msg : "error");
		ctl_msg__free(&m);
		return -EXIT_FAIL;
	}
	err = strcmp(m.type, "LEDGER") ? -EPROTO : ledger__from_msg(l, &m);
	ctl_msg__free(&m);
	if (err) {
		fprintf(stderr, WHO ": the sink at %s sent a ledger this version cannot read (%s)\n",
			g->dst_str, strerror(-err));
		return -EXIT_FAIL;
	}
	return 0;
}

/* Wait until the kernel has let go of every datagram (SIOCOUTQ 0): no
 * drop of ours can happen after that, so the tracer's last count is final. */
static void wait_outq(struct gen *g, uint64_t max_ns)
{
	uint64_t until = now_ns() + max_ns;

	for (;;) {
		int busy = 0;

		for (int i = 0; i < g->nflows && !busy; i++) {
			int q = 0;

			if (!ioctl(g->flows[i].fd, SIOCOUTQ, &q) && q > 0)
				busy = 1;
		}
		if (!busy || now_ns() >= until)
			return;
		usleep(1000);
	}
}

/* ---- the driver ---- */

/* Our own netns inode: the tracer watches only it. */
static uint32_t own_netns(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : (uint32_t)st.st_ino;
}

static void open_tracer(struct gen *g)
{
	char missing[128];
	struct tracer_opts to = { .no_rx = true };
	struct model_opts mo = {};
	uint32_t ns = own_netns();

	if (g->o.no_tracer)
		return;
	if (caps__check_bpf(missing, sizeof(missing))) {
		pr_info("no sender tracer: it needs %s\n", missing);
		return;
	}
	to.filter_netns = mo.netns = ns;
	/*
	 * watch__open says why it failed in one line that starts with `who`:
	 * this prefix makes that line the one warning, with the consequence
	 * in it ("udpdrop gen: warning: no sender tracer, ...: <why>").
	 */
	if (watch__open(&g->w, &to, &mo,
			WHO ": warning: no sender tracer, so drops after a send succeeded are not counted")) {
		g->tracer_failed = true;
		return;
	}
	g->tracer = true;
	/* its own netns and sockets only: what could be missing is the close-time ranges */
	caps__survey(&(struct caps_scope){ .ks = &g->w.m.ksyms });
	caps__warn(WHO);
}

/* Start the reporter with SIGINT and SIGTERM blocked: they must reach
 * the sender, whose sleeps they end. */
static int start_reporter(struct gen *g, pthread_t *th)
{
	sigset_t block, old;
	int err;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	err = pthread_create(th, NULL, reporter, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

static void stop_reporter(struct gen *g, pthread_t th)
{
	pthread_mutex_lock(&g->lock);
	g->done = true;
	pthread_cond_signal(&g->cond);
	pthread_mutex_unlock(&g->lock);
	pthread_join(th, NULL);
}

static int init_sync(struct gen *g)
{
	pthread_condattr_t ca;
	int err;

	err = pthread_mutex_init(&g->lock, NULL);
	if (err)
		return -err;
	pthread_condattr_init(&ca);
	/* the reporter's deadlines are CLOCK_MONOTONIC, as the schedule */
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	err = pthread_cond_init(&g->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (err)
		pthread_mutex_destroy(&g->lock);
	return -err;
}

/* 1024 flows are 1024 sockets: more than the usual soft limit of files. */
static void raise_nofile(rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? want : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl); /* if not, socket() will say EMFILE */
}

#ifndef UG_RUN_ANY
#define UG_RUN_ANY 0u
#define UG_RUN_NONE 0xffffffffu
#endif

/*
 * The run id: random, never UG_RUN_ANY (0: the sink's XDP program reads
 * it as any run) nor UG_RUN_NONE (0xffffffff: the sink's "no run"): drawn
 * again until neither.
 */
static uint32_t draw_run(void)
{
	uint32_t run = UG_RUN_ANY;

	for (uint64_t i = 0; run == UG_RUN_ANY || run == UG_RUN_NONE; i++)
		if (getrandom(&run, sizeof(run), GRND_NONBLOCK) != sizeof(run))
			run = (uint32_t)((now_ns() ^ ((uint64_t)getpid() << 16)) + i * 0x9e3779b9ull);
	return run;
}

/* Sockets, path MTU, the plan: 0 or -exit code (a message printed). */
static int setup(struct gen *g)
{
	int err;

	err = resolve(g);
	if (!err)
		err = precheck(g); /* before any socket: exit 2 even with no route */
	if (err)
		return err;
	g->nflows = (int)g->o.flows;
	raise_nofile(g->nflows + 64);
	g->flows = calloc(g->nflows, sizeof(*g->flows));
	g->by_cookie = calloc(g->nflows, sizeof(*g->by_cookie));
	if (!g->flows || !g->by_cookie)
		goto nomem;
	for (int i = 0; i < g->nflows; i++)
		g->flows[i].fd = -1;
	for (int i = 0; i < g->nflows; i++) {
		err = open_flow(g, &g->flows[i]);
		if (err) {
			fprintf(stderr, WHO ": socket to %s: %s%s\n", g->dst_str, strerror(-err),
				err == -EMFILE ? " (each flow is a socket: raise ulimit -n)" : "");
			return -EXIT_FAIL;
		}
		g->by_cookie[i].cookie = g->flows[i].cookie;
		g->by_cookie[i].flow = i;
	}
	qsort(g->by_cookie, g->nflows, sizeof(*g->by_cookie), cmp_cookie);
	read_mtu(g);
	err = plan(g);
	if (err)
		return err;
	if (g->o.count)
		plan_totals(g);
	if (g->o.gso) {
		int v = (int)g->o.size;

		for (int i = 0; i < g->nflows; i++)
			if (setsockopt(g->flows[i].fd, SOL_UDP, UDP_SEGMENT, &v, sizeof(v))) {
				err = errno;
				fprintf(stderr, WHO ": --gso: UDP_SEGMENT: %s%s\n", strerror(err),
					err == ENOPROTOOPT ? " (this kernel has no UDP GSO: 4.18 or later)" : "");
				return err == ENOPROTOOPT ? -EXIT_KERNEL : -EXIT_FAIL;
			}
	}
	if (g->o.sndbuf) {
		int v = 0;
		socklen_t len = sizeof(v);

		/* the kernel doubles what it is asked, and caps it without root */
		if (!getsockopt(g->flows[0].fd, SOL_SOCKET, SO_SNDBUF, &v, &len) &&
		    (uint64_t)v < g->o.sndbuf)
			fprintf(stderr, WHO ": warning: --sndbuf %" PRIu64 ": the kernel gave %d bytes (net.core.wmem_max caps it without root)\n",
				g->o.sndbuf, v);
	}
	if (g->mtu_payload && g->o.size > g->mtu_payload)
		fprintf(stderr, WHO ": warning: %" PRIu64 " B datagrams exceed the path MTU %d (%" PRIu64 " B of payload): each goes out as %" PRIu64 " IP fragments\n",
			g->o.size, g->mtu, g->mtu_payload, fragments(g, g->o.size));
	if (alloc_send_path(g))
		goto nomem;
	g->run = draw_run();
	return 0;
nomem:
	fprintf(stderr, WHO ": out of memory\n");
	return -EXIT_FAIL;
}

/*
 * After the sender stopped: close the flows at the sink, wait for the
 * kernel to let go of our datagrams, and take the final counts.
 */
static void finish(struct gen *g)
{
	uint64_t slot_end = g->last_sched + (uint64_t)g->period_ns;

	/* a paced run lasts its slots: the last one's period is part of it */
	if (!g->o.max && g->tally.slots && slot_end > g->t_end)
		g->elapsed = (slot_end - g->t0) / 1e9;
	else
		g->elapsed = (g->t_end - g->t0) / 1e9;
	/* to a sink gone the closing datagrams only come back refused */
	if (!g->sink_gone[0])
		send_last(g);
	wait_outq(g, 1000000000ull);
	usleep(20000); /* ICMP errors from the other end: a round trip */
	/* the last partial interval, if it is more than a tenth of one */
	if (g->tally.accepted != g->prev.accepted &&
	    g->t_end > g->prev_ns &&
	    g->t_end - g->prev_ns >= (uint64_t)(g->o.interval * 1e8)) {
		report_interval(g, g->t_end);
	} else {
		for (int i = 0; i < g->nflows; i++)
			drain_errqueue(g, g->flows[i].fd);
		tracer_collect(g);
		hist__merge(&g->late_all, g->late);
		hist__reset(g->late);
	}
}

int do_gen(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: sleeps end */
	struct ledger ledger = {};
	bool have_ledger = false, reporter_up = false, sync_up = false;
	struct gen *g;
	pthread_t rep;
	int err, ret = EXIT_FAIL;

	/* big (histograms): not on the stack */
	g = calloc(1, sizeof(*g));
	if (!g) {
		fprintf(stderr, WHO ": out of memory\n");
		return EXIT_FAIL;
	}
	g->ctl = -1;
	g->copy_fd = -1;
	err = parse_args(argc, argv, &g->o);
	if (!err)
		err = setup(g);
	if (err) {
		ret = err > 0 ? EXIT_OK : -err;
		goto out;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	open_tracer(g);
	if (!g->o.no_control) {
		ret = ctl_hello(g);
		if (ret)
			goto out;
		ret = EXIT_FAIL;
	}
	if (stop_signal) {
		ret = EXIT_OK; /* stopped before the first datagram: nothing to sum */
		goto out;
	}
	gen_report__plan(g);
	err = init_sync(g);
	if (err) {
		fprintf(stderr, WHO ": %s\n", strerror(-err));
		goto out;
	}
	sync_up = true;
	g->late = &g->hists[0];
	/* wake-ups within a microsecond, not the default 50 us of slack */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	g->sender_thread = pthread_self();
	g->t0 = g->prev_ns = now_ns();
	err = start_reporter(g, &rep);
	if (err) {
		fprintf(stderr, WHO ": cannot start the reporter thread: %s\n", strerror(-err));
		goto out;
	}
	reporter_up = true;

	run_sender(g);

	stop_reporter(g, rep);
	reporter_up = false;
	finish(g);
	ret = EXIT_OK;
	if (g->sink_gone[0]) {
		/* no one to send DONE to: the control channel failed mid-run */
		fprintf(stderr, WHO ": the sink at %s %s: stopped sending %.1f s into the run; no ledger (the sender's side follows)\n",
			g->dst_str, g->sink_gone, g->elapsed);
		ret = EXIT_FAIL;
	} else if (g->ctl >= 0) {
		err = ctl_done(g, &ledger);
		have_ledger = !err;
		if (err < 0)
			ret = -err;
	}
	gen_report__results(g, have_ledger ? &ledger : NULL);
	/* said once, by flush_out: the exit code says it too */
	if (g->write_failed && ret == EXIT_OK)
		ret = EXIT_FAIL;
out:
	if (reporter_up)
		stop_reporter(g, rep);
	if (sync_up) {
		pthread_cond_destroy(&g->cond);
		pthread_mutex_destroy(&g->lock);
	}
	if (have_ledger)
		ledger__free(&ledger);
	if (g->tracer)
		watch__close(&g->w);
	if (g->ctl >= 0)
		close(g->ctl);
	if (g->copy_fd >= 0)
		close(g->copy_fd);
	for (int i = 0; g->flows && i < g->nflows; i++)
		if (g->flows[i].fd >= 0)
			close(g->flows[i].fd);
	free(g->flows);
	free(g->by_cookie);
	free(g->hdrs);
	free(g->filler);
	free(g->msgs);
	free(g->iov);
	free(g);
	return ret;
}
