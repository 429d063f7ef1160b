/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Small helpers: option parsing, units, address formatting, output files. */
#ifndef UD_UTIL_H
#define UD_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

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
/* Sleep until deadline (CLOCK_MONOTONIC ns, as now_ns()) or until a
 * signal sets *stop. */
void sleep_until_ns(uint64_t deadline, volatile sig_atomic_t *stop);
/* "udp", "udplite", or the IP protocol's number in buf. */
const char *proto_name(int proto, char *buf, int len);

/* Control bytes (a comm may hold any) would move a terminal's cursor: '?'.
 * The same as mem_printable(s, strlen(s), false). */
void str_printable(char *s);

uint64_t now_ns(void);      /* CLOCK_MONOTONIC */
/* Write all n bytes to fd (EINTR retried): 0 or -errno. Adds the bytes
 * written to *done where done is not NULL (a short write's part too). */
int write_all(int fd, const void *p, size_t n, uint64_t *done);
/* now_ns() when main() began (0 before): -v's start-up times count from it */
void process_mark_start(void);
uint64_t process_start_ns(void);
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

/* ---- output files ---- */

/*
 * A file the user named for udpdrop to write (record -o, report --pcap),
 * opened so that running as root never damages what the name points at:
 *
 *   - symlinks are followed, never replaced or removed: -o /dev/stdout
 *     writes to standard output;
 *   - nothing there: created mode 0600 (O_EXCL), and removed again by
 *     out_file__discard;
 *   - a regular file: refused without force; with it, truncated and
 *     written in place, its mode, owner and links kept (never chmod'ed);
 *   - a character device or FIFO: written through, force or not (there is
 *     nothing to overwrite); never truncated, chmod'ed or removed. A FIFO
 *     is opened non-blocking first, so that open() never waits for a
 *     reader: without one, -ENXIO and "start the reader first";
 *   - a directory, block device, socket or a symlink to nothing: refused
 *     (-EINVAL), never opened for writing.
 *
 * The type is looked at with stat() before the open and checked again with
 * fstat() on what was opened: a name swapped in between is looked at anew.
 * ints are 0 or -errno; on error msg holds one line without a prefix (the
 * caller adds "udpdrop record: ").
 */
enum out_file_kind {
	OUT_FILE_NEW,      /* created here: removed by out_file__discard */
	OUT_FILE_EXISTING, /* a regular file that was there: emptied, kept */
	OUT_FILE_STREAM,   /* a character device or FIFO: left as it is */
};

struct out_file {
	int fd;
	enum out_file_kind kind;
	dev_t dev;  /* what was opened: discard removes only the file */
	ino_t ino;  /* created here, not one put under its name since */
	char *path;
};

/*
 * The refusals out_file__open would make, without opening anything (for a
 * usage check before other work): -EEXIST (a regular file, no force: "PATH
 * exists: give -f to overwrite it, or another name"), -EINVAL (a type never
 * written), else 0 (what open says then is a runtime error).
 */
int out_file__check(const char *path, bool force, char *msg, size_t msglen);

/*
 * Open path for writing as above. Errors: -EEXIST and -EINVAL as
 * out_file__check (bad usage), -ENXIO for a FIFO without a reader, any
 * other -errno of stat/open/ftruncate (runtime). of->fd is blocking.
 */
int out_file__open(struct out_file *of, const char *path, bool force,
		   char *msg, size_t msglen);

/* fsync a regular file; 0 for a device or FIFO (nothing to sync). */
int out_file__sync(struct out_file *of);

/* Close, keeping what was written: the first error of close, or 0. */
int out_file__close(struct out_file *of);

/*
 * Close after a failure, leaving nothing half-written: a file created here
 * is removed, an existing regular file is emptied (its old content is gone
 * already; a part of the new one would pass for whole), a device or FIFO
 * is left alone (what reached it cannot be taken back).
 */
void out_file__discard(struct out_file *of);

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
