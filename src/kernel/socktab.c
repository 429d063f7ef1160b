// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
	free(st->procs);
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
	const uint16_t *ports;
	int nports;
};

int socktab__parse(const struct nlmsghdr *h, int proto, uint32_t netns,
		   struct sock_info *si)
{
	const struct inet_diag_msg *r = NLMSG_DATA(h);
	int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*r));

	if (len < 0)
		return -EINVAL;
	si->netns = netns;
	si->proto = proto;
	si->family = r->idiag_family;
	si->state = r->idiag_state;
	si->sport = ntohs(r->id.idiag_sport);
	si->dport = ntohs(r->id.idiag_dport);
	memcpy(si->saddr, r->id.idiag_src, 16);
	memcpy(si->daddr, r->id.idiag_dst, 16);
	si->ifindex = r->id.idiag_if;
	si->cookie = (uint64_t)r->id.idiag_cookie[1] << 32 |
		     r->id.idiag_cookie[0];
	si->inode = r->idiag_inode;
	si->uid = r->idiag_uid;
	si->have_mem = false;
	for (const struct rtattr *a = (const struct rtattr *)(r + 1); RTA_OK(a, len);
	     a = RTA_NEXT(a, len)) {
		if (a->rta_type == INET_DIAG_SKMEMINFO &&
		    RTA_PAYLOAD(a) >= (int)((SK_MEMINFO_DROPS + 1) * sizeof(uint32_t))) {
			const uint32_t *mi = RTA_DATA(a);

			si->rmem = mi[SK_MEMINFO_RMEM_ALLOC];
			si->rcvbuf = mi[SK_MEMINFO_RCVBUF];
			si->wmem = mi[SK_MEMINFO_WMEM_ALLOC];
			si->sndbuf = mi[SK_MEMINFO_SNDBUF];
			si->drops = mi[SK_MEMINFO_DROPS];
			si->have_mem = true;
		}
	}
	return 0;
}

static int parse_msg(struct dump_ctx *c, struct nlmsghdr *h)
{
	struct sock_info *si = add(c->st);

	if (!si)
		return -ENOMEM;
	if (socktab__parse(h, c->proto, c->netns, si)) {
		c->st->n--;
		return 0;
	}
	return index_sock(c->st, c->st->n - 1);
}

int socktab__bc_ports(const uint16_t *ports, int n, void *buf, int len)
{
	struct inet_diag_bc_op *op = buf;
	int total = 12 * n - 4, o = 0;

	if (n < 1 || total > len)
		return -ENOSPC;
	/*
	 * ss's "sport = :A or sport = :B ...": each test's yes goes on to a
	 * jump to the end (accept), its no to the next test; the last
	 * test's no jumps past the end (reject). Every op is on the chain
	 * of yes jumps, as the kernel's audit wants.
	 */
	for (int i = 0; i < n; i++) {
		bool last = i == n - 1;

		op[o / 4] = (struct inet_diag_bc_op){ INET_DIAG_BC_S_EQ, 8, 12 };
		op[o / 4 + 1] = (struct inet_diag_bc_op){ 0, 0, ports[i] };
		o += 8;
		if (!last) {
			op[o / 4] = (struct inet_diag_bc_op){ INET_DIAG_BC_JMP, 4, total - o };
			o += 4;
		}
	}
	return total;
}

static int dump_family(struct dump_ctx *c, int fd, int family)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
		struct rtattr bc;
		struct inet_diag_bc_op ops[3 * SOCKTAB_DUMP_PORTS];
	} req = {
		.nlh = { .nlmsg_len = NLMSG_LENGTH(sizeof(req.r)),
			 .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = family,
		       .sdiag_protocol = c->proto,
		       .idiag_states = ~0u,
		       .idiag_ext = 1 << (INET_DIAG_SKMEMINFO - 1) },
	};
	static char buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));

	if (c->nports) {
		int len = socktab__bc_ports(c->ports, c->nports, req.ops, sizeof(req.ops));

		if (len < 0)
			return len;
		req.bc.rta_type = INET_DIAG_REQ_BYTECODE;
		req.bc.rta_len = RTA_LENGTH(len);
		req.nlh.nlmsg_len += RTA_ALIGN(req.bc.rta_len);
	}
	if (send(fd, &req, req.nlh.nlmsg_len, 0) < 0)
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
	return socktab__dump_ports(st, nt, inode, proto, NULL, 0);
}

int socktab__dump_ports(struct socktab *st, const struct netns_table *nt,
			uint32_t inode, int proto, const uint16_t *ports,
			int nports)
{
	struct dump_ctx c = { .st = st, .netns = inode, .proto = proto,
			      .ports = ports, .nports = nports };

	if (nports < 0 || nports > SOCKTAB_DUMP_PORTS)
		return -EINVAL;
	return netns__run_in(nt, inode, dump_here, &c);
}

void socktab__remove_if(struct socktab *st,
			bool (*gone)(const struct sock_info *si, void *arg),
			void *arg)
{
	int n = 0;

	for (int i = 0; i < st->n; i++) {
		if (gone(&st->v[i], arg))
			continue;
		if (n != i)
			st->v[n] = st->v[i];
		n++;
	}
	if (n == st->n)
		return;
	st->n = n;
	htab__clear(&st->by_cookie);
	htab__clear(&st->by_inode);
	for (int i = 0; i < st->n; i++)
		index_sock(st, i); /* ENOMEM: the socket is only harder to find */
}

/* ---- exact requests --------------------------------------------------- */

void socktab__exact_req(const struct sock_info *si, uint32_t seq,
			struct socktab_req *out)
{
	int alen = si->family == AF_INET6 ? 16 : 4;

	memset(out, 0, sizeof(*out));
	out->nlh.nlmsg_len = sizeof(*out);
	out->nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	out->nlh.nlmsg_flags = NLM_F_REQUEST;
	out->nlh.nlmsg_seq = seq;
	out->r.sdiag_family = si->family;
	out->r.sdiag_protocol = si->proto;
	out->r.idiag_ext = 1 << (INET_DIAG_SKMEMINFO - 1);
	out->r.idiag_states = ~0u;
	/*
	 * The kernel looks the socket up as it would for a datagram from
	 * (src, sport) to (dst, dport): src is the remote end, dst the local
	 * one, the reverse of what a dump reports (udp_dump_one).
	 */
	memcpy(out->r.id.idiag_src, si->daddr, alen);
	out->r.id.idiag_sport = htons(si->dport);
	memcpy(out->r.id.idiag_dst, si->saddr, alen);
	out->r.id.idiag_dport = htons(si->sport);
	out->r.id.idiag_if = si->ifindex;
	/* another socket found in its place answers ESTALE */
	out->r.id.idiag_cookie[0] = (uint32_t)si->cookie;
	out->r.id.idiag_cookie[1] = (uint32_t)(si->cookie >> 32);
}

struct refresh_ctx {
	struct socktab *st;
	uint32_t netns;
	const int *idx;
	int n;
	bool *found;
};

/* Big enough for one reply (an inet_diag_msg and a few attributes). */
#define REPLY_MAX 1024

/*
 * Read the answers to requests [first, first + n) of c: one each. Returns
 * how many went unanswered (lost to a full receive buffer), or -errno.
 */
static int refresh_read(struct refresh_ctx *c, int fd, int first, int n)
{
	static char bufs[SOCKTAB_BATCH][REPLY_MAX] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct mmsghdr msgs[SOCKTAB_BATCH];
	struct iovec iov[SOCKTAB_BATCH];
	int answered = 0;

	while (answered < n) {
		int want = n - answered, got;

		for (int i = 0; i < want; i++) {
			iov[i] = (struct iovec){ bufs[i], REPLY_MAX };
			msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i],
								 .msg_iovlen = 1 } };
		}
		/* the kernel answers inside sendmsg: all are queued by now */
		got = recvmmsg(fd, msgs, want, MSG_DONTWAIT, NULL);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno == ENOBUFS)
			continue; /* some were lost; read the others */
		if (got < 0 && errno != EAGAIN)
			return -errno;
		if (got <= 0)
			return n - answered;
		for (int i = 0; i < got; i++) {
			size_t len = msgs[i].msg_len;
			struct nlmsghdr *h = (struct nlmsghdr *)bufs[i];

			answered++;
			if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC)
				continue;
			for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
				int k = (int)h->nlmsg_seq - first;
				struct sock_info fresh, *si;

				if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || k < 0 || k >= n)
					continue; /* NLMSG_ERROR: not found, or another socket */
				si = &c->st->v[c->idx[first + k]];
				memset(&fresh, 0, sizeof(fresh));
				if (socktab__parse(h, si->proto, c->netns, &fresh) ||
				    fresh.cookie != si->cookie)
					continue;
				/* the tuple and the owners stay; the rest is news */
				si->state = fresh.state;
				si->uid = fresh.uid;
				si->rmem = fresh.rmem;
				si->rcvbuf = fresh.rcvbuf;
				si->wmem = fresh.wmem;
				si->sndbuf = fresh.sndbuf;
				si->drops = fresh.drops;
				si->have_mem = fresh.have_mem;
				c->found[first + k] = true;
			}
		}
	}
	return 0;
}

static int refresh_here(void *arg)
{
	struct refresh_ctx *c = arg;
	static struct socktab_req reqs[SOCKTAB_BATCH];
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	int lost = 0, rcvbuf = 1 << 20;

	if (fd < 0)
		return -errno;
	/* room for a whole batch of answers (capped by net.core.rmem_max) */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	for (int first = 0; first < c->n; first += SOCKTAB_BATCH) {
		int n = c->n - first < SOCKTAB_BATCH ? c->n - first : SOCKTAB_BATCH, r;

		for (int i = 0; i < n; i++)
			socktab__exact_req(&c->st->v[c->idx[first + i]], first + i, &reqs[i]);
		if (send(fd, reqs, n * sizeof(reqs[0]), 0) < 0) {
			r = -errno;
			close(fd);
			return r;
		}
		r = refresh_read(c, fd, first, n);
		if (r < 0) {
			close(fd);
			return r;
		}
		lost += r;
	}
	close(fd);
	return lost;
}

int socktab__refresh(struct socktab *st, const struct netns_table *nt,
		     uint32_t inode, const int *idx, int n, bool *found)
{
	struct refresh_ctx c = { .st = st, .netns = inode, .idx = idx, .n = n,
				 .found = found };

	memset(found, 0, n * sizeof(*found));
	if (!n)
		return 0;
	return netns__run_in(nt, inode, refresh_here, &c);
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

/*
 * Calls fn(arg, pid, fd, inode) for each socket fd of process pid, until
 * it returns true. Each fd is read relative to the /proc/PID/fd directory:
 * one path step per readlink, not four.
 */
static void walk_pid_fds(int pid, bool (*fn)(void *, int, int, uint32_t),
			 void *arg)
{
	char path[64];
	DIR *fds;
	struct dirent *fe;
	int dfd;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	fds = opendir(path);
	if (!fds)
		return; /* gone, or not ours to read */
	dfd = dirfd(fds);
	while ((fe = readdir(fds))) {
		char target[64];
		ssize_t n;
		unsigned long ino;

		if (fe->d_name[0] == '.')
			continue;
		n = readlinkat(dfd, fe->d_name, target, sizeof(target) - 1);
		if (n <= 8 || memcmp(target, "socket:[", 8))
			continue;
		target[n] = '\0';
		if (sscanf(target + 8, "%lu]", &ino) == 1 &&
		    fn(arg, pid, atoi(fe->d_name), ino))
			break; /* nothing more to learn from this process */
	}
	closedir(fds);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* The processes running now, ascending, into st->procs. */
static int list_procs(struct socktab *st)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;

	st->nprocs = 0;
	if (!proc)
		return -errno;
	while ((de = readdir(proc))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (st->nprocs == st->procs_cap) {
			int ncap = st->procs_cap ? 2 * st->procs_cap : 512;
			int *nv = realloc(st->procs, ncap * sizeof(*nv));

			if (!nv) {
				closedir(proc);
				return -ENOMEM;
			}
			st->procs = nv;
			st->procs_cap = ncap;
		}
		st->procs[st->nprocs++] = atoi(de->d_name);
	}
	closedir(proc);
	qsort(st->procs, st->nprocs, sizeof(*st->procs), cmp_int);
	return 0;
}

static bool in_sorted(const int *v, int n, int x)
{
	return n > 0 && bsearch(&x, v, n, sizeof(*v), cmp_int);
}

struct owners_ctx {
	struct socktab *st;
	const bool *want;
	int nwant;      /* sockets wanted */
	int pid, here;  /* the process walked, and how many of them it holds */
	int comm_pid;   /* whose comm is in comm (read once per process) */
	char comm[16];
};

static void comm_of(struct owners_ctx *c, int pid, char *out)
{
	if (c->comm_pid != pid) {
		read_comm(pid, c->comm, sizeof(c->comm));
		c->comm_pid = pid;
	}
	memcpy(out, c->comm, sizeof(c->comm));
}

/*
 * One socket fd of a process. True once the process is known to hold
 * every socket wanted: its other fds can only repeat that (a process with
 * all the sockets in view, the usual case, is read only so far).
 */
static bool owner_cb(void *arg, int pid, int fd, uint32_t inode)
{
	struct owners_ctx *c = arg;
	struct sock_info *si = socktab__by_inode(c->st, inode);

	if (c->pid != pid) {
		c->pid = pid;
		c->here = 0;
	}
	if (!si || !c->want[si - c->st->v])
		return false;
	for (int i = 0; i < si->npids && i < SOCK_MAX_PIDS; i++)
		if (si->pids[i] == pid)
			return false; /* the same socket on two fds of one process */
	if (si->npids < SOCK_MAX_PIDS) {
		si->pids[si->npids] = pid;
		si->fds[si->npids] = fd;
	}
	if (si->npids++ == 0)
		comm_of(c, pid, si->comm);
	return ++c->here == c->nwant;
}

int socktab__find_owners(struct socktab *st, const bool *want)
{
	struct owners_ctx c = { .st = st, .want = want };
	int err;

	/* found from scratch: owners that have gone go */
	for (int i = 0; i < st->n; i++)
		if (want[i]) {
			st->v[i].npids = 0;
			memset(st->v[i].pids, 0, sizeof(st->v[i].pids));
			st->v[i].comm[0] = '\0';
			c.nwant++;
		}
	if (!c.nwant)
		return 0;
	err = list_procs(st);
	if (err)
		return err;
	for (int i = 0; i < st->nprocs; i++)
		walk_pid_fds(st->procs[i], owner_cb, &c);
	return 0;
}

/* Does process pid hold socket inode on fd? dir caches pid's fd directory. */
static bool holds(int pid, int fd, uint32_t inode, int *dir_pid, int *dir_fd)
{
	char name[16], target[64], want[32];
	ssize_t n;
	int len;

	if (*dir_pid != pid) {
		char path[64];

		if (*dir_fd >= 0)
			close(*dir_fd);
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		*dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		*dir_pid = pid;
	}
	if (*dir_fd < 0)
		return false;
	snprintf(name, sizeof(name), "%d", fd);
	len = snprintf(want, sizeof(want), "socket:[%u]", inode);
	n = readlinkat(*dir_fd, name, target, sizeof(target));
	return n == len && !memcmp(target, want, len);
}

int socktab__check_owners(struct socktab *st, const bool *want)
{
	struct owners_ctx c = { .st = st, .want = want };
	int *before = st->procs, nbefore = st->nprocs, before_cap = st->procs_cap;
	int *again = NULL, nagain = 0, dir_pid = 0, dir_fd = -1, err;

	if (!before)
		return -EAGAIN; /* no full walk yet */
	for (int i = 0; i < st->n; i++) {
		if (want[i] && st->v[i].npids > SOCK_MAX_PIDS)
			return -EAGAIN; /* holders it does not remember */
		c.nwant += want[i];
	}
	st->procs = NULL;
	st->nprocs = st->procs_cap = 0;
	err = list_procs(st);
	if (!err)
		again = malloc((st->n + 1) * SOCK_MAX_PIDS * sizeof(*again));
	if (err || !again) {
		free(st->procs);
		st->procs = before;
		st->nprocs = nbefore;
		st->procs_cap = before_cap;
		return err ?: -ENOMEM;
	}
	/* the holders as they were: still there? */
	for (int i = 0; i < st->n; i++) {
		struct sock_info *si = &st->v[i];
		int keep = 0;

		if (!want[i])
			continue;
		for (int j = 0; j < si->npids; j++) {
			if (holds(si->pids[j], si->fds[j], si->inode, &dir_pid, &dir_fd)) {
				si->pids[keep] = si->pids[j];
				si->fds[keep++] = si->fds[j];
			} else {
				again[nagain++] = si->pids[j]; /* moved it, or gone */
			}
		}
		si->npids = keep;
	}
	if (dir_fd >= 0)
		close(dir_fd);
	/* the processes to look at whole: new ones, and those that failed */
	qsort(again, nagain, sizeof(*again), cmp_int);
	for (int i = 0; i < st->nprocs; i++) {
		int pid = st->procs[i];

		if (!in_sorted(before, nbefore, pid) || in_sorted(again, nagain, pid))
			walk_pid_fds(pid, owner_cb, &c);
	}
	/* the first holder's name (it may have exec'd) */
	for (int i = 0; i < st->n; i++)
		if (want[i] && st->v[i].npids)
			comm_of(&c, st->v[i].pids[0], st->v[i].comm);
		else if (want[i])
			st->v[i].comm[0] = '\0';
	free(before);
	free(again);
	return 0;
}

struct pid_ctx {
	uint32_t *inodes;
	int n, max;
};

static bool pid_cb(void *arg, int pid, int fd, uint32_t inode)
{
	struct pid_ctx *c = arg;

	if (c->n < c->max)
		c->inodes[c->n++] = inode;
	return c->n == c->max;
}

int socktab__pid_inodes(int pid, uint32_t *inodes, int n)
{
	struct pid_ctx c = { .inodes = inodes, .max = n };

	walk_pid_fds(pid, pid_cb, &c);
	return c.n;
}
