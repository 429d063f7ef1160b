// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for src/trace/trace.c: every record round-trips field for field;
 * a trace cut at any byte reads its whole blocks and says "cut"; any one
 * flipped bit is caught; versions; the writer's file handling.
 *
 * UDPDROP_TRACE_SEEDS=dir writes the fuzz corpus seeds (tests/fuzz/corpus).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lz4.h>
#include <zlib.h>
#include "trace.h"
#include "util.h"
#include "tmp_file.h"

/* The codec the tests' writers use: LZ4 (the default), or zlib where a
 * test runs again as its _zlib twin (zlib_on). */
static enum trace_codec codec = TRACE_CODEC_LZ4;

static int zlib_on(void **state)
{
	codec = TRACE_CODEC_ZLIB;
	return 0;
}

static int zlib_off(void **state)
{
	codec = TRACE_CODEC_LZ4;
	return 0;
}

/* trace_writer__open with this test's codec. */
static int open_w(const char *p, bool force, struct trace_writer **w)
{
	char msg[128];

	return trace_writer__create(p, force, codec, w, msg, sizeof(msg));
}

static int setup(void **state)
{
	return tmp_file_setup("test_trace", "t.udpdrop");
}

static int teardown(void **state)
{
	return tmp_file_teardown();
}

/* ---- fixtures: one of each record, with awkward values ---- */

static const struct trace_kv meta_v[] = {
	{ TRACE_META_HOST, "vm" },
	{ TRACE_META_KERNEL, "6.18.44-fc" },
	{ TRACE_META_CMDLINE, "udpdrop record -o t.udpdrop --port 5001" },
	{ "net.core.rmem_default", "212992" },
	{ "empty", "" },
	{ "utf8", "\xc3\xa9t\xc3\xa9" },
};
static const struct trace_meta meta = { ARRAY_SIZE(meta_v), meta_v };

static const struct trace_reason reasons_v[] = {
	{ 2, "NOT_SPECIFIED" }, { 6, "SOCKET_RCVBUFF" }, { 0x10001, "SUBSYS_X" },
};
static const struct trace_reasons reasons = { ARRAY_SIZE(reasons_v), reasons_v };

static const struct trace_symbol symbols_v[] = {
	{ 0xffffffff81a0b1c4ull, "udp_queue_rcv_one_skb+0x1a4" },
	{ UINT64_MAX, "x" },
};
static const struct trace_symbols symbols = { ARRAY_SIZE(symbols_v), symbols_v };

static const struct trace_iface ifaces_v[] = {
	{ 1, 4026531840u, 65536, 1000, "lo" },
	{ 7, 4026532999u, 1500, 0, "veth-udpd0" },
};
static const struct trace_ifaces ifaces = { ARRAY_SIZE(ifaces_v), ifaces_v };

static struct trace_event make_event(uint64_t i)
{
	struct trace_event e;

	memset(&e, 0, sizeof(e));
	e.time_ns = 1000000000ull * i + 17;
	e.cpu = i % 7;
	e.netns = 4026531840u;
	e.cookie = 0x123456789abcdef0ull + i;
	e.cause = i % 20;
	e.reason = 0x30006;
	e.location = 0xffffffff81a0b1c4ull;
	e.flags = 0x21;
	e.family = 10;
	e.proto = 17;
	for (int k = 0; k < 16; k++) {
		e.saddr[k] = 0xfe - k;
		e.daddr[k] = k * 3;
	}
	e.sport = 40000 + i;
	e.dport = 5001;
	e.len = 1472;
	e.caplen = i % 3 == 0 ? TRACE_CAP_MAX : i % 3 == 1 ? 0 : 42;
	e.datagrams = i % 4 == 3 ? 64 : i % 4; /* 0, 1, 2 and a GSO skb */
	for (int k = 0; k < e.caplen; k++)
		e.cap[k] = k ^ i;
	return e;
}

static struct trace_count counts_v[2];
static struct trace_counts counts;
static struct trace_socket sockets_v[2];
static struct trace_sockets sockets;
static const struct trace_mib_entry mib_v[] = {
	{ "UdpRcvbufErrors", 7928 }, { "UdpNoPorts", UINT64_MAX },
};
static const struct trace_mib mib = { 555, 4026531840u, ARRAY_SIZE(mib_v), mib_v };
static const struct trace_cause_count shed_v[] = { { 0, 10 }, { 19, 3 } };
static const struct trace_shed shed = { 777, ARRAY_SIZE(shed_v), shed_v };
static const struct trace_cause_count shed2_v[] = { { 0, 5 } };
static const struct trace_shed shed2 = { 778, ARRAY_SIZE(shed2_v), shed2_v };
/* format 1.3: drop windows, the widest values */
static const struct trace_window windows_v[] = {
	{ 4242, 0, 17950000, 9 }, { (1ull << 63) | 123456, 19, UINT32_MAX, UINT64_MAX },
};
static const struct trace_windows windows = { 779, ARRAY_SIZE(windows_v), windows_v };

static void init_fixtures(void)
{
	memset(counts_v, 0, sizeof(counts_v));
	counts_v[0].key.cookie = 99;
	counts_v[0].key.location = 0xffffffff81000000ull;
	counts_v[0].key.netns = 4026531840u;
	counts_v[0].key.reason = 6;
	counts_v[0].key.saddr[0] = 10;
	counts_v[0].key.daddr[15] = 1;
	counts_v[0].key.dport = 5001;
	counts_v[0].key.family = 2;
	counts_v[0].key.proto = 17;
	counts_v[0].key.flags = 0x3;
	counts_v[0].val = (struct ud_val){ 1, 2, 3 };
	counts_v[1].key.flags = 0x100;
	counts_v[1].val = (struct ud_val){ UINT64_MAX, 0, 1ull << 40 };
	counts = (struct trace_counts){ 333, 2, counts_v };

	memset(sockets_v, 0, sizeof(sockets_v));
	sockets_v[0] = (struct trace_socket){
		.cookie = 4242, .netns = 4026531840u, .inode = 123456,
		.pid = 20219, .family = 2, .proto = 17, .lport = 5001,
		.rport = 0, .rcvbuf = 212992, .queued = 1234, .delivered = 77,
	};
	sockets_v[0].laddr[0] = 10;
	strcpy(sockets_v[0].comm, "udpdrop");
	sockets_v[1].family = 10;
	strcpy(sockets_v[1].comm, "fifteen_chars__"); /* the longest */
	sockets_v[1].raddr[15] = 1;
	sockets_v[1].delivered = UINT64_MAX;
	/* minor 2: each socket's deliveries, appended */
	sockets = (struct trace_sockets){ 444, 2, sockets_v, true };
}

static const uint16_t all_types[] = {
	TRACE_META, TRACE_REASONS, TRACE_SYMBOLS, TRACE_IFACES, TRACE_EVENT,
	TRACE_EVENT, TRACE_COUNTS, TRACE_SOCKETS, TRACE_MIB, TRACE_SHED,
	TRACE_SHED, TRACE_WINDOWS, TRACE_EVENT, TRACE_END,
};

/* Every record type; `flush_each` puts each record in its own block. */
static void write_all_types(const char *p, bool flush_each)
{
	struct trace_writer *w;
	struct trace_event e0 = make_event(0), e1 = make_event(1),
			   e2 = make_event(2);

	init_fixtures();
	assert_int_equal(open_w(p, true, &w), 0);
#define W(call)                                                                \
	do {                                                                   \
		assert_int_equal(call, 0);                                     \
		if (flush_each)                                                \
			assert_int_equal(trace_writer__flush(w), 0);           \
	} while (0)
	W(trace_writer__meta(w, &meta));
	W(trace_writer__reasons(w, &reasons));
	W(trace_writer__symbols(w, &symbols));
	W(trace_writer__ifaces(w, &ifaces));
	W(trace_writer__event(w, &e0));
	W(trace_writer__event(w, &e1));
	W(trace_writer__counts(w, &counts));
	W(trace_writer__sockets(w, &sockets));
	W(trace_writer__mib(w, &mib));
	W(trace_writer__shed(w, &shed));
	W(trace_writer__shed(w, &shed2));
	W(trace_writer__windows(w, &windows));
	W(trace_writer__event(w, &e2));
#undef W
	assert_int_equal(trace_writer__close(w), 0);
}

static void check_event(const struct trace_event *got, uint64_t i)
{
	struct trace_event want = make_event(i);

	assert_memory_equal(got, &want, sizeof(want));
}

static void check_cause_counts(uint32_t n, const struct trace_cause_count *v,
			       uint32_t wn, const struct trace_cause_count *wv)
{
	assert_int_equal(n, wn);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(v[i].cause, wv[i].cause);
		assert_int_equal(v[i].n, wv[i].n);
	}
}

/* The idx-th record of write_all_types, field for field. */
static void check_record(const struct trace_record *r, int idx)
{
	static int event_no[] = { [4] = 0, [5] = 1, [12] = 2 };

	assert_true(idx < (int)ARRAY_SIZE(all_types));
	assert_int_equal(r->type, all_types[idx]);
	switch (r->type) {
	case TRACE_META:
		assert_int_equal(r->meta.n, meta.n);
		for (uint32_t i = 0; i < meta.n; i++) {
			assert_string_equal(r->meta.v[i].key, meta.v[i].key);
			assert_string_equal(r->meta.v[i].value, meta.v[i].value);
		}
		break;
	case TRACE_REASONS:
		assert_int_equal(r->reasons.n, reasons.n);
		for (uint32_t i = 0; i < reasons.n; i++) {
			assert_int_equal(r->reasons.v[i].value, reasons.v[i].value);
			assert_string_equal(r->reasons.v[i].name, reasons.v[i].name);
		}
		break;
	case TRACE_SYMBOLS:
		assert_int_equal(r->symbols.n, symbols.n);
		for (uint32_t i = 0; i < symbols.n; i++) {
			assert_int_equal(r->symbols.v[i].addr, symbols.v[i].addr);
			assert_string_equal(r->symbols.v[i].name, symbols.v[i].name);
		}
		break;
	case TRACE_IFACES:
		assert_int_equal(r->ifaces.n, ifaces.n);
		for (uint32_t i = 0; i < ifaces.n; i++) {
			const struct trace_iface *a = &r->ifaces.v[i], *b = &ifaces.v[i];

			assert_int_equal(a->ifindex, b->ifindex);
			assert_int_equal(a->netns, b->netns);
			assert_int_equal(a->mtu, b->mtu);
			assert_int_equal(a->txqueuelen, b->txqueuelen);
			assert_string_equal(a->name, b->name);
		}
		break;
	case TRACE_EVENT:
		check_event(&r->event, event_no[idx]);
		break;
	case TRACE_COUNTS:
		assert_int_equal(r->counts.time_ns, counts.time_ns);
		assert_int_equal(r->counts.n, counts.n);
		/* struct ud_key has padding: compare field by field */
		for (uint32_t i = 0; i < counts.n; i++) {
			const struct ud_key *a = &r->counts.v[i].key, *b = &counts.v[i].key;

			assert_int_equal(a->cookie, b->cookie);
			assert_int_equal(a->location, b->location);
			assert_int_equal(a->netns, b->netns);
			assert_int_equal(a->reason, b->reason);
			assert_memory_equal(a->saddr, b->saddr, 16);
			assert_memory_equal(a->daddr, b->daddr, 16);
			assert_int_equal(a->dport, b->dport);
			assert_int_equal(a->family, b->family);
			assert_int_equal(a->proto, b->proto);
			assert_int_equal(a->flags, b->flags);
			assert_memory_equal(&r->counts.v[i].val, &counts.v[i].val,
					    sizeof(struct ud_val));
		}
		break;
	case TRACE_SOCKETS:
		assert_int_equal(r->sockets.time_ns, sockets.time_ns);
		assert_int_equal(r->sockets.n, sockets.n);
		assert_int_equal(r->sockets.have_rx, sockets.have_rx);
		/* both sides zero-filled, so the bytes compare */
		assert_memory_equal(r->sockets.v, sockets.v,
				    sockets.n * sizeof(struct trace_socket));
		break;
	case TRACE_MIB:
		assert_int_equal(r->mib.time_ns, mib.time_ns);
		assert_int_equal(r->mib.netns, mib.netns);
		assert_int_equal(r->mib.n, mib.n);
		for (uint32_t i = 0; i < mib.n; i++) {
			assert_string_equal(r->mib.v[i].name, mib.v[i].name);
			assert_int_equal(r->mib.v[i].value, mib.v[i].value);
		}
		break;
	case TRACE_SHED: {
		const struct trace_shed *s = idx == 9 ? &shed : &shed2;

		assert_int_equal(r->shed.time_ns, s->time_ns);
		check_cause_counts(r->shed.n, r->shed.v, s->n, s->v);
		break;
	}
	case TRACE_WINDOWS:
		assert_int_equal(r->windows.time_ns, windows.time_ns);
		assert_int_equal(r->windows.n, windows.n);
		for (uint32_t i = 0; i < windows.n; i++) {
			assert_int_equal(r->windows.v[i].id, windows.v[i].id);
			assert_int_equal(r->windows.v[i].cause, windows.v[i].cause);
			assert_int_equal(r->windows.v[i].win, windows.v[i].win);
			assert_int_equal(r->windows.v[i].datagrams, windows.v[i].datagrams);
		}
		break;
	case TRACE_END: {
		static const struct trace_cause_count tot[] = { { 0, 15 }, { 19, 3 } };

		assert_int_equal(r->end.events, 3);
		assert_true(r->end.duration_ns < 60000000000ull);
		check_cause_counts(r->end.n, r->end.v, 2, tot);
		break;
	}
	default:
		fail();
	}
}

/* Read all; check each record against write_all_types; the status. */
static enum trace_status read_checked(struct trace_reader *r, int *nrec,
				      int *ret)
{
	struct trace_record rec;
	int err;

	*nrec = 0;
	while ((err = trace_reader__next(r, &rec)) == 1)
		check_record(&rec, (*nrec)++);
	*ret = err;
	/* the end sticks */
	assert_int_equal(trace_reader__next(r, &rec), err);
	return trace_reader__status(r);
}

static void test_round_trip(void **state)
{
	struct trace_reader *r;
	int n, ret;

	for (int each = 0; each < 2; each++) {
		write_all_types(path, each);
		assert_int_equal(trace_reader__open(path, &r), 0);
		assert_int_equal(read_checked(r, &n, &ret), TRACE_COMPLETE);
		assert_int_equal(ret, 0);
		assert_int_equal(n, ARRAY_SIZE(all_types));
		assert_int_equal(trace_reader__blocks(r),
				 each ? ARRAY_SIZE(all_types) : 1);
		assert_int_equal(trace_reader__skipped(r), 0);
		assert_non_null(strstr(trace_reader__message(r), "complete"));
		trace_reader__close(r);
	}
}

static uint32_t get_le32_t(const uint8_t *x)
{
	return x[0] | x[1] << 8 | x[2] << 16 | (uint32_t)x[3] << 24;
}

static void put_le32_t(uint8_t *x, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		x[i] = v >> (8 * i);
}

/* Block boundaries of a trace with one record per block. */
static int block_ends(const uint8_t *b, size_t len, size_t *ends, int max)
{
	size_t off = TRACE_HDR_LEN;
	int n = 0;

	while (off + TRACE_BLK_HDR_LEN <= len && n < max) {
		uint32_t comp = get_le32_t(b + off + 12);

		off += TRACE_BLK_HDR_LEN + comp;
		ends[n++] = off;
	}
	assert_int_equal(off, len);
	return n;
}

/*
 * Cut at every byte: the records of the whole blocks before the cut,
 * none from the partial one, status CUT; never a crash.
 */
static void test_truncated_everywhere(void **state)
{
	size_t len, ends[64];
	uint8_t *b;
	int nblk;

	write_all_types(path, true);
	b = slurp(path, &len);
	nblk = block_ends(b, len, ends, 64);
	assert_int_equal(nblk, ARRAY_SIZE(all_types));
	for (size_t cut = 0; cut < len; cut++) {
		struct trace_reader *r;
		int n, ret, whole = 0;
		uint8_t *copy = malloc(cut ? cut : 1);

		/* a copy of exactly `cut` bytes, so ASan sees any overread */
		memcpy(copy, b, cut);
		while (whole < nblk && ends[whole] <= cut)
			whole++;
		assert_int_equal(trace_reader__open_mem(copy, cut, &r), 0);
		if (!cut) { /* nothing at all: not a trace (test_not_files) */
			assert_int_equal(read_checked(r, &n, &ret), TRACE_NOT_TRACE);
			trace_reader__close(r);
			free(copy);
			continue;
		}
		assert_int_equal(read_checked(r, &n, &ret), TRACE_CUT);
		assert_int_equal(ret, 0);
		assert_int_equal(n, whole); /* one record per block */
		assert_int_equal(trace_reader__blocks(r), whole);
		assert_non_null(strstr(trace_reader__message(r), "cut short"));
		trace_reader__close(r);
		free(copy);
	}
	/* and through a real file, cut as a full disk would leave it */
	assert_int_equal(truncate(path, ends[5] + 7), 0);
	{
		struct trace_reader *r;
		int n, ret;

		assert_int_equal(trace_reader__open(path, &r), 0);
		assert_int_equal(read_checked(r, &n, &ret), TRACE_CUT);
		assert_int_equal(n, 6);
		trace_reader__close(r);
	}
	free(b);
}

/*
 * Any single flipped bit: the records before the damaged block, then a
 * clean CORRUPT (or NOT_TRACE for the magic); never CUT, never a wrong
 * record (check_record would fail).
 */
static void test_bit_flips(void **state)
{
	size_t len;
	uint8_t *b;

	write_all_types(path, false);
	b = slurp(path, &len);
	for (size_t bit = 0; bit < len * 8; bit++) {
		struct trace_reader *r;
		enum trace_status st;
		int n, ret;

		b[bit / 8] ^= 1u << (bit % 8);
		assert_int_equal(trace_reader__open_mem(b, len, &r), 0);
		st = read_checked(r, &n, &ret);
		if (bit < 64) {
			assert_int_equal(st, TRACE_NOT_TRACE);
			assert_int_equal(ret, -EINVAL);
		} else {
			assert_int_equal(st, TRACE_CORRUPT);
			assert_int_equal(ret, -EBADMSG);
			assert_non_null(strstr(trace_reader__message(r), "offset"));
			/* one block: nothing before it */
			assert_int_equal(n, 0);
			assert_true(trace_reader__error_offset(r) ==
					    (bit < TRACE_HDR_LEN * 8 ? 0 : TRACE_HDR_LEN));
		}
		trace_reader__close(r);
		b[bit / 8] ^= 1u << (bit % 8);
	}
	free(b);
}

/* Flips in a many-block trace keep the records of the blocks before. */
static void test_bit_flips_later_block(void **state)
{
	size_t len, ends[64];
	uint8_t *b;
	int nblk;

	write_all_types(path, true);
	b = slurp(path, &len);
	nblk = block_ends(b, len, ends, 64);
	for (size_t off = ends[3]; off < ends[4]; off++) {
		struct trace_reader *r;
		int n, ret;

		b[off] ^= 0x10;
		assert_int_equal(trace_reader__open_mem(b, len, &r), 0);
		assert_int_equal(read_checked(r, &n, &ret), TRACE_CORRUPT);
		assert_int_equal(n, 4);
		assert_int_equal(trace_reader__error_offset(r), ends[3]);
		trace_reader__close(r);
		b[off] ^= 0x10;
	}
	assert_true(nblk > 4);
	free(b);
}

/* A block header's own CRC again (its data left as it is). */
static void fix_block_crcs_hdr(uint8_t *h)
{
	put_le32_t(h + 20, crc32(0, h, 20));
}

static void set_version(uint8_t *b, uint16_t major, uint16_t minor)
{
	uint32_t crc;

	b[8] = major;
	b[9] = major >> 8;
	b[10] = minor;
	b[11] = minor >> 8;
	crc = crc32(0, b, 16);
	b[16] = crc;
	b[17] = crc >> 8;
	b[18] = crc >> 16;
	b[19] = crc >> 24;
}

static void test_newer_major_refused(void **state)
{
	struct trace_reader *r;
	struct trace_record rec;
	uint16_t ma, mi;
	size_t len;
	uint8_t *b;

	write_all_types(path, false);
	b = slurp(path, &len);
	set_version(b, TRACE_VERSION_MAJOR + 1, 0);
	assert_int_equal(trace_reader__open_mem(b, len, &r), 0);
	assert_int_equal(trace_reader__next(r, &rec), -EPROTONOSUPPORT);
	assert_int_equal(trace_reader__status(r), TRACE_NEWER);
	assert_non_null(strstr(trace_reader__message(r),
			       "trace format 3.0: this udpdrop reads 1.x and 2.x"));
	trace_reader__version(r, &ma, &mi);
	assert_int_equal(ma, 3);
	trace_reader__close(r);
	free(b);
}

/*
 * An EVENT as format 1.0 wrote it (no datagrams field) stands for one
 * datagram; bytes a later minor appends after the fields are ignored.
 */
static void test_event_minor_versions(void **state)
{
	struct trace_writer *w;
	struct trace_reader *r;
	struct trace_record rec;
	uint8_t v10[86] = {}, v12[86 + 4 + 3] = {};

	v10[0] = 7;                         /* time_ns */
	v12[0] = 8;
	v12[86] = 5;                        /* datagrams, little-endian */
	v12[87] = 1;
	v12[90] = 0xee;                     /* a field from the future */
	assert_int_equal(trace_writer__open(path, true, &w), 0);
	assert_int_equal(trace_writer__raw(w, TRACE_EVENT, v10, sizeof(v10)), 0);
	assert_int_equal(trace_writer__raw(w, TRACE_EVENT, v12, sizeof(v12)), 0);
	assert_int_equal(trace_writer__close(w), 0);
	assert_int_equal(trace_reader__open(path, &r), 0);
	assert_int_equal(trace_reader__next(r, &rec), 1);
	assert_int_equal(rec.type, TRACE_EVENT);
	assert_int_equal(rec.event.time_ns, 7);
	assert_int_equal(rec.event.datagrams, 1);
	assert_int_equal(trace_reader__next(r, &rec), 1);
	assert_int_equal(rec.type, TRACE_EVENT);
	assert_int_equal(rec.event.time_ns, 8);
	assert_int_equal(rec.event.datagrams, 261);
	assert_int_equal(trace_reader__next(r, &rec), 1);
	assert_int_equal(rec.type, TRACE_END);
	trace_reader__close(r);
}

/* A newer minor may add record types: they are skipped. */
static void test_newer_minor_unknown_skipped(void **state)
{
	struct trace_writer *w;
	struct trace_reader *r;
	struct trace_record rec;
	struct trace_event e = make_event(0);
	static const uint8_t junk[] = "a record from the future";
	uint16_t ma, mi;
	size_t len;
	uint8_t *b;
	FILE *f;

	assert_int_equal(trace_writer__open(path, true, &w), 0);
	assert_int_equal(trace_writer__raw(w, 0x4242, junk, sizeof(junk)), 0);
	assert_int_equal(trace_writer__event(w, &e), 0);
	assert_int_equal(trace_writer__raw(w, 0x4243, NULL, 0), 0);
	assert_int_equal(trace_writer__close(w), 0);
	b = slurp(path, &len);
	set_version(b, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR + 1);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, len, f), len);
	fclose(f);

	assert_int_equal(trace_reader__open(path, &r), 0);
	assert_int_equal(trace_reader__next(r, &rec), 1);
	assert_int_equal(rec.type, TRACE_EVENT);
	check_event(&rec.event, 0);
	assert_int_equal(trace_reader__next(r, &rec), 1);
	assert_int_equal(rec.type, TRACE_END);
	assert_int_equal(rec.end.events, 1);
	assert_int_equal(trace_reader__next(r, &rec), 0);
	assert_int_equal(trace_reader__status(r), TRACE_COMPLETE);
	assert_int_equal(trace_reader__skipped(r), 2);
	trace_reader__version(r, &ma, &mi);
	assert_int_equal(ma, TRACE_VERSION_MAJOR);
	assert_int_equal(mi, TRACE_VERSION_MINOR + 1);
	trace_reader__close(r);
	free(b);
}

static void test_not_a_trace(void **state)
{
	static const char *texts[] = { "hello, world\n", "U", "UDPDROPX........................" };
	struct trace_reader *r;
	struct trace_record rec;

	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		assert_int_equal(trace_reader__open_mem(texts[i], strlen(texts[i]), &r), 0);
		if (i == 1) { /* a prefix of the magic: cut in its header */
			assert_int_equal(trace_reader__next(r, &rec), 0);
			assert_int_equal(trace_reader__status(r), TRACE_CUT);
		} else {
			assert_int_equal(trace_reader__next(r, &rec), -EINVAL);
			assert_int_equal(trace_reader__status(r), TRACE_NOT_TRACE);
			assert_non_null(strstr(trace_reader__message(r), "not a udpdrop trace"));
		}
		trace_reader__close(r);
	}
	assert_int_equal(trace_reader__open("/nonexistent/x", &r), -ENOENT);
	assert_null(r);
}

static void sigalrm_fail(int sig)
{
	(void)sig;
	fail_msg("trace_reader__open waited (on a FIFO with no writer?)");
}

/* The reader's verdict on what path is: status NOT_TRACE, message has `why`. */
static void refused(const char *p, const char *why)
{
	struct trace_reader *r;
	struct trace_record rec;

	alarm(10); /* a FIFO must not block the open */
	assert_int_equal(trace_reader__open(p, &r), 0);
	alarm(0);
	assert_int_equal(trace_reader__next(r, &rec), -EINVAL);
	assert_int_equal(trace_reader__status(r), TRACE_NOT_TRACE);
	if (!strstr(trace_reader__message(r), why))
		fail_msg("%s: \"%s\" does not say \"%s\"", p, trace_reader__message(r), why);
	/* and stays so */
	assert_int_equal(trace_reader__next(r, &rec), -EINVAL);
	trace_reader__close(r);
}

/*
 * What is not a trace file: an empty file (a recording writes its header
 * first: it was never one), a directory, a FIFO (opened without waiting
 * for a writer: the reader reads at offsets, which a stream cannot give),
 * a character device.
 */
static void test_not_files(void **state)
{
	char fifo[192];
	struct trace_reader *r;
	struct trace_record rec;
	int fd;

	signal(SIGALRM, sigalrm_fail);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	refused(path, "not a udpdrop trace (an empty file)");
	unlink(path);
	assert_int_equal(trace_reader__open_mem("", 0, &r), 0);
	assert_int_equal(trace_reader__next(r, &rec), -EINVAL);
	assert_non_null(strstr(trace_reader__message(r), "an empty file"));
	trace_reader__close(r);

	refused(tmp_dir, "not a udpdrop trace (a directory: a trace is read from a regular file)");
	snprintf(fifo, sizeof(fifo), "%s/fifo", tmp_dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	refused(fifo, "not a udpdrop trace (a FIFO: a trace is read from a regular file)");
	unlink(fifo);
	refused("/dev/null", "(a character device:");
}

/*
 * A table over its limit (trace.h) in one record: refused as corrupt
 * before anything is allocated, and said so; at the limit it is only the
 * missing bytes that are wrong.
 */
static void test_table_limits(void **state)
{
	const struct { uint16_t type; uint32_t max; const char *name; } t[] = {
		{ TRACE_META, TRACE_META_MAX, "a META record" },
		{ TRACE_REASONS, TRACE_REASONS_MAX, "a REASONS record" },
		{ TRACE_SYMBOLS, TRACE_SYMBOLS_MAX, "a SYMBOLS record" },
		{ TRACE_IFACES, TRACE_IFACES_MAX, "an IFACES record" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		for (uint32_t over = 0; over < 2; over++) {
			uint32_t n = t[i].max + over;
			uint8_t count[4] = { n, n >> 8, n >> 16, n >> 24 };
			struct trace_writer *w;
			struct trace_reader *r;
			struct trace_record rec;
			char want[160];

			assert_int_equal(trace_writer__open(path, true, &w), 0);
			assert_int_equal(trace_writer__raw(w, t[i].type, count, 4), 0);
			assert_int_equal(trace_writer__close(w), 0);
			assert_int_equal(trace_reader__open(path, &r), 0);
			assert_int_equal(trace_reader__next(r, &rec), -EBADMSG);
			snprintf(want, sizeof(want),
				 "corrupt at offset 20 (block 0): %s lists %u entries, more than the %u a "
				 "trace may hold: corrupt or hostile", t[i].name, n, t[i].max);
			if (over)
				assert_string_equal(trace_reader__message(r), want);
			else
				assert_string_equal(trace_reader__message(r),
						    "corrupt at offset 20 (block 0): malformed record");
			trace_reader__close(r);
		}
	/* a real one at the limit reads back */
	{
		struct trace_kv *v = calloc(TRACE_META_MAX, sizeof(*v));
		char (*keys)[8] = calloc(TRACE_META_MAX, 8);
		struct trace_meta m = { TRACE_META_MAX, v };
		struct trace_writer *w;
		struct trace_reader *r;
		struct trace_record rec;

		assert_non_null(v);
		assert_non_null(keys);
		for (uint32_t i = 0; i < TRACE_META_MAX; i++) {
			snprintf(keys[i], 8, "k%u", i);
			v[i] = (struct trace_kv){ keys[i], "v" };
		}
		assert_int_equal(trace_writer__open(path, true, &w), 0);
		assert_int_equal(trace_writer__meta(w, &m), 0);
		assert_int_equal(trace_writer__close(w), 0);
		assert_int_equal(trace_reader__open(path, &r), 0);
		assert_int_equal(trace_reader__next(r, &rec), 1);
		assert_int_equal(rec.meta.n, TRACE_META_MAX);
		assert_string_equal(rec.meta.v[TRACE_META_MAX - 1].key, "k4095");
		trace_reader__close(r);
		free(v);
		free(keys);
	}
}

static void test_overwrite_and_mode(void **state)
{
	struct trace_writer *w;
	struct stat st;
	int fd;

	unlink(path);
	assert_int_equal(trace_writer__open(path, false, &w), 0);
	assert_int_equal(trace_writer__close(w), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(trace_writer__open(path, false, &w), -EEXIST);
	assert_null(w);

	/* force writes over it in place: its mode is the user's to keep
	 * (never chmod a file udpdrop did not create) */
	unlink(path);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, 0644), 0);
	assert_int_equal(write(fd, "old contents, longer than a header....", 38), 38);
	close(fd);
	assert_int_equal(trace_writer__open(path, true, &w), 0);
	assert_int_equal(trace_writer__close(w), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	{
		struct trace_reader *r;
		struct trace_record rec;

		assert_int_equal(trace_reader__open(path, &r), 0);
		assert_int_equal(trace_reader__next(r, &rec), 1);
		assert_int_equal(rec.type, TRACE_END);
		assert_int_equal(trace_reader__next(r, &rec), 0);
		assert_int_equal(trace_reader__status(r), TRACE_COMPLETE);
		trace_reader__close(r);
	}
}

/* Enough events to fill several blocks on their own; all come back. */
static void test_many_events_blocks(void **state)
{
	struct trace_writer *w;
	struct trace_reader *r;
	struct trace_record rec;
	const uint64_t N = 5000;
	uint64_t i = 0;

	assert_int_equal(trace_writer__open(path, true, &w), 0);
	for (i = 0; i < N; i++) {
		struct trace_event e = make_event(i);

		assert_int_equal(trace_writer__event(w, &e), 0);
	}
	assert_int_equal(trace_writer__close(w), 0);
	assert_int_equal(trace_reader__open(path, &r), 0);
	for (i = 0; trace_reader__next(r, &rec) == 1 && rec.type == TRACE_EVENT; i++)
		check_event(&rec.event, i);
	assert_int_equal(i, N);
	assert_int_equal(rec.type, TRACE_END);
	assert_int_equal(rec.end.events, N);
	assert_int_equal(trace_reader__status(r), TRACE_COMPLETE);
	assert_true(trace_reader__blocks(r) > 5);
	trace_reader__close(r);
}

/*
 * A run's worth of records: events over many blocks, a flush between
 * (record's interval), a shed tally. Returns the offset after the flush.
 */
static uint64_t write_series(const char *p, int threads, bool abandon)
{
	struct trace_writer *w;
	uint64_t mid;

	init_fixtures();
	assert_int_equal(open_w(p, true, &w), 0);
	if (threads)
		assert_int_equal(trace_writer__set_threads(w, threads), threads);
	assert_int_equal(trace_writer__meta(w, &meta), 0);
	for (uint64_t i = 0; i < 4000; i++) {
		struct trace_event e = make_event(i);

		assert_int_equal(trace_writer__event(w, &e), 0);
	}
	assert_int_equal(trace_writer__flush(w), 0);
	mid = trace_writer__offset(w);
	for (uint64_t i = 4000; i < 9000; i++) {
		struct trace_event e = make_event(i);

		assert_int_equal(trace_writer__event(w, &e), 0);
	}
	assert_int_equal(trace_writer__shed(w, &shed), 0);
	if (abandon)
		trace_writer__abandon(w);
	else
		assert_int_equal(trace_writer__close(w), 0);
	return mid;
}

static uint64_t file_size(const char *p)
{
	struct stat st;

	assert_int_equal(stat(p, &st), 0);
	return (uint64_t)st.st_size;
}

/*
 * Helper threads compress the blocks (record in a storm): the same blocks,
 * bytes and records as the writer alone writes (all but END's time); a flush waits for every
 * block before it (the offset is the file's size then); an abandoned
 * writer's file ends after the blocks it handed over.
 */
static void test_threads_same_file(void **state)
{
	char alone[160];
	struct trace_reader *a, *b;
	struct trace_record ra, rb;
	uint64_t mid_a, mid_b, events = 0;
	uint8_t *bytes_a, *bytes_b;
	size_t len_a, len_b;
	int na, nb;

	snprintf(alone, sizeof(alone), "%s.alone", path);
	mid_a = write_series(alone, 0, false);
	mid_b = write_series(path, 3, false);
	/* byte for byte up to the flush (END's time since open differs) */
	assert_int_equal(mid_a, mid_b);
	bytes_a = slurp(alone, &len_a);
	bytes_b = slurp(path, &len_b);
	assert_true(len_a >= mid_a && len_b >= mid_b);
	assert_memory_equal(bytes_a, bytes_b, mid_a);
	free(bytes_a);
	free(bytes_b);
	assert_int_equal(trace_reader__open(alone, &a), 0);
	assert_int_equal(trace_reader__open(path, &b), 0);
	do {
		na = trace_reader__next(a, &ra);
		nb = trace_reader__next(b, &rb);
		assert_int_equal(na, nb);
		if (na != 1)
			break;
		assert_int_equal(ra.type, rb.type);
		if (ra.type == TRACE_EVENT) {
			check_event(&rb.event, events);
			events++;
		}
	} while (ra.type != TRACE_END);
	assert_int_equal(events, 9000);
	assert_int_equal(rb.end.events, 9000);
	assert_int_equal(trace_reader__blocks(a), trace_reader__blocks(b));
	assert_true(trace_reader__blocks(b) > 5);
	assert_int_equal(trace_reader__status(b), TRACE_COMPLETE);
	trace_reader__close(a);
	trace_reader__close(b);
	unlink(alone);

	/* a flush's offset is what is on disk */
	mid_b = write_series(path, 2, true);
	assert_true(mid_b > 0 && file_size(path) >= mid_b);
	assert_int_equal(trace_reader__open(path, &b), 0);
	events = 0;
	while (trace_reader__next(b, &rb) == 1)
		if (rb.type == TRACE_EVENT)
			check_event(&rb.event, events++);
	/* whole blocks only: at least what the flush wrote, never the last
	 * block in progress (its shed tally) */
	assert_true(events >= 4000 && events < 9000);
	assert_int_equal(trace_reader__status(b), TRACE_CUT);
	trace_reader__close(b);
}

/* Hostile contents with valid checksums: refused, nothing big allocated. */
static void test_hostile_records(void **state)
{
	/* a SYMBOLS claiming 2^32-1 entries; a string running past the end;
	 * an EVENT with too long a capture; a comm of 16 bytes */
	static const uint8_t huge[] = { 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0 };
	static const uint8_t str_past[] = { 1, 0, 0, 0, 6, 0, 0, 0, 0xff, 0xff, 'x' };
	uint8_t ev[128] = { 0 };
	const struct { uint16_t type; const void *p; uint32_t len; } cases[] = {
		{ TRACE_SYMBOLS, huge, sizeof(huge) },
		{ TRACE_REASONS, str_past, sizeof(str_past) },
		{ TRACE_EVENT, ev, sizeof(ev) },
		{ TRACE_EVENT, ev, 10 },
		{ TRACE_META, "\1\0\0\0\2\0a\0\0\0", 10 }, /* embedded NUL */
	};

	/* caplen (offset 84) = 0xffff */
	ev[84] = 0xff;
	ev[85] = 0xff;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct trace_writer *w;
		struct trace_reader *r;
		struct trace_record rec;

		assert_int_equal(trace_writer__open(path, true, &w), 0);
		assert_int_equal(trace_writer__raw(w, cases[i].type, cases[i].p,
						   cases[i].len), 0);
		assert_int_equal(trace_writer__close(w), 0);
		assert_int_equal(trace_reader__open(path, &r), 0);
		assert_int_equal(trace_reader__next(r, &rec), -EBADMSG);
		/* a count over the table's limit is named as such */
		assert_non_null(strstr(trace_reader__message(r),
				       i ? "malformed record" : "corrupt or hostile"));
		trace_reader__close(r);
	}
}

/*
 * Each codec's file: LZ4 blocks in a 2.3 file, zlib blocks in a 1.3 file
 * (which older readers read), the same records from both.
 */
static void test_codecs(void **state)
{
	static const struct { enum trace_codec c; uint16_t major; const char *magic; }
	want[] = { { TRACE_CODEC_LZ4, 2, TRACE_BLK_MAGIC_LZ4 },
		   { TRACE_CODEC_ZLIB, 1, TRACE_BLK_MAGIC } };
	enum trace_codec c;

	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		struct trace_reader *r;
		uint16_t ma, mi;
		size_t len, ends[64];
		uint8_t *b;
		int n, ret, nblk;

		codec = want[i].c;
		write_all_types(path, true);
		b = slurp(path, &len);
		assert_int_equal(b[8] | b[9] << 8, want[i].major);
		assert_int_equal(b[10] | b[11] << 8, TRACE_VERSION_MINOR);
		nblk = block_ends(b, len, ends, 64);
		assert_int_equal(nblk, ARRAY_SIZE(all_types));
		for (int k = 0; k < nblk; k++)
			assert_memory_equal(b + (k ? ends[k - 1] : TRACE_HDR_LEN),
					    want[i].magic, 4);
		assert_int_equal(trace_reader__open_mem(b, len, &r), 0);
		assert_int_equal(read_checked(r, &n, &ret), TRACE_COMPLETE);
		assert_int_equal(n, ARRAY_SIZE(all_types));
		trace_reader__version(r, &ma, &mi);
		assert_int_equal(ma, want[i].major);
		assert_int_equal(mi, TRACE_VERSION_MINOR);
		trace_reader__close(r);
		free(b);
	}
	codec = TRACE_CODEC_LZ4;
	assert_string_equal(trace_codec_name(TRACE_CODEC_LZ4), "lz4");
	assert_string_equal(trace_codec_name(TRACE_CODEC_ZLIB), "zlib");
	assert_int_equal(trace_codec_parse("zlib", &c), 0);
	assert_int_equal(c, TRACE_CODEC_ZLIB);
	assert_int_equal(trace_codec_parse("lz4", &c), 0);
	assert_int_equal(c, TRACE_CODEC_LZ4);
	assert_int_equal(trace_codec_parse("zstd", &c), -EINVAL);
}

/* Rewrite the header of the block at off (its CRC too). */
static void set_block(uint8_t *b, size_t off, const char *magic, uint32_t raw, uint32_t comp)
{
	uint8_t *h = b + off;

	memcpy(h, magic, 4);
	put_le32_t(h + 8, raw);
	put_le32_t(h + 12, comp);
	fix_block_crcs_hdr(h);
}

/*
 * LZ4 blocks with valid checksums but wrong contents: corrupt at the
 * block, never a record from it; and no LZ4 block in a 1.x file.
 */
static void test_lz4_damaged(void **state)
{
	struct trace_reader *r;
	size_t len, ends[64];
	uint32_t raw, comp;
	uint8_t *b;
	int n, ret;

	write_all_types(path, true);
	b = slurp(path, &len);
	block_ends(b, len, ends, 64);
	raw = get_le32_t(b + ends[0] + 8);
	comp = get_le32_t(b + ends[0] + 12);
	/* the second block claims a byte more, then a byte less, than its
	 * stream holds; then a length beyond LZ4's bound for 16 MiB */
	const uint32_t raws[] = { raw + 1, raw - 1, raw };
	const uint32_t comps[] = { comp, comp, 0x1100000 };
	const char *whys[] = { "does not decompress", "does not decompress", "out of range" };

	for (int i = 0; i < 3; i++) {
		uint8_t *c = malloc(len);

		memcpy(c, b, len);
		set_block(c, ends[0], TRACE_BLK_MAGIC_LZ4, raws[i], comps[i]);
		assert_int_equal(trace_reader__open_mem(c, len, &r), 0);
		assert_int_equal(read_checked(r, &n, &ret), TRACE_CORRUPT);
		assert_int_equal(n, 1);
		assert_int_equal(trace_reader__error_offset(r), ends[0]);
		assert_non_null(strstr(trace_reader__message(r), whys[i]));
		trace_reader__close(r);
		free(c);
	}
	/* the same LZ4 stream called a zlib one: it does not inflate */
	set_block(b, ends[0], TRACE_BLK_MAGIC, raw, comp);
	assert_int_equal(trace_reader__open_mem(b, len, &r), 0);
	assert_int_equal(read_checked(r, &n, &ret), TRACE_CORRUPT);
	assert_int_equal(n, 1);
	assert_non_null(strstr(trace_reader__message(r), "does not inflate"));
	trace_reader__close(r);
	set_block(b, ends[0], TRACE_BLK_MAGIC_LZ4, raw, comp);
	/* a 1.3 file has zlib blocks alone */
	set_version(b, 1, 3);
	assert_int_equal(trace_reader__open_mem(b, len, &r), 0);
	assert_int_equal(read_checked(r, &n, &ret), TRACE_CORRUPT);
	assert_int_equal(n, 0);
	assert_int_equal(trace_reader__error_offset(r), TRACE_HDR_LEN);
	assert_non_null(strstr(trace_reader__message(r), "no block magic"));
	trace_reader__close(r);
	free(b);
}

/* Each block's CRCs again, after its header or data was changed. */
static void fix_block_crcs(uint8_t *b, size_t off)
{
	uint8_t *h = b + off;

	put_le32_t(h + 16, crc32(0, h + TRACE_BLK_HDR_LEN, get_le32_t(h + 12)));
	fix_block_crcs_hdr(h);
}

/*
 * An LZ4 block followed by one more byte (its length and CRCs made to
 * match): LZ4 must end exactly at its data's end, so it is corrupt. And a
 * zlib block in a 2.x file reads (the magic names each block's codec).
 */
static void test_lz4_trailing_byte(void **state)
{
	struct trace_reader *r;
	size_t len, ends[64];
	uint32_t comp;
	uint8_t *b, *c;
	int n, ret;

	write_all_types(path, true);
	b = slurp(path, &len);
	block_ends(b, len, ends, 64);
	c = malloc(len + 1);
	memcpy(c, b, ends[1]);
	c[ends[1]] = 0;
	memcpy(c + ends[1] + 1, b + ends[1], len - ends[1]);
	comp = get_le32_t(c + ends[0] + 12) + 1;
	put_le32_t(c + ends[0] + 12, comp);
	fix_block_crcs(c, ends[0]);
	assert_int_equal(trace_reader__open_mem(c, len + 1, &r), 0);
	assert_int_equal(read_checked(r, &n, &ret), TRACE_CORRUPT);
	assert_int_equal(n, 1);
	assert_int_equal(trace_reader__error_offset(r), ends[0]);
	assert_non_null(strstr(trace_reader__message(r), "does not decompress"));
	trace_reader__close(r);
	free(c);
	free(b);

	codec = TRACE_CODEC_ZLIB;
	write_all_types(path, true);
	codec = TRACE_CODEC_LZ4;
	b = slurp(path, &len);
	set_version(b, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	assert_int_equal(trace_reader__open_mem(b, len, &r), 0);
	assert_int_equal(read_checked(r, &n, &ret), TRACE_COMPLETE);
	assert_int_equal(n, ARRAY_SIZE(all_types));
	trace_reader__close(r);
	free(b);
}

/*
 * Each codec has its own most compressed bytes for a block: a whole
 * block of random bytes takes more in LZ4 (16 MiB + about 64 KiB) than
 * zlib's bound (16 MiB + 5 KiB), and reads back; one byte over each
 * codec's bound is refused, unread.
 */
static void test_codec_bounds(void **state)
{
	uint32_t n = TRACE_BLOCK_MAX - TRACE_REC_HDR_LEN, comp, x = 1;
	uint8_t *junk = malloc(n), *b, h[TRACE_HDR_LEN + TRACE_BLK_HDR_LEN + 8] = { 0 };
	struct trace_writer *w;
	struct trace_reader *r;
	struct trace_record rec;
	size_t len;
	int got = 0, err;

	for (uint32_t i = 0; i < n; i++) { /* xorshift: incompressible */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		junk[i] = x;
	}
	assert_int_equal(open_w(path, true, &w), 0);
	assert_int_equal(trace_writer__raw(w, 0x4242, junk, n), 0);
	assert_int_equal(trace_writer__close(w), 0);
	free(junk);
	b = slurp(path, &len);
	comp = get_le32_t(b + TRACE_HDR_LEN + 12);
	assert_true(comp > compressBound(TRACE_BLOCK_MAX));
	assert_true(comp <= (uint32_t)LZ4_COMPRESSBOUND(TRACE_BLOCK_MAX));
	free(b);
	assert_int_equal(trace_reader__open(path, &r), 0);
	while ((err = trace_reader__next(r, &rec)) == 1)
		got++;
	assert_int_equal(err, 0);
	assert_int_equal(got, 1); /* END; the unknown type skipped */
	assert_int_equal(trace_reader__skipped(r), 1);
	assert_int_equal(trace_reader__status(r), TRACE_COMPLETE);
	trace_reader__close(r);

	/* a header alone, claiming one byte over each bound */
	const struct { const char *magic; uint32_t comp; const char *why; } over[] = {
		{ TRACE_BLK_MAGIC, compressBound(TRACE_BLOCK_MAX) + 1, "out of range" },
		{ TRACE_BLK_MAGIC_LZ4, LZ4_COMPRESSBOUND(TRACE_BLOCK_MAX) + 1, "out of range" },
		/* within LZ4's bound, past zlib's: read on, and cut short */
		{ TRACE_BLK_MAGIC_LZ4, compressBound(TRACE_BLOCK_MAX) + 1, "cut short" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(over); i++) {
		memcpy(h, TRACE_MAGIC, 8);
		set_version(h, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
		memset(h + TRACE_HDR_LEN + 4, 0, 8);
		h[TRACE_HDR_LEN + 8] = 1; /* raw: 1 byte */
		put_le32_t(h + TRACE_HDR_LEN + 12, over[i].comp);
		memcpy(h + TRACE_HDR_LEN, over[i].magic, 4);
		fix_block_crcs_hdr(h + TRACE_HDR_LEN);
		assert_int_equal(trace_reader__open_mem(h, sizeof(h), &r), 0);
		trace_reader__next(r, &rec);
		assert_non_null(strstr(trace_reader__message(r), over[i].why));
		trace_reader__close(r);
	}
}

/* A valid-looking block header claiming a huge block: refused unread. */
static void test_hostile_block(void **state)
{
	uint8_t b[TRACE_HDR_LEN + TRACE_BLK_HDR_LEN + 8] = { 0 };
	struct trace_reader *r;
	struct trace_record rec;
	uint32_t crc, raw = TRACE_BLOCK_MAX + 1;

	memcpy(b, TRACE_MAGIC, 8);
	set_version(b, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	memcpy(b + 20, TRACE_BLK_MAGIC, 4);
	b[28] = raw;
	b[29] = raw >> 8;
	b[30] = raw >> 16;
	b[31] = raw >> 24;
	b[32] = 8;
	crc = crc32(0, b + 20, 20);
	b[40] = crc;
	b[41] = crc >> 8;
	b[42] = crc >> 16;
	b[43] = crc >> 24;
	assert_int_equal(trace_reader__open_mem(b, sizeof(b), &r), 0);
	assert_int_equal(trace_reader__next(r, &rec), -EBADMSG);
	assert_int_equal(trace_reader__error_offset(r), 20);
	assert_non_null(strstr(trace_reader__message(r), "out of range"));
	trace_reader__close(r);
}

static void test_data_after_end(void **state)
{
	struct trace_reader *r;
	int n, ret;
	FILE *f;

	write_all_types(path, false);
	f = fopen(path, "ab");
	assert_non_null(f);
	fputs("x", f);
	fclose(f);
	assert_int_equal(trace_reader__open(path, &r), 0);
	assert_int_equal(read_checked(r, &n, &ret), TRACE_CORRUPT);
	/* END itself is not given out: the file is not a clean close */
	assert_int_equal(n, ARRAY_SIZE(all_types) - 1);
	assert_non_null(strstr(trace_reader__message(r), "data after END"));
	trace_reader__close(r);
}

static void test_writer_limits(void **state)
{
	struct trace_writer *w;
	struct trace_event e = make_event(0);
	struct trace_cause_count cc = { TRACE_CAUSES_MAX, 1 };
	struct trace_shed s = { 0, 1, &cc };
	char *long_name = malloc(70000);
	struct trace_kv kv = { "k", long_name };
	struct trace_meta m = { 1, &kv };

	memset(long_name, 'a', 69999);
	long_name[69999] = 0;
	assert_int_equal(trace_writer__open(path, true, &w), 0);
	e.caplen = TRACE_CAP_MAX + 1;
	assert_int_equal(trace_writer__event(w, &e), -EINVAL);
	assert_int_equal(trace_writer__shed(w, &s), -EINVAL);
	assert_int_equal(trace_writer__meta(w, &m), -E2BIG);
	/* refused records leave nothing behind: the file reads clean */
	assert_int_equal(trace_writer__close(w), 0);
	free(long_name);
	{
		struct trace_reader *r;
		struct trace_record rec;

		assert_int_equal(trace_reader__open(path, &r), 0);
		assert_int_equal(trace_reader__next(r, &rec), 1);
		assert_int_equal(rec.type, TRACE_END);
		assert_int_equal(rec.end.events, 0);
		assert_int_equal(rec.end.n, 0);
		trace_reader__close(r);
	}
}

/* With UDPDROP_TRACE_SEEDS=dir: the fuzz corpus' seed files. */
static void write_seeds(void)
{
	const char *d = getenv("UDPDROP_TRACE_SEEDS");
	char p[512];

	if (!d)
		return;
	/* LZ4's blocks: the fuzzer mutates them (fix_crcs keeps them read) */
	snprintf(p, sizeof(p), "%s/lz4-all-types-block-each", d);
	write_all_types(p, true);
	/* the rest as they were made before LZ4: zlib, format 1.3 */
	codec = TRACE_CODEC_ZLIB;
	snprintf(p, sizeof(p), "%s/all-types-one-block", d);
	write_all_types(p, false);
	snprintf(p, sizeof(p), "%s/all-types-block-each", d);
	write_all_types(p, true);
	{
		/* the raw records of one block: read_as_block()'s seed */
		size_t len;
		uint8_t *b = slurp(p, &len), raw[4096];
		uLongf rlen = sizeof(raw);
		FILE *f;

		free(b);
		snprintf(p, sizeof(p), "%s/all-types-one-block", d);
		b = slurp(p, &len);
		assert_int_equal(uncompress(raw, &rlen, b + TRACE_HDR_LEN + TRACE_BLK_HDR_LEN,
					    len - TRACE_HDR_LEN - TRACE_BLK_HDR_LEN), Z_OK);
		snprintf(p, sizeof(p), "%s/raw-records-all-types", d);
		f = fopen(p, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(raw, 1, rlen, f), rlen);
		fclose(f);
		free(b);
	}
	{
		struct trace_writer *w;
		struct trace_event e = make_event(1);

		snprintf(p, sizeof(p), "%s/unknown-type", d);
		assert_int_equal(open_w(p, true, &w), 0);
		assert_int_equal(trace_writer__raw(w, 77, "xyz", 3), 0);
		assert_int_equal(trace_writer__event(w, &e), 0);
		assert_int_equal(trace_writer__close(w), 0);
	}
	codec = TRACE_CODEC_LZ4;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_bit_flips),
		cmocka_unit_test(test_bit_flips_later_block),
		/* the same with zlib's blocks (format 1.3) */
		{ "test_round_trip_zlib", test_round_trip, zlib_on, zlib_off, NULL },
		{ "test_truncated_everywhere_zlib", test_truncated_everywhere, zlib_on, zlib_off, NULL },
		{ "test_bit_flips_zlib", test_bit_flips, zlib_on, zlib_off, NULL },
		{ "test_bit_flips_later_block_zlib", test_bit_flips_later_block, zlib_on, zlib_off, NULL },
		{ "test_threads_same_file_zlib", test_threads_same_file, zlib_on, zlib_off, NULL },
		cmocka_unit_test_teardown(test_codecs, zlib_off),
		cmocka_unit_test_teardown(test_lz4_damaged, zlib_off),
		cmocka_unit_test_teardown(test_lz4_trailing_byte, zlib_off),
		cmocka_unit_test_teardown(test_codec_bounds, zlib_off),
		cmocka_unit_test(test_newer_major_refused),
		cmocka_unit_test(test_newer_minor_unknown_skipped),
		cmocka_unit_test(test_not_a_trace),
		cmocka_unit_test(test_not_files),
		cmocka_unit_test(test_table_limits),
		cmocka_unit_test(test_overwrite_and_mode),
		cmocka_unit_test(test_many_events_blocks),
		cmocka_unit_test(test_threads_same_file),
		cmocka_unit_test(test_event_minor_versions),
		cmocka_unit_test(test_hostile_records),
		cmocka_unit_test(test_hostile_block),
		cmocka_unit_test(test_data_after_end),
		cmocka_unit_test(test_writer_limits),
	};

	write_seeds();
	return cmocka_run_group_tests(tests, setup, teardown);
}
