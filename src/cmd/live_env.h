/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the advice reads of the live system for one netns (struct
 * live_env, advice_model.h): its sysctls and the interface its traffic
 * uses. Shared by top and doctor; in cmd/ because it fills the advice's
 * struct from the kernel layer's readers (netcfg.h), which sit below it.
 */
#ifndef UD_LIVE_ENV_H
#define UD_LIVE_ENV_H

#include <stdbool.h>
#include <stdint.h>
#include "advice_model.h"
#include "model.h"

struct netcfg_sysctls;
struct trace_iface;

/* Read e for netns (its sysctls, and lo or its only other interface). */
void live_env__read(struct model *m, uint32_t netns, bool loopback, struct live_env *e);
/* Its parts, for a caller that has read the sysctls or the interfaces
 * itself (doctor): the sysctls (and the page size) into e; the interface
 * into e (its name, MTU when not 0, txqueuelen). */
void live_env__sysctls(struct live_env *e, const struct netcfg_sysctls *sv);
void live_env__iface(struct live_env *e, const struct trace_iface *f);
/* Does the row's traffic use loopback (its local address is)? */
bool live_env__row_loopback(const struct row *r);
/* Is the address (AF_INET or AF_INET6) a loopback one? */
bool live_env__addr_loopback(int family, const uint8_t *a);

#endif
