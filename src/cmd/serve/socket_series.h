/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * udpdrop serve's per-socket series: udpdrop_socket_drops_total{netns,
 * family, port, cause, comm, k8s_namespace, k8s_pod, k8s_container} and
 * udpdrop_socket_dropped_bytes_total (the same labels), and per socket
 * series without cause: udpdrop_socket_received_total (where the tracer
 * counts deliveries) and the gauges udpdrop_socket_rcvbuf_bytes,
 * udpdrop_socket_queue_bytes and udpdrop_socket_queue_peak_bytes; a
 * ledger of deltas so each counter only grows.
 *
 * Why a ledger: the model's rows change under a counter's feet (a socket
 * counted by its inode is joined to its cookie; an owner is found a
 * refresh later; closed sockets are folded into one row per netns), and
 * a sum over today's rows would then move counts between series, and a
 * counter must never go down. So each socket (its row identity) keeps its
 * counts at the last refresh, and only what is new since goes to the
 * series its labels name now. A socket whose labels are not known yet
 * (no dump has named it) waits: its counts come with its first named row,
 * all of them (the rows are cumulative). Folded rows add nothing: their
 * sockets were counted while they had rows of their own.
 *
 * Bounded by construction (docs/serve.md): labels are the netns inode,
 * the family, the local port, the cause, the owner's comm and its pod
 * (namespace, pod, container: looked up once per socket, from its owner's
 * cgroup and the kubelet's logs, pods.h); a connected
 * socket on a port of its netns's ip_local_port_range is port="ephemeral"
 * (a DNS client's sockets are many, their ports random); past port_cap
 * ports per netns and family, new ones are port="other"; past series_cap
 * series in all (a comm is any user's choice, prctl(PR_SET_NAME)), new
 * ones are port="other" and comm="other" without a pod (both counted in
 * folded). Gauges only for a numeric port's live sockets (the largest
 * value when several share a series): a port="ephemeral" or "other"
 * series mixes sockets, and a sum or a maximum of their buffers would
 * describe none of them. A series that has not grown for retention_ns
 * (a socket's own: while its socket lives) leaves the page,
 * a socket's entry once it has been gone SOCKET_SERIES_SOCKET_RETENTION_NS.
 * A pod is interned once by its names (a restarted pod of the same name
 * is the same series; udpdrop_pod_info shows its latest UID).
 */
#ifndef UDPDROP_SOCKET_SERIES_H
#define UDPDROP_SOCKET_SERIES_H

#include <stdbool.h>
#include <stdint.h>
#include "expo.h"
#include "htab.h"
#include "model.h"
#include "pods.h"

#define SOCKET_SERIES_PORT_CAP 256
#define SOCKET_SERIES_CAP 10000
#define SOCKET_SERIES_RETENTION_NS (3600ull * 1000000000ull)
/* a socket's entry outlives its row by this (rows of closed sockets are
 * folded after 120 s: its counts cannot come back after) */
#define SOCKET_SERIES_SOCKET_RETENTION_NS (600ull * 1000000000ull)
/* a socket whose pod was not found (its logs not there yet) is looked
 * up again this often */
#define SOCKET_SERIES_POD_RETRY_NS (30ull * 1000000000ull)

struct ss_pod_ref;

struct socket_series {
	struct htab series;     /* struct ss_key -> struct ss_val */
	struct htab sockets;    /* row identity -> struct ss_socket */
	struct htab ports;      /* struct ss_port -> 1: the numeric ports named */
	struct htab port_count; /* (netns, family) -> distinct numeric ports */
	struct htab ranges;     /* netns -> struct ss_range: ip_local_port_range */
	struct htab pods;       /* (namespace, pod, container) -> struct ss_pod */
	struct ss_pod_ref *pod_by_id; /* the interned pods, by id - 1 */
	uint32_t npods;
	uint32_t port_cap;      /* numeric ports per netns and family */
	uint32_t series_cap;    /* series in all: past it, port and comm "other" */
	uint64_t retention_ns;
	uint64_t folded;        /* sockets put in port="other" (either cap) */
	uint64_t updates;       /* socket_series__update calls (the gauges' age) */
	/* udpdrop_noport_drops_total{netns, family, port}: datagrams to a
	 * port with no socket, from the model's flow rows, with a cap of
	 * port_cap ports per netns and family of its own (a port scan must
	 * not take the sockets' numbers) */
	struct htab noport;       /* struct np_key -> struct np_val */
	struct htab noport_flows; /* struct row_key -> struct np_flow */
	struct htab noport_ports, noport_port_count;
	uint64_t noport_folded;   /* flows whose port went to "other" */
	bool have_rx;           /* the model counts deliveries (model.have_rx) */
	/* the netns's ephemeral range; 0 or -errno (then no port is ephemeral).
	 * The live one reads the sysctl in the netns; tests give their own. */
	int (*port_range)(void *arg, uint32_t netns, uint16_t *lo, uint16_t *hi);
	void *port_range_arg;
	/* the pod of a socket's owner (pods.h: POD_FOUND, POD_LATER or
	 * POD_NONE), looked up once per socket; NULL: no pod labels. */
	int (*pod_of)(void *arg, int pid, struct pod_names *out);
	void *pod_of_arg;
};

int socket_series__init(struct socket_series *s);
void socket_series__free(struct socket_series *s);
/* Take the model's rows after a refresh at now (ns). 0 or -ENOMEM. */
int socket_series__update(struct socket_series *s, struct model *m, uint64_t now);
/* A socket series' labels beside its pod and cause. */
struct socket_series_labels {
	uint32_t netns;
	uint8_t family;         /* AF_INET, AF_INET6 */
	uint16_t port;
	char comm[16];
};
/*
 * The labels of the socket row r's series as of the last update, when
 * they are a numeric port's (not ephemeral, not other, the socket not
 * past the cap of series): false otherwise, or when r has no series.
 */
bool socket_series__numeric(const struct socket_series *s, const struct row *r,
			    struct socket_series_labels *out);
/* The families udpdrop_socket_drops_total, _dropped_bytes_total,
 * _received_total (with have_rx), the gauges, udpdrop_pod_info,
 * udpdrop_socket_series_folded_total, udpdrop_noport_drops_total and
 * udpdrop_noport_flows_folded_total. */
void socket_series__render(const struct socket_series *s, struct expo *e);

#endif
