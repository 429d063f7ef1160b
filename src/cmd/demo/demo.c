// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop demo: real drops in under a minute. Two throwaway network
 * namespaces joined by a veth pair, `udpdrop sink` in one and `udpdrop gen`
 * in the other set up to reproduce a drop pattern, and `udpdrop top` on
 * them; afterwards the run's ledger. Everything it makes is removed on
 * exit, on Ctrl-C and on errors; a demo killed with SIGKILL leaves its
 * namespaces behind under a name with its pid, and the next demo removes
 * them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "caps.h"
#include "cli.h"
#include "opts.h"
#include "top.h"
#include "log.h"
#include "util.h"

/* "udpd-tx-PID", "udpd-rx-PID": short enough for top's NETNS column */
#define DEMO_PREFIX "udpd-"
#define MAX_CHILDREN 16

/* A scenario: how the two hosts are set up, and what gen and sink run. */
struct scenario {
	const char *name;
	const char *what;      /* one line for the user */
	int port;
	bool watch_gen;        /* the drops happen on the sender's side */
	bool no_sink;          /* nobody listens (no_socket) */
	const char *sink_args; /* after ADDR:PORT */
	const char *gen_args;  /* after ADDR:PORT */
	/* commands (no shell; %s: the scenario's interface) run in the
	 * sink's and the generator's netns */
	const char *const *setup_sink;
	const char *const *setup_gen;
};

/* A stalling reader with the default 212992-byte buffer: Jones and Zhu's case. */
static const char *const frag_setup[] = {
	"sysctl -qw net.ipv4.ipfrag_time=1",
	/* every tenth datagram loses its last fragment before reassembly */
	"nft add table ip udpdrop_demo",
	"nft add chain ip udpdrop_demo pre { type filter hook prerouting priority -450 ; }",
	"nft add rule ip udpdrop_demo pre ip frag-off & 0x1fff != 0 ip frag-off & 0x2000 == 0 numgen inc mod 10 == 0 counter drop",
	NULL,
};
/* a 5 Mbit/s bottleneck with a short queue on the sender's own interface */
static const char *const sender_setup[] = {
	"tc qdisc add dev %s root tbf rate 5mbit burst 1600 limit 16000",
	NULL,
};

static const struct scenario scenarios[] = {
	{ "rcvbuf", "1 KiB datagrams at 20 Mbit/s into the default 212992-byte buffer; the reader stalls 300 ms of every second",
	  5001, false, false, "--stall 300 --every 1000", "--size 1024 --rate 20M", NULL, NULL },
	{ "frag", "4000-byte datagrams (3 fragments at MTU 1500); a firewall drops the last fragment of every tenth",
	  5002, false, false, "", "--size 4000 --rate 2M", frag_setup, NULL },
	{ "noport", "datagrams to a port nobody listens on (--no-control: the generator alone)",
	  5003, false, true, NULL, "--no-control --size 200 --pps 100", NULL, NULL },
	{ "sender", "20 Mbit/s into a 5 Mbit/s qdisc with a 16 KB queue on the sender's own interface",
	  5004, true, false, "", "--size 1000 --rate 20M", NULL, sender_setup },
};

/* side 0: the sender's address, 1: the receiver's */
static const char *scenario_addr(const struct scenario *s, int side, int net)
{
	static char buf[2][32];

	snprintf(buf[side], sizeof(buf[side]), "10.%d.%d.%d",
		 200 + (int)(s - scenarios), net, side + 1);
	return buf[side];
}

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void list_scenarios(FILE *f)
{
	fprintf(f, "\nScenarios:\n");
	for (size_t i = 0; i < ARRAY_SIZE(scenarios); i++) {
		fprintf(f, "  %-8s ", scenarios[i].name);
		opts__wrap(f, scenarios[i].what, 11);
	}
	fprintf(f, "  %-8s all of the above at once (the default)\n", "all");
}

enum { DEMO_DURATION = 1, DEMO_BATCH, DEMO_JSON };

static const struct opt_spec demo_specs[] = {
	{ DEMO_DURATION, "duration", 'd', OT_SECONDS, "SECS", 0.5, 86400,
	  .want = "give seconds, %r",
	  .help = "stop after SECS (default: q in the live view;\n8 s with batch output)" },
	{ DEMO_BATCH, "batch", 'b', OT_FLAG,
	  .help = "batch output even on a terminal (as when piped)" },
	{ DEMO_JSON, "json", 'j', OT_FLAG, .help = "JSON lines from top (implies --batch)" },
	OPTS_VERBOSE("show the commands that build the namespaces"),
	OPTS_VERSION,
	OPTS_HELP,
	{},
};

const struct opts_cmd demo_opts_cmd = {
	.prog = "udpdrop", .name = "demo", .version = UDPDROP_VERSION,
	.usage = "[SCENARIO] [OPTIONS]",
	.about =
"Real UDP drops in throwaway network namespaces, watched by udpdrop top,\n"
"then the end-to-end ledger of the run. Removes everything on exit.\n",
	.about_more = list_scenarios,
	.options_title = "Options:",
	.epilog = "Needs root. Exit: 0 ok, 1 failure, 2 bad option, 3 not root.\n",
	.specs = demo_specs,
};

/* ---- running commands ---- */

struct child {
	pid_t pid;
	const char *role;   /* "sink", "gen" */
	char out[256];      /* its stdout and stderr */
};

static struct child children[MAX_CHILDREN];
/* our binary by its own name, so the children's comm is not "exe" */
static char self_exe[4096];
static int nchildren;

/*
 * Run argv (split on spaces) in netns `ns` (NULL: here), wait for it.
 * Output goes to /dev/null unless -v. Returns its exit status, or -1.
 */
static int run(const char *ns, const char *cmd)
{
	char buf[512], *argv[48];
	int argc = 0;
	pid_t pid;
	int st;

	if (ns)
		snprintf(buf, sizeof(buf), "ip netns exec %s %s", ns, cmd);
	else
		snprintf(buf, sizeof(buf), "%s", cmd);
	for (char *save, *tok = strtok_r(buf, " ", &save); tok && argc < 47;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	pr_info("demo: %s%s%s%s\n", ns ? "[" : "", ns ? ns : "", ns ? "] " : "", cmd);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (log__level() < LOG_INFO) {
			int fd = open("/dev/null", O_WRONLY);

			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Start `udpdrop ARGS` in netns ns, in the background, output to a file. */
static int spawn(const char *ns, const char *role, const char *dir, const char *args)
{
	struct child *c;
	char buf[512], *argv[48];
	int argc = 0;
	pid_t parent = getpid();

	if (nchildren == MAX_CHILDREN)
		return -ENOSPC;
	c = &children[nchildren];
	snprintf(c->out, sizeof(c->out), "%s/%s-%d.out", dir, role, nchildren);
	c->role = role;
	snprintf(buf, sizeof(buf), "%s", args);
	argv[argc++] = "udpdrop";
	for (char *save, *tok = strtok_r(buf, " ", &save); tok && argc < 47;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (!c->pid) {
		char path[300];
		int fd;

		/* the demo gone (even by SIGKILL): so are its children */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		/* a process group of its own: the terminal's Ctrl-C goes to the
		 * demo, which stops gen before sink so the ledgers are kept */
		setpgid(0, 0);
		snprintf(path, sizeof(path), "/run/netns/%s", ns);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, CLONE_NEWNET))
			_exit(126);
		fd = open(c->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		fd = open("/dev/null", O_RDONLY);
		dup2(fd, 0);
		execv(self_exe, argv);
		_exit(127);
	}
	nchildren++;
	return 0;
}

/* Is a TCP socket listening on `port` in the netns of `pid`? */
static bool listening(pid_t pid, int port)
{
	char path[64], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/tcp", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned int lport, state;

		if (sscanf(line, " %*d: %*x:%x %*x:%*x %x", &lport, &state) == 2 &&
		    lport == (unsigned int)port && state == 0x0A)
			found = true;
	}
	fclose(f);
	return found;
}

static bool alive(pid_t pid)
{
	return waitpid(pid, NULL, WNOHANG) == 0;
}

/* SIGTERM, then up to `ms` for a clean exit, then SIGKILL. */
static void stop_child(struct child *c, int ms)
{
	if (c->pid <= 0)
		return;
	kill(c->pid, SIGTERM);
	for (int i = 0; i < ms / 20; i++) {
		if (waitpid(c->pid, NULL, WNOHANG) != 0)
			goto done;
		usleep(20000);
	}
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
done:
	c->pid = 0;
}

/* Print a child's output from its ledger on (or its last lines). */
static void show_ledger(const struct child *c, const char *label)
{
	char line[512];
	bool on = false;
	FILE *f = fopen(c->out, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!on && !strncmp(line, "ledger", 6)) {
			printf("\n%s\n", label);
			on = true;
		}
		if (on)
			fputs(line, stdout);
	}
	fclose(f);
}

/* Namespaces a demo killed by SIGKILL left behind: its pid is gone. */
static void remove_stale(void)
{
	DIR *d = opendir("/run/netns");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char cmd[300];
		int pid;

		if (strncmp(e->d_name, DEMO_PREFIX, strlen(DEMO_PREFIX)) ||
		    (strncmp(e->d_name + strlen(DEMO_PREFIX), "tx-", 3) &&
		     strncmp(e->d_name + strlen(DEMO_PREFIX), "rx-", 3)) ||
		    sscanf(e->d_name + strlen(DEMO_PREFIX) + 3, "%d", &pid) != 1 ||
		    pid == getpid() || !kill(pid, 0) || errno != ESRCH)
			continue;
		snprintf(cmd, sizeof(cmd), "ip netns del %s", e->d_name);
		if (!run(NULL, cmd))
			pr_warn("demo: removed %s, left by a demo that was killed\n", e->d_name);
	}
	closedir(d);
}

int do_demo(int argc, char **argv)
{
	const struct scenario *picked[ARRAY_SIZE(scenarios)];
	int npicked = 0, ret = EXIT_FAIL;
	double duration = 0;
	bool batch = false, json = false, made_gen = false, made_sink = false;
	char gen_ns[64], sink_ns[64], dir[] = "/tmp/udpdrop-demo.XXXXXX";
	char cmd[512], missing[128];
	bool have_dir = false;
	int net = getpid() % 250 + 1, failed = -1;
	struct opts_parser p;
	int id;

	opts__begin(&p, &demo_opts_cmd, argc, argv);
	while ((id = opts__next(&p)) > 0) {
		switch (id) {
		case DEMO_DURATION: duration = p.d; break;
		case DEMO_BATCH: batch = true; break;
		case DEMO_JSON: json = batch = true; break;
		}
	}
	if (id < 0)
		return id == OPTS_DONE ? EXIT_OK : EXIT_USAGE;
	if (p.optind + 1 < argc) {
		char a[64], b[64], msg[192];

		snprintf(a, sizeof(a), "%s", argv[p.optind]);
		snprintf(b, sizeof(b), "%s", argv[p.optind + 1]);
		str_printable(a);
		str_printable(b);
		snprintf(msg, sizeof(msg), "one scenario at most (got '%s' after '%s')", b, a);
		return -cli__bad_usage("demo", msg);
	}
	const char *want = p.optind < argc ? argv[p.optind] : "all";

	for (size_t i = 0; i < ARRAY_SIZE(scenarios); i++)
		if (!strcmp(want, "all") || !strcmp(want, scenarios[i].name))
			picked[npicked++] = &scenarios[i];
	if (!npicked) {
		return -cli__bad_value("demo", "scenario", want,
				       "rcvbuf, frag, noport, sender or all");
	}
	if (caps__check_bpf(missing, sizeof(missing)) || geteuid()) {
		fprintf(stderr, "udpdrop demo: permission denied: the demo builds network namespaces and loads BPF; run as root (sudo udpdrop demo)\n");
		return EXIT_PRIV;
	}
	cli__verbosity(p.verbose);
	bool interactive = !batch && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);

	if (!duration && !interactive)
		duration = 8;

	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	ssize_t len = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);

	if (len <= 0) {
		fprintf(stderr, "udpdrop demo: cannot find its own binary (/proc/self/exe): %s\n", strerror(errno));
		return EXIT_FAIL;
	}
	self_exe[len] = 0;
	remove_stale();
	snprintf(gen_ns, sizeof(gen_ns), DEMO_PREFIX "tx-%d", getpid());
	snprintf(sink_ns, sizeof(sink_ns), DEMO_PREFIX "rx-%d", getpid());
	if (!mkdtemp(dir)) {
		fprintf(stderr, "udpdrop demo: cannot make a directory under /tmp: %s\n", strerror(errno));
		return EXIT_FAIL;
	}
	have_dir = true;

	/* the two hosts */
	snprintf(cmd, sizeof(cmd), "ip netns add %s", gen_ns);
	made_gen = !run(NULL, cmd);
	snprintf(cmd, sizeof(cmd), "ip netns add %s", sink_ns);
	made_sink = !run(NULL, cmd);
	if (!made_gen || !made_sink)
		goto no_hosts;
	if (stop_signal)
		goto interrupted;
	/*
	 * One veth pair and subnet per scenario, so each sink has its own
	 * interface for XDP and a scenario's qdisc slows only its own traffic:
	 * "d-rcvbuf" on both sides, 10.(200 + scenario).NET.1 and .2.
	 */
	for (int i = 0; i < npicked; i++) {
		const struct scenario *s = picked[i];

		snprintf(cmd, sizeof(cmd), "ip link add d-%s netns %s type veth peer name d-%s netns %s",
			 s->name, gen_ns, s->name, sink_ns);
		if (run(NULL, cmd))
			goto no_hosts;
		for (int side = 0; side < 2; side++) {
			const char *ns = side ? sink_ns : gen_ns;

			snprintf(cmd, sizeof(cmd), "ip addr add %s/24 dev d-%s",
				 scenario_addr(s, side, net), s->name);
			if (run(ns, cmd))
				goto no_hosts;
			snprintf(cmd, sizeof(cmd), "ip link set d-%s up", s->name);
			if (run(ns, cmd))
				goto no_hosts;
		}
	}
	if (run(gen_ns, "ip link set lo up") || run(sink_ns, "ip link set lo up"))
		goto no_hosts;
	if (stop_signal)
		goto interrupted;
	/* the scenarios' settings; then the sinks, which must listen before gen starts */
	for (int i = 0; i < npicked; i++) {
		const struct scenario *s = picked[i];

		for (int side = 0; side < 2; side++)
			for (const char *const *p = side ? s->setup_gen : s->setup_sink; p && *p; p++) {
				char ifname[32];

				snprintf(ifname, sizeof(ifname), "d-%s", s->name);
				snprintf(cmd, sizeof(cmd), *p, ifname);
				if (run(side ? gen_ns : sink_ns, cmd)) {
					fprintf(stderr, "udpdrop demo: setting up '%s' failed: %s (tools/deps.sh installs nft and tc)\n",
						s->name, cmd);
					goto out;
				}
			}
		if (s->no_sink)
			continue;
		snprintf(cmd, sizeof(cmd), "sink %s:%d --xdp d-%s %s", scenario_addr(s, 1, net),
			 s->port, s->name, s->sink_args);
		if (spawn(sink_ns, "sink", dir, cmd))
			goto out;
	}
	for (int i = 0; i < nchildren; i++) {
		const struct scenario *s = NULL;
		int n = 0;

		for (int k = 0; k < npicked; k++)
			if (!picked[k]->no_sink && n++ == i)
				s = picked[k];
		for (int t = 0; t < 250 && !listening(children[i].pid, s->port); t++) {
			if (stop_signal)
				goto interrupted;
			if (!alive(children[i].pid)) {
				failed = i;
				goto child_died;
			}
			usleep(20000);
		}
		if (!listening(children[i].pid, s->port)) {
			failed = i;
			goto child_died;
		}
	}
	int first_gen = nchildren;

	for (int i = 0; i < npicked; i++) {
		const struct scenario *s = picked[i];

		snprintf(cmd, sizeof(cmd), "gen %s:%d --duration 86400 %s",
			 scenario_addr(s, 1, net), s->port, s->gen_args);
		if (spawn(gen_ns, "gen", dir, cmd))
			goto out;
	}

	/* what the user is about to see */
	if (!json) {
		printf("demo: netns %s (sender) -> %s (receiver), a veth pair per scenario\n",
		       gen_ns, sink_ns);
		for (int i = 0; i < npicked; i++)
			printf("demo: %-6s %s -> %s:%d: %s\n", picked[i]->name,
			       scenario_addr(picked[i], 0, net), scenario_addr(picked[i], 1, net),
			       picked[i]->port, picked[i]->what);
		if (interactive)
			printf("demo: the live view follows: Enter on a row for its detail, h for help, q to quit.\n");
		fflush(stdout);
		if (interactive)
			sleep(2);
	}
	if (stop_signal)
		goto out_stop;

	/* udpdrop top, in this process: one netns when all drops are there */
	{
		struct top_opts to;
		bool all_gen = true, all_sink = true;

		for (int i = 0; i < npicked; i++) {
			all_gen &= picked[i]->watch_gen;
			all_sink &= !picked[i]->watch_gen;
		}
		top__opts_init(&to);
		if (all_sink || all_gen)
			to.netns_spec = all_gen ? gen_ns : sink_ns;
		if (duration) /* whole intervals of 1 s, at least one */
			to.count = duration < 1 ? 1 : (uint64_t)(duration + 0.5);
		to.batch = !interactive || json;
		to.json = json;
		ret = top__run(&to);
		if (ret != EXIT_OK)
			goto out;
	}
out_stop:
	/* the generators first: their last datagrams and the ledger exchange */
	for (int i = first_gen; i < nchildren; i++)
		stop_child(&children[i], 5000);
	for (int i = 0; i < first_gen; i++)
		stop_child(&children[i], 5000);
	if (!json) {
		int g = 0;

		for (int i = 0; i < npicked; i++) {
			char label[128];

			snprintf(label, sizeof(label), "=== %s: the ledger of port %d (udpdrop %s) ===",
				 picked[i]->name, picked[i]->port,
				 picked[i]->no_sink ? "gen --no-control: the sender's view" : "gen");
			show_ledger(&children[first_gen + g++], label);
		}
	}
	ret = EXIT_OK;
	goto out;

interrupted:
	fprintf(stderr, "udpdrop demo: interrupted: removing what it made\n");
	ret = EXIT_OK;
	goto out;
child_died:
	fprintf(stderr, "udpdrop demo: the sink did not start; its output:\n");
	if (failed >= 0) {
		FILE *f = fopen(children[failed].out, "r");
		char line[512];

		while (f && fgets(line, sizeof(line), f))
			fprintf(stderr, "  %s", line);
		if (f)
			fclose(f);
	}
	goto out;
no_hosts:
	if (stop_signal)
		goto interrupted; /* the Ctrl-C reached `ip` too */
	fprintf(stderr, "udpdrop demo: cannot build the namespaces (ip netns, veth): is iproute2 installed? -v shows the commands\n");
out:
	for (int i = nchildren - 1; i >= 0; i--)
		stop_child(&children[i], 2000);
	if (made_gen) {
		snprintf(cmd, sizeof(cmd), "ip netns del %s", gen_ns);
		run(NULL, cmd);
	}
	if (made_sink) {
		snprintf(cmd, sizeof(cmd), "ip netns del %s", sink_ns);
		run(NULL, cmd);
	}
	if (have_dir) {
		for (int i = 0; i < nchildren; i++)
			unlink(children[i].out);
		rmdir(dir);
	}
	return ret;
}
