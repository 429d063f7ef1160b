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
 */
#include <errno.h>
#include <bpf/libbpf.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include "caps.h"
#include "cli.h"
#include "opts.h"
#include "log.h"
#include "model.h"
#include "netcfg.h"
#include "owner.h"
#include "proc.h"
#include "sockid.h"
#include "trace.h"
#include "units.h"
#include "tracer.h"
#include "util.h"
#include "watch.h"

#define WHO "udpdrop record"
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

static bool stopping(void)
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
	REC_HEADERS, REC_NO_EVENTS, REC_MAP_ENTRIES, REC_RING_SIZE,
};

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
	{ REC_RING_SIZE, "ring-size", 0, OT_SIZE, "SIZE", 4096, 1u << 30, .range = "4K to 1G",
	  .def = "16M", .flags = OPTS_F_POW2, .want = "a power of 2 from %r",
	  .help = "the kernel's event ring buffer (default %d; a power\nof 2 from %r): events that find it full are\nshed and counted" },
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
	struct model_opts model;
	struct tracer_opts tracer;
};

/* 0, 1 (--help, -V: done) or -EXIT_USAGE. */
static int parse_args(int argc, char **argv, struct record_opts *o)
{
	struct opts_parser p;
	int id;

	o->tracer.events = true;
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
		case REC_MAP_ENTRIES: /* in range; then what the machine can give */
			if (cli__map_entries("record", p.arg, &o->tracer.map_entries))
				return -EXIT_USAGE;
			break;
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

/* ---- META ------------------------------------------------------------- */

/* /proc/stat's btime (boot, wall-clock seconds), 0 if unknown. */
static uint64_t proc_btime(void)
{
	char line[256];
	unsigned long long v = 0;
	FILE *f = fopen("/proc/stat", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

struct kvlist {
	struct trace_kv v[48];
	char *own[48];
	uint32_t n;
};

static void kv_add(struct kvlist *l, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void kv_add(struct kvlist *l, const char *key, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	if (l->n >= ARRAY_SIZE(l->v))
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	l->own[l->n] = s;
	l->v[l->n].key = key;
	l->v[l->n].value = s;
	l->n++;
}

static void kv_free(struct kvlist *l)
{
	for (uint32_t i = 0; i < l->n; i++)
		free(l->own[i]);
	l->n = 0;
}

/* The netns whose sysctls and interfaces are recorded: -N's, else ours. */
static uint32_t context_netns(const struct model *m)
{
	return m->opts.netns ? m->opts.netns : m->nt.self;
}

static int write_meta(struct trace_writer *tw, struct model *m, int argc,
		      char **argv, double start_wall, bool m_events,
		      uint32_t cap_len)
{
	struct kvlist l = {};
	struct utsname un;
	char host[256] = "";
	struct strbuf cmd = {}, causes = {}, fallback = {};
	struct netcfg_sysctls sv;
	uint32_t ns = context_netns(m);
	double boot = wall_time() - now_ns() / 1e9;
	int err;

	gethostname(host, sizeof(host) - 1);
	kv_add(&l, TRACE_META_HOST, "%s", host);
	kv_add(&l, TRACE_META_KERNEL, "%s", uname(&un) ? "" : un.release);
	kv_add(&l, TRACE_META_BOOT_TIME, "%.9f", boot);
	kv_add(&l, "proc_stat_btime", "%llu", (unsigned long long)proc_btime());
	kv_add(&l, TRACE_META_START, "%.9f", start_wall);
	sb_printf(&cmd, "udpdrop");
	for (int i = 0; i < argc; i++)
		sb_printf(&cmd, " %s", argv[i]);
	kv_add(&l, TRACE_META_CMDLINE, "%s", cmd.buf);
	kv_add(&l, TRACE_META_VERSION, "%s", UDPDROP_VERSION);
	for (int c = 0; c < CAUSE_MAX; c++)
		sb_printf(&causes, "%s%s", c ? "," : "", cause__name(c));
	kv_add(&l, TRACE_META_CAUSES, "%s", causes.buf);
	kv_add(&l, TRACE_META_CAUSES_FROM, "%s", m->sites ? "location" : "drop_reason");
	kv_add(&l, "netns", "%u", m->opts.netns);
	kv_add(&l, "port", "%u", m->opts.port);
	/* -p or the COMMAND's pid (with its descendants: pid_tree 1) */
	kv_add(&l, "pid", "%d", m->opts.pid);
	kv_add(&l, "pid_tree", "%d", m->opts.pid_tree);
	if (m->opts.pid)
		kv_add(&l, "shed_scope", "%s", "shed events are counted before the process filter: any process's");
	else if (m->opts.netns)
		kv_add(&l, "shed_scope", "%s", "socket_close shed events are counted before the netns filter: any netns's");
	kv_add(&l, "events", "%s", m_events ? "recorded" : "not recorded (--no-events)");
	kv_add(&l, "headers", "%u", cap_len);
	/* "part:needs,...": what this run's privileges left out (caps.h) */
	char unavailable[256];

	caps__list(unavailable, sizeof(unavailable));
	kv_add(&l, "unavailable", "%s", unavailable);

	/* the sysctls of the recorded netns; the ones a netns does not have
	 * of its own (host-wide ones) from udpdrop's netns, and said so */
	netcfg__sysctls(&m->nt, ns, &sv);
	for (size_t i = 0; i < NETCFG_NSYSCTLS; i++)
		if (sv.from_self[i])
			sb_printf(&fallback, "%s%s", fallback.len ? "," : "", netcfg__sysctl_names[i]);
	for (size_t i = 0; i < NETCFG_NSYSCTLS; i++)
		if (sv.ok[i])
			kv_add(&l, netcfg__sysctl_names[i], "%s", sv.v[i]);
	kv_add(&l, "sysctl_netns", "%u", ns);
	if (fallback.len)
		kv_add(&l, "sysctl_from_udpdrop_netns", "%s", fallback.buf);
	/* each one's scope as tested (netcfg.h), and how to reach the netns,
	 * so that report's commands work where they apply, as top's do */
	struct strbuf hostwide = {}, own = {}, settable = {};

	for (int i = 0; i < sv.where.n; i++) {
		const struct advice_sysctl_scope *sc = &sv.where.s[i];
		struct strbuf *b = sc->scope == ADVICE_SCOPE_HOST ? &hostwide
				   : sc->scope == ADVICE_SCOPE_NETNS ? &own : NULL;

		if (b)
			sb_printf(b, "%s%s", b->len ? "," : "", sc->name);
		if (b && sc->settable)
			sb_printf(&settable, "%s%s", settable.len ? "," : "", sc->name);
	}
	if (hostwide.len)
		kv_add(&l, "sysctl_host_wide", "%s", hostwide.buf);
	if (own.len)
		kv_add(&l, "sysctl_per_netns", "%s", own.buf);
	if (hostwide.len || own.len)
		kv_add(&l, "sysctl_settable", "%s", settable.len ? settable.buf : "");
	if (sv.where.name[0])
		kv_add(&l, "sysctl_netns_name", "%s", sv.where.name);
	sb_free(&hostwide);
	sb_free(&own);
	sb_free(&settable);

	struct trace_meta meta = { .n = l.n, .v = l.v };

	err = trace_writer__meta(tw, &meta);
	kv_free(&l);
	sb_free(&cmd);
	sb_free(&causes);
	sb_free(&fallback);
	return err;
}

/* ---- REASONS, IFACES --------------------------------------------------- */

static int write_reasons(struct trace_writer *tw, const struct model *m)
{
	struct trace_reason *v = calloc(m->reasons.n + 1, sizeof(*v));
	struct trace_reasons r = { .n = m->reasons.n, .v = v };
	int err;

	if (!v)
		return -ENOMEM;
	for (int i = 0; i < m->reasons.n; i++) {
		v[i].value = m->reasons.v[i].value;
		v[i].name = m->reasons.v[i].name;
	}
	err = trace_writer__reasons(tw, &r);
	free(v);
	return err;
}

static int write_ifaces(struct trace_writer *tw, struct model *m)
{
	struct netcfg_ifaces *il = calloc(1, sizeof(*il));
	int err;

	if (!il)
		return -ENOMEM;
	err = netcfg__ifaces(&m->nt, context_netns(m), il);
	if (err)
		pr_warn(WHO ": cannot list the interfaces of netns %u: %s\n",
			il->netns, strerror(-err));
	struct trace_ifaces ti = { .n = il->n, .v = il->v };

	err = trace_writer__ifaces(tw, &ti);
	free(il);
	return err;
}

/* ---- snapshots: SYMBOLS, COUNTS, MIB, SOCKETS ------------------------- */

struct recorder {
	struct trace_writer *tw;
	struct watch *w;
	struct htab syms;      /* location -> u8: already in a SYMBOLS record */
	struct htab names;     /* NAME_NETNS | inode, or a cookie -> char[64]: as last in META */
	uint64_t drops;        /* datagrams in the last COUNTS */
	uint64_t missed;       /* the kernel's skipped runs, as last in META */
	/* events */
	struct ring_buffer *rb;
	uint64_t events;       /* EVENT records written */
	uint64_t deadline;     /* now_ns() at which polling yields to a snapshot */
	int err;               /* the first write error met in the callback */
	uint64_t *shed_seen;   /* UD_SHED_SLOTS: cumulative, as last written */
	uint64_t *shed_now;
	uint64_t shed;         /* events shed, all causes */
	/*
	 * -N: of those, closing queues' (UD_KEY_CLOSE): the kernel knows no
	 * netns for them, so it sheds them before the netns filter and they
	 * may be any netns's (the events that fit are filtered here).
	 */
	uint64_t shed_any_netns;
	uint64_t seen;         /* events taken from the ring */
	/*
	 * -p / COMMAND: whose drops are kept (owner.c). An event's socket may
	 * be newer than what udpdrop knows of the process, so events wait
	 * here (each after a u64 size, 8-aligned) until the owner is known.
	 */
	struct owner own;
	bool hold;
	uint8_t *held;
	size_t held_len, held_cap;
	uint64_t held_shed[CAUSE_MAX]; /* events that found it full */
	uint64_t others;       /* events of sockets not the process's: left out */
	bool undescribed;      /* a held event's socket is not in the socket table yet */
	bool pid_gone;         /* -p: the process exited */
	uint64_t scan_every;   /* ns between looks at the process's sockets */
	bool lingering;        /* the process ended: the last wait (CLOSE_LINGER_NS) */
	struct htab win_ids;   /* -p: socket identities COUNTS kept: their windows go too */
};

/* Most bytes of events held at once (then they are shed, and counted). */
#define HELD_MAX (32u << 20)

/* The drop locations not named yet, before the COUNTS that uses them. */
static int write_symbols(struct recorder *rc)
{
	struct trace_symbol *v = NULL;
	char (*names)[128] = NULL;
	uint32_t n = 0, cap = 0;
	size_t it = 0;
	const void *key;
	void *val;
	int err = 0;

	while (htab__next(&rc->w->drops, &it, &key, &val)) {
		const struct ud_key *k = key;
		int created = 0;

		if (!k->location || !htab__upsert(&rc->syms, &k->location, &created)) {
			if (k->location) {
				err = -ENOMEM;
				goto out;
			}
			continue;
		}
		if (!created)
			continue;
		if (n == cap) {
			uint32_t ncap = cap ? 2 * cap : 16;
			void *nv = realloc(v, ncap * sizeof(*v));
			void *nn = nv ? realloc(names, ncap * sizeof(*names)) : NULL;

			if (nv)
				v = nv;
			if (!nv || !nn) {
				err = -ENOMEM;
				goto out;
			}
			names = nn;
			cap = ncap;
		}
		ksyms__format(&rc->w->m.ksyms, k->location, names[n], sizeof(names[n]));
		if (!strncmp(names[n], "0x", 2))
			continue; /* unknown or hidden: nothing to say */
		v[n].addr = k->location;
		n++;
	}
	for (uint32_t i = 0; i < n; i++)
		v[i].name = names[i];
	if (n) {
		struct trace_symbols s = { .n = n, .v = v };

		err = trace_writer__symbols(rc->tw, &s);
	}
out:
	free(v);
	free(names);
	return err;
}

/*
 * A socketless bucket's share that the live model gave to a socket (its
 * flow matched it then): written as that socket's, flagged, so the report
 * shows each drop where top showed it. A share matched to no socket stays
 * a flow; cookie 0 keeps the key as it was.
 */
static void flow_part_key(const struct ud_key *k, const struct flow_part *p,
			  struct ud_key *out)
{
	*out = *k;
	if (!p->cookie)
		return;
	out->flags |= UD_KEY_SOCK | UD_KEY_FLOW_MATCHED;
	if (p->cookie & UD_RX_INODE) {
		/* a socket known by its inode (it had no cookie yet) */
		out->cookie = (uint32_t)p->cookie;
		out->flags |= UD_KEY_INODE;
	} else {
		out->cookie = p->cookie;
	}
	out->netns = p->netns;
}

/* -N: a closing queue's share goes in only if it was a socket's there. */
static bool flow_part_in_scope(const struct recorder *rc, const struct ud_key *k,
			       const struct flow_part *p)
{
	uint32_t ns = rc->w->m.opts.netns;

	return !ns || !(k->flags & UD_KEY_CLOSE) || (p->cookie && p->netns == ns);
}

static int write_counts(struct recorder *rc, uint64_t t)
{
	struct htab *d = &rc->w->drops;
	size_t cap = d->n + UD_OVERFLOW_SLOTS;
	struct trace_count *v = calloc(cap, sizeof(*v));
	struct trace_counts c = { .time_ns = t, .v = v };
	size_t it = 0;
	const void *key;
	void *val;
	uint64_t sum = 0;
	int err;

	if (!v)
		return -ENOMEM;
	while (htab__next(d, &it, &key, &val)) {
		const struct ud_key *k = key;
		struct flow_part parts[FLOW_SEGS];
		int np = 0;

		if (owner__judge(&rc->own, k, true) != OWNER_YES)
			continue;
		/*
		 * A drop the kernel named no socket for (a closing socket's
		 * purged queue, which has no netns there either; a full
		 * receive queue's from 5.17 to 6.9, whose
		 * udp_fail_queue_rcv_skb comes after the free; a datagram a
		 * kernel tunnel's socket refused, say an unknown VXLAN VNI; a
		 * fragment whose reassembly failed): wherever the live model
		 * matched its flow to a socket, that share is written as the
		 * socket's, so the report shows each drop where top did. The
		 * model holds the one rule (add_flow); the report matches
		 * nothing itself.
		 */
		if (!(k->flags & UD_KEY_SOCK))
			np = model__flow_parts(&rc->w->m, k, val, parts, FLOW_SEGS);
		if (np) {
			/* a flow may split in up to FLOW_SEGS: room for them */
			struct trace_count *nv;

			cap += np - 1;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			c.v = v = nv;
			for (int i = 0; i < np; i++) {
				if (!flow_part_in_scope(rc, k, &parts[i]))
					continue;
				flow_part_key(k, &parts[i], &v[c.n].key);
				v[c.n].val = parts[i].val;
				sum += v[c.n].val.datagrams;
				c.n++;
			}
			continue;
		}
		memcpy(&v[c.n].key, key, sizeof(struct ud_key));
		memcpy(&v[c.n].val, val, sizeof(struct ud_val));
		sum += v[c.n].val.datagrams;
		c.n++;
		/* -p: a socket kept here has its drop windows kept too */
		uint64_t id = sockid__of_key(k);

		if (id && rc->w->m.opts.pid &&
		    (!htab__upsert(&rc->win_ids, &id, NULL) ||
		     !htab__upsert(&rc->win_ids,
				   &(uint64_t){ sockid__row(&rc->w->m.inode2cookie, id) }, NULL))) {
			free(v);
			return -ENOMEM;
		}
	}
	/*
	 * Drops that found the drop table full keep only their reason: one
	 * entry each, so the file's totals stay exact (no process owns them).
	 */
	for (uint32_t r = 0; r < UD_OVERFLOW_SLOTS && !rc->w->m.opts.pid; r++) {
		if (!rc->w->overflow[r].skbs)
			continue;
		v[c.n].key.reason = r;
		v[c.n].key.flags = UD_KEY_OVERFLOW;
		v[c.n].val = rc->w->overflow[r];
		sum += v[c.n].val.datagrams;
		c.n++;
	}
	err = write_symbols(rc);
	if (!err)
		err = trace_writer__counts(rc->tw, &c);
	if (!err)
		rc->drops = sum;
	free(v);
	return err;
}

/*
 * The drop windows the model folded since the last snapshot (each whole:
 * every CPU's part in): report folds them again into the same figures top
 * and doctor show (windows.h). -p: only the process's sockets'.
 */
static int write_windows(struct recorder *rc, uint64_t t)
{
	struct windows *w = &rc->w->m.win;
	struct trace_windows ws = { .time_ns = t };
	struct trace_window *v;
	int err = 0;

	if (!w->nfolded)
		return 0;
	v = calloc(w->nfolded, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < w->nfolded; i++) {
		const struct win_folded *f = &w->folded[i];

		if (rc->w->m.opts.pid && !htab__find(&rc->win_ids, &f->id))
			continue;
		v[ws.n++] = (struct trace_window){ f->id, f->cause, f->win, f->datagrams };
	}
	ws.v = v;
	if (ws.n)
		err = trace_writer__windows(rc->tw, &ws);
	if (!err)
		w->nfolded = 0;
	free(v);
	return err;
}

static int write_mibs(struct recorder *rc, uint64_t t)
{
	struct model *m = &rc->w->m;
	struct trace_mib_entry v[MIB_MAX];

	for (int i = 0; i < m->ncounters; i++) {
		const struct netns_counters *nc = &m->counters[i];
		struct trace_mib tm = { .time_ns = t, .netns = nc->netns, .v = v };
		int err;

		if (!nc->in_view || !nc->have_base)
			continue;
		for (int id = 0; id < MIB_MAX; id++) {
			if (!nc->cur.present[id])
				continue;
			v[tm.n].name = mib__name(id);
			v[tm.n].value = nc->cur.v[id];
			tm.n++;
		}
		err = trace_writer__mib(rc->tw, &tm);
		if (err)
			return err;
	}
	return 0;
}

static int write_sockets(struct recorder *rc, uint64_t t)
{
	struct model *m = &rc->w->m;
	struct trace_socket *v = calloc(m->rows.n + 1, sizeof(*v));
	struct trace_sockets s = { .time_ns = t, .v = v };
	size_t it = 0;
	const void *key;
	void *val;
	int err;

	if (!v)
		return -ENOMEM;
	while (htab__next(&m->rows, &it, &key, &val)) {
		const struct row *r = val;
		const struct sock_info *si = &r->sock;
		struct trace_socket *ts = &v[s.n];

		if (r->key.kind != ROW_SOCKET || !r->have_sock ||
		    (m->opts.pid && !r->owned_by_pid))
			continue;
		ts->cookie = si->cookie ? si->cookie : r->key.cookie;
		ts->netns = si->netns ? si->netns : r->key.netns;
		ts->inode = si->inode;
		ts->pid = si->npids ? (uint32_t)si->pids[0] : 0;
		ts->family = si->family;
		ts->proto = si->proto;
		memcpy(ts->laddr, si->saddr, 16);
		memcpy(ts->raddr, si->daddr, 16);
		ts->lport = si->sport;
		ts->rport = si->dport;
		memcpy(ts->comm, si->comm, sizeof(ts->comm));
		ts->comm[sizeof(ts->comm) - 1] = 0;
		if (si->have_mem) {
			ts->rcvbuf = si->rcvbuf;
			ts->queued = si->rmem;
		}
		/* the socket's own deliveries: the advice judges "not reading"
		 * and the pacing rate by them, in report as in top */
		ts->delivered = r->rx;
		s.n++;
	}
	s.have_rx = m->have_rx;
	err = trace_writer__sockets(rc->tw, &s);
	free(v);
	return err;
}

/*
 * The names top shows, for the report to show the same (META, written
 * again whenever one is new or changed): "netns_name.INODE" (the `ip
 * netns` name of a namespace in view) and "kernel_owner.COOKIE" (the
 * kernel device that owns a socket no process holds, kowner.h). At most
 * NAMES_MAX keys per trace, far below TRACE_META_MAX.
 */
#define NAME_NETNS (1ull << 63)
#define NAMES_MAX 2048u

static void name_add(struct recorder *rc, struct trace_kv *v, char (*keys)[40],
		     char (*vals)[KOWNER_LABEL_LEN], uint32_t *n, uint32_t max,
		     uint64_t id, const char *value)
{
	int created;
	char *last;

	if (*n >= max || (rc->names.n >= NAMES_MAX && !htab__find(&rc->names, &id)))
		return;
	last = htab__upsert(&rc->names, &id, &created);
	if (!last || (!created && !strcmp(last, value)))
		return;
	snprintf(last, KOWNER_LABEL_LEN, "%s", value);
	if (id & NAME_NETNS)
		snprintf(keys[*n], sizeof(keys[*n]), "netns_name.%u", (uint32_t)id);
	else
		snprintf(keys[*n], sizeof(keys[*n]), "kernel_owner.%llu", (unsigned long long)id);
	snprintf(vals[*n], sizeof(vals[*n]), "%s", value);
	v[*n].key = keys[*n];
	v[*n].value = vals[*n];
	(*n)++;
}

static int write_names(struct recorder *rc)
{
	struct model *m = &rc->w->m;
	uint32_t max = m->rows.n + m->ncounters + 1, n = 0;
	struct trace_kv *v = calloc(max, sizeof(*v));
	char (*keys)[40] = calloc(max, sizeof(*keys));
	char (*vals)[KOWNER_LABEL_LEN] = calloc(max, sizeof(*vals));
	char nsbuf[64];
	size_t it = 0;
	const void *key;
	void *val;
	int err = 0;

	if (!v || !keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	while (htab__next(&m->rows, &it, &key, &val)) {
		const struct row *r = val;
		uint32_t ns = r->key.kind == ROW_SOCKET && r->have_sock && r->sock.netns
				      ? r->sock.netns : r->key.netns;

		/* -p: the process's sockets only, as SOCKETS */
		if (m->opts.pid && (r->key.kind != ROW_SOCKET || !r->owned_by_pid))
			continue;
		if (ns && model__netns_named(m, ns))
			name_add(rc, v, keys, vals, &n, max, NAME_NETNS | ns,
				 model__netns_label(m, ns, nsbuf, sizeof(nsbuf)));
		/* the cookie write_sockets gives it */
		if (r->key.kind == ROW_SOCKET && r->have_sock && !r->sock.npids && r->sock.kowner[0])
			name_add(rc, v, keys, vals, &n, max,
				 (r->sock.cookie ? r->sock.cookie : r->key.cookie) & ~NAME_NETNS,
				 r->sock.kowner);
	}
	for (int i = 0; i < m->ncounters; i++) {
		uint32_t ns = m->counters[i].netns;

		if (m->counters[i].in_view && ns && model__netns_named(m, ns))
			name_add(rc, v, keys, vals, &n, max, NAME_NETNS | ns,
				 model__netns_label(m, ns, nsbuf, sizeof(nsbuf)));
	}
	if (n) {
		struct trace_meta meta = { .n = n, .v = v };

		err = trace_writer__meta(rc->tw, &meta);
	}
out:
	free(v);
	free(keys);
	free(vals);
	return err;
}

/*
 * META "missed": the runs of the programs the kernel skipped (a drop
 * inside a drop on one CPU; recursion_misses, as top's "missed"), since
 * the attach, written again whenever it grows: their drops are in no
 * count, so report says so as top does.
 */
static int write_missed(struct recorder *rc)
{
	uint64_t missed = rc->w->m.missed;
	char val[24];
	struct trace_kv kv = { .key = "missed", .value = val };

	if (missed == rc->missed)
		return 0;
	rc->missed = missed;
	snprintf(val, sizeof(val), "%llu", (unsigned long long)missed);
	return trace_writer__meta(rc->tw, &(struct trace_meta){ .n = 1, .v = &kv });
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
static int open_output(const char *path, bool force, const struct proc_user *u,
		       struct trace_writer **tw, char *msg, size_t msglen)
{
	int err;

	if (u->set) {
		uid_t ou = setfsuid(u->uid);
		gid_t og = setfsgid(u->gid);

		/* setfsuid answers with the old id either way: check it took */
		if ((uid_t)setfsuid(-1) == u->uid && (gid_t)setfsgid(-1) == u->gid) {
			err = trace_writer__create(path, force, tw, msg, msglen);
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
	return trace_writer__create(path, force, tw, msg, msglen);
}

/* ---- events ------------------------------------------------------------ */

/*
 * ring_buffer__poll stops on a callback error: this one means "time to
 * look at the clock" (a snapshot, a stop, the owner's sockets), not a
 * failure (the event was taken first).
 */
#define YIELD (-ECANCELED)
/*
 * The programs wake us only when a quarter of the ring is waiting (a
 * wake-up per event would cost more than the event), so look at the
 * ring on this timer too: an event waits at most this long in the ring.
 */
#define POLL_MS 20
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

/* One event from the ring into an EVENT record. */
static int write_event(struct recorder *rc, const struct ud_event *e, size_t size)
{
	struct trace_event te;
	size_t cap = size - sizeof(*e);
	int err;

	if (cap > e->cap_len)
		cap = e->cap_len;
	if (cap > TRACE_CAP_MAX)
		cap = TRACE_CAP_MAX;
	te.time_ns = e->time_ns;
	te.cpu = e->cpu;
	te.netns = e->netns;
	te.cookie = e->cookie;
	te.cause = model__cause(&rc->w->m, e->reason, e->flags);
	te.reason = e->reason;
	te.location = e->location;
	te.flags = e->flags;
	te.family = e->family;
	te.proto = e->proto;
	memcpy(te.saddr, e->saddr, 16);
	memcpy(te.daddr, e->daddr, 16);
	te.sport = e->sport;
	te.dport = e->dport;
	te.len = e->len;
	te.datagrams = e->datagrams;
	te.caplen = cap;
	memcpy(te.cap, e->cap, cap);
	err = trace_writer__event(rc->tw, &te);
	if (err) {
		rc->err = err;
		return err;
	}
	rc->events++;
	return 0;
}

/*
 * The drop key an event was counted under: the fields are the same, the
 * flow too for a drop with no socket (parsed from the same packet); a
 * socket's key keeps no flow.
 */
static void event_key(const struct ud_event *e, struct ud_key *k)
{
	memset(k, 0, sizeof(*k));
	k->cookie = e->cookie;
	k->location = e->location;
	k->netns = e->netns;
	k->reason = e->reason;
	k->flags = e->flags;
	k->family = e->family;
	k->proto = e->proto;
	if (!(e->flags & UD_KEY_SOCK)) {
		memcpy(k->saddr, e->saddr, 16);
		memcpy(k->daddr, e->daddr, 16);
		k->dport = e->dport;
	}
}

/* Keep an event until its scope is known (-p, COMMAND, -N's closing
 * queues); shed when full. */
static void hold_event(struct recorder *rc, const struct ud_event *e, size_t size)
{
	size_t need = (8 + size + 7) & ~(size_t)7;
	uint64_t sz = size;

	if (rc->held_len + need > HELD_MAX) {
		rc->held_shed[model__cause(&rc->w->m, e->reason, e->flags)]++;
		return;
	}
	if (rc->held_len + need > rc->held_cap) {
		size_t cap = rc->held_cap ? rc->held_cap * 2 : 1u << 16;
		void *p;

		while (cap < rc->held_len + need)
			cap *= 2;
		p = realloc(rc->held, cap);
		if (!p) {
			rc->held_shed[model__cause(&rc->w->m, e->reason, e->flags)]++;
			return;
		}
		rc->held = p;
		rc->held_cap = cap;
	}
	if (!rc->undescribed && !owner__described(&rc->own, e->cookie, e->flags))
		rc->undescribed = true;
	memcpy(rc->held + rc->held_len, &sz, 8);
	memcpy(rc->held + rc->held_len + 8, e, size);
	rc->held_len += need;
}

/*
 * The held events whose owner is now known: the process's are written
 * (in the order they came), the others left out; the undecided stay,
 * unless `final` (after a snapshot's refresh nothing more will be
 * learned about them).
 */
static int release_held(struct recorder *rc, bool final)
{
	size_t off = 0, keep = 0;
	struct ud_key k;
	int err = 0;

	while (off < rc->held_len && !err) {
		uint64_t sz;
		const struct ud_event *e;
		size_t len;

		memcpy(&sz, rc->held + off, 8);
		len = (8 + sz + 7) & ~(size_t)7;
		e = (const void *)(rc->held + off + 8); /* 8-aligned: see hold_event */
		event_key(e, &k);
		switch (owner__judge(&rc->own, &k, final)) {
		case OWNER_YES:
			err = write_event(rc, e, sz);
			break;
		case OWNER_NO:
			rc->others++;
			break;
		case OWNER_UNKNOWN:
			if (keep != off)
				memmove(rc->held + keep, rc->held + off, len);
			keep += len;
			break;
		}
		off += len;
	}
	if (!err)
		rc->held_len = keep;
	return err;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct recorder *rc = ctx;
	const struct ud_event *e = data;
	int err;

	if (size < sizeof(*e))
		return 0; /* cannot happen: the program reserves at least that */
	rc->seen++;
	if (rc->hold || (rc->w->m.opts.netns && (e->flags & UD_KEY_CLOSE))) {
		hold_event(rc, e, size);
	} else {
		err = write_event(rc, e, size);
		if (err)
			return err;
	}
	/* a storm never empties the ring: look at the clock now and then */
	if (!(rc->seen & 1023)) {
		uint64_t now = now_ns();

		if (stopping() || now >= rc->deadline ||
		    (rc->hold && now - rc->own.scan_ns >= rc->scan_every))
			return YIELD;
	}
	return 0;
}

/*
 * -p / COMMAND, every scan_every: look for the process's sockets (a
 * socket that opens, drops and closes between two snapshots is still
 * its), describe the sockets of held events while they exist, and write
 * the held events whose owner is known.
 */
static int owner_tick(struct recorder *rc, uint64_t now)
{
	struct model *m = &rc->w->m;
	int err;

	if (!m->opts.pid || now - rc->own.scan_ns < rc->scan_every)
		return 0;
	/* a new socket of the process: described now, while it exists */
	if (owner__scan(&rc->own, now) > 0)
		rc->undescribed = true;
	if (rc->undescribed) {
		err = watch__refresh(rc->w);
		if (err)
			return err;
		rc->undescribed = false;
		owner__scan(&rc->own, now);
	}
	/* -p: stop when the process is gone (a COMMAND ends by SIGCHLD) */
	if (!m->opts.pid_tree && !rc->lingering && proc__check(m->opts.pid) == -ESRCH)
		rc->pid_gone = true;
	return rc->hold ? release_held(rc, false) : 0;
}

/* Wait for events until `deadline` (or a stop), writing them. */
static int poll_events(struct recorder *rc, uint64_t deadline)
{
	rc->deadline = deadline;
	while (!stopping() && !rc->pid_gone) {
		uint64_t now = now_ns();
		int ms, n;

		if (now >= deadline)
			return 0;
		n = owner_tick(rc, now);
		if (n)
			return n;
		ms = (int)((deadline - now + 999999) / 1000000);
		n = ring_buffer__poll(rc->rb, ms < POLL_MS ? ms : POLL_MS);
		/* a timeout consumes nothing: the ring may hold events anyway */
		if (n >= 0 || n == -EINTR)
			n = ring_buffer__consume(rc->rb);
		if (rc->err)
			return rc->err;
		if (n < 0 && n != -EINTR && n != YIELD)
			return n;
	}
	return 0;
}

/* Everything left in the ring (the programs are detached: it ends). */
static int drain_events(struct recorder *rc)
{
	int n;

	rc->deadline = UINT64_MAX;
	do {
		n = ring_buffer__consume(rc->rb);
	} while (n > 0 || n == YIELD);
	if (rc->err)
		return rc->err;
	return n < 0 ? n : 0;
}

/* The cause a shed slot stands for (layout in udpdrop.h). */
static enum cause shed_cause(struct model *m, uint32_t slot)
{
	static const uint32_t class_flags[UD_SHED_CLASSES] = {
		[UD_SHED_PLAIN] = 0,
		[UD_SHED_CLOSE] = UD_KEY_CLOSE,
		[UD_SHED_FAIL_RCVBUF] = UD_KEY_FAIL_RCVBUF,
		[UD_SHED_FAIL_MEM] = UD_KEY_FAIL_MEM,
	};
	uint32_t reason = slot / UD_SHED_CLASSES;

	/* the last reason slot holds every reason from it on: no one name */
	if (reason == UD_SHED_REASONS - 1)
		return CAUSE_OTHER;
	return model__cause(m, reason, class_flags[slot % UD_SHED_CLASSES]);
}

/* A SHED record with what was shed since the last one, if anything. */
static int write_shed(struct recorder *rc, uint64_t t)
{
	uint64_t per_cause[CAUSE_MAX] = {};
	struct trace_cause_count v[CAUSE_MAX];
	struct trace_shed sh = { .time_ns = t, .v = v };
	int err;

	if (!rc->rb)
		return 0;
	err = tracer__read_shed(&rc->w->t, rc->shed_now);
	if (err)
		return err;
	for (uint32_t i = 0; i < UD_SHED_SLOTS; i++) {
		uint64_t d = rc->shed_now[i] - rc->shed_seen[i];

		if (d)
			per_cause[shed_cause(&rc->w->m, i)] += d;
		if (rc->w->m.opts.netns && i % UD_SHED_CLASSES == UD_SHED_CLOSE)
			rc->shed_any_netns += d;
		rc->shed_seen[i] = rc->shed_now[i];
	}
	for (int c = 0; c < CAUSE_MAX; c++) {
		/* -N alone holds only closing queues' events: unjudged, any netns's */
		if (rc->w->m.opts.netns && !rc->w->m.opts.pid)
			rc->shed_any_netns += rc->held_shed[c];
		per_cause[c] += rc->held_shed[c];
		rc->held_shed[c] = 0;
	}
	for (int c = 0; c < CAUSE_MAX; c++)
		if (per_cause[c]) {
			v[sh.n].cause = c;
			v[sh.n].n = per_cause[c];
			sh.n++;
			rc->shed += per_cause[c];
		}
	return sh.n ? trace_writer__shed(rc->tw, &sh) : 0;
}

/* One snapshot: what the last refresh (or the baseline) read. */
static int snapshot(struct recorder *rc, uint64_t t)
{
	int err = 0;

	/* the refresh has described what it could: the held are decided */
	owner__scan(&rc->own, now_ns());
	if (rc->held_len)
		err = release_held(rc, true);
	if (!err)
		err = write_shed(rc, t);
	if (!err)
		err = write_counts(rc, t);
	if (!err)
		err = write_windows(rc, t);

	if (!err)
		err = write_mibs(rc, t);
	if (!err)
		err = write_sockets(rc, t);
	if (!err)
		err = write_names(rc);
	if (!err)
		err = write_missed(rc);
	if (!err)
		err = trace_writer__flush(rc->tw);
	return err;
}

/* --no-events: wait for the deadline, looking for the process's sockets. */
static int sleep_until(struct recorder *rc, uint64_t deadline)
{
	while (!stopping() && !rc->pid_gone) {
		uint64_t now = now_ns(), t = deadline;
		struct timespec ts;
		int err;

		if (now >= deadline)
			return 0;
		if (rc->w->m.opts.pid) {
			err = owner_tick(rc, now);
			if (err)
				return err;
			if (deadline - now > rc->scan_every)
				t = now + rc->scan_every;
		}
		ts.tv_sec = t / 1000000000ull;
		ts.tv_nsec = t % 1000000000ull;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	return 0;
}

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
	err = open_output(o.output, o.force, &user, &rc.tw, msg, sizeof(msg));
	if (err) {
		proc__user_free(&user);
		if (err == -EEXIST) /* made since the check */
			return exists(o.output);
		fprintf(stderr, WHO ": %s\n", msg);
		return err == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	if (htab__init(&rc.syms, sizeof(uint64_t), 1) ||
	    htab__init(&rc.win_ids, sizeof(uint64_t), 1) ||
	    htab__init(&rc.names, sizeof(uint64_t), KOWNER_LABEL_LEN)) {
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
		rc.rb = ring_buffer__new(tracer__events_fd(&w.t), on_event, &rc, NULL);
		if (!rc.shed_seen || !rc.shed_now || !rc.rb) {
			fprintf(stderr, WHO ": cannot set up the event ring buffer: %s\n",
				strerror(rc.rb ? ENOMEM : errno));
			goto fail_open;
		}
	}

	struct model *m = &w.m;
	double start_wall = wall_time();

	err = write_meta(rc.tw, m, argc, argv, start_wall, o.tracer.events,
			 o.tracer.cap_len);
	if (!err)
		err = write_reasons(rc.tw, m);
	if (!err)
		err = write_ifaces(rc.tw, m);
	/* the baseline, so a reader can take deltas over the same span */
	if (!err)
		err = snapshot(&rc, m->start_ns);
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

	while (!stopping()) {
		uint64_t t = next < end ? next : end;

		if (rc.rb) {
			err = poll_events(&rc, t);
			if (err && rc.err)
				goto write_fail;
			if (err) {
				fprintf(stderr, WHO ": reading the drop counts failed: %s\n", strerror(-err));
				goto fail_open;
			}
		} else {
			err = sleep_until(&rc, t);
			if (err) {
				fprintf(stderr, WHO ": reading the drop counts failed: %s\n", strerror(-err));
				goto fail_open;
			}
		}
		if (stopping() || rc.pid_gone || now_ns() >= end)
			break;
		next += step;
		if (next < now_ns())
			next = now_ns() + step;
		err = watch__refresh(&w);
		if (err) {
			fprintf(stderr, WHO ": reading the drop counts failed: %s\n", strerror(-err));
			goto fail_open;
		}
		err = snapshot(&rc, now_ns());
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
		if (rc.rb)
			err = poll_events(&rc, until);
		else
			err = sleep_until(&rc, until);
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
	if (rc.rb) {
		err = drain_events(&rc);
		if (err)
			goto write_fail;
	}
	w.t.win_all = true; /* the end: every drop window closes */
	err = watch__refresh(&w);
	if (err) {
		fprintf(stderr, WHO ": reading the drop counts failed: %s\n", strerror(-err));
		goto fail_open;
	}
	err = snapshot(&rc, now_ns());
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

	ring_buffer__free(rc.rb);
	rc.rb = NULL;
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
	ring_buffer__free(rc.rb);
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
