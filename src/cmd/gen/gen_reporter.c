// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop gen's reporter thread: every --interval it drains the error
 * queues, refreshes the tracer and prints an interval; between intervals
 * it watches the control channel for a sink gone mid-run.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "ctl.h"
#include "gen_internal.h"
#include "util.h"

#define CTL_WATCH_NS (200 * 1000000ull) /* how often the reporter looks for a sink gone */
#define CTL_MIDRUN_MS 1000      /* the rest of a message the sink sends mid-run */

void gen_drain_errqueue(struct gen *g, int fd)
{
	char data[64];
	char ctrl[CMSG_SPACE(sizeof(struct sock_extended_err) + sizeof(struct sockaddr_in6))];

	for (;;) {
		struct iovec iov = { data, sizeof(data) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctrl, .msg_controllen = sizeof(ctrl) };

		if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			struct sock_extended_err ee;

			if (!((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
			      (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR)))
				continue;
			memcpy(&ee, CMSG_DATA(c), sizeof(ee));
			if (ee.ee_origin != SO_EE_ORIGIN_ICMP && ee.ee_origin != SO_EE_ORIGIN_ICMP6)
				g->errq[EQ_LOCAL]++;
			else if (ee.ee_errno == ECONNREFUSED)
				g->errq[EQ_PORT_UNREACH]++;
			else if (ee.ee_errno == EHOSTUNREACH || ee.ee_errno == ENETUNREACH)
				g->errq[EQ_UNREACH]++;
			else if (ee.ee_errno == EMSGSIZE)
				g->errq[EQ_TOO_BIG]++;
			else
				g->errq[EQ_ICMP_OTHER]++;
		}
	}
}

/* The tracer's drops of our sockets: per flow, and per cause over all. */
void gen_tracer_collect(struct gen *g)
{
	size_t it = 0;
	const void *k;
	void *v;

	if (!g->tracer)
		return;
	if (watch__refresh(&g->w)) {
		fprintf(stderr, WHO ": warning: reading the sender's drop counts failed; they may be short\n");
		return;
	}
	memset(g->snd_cause, 0, sizeof(g->snd_cause));
	while (htab__next(&g->w.m.rows, &it, &k, &v)) {
		const struct row *r = v;
		int fl;

		if (r->key.kind != ROW_SOCKET || (fl = gen_flow_of_cookie(g, r->key.cookie)) < 0)
			continue;
		g->flows[fl].tracer = r->drops;
		for (int c = 0; c < CAUSE_MAX; c++)
			g->snd_cause[c] += r->cause[c];
	}
}

/*
 * One interval, from the previous report to `now`: drain, refresh, take
 * the sender's counts and swap its lateness histogram, print.
 */
void gen_end_interval(struct gen *g, uint64_t now)
{
	struct tally t;
	struct hist *late;
	struct report r = {};
	uint64_t snd = 0;

	for (int i = 0; i < g->nflows; i++)
		gen_drain_errqueue(g, g->flows[i].fd);
	gen_tracer_collect(g);
	pthread_mutex_lock(&g->lock);
	t = g->tally;
	late = g->late;
	g->late = late == &g->hists[0] ? &g->hists[1] : &g->hists[0];
	for (int i = 0; i < g->nflows; i++)
		snd += gen_flow_snd_drops(g, &g->flows[i]);
	pthread_mutex_unlock(&g->lock);

	r.start = (g->prev_ns - g->t0) / 1e9;
	r.end = (now - g->t0) / 1e9;
	r.dgrams = t.accepted - g->prev.accepted;
	r.bytes = t.bytes - g->prev.bytes;
	r.slots = t.slots - g->prev.slots;
	r.missed = t.missed - g->prev.missed;
	r.dgrams_paced = g->o.max ? 0 : t.dgrams - g->prev.dgrams;
	r.burst_dgrams = t.burst_dgrams - g->prev.burst_dgrams;
	for (int i = 0; i < RF_MAX; i++) {
		r.refused[i] = t.refused[i] - g->prev.refused[i];
		r.refused_all += r.refused[i];
	}
	r.snd_drops = snd - g->prev_snd_drops;
	r.icmp = gen_icmp_total(g) - g->prev_icmp;
	r.late = late;
	gen_report__interval(g, &r);
	hist__merge(&g->late_all, late);
	hist__reset(late);
	g->prev = t;
	g->prev_snd_drops = snd;
	g->prev_icmp = gen_icmp_total(g);
	g->prev_ns = now;
}

/*
 * Has the sink gone mid-run? Between READY and the LEDGER it sends
 * nothing unless it ends the run (an ERROR saying why, then it closes);
 * killed, its kernel closes the connection (EOF) or resets it. true, with
 * why in g->sink_gone; false while it is there (or without the channel).
 */
static bool sink_gone(struct gen *g)
{
	struct ctl_msg m;
	ssize_t n;
	char c;
	int err;

	if (g->ctl < 0 || g->sink_gone[0])
		return g->sink_gone[0];
	n = recv(g->ctl, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return false;
	if (n < 0) {
		snprintf(g->sink_gone, sizeof(g->sink_gone), "the control channel failed (%s)",
			 strerror(errno));
		return true;
	}
	if (n == 0) {
		snprintf(g->sink_gone, sizeof(g->sink_gone),
			 "closed the control channel (it stopped or was killed)");
		return true;
	}
	err = ctl_recv(g->ctl, &m, CTL_MIDRUN_MS);
	if (!err && !strcmp(m.type, "ERROR"))
		snprintf(g->sink_gone, sizeof(g->sink_gone), "ended the run: %s",
			 ctl_msg__get(&m, "msg") ?: "(no reason given)");
	else if (!err)
		snprintf(g->sink_gone, sizeof(g->sink_gone), "sent %s mid-run", m.type);
	else
		snprintf(g->sink_gone, sizeof(g->sink_gone), "the control channel failed (%s)",
			 err == -ECONNRESET ? "closed mid-message" : strerror(-err));
	ctl_msg__free(&m);
	return true;
}

/*
 * The reporter thread: an interval report at t0 + k * interval until
 * done; between them, every CTL_WATCH_NS, a look at the control channel:
 * a sink gone stops the sender (as a write error does).
 */
static void *reporter(void *arg)
{
	struct gen *g = arg;
	uint64_t step = (uint64_t)(g->o.interval * 1e9), tick = g->t0 + step;

	pthread_mutex_lock(&g->lock);
	while (!g->done) {
		uint64_t wake = tick, now = now_ns();

		if (g->ctl >= 0 && !g->sink_gone[0] && now + CTL_WATCH_NS < wake)
			wake = now + CTL_WATCH_NS;
		struct timespec ts = { .tv_sec = wake / 1000000000ull,
				       .tv_nsec = wake % 1000000000ull };

		pthread_cond_timedwait(&g->cond, &g->lock, &ts);
		if (g->done)
			break;
		if (g->ctl >= 0 && !g->sink_gone[0]) {
			bool gone;

			/* not under the lock: the sender commits its slots meanwhile */
			pthread_mutex_unlock(&g->lock);
			gone = sink_gone(g);
			if (gone)
				pthread_kill(g->sender_thread, SIGTERM);
			pthread_mutex_lock(&g->lock);
		}
		now = now_ns();
		if (now < tick)
			continue;
		pthread_mutex_unlock(&g->lock);
		gen_end_interval(g, now);
		pthread_mutex_lock(&g->lock);
		tick += step;
		if (tick <= now) /* a stopped process: no flurry of empty intervals */
			tick = now + step;
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}
/* Start the reporter with SIGINT and SIGTERM blocked: they must reach
 * the sender, whose sleeps they end. */
int gen_start_reporter(struct gen *g, pthread_t *th)
{
	sigset_t block, old;
	int err;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	err = pthread_create(th, NULL, reporter, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

void gen_stop_reporter(struct gen *g, pthread_t th)
{
	pthread_mutex_lock(&g->lock);
	g->done = true;
	pthread_cond_signal(&g->cond);
	pthread_mutex_unlock(&g->lock);
	pthread_join(th, NULL);
}
