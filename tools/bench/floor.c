// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench-floor: load and attach the empty tp_btf/kfree_skb program, print
 * "ready" once it is attached, then hold it until SIGINT or SIGTERM.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "bench_floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static int quiet_print(enum libbpf_print_level level, const char *fmt,
		       va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

int main(void)
{
	struct bench_floor_bpf *skel;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, old;
	int err;

	libbpf_set_print(quiet_print);
	/* block the signals until we wait for them: none is lost */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	skel = bench_floor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "bench-floor: cannot open/load the BPF object: %s\n",
			strerror(errno));
		return 1;
	}
	err = bench_floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "bench-floor: cannot attach to tp_btf/kfree_skb: %s\n",
			strerror(-err));
		bench_floor_bpf__destroy(skel);
		return 1;
	}
	if (printf("ready\n") < 0 || fflush(stdout)) {
		fprintf(stderr, "bench-floor: cannot write to stdout\n");
		bench_floor_bpf__destroy(skel);
		return 1;
	}
	while (!stop)
		sigsuspend(&old);
	bench_floor_bpf__destroy(skel);
	return 0;
}
