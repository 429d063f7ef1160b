// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Hostile traces for tools/bench-report.sh: CRC-valid files whose tables
 * are as large as the format lets a record be, to time `udpdrop report`
 * on them (it must stay linear, or refuse with a clear error).
 *
 *   hostile KIND N OUT
 *
 * KIND:
 *   meta      one META record with N distinct keys
 *   meta-rep  N META records, each with the same 4096 keys
 *   reasons   REASONS with N values, a COUNTS entry per reason
 *   symbols   SYMBOLS with N addresses, one socket dropping at all of them
 *   ifaces    IFACES with N interfaces of one netns
 *   mib       MIB records of N netns, a COUNTS entry in each
 *   sockets   COUNTS with N sockets, a SOCKETS record listing them
 * and two large valid ones (not hostile: the report must stay linear in
 * the length of a recording too):
 *   snapshots N COUNTS snapshots of 50 sockets each, SOCKETS every 10th
 *   events    N EVENTs over 100 sockets, 1 ms apart, in COUNTS of 1 s
 * Every file also has a COUNTS snapshot at the start, so the report has
 * an interval, and END.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "trace.h"

#define COUNTS_MAX 150000

static void die(const char *what, int err)
{
	fprintf(stderr, "hostile: %s: %s\n", what, strerror(-err));
	exit(1);
}

static void check(const char *what, int err)
{
	if (err)
		die(what, err);
}

static struct trace_count count(uint64_t cookie, uint32_t netns, uint32_t reason,
				uint64_t loc)
{
	struct trace_count c = { 0 };

	c.key.cookie = cookie;
	c.key.netns = netns;
	c.key.reason = reason;
	c.key.location = loc;
	c.key.family = AF_INET;
	c.key.proto = 17;
	c.key.daddr[0] = 10;
	c.key.dport = 5001;
	if (cookie)
		c.key.flags = UD_KEY_SOCK | UD_KEY_RX_SK;
	c.val.datagrams = c.val.skbs = 1;
	c.val.bytes = 100;
	return c;
}

/* names of n entries, "PREFIXnnnnnnn", in one allocation */
static char *names(const char *prefix, uint32_t n, size_t *stride)
{
	char *s;

	*stride = strlen(prefix) + 12;
	s = malloc((size_t)n * *stride + 1);
	if (!s)
		die("names", -ENOMEM);
	for (uint32_t i = 0; i < n; i++)
		snprintf(s + (size_t)i * *stride, *stride, "%s%u", prefix, i);
	return s;
}

int main(int argc, char **argv)
{
	struct trace_writer *w;
	struct trace_counts c0 = { .time_ns = 1000000000ull }, c1 = { .time_ns = 2000000000ull };
	struct trace_count *cv = NULL;
	const char *kind;
	size_t stride;
	uint32_t n;
	char *nm;

	if (argc != 4) {
		fprintf(stderr, "usage: hostile meta|meta-rep|reasons|symbols|ifaces|mib|sockets|snapshots|events N OUT\n");
		return 2;
	}
	kind = argv[1];
	n = strtoul(argv[2], NULL, 10);
	unlink(argv[3]);
	check(argv[3], trace_writer__open(argv[3], false, &w));
	check("counts", trace_writer__counts(w, &c0));
	cv = calloc(n + 1, sizeof(*cv));
	if (!cv)
		die("counts", -ENOMEM);
	if (!strcmp(kind, "meta") || !strcmp(kind, "meta-rep")) {
		bool rep = !strcmp(kind, "meta-rep");
		uint32_t k = rep ? 4096 : n;
		struct trace_kv *v = calloc(k, sizeof(*v));

		nm = names("key", k, &stride);
		for (uint32_t i = 0; i < k; i++) {
			v[i].key = nm + (size_t)i * stride;
			v[i].value = "v";
		}
		for (uint32_t r = 0; r < (rep ? n : 1); r++) {
			struct trace_meta m = { k, v };

			check("meta", trace_writer__meta(w, &m));
		}
		free(v);
	} else if (!strcmp(kind, "reasons")) {
		struct trace_reason *v = calloc(n, sizeof(*v));
		struct trace_reasons r = { n, v };

		nm = names("REASON_", n, &stride);
		for (uint32_t i = 0; i < n; i++) {
			v[i] = (struct trace_reason){ 1000 + i, nm + (size_t)i * stride };
			cv[i] = count(0, 1, 1000 + i, 0);
		}
		check("reasons", trace_writer__reasons(w, &r));
		c1.n = n;
		free(v);
	} else if (!strcmp(kind, "symbols")) {
		struct trace_symbol *v = calloc(n, sizeof(*v));
		struct trace_symbols s = { n, v };

		nm = names("fn_", n, &stride);
		for (uint32_t i = 0; i < n; i++) {
			v[i] = (struct trace_symbol){ 0xffffffff81000000ull + 16 * i,
						      nm + (size_t)i * stride };
			cv[i] = count(42, 1, 6, v[i].addr);
		}
		check("symbols", trace_writer__symbols(w, &s));
		c1.n = n;
		free(v);
	} else if (!strcmp(kind, "ifaces")) {
		struct trace_iface *v = calloc(n, sizeof(*v));
		struct trace_ifaces f = { n, v };

		nm = names("veth", n, &stride);
		for (uint32_t i = 0; i < n; i++)
			v[i] = (struct trace_iface){ .ifindex = 2 + i, .netns = 1, .mtu = 1500,
						     .txqueuelen = 1000, .name = nm + (size_t)i * stride };
		check("ifaces", trace_writer__ifaces(w, &f));
		cv[0] = count(42, 1, 6, 0);
		c1.n = 1;
		free(v);
	} else if (!strcmp(kind, "mib")) {
		struct trace_mib_entry e[] = { { "UdpRcvbufErrors", 0 }, { "UdpNoPorts", 0 } };

		nm = NULL;
		for (uint32_t i = 0; i < n; i++) {
			struct trace_mib m = { .time_ns = 1000000000ull, .netns = 1 + i,
					       .n = 2, .v = e };

			check("mib", trace_writer__mib(w, &m));
			cv[i] = count(0, 1 + i, 3, 0);
		}
		c1.n = n;
	} else if (!strcmp(kind, "sockets")) {
		struct trace_socket *v = calloc(n, sizeof(*v));
		struct trace_sockets s = { .time_ns = 2000000000ull, .n = n, .v = v };

		nm = NULL;
		for (uint32_t i = 0; i < n; i++) {
			cv[i] = count(1000 + i, 1, 6, 0);
			v[i] = (struct trace_socket){ .cookie = 1000 + i, .netns = 1, .pid = 7,
						      .family = AF_INET, .proto = 17,
						      .lport = (uint16_t)(1024 + i), .comm = "rx",
						      .rcvbuf = 4096 };
		}
		c1.n = n;
		check("sockets", trace_writer__sockets(w, &s));
		free(v);
	} else if (!strcmp(kind, "snapshots") || !strcmp(kind, "events")) {
		bool events = !strcmp(kind, "events");
		uint32_t nsock = events ? 100 : 50, snaps = events ? n / 1000 + 1 : n;
		struct trace_socket *v = calloc(nsock, sizeof(*v));
		struct trace_sockets s = { .n = nsock, .v = v };
		uint64_t t = 1000000000ull;

		nm = NULL;
		for (uint32_t i = 0; i < nsock; i++)
			v[i] = (struct trace_socket){ .cookie = 1000 + i, .netns = 1, .pid = 7,
						      .family = AF_INET, .proto = 17,
						      .lport = (uint16_t)(1024 + i), .comm = "rx",
						      .rcvbuf = 4096 };
		for (uint32_t k = 0; k < snaps; k++) {
			struct trace_counts c = { .time_ns = t, .n = nsock, .v = cv };

			for (uint32_t e = 0; events && e < 1000 && k * 1000 + e < n; e++) {
				struct trace_event ev = { .time_ns = t + e * 1000000ull, .netns = 1,
							  .cookie = 1000 + e % nsock, .reason = 6,
							  .flags = UD_KEY_SOCK | UD_KEY_RX_SK,
							  .family = AF_INET, .proto = 17, .len = 100,
							  .datagrams = 1 };

				check("event", trace_writer__event(w, &ev));
			}
			for (uint32_t i = 0; i < nsock; i++) {
				cv[i] = count(1000 + i, 1, 6, 0);
				cv[i].val.datagrams = cv[i].val.skbs = (uint64_t)k * (1 + i % 5);
			}
			t += 1000000000ull;
			check("counts", trace_writer__counts(w, &c));
			s.time_ns = t;
			if (k % 10 == 0)
				check("sockets", trace_writer__sockets(w, &s));
		}
		free(v);
	} else {
		fprintf(stderr, "hostile: unknown kind %s\n", kind);
		return 2;
	}
	/* a COUNTS record must fit a block (16 MiB, 96 bytes an entry) */
	if (c1.n > COUNTS_MAX)
		c1.n = COUNTS_MAX;
	c1.v = cv;
	check("counts", trace_writer__counts(w, &c1));
	check("close", trace_writer__close(w));
	free(nm);
	free(cv);
	return 0;
}
