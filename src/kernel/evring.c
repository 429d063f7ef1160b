// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * BPF ring buffers read in place (evring.h). The layout is the kernel's
 * ABI (kernel/bpf/ringbuf.c, as libbpf's ringbuf.c reads it): a page with
 * the consumer position, which the reader writes; then, read-only, a page
 * with the producer position and the data pages, mapped twice in a row.
 * Each record starts with an 8-byte header, { u32 len; u32 pg_off; }, its
 * len carrying BUSY while the producer writes it and DISCARD if it gave
 * it up; records are 8-aligned.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "evring.h"

/*
 * The consumer position is told to the kernel (a store into a cache line
 * every producer of the ring reads at each reservation) once this share
 * of the ring was taken, and before every wait: not per record.
 */
#define RELEASE_SHIFT 4 /* a sixteenth */

static uint32_t record_len(uint32_t hdr)
{
	uint32_t len = hdr & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);

	return (len + BPF_RINGBUF_HDR_SZ + 7) & ~7u;
}

static int map_ring(struct evring *r, int fd)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries ||
	    (info.max_entries & (info.max_entries - 1)))
		return -EINVAL;
	r->fd = fd;
	r->mask = info.max_entries - 1;
	r->cons_len = page;
	p = mmap(NULL, r->cons_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	r->consumer = p;
	r->prod_len = page + 2 * (size_t)info.max_entries;
	p = mmap(NULL, r->prod_len, PROT_READ, MAP_SHARED, fd, page);
	if (p == MAP_FAILED) {
		int err = -errno;

		munmap(r->consumer, r->cons_len);
		r->consumer = NULL;
		return err;
	}
	r->producer = p;
	r->data = (const uint8_t *)p + page;
	r->pos = r->released = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
	return 0;
}

int evrings__open(struct evrings *s, const int *fds, int n)
{
	int err = 0;

	memset(s, 0, sizeof(*s));
	s->epfd = -1;
	s->r = calloc(n > 0 ? n : 1, sizeof(*s->r));
	if (!s->r)
		return -ENOMEM;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		err = -errno;
		goto fail;
	}
	for (int i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };

		err = map_ring(&s->r[i], fds[i]);
		if (err)
			goto fail;
		s->n = i + 1;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fds[i], &ev)) {
			err = -errno;
			goto fail;
		}
	}
	return 0;
fail:
	evrings__close(s);
	return err;
}

void evrings__close(struct evrings *s)
{
	for (int i = 0; i < s->n; i++) {
		if (s->r[i].consumer)
			munmap(s->r[i].consumer, s->r[i].cons_len);
		if (s->r[i].producer)
			munmap((void *)s->r[i].producer, s->r[i].prod_len);
	}
	if (s->epfd >= 0)
		close(s->epfd);
	free(s->r);
	memset(s, 0, sizeof(*s));
	s->epfd = -1;
}

enum evring_head evrings__peek(struct evrings *s, int i, const void **data,
			       uint32_t *size)
{
	struct evring *r = &s->r[i];
	uint64_t prod = r->prod_seen;
	bool fresh = false;

	/* the producer's position is on a line its CPU writes at every
	 * reserve: read again only once what it last showed is taken (or
	 * skipped: discarded records do not make a ring empty) */
	for (;;) {
		if (r->pos >= prod) {
			if (fresh)
				return EVRING_EMPTY;
			prod = r->prod_seen = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
			fresh = true;
			continue;
		}
		const uint32_t *hdr = (const void *)(r->data + (r->pos & r->mask));
		/* pairs with the producer's xchg of the header at commit */
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);

		if (len & BPF_RINGBUF_BUSY_BIT)
			return EVRING_BUSY;
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			*data = (const uint8_t *)hdr + BPF_RINGBUF_HDR_SZ;
			*size = len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
			return EVRING_RECORD;
		}
		r->pos += record_len(len);
	}
}

void evrings__take(struct evrings *s, int i)
{
	struct evring *r = &s->r[i];
	uint32_t len = __atomic_load_n((const uint32_t *)(r->data + (r->pos & r->mask)),
				       __ATOMIC_ACQUIRE);

	r->pos += record_len(len);
	if (r->pos - r->released > (r->mask + 1) >> RELEASE_SHIFT) {
		__atomic_store_n(r->consumer, r->pos, __ATOMIC_RELEASE);
		r->released = r->pos;
	}
}

void evrings__release(struct evrings *s)
{
	for (int i = 0; i < s->n; i++) {
		struct evring *r = &s->r[i];

		if (r->pos != r->released) {
			__atomic_store_n(r->consumer, r->pos, __ATOMIC_RELEASE);
			r->released = r->pos;
		}
	}
}

int evrings__wait(struct evrings *s, int ms)
{
	struct epoll_event ev[16];
	int n;

	evrings__release(s);
	n = epoll_wait(s->epfd, ev, 16, ms);
	return n < 0 ? -errno : n;
}
