/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel's drop reasons, read from BTF at start-up (enum
 * skb_drop_reason and the subsystem enums): never a hard-coded table,
 * because the numbers differ between kernels.
 */
#ifndef UD_REASONS_H
#define UD_REASONS_H

#include <stdint.h>

struct reason_entry {
	uint32_t value;
	char *name; /* without the SKB_DROP_REASON_ prefix */
};

struct reasons {
	struct reason_entry *v;
	int n;
};

/* path NULL: the running kernel (/sys/kernel/btf/vmlinux). */
int reasons__load(struct reasons *r, const char *btf_path);
/*
 * Kernels without drop reasons: udpdrop's sites (enum ud_site) in their
 * place, named as causes.c names them (never a kernel reason's name).
 */
int reasons__load_sites(struct reasons *r);
void reasons__free(struct reasons *r);
/* The name for a raw reason; unknown values print as "REASON_<n>". */
const char *reasons__name(const struct reasons *r, uint32_t value,
			  char *buf, int len);
/* Value for a name, -1 if this kernel has no such reason. */
int64_t reasons__value(const struct reasons *r, const char *name);

#endif
