// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <unistd.h>
#include "netns.h"
#include "util.h"

static uint32_t inode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint32_t)st.st_ino;
}

uint32_t netns__of_pid(int pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	return inode_of(path);
}

static struct netns_info *add(struct netns_table *t, uint32_t inode)
{
	struct netns_info *nv;

	for (int i = 0; i < t->n; i++)
		if (t->v[i].inode == inode)
			return &t->v[i];
	nv = realloc(t->v, (t->n + 1) * sizeof(*nv));
	if (!nv)
		return NULL;
	t->v = nv;
	memset(&nv[t->n], 0, sizeof(nv[t->n]));
	nv[t->n].inode = inode;
	return &nv[t->n++];
}

int netns__scan(struct netns_table *t)
{
	struct dirent *de;
	DIR *d;

	memset(t, 0, sizeof(*t));
	t->self = inode_of("/proc/self/ns/net");
	if (t->self) {
		struct netns_info *ni = add(t, t->self);

		if (!ni)
			return -ENOMEM;
		snprintf(ni->path, sizeof(ni->path), "/proc/%d/ns/net", getpid());
	}
	/* named ones first, so a name wins over a pid path */
	d = opendir("/run/netns");
	while (d && (de = readdir(d))) {
		char path[sizeof(((struct netns_info *)0)->path) + 256];
		struct netns_info *ni;
		uint32_t ino;

		if (de->d_name[0] == '.')
			continue;
		if (strlen(de->d_name) >= sizeof(t->v[0].name) ||
		    snprintf(path, sizeof(path), "/run/netns/%s", de->d_name) >=
			    (int)sizeof(t->v[0].path))
			continue; /* too long to name or enter: skip */
		ino = inode_of(path);
		if (!ino)
			continue;
		ni = add(t, ino);
		if (!ni)
			break;
		if (!ni->name[0]) {
			memcpy(ni->name, de->d_name, strlen(de->d_name) + 1);
			memcpy(ni->path, path, strlen(path) + 1);
		}
	}
	if (d)
		closedir(d);
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		struct netns_info *ni;
		uint32_t ino;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		ino = netns__of_pid(atoi(de->d_name));
		if (!ino)
			continue;
		ni = add(t, ino);
		if (!ni)
			break;
		if (!ni->path[0])
			snprintf(ni->path, sizeof(ni->path), "/proc/%.16s/ns/net",
				 de->d_name);
	}
	if (d)
		closedir(d);
	return 0;
}

void netns__free(struct netns_table *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

const struct netns_info *netns__find(const struct netns_table *t,
				     uint32_t inode)
{
	for (int i = 0; i < t->n; i++)
		if (t->v[i].inode == inode)
			return &t->v[i];
	return NULL;
}

int netns__resolve(const struct netns_table *t, const char *spec,
		   uint32_t *inode)
{
	uint64_t v;

	if (!parse_u64(spec, 1, UINT32_MAX, &v)) {
		if (!netns__find(t, v))
			return -ENOENT;
		*inode = v;
		return 0;
	}
	if (!strchr(spec, '/')) {
		for (int i = 0; i < t->n; i++)
			if (!strcmp(t->v[i].name, spec)) {
				*inode = t->v[i].inode;
				return 0;
			}
		return -ENOENT;
	}
	/* a path: it must be a network namespace file (nsfs, type net) */
	int fd = open(spec, O_RDONLY | O_CLOEXEC);
	struct statfs sfs;
	struct stat st;
	int type;

	if (fd < 0)
		return -ENOENT;
	type = ioctl(fd, NS_GET_NSTYPE);
	if (fstatfs(fd, &sfs) || sfs.f_type != NSFS_MAGIC || type != CLONE_NEWNET ||
	    fstat(fd, &st)) {
		close(fd);
		return -ENOENT;
	}
	close(fd);
	*inode = st.st_ino;
	return 0;
}

/* An fd of netns `inode` opened from path, or -1. */
static int open_if(const char *path, uint32_t inode)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	/* the path may now name another netns (pid reuse): check */
	if (fd >= 0 && (fstat(fd, &st) || (uint32_t)st.st_ino != inode)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * An fd of netns `inode`: from the table's path, or, when that has gone
 * (its process exited since the scan), from any process still in it.
 */
static int open_netns(const struct netns_info *ni, uint32_t inode)
{
	struct dirent *de;
	DIR *d;
	int fd = ni->path[0] ? open_if(ni->path, inode) : -1;

	if (fd >= 0)
		return fd;
	d = opendir("/proc");
	while (d && fd < 0 && (de = readdir(d))) {
		char path[64];

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/ns/net", de->d_name);
		if (inode_of(path) == inode)
			fd = open_if(path, inode);
	}
	if (d)
		closedir(d);
	return fd;
}

int netns__run_in(const struct netns_table *t, uint32_t inode,
		  int (*fn)(void *arg), void *arg)
{
	const struct netns_info *ni = netns__find(t, inode);
	int self, target, ret;

	if (inode == t->self)
		return fn(arg);
	if (!ni)
		return -ENOENT;
	target = open_netns(ni, inode);
	if (target < 0)
		return -ENOENT;
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0) {
		ret = -errno;
		close(target);
		return ret;
	}
	if (setns(target, CLONE_NEWNET)) {
		ret = -errno;
		goto out;
	}
	ret = fn(arg);
	if (setns(self, CLONE_NEWNET)) {
		/* stuck in another netns: every later answer would be wrong */
		perror("udpdrop: setns back to the original netns");
		abort();
	}
out:
	close(self);
	close(target);
	return ret;
}

static int local_addrs_here(void *arg)
{
	struct local_addrs *out = arg;
	struct ifaddrs *ifa, *i;

	out->n = 0;
	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i && out->n < LOCAL_ADDRS_MAX; i = i->ifa_next) {
		if (!i->ifa_addr)
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			out->v[out->n].family = AF_INET;
			memcpy(out->v[out->n++].addr,
			       &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			out->v[out->n].family = AF_INET6;
			memcpy(out->v[out->n++].addr,
			       &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
		}
	}
	freeifaddrs(ifa);
	return 0;
}

int netns__local_addrs(const struct netns_table *t, uint32_t inode,
		       struct local_addrs *out)
{
	out->n = 0;
	return netns__run_in(t, inode, local_addrs_here, out);
}
