// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Option errors, worded the same way by every subcommand (see cli.h). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "netns.h"

int cli__bad_value(const char *cmd, const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "udpdrop %s: invalid %s '%s': %s\n"
		"Try 'udpdrop %s --help'.\n", cmd, opt, val, want, cmd);
	return -EXIT_USAGE;
}

int cli__bad_usage(const char *cmd, const char *msg)
{
	fprintf(stderr, "udpdrop %s: %s\nTry 'udpdrop %s --help'.\n", cmd, msg, cmd);
	return -EXIT_USAGE;
}

int cli__bad_option(const char *cmd, int c, char **argv,
		    const struct option *longopts)
{
	/*
	 * A long option has been stepped over (argv[optind - 1]); a short one
	 * may sit inside a bundle ("-zb"): name it by optopt, as
	 * argv[optind - 1] is still the word before.
	 */
	const char *word = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, 0 };
	const char *name = optopt ? shortopt : word;

	/* a long option's value is its optopt too: is it this word? */
	for (const struct option *lo = longopts; optopt && lo->name; lo++)
		if (lo->val == optopt && !strncmp(word, "--", 2) &&
		    !strncmp(word + 2, lo->name, strlen(lo->name)))
			name = word;
	fprintf(stderr, c == ':' ? "udpdrop %s: option '%s' needs a value\n"
				 : "udpdrop %s: unknown option '%s'\n", cmd, name);
	fprintf(stderr, "Try 'udpdrop %s --help'.\n", cmd);
	return -EXIT_USAGE;
}

int cli__bad_arg(const char *cmd, const char *arg)
{
	fprintf(stderr, "udpdrop %s: unexpected argument '%s'\n"
		"Try 'udpdrop %s --help'.\n", cmd, arg, cmd);
	return -EXIT_USAGE;
}

/*
 * -N NETNS: an `ip netns` name, nsfs path or inode into *netns (NULL spec:
 * left alone). 0, EXIT_USAGE after the error line, EXIT_FAIL, or EXIT_PRIV
 * (nothing printed) when only root could see that namespace.
 */
static int resolve_netns(const char *cmd, const char *spec, bool privileged,
			 uint32_t *netns)
{
	struct netns_table nt;
	int err;

	if (!spec)
		return 0;
	if (netns__scan(&nt)) {
		fprintf(stderr, "udpdrop %s: out of memory\n", cmd);
		return EXIT_FAIL;
	}
	err = netns__resolve(&nt, spec, netns);
	netns__free(&nt);
	if (!err)
		return 0;
	/* names under /run/netns are visible to all; inodes and paths of
	 * other users' namespaces only to root */
	if (!privileged && (strspn(spec, "0123456789") == strlen(spec) ||
			    (strchr(spec, '/') && access(spec, F_OK) && errno == EACCES)))
		return EXIT_PRIV;
	fprintf(stderr, "udpdrop %s: unknown netns '%s': give an `ip netns` name, an nsfs path (/proc/PID/ns/net) or a netns inode\n"
		"Try 'udpdrop %s --help'.\n", cmd, spec, cmd);
	return EXIT_USAGE;
}

/*
 * -p PID: the process's netns into *netns. 0, EXIT_USAGE after the error
 * line (no such process), EXIT_FAIL (its netns cannot be read), or
 * EXIT_PRIV when it exists but only root could see it: nothing printed
 * when not privileged (the caller says what tracing needs), the line that
 * names CAP_SYS_PTRACE when privileged enough to trace.
 */
static int resolve_pid(const char *cmd, int pid, bool privileged, uint32_t *netns)
{
	bool exists;
	int err;

	*netns = netns__of_pid(pid);
	if (*netns)
		return 0;
	err = errno;
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
		fprintf(stderr, "udpdrop %s: cannot read /proc/%d/ns/net: %s\n", cmd,
			pid, strerror(errno));
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
	int err = resolve_netns(cmd, netns_spec, privileged, netns);

	if (!err && pid)
		err = resolve_pid(cmd, pid, privileged, &pid_ns);
	if (err)
		return err;
	if (!privileged)
		return EXIT_PRIV;
	*filter_netns = *netns ? *netns : pid_ns;
	return 0;
}
