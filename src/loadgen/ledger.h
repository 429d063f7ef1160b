/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The end-to-end ledger of a gen -> sink run: where every datagram went.
 *
 *   sent = sender drops + lost before the host + receiver kernel drops
 *          + unread at end + read by the application
 *
 * Each term comes from its own witness: sent and sender drops from gen
 * (errors the kernel returned, plus drops the sender's tracer saw that no
 * call reported), seen at the interface from the sink's XDP program,
 * receiver drops from the sink's tracer, unread and read from the sink.
 * "Lost before the host" is sent - sender drops - seen by XDP; whatever the
 * other witnesses leave over is "unexplained" and should be zero.
 * Pure: no I/O but the FILE and strbuf it prints to.
 */
#ifndef UD_LEDGER_H
#define UD_LEDGER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "causes.h"
#include "ctl.h"
#include "hist.h"
#include "json.h"

struct ledger_flow {
	uint64_t sent;         /* datagrams gen numbered (have_sent) */
	uint64_t sender_drops; /* ... that never left the sender (have_sent) */
	uint64_t xdp_seen;     /* reached the receiving interface (have_xdp) */
	uint64_t read;         /* read by the application (unique sequence numbers) */
	uint64_t unread;       /* in the socket's queue when the run ended */
	uint64_t gap_lost;     /* never read, by sequence number (tail included
				  when the total is known) */
	uint64_t reordered;    /* read after a later sequence number */
	uint64_t duplicates;   /* read more than once (not counted in read) */
};

struct ledger {
	bool have_sent;        /* gen's counts arrived (control channel or the
				  UG_F_LAST datagram's total) */
	bool have_sender;      /* gen's sender drops arrived (control channel) */
	bool have_xdp;         /* the sink ran XDP on the interface */
	bool have_tracer;      /* the sink's tracer counted receiver drops */
	bool have_sender_tracer; /* gen's tracer counted sender drops */
	bool fragmented;       /* the run's datagrams were IP fragments (XDP saw later ones) */
	/*
	 * Why sent is unknown (!have_sent) when it is not the usual reason (no
	 * control channel, and no flow's last datagram arrived): e.g. the
	 * generator was killed before it sent its counts. NULL otherwise.
	 */
	const char *sent_unknown;
	int nflows;
	struct ledger_flow *flows;   /* nflows entries */
	struct ledger_flow total;    /* ledger__sum fills it */
	uint64_t rcv_cause[CAUSE_MAX]; /* receiver kernel drops of the run, by cause */
	uint64_t snd_cause[CAUSE_MAX]; /* sender kernel drops (gen's tracer), by cause */
	uint64_t snd_errors;           /* gen: datagrams a send call refused */
	uint64_t rxq_ovfl;             /* SO_RXQ_OVFL: the socket's drops during the run */
	struct hist latency;           /* XDP arrival -> read, ns (have_xdp) */
	uint64_t latency_unknown;      /* reads whose stamp was overwritten */
	double seconds;                /* the run's length at the sink */
};

int ledger__init(struct ledger *l, int nflows);
void ledger__free(struct ledger *l);
/* Sum the flows into l->total. */
void ledger__sum(struct ledger *l);
/* Receiver kernel drops: the tracer's, summed over causes. */
uint64_t ledger__rcv_drops(const struct ledger *l);
/* sent - sender drops - seen by XDP (may be negative: a bug worth showing). */
int64_t ledger__lost_before_host(const struct ledger_flow *f);
/*
 * What no witness explains, in total: with XDP, seen - receiver drops -
 * unread - read - duplicates (XDP saw every copy); without, sent - sender
 * drops - receiver drops - unread - read (then network loss is in it: the
 * printout says so). 0 when the counts needed are missing (check the
 * have_* flags). read counts each sequence number once.
 */
int64_t ledger__unexplained(const struct ledger *l);
/* Per flow: lost by sequence - (sent - read - unread). */
int64_t ledger__flow_unexplained(const struct ledger_flow *f);

/*
 * Why the identity cannot hold for this run, or NULL. Fragmented
 * datagrams with sender drops: a datagram the sender's qdisc cut after its
 * first fragment left is a sender drop and also seen at the interface
 * (XDP counts first fragments), and the receiver drops its fragments only
 * when reassembly times out, after the run.
 */
const char *ledger__caveat(const struct ledger *l);
/* Why sent is unknown (meaningful when !have_sent). */
const char *ledger__sent_unknown(const struct ledger *l);
/* The table people read; `interval` prints no per-flow lines. */
void ledger__print(FILE *f, const struct ledger *l);
/* "ledger": {...} members into an open object. */
void ledger__json(struct json *j, const struct ledger *l);
/* Over the control channel (LEDGER message) and back. */
void ledger__to_msg(const struct ledger *l, struct ctl_msg *m);
int ledger__from_msg(struct ledger *l, const struct ctl_msg *m);

#endif
