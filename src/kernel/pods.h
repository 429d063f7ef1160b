/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kubernetes pods without the Kubernetes API: a process's cgroup path
 * names its pod (by UID) and container (by id), as the kubelet lays them
 * out, and the kubelet's log directories name both:
 *
 *   cgroupfs driver:  /kubepods[/burstable|/besteffort]/pod<UID>/<ID>
 *   systemd driver:   /kubepods.slice/kubepods-<qos>.slice/
 *                       kubepods-<qos>-pod<UID with _ for ->.slice/
 *                       cri-containerd-<ID>.scope | crio-<ID>.scope |
 *                       docker-<ID>.scope
 *   /var/log/pods/<namespace>_<pod>_<UID>/<container>/
 *   /var/log/containers/<pod>_<namespace>_<container>-<ID>.log
 *
 * Namespace and pod names cannot hold '_' (DNS labels and subdomains), so
 * the split is exact. What cannot be read leaves a name empty, never a
 * guess.
 */
#ifndef UDPDROP_PODS_H
#define UDPDROP_PODS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "htab.h"
#include "util.h"

struct pod_ref {
	char uid[40];           /* 8-4-4-4-12 hex, with '-' */
	char container_id[72];  /* the runtime's id (64 hex for containerd, docker) */
};

struct pod_names {
	char ns[64];            /* k8s_namespace */
	char pod[254];          /* k8s_pod */
	char container[64];     /* k8s_container */
	char uid[40];
};

/*
 * The pod and container in one /proc/PID/cgroup text (its lines "N:ctl:path",
 * v2's "0::path"). Pure. True if a kubepods path was found.
 */
bool pods__parse_cgroup(const char *text, struct pod_ref *out);
/*
 * The names of ref from the kubelet's logs under logs (its pods/ and
 * containers/: "/var/log" on a node). Linear in the directories' entries.
 * True if the pod was found (the container's name may still be empty).
 */
bool pods__names(const char *logs, const struct pod_ref *ref, struct pod_names *out);
/*
 * The pod and container of process pid (reads /proc/PID/cgroup): 1 (in
 * out), 0 (in no pod, or the process is gone), or -errno when the file
 * could not be read now (no file descriptor or memory left): asking
 * again later may find it.
 */
int pods__ref_of_pid(int pid, struct pod_ref *out);

/*
 * "pod NAMESPACE/POD (container NAME)" for the text views (a pod name cut
 * at 80 bytes), printable: fits in 256 bytes.
 * Inline: report names a recording's pods with it and links no live code.
 */
static inline void pods__label(const struct pod_names *p, char *buf, size_t len)
{
	if (p->container[0])
		snprintf(buf, len, "pod %.63s/%.80s (container %.63s)", p->ns[0] ? p->ns : "?",
			 p->pod[0] ? p->pod : "?", p->container);
	else
		snprintf(buf, len, "pod %.63s/%.80s", p->ns[0] ? p->ns : "?", p->pod[0] ? p->pod : "?");
	str_printable(buf); /* names from the kubelet's file names */
}

/*
 * The pod of a process, for a long run: its cgroup read each time
 * (cheap), the names from the kubelet's logs read once per pod and
 * container (two directory scans), a miss looked up again after
 * POD_MISS_NS (its logs may not be there yet). Every view that names
 * pods (serve, top, record, doctor) asks through one.
 */
#define POD_MISS_NS (30ull * 1000000000ull)
struct pod_cache {
	const char *logs;       /* the kubelet's log directory ("/var/log"), not owned */
	struct htab names;      /* struct pod_ref -> struct pod_cache_val */
};
int pods__cache_init(struct pod_cache *pc, const char *logs);
void pods__cache_free(struct pod_cache *pc);
/*
 * The pod of pid at now_ns (the caller's clock): POD_FOUND (names in out);
 * POD_LATER: a pod's process whose names are not found yet (its logs may
 * come a moment after it: ask again after POD_MISS_NS), or one whose cgroup
 * could not be read now; POD_NONE: not in a pod, or gone: asking again
 * about this pid would not help.
 */
enum pod_lookup { POD_NONE = -1, POD_LATER = 0, POD_FOUND = 1 };
enum pod_lookup pods__cache_of_pid(struct pod_cache *pc, int pid, uint64_t now_ns,
			struct pod_names *out);

#endif
