/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * udpdrop serve's advice as numbers: udpdrop_advice_current and
 * udpdrop_advice_recommended{netns, family, port, comm, setting}, gauges,
 * so that `current < recommended` can alert.
 *
 * The findings are the advice engine's (src/advice/), fed as top feeds it
 * (advice_model__input: the row, its bursts recorded after each refresh,
 * its netns's sysctls and interface), never rules of serve's own. A
 * finding gives its setting (the engine's names: "SO_RCVBUF",
 * "net.core.rmem_default", "sender_pps", ...) and the value it
 * recommends; serve adds the setting's value now, in the same unit (a
 * setting whose value now is not known has a recommended gauge only).
 *
 * Only for socket series of a numeric port (socket_series__numeric): a
 * port="ephemeral" or "other" series holds sockets with nothing in
 * common. Several findings under one label set (two causes, or the
 * sockets of a SO_REUSEPORT group): the one recommending the most.
 */
#ifndef UDPDROP_SERVE_ADVICE_H
#define UDPDROP_SERVE_ADVICE_H

#include <stdbool.h>
#include <stdint.h>
#include "advice.h"
#include "advice_model.h"
#include "expo.h"
#include "htab.h"
#include "model.h"
#include "socket_series.h"

#define SERVE_ADVICE_ENVS 16
/* the advice's sysctls and interface per (netns, loopback), read again
 * after this long (the same as top's TUI) */
#define SERVE_ADVICE_ENV_TTL_NS (10 * 1000000000ull)

struct serve_advice {
	struct htab bursts;     /* struct row_key -> struct live_burst (bursts.h) */
	uint64_t ticks;         /* refreshes recorded */
	struct htab gauges;     /* the last update's: struct sa_key -> struct sa_val */
	struct live_env envs[SERVE_ADVICE_ENVS];
	int nenvs;
	/* reads a netns's environment (live_env__read); NULL: none (the
	 * advice then says which facts it lacks) */
	void (*env_read)(struct model *m, uint32_t netns, bool loopback, struct live_env *e);
};

int serve_advice__init(struct serve_advice *a);
void serve_advice__free(struct serve_advice *a);
/*
 * After socket_series__update: the findings of the rows in view, at now
 * (monotonic ns); refreshed: the model was refreshed since the last call
 * (its bursts recorded then, as top records them). 0 or -ENOMEM.
 */
int serve_advice__update(struct serve_advice *a, struct model *m, const struct socket_series *s,
			 bool refreshed, uint64_t now);
/* The families udpdrop_advice_current and udpdrop_advice_recommended. */
void serve_advice__render(const struct serve_advice *a, struct expo *e);
/*
 * The value now of a finding's setting, in the unit it recommends (the
 * SO_RCVBUF request is half the buffer the kernel keeps), from the input
 * the engine had: false when not known, or for a setting it does not know.
 */
bool serve_advice__current(const struct advice_input *in, const struct advice_finding *f,
			   uint64_t *out);

#endif
