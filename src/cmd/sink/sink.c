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
 *
 * This file: the options, the setup (the sockets, XDP, the tracer) and
 * the command's entry point. sink_loop.c reads the datagrams and runs the
 * loop; sink_ctl.c serves the control channel; sink_run.c starts and ends
 * the runs (baselines, the ledger); sink_report.c prints.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "caps.h"
#include "cli.h"
#include "opts.h"
#include "ctl.h"
#include "log.h"
#include "seqtrack.h"
#include "sink_internal.h"
#include "udpgen.h"
#include "units.h"
#include "util.h"
#include "watch.h"
#include "xdpstamp.h"

#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

volatile sig_atomic_t sink_stop_signal;

static void on_signal(int sig)
{
	sink_stop_signal = sig;
}

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

/* ---- setup ----------------------------------------------------------- */

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
	sink_take_baseline(s, &s->idle);
	ret = -sink_serve(s);
out:
	sink_run_clear(s);
	seqtrack__free(&s->r.st);
	htab__free(&s->idle.rows);
	htab__free(&s->r.base.rows);
	if (s->have_tracer)
		watch__close(&s->w);
	if (s->have_xdp)
		xdpstamp__close(&s->xdp);
	sink_close_ctl(s);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->ufd >= 0)
		close(s->ufd);
	free(s);
	return ret;
}
