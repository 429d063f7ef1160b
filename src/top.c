// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop top: the sockets (and socketless flows) that drop, live. On a
 * terminal, the full-screen view (tui.c); otherwise, or with --batch,
 * per-interval tables (plain or JSON) and a summary at exit. This file
 * parses options, drives the core, and hands the model to a front end.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "caps.h"
#include "cli.h"
#include "log.h"
#include "model.h"
#include "output.h"
#include "top.h"
#include "tracer.h"
#include "tui.h"
#include "util.h"
#include "view.h"
#include "watch.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: udpdrop top [OPTIONS]\n"
"Live per-socket UDP drop counts, with cause, from the kernel's drop points.\n"
"On a terminal: a full-screen view (F1 or h there lists the keys).\n"
"\n"
"  -b, --batch            plain output each interval (default when stdout is not a tty)\n"
"  -j, --json             one JSON object per interval (implies --batch)\n"
"  -i, --interval SECS    refresh interval (default 1, 0.1 to 3600)\n"
"  -n, --count N          stop after N intervals (default: until Ctrl-C)\n"
"  -p, --pid PID          only sockets held by process PID\n"
"      --port PORT        only drops to or from this local port\n"
"  -N, --netns NS         only this network namespace: ip-netns NAME, nsfs PATH or INODE\n"
"  -a, --all              list quiet sockets too\n"
"  -s, --sort-key COLUMN  sort the full-screen view by COLUMN (default rate;\n"
"                         --sort-key=help lists the columns)\n"
"      --no-color         full-screen view in monochrome (NO_COLOR is honoured too)\n"
"      --map-entries N    size of the in-kernel drop table (default 16384)\n"
"      --attach MODE      auto, tp_btf, raw_tp or tracepoint (default auto)\n"
"      --no-rx-sk         ignore kfree_skb's rx_sk (exercise the pre-6.11 path)\n"
"  -v, --verbose          loader and libbpf details (twice: more)\n"
"  -V, --version          print the version\n"
"  -h, --help             this help\n"
"\n"
"Exit codes: 0 ok, 1 runtime error, 2 bad usage, 3 missing privileges,\n"
"4 kernel feature missing or BPF load failure.\n");
}

static int bad_value(const char *opt, const char *val, const char *want)
{
	return cli__bad_value("top", opt, val, want);
}

enum { OPT_PORT = 256, OPT_MAP_ENTRIES, OPT_ATTACH, OPT_NO_RX_SK, OPT_NO_COLOR };

static void sort_keys(FILE *f)
{
	fprintf(f, "Sort keys (name or title, case does not matter):\n");
	for (int c = 0; c < COL_MAX; c++)
		fprintf(f, "  %-8s %-9s %s%s\n", view_cols[c].name, view_cols[c].title,
			view_cols[c].help, c == COL_DROP_RATE ? " (default)" : "");
}

int top__parse_args(int argc, char **argv, struct top_opts *o)
{
	static const struct option longopts[] = {
		{ "batch", no_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "pid", required_argument, NULL, 'p' },
		{ "port", required_argument, NULL, OPT_PORT },
		{ "netns", required_argument, NULL, 'N' },
		{ "all", no_argument, NULL, 'a' },
		{ "map-entries", required_argument, NULL, OPT_MAP_ENTRIES },
		{ "attach", required_argument, NULL, OPT_ATTACH },
		{ "no-rx-sk", no_argument, NULL, OPT_NO_RX_SK },
		{ "sort-key", required_argument, NULL, 's' },
		{ "no-color", no_argument, NULL, OPT_NO_COLOR },
		{ "no-colour", no_argument, NULL, OPT_NO_COLOR },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int verbose = 0, c;
	uint64_t v;

	o->interval = 1.0;
	o->sort = COL_DROP_RATE;
	optind = 0; /* 0, not 1: glibc then also forgets a half-read "-zb" */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":bji:n:p:N:as:vVh", longopts, NULL)) != -1) {
		switch (c) {
		case 'b': o->batch = true; break;
		case 'j': o->json = o->batch = true; break;
		case 'i':
			if (parse_seconds(optarg, 0.1, 3600, &o->interval))
				return bad_value("--interval", optarg, "seconds from 0.1 to 3600");
			break;
		case 'n':
			if (parse_u64(optarg, 1, UINT32_MAX, &o->count))
				return bad_value("--count", optarg, "a whole number of intervals, at least 1");
			break;
		case 'p':
			if (parse_u64(optarg, 1, INT32_MAX, &v))
				return bad_value("--pid", optarg, "a process id");
			o->model.pid = v;
			break;
		case OPT_PORT:
			if (parse_u64(optarg, 1, 65535, &v))
				return bad_value("--port", optarg, "a port from 1 to 65535");
			o->model.port = o->tracer.filter_port = v;
			break;
		case 'N': o->netns_spec = optarg; break;
		case 'a': o->model.all = true; break;
		case 's': {
			int col = view_col__from_name(optarg);

			if (!strcmp(optarg, "help")) {
				sort_keys(stdout);
				return 1;
			}
			if (col < 0)
				return bad_value("--sort-key", optarg, "a column name; --sort-key=help lists them");
			o->sort = col;
			break;
		}
		case OPT_NO_COLOR: o->no_color = true; break;
		case OPT_MAP_ENTRIES:
			if (cli__map_entries("top", optarg, &o->tracer.map_entries))
				return -EXIT_USAGE;
			break;
		case OPT_ATTACH:
			if (attach_mode__parse(optarg, &o->tracer.mode))
				return bad_value("--attach", optarg, "auto, tp_btf, raw_tp or tracepoint");
			break;
		case OPT_NO_RX_SK: o->tracer.no_rx_sk = true; break;
		case 'v': verbose++; break;
		case 'V':
			printf("udpdrop %s\n", UDPDROP_VERSION);
			return 1;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
		default:
			return cli__bad_option("top", c, argv, longopts);
		}
	}
	if (optind < argc) {
		return cli__bad_arg("top", argv[optind]);
	}
	log__set_level(verbose >= 2 ? LOG_DEBUG : verbose ? LOG_INFO : LOG_WARN);
	return 0;
}

/* Sleep until `deadline` (monotonic ns) or a signal. */
static void sleep_until(uint64_t deadline)
{
	struct timespec ts = { .tv_sec = deadline / 1000000000ull,
			       .tv_nsec = deadline % 1000000000ull };

	while (!stop_signal &&
	       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Each row's worst interval per cause, for the summary's advice. */
static struct htab bursts;
static uint64_t ticks;
/* why the summary came: its JSON "stopped" (NULL: not said) */
static const char *stopped;

static void track(struct model *m)
{
	output__bursts_record(&bursts, m, ++ticks);
}

/* Print one interval or the summary. -EPIPE: the reader has gone. */
static const struct tracer_fill *fill;

static int emit(struct model *m, struct top_opts *o, const char *attach,
		bool final)
{
	struct output_ctx oc = { .attach = attach, .final = final, .bursts = &bursts,
				 .fill = fill, .stopped = stopped };
	struct strbuf sb = {};

	if (o->json)
		output__json(m, &oc, &sb);
	else
		output__plain(m, &oc, &sb);
	if ((sb.len && fwrite(sb.buf, 1, sb.len, stdout) != sb.len) || fflush(stdout)) {
		int err = errno ? -errno : -EIO;

		sb_free(&sb);
		return err;
	}
	sb_free(&sb);
	return 0;
}

static int refresh_or_say(struct watch *w)
{
	int err = watch__refresh(w);

	if (err)
		fprintf(stderr, "udpdrop: reading the drop counts failed: %s\n",
			strerror(-err));
	else
		track(&w->m);
	return err;
}

/* What the full-screen view calls each interval. */
static int tui_refresh(void *arg)
{
	struct watch *w = arg;
	int err = watch__refresh(w);

	if (!err)
		track(&w->m);
	if (w->netns_gone)
		stop_signal = -1; /* the view ends; said after it (do_top) */
	return err;
}

int do_top(int argc, char **argv)
{
	struct top_opts o = {};
	struct watch w = {};
	char missing[128];
	int err, ret = EXIT_FAIL;

	err = top__parse_args(argc, argv, &o);
	if (err)
		return err > 0 ? EXIT_OK : -err;
	/* the full-screen view needs a terminal on both sides */
	bool interactive = !o.batch && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);
	/*
	 * Bad values first (exit 2), then privileges (exit 3): but a netns or
	 * process that only root could see is a privilege problem, not a typo.
	 */
	bool privileged = !caps__check_bpf(missing, sizeof(missing));
	err = cli__resolve_scope("top", o.netns_spec, o.model.pid, privileged,
				 &o.model.netns, &o.tracer.filter_netns);
	if (err == EXIT_PRIV && !privileged) /* else said: a process only root may look at */
		goto no_privilege;
	if (err)
		return err;

	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (output__bursts_init(&bursts))
		return EXIT_FAIL;
	ret = watch__open(&w, &o.tracer, &o.model, "udpdrop");
	if (ret) {
		htab__free(&bursts);
		return ret;
	}
	fill = &w.t.fill;
	ret = EXIT_FAIL;

	struct tracer *t = &w.t;
	struct model *m = &w.m;
	uint32_t ids[4];
	int nids = tracer__prog_ids(t, ids, 4);

	for (int i = 0; i < nids; i++)
		pr_info("program id %u (bpftool prog show id %u)\n", ids[i], ids[i]);
	/* what these privileges leave out: said once, and in JSON */
	caps__survey(&(struct caps_scope){ .ks = &m->ksyms, .owners = true, .locations = true,
		.other_netns = o.tracer.filter_netns != m->nt.self, .netns_spec = o.netns_spec });
	caps__warn("udpdrop");
	if (!interactive)
		fprintf(stderr, "udpdrop: tracing UDP drops via %s (Ctrl-C to stop)\n",
			attach_mode__name(t->mode));

	if (interactive) {
		struct tui_opts to = { .interval = o.interval, .count = o.count,
				       .color = !o.no_color, .sort = o.sort,
				       .attach = attach_mode__name(t->mode) };
		
		sigaction(SIGHUP, &sa, NULL); /* the terminal closed: clean up too */
		err = tui__run(m, &to, tui_refresh, &w, &stop_signal);
		if (err == -ENOTTY) {
			fprintf(stderr, "udpdrop: this terminal (TERM=%s) cannot show the full-screen view: printing batch output\n",
				getenv("TERM") ? getenv("TERM") : "");
		} else if (err) {
			fprintf(stderr, "udpdrop: the full-screen view failed: %s\n", strerror(-err));
			goto out;
		} else {
			if (w.netns_gone)
				cli__say_netns_gone("udpdrop", "stopping");
			/* what the screen showed is gone with it: leave the summary */
			if (refresh_or_say(&w))
				goto out;
			model__sort_by_total(m);
			err = emit(m, &o, attach_mode__name(t->mode), true);
			ret = err && err != -EPIPE ? EXIT_FAIL : EXIT_OK;
			goto out;
		}
	}

	uint64_t step = (uint64_t)(o.interval * 1e9), next = m->start_ns + step;

	for (uint64_t i = 0; !o.count || i < o.count; i++) {
		sleep_until(next);
		if (stop_signal)
			break;
		next += step;
		/* late (a stopped terminal, a loaded host): no burst of catch-up
		 * intervals of a few microseconds each */
		if (next < now_ns())
			next = now_ns() + step;
		if (refresh_or_say(&w))
			goto out;
		if (w.netns_gone)
			break;
		if (o.count && i + 1 == o.count)
			break; /* the last interval is the summary's */
		err = emit(m, &o, attach_mode__name(t->mode), false);
		if (err == -EPIPE)
			goto out_quiet; /* the reader has gone (e.g. `| head`): stop */
		if (err)
			goto out_write;
	}
	if (w.netns_gone)
		cli__say_netns_gone("udpdrop", "stopping");
	stopped = w.netns_gone ? "netns_gone" : stop_signal ? "signal" : "count";
	/* the summary: one last read so nothing between ticks is lost */
	if (refresh_or_say(&w))
		goto out;
	model__sort_by_total(m);
	err = emit(m, &o, attach_mode__name(t->mode), true);
	if (err && err != -EPIPE)
		goto out_write;
out_quiet:
	ret = EXIT_OK;
	goto out;
out_write:
	fprintf(stderr, "udpdrop: write error on standard output: %s\n", strerror(-err));
	ret = EXIT_FAIL;
out:
	watch__close(&w);
	htab__free(&bursts);
	return ret;

no_privilege:
	fprintf(stderr, "udpdrop: permission denied: tracing drops needs %s; run as root (sudo udpdrop top)\n",
		missing);
	return EXIT_PRIV;
}
