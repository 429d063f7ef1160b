// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The rows, from counted pairs (rows.h): the one rule by which top's model
 * and report's replay sum a socket's or a flow's counts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "rows.h"

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void rows__key(struct row_key *rk, const struct ud_key *k, enum cause c,
	       uint64_t row_id, uint32_t netns)
{
	memset(rk, 0, sizeof(*rk));
	rk->netns = netns;
	if (row_id) {
		/* one row per socket, whatever its counts' family or protocol */
		rk->kind = ROW_SOCKET;
		rk->cookie = row_id;
		return;
	}
	rk->kind = ROW_FLOW;
	rk->family = k->family;
	rk->proto = k->proto;
	rk->cause = c;
	memcpy(rk->saddr, k->saddr, 16);
	memcpy(rk->daddr, k->daddr, 16);
	rk->dport = k->dport;
	rk->overflow = !!(k->flags & UD_KEY_OVERFLOW);
}

int rows__init(struct htab *rows)
{
	return htab__init(rows, sizeof(struct row_key), sizeof(struct row));
}

struct row *rows__get(struct htab *rows, const struct row_key *rk)
{
	int created;
	struct row *r = htab__upsert(rows, rk, &created);

	if (r && created)
		r->key = *rk;
	return r;
}

/* Room for one more entry of a row's list; false: out of memory. */
static bool grow(void **v, int n, int *cap, size_t size)
{
	int ncap;
	void *p;

	if (n < *cap)
		return true;
	ncap = *cap ? *cap * 2 : 4;
	p = realloc(*v, (size_t)ncap * size);
	if (!p)
		return false;
	*v = p;
	*cap = ncap;
	return true;
}

int row__add(struct row *r, const struct ud_key *k, const struct ud_val *v,
	     enum cause c)
{
	int i;

	for (i = 0; i < r->nreasons; i++)
		if (r->reasons[i].reason == k->reason && r->reasons[i].cause == c)
			break;
	if (i == r->nreasons) {
		if (!grow((void **)&r->reasons, r->nreasons, &r->reasons_cap,
			  sizeof(*r->reasons)))
			return -ENOMEM;
		r->reasons[i] = (struct row_reason){ .reason = k->reason, .cause = c };
		r->nreasons++;
	}
	r->reasons[i].drops += ud_drops(k, v);
	r->reasons[i].skbs += v->skbs;
	for (i = 0; i < r->nlocs; i++)
		if (r->locs[i].addr == k->location)
			break;
	if (i == r->nlocs) {
		if (!grow((void **)&r->locs, r->nlocs, &r->locs_cap, sizeof(*r->locs)))
			return -ENOMEM;
		r->locs[i] = (struct row_loc){ .addr = k->location };
		r->nlocs++;
	}
	r->locs[i].drops += ud_drops(k, v);
	r->locs[i].skbs += v->skbs;

	r->dirty = true;
	r->drops += ud_drops(k, v);
	r->skbs += v->skbs;
	r->bytes += v->bytes;
	r->cause[c] += ud_drops(k, v);
	r->cause_skbs[c] += v->skbs;
	r->cause_bytes[c] += v->bytes;
	r->cause_units[c] += ud_kernel_units(k, v);
	if ((k->flags & (UD_KEY_GRO | UD_KEY_CHILD)) == UD_KEY_GRO) {
		r->gro_skbs += v->skbs;
		r->gro_dgrams += v->datagrams;
	}
	/*
	 * bytes are skb->len summed over the skb events: a GSO/GRO skb of n
	 * datagrams carries all n (so per datagram, not per skb); a fragment
	 * carries a piece of one (datagrams 0, or 1 for the one that stands
	 * for it), and a frag_list member's bytes are already in its parent's
	 * len: both left out, or the average is not a datagram's size.
	 */
	if (v->datagrams && !(k->flags & (UD_KEY_FRAG | UD_KEY_CHILD))) {
		r->size_bytes[c] = add_sat(r->size_bytes[c], v->bytes);
		r->size_dgrams[c] = add_sat(r->size_dgrams[c], v->datagrams);
	}
	r->flags |= k->flags;
	if ((k->flags & (UD_KEY_SOCK | UD_KEY_CLOSE)) == (UD_KEY_SOCK | UD_KEY_CLOSE) &&
	    k->dport) {
		r->close_port = k->dport;
		r->close_family = k->family;
		r->close_proto = k->proto;
	}
	return 0;
}

int rows__add(struct htab *rows, const struct ud_key *k, const struct ud_val *v,
	      enum cause c, uint64_t row_id, uint32_t netns, struct row **out)
{
	struct row_key rk;
	struct row *r;

	rows__key(&rk, k, c, row_id, netns);
	r = rows__get(rows, &rk);
	if (!r || row__add(r, k, v, c))
		return -ENOMEM;
	if (out)
		*out = r;
	return 0;
}

void row__reset(struct row *r)
{
	r->drops = r->skbs = r->bytes = 0;
	memset(r->cause, 0, sizeof(r->cause));
	memset(r->cause_skbs, 0, sizeof(r->cause_skbs));
	memset(r->cause_bytes, 0, sizeof(r->cause_bytes));
	memset(r->cause_units, 0, sizeof(r->cause_units));
	r->gro_skbs = r->gro_dgrams = 0;
	memset(r->size_bytes, 0, sizeof(r->size_bytes));
	memset(r->size_dgrams, 0, sizeof(r->size_dgrams));
	r->nreasons = 0;
	r->nlocs = 0;
	r->dirty = false;
	r->sock_alive = false;
}

void row__free(struct row *r)
{
	free(r->reasons);
	free(r->locs);
	r->reasons = NULL;
	r->locs = NULL;
	r->nreasons = r->reasons_cap = r->nlocs = r->locs_cap = 0;
}

void rows__free(struct htab *rows)
{
	size_t it = 0;
	const void *key;
	void *val;

	while (htab__next(rows, &it, &key, &val))
		row__free(val);
	htab__free(rows);
}

int row__cmp_total(const struct row *x, const struct row *y)
{
	if (x->drops != y->drops)
		return x->drops > y->drops ? -1 : 1;
	if (x->skbs != y->skbs)
		return x->skbs > y->skbs ? -1 : 1;
	return memcmp(&x->key, &y->key, sizeof(x->key));
}

bool row__avg_size(const struct row *r, enum cause c, double *out)
{
	if (c < 0 || c >= CAUSE_MAX || !r->size_dgrams[c] || !r->size_bytes[c] ||
	    c == CAUSE_FRAG_TIMEOUT || c == CAUSE_FRAG_TOO_FAR || c == CAUSE_FRAG_DUP)
		return false;
	*out = (double)r->size_bytes[c] / r->size_dgrams[c];
	return true;
}

enum cause row__main_cause(const struct row *r)
{
	int best = CAUSE_OTHER;

	for (int c = 0; c < CAUSE_MAX; c++)
		if (r->cause[c] > r->cause[best] ||
		    (r->cause[c] == r->cause[best] &&
		     r->cause_skbs[c] > r->cause_skbs[best]))
			best = c;
	return best;
}

void row__flow(const struct row *r, char *buf, int len)
{
	flow__format(buf, len, r->key.family, r->key.saddr, r->key.daddr, r->key.dport);
}

const char *row__flow_why(const struct row *r)
{
	return flow__why(r->flags & UD_KEY_SOCK, r->key.cause, r->key.netns, r->key.dport);
}

bool row__reason_shared(const struct row *r, int i)
{
	for (int k = 0; k < r->nreasons; k++)
		if (k != i && r->reasons[k].reason == r->reasons[i].reason)
			return true;
	return false;
}
