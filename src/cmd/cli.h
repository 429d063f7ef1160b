/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Exit codes and the subcommand entry points (documented in the README). */
#ifndef UD_CLI_H
#define UD_CLI_H

enum exit_code {
	EXIT_OK = 0,
	EXIT_FAIL = 1,     /* runtime failure */
	EXIT_USAGE = 2,    /* bad option or value */
	EXIT_PRIV = 3,     /* not root / missing capabilities */
	EXIT_KERNEL = 4,   /* kernel lacks a feature, or BPF load/attach failed */
};

#include <stdbool.h>
#include <stdint.h>

struct opts_parser;

/*
 * After an option table's parse loop (opts.h): opts__next's OPTS_DONE is
 * 1 (--help or --version printed: exit 0), OPTS_USAGE_ERROR -EXIT_USAGE.
 */
int cli__opts_end(int id);
/* The current option's value refused for the command's own reason (want,
 * or the table's): the one line, then -EXIT_USAGE. */
int cli__invalid(struct opts_parser *p, const char *want);
/* -v given n times: warnings (0), details (1), libbpf's debug too (2+). */
void cli__verbosity(int n);

/*
 * One-line errors for subcommand `cmd` ("top") that its option table
 * cannot say (arguments, options that go together), worded as the
 * table's (opts.c), with the hint to --help; each returns -EXIT_USAGE.
 */
int cli__bad_value(const char *cmd, const char *opt, const char *val, const char *want);
int cli__bad_usage(const char *cmd, const char *msg);
/*
 * -N and -p together, then the privilege check: *netns (the model's
 * filter) from -N, *filter_netns (the kernel's) from -N, else from the
 * pid's netns (the cheap exact superset of its sockets). 0, EXIT_USAGE or
 * EXIT_FAIL after the error line, or EXIT_PRIV (nothing printed: the
 * caller names what is missing) when not privileged, or when the netns
 * or process exists but only root could see it; privileged to trace but
 * not to look at that process (CAP_SYS_PTRACE), EXIT_PRIV after the line.
 * -N "" (or white space) is refused, never "this netns"; a path that is
 * no network namespace file is refused without being opened (a FIFO
 * would hang open(2)). On success *filter_netns is pinned for the run
 * (netns__pin): a caller stops when netns__pin_gone says so
 * (watch__refresh looks).
 */
int cli__resolve_scope(const char *cmd, const char *netns_spec, int pid,
		       bool privileged, uint32_t *netns, uint32_t *filter_netns);
/*
 * The one line for a pinned netns that has gone (netns__pin_gone), e.g.
 * "udpdrop record: netns blue (inode 4026532281) is gone (...): stopping".
 */
void cli__say_netns_gone(const char *who, const char *then);
/* A word after the options the command takes none of. */
int cli__bad_arg(const char *cmd, const char *arg);
/*
 * --map-entries N into *out: 64 to 2^24, and the tables' kernel memory
 * no more than half of what the machine has available (MemAvailable);
 * over 256 MiB it says what it costs. 0, or -EXIT_USAGE after the line.
 */
int cli__map_entries(const char *cmd, const char *val, uint32_t *out);

/*
 * --k8s-logs DIR for the live views (top, record, doctor; serve has its
 * own): where the kubelet's logs name the pod of a socket's owner
 * (pods.h). The default, /var/log, is used where it is a directory; a
 * directory the user names must be one.
 */
#define CLI_K8S_LOGS_DEFAULT "/var/log"
#define CLI_K8S_LOGS_SPEC(id)                                                         \
	{ id, "k8s-logs", 0, OT_PATH, "DIR", .def = CLI_K8S_LOGS_DEFAULT,             \
	  .help = "the kubelet's log directory: its pods/ and containers/ name the pod\n" \
		  "and container of a socket's owner, found by its cgroup (default %d)" }
/* The named DIR is a directory: 0, or -EXIT_USAGE after one line. */
int cli__k8s_logs(const char *cmd, const char *dir);

/* Each command's option table (opts.h): its --help and man page's OPTIONS. */
struct opts_cmd;
extern const struct opts_cmd top_opts_cmd, record_opts_cmd, report_opts_cmd,
	doctor_opts_cmd, gen_opts_cmd, sink_opts_cmd, demo_opts_cmd, serve_opts_cmd;

int do_top(int argc, char **argv);
int do_sink(int argc, char **argv);
int do_demo(int argc, char **argv);
int do_gen(int argc, char **argv);
int do_record(int argc, char **argv);
int do_report(int argc, char **argv);
int do_doctor(int argc, char **argv);
int do_serve(int argc, char **argv);

#endif
