// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop record's events: from the BPF ring buffer into EVENT records,
 * held (-p, a COMMAND, -N's closing queues) until their socket's owner
 * is known, and the waits between snapshots that take them.
 */
#include <errno.h>
#include <bpf/libbpf.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "model.h"
#include "owner.h"
#include "proc.h"
#include "record_internal.h"
#include "trace.h"
#include "util.h"
#include "watch.h"

/*
 * ring_buffer__poll stops on a callback error: this one means "time to
 * look at the clock" (a snapshot, a stop, the owner's sockets), not a
 * failure (the event was taken first).
 */
#define YIELD (-ECANCELED)
/*
 * The programs wake us only when a quarter of the ring is waiting (a
 * wake-up per event would cost more than the event), so look at the
 * ring on this timer too: an event waits at most this long in the ring.
 */
#define POLL_MS 20
/* Most bytes of events held at once (then they are shed, and counted). */
#define HELD_MAX (32u << 20)

/* One event from the ring into an EVENT record. */
static int write_event(struct recorder *rc, const struct ud_event *e, size_t size)
{
	struct trace_event te;
	size_t cap = size - sizeof(*e);
	int err;

	if (cap > e->cap_len)
		cap = e->cap_len;
	if (cap > TRACE_CAP_MAX)
		cap = TRACE_CAP_MAX;
	te.time_ns = e->time_ns;
	te.cpu = e->cpu;
	te.netns = e->netns;
	te.cookie = e->cookie;
	te.cause = model__cause(&rc->w->m, e->reason, e->flags);
	te.reason = e->reason;
	te.location = e->location;
	te.flags = e->flags;
	te.family = e->family;
	te.proto = e->proto;
	memcpy(te.saddr, e->saddr, 16);
	memcpy(te.daddr, e->daddr, 16);
	te.sport = e->sport;
	te.dport = e->dport;
	te.len = e->len;
	te.datagrams = e->datagrams;
	te.caplen = cap;
	memcpy(te.cap, e->cap, cap);
	err = trace_writer__event(rc->tw, &te);
	if (err) {
		rc->err = err;
		return err;
	}
	rc->events++;
	return 0;
}

/*
 * The drop key an event was counted under: the fields are the same, the
 * flow too for a drop with no socket (parsed from the same packet); a
 * socket's key keeps no flow.
 */
static void event_key(const struct ud_event *e, struct ud_key *k)
{
	memset(k, 0, sizeof(*k));
	k->cookie = e->cookie;
	k->location = e->location;
	k->netns = e->netns;
	k->reason = e->reason;
	k->flags = e->flags;
	k->family = e->family;
	k->proto = e->proto;
	if (!(e->flags & UD_KEY_SOCK)) {
		memcpy(k->saddr, e->saddr, 16);
		memcpy(k->daddr, e->daddr, 16);
		k->dport = e->dport;
	}
}

/* Keep an event until its scope is known (-p, COMMAND, -N's closing
 * queues); shed when full. */
static void hold_event(struct recorder *rc, const struct ud_event *e, size_t size)
{
	size_t need = (8 + size + 7) & ~(size_t)7;
	uint64_t sz = size;

	if (rc->held_len + need > HELD_MAX) {
		rc->held_shed[model__cause(&rc->w->m, e->reason, e->flags)]++;
		return;
	}
	if (rc->held_len + need > rc->held_cap) {
		size_t cap = rc->held_cap ? rc->held_cap * 2 : 1u << 16;
		void *p;

		while (cap < rc->held_len + need)
			cap *= 2;
		p = realloc(rc->held, cap);
		if (!p) {
			rc->held_shed[model__cause(&rc->w->m, e->reason, e->flags)]++;
			return;
		}
		rc->held = p;
		rc->held_cap = cap;
	}
	if (!rc->undescribed && !owner__described(&rc->own, e->cookie, e->flags))
		rc->undescribed = true;
	memcpy(rc->held + rc->held_len, &sz, 8);
	memcpy(rc->held + rc->held_len + 8, e, size);
	rc->held_len += need;
}

/*
 * The held events whose owner is now known: the process's are written
 * (in the order they came), the others left out; the undecided stay,
 * unless `final` (after a snapshot's refresh nothing more will be
 * learned about them).
 */
int record_release_held(struct recorder *rc, bool final)
{
	size_t off = 0, keep = 0;
	struct ud_key k;
	int err = 0;

	while (off < rc->held_len && !err) {
		uint64_t sz;
		const struct ud_event *e;
		size_t len;

		memcpy(&sz, rc->held + off, 8);
		len = (8 + sz + 7) & ~(size_t)7;
		e = (const void *)(rc->held + off + 8); /* 8-aligned: see hold_event */
		event_key(e, &k);
		switch (owner__judge(&rc->own, &k, final)) {
		case OWNER_YES:
			err = write_event(rc, e, sz);
			break;
		case OWNER_NO:
			rc->others++;
			break;
		case OWNER_UNKNOWN:
			if (keep != off)
				memmove(rc->held + keep, rc->held + off, len);
			keep += len;
			break;
		}
		off += len;
	}
	if (!err)
		rc->held_len = keep;
	return err;
}

int record_on_event(void *ctx, void *data, size_t size)
{
	struct recorder *rc = ctx;
	const struct ud_event *e = data;
	int err;

	if (size < sizeof(*e))
		return 0; /* cannot happen: the program reserves at least that */
	rc->seen++;
	if (rc->hold || (rc->w->m.opts.netns && (e->flags & UD_KEY_CLOSE))) {
		hold_event(rc, e, size);
	} else {
		err = write_event(rc, e, size);
		if (err)
			return err;
	}
	/* a storm never empties the ring: look at the clock now and then */
	if (!(rc->seen & 1023)) {
		uint64_t now = now_ns();

		if (record_stopping() || now >= rc->deadline ||
		    (rc->hold && now - rc->own.scan_ns >= rc->scan_every))
			return YIELD;
	}
	return 0;
}

/*
 * -p / COMMAND, every scan_every: look for the process's sockets (a
 * socket that opens, drops and closes between two snapshots is still
 * its), describe the sockets of held events while they exist, and write
 * the held events whose owner is known.
 */
static int owner_tick(struct recorder *rc, uint64_t now)
{
	struct model *m = &rc->w->m;
	int err;

	if (!m->opts.pid || now - rc->own.scan_ns < rc->scan_every)
		return 0;
	/* a new socket of the process: described now, while it exists */
	if (owner__scan(&rc->own, now) > 0)
		rc->undescribed = true;
	if (rc->undescribed) {
		err = watch__refresh(rc->w);
		if (err)
			return err;
		rc->undescribed = false;
		owner__scan(&rc->own, now);
	}
	/* -p: stop when the process is gone (a COMMAND ends by SIGCHLD) */
	if (!m->opts.pid_tree && !rc->lingering && proc__check(m->opts.pid) == -ESRCH)
		rc->pid_gone = true;
	return rc->hold ? record_release_held(rc, false) : 0;
}

/* Wait for events until `deadline` (or a stop), writing them. */
int record_poll_events(struct recorder *rc, uint64_t deadline)
{
	rc->deadline = deadline;
	while (!record_stopping() && !rc->pid_gone) {
		uint64_t now = now_ns();
		int ms, n;

		if (now >= deadline)
			return 0;
		n = owner_tick(rc, now);
		if (n)
			return n;
		ms = (int)((deadline - now + 999999) / 1000000);
		n = ring_buffer__poll(rc->rb, ms < POLL_MS ? ms : POLL_MS);
		/* a timeout consumes nothing: the ring may hold events anyway */
		if (n >= 0 || n == -EINTR)
			n = ring_buffer__consume(rc->rb);
		if (rc->err)
			return rc->err;
		if (n < 0 && n != -EINTR && n != YIELD)
			return n;
	}
	return 0;
}

/* Everything left in the ring (the programs are detached: it ends). */
int record_drain_events(struct recorder *rc)
{
	int n;

	rc->deadline = UINT64_MAX;
	do {
		n = ring_buffer__consume(rc->rb);
	} while (n > 0 || n == YIELD);
	if (rc->err)
		return rc->err;
	return n < 0 ? n : 0;
}

/* --no-events: wait for the deadline, looking for the process's sockets. */
int record_sleep_until(struct recorder *rc, uint64_t deadline)
{
	while (!record_stopping() && !rc->pid_gone) {
		uint64_t now = now_ns(), t = deadline;
		struct timespec ts;
		int err;

		if (now >= deadline)
			return 0;
		if (rc->w->m.opts.pid) {
			err = owner_tick(rc, now);
			if (err)
				return err;
			if (deadline - now > rc->scan_every)
				t = now + rc->scan_every;
		}
		ts.tv_sec = t / 1000000000ull;
		ts.tv_nsec = t % 1000000000ull;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	return 0;
}
