// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Drop windows (UD_WIN_NS, tracer.h: tracer__windows): each CPU's window
 * of a socket bucket, taken once, from the ring the programs hand closed
 * ones to or from the bucket's open word a read finds, whichever comes
 * first.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/times.h>
#include <bpf/libbpf.h>
#include "tracer.h"
#include "tracer_internal.h"
#include "util.h"

static int win_push(struct tracer_win **v, size_t *n, size_t *cap, const struct tracer_win *w)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct tracer_win *p = realloc(*v, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = *w;
	return 0;
}

/*
 * One CPU's window of a socket bucket, from the ring or the bucket's open
 * word: taken once. Per bucket and CPU, windows close in time order and
 * the open word is the newest, so one not after the latest taken is one
 * taken already (from the other place).
 */
void tracer_win_take(struct tracer *t, const struct ud_key *k, uint32_t cpu, uint64_t word)
{
	struct win_cpu_key ck = { .cpu = cpu };
	struct tracer_win w = { .cpu = cpu };
	uint32_t *done;
	int created;

	if (!(k->flags & UD_KEY_SOCK) || !UD_WIN_COUNT(word))
		return;
	ck.key = *k;
	done = htab__upsert(&t->win_done, &ck, &created);
	if (!done) {
		t->win_err = -ENOMEM;
		return;
	}
	if (!created && UD_WIN_INDEX(word) <= *done)
		return;
	*done = UD_WIN_INDEX(word);
	w.key = *k;
	w.win = UD_WIN_INDEX(word);
	w.datagrams = UD_WIN_COUNT(word);
	if (win_push(&t->wins, &t->nwins, &t->wins_cap, &w))
		t->win_err = -ENOMEM;
}

/* A read's open word: kept, taken after the ring is drained (tracer__read). */
void tracer_win_open(struct tracer *t, const struct ud_key *k, uint32_t cpu, uint64_t word)
{
	struct tracer_win w = { .key = *k, .win = UD_WIN_INDEX(word), .cpu = cpu,
				.datagrams = word };

	struct win_cpu_key ck = { .key = *k, .cpu = cpu };
	const uint32_t *done;

	if (!t->win_reading || !(k->flags & UD_KEY_SOCK) || !UD_WIN_COUNT(word) ||
	    w.win >= t->win_before)
		return;
	/* a bucket keeps its last window's word: once taken, not again */
	done = htab__find(&t->win_done, &ck);
	if (done && w.win <= *done)
		return;
	if (win_push(&t->opens, &t->nopens, &t->opens_cap, &w))
		t->win_err = -ENOMEM;
}

int tracer_win_record(void *ctx, void *data, size_t len)
{
	const struct ud_win *r = data;

	if (len >= sizeof(*r))
		tracer_win_take(ctx, &r->key, r->cpu, r->win);
	return 0;
}

int tracer__drain_windows(struct tracer *t)
{
	int n;

	if (!t->win_rb)
		return 0;
	n = ring_buffer__consume(t->win_rb);
	if (t->win_err) {
		int err = t->win_err;

		t->win_err = 0;
		return err;
	}
	return n < 0 ? n : 0;
}

const struct tracer_win *tracer__windows(const struct tracer *t, size_t *n, uint32_t *before)
{
	*n = t->nwins;
	*before = t->win_before;
	return t->wins;
}

void tracer__windows_clear(struct tracer *t)
{
	t->nwins = 0;
	t->win_read = false;
}

/*
 * The window in progress, on the programs' scale (win_ticks): on the
 * jiffies clock times(2)'s ticks (USER_HZ, 100 a second: 10 a window;
 * tracer_win_ticks says when they are exact), else CLOCK_MONOTONIC's.
 */
uint64_t tracer_win_now(const struct tracer *t)
{
	struct tms tm;

	return t->win_ticks ? (uint64_t)times(&tm) / (UD_WIN_NS / (1000000000 / 100)) : now_ns() / UD_WIN_NS;
}

/*
 * Before the maps are read: what the programs handed over so far, and
 * the window no CPU can still be adding to when the read ends (one before
 * the one in progress now: a program that read the clock in it may still
 * be counting when the read looks).
 */
int tracer_win_read_begin(struct tracer *t)
{
	uint64_t idx = tracer_win_now(t);
	uint32_t before = t->win_all ? UINT32_MAX : (uint32_t)(idx ? idx - 1 : 0);

	/* several reads between two hand-overs (counts, deliveries): the
	 * earliest one's, which every read has seen closed */
	if (!t->win_read || before < t->win_before)
		t->win_before = before;
	t->win_read = true;
	t->nopens = 0;
	t->win_reading = true;
	return tracer__drain_windows(t);
}

/*
 * After: a window closed while the maps were read is in the ring now,
 * taken first; then the open words of closed windows (their ring records,
 * when they come, are the same windows: not taken again).
 */
int tracer_win_read_end(struct tracer *t)
{
	int err;

	t->win_reading = false;
	err = tracer__drain_windows(t);
	for (size_t i = 0; !err && i < t->nopens; i++) {
		const struct tracer_win *o = &t->opens[i];

		if (o->win < t->win_before)
			tracer_win_take(t, &o->key, o->cpu, o->datagrams);
	}
	if (!err && t->win_err)
		err = t->win_err;
	t->win_err = 0;
	return err;
}
