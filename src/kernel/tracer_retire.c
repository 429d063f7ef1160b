// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Giving the kernel's entries back (tracer.h: tracer__retire,
 * tracer__retire_idle_flows, tracer__fold, tracer__split_flow): closed
 * sockets' buckets, deliveries and slots, idle flows, old sockets folded
 * per netns, a flow split among its sockets; their counts are kept here
 * and added to every read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sockid.h"
#include "tracer.h"
#include "tracer_internal.h"
#include "udpdrop.skel.h"

/*
 * Giving a slot back needs every program that may still be adding to it
 * to have finished: the programs run with preemption disabled (inside
 * the tracepoint), so an RCU grace period, which membarrier's GLOBAL
 * command waits for (synchronize_rcu), covers them.
 */
bool tracer_slots_can_retire(void)
{
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	return cmds > 0 && (cmds & MEMBARRIER_CMD_GLOBAL);
}

static int rcu_grace_period(void)
{
	return syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) ? -errno : 0;
}

/* One per-CPU hash entry's last counts, deleted in the same call. */
static int take_entry(struct tracer *t, struct bpf_map *map, const void *key)
{
	int fd = bpf_map__fd(map);

	if (!bpf_map_lookup_and_delete_elem(fd, key, t->vals))
		return 0;
	/* before 5.14 hash maps cannot do both at once: read, then delete */
	if (errno != EINVAL && errno != 524 /* ENOTSUPP */ && errno != EOPNOTSUPP)
		return -errno;
	if (bpf_map_lookup_elem(fd, key, t->vals))
		return -errno;
	return bpf_map_delete_elem(fd, key) ? -errno : 0;
}

/* A bucket's last window stays known unless its socket was given back. */
static bool win_bucket_kept(const void *key, void *val, void *want)
{
	uint64_t id = sockid__of_key(&((const struct win_cpu_key *)key)->key);

	return !id || !htab__find(want, &id);
}

int tracer__retire(struct tracer *t, const struct htab *drops,
		   const uint64_t *ids, const bool *keep_rx, size_t n)
{
	uint32_t *slots = NULL;
	size_t nslots = 0, it = 0;
	struct htab want;
	const void *key;
	void *val;
	int err = 0, given = 0;

	if (!n)
		return 0;
	if (htab__init(&want, sizeof(uint64_t), 1))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (ids[i] && !htab__upsert(&want, &ids[i], NULL)) {
			err = -ENOMEM;
			goto out;
		}
	if (tracer_ensure_bufs(t, t->skel->maps.drops) || tracer_ensure_bufs(t, t->skel->maps.rx)) {
		err = -ENOMEM;
		goto out;
	}
	/* their windows in the ring first: the open words below come after */
	err = tracer__drain_windows(t);
	if (err)
		goto out;

	/* the socket buckets in the hash map: take and delete each */
	while (htab__next(drops, &it, &key, &val)) {
		const struct ud_key *k = key;
		uint64_t id = sockid__of_key(k);
		struct ud_val *sum;
		int terr;

		if (!id || !htab__find(&want, &id))
			continue;
		/* all of it given back before: nothing in the kernel to take */
		const struct ud_val *gone = htab__find(&t->retired, k);

		if (gone && !memcmp(gone, val, sizeof(*gone)))
			continue;
		terr = take_entry(t, t->skel->maps.drops, k);
		if (terr == -ENOENT)
			continue; /* in a slot, or given back before */
		if (terr) {
			err = terr;
			goto out;
		}
		sum = htab__upsert(&t->retired, k, NULL);
		if (!sum) {
			err = -ENOMEM;
			goto out;
		}
		for (int c = 0; c < t->ncpus; c++) {
			tracer_add_val(sum, &((const struct ud_val *)t->vals)[c]);
			/* a closed socket's open windows are closed */
			tracer_win_take(t, k, (uint32_t)c, ((const struct ud_val *)t->vals)[c].win);
		}
		given++;
	}

	/* deliveries: the hash map's entries (the per-CPU slots stay taken) */
	for (size_t i = 0; t->rx && i < n; i++) {
		struct ud_rx *sum;
		int terr;

		if (!ids[i])
			continue;
		terr = take_entry(t, t->skel->maps.rx, &ids[i]);
		if (terr == -ENOENT)
			continue;
		if (terr) {
			err = terr;
			goto out;
		}
		given++;
		/* a closed socket's open windows of deliveries are closed */
		struct ud_key wk = tracer_rx_win_key(ids[i]);

		for (int c = 0; c < t->ncpus; c++)
			tracer_win_take(t, &wk, (uint32_t)c, ((const struct ud_rx *)t->vals)[c].win);
		if (!keep_rx[i])
			continue;
		sum = htab__upsert(&t->rx_retired, &ids[i], NULL);
		if (!sum) {
			err = -ENOMEM;
			goto out;
		}
		for (int c = 0; c < t->ncpus; c++)
			tracer_add_rx(sum, &((const struct ud_rx *)t->vals)[c]);
	}

	/*
	 * The slots: marked RETIRED (no program starting from now adds to
	 * them), a grace period for those already adding, then the last
	 * count, and the slot is free again with its generation bumped.
	 */
	if (!t->slots_retire)
		goto out;
	slots = malloc(t->nslots * sizeof(*slots));
	if (!slots) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < t->nslots; i++) {
		struct ud_slot *sl = &t->slots[i];
		uint64_t state = __atomic_load_n(&sl->state, __ATOMIC_ACQUIRE);
		uint64_t id;

		if (UD_SLOT_PHASE(state) != UD_SLOT_READY)
			continue;
		id = sockid__of_key(&sl->key);
		if (!id || !htab__find(&want, &id))
			continue;
		if (__atomic_compare_exchange_n(&sl->state, &state,
						(state & ~3ull) | UD_SLOT_RETIRED, false,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			slots[nslots++] = i;
	}
	if (nslots && rcu_grace_period()) {
		/* no grace period, no safe hand-back: keep them taken */
		for (size_t j = 0; j < nslots; j++) {
			struct ud_slot *sl = &t->slots[slots[j]];

			__atomic_store_n(&sl->state, (sl->state & ~3ull) | UD_SLOT_READY,
					 __ATOMIC_RELEASE);
		}
		t->slots_retire = false;
		goto out;
	}
	for (size_t j = 0; j < nslots; j++) {
		struct ud_slot *sl = &t->slots[slots[j]];
		struct ud_val *sum = htab__upsert(&t->retired, &sl->key, NULL);
		uint64_t next = (sl->state & ~3ull) + UD_SLOT_GEN_ONE;

		if (!sum) {
			/* keep it: its count stays in the slot */
			__atomic_store_n(&sl->state, (sl->state & ~3ull) | UD_SLOT_READY,
					 __ATOMIC_RELEASE);
			err = -ENOMEM;
			continue;
		}
		tracer_add_val(sum, &sl->val);
		tracer_win_take(t, &sl->key, slots[j] / UD_SLOTS_PER_CPU, sl->val.win);
		memset(&sl->key, 0, sizeof(sl->key));
		memset(&sl->val, 0, sizeof(sl->val));
		__atomic_store_n(&sl->state, next | UD_SLOT_FREE, __ATOMIC_RELEASE);
		given++;
	}
out:
	free(slots);
	/* the closed sockets' buckets are gone: so is where their windows were */
	if (given > 0 && htab__retain(&t->win_done, win_bucket_kept, &want))
		err = err ?: -ENOMEM;
	if (!err && t->win_err)
		err = t->win_err;
	t->win_err = 0;
	htab__free(&want);
	t->fill.retired += given;
	return err ?: given;
}

int tracer__retire_idle_flows(struct tracer *t, const struct htab *drops,
			      uint64_t now)
{
	struct htab seen;
	size_t it = 0;
	const void *key;
	void *val;
	int given = 0, err = 0;
	/* half full: every flow quiet for an interval; else those quiet for long */
	bool filling = t->fill.flows_max && t->fill.flows >= t->fill.flows_max / 2;

	if (tracer_ensure_bufs(t, t->skel->maps.flows))
		return -ENOMEM;
	if (htab__init(&seen, sizeof(struct ud_key), sizeof(struct flow_seen)))
		return -ENOMEM;
	while (htab__next(drops, &it, &key, &val)) {
		const struct ud_key *k = key;
		const struct ud_val *v = val, *gone;
		const struct flow_seen *before;
		struct ud_val *sum;
		int terr;

		if (k->flags & UD_KEY_SOCK)
			continue;
		gone = htab__find(&t->retired, k);
		if (gone && !memcmp(gone, v, sizeof(*v)))
			continue; /* nothing of it left in the kernel */
		before = htab__find(&t->flows_seen, k);
		if (!before || memcmp(&before->v, v, sizeof(*v)) ||
		    (!filling && now - before->since_ns < TRACER_FLOW_IDLE_NS)) {
			struct flow_seen *s = htab__upsert(&seen, k, NULL);

			if (!s) {
				err = -ENOMEM;
				break;
			}
			/* moved since the last call (or new), or not quiet for long: wait */
			s->since_ns = before && !memcmp(&before->v, v, sizeof(*v))
					      ? before->since_ns : now;
			s->v = *v;
			continue;
		}
		terr = take_entry(t, t->skel->maps.flows, k);
		if (terr == -ENOENT)
			continue;
		if (terr) {
			err = terr;
			break;
		}
		sum = htab__upsert(&t->retired, k, NULL);
		if (!sum) {
			err = -ENOMEM;
			break;
		}
		for (int c = 0; c < t->ncpus; c++)
			tracer_add_val(sum, &((const struct ud_val *)t->vals)[c]);
		given++;
	}
	htab__free(&t->flows_seen);
	t->flows_seen = seen;
	t->fill.retired += given;
	return err ?: given;
}

/* Has the snapshot key more than was given back (a part in the kernel)? */
static bool live_part(const struct tracer *t, const struct ud_key *k,
		      const struct ud_val *v)
{
	const struct ud_val *gone = htab__find(&t->retired, k);

	return !gone || memcmp(gone, v, sizeof(*v));
}

/* The socket a key of the fold belongs to, and its netns; 0 if none. */
static uint64_t fold_target(const struct ud_key *k, const struct htab *ids,
			    const struct htab *flows, uint32_t *netns)
{
	if (k->flags & UD_KEY_SOCK) {
		uint64_t id = sockid__of_key(k);
		const uint32_t *ns = id ? htab__find(ids, &id) : NULL;

		if (!ns)
			return 0;
		*netns = *ns;
		return id;
	}
	const struct tracer_fold_flow *ff = htab__find(flows, k);

	if (!ff)
		return 0;
	*netns = ff->netns;
	return ff->id;
}

int tracer__fold(struct tracer *t, const struct htab *drops,
		 const struct htab *ids, const struct htab *flows)
{
	struct htab busy, keep, rx_keep;
	size_t it = 0;
	const void *key;
	void *val;
	int folded = 0, err = -ENOMEM;
	uint32_t ns;

	if (!ids->n)
		return 0;
	if (htab__init(&busy, sizeof(uint64_t), 1))
		return -ENOMEM;
	/* a socket with counts still in the kernel is not folded yet */
	while (htab__next(drops, &it, &key, &val)) {
		uint64_t id = fold_target(key, ids, flows, &ns);

		if (id && live_part(t, key, val) && !htab__upsert(&busy, &id, NULL))
			goto out_busy;
	}
	if (htab__init(&keep, sizeof(struct ud_key), sizeof(struct ud_val)))
		goto out_busy;
	if (htab__init(&rx_keep, sizeof(uint64_t), sizeof(struct ud_rx))) {
		htab__free(&keep);
		goto out_busy;
	}
	for (it = 0; htab__next(&t->retired, &it, &key, &val);) {
		struct ud_key nk = *(const struct ud_key *)key;
		uint64_t id = fold_target(&nk, ids, flows, &ns);
		struct ud_val *sum;

		if (id && !htab__find(&busy, &id)) {
			if (!(nk.flags & UD_KEY_SOCK)) {
				/* a socket bucket now: those keep no flow */
				memset(nk.saddr, 0, sizeof(nk.saddr));
				memset(nk.daddr, 0, sizeof(nk.daddr));
				nk.dport = 0;
				nk.flags |= UD_KEY_SOCK | UD_KEY_FLOW_MATCHED;
			}
			nk.cookie = UD_COOKIE_FOLDED | ns;
			nk.netns = ns;
			nk.flags = (nk.flags & ~UD_KEY_INODE) | UD_KEY_FOLDED;
		}
		sum = htab__upsert(&keep, &nk, NULL);
		if (!sum)
			goto out_all;
		tracer_add_val(sum, val);
	}
	for (it = 0; htab__next(&t->rx_retired, &it, &key, &val);) {
		struct ud_rx *r;

		if (htab__find(ids, key) && !htab__find(&busy, key))
			continue; /* a folded socket's deliveries: in no view now */
		r = htab__upsert(&rx_keep, key, NULL);
		if (!r)
			goto out_all;
		*r = *(const struct ud_rx *)val;
	}
	for (it = 0; htab__next(ids, &it, &key, &val);)
		folded += !htab__find(&busy, key);
	htab__free(&t->retired);
	htab__free(&t->rx_retired);
	t->retired = keep;
	t->rx_retired = rx_keep;
	err = folded;
	goto out_busy;
out_all:
	htab__free(&keep);
	htab__free(&rx_keep);
out_busy:
	htab__free(&busy);
	return err;
}

int tracer__split_flow(struct tracer *t, const struct ud_key *k,
		       const struct tracer_part *parts, int n)
{
	struct ud_val *flow, *sum;
	int err;

	if (tracer_ensure_bufs(t, t->skel->maps.flows))
		return -ENOMEM;
	/* the kernel's part joins what was given back before, if any */
	flow = htab__upsert(&t->retired, k, NULL);
	if (!flow)
		return -ENOMEM;
	err = take_entry(t, t->skel->maps.flows, k);
	if (err && err != -ENOENT)
		return err;
	if (!err)
		for (int c = 0; c < t->ncpus; c++)
			tracer_add_val(flow, &((const struct ud_val *)t->vals)[c]);
	for (int i = 0; i < n; i++) {
		struct ud_key sk = *k;
		const struct ud_val *pv = &parts[i].val;

		if (!parts[i].cookie)
			continue; /* no socket then: stays the flow's */
		/* never more than the flow holds (the parts are of a snapshot) */
		if (pv->datagrams > flow->datagrams || pv->skbs > flow->skbs ||
		    pv->bytes > flow->bytes)
			return -ERANGE;
		sk.flags |= UD_KEY_SOCK | UD_KEY_FLOW_MATCHED;
		if (parts[i].cookie & UD_RX_INODE) {
			sk.cookie = (uint32_t)parts[i].cookie;
			sk.flags |= UD_KEY_INODE;
		} else {
			sk.cookie = parts[i].cookie;
		}
		sk.netns = parts[i].netns;
		sum = htab__upsert(&t->retired, &sk, NULL);
		/* upsert may move the table: find the flow again */
		if (!sum || !(flow = htab__find(&t->retired, k)))
			return -ENOMEM;
		tracer_add_val(sum, pv);
		flow->datagrams -= pv->datagrams;
		flow->skbs -= pv->skbs;
		flow->bytes -= pv->bytes;
	}
	t->fill.retired++;
	return 0;
}
