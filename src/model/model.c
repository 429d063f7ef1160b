// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The live model (model.h): its start and end, the names of reasons,
 * causes, netns and a socketless row's flow, and the glue to the drop
 * windows (windows.h). The rest lives along the model's seams, in the
 * files model_internal.h joins: counters (the netns counters), sockets
 * (the socket table), attribution (flows to sockets), dumps (keeping the
 * table) and rows (model__update and its rows).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "model_internal.h"
#include "util.h"
#include "sockid.h"

/* Drop locations the classifier must recognise (see enum ud_range). */
const char *const model__range_syms[UD_RANGE_MAX] = {
	[UD_RANGE_FRAG_PURGE] = "inet_frag_rbtree_purge",
	[UD_RANGE_UDP_DESTRUCT] = "udp_destruct_common",
	[UD_RANGE_INET_DESTRUCT] = "inet_sock_destruct",
};

/*
 * Kernels without drop reasons: the functions whose drops the classifier
 * names by site (enum ud_loc), as 5.10 to 5.16 call them (one inlined
 * into another lends its drops to the caller's range; absent ones are
 * skipped; their compiler clones, NAME.cold, NAME.isra.0 and the like,
 * count as NAME: ksyms__clones). Their drop sites were read in the v5.10
 * and v5.15 sources.
 */
const struct model_site_sym model__site_syms[] = {
	{ "__udp4_lib_rcv", UD_LOC_UDP_RCV },
	{ "__udp6_lib_rcv", UD_LOC_UDP_RCV },
	{ "udp_queue_rcv_one_skb", UD_LOC_UDP_QUEUE },
	{ "__udp_queue_rcv_skb", UD_LOC_UDP_QUEUE },
	{ "udp_queue_rcv_skb", UD_LOC_UDP_QUEUE },
	{ "udpv6_queue_rcv_one_skb", UD_LOC_UDP_QUEUE },
	{ "__udpv6_queue_rcv_skb", UD_LOC_UDP_QUEUE },
	{ "udpv6_queue_rcv_skb", UD_LOC_UDP_QUEUE },
	{ "udp_recvmsg", UD_LOC_UDP_RECV },
	{ "udpv6_recvmsg", UD_LOC_UDP_RECV },
	{ "__first_packet_length", UD_LOC_UDP_RECV },
	{ "first_packet_length", UD_LOC_UDP_RECV },
	{ "udp_ioctl", UD_LOC_UDP_RECV },
	{ "udp_poll", UD_LOC_UDP_RECV },
	{ "ip_expire", UD_LOC_FRAG_EXPIRE },
	{ "ip6_frag_expire", UD_LOC_FRAG_EXPIRE },
	{ "nf_ct_frag6_expire", UD_LOC_FRAG_EXPIRE },
	{ "ip_frag_queue", UD_LOC_FRAG_QUEUE },
	{ "ip_defrag", UD_LOC_FRAG_QUEUE },
	{ "ip6_frag_queue", UD_LOC_FRAG_QUEUE },
	{ "ipv6_frag_rcv", UD_LOC_FRAG_QUEUE },
	{ "nf_ct_frag6_queue", UD_LOC_FRAG_QUEUE },
	{ "nf_ct_frag6_gather", UD_LOC_FRAG_QUEUE },
	{ "nf_hook_slow", UD_LOC_NETFILTER },
	/* where nftables frees a dropped packet itself (6.18 does, in
	 * nft_do_chain, with NETFILTER_DROP): the same site, for a
	 * NOT_SPECIFIED drop there and for UDPDROP_NO_DROP_REASONS */
	{ "nft_do_chain", UD_LOC_NETFILTER },
	{ "kfree_skb_list", UD_LOC_QDISC },
	{ "enqueue_to_backlog", UD_LOC_BACKLOG },
	{ "__neigh_event_send", UD_LOC_NEIGH },
	{ "neigh_invalidate", UD_LOC_NEIGH },
	{ "neigh_destroy", UD_LOC_NEIGH },
	/* multicast to a group the interface has not joined (every kernel) */
	{ "ip_rcv_finish_core", UD_LOC_IP_RCV },
	{ "ip_rcv_finish", UD_LOC_IP_RCV },
	{ "ip6_mc_input", UD_LOC_IP_RCV },
	/* 7.2 folds __udp{4,6}_lib_rcv into these (Debian sid's kallsyms) */
	{ "udp_rcv", UD_LOC_UDP_RCV },
	{ "udpv6_rcv", UD_LOC_UDP_RCV },
};

const int model__nsite_syms = ARRAY_SIZE(model__site_syms);

/*
 * The ranges' names, looked up ahead in one short read of /proc/kallsyms
 * (they are the kernel's own, found before its end). The sites' are not:
 * some are in no kernel (each kernel has a few of them), and some in
 * modules, past the point where the file is in address order; a name
 * not found there loads the whole table, which naming drop locations
 * needs anyway.
 */
static int prefetch_classifier_syms(struct ksyms *ks)
{
	const char *names[UD_RANGE_MAX];
	int n = 0;

	for (int r = 0; r < UD_RANGE_MAX; r++)
		if (model__range_syms[r])
			names[n++] = model__range_syms[r];
	return ksyms__prefetch(ks, NULL, names, n);
}

void model__load_syms(struct model *m)
{
	/* without symbols locations print as addresses: not fatal */
	if (prefetch_classifier_syms(&m->ksyms))
		pr_warn("cannot read /proc/kallsyms: drop locations stay addresses\n");
}

int model__init(struct model *m, const struct model_opts *o)
{
	int err;

	memset(m, 0, sizeof(*m));
	m->opts = *o;
	memset(m->cause_cache, -1, sizeof(m->cause_cache));
	err = model__no_drop_reasons() ? -ENOENT : reasons__load(&m->reasons, NULL);
	if (err == -ENOENT) {
		/* no enum skb_drop_reason: causes from the drop locations */
		err = reasons__load_sites(&m->reasons);
		m->sites = !err;
	} else if (!err) {
		/* and where the kernel says NOT_SPECIFIED, from the site */
		m->site_base = reasons__site_base(&m->reasons);
		err = reasons__add_sites(&m->reasons, m->site_base);
	}
	if (err)
		return err;
	if (netns__scan(&m->nt) || socktab__init(&m->st) ||
	    htab__init(&m->known, sizeof(uint64_t), sizeof(struct sock_info)) ||
	    sockid__init(&m->inode2cookie) ||
	    windows__init(&m->win) ||
	    htab__init(&m->kowners, sizeof(uint32_t), sizeof(struct kowner_list)) ||
	    htab__init(&m->flow_attr, sizeof(struct ud_key), sizeof(struct flow_attr)) ||
	    htab__init(&m->by_port, sizeof(struct port_key), sizeof(struct port_socks)) ||
	    htab__init(&m->local_addrs, sizeof(uint32_t), sizeof(struct local_addrs)) ||
	    rows__init(&m->rows) ||
	    htab__init(&m->pid_inodes, sizeof(uint32_t), 1) ||
	    htab__init(&m->rx, sizeof(uint64_t), sizeof(struct ud_rx)) ||
	    htab__init(&m->rx_base, sizeof(uint64_t), sizeof(struct ud_rx)) ||
	    htab__init(&m->rx_sock, sizeof(uint64_t), sizeof(struct rx_sock)) ||
	    htab__init(&m->dumped, sizeof(uint32_t), sizeof(uint64_t)) ||
	    htab__init(&m->unknown, sizeof(uint64_t), 1) ||
	    htab__init(&m->pod_of, sizeof(uint64_t), sizeof(struct model_pod)))
		return -ENOMEM;
	/* nothing to forget for a while */
	m->start_ns = m->last_ns = m->nt_ns = m->forget_ns = now_ns();
	/* how long a closed socket keeps a row of its own (tests shorten it) */
	const char *fa = getenv("UDPDROP_FOLD_AFTER_S");
	uint64_t secs;

	m->fold_after_ns = MODEL_FOLD_AFTER_NS;
	if (fa && !parse_u64(fa, 1, 86400, &secs)) {
		m->fold_after_ns = secs * 1000000000ull;
	} else if (fa) {
		char shown[64];

		snprintf(shown, sizeof(shown), "%s", fa);
		str_printable(shown);
		pr_warn("ignoring UDPDROP_FOLD_AFTER_S='%s': give whole seconds, 1 to 86400 (120 is used)\n",
			shown);
	}
	const char *cm = getenv("UDPDROP_CLOSED_ROWS_MAX");

	m->closed_rows_max = MODEL_CLOSED_ROWS_MAX;
	if (cm && !parse_u64(cm, 1, 1u << 24, &secs)) {
		m->closed_rows_max = (uint32_t)secs;
	} else if (cm) {
		char shown[64];

		snprintf(shown, sizeof(shown), "%s", cm);
		str_printable(shown);
		pr_warn("ignoring UDPDROP_CLOSED_ROWS_MAX='%s': give a count, 1 to 16777216 (%d is used)\n",
			shown, MODEL_CLOSED_ROWS_MAX);
	}
	m->nst_netns = -1;
	m->start_wall = wall_time();
	return 0;
}

void model__free(struct model *m)
{
	pr_debug("socket table: %llu full dumps, %llu port dumps, %llu exact requests (%llu not answered by their socket)\n",
		 (unsigned long long)m->sock_stats.full, (unsigned long long)m->sock_stats.ports,
		 (unsigned long long)m->sock_stats.exact,
		 (unsigned long long)m->sock_stats.exact_missed);
	reasons__free(&m->reasons);
	ksyms__free(&m->ksyms);
	netns__free(&m->nt);
	socktab__free(&m->st);
	htab__free(&m->known);
	htab__free(&m->inode2cookie);
	windows__free(&m->win);
	htab__free(&m->flow_attr);
	htab__free(&m->kowners);
	htab__free(&m->by_port);
	htab__free(&m->local_addrs);
	rows__free(&m->rows);
	htab__free(&m->pid_inodes);
	htab__free(&m->rx);
	htab__free(&m->rx_base);
	htab__free(&m->rx_sock);
	htab__free(&m->dumped);
	htab__free(&m->pod_of);
	htab__free(&m->unknown);
	free(m->counters);
	free(m->view_sockets);
	free(m->view_flows);
	free(m->op_rows);
	memset(m, 0, sizeof(*m));
}

bool model__no_drop_reasons(void)
{
	const char *v = getenv("UDPDROP_NO_DROP_REASONS");

	return v && !strcmp(v, "1");
}

const char *model__reason_name(struct model *m, uint32_t reason, char *buf,
			       int len)
{
	return reasons__name(&m->reasons, reason, buf, len);
}

static uint64_t win_join(void *m, uint64_t id)
{
	return sockid__row(&((struct model *)m)->inode2cookie, id);
}

int model__update_windows(struct model *m, const struct tracer_win *w, size_t n,
			  uint32_t before)
{
	int err = 0;

	for (size_t i = 0; !err && i < n; i++) {
		uint64_t id = sockid__of_key(&w[i].key);

		if (!id)
			continue;
		err = windows__add(&m->win, sockid__row(&m->inode2cookie, id),
				   w[i].key.flags & UD_KEY_DELIVERED
					   ? WIN_DELIVERED
					   : (int)model__cause(m, w[i].key.reason, w[i].key.flags),
				   w[i].win, w[i].datagrams);
	}
	if (!err)
		err = windows__fold(&m->win, before);
	/* a socket a dump has named since: its windows by inode are its cookie's */
	if (!err)
		err = windows__rejoin(&m->win, win_join, m);
	return err;
}

const struct win_agg *model__windows(const struct model *m, const struct row *r, enum cause c)
{
	if (r->key.kind != ROW_SOCKET || !r->key.cookie)
		return NULL;
	return windows__find(&m->win, r->key.cookie, c);
}

enum cause model__cause(struct model *m, uint32_t reason, uint32_t flags)
{
	bool cacheable = reason < sizeof(m->cause_cache) &&
			 !(flags & (UD_KEY_FAIL_RCVBUF | UD_KEY_FAIL_MEM | UD_KEY_CLOSE));
	char buf[32];
	enum cause c;

	if (cacheable && m->cause_cache[reason] >= 0)
		return m->cause_cache[reason];
	c = cause__classify(reasons__name(&m->reasons, reason, buf, sizeof(buf)),
			    flags);
	if (cacheable)
		m->cause_cache[reason] = c;
	return c;
}

const struct pod_names *model__pod(const struct model *m, const struct row *r)
{
	const struct model_pod *p = r->key.kind == ROW_SOCKET
				    ? htab__find(&m->pod_of, &r->key.cookie) : NULL;

	return p && p->found ? &p->names : NULL;
}

bool model__netns_named(struct model *m, uint32_t netns)
{
	const struct netns_info *ni = netns__find(&m->nt, netns);

	return ni && ni->name[0];
}

const char *model__netns_label(struct model *m, uint32_t netns, char *buf,
			       int len)
{
	const struct netns_info *ni = netns__find(&m->nt, netns);

	if (ni && ni->name[0]) {
		/* a name from /run/netns may hold anything: printable */
		snprintf(buf, len, "%s", ni->name);
		str_printable(buf);
		return buf;
	}
	snprintf(buf, len, "%u", netns);
	return buf;
}
