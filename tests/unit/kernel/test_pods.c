// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Kubernetes pods from cgroup paths and the kubelet's logs (src/kernel/pods.c). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "pods.h"

#define UID "7d3e1c9a-2b4f-4c11-9e0a-5f6b7c8d9e0f"
#define UID_ "7d3e1c9a_2b4f_4c11_9e0a_5f6b7c8d9e0f"
#define CID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void expect(const char *text, const char *uid, const char *cid)
{
	struct pod_ref r;
	bool found = pods__parse_cgroup(text, &r);

	if (!uid) {
		assert_false(found);
		return;
	}
	assert_true(found);
	assert_string_equal(r.uid, uid);
	assert_string_equal(r.container_id, cid);
}

static void test_cgroup_paths(void **state)
{
	/* systemd driver, containerd, cgroup v2 */
	expect("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	       ".slice/cri-containerd-" CID ".scope\n", UID, CID);
	/* systemd driver, guaranteed QoS (no qos slice), CRI-O */
	expect("0::/kubepods.slice/kubepods-pod" UID_ ".slice/crio-" CID ".scope\n", UID, CID);
	/* CRI-O's conmon is not the container: the pod alone */
	expect("0::/kubepods.slice/kubepods-pod" UID_ ".slice/crio-conmon-" CID ".scope\n", UID, "");
	/* systemd driver, docker */
	expect("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	       ".slice/docker-" CID ".scope\n", UID, CID);
	/* cgroupfs driver, cgroup v1: the line with the container wins */
	expect("12:pids:/kubepods/burstable/pod" UID "\n"
	       "11:memory:/kubepods/burstable/pod" UID "/" CID "\n"
	       "1:name=systemd:/\n", UID, CID);
	expect("0::/kubepods/pod" UID "/" CID "\n", UID, CID);
	/* seen from inside a cgroup namespace (a pod's own): relative paths */
	expect("0::/../../kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" CID ".scope\n",
	       UID, CID);
	expect("0::/../kubepods.slice/kubepods-pod" UID_ ".slice/crio-" CID ".scope\n", UID, CID);
	/* a kubepods under someone's own subtree is not the kubelet's */
	expect("0::/user.slice/user-1000.slice/user@1000.service/kubepods/pod" UID "/" CID "\n",
	       NULL, NULL);
	/* not a pod: a service, a docker container outside Kubernetes, junk */
	expect("0::/system.slice/ssh.service\n", NULL, NULL);
	expect("0::/system.slice/docker-" CID ".scope\n", NULL, NULL);
	expect("0::/kubepods.slice/kubepods-besteffort.slice\n", NULL, NULL);
	expect("0::/kubepods/podnot-a-uid/" CID "\n", NULL, NULL);
	expect("garbage without colons", NULL, NULL);
	expect("", NULL, NULL);
}

static void touch(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY, 0644);

	assert_true(fd >= 0);
	close(fd);
}

static void test_names(void **state)
{
	char root[] = "/tmp/test_pods.XXXXXX", p[512];
	struct pod_ref ref = { UID, CID };
	struct pod_names n;

	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/pods", root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/containers", root);
	assert_int_equal(mkdir(p, 0755), 0);
	/* before the logs exist: not found */
	assert_false(pods__names(root, &ref, &n));
	snprintf(p, sizeof(p), "%s/pods/kube-system_coredns-5d78c9869d-8x2vq_%s", root, UID);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/pods/other_x_%s", root, "00000000-0000-0000-0000-000000000000");
	assert_int_equal(mkdir(p, 0755), 0);
	/* the pod, the container not known yet */
	assert_true(pods__names(root, &ref, &n));
	assert_string_equal(n.ns, "kube-system");
	assert_string_equal(n.pod, "coredns-5d78c9869d-8x2vq");
	assert_string_equal(n.container, "");
	assert_string_equal(n.uid, UID);
	snprintf(p, sizeof(p), "%s/containers/coredns-5d78c9869d-8x2vq_kube-system_coredns-%s.log",
		 root, CID);
	touch(p);
	assert_true(pods__names(root, &ref, &n));
	assert_string_equal(n.container, "coredns");
	/* a log of another pod with the same id suffix does not name it */
	snprintf(p, sizeof(p), "%s/containers/coredns-5d78c9869d-8x2vq_kube-system_coredns-%s.log",
		 root, CID);
	unlink(p);
	snprintf(p, sizeof(p), "%s/containers/x_other_sidecar-%s.log", root, CID);
	touch(p);
	assert_true(pods__names(root, &ref, &n));
	assert_string_equal(n.container, "");
	unlink(p);
	snprintf(p, sizeof(p), "rm -rf '%s'", root);
	assert_int_equal(system(p), 0);
}

/*
 * A /proc/PID/cgroup that cannot be opened now (no file descriptor left)
 * is "ask again later", never "in no pod" for good; a process that is
 * gone is "in no pod".
 */
static void test_transient_error(void **state)
{
	struct pod_cache pc;
	struct pod_names names;
	struct pod_ref ref;
	struct rlimit old, low;
	pid_t gone = fork();
	int fd;

	if (!gone)
		_exit(0);
	assert_true(gone > 0);
	assert_int_equal(waitpid(gone, NULL, 0), gone);
	memset(&ref, 0, sizeof(ref));
	assert_int_equal(pods__ref_of_pid(gone, &ref), 0);
	assert_int_equal(pods__cache_init(&pc, "/nonexistent-logs"), 0);
	assert_int_equal(pods__cache_of_pid(&pc, gone, 1, &names), POD_NONE);

	/* the lowest free descriptor becomes the limit: the next open fails */
	fd = dup(0);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)fd;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	int at_limit = pods__ref_of_pid(getpid(), &ref);
	enum pod_lookup cached = pods__cache_of_pid(&pc, getpid(), 2, &names);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(at_limit, -EMFILE);
	assert_int_equal(cached, POD_LATER);
	/* read again once it can be: no pod (or, run in a pod, its names
	 * not in these logs: later) */
	assert_int_equal(pods__cache_of_pid(&pc, getpid(), 3, &names),
			 pods__ref_of_pid(getpid(), &ref) ? POD_LATER : POD_NONE);
	pods__cache_free(&pc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_paths),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_transient_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
