// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop report: what a `udpdrop record` trace says, as text or JSON.
 * Works without root and without BPF, on any machine: everything it
 * prints comes from the file (report_model.c does the work).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "report_model.h"
#include "report_pcap.h"
#include "util.h"

#define WHO "udpdrop report"
#define DEFAULT_INPUT "udpdrop.data"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: udpdrop report [OPTIONS] [FILE]\n"
"What a trace written by `udpdrop record` says: the sockets that dropped and\n"
"why, drops that belong to no socket, totals by cause, the kernel's reasons\n"
"and drop locations, and the reconciliation with the kernel's counters.\n"
"Needs neither root nor BPF; reads FILE (default " DEFAULT_INPUT ").\n"
"\n"
"  -b, --by KEY           group by " REPORT_BY_VALUES "\n"
"                         (default socket: the full report, with a timeline\n"
"                         of drops/s between snapshots); the others print the\n"
"                         header and that one table (JSON: adds \"by\")\n"
"  -j, --json             one JSON document instead of text\n"
"  -n, --top N            socket rows shown (default %d)\n"
"      --pcap OUT         write the dropped packets' captured headers (EVENTs\n"
"                         recorded with --headers) to OUT as pcapng, each with\n"
"                         its cause, reason, socket and location as a packet\n"
"                         comment, for tshark, tcpdump or Wireshark; prints no\n"
"                         report (--json, --by, --top do not apply)\n"
"  -f, --force            overwrite an existing --pcap OUT\n"
"  -V, --version          print the version\n"
"  -h, --help             this help\n"
"\n"
"Exit codes: 0 ok (also for a file cut short: reported, and said so),\n"
"1 missing file, not a trace (empty, not a regular file), nothing in it\n"
"(cut before its first block), newer format, corrupt or hostile file (what\n"
"comes before the damage is reported; --pcap writes nothing), no packet\n"
"headers in the trace for --pcap, or OUT not written; 2 bad usage (also\n"
"an existing OUT without -f).\n", REPORT_DEFAULT_TOP);
}

/* 0, 1 (--help, -V: done) or -EXIT_USAGE. */
static int parse_args(int argc, char **argv, struct report_opts *o,
		      const char **path, const char **pcap, bool *force)
{
	enum { OPT_PCAP = 256 };
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "top", required_argument, NULL, 'n' },
		{ "pcap", required_argument, NULL, OPT_PCAP },
		{ "force", no_argument, NULL, 'f' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c, by;

	*path = DEFAULT_INPUT;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:jn:fVh", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			by = report__by_parse(optarg);
			if (by < 0)
				return cli__bad_value("report", "--by", optarg,
						      "one of " REPORT_BY_VALUES);
			o->by = by;
			break;
		case 'j': o->json = true; break;
		case 'n':
			if (parse_u64(optarg, 1, 1000000, &o->top))
				return cli__bad_value("report", "--top", optarg,
						      "a number of rows from 1 to 1000000");
			break;
		case OPT_PCAP:
			if (!*optarg)
				return cli__bad_value("report", "--pcap", optarg, "a file name");
			*pcap = optarg;
			break;
		case 'f': *force = true; break;
		case 'V':
			printf("udpdrop %s\n", UDPDROP_VERSION);
			return 1;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
		default:
			return cli__bad_option("report", c, argv, longopts);
		}
	}
	if (optind < argc)
		*path = argv[optind++];
	if (optind < argc) {
		return cli__bad_arg("report", argv[optind]);
	}
	if (!**path)
		return cli__bad_value("report", "FILE", *path, "a file name");
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
