// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The exposition writer (src/cmd/serve/expo.c): formats and label values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "expo.h"

static char *value(const char *v)
{
	static struct strbuf sb;

	sb_free(&sb);
	memset(&sb, 0, sizeof(sb));
	expo__label_value(&sb, v);
	return sb.buf ? sb.buf : "";
}

static void test_label_values(void **state)
{
	assert_string_equal(value("plain"), "plain");
	assert_string_equal(value(NULL), "");
	assert_string_equal(value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
	/* valid UTF-8 stays */
	assert_string_equal(value("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
			    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	/* not UTF-8: each bad byte is U+FFFD */
	assert_string_equal(value("a\xff" "b"), "a\xef\xbf\xbd" "b");
	assert_string_equal(value("\xc3"), "\xef\xbf\xbd");           /* cut short */
	assert_string_equal(value("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd"); /* overlong */
	assert_string_equal(value("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* surrogate */
	/* controls: a terminal's escape, a carriage return, C1 */
	assert_string_equal(value("red\x1b[2J"), "red\xef\xbf\xbd[2J");
	assert_string_equal(value("a\rb\x7f"), "a\xef\xbf\xbd" "b\xef\xbf\xbd");
	assert_string_equal(value("\xc2\x9b"), "\xef\xbf\xbd\xef\xbf\xbd");
}

/* Is s valid UTF-8 with no control character but none? */
static bool clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int len = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3
			: (*p & 0xf8) == 0xf0 ? 4 : 0;

		if (!len || (*p < 0x20) || *p == 0x7f)
			return false;
		for (int i = 1; i < len; i++)
			if ((p[i] & 0xc0) != 0x80)
				return false;
		p += len;
	}
	return true;
}

/* Random bytes: never a raw newline or quote, always valid UTF-8, and
 * linear (the output at most 3 bytes per input byte). */
static void test_label_values_random(void **state)
{
	char in[64];

	srand(12345);
	for (int round = 0; round < 20000; round++) {
		int n = rand() % (sizeof(in) - 1);

		for (int i = 0; i < n; i++)
			in[i] = (char)(1 + rand() % 255);
		in[n] = '\0';
		const char *out = value(in);

		assert_true(clean(out));
		assert_true(strlen(out) <= 3 * (size_t)n);
		for (const char *q = out; *q; q++)
			if (*q == '"')
				assert_true(q > out && q[-1] == '\\');
	}
}

static void test_text_format(void **state)
{
	struct strbuf sb = {};
	struct expo e;
	struct expo_label l[] = { { "netns", "4026531840" }, { "cause", "rcvbuf" } };

	expo__init(&e, &sb, EXPO_TEXT, 1700000000.5);
	expo__family(&e, "udpdrop_drops", EXPO_COUNTER, "Drops.");
	expo__sample_u64(&e, l, 2, 42);
	expo__family(&e, "udpdrop_build", EXPO_INFO, "Build.");
	expo__sample_u64(&e, &(struct expo_label){ "version", "0.1.0" }, 1, 1);
	expo__family(&e, "udpdrop_render_seconds", EXPO_GAUGE, "Render.");
	expo__sample(&e, NULL, 0, 0.25);
	expo__end(&e);
	assert_string_equal(sb.buf,
		"# HELP udpdrop_drops_total Drops.\n"
		"# TYPE udpdrop_drops_total counter\n"
		"udpdrop_drops_total{netns=\"4026531840\",cause=\"rcvbuf\"} 42\n"
		"# HELP udpdrop_build_info Build.\n"
		"# TYPE udpdrop_build_info gauge\n"
		"udpdrop_build_info{version=\"0.1.0\"} 1\n"
		"# HELP udpdrop_render_seconds Render.\n"
		"# TYPE udpdrop_render_seconds gauge\n"
		"udpdrop_render_seconds 0.25\n");
	assert_int_equal(e.samples, 3);
	sb_free(&sb);
}

/* An exemplar rides on an OpenMetrics counter's sample only, escaped, and
 * only within the format's 128 code points of labels. */
static void test_exemplar(void **state)
{
	struct strbuf sb = {};
	struct expo e;
	char big[200];
	struct expo_label l = { "port", "5002" }, xl = { "src", "10.0.0.1" }, bad = { "src", "a\"b" };
	struct expo_exemplar x = { &xl, 1, 40, 1700000001.25 }, xb = { &bad, 1, 1, 1700000002 };

	expo__init(&e, &sb, EXPO_OPENMETRICS, 1700000000.5);
	expo__family(&e, "udpdrop_noport_drops", EXPO_COUNTER, "Drops.");
	expo__sample_u64_exemplar(&e, &l, 1, 40, 1700000000.5, &x);
	expo__sample_u64_exemplar(&e, &l, 1, 41, 0, &xb);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	xl.value = big + 200 - 1 - 125; /* "src" and 125 bytes: 128 */
	expo__sample_u64_exemplar(&e, &l, 1, 42, 0, &x);
	xl.value = big + 200 - 1 - 126; /* 129: left out */
	expo__sample_u64_exemplar(&e, &l, 1, 43, 0, &x);
	expo__family(&e, "udpdrop_queue_bytes", EXPO_GAUGE, "A gauge.");
	expo__sample_u64_exemplar(&e, NULL, 0, 7, 0, &x);
	expo__end(&e);
	assert_non_null(strstr(sb.buf, "udpdrop_noport_drops_total{port=\"5002\"} 40 # {src=\"10.0.0.1\"} 40 1700000001.250\n"
					"udpdrop_noport_drops_created{port=\"5002\"} 1700000000.500\n"));
	assert_non_null(strstr(sb.buf, "udpdrop_noport_drops_total{port=\"5002\"} 41 # {src=\"a\\\"b\"} 1 1700000002.000\n"));
	assert_non_null(strstr(sb.buf, "} 42 # {src=\"xxx"));
	assert_non_null(strstr(sb.buf, "udpdrop_noport_drops_total{port=\"5002\"} 43\n"));
	assert_non_null(strstr(sb.buf, "udpdrop_queue_bytes 7\n"));
	sb_free(&sb);

	/* text 0.0.4: never */
	expo__init(&e, &sb, EXPO_TEXT, 0);
	expo__family(&e, "udpdrop_noport_drops", EXPO_COUNTER, "Drops.");
	xl.value = "10.0.0.1";
	expo__sample_u64_exemplar(&e, &l, 1, 40, 0, &x);
	assert_null(strchr(strstr(sb.buf, "udpdrop_noport_drops_total{"), '#'));
	sb_free(&sb);
}

static void test_openmetrics_format(void **state)
{
	struct strbuf sb = {};
	struct expo e;

	expo__init(&e, &sb, EXPO_OPENMETRICS, 1700000000.5);
	expo__family(&e, "udpdrop_drops", EXPO_COUNTER, "Drops.");
	expo__sample_u64(&e, &(struct expo_label){ "cause", "rcvbuf" }, 1, 7);
	expo__family(&e, "udpdrop_build", EXPO_INFO, "Build.");
	expo__sample_u64(&e, NULL, 0, 1);
	expo__end(&e);
	assert_string_equal(sb.buf,
		"# HELP udpdrop_drops Drops.\n"
		"# TYPE udpdrop_drops counter\n"
		"udpdrop_drops_total{cause=\"rcvbuf\"} 7\n"
		"udpdrop_drops_created{cause=\"rcvbuf\"} 1700000000.500\n"
		"# HELP udpdrop_build Build.\n"
		"# TYPE udpdrop_build info\n"
		"udpdrop_build_info 1\n"
		"# EOF\n");
	sb_free(&sb);
}

static void test_negotiate(void **state)
{
	assert_int_equal(expo__negotiate(NULL), EXPO_TEXT);
	assert_int_equal(expo__negotiate(""), EXPO_TEXT);
	assert_int_equal(expo__negotiate("text/plain;version=0.0.4;q=0.5,*/*;q=0.1"), EXPO_TEXT);
	/* what Prometheus 2.42 sends */
	assert_int_equal(expo__negotiate("application/openmetrics-text;version=1.0.0,"
					 "application/openmetrics-text;version=0.0.1;q=0.75,"
					 "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
			 EXPO_OPENMETRICS);
	/* media types are case-insensitive; spaces around the parts */
	assert_int_equal(expo__negotiate("Application/OpenMetrics-Text ; Version=1.0.0"),
			 EXPO_OPENMETRICS);
	assert_int_equal(expo__negotiate(" text/plain ; q=0.2 , application/openmetrics-text ; q=0.9"),
			 EXPO_OPENMETRICS);
	/* q=0: not acceptable; a lower q than text's: text */
	assert_int_equal(expo__negotiate("application/openmetrics-text;q=0,text/plain"), EXPO_TEXT);
	assert_int_equal(expo__negotiate("application/openmetrics-text;q=0.3,text/plain;q=0.6"),
			 EXPO_TEXT);
	assert_int_equal(expo__negotiate("application/openmetrics-text;Q=0.000"), EXPO_TEXT);
	/* an unreadable q counts as 0, never as 1 */
	assert_int_equal(expo__negotiate("application/openmetrics-text;q=lots"), EXPO_TEXT);
	assert_int_equal(expo__negotiate("application/openmetrics-text;q=2"), EXPO_TEXT);
	/* a name that only contains the type is another type */
	assert_int_equal(expo__negotiate("application/openmetrics-textual"), EXPO_TEXT);
	assert_int_equal(expo__negotiate("application/openmetrics-text;version=1.0.0,,;;,"),
			 EXPO_OPENMETRICS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label_values),
		cmocka_unit_test(test_label_values_random),
		cmocka_unit_test(test_text_format),
		cmocka_unit_test(test_openmetrics_format),
		cmocka_unit_test(test_negotiate),
		cmocka_unit_test(test_exemplar),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
