/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every unit test of the aggregator starts from: a model over this
 * process's netns, and a tracer snapshot (drops, overflow, stats) the test
 * fills by hand. A test's own fixture puts struct model_fx first and adds
 * what it needs. Include after <cmocka.h>.
 */
#ifndef UD_TEST_MODEL_FIXTURE_H
#define UD_TEST_MODEL_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include "htab.h"
#include "model.h"
#include "reasons.h"
#include "udpdrop.h"
#include "util.h"

struct model_fx {
	struct model m;
	bool model_up;
	struct htab drops;              /* struct ud_key -> struct ud_val */
	struct ud_val overflow[UD_OVERFLOW_SLOTS];
	uint64_t stats[UD_STAT_MAX];
	struct strbuf sb;               /* what the printers wrote last */
	uint32_t netns;                 /* this process's netns inode */
};

/* The snapshot and this netns; 0, or -1 for cmocka's setup to fail. */
static inline int model_fx__open(struct model_fx *x)
{
	struct stat st;

	if (htab__init(&x->drops, sizeof(struct ud_key), sizeof(struct ud_val)) ||
	    stat("/proc/self/ns/net", &st))
		return -1;
	x->netns = st.st_ino;
	return 0;
}

static inline void model_fx__close(struct model_fx *x)
{
	if (x->model_up)
		model__free(&x->m);
	htab__free(&x->drops);
	sb_free(&x->sb);
}

static inline void model_fx__init(struct model_fx *x, const struct model_opts *o)
{
	assert_int_equal(model__init(&x->m, o), 0);
	x->model_up = true;
}

/* The running kernel's value for a drop reason; skips the test if it has none. */
static inline uint32_t model_fx__reason(struct model_fx *x, const char *name)
{
	int64_t v = reasons__value(&x->m.reasons, name);

	if (v < 0) {
		print_message("this kernel has no SKB_DROP_REASON_%s\n", name);
		skip();
	}
	return v;
}

#endif
