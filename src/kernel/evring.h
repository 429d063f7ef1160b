/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reading a set of BPF ring buffers (the per-CPU event rings of `udpdrop
 * record`, or the one shared ring) record by record, in place: look at
 * the next record of any ring without taking it, so that a reader can
 * merge the rings by a field of their records (libbpf's ring_buffer only
 * hands every record of a ring to a callback, ring after ring).
 */
#ifndef UD_EVRING_H
#define UD_EVRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct evring {
	int fd;
	uint64_t *consumer;       /* the kernel's consumer position (ours to move) */
	const uint64_t *producer; /* ... and producer position */
	const uint8_t *data;      /* the ring, mapped twice in a row: a record
				     that wraps reads straight on */
	uint64_t mask;            /* ring bytes - 1 */
	uint64_t pos;             /* where we are (taken up to here) */
	uint64_t prod_seen;       /* the producer position last read */
	uint64_t released;        /* what the kernel was last told */
	size_t cons_len, prod_len; /* the two mappings */
};

struct evrings {
	struct evring *r;
	int n;
	int epfd; /* every ring's fd: readable when its producer wakes us */
};

enum evring_head {
	EVRING_EMPTY,  /* nothing past what was taken */
	EVRING_BUSY,   /* the next record is still being written */
	EVRING_RECORD, /* a record: *data, *size */
};

/* Map the rings given by their map fds (not taken: the caller closes them). */
int evrings__open(struct evrings *s, const int *fds, int n);
void evrings__close(struct evrings *s);
/*
 * The next record of ring i, left in place (a discarded one is skipped).
 * It stays valid until evrings__take(s, i).
 */
enum evring_head evrings__peek(struct evrings *s, int i, const void **data,
			       uint32_t *size);
/* Take the record evrings__peek just gave for ring i. */
void evrings__take(struct evrings *s, int i);
/* Give the kernel back the room of every record taken so far. */
void evrings__release(struct evrings *s);
/* Wait up to ms for a producer's wake-up: > 0 woken, 0 timeout, -errno. */
int evrings__wait(struct evrings *s, int ms);

#endif
