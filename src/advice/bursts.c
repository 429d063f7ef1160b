// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Each live row's worst interval per cause (bursts.h): top records it
 * every refresh, doctor every sample tick, so both give the advice the
 * same figures. In the advice layer because what it keeps per cause is
 * the advice's own struct advice_track.
 */
#include "bursts.h"

int bursts__init(struct htab *h)
{
	return htab__init(h, sizeof(struct row_key), sizeof(struct live_burst));
}

static void burst_add(struct htab *h, const struct row *r, uint64_t tick, double dt, bool have_rx)
{
	struct live_burst *b;
	uint64_t rxd;
	int created;

	/* a quiet row (-a) has nothing to size for */
	if (!r->drops && !r->skbs && !htab__find(h, &r->key))
		return;
	b = htab__upsert(h, &r->key, &created);
	if (!b || (!created && b->tick == tick))
		return;
	/* refreshes it was out of view: quiet ones */
	if (!created && tick > b->tick + 1)
		b->intervals += (uint32_t)(tick - b->tick - 1);
	b->intervals++;
	b->tick = tick;
	/* deliveries since the last look; a row first seen now has no last
	 * look (its rx runs from the start, before it dropped), so its first
	 * interval is not measured */
	b->have_rx = have_rx && r->key.kind == ROW_SOCKET;
	rxd = r->rx > b->rx_prev ? r->rx - b->rx_prev : 0;
	b->rx_prev = r->rx;
	for (int c = 0; c < CAUSE_MAX; c++) {
		uint64_t d = r->cause[c] > b->prev[c] ? r->cause[c] - b->prev[c] : 0;

		advice__track(&b->track[c], d, dt, b->have_rx && !created, rxd);
		b->prev[c] = r->cause[c];
	}
	/* the queue of a socket the last dump found (a closed one's last
	 * figure would repeat as if looked at again), counted once more
	 * drops follow it: a queue drained between drops says bursts; one
	 * drained after the load ended says nothing */
	if (b->have_pending && r->drops > b->drops_prev) {
		if (!b->queue_looks || b->pending < b->queue_low)
			b->queue_low = b->pending;
		if (b->pending > b->queue_high)
			b->queue_high = b->pending;
		b->queue_looks++;
	}
	b->drops_prev = r->drops;
	b->have_pending = r->key.kind == ROW_SOCKET && r->have_sock && r->sock_alive && r->sock.have_mem;
	b->pending = b->have_pending ? r->sock.rmem : 0;
}

static bool row_exists(const void *key, void *val, void *rows)
{
	return htab__find(rows, key) != NULL;
}

void bursts__record(struct htab *h, struct model *m, uint64_t tick)
{
	/* rows the model has dropped (folded sockets): theirs go too (if
	 * out of memory they stay: they only cost room) */
	if (h->n > 64 && h->n > 2 * m->rows.n)
		htab__retain(h, row_exists, &m->rows);
	for (int i = 0; i < m->nview_sockets; i++)
		burst_add(h, m->view_sockets[i], tick, m->interval, m->have_rx);
	for (int i = 0; i < m->nview_flows; i++)
		burst_add(h, m->view_flows[i], tick, m->interval, false);
}
