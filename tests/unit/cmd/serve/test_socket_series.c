// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop serve's per-socket series (src/cmd/serve/socket_series.c) from
 * a model over real sockets of this process: the labels, the deltas that
 * keep each series growing when rows change their keys, the port cap,
 * ephemeral ports and retention.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include "model_fixture.h"
#include "serve_advice.h"
#include "socket_series.h"

#ifndef SO_COOKIE
#define SO_COOKIE 57
#endif

struct fx {
	struct model_fx x;
	struct socket_series s;
	int fds[3];
	uint32_t r_rcvbuff;
	char comm[32];
	uint16_t lo, hi;          /* the fake ip_local_port_range; 0: none */
};

static int fake_range(void *arg, uint32_t netns, uint16_t *lo, uint16_t *hi)
{
	struct fx *f = arg;

	if (!f->lo)
		return -ENOENT;
	*lo = f->lo;
	*hi = f->hi;
	return 0;
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct model_opts o = {};
	FILE *c;

	if (!f || model_fx__open(&f->x) || socket_series__init(&f->s))
		return -1;
	for (int i = 0; i < 3; i++)
		f->fds[i] = -1;
	model_fx__init(&f->x, &o);
	f->r_rcvbuff = model_fx__reason(&f->x, "SOCKET_RCVBUFF");
	f->s.port_range = fake_range;
	f->s.port_range_arg = f;
	c = fopen("/proc/self/comm", "r");
	if (!c || !fgets(f->comm, sizeof(f->comm), c))
		return -1;
	fclose(c);
	f->comm[strcspn(f->comm, "\n")] = '\0';
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	socket_series__free(&f->s);
	model_fx__close(&f->x);
	for (int i = 0; i < 3; i++)
		if (f->fds[i] >= 0)
			close(f->fds[i]);
	free(f);
	return 0;
}

/* A UDP socket of ours on 127.0.0.1, connected to peer_port if not 0. */
static uint64_t open_udp(struct fx *f, int slot, uint16_t *port, uint16_t peer_port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a), clen;
	uint64_t cookie = 0;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	f->fds[slot] = fd;
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	if (peer_port) {
		struct sockaddr_in p = a;

		p.sin_port = htons(peer_port);
		assert_int_equal(connect(fd, (struct sockaddr *)&p, sizeof(p)), 0);
	}
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	*port = ntohs(a.sin_port);
	clen = sizeof(cookie);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &clen), 0);
	return cookie;
}

static void put(struct fx *f, uint64_t cookie, uint32_t flags, uint64_t n)
{
	struct ud_key k = { .netns = f->x.netns, .reason = f->r_rcvbuff, .cookie = cookie,
			    .flags = UD_KEY_SOCK | UD_KEY_RX_SK | flags };
	struct ud_val *v = htab__upsert(&f->x.drops, &k, NULL);

	assert_non_null(v);
	v->datagrams = v->skbs = n;
}

static void update_at(struct fx *f, uint64_t s)
{
	uint64_t now = f->x.m.start_ns + s * 1000000000ull;

	assert_int_equal(model__update(&f->x.m, &f->x.drops, f->x.overflow, f->x.stats, now), 0);
	assert_int_equal(socket_series__update(&f->s, &f->x.m, now), 0);
}

static char *page(struct fx *f)
{
	struct expo e;

	sb_free(&f->x.sb);
	memset(&f->x.sb, 0, sizeof(f->x.sb));
	expo__init(&e, &f->x.sb, EXPO_TEXT, 0);
	socket_series__render(&f->s, &e);
	return f->x.sb.buf;
}

/* The value of the series on port (a number or a word), -1 when absent. */
static long long value(struct fx *f, const char *port, const char *comm)
{
	char want[256];
	const char *p, *pg = page(f);

	snprintf(want, sizeof(want),
		 "udpdrop_socket_drops_total{netns=\"%u\",family=\"inet\",port=\"%s\","
		 "cause=\"rcvbuf\",comm=\"%s\",k8s_namespace=\"\",k8s_pod=\"\",k8s_container=\"\"} ",
		 f->x.netns, port, comm);
	p = strstr(pg, want);
	return p ? atoll(p + strlen(want)) : -1;
}

static void test_labels_and_growth(void **state)
{
	struct fx *f = *state;
	uint16_t port;
	char ps[8];
	uint64_t cookie = open_udp(f, 0, &port, 0);

	snprintf(ps, sizeof(ps), "%u", port);
	put(f, cookie, 0, 5);
	update_at(f, 1);
	assert_int_equal(value(f, ps, f->comm), 5);
	put(f, cookie, 0, 12);
	update_at(f, 2);
	assert_int_equal(value(f, ps, f->comm), 12);
	/* no cookie, pid or address in a label */
	char c[32];

	snprintf(c, sizeof(c), "%llu", (unsigned long long)cookie);
	assert_null(strstr(page(f), c));
	assert_null(strstr(page(f), "127.0.0.1"));

	/* the tracer gives the closed socket's entry back: its counts go to
	 * the netns's folded row, the series stays (no double count) */
	close(f->fds[0]);
	f->fds[0] = -1;
	htab__clear(&f->x.drops);
	put(f, UD_COOKIE_FOLDED | f->x.netns, 0, 12);
	update_at(f, 3);
	assert_int_equal(value(f, ps, f->comm), 12);
}

/* Past the cap of ports, new ones are "other" (counted); a connected
 * socket on the netns's ephemeral range is "ephemeral". */
static void test_cap_and_ephemeral(void **state)
{
	struct fx *f = *state;
	uint16_t p0, p1, p2;
	char ps[8];
	uint64_t c0 = open_udp(f, 0, &p0, 0), c1 = open_udp(f, 1, &p1, 0);
	uint64_t c2 = open_udp(f, 2, &p2, 9);

	f->s.port_cap = 1;
	f->lo = p2;
	f->hi = p2;
	put(f, c0, 0, 3);
	update_at(f, 1);
	put(f, c1, 0, 4);
	put(f, c2, 0, 6);
	update_at(f, 2);
	snprintf(ps, sizeof(ps), "%u", p0);
	assert_int_equal(value(f, ps, f->comm), 3);
	assert_int_equal(value(f, "other", f->comm), 4);
	assert_int_equal(value(f, "ephemeral", f->comm), 6);
	assert_non_null(strstr(page(f), "udpdrop_socket_series_folded_total 1\n"));
	/* the folded count is per socket, not per refresh */
	put(f, c1, 0, 5);
	update_at(f, 3);
	assert_int_equal(value(f, "other", f->comm), 5);
	assert_non_null(strstr(page(f), "udpdrop_socket_series_folded_total 1\n"));
	/* the netns's range is read once while in use, forgotten after
	 * (netns come and go) */
	assert_int_equal(f->s.ranges.n, 1);
	f->s.retention_ns = 10 * 1000000000ull;
	htab__clear(&f->x.drops);
	update_at(f, 10);
	assert_int_equal(f->s.ranges.n, 1);
	update_at(f, 14);
	assert_int_equal(f->s.ranges.n, 0);
}

/* A series quiet for the retention leaves the page; memory is bounded. */
static void test_retention(void **state)
{
	struct fx *f = *state;
	uint16_t port;
	char ps[8];
	uint64_t cookie = open_udp(f, 0, &port, 0);

	f->s.retention_ns = 10 * 1000000000ull;
	snprintf(ps, sizeof(ps), "%u", port);
	put(f, cookie, 0, 2);
	update_at(f, 1);
	assert_int_equal(value(f, ps, f->comm), 2);
	update_at(f, 5);
	assert_int_equal(value(f, ps, f->comm), 2);
	update_at(f, 12);
	assert_int_equal(value(f, ps, f->comm), -1);
	/* the socket's own series (its gauges) lives while it does */
	assert_int_equal(f->s.series.n, 1);
	close(f->fds[0]);
	f->fds[0] = -1;
	update_at(f, 14);
	update_at(f, 25);
	assert_int_equal(f->s.series.n, 0);
}

static int fake_pod(void *arg, int pid, struct pod_names *out)
{
	int *calls = arg;

	(*calls)++;
	memset(out, 0, sizeof(*out));
	if (pid != getpid())
		return POD_NONE;
	strcpy(out->ns, "dns");
	strcpy(out->pod, "coredns-x\"y");
	strcpy(out->container, "coredns");
	strcpy(out->uid, "6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d");
	return POD_FOUND;
}

/* The owner's pod: looked up once per socket, on its series (escaped), and
 * once in udpdrop_pod_info. */
static void test_pod_labels(void **state)
{
	struct fx *f = *state;
	uint16_t port;
	int calls = 0;
	char want[512];
	uint64_t cookie = open_udp(f, 0, &port, 0);

	f->s.pod_of = fake_pod;
	f->s.pod_of_arg = &calls;
	put(f, cookie, 0, 4);
	update_at(f, 1);
	put(f, cookie, 0, 9);
	update_at(f, 2);
	assert_int_equal(calls, 1);
	snprintf(want, sizeof(want),
		 "udpdrop_socket_drops_total{netns=\"%u\",family=\"inet\",port=\"%u\",cause=\"rcvbuf\","
		 "comm=\"%s\",k8s_namespace=\"dns\",k8s_pod=\"coredns-x\\\"y\",k8s_container=\"coredns\"} 9\n",
		 f->x.netns, port, f->comm);
	assert_non_null(strstr(page(f), want));
	assert_non_null(strstr(page(f), "udpdrop_pod_info{k8s_namespace=\"dns\",k8s_pod=\"coredns-x\\\"y\","
				       "uid=\"6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d\"} 1\n"));
}

/*
 * Past the cap of series (a comm is any user's choice), new series go to
 * one port="other", comm="other" series per netns, family and cause; the
 * sum stays exact.
 */
static void test_series_cap(void **state)
{
	struct fx *f = *state;
	uint16_t p0, p1, p2;
	char ps[8];
	uint64_t c0 = open_udp(f, 0, &p0, 0), c1 = open_udp(f, 1, &p1, 0);
	uint64_t c2 = open_udp(f, 2, &p2, 0);

	f->s.series_cap = 2; /* c0's drops and its own (gauges) */
	put(f, c0, 0, 3);
	update_at(f, 1);
	put(f, c1, 0, 4);
	put(f, c2, 0, 5);
	update_at(f, 2);
	snprintf(ps, sizeof(ps), "%u", p0);
	assert_int_equal(value(f, ps, f->comm), 3);
	assert_int_equal(value(f, "other", "other"), 9);
	assert_int_equal(f->s.series.n, 4);
	assert_int_equal(f->s.folded, 2);
	put(f, c1, 0, 6);
	update_at(f, 3);
	assert_int_equal(value(f, "other", "other"), 11);
	assert_int_equal(f->s.folded, 2); /* per socket, not per refresh */
}

static int restarted_pod(void *arg, int pid, struct pod_names *out)
{
	int *calls = arg;

	memset(out, 0, sizeof(*out));
	strcpy(out->ns, "db");
	strcpy(out->pod, "db-0");
	strcpy(out->container, "db");
	/* a StatefulSet's pod made again: the same names, a new UID */
	strcpy(out->uid, (*calls)++ ? "00000000-0000-0000-0000-000000000002"
				    : "00000000-0000-0000-0000-000000000001");
	return POD_FOUND;
}

/* What the fake pod lookups below answer: every call counted. */
struct pod_answer {
	int got; /* POD_LATER or POD_NONE */
	int calls;
};

static int answer_pod(void *arg, int pid, struct pod_names *out)
{
	struct pod_answer *a = arg;

	(void)pid;
	a->calls++;
	memset(out, 0, sizeof(*out));
	return a->got;
}

/*
 * A pod's socket whose names are not there yet is asked about again after
 * the retry interval; one whose owner is in no pod never is (a host's
 * sockets would otherwise cost a cgroup read each, every 30 s, forever).
 */
static void test_pod_retry_only_for_pods(void **state)
{
	struct fx *f = *state;
	uint16_t port;
	uint64_t cookie = open_udp(f, 0, &port, 0);
	uint64_t retry_s = SOCKET_SERIES_POD_RETRY_NS / 1000000000ull;
	struct pod_answer later = { .got = POD_LATER }, none = { .got = POD_NONE };

	f->s.pod_of = answer_pod;
	f->s.pod_of_arg = &later;
	put(f, cookie, 0, 4);
	update_at(f, 1);
	update_at(f, 2);
	assert_int_equal(later.calls, 1);
	update_at(f, 1 + retry_s);
	assert_int_equal(later.calls, 2);
	/* in no pod: asked once, then never again */
	f->s.pod_of_arg = &none;
	update_at(f, 1 + 2 * retry_s);
	assert_int_equal(none.calls, 1);
	update_at(f, 1 + 4 * retry_s);
	update_at(f, 1 + 6 * retry_s);
	assert_int_equal(none.calls, 1);
}

/* A pod made again under its name is the same series, and its info the
 * latest UID: no label set twice on the page. */
static void test_pod_restart_same_series(void **state)
{
	struct fx *f = *state;
	uint16_t p0, p1;
	int calls = 0;
	const char *pg;
	uint64_t c0 = open_udp(f, 0, &p0, 0);

	f->s.pod_of = restarted_pod;
	f->s.pod_of_arg = &calls;
	put(f, c0, 0, 2);
	update_at(f, 1);
	close(f->fds[0]);
	f->fds[0] = -1;
	/* its successor binds the same port */
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(p0),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	uint64_t c1 = 0;
	socklen_t clen = sizeof(c1);

	f->fds[1] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(f->fds[1], (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockopt(f->fds[1], SOL_SOCKET, SO_COOKIE, &c1, &clen), 0);
	p1 = p0;
	put(f, c1, 0, 5);
	update_at(f, 2);
	assert_int_equal(calls, 2);
	pg = page(f);
	char want[512];

	snprintf(want, sizeof(want), "port=\"%u\",cause=\"rcvbuf\",comm=\"%s\",k8s_namespace=\"db\","
		 "k8s_pod=\"db-0\",k8s_container=\"db\"} 7\n", p1, f->comm);
	assert_non_null(strstr(pg, want));
	assert_non_null(strstr(pg, "udpdrop_pod_info{k8s_namespace=\"db\",k8s_pod=\"db-0\","
				   "uid=\"00000000-0000-0000-0000-000000000002\"} 1\n"));
	assert_null(strstr(pg, "000000000001"));
}

/* The value of sample name{netns,family="inet",port,[cause="rcvbuf",]comm,
 * no pod}, -1 when absent. */
static long long sample(struct fx *f, const char *name, const char *port, bool cause)
{
	char want[320];
	const char *p, *pg = page(f);

	snprintf(want, sizeof(want),
		 "%s{netns=\"%u\",family=\"inet\",port=\"%s\",%scomm=\"%s\",k8s_namespace=\"\","
		 "k8s_pod=\"\",k8s_container=\"\"} ", name, f->x.netns, port,
		 cause ? "cause=\"rcvbuf\"," : "", f->comm);
	p = strstr(pg, want);
	return p ? atoll(p + strlen(want)) : -1;
}

/*
 * The bytes of the drops per cause (the model's, exact), the deliveries
 * where the tracer counts them, and the gauges of a numeric port's live
 * socket (ss's rb, r): none for port="ephemeral", and neither deliveries
 * nor the queue's peak without deliveries counted.
 */
static void test_bytes_rx_gauges(void **state)
{
	struct fx *f = *state;
	uint16_t p0, p1, p2;
	char ps[8];
	int rb = 4096, got = 0;
	socklen_t len = sizeof(got);
	uint64_t c0 = open_udp(f, 0, &p0, 0), c1 = open_udp(f, 1, &p1, 9);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(p0),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct htab rx;
	struct ud_rx *x;

	open_udp(f, 2, &p2, 0);
	assert_int_equal(setsockopt(f->fds[0], SOL_SOCKET, SO_RCVBUF, &rb, sizeof(rb)), 0);
	assert_int_equal(getsockopt(f->fds[0], SOL_SOCKET, SO_RCVBUF, &got, &len), 0);
	assert_int_equal(sendto(f->fds[2], "x", 1, 0, (struct sockaddr *)&to, sizeof(to)), 1);
	f->lo = f->hi = p1;
	snprintf(ps, sizeof(ps), "%u", p0);

	/* no deliveries counted (before Linux 6.6) */
	put(f, c0, 0, 5);
	((struct ud_val *)htab__find(&f->x.drops, &(struct ud_key){ .netns = f->x.netns,
		.reason = f->r_rcvbuff, .cookie = c0, .flags = UD_KEY_SOCK | UD_KEY_RX_SK }))->bytes = 5 * 308;
	put(f, c1, 0, 2);
	assert_int_equal(model__update_rx(&f->x.m, NULL), 0);
	update_at(f, 1);
	assert_int_equal(sample(f, "udpdrop_socket_dropped_bytes_total", ps, true), 5 * 308);
	assert_int_equal(sample(f, "udpdrop_socket_rcvbuf_bytes", ps, false), got);
	assert_true(sample(f, "udpdrop_socket_queue_bytes", ps, false) > 0);
	assert_int_equal(sample(f, "udpdrop_socket_drops_total", "ephemeral", true), 2);
	assert_int_equal(sample(f, "udpdrop_socket_rcvbuf_bytes", "ephemeral", false), -1);
	assert_null(strstr(page(f), "udpdrop_socket_received_total"));
	assert_null(strstr(page(f), "udpdrop_socket_queue_peak_bytes"));

	/* deliveries counted: 7 to c0, its queue's peak */
	assert_int_equal(htab__init(&rx, sizeof(uint64_t), sizeof(struct ud_rx)), 0);
	x = htab__upsert(&rx, &c0, NULL);
	assert_non_null(x);
	memset(x, 0, sizeof(*x));
	x->datagrams = 7;
	x->peak = 2304;
	assert_int_equal(model__update_rx(&f->x.m, &rx), 0);
	update_at(f, 2);
	assert_int_equal(sample(f, "udpdrop_socket_received_total", ps, false), 7);
	assert_int_equal(sample(f, "udpdrop_socket_queue_peak_bytes", ps, false), 2304);
	assert_int_equal(sample(f, "udpdrop_socket_received_total", "ephemeral", false), -1);
	x->datagrams = 9;
	assert_int_equal(model__update_rx(&f->x.m, &rx), 0);
	update_at(f, 3);
	assert_int_equal(sample(f, "udpdrop_socket_received_total", ps, false), 9);
	assert_int_equal(sample(f, "udpdrop_socket_dropped_bytes_total", ps, true), 5 * 308);
	htab__free(&rx);

	/* closed: no gauges (a dead socket's buffer is no one's), the
	 * counters stay */
	close(f->fds[0]);
	f->fds[0] = -1;
	update_at(f, 4);
	assert_int_equal(sample(f, "udpdrop_socket_rcvbuf_bytes", ps, false), -1);
	assert_int_equal(sample(f, "udpdrop_socket_drops_total", ps, true), 5);
}

/* n datagrams from 10.0.0.src to 10.0.0.2:port, a port with no socket. */
static void put_noport(struct fx *f, uint32_t reason, uint8_t src, uint16_t port, uint64_t n)
{
	struct ud_key k = { .netns = f->x.netns, .reason = reason, .family = AF_INET,
			    .proto = IPPROTO_UDP, .dport = port,
			    .saddr = { 10, 0, 0, src }, .daddr = { 10, 0, 0, 2 } };
	struct ud_val *v = htab__upsert(&f->x.drops, &k, NULL);

	assert_non_null(v);
	v->datagrams = v->skbs = n;
}

static long long noport(struct fx *f, const char *port)
{
	char want[160];
	const char *p, *pg = page(f);

	snprintf(want, sizeof(want), "udpdrop_noport_drops_total{netns=\"%u\",family=\"inet\",port=\"%s\"} ",
		 f->x.netns, port);
	p = strstr(pg, want);
	return p ? atoll(p + strlen(want)) : -1;
}

/*
 * Datagrams to ports with no socket: per destination port (two flows to
 * one port sum), past the cap "other" (the flow counted once), a port of
 * the ephemeral range "ephemeral"; a cap of their own, so the sockets'
 * ports keep their numbers.
 */
static void test_noport(void **state)
{
	struct fx *f = *state;
	uint32_t r = model_fx__reason(&f->x, "NO_SOCKET");
	uint16_t p0;
	char ps[8];
	uint64_t c0 = open_udp(f, 0, &p0, 0);

	f->s.port_cap = 2;
	f->lo = 40000;
	f->hi = 40010;
	put_noport(f, r, 1, 7001, 3);
	put_noport(f, r, 9, 7001, 2);
	put_noport(f, r, 1, 7002, 4);
	update_at(f, 1);
	put_noport(f, r, 1, 7003, 5);
	put_noport(f, r, 1, 40005, 6);
	put(f, c0, 0, 1);
	update_at(f, 2);
	assert_int_equal(noport(f, "7001"), 5);
	assert_int_equal(noport(f, "7002"), 4);
	assert_int_equal(noport(f, "7003"), -1);
	assert_int_equal(noport(f, "other"), 5);
	assert_int_equal(noport(f, "ephemeral"), 6);
	assert_non_null(strstr(page(f), "udpdrop_noport_flows_folded_total 1\n"));
	snprintf(ps, sizeof(ps), "%u", p0);
	assert_int_equal(value(f, ps, f->comm), 1);
	/* grows by its delta; the fold counted once per flow */
	put_noport(f, r, 1, 7003, 8);
	update_at(f, 3);
	assert_int_equal(noport(f, "other"), 8);
	assert_int_equal(noport(f, "7001"), 5);
	assert_non_null(strstr(page(f), "udpdrop_noport_flows_folded_total 1\n"));
}

/* Does a sample of family name (its line start) have port="port"? */
static bool has_port(struct fx *f, const char *name, const char *port)
{
	char want[96];
	const char *pg = page(f), *p = pg;

	snprintf(want, sizeof(want), "port=\"%s\"", port);
	while ((p = strstr(p, name))) {
		const char *eol = strchr(p, '\n');
		const char *hit = strstr(p, want);

		if ((p == pg || p[-1] == '\n') && hit && (!eol || hit < eol))
			return true;
		p += strlen(name);
	}
	return false;
}

/*
 * Gauges once folded: none for port="other" (past the cap of ports);
 * two live sockets of one numeric port (a SO_REUSEPORT group) show the
 * larger buffer, not a sum.
 */
static void test_gauges_folded_and_shared(void **state)
{
	struct fx *f = *state;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a), clen;
	uint64_t c[3];
	int one = 1, rb[2] = { 4096, 16384 }, got[2];
	uint16_t p2;
	char ps[8];

	/* two REUSEPORT members on one port, their buffers apart */
	for (int i = 0; i < 2; i++) {
		f->fds[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		assert_true(f->fds[i] >= 0);
		assert_int_equal(setsockopt(f->fds[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)), 0);
		assert_int_equal(setsockopt(f->fds[i], SOL_SOCKET, SO_RCVBUF, &rb[i], sizeof(rb[i])), 0);
		assert_int_equal(bind(f->fds[i], (struct sockaddr *)&a, sizeof(a)), 0);
		assert_int_equal(getsockname(f->fds[i], (struct sockaddr *)&a, &alen), 0);
		clen = sizeof(got[i]);
		assert_int_equal(getsockopt(f->fds[i], SOL_SOCKET, SO_RCVBUF, &got[i], &clen), 0);
		clen = sizeof(c[i]);
		assert_int_equal(getsockopt(f->fds[i], SOL_SOCKET, SO_COOKIE, &c[i], &clen), 0);
	}
	c[2] = open_udp(f, 2, &p2, 0);
	f->s.port_cap = 1;
	put(f, c[0], 0, 3);
	put(f, c[1], 0, 4);
	update_at(f, 1);
	put(f, c[2], 0, 5);
	update_at(f, 2);
	snprintf(ps, sizeof(ps), "%u", ntohs(a.sin_port));
	assert_int_equal(sample(f, "udpdrop_socket_drops_total", ps, true), 7);
	assert_int_equal(sample(f, "udpdrop_socket_rcvbuf_bytes", ps, false), got[1]);
	assert_int_equal(sample(f, "udpdrop_socket_drops_total", "other", true), 5);
	assert_true(has_port(f, "udpdrop_socket_drops_total", "other"));
	assert_false(has_port(f, "udpdrop_socket_rcvbuf_bytes", "other"));
	assert_false(has_port(f, "udpdrop_socket_queue_bytes", "other"));
}

/* The setting's value now, in the unit the engine recommends it in. */
static void test_advice_current(void **state)
{
	struct advice_input in = { .rcvbuf = ADVICE_U64(8192), .rmem_default = ADVICE_U64(212992),
				   .rate_dgps = ADVICE_DBL(1234.4), .udp_mem = { ADVICE_U64(1),
				   ADVICE_U64(2), ADVICE_U64(3) } };
	struct advice_finding f = { 0 };
	uint64_t v = 0;

	(void)state;
	strcpy(f.setting, "SO_RCVBUF");
	assert_true(serve_advice__current(&in, &f, &v));
	assert_int_equal(v, 4096); /* the request: the kernel doubles it */
	strcpy(f.setting, "net.core.rmem_default");
	assert_true(serve_advice__current(&in, &f, &v));
	assert_int_equal(v, 212992);
	strcpy(f.setting, "sender_pps");
	assert_true(serve_advice__current(&in, &f, &v));
	assert_int_equal(v, 1234);
	strcpy(f.setting, "net.ipv4.udp_mem");
	assert_true(serve_advice__current(&in, &f, &v));
	assert_int_equal(v, 3);
	/* not known: no current gauge */
	strcpy(f.setting, "SO_SNDBUF");
	assert_false(serve_advice__current(&in, &f, &v));
	strcpy(f.setting, "txqueuelen");
	assert_false(serve_advice__current(&in, &f, &v));
	strcpy(f.setting, "no such setting");
	assert_false(serve_advice__current(&in, &f, &v));
}

/* The value of udpdrop_advice_{current,recommended}{port, setting}, -1
 * when absent. */
static long long advice(struct fx *f, struct serve_advice *a, const char *which, uint16_t port,
			const char *setting)
{
	char want[256];
	const char *p;
	struct expo e;

	sb_free(&f->x.sb);
	memset(&f->x.sb, 0, sizeof(f->x.sb));
	expo__init(&e, &f->x.sb, EXPO_TEXT, 0);
	serve_advice__render(a, &e);
	snprintf(want, sizeof(want),
		 "udpdrop_advice_%s{netns=\"%u\",family=\"inet\",port=\"%u\",comm=\"%s\",setting=\"%s\"} ",
		 which, f->x.netns, port, f->comm, setting);
	p = f->x.sb.buf ? strstr(f->x.sb.buf, want) : NULL;
	return p ? atoll(p + strlen(want)) : -1;
}

/*
 * The advice engine's finding for a socket with a 4 KiB buffer that drops
 * (top's: the engine fed by advice_model__input): its SO_RCVBUF now (the
 * request, half ss's rb) under what it recommends; none for a socket on
 * port="ephemeral".
 */
static void test_advice_gauges(void **state)
{
	struct fx *f = *state;
	struct serve_advice a;
	uint16_t p0, p1;
	int rb = 4096, got = 0;
	socklen_t len = sizeof(got);
	uint64_t c0 = open_udp(f, 0, &p0, 0), c1 = open_udp(f, 1, &p1, 9);

	assert_int_equal(serve_advice__init(&a), 0);
	assert_int_equal(setsockopt(f->fds[0], SOL_SOCKET, SO_RCVBUF, &rb, sizeof(rb)), 0);
	assert_int_equal(getsockopt(f->fds[0], SOL_SOCKET, SO_RCVBUF, &got, &len), 0);
	f->lo = f->hi = p1;
	put(f, c0, 0, 100);
	put(f, c1, 0, 100);
	update_at(f, 1);
	assert_int_equal(serve_advice__update(&a, &f->x.m, &f->s, true, 1), 0);
	put(f, c0, 0, 494);
	put(f, c1, 0, 300);
	update_at(f, 2);
	assert_int_equal(serve_advice__update(&a, &f->x.m, &f->s, true, 2), 0);
	long long cur = advice(f, &a, "current", p0, "SO_RCVBUF");
	long long rec = advice(f, &a, "recommended", p0, "SO_RCVBUF");

	print_message("SO_RCVBUF: current %lld, recommended %lld\n", cur, rec);
	assert_int_equal(cur, got / 2);
	assert_true(rec > cur);
	assert_int_equal(advice(f, &a, "recommended", p1, "SO_RCVBUF"), -1);
	assert_null(strstr(f->x.sb.buf, "port=\"ephemeral\""));
	serve_advice__free(&a);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_labels_and_growth),
		T(test_cap_and_ephemeral),
		T(test_retention),
		T(test_pod_labels),
		T(test_series_cap),
		T(test_pod_restart_same_series),
		T(test_pod_retry_only_for_pods),
		T(test_bytes_rx_gauges),
		T(test_noport),
		T(test_gauges_folded_and_shared),
		T(test_advice_gauges),
		cmocka_unit_test(test_advice_current),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
