/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types shared by the BPF programs (bpf/) and user space (src/).
 * Fixed-width __u* types only: this header is compiled both against
 * vmlinux.h and against the libc/uapi headers.
 */
#ifndef UDPDROP_H
#define UDPDROP_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Where the socket identity in ud_key.cookie came from. */
#define UD_KEY_SOCK      (1u << 0) /* cookie names a socket */
#define UD_KEY_RX_SK     (1u << 1) /* ... the receiving socket (rx_sk / udp_fail tp) */
#define UD_KEY_SKB_SK    (1u << 2) /* ... skb->sk: a local sender (or early demux) */
#define UD_KEY_INODE     (1u << 3) /* cookie field holds the socket inode instead */
#define UD_KEY_FRAG      (1u << 4) /* the freed skb was an IP fragment */
#define UD_KEY_FAIL_RCVBUF (1u << 5) /* udp_fail_queue_rcv_skb said -ENOMEM (rcvbuf) */
#define UD_KEY_FAIL_MEM  (1u << 6) /* udp_fail_queue_rcv_skb said -ENOBUFS (udp_mem) */
#define UD_KEY_CHILD     (1u << 7) /* a frag_list member freed with its parent */
#define UD_KEY_CLOSE     (1u << 8) /* freed by a socket's destructor: queued,
				      never read; netns unknown (0) in BPF */
#define UD_KEY_OVERFLOW  (1u << 9) /* user space (trace COUNTS): the overflow
				      bucket of key.reason; no socket, no flow */
#define UD_KEY_FOLDED    (1u << 11) /* user space: sockets of key.netns
				      closed long ago, folded into one bucket
				      per reason and place so a long run's
				      memory stays bounded; cookie is
				      UD_COOKIE_FOLDED | netns */
#define UD_COOKIE_FOLDED (1ull << 62)
#define UD_KEY_DELIVERED (1u << 13) /* a drop window (struct ud_win) of the
				      socket's deliveries, not of drops */
#define UD_KEY_SITE      (1u << 12) /* kernels without drop reasons (before
				      5.17): reason holds a udpdrop site
				      (enum ud_site), derived from the drop's
				      location and the skb, not a kernel reason */
/*
 * The freed skb carried several datagrams (a GSO or GRO skb: its
 * gso_segs): the bucket's datagrams are its segments, its skbs the skbs,
 * one per such skb, which is what the kernel's own counters count
 * (UdpRcvbufErrors, sk_drops, UdpNoPorts: one per skb). With UD_KEY_CHILD
 * too: the frag_list members freed with such skbs (datagrams 0), kept
 * apart so the first bucket's skbs are the kernel's count exactly.
 */
#define UD_KEY_GRO       (1u << 14)
/*
 * The datagram came to the host as a multicast or broadcast (skb
 * pkt_type PACKET_MULTICAST or PACKET_BROADCAST): a socket row with such
 * drops is one receiver of a group, whose sender every receiver shares
 * (the advice never paces it). One a local sender loops back carries
 * PACKET_LOOPBACK and is not marked.
 */
#define UD_KEY_GROUP     (1u << 15)
/*
 * A reassembly failure's fragment whose netns the program could not know
 * (netns 0): one freed by the queue's purge when no head was freed just
 * before on this CPU (the datagram's first fragment never came: lost on
 * the way, or dropped here), or a head whose device had gone. Fragments
 * in a queue have no device (skb->dev shares its place with the queue's
 * rb-tree node) and the timer runs in any task. It passes a netns filter,
 * and user space gives it the netns its destination address is local to
 * (model__key_netns).
 */
#define UD_KEY_NETNS_ADDR (1u << 16)
/*
 * A reassembly failure of a datagram counted already under another cause
 * (its first fragment was dropped here, say by a rule on ports, which only
 * the first fragment carries): its first skb's bucket. The datagram is
 * not lost twice, but the kernel counts the failure (IpReasmFails,
 * IpReasmTimeout): the bucket's datagrams are that unit, never drops
 * (ud_drops, ud_kernel_units in src/model/rows.h); skbs and bytes are its
 * fragments' as anywhere.
 */
#define UD_KEY_REASM_UNIT (1u << 17)
#define UD_KEY_FLOW_MATCHED (1u << 10) /* user space (trace COUNTS): a
				      socketless bucket's share that its flow
				      matched to a socket (record's live model):
				      cookie and netns are that socket's */

/*
 * One aggregation bucket. Socket-attributed drops leave the flow fields
 * zero (the socket table knows the tuple), which keeps the map small;
 * drops with no socket keep saddr/daddr/dport so user space can match them
 * to a bound socket or show the flow. sport is never kept: it would make
 * one bucket per client port.
 */
struct ud_key {
	__u64 cookie;   /* socket cookie (or inode, see UD_KEY_INODE), 0 if none */
	__u64 location; /* kernel text address that freed the skb */
	__u32 netns;    /* network namespace inode */
	__u32 reason;   /* raw enum skb_drop_reason, subsystem bits included */
	__u8 saddr[16]; /* IPv4 in the first 4 bytes */
	__u8 daddr[16];
	__u16 dport;    /* host byte order; 0 for non-first fragments */
	__u8 family;    /* AF_INET (2), AF_INET6 (10) or 0 if unknown */
	__u8 proto;     /* IPPROTO_UDP, IPPROTO_UDPLITE, ... */
	__u32 flags;    /* UD_KEY_* */
};

struct ud_val {
	__u64 datagrams; /* lost datagrams (see DESIGN.md, counting rules) */
	__u64 skbs;      /* raw kfree_skb events */
	__u64 bytes;     /* skb->len summed over the events */
	/*
	 * A socket bucket's open drop window, this CPU's: the window's index
	 * (jiffies / (CONFIG_HZ / 10), or CLOCK_MONOTONIC ns / UD_WIN_NS:
	 * win_index in bpf/udpdrop.bpf.c) in the high 32 bits, the datagrams
	 * dropped in it in the low 32, one word so that user space never
	 * reads one without the other. Not a count: user space never adds it.
	 */
	__u64 win;
};

/*
 * Drop windows: each socket's drops in consecutive 100 ms windows of the
 * kernel's tick counter, or of CLOCK_MONOTONIC without a usable CONFIG_HZ
 * (win_index), the figures the advice judges a drop pattern by (bursts or
 * a steady overload, the worst burst). Measured here, not by
 * each view's refreshes, so that top, doctor and a recording of the same
 * run see the same windows. Each CPU counts its open window in the
 * bucket (ud_val.win); when it moves on, the window closed goes to the
 * `wins` ring as a struct ud_win (user space sums the CPUs'; see
 * src/kernel/tracer_windows.c, tracer__read). A window the ring had no
 * room for is counted in UD_STAT_WIN_LOST.
 */
#define UD_WIN_NS 100000000ull
#define UD_WIN_INDEX(w) ((__u32)((w) >> 32))
#define UD_WIN_COUNT(w) ((__u32)(w))

struct ud_win {
	struct ud_key key;
	__u64 win;  /* as ud_val.win: index << 32 | datagrams */
	__u32 cpu;
	__u32 pad;
};

/*
 * The hot path's counters: a direct-mapped table per CPU in one mmap-able
 * array (slot = cpu * UD_SLOTS_PER_CPU + hash). The first key to land in a
 * slot owns it and is counted there with plain adds; a key that finds its
 * slot owned by another goes to the drops hash map. Counts never move
 * between the two, so user space sums both.
 *
 * A closed socket's slot is given back by user space (tracer__retire):
 * it marks the slot RETIRED, waits out every program that may still be
 * adding to it (an RCU grace period: the programs run with preemption
 * off), takes the final count, then frees the slot with the generation
 * bumped. The low two bits of `state` are the phase, the rest the
 * generation: the programs' per-CPU fast path remembers the whole word,
 * so a slot that changed hands since never matches it.
 */
#define UD_SLOTS_PER_CPU 256
#define UD_SLOT_FREE 0
#define UD_SLOT_CLAIMED 1 /* key being written */
#define UD_SLOT_READY 2
#define UD_SLOT_RETIRED 3 /* user space is taking its last count */
#define UD_SLOT_PHASE(state) ((state) & 3)
#define UD_SLOT_GEN_ONE 4 /* one generation, in `state` units */

/*
 * The fast path reads `state` and adds to `val`: the two lead, in the
 * slot's first cache line (slots are 128 bytes, so each starts one; the
 * array's values start on a page), and the key the fast path never reads
 * follows.
 */
struct ud_slot {
	__u64 state;
	struct ud_val val;
	struct ud_key key;
	__u8 pad[24];
};

/*
 * Global per-CPU counters: everything the programs saw, so nothing hides.
 * They are the first UD_STAT_MAX words of the per-CPU `handover` value.
 */
enum ud_stat {
	UD_STAT_EVENTS,        /* kfree_skb events examined (derived: skbs +
				  NOT_OURS + FILTERED; saves a write per drop) */
	UD_STAT_NOT_OURS,      /* not UDP (or not the wanted protocols) */
	UD_STAT_FILTERED,      /* UDP but excluded by --port/--netns */
	UD_STAT_OVERFLOW,      /* events that found the drops map full */
	UD_STAT_FAIL_EVENTS,   /* udp_fail_queue_rcv_skb events */
	UD_STAT_RX_OVERFLOW,   /* deliveries that found the rx map full */
	UD_STAT_WIN_LOST,      /* closed drop windows the wins ring had no room for */
	UD_STAT_MAX,
};

/*
 * Kernel text ranges the classifier must recognise by drop location,
 * found in kallsyms by the loader (0, 0 when unknown).
 */
enum ud_range {
	UD_RANGE_FRAG_PURGE,   /* inet_frag_rbtree_purge: a queue's fragments */
	UD_RANGE_UDP_DESTRUCT, /* udp_destruct_common: queue purged at close */
	UD_RANGE_INET_DESTRUCT,/* inet_sock_destruct: ditto, older kernels */
	UD_RANGE_MAX,
};

/*
 * Kernels without drop reasons (before 5.17, or UDPDROP_NO_DROP_REASONS=1):
 * the classifier names the drop itself, from where kfree_skb was called
 * (the function its location lies in, a class of enum ud_loc) and what the
 * skb shows, and puts that site in ud_key.reason with UD_KEY_SITE. The
 * numbers are udpdrop's own (a contract for traces: add, never renumber);
 * user space names them (causes.c) and maps each to a cause. Every one of
 * them stays below UD_OVERFLOW_SLOTS and UD_SHED_REASONS, so the overflow
 * and shed counts keep the cause too.
 */
enum ud_site {
	UD_SITE_UNKNOWN,      /* a location udpdrop does not know */
	UD_SITE_RCVBUF,       /* udp_fail_queue_rcv_skb rc -ENOMEM */
	UD_SITE_UDP_MEM,      /* ... rc -ENOBUFS (udp_mem) */
	UD_SITE_NO_SOCKET,    /* __udp{4,6}_lib_rcv, checksum checked good */
	UD_SITE_RCV_CSUM,     /* __udp{4,6}_lib_rcv, checksum found bad */
	UD_SITE_RCV_LENGTH,   /* __udp{4,6}_lib_rcv, UDP length not sane */
	UD_SITE_QUEUE_FILTER, /* udp_queue_rcv_one_skb's drop: checksum not bad */
	UD_SITE_QUEUE_CSUM,   /* ... checksum found bad (a socket with a filter) */
	UD_SITE_RECV_CSUM,    /* udp_recvmsg / first_packet_length */
	UD_SITE_CLOSE,        /* a closing socket's queue (UD_KEY_CLOSE) */
	UD_SITE_FRAG_EXPIRE,  /* ip_expire, ip6_frag_expire: a queue's head */
	UD_SITE_FRAG_PURGE,   /* inet_frag_rbtree_purge: a queue's fragments */
	UD_SITE_FRAG_QUEUE,   /* ip_frag_queue, ip6_frag_queue: one fragment */
	UD_SITE_NETFILTER,    /* nf_hook_slow */
	UD_SITE_QDISC,        /* kfree_skb_list (__dev_xmit_skb's to_free) */
	UD_SITE_BACKLOG,      /* enqueue_to_backlog */
	UD_SITE_NEIGH,        /* neighbour resolution */
	UD_SITE_UDP_QUEUE,    /* udp_queue_rcv_one_skb, header pulled, but no
				 udp_fail_queue_rcv_skb followed (not expected) */
	/*
	 * Multicast and broadcast no socket wanted. UDP: __udp{4,6}_lib_rcv
	 * with a broadcast or multicast route (IPv4: the route's
	 * RTCF_BROADCAST or RTCF_MULTICAST, the kernel's own test; IPv6: a
	 * multicast destination), the datagram UdpIgnoredMulti counts. IP: a
	 * multicast datagram ip_rcv_finish_core or ip6_mc_input refuses,
	 * because no socket joined its group on that interface (no counter).
	 */
	UD_SITE_MCAST_UNWANTED,
	UD_SITE_MCAST_UNJOINED,
	UD_SITE_MAX,
};

/* Location classes: which functions a site range stands for. */
enum ud_loc {
	UD_LOC_NONE,
	UD_LOC_UDP_RCV,     /* __udp4_lib_rcv, __udp6_lib_rcv */
	UD_LOC_UDP_QUEUE,   /* udp_queue_rcv_one_skb, udpv6_queue_rcv_one_skb */
	UD_LOC_UDP_RECV,    /* udp_recvmsg, udpv6_recvmsg, first_packet_length */
	UD_LOC_FRAG_EXPIRE,
	UD_LOC_FRAG_QUEUE,
	UD_LOC_NETFILTER,
	UD_LOC_QDISC,
	UD_LOC_BACKLOG,
	UD_LOC_NEIGH,
	UD_LOC_IP_RCV,      /* ip_rcv_finish_core, ip6_mc_input: routing input */
};

/* Function ranges for the site classes (loader-filled, 0 when unknown). */
#define UD_SITE_RANGES 48

/*
 * When the drops map is full, events land in the overflow array instead,
 * indexed by reason (reasons at or above the last slot share it), so totals
 * per cause stay exact even when per-socket detail is lost.
 */
#define UD_OVERFLOW_SLOTS 256

/*
 * Deliveries (sock:sk_data_ready, once per datagram UDP queues): the rx
 * map, per CPU, keyed by the socket's identity as the drop keys name it:
 * the cookie, or UD_RX_INODE | inode while the socket has no cookie yet
 * (cookies are far below 2^63). 0: a socket with neither.
 */
#define UD_RX_INODE (1ull << 63)

struct ud_rx {
	__u64 datagrams; /* queued to the socket's receive queue */
	__u32 peak;      /* most bytes queued (sk_rmem_alloc) seen right
			    after an enqueue, this datagram included */
	/*
	 * Where the socket lives, written once when its entry is made: a
	 * socket that queues datagrams and closes between two socket-table
	 * dumps is still known by netns and port, so the purge of its queue
	 * at close (which the kernel reports with no socket and no netns)
	 * can be given to it.
	 */
	__u32 netns;
	__u16 lport;     /* host order */
	__u8 family;
	__u8 proto;
	__u32 pad;
	/* this CPU's open window of deliveries, as ud_val.win: the advice's
	 * pacing rate is what the reader took in the windows with drops */
	__u64 win;
};

/*
 * The deliveries' fast lane, a direct-mapped table per CPU (a per-CPU
 * array): the first identity to land in a slot owns it on that CPU for
 * the run; one that finds its slot owned goes to the rx hash map. Counts
 * never move between the two: user space sums both.
 */
#define UD_RX_SLOTS 256

struct ud_rx_slot {
	__u64 id;        /* 0: free */
	struct ud_rx val;
};

/*
 * Per-drop events for `udpdrop record` (only loaded with events on): one
 * ring-buffer record per counted kfree_skb, the flow read from the packet
 * (socket keys keep no tuple), then cap_len bytes of it from its network
 * header when asked (--headers). The counts stay the source of truth;
 * an event that finds the ring full is shed and counted in `shed`.
 */
#define UD_CAP_MAX 256

struct ud_event {
	__u64 time_ns;   /* bpf_ktime_get_ns() */
	__u64 cookie;    /* as ud_key.cookie */
	__u64 location;
	__u32 netns;
	__u32 reason;
	__u32 flags;     /* UD_KEY_* */
	__u32 len;       /* skb->len */
	__u32 datagrams; /* what the counts added for it (0 for a child) */
	__u32 cpu;
	__u8 saddr[16];
	__u8 daddr[16];
	__u16 sport, dport; /* host order; 0 when not in the packet */
	__u8 family;
	__u8 proto;
	__u16 cap_len;   /* bytes of cap[] filled */
	__u8 cap[];      /* the loader's cap size follows */
};

/*
 * Shed events: slot = min(reason, UD_SHED_REASONS - 1) * UD_SHED_CLASSES
 * plus the class of the flags the cause depends on when the reason does
 * not tell (see cause__classify), so user space can name the cause.
 */
#define UD_SHED_REASONS 256
enum ud_shed_class {
	UD_SHED_PLAIN,
	UD_SHED_CLOSE,       /* UD_KEY_CLOSE */
	UD_SHED_FAIL_RCVBUF, /* UD_KEY_FAIL_RCVBUF */
	UD_SHED_FAIL_MEM,    /* UD_KEY_FAIL_MEM */
	UD_SHED_CLASSES,
};
#define UD_SHED_SLOTS (UD_SHED_REASONS * UD_SHED_CLASSES)

/*
 * The layouts the BPF programs and user space share, pinned: a field
 * added, resized or moved on one side only would be read wrongly by the
 * other (padding included). Change a size here only with both sides.
 */
_Static_assert(sizeof(struct ud_key) == 64, "struct ud_key: BPF and user space must agree");
_Static_assert(sizeof(struct ud_val) == 32, "struct ud_val: BPF and user space must agree");
_Static_assert(sizeof(struct ud_win) == 80, "struct ud_win: BPF and user space must agree");
_Static_assert(sizeof(struct ud_slot) == 128, "struct ud_slot: BPF and user space must agree");
_Static_assert(sizeof(struct ud_rx) == 32, "struct ud_rx: BPF and user space must agree");
_Static_assert(sizeof(struct ud_rx_slot) == 40, "struct ud_rx_slot: BPF and user space must agree");
_Static_assert(sizeof(struct ud_event) == 88, "struct ud_event: BPF and user space must agree");

#endif /* UDPDROP_H */
