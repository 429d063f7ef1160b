/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What `udpdrop gen` puts at the start of every datagram, and what the
 * sink's XDP program shares with user space. Shared by bpf/xdpstamp.bpf.c
 * and src/: fixed-width types only.
 *
 * The payload header sits at offset 0 of the UDP payload, every field in
 * network byte order (big-endian), so a capture or another tool can read
 * it without knowing the sender's machine:
 *
 *   offset size field
 *        0    4 magic      UG_MAGIC ("UDPG")
 *        4    2 version    UG_VERSION
 *        6    2 flags      UG_F_*
 *        8    4 run        run id: tells one run's datagrams from another's
 *       12    4 flow       flow id, 0 .. flows-1 (one source port each)
 *       16    8 seq        per flow, from 0, no gaps at the sender
 *       24    8 sched_ns   the slot this datagram was scheduled for
 *       32    8 sent_ns    when it was handed to the kernel
 *       40    8 total      datagrams this flow sends in all; 0 while unknown
 *                          (--duration), always set on the UG_F_LAST datagram
 *       48      filler (bytes 0x00..0xff repeating from offset 48)
 *
 * Times are the sender's CLOCK_MONOTONIC: comparable with each other (the
 * sender's own lateness), not with the receiver's clock across hosts.
 */
#ifndef UDPGEN_H
#define UDPGEN_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define UG_MAGIC 0x55445047u /* "UDPG" */
#define UG_VERSION 1
#define UG_F_LAST (1u << 0)  /* the flow's last datagram */

struct ug_hdr {
	__u32 magic;
	__u16 version;
	__u16 flags;
	__u32 run;
	__u32 flow;
	__u64 seq;
	__u64 sched_ns;
	__u64 sent_ns;
	__u64 total;
} __attribute__((packed));

#define UG_HDR_LEN 48 /* the smallest datagram gen sends */

/* ---- the sink's XDP program (bpf/xdpstamp.bpf.c) ---- */

#define UG_XDP_FLOWS 1024      /* flow ids at or above are not counted (UG_XS_FOREIGN):
				  the sink tracks no more flows than this */
/*
 * The program's run_id global: the run whose datagrams it counts. gen never
 * draws 0 or 0xffffffff as a run id: 0 means any run (the sink is idle,
 * and a run without control channel may be starting), 0xffffffff none
 * (the run is ending: the sink takes its final readings, and the ended
 * run's stragglers are stamped as uncounted, UG_XS_AFTER_END).
 */
#define UG_RUN_ANY 0u
#define UG_RUN_NONE 0xffffffffu
/* Sequence numbers at or above are no sender's (forged, or corrupt): not
 * counted (UG_XS_FOREIGN); the sink's seqtrack rejects them too. */
#define UG_SEQ_LIMIT (1ull << 62)
/* The host's addresses the program knows for a wildcard bind; with more,
 * it takes any address as the sink's. */
#define UG_XDP_LOCAL_ADDRS 256
/*
 * Arrival stamps, one slot per (flow, seq):
 *   slot = ((seq << stamp_shift) + flow) & (UG_XDP_STAMPS - 1)
 * stamp_shift is a global of the program that the sink sets to the run's
 * flows rounded up to a power of two (log2; UG_XDP_FLOWS_SHIFT until it
 * knows), so a run of few flows keeps a long history: one flow, the last
 * UG_XDP_STAMPS datagrams. A slot is overwritten by a later datagram;
 * `tag` says whose stamp it holds. Mapped read-only by the sink.
 */
#define UG_XDP_FLOWS_SHIFT 10  /* log2(UG_XDP_FLOWS) */
#define UG_XDP_STAMPS (1u << 18)
#define UG_STAMP_TAG(flow, seq) ((((__u64)(flow)) << 48) | ((seq) & 0xffffffffffffull))
/* in a stamp's tag: the datagram arrived after its run's counting stopped
 * (run_id UG_RUN_NONE), so it is in no XDP count */
#define UG_STAMP_UNCOUNTED (1ull << 63)

struct ug_stamp {
	__u64 tag;   /* UG_STAMP_TAG(flow, seq) + 1, | UG_STAMP_UNCOUNTED when
			not counted (0: never written) */
	__u64 ns;    /* bpf_ktime_get_ns() at XDP: CLOCK_MONOTONIC */
};

/* Per CPU, per flow: what reached the interface. */
struct ug_xdp_flow {
	__u64 datagrams; /* first fragments and whole datagrams of the run */
	__u64 bytes;     /* UDP payload bytes, from the UDP header's length */
	__u64 last_ns;   /* the latest arrival on this CPU */
};

/*
 * Per CPU: everything else the program looked at (UG_XS_*). Only packets
 * to the sink's address count as the run's, FOREIGN, SHORT or FRAGS: to a
 * specific address when the sink is bound to one, else to any address of
 * the host (the program's local_addrs map); the rest is OTHER.
 */
enum ug_xdp_stat {
	UG_XS_PACKETS,     /* every packet the program ran for */
	UG_XS_OTHER,       /* not UDP to the sink's port and address */
	UG_XS_FRAGS,       /* non-first fragments to the sink's address (not counted) */
	UG_XS_SHORT,       /* to the port, but too short for the header */
	UG_XS_FOREIGN,     /* to the port, but not the run's: another magic, run,
			      flow id >= UG_XDP_FLOWS, seq >= UG_SEQ_LIMIT */
	UG_XS_AFTER_END,   /* the ended run's, after its counting stopped */
	UG_XS_MAX,
};

/*
 * The layouts shared by gen, sink and the XDP program (ug_hdr is on the
 * wire), pinned: change a size only with every side.
 */
_Static_assert(sizeof(struct ug_hdr) == 48, "struct ug_hdr: the wire format");
_Static_assert(sizeof(struct ug_stamp) == 16, "struct ug_stamp: XDP and user space must agree");
_Static_assert(sizeof(struct ug_xdp_flow) == 24, "struct ug_xdp_flow: XDP and user space must agree");

#endif
