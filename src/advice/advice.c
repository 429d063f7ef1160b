// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The advice engine (advice.h): per cause, what happened, the numbers
 * behind it, the change (with its value computed) and how to verify it.
 * The rules are published ones: Rick Jones and Andy Zhu, "Considerations
 * When Benchmarking UDP Bulk Flows"; Red Hat, "Tuning UDP connections"
 * (RHEL network tuning guide); M.J. Christensen and T. Richter, "Achieving
 * reliable UDP transmission at 10 Gb/s using BSD socket for data
 * acquisition systems". The helpers below reproduce their tables
 * (tests/unit/test_advice.c).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "advice.h"
#include "json.h"
#include "udpdrop.h"
#include "units.h"
#include "util.h"

/* ---- saturating arithmetic -------------------------------------------- */

/*
 * The inputs may come from a hostile or corrupt trace (UINT64_MAX bytes,
 * a zero span): every double that becomes an integer goes through d2u
 * (converting an out-of-range double is undefined behaviour), and the
 * integer arithmetic saturates instead of wrapping.
 */
static uint64_t d2u(double v, uint64_t max)
{
	if (!(v > 0)) /* NaN, negative, zero */
		return 0;
	if (v >= (double)max)
		return max;
	return (uint64_t)v < max ? (uint64_t)v : max;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* A UDP payload size as an integer: 0 for NaN or below, at most 65535 B. */
static uint64_t payload_u(double v)
{
	return d2u(v + 0.5, ADVICE_PAYLOAD_MAX);
}

/* ---- the rules as numbers --------------------------------------------- */

double advice__time_to_fill_ms(uint64_t buf_bytes, double bits_per_s)
{
	if (!(bits_per_s > 0))
		return 0;
	return buf_bytes * 8.0 / bits_per_s * 1e3;
}

double advice__message_loss(double p, unsigned fragments)
{
	if (p <= 0)
		return 0;
	if (p >= 1)
		return 1;
	return 1 - pow(1 - p, fragments);
}

static unsigned l3_header(int family)
{
	return family == AF_INET6 ? 40 : 20;
}

uint64_t advice__max_unfragmented(uint32_t mtu, int family)
{
	unsigned hdr = l3_header(family) + 8;

	return mtu > hdr ? mtu - hdr : 0;
}

unsigned advice__fragments(uint64_t payload, uint32_t mtu, int family)
{
	/* IPv6 fragments carry an 8-byte fragment header; each fragment's
	 * data but the last is a multiple of 8 */
	uint32_t hdr = l3_header(family) + (family == AF_INET6 ? 8 : 0);
	uint64_t per, total;

	if (payload > ADVICE_PAYLOAD_MAX)
		payload = ADVICE_PAYLOAD_MAX;
	total = payload + 8; /* the UDP header rides in the first */
	if (mtu <= hdr + 8)
		return 0;
	if (payload <= advice__max_unfragmented(mtu, family))
		return 1;
	per = (mtu - hdr) & ~7u;
	return (unsigned)((total + per - 1) / per);
}

uint64_t advice__sockbuf_effective(uint64_t request, uint64_t max, bool rcv)
{
	uint64_t v = request < max ? request : max;
	uint64_t min = rcv ? ADVICE_SOCK_MIN_RCVBUF : ADVICE_SOCK_MIN_SNDBUF;

	v = sat_mul(v, 2);
	return v > min ? v : min;
}

uint64_t advice__round_up(uint64_t v, uint64_t to)
{
	if (!to)
		return v;
	if (v > UINT64_MAX - (to - 1))
		return UINT64_MAX; /* saturated, not wrapped to 0 */
	return (v + to - 1) / to * to;
}

/* The power of two at or above v; UINT64_MAX past 2^63 (no such power). */
static uint64_t pow2_up(uint64_t v)
{
	uint64_t p = 1;

	if (v > UINT64_C(1) << 63)
		return UINT64_MAX;
	while (p < v)
		p <<= 1;
	return p;
}

/* One skb holding `frame` bytes (link header included): the data buffer,
 * with NET_SKB_PAD (64) headroom and skb_shared_info (320), rounded to
 * its kmalloc size, plus the struct sk_buff itself (256): SKB_TRUESIZE. */
static uint64_t skb_truesize(uint64_t frame)
{
	return sat_add(pow2_up(sat_add(frame, 64 + 320)), 256);
}

uint64_t advice__truesize_estimate(uint64_t payload, uint32_t mtu, int family)
{
	unsigned n;

	if (payload > ADVICE_PAYLOAD_MAX)
		payload = ADVICE_PAYLOAD_MAX;
	n = mtu ? advice__fragments(payload, mtu, family) : 1;
	if (n > 1) /* a reassembled datagram is charged for every fragment */
		return sat_mul(n, skb_truesize((uint64_t)mtu + 14));
	return skb_truesize(payload + 8 + l3_header(family) + 14);
}

double advice__ipid_wrap_s(double datagrams_per_s)
{
	return datagrams_per_s > 0 ? 65536.0 / datagrams_per_s : 0;
}

/* ---- text helpers ------------------------------------------------------ */

static void add(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t len, const char *fmt, ...)
{
	size_t o = strnlen(buf, len);
	va_list ap;

	if (o + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + o, len - o, fmt, ap);
	va_end(ap);
}

const char *advice__bytes(char *buf, size_t len, uint64_t v)
{
	char h[32];

	if (v < 65536) {
		snprintf(buf, len, "%llu B", (unsigned long long)v);
		return buf;
	}
	fmt_bytes(h, sizeof(h), v);
	snprintf(buf, len, "%llu B (%s)", (unsigned long long)v, h);
	return buf;
}

static const char *count(char *buf, size_t len, uint64_t v)
{
	fmt_count(buf, len, v);
	return buf;
}

/* "1.25 s", "13.9 ms": three significant digits, with the unit. */
static const char *secs(char *buf, size_t len, double s)
{
	fmt_ns(buf, (int)len, s * 1e9);
	return buf;
}

static const char *per_s(char *buf, size_t len, double v)
{
	if (v >= 100)
		snprintf(buf, len, "%.0f/s", v);
	else if (v >= 1)
		snprintf(buf, len, "%.1f/s", v);
	else
		snprintf(buf, len, "%.3g/s", v);
	return buf;
}

#define B(v) advice__bytes((char[64]){ 0 }, 64, (v))
#define N(v) count((char[32]){ 0 }, 32, (v))
#define S(v) secs((char[32]){ 0 }, 32, (v))
#define R(v) per_s((char[32]){ 0 }, 32, (v))

static const char *bitrate(char *buf, size_t len, double bps)
{
	fmt_bitrate(buf, (int)len, bps);
	return buf;
}
#define BPS(v) bitrate((char[32]){ 0 }, 32, (v))

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* "297 datagrams dropped over 3.00 s (99.0/s on average)" and the burst. */
static void drops_line(const struct advice_input *in, char *e, size_t len)
{
	add(e, len, "%s %s", N(in->drops), plural(in->drops, "datagram", "datagrams"));
	if (in->avg_size.known)
		add(e, len, " of ~%.0f B", in->avg_size.v);
	if (in->skbs != in->drops)
		add(e, len, " (%s skb events)", N(in->skbs));
	add(e, len, " dropped");
	if (in->span_s > 0)
		add(e, len, " over %s (%s on average)", S(in->span_s), R(in->drops / in->span_s));
	if (in->burst.known && in->burst.v && in->burst_s > 0) {
		const char *what = in->kernel_windows ? "window (the kernel's drop windows)"
				   : in->burst_window ? "window (per-drop events)"
				   : in->burst_episode ? "run of sample intervals with drops"
				   : in->live ? "refresh interval" : "snapshot interval";

		if (in->burst.v == in->drops)
			add(e, len, ", all of them in one %s %s (%s)", S(in->burst_s), what,
			    R(in->burst.v / in->burst_s));
		else
			add(e, len, ", at most %s in one %s %s (%s)", N(in->burst.v),
			    S(in->burst_s), what, R(in->burst.v / in->burst_s));
	}
	add(e, len, ". ");
}

/* Why a burst is per snapshot interval, when it is: the buffer advice
 * sizes for it, so the reader must know how coarse it is. */
static void burst_note(const struct advice_input *in, char *e, size_t len)
{
	if (!in->burst.known || !in->burst.v || in->burst_s <= 0 || in->burst_window ||
	    in->burst_episode)
		return;
	if (in->live) {
		add(e, len, "The burst is per refresh interval (%s): the drops may have come in a "
		    "shorter burst. ", S(in->burst_s));
		return;
	}
	if (in->event_drops.known && in->event_drops.v < in->drops)
		add(e, len, "Per-drop events cover only %s of these drops (the rest were shed or not "
		    "recorded), too few to time the burst: it is per snapshot interval (%s, record -i), "
		    "so the drops may have come in a shorter burst. ", N(in->event_drops.v),
		    S(in->burst_s));
	else
		add(e, len, "The trace holds no per-drop events, so the burst is per snapshot interval "
		    "(%s, record -i): the drops may have come in a shorter burst, and a longer interval "
		    "makes it larger (record with events to time it). ", S(in->burst_s));
}

static void trim(char *s)
{
	size_t n = strlen(s);

	while (n && s[n - 1] == ' ')
		s[--n] = 0;
}

/* The change's setting and value, for scripts (advice_finding). */
static void set_value(struct advice_finding *f, const char *setting, uint64_t v)
{
	snprintf(f->setting, sizeof(f->setting), "%s", setting);
	f->has_value = true;
	f->value = v;
}

/* ---- where a sysctl takes effect -------------------------------------- */

const char *advice__scope_name(enum advice_scope s)
{
	return s == ADVICE_SCOPE_HOST ? "host-wide" : s == ADVICE_SCOPE_NETNS ? "per-netns" : NULL;
}

const struct advice_sysctl_scope *advice__scope_of(const struct advice_where *w, const char *name)
{
	for (int i = 0; w && i < w->n && i < ADVICE_SCOPES; i++)
		if (w->s[i].name[0] && !strcmp(w->s[i].name, name))
			return &w->s[i];
	return NULL;
}

/* "NAME=VALUE", quoted for the shell when the value has spaces (udp_mem) */
static void sysctl_assign(char *buf, size_t len, const char *name, const char *value)
{
	snprintf(buf, len, strchr(value, ' ') ? "%s='%s'" : "%s=%s", name, value);
}

bool advice__sysctl_cmd(const struct advice_where *w, const char *name, const char *value,
			char *cmd, size_t len, bool *on_host)
{
	const struct advice_sysctl_scope *sc = advice__scope_of(w, name);
	char as[160];

	sysctl_assign(as, sizeof(as), name, value);
	*on_host = false;
	snprintf(cmd, len, "sysctl -w %s", as);
	if (!sc || sc->scope == ADVICE_SCOPE_UNKNOWN)
		return true; /* not tested: the plain command, as before */
	if (sc->scope == ADVICE_SCOPE_HOST) {
		/* one value for all: written in the initial netns, where
		 * udpdrop runs when the netns viewed can write it (it is
		 * the initial one), else on the host: entering another
		 * netns (nsenter -t 1 -n) does not help from a container,
		 * whose pid 1 is its own */
		*on_host = !sc->settable;
		return true;
	}
	/* per-netns: in the netns viewed */
	if (!sc->settable)
		return false;
	if (w->self)
		return true;
	if (!w->enter[0])
		return false;
	snprintf(cmd, len, "%ssysctl -w %s", w->enter, as);
	return true;
}

void advice__sysctl_phrase(const struct advice_where *w, const char *name, const char *value,
			   char *buf, size_t len)
{
	const struct advice_sysctl_scope *sc = advice__scope_of(w, name);
	char cmd[320], as[160];
	bool on_host, ok = advice__sysctl_cmd(w, name, value, cmd, sizeof(cmd), &on_host);

	sysctl_assign(as, sizeof(as), name, value);
	if (!sc || sc->scope == ADVICE_SCOPE_UNKNOWN) {
		add(buf, len, "%s", cmd);
		return;
	}
	if (sc->scope == ADVICE_SCOPE_HOST && on_host) {
		add(buf, len, "on the host (%s is host-wide: one value for every netns, read-only in "
		    "netns %s; no container can set it): %s", name, w->label, cmd);
		return;
	}
	if (sc->scope == ADVICE_SCOPE_HOST) {
		add(buf, len, "%s (host-wide: every netns gets it)", cmd);
		return;
	}
	if (ok)
		add(buf, len, "%s (per-netns: netns %s only", cmd, w->label);
	else if (sc->settable)
		add(buf, len, "in netns %s: %s (per-netns: that netns only", w->label, cmd);
	else
		add(buf, len, "in netns %s, where it is read-only from here: %s (per-netns", w->label,
		    cmd);
	if (!w->self || !ok)
		add(buf, len, "; for a container set it at its start: docker run --sysctl %s, or "
		    "Kubernetes securityContext.sysctls (an unsafe sysctl: the kubelet must allow it)",
		    as);
	add(buf, len, ")");
}

/*
 * The change's setting, a sysctl, and its value (for scripts), with its
 * scope and the command that applies it (value_text: the value as the
 * command writes it; NULL: v).
 */
static void set_sysctl(const struct advice_input *in, struct advice_finding *f, const char *name,
		       uint64_t v, const char *value_text)
{
	const struct advice_sysctl_scope *sc = advice__scope_of(in->where, name);
	char num[24];
	const char *sn = sc ? advice__scope_name(sc->scope) : NULL;

	set_value(f, name, v);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	snprintf(f->setting_scope, sizeof(f->setting_scope), "%s", sn ? sn : "");
	if (!advice__sysctl_cmd(in->where, name, value_text ? value_text : num, f->setting_command,
				sizeof(f->setting_command), &f->setting_on_host))
		f->setting_command[0] = 0;
}

/* The phrase for sysctl `name` = v in the advice's text (advice__sysctl_phrase). */
static void add_sysctl(const struct advice_input *in, char *buf, size_t len, const char *name,
		       uint64_t v)
{
	char num[24];

	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	advice__sysctl_phrase(in->where, name, num, buf, len);
}

/* The record command for the netns viewed, for a live view's "record,
 * then report" (an unnamed netns: -N takes its inode, but a bare number
 * in the advice reads as a mistake; record -a finds it too). */
static const char *record_cmd(const struct advice_input *in, char *buf, size_t len)
{
	if (in->where && !in->where->self && in->where->name[0])
		snprintf(buf, len, "udpdrop record -N %s -d 30", in->where->name);
	else
		snprintf(buf, len, "udpdrop record -d 30");
	return buf;
}
#define RECORD_CMD(in) record_cmd((in), (char[128]){ 0 }, 128)

/* Is sysctl `name` host-wide and not settable in the netns viewed? */
static bool host_only(const struct advice_input *in, const char *name)
{
	const struct advice_sysctl_scope *sc = advice__scope_of(in->where, name);

	return sc && sc->scope == ADVICE_SCOPE_HOST && !sc->settable;
}

static struct advice_finding *next(struct advice_finding *out, int max, int *n,
				   enum cause c)
{
	struct advice_finding *f;

	if (*n >= max)
		return NULL;
	f = &out[(*n)++];
	memset(f, 0, sizeof(*f));
	f->cause = c;
	return f;
}

/* The arrival rate in bit/s: known, or the worst interval's drops (a lower
 * bound); 0 if neither. *bound set when it is the lower bound. */
static double arrival_bits(const struct advice_input *in, double payload, bool *bound)
{
	*bound = false;
	if (in->rate_Bps.known && in->rate_Bps.v > 0)
		return in->rate_Bps.v * 8;
	if (in->rate_dgps.known && in->rate_dgps.v > 0 && payload > 0)
		return in->rate_dgps.v * payload * 8;
	if (payload > 0 && in->burst.known && in->burst.v && in->burst_s > 0) {
		*bound = true;
		return in->burst.v / in->burst_s * payload * 8;
	}
	if (payload > 0 && in->drops && in->span_s > 0) {
		*bound = true;
		return in->drops / in->span_s * payload * 8;
	}
	return 0;
}

/* ---- rcvbuf ------------------------------------------------------------ */

/*
 * What the rcvbuf rule decides, shared by the finding (rcvbuf) and the
 * hint (hint_rcvbuf): the truesize, the buffer for the worst burst, and
 * whether to pace the sender instead of growing the buffer.
 *
 * The buffer has room for twice the worst burst seen (ADVICE_BURST_MARGIN):
 * a buffer sized for exactly that burst drops again at the next, slightly
 * longer one (a 100 ms stall at 1000/s drops 88 to 91 datagrams, run to
 * run), so following the advice would not reliably remove the drops.
 */
struct rcvbuf_plan {
	double payload;   /* bytes per datagram, 0 unknown */
	double ts;        /* truesize per datagram (given or estimated), 0 unknown */
	bool ts_est;      /* ts is the estimate */
	uint64_t rb;      /* rcvbuf, 0 unknown */
	bool large;       /* rb is already very large */
	bool have_burst;  /* a burst to size a buffer for */
	double need_d;    /* rcvbuf + margin x burst x truesize, in double */
	bool sustained;   /* drops in most intervals: a steady overload */
	bool too_big;     /* the buffer for the burst would pass the cap */
	bool pace;        /* pace the sender: a bigger buffer will not help */
	int set;          /* the app set SO_RCVBUF: 1, did not: 0, unknown: -1 */
	bool not_reading; /* nothing read the socket while it dropped */
	bool drained;     /* its queue was seen below half its buffer at a look:
			     the reader caught up between drops (bursts) */
	bool sparse;      /* drops in fewer than 3/4 of the fine windows of
			     their stretch (bursts) */
	double drained_dgps; /* what the reader took while it dropped (its own
				deliveries per second), 0 unknown */
	uint64_t pace_dgps;  /* pace: the rate to pace the sender to (0: unknown) */
	uint64_t need;    /* have_burst && !pace: the buffer for the worst burst
			     with its margin, rounded up to 4 KiB (else 0) */
	uint64_t fallback; /* !have_burst && !pace: the buffer to raise to, no
			      burst known to size it by: 8 MiB (Jones and
			      Zhu's starting point), 16 MiB from 8 MiB on */
};

static struct rcvbuf_plan rcvbuf_plan(const struct advice_input *in)
{
	bool ts_known = in->truesize.known && in->truesize.v > 0 && isfinite(in->truesize.v);
	struct rcvbuf_plan p;

	p.payload = in->avg_size.known ? (double)payload_u(in->avg_size.v) : 0;
	p.ts_est = !ts_known;
	p.ts = ts_known ? in->truesize.v
	       : p.payload > 0 ? (double)advice__truesize_estimate((uint64_t)p.payload,
								   in->mtu.known ? in->mtu.v : 0,
								   in->family)
			       : 0;
	p.rb = in->rcvbuf.known ? in->rcvbuf.v : 0;
	p.large = p.rb >= ADVICE_LARGE_RCVBUF;
	p.have_burst = in->burst.known && in->burst.v && p.ts > 0 && p.rb;
	/* what a buffer that absorbs twice the worst burst must hold, in
	 * double: a hostile burst x truesize does not fit an integer */
	_Static_assert(ADVICE_BURST_MARGIN == 2, "the advice's text says twice");
	p.need_d = p.have_burst ? (double)p.rb + ADVICE_BURST_MARGIN * (double)in->burst.v * p.ts : 0;
	/*
	 * The queue seen below half the buffer at one look or more: the
	 * reader had caught up, so the drops came in bursts (a bursty sender)
	 * however many intervals they touch; a steady overload keeps the
	 * queue full at every look.
	 */
	p.drained = in->queue_between_drops && in->queue_low.known && in->queue_looks.known &&
		    in->queue_looks.v >= 2 &&
		    p.rb && in->queue_low.v < p.rb / 2;
	/*
	 * Drops in most intervals, the queue never seen drained: a steady
	 * overload, not a burst. Three intervals suffice (a 3 s sample at
	 * 1 s intervals judges as a 30 s one does); fewer say too little.
	 */
	p.sparse = in->windows.known && in->windows_dropping.known && in->windows.v >= 10 &&
		   in->windows_dropping.v < in->windows.v - in->windows.v / 4;
	p.sustained = in->intervals.known && in->intervals_dropping.known &&
		      in->intervals.v >= 3 && in->intervals_dropping.v <= in->intervals.v &&
		      in->intervals_dropping.v >= in->intervals.v - in->intervals.v / 4 && !p.drained &&
		      !p.sparse;
	/*
	 * The kernel's windows, a second of them or more: they alone decide
	 * (every view of the run has the same ones; a view's intervals and
	 * its looks at the queue are its own). Drops in half the windows of
	 * their stretch or more: steady (a paced sender on a busy host leaves
	 * some windows quiet, and is still faster than its reader); in fewer:
	 * bursts, between which the reader caught up for 100 ms or more.
	 */
	if (in->kernel_windows) {
		/* a view's looks at the queue are its own: not with the windows */
		p.drained = false;
		p.sparse = in->windows.v >= 10 &&
			   in->windows_dropping.v < (in->windows.v + 1) / 2;
		/* under a second of drops says neither steady nor bursts */
		p.sustained = in->windows.v >= 10 && !p.sparse;
	}
	p.too_big = !p.large && p.have_burst && p.need_d > ADVICE_RCVBUF_CAP;
	p.pace = p.large || p.sustained || p.too_big;
	/* did the app set SO_RCVBUF? only when rmem_default says */
	p.set = in->rcvbuf.known && in->rmem_default.known ? p.rb != in->rmem_default.v : -1;
	/*
	 * Not reading, from the socket's own deliveries when known: none in
	 * the intervals it dropped in, or none in its latest two or more (a
	 * reader stopped mid-run: its queue stays full, every arrival is
	 * dropped). The netns-wide UdpInDatagrams decides only without them,
	 * and only at 0 (then no socket there read): a sibling's reads say
	 * nothing of this socket.
	 */
	if (in->delivered.known)
		p.not_reading = in->drops && (!in->delivered.v ||
					      (in->stalled_intervals.known && in->stalled_intervals.v >= 2 &&
					       in->stalled_s >= ADVICE_STALL_MIN_S));
	else
		p.not_reading = in->reads.known && !in->reads.v && in->drops;
	p.drained_dgps = in->delivered.known && in->delivered.v && in->delivered_s > 0 &&
				 isfinite(in->delivered_s)
			 ? (double)in->delivered.v / in->delivered_s : 0;
	p.pace_dgps = p.pace && !p.not_reading
		      ? d2u(floor(p.drained_dgps * ADVICE_PACE_PCT / 100), UINT64_MAX) : 0;
	/* need_d <= ADVICE_RCVBUF_CAP here: the conversion is exact */
	p.need = !p.pace && p.have_burst
			 ? advice__round_up(p.rb + (uint64_t)ceil(ADVICE_BURST_MARGIN * (double)in->burst.v * p.ts),
					    4096) : 0;
	p.fallback = !p.pace && !p.have_burst
			     ? (p.rb >= ADVICE_FALLBACK_RCVBUF ? 2 * ADVICE_FALLBACK_RCVBUF : ADVICE_FALLBACK_RCVBUF)
			     : 0;
	return p;
}

/*
 * The rcvbuf change that grows the buffer to `need` (as the kernel keeps
 * it): the setsockopt request (half: the kernel doubles it) when the
 * application sets SO_RCVBUF or may, net.core.rmem_default (not doubled:
 * the same size) when it sets none or may; `why` says what the size is for.
 */
static void rcvbuf_change(const struct advice_input *in, struct advice_finding *f, uint64_t need,
			  int set, bool not_reading, const char *why)
{
	char *c = f->change;
	size_t cl = sizeof(f->change);
	uint64_t req = need / 2;

	if (not_reading)
		add(c, cl, "First make the application read it (below); then ");
	if (set != 0)
		set_value(f, "SO_RCVBUF", req);
	else
		set_sysctl(in, f, "net.core.rmem_default", need, NULL);
	if (set != 0) {
		add(c, cl, "%s", not_reading ? "have" : "Have");
		add(c, cl, " the application call setsockopt(fd, SOL_SOCKET, SO_RCVBUF, %llu): the kernel "
		    "doubles it to %s, %s", (unsigned long long)req, B(need), why);
		if (in->rmem_max.known && req > in->rmem_max.v) {
			add(c, cl, "; allow it first: ");
			add_sysctl(in, c, cl, "net.core.rmem_max", req);
			add(c, cl, " (now %s: a larger request is silently cut to it)", B(in->rmem_max.v));
			/* a container cannot raise a host-wide cap: the call that
			 * ignores it, where the application may */
			if (host_only(in, "net.core.rmem_max"))
				add(c, cl, "; or, with no host setting, SO_RCVBUFFORCE instead of SO_RCVBUF "
				    "(the same value; it ignores rmem_max but needs CAP_NET_ADMIN)");
		} else if (in->rmem_max.known) {
			add(c, cl, "; net.core.rmem_max (%s) already allows it", B(in->rmem_max.v));
		} else {
			add(c, cl, "; net.core.rmem_max must be at least %llu", (unsigned long long)req);
		}
		add(c, cl, ". ");
	}
	if (set == 0) {
		add(c, cl, "%s ", not_reading ? "run" : "Run");
		add_sysctl(in, c, cl, "net.core.rmem_default", need);
		add(c, cl, ": every new socket that sets no SO_RCVBUF gets %s, %s. ", B(need), why);
	} else if (set == -1) {
		add(c, cl, "Or, if it sets none: ");
		add_sysctl(in, c, cl, "net.core.rmem_default", need);
		add(c, cl, ": every new socket that sets no SO_RCVBUF gets %s (the same size: "
		    "rmem_default is not doubled). ", B(need));
	}
	/* rmem_default host-wide and out of reach from the netns: the
	 * per-socket call does the same for this application alone */
	if (set == 0 && host_only(in, "net.core.rmem_default"))
		add(c, cl, "Or, per socket, with no host setting: setsockopt(fd, SOL_SOCKET, SO_RCVBUF, "
		    "%llu) (doubled to %s; capped at net.core.rmem_max%s), or SO_RCVBUFFORCE with "
		    "CAP_NET_ADMIN past that cap. ", (unsigned long long)req, B(need),
		    in->rmem_max.known && req > in->rmem_max.v ? ", which is lower" : "");
	add(c, cl, "Existing sockets keep their size: restart the application; make a sysctl "
	    "permanent in /etc/sysctl.d/.");
}

static int rcvbuf(const struct advice_input *in, struct advice_finding *out, int max)
{
	int n = 0;
	struct advice_finding *f = next(out, max, &n, in->cause);
	const struct rcvbuf_plan p = rcvbuf_plan(in);
	double payload = p.payload, ts = p.ts;
	bool ts_est = p.ts_est, large = p.large, have_burst = p.have_burst;
	bool sustained = p.sustained, too_big = p.too_big, pace = p.pace, bound;
	bool not_reading = p.not_reading;
	uint64_t rb = p.rb;
	int set = p.set;
	double bits = arrival_bits(in, payload, &bound);
	char *e = f->evidence, *c = f->change, flt[48] = "", over[48] = "";
	size_t el = sizeof(f->evidence), cl = sizeof(f->change);

	/* every verdict says how long it judged: a 3 s and a 30 s sample of
	 * one load give the same verdict, each with its own span */
	if (in->span_s > 0)
		snprintf(over, sizeof(over), " (sampled %s)", S(in->span_s));
	snprintf(f->verdict, sizeof(f->verdict), "%s",
		 pace ? "steady_overload" : have_burst ? "bursts" : "unsized");
	if (large)
		snprintf(f->what, sizeof(f->what), "the receive buffer is already very large (%s) and still "
			 "overflowed: the sender is faster than the reader%s", B(rb), over);
	else if (sustained && in->kernel_windows && in->windows.v >= 10)
		snprintf(f->what, sizeof(f->what), "the socket dropped in %llu of %llu %s windows: "
			 "the sender is faster than the reader, steadily%s",
			 (unsigned long long)in->windows_dropping.v, (unsigned long long)in->windows.v,
			 S(in->window_s), over);
	else if (sustained)
		/* the interval's kind (sample, refresh, snapshot) in the
		 * evidence only: the same verdict reads the same in every view */
		snprintf(f->what, sizeof(f->what), "the socket dropped in %llu of %llu intervals: "
			 "the sender is faster than the reader, steadily%s", (unsigned long long)in->intervals_dropping.v,
			 (unsigned long long)in->intervals.v, over);
	else if (too_big)
		snprintf(f->what, sizeof(f->what), "the socket's receive buffer was full, and one for twice "
			 "its worst burst would exceed %s: the sender is faster than the reader%s",
			 B(ADVICE_RCVBUF_CAP), over);
	else if (p.drained || p.sparse)
		snprintf(f->what, sizeof(f->what), "bursts overflowed the socket's receive buffer: the reader "
			 "caught up between them%s", over);
	else
		snprintf(f->what, sizeof(f->what), "the socket's receive buffer was full: the reader fell "
			 "behind the arrivals%s", over);
	drops_line(in, e, el);
	burst_note(in, e, el);
	if (in->kernel_windows && in->windows.v >= 10)
		/* the kernel's windows decided: the same sentence in every view */
		add(e, el, "Its drops came in %s of the %s %s windows from its first drop to its "
		    "last (the kernel's drop windows)%s. ", N(in->windows_dropping.v),
		    N(in->windows.v), S(in->window_s),
		    sustained ? ": a steady overload, which any buffer only postpones"
			      : ": bursts, between which the reader kept up");
	else if (in->intervals.known && in->intervals_dropping.known && in->intervals.v > 1)
		add(e, el, "It dropped in %s of the %s %s%s. ", N(in->intervals_dropping.v),
		    N(in->intervals.v), in->burst_episode ? "sample intervals"
		    : in->live ? "intervals between refreshes" : "intervals between snapshots",
		    sustained ? ": a steady overload, which any buffer only postpones"
		    : p.drained && in->intervals_dropping.v >= in->intervals.v - in->intervals.v / 4
		    ? ", yet its queue drained between them: a bursty sender, not a steady overload"
		    : p.sparse && in->intervals_dropping.v >= in->intervals.v - in->intervals.v / 4
		    ? ", yet in bursts (below): a bursty sender, not a steady overload" : "");
	if (p.sparse && !(in->kernel_windows && in->windows.v >= 10))
		add(e, el, "Its drops came in %s of the %s %s windows from its first drop to its last "
		    "(per-drop events): bursts, between which the reader kept up. ",
		    N(in->windows_dropping.v), N(in->windows.v), S(in->window_s));
	if (p.drained)
		add(e, el, "Its queue held as little as %s of its %s at one of %s looks (at most %s). ",
		    B(in->queue_low.v), B(rb), N(in->queue_looks.v),
		    in->queue_peak.known ? B(in->queue_peak.v) : "unknown");
	if (p.drained_dgps > 0)
		add(e, el, "Its reader took %s datagrams (its own deliveries) in the %s it dropped in: "
		    "%s. ", N(in->delivered.v), S(in->delivered_s), R(p.drained_dgps));

	if (in->rcvbuf.known) {
		add(e, el, "Its buffer: rcvbuf %s", B(rb));
		if (set == 0)
			add(e, el, ", which is net.core.rmem_default: the application did not set SO_RCVBUF. ");
		else if (set == 1) {
			add(e, el, ", not net.core.rmem_default (%s): the application set SO_RCVBUF, asking for "
			    "about %s (the kernel doubles the request", B(in->rmem_default.v), B(rb / 2));
			if (in->rmem_max.known && rb / 2 > in->rmem_max.v)
				add(e, el, "; that is above net.core.rmem_max, %s: set with SO_RCVBUFFORCE, or "
				    "before rmem_max was lowered", B(in->rmem_max.v));
			else if (in->rmem_max.known)
				add(e, el, " after capping it at net.core.rmem_max, %s%s", B(in->rmem_max.v),
				    rb / 2 == in->rmem_max.v ? ": it got the cap" : "");
			add(e, el, "). ");
		} else
			add(e, el, ". ");
	}
	if (ts > 0 && payload > 0) {
		add(e, el, "The kernel charges the buffer each datagram's truesize (buffer and overhead), "
		    "not its payload: %s%.0f B per %.0f B datagram%s", ts_est ? "~" : "", ts, payload,
		    ts_est ? " (estimated for an skb the stack allocates; NIC drivers differ)" : "");
		if (rb)
			add(e, el, ", so %s holds about %.0f of them", B(rb), floor(rb / ts));
		add(e, el, ". ");
		if (ts_est && !in->mtu.known && payload > advice__max_unfragmented(1500, in->family))
			add(e, el, "The interface is not known (check its MTU with ip link): if its MTU is "
			    "below %.0f B (the payload + %u), the datagrams are fragmented and each fragment "
			    "is charged, more than this. ", payload + (in->family == AF_INET6 ? 48 : 28),
			    in->family == AF_INET6 ? 48 : 28);
	} else if (payload <= 0) {
		add(e, el, "The kernel charges the buffer each datagram's truesize, more than its payload. ");
	}
	if (too_big)
		add(e, el, "A buffer with room for twice the worst burst (bursts vary) would hold rcvbuf + "
		    "%u x burst x truesize = %s + %u x %s x %s%.0f B = about %s, above the %s this advice "
		    "goes to: at that size the reader is not briefly behind, the sender is faster. ",
		    ADVICE_BURST_MARGIN, B(rb), ADVICE_BURST_MARGIN, N(in->burst.v), ts_est ? "~" : "", ts,
		    B(d2u(p.need_d, UINT64_MAX)), B(ADVICE_RCVBUF_CAP));
	if (rb && bits > 0) {
		double ms = advice__time_to_fill_ms(rb, bits);

		add(e, el, "A stalled reader had at most %s before the buffer was full: %s x 8 / %s", S(ms / 1e3),
		    B(rb), BPS(bits));
		if (bound)
			add(e, el, ", the worst interval's drop rate (arrivals were at least that%s)",
			    in->live ? "" : "; deliveries are unknown");
		add(e, el, ", counting the payload only");
		if (ts > payload && payload > 0)
			add(e, el, "; by truesize (%s%.0f B per datagram) it filled in about %s",
			    ts_est ? "~" : "", ts, S(ms / 1e3 * payload / ts));
		add(e, el, ". ");
	}
	trim(e);

	if (pace) {
		if (not_reading)
			add(c, cl, "First make the application read it (below). ");
		if (large)
			add(c, cl, "A bigger buffer will not help (past a Very Large buffer only flow control "
			    "helps: Jones and Zhu, \"Considerations When Benchmarking UDP Bulk Flows\"). ");
		else
			add(c, cl, "A bigger buffer would only postpone the drops: when arrivals outpace "
			    "reads for good, any buffer fills. ");
		if (p.pace_dgps) {
			set_value(f, "sender_pps", p.pace_dgps);
			add(c, cl, "Pace the sender to at most %llu datagrams/s", (unsigned long long)p.pace_dgps);
			if (payload > 0)
				add(c, cl, " (%s of %.0f B payloads)", BPS(p.pace_dgps * payload * 8), payload);
			add(c, cl, ", %u%% of the %s its reader took while it dropped (udpdrop gen --pps %llu "
			    "tests it), add flow control between them, or read faster: more reader threads "
			    "on SO_REUSEPORT sockets, recvmmsg() batches, a reader pinned to its own CPU.",
			    ADVICE_PACE_PCT, R(p.drained_dgps), (unsigned long long)p.pace_dgps);
		} else {
			add(c, cl, "Pace the sender below the rate the reader sustains (its deliveries are "
			    "not known here: kernels before 6.6 do not report them, and on 6.6+ top, "
			    "doctor and record count them; udpdrop gen --pps finds it), add flow control between them, or read faster: more reader threads on "
			    "SO_REUSEPORT sockets, recvmmsg() batches, a reader pinned to its own CPU.");
		}
	} else {
		char why[256];

		if (have_burst)
			snprintf(why, sizeof(why), "room for twice the worst %s's %s datagrams (bursts vary) at "
				 "%s%.0f B each on top of today's %s, even if it read nothing meanwhile",
				 in->burst_window ? "window" : in->burst_episode ? "burst" : "interval",
				 N(in->burst.v), ts_est ? "~" : "", ts, B(rb));
		else
			snprintf(why, sizeof(why), "%s (%s is not known, so the advice cannot size it)",
				 p.fallback > ADVICE_FALLBACK_RCVBUF ? "a step up from today's"
				 : "the usual starting point (Jones and Zhu, \"Considerations When Benchmarking UDP Bulk Flows\")",
				 rb ? "the worst burst's size in bytes" : "today's buffer");
		rcvbuf_change(in, f, have_burst ? p.need : p.fallback, set, not_reading, why);
	}
	if (in->port.known)
		snprintf(flt, sizeof(flt), " 'sport = :%llu'", (unsigned long long)in->port.v);
	snprintf(f->verify, sizeof(f->verify), "Under the same load the socket drops nothing: nstat -az "
		 "UdpRcvbufErrors Udp6RcvbufErrors stays put, ss -uam%s shows rb%s and its d (drops) "
		 "counter not moving, and udpdrop top (or record + report) shows 0 rcvbuf drops for it.",
		 flt, pace ? " unchanged" : " at the new size");

	if (not_reading && (f = next(out, max, &n, in->cause))) {
		e = f->evidence;
		snprintf(f->verdict, sizeof(f->verdict), "not_reading");
		snprintf(f->what, sizeof(f->what), "nothing read the socket while it dropped%s", over);
		if (in->delivered.known && in->delivered.v) {
			add(e, el, "Nothing was delivered to it (its own deliveries, sock:sk_data_ready) in "
			    "its latest %s intervals with drops (%s): its reader stopped, %s delivered before",
			    N(in->stalled_intervals.v), S(in->stalled_s), N(in->delivered.v));
		} else if (in->delivered.known) {
			add(e, el, "Nothing was delivered to it (its own deliveries, sock:sk_data_ready) in "
			    "the intervals it dropped in");
			if (in->delivered_s > 0)
				add(e, el, " (%s)", S(in->delivered_s));
		} else {
			add(e, el, "Applications in its namespace read 0 datagrams");
			if (in->span_s > 0)
				add(e, el, " in %s", S(in->span_s));
			add(e, el, " (UdpInDatagrams +0, netns-wide: no socket there read)");
		}
		/* one look is no history: "never drained" needs two or more */
		if (in->queue_low.known && in->queue_peak.known && in->queue_low.v == in->queue_peak.v &&
		    in->queue_peak.v && in->queue_looks.known && in->queue_looks.v >= 2) {
			add(e, el, ", and its queue held %s", B(in->queue_peak.v));
			if (rb)
				add(e, el, " (%.0f%% of rcvbuf)", 100.0 * in->queue_peak.v / rb);
			add(e, el, " at every one of %s looks: it never drained", N(in->queue_looks.v));
		} else if (in->queued.known) {
			add(e, el, "; queued at the end: %s", B(in->queued.v));
			if (rb)
				add(e, el, " (%.0f%% of rcvbuf)", 100.0 * in->queued.v / rb);
		}
		add(e, el, ". A buffer of any size only postpones the drops of a socket nobody reads.");
		snprintf(f->change, sizeof(f->change), "Check that the owning process is alive and reads "
			 "this socket (strace -f -e trace=recvfrom,recvmsg,recvmmsg -p PID); if it reads "
			 "only at times, size the buffer for what arrives in between (above).");
		if (in->delivered.known && in->reads.known)
			add(e, el, " Netns-wide context (every socket in the namespace, not this one): "
			    "UdpInDatagrams +%s.", N(in->reads.v));
		snprintf(f->verify, sizeof(f->verify), "ss -uam shows the socket's r (bytes queued) "
			 "falling back between bursts, and udpdrop top shows its RX/s above 0.");
	}
	/* the kernel's counter last, labelled: it counts every socket of
	 * the namespace, not this one */
	f = &out[0];
	if (in->mib_rcvbuf_errors.known) {
		add(f->evidence, sizeof(f->evidence), " Netns-wide context (every socket in the namespace, "
		    "not this one alone): UdpRcvbufErrors +%s.", N(in->mib_rcvbuf_errors.v));
		if (in->reads.known)
			add(f->evidence, sizeof(f->evidence), " UdpInDatagrams +%s.", N(in->reads.v));
	}
	return n;
}

/* ---- udp_mem ----------------------------------------------------------- */

static int udp_mem(const struct advice_input *in, struct advice_finding *out, int max)
{
	int n = 0;
	struct advice_finding *f = next(out, max, &n, in->cause);
	uint64_t ps = in->page_size.known && in->page_size.v ? in->page_size.v : 4096;
	bool have = in->udp_mem[0].known && in->udp_mem[1].known && in->udp_mem[2].known;
	char *e = f->evidence;
	size_t el = sizeof(f->evidence);

	snprintf(f->what, sizeof(f->what), "all UDP sockets together reached the system-wide limit "
		 "net.ipv4.udp_mem");
	drops_line(in, e, el);
	if (in->mib_mem_errors.known)
		add(e, el, "The kernel counted UdpMemErrors +%s. ", N(in->mib_mem_errors.v));
	if (have) {
		add(e, el, "net.ipv4.udp_mem = %llu %llu %llu pages", (unsigned long long)in->udp_mem[0].v,
		    (unsigned long long)in->udp_mem[1].v, (unsigned long long)in->udp_mem[2].v);
		add(e, el, " (%s%s pages: min %s, pressure %s, max %s)", in->page_size.known ? "" : "~",
		    B(ps), B(sat_mul(in->udp_mem[0].v, ps)), B(sat_mul(in->udp_mem[1].v, ps)),
		    B(sat_mul(in->udp_mem[2].v, ps)));
		if (!in->page_size.known)
			add(e, el, " (assuming 4 KiB pages)");
		add(e, el, ": past the max every UDP socket's next datagram is dropped, whatever its own "
		    "rcvbuf; past pressure the kernel holds buffers back. ");
	}
	trim(e);
	if (have) {
		char three[72];

		snprintf(three, sizeof(three), "%llu %llu %llu", (unsigned long long)in->udp_mem[0].v,
			 (unsigned long long)sat_mul(in->udp_mem[1].v, 2),
			 (unsigned long long)sat_mul(in->udp_mem[2].v, 2));
		set_sysctl(in, f, "net.ipv4.udp_mem", sat_mul(in->udp_mem[2].v, 2), three);
		snprintf(f->change, sizeof(f->change), "Find who holds the memory first: ss -uam (sockets with "
			 "large r, often ones nobody reads) and the UDP line of /proc/net/sockstat (mem, in "
			 "pages). If the load is legitimate, double pressure and max: ");
		advice__sysctl_phrase(in->where, "net.ipv4.udp_mem", three, f->change, sizeof(f->change));
		add(f->change, sizeof(f->change), ".");
	} else
		snprintf(f->change, sizeof(f->change), "Find who holds the memory: ss -uam and the UDP line "
			 "of /proc/net/sockstat; then raise net.ipv4.udp_mem (sysctl net.ipv4.udp_mem shows "
			 "the three values, in pages).");
	snprintf(f->verify, sizeof(f->verify), "nstat -az UdpMemErrors Udp6MemErrors stays put, and the "
		 "mem figure of UDP in /proc/net/sockstat stays below the pressure value%s.",
		 have ? "" : " (the second of udp_mem)");
	return n;
}

/* ---- sender side: qdisc ------------------------------------------------ */

/*
 * What the sender rule decides, shared by the finding (sender) and the
 * hint (hint_sender): the send buffer against message size x txqueuelen,
 * and whether to shrink it (else: pace, or the qdisc's limit).
 */
struct sndbuf_plan {
	double payload;      /* bytes per datagram, 0 unknown */
	uint64_t sb;         /* the send buffer */
	const char *sb_from; /* where sb comes from; NULL: not known */
	uint64_t limit;      /* message size x txqueuelen, 0 unknown */
	bool shrink;         /* sb is above limit: keep it under */
};

static struct sndbuf_plan sndbuf_plan(const struct advice_input *in)
{
	struct sndbuf_plan p = { 0 };

	p.payload = in->avg_size.known ? (double)payload_u(in->avg_size.v) : 0;
	if (in->sndbuf.known)
		p.sb = in->sndbuf.v, p.sb_from = "its SO_SNDBUF";
	else if (in->wmem_default.known)
		p.sb = in->wmem_default.v,
		p.sb_from = "net.core.wmem_default (if the application sets no SO_SNDBUF)";
	if (in->txqueuelen.known && p.payload > 0)
		p.limit = d2u(p.payload * (double)in->txqueuelen.v, UINT64_MAX);
	p.shrink = p.limit && p.sb_from && p.sb > p.limit;
	return p;
}

static int sender(const struct advice_input *in, struct advice_finding *out, int max)
{
	int n = 0;
	struct advice_finding *f = next(out, max, &n, in->cause);
	const struct sndbuf_plan p = sndbuf_plan(in);
	double payload = p.payload;
	const char *ifn = in->ifname ? in->ifname : "IF";
	uint64_t sb = p.sb, limit = p.limit;
	const char *sb_from = p.sb_from;
	char *e = f->evidence, *c = f->change;
	size_t el = sizeof(f->evidence), cl = sizeof(f->change);

	snprintf(f->what, sizeof(f->what), "the egress queue dropped datagrams this host sent: they "
		 "never left it");
	drops_line(in, e, el);
	if (in->mib_sndbuf_errors.known)
		add(e, el, "Netns-wide (every socket in the namespace): UdpSndbufErrors +%s over the same "
		    "span. ", N(in->mib_sndbuf_errors.v));
	if (in->txqueuelen.known)
		add(e, el, "%s has txqueuelen %s packets. ", ifn, N(in->txqueuelen.v));
	else if (!in->ifname)
		add(e, el, "The interface is not known (the namespace has several, or the trace lists "
		    "none), so neither is its txqueuelen: ip -s link shows each one's, and its drops. ");
	else
		add(e, el, "%s's txqueuelen is not known: ip link show dev %s shows it. ", ifn, ifn);
	if (sb_from)
		add(e, el, "The send buffer is %s: %s. ", B(sb), sb_from);
	if (limit)
		add(e, el, "Jones and Zhu's rule (\"Considerations When Benchmarking UDP Bulk Flows\"): a send buffer holding more than message size x txqueuelen "
		    "(%.0f B x %s = %s) defeats the stack's own flow control, so the sender never blocks "
		    "and the queue overflows. ", payload, N(in->txqueuelen.v), B(limit));
	if (limit && sb_from)
		add(e, el, "%s is %s that.", B(sb), sb > limit ? "above" : "below");
	trim(e);

	if (p.shrink)
		set_value(f, "SO_SNDBUF", limit / 2);
	else if (in->txqueuelen.known && in->txqueuelen.v)
		set_value(f, "txqueuelen", sat_mul(in->txqueuelen.v, 2));
	if (p.shrink) {
		add(c, cl, "Keep the send buffer under %s: setsockopt(fd, SOL_SOCKET, SO_SNDBUF, %llu) (the "
		    "kernel doubles it to %s)", B(limit), (unsigned long long)(limit / 2),
		    B(advice__sockbuf_effective(limit / 2, UINT64_MAX, false)));
		if (!in->sndbuf.known) {
			add(c, cl, ", or for sockets that set none: ");
			add_sysctl(in, c, cl, "net.core.wmem_default", limit);
		}
		add(c, cl, "; the sender then blocks (or sees EAGAIN) instead of losing datagrams. Existing "
		    "sockets keep their size: restart the application.");
	} else {
		/* the qdisc's limit and rate are not known here: say what
		 * to check, not what it is */
		add(c, cl, "Likely the qdisc's own limit holds less than the send buffer%s, or a shaper is "
		    "slower than the sender: tc -s qdisc show dev %s shows which (its limit, rate and "
		    "drops). Pace the sender below that rate (udpdrop gen --rate to try one), or raise the "
		    "qdisc's limit", limit && sb_from ? " allows" : "", ifn);
		/* which limit depends on the qdisc: pfifo_fast and pfifo hold
		 * txqueuelen packets; fq_codel and fq ignore it (their own
		 * limit: fq_codel's default is 10240 packets, fq's 10000) */
		add(c, cl, ": for pfifo_fast or pfifo, which hold txqueuelen packets, ip link set dev %s "
		    "txqueuelen ", ifn);
		if (in->txqueuelen.known && in->txqueuelen.v)
			add(c, cl, "%llu (twice today's)", (unsigned long long)sat_mul(in->txqueuelen.v, 2));
		else
			add(c, cl, "N (ip link show dev %s shows today's)", ifn);
		add(c, cl, "; fq_codel and fq ignore txqueuelen and have their own limit (fq_codel's default "
		    "is 10240 packets): tc qdisc change dev %s root fq_codel limit 20480 (or fq limit N).", ifn);
	}
	snprintf(f->verify, sizeof(f->verify), "tc -s qdisc show dev %s: its dropped count stops growing; "
		 "nstat -az UdpSndbufErrors stays put; udpdrop top shows 0 %s drops for the sender.", ifn,
		 cause__name(in->cause));
	return n;
}

/* ---- fragmentation ----------------------------------------------------- */

static int frag(const struct advice_input *in, struct advice_finding *out, int max)
{
	int n = 0;
	struct advice_finding *f = next(out, max, &n, in->cause);
	int fam = in->family ? in->family : AF_INET;
	unsigned k = 0;
	bool k_est = false;
	char *e = f->evidence, *c = f->change;
	size_t el = sizeof(f->evidence), cl = sizeof(f->change);
	uint64_t maxpl = in->mtu.known ? advice__max_unfragmented(in->mtu.v, fam) : 0;

	if (in->cause == CAUSE_FRAG_TIMEOUT)
		snprintf(f->what, sizeof(f->what), "IP reassembly timed out: a fragment of each datagram never "
			 "arrived");
	else if (in->cause == CAUSE_FRAG_TOO_FAR)
		snprintf(f->what, sizeof(f->what), "IP reassembly gave up: too many other datagrams from the "
			 "source arrived between its fragments");
	else
		snprintf(f->what, sizeof(f->what), "duplicate IP fragments were discarded");
	drops_line(in, e, el);
	if (in->mib_reasm_fails.known)
		add(e, el, "IpReasmFails +%s", N(in->mib_reasm_fails.v));
	if (in->mib_reasm_timeout.known)
		add(e, el, "%sIpReasmTimeout +%s", in->mib_reasm_fails.known ? ", " : "",
		    N(in->mib_reasm_timeout.v));
	if (in->mib_reasm_fails.known || in->mib_reasm_timeout.known)
		add(e, el, ". ");
	if (in->mtu.known) {
		add(e, el, "MTU %s%s%s: UDP payloads above %s (MTU - %u) are fragmented. ", N(in->mtu.v),
		    in->ifname ? " on " : "", in->ifname ? in->ifname : "", B(maxpl),
		    fam == AF_INET6 ? 48 : 28);
		if (in->avg_size.known)
			k = advice__fragments(payload_u(in->avg_size.v), in->mtu.v, fam);
	} else {
		add(e, el, "The interface is not known, so neither is its MTU: check it with ip link "
		    "(UDP payloads above MTU - %u B are fragmented). ", fam == AF_INET6 ? 48 : 28);
	}
	if (!k && in->drops && in->skbs > in->drops && in->cause == CAUSE_FRAG_TIMEOUT) {
		/* the fragments that came were freed with it; at least one did not
		 * come (at most a 64 KiB datagram's worth of 8-byte fragments) */
		k = (unsigned)d2u((double)in->skbs / in->drops + 0.5, ADVICE_PAYLOAD_MAX / 8) + 1;
		k_est = true;
		add(e, el, "Each lost datagram left ~%.1f fragments behind, so it had ~%u or more. ",
		    (double)in->skbs / in->drops, k);
	}
	if (k > 1) {
		add(e, el, "Losing any fragment loses the datagram: message loss = 1 - (1 - p)^%u with %s%u "
		    "fragments, %.3f%% at 0.1%% packet loss and %.3f%% at 1%%. ", k, k_est ? "~" : "", k,
		    100 * advice__message_loss(0.001, k), 100 * advice__message_loss(0.01, k));
	}
	if (in->ipfrag_time.known)
		add(e, el, "Incomplete datagrams wait net.ipv4.ipfrag_time = %s s. ", N(in->ipfrag_time.v));
	if (in->ipfrag_high_thresh.known) {
		add(e, el, "Reassembly holds at most net.ipv4.ipfrag_high_thresh = %s per namespace",
		    B(in->ipfrag_high_thresh.v));
		uint64_t per = in->mtu.known && k > 1
				       ? sat_mul(k, advice__truesize_estimate(maxpl, in->mtu.v, fam)) : 0;

		if (per)
			add(e, el, ", about %.0f incomplete datagrams of %u fragments",
			    floor(in->ipfrag_high_thresh.v / (double)per), k);
		add(e, el, ". ");
	}
	if (fam == AF_INET && in->ipfrag_time.known && in->ipfrag_time.v) {
		double thr = 65536.0 / in->ipfrag_time.v;

		add(e, el, "The 16-bit IP ID wraps within ipfrag_time above %.0f datagrams/s from one host "
		    "to another (65536 / %s s)", thr, N(in->ipfrag_time.v));
		if (in->rate_dgps.known && in->rate_dgps.v > 0)
			add(e, el, "; at %s it wraps every %s%s", R(in->rate_dgps.v),
			    S(advice__ipid_wrap_s(in->rate_dgps.v)),
			    in->rate_dgps.v > thr ? ": stale fragments can be joined to new datagrams" : "");
		else if (in->drops && in->span_s > 0)
			add(e, el, "; arrivals are unknown here (at least %s)", R(in->drops / in->span_s));
		add(e, el, ". ");
	}
	trim(e);

	if (in->cause == CAUSE_FRAG_DUP) {
		add(c, cl, "Nothing to tune here: duplicated fragments come from the path (a loop, a mirrored "
		    "port, a middlebox that retransmits). ");
	} else if (in->cause == CAUSE_FRAG_TOO_FAR && in->ipfrag_max_dist.known) {
		uint64_t dist = in->ipfrag_max_dist.v ? sat_mul(in->ipfrag_max_dist.v, 2) : 64;

		set_sysctl(in, f, "net.ipv4.ipfrag_max_dist", dist, NULL);
		add(c, cl, "Tolerate more reordering: ");
		add_sysctl(in, c, cl, "net.ipv4.ipfrag_max_dist", dist);
		add(c, cl, " (now %s; 0 turns the check off, and a larger value raises the odds of a wrong "
		    "assembly when the IP ID wraps). ", N(in->ipfrag_max_dist.v));
	}
	if (in->cause != CAUSE_FRAG_DUP) {
		if (maxpl && !f->has_value)
			set_value(f, "datagram_size", maxpl);
		if (maxpl)
			add(c, cl, "Best: send at most %llu B per datagram%s, so nothing is fragmented. ",
			    (unsigned long long)maxpl, in->ifname ? "" : " (at this MTU)");
		else
			add(c, cl, "Best: send datagrams no larger than the path MTU - 28 B (IPv4) or - 48 B "
			    "(IPv6), so nothing is fragmented. ");
		add(c, cl, "Else find where fragments are lost: netfilter rules on ports (non-first fragments "
		    "carry none), a lossy or policed link.");
	}
	trim(c);
	snprintf(f->verify, sizeof(f->verify), "nstat -az IpReasmFails IpReasmTimeout Ip6ReasmFails "
		 "stays put, and udpdrop top shows 0 %s drops.", cause__name(in->cause));
	return n;
}

/* ---- the others ------------------------------------------------------- */

static int simple(const struct advice_input *in, struct advice_finding *out, int max)
{
	int n = 0;
	struct advice_finding *f = next(out, max, &n, in->cause);
	char *e = f->evidence;
	size_t el = sizeof(f->evidence);
	char port[16] = "";

	if (in->port.known)
		snprintf(port, sizeof(port), "%llu", (unsigned long long)in->port.v);
	snprintf(f->what, sizeof(f->what), "%s", cause__describe(in->cause));
	if (in->drops || !in->skbs) {
		drops_line(in, e, el);
	} else {
		add(e, el, "%s %s (no whole datagram counted here", N(in->skbs),
		    in->cause == CAUSE_NETFILTER ? "fragments or skbs dropped" : "skb events");
		if (in->cause == CAUSE_NETFILTER)
			add(e, el, ": a datagram whose fragment was dropped counts once, under frag_timeout, "
			    "when its reassembly fails");
		add(e, el, ")");
		if (in->span_s > 0)
			add(e, el, " over %s", S(in->span_s));
		add(e, el, ". ");
	}

	switch (in->cause) {
	case CAUSE_NO_SOCKET:
		if (in->mib_no_ports.known)
			add(e, el, "The kernel counted UdpNoPorts +%s in the namespace. ",
			    N(in->mib_no_ports.v));
		if (!in->port.known) {
			/* doctor's counters-only mode: the kernel counts, but not where */
			snprintf(f->what, sizeof(f->what), "datagrams to ports nobody listens on");
			add(e, el, "No socket was bound to their destination ports%s%s (the counters do not "
			    "say which); the kernel answers each with an ICMP port unreachable (rate-limited).",
			    in->who ? " for " : "", in->who ? in->who : "");
			snprintf(f->change, sizeof(f->change), "Find the port first: sudo udpdrop top lists "
				 "the flows no socket took, by destination; or tcpdump -ni any 'icmp[icmptype] "
				 "== 3 and icmp[icmpcode] == 3' (IPv6: 'icmp6 and ip6[40] == 1') shows the port "
				 "unreachable replies, each naming the port. Then start the service meant to "
				 "receive them (ss -ulpn lists the UDP listeners), or stop the sender or fix its "
				 "destination port.");
			snprintf(f->verify, sizeof(f->verify), "nstat -az UdpNoPorts Udp6NoPorts stays put, "
				 "and udpdrop shows 0 no_socket drops.");
			break;
		}
		snprintf(f->what, sizeof(f->what), "nothing listens on port %s", port);
		add(e, el, "No socket was bound to port %s%s%s; the kernel answers each with an ICMP port "
		    "unreachable (rate-limited).", port, in->who ? " for " : "", in->who ? in->who : "");
		snprintf(f->change, sizeof(f->change), "Start the service meant to receive them (or bind it to "
			 "this address and port): ss -ulpn 'sport = :%s' must list it; or stop the sender or fix "
			 "its destination port.", port);
		snprintf(f->verify, sizeof(f->verify), "ss -ulpn 'sport = :%s' lists the listener, nstat -az "
			 "UdpNoPorts Udp6NoPorts stays put, and udpdrop shows 0 no_socket drops for port %s.",
			 port, port);
		break;
	case CAUSE_CHECKSUM:
		if (in->mib_csum_errors.known)
			add(e, el, "The kernel counted UdpInCsumErrors +%s. ", N(in->mib_csum_errors.v));
		add(e, el, "Datagrams arrived with a bad UDP checksum: a broken sender, a corrupting device on "
		    "the path, or broken checksum offload.");
		snprintf(f->change, sizeof(f->change), "Capture on this host: tcpdump -vvni any udp%s%s shows "
			 "'bad udp cksum' with the sender's address; on the sender, check its offload (ethtool "
			 "-k IF | grep checksum) and test with it off (ethtool -K IF tx off).",
			 in->port.known ? " port " : "", in->port.known ? port : "");
		snprintf(f->verify, sizeof(f->verify), "nstat -az UdpInCsumErrors Udp6InCsumErrors stays put, "
			 "and udpdrop shows 0 checksum drops.");
		break;
	case CAUSE_NETFILTER:
		add(e, el, "A netfilter (nftables or iptables) rule dropped them before any socket saw them.");
		snprintf(f->change, sizeof(f->change), "Find the rule whose counter grows: nft list ruleset "
			 "(with counters) or iptables-save -c. A rule matching ports cannot see non-first "
			 "fragments: accept fragments explicitly, or avoid fragmenting.");
		snprintf(f->verify, sizeof(f->verify), "The rule's counter stops growing, and udpdrop shows 0 "
			 "netfilter drops.");
		break;
	case CAUSE_SOCKET_FILTER:
		add(e, el, "A BPF program attached to the socket (SO_ATTACH_FILTER, SO_ATTACH_BPF, or a "
		    "SO_REUSEPORT program) rejected them: often the application's own choice.");
		snprintf(f->change, sizeof(f->change), "If the filter is meant to drop these, nothing is "
			 "wrong. Else check it: ss -ub shows a socket's classic BPF filter, bpftool prog "
			 "show lists eBPF programs.");
		snprintf(f->verify, sizeof(f->verify), "udpdrop shows 0 socket_filter drops for the socket.");
		break;
	case CAUSE_SOCKET_CLOSE:
		add(e, el, "They were still queued, never read, when the socket closed.");
		snprintf(f->change, sizeof(f->change), "Read the socket until EAGAIN before close() (or stop "
			 "the sender first); if the process died, find out why (journalctl, coredumpctl).");
		snprintf(f->verify, sizeof(f->verify), "udpdrop shows 0 socket_close drops when the "
			 "application stops.");
		break;
	case CAUSE_CPU_BACKLOG:
		set_sysctl(in, f, "net.core.netdev_max_backlog",
			   in->netdev_max_backlog.known && in->netdev_max_backlog.v
				   ? sat_mul(in->netdev_max_backlog.v, 2) : 2000, NULL);
		if (in->netdev_max_backlog.known)
			add(e, el, "A CPU's input backlog (net.core.netdev_max_backlog = %s packets) was full: "
			    "packets came faster than that CPU's softirq took them (RPS, veth and loopback "
			    "traffic queue there).", N(in->netdev_max_backlog.v));
		else
			add(e, el, "A CPU's input backlog (net.core.netdev_max_backlog) was full.");
		add_sysctl(in, f->change, sizeof(f->change), "net.core.netdev_max_backlog",
			   in->netdev_max_backlog.known && in->netdev_max_backlog.v
				   ? sat_mul(in->netdev_max_backlog.v, 2) : 2000);
		add(f->change, sizeof(f->change), "%s, and spread the receive work over CPUs (RSS queues, "
		    "or RPS: echo MASK > /sys/class/net/%s/queues/rx-0/rps_cpus).",
		    in->netdev_max_backlog.known ? " (twice today's)" : "", in->ifname ? in->ifname : "IF");
		snprintf(f->verify, sizeof(f->verify), "The second column of /proc/net/softnet_stat (drops, "
			 "one line per CPU) stops growing, and udpdrop shows 0 cpu_backlog drops.");
		break;
	case CAUSE_TUNNEL:
		add(e, el, "A kernel tunnel's UDP socket (VXLAN, GENEVE, ...) took them and refused "
		    "them: VXLAN_VNI_NOT_FOUND means no device here has the packet's VNI, "
		    "VXLAN_INVALID_HDR a header or flags the device does not accept, IP_TUNNEL_ECN an "
		    "ECN mark the inner packet cannot carry (the reason is in udpdrop report --by reason).");
		snprintf(f->change, sizeof(f->change), "Compare what the sender encapsulates with this "
			 "host's devices: ip -d link show type vxlan (or geneve) lists each one's id (VNI) "
			 "and dstport; tcpdump -ni any udp port %s -v shows the VNI on the wire. Create the "
			 "device for that VNI, or fix the sender's VNI or port, or stop the sender.",
			 in->port.known ? port : "PORT");
		snprintf(f->verify, sizeof(f->verify), "ip -s link show DEV counts the tunnel's packets "
			 "as RX, and udpdrop shows 0 tunnel drops%s%s.", in->port.known ? " for port " : "",
			 in->port.known ? port : "");
		break;
	default:
		/* a live view has no recording to report on: how to make one */
		if (in->live)
			add(e, el, "The kernel's reason and the function that dropped them: record the drops "
			    "(%s), then udpdrop report --by reason (and --by location).", RECORD_CMD(in));
		else
			add(e, el, "The kernel's reason and the function that dropped them are in the "
			    "report's per-socket detail (udpdrop report --by reason, --by location).");
		switch (in->cause) {
		case CAUSE_NEIGH:
			snprintf(f->change, sizeof(f->change), "The next hop did not resolve (ARP/ND) or its "
				 "queue was full: ip neigh show shows FAILED or INCOMPLETE entries; check the "
				 "route and the neighbour, or raise unres_qlen_bytes for bursts to new hosts.");
			break;
		case CAUSE_ROUTE:
			snprintf(f->change, sizeof(f->change), "ip route get DEST (and the source) shows the "
				 "route taken; a reverse-path filter drops asymmetric traffic: sysctl "
				 "net.ipv4.conf.all.rp_filter (2 is loose).");
			break;
		case CAUSE_NOMEM:
			snprintf(f->change, sizeof(f->change), "The kernel could not allocate memory: check "
				 "free memory and /proc/net/sockstat; raise vm.min_free_kbytes on a host that "
				 "runs short under bursts.");
			break;
		case CAUSE_XDP:
		case CAUSE_TC:
		case CAUSE_CGROUP_BPF:
			snprintf(f->change, sizeof(f->change), "A BPF program (%s) dropped them: bpftool net "
				 "and bpftool cgroup tree list the programs attached; check it is meant to.",
				 cause__name(in->cause));
			break;
		default:
			if (in->live)
				snprintf(f->change, sizeof(f->change), "Start from the kernel reason and drop "
					 "location: %s, then udpdrop report --by reason (and --by location).",
					 RECORD_CMD(in));
			else
				snprintf(f->change, sizeof(f->change), "Start from the kernel reason and drop "
					 "location (udpdrop report --by reason, --by location).");
			break;
		}
		snprintf(f->verify, sizeof(f->verify), "udpdrop top (or record + report) shows 0 %s drops.",
			 cause__name(in->cause));
		break;
	}
	trim(e);
	return n;
}

static int build_findings(const struct advice_input *in, struct advice_finding *out, int max)
{
	switch (in->cause) {
	case CAUSE_RCVBUF:
		return rcvbuf(in, out, max);
	case CAUSE_UDP_MEM:
		return udp_mem(in, out, max);
	case CAUSE_QDISC:
		return sender(in, out, max);
	case CAUSE_FRAG_TIMEOUT:
	case CAUSE_FRAG_TOO_FAR:
	case CAUSE_FRAG_DUP:
		return frag(in, out, max);
	default:
		return simple(in, out, max);
	}
}

int advice__build(const struct advice_input *in, struct advice_finding *out, int max)
{
	int n;

	if (max <= 0 || (!in->drops && !in->skbs))
		return 0;
	n = build_findings(in, out, max);
	for (int i = 0; i < n; i++) {
		out[i].sampled_s = in->span_s > 0 && isfinite(in->span_s) ? in->span_s : 0;
		if (in->kernel_windows && out[i].cause == in->cause) {
			out[i].kernel_windows = true;
			out[i].windows = in->windows.v;
			out[i].windows_dropping = in->windows_dropping.v;
			out[i].window_most = in->burst.v;
			out[i].window_s = in->window_s;
			out[i].window_rx = in->delivered.known;
			out[i].window_delivered = in->delivered.v;
		}
	}
	return n;
}

/* ---- the per-interval track every view feeds --------------------------- */

void advice__track(struct advice_track *t, uint64_t drops, double len_s, bool rx_known, uint64_t rx)
{
	if (!drops)
		return;
	t->dropping++;
	if (drops > t->best) {
		t->best = drops;
		t->best_s = len_s;
	}
	if (!rx_known)
		return;
	t->delivered = sat_add(t->delivered, rx);
	t->delivered_s += len_s;
	t->stalled = rx ? 0 : t->stalled + 1;
	t->stalled_s = rx ? 0 : t->stalled_s + len_s;
}

void advice__track_input(struct advice_input *in, const struct advice_track *t, uint64_t intervals)
{
	in->burst = ADVICE_U64(t->best);
	in->burst_s = t->best_s;
	in->intervals = ADVICE_U64(intervals);
	in->intervals_dropping = ADVICE_U64(t->dropping);
	if (t->delivered_s > 0) {
		in->delivered = ADVICE_U64(t->delivered);
		in->delivered_s = t->delivered_s;
		in->stalled_intervals = ADVICE_U64(t->stalled);
		in->stalled_s = t->stalled_s;
	}
}

void advice__kernel_windows(struct advice_input *in, uint64_t span, uint64_t dropping,
			    uint64_t best, bool rx_known, uint64_t delivered, uint64_t stalled)
{
	if (!span || !dropping)
		return;
	if (rx_known) {
		in->delivered = ADVICE_U64(delivered);
		in->delivered_s = dropping * (UD_WIN_NS / 1e9);
		in->stalled_intervals = ADVICE_U64(stalled);
		in->stalled_s = stalled * (UD_WIN_NS / 1e9);
	}
	in->burst = ADVICE_U64(best);
	in->burst_s = UD_WIN_NS / 1e9;
	in->burst_window = true;
	in->burst_episode = false;
	in->windows = ADVICE_U64(span);
	in->windows_dropping = ADVICE_U64(dropping);
	in->window_s = UD_WIN_NS / 1e9;
	in->kernel_windows = true;
}

/* ---- the short hint (top's HINT column) ------------------------------- */

/*
 * The change advice__build proposes first, in a few words: the same
 * decisions, taken by the same plans (rcvbuf_plan: pace, or the buffer
 * for the worst burst; sndbuf_plan: the send buffer rule), without the
 * text; tests/unit/test_advice.c checks the hint's numbers appear in the
 * built change.
 */
/*
 * v in binary units as fmt_bytes writes them ("118 KiB", "1.3 MiB"), but
 * rounded up, never down: a hint "at least X" must not show less than the
 * size the advice computed.
 */
static void bytes_up(char *buf, size_t len, uint64_t v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	uint64_t div = 1;
	unsigned u = 0;

	while (u < ARRAY_SIZE(units) - 1 && v / div >= 1024) {
		div *= 1024;
		u++;
	}
	if (!u) {
		snprintf(buf, len, "%llu B", (unsigned long long)v);
		return;
	}
	for (;;) {
		uint64_t whole = v / div, rem = v % div, up;

		if (whole < 10) {
			/* tenths, rounded up: rem x 10 < div x 10 fits */
			uint64_t tenths = whole * 10 + (rem * 10 + div - 1) / div;

			if (tenths < 100) {
				snprintf(buf, len, "%llu.%llu %s", (unsigned long long)(tenths / 10),
					 (unsigned long long)(tenths % 10), units[u]);
				return;
			}
			up = 10;
		} else {
			up = whole + !!rem;
		}
		if (up < 1024 || u == ARRAY_SIZE(units) - 1) {
			snprintf(buf, len, "%llu %s", (unsigned long long)up, units[u]);
			return;
		}
		div *= 1024; /* 1023.x rounds up to 1024: "1.0" of the next unit */
		u++;
	}
}

static void hint_rcvbuf(const struct advice_input *in, char *buf, size_t len)
{
	const struct rcvbuf_plan p = rcvbuf_plan(in);
	char h[32];

	if (p.not_reading) {
		snprintf(buf, len, "not reading");
	} else if (p.pace && p.pace_dgps) {
		snprintf(buf, len, "pace <= %llu/s", (unsigned long long)p.pace_dgps);
	} else if (p.pace) {
		snprintf(buf, len, "pace the sender");
	} else if (p.have_burst) {
		if (p.set == 1) {
			bytes_up(h, sizeof(h), p.need / 2);
			snprintf(buf, len, "SO_RCVBUF >= %s", h);
		} else {
			bytes_up(h, sizeof(h), p.need);
			snprintf(buf, len, "%s >= %s", p.set == 0 ? "rmem_default" : "rcvbuf", h);
		}
	} else {
		snprintf(buf, len, "raise rcvbuf (%u MiB)", (unsigned)(p.fallback >> 20));
	}
}

static void hint_sender(const struct advice_input *in, char *buf, size_t len)
{
	const struct sndbuf_plan p = sndbuf_plan(in);
	char h[32];

	if (p.shrink) {
		fmt_bytes(h, sizeof(h), p.limit / 2);
		snprintf(buf, len, "SO_SNDBUF <= %s", h);
	} else {
		snprintf(buf, len, "pace the sender");
	}
}

void advice__hint(const struct advice_input *in, char *buf, size_t len)
{
	int fam = in->family ? in->family : AF_INET;

	if (!len)
		return;
	buf[0] = 0;
	if (!in->drops && !in->skbs)
		return;
	switch (in->cause) {
	case CAUSE_RCVBUF:
		hint_rcvbuf(in, buf, len);
		return;
	case CAUSE_UDP_MEM:
		snprintf(buf, len, "udp_mem full: ss -uam");
		return;
	case CAUSE_QDISC:
		hint_sender(in, buf, len);
		return;
	case CAUSE_FRAG_TIMEOUT:
	case CAUSE_FRAG_TOO_FAR:
		if (in->mtu.known && advice__max_unfragmented(in->mtu.v, fam))
			snprintf(buf, len, "send <= %llu B",
				 (unsigned long long)advice__max_unfragmented(in->mtu.v, fam));
		else
			snprintf(buf, len, "send <= MTU - %u B", fam == AF_INET6 ? 48 : 28);
		return;
	case CAUSE_FRAG_DUP:
		snprintf(buf, len, "path duplicates frags");
		return;
	case CAUSE_NO_SOCKET:
		if (in->port.known)
			snprintf(buf, len, "nothing on :%llu", (unsigned long long)in->port.v);
		else
			snprintf(buf, len, "nothing on the port");
		return;
	case CAUSE_CHECKSUM:
		snprintf(buf, len, "bad sender or offload");
		return;
	case CAUSE_NETFILTER:
		snprintf(buf, len, "firewall rule: nft");
		return;
	case CAUSE_SOCKET_FILTER:
		snprintf(buf, len, "its BPF filter rejects");
		return;
	case CAUSE_SOCKET_CLOSE:
		snprintf(buf, len, "read before close()");
		return;
	case CAUSE_CPU_BACKLOG:
		if (in->netdev_max_backlog.known && in->netdev_max_backlog.v)
			snprintf(buf, len, "netdev_max_backlog=%llu",
				 (unsigned long long)sat_mul(in->netdev_max_backlog.v, 2));
		else
			snprintf(buf, len, "netdev_max_backlog x2");
		return;
	case CAUSE_NEIGH:
		snprintf(buf, len, "next hop: ip neigh");
		return;
	case CAUSE_ROUTE:
		snprintf(buf, len, "route: ip route get");
		return;
	case CAUSE_NOMEM:
		snprintf(buf, len, "kernel short of memory");
		return;
	case CAUSE_XDP:
	case CAUSE_TC:
	case CAUSE_CGROUP_BPF:
		snprintf(buf, len, "a BPF program: bpftool");
		return;
	case CAUSE_TUNNEL:
		snprintf(buf, len, "VNI/port: ip -d link");
		return;
	default:
		snprintf(buf, len, "see detail (Enter)");
		return;
	}
}

/* ---- a finding as JSON ------------------------------------------------- */

void advice__json_begin(struct json *j, const struct advice_finding *f,
			const struct advice_json_socket *sock)
{
	json_obj_begin(j);
	json_key(j, "cause");
	json_str(j, cause__name(f->cause));
	if (!sock)
		return;
	json_key(j, "socket");
	if (sock->known)
		json_u64(j, sock->id);
	else
		json_null(j);
	/* what "socket" holds: the socket cookie, or the inode for sockets
	 * keyed by inode (older kernels) */
	json_key(j, "socket_id_kind");
	if (sock->known)
		json_str(j, sock->by_inode ? "inode" : "cookie");
	else
		json_null(j);
}

void advice__json_end(struct json *j, const struct advice_finding *f, bool setting)
{
	json_key(j, "what");
	json_str(j, f->what);
	json_key(j, "evidence");
	json_str(j, f->evidence);
	json_key(j, "change");
	json_str(j, f->change);
	json_key(j, "verify");
	json_str(j, f->verify);
	if (setting) {
		/* the change's setting and value (null: none) */
		json_key(j, "setting");
		json_str(j, f->setting[0] ? f->setting : NULL);
		json_key(j, "value");
		if (f->has_value)
			json_u64(j, f->value);
		else
			json_null(j);
		json_key(j, "setting_scope");
		json_str(j, f->setting_scope[0] ? f->setting_scope : NULL);
		json_key(j, "setting_command");
		json_str(j, f->setting_command[0] ? f->setting_command : NULL);
		json_key(j, "setting_run_on");
		json_str(j, !f->setting_command[0] ? NULL : f->setting_on_host ? "host" : "here");
	}
	/* the rule's verdict and the span it judged (the same in every view) */
	json_key(j, "verdict");
	json_str(j, f->verdict[0] ? f->verdict : NULL);
	json_key(j, "sampled_s");
	if (f->sampled_s > 0)
		json_double(j, f->sampled_s, 3);
	else
		json_null(j);
	/* the kernel's drop windows the socket was judged by: the same
	 * figures in every view of one run (null: none) */
	json_key(j, "drop_windows");
	if (f->kernel_windows) {
		json_obj_begin(j);
		json_key(j, "window_s");
		json_double(j, f->window_s, 3);
		json_key(j, "span");
		json_u64(j, f->windows);
		json_key(j, "with_drops");
		json_u64(j, f->windows_dropping);
		json_key(j, "most_drops");
		json_u64(j, f->window_most);
		json_key(j, "delivered");
		if (f->window_rx)
			json_u64(j, f->window_delivered);
		else
			json_null(j);
		json_obj_end(j);
	} else {
		json_null(j);
	}
	json_obj_end(j);
}
