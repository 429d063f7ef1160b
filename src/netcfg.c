// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The network settings of a netns: sysctls and interfaces (netcfg.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "netcfg.h"

const char *const netcfg__sysctl_names[NETCFG_NSYSCTLS] = {
	[NETCFG_RMEM_DEFAULT] = "net.core.rmem_default",
	[NETCFG_RMEM_MAX] = "net.core.rmem_max",
	[NETCFG_WMEM_DEFAULT] = "net.core.wmem_default",
	[NETCFG_WMEM_MAX] = "net.core.wmem_max",
	[NETCFG_UDP_MEM] = "net.ipv4.udp_mem",
	[NETCFG_NETDEV_MAX_BACKLOG] = "net.core.netdev_max_backlog",
	[NETCFG_IPFRAG_HIGH_THRESH] = "net.ipv4.ipfrag_high_thresh",
	[NETCFG_IPFRAG_LOW_THRESH] = "net.ipv4.ipfrag_low_thresh",
	[NETCFG_IPFRAG_TIME] = "net.ipv4.ipfrag_time",
	[NETCFG_IPFRAG_MAX_DIST] = "net.ipv4.ipfrag_max_dist",
};

/* Whitespace runs to one space, none at either end (in place). */
static void collapse_ws(char *s)
{
	char *o = s;
	bool space = false;

	for (char *p = s; *p; p++) {
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
			space = o != s;
			continue;
		}
		if (space)
			*o++ = ' ';
		space = false;
		*o++ = *p;
	}
	*o = 0;
}

int netcfg__sysctl_read(const char *name, char *buf, size_t len)
{
	char path[128];
	FILE *f;
	size_t n;
	int i;

	i = snprintf(path, sizeof(path), "/proc/sys/%s", name);
	if (i < 0 || (size_t)i >= sizeof(path))
		return -ENAMETOOLONG;
	for (char *p = path + 10; *p; p++)
		if (*p == '.')
			*p = '/';
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	collapse_ws(buf);
	return 0;
}

static int sysctls_here(void *arg)
{
	struct netcfg_sysctls *s = arg;

	for (size_t i = 0; i < NETCFG_NSYSCTLS; i++)
		if (!s->ok[i])
			s->ok[i] = !netcfg__sysctl_read(netcfg__sysctl_names[i], s->v[i],
							sizeof(s->v[i]));
	return 0;
}

void netcfg__sysctls(const struct netns_table *nt, uint32_t inode, struct netcfg_sysctls *s)
{
	memset(s, 0, sizeof(*s));
	if (inode && inode != nt->self)
		netns__run_in(nt, inode, sysctls_here, s);
	for (size_t i = 0; i < NETCFG_NSYSCTLS; i++)
		s->from_self[i] = !s->ok[i] && inode && inode != nt->self;
	sysctls_here(s);
}

bool netcfg__u64(const struct netcfg_sysctls *s, enum netcfg_sysctl i, unsigned field,
		 uint64_t *out)
{
	const char *p;
	char *end;
	unsigned long long v;

	if ((unsigned)i >= NETCFG_NSYSCTLS || !s->ok[i])
		return false;
	p = s->v[i];
	for (unsigned k = 0; k < field; k++) {
		p = strchr(p, ' ');
		if (!p)
			return false;
		p++;
	}
	if (*p < '0' || *p > '9')
		return false;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno || (*end && *end != ' '))
		return false;
	*out = v;
	return true;
}

static int ifaces_here(void *arg)
{
	struct netcfg_ifaces *il = arg;
	struct if_nameindex *ifs = if_nameindex();
	int fd;

	if (!ifs)
		return -errno;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (struct if_nameindex *p = ifs; p->if_index && il->n < NETCFG_IFACES_MAX; p++) {
		struct trace_iface *t = &il->v[il->n];
		struct ifreq ifr = {};

		snprintf(il->names[il->n], IF_NAMESIZE, "%s", p->if_name);
		t->name = il->names[il->n];
		t->ifindex = p->if_index;
		t->netns = il->netns;
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", p->if_name);
		if (fd >= 0 && !ioctl(fd, SIOCGIFMTU, &ifr))
			t->mtu = ifr.ifr_mtu;
		if (fd >= 0 && !ioctl(fd, SIOCGIFTXQLEN, &ifr))
			t->txqueuelen = ifr.ifr_qlen;
		il->n++;
	}
	if (fd >= 0)
		close(fd);
	if_freenameindex(ifs);
	return 0;
}

int netcfg__ifaces(const struct netns_table *nt, uint32_t inode, struct netcfg_ifaces *il)
{
	il->netns = inode;
	il->n = 0;
	return netns__run_in(nt, inode, ifaces_here, il);
}
