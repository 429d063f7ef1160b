// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Every command's option parser: its table (each option's good values,
 * each class of bad value, the aliases, the common -h -V -v -j) and the
 * command itself (do_CMD: the same errors, exit 2, before anything runs;
 * good values accepted up to a --help that ends the run). top's parser
 * is tested value by value in test_top_opts.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "opts.h"

static const struct {
	const char *name;
	const struct opts_cmd *table;
	int (*run)(int argc, char **argv);
	bool json;  /* the command prints JSON: -j, --json */
} cmds[] = {
	{ "top", &top_opts_cmd, do_top, true },
	{ "record", &record_opts_cmd, do_record, false },
	{ "report", &report_opts_cmd, do_report, true },
	{ "doctor", &doctor_opts_cmd, do_doctor, true },
	{ "gen", &gen_opts_cmd, do_gen, true },
	{ "sink", &sink_opts_cmd, do_sink, true },
	{ "demo", &demo_opts_cmd, do_demo, true },
	{ "serve", &serve_opts_cmd, do_serve, false },
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static char g_out[16384], g_err[4096];


static int g_verbose;

/* Parse argv with a table alone: the last id, or the result <= 0. */
static int table_parse(const struct opts_cmd *t, char **argv, int *last_id)
{
	struct capture c;
	struct opts_parser p;
	int argc = 0, id;

	while (argv[argc])
		argc++;
	capture_begin(&c);
	opts__begin(&p, t, argc, argv);
	*last_id = 0;
	while ((id = opts__next(&p)) > 0)
		*last_id = id;
	g_verbose = p.verbose;
	capture_end(&c, g_out, sizeof(g_out), g_err, sizeof(g_err));
	return id;
}

/* Run the command itself (do_CMD) on argv: its exit code. */
static int run_cmd(int (*run)(int, char **), char **argv)
{
	struct capture c;
	int argc = 0, rc;

	while (argv[argc])
		argc++;
	capture_begin(&c);
	rc = run(argc, argv);
	capture_end(&c, g_out, sizeof(g_out), g_err, sizeof(g_err));
	return rc;
}

static const struct opt_spec *find(const struct opts_cmd *t, const char *name)
{
	for (const struct opt_spec *s = t->specs; s->id; s++)
		if (s->name && !strcmp(s->name, name))
			return s;
	return NULL;
}

/* A value in the option's range, as typed: its default, else its minimum. */
static void good_value(const struct opt_spec *s, char *buf, size_t len)
{
	if (s->def)
		snprintf(buf, len, "%s", s->def);
	else if (s->type == OT_ENUM)
		snprintf(buf, len, "%s", s->values[0]);
	else if (s->type == OT_PORT || s->type == OT_PID)
		snprintf(buf, len, "1");
	else if (s->type == OT_STRING || s->type == OT_PATH || s->type == OT_NETNS)
		snprintf(buf, len, "x");
	else if (s->flags & OPTS_F_POW2)
		snprintf(buf, len, "%.0f", s->max);
	else
		snprintf(buf, len, s->min == (uint64_t)s->min ? "%.0f" : "%g", s->min);
}

static bool numeric(const struct opt_spec *s)
{
	return s->type == OT_SECONDS || s->type == OT_REAL || s->type == OT_COUNT ||
	       s->type == OT_PORT || s->type == OT_PID || s->type == OT_SIZE;
}

/* Every command: -h, --help, -V, --version, -v (counted), -j where it has JSON. */
static void test_common_options(void **state)
{
	for (size_t i = 0; i < NCMDS; i++) {
		const struct opts_cmd *t = cmds[i].table;
		char usage[64];
		int id;

		snprintf(usage, sizeof(usage), "Usage: udpdrop %s ", cmds[i].name);
		for (int k = 0; k < 2; k++) {
			char *h[] = { (char *)cmds[i].name, k ? "--help" : "-h", NULL };
			char *v[] = { (char *)cmds[i].name, k ? "--version" : "-V", NULL };

			if (run_cmd(cmds[i].run, h) != 0 || strncmp(g_out, usage, strlen(usage)))
				fail_msg("%s %s: %s", cmds[i].name, h[1], g_out);
			assert_string_equal(g_err, "");
			if (run_cmd(cmds[i].run, v) != 0)
				fail_msg("%s %s: exit not 0: %s", cmds[i].name, v[1], g_err);
			assert_string_equal(g_out, "udpdrop " UDPDROP_VERSION "\n");
		}
		char *vv[] = { (char *)cmds[i].name, "-v", "--verbose", "-vv", NULL };

		assert_int_equal(table_parse(t, vv, &id), 0);
		assert_int_equal(g_verbose, 4);
		const struct opt_spec *j = find(t, "json");

		if (cmds[i].json != (j && j->letter == 'j'))
			fail_msg("%s: -j, --json %s", cmds[i].name,
				 cmds[i].json ? "missing" : "where there is no JSON");
		/* the common letters mean the same everywhere */
		for (const struct opt_spec *s = t->specs; s->id; s++) {
			static const struct { int letter; const char *name; } fixed[] = {
				{ 'h', "help" }, { 'V', "version" }, { 'v', "verbose" },
				{ 'j', "json" }, { 'N', "netns" }, { 'p', "pid" },
				{ 'o', "output" }, { 'f', "force" }, { 'i', "interval" },
			};
			for (size_t f = 0; f < sizeof(fixed) / sizeof(fixed[0]); f++)
				if (s->letter == fixed[f].letter && strcmp(s->name, fixed[f].name))
					fail_msg("%s: -%c is --%s, not --%s", cmds[i].name,
						 s->letter, s->name, fixed[f].name);
			/* -b, -d, -n: one meaning outside gen and sink (iperf3's) */
			if (strcmp(cmds[i].name, "gen") && strcmp(cmds[i].name, "sink")) {
				if ((s->letter == 'b' && strcmp(s->name, "batch")) ||
				    (s->letter == 'd' && strcmp(s->name, "duration")) ||
				    (s->letter == 'n' && strcmp(s->name, "count")))
					fail_msg("%s: -%c is --%s", cmds[i].name, s->letter, s->name);
			}
		}
	}
}

/* Each option with a value: a good one parses; each bad class is one line. */
static void test_every_value(void **state)
{
	static const char *const bad[] = { "", "-1", "abc", "99999999999999999999999",
					   "nan", "1e999", "1x", "1\n\033[31mX" };

	for (size_t i = 0; i < NCMDS; i++) {
		const struct opts_cmd *t = cmds[i].table;

		for (const struct opt_spec *s = t->specs; s->id; s++) {
			char opt[64], val[64], want[160];
			int id;

			if (s->type == OT_FLAG)
				continue;
			snprintf(opt, sizeof(opt), "--%s", s->name);
			good_value(s, val, sizeof(val));
			char *good[] = { (char *)cmds[i].name, opt, val, NULL };

			if (table_parse(t, good, &id) != 0 || id != s->id)
				fail_msg("%s %s %s: %s", cmds[i].name, opt, val, g_err);
			char *missing[] = { (char *)cmds[i].name, opt, NULL };

			assert_int_equal(table_parse(t, missing, &id), OPTS_USAGE_ERROR);
			snprintf(want, sizeof(want), "udpdrop %s: option '%s' needs a value\n",
				 cmds[i].name, opt);
			if (strncmp(g_err, want, strlen(want)))
				fail_msg("%s %s (no value): %s", cmds[i].name, opt, g_err);
			if (!numeric(s) && s->type != OT_ENUM)
				continue; /* text: the command checks it (below, per command) */
			for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
				char *argv[] = { (char *)cmds[i].name, opt, (char *)bad[b], NULL };

				snprintf(want, sizeof(want), "udpdrop %s: invalid %s '", cmds[i].name, opt);
				if (table_parse(t, argv, &id) != OPTS_USAGE_ERROR ||
				    strncmp(g_err, want, strlen(want)) ||
				    !strstr(g_err, "\nTry 'udpdrop ") || strchr(g_err, '\033'))
					fail_msg("%s %s '%s': %s", cmds[i].name, opt, bad[b], g_err);
			}
			/* just out of range, both ends */
			if (numeric(s) && s->min > 0 && s->type != OT_SIZE) {
				char low[64];

				snprintf(low, sizeof(low), "%.17g", s->min * 0.99);
				char *argv[] = { (char *)cmds[i].name, opt, low, NULL };

				if (table_parse(t, argv, &id) != OPTS_USAGE_ERROR)
					fail_msg("%s %s %s: accepted", cmds[i].name, opt, low);
			}
			if (numeric(s) && s->max > 0) {
				char high[64];

				snprintf(high, sizeof(high), "%.0f", s->max + 1);
				char *argv[] = { (char *)cmds[i].name, opt, high, NULL };

				if (table_parse(t, argv, &id) != OPTS_USAGE_ERROR)
					fail_msg("%s %s %s: accepted", cmds[i].name, opt, high);
			}
		}
	}
}

/* Each command's help names every option, and fits an 80-column terminal. */
static void test_help_lists_every_option(void **state)
{
	for (size_t i = 0; i < NCMDS; i++) {
		char *h[] = { (char *)cmds[i].name, "--help", NULL };

		assert_int_equal(run_cmd(cmds[i].run, h), 0);
		for (char *line = g_out, *nl; *line; line = nl + 1) {
			nl = strchr(line, '\n');
			if (!nl)
				break;
			if (nl - line > 80)
				fail_msg("%s --help: a line of %d columns: %.*s", cmds[i].name,
					 (int)(nl - line), (int)(nl - line), line);
		}
		for (const struct opt_spec *s = cmds[i].table->specs; s->id; s++) {
			char col[96];

			opts__column(s, col, sizeof(col));
			if (!(s->flags & OPTS_F_HIDDEN) && !strstr(g_out, col))
				fail_msg("%s --help lacks '%s'", cmds[i].name, col);
		}
	}
}

#define CMD_ARGV(...) ((char *[]){ __VA_ARGS__, NULL })

/* do_CMD: exit 2 with exactly this first line (and the hint), nothing on stdout. */
static void expect_usage(int (*run)(int, char **), char **argv, const char *line)
{
	char want[512];

	snprintf(want, sizeof(want), "udpdrop %s: %s\nTry 'udpdrop %s --help'.\n",
		 argv[0], line, argv[0]);
	if (run_cmd(run, argv) != 2)
		fail_msg("%s: exit not 2: %s", line, g_err);
	assert_string_equal(g_out, "");
	assert_string_equal(g_err, want);
}

/* Good values, up to a --help that ends the parse: exit 0, the help printed. */
static void expect_accepted(int (*run)(int, char **), char **argv)
{
	if (run_cmd(run, argv) != 0 || strncmp(g_out, "Usage: udpdrop ", 15))
		fail_msg("%s %s...: %s", argv[0], argv[1], g_err);
	assert_string_equal(g_err, "");
}

static void test_record(void **state)
{
	expect_accepted(do_record, CMD_ARGV("record", "-o", "x.data", "-f", "-d", "2678400",
		"-i", "0.1", "-N", "blue", "--port", "53", "-p", "1", "--headers", "256",
		"--map-entries", "64", "--ring-size", "4K", "--buffer-size", "1G", "--no-events",
		"-v", "--help"));
	expect_usage(do_record, CMD_ARGV("record", "-d", "2678401"),
		     "invalid --duration '2678401': seconds from 0.1 to 2678400 (31 days)");
	expect_usage(do_record, CMD_ARGV("record", "--ring-size", "12K"),
		     "invalid --ring-size '12K': a power of 2 from 4K to 1G");
	expect_usage(do_record, CMD_ARGV("record", "--buffer-size", "2G"),
		     "invalid --buffer-size '2G': a power of 2 from 4K to 1G");
	expect_usage(do_record, CMD_ARGV("record", "--headers", "257"),
		     "invalid --headers '257': a number of bytes from 0 to 256");
	expect_usage(do_record, CMD_ARGV("record", "-o", ""), "invalid --output '': a file name");
	expect_usage(do_record, CMD_ARGV("record", "--map-entries", "63"),
		     "invalid --map-entries '63': a number from 64 to 16777216");
	expect_usage(do_record, CMD_ARGV("record", "--headers", "64", "--no-events"),
		     "--headers needs events: drop --no-events");
	expect_usage(do_record, CMD_ARGV("record", "-p", "1", "--", "true"),
		     "-p and a COMMAND: give one of them");
	expect_usage(do_record, CMD_ARGV("record", "-d", "1", "--", "true"),
		     "-d and a COMMAND: the command's exit ends the recording");
	expect_usage(do_record, CMD_ARGV("record", "--"), "nothing after '--': give the COMMAND to run");
	expect_usage(do_record, CMD_ARGV("record", "-j"), "unknown option '-j'");
	expect_usage(do_record, CMD_ARGV("record", "extra"), "unexpected argument 'extra'");
}

static void test_report(void **state)
{
	/* the new letters and the old ones: the same options */
	for (int old = 0; old < 2; old++)
		expect_accepted(do_report, CMD_ARGV("report", old ? "-b" : "-g", "cause",
			old ? "-n" : "-r", "1000000", "--by=second", "--top=1", "-j",
			"--pcap", "x.pcapng", "-f", "-v", "-h"));
	expect_usage(do_report, CMD_ARGV("report", "-g", "bogus"),
		     "invalid --by 'bogus': one of socket|cause|reason|location|second");
	expect_usage(do_report, CMD_ARGV("report", "-b", "bogus"),
		     "invalid --by 'bogus': one of socket|cause|reason|location|second");
	expect_usage(do_report, CMD_ARGV("report", "-n", "0"),
		     "invalid --top '0': a number of rows from 1 to 1000000");
	expect_usage(do_report, CMD_ARGV("report", "-r", "1000001"),
		     "invalid --top '1000001': a number of rows from 1 to 1000000");
	expect_usage(do_report, CMD_ARGV("report", "--pcap", ""), "invalid --pcap '': a file name");
	expect_usage(do_report, CMD_ARGV("report", ""), "invalid FILE '': a file name");
	expect_usage(do_report, CMD_ARGV("report", "a", "b"), "unexpected argument 'b'");
	expect_usage(do_report, CMD_ARGV("report", "-b"), "option '-b' needs a value");
}

static void test_doctor(void **state)
{
	expect_accepted(do_doctor, CMD_ARGV("doctor", "-d", "0.5", "--duration=3600", "-N", "x",
		"-j", "--counters-only", "-vv", "-h"));
	expect_usage(do_doctor, CMD_ARGV("doctor", "-d", "0.4"),
		     "invalid --duration '0.4': seconds from 0.5 to 3600");
	expect_usage(do_doctor, CMD_ARGV("doctor", "x"), "unexpected argument 'x'");
}

static void test_gen(void **state)
{
	/* iperf3's letters, and -d beside -t */
	expect_accepted(do_gen, CMD_ARGV("gen", "-b", "100M", "-l", "1472", "-t", "5", "-d", "0.001",
		"-n", "1", "-P", "1024", "-i", "0.1", "-j", "-4", "-6", "--burst", "1024",
		"--sndbuf", "512M", "--gso", "--catch-up", "--reorder", "2", "--no-control",
		"--no-tracer", "--pps", "max", "-h"));
	expect_accepted(do_gen, CMD_ARGV("gen", "--rate", "250kpps", "--pps", "1.5M", "-h"));
	expect_usage(do_gen, CMD_ARGV("gen", "h:1", "-d", "0"),
		     "invalid --duration '0': seconds, from 0.001 to a year");
	expect_usage(do_gen, CMD_ARGV("gen", "h:1", "-t", "31536001"),
		     "invalid --duration '31536001': seconds, from 0.001 to a year");
	expect_usage(do_gen, CMD_ARGV("gen", "h:1", "-b", "fast"),
		     "invalid --rate 'fast': bits per second above 0, at most 1T (100M, 1.5G), datagrams with pps (250kpps), or max");
	expect_usage(do_gen, CMD_ARGV("gen", "h:1", "-b", ""),
		     "invalid --rate '': bits per second above 0, at most 1T (100M, 1.5G), datagrams with pps (250kpps), or max");
	expect_usage(do_gen, CMD_ARGV("gen", "h:1", "--pps", "0"),
		     "invalid --pps '0': datagrams per second above 0, at most 1G (250k, 1.5M), or max");
	expect_usage(do_gen, CMD_ARGV("gen", "h:1", "-l", "47"),
		     "invalid --size '47': bytes from 48 (the header) to 65507 (IPv4) or 65527 (IPv6)");
	expect_usage(do_gen, CMD_ARGV("gen", "h:1", "-P", "1025"), "invalid --flows '1025': 1 to 1024 flows");
	expect_usage(do_gen, CMD_ARGV("gen", "h:1", "--burst", "0"),
		     "invalid --burst '0': datagrams per slot, 1 to 1024");
	expect_usage(do_gen, CMD_ARGV("gen", "h:1", "--sndbuf", "1023"),
		     "invalid --sndbuf '1023': bytes, 1K to 1G (64K, 4M)");
	expect_usage(do_gen, CMD_ARGV("gen", "h:1", "--reorder", "1"),
		     "invalid --reorder '1': every Nth datagram goes late, N from 2 to 1000000");
	expect_usage(do_gen, CMD_ARGV("gen", "h:1", "-n", "0"),
		     "invalid --count '0': a number of datagrams, at least 1");
	expect_usage(do_gen, CMD_ARGV("gen", "h:1", "-b", "1M", "--pps", "1k"),
		     "--rate and --pps both set the rate: give one");
	expect_usage(do_gen, CMD_ARGV("gen", "h:1", "-d", "1", "-n", "5"),
		     "--duration and --count both end the run: give one");
	expect_usage(do_gen, CMD_ARGV("gen"), "where to? give HOST:PORT");
	expect_usage(do_gen, CMD_ARGV("gen", "h:1", "h:2"), "unexpected argument 'h:2'");
	expect_usage(do_gen, CMD_ARGV("gen", "h"), "invalid HOST:PORT 'h': a port is missing (HOST:PORT)");
}

static void test_sink(void **state)
{
	expect_accepted(do_sink, CMD_ARGV("sink", "--rcvbuf", "4MiB", "--read-delay", "0",
		"--stall", "300", "--every", "1000", "-x", "lo", "-d", "0.1", "-1", "-w", "1048576",
		"-i", "3600", "-j", "--tracer", "--no-tracer", "-vh"));
	expect_usage(do_sink, CMD_ARGV("sink", "127.0.0.1:1", "--stall", "5"),
		     "--stall needs --every (stop reading for MS every MS)");
	expect_usage(do_sink, CMD_ARGV("sink", "127.0.0.1:1", "--every", "5"),
		     "--every needs --stall (stop reading for MS every MS)");
	expect_usage(do_sink, CMD_ARGV("sink", "127.0.0.1:1", "--stall", "5", "--every", "5"),
		     "--stall must be shorter than --every (else it never reads)");
	expect_usage(do_sink, CMD_ARGV("sink", "127.0.0.1:1", "-w", "0"),
		     "invalid --reorder-window '0': a number of datagrams, 1 to 1048576");
	expect_usage(do_sink, CMD_ARGV("sink", "127.0.0.1:1", "-x", ""),
		     "invalid --xdp '': an interface name");
	expect_usage(do_sink, CMD_ARGV("sink", "127.0.0.1:1", "--rcvbuf", "2G"),
		     "invalid --rcvbuf '2G': a size in bytes, 1 to 1 GiB (4096, 64K, 4MiB)");
	expect_usage(do_sink, CMD_ARGV("sink", "127.0.0.1:1", "--read-delay", "10000001"),
		     "invalid --read-delay '10000001': microseconds per datagram, 0 to 10000000");
	expect_usage(do_sink, CMD_ARGV("sink", "127.0.0.1:1", "-d", "0"),
		     "invalid --duration '0': seconds, 0.1 or more");
	expect_usage(do_sink, CMD_ARGV("sink"), "missing ADDR:PORT to listen on");
	expect_usage(do_sink, CMD_ARGV("sink", "127.0.0.1:0"), "invalid port '0': a port from 1 to 65535");
}

static void test_demo(void **state)
{
	expect_accepted(do_demo, CMD_ARGV("demo", "rcvbuf", "-d", "0.5", "--duration", "86400",
		"-b", "-j", "-v", "-h"));
	expect_usage(do_demo, CMD_ARGV("demo", "-d", "0.4"),
		     "invalid --duration '0.4': give seconds, 0.5 to 86400");
	expect_usage(do_demo, CMD_ARGV("demo", "-x"), "unknown option '-x'");
	expect_usage(do_demo, CMD_ARGV("demo", "--json=1"), "unknown option '--json=1'");
	expect_usage(do_demo, CMD_ARGV("demo", "-d"), "option '-d' needs a value");
	expect_usage(do_demo, CMD_ARGV("demo", "bogus"),
		     "invalid scenario 'bogus': rcvbuf, frag, noport, sender or all");
	expect_usage(do_demo, CMD_ARGV("demo", "rcvbuf", "fr\033ag"),
		     "one scenario at most (got 'fr?ag' after 'rcvbuf')");
}

static void test_serve(void **state)
{
	expect_accepted(do_serve, CMD_ARGV("serve", "--listen", "127.0.0.1:0", "-i", "0.1",
		"--interval=3600", "-N", "x", "--port", "53", "-p", "1", "--max-connections", "1",
		"--map-entries", "64", "--attach", "raw_tp", "-vv", "-h"));
	expect_usage(do_serve, CMD_ARGV("serve", "-i", "0.05"),
		     "invalid --interval '0.05': seconds from 0.1 to 3600");
	expect_usage(do_serve, CMD_ARGV("serve", "--max-connections", "0"),
		     "invalid --max-connections '0': a number from 1 to 1024");
	expect_usage(do_serve, CMD_ARGV("serve", "--listen", "nonsense"),
		     "invalid --listen 'nonsense': ADDR:PORT, [ADDR]:PORT, :PORT or fd:N");
	expect_usage(do_serve, CMD_ARGV("serve", "--listen", "1.2.3.4:65536"),
		     "invalid --listen '1.2.3.4:65536': ADDR:PORT, [ADDR]:PORT, :PORT or fd:N");
	expect_usage(do_serve, CMD_ARGV("serve", "x"), "unexpected argument 'x'");
}

static void test_top_aliases(void **state)
{
	expect_accepted(do_top, CMD_ARGV("top", "--no-colour", "--no-color", "-b", "-h"));
	expect_usage(do_top, CMD_ARGV("top", "--no-colour=1"), "unknown option '--no-colour=1'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_common_options),
		cmocka_unit_test(test_every_value),
		cmocka_unit_test(test_help_lists_every_option),
		cmocka_unit_test(test_record),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_doctor),
		cmocka_unit_test(test_gen),
		cmocka_unit_test(test_sink),
		cmocka_unit_test(test_demo),
		cmocka_unit_test(test_top_aliases),
		cmocka_unit_test(test_serve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
