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
/* The pod and container of process pid (reads /proc/PID/cgroup). */
bool pods__ref_of_pid(int pid, struct pod_ref *out);

#endif
