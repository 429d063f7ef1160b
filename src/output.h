/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Plain-text and JSON printers of the model: one interval, or the summary. */
#ifndef UD_OUTPUT_H
#define UD_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "model.h"
#include "util.h"

struct output_ctx {
	const char *attach;    /* the tracer variant in use */
	bool final;            /* the exit summary */
};

void output__plain(struct model *m, const struct output_ctx *o, struct strbuf *sb);
void output__json(struct model *m, const struct output_ctx *o, struct strbuf *sb);

/* "udp", "udplite", or the number */
const char *proto_name(int proto, char *buf, int len);
/* "10.0.0.1 -> 10.0.0.2:5001" for a socketless row */
void row_flow(const struct row *r, char *buf, int len);
/* Why a socketless row has no socket, in a few words. */
const char *row_flow_why(const struct row *r);

/* One line of the reconciliation: a kernel counter beside udpdrop's count. */
struct reconcile_line {
	uint32_t netns;
	enum cause cause;
	enum mib_id counter;   /* the first of the counters summed */
	uint64_t kernel, ours; /* both since udpdrop started (or first saw the netns) */
};

/*
 * The reconciliation for the netns in view: up to max lines, in netns
 * then cause order, only where either side counted something.
 */
int output__reconcile(struct model *m, struct reconcile_line *out, int max);

#endif
