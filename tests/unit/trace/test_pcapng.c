// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for src/trace/pcapng.c (block layout, byte for byte) and
 * src/cmd/report/report_pcap.c (udpdrop report --pcap): a trace written with the
 * trace writer is exported and the pcapng parsed back; then tshark and
 * tcpdump must read it. Without tshark or tcpdump on PATH that last test
 * is skipped, or fails when CI is set (tools/deps.sh installs them).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "causes.h"
#include "cli.h"
#include "pcapng.h"
#include "report_pcap.h"
#include "trace.h"
#include "util.h"
#include "tmp_file.h"

static char out[192];

static int setup(void **state)
{
	if (tmp_file_setup("test_pcapng", "t.data"))
		return -1;
	snprintf(out, sizeof(out), "%s/out.pcapng", tmp_dir);
	return 0;
}

static int teardown(void **state)
{
	unlink(out);
	return tmp_file_teardown();
}

/* Between tests: the trace and the output gone, and nothing else there
 * (a temporary file left behind is a bug). */
static void assert_dir_clean(void)
{
	DIR *d = opendir(tmp_dir);
	struct dirent *de;

	unlink(path);
	unlink(out);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			fail_msg("left behind: %s/%s", tmp_dir, de->d_name);
	closedir(d);
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

/* ---- the writer, byte for byte ---- */

static void test_shb_layout(void **state)
{
	struct pcapng_buf b = {};
	static const uint8_t bare[] = {
		0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0,
		0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		28, 0, 0, 0,
	};
	/* os "6.1" (3 bytes: 1 of padding), userappl "udpdrop 0.1.0"
	 * (13: 3 of padding), then the end of options */
	static const uint8_t opts[] = {
		0x0a, 0x0d, 0x0d, 0x0a, 60, 0, 0, 0,
		0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		3, 0, 3, 0, '6', '.', '1', 0,
		4, 0, 13, 0, 'u', 'd', 'p', 'd', 'r', 'o', 'p', ' ',
		'0', '.', '1', '.', '0', 0, 0, 0,
		0, 0, 0, 0,
		60, 0, 0, 0,
	};
	struct pcapng_opt o[] = {
		pcapng_opt__str(PCAPNG_SHB_OS, "6.1"),
		pcapng_opt__str(PCAPNG_SHB_USERAPPL, "udpdrop 0.1.0"),
	};

	assert_int_equal(pcapng__shb(&b, NULL, 0), sizeof(bare));
	assert_int_equal(b.len, sizeof(bare));
	assert_memory_equal(b.p, bare, sizeof(bare));
	pcapng_buf__reset(&b);
	assert_int_equal(pcapng__shb(&b, o, ARRAY_SIZE(o)), sizeof(opts));
	assert_int_equal(b.len, sizeof(opts));
	assert_memory_equal(b.p, opts, sizeof(opts));
	pcapng_buf__free(&b);
}

static void test_idb_layout(void **state)
{
	struct pcapng_buf b = {};
	uint8_t res = 9;
	struct pcapng_opt o[] = {
		{ PCAPNG_IF_TSRESOL, 1, &res },
		pcapng_opt__str(PCAPNG_IF_NAME, "udpdrop"), /* 7: 1 of padding */
	};
	static const uint8_t want[] = {
		1, 0, 0, 0, 44, 0, 0, 0,
		101, 0, 0, 0, 0, 1, 0, 0, /* LINKTYPE_RAW, reserved, snaplen 256 */
		9, 0, 1, 0, 9, 0, 0, 0,
		2, 0, 7, 0, 'u', 'd', 'p', 'd', 'r', 'o', 'p', 0,
		0, 0, 0, 0,
		44, 0, 0, 0,
	};

	assert_int_equal(pcapng__idb(&b, PCAPNG_LINKTYPE_RAW, 256, o, ARRAY_SIZE(o)),
			 sizeof(want));
	assert_memory_equal(b.p, want, sizeof(want));
	pcapng_buf__free(&b);
}

static void test_epb_layout(void **state)
{
	struct pcapng_buf b = {};
	static const uint8_t data[5] = { 0x45, 0x11, 0x22, 0x33, 0x44 };
	struct pcapng_opt c = pcapng_opt__str(PCAPNG_OPT_COMMENT, "abc");
	static const uint8_t want[] = {
		6, 0, 0, 0, 52, 0, 0, 0,
		3, 0, 0, 0,                         /* interface 3 */
		0x04, 0x03, 0x02, 0x01,             /* ts high */
		0x08, 0x07, 0x06, 0x05,             /* ts low */
		5, 0, 0, 0, 0xe8, 0x03, 0, 0,       /* caplen 5, origlen 1000 */
		0x45, 0x11, 0x22, 0x33, 0x44, 0, 0, 0,
		1, 0, 3, 0, 'a', 'b', 'c', 0,
		0, 0, 0, 0,
		52, 0, 0, 0,
	};
	/* no options: no end marker either; 4 bytes of data need no padding */
	static const uint8_t bare[] = {
		6, 0, 0, 0, 36, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0,
		4, 0, 0, 0, 4, 0, 0, 0,
		0x45, 0x11, 0x22, 0x33,
		36, 0, 0, 0,
	};

	assert_int_equal(pcapng__epb(&b, 3, 0x0102030405060708ull, data, 5, 1000, &c, 1),
			 sizeof(want));
	assert_memory_equal(b.p, want, sizeof(want));
	/* blocks append */
	assert_int_equal(pcapng__epb(&b, 0, 42, data, 4, 4, NULL, 0), sizeof(bare));
	assert_int_equal(b.len, sizeof(want) + sizeof(bare));
	assert_memory_equal(b.p + sizeof(want), bare, sizeof(bare));
	pcapng_buf__free(&b);
}

/* Every pad length, and the total length at both ends agreeing. */
static void test_epb_padding(void **state)
{
	uint8_t data[16], note[9];

	memset(data, 0xab, sizeof(data));
	memset(note, 'x', sizeof(note));
	for (uint32_t cap = 0; cap <= 8; cap++) {
		for (size_t cl = 0; cl <= 5; cl++) {
			struct pcapng_buf b = {};
			struct pcapng_opt o = { PCAPNG_OPT_COMMENT, cl, note };
			size_t pcap = (cap + 3) & ~3u, pcl = (cl + 3) & ~3u;
			size_t total = 12 + 20 + pcap + 4 + pcl + 4;

			assert_int_equal(pcapng__epb(&b, 0, 0, data, cap, 100, &o, 1), total);
			assert_int_equal(b.len, total);
			assert_int_equal(total % 4, 0);
			assert_int_equal(le32(b.p + 4), total);
			assert_int_equal(le32(b.p + total - 4), total);
			for (size_t i = 28 + cap; i < 28 + pcap; i++)
				assert_int_equal(b.p[i], 0);
			assert_int_equal(le16(b.p + 28 + pcap), PCAPNG_OPT_COMMENT);
			assert_int_equal(le16(b.p + 30 + pcap), cl);
			for (size_t i = 32 + pcap + cl; i < 32 + pcap + pcl; i++)
				assert_int_equal(b.p[i], 0);
			assert_int_equal(le32(b.p + 32 + pcap + pcl), 0); /* end of options */
			pcapng_buf__free(&b);
		}
	}
}

static void test_writer_errors(void **state)
{
	struct pcapng_buf b = {};
	uint8_t data[8] = {};
	char *big = malloc(PCAPNG_OPT_MAX + 2);
	struct pcapng_opt o;

	assert_non_null(big);
	memset(big, 'y', PCAPNG_OPT_MAX + 1);
	big[PCAPNG_OPT_MAX + 1] = 0;
	assert_int_equal(pcapng__shb(&b, NULL, 0), 28);

	/* a failed call leaves the buffer as it was */
	assert_int_equal(pcapng__epb(&b, 0, 0, data, 8, 7, NULL, 0), -EINVAL);
	assert_int_equal(pcapng__epb(&b, 0, 0, NULL, 8, 8, NULL, 0), -EINVAL);
	o = pcapng_opt__str(PCAPNG_OPT_COMMENT, big);
	assert_int_equal(pcapng__epb(&b, 0, 0, data, 8, 8, &o, 1), -E2BIG);
	assert_int_equal(pcapng__shb(&b, &o, 1), -E2BIG);
	o = (struct pcapng_opt){ PCAPNG_OPT_COMMENT, 3, NULL };
	assert_int_equal(pcapng__idb(&b, 101, 256, &o, 1), -EINVAL);
	assert_int_equal(b.len, 28);

	/* the longest option fits */
	big[PCAPNG_OPT_MAX] = 0;
	o = pcapng_opt__str(PCAPNG_OPT_COMMENT, big);
	assert_int_equal(pcapng__epb(&b, 0, 0, NULL, 0, 0, &o, 1),
			 12 + 20 + 4 + 65536 + 4);
	assert_int_equal(le16(b.p + 28 + 28 + 2), 65535); /* after SHB, EPB header */
	free(big);
	pcapng_buf__free(&b);
}

static void test_boot_time(void **state)
{
	uint64_t ns;

	assert_int_equal(report_pcap__parse_boot_time("1763883968.123456789", &ns), 0);
	assert_true(ns == 1763883968123456789ull);
	assert_int_equal(report_pcap__parse_boot_time("12.5", &ns), 0);
	assert_true(ns == 12500000000ull);
	assert_int_equal(report_pcap__parse_boot_time("7", &ns), 0);
	assert_true(ns == 7000000000ull);
	assert_int_equal(report_pcap__parse_boot_time("3.1234567899", &ns), 0);
	assert_true(ns == 3123456789ull);
	assert_int_equal(report_pcap__parse_boot_time("", &ns), -EINVAL);
	assert_int_equal(report_pcap__parse_boot_time("-1.0", &ns), -EINVAL);
	assert_int_equal(report_pcap__parse_boot_time("1.5x", &ns), -EINVAL);
	assert_int_equal(report_pcap__parse_boot_time(".5", &ns), -EINVAL);
	assert_int_equal(report_pcap__parse_boot_time("99999999999999999999", &ns), -EINVAL);
}

/* Names from the file when it has them; numbers otherwise. */
static void test_comment(void **state)
{
	struct trace_event e;
	char buf[256];

	memset(&e, 0, sizeof(e));
	e.cause = CAUSE_FRAG_TIMEOUT;
	e.reason = 0x30006;
	e.cookie = 1;
	e.netns = 7;
	e.cpu = 12;
	e.location = 0xffffffff81a0b1c4ull;
	report_pcap__comment(buf, sizeof(buf), &e, "FRAG_REASM_TIMEOUT", "ip_expire+0x1");
	assert_string_equal(buf, "cause=frag_timeout reason=FRAG_REASM_TIMEOUT "
			    "socket=cookie:1 netns=7 cpu=12 location=ip_expire+0x1");
	/* a newer recorder's cause keeps its number; control bytes go */
	e.cause = 300;
	e.flags = UD_KEY_SOCK | UD_KEY_INODE;
	report_pcap__comment(buf, sizeof(buf), &e, "X\nY", NULL);
	assert_string_equal(buf, "cause=300 reason=X?Y socket=inode:1 netns=7 cpu=12 "
			    "location=0xffffffff81a0b1c4");
	e.cookie = 0;
	report_pcap__comment(buf, sizeof(buf), &e, NULL, NULL);
	assert_string_equal(buf, "cause=300 reason=196614 socket=none netns=7 cpu=12 "
			    "location=0xffffffff81a0b1c4");
}

/* ---- the export ---- */

#define BOOT_TIME "1763883968.000000500"
#define BOOT_NS   1763883968000000500ull
#define KERNEL    "6.18.44-fc-v782"
#define LOC_RCV   0xffffffff81a0b1c4ull
#define LOC_NAMED_LATE 0xffffffff81000010ull
#define LOC_UNKNOWN 0xffffffff8100abcdull

static const struct trace_kv meta_v[] = {
	{ TRACE_META_HOST, "vm" },
	{ TRACE_META_KERNEL, KERNEL },
	{ TRACE_META_BOOT_TIME, BOOT_TIME },
	{ TRACE_META_VERSION, "0.1.0" },
};
static const struct trace_meta meta = { ARRAY_SIZE(meta_v), meta_v };
static const struct trace_meta meta_no_boot = { 2, meta_v };

static const struct trace_reason reasons_v[] = {
	{ 2, "NOT_SPECIFIED" }, { 6, "SOCKET_RCVBUFF" }, { 3, "NO_SOCKET" },
};
static const struct trace_reasons reasons = { ARRAY_SIZE(reasons_v), reasons_v };
static const struct trace_symbol symbols_v[] = {
	{ LOC_RCV, "udp_queue_rcv_one_skb+0x1a4" },
};
static const struct trace_symbols symbols = { ARRAY_SIZE(symbols_v), symbols_v };
/* named only after the events that dropped there, as record does */
static const struct trace_symbol late_v[] = {
	{ LOC_NAMED_LATE, "__udp4_lib_rcv+0x9c" },
	{ LOC_RCV, "udp_queue_rcv_one_skb+0x1a4" },
};
static const struct trace_symbols late = { ARRAY_SIZE(late_v), late_v };

static uint16_t ip_csum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;

	for (size_t i = 0; i < n; i += 2)
		s += p[i] << 8 | p[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s;
}

/* A UDP datagram of `payload` bytes from 10.0.0.1:sport to 10.0.0.2:dport,
 * its first caplen bytes captured. */
static struct trace_event ev4(uint64_t t, uint16_t sport, uint16_t dport,
			      uint32_t payload, uint16_t caplen)
{
	struct trace_event e;
	uint8_t *h;
	uint32_t tot = 28 + payload;

	memset(&e, 0, sizeof(e));
	e.time_ns = t;
	e.cpu = 1;
	e.netns = 4026531840u;
	e.cookie = 12345;
	e.cause = 0; /* rcvbuf */
	e.reason = 6;
	e.location = LOC_RCV;
	e.flags = UD_KEY_SOCK | UD_KEY_RX_SK;
	e.family = 2;
	e.proto = 17;
	e.saddr[0] = 10, e.saddr[3] = 1;
	e.daddr[0] = 10, e.daddr[3] = 2;
	e.sport = sport;
	e.dport = dport;
	e.len = tot;
	e.caplen = caplen;
	h = e.cap;
	uint8_t full[TRACE_CAP_MAX] = {
		0x45, 0, tot >> 8, tot, 0x12, 0x34, 0x40, 0, 64, 17, 0, 0,
		10, 0, 0, 1, 10, 0, 0, 2,
		sport >> 8, sport, dport >> 8, dport, (tot - 20) >> 8, tot - 20, 0, 0,
	};
	uint16_t c = ip_csum(full, 20);

	full[10] = c >> 8;
	full[11] = c;
	for (int i = 28; i < TRACE_CAP_MAX; i++)
		full[i] = 'a' + i % 26;
	memcpy(h, full, caplen);
	return e;
}

static struct trace_event ev6(uint64_t t, uint32_t payload, uint16_t caplen)
{
	struct trace_event e;
	uint32_t ulen = 8 + payload;

	memset(&e, 0, sizeof(e));
	e.time_ns = t;
	e.cpu = 3;
	e.netns = 4026532246u;
	e.cookie = 0; /* no socket */
	e.cause = 2;  /* no_socket */
	e.reason = 3;
	e.location = LOC_NAMED_LATE;
	e.family = 10;
	e.proto = 17;
	e.dport = 5003;
	e.sport = 53000;
	e.len = 40 + ulen;
	e.caplen = caplen;

	uint8_t full[TRACE_CAP_MAX] = {
		0x60, 0, 0, 0, ulen >> 8, ulen, 17, 64,
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
		53000 >> 8, 53000 & 0xff, 5003 >> 8, 5003 & 0xff, ulen >> 8, ulen, 0x12, 0x34,
	};

	for (int i = 48; i < TRACE_CAP_MAX; i++)
		full[i] = i;
	memcpy(e.cap, full, caplen);
	return e;
}

#define N_EXPECTED 4

static const char *const want_comments[N_EXPECTED] = {
	"cause=rcvbuf reason=SOCKET_RCVBUFF socket=cookie:12345 netns=4026531840 cpu=1 location=udp_queue_rcv_one_skb+0x1a4",
	"cause=no_socket reason=NO_SOCKET socket=none netns=4026532246 cpu=3 location=__udp4_lib_rcv+0x9c",
	"cause=rcvbuf reason=SOCKET_RCVBUFF socket=cookie:12345 netns=4026531840 cpu=1 location=udp_queue_rcv_one_skb+0x1a4",
	"cause=other reason=99 socket=inode:777 netns=0 cpu=0 location=0xffffffff8100abcd",
};
static const uint64_t want_time[N_EXPECTED] = { 1000, 2000000001ull, 3000, 4000 };

/* The trace the export tests share: 4 events with headers (IPv4 and
 * IPv6, one whose names are unknown, one small enough to have no payload
 * captured), 1 without; SYMBOLS partly after the events. */
static void write_trace(const struct trace_meta *m)
{
	struct trace_writer *w;
	struct trace_event e[5];

	e[0] = ev4(1000, 40000, 5001, 1000, 64);
	e[1] = ev6(2000000001ull, 100, 96);
	e[1].len = 100; /* the IPv6 payload length says 148 */
	e[2] = ev4(2500, 40001, 5001, 1000, 0); /* recorded without headers */
	/* the whole packet: caplen = len (to a port no Wireshark dissector
	 * claims: the port 5001 one calls a 2-byte payload malformed) */
	e[3] = ev4(3000, 40002, 47001, 2, 30);
	e[3].len = 10; /* skb->len without the IP header: caplen wins */
	e[4] = ev4(4000, 40003, 5001, 1000, 28);
	e[4].cause = CAUSE_OTHER;
	e[4].reason = 99;
	e[4].location = LOC_UNKNOWN;
	e[4].cookie = 777;
	e[4].flags = UD_KEY_INODE;
	e[4].netns = 0;
	e[4].cpu = 0;
	e[4].len = 1008; /* skb->len after UDP pulled the IP header: tot_len wins */

	unlink(path);
	assert_int_equal(trace_writer__open(path, false, &w), 0);
	if (m)
		assert_int_equal(trace_writer__meta(w, m), 0);
	assert_int_equal(trace_writer__reasons(w, &reasons), 0);
	assert_int_equal(trace_writer__symbols(w, &symbols), 0);
	for (size_t i = 0; i < ARRAY_SIZE(e); i++)
		assert_int_equal(trace_writer__event(w, &e[i]), 0);
	assert_int_equal(trace_writer__symbols(w, &late), 0);
	assert_int_equal(trace_writer__close(w), 0);
}

/* One option's value, or NULL; opts spans [p, end) up to the end marker. */
static const uint8_t *find_opt(const uint8_t *p, const uint8_t *end,
			       uint16_t code, uint16_t *len)
{
	while (p + 4 <= end) {
		uint16_t c = le16(p), l = le16(p + 2);

		if (c == PCAPNG_OPT_ENDOFOPT) {
			assert_int_equal(l, 0);
			assert_true(p + 4 == end); /* nothing after the end marker */
			return NULL;
		}
		assert_true(p + 4 + ((l + 3u) & ~3u) <= end);
		if (c == code) {
			*len = l;
			return p + 4;
		}
		p += 4 + ((l + 3u) & ~3u);
	}
	fail_msg("options without an end marker");
	return NULL;
}

static void assert_opt_str(const uint8_t *p, const uint8_t *end, uint16_t code,
			   const char *want)
{
	uint16_t l = 0;
	const uint8_t *v = find_opt(p, end, code, &l);

	if (!v)
		fail_msg("option %u missing, want \"%s\"", code, want);
	if (l != strlen(want) || memcmp(v, want, l))
		fail_msg("option %u is \"%.*s\", want \"%s\"", code, (int)l, v, want);
}

/* Parse the export back: SHB, IDB, then the packets in trace order. */
static void check_pcapng(const uint8_t *f, size_t n, bool with_boot)
{
	const uint8_t *p = f, *end = f + n;
	uint32_t len;
	int packets = 0;
	char appl[64];

	snprintf(appl, sizeof(appl), "udpdrop %s", UDPDROP_VERSION);
	while (p < end) {
		assert_true(p + 12 <= end);
		len = le32(p + 4);
		assert_true(len >= 12 && len % 4 == 0 && p + len <= end);
		assert_int_equal(le32(p + len - 4), len);
		switch (le32(p)) {
		case PCAPNG_SHB:
			assert_true(p == f);
			assert_int_equal(le32(p + 8), PCAPNG_BYTE_ORDER_MAGIC);
			assert_int_equal(le16(p + 12), 1);
			assert_int_equal(le16(p + 14), 0);
			assert_int_equal(le32(p + 16), UINT32_MAX);
			assert_int_equal(le32(p + 20), UINT32_MAX);
			assert_opt_str(p + 24, p + len - 4, PCAPNG_SHB_USERAPPL, appl);
			assert_opt_str(p + 24, p + len - 4, PCAPNG_SHB_OS, KERNEL);
			break;
		case PCAPNG_IDB: {
			uint16_t l = 0;
			const uint8_t *res;

			assert_true(p == f + le32(f + 4)); /* right after the SHB */
			assert_int_equal(le16(p + 8), PCAPNG_LINKTYPE_RAW);
			assert_int_equal(le32(p + 12), TRACE_CAP_MAX);
			res = find_opt(p + 16, p + len - 4, PCAPNG_IF_TSRESOL, &l);
			assert_non_null(res);
			assert_int_equal(l, 1);
			assert_int_equal(*res, 9);
			break;
		}
		case PCAPNG_EPB: {
			uint32_t caplen = le32(p + 20), origlen = le32(p + 24);
			uint64_t ts = (uint64_t)le32(p + 12) << 32 | le32(p + 16);
			const uint8_t *d = p + 28;
			uint64_t want_ts;

			assert_true(packets < N_EXPECTED);
			assert_int_equal(le32(p + 8), 0);
			want_ts = want_time[packets] + (with_boot ? BOOT_NS : 0);
			assert_true(ts == want_ts);
			assert_true(caplen <= origlen);
			switch (packets) {
			case 0:
				assert_int_equal(caplen, 64);
				assert_int_equal(origlen, 1028);
				assert_int_equal(d[0], 0x45);
				break;
			case 1:
				assert_int_equal(caplen, 96);
				assert_int_equal(origlen, 148);
				assert_int_equal(d[0], 0x60);
				break;
			case 2:
				assert_int_equal(caplen, 30);
				assert_int_equal(origlen, 30);
				break;
			case 3:
				assert_int_equal(caplen, 28);
				assert_int_equal(origlen, 1028);
				break;
			}
			assert_opt_str(d + ((caplen + 3) & ~3u), p + len - 4, PCAPNG_OPT_COMMENT,
				       want_comments[packets]);
			packets++;
			break;
		}
		default:
			fail_msg("unexpected block type 0x%x", le32(p));
		}
		p += len;
	}
	assert_int_equal(packets, N_EXPECTED);
}

/* Run the export, its messages into *msgs (caller frees). */
static int export(bool force, struct report_pcap_stats *st, char **msgs)
{
	size_t mlen;
	FILE *m = open_memstream(msgs, &mlen);
	int ret;

	assert_non_null(m);
	ret = report_pcap__export(path, out, force, "udpdrop report", m, st); /* st may be NULL */
	fclose(m);
	return ret;
}

static void test_export(void **state)
{
	struct report_pcap_stats st;
	struct stat sb;
	uint8_t *f;
	size_t n;
	char *msgs, want[512];

	write_trace(&meta);
	assert_int_equal(export(false, &st, &msgs), EXIT_OK);
	snprintf(want, sizeof(want),
		 "udpdrop report: 4 packets written to %s (1 event without headers skipped)\n", out);
	assert_string_equal(msgs, want);
	free(msgs);
	assert_int_equal(st.events, 5);
	assert_int_equal(st.packets, 4);
	assert_int_equal(st.skipped, 1);
	assert_int_equal(st.status, TRACE_COMPLETE);
	assert_int_equal(stat(out, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	f = slurp(out, &n);
	check_pcapng(f, n, true);
	free(f);
	assert_dir_clean();
}

static void test_export_no_boot_time(void **state)
{
	struct report_pcap_stats st;
	uint8_t *f;
	size_t n;
	char *msgs;

	write_trace(&meta_no_boot);
	assert_int_equal(export(false, &st, &msgs), EXIT_OK);
	assert_non_null(strstr(msgs, "has no boot_time: timestamps are time since its boot"));
	free(msgs);
	f = slurp(out, &n);
	/* the same packets, their timestamps left on the monotonic clock */
	check_pcapng(f, n, false);
	free(f);
	assert_dir_clean();
}

/* A second export refuses to replace the first without force. */
static void test_export_exists(void **state)
{
	struct report_pcap_stats st;
	uint8_t *f;
	size_t n;
	char *msgs, want[512];

	write_trace(&meta);
	spit(out, "precious", 8);
	assert_int_equal(export(false, &st, &msgs), EXIT_USAGE);
	snprintf(want, sizeof(want),
		 "udpdrop report: %s exists: give -f to overwrite it, or another name\n", out);
	assert_string_equal(msgs, want);
	free(msgs);
	f = slurp(out, &n);
	assert_int_equal(n, 8);
	free(f);

	assert_int_equal(export(true, &st, &msgs), EXIT_OK);
	free(msgs);
	f = slurp(out, &n);
	check_pcapng(f, n, true);
	free(f);

	/* the trace itself, even with force */
	FILE *null = fopen("/dev/null", "w");

	assert_non_null(null);
	assert_int_equal(report_pcap__export(path, path, true, "x", null, NULL), EXIT_USAGE);
	fclose(null);
	assert_int_equal(access(path, R_OK), 0);
	assert_dir_clean();
}

static void export_fails(const char *want_msg)
{
	struct report_pcap_stats st;
	char *msgs;

	assert_int_equal(export(false, &st, &msgs), EXIT_FAIL);
	if (!strstr(msgs, want_msg))
		fail_msg("message \"%s\" does not say \"%s\"", msgs, want_msg);
	/* one line */
	assert_non_null(strchr(msgs, '\n'));
	assert_string_equal(strchr(msgs, '\n'), "\n");
	free(msgs);
	assert_int_equal(access(out, F_OK), -1);
	assert_dir_clean();
}

static void test_export_no_events(void **state)
{
	struct trace_writer *w;

	assert_int_equal(trace_writer__open(path, false, &w), 0);
	assert_int_equal(trace_writer__meta(w, &meta), 0);
	assert_int_equal(trace_writer__close(w), 0);
	export_fails("has no EVENT records");
}

static void test_export_no_headers(void **state)
{
	struct trace_writer *w;
	struct trace_event e = ev4(1, 1, 2, 100, 0);

	assert_int_equal(trace_writer__open(path, false, &w), 0);
	assert_int_equal(trace_writer__meta(w, &meta), 0);
	assert_int_equal(trace_writer__event(w, &e), 0);
	assert_int_equal(trace_writer__event(w, &e), 0);
	assert_int_equal(trace_writer__close(w), 0);
	export_fails("none of its 2 events carries packet headers: record with --headers BYTES");
}

static void test_export_bad_input(void **state)
{
	export_fails("cannot open: No such file or directory");
	spit(path, "not a trace at all, not at all", 30);
	export_fails("not a udpdrop trace");

	/* a damaged block: nothing written, not even the packets before it */
	uint8_t *f;
	size_t n;

	write_trace(&meta);
	f = slurp(path, &n);
	f[n - 10] ^= 0x40;
	spit(path, f, n);
	free(f);
	export_fails("corrupt at offset");
}

/* Cut short after the block holding the first event: that packet, exit 0. */
static void test_export_cut(void **state)
{
	struct trace_writer *w;
	struct trace_event e0 = ev4(1000, 40000, 5001, 1000, 64), e1 = ev6(5, 10, 58);
	struct report_pcap_stats st;
	uint64_t whole;
	char *msgs, want[512];
	uint8_t *f;
	size_t n;

	assert_int_equal(trace_writer__open(path, false, &w), 0);
	assert_int_equal(trace_writer__meta(w, &meta), 0);
	assert_int_equal(trace_writer__reasons(w, &reasons), 0);
	assert_int_equal(trace_writer__symbols(w, &symbols), 0);
	assert_int_equal(trace_writer__event(w, &e0), 0);
	assert_int_equal(trace_writer__flush(w), 0);
	whole = trace_writer__offset(w);
	assert_int_equal(trace_writer__event(w, &e1), 0);
	assert_int_equal(trace_writer__close(w), 0);
	assert_int_equal(truncate(path, whole + 9), 0);

	assert_int_equal(export(false, &st, &msgs), EXIT_OK);
	assert_int_equal(st.status, TRACE_CUT);
	assert_int_equal(st.packets, 1);
	assert_non_null(strstr(msgs, "cut short after 1 whole blocks"));
	assert_non_null(strstr(msgs, "the pcapng holds what is there\n"));
	snprintf(want, sizeof(want),
		 "udpdrop report: 1 packet written to %s (0 events without headers skipped)\n", out);
	assert_non_null(strstr(msgs, want));
	free(msgs);
	f = slurp(out, &n);
	/* SHB, IDB, one EPB */
	assert_int_equal(le32(f + le32(f + 4) + le32(f + le32(f + 4) + 4)), PCAPNG_EPB);
	free(f);
	assert_dir_clean();
}

/* ---- tshark and tcpdump read it ---- */

static bool on_path(const char *prog)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return system(cmd) == 0;
}

/* The command's stdout (stderr dropped: tshark warns when run as root). */
static char *run(const char *fmt, ...)
{
	char cmd[1024], *buf = NULL;
	size_t cap = 0, len = 0;
	va_list ap;
	FILE *p;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	assert_non_null(p);
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap = cap ? 2 * cap : 8192;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		size_t r = fread(buf + len, 1, 4096, p);

		if (!r)
			break;
		len += r;
	}
	buf[len] = 0;
	st = pclose(p);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("`%s` failed (status %d): %s", cmd, st, buf);
	return buf;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_tshark_tcpdump(void **state)
{
	const char *missing = !on_path("tshark") ? "tshark" :
			      !on_path("tcpdump") ? "tcpdump" : NULL;
	char *o, want[4096] = "", *field;

	if (missing) {
		if (getenv("CI"))
			fail_msg("%s is not installed (tools/deps.sh installs it); CI is set", missing);
		print_message("%s not on PATH: skipped (tools/deps.sh installs it)\n", missing);
		skip();
	}
	write_trace(&meta);
	assert_int_equal(export(false, NULL, &o), EXIT_OK);
	free(o);

	/* the comment field: frame.comment; pkt_comment before Wireshark 1.12
	 * (later versions have pkt_comment too, as the protocol: no value) */
	o = run("f=$(tshark -G fields 2>/dev/null | cut -f3); "
		"echo \"$f\" | grep -qx frame.comment && echo frame.comment || "
		"{ echo \"$f\" | grep -qx pkt_comment && echo pkt_comment; } || true");
	field = strtok(o, "\n");
	if (!field)
		fail_msg("tshark knows neither frame.comment nor pkt_comment");
	field = strdup(field);
	free(o);

	o = run("tshark -n -r '%s' -T fields -e %s 2>/dev/null", out, field);
	for (int i = 0; i < N_EXPECTED; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s\n", want_comments[i]);
	assert_string_equal(o, want);
	free(o);

	/* decoded as raw IP, both families, nothing malformed */
	o = run("tshark -n -r '%s' -T fields -E separator=' ' -e ip.src -e ipv6.src -e udp.srcport"
		" -e udp.dstport -e frame.len -e frame.cap_len 2>/dev/null", out);
	assert_string_equal(o,
			    "10.0.0.1  40000 5001 1028 64\n"
			    " 2001:db8::1 53000 5003 148 96\n"
			    "10.0.0.1  40002 47001 30 30\n"
			    "10.0.0.1  40003 5001 1028 28\n");
	free(o);
	o = run("tshark -n -r '%s' -Y '_ws.malformed || _ws.expert.severity >= \"error\"' 2>/dev/null", out);
	if (*o)
		fail_msg("tshark finds errors: %s", o);
	free(o);
	o = run("tshark -n -r '%s' -T fields -e frame.time_epoch 2>/dev/null", out);
	assert_string_equal(o,
			    "1763883968.000001500\n1763883970.000000501\n"
			    "1763883968.000003500\n1763883968.000004500\n");
	free(o);

	o = run("tcpdump -nn -r '%s' 2>/dev/null", out);
	assert_int_equal(count_lines(o), N_EXPECTED);
	if (!strstr(o, "IP 10.0.0.1.40000 > 10.0.0.2.5001: UDP, length 1000") ||
	    !strstr(o, "IP6 2001:db8::1.53000 > 2001:db8::2.5003: UDP, length 100"))
		fail_msg("tcpdump says:\n%s", o);
	free(o);
	free(field);
	assert_dir_clean();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shb_layout),
		cmocka_unit_test(test_idb_layout),
		cmocka_unit_test(test_epb_layout),
		cmocka_unit_test(test_epb_padding),
		cmocka_unit_test(test_writer_errors),
		cmocka_unit_test(test_boot_time),
		cmocka_unit_test(test_comment),
		cmocka_unit_test(test_export),
		cmocka_unit_test(test_export_no_boot_time),
		cmocka_unit_test(test_export_exists),
		cmocka_unit_test(test_export_no_events),
		cmocka_unit_test(test_export_no_headers),
		cmocka_unit_test(test_export_bad_input),
		cmocka_unit_test(test_export_cut),
		cmocka_unit_test(test_tshark_tcpdump),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
