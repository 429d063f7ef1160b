// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop sink's loop: one poll over the UDP socket, the control
 * channel's listener and its peer; the datagrams read (recvmmsg) and
 * tracked; the deliberate slow reader (--read-delay, --stall); when a
 * run's traffic has stopped, its end; the progress lines and the idle
 * baselines on the interval's tick.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include "cli.h"
#include "hist.h"
#include "seqtrack.h"
#include "sink_internal.h"
#include "udpgen.h"
#include "util.h"
#include "xdpstamp.h"

#define INFLIGHT_QUIET_NS (300 * NS_PER_MS) /* after the end: this long without arrivals */
#define INFLIGHT_MAX_NS (2 * NS_PER_S)  /* ... and never longer than this */
#define ENDING_POLL_MS 20
#define DRAIN_MAX 10000000 /* datagrams drained at a run's end, at most */

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / NS_PER_S, .tv_nsec = ns % NS_PER_S };

	while (!sink_stop_signal && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Datagrams waiting for their other fragments in this netns (FRAG inuse
 * in /proc/net/sockstat): still in flight, until reassembled or timed
 * out (net.ipv4.ipfrag_time) into a drop the tracer sees.
 */
static uint64_t frags_pending(void)
{
	static const char *const files[] = { "/proc/self/net/sockstat",
					      "/proc/self/net/sockstat6" };
	unsigned long long inuse, n = 0;
	char line[256];

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		FILE *f = fopen(files[i], "r");

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if ((sscanf(line, "FRAG: inuse %llu", &inuse) == 1 ||
			     sscanf(line, "FRAG6: inuse %llu", &inuse) == 1))
				n += inuse;
		fclose(f);
	}
	return n;
}

/* Is the reader in a deliberate stall now, and until when? */
static bool stalled(const struct sink *s, uint64_t now, uint64_t *until)
{
	uint64_t every, stall, pos;

	if (!s->o->every_ms)
		return false;
	every = (uint64_t)(s->o->every_ms * NS_PER_MS);
	stall = (uint64_t)(s->o->stall_ms * NS_PER_MS);
	/* each period: read for every - stall, then stall */
	pos = (now - s->t0) % every;
	if (pos < every - stall)
		return false;
	if (until)
		*until = now + (every - pos);
	return true;
}

/* ---- reading --------------------------------------------------------- */

static uint64_t be64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be64toh(v);
}

static uint32_t be32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

/* One datagram; unread: drained at the end, not read by the application. */
static void on_datagram(struct sink *s, const uint8_t *p, size_t len,
			struct msghdr *mh, uint64_t read_ns, double read_wall,
			bool unread)
{
	struct run *r = &s->r;
	uint32_t run, flow;
	uint64_t seq, total;
	uint16_t flags;
	int v;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SO_RXQ_OVFL && c->cmsg_len >= CMSG_LEN(sizeof(uint32_t))) {
			memcpy(&r->ovfl_last, CMSG_DATA(c), sizeof(uint32_t));
			r->ovfl_seen = true;
		} else if (c->cmsg_type == SO_TIMESTAMPNS &&
			   c->cmsg_len >= CMSG_LEN(sizeof(struct timespec)) && !unread) {
			struct timespec ts;
			double wait;

			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			/* the stamp is CLOCK_REALTIME: compared with the wall
			 * clock read beside the monotonic one at the read */
			wait = read_wall - ((double)ts.tv_sec + ts.tv_nsec / 1e9);
			if (r->active && wait >= 0)
				hist__add(&r->qwait, (uint64_t)(wait * 1e9));
		}
	}
	if (len < UG_HDR_LEN || be32(p) != UG_MAGIC)
		goto foreign;
	run = be32(p + 8);
	flow = be32(p + 12);
	seq = be64(p + 16);
	total = be64(p + 40);
	memcpy(&flags, p + 6, 2);
	flags = ntohs(flags);
	/* gen never uses these: to XDP they mean any run and none */
	if (run == UG_RUN_ANY || run == UG_RUN_NONE)
		goto foreign;
	if (!r->active) {
		/* a straggler of the run that just ended is no new run */
		if (unread || (s->have_last_run && run == s->last_run))
			goto foreign;
		if (sink_run_start(s, run, false, 0, mh->msg_name, false)) {
			fprintf(stderr, "udpdrop sink: out of memory starting a run\n");
			sink_run_abort(s);
			goto foreign;
		}
	}
	if (run != r->id || (r->control && flow >= r->nflows))
		goto foreign;
	/*
	 * Drained at the end, but it passed XDP after XDP stopped counting
	 * the run (sink_run_finish): in none of XDP's counts, so in none of the
	 * ledger's either.
	 */
	if (unread && s->have_xdp && flow < UG_XDP_FLOWS &&
	    xdpstamp__uncounted(&s->xdp, flow, seq)) {
		r->after_end++;
		return;
	}
	if (!r->have_peer && mh->msg_name)
		sink_set_peer(r, mh->msg_name);
	v = seqtrack__add(&r->st, flow, seq, read_ns, unread ? SEQ_UNREAD : 0);
	if (v < 0)
		goto foreign; /* a flow id beyond what the sink tracks, or a
				 sequence number no sender reaches */
	r->data_ns = read_ns;
	/*
	 * Without control channel the datagrams carry their flow's total. A
	 * datagram's own total is above its sequence number (and not wildly
	 * so); once the flow's last datagram has brought it, it is final.
	 */
	if (!r->control && (total || (flags & UG_F_LAST)) && total > seq &&
	    total - seq <= SEQ_JUMP_MAX)
		seqtrack__set_total(&r->st, flow, total,
				    flags & UG_F_LAST ? SEQ_TOTAL_LAST : 0);
	/* not while draining: the stamps are looked up as they were spread */
	if (s->have_xdp && !unread && r->st.nflows > (1u << s->xdp.shift))
		xdpstamp__set_flows(&s->xdp, r->st.nflows);
	if (unread || v == SEQ_DUP || v == SEQ_STALE || v == SEQ_BEYOND)
		return;
	r->iv_read++;
	if (s->have_xdp) {
		uint64_t at;

		/*
		 * A tag names (flow, seq), not the run: a stamp older than the
		 * run's baseline is an earlier run's datagram of the same name.
		 */
		if (!xdpstamp__stamp(&s->xdp, flow, seq, &at) &&
		    at >= r->base.ns && at <= read_ns)
			hist__add(&r->lat, read_ns - at);
		else
			r->lat_unknown++;
	}
	return;
foreign:
	if (r->active)
		r->foreign++;
}

/* One recvmmsg; returns datagrams read, or a negative errno. */
static int read_batch(struct sink *s, int vlen, int flags, bool unread)
{
	struct timespec wall;
	uint64_t t;
	int n;

	for (int i = 0; i < vlen; i++) {
		s->iov[i] = (struct iovec){ s->bufs[i], HDR_BUF };
		s->msgs[i].msg_hdr = (struct msghdr){
			.msg_name = &s->from[i], .msg_namelen = sizeof(s->from[i]),
			.msg_iov = &s->iov[i], .msg_iovlen = 1,
			.msg_control = s->cbufs[i], .msg_controllen = CMSG_BUF,
		};
		s->msgs[i].msg_len = 0;
	}
	n = recvmmsg(s->ufd, s->msgs, vlen, flags | MSG_TRUNC | MSG_DONTWAIT, NULL);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
	t = now_ns();
	clock_gettime(CLOCK_REALTIME, &wall);
	for (int i = 0; i < n; i++) {
		struct msghdr *mh = &s->msgs[i].msg_hdr;
		size_t len = s->msgs[i].msg_len;

		if (len > HDR_BUF && !(mh->msg_flags & MSG_TRUNC))
			len = HDR_BUF;
		on_datagram(s, s->bufs[i], len, mh, t,
			    (double)wall.tv_sec + wall.tv_nsec / 1e9, unread);
	}
	if (!unread)
		s->reads_total += n;
	return n;
}

uint64_t sink_drain(struct sink *s)
{
	uint64_t n = 0;
	int got;

	/* bounded: a generator that keeps sending must not keep us here */
	while (n < DRAIN_MAX && (got = read_batch(s, BATCH, 0, true)) > 0)
		n += got;
	return n;
}

/* ---- the loop -------------------------------------------------------- */

/*
 * Has the run's traffic stopped arriving? Activity is a read, the XDP
 * count or the socket's queue moving. Polled every ENDING_POLL_MS while
 * a run ends, and every interval otherwise.
 */
static void note_activity(struct sink *s, uint64_t now, uint64_t reads_before)
{
	struct run *r = &s->r;
	uint32_t rmem;
	uint64_t xdp = sink_xdp_seen(s, sink_run_flows(r));

	sink_meminfo(s->ufd, &rmem, NULL);
	if (s->reads_total != reads_before || xdp != r->act_xdp || rmem != r->act_rmem)
		r->last_activity_ns = now;
	if (xdp != r->act_xdp)
		r->data_ns = now; /* XDP counts the run's datagrams only */
	/* a datagram in reassembly has arrived in part: wait for its fate */
	if (r->ending && frags_pending())
		r->last_activity_ns = now;
	r->act_xdp = xdp;
	r->act_rmem = rmem;
}

/* While idle: baselines from a quiet moment, for a run without control. */
static void idle_tick(struct sink *s)
{
	uint64_t xdp_total = 0;
	uint32_t rmem;

	sink_meminfo(s->ufd, &rmem, NULL);
	if (s->have_xdp) {
		struct ug_xdp_flow *f = s->xdp_now;

		/* a wildcard bind: addresses come and go; XDP follows them */
		xdpstamp__refresh_local(&s->xdp);

		if (!xdpstamp__read_flows(&s->xdp, f, UG_XDP_FLOWS))
			for (int i = 0; i < UG_XDP_FLOWS; i++)
				xdp_total += f[i].datagrams;
	}
	/* nothing read, nothing queued, nothing new at the interface */
	if (s->reads_total == s->idle_reads && !rmem &&
	    (!s->have_xdp || xdp_total == s->idle_xdp_total))
		sink_take_baseline(s, &s->idle);
	s->idle_reads = s->reads_total;
	s->idle_xdp_total = xdp_total;
}

int sink_serve(struct sink *s)
{
	struct sink_opts *o = s->o;
	uint64_t step = (uint64_t)(o->interval * NS_PER_S);
	uint64_t next_tick = s->t0 + step;
	uint64_t end = o->duration ? s->t0 + (uint64_t)(o->duration * NS_PER_S) : 0;
	int vlen = o->read_delay_us ? 1 : BATCH;
	int err = 0;

	while (!sink_stop_signal) {
		struct run *r = &s->r;
		struct pollfd pfd[3];
		uint64_t now = now_ns(), until = 0, wake = next_tick;
		bool stall = stalled(s, now, &until);
		int npfd = 0, timeout, n;
		uint64_t reads_before = s->reads_total;

		if (end && now >= end)
			break;
		if (stall && until < wake)
			wake = until;
		if (end && end < wake)
			wake = end;
		if (r->active && (r->ending || !r->control) &&
		    now + ENDING_POLL_MS * NS_PER_MS < wake)
			wake = now + ENDING_POLL_MS * NS_PER_MS;
		if (s->cfd >= 0 && sink_ctl_deadline(s) < wake)
			wake = sink_ctl_deadline(s);
		timeout = wake > now ? (int)((wake - now + NS_PER_MS - 1) / NS_PER_MS) : 0;

		int ui = -1, li, ci = -1;

		if (!stall) {
			ui = npfd;
			pfd[npfd++] = (struct pollfd){ .fd = s->ufd, .events = POLLIN };
		}
		li = npfd;
		pfd[npfd++] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
		if (s->cfd >= 0) {
			ci = npfd;
			pfd[npfd++] = (struct pollfd){ .fd = s->cfd, .events = POLLIN };
		}
		n = poll(pfd, npfd, timeout);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "udpdrop sink: poll: %s\n", strerror(errno));
			return -EXIT_FAIL;
		}
		if (n > 0 && ui >= 0 && (pfd[ui].revents & POLLIN)) {
			int got = read_batch(s, vlen, 0, false);

			if (got < 0) {
				fprintf(stderr, "udpdrop sink: recvmmsg: %s\n", strerror(-got));
				return -EXIT_FAIL;
			}
			if (o->read_delay_us && got)
				sleep_ns(o->read_delay_us * 1000ull * got);
		}
		/* the current peer before a new one: it may have just left */
		if (n > 0 && ci >= 0 && s->cfd >= 0 &&
		    (pfd[ci].revents & (POLLIN | POLLHUP | POLLERR))) {
			err = sink_ctl_input(s);
			if (err)
				return -EXIT_FAIL;
			if (o->one_off && s->runs_done)
				return 0;
		}
		if (n > 0 && (pfd[li].revents & POLLIN)) {
			err = sink_on_accept(s);
			if (err)
				return -EXIT_FAIL;
			if (o->one_off && s->runs_done)
				return 0;
		}

		now = now_ns();
		r = &s->r;
		if (s->cfd >= 0 && now >= sink_ctl_deadline(s)) {
			/* silent for CTL_IDLE_NS: gone, or never meant to talk */
			err = sink_ctl_drop(s, "the control channel was idle for 10 s",
				       "idle for 10 s: closing the control channel");
			if (err && err != -EPIPE)
				return -EXIT_FAIL;
			if (o->one_off && s->runs_done)
				return 0;
		}
		if (r->active) {
			if (s->reads_total != reads_before)
				r->last_activity_ns = now;
			if (r->ending || !r->control)
				note_activity(s, now, reads_before);
			/*
			 * A deliberate stall with datagrams waiting is not the
			 * traffic stopping (the queue may be full and still,
			 * while the sender goes on); with the queue empty it is.
			 */
			if (!r->ending && r->act_rmem && stalled(s, now, NULL)) {
				r->last_activity_ns = now;
				r->data_ns = now;
			}
			seqtrack__expire(&r->st, now);
			if (!r->control && !r->ending && seqtrack__complete(&r->st)) {
				r->ending = true;
				r->ending_ns = now;
				r->end_reason = "every flow's last datagram arrived";
			}
			if (!r->control && !r->ending &&
			    now - r->last_activity_ns >= LOSS_TIMEOUT_NS) {
				/* nothing for the loss timeout: no need to wait more */
				r->end_reason = "no datagrams for 2 s";
				err = sink_run_finish(s);
			} else if (r->ending &&
				   ((seqtrack__complete(&r->st) && !seqtrack__holes(&r->st)) ||
				    now - r->last_activity_ns >= INFLIGHT_QUIET_NS ||
				    now - r->ending_ns >= INFLIGHT_MAX_NS)) {
				err = sink_run_finish(s);
			}
			if (err && err != -EPIPE)
				return -EXIT_FAIL;
			if (o->one_off && s->runs_done)
				return 0;
		}
		if (now >= next_tick) {
			next_tick += step;
			if (next_tick < now)
				next_tick = now + step;
			sink_tracer_refresh(s);
			if (s->r.active) {
				/* an announced run's traffic, for its peer's idle timeout */
				if (s->r.control && !s->r.ending)
					note_activity(s, now, reads_before);
				err = sink_interval_line(s, now);
				if (err && err != -EPIPE) {
					fprintf(stderr, "udpdrop sink: write error on standard output: %s\n", strerror(-err));
					return -EXIT_FAIL;
				}
			} else {
				idle_tick(s);
			}
		}
	}
	/* Ctrl-C, SIGTERM or --duration: the current run's ledger as far as known */
	if (s->r.active) {
		if (!s->r.end_reason || !s->r.ending)
			s->r.end_reason = sink_stop_signal ? "the sink was stopped" : "--duration reached";
		err = sink_run_finish(s);
		if (err && err != -EPIPE)
			return -EXIT_FAIL;
	}
	return 0;
}
