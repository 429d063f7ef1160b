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

#endif
