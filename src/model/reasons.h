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
/*
 * Kernels with drop reasons free some drops with NOT_SPECIFIED where the
 * site tells more (a checksum found bad in udp_recvmsg, an expired
 * fragment queue in ip_expire before 6.2...): the classifier names those
 * by site too, as site_base + site. site_base: one above the kernel's
 * largest core reason (subsystem reasons live at 0x10000 and up).
 */
uint32_t reasons__site_base(const struct reasons *r);
/* Add udpdrop's site names at base + site, as the classifier numbers them. */
int reasons__add_sites(struct reasons *r, uint32_t base);
void reasons__free(struct reasons *r);
/* The name for a raw reason; unknown values print as "REASON_<n>". */
const char *reasons__name(const struct reasons *r, uint32_t value,
			  char *buf, int len);
/* Value for a name, -1 if this kernel has no such reason. */
int64_t reasons__value(const struct reasons *r, const char *name);

#endif
