/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * doctor's checklist, pure: settings that are risky even before anything
 * dropped, judged against what the sample observed (the busiest receiving
 * socket's rate, the packet rate, fragments, the sockets' buffers). Each
 * item: the setting, its value now, risky or not, the value to set and why,
 * with the numbers.
 */
#ifndef UD_CHECKLIST_H
#define UD_CHECKLIST_H

#include "advice.h"

/* The stall a receive buffer should absorb at the observed rate. */
#define CHECK_STALL_S 0.1
/* The softirq delay the per-CPU backlog should absorb. */
#define CHECK_BACKLOG_S 0.01
/* doctor's sample ticks: a peak rate is the busiest tick's. */
#define CHECK_TICK_S 0.2

struct check_rx {
	bool known;
	const char *who;          /* "10.0.0.2:5001" */
	double dgps;              /* datagrams/s arriving (delivered + dropped) */
	bool peak;                /* dgps is the busiest tick's (CHECK_TICK_S);
				     false: on average over the sample */
	struct advice_dbl size;   /* payload bytes per datagram, when known */
	uint64_t rcvbuf;          /* SO_RCVBUF as the kernel keeps it */
	uint32_t mtu;             /* of its interface, 0 unknown */
	int family;
	/* its rcvbuf finding's verdict (advice_finding.verdict: the same
	 * engine, the same input), NULL if it has none; and the rate that
	 * finding paces to (0: none), so the checklist and the finding agree */
	const char *verdict;
	uint64_t pace_dgps;
};

struct check_input {
	struct advice_u64 rmem_default, rmem_max, netdev_max_backlog;
	struct advice_u64 ipfrag_high_thresh, ipfrag_time;
	struct advice_u64 udp_mem[3];          /* pages */
	struct advice_u64 page_size;
	/* counters only: no socket's arrivals are observable (no tracing), so
	 * busiest* are unknown for that reason, not for lack of traffic, and
	 * so are datagram sizes (fragments) */
	bool counters_only;
	/* traced, but the kernel has no sock:sk_data_ready (before 6.6): no
	 * socket's arrivals are counted, so the buffers are not judged */
	bool no_arrivals;
	uint64_t nsockets_default;             /* counters only: sockets at rmem_default */
	struct check_rx busiest;               /* the busiest receiving socket */
	struct check_rx busiest_default;       /* ... of those at rmem_default */
	struct advice_dbl pkt_rate;            /* UDP datagrams/s into the netns, */
	bool pkt_rate_peak;                    /* ... the busiest tick's; false: on
						  average over the sample */
	struct advice_dbl frag_dgps;           /* fragmented datagrams/s seen */
	unsigned frag_k;                       /* fragments each */
	uint32_t frag_mtu;
	bool frag_peak;                        /* frag_dgps is a busiest tick's */
	int frag_family;                       /* AF_INET (0) or AF_INET6 */
	uint64_t sizes_unknown;                /* receiving sockets whose datagram
						  size is unknown (sizes come from
						  drops: those without any) */
	struct advice_u64 rcvbuf_sum;          /* bytes: all UDP sockets' rcvbuf */
	uint64_t nsockets;                     /* ... of that many sockets */
	struct advice_where where;             /* each setting's scope (n 0: not known) */
};

#define CHECK_TEXT 1280
struct check_item {
	char setting[40];         /* "net.core.rmem_default" */
	char scope[16];           /* "host-wide", "per-netns", "" unknown (advice.h) */
	char command[320];        /* the command in why that applies value ("": none) */
	bool on_host;             /* ... to be run on the host, else where udpdrop runs */
	bool evaluated;           /* false: nothing observed to judge it by */
	bool risky;
	bool has_now, has_value;
	uint64_t now, value;      /* today's value, the one to set (if risky) */
	char why[CHECK_TEXT];     /* the numbers */
};

#define CHECK_MAX 5
/* The items (at most max, CHECK_MAX in all), in a fixed order. */
int check__build(const struct check_input *in, struct check_item *out, int max);

/* Truesize per datagram the checklist sizes with: the estimate for the
 * payload when known, else for a full-MTU datagram (1500 when unknown). */
uint64_t check__truesize(const struct check_rx *rx);
/* Bytes of receive buffer that absorb a stall of `s` at rx's rate,
 * rounded up to 4 KiB. */
uint64_t check__rcvbuf_for(const struct check_rx *rx, double s);

/*
 * Counters only: the socket a count of receive-buffer drops (the kernel's,
 * mib_delta) belongs to, from how much each socket's own drop counter grew
 * (grew[i], 0: did not). The one socket that grew, by at most mib_delta
 * (the socket table is read inside the counters' span, so its count can
 * only be smaller); -1 when none or several grew, or it grew by more.
 * *exact: it grew by exactly mib_delta.
 */
int check__drop_owner(const uint64_t *grew, int n, uint64_t mib_delta, bool *exact);

#endif
