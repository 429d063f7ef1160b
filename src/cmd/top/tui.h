/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * udpdrop top's full-screen view (ncurses). It owns the terminal and the
 * refresh clock while it runs; the caller owns the tracer and the model
 * and hands over a function that reads one interval into the model.
 */
#ifndef UD_TUI_H
#define UD_TUI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "model.h"
#include "view.h"

struct tui_opts {
	double interval;     /* seconds */
	uint64_t count;      /* refreshes, then exit; 0: until quit */
	bool color;          /* false: --no-color (NO_COLOR is honoured too) */
	enum view_col sort;
	bool reverse;
	const char *attach;  /* the tracer variant, for the header */
};

/* Read one interval into the model: 0, or a negative errno. */
typedef int (*tui_refresh_fn)(void *ctx);

/*
 * Run until q, the count, or *stop (set by a signal handler). The
 * terminal is restored on every way out. A failed refresh shows in the
 * status line and is tried again next interval. Returns 0, -ENOTTY when
 * the terminal cannot host the view (the caller falls back to batch), or
 * another negative errno.
 */
int tui__run(struct model *m, const struct tui_opts *o, tui_refresh_fn refresh_fn,
	     void *ctx, volatile sig_atomic_t *stop);

#endif
