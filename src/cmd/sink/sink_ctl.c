// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop sink's side of the control channel (ctl.h): a generator's
 * connection accepted (one at a time), its HELLO (a run starts, READY)
 * and DONE (the sender's counts), read without ever holding up the
 * datagrams; a peer that goes silent or breaks the protocol is dropped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include "causes.h"
#include "ctl.h"
#include "log.h"
#include "seqtrack.h"
#include "sink_internal.h"
#include "udpgen.h"
#include "util.h"

/*
 * The control channel never holds up the datagrams: its peer's bytes are
 * read as they come, without waiting, into a buffer of their own. A peer
 * silent this long (no message, and no datagram of a run it announced) is
 * dropped; and at most this much of its input is taken per wake-up.
 */
#define CTL_IDLE_NS (10 * NS_PER_S)
#define CTL_READ_MAX (256 * 1024)
#define CTL_KEEPIDLE_S 10
#define CTL_KEEPINTVL_S 5
#define CTL_KEEPCNT 3

/* ---- the control channel --------------------------------------------- */

/*
 * The control peer is served from the same loop as the datagrams, so
 * nothing here waits for it: its bytes are read when poll says they are
 * there (recv MSG_DONTWAIT into s->cbuf), and only complete lines are
 * parsed. Replies are small, bar the LEDGER, and sent whole (ctl_send).
 */

static void ctl_error(int fd, const char *msg)
{
	struct ctl_msg m;

	ctl_msg__init(&m, "ERROR");
	ctl_msg__set(&m, "msg", msg);
	ctl_send(fd, &m);
	ctl_msg__free(&m);
}

void sink_close_ctl(struct sink *s)
{
	if (s->cfd >= 0)
		close(s->cfd);
	s->cfd = -1;
	free(s->cbuf);
	s->cbuf = NULL;
	s->clen = s->ccap = 0;
}

/*
 * Drop the control peer, with an ERROR saying why (`tell`) if it may
 * still listen. A run it announced and has not said DONE to ends here, as
 * interrupted (`why`); after DONE the run ends as it would have, without
 * the LEDGER. Returns sink_run_finish's error, if it came to that.
 */
int sink_ctl_drop(struct sink *s, const char *why, const char *tell)
{
	struct run *r = &s->r;

	if (tell && s->cfd >= 0)
		ctl_error(s->cfd, tell);
	sink_close_ctl(s);
	if (why)
		pr_info("control channel: %s\n", why);
	if (r->active && r->control && !r->ending) {
		r->end_reason = why ? why : "the generator left without DONE";
		return sink_run_finish(s);
	}
	return 0;
}

static int on_hello(struct sink *s, const struct ctl_msg *m)
{
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	uint64_t run, flows;
	struct ctl_msg reply;
	int err;

	/* run 0 and 0xffffffff mean any run and none to the XDP program */
	if (ctl_msg__get_u64(m, "run", &run) || run == UG_RUN_ANY || run >= UG_RUN_NONE ||
	    ctl_msg__get_u64(m, "flows", &flows) || !flows || flows > UG_XDP_FLOWS)
		return sink_ctl_drop(s, "a HELLO without a valid run= or flows=",
				"HELLO needs run= (1 to 4294967294) and flows= (1 to 1024)");
	if (s->r.active) {
		/* a run without control channel was going on: it ends here */
		s->r.end_reason = "a new run was announced";
		err = sink_run_finish(s);
		if (err)
			return err;
	}
	if (s->o->one_off && s->runs_done)
		return sink_ctl_drop(s, NULL, "the sink (--one-off) has served its run and is exiting");
	if (getpeername(s->cfd, (struct sockaddr *)&peer, &plen))
		plen = 0;
	err = sink_run_start(s, run, true, flows, plen ? (struct sockaddr *)&peer : NULL, true);
	if (err) {
		sink_run_abort(s);
		return sink_ctl_drop(s, NULL, "the sink could not start the run");
	}
	ctl_msg__init(&reply, "READY");
	ctl_msg__set_u64(&reply, "run", run);
	ctl_msg__set_u64(&reply, "rcvbuf", s->rcvbuf);
	ctl_msg__set_u64(&reply, "rcvbuf_asked", s->o->rcvbuf);
	ctl_msg__set_u64(&reply, "xdp", s->have_xdp);
	ctl_msg__set_u64(&reply, "tracer", s->have_tracer);
	err = ctl_send(s->cfd, &reply);
	ctl_msg__free(&reply);
	if (err) {
		/* gen sends nothing before READY: the run never began */
		pr_info("control channel: cannot send READY: %s\n", strerror(-err));
		sink_run_abort(s);
		return sink_ctl_drop(s, NULL, NULL);
	}
	return 0;
}

/* "f<i>.sent", "f<i>.sender_drops": 1, 2 (flow in *flow), or 0 */
static int done_key(const char *k, uint32_t nflows, uint32_t *flow)
{
	char num[8];
	const char *dot;
	uint64_t v;
	size_t n;

	if (k[0] != 'f' || !(dot = strchr(k, '.')))
		return 0;
	n = dot - k - 1;
	if (!n || n >= sizeof(num))
		return 0;
	memcpy(num, k + 1, n);
	num[n] = 0;
	if (strspn(num, "0123456789") != n || (n > 1 && num[0] == '0') ||
	    parse_u64(num, 0, nflows - 1, &v))
		return 0;
	*flow = (uint32_t)v;
	if (!strcmp(dot + 1, "sent"))
		return 1;
	if (!strcmp(dot + 1, "sender_drops"))
		return 2;
	return 0;
}

static void on_done(struct sink *s, const struct ctl_msg *m)
{
	struct run *r = &s->r;
	uint8_t have[UG_XDP_FLOWS] = {};
	char key[48];
	uint64_t v;

	if (!r->active || !r->control || r->done)
		return;
	/*
	 * One pass over the keys (2 per flow: a lookup each would be
	 * quadratic); the first of a key repeated counts, as ctl_msg__get.
	 */
	for (int i = 0; i < m->n; i++) {
		uint32_t flow;
		int which = done_key(m->kv[i].key, r->nflows, &flow);

		if (!which || (have[flow] & which))
			continue;
		have[flow] |= which;
		if (parse_u64(m->kv[i].val, 0, UINT64_MAX, &v))
			continue;
		if (which == 1) {
			r->sent[flow] = v;
			seqtrack__set_total(&r->st, flow, v, SEQ_TOTAL_LAST);
		} else {
			r->sender_drops[flow] = v;
		}
	}
	ctl_msg__get_u64(m, "snd_errors", &r->snd_errors);
	r->sender_tracer = !ctl_msg__get_u64(m, "sender_tracer", &v) && v;
	for (int c = 0; c < CAUSE_MAX; c++) {
		snprintf(key, sizeof(key), "snd.%s", cause__name(c));
		if (!ctl_msg__get_u64(m, key, &v))
			r->snd_cause[c] = v;
	}
	r->done = true;
	r->ending = true;
	r->ending_ns = r->last_activity_ns = now_ns();
	r->end_reason = "the generator is done";
}

/* One complete line (NUL in place of its newline). */
static int ctl_line(struct sink *s, const char *line, size_t n)
{
	struct ctl_msg m;
	int err;

	ctl_msg__init(&m, "");
	err = memchr(line, 0, n) ? -EINVAL : ctl_msg__parse(line, &m);
	if (err) {
		ctl_msg__free(&m);
		if (err == -EPROTO)
			return sink_ctl_drop(s, "another version of the control protocol",
					"another version of the udpdrop protocol (UDPDROP1 here)");
		return sink_ctl_drop(s, "a malformed control message", "malformed message");
	}
	if (!strcmp(m.type, "HELLO"))
		err = on_hello(s, &m);
	else if (!strcmp(m.type, "DONE"))
		on_done(s, &m);
	else
		ctl_error(s->cfd, "unexpected message");
	ctl_msg__free(&m);
	return err;
}

/* The complete lines in the buffer; the partial one stays, if not too long. */
static int ctl_lines(struct sink *s)
{
	size_t start = 0;
	int err = 0;

	while (s->cfd >= 0 && start < s->clen) {
		char *line = s->cbuf + start;
		char *nl = memchr(line, '\n', s->clen - start);
		size_t n;

		if (!nl)
			break;
		n = nl - line;
		if (n > CTL_LINE_MAX)
			break; /* said below */
		*nl = 0;
		start += n + 1;
		s->ctl_last_ns = now_ns();
		err = ctl_line(s, line, n); /* may drop the peer, buffer and all */
		if (err || (s->o->one_off && s->runs_done))
			return err;
	}
	if (s->cfd < 0)
		return 0;
	memmove(s->cbuf, s->cbuf + start, s->clen - start);
	s->clen -= start;
	if (s->clen > CTL_LINE_MAX)
		return sink_ctl_drop(s, "a control line over the size limit",
				"line too long (the limit is 256 KiB)");
	return 0;
}

/*
 * The peer has something (or has gone): take what is there without
 * waiting, CTL_READ_MAX at most (poll tells again), and act on the
 * complete lines.
 */
int sink_ctl_input(struct sink *s)
{
	size_t got = 0;
	int err;

	while (s->cfd >= 0 && got < CTL_READ_MAX) {
		ssize_t n;

		if (s->clen == s->ccap) {
			/* a line and its newline at most: ctl_lines says the rest */
			size_t cap = s->ccap ? s->ccap * 2 : 4096;
			char *b;

			if (cap > CTL_LINE_MAX + 1)
				cap = CTL_LINE_MAX + 1;
			if (cap <= s->ccap)
				return sink_ctl_drop(s, "a control line over the size limit",
						"line too long (the limit is 256 KiB)");
			b = realloc(s->cbuf, cap);
			if (!b)
				return sink_ctl_drop(s, "out of memory for the control channel",
						"the sink is out of memory");
			s->cbuf = b;
			s->ccap = cap;
		}
		n = recv(s->cfd, s->cbuf + s->clen, s->ccap - s->clen, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0) {
			pr_info("control channel: %s\n", strerror(errno));
			return sink_ctl_drop(s, "the control channel failed", NULL);
		}
		if (n == 0) {
			/* gone: a partial line is dropped with it */
			return sink_ctl_drop(s, NULL, NULL);
		}
		s->clen += n;
		got += n;
		err = ctl_lines(s);
		if (err || (s->o->one_off && s->runs_done))
			return err;
	}
	return 0;
}

/*
 * The control peer's deadline: CTL_IDLE_NS after its latest message (or
 * its connection), or after the latest datagram of the run it announced.
 */
uint64_t sink_ctl_deadline(const struct sink *s)
{
	uint64_t last = s->ctl_last_ns;

	if (s->r.active && s->r.control && s->r.data_ns > last)
		last = s->r.data_ns;
	return last + CTL_IDLE_NS;
}

static void ctl_keepalive(int fd)
{
	int one = 1, idle = CTL_KEEPIDLE_S, intvl = CTL_KEEPINTVL_S, cnt = CTL_KEEPCNT;

	/* a generator's host that vanished during a long run: found in ~25 s */
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

int sink_on_accept(struct sink *s)
{
	int fd = ctl_accept(s->lfd, 0), err = 0;

	if (fd < 0)
		return 0;
	if (s->cfd >= 0) {
		/*
		 * The current peer may be done and gone, its EOF (or its
		 * last lines) not read yet: see to it first.
		 */
		char c;
		ssize_t n = recv(s->cfd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

		if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			err = sink_ctl_input(s);
	}
	if (err) {
		close(fd);
		return err;
	}
	if (s->o->one_off && s->runs_done) {
		ctl_error(fd, "the sink (--one-off) has served its run and is exiting");
		close(fd);
		return 0;
	}
	if (s->cfd >= 0) {
		/* one run at a time: the socket and its counters are shared */
		ctl_error(fd, "busy: the sink is serving another generator");
		close(fd);
		return 0;
	}
	ctl_keepalive(fd);
	s->cfd = fd;
	s->clen = 0;
	s->ctl_last_ns = now_ns();
	return 0;
}
