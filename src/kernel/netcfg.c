// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The network settings of a netns: sysctls and interfaces (netcfg.h). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "netcfg.h"
#include "util.h"

const char *const netcfg__sysctl_names[NETCFG_NSYSCTLS] = {
	[NETCFG_RMEM_DEFAULT] = "net.core.rmem_default",
	[NETCFG_RMEM_MAX] = "net.core.rmem_max",
	[NETCFG_WMEM_DEFAULT] = "net.core.wmem_default",
	[NETCFG_WMEM_MAX] = "net.core.wmem_max",
	[NETCFG_UDP_MEM] = "net.ipv4.udp_mem",
	[NETCFG_NETDEV_MAX_BACKLOG] = "net.core.netdev_max_backlog",
	[NETCFG_IPFRAG_HIGH_THRESH] = "net.ipv4.ipfrag_high_thresh",
	[NETCFG_IPFRAG_LOW_THRESH] = "net.ipv4.ipfrag_low_thresh",
	[NETCFG_IPFRAG_TIME] = "net.ipv4.ipfrag_time",
	[NETCFG_IPFRAG_MAX_DIST] = "net.ipv4.ipfrag_max_dist",
};

/* Whitespace runs to one space, none at either end (in place). */
static void collapse_ws(char *s)
{
	char *o = s;
	bool space = false;

	for (char *p = s; *p; p++) {
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
			space = o != s;
			continue;
		}
		if (space)
			*o++ = ' ';
		space = false;
		*o++ = *p;
	}
	*o = 0;
}

/* /proc/sys/net/core/rmem_max for "net.core.rmem_max"; false if too long */
static bool sysctl_path(const char *name, char *path, size_t len)
{
	int i = snprintf(path, len, "/proc/sys/%s", name);

	if (i < 0 || (size_t)i >= len)
		return false;
	for (char *p = path + 10; *p; p++)
		if (*p == '.')
			*p = '/';
	return true;
}

int netcfg__sysctl_read(const char *name, char *buf, size_t len)
{
	char path[128];
	FILE *f;
	size_t n;

	if (!sysctl_path(name, path, sizeof(path)))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	collapse_ws(buf);
	return 0;
}

/* The errors by which the kernel refuses a sysctl write (procps's sysctl
 * prints EINVAL's and still exits 0) */
static bool refused(int err)
{
	return err == EACCES || err == EPERM || err == EROFS || err == EINVAL;
}

/*
 * Does the kernel let sysctl `name` be written in this thread's netns?
 * Opening it for writing runs the kernel's own check (proc_sys_permission:
 * the table's mode in this netns, net_ctl_permissions), so the answer
 * is the kernel's, not a guess from the name; nothing is written (a root
 * tool does not rewrite settings it was not asked to change, not even
 * with the value they hold).
 */
static enum netcfg_probe probe_write(const char *name)
{
	char path[128];
	int fd;

	if (!sysctl_path(name, path, sizeof(path)))
		return NETCFG_PROBE_UNKNOWN;
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? NETCFG_PROBE_ABSENT
		       : refused(errno) ? NETCFG_PROBE_READONLY : NETCFG_PROBE_UNKNOWN;
	close(fd);
	return NETCFG_PROBE_WRITABLE;
}

static void probe_all(enum netcfg_probe *v)
{
	for (size_t i = 0; i < NETCFG_NSYSCTLS; i++)
		v[i] = probe_write(netcfg__sysctl_names[i]);
}

/*
 * The probes in a fresh netns, made for them and gone with them (the
 * thread's own: nothing else sees it), once per run: which sysctls the
 * kernel gives every netns of its own. All unknown without the
 * privileges to make one, or to write there.
 */
static const enum netcfg_probe *fresh_probes(void)
{
	static enum netcfg_probe v[NETCFG_NSYSCTLS];
	static bool done;
	bool any = false;
	int self;

	if (done)
		return v;
	done = true;
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return v;
	if (!unshare(CLONE_NEWNET)) {
		probe_all(v);
		if (setns(self, CLONE_NEWNET)) {
			/* stuck in the fresh netns: every later answer would be wrong */
			perror("udpdrop: setns back to the original netns");
			abort();
		}
	}
	close(self);
	/* nothing writable even in a netns of our own: no privileges to
	 * write sysctls, so a refusal says nothing of the scope */
	for (size_t i = 0; i < NETCFG_NSYSCTLS; i++)
		any |= v[i] == NETCFG_PROBE_WRITABLE;
	if (!any)
		memset(v, 0, sizeof(v));
	return v;
}

enum advice_scope netcfg__scope(enum netcfg_probe in_netns, enum netcfg_probe in_fresh,
				bool other_netns)
{
	if (in_fresh == NETCFG_PROBE_WRITABLE)
		return ADVICE_SCOPE_NETNS;
	if (in_fresh == NETCFG_PROBE_ABSENT || in_fresh == NETCFG_PROBE_READONLY)
		return ADVICE_SCOPE_HOST;
	return in_netns == NETCFG_PROBE_ABSENT && other_netns ? ADVICE_SCOPE_HOST
							       : ADVICE_SCOPE_UNKNOWN;
}

/* The probes in each netns, once per run (a netns's inode is not reused
 * while it lives; past the cache's size each look probes again). */
#define PROBE_CACHE 64
static struct {
	uint32_t inode;
	enum netcfg_probe v[NETCFG_NSYSCTLS];
} probe_cache[PROBE_CACHE];
static int probe_cached;

struct sysctls_arg {
	struct netcfg_sysctls *s;
	enum netcfg_probe *probes; /* NULL: cached already */
};

static int sysctls_here(void *arg)
{
	struct sysctls_arg *a = arg;
	struct netcfg_sysctls *s = a->s;

	for (size_t i = 0; i < NETCFG_NSYSCTLS; i++)
		if (!s->ok[i])
			s->ok[i] = !netcfg__sysctl_read(netcfg__sysctl_names[i], s->v[i],
							sizeof(s->v[i]));
	if (a->probes)
		probe_all(a->probes);
	return 0;
}

/* safe in a shell command as it is: no quoting needed */
static bool shell_safe(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("._-/@+=:,", *s)))
			return false;
	return true;
}

/* How a command reaches netns `inode` from udpdrop's, for the advice. */
static void where_of(const struct netns_table *nt, uint32_t inode, struct advice_where *w)
{
	const struct netns_info *ni = inode ? netns__find(nt, inode) : NULL;

	w->self = !inode || inode == nt->self;
	if (ni && ni->name[0] && shell_safe(ni->name) && !strchr(ni->name, '/')) {
		snprintf(w->name, sizeof(w->name), "%s", ni->name);
		snprintf(w->enter, sizeof(w->enter), "ip netns exec %s ", ni->name);
	} else if (ni && ni->path[0] && shell_safe(ni->path)) {
		snprintf(w->enter, sizeof(w->enter), "nsenter --net=%s ", ni->path);
	}
	if (w->self)
		w->enter[0] = 0;
	if (ni && ni->name[0]) {
		snprintf(w->label, sizeof(w->label), "%s", ni->name);
		str_printable(w->label);
	} else {
		snprintf(w->label, sizeof(w->label), "%u", inode ? inode : nt->self);
	}
}

void netcfg__sysctls(const struct netns_table *nt, uint32_t inode, struct netcfg_sysctls *s)
{
	enum netcfg_probe here[NETCFG_NSYSCTLS] = { 0 };
	const enum netcfg_probe *fresh = fresh_probes();
	uint32_t key = inode ? inode : nt->self;
	struct sysctls_arg a = { s, NULL };
	bool other = inode && inode != nt->self;
	int c;

	memset(s, 0, sizeof(*s));
	for (c = 0; c < probe_cached && probe_cache[c].inode != key; c++)
		;
	if (c < probe_cached)
		memcpy(here, probe_cache[c].v, sizeof(here));
	else
		a.probes = here;
	if (other)
		netns__run_in(nt, inode, sysctls_here, &a);
	for (size_t i = 0; i < NETCFG_NSYSCTLS; i++)
		s->from_self[i] = !s->ok[i] && other;
	if (!other)
		sysctls_here(&a);
	else
		sysctls_here(&(struct sysctls_arg){ s, NULL });
	/* probed only when the netns could be entered (or is ours) */
	if (a.probes && (!other || here[0] || here[NETCFG_IPFRAG_TIME]) && probe_cached < PROBE_CACHE) {
		probe_cache[probe_cached].inode = key;
		memcpy(probe_cache[probe_cached++].v, here, sizeof(here));
	}
	where_of(nt, inode, &s->where);
	for (size_t i = 0; i < NETCFG_NSYSCTLS; i++) {
		struct advice_sysctl_scope *sc = &s->where.s[s->where.n++];

		snprintf(sc->name, sizeof(sc->name), "%s", netcfg__sysctl_names[i]);
		sc->scope = netcfg__scope(here[i], fresh[i], other);
		sc->settable = here[i] == NETCFG_PROBE_WRITABLE;
		/* per-netns, but this netns shows none (a netns owned by
		 * another user namespace hides some): udpdrop's own value
		 * would be another netns's */
		if (sc->scope == ADVICE_SCOPE_NETNS && s->from_self[i]) {
			s->ok[i] = s->from_self[i] = false;
			s->v[i][0] = 0;
		}
	}
}

bool netcfg__u64(const struct netcfg_sysctls *s, enum netcfg_sysctl i, unsigned field,
		 uint64_t *out)
{
	const char *p;
	char *end;
	unsigned long long v;

	if ((unsigned)i >= NETCFG_NSYSCTLS || !s->ok[i])
		return false;
	p = s->v[i];
	for (unsigned k = 0; k < field; k++) {
		p = strchr(p, ' ');
		if (!p)
			return false;
		p++;
	}
	if (*p < '0' || *p > '9')
		return false;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno || (*end && *end != ' '))
		return false;
	*out = v;
	return true;
}

static int ifaces_here(void *arg)
{
	struct netcfg_ifaces *il = arg;
	struct if_nameindex *ifs = if_nameindex();
	int fd;

	if (!ifs)
		return -errno;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (struct if_nameindex *p = ifs; p->if_index && il->n < NETCFG_IFACES_MAX; p++) {
		struct trace_iface *t = &il->v[il->n];
		struct ifreq ifr = {};

		snprintf(il->names[il->n], IF_NAMESIZE, "%s", p->if_name);
		t->name = il->names[il->n];
		t->ifindex = p->if_index;
		t->netns = il->netns;
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", p->if_name);
		if (fd >= 0 && !ioctl(fd, SIOCGIFMTU, &ifr))
			t->mtu = ifr.ifr_mtu;
		if (fd >= 0 && !ioctl(fd, SIOCGIFTXQLEN, &ifr))
			t->txqueuelen = ifr.ifr_qlen;
		il->n++;
	}
	if (fd >= 0)
		close(fd);
	if_freenameindex(ifs);
	return 0;
}

int netcfg__ifaces(const struct netns_table *nt, uint32_t inode, struct netcfg_ifaces *il)
{
	il->netns = inode;
	il->n = 0;
	return netns__run_in(nt, inode, ifaces_here, il);
}
