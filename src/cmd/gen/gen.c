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
 * (text or JSON), is gen_report.c's; the state is in gen_internal.h.
 *
 * This file: the options, and the driver that runs the phases in order:
 * gen_setup.c (where to, the sockets, the plan), gen_ctl.c (HELLO, then
 * DONE and the ledger), gen_send.c (the sender), gen_reporter.c (the
 * reporter thread), gen_report.c (what is printed).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "caps.h"
#include "cli.h"
#include "opts.h"
#include "gen_internal.h"
#include "ledger.h"
#include "log.h"
#include "udpgen.h"
#include "units.h"
#include "util.h"
#include "watch.h"

volatile sig_atomic_t gen_stop_signal;

static void on_signal(int sig)
{
	gen_stop_signal = sig;
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

int gen_bad_value(const char *opt, const char *val, const char *want)
{
	return cli__bad_value("gen", opt, val, want);
}

int gen_bad_usage(const char *msg)
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
			return gen_bad_value("HOST:PORT", s, "[IPv6 address]:PORT");
		host = s + 1;
		hlen = end - host;
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return gen_bad_value("HOST:PORT", s, "a port is missing (HOST:PORT)");
		hlen = colon - s;
		if (memchr(s, ':', hlen))
			return gen_bad_value("HOST:PORT", s, "an IPv6 address goes in brackets: [ADDRESS]:PORT");
	}
	if (!hlen || hlen >= sizeof(o->host))
		return gen_bad_value("HOST:PORT", s, "a host name or address, then :PORT");
	if (parse_u64(colon + 1, 1, 65535, &port))
		return gen_bad_value("port", colon + 1, "a port from 1 to 65535");
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
	return gen_bad_value(opt, val, pps_only ?
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
		return gen_bad_usage("where to? give HOST:PORT");
	if (argc - p.optind > 1)
		return cli__bad_arg("gen", argv[p.optind + 1]);
	if (have_rate && have_pps)
		return gen_bad_usage("--rate and --pps both set the rate: give one");
	if (have_duration && o->count)
		return gen_bad_usage("--duration and --count both end the run: give one");
	if (!o->count && !have_duration)
		o->duration = 10;
	o->target = argv[p.optind];
	if ((err = parse_target(o->target, o)))
		return err;
	cli__verbosity(p.verbose);
	return 0;
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
		gen_send_last(g);
	gen_wait_outq(g, 1000000000ull);
	usleep(20000); /* ICMP errors from the other end: a round trip */
	/* the last partial interval, if it is more than a tenth of one */
	if (g->tally.accepted != g->prev.accepted &&
	    g->t_end > g->prev_ns &&
	    g->t_end - g->prev_ns >= (uint64_t)(g->o.interval * 1e8)) {
		gen_end_interval(g, g->t_end);
	} else {
		for (int i = 0; i < g->nflows; i++)
			gen_drain_errqueue(g, g->flows[i].fd);
		gen_tracer_collect(g);
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
		err = gen_setup(g);
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
		ret = gen_ctl_hello(g);
		if (ret)
			goto out;
		ret = EXIT_FAIL;
	}
	if (gen_stop_signal) {
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
	err = gen_start_reporter(g, &rep);
	if (err) {
		fprintf(stderr, WHO ": cannot start the reporter thread: %s\n", strerror(-err));
		goto out;
	}
	reporter_up = true;

	gen_run_sender(g);

	gen_stop_reporter(g, rep);
	reporter_up = false;
	finish(g);
	ret = EXIT_OK;
	if (g->sink_gone[0]) {
		/* no one to send DONE to: the control channel failed mid-run */
		fprintf(stderr, WHO ": the sink at %s %s: stopped sending %.1f s into the run; no ledger (the sender's side follows)\n",
			g->dst_str, g->sink_gone, g->elapsed);
		ret = EXIT_FAIL;
	} else if (g->ctl >= 0) {
		err = gen_ctl_done(g, &ledger);
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
		gen_stop_reporter(g, rep);
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
