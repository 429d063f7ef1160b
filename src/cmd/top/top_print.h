/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * top's batch printers, text and JSON: one interval, or the summary. Here
 * in cmd/top/ because only top's files use them (top.c prints with them;
 * view.c and tui.c name protocols as they do).
 */
#ifndef UD_TOP_PRINT_H
#define UD_TOP_PRINT_H

#include <stdbool.h>
#include "htab.h"
#include "model.h"
#include "tracer.h"
#include "util.h"

struct top_print_ctx {
	const char *attach;    /* the tracer variant in use */
	bool final;            /* the exit summary */
	/* the summary's advice: each row's worst interval (bursts.h),
	 * NULL if not tracked (the advice then has no burst to size for) */
	const struct htab *bursts;
	/* how full the kernel's tables are (JSON "tables"), NULL: not shown */
	const struct tracer_fill *fill;
	/* the summary's JSON "stopped": "count", "signal", "netns_gone" (NULL: null) */
	const char *stopped;
};

void top_print__plain(struct model *m, const struct top_print_ctx *o, struct strbuf *sb);
void top_print__json(struct model *m, const struct top_print_ctx *o, struct strbuf *sb);

#endif
