// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/fou.h>
#include <linux/if_link.h>
#include <linux/l2tp.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/wireguard.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "kowner.h"
#include "util.h"

/* Netlink replies are read in buffers this large (the kernel's dump
 * messages fit in a page each). */
#define NL_BUF 32768

/* One attribute in [p, end): its type (nesting bits off), payload and
 * length; false at the end or on a malformed one (which ends the walk). */
struct nl_attr {
	uint16_t type;
	const uint8_t *data;
	uint16_t len;
};

static bool attr_next(const uint8_t **p, const uint8_t *end, struct nl_attr *a)
{
	const struct nlattr *na = (const struct nlattr *)*p;

	if (end - *p < (long)NLA_HDRLEN || na->nla_len < NLA_HDRLEN || na->nla_len > end - *p)
		return false;
	a->type = na->nla_type & NLA_TYPE_MASK;
	a->data = *p + NLA_HDRLEN;
	a->len = na->nla_len - NLA_HDRLEN;
	/* the last attribute may come without its padding */
	*p += NLA_ALIGN(na->nla_len) <= end - *p ? NLA_ALIGN(na->nla_len) : na->nla_len;
	return true;
}

static uint32_t attr_u32(const struct nl_attr *a)
{
	uint32_t v = 0;

	if (a->len >= 4)
		memcpy(&v, a->data, 4);
	return v;
}

/* IFLA_*_PORT: network order */
static uint16_t attr_be16(const struct nl_attr *a)
{
	return a->len >= 2 ? (uint16_t)(a->data[0] << 8 | a->data[1]) : 0;
}

static void attr_str(const struct nl_attr *a, char *buf, size_t len)
{
	size_t n = strnlen((const char *)a->data, a->len);

	if (n >= len)
		n = len - 1;
	memcpy(buf, a->data, n);
	buf[n] = '\0';
	str_printable(buf);
}

/* IFLA_INFO_DATA of a known kind: its port and VNI. */
static void parse_info_data(struct kowner_dev *d, const uint8_t *p, const uint8_t *end)
{
	struct nl_attr a;
	bool vxlan = !strcmp(d->kind, "vxlan"), geneve = !strcmp(d->kind, "geneve");

	while (attr_next(&p, end, &a)) {
		if (vxlan && a.type == IFLA_VXLAN_ID) {
			d->vni = attr_u32(&a);
			d->has_vni = true;
		} else if (vxlan && a.type == IFLA_VXLAN_PORT) {
			d->port = attr_be16(&a);
		} else if (vxlan && a.type == IFLA_VXLAN_COLLECT_METADATA) {
			d->external = a.len >= 1 && a.data[0];
		} else if (geneve && a.type == IFLA_GENEVE_ID) {
			d->vni = attr_u32(&a);
			d->has_vni = true;
		} else if (geneve && a.type == IFLA_GENEVE_PORT) {
			d->port = attr_be16(&a);
		} else if (geneve && a.type == IFLA_GENEVE_COLLECT_METADATA) {
			d->external = true; /* a flag: present means set */
		} else if (!strcmp(d->kind, "bareudp") && a.type == IFLA_BAREUDP_PORT) {
			d->port = attr_be16(&a);
		}
	}
}

static bool kind_owns_udp(const char *kind)
{
	return !strcmp(kind, "vxlan") || !strcmp(kind, "geneve") ||
	       !strcmp(kind, "bareudp") || !strcmp(kind, "wireguard");
}

/* One RTM_NEWLINK: a device of a kind that owns a UDP socket, or none. */
static void parse_link(const struct nlmsghdr *nh, struct kowner_list *out)
{
	const uint8_t *p = NLMSG_DATA(nh), *end = (const uint8_t *)nh + nh->nlmsg_len;
	const struct ifinfomsg *ifi = (const struct ifinfomsg *)p;
	struct kowner_dev d = {};
	const uint8_t *data = NULL, *data_end = NULL;
	struct nl_attr a;

	if (end - p < (long)NLMSG_ALIGN(sizeof(*ifi)) || out->n >= KOWNER_DEVS_MAX)
		return;
	d.ifindex = ifi->ifi_index;
	p += NLMSG_ALIGN(sizeof(*ifi));
	while (attr_next(&p, end, &a)) {
		if (a.type == IFLA_IFNAME) {
			attr_str(&a, d.name, sizeof(d.name));
		} else if (a.type == IFLA_LINKINFO) {
			const uint8_t *q = a.data, *qend = a.data + a.len;
			struct nl_attr b;

			while (attr_next(&q, qend, &b)) {
				if (b.type == IFLA_INFO_KIND)
					attr_str(&b, d.kind, sizeof(d.kind));
				else if (b.type == IFLA_INFO_DATA)
					data = b.data, data_end = b.data + b.len;
			}
		}
	}
	if (!kind_owns_udp(d.kind))
		return;
	if (data)
		parse_info_data(&d, data, data_end);
	out->v[out->n++] = d;
}

/*
 * Walk the netlink messages of one read: fn(message) for each of type
 * `type` (0: any). 1 at NLMSG_DONE, the error of an NLMSG_ERROR (1 for
 * an ack), -EBADMSG for a message that does not fit, 0 when more follow.
 */
static int nl_walk(const void *buf, size_t len, uint16_t type,
		   void (*fn)(const struct nlmsghdr *nh, void *arg), void *arg)
{
	const uint8_t *p = buf, *end = p + len;

	while (end - p >= (long)NLMSG_HDRLEN) {
		const struct nlmsghdr *nh = (const struct nlmsghdr *)p;

		if (nh->nlmsg_len < NLMSG_HDRLEN || nh->nlmsg_len > end - p)
			return -EBADMSG;
		if (nh->nlmsg_type == NLMSG_DONE)
			return 1;
		if (nh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(nh);

			if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
				return -EBADMSG;
			return e->error ? e->error : 1;
		}
		if (!type || nh->nlmsg_type == type)
			fn(nh, arg);
		p += NLMSG_ALIGN(nh->nlmsg_len) <= end - p ? NLMSG_ALIGN(nh->nlmsg_len) : nh->nlmsg_len;
	}
	return 0;
}

static void link_fn(const struct nlmsghdr *nh, void *arg)
{
	parse_link(nh, arg);
}

int kowner__parse_links(const void *buf, size_t len, struct kowner_list *out)
{
	return nl_walk(buf, len, RTM_NEWLINK, link_fn, out);
}

/* Send one request on fd; 0 or -errno. */
static int nl_send(int fd, const void *req, size_t len)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	return sendto(fd, req, len, 0, (struct sockaddr *)&sa, sizeof(sa)) == (ssize_t)len ? 0 : -errno;
}

/* Read replies into buf until cb says done (1) or fails (<0). */
static int nl_recv_all(int fd, uint8_t *buf, int (*cb)(const void *, size_t, void *), void *arg)
{
	for (;;) {
		ssize_t n = recv(fd, buf, NL_BUF, 0);
		int rc;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EBADMSG;
		rc = cb(buf, n, arg);
		if (rc)
			return rc < 0 ? rc : 0;
	}
}

static int links_cb(const void *buf, size_t len, void *arg)
{
	return kowner__parse_links(buf, len, arg);
}

/* ---- WireGuard: its listen port is in its generic netlink family ----- */

struct genl_req {
	struct nlmsghdr nh;
	struct genlmsghdr g;
	uint8_t attrs[64];
};

static size_t put_attr(uint8_t *at, uint16_t type, const void *v, uint16_t len)
{
	struct nlattr na = { .nla_len = NLA_HDRLEN + len, .nla_type = type };

	memcpy(at, &na, sizeof(na));
	memcpy(at + NLA_HDRLEN, v, len);
	return NLA_ALIGN(na.nla_len);
}

/* Walk the genl messages of buf; for each, fn(payload attrs). */
struct genl_walk {
	void (*fn)(const uint8_t *p, const uint8_t *end, void *arg);
	void *arg;
};

static void genl_fn(const struct nlmsghdr *nh, void *arg)
{
	const struct genl_walk *w = arg;
	const uint8_t *m = NLMSG_DATA(nh);

	if ((const uint8_t *)nh + nh->nlmsg_len - m >= (long)GENL_HDRLEN)
		w->fn(m + GENL_HDRLEN, (const uint8_t *)nh + nh->nlmsg_len, w->arg);
}

static int genl_cb(const void *buf, size_t len, void *arg)
{
	return nl_walk(buf, len, 0, genl_fn, arg);
}

static void family_id_fn(const uint8_t *p, const uint8_t *end, void *arg)
{
	struct nl_attr a;

	while (attr_next(&p, end, &a))
		if (a.type == CTRL_ATTR_FAMILY_ID && a.len >= 2)
			memcpy(arg, a.data, 2);
}

static void wg_port_fn(const uint8_t *p, const uint8_t *end, void *arg)
{
	struct nl_attr a;

	while (attr_next(&p, end, &a))
		if (a.type == WGDEVICE_A_LISTEN_PORT && a.len >= 2 && !*(uint16_t *)arg)
			memcpy(arg, a.data, 2); /* host order */
}

/* The id of generic netlink family `name`, 0 if the kernel has none. */
static uint16_t genl_family(int fd, const char *name, uint8_t *buf)
{
	struct genl_req req = {};
	uint16_t family = 0;
	struct genl_walk w = { family_id_fn, &family };

	req.nh.nlmsg_type = GENL_ID_CTRL;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.g.cmd = CTRL_CMD_GETFAMILY;
	req.g.version = 1;
	req.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) +
			   put_attr(req.attrs, CTRL_ATTR_FAMILY_NAME, name, strlen(name) + 1);
	if (nl_send(fd, &req, req.nh.nlmsg_len) || nl_recv_all(fd, buf, genl_cb, &w))
		return 0;
	return family;
}

/* A dump of cmd (with one u32 attribute when attr): fn for each reply. */
static int genl_dump(int fd, uint16_t family, uint8_t cmd, uint8_t version, uint16_t attr,
		     uint32_t value, uint8_t *buf, const struct genl_walk *w)
{
	struct genl_req req = {};

	req.nh.nlmsg_type = family;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.g.cmd = cmd;
	req.g.version = version;
	req.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) +
			   (attr ? put_attr(req.attrs, attr, &value, sizeof(value)) : 0);
	return nl_send(fd, &req, req.nh.nlmsg_len) ?: nl_recv_all(fd, buf, genl_cb, (void *)w);
}

static void wireguard_ports(int fd, struct kowner_list *out, uint8_t *buf)
{
	uint16_t family = genl_family(fd, WG_GENL_NAME, buf);

	for (int i = 0; family && i < out->n; i++) {
		uint16_t port = 0;
		struct genl_walk w = { wg_port_fn, &port };

		if (strcmp(out->v[i].kind, "wireguard"))
			continue;
		/* the family answers dumps only */
		if (!genl_dump(fd, family, WG_CMD_GET_DEVICE, WG_GENL_VERSION, WGDEVICE_A_IFINDEX,
			       out->v[i].ifindex, buf, &w))
			out->v[i].port = port;
	}
}

/*
 * FOU/GUE receive ports (ip fou add) and unmanaged L2TP tunnels (ip l2tp
 * add tunnel): kernel sockets with no device of their own, listed by
 * their generic netlink families; entries without a name.
 */
static void fou_fn(const uint8_t *p, const uint8_t *end, void *arg)
{
	struct kowner_list *out = arg;
	struct kowner_dev d = { .kind = "fou" };
	struct nl_attr a;
	int proto = -1;

	while (attr_next(&p, end, &a)) {
		if (a.type == FOU_ATTR_PORT)
			d.port = attr_be16(&a);
		else if (a.type == FOU_ATTR_IPPROTO && a.len >= 1)
			proto = a.data[0];
		else if (a.type == FOU_ATTR_TYPE && a.len >= 1 && a.data[0] == FOU_ENCAP_GUE)
			snprintf(d.kind, sizeof(d.kind), "gue");
	}
	if (proto >= 0)
		snprintf(d.id, sizeof(d.id), "ipproto %d", proto);
	if (d.port && out->n < KOWNER_DEVS_MAX)
		out->v[out->n++] = d;
}

static void l2tp_fn(const uint8_t *p, const uint8_t *end, void *arg)
{
	struct kowner_list *out = arg;
	struct kowner_dev d = { .kind = "l2tp" };
	struct nl_attr a;
	bool udp = true;

	while (attr_next(&p, end, &a)) {
		if (a.type == L2TP_ATTR_UDP_SPORT && a.len >= 2)
			memcpy(&d.port, a.data, 2); /* host order */
		else if (a.type == L2TP_ATTR_CONN_ID)
			snprintf(d.id, sizeof(d.id), "tunnel %u", attr_u32(&a));
		else if (a.type == L2TP_ATTR_ENCAP_TYPE && a.len >= 2)
			udp = !(a.data[0] | a.data[1]); /* L2TP_ENCAPTYPE_UDP is 0 */
	}
	if (udp && d.port && out->n < KOWNER_DEVS_MAX)
		out->v[out->n++] = d;
}

static void genl_owners(struct kowner_list *out, uint8_t *buf)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	uint16_t family;
	bool wg = false;

	if (fd < 0)
		return;
	for (int i = 0; i < out->n; i++)
		wg |= !strcmp(out->v[i].kind, "wireguard");
	if (wg)
		wireguard_ports(fd, out, buf);
	family = genl_family(fd, FOU_GENL_NAME, buf);
	if (family) {
		struct genl_walk w = { fou_fn, out };

		genl_dump(fd, family, FOU_CMD_GET, FOU_GENL_VERSION, 0, 0, buf, &w);
	}
	family = genl_family(fd, L2TP_GENL_NAME, buf);
	if (family) {
		struct genl_walk w = { l2tp_fn, out };

		genl_dump(fd, family, L2TP_CMD_TUNNEL_GET, L2TP_GENL_VERSION, 0, 0, buf, &w);
	}
	close(fd);
}

/* ---- reading a netns ---------------------------------------------------- */

static int read_here(void *arg)
{
	struct kowner_list *out = arg;
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETLINK,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.ifi = { .ifi_family = AF_UNSPEC },
	};
	uint8_t *buf = malloc(NL_BUF);
	int fd, err;

	if (!buf)
		return -ENOMEM;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0) {
		err = -errno;
		free(buf);
		return err;
	}
	err = nl_send(fd, &req, sizeof(req));
	if (!err)
		err = nl_recv_all(fd, buf, links_cb, out);
	close(fd);
	if (!err)
		genl_owners(out, buf);
	free(buf);
	return err;
}

int kowner__read(const struct netns_table *nt, uint32_t inode, struct kowner_list *out)
{
	out->netns = inode;
	out->n = 0;
	return netns__run_in(nt, inode, read_here, out);
}

/* ---- the label ---------------------------------------------------------- */

static void dev_text(const struct kowner_dev *d, bool with_kind, char *buf, size_t len)
{
	char id[40] = "";

	if (d->external)
		snprintf(id, sizeof(id), " external");
	else if (d->has_vni)
		snprintf(id, sizeof(id), " vni %u", d->vni);
	else if (d->id[0])
		snprintf(id, sizeof(id), " %s", d->id);
	/* "vxlan vxlan0 vni 42"; a device-less one: "fou ipproto 4" */
	snprintf(buf, len, "%s%s%s%s", with_kind ? d->kind : "", with_kind && d->name[0] ? " " : "",
		 d->name, with_kind || d->name[0] ? id : id + 1);
}

bool kowner__label(const struct kowner_list *l, uint16_t port, char *buf, size_t len)
{
	size_t used;
	int found = 0, left = 0;
	const char *kind = NULL;

	if (!len)
		return false;
	buf[0] = '\0';
	used = snprintf(buf, len, "kernel");
	for (int i = 0; l && i < l->n; i++) {
		const struct kowner_dev *d = &l->v[i];
		char t[64];
		size_t tl;

		if (!port || d->port != port)
			continue;
		/* the kind once per run of one kind: "kernel vxlan a vni 1, b vni 2" */
		dev_text(d, !kind || strcmp(kind, d->kind), t, sizeof(t));
		tl = strlen(t) + (found ? 2 : 1);
		if (left || used + tl + 8 >= len) {
			left++;
		} else {
			used += snprintf(buf + used, len - used, "%s%s", found ? ", " : " ", t);
			kind = d->kind;
		}
		found++;
	}
	if (!found) {
		buf[0] = '\0';
		return false;
	}
	if (left)
		snprintf(buf + used, len - used, " +%d", left);
	return true;
}
