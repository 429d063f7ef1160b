/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reconciliation: which of the kernel's own counters (kernel/mib.h) count
 * the drops of each cause, so that every view can set udpdrop's counts
 * beside the kernel's.
 */
#ifndef UD_RECONCILE_H
#define UD_RECONCILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "causes.h"
#include "mib.h"

/*
 * Which kernel counters a cause reconciles with: fills up to n ids,
 * returns how many. Several ids are summed (IPv4 + IPv6). (reconcile.c:
 * pure, report's offline model links it alone.)
 */
int cause__mibs(enum cause c, enum mib_id *ids, int n);

/* The live model's reconciliation (model_reconcile.c): */
struct model;
struct netns_counters;

/* One line of the reconciliation: a kernel counter beside udpdrop's count. */
struct reconcile_line {
	uint32_t netns;
	enum cause cause;
	enum mib_id counter;   /* the first of the counters summed */
	/*
	 * Both since udpdrop started (or first saw the netns). ours is in the
	 * kernel's unit (rows.h, ud_kernel_units: a GSO/GRO skb counts once,
	 * as the kernel's counters count it); ours_datagrams is udpdrop's
	 * datagrams, the same but for GRO skbs.
	 */
	uint64_t kernel, ours, ours_datagrams;
	/*
	 * How far the kernel's counters moved while udpdrop read its maps
	 * (the baseline's and the latest reading): kernel is exact to within
	 * it, so a difference no larger is no disagreement.
	 */
	uint64_t spread;
	/*
	 * The counters behind `kernel`, as the text views name them: those
	 * that moved, joined by '+' ("UdpRcvbufErrors+Udp6RcvbufErrors"), so
	 * a sum is never shown under one counter's name; the first counter
	 * when none moved.
	 */
	char label[80];
};
/*
 * The reconciliation for the netns in view: up to max lines, in netns
 * then cause order, only where either side counted something.
 */
int reconcile__lines(struct model *m, struct reconcile_line *out, int max);
/* Does the line agree, to within the spread? */
bool reconcile__ok(const struct reconcile_line *l);
/*
 * Where udpdrop's count in the kernel's unit (skbs) is not its datagrams
 * (GSO/GRO skbs), the words every text view puts beside the line: "
 * (of 133,119 datagrams: a GSO/GRO skb counted once, as the kernel
 * counts)"; else "". Pure (report links it).
 */
void reconcile__gro_note(uint64_t units, uint64_t datagrams, char *buf, size_t len);
/*
 * The note for any cause: a reassembly cause's units past its datagrams
 * are failures of datagrams counted under another cause (UD_KEY_REASM_UNIT:
 * " (12 of them are datagrams counted as another cause's: their first
 * fragment was dropped here)"); else reconcile__gro_note's.
 */
void reconcile__units_note(enum cause c, uint64_t units, uint64_t datagrams, char *buf,
			   size_t len);
/* udpdrop's count minus the kernel's, saturated at INT64_MIN/MAX (pure;
 * every view's "diff"). */
int64_t reconcile__diff(uint64_t udpdrop, uint64_t kernel);
/* "match", "match within +-N (...)" or "differ by N[ (+-M ...)]". */
void reconcile__verdict(const struct reconcile_line *l, char *buf, size_t len);
/*
 * Does the reconciliation (and top's JSON `counters`) cover nc's netns:
 * one in view with a base?
 */
bool reconcile__covers(const struct netns_counters *nc);

#endif
