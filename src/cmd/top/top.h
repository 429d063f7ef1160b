/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* udpdrop top's options, parsed apart from running so tests can check them. */
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

/*
 * Fills o (zero it first). Returns 0 to run, 1 when --help or --version
 * was printed, or -EXIT_USAGE after printing a one-line error and a hint.
 */
int top__parse_args(int argc, char **argv, struct top_opts *o);

#endif
