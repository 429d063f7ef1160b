/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Quantities people type: rates and sizes with units, as iperf3 and tc
 * accept them. Strict: the whole string, in range, or -EINVAL / -ERANGE.
 */
#ifndef UD_UNITS_H
#define UD_UNITS_H

#include <stdint.h>

/*
 * A rate: bits per second with SI prefixes ("100M", "1.5G", "64k", "1e9",
 * optional trailing "bit", "bps", "b/s"), or datagrams per second with a
 * "pps" suffix ("250kpps", "1Mpps", "5000pps"). k/M/G/T are powers of 1000.
 */
struct rate {
	double bps;   /* > 0 when given in bits */
	double pps;   /* > 0 when given in datagrams */
};
int parse_rate(const char *s, struct rate *r);

/*
 * A size in bytes: "1472", "64K", "4MiB", "212992", "1.5M". K/M/G are
 * powers of 1024 (buffer sizes are); a "B" suffix is allowed.
 */
int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* "1.00 Gbit/s", "99.9 Mbit/s", "640 bit/s": SI, three significant digits. */
void fmt_bitrate(char *buf, int len, double bps);
/* "1.20 Mpps", "250 kpps", "12 pps" */
void fmt_pps(char *buf, int len, double pps);
/* "12.3 ms", "450 us", "80 ns", "2.10 s": a duration in ns with its unit. */
void fmt_ns(char *buf, int len, double ns);

#endif
