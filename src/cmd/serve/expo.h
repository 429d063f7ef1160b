/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Prometheus exposition formats, written: text 0.0.4 and OpenMetrics
 * 1.0 (the same families; OpenMetrics adds `_created` to counters, names
 * info metrics by their family and ends with `# EOF`). Label values come
 * from unprivileged users (a process's comm, a netns name): every value is
 * escaped (\\, \", \n) and made valid UTF-8 (a byte that is not becomes
 * U+FFFD, as does a control character), so no value can end a line or
 * forge a sample. Pure: no I/O (fuzzed by tests/unit/cmd/serve/).
 */
#ifndef UDPDROP_EXPO_H
#define UDPDROP_EXPO_H

#include <stdbool.h>
#include <stdint.h>
#include "util.h"

enum expo_format { EXPO_TEXT, EXPO_OPENMETRICS };

/* The content types, for the Content-Type header. */
#define EXPO_TEXT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define EXPO_OPENMETRICS_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

enum expo_type { EXPO_COUNTER, EXPO_GAUGE, EXPO_INFO };

struct expo {
	struct strbuf *sb;
	enum expo_format format;
	double created;         /* OpenMetrics counters' _created (Unix s); 0: none */
	enum expo_type type;    /* of the family being written */
	const char *family;
	uint64_t samples;       /* written so far (the self-metric of series) */
};

struct expo_label {
	const char *name;       /* [a-zA-Z_][a-zA-Z0-9_]*, the caller's constant */
	const char *value;      /* any bytes; NULL is written as "" */
};

void expo__init(struct expo *e, struct strbuf *sb, enum expo_format f, double created);
/*
 * Begin a family: `# HELP` and `# TYPE`. name is the family's as
 * OpenMetrics names it: a counter without `_total`, an info metric without
 * `_info` (text 0.0.4 names both with the suffix, an info as a gauge).
 */
void expo__family(struct expo *e, const char *name, enum expo_type type, const char *help);
/* One sample of the current family, with n labels. */
void expo__sample(struct expo *e, const struct expo_label *labels, int n, double value);
void expo__sample_u64(struct expo *e, const struct expo_label *labels, int n, uint64_t value);
/* The same with a created time of its own (a series that began later). */
void expo__sample_u64_since(struct expo *e, const struct expo_label *labels, int n,
			    uint64_t value, double created);
/*
 * An OpenMetrics exemplar: one example of what a counter's sample counts
 * (" # {src=\"10.0.0.1\"} 40 1764000000.123" after the value), at most
 * EXPO_EXEMPLAR_MAX label bytes (the format's limit: 128 code points; one
 * that does not fit is left out). Text 0.0.4 and gauges carry none.
 */
#define EXPO_EXEMPLAR_MAX 128
struct expo_exemplar {
	const struct expo_label *labels;
	int n;
	uint64_t value;
	double time;            /* Unix s */
};
/* expo__sample_u64_since with an exemplar (NULL: none). */
void expo__sample_u64_exemplar(struct expo *e, const struct expo_label *labels, int n,
			       uint64_t value, double at, const struct expo_exemplar *x);
/* The end of the page (OpenMetrics: "# EOF"). */
void expo__end(struct expo *e);

/* Pick the format for an Accept header value (NULL or "" : text). */
enum expo_format expo__negotiate(const char *accept);

/* Append v to sb as an escaped, valid UTF-8 label value (exposed for tests). */
void expo__label_value(struct strbuf *sb, const char *v);

#endif
