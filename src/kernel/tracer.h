/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The loader: open the skeleton, set the load-time filters, pick the best
 * attach variant this kernel allows, load, attach (bpf_link: closing the
 * process detaches everything), and read the aggregated maps.
 */
#ifndef UD_TRACER_H
#define UD_TRACER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "htab.h"
#include "udpdrop.h"

struct ring_buffer; /* libbpf's */

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
	/* each event ring's size (a CPU's, or the one shared ring's), a
	 * power of 2 pages; 0: default (tracer__event_ring_default) */
	uint32_t ring_bytes;
	/* kernel text ranges by enum ud_range (0, 0 if unknown) */
	uint64_t range_start[UD_RANGE_MAX], range_end[UD_RANGE_MAX];
	/*
	 * Kernels without drop reasons: derive each drop's site (enum
	 * ud_site) in the kernel, from these function ranges (enum ud_loc
	 * each; 0, 0 unused). Also leaves rx_sk alone, as such kernels lack it.
	 */
	bool derive_sites;
	/* kernels with reasons: NOT_SPECIFIED drops named by site, as
	 * site_base + site (0: not); the same ranges name them */
	uint32_t site_base;
	uint64_t site_start[UD_SITE_RANGES], site_end[UD_SITE_RANGES];
	uint8_t site_loc[UD_SITE_RANGES];
};

/*
 * How full the kernel's tables are, after the last read: entries in use
 * and room. A full table does not lose counts (they go to the overflow
 * bucket by cause) but loses which socket they were.
 */
struct tracer_fill {
	uint32_t drops, drops_max; /* socket buckets (hash map) */
	uint32_t flows, flows_max; /* socketless buckets */
	uint32_t slots, slots_max; /* the per-CPU fast lane's owned slots */
	uint32_t rx, rx_max;       /* deliveries (hash map) */
	uint64_t retired;          /* entries given back so far (tracer__retire) */
};

/*
 * A drop window one CPU closed (UD_WIN_NS): a socket bucket's datagrams
 * in it on that CPU. The tracer hands each over once; the model sums the
 * CPUs' parts (windows.h).
 */
struct tracer_win {
	struct ud_key key;
	uint32_t win;       /* index: tracer_win_now's scale */
	uint32_t cpu;
	uint64_t datagrams;
};

struct tracer {
	struct udpdrop_bpf *skel;
	struct bpf_link *kfree_link, *fail_link, *rx_link;
	/* kmem:kmem_cache_free: names the socket of a purged queue (close_owner) */
	struct bpf_link *close_link;
	struct bpf_program *close_prog; /* loaded with close_owner, attached when armed */
	enum attach_mode mode;   /* the variant in use */
	bool rx_sk;              /* kfree_skb carries rx_sk and we use it */
	bool rx_sk_wanted;       /* ... or would, but for the object and mode (try_mode) */
	bool kfuncs;             /* udpdrop.bpf.o, not udpdrop_compat.bpf.o (tracer_object.c) */
	bool load_refused;       /* a variant's programs were refused (not its attach) */
	bool fail_names_skb;     /* udp_fail_queue_rcv_skb names its skb, before its kfree_skb (6.10+) */
	bool rx;                 /* deliveries are counted (sk_data_ready attached) */
	bool close_owner;        /* purged queues can be named by their sockets' free */
	bool close_armed;        /* ... and are: close_link attached (tracer__arm_close) */
	bool close_cache_arg;    /* kmem:kmem_cache_free passes the cache (6.1+) */
	bool sites;              /* drops named by site (o->derive_sites) */
	bool atomics;            /* BPF atomics (5.12+): the slot table is used */
	int ncpus;
	/* the per-CPU slot table, mapped (written only to give slots back) */
	struct ud_slot *slots;
	size_t slots_len;
	uint32_t nslots;
	/* batch read buffers, bytes */
	void *keys, *vals;
	size_t keys_size, vals_size;
	/*
	 * The last counts of entries given back (tracer__retire), added to
	 * every read: what user space sees stays cumulative, as if the
	 * entries were still in the kernel.
	 */
	struct htab retired;    /* struct ud_key -> struct ud_val */
	struct htab rx_retired; /* socket identity -> struct ud_rx */
	struct htab flows_seen; /* struct ud_key -> when its counts last moved */
	bool slots_retire;      /* membarrier(GLOBAL) works: slots can be given back */
	struct tracer_fill fill;
	/*
	 * Drop windows: the ring the programs hand closed ones to, the
	 * latest window taken per bucket and CPU (each is taken once, from
	 * the ring or from the bucket's open word, whichever comes first),
	 * the windows taken since tracer__windows_clear, and the open words
	 * a read found (taken after the ring is drained again).
	 */
	struct ring_buffer *win_rb;
	struct htab win_done;       /* struct { ud_key; u32 cpu, pad } -> uint32_t */
	struct tracer_win *wins, *opens;
	size_t nwins, wins_cap, nopens, opens_cap;
	bool win_reading;           /* a read is collecting open words */
	bool win_read;              /* a read since tracer__windows_clear */
	bool win_all;               /* the end: every open window is closed */
	uint64_t win_ticks;         /* the programs' clock: jiffies per window,
				       0: CLOCK_MONOTONIC (tracer_win_ticks) */
	uint32_t win_before;        /* windows before it were closed by every CPU
				       by the last read (0: none read yet) */
	int win_err;                /* -ENOMEM while taking one */
	/*
	 * Per-drop events (o->events): a ring per possible CPU
	 * (ev_per_cpu, their fds), else the one shared ring.
	 */
	bool ev_per_cpu, ev_per_cpu_probed;
	int *ev_fds, nev, ev_shared_fd;
	int ev_template_fd;         /* the inner maps' template while loading */
	bool ev_template_open;
	/* the array of the per-CPU rings, made and filled by us (a thread
	 * fills it while the verifier runs: tracer_events.c) */
	int ev_array_fd, ev_fill_err;
	bool ev_array_open, ev_filling;
	bool ev_array_used;         /* this load's skeleton took it */
	pthread_t ev_fill_thread;
	uint32_t ev_ring_bytes;     /* each ring's size */
	/* start-up: the kfree_skb program's attach (now_ns) and how long the
	 * last load (the verifier, mostly) took */
	uint64_t attached_ns, load_ns;
};

/* Exit-worthy failures: what failed, in one line for the user. */
struct tracer_error {
	int code;        /* negative errno */
	char msg[256];
};

/*
 * Kernel memory the tables take for --map-entries N (the three hash maps
 * are preallocated, a value per possible CPU): an estimate from their
 * key, value and per-entry overhead, as bpftool's memlock shows it.
 */
uint64_t tracer__map_bytes(uint32_t entries, int ncpus);

/* What this kernel offers udpdrop (doctor, -v). */
struct kernel_features {
	char release[65];
	bool btf;           /* /sys/kernel/btf/vmlinux */
	bool drop_reasons;  /* enum skb_drop_reason (5.17+) */
	bool rx_sk;         /* kfree_skb's rx_sk (6.11+) */
	bool sk_data_ready; /* sock:sk_data_ready (6.6+) */
	bool fail_tp;       /* udp:udp_fail_queue_rcv_skb */
	bool fail_tp_skb;   /* ... with the skb, fired before the free (6.10+) */
	bool tracefs;       /* skb:kfree_skb in tracefs (classic tracepoints) */
};
void tracer__features(struct kernel_features *f);
/* The kernel's BTF (NULL, errno set, where it has none), parsed once and
 * shared until tracer__open returns, which frees it: not the caller's. */
struct btf;
const struct btf *tracer__kernel_btf(void);
void tracer__features_line(const struct kernel_features *f, char *buf, size_t len);
/* The oldest kernel udpdrop supports (and whose drop sites it knows). */
#define TRACER_MIN_MAJOR 5
#define TRACER_MIN_MINOR 10
/*
 * -ENOTSUP and one line in msg when this kernel is older than that, else 0.
 * UDPDROP_KERNEL_RELEASE stands for uname's release (a testing aid).
 */
int tracer__kernel_too_old(char *msg, size_t len);

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
 * Give back the kernel's entries of sockets that have closed, so a long
 * run with short-lived sockets never fills the tables: ids are socket
 * identities (the cookie, or UD_RX_INODE | inode, as struct ud_rx keys
 * name them); `drops` is the snapshot just read (its keys say where the
 * sockets' entries are). Their counts are kept in user space and added to
 * every later read, so nothing any view shows changes; deliveries are kept
 * only where keep_rx[i] (a socket with a row), else forgotten (a closed
 * socket that never dropped is in no view). A drop that comes for such a
 * socket later makes a new entry, counted as usual.
 * Returns the number of entries given back, or a negative errno.
 */
int tracer__retire(struct tracer *t, const struct htab *drops,
		   const uint64_t *ids, const bool *keep_rx, size_t n);
/*
 * Socketless buckets (flows: a port scan, datagrams to nobody, a closed
 * socket's purged queue) have no socket to close: give back those whose
 * counts have not moved for TRACER_FLOW_IDLE_NS, or since the last call
 * while their table is half full. Same contract as above; now in ns.
 */
#define TRACER_FLOW_IDLE_NS (10 * 1000000000ull)
int tracer__retire_idle_flows(struct tracer *t, const struct htab *drops,
			      uint64_t now);
/*
 * Fold the given-back counts of sockets closed long ago into one bucket
 * per netns, reason and place (UD_KEY_FOLDED), so that memory follows
 * what runs now, not every socket the run has seen. ids: socket identity
 * (uint64_t, as tracer__retire's) -> uint32_t netns; flows: a socketless
 * bucket (struct ud_key) -> struct tracer_fold_flow, the folded socket its
 * flow went to. A socket with counts still in the kernel (per the
 * snapshot `drops`), in its buckets or its flows', is left as it is.
 * Deliveries of folded sockets are forgotten. Returns how many sockets
 * were folded.
 */
struct tracer_fold_flow {
	uint64_t id;    /* as in ids */
	uint32_t netns;
};
int tracer__fold(struct tracer *t, const struct htab *drops,
		 const struct htab *ids, const struct htab *flows);
/*
 * A socketless bucket whose flow went to several sockets in turn (a port
 * that sockets bind one after another): take it out of the kernel and
 * keep its shares as buckets of those sockets (UD_KEY_FLOW_MATCHED,
 * cookie and netns theirs, as record writes them), so the flow starts
 * afresh and its attribution never runs out of room. parts: the shares
 * of the snapshot's counts (model__flow_parts); what came since stays
 * the flow's. 0 or a negative errno.
 */
struct tracer_part {
	uint64_t cookie;
	uint32_t netns;
	struct ud_val val;
};
int tracer__split_flow(struct tracer *t, const struct ud_key *k,
		       const struct tracer_part *parts, int n);
/*
 * Drop windows taken since the last tracer__windows_clear (tracer__read
 * takes them; so does tracer__drain_windows), and the index before which
 * every CPU has closed its windows as of the last read: the model sums
 * and folds those (windows.h). Set t->win_all before the last read of a
 * run (programs detached) to close them all.
 */
const struct tracer_win *tracer__windows(const struct tracer *t, size_t *n, uint32_t *before);
void tracer__windows_clear(struct tracer *t);
/* Take the windows waiting in the ring now (between reads): 0 or -errno. */
int tracer__drain_windows(struct tracer *t);

/* Is any table a quarter full? (Then sockets are checked every interval.) */
bool tracer__filling(const struct tracer *t);
/*
 * Events the kernel did not run the programs for: a kfree_skb while the
 * program was already running on that CPU (recursion_misses).
 */
uint64_t tracer__missed(struct tracer *t);
/*
 * Per-drop events (opened with o->events): the rings' map fds (one per
 * possible CPU, index = CPU, or the one shared ring) in *fds, owned by
 * the tracer; returns how many, or -EINVAL. Records are struct ud_event
 * plus cap bytes; a CPU's ring holds its events in time order.
 */
int tracer__event_rings(struct tracer *t, const int **fds);
/* The default size of each CPU's event ring for ncpus CPUs. */
uint32_t tracer__event_ring_default(int ncpus);
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
/*
 * The kernel's run statistics of the attached programs (name, time and
 * runs: counted only while kernel.bpf_stats_enabled is 1; recursion
 * misses always). Up to n; how many.
 */
struct tracer_prog_stats {
	char name[16];
	uint64_t run_ns, runs, recursion_misses;
};
int tracer__prog_stats(struct tracer *t, struct tracer_prog_stats *out, int n);
/*
 * Name each closing socket's purged queue by the socket's own free from
 * now on (close_owner): attach the kmem:kmem_cache_free program, then let
 * the drop program hold purges for it. Called when a port is shared by
 * sockets (watch.c), never undone. 0, or a negative errno (purges then go
 * by their flow, as before).
 */
/*
 * The function ranges of o (range_*, site_*) into the running programs:
 * with drop reasons the loader reads them after the attach (watch__open).
 */
void tracer__set_ranges(struct tracer *t, const struct tracer_opts *o);
int tracer__arm_close(struct tracer *t);

#endif
