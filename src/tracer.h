/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The loader: open the skeleton, set the load-time filters, pick the best
 * attach variant this kernel allows, load, attach (bpf_link: closing the
 * process detaches everything), and read the aggregated maps.
 */
#ifndef UD_TRACER_H
#define UD_TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include "htab.h"
#include "udpdrop.h"

enum attach_mode { ATTACH_AUTO, ATTACH_TP_BTF, ATTACH_RAW_TP, ATTACH_TRACEPOINT };

struct tracer_opts {
	uint32_t filter_netns;
	uint16_t filter_port;
	enum attach_mode mode;
	bool no_rx_sk;          /* use the pre-6.11 attribution path */
	bool no_rx;             /* do not count deliveries (sk_data_ready) */
	uint32_t map_entries;   /* 0: default */
	uint32_t frag_window_s; /* 0: default */
	/* per-drop events into the ring buffer (udpdrop record) */
	bool events;
	uint32_t cap_len;       /* packet bytes per event, <= UD_CAP_MAX */
	uint32_t ring_bytes;    /* ring size, a power of 2 pages; 0: default */
	/* kernel text ranges by enum ud_range (0, 0 if unknown) */
	uint64_t range_start[UD_RANGE_MAX], range_end[UD_RANGE_MAX];
};

struct tracer {
	struct udpdrop_bpf *skel;
	struct bpf_link *kfree_link, *fail_link, *rx_link;
	enum attach_mode mode;   /* the variant in use */
	bool rx_sk;              /* kfree_skb carries rx_sk and we use it */
	bool rx;                 /* deliveries are counted (sk_data_ready attached) */
	int ncpus;
	/* the per-CPU slot table, mapped read-only */
	const struct ud_slot *slots;
	size_t slots_len;
	uint32_t nslots;
	/* batch read buffers, bytes */
	void *keys, *vals;
	size_t keys_size, vals_size;
};

/* Exit-worthy failures: what failed, in one line for the user. */
struct tracer_error {
	int code;        /* negative errno */
	char msg[256];
};

const char *attach_mode__name(enum attach_mode m);
int attach_mode__parse(const char *s, enum attach_mode *m);

int tracer__open(struct tracer *t, const struct tracer_opts *o,
		 struct tracer_error *e);
void tracer__close(struct tracer *t);
/*
 * Read the cumulative counts. `drops` maps struct ud_key -> struct ud_val
 * (summed over CPUs; cleared first). overflow has UD_OVERFLOW_SLOTS slots.
 */
int tracer__read(struct tracer *t, struct htab *drops, struct ud_val *overflow,
		 uint64_t *stats);
/*
 * Read the deliveries: `rx` maps a socket identity (uint64_t: the cookie,
 * or UD_RX_INODE | inode) -> struct ud_rx, datagrams summed and peaks
 * maxed over CPUs, cumulative since the program attached; cleared first.
 * Without t->rx it is left empty. Datagrams that found the map full are
 * the stats' UD_STAT_RX_OVERFLOW (tracer__read).
 */
int tracer__read_rx(struct tracer *t, struct htab *rx);
/*
 * Events the kernel did not run the programs for: a kfree_skb while the
 * program was already running on that CPU (recursion_misses).
 */
uint64_t tracer__missed(struct tracer *t);
/*
 * Per-drop events (opened with o->events): the ring buffer's map fd, for
 * ring_buffer__new() (records are struct ud_event plus cap bytes).
 */
int tracer__events_fd(struct tracer *t);
/*
 * Events shed because the ring was full, cumulative, summed over CPUs:
 * UD_SHED_SLOTS counters (slot layout in udpdrop.h).
 */
int tracer__read_shed(struct tracer *t, uint64_t *shed);
/*
 * Stop tracing but keep the maps: after it, the counts and the events
 * in the ring no longer move, so a last read of both agrees exactly.
 */
void tracer__detach(struct tracer *t);
/* Program ids, for tests and `bpftool prog show id`. */
int tracer__prog_ids(struct tracer *t, uint32_t *ids, int n);

#endif
