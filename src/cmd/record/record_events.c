// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop record's events: from the BPF event rings (one per CPU),
 * merged by time, into EVENT records,
 * held (-p, a COMMAND, -N's closing queues) until their socket's owner
 * is known, and the waits between snapshots that take them.
 */
#include <errno.h>
#include "evring.h"
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
 * "Time to look at the clock" (a snapshot, a stop, the owner's sockets)
 * from the event loop, not a failure (the event was taken first).
 */
#define YIELD (-ECANCELED)
/*
 * The programs wake us only when a quarter of a ring is waiting (a
 * wake-up per event would cost more than the event), so look at the
 * rings on this timer too: an event waits at most this long in a ring.
 */
#define POLL_MS 20
/*
 * How long a ring whose next record is still being written holds back
 * the other rings' later events (see merge_rings). A program writes its
 * record within microseconds of stamping it (it runs without being
 * preempted); one held longer (a PREEMPT_RT kernel) only lands out of
 * order in the file.
 */
#define BUSY_HOLD_NS (1000 * 1000ull)
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

/* One event taken from a ring: written, or held (-p, COMMAND, -N's
 * closing queues). 0, YIELD, or the write's error. */
static int on_event(struct recorder *rc, const void *data, size_t size)
{
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

/* What a ring's next record is, as merge_rings last looked. */
struct record_head {
	enum evring_head state;
	const void *data;
	uint32_t size;
	uint64_t time_ns; /* the event's (EVRING_RECORD) */
};

static void look(struct recorder *rc, int i)
{
	struct record_head *h = &rc->heads[i];

	h->state = evrings__peek(&rc->rings, i, &h->data, &h->size);
	h->time_ns = 0;
	if (h->state == EVRING_RECORD && h->size >= sizeof(struct ud_event))
		h->time_ns = ((const struct ud_event *)h->data)->time_ns;
}

/*
 * Write what the rings hold, merged by event time, so the file's EVENTs
 * are in time order as one shared ring gave them (report's burst windows
 * and a pcapng's packets read them in that order). Each CPU's ring is in
 * time order: the oldest next record of all rings is the next event,
 * once no ring can still bring an older one. A ring seen empty at or
 * after `seen` cannot: a program stamps its event (bpf_ktime_get_ns,
 * CLOCK_MONOTONIC as now_ns) after reserving it. A ring whose next record
 * is being written holds back events after seen - BUSY_HOLD_NS. final
 * (the programs are detached): every ring is complete, merge it all.
 * Returns 0 when nothing more can be written now, YIELD, or an error.
 */
static int merge_rings(struct recorder *rc, bool final)
{
	int n = rc->rings.n;

	for (;;) {
		uint64_t seen = now_ns();
		bool wrote = false;

		for (int i = 0; i < n; i++)
			look(rc, i);
		for (;;) {
			uint64_t bound = UINT64_MAX, best_t = UINT64_MAX;
			int best = -1, err;

			for (int i = 0; i < n; i++) {
				const struct record_head *h = &rc->heads[i];

				if (h->state == EVRING_RECORD) {
					if (best < 0 || h->time_ns < best_t) {
						best = i;
						best_t = h->time_ns;
					}
				} else if (h->state == EVRING_BUSY) {
					if (seen - BUSY_HOLD_NS < bound)
						bound = seen - BUSY_HOLD_NS;
				} else if (seen < bound) {
					bound = seen;
				}
			}
			if (best < 0)
				return 0;
			if (!final && best_t > bound)
				break; /* look again: the bound moves on */
			err = on_event(rc, rc->heads[best].data, rc->heads[best].size);
			evrings__take(&rc->rings, best);
			if (err)
				return err;
			wrote = true;
			look(rc, best);
		}
		if (!wrote)
			return 0;
	}
}

int record_open_events(struct recorder *rc)
{
	const int *fds;
	int n = tracer__event_rings(&rc->w->t, &fds), err;

	if (n < 0)
		return n;
	rc->heads = calloc(n, sizeof(*rc->heads));
	if (!rc->heads)
		return -ENOMEM;
	err = evrings__open(&rc->rings, fds, n);
	if (err) {
		free(rc->heads);
		rc->heads = NULL;
		return err;
	}
	rc->events_on = true;
	return 0;
}

void record_close_events(struct recorder *rc)
{
	if (rc->events_on)
		evrings__close(&rc->rings);
	free(rc->heads);
	rc->heads = NULL;
	rc->events_on = false;
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
		n = merge_rings(rc, false);
		if (rc->err)
			return rc->err;
		if (n == YIELD)
			continue;
		if (n < 0)
			return n;
		now = now_ns();
		if (now >= deadline)
			return 0;
		ms = (int)((deadline - now + 999999) / 1000000);
		n = evrings__wait(&rc->rings, ms < POLL_MS ? ms : POLL_MS);
		if (n < 0 && n != -EINTR)
			return n;
	}
	return 0;
}

/* Everything left in the rings (the programs are detached: it ends). */
int record_drain_events(struct recorder *rc)
{
	int n;

	rc->deadline = UINT64_MAX;
	do {
		n = merge_rings(rc, true);
	} while (n == YIELD);
	evrings__release(&rc->rings);
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
