// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Loader and reader of the sink's XDP program (see xdpstamp.h). */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "util.h"
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
		str_printable(msg);
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
	} else {
		x->local = true;
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
	/* before the attachment: from the first packet on, only ours count */
	err = xdpstamp__refresh_local(x);
	if (err)
		pr_info("XDP: cannot list this host's addresses (%s): datagrams to any address count\n",
			strerror(-err));
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

void xdpstamp__stop_run(struct xdpstamp *x, uint32_t run)
{
	/* the program reads run_id first, then ended_run: ended_run first */
	__atomic_store_n(&x->skel->bss->ended_run, run, __ATOMIC_RELEASE);
	__atomic_store_n(&x->skel->bss->run_id, UG_RUN_NONE, __ATOMIC_RELEASE);
}

struct local_key {
	uint8_t a[16];
};

static bool key_in(const struct local_key *v, int n, const struct local_key *k)
{
	for (int i = 0; i < n; i++)
		if (!memcmp(&v[i], k, sizeof(*k)))
			return true;
	return false;
}

int xdpstamp__refresh_local(struct xdpstamp *x)
{
	struct local_key *keys, *stale, k, cur;
	struct ifaddrs *ifa;
	int fd, n = 0, nstale = 0, err = 0;
	bool too_many = false;
	uint8_t one = 1;

	if (!x->local)
		return 0;
	if (getifaddrs(&ifa))
		return -errno;
	keys = calloc(UG_XDP_LOCAL_ADDRS, sizeof(*keys));
	stale = calloc(UG_XDP_LOCAL_ADDRS, sizeof(*stale));
	if (!keys || !stale) {
		err = -ENOMEM;
		goto out;
	}
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr)
			continue;
		memset(&k, 0, sizeof(k));
		if (i->ifa_addr->sa_family == AF_INET) {
			/* as the program builds it: ::ffff:a.b.c.d */
			k.a[10] = k.a[11] = 0xff;
			memcpy(&k.a[12], &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			memcpy(k.a, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
		} else {
			continue;
		}
		if (key_in(keys, n, &k))
			continue;
		if (n == UG_XDP_LOCAL_ADDRS) {
			too_many = true;
			break;
		}
		keys[n++] = k;
	}
	fd = bpf_map__fd(x->skel->maps.local_addrs);
	if (too_many) {
		/* more than the map holds: any address, rather than missing some */
		__atomic_store_n(&x->skel->bss->local_check, 0, __ATOMIC_RELEASE);
		goto out;
	}
	for (int i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, &keys[i], &one, BPF_ANY)) {
			err = -errno;
			__atomic_store_n(&x->skel->bss->local_check, 0, __ATOMIC_RELEASE);
			goto out;
		}
	/* the addresses gone since: collected, then removed */
	for (void *prev = NULL; !bpf_map_get_next_key(fd, prev, &k); prev = &cur) {
		if (!key_in(keys, n, &k) && nstale < UG_XDP_LOCAL_ADDRS)
			stale[nstale++] = k;
		cur = k;
	}
	for (int i = 0; i < nstale; i++)
		bpf_map_delete_elem(fd, &stale[i]);
	__atomic_store_n(&x->skel->bss->local_check, 1, __ATOMIC_RELEASE);
out:
	freeifaddrs(ifa);
	free(keys);
	free(stale);
	return err;
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

bool xdpstamp__uncounted(const struct xdpstamp *x, uint32_t flow, uint64_t seq)
{
	uint32_t slot = (uint32_t)(((seq << x->shift) + flow) & (UG_XDP_STAMPS - 1));

	return __atomic_load_n(&x->stamps[slot].tag, __ATOMIC_ACQUIRE) ==
	       ((UG_STAMP_TAG(flow, seq) + 1) | UG_STAMP_UNCOUNTED);
}
