/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The trace file of `udpdrop record` / `udpdrop report`: its writer and
 * reader. The format (docs/trace-format.md) is a header and a sequence of
 * self-contained compressed blocks of records (LZ4 or zlib, named by each
 * block's magic), so that a file cut short by
 * kill -9, a full disk or a power loss still reads up to its last whole
 * block. Every integer is little-endian and encoded byte by byte: the
 * format does not depend on the compiler's struct layout.
 *
 * Errors are libbpf-style: 0 (or a count) on success, a negative errno.
 */
#ifndef UD_TRACE_H
#define UD_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "udpdrop.h"

#define TRACE_MAGIC         "UDPDROPT"
/*
 * Major 2 is major 1 with LZ4 blocks allowed; its minors go on from 1's
 * (2.3 holds every record 1.3 does). A writer with zlib blocks writes
 * 1.3, which every reader of major 1 reads (an older udpdrop refuses 2.x:
 * "trace format 2.3: this udpdrop reads 1.x"); this reader reads both.
 */
#define TRACE_VERSION_MAJOR 2
#define TRACE_VERSION_MAJOR_ZLIB 1
#define TRACE_VERSION_MINOR 3
#define TRACE_HDR_LEN       20 /* magic 8, major 2, minor 2, flags 4, crc 4 */
#define TRACE_BLK_MAGIC     "UDTB" /* a zlib stream (RFC 1950) */
#define TRACE_BLK_MAGIC_LZ4 "UDTL" /* an LZ4 block (lz4's block format) */
#define TRACE_BLK_HDR_LEN   24 /* magic, seq, raw, comp, data crc, hdr crc */
#define TRACE_REC_HDR_LEN   6  /* type u16, length u32 */

/* A block is flushed once its records reach this many (raw) bytes. */
#define TRACE_BLOCK_TARGET  (64u * 1024)
/*
 * No block may hold more (raw): the reader refuses larger ones, so a
 * hostile file cannot make it allocate more than this, its compressed
 * bound, and the decoded record (a few times its length, see the doc).
 */
#define TRACE_BLOCK_MAX     (16u * 1024 * 1024)
/* Most header bytes an EVENT may carry. */
#define TRACE_CAP_MAX       256
/* Cause numbers the writer's shed tallies hold (enum cause is far below). */
#define TRACE_CAUSES_MAX    256
/*
 * The most entries a table may hold, in one record (the reader refuses a
 * record over it as corrupt) and in a whole trace (udpdrop report stops
 * there the same way): far above what a recording writes (META about 40
 * keys, REASONS a few hundred values, one SYMBOLS name per drop location,
 * IFACES one netns's interfaces), so a file over one is damaged or was
 * made to hurt. Readers are linear in their input below them too.
 */
#define TRACE_META_MAX      4096u
#define TRACE_REASONS_MAX   65536u
#define TRACE_SYMBOLS_MAX   (1u << 20)
#define TRACE_IFACES_MAX    (1u << 20)

enum trace_type {
	TRACE_META = 1,
	TRACE_REASONS = 2,
	TRACE_SYMBOLS = 3,
	TRACE_IFACES = 4,
	TRACE_EVENT = 5,
	TRACE_COUNTS = 6,
	TRACE_SOCKETS = 7,
	TRACE_MIB = 8,
	TRACE_SHED = 9,
	TRACE_END = 10,
	TRACE_WINDOWS = 11,
};

/* Well-known META keys (docs/trace-format.md); others may follow. */
#define TRACE_META_HOST      "host"
#define TRACE_META_KERNEL    "kernel"     /* uname -r */
#define TRACE_META_BOOT_TIME "boot_time"  /* realtime s of CLOCK_MONOTONIC 0 */
#define TRACE_META_CMDLINE   "cmdline"
#define TRACE_META_START     "start_time" /* realtime s, decimal */
#define TRACE_META_VERSION   "udpdrop_version"
#define TRACE_META_CAUSES    "causes"     /* cause names, comma-separated, by number */
/* "drop_reason", or "location": a kernel without drop reasons, whose
 * REASONS are udpdrop's sites (enum ud_site); absent: drop_reason */
#define TRACE_META_CAUSES_FROM "causes_from"

/*
 * The records, as the writer takes them and the reader gives them back.
 * Strings are NUL-terminated; the reader's pointers (strings, lists) stay
 * valid until its next trace_reader__next() or trace_reader__close().
 */
struct trace_kv {
	const char *key, *value;
};
struct trace_meta {
	uint32_t n;
	const struct trace_kv *v;
};

struct trace_reason {
	uint32_t value;   /* enum skb_drop_reason */
	const char *name; /* without SKB_DROP_REASON_ */
};
struct trace_reasons {
	uint32_t n;
	const struct trace_reason *v;
};

struct trace_symbol {
	uint64_t addr;
	const char *name; /* "udp_queue_rcv_one_skb+0x1a4" or bare symbol */
};
struct trace_symbols {
	uint32_t n;
	const struct trace_symbol *v;
};

struct trace_iface {
	uint32_t ifindex, netns, mtu, txqueuelen;
	const char *name;
};
struct trace_ifaces {
	uint32_t n;
	const struct trace_iface *v;
};

struct trace_event {
	uint64_t time_ns;  /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	uint32_t cpu;
	uint32_t netns;
	uint64_t cookie;   /* as ud_key.cookie (see flags) */
	uint16_t cause;    /* enum cause */
	uint32_t reason;   /* raw enum skb_drop_reason */
	uint64_t location;
	uint32_t flags;    /* UD_KEY_* */
	uint8_t family, proto;
	uint8_t saddr[16], daddr[16];
	uint16_t sport, dport; /* host order */
	uint32_t len;      /* skb->len */
	uint16_t caplen;   /* bytes in cap, <= TRACE_CAP_MAX */
	uint8_t cap[TRACE_CAP_MAX];
	/*
	 * Datagrams the event stands for, as the counts add them: 1, a GSO
	 * skb's segments, 0 for a frag_list member or a fragment whose
	 * datagram was already counted (format 1.1; 1 when reading 1.0).
	 */
	uint32_t datagrams;
};

struct trace_count {
	struct ud_key key;
	struct ud_val val;
};
struct trace_counts {
	uint64_t time_ns;  /* CLOCK_MONOTONIC of the snapshot */
	uint32_t n;
	const struct trace_count *v;
};

struct trace_socket {
	uint64_t cookie;
	uint32_t netns, inode, pid; /* pid 0: owner unknown */
	uint8_t family, proto;
	uint8_t laddr[16], raddr[16];
	uint16_t lport, rport;      /* host order */
	char comm[16];              /* NUL-terminated, at most 15 bytes */
	uint32_t rcvbuf, queued;    /* bytes */
	uint64_t delivered;         /* datagrams queued to it since the recording
				       began (sock:sk_data_ready), when have_rx */
};
struct trace_sockets {
	uint64_t time_ns;
	uint32_t n;
	const struct trace_socket *v;
	/* each entry's delivered is known (minor 2: appended after the
	 * entries; older files and kernels without sk_data_ready: false) */
	bool have_rx;
};

struct trace_mib_entry {
	const char *name; /* as nstat prints it: "UdpRcvbufErrors" */
	uint64_t value;
};
struct trace_mib {
	uint64_t time_ns;
	uint32_t netns;
	uint32_t n;
	const struct trace_mib_entry *v;
};

struct trace_cause_count {
	uint16_t cause;
	uint64_t n;
};
struct trace_shed {
	uint64_t time_ns;
	uint32_t n;       /* causes listed (only those with n > 0) */
	const struct trace_cause_count *v;
};

/*
 * Drop windows the recorder folded since its last WINDOWS (format 1.3;
 * windows.h): each is whole, every CPU's part summed, and written once.
 */
struct trace_window {
	uint64_t id;        /* socket identity: cookie, or UD_RX_INODE | inode */
	uint16_t cause;     /* the writer's cause number (META causes) */
	uint32_t win;       /* the kernel's window index (docs/trace-format.md) */
	uint64_t datagrams;
};
struct trace_windows {
	uint64_t time_ns;
	uint32_t n;
	const struct trace_window *v;
};

struct trace_end {
	uint64_t events;      /* EVENT records written */
	uint64_t duration_ns; /* writer open to close */
	uint32_t n;           /* events shed over the whole trace, per cause */
	const struct trace_cause_count *v;
};

struct trace_record {
	uint16_t type;         /* enum trace_type */
	uint64_t block_offset; /* file offset of the block holding it */
	union {
		struct trace_meta meta;
		struct trace_reasons reasons;
		struct trace_symbols symbols;
		struct trace_ifaces ifaces;
		struct trace_event event;
		struct trace_counts counts;
		struct trace_sockets sockets;
		struct trace_mib mib;
		struct trace_shed shed;
		struct trace_end end;
		struct trace_windows windows;
	};
};

/* ---- writer ---- */

struct trace_writer;

/*
 * How a writer compresses its blocks. LZ4 by default: in a drop storm the
 * writer must keep up. On a 2-CPU VM, LZ4 compressed a real storm's blocks
 * in an eighth of zlib's time (23 against 181 ns per event), and
 * record's whole CPU per event, draining a storm's events, fell from 209
 * to 56 ns (medians of 4), for files about twice zlib's size (9 % of the
 * records' bytes against 4 %).
 */
enum trace_codec {
	TRACE_CODEC_LZ4,  /* format 2.3 */
	TRACE_CODEC_ZLIB, /* format 1.3: an older udpdrop reads it too */
};

/* "lz4", "zlib"; NULL for a value that is no codec. */
const char *trace_codec_name(enum trace_codec c);
/* The codec of a name trace_codec_name gives: 0, or -EINVAL. */
int trace_codec_parse(const char *name, enum trace_codec *c);

/*
 * Open path as out_file__open does (created mode 0600; an existing regular
 * file only with force, else -EEXIST, then truncated with its mode and
 * owner kept; a character device or FIFO written through; other types
 * -EINVAL; -EINVAL for a value that is no codec) and write the file
 * header (the version codec's blocks need).
 * A header that cannot be written (a full disk) removes the file it
 * created. On error msg holds one line naming path. The file is written
 * in place, block by block, so whatever reached the disk reads back after
 * a crash.
 */
int trace_writer__create(const char *path, bool force, enum trace_codec codec,
			 struct trace_writer **out, char *msg, size_t msglen);
/* trace_writer__create with LZ4 blocks, without the line. */
int trace_writer__open(const char *path, bool force, struct trace_writer **out);
/* fsync after every block (off by default: a kill -9 loses nothing
 * written anyway; only a power loss does). */
void trace_writer__set_fsync(struct trace_writer *w, bool on);

/*
 * Append one record. A record goes into the current block; the block is
 * compressed and written when it reaches TRACE_BLOCK_TARGET. -E2BIG for a
 * record that cannot fit a block (or a string over 65535 bytes), -EINVAL
 * for a field out of range. After a write error every call returns it.
 */
int trace_writer__meta(struct trace_writer *w, const struct trace_meta *m);
int trace_writer__reasons(struct trace_writer *w, const struct trace_reasons *r);
int trace_writer__symbols(struct trace_writer *w, const struct trace_symbols *s);
int trace_writer__ifaces(struct trace_writer *w, const struct trace_ifaces *i);
int trace_writer__event(struct trace_writer *w, const struct trace_event *e);
int trace_writer__counts(struct trace_writer *w, const struct trace_counts *c);
int trace_writer__sockets(struct trace_writer *w, const struct trace_sockets *s);
int trace_writer__mib(struct trace_writer *w, const struct trace_mib *m);
int trace_writer__windows(struct trace_writer *w, const struct trace_windows *ws);
/* Also added to the totals END carries. */
int trace_writer__shed(struct trace_writer *w, const struct trace_shed *s);
/* Any type, payload as is: for types this version does not know (tests). */
int trace_writer__raw(struct trace_writer *w, uint16_t type,
		      const void *payload, uint32_t len);
/*
 * Compress blocks on n helper threads while the caller encodes the next
 * (call once, before the first record; without it the caller compresses
 * and writes each block itself). The file is the same either way, but
 * for memory running out: alone, a block that cannot be compressed stays
 * for a later flush; with helpers it is an error like a failed write.
 * Returns the helpers started (n, or fewer where a thread could not
 * start), or -errno when none could (the writer then works alone).
 */
int trace_writer__set_threads(struct trace_writer *w, int n);
/* Write the current block now (a no-op if it is empty) and wait until
 * every block before it is written. */
int trace_writer__flush(struct trace_writer *w);
/* Whether it writes to a FIFO or character device (out_file's stream):
 * nothing there to keep or remove. */
bool trace_writer__to_stream(const struct trace_writer *w);
/* Bytes written to the file so far (header and whole blocks). */
uint64_t trace_writer__offset(struct trace_writer *w);
/*
 * Append END (events written, the shed tallies, the time since open) and
 * flush: after it trace_writer__offset is the file's final size (a FIFO's
 * or a device's has no other). Nothing is written after it.
 */
int trace_writer__end(struct trace_writer *w);
/*
 * trace_writer__end (unless done), close and free w, even on error.
 * Returns the first error met.
 */
int trace_writer__close(struct trace_writer *w);
/*
 * Close without END and without the block in progress: the file ends
 * after its last whole block and reads as cut short (a failed recording
 * keeps what it wrote, and never claims to be whole).
 */
void trace_writer__abandon(struct trace_writer *w);
/*
 * Close after a failure before anything worth keeping was written: a file
 * trace_writer__open created is removed, an existing one given with force
 * is left empty, a device or FIFO is left as it is (out_file__discard).
 */
void trace_writer__discard(struct trace_writer *w);

/* ---- reader ---- */

enum trace_status {
	TRACE_READING,   /* records may follow */
	TRACE_COMPLETE,  /* END read: a clean close */
	TRACE_CUT,       /* ended without END: cut short after whole blocks */
	TRACE_CORRUPT,   /* a damaged block or record (see the offset) */
	TRACE_NOT_TRACE, /* no trace magic, an empty file, not a regular file */
	TRACE_NEWER,     /* a major version this reader does not know */
	TRACE_IO_ERROR,
};

struct trace_reader;

/*
 * Open a trace. Fails (negative errno, *out NULL) only when the file
 * cannot be opened or memory is short; what the bytes are (not a trace,
 * a newer version, ...) is told by the first trace_reader__next(). Only
 * a regular file is read: anything else (a directory, a FIFO, a device)
 * is NOT_TRACE, and opening a FIFO does not wait for a writer.
 */
int trace_reader__open(const char *path, struct trace_reader **out);
/* The same over a buffer, which must outlive the reader (fuzzing, tests). */
int trace_reader__open_mem(const void *buf, size_t len,
			   struct trace_reader **out);
/*
 * The next record into *rec: 1. 0 at the end: status COMPLETE or CUT.
 * A negative errno on error, status saying which: -EBADMSG (CORRUPT),
 * -EINVAL (NOT_TRACE), -EPROTONOSUPPORT (NEWER), or the I/O error.
 * Records are given out only from whole, checked blocks; types this
 * reader does not know are skipped.
 */
int trace_reader__next(struct trace_reader *r, struct trace_record *rec);
enum trace_status trace_reader__status(const struct trace_reader *r);
/* A sentence for the user: "cut short after 3 blocks (...)", etc. */
const char *trace_reader__message(const struct trace_reader *r);
/* Whole blocks read so far. */
uint64_t trace_reader__blocks(const struct trace_reader *r);
/* CORRUPT: the file offset of the damaged block (or header). */
uint64_t trace_reader__error_offset(const struct trace_reader *r);
/* Records skipped as unknown types. */
uint64_t trace_reader__skipped(const struct trace_reader *r);
/* The file header's version (valid once the first next() has run). */
void trace_reader__version(const struct trace_reader *r, uint16_t *major,
			   uint16_t *minor);
void trace_reader__close(struct trace_reader *r);

const char *trace_type__name(uint16_t type); /* "EVENT"; NULL if unknown */

#endif
