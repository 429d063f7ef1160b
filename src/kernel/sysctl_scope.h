/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where each sysctl takes effect: the advice's words for it (advice_*),
 * defined down here because netcfg.c, which tests it on the running
 * kernel, sits below the advice (layers: docs/HACKING.md).
 */
#ifndef UD_SYSCTL_SCOPE_H
#define UD_SYSCTL_SCOPE_H

#include <stdbool.h>

/*
 * Where a sysctl takes effect, as the running kernel showed it (netcfg.c
 * tests it: a write of the value it holds, in the netns viewed and in a
 * fresh one): per-netns (each netns has its own value) or host-wide (one
 * value for every netns; inside a non-initial netns it is read-only or
 * missing). Unknown: not tested (no privileges, a recording without it).
 */
enum advice_scope { ADVICE_SCOPE_UNKNOWN, ADVICE_SCOPE_NETNS, ADVICE_SCOPE_HOST };
struct advice_sysctl_scope {
	char name[40];            /* "net.core.rmem_max" ("": none) */
	enum advice_scope scope;
	bool settable;            /* a write in the netns viewed works (tested) */
};
#define ADVICE_SCOPES 16
struct advice_where {
	struct advice_sysctl_scope s[ADVICE_SCOPES];
	int n;
	bool self;                /* the netns viewed is udpdrop's own */
	/* the words that run a command in the netns viewed, from where
	 * udpdrop runs, shell-safe: "ip netns exec NAME " (a named netns),
	 * "nsenter --net=PATH " (else); "" when self or when no safe way is
	 * known (then label names it) */
	char enter[160];
	char name[64];            /* its `ip netns` name when shell-safe, else "" */
	char label[80];           /* printable: its name, or its inode */
};

#endif
