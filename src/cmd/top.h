/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * udpdrop top's options, parsed apart from running so tests can check
 * them, and its run: here, beside what the commands share, because demo
 * runs the live view too (with options it sets, not an argv to parse).
 */
#ifndef UD_TOP_H
#define UD_TOP_H

#include <stdbool.h>
#include <stdint.h>
#include "model.h"
#include "tracer.h"

struct top_opts {
	double interval;
	uint64_t count;     /* 0: until signalled */
	bool json, batch;
	struct model_opts model;
	struct tracer_opts tracer;
	const char *netns_spec;
	/* the full-screen view */
	int sort;           /* enum view_col */
	bool no_color;
};

/* o's defaults: what top does with no options (1 s, sorted by drop rate). */
void top__opts_init(struct top_opts *o);
/*
 * Fills o (top__opts_init it first). Returns 0 to run, 1 when --help or
 * --version was printed, or -EXIT_USAGE after printing a one-line error
 * and a hint.
 */
int top__parse_args(int argc, char **argv, struct top_opts *o);
/* The live view (full-screen on a terminal, else batch) until o's count,
 * a signal, or its netns or process gone: an exit code (cli.h). */
int top__run(struct top_opts *o);

#endif
