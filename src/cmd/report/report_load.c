// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop report, loading (report_internal.h): a trace's records into
 * struct report, through indexes keyed so that no file can flood them; the
 * file's own tables (META, REASONS, SYMBOLS, COUNTS) here, the per-socket
 * ones in report_rows.c; and how the load ended.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include "report_internal.h"

/* ---- loading ---------------------------------------------------------- */

char *rp_xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		abort(); /* out of memory in a batch tool: nothing to save */
	return d;
}

void *rp_xrealloc(void *p, size_t n, size_t size)
{
	void *q = realloc(p, (n ? n : 1) * size);

	if (!q)
		abort();
	return q;
}

static void *xmemdup(const void *p, size_t len)
{
	void *q = malloc(len ? len : 1);

	if (!q)
		abort();
	if (len) /* an empty record may carry no buffer: memcpy(NULL) is UB */
		memcpy(q, p, len);
	return q;
}

/* ---- keyed indexes ---- */

/*
 * Every table indexed by keys from the file (cookies, addresses, reason
 * values, netns inodes, names) goes through these: htab's hash is public
 * (FNV-1a), so a file built for it could put thousands of keys in one
 * bucket and make each lookup walk them all (hash flooding: quadratic
 * again). Each 8-byte word of a key first goes through a bijection keyed
 * by a secret drawn once per process: distinct keys stay distinct (no
 * collision to resolve), and where they land cannot be planned. No output
 * depends on where a key lands. Keys are whole 8-byte words (padding
 * zeroed by the caller), at most KX_WORDS of them.
 */
#define KX_WORDS 8
static uint64_t kx_secret[2 * KX_WORDS + 1];

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void kx_seed(void)
{
	static bool seeded;
	uint64_t x;

	if (seeded)
		return;
	seeded = true;
	if (getrandom(kx_secret, sizeof(kx_secret), GRND_NONBLOCK) == (ssize_t)sizeof(kx_secret))
		return;
	/* no entropy yet (early boot): still not known to the file's author */
	x = now_ns() ^ (uint64_t)(uintptr_t)&x ^ (uint64_t)getpid() << 40;
	for (size_t i = 0; i < ARRAY_SIZE(kx_secret); i++)
		kx_secret[i] = splitmix64(&x);
}

static void kx_key(const struct htab *h, const void *key, uint64_t *out)
{
	for (size_t i = 0; i < h->key_size / 8; i++) {
		uint64_t x;

		memcpy(&x, (const char *)key + 8 * i, 8);
		/* xor, then murmur3's finalizer: each step is invertible */
		x ^= kx_secret[2 * i];
		x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
		x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ull;
		out[i] = (x ^ (x >> 33)) + kx_secret[2 * i + 1];
	}
}

void rp_xhtab_init(struct htab *h, size_t key_size, size_t val_size)
{
	kx_seed();
	if (key_size % 8 || key_size > 8 * KX_WORDS || htab__init(h, key_size, val_size))
		abort();
}

void *rp_xupsert(struct htab *h, const void *key, int *created)
{
	uint64_t k[KX_WORDS];
	void *v;

	kx_key(h, key, k);
	v = htab__upsert(h, k, created);
	if (!v)
		abort();
	return v;
}

void *rp_xfind(const struct htab *h, const void *key)
{
	uint64_t k[KX_WORDS];

	if (!h->cap) /* never initialized: nothing in it */
		return NULL;
	kx_key(h, key, k);
	return htab__find(h, k);
}

/*
 * A socket identity as the windows table keys it: through a keyed
 * bijection, as every table of a report is (a file's author cannot pick
 * ids that collide).
 */
uint64_t rp_kx_id(uint64_t id)
{
	kx_seed();
	id ^= kx_secret[0];
	id = (id ^ (id >> 33)) * 0xff51afd7ed558ccdull;
	id = (id ^ (id >> 33)) * 0xc4ceb9fe1a85ec53ull;
	return (id ^ (id >> 33)) + kx_secret[1];
}

/* A name's hash, for its index key (struct name_key, report_internal.h). */
static uint64_t name_hash(const char *s)
{
	const uint64_t p = (1ull << 61) - 1;
	uint64_t r, h = 0;

	kx_seed();
	r = kx_secret[2 * KX_WORDS] % (p - 1) + 1;
	for (; *s; s++) {
		unsigned __int128 t = (unsigned __int128)h * r + (unsigned char)*s + 1;

		h = (uint64_t)(t & p) + (uint64_t)(t >> 61);
		h = (h & p) + (h >> 61);
	}
	return h;
}

/* Growth by doubling: amortized O(1) appends (n is the count before). */
void *rp_grow_arr(void *p, uint32_t n, size_t size)
{
	if (n & (n - 1)) /* not a power of two (nor 0): room is left */
		return p;
	return rp_xrealloc(p, n ? (size_t)n * 2 : 1, size);
}

/* ---- the file's tables ---- */

/*
 * A table outgrew its limit (trace.h): the file is corrupt or was made to
 * hurt. Loading stops there, as at a damaged block: status corrupt (exit
 * 1), the report covering what came before, the reason said.
 */
static bool over_limit(struct report *rp, const struct trace_record *rec, uint32_t have,
		       uint32_t limit, const char *what)
{
	if (have < limit)
		return false;
	rp->hostile = true;
	rp->status = TRACE_CORRUPT;
	rp->error_offset = rec->block_offset;
	snprintf(rp->message, sizeof(rp->message),
		 "corrupt or hostile trace at offset %llu: more than %u %s in all (the most a trace may hold)",
		 (unsigned long long)rec->block_offset, limit, what);
	return true;
}

/* The index of META key, or -1; *nth: the chain position after it. */
int64_t rp_meta_find(const struct report *rp, const char *key, struct name_key *nk)
{
	const uint32_t *i;

	nk->hash = name_hash(key);
	nk->nth = 0;
	for (; (i = rp_xfind(&rp->meta_idx, nk)); nk->nth++)
		if (!strcmp(rp->meta[*i].key, key))
			return *i;
	return -1;
}

static bool set_meta(struct report *rp, const struct trace_record *rec, const char *key,
		     const char *value)
{
	struct name_key nk;
	int64_t i = rp_meta_find(rp, key, &nk);

	if (i >= 0) {
		free(rp->meta[i].value);
		rp->meta[i].value = rp_xstrdup(value);
		return true;
	}
	if (over_limit(rp, rec, rp->nmeta, TRACE_META_MAX, "META keys"))
		return false;
	if (!rp->meta_idx.cap)
		rp_xhtab_init(&rp->meta_idx, sizeof(struct name_key), sizeof(uint32_t));
	*(uint32_t *)rp_xupsert(&rp->meta_idx, &nk, NULL) = rp->nmeta;
	rp->meta = rp_grow_arr(rp->meta, rp->nmeta, sizeof(*rp->meta));
	rp->meta[rp->nmeta].key = rp_xstrdup(key);
	rp->meta[rp->nmeta].value = rp_xstrdup(value);
	rp->nmeta++;
	return true;
}

/*
 * The slot of a table entry by its u64 key: *created says it is new (its
 * index is then *n, and *n has grown by one). NULL past the limit.
 */
uint32_t *rp_table_slot(struct report *rp, const struct trace_record *rec, struct htab *idx,
			uint64_t key, uint32_t *n, uint32_t limit, const char *what,
			int *created)
{
	uint32_t *slot;

	if (!idx->cap)
		rp_xhtab_init(idx, sizeof(uint64_t), sizeof(uint32_t));
	if (!rp_xfind(idx, &key) && over_limit(rp, rec, *n, limit, what))
		return NULL;
	slot = rp_xupsert(idx, &key, created);
	if (*created)
		*slot = (*n)++;
	return slot;
}

static bool add_reasons(struct report *rp, const struct trace_record *rec)
{
	const struct trace_reasons *r = &rec->reasons;

	for (uint32_t i = 0; i < r->n; i++) {
		int created;
		uint32_t n = rp->nreasons, *j = rp_table_slot(rp, rec, &rp->reason_idx,
							       r->v[i].value,
							       &rp->nreasons, TRACE_REASONS_MAX,
							       "REASONS values", &created);

		if (!j)
			return false;
		if (created)
			rp->reasons = rp_grow_arr(rp->reasons, n, sizeof(*rp->reasons));
		else
			free((char *)rp->reasons[*j].name);
		rp->reasons[*j].value = r->v[i].value;
		rp->reasons[*j].name = rp_xstrdup(r->v[i].name);
	}
	return true;
}

static bool add_symbols(struct report *rp, const struct trace_record *rec)
{
	const struct trace_symbols *s = &rec->symbols;

	for (uint32_t i = 0; i < s->n; i++) {
		int created;
		uint32_t n = rp->nsymbols, *j = rp_table_slot(rp, rec, &rp->symbol_idx,
							       s->v[i].addr,
							       &rp->nsymbols, TRACE_SYMBOLS_MAX,
							       "SYMBOLS addresses", &created);

		if (!j)
			return false;
		if (created)
			rp->symbols = rp_grow_arr(rp->symbols, n, sizeof(*rp->symbols));
		else
			free((char *)rp->symbols[*j].name);
		rp->symbols[*j].addr = s->v[i].addr;
		rp->symbols[*j].name = rp_xstrdup(s->v[i].name);
	}
	return true;
}

static void set_counts(struct report_counts *c, const struct trace_counts *tc)
{
	free(c->v);
	c->have = true;
	c->time_ns = tc->time_ns;
	c->n = tc->n;
	c->v = xmemdup(tc->v, tc->n * sizeof(*tc->v));
}

/* A snapshot entry's index key: cookie 0 for the (reason, flags) sums. */
struct snap_key {
	uint64_t cookie;
	uint32_t reason, flags;
};

/* A COUNTS snapshot for the timeline: its entries summed per (reason, flags),
 * and per (socket, reason, flags); one hash lookup per entry. */
static void add_snap(struct report *rp, const struct trace_counts *tc)
{
	struct report_snap *sn;
	struct htab idx;

	if (!(rp->ncounts & (rp->ncounts - 1))) /* doubling: 0, 1, 2, 4, ... */
		rp->snaps = rp_xrealloc(rp->snaps, rp->ncounts ? 2 * rp->ncounts : 1,
					sizeof(*rp->snaps));
	sn = &rp->snaps[rp->ncounts];
	memset(sn, 0, sizeof(*sn));
	sn->time_ns = tc->time_ns;
	rp_xhtab_init(&idx, sizeof(struct snap_key), sizeof(uint32_t));
	for (uint32_t i = 0; i < tc->n; i++) {
		const struct trace_count *c = &tc->v[i];
		struct snap_key key = { 0, c->key.reason, c->key.flags };
		uint32_t j, *slot;
		int created;

		/* the sums are keyed with cookie 0, socket entries by their
		 * (non-zero) cookie: they never collide */
		slot = rp_xupsert(&idx, &key, &created);
		if (created) {
			j = sn->n;
			*slot = j;
			sn->v = rp_grow_arr(sn->v, sn->n, sizeof(*sn->v));
			memset(&sn->v[j], 0, sizeof(sn->v[j]));
			sn->v[j].reason = c->key.reason;
			sn->v[j].flags = c->key.flags;
			sn->n++;
		}
		j = *slot;
		sn->v[j].datagrams += c->val.datagrams; /* units too: flags tell (snap_causes) */
		sn->v[j].skbs += c->val.skbs;
		if (!c->key.cookie)
			continue;
		key.cookie = c->key.cookie;
		slot = rp_xupsert(&idx, &key, &created);
		if (created) {
			j = sn->nsk;
			*slot = j;
			sn->sk = rp_grow_arr(sn->sk, sn->nsk, sizeof(*sn->sk));
			memset(&sn->sk[j], 0, sizeof(sn->sk[j]));
			sn->sk[j].cookie = c->key.cookie;
			sn->sk[j].reason = c->key.reason;
			sn->sk[j].flags = c->key.flags;
			sn->nsk++;
		}
		sn->sk[*slot].datagrams += ud_drops(&c->key, &c->val);
	}
	htab__free(&idx);
}

/* ---- one record at a time, and how the file ended ------------------- */

/* One record into rp: false when a table outgrew its limit (loading stops). */
static bool take(struct report *rp, const struct trace_record *rec)
{
	rp->records++;
	switch (rec->type) {
	case TRACE_META:
		for (uint32_t i = 0; i < rec->meta.n; i++)
			if (!set_meta(rp, rec, rec->meta.v[i].key, rec->meta.v[i].value))
				return false;
		break;
	case TRACE_REASONS:
		return add_reasons(rp, rec);
	case TRACE_SYMBOLS:
		return add_symbols(rp, rec);
	case TRACE_COUNTS:
		if (!rp->first.have)
			set_counts(&rp->first, &rec->counts);
		set_counts(&rp->last, &rec->counts);
		add_snap(rp, &rec->counts);
		rp->ncounts++;
		break;
	case TRACE_SOCKETS:
		rp->have_sockets = true;
		rp->sockets_rx |= rec->sockets.have_rx;
		rp_merge_sockets(rp, &rec->sockets);
		rp_add_queues(rp, &rec->sockets);
		break;
	case TRACE_IFACES:
		return rp_add_ifaces(rp, rec);
	case TRACE_MIB:
		rp_add_mib(rp, &rec->mib);
		break;
	case TRACE_END:
		rp->have_end = true;
		rp->end_duration_ns = rec->end.duration_ns;
		rp->end_events = rec->end.events;
		break;
	case TRACE_EVENT:
		rp->events++;
		rp->event_datagrams += rec->event.datagrams;
		rp->event_caps += rec->event.caplen > 0;
		rp_add_event(rp, &rec->event);
		break;
	case TRACE_WINDOWS:
		return rp_add_windows(rp, &rec->windows);
	case TRACE_SHED:
		for (uint32_t i = 0; i < rec->shed.n; i++)
			if (rec->shed.v[i].cause < TRACE_CAUSES_MAX) {
				rp->shed[rec->shed.v[i].cause] += rec->shed.v[i].n;
				rp->shed_total += rec->shed.v[i].n;
			}
		break;
	default:
		break;
	}
	return true;
}

static int load(struct report *rp, const char *path, struct trace_reader *r)
{
	struct trace_record rec;
	const char *msg;

	while (trace_reader__next(r, &rec) > 0)
		if (!take(rp, &rec))
			break;
	if (rp->hostile) {
		/* the whole blocks before the one that broke the limit */
		rp->blocks = trace_reader__blocks(r) - 1;
	} else {
		rp->status = trace_reader__status(r);
		msg = trace_reader__message(r);
		snprintf(rp->message, sizeof(rp->message), "%s", msg ? msg : "");
		rp->blocks = trace_reader__blocks(r);
		rp->error_offset = trace_reader__error_offset(r);
	}
	trace_reader__close(r);
	return 0;
}

static void init(struct report *rp, const char *path)
{
	memset(rp, 0, sizeof(*rp));
	rp->path = rp_xstrdup(path);
	rp->status = TRACE_IO_ERROR;
}

int report__load(struct report *rp, const char *path)
{
	struct trace_reader *r;
	int err;

	init(rp, path);
	err = trace_reader__open(path, &r);
	if (err) {
		rp->open_err = err;
		snprintf(rp->message, sizeof(rp->message), "cannot open: %s", strerror(-err));
		return err;
	}
	rp->opened = true;
	return load(rp, path, r);
}

int report__load_mem(struct report *rp, const char *name, const void *buf,
		     size_t len)
{
	struct trace_reader *r;
	int err;

	init(rp, name);
	err = trace_reader__open_mem(buf, len, &r);
	if (err) {
		rp->open_err = err;
		snprintf(rp->message, sizeof(rp->message), "cannot open: %s", strerror(-err));
		return err;
	}
	rp->opened = true;
	return load(rp, name, r);
}

void report__free(struct report *rp)
{
	for (uint32_t i = 0; i < rp->nmeta; i++) {
		free(rp->meta[i].key);
		free(rp->meta[i].value);
	}
	free(rp->meta);
	for (uint32_t i = 0; i < rp->nreasons; i++)
		free((char *)rp->reasons[i].name);
	free(rp->reasons);
	for (uint32_t i = 0; i < rp->nsymbols; i++)
		free((char *)rp->symbols[i].name);
	free(rp->symbols);
	free(rp->first.v);
	free(rp->last.v);
	for (uint64_t i = 0; i < rp->ncounts; i++) {
		free(rp->snaps[i].v);
		free(rp->snaps[i].sk);
	}
	free(rp->snaps);
	free(rp->sockets);
	for (uint32_t i = 0; i < rp->nqueues; i++)
		free(rp->queues[i].rx);
	free(rp->queues);
	for (uint32_t i = 0; i < rp->nifaces; i++)
		free((char *)rp->ifaces[i].name);
	free(rp->ifaces);
	free(rp->mib_first);
	free(rp->mib_last);
	htab__free(&rp->queue_idx);
	htab__free(&rp->ev_burst);
	if (rp->have_windows)
		windows__free(&rp->win);
	htab__free(&rp->sock_idx);
	htab__free(&rp->inode_cookie);
	htab__free(&rp->meta_idx);
	htab__free(&rp->reason_idx);
	htab__free(&rp->symbol_idx);
	htab__free(&rp->iface_idx);
	htab__free(&rp->mib_idx);
	free(rp->path);
	memset(rp, 0, sizeof(*rp));
}

bool report__printable(const struct report *rp)
{
	if (!rp->opened)
		return false;
	/* a trace cut before its first whole block has nothing to report
	 * (an empty report would read as "no drops") */
	return rp->status == TRACE_COMPLETE ||
	       ((rp->status == TRACE_CUT || rp->status == TRACE_CORRUPT) && rp->records > 0);
}

int report__exit_code(const struct report *rp)
{
	return rp->opened && (rp->status == TRACE_COMPLETE ||
			      (rp->status == TRACE_CUT && rp->records > 0))
		       ? 0 : 1;
}

const char *report__status_name(const struct report *rp)
{
	if (!rp->opened)
		return "missing";
	switch (rp->status) {
	case TRACE_COMPLETE: return "complete";
	case TRACE_CUT: return "cut";
	case TRACE_CORRUPT: return "corrupt";
	case TRACE_NOT_TRACE: return "not_trace";
	case TRACE_NEWER: return "newer";
	default: return "io_error";
	}
}

const char *report__problem(const struct report *rp, char *buf, size_t len)
{
	if (rp->opened && rp->status == TRACE_COMPLETE)
		return NULL;
	if (!rp->opened)
		snprintf(buf, len, "%s: %s", rp->path, rp->message);
	else if (rp->status == TRACE_CUT && rp->records)
		snprintf(buf, len, "%s: %s; the report covers what is there", rp->path,
			 rp->message);
	else if (rp->status == TRACE_CUT)
		snprintf(buf, len, "%s: %s; no record in it: nothing to report", rp->path,
			 rp->message);
	else if (rp->status == TRACE_CORRUPT && rp->records)
		snprintf(buf, len, "%s: %s; the report covers the blocks before it",
			 rp->path, rp->message);
	else
		snprintf(buf, len, "%s: %s", rp->path, rp->message);
	str_printable(buf); /* the path may hold anything */
	return buf;
}
