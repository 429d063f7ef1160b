// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop gen's sender thread: wait for each slot (pace.c), number its
 * datagrams and hand them over in one sendmmsg (or GSO sends), count what
 * the kernel accepted and refused; then the flows' closing datagrams.
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "gen_internal.h"
#include "pace.h"
#include "udpgen.h"
#include "util.h"

#define LAST_TRIES 5            /* a refused LAST datagram is numbered anew, this often */
#define LAST_COPIES 2           /* --no-control: each closing datagram goes 1 + this many times */
#define GEN_STALL_NS 500000ull  /* lateness beyond this (and a period) is a stall: slots skipped */

/* A refusal after which the kernel had built an skb and freed it (qdisc,
 * netfilter...): the tracer saw that drop too. RF_UNKNOWN counts as one
 * (see partial_refusal). */
static bool refusal_has_skb(enum refusal r)
{
	return r == RF_ENOBUFS || r == RF_EPERM || r == RF_UNKNOWN;
}

/* The outcome of one slot, committed to the shared counts at once. */
struct slot_result {
	uint64_t numbered, accepted;
	uint64_t refused[RF_MAX];
	int other_errno;
};

static enum refusal refusal_of(int e)
{
	switch (e) {
	case ENOBUFS: return RF_ENOBUFS;
	case EAGAIN: return RF_EAGAIN;
	case EPERM: return RF_EPERM;
	case ECONNREFUSED: return RF_ECONNREFUSED;
	}
	return RF_OTHER;
}

/*
 * Why the message a sendmmsg stopped at was refused: the call returns the
 * count sent before it and drops the error. A paced send (MSG_DONTWAIT)
 * is refused EAGAIN, with no skb built, when the socket's send queue
 * (SIOCOUTQ: sk_wmem_alloc) is at or above its SO_SNDBUF as the kernel
 * allocates; after the refusal the queue only shrinks (nothing else sends
 * on this socket, and a refused skb is freed at once), so a queue still
 * at or above SO_SNDBUF now was there then: no skb was built, for
 * certain, and the refusal was EAGAIN (or, were an ICMP error pending on
 * the socket, which the kernel reports first, ECONNREFUSED: no skb
 * either). Below it, the queue may have drained since, or the cause was
 * another (ENOBUFS or EPERM with an skb, an ICMP error without): unknown,
 * counted as one the tracer saw, so the silent drops may be short by up
 * to as many (the summary says how many). Fragmented datagrams stay
 * unknown: fragments of the refused one may still be queued. Blocking
 * sends never see EAGAIN.
 */
static enum refusal partial_refusal(const struct gen *g, const struct flow *f,
				    int send_flags)
{
	int queued = 0;

	if (!(send_flags & MSG_DONTWAIT) || f->sndbuf <= 0 ||
	    !g->mtu_payload || g->o.size > g->mtu_payload)
		return RF_UNKNOWN;
	if (ioctl(f->fd, SIOCOUTQ, &queued) || queued < f->sndbuf)
		return RF_UNKNOWN;
	return RF_EAGAIN;
}

/*
 * The n datagrams of one slot to flow f, in one sendmmsg (a message per
 * datagram, or per GSO send of up to g->segs). Each datagram is tried
 * once: a refused message's datagrams keep their sequence numbers and
 * count as refused, and the rest of the batch still goes. `flags` ends
 * in the last datagram's header (UG_F_LAST), and `total` in every one.
 */
static void send_batch(struct gen *g, struct flow *f, uint64_t n, uint64_t sched,
		       uint16_t last_flags, uint64_t total, int send_flags,
		       uint64_t *t_send, struct slot_result *r)
{
	int nmsgs = 0, first = 0;
	int msg_dgrams[GEN_MAX_BURST];
	uint64_t d = 0;
	uint64_t t;

	memset(r, 0, sizeof(*r));
	for (uint64_t i = 0; i < n; i++) {
		struct ug_hdr *h = &g->hdrs[i];

		h->magic = htobe32(UG_MAGIC);
		h->version = htobe16(UG_VERSION);
		h->flags = htobe16(i == n - 1 ? last_flags : 0);
		h->run = htobe32(g->run);
		h->flow = htobe32((uint32_t)(f - g->flows));
		h->seq = htobe64(f->seq + i);
		h->sched_ns = htobe64(sched);
		h->total = htobe64(total);
	}
	/* --reorder: a multiple of N trades places with the datagram after it
	 * (never with a closing one, which must stay the flow's last) */
	for (uint64_t i = 0; g->o.reorder && i + 1 < n; i++)
		if ((f->seq + i) % g->o.reorder == 0 && !(last_flags && i + 2 == n)) {
			uint64_t a = g->hdrs[i].seq;

			g->hdrs[i].seq = g->hdrs[i + 1].seq;
			g->hdrs[i + 1].seq = a;
			i++;
		}
	/* messages: each datagram is its header, then the shared filler */
	while (d < n) {
		int k = (int)(n - d < (uint64_t)g->segs ? n - d : (uint64_t)g->segs);
		struct iovec *iov = &g->iov[2 * d];

		for (int i = 0; i < k; i++) {
			iov[2 * i] = (struct iovec){ &g->hdrs[d + i], UG_HDR_LEN };
			iov[2 * i + 1] = (struct iovec){ g->filler, g->o.size - UG_HDR_LEN };
		}
		g->msgs[nmsgs] = (struct mmsghdr){ .msg_hdr = {
			.msg_iov = iov, .msg_iovlen = 2 * k } };
		msg_dgrams[nmsgs++] = k;
		d += k;
	}
	t = now_ns();
	for (uint64_t i = 0; i < n; i++)
		g->hdrs[i].sent_ns = htobe64(t);
	*t_send = t;
	while (first < nmsgs) {
		int s = sendmmsg(f->fd, g->msgs + first, nmsgs - first, send_flags);
		enum refusal why;

		if (s < 0 && errno == EINTR) {
			if (gen_stop_signal)
				break; /* not refused: interrupted, and not numbered */
			continue;
		}
		if (s < 0) {
			why = refusal_of(errno);
			if (why == RF_OTHER && !r->other_errno)
				r->other_errno = errno;
		} else {
			for (int i = 0; i < s; i++) {
				r->accepted += msg_dgrams[first + i];
				r->numbered += msg_dgrams[first + i];
			}
			first += s;
			if (first == nmsgs)
				break;
			/* a blocking send cut short by a signal: not a refusal */
			if (gen_stop_signal && !(send_flags & MSG_DONTWAIT))
				break;
			/* message `first` failed; sendmmsg does not say why */
			why = partial_refusal(g, f, send_flags);
		}
		r->refused[why] += msg_dgrams[first];
		r->numbered += msg_dgrams[first];
		first++;
	}
}

/* Commit a slot's outcome to the shared counts. */
static void commit(struct gen *g, struct flow *f, const struct slot_result *r,
		   const struct pace *p, uint64_t late, bool record_late)
{
	pthread_mutex_lock(&g->lock);
	f->seq += r->numbered;
	f->accepted += r->accepted;
	g->tally.numbered += r->numbered;
	if (p) {
		g->tally.accepted += r->accepted;
		g->tally.bytes += r->accepted * g->o.size;
	} else {
		/* gen_send_last's: outside the schedule, so not in the rates */
		g->tally.closing += r->accepted;
	}
	for (int i = 0; i < RF_MAX; i++) {
		g->tally.refused[i] += r->refused[i];
		f->refused += r->refused[i];
		if (refusal_has_skb(i))
			f->refused_skb += r->refused[i];
	}
	if (r->other_errno && !g->other_errno)
		g->other_errno = r->other_errno;
	if (p) {
		g->tally.slots = p->slots;
		g->tally.missed = p->missed;
		g->tally.reanchors = p->reanchors;
		g->tally.dgrams = p->dgrams;
		g->tally.burst_dgrams = p->burst_dgrams;
	}
	if (record_late)
		hist__add(g->late, late);
	pthread_mutex_unlock(&g->lock);
}

/*
 * The sender: wait for each slot, send its batch, count. Paced sends do
 * not block (MSG_DONTWAIT): a full send buffer is a refusal (EAGAIN), not
 * a stall that would shift the schedule; unpaced ones block, which is
 * their back-pressure. Returns when the run is over or stopped.
 */
void gen_run_sender(struct gen *g)
{
	const struct gen_opts *o = &g->o;
	bool paced = !o->max;
	int send_flags = paced ? MSG_DONTWAIT : 0;
	uint64_t end = o->count ? UINT64_MAX : g->t0 + (uint64_t)(o->duration * 1e9);
	uint64_t numbered = 0, slot_no = 0;
	struct pace p;

	/* pace__init cannot fail: plan() checked the period */
	pace__init(&p, g->period_ns, g->t0, o->catch_up);
	/* at a high rate this CPU's own transmit softirq makes hiccups of a
	 * few slots: made up in order, only a longer delay is a stall */
	pace__set_stall(&p, GEN_STALL_NS);
	g->t_end = g->t0;
	while (!gen_stop_signal) {
		struct pace_slot s;
		struct slot_result r;
		uint64_t now, n, t_send, late;
		struct flow *f;
		uint16_t flags = 0;

		if (o->count && numbered >= o->count)
			break;
		if (paced) {
			uint64_t due = pace__due(&p);

			if (due >= end) {
				/* the run lasts --duration, even past its last slot */
				pace__wait(&p, &pace_clock_monotonic, end, &gen_stop_signal);
				break;
			}
			now = pace__wait(&p, &pace_clock_monotonic, due, &gen_stop_signal);
			if (gen_stop_signal)
				break;
		} else {
			now = now_ns();
			if (now >= end)
				break;
		}
		pace__take(&p, now, &s);
		f = &g->flows[slot_no % g->nflows];
		n = o->burst;
		if (o->count && o->count - numbered < n)
			n = o->count - numbered;
		if (f->total && f->seq + n >= f->total)
			flags = UG_F_LAST;
		send_batch(g, f, n, s.sched, flags, f->total, send_flags, &t_send, &r);
		if (!r.numbered)
			break; /* interrupted before anything went */
		late = pace__sent(&p, &s, t_send, r.numbered);
		if (flags && r.numbered == n)
			f->last_sent = true;
		commit(g, f, &r, &p, late, paced);
		g->last_sched = s.sched;
		numbered += r.numbered;
		slot_no++;
	}
	g->t_end = now_ns();
}

/*
 * --no-control: the copies of flow f's closing datagram, just handed over
 * (g->hdrs[0]): the very same bytes, LAST_COPIES times, back to back, so
 * that one lost datagram does not leave the sink without the flow's total.
 * They go from a socket of their own (opened at the first need), so that
 * neither a refusal nor a drop the tracer sees of a copy enters the
 * flow's counts: only the numbered datagrams do. Accepted copies are
 * counted apart (copies); a refused one is not retried.
 */
static void send_copies(struct gen *g)
{
	struct iovec iov[2] = {
		{ &g->hdrs[0], UG_HDR_LEN },
		{ g->filler, g->o.size - UG_HDR_LEN },
	};
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

	if (g->copy_fd == -1) {
		int fd = socket(g->dst.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);

		if (fd < 0 || connect(fd, (struct sockaddr *)&g->dst, g->dstlen)) {
			fprintf(stderr, WHO ": warning: no socket for the closing datagrams' copies (%s): each goes once\n",
				strerror(errno));
			if (fd >= 0)
				close(fd);
			g->copy_fd = -2; /* said once */
			return;
		}
		g->copy_fd = fd;
	}
	if (g->copy_fd < 0)
		return;
	for (int i = 0; i < LAST_COPIES; i++) {
		ssize_t n;

		do {
			n = sendmsg(g->copy_fd, &mh, MSG_DONTWAIT);
		} while (n < 0 && errno == EINTR);
		if (n >= 0) {
			pthread_mutex_lock(&g->lock);
			g->tally.copies++;
			pthread_mutex_unlock(&g->lock);
		}
	}
}

/*
 * Close each flow at the sink: a datagram with UG_F_LAST and total =
 * seq + 1 (what --no-control relies on; with the control channel it is
 * the same datagram the header promises). With --count it went with the
 * flow's last slot; stopped early or with --duration it goes now, once
 * the send queues have drained. A refused one is numbered anew a few
 * times, 10 ms apart: without it the sink would wait for more. Without
 * the control channel it is the only datagram with the flow's total: it
 * goes 1 + LAST_COPIES times (send_copies).
 */
void gen_send_last(struct gen *g)
{
	gen_wait_outq(g, 1000000000ull);
	for (int i = 0; i < g->nflows; i++) {
		struct flow *f = &g->flows[i];

		if (f->last_sent || (g->o.count && !f->total))
			continue;
		for (int tries = 0; tries < LAST_TRIES && !f->last_sent; tries++) {
			struct slot_result r;
			uint64_t t;

			if (tries)
				usleep(10000);
			send_batch(g, f, 1, now_ns(), UG_F_LAST, f->seq + 1, MSG_DONTWAIT, &t, &r);
			commit(g, f, &r, NULL, 0, false);
			f->last_sent = r.accepted == 1;
		}
		if (f->last_sent && g->o.no_control)
			send_copies(g);
		if (!f->last_sent)
			fprintf(stderr, WHO ": warning: flow %d: the kernel refused its closing datagram %d times: %s\n",
				i, LAST_TRIES, g->ctl >= 0 ? "the sink learns its end from DONE"
							   : "the sink may not see this flow end");
	}
}

/* Wait until the kernel has let go of every datagram (SIOCOUTQ 0): no
 * drop of ours can happen after that, so the tracer's last count is final. */
void gen_wait_outq(struct gen *g, uint64_t max_ns)
{
	uint64_t until = now_ns() + max_ns;

	for (;;) {
		int busy = 0;

		for (int i = 0; i < g->nflows && !busy; i++) {
			int q = 0;

			if (!ioctl(g->flows[i].fd, SIOCOUTQ, &q) && q > 0)
				busy = 1;
		}
		if (!busy || now_ns() >= until)
			return;
		usleep(1000);
	}
}
