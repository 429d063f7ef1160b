/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel's own counters (SNMP MIBs) of one network namespace, read
 * from /proc/net/{snmp,snmp6,netstat} inside it: the ground truth udpdrop's
 * counts reconcile with.
 */
#ifndef UD_MIB_H
#define UD_MIB_H

#include <stdint.h>
#include "netns.h"

/* The counters udpdrop reports, in this order (names as nstat prints them). */
#define MIB_NAMES(X)                                                           \
	X(UdpInDatagrams) X(UdpInErrors) X(UdpRcvbufErrors) X(UdpNoPorts)      \
	X(UdpInCsumErrors) X(UdpMemErrors) X(UdpSndbufErrors)                  \
	X(Udp6InDatagrams) X(Udp6InErrors) X(Udp6RcvbufErrors) X(Udp6NoPorts)  \
	X(Udp6InCsumErrors) X(Udp6MemErrors) X(Udp6SndbufErrors)               \
	X(UdpLiteRcvbufErrors) X(UdpLiteInCsumErrors)                         \
	X(IpReasmFails) X(IpReasmTimeout) X(IpExtReasmOverlaps)                   \
	X(Ip6ReasmFails) X(Ip6ReasmTimeout)                                    \
	X(UdpIgnoredMulti) X(Udp6IgnoredMulti)

enum mib_id {
#define X(n) MIB_##n,
	MIB_NAMES(X)
#undef X
	MIB_MAX,
};

struct mib {
	uint64_t v[MIB_MAX];
	uint8_t present[MIB_MAX]; /* this kernel has the counter */
};

const char *mib__name(enum mib_id id);
/*
 * How far counter id rose from base to cur: 0 when cur is less (counters
 * only grow, so another netns now has the inode: no honest delta exists).
 */
uint64_t mib__diff(const struct mib *base, const struct mib *cur, enum mib_id id);
/* Parse one file's text ("Udp: a b\nUdp: 1 2" or "Udp6X  12" lines). */
void mib__parse(struct mib *m, const char *text);
/* Read the counters of the current netns. */
int mib__read_here(struct mib *m);
/* Read the counters of netns `inode`. */
int mib__read(const struct netns_table *t, uint32_t inode, struct mib *m);

#endif
