// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reading the maps (tracer.h: tracer__read, tracer__read_rx,
 * tracer__read_shed): the per-CPU hash maps in batches, the slot table
 * in place, the per-CPU arrays, summed over CPUs, with what was given
 * back added so that the counts stay cumulative.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tracer.h"
#include "tracer_internal.h"
#include "udpdrop.skel.h"

/*
 * The whole per-CPU array in one batch; kernels whose per-CPU arrays have
 * no batch lookup (before 5.12: ENOTSUPP) are read an element at a time.
 * *n: room in keys (and vals: value_size bytes times ncpus each) on entry,
 * elements read on return.
 */
static int read_percpu_array(struct tracer *t, struct bpf_map *map, uint32_t *keys,
			     void *vals, uint32_t *n)
{
	int fd = bpf_map__fd(map);
	uint32_t out = 0, room = *n, max = bpf_map__max_entries(map);
	size_t vsz = (size_t)t->ncpus * ((bpf_map__value_size(map) + 7) & ~(size_t)7);
	LIBBPF_OPTS(bpf_map_batch_opts, opts);

	if (!bpf_map_lookup_batch(fd, NULL, &out, keys, vals, n, &opts) || errno == ENOENT)
		return 0;
	if (errno != 524 /* ENOTSUPP */ && errno != EOPNOTSUPP && errno != EINVAL)
		return -errno;
	*n = 0;
	for (uint32_t i = 0; i < max && i < room; i++) {
		if (bpf_map_lookup_elem(fd, &i, (uint8_t *)vals + (size_t)*n * vsz))
			return -errno;
		keys[(*n)++] = i;
	}
	return 0;
}

int tracer__read_shed(struct tracer *t, uint64_t *shed)
{
	uint32_t n = UD_SHED_SLOTS;
	uint32_t *keys = calloc(n, sizeof(*keys));
	uint64_t *vals = calloc((size_t)n * t->ncpus, sizeof(*vals));
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	memset(shed, 0, UD_SHED_SLOTS * sizeof(*shed));
	err = read_percpu_array(t, t->skel->maps.shed, keys, vals, &n);
	if (err)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		if (keys[i] >= UD_SHED_SLOTS)
			continue;
		for (int c = 0; c < t->ncpus; c++)
			shed[keys[i]] += vals[(size_t)i * t->ncpus + c];
	}
out:
	free(keys);
	free(vals);
	return err;
}

/* Room for a whole per-CPU map's keys and values in one batch. */
int tracer_ensure_bufs(struct tracer *t, struct bpf_map *map)
{
	size_t ks = (size_t)bpf_map__max_entries(map) * bpf_map__key_size(map);
	size_t vs = (size_t)bpf_map__max_entries(map) * t->ncpus *
		    ((bpf_map__value_size(map) + 7) & ~(size_t)7);
	void *p;

	if (t->keys_size < ks) {
		p = realloc(t->keys, ks);
		if (!p)
			return -ENOMEM;
		t->keys = p;
		t->keys_size = ks;
	}
	if (t->vals_size < vs) {
		p = realloc(t->vals, vs);
		if (!p)
			return -ENOMEM;
		t->vals = p;
		t->vals_size = vs;
	}
	return 0;
}

/*
 * The overflow array (UD_OVERFLOW_SLOTS per-CPU values) and the stats,
 * which live in the per-CPU hand-over area the programs already touch.
 * The hand-over struct is private to bpf/: only its leading stats array
 * (UD_STAT_MAX u64s, first by contract, see bpf/udpdrop.bpf.c) is read.
 */
static int read_percpu(struct tracer *t, struct ud_val *overflow, uint64_t *stats)
{
	uint32_t n = UD_OVERFLOW_SLOTS, zero = 0;
	size_t ho_size = bpf_map__value_size(t->skel->maps.handover);
	size_t stride = (ho_size + 7) & ~(size_t)7;
	void *keys = calloc(n, sizeof(uint32_t));
	struct ud_val *vals = calloc((size_t)n * t->ncpus, sizeof(*vals));
	uint8_t *ho = calloc(t->ncpus, stride);
	int err = 0;

	if (!keys || !vals || !ho) {
		err = -ENOMEM;
		goto out;
	}
	err = read_percpu_array(t, t->skel->maps.overflow, keys, vals, &n);
	if (err)
		goto out;
	memset(overflow, 0, UD_OVERFLOW_SLOTS * sizeof(*overflow));
	for (uint32_t i = 0; i < n; i++) {
		uint32_t slot = ((uint32_t *)keys)[i];

		if (slot >= UD_OVERFLOW_SLOTS)
			continue;
		for (int c = 0; c < t->ncpus; c++)
			tracer_add_val(&overflow[slot], &vals[(size_t)i * t->ncpus + c]);
	}
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.handover), &zero, ho)) {
		err = -errno;
		goto out;
	}
	memset(stats, 0, UD_STAT_MAX * sizeof(*stats));
	for (int c = 0; c < t->ncpus; c++) {
		const uint64_t *cs = (const uint64_t *)(ho + (size_t)c * stride);

		for (int s = 0; s < UD_STAT_MAX; s++)
			stats[s] += cs[s];
	}
out:
	free(keys);
	free(vals);
	free(ho);
	return err;
}

/* Fold one key's per-CPU values (ncpus of them, 8-byte aligned) into out. */
typedef int (*fold_fn)(struct tracer *t, struct htab *out, const void *key,
		       const void *percpu);

static int fold_drops(struct tracer *t, struct htab *out, const void *key,
		      const void *percpu)
{
	struct ud_val *sum = htab__upsert(out, key, NULL);
	const struct ud_val *pc = percpu;

	if (!sum)
		return -ENOMEM;
	for (int c = 0; c < t->ncpus; c++) {
		tracer_add_val(sum, &pc[c]);
		tracer_win_open(t, key, (uint32_t)c, pc[c].win);
	}
	return 0;
}

/* Deliveries: counts add up, the peak is the most any CPU saw. */
static int fold_rx(struct tracer *t, struct htab *out, const void *key,
		   const void *percpu)
{
	struct ud_rx *sum = htab__upsert(out, key, NULL);
	const struct ud_rx *pc = percpu;
	struct ud_key wk = tracer_rx_win_key(*(const uint64_t *)key);

	if (!sum)
		return -ENOMEM;
	for (int c = 0; c < t->ncpus; c++) {
		tracer_add_rx(sum, &pc[c]);
		tracer_win_open(t, &wk, (uint32_t)c, pc[c].win);
	}
	return 0;
}

/* The deliveries' slots: each CPU's owner, if any, keys its counts. */
static int fold_rx_slot(struct tracer *t, struct htab *out, const void *key,
			const void *percpu)
{
	const struct ud_rx_slot *pc = percpu;

	for (int c = 0; c < t->ncpus; c++) {
		struct ud_rx *sum;

		if (!pc[c].id)
			continue;
		sum = htab__upsert(out, &pc[c].id, NULL);
		if (!sum)
			return -ENOMEM;
		tracer_add_rx(sum, &pc[c].val);
		struct ud_key wk = tracer_rx_win_key(pc[c].id);

		tracer_win_open(t, &wk, (uint32_t)c, pc[c].val.win);
	}
	return 0;
}

/* Fold a per-CPU map's contents into out, in as few syscalls as it takes. */
static int read_batch(struct tracer *t, struct bpf_map *map, struct htab *out,
		     fold_fn fold)
{
	int fd = bpf_map__fd(map);
	uint32_t max = bpf_map__max_entries(map);
	size_t ksz = bpf_map__key_size(map);
	size_t vsz = (size_t)t->ncpus * ((bpf_map__value_size(map) + 7) & ~(size_t)7);
	uint64_t in = 0, out_batch = 0;
	bool first = true;
	int err;

	if (tracer_ensure_bufs(t, map))
		return -ENOMEM;
	for (;;) {
		uint32_t count = max;
		LIBBPF_OPTS(bpf_map_batch_opts, opts);

		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out_batch, t->keys,
					   t->vals, &count, &opts);
		if (err && errno != ENOENT)
			return -errno;
		for (uint32_t i = 0; i < count; i++) {
			int ferr = fold(t, out, (uint8_t *)t->keys + i * ksz,
					(uint8_t *)t->vals + i * vsz);

			if (ferr)
				return ferr;
		}
		if (err) /* ENOENT: that was the last batch */
			return 0;
		in = out_batch;
		first = false;
	}
}

/* Add the given-back counts (src) into a snapshot just read (dst). */
static int add_retired(const struct htab *src, struct htab *dst, bool rx)
{
	size_t it = 0;
	const void *key;
	void *val;

	while (htab__next(src, &it, &key, &val)) {
		void *sum = htab__upsert(dst, key, NULL);

		if (!sum)
			return -ENOMEM;
		if (rx)
			tracer_add_rx(sum, val);
		else
			tracer_add_val(sum, val);
	}
	return 0;
}

int tracer__read(struct tracer *t, struct htab *drops, struct ud_val *overflow,
		 uint64_t *stats)
{
	const void *key;
	void *val;
	int err;

	htab__clear(drops);
	err = tracer_win_read_begin(t);
	if (!err)
		err = read_batch(t, t->skel->maps.drops, drops, fold_drops);
	t->fill.drops = drops->n;
	t->fill.drops_max = bpf_map__max_entries(t->skel->maps.drops);
	if (!err)
		err = read_batch(t, t->skel->maps.flows, drops, fold_drops);
	t->fill.flows = drops->n - t->fill.drops;
	t->fill.flows_max = bpf_map__max_entries(t->skel->maps.flows);
	if (err)
		return err;

	/* the slot table: owned slots only, their counts only ever grow */
	t->fill.slots = 0;
	t->fill.slots_max = t->nslots;
	for (uint32_t i = 0; i < t->nslots; i++) {
		const struct ud_slot *sl = &t->slots[i];
		struct ud_val *sum;

		if (UD_SLOT_PHASE(__atomic_load_n(&sl->state, __ATOMIC_ACQUIRE)) !=
		    UD_SLOT_READY)
			continue;
		t->fill.slots++;
		sum = htab__upsert(drops, &sl->key, NULL);
		if (!sum)
			return -ENOMEM;
		tracer_add_val(sum, &sl->val);
		tracer_win_open(t, &sl->key, i / UD_SLOTS_PER_CPU,
			 __atomic_load_n(&sl->val.win, __ATOMIC_RELAXED));
	}
	err = tracer_win_read_end(t);
	if (err)
		return err;
	/* and what was given back: the counts stay cumulative */
	err = add_retired(&t->retired, drops, false);
	if (err)
		return err;

	/* overflow slots and stats: per-CPU arrays, one syscall each */
	err = read_percpu(t, overflow, stats);
	if (err)
		return err;
	/* every event was counted once: as an skb somewhere, or not ours, or filtered */
	stats[UD_STAT_EVENTS] = stats[UD_STAT_NOT_OURS] + stats[UD_STAT_FILTERED];
	for (size_t it = 0; htab__next(drops, &it, &key, &val);)
		stats[UD_STAT_EVENTS] += ((struct ud_val *)val)->skbs;
	for (int s = 0; s < UD_OVERFLOW_SLOTS; s++)
		stats[UD_STAT_EVENTS] += overflow[s].skbs;
	return 0;
}

int tracer__read_rx(struct tracer *t, struct htab *rx)
{
	int err;

	htab__clear(rx);
	if (!t->rx)
		return 0;
	/* the deliveries' windows, read as the drops' are (tracer__read) */
	err = tracer_win_read_begin(t);
	err = err ?: read_batch(t, t->skel->maps.rx, rx, fold_rx);
	t->fill.rx = rx->n;
	t->fill.rx_max = bpf_map__max_entries(t->skel->maps.rx);
	err = err ?: read_batch(t, t->skel->maps.rx_slots, rx, fold_rx_slot);
	t->win_reading = false;
	err = err ?: tracer_win_read_end(t);
	return err ?: add_retired(&t->rx_retired, rx, true);
}

bool tracer__filling(const struct tracer *t)
{
	const struct tracer_fill *f = &t->fill;

	return (f->drops_max && f->drops >= f->drops_max / 4) ||
	       (f->flows_max && f->flows >= f->flows_max / 4) ||
	       (f->rx_max && f->rx >= f->rx_max / 4);
}
