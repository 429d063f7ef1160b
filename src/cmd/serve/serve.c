// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop serve: the tracer and model top runs, as a Prometheus/OpenMetrics
 * endpoint. Each interval the model is refreshed and the page rendered,
 * once per format; between refreshes the HTTP responder answers from that
 * memory, so a scrape never touches the kernel's tables and no client can
 * delay a refresh by more than the responder's poll (http.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include "caps.h"
#include "cli.h"
#include "http.h"
#include "log.h"
#include "opts.h"
#include "netcfg.h"
#include "netns.h"
#include "pods.h"
#include "live_env.h"
#include "serve_advice.h"
#include "serve_page.h"
#include "socket_series.h"
#include "textfile.h"
#include "util.h"
#include "watch.h"

/* The default endpoint: loopback only (a wider address is the user's
 * choice), on a port of its own. */
#define SERVE_DEFAULT_LISTEN "127.0.0.1:9436"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

enum {
	SERVE_LISTEN = 1, SERVE_INTERVAL, SERVE_PID, SERVE_PORT, SERVE_NETNS,
	SERVE_MAP_ENTRIES, SERVE_ATTACH, SERVE_MAX_CONNS, SERVE_TEXTFILE, SERVE_MAX_PORTS,
	SERVE_K8S_LOGS, SERVE_MAX_SERIES, SERVE_COUNT,
};

static const char *const attach_values[] = { "auto", "tp_btf", "raw_tp", "tracepoint", NULL };

static const struct opt_spec serve_specs[] = {
	{ SERVE_LISTEN, "listen", 0, OT_STRING, "ADDR:PORT", .def = SERVE_DEFAULT_LISTEN,
	  .want = "ADDR:PORT, [ADDR]:PORT, :PORT or fd:N",
	  .help = "where to serve /metrics: ADDR:PORT, [ADDR]:PORT, :PORT (127.0.0.1)\n"
		  "or fd:N, an inherited listening socket (default %d)" },
	{ SERVE_INTERVAL, "interval", 'i', OT_SECONDS, "SECS", 0.1, 3600, .def = "5",
	  .flags = OPTS_F_APPLY_DEFAULT, .want = "seconds from %r",
	  .help = "read the kernel's tables and render the page every SECS (default %d, %r)" },
	{ SERVE_COUNT, "count", 'n', OT_COUNT, "N", 1, UINT32_MAX,
	  .want = "a whole number of refreshes, at least 1",
	  .help = "stop after N refreshes (default: until a signal); with --textfile\n"
		  "the last page stays (a cron job's)" },
	{ SERVE_PID, "pid", 'p', OT_PID, "PID", .want = "a process id",
	  .help = "only sockets held by process PID" },
	{ SERVE_PORT, "port", 0, OT_PORT, "PORT", .want = "a port from %r",
	  .help = "only drops to or from this local port" },
	{ SERVE_NETNS, "netns", 'N', OT_NETNS, "NS",
	  .help = "only this network namespace: ip-netns NAME, nsfs PATH or INODE" },
	{ SERVE_MAP_ENTRIES, "map-entries", 0, OT_COUNT, "N", 64, 1u << 24, .def = "16384",
	  .want = "a number from %r",
	  .help = "size of the in-kernel drop table (default %d)" },
	{ SERVE_ATTACH, "attach", 0, OT_ENUM, "MODE", .values = attach_values, .def = "auto",
	  .want = "auto, tp_btf, raw_tp or tracepoint",
	  .help = "auto, tp_btf, raw_tp or tracepoint (default %d)" },
	{ SERVE_MAX_CONNS, "max-connections", 0, OT_COUNT, "N", 1, 1024, .def = "16",
	  .want = "a number from %r",
	  .help = "HTTP connections open at once; past it a newcomer takes the slot of\n"
		  "one that has waited a second without a whole request (default %d)" },
	{ SERVE_MAX_PORTS, "max-ports", 0, OT_COUNT, "N", 1, 65536, .def = "256",
	  .want = "a number from %r",
	  .help = "ports per netns and family with series of their own (sockets' ports\n"
		  "and closed ports' apart); the rest are port=\"other\" (default %d)" },
	{ SERVE_MAX_SERIES, "max-series", 0, OT_COUNT, "N", 1, 1000000, .def = "10000",
	  .want = "a number from %r",
	  .help = "per-socket series in all; past it, new ones are port and comm\n"
		  "\"other\" without a pod (default %d)" },
	{ SERVE_K8S_LOGS, "k8s-logs", 0, OT_PATH, "DIR", .def = "/var/log",
	  .help = "the kubelet's log directory: its pods/ and containers/ name the pod\n"
		  "and container of a socket's owner, found by its cgroup (default %d)" },
	{ SERVE_TEXTFILE, "textfile", 0, OT_PATH, "DIR",
	  .help = "also write the page to DIR/udpdrop.prom each interval (a new file\n"
		  "renamed into place) for node_exporter's textfile collector; without\n"
		  "--listen, no HTTP listener is opened" },
	OPTS_VERBOSE("loader and libbpf details (twice: more)"),
	OPTS_VERSION,
	OPTS_HELP,
	{},
};

const struct opts_cmd serve_opts_cmd = {
	.prog = "udpdrop", .name = "serve", .version = UDPDROP_VERSION, .usage = "[OPTIONS]",
	.about =
"Serve the drop counts as Prometheus/OpenMetrics metrics on /metrics: the\n"
"same tracer and counts as top, by netns, cause and kernel reason, with\n"
"the kernel's own counters beside them.\n",
	.epilog =
"Exit codes: 0 ok, 1 runtime error, 2 bad usage, 3 missing privileges,\n"
"4 kernel feature missing or BPF load failure.\n",
	.specs = serve_specs,
};

struct serve_opts {
	const char *listen;
	uint32_t count;          /* -n: refreshes, 0 until a signal */
	bool listen_given;       /* --listen named: listen even with --textfile */
	const char *textfile;    /* --textfile DIR */
	double interval;
	const char *netns_spec;
	int max_conns;
	uint32_t max_ports, max_series;
	const char *k8s_logs;
	struct model_opts model;
	struct tracer_opts tracer;
};

static int parse_args(int argc, char **argv, struct serve_opts *o)
{
	struct opts_parser p;
	int id;

	opts__begin(&p, &serve_opts_cmd, argc, argv);
	while ((id = opts__next(&p)) > 0) {
		switch (id) {
		case SERVE_LISTEN:
			if (http__check_spec(p.arg))
				return cli__invalid(&p, NULL);
			o->listen = p.arg;
			o->listen_given = true;
			break;
		case SERVE_TEXTFILE: o->textfile = p.arg; break;
		case SERVE_MAX_PORTS: o->max_ports = p.u; break;
		case SERVE_K8S_LOGS: o->k8s_logs = p.arg; break;
		case SERVE_MAX_SERIES: o->max_series = p.u; break;
		case SERVE_INTERVAL: o->interval = p.d; break;
		case SERVE_COUNT: o->count = p.u; break;
		case SERVE_PID: o->model.pid = p.u; break;
		case SERVE_PORT: o->model.port = o->tracer.filter_port = p.u; break;
		case SERVE_NETNS: o->netns_spec = p.arg; break;
		case SERVE_MAP_ENTRIES:
			if (cli__map_entries("serve", p.arg, &o->tracer.map_entries))
				return -EXIT_USAGE;
			break;
		case SERVE_ATTACH: attach_mode__parse(p.arg, &o->tracer.mode); break;
		case SERVE_MAX_CONNS: o->max_conns = p.u; break;
		}
	}
	if (id < 0)
		return cli__opts_end(id);
	if (p.optind < argc)
		return cli__bad_arg("serve", argv[p.optind]);
	cli__verbosity(p.verbose);
	return 0;
}

/* The pages, rendered each interval; the responder serves these. */
struct pages {
	struct strbuf text, om;
	/* each gzip'ed once per render (NULL: not, each answer compresses) */
	char *text_gz, *om_gz;
	size_t text_gz_len, om_gz_len;
	struct serve_self self;
	struct socket_series sockets;
	struct serve_advice advice;
	struct http_server *http;
};

static const char landing[] =
	"<!DOCTYPE html>\n<html><head><title>udpdrop</title></head><body>\n"
	"<h1>udpdrop serve</h1>\n<p>UDP drops by network namespace, cause and kernel reason, "
	"with the kernel's own counters beside them: <a href=\"/metrics\">/metrics</a>.</p>\n"
	"<p>man udpdrop-serve(8) says what each metric counts.</p>\n</body></html>\n";

static void handle(void *arg, const struct http_request *req, struct http_response *resp)
{
	struct pages *pg = arg;

	if (!strcmp(req->path, "/metrics")) {
		bool om = expo__negotiate(req->accept) == EXPO_OPENMETRICS;
		const struct strbuf *sb = om ? &pg->om : &pg->text;

		resp->status = 200;
		resp->content_type = om ? EXPO_OPENMETRICS_TYPE : EXPO_TEXT_TYPE;
		resp->body = sb->buf;
		resp->len = sb->len;
		resp->may_gzip = true;
		resp->gz_body = om ? pg->om_gz : pg->text_gz;
		resp->gz_len = om ? pg->om_gz_len : pg->text_gz_len;
	} else if (!strcmp(req->path, "/")) {
		resp->status = 200;
		resp->content_type = "text/html; charset=utf-8";
		resp->body = landing;
		resp->len = sizeof(landing) - 1;
	} else {
		static const char nf[] = "not found: the metrics are on /metrics\n";

		resp->status = 404;
		resp->body = nf;
		resp->len = sizeof(nf) - 1;
	}
}

/* ip_local_port_range, read in the netns (socket_series.port_range). */
static int range_here(void *arg)
{
	uint16_t *lohi = arg;
	char buf[64];
	unsigned lo, hi;

	if (netcfg__sysctl_read("net.ipv4.ip_local_port_range", buf, sizeof(buf)) ||
	    sscanf(buf, "%u %u", &lo, &hi) != 2 || !lo || lo > hi || hi > 65535)
		return -EINVAL;
	lohi[0] = lo;
	lohi[1] = hi;
	return 0;
}

static int port_range(void *arg, uint32_t netns, uint16_t *lo, uint16_t *hi)
{
	struct watch *w = arg;
	uint16_t lohi[2];
	int err = netns__run_in(&w->m.nt, netns, range_here, lohi);

	if (err)
		return err;
	*lo = lohi[0];
	*hi = lohi[1];
	return 0;
}

/* The pod of a socket's owner (socket_series.pod_of), through the cache
 * every view shares (pods.h). */
static int pod_of(void *arg, int pid, struct pod_names *out)
{
	return pods__cache_of_pid(arg, pid, now_ns(), out);
}

/* refreshed: the model was refreshed since the last render (the first
 * render's model is the baseline's) */
static void render(struct pages *pg, struct watch *w, bool refreshed)
{
	uint64_t t0 = now_ns();
	struct http_server *h = pg->http;

	/* the ledger first: a failure (no memory) leaves the series as
	 * they were, never wrong; said once */
	if (socket_series__update(&pg->sockets, &w->m, t0) && !pg->self.sockets_failed) {
		fprintf(stderr, "udpdrop serve: the per-socket series are out of memory: "
			"they stop growing until there is some\n");
		pg->self.sockets_failed = true;
	}
	/* the same: no findings rather than wrong ones */
	if (serve_advice__update(&pg->advice, &w->m, &pg->sockets, refreshed, t0)) {
		htab__clear(&pg->advice.gauges);
		if (!pg->self.advice_failed)
			fprintf(stderr, "udpdrop serve: the advice is out of memory: its gauges are "
				"left out until there is some\n");
		pg->self.advice_failed = true;
	}

	char stats[16];

	pg->self.nprogs = tracer__prog_stats(&w->t, pg->self.progs, 4);
	pg->self.bpf_stats_enabled =
		netcfg__sysctl_read("kernel.bpf_stats_enabled", stats, sizeof(stats)) ? -1 : atoi(stats);
	pg->self.overflow = w->overflow;
	pg->self.kernel_events = w->stats[UD_STAT_EVENTS];
	pg->self.http_requests = h->requests;
	pg->self.http_rejected = h->rejected;
	pg->self.http_timeouts = h->timeouts;
	pg->self.http_too_large = h->too_large;
	pg->self.http_bad = h->bad;
	pg->self.http_bad_host = h->bad_host;
	pg->text.len = pg->om.len = 0;
	if (pg->text.buf)
		pg->text.buf[0] = '\0';
	if (pg->om.buf)
		pg->om.buf[0] = '\0';
	serve_page__render(&w->m, &pg->self, EXPO_TEXT, &pg->text);
	serve_page__render(&w->m, &pg->self, EXPO_OPENMETRICS, &pg->om);
	/* compressed once here, not for each scrape that asks (a failure
	 * leaves it to each answer) */
	free(pg->text_gz);
	free(pg->om_gz);
	pg->text_gz = pg->om_gz = NULL;
	if (pg->text.len && http__gzip(pg->text.buf, pg->text.len, &pg->text_gz, &pg->text_gz_len))
		pg->text_gz = NULL;
	if (pg->om.len && http__gzip(pg->om.buf, pg->om.len, &pg->om_gz, &pg->om_gz_len))
		pg->om_gz = NULL;
	pg->self.render_seconds = (now_ns() - t0) / 1e9;
}

/*
 * The page to --textfile, if given. A failed write (a full disk) is said
 * once, when it starts, and the next interval tries again: the endpoint
 * goes on serving.
 */
static void publish(struct textfile *tf, struct pages *pg)
{
	static int last_err;
	int err;

	if (tf->dirfd < 0)
		return;
	err = textfile__write(tf, pg->text.buf ? pg->text.buf : "", pg->text.len);
	if (err && err != last_err)
		fprintf(stderr, "udpdrop serve: writing %s failed: %s (trying again each interval)\n",
			TEXTFILE_NAME, strerror(-err));
	else if (!err && last_err)
		fprintf(stderr, "udpdrop serve: writing %s works again\n", TEXTFILE_NAME);
	last_err = err;
}

int do_serve(int argc, char **argv)
{
	struct serve_opts o = { .listen = SERVE_DEFAULT_LISTEN, .interval = 5,
				.max_conns = HTTP_MAX_CONNS,
				.max_ports = SOCKET_SERIES_PORT_CAP, .max_series = SOCKET_SERIES_CAP,
				.k8s_logs = "/var/log" };
	struct http_server http = { .fd = -1 };
	struct textfile tf = { .dirfd = -1 };
	struct pod_cache pods = { 0 };
	struct pages pg = { .http = &http };
	struct watch w = {};
	struct utsname u;
	char missing[128], err_line[256];
	int err, ret;

	err = parse_args(argc, argv, &o);
	if (err)
		return err > 0 ? EXIT_OK : -err;
	/* a named log directory must be one: else no pod is ever found */
	struct stat st;

	if (stat(o.k8s_logs, &st) || !S_ISDIR(st.st_mode)) {
		char shown[256];

		snprintf(shown, sizeof(shown), "%s", o.k8s_logs);
		str_printable(shown);
		fprintf(stderr, "udpdrop serve: --k8s-logs %s: not a directory: name the kubelet's "
			"log directory (the one with pods/ and containers/, /var/log on a node)\n", shown);
		return EXIT_USAGE;
	}
	bool privileged = !caps__check_bpf(missing, sizeof(missing));

	err = cli__resolve_scope("serve", o.netns_spec, o.model.pid, privileged,
				 &o.model.netns, &o.tracer.filter_netns);
	if (err == EXIT_PRIV && !privileged)
		goto no_privilege;
	if (err)
		return err;
	if (!privileged)
		goto no_privilege;
	/* the outputs first: a bad address or directory leaves nothing attached */
	if (o.textfile) {
		err = textfile__open(&tf, o.textfile, err_line, sizeof(err_line));
		if (err) {
			str_printable(err_line); /* DIR is the user's bytes */
			fprintf(stderr, "udpdrop serve: %s\n", err_line);
			return err == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
		}
	}
	if (!o.textfile || o.listen_given) {
		err = http__listen(&http, o.listen, o.max_conns, HTTP_TIMEOUT_MS, err_line,
				   sizeof(err_line));
		if (err) {
			fprintf(stderr, "udpdrop serve: %s\n", err_line);
			textfile__close(&tf);
			return err == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
		}
	}

	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL); /* its terminal closed: clean up too */
	signal(SIGPIPE, SIG_IGN);

	ret = watch__open(&w, &o.tracer, &o.model, "udpdrop serve");
	if (ret) {
		http__close(&http);
		textfile__close(&tf);
		return ret;
	}
	ret = EXIT_FAIL;
	if (socket_series__init(&pg.sockets))
		goto out;
	pg.sockets.port_cap = o.max_ports;
	pg.sockets.series_cap = o.max_series;
	pg.sockets.port_range = port_range;
	pg.sockets.port_range_arg = &w;
	if (pods__cache_init(&pods, o.k8s_logs))
		goto out;
	pg.sockets.pod_of = pod_of;
	pg.sockets.pod_of_arg = &pods;
	pg.self.sockets = &pg.sockets;
	if (serve_advice__init(&pg.advice))
		goto out;
	pg.advice.env_read = live_env__read;
	pg.self.advice = &pg.advice;
	uname(&u);
	pg.self.version = UDPDROP_VERSION;
	pg.self.kernel = u.release;
	pg.self.attach = attach_mode__name(w.t.mode);
	caps__survey(&(struct caps_scope){ .ks = &w.m.ksyms, .owners = true, .locations = true,
		.other_netns = o.tracer.filter_netns != w.m.nt.self, .netns_spec = o.netns_spec });
	caps__warn("udpdrop serve");
	render(&pg, &w, false);
	publish(&tf, &pg);
	if (http.fd >= 0)
		fprintf(stderr, "udpdrop serve: serving http://%s/metrics (port %d)\n", o.listen,
			http__port(&http));
	if (o.textfile) {
		char shown[256];

		snprintf(shown, sizeof(shown), "%s", o.textfile);
		str_printable(shown);
		fprintf(stderr, "udpdrop serve: writing %s/%s\n", shown, TEXTFILE_NAME);
	}
	fprintf(stderr, "udpdrop serve: tracing UDP drops via %s every %g s (Ctrl-C to stop)\n",
		pg.self.attach, o.interval);

	uint64_t step = (uint64_t)(o.interval * 1e9), next = w.m.start_ns + step;

	while (!stop_signal) {
		/*
		 * In slices of at most a second: a signal that comes just
		 * before a wait begins is seen at the slice's end, not after
		 * a whole interval (up to an hour).
		 */
		uint64_t slice = now_ns() + 1000000000ull;

		slice = slice < next ? slice : next;
		err = http.fd >= 0 ? http__serve_until(&http, slice, &stop_signal, handle, &pg)
				   : (sleep_until_ns(slice, &stop_signal), 0);
		if (err) {
			fprintf(stderr, "udpdrop serve: the listening socket failed: %s\n", strerror(-err));
			goto out;
		}
		if (stop_signal)
			break;
		if (now_ns() < next)
			continue; /* the slice ended, the interval has not */
		next += step;
		if (next < now_ns()) /* late (a loaded host): no catch-up burst */
			next = now_ns() + step;
		err = watch__refresh(&w);
		if (err) {
			fprintf(stderr, "udpdrop serve: reading the drop counts failed: %s\n",
				strerror(-err));
			goto out;
		}
		pg.self.refreshes++;
		render(&pg, &w, true);
		publish(&tf, &pg);
		if (o.count && pg.self.refreshes >= o.count) {
			tf.written = 0; /* -n: the last page is the run's product */
			break;
		}
		if (w.netns_gone) {
			cli__say_netns_gone("udpdrop serve", "stopping");
			break;
		}
	}
	ret = EXIT_OK;
out:
	watch__close(&w);
	http__close(&http);
	textfile__close(&tf);
	socket_series__free(&pg.sockets);
	serve_advice__free(&pg.advice);
	pods__cache_free(&pods);
	sb_free(&pg.text);
	sb_free(&pg.om);
	free(pg.text_gz);
	free(pg.om_gz);
	return ret;

no_privilege:
	fprintf(stderr, "udpdrop serve: permission denied: tracing drops needs %s; run as root (sudo udpdrop serve)\n",
		missing);
	return EXIT_PRIV;
}
