// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The pcapng blocks udpdrop writes. Every block is
 *   u32 type, u32 total length, body, options, u32 total length
 * with the body and each option value padded to 32 bits; the length is
 * repeated at the end so a reader can walk the file backwards.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "pcapng.h"

/* The length is a u32 but the calls return it as an int: 2 GiB is far
 * beyond any packet or comment udpdrop has. */
#define BLOCK_MAX 0x7FFFFF00u

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static int reserve(struct pcapng_buf *b, size_t n)
{
	size_t ncap;
	uint8_t *np;

	if (b->len + n <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 4096;
	while (ncap < b->len + n)
		ncap *= 2;
	np = realloc(b->p, ncap);
	if (!np)
		return -ENOMEM;
	b->p = np;
	b->cap = ncap;
	return 0;
}

/* The callers reserve the whole block first, so these cannot fail. */
static void put_bytes(struct pcapng_buf *b, const void *s, size_t n)
{
	if (n) /* s may be NULL then */
		memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void put_zeros(struct pcapng_buf *b, size_t n)
{
	memset(b->p + b->len, 0, n);
	b->len += n;
}

static void put_u16(struct pcapng_buf *b, uint16_t v)
{
	uint8_t x[2] = { v, v >> 8 };

	put_bytes(b, x, 2);
}

static void put_u32(struct pcapng_buf *b, uint32_t v)
{
	uint8_t x[4] = { v, v >> 8, v >> 16, v >> 24 };

	put_bytes(b, x, 4);
}

struct pcapng_opt pcapng_opt__str(uint16_t code, const char *s)
{
	return (struct pcapng_opt){ .code = code, .len = strlen(s), .val = s };
}

void pcapng_buf__reset(struct pcapng_buf *b)
{
	b->len = 0;
}

void pcapng_buf__free(struct pcapng_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* The options' bytes, end marker included; negative errno if invalid. */
static long opts_len(const struct pcapng_opt *opts, size_t n)
{
	size_t total = 0;

	for (size_t i = 0; i < n; i++) {
		if (opts[i].len > PCAPNG_OPT_MAX)
			return -E2BIG;
		if (opts[i].len && !opts[i].val)
			return -EINVAL;
		total += 4 + pad4(opts[i].len);
		if (total > BLOCK_MAX)
			return -E2BIG;
	}
	return n ? (long)total + 4 : 0;
}

static void put_opts(struct pcapng_buf *b, const struct pcapng_opt *opts,
		     size_t n)
{
	for (size_t i = 0; i < n; i++) {
		put_u16(b, opts[i].code);
		put_u16(b, opts[i].len);
		put_bytes(b, opts[i].val, opts[i].len);
		put_zeros(b, pad4(opts[i].len) - opts[i].len);
	}
	if (n) {
		put_u16(b, PCAPNG_OPT_ENDOFOPT);
		put_u16(b, 0);
	}
}

/*
 * Reserve and start a block whose fixed body is body bytes (after type
 * and length) followed by the options; the caller puts the body, then
 * end_block() the options and the trailing length. Returns the block's
 * total length.
 */
static long begin_block(struct pcapng_buf *b, uint32_t type, size_t body,
			const struct pcapng_opt *opts, size_t nopts)
{
	long ol = opts_len(opts, nopts);
	size_t total;

	if (ol < 0)
		return ol;
	if (body > BLOCK_MAX - 12 - (size_t)ol)
		return -E2BIG;
	total = 12 + body + ol;
	if (reserve(b, total))
		return -ENOMEM;
	put_u32(b, type);
	put_u32(b, total);
	return total;
}

static int end_block(struct pcapng_buf *b, long total,
		     const struct pcapng_opt *opts, size_t nopts)
{
	put_opts(b, opts, nopts);
	put_u32(b, total);
	return total;
}

int pcapng__shb(struct pcapng_buf *b, const struct pcapng_opt *opts,
		size_t nopts)
{
	long total = begin_block(b, PCAPNG_SHB, 16, opts, nopts);

	if (total < 0)
		return total;
	put_u32(b, PCAPNG_BYTE_ORDER_MAGIC);
	put_u16(b, 1); /* major */
	put_u16(b, 0); /* minor */
	put_u32(b, UINT32_MAX); /* section length -1: unknown, as a stream */
	put_u32(b, UINT32_MAX);
	return end_block(b, total, opts, nopts);
}

int pcapng__idb(struct pcapng_buf *b, uint16_t linktype, uint32_t snaplen,
		const struct pcapng_opt *opts, size_t nopts)
{
	long total = begin_block(b, PCAPNG_IDB, 8, opts, nopts);

	if (total < 0)
		return total;
	put_u16(b, linktype);
	put_u16(b, 0); /* reserved */
	put_u32(b, snaplen);
	return end_block(b, total, opts, nopts);
}

int pcapng__epb(struct pcapng_buf *b, uint32_t if_id, uint64_t ts,
		const void *data, uint32_t caplen, uint32_t origlen,
		const struct pcapng_opt *opts, size_t nopts)
{
	long total;

	/* readers refuse a packet that claims more bytes than it had */
	if (caplen > origlen || (caplen && !data))
		return -EINVAL;
	if (caplen > BLOCK_MAX)
		return -E2BIG;
	total = begin_block(b, PCAPNG_EPB, 20 + pad4(caplen), opts, nopts);
	if (total < 0)
		return total;
	put_u32(b, if_id);
	put_u32(b, ts >> 32);
	put_u32(b, (uint32_t)ts);
	put_u32(b, caplen);
	put_u32(b, origlen);
	put_bytes(b, data, caplen);
	put_zeros(b, pad4(caplen) - caplen);
	return end_block(b, total, opts, nopts);
}
