// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for src/base/units.c: rates and sizes with units, and the figures printed back. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>
#include "units.h"

#define SENTINEL 0xdeadbeefcafef00dull

/* ---- parse_rate ---- */

static void expect_bps(const char *s, double want)
{
	struct rate r = { -1, -1 };

	assert_int_equal(parse_rate(s, &r), 0);
	/* exact: every prefix is a power of ten and the inputs are short */
	if (r.bps != want)
		fail_msg("parse_rate(\"%s\"): bps %.17g, want %.17g", s, r.bps, want);
	assert_true(r.pps == 0);
}

static void expect_pps(const char *s, double want)
{
	struct rate r = { -1, -1 };

	assert_int_equal(parse_rate(s, &r), 0);
	if (r.pps != want)
		fail_msg("parse_rate(\"%s\"): pps %.17g, want %.17g", s, r.pps, want);
	assert_true(r.bps == 0);
}

static void expect_rate_err(const char *s, int err)
{
	struct rate r = { -1, -1 };
	int got = parse_rate(s, &r);

	if (got != err)
		fail_msg("parse_rate(\"%s\") = %d, want %d", s, got, err);
	assert_true(r.bps == -1 && r.pps == -1); /* untouched on error */
}

static void test_rate_bits(void **state)
{
	expect_bps("1", 1);
	expect_bps("640", 640);
	expect_bps("64k", 64e3);
	expect_bps("64K", 64e3);
	expect_bps("100M", 100e6);
	expect_bps("100m", 100e6);  /* iperf3: m is mega, not milli */
	expect_bps("1G", 1e9);
	expect_bps("1.5G", 1.5e9);
	expect_bps("1g", 1e9);
	expect_bps("1T", 1e12);
	expect_bps("0.5", 0.5);
	expect_bps(".5k", 500);
	expect_bps("1e9", 1e9);
	expect_bps("1E6", 1e6);
	expect_bps("2.5e+3k", 2.5e6);
	expect_bps("5e-1", 0.5);
	/* the bit suffixes, with and without a prefix */
	expect_bps("100Mbit", 100e6);
	expect_bps("100Mbits", 100e6);
	expect_bps("100Mbps", 100e6);
	expect_bps("100Mb/s", 100e6);
	expect_bps("100Mbit/s", 100e6);
	expect_bps("9600bps", 9600);
	expect_bps("10kbit", 10e3);
}

static void test_rate_pps(void **state)
{
	expect_pps("5000pps", 5000);
	expect_pps("250kpps", 250e3);
	expect_pps("250Kpps", 250e3);
	expect_pps("1Mpps", 1e6);
	expect_pps("1.5Mpps", 1.5e6);
	expect_pps("1Gpps", 1e9);      /* the largest */
	expect_pps("0.5pps", 0.5);
	expect_pps("1e3pps", 1e3);
}

static void test_rate_range(void **state)
{
	expect_rate_err("0", -ERANGE);
	expect_rate_err("0M", -ERANGE);
	expect_rate_err("0.0", -ERANGE);
	expect_rate_err("0pps", -ERANGE);
	expect_rate_err("-1", -ERANGE);
	expect_rate_err("-100M", -ERANGE);
	expect_rate_err("-5pps", -ERANGE);
	expect_rate_err("1.000001T", -ERANGE);  /* above 1 Tbit/s */
	expect_rate_err("2T", -ERANGE);
	expect_rate_err("1e13", -ERANGE);
	expect_rate_err("1e400", -ERANGE);      /* strtod: inf */
	expect_rate_err("1.1Gpps", -ERANGE);    /* above 1 Gpps */
	expect_rate_err("1Tpps", -ERANGE);
	expect_bps("1000G", 1e12);              /* the limit itself is fine */
}

static void test_rate_junk(void **state)
{
	static const char *const bad[] = {
		"", "M", "k", "pps", "bit", ".", "-", "-.", "e5",
		" 1M", "1M ", "1 M", "+1M", "1,000",
		"1MB", "1MBps", "1MB/s", "1Mbyte", "1B", /* bytes: not a bit rate */
		"1x", "1Mx", "1MM", "1kM", "1Mpp", "1Mppss", "1ppsM", "1Mbit/", "1Mbi",
		"0x10", "0x1p3", "inf", "nan", "infinity", "1e", "1e+", "1.2.3",
		"1MPPS", "1MBIT", "1Mbit/S", "max", "1Pbit", "1E",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_rate_err(bad[i], -EINVAL);
	expect_rate_err(NULL, -EINVAL);
}

/* ---- parse_size ---- */

static void expect_size(const char *s, uint64_t min, uint64_t max, uint64_t want)
{
	uint64_t v = SENTINEL;
	int err = parse_size(s, min, max, &v);

	if (err || v != want)
		fail_msg("parse_size(\"%s\") = %d, %llu; want %llu", s, err,
			 (unsigned long long)v, (unsigned long long)want);
}

static void expect_size_err(const char *s, uint64_t min, uint64_t max, int want)
{
	uint64_t v = SENTINEL;
	int err = parse_size(s, min, max, &v);

	if (err != want)
		fail_msg("parse_size(\"%s\") = %d, want %d", s, err, want);
	assert_true(v == SENTINEL);
}

static void test_size_units(void **state)
{
	expect_size("1472", 0, UINT64_MAX, 1472);
	expect_size("212992", 0, UINT64_MAX, 212992);
	expect_size("1472B", 0, UINT64_MAX, 1472);
	expect_size("64K", 0, UINT64_MAX, 65536);
	expect_size("64k", 0, UINT64_MAX, 65536);
	expect_size("64KB", 0, UINT64_MAX, 65536);
	expect_size("64KiB", 0, UINT64_MAX, 65536);
	expect_size("4M", 0, UINT64_MAX, 4194304);
	expect_size("4MiB", 0, UINT64_MAX, 4194304);
	expect_size("4m", 0, UINT64_MAX, 4194304);
	expect_size("1g", 0, UINT64_MAX, 1073741824);
}

static void test_size_fractions(void **state)
{
	expect_size("1.5M", 0, UINT64_MAX, 1572864);
	expect_size("1.5K", 0, UINT64_MAX, 1536);
	expect_size("2G", 0, UINT64_MAX, 2147483648ull);
	expect_size("2GiB", 0, UINT64_MAX, 2147483648ull);
	expect_size("1e3", 0, UINT64_MAX, 1000);
	expect_size("0", 0, 10, 0);
}

static void test_size_rounding(void **state)
{
	/* to the nearest byte, halves away from zero */
	expect_size("0.3K", 0, UINT64_MAX, 307);    /* 307.2 */
	expect_size("0.7K", 0, UINT64_MAX, 717);    /* 716.8 */
	expect_size("1.0001K", 0, UINT64_MAX, 1024);/* 1024.1024 */
	expect_size("100.5", 0, UINT64_MAX, 101);
	expect_size("100.4", 0, UINT64_MAX, 100);
	/* the range applies to the rounded value */
	expect_size("65507.4", 48, 65507, 65507);
	expect_size_err("65507.5", 48, 65507, -ERANGE);
	expect_size("47.5", 48, 65507, 48);
	expect_size_err("47.4", 48, 65507, -ERANGE);
}

static void test_size_range(void **state)
{
	expect_size("48", 48, 65507, 48);
	expect_size("65507", 48, 65507, 65507);
	expect_size_err("47", 48, 65507, -ERANGE);
	expect_size_err("65508", 48, 65507, -ERANGE);
	expect_size_err("64K", 48, 65507, -ERANGE);
	expect_size_err("0", 1, 10, -ERANGE);
	expect_size_err("-1", 0, 10, -ERANGE);
	expect_size_err("-1K", 0, UINT64_MAX, -ERANGE);
	expect_size_err("1e30", 0, UINT64_MAX, -ERANGE);
	expect_size_err("1e400", 0, UINT64_MAX, -ERANGE);
	expect_size_err("17179869184G", 0, UINT64_MAX, -ERANGE); /* 2^64 */
	expect_size("17179869183G", 0, UINT64_MAX, 18446744072635809792ull); /* 2^64 - 2^30 */
}

static void test_size_junk(void **state)
{
	static const char *const bad[] = {
		"", "K", "B", "iB", " 1", "1 ", "1 K", "+1", "1KK", "1Ki", "1KiBB",
		"1iB", "1Kb", "1kbit", "1T", "1P", "0x10", "inf", "nan", "1e",
		"1,5K", "1..5", "1BK", "4mb", "1kib",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_size_err(bad[i], 0, UINT64_MAX, -EINVAL);
	expect_size_err(NULL, 0, UINT64_MAX, -EINVAL);
}

/* ---- fmt_* ---- */

#define EXPECT_FMT(fn, v, want) do {					\
	char buf[32];							\
	memset(buf, 'x', sizeof(buf));					\
	fn(buf, sizeof(buf), (v));					\
	if (strcmp(buf, (want)))					\
		fail_msg(#fn "(%.17g) = \"%s\", want \"%s\"", (double)(v), buf, (want)); \
} while (0)

static void test_fmt_bitrate(void **state)
{
	EXPECT_FMT(fmt_bitrate, 1e9, "1.00 Gbit/s");
	EXPECT_FMT(fmt_bitrate, 99.9e6, "99.9 Mbit/s");
	EXPECT_FMT(fmt_bitrate, 640, "640 bit/s");
	EXPECT_FMT(fmt_bitrate, 64, "64 bit/s");
	EXPECT_FMT(fmt_bitrate, 6.4, "6.40 bit/s");
	EXPECT_FMT(fmt_bitrate, 0.5, "0.500 bit/s");
	EXPECT_FMT(fmt_bitrate, 0, "0 bit/s");
	EXPECT_FMT(fmt_bitrate, -5, "0 bit/s");
	EXPECT_FMT(fmt_bitrate, NAN, "0 bit/s");
	EXPECT_FMT(fmt_bitrate, 1000, "1.00 kbit/s");
	EXPECT_FMT(fmt_bitrate, 999.4, "999 bit/s");
	EXPECT_FMT(fmt_bitrate, 999.5, "1.00 kbit/s");   /* rounds into the next unit */
	EXPECT_FMT(fmt_bitrate, 50e6, "50.0 Mbit/s");
	EXPECT_FMT(fmt_bitrate, 49.96e6, "50.0 Mbit/s");
	EXPECT_FMT(fmt_bitrate, 49.94e6, "49.9 Mbit/s");
	EXPECT_FMT(fmt_bitrate, 1234567, "1.23 Mbit/s");
	EXPECT_FMT(fmt_bitrate, 1235678, "1.24 Mbit/s");
	EXPECT_FMT(fmt_bitrate, 999.6e6, "1.00 Gbit/s");
	EXPECT_FMT(fmt_bitrate, 123.4e9, "123 Gbit/s");
	EXPECT_FMT(fmt_bitrate, 1e12, "1.00 Tbit/s");
	EXPECT_FMT(fmt_bitrate, 5e15, "5000 Tbit/s");    /* the last unit grows */
}

static void test_fmt_pps(void **state)
{
	EXPECT_FMT(fmt_pps, 1.2e6, "1.20 Mpps");
	EXPECT_FMT(fmt_pps, 250e3, "250 kpps");
	EXPECT_FMT(fmt_pps, 12, "12 pps");
	EXPECT_FMT(fmt_pps, 12.4, "12 pps");
	EXPECT_FMT(fmt_pps, 4245.92, "4.25 kpps");
	EXPECT_FMT(fmt_pps, 2.5, "2.50 pps");
	EXPECT_FMT(fmt_pps, 0, "0 pps");
	EXPECT_FMT(fmt_pps, 999.7e3, "1.00 Mpps");
	EXPECT_FMT(fmt_pps, 3e9, "3.00 Gpps");
}

static void test_fmt_ns(void **state)
{
	EXPECT_FMT(fmt_ns, 12.3e6, "12.3 ms");
	EXPECT_FMT(fmt_ns, 450e3, "450 us");
	EXPECT_FMT(fmt_ns, 80, "80 ns");
	EXPECT_FMT(fmt_ns, 5, "5 ns");
	EXPECT_FMT(fmt_ns, 0, "0 ns");
	EXPECT_FMT(fmt_ns, 2.1e9, "2.10 s");
	EXPECT_FMT(fmt_ns, 999, "999 ns");
	EXPECT_FMT(fmt_ns, 999.6, "1.00 us");
	EXPECT_FMT(fmt_ns, 1500, "1.50 us");
	EXPECT_FMT(fmt_ns, 235520, "236 us");
	EXPECT_FMT(fmt_ns, 999.6e6, "1.00 s");
	EXPECT_FMT(fmt_ns, 999e9, "999 s");
	EXPECT_FMT(fmt_ns, 1234e9, "1234 s");
	EXPECT_FMT(fmt_ns, 36000e9, "36000 s");
}

static void test_fmt_truncates(void **state)
{
	char buf[6];

	/* snprintf semantics: cut and terminated, never past the buffer */
	fmt_bitrate(buf, sizeof(buf), 1e9);
	assert_string_equal(buf, "1.00 ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_bits),
		cmocka_unit_test(test_rate_pps),
		cmocka_unit_test(test_rate_range),
		cmocka_unit_test(test_rate_junk),
		cmocka_unit_test(test_size_units),
		cmocka_unit_test(test_size_fractions),
		cmocka_unit_test(test_size_rounding),
		cmocka_unit_test(test_size_range),
		cmocka_unit_test(test_size_junk),
		cmocka_unit_test(test_fmt_bitrate),
		cmocka_unit_test(test_fmt_pps),
		cmocka_unit_test(test_fmt_ns),
		cmocka_unit_test(test_fmt_truncates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
