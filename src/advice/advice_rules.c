// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The rules of every cause but rcvbuf (advice_rcvbuf.c): udp_mem, the
 * sender's egress queue, fragmentation, and the others (no socket,
 * checksum, netfilter, ...), each one finding.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "advice_internal.h"

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

/* ---- udp_mem ----------------------------------------------------------- */

int advice_udp_mem(const struct advice_input *in, struct advice_finding *out, int max)
{
	int n = 0;
	struct advice_finding *f = advice_next(out, max, &n, in->cause);
	uint64_t ps = in->page_size.known && in->page_size.v ? in->page_size.v : 4096;
	bool have = in->udp_mem[0].known && in->udp_mem[1].known && in->udp_mem[2].known;
	char *e = f->evidence;
	size_t el = sizeof(f->evidence);

	snprintf(f->what, sizeof(f->what), "all UDP sockets together reached the system-wide limit "
		 "net.ipv4.udp_mem");
	advice_drops_line(in, e, el);
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
		advice_set_sysctl(in, f, "net.ipv4.udp_mem", sat_mul(in->udp_mem[2].v, 2), three);
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

struct sndbuf_plan advice_sndbuf_plan(const struct advice_input *in)
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

int advice_sender(const struct advice_input *in, struct advice_finding *out, int max)
{
	int n = 0;
	struct advice_finding *f = advice_next(out, max, &n, in->cause);
	const struct sndbuf_plan p = advice_sndbuf_plan(in);
	double payload = p.payload;
	const char *ifn = in->ifname ? in->ifname : "IF";
	uint64_t sb = p.sb, limit = p.limit;
	const char *sb_from = p.sb_from;
	char *e = f->evidence, *c = f->change;
	size_t el = sizeof(f->evidence), cl = sizeof(f->change);

	snprintf(f->what, sizeof(f->what), "the egress queue dropped datagrams this host sent: they "
		 "never left it");
	advice_drops_line(in, e, el);
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
		advice_set_value(f, "SO_SNDBUF", limit / 2);
	else if (in->txqueuelen.known && in->txqueuelen.v)
		advice_set_value(f, "txqueuelen", sat_mul(in->txqueuelen.v, 2));
	if (p.shrink) {
		add(c, cl, "Keep the send buffer under %s: setsockopt(fd, SOL_SOCKET, SO_SNDBUF, %llu) (the "
		    "kernel doubles it to %s)", B(limit), (unsigned long long)(limit / 2),
		    B(advice__sockbuf_effective(limit / 2, UINT64_MAX, false)));
		if (!in->sndbuf.known) {
			add(c, cl, ", or for sockets that set none: ");
			advice_add_sysctl(in, c, cl, "net.core.wmem_default", limit);
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

int advice_frag(const struct advice_input *in, struct advice_finding *out, int max)
{
	int n = 0;
	struct advice_finding *f = advice_next(out, max, &n, in->cause);
	int fam = in->family ? in->family : AF_INET;
	unsigned k = 0;
	bool k_est = false;
	char *e = f->evidence, *c = f->change;
	size_t el = sizeof(f->evidence), cl = sizeof(f->change);
	uint64_t maxpl = in->mtu.known ? advice__max_unfragmented(in->mtu.v, fam) : 0;

	/*
	 * Reassembly failures whose datagrams another cause counted (their
	 * first fragment dropped here: UD_KEY_REASM_UNIT): no loss of their
	 * own, and nothing to tune here; the first fragment's drop is.
	 */
	if (!in->drops && in->units && in->cause != CAUSE_FRAG_DUP) {
		f->secondary = true;
		snprintf(f->what, sizeof(f->what), "IP reassembly %s for datagrams whose first fragment "
			 "was dropped here (each counted as that drop)",
			 in->cause == CAUSE_FRAG_TIMEOUT ? "timed out" : "gave up");
		add(e, el, "%s reassembly %s (the kernel counts each: IpReasmFails",
		    N(in->units), plural(in->units, "failure", "failures"));
		if (in->cause == CAUSE_FRAG_TIMEOUT)
			add(e, el, ", IpReasmTimeout");
		add(e, el, "), %s fragment skbs freed with them, of datagrams already counted: their "
		    "first fragment was dropped on this host before reassembly.", N(in->skbs));
		add(c, cl, "Nothing to tune for these: fix what dropped the first fragments (its own "
		    "finding; a rule that matches ports sees only a datagram's first fragment, and the "
		    "rest then wait for reassembly until they time out).");
		snprintf(f->verify, sizeof(f->verify), "The first fragments' drops stop, and with them "
			 "these: nstat -az IpReasmFails stays put.");
		return n;
	}
	if (in->cause == CAUSE_FRAG_TIMEOUT)
		snprintf(f->what, sizeof(f->what), "IP reassembly timed out: a fragment of each datagram never "
			 "arrived");
	else if (in->cause == CAUSE_FRAG_TOO_FAR)
		snprintf(f->what, sizeof(f->what), "IP reassembly gave up: too many other datagrams from the "
			 "source arrived between its fragments");
	else
		snprintf(f->what, sizeof(f->what), "duplicate IP fragments were discarded");
	advice_drops_line(in, e, el);
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

		advice_set_sysctl(in, f, "net.ipv4.ipfrag_max_dist", dist, NULL);
		add(c, cl, "Tolerate more reordering: ");
		advice_add_sysctl(in, c, cl, "net.ipv4.ipfrag_max_dist", dist);
		add(c, cl, " (now %s; 0 turns the check off, and a larger value raises the odds of a wrong "
		    "assembly when the IP ID wraps). ", N(in->ipfrag_max_dist.v));
	}
	if (in->cause != CAUSE_FRAG_DUP) {
		if (maxpl && !f->has_value)
			advice_set_value(f, "datagram_size", maxpl);
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

int advice_simple(const struct advice_input *in, struct advice_finding *out, int max)
{
	int n = 0;
	struct advice_finding *f = advice_next(out, max, &n, in->cause);
	char *e = f->evidence;
	size_t el = sizeof(f->evidence);
	char port[16] = "";

	if (in->port.known)
		snprintf(port, sizeof(port), "%llu", (unsigned long long)in->port.v);
	snprintf(f->what, sizeof(f->what), "%s", cause__describe(in->cause));
	if (in->drops || !in->skbs) {
		advice_drops_line(in, e, el);
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
		if (in->port_taken[0]) {
			/* a socket is there, but not for these (not "nothing listens") */
			snprintf(f->what, sizeof(f->what), "no socket on port %s takes datagrams from this sender",
				 port);
			add(e, el, "A socket is bound to port %s (%s), but it does not take these datagrams%s%s%s: "
			    "a connected socket takes only its peer's, and one bound to an address only those "
			    "sent to it. The kernel answers each with an ICMP port unreachable (rate-limited).",
			    port, in->port_taken, in->who ? " (" : "", in->who ? in->who : "", in->who ? ")" : "");
			snprintf(f->change, sizeof(f->change), "Usually a stray sender: a reply that came after "
				 "its query's socket moved on, a scan, a peer with a stale address. If this sender "
				 "should reach port %s, have the service accept it (an unconnected socket, or one "
				 "bound to the wildcard: ss -uapn 'sport = :%s' shows each socket's peer); else fix "
				 "or stop the sender.", port, port);
			snprintf(f->verify, sizeof(f->verify), "nstat -az UdpNoPorts Udp6NoPorts stays put, and "
				 "udpdrop shows 0 no_socket drops for port %s.", port);
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
	case CAUSE_MCAST_UNWANTED:
		if (in->mib_ignored_multi.known)
			add(e, el, "The kernel counted UdpIgnoredMulti +%s in the namespace. ",
			    N(in->mib_ignored_multi.v));
		snprintf(f->what, sizeof(f->what), "multicast or broadcast to %s%s nobody here takes",
			 in->port.known ? "port " : "ports", in->port.known ? port : "");
		add(e, el, "Datagrams to a multicast group or a broadcast address%s%s%s found no socket "
		    "bound to %s%s that would take them. The kernel drops them quietly: no ICMP is sent "
		    "for multicast or broadcast, so the sender is never told.",
		    in->who ? " (" : "", in->who ? in->who : "", in->who ? ")" : "",
		    in->port.known ? "port " : "their port", in->port.known ? port : "");
		snprintf(f->change, sizeof(f->change), "Often nothing is wrong: a broadcast or a group "
			 "reaches every host on the link, wanted or not (discovery, DHCP, mDNS, a stream "
			 "this host does not subscribe to). If a service here should take them, start it "
			 "bound to the wildcard or the group's address on port %s (ss -ulpn 'sport = :%s'); "
			 "else find the sender (tcpdump -ni any 'udp port %s and (multicast or broadcast)') "
			 "and stop it or narrow its scope.",
			 in->port.known ? port : "PORT", in->port.known ? port : "PORT",
			 in->port.known ? port : "PORT");
		snprintf(f->verify, sizeof(f->verify), "nstat -az UdpIgnoredMulti Udp6IgnoredMulti stays "
			 "put, and udpdrop shows 0 mcast_unwanted drops%s%s.",
			 in->port.known ? " for port " : "", in->port.known ? port : "");
		break;
	case CAUSE_MCAST_UNJOINED:
		snprintf(f->what, sizeof(f->what), "multicast to a group no socket here joined");
		add(e, el, "Datagrams to a multicast group%s%s%s arrived on an interface where no socket "
		    "joined that group, so the IP layer dropped them before any socket was looked up "
		    "(a socket bound to the port receives a group only once one joins it on that "
		    "interface). The kernel counts these in no UDP counter.",
		    in->who ? " (" : "", in->who ? in->who : "", in->who ? ")" : "");
		snprintf(f->change, sizeof(f->change), "If this host should receive the group, the "
			 "receiving application must join it on the interface the datagrams arrive on "
			 "(IP_ADD_MEMBERSHIP or IPV6_JOIN_GROUP with that interface; ip maddr show dev IF "
			 "lists what is joined, and a switch doing IGMP snooping needs the join to forward "
			 "the group). If not, the sender or the network sends the group where nobody wants it.");
		snprintf(f->verify, sizeof(f->verify), "ip maddr show lists the group on the interface, "
			 "and udpdrop shows 0 mcast_unjoined drops.");
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
		advice_set_sysctl(in, f, "net.core.netdev_max_backlog",
				  in->netdev_max_backlog.known && in->netdev_max_backlog.v
					  ? sat_mul(in->netdev_max_backlog.v, 2) : 2000, NULL);
		if (in->netdev_max_backlog.known)
			add(e, el, "A CPU's input backlog (net.core.netdev_max_backlog = %s packets) was full: "
			    "packets came faster than that CPU's softirq took them (RPS, veth and loopback "
			    "traffic queue there).", N(in->netdev_max_backlog.v));
		else
			add(e, el, "A CPU's input backlog (net.core.netdev_max_backlog) was full.");
		advice_add_sysctl(in, f->change, sizeof(f->change), "net.core.netdev_max_backlog",
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
