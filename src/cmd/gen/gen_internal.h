/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * udpdrop gen's private header: the generator's state (struct gen, its
 * flows and counts) and the functions its files call across. gen.c (the
 * options and the driver), gen_setup.c, gen_send.c (the sender thread),
 * gen_reporter.c (the reporter thread) and gen_ctl.c (the control
 * channel) own the state and do the sending; gen_report.c only reads it,
 * to print.
 */
#ifndef UD_GEN_INTERNAL_H
#define UD_GEN_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "causes.h"
#include "hist.h"
#include "ledger.h"
#include "units.h"
#include "watch.h"

#define GEN_WHO "udpdrop gen"
#define WHO GEN_WHO
#define GEN_MAX_FLOWS 1024      /* the sink's XDP program tells 1024 flows apart */
#define GEN_MAX_BURST 1024      /* one sendmmsg: UIO_MAXIOV messages */
#define GEN_MAX_V4 65507        /* 65535 - IPv4 header - UDP header */
#define GEN_MAX_V6 65527        /* 65535 - UDP header (IPv6's length excludes its header) */

/* Send refusals, by errno (RF_UNKNOWN: see partial_refusal in gen_send.c). */
enum refusal { RF_ENOBUFS, RF_EAGAIN, RF_EPERM, RF_ECONNREFUSED, RF_UNKNOWN,
	       RF_OTHER, RF_MAX };

/* What came back on the error queues. */
enum errq { EQ_PORT_UNREACH, EQ_UNREACH, EQ_TOO_BIG, EQ_ICMP_OTHER, EQ_LOCAL, EQ_MAX };

struct gen_opts {
	const char *target;
	char host[256];
	uint16_t port;
	int family;             /* AF_UNSPEC unless -4 / -6 */
	struct rate rate;
	bool max;               /* --rate max / --pps max: unpaced */
	uint64_t size;          /* 0: fit the path MTU (at most 1500) */
	uint64_t burst;         /* 0: 1, or with --gso a full send */
	double duration;        /* seconds; 0 with --count */
	uint64_t count;
	uint64_t flows;
	uint64_t sndbuf;
	double interval;
	uint64_t reorder;       /* 0: in order; N: sequence numbers N, 2N, ... go one place late */
	bool gso, json, catch_up, no_tracer, no_control;
};

/* One flow: a socket with its own source port and sequence numbers. */
struct flow {
	int fd;
	uint16_t sport;
	uint64_t cookie;
	uint64_t total;         /* --count: datagrams planned for it; else 0 */
	bool last_sent;         /* its UG_F_LAST datagram was handed over (or,
				   with --count, refused: the total is in
				   every datagram, and the count is kept) */
	/* the sender's, read by the reporter under the lock */
	uint64_t seq;           /* next sequence number = datagrams numbered */
	uint64_t accepted;      /* send calls returned success */
	uint64_t refused;       /* a send call refused them (numbered, not sent) */
	uint64_t refused_skb;   /* ... of them with an skb the tracer saw (or an
				   unknown cause: counted as having had one) */
	int sndbuf;             /* SO_SNDBUF as the kernel set it; 0: unknown */
	/* the reporter's */
	uint64_t tracer;        /* drops the tracer attributed to the socket */
};

/* The sender's cumulative counts (under the lock); intervals are differences. */
struct tally {
	uint64_t numbered, accepted, bytes;
	uint64_t closing;       /* accepted LAST datagrams sent after the schedule */
	uint64_t copies;        /* --no-control: accepted copies of those (not numbered) */
	uint64_t slots, missed, reanchors, dgrams, burst_dgrams;
	uint64_t refused[RF_MAX];
};

struct cookie_ix {
	uint64_t cookie;        /* first: cmp_cookie compares it */
	int flow;
};

/* The generator: gen.c's and its phases', read by gen_report.c. */
struct gen {
	struct gen_opts o;
	struct sockaddr_storage dst;
	socklen_t dstlen;
	char dst_str[INET6_ADDRSTRLEN + 16];
	int mtu;
	uint64_t mtu_payload;   /* the largest datagram that is not fragmented */
	double pps;             /* the target datagram rate, 0: unpaced */
	double period_ns;       /* one slot (a --burst batch) */
	uint32_t run;
	int segs;               /* datagrams per send call: 1, or more with --gso */
	int nflows;
	struct flow *flows;
	struct cookie_ix *by_cookie; /* sorted by cookie, for the tracer's rows */

	/* the send path's buffers */
	struct ug_hdr *hdrs;    /* one per datagram of a slot */
	uint8_t *filler;        /* the bytes after the header, shared */
	struct mmsghdr *msgs;
	struct iovec *iov;

	/* shared: the sender writes, the reporter reads, under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;    /* wakes the reporter to finish */
	bool done;
	struct tally tally;
	struct hist hists[2];   /* lateness, ns: the sender adds to *late */
	struct hist *late;
	int other_errno;        /* the first RF_OTHER errno, to name it */

	/* the reporter's (the main thread's once it has joined) */
	struct hist late_all;
	struct tally prev;
	uint64_t prev_snd_drops, prev_icmp, prev_ns;
	uint64_t errq[EQ_MAX];
	uint64_t snd_cause[CAUSE_MAX];
	bool header_printed;
	bool write_failed;
	/* the sink went mid-run (closed, reset, or ended the run): why; "" while it is there */
	char sink_gone[200];

	struct watch w;
	bool tracer;
	bool tracer_failed;     /* it was asked for and could not open */
	int ctl;                /* the control connection, -1 without */
	int copy_fd;            /* --no-control: sends the closing datagrams' copies; -1 */
	uint64_t t0, t_end, last_sched;
	double elapsed;
	pthread_t sender_thread;
};

/* One report's numbers: an interval's (differences) or the whole run's. */
struct report {
	double start, end;       /* seconds since t0 */
	uint64_t dgrams, bytes, slots, missed, dgrams_paced, burst_dgrams;
	uint64_t refused[RF_MAX], refused_all;
	uint64_t snd_drops, icmp;
	const struct hist *late;
};

static inline bool gen_is_v6(const struct gen *g)
{
	return g->dst.ss_family == AF_INET6;
}

/* ICMP errors that came back (the local ones aside). */
static inline uint64_t gen_icmp_total(const struct gen *g)
{
	uint64_t n = 0;

	for (int i = 0; i < EQ_MAX; i++)
		if (i != EQ_LOCAL)
			n += g->errq[i];
	return n;
}

/*
 * A flow's sender drops: what a send refused, plus what the tracer saw
 * beyond the refusals that freed an skb (those it saw as well).
 */
static inline uint64_t gen_flow_snd_drops(const struct gen *g, const struct flow *f)
{
	uint64_t silent = g->tracer && f->tracer > f->refused_skb ? f->tracer - f->refused_skb : 0;

	return f->refused + silent;
}

/* The plan, before the first datagram (text only: JSON has it in the summary). */
void gen_report__plan(const struct gen *g);
/*
 * One interval's line, or JSON object, written out at once. A reader that
 * went away stops the run (SIGTERM to the sender): g->write_failed.
 */
void gen_report__interval(struct gen *g, const struct report *r);
/* The summary of the whole run, and the ledger l (NULL: none came). */
void gen_report__results(struct gen *g, const struct ledger *l);

/* SIGINT or SIGTERM: ends the sender's sleeps and the run (gen.c sets it). */
extern volatile sig_atomic_t gen_stop_signal;

/* gen.c: usage errors, as `udpdrop gen` words them: -EXIT_USAGE. */
int gen_bad_value(const char *opt, const char *val, const char *want);
int gen_bad_usage(const char *msg);

/* gen_setup.c */
/* Sockets, path MTU, the plan: 0 or -exit code (a message printed). */
int gen_setup(struct gen *g);
/* The flow of a socket cookie (the tracer's rows), or -1. */
int gen_flow_of_cookie(const struct gen *g, uint64_t cookie);

/* gen_send.c */
/* The sender: every slot until the run is over or stopped. */
void gen_run_sender(struct gen *g);
/* Close each flow at the sink (UG_F_LAST), once the send queues drained. */
void gen_send_last(struct gen *g);
/* Wait (max_ns at most) until the kernel has let go of every datagram. */
void gen_wait_outq(struct gen *g, uint64_t max_ns);

/* gen_reporter.c */
void gen_drain_errqueue(struct gen *g, int fd);
void gen_tracer_collect(struct gen *g);
/* Report the interval from the previous report to `now`. */
void gen_end_interval(struct gen *g, uint64_t now);
int gen_start_reporter(struct gen *g, pthread_t *th);
void gen_stop_reporter(struct gen *g, pthread_t th);

/* gen_ctl.c */
/* HELLO, and the sink's READY: 0, or an exit code after a message. */
int gen_ctl_hello(struct gen *g);
/* DONE, then the sink's LEDGER into l: 0, 1 (interrupted) or -EXIT_FAIL. */
int gen_ctl_done(struct gen *g, struct ledger *l);

#endif
