// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The tracer and the aggregator driven together: see watch.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "log.h"
#include "netns.h"
#include "util.h"
#include "watch.h"

/* Drop locations the classifier must recognise (see enum ud_range). */
static const char *const range_syms[UD_RANGE_MAX] = {
	[UD_RANGE_FRAG_PURGE] = "inet_frag_rbtree_purge",
	[UD_RANGE_UDP_DESTRUCT] = "udp_destruct_common",
	[UD_RANGE_INET_DESTRUCT] = "inet_sock_destruct",
};

int watch__open(struct watch *w, struct tracer_opts *to,
		const struct model_opts *mo, const char *who)
{
	struct tracer_error te;
	bool model_up = false;
	int err, ret = EXIT_FAIL;

	memset(w, 0, sizeof(*w));
	log__install_libbpf();
	if (!to->filter_netns)
		to->filter_netns = mo->netns;
	err = model__init(&w->m, mo);
	if (err) {
		if (err == -ENOENT)
			fprintf(stderr, "%s: this kernel's BTF has no enum skb_drop_reason (kernel older than 5.17?): drop reasons unavailable\n", who);
		else
			fprintf(stderr, "%s: cannot read the kernel's BTF (/sys/kernel/btf/vmlinux): %s; udpdrop needs a kernel built with CONFIG_DEBUG_INFO_BTF=y\n",
				who, strerror(-err));
		return err == -ENOMEM ? EXIT_FAIL : EXIT_KERNEL;
	}
	model_up = true;
	for (int r = 0; r < UD_RANGE_MAX; r++)
		if (ksyms__range(&w->m.ksyms, range_syms[r], &to->range_start[r],
				 &to->range_end[r]))
			pr_info("%s not in kallsyms: drops there may show the wrong netns\n",
				range_syms[r]);
	w->overflow = calloc(UD_OVERFLOW_SLOTS, sizeof(*w->overflow));
	if (!w->overflow ||
	    htab__init(&w->drops, sizeof(struct ud_key), sizeof(struct ud_val)) ||
	    htab__init(&w->rx, sizeof(uint64_t), sizeof(struct ud_rx))) {
		fprintf(stderr, "%s: out of memory\n", who);
		goto fail;
	}
	err = tracer__open(&w->t, to, &te);
	if (err) {
		if (err != -EPERM)
			fprintf(stderr, "%s: %s%s\n", who, te.msg,
				log__level() < LOG_DEBUG ? " (-vv shows libbpf and the verifier)" : "");
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
	w->open = true;
	return 0;
fail:
	if (model_up)
		model__free(&w->m);
	htab__free(&w->drops);
	htab__free(&w->rx);
	free(w->overflow);
	w->overflow = NULL;
	return ret;
}

/*
 * One interval's reading: the kernel counters just before the tracer's
 * maps (the baseline was taken in the same order), then the join.
 */
int watch__refresh(struct watch *w)
{
	int err;

	model__read_counters(&w->m);
	w->m.missed = tracer__missed(&w->t);
	err = tracer__read(&w->t, &w->drops, w->overflow, w->stats);
	if (!err)
		err = tracer__read_rx(&w->t, &w->rx);
	if (!err)
		err = model__update_rx(&w->m, w->t.rx ? &w->rx : NULL);
	if (!err)
		err = model__update(&w->m, &w->drops, w->overflow, w->stats, now_ns());
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
	htab__free(&w->drops);
	htab__free(&w->rx);
	free(w->overflow);
	w->open = false;
}
