/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The sink's XDP program (bpf/xdpstamp.bpf.c): load it for one port and
 * address, attach it to an interface with a BPF link (native mode, else
 * generic), and read what it counted and stamped. The link is an fd of
 * this process only (never pinned): it goes with the process however the
 * process ends, SIGKILL included.
 */
#ifndef UD_XDPSTAMP_H
#define UD_XDPSTAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "udpgen.h"

struct xdpstamp_opts {
	const char *ifname;
	uint16_t port;          /* host byte order */
	int family;             /* AF_INET, AF_INET6, or 0: both */
	bool match_addr;        /* false (a wildcard bind): any address of
				   this host (xdpstamp__refresh_local) */
	uint8_t addr[16];       /* IPv4 in the first 4 bytes */
};

struct xdpstamp {
	struct xdpstamp_bpf *skel;
	int link_fd;            /* the attachment: closing it detaches */
	int ifindex;
	bool native;            /* driver mode, not generic (SKB) */
	bool local;             /* the program checks local_addrs */
	int ncpus;
	uint32_t shift;         /* the program's stamp_shift, as last set */
	const struct ug_stamp *stamps; /* UG_XDP_STAMPS, mapped read-only */
	size_t stamps_len;
	struct ug_xdp_flow *vals; /* batch read buffer: flows x CPUs */
	uint32_t *keys;
	uint64_t *stat_vals;    /* ncpus */
};

/*
 * The interface's index, or -ENODEV: checked before anything is loaded so
 * a typo is a usage error, not a BPF one.
 */
int xdpstamp__ifindex(const char *ifname);
/*
 * Load and attach. 0, or a negative errno with one line in `msg` (what
 * failed, and what to do): -ENODEV unknown interface, -EPERM not allowed,
 * -EBUSY another XDP program is attached there, others: the kernel's.
 */
int xdpstamp__open(struct xdpstamp *x, const struct xdpstamp_opts *o,
		   char *msg, size_t len);
void xdpstamp__close(struct xdpstamp *x);
/* Count only datagrams of this run from now on (UG_RUN_ANY: any run). */
void xdpstamp__set_run(struct xdpstamp *x, uint32_t run);
/*
 * Stop counting `run` (its final readings follow): from now on its
 * datagrams are only stamped, as uncounted (xdpstamp__uncounted), and
 * tallied as UG_XS_AFTER_END. xdpstamp__set_run starts counting again.
 */
void xdpstamp__stop_run(struct xdpstamp *x, uint32_t run);
/*
 * A wildcard bind: tell the program this host's addresses now (it counts
 * only datagrams to them). Added before the old ones are removed, so a
 * packet in between is never taken for another host's. 0 or a negative
 * errno (then the program takes any address as ours). No-op otherwise.
 */
int xdpstamp__refresh_local(struct xdpstamp *x);
/*
 * The run has (at least) this many flows: stamps are spread for them
 * (0: as many as there may be). Stamps written before are not found
 * any more (-ENOENT), which only costs those datagrams their latency.
 */
void xdpstamp__set_flows(struct xdpstamp *x, uint32_t nflows);
/*
 * Per flow, summed over CPUs, cumulative since load: flows 0 .. n-1 into
 * out[] (n <= UG_XDP_FLOWS).
 */
int xdpstamp__read_flows(struct xdpstamp *x, struct ug_xdp_flow *out,
			 uint32_t n);
/* The UG_XS_* counters, summed over CPUs, cumulative since load. */
int xdpstamp__read_stats(struct xdpstamp *x, uint64_t stats[UG_XS_MAX]);
/*
 * When (CLOCK_MONOTONIC ns) datagram (flow, seq) went through XDP: 0, or
 * -ENOENT when its slot holds another datagram's stamp by now.
 */
int xdpstamp__stamp(const struct xdpstamp *x, uint32_t flow, uint64_t seq,
		    uint64_t *ns);
/*
 * Did datagram (flow, seq) go through XDP after its run stopped being
 * counted (xdpstamp__stop_run)? false also when its slot holds another
 * datagram's stamp by now.
 */
bool xdpstamp__uncounted(const struct xdpstamp *x, uint32_t flow, uint64_t seq);

#endif
