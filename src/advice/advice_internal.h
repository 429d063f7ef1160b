/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the advice's own files (advice.c, advice_*.c) share, and nothing
 * else includes (advice.h is the advice's API): the saturating arithmetic
 * and text helpers every rule uses, with their one-letter macros, the
 * rcvbuf and sender plans the hint shares, and the functions one file
 * calls in another (the file is named above them).
 */
#ifndef UD_ADVICE_INTERNAL_H
#define UD_ADVICE_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "advice.h"
#include "units.h"
#include "util.h"

/* ---- saturating arithmetic -------------------------------------------- */

/*
 * The inputs may come from a hostile or corrupt trace (UINT64_MAX bytes,
 * a zero span): every double that becomes an integer goes through d2u
 * (converting an out-of-range double is undefined behaviour), and the
 * integer arithmetic saturates instead of wrapping.
 */
static inline uint64_t d2u(double v, uint64_t max)
{
	if (!(v > 0)) /* NaN, negative, zero */
		return 0;
	if (v >= (double)max)
		return max;
	return (uint64_t)v < max ? (uint64_t)v : max;
}

static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static inline uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* A UDP payload size as an integer: 0 for NaN or below, at most 65535 B. */
static inline uint64_t payload_u(double v)
{
	return d2u(v + 0.5, ADVICE_PAYLOAD_MAX);
}

/* ---- text helpers ------------------------------------------------------ */

static inline void add(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline void add(char *buf, size_t len, const char *fmt, ...)
{
	size_t o = strnlen(buf, len);
	va_list ap;

	if (o + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + o, len - o, fmt, ap);
	va_end(ap);
}

static inline const char *count(char *buf, size_t len, uint64_t v)
{
	fmt_count(buf, len, v);
	return buf;
}

/* "1.25 s", "13.9 ms": three significant digits, with the unit. */
static inline const char *secs(char *buf, size_t len, double s)
{
	fmt_ns(buf, (int)len, s * 1e9);
	return buf;
}

static inline const char *per_s(char *buf, size_t len, double v)
{
	if (v >= 100)
		snprintf(buf, len, "%.0f/s", v);
	else if (v >= 1)
		snprintf(buf, len, "%.1f/s", v);
	else
		snprintf(buf, len, "%.3g/s", v);
	return buf;
}

#define B(v) advice__bytes((char[64]){ 0 }, 64, (v))
#define N(v) count((char[32]){ 0 }, 32, (v))
#define S(v) secs((char[32]){ 0 }, 32, (v))
#define R(v) per_s((char[32]){ 0 }, 32, (v))

static inline const char *bitrate(char *buf, size_t len, double bps)
{
	fmt_bitrate(buf, (int)len, bps);
	return buf;
}
#define BPS(v) bitrate((char[32]){ 0 }, 32, (v))

static inline const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static inline void trim(char *s)
{
	size_t n = strlen(s);

	while (n && s[n - 1] == ' ')
		s[--n] = 0;
}

/* ---- the plans the hint shares ----------------------------------------- */

/*
 * What the rcvbuf rule decides, shared by the finding (rcvbuf) and the
 * hint (hint_rcvbuf): the truesize, the buffer for the worst burst, and
 * whether to pace the sender instead of growing the buffer.
 *
 * The buffer has room for twice the worst burst seen (ADVICE_BURST_MARGIN):
 * a buffer sized for exactly that burst drops again at the next, slightly
 * longer one (a 100 ms stall at 1000/s drops 88 to 91 datagrams, run to
 * run), so following the advice would not reliably remove the drops.
 */
struct rcvbuf_plan {
	double payload;   /* bytes per datagram, 0 unknown */
	double ts;        /* truesize per datagram (given or estimated), 0 unknown */
	bool ts_est;      /* ts is the estimate */
	uint64_t rb;      /* rcvbuf, 0 unknown */
	bool large;       /* rb is already very large */
	bool have_burst;  /* a burst to size a buffer for */
	double need_d;    /* rcvbuf + margin x burst x truesize, in double */
	bool sustained;   /* drops in most intervals: a steady overload */
	bool too_big;     /* the buffer for the burst would pass the cap */
	bool pace;        /* pace the sender: a bigger buffer will not help */
	int set;          /* the app set SO_RCVBUF: 1, did not: 0, unknown: -1 */
	bool not_reading; /* nothing read the socket while it dropped */
	bool drained;     /* its queue was seen below half its buffer at a look:
			     the reader caught up between drops (bursts) */
	bool sparse;      /* drops in fewer than 3/4 of the fine windows of
			     their stretch (bursts) */
	double drained_dgps; /* what the reader took while it dropped (its own
				deliveries per second), 0 unknown */
	uint64_t pace_dgps;  /* pace: the rate to pace the sender to (0: unknown) */
	uint64_t need;    /* have_burst && !pace: the buffer for the worst burst
			     with its margin, rounded up to 4 KiB (else 0) */
	uint64_t fallback; /* !have_burst && !pace: the buffer to raise to, no
			      burst known to size it by: 8 MiB (Jones and
			      Zhu's starting point), 16 MiB from 8 MiB on */
	uint64_t own;     /* this socket's own need (0: none sized), before a
			     sibling's larger one replaced it (shared) */
	bool shared;      /* need is a sibling's (advice_input.sibling_need) */
};

/*
 * What the sender rule decides, shared by the finding (sender) and the
 * hint (hint_sender): the send buffer against message size x txqueuelen,
 * and whether to shrink it (else: pace, or the qdisc's limit).
 */
struct sndbuf_plan {
	double payload;      /* bytes per datagram, 0 unknown */
	uint64_t sb;         /* the send buffer */
	const char *sb_from; /* where sb comes from; NULL: not known */
	uint64_t limit;      /* message size x txqueuelen, 0 unknown */
	bool shrink;         /* sb is above limit: keep it under */
};

/* advice_text.c */
void advice_drops_line(const struct advice_input *in, char *e, size_t len);
void advice_set_value(struct advice_finding *f, const char *setting, uint64_t v);
struct advice_finding *advice_next(struct advice_finding *out, int max, int *n,
				   enum cause c);
void advice_set_sysctl(const struct advice_input *in, struct advice_finding *f,
		       const char *name, uint64_t v, const char *value_text);
void advice_add_sysctl(const struct advice_input *in, char *buf, size_t len,
		       const char *name, uint64_t v);

/* advice_rcvbuf.c */
struct rcvbuf_plan advice_rcvbuf_plan(const struct advice_input *in);
int advice_rcvbuf(const struct advice_input *in, struct advice_finding *out, int max);

/* advice_rules.c */
struct sndbuf_plan advice_sndbuf_plan(const struct advice_input *in);
int advice_udp_mem(const struct advice_input *in, struct advice_finding *out, int max);
int advice_sender(const struct advice_input *in, struct advice_finding *out, int max);
int advice_frag(const struct advice_input *in, struct advice_finding *out, int max);
int advice_simple(const struct advice_input *in, struct advice_finding *out, int max);

#endif
