// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench-gaps IFACE PORT HALF_GAP_NS [drop]: attach bpf/bench_gaps.bpf.c (XDP) to
 * IFACE, print "ready", and on SIGINT/SIGTERM print one JSON line: the
 * datagrams to PORT, their inter-arrival gap p50/p99 (ns), and the share
 * of gaps shorter than HALF_GAP_NS (half the target gap: "in a burst").
 * "drop": the port's datagrams are dropped at XDP (a receiver that costs
 * nothing). The XDP link goes with the process.
 */
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "bench_gaps.skel.h"
#include "hist.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

int main(int argc, char **argv)
{
	struct bench_gaps_bpf *skel;
	struct bpf_link *link;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, old;
	struct hist h;
	unsigned int ifindex;
	uint64_t half, below = 0;

	if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "drop")) ||
	    !(ifindex = if_nametoindex(argv[1]))) {
		fprintf(stderr, "usage: bench-gaps IFACE PORT HALF_GAP_NS [drop] (IFACE must exist)\n");
		return 2;
	}
	half = strtoull(argv[3], NULL, 10);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	skel = bench_gaps_bpf__open();
	if (!skel)
		return 1;
	skel->rodata->port = (uint16_t)atoi(argv[2]);
	skel->rodata->drop = argc == 5;
	if (bench_gaps_bpf__load(skel)) {
		fprintf(stderr, "bench-gaps: cannot load: %s\n", strerror(errno));
		bench_gaps_bpf__destroy(skel);
		return 1;
	}
	link = bpf_program__attach_xdp(skel->progs.bench_gaps, ifindex);
	if (!link) {
		fprintf(stderr, "bench-gaps: cannot attach XDP to %s: %s\n", argv[1], strerror(errno));
		bench_gaps_bpf__destroy(skel);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);

	/* BPF keeps only the buckets: min and max are their bounds */
	hist__reset(&h);
	h.max = UINT64_MAX;
	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		uint64_t n = skel->bss->gaps[i];

		h.b[i] = n;
		h.count += n;
		if (hist__bucket_top(i) < half)
			below += n; /* the whole bucket is under half a gap */
	}
	printf("{\"packets\":%llu,\"gap_p50_ns\":%llu,\"gap_p99_ns\":%llu,\"burst_share\":%.4f}\n",
	       (unsigned long long)skel->bss->packets,
	       (unsigned long long)hist__pct(&h, 0.5), (unsigned long long)hist__pct(&h, 0.99),
	       h.count ? (double)below / (double)h.count : 0.0);
	bpf_link__destroy(link);
	bench_gaps_bpf__destroy(skel);
	return 0;
}
