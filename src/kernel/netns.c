// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
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
#include "htab.h"
#include "netns.h"
#include "util.h"

static uint32_t inode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint32_t)st.st_ino;
}

/* The inode of path if it is a namespace file (nsfs), else 0; opens nothing. */
static uint32_t nsfs_inode_of(const char *path)
{
	struct statfs sfs;

	return statfs(path, &sfs) || sfs.f_type != NSFS_MAGIC ? 0 : inode_of(path);
}

/* See netns__pin. */
static struct {
	int fd;                 /* -1: nothing pinned */
	uint32_t inode;
	dev_t dev;              /* nsfs's: with the inode, what names it */
	uint32_t self;          /* our own netns: never gone */
	char name[64];          /* its `ip netns` name when pinned, "" if none */
	char label[160];        /* printable, for messages */
	char witness[4200];     /* a path that last proved it alive, "" if none */
} pin = { .fd = -1 };

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
		ino = nsfs_inode_of(path); /* a FIFO or a file there is no netns */
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
	/*
	 * The pinned netns, when no process or name shows it any more: still
	 * there (netns__run_in enters it through the pin), and still called
	 * by the name the user gave, unless a new netns has taken that name.
	 */
	if (pin.fd >= 0 && !netns__find(t, pin.inode)) {
		struct netns_info *ni = add(t, pin.inode);
		bool taken = false;

		if (!ni)
			return -ENOMEM;
		for (int i = 0; i < t->n && pin.name[0]; i++)
			taken |= !strcmp(t->v[i].name, pin.name);
		if (!taken)
			memcpy(ni->name, pin.name, sizeof(ni->name));
	}
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

int netns__open(const char *path, uint32_t *inode)
{
	struct statfs sfs;
	struct stat st;
	char self[32];
	int pfd, fd, err;

	/*
	 * O_PATH looks at the file without opening it (no FIFO blocks, no
	 * device acts); only an nsfs file is then opened for real, through
	 * /proc/self/fd: the same inode, whatever the path names meanwhile.
	 */
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return errno == EACCES || errno == EPERM ? -EACCES : -ENOENT;
	if (fstatfs(pfd, &sfs) || sfs.f_type != NSFS_MAGIC || fstat(pfd, &st) ||
	    !S_ISREG(st.st_mode)) {
		close(pfd);
		return -EINVAL;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	/* O_NONBLOCK: no open can block, whatever slipped past the checks */
	fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	err = fd < 0 ? (errno == EACCES || errno == EPERM ? -EACCES : -ENOENT) : 0;
	close(pfd);
	if (err)
		return err;
	if (ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWNET) { /* a mnt, pid... namespace */
		close(fd);
		return -EINVAL;
	}
	*inode = st.st_ino;
	return fd;
}

static int open_netns(const struct netns_info *ni, uint32_t inode);

int netns__resolve(const struct netns_table *t, const char *spec,
		   uint32_t *inode, int *fd)
{
	const struct netns_info *ni = NULL;
	uint64_t v;
	int nfd;

	if (!parse_u64(spec, 1, UINT32_MAX, &v)) {
		ni = netns__find(t, v);
	} else if (!strchr(spec, '/')) {
		for (int i = 0; i < t->n && !ni; i++)
			if (t->v[i].name[0] && !strcmp(t->v[i].name, spec))
				ni = &t->v[i];
	} else {
		/* a path: it must be a network namespace file (nsfs, type net) */
		nfd = netns__open(spec, inode);
		if (nfd < 0)
			return nfd;
		goto out;
	}
	if (!ni)
		return -ENOENT;
	*inode = ni->inode;
	nfd = open_netns(ni, ni->inode);
	if (nfd < 0)
		return -ENOENT; /* gone since the scan */
out:
	if (fd)
		*fd = nfd;
	else
		close(nfd);
	return 0;
}

/* An fd of netns `inode` opened from path, or -1. */
static int open_if(const char *path, uint32_t inode)
{
	uint32_t got;
	int fd = netns__open(path, &got);

	/* the path may now name another netns (pid reuse): check */
	if (fd >= 0 && got != inode) {
		close(fd);
		fd = -1;
	}
	return fd < 0 ? -1 : fd;
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
	bool pinned = pin.fd >= 0 && inode == pin.inode;
	int self, target, ret;

	if (inode == t->self)
		return fn(arg);
	/* the pinned one is entered through the pin: it may have no other way in */
	if (!pinned && !ni)
		return -ENOENT;
	target = pinned ? pin.fd : open_netns(ni, inode);
	if (target < 0)
		return -ENOENT;
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0) {
		ret = -errno;
		if (!pinned)
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
	if (!pinned)
		close(target);
	return ret;
}

static void local_add(struct local_addrs *out, int family, const void *addr)
{
	int alen = family == AF_INET6 ? 16 : 4;

	for (int i = 0; i < out->n; i++)
		if (out->v[i].family == family && !memcmp(out->v[i].addr, addr, alen))
			return;
	if (out->n < LOCAL_ADDRS_MAX) {
		out->v[out->n].family = family;
		memset(out->v[out->n].addr, 0, sizeof(out->v[out->n].addr));
		memcpy(out->v[out->n++].addr, addr, alen);
	}
}

/*
 * The groups joined on this netns's interfaces. /proc/net/igmp: a device
 * line, then a line per group whose first field is the group as the
 * kernel's __be32 printed with %08X (so its bytes, read back into a
 * uint32_t on the same machine, are the address's). /proc/net/igmp6: one
 * line per group, "IDX DEV GROUP(32 hex digits) ...". A line longer than
 * the buffer is read on in pieces, none of which parses as a group.
 */
static void joined_groups(struct local_addrs *out)
{
	char line[256];
	FILE *f = fopen("/proc/thread-self/net/igmp", "re");

	while (f && fgets(line, sizeof(line), f)) {
		unsigned int g;
		char tail;

		/* a group line starts with tabs; a device line with its index */
		if (line[0] != '\t' || sscanf(line, " %8x%c", &g, &tail) != 2 ||
		    (tail != ' ' && tail != '\t'))
			continue;
		local_add(out, AF_INET, &g);
	}
	if (f)
		fclose(f);
	f = fopen("/proc/thread-self/net/igmp6", "re");
	while (f && fgets(line, sizeof(line), f)) {
		char hex[33];
		uint8_t a[16];
		int ok = sscanf(line, "%*d %*s %32[0-9a-fA-F]", hex) == 1 && strlen(hex) == 32;

		for (int i = 0; ok && i < 16; i++) {
			unsigned int b;

			ok = sscanf(hex + 2 * i, "%2x", &b) == 1;
			a[i] = b;
		}
		if (ok)
			local_add(out, AF_INET6, a);
	}
	if (f)
		fclose(f);
}

static int local_addrs_here(void *arg)
{
	struct local_addrs *out = arg;
	struct ifaddrs *ifa, *i;

	out->n = 0;
	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr)
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			local_add(out, AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr);
			/* the subnet's broadcast: delivered to sockets bound to the port */
			if ((i->ifa_flags & IFF_BROADCAST) && i->ifa_broadaddr &&
			    i->ifa_broadaddr->sa_family == AF_INET)
				local_add(out, AF_INET,
					  &((struct sockaddr_in *)i->ifa_broadaddr)->sin_addr);
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			local_add(out, AF_INET6, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr);
		}
	}
	freeifaddrs(ifa);
	joined_groups(out);
	return 0;
}

int netns__local_addrs(const struct netns_table *t, uint32_t inode,
		       struct local_addrs *out)
{
	out->n = 0;
	return netns__run_in(t, inode, local_addrs_here, out);
}

/* ---- the pin ------------------------------------------------------------ */

int netns__pin(int fd, uint32_t inode, const char *label)
{
	struct netns_table t;
	struct stat st;

	netns__unpin();
	if (fstat(fd, &st) || (uint32_t)st.st_ino != inode) {
		close(fd);
		return -EINVAL;
	}
	pin.fd = fd;
	pin.inode = inode;
	pin.dev = st.st_dev;
	pin.self = inode_of("/proc/self/ns/net");
	pin.witness[0] = 0;
	pin.name[0] = 0;
	/* its `ip netns` name now: it still names it once the name is gone */
	if (!netns__scan(&t)) {
		const struct netns_info *ni = netns__find(&t, inode);

		if (ni)
			memcpy(pin.name, ni->name, sizeof(pin.name));
		netns__free(&t);
	}
	if (!label || !strcmp(label, pin.name))
		label = "";
	if (pin.name[0] && label[0])
		snprintf(pin.label, sizeof(pin.label), "%s (%s, inode %u)", pin.name, label, inode);
	else if (pin.name[0] || label[0])
		snprintf(pin.label, sizeof(pin.label), "%s (inode %u)",
			 pin.name[0] ? pin.name : label, inode);
	else
		snprintf(pin.label, sizeof(pin.label), "%u", inode);
	str_printable(pin.label);
	return 0;
}

void netns__unpin(void)
{
	if (pin.fd >= 0)
		close(pin.fd);
	pin.fd = -1;
	pin.inode = 0;
}

uint32_t netns__pinned(void)
{
	return pin.fd >= 0 ? pin.inode : 0;
}

const char *netns__pin_label(void)
{
	return pin.label;
}

/* Does path name the pinned netns? stat(2) only: nothing is opened. */
static bool names_pin(const char *path)
{
	struct stat st;

	return !stat(path, &st) && (uint32_t)st.st_ino == pin.inode &&
	       st.st_dev == pin.dev;
}

static void set_witness(const char *prefix, const char *path)
{
	if (snprintf(pin.witness, sizeof(pin.witness), "%s%s", prefix, path) >=
	    (int)sizeof(pin.witness))
		pin.witness[0] = 0; /* too long to look at again: a full look next time */
}

/* mountinfo's octal escapes (\040 for a space) undone, in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/*
 * A mount of the pinned netns in one mount namespace's mountinfo (its
 * root field is "net:[INODE]", its type nsfs): the witness is its mount
 * point, seen from here through prefix ("" for ours, "/proc/PID/root").
 * 1 found, 0 not, -1 not readable.
 */
static int mounted_in(const char *mountinfo, const char *prefix)
{
	char root[32], *line = NULL;
	size_t cap = 0;
	bool found = false;
	FILE *f = fopen(mountinfo, "re");

	if (!f)
		return -1;
	snprintf(root, sizeof(root), "net:[%u]", pin.inode);
	while (!found && getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE ... */
		char *save = NULL, *fld[5], *p, *type = NULL;
		int n = 0;

		line[strcspn(line, "\n")] = 0;
		for (p = strtok_r(line, " ", &save); p && n < 5; p = strtok_r(NULL, " ", &save))
			fld[n++] = p;
		if (n < 5 || strcmp(fld[3], root))
			continue;
		while (p && strcmp(p, "-"))
			p = strtok_r(NULL, " ", &save);
		if (p)
			type = strtok_r(NULL, " ", &save);
		if (!type || strcmp(type, "nsfs"))
			continue;
		unescape(fld[4]);
		set_witness(prefix, fld[4]);
		found = true;
	}
	free(line);
	fclose(f);
	return found;
}

/*
 * A process in the pinned netns (tasks: also a thread that entered it by
 * itself), or, with mounts, a mount of it in another process's mount
 * namespace (each mount namespace read once). One pass over /proc. True
 * also when /proc cannot be read: a look that failed proves nothing gone.
 */
static bool held_in_proc(bool tasks, bool mounts)
{
	uint32_t own_mnt = inode_of("/proc/self/ns/mnt");
	struct htab seen = {};
	struct dirent *de;
	bool found = false;
	DIR *d = opendir("/proc");

	if (!d)
		return true;
	if (mounts && htab__init(&seen, sizeof(uint32_t), 1)) {
		closedir(d);
		return true;
	}
	while (!found && (de = readdir(d))) {
		char path[64];

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/ns/net", de->d_name);
		if (names_pin(path)) {
			set_witness("", path);
			found = true;
			break;
		}
		if (tasks) {
			DIR *td;
			struct dirent *te;

			snprintf(path, sizeof(path), "/proc/%.16s/task", de->d_name);
			td = opendir(path);
			while (td && !found && (te = readdir(td))) {
				char tpath[96];

				if (!isdigit((unsigned char)te->d_name[0]))
					continue;
				snprintf(tpath, sizeof(tpath), "/proc/%.16s/task/%.16s/ns/net",
					 de->d_name, te->d_name);
				if (names_pin(tpath)) {
					set_witness("", tpath);
					found = true;
				}
			}
			if (td)
				closedir(td);
		}
		if (!found && mounts) {
			char prefix[64];
			uint32_t mnt;
			int created = 0;

			snprintf(path, sizeof(path), "/proc/%.16s/ns/mnt", de->d_name);
			mnt = inode_of(path);
			if (!mnt || mnt == own_mnt)
				continue;
			if (!htab__upsert(&seen, &mnt, &created)) {
				found = true; /* out of memory: not known to be gone */
				break;
			}
			if (!created)
				continue;
			snprintf(path, sizeof(path), "/proc/%.16s/mountinfo", de->d_name);
			snprintf(prefix, sizeof(prefix), "/proc/%.16s/root", de->d_name);
			found = mounted_in(path, prefix) > 0; /* -1: it has exited */
		}
	}
	closedir(d);
	if (mounts)
		htab__free(&seen);
	return found;
}

bool netns__pin_gone(void)
{
	if (pin.fd < 0 || pin.inode == pin.self)
		return false;
	/* what proved it alive last time, if it still does: one stat */
	if (pin.witness[0] && names_pin(pin.witness))
		return false;
	pin.witness[0] = 0;
	/* the common holders first: a mount here (ip netns), a process */
	if (mounted_in("/proc/self/mountinfo", "") != 0 || held_in_proc(false, false))
		return false;
	/* then a thread on its own in it, a mount in another mount namespace */
	return !held_in_proc(true, true);
}
