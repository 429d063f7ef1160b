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
#include "util.h"

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

/* spec as it may reach a terminal: printable, and cut short. */
static const char *printable(const char *spec, char *buf, size_t len)
{
	snprintf(buf, len, "%s", spec);
	str_printable(buf);
	return buf;
}

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
 * cannot be read), or EXIT_PRIV (nothing printed) when it exists but only
 * root could see it.
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
	err = *fd;
	*fd = -1;
	/* kill(pid, 0): ESRCH means no such process; EPERM, not ours */
	exists = !kill(pid, 0) || errno == EPERM;
	if (exists && !privileged)
		return EXIT_PRIV;
	if (exists) {
		fprintf(stderr, "udpdrop %s: cannot open /proc/%d/ns/net: %s\n", cmd,
			pid, strerror(-err));
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
