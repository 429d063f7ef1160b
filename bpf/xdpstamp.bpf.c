// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The sink's witness at the interface: for every datagram `udpdrop gen`
 * sent to the sink's port, count it per flow (per CPU) and stamp its
 * arrival time where user space can read it without a syscall (an
 * mmap-able array, see include/udpgen.h). Never changes a packet's fate:
 * always XDP_PASS. It runs before the stack, so what it counts minus what
 * the socket read is what the kernel dropped (or still queues) on the way.
 *
 * Parsed: Ethernet (one VLAN tag), IPv4 (options, first fragments), IPv6
 * (with a fragment header straight after the fixed header; other
 * extension headers are counted as "other"), UDP. A fragmented datagram
 * is counted by its first fragment, the one with the UDP and gen headers;
 * later fragments to our address are only tallied (UG_XS_FRAGS).
 *
 * "Our address": the sink's, when it is bound to one; with a wildcard bind,
 * any address of the host (local_addrs, kept by user space), so traffic
 * to other hosts' addresses (forwarded, or another sink's) is not counted.
 * This check comes first, for whole datagrams and every fragment alike.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "udpgen.h"

/* #defines of the kernel's headers, not in vmlinux.h (enumerators are) */
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86dd
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88a8
#define IPPROTO_FRAGMENT_ 44
#define IP_MF 0x2000
#define IP_OFFSET 0x1fff
#define IP6_OFFSET 0xfff8

/* Set by the loader before load: the sink's port and address. */
const volatile __u16 port = 0;          /* host byte order */
const volatile bool match_addr4 = false; /* false: any IPv4 address */
const volatile __u32 addr4 = 0;          /* network byte order */
const volatile bool match_addr6 = false;
const volatile __u8 addr6[16] = {};
const volatile bool want4 = true, want6 = true;

/*
 * The run the sink serves now: UG_RUN_ANY (0) for any, UG_RUN_NONE for none.
 * Written by user space through the mapped .bss when a run starts, so a
 * straggler of the previous run (or another generator) is not counted as
 * this run's; and when it ends, so that its final readings are not moving.
 * While it is UG_RUN_NONE, datagrams of ended_run are stamped with
 * UG_STAMP_UNCOUNTED and tallied as UG_XS_AFTER_END: the sink leaves those
 * out of what it drains at the end. ended_run is written before run_id.
 */
__u32 run_id = UG_RUN_ANY;
__u32 ended_run = 0; /* 0 and UG_RUN_NONE: no run */
/*
 * With a wildcard bind: 1 once user space has filled local_addrs (then
 * only the addresses in it, and 127/8, are ours); 0: any address.
 */
__u32 local_check = 0;
/* log2 of the run's flows, rounded up: see the slot formula in udpgen.h */
__u32 stamp_shift = UG_XDP_FLOWS_SHIFT;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UG_XDP_FLOWS);
	__type(key, __u32);
	__type(value, struct ug_xdp_flow);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UG_XS_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* The host's addresses (IPv4 as ::ffff:a.b.c.d), for a wildcard bind. */
struct local_key {
	__u8 a[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UG_XDP_LOCAL_ADDRS);
	__type(key, struct local_key);
	__type(value, __u8);
} local_addrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, UG_XDP_STAMPS);
	__type(key, __u32);
	__type(value, struct ug_stamp);
} stamps SEC(".maps");

static __always_inline void stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		*v += 1;
}

static __always_inline bool ours4(const struct iphdr *ip)
{
	struct local_key k = {};
	__u32 d = ip->daddr;

	if (match_addr4)
		return d == addr4;
	if (!*(volatile __u32 *)&local_check)
		return true;
	if ((bpf_ntohl(d) >> 24) == 127)
		return true; /* all of 127/8 is local, not only what lo lists */
	k.a[10] = 0xff;
	k.a[11] = 0xff;
	__builtin_memcpy(&k.a[12], &d, 4);
	return bpf_map_lookup_elem(&local_addrs, &k) != NULL;
}

static __always_inline bool ours6(const struct ipv6hdr *ip6)
{
	struct local_key k;

	if (match_addr6) {
		for (int i = 0; i < 16; i++)
			if (ip6->daddr.in6_u.u6_addr8[i] != addr6[i])
				return false;
		return true;
	}
	if (!*(volatile __u32 *)&local_check)
		return true;
	__builtin_memcpy(k.a, &ip6->daddr, 16);
	return bpf_map_lookup_elem(&local_addrs, &k) != NULL;
}

/*
 * The stamp is written tag 0 first, then the time, then its tag, with
 * compiler barriers between: a reader that sees the same tag before and
 * after reading the time knows the time is that datagram's (x86 keeps
 * stores in order; elsewhere a torn read can at worst give one wrong
 * latency sample).
 */
static __always_inline void stamp(__u32 flow, __u64 seq, __u64 now, __u64 mark)
{
	__u32 shift = *(volatile __u32 *)&stamp_shift & 63;
	__u32 slot = (__u32)(((seq << shift) + flow) & (UG_XDP_STAMPS - 1));
	struct ug_stamp *s = bpf_map_lookup_elem(&stamps, &slot);

	if (!s)
		return;
	*(volatile __u64 *)&s->tag = 0;
	asm volatile("" ::: "memory");
	*(volatile __u64 *)&s->ns = now;
	asm volatile("" ::: "memory");
	*(volatile __u64 *)&s->tag = (UG_STAMP_TAG(flow, seq) + 1) | mark;
}

/* Count and stamp one datagram of the run. */
static __always_inline void count(__u32 flow, __u64 seq, __u16 udp_len)
{
	struct ug_xdp_flow *f = bpf_map_lookup_elem(&flows, &flow);
	__u64 now = bpf_ktime_get_ns();

	if (f) {
		f->datagrams++;
		f->bytes += udp_len > 8 ? udp_len - 8 : 0;
		f->last_ns = now;
	}
	stamp(flow, seq, now, 0);
}

SEC("xdp")
int xdpstamp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct udphdr *udp;
	struct ug_hdr *h;
	__u16 proto;
	__u32 flow, run, hrun;
	__u64 seq;
	bool ours;

	stat_inc(UG_XS_PACKETS);
	if ((void *)(eth + 1) > end)
		goto other;
	proto = eth->h_proto;
	data = eth + 1;
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		struct vlan_hdr *vh = data;

		if ((void *)(vh + 1) > end)
			goto other;
		proto = vh->h_vlan_encapsulated_proto;
		data = vh + 1;
	}

	if (proto == bpf_htons(ETH_P_IP) && want4) {
		struct iphdr *ip = data;
		__u32 ihl;

		if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP)
			goto other;
		ihl = ip->ihl * 4;
		if (ihl < sizeof(*ip))
			goto other;
		ours = ours4(ip);
		if (ip->frag_off & bpf_htons(IP_OFFSET)) {
			/* a later fragment: no UDP header to look at */
			stat_inc(ours ? UG_XS_FRAGS : UG_XS_OTHER);
			return XDP_PASS;
		}
		if (!ours)
			goto other;
		udp = (void *)ip + ihl;
	} else if (proto == bpf_htons(ETH_P_IPV6) && want6) {
		struct ipv6hdr *ip6 = data;
		__u8 next;

		if ((void *)(ip6 + 1) > end)
			goto other;
		next = ip6->nexthdr;
		data = ip6 + 1;
		/* (other extension headers, ICMPv6: no lookup, not ours) */
		if (next != IPPROTO_FRAGMENT_ && next != IPPROTO_UDP)
			goto other;
		ours = ours6(ip6);
		if (next == IPPROTO_FRAGMENT_) {
			struct frag_hdr *fh = data;

			if ((void *)(fh + 1) > end)
				goto other;
			if (fh->nexthdr != IPPROTO_UDP)
				goto other;
			if (fh->frag_off & bpf_htons(IP6_OFFSET)) {
				stat_inc(ours ? UG_XS_FRAGS : UG_XS_OTHER);
				return XDP_PASS;
			}
			next = fh->nexthdr;
			data = fh + 1;
		}
		if (next != IPPROTO_UDP || !ours)
			goto other;
		udp = data;
	} else {
		goto other;
	}

	if ((void *)(udp + 1) > end || udp->dest != bpf_htons(port))
		goto other;
	h = (void *)(udp + 1);
	if ((void *)(h + 1) > end) {
		stat_inc(UG_XS_SHORT);
		return XDP_PASS;
	}
	if (h->magic != bpf_htonl(UG_MAGIC))
		goto foreign;
	hrun = bpf_ntohl(h->run);
	flow = bpf_ntohl(h->flow);
	seq = bpf_be64_to_cpu(h->seq);
	/* the sink tracks no more flows than there are slots, and no
	 * sequence number a sender could not reach: not ours */
	if (flow >= UG_XDP_FLOWS || seq >= UG_SEQ_LIMIT)
		goto foreign;
	/* gen never draws these run ids (and the sink refuses them) */
	if (hrun == UG_RUN_ANY || hrun == UG_RUN_NONE)
		goto foreign;
	run = *(volatile __u32 *)&run_id;
	if (run == UG_RUN_NONE) {
		/* the run is ending: its stragglers are marked, not counted */
		if (hrun != *(volatile __u32 *)&ended_run)
			goto foreign;
		stamp(flow, seq, bpf_ktime_get_ns(), UG_STAMP_UNCOUNTED);
		stat_inc(UG_XS_AFTER_END);
		return XDP_PASS;
	}
	if (run != UG_RUN_ANY && hrun != run)
		goto foreign;
	count(flow, seq, bpf_ntohs(udp->len));
	return XDP_PASS;
foreign:
	stat_inc(UG_XS_FOREIGN);
	return XDP_PASS;
other:
	stat_inc(UG_XS_OTHER);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
