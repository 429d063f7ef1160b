// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Prometheus exposition formats: see expo.h. */
#include <inttypes.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "expo.h"

void expo__init(struct expo *e, struct strbuf *sb, enum expo_format f, double created)
{
	memset(e, 0, sizeof(*e));
	e->sb = sb;
	e->format = f;
	e->created = created;
}

/* The length of the valid UTF-8 sequence at s (n bytes left), 0 if none. */
static int utf8_len(const unsigned char *s, size_t n)
{
	int len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if ((size_t)len > n)
		return 0;
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong, surrogates, past U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	/* C1 controls are valid UTF-8 but no name of anything: replaced */
	if (cp >= 0x80 && cp < 0xa0)
		return 0;
	return len;
}

void expo__label_value(struct strbuf *sb, const char *v)
{
	static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */
	const unsigned char *s = (const unsigned char *)(v ? v : "");
	size_t n = strlen((const char *)s);

	for (size_t i = 0; i < n;) {
		int len = utf8_len(s + i, n - i);

		if (s[i] == '\\') {
			sb_append(sb, "\\\\", 2);
		} else if (s[i] == '"') {
			sb_append(sb, "\\\"", 2);
		} else if (s[i] == '\n') {
			sb_append(sb, "\\n", 2);
		} else if (!len || s[i] < 0x20 || s[i] == 0x7f) {
			sb_append(sb, replacement, 3);
			i++;
			continue;
		} else {
			sb_append(sb, (const char *)s + i, len);
			i += len;
			continue;
		}
		i++;
	}
}

static const char *type_name(const struct expo *e, enum expo_type t)
{
	if (t == EXPO_COUNTER)
		return "counter";
	if (t == EXPO_GAUGE)
		return "gauge";
	return e->format == EXPO_OPENMETRICS ? "info" : "gauge";
}

void expo__family(struct expo *e, const char *name, enum expo_type type, const char *help)
{
	/*
	 * Text 0.0.4 names a family as its samples are named (a counter's
	 * with _total; no info type: the gauge NAME_info); OpenMetrics names
	 * the family without the suffix its samples carry.
	 */
	const char *sfx = e->format == EXPO_OPENMETRICS ? ""
			  : type == EXPO_COUNTER ? "_total" : type == EXPO_INFO ? "_info" : "";

	e->family = name;
	e->type = type;
	sb_printf(e->sb, "# HELP %s%s %s\n", name, sfx, help);
	sb_printf(e->sb, "# TYPE %s%s %s\n", name, sfx, type_name(e, type));
}

static void series(struct expo *e, const char *suffix, const struct expo_label *labels, int n)
{
	sb_printf(e->sb, "%s%s", e->family, suffix);
	if (n) {
		sb_append(e->sb, "{", 1);
		for (int i = 0; i < n; i++) {
			sb_printf(e->sb, "%s%s=\"", i ? "," : "", labels[i].name);
			expo__label_value(e->sb, labels[i].value);
			sb_append(e->sb, "\"", 1);
		}
		sb_append(e->sb, "}", 1);
	}
}

static const char *sample_suffix(const struct expo *e)
{
	if (e->type == EXPO_COUNTER)
		return "_total";
	if (e->type == EXPO_INFO)
		return "_info";
	return "";
}

static void created_at(struct expo *e, const struct expo_label *labels, int n, double at)
{
	if (e->type != EXPO_COUNTER || e->format != EXPO_OPENMETRICS || at <= 0)
		return;
	series(e, "_created", labels, n);
	sb_printf(e->sb, " %.3f\n", at);
}

static void created(struct expo *e, const struct expo_label *labels, int n)
{
	created_at(e, labels, n, e->created);
}

void expo__sample(struct expo *e, const struct expo_label *labels, int n, double value)
{
	series(e, sample_suffix(e), labels, n);
	if (isnan(value))
		sb_printf(e->sb, " NaN\n");
	else if (isinf(value))
		sb_printf(e->sb, " %s\n", value > 0 ? "+Inf" : "-Inf");
	else
		sb_printf(e->sb, " %.15g\n", value);
	created(e, labels, n);
	e->samples++;
}

void expo__sample_u64(struct expo *e, const struct expo_label *labels, int n, uint64_t value)
{
	series(e, sample_suffix(e), labels, n);
	sb_printf(e->sb, " %" PRIu64 "\n", value);
	created(e, labels, n);
	e->samples++;
}

void expo__sample_u64_since(struct expo *e, const struct expo_label *labels, int n,
			    uint64_t value, double at)
{
	expo__sample_u64_exemplar(e, labels, n, value, at, NULL);
}

/* An exemplar's label set fits OpenMetrics's 128 code points (counted as
 * bytes: never more code points than bytes). */
static bool exemplar_fits(const struct expo_exemplar *x)
{
	size_t len = 0;

	for (int i = 0; i < x->n; i++)
		len += strlen(x->labels[i].name) + (x->labels[i].value ? strlen(x->labels[i].value) : 0);
	return len <= EXPO_EXEMPLAR_MAX;
}

void expo__sample_u64_exemplar(struct expo *e, const struct expo_label *labels, int n,
			       uint64_t value, double at, const struct expo_exemplar *x)
{
	series(e, sample_suffix(e), labels, n);
	sb_printf(e->sb, " %" PRIu64, value);
	/* OpenMetrics only, on a counter's sample (text 0.0.4 has none) */
	if (x && e->format == EXPO_OPENMETRICS && e->type == EXPO_COUNTER && exemplar_fits(x)) {
		sb_append(e->sb, " # {", 4);
		for (int i = 0; i < x->n; i++) {
			sb_printf(e->sb, "%s%s=\"", i ? "," : "", x->labels[i].name);
			expo__label_value(e->sb, x->labels[i].value);
			sb_append(e->sb, "\"", 1);
		}
		sb_printf(e->sb, "} %" PRIu64 " %.3f", x->value, x->time);
	}
	sb_append(e->sb, "\n", 1);
	created_at(e, labels, n, at);
	e->samples++;
}

void expo__end(struct expo *e)
{
	if (e->format == EXPO_OPENMETRICS)
		sb_printf(e->sb, "# EOF\n");
}

/* q of one media range's parameters (";version=1.0.0;q=0.5"): 1 if none,
 * 0 where unreadable (RFC 9110: 0 to 1, three decimals at most). */
static double accept_q(const char *p, const char *end)
{
	double q = 1;

	while (p < end) {
		const char *semi = memchr(p, ';', end - p), *e = semi ? semi : end;

		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (e - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
			char num[8];
			size_t n = e - p - 2;

			while (n && (p[2 + n - 1] == ' ' || p[2 + n - 1] == '\t'))
				n--;
			if (n >= sizeof(num))
				return 0;
			memcpy(num, p + 2, n);
			num[n] = '\0';
			if (sscanf(num, "%lf", &q) != 1 || !(q >= 0 && q <= 1))
				return 0;
		}
		p = semi ? semi + 1 : end;
	}
	return q;
}

/* Does the range [p, e) (whitespace trimmed) name type, case aside? */
static bool range_is(const char *p, const char *e, const char *type)
{
	size_t n = strlen(type);

	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	return (size_t)(e - p) == n && !strncasecmp(p, type, n);
}

enum expo_format expo__negotiate(const char *accept)
{
	/*
	 * Prometheus asks "application/openmetrics-text;version=1.0.0,...;q=0.5,
	 * text/plain;version=0.0.4;q=0.4,..." when it scrapes OpenMetrics. The
	 * best q of each format wins (a tie: OpenMetrics, as asked first by a
	 * scraper that takes both); q=0 is "not acceptable" (RFC 9110); one
	 * pass over the header, however long.
	 */
	double om = 0, text = 0;

	for (const char *p = accept; p && *p;) {
		const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);
		const char *semi = memchr(p, ';', end - p), *type_end = semi ? semi : end;
		double q = accept_q(semi ? semi + 1 : end, end);

		if (range_is(p, type_end, "application/openmetrics-text")) {
			if (q > om)
				om = q;
		} else if (range_is(p, type_end, "text/plain") || range_is(p, type_end, "text/*") ||
			   range_is(p, type_end, "*/*")) {
			if (q > text)
				text = q;
		}
		p = comma ? comma + 1 : end;
	}
	return om > 0 && om >= text ? EXPO_OPENMETRICS : EXPO_TEXT;
}
