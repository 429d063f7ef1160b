// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ksyms.h"

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int ksyms__load(struct ksyms *ks, const char *path)
{
	FILE *f = fopen(path ?: "/proc/kallsyms", "r");
	char line[512], name[256], type;
	unsigned long long addr;
	int cap = 0;

	memset(ks, 0, sizeof(*ks));
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (type != 't' && type != 'T')
			continue; /* drop locations are code */
		if (!addr)
			continue; /* kptr_restrict hides addresses */
		if (ks->n == cap) {
			int ncap = cap ? cap * 2 : 4096;
			struct ksym *nv = realloc(ks->v, ncap * sizeof(*nv));

			if (!nv)
				goto nomem;
			ks->v = nv;
			cap = ncap;
		}
		ks->v[ks->n].addr = addr;
		ks->v[ks->n].name = strdup(name);
		if (!ks->v[ks->n].name)
			goto nomem;
		ks->n++;
	}
	fclose(f);
	qsort(ks->v, ks->n, sizeof(*ks->v), cmp_ksym);
	return 0;
nomem:
	fclose(f);
	ksyms__free(ks);
	return -ENOMEM;
}

void ksyms__free(struct ksyms *ks)
{
	for (int i = 0; i < ks->n; i++)
		free(ks->v[i].name);
	free(ks->v);
	ks->v = NULL;
	ks->n = 0;
}

const char *ksyms__format(const struct ksyms *ks, uint64_t addr, char *buf,
			  int len)
{
	int lo = 0, hi = ks->n - 1, best = -1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (ks->v[mid].addr <= addr) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	if (best < 0)
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	else
		snprintf(buf, len, "%s+0x%llx", ks->v[best].name,
			 (unsigned long long)(addr - ks->v[best].addr));
	return buf;
}

int ksyms__range(const struct ksyms *ks, const char *name, uint64_t *start,
		 uint64_t *end)
{
	for (int i = 0; i < ks->n; i++) {
		if (strcmp(ks->v[i].name, name))
			continue;
		*start = ks->v[i].addr;
		/* the next symbol up ends it (sorted; skip aliases) */
		for (int j = i + 1; j < ks->n; j++)
			if (ks->v[j].addr > *start) {
				*end = ks->v[j].addr;
				return 0;
			}
		break;
	}
	return -ENOENT;
}
