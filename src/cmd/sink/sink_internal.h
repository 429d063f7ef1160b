/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * udpdrop sink's private header: the sink's state (struct sink, its
 * options and the current run) and the functions its files call across:
 * sink.c (options, setup), sink_loop.c (the loop, the reads), sink_ctl.c
 * (the control channel), sink_run.c (runs and the ledger), sink_report.c
 * (what is printed).
 */
#ifndef UD_SINK_INTERNAL_H
#define UD_SINK_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "causes.h"
#include "hist.h"
#include "htab.h"
#include "ledger.h"
#include "seqtrack.h"
#include "udpgen.h"
#include "util.h"
#include "watch.h"
#include "xdpstamp.h"

#ifndef SO_RXQ_OVFL
#define SO_RXQ_OVFL 40
#endif

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull
#define LOSS_TIMEOUT_NS (2 * NS_PER_S)  /* no-control: no arrivals this long ends a run */
#define BATCH 64
/*
 * Only the gen header is needed from a datagram: each buffer holds that
 * much, and MSG_TRUNC makes recvmmsg report the real length anyway, so a
 * 64 KiB datagram costs no more to read than a small one.
 */
#define HDR_BUF 64
#define CMSG_BUF 128

enum tracer_want { TRACER_AUTO, TRACER_ON, TRACER_OFF };

struct sink_opts {
	const char *spec;           /* ADDR:PORT as given */
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int family;
	uint16_t port;
	bool wildcard;              /* bound to the unspecified address */
	uint8_t addr_bytes[16];
	uint64_t rcvbuf;            /* 0: the default */
	uint64_t read_delay_us;
	double stall_ms, every_ms;
	const char *xdp_if;
	double duration;            /* s, 0: until Ctrl-C */
	double interval;
	uint32_t window;
	bool json, one_off;
	enum tracer_want tracer;
};

/* The witnesses' counts when a run started (or when the sink was idle). */
struct baseline {
	struct ug_xdp_flow xdp[UG_XDP_FLOWS];
	uint64_t xs[UG_XS_MAX];
	struct htab rows;           /* struct row_key -> uint64_t[CAUSE_MAX] */
	uint64_t sk_drops;          /* SK_MEMINFO_DROPS */
	uint64_t ns;                /* when it was taken */
};

struct run {
	bool active;
	bool control;               /* announced on the control channel */
	bool done;                  /* gen's DONE arrived */
	bool ending;                /* waiting for datagrams still in flight */
	uint32_t id;
	uint32_t nflows;            /* announced (control); else seqtrack's */
	const char *end_reason;
	uint64_t start_ns, end_ns, ending_ns, last_activity_ns;
	struct seqtrack st;
	struct baseline base;
	bool have_peer;
	int peer_family;
	uint8_t peer[16];
	char peer_str[64];
	uint64_t foreign;           /* datagrams to the port that were not the run's */
	uint64_t after_end;         /* drained at the end, but past XDP after its
				       counting stopped: in no count, left out */
	uint64_t data_ns;           /* the run's latest datagram (read, or
				       counted by XDP): the control peer's
				       idle timeout */
	struct hist lat;            /* XDP arrival -> read */
	uint64_t lat_unknown;
	struct hist qwait;          /* kernel receive timestamp -> read */
	uint32_t ovfl_last;         /* SO_RXQ_OVFL of the latest datagram */
	bool ovfl_seen;
	/* from DONE */
	uint64_t *sent, *sender_drops;
	uint64_t snd_errors, snd_cause[CAUSE_MAX];
	bool sender_tracer;
	/* for the interval lines */
	uint64_t iv_read, iv_ns;
	/* what note_activity saw last */
	uint64_t act_xdp;
	uint32_t act_rmem;
	uint64_t bytes;
};

struct sink {
	struct sink_opts *o;
	int ufd, lfd, cfd;
	/* the control peer's input: complete lines are handled, the rest waits */
	char *cbuf;
	size_t clen, ccap;
	uint64_t ctl_last_ns;       /* accepted, or its latest complete message */
	uint64_t cookie;
	uint32_t netns;
	int rcvbuf;                 /* granted */
	struct xdpstamp xdp;
	bool have_xdp;
	struct watch w;
	bool have_tracer;
	struct run r;
	struct baseline idle;       /* kept fresh while no run is active */
	uint64_t idle_xdp_total, idle_reads;
	uint32_t last_run;          /* the run that ended last (stragglers are foreign) */
	bool have_last_run;
	uint64_t reads_total;       /* datagrams read, ever: the idle check */
	int runs_done;
	struct ug_xdp_flow xdp_now[UG_XDP_FLOWS];
	/* recvmmsg */
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	uint8_t bufs[BATCH][HDR_BUF];
	uint8_t cbufs[BATCH][CMSG_BUF] __attribute__((aligned(8)));
	struct sockaddr_storage from[BATCH];
	uint64_t t0;                /* the sink's start, for --stall and --duration */
};

/* SIGINT or SIGTERM: ends the loop (sink.c sets it). */
extern volatile sig_atomic_t sink_stop_signal;

/* The run's flows: announced (control), else as many as seqtrack saw. */
static inline uint32_t sink_run_flows(const struct run *r)
{
	return r->control ? r->nflows : r->st.nflows;
}

/* sink_loop.c */
/* The loop, until stopped, --duration or --one-off: 0 or -exit code. */
int sink_serve(struct sink *s);
/* Datagrams of the run in the queue now: unread. Returns how many. */
uint64_t sink_drain(struct sink *s);

/* sink_ctl.c */
int sink_on_accept(struct sink *s);
int sink_ctl_input(struct sink *s);
/* Drop the control peer (ERROR `tell` first, if not NULL); see sink_ctl.c. */
int sink_ctl_drop(struct sink *s, const char *why, const char *tell);
/* When the silent control peer is dropped. */
uint64_t sink_ctl_deadline(const struct sink *s);
void sink_close_ctl(struct sink *s);

/* sink_run.c */
/* The socket's queue (SK_MEMINFO_RMEM_ALLOC) and drop counter; NULL: not wanted. */
void sink_meminfo(int fd, uint32_t *rmem, uint32_t *drops);
int sink_take_baseline(struct sink *s, struct baseline *b);
void sink_rcv_causes(struct sink *s, uint64_t out[CAUSE_MAX]);
uint64_t sink_xdp_seen(struct sink *s, uint32_t nflows);
int sink_tracer_refresh(struct sink *s);
void sink_run_clear(struct sink *s);
void sink_set_peer(struct run *r, const struct sockaddr *sa);
int sink_run_start(struct sink *s, uint32_t id, bool control, uint32_t nflows,
		   const struct sockaddr *peer, bool fresh);
void sink_run_abort(struct sink *s);
int sink_run_finish(struct sink *s);

/* sink_report.c */
/* Write sb out (and free it): 0 or -errno (-EPIPE: the reader has gone). */
int sink_emit(struct sink *s, struct strbuf *sb);
void sink_format_run(const struct sink *s, const struct ledger *l,
		     const uint64_t xs[UG_XS_MAX], uint64_t foreign, uint64_t late,
		     struct strbuf *sb);
int sink_interval_line(struct sink *s, uint64_t now);

#endif
