// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop report: what a `udpdrop record` trace says, as text or JSON.
 * Works without root and without BPF, on any machine: everything it
 * prints comes from the file (report_model.h's core does the work:
 * report_load.c to report_json.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "opts.h"
#include "report_model.h"
#include "report_pcap.h"
#include "util.h"

#define WHO "udpdrop report"
#define DEFAULT_INPUT "udpdrop.data"

#define STR_(x) #x
#define STR(x) STR_(x)

enum { REP_BY = 1, REP_JSON, REP_TOP, REP_PCAP, REP_FORCE };

static const char *const by_values[] = { "socket", "cause", "reason", "location", "second", NULL };

static const struct opt_spec report_specs[] = {
	/* -g: -b is top's and demo's --batch (and gen's rate, as iperf3's) */
	{ REP_BY, "by", 'g', OT_ENUM, "KEY", .values = by_values, .def = "socket",
	  .want = "one of " REPORT_BY_VALUES, .alias_letter = 'b',
	  .alias_note = "the older spelling, still accepted",
	  .help = "group by " REPORT_BY_VALUES "\n"
		  "(default socket: the full report, with a timeline\n"
		  "of drops/s between snapshots); the others print the\n"
		  "header and that one table (JSON: adds \"by\")" },
	{ REP_JSON, "json", 'j', OT_FLAG, .help = "one JSON document instead of text" },
	/* -r: -n is top's and gen's --count */
	{ REP_TOP, "top", 'r', OT_COUNT, "N", 1, 1000000, .def = STR(REPORT_DEFAULT_TOP),
	  .want = "a number of rows from %r", .alias_letter = 'n',
	  .alias_note = "the older spelling, still accepted",
	  .help = "socket rows shown (default %d)" },
	{ REP_PCAP, "pcap", 0, OT_PATH, "OUT", .want = "a file name",
	  .help = "write the dropped packets' captured headers (EVENTs\n"
		  "recorded with --headers) to OUT as pcapng, each with\n"
		  "its cause, reason, socket and location as a packet\n"
		  "comment, for tshark, tcpdump or Wireshark; prints no\n"
		  "report (--json, --by, --top do not apply)" },
	{ REP_FORCE, "force", 'f', OT_FLAG, .help = "overwrite an existing --pcap OUT" },
	OPTS_VERBOSE("accepted, as by every command (a report has no more to say)"),
	OPTS_VERSION,
	OPTS_HELP,
	{},
};

const struct opts_cmd report_opts_cmd = {
	.prog = "udpdrop", .name = "report", .version = UDPDROP_VERSION, .usage = "[OPTIONS] [FILE]",
	.about =
"What a trace written by `udpdrop record` says: the sockets that dropped and\n"
"why, drops that belong to no socket, totals by cause, the kernel's reasons\n"
"and drop locations, and the reconciliation with the kernel's counters.\n"
"Needs neither root nor BPF; reads FILE (default " DEFAULT_INPUT ").\n",
	.epilog =
"Exit codes: 0 ok (also for a file cut short: reported, and said so),\n"
"1 missing file, not a trace (empty, not a regular file), nothing in it\n"
"(cut before its first block), newer format, corrupt or hostile file (what\n"
"comes before the damage is reported; --pcap writes nothing), no packet\n"
"headers in the trace for --pcap, or OUT not written; 2 bad usage (also\n"
"an existing OUT without -f).\n",
	.specs = report_specs,
};

/* 0, 1 (--help, -V: done) or -EXIT_USAGE. */
static int parse_args(int argc, char **argv, struct report_opts *o,
		      const char **path, const char **pcap, bool *force)
{
	struct opts_parser p;
	int id;

	*path = DEFAULT_INPUT;
	opts__begin(&p, &report_opts_cmd, argc, argv);
	while ((id = opts__next(&p)) > 0) {
		switch (id) {
		case REP_BY: o->by = report__by_parse(p.arg); break;
		case REP_JSON: o->json = true; break;
		case REP_TOP: o->top = p.u; break;
		case REP_PCAP: *pcap = p.arg; break;
		case REP_FORCE: *force = true; break;
		}
	}
	if (id < 0)
		return cli__opts_end(id);
	if (p.optind < argc)
		*path = argv[p.optind++];
	if (p.optind < argc)
		return cli__bad_arg("report", argv[p.optind]);
	if (!**path)
		return cli__bad_value("report", "FILE", *path, "a file name");
	cli__verbosity(p.verbose);
	return 0;
}

int do_report(int argc, char **argv)
{
	struct report_opts o = {};
	struct report rp;
	struct strbuf out = {};
	const char *path, *problem, *pcap = NULL;
	bool force = false;
	char msg[512];
	int err, ret;

	err = parse_args(argc, argv, &o, &path, &pcap, &force);
	if (err)
		return err > 0 ? EXIT_OK : -err;
	/* one output per run, as perf script's exports: the packets alone,
	 * streamed, without loading the trace for a report nobody reads */
	if (pcap)
		return report_pcap__export(path, pcap, force, WHO, stderr, NULL);
	report__load(&rp, path);
	if (report__printable(&rp)) {
		report__print(&rp, &o, &out);
		if (out.len)
			fwrite(out.buf, 1, out.len, stdout);
		fflush(stdout);
	}
	problem = report__problem(&rp, msg, sizeof(msg));
	if (problem)
		fprintf(stderr, WHO ": %s\n", problem);
	ret = report__exit_code(&rp);
	sb_free(&out);
	report__free(&rp);
	return ret;
}
