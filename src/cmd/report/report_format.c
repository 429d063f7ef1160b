// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop report, shared formatting (report_internal.h): the duration,
 * addresses, owners, reasons, locations and netns as the text, the advice
 * and the JSON all print them.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "model.h"
#include "reconcile.h"
#include "report_internal.h"

/* ---- shared formatting ------------------------------------------------ */

double rp_duration_s(const struct report *rp)
{
	/* the span the counts cover (what reconciles), else the writer's */
	if (rp->ncounts >= 2 && rp->last.time_ns >= rp->first.time_ns)
		return (rp->last.time_ns - rp->first.time_ns) / 1e9;
	if (rp->have_end)
		return rp->end_duration_ns / 1e9;
	return 0;
}

/* META start_time ("1763880000.123456789") as UTC text, without libc's
 * locale-dependent strtod. */
void rp_fmt_start(char *buf, size_t len, const char *v)
{
	unsigned long long s = 0;
	struct tm tm;
	time_t t;
	const char *p = v;

	if (!v || *v < '0' || *v > '9') {
		snprintf(buf, len, "unknown");
		return;
	}
	for (; *p >= '0' && *p <= '9'; p++)
		s = s * 10 + (*p - '0');
	t = (time_t)s;
	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, len, "%s", v);
}

void rp_fmt_local(char *buf, size_t len, const struct agg_sock *s)
{
	if (s->sock && (s->sock->family == AF_INET || s->sock->family == AF_INET6))
		fmt_endpoint(buf, len, s->sock->family, s->sock->laddr, s->sock->lport);
	else
		snprintf(buf, len, "%s %llu", s->by_inode ? "inode" : "cookie",
			 (unsigned long long)s->cookie);
}

/* The REMOTE column, as top's: the connected peer, "*" for none. */
void rp_fmt_remote(char *buf, size_t len, const struct agg_sock *s)
{
	if (!s->sock || (s->sock->family != AF_INET && s->sock->family != AF_INET6))
		snprintf(buf, len, "?");
	else if (s->sock->rport)
		fmt_endpoint(buf, len, s->sock->family, s->sock->raddr, s->sock->rport);
	else
		snprintf(buf, len, "*");
}

/*
 * The kernel device that owns a socket no process holds, as top named
 * it (META kernel_owner.COOKIE, written by record; NULL if none).
 */
const char *rp_kernel_owner(const struct report *rp, const struct agg_sock *s)
{
	char key[48];

	if (!s->sock || s->sock->pid)
		return NULL;
	/* the writer's name ids keep the cookie's low 62 bits (a socket known
	 * by its inode alone is UD_RX_INODE | inode in SOCKETS) */
	snprintf(key, sizeof(key), "kernel_owner.%llu",
		 (unsigned long long)(s->sock->cookie & ~(3ull << 62)));
	return rp_meta_get(rp, key);
}

/* The next '/'-separated name of *p into buf (empty if none). */
static void next_name(const char **p, char *buf, size_t len)
{
	size_t n = strcspn(*p, "/");

	snprintf(buf, len, "%.*s", (int)n, *p);
	*p += n + ((*p)[n] == '/');
}

bool rp_pod(const struct report *rp, const struct agg_sock *s, struct pod_names *out)
{
	char key[48];
	const char *v;

	memset(out, 0, sizeof(*out));
	if (!s->sock || !s->sock->pid)
		return false;
	snprintf(key, sizeof(key), "k8s_pod.%llu",
		 (unsigned long long)(s->sock->cookie & ~(3ull << 62)));
	v = rp_meta_get(rp, key);
	if (!v)
		return false;
	next_name(&v, out->ns, sizeof(out->ns));
	next_name(&v, out->pod, sizeof(out->pod));
	next_name(&v, out->container, sizeof(out->container));
	next_name(&v, out->uid, sizeof(out->uid));
	return out->ns[0] || out->pod[0];
}

void rp_fmt_owner(const struct report *rp, char *buf, size_t len, const struct agg_sock *s)
{
	char comm[16];
	const char *kowner = rp_kernel_owner(rp, s);

	if (!s->sock) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(comm, sizeof(comm), "%s", s->sock->comm);
	str_printable(comm);
	if (s->sock->pid) {
		snprintf(buf, len, "%u/%s", s->sock->pid, comm[0] ? comm : "?");
	} else if (kowner) {
		snprintf(buf, len, "%s", kowner);
		str_printable(buf); /* the file's text */
	} else {
		snprintf(buf, len, "%s", comm[0] ? comm : "?");
	}
}

void rp_fmt_flow(char *buf, size_t len, const struct agg_flow *f)
{
	char s[64], d[80];

	if (f->overflow) {
		snprintf(buf, len, "(drop table full: flow not kept)");
		return;
	}
	if (f->family != AF_INET && f->family != AF_INET6) {
		snprintf(buf, len, "? -> ?:%u", f->dport);
		return;
	}
	fmt_addr(s, sizeof(s), f->family, f->saddr);
	fmt_endpoint(d, sizeof(d), f->family, f->daddr, f->dport);
	snprintf(buf, len, "%s -> %s", s, d);
}

void rp_fmt_reason(char *buf, size_t len, const struct report *rp, uint32_t reason)
{
	const char *n = rp_reason_name(rp, reason);

	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "reason %u", reason);
	str_printable(buf); /* the file's name for it */
}

void rp_fmt_loc(char *buf, size_t len, const struct report *rp, uint64_t addr)
{
	const char *n = rp_symbol_name(rp, addr);

	if (n)
		snprintf(buf, len, "%s", n);
	else if (addr)
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	else
		snprintf(buf, len, "unknown");
	str_printable(buf); /* the file's name for it */
}

/* The netns's `ip netns` name where record knew one (META
 * netns_name.INODE), as top shows it; else its inode. NULL: no name. */
const char *rp_netns_name(const struct report *rp, uint32_t ns)
{
	char key[32];

	if (!ns)
		return NULL;
	snprintf(key, sizeof(key), "netns_name.%u", ns);
	return rp_meta_get(rp, key);
}

void rp_fmt_netns(const struct report *rp, char *buf, size_t len, uint32_t ns)
{
	const char *name = rp_netns_name(rp, ns);

	if (name && name[0]) {
		snprintf(buf, len, "%s", name);
		str_printable(buf); /* the file's text */
	} else if (ns) {
		snprintf(buf, len, "%u", ns);
	} else {
		snprintf(buf, len, "?");
	}
}

/* udpdrop's count minus the kernel's, saturated to int64 (JSON "diff"). */
int64_t rp_recon_diff(const struct agg_recon *r)
{
	return reconcile__diff(r->udpdrop, r->kernel);
}

/* How far apart they are, exactly (no negation of INT64_MIN). */
uint64_t rp_recon_gap(const struct agg_recon *r)
{
	return r->udpdrop > r->kernel ? r->udpdrop - r->kernel : r->kernel - r->udpdrop;
}
