// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The generator benchmark's stopwatch: XDP on the receiving interface,
 * the gap between consecutive UDP datagrams to one port, whoever sent them
 * (gen or iperf3), in hist.c's log-linear buckets. veth has one receive
 * queue, so arrivals are serialised: one "last" is enough. XDP_PASS, but
 * with `drop` the port's datagrams of 16 bytes or more are dropped here:
 * a receiver that costs nothing, so the rate test measures the senders
 * alone (iperf3's 4-byte UDP hello still gets through to its server).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define ETH_P_IP 0x0800

#define HIST_SUB_BITS 5
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS (64 * HIST_SUB)

const volatile __u16 port = 0; /* host order */
const volatile bool drop = false;

__u64 last_ns = 0;
__u64 packets = 0;
__u64 gaps[HIST_BUCKETS] = {};

static __always_inline __u32 bucket_of(__u64 v)
{
	__u32 msb = 0;

	if (v < HIST_SUB)
		return v;
	/* the top bit's index, by halving: BPF has no count-leading-zeros */
	if (v >> 32) { msb += 32; v >>= 32; }
	if (v >> 16) { msb += 16; v >>= 16; }
	if (v >> 8) { msb += 8; v >>= 8; }
	if (v >> 4) { msb += 4; v >>= 4; }
	if (v >> 2) { msb += 2; v >>= 2; }
	if (v >> 1) { msb += 1; }
	return msb; /* the caller derives the sub-bucket */
}

SEC("xdp")
int bench_gaps(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct udphdr *udp;
	__u64 now, v, b;
	__u32 msb;

	if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP || ip->ihl != 5 ||
	    (ip->frag_off & bpf_htons(0x1fff)))
		return XDP_PASS;
	udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > end || udp->dest != bpf_htons(port))
		return XDP_PASS;
	now = bpf_ktime_get_ns();
	if (packets++ && now > last_ns) {
		v = now - last_ns;
		msb = bucket_of(v);
		if (v < HIST_SUB)
			b = v;
		else
			b = (msb - HIST_SUB_BITS + 1) * HIST_SUB +
			    ((v >> (msb - HIST_SUB_BITS)) & (HIST_SUB - 1));
		if (b < HIST_BUCKETS)
			gaps[b]++;
	}
	last_ns = now;
	if (drop && bpf_ntohs(udp->len) >= sizeof(*udp) + 16)
		return XDP_DROP;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
