/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one adapter from the live model to the advice engine: a row of the
 * model, its bursts (bursts.h) and its netns's sysctls and interface
 * (struct live_env) into struct advice_input, as top and doctor give it.
 * Pure, no I/O: cmd/live_env.h reads the environment. In the advice layer
 * because it is the advice's view of the model (report has its own, from
 * a recording).
 */
#ifndef UD_ADVICE_MODEL_H
#define UD_ADVICE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "advice.h"
#include "causes.h"
#include "mib.h"
#include "model.h"

struct live_burst;

/*
 * What the advice needs from the system, read live for one netns: its
 * sysctls (host-wide ones from udpdrop's netns when the netns has none of
 * its own) and the interface its traffic uses when that is unambiguous
 * (lo for a loopback address, else the netns's only other interface), as
 * report picks it from a recording. live_env.h reads it.
 */
struct live_env {
	uint32_t netns;
	bool loopback;
	uint64_t read_ns;               /* when it was read (monotonic) */
	struct advice_u64 rmem_default, rmem_max, wmem_default, wmem_max;
	struct advice_u64 udp_mem[3], page_size, netdev_max_backlog;
	struct advice_u64 ipfrag_time, ipfrag_high_thresh, ipfrag_max_dist;
	char ifname[16];                /* "": not known */
	struct advice_u64 mtu, txqueuelen;
	struct advice_where where;      /* each sysctl's scope (n 0: not known) */
};

/*
 * The advice input for one cause of a row of the live model (pure): the
 * drops, the arrivals (delivered + dropped over the last interval, when
 * deliveries are counted and it dropped then), the socket's buffer and
 * queue peak, the burst (b, or NULL), the kernel counters' deltas of its
 * netns, the sysctls and interface (e, or NULL: unknown). The truesize
 * stays unknown (the advice estimates it and says so): the model has the
 * queue's peak bytes but not how many datagrams it held then. in->who
 * points into who.
 */
void advice_model__input(struct advice_input *in, struct model *m, const struct row *r,
			 enum cause c, const struct live_burst *b, const struct live_env *e,
			 char *who, size_t wholen);
/* Its parts: the kernel counters' deltas base -> cur (each IPv4 + IPv6
 * pair known when cur has either), and e's sysctls and interface. */
void advice_model__mibs(struct advice_input *in, const struct mib *base, const struct mib *cur);
void advice_model__env(struct advice_input *in, const struct live_env *e);

#endif
