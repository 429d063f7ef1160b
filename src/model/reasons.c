// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "causes.h"
#include "reasons.h"
#include "tracer.h"
#include "udpdrop.h"

#define PREFIX "SKB_DROP_REASON_"

static int add(struct reasons *r, uint32_t value, const char *name)
{
	struct reason_entry *nv = realloc(r->v, (r->n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	r->v = nv;
	if (!strncmp(name, PREFIX, strlen(PREFIX)))
		name += strlen(PREFIX);
	nv[r->n].value = value;
	nv[r->n].name = strdup(name);
	if (!nv[r->n].name)
		return -ENOMEM;
	r->n++;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct reason_entry *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

/*
 * Subsystem reasons carry the subsystem id in the upper 16 bits; their
 * names live in enums named after the subsystem (e.g. enum
 * ovs_drop_reason), whose values already include those bits. Collect
 * every enum member whose value has the subsystem bits of a known
 * subsystem and whose name ends in a drop-reason-looking enum.
 */
static int add_enum(struct reasons *r, const struct btf *btf,
		    const struct btf_type *t, bool core)
{
	const struct btf_enum *e = btf_enum(t);
	int err;

	for (int i = 0; i < btf_vlen(t); i++) {
		const char *name = btf__name_by_offset(btf, e[i].name_off);
		uint32_t v = e[i].val;

		if (!name)
			continue;
		if (core && (!strcmp(name, PREFIX "MAX") ||
			     !strcmp(name, PREFIX "SUBSYS_MASK")))
			continue;
		if (!core && !(v >> 16))
			continue; /* a subsystem enum's own bookkeeping */
		err = add(r, v, name);
		if (err)
			return err;
	}
	return 0;
}

int reasons__load(struct reasons *r, const char *btf_path)
{
	struct btf *btf;
	int err = 0, found = 0;

	memset(r, 0, sizeof(*r));
	/* the running kernel's: the one parse the tracer's probes share */
	btf = btf_path ? btf__parse(btf_path, NULL) : (struct btf *)tracer__kernel_btf();
	if (!btf)
		return -errno ?: -ENOENT;
	for (unsigned int id = 1; id < btf__type_cnt(btf) && !err; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name;

		if (!btf_is_enum(t))
			continue;
		name = btf__name_by_offset(btf, t->name_off);
		if (!name)
			continue;
		if (!strcmp(name, "skb_drop_reason")) {
			err = add_enum(r, btf, t, true);
			found = 1;
		} else if (strstr(name, "drop_reason") &&
			   strcmp(name, "skb_drop_reason_subsys")) {
			err = add_enum(r, btf, t, false);
		}
	}
	if (btf_path)
		btf__free(btf);
	if (!err && !found)
		err = -ENOENT; /* kernel older than 5.17, or BTF without it */
	if (err) {
		reasons__free(r);
		return err;
	}
	qsort(r->v, r->n, sizeof(*r->v), cmp_entry);
	return 0;
}

void reasons__free(struct reasons *r)
{
	for (int i = 0; i < r->n; i++)
		free(r->v[i].name);
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

const char *reasons__name(const struct reasons *r, uint32_t value, char *buf,
			  int len)
{
	int lo = 0, hi = r->n - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (r->v[mid].value == value)
			return r->v[mid].name;
		if (r->v[mid].value < value)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	snprintf(buf, len, "REASON_%u", value);
	return buf;
}

int64_t reasons__value(const struct reasons *r, const char *name)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].name, name))
			return r->v[i].value;
	return -1;
}

int reasons__add_sites(struct reasons *r, uint32_t base)
{
	for (uint32_t site = 0; site < UD_SITE_MAX; site++) {
		int err = add(r, base + site, cause__site_name(site));

		if (err)
			return err;
	}
	qsort(r->v, r->n, sizeof(*r->v), cmp_entry);
	return 0;
}

int reasons__load_sites(struct reasons *r)
{
	int err;

	memset(r, 0, sizeof(*r));
	err = reasons__add_sites(r, 0);
	if (err)
		reasons__free(r);
	return err;
}

uint32_t reasons__site_base(const struct reasons *r)
{
	uint32_t top = 0;

	for (int i = 0; i < r->n; i++)
		if (r->v[i].value < 0x10000 && r->v[i].value >= top)
			top = r->v[i].value + 1;
	return top;
}
