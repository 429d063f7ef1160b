// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The trace file: writer, reader, and each record's encoder next to its
 * decoder. The format is described field by field in docs/trace-format.md;
 * keep the two in step.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "trace.h"
#include "trace_internal.h"
#include "util.h"

/* ---- byte buffers and the little-endian encoding ---- */

static void put_bytes(struct buf *b, const void *s, size_t n)
{
	if (!n) /* s may be NULL then (an empty raw record) */
		return;
	buf_reserve(b, n);
	if (b->oom)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void put_u8(struct buf *b, uint8_t v)
{
	put_bytes(b, &v, 1);
}

static void put_u16(struct buf *b, uint16_t v)
{
	uint8_t x[2] = { v, v >> 8 };

	put_bytes(b, x, 2);
}

static void put_u32(struct buf *b, uint32_t v)
{
	uint8_t x[4];

	le32(x, v);
	put_bytes(b, x, 4);
}

static void put_u64(struct buf *b, uint64_t v)
{
	put_u32(b, (uint32_t)v);
	put_u32(b, (uint32_t)(v >> 32));
}

/* u16 length and the bytes, no NUL; -E2BIG past 65535 bytes */
static int put_str(struct buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n > UINT16_MAX)
		return -E2BIG;
	put_u16(b, n);
	put_bytes(b, s, n);
	return 0;
}

static uint16_t get_le16(const uint8_t *x)
{
	return x[0] | (uint16_t)x[1] << 8;
}

static uint32_t get_le32(const uint8_t *x)
{
	return x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 |
	       (uint32_t)x[3] << 24;
}

/*
 * A decoding cursor over one record's payload. Reads past the end give
 * zeros and set `bad`: a decoder reads all its fields and checks once.
 */
struct cur {
	const uint8_t *p;
	size_t n;
	bool bad;
};

static const uint8_t *get_bytes(struct cur *c, size_t n)
{
	const uint8_t *p;

	if (c->bad || n > c->n) {
		c->bad = true;
		return NULL;
	}
	p = c->p;
	c->p += n;
	c->n -= n;
	return p;
}

static void get_into(struct cur *c, void *dst, size_t n)
{
	const uint8_t *p = get_bytes(c, n);

	if (p)
		memcpy(dst, p, n);
	else
		memset(dst, 0, n);
}

static uint8_t get_u8(struct cur *c)
{
	const uint8_t *p = get_bytes(c, 1);

	return p ? p[0] : 0;
}

static uint16_t get_u16(struct cur *c)
{
	const uint8_t *p = get_bytes(c, 2);

	return p ? get_le16(p) : 0;
}

static uint32_t get_u32(struct cur *c)
{
	const uint8_t *p = get_bytes(c, 4);

	return p ? get_le32(p) : 0;
}

static uint64_t get_u64(struct cur *c)
{
	uint64_t lo = get_u32(c);

	return lo | (uint64_t)get_u32(c) << 32;
}

/* ---- the reader's per-record arena ---- */

/*
 * Decoded lists and strings live in chunks freed (all but the newest,
 * which is reused) before the next record: one record's memory at a time.
 */
struct chunk {
	struct chunk *next;
	size_t cap, used;
	max_align_t data[];
};

#define CHUNK_MIN (64u * 1024)

/*
 * Arrays are aligned; strings (align 1) are packed, so a list of short
 * strings costs no more than about 4x its encoded length (docs/).
 */
static void *arena_alloc(struct chunk **head, size_t n, size_t align)
{
	struct chunk *c = *head;
	void *p;

	if (c)
		c->used = (c->used + align - 1) & ~(align - 1);
	if (!c || c->used > c->cap || c->cap - c->used < n) {
		size_t cap = n > CHUNK_MIN ? n : CHUNK_MIN;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->used = 0;
		c->next = *head;
		*head = c;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

static void arena_reset(struct chunk **head, bool keep_newest)
{
	struct chunk *c = *head, *next;

	if (keep_newest && c) {
		c->used = 0;
		next = c->next;
		c->next = NULL;
		c = next;
	} else {
		*head = NULL;
	}
	for (; c; c = next) {
		next = c->next;
		free(c);
	}
}

/*
 * A string: u16 length and bytes. An embedded NUL would silently cut
 * the name short, so it is corrupt (the writer takes C strings: never).
 */
static const char *get_str(struct cur *c, struct chunk **arena, int *err)
{
	uint16_t n = get_u16(c);
	const uint8_t *p = get_bytes(c, n);
	char *s;

	if (!p)
		return "";
	if (n == 0)
		return "";
	if (memchr(p, 0, n)) {
		c->bad = true;
		return "";
	}
	s = arena_alloc(arena, n + 1u, 1);
	if (!s) {
		*err = -ENOMEM;
		return "";
	}
	memcpy(s, p, n);
	s[n] = 0;
	return s;
}

/* ---- records: each encoder next to its decoder ---- */

/* Decoders get the payload and return 0, -EBADMSG or -ENOMEM. */
struct dec {
	struct cur c;
	struct chunk **arena;
	int err;
	char *why;    /* what is wrong, for the corrupt message (optional) */
	size_t why_len;
};

/*
 * A list's count and its array, refused (corrupt) when the payload left
 * cannot hold `count` entries of at least `min_enc` bytes: so the array
 * allocated is bounded by the record's length, whatever the count says.
 * Also refused over `max` entries (a table's limit, trace.h), said so in
 * d->why as `what`.
 */
static void *get_list(struct dec *d, uint32_t *count, size_t min_enc, size_t entry,
		      uint32_t max, const char *what)
{
	struct cur *c = &d->c;
	uint32_t n = get_u32(c);
	void *v;

	*count = 0;
	if (!c->bad && n > max) {
		if (d->why)
			snprintf(d->why, d->why_len,
				 "%s lists %u entries, more than the %u a trace may hold: corrupt or hostile",
				 what, n, max);
		c->bad = true;
	}
	if (c->bad || n > c->n / min_enc) {
		c->bad = true;
		return NULL;
	}
	if (!n)
		return NULL;
	v = arena_alloc(d->arena, (size_t)n * entry, 16);
	if (!v) {
		d->err = -ENOMEM;
		return NULL;
	}
	memset(v, 0, (size_t)n * entry);
	*count = n;
	return v;
}

static int dec_done(struct dec *d)
{
	/*
	 * Bytes after the known fields are allowed: a later minor version
	 * may append fields to a record, and this reader ignores them.
	 */
	if (d->err)
		return d->err;
	return d->c.bad ? -EBADMSG : 0;
}

/* META: u32 count, count x (str key, str value) */
static int enc_meta(struct buf *b, const struct trace_meta *m)
{
	int err = 0;

	put_u32(b, m->n);
	for (uint32_t i = 0; i < m->n; i++) {
		err = err ?: put_str(b, m->v[i].key);
		err = err ?: put_str(b, m->v[i].value);
	}
	return err;
}

static int dec_meta(struct dec *d, struct trace_meta *m)
{
	struct trace_kv *v = get_list(d, &m->n, 4, sizeof(*v), TRACE_META_MAX,
				      "a META record");

	for (uint32_t i = 0; i < m->n && !d->c.bad && !d->err; i++) {
		v[i].key = get_str(&d->c, d->arena, &d->err);
		v[i].value = get_str(&d->c, d->arena, &d->err);
	}
	m->v = v;
	return dec_done(d);
}

/* REASONS: u32 count, count x (u32 value, str name) */
static int enc_reasons(struct buf *b, const struct trace_reasons *r)
{
	int err = 0;

	put_u32(b, r->n);
	for (uint32_t i = 0; i < r->n; i++) {
		put_u32(b, r->v[i].value);
		err = err ?: put_str(b, r->v[i].name);
	}
	return err;
}

static int dec_reasons(struct dec *d, struct trace_reasons *r)
{
	struct trace_reason *v = get_list(d, &r->n, 6, sizeof(*v),
					  TRACE_REASONS_MAX, "a REASONS record");

	for (uint32_t i = 0; i < r->n && !d->c.bad && !d->err; i++) {
		v[i].value = get_u32(&d->c);
		v[i].name = get_str(&d->c, d->arena, &d->err);
	}
	r->v = v;
	return dec_done(d);
}

/* SYMBOLS: u32 count, count x (u64 addr, str name) */
static int enc_symbols(struct buf *b, const struct trace_symbols *s)
{
	int err = 0;

	put_u32(b, s->n);
	for (uint32_t i = 0; i < s->n; i++) {
		put_u64(b, s->v[i].addr);
		err = err ?: put_str(b, s->v[i].name);
	}
	return err;
}

static int dec_symbols(struct dec *d, struct trace_symbols *s)
{
	struct trace_symbol *v = get_list(d, &s->n, 10, sizeof(*v),
					  TRACE_SYMBOLS_MAX, "a SYMBOLS record");

	for (uint32_t i = 0; i < s->n && !d->c.bad && !d->err; i++) {
		v[i].addr = get_u64(&d->c);
		v[i].name = get_str(&d->c, d->arena, &d->err);
	}
	s->v = v;
	return dec_done(d);
}

/* IFACES: u32 count, count x (u32 ifindex, netns, mtu, txqueuelen, str name) */
static int enc_ifaces(struct buf *b, const struct trace_ifaces *f)
{
	int err = 0;

	put_u32(b, f->n);
	for (uint32_t i = 0; i < f->n; i++) {
		put_u32(b, f->v[i].ifindex);
		put_u32(b, f->v[i].netns);
		put_u32(b, f->v[i].mtu);
		put_u32(b, f->v[i].txqueuelen);
		err = err ?: put_str(b, f->v[i].name);
	}
	return err;
}

static int dec_ifaces(struct dec *d, struct trace_ifaces *f)
{
	struct trace_iface *v = get_list(d, &f->n, 18, sizeof(*v),
					 TRACE_IFACES_MAX, "an IFACES record");

	for (uint32_t i = 0; i < f->n && !d->c.bad && !d->err; i++) {
		v[i].ifindex = get_u32(&d->c);
		v[i].netns = get_u32(&d->c);
		v[i].mtu = get_u32(&d->c);
		v[i].txqueuelen = get_u32(&d->c);
		v[i].name = get_str(&d->c, d->arena, &d->err);
	}
	f->v = v;
	return dec_done(d);
}

/* EVENT: fixed fields, then u16 caplen and the captured bytes */
/* EVENT's payload without its captured bytes */
#define EVENT_ENC_LEN (8 + 4 + 4 + 8 + 2 + 4 + 8 + 4 + 1 + 1 + 16 + 16 + 2 + 2 + 4 + 2 + 4)

static uint8_t *le16_at(uint8_t *x, uint16_t v)
{
	x[0] = v;
	x[1] = v >> 8;
	return x + 2;
}

static uint8_t *le32_at(uint8_t *x, uint32_t v)
{
	le32(x, v);
	return x + 4;
}

static uint8_t *le64_at(uint8_t *x, uint64_t v)
{
	le32(x, (uint32_t)v);
	le32(x + 4, (uint32_t)(v >> 32));
	return x + 8;
}

/*
 * EVENT's payload at x (EVENT_ENC_LEN + caplen bytes): stored in place,
 * field after field, where a put_* per field would check the buffer's
 * room twenty times (an event per drop: the writer's hottest code).
 */
static void enc_event_at(uint8_t *x, const struct trace_event *e)
{
	x = le64_at(x, e->time_ns);
	x = le32_at(x, e->cpu);
	x = le32_at(x, e->netns);
	x = le64_at(x, e->cookie);
	x = le16_at(x, e->cause);
	x = le32_at(x, e->reason);
	x = le64_at(x, e->location);
	x = le32_at(x, e->flags);
	*x++ = e->family;
	*x++ = e->proto;
	memcpy(x, e->saddr, 16);
	memcpy(x + 16, e->daddr, 16);
	x += 32;
	x = le16_at(x, e->sport);
	x = le16_at(x, e->dport);
	x = le32_at(x, e->len);
	x = le16_at(x, e->caplen);
	memcpy(x, e->cap, e->caplen);
	x += e->caplen;
	le32(x, e->datagrams); /* 1.1 */
}

static int dec_event(struct dec *d, struct trace_event *e)
{
	struct cur *c = &d->c;

	e->time_ns = get_u64(c);
	e->cpu = get_u32(c);
	e->netns = get_u32(c);
	e->cookie = get_u64(c);
	e->cause = get_u16(c);
	e->reason = get_u32(c);
	e->location = get_u64(c);
	e->flags = get_u32(c);
	e->family = get_u8(c);
	e->proto = get_u8(c);
	get_into(c, e->saddr, 16);
	get_into(c, e->daddr, 16);
	e->sport = get_u16(c);
	e->dport = get_u16(c);
	e->len = get_u32(c);
	e->caplen = get_u16(c);
	memset(e->cap, 0, sizeof(e->cap));
	if (e->caplen > TRACE_CAP_MAX) {
		c->bad = true;
		e->caplen = 0;
	}
	get_into(c, e->cap, e->caplen);
	/* 1.1 appended it; an event of 1.0 stood for one datagram */
	e->datagrams = c->n >= 4 ? get_u32(c) : 1;
	return dec_done(d);
}

/* COUNTS: u64 time, u32 count, count x (ud_key fields, ud_val fields) */
#define COUNT_ENC_LEN (8 + 8 + 4 + 4 + 16 + 16 + 2 + 1 + 1 + 4 + 8 + 8 + 8)

static int enc_counts(struct buf *b, const struct trace_counts *c)
{
	put_u64(b, c->time_ns);
	put_u32(b, c->n);
	for (uint32_t i = 0; i < c->n; i++) {
		const struct ud_key *k = &c->v[i].key;
		const struct ud_val *v = &c->v[i].val;

		put_u64(b, k->cookie);
		put_u64(b, k->location);
		put_u32(b, k->netns);
		put_u32(b, k->reason);
		put_bytes(b, k->saddr, 16);
		put_bytes(b, k->daddr, 16);
		put_u16(b, k->dport);
		put_u8(b, k->family);
		put_u8(b, k->proto);
		put_u32(b, k->flags);
		put_u64(b, v->datagrams);
		put_u64(b, v->skbs);
		put_u64(b, v->bytes);
	}
	return 0;
}

static int dec_counts(struct dec *d, struct trace_counts *c)
{
	struct trace_count *v;

	c->time_ns = get_u64(&d->c);
	v = get_list(d, &c->n, COUNT_ENC_LEN, sizeof(*v), UINT32_MAX, NULL);
	for (uint32_t i = 0; i < c->n && !d->c.bad; i++) {
		struct ud_key *k = &v[i].key;
		struct ud_val *val = &v[i].val;

		k->cookie = get_u64(&d->c);
		k->location = get_u64(&d->c);
		k->netns = get_u32(&d->c);
		k->reason = get_u32(&d->c);
		get_into(&d->c, k->saddr, 16);
		get_into(&d->c, k->daddr, 16);
		k->dport = get_u16(&d->c);
		k->family = get_u8(&d->c);
		k->proto = get_u8(&d->c);
		k->flags = get_u32(&d->c);
		val->datagrams = get_u64(&d->c);
		val->skbs = get_u64(&d->c);
		val->bytes = get_u64(&d->c);
	}
	c->v = v;
	return dec_done(d);
}

/*
 * SOCKETS: u64 time, u32 count, count x (u64 cookie, u32 netns, u8 family,
 * u8 proto, laddr[16], u16 lport, raddr[16], u16 rport, u32 inode,
 * u32 pid, str comm, u32 rcvbuf, u32 queued)
 */
#define SOCKET_MIN_ENC (8 + 4 + 1 + 1 + 16 + 2 + 16 + 2 + 4 + 4 + 2 + 4 + 4)

static int enc_sockets(struct buf *b, const struct trace_sockets *s)
{
	put_u64(b, s->time_ns);
	put_u32(b, s->n);
	for (uint32_t i = 0; i < s->n; i++) {
		const struct trace_socket *k = &s->v[i];
		size_t n = strnlen(k->comm, sizeof(k->comm) - 1);

		put_u64(b, k->cookie);
		put_u32(b, k->netns);
		put_u8(b, k->family);
		put_u8(b, k->proto);
		put_bytes(b, k->laddr, 16);
		put_u16(b, k->lport);
		put_bytes(b, k->raddr, 16);
		put_u16(b, k->rport);
		put_u32(b, k->inode);
		put_u32(b, k->pid);
		put_u16(b, n); /* a str, at most 15 bytes */
		put_bytes(b, k->comm, n);
		put_u32(b, k->rcvbuf);
		put_u32(b, k->queued);
	}
	/* minor 2, appended: each entry's deliveries, in the entries' order
	 * (count 0: not known) */
	put_u32(b, s->have_rx ? s->n : 0);
	for (uint32_t i = 0; s->have_rx && i < s->n; i++)
		put_u64(b, s->v[i].delivered);
	return 0;
}

static int dec_sockets(struct dec *d, struct trace_sockets *s)
{
	struct cur *c = &d->c;
	struct trace_socket *v;

	s->time_ns = get_u64(c);
	v = get_list(d, &s->n, SOCKET_MIN_ENC, sizeof(*v), UINT32_MAX, NULL);
	for (uint32_t i = 0; i < s->n && !c->bad; i++) {
		struct trace_socket *k = &v[i];
		uint16_t n;

		k->cookie = get_u64(c);
		k->netns = get_u32(c);
		k->family = get_u8(c);
		k->proto = get_u8(c);
		get_into(c, k->laddr, 16);
		k->lport = get_u16(c);
		get_into(c, k->raddr, 16);
		k->rport = get_u16(c);
		k->inode = get_u32(c);
		k->pid = get_u32(c);
		n = get_u16(c);
		if (n > sizeof(k->comm) - 1) {
			c->bad = true;
			break;
		}
		get_into(c, k->comm, n);
		if (memchr(k->comm, 0, n))
			c->bad = true;
		k->rcvbuf = get_u32(c);
		k->queued = get_u32(c);
	}
	s->v = v;
	s->have_rx = false;
	/* minor 2's deliveries, when the record has them (a minor-1 file
	 * ends here): as many as the entries, or none */
	if (!c->bad && c->n >= 4) {
		uint32_t nrx = get_u32(c);

		if (nrx && nrx != s->n)
			c->bad = true;
		for (uint32_t i = 0; i < nrx && !c->bad; i++)
			v[i].delivered = get_u64(c);
		s->have_rx = nrx && !c->bad;
	}
	return dec_done(d);
}

/* MIB: u64 time, u32 netns, u32 count, count x (str name, u64 value) */
static int enc_mib(struct buf *b, const struct trace_mib *m)
{
	int err = 0;

	put_u64(b, m->time_ns);
	put_u32(b, m->netns);
	put_u32(b, m->n);
	for (uint32_t i = 0; i < m->n; i++) {
		err = err ?: put_str(b, m->v[i].name);
		put_u64(b, m->v[i].value);
	}
	return err;
}

static int dec_mib(struct dec *d, struct trace_mib *m)
{
	struct trace_mib_entry *v;

	m->time_ns = get_u64(&d->c);
	m->netns = get_u32(&d->c);
	v = get_list(d, &m->n, 10, sizeof(*v), UINT32_MAX, NULL);
	for (uint32_t i = 0; i < m->n && !d->c.bad && !d->err; i++) {
		v[i].name = get_str(&d->c, d->arena, &d->err);
		v[i].value = get_u64(&d->c);
	}
	m->v = v;
	return dec_done(d);
}

/* A per-cause list: u32 count, count x (u16 cause, u64 n) */
static void enc_causes(struct buf *b, uint32_t n,
		       const struct trace_cause_count *v)
{
	put_u32(b, n);
	for (uint32_t i = 0; i < n; i++) {
		put_u16(b, v[i].cause);
		put_u64(b, v[i].n);
	}
}

static const struct trace_cause_count *dec_causes(struct dec *d, uint32_t *n)
{
	struct trace_cause_count *v = get_list(d, n, 10, sizeof(*v),
					       UINT32_MAX, NULL);

	for (uint32_t i = 0; i < *n && !d->c.bad; i++) {
		v[i].cause = get_u16(&d->c);
		v[i].n = get_u64(&d->c);
	}
	return v;
}

/* SHED: u64 time, causes */
static int enc_shed(struct buf *b, const struct trace_shed *s)
{
	put_u64(b, s->time_ns);
	enc_causes(b, s->n, s->v);
	return 0;
}

static int dec_shed(struct dec *d, struct trace_shed *s)
{
	s->time_ns = get_u64(&d->c);
	s->v = dec_causes(d, &s->n);
	return dec_done(d);
}

/* WINDOWS: u64 time, u32 count, count x (u64 id, u16 cause, u32 win, u64 datagrams) */
#define WINDOW_ENC_LEN (8 + 2 + 4 + 8)

static int enc_windows(struct buf *b, const struct trace_windows *ws)
{
	put_u64(b, ws->time_ns);
	put_u32(b, ws->n);
	for (uint32_t i = 0; i < ws->n; i++) {
		put_u64(b, ws->v[i].id);
		put_u16(b, ws->v[i].cause);
		put_u32(b, ws->v[i].win);
		put_u64(b, ws->v[i].datagrams);
	}
	return 0;
}

static int dec_windows(struct dec *d, struct trace_windows *ws)
{
	struct trace_window *v;

	ws->time_ns = get_u64(&d->c);
	v = get_list(d, &ws->n, WINDOW_ENC_LEN, sizeof(*v), UINT32_MAX, NULL);
	for (uint32_t i = 0; i < ws->n && !d->c.bad; i++) {
		v[i].id = get_u64(&d->c);
		v[i].cause = get_u16(&d->c);
		v[i].win = get_u32(&d->c);
		v[i].datagrams = get_u64(&d->c);
	}
	ws->v = v;
	return dec_done(d);
}

/* END: u64 events, u64 duration, causes */
static int enc_end(struct buf *b, const struct trace_end *e)
{
	put_u64(b, e->events);
	put_u64(b, e->duration_ns);
	enc_causes(b, e->n, e->v);
	return 0;
}

static int dec_end(struct dec *d, struct trace_end *e)
{
	e->events = get_u64(&d->c);
	e->duration_ns = get_u64(&d->c);
	e->v = dec_causes(d, &e->n);
	return dec_done(d);
}

const char *trace_type__name(uint16_t type)
{
	static const char *const names[] = {
		[TRACE_META] = "META",       [TRACE_REASONS] = "REASONS",
		[TRACE_SYMBOLS] = "SYMBOLS", [TRACE_IFACES] = "IFACES",
		[TRACE_EVENT] = "EVENT",     [TRACE_COUNTS] = "COUNTS",
		[TRACE_SOCKETS] = "SOCKETS", [TRACE_MIB] = "MIB",
		[TRACE_SHED] = "SHED",       [TRACE_END] = "END",
		[TRACE_WINDOWS] = "WINDOWS",
	};

	return type < ARRAY_SIZE(names) ? names[type] : NULL;
}

/* ---- writer ---- */

int trace_writer__create(const char *path, bool force, enum trace_codec codec,
			 struct trace_writer **out, char *msg, size_t msglen)
{
	/* zlib blocks alone are format 1.3: older readers read it */
	uint16_t major = codec == TRACE_CODEC_ZLIB ? TRACE_VERSION_MAJOR_ZLIB
						   : TRACE_VERSION_MAJOR;
	struct trace_writer *w;
	uint8_t hdr[TRACE_HDR_LEN];
	int err;

	*out = NULL;
	if (!trace_codec_name(codec)) {
		snprintf(msg, msglen, "no such codec: %d", (int)codec);
		return -EINVAL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(msg, msglen, "out of memory");
		return -ENOMEM;
	}
	/* a new file is created 0600 (a trace names hosts, processes and
	 * addresses); an existing one given with -f keeps its mode and
	 * owner, a device or FIFO is written through, untouched */
	err = out_file__open(&w->of, path, force, msg, msglen);
	if (err) {
		free(w);
		return err;
	}
	w->pk.codec = codec;
	w->start_ns = now_ns();
	memcpy(hdr, TRACE_MAGIC, 8);
	hdr[8] = major & 0xff;
	hdr[9] = major >> 8;
	hdr[10] = TRACE_VERSION_MINOR & 0xff;
	hdr[11] = TRACE_VERSION_MINOR >> 8;
	le32(hdr + 12, 0); /* flags: none defined */
	le32(hdr + 16, crc32(0, hdr, 16));
	err = write_all(w->of.fd, hdr, sizeof(hdr), &w->offset);
	if (err) {
		/* a full disk at the start: no empty or header-only file left */
		snprintf(msg, msglen, "cannot write %s: %s", path, strerror(-err));
		out_file__discard(&w->of);
		free(w);
		return err;
	}
	*out = w;
	return 0;
}

int trace_writer__open(const char *path, bool force, struct trace_writer **out)
{
	char msg[64];

	return trace_writer__create(path, force, TRACE_CODEC_LZ4, out, msg, sizeof(msg));
}

void trace_writer__set_fsync(struct trace_writer *w, bool on)
{
	w->fsync = on;
}

bool trace_writer__to_stream(const struct trace_writer *w)
{
	return w->of.kind == OUT_FILE_STREAM;
}

uint64_t trace_writer__offset(struct trace_writer *w)
{
	uint64_t off;

	if (!w->nthreads)
		return w->offset;
	pthread_mutex_lock(&w->mu); /* a helper adds to it as it writes */
	off = w->offset;
	pthread_mutex_unlock(&w->mu);
	return off;
}

/*
 * Room for a record of len bytes at the end of the current block (*at),
 * the block written first where it would not fit: records never span
 * blocks, so each block decodes on its own. Then blk_filled.
 */
static int blk_room(struct trace_writer *w, size_t len, uint8_t **at)
{
	int err;

	if (w->blk.len + len > TRACE_BLOCK_MAX) {
		err = trace_blocks__put(w);
		if (err)
			return err;
	}
	buf_reserve(&w->blk, len);
	if (w->blk.oom) {
		w->blk.oom = false;
		return -ENOMEM;
	}
	*at = w->blk.p + w->blk.len;
	w->blk.len += len;
	return 0;
}

/* The record is in: a block at its target size goes out. */
static int blk_filled(struct trace_writer *w)
{
	return w->blk.len >= TRACE_BLOCK_TARGET ? trace_blocks__put(w) : 0;
}

/* Frame the encoded record in w->rec and add it to the block. */
static int append_rec(struct trace_writer *w, uint16_t type)
{
	size_t plen = w->rec.len - TRACE_REC_HDR_LEN;
	uint8_t *at;
	int err;

	if (w->rec.oom) {
		w->rec.oom = false;
		return -ENOMEM;
	}
	if (w->rec.len > TRACE_BLOCK_MAX)
		return -E2BIG;
	w->rec.p[0] = type;
	w->rec.p[1] = type >> 8;
	le32(w->rec.p + 2, plen);
	err = blk_room(w, w->rec.len, &at);
	if (err)
		return err;
	memcpy(at, w->rec.p, w->rec.len);
	return blk_filled(w);
}

/* Start a record: room for its header in w->rec. */
static int begin_rec(struct trace_writer *w)
{
	static const uint8_t zero[TRACE_REC_HDR_LEN];

	if (w->err)
		return w->err;
	w->rec.len = 0;
	w->rec.oom = false;
	put_bytes(&w->rec, zero, sizeof(zero));
	return 0;
}

#define WRITE_REC(fn, type, enc, T)                                            \
	int fn(struct trace_writer *w, const T *x)                             \
	{                                                                      \
		int err = begin_rec(w);                                        \
									       \
		err = err ?: enc(&w->rec, x);                                  \
		return err ?: append_rec(w, type);                             \
	}

WRITE_REC(trace_writer__meta, TRACE_META, enc_meta, struct trace_meta)
WRITE_REC(trace_writer__reasons, TRACE_REASONS, enc_reasons, struct trace_reasons)
WRITE_REC(trace_writer__symbols, TRACE_SYMBOLS, enc_symbols, struct trace_symbols)
WRITE_REC(trace_writer__ifaces, TRACE_IFACES, enc_ifaces, struct trace_ifaces)
WRITE_REC(trace_writer__counts, TRACE_COUNTS, enc_counts, struct trace_counts)
WRITE_REC(trace_writer__sockets, TRACE_SOCKETS, enc_sockets, struct trace_sockets)
WRITE_REC(trace_writer__mib, TRACE_MIB, enc_mib, struct trace_mib)
WRITE_REC(trace_writer__windows, TRACE_WINDOWS, enc_windows, struct trace_windows)

/* An EVENT goes straight into the block (framed as append_rec frames). */
int trace_writer__event(struct trace_writer *w, const struct trace_event *e)
{
	size_t plen = EVENT_ENC_LEN + e->caplen;
	uint8_t *p;
	int err;

	if (w->err)
		return w->err;
	if (e->caplen > TRACE_CAP_MAX)
		return -EINVAL;
	err = blk_room(w, TRACE_REC_HDR_LEN + plen, &p);
	if (err)
		return err;
	le16_at(p, TRACE_EVENT);
	le32(p + 2, (uint32_t)plen);
	enc_event_at(p + TRACE_REC_HDR_LEN, e);
	w->events++;
	return blk_filled(w);
}

int trace_writer__shed(struct trace_writer *w, const struct trace_shed *s)
{
	int err;

	for (uint32_t i = 0; i < s->n; i++)
		if (s->v[i].cause >= TRACE_CAUSES_MAX)
			return -EINVAL;
	err = begin_rec(w);
	err = err ?: enc_shed(&w->rec, s);
	err = err ?: append_rec(w, TRACE_SHED);
	if (!err)
		for (uint32_t i = 0; i < s->n; i++)
			w->shed[s->v[i].cause] += s->v[i].n;
	return err;
}

int trace_writer__raw(struct trace_writer *w, uint16_t type,
		      const void *payload, uint32_t len)
{
	int err = begin_rec(w);

	if (err)
		return err;
	put_bytes(&w->rec, payload, len);
	return append_rec(w, type);
}

static void writer_free(struct trace_writer *w)
{
	trace_blocks__packer_end(&w->pk);
	free(w->blk.p);
	free(w->rec.p);
	free(w->out.p);
	free(w);
}

void trace_writer__abandon(struct trace_writer *w)
{
	if (!w)
		return;
	trace_blocks__stop(w);
	out_file__close(&w->of);
	writer_free(w);
}

void trace_writer__discard(struct trace_writer *w)
{
	if (!w)
		return;
	trace_blocks__stop(w);
	out_file__discard(&w->of);
	writer_free(w);
}

int trace_writer__end(struct trace_writer *w)
{
	struct trace_cause_count v[TRACE_CAUSES_MAX];
	struct trace_end end = { .events = w->events, .v = v };
	int err;

	if (w->ended)
		return w->err;
	w->ended = true;
	for (int c = 0; c < TRACE_CAUSES_MAX; c++)
		if (w->shed[c])
			v[end.n++] = (struct trace_cause_count){ c, w->shed[c] };
	end.duration_ns = now_ns() - w->start_ns;
	err = begin_rec(w);
	err = err ?: enc_end(&w->rec, &end);
	err = err ?: append_rec(w, TRACE_END);
	/* END closes its block: the reader checks nothing follows it */
	err = err ?: trace_writer__flush(w);
	if (!err && w->fsync)
		err = out_file__sync(&w->of);
	if (err && !w->err)
		w->err = err;
	return err;
}

int trace_writer__close(struct trace_writer *w)
{
	int err, cerr;

	if (!w)
		return 0;
	err = trace_writer__end(w);
	trace_blocks__stop(w);
	cerr = out_file__close(&w->of);
	writer_free(w);
	return err ?: cerr;
}

/* ---- reader ---- */

struct trace_reader {
	int fd;                /* -1: reading from mem */
	const uint8_t *mem;
	size_t mem_len;
	enum trace_status status;
	int err;               /* the negative errno next() returns */
	bool started;          /* the file header was read */
	uint16_t major, minor;
	uint64_t off;          /* the next block's file offset */
	uint64_t blk_off;      /* the current block's */
	uint64_t blocks;
	uint64_t skipped;
	uint64_t err_off;
	uint8_t *raw;          /* the current block, decompressed */
	size_t raw_cap, raw_len, pos;
	uint8_t *comp;
	size_t comp_cap;
	struct chunk *arena;
	char msg[192];
};

static int reader_new(struct trace_reader **out)
{
	struct trace_reader *r = calloc(1, sizeof(*r));

	*out = r;
	if (!r)
		return -ENOMEM;
	r->fd = -1;
	r->status = TRACE_READING;
	return 0;
}

static int fail(struct trace_reader *r, enum trace_status st, int err,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" :
	       S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" :
	       S_ISSOCK(m) ? "a socket" : "not a regular file";
}

int trace_reader__open(const char *path, struct trace_reader **out)
{
	struct trace_reader *r;
	struct stat st;
	int err = reader_new(&r);

	*out = NULL;
	if (err)
		return err;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer (the
	 * reader reads at offsets, which a stream cannot give) */
	r->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (r->fd < 0 || fstat(r->fd, &st) < 0) {
		err = -errno;
		if (r->fd >= 0)
			close(r->fd);
		free(r);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(r->fd);
		r->fd = -1;
		fail(r, TRACE_NOT_TRACE, -EINVAL,
		     "not a udpdrop trace (%s: a trace is read from a regular file)",
		     file_kind(st.st_mode));
	}
	*out = r;
	return 0;
}

int trace_reader__open_mem(const void *buf, size_t len,
			   struct trace_reader **out)
{
	struct trace_reader *r;
	int err = reader_new(&r);

	*out = NULL;
	if (err)
		return err;
	r->mem = buf;
	r->mem_len = len;
	*out = r;
	return 0;
}

void trace_reader__close(struct trace_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	arena_reset(&r->arena, false);
	free(r->raw);
	free(r->comp);
	free(r);
}

/* Up to n bytes at off: how many there were (short only at the end). */
static ssize_t read_at(struct trace_reader *r, uint64_t off, void *dst,
		       size_t n)
{
	size_t got = 0;

	if (r->fd < 0) {
		if (off >= r->mem_len)
			return 0;
		if (n > r->mem_len - off)
			n = r->mem_len - off;
		memcpy(dst, r->mem + off, n);
		return n;
	}
	while (got < n) {
		ssize_t k = pread(r->fd, (char *)dst + got, n - got, off + got);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			break;
		got += k;
	}
	return got;
}

__attribute__((format(printf, 4, 5)))
static int fail(struct trace_reader *r, enum trace_status st, int err,
		const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->status = st;
	r->err = err;
	return err;
}

static int corrupt(struct trace_reader *r, uint64_t off, const char *what)
{
	/* blocks counts the one being read once it was loaded: its number
	 * (from 0) is one less when a record in it is at fault */
	uint64_t blk = r->blocks && r->raw_len && off == r->blk_off ? r->blocks - 1 : r->blocks;

	r->err_off = off;
	return fail(r, TRACE_CORRUPT, -EBADMSG,
		    "corrupt at offset %llu (block %llu): %s",
		    (unsigned long long)off, (unsigned long long)blk, what);
}

static int cut(struct trace_reader *r)
{
	r->status = TRACE_CUT;
	r->err = 0;
	snprintf(r->msg, sizeof(r->msg),
		 "cut short after %llu whole blocks (%llu bytes): no END record",
		 (unsigned long long)r->blocks, (unsigned long long)r->off);
	return 0;
}

static int io_error(struct trace_reader *r, int err)
{
	return fail(r, TRACE_IO_ERROR, err, "read error: %s", strerror(-err));
}

static int read_header(struct trace_reader *r)
{
	uint8_t h[TRACE_HDR_LEN];
	ssize_t n = read_at(r, 0, h, sizeof(h));

	if (n < 0)
		return io_error(r, n);
	if (n == 0)
		return fail(r, TRACE_NOT_TRACE, -EINVAL, "not a udpdrop trace (an empty file)");
	/* a prefix of the magic is a trace cut while its header was written */
	if (memcmp(h, TRACE_MAGIC, n < 8 ? n : 8))
		return fail(r, TRACE_NOT_TRACE, -EINVAL,
			    "not a udpdrop trace (no %s magic)", TRACE_MAGIC);
	if (n < TRACE_HDR_LEN) {
		r->status = TRACE_CUT;
		snprintf(r->msg, sizeof(r->msg),
			 "cut short in the file header (%zd bytes)", n);
		return 0;
	}
	if (get_le32(h + 16) != crc32(0, h, 16))
		return corrupt(r, 0, "file header checksum mismatch");
	r->major = get_le16(h + 8);
	r->minor = get_le16(h + 10);
	/* flags (h + 12): none defined yet; a minor version may add some
	 * that older readers can ignore, so they are not checked */
	if (r->major != TRACE_VERSION_MAJOR && r->major != TRACE_VERSION_MAJOR_ZLIB)
		return fail(r, TRACE_NEWER, -EPROTONOSUPPORT,
			    "trace format %u.%u: this udpdrop reads %u.x and %u.x",
			    r->major, r->minor, TRACE_VERSION_MAJOR_ZLIB,
			    TRACE_VERSION_MAJOR);
	r->off = TRACE_HDR_LEN;
	r->started = true;
	return 1;
}

/* Load, check and decompress the block at r->off: 1, 0 (end) or an error. */
static int read_block(struct trace_reader *r)
{
	uint8_t h[TRACE_BLK_HDR_LEN];
	uint32_t seq, raw, comp;
	ssize_t n = read_at(r, r->off, h, sizeof(h));
	bool lz4;

	if (n < 0)
		return io_error(r, n);
	if (n < TRACE_BLK_HDR_LEN)
		return cut(r);
	/* LZ4 blocks came with format 2: a 1.x file has zlib's alone */
	lz4 = r->major != TRACE_VERSION_MAJOR_ZLIB && !memcmp(h, TRACE_BLK_MAGIC_LZ4, 4);
	if (!lz4 && memcmp(h, TRACE_BLK_MAGIC, 4))
		return corrupt(r, r->off, "no block magic");
	if (get_le32(h + 20) != crc32(0, h, 20))
		return corrupt(r, r->off, "block header checksum mismatch");
	seq = get_le32(h + 4);
	raw = get_le32(h + 8);
	comp = get_le32(h + 12);
	if (seq != r->blocks)
		return corrupt(r, r->off, "block out of sequence");
	if (raw == 0 || raw > TRACE_BLOCK_MAX || comp == 0 ||
	    comp > trace_blocks__bound(lz4, TRACE_BLOCK_MAX))
		return corrupt(r, r->off, "block length out of range");
	if (comp > r->comp_cap) {
		uint8_t *p = realloc(r->comp, comp);

		if (!p)
			return fail(r, TRACE_IO_ERROR, -ENOMEM, "out of memory");
		r->comp = p;
		r->comp_cap = comp;
	}
	n = read_at(r, r->off + TRACE_BLK_HDR_LEN, r->comp, comp);
	if (n < 0)
		return io_error(r, n);
	if ((size_t)n < comp)
		return cut(r);
	if (get_le32(h + 16) != crc32(0, r->comp, comp))
		return corrupt(r, r->off, "block checksum mismatch");
	if (raw > r->raw_cap) {
		uint8_t *p = realloc(r->raw, raw);

		if (!p)
			return fail(r, TRACE_IO_ERROR, -ENOMEM, "out of memory");
		r->raw = p;
		r->raw_cap = raw;
	}
	/* exactly raw bytes out of exactly comp bytes in, or it is damaged */
	if (!trace_blocks__unpack(lz4, r->comp, comp, r->raw, raw))
		return corrupt(r, r->off, lz4 ? "block does not decompress"
					      : "block does not inflate");
	r->blk_off = r->off;
	r->off += TRACE_BLK_HDR_LEN + (uint64_t)comp;
	r->raw_len = raw;
	r->pos = 0;
	r->blocks++;
	return 1;
}

static int decode(struct trace_reader *r, uint16_t type, const uint8_t *p,
		  uint32_t len, struct trace_record *rec, char *why, size_t why_len)
{
	struct dec d = { .c = { p, len, false }, .arena = &r->arena,
			 .why = why, .why_len = why_len };

	switch (type) {
	case TRACE_META: return dec_meta(&d, &rec->meta);
	case TRACE_REASONS: return dec_reasons(&d, &rec->reasons);
	case TRACE_SYMBOLS: return dec_symbols(&d, &rec->symbols);
	case TRACE_IFACES: return dec_ifaces(&d, &rec->ifaces);
	case TRACE_EVENT: return dec_event(&d, &rec->event);
	case TRACE_COUNTS: return dec_counts(&d, &rec->counts);
	case TRACE_SOCKETS: return dec_sockets(&d, &rec->sockets);
	case TRACE_MIB: return dec_mib(&d, &rec->mib);
	case TRACE_SHED: return dec_shed(&d, &rec->shed);
	case TRACE_END: return dec_end(&d, &rec->end);
	case TRACE_WINDOWS: return dec_windows(&d, &rec->windows);
	}
	return 1; /* unknown: skip */
}

int trace_reader__next(struct trace_reader *r, struct trace_record *rec)
{
	int err;

	if (r->status != TRACE_READING)
		return r->err;
	arena_reset(&r->arena, true);
	if (!r->started) {
		err = read_header(r);
		if (err <= 0)
			return err;
	}
	for (;;) {
		uint16_t type;
		uint32_t len;
		const uint8_t *p;
		char why[128] = "";

		if (r->pos == r->raw_len) {
			err = read_block(r);
			if (err <= 0)
				return err;
		}
		if (r->raw_len - r->pos < TRACE_REC_HDR_LEN)
			return corrupt(r, r->blk_off, "record header cut");
		p = r->raw + r->pos;
		type = get_le16(p);
		len = get_le32(p + 2);
		if (len > r->raw_len - r->pos - TRACE_REC_HDR_LEN)
			return corrupt(r, r->blk_off,
				       "record runs past its block");
		r->pos += TRACE_REC_HDR_LEN + (size_t)len;
		memset(rec, 0, sizeof(*rec));
		rec->type = type;
		rec->block_offset = r->blk_off;
		err = decode(r, type, p + TRACE_REC_HDR_LEN, len, rec, why, sizeof(why));
		if (err == 1) {
			r->skipped++;
			continue;
		}
		if (err == -ENOMEM)
			return fail(r, TRACE_IO_ERROR, err, "out of memory");
		if (err)
			return corrupt(r, r->blk_off, why[0] ? why : "malformed record");
		if (type == TRACE_END) {
			uint8_t b;
			ssize_t n;

			if (r->pos != r->raw_len)
				return corrupt(r, r->blk_off,
					       "records after END");
			n = read_at(r, r->off, &b, 1);
			if (n < 0)
				return io_error(r, n);
			if (n > 0)
				return corrupt(r, r->off, "data after END");
			r->status = TRACE_COMPLETE;
			r->err = 0;
			snprintf(r->msg, sizeof(r->msg),
				 "complete: %llu blocks",
				 (unsigned long long)r->blocks);
		}
		return 1;
	}
}

enum trace_status trace_reader__status(const struct trace_reader *r)
{
	return r->status;
}

const char *trace_reader__message(const struct trace_reader *r)
{
	return r->status == TRACE_READING ? "reading" : r->msg;
}

uint64_t trace_reader__blocks(const struct trace_reader *r)
{
	return r->blocks;
}

uint64_t trace_reader__error_offset(const struct trace_reader *r)
{
	return r->err_off;
}

uint64_t trace_reader__skipped(const struct trace_reader *r)
{
	return r->skipped;
}

void trace_reader__version(const struct trace_reader *r, uint16_t *major,
			   uint16_t *minor)
{
	*major = r->major;
	*minor = r->minor;
}
