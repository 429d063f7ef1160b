// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for src/kernel/kowner.c: the RTM_GETLINK dump parser (built
 * messages: a vxlan, a geneve, a veth, a hostile name, truncated and
 * malformed attributes) and the owner label.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include "kowner.h"

struct msgbuf {
	uint8_t b[8192];
	size_t len;
	size_t stack[8]; /* open nests' offsets */
	int depth;
};

static void put(struct msgbuf *m, const void *p, size_t n)
{
	memcpy(m->b + m->len, p, n);
	m->len += n;
}

static void pad(struct msgbuf *m)
{
	while (m->len % 4)
		m->b[m->len++] = 0;
}

static void attr(struct msgbuf *m, uint16_t type, const void *p, uint16_t n)
{
	struct nlattr a = { .nla_len = NLA_HDRLEN + n, .nla_type = type };

	put(m, &a, sizeof(a));
	put(m, p, n);
	pad(m);
}

static void nest_begin(struct msgbuf *m, uint16_t type)
{
	struct nlattr a = { .nla_type = type | NLA_F_NESTED };

	m->stack[m->depth++] = m->len;
	put(m, &a, sizeof(a));
}

static void nest_end(struct msgbuf *m)
{
	struct nlattr *a = (struct nlattr *)(m->b + m->stack[--m->depth]);

	a->nla_len = m->len - m->stack[m->depth];
}

static size_t link_begin(struct msgbuf *m, int ifindex)
{
	struct nlmsghdr nh = { .nlmsg_type = RTM_NEWLINK };
	struct ifinfomsg ifi = { .ifi_index = ifindex };
	size_t at = m->len;

	put(m, &nh, sizeof(nh));
	put(m, &ifi, sizeof(ifi));
	return at;
}

static void link_end(struct msgbuf *m, size_t at)
{
	((struct nlmsghdr *)(m->b + at))->nlmsg_len = m->len - at;
}

static void done(struct msgbuf *m)
{
	struct nlmsghdr nh = { .nlmsg_len = NLMSG_HDRLEN + 4, .nlmsg_type = NLMSG_DONE };
	int zero = 0;

	put(m, &nh, sizeof(nh));
	put(m, &zero, 4);
}

static void tunnel(struct msgbuf *m, int ifindex, const char *name, const char *kind,
		   uint16_t id_attr, uint32_t vni, uint16_t port_attr, uint16_t port)
{
	size_t at = link_begin(m, ifindex);
	uint16_t be = htons(port);

	attr(m, IFLA_IFNAME, name, strlen(name) + 1);
	nest_begin(m, IFLA_LINKINFO);
	attr(m, IFLA_INFO_KIND, kind, strlen(kind) + 1);
	if (id_attr || port_attr) {
		nest_begin(m, IFLA_INFO_DATA);
		if (id_attr)
			attr(m, id_attr, &vni, 4);
		if (port_attr)
			attr(m, port_attr, &be, 2);
		nest_end(m);
	}
	nest_end(m);
	link_end(m, at);
}

static void test_parse_and_label(void **state)
{
	struct msgbuf *m = calloc(1, sizeof(*m));
	struct kowner_list *l = calloc(1, sizeof(*l));
	char buf[KOWNER_LABEL_LEN];

	tunnel(m, 2, "veth0", "veth", 0, 0, 0, 0);
	tunnel(m, 3, "vxlan0", "vxlan", IFLA_VXLAN_ID, 42, IFLA_VXLAN_PORT, 4789);
	tunnel(m, 4, "vxlan1", "vxlan", IFLA_VXLAN_ID, 43, IFLA_VXLAN_PORT, 4789);
	tunnel(m, 5, "gnv\033[2J", "geneve", IFLA_GENEVE_ID, 7, IFLA_GENEVE_PORT, 6081);
	done(m);
	assert_int_equal(kowner__parse_links(m->b, m->len, l), 1);
	assert_int_equal(l->n, 3); /* the veth owns no UDP socket */
	assert_true(kowner__label(l, 4789, buf, sizeof(buf)));
	assert_string_equal(buf, "kernel vxlan vxlan0 vni 42, vxlan1 vni 43");
	assert_true(kowner__label(l, 6081, buf, sizeof(buf)));
	assert_string_equal(buf, "kernel geneve gnv?[2J vni 7"); /* printable */
	assert_false(kowner__label(l, 5001, buf, sizeof(buf)));
	assert_string_equal(buf, "");
	assert_false(kowner__label(l, 0, buf, sizeof(buf)));
	assert_false(kowner__label(NULL, 4789, buf, sizeof(buf)));
	/* too small for both: the rest counted */
	assert_true(kowner__label(l, 4789, buf, 36));
	assert_string_equal(buf, "kernel vxlan vxlan0 vni 42 +1");
	free(m);
	free(l);
}

/* Malformed input ends the walk or fails: never read past the buffer. */
static void test_malformed(void **state)
{
	struct msgbuf *m = calloc(1, sizeof(*m));
	struct kowner_list *l = calloc(1, sizeof(*l));
	struct nlmsghdr *nh;

	tunnel(m, 3, "vxlan0", "vxlan", IFLA_VXLAN_ID, 42, IFLA_VXLAN_PORT, 4789);
	/* a message longer than the buffer */
	assert_int_equal(kowner__parse_links(m->b, m->len - 1, l), -EBADMSG);
	/* an attribute longer than its message: that device's walk stops */
	l->n = 0;
	((struct nlattr *)(m->b + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct ifinfomsg))))->nla_len = 60000;
	assert_int_equal(kowner__parse_links(m->b, m->len, l), 0);
	assert_int_equal(l->n, 0);
	/* a message length below the header */
	nh = (struct nlmsghdr *)m->b;
	nh->nlmsg_len = 4;
	assert_int_equal(kowner__parse_links(m->b, m->len, l), -EBADMSG);
	/* an error reply */
	{
		struct {
			struct nlmsghdr nh;
			struct nlmsgerr e;
		} err = { { sizeof(err), NLMSG_ERROR, 0, 0, 0 }, { -EPERM, {} } };

		assert_int_equal(kowner__parse_links(&err, sizeof(err), l), -EPERM);
	}
	/* nothing: more to come */
	assert_int_equal(kowner__parse_links(m->b, 0, l), 0);
	free(m);
	free(l);
}

/* More devices than the list holds: the first KOWNER_DEVS_MAX, no overrun. */
static void test_many(void **state)
{
	struct msgbuf *m = calloc(1, sizeof(*m));
	struct kowner_list *l = calloc(1, sizeof(*l));
	int n = 0;

	while (m->len + 200 < sizeof(m->b)) {
		tunnel(m, 10 + n, "vx", "vxlan", IFLA_VXLAN_ID, n, IFLA_VXLAN_PORT, 4789);
		n++;
	}
	assert_true(n > KOWNER_DEVS_MAX);
	assert_int_equal(kowner__parse_links(m->b, m->len, l), 0);
	assert_int_equal(l->n, KOWNER_DEVS_MAX);
	free(m);
	free(l);
}

/* Owners without a device (fou/gue ports, l2tp tunnels): kind and id. */
static void test_label_no_device(void **state)
{
	struct kowner_list l = { .n = 3 };
	char buf[KOWNER_LABEL_LEN];

	l.v[0] = (struct kowner_dev){ .kind = "fou", .port = 5555, .id = "ipproto 4" };
	l.v[1] = (struct kowner_dev){ .kind = "fou", .port = 5555, .id = "ipproto 47" };
	l.v[2] = (struct kowner_dev){ .kind = "l2tp", .port = 1701, .id = "tunnel 7" };
	assert_true(kowner__label(&l, 5555, buf, sizeof(buf)));
	assert_string_equal(buf, "kernel fou ipproto 4, ipproto 47");
	assert_true(kowner__label(&l, 1701, buf, sizeof(buf)));
	assert_string_equal(buf, "kernel l2tp tunnel 7");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_and_label),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_label_no_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
