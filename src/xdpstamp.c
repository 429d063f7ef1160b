// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Loader and reader of the sink's XDP program (see xdpstamp.h). */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "xdpstamp.h"
#include "xdpstamp.skel.h"

int xdpstamp__ifindex(const char *ifname)
{
	unsigned int idx = if_nametoindex(ifname);

	return idx ? (int)idx : -ENODEV;
}

/*
 * Native first: it runs in the driver, before any skb exists, so it sees
 * the datagrams the stack may later drop. Generic mode runs later (after
 * GRO, in the stack's receive path) but still before IP and UDP. libbpf's
 * bpf_program__attach_xdp lets the kernel choose and does not say what it
 * chose, so the link is made here with the mode asked for explicitly.
 */
static int attach(struct xdpstamp *x, const char *ifname, char *msg, size_t len)
{
	int prog_fd = bpf_program__fd(x->skel->progs.xdpstamp);
	LIBBPF_OPTS(bpf_link_create_opts, drv, .flags = XDP_FLAGS_DRV_MODE);
	LIBBPF_OPTS(bpf_link_create_opts, skb, .flags = XDP_FLAGS_SKB_MODE);
	int fd, drv_err;

	fd = bpf_link_create(prog_fd, x->ifindex, BPF_XDP, &drv);
	if (fd >= 0) {
		x->native = true;
		return fd;
	}
	drv_err = -errno;
	if (drv_err == -EBUSY || drv_err == -EEXIST || drv_err == -EPERM)
		goto fail_drv;
	fd = bpf_link_create(prog_fd, x->ifindex, BPF_XDP, &skb);
	if (fd >= 0) {
		fprintf(stderr, "udpdrop sink: XDP on %s in generic (SKB) mode: native mode failed (%s)\n",
			ifname, strerror(-drv_err));
		return fd;
	}
	drv_err = -errno;
fail_drv:
	if (drv_err == -EBUSY || drv_err == -EEXIST)
		snprintf(msg, len, "%s already has an XDP program (ip link show dev %s; bpftool net): cannot attach",
			 ifname, ifname);
	else
		snprintf(msg, len, "cannot attach XDP to %s: %s", ifname, strerror(-drv_err));
	return drv_err;
}

int xdpstamp__open(struct xdpstamp *x, const struct xdpstamp_opts *o,
		   char *msg, size_t len)
{
	struct xdpstamp_bpf *skel;
	int err;

	memset(x, 0, sizeof(*x));
	x->link_fd = -1;
	msg[0] = '\0';
	x->ifindex = xdpstamp__ifindex(o->ifname);
	if (x->ifindex < 0) {
		snprintf(msg, len, "no interface '%s'", o->ifname);
		return -ENODEV;
	}
	x->ncpus = libbpf_num_possible_cpus();
	if (x->ncpus <= 0) {
		snprintf(msg, len, "cannot count the possible CPUs");
		return x->ncpus ?: -EINVAL;
	}
	x->vals = calloc((size_t)UG_XDP_FLOWS * x->ncpus, sizeof(*x->vals));
	x->keys = calloc(UG_XDP_FLOWS, sizeof(*x->keys));
	x->stat_vals = calloc(x->ncpus, sizeof(*x->stat_vals));
	if (!x->vals || !x->keys || !x->stat_vals) {
		snprintf(msg, len, "out of memory");
		err = -ENOMEM;
		goto fail;
	}
	skel = xdpstamp_bpf__open();
	if (!skel) {
		err = -errno;
		snprintf(msg, len, "cannot open the XDP object: %s", strerror(-err));
		goto fail;
	}
	x->skel = skel;
	skel->rodata->port = o->port;
	skel->rodata->want4 = o->family != AF_INET6;
	skel->rodata->want6 = o->family != AF_INET;
	if (o->match_addr && o->family == AF_INET) {
		skel->rodata->match_addr4 = true;
		memcpy((void *)&skel->rodata->addr4, o->addr, 4);
	} else if (o->match_addr && o->family == AF_INET6) {
		skel->rodata->match_addr6 = true;
		memcpy((void *)skel->rodata->addr6, o->addr, 16);
	}
	err = xdpstamp_bpf__load(skel);
	if (err) {
		snprintf(msg, len, "cannot load the XDP program: %s%s", strerror(-err),
			 err == -EPERM ? " (run as root: sudo)" : "");
		goto fail;
	}
	x->stamps_len = (size_t)UG_XDP_STAMPS * sizeof(struct ug_stamp);
	x->stamps = mmap(NULL, x->stamps_len, PROT_READ, MAP_SHARED,
			 bpf_map__fd(skel->maps.stamps), 0);
	if (x->stamps == MAP_FAILED) {
		err = -errno;
		x->stamps = NULL;
		snprintf(msg, len, "cannot map the XDP stamps: %s", strerror(-err));
		goto fail;
	}
	x->shift = UG_XDP_FLOWS_SHIFT;
	x->link_fd = attach(x, o->ifname, msg, len);
	if (x->link_fd < 0) {
		err = x->link_fd;
		goto fail;
	}
	return 0;
fail:
	xdpstamp__close(x);
	return err;
}

void xdpstamp__close(struct xdpstamp *x)
{
	if (x->link_fd >= 0)
		close(x->link_fd); /* detaches: the link is ours alone */
	if (x->stamps)
		munmap((void *)x->stamps, x->stamps_len);
	xdpstamp_bpf__destroy(x->skel);
	free(x->vals);
	free(x->keys);
	free(x->stat_vals);
	memset(x, 0, sizeof(*x));
	x->link_fd = -1;
}

void xdpstamp__set_run(struct xdpstamp *x, uint32_t run)
{
	/* .bss is mapped: the program reads it on its next packet */
	__atomic_store_n(&x->skel->bss->run_id, run, __ATOMIC_RELEASE);
}

void xdpstamp__set_flows(struct xdpstamp *x, uint32_t nflows)
{
	uint32_t shift = 0;

	if (!nflows || nflows > UG_XDP_FLOWS)
		nflows = UG_XDP_FLOWS;
	while ((1u << shift) < nflows)
		shift++;
	x->shift = shift;
	__atomic_store_n(&x->skel->data->stamp_shift, shift, __ATOMIC_RELEASE);
}

int xdpstamp__read_flows(struct xdpstamp *x, struct ug_xdp_flow *out,
			 uint32_t n)
{
	int fd = bpf_map__fd(x->skel->maps.flows);
	__u32 count = n;
	int err;

	if (n > UG_XDP_FLOWS)
		return -EINVAL;
	if (!n)
		return 0;
	/* one syscall for all the flows of the run (arrays support batches) */
	err = bpf_map_lookup_batch(fd, NULL, &(__u32){ 0 }, x->keys, x->vals,
				   &count, NULL);
	if (err && errno != ENOENT) {
		/* without batch support: one lookup per flow */
		for (__u32 k = 0; k < n; k++)
			if (bpf_map_lookup_elem(fd, &k, x->vals + (size_t)k * x->ncpus))
				return -errno;
		count = n;
	}
	if (count < n)
		return -EIO;
	for (uint32_t k = 0; k < n; k++) {
		const struct ug_xdp_flow *v = x->vals + (size_t)k * x->ncpus;

		memset(&out[k], 0, sizeof(out[k]));
		for (int c = 0; c < x->ncpus; c++) {
			out[k].datagrams += v[c].datagrams;
			out[k].bytes += v[c].bytes;
			if (v[c].last_ns > out[k].last_ns)
				out[k].last_ns = v[c].last_ns;
		}
	}
	return 0;
}

int xdpstamp__read_stats(struct xdpstamp *x, uint64_t stats[UG_XS_MAX])
{
	int fd = bpf_map__fd(x->skel->maps.stats);

	for (__u32 k = 0; k < UG_XS_MAX; k++) {
		stats[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, x->stat_vals))
			return -errno;
		for (int c = 0; c < x->ncpus; c++)
			stats[k] += x->stat_vals[c];
	}
	return 0;
}

int xdpstamp__stamp(const struct xdpstamp *x, uint32_t flow, uint64_t seq,
		    uint64_t *ns)
{
	uint32_t slot = (uint32_t)(((seq << x->shift) + flow) & (UG_XDP_STAMPS - 1));
	const struct ug_stamp *s = &x->stamps[slot];
	uint64_t want = UG_STAMP_TAG(flow, seq) + 1, t1, t2, v;

	/* the writer: tag 0, time, tag (bpf/xdpstamp.bpf.c); the same tag on
	 * both sides of the time's read means the time is that datagram's */
	t1 = __atomic_load_n(&s->tag, __ATOMIC_ACQUIRE);
	if (t1 != want)
		return -ENOENT;
	v = __atomic_load_n(&s->ns, __ATOMIC_ACQUIRE);
	t2 = __atomic_load_n(&s->tag, __ATOMIC_RELAXED);
	if (t2 != want)
		return -ENOENT;
	*ns = v;
	return 0;
}
