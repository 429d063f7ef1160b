// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ksyms.h"

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The whole file: /proc files have no size, so read until EOF. */
static int slurp(const char *path, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	size_t cap = 1 << 20, n = 0;
	char *buf = NULL;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r;

		if (!buf || n == cap) {
			char *nb = realloc(buf, (buf ? 2 * cap : cap) + 1);

			if (!nb) {
				err = -ENOMEM;
				break;
			}
			if (buf)
				cap *= 2;
			buf = nb;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : 0;
			break;
		}
		n += r;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * One line, "ADDR TYPE NAME[\t[MODULE]]": a text symbol's address and its
 * name (NUL-terminated in place). false for anything else.
 */
static bool parse_line(char *p, char *end, uint64_t *addr, char **name)
{
	uint64_t a = 0;
	int d, digits = 0;
	char type;

	while (p < end && (d = hexval(*p)) >= 0) {
		a = a << 4 | d;
		p++;
		digits++;
	}
	if (!digits || digits > 16 || p + 3 > end || *p != ' ')
		return false;
	type = p[1];
	if ((type != 't' && type != 'T') || p[2] != ' ')
		return false; /* drop locations are code */
	p += 3;
	*name = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	if (p == *name)
		return false;
	*p = '\0';
	*addr = a;
	return true;
}

static int load(struct ksyms *ks)
{
	char *p, *end;
	size_t len = 0;
	int cap = 0, err;
	bool sorted = true;

	ks->loaded = true; /* once, whatever happens */
	err = slurp(ks->path ?: "/proc/kallsyms", &ks->text, &len);
	if (err)
		return err;
	for (p = ks->text, end = ks->text + len; p < end;) {
		char *nl = memchr(p, '\n', end - p), *name;
		uint64_t addr;

		if (!nl)
			nl = end;
		*nl = '\0';
		/* kptr_restrict hides addresses: 0, useless */
		if (parse_line(p, nl, &addr, &name) && addr) {
			if (ks->n == cap) {
				int ncap = cap ? cap * 2 : 4096;
				struct ksym *nv = realloc(ks->v, ncap * sizeof(*nv));

				if (!nv) {
					free(ks->v);
					free(ks->text);
					ks->v = NULL;
					ks->text = NULL;
					ks->n = 0;
					return -ENOMEM;
				}
				ks->v = nv;
				cap = ncap;
			}
			if (ks->n && addr < ks->v[ks->n - 1].addr)
				sorted = false;
			ks->v[ks->n].addr = addr;
			ks->v[ks->n].name = name;
			ks->n++;
		}
		p = nl + 1;
	}
	/* the kernel's own symbols come sorted; modules and BPF may not */
	if (!sorted)
		qsort(ks->v, ks->n, sizeof(*ks->v), cmp_ksym);
	return 0;
}

int ksyms__load(struct ksyms *ks, const char *path)
{
	memset(ks, 0, sizeof(*ks));
	ks->path = path;
	return load(ks);
}

/*
 * One pass over the file for the ranges of ks->pre: each starts at its
 * name's first line and ends at the next line with a higher address, as
 * long as the lines come in address order (the kernel's own do); then it
 * stops, the rest unread. Lines out of order: false (the table will do).
 */
static int prefetch_scan(struct ksyms *ks, int fd, bool *ok)
{
	static char buf[1 << 18];
	size_t have = 0;
	uint64_t last = 0;
	int open_ranges = 0, left = ks->npre;

	*ok = true;
	for (;;) {
		ssize_t r = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *p = buf, *end;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		have += r;
		end = buf + have;
		if (r == 0 && have && end[-1] != '\n')
			*end++ = '\n'; /* the last line, unterminated */
		for (char *nl; (nl = memchr(p, '\n', end - p)); p = nl + 1) {
			uint64_t addr;
			char *name;

			*nl = '\0';
			if (!parse_line(p, nl, &addr, &name) || !addr)
				continue;
			if (addr < last) {
				*ok = false; /* out of order: only the table can tell */
				return 0;
			}
			last = addr;
			for (int i = 0; open_ranges && i < ks->npre; i++)
				if (ks->pre[i].found && !ks->pre[i].end && addr > ks->pre[i].start) {
					ks->pre[i].end = addr;
					open_ranges--;
				}
			for (int i = 0; left && i < ks->npre; i++)
				if (!ks->pre[i].found && !strcmp(name, ks->pre[i].name)) {
					ks->pre[i].found = true;
					ks->pre[i].start = addr;
					left--;
					open_ranges++;
				}
			if (!left && !open_ranges)
				return 0; /* the rest is not needed */
		}
		if (r == 0)
			return 0;
		have = end - p;
		memmove(buf, p, have);
		if (have == sizeof(buf) - 1)
			have = 0; /* a line longer than the buffer: not a symbol */
	}
}

int ksyms__prefetch(struct ksyms *ks, const char *path,
		    const char *const *names, int n)
{
	int fd, err;
	bool ok;

	memset(ks, 0, sizeof(*ks));
	ks->path = path;
	for (int i = 0; i < n && ks->npre < KSYMS_PREFETCH_MAX; i++)
		if (strlen(names[i]) < sizeof(ks->pre[0].name))
			strcpy(ks->pre[ks->npre++].name, names[i]);
	fd = open(path ?: "/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = prefetch_scan(ks, fd, &ok);
	close(fd);
	if (err || !ok) {
		ks->npre = 0; /* ask the table */
		return err ? err : load(ks);
	}
	return 0;
}

void ksyms__free(struct ksyms *ks)
{
	free(ks->v);
	free(ks->text);
	memset(ks, 0, sizeof(*ks));
}

/* The last symbol at or below addr, or -1. */
static int find(const struct ksyms *ks, uint64_t addr)
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
	return best;
}

const char *ksyms__format(struct ksyms *ks, uint64_t addr, char *buf, int len)
{
	int best;

	if (!ks->loaded)
		load(ks); /* a failure leaves the table empty: addresses then */
	best = find(ks, addr);
	if (best < 0)
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	else
		snprintf(buf, len, "%s+0x%llx", ks->v[best].name,
			 (unsigned long long)(addr - ks->v[best].addr));
	return buf;
}

int ksyms__range(struct ksyms *ks, const char *name, uint64_t *start,
		 uint64_t *end)
{
	for (int i = 0; i < ks->npre; i++) {
		if (strcmp(ks->pre[i].name, name))
			continue;
		/* the scan read until it knew: not found means not there */
		if (!ks->pre[i].found || !ks->pre[i].end)
			return -ENOENT;
		*start = ks->pre[i].start;
		*end = ks->pre[i].end;
		return 0;
	}
	if (!ks->loaded)
		load(ks);
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
