// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udpdrop: the subcommand table, as bpftool's main.c has it. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "util.h"
#include "opts.h"

#ifdef UDPDROP_STATIC
#include <nss.h>
#if !__GLIBC_PREREQ(2, 34)
#error "the static build needs glibc 2.34 or later: its files and dns NSS services are built in"
#endif
/*
 * `make static` (udpdrop-static). A statically linked glibc would load the
 * NSS modules /etc/nsswitch.conf names (systemd, sss, ldap, mdns...) with
 * dlopen, and such a module only works with the very glibc it came with:
 * on another system that is undefined behaviour. Since 2.34 glibc has the
 * files and dns services built in, so those are all this binary uses, for
 * the only lookups it makes: record's sudo user (getpwuid_r, getgrouplist)
 * and gen/sink host names (getaddrinfo). A user known only to LDAP or sssd
 * is then not found: record runs the command with SUDO_GID alone, as
 * where /etc/passwd has no entry.
 */
static void nss_builtin_only(void)
{
	__nss_configure_lookup("passwd", "files");
	__nss_configure_lookup("group", "files");
	__nss_configure_lookup("hosts", "files dns");
}
#else
static void nss_builtin_only(void) {}
#endif

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
	const struct opts_cmd *opts;
} cmds[] = {
	{ "top", do_top, "which socket drops UDP, and why: live, full-screen or batch/JSON", &top_opts_cmd },
	{ "sink", do_sink, "receive gen's datagrams; per run, the ledger of where each one went", &sink_opts_cmd },
	{ "gen", do_gen, "paced UDP generator: sender drops counted, the ledger from udpdrop sink", &gen_opts_cmd },
	{ "demo", do_demo, "real drops in throwaway namespaces: sink, gen and top, then the ledger", &demo_opts_cmd },
	{ "record", do_record, "record drops to a trace file (exact counts and their context) for a later report", &record_opts_cmd },
	{ "doctor", do_doctor, "sample this host's drops and settings for a few seconds: what to change, with values", &doctor_opts_cmd },
	{ "report", do_report, "read a trace file from record: sockets, causes, reasons, reconciliation (no root)", &report_opts_cmd },
	{ "serve", do_serve, "the drop counts as Prometheus/OpenMetrics metrics on /metrics, for a fleet", &serve_opts_cmd },
};

/*
 * `udpdrop --man-options CMD`: the OPTIONS section of udpdrop-CMD(8), from
 * the same table as its --help (tools/man-options.sh splices it in; not
 * in --help: it is for the build).
 */
static int man_options(const char *name)
{
	for (size_t i = 0; name && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmds[i].name, name)) {
			opts__man_options(cmds[i].opts, stdout);
			return EXIT_OK;
		}
	fprintf(stderr, "udpdrop: --man-options needs a command's name:");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(stderr, " %s", cmds[i].name);
	fprintf(stderr, "\n");
	return EXIT_USAGE;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: udpdrop COMMAND [OPTIONS]\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n'udpdrop COMMAND --help' for a command's options; -V for the version.\n");
}

/* A pipe or socket on stdout whose reader has gone (`| head`). */
static bool reader_gone(void)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };
	struct stat st;

	return !fstat(STDOUT_FILENO, &st) && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) &&
	       poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

/*
 * Whether stdout got everything, for every subcommand in one place (as
 * coreutils' close_stdout): `report x >/dev/full` must not exit 0. A
 * subcommand that failed already said why, and top says it for stdout
 * too: one line, never two. A reader that went away is no error (`| head`:
 * where SIGPIPE is not ignored it ended the process before here).
 */
static int close_stdout(int ret)
{
	int saved = errno, err = 0;
	bool failed_before = ferror(stdout);

	bool pending = __fpending(stdout) > 0;

	errno = 0;
	if (fflush(stdout))
		err = errno;
	/* a closed stdout (>&-) that nothing was written to is no error */
	if (fclose(stdout) && !err && (pending || failed_before || errno != EBADF))
		err = errno;
	if (!failed_before && !err)
		return ret;
	/* a failed write's errno is gone with the buffer stdio dropped: the
	 * one in effect when the subcommand returned is the best left */
	if (!err)
		err = saved ? saved : EIO;
	if (ret != EXIT_OK || err == EPIPE || reader_gone())
		return ret;
	fprintf(stderr, "udpdrop: write error on standard output: %s\n", strerror(err));
	return EXIT_FAIL;
}

static int run(int argc, char **argv)
{
	const struct cmd *match = NULL;
	size_t len;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("udpdrop %s\n", UDPDROP_VERSION);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--man-options"))
		return man_options(argc > 2 ? argv[2] : NULL);
	/* unambiguous prefixes, as bpftool accepts them */
	len = strlen(argv[1]);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strncmp(cmds[i].name, argv[1], len))
			continue;
		if (match) {
			fprintf(stderr, "udpdrop: ambiguous command '%s'\n", argv[1]);
			return EXIT_USAGE;
		}
		match = &cmds[i];
	}
	if (!match || !len) {
		fprintf(stderr, "udpdrop: unknown command '%s'\nTry 'udpdrop --help'.\n", argv[1]);
		return EXIT_USAGE;
	}
	return match->fn(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	process_mark_start();
	nss_builtin_only();
	return close_stdout(run(argc, argv));
}
