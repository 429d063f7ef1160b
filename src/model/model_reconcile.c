// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The live model's reconciliation (reconcile.h): each netns's kernel
 * counters beside udpdrop's counts of the causes they count, and the
 * verdict on each line. Pure functions of the model, so every view (top's
 * printers, the full-screen view) sets the same lines side by side. Apart
 * from reconcile.c because it reads the live model, which report's
 * offline model (linked with reconcile.c alone) does not have.
 */
#include <stdio.h>
#include "model.h"
#include "reconcile.h"
#include "util.h"

/* Which causes reconcile with counters, in print order. */
static const enum cause reconciled[] = { CAUSE_RCVBUF, CAUSE_UDP_MEM,
					 CAUSE_NO_SOCKET, CAUSE_CHECKSUM,
					 CAUSE_FRAG_TIMEOUT, CAUSE_MCAST_UNWANTED };

/*
 * The counters and the reconciliation cover every netns in view (the one
 * --netns names, else every netns) with a base, rows or not: a netns whose
 * UdpRcvbufErrors rose while udpdrop counted nothing there is exactly the
 * miss to show. Within it, a line shows where either side counted.
 */
bool reconcile__covers(const struct netns_counters *nc)
{
	return nc->have_base && nc->in_view;
}

bool reconcile__ok(const struct reconcile_line *l)
{
	uint64_t d = l->ours > l->kernel ? l->ours - l->kernel : l->kernel - l->ours;

	return d <= l->spread;
}

void reconcile__verdict(const struct reconcile_line *l, char *buf, size_t len)
{
	long long d = l->ours >= l->kernel ? (long long)(l->ours - l->kernel)
					   : -(long long)(l->kernel - l->ours);
	char s[24];

	fmt_count(s, sizeof(s), l->spread);
	if (!d)
		snprintf(buf, len, "match");
	else if (reconcile__ok(l))
		snprintf(buf, len, "match within +-%s (the counters moved by %s while udpdrop read)",
			 s, s);
	else if (l->spread)
		snprintf(buf, len, "differ by %lld (beyond the +-%s the counters moved while udpdrop read)",
			 d, s);
	else
		snprintf(buf, len, "differ by %lld", d);
}

int reconcile__lines(struct model *m, struct reconcile_line *out, int max)
{
	int n = 0;

	for (int i = 0; i < m->ncounters; i++) {
		struct netns_counters *nc = &m->counters[i];

		if (!reconcile__covers(nc))
			continue;
		for (size_t j = 0; j < ARRAY_SIZE(reconciled) && n < max; j++) {
			enum mib_id ids[3];
			int k, nids = cause__mibs(reconciled[j], ids, 3);
			uint64_t kern = 0, ours = model__netns_cause_units(m, nc->netns, reconciled[j]);
			uint64_t dgrams = model__netns_cause(m, nc->netns, reconciled[j]);

			uint64_t spread = 0;
			char label[80] = "";
			size_t used = 0;

			for (k = 0; k < nids; k++) {
				uint64_t d = mib__diff(&nc->base, &nc->cur, ids[k]);

				kern += d;
				spread += model__counter_spread(nc, ids[k]);
				if (d && used < sizeof(label))
					used += snprintf(label + used, sizeof(label) - used, "%s%s",
							 used ? "+" : "", mib__name(ids[k]));
			}
			if (!kern && !ours && !dgrams)
				continue;
			out[n] = (struct reconcile_line){ .netns = nc->netns,
							  .cause = reconciled[j],
							  .counter = ids[0],
							  .kernel = kern,
							  .ours = ours,
							  .ours_datagrams = dgrams,
							  .spread = spread };
			snprintf(out[n++].label, sizeof(out->label), "%s",
				 label[0] ? label : mib__name(ids[0]));
		}
	}
	return n;
}
