/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * User-facing causes: short, stable, lowercase names (a contract: add,
 * never rename), each mapped from one or more kernel reasons by name.
 */
#ifndef UD_CAUSES_H
#define UD_CAUSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cause {
	CAUSE_RCVBUF,
	CAUSE_UDP_MEM,
	CAUSE_NO_SOCKET,
	CAUSE_CHECKSUM,
	CAUSE_SOCKET_FILTER,
	CAUSE_NETFILTER,
	CAUSE_FRAG_TIMEOUT,
	CAUSE_FRAG_TOO_FAR,
	CAUSE_FRAG_DUP,
	CAUSE_QDISC,
	CAUSE_CPU_BACKLOG,
	CAUSE_XDP,
	CAUSE_TC,
	CAUSE_NOMEM,
	CAUSE_HEADER,
	CAUSE_ROUTE,
	CAUSE_NEIGH,
	CAUSE_SOCKET_CLOSE,
	CAUSE_CGROUP_BPF,
	CAUSE_OTHER,
	/*
	 * Added after other (numbers are never reused: traces and shed
	 * tallies name causes by number with their writer's list).
	 */
	CAUSE_TUNNEL,
	/*
	 * Multicast and broadcast nobody wanted (never a socket's drops):
	 * to a port no socket on it listens on (UdpIgnoredMulti), or to a
	 * group no socket joined on the receiving interface (no counter).
	 */
	CAUSE_MCAST_UNWANTED,
	CAUSE_MCAST_UNJOINED,
	CAUSE_MAX,
};

const char *cause__name(enum cause c);
/*
 * Drops no socket is known for (a flow row): "src -> dst:port" (no port
 * for a fragment without the UDP header), and why no socket, the same
 * words in every view.
 */
void flow__format(char *buf, int len, int family, const void *saddr,
		  const void *daddr, uint16_t dport);
const char *flow__why(bool kernel_socket, enum cause c, uint32_t netns, uint16_t dport);
/* One line: what the cause means for a UDP application. */
const char *cause__describe(enum cause c);
/* -1 if unknown */
int cause__from_name(const char *name);
/*
 * The cause for a kernel reason name (without the SKB_DROP_REASON_
 * prefix) and the key's UD_KEY_* flags. Unknown reasons are CAUSE_OTHER.
 */
enum cause cause__classify(const char *reason_name, uint32_t key_flags);

/*
 * Kernels without drop reasons (UD_KEY_SITE keys): the name of a udpdrop
 * site (enum ud_site; NULL past the last), which cause__classify maps.
 */
const char *cause__site_name(uint32_t site);
/* What else a cause derived from a site may be; NULL when it is exact. */
const char *cause__guessed_or(enum cause c);
/* Can a site name the cause at all? (Those that cannot count as other.) */
bool cause__site_known(enum cause c);
/* One line for the text views: how causes were derived, what is a guess. */
void cause__sites_note(char *buf, size_t len);
/*
 * JSON keys saying how causes were derived: "causes_from" ("drop_reason",
 * or "location" on kernels without reasons), "causes_guessed" (cause ->
 * what else it may be; {} with reasons) and "causes_unknown" (causes such
 * a kernel cannot tell, counted as other; [] with reasons).
 */
struct json;
void cause__json_derivation(struct json *j, bool sites);

#endif
