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
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "udpgen.h"

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86dd
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88a8
#define IPPROTO_UDP_ 17
#define IPPROTO_FRAGMENT_ 44
#define IP_MF 0x2000
#define IP_OFFSET 0x1fff
#define IP6_OFFSET 0xfff8
#define XDP_PASS_ 2

/* Set by the loader before load: the sink's port and address. */
const volatile __u16 port = 0;          /* host byte order */
const volatile bool match_addr4 = false; /* false: any IPv4 address */
const volatile __u32 addr4 = 0;          /* network byte order */
const volatile bool match_addr6 = false;
const volatile __u8 addr6[16] = {};
const volatile bool want4 = true, want6 = true;

/*
 * The run the sink serves now, 0 for any: written by user space through
 * the mapped .bss when a run starts, so a straggler of the previous run
 * (or another generator) is not counted as this run's.
 */
__u32 run_id = 0;
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
	return !match_addr4 || ip->daddr == addr4;
}

static __always_inline bool ours6(const struct ipv6hdr *ip6)
{
	if (!match_addr6)
		return true;
	for (int i = 0; i < 16; i++)
		if (ip6->daddr.in6_u.u6_addr8[i] != addr6[i])
			return false;
	return true;
}

/*
 * Count and stamp one datagram of the run. The stamp is written tag 0
 * first, then the time, then its tag, with compiler barriers between: a
 * reader that sees the same tag before and after reading the time knows
 * the time is that datagram's (x86 keeps stores in order; elsewhere a
 * torn read can at worst give one wrong latency sample).
 */
static __always_inline void count(__u32 flow, __u64 seq, __u16 udp_len)
{
	struct ug_xdp_flow *f = bpf_map_lookup_elem(&flows, &flow);
	__u64 now = bpf_ktime_get_ns();
	__u32 shift = *(volatile __u32 *)&stamp_shift & 63;
	__u32 slot = (__u32)(((seq << shift) + flow) & (UG_XDP_STAMPS - 1));
	struct ug_stamp *s;

	if (f) {
		f->datagrams++;
		f->bytes += udp_len > 8 ? udp_len - 8 : 0;
		f->last_ns = now;
	}
	s = bpf_map_lookup_elem(&stamps, &slot);
	if (s) {
		*(volatile __u64 *)&s->tag = 0;
		asm volatile("" ::: "memory");
		*(volatile __u64 *)&s->ns = now;
		asm volatile("" ::: "memory");
		*(volatile __u64 *)&s->tag = UG_STAMP_TAG(flow, seq) + 1;
	}
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
	__u32 flow, run;

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

		if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP_)
			goto other;
		ihl = ip->ihl * 4;
		if (ihl < sizeof(*ip))
			goto other;
		if (ip->frag_off & bpf_htons(IP_OFFSET)) {
			/* a later fragment: no UDP header to look at */
			stat_inc(ours4(ip) ? UG_XS_FRAGS : UG_XS_OTHER);
			return XDP_PASS_;
		}
		udp = (void *)ip + ihl;
	} else if (proto == bpf_htons(ETH_P_IPV6) && want6) {
		struct ipv6hdr *ip6 = data;
		__u8 next;

		if ((void *)(ip6 + 1) > end)
			goto other;
		next = ip6->nexthdr;
		data = ip6 + 1;
		if (next == IPPROTO_FRAGMENT_) {
			struct frag_hdr *fh = data;

			if ((void *)(fh + 1) > end)
				goto other;
			if (fh->nexthdr != IPPROTO_UDP_)
				goto other;
			if (fh->frag_off & bpf_htons(IP6_OFFSET)) {
				stat_inc(ours6(ip6) ? UG_XS_FRAGS : UG_XS_OTHER);
				return XDP_PASS_;
			}
			next = fh->nexthdr;
			data = fh + 1;
		}
		if (next != IPPROTO_UDP_)
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
		return XDP_PASS_;
	}
	run = *(volatile __u32 *)&run_id;
	if (h->magic != bpf_htonl(UG_MAGIC) || (run && h->run != bpf_htonl(run)))
		goto other;
	flow = bpf_ntohl(h->flow);
	/* the sink tracks no more flows than there are slots: not ours */
	if (flow >= UG_XDP_FLOWS)
		goto other;
	count(flow, bpf_be64_to_cpu(h->seq), bpf_ntohs(udp->len));
	return XDP_PASS_;
other:
	stat_inc(UG_XS_OTHER);
	return XDP_PASS_;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
