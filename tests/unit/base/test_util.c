// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for src/base/util.c: strict parsers, unit/count/address formatting, strbuf. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "util.h"

#define SENTINEL_U64 0xdeadbeefcafef00dull

/* ---- parse_u64 ---- */

static void expect_u64_ok(const char *s, uint64_t min, uint64_t max,
			  uint64_t want)
{
	uint64_t v = SENTINEL_U64;

	assert_int_equal(parse_u64(s, min, max, &v), 0);
	assert_true(v == want);
}

static void expect_u64_err(const char *s, uint64_t min, uint64_t max, int err)
{
	uint64_t v = SENTINEL_U64;

	assert_int_equal(parse_u64(s, min, max, &v), err);
	assert_true(v == SENTINEL_U64); /* output untouched on error */
}

static void test_parse_u64_valid(void **state)
{
	expect_u64_ok("0", 0, 10, 0);
	expect_u64_ok("10", 0, 10, 10);
	expect_u64_ok("7", 7, 7, 7);
	expect_u64_ok("007", 0, 10, 7); /* decimal, not octal */
	expect_u64_ok("4294967296", 0, UINT64_MAX, 4294967296ull);
	expect_u64_ok("18446744073709551615", 0, UINT64_MAX, UINT64_MAX);
}

static void test_parse_u64_range(void **state)
{
	expect_u64_err("11", 0, 10, -ERANGE);
	expect_u64_err("4", 5, 10, -ERANGE);
	expect_u64_err("0", 1, 10, -ERANGE);
	expect_u64_err("65536", 1, 65535, -ERANGE);
	/* one past UINT64_MAX: strtoull overflow */
	expect_u64_err("18446744073709551616", 0, UINT64_MAX, -ERANGE);
	expect_u64_err("99999999999999999999999", 0, UINT64_MAX, -ERANGE);
}

static void test_parse_u64_junk(void **state)
{
	expect_u64_err(NULL, 0, 100, -EINVAL);
	expect_u64_err("", 0, 100, -EINVAL);
	expect_u64_err("-1", 0, 100, -EINVAL);
	expect_u64_err("-0", 0, 100, -EINVAL);
	expect_u64_err("+1", 0, 100, -EINVAL);
	expect_u64_err(" 1", 0, 100, -EINVAL);
	expect_u64_err("1 ", 0, 100, -EINVAL);
	expect_u64_err("12abc", 0, 100, -EINVAL);
	expect_u64_err("abc", 0, 100, -EINVAL);
	expect_u64_err("1e3", 0, 10000, -EINVAL);
	expect_u64_err("1.0", 0, 100, -EINVAL);
	expect_u64_err("0x10", 0, 100, -EINVAL);
	expect_u64_err("5s", 0, 100, -EINVAL);
	expect_u64_err("1\n", 0, 100, -EINVAL);
	expect_u64_err("\t5", 0, 10, -EINVAL);
	expect_u64_err("\n7", 0, 10, -EINVAL);
}

/* ---- parse_seconds ---- */

static void expect_sec_ok(const char *s, double min, double max, double want)
{
	double v = -12345.0;

	assert_int_equal(parse_seconds(s, min, max, &v), 0);
	assert_true(v == want);
}

static void expect_sec_err(const char *s, double min, double max, int err)
{
	double v = -12345.0;

	assert_int_equal(parse_seconds(s, min, max, &v), err);
	assert_true(v == -12345.0);
}

static void test_parse_seconds_valid(void **state)
{
	expect_sec_ok("1", 0, 3600, 1.0);
	expect_sec_ok("0", 0, 3600, 0.0);
	expect_sec_ok("1.5", 0, 3600, 1.5);
	expect_sec_ok("0.25", 0.1, 10, 0.25);
	expect_sec_ok(".5", 0, 10, 0.5);
	expect_sec_ok("1e3", 0, 3600, 1000.0);
	expect_sec_ok("2.5e-1", 0, 10, 0.25);
	expect_sec_ok("3600", 0, 3600, 3600.0);
	expect_sec_ok("-2", -5, 5, -2.0);
}

static void test_parse_seconds_range(void **state)
{
	expect_sec_err("1e3", 0, 100, -ERANGE);
	expect_sec_err("3600.5", 0, 3600, -ERANGE);
	expect_sec_err("0.05", 0.1, 10, -ERANGE);
	expect_sec_err("-1", 0, 100, -ERANGE);
	expect_sec_err("-0.001", 0, 100, -ERANGE);
	expect_sec_err("1e999", 0, 1e300, -ERANGE);
	/* not decimal numbers at all */
	expect_sec_err("inf", 0, 1e9, -EINVAL);
	expect_sec_err("-inf", 0, 1e9, -EINVAL);
	expect_sec_err("0x10", 0, 100, -EINVAL);
	expect_sec_err("\t1", 0, 100, -EINVAL);
}

static void test_parse_seconds_junk(void **state)
{
	expect_sec_err(NULL, 0, 100, -EINVAL);
	expect_sec_err("", 0, 100, -EINVAL);
	expect_sec_err(" 1", 0, 100, -EINVAL);
	expect_sec_err("1 ", 0, 100, -EINVAL);
	expect_sec_err("1s", 0, 100, -EINVAL);
	expect_sec_err("1.5x", 0, 100, -EINVAL);
	expect_sec_err("abc", 0, 100, -EINVAL);
	expect_sec_err(".", 0, 100, -EINVAL);
	expect_sec_err("-", 0, 100, -EINVAL);
	expect_sec_err("1e", 0, 100000, -EINVAL);
	expect_sec_err("nan", 0, 100, -EINVAL);
	expect_sec_err("1,5", 0, 100, -EINVAL);
}

/* ---- fmt_bytes ---- */

static void expect_bytes(uint64_t n, const char *want)
{
	char buf[64];

	memset(buf, 'X', sizeof(buf));
	fmt_bytes(buf, sizeof(buf), n);
	assert_string_equal(buf, want);
}

static void test_fmt_bytes(void **state)
{
	expect_bytes(0, "0 B");
	expect_bytes(1, "1 B");
	expect_bytes(1023, "1023 B");
	expect_bytes(1024, "1.0 KiB");
	expect_bytes(1536, "1.5 KiB");
	expect_bytes(9 * 1024, "9.0 KiB");
	expect_bytes(10 * 1024, "10 KiB");
	expect_bytes(212992, "208 KiB"); /* the default rmem_default */
	expect_bytes(1048576, "1.0 MiB");
	expect_bytes(8388608, "8.0 MiB");
	expect_bytes(64ull << 20, "64 MiB");
	expect_bytes(1ull << 30, "1.0 GiB");
	expect_bytes(1ull << 40, "1.0 TiB");
	expect_bytes(1ull << 50, "1024 TiB"); /* TiB is the largest unit */
	/* values that would round up to "1024 KiB" or "10.0 KiB" */
	expect_bytes(1048575, "1.0 MiB");
	expect_bytes(1073741823, "1.0 GiB");
	expect_bytes(10239, "10 KiB");
}

static void test_fmt_bytes_truncates(void **state)
{
	char buf[4];

	fmt_bytes(buf, sizeof(buf), 212992);
	assert_string_equal(buf, "208");
}

/* ---- fmt_count ---- */

static void expect_count(uint64_t n, const char *want)
{
	char buf[64];

	memset(buf, 'X', sizeof(buf));
	fmt_count(buf, sizeof(buf), n);
	assert_string_equal(buf, want);
}

static void test_fmt_count(void **state)
{
	expect_count(0, "0");
	expect_count(7, "7");
	expect_count(999, "999");
	expect_count(1000, "1,000");
	expect_count(1204, "1,204");
	expect_count(99999, "99,999");
	expect_count(100000, "100,000");
	expect_count(999999, "999,999");
	expect_count(1000000, "1,000,000");
	expect_count(1234567, "1,234,567");
	expect_count(UINT64_MAX, "18,446,744,073,709,551,615");
}

static void test_fmt_count_truncates(void **state)
{
	char buf[6];

	memset(buf, 'X', sizeof(buf));
	fmt_count(buf, sizeof(buf), 1234567);
	assert_int_equal(strlen(buf), 5);
	assert_string_equal(buf, "1,234");
}

/* ---- fmt_endpoint / fmt_addr ---- */

static void expect_ep(int family, const char *addr, uint16_t port,
		      const char *want)
{
	uint8_t a[16] = { 0 };
	char buf[64];

	if (addr)
		assert_int_equal(inet_pton(family, addr, a), 1);
	memset(buf, 'X', sizeof(buf));
	fmt_endpoint(buf, sizeof(buf), family, a, port);
	assert_string_equal(buf, want);
}

static void test_fmt_endpoint_ipv4(void **state)
{
	expect_ep(AF_INET, "10.0.0.2", 5001, "10.0.0.2:5001");
	expect_ep(AF_INET, "255.255.255.255", 65535, "255.255.255.255:65535");
	expect_ep(AF_INET, "127.0.0.1", 53, "127.0.0.1:53");
	expect_ep(AF_INET, NULL, 5001, "*:5001");
	expect_ep(AF_INET, "10.0.0.2", 0, "10.0.0.2:*");
	expect_ep(AF_INET, NULL, 0, "*:*");
}

static void test_fmt_endpoint_ipv6(void **state)
{
	expect_ep(AF_INET6, "fd00::1", 53, "[fd00::1]:53");
	expect_ep(AF_INET6, "fe80::1", 5001, "[fe80::1]:5001");
	expect_ep(AF_INET6, "::1", 123, "[::1]:123");
	/* v4-mapped: the IPv4 address, no brackets (columns line up) */
	expect_ep(AF_INET6, "::ffff:10.0.0.1", 80, "10.0.0.1:80");
	expect_ep(AF_INET6, "2001:db8:0:1:2:3:4:5", 9,
		  "[2001:db8:0:1:2:3:4:5]:9");
	/* the wildcard has no brackets */
	expect_ep(AF_INET6, NULL, 5001, "*:5001");
	expect_ep(AF_INET6, "fd00::1", 0, "[fd00::1]:*");
	expect_ep(AF_INET6, NULL, 0, "*:*");
}

static void test_fmt_endpoint_unknown_family(void **state)
{
	uint8_t a[16] = { 10, 0, 0, 1 };
	char buf[64];

	fmt_endpoint(buf, sizeof(buf), 0, a, 53);
	assert_string_equal(buf, "?:53");
}

static void expect_addr(int family, const char *addr, const char *want)
{
	uint8_t a[16] = { 0 };
	char buf[64];

	if (addr)
		assert_int_equal(inet_pton(family, addr, a), 1);
	memset(buf, 'X', sizeof(buf));
	fmt_addr(buf, sizeof(buf), family, a);
	assert_string_equal(buf, want);
}

static void test_fmt_addr(void **state)
{
	expect_addr(AF_INET, "10.0.0.1", "10.0.0.1");
	expect_addr(AF_INET, "192.168.255.1", "192.168.255.1");
	expect_addr(AF_INET, NULL, "*");
	expect_addr(AF_INET6, "fe80::1", "fe80::1");
	expect_addr(AF_INET6, "fd00::1", "fd00::1");
	expect_addr(AF_INET6, "::1", "::1");
	expect_addr(AF_INET6, NULL, "*");
	expect_addr(0, NULL, "?");
	expect_addr(AF_UNIX, NULL, "?");
}

static void test_fmt_addr_v4_ignores_tail(void **state)
{
	/* IPv4 uses the first 4 bytes only: trailing bytes don't matter */
	uint8_t a[16] = { 0, 0, 0, 0, 9, 9, 9, 9 };
	uint8_t b[16] = { 10, 1, 2, 3, 9, 9, 9, 9 };
	char buf[64];

	fmt_addr(buf, sizeof(buf), AF_INET, a);
	assert_string_equal(buf, "*");
	fmt_addr(buf, sizeof(buf), AF_INET, b);
	assert_string_equal(buf, "10.1.2.3");
}

/* ---- sb_printf ---- */

static void test_sb_printf_basic(void **state)
{
	struct strbuf sb = { 0 };

	sb_printf(&sb, "%s=%d", "a", 1);
	sb_printf(&sb, ",%s=%u", "bb", 22u);
	assert_non_null(sb.buf);
	assert_int_equal(sb.len, strlen("a=1,bb=22"));
	assert_string_equal(sb.buf, "a=1,bb=22");
	assert_true(sb.cap > sb.len);
	sb_free(&sb);
	assert_null(sb.buf);
	assert_int_equal(sb.len, 0);
	assert_int_equal(sb.cap, 0);
}

static void test_sb_printf_growth(void **state)
{
	struct strbuf sb = { 0 };
	char want[4096];
	size_t off = 0;

	/* one write larger than the first allocation */
	char big[301];

	memset(big, 'x', 300);
	big[300] = '\0';
	sb_printf(&sb, "%s", big);
	assert_int_equal(sb.len, 300);
	assert_true(sb.cap >= 301);
	assert_string_equal(sb.buf, big);

	/* many small writes crossing 256, 512, 1024, 2048 */
	sb_free(&sb);
	for (int i = 0; i < 300; i++) {
		sb_printf(&sb, "%d,", i);
		off += snprintf(want + off, sizeof(want) - off, "%d,", i);
	}
	assert_true(off > 1024);
	assert_int_equal(sb.len, off);
	assert_int_equal(strlen(sb.buf), off);
	assert_string_equal(sb.buf, want);
	assert_true(sb.cap > sb.len);
	sb_free(&sb);
}

static void test_sb_printf_exact_boundary(void **state)
{
	struct strbuf sb = { 0 };
	char s255[256], s256[257];

	/* 255 chars + NUL fill 256 exactly; 256 chars need a regrow */
	memset(s255, 'a', 255);
	s255[255] = '\0';
	sb_printf(&sb, "%s", s255);
	assert_int_equal(sb.len, 255);
	assert_string_equal(sb.buf, s255);
	sb_printf(&sb, "b");
	assert_int_equal(sb.len, 256);
	assert_int_equal(sb.buf[255], 'b');
	assert_int_equal(sb.buf[256], '\0');
	sb_free(&sb);

	memset(s256, 'c', 256);
	s256[256] = '\0';
	sb_printf(&sb, "%s", s256);
	assert_int_equal(sb.len, 256);
	assert_string_equal(sb.buf, s256);
	sb_free(&sb);
}

static void test_str_printable(void **state)
{
	char s[] = "ab\x1b[2Jc\td\x7f\xc3\xa9";

	str_printable(s);
	/* control bytes become '?'; UTF-8 (high bytes) stays */
	assert_string_equal(s, "ab?[2Jc?d?\xc3\xa9");
	char e[] = "";

	str_printable(e);
	assert_string_equal(e, "");
}

/*
 * What a terminal would act on besides C0 and DEL: C1 controls (CSI is
 * 0x9b as a byte in an 8-bit mode, U+009B as UTF-8 in some terminals),
 * and bytes that are no UTF-8 at all; each byte becomes '?', the length
 * kept. Text in other scripts stays; '\n' stays only where asked.
 */
static void test_mem_printable(void **state)
{
	char s[] = "a\xc2\x9b" "2J" "\x9b" "31m\xc2\x85\xff\xe2\x82" "b\xc2\xa0\xe2\x82\xac\xf0\x9f\x98\x80\ne";
	const char *want = "a??2J?31m?????b\xc2\xa0\xe2\x82\xac\xf0\x9f\x98\x80\ne";
	char t[sizeof(s)];

	memcpy(t, s, sizeof(s));
	assert_false(mem_is_printable(s, sizeof(s) - 1, true));
	mem_printable(s, sizeof(s) - 1, true);
	assert_string_equal(s, want);
	assert_true(mem_is_printable(s, sizeof(s) - 1, true));
	assert_false(mem_is_printable(s, sizeof(s) - 1, false)); /* the '\n' */
	str_printable(t);
	assert_int_equal(strlen(t), sizeof(s) - 1);
	assert_int_equal(t[strlen(t) - 2], '?');
	/* overlong, surrogate, above U+10FFFF, cut short: not UTF-8 */
	assert_int_equal(utf8_seq_len((const unsigned char *)"\xc0\x80", 2), 0);
	assert_int_equal(utf8_seq_len((const unsigned char *)"\xed\xa0\x80", 3), 0);
	assert_int_equal(utf8_seq_len((const unsigned char *)"\xf4\x90\x80\x80", 4), 0);
	assert_int_equal(utf8_seq_len((const unsigned char *)"\xe2\x82\xac", 2), 0);
	assert_int_equal(utf8_seq_len((const unsigned char *)"\xe2\x82\xac", 3), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_u64_valid),
		cmocka_unit_test(test_parse_u64_range),
		cmocka_unit_test(test_parse_u64_junk),
		cmocka_unit_test(test_parse_seconds_valid),
		cmocka_unit_test(test_parse_seconds_range),
		cmocka_unit_test(test_parse_seconds_junk),
		cmocka_unit_test(test_fmt_bytes),
		cmocka_unit_test(test_fmt_bytes_truncates),
		cmocka_unit_test(test_fmt_count),
		cmocka_unit_test(test_fmt_count_truncates),
		cmocka_unit_test(test_fmt_endpoint_ipv4),
		cmocka_unit_test(test_fmt_endpoint_ipv6),
		cmocka_unit_test(test_fmt_endpoint_unknown_family),
		cmocka_unit_test(test_fmt_addr),
		cmocka_unit_test(test_fmt_addr_v4_ignores_tail),
		cmocka_unit_test(test_sb_printf_basic),
		cmocka_unit_test(test_sb_printf_growth),
		cmocka_unit_test(test_sb_printf_exact_boundary),
		cmocka_unit_test(test_str_printable),
		cmocka_unit_test(test_mem_printable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
