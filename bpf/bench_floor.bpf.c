// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The benchmark's floor: an empty program on the tracepoint udpdrop uses.
 * Its run time is the fixed cost of running any tp_btf program there, so
 * the bench reports udpdrop's per-drop cost as a ratio to it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("tp_btf/kfree_skb")
int BPF_PROG(udpdrop_bench_floor)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
