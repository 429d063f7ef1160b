// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop report's core (report_model.h): a trace read into memory, then
 * joined and printed. Causes come from the file's own REASONS table
 * through cause__classify(), never from this machine's BTF; netns are
 * printed as inodes, times as UTC from META: the output depends only on
 * the file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include <time.h>
#include "advice.h"
#include "causes.h"
#include "json.h"
#include "mib.h"
#include "reconcile.h"
#include "model.h"
#include "report_model.h"
#include "sockid.h"

/* ---- loading ---------------------------------------------------------- */

static char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		abort(); /* out of memory in a batch tool: nothing to save */
	return d;
}

static void *xrealloc(void *p, size_t n, size_t size)
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

static void xhtab_init(struct htab *h, size_t key_size, size_t val_size)
{
	kx_seed();
	if (key_size % 8 || key_size > 8 * KX_WORDS || htab__init(h, key_size, val_size))
		abort();
}

static void *xupsert(struct htab *h, const void *key, int *created)
{
	uint64_t k[KX_WORDS];
	void *v;

	kx_key(h, key, k);
	v = htab__upsert(h, k, created);
	if (!v)
		abort();
	return v;
}

static void *xfind(const struct htab *h, const void *key)
{
	uint64_t k[KX_WORDS];

	if (!h->cap) /* never initialized: nothing in it */
		return NULL;
	kx_key(h, key, k);
	return htab__find(h, k);
}

/*
 * A name's index key: its bytes hashed as a polynomial mod 2^61 - 1 at a
 * secret point (two names of up to L bytes collide with probability under
 * L / 2^61, whatever the file holds), and which of the names with that
 * hash it is: 0, then 1, ... (a chain that a file cannot make long).
 */
struct name_key {
	uint64_t hash, nth;
};

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
static void *grow_arr(void *p, uint32_t n, size_t size)
{
	if (n & (n - 1)) /* not a power of two (nor 0): room is left */
		return p;
	return xrealloc(p, n ? (size_t)n * 2 : 1, size);
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
static int64_t meta_find(const struct report *rp, const char *key, struct name_key *nk)
{
	const uint32_t *i;

	nk->hash = name_hash(key);
	nk->nth = 0;
	for (; (i = xfind(&rp->meta_idx, nk)); nk->nth++)
		if (!strcmp(rp->meta[*i].key, key))
			return *i;
	return -1;
}

static bool set_meta(struct report *rp, const struct trace_record *rec, const char *key,
		     const char *value)
{
	struct name_key nk;
	int64_t i = meta_find(rp, key, &nk);

	if (i >= 0) {
		free(rp->meta[i].value);
		rp->meta[i].value = xstrdup(value);
		return true;
	}
	if (over_limit(rp, rec, rp->nmeta, TRACE_META_MAX, "META keys"))
		return false;
	if (!rp->meta_idx.cap)
		xhtab_init(&rp->meta_idx, sizeof(struct name_key), sizeof(uint32_t));
	*(uint32_t *)xupsert(&rp->meta_idx, &nk, NULL) = rp->nmeta;
	rp->meta = grow_arr(rp->meta, rp->nmeta, sizeof(*rp->meta));
	rp->meta[rp->nmeta].key = xstrdup(key);
	rp->meta[rp->nmeta].value = xstrdup(value);
	rp->nmeta++;
	return true;
}

/*
 * The slot of a table entry by its u64 key: *created says it is new (its
 * index is then *n, and *n has grown by one). NULL past the limit.
 */
static uint32_t *table_slot(struct report *rp, const struct trace_record *rec, struct htab *idx,
			    uint64_t key, uint32_t *n, uint32_t limit, const char *what,
			    int *created)
{
	uint32_t *slot;

	if (!idx->cap)
		xhtab_init(idx, sizeof(uint64_t), sizeof(uint32_t));
	if (!xfind(idx, &key) && over_limit(rp, rec, *n, limit, what))
		return NULL;
	slot = xupsert(idx, &key, created);
	if (*created)
		*slot = (*n)++;
	return slot;
}

static bool add_reasons(struct report *rp, const struct trace_record *rec)
{
	const struct trace_reasons *r = &rec->reasons;

	for (uint32_t i = 0; i < r->n; i++) {
		int created;
		uint32_t n = rp->nreasons, *j = table_slot(rp, rec, &rp->reason_idx, r->v[i].value,
							    &rp->nreasons, TRACE_REASONS_MAX,
							    "REASONS values", &created);

		if (!j)
			return false;
		if (created)
			rp->reasons = grow_arr(rp->reasons, n, sizeof(*rp->reasons));
		else
			free((char *)rp->reasons[*j].name);
		rp->reasons[*j].value = r->v[i].value;
		rp->reasons[*j].name = xstrdup(r->v[i].name);
	}
	return true;
}

static bool add_symbols(struct report *rp, const struct trace_record *rec)
{
	const struct trace_symbols *s = &rec->symbols;

	for (uint32_t i = 0; i < s->n; i++) {
		int created;
		uint32_t n = rp->nsymbols, *j = table_slot(rp, rec, &rp->symbol_idx, s->v[i].addr,
							    &rp->nsymbols, TRACE_SYMBOLS_MAX,
							    "SYMBOLS addresses", &created);

		if (!j)
			return false;
		if (created)
			rp->symbols = grow_arr(rp->symbols, n, sizeof(*rp->symbols));
		else
			free((char *)rp->symbols[*j].name);
		rp->symbols[*j].addr = s->v[i].addr;
		rp->symbols[*j].name = xstrdup(s->v[i].name);
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
		rp->snaps = xrealloc(rp->snaps, rp->ncounts ? 2 * rp->ncounts : 1,
				     sizeof(*rp->snaps));
	sn = &rp->snaps[rp->ncounts];
	memset(sn, 0, sizeof(*sn));
	sn->time_ns = tc->time_ns;
	xhtab_init(&idx, sizeof(struct snap_key), sizeof(uint32_t));
	for (uint32_t i = 0; i < tc->n; i++) {
		const struct trace_count *c = &tc->v[i];
		struct snap_key key = { 0, c->key.reason, c->key.flags };
		uint32_t j, *slot;
		int created;

		/* the sums are keyed with cookie 0, socket entries by their
		 * (non-zero) cookie: they never collide */
		slot = xupsert(&idx, &key, &created);
		if (created) {
			j = sn->n;
			*slot = j;
			sn->v = grow_arr(sn->v, sn->n, sizeof(*sn->v));
			memset(&sn->v[j], 0, sizeof(sn->v[j]));
			sn->v[j].reason = c->key.reason;
			sn->v[j].flags = c->key.flags;
			sn->n++;
		}
		j = *slot;
		sn->v[j].datagrams += c->val.datagrams;
		sn->v[j].skbs += c->val.skbs;
		if (!c->key.cookie)
			continue;
		key.cookie = c->key.cookie;
		slot = xupsert(&idx, &key, &created);
		if (created) {
			j = sn->nsk;
			*slot = j;
			sn->sk = grow_arr(sn->sk, sn->nsk, sizeof(*sn->sk));
			memset(&sn->sk[j], 0, sizeof(sn->sk[j]));
			sn->sk[j].cookie = c->key.cookie;
			sn->sk[j].reason = c->key.reason;
			sn->sk[j].flags = c->key.flags;
			sn->nsk++;
		}
		sn->sk[*slot].datagrams += c->val.datagrams;
	}
	htab__free(&idx);
}

/* ---- one row per socket (sockid.h) ----------------------------------- */

/* A SOCKETS entry's identity: its cookie (record writes UD_RX_INODE |
 * inode there for a socket known only by its inode), else its inode. */
static uint64_t entry_id(const struct trace_socket *s)
{
	if (s->cookie)
		return s->cookie;
	return s->inode ? sockid__of(s->inode, true) : 0;
}

static uint64_t cookie_of_inode(const struct report *rp, uint32_t inode)
{
	uint64_t k = inode;
	const uint64_t *c = inode ? xfind(&rp->inode_cookie, &k) : NULL;

	return c ? *c : 0;
}

/* The row an identity counts on: sockid.h's rule over the file's SOCKETS. */
static uint64_t report_row(const struct report *rp, uint64_t id)
{
	return sockid__join(id, cookie_of_inode(rp, sockid__inode(id)));
}

static bool has_owner(const struct trace_socket *s)
{
	return s->pid || s->comm[0];
}

static const struct trace_socket *socket_of_row(const struct report *rp, uint64_t id)
{
	const uint32_t *i = xfind(&rp->sock_idx, &id);

	return i ? &rp->sockets[*i] : NULL;
}

/*
 * A SOCKETS record into rp->sockets, one entry per row: the newest look
 * at each socket, keeping the owner an earlier look found (under either
 * identity) where the newest has none: the socket closed, or its process
 * left, but the drops were that process's.
 */
static void merge_sockets(struct report *rp, const struct trace_sockets *ts)
{
	if (!rp->sock_idx.cap) {
		xhtab_init(&rp->sock_idx, sizeof(uint64_t), sizeof(uint32_t));
		xhtab_init(&rp->inode_cookie, sizeof(uint64_t), sizeof(uint64_t));
	}
	for (uint32_t i = 0; i < ts->n; i++) {
		const struct trace_socket *e = &ts->v[i];
		uint64_t ino = e->inode;

		if (sockid__joins(e->inode, e->cookie))
			*(uint64_t *)xupsert(&rp->inode_cookie, &ino, NULL) = e->cookie;
	}
	for (uint32_t i = 0; i < ts->n; i++) {
		const struct trace_socket *e = &ts->v[i];
		uint64_t id = report_row(rp, entry_id(e));
		struct trace_socket prev = { 0 }, *s;
		const struct trace_socket *by_inode;
		uint32_t *slot;
		int created;

		if (!id)
			continue;
		slot = xupsert(&rp->sock_idx, &id, &created);
		if (created) {
			*slot = rp->nsockets;
			rp->sockets = grow_arr(rp->sockets, rp->nsockets, sizeof(*rp->sockets));
			rp->nsockets++;
			/* known by its inode before a dump named its cookie */
			by_inode = e->inode && !(id & UD_RX_INODE)
				   ? socket_of_row(rp, sockid__of(e->inode, true)) : NULL;
			if (by_inode)
				prev = *by_inode;
		} else {
			prev = rp->sockets[*slot];
		}
		s = &rp->sockets[*slot];
		*s = *e;
		if (!(id & UD_RX_INODE))
			s->cookie = id; /* an inode's look joined to its cookie */
		if (!has_owner(s) && has_owner(&prev)) {
			s->pid = prev.pid;
			memcpy(s->comm, prev.comm, sizeof(s->comm));
		}
	}
}

/* Each socket's queue: how full at every SOCKETS snapshot that listed it. */
static void add_queues(struct report *rp, const struct trace_sockets *ts)
{
	for (uint32_t i = 0; i < ts->n; i++) {
		const struct trace_socket *k = &ts->v[i];
		struct report_queue *q;
		uint32_t j, *slot;
		int created;

		if (!rp->queue_idx.cap)
			xhtab_init(&rp->queue_idx, sizeof(uint64_t), sizeof(uint32_t));
		slot = xupsert(&rp->queue_idx, &k->cookie, &created);
		if (created) {
			j = rp->nqueues;
			*slot = j;
			rp->queues = grow_arr(rp->queues, rp->nqueues, sizeof(*rp->queues));
			memset(&rp->queues[j], 0, sizeof(rp->queues[j]));
			rp->queues[j].cookie = k->cookie;
			rp->queues[j].low = k->queued;
			rp->nqueues++;
		}
		q = &rp->queues[*slot];
		if (ts->have_rx && (!q->nrx || ts->time_ns > q->rx[q->nrx - 1].time_ns)) {
			q->rx = grow_arr(q->rx, q->nrx, sizeof(*q->rx));
			q->rx[q->nrx++] = (struct report_rx){ ts->time_ns, k->delivered };
		}
		q->looks++;
		if (k->queued < q->low)
			q->low = k->queued;
		if (k->queued > q->peak)
			q->peak = k->queued;
		q->last = k->queued;
	}
}

static bool add_ifaces(struct report *rp, const struct trace_record *rec)
{
	const struct trace_ifaces *ti = &rec->ifaces;

	for (uint32_t i = 0; i < ti->n; i++) {
		uint64_t key = (uint64_t)ti->v[i].netns << 32 | ti->v[i].ifindex;
		int created;
		uint32_t n = rp->nifaces, *j = table_slot(rp, rec, &rp->iface_idx, key,
							   &rp->nifaces, TRACE_IFACES_MAX,
							   "IFACES interfaces", &created);

		if (!j)
			return false;
		if (created)
			rp->ifaces = grow_arr(rp->ifaces, n, sizeof(*rp->ifaces));
		else
			free((char *)rp->ifaces[*j].name);
		rp->ifaces[*j] = ti->v[i];
		rp->ifaces[*j].name = xstrdup(ti->v[i].name);
	}
	return true;
}

/* The counters this build knows, by id: the others are never used. A
 * name listed twice counts once, the first time (as a lookup finds it). */
static void set_mib(struct report_mib *m, const struct trace_mib *tm)
{
	memset(m, 0, sizeof(*m));
	m->netns = tm->netns;
	m->time_ns = tm->time_ns;
	for (uint32_t i = 0; i < tm->n; i++)
		for (int id = 0; id < MIB_MAX; id++)
			if (!strcmp(tm->v[i].name, mib__name(id))) {
				if (!m->c.present[id]) {
					m->c.present[id] = 1;
					m->c.v[id] = tm->v[i].value;
				}
				break;
			}
}

static void add_mib(struct report *rp, const struct trace_mib *tm)
{
	uint64_t key = tm->netns;
	int created;
	uint32_t *i;

	if (!rp->mib_idx.cap)
		xhtab_init(&rp->mib_idx, sizeof(key), sizeof(uint32_t));
	i = xupsert(&rp->mib_idx, &key, &created);
	if (!created) {
		set_mib(&rp->mib_last[*i], tm);
		return;
	}
	*i = rp->nmibs;
	rp->mib_first = grow_arr(rp->mib_first, rp->nmibs, sizeof(*rp->mib_first));
	rp->mib_last = grow_arr(rp->mib_last, rp->nmibs, sizeof(*rp->mib_last));
	set_mib(&rp->mib_first[rp->nmibs], tm);
	set_mib(&rp->mib_last[rp->nmibs], tm);
	rp->nmibs++;
}

/*
 * The burst a socket's receive buffer must absorb, from per-drop EVENTs:
 * the most datagrams it dropped (per cause) in any BURST_WINDOW_NS. The
 * window is 100 ms: long enough to hold what arrives while a reader is
 * off its CPU (a scheduler delay, a page-fault or GC pause: milliseconds
 * to tens of them), short enough not to sum a steady overload into one
 * "burst" the way a snapshot interval (record -i, often seconds) does: a
 * buffer sized for it covers a stall, and a reader slower than its sender
 * for longer than that needs pacing, not memory (advice.c says so).
 *
 * Stream-friendly, in fixed memory per (socket, cause) whatever the event
 * rate: the datagrams are counted in BURST_SLOT_NS slots on a ring of
 * BURST_RING, and the windows are BURST_SLOTS consecutive slots: 100 ms
 * on a 10 ms grid, so the result lies between the most in any 90 ms and
 * the most in any 110 ms. EVENTs come in ring-buffer order: per CPU in
 * time order, across CPUs slightly out of order (an event's time is taken
 * before its ring space is). The ring keeps BURST_RING - BURST_SLOTS
 * slots (220 ms) behind the newest event for late ones; one later still
 * is counted in the oldest slot kept (never lost, placed late).
 */
#define BURST_SLOT_NS 10000000ull
#define BURST_SLOTS 10
#define BURST_WINDOW_NS (BURST_SLOT_NS * BURST_SLOTS)
#define BURST_RING 32
#define BURST_SLOT_MAX (UINT64_C(1) << 56) /* so ten add up without wrapping */

struct ev_key {
	uint64_t cookie;  /* 0: drops with no socket */
	uint32_t cause, by_inode;
};

struct ev_burst {
	bool started;
	uint64_t head;           /* the newest slot (time_ns / BURST_SLOT_NS) */
	uint64_t best;           /* the most datagrams in one window */
	uint64_t datagrams;      /* all of this key's EVENTs' datagrams */
	uint64_t n[BURST_RING];  /* slot x at n[x % BURST_RING], x in (head - RING, head] */
	/* the drop shape: aligned BURST_WINDOW_NS windows from the first
	 * drop's to the last's, and how many held drops (a late event in an
	 * earlier window than the newest is not counted again) */
	uint64_t first_win, last_win, wins_dropping;
};

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void ev_burst_add(struct ev_burst *b, uint64_t time_ns, uint64_t datagrams)
{
	const uint64_t keep = BURST_RING - BURST_SLOTS;
	uint64_t s = time_ns / BURST_SLOT_NS, w[2 * BURST_SLOTS - 1], sum = 0;

	b->datagrams = add_sat(b->datagrams, datagrams);
	if (!datagrams)
		return;
	if (!b->started) {
		b->started = true;
		b->head = s;
		b->first_win = b->last_win = time_ns / BURST_WINDOW_NS;
		b->wins_dropping = 1;
	} else if (time_ns / BURST_WINDOW_NS > b->last_win) {
		b->last_win = time_ns / BURST_WINDOW_NS;
		b->wins_dropping++;
	}
	if (s > b->head) {
		if (s - b->head >= BURST_RING)
			memset(b->n, 0, sizeof(b->n));
		else
			for (uint64_t x = b->head + 1; x <= s; x++)
				b->n[x % BURST_RING] = 0;
		b->head = s;
	} else if (b->head - s > keep) {
		s = b->head - keep;
	}
	b->n[s % BURST_RING] += datagrams;
	if (b->n[s % BURST_RING] > BURST_SLOT_MAX)
		b->n[s % BURST_RING] = BURST_SLOT_MAX;
	/* the windows holding slot s end at s .. s + BURST_SLOTS - 1: w holds
	 * slots s - (BURST_SLOTS - 1) .. s + BURST_SLOTS - 1 (0 before slot 0
	 * and after head); counts only grow, so their sums now can only be
	 * beaten by later events, which look again */
	for (uint64_t i = 0; i < ARRAY_SIZE(w); i++) {
		uint64_t x = s + i - (BURST_SLOTS - 1);

		w[i] = s + i >= BURST_SLOTS - 1 && x <= b->head ? b->n[x % BURST_RING] : 0;
	}
	for (int i = 0; i < (int)ARRAY_SIZE(w); i++) {
		sum += w[i];
		if (i >= BURST_SLOTS)
			sum -= w[i - BURST_SLOTS];
		if (i >= BURST_SLOTS - 1 && sum > b->best)
			b->best = sum;
	}
}

/*
 * One socket's events under two keys (by inode until a dump gave it a
 * cookie, by cookie after) as one: into takes b's slots in time order, so
 * a window across the change counts both sides where the rings still hold
 * them, and each side's best window stands.
 */
static void ev_burst_join(struct ev_burst *into, const struct ev_burst *b)
{
	const struct ev_burst *late = b;
	struct ev_burst early;
	uint64_t datagrams, best;

	if (!b->started)
		return;
	if (!into->started) {
		*into = *b;
		return;
	}
	datagrams = add_sat(into->datagrams, b->datagrams);
	best = into->best > b->best ? into->best : b->best;
	early = *into;
	if (b->head < into->head) {
		early = *b;
		late = into;
	}
	/* the later ring's slots, oldest first, replayed onto the earlier */
	for (uint64_t x = late->head >= BURST_RING - 1 ? late->head - (BURST_RING - 1) : 0;
	     x <= late->head; x++)
		if (late->n[x % BURST_RING])
			ev_burst_add(&early, x * BURST_SLOT_NS, late->n[x % BURST_RING]);
	*into = early;
	into->datagrams = datagrams;
	if (best > into->best)
		into->best = best;
}

static int rc_cause(const struct report *rp, uint32_t reason, uint32_t flags);

static void add_event(struct report *rp, const struct trace_event *e)
{
	/* the cause as the counts give it (the file's REASONS come first) */
	struct ev_key key = {
		.cookie = e->cookie,
		.cause = (uint32_t)rc_cause(rp, e->reason, e->flags),
		.by_inode = e->cookie && (e->flags & UD_KEY_INODE),
	};

	if (!rp->ev_burst.cap)
		xhtab_init(&rp->ev_burst, sizeof(key), sizeof(struct ev_burst));
	ev_burst_add(xupsert(&rp->ev_burst, &key, NULL), e->time_ns, e->datagrams);
}

/*
 * A socket identity as the windows table keys it: through a keyed
 * bijection, as every table of a report is (a file's author cannot pick
 * ids that collide).
 */
static uint64_t kx_id(uint64_t id)
{
	kx_seed();
	id ^= kx_secret[0];
	id = (id ^ (id >> 33)) * 0xff51afd7ed558ccdull;
	id = (id ^ (id >> 33)) * 0xc4ceb9fe1a85ec53ull;
	return (id ^ (id >> 33)) + kx_secret[1];
}

static int writer_cause(const struct report *rp, unsigned c);

/*
 * WINDOWS: each window is whole and written once, per socket and cause in
 * time order, so it folds now (memory stays one figure per socket and
 * cause). The identity stays as written (inode or cookie): advice joins a
 * socket's two (set_kernel_windows), as top's model does.
 */
static bool add_windows(struct report *rp, const struct trace_windows *ws)
{
	if (!rp->have_windows) {
		if (windows__init(&rp->win))
			abort();
		rp->have_windows = true;
	}
	for (uint32_t i = 0; i < ws->n; i++) {
		int c = ws->v[i].cause == WIN_DELIVERED ? WIN_DELIVERED
						      : writer_cause(rp, ws->v[i].cause);

		if (c < 0 || !ws->v[i].datagrams)
			continue;
		if (windows__add(&rp->win, kx_id(ws->v[i].id), c, ws->v[i].win, ws->v[i].datagrams))
			abort(); /* out of memory, as xupsert */
	}
	/* the record's whole: a window's deliveries meet its drops in one fold */
	if (windows__fold(&rp->win, UINT32_MAX))
		abort();
	return true;
}

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
		merge_sockets(rp, &rec->sockets);
		add_queues(rp, &rec->sockets);
		break;
	case TRACE_IFACES:
		return add_ifaces(rp, rec);
	case TRACE_MIB:
		add_mib(rp, &rec->mib);
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
		add_event(rp, &rec->event);
		break;
	case TRACE_WINDOWS:
		return add_windows(rp, &rec->windows);
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
	rp->path = xstrdup(path);
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

/* ---- joining ---------------------------------------------------------- */

struct agg_reason {
	uint32_t reason;
	int cause;
	uint64_t drops, skbs;
};

struct agg_loc {
	uint64_t addr;
	uint64_t drops, skbs;
};

struct agg_sock {
	uint64_t cookie;
	bool by_inode;
	uint32_t netns;        /* the counts' (the socket's if known) */
	uint64_t drops, skbs, bytes;
	uint64_t cause[CAUSE_MAX], cause_skbs[CAUSE_MAX], cause_bytes[CAUSE_MAX];
	/* the bytes and datagrams of whole datagrams only (no fragment, no
	 * frag_list member freed with its parent): their average size */
	uint64_t size_bytes[CAUSE_MAX], size_dgrams[CAUSE_MAX];
	struct agg_reason *reasons;
	int nreasons;
	struct agg_loc *locs;
	int nlocs;
	const struct trace_socket *sock;
};

struct agg_flow {
	int cause;
	bool overflow;  /* the drop table was full: only the reason is known */
	uint32_t netns;
	uint8_t family;
	uint8_t saddr[16], daddr[16];
	uint16_t dport;
	uint64_t drops, skbs;
};

struct agg_recon {
	uint32_t netns;
	int cause;
	char counters[160];    /* the names summed, "+"-joined */
	bool have_kernel;
	uint64_t kernel, udpdrop;
};

struct agg {
	struct agg_sock *socks;
	int nsocks;
	struct agg_flow *flows;
	int nflows;
	uint64_t drops, skbs;
	uint64_t cause[CAUSE_MAX], cause_skbs[CAUSE_MAX];
	struct agg_recon *recon;
	int nrecon;
};

static const char *reason_name(const struct report *rp, uint32_t reason)
{
	uint64_t key = reason;
	const uint32_t *i = xfind(&rp->reason_idx, &key);

	return i ? rp->reasons[*i].name : NULL;
}

static const char *symbol_name(const struct report *rp, uint64_t addr)
{
	const uint32_t *i = xfind(&rp->symbol_idx, &addr);

	return i ? rp->symbols[*i].name : NULL;
}

static int key_cause(const struct report *rp, const struct ud_key *k)
{
	const char *name = reason_name(rp, k->reason);

	return cause__classify(name ? name : "", k->flags);
}

static const char *meta_get(const struct report *rp, const char *key)
{
	struct name_key nk;
	int64_t i = meta_find(rp, key, &nk);

	return i >= 0 ? rp->meta[i].value : NULL;
}

/*
 * The name of the writer's cause number c: META causes lists them by
 * number, so a file from another version names its own; this build's
 * names when the file has no list.
 */
static void writer_cause_name(const struct report *rp, unsigned c, char *buf,
			      size_t len)
{
	const char *list = meta_get(rp, TRACE_META_CAUSES), *p = list;

	if (!list) {
		snprintf(buf, len, "%s", c < CAUSE_MAX ? cause__name(c) : "other");
		return;
	}
	for (unsigned i = 0; i < c && p; i++) {
		p = strchr(p, ',');
		if (p)
			p++;
	}
	if (!p || !*p || *p == ',') {
		snprintf(buf, len, "cause_%u", c);
		return;
	}
	snprintf(buf, len, "%.*s", (int)strcspn(p, ","), p);
}

/* The writer's cause number c as ours (-1: none of ours), looked up once. */
static int writer_cause(const struct report *rp, unsigned c)
{
	struct report *w = (struct report *)rp; /* a cache, not the file's state */
	char name[64];

	if (c >= TRACE_CAUSES_MAX)
		return -1;
	if (!w->wcause[c]) {
		writer_cause_name(rp, c, name, sizeof(name));
		w->wcause[c] = (int16_t)(cause__from_name(name) + 2);
	}
	return w->wcause[c] - 2;
}

/* "297 written, 0 shed" and the rest of the events line. */
static void fmt_events(const struct report *rp, struct strbuf *out)
{
	const char *m = meta_get(rp, "events"), *h = meta_get(rp, "headers");
	char name[64], n[32];
	bool first = true;

	if (m && strcmp(m, "recorded")) {
		sb_printf(out, "%s", m);
		return;
	}
	fmt_count(n, sizeof(n), rp->events);
	sb_printf(out, "%s written", n);
	if (h && strcmp(h, "0"))
		sb_printf(out, " (with the first %s B of each packet)", h);
	fmt_count(n, sizeof(n), rp->shed_total);
	sb_printf(out, ", %s shed", n);
	for (unsigned c = 0; c < TRACE_CAUSES_MAX; c++) {
		if (!rp->shed[c])
			continue;
		writer_cause_name(rp, c, name, sizeof(name));
		fmt_count(n, sizeof(n), rp->shed[c]);
		sb_printf(out, "%s%s %s", first ? " (" : ", ", name, n);
		first = false;
	}
	if (!first)
		sb_printf(out, "; the counts are exact)");
	/* -p / COMMAND: the kernel sheds before user space knows the owner */
	const char *pid = meta_get(rp, "pid"), *ns = meta_get(rp, "netns");

	if (rp->shed_total && pid && strcmp(pid, "0") && meta_get(rp, "shed_scope")) {
		sb_printf(out, "; the shed may include other processes' events");
		return;
	}
	/* -N: a closing queue has no netns in the kernel, which sheds first */
	for (unsigned c = 0; ns && strcmp(ns, "0") && c < TRACE_CAUSES_MAX; c++) {
		if (!rp->shed[c])
			continue;
		writer_cause_name(rp, c, name, sizeof(name));
		if (!strcmp(name, "socket_close"))
			sb_printf(out, "; the socket_close shed may include other namespaces' events");
	}
}

/* A socket's (reason, cause) and location rows in build(): by socket
 * index (before the sort) and the row's key, to the row's index. */
struct sock_reason_key {
	uint64_t sock;
	uint32_t reason;
	int32_t cause;
};

struct sock_loc_key {
	uint64_t sock, addr;
};

struct sock_rows {
	struct htab reasons, locs;
};

static void sock_add(struct sock_rows *rows, struct agg_sock *s, int sock,
		     const struct trace_count *tc, int cause)
{
	const struct ud_val *v = &tc->val;
	struct sock_reason_key rk = { (uint64_t)sock, tc->key.reason, cause };
	struct sock_loc_key lk = { (uint64_t)sock, tc->key.location };
	int created, *slot, i;

	s->drops += v->datagrams;
	s->skbs += v->skbs;
	s->bytes += v->bytes;
	s->cause[cause] += v->datagrams;
	s->cause_skbs[cause] += v->skbs;
	s->cause_bytes[cause] += v->bytes;
	/*
	 * bytes are skb->len summed over the skb events: a GSO/GRO skb of n
	 * datagrams carries all n (so per datagram, not per skb); a fragment
	 * carries a piece of one (datagrams 0, or 1 for the one that stands
	 * for it), and a frag_list member's bytes are already in its parent's
	 * len: both left out, or the average is not a datagram's size.
	 */
	if (v->datagrams && !(tc->key.flags & (UD_KEY_FRAG | UD_KEY_CHILD))) {
		s->size_bytes[cause] = add_sat(s->size_bytes[cause], v->bytes);
		s->size_dgrams[cause] = add_sat(s->size_dgrams[cause], v->datagrams);
	}
	slot = xupsert(&rows->reasons, &rk, &created);
	if (created) {
		i = *slot = s->nreasons;
		s->reasons = grow_arr(s->reasons, s->nreasons, sizeof(*s->reasons));
		memset(&s->reasons[i], 0, sizeof(s->reasons[i]));
		s->reasons[i].reason = tc->key.reason;
		s->reasons[i].cause = cause;
		s->nreasons++;
	}
	i = *slot;
	s->reasons[i].drops += v->datagrams;
	s->reasons[i].skbs += v->skbs;
	slot = xupsert(&rows->locs, &lk, &created);
	if (created) {
		i = *slot = s->nlocs;
		s->locs = grow_arr(s->locs, s->nlocs, sizeof(*s->locs));
		memset(&s->locs[i], 0, sizeof(s->locs[i]));
		s->locs[i].addr = tc->key.location;
		s->nlocs++;
	}
	i = *slot;
	s->locs[i].drops += v->datagrams;
	s->locs[i].skbs += v->skbs;
}

static int cmp_sock(const void *a, const void *b)
{
	const struct agg_sock *x = a, *y = b;

	if (x->drops != y->drops)
		return x->drops > y->drops ? -1 : 1;
	if (x->skbs != y->skbs)
		return x->skbs > y->skbs ? -1 : 1;
	return x->cookie < y->cookie ? -1 : x->cookie > y->cookie;
}

static int cmp_flow(const void *a, const void *b)
{
	const struct agg_flow *x = a, *y = b;
	int c;

	if (x->drops != y->drops)
		return x->drops > y->drops ? -1 : 1;
	if (x->skbs != y->skbs)
		return x->skbs > y->skbs ? -1 : 1;
	if (x->cause != y->cause)
		return x->cause - y->cause;
	if (x->netns != y->netns)
		return x->netns < y->netns ? -1 : 1;
	if ((c = memcmp(x->daddr, y->daddr, 16)))
		return c;
	if (x->dport != y->dport)
		return x->dport - y->dport;
	return memcmp(x->saddr, y->saddr, 16);
}

static int cmp_reason(const void *a, const void *b)
{
	const struct agg_reason *x = a, *y = b;

	if (x->drops != y->drops)
		return x->drops > y->drops ? -1 : 1;
	if (x->skbs != y->skbs)
		return x->skbs > y->skbs ? -1 : 1;
	if (x->reason != y->reason)
		return x->reason < y->reason ? -1 : 1;
	return x->cause - y->cause;
}

static int cmp_loc(const void *a, const void *b)
{
	const struct agg_loc *x = a, *y = b;

	if (x->skbs != y->skbs)
		return x->skbs > y->skbs ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* (netns, cause) -> datagrams in a COUNTS snapshot: one pass, then a
 * lookup per netns with counters and cause. */
struct ns_cause_key {
	uint32_t netns;
	int32_t cause;
};

static void counts_by_cause(const struct report *rp, const struct report_counts *c,
			    struct htab *h)
{
	xhtab_init(h, sizeof(struct ns_cause_key), sizeof(uint64_t));
	for (uint32_t i = 0; i < c->n; i++) {
		struct ns_cause_key k = { c->v[i].key.netns, key_cause(rp, &c->v[i].key) };
		uint64_t *n = xupsert(h, &k, NULL);

		*n += c->v[i].val.datagrams; /* wraps as the sum it replaces did */
	}
}

static uint64_t counts_cause(const struct htab *h, uint32_t netns, int cause)
{
	struct ns_cause_key k = { netns, cause };
	const uint64_t *n = xfind(h, &k);

	return n ? *n : 0;
}

static bool mib_value(const struct report_mib *m, enum mib_id id, uint64_t *v)
{
	*v = m->c.v[id];
	return m->c.present[id];
}

/* The first and last MIB of netns, or NULL. */
static const struct report_mib *mib_of(const struct report *rp, uint32_t netns,
				       const struct report_mib **last)
{
	uint64_t key = netns;
	const uint32_t *i = xfind(&rp->mib_idx, &key);

	if (!i)
		return NULL;
	*last = &rp->mib_last[*i];
	return &rp->mib_first[*i];
}

/* A flow with no socket in agg: the fields that tell flows apart. */
struct flow_key {
	uint8_t saddr[16], daddr[16];
	uint32_t netns;
	int32_t cause;
	uint16_t dport;
	uint8_t family, overflow;
	uint32_t pad;
};

static void build(const struct report *rp, struct agg *a)
{
	const struct report_counts *last = &rp->last;
	struct htab socks, flows, sums_first, sums_last;
	struct sock_rows rows;

	memset(a, 0, sizeof(*a));
	xhtab_init(&socks, sizeof(uint64_t), sizeof(int));
	xhtab_init(&flows, sizeof(struct flow_key), sizeof(int));
	xhtab_init(&rows.reasons, sizeof(struct sock_reason_key), sizeof(int));
	xhtab_init(&rows.locs, sizeof(struct sock_loc_key), sizeof(int));
	for (uint32_t i = 0; i < last->n; i++) {
		const struct trace_count *tc = &last->v[i];
		const struct ud_key *k = &tc->key;
		int cause = key_cause(rp, k);

		a->drops += tc->val.datagrams;
		a->skbs += tc->val.skbs;
		a->cause[cause] += tc->val.datagrams;
		a->cause_skbs[cause] += tc->val.skbs;
		if (k->cookie) {
			/* one row per socket, as top's: its inode's counts
			 * and its cookie's together once a dump named both */
			uint64_t id = report_row(rp, sockid__of(k->cookie, k->flags & UD_KEY_INODE));
			int j, created, *slot = xupsert(&socks, &id, &created);

			if (created) {
				j = *slot = a->nsocks;
				a->socks = grow_arr(a->socks, a->nsocks, sizeof(*a->socks));
				memset(&a->socks[j], 0, sizeof(a->socks[j]));
				a->socks[j].by_inode = sockid__inode(id) != 0;
				a->socks[j].cookie = a->socks[j].by_inode ? sockid__inode(id) : id;
				a->socks[j].netns = k->netns;
				a->socks[j].sock = socket_of_row(rp, id);
				if (a->socks[j].sock && a->socks[j].sock->netns)
					a->socks[j].netns = a->socks[j].sock->netns;
				a->nsocks++;
			}
			j = *slot;
			if (!a->socks[j].netns)
				a->socks[j].netns = k->netns;
			sock_add(&rows, &a->socks[j], j, tc, cause);
		} else {
			struct flow_key fk;
			int j, created, *slot;

			memset(&fk, 0, sizeof(fk));
			memcpy(fk.saddr, k->saddr, 16);
			memcpy(fk.daddr, k->daddr, 16);
			fk.netns = k->netns;
			fk.cause = cause;
			fk.dport = k->dport;
			fk.family = k->family;
			fk.overflow = !!(k->flags & UD_KEY_OVERFLOW);
			slot = xupsert(&flows, &fk, &created);
			if (created) {
				struct agg_flow *f;

				j = *slot = a->nflows;
				a->flows = grow_arr(a->flows, a->nflows, sizeof(*a->flows));
				f = &a->flows[j];
				memset(f, 0, sizeof(*f));
				f->cause = cause;
				f->overflow = k->flags & UD_KEY_OVERFLOW;
				f->netns = k->netns;
				f->family = k->family;
				f->dport = k->dport;
				memcpy(f->saddr, k->saddr, 16);
				memcpy(f->daddr, k->daddr, 16);
				a->nflows++;
			}
			j = *slot;
			a->flows[j].drops += tc->val.datagrams;
			a->flows[j].skbs += tc->val.skbs;
		}
	}
	htab__free(&socks);
	htab__free(&flows);
	htab__free(&rows.reasons);
	htab__free(&rows.locs);
	if (a->nsocks)
		qsort(a->socks, a->nsocks, sizeof(*a->socks), cmp_sock);
	if (a->nflows)
		qsort(a->flows, a->nflows, sizeof(*a->flows), cmp_flow);
	for (int j = 0; j < a->nsocks; j++) {
		if (a->socks[j].nreasons)
			qsort(a->socks[j].reasons, a->socks[j].nreasons,
			      sizeof(*a->socks[j].reasons), cmp_reason);
		if (a->socks[j].nlocs)
			qsort(a->socks[j].locs, a->socks[j].nlocs,
			      sizeof(*a->socks[j].locs), cmp_loc);
	}

	/* reconciliation: per netns with MIB records, per cause with counters */
	counts_by_cause(rp, &rp->last, &sums_last);
	counts_by_cause(rp, &rp->first, &sums_first);
	for (uint32_t i = 0; i < rp->nmibs; i++) {
		const struct report_mib *mf = &rp->mib_first[i], *ml = &rp->mib_last[i];

		for (int c = 0; c < CAUSE_MAX; c++) {
			enum mib_id ids[4];
			int n = cause__mibs(c, ids, ARRAY_SIZE(ids));
			struct agg_recon *r;
			size_t o = 0;

			if (n <= 0)
				continue;
			a->recon = grow_arr(a->recon, a->nrecon, sizeof(*a->recon));
			r = &a->recon[a->nrecon++];
			memset(r, 0, sizeof(*r));
			r->netns = mf->netns;
			r->cause = c;
			for (int k = 0; k < n; k++) {
				const char *name = mib__name(ids[k]);
				uint64_t v0, v1;

				if (!mib_value(mf, ids[k], &v0) || !mib_value(ml, ids[k], &v1))
					continue;
				r->have_kernel = true;
				/* a counter that went down adds nothing (as mib_delta) */
				r->kernel = add_sat(r->kernel, v1 > v0 ? v1 - v0 : 0);
				if (o < sizeof(r->counters))
					o += snprintf(r->counters + o, sizeof(r->counters) - o,
						      "%s%s", o ? "+" : "", name);
			}
			{
				uint64_t u1 = counts_cause(&sums_last, mf->netns, c);
				uint64_t u0 = rp->first.have ? counts_cause(&sums_first, mf->netns, c) : 0;

				r->udpdrop = u1 > u0 ? u1 - u0 : 0;
			}
		}
	}
	htab__free(&sums_first);
	htab__free(&sums_last);
}

static void agg_free(struct agg *a)
{
	for (int i = 0; i < a->nsocks; i++) {
		free(a->socks[i].reasons);
		free(a->socks[i].locs);
	}
	free(a->socks);
	free(a->flows);
	free(a->recon);
}

static int main_cause(const struct agg_sock *s)
{
	int best = CAUSE_OTHER;

	for (int c = 0; c < CAUSE_MAX; c++)
		if (s->cause[c] > s->cause[best] ||
		    (s->cause[c] == s->cause[best] && s->cause_skbs[c] > s->cause_skbs[best]))
			best = c;
	return best;
}

/* ---- timeline and --by ------------------------------------------------- */

static const char *const by_names[REPORT_BY_MAX] = {
	[REPORT_BY_SOCKET] = "socket",
	[REPORT_BY_CAUSE] = "cause",
	[REPORT_BY_REASON] = "reason",
	[REPORT_BY_LOCATION] = "location",
	[REPORT_BY_SECOND] = "second",
};

const char *report__by_name(enum report_by by)
{
	return (unsigned)by < REPORT_BY_MAX ? by_names[by] : NULL;
}

int report__by_parse(const char *s)
{
	for (int i = 0; i < REPORT_BY_MAX; i++)
		if (s && !strcmp(s, by_names[i]))
			return i;
	return -1;
}

/* One interval between snapshots (or several merged). */
struct tl_row {
	uint64_t start_ns, len_ns; /* start: from the first snapshot */
	uint64_t drops;
	uint64_t cause[CAUSE_MAX];
};

static void snap_causes(const struct report *rp, const struct report_snap *sn,
			uint64_t cause[CAUSE_MAX])
{
	memset(cause, 0, CAUSE_MAX * sizeof(*cause));
	for (uint32_t i = 0; i < sn->n; i++) {
		const char *name = reason_name(rp, sn->v[i].reason);

		cause[cause__classify(name ? name : "", sn->v[i].flags)] += sn->v[i].datagrams;
	}
}

/*
 * The intervals between consecutive COUNTS snapshots: each one's drops are
 * the later snapshot's minus the earlier's, per cause (never below 0: a
 * count that went down adds nothing). Returns how many (ncounts - 1).
 */
static int timeline(const struct report *rp, struct tl_row **rows)
{
	uint64_t prev[CAUSE_MAX], cur[CAUSE_MAX];
	int n = rp->ncounts >= 2 ? (int)(rp->ncounts - 1) : 0;
	uint64_t t0;

	*rows = NULL;
	if (!n)
		return 0;
	*rows = xrealloc(NULL, n, sizeof(**rows));
	t0 = rp->snaps[0].time_ns;
	snap_causes(rp, &rp->snaps[0], prev);
	for (int i = 0; i < n; i++) {
		uint64_t ta = rp->snaps[i].time_ns, tb = rp->snaps[i + 1].time_ns;
		struct tl_row *r = &(*rows)[i];

		memset(r, 0, sizeof(*r));
		r->start_ns = ta > t0 ? ta - t0 : 0;
		r->len_ns = tb > ta ? tb - ta : 0;
		snap_causes(rp, &rp->snaps[i + 1], cur);
		for (int c = 0; c < CAUSE_MAX; c++) {
			r->cause[c] = cur[c] > prev[c] ? cur[c] - prev[c] : 0;
			r->drops += r->cause[c];
		}
		memcpy(prev, cur, sizeof(prev));
	}
	return n;
}

/* n rows merged evenly into at most max (group g: rows g*n/max up to
 * (g+1)*n/max); *merged set to the result, returns its length. */
static int timeline_merge(const struct tl_row *rows, int n, int max, struct tl_row **merged)
{
	int m = n > max ? max : n;

	*merged = xrealloc(NULL, m, sizeof(**merged));
	if (n <= max) {
		if (n)
			memcpy(*merged, rows, n * sizeof(*rows));
		return n;
	}
	for (int g = 0; g < m; g++) {
		int lo = (int)((int64_t)g * n / m), hi = (int)((int64_t)(g + 1) * n / m);
		struct tl_row *r = &(*merged)[g];

		memset(r, 0, sizeof(*r));
		r->start_ns = rows[lo].start_ns;
		for (int i = lo; i < hi; i++) {
			r->len_ns += rows[i].len_ns;
			r->drops += rows[i].drops;
			for (int c = 0; c < CAUSE_MAX; c++)
				r->cause[c] += rows[i].cause[c];
		}
	}
	return m;
}

static double tl_rate(const struct tl_row *r)
{
	return r->len_ns ? r->drops * 1e9 / r->len_ns : 0;
}

/* The cause with the most drops in r (the lowest on a tie), -1 if none. */
static int tl_top_cause(const struct tl_row *r)
{
	int best = -1;

	for (int c = 0; c < CAUSE_MAX; c++)
		if (r->cause[c] && (best < 0 || r->cause[c] > r->cause[best]))
			best = c;
	return best;
}

/* Decimals for offsets and lengths: 1, or 3 when an interval is under 0.1 s. */
static int tl_decimals(const struct tl_row *rows, int n)
{
	for (int i = 0; i < n; i++)
		if (rows[i].len_ns < 100000000ull)
			return 3;
	return 1;
}

static void fmt_rate(char *buf, size_t len, double r)
{
	if (r <= 0)
		snprintf(buf, len, "0");
	else if (r >= 100)
		snprintf(buf, len, "%.0f", r);
	else
		snprintf(buf, len, "%.1f", r);
}

/* A contributor to a cause: a socket or a flow with no socket. */
struct contrib {
	bool flow;
	int idx;       /* in agg's socks or flows */
	uint64_t drops;
};

static int cmp_contrib(const void *a, const void *b)
{
	const struct contrib *x = a, *y = b;

	if (x->drops != y->drops)
		return x->drops > y->drops ? -1 : 1;
	if (x->flow != y->flow)
		return x->flow ? 1 : -1;
	return x->idx - y->idx;
}

#define BY_CAUSE_TOP 3

/* The (at most BY_CAUSE_TOP) sockets and flows with the most drops of cause c. */
static int cause_contribs(const struct agg *a, int c, struct contrib *top)
{
	struct contrib *all = xrealloc(NULL, a->nsocks + a->nflows, sizeof(*all));
	int n = 0;

	for (int i = 0; i < a->nsocks; i++)
		if (a->socks[i].cause[c])
			all[n++] = (struct contrib){ false, i, a->socks[i].cause[c] };
	for (int i = 0; i < a->nflows; i++)
		if (a->flows[i].cause == c && a->flows[i].drops)
			all[n++] = (struct contrib){ true, i, a->flows[i].drops };
	if (n)
		qsort(all, n, sizeof(*all), cmp_contrib);
	if (n > BY_CAUSE_TOP)
		n = BY_CAUSE_TOP;
	if (n)
		memcpy(top, all, n * sizeof(*all));
	free(all);
	return n;
}

static void fmt_local(char *buf, size_t len, const struct agg_sock *s);
static void fmt_flow(char *buf, size_t len, const struct agg_flow *f);

static void fmt_contrib(char *buf, size_t len, const struct agg *a, const struct contrib *k)
{
	if (k->flow)
		fmt_flow(buf, len, &a->flows[k->idx]);
	else
		fmt_local(buf, len, &a->socks[k->idx]);
}

/* The last snapshot's datagrams per (reason, cause), most first. */
static int by_reason(const struct report *rp, struct agg_reason **out)
{
	const struct report_counts *last = &rp->last;
	struct agg_reason *v = NULL;
	struct htab idx;
	int n = 0;

	xhtab_init(&idx, sizeof(struct sock_reason_key), sizeof(int));
	for (uint32_t i = 0; i < last->n; i++) {
		const struct trace_count *tc = &last->v[i];
		int cause = key_cause(rp, &tc->key), j, created;
		struct sock_reason_key k = { 0, tc->key.reason, cause };
		int *slot = xupsert(&idx, &k, &created);

		if (created) {
			j = *slot = n;
			v = grow_arr(v, n, sizeof(*v));
			memset(&v[j], 0, sizeof(v[j]));
			v[j].reason = tc->key.reason;
			v[j].cause = cause;
			n++;
		}
		j = *slot;
		v[j].drops += tc->val.datagrams;
		v[j].skbs += tc->val.skbs;
	}
	htab__free(&idx);
	if (n)
		qsort(v, n, sizeof(*v), cmp_reason);
	*out = v;
	return n;
}

static int cmp_loc_drops(const void *a, const void *b)
{
	const struct agg_loc *x = a, *y = b;

	if (x->drops != y->drops)
		return x->drops > y->drops ? -1 : 1;
	return cmp_loc(a, b);
}

/* The last snapshot's datagrams per drop location, most first. */
static int by_location(const struct report *rp, struct agg_loc **out)
{
	const struct report_counts *last = &rp->last;
	struct agg_loc *v = NULL;
	struct htab idx;
	int n = 0;

	xhtab_init(&idx, sizeof(uint64_t), sizeof(int));
	for (uint32_t i = 0; i < last->n; i++) {
		const struct trace_count *tc = &last->v[i];
		int j, created, *slot = xupsert(&idx, &tc->key.location, &created);

		if (created) {
			j = *slot = n;
			v = grow_arr(v, n, sizeof(*v));
			memset(&v[j], 0, sizeof(v[j]));
			v[j].addr = tc->key.location;
			n++;
		}
		j = *slot;
		v[j].drops += tc->val.datagrams;
		v[j].skbs += tc->val.skbs;
	}
	htab__free(&idx);
	if (n)
		qsort(v, n, sizeof(*v), cmp_loc_drops);
	*out = v;
	return n;
}

/* ---- shared formatting ------------------------------------------------ */

static double duration_s(const struct report *rp)
{
	/* the span the counts cover (what reconciles), else the writer's */
	if (rp->ncounts >= 2 && rp->last.time_ns >= rp->first.time_ns)
		return (rp->last.time_ns - rp->first.time_ns) / 1e9;
	if (rp->have_end)
		return rp->end_duration_ns / 1e9;
	return 0;
}

/* META start_time ("1763880000.123456789") as UTC text, without libc's
 * locale-dependent strtod. */
static void fmt_start(char *buf, size_t len, const char *v)
{
	unsigned long long s = 0;
	struct tm tm;
	time_t t;
	const char *p = v;

	if (!v || *v < '0' || *v > '9') {
		snprintf(buf, len, "unknown");
		return;
	}
	for (; *p >= '0' && *p <= '9'; p++)
		s = s * 10 + (*p - '0');
	t = (time_t)s;
	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, len, "%s", v);
}

static void fmt_local(char *buf, size_t len, const struct agg_sock *s)
{
	if (s->sock && (s->sock->family == AF_INET || s->sock->family == AF_INET6))
		fmt_endpoint(buf, len, s->sock->family, s->sock->laddr, s->sock->lport);
	else
		snprintf(buf, len, "%s %llu", s->by_inode ? "inode" : "cookie",
			 (unsigned long long)s->cookie);
}

/* The REMOTE column, as top's: the connected peer, "*" for none. */
static void fmt_remote(char *buf, size_t len, const struct agg_sock *s)
{
	if (!s->sock || (s->sock->family != AF_INET && s->sock->family != AF_INET6))
		snprintf(buf, len, "?");
	else if (s->sock->rport)
		fmt_endpoint(buf, len, s->sock->family, s->sock->raddr, s->sock->rport);
	else
		snprintf(buf, len, "*");
}

/*
 * The kernel device that owns a socket no process holds, as top named
 * it (META kernel_owner.COOKIE, written by record; NULL if none).
 */
static const char *kernel_owner(const struct report *rp, const struct agg_sock *s)
{
	char key[48];

	if (!s->sock || s->sock->pid)
		return NULL;
	snprintf(key, sizeof(key), "kernel_owner.%llu", (unsigned long long)s->sock->cookie);
	return meta_get(rp, key);
}

static void fmt_owner(const struct report *rp, char *buf, size_t len, const struct agg_sock *s)
{
	char comm[16];
	const char *kowner = kernel_owner(rp, s);

	if (!s->sock) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(comm, sizeof(comm), "%s", s->sock->comm);
	str_printable(comm);
	if (s->sock->pid) {
		snprintf(buf, len, "%u/%s", s->sock->pid, comm[0] ? comm : "?");
	} else if (kowner) {
		snprintf(buf, len, "%s", kowner);
		str_printable(buf); /* the file's text */
	} else {
		snprintf(buf, len, "%s", comm[0] ? comm : "?");
	}
}

static void fmt_flow(char *buf, size_t len, const struct agg_flow *f)
{
	char s[64], d[80];

	if (f->overflow) {
		snprintf(buf, len, "(drop table full: flow not kept)");
		return;
	}
	if (f->family != AF_INET && f->family != AF_INET6) {
		snprintf(buf, len, "? -> ?:%u", f->dport);
		return;
	}
	fmt_addr(s, sizeof(s), f->family, f->saddr);
	fmt_endpoint(d, sizeof(d), f->family, f->daddr, f->dport);
	snprintf(buf, len, "%s -> %s", s, d);
}

static void fmt_reason(char *buf, size_t len, const struct report *rp, uint32_t reason)
{
	const char *n = reason_name(rp, reason);

	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "reason %u", reason);
	str_printable(buf); /* the file's name for it */
}

static void fmt_loc(char *buf, size_t len, const struct report *rp, uint64_t addr)
{
	const char *n = symbol_name(rp, addr);

	if (n)
		snprintf(buf, len, "%s", n);
	else if (addr)
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	else
		snprintf(buf, len, "unknown");
	str_printable(buf); /* the file's name for it */
}

/* The netns's `ip netns` name where record knew one (META
 * netns_name.INODE), as top shows it; else its inode. NULL: no name. */
static const char *netns_name(const struct report *rp, uint32_t ns)
{
	char key[32];

	if (!ns)
		return NULL;
	snprintf(key, sizeof(key), "netns_name.%u", ns);
	return meta_get(rp, key);
}

static void fmt_netns(const struct report *rp, char *buf, size_t len, uint32_t ns)
{
	const char *name = netns_name(rp, ns);

	if (name && name[0]) {
		snprintf(buf, len, "%s", name);
		str_printable(buf); /* the file's text */
	} else if (ns) {
		snprintf(buf, len, "%u", ns);
	} else {
		snprintf(buf, len, "?");
	}
}

/* udpdrop's count minus the kernel's, saturated to int64 (JSON "diff"). */
static int64_t recon_diff(const struct agg_recon *r)
{
	if (r->udpdrop >= r->kernel)
		return r->udpdrop - r->kernel > (uint64_t)INT64_MAX ? INT64_MAX
								   : (int64_t)(r->udpdrop - r->kernel);
	return r->kernel - r->udpdrop > (uint64_t)INT64_MAX ? INT64_MIN
							    : -(int64_t)(r->kernel - r->udpdrop);
}

/* How far apart they are, exactly (no negation of INT64_MIN). */
static uint64_t recon_gap(const struct agg_recon *r)
{
	return r->udpdrop > r->kernel ? r->udpdrop - r->kernel : r->kernel - r->udpdrop;
}

/* ---- text -------------------------------------------------------------- */

static void printable_line(struct strbuf *out, const char *label, const char *v)
{
	char *s = xstrdup(v ? v : "");

	str_printable(s);
	sb_printf(out, "  %-10s %s\n", label, s[0] ? s : "-");
	free(s);
}

/* Recorded on a kernel without drop reasons: causes from locations. */
static bool report_sites(const struct report *rp)
{
	const char *from = meta_get(rp, TRACE_META_CAUSES_FROM);

	return from && !strcmp(from, "location");
}

static void text_header(const struct report *rp, struct strbuf *out)
{
	const char *netns = meta_get(rp, "netns"), *port = meta_get(rp, "port");
	char when[64], buf[128], *path = xstrdup(rp->path);

	str_printable(path); /* a name listed from a directory may hold anything */
	sb_printf(out, "udpdrop report: %s\n", path);
	free(path);
	if (rp->status == TRACE_CUT)
		sb_printf(out, "\n*** CUT SHORT: %s ***\n"
			  "*** the recording did not end cleanly: this report covers the %llu whole block%s there ***\n\n",
			  rp->message, (unsigned long long)rp->blocks, rp->blocks == 1 ? "" : "s");
	else if (rp->status == TRACE_CORRUPT)
		sb_printf(out, "\n*** CORRUPT: %s ***\n"
			  "*** this report covers the %llu block%s before offset %llu only ***\n\n",
			  rp->message, (unsigned long long)rp->blocks, rp->blocks == 1 ? "" : "s",
			  (unsigned long long)rp->error_offset);
	printable_line(out, "file:", rp->message);
	printable_line(out, "host:", meta_get(rp, TRACE_META_HOST));
	printable_line(out, "kernel:", meta_get(rp, TRACE_META_KERNEL));
	fmt_start(when, sizeof(when), meta_get(rp, TRACE_META_START));
	printable_line(out, "started:", when);
	snprintf(buf, sizeof(buf), "%.1f s, first to last of %llu snapshot%s%s", duration_s(rp),
		 (unsigned long long)rp->ncounts, rp->ncounts == 1 ? "" : "s",
		 rp->have_end ? "" : " (no END: up to the last whole block)");
	printable_line(out, "duration:", buf);
	printable_line(out, "command:", meta_get(rp, TRACE_META_CMDLINE));
	const char *pid = meta_get(rp, "pid"), *tree = meta_get(rp, "pid_tree");

	/* -N's netns by its name where the recorder knew one, as top shows it */
	char nsname[96] = "";

	if (netns && strcmp(netns, "0")) {
		char key[48];
		const char *name;

		snprintf(key, sizeof(key), "netns_name.%s", netns);
		name = meta_get(rp, key);
		if (name && name[0])
			snprintf(nsname, sizeof(nsname), "%.63s (inode %.20s)", name, netns);
	}
	snprintf(buf, sizeof(buf), "netns %s, port %s%s%s%s",
		 nsname[0] ? nsname : netns && strcmp(netns, "0") ? netns : "any",
		 port && strcmp(port, "0") ? port : "any",
		 pid && strcmp(pid, "0") ? ", pid " : "",
		 pid && strcmp(pid, "0") ? pid : "",
		 pid && strcmp(pid, "0") && tree && !strcmp(tree, "1") ? " and its children" : "");
	printable_line(out, "filters:", buf);
	struct strbuf ev = {};

	fmt_events(rp, &ev);
	printable_line(out, "events:", ev.buf ? ev.buf : "");
	sb_free(&ev);
	printable_line(out, "recorder:", meta_get(rp, TRACE_META_VERSION));
	if (report_sites(rp)) {
		char note[512];

		cause__sites_note(note, sizeof(note));
		printable_line(out, "causes:", note);
	}
	sb_printf(out, "\n");
}

static void text_sockets(const struct report *rp, const struct agg *a, uint64_t top,
			 struct strbuf *out)
{
	int shown = a->nsocks < (int64_t)top ? a->nsocks : (int)top;
	int wl = 5, wr = 6, wn = 10, wo = 8;
	char l[96], r[96], o[64], d[32], s[32], rb[32], ns[64];

	sb_printf(out, "Sockets (the last snapshot; drops are datagrams, skbs the kernel's events):\n");
	if (!a->nsocks) {
		sb_printf(out, "  none dropped\n\n");
		return;
	}
	for (int i = 0; i < shown; i++) {
		fmt_local(l, sizeof(l), &a->socks[i]);
		fmt_remote(r, sizeof(r), &a->socks[i]);
		fmt_netns(rp, ns, sizeof(ns), a->socks[i].netns);
		fmt_owner(rp, o, sizeof(o), &a->socks[i]);
		if ((int)strlen(l) > wl)
			wl = strlen(l);
		if ((int)strlen(r) > wr)
			wr = strlen(r);
		if ((int)strlen(ns) > wn)
			wn = strlen(ns);
		if ((int)strlen(o) > wo)
			wo = strlen(o);
	}
	sb_printf(out, "  %-*s  %-*s  %-*s  %-*s  %10s  %10s  %-13s  %9s\n", wl, "LOCAL", wr,
		  "REMOTE", wn, "NETNS", wo, "PID/COMM", "DROPS", "SKBS", "CAUSE", "RCVBUF");
	for (int i = 0; i < shown; i++) {
		const struct agg_sock *k = &a->socks[i];

		fmt_local(l, sizeof(l), k);
		fmt_remote(r, sizeof(r), k);
		fmt_owner(rp, o, sizeof(o), k);
		fmt_count(d, sizeof(d), k->drops);
		fmt_count(s, sizeof(s), k->skbs);
		fmt_netns(rp, ns, sizeof(ns), k->netns);
		if (k->sock && k->sock->rcvbuf)
			fmt_bytes(rb, sizeof(rb), k->sock->rcvbuf);
		else
			snprintf(rb, sizeof(rb), "?");
		sb_printf(out, "  %-*s  %-*s  %-*s  %-*s  %10s  %10s  %-13s  %9s\n", wl, l, wr, r,
			  wn, ns, wo, o, d, s, cause__name(main_cause(k)), rb);
	}
	if (shown < a->nsocks)
		sb_printf(out, "  ... %d more socket%s (--top to show more)\n",
			  a->nsocks - shown, a->nsocks - shown == 1 ? "" : "s");
	sb_printf(out, "\n");
}

static void text_flows(const struct report *rp, const struct agg *a, struct strbuf *out)
{
	char f[200], d[32], s[32], ns[64];
	int wf = 4, wn = 10;

	sb_printf(out, "Drops that belong to no socket:\n");
	if (!a->nflows) {
		sb_printf(out, "  none\n\n");
		return;
	}
	for (int i = 0; i < a->nflows; i++) {
		fmt_flow(f, sizeof(f), &a->flows[i]);
		fmt_netns(rp, ns, sizeof(ns), a->flows[i].netns);
		if ((int)strlen(f) > wf)
			wf = strlen(f);
		if ((int)strlen(ns) > wn)
			wn = strlen(ns);
	}
	sb_printf(out, "  %-13s  %-*s  %-*s  %10s  %10s\n", "CAUSE", wn, "NETNS", wf, "FLOW",
		  "DROPS", "SKBS");
	for (int i = 0; i < a->nflows; i++) {
		const struct agg_flow *fl = &a->flows[i];

		fmt_flow(f, sizeof(f), fl);
		fmt_count(d, sizeof(d), fl->drops);
		fmt_count(s, sizeof(s), fl->skbs);
		fmt_netns(rp, ns, sizeof(ns), fl->netns);
		sb_printf(out, "  %-13s  %-*s  %-*s  %10s  %10s\n", cause__name(fl->cause), wn, ns,
			  wf, f, d, s);
	}
	sb_printf(out, "\n");
}

/* META "missed" (record_snapshot.c write_missed): 0 when absent (an older file). */
static uint64_t meta_missed(const struct report *rp)
{
	const char *v = meta_get(rp, "missed");
	char *end;
	unsigned long long n;

	if (!v)
		return 0;
	errno = 0;
	n = strtoull(v, &end, 10);
	return errno || end == v || *end ? 0 : n;
}

static void text_totals(const struct report *rp, const struct agg *a, struct strbuf *out)
{
	char d[32], s[32];

	sb_printf(out, "Totals by cause:\n");
	sb_printf(out, "  %-13s  %10s  %10s\n", "CAUSE", "DROPS", "SKBS");
	for (int c = 0; c < CAUSE_MAX; c++) {
		if (!a->cause[c] && !a->cause_skbs[c])
			continue;
		fmt_count(d, sizeof(d), a->cause[c]);
		fmt_count(s, sizeof(s), a->cause_skbs[c]);
		sb_printf(out, "  %-13s  %10s  %10s\n", cause__name(c), d, s);
	}
	fmt_count(d, sizeof(d), a->drops);
	fmt_count(s, sizeof(s), a->skbs);
	sb_printf(out, "  %-13s  %10s  %10s\n", "total", d, s);
	if (meta_missed(rp)) {
		fmt_count(d, sizeof(d), meta_missed(rp));
		sb_printf(out, "  and %s events the kernel skipped (a drop inside a drop on one CPU): in no count above\n", d);
	}
	sb_printf(out, "\n");
}

static void text_detail(const struct report *rp, const struct agg *a, uint64_t top,
			struct strbuf *out)
{
	int shown = a->nsocks < (int64_t)top ? a->nsocks : (int)top;
	char l[96], o[64], ns[64], n[160], d[32], s[32];

	if (!shown)
		return;
	sb_printf(out, "Kernel reasons and locations, per socket:\n");
	for (int i = 0; i < shown; i++) {
		const struct agg_sock *k = &a->socks[i];

		fmt_local(l, sizeof(l), k);
		fmt_owner(rp, o, sizeof(o), k);
		fmt_netns(rp, ns, sizeof(ns), k->netns);
		sb_printf(out, "  %s  netns %s  %s\n", l, ns, o);
		for (int j = 0; j < k->nreasons; j++) {
			fmt_reason(n, sizeof(n), rp, k->reasons[j].reason);
			fmt_count(d, sizeof(d), k->reasons[j].drops);
			fmt_count(s, sizeof(s), k->reasons[j].skbs);
			sb_printf(out, "    reason   %-40s %10s drops %10s skbs  (%s)\n", n, d, s,
				  cause__name(k->reasons[j].cause));
		}
		for (int j = 0; j < k->nlocs; j++) {
			fmt_loc(n, sizeof(n), rp, k->locs[j].addr);
			fmt_count(d, sizeof(d), k->locs[j].drops);
			fmt_count(s, sizeof(s), k->locs[j].skbs);
			sb_printf(out, "    at       %-40s %10s drops %10s skbs\n", n, d, s);
		}
	}
	sb_printf(out, "\n");
}

static void text_recon(const struct report *rp, const struct agg *a, struct strbuf *out)
{
	char k[32], u[32], ns[64], verdict[64];
	int shown = 0, wn = 10;

	sb_printf(out, "Reconciliation with the kernel's counters (last snapshot minus first, per netns):\n");
	if (!rp->nmibs) {
		sb_printf(out, "  no kernel counters in the file\n");
		return;
	}
	for (int i = 0; i < a->nrecon; i++) {
		fmt_netns(rp, ns, sizeof(ns), a->recon[i].netns);
		if ((a->recon[i].kernel || a->recon[i].udpdrop) && (int)strlen(ns) > wn)
			wn = strlen(ns);
	}
	for (int i = 0; i < a->nrecon; i++) {
		const struct agg_recon *r = &a->recon[i];
		int64_t diff = recon_diff(r);

		if (!r->kernel && !r->udpdrop)
			continue;
		if (!shown++)
			sb_printf(out, "  %-*s  %-13s  %10s  %10s  %-12s  %s\n", wn, "NETNS", "CAUSE",
				  "KERNEL", "UDPDROP", "VERDICT", "COUNTERS");
		fmt_netns(rp, ns, sizeof(ns), r->netns);
		if (r->have_kernel)
			fmt_count(k, sizeof(k), r->kernel);
		else
			snprintf(k, sizeof(k), "n/a");
		fmt_count(u, sizeof(u), r->udpdrop);
		if (!r->have_kernel)
			snprintf(verdict, sizeof(verdict), "no counter");
		else if (!diff)
			snprintf(verdict, sizeof(verdict), "match");
		else
			snprintf(verdict, sizeof(verdict), "differ by %llu",
				 (unsigned long long)recon_gap(r));
		sb_printf(out, "  %-*s  %-13s  %10s  %10s  %-12s  %s\n", wn, ns, cause__name(r->cause),
			  k, u, verdict, r->counters[0] ? r->counters : "-");
	}
	if (!shown)
		sb_printf(out, "  no drops on either side (%u netns with counters)\n", rp->nmibs);
}

static void text_timeline(const struct report *rp, struct strbuf *out)
{
	struct tl_row *rows, *m;
	int n = timeline(rp, &rows), nm, dec;
	char off[32], rate[32], top[32];
	double max = 0;

	sb_printf(out, "Timeline (drops/s: datagrams per second in each interval between snapshots;\n"
		  "offsets in s from the first snapshot):\n");
	if (!n) {
		sb_printf(out, "  fewer than 2 snapshots: no intervals\n\n");
		free(rows);
		return;
	}
	nm = timeline_merge(rows, n, REPORT_TIMELINE_LINES, &m);
	dec = tl_decimals(m, nm);
	for (int i = 0; i < nm; i++)
		if (tl_rate(&m[i]) > max)
			max = tl_rate(&m[i]);
	if (nm < n)
		sb_printf(out, "  (%d intervals merged evenly into %d lines of %d or %d)\n", n, nm,
			  n / nm, (n + nm - 1) / nm);
	fmt_rate(top, sizeof(top), max);
	sb_printf(out, "  %9s  %9s  each # is 1/%d of the busiest, %s/s\n", "OFFSET", "DROPS/S",
		  REPORT_BAR_MAX, top);
	for (int i = 0; i < nm; i++) {
		double r = tl_rate(&m[i]);
		int bar = max > 0 ? (int)(r * REPORT_BAR_MAX / max + 0.5) : 0;

		if (bar > REPORT_BAR_MAX)
			bar = REPORT_BAR_MAX;
		if (!bar && m[i].drops)
			bar = 1;
		snprintf(off, sizeof(off), "+%.*f", dec, m[i].start_ns / 1e9);
		fmt_rate(rate, sizeof(rate), r);
		sb_printf(out, "  %7s s  %7s/s", off, rate);
		if (bar)
			sb_printf(out, "  %.*s", bar,
				  "##################################################");
		sb_printf(out, "\n");
	}
	sb_printf(out, "\n");
	free(m);
	free(rows);
}

static void text_by_cause(const struct agg *a, struct strbuf *out)
{
	struct contrib top[BY_CAUSE_TOP];
	char d[32], s[32], sh[16], who[200], list[720];

	sb_printf(out, "Drops by cause (the last snapshot; SHARE of all datagrams dropped):\n");
	if (!a->drops && !a->skbs) {
		sb_printf(out, "  none dropped\n");
		return;
	}
	sb_printf(out, "  %-13s  %10s  %10s  %6s  %s\n", "CAUSE", "DROPS", "SKBS", "SHARE",
		  "MOST FROM (socket or flow: drops)");
	for (int c = 0; c < CAUSE_MAX; c++) {
		int nt;
		size_t o = 0;

		if (!a->cause[c] && !a->cause_skbs[c])
			continue;
		fmt_count(d, sizeof(d), a->cause[c]);
		fmt_count(s, sizeof(s), a->cause_skbs[c]);
		snprintf(sh, sizeof(sh), "%.1f%%", a->drops ? 100.0 * a->cause[c] / a->drops : 0.0);
		nt = cause_contribs(a, c, top);
		list[0] = 0;
		for (int i = 0; i < nt; i++) {
			fmt_contrib(who, sizeof(who), a, &top[i]);
			fmt_count(d, sizeof(d), top[i].drops);
			if (o < sizeof(list))
				o += snprintf(list + o, sizeof(list) - o, "%s%s: %s",
					      i ? ", " : "", who, d);
		}
		fmt_count(d, sizeof(d), a->cause[c]);
		sb_printf(out, "  %-13s  %10s  %10s  %6s  %s\n", cause__name(c), d, s, sh,
			  list[0] ? list : "-");
	}
}

static void text_by_reason(const struct report *rp, struct strbuf *out)
{
	struct agg_reason *v;
	int n = by_reason(rp, &v), w = 6;
	char name[160], d[32], s[32];

	sb_printf(out, "Drops by kernel reason (the last snapshot; names from the file's REASONS table):\n");
	if (!n) {
		sb_printf(out, "  none dropped\n");
		free(v);
		return;
	}
	for (int i = 0; i < n; i++) {
		fmt_reason(name, sizeof(name), rp, v[i].reason);
		if ((int)strlen(name) > w)
			w = strlen(name);
	}
	sb_printf(out, "  %-*s  %5s  %10s  %10s  %s\n", w, "REASON", "VALUE", "DROPS", "SKBS",
		  "CAUSE");
	for (int i = 0; i < n; i++) {
		fmt_reason(name, sizeof(name), rp, v[i].reason);
		fmt_count(d, sizeof(d), v[i].drops);
		fmt_count(s, sizeof(s), v[i].skbs);
		sb_printf(out, "  %-*s  %5u  %10s  %10s  %s\n", w, name, v[i].reason, d, s,
			  cause__name(v[i].cause));
	}
	free(v);
}

static void text_by_location(const struct report *rp, struct strbuf *out)
{
	struct agg_loc *v;
	int n = by_location(rp, &v), w = 8;
	char name[160], addr[32], d[32], s[32];

	sb_printf(out, "Drops by location (the last snapshot; symbols from the file's SYMBOLS table):\n");
	if (!n) {
		sb_printf(out, "  none dropped\n");
		free(v);
		return;
	}
	for (int i = 0; i < n; i++) {
		fmt_loc(name, sizeof(name), rp, v[i].addr);
		if ((int)strlen(name) > w)
			w = strlen(name);
	}
	sb_printf(out, "  %-*s  %-18s  %10s  %10s\n", w, "LOCATION", "ADDRESS", "DROPS", "SKBS");
	for (int i = 0; i < n; i++) {
		fmt_loc(name, sizeof(name), rp, v[i].addr);
		snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)v[i].addr);
		fmt_count(d, sizeof(d), v[i].drops);
		fmt_count(s, sizeof(s), v[i].skbs);
		sb_printf(out, "  %-*s  %-18s  %10s  %10s\n", w, name, addr, d, s);
	}
	free(v);
}

static void text_by_second(const struct report *rp, struct strbuf *out)
{
	struct tl_row *rows;
	int n = timeline(rp, &rows), dec;
	char off[32], len[32], d[32], rate[32];

	sb_printf(out, "Drops per interval between snapshots (START: offset in s from the first\n"
		  "snapshot; INTERVAL in s; DROPS/S: datagrams per second):\n");
	if (!n) {
		sb_printf(out, "  fewer than 2 snapshots: no intervals\n");
		free(rows);
		return;
	}
	dec = tl_decimals(rows, n);
	sb_printf(out, "  %9s  %9s  %10s  %10s  %s\n", "START", "INTERVAL", "DROPS", "DROPS/S",
		  "TOP CAUSE");
	for (int i = 0; i < n; i++) {
		int c = tl_top_cause(&rows[i]);

		snprintf(off, sizeof(off), "+%.*f", dec, rows[i].start_ns / 1e9);
		snprintf(len, sizeof(len), "%.*f", dec, rows[i].len_ns / 1e9);
		fmt_count(d, sizeof(d), rows[i].drops);
		fmt_rate(rate, sizeof(rate), tl_rate(&rows[i]));
		sb_printf(out, "  %9s  %9s  %10s  %10s  %s\n", off, len, d, rate,
			  c < 0 ? "-" : cause__name(c));
	}
	free(rows);
}

static void text_advice(const struct report *rp, const struct agg *a, uint64_t top,
			struct strbuf *out);

static void print_text(const struct report *rp, const struct agg *a, uint64_t top,
		       enum report_by by, struct strbuf *out)
{
	text_header(rp, out);
	switch (by) {
	case REPORT_BY_CAUSE:
		text_by_cause(a, out);
		return;
	case REPORT_BY_REASON:
		text_by_reason(rp, out);
		return;
	case REPORT_BY_LOCATION:
		text_by_location(rp, out);
		return;
	case REPORT_BY_SECOND:
		text_by_second(rp, out);
		return;
	default:
		break;
	}
	text_sockets(rp, a, top, out);
	text_flows(rp, a, out);
	text_totals(rp, a, out);
	text_timeline(rp, out);
	text_detail(rp, a, top, out);
	text_recon(rp, a, out);
	text_advice(rp, a, top, out);
}

/* ---- advice ------------------------------------------------------------ */

/*
 * The advice engine (advice.h) fed with this file's numbers: per socket
 * shown and cause, then per cause of the drops with no socket. The file
 * holds no deliveries, so the arrival rate stays unknown (the engine then
 * bounds it by the drop rate and says so), and no truesize (estimated).
 */
struct adv_item {
	int sock;  /* index in agg's socks; -1: drops with no socket */
	int cause;
	uint64_t drops;
	char who[320];
	int nf;
	struct advice_finding f[ADVICE_MAX];
};

static int rc_cause(const struct report *rp, uint32_t reason, uint32_t flags)
{
	const char *name = reason_name(rp, reason);

	return cause__classify(name ? name : "", flags);
}

static void meta_u64(const struct report *rp, const char *key, struct advice_u64 *out)
{
	const char *v = meta_get(rp, key);
	uint64_t x;

	if (v && !parse_u64(v, 0, UINT64_MAX, &x))
		*out = ADVICE_U64(x);
}

/* The delta of the counters named (summed) in netns, if it has them all. */
static struct advice_u64 mib_delta(const struct report *rp, uint32_t netns,
				   const enum mib_id *ids)
{
	struct advice_u64 r = { false, 0 };
	const struct report_mib *ml, *mf = mib_of(rp, netns, &ml);

	for (const enum mib_id *id = ids; mf && *id != MIB_MAX; id++) {
		uint64_t v0, v1;

		if (!mib_value(mf, *id, &v0) || !mib_value(ml, *id, &v1))
			continue;
		r.known = true;
		r.v += v1 > v0 ? v1 - v0 : 0;
	}
	return r;
}

/*
 * The interface a socket's traffic uses, when the file tells: lo for a
 * loopback address, else the netns's only other interface. With two or
 * more, NULL: which one carries the traffic depends on routes the file
 * does not hold, and a guess would be stated as fact; the advice then says
 * the interface (its MTU, its txqueuelen) is not known.
 *
 * Counted once per report (iface_picks), not per advice item: per netns
 * (any: a socket whose netns is unknown) and lo or not, how many
 * interfaces and the first.
 */
struct pick_key {
	uint32_t netns, lo, any, pad;
};

struct pick {
	uint32_t n, first;
};

static void iface_picks(const struct report *rp, struct htab *h)
{
	xhtab_init(h, sizeof(struct pick_key), sizeof(struct pick));
	for (uint32_t i = 0; i < rp->nifaces; i++) {
		uint32_t lo = !strcmp(rp->ifaces[i].name, "lo");
		struct pick_key keys[2] = { { rp->ifaces[i].netns, lo, 0, 0 }, { 0, lo, 1, 0 } };

		for (int k = 0; k < 2; k++) {
			int created;
			struct pick *p = xupsert(h, &keys[k], &created);

			if (created)
				p->first = i;
			p->n++;
		}
	}
}

static const struct trace_iface *pick_iface(const struct report *rp, const struct htab *picks,
					    uint32_t netns, bool loopback)
{
	struct pick_key k = { netns, loopback, !netns, 0 };
	const struct pick *p = xfind(picks, &k);

	return p && p->n == 1 ? &rp->ifaces[p->first] : NULL;
}

static bool is_loopback(const struct trace_socket *k)
{
	static const uint8_t v6lo[16] = { [15] = 1 };

	if (k->family == AF_INET)
		return k->laddr[0] == 127;
	return k->family == AF_INET6 && !memcmp(k->laddr, v6lo, 16);
}

/* ifname: room for the interface's name, made printable (the advice
 * quotes it); it must outlive *in. */
#define ADV_IFNAME 64

/* a token of a META list, safe in a command as it is (a hostile file's
 * bytes never reach the advice's commands) */
static bool meta_token_safe(const char *s, size_t n, bool name)
{
	if (!n || n >= 40)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
		      s[i] == '_' || (name && ((s[i] >= 'A' && s[i] <= 'Z') || s[i] == '-'))))
			return false;
	return true;
}

/* Is tok (n bytes) an item of the comma-separated list? */
static bool meta_list_has(const char *list, const char *tok, size_t n)
{
	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l == n && !memcmp(p, tok, n))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

static void meta_scopes(struct advice_where *w, const char *list, enum advice_scope scope,
			const char *settable)
{
	for (const char *p = list; p && *p && w->n < ADVICE_SCOPES;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (meta_token_safe(p, l, false)) {
			struct advice_sysctl_scope *sc = &w->s[w->n++];

			memcpy(sc->name, p, l);
			sc->name[l] = 0;
			sc->scope = scope;
			sc->settable = meta_list_has(settable, p, l);
		}
		p = e ? e + 1 : NULL;
	}
}

/*
 * The sysctls' scope as record tested it (META sysctl_host_wide,
 * sysctl_per_netns, sysctl_settable, sysctl_netns_name), for the advice of
 * a row in the recorded netns, so report's commands are top's; false (the
 * plain commands) for another netns's row or a file without them.
 */
static bool meta_where(const struct report *rp, uint32_t netns, struct advice_where *w)
{
	const char *host = meta_get(rp, "sysctl_host_wide"), *own = meta_get(rp, "sysctl_per_netns");
	const char *set = meta_get(rp, "sysctl_settable"), *name = meta_get(rp, "sysctl_netns_name");
	const char *sn = meta_get(rp, "sysctl_netns"), *opt = meta_get(rp, "netns");
	uint64_t sysns, optns = 0;

	memset(w, 0, sizeof(*w));
	if ((!host && !own) || !sn || parse_u64(sn, 0, UINT32_MAX, &sysns) || sysns != netns)
		return false;
	meta_scopes(w, host, ADVICE_SCOPE_HOST, set);
	meta_scopes(w, own, ADVICE_SCOPE_NETNS, set);
	/* recorded without -N: the netns record ran in, where its commands run */
	w->self = !opt || parse_u64(opt, 0, UINT32_MAX, &optns) || !optns;
	if (!w->self && name && meta_token_safe(name, strlen(name), true)) {
		snprintf(w->name, sizeof(w->name), "%s", name);
		snprintf(w->enter, sizeof(w->enter), "ip netns exec %s ", name);
	}
	snprintf(w->label, sizeof(w->label), "%s", w->name[0] ? w->name : sn);
	return w->n > 0;
}

static void adv_common(const struct report *rp, const struct htab *picks, uint32_t netns,
		       bool loopback, struct advice_input *in, char ifname[ADV_IFNAME],
		       struct advice_where *where)
{
	static const enum mib_id rcvbuf_n[] = { MIB_UdpRcvbufErrors, MIB_Udp6RcvbufErrors, MIB_MAX };
	static const enum mib_id mem_n[] = { MIB_UdpMemErrors, MIB_Udp6MemErrors, MIB_MAX };
	static const enum mib_id sndbuf_n[] = { MIB_UdpSndbufErrors, MIB_Udp6SndbufErrors, MIB_MAX };
	static const enum mib_id noports_n[] = { MIB_UdpNoPorts, MIB_Udp6NoPorts, MIB_MAX };
	static const enum mib_id csum_n[] = { MIB_UdpInCsumErrors, MIB_Udp6InCsumErrors, MIB_MAX };
	static const enum mib_id fails_n[] = { MIB_IpReasmFails, MIB_Ip6ReasmFails, MIB_MAX };
	static const enum mib_id timeout_n[] = { MIB_IpReasmTimeout, MIB_Ip6ReasmTimeout, MIB_MAX };
	static const enum mib_id reads_n[] = { MIB_UdpInDatagrams, MIB_Udp6InDatagrams, MIB_MAX };
	const struct trace_iface *f = pick_iface(rp, picks, netns, loopback);
	const char *um = meta_get(rp, "net.ipv4.udp_mem");
	unsigned long long m0, m1, m2;

	in->span_s = duration_s(rp);
	in->where = meta_where(rp, netns, where) ? where : NULL;
	meta_u64(rp, "net.core.rmem_default", &in->rmem_default);
	meta_u64(rp, "net.core.rmem_max", &in->rmem_max);
	meta_u64(rp, "net.core.wmem_default", &in->wmem_default);
	meta_u64(rp, "net.core.wmem_max", &in->wmem_max);
	meta_u64(rp, "net.core.netdev_max_backlog", &in->netdev_max_backlog);
	meta_u64(rp, "net.ipv4.ipfrag_time", &in->ipfrag_time);
	meta_u64(rp, "net.ipv4.ipfrag_high_thresh", &in->ipfrag_high_thresh);
	meta_u64(rp, "net.ipv4.ipfrag_max_dist", &in->ipfrag_max_dist);
	if (um && sscanf(um, "%llu %llu %llu", &m0, &m1, &m2) == 3) {
		in->udp_mem[0] = ADVICE_U64(m0);
		in->udp_mem[1] = ADVICE_U64(m1);
		in->udp_mem[2] = ADVICE_U64(m2);
	}
	if (f) {
		snprintf(ifname, ADV_IFNAME, "%s", f->name);
		str_printable(ifname);
		in->ifname = ifname;
		if (f->mtu)
			in->mtu = ADVICE_U64(f->mtu);
		if (f->txqueuelen)
			in->txqueuelen = ADVICE_U64(f->txqueuelen);
	}
	in->mib_rcvbuf_errors = mib_delta(rp, netns, rcvbuf_n);
	in->mib_mem_errors = mib_delta(rp, netns, mem_n);
	in->mib_sndbuf_errors = mib_delta(rp, netns, sndbuf_n);
	in->mib_no_ports = mib_delta(rp, netns, noports_n);
	in->mib_csum_errors = mib_delta(rp, netns, csum_n);
	in->mib_reasm_fails = mib_delta(rp, netns, fails_n);
	in->mib_reasm_timeout = mib_delta(rp, netns, timeout_n);
	in->reads = mib_delta(rp, netns, reads_n);
}

static bool frag_cause(int c)
{
	return c == CAUSE_FRAG_TIMEOUT || c == CAUSE_FRAG_TOO_FAR || c == CAUSE_FRAG_DUP;
}

/*
 * Each (socket, cause)'s worst interval between snapshots, and in how many
 * intervals it dropped: one pass over every snapshot's socket entries,
 * indexed by (cookie, cause), so 10,000 sockets over 100 snapshots cost
 * 10^6 lookups, not 10^6 per socket. An interval's drops are the later
 * snapshot's count minus the earlier's (0 if the socket was not in the
 * earlier one; nothing if the count went down).
 */
struct iv_burst {
	uint64_t prev, cur;       /* at snapshots prev_snap - 1, cur_snap - 1 */
	uint64_t prev_snap, cur_snap; /* 1-based, 0: none */
	/* the worst interval, the intervals with drops, and the socket's own
	 * deliveries (SOCKETS, minor 2) in those whose both ends have them */
	const struct report_queue *q;
	struct advice_track track;   /* the rule top and doctor use */
};

/* The socket's deliveries at exactly time t (a SOCKETS look), if known. */
static bool rx_at(const struct report_queue *q, uint64_t t, uint64_t *v)
{
	uint32_t lo = 0, hi = q ? q->nrx : 0;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (q->rx[mid].time_ns < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!q || lo == q->nrx || q->rx[lo].time_ns != t)
		return false;
	*v = q->rx[lo].delivered;
	return true;
}

static void iv_close(const struct report *rp, struct iv_burst *b)
{
	uint64_t s, p, r0 = 0, r1 = 0;

	if (!b->cur_snap)
		return;
	s = b->cur_snap - 1;
	p = s && b->prev_snap == s ? b->prev : 0;
	if (s && b->cur > p) {
		double len = rp->snaps[s].time_ns > rp->snaps[s - 1].time_ns
				     ? (rp->snaps[s].time_ns - rp->snaps[s - 1].time_ns) / 1e9 : 0;
		bool rx = rx_at(b->q, rp->snaps[s - 1].time_ns, &r0) &&
			  rx_at(b->q, rp->snaps[s].time_ns, &r1);

		advice__track(&b->track, b->cur - p, len, rx, rx && r1 > r0 ? r1 - r0 : 0);
	}
	b->prev = b->cur;
	b->prev_snap = b->cur_snap;
	b->cur_snap = 0;
}

static void interval_bursts(const struct report *rp, struct htab *h)
{
	struct htab causes; /* (reason, flags) -> cause + 1: classify once */
	const void *k;
	void *v;

	xhtab_init(h, sizeof(struct ev_key), sizeof(struct iv_burst));
	xhtab_init(&causes, 2 * sizeof(uint32_t), sizeof(int));
	for (uint64_t i = 0; i < rp->ncounts; i++) {
		const struct report_snap *sn = &rp->snaps[i];

		for (uint32_t j = 0; j < sn->nsk; j++) {
			uint32_t rf[2] = { sn->sk[j].reason, sn->sk[j].flags };
			int created, *c = xupsert(&causes, rf, &created);
			struct ev_key key;
			struct iv_burst *b;

			if (created)
				*c = rc_cause(rp, rf[0], rf[1]) + 1;
			/* by row: a socket's inode and cookie counts add up */
			key = (struct ev_key){ report_row(rp, sockid__of(sn->sk[j].cookie,
									 sn->sk[j].flags & UD_KEY_INODE)),
					       (uint32_t)(*c - 1), 0 };
			b = xupsert(h, &key, &created);
			/* its deliveries: SOCKETS name a row by its cookie */
			if (created && !sockid__inode(key.cookie) && rp->queue_idx.cap) {
				const uint32_t *qi = xfind(&rp->queue_idx, &key.cookie);

				b->q = qi ? &rp->queues[*qi] : NULL;
			}
			if (b->cur_snap != i + 1) {
				iv_close(rp, b);
				b->cur = 0;
				b->cur_snap = i + 1;
			}
			b->cur = add_sat(b->cur, sn->sk[j].datagrams);
		}
	}
	for (size_t it = 0; htab__next(h, &it, &k, &v);)
		iv_close(rp, v);
	htab__free(&causes);
}

static bool have_events(const struct report *rp)
{
	const char *m = meta_get(rp, "events");

	return rp->events || (m && !strcmp(m, "recorded"));
}

/*
 * The burst for one (socket, cause), cookie 0 for drops with no socket:
 * from the EVENTs when they cover every drop (the most in any 100 ms);
 * else per snapshot interval, with how many drops the EVENTs cover (most
 * were shed: the events' burst would be a lower bound, and the buffer
 * sized from it too small, so the exact interval counts are used, and
 * the advice says the burst is per interval and why).
 */
static void set_burst(const struct report *rp, const struct agg_sock *k, int cause,
		      uint64_t drops, struct advice_input *in)
{
	struct ev_key key = { k ? k->cookie : 0, (uint32_t)cause, k && k->by_inode };
	const struct ev_burst *own = xfind(&rp->ev_burst, &key), *eb = own;
	struct ev_burst joined;

	/* a row by cookie holds its socket's events by inode too (sockid.h) */
	if (k && !k->by_inode && k->sock && k->sock->inode) {
		struct ev_key ik = { k->sock->inode, (uint32_t)cause, 1 };
		const struct ev_burst *ib = xfind(&rp->ev_burst, &ik);

		if (ib) {
			joined = *ib;
			if (own)
				ev_burst_join(&joined, own);
			eb = &joined;
		}
	}

	if (!have_events(rp))
		return;
	in->event_drops = ADVICE_U64(eb ? eb->datagrams : 0);
	if (eb && eb->datagrams >= drops && drops) {
		in->burst = ADVICE_U64(eb->best);
		in->burst_s = BURST_WINDOW_NS / 1e9;
		in->burst_window = true;
		/* and the drop shape: in how many of the windows of their
		 * stretch the drops came (a bursty sender: few) */
		in->windows = ADVICE_U64(eb->last_win - eb->first_win + 1);
		in->windows_dropping = ADVICE_U64(eb->wins_dropping);
		in->window_s = BURST_WINDOW_NS / 1e9;
	}
}

/*
 * The kernel's drop windows of a socket row (WINDOWS): its windows by
 * inode (before a dump gave it a cookie) first, then by cookie, joined as
 * top's model joins them. Nothing for a file without them (before 1.3).
 */
static void set_kernel_windows(const struct report *rp, const struct agg_sock *k, int cause,
			       struct advice_input *in)
{
	const struct win_agg *by_inode = NULL, *own;
	struct win_agg a = { 0 };

	if (!rp->have_windows || !k)
		return;
	own = windows__find(&rp->win, kx_id(sockid__of(k->cookie, k->by_inode)), cause);
	if (!k->by_inode && k->sock && k->sock->inode)
		by_inode = windows__find(&rp->win, kx_id(sockid__of(k->sock->inode, true)), cause);
	if (by_inode)
		a = *by_inode;
	if (own)
		win_agg__join(&a, own);
	if (a.dropping)
		advice__kernel_windows(in, win_agg__span(&a), a.dropping, a.best, rp->sockets_rx,
				       a.delivered, a.stalled);
}

static int advice_items(const struct report *rp, const struct agg *a, uint64_t top,
			struct adv_item **out)
{
	int shown = a->nsocks < (int64_t)top ? a->nsocks : (int)top, n = 0;
	struct adv_item *v = NULL;
	struct tl_row *rows;
	int nrows = timeline(rp, &rows);
	struct htab ivb, picks;
	char ifname[ADV_IFNAME];
	struct advice_where where; /* outlives each in, as ifname */

	interval_bursts(rp, &ivb);
	iface_picks(rp, &picks);

	for (int i = 0; i < shown; i++) {
		const struct agg_sock *k = &a->socks[i];
		const struct trace_socket *ts = k->sock;

		for (int c = 0; c < CAUSE_MAX; c++) {
			struct advice_input in = { .cause = c, .has_socket = true };
			struct adv_item *it;
			char l[96], o[64], ns[64];

			if (!k->cause[c] && !k->cause_skbs[c])
				continue;
			v = grow_arr(v, n, sizeof(*v));
			it = &v[n];
			memset(it, 0, sizeof(*it));
			it->sock = i;
			it->cause = c;
			it->drops = k->cause[c];
			fmt_local(l, sizeof(l), k);
			fmt_owner(rp, o, sizeof(o), k);
			fmt_netns(rp, ns, sizeof(ns), k->netns);
			snprintf(it->who, sizeof(it->who), "%s  netns %s  %s", l, ns, o);
			adv_common(rp, &picks, k->netns, ts && is_loopback(ts), &in, ifname, &where);
			in.who = l;
			in.drops = k->cause[c];
			in.skbs = k->cause_skbs[c];
			in.sender_side = c == CAUSE_QDISC || c == CAUSE_NEIGH;
			if (ts) {
				in.family = ts->family;
				if (ts->lport)
					in.port = ADVICE_U64(ts->lport);
				if (ts->rcvbuf)
					in.rcvbuf = ADVICE_U64(ts->rcvbuf);
				in.queued = ADVICE_U64(ts->queued);
				const uint32_t *q = xfind(&rp->queue_idx, &ts->cookie);

				if (q) {
					in.queue_low = ADVICE_U64(rp->queues[*q].low);
					in.queue_peak = ADVICE_U64(rp->queues[*q].peak);
					in.queue_looks = ADVICE_U64(rp->queues[*q].looks);
				}
			}
			/* bytes per datagram, not per skb (GSO/GRO skbs hold several) */
			if (k->size_dgrams[c] && k->size_bytes[c] && !frag_cause(c))
				in.avg_size = ADVICE_DBL((double)k->size_bytes[c] / k->size_dgrams[c]);
			if (rp->ncounts >= 2) {
				struct ev_key key = { sockid__of(k->cookie, k->by_inode),
						      (uint32_t)c, 0 };
				const struct iv_burst *b = xfind(&ivb, &key);

				/* the burst, and the socket's own deliveries
				 * (recorded from minor 2 on), as top and doctor
				 * give them */
				advice__track_input(&in, b ? &b->track : &(struct advice_track){ 0 },
						    rp->ncounts - 1);
			}
			set_burst(rp, k, c, k->cause[c], &in);
			set_kernel_windows(rp, k, c, &in);
			it->nf = advice__build(&in, it->f, ADVICE_MAX);
			n++;
		}
	}
	/* drops with no socket: per cause, named by its busiest flow */
	for (int c = 0; c < CAUSE_MAX; c++) {
		struct advice_input in = { .cause = c };
		const struct agg_flow *topf = NULL;
		uint64_t drops = 0, skbs = 0, best = 0, dropping = 0;
		int nflows = 0;
		bool one_port = true;
		struct adv_item *it;
		char f[200], ns[64];

		for (int i = 0; i < a->nflows; i++) {
			const struct agg_flow *fl = &a->flows[i];

			if (fl->cause != c || (!fl->drops && !fl->skbs))
				continue;
			if (!topf)
				topf = fl; /* flows are sorted, busiest first */
			else if (fl->dport != topf->dport || fl->netns != topf->netns)
				one_port = false;
			drops += fl->drops;
			skbs += fl->skbs;
			nflows++;
		}
		if (!topf)
			continue;
		v = grow_arr(v, n, sizeof(*v));
		it = &v[n];
		memset(it, 0, sizeof(*it));
		it->sock = -1;
		it->cause = c;
		it->drops = drops;
		fmt_flow(f, sizeof(f), topf);
		fmt_netns(rp, ns, sizeof(ns), topf->netns);
		if (nflows == 1)
			snprintf(it->who, sizeof(it->who), "no socket: %s  netns %s", f, ns);
		else
			snprintf(it->who, sizeof(it->who), "no socket: %d flows, the most from %s  netns %s",
				 nflows, f, ns);
		adv_common(rp, &picks, topf->netns, false, &in, ifname, &where);
		in.who = f;
		in.family = topf->family;
		in.drops = drops;
		in.skbs = skbs;
		if (topf->dport && one_port)
			in.port = ADVICE_U64(topf->dport);
		for (int i = 0; i < nrows; i++) {
			if (rows[i].cause[c] > best) {
				best = rows[i].cause[c];
				in.burst_s = rows[i].len_ns / 1e9;
			}
			dropping += rows[i].cause[c] > 0;
		}
		if (nrows) {
			in.burst = ADVICE_U64(best);
			in.intervals = ADVICE_U64(nrows);
			in.intervals_dropping = ADVICE_U64(dropping);
		}
		set_burst(rp, NULL, c, drops, &in);
		it->nf = advice__build(&in, it->f, ADVICE_MAX);
		n++;
	}
	free(rows);
	htab__free(&ivb);
	htab__free(&picks);
	*out = v;
	return n;
}

/* the advice's text wraps at REPORT_WRAP columns (sb_wrapped, util.h) */
#define REPORT_WRAP 100

static void text_advice(const struct report *rp, const struct agg *a, uint64_t top,
			struct strbuf *out)
{
	struct adv_item *v;
	int n = advice_items(rp, a, top, &v);
	char d[32];

	sb_printf(out, "\nAdvice (published UDP tuning rules, see udpdrop(8) SOURCES, applied to this\n"
		  "recording's numbers; ~ marks an estimate; arrival rates are at least the drop rates):\n");
	if (!n)
		sb_printf(out, "  no drops: nothing to advise\n");
	for (int i = 0; i < n; i++) {
		fmt_count(d, sizeof(d), v[i].drops);
		sb_printf(out, "%s  %s: %s, %s datagram%s\n", i ? "\n" : "", v[i].who,
			  cause__name(v[i].cause), d, v[i].drops == 1 ? "" : "s");
		for (int j = 0; j < v[i].nf; j++) {
			const struct advice_finding *f = &v[i].f[j];

			if (j)
				sb_printf(out, "\n");
			sb_wrapped(out, "what", f->what, REPORT_WRAP);
			sb_wrapped(out, "evidence", f->evidence, REPORT_WRAP);
			sb_wrapped(out, "change", f->change, REPORT_WRAP);
			sb_wrapped(out, "verify", f->verify, REPORT_WRAP);
		}
	}
	free(v);
}

/* ---- JSON -------------------------------------------------------------- */

static void jkey_u64(struct json *j, const char *k, uint64_t v)
{
	json_key(j, k);
	json_u64(j, v);
}

static void jkey_str(struct json *j, const char *k, const char *v)
{
	json_key(j, k);
	json_str(j, v);
}

static void json_tl_row(struct json *j, const struct tl_row *r, bool top_cause)
{
	int c = tl_top_cause(r);

	json_obj_begin(j);
	json_key(j, "t");
	json_double(j, r->start_ns / 1e9, 3);
	json_key(j, "interval_s");
	json_double(j, r->len_ns / 1e9, 3);
	jkey_u64(j, "drops", r->drops);
	json_key(j, "drops_per_s");
	json_double(j, tl_rate(r), 3);
	if (top_cause) {
		json_key(j, "top_cause");
		json_str(j, c < 0 ? NULL : cause__name(c));
	}
	json_obj_end(j);
}

static void json_by(const struct report *rp, const struct agg *a, enum report_by by,
		    struct json *j)
{
	char buf[200];

	json_key(j, "by");
	json_obj_begin(j);
	jkey_str(j, "key", report__by_name(by));
	json_key(j, "rows");
	json_arr_begin(j);
	if (by == REPORT_BY_CAUSE) {
		struct contrib top[BY_CAUSE_TOP];

		for (int c = 0; c < CAUSE_MAX; c++) {
			int nt;

			if (!a->cause[c] && !a->cause_skbs[c])
				continue;
			json_obj_begin(j);
			jkey_str(j, "cause", cause__name(c));
			jkey_u64(j, "drops", a->cause[c]);
			jkey_u64(j, "skb_events", a->cause_skbs[c]);
			json_key(j, "share");
			json_double(j, a->drops ? (double)a->cause[c] / a->drops : 0.0, 4);
			json_key(j, "top");
			json_arr_begin(j);
			nt = cause_contribs(a, c, top);
			for (int i = 0; i < nt; i++) {
				json_obj_begin(j);
				jkey_str(j, "kind", top[i].flow ? "flow" : "socket");
				fmt_contrib(buf, sizeof(buf), a, &top[i]);
				jkey_str(j, "what", buf);
				jkey_u64(j, "drops", top[i].drops);
				json_obj_end(j);
			}
			json_arr_end(j);
			json_obj_end(j);
		}
	} else if (by == REPORT_BY_REASON) {
		struct agg_reason *v;
		int n = by_reason(rp, &v);

		for (int i = 0; i < n; i++) {
			json_obj_begin(j);
			jkey_u64(j, "reason", v[i].reason);
			json_key(j, "name");
			json_str(j, reason_name(rp, v[i].reason));
			jkey_str(j, "cause", cause__name(v[i].cause));
			jkey_u64(j, "drops", v[i].drops);
			jkey_u64(j, "skb_events", v[i].skbs);
			json_obj_end(j);
		}
		free(v);
	} else if (by == REPORT_BY_LOCATION) {
		struct agg_loc *v;
		int n = by_location(rp, &v);

		for (int i = 0; i < n; i++) {
			json_obj_begin(j);
			snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v[i].addr);
			jkey_str(j, "addr", buf);
			json_key(j, "symbol");
			json_str(j, symbol_name(rp, v[i].addr));
			jkey_u64(j, "drops", v[i].drops);
			jkey_u64(j, "skb_events", v[i].skbs);
			json_obj_end(j);
		}
		free(v);
	} else if (by == REPORT_BY_SECOND) {
		struct tl_row *rows;
		int n = timeline(rp, &rows);

		for (int i = 0; i < n; i++)
			json_tl_row(j, &rows[i], true);
		free(rows);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static void print_json(const struct report *rp, const struct agg *a, uint64_t top,
		       enum report_by by, struct strbuf *out)
{
	struct tl_row *rows;
	int nrows;
	int shown = a->nsocks < (int64_t)top ? a->nsocks : (int)top;
	struct json j;
	char buf[200];

	json_init(&j, out);
	json_obj_begin(&j);
	json_key(&j, "file");
	json_obj_begin(&j);
	jkey_str(&j, "path", rp->path);
	json_key(&j, "complete");
	json_bool(&j, rp->status == TRACE_COMPLETE);
	jkey_str(&j, "status", report__status_name(rp));
	jkey_str(&j, "message", rp->message);
	jkey_u64(&j, "blocks", rp->blocks);
	json_key(&j, "error_offset");
	if (rp->status == TRACE_CORRUPT)
		json_u64(&j, rp->error_offset);
	else
		json_null(&j);
	json_obj_end(&j);

	json_key(&j, "meta");
	json_obj_begin(&j);
	for (uint32_t i = 0; i < rp->nmeta; i++)
		jkey_str(&j, rp->meta[i].key, rp->meta[i].value);
	json_obj_end(&j);
	cause__json_derivation(&j, report_sites(rp));
	fmt_start(buf, sizeof(buf), meta_get(rp, TRACE_META_START));
	jkey_str(&j, "start_utc", buf);
	json_key(&j, "duration_s");
	json_double(&j, duration_s(rp), 3);
	jkey_u64(&j, "snapshots", rp->ncounts);
	json_key(&j, "events");
	json_obj_begin(&j);
	json_key(&j, "recorded");
	json_bool(&j, !meta_get(rp, "events") || !strcmp(meta_get(rp, "events"), "recorded"));
	jkey_u64(&j, "written", rp->events);
	jkey_u64(&j, "datagrams", rp->event_datagrams);
	jkey_u64(&j, "with_headers", rp->event_caps);
	jkey_u64(&j, "shed_total", rp->shed_total);
	json_key(&j, "shed");
	json_obj_begin(&j);
	for (unsigned c = 0; c < TRACE_CAUSES_MAX; c++)
		if (rp->shed[c]) {
			writer_cause_name(rp, c, buf, sizeof(buf));
			jkey_u64(&j, buf, rp->shed[c]);
		}
	json_obj_end(&j);
	json_obj_end(&j);

	json_key(&j, "sockets");
	json_arr_begin(&j);
	for (int i = 0; i < shown; i++) {
		const struct agg_sock *k = &a->socks[i];

		json_obj_begin(&j);
		jkey_u64(&j, k->by_inode ? "inode" : "cookie", k->cookie);
		fmt_local(buf, sizeof(buf), k);
		jkey_str(&j, "local", buf);
		/* as top's: the peer of a connected socket, "*" for none */
		fmt_remote(buf, sizeof(buf), k);
		json_key(&j, "remote");
		json_str(&j, k->sock ? buf : NULL);
		jkey_u64(&j, "netns", k->netns);
		json_key(&j, "netns_name");
		json_str(&j, netns_name(rp, k->netns));
		json_key(&j, "kernel_owner");
		json_str(&j, kernel_owner(rp, k));
		json_key(&j, "pid");
		if (k->sock && k->sock->pid)
			json_u64(&j, k->sock->pid);
		else
			json_null(&j);
		json_key(&j, "comm");
		json_str(&j, k->sock ? k->sock->comm : NULL);
		jkey_u64(&j, "drops", k->drops);
		jkey_u64(&j, "skb_events", k->skbs);
		jkey_u64(&j, "bytes", k->bytes);
		jkey_str(&j, "cause", cause__name(main_cause(k)));
		json_key(&j, "rcvbuf");
		if (k->sock)
			json_u64(&j, k->sock->rcvbuf);
		else
			json_null(&j);
		json_key(&j, "queued");
		if (k->sock)
			json_u64(&j, k->sock->queued);
		else
			json_null(&j);
		json_key(&j, "causes");
		json_obj_begin(&j);
		for (int c = 0; c < CAUSE_MAX; c++)
			if (k->cause[c] || k->cause_skbs[c])
				jkey_u64(&j, cause__name(c), k->cause[c]);
		json_obj_end(&j);
		json_key(&j, "reasons");
		json_arr_begin(&j);
		for (int r = 0; r < k->nreasons; r++) {
			json_obj_begin(&j);
			jkey_u64(&j, "reason", k->reasons[r].reason);
			json_key(&j, "name");
			json_str(&j, reason_name(rp, k->reasons[r].reason));
			jkey_str(&j, "cause", cause__name(k->reasons[r].cause));
			jkey_u64(&j, "drops", k->reasons[r].drops);
			jkey_u64(&j, "skb_events", k->reasons[r].skbs);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_key(&j, "locations");
		json_arr_begin(&j);
		for (int r = 0; r < k->nlocs; r++) {
			json_obj_begin(&j);
			snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)k->locs[r].addr);
			jkey_str(&j, "addr", buf);
			json_key(&j, "symbol");
			json_str(&j, symbol_name(rp, k->locs[r].addr));
			jkey_u64(&j, "drops", k->locs[r].drops);
			jkey_u64(&j, "skb_events", k->locs[r].skbs);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	jkey_u64(&j, "sockets_total", a->nsocks);

	json_key(&j, "unattributed");
	json_arr_begin(&j);
	for (int i = 0; i < a->nflows; i++) {
		const struct agg_flow *f = &a->flows[i];

		json_obj_begin(&j);
		jkey_str(&j, "cause", cause__name(f->cause));
		jkey_u64(&j, "netns", f->netns);
		json_key(&j, "netns_name");
		json_str(&j, netns_name(rp, f->netns));
		if (f->family == AF_INET || f->family == AF_INET6) {
			fmt_addr(buf, sizeof(buf), f->family, f->saddr);
			jkey_str(&j, "saddr", buf);
			fmt_addr(buf, sizeof(buf), f->family, f->daddr);
			jkey_str(&j, "daddr", buf);
		} else {
			json_key(&j, "saddr");
			json_null(&j);
			json_key(&j, "daddr");
			json_null(&j);
		}
		jkey_u64(&j, "dport", f->dport);
		jkey_u64(&j, "drops", f->drops);
		jkey_u64(&j, "skb_events", f->skbs);
		json_obj_end(&j);
	}
	json_arr_end(&j);

	json_key(&j, "totals");
	json_obj_begin(&j);
	jkey_u64(&j, "drops", a->drops);
	jkey_u64(&j, "skb_events", a->skbs);
	/* as top's: runs the kernel skipped, their drops in no count */
	jkey_u64(&j, "missed", meta_missed(rp));
	json_key(&j, "causes");
	json_obj_begin(&j);
	for (int c = 0; c < CAUSE_MAX; c++) {
		if (!a->cause[c] && !a->cause_skbs[c])
			continue;
		json_key(&j, cause__name(c));
		json_obj_begin(&j);
		jkey_u64(&j, "drops", a->cause[c]);
		jkey_u64(&j, "skb_events", a->cause_skbs[c]);
		json_obj_end(&j);
	}
	json_obj_end(&j);
	json_obj_end(&j);

	json_key(&j, "reconcile");
	json_arr_begin(&j);
	for (int i = 0; i < a->nrecon; i++) {
		const struct agg_recon *r = &a->recon[i];
		int64_t diff = recon_diff(r);

		json_obj_begin(&j);
		jkey_u64(&j, "netns", r->netns);
		json_key(&j, "netns_name");
		json_str(&j, netns_name(rp, r->netns));
		jkey_str(&j, "cause", cause__name(r->cause));
		json_key(&j, "counters");
		json_arr_begin(&j);
		for (const char *p = r->counters; *p;) {
			size_t n = strcspn(p, "+");

			snprintf(buf, sizeof(buf), "%.*s", (int)n, p);
			json_str(&j, buf);
			p += n;
			if (*p)
				p++;
		}
		json_arr_end(&j);
		json_key(&j, "kernel");
		if (r->have_kernel)
			json_u64(&j, r->kernel);
		else
			json_null(&j);
		jkey_u64(&j, "udpdrop", r->udpdrop);
		jkey_str(&j, "status", !r->have_kernel ? "no_counter" : diff ? "differ" : "match");
		json_key(&j, "diff");
		json_i64(&j, r->have_kernel ? diff : 0);
		json_obj_end(&j);
	}
	json_arr_end(&j);

	/* every interval between snapshots, unmerged */
	json_key(&j, "timeline");
	json_arr_begin(&j);
	nrows = timeline(rp, &rows);
	for (int i = 0; i < nrows; i++)
		json_tl_row(&j, &rows[i], false);
	free(rows);
	json_arr_end(&j);

	/* the findings, as the text's Advice section (keys are a contract) */
	json_key(&j, "advice");
	json_arr_begin(&j);
	{
		struct adv_item *v;
		int n = advice_items(rp, a, top, &v);

		for (int i = 0; i < n; i++)
			for (int k = 0; k < v[i].nf; k++) {
				const struct adv_item *it = &v[i];
				const struct advice_json_socket sock = {
					.known = it->sock >= 0,
					.id = it->sock >= 0 ? a->socks[it->sock].cookie : 0,
					.by_inode = it->sock >= 0 && a->socks[it->sock].by_inode,
				};

				advice__json_begin(&j, &it->f[k], &sock);
				advice__json_end(&j, &it->f[k], true);
			}
		free(v);
	}
	json_arr_end(&j);
	if (by != REPORT_BY_SOCKET)
		json_by(rp, a, by, &j);
	json_obj_end(&j);
	sb_printf(out, "\n");
}

void report__print(const struct report *rp, const struct report_opts *o,
		   struct strbuf *out)
{
	uint64_t top = o->top ? o->top : REPORT_DEFAULT_TOP;
	size_t start = out->len;
	struct agg a;

	build(rp, &a);
	if (o->json) {
		print_json(rp, &a, top, o->by, out); /* json.c escapes every string */
	} else {
		print_text(rp, &a, top, o->by, out);
		/*
		 * The gate all text passes, whatever section printed it and
		 * however: names from the file are also made printable where
		 * they are formatted (a newline in one must not forge a line),
		 * but a section that forgets cannot reach the terminal.
		 */
		if (out->len > start)
			mem_printable(out->buf + start, out->len - start, true);
	}
	agg_free(&a);
}
