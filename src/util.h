/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Small pure helpers: option parsing, units, address formatting. */
#ifndef UD_UTIL_H
#define UD_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Strict parsers: the whole string, in range, or -EINVAL / -ERANGE. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int parse_seconds(const char *s, double min, double max, double *out);

/* "1.5 KiB", "212 KiB", "8.0 MiB": binary units, always with the unit. */
void fmt_bytes(char *buf, size_t len, uint64_t bytes);
/* "1,204": thousands separators for counts people compare by eye. */
void fmt_count(char *buf, size_t len, uint64_t n);
/* "10.0.0.2:5001", "[fe80::1]:53", "*:5001"; port 0 prints as "*". */
void fmt_endpoint(char *buf, size_t len, int family, const void *addr,
		  uint16_t port);
/* Address alone: "10.0.0.1", "fe80::1", "*" for the unspecified address. */
void fmt_addr(char *buf, size_t len, int family, const void *addr);

/* Control bytes (a comm may hold any) would move a terminal's cursor: '?'.
 * The same as mem_printable(s, strlen(s), false). */
void str_printable(char *s);

uint64_t now_ns(void);      /* CLOCK_MONOTONIC */
double wall_time(void);     /* CLOCK_REALTIME, seconds */

/* A growable string. */
struct strbuf {
	char *buf;
	size_t len, cap;
};
void sb_printf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sb_append(struct strbuf *sb, const char *s, size_t n);
void sb_free(struct strbuf *sb);

/*
 * Text wrapped at `width` columns under a label column (report's advice,
 * doctor's findings and checklist): the first line "    LABEL     text",
 * the rest indented 14. Lines break at spaces, never before a word that
 * belongs to the one before it (wrap_glued).
 */
void sb_wrapped(struct strbuf *out, const char *label, const char *text, int width);
/* A word that stays on the previous word's line: a unit after its number
 * ("8192 B", "13.9 ms"), a flag after its command ("sysctl -w"). */
bool wrap_glued(const char *w);


/*
 * Text from a file, the kernel or another user's process, made safe for a
 * terminal before it is printed: in place, its length kept, each byte of a
 * C0 control (but '\n' where keep_newlines), DEL, a C1 control written as
 * UTF-8 (U+0080..U+009F) or anything that is not valid UTF-8 (a raw 0x9b
 * is CSI to a terminal in an 8-bit mode) becomes '?'. Other UTF-8 stays:
 * names may be in any script.
 */
void mem_printable(char *s, size_t n, bool keep_newlines);
/* Whether mem_printable would leave s[0..n) as it is. */
bool mem_is_printable(const char *s, size_t n, bool newlines);
/* Bytes in the valid UTF-8 character at p (n bytes left): 1 to 4, or 0
 * (overlong, a surrogate, above U+10FFFF, cut short) (RFC 3629). */
int utf8_seq_len(const unsigned char *p, size_t n);

#endif
