// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Rates and sizes people type, and the three-significant-digit figures
 * printed back. See units.h for the accepted forms; the ranges:
 *
 *   rate in bits   above 0, at most 1 Tbit/s (UNITS_MAX_BPS)
 *   rate in pps    above 0, at most 1 Gpps (UNITS_MAX_PPS)
 *   size           min..max as the caller asks, rounded to the nearest byte
 *
 * A well-formed number out of range (0, "-5M", "2T", "1e400") is -ERANGE,
 * so a caller can say "out of range" rather than "not a rate"; anything
 * else that is not exactly one of the forms (spaces, hex, "inf", a unit
 * we do not know, "MB/s" whose B would be bytes) is -EINVAL.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "units.h"

#define UNITS_MAX_BPS 1e12
#define UNITS_MAX_PPS 1e9

/*
 * The number at the start of s: [-]digits[.digits][e[+-]digits] (or
 * [-].digits...). Decimal only: strtod alone would take "0x1p3", "inf",
 * "nan" and leading spaces. Returns the characters used, 0 if none.
 */
static size_t scan_number(const char *s, double *v, bool *neg)
{
	const char *p = s;
	char buf[64];
	size_t digits = 0, n;

	*neg = *p == '-';
	if (*neg)
		p++;
	while (*p >= '0' && *p <= '9')
		p++, digits++;
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9')
			p++, digits++;
	}
	if (!digits)
		return 0;
	if (*p == 'e' || *p == 'E') {
		const char *e = p + 1;

		if (*e == '+' || *e == '-')
			e++;
		/* "1e" is not an exponent: the 'e' is left for the unit (and fails) */
		if (*e >= '0' && *e <= '9') {
			while (*e >= '0' && *e <= '9')
				e++;
			p = e;
		}
	}
	n = p - s;
	if (n >= sizeof(buf))
		return 0;
	memcpy(buf, s, n);
	buf[n] = 0;
	*v = strtod(buf, NULL); /* the grammar above is a subset of strtod's */
	return n;
}

/* SI prefix of a rate: k, M, G, T (either case: "100m" is iperf3's 100 Mbit/s). */
static double rate_prefix(char c)
{
	switch (c) {
	case 'k': case 'K': return 1e3;
	case 'm': case 'M': return 1e6;
	case 'g': case 'G': return 1e9;
	case 't': case 'T': return 1e12;
	}
	return 0;
}

int parse_rate(const char *s, struct rate *r)
{
	static const char *const bit_units[] = { "", "bit", "bits", "bps", "b/s", "bit/s" };
	double v, mult = 1;
	bool neg, pps = false, known = false;
	size_t n;

	if (!s)
		return -EINVAL;
	n = scan_number(s, &v, &neg);
	if (!n)
		return -EINVAL;
	s += n;
	if (rate_prefix(*s)) {
		mult = rate_prefix(*s);
		s++;
	}
	if (!strcmp(s, "pps")) {
		pps = known = true;
	} else {
		for (size_t i = 0; i < sizeof(bit_units) / sizeof(bit_units[0]); i++)
			if (!strcmp(s, bit_units[i]))
				known = true;
	}
	if (!known)
		return -EINVAL;
	v *= mult;
	if (neg || !(v > 0) || v > (pps ? UNITS_MAX_PPS : UNITS_MAX_BPS))
		return -ERANGE;
	r->bps = pps ? 0 : v;
	r->pps = pps ? v : 0;
	return 0;
}

int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	double v, mult = 1;
	bool neg;
	size_t n;

	if (!s)
		return -EINVAL;
	n = scan_number(s, &v, &neg);
	if (!n)
		return -EINVAL;
	s += n;
	switch (*s) {
	case 'k': case 'K': mult = 1024.0; break;
	case 'm': case 'M': mult = 1024.0 * 1024; break;
	case 'g': case 'G': mult = 1024.0 * 1024 * 1024; break;
	}
	if (mult > 1) {
		s++;
		/* "KiB": the same power of 1024; "Ki" alone is not a unit */
		if (s[0] == 'i' && s[1] == 'B')
			s++;
	}
	if (*s == 'B')
		s++;
	if (*s)
		return -EINVAL;
	v = round(v * mult);
	/* compare as doubles first: 1e30 does not fit a uint64_t */
	if (neg || v < (double)min || v > (double)max || v >= 18446744073709551616.0)
		return -ERANGE;
	if ((uint64_t)v < min || (uint64_t)v > max)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

/* v rounded to three significant digits (0 stays 0). */
static double round3(double v)
{
	if (!(v > 0))
		return 0;
	double scale = pow(10, 2 - floor(log10(v)));

	return round(v * scale) / scale;
}

/*
 * v in the first unit, each next unit `step` times larger: pick the unit
 * whose figure, rounded to three significant digits, is below 1000
 * (999.6 ms prints as "1.00 s", not "1000 ms"). In the first unit,
 * figures from `whole_from` up print whole: a count of pps or bit/s from
 * 10 (12 pps, not 12.0 pps), nanoseconds always (80 ns).
 */
static void fmt3(char *buf, int len, double v, const char *const *units,
		 int nunits, double step, double whole_from)
{
	int u = 0, decimals;

	if (!(v > 0) || !isfinite(v))
		v = 0; /* nothing sensible to print for NaN or negatives */
	while (u < nunits - 1 && round3(v) >= 1000) {
		v /= step;
		u++;
	}
	v = round3(v);
	if (v == 0 || v >= 100 || (u == 0 && v >= whole_from))
		decimals = 0;
	else if (v >= 10)
		decimals = 1;
	else if (v >= 1)
		decimals = 2;
	else
		decimals = 3; /* below 1 in the smallest unit only: 0.500 bit/s */
	snprintf(buf, len, "%.*f %s", decimals, v, units[u]);
}

void fmt_bitrate(char *buf, int len, double bps)
{
	static const char *const units[] = { "bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s" };

	fmt3(buf, len, bps, units, 5, 1000, 10);
}

void fmt_pps(char *buf, int len, double pps)
{
	static const char *const units[] = { "pps", "kpps", "Mpps", "Gpps" };

	fmt3(buf, len, pps, units, 4, 1000, 10);
}

void fmt_ns(char *buf, int len, double ns)
{
	static const char *const units[] = { "ns", "us", "ms", "s" };

	/* past 999 s the seconds keep growing: "1234 s", not "1.23 ks" */
	if (ns >= 999.5e9 && isfinite(ns)) {
		snprintf(buf, len, "%.0f s", ns / 1e9);
		return;
	}
	fmt3(buf, len, ns, units, 4, 1000, 0);
}
