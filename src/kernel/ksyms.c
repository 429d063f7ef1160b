// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
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
	uint64_t zeros = 0;

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
		if (!parse_line(p, nl, &addr, &name)) {
			/* not a text symbol */
		} else if (!addr) {
			zeros++;
		} else {
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
	ks->hidden = !ks->n && zeros;
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
/* FNV-1a: the scan compares each line's name with every wanted one by
 * this first (up to KSYMS_PREFETCH_MAX of them, over 100,000 lines) */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static int prefetch_scan(struct ksyms *ks, int fd, bool *ok)
{
	static char buf[1 << 18];
	size_t have = 0;
	uint64_t last = 0, shown = 0, zeros = 0;
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
			if (!parse_line(p, nl, &addr, &name))
				continue;
			if (!addr) {
				zeros++;
				continue;
			}
			shown++;
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
			uint32_t h = left ? name_hash(name) : 0;

			for (int i = 0; left && i < ks->npre; i++)
				if (!ks->pre[i].found && ks->pre[i].hash == h &&
				    !strcmp(name, ks->pre[i].name)) {
					ks->pre[i].found = true;
					ks->pre[i].start = addr;
					left--;
					open_ranges++;
				}
			if (!left && !open_ranges)
				return 0; /* the rest is not needed */
		}
		if (r == 0) {
			/* read to the end without one address: all hidden */
			ks->hidden = !shown && zeros;
			return 0;
		}
		have = end - p;
		memmove(buf, p, have);
		if (have == sizeof(buf) - 1)
			have = 0; /* a line longer than the buffer: not a symbol */
	}
}

/* ---- hidden addresses: the ranges from the kernel, by BTF ------------- */

/*
 * Symbols that only precede a function (its padding, its CFI hash), with
 * no code of their own that could call kfree_skb: skipped when looking
 * for the function that follows another.
 */
static bool is_prefix_sym(const char *name)
{
	return !strncmp(name, "__pfx_", 6) || !strncmp(name, "__cfi_", 6);
}

/*
 * The address of vmlinux function `name`, from the kernel: a socket filter
 * program loads it as a BTF-typed 64-bit immediate, which the verifier
 * fills in with kallsyms_lookup_name whatever kptr_restrict hides from
 * /proc/kallsyms, and stores it to an array map; one test run, one read.
 * Needs CAP_BPF (the load) and CAP_PERFMON (a pointer stored to a map);
 * kernels that do not resolve functions this way (5.x) refuse the load.
 * 0 or a negative errno.
 */
static int kernel_addr(const struct btf *vmlinux, int map_fd, const char *name,
		       uint64_t *addr)
{
	int id = btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC), fd, err, key = 0;
	char pkt[64] = {}; /* a socket filter's test run wants an Ethernet header */
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = pkt, .data_size_in = sizeof(pkt));
	struct bpf_insn insns[] = {
		/* r6 = &map[0] */
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 6,
		  .src_reg = BPF_PSEUDO_MAP_VALUE, .imm = map_fd },
		{ .imm = 0 },
		/* r1 = the function (vmlinux's BTF: fd 0) */
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1,
		  .src_reg = BPF_PSEUDO_BTF_ID, .imm = id },
		{ .imm = 0 },
		/* *(u64 *)(r6 + 0) = r1 */
		{ .code = BPF_STX | BPF_MEM | BPF_DW, .dst_reg = 6, .src_reg = 1 },
		/* return 0 */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	if (id < 0)
		return id;
	fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "udpdrop_ksym", "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), NULL);
	if (fd < 0)
		return -errno;
	*addr = 0;
	err = bpf_prog_test_run_opts(fd, &run) ? -errno : 0;
	if (!err && bpf_map_lookup_elem(map_fd, &key, addr))
		err = -errno;
	close(fd);
	return err ? err : *addr ? 0 : -ENOENT;
}

/*
 * The ranges of ks->pre when every address in the file reads 0. The names
 * still come in address order (the kernel's own symbols), so a function
 * ends where the next one listed starts (padding and CFI symbols skipped):
 * both addresses from the kernel (kernel_addr). A name the file lists more
 * than once (static functions of several files), or a next one listed more
 * than once, could resolve to another of them: that range is lost, as is
 * one the kernel cannot resolve (not in BTF: .cold, .isra and other
 * compiler clones, assembly).
 */
static void hidden_ranges(struct ksyms *ks)
{
	char next[KSYMS_PREFETCH_MAX][sizeof(ks->pre[0].name)] = {};
	int count[KSYMS_PREFETCH_MAX] = {}, ncount[KSYMS_PREFETCH_MAX] = {};
	uint64_t want_next = 0; /* a bit per pre[] name: KSYMS_PREFETCH_MAX <= 64 */
	char *text = NULL, *p, *end;
	char **names = NULL;
	size_t len = 0, n = 0, cap = 0;
	struct btf *vmlinux = NULL;
	int map_fd = -1;

	if (!ks->npre || slurp(ks->path ?: "/proc/kallsyms", &text, &len))
		goto out;
	/* the text symbols' names, in the file's order */
	for (p = text, end = text + len; p < end;) {
		char *nl = memchr(p, '\n', end - p), *name;
		uint64_t addr;

		if (!nl)
			nl = end;
		*nl = '\0';
		if (parse_line(p, nl, &addr, &name)) {
			if (n == cap) {
				size_t ncap = cap ? 2 * cap : 1 << 16;
				char **nv = realloc(names, ncap * sizeof(*nv));

				if (!nv)
					goto out;
				names = nv;
				cap = ncap;
			}
			names[n++] = name;
		}
		p = nl + 1;
	}
	for (size_t k = 0; k < n; k++) {
		if (want_next && !is_prefix_sym(names[k])) {
			for (int i = 0; i < ks->npre; i++)
				if (want_next & 1ull << i && strlen(names[k]) < sizeof(next[i]))
					strcpy(next[i], names[k]);
			want_next = 0;
		}
		for (int i = 0; i < ks->npre; i++)
			if (!strcmp(names[k], ks->pre[i].name) && ++count[i] == 1)
				want_next |= 1ull << i;
	}
	for (size_t k = 0; k < n; k++)
		for (int i = 0; i < ks->npre; i++)
			if (next[i][0] && !strcmp(names[k], next[i]))
				ncount[i]++;
	for (int i = 0; i < ks->npre; i++)
		ks->pre[i].lost = count[i] > 0; /* until found below */
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		goto out;
	map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "udpdrop_ksym", sizeof(int),
				sizeof(uint64_t), 1, NULL);
	if (map_fd < 0)
		goto out;
	for (int i = 0; i < ks->npre; i++) {
		struct ksyms_range *r = &ks->pre[i];
		uint64_t start, stop;

		if (count[i] != 1 || ncount[i] != 1 ||
		    kernel_addr(vmlinux, map_fd, r->name, &start) ||
		    kernel_addr(vmlinux, map_fd, next[i], &stop) || stop <= start)
			continue;
		r->found = true;
		r->lost = false;
		r->start = start;
		r->end = stop;
	}
out:
	if (map_fd >= 0)
		close(map_fd);
	btf__free(vmlinux);
	free(names);
	free(text);
}

int ksyms__prefetch(struct ksyms *ks, const char *path,
		    const char *const *names, int n)
{
	int fd, err;
	bool ok;

	memset(ks, 0, sizeof(*ks));
	ks->path = path;
	for (int i = 0; i < n && ks->npre < KSYMS_PREFETCH_MAX; i++)
		if (strlen(names[i]) < sizeof(ks->pre[0].name)) {
			strcpy(ks->pre[ks->npre].name, names[i]);
			ks->pre[ks->npre++].hash = name_hash(names[i]);
		}
	fd = open(path ?: "/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = prefetch_scan(ks, fd, &ok);
	close(fd);
	if (err || !ok) {
		ks->npre = 0; /* ask the table */
		return err ? err : load(ks);
	}
	if (ks->hidden)
		hidden_ranges(ks);
	return 0;
}

int ksyms__lost(const struct ksyms *ks)
{
	int n = 0;

	for (int i = 0; i < ks->npre; i++)
		n += ks->pre[i].lost;
	return n;
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

int ksyms__clones(struct ksyms *ks, const char *const *names, int nnames,
		  struct ksyms_clone *out, int max)
{
	int n = 0;

	if (!ks->loaded)
		load(ks);
	for (int i = 0; i < ks->n && n < max; i++) {
		const char *dot = strchr(ks->v[i].name, '.');
		size_t base = dot ? (size_t)(dot - ks->v[i].name) : 0;

		if (!dot)
			continue;
		for (int k = 0; k < nnames; k++) {
			if (strlen(names[k]) != base || strncmp(names[k], ks->v[i].name, base))
				continue;
			/* the next symbol up ends it (sorted; skip aliases) */
			for (int j = i + 1; j < ks->n; j++)
				if (ks->v[j].addr > ks->v[i].addr) {
					out[n++] = (struct ksyms_clone){ k, ks->v[i].addr, ks->v[j].addr };
					break;
				}
			break;
		}
	}
	return n;
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
