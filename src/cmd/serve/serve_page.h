/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * udpdrop serve's metrics page, from the model after a refresh: the
 * families and their labels are a contract (docs/serve.md). Labels come
 * from bounded sets only (netns, cause, kernel reason): never a cookie,
 * pid or address. Every count is the model's, cumulative since udpdrop
 * began counting, and monotonic: a row that changes its key (an inode
 * joined to its cookie, closed sockets folded) stays in its netns, cause
 * and reason, so these sums never go down.
 */
#ifndef UDPDROP_SERVE_PAGE_H
#define UDPDROP_SERVE_PAGE_H

#include <stdint.h>
#include "expo.h"
#include "model.h"
#include "serve_advice.h"
#include "socket_series.h"
#include "tracer.h"
#include "udpdrop.h"

/* What serve itself counts, for the self-metrics. */
struct serve_self {
	const char *version, *kernel;     /* build info */
	const char *attach;               /* tp_btf, raw_tp, tracepoint */
	const struct ud_val *overflow;    /* UD_OVERFLOW_SLOTS, by reason (watch) */
	const struct socket_series *sockets; /* the per-socket series; NULL: none */
	const struct serve_advice *advice;   /* the advice as numbers; NULL: none */
	uint64_t kernel_events;           /* events the programs saw */
	double render_seconds;            /* the last render's */
	uint64_t http_requests, http_rejected, http_timeouts, http_too_large, http_bad;
	uint64_t http_bad_host;
	uint64_t refreshes;
	bool sockets_failed;              /* the ledger ran out of memory (said once) */
	bool advice_failed;               /* the advice's tables ran out of memory (said once) */
	struct tracer_prog_stats progs[4]; /* the programs' run statistics */
	int nprogs;
	int bpf_stats_enabled;            /* kernel.bpf_stats_enabled; -1 unknown */
};

/* The page of the model m in format f, appended to out. */
void serve_page__render(struct model *m, const struct serve_self *self,
			enum expo_format f, struct strbuf *out);

#endif
