/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kernel text symbols from /proc/kallsyms, for naming drop locations. */
#ifndef UD_KSYMS_H
#define UD_KSYMS_H

#include <stdbool.h>
#include <stdint.h>

struct ksym {
	uint64_t addr;
	char *name;   /* in ksyms.text */
};

#define KSYMS_PREFETCH_MAX 40 /* at most 64 (hidden_ranges' bit set) */

/*
 * The text (code) symbols, sorted by address: the whole table once
 * loaded (ksyms__load, or the first ksyms__format / ksyms__range that
 * needs it); before that, the ranges of a few functions (ksyms__prefetch).
 */
struct ksyms {
	struct ksym *v;
	int n;
	char *text;   /* the file as read: the names point into it */
	bool loaded;  /* v, n: the whole table (or as much as could be read) */
	const char *path;
	struct ksyms_range {
		char name[64];
		uint32_t hash; /* name's (prefetch_scan) */
		uint64_t start, end;
		bool found;
		/* in the file, but its range could not be had (hidden addresses) */
		bool lost;
	} pre[KSYMS_PREFETCH_MAX];
	int npre;
	/*
	 * Every address read as 0: kernel.kptr_restrict hides them (from
	 * readers without CAP_SYSLOG; at 2 from everyone). The prefetched
	 * ranges then come from the kernel itself by BTF (ksyms__prefetch),
	 * and locations print as addresses.
	 */
	bool hidden;
};

/* The whole table, now. path NULL: /proc/kallsyms. */
int ksyms__load(struct ksyms *ks, const char *path);
/*
 * Only the ranges of names (up to KSYMS_PREFETCH_MAX), in one read of the
 * file that stops once it has them; the table is loaded when a lookup
 * needs it. /proc/kallsyms is big and slow to read (the kernel formats
 * each line): a program that names no drop location never reads it all.
 */
int ksyms__prefetch(struct ksyms *ks, const char *path,
		    const char *const *names, int n);
/*
 * How many of the prefetched names are functions of this kernel (in the
 * file) whose range is unknown all the same: the addresses are hidden and
 * the kernel could not give them (no CAP_BPF + CAP_PERFMON, or a kernel
 * that does not resolve BTF functions for BPF, 5.x and older).
 */
int ksyms__lost(const struct ksyms *ks);
void ksyms__free(struct ksyms *ks);
/* [start, end) of a function's text; -ENOENT if unknown. */
int ksyms__range(struct ksyms *ks, const char *name, uint64_t *start,
		 uint64_t *end);
/*
 * The compiler's clones of functions: each symbol "NAME.SUFFIX" (.cold,
 * .constprop.0, .isra.0, .part.0, ...) whose NAME is names[i], as
 * {i, start, end} into out, in one pass over the whole table (loaded now
 * if it was not). A kernel built with another compiler or options has
 * its own (Debian's 5.10 to 6.12 have only ip_rcv_finish_core.constprop.0
 * or .isra.0, no plain ip_rcv_finish_core). Returns how many (at most max).
 */
struct ksyms_clone {
	int name;
	uint64_t start, end;
};
int ksyms__clones(struct ksyms *ks, const char *const *names, int nnames,
		  struct ksyms_clone *out, int max);
/* "sk_skb_reason_drop+0x45"; "0x..." when unknown or hidden (kptr_restrict) */
const char *ksyms__format(struct ksyms *ks, uint64_t addr, char *buf, int len);

#endif
