// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for src/cmd/top/top.c: top__parse_args, every option, its bounds, and the usage errors. */
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
#include "log.h"
#include "top.h"
#include "tracer.h"

/* What the last parse printed on stdout and stderr. */
static char g_out[4096], g_err[4096];


/*
 * Run top__parse_args on a NULL-terminated argv (argv[0] included), with
 * stdout and stderr captured into g_out / g_err.
 */
static int parse_argv(struct top_opts *o, char **argv)
{
	struct capture c;
	int argc = 0, ret;

	while (argv[argc])
		argc++;
	top__opts_init(o);
	capture_begin(&c);
	ret = top__parse_args(argc, argv, o);
	capture_end(&c, g_out, sizeof(g_out), g_err, sizeof(g_err));
	return ret;
}

/* PARSE(&o, "-b", "-i", "2"): argv[0] is "top". */
#define PARSE(o, ...) parse_argv((o), (char *[]){ "top", ##__VA_ARGS__, NULL })

/* A usage error: -EXIT_USAGE, nothing on stdout, `msg` on stderr. */
#define ASSERT_USAGE(msg, ...) do {					\
	struct top_opts o_;						\
	int r_ = PARSE(&o_, __VA_ARGS__);				\
									\
	if (r_ != -EXIT_USAGE)						\
		fail_msg("%s: returned %d, want %d", msg, r_, -EXIT_USAGE); \
	assert_string_equal(g_out, "");					\
	if (!strstr(g_err, msg))					\
		fail_msg("stderr lacks \"%s\": %s", msg, g_err);	\
	assert_non_null(strstr(g_err, "Try 'udpdrop top --help'.\n"));	\
} while (0)

static void assert_untouched_except(const struct top_opts *o,
				    const struct top_opts *want)
{
	struct model_opts a = o->model, b = want->model;

	/* --k8s-logs has its own test: the default everywhere else */
	assert_string_equal(a.k8s_logs, b.k8s_logs ? b.k8s_logs : CLI_K8S_LOGS_DEFAULT);
	a.k8s_logs = b.k8s_logs = NULL;
	assert_memory_equal(&a, &b, sizeof(a));
	assert_memory_equal(&o->tracer, &want->tracer, sizeof(o->tracer));
	assert_true(o->interval == want->interval);
	assert_int_equal(o->count, want->count);
	assert_int_equal(o->batch, want->batch);
	assert_int_equal(o->json, want->json);
	assert_ptr_equal(o->netns_spec, want->netns_spec);
}

static void test_defaults(void **state)
{
	struct top_opts o, want = { .interval = 1.0 };

	assert_int_equal(PARSE(&o), 0);
	assert_true(o.interval == 1.0);
	assert_int_equal(o.count, 0);
	assert_false(o.batch);
	assert_false(o.json);
	assert_null(o.netns_spec);
	assert_int_equal(o.model.pid, 0);
	assert_int_equal(o.model.port, 0);
	assert_int_equal(o.model.netns, 0);
	assert_false(o.model.all);
	assert_int_equal(o.tracer.mode, ATTACH_AUTO);
	assert_int_equal(o.tracer.map_entries, 0);
	assert_int_equal(o.tracer.filter_port, 0);
	assert_false(o.tracer.no_rx_sk);
	assert_untouched_except(&o, &want);
	assert_string_equal(g_out, "");
	assert_string_equal(g_err, "");
	/* "--" alone ends the options and leaves nothing behind */
	assert_int_equal(PARSE(&o, "--"), 0);
	assert_untouched_except(&o, &want);
}

/* --k8s-logs DIR: a directory, or a usage error naming it */
static void test_k8s_logs(void **state)
{
	struct top_opts o, want = { .interval = 1.0, .model.k8s_logs = "/tmp" };

	assert_int_equal(PARSE(&o, "--k8s-logs", "/tmp"), 0);
	assert_untouched_except(&o, &want);
	ASSERT_USAGE("--k8s-logs /nonexistent-udpdrop: not a directory", "--k8s-logs",
		     "/nonexistent-udpdrop");
	ASSERT_USAGE("--k8s-logs /etc/passwd: not a directory", "--k8s-logs", "/etc/passwd");
}

static void test_batch(void **state)
{
	struct top_opts o, want = { .interval = 1.0, .batch = true };

	assert_int_equal(PARSE(&o, "-b"), 0);
	assert_true(o.batch);
	assert_false(o.json);
	assert_untouched_except(&o, &want);
	assert_int_equal(PARSE(&o, "--batch"), 0);
	assert_untouched_except(&o, &want);
}

static void test_json_implies_batch(void **state)
{
	struct top_opts o, want = { .interval = 1.0, .batch = true, .json = true };

	assert_int_equal(PARSE(&o, "-j"), 0);
	assert_true(o.json);
	assert_true(o.batch);
	assert_untouched_except(&o, &want);
	assert_int_equal(PARSE(&o, "--json"), 0);
	assert_untouched_except(&o, &want);
	/* bundled with -b: the same */
	assert_int_equal(PARSE(&o, "-bj"), 0);
	assert_untouched_except(&o, &want);
}

static void test_interval(void **state)
{
	struct top_opts o, want = { .interval = 0.5 };

	assert_int_equal(PARSE(&o, "-i", "0.5"), 0);
	assert_true(o.interval == 0.5);
	assert_untouched_except(&o, &want);
	assert_int_equal(PARSE(&o, "-i0.5"), 0);
	assert_true(o.interval == 0.5);
	assert_int_equal(PARSE(&o, "--interval", "2"), 0);
	assert_true(o.interval == 2.0);
	assert_int_equal(PARSE(&o, "--interval=0.25"), 0);
	assert_true(o.interval == 0.25);
	/* the last one wins */
	assert_int_equal(PARSE(&o, "-i", "3", "-i", "4"), 0);
	assert_true(o.interval == 4.0);
}

static void test_interval_bounds(void **state)
{
	struct top_opts o;

	assert_int_equal(PARSE(&o, "-i", "0.1"), 0);
	assert_true(o.interval == 0.1);
	assert_int_equal(PARSE(&o, "-i", "3600"), 0);
	assert_true(o.interval == 3600.0);
	ASSERT_USAGE("invalid --interval '0.09': seconds from 0.1 to 3600", "-i", "0.09");
	ASSERT_USAGE("invalid --interval '3600.1'", "-i", "3600.1");
	ASSERT_USAGE("invalid --interval '-1'", "-i", "-1");
	ASSERT_USAGE("invalid --interval 'abc'", "-i", "abc");
	ASSERT_USAGE("invalid --interval ''", "-i", "");
	ASSERT_USAGE("invalid --interval '0'", "--interval", "0");
	ASSERT_USAGE("invalid --interval 'inf'", "--interval=inf");
	ASSERT_USAGE("invalid --interval '1s'", "-i", "1s");
}

static void test_count(void **state)
{
	struct top_opts o, want = { .interval = 1.0, .count = 5 };

	assert_int_equal(PARSE(&o, "-n", "5"), 0);
	assert_int_equal(o.count, 5);
	assert_untouched_except(&o, &want);
	assert_int_equal(PARSE(&o, "--count", "1"), 0);
	assert_int_equal(o.count, 1);
	assert_int_equal(PARSE(&o, "--count=4294967295"), 0);
	assert_int_equal(o.count, 4294967295u);
	ASSERT_USAGE("invalid --count '0': a whole number of intervals, at least 1", "-n", "0");
	ASSERT_USAGE("invalid --count 'x'", "-n", "x");
	ASSERT_USAGE("invalid --count '-1'", "-n", "-1");
	ASSERT_USAGE("invalid --count '1.5'", "-n", "1.5");
	ASSERT_USAGE("invalid --count '4294967296'", "-n", "4294967296");
}

static void test_pid(void **state)
{
	struct top_opts o, want = { .interval = 1.0, .model.pid = 123 };

	assert_int_equal(PARSE(&o, "-p", "123"), 0);
	assert_int_equal(o.model.pid, 123);
	/* the kernel-side netns filter comes later, from the pid's netns */
	assert_int_equal(o.tracer.filter_netns, 0);
	assert_untouched_except(&o, &want);
	assert_int_equal(PARSE(&o, "--pid", "2147483647"), 0);
	assert_int_equal(o.model.pid, 2147483647);
	ASSERT_USAGE("invalid --pid '0': a process id", "-p", "0");
	ASSERT_USAGE("invalid --pid '-5'", "-p", "-5");
	ASSERT_USAGE("invalid --pid '2147483648'", "--pid", "2147483648");
	ASSERT_USAGE("invalid --pid 'init'", "--pid", "init");
}

static void test_port(void **state)
{
	struct top_opts o, want = { .interval = 1.0, .model.port = 5001,
				    .tracer.filter_port = 5001 };

	assert_int_equal(PARSE(&o, "--port", "5001"), 0);
	assert_int_equal(o.model.port, 5001);
	assert_int_equal(o.tracer.filter_port, 5001);
	assert_untouched_except(&o, &want);
	assert_int_equal(PARSE(&o, "--port=1"), 0);
	assert_int_equal(o.model.port, 1);
	assert_int_equal(o.tracer.filter_port, 1);
	assert_int_equal(PARSE(&o, "--port", "65535"), 0);
	assert_int_equal(o.model.port, 65535);
	assert_int_equal(o.tracer.filter_port, 65535);
	ASSERT_USAGE("invalid --port '0': a port from 1 to 65535", "--port", "0");
	ASSERT_USAGE("invalid --port '70000'", "--port", "70000");
	ASSERT_USAGE("invalid --port '65536'", "--port", "65536");
	ASSERT_USAGE("invalid --port 'abc'", "--port", "abc");
	ASSERT_USAGE("invalid --port ' 53'", "--port", " 53");
}

static void test_netns(void **state)
{
	struct top_opts o;
	char *argv[] = { "top", "-N", "blue", NULL };

	/* stored as given: resolution happens later, in do_top */
	assert_int_equal(parse_argv(&o, argv), 0);
	assert_ptr_equal(o.netns_spec, argv[2]);
	assert_string_equal(o.netns_spec, "blue");
	assert_int_equal(o.model.netns, 0);
	assert_int_equal(o.tracer.filter_netns, 0);
	assert_int_equal(PARSE(&o, "--netns", "4026531840"), 0);
	assert_string_equal(o.netns_spec, "4026531840");
	assert_int_equal(o.model.netns, 0);
	assert_int_equal(PARSE(&o, "--netns=/proc/1/ns/net"), 0);
	assert_string_equal(o.netns_spec, "/proc/1/ns/net");
	/* a name that exists nowhere is not the parser's business */
	assert_int_equal(PARSE(&o, "-N", "no-such-netns"), 0);
	assert_string_equal(o.netns_spec, "no-such-netns");
}

static void test_all(void **state)
{
	struct top_opts o, want = { .interval = 1.0, .model.all = true };

	assert_int_equal(PARSE(&o, "-a"), 0);
	assert_true(o.model.all);
	assert_untouched_except(&o, &want);
	assert_int_equal(PARSE(&o, "--all"), 0);
	assert_untouched_except(&o, &want);
}

static void test_map_entries(void **state)
{
	struct top_opts o, want = { .interval = 1.0, .tracer.map_entries = 64 };

	assert_int_equal(PARSE(&o, "--map-entries", "64"), 0);
	assert_int_equal(o.tracer.map_entries, 64);
	assert_untouched_except(&o, &want);
	assert_int_equal(PARSE(&o, "--map-entries", "16777216"), 0);
	assert_int_equal(o.tracer.map_entries, 16777216);
	assert_int_equal(PARSE(&o, "--map-entries=4096"), 0);
	assert_int_equal(o.tracer.map_entries, 4096);
	ASSERT_USAGE("invalid --map-entries '63': a number from 64 to 16777216",
		     "--map-entries", "63");
	ASSERT_USAGE("invalid --map-entries '16777217'", "--map-entries", "16777217");
	ASSERT_USAGE("invalid --map-entries '0'", "--map-entries", "0");
	ASSERT_USAGE("invalid --map-entries '1k'", "--map-entries", "1k");
}

static void test_attach(void **state)
{
	static const struct {
		const char *arg;
		enum attach_mode mode;
	} cases[] = {
		{ "tp_btf", ATTACH_TP_BTF },
		{ "raw_tp", ATTACH_RAW_TP },
		{ "tracepoint", ATTACH_TRACEPOINT },
		{ "auto", ATTACH_AUTO },
	};
	struct top_opts o;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct top_opts want = { .interval = 1.0,
					 .tracer.mode = cases[i].mode };

		assert_int_equal(PARSE(&o, "--attach", (char *)cases[i].arg), 0);
		if (o.tracer.mode != cases[i].mode)
			fail_msg("--attach %s: mode %d, want %d", cases[i].arg,
				 o.tracer.mode, cases[i].mode);
		assert_untouched_except(&o, &want);
	}
	/* "auto" after another mode sets it back */
	assert_int_equal(PARSE(&o, "--attach", "raw_tp", "--attach=auto"), 0);
	assert_int_equal(o.tracer.mode, ATTACH_AUTO);
	ASSERT_USAGE("invalid --attach 'foo': auto, tp_btf, raw_tp or tracepoint",
		     "--attach", "foo");
	ASSERT_USAGE("invalid --attach 'TP_BTF'", "--attach", "TP_BTF");
	ASSERT_USAGE("invalid --attach ''", "--attach", "");
}

static void test_no_rx_sk(void **state)
{
	struct top_opts o, want = { .interval = 1.0, .tracer.no_rx_sk = true };

	assert_int_equal(PARSE(&o, "--no-rx-sk"), 0);
	assert_true(o.tracer.no_rx_sk);
	assert_untouched_except(&o, &want);
}

static void test_verbose(void **state)
{
	struct top_opts o;

	assert_int_equal(PARSE(&o, "-v"), 0);
	assert_int_equal(log__level(), LOG_INFO);
	assert_int_equal(PARSE(&o, "-vv"), 0);
	assert_int_equal(log__level(), LOG_DEBUG);
	assert_int_equal(PARSE(&o, "--verbose", "-v", "-v"), 0);
	assert_int_equal(log__level(), LOG_DEBUG);
	assert_int_equal(PARSE(&o), 0);
	assert_int_equal(log__level(), LOG_WARN);
}

static void test_combined(void **state)
{
	struct top_opts o;
	struct top_opts want = {
		.interval = 0.2, .count = 3, .batch = true, .json = true,
		.model = { .pid = 42, .port = 53, .all = true },
		.tracer = { .filter_port = 53, .mode = ATTACH_TRACEPOINT,
			    .no_rx_sk = true, .map_entries = 128 },
	};
	char *argv[] = { "top", "-ajn3", "--port=53", "-i", "0.2", "-p42",
			 "-N", "red", "--attach", "tracepoint", "--no-rx-sk",
			 "--map-entries", "128", NULL };

	assert_int_equal(parse_argv(&o, argv), 0);
	want.netns_spec = o.netns_spec;
	assert_string_equal(o.netns_spec, "red");
	assert_untouched_except(&o, &want);
	assert_string_equal(g_out, "");
	assert_string_equal(g_err, "");
}

static void test_unknown_option(void **state)
{
	ASSERT_USAGE("unknown option '--bogus'", "--bogus");
	ASSERT_USAGE("unknown option '--bogus'", "-b", "--bogus", "-j");
	ASSERT_USAGE("unknown option '-z'", "-z");
	/* a no-argument option given a value */
	ASSERT_USAGE("unknown option '--batch=1'", "--batch=1");
}

static void test_positional(void **state)
{
	ASSERT_USAGE("unexpected argument 'extra'", "extra");
	ASSERT_USAGE("unexpected argument 'extra'", "-b", "extra");
	/* getopt moves options first: a later option does not hide it */
	ASSERT_USAGE("unexpected argument 'extra'", "extra", "-b");
	ASSERT_USAGE("unexpected argument 'extra'", "--", "extra");
	ASSERT_USAGE("unexpected argument '-b'", "--", "-b");
}

static void test_missing_value(void **state)
{
	ASSERT_USAGE("option '-i' needs a value", "-i");
	ASSERT_USAGE("option '-i' needs a value", "-b", "-i");
	ASSERT_USAGE("option '--interval' needs a value", "--interval");
	ASSERT_USAGE("option '-n' needs a value", "-n");
	ASSERT_USAGE("option '-p' needs a value", "-p");
	ASSERT_USAGE("option '-N' needs a value", "-N");
	ASSERT_USAGE("option '--port' needs a value", "--port");
	ASSERT_USAGE("option '--map-entries' needs a value", "--map-entries");
	ASSERT_USAGE("option '--attach' needs a value", "--attach");
}

/* The next option is taken as the value, as getopt does: then rejected. */
static void test_value_is_next_option(void **state)
{
	ASSERT_USAGE("invalid --interval '-b'", "-i", "-b");
	ASSERT_USAGE("invalid --port '--json'", "--port", "--json");
}

static void test_help(void **state)
{
	struct top_opts o;

	assert_int_equal(PARSE(&o, "-h"), 1);
	assert_int_equal(strncmp(g_out, "Usage: udpdrop top [OPTIONS]\n", 29), 0);
	assert_non_null(strstr(g_out, "  -i, --interval SECS"));
	assert_non_null(strstr(g_out, "      --attach MODE"));
	assert_string_equal(g_err, "");
	assert_int_equal(PARSE(&o, "--help"), 1);
	assert_int_equal(strncmp(g_out, "Usage: udpdrop top [OPTIONS]\n", 29), 0);
	/* help wins over a bad value that comes after it */
	assert_int_equal(PARSE(&o, "--help", "-i", "0"), 1);
}

static void test_version(void **state)
{
	struct top_opts o;

	assert_int_equal(PARSE(&o, "-V"), 1);
	assert_string_equal(g_out, "udpdrop " UDPDROP_VERSION "\n");
	assert_string_equal(g_err, "");
	assert_int_equal(PARSE(&o, "--version"), 1);
	assert_string_equal(g_out, "udpdrop " UDPDROP_VERSION "\n");
}

/* optind is reset by the function: a parse after an error starts clean. */
static void test_reparse(void **state)
{
	struct top_opts o, want = { .interval = 1.0, .count = 2 };

	ASSERT_USAGE("unexpected argument 'x'", "-b", "x");
	assert_int_equal(PARSE(&o, "-n", "2"), 0);
	assert_untouched_except(&o, &want);
	ASSERT_USAGE("option '-n' needs a value", "-n");
	assert_int_equal(PARSE(&o, "-n", "2"), 0);
	assert_untouched_except(&o, &want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_k8s_logs),
		cmocka_unit_test(test_batch),
		cmocka_unit_test(test_json_implies_batch),
		cmocka_unit_test(test_interval),
		cmocka_unit_test(test_interval_bounds),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_pid),
		cmocka_unit_test(test_port),
		cmocka_unit_test(test_netns),
		cmocka_unit_test(test_all),
		cmocka_unit_test(test_map_entries),
		cmocka_unit_test(test_attach),
		cmocka_unit_test(test_no_rx_sk),
		cmocka_unit_test(test_verbose),
		cmocka_unit_test(test_combined),
		cmocka_unit_test(test_unknown_option),
		cmocka_unit_test(test_positional),
		cmocka_unit_test(test_missing_value),
		cmocka_unit_test(test_value_is_next_option),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_reparse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
