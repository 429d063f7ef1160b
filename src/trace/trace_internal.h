/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Inside src/trace: the trace writer's state, shared by trace.c (the
 * records, the file) and trace_blocks.c (compressing the blocks and
 * writing them out, on helper threads or in place).
 */
#ifndef UD_TRACE_INTERNAL_H
#define UD_TRACE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>
#include "trace.h"
#include "util.h"

struct buf {
	uint8_t *p;
	size_t len, cap;
	bool oom; /* a growth failed: the record is dropped with -ENOMEM */
};

static inline void buf_reserve(struct buf *b, size_t n)
{
	size_t ncap;
	uint8_t *np;

	if (b->oom || b->len + n <= b->cap)
		return;
	ncap = b->cap ? b->cap : 4096;
	while (ncap < b->len + n)
		ncap *= 2;
	np = realloc(b->p, ncap);
	if (!np) {
		b->oom = true;
		return;
	}
	b->p = np;
	b->cap = ncap;
}

static inline void le32(uint8_t *x, uint32_t v)
{
	x[0] = v;
	x[1] = v >> 8;
	x[2] = v >> 16;
	x[3] = v >> 24;
}

/*
 * Compressing a block is much of what writing a trace costs (zlib at level
 * 1 took 60 % of `udpdrop record`'s CPU in a drop storm; LZ4 far less). With
 * trace_writer__set_threads, helper threads compress the blocks while the
 * caller encodes the next ones; a block is written once it and every block
 * before it are compressed, by one helper at a time, so the file is byte
 * for byte the one the caller alone would write. A slot holds one block
 * on its way: filled by the caller, packed (compressed) by a helper,
 * written, free again.
 */
enum blk_state { BLK_FREE, BLK_FILLED, BLK_PACKING, BLK_PACKED };

/*
 * A packer compresses blocks with its writer's codec. zlib's deflate
 * stream is kept from block to block: deflateReset instead of compress2's
 * deflateInit and deflateEnd for each block (a 270 KiB state allocated and
 * freed every 64 KiB of records). The output is the same.
 */
struct packer {
	enum trace_codec codec;
	z_stream zs;
	bool ready;
};

struct blk_slot {
	enum blk_state state;
	uint32_t seq;
	struct buf raw; /* the block's records */
	struct buf out; /* block header + compressed bytes */
};

struct trace_writer {
	struct out_file of;
	bool fsync;
	bool ended;         /* END written (trace_writer__end) */
	int err;            /* sticky: the first write error */
	uint32_t seq;       /* the next block's number */
	uint64_t offset;    /* bytes in the file */
	uint64_t start_ns;
	uint64_t events;
	uint64_t shed[TRACE_CAUSES_MAX];
	struct buf blk;     /* the current block's records */
	struct buf rec;     /* the record being encoded */
	struct buf out;     /* block header + compressed bytes (no helpers) */
	struct packer pk;   /* ... and its codec and deflate stream */
	/* the helpers (nthreads 0: the caller compresses and writes); what
	 * follows is the helpers' and the caller's, under mu */
	int nthreads;
	pthread_t *threads;
	struct blk_slot *slots;
	int nslots;
	int next_fill;      /* the slot the caller fills next */
	int next_write;     /* the slot written next */
	int pending;        /* slots not free */
	bool writing;       /* a helper is writing a block out */
	bool stop;
	int async_err;      /* the helpers' first error */
	pthread_mutex_t mu;
	pthread_cond_t work;  /* a block filled, or stop */
	pthread_cond_t freed; /* a slot free again */
};

/* trace_blocks.c */

/* Compress and write the current block (w->blk): here, or by the helpers
 * (then it waits only for a free slot). */
int trace_blocks__put(struct trace_writer *w);
/* Wait until every block handed over is written: the helpers' error. */
int trace_blocks__wait(struct trace_writer *w);
/* Let the helpers write what they were given, then end them. */
void trace_blocks__stop(struct trace_writer *w);
void trace_blocks__packer_end(struct packer *pk);
/* The most compressed bytes raw bytes may take, in LZ4 or zlib. */
uint32_t trace_blocks__bound(bool lz4, uint32_t raw);
/* Decompress comp (clen bytes) into raw: true when it is exactly rlen
 * bytes made of exactly clen bytes. */
bool trace_blocks__unpack(bool lz4, const uint8_t *comp, uint32_t clen,
			  uint8_t *raw, uint32_t rlen);

#endif
