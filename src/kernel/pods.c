// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Kubernetes pods from cgroup paths and the kubelet's logs: see pods.h. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "pods.h"

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* A pod UID, 8-4-4-4-12 hex, from s (n bytes), '_' read as '-'. */
static bool take_uid(const char *s, size_t n, char out[40])
{
	if (n != 36)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i] == '_' ? '-' : s[i];
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? c != '-' : !is_hex(c))
			return false;
		out[i] = c;
	}
	out[n] = '\0';
	return true;
}

/* A container id: 12 to 64 lowercase hex. */
static bool take_id(const char *s, size_t n, char out[72])
{
	if (n < 12 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_hex(s[i]))
			return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

static bool starts(const char *s, size_t n, const char *p)
{
	size_t m = strlen(p);

	return n >= m && !memcmp(s, p, m);
}

static bool ends(const char *s, size_t n, const char *p)
{
	size_t m = strlen(p);

	return n >= m && !memcmp(s + n - m, p, m);
}

/* The container segment after the pod's: its id, or false. */
static bool container_seg(const char *s, size_t n, char out[72])
{
	static const char *const prefixes[] = { "cri-containerd-", "crio-", "docker-" };

	if (ends(s, n, ".scope")) {
		n -= strlen(".scope");
		/* CRI-O's monitor, not the container */
		if (starts(s, n, "crio-conmon-"))
			return false;
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
			if (starts(s, n, prefixes[i]))
				return take_id(s + strlen(prefixes[i]), n - strlen(prefixes[i]), out);
		return false;
	}
	return take_id(s, n, out); /* cgroupfs: the id itself */
}

/* One cgroup path: the pod segment, then the container's. */
static bool parse_path(const char *path, size_t len, struct pod_ref *out)
{
	const char *seg = path, *end = path + len;
	bool in_kubepods = false, have_pod = false, first = true;

	while (seg < end) {
		const char *slash = memchr(seg, '/', end - seg);
		size_t n = (slash ? slash : end) - seg;

		/*
		 * The kubelet's tree is at the root: a kubepods deeper down is
		 * someone's own (a user's delegated systemd subtree), which must
		 * not pass for a pod. "..": seen from inside a cgroup namespace.
		 */
		if (!n || (n == 2 && seg[0] == '.' && seg[1] == '.')) {
			seg += n + 1;
			continue;
		}
		if (first && !starts(seg, n, "kubepods"))
			return false;
		if (first)
			in_kubepods = true;
		first = false;
		if (in_kubepods && !have_pod) {
			/* systemd: kubepods[-qos]-pod<UID>.slice; cgroupfs: pod<UID> */
			const char *p = n > 3 ? memmem(seg, n, "pod", 3) : NULL;

			while (p && !have_pod) {
				size_t rest = seg + n - (p + 3);

				if (ends(p + 3, rest, ".slice"))
					rest -= strlen(".slice");
				have_pod = (p == seg || p[-1] == '-') && take_uid(p + 3, rest, out->uid);
				p = memmem(p + 1, seg + n - (p + 1), "pod", 3);
			}
		} else if (have_pod && container_seg(seg, n, out->container_id)) {
			return true;
		}
		seg += n + 1;
	}
	if (have_pod)
		out->container_id[0] = '\0';
	return have_pod;
}

bool pods__parse_cgroup(const char *text, struct pod_ref *out)
{
	bool pod = false;

	memset(out, 0, sizeof(*out));
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		const char *c1 = memchr(line, ':', n);
		const char *c2 = c1 ? memchr(c1 + 1, ':', line + n - c1 - 1) : NULL;
		struct pod_ref r = { 0 };

		if (c2 && parse_path(c2 + 1, line + n - c2 - 1, &r)) {
			/* a line with the container beats one with the pod alone */
			if (!pod || (!out->container_id[0] && r.container_id[0]))
				*out = r;
			pod = true;
		}
		line = nl ? nl + 1 : NULL;
	}
	return pod;
}

/* The entry of dir whose name ends with suffix: copied to name. */
static bool find_entry(const char *dir, const char *suffix, char *name, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool found = false;
	size_t m = strlen(suffix);

	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n > m && !strcmp(e->d_name + n - m, suffix) && n < len) {
			memcpy(name, e->d_name, n + 1);
			found = true;
		}
	}
	closedir(d);
	return found;
}

bool pods__names(const char *logs, const struct pod_ref *ref, struct pod_names *out)
{
	char dir[512], name[512], suffix[128];
	const char *u1, *u2;

	memset(out, 0, sizeof(*out));
	snprintf(out->uid, sizeof(out->uid), "%s", ref->uid);
	/* pods/<namespace>_<pod>_<UID> */
	snprintf(dir, sizeof(dir), "%s/pods", logs);
	snprintf(suffix, sizeof(suffix), "_%s", ref->uid);
	if (!find_entry(dir, suffix, name, sizeof(name)))
		return false;
	u1 = strchr(name, '_');
	u2 = strrchr(name, '_');
	if (!u1 || u1 == u2)
		return false;
	snprintf(out->ns, sizeof(out->ns), "%.*s", (int)(u1 - name), name);
	snprintf(out->pod, sizeof(out->pod), "%.*s", (int)(u2 - u1 - 1), u1 + 1);
	if (!ref->container_id[0])
		return true;
	/* containers/<pod>_<namespace>_<container>-<ID>.log */
	snprintf(dir, sizeof(dir), "%s/containers", logs);
	snprintf(suffix, sizeof(suffix), "-%s.log", ref->container_id);
	if (find_entry(dir, suffix, name, sizeof(name))) {
		size_t pl = strlen(out->pod), nl = strlen(out->ns);

		if (!strncmp(name, out->pod, pl) && name[pl] == '_' &&
		    !strncmp(name + pl + 1, out->ns, nl) && name[pl + 1 + nl] == '_') {
			const char *c = name + pl + nl + 2;

			snprintf(out->container, sizeof(out->container), "%.*s",
				 (int)(strlen(c) - strlen(suffix)), c);
		}
	}
	return true;
}

int pods__ref_of_pid(int pid, struct pod_ref *out)
{
	char path[64], text[4096];
	FILE *f;
	size_t n;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	f = fopen(path, "re");
	if (!f) /* gone, or (EMFILE, ENOMEM...) not now */
		return errno == ENOENT || errno == ESRCH ? 0 : -errno;
	n = fread(text, 1, sizeof(text) - 1, f);
	err = ferror(f) ? -(errno ? errno : EIO) : 0;
	fclose(f);
	if (err) /* a process that exits while read gives ESRCH */
		return err == -ESRCH ? 0 : err;
	text[n] = '\0';
	return pods__parse_cgroup(text, out) ? 1 : 0;
}


struct pod_cache_val {
	bool found;
	uint64_t at_ns;
	struct pod_names names;
};

int pods__cache_init(struct pod_cache *pc, const char *logs)
{
	pc->logs = logs;
	return htab__init(&pc->names, sizeof(struct pod_ref), sizeof(struct pod_cache_val));
}

void pods__cache_free(struct pod_cache *pc)
{
	htab__free(&pc->names);
}

enum pod_lookup pods__cache_of_pid(struct pod_cache *pc, int pid, uint64_t now_ns,
				   struct pod_names *out)
{
	struct pod_cache_val *v;
	struct pod_ref ref;
	int created, got;

	memset(&ref, 0, sizeof(ref)); /* a hash key: every byte counts */
	got = pods__ref_of_pid(pid, &ref);
	if (got < 0) /* not read now: a transient error must not mean "no pod" for good */
		return POD_LATER;
	if (!got)
		return POD_NONE;
	v = htab__upsert(&pc->names, &ref, &created);
	if (!v)
		return pods__names(pc->logs, &ref, out) ? POD_FOUND : POD_LATER;
	if (created || (!v->found && now_ns - v->at_ns >= POD_MISS_NS)) {
		memset(&v->names, 0, sizeof(v->names));
		v->found = pods__names(pc->logs, &ref, &v->names);
		v->at_ns = now_ns;
	}
	*out = v->names;
	return v->found ? POD_FOUND : POD_LATER;
}
