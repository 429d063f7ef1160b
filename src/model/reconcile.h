/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reconciliation: which of the kernel's own counters (kernel/mib.h) count
 * the drops of each cause, so that every view can set udpdrop's counts
 * beside the kernel's.
 */
#ifndef UD_RECONCILE_H
#define UD_RECONCILE_H

#include "causes.h"
#include "mib.h"

/*
 * Which kernel counters a cause reconciles with: fills up to n ids,
 * returns how many. Several ids are summed (IPv4 + IPv6).
 */
int cause__mibs(enum cause c, enum mib_id *ids, int n);

#endif
