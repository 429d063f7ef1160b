// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for src/base/opts.c, the option tables: every value type with good
 * values and each class of bad one, aliases, defaults, the common -h -V -v,
 * and the --help and man text made from a table.
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
#include "opts.h"

enum { T_FLAG = 1, T_SECS, T_REAL, T_COUNT, T_PORT, T_PID, T_NETNS, T_SIZE, T_POW2,
       T_ENUM, T_STRING, T_PATH, T_LETTER, T_DEF };

static const char *const colours[] = { "red", "green", "blue", NULL };

static const struct opt_spec specs[] = {
	{ T_FLAG, "flag", 'f', OT_FLAG, .help = "a flag", .alias_name = "flagge" },
	{ T_SECS, "secs", 's', OT_SECONDS, "SECS", 0.1, 3600, .want = "seconds from %r",
	  .help = "seconds (%r)" },
	{ T_REAL, "real", 0, OT_REAL, "MS", 0.001, 1000, .want = "ms, %r", .help = "ms" },
	{ T_COUNT, "count", 'n', OT_COUNT, "N", 1, UINT32_MAX, .want = "a count, at least 1",
	  .help = "a count\non two lines" },
	{ T_PORT, "port", 0, OT_PORT, "PORT", .want = "a port from %r", .help = "a port" },
	{ T_PID, "pid", 'p', OT_PID, "PID", .want = "a process id", .help = "a pid" },
	{ T_NETNS, "netns", 'N', OT_NETNS, "NS", .help = "a netns" },
	{ T_SIZE, "size", 0, OT_SIZE, "BYTES", 1024, 1 << 20, .want = "bytes, %r",
	  .help = "a size" },
	{ T_POW2, "ring", 0, OT_SIZE, "SIZE", 4096, 1 << 30, .range = "4K to 1G",
	  .flags = OPTS_F_POW2, .want = "a power of 2 from %r", .help = "a ring" },
	{ T_ENUM, "colour", 'c', OT_ENUM, "NAME", .values = colours, .def = "red",
	  .want = "red, green or blue", .help = "a colour (default %d)", .alias_letter = 'k',
	  .alias_note = "the older spelling" },
	{ T_STRING, "text", 0, OT_STRING, "TEXT", .want = "some text", .help = "text" },
	{ T_PATH, "output", 'o', OT_PATH, "FILE", .want = "a file name", .help = "a file" },
	{ T_LETTER, NULL, '4', OT_FLAG, .help = "a letter alone" },
	{ T_DEF, "interval", 'i', OT_SECONDS, "SECS", 0.5, 60, .def = "2",
	  .flags = OPTS_F_APPLY_DEFAULT, .want = "seconds from %r", .help = "every SECS (default %d)" },
	OPTS_VERBOSE("more"),
	OPTS_VERSION,
	OPTS_HELP,
	{},
};

static const struct opts_cmd cmd = {
	.prog = "prog", .name = "cmd", .version = "9.9", .usage = "[OPTIONS] ARG",
	.about = "About it.\n", .epilog = "Exit codes: none.\n", .specs = specs,
};

static char g_out[8192], g_err[4096];


/* The last id (or the result <= 0) of parsing argv; the values in *p. */
struct result {
	int ret;                 /* 0 at the end, or OPTS_DONE / OPTS_USAGE_ERROR */
	int ids[32], nids;
	double d[32];
	uint64_t u[32];
	const char *arg[32];
	int index[32];
	bool is_default[32];
	int verbose, optind;
};

static struct result parse_argv(char **argv)
{
	struct capture c;
	struct opts_parser p;
	struct result r = {};
	int argc = 0, id;

	while (argv[argc])
		argc++;
	capture_begin(&c);
	opts__begin(&p, &cmd, argc, argv);
	while ((id = opts__next(&p)) > 0 && r.nids < 32) {
		r.ids[r.nids] = id;
		r.d[r.nids] = p.d;
		r.u[r.nids] = p.u;
		r.arg[r.nids] = p.arg;
		r.index[r.nids] = p.index;
		r.is_default[r.nids] = p.is_default;
		r.nids++;
	}
	r.ret = id;
	r.verbose = p.verbose;
	r.optind = p.optind;
	capture_end(&c, g_out, sizeof(g_out), g_err, sizeof(g_err));
	return r;
}

#define PARSE(...) parse_argv((char *[]){ "cmd", ##__VA_ARGS__, NULL })

/* A usage error: OPTS_USAGE_ERROR, nothing on stdout, line and hint on stderr. */
#define ASSERT_BAD(line, ...) do {					\
	struct result r_ = PARSE(__VA_ARGS__);				\
									\
	if (r_.ret != OPTS_USAGE_ERROR)					\
		fail_msg("%s: returned %d", line, r_.ret);		\
	assert_string_equal(g_out, "");					\
	assert_string_equal(g_err, "prog cmd: " line "\nTry 'prog cmd --help'.\n"); \
} while (0)

/* The one option given parses to id (after the default of -i, always first). */
static struct result parse_one(int id, char **argv)
{
	struct result r = parse_argv(argv);

	assert_int_equal(r.ret, 0);
	assert_string_equal(g_err, "");
	assert_int_equal(r.nids, 2);
	assert_int_equal(r.ids[0], T_DEF);
	assert_true(r.is_default[0]);
	assert_int_equal(r.ids[1], id);
	assert_false(r.is_default[1]);
	return r;
}

#define ONE(id, ...) parse_one((id), (char *[]){ "cmd", ##__VA_ARGS__, NULL })

static void test_defaults(void **state)
{
	struct result r = PARSE();

	assert_int_equal(r.ret, 0);
	assert_int_equal(r.nids, 1);
	assert_int_equal(r.ids[0], T_DEF);
	assert_true(r.d[0] == 2.0);
	assert_true(r.is_default[0]);
	assert_int_equal(r.optind, 1);
	/* given, it comes after the default: the last one wins */
	r = PARSE("-i", "5");
	assert_int_equal(r.nids, 2);
	assert_true(r.d[1] == 5.0);
	assert_false(r.is_default[1]);
}

static void test_flag(void **state)
{
	ONE(T_FLAG, "-f");
	ONE(T_FLAG, "--flag");
	ONE(T_FLAG, "--flagge"); /* the alias */
	ONE(T_LETTER, "-4");
	ASSERT_BAD("unknown option '--flag=1'", "--flag=1");
	ASSERT_BAD("unknown option '--flagge=x'", "--flagge=x");
}

static void test_seconds(void **state)
{
	assert_true(ONE(T_SECS, "-s", "0.1").d[1] == 0.1);
	assert_true(ONE(T_SECS, "--secs=3600").d[1] == 3600);
	assert_true(ONE(T_SECS, "-s1.5").d[1] == 1.5);
	ASSERT_BAD("invalid --secs '0.09': seconds from 0.1 to 3600", "-s", "0.09");
	ASSERT_BAD("invalid --secs '3601': seconds from 0.1 to 3600", "-s", "3601");
	ASSERT_BAD("invalid --secs '': seconds from 0.1 to 3600", "-s", "");
	ASSERT_BAD("invalid --secs '-1': seconds from 0.1 to 3600", "-s", "-1");
	ASSERT_BAD("invalid --secs 'abc': seconds from 0.1 to 3600", "--secs", "abc");
	ASSERT_BAD("invalid --secs 'nan': seconds from 0.1 to 3600", "-s", "nan");
	ASSERT_BAD("invalid --secs '1e999': seconds from 0.1 to 3600", "-s", "1e999");
	ASSERT_BAD("invalid --secs '1x': seconds from 0.1 to 3600", "-s", "1x");
	/* what reaches the terminal is printable */
	ASSERT_BAD("invalid --secs '1??[31mX': seconds from 0.1 to 3600", "-s", "1\n\033[31mX");
	assert_true(ONE(T_REAL, "--real", "0.001").d[1] == 0.001);
	ASSERT_BAD("invalid --real '0': ms, 0.001 to 1000", "--real", "0");
}

static void test_count(void **state)
{
	assert_int_equal(ONE(T_COUNT, "-n", "1").u[1], 1);
	assert_int_equal(ONE(T_COUNT, "--count=4294967295").u[1], 4294967295u);
	ASSERT_BAD("invalid --count '0': a count, at least 1", "-n", "0");
	ASSERT_BAD("invalid --count '4294967296': a count, at least 1", "-n", "4294967296");
	ASSERT_BAD("invalid --count '99999999999999999999999': a count, at least 1",
		   "-n", "99999999999999999999999");
	ASSERT_BAD("invalid --count '1.5': a count, at least 1", "-n", "1.5");
	ASSERT_BAD("invalid --count '-1': a count, at least 1", "-n", "-1");
	ASSERT_BAD("invalid --count ' 1': a count, at least 1", "-n", " 1");
}

static void test_port_pid(void **state)
{
	assert_int_equal(ONE(T_PORT, "--port", "1").u[1], 1);
	assert_int_equal(ONE(T_PORT, "--port", "65535").u[1], 65535);
	ASSERT_BAD("invalid --port '0': a port from 1 to 65535", "--port", "0");
	ASSERT_BAD("invalid --port '65536': a port from 1 to 65535", "--port", "65536");
	assert_int_equal(ONE(T_PID, "-p", "2147483647").u[1], 2147483647);
	ASSERT_BAD("invalid --pid '2147483648': a process id", "-p", "2147483648");
	ASSERT_BAD("invalid --pid '0': a process id", "--pid", "0");
}

static void test_netns_string_path(void **state)
{
	/* a netns is resolved by the caller: anything parses, "" too */
	assert_string_equal(ONE(T_NETNS, "-N", "blue").arg[1], "blue");
	assert_string_equal(ONE(T_NETNS, "-N", "").arg[1], "");
	assert_string_equal(ONE(T_STRING, "--text", "x y").arg[1], "x y");
	ASSERT_BAD("invalid --text '': some text", "--text", "");
	assert_string_equal(ONE(T_PATH, "-o", "/tmp/x").arg[1], "/tmp/x");
	ASSERT_BAD("invalid --output '': a file name", "-o", "");
}

static void test_size(void **state)
{
	assert_int_equal(ONE(T_SIZE, "--size", "1K").u[1], 1024);
	assert_int_equal(ONE(T_SIZE, "--size", "1MiB").u[1], 1 << 20);
	ASSERT_BAD("invalid --size '1023': bytes, 1024 to 1048576", "--size", "1023");
	ASSERT_BAD("invalid --size '2M': bytes, 1024 to 1048576", "--size", "2M");
	assert_int_equal(ONE(T_POW2, "--ring", "64K").u[1], 65536);
	assert_int_equal(ONE(T_POW2, "--ring", "1G").u[1], 1 << 30);
	ASSERT_BAD("invalid --ring '12K': a power of 2 from 4K to 1G", "--ring", "12K");
	ASSERT_BAD("invalid --ring '2G': a power of 2 from 4K to 1G", "--ring", "2G");
}

static void test_enum_and_alias_letter(void **state)
{
	struct result r = ONE(T_ENUM, "-c", "blue");

	assert_int_equal(r.index[1], 2);
	assert_string_equal(r.arg[1], "blue");
	assert_int_equal(ONE(T_ENUM, "--colour=green").index[1], 1);
	/* the older letter: the same option, the same checks */
	assert_int_equal(ONE(T_ENUM, "-k", "red").index[1], 0);
	ASSERT_BAD("invalid --colour 'Red': red, green or blue", "-k", "Red");
	ASSERT_BAD("invalid --colour '': red, green or blue", "-c", "");
	ASSERT_BAD("option '-k' needs a value", "-k");
}

static void test_bad_options(void **state)
{
	ASSERT_BAD("unknown option '--bogus'", "--bogus");
	ASSERT_BAD("unknown option '-z'", "-z");
	/* inside a bundle: named by the letter */
	ASSERT_BAD("unknown option '-z'", "-fz");
	ASSERT_BAD("option '-s' needs a value", "-s");
	ASSERT_BAD("option '--secs' needs a value", "--secs");
	ASSERT_BAD("option '--real' needs a value", "--real");
	/* the next option is taken as the value, as getopt does: then refused */
	ASSERT_BAD("invalid --secs '-f': seconds from 0.1 to 3600", "-s", "-f");
	/* an unprintable option name is shown printable */
	ASSERT_BAD("unknown option '--a?b'", "--a\033b");
}

static void test_positionals(void **state)
{
	struct result r = PARSE("x", "-f", "y");

	/* getopt moves options first */
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.optind, 2);
	r = PARSE("--", "-f");
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.nids, 1); /* the default only: -f is an argument */
	assert_int_equal(r.optind, 2);
}

static void test_common(void **state)
{
	struct result r = PARSE("-v", "-vv", "--verbose");

	assert_int_equal(r.ret, 0);
	assert_int_equal(r.verbose, 4);
	assert_int_equal(r.nids, 1); /* -v is counted, never returned */
	r = PARSE("-V");
	assert_int_equal(r.ret, OPTS_DONE);
	assert_string_equal(g_out, "prog 9.9\n");
	r = PARSE("--version");
	assert_int_equal(r.ret, OPTS_DONE);
	assert_string_equal(g_out, "prog 9.9\n");
	r = PARSE("-h");
	assert_int_equal(r.ret, OPTS_DONE);
	assert_int_equal(strncmp(g_out, "Usage: prog cmd [OPTIONS] ARG\n", 30), 0);
	assert_string_equal(g_err, "");
	/* help wins over a bad value after it, not before */
	assert_int_equal(PARSE("--help", "-s", "0").ret, OPTS_DONE);
	ASSERT_BAD("invalid --secs '0': seconds from 0.1 to 3600", "-s", "0", "--help");
}

static void test_reparse(void **state)
{
	ASSERT_BAD("option '-n' needs a value", "-f", "-n");
	assert_int_equal(ONE(T_COUNT, "-n", "3").u[1], 3);
	ASSERT_BAD("unknown option '-z'", "-fz");
	ONE(T_FLAG, "-f");
}

static const char help_want[] =
"Usage: prog cmd [OPTIONS] ARG\n"
"About it.\n"
"\n"
"  -f, --flag             a flag\n"
"                         (also --flagge)\n"
"  -s, --secs SECS        seconds (0.1 to 3600)\n"
"      --real MS          ms\n"
"  -n, --count N          a count on two lines\n"
"      --port PORT        a port\n"
"  -p, --pid PID          a pid\n"
"  -N, --netns NS         a netns\n"
"      --size BYTES       a size\n"
"      --ring SIZE        a ring\n"
"  -c, --colour NAME      a colour (default red)\n"
"                         (also -k: the older spelling)\n"
"      --text TEXT        text\n"
"  -o, --output FILE      a file\n"
"  -4                     a letter alone\n"
"  -i, --interval SECS    every SECS (default 2)\n"
"  -v, --verbose          more\n"
"  -V, --version          print the version\n"
"  -h, --help             print this help\n"
"\n"
"Exit codes: none.\n";

static void test_help_text(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	opts__help(&cmd, f);
	fclose(f);
	assert_string_equal(buf, help_want);
	free(buf);
}

static void test_help_column_grows(void **state)
{
	static const struct opt_spec wide[] = {
		{ 1, "a-very-long-option-name", 'w', OT_COUNT, "COUNT",
		  .help = "wide, the words wrapped at 80 columns however wide the option column\nis" },
		{ 2, "x", 0, OT_FLAG, .help = "narrow" },
		{},
	};
	static const struct opts_cmd c = { .prog = "p", .name = "c", .usage = "",
					   .options_title = "Options:", .specs = wide };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	opts__help(&c, f);
	fclose(f);
	assert_string_equal(buf,
		"Usage: p c \n"
		"\n"
		"Options:\n"
		"  -w, --a-very-long-option-name COUNT  wide, the words wrapped at 80 columns\n"
		"                                       however wide the option column is\n"
		"      --x                              narrow\n");
	free(buf);
}

/* lines fill up to 80 columns, no further; a word longer than the room
 * gets a line of its own */
static void test_help_wraps(void **state)
{
	static const struct opt_spec s[] = {
		{ 1, "x", 'x', OT_FLAG, .help = "one two three four five six seven eight nine ten "
		  "eleven twelve thirteen fourteen fifteen sixteen\n\nseventeen "
		  "a-word-that-is-far-too-long-for-any-line-of-its-own-the-room-is-fifty-five-columns end" },
		{},
	};
	static const struct opts_cmd c = { .prog = "p", .name = "c", .usage = "", .specs = s };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	opts__help(&c, f);
	fclose(f);
	assert_string_equal(buf,
		"Usage: p c \n"
		"\n"
		"  -x, --x                one two three four five six seven eight nine ten eleven\n"
		"                         twelve thirteen fourteen fifteen sixteen seventeen\n"
		"                         a-word-that-is-far-too-long-for-any-line-of-its-own-the-room-is-fifty-five-columns\n"
		"                         end\n");
	free(buf);
}

static void test_man_options(void **state)
{
	static const struct opt_spec s[] = {
		{ 1, "by", 'g', OT_ENUM, "KEY", .values = colours, .def = "red",
		  .help = "group by KEY\n(default %d)", .alias_letter = 'b',
		  .alias_note = "the older spelling" },
		{ 2, "no-color", 0, OT_FLAG, .help = ".starts with a dot \\ and a backslash",
		  .alias_name = "no-colour" },
		{ 3, NULL, '6', OT_FLAG, .help = "IPv6 only" },
		{ 4, "hidden", 0, OT_FLAG, .flags = OPTS_F_HIDDEN, .help = "not shown" },
		{},
	};
	static const struct opts_cmd c = { .prog = "p", .name = "c", .specs = s };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	opts__man_options(&c, f);
	fclose(f);
	assert_string_equal(buf,
		".TP\n"
		"\\fB\\-g\\fR, \\fB\\-\\-by\\fR \\fIKEY\\fR\n"
		"group by KEY (default red) (also \\-b: the older spelling)\n"
		".TP\n"
		"\\fB\\-\\-no\\-color\\fR\n"
		"\\&.starts with a dot \\e and a backslash (also \\-\\-no\\-colour)\n"
		".TP\n"
		"\\fB\\-6\\fR\n"
		"IPv6 only\n");
	free(buf);
}

static void test_hidden_still_parses(void **state)
{
	static const struct opt_spec s[] = {
		{ 7, "hidden", 0, OT_FLAG, .flags = OPTS_F_HIDDEN, .help = "not shown" },
		OPTS_HELP,
		{},
	};
	static const struct opts_cmd c = { .prog = "p", .name = "c", .usage = "", .specs = s };
	struct opts_parser p;
	char *argv[] = { "c", "--hidden", NULL };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	opts__begin(&p, &c, 2, argv);
	assert_int_equal(opts__next(&p), 7);
	assert_int_equal(opts__next(&p), 0);
	opts__help(&c, f);
	fclose(f);
	assert_null(strstr(buf, "hidden"));
	free(buf);
}

static void test_expand(void **state)
{
	char buf[128];

	opts__expand(&specs[1], "from %r, 100%%", buf, sizeof(buf));
	assert_string_equal(buf, "from 0.1 to 3600, 100%");
	opts__expand(&specs[4], "%r", buf, sizeof(buf));
	assert_string_equal(buf, "1 to 65535");
	opts__expand(&specs[8], "%r", buf, sizeof(buf));
	assert_string_equal(buf, "4K to 1G");
	opts__expand(&specs[9], "(default %d)", buf, sizeof(buf));
	assert_string_equal(buf, "(default red)");
	opts__expand(&specs[1], "%r", buf, 6); /* cut, still terminated */
	assert_string_equal(buf, "0.1 t");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_flag),
		cmocka_unit_test(test_seconds),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_port_pid),
		cmocka_unit_test(test_netns_string_path),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_enum_and_alias_letter),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_positionals),
		cmocka_unit_test(test_common),
		cmocka_unit_test(test_reparse),
		cmocka_unit_test(test_help_text),
		cmocka_unit_test(test_help_column_grows),
		cmocka_unit_test(test_help_wraps),
		cmocka_unit_test(test_man_options),
		cmocka_unit_test(test_hidden_still_parses),
		cmocka_unit_test(test_expand),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
