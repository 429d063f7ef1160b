/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What udpdrop record's files share, and no one else: record.c (options,
 * signals, the run), record_snapshot.c (every record but EVENT),
 * record_events.c (the events).
 */
#ifndef UD_RECORD_INTERNAL_H
#define UD_RECORD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "evring.h"
#include "htab.h"
#include "model.h"
#include "owner.h"
#include "trace.h"
#include "watch.h"

#define WHO "udpdrop record"


struct record_head; /* record_events.c */

struct recorder {
	struct trace_writer *tw;
	struct watch *w;
	struct htab syms;      /* location -> u8: already in a SYMBOLS record */
	struct htab names;     /* NAME_NETNS | inode, a cookie or NAME_POD | cookie -> a hash of its last value in META */
	uint64_t drops;        /* datagrams in the last COUNTS */
	uint64_t missed;       /* the kernel's skipped runs, as last in META */
	/* events: the rings (one per CPU, or one shared), merged by time */
	struct evrings rings;
	struct record_head *heads; /* each ring's next record (record_events.c) */
	bool events_on;        /* the rings are open */
	uint64_t events;       /* EVENT records written */
	uint64_t deadline;     /* now_ns() at which polling yields to a snapshot */
	int err;               /* the first write error met in the callback */
	uint64_t *shed_seen;   /* UD_SHED_SLOTS: cumulative, as last written */
	uint64_t *shed_now;
	uint64_t shed;         /* events shed, all causes */
	/*
	 * -N: of those, closing queues' (UD_KEY_CLOSE): the kernel knows no
	 * netns for them, so it sheds them before the netns filter and they
	 * may be any netns's (the events that fit are filtered here).
	 */
	uint64_t shed_any_netns;
	uint64_t seen;         /* events taken from the ring */
	/*
	 * -p / COMMAND: whose drops are kept (owner.c). An event's socket may
	 * be newer than what udpdrop knows of the process, so events wait
	 * here (each after a u64 size, 8-aligned) until the owner is known.
	 */
	struct owner own;
	bool hold;
	uint8_t *held;
	size_t held_len, held_cap;
	uint64_t held_shed[CAUSE_MAX]; /* events that found it full */
	uint64_t others;       /* events of sockets not the process's: left out */
	bool undescribed;      /* a held event's socket is not in the socket table yet */
	bool pid_gone;         /* -p: the process exited */
	uint64_t scan_every;   /* ns between looks at the process's sockets */
	bool lingering;        /* the process ended: the last wait (CLOSE_LINGER_NS) */
	struct htab win_ids;   /* -p: socket identities COUNTS kept: their windows go too */
};

/* record.c: time to stop (a signal, the COMMAND's end)? */
bool record_stopping(void);

/* record_snapshot.c */
int record_write_meta(struct trace_writer *tw, struct model *m, int argc,
		      char **argv, double start_wall, bool m_events,
		      uint32_t cap_len);
int record_write_reasons(struct trace_writer *tw, const struct model *m);
int record_write_ifaces(struct trace_writer *tw, struct model *m);
/* One snapshot: what the last refresh (or the baseline) read. */
int record_snapshot(struct recorder *rc, uint64_t t);

/* record_events.c */
/* Open the event rings of the tracer: 0 or -errno. */
int record_open_events(struct recorder *rc);
void record_close_events(struct recorder *rc);
/* Wait for events until `deadline` (or a stop), writing them. */
int record_poll_events(struct recorder *rc, uint64_t deadline);
/* Everything left in the ring (the programs are detached: it ends). */
int record_drain_events(struct recorder *rc);
/* --no-events: wait for the deadline, looking for the process's sockets. */
int record_sleep_until(struct recorder *rc, uint64_t deadline);
/* Write the held events whose owner is known (all of them when final). */
int record_release_held(struct recorder *rc, bool final);

#endif
