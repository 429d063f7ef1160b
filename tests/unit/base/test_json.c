// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for src/base/json.c: the streaming JSON writer's commas, nesting and escaping. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "json.h"

struct fx {
	struct strbuf sb;
	struct json j;
};

static int setup(void **state)
{
	static struct fx fx;

	memset(&fx, 0, sizeof(fx));
	json_init(&fx.j, &fx.sb);
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	sb_free(&fx->sb);
	return 0;
}

#define J (&((struct fx *)*state)->j)
#define OUT (((struct fx *)*state)->sb.buf)

static void test_empty_object(void **state)
{
	json_obj_begin(J);
	json_obj_end(J);
	assert_string_equal(OUT, "{}");
}

static void test_empty_array(void **state)
{
	json_arr_begin(J);
	json_arr_end(J);
	assert_string_equal(OUT, "[]");
}

static void test_object_commas(void **state)
{
	json_obj_begin(J);
	json_key(J, "a");
	json_u64(J, 1);
	json_key(J, "b");
	json_str(J, "x");
	json_key(J, "c");
	json_bool(J, true);
	json_key(J, "d");
	json_bool(J, false);
	json_key(J, "e");
	json_null(J);
	json_key(J, "f");
	json_i64(J, -5);
	json_obj_end(J);
	assert_string_equal(OUT,
		"{\"a\":1,\"b\":\"x\",\"c\":true,\"d\":false,\"e\":null,\"f\":-5}");
}

static void test_array_commas(void **state)
{
	json_arr_begin(J);
	json_u64(J, 1);
	json_u64(J, 2);
	json_str(J, "three");
	json_null(J);
	json_arr_end(J);
	assert_string_equal(OUT, "[1,2,\"three\",null]");
}

static void test_nested(void **state)
{
	json_obj_begin(J);
	json_key(J, "o");
	json_obj_begin(J);
	json_key(J, "x");
	json_u64(J, 1);
	json_key(J, "y");
	json_u64(J, 2);
	json_obj_end(J);
	json_key(J, "arr");
	json_arr_begin(J);
	json_u64(J, 1);
	json_obj_begin(J);
	json_key(J, "k");
	json_arr_begin(J);
	json_arr_end(J);
	json_obj_end(J);
	json_arr_begin(J);
	json_arr_end(J);
	json_u64(J, 2);
	json_arr_end(J);
	json_key(J, "empty");
	json_obj_begin(J);
	json_obj_end(J);
	json_key(J, "last");
	json_str(J, "z");
	json_obj_end(J);
	assert_string_equal(OUT,
		"{\"o\":{\"x\":1,\"y\":2},\"arr\":[1,{\"k\":[]},[],2],"
		"\"empty\":{},\"last\":\"z\"}");
}

static void test_array_of_objects(void **state)
{
	json_arr_begin(J);
	for (int i = 0; i < 3; i++) {
		json_obj_begin(J);
		json_key(J, "i");
		json_i64(J, i);
		json_key(J, "tags");
		json_arr_begin(J);
		json_str(J, "a");
		json_str(J, "b");
		json_arr_end(J);
		json_obj_end(J);
	}
	json_arr_end(J);
	assert_string_equal(OUT,
		"[{\"i\":0,\"tags\":[\"a\",\"b\"]},"
		"{\"i\":1,\"tags\":[\"a\",\"b\"]},"
		"{\"i\":2,\"tags\":[\"a\",\"b\"]}]");
}

static void test_deep_nesting(void **state)
{
	/* 15 levels is what JSON_MAX_DEPTH 16 allows with the root at 0 */
	const int levels = JSON_MAX_DEPTH - 1;
	char want[256];
	size_t o = 0;

	for (int i = 0; i < levels; i++) {
		json_arr_begin(J);
		json_u64(J, i);
		o += snprintf(want + o, sizeof(want) - o, "%s[%d",
			      i ? "," : "", i);
	}
	for (int i = 0; i < levels; i++) {
		json_arr_end(J);
		json_u64(J, 100 + i);
		o += snprintf(want + o, sizeof(want) - o, "],%d", 100 + i);
	}
	/* the outermost "]" is followed by the root-level 114, as written */
	assert_string_equal(OUT, want);
}

static void test_escaping(void **state)
{
	json_str(J, "q\"b\\n\nt\tr\rc\x01" "e\x1f" "d\x7f");
	/* DEL too: the document may be printed on a terminal */
	assert_string_equal(OUT,
		"\"q\\\"b\\\\n\\nt\\tr\\rc\\u0001e\\u001fd\\u007f\"");
}

static void test_escaping_controls(void **state)
{
	json_arr_begin(J);
	json_str(J, "\b");
	json_str(J, "\f");
	json_str(J, "\x01");
	json_str(J, "\x1b[0m");
	json_arr_end(J);
	assert_string_equal(OUT,
		"[\"\\u0008\",\"\\u000c\",\"\\u0001\",\"\\u001b[0m\"]");
}

/* C1 controls as UTF-8 (U+009B is CSI to a terminal that takes C1) are
 * escaped; a raw 0x9b byte is not UTF-8 at all: U+FFFD. U+00A0 is text. */
static void test_escaping_c1(void **state)
{
	json_arr_begin(J);
	json_str(J, "a\xc2\x9b" "31m");
	json_str(J, "\xc2\x80\xc2\x9f");
	json_str(J, "b\x9b" "2J");
	json_str(J, "\xc2\xa0");
	json_arr_end(J);
	assert_string_equal(OUT,
		"[\"a\\u009b31m\",\"\\u0080\\u009f\",\"b\\ufffd2J\",\"\xc2\xa0\"]");
}

static void test_escaping_keys(void **state)
{
	json_obj_begin(J);
	json_key(J, "a\"b");
	json_u64(J, 1);
	json_key(J, "c\\d\n");
	json_u64(J, 2);
	json_obj_end(J);
	assert_string_equal(OUT, "{\"a\\\"b\":1,\"c\\\\d\\n\":2}");
}

static void test_utf8_passthrough(void **state)
{
	json_str(J, "caf\xc3\xa9 \xe2\x82\xac");
	assert_string_equal(OUT, "\"caf\xc3\xa9 \xe2\x82\xac\"");
}

/* Not UTF-8 (a comm can hold any bytes): each bad byte becomes U+FFFD. */
static void test_invalid_utf8(void **state)
{
	json_arr_begin(J);
	json_str(J, "a\xff" "b");       /* never valid */
	json_str(J, "\xc3");            /* cut short at the end */
	json_str(J, "\xe0\x80\xaf");    /* overlong '/' */
	json_str(J, "\xed\xa0\x80");    /* a UTF-16 surrogate */
	json_str(J, "\xf4\x90\x80\x80"); /* above U+10FFFF */
	json_str(J, "\xf0\x9f\x98\x80"); /* U+1F600: valid, kept */
	json_arr_end(J);
	assert_string_equal(OUT, "[\"a\\ufffdb\",\"\\ufffd\","
			    "\"\\ufffd\\ufffd\\ufffd\",\"\\ufffd\\ufffd\\ufffd\","
			    "\"\\ufffd\\ufffd\\ufffd\\ufffd\",\"\xf0\x9f\x98\x80\"]");
}

static void test_empty_string(void **state)
{
	json_obj_begin(J);
	json_key(J, "");
	json_str(J, "");
	json_obj_end(J);
	assert_string_equal(OUT, "{\"\":\"\"}");
}

static void test_str_null(void **state)
{
	json_obj_begin(J);
	json_key(J, "comm");
	json_str(J, NULL);
	json_key(J, "pid");
	json_u64(J, 42);
	json_obj_end(J);
	assert_string_equal(OUT, "{\"comm\":null,\"pid\":42}");
}

static void test_numbers(void **state)
{
	json_arr_begin(J);
	json_u64(J, 0);
	json_u64(J, UINT64_MAX);
	json_i64(J, INT64_MIN);
	json_i64(J, INT64_MAX);
	json_i64(J, 0);
	json_arr_end(J);
	assert_string_equal(OUT,
		"[0,18446744073709551615,-9223372036854775808,"
		"9223372036854775807,0]");
}

static void test_double(void **state)
{
	json_arr_begin(J);
	json_double(J, 1.5, 2);
	json_double(J, 2.0 / 3.0, 3);
	json_double(J, 5.0, 0);
	json_double(J, -0.125, 3);
	json_double(J, 12345.678, 1);
	json_arr_end(J);
	assert_string_equal(OUT, "[1.50,0.667,5,-0.125,12345.7]");
}

static void test_double_nonfinite(void **state)
{
	json_obj_begin(J);
	json_key(J, "nan");
	json_double(J, NAN, 2);
	json_key(J, "inf");
	json_double(J, INFINITY, 2);
	json_key(J, "ninf");
	json_double(J, -INFINITY, 2);
	json_key(J, "ok");
	json_double(J, 0.5, 1);
	json_obj_end(J);
	assert_string_equal(OUT,
		"{\"nan\":null,\"inf\":null,\"ninf\":null,\"ok\":0.5}");
}

static void test_reinit_resets(void **state)
{
	struct fx *fx = *state;

	json_arr_begin(J);
	json_u64(J, 1);
	json_arr_end(J);
	sb_free(&fx->sb);
	json_init(J, &fx->sb);
	json_obj_begin(J);
	json_obj_end(J);
	assert_string_equal(OUT, "{}");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_empty_object),
		T(test_empty_array),
		T(test_object_commas),
		T(test_array_commas),
		T(test_nested),
		T(test_array_of_objects),
		T(test_deep_nesting),
		T(test_escaping),
		T(test_escaping_controls),
		T(test_escaping_c1),
		T(test_escaping_keys),
		T(test_utf8_passthrough),
		T(test_invalid_utf8),
		T(test_empty_string),
		T(test_str_null),
		T(test_numbers),
		T(test_double),
		T(test_double_nonfinite),
		T(test_reinit_resets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
