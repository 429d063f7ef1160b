// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop record: the drops of a span of time into a trace file
 * (docs/trace-format.md), to be read later, elsewhere: what perf record
 * is to samples: every drop as an EVENT from the BPF ring buffer (with
 * the packet's first bytes when asked), and each interval the exact
 * aggregated counts, the kernel's counters and the context to explain
 * them (META, REASONS, SYMBOLS, IFACES, COUNTS, SOCKETS, MIB, SHED).
 * Events that cannot keep up are shed in the kernel and counted per
 * cause; the counts never are.
 *
 * This file: the options, the signals and the run (the file, BPF, the
 * loop, the last snapshot, the summary). record_snapshot.c writes every
 * record but EVENT; record_events.c takes the events from the ring.
 */
#include <errno.h>
#include <bpf/libbpf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/fsuid.h>
#include "caps.h"
#include "cli.h"
#include "opts.h"
#include "log.h"
#include "model.h"
#include "owner.h"
#include "proc.h"
#include "record_internal.h"
#include "trace.h"
#include "units.h"
#include "tracer.h"
#include "util.h"
#include "watch.h"

#define DEFAULT_OUTPUT "udpdrop.data"

static volatile sig_atomic_t stop_signal;  /* the last stop signal */
static volatile sig_atomic_t nsignals;     /* how many came */
static volatile sig_atomic_t child_ended;  /* SIGCHLD: the COMMAND ended */
static volatile pid_t child_pid;           /* the COMMAND, once it runs */

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	stop_signal = sig;
	nsignals++;
	/*
	 * A kill(1) aimed at udpdrop alone goes on to the command; Ctrl-C at
	 * the terminal reached the whole process group (the command too).
	 */
	if (child_pid > 0 && si && si->si_code == SI_USER)
		kill(child_pid, sig);
}

static void on_child(int sig)
{
	child_ended = 1;
}

/*
 * Time to stop? With a COMMAND, when it ends (a signal went to it too;
 * a second one stops udpdrop anyway); else at the first signal.
 */
static volatile sig_atomic_t linger_signals = -1; /* signals when a last wait began */

bool record_stopping(void)
{
	/* the wait for a closed socket's queue: any new signal ends it */
	if (linger_signals >= 0)
		return nsignals > linger_signals;
	if (child_pid > 0)
		return child_ended || nsignals >= 2;
	return stop_signal != 0;
}

enum {
	REC_OUTPUT = 1, REC_FORCE, REC_DURATION, REC_INTERVAL, REC_NETNS, REC_PORT, REC_PID,
	REC_HEADERS, REC_NO_EVENTS, REC_MAP_ENTRIES, REC_BUFFER_SIZE, REC_RING_SIZE, REC_K8S_LOGS,
	REC_COMPRESSION,
};

static const char *const compression_values[] = { "lz4", "zlib", NULL };

static const struct opt_spec record_specs[] = {
	{ REC_OUTPUT, "output", 'o', OT_PATH, "FILE", .def = DEFAULT_OUTPUT,
	  .flags = OPTS_F_APPLY_DEFAULT, .want = "a file name",
	  .help = "the trace file (default %d; created mode 0600)" },
	{ REC_FORCE, "force", 'f', OT_FLAG, .help = "overwrite FILE if it exists" },
	{ REC_DURATION, "duration", 'd', OT_SECONDS, "SECS", 0.1, 31 * 86400.0,
	  .want = "seconds from %r (31 days)",
	  .help = "stop after SECS (default: until Ctrl-C or SIGTERM, or\nwith a COMMAND, until it exits)" },
	{ REC_INTERVAL, "interval", 'i', OT_SECONDS, "SECS", 0.1, 3600, .def = "1",
	  .flags = OPTS_F_APPLY_DEFAULT, .want = "seconds from %r",
	  .help = "write a snapshot every SECS (default %d, %r)" },
	{ REC_NETNS, "netns", 'N', OT_NETNS, "NS",
	  .help = "only this network namespace: ip-netns NAME, nsfs PATH or INODE" },
	{ REC_PORT, "port", 0, OT_PORT, "PORT", .want = "a port from %r",
	  .help = "only drops to or from this local port" },
	{ REC_PID, "pid", 'p', OT_PID, "PID", .want = "a process id",
	  .help = "only sockets process PID holds (or held); stops\nwhen it exits" },
	{ REC_HEADERS, "headers", 0, OT_COUNT, "BYTES", 0, UD_CAP_MAX, .def = "0",
	  .want = "a number of bytes from %r",
	  .help = "keep each dropped packet's first BYTES from its IP\nheader (%r, default %d), for report --pcap" },
	{ REC_NO_EVENTS, "no-events", 0, OT_FLAG,
	  .help = "counts and snapshots only, no per-drop events" },
	{ REC_MAP_ENTRIES, "map-entries", 0, OT_COUNT, "N", 64, 1u << 24, .def = "16384",
	  .want = "a number from %r",
	  .help = "size of the in-kernel drop table (default %d); drops\nthat find it full keep only their reason" },
	{ REC_BUFFER_SIZE, "buffer-size", 0, OT_SIZE, "SIZE", 4096, 1u << 30, .range = "4K to 1G",
	  .flags = OPTS_F_POW2, .want = "a power of 2 from %r",
	  .help = "each CPU's event ring buffer (default: 16M split\namong the CPUs, at least 256K each; a power of 2\nfrom %r): events that find it full are shed and\ncounted" },
	{ REC_RING_SIZE, "ring-size", 0, OT_SIZE, "SIZE", 4096, 1u << 30, .range = "4K to 1G",
	  .flags = OPTS_F_POW2, .want = "a power of 2 from %r",
	  .help = "the former name of --buffer-size" },
	{ REC_COMPRESSION, "compression", 0, OT_ENUM, "CODEC", .values = compression_values,
	  .def = "lz4", .want = "lz4 or zlib",
	  .help = "how the trace's blocks are compressed: lz4 (default;\nthe writer keeps up with more drops) or zlib\n(files about half the size for about 4 times the\nwriter's CPU; trace format 1.3, which older udpdrop\nreads too)" },
	CLI_K8S_LOGS_SPEC(REC_K8S_LOGS),
	OPTS_VERBOSE("loader and libbpf details (twice: more)"),
	OPTS_VERSION,
	OPTS_HELP,
	{},
};

const struct opts_cmd record_opts_cmd = {
	.prog = "udpdrop", .name = "record", .version = UDPDROP_VERSION,
	.usage = "[OPTIONS] [-- COMMAND [ARGS...]]",
	.about =
"Record UDP drops into a trace file, for a later report (here or elsewhere):\n"
"every drop as an event (time, CPU, socket, cause, kernel reason, location,\n"
"flow, length, optionally the packet's first bytes), and each interval the\n"
"exact per-socket, per-reason counts, the kernel's drop counters and the\n"
"context to explain them (drop-reason table, symbols, interfaces, sockets,\n"
"sysctls). Events the writer cannot keep up with are shed and counted per\n"
"cause; the counts stay exact.\n",
	.epilog =
"-- COMMAND [ARGS...] runs COMMAND (as the user who ran sudo, when run\n"
"through sudo), records the drops of the sockets it and its children hold,\n"
"stops when it exits (then up to 1 s more, for the queues of the sockets\n"
"it closed) and exits with its exit code. Ctrl-C reaches both; a signal\n"
"sent to udpdrop alone is passed on; a second one stops at once. With -p\n"
"or a COMMAND, the process's sockets are looked for every 100 ms (20 ms for\n"
"a COMMAND): a socket that lives less may be missed; events wait until\n"
"their owner is known (up to 32 MiB of them; beyond, they are shed and\n"
"counted).\n"
"\n"
"Exit codes: 0 ok (with a COMMAND: its exit code; 126 or 127 when it cannot\n"
"be run), 1 runtime error, 2 bad usage, 3 missing privileges, 4 kernel\n"
"feature missing or BPF load failure.\n",
	.specs = record_specs,
};

struct record_opts {
	char **command;  /* after --: argv, NULL-terminated; NULL: none */
	const char *output;
	bool force;
	double duration; /* 0: until a signal */
	double interval;
	const char *netns_spec;
	enum trace_codec codec;
	struct model_opts model;
	struct tracer_opts tracer;
};

/* 0, 1 (--help, -V: done) or -EXIT_USAGE. */
static int parse_args(int argc, char **argv, struct record_opts *o)
{
	struct opts_parser p;
	int id;

	o->tracer.events = true;
	o->model.k8s_logs = CLI_K8S_LOGS_DEFAULT;
	/* everything after the first "--" is the command, never an option */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			if (i + 1 == argc)
				return cli__bad_usage("record", "nothing after '--': give the COMMAND to run");
			o->command = argv + i + 1;
			argc = i;
			break;
		}
	opts__begin(&p, &record_opts_cmd, argc, argv);
	while ((id = opts__next(&p)) > 0) {
		switch (id) {
		case REC_OUTPUT: o->output = p.arg; break;
		case REC_FORCE: o->force = true; break;
		case REC_DURATION: o->duration = p.d; break;
		case REC_INTERVAL: o->interval = p.d; break;
		case REC_NETNS: o->netns_spec = p.arg; break;
		case REC_PORT: o->model.port = o->tracer.filter_port = p.u; break;
		case REC_PID: o->model.pid = p.u; break;
		case REC_HEADERS: o->tracer.cap_len = p.u; break;
		case REC_NO_EVENTS: o->tracer.events = false; break;
		case REC_COMPRESSION: /* the table admits only names the parser knows */
			if (trace_codec_parse(p.arg, &o->codec))
				return cli__invalid(&p, NULL);
			break;
		case REC_K8S_LOGS:
			if (cli__k8s_logs("record", p.arg))
				return -EXIT_USAGE;
			o->model.k8s_logs = p.arg;
			break;
		case REC_MAP_ENTRIES: /* in range; then what the machine can give */
			if (cli__map_entries("record", p.arg, &o->tracer.map_entries))
				return -EXIT_USAGE;
			break;
		case REC_BUFFER_SIZE:
		case REC_RING_SIZE:
			/* the kernel wants a whole number of pages (64K pages: 64K at least) */
			if (p.u % (uint64_t)getpagesize())
				return cli__invalid(&p, NULL);
			o->tracer.ring_bytes = p.u;
			break;
		}
	}
	if (id < 0)
		return cli__opts_end(id);
	if (p.optind < argc)
		return cli__bad_arg("record", argv[p.optind]);
	if (o->tracer.cap_len && !o->tracer.events)
		return cli__bad_usage("record", "--headers needs events: drop --no-events");
	if (o->command && o->model.pid)
		return cli__bad_usage("record", "-p and a COMMAND: give one of them");
	if (o->command && o->duration > 0)
		return cli__bad_usage("record", "-d and a COMMAND: the command's exit ends the recording");
	cli__verbosity(p.verbose);
	return 0;
}

static int exists(const char *path)
{
	fprintf(stderr, WHO ": %s exists: give -f to overwrite it, or another name with -o\n",
		path);
	return EXIT_USAGE;
}

/*
 * Create the trace file. Through sudo, as the user behind it (the file
 * system identity only: setfsuid), so that the file is theirs and
 * `udpdrop report` needs no sudo, and so that -o never gives them a file
 * they could not have made (never a chown after the fact: -o
 * /etc/ld.so.preload must not become theirs). Where they may not write,
 * it is created as root, as perf record does.
 */
static int open_output(const char *path, bool force, enum trace_codec codec,
		       const struct proc_user *u, struct trace_writer **tw, char *msg,
		       size_t msglen)
{
	int err;

	if (u->set) {
		uid_t ou = setfsuid(u->uid);
		gid_t og = setfsgid(u->gid);

		/* setfsuid answers with the old id either way: check it took */
		if ((uid_t)setfsuid(-1) == u->uid && (gid_t)setfsgid(-1) == u->gid) {
			err = trace_writer__create(path, force, codec, tw, msg, msglen);
			setfsuid(ou);
			setfsgid(og);
			if (err != -EACCES && err != -EPERM)
				return err;
			pr_info(WHO ": uid %u may not create %s: created as root\n",
				(unsigned)u->uid, path);
		} else {
			setfsuid(ou);
			setfsgid(og);
		}
	}
	return trace_writer__create(path, force, codec, tw, msg, msglen);
}

/*
 * Threads that compress the trace's blocks besides the reader: none below
 * 8 CPUs, else a quarter of the CPUs, at most 4. On the 2-CPU VM a block
 * compressed on the other CPU took that CPU about twice as long as in
 * place: one helper drained the rings 4 % faster for 25 % more CPU, two
 * between 0 and 46 % faster (from run to run). Where a storm can outrun
 * one reader (8 CPUs and more) the helpers' CPUs are there to spend.
 * UDPDROP_PACK_THREADS=N (0 to 8; tests and the benchmark) sets it.
 */
static int pack_threads(void)
{
	const char *env = getenv("UDPDROP_PACK_THREADS");
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (env && *env >= '0' && *env <= '8' && !env[1])
		return *env - '0';
	if (n < 8)
		return 0;
	return n / 4 > 4 ? 4 : (int)(n / 4);
}

/*
 * With -p or a COMMAND, the process's sockets are looked for this often
 * (ns), not only each interval: a socket that lives, drops and closes
 * between two snapshots is still known to be the process's. A COMMAND's
 * tree is small and new: looked at more often (/proc is the only record
 * of who holds a socket; one that lives less than this may be missed).
 */
#define OWNER_SCAN_NS (100 * 1000000ull)
#define OWNER_SCAN_TREE_NS (20 * 1000000ull)
/* How long to wait for a closed socket's queue after its process ended. */
#define CLOSE_LINGER_NS (1000 * 1000000ull)

int do_record(int argc, char **argv)
{
	struct record_opts o = {};
	struct watch w = {};
	struct recorder rc = { .w = &w };
	struct proc_user user = {};
	struct proc_child child = {};
	char missing[128], msg[PATH_MAX + 128];
	bool privileged, running = false;
	uint64_t bytes;
	int err, ret;

	err = parse_args(argc, argv, &o);
	if (err)
		return err > 0 ? EXIT_OK : -err;
	/* bad values first (exit 2), then privileges (exit 3), as top does:
	 * an existing file without -f, a directory, a block device... */
	err = out_file__check(o.output, o.force, msg, sizeof(msg));
	if (err == -EEXIST)
		return exists(o.output);
	if (err) {
		fprintf(stderr, WHO ": %s\n", msg);
		return EXIT_USAGE;
	}
	privileged = !caps__check_bpf(missing, sizeof(missing));
	err = cli__resolve_scope("record", o.netns_spec, o.model.pid, privileged,
				 &o.model.netns, &o.tracer.filter_netns);
	if (err == EXIT_PRIV && !privileged) /* else said: a process only root may look at */
		goto no_privilege;
	if (err)
		return err;
	/* the user behind sudo: the command runs as them, the file is theirs */
	err = proc__sudo_user(&user);
	if (err == -EINVAL && o.command) {
		fprintf(stderr, WHO ": SUDO_UID or SUDO_GID is not a valid id: unset them to run the command as root\n");
		return EXIT_USAGE;
	}
	if (err)
		memset(&user, 0, sizeof(user));

	/* the file before BPF: a path that cannot be written fails at once */
	err = open_output(o.output, o.force, o.codec, &user, &rc.tw, msg, sizeof(msg));
	if (err) {
		proc__user_free(&user);
		if (err == -EEXIST) /* made since the check */
			return exists(o.output);
		fprintf(stderr, WHO ": %s\n", msg);
		return err == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	/* events: blocks compressed by helpers (a storm fills one every few
	 * ms); -v says how many */
	if (o.tracer.events) {
		int n = pack_threads();

		if (n)
			n = trace_writer__set_threads(rc.tw, n);
		if (n > 0)
			pr_info(WHO ": %d thread%s compress%s the trace's blocks (%s)\n", n,
				n == 1 ? "" : "s", n == 1 ? "es" : "", trace_codec_name(o.codec));
		else
			pr_info(WHO ": the reader compresses the trace's blocks itself (%s)\n",
				trace_codec_name(o.codec));
	}
	if (htab__init(&rc.syms, sizeof(uint64_t), 1) ||
	    htab__init(&rc.win_ids, sizeof(uint64_t), 1) ||
	    htab__init(&rc.names, sizeof(uint64_t), sizeof(uint64_t))) {
		fprintf(stderr, WHO ": out of memory\n");
		ret = EXIT_FAIL;
		goto fail;
	}

	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
	struct sigaction sc = { .sa_handler = on_child, .sa_flags = SA_NOCLDSTOP };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigemptyset(&sc.sa_mask);
	sigaction(SIGCHLD, &sc, NULL);

	/*
	 * The command is forked now and held before its exec, so that its
	 * pid is the filter from the start and tracing is on before it runs.
	 */
	if (o.command) {
		err = proc__prepare(&child, o.command, &user);
		if (err) {
			fprintf(stderr, WHO ": cannot start %s: %s\n", o.command[0], strerror(-err));
			ret = EXIT_FAIL;
			goto fail;
		}
		o.model.pid = child.pid;
		o.model.pid_tree = true;
	}
	/*
	 * A FIFO whose reader went away: EPIPE, said, and the command told
	 * it runs on untraced, rather than a silent death by SIGPIPE. Set
	 * after the command's fork: an ignored signal outlives exec.
	 */
	signal(SIGPIPE, SIG_IGN);
	ret = watch__open(&w, &o.tracer, &o.model, WHO);
	if (ret)
		goto fail;
	w.m.win.keep_folded = true; /* each snapshot writes what was folded since */
	ret = EXIT_FAIL;
	/* what these privileges leave out: said once, and in META */
	caps__survey(&(struct caps_scope){ .ks = &w.m.ksyms, .owners = true, .locations = true,
		/* a COMMAND's sockets are in udpdrop's netns (it has no more
		 * privileges to leave it than udpdrop has to follow) */
		.other_netns = !o.command && o.tracer.filter_netns != w.m.nt.self,
		.netns_spec = o.netns_spec });
	caps__warn(WHO);
	owner__init(&rc.own, &w.m);
	rc.scan_every = o.command ? OWNER_SCAN_TREE_NS : OWNER_SCAN_NS;
	rc.hold = o.model.pid && o.tracer.events;
	if (o.tracer.events) {
		rc.shed_seen = calloc(UD_SHED_SLOTS, sizeof(uint64_t));
		rc.shed_now = calloc(UD_SHED_SLOTS, sizeof(uint64_t));
		err = !rc.shed_seen || !rc.shed_now ? -ENOMEM : record_open_events(&rc);
		if (err) {
			fprintf(stderr, WHO ": cannot set up the event rings: %s\n",
				strerror(-err));
			goto fail_open;
		}
	}

	struct model *m = &w.m;
	double start_wall = wall_time();

	err = record_write_meta(rc.tw, m, argc, argv, start_wall, o.tracer.events,
			 o.tracer.cap_len);
	if (!err)
		err = record_write_reasons(rc.tw, m);
	if (!err)
		err = record_write_ifaces(rc.tw, m);
	/* the baseline, so a reader can take deltas over the same span */
	if (!err)
		err = record_snapshot(&rc, m->start_ns);
	if (err)
		goto write_fail;
	fprintf(stderr, WHO ": recording UDP drops via %s to %s (%s)\n",
		attach_mode__name(w.t.mode), o.output,
		o.command ? "until the command exits"
		: o.duration > 0 ? "until the duration ends or Ctrl-C" : "Ctrl-C to stop");
	if (o.command) {
		enum proc_stage stage;

		err = proc__start(&child, &stage);
		if (err) {
			if (stage == PROC_STAGE_EXEC) {
				fprintf(stderr, WHO ": cannot run %s: %s\n", o.command[0], strerror(-err));
				ret = proc__exec_code(-err);
			} else {
				fprintf(stderr, WHO ": cannot start %s%s: %s\n", o.command[0],
					stage == PROC_STAGE_USER ? " as the user behind sudo" : "",
					strerror(-err));
			}
			goto fail_open;
		}
		child_pid = child.pid;
	}

	uint64_t step = (uint64_t)(o.interval * 1e9), next = m->start_ns + step;
	uint64_t end = o.duration > 0 ? m->start_ns + (uint64_t)(o.duration * 1e9) : UINT64_MAX;

	while (!record_stopping()) {
		uint64_t t = next < end ? next : end;

		if (rc.events_on) {
			err = record_poll_events(&rc, t);
			if (err && rc.err)
				goto write_fail;
			if (err) {
				fprintf(stderr, WHO ": reading the drop counts failed: %s\n", strerror(-err));
				goto fail_open;
			}
		} else {
			err = record_sleep_until(&rc, t);
			if (err) {
				fprintf(stderr, WHO ": reading the drop counts failed: %s\n", strerror(-err));
				goto fail_open;
			}
		}
		if (record_stopping() || rc.pid_gone || now_ns() >= end)
			break;
		next += step;
		if (next < now_ns())
			next = now_ns() + step;
		err = watch__refresh(&w);
		if (err) {
			fprintf(stderr, WHO ": reading the drop counts failed: %s\n", strerror(-err));
			goto fail_open;
		}
		err = record_snapshot(&rc, now_ns());
		if (err)
			goto write_fail;
		running = true; /* from here a failure keeps the file, cut short */
		if (w.netns_gone)
			break; /* the last snapshot and END below, as at a normal end */
	}
	if (rc.pid_gone)
		fprintf(stderr, WHO ": process %d exited\n", o.model.pid);
	else if (w.netns_gone)
		cli__say_netns_gone(WHO, "stopping");
	/*
	 * A UDP socket's unread queue is freed after an RCU grace period
	 * once it is closed (SOCK_RCU_FREE), so the last socket_close drops
	 * of a process that just exited come a little later: wait for them,
	 * if it held any socket. (A second signal does not wait.)
	 */
	if (o.model.pid && (child_ended || rc.pid_gone) && nsignals < 2 &&
	    w.m.pid_inodes.n) {
		uint64_t until = now_ns() + CLOSE_LINGER_NS;

		linger_signals = nsignals;
		rc.pid_gone = false;
		rc.lingering = true;
		if (rc.events_on)
			err = record_poll_events(&rc, until);
		else
			err = record_sleep_until(&rc, until);
		if (err && rc.err)
			goto write_fail;
	}
	/*
	 * The last snapshot: detach first, so that the counts, the events
	 * left in the ring and the shed tallies stop moving and agree.
	 */
	tracer__detach(&w.t);
	/*
	 * Detaching does not wait for a program already running on another
	 * CPU: give it the few microseconds it needs to finish its count and
	 * its event, or the last read could miss one of them.
	 */
	usleep(10000);
	if (rc.events_on) {
		err = record_drain_events(&rc);
		if (err)
			goto write_fail;
	}
	w.t.win_all = true; /* the end: every drop window closes */
	err = watch__refresh(&w);
	if (err) {
		fprintf(stderr, WHO ": reading the drop counts failed: %s\n", strerror(-err));
		goto fail_open;
	}
	err = record_snapshot(&rc, now_ns());
	if (err)
		goto write_fail;
	uint64_t dur = now_ns() - m->start_ns;
	int code = EXIT_OK;

	if (child.pid) {
		/* it ended (or a second signal gave up on it: then it is ended
		 * as udpdrop exits, by its death signal, proc__prepare) */
		if (proc__wait(child.pid, nsignals >= 2 && !child_ended, &code) != 1) {
			fprintf(stderr, WHO ": %s (pid %d) still runs: not waiting for it; it gets %s as udpdrop exits\n",
				o.command[0], child.pid, proc__death_signal() == SIGKILL ? "SIGKILL" : "SIGTERM");
			code = 128 + (stop_signal ? stop_signal : SIGINT);
		}
		child_pid = 0;
		child.pid = 0;
	}

	record_close_events(&rc);
	watch__close(&w);
	htab__free(&rc.syms);
	htab__free(&rc.win_ids);
	htab__free(&rc.names);
	/* the size from the writer: a FIFO's or a device's stat has none */
	err = trace_writer__end(rc.tw);
	bytes = trace_writer__offset(rc.tw);
	err = trace_writer__close(rc.tw) ?: err;
	rc.tw = NULL;
	if (err)
		goto write_fail;

	char drops[32], size[32], events[32], shed[32], any[96] = "";

	fmt_count(drops, sizeof(drops), rc.drops);
	fmt_bytes(size, sizeof(size), bytes);
	fmt_count(events, sizeof(events), rc.events);
	fmt_count(shed, sizeof(shed), rc.shed);
	if (rc.shed_any_netns) {
		char n[32];

		fmt_count(n, sizeof(n), rc.shed_any_netns);
		snprintf(any, sizeof(any), ", %s of them socket_close of any netns", n);
	}
	if (o.tracer.events)
		fprintf(stderr, WHO ": %s drop%s, %s event%s (%s shed%s) in %.1f s written to %s (%s)\n",
			drops, rc.drops == 1 ? "" : "s", events, rc.events == 1 ? "" : "s",
			shed, any, dur / 1e9, o.output, size);
	else
		fprintf(stderr, WHO ": %s drop%s in %.1f s written to %s (%s)\n", drops,
			rc.drops == 1 ? "" : "s", dur / 1e9, o.output, size);
	if (rc.others)
		pr_info(WHO ": %llu events of other processes' sockets left out\n",
			(unsigned long long)rc.others);
	free(rc.shed_seen);
	free(rc.shed_now);
	free(rc.held);
	owner__free(&rc.own);
	proc__user_free(&user);
	return code;

write_fail:
	fprintf(stderr, WHO ": cannot write %s: %s\n", o.output, strerror(-err));
fail_open: /* ret is set: EXIT_FAIL, or the command's 126/127 */
	record_close_events(&rc);
	watch__close(&w);
fail:
	/* a command that never ran is killed; one that runs is left alone */
	if (child.pid && !child_pid)
		proc__abort(&child);
	else if (child_pid > 0)
		fprintf(stderr, WHO ": %s (pid %d) is no longer traced; it gets %s as udpdrop exits\n",
			o.command[0], (int)child_pid, proc__death_signal() == SIGKILL ? "SIGKILL" : "SIGTERM");
	free(rc.shed_seen);
	free(rc.shed_now);
	free(rc.held);
	owner__free(&rc.own);
	proc__user_free(&user);
	htab__free(&rc.syms);
	htab__free(&rc.win_ids);
	htab__free(&rc.names);
	if (running) {
		/* what reached the file reads back: kept, and said to be cut */
		if (trace_writer__to_stream(rc.tw))
			fprintf(stderr, WHO ": %s's reader has what was written before the failure (report says it was cut short)\n",
				o.output);
		else
			fprintf(stderr, WHO ": %s keeps what was written before the failure (report says it was cut short)\n",
				o.output);
		trace_writer__abandon(rc.tw);
		return ret;
	}
	/* a failure before the recording ran leaves nothing behind: a file
	 * it created is removed (never one that was there, a device or a
	 * FIFO: a file given with -f is left empty) */
	trace_writer__discard(rc.tw);
	return ret;

no_privilege:
	fprintf(stderr, WHO ": permission denied: tracing drops needs %s; run as root (sudo udpdrop record)\n",
		missing);
	return EXIT_PRIV;
}
