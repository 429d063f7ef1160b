// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mib.h"
#include "util.h"

static const char *names[MIB_MAX] = {
#define X(n) #n,
	MIB_NAMES(X)
#undef X
};

const char *mib__name(enum mib_id id)
{
	return id < MIB_MAX ? names[id] : "?";
}

uint64_t mib__diff(const struct mib *base, const struct mib *cur, enum mib_id id)
{
	/* counters only grow: less than the base means another netns now
	 * has this inode (reused), so no honest delta exists: say 0 */
	return cur->v[id] >= base->v[id] ? cur->v[id] - base->v[id] : 0;
}

static void set(struct mib *m, const char *name, uint64_t v)
{
	for (int i = 0; i < MIB_MAX; i++)
		if (!strcmp(names[i], name)) {
			m->v[i] = v;
			m->present[i] = 1;
			return;
		}
}

/* Could a counter of this group (or snmp6 name) be one of ours? */
static bool wanted(const char *name, size_t len)
{
	static const char *const groups[] = { "Udp", "UdpLite", "Ip", "IpExt" };

	if (len == (size_t)-1) /* an snmp6 name */
		return !strncmp(name, "Udp", 3) || !strncmp(name, "Ip6", 3);
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (strlen(groups[i]) == len && !strncmp(groups[i], name, len))
			return true;
	return false;
}

/*
 * Two formats: snmp/netstat pair a header line ("Udp: InDatagrams ...")
 * with a value line ("Udp: 12 ..."); snmp6 has "Udp6InDatagrams 12".
 * Groups with none of our counters (Tcp, TcpExt, Icmp...) are skipped.
 */
void mib__parse(struct mib *m, const char *text)
{
	char *copy = strdup(text), *save = NULL, *line, *hdr = NULL;

	if (!copy)
		return;
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');

		if (!colon) {
			char name[128];
			unsigned long long v;

			if (wanted(line, (size_t)-1) &&
			    sscanf(line, "%127s %llu", name, &v) == 2)
				set(m, name, v);
			continue;
		}
		if (!hdr || strncmp(hdr, line, colon - line + 1)) {
			hdr = line; /* a header line: remember it */
			continue;
		}
		/* the value line for hdr: walk both */
		char prefix[64], *hs = NULL, *vs = NULL, *h, *v;
		size_t plen = colon - line;

		if (!wanted(line, plen)) {
			hdr = NULL;
			continue;
		}
		if (plen >= sizeof(prefix))
			plen = sizeof(prefix) - 1;
		memcpy(prefix, line, plen);
		prefix[plen] = '\0';
		h = strtok_r(strchr(hdr, ':') + 1, " ", &hs);
		v = strtok_r(colon + 1, " ", &vs);
		while (h && v) {
			char name[192];

			snprintf(name, sizeof(name), "%s%s", prefix, h);
			set(m, name, strtoull(v, NULL, 10));
			h = strtok_r(NULL, " ", &hs);
			v = strtok_r(NULL, " ", &vs);
		}
		hdr = NULL;
	}
	free(copy);
}
