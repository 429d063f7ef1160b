// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The tracer and the aggregator driven together: see watch.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "log.h"
#include "netns.h"
#include "util.h"
#include "watch.h"

/* lifetimes' dumps name sockets too: see lifetimes.seen_by_inode */
static void learn_socket(void *arg, struct sock_info *si)
{
	model__learn_socket(arg, si, now_ns());
}

static void site_ranges(struct ksyms *ks, struct tracer_opts *to)
{
	int n = 0;

	const char *names[64] = { NULL };
	struct ksyms_clone clones[UD_SITE_RANGES];
	int nnames = 0, nclones;

	for (int i = 0; i < model__nsite_syms && n < UD_SITE_RANGES; i++) {
		if (nnames < (int)ARRAY_SIZE(names))
			names[nnames++] = model__site_syms[i].name;
		if (ksyms__range(ks, model__site_syms[i].name, &to->site_start[n],
				 &to->site_end[n])) {
			pr_debug("%s not in kallsyms: its drops are not named by site\n",
				 model__site_syms[i].name);
			continue;
		}
		to->site_loc[n++] = model__site_syms[i].loc;
	}
	/* and their clones (.cold, .constprop.0, .isra.0: ksyms__clones) */
	nclones = ksyms__clones(ks, names, nnames, clones, ARRAY_SIZE(clones));
	for (int i = 0; i < nclones && n < UD_SITE_RANGES; i++) {
		to->site_start[n] = clones[i].start;
		to->site_end[n] = clones[i].end;
		to->site_loc[n++] = model__site_syms[clones[i].name].loc;
	}
	if (nclones > 0 && n == UD_SITE_RANGES)
		pr_debug("more drop-site functions than UD_SITE_RANGES: some not named by site\n");
	if (to->derive_sites)
		pr_info("no drop reasons: causes from drop locations (%d functions known)\n", n);
	else
		pr_debug("NOT_SPECIFIED drops named by site (%d functions known)\n", n);
}

/* The function ranges the classifier names drops by, into to. */
static void classifier_ranges(struct watch *w, struct tracer_opts *to)
{
	model__load_syms(&w->m);
	site_ranges(&w->m.ksyms, to);
	for (int r = 0; r < UD_RANGE_MAX; r++)
		if (ksyms__range(&w->m.ksyms, model__range_syms[r], &to->range_start[r],
				 &to->range_end[r]))
			pr_info("%s not in kallsyms: drops there may show the wrong netns\n",
				model__range_syms[r]);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

int watch__open(struct watch *w, struct tracer_opts *to,
		const struct model_opts *mo, const char *who)
{
	struct tracer_error te;
	bool model_up = false;
	int err, ret = EXIT_FAIL;

	struct kernel_features kf;
	char line[512];

	memset(w, 0, sizeof(*w));
	log__install_libbpf();
	if (tracer__kernel_too_old(line, sizeof(line))) {
		fprintf(stderr, "%s: %s\n", who, line);
		return EXIT_KERNEL;
	}
	tracer__features(&kf);
	tracer__features_line(&kf, line, sizeof(line));
	pr_info("%s\n", line);
	if (!to->filter_netns)
		to->filter_netns = mo->netns;
	err = model__init(&w->m, mo);
	if (err) {
		fprintf(stderr, "%s: cannot read the kernel's BTF (/sys/kernel/btf/vmlinux): %s; udpdrop needs Linux %d.%d or later built with CONFIG_DEBUG_INFO_BTF=y\n",
			who, strerror(-err), TRACER_MIN_MAJOR, TRACER_MIN_MINOR);
		return err == -ENOMEM ? EXIT_FAIL : EXIT_KERNEL;
	}
	model_up = true;
	/* pods, where the kubelet's log directory is there (a default that
	 * is not, on a host without Kubernetes, names no pod) */
	if (mo->k8s_logs && is_dir(mo->k8s_logs) && !pods__cache_init(&w->pods, mo->k8s_logs))
		w->m.pods = &w->pods;
	to->derive_sites = w->m.sites;
	to->site_base = w->m.site_base;
	/*
	 * Without drop reasons every drop's cause is its site: the ranges
	 * first. With them only a few drops need one (a closing socket's
	 * queue, a reassembly queue's fragments, NOT_SPECIFIED sites), and
	 * reading /proc/kallsyms (40 ms or more) waits until the programs
	 * count, so that drops count from the attach on (docs/counting.md).
	 */
	if (to->derive_sites)
		classifier_ranges(w, to);
	w->overflow = calloc(UD_OVERFLOW_SLOTS, sizeof(*w->overflow));
	if (!w->overflow || lifetimes__init(&w->life, now_ns()) ||
	    htab__init(&w->drops, sizeof(struct ud_key), sizeof(struct ud_val)) ||
	    htab__init(&w->rx, sizeof(uint64_t), sizeof(struct ud_rx))) {
		fprintf(stderr, "%s: out of memory\n", who);
		goto fail;
	}
	w->life.seen_by_inode = learn_socket;
	w->life.seen_arg = &w->m;
	err = tracer__open(&w->t, to, &te);
	if (!err && !to->derive_sites) {
		classifier_ranges(w, to);
		tracer__set_ranges(&w->t, to);
	}
	if (err) {
		if (err != -EPERM)
			fprintf(stderr, "%s: %s%s\n", who, te.msg,
				log__level() < LOG_DEBUG && err != -EOPNOTSUPP
					? " (-vv shows libbpf and the verifier)" : "");
		/*
		 * The capabilities were checked, but they may be a user
		 * namespace's, which the kernel does not accept for BPF (EPERM);
		 * the verifier refuses with EACCES, a missing feature otherwise.
		 */
		if (err == -EPERM) {
			fprintf(stderr, "%s: the kernel refused BPF (EPERM): run as root in the initial user namespace (not in a container's), and check kernel lockdown\n", who);
			ret = EXIT_PRIV;
		} else {
			ret = EXIT_KERNEL;
		}
		goto fail;
	}
	/* the baseline: kernel counters, then the maps, at nearly one instant */
	err = model__baseline(&w->m);
	if (!err)
		err = tracer__read(&w->t, &w->drops, w->overflow, w->stats);
	if (!err)
		model__read_counters_after(&w->m, true);
	if (!err)
		model__baseline_counts(&w->m, &w->drops);
	if (!err)
		err = tracer__read_rx(&w->t, &w->rx);
	if (!err)
		err = model__baseline_rx(&w->m, &w->rx);
	if (err) {
		fprintf(stderr, "%s: reading the first counts failed: %s\n", who, strerror(-err));
		tracer__close(&w->t);
		goto fail;
	}
	/* the trace starts now: rates and uptime count from here */
	w->m.start_ns = w->m.last_ns = now_ns();
	w->m.start_wall = wall_time();
	w->open = true;
	return 0;
fail:
	if (model_up)
		model__free(&w->m);
	pods__cache_free(&w->pods);
	htab__free(&w->drops);
	htab__free(&w->rx);
	lifetimes__free(&w->life);
	free(w->overflow);
	w->overflow = NULL;
	return ret;
}

/*
 * The socket rows' identities: a closed socket with a row keeps its
 * deliveries when its entries are given back (rx and the queue peak stay
 * in every view); one with none had nothing shown.
 */
static int row_ids(struct model *m, struct htab *out)
{
	size_t it = 0;
	const void *key;
	void *val;

	while (htab__next(&m->rows, &it, &key, &val)) {
		const struct row *r = val;

		if (r->key.kind == ROW_SOCKET && r->key.cookie &&
		    !htab__upsert(out, &r->key.cookie, NULL))
			return -ENOMEM;
	}
	return 0;
}

/*
 * A port that sockets bind in turn (a service restarting, clients on a
 * fixed port) makes one flow go to many sockets: before its attribution
 * runs out of room, its shares become those sockets' own (kept in the
 * tracer), and it starts afresh.
 */
static int split_busy_flows(struct watch *w)
{
	struct ud_key keys[64];
	int n = model__flows_to_split(&w->m, keys, 64);

	for (int i = 0; i < n; i++) {
		const struct ud_val *v = htab__find(&w->drops, &keys[i]);
		struct flow_part parts[FLOW_SEGS];
		struct tracer_part tp[FLOW_SEGS];
		int np, err;

		if (!v)
			continue;
		np = model__flow_parts(&w->m, &keys[i], v, parts, FLOW_SEGS);
		bool socketless = false;

		for (int j = 0; j < np; j++) {
			tp[j] = (struct tracer_part){ parts[j].cookie, parts[j].netns,
						      parts[j].val };
			socketless |= !parts[j].cookie;
		}
		/* counts from when no socket matched stay the flow's: no split */
		if (socketless)
			continue;
		err = tracer__split_flow(&w->t, &keys[i], tp, np);
		if (err)
			return err;
		model__flow_restart(&w->m, &keys[i]);
	}
	return 0;
}

/*
 * Sockets closed and quiet for MODEL_FOLD_AFTER_NS: their counts are
 * folded into one row per netns, "(closed sockets)", so that a run of
 * days keeps memory for what runs now. Once every FOLD_EVERY_NS.
 */
#define FOLD_EVERY_NS (10 * 1000000000ull)
#define FOLD_EVERY_MIN_NS (1000000000ull) /* with a short fold age (tests) */

static int fold_long_closed(struct watch *w, uint64_t now)
{
	struct htab ids, flows;
	int err;

	/* a short fold age (tests), or more closed rows than the cap: soon */
	uint64_t every = w->m.fold_after_ns < FOLD_EVERY_NS ? FOLD_EVERY_MIN_NS
							     : FOLD_EVERY_NS;

	if (now - w->fold_ns < FOLD_EVERY_MIN_NS ||
	    (now - w->fold_ns < every && !model__closed_over(&w->m)))
		return 0;
	w->fold_ns = now;
	if (htab__init(&ids, sizeof(uint64_t), sizeof(uint32_t)))
		return -ENOMEM;
	if (htab__init(&flows, sizeof(struct ud_key), sizeof(struct tracer_fold_flow))) {
		htab__free(&ids);
		return -ENOMEM;
	}
	err = model__foldable(&w->m, now, &ids, &flows);
	if (!err)
		err = tracer__fold(&w->t, &w->drops, &ids, &flows);
	/* their drop windows too: no view shows those sockets one by one */
	if (err > 0)
		err = windows__forget(&w->m.win, &ids) ?: err;
	htab__free(&ids);
	htab__free(&flows);
	return err < 0 ? err : 0;
}

/*
 * Give the kernel's entries of closed sockets (and, when that table fills,
 * of idle socketless flows) back, so that a long run with short-lived
 * sockets keeps every drop's socket: the counts stay in the tracer, so no
 * view changes. What was seen this interval is checked against a dump of
 * its netns, every LIFETIMES_CHECK_NS, or every interval while a table
 * is a quarter full or more closed sockets have rows than the model's cap
 * (MODEL_CLOSED_ROWS_MAX).
 */
static int give_back_closed(struct watch *w, uint64_t now)
{
	uint64_t *ids = NULL;
	bool *had = NULL, *keep = NULL;
	struct htab rows = {};
	int n, err;

	err = lifetimes__note(&w->life, &w->drops, w->t.rx ? &w->rx : NULL, now);
	if (err)
		return err;
	/* every interval while a table fills, or closed rows pass the cap
	 * (churn: folding them waits for their kernel entries to go) */
	n = lifetimes__closed(&w->life, &w->m.nt,
			      tracer__filling(&w->t) || model__closed_over(&w->m), now,
			      &ids, &had);
	if (n <= 0) {
		err = n;
		goto flows;
	}
	keep = calloc(n, sizeof(*keep));
	err = keep ? htab__init(&rows, sizeof(uint64_t), 1) : -ENOMEM;
	if (!err)
		err = row_ids(&w->m, &rows);
	for (int i = 0; !err && i < n; i++)
		keep[i] = had[i] || htab__find(&rows, &ids[i]);
	if (!err)
		err = tracer__retire(&w->t, &w->drops, ids, keep, n);
	htab__free(&rows);
flows:
	if (err >= 0)
		err = tracer__retire_idle_flows(&w->t, &w->drops, now);
	free(ids);
	free(had);
	free(keep);
	if (err >= 0)
		err = split_busy_flows(w);
	if (err >= 0)
		err = fold_long_closed(w, now);
	return err < 0 ? err : 0;
}

/*
 * One interval's reading: the kernel counters just before the tracer's
 * maps (the baseline was taken in the same order), then the join.
 */
int watch__refresh(struct watch *w)
{
	uint64_t now;
	int err;

	model__read_counters(&w->m);
	w->m.missed = tracer__missed(&w->t);
	err = tracer__read(&w->t, &w->drops, w->overflow, w->stats);
	if (!err)
		model__read_counters_after(&w->m, false);
	if (!err)
		err = tracer__read_rx(&w->t, &w->rx);
	if (!err)
		err = model__update_rx(&w->m, w->t.rx ? &w->rx : NULL);
	now = now_ns();
	/* no deliveries to learn sockets from: look for a shared port (model.h) */
	w->m.watch_sharing = !w->t.rx && w->t.close_owner && !w->t.close_armed;
	if (!err)
		err = model__update(&w->m, &w->drops, w->overflow, w->stats, now);
	if (!err)
		err = give_back_closed(w, now);
	/* the drop windows the read (and the give-back) took, after the join
	 * the update learnt: each to its socket's row */
	if (!err) {
		size_t n;
		uint32_t before;
		const struct tracer_win *wins = tracer__windows(&w->t, &n, &before);

		err = model__update_windows(&w->m, wins, n, before);
		tracer__windows_clear(&w->t);
	}
	/* a shared port: from now on closing queues are named by their socket */
	if (!err && w->t.close_owner && !w->t.close_armed && model__port_shared(&w->m) &&
	    !tracer__arm_close(&w->t))
		pr_info("a local port is shared by sockets: closing sockets' queues are named by the socket's free from now on (kmem:kmem_cache_free)\n");
	/* once per refresh (one stat while something still holds it) */
	if (!err && !w->netns_gone)
		w->netns_gone = netns__pin_gone();
	return err;
}

void watch__close(struct watch *w)
{
	if (!w->open)
		return;
	tracer__close(&w->t);
	/* only now: with the filter detached, the inode may go to a new netns */
	netns__unpin();
	model__free(&w->m);
	pods__cache_free(&w->pods);
	htab__free(&w->drops);
	htab__free(&w->rx);
	lifetimes__free(&w->life);
	free(w->overflow);
	w->open = false;
}
