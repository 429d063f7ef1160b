// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop top: the sockets (and socketless flows) that drop, live. On a
 * terminal, the full-screen view (tui.c); otherwise, or with --batch,
 * per-interval tables (plain or JSON) and a summary at exit. This file
 * parses options, drives the core, and hands the model to a front end.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bursts.h"
#include "caps.h"
#include "cli.h"
#include "log.h"
#include "model.h"
#include "opts.h"
#include "proc.h"
#include "top.h"
#include "top_print.h"
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

enum {
	TOP_BATCH = 1, TOP_JSON, TOP_INTERVAL, TOP_COUNT, TOP_PID, TOP_PORT, TOP_NETNS,
	TOP_ALL, TOP_SORT_KEY, TOP_NO_COLOR, TOP_MAP_ENTRIES, TOP_ATTACH, TOP_NO_RX_SK,
	TOP_K8S_LOGS,
};

static const char *const attach_values[] = { "auto", "tp_btf", "raw_tp", "tracepoint", NULL };

static const struct opt_spec top_specs[] = {
	{ TOP_BATCH, "batch", 'b', OT_FLAG,
	  .help = "plain output each interval (default when stdout is not a tty)" },
	{ TOP_JSON, "json", 'j', OT_FLAG, .help = "one JSON object per interval (implies --batch)" },
	{ TOP_INTERVAL, "interval", 'i', OT_SECONDS, "SECS", 0.1, 3600, .def = "1",
	  .flags = OPTS_F_APPLY_DEFAULT, .want = "seconds from %r",
	  .help = "refresh interval (default %d, %r)" },
	{ TOP_COUNT, "count", 'n', OT_COUNT, "N", 1, UINT32_MAX,
	  .want = "a whole number of intervals, at least 1",
	  .help = "stop after N intervals (default: until Ctrl-C)" },
	{ TOP_PID, "pid", 'p', OT_PID, "PID", .want = "a process id",
	  .help = "only sockets held by process PID" },
	{ TOP_PORT, "port", 0, OT_PORT, "PORT", .want = "a port from %r",
	  .help = "only drops to or from this local port" },
	{ TOP_NETNS, "netns", 'N', OT_NETNS, "NS",
	  .help = "only this network namespace: ip-netns NAME, nsfs PATH or INODE" },
	{ TOP_ALL, "all", 'a', OT_FLAG, .help = "list quiet sockets too" },
	{ TOP_SORT_KEY, "sort-key", 's', OT_STRING, "COLUMN", .def = "rate",
	  .want = "a column name; --sort-key=help lists them",
	  .help = "sort the full-screen view by COLUMN (default %d;\n--sort-key=help lists the columns)" },
	{ TOP_NO_COLOR, "no-color", 0, OT_FLAG, .alias_name = "no-colour",
	  .help = "full-screen view in monochrome (NO_COLOR is honoured too)" },
	{ TOP_MAP_ENTRIES, "map-entries", 0, OT_COUNT, "N", 64, 1u << 24, .def = "16384",
	  .want = "a number from %r",
	  .help = "size of the in-kernel drop table (default %d)" },
	{ TOP_ATTACH, "attach", 0, OT_ENUM, "MODE", .values = attach_values, .def = "auto",
	  .want = "auto, tp_btf, raw_tp or tracepoint",
	  .help = "auto, tp_btf, raw_tp or tracepoint (default %d)" },
	CLI_K8S_LOGS_SPEC(TOP_K8S_LOGS),
	{ TOP_NO_RX_SK, "no-rx-sk", 0, OT_FLAG,
	  .help = "ignore kfree_skb's rx_sk (exercise the pre-6.11 path)" },
	OPTS_VERBOSE("loader and libbpf details (twice: more)"),
	OPTS_VERSION,
	OPTS_HELP,
	{},
};

const struct opts_cmd top_opts_cmd = {
	.prog = "udpdrop", .name = "top", .version = UDPDROP_VERSION, .usage = "[OPTIONS]",
	.about =
"Live per-socket UDP drop counts, with cause, from the kernel's drop points.\n"
"On a terminal: a full-screen view (F1 or h there lists the keys).\n",
	.epilog =
"Exit codes: 0 ok, 1 runtime error, 2 bad usage, 3 missing privileges,\n"
"4 kernel feature missing or BPF load failure.\n",
	.specs = top_specs,
};

static void sort_keys(FILE *f)
{
	fprintf(f, "Sort keys (name or title, case does not matter):\n");
	for (int c = 0; c < COL_MAX; c++)
		fprintf(f, "  %-8s %-9s %s%s\n", view_cols[c].name, view_cols[c].title,
			view_cols[c].help, c == COL_DROP_RATE ? " (default)" : "");
}

void top__opts_init(struct top_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->interval = 1; /* as the option table's default */
	o->sort = COL_DROP_RATE;
	o->model.k8s_logs = CLI_K8S_LOGS_DEFAULT;
}

int top__parse_args(int argc, char **argv, struct top_opts *o)
{
	struct opts_parser p;
	int id, col;

	opts__begin(&p, &top_opts_cmd, argc, argv);
	while ((id = opts__next(&p)) > 0) {
		switch (id) {
		case TOP_BATCH: o->batch = true; break;
		case TOP_JSON: o->json = o->batch = true; break;
		case TOP_INTERVAL: o->interval = p.d; break;
		case TOP_COUNT: o->count = p.u; break;
		case TOP_PID: o->model.pid = p.u; break;
		case TOP_PORT: o->model.port = o->tracer.filter_port = p.u; break;
		case TOP_NETNS: o->netns_spec = p.arg; break;
		case TOP_ALL: o->model.all = true; break;
		case TOP_SORT_KEY:
			if (!strcmp(p.arg, "help")) {
				sort_keys(stdout);
				return 1;
			}
			col = view_col__from_name(p.arg);
			if (col < 0)
				return cli__invalid(&p, NULL);
			o->sort = col;
			break;
		case TOP_NO_COLOR: o->no_color = true; break;
		case TOP_MAP_ENTRIES: /* in range; then what the machine can give */
			if (cli__map_entries("top", p.arg, &o->tracer.map_entries))
				return -EXIT_USAGE;
			break;
		case TOP_ATTACH: attach_mode__parse(p.arg, &o->tracer.mode); break;
		case TOP_NO_RX_SK: o->tracer.no_rx_sk = true; break;
		case TOP_K8S_LOGS:
			if (cli__k8s_logs("top", p.arg))
				return -EXIT_USAGE;
			o->model.k8s_logs = p.arg;
			break;
		}
	}
	if (id < 0)
		return cli__opts_end(id);
	if (p.optind < argc)
		return cli__bad_arg("top", argv[p.optind]);
	cli__verbosity(p.verbose);
	return 0;
}

/* Sleep until `deadline` (monotonic ns) or a signal. */
static void sleep_until(uint64_t deadline)
{
	sleep_until_ns(deadline, &stop_signal);
}

/* Each row's worst interval per cause, for the summary's advice. */
static struct htab bursts;
static uint64_t ticks;
/* why the summary came: its JSON "stopped" (NULL: not said) */
static const char *stopped;

static void track(struct model *m)
{
	bursts__record(&bursts, m, ++ticks);
}

/* Print one interval or the summary. -EPIPE: the reader has gone. */
static const struct tracer_fill *fill;

static int emit(struct model *m, struct top_opts *o, const char *attach,
		bool final)
{
	struct top_print_ctx oc = { .attach = attach, .final = final, .bursts = &bursts,
				    .fill = fill, .stopped = stopped };
	struct strbuf sb = {};

	if (o->json)
		top_print__json(m, &oc, &sb);
	else
		top_print__plain(m, &oc, &sb);
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

/*
 * -p: the process has exited (as record -p, top then ends). Its sockets'
 * unread queues are freed an RCU grace period after the close
 * (SOCK_RCU_FREE), so the end waits PID_LINGER_NS for those socket_close
 * drops first, when it held any socket.
 */
#define PID_LINGER_NS (1000 * 1000000ull)
static bool pid_exited;

static bool pid_gone(struct model *m)
{
	if (m->opts.pid && !pid_exited && proc__check(m->opts.pid) == -ESRCH)
		pid_exited = true;
	return pid_exited;
}

static void pid_linger(struct model *m)
{
	fprintf(stderr, "udpdrop: process %d exited: stopping\n", m->opts.pid);
	if (m->pid_inodes.n)
		sleep_until(now_ns() + PID_LINGER_NS);
}

/* What the full-screen view calls each interval. */
static int tui_refresh(void *arg)
{
	struct watch *w = arg;
	int err = watch__refresh(w);

	if (!err)
		track(&w->m);
	if (w->netns_gone || pid_gone(&w->m))
		stop_signal = -1; /* the view ends; said after it (do_top) */
	return err;
}

int do_top(int argc, char **argv)
{
	struct top_opts o;
	int err;

	top__opts_init(&o);
	err = top__parse_args(argc, argv, &o);
	if (err)
		return err > 0 ? EXIT_OK : -err;
	return top__run(&o);
}

int top__run(struct top_opts *opts)
{
	struct top_opts o = *opts;
	struct watch w = {};
	char missing[128];
	int err, ret = EXIT_FAIL;

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

	if (bursts__init(&bursts))
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
			else if (pid_exited)
				pid_linger(m);
			stopped = w.netns_gone ? "netns_gone" : pid_exited ? "pid_gone" : NULL;
			/* what the screen showed is gone with it: leave the summary */
			w.t.win_all = true; /* the end: every drop window closes */
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
		if (w.netns_gone || pid_gone(m))
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
	else if (pid_exited)
		pid_linger(m);
	stopped = w.netns_gone ? "netns_gone" : pid_exited ? "pid_gone"
		: stop_signal ? "signal" : "count";
	/* the summary: one last read so nothing between ticks is lost, and
	 * every drop window closes */
	w.t.win_all = true;
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
