// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop record: the drops of a span of time into a trace file
 * (docs/trace-format.md), to be read later, elsewhere: what perf record
 * is to samples. This increment writes the exact aggregated counts, the
 * kernel's counters and the context to explain them (META, REASONS,
 * SYMBOLS, IFACES, SOCKETS, MIB); per-drop EVENTs come with the ring
 * buffer, next.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include "caps.h"
#include "cli.h"
#include "log.h"
#include "model.h"
#include "trace.h"
#include "tracer.h"
#include "util.h"
#include "watch.h"

#define WHO "udpdrop record"
#define DEFAULT_OUTPUT "udpdrop.data"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: udpdrop record [OPTIONS]\n"
"Record UDP drops into a trace file, for a later report (here or elsewhere):\n"
"the exact per-socket, per-reason counts, the kernel's drop counters and the\n"
"context to explain them (drop-reason table, symbols, interfaces, sockets,\n"
"sysctls).\n"
"Per-drop events come next (events: not yet recorded; the counts are exact).\n"
"\n"
"  -o, --output FILE      the trace file (default " DEFAULT_OUTPUT "; created mode 0600)\n"
"  -f, --force            overwrite FILE if it exists\n"
"  -d, --duration SECS    stop after SECS (default: until Ctrl-C or SIGTERM)\n"
"  -i, --interval SECS    write a snapshot every SECS (default 1, 0.1 to 3600)\n"
"  -N, --netns NS         only this network namespace: ip-netns NAME, nsfs PATH or INODE\n"
"      --port PORT        only drops to or from this local port\n"
"  -v, --verbose          loader and libbpf details (twice: more)\n"
"  -V, --version          print the version\n"
"  -h, --help             this help\n"
"\n"
"Exit codes: 0 ok, 1 runtime error, 2 bad usage, 3 missing privileges,\n"
"4 kernel feature missing or BPF load failure.\n");
}

struct record_opts {
	const char *output;
	bool force;
	double duration; /* 0: until a signal */
	double interval;
	const char *netns_spec;
	struct model_opts model;
	struct tracer_opts tracer;
};

enum { OPT_PORT = 256 };

static int bad_value(const char *opt, const char *val, const char *want)
{
	return cli__bad_value("record", opt, val, want);
}

/* 0, 1 (--help, -V: done) or -EXIT_USAGE. */
static int parse_args(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "netns", required_argument, NULL, 'N' },
		{ "port", required_argument, NULL, OPT_PORT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int verbose = 0, c;
	uint64_t v;

	o->output = DEFAULT_OUTPUT;
	o->interval = 1.0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:fd:i:N:vVh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return bad_value("--output", optarg, "a file name");
			o->output = optarg;
			break;
		case 'f': o->force = true; break;
		case 'd':
			if (parse_seconds(optarg, 0.1, 31 * 86400.0, &o->duration))
				return bad_value("--duration", optarg, "seconds from 0.1 to 2678400 (31 days)");
			break;
		case 'i':
			if (parse_seconds(optarg, 0.1, 3600, &o->interval))
				return bad_value("--interval", optarg, "seconds from 0.1 to 3600");
			break;
		case 'N': o->netns_spec = optarg; break;
		case OPT_PORT:
			if (parse_u64(optarg, 1, 65535, &v))
				return bad_value("--port", optarg, "a port from 1 to 65535");
			o->model.port = o->tracer.filter_port = v;
			break;
		case 'v': verbose++; break;
		case 'V':
			printf("udpdrop %s\n", UDPDROP_VERSION);
			return 1;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
		default:
			return cli__bad_option("record", c, argv, longopts);
		}
	}
	if (optind < argc) {
		return cli__bad_arg("record", argv[optind]);
	}
	log__set_level(verbose >= 2 ? LOG_DEBUG : verbose ? LOG_INFO : LOG_WARN);
	return 0;
}

/* ---- META ------------------------------------------------------------- */

/* The sysctls META carries, as docs/trace-format.md lists them. */
static const char *const meta_sysctls[] = {
	"net.core.rmem_default", "net.core.rmem_max",
	"net.core.wmem_default", "net.core.wmem_max",
	"net.ipv4.udp_mem", "net.core.netdev_max_backlog",
	"net.ipv4.ipfrag_high_thresh", "net.ipv4.ipfrag_low_thresh",
	"net.ipv4.ipfrag_time", "net.ipv4.ipfrag_max_dist",
};
#define NSYSCTLS ARRAY_SIZE(meta_sysctls)

/* Whitespace runs to one space, none at either end (in place). */
static void collapse_ws(char *s)
{
	char *o = s;
	bool space = false;

	for (char *p = s; *p; p++) {
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
			space = o != s;
			continue;
		}
		if (space)
			*o++ = ' ';
		space = false;
		*o++ = *p;
	}
	*o = 0;
}

/* A sysctl's value as /proc/sys prints it, whitespace collapsed. */
static int sysctl_read(const char *name, char *buf, size_t len)
{
	char path[128];
	FILE *f;
	size_t n;
	int i;

	i = snprintf(path, sizeof(path), "/proc/sys/%s", name);
	if (i < 0 || (size_t)i >= sizeof(path))
		return -ENAMETOOLONG;
	for (char *p = path + 10; *p; p++)
		if (*p == '.')
			*p = '/';
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	collapse_ws(buf);
	return 0;
}

struct sysctl_vals {
	char v[NSYSCTLS][128];
	bool ok[NSYSCTLS];
};

static int sysctls_here(void *arg)
{
	struct sysctl_vals *sv = arg;

	for (size_t i = 0; i < NSYSCTLS; i++)
		if (!sv->ok[i])
			sv->ok[i] = !sysctl_read(meta_sysctls[i], sv->v[i], sizeof(sv->v[i]));
	return 0;
}

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
		      char **argv, double start_wall)
{
	struct kvlist l = {};
	struct utsname un;
	char host[256] = "";
	struct strbuf cmd = {}, causes = {}, fallback = {};
	struct sysctl_vals sv = {};
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
	kv_add(&l, "netns", "%u", m->opts.netns);
	kv_add(&l, "port", "%u", m->opts.port);
	kv_add(&l, "events", "%s", "not recorded (this version writes counts only)");

	/* the sysctls of the recorded netns; the ones a netns does not have
	 * of its own (host-wide ones) from udpdrop's netns, and said so */
	netns__run_in(&m->nt, ns, sysctls_here, &sv);
	for (size_t i = 0; i < NSYSCTLS; i++)
		if (!sv.ok[i] && ns != m->nt.self)
			sb_printf(&fallback, "%s%s", fallback.len ? "," : "", meta_sysctls[i]);
	sysctls_here(&sv);
	for (size_t i = 0; i < NSYSCTLS; i++)
		if (sv.ok[i])
			kv_add(&l, meta_sysctls[i], "%s", sv.v[i]);
	kv_add(&l, "sysctl_netns", "%u", ns);
	if (fallback.len)
		kv_add(&l, "sysctl_from_udpdrop_netns", "%s", fallback.buf);

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

#define IFACES_MAX 1024
struct iface_list {
	uint32_t netns;
	struct trace_iface v[IFACES_MAX];
	char names[IFACES_MAX][IF_NAMESIZE];
	uint32_t n;
};

static int ifaces_here(void *arg)
{
	struct iface_list *il = arg;
	struct if_nameindex *ifs = if_nameindex();
	int fd;

	if (!ifs)
		return -errno;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (struct if_nameindex *p = ifs; p->if_index && il->n < IFACES_MAX; p++) {
		struct trace_iface *t = &il->v[il->n];
		struct ifreq ifr = {};

		snprintf(il->names[il->n], IF_NAMESIZE, "%s", p->if_name);
		t->name = il->names[il->n];
		t->ifindex = p->if_index;
		t->netns = il->netns;
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", p->if_name);
		if (fd >= 0 && !ioctl(fd, SIOCGIFMTU, &ifr))
			t->mtu = ifr.ifr_mtu;
		if (fd >= 0 && !ioctl(fd, SIOCGIFTXQLEN, &ifr))
			t->txqueuelen = ifr.ifr_qlen;
		il->n++;
	}
	if (fd >= 0)
		close(fd);
	if_freenameindex(ifs);
	return 0;
}

static int write_ifaces(struct trace_writer *tw, struct model *m)
{
	struct iface_list *il = calloc(1, sizeof(*il));
	int err;

	if (!il)
		return -ENOMEM;
	il->netns = context_netns(m);
	err = netns__run_in(&m->nt, il->netns, ifaces_here, il);
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
	uint64_t drops;        /* datagrams in the last COUNTS */
};

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

static int write_counts(struct recorder *rc, uint64_t t)
{
	struct htab *d = &rc->w->drops;
	struct trace_count *v = calloc(d->n + 1, sizeof(*v));
	struct trace_counts c = { .time_ns = t, .v = v };
	size_t it = 0;
	const void *key;
	void *val;
	uint64_t sum = 0;
	int err;

	if (!v)
		return -ENOMEM;
	while (htab__next(d, &it, &key, &val)) {
		memcpy(&v[c.n].key, key, sizeof(struct ud_key));
		memcpy(&v[c.n].val, val, sizeof(struct ud_val));
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

		if (r->key.kind != ROW_SOCKET || !r->have_sock)
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
		s.n++;
	}
	err = trace_writer__sockets(rc->tw, &s);
	free(v);
	return err;
}

/* One snapshot: what the last refresh (or the baseline) read. */
static int snapshot(struct recorder *rc, uint64_t t)
{
	int err = write_counts(rc, t);

	if (!err)
		err = write_mibs(rc, t);
	if (!err)
		err = write_sockets(rc, t);
	if (!err)
		err = trace_writer__flush(rc->tw);
	return err;
}

static void sleep_until(uint64_t deadline)
{
	struct timespec ts = { .tv_sec = deadline / 1000000000ull,
			       .tv_nsec = deadline % 1000000000ull };

	while (!stop_signal &&
	       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int do_record(int argc, char **argv)
{
	struct record_opts o = {};
	struct watch w = {};
	struct recorder rc = { .w = &w };
	struct stat st;
	char missing[128];
	bool privileged, created = false;
	int err, ret;

	err = parse_args(argc, argv, &o);
	if (err)
		return err > 0 ? EXIT_OK : -err;
	/* bad values first (exit 2), then privileges (exit 3), as top does */
	if (!o.force && !lstat(o.output, &st)) {
		fprintf(stderr, WHO ": %s exists: give -f to overwrite it, or another name with -o\n",
			o.output);
		return EXIT_USAGE;
	}
	privileged = !caps__check_bpf(missing, sizeof(missing));
	err = cli__resolve_netns("record", o.netns_spec, privileged, &o.model.netns);
	if (err == EXIT_PRIV)
		goto no_privilege;
	if (err)
		return err;
	if (!privileged)
		goto no_privilege;
	if (o.model.netns)
		o.tracer.filter_netns = o.model.netns;

	/* the file before BPF: a path that cannot be written fails at once */
	err = trace_writer__open(o.output, o.force, &rc.tw);
	if (err == -EEXIST) {
		fprintf(stderr, WHO ": %s exists: give -f to overwrite it, or another name with -o\n",
			o.output);
		return EXIT_USAGE;
	}
	if (err) {
		fprintf(stderr, WHO ": cannot create %s: %s\n", o.output, strerror(-err));
		return EXIT_FAIL;
	}
	created = true;
	if (htab__init(&rc.syms, sizeof(uint64_t), 1)) {
		fprintf(stderr, WHO ": out of memory\n");
		ret = EXIT_FAIL;
		goto fail;
	}

	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	ret = watch__open(&w, &o.tracer, &o.model, WHO);
	if (ret)
		goto fail;
	ret = EXIT_FAIL;

	struct model *m = &w.m;
	double start_wall = wall_time();

	err = write_meta(rc.tw, m, argc, argv, start_wall);
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
		o.duration > 0 ? "until the duration ends or Ctrl-C" : "Ctrl-C to stop");

	uint64_t step = (uint64_t)(o.interval * 1e9), next = m->start_ns + step;
	uint64_t end = o.duration > 0 ? m->start_ns + (uint64_t)(o.duration * 1e9) : UINT64_MAX;

	while (!stop_signal) {
		uint64_t t = next < end ? next : end;

		sleep_until(t);
		if (stop_signal || now_ns() >= end)
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
	}
	/* the last snapshot: nothing between ticks is lost */
	err = watch__refresh(&w);
	if (err) {
		fprintf(stderr, WHO ": reading the drop counts failed: %s\n", strerror(-err));
		goto fail_open;
	}
	err = snapshot(&rc, now_ns());
	if (err)
		goto write_fail;
	uint64_t dur = now_ns() - m->start_ns;

	watch__close(&w);
	htab__free(&rc.syms);
	err = trace_writer__close(rc.tw);
	rc.tw = NULL;
	if (err)
		goto write_fail;

	char drops[32], size[32];

	fmt_count(drops, sizeof(drops), rc.drops);
	fmt_bytes(size, sizeof(size), stat(o.output, &st) ? 0 : (uint64_t)st.st_size);
	fprintf(stderr, WHO ": %s drop%s in %.1f s written to %s (%s)\n", drops,
		rc.drops == 1 ? "" : "s", dur / 1e9, o.output, size);
	return EXIT_OK;

write_fail:
	fprintf(stderr, WHO ": cannot write %s: %s\n", o.output, strerror(-err));
fail_open:
	ret = EXIT_FAIL;
	watch__close(&w);
fail:
	htab__free(&rc.syms);
	if (rc.tw)
		trace_writer__close(rc.tw);
	/* no half-written file: a clean failure leaves nothing behind */
	if (created && unlink(o.output) && errno != ENOENT)
		fprintf(stderr, WHO ": cannot remove %s: %s\n", o.output, strerror(errno));
	return ret;

no_privilege:
	fprintf(stderr, WHO ": permission denied: tracing drops needs %s; run as root (sudo udpdrop record)\n",
		missing);
	return EXIT_PRIV;
}
