// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The trace's blocks: compressed (LZ4, or zlib at level 1) and written out
 * in order, by the writer itself or by helper threads
 * (trace_writer__set_threads) while it encodes the next records; and
 * decompressed for the reader. See trace_internal.h.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <lz4.h>
#include "trace_internal.h"

const char *trace_codec_name(enum trace_codec c)
{
	switch (c) {
	case TRACE_CODEC_LZ4: return "lz4";
	case TRACE_CODEC_ZLIB: return "zlib";
	}
	return NULL;
}

int trace_codec_parse(const char *name, enum trace_codec *c)
{
	if (!strcmp(name, "lz4"))
		*c = TRACE_CODEC_LZ4;
	else if (!strcmp(name, "zlib"))
		*c = TRACE_CODEC_ZLIB;
	else
		return -EINVAL;
	return 0;
}

uint32_t trace_blocks__bound(bool lz4, uint32_t raw)
{
	/* raw is at most TRACE_BLOCK_MAX, far below LZ4's input limit */
	return lz4 ? (uint32_t)LZ4_compressBound((int)raw) : (uint32_t)compressBound(raw);
}

bool trace_blocks__unpack(bool lz4, const uint8_t *comp, uint32_t clen,
			  uint8_t *raw, uint32_t rlen)
{
	uLongf dlen = rlen;
	uLong slen = clen;

	/* LZ4_decompress_safe never reads or writes past either buffer, and
	 * fails unless the input ends exactly at a sequence's end */
	if (lz4)
		return LZ4_decompress_safe((const char *)comp, (char *)raw, (int)clen,
					   (int)rlen) == (int)rlen;
	return uncompress2(raw, &dlen, comp, &slen) == Z_OK && dlen == rlen &&
	       slen == clen;
}

void trace_blocks__packer_end(struct packer *pk)
{
	if (pk->ready)
		deflateEnd(&pk->zs);
	pk->ready = false;
}

/* Deflate raw into dst (room for compressBound): its length, or 0. */
static uLong pack_zlib(struct packer *pk, const struct buf *raw, uint8_t *dst, uLong room)
{
	if (!pk->ready) {
		memset(&pk->zs, 0, sizeof(pk->zs));
		/* level 1: a record run must keep up with a drop storm; the
		 * bytes saved at higher levels are few on these repetitive
		 * records */
		if (deflateInit(&pk->zs, 1) != Z_OK)
			return 0;
		pk->ready = true;
	} else if (deflateReset(&pk->zs) != Z_OK) {
		trace_blocks__packer_end(pk);
		return 0;
	}
	pk->zs.next_in = raw->p;
	pk->zs.avail_in = (uInt)raw->len;
	pk->zs.next_out = dst;
	pk->zs.avail_out = (uInt)room;
	if (deflate(&pk->zs, Z_FINISH) != Z_STREAM_END) {
		trace_blocks__packer_end(pk); /* a stream left mid-block is no use */
		return 0;
	}
	return pk->zs.total_out;
}

/*
 * Compress the block in raw into out, behind its header (number seq): 0,
 * or -ENOMEM (out keeps no block).
 */
static int pack_block(struct packer *pk, const struct buf *raw, struct buf *out, uint32_t seq)
{
	bool lz4 = pk->codec == TRACE_CODEC_LZ4;
	uLong bound = trace_blocks__bound(lz4, raw->len);
	uLong clen;
	uint8_t *h;

	out->len = 0;
	buf_reserve(out, TRACE_BLK_HDR_LEN + bound);
	if (out->oom) {
		out->oom = false;
		return -ENOMEM;
	}
	if (lz4) {
		int n = LZ4_compress_default((const char *)raw->p,
					     (char *)out->p + TRACE_BLK_HDR_LEN,
					     (int)raw->len, (int)bound);

		clen = n > 0 ? (uLong)n : 0;
	} else {
		clen = pack_zlib(pk, raw, out->p + TRACE_BLK_HDR_LEN, bound);
	}
	if (!clen)
		return -ENOMEM; /* neither fails with room for its bound but for memory */
	h = out->p;
	memcpy(h, lz4 ? TRACE_BLK_MAGIC_LZ4 : TRACE_BLK_MAGIC, 4);
	le32(h + 4, seq);
	le32(h + 8, raw->len);
	le32(h + 12, clen);
	le32(h + 16, crc32(0, h + TRACE_BLK_HDR_LEN, clen));
	/* the header's own crc: a flipped length must read as corrupt, not
	 * as a block running past the end of the file (cut short) */
	le32(h + 20, crc32(0, h, 20));
	out->len = TRACE_BLK_HDR_LEN + clen;
	return 0;
}

/* Write a packed block to the file (and sync it with fsync on), adding
 * the bytes written to *done. */
static int emit_block(struct trace_writer *w, const struct buf *out, uint64_t *done)
{
	int err = write_all(w->of.fd, out->p, out->len, done);

	/* a device or FIFO has no storage to sync (and fails with EINVAL) */
	if (!err && w->fsync && w->of.kind != OUT_FILE_STREAM && fdatasync(w->of.fd) < 0)
		err = -errno;
	return err;
}

/*
 * A helper: pack the oldest filled block, then write out, in order, every
 * packed block whose turn it is (unless another helper is at it: it
 * finds this one's block when it looks again). After an error nothing
 * more is written (the file ends after its last whole block), but every
 * slot is still freed, so no caller waits forever.
 */
static void *blk_helper(void *arg)
{
	struct trace_writer *w = arg;
	struct packer pk = { .codec = w->pk.codec };

	pthread_mutex_lock(&w->mu);
	for (;;) {
		struct blk_slot *s = NULL;
		int err;

		for (int k = 0; k < w->nslots && !s; k++) {
			struct blk_slot *c = &w->slots[(w->next_write + k) % w->nslots];

			if (c->state == BLK_FILLED)
				s = c;
		}
		if (!s) {
			if (w->stop)
				break;
			pthread_cond_wait(&w->work, &w->mu);
			continue;
		}
		s->state = BLK_PACKING;
		pthread_mutex_unlock(&w->mu);
		err = pack_block(&pk, &s->raw, &s->out, s->seq);
		pthread_mutex_lock(&w->mu);
		s->state = BLK_PACKED;
		if (err && !w->async_err)
			w->async_err = err;
		while (!w->writing && w->slots[w->next_write].state == BLK_PACKED) {
			struct blk_slot *o = &w->slots[w->next_write];
			uint64_t done = 0;

			err = w->async_err;
			w->writing = true;
			pthread_mutex_unlock(&w->mu);
			if (!err)
				err = emit_block(w, &o->out, &done);
			pthread_mutex_lock(&w->mu);
			w->offset += done;
			if (err && !w->async_err)
				w->async_err = err;
			o->raw.len = 0;
			o->state = BLK_FREE;
			w->pending--;
			w->next_write = (w->next_write + 1) % w->nslots;
			w->writing = false;
			pthread_cond_broadcast(&w->freed);
		}
	}
	pthread_mutex_unlock(&w->mu);
	trace_blocks__packer_end(&pk);
	return NULL;
}

/* Hand the current block to the helpers (waiting for a free slot). */
static int submit_block(struct trace_writer *w)
{
	struct blk_slot *s;
	struct buf empty;
	int err;

	pthread_mutex_lock(&w->mu);
	s = &w->slots[w->next_fill];
	while (s->state != BLK_FREE)
		pthread_cond_wait(&w->freed, &w->mu);
	err = w->async_err;
	if (!err) {
		/* the slot's emptied buffer becomes the next block's */
		empty = s->raw;
		s->raw = w->blk;
		w->blk = empty;
		w->blk.len = 0;
		s->seq = w->seq++;
		s->state = BLK_FILLED;
		w->pending++;
		w->next_fill = (w->next_fill + 1) % w->nslots;
		pthread_cond_signal(&w->work);
	}
	pthread_mutex_unlock(&w->mu);
	if (err)
		w->err = err;
	return err;
}

int trace_blocks__wait(struct trace_writer *w)
{
	int err;

	pthread_mutex_lock(&w->mu);
	while (w->pending)
		pthread_cond_wait(&w->freed, &w->mu);
	err = w->async_err;
	pthread_mutex_unlock(&w->mu);
	if (err && !w->err)
		w->err = err;
	return err;
}

int trace_blocks__put(struct trace_writer *w)
{
	int err;

	if (w->err)
		return w->err;
	if (!w->blk.len)
		return 0;
	if (w->nthreads)
		return submit_block(w);
	err = pack_block(&w->pk, &w->blk, &w->out, w->seq);
	if (err)
		return err; /* the block stays: a later flush may work */
	err = emit_block(w, &w->out, &w->offset);
	if (err) {
		w->err = err;
		return err;
	}
	w->seq++;
	w->blk.len = 0;
	return 0;
}

int trace_writer__flush(struct trace_writer *w)
{
	int err = trace_blocks__put(w);

	if (!err && w->nthreads)
		err = trace_blocks__wait(w);
	return err;
}

int trace_writer__set_threads(struct trace_writer *w, int n)
{
	sigset_t all, old;
	int err = 0;

	if (w->nthreads || n <= 0)
		return w->nthreads;
	w->slots = calloc((size_t)n + 2, sizeof(*w->slots));
	w->threads = calloc((size_t)n, sizeof(*w->threads));
	if (!w->slots || !w->threads) {
		err = -ENOMEM;
		goto fail;
	}
	/* a slot per helper and two more: the caller fills one while every
	 * helper packs and one packed block waits for its turn */
	w->nslots = n + 2;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->freed, NULL);
	/* the helpers take no signal: the caller's handlers stay its own */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 0; i < n; i++) {
		err = -pthread_create(&w->threads[i], NULL, blk_helper, w);
		if (err)
			break;
		w->nthreads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (w->nthreads)
		return w->nthreads; /* fewer helpers than asked still work */
	pthread_cond_destroy(&w->freed);
	pthread_cond_destroy(&w->work);
	pthread_mutex_destroy(&w->mu);
fail:
	free(w->slots);
	free(w->threads);
	w->slots = NULL;
	w->threads = NULL;
	w->nslots = 0;
	return err;
}

void trace_blocks__stop(struct trace_writer *w)
{
	if (!w->nthreads)
		return;
	trace_blocks__wait(w);
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->mu);
	for (int i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	for (int i = 0; i < w->nslots; i++) {
		free(w->slots[i].raw.p);
		free(w->slots[i].out.p);
	}
	free(w->slots);
	free(w->threads);
	pthread_cond_destroy(&w->freed);
	pthread_cond_destroy(&w->work);
	pthread_mutex_destroy(&w->mu);
	w->nthreads = 0;
}

