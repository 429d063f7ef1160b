// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Option errors, worded the same way by every subcommand (see cli.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "cli.h"
#include "tracer.h"
#include "log.h"
#include "netns.h"
#include "opts.h"
#include "util.h"

/* A word from the command line, quoted in a message: one printable line. */
static const char *printable(const char *spec, char *buf, size_t len)
{
	snprintf(buf, len, "%s", spec);
	str_printable(buf);
	return buf;
}

/* The lines are opts.c's, so that a table's errors and a command's read alike. */
int cli__bad_value(const char *cmd, const char *opt, const char *val, const char *want)
{
	opts__say_bad_value("udpdrop", cmd, opt, val, want);
	return -EXIT_USAGE;
}

int cli__bad_usage(const char *cmd, const char *msg)
{
	opts__say_usage("udpdrop", cmd, msg);
	return -EXIT_USAGE;
}

int cli__opts_end(int id)
{
	return id == OPTS_DONE ? 1 : -EXIT_USAGE;
}

int cli__invalid(struct opts_parser *p, const char *want)
{
	opts__invalid(p, want);
	return -EXIT_USAGE;
}

void cli__verbosity(int n)
{
	log__set_level(n >= 2 ? LOG_DEBUG : n ? LOG_INFO : LOG_WARN);
}

int cli__bad_arg(const char *cmd, const char *arg)
{
	char shown[256];

	fprintf(stderr, "udpdrop %s: unexpected argument '%s'\n"
		"Try 'udpdrop %s --help'.\n", cmd, printable(arg, shown, sizeof(shown)), cmd);
	return -EXIT_USAGE;
}

/* spec as it may reach a terminal: printable, and cut short. */
/*
 * -N NETNS: an `ip netns` name, nsfs path or inode into *netns and an fd
 * of it into *fd (NULL spec: left alone). 0, EXIT_USAGE after the error
 * line, EXIT_FAIL, or EXIT_PRIV (nothing printed) when only root could
 * see that namespace.
 */
static int resolve_netns(const char *cmd, const char *spec, bool privileged,
			 uint32_t *netns, int *fd)
{
	struct netns_table nt;
	char shown[128];
	int err;

	if (!spec)
		return 0;
	/* a script's unset variable ("-N $NS"): never "this netns" */
	if (strspn(spec, " \t\n\v\f\r") == strlen(spec)) {
		fprintf(stderr, "udpdrop %s: -N needs a netns name, path or inode (got %s)\n"
			"Try 'udpdrop %s --help'.\n", cmd,
			spec[0] ? "only white space" : "an empty string", cmd);
		return EXIT_USAGE;
	}
	if (netns__scan(&nt)) {
		fprintf(stderr, "udpdrop %s: out of memory\n", cmd);
		return EXIT_FAIL;
	}
	err = netns__resolve(&nt, spec, netns, fd);
	netns__free(&nt);
	if (!err)
		return 0;
	printable(spec, shown, sizeof(shown));
	if (err == -EINVAL) {
		/* a FIFO, socket, device, directory, file: refused unopened */
		fprintf(stderr, "udpdrop %s: unknown netns '%s': not a network namespace file (give an `ip netns` name, /proc/PID/ns/net, /run/netns/NAME or a netns inode)\n",
			cmd, shown);
		return EXIT_USAGE;
	}
	/* names under /run/netns are visible to all; inodes and paths of
	 * other users' namespaces only to root */
	if (!privileged && (strspn(spec, "0123456789") == strlen(spec) || err == -EACCES ||
			    (strchr(spec, '/') && access(spec, F_OK) && errno == EACCES)))
		return EXIT_PRIV;
	fprintf(stderr, "udpdrop %s: unknown netns '%s': give an `ip netns` name, an nsfs path (/proc/PID/ns/net) or a netns inode\n"
		"Try 'udpdrop %s --help'.\n", cmd, shown, cmd);
	return EXIT_USAGE;
}

/*
 * -p PID: the process's netns into *netns, an fd of it into *fd. 0,
 * EXIT_USAGE after the error line (no such process), EXIT_FAIL (its netns
 * cannot be read), or EXIT_PRIV when it exists but only root could see it:
 * nothing printed when not privileged (the caller says what tracing
 * needs), the line that names CAP_SYS_PTRACE when privileged enough to
 * trace.
 */
static int resolve_pid(const char *cmd, int pid, bool privileged, uint32_t *netns, int *fd)
{
	char path[64];
	bool exists;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	*fd = netns__open(path, netns);
	if (*fd >= 0)
		return 0;
	err = -*fd; /* a positive errno from here on */
	*fd = -1;
	/* kill(pid, 0): ESRCH means no such process; EPERM, not ours */
	exists = !kill(pid, 0) || errno == EPERM;
	if (exists && !privileged)
		return EXIT_PRIV;
	/* tracing allowed, but not a look at this process (caps.h: owners) */
	if (exists && (err == EACCES || err == EPERM)) {
		fprintf(stderr, "udpdrop %s: permission denied: process %d is another user's or has more capabilities: reading its netns needs CAP_SYS_PTRACE; run as root\n",
			cmd, pid);
		return EXIT_PRIV;
	}
	if (exists) {
		fprintf(stderr, "udpdrop %s: cannot open /proc/%d/ns/net: %s\n", cmd,
			pid, strerror(err));
		return EXIT_FAIL;
	}
	fprintf(stderr, "udpdrop %s: no process with pid %d\n"
		"Try 'udpdrop %s --help'.\n", cmd, pid, cmd);
	return EXIT_USAGE;
}

int cli__resolve_scope(const char *cmd, const char *netns_spec, int pid,
		       bool privileged, uint32_t *netns, uint32_t *filter_netns)
{
	uint32_t pid_ns = 0;
	int ns_fd = -1, pid_fd = -1, err;

	err = resolve_netns(cmd, netns_spec, privileged, netns, &ns_fd);
	if (!err && pid)
		err = resolve_pid(cmd, pid, privileged, &pid_ns, &pid_fd);
	if (!err && !privileged)
		err = EXIT_PRIV;
	if (!err) {
		*filter_netns = *netns ? *netns : pid_ns;
		/*
		 * The traced netns is held open for the whole run: freed, its
		 * inode would go to the next netns made, whose drops would
		 * then count as its own (the kernel filters on the inode).
		 */
		if (*filter_netns) {
			bool by_path = netns_spec && *netns && strchr(netns_spec, '/');

			err = netns__pin(*netns ? ns_fd : pid_fd, *filter_netns,
					 by_path ? netns_spec : NULL);
			if (*netns)
				ns_fd = -1;
			else
				pid_fd = -1;
			if (err) {
				fprintf(stderr, "udpdrop %s: cannot hold netns %u open: %s\n", cmd,
					*filter_netns, strerror(-err));
				err = EXIT_FAIL;
			}
		}
	}
	if (ns_fd >= 0)
		close(ns_fd);
	if (pid_fd >= 0)
		close(pid_fd);
	return err;
}

void cli__say_netns_gone(const char *who, const char *then)
{
	fprintf(stderr, "%s: netns %s is gone (no process is in it, nothing mounts it): %s\n",
		who, netns__pin_label(), then);
}

/* MemAvailable from /proc/meminfo, bytes; 0 if unknown. */
static uint64_t mem_available(void)
{
	unsigned long long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return (uint64_t)kb * 1024;
}

/* A cgroup file's number ("max": none), or UINT64_MAX. */
static uint64_t cg_number(const char *dir, const char *name)
{
	char path[4200];
	unsigned long long v;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return UINT64_MAX;
	ok = fscanf(f, "%llu", &v) == 1;
	fclose(f);
	return ok ? v : UINT64_MAX;
}

/* Where the cgroup v2 hierarchy, or v1's memory controller, is mounted. */
static bool cg_mount(bool v2, char *out, size_t len)
{
	char line[4096], mnt[2048], fstype[64], opts[1024];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %2047s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s %*s %1023s", fstype, opts) != 2)
			continue;
		found = v2 ? !strcmp(fstype, "cgroup2")
			   : !strcmp(fstype, "cgroup") && strstr(opts, "memory");
		if (found)
			snprintf(out, len, "%s", mnt);
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * Room left under this process's cgroup memory limits (the kernel charges
 * BPF maps to the cgroup): the least limit - usage over the cgroup and its
 * ancestors, v2 or v1's memory controller; UINT64_MAX where none is set.
 */
static uint64_t cgroup_mem_room(void)
{
	char line[2048], base[2048], dir[4200];
	uint64_t room = UINT64_MAX;
	FILE *f = fopen("/proc/self/cgroup", "re");

	while (f && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, ':'), *ctrl;
		bool v2;

		if (!path)
			continue;
		ctrl = path + 1;
		path = strchr(ctrl, ':');
		if (!path)
			continue;
		*path++ = 0;
		path[strcspn(path, "\n")] = 0;
		v2 = !*ctrl;
		if (!v2 && !strstr(ctrl, "memory"))
			continue;
		if (!cg_mount(v2, base, sizeof(base)))
			continue;
		/* this cgroup, then each parent up to the root */
		for (;;) {
			uint64_t lim, use;

			snprintf(dir, sizeof(dir), "%s%s", base, path);
			lim = cg_number(dir, v2 ? "memory.max" : "memory.limit_in_bytes");
			use = cg_number(dir, v2 ? "memory.current" : "memory.usage_in_bytes");
			if (lim != UINT64_MAX && use != UINT64_MAX)
				room = lim > use && lim - use < room ? lim - use : lim > use ? room : 0;
			char *slash = strrchr(path, '/');

			if (!slash || slash == path)
				break;
			*slash = 0;
		}
	}
	if (f)
		fclose(f);
	return room;
}

int cli__map_entries(const char *cmd, const char *val, uint32_t *out)
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t v, bytes, avail = mem_available(), room = cgroup_mem_room();
	char cost[24], have[24], msg[256];

	if (parse_u64(val, 64, 1u << 24, &v))
		return cli__bad_value(cmd, "--map-entries", val, "a number from 64 to 16777216");
	bytes = tracer__map_bytes(v, ncpus > 0 ? ncpus : 1);
	fmt_bytes(cost, sizeof(cost), bytes);
	/*
	 * At most half of what the machine has available, and no more than
	 * the cgroup's memory limit leaves (the maps are charged to it).
	 */
	uint64_t limit = avail ? avail / 2 : UINT64_MAX;
	bool by_cgroup = room < limit;

	if (by_cgroup)
		limit = room;
	if (bytes > limit) {
		uint64_t fit = (uint64_t)((double)v * limit / bytes);

		fmt_bytes(have, sizeof(have), by_cgroup ? room : avail);
		snprintf(msg, sizeof(msg),
			 "its tables would take ~%s of kernel memory on %d CPUs, more than %s%s %s: give at most %llu",
			 cost, ncpus, by_cgroup ? "the " : "half of the ", have,
			 by_cgroup ? "this cgroup's memory limit leaves" : "available",
			 (unsigned long long)(fit < 64 ? 64 : fit));
		return cli__bad_value(cmd, "--map-entries", val, msg);
	}
	if (bytes > (256ull << 20))
		fprintf(stderr, "udpdrop %s: --map-entries %llu: the tables take ~%s of kernel memory (%d CPUs), allocated at start\n",
			cmd, (unsigned long long)v, cost, ncpus);
	*out = v;
	return 0;
}

int cli__k8s_logs(const char *cmd, const char *dir)
{
	struct stat st;
	char shown[256];

	if (!stat(dir, &st) && S_ISDIR(st.st_mode))
		return 0;
	snprintf(shown, sizeof(shown), "%s", dir);
	str_printable(shown);
	fprintf(stderr, "udpdrop %s: --k8s-logs %s: not a directory: name the kubelet's "
		"log directory (the one with pods/ and containers/, /var/log on a node)\n"
		"Try 'udpdrop %s --help'.\n", cmd, shown, cmd);
	return -EXIT_USAGE;
}
