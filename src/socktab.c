// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "socktab.h"

int socktab__init(struct socktab *st)
{
	memset(st, 0, sizeof(*st));
	if (htab__init(&st->by_cookie, sizeof(uint64_t), sizeof(int)))
		return -ENOMEM;
	if (htab__init(&st->by_inode, sizeof(uint32_t), sizeof(int))) {
		htab__free(&st->by_cookie);
		return -ENOMEM;
	}
	return 0;
}

void socktab__free(struct socktab *st)
{
	free(st->v);
	htab__free(&st->by_cookie);
	htab__free(&st->by_inode);
	memset(st, 0, sizeof(*st));
}

void socktab__reset(struct socktab *st)
{
	st->n = 0;
	htab__clear(&st->by_cookie);
	htab__clear(&st->by_inode);
}

static struct sock_info *add(struct socktab *st)
{
	if (st->n == st->cap) {
		int ncap = st->cap ? st->cap * 2 : 256;
		struct sock_info *nv = realloc(st->v, ncap * sizeof(*nv));

		if (!nv)
			return NULL;
		st->v = nv;
		st->cap = ncap;
	}
	memset(&st->v[st->n], 0, sizeof(st->v[st->n]));
	return &st->v[st->n++];
}

static int index_sock(struct socktab *st, int idx)
{
	struct sock_info *si = &st->v[idx];
	int *slot;

	slot = htab__upsert(&st->by_cookie, &si->cookie, NULL);
	if (!slot)
		return -ENOMEM;
	*slot = idx;
	if (si->inode) {
		slot = htab__upsert(&st->by_inode, &si->inode, NULL);
		if (!slot)
			return -ENOMEM;
		*slot = idx;
	}
	return 0;
}

struct dump_ctx {
	struct socktab *st;
	uint32_t netns;
	int proto;
};

static int parse_msg(struct dump_ctx *c, struct nlmsghdr *h)
{
	struct inet_diag_msg *r = NLMSG_DATA(h);
	int len = h->nlmsg_len - NLMSG_LENGTH(sizeof(*r));
	struct sock_info *si;

	if (len < 0)
		return 0;
	si = add(c->st);
	if (!si)
		return -ENOMEM;
	si->netns = c->netns;
	si->proto = c->proto;
	si->family = r->idiag_family;
	si->state = r->idiag_state;
	si->sport = ntohs(r->id.idiag_sport);
	si->dport = ntohs(r->id.idiag_dport);
	memcpy(si->saddr, r->id.idiag_src, 16);
	memcpy(si->daddr, r->id.idiag_dst, 16);
	si->cookie = (uint64_t)r->id.idiag_cookie[1] << 32 |
		     r->id.idiag_cookie[0];
	si->inode = r->idiag_inode;
	si->uid = r->idiag_uid;
	for (struct rtattr *a = (struct rtattr *)(r + 1); RTA_OK(a, len);
	     a = RTA_NEXT(a, len)) {
		if (a->rta_type == INET_DIAG_SKMEMINFO &&
		    RTA_PAYLOAD(a) >= (int)((SK_MEMINFO_DROPS + 1) * sizeof(uint32_t))) {
			uint32_t *mi = RTA_DATA(a);

			si->rmem = mi[SK_MEMINFO_RMEM_ALLOC];
			si->rcvbuf = mi[SK_MEMINFO_RCVBUF];
			si->wmem = mi[SK_MEMINFO_WMEM_ALLOC];
			si->sndbuf = mi[SK_MEMINFO_SNDBUF];
			si->drops = mi[SK_MEMINFO_DROPS];
			si->have_mem = true;
		}
	}
	return index_sock(c->st, c->st->n - 1);
}

static int dump_family(struct dump_ctx *c, int fd, int family)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {
		.nlh = { .nlmsg_len = sizeof(req),
			 .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = family,
		       .sdiag_protocol = c->proto,
		       .idiag_states = ~0u,
		       .idiag_ext = 1 << (INET_DIAG_SKMEMINFO - 1) },
	};
	static char buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));

	if (send(fd, &req, sizeof(req), 0) < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				/* no IPv6 in this netns, or no TCP diag module */
				return e->error == -ENOENT ? 0 : e->error;
			}
			int err = parse_msg(c, h);

			if (err)
				return err;
		}
	}
}

static int dump_here(void *arg)
{
	struct dump_ctx *c = arg;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	int err;

	if (fd < 0)
		return -errno;
	err = dump_family(c, fd, AF_INET);
	if (!err)
		err = dump_family(c, fd, AF_INET6);
	close(fd);
	return err;
}

int socktab__dump(struct socktab *st, const struct netns_table *nt,
		  uint32_t inode, int proto)
{
	struct dump_ctx c = { .st = st, .netns = inode, .proto = proto };

	return netns__run_in(nt, inode, dump_here, &c);
}

struct sock_info *socktab__by_cookie(struct socktab *st, uint64_t cookie)
{
	int *idx = htab__find(&st->by_cookie, &cookie);

	return idx ? &st->v[*idx] : NULL;
}

struct sock_info *socktab__by_inode(struct socktab *st, uint32_t inode)
{
	int *idx = htab__find(&st->by_inode, &inode);

	return idx ? &st->v[*idx] : NULL;
}

static bool is_any(const uint8_t *a, int len)
{
	for (int i = 0; i < len; i++)
		if (a[i])
			return false;
	return true;
}

static bool is_v4mapped(const uint8_t *a6, const uint8_t *a4)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(a6, pfx, 12) && !memcmp(a6 + 12, a4, 4);
}

struct sock_info *socktab__lookup(struct socktab *st, uint32_t netns,
				  int family, int proto, const uint8_t *saddr,
				  const uint8_t *daddr, uint16_t dport)
{
	struct sock_info *best = NULL;
	int best_score = 0, alen = family == AF_INET6 ? 16 : 4;

	for (int i = 0; i < st->n; i++) {
		struct sock_info *si = &st->v[i];
		int score;

		if (si->netns != netns || si->proto != proto ||
		    si->sport != dport)
			continue;
		if (si->proto == IPPROTO_TCP && si->state != 10 /* LISTEN */ &&
		    si->dport == 0)
			continue;
		if (si->family == family) {
			if (!memcmp(si->saddr, daddr, alen))
				score = 4;
			else if (is_any(si->saddr, alen))
				score = 2;
			else
				continue;
		} else if (family == AF_INET && si->family == AF_INET6) {
			if (is_v4mapped(si->saddr, daddr))
				score = 3;
			else if (is_any(si->saddr, 16))
				score = 1;
			else
				continue;
		} else {
			continue;
		}
		/* connected to this very source: the kernel's first choice */
		if (si->dport && saddr) {
			bool same = si->family == family
					    ? !memcmp(si->daddr, saddr, alen)
					    : is_v4mapped(si->daddr, saddr);

			if (!same)
				continue; /* connected elsewhere: never receives it */
			score += 8;
		}
		if (score > best_score) {
			best = si;
			best_score = score;
		}
	}
	return best;
}

static void read_comm(int pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	comm[0] = '\0';
	if (!f)
		return;
	if (fgets(comm, len, f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
}

/* Calls fn(pid, inode) for each socket fd of each process. */
static void walk_socket_fds(int only_pid, void (*fn)(void *, int, uint32_t),
			    void *arg)
{
	DIR *proc = only_pid ? NULL : opendir("/proc");
	struct dirent *de;

	for (;;) {
		int pid;

		if (only_pid) {
			pid = only_pid;
		} else {
			if (!proc || !(de = readdir(proc)))
				break;
			if (!isdigit((unsigned char)de->d_name[0]))
				continue;
			pid = atoi(de->d_name);
		}
		char path[64];
		DIR *fds;
		struct dirent *fe;

		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fds = opendir(path);
		while (fds && (fe = readdir(fds))) {
			char link[320], target[64];
			ssize_t n;
			unsigned long ino;

			if (fe->d_name[0] == '.')
				continue;
			snprintf(link, sizeof(link), "/proc/%d/fd/%s", pid,
				 fe->d_name);
			n = readlink(link, target, sizeof(target) - 1);
			if (n <= 8)
				continue;
			target[n] = '\0';
			if (sscanf(target, "socket:[%lu]", &ino) == 1)
				fn(arg, pid, ino);
		}
		if (fds)
			closedir(fds);
		if (only_pid)
			break;
	}
	if (proc)
		closedir(proc);
}

struct owners_ctx {
	struct socktab *st;
	const bool *want;
};

static void owner_cb(void *arg, int pid, uint32_t inode)
{
	struct owners_ctx *c = arg;
	struct sock_info *si = socktab__by_inode(c->st, inode);

	if (!si || !c->want[si - c->st->v])
		return;
	for (int i = 0; i < si->npids && i < SOCK_MAX_PIDS; i++)
		if (si->pids[i] == pid)
			return; /* the same socket on two fds of one process */
	if (si->npids < SOCK_MAX_PIDS)
		si->pids[si->npids] = pid;
	if (si->npids++ == 0)
		read_comm(pid, si->comm, sizeof(si->comm));
}

int socktab__find_owners(struct socktab *st, const bool *want)
{
	struct owners_ctx c = { .st = st, .want = want };

	walk_socket_fds(0, owner_cb, &c);
	return 0;
}

struct pid_ctx {
	uint32_t *inodes;
	int n, max;
};

static void pid_cb(void *arg, int pid, uint32_t inode)
{
	struct pid_ctx *c = arg;

	if (c->n < c->max)
		c->inodes[c->n++] = inode;
}

int socktab__pid_inodes(int pid, uint32_t *inodes, int n)
{
	struct pid_ctx c = { .inodes = inodes, .max = n };

	walk_socket_fds(pid, pid_cb, &c);
	return c.n;
}
