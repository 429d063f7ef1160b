// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * doctor's checklist (checklist.h): each setting judged against what the
 * sample observed, with the published rules' arithmetic (advice.h helpers):
 * a receive buffer holds rcvbuf / truesize datagrams, which a reader
 * stalled for longer than that many arrivals overflows; the per-CPU
 * backlog holds netdev_max_backlog packets; incomplete reassemblies wait
 * ipfrag_time within ipfrag_high_thresh; all UDP buffers share udp_mem.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "checklist.h"
#include "util.h"

uint64_t check__truesize(const struct check_rx *rx)
{
	uint32_t mtu = rx->mtu ? rx->mtu : 1500;
	int fam = rx->family ? rx->family : AF_INET;
	uint64_t payload;

	if (rx->size.known && rx->size.v > 0)
		payload = rx->size.v > ADVICE_PAYLOAD_MAX ? ADVICE_PAYLOAD_MAX
							  : (uint64_t)(rx->size.v + 0.5);
	else
		payload = advice__max_unfragmented(mtu, fam);
	return advice__truesize_estimate(payload, rx->mtu, fam);
}

uint64_t check__rcvbuf_for(const struct check_rx *rx, double s)
{
	double n = ceil(rx->dgps * s);
	double b = n * (double)check__truesize(rx);

	if (!(b > 0))
		return 0;
	if (b > (double)(UINT64_C(1) << 40))
		b = (double)(UINT64_C(1) << 40);
	return advice__round_up((uint64_t)b, 4096);
}

int check__drop_owner(const uint64_t *grew, int n, uint64_t mib_delta, bool *exact)
{
	int found = -1;

	*exact = false;
	for (int i = 0; i < n; i++) {
		if (!grew[i])
			continue;
		if (found >= 0)
			return -1; /* several: which is which is not known */
		found = i;
	}
	if (found < 0 || grew[found] > mib_delta)
		return -1;
	*exact = grew[found] == mib_delta;
	return found;
}

#define B(v) advice__bytes((char[64]){ 0 }, 64, (v))

/* " at its busiest 200 ms", " on average over the sample" */
static const char *rate_note(bool peak)
{
	return peak ? " at its busiest 200 ms" : " on average over the sample";
}

/* "the size is not known: ~2304 B, a full-MTU datagram's" */
static const char *ts_note(const struct check_rx *rx)
{
	return rx->size.known && rx->size.v > 0 ? "" : " (its datagrams' size is unknown: sized "
						       "for full-MTU ones)";
}

static struct check_item *item(const struct check_input *in, struct check_item *out, int max,
			       int *n, const char *setting, struct advice_u64 now)
{
	const struct advice_sysctl_scope *sc = advice__scope_of(&in->where, setting);
	const char *scope = sc ? advice__scope_name(sc->scope) : NULL;
	struct check_item *it;

	if (*n >= max)
		return NULL;
	it = &out[(*n)++];
	memset(it, 0, sizeof(*it));
	snprintf(it->setting, sizeof(it->setting), "%s", setting);
	snprintf(it->scope, sizeof(it->scope), "%s", scope ? scope : "");
	it->has_now = now.known;
	it->now = now.v;
	return it;
}

/* The command that sets the item's setting to `value` where it applies
 * (advice.h: the same words as the findings'), appended to why and kept
 * for scripts; then `tail`. */
static void item_cmd(const struct check_input *in, struct check_item *it, const char *value,
		     const char *tail)
{
	size_t l = strlen(it->why);

	advice__sysctl_phrase(&in->where, it->setting, value, it->why, sizeof(it->why));
	if (!advice__sysctl_cmd(&in->where, it->setting, value, it->command, sizeof(it->command),
				&it->on_host))
		it->command[0] = 0;
	l = strlen(it->why);
	snprintf(it->why + l, sizeof(it->why) - l, "%s", tail);
}

/* Is the setting host-wide and out of reach from the netns viewed? */
static bool host_only(const struct check_input *in, const char *setting)
{
	const struct advice_sysctl_scope *sc = advice__scope_of(&in->where, setting);

	return sc && sc->scope == ADVICE_SCOPE_HOST && !sc->settable;
}

static const char *u64s(char *buf, size_t len, uint64_t v)
{
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}
#define U64S(v) u64s((char[24]){ 0 }, 24, (v))

/* why the buffers go unjudged on a kernel that cannot count arrivals */
#define NO_ARRIVALS "A socket's arrival rate is counted from the sock:sk_data_ready tracepoint " \
	"(Linux 6.6 or later), which this kernel lacks: not judged."

/*
 * The socket's own finding, when the advice judged it: a buffer sized for
 * a stall does not fix a steady overload or a socket nobody reads, and
 * the checklist says so rather than contradict the finding.
 */
static void verdict_note(const struct check_rx *rx, struct check_item *it)
{
	size_t o = strlen(it->why);

	if (!rx->verdict)
		return;
	if (!strcmp(rx->verdict, "not_reading"))
		snprintf(it->why + o, sizeof(it->why) - o, " Its finding above: nothing reads it, so a buffer "
			 "of any size only postpones its drops.");
	else if (!strcmp(rx->verdict, "steady_overload") && rx->pace_dgps)
		snprintf(it->why + o, sizeof(it->why) - o, " Its finding above: a steady overload, which a "
			 "buffer only postpones; pace the sender to at most %llu datagrams/s.",
			 (unsigned long long)rx->pace_dgps);
	else if (!strcmp(rx->verdict, "steady_overload"))
		snprintf(it->why + o, sizeof(it->why) - o, " Its finding above: a steady overload, which a "
			 "buffer only postpones; pace the sender.");
}

static void rmem_default(const struct check_input *in, struct check_item *it)
{
	const struct check_rx *rx = &in->busiest_default;
	uint64_t ts, need;
	double ms;

	if (!in->rmem_default.known) {
		snprintf(it->why, sizeof(it->why), "net.core.rmem_default could not be read.");
		return;
	}
	if (in->counters_only && !in->nsockets_default) {
		snprintf(it->why, sizeof(it->why), "No UDP socket seen uses the default buffer (%s); arrival "
			 "rates are not observable without tracing (counters only).", B(in->rmem_default.v));
		return;
	}
	if (in->counters_only) {
		snprintf(it->why, sizeof(it->why), "%llu UDP socket%s use%s the default buffer (%s); their "
			 "arrival rates are not observable without tracing (counters only): as root, without "
			 "--counters-only, doctor traces them.", (unsigned long long)in->nsockets_default,
			 in->nsockets_default == 1 ? "" : "s", in->nsockets_default == 1 ? "s" : "",
			 B(in->rmem_default.v));
		return;
	}
	if (in->no_arrivals) {
		snprintf(it->why, sizeof(it->why), "%s", NO_ARRIVALS);
		return;
	}
	if (!rx->known || !(rx->dgps > 0)) {
		snprintf(it->why, sizeof(it->why), "No socket with the default buffer (%s) received during "
			 "the sample.", B(in->rmem_default.v));
		return;
	}
	it->evaluated = true;
	ts = check__truesize(rx);
	ms = floor(in->rmem_default.v / (double)ts) / rx->dgps * 1e3;
	need = check__rcvbuf_for(rx, CHECK_STALL_S);
	it->risky = ms < CHECK_STALL_S * 1e3 && need > in->rmem_default.v;
	snprintf(it->why, sizeof(it->why), "%s receives %.0f datagrams/s%s with the default buffer (%s, "
		 "no SO_RCVBUF): at ~%llu B truesize each%s it holds %.0f of them, %.1f ms of arrivals; a "
		 "reader stalled longer drops.", rx->who ? rx->who : "a socket", rx->dgps,
		 rate_note(rx->peak), B(in->rmem_default.v), (unsigned long long)ts, ts_note(rx),
		 floor(in->rmem_default.v / (double)ts), ms);
	if (it->risky) {
		it->has_value = true;
		it->value = need;
		snprintf(it->why + strlen(it->why), sizeof(it->why) - strlen(it->why),
			 " %.0f ms needs %s: ", CHECK_STALL_S * 1e3, B(need));
		item_cmd(in, it, U64S(need), host_only(in, it->setting)
			 ? " (or SO_RCVBUF in the application, up to rmem_max; SO_RCVBUFFORCE with "
			   "CAP_NET_ADMIN past it)." : " (or SO_RCVBUF in the application).");
	}
	verdict_note(rx, it);
}

static void rmem_max(const struct check_input *in, struct check_item *it)
{
	const struct check_rx *rx = &in->busiest;
	uint64_t need, req;

	if (!in->rmem_max.known) {
		snprintf(it->why, sizeof(it->why), "net.core.rmem_max could not be read.");
		return;
	}
	if (in->counters_only) {
		snprintf(it->why, sizeof(it->why), "The sockets' arrival rates are not observable without "
			 "tracing (counters only): as root, without --counters-only, doctor traces them.");
		return;
	}
	if (in->no_arrivals) {
		snprintf(it->why, sizeof(it->why), "%s", NO_ARRIVALS);
		return;
	}
	if (!rx->known || !(rx->dgps > 0)) {
		snprintf(it->why, sizeof(it->why), "No UDP socket received during the sample.");
		return;
	}
	it->evaluated = true;
	need = check__rcvbuf_for(rx, CHECK_STALL_S);
	req = need / 2; /* the kernel doubles a request */
	it->risky = req > in->rmem_max.v;
	snprintf(it->why, sizeof(it->why), "The busiest socket, %s, receives %.0f datagrams/s%s (rcvbuf "
		 "%s): a buffer for %.0f ms of them is %s (~%llu B truesize each%s), asked for as "
		 "SO_RCVBUF %llu, which rmem_max (%s) %s.", rx->who ? rx->who : "?", rx->dgps,
		 rate_note(rx->peak), B(rx->rcvbuf), CHECK_STALL_S * 1e3, B(need), (unsigned long long)check__truesize(rx),
		 ts_note(rx), (unsigned long long)req, B(in->rmem_max.v),
		 it->risky ? "silently cuts" : "allows");
	if (it->risky) {
		it->has_value = true;
		it->value = req;
		snprintf(it->why + strlen(it->why), sizeof(it->why) - strlen(it->why), " ");
		item_cmd(in, it, U64S(req), host_only(in, it->setting)
			 ? " (or SO_RCVBUFFORCE in the application, with CAP_NET_ADMIN: it ignores "
			   "rmem_max)." : ".");
	}
	verdict_note(rx, it);
}

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;

	while (p < v && p < (UINT64_C(1) << 62))
		p <<= 1;
	return p;
}

static void backlog(const struct check_input *in, struct check_item *it)
{
	double rate = in->pkt_rate.known ? in->pkt_rate.v : 0, ms;

	if (!in->netdev_max_backlog.known) {
		snprintf(it->why, sizeof(it->why), "net.core.netdev_max_backlog could not be read.");
		return;
	}
	if (!(rate > 0)) {
		snprintf(it->why, sizeof(it->why), "No UDP datagrams arrived during the sample.");
		return;
	}
	it->evaluated = true;
	ms = in->netdev_max_backlog.v / rate * 1e3;
	it->risky = ms < CHECK_BACKLOG_S * 1e3;
	snprintf(it->why, sizeof(it->why), "%.0f UDP datagrams/s arrived%s: if one CPU takes them all (one "
		 "receive queue, veth, loopback), its backlog of %llu packets absorbs %.2f ms of softirq "
		 "delay.", rate, in->pkt_rate_peak ? " in the busiest 200 ms" : " on average over the "
		 "sample", (unsigned long long)in->netdev_max_backlog.v, ms);
	if (it->risky) {
		it->has_value = true;
		it->value = pow2_at_least((uint64_t)ceil(rate * CHECK_BACKLOG_S));
		snprintf(it->why + strlen(it->why), sizeof(it->why) - strlen(it->why),
			 " %.0f ms needs %.0f: ", CHECK_BACKLOG_S * 1e3, ceil(rate * CHECK_BACKLOG_S));
		item_cmd(in, it, U64S(it->value), ".");
	}
}

static void ipfrag(const struct check_input *in, struct check_item *it)
{
	double rate = in->frag_dgps.known ? in->frag_dgps.v : 0;
	uint32_t mtu = in->frag_mtu ? in->frag_mtu : 1500;
	uint64_t per, t = in->ipfrag_time.known ? in->ipfrag_time.v : 30;
	int fam = in->frag_family == AF_INET6 ? AF_INET6 : AF_INET;
	double lost, held, need;

	if (!in->ipfrag_high_thresh.known) {
		snprintf(it->why, sizeof(it->why), "net.ipv4.ipfrag_high_thresh could not be read.");
		return;
	}
	if ((!(rate > 0) || in->frag_k < 2) && in->counters_only) {
		snprintf(it->why, sizeof(it->why), "Datagram sizes are not observable without tracing "
			 "(counters only): whether any are fragmented is not known.");
		return;
	}
	if ((!(rate > 0) || in->frag_k < 2) && in->sizes_unknown) {
		snprintf(it->why, sizeof(it->why), "No fragmented datagrams seen among the sockets with "
			 "drops; sizes unknown for sockets without drops (%llu receiving).",
			 (unsigned long long)in->sizes_unknown);
		return;
	}
	if (!(rate > 0) || in->frag_k < 2) {
		snprintf(it->why, sizeof(it->why), "No fragmented datagrams seen during the sample.");
		return;
	}
	it->evaluated = true;
	per = advice__truesize_estimate(advice__max_unfragmented(mtu, fam), mtu, fam);
	lost = rate * advice__message_loss(0.01, in->frag_k);
	held = lost * t;
	need = held * (in->frag_k - 1) * per;
	it->risky = need > in->ipfrag_high_thresh.v;
	snprintf(it->why, sizeof(it->why), "%.0f fragmented datagrams/s%s of %u fragments: at 1%% fragment "
		 "loss %.0f/s stay incomplete for ipfrag_time (%llu s), %.0f at once holding ~%.0f B "
		 "(~%llu B per fragment), against ipfrag_high_thresh %s; past it every fragment is "
		 "dropped.", rate, rate_note(in->frag_peak), in->frag_k, lost, (unsigned long long)t, held, need,
		 (unsigned long long)per, B(in->ipfrag_high_thresh.v));
	if (it->risky) {
		/* clamped as check__rcvbuf_for: a huge rate must not overflow */
		if (!(need < (double)(UINT64_C(1) << 40)))
			need = (double)(UINT64_C(1) << 40);
		it->has_value = true;
		it->value = advice__round_up((uint64_t)need, 1 << 20);
		snprintf(it->why + strlen(it->why), sizeof(it->why) - strlen(it->why), " ");
		item_cmd(in, it, U64S(it->value), ", or a shorter ipfrag_time, or no fragments "
			 "(smaller datagrams).");
	}
}

static void udp_mem(const struct check_input *in, struct check_item *it)
{
	uint64_t ps = in->page_size.known && in->page_size.v ? in->page_size.v : 4096, pages;

	if (!in->udp_mem[1].known || !in->udp_mem[2].known) {
		snprintf(it->why, sizeof(it->why), "net.ipv4.udp_mem could not be read.");
		return;
	}
	if (!in->rcvbuf_sum.known || !in->nsockets) {
		snprintf(it->why, sizeof(it->why), "No UDP sockets seen.");
		return;
	}
	it->evaluated = true;
	pages = (in->rcvbuf_sum.v + ps - 1) / ps;
	it->risky = pages > in->udp_mem[1].v;
	snprintf(it->why, sizeof(it->why), "The %llu UDP socket%s seen can hold %s in their receive "
		 "buffers together (%llu pages of %llu B), %s udp_mem's pressure threshold (%llu pages; "
		 "max %llu).", (unsigned long long)in->nsockets, in->nsockets == 1 ? "" : "s",
		 B(in->rcvbuf_sum.v), (unsigned long long)pages, (unsigned long long)ps,
		 it->risky ? "above" : "under", (unsigned long long)in->udp_mem[1].v,
		 (unsigned long long)in->udp_mem[2].v);
	if (it->risky) {
		it->has_value = true;
		it->value = pages * 2 > in->udp_mem[2].v ? pages * 2 : in->udp_mem[2].v;
		char three[72];

		snprintf(three, sizeof(three), "%llu %llu %llu",
			 (unsigned long long)(in->udp_mem[0].known ? in->udp_mem[0].v : pages / 2),
			 (unsigned long long)pages, (unsigned long long)it->value);
		snprintf(it->why + strlen(it->why), sizeof(it->why) - strlen(it->why),
			 " If they fill at once, every UDP socket drops (udp_mem): ");
		item_cmd(in, it, three, " (pages).");
	}
}

int check__build(const struct check_input *in, struct check_item *out, int max)
{
	int n = 0;
	struct check_item *it;

	if ((it = item(in, out, max, &n, "net.core.rmem_default", in->rmem_default)))
		rmem_default(in, it);
	if ((it = item(in, out, max, &n, "net.core.rmem_max", in->rmem_max)))
		rmem_max(in, it);
	if ((it = item(in, out, max, &n, "net.core.netdev_max_backlog", in->netdev_max_backlog)))
		backlog(in, it);
	if ((it = item(in, out, max, &n, "net.ipv4.ipfrag_high_thresh", in->ipfrag_high_thresh)))
		ipfrag(in, it);
	if ((it = item(in, out, max, &n, "net.ipv4.udp_mem", in->udp_mem[2])))
		udp_mem(in, it);
	return n;
}
