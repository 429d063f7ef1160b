// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The advice's view of the live system (live_env.h): a netns's sysctls
 * and its interface, read through netcfg. In cmd/ as top and doctor
 * share it; the advice adapter (advice_model.c) stays pure.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "live_env.h"
#include "netcfg.h"
#include "util.h"

static struct advice_u64 sysctl_u64(const struct netcfg_sysctls *sv, enum netcfg_sysctl i,
				     unsigned field)
{
	uint64_t v;

	return netcfg__u64(sv, i, field, &v) ? ADVICE_U64(v) : (struct advice_u64){ false, 0 };
}

void live_env__sysctls(struct live_env *e, const struct netcfg_sysctls *sv)
{
	long ps = sysconf(_SC_PAGESIZE);

	if (ps > 0)
		e->page_size = ADVICE_U64((uint64_t)ps);
	e->rmem_default = sysctl_u64(sv, NETCFG_RMEM_DEFAULT, 0);
	e->rmem_max = sysctl_u64(sv, NETCFG_RMEM_MAX, 0);
	e->wmem_default = sysctl_u64(sv, NETCFG_WMEM_DEFAULT, 0);
	e->wmem_max = sysctl_u64(sv, NETCFG_WMEM_MAX, 0);
	e->netdev_max_backlog = sysctl_u64(sv, NETCFG_NETDEV_MAX_BACKLOG, 0);
	for (unsigned i = 0; i < 3; i++)
		e->udp_mem[i] = sysctl_u64(sv, NETCFG_UDP_MEM, i);
	/* udp_mem's three go together: all or none */
	if (!e->udp_mem[0].known || !e->udp_mem[1].known || !e->udp_mem[2].known)
		memset(e->udp_mem, 0, sizeof(e->udp_mem));
	e->ipfrag_time = sysctl_u64(sv, NETCFG_IPFRAG_TIME, 0);
	e->ipfrag_high_thresh = sysctl_u64(sv, NETCFG_IPFRAG_HIGH_THRESH, 0);
	e->ipfrag_max_dist = sysctl_u64(sv, NETCFG_IPFRAG_MAX_DIST, 0);
	e->where = sv->where;
}

void live_env__iface(struct live_env *e, const struct trace_iface *f)
{
	snprintf(e->ifname, sizeof(e->ifname), "%s", f->name);
	str_printable(e->ifname); /* the advice quotes it; any byte but '/', ':', space is allowed */
	if (f->mtu)
		e->mtu = ADVICE_U64(f->mtu);
	e->txqueuelen = ADVICE_U64(f->txqueuelen);
}

void live_env__read(struct model *m, uint32_t netns, bool loopback, struct live_env *e)
{
	struct netcfg_sysctls sv;
	struct netcfg_ifaces *il;
	const struct trace_iface *found = NULL;

	memset(e, 0, sizeof(*e));
	e->netns = netns;
	e->loopback = loopback;
	e->read_ns = now_ns();
	/* the netns's own, or udpdrop's where it has none (netcfg says which) */
	netcfg__sysctls(&m->nt, netns, &sv);
	live_env__sysctls(e, &sv);

	/* the interface: lo, or the only other one (else none: ambiguous) */
	il = calloc(1, sizeof(*il));
	if (!il || netcfg__ifaces(&m->nt, netns ? netns : m->nt.self, il)) {
		free(il);
		return;
	}
	for (uint32_t i = 0; i < il->n; i++) {
		if (!strcmp(il->v[i].name, "lo") != loopback)
			continue;
		if (found) {
			found = NULL;
			break;
		}
		found = &il->v[i];
	}
	if (found)
		live_env__iface(e, found);
	free(il);
}

bool live_env__addr_loopback(int family, const uint8_t *a)
{
	static const uint8_t v6lo[16] = { [15] = 1 };

	if (family == AF_INET)
		return a[0] == 127;
	return family == AF_INET6 && !memcmp(a, v6lo, 16);
}

bool live_env__row_loopback(const struct row *r)
{
	if (r->key.kind == ROW_SOCKET && !r->have_sock)
		return false;
	if (r->key.kind == ROW_SOCKET)
		return live_env__addr_loopback(r->sock.family, r->sock.saddr);
	return live_env__addr_loopback(r->key.family, r->key.daddr);
}
