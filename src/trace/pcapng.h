/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A pcapng writer (draft-ietf-opsawg-pcapng), pure: each call appends one
 * block to a byte buffer and the caller writes the bytes where it likes.
 * Only what udpdrop needs: the Section Header, Interface Description and
 * Enhanced Packet blocks, with options. Always little-endian, encoded
 * byte by byte (readers take either order from the byte-order magic; one
 * fixed order keeps the output the same on every machine).
 *
 * Errors are negative errnos; the buffer is left as it was.
 */
#ifndef UD_PCAPNG_H
#define UD_PCAPNG_H

#include <stddef.h>
#include <stdint.h>

#define PCAPNG_SHB 0x0A0D0D0Au
#define PCAPNG_IDB 0x00000001u
#define PCAPNG_EPB 0x00000006u
#define PCAPNG_BYTE_ORDER_MAGIC 0x1A2B3C4Du

/* Option codes. */
#define PCAPNG_OPT_ENDOFOPT    0
#define PCAPNG_OPT_COMMENT     1
#define PCAPNG_SHB_HARDWARE    2
#define PCAPNG_SHB_OS          3
#define PCAPNG_SHB_USERAPPL    4
#define PCAPNG_IF_NAME         2
#define PCAPNG_IF_DESCRIPTION  3
#define PCAPNG_IF_TSRESOL      9

/* Packets that start at their IPv4 or IPv6 header (the version nibble says which). */
#define PCAPNG_LINKTYPE_RAW 101

/* An option's value is at most this long (its length is a u16). */
#define PCAPNG_OPT_MAX 65535u

struct pcapng_opt {
	uint16_t code;
	size_t len;      /* over PCAPNG_OPT_MAX: the block call says -E2BIG */
	const void *val; /* len bytes; strings are UTF-8 without a NUL */
};

/* A string option: its bytes without the NUL. */
struct pcapng_opt pcapng_opt__str(uint16_t code, const char *s);

struct pcapng_buf {
	uint8_t *p;
	size_t len, cap;
};
void pcapng_buf__reset(struct pcapng_buf *b); /* len 0, memory kept */
void pcapng_buf__free(struct pcapng_buf *b);

/*
 * Each appends one block with its options (the end-of-options marker is
 * added when there is any) and returns the block's length, or -ENOMEM,
 * -E2BIG (a string longer than PCAPNG_OPT_MAX, a block over 2 GiB) or
 * -EINVAL (caplen > origlen, a NULL value with a length).
 */
/* Section length unknown (-1): the section is written as a stream. */
int pcapng__shb(struct pcapng_buf *b, const struct pcapng_opt *opts,
		size_t nopts);
int pcapng__idb(struct pcapng_buf *b, uint16_t linktype, uint32_t snaplen,
		const struct pcapng_opt *opts, size_t nopts);
/* ts in the interface's if_tsresol units (microseconds without one). */
int pcapng__epb(struct pcapng_buf *b, uint32_t if_id, uint64_t ts,
		const void *data, uint32_t caplen, uint32_t origlen,
		const struct pcapng_opt *opts, size_t nopts);

#endif
