// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>
#include "causes.h"
#include "json.h"
#include "udpdrop.h"
#include "util.h"

static const struct {
	const char *name;
	const char *describe;
} causes[CAUSE_MAX] = {
	[CAUSE_RCVBUF] = { "rcvbuf", "socket receive buffer full: the reader is slower than the arrivals" },
	[CAUSE_UDP_MEM] = { "udp_mem", "system-wide UDP memory limit (net.ipv4.udp_mem) reached" },
	[CAUSE_NO_SOCKET] = { "no_socket", "nothing listening on the destination port" },
	[CAUSE_CHECKSUM] = { "checksum", "bad checksum: a broken sender or checksum offload" },
	[CAUSE_SOCKET_FILTER] = { "socket_filter", "rejected by a BPF socket filter attached to the socket" },
	[CAUSE_NETFILTER] = { "netfilter", "dropped by a netfilter (nftables/iptables) rule" },
	[CAUSE_FRAG_TIMEOUT] = { "frag_timeout", "IP reassembly timed out: a fragment never arrived (net.ipv4.ipfrag_time)" },
	[CAUSE_FRAG_TOO_FAR] = { "frag_too_far", "IP reassembly gave up: too many newer datagrams (net.ipv4.ipfrag_max_dist)" },
	[CAUSE_FRAG_DUP] = { "frag_dup", "duplicate IP fragment discarded (the datagram may still arrive)" },
	[CAUSE_QDISC] = { "qdisc", "dropped by the egress queueing discipline (queue full or over limit)" },
	[CAUSE_CPU_BACKLOG] = { "cpu_backlog", "per-CPU input backlog full (net.core.netdev_max_backlog)" },
	[CAUSE_XDP] = { "xdp", "dropped by an XDP program" },
	[CAUSE_TC] = { "tc", "dropped by a tc filter or action" },
	[CAUSE_NOMEM] = { "nomem", "the kernel could not allocate memory" },
	[CAUSE_HEADER] = { "header", "malformed or truncated header" },
	[CAUSE_ROUTE] = { "route", "no route, bad address or reverse-path filter" },
	[CAUSE_NEIGH] = { "neigh", "neighbour (ARP/ND) resolution failed or its queue was full" },
	[CAUSE_SOCKET_CLOSE] = { "socket_close", "socket closed with datagrams still queued (never read)" },
	[CAUSE_CGROUP_BPF] = { "cgroup_bpf", "dropped by a cgroup BPF program" },
	[CAUSE_OTHER] = { "other", "a kernel reason udpdrop has no cause for (see the raw reason)" },
	[CAUSE_TUNNEL] = { "tunnel", "a kernel tunnel (VXLAN, GENEVE, ...) refused the encapsulated packet: unknown VNI, bad tunnel header or ECN" },
	[CAUSE_MCAST_UNWANTED] = { "mcast_unwanted", "multicast or broadcast to a port no socket listens on there (no ICMP is sent)" },
	[CAUSE_MCAST_UNJOINED] = { "mcast_unjoined", "multicast to a group no socket joined on the receiving interface" },
};

const char *cause__name(enum cause c)
{
	return c < CAUSE_MAX ? causes[c].name : "other";
}

const char *cause__describe(enum cause c)
{
	return c < CAUSE_MAX ? causes[c].describe : causes[CAUSE_OTHER].describe;
}

int cause__from_name(const char *name)
{
	for (int i = 0; i < CAUSE_MAX; i++)
		if (!strcmp(causes[i].name, name))
			return i;
	return -1;
}

/* Exact names first, then prefixes; order matters only among prefixes. */
static const struct {
	const char *reason;
	bool prefix;
	enum cause cause;
} rules[] = {
	{ "SOCKET_RCVBUFF", false, CAUSE_RCVBUF },
	{ "PROTO_MEM", false, CAUSE_UDP_MEM },
	{ "NO_SOCKET", false, CAUSE_NO_SOCKET },
	{ "UDP_CSUM", false, CAUSE_CHECKSUM },
	{ "IP_CSUM", false, CAUSE_CHECKSUM },
	{ "SKB_CSUM", false, CAUSE_CHECKSUM },
	{ "TCP_CSUM", false, CAUSE_CHECKSUM },
	{ "ICMP_CSUM", false, CAUSE_CHECKSUM },
	{ "SOCKET_FILTER", false, CAUSE_SOCKET_FILTER },
	{ "NETFILTER_DROP", false, CAUSE_NETFILTER },
	{ "FRAG_REASM_TIMEOUT", false, CAUSE_FRAG_TIMEOUT },
	{ "FRAG_TOO_FAR", false, CAUSE_FRAG_TOO_FAR },
	{ "DUP_FRAG", false, CAUSE_FRAG_DUP },
	{ "CPU_BACKLOG", false, CAUSE_CPU_BACKLOG },
	{ "XDP", false, CAUSE_XDP },
	{ "NOMEM", false, CAUSE_NOMEM },
	{ "PFMEMALLOC", false, CAUSE_NOMEM },
	{ "SKB_UCOPY_FAULT", false, CAUSE_NOMEM },
	{ "PKT_TOO_SMALL", false, CAUSE_HEADER },
	{ "PKT_TOO_BIG", false, CAUSE_HEADER },
	{ "IP_INHDR", false, CAUSE_HEADER },
	{ "HDR_TRUNC", false, CAUSE_HEADER },
	{ "INVALID_PROTO", false, CAUSE_HEADER },
	{ "IPV6_BAD_EXTHDR", false, CAUSE_HEADER },
	{ "UNHANDLED_PROTO", false, CAUSE_HEADER },
	{ "OTHERHOST", false, CAUSE_ROUTE },
	{ "IP_RPFILTER", false, CAUSE_ROUTE },
	{ "IP_NOPROTO", false, CAUSE_ROUTE },
	{ "UNICAST_IN_L2_MULTICAST", false, CAUSE_ROUTE },
	{ "IPV6DISABLED", false, CAUSE_ROUTE },
	{ "SOCKET_CLOSE", false, CAUSE_SOCKET_CLOSE },
	{ "QUEUE_PURGE", false, CAUSE_SOCKET_CLOSE },
	{ "BPF_CGROUP_EGRESS", false, CAUSE_CGROUP_BPF },
	{ "QDISC_", true, CAUSE_QDISC },
	{ "FQ_", true, CAUSE_QDISC },
	{ "CAKE_", true, CAUSE_QDISC },
	{ "DUALPI2_", true, CAUSE_QDISC },
	{ "TC_", true, CAUSE_TC },
	{ "IP_OUTNOROUTES", false, CAUSE_ROUTE },
	{ "IP_IN", true, CAUSE_ROUTE },  /* IP_INADDRERRORS, IP_INNOROUTES */
	{ "IP_LOCAL", true, CAUSE_ROUTE },
	{ "IP_INVALID_", true, CAUSE_ROUTE },
	{ "NEIGH_", true, CAUSE_NEIGH },
	/* a kernel tunnel's socket (vxlan_rcv, ip_tunnel_rcv, ...) */
	{ "VXLAN_", true, CAUSE_TUNNEL },
	{ "IP_TUNNEL_ECN", false, CAUSE_TUNNEL },
	{ "TUNNEL_TXINFO", false, CAUSE_TUNNEL },
};

/*
 * Kernels without drop reasons: udpdrop's own sites (enum ud_site), named
 * in lowercase so that no name can be a kernel reason's. `exact`: the site
 * is that cause and no other; else the cause is the likeliest of a few,
 * and `or` names the others.
 */
static const struct {
	const char *name;
	enum cause cause;
	const char *or; /* NULL: exact */
} sites[UD_SITE_MAX] = {
	[UD_SITE_UNKNOWN] = { "unknown_site", CAUSE_OTHER, NULL },
	[UD_SITE_RCVBUF] = { "udp_enqueue:rcvbuf", CAUSE_RCVBUF, NULL },
	[UD_SITE_UDP_MEM] = { "udp_enqueue:udp_mem", CAUSE_UDP_MEM, NULL },
	[UD_SITE_NO_SOCKET] = { "udp_rcv:no_socket", CAUSE_NO_SOCKET, NULL },
	[UD_SITE_RCV_CSUM] = { "udp_rcv:bad_checksum", CAUSE_CHECKSUM, NULL },
	[UD_SITE_RCV_LENGTH] = { "udp_rcv:bad_length", CAUSE_HEADER, NULL },
	[UD_SITE_QUEUE_FILTER] = { "udp_queue:filter", CAUSE_SOCKET_FILTER,
				   "an IPsec policy or a UDP-Lite coverage drop" },
	[UD_SITE_QUEUE_CSUM] = { "udp_queue:bad_checksum", CAUSE_CHECKSUM, NULL },
	[UD_SITE_RECV_CSUM] = { "udp_recvmsg:bad_checksum", CAUSE_CHECKSUM, NULL },
	[UD_SITE_CLOSE] = { "udp_close", CAUSE_SOCKET_CLOSE, NULL },
	[UD_SITE_FRAG_EXPIRE] = { "frag_expire", CAUSE_FRAG_TIMEOUT, NULL },
	[UD_SITE_FRAG_PURGE] = { "frag_purge", CAUSE_FRAG_TIMEOUT,
				 "frag_too_far or an overlapping fragment" },
	[UD_SITE_FRAG_QUEUE] = { "frag_queue", CAUSE_FRAG_DUP,
				 "an overlapping or bad fragment" },
	[UD_SITE_NETFILTER] = { "nf_hook_slow", CAUSE_NETFILTER, NULL },
	[UD_SITE_QDISC] = { "kfree_skb_list", CAUSE_QDISC,
			    "another list of skbs freed at once" },
	[UD_SITE_BACKLOG] = { "enqueue_to_backlog", CAUSE_CPU_BACKLOG, NULL },
	[UD_SITE_NEIGH] = { "neigh", CAUSE_NEIGH, NULL },
	[UD_SITE_UDP_QUEUE] = { "udp_enqueue", CAUSE_RCVBUF,
				"udp_mem (IPv6 before 6.10 does not say which)" },
	[UD_SITE_MCAST_UNWANTED] = { "udp_rcv:mcast_unwanted", CAUSE_MCAST_UNWANTED, NULL },
	/* without reasons the route's other refusals of a group land here */
	[UD_SITE_MCAST_UNJOINED] = { "ip_rcv:mcast_unjoined", CAUSE_MCAST_UNJOINED,
				     "a multicast source the route refused (martian, rp_filter)" },
};

const char *cause__site_name(uint32_t site)
{
	return site < UD_SITE_MAX ? sites[site].name : NULL;
}

static int site_by_name(const char *name)
{
	for (int i = 0; i < UD_SITE_MAX; i++)
		if (!strcmp(sites[i].name, name))
			return i;
	return -1;
}

const char *cause__guessed_or(enum cause c)
{
	for (int i = 0; i < UD_SITE_MAX; i++)
		if (sites[i].cause == c && sites[i].or)
			return sites[i].or;
	return NULL;
}

bool cause__site_known(enum cause c)
{
	if (c == CAUSE_OTHER)
		return true;
	for (int i = 0; i < UD_SITE_MAX; i++)
		if (sites[i].cause == c)
			return true;
	return false;
}

void cause__sites_note(char *buf, size_t len)
{
	size_t used = 0;
	bool first = true;

	used += snprintf(buf + used, len - used,
			 "causes derived from drop locations (this kernel has no drop reasons, before 5.17)");
	for (int c = 0; c < CAUSE_MAX && used < len; c++) {
		const char *or = cause__guessed_or(c);

		if (!or)
			continue;
		used += snprintf(buf + used, len - used, "%s %s may be %s",
				 first ? "; best guesses:" : ",", cause__name(c), or);
		first = false;
	}
	first = true;
	for (int c = 0; c < CAUSE_MAX && used < len; c++) {
		if (cause__site_known(c))
			continue;
		used += snprintf(buf + used, len - used, "%s%s",
				 first ? "; not known, counted as other: " : " ",
				 cause__name(c));
		first = false;
	}
}

enum cause cause__classify(const char *reason, uint32_t flags)
{
	/* lowercase: never a kernel reason's name, flags or not (overflow) */
	int site = site_by_name(reason);

	if (site >= 0)
		return sites[site].cause;
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
		bool hit = rules[i].prefix
				   ? !strncmp(reason, rules[i].reason,
					      strlen(rules[i].reason))
				   : !strcmp(reason, rules[i].reason);
		if (hit)
			return rules[i].cause;
	}
	/* a closing socket's queue, freed without a reason (6.18 does so) */
	if (flags & UD_KEY_CLOSE)
		return CAUSE_SOCKET_CLOSE;
	/* Kernels without reasons: the udp_fail tracepoint's rc tells. */
	if (flags & UD_KEY_FAIL_RCVBUF)
		return CAUSE_RCVBUF;
	if (flags & UD_KEY_FAIL_MEM)
		return CAUSE_UDP_MEM;
	return CAUSE_OTHER;
}

void cause__json_derivation(struct json *j, bool sites)
{
	json_key(j, "causes_from");
	json_str(j, sites ? "location" : "drop_reason");
	json_key(j, "causes_guessed");
	json_obj_begin(j);
	for (int c = 0; sites && c < CAUSE_MAX; c++) {
		const char *or = cause__guessed_or(c);

		if (or) {
			json_key(j, cause__name(c));
			json_str(j, or);
		}
	}
	json_obj_end(j);
	json_key(j, "causes_unknown");
	json_arr_begin(j);
	for (int c = 0; sites && c < CAUSE_MAX; c++)
		if (!cause__site_known(c))
			json_str(j, cause__name(c));
	json_arr_end(j);
}

void flow__format(char *buf, int len, int family, const void *saddr,
		  const void *daddr, uint16_t dport)
{
	char src[64], dst[80];

	fmt_addr(src, sizeof(src), family, saddr);
	if (dport)
		fmt_endpoint(dst, sizeof(dst), family, daddr, dport);
	else /* a non-first fragment: no UDP header, no port */
		fmt_addr(dst, sizeof(dst), family, daddr);
	snprintf(buf, len, "%s -> %s", src, dst);
}

const char *flow__why(bool kernel_socket, enum cause c, uint32_t netns, uint16_t dport)
{
	if (kernel_socket)
		return "a socket with no cookie or inode (a kernel socket)";
	if (c == CAUSE_NO_SOCKET)
		return "no socket bound to the port";
	if (!netns)
		return "netns unknown: no socket matches the flow";
	if (!dport)
		return "IP fragment without a UDP header";
	return "no socket matches the destination";
}
