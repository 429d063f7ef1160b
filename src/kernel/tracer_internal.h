/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the tracer's files share, and no one else: tracer.c (probes,
 * loading, attaching), tracer_read.c (reading the maps), tracer_windows.c
 * (drop windows), tracer_retire.c (giving entries back). The public API
 * is tracer.h.
 */
#ifndef UD_TRACER_INTERNAL_H
#define UD_TRACER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tracer.h"
#include "udpdrop.h"

struct bpf_map; /* libbpf's */

/* A socket bucket on one CPU: where a drop window was taken last. */
struct win_cpu_key {
	struct ud_key key;
	uint32_t cpu, pad;
};

/* A flow's counts when they last moved, and when that was. */
struct flow_seen {
	struct ud_val v;
	uint64_t since_ns;
};

/* A socket's deliveries window as the ring names it (rx_win_close). */
static inline struct ud_key tracer_rx_win_key(uint64_t id)
{
	struct ud_key k = { .cookie = id & ~UD_RX_INODE,
			    .flags = UD_KEY_SOCK | UD_KEY_DELIVERED |
				     (id & UD_RX_INODE ? UD_KEY_INODE : 0) };

	return k;
}

static inline void tracer_add_val(struct ud_val *sum, const struct ud_val *v)
{
	sum->datagrams += v->datagrams;
	sum->skbs += v->skbs;
	sum->bytes += v->bytes;
}

/*
 * Deliveries add up, the peak is the most any CPU saw; where the socket
 * lives is on the copy of the CPU that made the entry (the others' zero).
 */
static inline void tracer_add_rx(struct ud_rx *sum, const struct ud_rx *v)
{
	sum->datagrams += v->datagrams;
	if (v->peak > sum->peak)
		sum->peak = v->peak;
	if (v->netns && !sum->netns) {
		sum->netns = v->netns;
		sum->lport = v->lport;
		sum->family = v->family;
		sum->proto = v->proto;
	}
}

/* tracer_read.c: room for a whole per-CPU map's keys and values in one batch. */
int tracer_ensure_bufs(struct tracer *t, struct bpf_map *map);

/* tracer_windows.c */
/* The windows' ring callback (ring_buffer__new's ctx: the tracer). */
int tracer_win_record(void *ctx, void *data, size_t len);
void tracer_win_take(struct tracer *t, const struct ud_key *k, uint32_t cpu, uint64_t word);
void tracer_win_open(struct tracer *t, const struct ud_key *k, uint32_t cpu, uint64_t word);
int tracer_config_hz(void);
uint64_t tracer_win_ticks(int hz);
uint64_t tracer_win_now(const struct tracer *t);
int tracer_win_read_begin(struct tracer *t);
int tracer_win_read_end(struct tracer *t);

/* tracer_events.c: the event rings (before load: sized, and made; after
 * load, before attach: installed), and their fds closed */
struct udpdrop_bpf;
void tracer_events_size(struct tracer *t, struct udpdrop_bpf *skel,
			const struct tracer_opts *o);
int tracer_events_install(struct tracer *t, struct udpdrop_bpf *skel);
void tracer_events_free(struct tracer *t);

/* tracer_object.c: the skeleton opened on udpdrop.bpf.o (kfuncs: packet
 * headers read in place, 6.2+) or on udpdrop_compat.bpf.o (probe reads);
 * NULL and errno on failure */
struct udpdrop_bpf *tracer_object_open(bool kfuncs);

/* tracer_retire.c: can slots be given back (membarrier GLOBAL works)? */
bool tracer_slots_can_retire(void);

#endif
