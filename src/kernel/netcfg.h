/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The network settings drops are explained with: the UDP/IP sysctls
 * (socket buffers, udp_mem, backlog, fragment reassembly) and the
 * interfaces (MTU, txqueuelen), read inside a network namespace. Shared
 * by `record` (its META and IFACES records) and `doctor`.
 */
#ifndef UD_NETCFG_H
#define UD_NETCFG_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sysctl_scope.h"
#include "netns.h"
#include "trace.h"

/* The sysctls, in this order (docs/trace-format.md lists them for META). */
enum netcfg_sysctl {
	NETCFG_RMEM_DEFAULT, NETCFG_RMEM_MAX, NETCFG_WMEM_DEFAULT, NETCFG_WMEM_MAX,
	NETCFG_UDP_MEM, NETCFG_NETDEV_MAX_BACKLOG, NETCFG_IPFRAG_HIGH_THRESH,
	NETCFG_IPFRAG_LOW_THRESH, NETCFG_IPFRAG_TIME, NETCFG_IPFRAG_MAX_DIST,
	NETCFG_NSYSCTLS,
};
extern const char *const netcfg__sysctl_names[NETCFG_NSYSCTLS];

struct netcfg_sysctls {
	char v[NETCFG_NSYSCTLS][128]; /* as /proc/sys prints it, whitespace collapsed */
	bool ok[NETCFG_NSYSCTLS];
	/* read in udpdrop's own netns: the target netns has none of its own */
	bool from_self[NETCFG_NSYSCTLS];
	/* each one's scope (where.s[i] is sysctl i) and how to run a command
	 * in the netns (netcfg__scope) */
	struct advice_where where;
};

/* What a write of a sysctl's own value did in one netns. */
enum netcfg_probe {
	NETCFG_PROBE_UNKNOWN,   /* not tried, or failed for another reason */
	NETCFG_PROBE_ABSENT,    /* the netns has no such file */
	NETCFG_PROBE_READONLY,  /* EACCES, EPERM, EROFS or EINVAL: the kernel refuses */
	NETCFG_PROBE_WRITABLE,
};
/*
 * A sysctl's scope from the probes (pure): writable in a fresh netns:
 * per-netns (each netns gets its own); missing or read-only there:
 * host-wide. Without that probe (no privileges to make a netns), only a
 * sysctl missing from another netns than udpdrop's is known: host-wide.
 */
enum advice_scope netcfg__scope(enum netcfg_probe in_netns, enum netcfg_probe in_fresh,
				bool other_netns);

/* A sysctl's value ("net.core.rmem_max") as /proc/sys prints it,
 * whitespace runs collapsed to one space. 0 or a negative errno. */
int netcfg__sysctl_read(const char *name, char *buf, size_t len);
/*
 * The sysctls of netns `inode`; those it does not have of its own (the
 * host-wide ones) from udpdrop's netns, marked from_self. Entering
 * another netns needs root: without it, all come from udpdrop's own
 * (marked so). Each one's scope is tested once per netns and run (then
 * cached) by opening it for writing (the kernel's permission check;
 * nothing is written), in the netns and in a fresh netns made for the
 * test (gone with it).
 */
void netcfg__sysctls(const struct netns_table *nt, uint32_t inode, struct netcfg_sysctls *s);
/* One value as a number (the first of several: udp_mem's min); false if
 * it was not read or is not a number. */
bool netcfg__u64(const struct netcfg_sysctls *s, enum netcfg_sysctl i, unsigned field,
		 uint64_t *out);

#define NETCFG_IFACES_MAX 1024
struct netcfg_ifaces {
	uint32_t netns;
	struct trace_iface v[NETCFG_IFACES_MAX];  /* name points into names */
	char names[NETCFG_IFACES_MAX][IF_NAMESIZE];
	uint32_t n;
};

/* The interfaces of netns `inode` (name, index, MTU, txqueuelen) into
 * *il (large: allocate it). 0 or a negative errno. */
int netcfg__ifaces(const struct netns_table *nt, uint32_t inode, struct netcfg_ifaces *il);

#endif
