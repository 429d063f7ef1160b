/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The advice engine, pure: the rules published UDP tuning guides teach
 * (udpdrop(8) SOURCES; socket buffer
 * sizing, truesize, fragmentation, pacing, sender-side queues), applied to
 * plain numbers. It knows nothing of the live model, trace records or the
 * machine it runs on: `udpdrop report` fills struct advice_input from a
 * recording, `top` and `doctor` will fill it from the live counters. Every
 * number it prints carries its unit; an estimate is marked "~" or "about",
 * a bound says which way ("at most", "at least").
 *
 * `udpdrop top` and `doctor` fill it from the live model (advice_model.h
 * advice_model__input, one adapter): rate_dgps / rate_Bps (delivered +
 * dropped, when deliveries are counted), queue_peak, the burst per refresh
 * interval, and the socket's own figures (its deliveries in the intervals
 * it dropped in, its queue at each look, bursts.h bursts__record); report
 * the same figures from a recording (SOCKETS' deliveries, minor 2). Per-
 * socket verdicts come from per-socket figures; the mib_* and reads
 * counters are the namespace's, quoted as labelled context. top's HINT
 * column is advice__hint's short form of the change.
 */
#ifndef UD_ADVICE_H
#define UD_ADVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "causes.h"
#include "sysctl_scope.h"

/* A number that may be unknown: fill .known when it is. */
struct advice_u64 {
	bool known;
	uint64_t v;
};
struct advice_dbl {
	bool known;
	double v;
};
#define ADVICE_U64(x) ((struct advice_u64){ true, (x) })
#define ADVICE_DBL(x) ((struct advice_dbl){ true, (x) })

/* Linux's SOCK_MIN_RCVBUF / SOCK_MIN_SNDBUF (Jones and Zhu, "Considerations When Benchmarking UDP Bulk Flows", measured them). */
#define ADVICE_SOCK_MIN_RCVBUF 2304u
#define ADVICE_SOCK_MIN_SNDBUF 4608u
/* A receive buffer this large that still overflows: the sender is faster. */
#define ADVICE_LARGE_RCVBUF (16u << 20)
/* The largest receive buffer the advice recommends: a burst that needs
 * more is a sender faster than the reader, which pacing fixes, not memory. */
#define ADVICE_RCVBUF_CAP (64u << 20)
/* The rcvbuf advice sizes the buffer for this many times the worst burst
 * seen (bursts vary: one a little longer than the one seen must fit). */
#define ADVICE_BURST_MARGIN 2
/* The buffer (as the kernel keeps it) the rcvbuf advice raises to when no
 * burst is known to size it by: Jones and Zhu's starting point. */
#define ADVICE_FALLBACK_RCVBUF (8u << 20)
/* "Pace the sender" paces to this share (percent) of the rate the reader
 * drained while it dropped: at exactly that rate it drops at every hiccup. */
#define ADVICE_PACE_PCT 90
/* The largest UDP payload (the 16-bit length field): sizes are clamped to
 * it, so a hostile or corrupt input cannot overflow the arithmetic. */
#define ADVICE_PAYLOAD_MAX 65535u

/* "host-wide", "per-netns"; NULL when unknown */
const char *advice__scope_name(enum advice_scope s);
/* The scope of sysctl `name` in w (NULL: w is NULL or does not list it). */
const struct advice_sysctl_scope *advice__scope_of(const struct advice_where *w, const char *name);
/*
 * The command that sets sysctl `name` to `value` (quoted when it holds
 * spaces) where it takes effect, exactly as it is to be run into cmd, and
 * where it is run: *on_host true for a host-wide setting the netns viewed
 * cannot write (run it on the host, in the initial netns), else from
 * where udpdrop runs. Returns false (cmd: the plain "sysctl -w ..."
 * anyway) when no command works from either: a per-netns setting
 * read-only in its netns (the container runtime sets it), or a per-netns
 * one of a netns with no safe way in.
 */
bool advice__sysctl_cmd(const struct advice_where *w, const char *name, const char *value,
			char *cmd, size_t len, bool *on_host);
/*
 * The same as a phrase for the advice's text: the command with its
 * scope ("on the host (net.core.rmem_max is host-wide: read-only in netns
 * X): sysctl -w net.core.rmem_max=N", "ip netns exec X sysctl -w ... (per
 * netns: ...; a container: docker run --sysctl ...)"); the plain command
 * when the scope is unknown. Appended to buf.
 */
void advice__sysctl_phrase(const struct advice_where *w, const char *name, const char *value,
			   char *buf, size_t len);

struct advice_input {
	enum cause cause;
	/* where: for the text only, all optional */
	const char *who;          /* "10.0.0.2:5001", "10.0.0.1 -> 10.0.0.2:5003" */
	uint8_t family;           /* AF_INET, AF_INET6, 0 unknown */
	struct advice_u64 port;   /* the local (or destination) port */
	bool sender_side;         /* drops of a local sender (egress), not a receiver */
	bool has_socket;          /* the drops belong to a socket (not a bare flow) */
	/* the socket receives a multicast group or broadcasts (UD_KEY_GROUP):
	 * its sender is every receiver's, never one to pace for this one */
	bool group;
	/* the socket's owner: its comm (well-known servers have their own
	 * setting for the buffer: advice_rcvbuf.c), and whether it holds
	 * CAP_NET_ADMIN (SO_RCVBUFFORCE passes net.core.rmem_max) */
	const char *owner_comm;
	struct advice_u64 owner_net_admin; /* 1 or 0; unknown offline */
	/*
	 * The sockets of the same process on the same port (REUSEPORT
	 * threads, an IPv4 and an IPv6 one), which one setting of the
	 * application sizes (unbound's so-rcvbuf): how many there are, this
	 * one included (0 or 1: none other), and the most buffer any of them
	 * needs (advice__rcvbuf_need of each). The rcvbuf advice gives each
	 * that one value: a process's two sockets never get two.
	 */
	int siblings;
	uint64_t sibling_need;
	/*
	 * no_socket: a socket that is bound to the port all the same but
	 * would not take these datagrams (connected to another peer, bound
	 * to another address), as "10.0.0.2:40000 connected to
	 * 10.0.0.9:53, held by 1234/dig" (advice__port_taken); "" for none:
	 * nothing listens on the port.
	 */
	char port_taken[192];

	/* the drops */
	uint64_t drops;           /* datagrams of this cause */
	uint64_t skbs;            /* the kernel's skb events behind them */
	/* drops in the kernel's own unit (rows.h, ud_kernel_units: a GSO/GRO
	 * skb counts once); 0: not known, taken as drops */
	uint64_t units;
	double span_s;            /* the time they were counted over (0: unknown) */
	struct advice_u64 burst;  /* the most datagrams dropped in one interval */
	double burst_s;           /* that interval's length, s */
	bool burst_window;        /* the burst is the most in any burst_s window,
				     counted from per-drop events; else it is
				     per snapshot interval (burst_s: that one) */
	bool burst_episode;       /* (doctor) the burst is the most in one run of
				     consecutive sample intervals with drops
				     (burst_s: that run's length); intervals
				     and intervals_dropping are then sample
				     intervals, and the text says so */
	/* where the sysctls take effect and how to reach the netns (NULL:
	 * unknown: the commands are the plain sysctl -w) */
	const struct advice_where *where;
	bool live;                /* a live sample (top, doctor), not a recording:
				     intervals are refreshes (sample intervals
				     with burst_episode), not snapshots */
	struct advice_u64 event_drops; /* of drops, those with per-drop events
					  (known when the trace has events) */
	struct advice_u64 intervals;   /* snapshot (refresh, sample) intervals in span_s */
	struct advice_u64 intervals_dropping; /* ... of them with drops of this cause */

	/* arrivals: delivered + dropped, when known; else the drops bound them */
	struct advice_dbl rate_dgps;   /* datagrams/s */
	struct advice_dbl rate_Bps;    /* payload bytes/s */
	struct advice_dbl avg_size;    /* payload bytes per datagram */
	struct advice_dbl truesize;    /* bytes the kernel charges per datagram */
	struct advice_u64 reads;       /* datagrams read by applications over span_s
					  (UdpInDatagrams delta; netns-wide: every
					  socket's, so context only; it decides "not
					  reading" only when delivered is unknown) */
	/* the socket's own deliveries (sock:sk_data_ready), per socket: what
	 * "not reading" and the pacing rate are judged by */
	struct advice_u64 delivered;   /* datagrams queued to this socket in the
					  intervals it dropped (this cause) in */
	double delivered_s;            /* those intervals' length, s */
	struct advice_u64 stalled_intervals; /* the latest run of intervals with
						drops and nothing delivered */
	double stalled_s;              /* that run's length, s */

	/* the socket */
	struct advice_u64 rcvbuf;      /* SO_RCVBUF as the kernel keeps it (doubled) */
	struct advice_u64 sndbuf;
	struct advice_u64 queued;      /* bytes queued at the last look */
	struct advice_u64 queue_peak;  /* most bytes queued seen */
	struct advice_u64 queue_low;   /* fewest bytes queued seen (drained?) */
	struct advice_u64 queue_looks; /* how many times queue_* were sampled */
	/* the drop shape at a finer grain than the intervals (a recording's
	 * per-drop events, in windows of window_s): windows from its first
	 * drop to its last, and those with drops. A steady overload drops in
	 * nearly every one; a bursty sender (a load tester sending in bursts)
	 * in few, however many intervals its bursts touch */
	struct advice_u64 windows, windows_dropping;
	double window_s;
	/* windows, windows_dropping and burst are the kernel's drop windows
	 * (advice__kernel_windows): the same in every view of one run, so the
	 * verdict between bursts and a steady overload goes by them alone,
	 * not by what a view's looks at the queue happened to catch */
	bool kernel_windows;
	bool queue_between_drops;      /* queue_low was seen with more drops after
					  it (top, doctor): a low one says the reader
					  caught up between drops (bursts); a
					  recording's looks include the quiet after
					  a load, so they do not judge that */

	/* sysctls */
	struct advice_u64 rmem_default, rmem_max, wmem_default, wmem_max;
	struct advice_u64 udp_mem[3];  /* pages: min, pressure, max */
	struct advice_u64 page_size;   /* bytes; 4096 assumed when unknown */
	struct advice_u64 netdev_max_backlog;
	struct advice_u64 ipfrag_time, ipfrag_high_thresh, ipfrag_max_dist;

	/* the interface (NULL / unknown when it is not known: the advice then
	 * says which facts it lacks and how to look them up) */
	const char *ifname;
	struct advice_u64 mtu, txqueuelen;

	/* the kernel's counters over the same span (per netns) */
	struct advice_u64 mib_rcvbuf_errors, mib_mem_errors, mib_sndbuf_errors;
	struct advice_u64 mib_no_ports, mib_csum_errors, mib_ignored_multi;
	struct advice_u64 mib_reasm_fails, mib_reasm_timeout;
};

/*
 * One socket's (or flow's) drops of one cause, interval by interval, as
 * every view sees them (top per refresh, doctor per sample tick, report
 * per snapshot), accumulated by one rule, so that the same intervals give
 * the engine the same figures in every view.
 */
struct advice_track {
	uint64_t dropping;     /* intervals with drops */
	uint64_t best;         /* the most drops in one of them */
	double best_s;         /* that interval's length, s */
	uint64_t delivered;    /* the socket's deliveries in the intervals with
				  drops whose deliveries are known */
	double delivered_s;    /* those intervals' length, s */
	uint64_t stalled;      /* the latest run of them with none delivered */
	double stalled_s;      /* that run's length, s */
};
/*
 * A reader stopped mid-run: its latest intervals with drops delivered
 * nothing, for at least ADVICE_STALL_MIN_S in all (and two intervals).
 * A time, not a count of intervals, so that doctor's short samples, top's
 * refreshes and report's snapshots judge alike; a second, so that the
 * tail of a run (the reader done, the last datagrams still arriving)
 * is no stopped reader.
 */
#define ADVICE_STALL_MIN_S 1.0
/* One interval of len_s: drops of the cause, and the socket's deliveries
 * in it when rx_known (not for a flow, nor an interval whose start is not
 * known: a row first seen then). An interval without drops changes nothing. */
void advice__track(struct advice_track *t, uint64_t drops, double len_s, bool rx_known, uint64_t rx);
/* What the track gives the engine over `intervals` intervals: the burst
 * (per interval), intervals and intervals_dropping, and the socket's
 * deliveries when some were measured. */
void advice__track_input(struct advice_input *in, const struct advice_track *t, uint64_t intervals);
/*
 * The kernel's drop windows of the socket and cause (windows.h: UD_WIN_NS
 * each): `span` from the first with drops to the last, `dropping` of them
 * with drops, `best` the most in one; they replace the per-interval burst.
 * rx_known: `delivered` is the socket's deliveries in those windows, what
 * its reader took while it dropped (the pacing rate), and `stalled` the
 * latest run of them with none (a reader stopped mid-run). With them a
 * view's own looks (its intervals, its queue looks) decide nothing.
 * Nothing for span 0.
 */
void advice__kernel_windows(struct advice_input *in, uint64_t span, uint64_t dropping,
			    uint64_t best, bool rx_known, uint64_t delivered, uint64_t stalled);

#define ADVICE_WHAT     160
#define ADVICE_TEXT     2048
#define ADVICE_MAX      4 /* findings from one input, at most */

struct advice_finding {
	enum cause cause;
	/*
	 * Another diagnosis of the drops the finding before it (same cause,
	 * same socket or flow) counts: JSON's carries_drops is false, so a
	 * consumer summing findings' drops counts each drop once.
	 */
	bool secondary;
	char what[ADVICE_WHAT];       /* one line */
	char evidence[ADVICE_TEXT];   /* the numbers, with units */
	char change[ADVICE_TEXT];     /* the exact command or call, value computed */
	char verify[ADVICE_TEXT];     /* the counter or view that must stay at 0 */
	/* the change's first setting and value, for scripts ("" and
	 * has_value false when the change is not a setting: pace, find the
	 * rule): "SO_RCVBUF" (the setsockopt request, bytes, before the
	 * kernel doubles it), "SO_SNDBUF", "net.core.rmem_default",
	 * "net.core.rmem_max", "net.core.netdev_max_backlog",
	 * "net.ipv4.udp_mem" (its max, pages; the change doubles pressure
	 * too), "net.ipv4.ipfrag_max_dist", "txqueuelen" (packets),
	 * "datagram_size" (the largest unfragmented UDP payload, bytes),
	 * "sender_pps" (pace the sender to at most this many datagrams/s:
	 * 90 % of what the reader drained while it dropped) */
	char setting[40];
	bool has_value;
	uint64_t value;
	/* when the setting is a sysctl: its scope ("host-wide", "per-netns",
	 * "" unknown), the command that applies it exactly as printed in
	 * change ("" when none works from here or the host) and where it runs
	 * (on_host: on the host, else where udpdrop runs) */
	char setting_scope[16];
	char setting_command[320];
	bool setting_on_host;
	/* the rule's verdict, for scripts and the cross-view checks ("" for
	 * none): rcvbuf: "not_reading", "steady_overload" (pace: a bigger
	 * buffer only postpones), "bursts" (a buffer sized for the worst
	 * burst), "unsized" (no burst known) */
	char verdict[24];
	double sampled_s;             /* the span the verdict judged (0: unknown) */
	/* the kernel's drop windows it judged by (kernel_windows: false when
	 * none; JSON "drop_windows"): from the first with drops to the last,
	 * those with drops, the most datagrams in one */
	bool kernel_windows;
	uint64_t windows, windows_dropping, window_most;
	double window_s;
	bool window_rx;               /* window_delivered is known */
	uint64_t window_delivered;    /* the socket's deliveries in those windows */
};

/*
 * The findings for one input into out[0 .. max): returns how many (at
 * least 1 for any input with drops or skb events, at most ADVICE_MAX).
 */
int advice__build(const struct advice_input *in, struct advice_finding *out, int max);
/*
 * The receive buffer the rcvbuf advice gives the socket on its own (its
 * sibling_need aside), 0 where it paces the sender instead: what a view
 * gathers over a process's sockets on one port into sibling_need.
 */
uint64_t advice__rcvbuf_need(const struct advice_input *in);

/*
 * The first change advice__build proposes for the input, in a few words
 * (top's HINT column, about 22 characters): "SO_RCVBUF >= 674 KiB",
 * "rmem_default >= 1.4 MiB", "pace the sender", "not reading", "nothing
 * on :53", "send <= 1472 B", ...; "" for an input with no drops. Sizes
 * are rounded up, never below the size the change computes.
 */
#define ADVICE_HINT 32
void advice__hint(const struct advice_input *in, char *buf, size_t len);

/*
 * A finding as a JSON object (report's "advice", doctor's "findings",
 * top's summary "advice"), its keys a contract, in this order: "cause";
 * with sock, "socket" (the id, or null) and "socket_id_kind" ("cookie",
 * "inode" or null); then whatever keys the caller adds between begin and
 * end; then "what", "evidence", "change", "verify"; with setting,
 * "setting" and "value" (null when the change is not a setting), then
 * "setting_scope" ("host-wide", "per-netns"; null: not a sysctl or not
 * known), "setting_command" (the command in change that applies it, null
 * when none) and "setting_run_on" ("host": the initial netns, "here":
 * where udpdrop runs; null with no command), then "verdict" (null: none)
 * and "sampled_s" (null: unknown).
 * advice__json_begin opens the object, advice__json_end closes it.
 */
/*
 * Fill in->port_taken from a socket bound to the destination port of a
 * no_socket flow (laddr:lport, its peer raddr:rport or rport 0, its owner
 * pid/comm or pid 0): the words the advice names it with.
 */
void advice__port_taken(struct advice_input *in, int family, const uint8_t *laddr,
			uint16_t lport, const uint8_t *raddr, uint16_t rport, int pid,
			const char *comm);

struct json;
struct advice_json_socket {
	bool known;        /* false: the finding has no socket (both null) */
	uint64_t id;       /* the socket cookie, or its inode when by_inode */
	bool by_inode;     /* a socket keyed by inode (older kernels) */
};
void advice__json_begin(struct json *j, const struct advice_finding *f,
			const struct advice_json_socket *sock);
void advice__json_end(struct json *j, const struct advice_finding *f, bool setting);

/* "8192 B", or "696320 B (680 KiB)" past 64 KiB: exact, and readable (the
 * advice's and the checklist's byte counts). Returns buf. */
const char *advice__bytes(char *buf, size_t len, uint64_t v);

/* ---- the rules, as pure helpers (tested against the published tables (Jones and Zhu)) ---- */

/* Milliseconds a stalled reader has before buf_bytes fill at bits_per_s
 * (buf x 8 / rate): the "time to fill" table (Jones and Zhu). 0 if the rate is 0. */
double advice__time_to_fill_ms(uint64_t buf_bytes, double bits_per_s);
/* The chance a message of `fragments` is lost at packet loss p (0..1):
 * 1 - (1 - p)^fragments: "message loss vs packet loss" (Jones and Zhu). */
double advice__message_loss(double p, unsigned fragments);
/* The largest UDP payload sent unfragmented: MTU - 28 (IPv4), - 48 (IPv6). */
uint64_t advice__max_unfragmented(uint32_t mtu, int family);
/* IP fragments carrying a UDP payload of `payload` bytes at this MTU
 * (1 when it fits); 0 if the MTU is too small to say. */
unsigned advice__fragments(uint64_t payload, uint32_t mtu, int family);
/* What the kernel sets for setsockopt(SO_RCVBUF or SO_SNDBUF, request)
 * under net.core.[rw]mem_max: min(request, max) x 2, at least the minimum. */
uint64_t advice__sockbuf_effective(uint64_t request, uint64_t max, bool rcv);
/* v rounded up to a multiple of `to` (to > 0). */
uint64_t advice__round_up(uint64_t v, uint64_t to);
/*
 * About what the kernel charges a socket for one datagram of `payload`
 * bytes (its truesize: the buffer, the sk_buff and shared info, not the
 * payload), for an skb allocated by the stack (loopback, veth, a local
 * sender); a fragmented one is charged for each fragment. NIC drivers
 * differ (page fragments of 2 or 4 KiB): an estimate.
 */
uint64_t advice__truesize_estimate(uint64_t payload, uint32_t mtu, int family);
/* Seconds until the 16-bit IP ID wraps at this many datagrams/s to one
 * destination (65536 / rate); 0 if the rate is 0. */
double advice__ipid_wrap_s(double datagrams_per_s);

#endif
