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

static int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

int mib__read_here(struct mib *m)
{
	static const char *files[] = { "/proc/thread-self/net/snmp",
				       "/proc/thread-self/net/snmp6",
				       "/proc/thread-self/net/netstat" };
	char *buf = malloc(65536);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int e = read_file(files[i], buf, 65536);

		if (e) {
			if (i == 0)
				err = e; /* snmp6 is absent without IPv6 */
			continue;
		}
		mib__parse(m, buf);
	}
	free(buf);
	return err;
}

static int read_cb(void *arg)
{
	return mib__read_here(arg);
}

int mib__read(const struct netns_table *t, uint32_t inode, struct mib *m)
{
	return netns__run_in(t, inode, read_cb, m);
}

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
	};

	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (map[i].c == c) {
			int k = map[i].n < n ? map[i].n : n;

			memcpy(ids, map[i].ids, k * sizeof(*ids));
			return k;
		}
	return 0;
}
