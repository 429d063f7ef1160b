// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fuzz the trace reader (src/trace/trace.c): any bytes must give records or a
 * clean status, never a crash, an overread or a runaway allocation.
 *
 * Each input is read three ways, because checksums guard the interesting
 * code: a mutated byte almost always fails a crc and stops there.
 *   1. as is: the file header, block framing and checksum paths;
 *   2. with every crc recomputed: the length checks, inflate and LZ4's
 *      decompression;
 *   3. (inputs without the trace magic) as the raw records of one valid
 *      block, zlib's or LZ4's (the first byte's low bit): the record
 *      decoders themselves.
 * Each reading also goes through udpdrop report: report__load_mem, then
 * report__print as text and JSON for every --by value (the joins, the
 * timeline, the advice engine's arithmetic on hostile numbers). What they
 * print is checked, and a violation aborts (a finding):
 *   - text: nothing a terminal would act on: no byte below 0x20 but '\n',
 *     no DEL, only valid UTF-8 and no C1 control (U+0080..U+009F) in it,
 *     so no raw 0x80..0x9f byte either (util.h, mem_printable);
 *   - JSON: one valid RFC 8259 document (json_valid below), with no raw
 *     control, DEL or C1 character in its strings either.
 *
 * Built with libFuzzer (`make fuzz`) it is LLVMFuzzerTestOneInput; with
 * -DFUZZ_STANDALONE (when the compiler has no libFuzzer) a main() runs
 * the corpus, then mutates it for -max_total_time seconds, taking the
 * same arguments as libFuzzer: [-max_total_time=S] [-runs=N] [-seed=N]
 * FILE|DIR... (new inputs are not saved; a crash's input is, to
 * ./crash-standalone).
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lz4.h>
#include <zlib.h>
#include "report_model.h"
#include "trace.h"

/* what read_all() touches goes here, so the reads are not optimized out */
static volatile uint64_t sink;

/*
 * The report is linked, not included: the Makefile's fuzz rule compiles
 * the offline side (FUZZ_OFFLINE: report's model, the trace reader and
 * what they use) with this file and no live-system code, so a link error
 * here is the offline side reaching for the live system.
 */

/* A property of report's output broken: print what and where, abort. */
static void violation(const char *what, const struct strbuf *out, size_t at)
{
	size_t from = at > 40 ? at - 40 : 0;

	fprintf(stderr, "fuzz_trace: %s at byte %zu of %zu:\n", what, at, out->len);
	for (size_t i = from; i < out->len && i < at + 40; i++)
		fprintf(stderr, "%s%02x", i == at ? " [" : " ", (unsigned char)out->buf[i]);
	fprintf(stderr, "\n");
	abort();
}

/* Text made safe for a terminal: see the top of this file. */
static void check_text(const struct strbuf *out)
{
	if (!mem_is_printable(out->buf, out->len, true)) {
		size_t at = 0;

		while (at < out->len && mem_is_printable(out->buf + at, 1, true))
			at++;
		violation("report text holds a byte a terminal acts on", out, at);
	}
}

/*
 * A strict JSON checker (RFC 8259), recursive descent over out: where it
 * stops is the first byte that is not JSON. Strings take only valid UTF-8
 * with no control, DEL or C1 character unescaped.
 */
struct jp {
	const unsigned char *p, *end;
	int depth;
};

static void jp_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r'))
		j->p++;
}

static bool jp_lit(struct jp *j, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n))
		return false;
	j->p += n;
	return true;
}

static bool jp_digits(struct jp *j)
{
	const unsigned char *s = j->p;

	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > s;
}

static bool jp_number(struct jp *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (!jp_digits(j))
		return false;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!jp_digits(j))
			return false;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!jp_digits(j))
			return false;
	}
	return true;
}

static bool jp_string(struct jp *j)
{
	if (j->p >= j->end || *j->p != '"')
		return false;
	j->p++;
	while (j->p < j->end && *j->p != '"') {
		int n = utf8_seq_len(j->p, j->end - j->p);

		if (*j->p == '\\') {
			j->p++;
			if (j->p >= j->end)
				return false;
			if (*j->p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (j->p + i >= j->end || !isxdigit(j->p[i]))
						return false;
				j->p += 5;
			} else if (strchr("\"\\/bfnrt", *j->p) && *j->p) {
				j->p++;
			} else {
				return false;
			}
			continue;
		}
		if (!mem_is_printable((const char *)j->p, n ? n : 1, false))
			return false;
		j->p += n;
	}
	if (j->p >= j->end)
		return false;
	j->p++;
	return true;
}

static bool jp_value(struct jp *j)
{
	bool first = true;
	unsigned char close;

	jp_ws(j);
	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '"':
		return jp_string(j);
	case 't':
		return jp_lit(j, "true");
	case 'f':
		return jp_lit(j, "false");
	case 'n':
		return jp_lit(j, "null");
	case '{':
	case '[':
		if (++j->depth > 64)
			return false;
		close = *j->p == '{' ? '}' : ']';
		j->p++;
		for (;;) {
			jp_ws(j);
			if (j->p < j->end && *j->p == close && first)
				break;
			if (!first) {
				if (j->p >= j->end || *j->p != ',')
					break;
				j->p++;
				jp_ws(j);
			}
			if (close == '}') {
				if (!jp_string(j))
					return false;
				jp_ws(j);
				if (j->p >= j->end || *j->p != ':')
					return false;
				j->p++;
			}
			if (!jp_value(j))
				return false;
			jp_ws(j);
			first = false;
		}
		if (j->p >= j->end || *j->p != close)
			return false;
		j->p++;
		j->depth--;
		return true;
	default:
		return jp_number(j);
	}
}

static void check_json(const struct strbuf *out)
{
	struct jp j = { (const unsigned char *)out->buf,
			(const unsigned char *)out->buf + out->len, 0 };

	if (!jp_value(&j) || (jp_ws(&j), j.p != j.end))
		violation("report JSON is not a valid document", out,
			  j.p - (const unsigned char *)out->buf);
}

/* udpdrop report over the bytes: load, then every output it has. */
static void report_all(const uint8_t *data, size_t len)
{
	struct report rp;
	struct strbuf out = {};
	char msg[512];

	report__load_mem(&rp, "fuzz", data, len);
	if (report__printable(&rp)) {
		for (int json = 0; json < 2; json++)
			for (int by = 0; by < REPORT_BY_MAX; by++) {
				struct report_opts o = { .json = json, .by = by,
							 .top = by ? 0 : 3 };

				report__print(&rp, &o, &out);
				if (json)
					check_json(&out);
				else
					check_text(&out);
				sink += out.len;
				out.len = 0;
			}
	}
	sink += strlen(report__status_name(&rp));
	if (report__problem(&rp, msg, sizeof(msg))) {
		/* the line report prints on stderr */
		struct strbuf line = { msg, strlen(msg), sizeof(msg) };

		check_text(&line);
		sink += strlen(msg);
	}
	sink += report__exit_code(&rp);
	sb_free(&out);
	report__free(&rp);
}

static void read_all(const uint8_t *data, size_t len)
{
	struct trace_reader *r;
	struct trace_record rec;

	if (trace_reader__open_mem(data, len, &r))
		return;
	while (trace_reader__next(r, &rec) == 1) {
		/* touch what the decoders hand out, so ASan checks it */
		switch (rec.type) {
		case TRACE_META:
			for (uint32_t i = 0; i < rec.meta.n; i++)
				sink += strlen(rec.meta.v[i].key) +
					strlen(rec.meta.v[i].value);
			break;
		case TRACE_REASONS:
			for (uint32_t i = 0; i < rec.reasons.n; i++)
				sink += strlen(rec.reasons.v[i].name);
			break;
		case TRACE_SYMBOLS:
			for (uint32_t i = 0; i < rec.symbols.n; i++)
				sink += strlen(rec.symbols.v[i].name);
			break;
		case TRACE_IFACES:
			for (uint32_t i = 0; i < rec.ifaces.n; i++)
				sink += strlen(rec.ifaces.v[i].name);
			break;
		case TRACE_EVENT:
			for (uint16_t i = 0; i < rec.event.caplen; i++)
				sink += rec.event.cap[i];
			break;
		case TRACE_COUNTS:
			for (uint32_t i = 0; i < rec.counts.n; i++)
				sink += rec.counts.v[i].val.bytes;
			break;
		case TRACE_SOCKETS:
			for (uint32_t i = 0; i < rec.sockets.n; i++)
				sink += strlen(rec.sockets.v[i].comm);
			break;
		case TRACE_MIB:
			for (uint32_t i = 0; i < rec.mib.n; i++)
				sink += strlen(rec.mib.v[i].name);
			break;
		case TRACE_SHED:
			for (uint32_t i = 0; i < rec.shed.n; i++)
				sink += rec.shed.v[i].n;
			break;
		case TRACE_END:
			for (uint32_t i = 0; i < rec.end.n; i++)
				sink += rec.end.v[i].n;
			break;
		}
	}
	sink += strlen(trace_reader__message(r));
	trace_reader__close(r);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Recompute the file header's and every block's checksums in place. */
static void fix_crcs(uint8_t *b, size_t len)
{
	size_t off = TRACE_HDR_LEN;

	if (len < TRACE_HDR_LEN)
		return;
	put32(b + 16, crc32(0, b, 16));
	while (len - off >= TRACE_BLK_HDR_LEN) {
		uint8_t *h = b + off;
		size_t comp = get32(h + 12), room = len - off - TRACE_BLK_HDR_LEN;

		if (comp > room)
			comp = room;
		put32(h + 16, crc32(0, h + TRACE_BLK_HDR_LEN, comp));
		put32(h + 20, crc32(0, h, 20));
		off += TRACE_BLK_HDR_LEN + comp;
	}
}

/* A valid trace whose only block holds `data` as its records, compressed
 * with zlib (a 1.3 file) or LZ4 (2.3). */
static void read_as_block(const uint8_t *data, size_t len, bool lz4)
{
	uLongf clen;
	size_t n;
	uint8_t *b, *h;
	int ok;

	if (!len || len > TRACE_BLOCK_MAX)
		return;
	clen = lz4 ? (uLongf)LZ4_compressBound((int)len) : compressBound(len);
	n = TRACE_HDR_LEN + TRACE_BLK_HDR_LEN + clen;
	b = malloc(n);
	if (!b)
		return;
	memcpy(b, TRACE_MAGIC, 8);
	b[8] = lz4 ? TRACE_VERSION_MAJOR : TRACE_VERSION_MAJOR_ZLIB;
	b[9] = 0;
	b[10] = TRACE_VERSION_MINOR;
	b[11] = 0;
	put32(b + 12, 0);
	h = b + TRACE_HDR_LEN;
	if (lz4) {
		int c = LZ4_compress_default((const char *)data, (char *)h + TRACE_BLK_HDR_LEN,
					     (int)len, (int)clen);

		ok = c > 0;
		clen = ok ? (uLongf)c : 0;
	} else {
		ok = compress2(h + TRACE_BLK_HDR_LEN, &clen, data, len, 1) == Z_OK;
	}
	if (ok) {
		memcpy(h, lz4 ? TRACE_BLK_MAGIC_LZ4 : TRACE_BLK_MAGIC, 4);
		put32(h + 4, 0);
		put32(h + 8, len);
		put32(h + 12, clen);
		n = TRACE_HDR_LEN + TRACE_BLK_HDR_LEN + clen;
		fix_crcs(b, n);
		read_all(b, n);
		report_all(b, n);
	}
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	read_all(data, size);
	report_all(data, size);
	if (size >= 8 && !memcmp(data, TRACE_MAGIC, 8)) {
		/* an exact-size copy: ASan catches a read one past the end */
		copy = malloc(size);
		if (!copy)
			return 0;
		memcpy(copy, data, size);
		fix_crcs(copy, size);
		read_all(copy, size);
		report_all(copy, size);
		free(copy);
	} else {
		/* the first byte's low bit picks the codec: the fuzzer
		 * reaches both, each input compressed once */
		read_as_block(data, size, size && (data[0] & 1));
	}
	return 0;
}

#ifdef FUZZ_STANDALONE
/*
 * The fallback driver: no coverage feedback, only blind mutations of the
 * corpus (bit flips, byte writes, cuts, inserts, deletes, splices), which
 * with the crc fix-up above still reach every decoder.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* weak: the driver also builds without sanitizers (coverage runs) */
void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

struct input {
	uint8_t *p;
	size_t n;
};

static struct input *corpus;
static size_t ncorpus;
static const uint8_t *cur;
static size_t cur_len;

static void save_crash(void)
{
	int fd = open("crash-standalone", O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return;
	if (write(fd, cur, cur_len) < 0)
		perror("crash-standalone");
	close(fd);
	fprintf(stderr, "fuzz_trace: input saved to ./crash-standalone\n");
}

static void add_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct input in = { 0 };
	long n;

	if (!f)
		return;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    n <= 64 << 20) {
		rewind(f);
		in.p = malloc(n ? n : 1);
		if (in.p && fread(in.p, 1, n, f) == (size_t)n) {
			in.n = n;
			corpus = realloc(corpus, (ncorpus + 1) * sizeof(*corpus));
			corpus[ncorpus++] = in;
			in.p = NULL;
		}
		free(in.p);
	}
	fclose(f);
}

static void add_path(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	char p[4096];

	if (stat(path, &st))
		return;
	if (!S_ISDIR(st.st_mode)) {
		add_file(path);
		return;
	}
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		if (!stat(p, &st) && S_ISREG(st.st_mode))
			add_file(p);
	}
	closedir(d);
}

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* One to a few mutations of a corpus input into buf (cap bytes). */
static size_t mutate(uint8_t *buf, size_t cap)
{
	const struct input *in = &corpus[rnd() % ncorpus];
	size_t n = in->n < cap ? in->n : cap;
	int k = 1 + rnd() % 4;

	memcpy(buf, in->p, n);
	while (k--) {
		size_t at = n ? rnd() % n : 0, m;

		switch (rnd() % 7) {
		case 0: /* flip a bit */
			if (n)
				buf[at] ^= 1u << (rnd() % 8);
			break;
		case 1: /* an interesting byte */
			if (n) {
				static const uint8_t v[] = { 0, 1, 0x7f, 0x80, 0xff };

				buf[at] = v[rnd() % sizeof(v)];
			}
			break;
		case 2: /* cut */
			n = at;
			break;
		case 3: /* delete a run */
			m = rnd() % 16;
			if (at + m <= n) {
				memmove(buf + at, buf + at + m, n - at - m);
				n -= m;
			}
			break;
		case 4: /* insert random bytes */
			m = rnd() % 16;
			if (n + m <= cap) {
				memmove(buf + at + m, buf + at, n - at);
				for (size_t i = 0; i < m; i++)
					buf[at + i] = rnd();
				n += m;
			}
			break;
		case 5: { /* splice another input's tail */
			const struct input *o = &corpus[rnd() % ncorpus];
			size_t from = o->n ? rnd() % o->n : 0;

			m = o->n - from;
			if (at + m > cap)
				m = cap - at;
			memcpy(buf + at, o->p + from, m);
			n = at + m;
			break;
		}
		case 6: /* a random 32-bit word (lengths, counts) */
			if (n >= 4) {
				uint32_t w = rnd() % 3 ? rnd() % 4096 : (uint32_t)rnd();

				at = rnd() % (n - 3);
				put32(buf + at, w);
			}
			break;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	double secs = 0;
	uint64_t runs = UINT64_MAX, execs = 0;
	struct timespec t0, t;
	size_t cap = 1 << 20;
	uint8_t *buf = malloc(cap);

	rng = (uint64_t)time(NULL) * 2654435761u | 1;
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "-max_total_time=", 16))
			secs = atof(argv[i] + 16);
		else if (!strncmp(argv[i], "-runs=", 6))
			runs = strtoull(argv[i] + 6, NULL, 10);
		else if (!strncmp(argv[i], "-seed=", 6))
			rng = strtoull(argv[i] + 6, NULL, 10) | 1;
		else if (argv[i][0] != '-')
			add_path(argv[i]);
	}
	if (!buf || !ncorpus) {
		fprintf(stderr, "fuzz_trace: no corpus files\n");
		return 2;
	}
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(save_crash);
	fprintf(stderr, "fuzz_trace (standalone, seed %llu): %zu corpus files\n",
		(unsigned long long)rng, ncorpus);
	for (size_t i = 0; i < ncorpus; i++) {
		cur = corpus[i].p;
		cur_len = corpus[i].n;
		LLVMFuzzerTestOneInput(cur, cur_len);
		execs++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (; execs < runs; execs++) {
		if (!(execs & 255)) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
				break;
		}
		uint8_t *exact;

		cur_len = mutate(buf, cap);
		/* an exact-size copy, so a read past the end is an ASan error */
		exact = malloc(cur_len ? cur_len : 1);
		if (!exact)
			break;
		memcpy(exact, buf, cur_len);
		cur = exact;
		LLVMFuzzerTestOneInput(exact, cur_len);
		free(exact);
	}
	fprintf(stderr, "fuzz_trace: %llu execs, no crash\n",
		(unsigned long long)execs);
	for (size_t i = 0; i < ncorpus; i++)
		free(corpus[i].p);
	free(corpus);
	free(buf);
	return 0;
}
#endif
