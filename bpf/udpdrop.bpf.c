// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop kernel side: classify every freed-with-a-reason skb that carries
 * UDP, attribute it to a socket (or a flow when there is none) and count it
 * in a per-CPU map. User space reads the map each interval, so the counts
 * are exact at any drop rate. Only `udpdrop record` also asks for one
 * ring-buffer event per drop; those may be shed (and are counted), the
 * counts never are.
 *
 * Three entry points share one classifier; the loader picks the first one
 * this kernel accepts: tp_btf (direct BTF reads, cheapest), raw_tp
 * (probe reads), classic tracepoint (needs tracefs).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include "core_fixes.bpf.h"
#include "udpdrop.h"

#ifndef UD_KFUNCS /* 1: udpdrop.bpf.o, 0: udpdrop_compat.bpf.o (Makefile) */
#error "build with -DUD_KFUNCS=1 or -DUD_KFUNCS=0, as the Makefile does"
#endif

/*
 * #defines of the kernel's headers, which vmlinux.h (BTF: types and
 * enumerators only) does not carry; enumerators (IPPROTO_UDP, TCP_TIME_WAIT,
 * ...) come from vmlinux.h itself.
 */
#define AF_INET 2
#define AF_INET6 10
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86dd
#define IPPROTO_FRAGMENT_HDR 44
#define IP_MF 0x2000
#define IP_OFFSET 0x1fff
#define ENOMEM_ 12
#define ENOBUFS_ 105
#define CHECKSUM_COMPLETE_ 2

/* Load-time knobs (set by the loader before load, read-only after). */
const volatile __u32 filter_netns = 0;  /* 0: every netns */
const volatile __u16 filter_port = 0;   /* 0: every port */
const volatile bool use_rx_sk = true;   /* false forces the pre-6.11 path */
/*
 * The purge of a closing socket's queue names no socket (see
 * struct handover, close_*): with this on, it waits on its CPU for the
 * kmem_cache_free of the struct sock that ends the same destructor, and
 * is counted as that socket's. The loader sets it only where the
 * kmem_cache_free program is attached too.
 */
const volatile bool close_owner = false;
/*
 * ... and the holding starts only once user space has attached that
 * program (tracer__arm_close): it runs on every slab free of the machine,
 * so it is attached only when a port is shared by sockets (a REUSEPORT
 * group, a port bound again and again), the one case the purge's flow
 * cannot tell apart. Until then purges go by their flow, as without it.
 */
volatile bool close_armed = false;
/* kmem:kmem_cache_free's third argument is the cache (6.1+; the loader
 * reads it from BTF: 5.12 to 6.0 pass the cache's name there) */
const volatile bool close_cache_arg = false;
const volatile __u64 frag_window_ns = 60ull * 1000000000ull;
/*
 * [start, end) of kernel functions recognised by location (enum ud_range),
 * and the sites' below. Written by user space, not fixed at load: with
 * drop reasons it reads /proc/kallsyms (tens of ms) only once the
 * programs are attached and counting (tracer__set_ranges); until then a
 * drop there is counted by its reason and flow alone. 0, 0: unknown.
 */
volatile __u64 range_start[UD_RANGE_MAX];
volatile __u64 range_end[UD_RANGE_MAX];
/*
 * Kernels without drop reasons: name each drop's site (enum ud_site) from
 * its location and the skb. Off (5.17+), the verifier removes every path
 * that does it: the kernels with reasons pay nothing for it.
 */
const volatile bool derive_sites = false;
/*
 * Before 6.10 udp_fail_queue_rcv_skb (rc, sk; IPv4 only) fires just after
 * the kfree_skb of a failed enqueue: such a drop waits for it (struct
 * handover's pend), which names its socket. Set by the loader when that
 * program is attached there (5.10-6.9), with or without drop reasons;
 * without it the drop goes by its flow, which user space matches to a
 * socket by port (and cannot tell a SO_REUSEPORT group's members apart).
 */
const volatile bool pend_fail = false;
/*
 * Kernels with drop reasons: a drop freed with NOT_SPECIFIED at a known
 * site (udp_recvmsg's bad checksum, ip_expire before 6.2, ...) is named by
 * that site too, as reason site_base + site (user space names those
 * numbers: reasons__site_base). 0: off.
 */
const volatile __u32 site_base = 0;
volatile __u64 site_start[UD_SITE_RANGES];
volatile __u64 site_end[UD_SITE_RANGES];
volatile __u8 site_loc[UD_SITE_RANGES]; /* enum ud_loc */
/*
 * Per-drop events (udpdrop record). Off, the verifier removes every path
 * that emits: top and the others pay nothing for them.
 */
const volatile bool events_on = false;
/* events go to this CPU's ring of cpu_events, not the shared one */
const volatile bool per_cpu_events = false;
const volatile __u32 cap_len = 0; /* packet bytes per event, <= UD_CAP_MAX */
/*
 * wake the reader after this many events from one CPU (the loader: a
 * quarter of a ring's worth); it also polls on a timer
 */
const volatile __u32 wakeup_events = 1 << 14;

/*
 * Socket buckets and socketless flow buckets live apart, so that a flood
 * of flows (a port scan) cannot take the room sockets need.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16384); /* resized by the loader (--map-entries) */
	__type(key, struct ud_key);
	__type(value, struct ud_val);
} drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16384); /* resized by the loader (--map-entries) */
	__type(key, struct ud_key);
	__type(value, struct ud_val);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, UD_SLOTS_PER_CPU); /* times the CPUs (loader) */
	__type(key, __u32);
	__type(value, struct ud_slot);
} slots SEC(".maps");

/* Deliveries per socket identity (see struct ud_rx, struct ud_rx_slot). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UD_RX_SLOTS);
	__type(key, __u32);
	__type(value, struct ud_rx_slot);
} rx_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16384); /* resized by the loader (--map-entries) */
	__type(key, __u64);
	__type(value, struct ud_rx);
} rx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UD_OVERFLOW_SLOTS);
	__type(key, __u32);
	__type(value, struct ud_val);
} overflow SEC(".maps");

/*
 * Per-drop events, one ring per CPU (per_cpu_events): each CPU reserves
 * in its own ring, so no two CPUs ever take the same ring's lock or
 * bounce its producer position between them. The loader sizes the inner
 * template, makes one ring per possible CPU and puts it at the CPU's
 * index before the programs are attached; user space merges the rings
 * by event time.
 */
struct event_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* the per-CPU size (loader) */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* the possible CPUs (loader) */
	__type(key, __u32);
	__array(values, struct event_ring);
} cpu_events SEC(".maps");

/*
 * Kernels that take no ring buffer inside an array of maps (the loader
 * probes): one ring shared by every CPU. Sized by the loader (a page
 * when unused: events off, or a ring per CPU).
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

/* Closed drop windows (struct ud_win; see UD_WIN_NS); sized by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} wins SEC(".maps");

/* Events that found the ring full, per reason and flag class (see udpdrop.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UD_SHED_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} shed SEC(".maps");

/* Datagram identity of an IP fragment, for counting a datagram once. */
struct frag_id {
	__u8 saddr[16];
	__u8 daddr[16];
	__u32 netns;
	__u32 id;
	__u8 family;
	__u8 proto;
	__u16 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384); /* 8192 datagrams: each under its netns and 0 */
	__type(key, struct frag_id);
	__type(value, __u64); /* last time a fragment of it was freed */
} frags SEC(".maps");

struct pkt_info {
	__u32 id;
	__u16 sport;     /* host order; first fragments and whole datagrams */
	bool fragment;   /* MF set or offset != 0 */
	bool first_frag; /* offset == 0 */
};

/*
 * Global functions (udpdrop_account_*, udpdrop_parse, ...): the verifier
 * checks each once, on its own, for any arguments of its prototype, where
 * an inlined or static one is walked again in every state of every path
 * that reaches it. Those walks took the kfree_skb program to 994,089 of
 * the verifier's 1,000,000 instructions, and seconds of start-up (14,796
 * and 90 ms now, on 6.18). Before 5.12 a global function takes only scalars (and
 * the context): what does not fit one goes through this CPU's handover,
 * one set per program that can run nested in another on one CPU (a
 * softirq's kmem_cache_free or enqueue failure inside a process-context
 * kfree_skb), and one for a kfree_skb run nested in another (before 6.1,
 * whose programs had no recursion guard: see classify).
 */
enum { ARGS_KFREE, ARGS_FAIL, ARGS_CLOSE, ARGS_NESTED, ARGS_MAX };
/* win_out: one per ARGS_* (a program that may run nested in another
 * closes its windows apart), and the deliveries' */
#define WIN_OUT_RX ARGS_MAX
#define WIN_OUT_MAX (ARGS_MAX + 1) /* <= 8: udpdrop_win_flush's mask */

/* which's set (a power of 2 masks it: a compare alone the compiler may
 * apply to a copy the verifier does not relate to the index) */
#define ARGS_OF(ho, which) (&(ho)->args[(__u32)(which) & (ARGS_MAX - 1)])

struct fn_args {
	struct ud_key key;   /* account: the bucket; emit: the event's key */
	struct ud_key flow;  /* parse: the packet's flow fields */
	struct pkt_info pi;  /* parse: the packet's fragment facts */
	__u64 slot_state;    /* account: the slot's state word (fast path) */
	/*
	 * parse, site, emit: the skb. Here, not an argument: tp_btf's skb is
	 * a typed pointer, which a global function's scalar argument refuses
	 * ("R1 is not a scalar"); stored, it reads back as a number.
	 */
	__u64 skb;
	/*
	 * emit: the skb's IP header (net_header), read by the caller, which
	 * in tp_btf reads the skb with plain loads (head 0: none found): two
	 * probe reads less per event.
	 */
	__u64 head;
	__u16 nh;
};

/*
 * Per-CPU state. Since 6.1 the kernel never runs this program nested on
 * one CPU (a kfree_skb inside a running invocation is skipped and counted
 * in the program's recursion_misses, which user space reports); older
 * kernels may nest a softirq invocation inside a process-context one,
 * and then a count may be lost, as in any per-CPU BPF counter.
 *
 * Hand-over between consecutive events on one CPU:
 * - children: freeing a reassembled (or GRO) skb frees its frag_list
 *   members right after it, each with its own kfree_skb event; they belong
 *   to the parent's bucket and are not datagrams of their own;
 * - fail: udp_fail_queue_rcv_skb fires just before the kfree_skb of the
 *   same skb and names the socket on kernels without rx_sk (6.10: before
 *   6.10 it fires after the kfree_skb, and the loader leaves it out);
 * - frag: when a reassembly queue expires, its head is freed with the
 *   input device set again (so we know the netns), then the other queued
 *   fragments from inet_frag_rbtree_purge; those have no socket, and
 *   skb->dev overlaps their rb-tree node, so it is not a device. They
 *   take the netns of the head with the same addresses and IP ID.
 * - close: a closing UDP socket's queue is freed by its destructor
 *   (__sk_destruct -> udp_destruct_common, from an RCU callback) with
 *   kfree_skb and no socket: not rx_sk, not skb->sk (stolen before the
 *   enqueue), not the queue (each skb is unlinked before it is freed),
 *   and no tracepoint names the socket before it. The same call of
 *   __sk_destruct then frees the struct sock itself, with
 *   kmem_cache_free (kmem:kmem_cache_free names it): the purge's skbs
 *   wait here, counted nowhere yet, and that free counts them as the
 *   socket's. Nothing runs between them on this CPU but the rest of that
 *   destructor, so each socket gets its own queue even when several
 *   sockets sharing a port close at once.
 */
/* handover.fast_valid */
enum {
	FAST_OFF,
	FAST_ARMED,       /* in classify_run, inside the nesting guard */
	FAST_ARMED_EARLY, /* also before it (no events: classify) */
};

struct handover {
	__u64 stats[UD_STAT_MAX]; /* first: user space reads them at offset 0 */
	/*
	 * What the early fast path reads (classify), together: 64 bytes, so
	 * at most two cache lines (the per-CPU allocator aligns the value to
	 * 8 only), where they were spread over five.
	 *
	 * fast: the last event's socket bucket, when it was an rx_sk drop
	 * counted in an owned slot. A storm of drops on one socket repeats
	 * it; the cookie (unique, never reused) proves it is the same socket
	 * even if the struct sock was freed and its memory reused. A socket
	 * no one has asked the cookie of yet (new since user space's last
	 * socket dump: its key names it by inode, UD_KEY_INODE) is proved by
	 * having still none and the same inode (FAST_INODE). A group's
	 * datagrams (UD_KEY_GROUP) have a bucket apart: FAST_GROUP says
	 * which the slot is.
	 */
	__u8 fast_valid;     /* FAST_* */
	__u8 fast_bits;      /* FAST_INODE: fast_cookie holds the inode; FAST_GROUP */
	/* a drop waiting for udp_fail_queue_rcv_skb (pend_*, below) */
	bool pend_valid;
	/* a closing socket's purge waiting for its socket (close_*, below) */
	bool close_valid;
	__u32 fast_slot;
	__u32 fast_reason;
	__u32 kfree_running; /* 1 while a kfree_skb program runs here (classify) */
	__u64 fast_sk;
	__u64 fast_cookie;
	__u64 fast_location;
	__u64 fast_state;    /* the slot's state word when armed */
	__u64 next_child;    /* struct sk_buff * expected next */
	__u64 win_cache;     /* win_index: jiffies' low 32 bits << 32 | the index */
	/* the rest */
	struct ud_key key;   /* parent bucket */
	struct frag_id frag; /* last reassembly failure seen with a device */
	__u64 fail_sk;       /* struct sock * from udp_fail_queue_rcv_skb */
	__u64 fail_skb;      /* its skb (0 on kernels where the tp lacks it) */
	__s32 fail_rc;
	__u32 cpu;           /* this CPU's id, cached: saves a helper call */
	__u32 ev_unwoken;    /* events sent since this CPU last woke the reader */
	bool cpu_known;
	/*
	 * Kernels before 6.10 free the skb of a failed enqueue first and
	 * fire udp_fail_queue_rcv_skb (rc, sk) after it: with pend_fail,
	 * such a drop waits here for that event, which names its socket and
	 * rc; one that finds no event (not expected) is counted as it was,
	 * by the next event on this CPU. (pend_valid: above.)
	 */
	struct ud_key pend_key;
	__u64 pend_datagrams, pend_skbs, pend_bytes;
	/* a waiting GRO skb's frag_list members (UD_KEY_CHILD: see UD_KEY_GRO) */
	__u64 pend_child_skbs, pend_child_bytes;
	/* record: the waiting drop's event (struct ud_event + its capture) */
	__u8 pend_ev[sizeof(struct ud_event) + UD_CAP_MAX];
	/*
	 * close_owner: the purge under way on this CPU (see above). The key
	 * is its first skb's (a flow key with UD_KEY_CLOSE), which it is
	 * counted under if the socket cannot be named. (close_valid: above.)
	 */
	bool close_child; /* next_child is a frag_list member of a purged skb */
	struct ud_key close_key;
	__u64 close_datagrams, close_skbs, close_bytes;
	__u64 close_ns; /* when the purge began (bpf_ktime_get_ns): CLOSE_WAIT_NS */
	/*
	 * A closed window on its way to the ring (udpdrop_win_flush): one
	 * per ARGS_* for drops (kfree_skb, its nested run, udp_fail,
	 * kmem_cache_free), WIN_OUT_RX for deliveries (sk_data_ready), so
	 * that a program run nested in another's (a softirq on the way out
	 * of an interrupt: an RCU callback's kmem_cache_free, a delivery)
	 * cannot overwrite the window the other is about to send.
	 */
	struct ud_win win_out[WIN_OUT_MAX];
	struct fn_args args[ARGS_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct handover);
} handover SEC(".maps");

/*
 * A global function's arguments: args[which] of this CPU's handover (and
 * the handover, where hop asks for it). NULL: no handover (not expected).
 */
static __always_inline struct fn_args *fn_args(int which, struct handover **hop)
{
	__u32 zero = 0;
	struct handover *ho = bpf_map_lookup_elem(&handover, &zero);

	if (hop)
		*hop = ho;
	return ho ? ARGS_OF(ho, which) : NULL;
}

/* start != 0: a range being written (tracer__set_ranges: from 0, end
 * first) reads as empty, never as [0, end) */
static __always_inline bool in_range(int r, __u64 addr)
{
	__u64 start = range_start[r];

	return start && addr >= start && addr < range_end[r];
}

/*
 * The drop and delivery windows' index (UD_WIN_NS): jiffies / win_ticks,
 * win_ticks = CONFIG_HZ / 10 jiffies in a 100 ms window. A load and a
 * divide (once per tick and CPU: win_index's cache) where
 * bpf_ktime_get_ns reads the TSC and scales it: about 20 ns less per
 * drop on the project's VM, a third of what the fast path cost over the
 * floor. The index is the counter's alone, nothing measured: every
 * program on the kernel, whichever view loaded it, puts a drop in the
 * same window (before, the index came from jiffies plus an offset to
 * CLOCK_MONOTONIC each object measured for itself; where two views'
 * offsets fell either side of a tick's edge their windows switched a tick
 * apart, and a slow guest's doctor and top counted one burst into
 * different windows). User space finds the window in progress from the
 * same counter (times(2): tracer_win_now), and takes a window only once
 * the counter is a whole window past it (tracer_win_read_begin), so a
 * program never counts into a window already taken. The loader sets
 * win_ticks before it loads the programs, from the kernel's CONFIG_HZ
 * (/boot/config-*, /proc/config.gz), only where times(2) reports the
 * jiffies exactly (tracer_win_ticks); otherwise, and without a config,
 * the fine clock: CLOCK_MONOTONIC / UD_WIN_NS, for the whole run, so a
 * socket's windows never mix the two scales. (Not a __kconfig extern:
 * libbpf refuses the whole object where it finds no config, as on most
 * distributions' container hosts.)
 */
volatile __u64 win_ticks; /* jiffies per window; 0: the fine clock */

static __always_inline bool win_jiffies(void)
{
	return win_ticks && bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_jiffies64);
}

/* The window in progress, uncached (a socket's first drop or delivery). */
static __always_inline __u64 win_now(void)
{
	return win_jiffies() ? bpf_jiffies64() / win_ticks : bpf_ktime_get_ns() / UD_WIN_NS;
}

/*
 * The window in progress, as win_now(). On the jiffies clock the index
 * changes only with the tick, so the CPU's handover keeps the last tick's:
 * the 64-bit division (tens of cycles) is made once per tick and CPU, not
 * per drop. Tick (its low 32 bits) and index share one word, so that a
 * nested run cannot leave them torn; a stale word would need this CPU to
 * see no drop for exactly 2^32 ticks (198 days at 250 Hz).
 */
static __always_inline __u64 win_index(struct handover *ho)
{
	__u64 j = 0, c = ho->win_cache, idx;
	bool have_j = false;

	/* the cache first: it is only filled on the jiffies clock, so a hit
	 * needs no look at win_ticks (.bss, a page of its own); empty, it
	 * costs the fine clock nothing */
	if (c && bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_jiffies64)) {
		j = bpf_jiffies64();
		have_j = true;
		if ((__u32)(c >> 32) == (__u32)j)
			return (__u32)c;
	}
	if (!win_jiffies())
		return bpf_ktime_get_ns() / UD_WIN_NS;
	if (!have_j)
		j = bpf_jiffies64();
	idx = j / win_ticks;
	ho->win_cache = (j << 32) | (__u32)idx;
	return idx;
}

static __always_inline void stat_inc(struct handover *ho, __u32 idx)
{
	if (idx < UD_STAT_MAX)
		ho->stats[idx] += 1;
}

#if UD_KFUNCS
extern void *bpf_rdonly_cast(const void *obj__ign, __u32 btf_id__k) __ksym;

/*
 * tp_btf's arguments and bpf_get_current_task_btf() are trusted pointers.
 * Each struct pointer the verifier sees loaded from a trusted one (skb->sk,
 * sk->sk_socket, ...) makes it look up up to four "<struct>__safe_*" names
 * in the kernel's BTF, a scan of all of its 126,000 types for names that
 * mostly do not exist, in every state that reaches the load: two thirds
 * of the load time on 6.18. Such a chain therefore starts from a
 * read-only (untrusted) copy of its head: the same loads, fault-safe,
 * without the scans (udpdrop hands none of these pointers to a helper
 * that wants them trusted). A plain field of a trusted pointer (skb->len)
 * is still read from the trusted one: a plain load, where an untrusted
 * pointer's takes an address check. The cast itself is the verifier's;
 * it costs no instruction.
 */
#define UNTRUSTED(p, type) \
	((type *)bpf_rdonly_cast((void *)(p), bpf_core_type_id_kernel(type)))
#else
#define UNTRUSTED(p, type) ((type *)(p))
#endif

/*
 * Field readers: direct BTF loads in tp_btf (plain loads, no helper call),
 * probe reads elsewhere. `direct` is a literal at every call site, so the
 * compiler keeps only one side.
 */
#define RD(direct, direct_expr, ...)                                           \
	((direct) ? (direct_expr) : BPF_CORE_READ(__VA_ARGS__))

static __always_inline __u32 sk_netns(bool direct, struct sock *sk)
{
	return RD(direct, UNTRUSTED(sk, struct sock)->__sk_common.skc_net.net->ns.inum,
		  sk, __sk_common.skc_net.net, ns.inum);
}

static __always_inline __u32 dev_netns(bool direct, struct net_device *dev)
{
	return RD(direct, dev->nd_net.net->ns.inum, dev, nd_net.net, ns.inum);
}

static __always_inline __u32 task_netns(bool direct)
{
	if (direct) {
		struct task_struct *t = UNTRUSTED(bpf_get_current_task_btf(),
						  struct task_struct);

		return t->nsproxy->net_ns->ns.inum;
	}
	struct task_struct *t = (void *)bpf_get_current_task();

	return BPF_CORE_READ(t, nsproxy, net_ns, ns.inum);
}

/*
 * The socket cookie, as sock_diag reports it. It is generated lazily; a
 * socket nobody asked about yet has none, and then the inode names it
 * (user space dumps sockets often, which generates the cookies).
 */
static __always_inline __u64 sk_cookie_or_inode(bool direct, struct sock *sk,
						 bool *inode)
{
	__u64 cookie = RD(direct, sk->__sk_common.skc_cookie.counter,
			  sk, __sk_common.skc_cookie.counter);

	*inode = false;
	if (cookie)
		return cookie;
	cookie = RD(direct, UNTRUSTED(sk, struct sock)->sk_socket->file->f_inode->i_ino,
		    sk, sk_socket, file, f_inode, i_ino);
	*inode = cookie != 0;
	return cookie;
}

/* struct sock's sk_ino (6.18+), apart: a vmlinux.h from an older kernel
 * has none */
struct sock___ino {
	unsigned long sk_ino;
} __attribute__((preserve_access_index));

#define FAST_INODE 1
#define FAST_GROUP 2
#define PACKET_BROADCAST_ 1
#define PACKET_MULTICAST_ 2

/* Came it to the host as a multicast or broadcast (UD_KEY_GROUP)? */
static __always_inline bool skb_group(bool direct, struct sk_buff *skb)
{
	__u8 t;

	if (direct)
		t = BPF_CORE_READ_BITFIELD(skb, pkt_type);
	else
		t = BPF_CORE_READ_BITFIELD_PROBED(skb, pkt_type);
	return t == PACKET_BROADCAST_ || t == PACKET_MULTICAST_;
}

/*
 * Is sk still the socket the fast path was armed for (the same cookie, or
 * still none and the same inode)? Its identity read as sk_identity does,
 * so the key it proves is the one the slow path would make. (Armed only
 * for a socket with one: fast_cookie is never 0.)
 *
 * Without a cookie, 6.18+ keeps the socket's inode number in struct sock
 * (sk_ino: set with its struct socket, 0 once orphaned): one load from
 * the socket, where the walk to the inode (sk_socket, file, f_inode,
 * i_ino) is four dependent loads, three of them from lines nothing else
 * on the path reads: a quarter of the fast path's perf samples on the
 * project's VM, about 1.5 ns per drop in make bench. It names the armed
 * socket only where that walk named it (a socket with a file: sk_ino is
 * its file's inode's number), and a socket freed and its memory reused
 * has another.
 */
static __always_inline bool fast_same_socket(struct handover *ho, bool direct,
					     struct sock *sk)
{
	struct sock___ino *si = (struct sock___ino *)sk;
	bool inode;
	__u64 id;

	if (bpf_core_field_exists(si->sk_ino)) {
		id = RD(direct, sk->__sk_common.skc_cookie.counter,
			sk, __sk_common.skc_cookie.counter);
		if (id)
			return !(ho->fast_bits & FAST_INODE) && id == ho->fast_cookie;
		return (ho->fast_bits & FAST_INODE) &&
		       RD(direct, si->sk_ino, si, sk_ino) == ho->fast_cookie;
	}
	id = sk_cookie_or_inode(direct, sk, &inode);
	return id == ho->fast_cookie && inode == !!(ho->fast_bits & FAST_INODE);
}

static __always_inline void sk_identity(bool direct, struct sock *sk,
					struct ud_key *k)
{
	bool inode;

	k->cookie = sk_cookie_or_inode(direct, sk, &inode);
	if (inode)
		k->flags |= UD_KEY_INODE;
}

/* Returns the socket's IP protocol, or 0 for sockets that are not full. */
static __always_inline __u16 sk_proto(bool direct, struct sock *sk)
{
	__u8 state = RD(direct, sk->__sk_common.skc_state, sk,
			__sk_common.skc_state);

	if (state == TCP_TIME_WAIT || state == TCP_NEW_SYN_RECV)
		return 0;
	if (direct)
		return BPF_CORE_READ_BITFIELD(sk, sk_protocol);
	return BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol);
}

static __always_inline bool wanted_proto(__u16 proto)
{
	return proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE;
}

/*
 * Where the freed skb's IP header starts (offset from head). Returns
 * false if it has none we can find.
 */
static __always_inline bool net_header(bool direct, struct sk_buff *skb,
				       unsigned char **headp, __u16 *nhp)
{
	unsigned char *head = RD(direct, skb->head, skb, head);
	__u16 nh = RD(direct, skb->network_header, skb, network_header);

	if (!head)
		return false;
	/*
	 * A fresh skb's network header is 0 (only mac/transport start as ~0)
	 * until the stack sets it; an skb dropped before that (a full CPU
	 * backlog, a driver) has data at L3 once eth_type_trans has set
	 * protocol, so start from data then.
	 */
	if (nh == 0 || nh == 0xffff) {
		__u16 proto = bpf_ntohs(RD(direct, skb->protocol, skb, protocol));
		unsigned char *data = RD(direct, skb->data, skb, data);

		if ((proto != ETH_P_IP && proto != ETH_P_IPV6) || data < head)
			return false;
		nh = data - head;
	}
	*headp = head;
	*nhp = nh;
	return true;
}

/*
 * The packet's headers. UD_KFUNCS (the object for kernels with
 * bpf_rdonly_cast, 6.2+; see Makefile): read in place, with plain loads
 * the verifier makes fault-safe (a bad address reads 0), which costs a
 * fraction of a probe read's helper call. Otherwise (udpdrop_compat.bpf.o)
 * the first 48 bytes are copied with one probe read, and a header past
 * them with another.
 */
#if UD_KFUNCS
#define HDR_AT(p, off, type) \
	((type *)bpf_rdonly_cast((p) + (off), bpf_core_type_id_kernel(type)))
#endif

/* The source and destination ports at p + off (host order); false if
 * they cannot be read. */
static __always_inline bool read_ports(unsigned char *p, __u32 off,
				       const __u8 *copy, __u16 *sport, __u16 *dport)
{
#if UD_KFUNCS
	struct udphdr *uh = HDR_AT(p, off, struct udphdr);

	*sport = bpf_ntohs(uh->source);
	*dport = bpf_ntohs(uh->dest);
	return true;
#else
	__be16 ports[2];

	/* constant offsets into the copy: 5.10's verifier refuses a
	 * variable one on the stack */
	if (off == 20)
		__builtin_memcpy(ports, copy + 20, sizeof(ports));
	else if (off == 40)
		__builtin_memcpy(ports, copy + 40, sizeof(ports));
	else if (bpf_probe_read_kernel(ports, sizeof(ports), p + off))
		return false;
	*sport = bpf_ntohs(ports[0]);
	*dport = bpf_ntohs(ports[1]);
	return true;
#endif
}

/*
 * Parse the IPv4/IPv6 + UDP header of the freed skb into the flow fields
 * of the key. Returns false if the skb carries no IP header we understand.
 */
static __always_inline bool parse_at(unsigned char *head, __u16 nh,
				     struct ud_key *k, struct pkt_info *pi)
{
	unsigned char *p = head + nh;
	__u8 *copy = NULL;
#if UD_KFUNCS
	struct iphdr *ip = HDR_AT(p, 0, struct iphdr);
	struct ipv6hdr *ip6 = HDR_AT(p, 0, struct ipv6hdr);
	struct frag_hdr *fh = HDR_AT(p, 40, struct frag_hdr);
	__u8 vihl = *(__u8 *)ip;
#else
	__u8 buf[48];

	if (bpf_probe_read_kernel(buf, sizeof(buf), p))
		return false;
	copy = buf;

	struct iphdr *ip = (void *)buf;
	struct ipv6hdr *ip6 = (void *)buf;
	struct frag_hdr *fh = (void *)(buf + 40);
	__u8 vihl = buf[0];
#endif
	__u8 version = vihl >> 4;

	if (version == 4) {
		__u32 ihl = (vihl & 0xf) * 4;
		__u16 frag = bpf_ntohs(ip->frag_off);
		__u32 saddr = ip->saddr, daddr = ip->daddr;

		k->family = AF_INET;
		k->proto = ip->protocol;
		__builtin_memcpy(k->saddr, &saddr, 4);
		__builtin_memcpy(k->daddr, &daddr, 4);
		pi->id = bpf_ntohs(ip->id);
		pi->fragment = frag & (IP_MF | IP_OFFSET);
		pi->first_frag = !(frag & IP_OFFSET);
		if (pi->first_frag && ihl >= 20)
			read_ports(p, ihl, copy, &pi->sport, &k->dport);
		return true;
	}
	if (version == 6) {
		__u8 nexthdr = ip6->nexthdr;

		k->family = AF_INET6;
		k->proto = nexthdr;
		__builtin_memcpy(k->saddr, &ip6->saddr, 16);
		__builtin_memcpy(k->daddr, &ip6->daddr, 16);
		pi->first_frag = true;
		if (nexthdr == IPPROTO_FRAGMENT_HDR) {
			__u16 off = bpf_ntohs(fh->frag_off);

			k->proto = fh->nexthdr;
			pi->id = bpf_ntohl(fh->identification);
			pi->fragment = true;
			pi->first_frag = !(off & 0xfff8);
			if (pi->first_frag)
				read_ports(p, 48, copy, &pi->sport, &k->dport);
			return true;
		}
		read_ports(p, 40, copy, &pi->sport, &k->dport);
		return true;
	}
	return false;
}

static __always_inline bool parse_headers(bool direct, struct sk_buff *skb,
					  struct ud_key *k, struct pkt_info *pi)
{
	unsigned char *head;
	__u16 nh;

	return net_header(direct, skb, &head, &nh) && parse_at(head, nh, k, pi);
}

/* parse_headers, checked once: the flow and fragment facts to args' */
__noinline int udpdrop_parse(int which)
{
	struct fn_args *a = fn_args(which, NULL);

	if (!a)
		return 0;
	__builtin_memset(&a->flow, 0, sizeof(a->flow));
	__builtin_memset(&a->pi, 0, sizeof(a->pi));
	return parse_headers(false, (struct sk_buff *)a->skb, &a->flow, &a->pi);
}

/* Is reason the site's number (see site_base)? */
static __always_inline bool is_site(__u32 reason, __u32 site)
{
	if (derive_sites)
		return reason == site;
	return site_base && reason == site_base + site;
}

static __always_inline bool is_reasm_fail(__u32 reason)
{
	if (derive_sites)
		return reason == UD_SITE_FRAG_EXPIRE || reason == UD_SITE_FRAG_PURGE;
	return reason == UD_REASON(FRAG_REASM_TIMEOUT) ||
	       reason == UD_REASON(FRAG_TOO_FAR) ||
	       is_site(reason, UD_SITE_FRAG_EXPIRE) ||
	       is_site(reason, UD_SITE_FRAG_PURGE);
}

static __always_inline void frag_identity(struct frag_id *id,
					  const struct ud_key *k,
					  const struct pkt_info *pi)
{
	__builtin_memset(id, 0, sizeof(*id));
	__builtin_memcpy(id->saddr, k->saddr, 16);
	__builtin_memcpy(id->daddr, k->daddr, 16);
	id->netns = k->netns;
	id->id = pi->id;
	id->family = k->family;
	id->proto = k->proto;
}

/* Same addresses, protocol and IP ID (the netns is what we look for). */
static __always_inline bool same_datagram(const struct frag_id *a,
					  const struct frag_id *b)
{
	const __u64 *x = (const __u64 *)a->saddr, *y = (const __u64 *)b->saddr;

	/* saddr and daddr: 32 bytes as four words */
	for (int i = 0; i < 4; i++)
		if (x[i] != y[i])
			return false;
	return a->id == b->id && a->family == b->family && a->proto == b->proto;
}

/* See struct handover: remember the head's netns, or inherit it. */
static __always_inline __u32 frag_netns(struct handover *ho,
					const struct ud_key *k,
					const struct pkt_info *pi)
{
	struct frag_id id;

	frag_identity(&id, k, pi);
	if (!in_range(UD_RANGE_FRAG_PURGE, k->location)) {
		ho->frag = id; /* a head: its device is real */
		return k->netns;
	}
	if (ho->frag.netns && same_datagram(&id, &ho->frag))
		return ho->frag.netns;
	return 0; /* a queue freed later than its head: unknown */
}

/*
 * A datagram is lost once however many fragment skbs go with it. A
 * reassembly failure counts it unless a fragment of it was already counted
 * within the window; any other fragment drop counts it only for the first
 * fragment (offset 0) or a local sender's fragment, because a non-first
 * fragment dropped on the receive path is followed by the reassembly
 * failure that names the datagram's loss (and matches IpReasmFails).
 * Returns 1: the datagram; 0: none; FRAG_REASM_UNIT: none, but the first
 * skb of a reassembly failure of a datagram counted before (its first
 * fragment dropped here): the kernel's unit (UD_KEY_REASM_UNIT). The map's
 * value is the time with its lowest bit set once a failure of it counted.
 */
#define FRAG_REASM_UNIT 2
static __always_inline __u64 frag_datagrams(struct ud_key *k,
					    struct pkt_info *pi, __u32 reason)
{
	bool reasm_fail = is_reasm_fail(reason);
	bool local_sender = k->flags & UD_KEY_SKB_SK;
	struct frag_id id;
	__u64 now, *seen;

	if (derive_sites ? reason == UD_SITE_FRAG_QUEUE
			 : reason == UD_REASON(DUP_FRAG) ||
				   is_site(reason, UD_SITE_FRAG_QUEUE))
		return 0; /* a duplicate: the datagram may still arrive */
	if (!reasm_fail && !local_sender && !pi->first_frag)
		return 0;

	frag_identity(&id, k, pi);
	now = bpf_ktime_get_ns();
	/*
	 * Not refreshed on a hit: the window runs from the first fragment
	 * counted, as the kernel's reassembly timer runs from the first
	 * fragment queued (the loader sets it to ipfrag_time plus slack).
	 */
	seen = bpf_map_lookup_elem(&frags, &id);
	if (seen && now - (*seen & ~1ull) < frag_window_ns) {
		if (!reasm_fail || (*seen & 1))
			return 0;
		*seen |= 1;
		return FRAG_REASM_UNIT;
	}
	now = (now & ~1ull) | reasm_fail;
	bpf_map_update_elem(&frags, &id, &now, BPF_ANY);
	/*
	 * and under netns 0 too: a reassembly failure whose netns is not
	 * known here (UD_KEY_NETNS_ADDR: the datagram's first fragment was
	 * dropped, so no head is freed) looks it up there
	 */
	if (id.netns) {
		id.netns = 0;
		bpf_map_update_elem(&frags, &id, &now, BPF_ANY);
	}
	return 1;
}

/* frag_netns and frag_datagrams, checked once: on args[which]'s key and
 * packet facts */
__noinline int udpdrop_frag_netns(int which)
{
	struct handover *ho;
	struct fn_args *a = fn_args(which, &ho);

	if (!a)
		return 0;
	return frag_netns(ho, &a->key, &a->pi);
}

__noinline int udpdrop_frag_datagrams(int which, __u32 reason)
{
	struct fn_args *a = fn_args(which, NULL);

	if (!a)
		return 0;
	return frag_datagrams(&a->key, &a->pi, reason);
}

static __always_inline bool key_eq(const struct ud_key *a,
				   const struct ud_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	for (int i = 0; i < (int)(sizeof(*a) / 8); i++)
		if (x[i] != y[i])
			return false;
	return true;
}

static __always_inline __u32 slot_hash(const struct ud_key *k)
{
	const __u64 *w = (const __u64 *)k;
	__u64 h = 0;

	for (int i = 0; i < (int)(sizeof(*k) / 8); i++)
		h = (h ^ w[i]) * 0x9e3779b97f4a7c15ull;
	return (h >> 32) & (UD_SLOTS_PER_CPU - 1);
}

/* The hot path: this CPU's slot for the key, if the key owns it. */
static __always_inline struct ud_val *slot_val(struct handover *ho,
					       const struct ud_key *k,
					       __u32 *slot, __u64 *slot_state)
{
	__u32 idx;
	struct ud_slot *s;
	__u64 state;

	if (!ho->cpu_known) {
		ho->cpu = bpf_get_smp_processor_id();
		ho->cpu_known = true;
	}
	idx = ho->cpu * UD_SLOTS_PER_CPU + slot_hash(k);
	s = bpf_map_lookup_elem(&slots, &idx);

	*slot = idx;

	if (!s)
		return NULL;
	state = s->state;
	*slot_state = state;
	if (UD_SLOT_PHASE(state) == UD_SLOT_READY)
		return key_eq(&s->key, k) ? &s->val : NULL;
	/*
	 * A free slot: claim it. Kernels before 6.1 may nest this program
	 * on one CPU (no recursion guard on raw tracepoints then), so the
	 * claim is a compare-and-swap; it runs once per slot, not per drop.
	 * READY is stored last, with a full barrier, so user space reading
	 * the mmap never sees a half-written key. The generation (the bits
	 * above the phase) is kept: user space bumps it when it frees a slot.
	 */
	if (UD_SLOT_PHASE(state) != UD_SLOT_FREE ||
	    __sync_val_compare_and_swap(&s->state, state, state | UD_SLOT_CLAIMED) !=
		    state)
		return NULL;
	s->key = *k;
	__sync_lock_test_and_set(&s->state, state | UD_SLOT_READY);
	*slot_state = state | UD_SLOT_READY;
	return &s->val;
}

static __always_inline void add_n(struct ud_val *v, __u64 datagrams,
				  __u64 skbs, __u64 len)
{
	v->datagrams += datagrams;
	v->skbs += skbs;
	v->bytes += len;
}

static __always_inline void add(struct ud_val *v, __u64 datagrams, __u64 len)
{
	add_n(v, datagrams, 1, len);
}

/*
 * A socket bucket's drop window (UD_WIN_NS): this CPU's open window
 * grows; a drop in a later window first hands the one it closes to the
 * ring (before the bucket's word moves on, so that user space, reading
 * the word and then the ring, finds every window in one of the two), then
 * opens its own. Only datagrams open a window: a fragment whose datagram
 * was counted, or a frag_list member, drops none.
 */
/*
 * The closed window in this CPU's handover (win_out) to the ring, or its
 * loss counted. A global function: the verifier checks it once, on its
 * own, where a static one is walked again in every state of every path
 * that closes a window. With those walks the site-derivation program
 * (kernels without drop reasons, 5.10-5.16) went past the verifier's
 * million instructions, and a reservation (bpf_ringbuf_reserve, a
 * reference tracked through the caller's paths) took record's program
 * there too. Copied out (bpf_ringbuf_output), not reserved.
 */
__noinline int udpdrop_win_flush(int which)
{
	__u32 zero = 0;
	struct handover *ho = bpf_map_lookup_elem(&handover, &zero);
	struct ud_win *w;

	if (!ho)
		return 0;
	__u32 i = (__u32)which;

	if (i >= WIN_OUT_MAX)
		return 0;
	/* the mask, kept (barrier_var), for the verifier: the compiler may
	 * test one copy of the index and use another */
	barrier_var(i);
	w = &ho->win_out[i & 7];
	w->cpu = bpf_get_smp_processor_id();
	w->pad = 0;
	if (bpf_ringbuf_output(&wins, w, sizeof(*w), 0))
		stat_inc(ho, UD_STAT_WIN_LOST);
	return 0;
}

/* which: the caller's ARGS_* (its win_out); k: a socket's key */
static __always_inline int win_count_sock(struct handover *ho, int which,
					  const struct ud_key *k, struct ud_val *v,
					  __u64 datagrams)
{
	struct ud_win *w = &ho->win_out[(__u32)which & (ARGS_MAX - 1)];
	__u64 word, idx;

	if (!datagrams)
		return 0;
	idx = win_index(ho);
	word = v->win;
	if ((word >> 32) == idx) {
		v->win = word + datagrams;
		return 0;
	}
	if (UD_WIN_COUNT(word)) {
		__builtin_memcpy(&w->key, k, sizeof(w->key));
		w->win = word;
		udpdrop_win_flush((int)((__u32)which & (ARGS_MAX - 1)));
	}
	v->win = (idx << 32) | (__u32)datagrams;
	return 0;
}

static __always_inline int win_count(struct handover *ho, int which,
				     const struct ud_key *k, struct ud_val *v,
				     __u64 datagrams)
{
	if (!(k->flags & UD_KEY_SOCK))
		return 0;
	return win_count_sock(ho, which, k, v, datagrams);
}

/*
 * Count one event; returns the slot it went to, or -1 (hash map), and
 * the slot's state word then (for the fast path).
 */
/*
 * use_slots: a literal at every call site. The slot table's claim takes
 * BPF atomics (cmpxchg, xchg: 5.12+), which an older kernel refuses even
 * in code that never runs: the programs built with use_slots false leave the
 * table alone and count everything in the hash maps.
 */
static __always_inline int account_body(struct handover *ho, int which,
					struct fn_args *a, __u64 datagrams,
					__u64 skbs, __u64 len, bool use_slots)
{
	struct ud_key *k = &a->key;
	__u64 *slot_state = &a->slot_state;
	bool sock = k->flags & UD_KEY_SOCK;
	void *map = sock ? (void *)&drops : (void *)&flows;
	struct ud_val *v;
	__u32 slot;

	/* the slot table is the sockets' fast lane: flows go by the map */
	if (sock && use_slots) {
		v = slot_val(ho, k, &slot, slot_state);
		if (v) {
			add_n(v, datagrams, skbs, len);
			win_count(ho, which, k, v, datagrams);
			return slot;
		}
	}
	v = bpf_map_lookup_elem(map, k);
	if (!v) {
		struct ud_val zero = {};

		/* EEXIST (another CPU won) is fine; E2BIG means full */
		bpf_map_update_elem(map, k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(map, k);
	}
	if (!v) {
		/*
		 * A closing queue with no netns known here (see filtered_out)
		 * passes a netns filter so that user space can match its flow
		 * to the netns's sockets; with no room for the flow, whose it
		 * was cannot be told: another netns's must not count here.
		 */
		if (filter_netns && !k->netns) {
			stat_inc(ho, UD_STAT_FILTERED);
			return -1;
		}
		slot = k->reason < UD_OVERFLOW_SLOTS - 1
				     ? k->reason
				     : UD_OVERFLOW_SLOTS - 1;

		v = bpf_map_lookup_elem(&overflow, &slot);
		if (!v)
			return -1;
		stat_inc(ho, UD_STAT_OVERFLOW);
		/* the overflow bucket keeps drops only: a unit is none */
		add_n(v, k->flags & UD_KEY_REASM_UNIT ? 0 : datagrams, skbs, len);
		return -1; /* no socket left to hold a window */
	}
	add_n(v, datagrams, skbs, len);
	win_count(ho, which, k, v, datagrams);
	return -1;
}

__noinline int udpdrop_account_slots(int which, __u64 datagrams, __u64 skbs,
				    __u64 len)
{
	struct handover *ho;
	struct fn_args *a = fn_args(which, &ho);

	return a ? account_body(ho, which, a, datagrams, skbs, len, true) : -1;
}

/* The same without the slot table (kernels without atomics, the frees). */
__noinline int udpdrop_account_maps(int which, __u64 datagrams, __u64 skbs,
				   __u64 len)
{
	struct handover *ho;
	struct fn_args *a = fn_args(which, &ho);

	return a ? account_body(ho, which, a, datagrams, skbs, len, false) : -1;
}

/* which: the calling program's ARGS_* (a literal), as use_slots is */
static __always_inline long account_n(struct handover *ho, int which,
				      const struct ud_key *k, __u64 datagrams,
				      __u64 skbs, __u64 len, __u64 *slot_state,
				      bool use_slots)
{
	struct fn_args *a = ARGS_OF(ho, which);
	long slot;

	a->key = *k;
	slot = use_slots ? udpdrop_account_slots(which, datagrams, skbs, len)
			 : udpdrop_account_maps(which, datagrams, skbs, len);
	*slot_state = a->slot_state;
	return slot;
}

static __always_inline long account(struct handover *ho, int which,
				    struct ud_key *k, __u64 datagrams, __u64 len,
				    __u64 *slot_state, bool use_slots)
{
	return account_n(ho, which, k, datagrams, 1, len, slot_state, use_slots);
}

static __always_inline bool filtered_out(struct ud_key *k, __u16 lport)
{
	/*
	 * a closing socket's queue has no netns here (user space filters
	 * it), unless its socket was named (close_owner)
	 */
	if (filter_netns && k->netns != filter_netns &&
	    (k->flags & (UD_KEY_CLOSE | UD_KEY_SOCK)) != UD_KEY_CLOSE &&
	    !(!k->netns && (k->flags & UD_KEY_NETNS_ADDR)))
		return true;
	if (filter_port && lport != filter_port && k->dport != filter_port)
		return true;
	return false;
}

/*
 * Fill the socket part of the key. Returns false when the socket is not a
 * full UDP socket (a raw socket sending UDP, a TCP request sock, ...).
 */
static __always_inline bool sock_key(bool direct, struct sock *sk,
				     struct ud_key *k, __u16 *lport)
{
	__u16 proto = sk_proto(direct, sk);

	if (!wanted_proto(proto))
		return false;
	k->proto = proto;
	k->flags |= UD_KEY_SOCK;
	k->netns = sk_netns(direct, sk);
	k->family = RD(direct, sk->__sk_common.skc_family, sk,
		       __sk_common.skc_family);
	*lport = RD(direct, sk->__sk_common.skc_num, sk, __sk_common.skc_num);
	sk_identity(direct, sk, k);
	return true;
}

/* The number of datagrams a (GSO or GRO) skb stands for. */
static __always_inline __u64 skb_segments(bool direct, struct sk_buff *skb,
					  __u64 *frag_list)
{
	unsigned char *head;
	struct skb_shared_info *sh;
	__u32 data_len = RD(direct, skb->data_len, skb, data_len);
	__u32 end;
	__u32 gso_type;
	__u16 segs;

	*frag_list = 0;
	if (!data_len) /* linear skb: no frag_list, no GSO payload */
		return 1;
	head = RD(direct, skb->head, skb, head);
	end = RD(direct, skb->end, skb, end);
	sh = (void *)(head + end);
	*frag_list = (__u64)BPF_CORE_READ(sh, frag_list);
	gso_type = BPF_CORE_READ(sh, gso_type);
	segs = BPF_CORE_READ(sh, gso_segs);
	if ((gso_type & (SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST)) && segs > 1)
		return segs;
	return 1;
}

static __always_inline __u32 shed_slot(const struct ud_key *k)
{
	__u32 r = k->reason < UD_SHED_REASONS - 1 ? k->reason : UD_SHED_REASONS - 1;
	__u32 c = k->flags & UD_KEY_CLOSE	 ? UD_SHED_CLOSE
		  : k->flags & UD_KEY_FAIL_RCVBUF ? UD_SHED_FAIL_RCVBUF
		  : k->flags & UD_KEY_FAIL_MEM	 ? UD_SHED_FAIL_MEM
						 : UD_SHED_PLAIN;

	return r * UD_SHED_CLASSES + c;
}

/*
 * An event's fields for an skb just counted under a's key (see emit_event;
 * only `record` loads this). The flow comes from the packet, since socket
 * keys keep none; a packet without one keeps the key's.
 */
static __always_inline void fill_event(struct ud_event *e, struct sk_buff *skb,
				       const struct fn_args *a, __u32 datagrams,
				       __u32 len)
{
	const struct ud_key *k = &a->key;
	struct ud_key flow = {};
	struct pkt_info pi = {};
	unsigned char *head = (unsigned char *)a->head;
	__u16 nh = a->nh;

	e->time_ns = bpf_ktime_get_ns();
	e->cookie = k->cookie;
	e->location = k->location;
	e->netns = k->netns;
	e->reason = k->reason;
	e->flags = k->flags;
	e->len = len;
	e->datagrams = datagrams;
	e->cpu = bpf_get_smp_processor_id();
	e->cap_len = 0;
	if (head && parse_at(head, nh, &flow, &pi)) {
		__builtin_memcpy(e->saddr, flow.saddr, 16);
		__builtin_memcpy(e->daddr, flow.daddr, 16);
		e->family = flow.family;
		e->proto = flow.proto;
		e->dport = flow.dport;
		e->sport = pi.sport;
	} else {
		__builtin_memcpy(e->saddr, k->saddr, 16);
		__builtin_memcpy(e->daddr, k->daddr, 16);
		e->family = k->family;
		e->proto = k->proto;
		e->dport = k->dport;
		e->sport = 0;
	}
	if (cap_len && head) {
		/* the linear part from the IP header on: headers live there */
		__u32 tail = BPF_CORE_READ(skb, tail);
		__u32 n = tail > nh ? tail - nh : 0;

		/*
		 * cap_len (a constant to the verifier) last: the event holds
		 * cap_len bytes, and a verifier before 6.8 cannot prove a
		 * later clamp to the larger UD_CAP_MAX never raises n past it
		 * (6.1 refuses --headers 64 with "invalid access to memory").
		 */
		if (n > UD_CAP_MAX)
			n = UD_CAP_MAX;
		if (n > cap_len)
			n = cap_len;
		if (n && !bpf_probe_read_kernel(e->cap, n, head + nh))
			e->cap_len = n;
	}
}

/*
 * A wake-up per event (irq_work, then the reader's syscall) would cost
 * more than the event: wake the reader once per wakeup_events events from
 * this CPU, and let its timer do the rest. Counted here, in the CPU's own
 * cache line, not by asking the ring its backlog (bpf_ringbuf_query), which
 * reads the position the reader writes: a cache miss per event, about a
 * tenth of an event's cost. The ring thus never holds more than
 * wakeup_events of this CPU's events the reader was not woken for. A
 * nested run may lose a count: a wake-up comes an event late.
 */
static __always_inline void submit_event(struct handover *ho, struct ud_event *e)
{
	__u64 flag = BPF_RB_NO_WAKEUP;

	if (++ho->ev_unwoken >= wakeup_events) {
		ho->ev_unwoken = 0;
		flag = BPF_RB_FORCE_WAKEUP;
	}
	bpf_ringbuf_submit(e, flag);
}

static __always_inline void count_shed(const struct ud_key *k)
{
	__u32 slot = shed_slot(k);
	__u64 *n = bpf_map_lookup_elem(&shed, &slot);

	if (n)
		*n += 1;
}

/*
 * The ring this CPU's events go to: its own (per_cpu_events), else the
 * shared one. NULL only if the loader left this CPU without a ring (it
 * fills every possible CPU's): then the event is shed, and counted.
 */
static __always_inline void *event_ring(void)
{
	__u32 cpu;

	if (!per_cpu_events)
		return &events;
	cpu = bpf_get_smp_processor_id();
	return bpf_map_lookup_elem(&cpu_events, &cpu);
}

/* One event for args[which]'s skb under its key (see emit_event). */
__noinline int udpdrop_emit(int which, __u32 datagrams, __u32 len)
{
	struct handover *ho;
	struct fn_args *a = fn_args(which, &ho);
	struct ud_event *e = NULL;
	void *ring;

	if (!a)
		return 0;
	ring = event_ring();
	if (ring)
		e = bpf_ringbuf_reserve(ring, sizeof(*e) + cap_len, 0);
	if (!e) {
		count_shed(&a->key);
		return 0;
	}
	fill_event(e, (struct sk_buff *)a->skb, a, datagrams, len);
	submit_event(ho, e);
	return 0;
}

/* An event's arguments (struct fn_args): the skb's header found here, with
 * plain loads in tp_btf. */
static __always_inline void event_args(struct handover *ho, int which, bool direct,
				       struct sk_buff *skb, const struct ud_key *k)
{
	struct fn_args *a = ARGS_OF(ho, which);
	unsigned char *head;
	__u16 nh;

	a->key = *k;
	a->skb = (__u64)skb;
	if (net_header(direct, skb, &head, &nh)) {
		a->head = (__u64)head;
		a->nh = nh;
	} else {
		a->head = 0;
	}
}

static __always_inline void emit_event(struct handover *ho, int which, bool direct,
				       struct sk_buff *skb, const struct ud_key *k,
				       __u32 datagrams, __u32 len)
{
	event_args(ho, which, direct, skb, k);
	udpdrop_emit(which, datagrams, len);
}

/*
 * A drop that waits for udp_fail_queue_rcv_skb (kernels without reasons,
 * before 6.10: see struct handover): its event is made now, while the skb
 * is there (flow, headers), and sent when the socket is known. The skb and
 * key: args[which]'s.
 */
__noinline int udpdrop_stash(int which, __u32 datagrams, __u32 len)
{
	struct handover *ho;
	struct fn_args *a = fn_args(which, &ho);

	if (!a)
		return 0;
	fill_event((struct ud_event *)ho->pend_ev, (struct sk_buff *)a->skb, a,
		   datagrams, len);
	return 0;
}

/* The stashed event, now named by the key in args[which] (the socket's,
 * or the flow's). */
__noinline int udpdrop_emit_stashed(int which, __u32 datagrams)
{
	struct handover *ho;
	struct fn_args *a = fn_args(which, &ho);
	struct ud_event *e = NULL;
	struct ud_key *k;
	void *ring;

	if (!a)
		return 0;
	k = &a->key;
	ring = event_ring();
	if (ring)
		e = bpf_ringbuf_reserve(ring, sizeof(*e) + cap_len, 0);
	if (!e) {
		count_shed(k);
		return 0;
	}
	if (bpf_probe_read_kernel(e, sizeof(*e) + cap_len, ho->pend_ev)) {
		bpf_ringbuf_discard(e, 0);
		/* not expected (a map value); counted, so written + shed = drops */
		count_shed(k);
		return 0;
	}
	e->cookie = k->cookie;
	e->netns = k->netns;
	e->reason = k->reason;
	e->flags = k->flags;
	e->datagrams = datagrams;
	submit_event(ho, e);
	return 0;
}

static __always_inline void emit_stashed(struct handover *ho, int which,
					 const struct ud_key *k, __u32 datagrams)
{
	ARGS_OF(ho, which)->key = *k;
	udpdrop_emit_stashed(which, datagrams);
}

/* ---- kernels without drop reasons: the site (see enum ud_site) ---- */

/* The class of the function a drop location lies in (enum ud_loc). */
static __always_inline __u8 loc_of(__u64 addr)
{
#pragma unroll
	for (int i = 0; i < UD_SITE_RANGES; i++) {
		__u64 start = site_start[i]; /* see in_range */

		if (!start) /* filled from the first: the rest are empty */
			break;
		if (addr >= start && addr < site_end[i])
			return site_loc[i];
	}
	return UD_LOC_NONE;
}

/*
 * The checksum was computed in software and found wrong: what
 * __skb_checksum_complete leaves behind (ip_summed COMPLETE, sw, !valid).
 * A checksum never checked (UNNECESSARY, PARTIAL, NONE) is not bad.
 */
static __always_inline bool csum_bad(bool direct, struct sk_buff *skb)
{
	__u8 summed, valid, sw;

	if (direct) {
		summed = BPF_CORE_READ_BITFIELD(skb, ip_summed);
		valid = BPF_CORE_READ_BITFIELD(skb, csum_valid);
		sw = BPF_CORE_READ_BITFIELD(skb, csum_complete_sw);
	} else {
		summed = BPF_CORE_READ_BITFIELD_PROBED(skb, ip_summed);
		valid = BPF_CORE_READ_BITFIELD_PROBED(skb, csum_valid);
		sw = BPF_CORE_READ_BITFIELD_PROBED(skb, csum_complete_sw);
	}
	return summed == CHECKSUM_COMPLETE_ && sw && !valid;
}

/*
 * In __udp{4,6}_lib_rcv (data at the UDP header): does the UDP length
 * field fit the packet, as the kernel checks before anything else? A
 * short packet is dropped for it (the header cause), before the checksum.
 */
static __always_inline bool udp_len_sane(bool direct, struct sk_buff *skb)
{
	unsigned char *head = RD(direct, skb->head, skb, head);
	__u16 th = RD(direct, skb->transport_header, skb, transport_header);
	__u32 len = RD(direct, skb->len, skb, len);
	__u16 proto = bpf_ntohs(RD(direct, skb->protocol, skb, protocol));
	__be16 ulen_be;
	__u16 ulen;

	if (len < 8 || !head || bpf_probe_read_kernel(&ulen_be, 2, head + th + 4))
		return false;
	ulen = bpf_ntohs(ulen_be);
	if (!ulen) /* IPv6 jumbograms say 0 */
		return proto == ETH_P_IPV6;
	return ulen >= 8 && ulen <= len;
}

/* udp_csum_pull_header ran: the drop is past the socket's filter. */
static __always_inline bool udp_header_pulled(bool direct, struct sk_buff *skb)
{
	unsigned char *head = RD(direct, skb->head, skb, head);
	unsigned char *data = RD(direct, skb->data, skb, data);
	__u16 th = RD(direct, skb->transport_header, skb, transport_header);

	return data - head == th + 8;
}

#define RTCF_BROADCAST_ 0x10000000
#define RTCF_MULTICAST_ 0x20000000

/*
 * Is the packet addressed to a group: a multicast destination (IPv4
 * 224/4, IPv6 ff00::/8), or with route_flags an IPv4 broadcast too, as
 * the skb's input route says (RTCF_BROADCAST or RTCF_MULTICAST: the test
 * udp_rcv makes before it hands the datagram to every socket on the port,
 * so a subnet's directed broadcast counts, whatever its address).
 * Probe reads: only NOT_SPECIFIED drops at two sites come here.
 */
static __always_inline bool dst_is_group(struct sk_buff *skb, bool route_flags)
{
	unsigned char *head;
	__u16 nh;
	__u8 vihl, d0;

	if (!net_header(false, skb, &head, &nh) ||
	    bpf_probe_read_kernel(&vihl, 1, head + nh))
		return false;
	if (vihl >> 4 == 6)
		return !bpf_probe_read_kernel(&d0, 1, head + nh + 24) && d0 == 0xff;
	if (vihl >> 4 != 4 || bpf_probe_read_kernel(&d0, 1, head + nh + 16))
		return false;
	if ((d0 & 0xf0) == 0xe0)
		return true;
	if (route_flags) {
		unsigned long refdst = BPF_CORE_READ(skb, _skb_refdst);
		struct rtable *rt = (void *)(refdst & ~1UL);

		return rt && (BPF_CORE_READ(rt, rt_flags) &
			      (RTCF_BROADCAST_ | RTCF_MULTICAST_));
	}
	return false;
}

static __always_inline __u32 derive_site(bool direct, struct sk_buff *skb,
					 __u64 location, __u32 flags)
{
	if (flags & UD_KEY_FAIL_RCVBUF)
		return UD_SITE_RCVBUF;
	if (flags & UD_KEY_FAIL_MEM)
		return UD_SITE_UDP_MEM;
	if (in_range(UD_RANGE_UDP_DESTRUCT, location) ||
	    in_range(UD_RANGE_INET_DESTRUCT, location))
		return UD_SITE_CLOSE;
	if (in_range(UD_RANGE_FRAG_PURGE, location))
		return UD_SITE_FRAG_PURGE;
	switch (loc_of(location)) {
	case UD_LOC_UDP_RCV:
		/* the no-socket path checks the checksum before it drops */
		if (!udp_len_sane(direct, skb))
			return UD_SITE_RCV_LENGTH;
		if (csum_bad(direct, skb))
			return UD_SITE_RCV_CSUM;
		/* __udp{4,6}_lib_mcast_deliver found no socket: UdpIgnoredMulti */
		return dst_is_group(skb, true) ? UD_SITE_MCAST_UNWANTED
					       : UD_SITE_NO_SOCKET;
	case UD_LOC_IP_RCV:
		/* a group no socket joined on the interface; else not known */
		return dst_is_group(skb, false) ? UD_SITE_MCAST_UNJOINED
						: UD_SITE_UNKNOWN;
	case UD_LOC_UDP_QUEUE:
		/* the enqueue failed (rcvbuf, udp_mem): past the filter */
		if (udp_header_pulled(direct, skb))
			return UD_SITE_UDP_QUEUE;
		/* the drop: label: socket filter, or the checksum a filter needs */
		return csum_bad(direct, skb) ? UD_SITE_QUEUE_CSUM
					     : UD_SITE_QUEUE_FILTER;
	case UD_LOC_UDP_RECV:
		return UD_SITE_RECV_CSUM;
	case UD_LOC_FRAG_EXPIRE:
		return UD_SITE_FRAG_EXPIRE;
	case UD_LOC_FRAG_QUEUE:
		return UD_SITE_FRAG_QUEUE;
	case UD_LOC_NETFILTER:
		return UD_SITE_NETFILTER;
	case UD_LOC_QDISC:
		return UD_SITE_QDISC;
	case UD_LOC_BACKLOG:
		return UD_SITE_BACKLOG;
	case UD_LOC_NEIGH:
		return UD_SITE_NEIGH;
	}
	return UD_SITE_UNKNOWN;
}

/* derive_site, checked once (probe reads: the skb is a scalar here) */
__noinline int udpdrop_site(int which, __u64 location, __u32 flags)
{
	struct fn_args *a = fn_args(which, NULL);

	if (!a)
		return UD_SITE_UNKNOWN;
	return derive_site(false, (struct sk_buff *)a->skb, location, flags);
}

/* Does udp:udp_fail_queue_rcv_skb carry the skb (6.10+, and fire first)? */
static __always_inline bool fail_tp_has_skb(void)
{
	return bpf_core_field_exists(struct trace_event_raw_udp_fail_queue_rcv_skb,
				     sport);
}

/*
 * The waiting drop, counted under k; a GRO skb's frag_list members apart,
 * under k with UD_KEY_CHILD (see UD_KEY_GRO).
 */
static __always_inline void pend_account(struct handover *ho, int which,
					 const struct ud_key *k, bool use_slots)
{
	struct ud_key ck;
	__u64 slot_state;

	account_n(ho, which, k, ho->pend_datagrams, ho->pend_skbs,
		  ho->pend_bytes, &slot_state, use_slots);
	if (!ho->pend_child_skbs)
		return;
	ck = *k;
	ck.flags |= UD_KEY_CHILD;
	account_n(ho, which, &ck, 0, ho->pend_child_skbs, ho->pend_child_bytes,
		  &slot_state, use_slots);
}

/* A drop that waited for udp_fail_queue_rcv_skb and got none: count it. */
static __always_inline void pend_flush(struct handover *ho, int which, bool use_slots)
{
	if (!pend_fail || !ho->pend_valid)
		return;
	ho->pend_valid = false;
	if (filtered_out(&ho->pend_key, 0)) {
		stat_inc(ho, UD_STAT_FILTERED);
		return;
	}
	pend_account(ho, which, &ho->pend_key, use_slots);
	if (events_on)
		emit_stashed(ho, which, &ho->pend_key, ho->pend_datagrams);
}

/*
 * A purge whose socket could not be named: counted under its first skb's
 * flow key, as it would have been without close_owner (user space matches
 * the flow to a socket). The hash maps only: this also runs from the
 * kmem_cache_free programs, which leave the slot table alone.
 */
static __always_inline void close_flush(struct handover *ho, int which)
{
	__u64 slot_state;

	if (!ho->close_valid)
		return;
	ho->close_valid = false;
	account_n(ho, which, &ho->close_key, ho->close_datagrams,
		  ho->close_skbs, ho->close_bytes, &slot_state, false);
}

/*
 * The same socket, reason and place as the last drop on this CPU, counted
 * in the slot it was counted in (the fast path). Returns false to take the
 * whole way.
 */
static __always_inline bool fast_drop(struct handover *ho, int which, bool direct,
				      bool events, struct sk_buff *skb, void *location,
				      __u32 reason, struct sock *rx_sk, __u32 len)
{
	__u64 datagrams, frag_list;

	if (rx_sk && ho->fast_valid && ho->fast_sk == (__u64)rx_sk &&
	    ho->fast_reason == reason && ho->fast_location == (__u64)location &&
	    skb_group(direct, skb) == !!(ho->fast_bits & FAST_GROUP) &&
	    fast_same_socket(ho, direct, rx_sk)) {
		__u32 idx = ho->fast_slot;
		struct ud_slot *sl = bpf_map_lookup_elem(&slots, &idx);

		/* still this key's: not retired or handed on since (see udpdrop.h) */
		if (sl && sl->state == ho->fast_state) {
			datagrams = skb_segments(direct, skb, &frag_list);
			/* a GSO/GRO skb has a bucket of its own (UD_KEY_GRO) */
			if (datagrams > 1)
				return false;
			add(&sl->val, datagrams, len);
			/* armed for socket keys only: no need to read ho->key's flags */
			win_count_sock(ho, which, &ho->key, &sl->val, datagrams);
			if (frag_list) {
				ho->next_child = frag_list; /* ho->key is this key */
				ho->close_child = false;
			}
			if (events)
				emit_event(ho, which, direct, skb, &ho->key, datagrams, len);
			return true;
		}
	}
	return false;
}

static __always_inline int classify_run(struct handover *ho, int which,
					bool direct, bool use_slots,
					struct sk_buff *skb, void *location,
					__u32 reason, struct sock *rx_sk)
{
	struct ud_key k;
	struct pkt_info pi = {};
	struct sock *sk = rx_sk, *fsk = NULL;
	bool have_sk = false;
	__u16 lport = 0;
	__u64 datagrams, frag_list, slot_state = 0;
	long slot;
	__u32 len;

	/* UD_STAT_EVENTS is derived in user space: every event is counted
	 * exactly once, as an skb, NOT_OURS or FILTERED */
	len = RD(direct, skb->len, skb, len);

	/* A frag_list member of the skb just counted: same bucket, 0 datagrams */
	if (ho->next_child && ho->next_child == (__u64)skb) {
		ho->next_child = (__u64)RD(direct, UNTRUSTED(skb, struct sk_buff)->next,
					   skb, next);
		if (pend_fail && ho->pend_valid) {
			/* its parent waits for udp_fail_queue_rcv_skb (its
			 * event names the parent's flow: it has no socket yet) */
			if (ho->pend_key.flags & UD_KEY_GRO) {
				ho->pend_child_skbs += 1;
				ho->pend_child_bytes += len;
			} else {
				ho->pend_skbs += 1;
				ho->pend_bytes += len;
			}
			if (events_on)
				emit_event(ho, which, direct, skb, &ho->pend_key, 0, len);
			return 0;
		}
		if (close_owner && ho->close_child && ho->close_valid) {
			/* its parent waits for its socket's free (close_*) */
			ho->close_skbs += 1;
			ho->close_bytes += len;
			if (events_on)
				emit_event(ho, which, direct, skb, &ho->close_key, 0, len);
			return 0;
		}
		account(ho, which, &ho->key, 0, len, &slot_state, use_slots);
		if (events_on)
			emit_event(ho, which, direct, skb, &ho->key, 0, len);
		return 0;
	}
	ho->next_child = 0;
	ho->close_child = false;
	pend_flush(ho, which, use_slots);

	/* the same socket, reason and place as the last event: count it */
	if (close_owner && rx_sk)
		close_flush(ho, which); /* a live socket's drop: see below */
	if (fast_drop(ho, which, direct, events_on, skb, location, reason, rx_sk, len))
		return 0;
	ho->fast_valid = FAST_OFF;

	__builtin_memset(&k, 0, sizeof(k));
	k.reason = reason;
	k.location = (__u64)location;

	/*
	 * The socket, most direct first: rx_sk, the udp_fail handover, then
	 * skb->sk (a local sender). The handover pointer went through a map,
	 * so it is read with probe reads even in tp_btf.
	 */
	if (!sk && ho->fail_sk &&
	    (!ho->fail_skb || ho->fail_skb == (__u64)skb)) {
		fsk = (void *)ho->fail_sk;
		k.flags |= ho->fail_rc == -ENOMEM_ ? UD_KEY_FAIL_RCVBUF
						   : UD_KEY_FAIL_MEM;
	}
	ho->fail_sk = 0;
	if (derive_sites) {
		ARGS_OF(ho, which)->skb = (__u64)skb;
		reason = udpdrop_site(which, k.location, k.flags);
		k.reason = reason;
		k.flags |= UD_KEY_SITE;
	} else if (site_base && reason == UD_REASON(NOT_SPECIFIED)) {
		__u32 site;

		ARGS_OF(ho, which)->skb = (__u64)skb;
		site = udpdrop_site(which, k.location, k.flags);

		/*
		 * Only where the kernel's own reason says nothing the site
		 * does: a closing socket's queue stays NOT_SPECIFIED (its
		 * cause comes from UD_KEY_CLOSE), an enqueue failure always
		 * has its reason.
		 */
		if (site != UD_SITE_UNKNOWN && site != UD_SITE_CLOSE &&
		    site != UD_SITE_RCVBUF && site != UD_SITE_UDP_MEM &&
		    site != UD_SITE_UDP_QUEUE) {
			reason = site_base + site;
			k.reason = reason;
			k.flags |= UD_KEY_SITE;
		}
	}
	if (fsk) {
		have_sk = sock_key(false, fsk, &k, &lport);
		k.flags |= UD_KEY_RX_SK;
	} else if (sk) {
		have_sk = sock_key(direct, sk, &k, &lport);
		k.flags |= UD_KEY_RX_SK;
	} else {
		sk = RD(direct, UNTRUSTED(skb, struct sk_buff)->sk, skb, sk);
		if (sk && sock_key(direct, sk, &k, &lport)) {
			have_sk = true;
			k.flags |= UD_KEY_SKB_SK;
		}
	}
	if (have_sk) {
		/* a local sender's datagram may be a fragment: look */
		if (k.flags & UD_KEY_SKB_SK) {
			struct fn_args *a = ARGS_OF(ho, which);

			a->skb = (__u64)skb;
			if (udpdrop_parse(which) && a->pi.fragment) {
				k.flags |= UD_KEY_FRAG;
				__builtin_memcpy(k.saddr, a->flow.saddr, 16);
				__builtin_memcpy(k.daddr, a->flow.daddr, 16);
				pi = a->pi;
			}
		}
	} else {
		struct net_device *dev;

		/* e.g. a raw socket sending UDP: judge the packet itself */
		k.flags &= ~(UD_KEY_FAIL_MEM | UD_KEY_FAIL_RCVBUF | UD_KEY_RX_SK |
			     UD_KEY_SOCK);
		struct fn_args *a = ARGS_OF(ho, which);

		a->skb = (__u64)skb;
		if (!udpdrop_parse(which) ||
		    !wanted_proto(a->flow.proto)) {
			if (close_owner)
				close_flush(ho, which); /* see below */
			stat_inc(ho, UD_STAT_NOT_OURS);
			return 0;
		}
		k.family = a->flow.family;
		k.proto = a->flow.proto;
		__builtin_memcpy(k.saddr, a->flow.saddr, 16);
		__builtin_memcpy(k.daddr, a->flow.daddr, 16);
		k.dport = a->flow.dport;
		pi = a->pi;
		if (pi.fragment)
			k.flags |= UD_KEY_FRAG;
		/*
		 * Once queued on a UDP socket, skb->dev is dev_scratch (udp.c
		 * keeps truesize and flags there), not a device; a read through
		 * it faults to 0. Then we are in process context (recvmsg, close)
		 * and the task's netns is the socket's.
		 */
		dev = RD(direct, UNTRUSTED(skb, struct sk_buff)->dev, skb, dev);
		k.netns = dev ? dev_netns(direct, dev) : 0;
		if (pi.fragment && is_reasm_fail(reason)) {
			a->key = k;
			a->pi = pi;
			k.netns = udpdrop_frag_netns(which);
			if (!k.netns)
				k.flags |= UD_KEY_NETNS_ADDR;
		} else if (in_range(UD_RANGE_UDP_DESTRUCT, k.location) ||
			   in_range(UD_RANGE_INET_DESTRUCT, k.location)) {
			/*
			 * A closing socket's queue, freed from an RCU callback:
			 * no socket, no device, and any task's netns. User space
			 * finds the socket (and so the netns) by the flow.
			 */
			k.flags |= UD_KEY_CLOSE;
			k.netns = 0;
		} else if (!k.netns) {
			k.netns = task_netns(direct);
		}
	}

	/*
	 * A purge waiting for its socket's free (close_*) and a drop that is
	 * no part of it: the free was missed (its program skipped), since
	 * nothing else runs between the two on this CPU but the rest of the
	 * destructor, whose error queue's skbs still name the socket (one
	 * no one holds). The purge goes by its flow, as without close_owner.
	 */
	if (close_owner && ho->close_valid && !(k.flags & UD_KEY_CLOSE) &&
	    !((k.flags & UD_KEY_SKB_SK) &&
	      BPF_CORE_READ(sk, __sk_common.skc_refcnt.refs.counter) == 0))
		close_flush(ho, which);

	/*
	 * Before 6.10 udp_fail_queue_rcv_skb (IPv4 only) fires after the
	 * free: wait for it (the socket and its rc); IPv6 has none then.
	 */
	if (pend_fail && !fail_tp_has_skb() && k.family == AF_INET &&
	    (derive_sites ? reason == UD_SITE_UDP_QUEUE
			  : reason == UD_REASON(SOCKET_RCVBUFF) ||
				    reason == UD_REASON(PROTO_MEM))) {
		ho->pend_datagrams = skb_segments(direct, skb, &frag_list);
		ho->pend_skbs = 1;
		ho->pend_bytes = len;
		ho->pend_child_skbs = ho->pend_child_bytes = 0;
		if (ho->pend_datagrams > 1)
			k.flags |= UD_KEY_GRO;
		if (skb_group(direct, skb))
			k.flags |= UD_KEY_GROUP;
		ho->pend_key = k;
		ho->pend_valid = true;
		ho->next_child = frag_list;
		if (events_on) {
			event_args(ho, which, direct, skb, &k);
			udpdrop_stash(which, ho->pend_datagrams, len);
		}
		return 0;
	}

	if (filtered_out(&k, lport)) {
		stat_inc(ho, UD_STAT_FILTERED);
		return 0;
	}

	datagrams = skb_segments(direct, skb, &frag_list);
	if (close_owner && close_armed && (k.flags & UD_KEY_CLOSE)) {
		/* a closing socket's queue: wait for its socket (close_*) */
		if (ho->close_valid && (ho->close_key.location != k.location ||
					ho->close_key.reason != k.reason))
			close_flush(ho, which);
		if (!ho->close_valid) {
			ho->close_key = k;
			ho->close_datagrams = ho->close_skbs = ho->close_bytes = 0;
			ho->close_ns = bpf_ktime_get_ns();
			ho->close_valid = true;
		}
		ho->close_datagrams += datagrams;
		ho->close_skbs += 1;
		ho->close_bytes += len;
		if (events_on)
			emit_event(ho, which, direct, skb, &k, datagrams, len);
		if (frag_list) {
			ho->next_child = frag_list;
			ho->close_child = true;
		}
		return 0;
	}
	if (k.flags & UD_KEY_FRAG) {
		ARGS_OF(ho, which)->key = k;
		ARGS_OF(ho, which)->pi = pi;
		datagrams = udpdrop_frag_datagrams(which, reason);
		if (datagrams == FRAG_REASM_UNIT) {
			k.flags |= UD_KEY_REASM_UNIT;
			datagrams = 1;
		}
		/* the fragment's addresses were only needed for the identity */
		if (k.flags & UD_KEY_SOCK) {
			__builtin_memset(k.saddr, 0, sizeof(k.saddr));
			__builtin_memset(k.daddr, 0, sizeof(k.daddr));
		}
	}
	if (datagrams > 1)
		k.flags |= UD_KEY_GRO; /* never arms the fast path (below) */
	if (skb_group(direct, skb))
		k.flags |= UD_KEY_GROUP;
	slot = account(ho, which, &k, datagrams, len, &slot_state, use_slots);
	/* an event's datagrams are its drops: a unit is none */
	if (events_on)
		emit_event(ho, which, direct, skb, &k, k.flags & UD_KEY_REASM_UNIT ? 0 : datagrams, len);
	if (frag_list || slot >= 0)
		ho->key = k;
	if (frag_list) {
		ho->next_child = frag_list;
		/* a GRO skb's members: a bucket apart (UD_KEY_GRO) */
		if (k.flags & UD_KEY_GRO)
			ho->key.flags |= UD_KEY_CHILD;
	}
	/* arm the fast path for a repeat of this drop */
	if (slot >= 0 && rx_sk && k.cookie &&
	    (k.flags & ~(UD_KEY_INODE | UD_KEY_GROUP)) == (UD_KEY_SOCK | UD_KEY_RX_SK)) {
		ho->fast_valid = events_on ? FAST_ARMED : FAST_ARMED_EARLY;
		ho->fast_slot = slot;
		ho->fast_sk = (__u64)rx_sk;
		ho->fast_cookie = k.cookie;
		ho->fast_bits = (k.flags & UD_KEY_INODE ? FAST_INODE : 0) |
				(k.flags & UD_KEY_GROUP ? FAST_GROUP : 0);
		ho->fast_reason = reason;
		ho->fast_location = (__u64)location;
		ho->fast_state = slot_state;
	}
	return 0;
}

/*
 * Before 6.1 the kernel may run this program nested in itself on one CPU
 * (a softirq's kfree_skb inside a process-context one; no recursion guard
 * then): the nested run takes its own set of global functions' arguments
 * (ARGS_NESTED), so that it cannot change the key the outer run is about
 * to count. The index is computed, not branched on: the verifier walks
 * one path, with an index it knows is 0 or 3.
 */
static __always_inline int classify(bool direct, bool use_slots,
				    struct sk_buff *skb, void *location,
				    __u32 reason, struct sock *rx_sk)
{
	__u32 zero = 0;
	struct handover *ho = bpf_map_lookup_elem(&handover, &zero);
	__u32 outer;
	int ret;

	if (!ho)
		return 0;
	/*
	 * Without events the fast path needs none of the state the rest keeps
	 * (no handover arguments, no waiting drop): it comes first, before the
	 * nesting guard, with the fewest registers to save. It reads only the
	 * handover's first fields, not the loader's settings (.rodata, a page
	 * of its own): FAST_ARMED_EARLY is armed only without events, and a
	 * drop waits (pend_valid, close_valid) only where pend_fail or
	 * close_owner is set.
	 */
	if (use_slots && rx_sk && ho->fast_valid == FAST_ARMED_EARLY && !ho->next_child &&
	    !ho->pend_valid && !ho->close_valid &&
	    fast_drop(ho, 0, direct, false, skb, location, reason, rx_sk,
		      RD(direct, skb->len, skb, len)))
		return 0;
	/* the settings the early fast path leaves out (from_args): that path
	 * is armed only for a key of exactly UD_KEY_SOCK | UD_KEY_RX_SK, so
	 * never without rx_sk, nor with derive_sites (whose keys carry
	 * UD_KEY_SITE) */
	if (derive_sites)
		reason = 0;
	if (!use_rx_sk)
		rx_sk = NULL;
	outer = ho->kfree_running;
	ho->kfree_running = 1;
	ret = classify_run(ho, (int)((outer & 1) * ARGS_NESTED), direct, use_slots,
			   skb, location, reason, rx_sk);
	ho->kfree_running = outer;
	return ret;
}

/*
 * tp_btf and raw_tp take the same arguments (skb, location, reason,
 * rx_sk); in tp_btf they are typed and read with plain loads, in raw_tp
 * every read is a probe read. The CO-RE checks drop the arguments this
 * kernel lacks, so the verifier never sees a read past the last one.
 */
static __always_inline int from_args(bool direct, bool use_slots, __u64 *ctx)
{
	__u32 reason = 0;
	struct sock *rx_sk = NULL;
	struct sk_buff *skb = (struct sk_buff *)ctx[0];

	/* derive_sites and use_rx_sk apply in classify, after the early
	 * fast path, which reads no setting (.rodata); but the compat object
	 * leaves rx_sk unread in tp_btf (try_mode says why) */
	if (kfree_skb_has_reason())
		reason = (__u32)ctx[2];
	if (kfree_skb_has_rx_sk() && (UD_KFUNCS || !direct || use_rx_sk)) {
		rx_sk = (struct sock *)ctx[3];
		/* may be NULL: untrusted, the verifier walks both ways (a
		 * trusted argument it may take for never NULL, where the
		 * kernel does not mark it as one that can be) */
		if (direct)
			rx_sk = UNTRUSTED(rx_sk, struct sock);
	}
	return classify(direct, use_slots, skb, (void *)ctx[1], reason, rx_sk);
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(udpdrop_kfree_btf)
{
	return from_args(true, true, ctx);
}

SEC("raw_tp/kfree_skb")
int BPF_PROG(udpdrop_kfree_raw)
{
	return from_args(false, true, ctx);
}

/* Kernels before 5.12 (no BPF atomics): no slot table (see account_n). */
SEC("raw_tp/kfree_skb")
int BPF_PROG(udpdrop_kfree_raw_noatomic)
{
	return from_args(false, false, ctx);
}

/* Classic tracepoint: the record the trace event fills in (needs tracefs). */
static __always_inline int from_record(struct trace_event_raw_kfree_skb *args,
				       bool use_slots)
{
	__u32 reason = 0;
	struct sock *rx_sk = NULL;

	if (kfree_skb_has_reason() && !derive_sites)
		reason = BPF_CORE_READ(args, reason);
	if (kfree_skb_has_rx_sk() && use_rx_sk)
		rx_sk = BPF_CORE_READ(args, rx_sk);
	return classify(false, use_slots, BPF_CORE_READ(args, skbaddr),
			BPF_CORE_READ(args, location), reason, rx_sk);
}

SEC("tracepoint/skb/kfree_skb")
int udpdrop_kfree_tp(struct trace_event_raw_kfree_skb *args)
{
	return from_record(args, true);
}

SEC("tracepoint/skb/kfree_skb")
int udpdrop_kfree_tp_noatomic(struct trace_event_raw_kfree_skb *args)
{
	return from_record(args, false);
}

static __always_inline int fail_handover(int rc, struct sock *sk, __u64 skb,
					 bool use_slots)
{
	__u32 zero = 0;
	struct handover *ho = bpf_map_lookup_elem(&handover, &zero);

	if (!ho)
		return 0;
	stat_inc(ho, UD_STAT_FAIL_EVENTS);
	if (pend_fail && !fail_tp_has_skb()) {
		/* the skb was freed just before (see struct handover) */
		struct ud_key k;
		__u16 lport = 0;

		if (!ho->pend_valid)
			return 0;
		ho->pend_valid = false;
		k = ho->pend_key;
		if (sock_key(false, sk, &k, &lport)) {
			/* socket keys keep no flow (see struct ud_key) */
			__builtin_memset(k.saddr, 0, sizeof(k.saddr));
			__builtin_memset(k.daddr, 0, sizeof(k.daddr));
			k.dport = 0;
			k.flags |= UD_KEY_RX_SK |
				   (rc == -ENOMEM_ ? UD_KEY_FAIL_RCVBUF : UD_KEY_FAIL_MEM);
			/* with drop reasons the kernel's (SOCKET_RCVBUFF,
			 * PROTO_MEM) already says it */
			if (derive_sites)
				k.reason = rc == -ENOMEM_ ? UD_SITE_RCVBUF : UD_SITE_UDP_MEM;
		}
		if (filtered_out(&k, lport)) {
			stat_inc(ho, UD_STAT_FILTERED);
			return 0;
		}
		pend_account(ho, ARGS_FAIL, &k, use_slots);
		/* the skb is gone: its event was made while it was there */
		if (events_on)
			emit_stashed(ho, ARGS_FAIL, &k, ho->pend_datagrams);
		return 0;
	}
	ho->fail_sk = (__u64)sk;
	ho->fail_skb = skb;
	ho->fail_rc = rc;
	return 0;
}

/*
 * udp:udp_fail_queue_rcv_skb: (rc, sk) before 6.10, (rc, sk, skb) since
 * "udp: add IP/port data to the tracepoint udp/udp_fail_queue_rcv_skb"
 * (6.10), which added the sport field tested here.
 * Only loaded when kfree_skb lacks rx_sk (or the loader is told so).
 */
static __always_inline int from_fail(__u64 *ctx, int rc, struct sock *sk,
				     bool use_slots)
{
	__u64 skb = 0;

	if (fail_tp_has_skb())
		skb = ctx[2];
	else if (!pend_fail)
		return 0; /* fired after its kfree_skb (before 6.10), which
			     did not wait for it (pend_fail off) */
	return fail_handover(rc, sk, skb, use_slots);
}

SEC("raw_tp/udp_fail_queue_rcv_skb")
int BPF_PROG(udpdrop_fail_raw, int rc, struct sock *sk)
{
	return from_fail(ctx, rc, sk, true);
}

SEC("raw_tp/udp_fail_queue_rcv_skb")
int BPF_PROG(udpdrop_fail_raw_noatomic, int rc, struct sock *sk)
{
	return from_fail(ctx, rc, sk, false);
}

/*
 * kmem:kmem_cache_free of the struct sock that ends __sk_destruct: the end
 * of the purge of its queue that waits on this CPU (see struct handover,
 * close_*). (Its call site is no help: sk_prot_free's kmem_cache_free is a
 * tail call, so it names __sk_destruct's caller, rcu_do_batch.) While a
 * purge waits, each free on this CPU is looked at: the socket's is the
 * object whose own proto's slab is the cache it goes back to, a UDP
 * socket no one holds (sk_refcnt 0) on the purged datagrams' port. The
 * tracepoint fires before the free, so the memory is still the socket's:
 * it names the purge's socket by cookie (or by the inode 6.18 keeps in
 * sk_ino, where that is still set: a close zeroes it in sock_orphan, as
 * bpftrace shows at this free for a socket closed by its process, so this
 * is kept for a path that frees a socket not orphaned), netns and port. A
 * socket without an identity leaves the purge to its flow, as before.
 * With no purge waiting, a free costs one per-CPU lookup.
 */
#define CLOSE_WAIT_NS (20 * 1000000ull)

static __always_inline int close_owner_seen(struct sock *sk, __u64 cache,
					    bool have_cache)
{
	__u32 zero = 0;
	struct handover *ho;
	struct ud_key k;
	__u16 lport = 0;
	__u64 slot_state;

	ho = bpf_map_lookup_elem(&handover, &zero);
	if (!ho || !ho->close_valid)
		return 0;
	/*
	 * The socket's own free comes microseconds after its purge, in the
	 * same destructor. Long past that, it was missed: the program skipped
	 * it (it may run nested in itself when a softirq's RCU callback
	 * interrupts it, and the kernel then counts a miss and runs nothing),
	 * and the purge would wait for the next drop on this CPU, maybe for
	 * ever. Count it by its flow now, as without close_owner.
	 */
	if (bpf_ktime_get_ns() - ho->close_ns > CLOSE_WAIT_NS) {
		close_flush(ho, ARGS_CLOSE);
		return 0;
	}
	/*
	 * Is it a socket going back to its own proto's slab (where the
	 * tracepoint names the cache), unheld, of a proto named UDP...
	 * ("UDP", "UDPv6", "UDP-Lite", "UDPLITEv6")?
	 */
	if (have_cache && (__u64)BPF_CORE_READ(sk, sk_prot_creator, slab) != cache)
		return 0;
	if (BPF_CORE_READ(sk, __sk_common.skc_refcnt.refs.counter) != 0)
		return 0;
	struct proto *prot = BPF_CORE_READ(sk, sk_prot_creator);
	char name[4] = {};

	if (!prot || bpf_probe_read_kernel(name, sizeof(name), &prot->name) ||
	    name[0] != 'U' || name[1] != 'D' || name[2] != 'P') {
		/* another protocol's socket ended (known by its cache) */
		if (have_cache && prot)
			close_flush(ho, ARGS_CLOSE);
		return 0;
	}
	k = ho->close_key;
	k.flags &= ~UD_KEY_FRAG;
	if (!sock_key(false, sk, &k, &lport)) {
		close_flush(ho, ARGS_CLOSE);
		return 0;
	}
	/*
	 * A UDP socket's destructor ended: the purge is its own if the port
	 * is; if not (a purge whose own end went unseen), by its flow.
	 */
	/* unhashed at close, the socket's inet_num is 0: its sport stays */
	lport = bpf_ntohs(BPF_CORE_READ((struct inet_sock *)sk, inet_sport));
	if (lport != ho->close_key.dport) {
		close_flush(ho, ARGS_CLOSE);
		return 0;
	}
	if (!k.cookie && bpf_core_field_exists(((struct sock___ino *)sk)->sk_ino)) {
		k.cookie = BPF_CORE_READ((struct sock___ino *)sk, sk_ino);
		if (k.cookie)
			k.flags |= UD_KEY_INODE;
	}
	if (!k.cookie) {
		close_flush(ho, ARGS_CLOSE);
		return 0;
	}
	ho->close_valid = false;
	/*
	 * socket keys keep no flow (see struct ud_key); this one keeps its
	 * port (dport: the purged datagrams', the socket's own), which names
	 * a socket closed before any dump could
	 */
	__builtin_memset(k.saddr, 0, sizeof(k.saddr));
	__builtin_memset(k.daddr, 0, sizeof(k.daddr));
	/* its events were counted in kfree_skb as they came: only counts */
	if (filtered_out(&k, lport)) {
		ho->stats[UD_STAT_FILTERED] += ho->close_skbs;
		return 0;
	}
	account_n(ho, ARGS_CLOSE, &k, ho->close_datagrams, ho->close_skbs,
		  ho->close_bytes, &slot_state, false);
	return 0;
}

/*
 * (call_site, ptr, s) on 6.1+ (close_cache_arg), (call_site, ptr, ...)
 * before. The raw tracepoint in every mode but the classic one: tp_btf
 * refuses a program that reads `const void *ptr` on some kernels (6.1:
 * "func 'kmem_cache_free' arg1 type UNKNOWN is not a struct"), and the
 * loader then fell back to matching closing queues by their flow.
 */
SEC("raw_tp/kmem_cache_free")
int BPF_PROG(udpdrop_close_raw, unsigned long call_site, const void *ptr)
{
	return close_owner_seen((struct sock *)ptr, close_cache_arg ? ctx[2] : 0,
				close_cache_arg);
}

/* The classic tracepoint's record: (call_site, ptr) first on every kernel. */
struct kmem_free_record {
	__u64 common; /* struct trace_entry */
	__u64 call_site;
	__u64 ptr;
};

SEC("tracepoint/kmem/kmem_cache_free")
int udpdrop_close_tp(struct kmem_free_record *r)
{
	return close_owner_seen((struct sock *)r->ptr, 0, false);
}

/*
 * The socket's deliveries in drop windows (UD_WIN_NS), as win_count does
 * for drops: a closed window goes to the ring as a struct ud_win whose key
 * names the socket with UD_KEY_DELIVERED.
 */
static __noinline int rx_win_close(__u64 id, __u64 word)
{
	__u32 zero = 0;
	struct handover *ho = bpf_map_lookup_elem(&handover, &zero);
	struct ud_win *w;

	if (!ho)
		return 0;
	w = &ho->win_out[WIN_OUT_RX];
	__builtin_memset(&w->key, 0, sizeof(w->key));
	w->key.cookie = id & ~UD_RX_INODE;
	w->key.flags = UD_KEY_SOCK | UD_KEY_DELIVERED | (id & UD_RX_INODE ? UD_KEY_INODE : 0);
	w->win = word;
	return udpdrop_win_flush(WIN_OUT_RX);
}

static __always_inline void rx_win_count(__u64 id, struct ud_rx *v)
{
	__u32 zero = 0;
	struct handover *ho = bpf_map_lookup_elem(&handover, &zero);
	__u64 idx, word = v->win;

	idx = ho ? win_index(ho) : win_now();
	if ((word >> 32) == idx) {
		v->win = word + 1;
		return;
	}
	if (UD_WIN_COUNT(word))
		rx_win_close(id, word);
	v->win = (idx << 32) | 1;
}

/*
 * Deliveries: sock:sk_data_ready (6.6+) fires in sock_def_readable, which
 * UDP calls once per datagram it queues (__udp_enqueue_schedule_skb),
 * after charging it to sk_rmem_alloc. It fires for every protocol's
 * sockets, so the test that throws the others out comes first. Optional:
 * the loader attaches it only where the tracepoint exists, and it leaves
 * the drop programs' cost alone (its own map; the stats only on overflow).
 */
static __always_inline int count_rx(bool direct, struct sock *sk)
{
	__u16 family = RD(direct, sk->__sk_common.skc_family, sk,
			  __sk_common.skc_family);
	__u16 proto = RD(direct, sk->sk_protocol, sk, sk_protocol);
	__u16 type = RD(direct, sk->sk_type, sk, sk_type);
	struct ud_rx *v;
	bool inode;
	__u64 id;
	__u32 rmem;

	/* a raw socket or a netlink one may carry protocol 17 too */
	if ((family != AF_INET && family != AF_INET6) || !wanted_proto(proto) ||
	    type != 2 /* SOCK_DGRAM */)
		return 0;
	if (filter_netns && sk_netns(direct, sk) != filter_netns)
		return 0;
	if (filter_port &&
	    RD(direct, sk->__sk_common.skc_num, sk, __sk_common.skc_num) != filter_port)
		return 0;
	id = sk_cookie_or_inode(direct, sk, &inode);
	if (inode)
		id |= UD_RX_INODE;
	rmem = RD(direct, sk->sk_backlog.rmem_alloc.counter, sk,
		  sk_backlog.rmem_alloc.counter);

	/*
	 * This CPU's slot, if the socket owns it or it is free: no hash
	 * lookup. The program never nests in itself on one CPU (a nested
	 * run is skipped and counted as a recursion miss), so a plain
	 * store claims it; 0 is never an owner (it means free).
	 */
	__u32 slot = ((id * 0x9e3779b97f4a7c15ull) >> 32) & (UD_RX_SLOTS - 1);
	struct ud_rx_slot *s = bpf_map_lookup_elem(&rx_slots, &slot);

	if (s && id && s->id == id) {
		v = &s->val;
		goto count;
	}
	if (s && id && !s->id) {
		s->id = id;
		s->val.netns = sk_netns(direct, sk);
		s->val.lport = RD(direct, sk->__sk_common.skc_num, sk,
				  __sk_common.skc_num);
		s->val.family = family;
		s->val.proto = proto;
		v = &s->val;
		goto count;
	}

	v = bpf_map_lookup_elem(&rx, &id);
	if (!v) {
		/* a new socket: this CPU's value set, the others' zeroed */
		struct ud_rx first = {
			.datagrams = 1,
			.win = win_now() << 32 | 1,
			.peak = rmem,
			.netns = sk_netns(direct, sk),
			.lport = RD(direct, sk->__sk_common.skc_num, sk,
				    __sk_common.skc_num),
			.family = family,
			.proto = proto,
		};
		__u32 zero = 0;
		struct handover *ho;

		if (!bpf_map_update_elem(&rx, &id, &first, BPF_NOEXIST))
			return 0;
		/* EEXIST: another CPU added it meanwhile; else full */
		v = bpf_map_lookup_elem(&rx, &id);
		if (!v) {
			ho = bpf_map_lookup_elem(&handover, &zero);
			if (ho)
				stat_inc(ho, UD_STAT_RX_OVERFLOW);
			return 0;
		}
	}
count:
	v->datagrams += 1;
	if (rmem > v->peak)
		v->peak = rmem;
	rx_win_count(id, v);
	return 0;
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(udpdrop_rx_btf, const struct sock *sk)
{
	return count_rx(true, (struct sock *)sk);
}

SEC("raw_tp/sk_data_ready")
int BPF_PROG(udpdrop_rx_raw, const struct sock *sk)
{
	return count_rx(false, (struct sock *)sk);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
