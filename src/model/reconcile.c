// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>
#include "reconcile.h"
#include "util.h"

int cause__mibs(enum cause c, enum mib_id *ids, int n)
{
	static const struct {
		enum cause c;
		enum mib_id ids[3];
		int n;
	} map[] = {
		{ CAUSE_RCVBUF, { MIB_UdpRcvbufErrors, MIB_Udp6RcvbufErrors, MIB_UdpLiteRcvbufErrors }, 3 },
		{ CAUSE_UDP_MEM, { MIB_UdpMemErrors, MIB_Udp6MemErrors }, 2 },
		{ CAUSE_NO_SOCKET, { MIB_UdpNoPorts, MIB_Udp6NoPorts }, 2 },
		{ CAUSE_CHECKSUM, { MIB_UdpInCsumErrors, MIB_Udp6InCsumErrors, MIB_UdpLiteInCsumErrors }, 3 },
		{ CAUSE_FRAG_TIMEOUT, { MIB_IpReasmTimeout, MIB_Ip6ReasmTimeout }, 2 },
		{ CAUSE_MCAST_UNWANTED, { MIB_UdpIgnoredMulti, MIB_Udp6IgnoredMulti }, 2 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (map[i].c == c) {
			int k = map[i].n < n ? map[i].n : n;

			memcpy(ids, map[i].ids, k * sizeof(*ids));
			return k;
		}
	return 0;
}

void reconcile__gro_note(uint64_t units, uint64_t datagrams, char *buf, size_t len)
{
	char d[24];

	if (units == datagrams) {
		snprintf(buf, len, "%s", "");
		return;
	}
	fmt_count(d, sizeof(d), datagrams);
	snprintf(buf, len, " (of %s datagrams: a GSO/GRO skb counted once, as the kernel counts)", d);
}

void reconcile__units_note(enum cause c, uint64_t units, uint64_t datagrams, char *buf,
			   size_t len)
{
	char d[24];

	if ((c != CAUSE_FRAG_TIMEOUT && c != CAUSE_FRAG_TOO_FAR) || units <= datagrams) {
		reconcile__gro_note(units, datagrams, buf, len);
		return;
	}
	fmt_count(d, sizeof(d), units - datagrams);
	snprintf(buf, len, " (%s of them are datagrams counted as another cause's: their first "
		 "fragment was dropped here)", d);
}

int64_t reconcile__diff(uint64_t udpdrop, uint64_t kernel)
{
	if (udpdrop >= kernel)
		return udpdrop - kernel > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(udpdrop - kernel);
	return kernel - udpdrop > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)(kernel - udpdrop);
}
