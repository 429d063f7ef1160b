// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One JSON vocabulary: see json_vocab.h. */
#include <stdio.h>
#include <string.h>
#include "json_vocab.h"
#include "reconcile.h"

static void key_str(struct json *j, const char *k, const char *v)
{
	json_key(j, k);
	json_str(j, v);
}

static void key_u64(struct json *j, const char *k, bool have, uint64_t v)
{
	json_key(j, k);
	if (have)
		json_u64(j, v);
	else
		json_null(j);
}

void vocab__cause_list(struct json *j, const uint64_t *drops, const uint64_t *skbs)
{
	json_key(j, "cause_list");
	json_arr_begin(j);
	for (int c = 0; c < CAUSE_MAX; c++) {
		if (!drops[c] && !(skbs && skbs[c]))
			continue;
		json_obj_begin(j);
		key_str(j, "cause", cause__name(c));
		key_u64(j, "drops", true, drops[c]);
		key_u64(j, "skb_events", skbs != NULL, skbs ? skbs[c] : 0);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/*
 * The map every view's rows had: {cause: datagrams}, causes with
 * datagrams only (a cause of fragments alone, 0 datagrams, is in
 * cause_list with its skb events).
 */
static void cause_map(struct json *j, const uint64_t *drops)
{
	json_key(j, "causes");
	json_obj_begin(j);
	for (int c = 0; c < CAUSE_MAX; c++)
		if (drops[c])
			key_u64(j, cause__name(c), true, drops[c]);
	json_obj_end(j);
}

/* a name the kubelet's logs did not give is null, never "" */
static void key_name(struct json *j, const char *k, const char *v)
{
	key_str(j, k, v && v[0] ? v : NULL);
}

void vocab__pod(struct json *j, const struct pod_names *p)
{
	key_name(j, "k8s_namespace", p ? p->ns : NULL);
	key_name(j, "k8s_pod", p ? p->pod : NULL);
	key_name(j, "k8s_container", p ? p->container : NULL);
	key_name(j, "k8s_pod_uid", p ? p->uid : NULL);
}

void vocab__socket_begin(struct json *j, const struct vocab_socket *s)
{
	json_obj_begin(j);
	key_str(j, "proto", s->proto);
	key_str(j, "family", s->family);
	key_str(j, "local", s->local);
	key_str(j, "remote", s->remote);
	key_u64(j, "netns", true, s->netns);
	key_str(j, "netns_name", s->netns_name);
	/* a socket known by its inode alone (no dump named its cookie):
	 * cookie null, its inode (sockid.h) */
	key_u64(j, "cookie", s->have_cookie, s->cookie);
	key_u64(j, "inode", s->have_inode, s->inode);
	json_key(j, "pid");
	if (s->npids)
		json_i64(j, s->pids[0]);
	else
		json_null(j);
	key_str(j, "comm", s->npids ? s->comm : NULL);
	key_str(j, "kernel_owner", !s->npids ? s->kernel_owner : NULL);
	vocab__pod(j, s->pod);
	json_key(j, "nprocs");
	json_i64(j, s->npids);
	json_key(j, "pids");
	json_arr_begin(j);
	for (int i = 0; i < s->npids; i++)
		json_i64(j, s->pids[i]);
	json_arr_end(j);
	json_key(j, "alive");
	if (s->alive >= 0)
		json_bool(j, s->alive);
	else
		json_null(j);
	json_key(j, "attribution");
	if (s->attribution) {
		json_arr_begin(j);
		for (int i = 0; i < s->nattribution; i++)
			json_str(j, s->attribution[i]);
		json_arr_end(j);
	} else {
		json_null(j);
	}
	key_u64(j, "rcvbuf", s->have_mem, s->rcvbuf);
	key_u64(j, "queued", s->have_mem, s->queued);
	key_u64(j, "sk_drops", s->have_sk_drops, s->sk_drops);
	key_u64(j, "sk_drops_since_start", s->have_sk_drops, s->sk_drops_since_start);
	/* closed: the kernel's counter went with it, these are its last
	 * read (a dump before the close), no match for the drops expected */
	json_key(j, "sk_drops_stale");
	if (s->have_sk_drops)
		json_bool(j, s->sk_drops_stale);
	else
		json_null(j);
	key_u64(j, "drops", true, s->drops);
	key_u64(j, "skb_events", true, s->skbs);
	/* the kernel counts such an skb once (sk_drops, UdpRcvbufErrors) */
	key_u64(j, "gro_datagrams", true, s->gro_datagrams);
	key_u64(j, "gro_skbs", true, s->gro_skbs);
	key_u64(j, "bytes", true, s->bytes);
	json_key(j, "drops_per_s");
	json_double(j, s->drops_per_s, 1);
	key_str(j, "cause", s->cause < CAUSE_MAX ? cause__name(s->cause) : NULL);
	cause_map(j, s->cause_drops);
	vocab__cause_list(j, s->cause_drops, s->cause_skbs);
}

void vocab__socket_end(struct json *j, const struct vocab_socket *s)
{
	key_u64(j, "rx", s->have_rx, s->rx);
	json_key(j, "rx_per_s");
	if (s->have_rx)
		json_double(j, s->rx_per_s, 1);
	else
		json_null(j);
	key_u64(j, "queue_peak", s->have_queue_peak, s->queue_peak);
}

void vocab__flow_begin(struct json *j, const struct vocab_flow *f)
{
	uint64_t one[CAUSE_MAX] = { 0 }, one_skbs[CAUSE_MAX] = { 0 };

	json_obj_begin(j);
	key_str(j, "cause", cause__name(f->cause));
	key_u64(j, "netns", true, f->netns);
	key_str(j, "netns_name", f->netns_name);
	key_str(j, "proto", f->proto);
	key_str(j, "family", f->family);
	key_str(j, "flow", f->flow);
	key_str(j, "why", f->why);
	key_str(j, "saddr", f->saddr);
	key_str(j, "daddr", f->daddr);
	key_u64(j, "dport", true, f->dport);
	key_u64(j, "drops", true, f->drops);
	key_u64(j, "skb_events", true, f->skbs);
	key_u64(j, "gro_datagrams", true, f->gro_datagrams);
	key_u64(j, "gro_skbs", true, f->gro_skbs);
	json_key(j, "drops_per_s");
	json_double(j, f->drops_per_s, 1);
	if (!f->cause_drops && f->cause < CAUSE_MAX) {
		/* a flow row is one cause's */
		one[f->cause] = f->drops;
		one_skbs[f->cause] = f->skbs;
	}
	vocab__cause_list(j, f->cause_drops ? f->cause_drops : one,
			  f->cause_drops ? f->cause_skbs : one_skbs);
}

void vocab__reason(struct json *j, uint32_t reason, const char *name,
		   enum cause cause, uint64_t drops, uint64_t skbs)
{
	json_obj_begin(j);
	key_u64(j, "reason", true, reason);
	key_str(j, "name", name);
	key_str(j, "cause", cause < CAUSE_MAX ? cause__name(cause) : NULL);
	key_u64(j, "drops", true, drops);
	key_u64(j, "skb_events", true, skbs);
	json_obj_end(j);
}

void vocab__location(struct json *j, uint64_t addr, const char *symbol,
		     uint64_t drops, uint64_t skbs)
{
	char buf[24];

	json_obj_begin(j);
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)addr);
	key_str(j, "addr", buf);
	key_str(j, "symbol", symbol);
	key_u64(j, "drops", true, drops);
	key_u64(j, "skb_events", true, skbs);
	json_obj_end(j);
}

void vocab__totals_begin(struct json *j, const struct vocab_totals *t)
{
	json_obj_begin(j);
	key_u64(j, "drops", true, t->drops);
	key_u64(j, "attributed", true, t->attributed);
	key_u64(j, "skb_events", true, t->skbs);
	/* runs the kernel skipped, their drops in no count */
	key_u64(j, "missed", true, t->missed);
	json_key(j, "drops_per_s");
	json_double(j, t->drops_per_s, 1);
	vocab__cause_list(j, t->cause_drops, t->cause_skbs);
}

bool vocab__reconcile_match(const struct vocab_reconcile *r)
{
	uint64_t d = r->udpdrop > r->kernel ? r->udpdrop - r->kernel : r->kernel - r->udpdrop;

	return r->have_kernel && d <= (r->have_spread ? r->spread : 0);
}

void vocab__reconcile(struct json *j, const struct vocab_reconcile *r)
{
	char buf[64];
	const char *p = r->counters ? r->counters : "";
	size_t n = strcspn(p, "+");

	json_obj_begin(j);
	key_u64(j, "netns", true, r->netns);
	key_str(j, "netns_name", r->netns_name);
	key_str(j, "cause", cause__name(r->cause));
	/* the first counter summed (top's key); all of them in counters */
	snprintf(buf, sizeof(buf), "%.*s", (int)n, p);
	key_str(j, "counter", n ? buf : NULL);
	json_key(j, "counters");
	json_arr_begin(j);
	while (*p) {
		n = strcspn(p, "+");
		snprintf(buf, sizeof(buf), "%.*s", (int)n, p);
		json_str(j, buf);
		p += n;
		if (*p)
			p++;
	}
	json_arr_end(j);
	key_u64(j, "kernel", r->have_kernel, r->kernel);
	key_u64(j, "udpdrop", true, r->udpdrop);
	key_u64(j, "udpdrop_datagrams", true, r->udpdrop_datagrams);
	/* the kernel's side is exact to within this (reconcile.h) */
	key_u64(j, "kernel_spread", r->have_spread, r->spread);
	json_key(j, "match");
	json_bool(j, vocab__reconcile_match(r));
	key_str(j, "status", !r->have_kernel ? "no_counter"
			     : vocab__reconcile_match(r) ? "match" : "differ");
	json_key(j, "diff");
	json_i64(j, r->have_kernel ? reconcile__diff(r->udpdrop, r->kernel) : 0);
	json_obj_end(j);
}

void vocab__mib_deltas(struct json *j, uint32_t netns, const struct mib *base,
		       const struct mib *cur)
{
	char ino[16];

	snprintf(ino, sizeof(ino), "%u", netns);
	json_key(j, ino);
	json_obj_begin(j);
	for (int k = 0; k < MIB_MAX; k++)
		if (base->present[k] && cur->present[k])
			key_u64(j, mib__name(k), true, mib__diff(base, cur, k));
	json_obj_end(j);
}
