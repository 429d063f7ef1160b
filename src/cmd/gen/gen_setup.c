// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop gen's setup, before the first datagram: where to (resolve), one
 * connected socket per flow, the path MTU, and the plan (the datagram
 * size, GSO, the slot period), checked before any socket where the route
 * does not decide it.
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include "cli.h"
#include "gen_internal.h"
#include "pace.h"
#include "udpgen.h"
#include "units.h"
#include "util.h"

#define GEN_GSO_SEGS 64         /* datagrams per UDP_SEGMENT send, at most */

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

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

int gen_flow_of_cookie(const struct gen *g, uint64_t cookie)
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
		return gen_bad_value("--size", a, gen_is_v6(g) ? "at most 65527 bytes over IPv6"
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
			return gen_bad_usage(msg);
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
		       gen_bad_usage("--reorder swaps datagrams within a --burst batch: give --burst 2 or more (and no --gso)");
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
		return gen_bad_usage(msg);
	}
	if (p->period_ns > PACE_MAX_PERIOD_NS) {
		if (quiet)
			return -EXIT_USAGE;
		fmt_ns(b, sizeof(b), p->period_ns);
		snprintf(msg, sizeof(msg), "that rate is one slot every %s of %" PRIu64 " B datagrams: the slowest schedule is one slot an hour",
			 b, size);
		return gen_bad_usage(msg);
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
int gen_setup(struct gen *g)
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
