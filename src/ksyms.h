/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kernel text symbols from /proc/kallsyms, for naming drop locations. */
#ifndef UD_KSYMS_H
#define UD_KSYMS_H

#include <stdint.h>

struct ksym {
	uint64_t addr;
	char *name;
};

struct ksyms {
	struct ksym *v;
	int n;
};

int ksyms__load(struct ksyms *ks, const char *path); /* NULL: /proc/kallsyms */
void ksyms__free(struct ksyms *ks);
/* [start, end) of a function's text; -ENOENT if unknown. */
int ksyms__range(const struct ksyms *ks, const char *name, uint64_t *start,
		 uint64_t *end);
/* "sk_skb_reason_drop+0x45"; "0x..." when unknown or hidden (kptr_restrict) */
const char *ksyms__format(const struct ksyms *ks, uint64_t addr, char *buf,
			  int len);

#endif
