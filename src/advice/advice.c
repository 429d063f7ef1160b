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
 *
 * The rules themselves are in advice_rcvbuf.c (the receive buffer) and
 * advice_rules.c (every other cause), the wording they share and the
 * sysctl commands in advice_text.c; advice_internal.h joins them. Here:
 * the rules as numbers, advice__build, the tracks, the hint and JSON.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "advice_internal.h"
#include "json.h"
#include "udpdrop.h"
#include "units.h"
#include "util.h"

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


static int build_findings(const struct advice_input *in, struct advice_finding *out, int max)
{
	switch (in->cause) {
	case CAUSE_RCVBUF:
		return advice_rcvbuf(in, out, max);
	case CAUSE_UDP_MEM:
		return advice_udp_mem(in, out, max);
	case CAUSE_QDISC:
		return advice_sender(in, out, max);
	case CAUSE_FRAG_TIMEOUT:
	case CAUSE_FRAG_TOO_FAR:
	case CAUSE_FRAG_DUP:
		return advice_frag(in, out, max);
	default:
		return advice_simple(in, out, max);
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
	const struct rcvbuf_plan p = advice_rcvbuf_plan(in);
	char h[32];

	if (p.not_reading) {
		snprintf(buf, len, "not reading");
	} else if (p.pace && in->group) {
		snprintf(buf, len, "member: read faster"); /* never pace a group's sender */
	} else if (p.pace && p.pace_dgps) {
		snprintf(buf, len, "pace <= %llu/s", (unsigned long long)p.pace_dgps);
	} else if (p.pace) {
		snprintf(buf, len, "pace the sender");
	} else if (p.need) {
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
	const struct sndbuf_plan p = advice_sndbuf_plan(in);
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
		if (in->port.known && in->port_taken[0])
			snprintf(buf, len, ":%llu taken, not for it", (unsigned long long)in->port.v);
		else if (in->port.known)
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
	case CAUSE_MCAST_UNWANTED:
		if (in->port.known)
			snprintf(buf, len, "no group member on :%llu", (unsigned long long)in->port.v);
		else
			snprintf(buf, len, "no member on the port");
		return;
	case CAUSE_MCAST_UNJOINED:
		snprintf(buf, len, "group not joined here");
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
	/* false: a second diagnosis of the finding before it (its drops are
	 * there): sum the drops of those with true alone */
	json_key(j, "carries_drops");
	json_bool(j, !f->secondary);
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
