/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kernel-owned UDP sockets: a VXLAN, GENEVE, bare UDP or WireGuard device,
 * a FOU/GUE receive port or an unmanaged L2TP tunnel opens its UDP socket
 * inside the kernel, so no process holds it and /proc names no owner. The
 * owner is found by the socket's netns and local port: the devices of that
 * netns (rtnetlink RTM_GETLINK: IFLA_INFO_KIND, IFLA_VXLAN_PORT/ID,
 * IFLA_GENEVE_PORT/ID, IFLA_BAREUDP_PORT; WireGuard's listen port from its
 * generic netlink family) and the fou and l2tp generic netlink families'
 * ports are read once and matched by port. The label, e.g. "kernel vxlan
 * vxlan0 vni 42", "kernel fou ipproto 4", "kernel l2tp tunnel 7", is what
 * every view shows as the owner.
 */
#ifndef UD_KOWNER_H
#define UD_KOWNER_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "netns.h"

#define KOWNER_DEVS_MAX 64 /* tunnel devices kept per netns (more are left out) */
#define KOWNER_LABEL_LEN 64

struct kowner_dev {
	char kind[16];          /* "vxlan", "geneve", "bareudp", "wireguard", "fou", "gue", "l2tp" */
	char name[IF_NAMESIZE]; /* printable */
	uint32_t ifindex;
	uint16_t port;          /* host order; 0: not known (yet) */
	bool has_vni, external; /* external: collect_metadata, any VNI */
	uint32_t vni;
	char id[24];            /* no device: "ipproto 4" (fou, gue), "tunnel 7" (l2tp) */
};

struct kowner_list {
	uint32_t netns;
	int n;
	struct kowner_dev v[KOWNER_DEVS_MAX];
};

/*
 * Read the tunnel devices of netns `inode` into *out (large: allocate
 * it). 0 or a negative errno (the netns cannot be entered, netlink
 * failed); out->n may be 0.
 */
int kowner__read(const struct netns_table *nt, uint32_t inode, struct kowner_list *out);

/*
 * Parse one buffer of an RTM_GETLINK dump's replies into *out (devices
 * of a kind that owns a UDP socket only). 1 at NLMSG_DONE, 0 for more,
 * a negative errno for an error reply or a malformed buffer. Linear in
 * len; every name made printable. (Public for the unit tests.)
 */
int kowner__parse_links(const void *buf, size_t len, struct kowner_list *out);

/*
 * The label of the device(s) owning local UDP port `port` in the list:
 * "kernel vxlan vxlan0 vni 42", several joined by ", " ("kernel vxlan
 * vxlan0 vni 42, vxlan1 vni 43"; "+N more" when they do not fit). false
 * (buf "") when no device there has that port.
 */
bool kowner__label(const struct kowner_list *l, uint16_t port, char *buf, size_t len);

#endif
