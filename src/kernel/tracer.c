// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "sockid.h"
#include "tracer.h"
#include "util.h"
#include "udpdrop.skel.h"

/* A socket bucket on one CPU: where a drop window was taken last. */
struct win_cpu_key {
	struct ud_key key;
	uint32_t cpu, pad;
};

static int win_record(void *ctx, void *data, size_t len);

/* A socket's deliveries window as the ring names it (rx_win_close). */
static struct ud_key rx_win_key(uint64_t id)
{
	struct ud_key k = { .cookie = id & ~UD_RX_INODE,
			    .flags = UD_KEY_SOCK | UD_KEY_DELIVERED |
				     (id & UD_RX_INODE ? UD_KEY_INODE : 0) };

	return k;
}

static void win_open(struct tracer *t, const struct ud_key *k, uint32_t cpu, uint64_t word);

/* A flow's counts when they last moved, and when that was. */
struct flow_seen {
	struct ud_val v;
	uint64_t since_ns;
};

#define DEFAULT_MAP_ENTRIES 16384
/* 16 MiB: ~130,000 events of 128 B, a fraction of a second of a storm
 * while the writer compresses a block */
#define DEFAULT_RING_BYTES (16u << 20)

uint64_t tracer__map_bytes(uint32_t entries, int ncpus)
{
	/* per entry: key + ~72 B of element head, the value 8-aligned per CPU */
	uint64_t bucket = 72 + sizeof(struct ud_key) +
			  (uint64_t)ncpus * ((sizeof(struct ud_val) + 7) & ~7ul);
	uint64_t rx = 72 + sizeof(uint64_t) +
		      (uint64_t)ncpus * ((sizeof(struct ud_rx) + 7) & ~7ul);

	return (uint64_t)entries * (2 * bucket + rx);
}

const char *attach_mode__name(enum attach_mode m)
{
	switch (m) {
	case ATTACH_TP_BTF: return "tp_btf";
	case ATTACH_RAW_TP: return "raw_tp";
	case ATTACH_TRACEPOINT: return "tracepoint";
	default: return "auto";
	}
}

int attach_mode__parse(const char *s, enum attach_mode *m)
{
	static const enum attach_mode all[] = { ATTACH_AUTO, ATTACH_TP_BTF,
						ATTACH_RAW_TP, ATTACH_TRACEPOINT };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(s, attach_mode__name(all[i]))) {
			*m = all[i];
			return 0;
		}
	return -EINVAL;
}

static bool struct_has_member(const struct btf *btf, const char *st, const char *member)
{
	int id = btf__find_by_name_kind(btf, st, BTF_KIND_STRUCT);

	if (id <= 0)
		return false;
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), member))
			return true;
	return false;
}

void tracer__features(struct kernel_features *f)
{
	struct utsname un;
	struct btf *btf;

	memset(f, 0, sizeof(*f));
	if (!uname(&un))
		snprintf(f->release, sizeof(f->release), "%s", un.release);
	f->tracefs = !access("/sys/kernel/tracing/events/skb/kfree_skb", F_OK) ||
		     !access("/sys/kernel/debug/tracing/events/skb/kfree_skb", F_OK);
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return;
	f->btf = true;
	f->drop_reasons = btf__find_by_name_kind(btf, "skb_drop_reason", BTF_KIND_ENUM) > 0;
	f->rx_sk = struct_has_member(btf, "trace_event_raw_kfree_skb", "rx_sk");
	f->sk_data_ready = btf__find_by_name_kind(btf, "btf_trace_sk_data_ready",
						  BTF_KIND_TYPEDEF) > 0;
	f->fail_tp = btf__find_by_name_kind(btf, "btf_trace_udp_fail_queue_rcv_skb",
					    BTF_KIND_TYPEDEF) > 0;
	f->fail_tp_skb = struct_has_member(btf, "trace_event_raw_udp_fail_queue_rcv_skb",
					   "sport");
	btf__free(btf);
}

static const char *yes(bool b)
{
	return b ? "yes" : "no";
}

void tracer__features_line(const struct kernel_features *f, char *buf, size_t len)
{
	snprintf(buf, len,
		 "kernel %s: BTF %s, drop reasons (5.17+) %s, kfree_skb rx_sk (6.11+) %s, sock:sk_data_ready (6.6+) %s, udp_fail_queue_rcv_skb %s%s, tracefs %s",
		 f->release, yes(f->btf), yes(f->drop_reasons), yes(f->rx_sk),
		 yes(f->sk_data_ready), yes(f->fail_tp),
		 f->fail_tp_skb ? " (with skb, 6.10+)" : f->fail_tp ? " (without skb)" : "",
		 yes(f->tracefs));
}

int tracer__kernel_too_old(char *msg, size_t len)
{
	const char *rel = getenv("UDPDROP_KERNEL_RELEASE"); /* tests only */
	struct utsname un;
	unsigned int major = 0, minor = 0;

	if (!rel || !*rel)
		rel = uname(&un) ? "" : un.release;
	if (sscanf(rel, "%u.%u", &major, &minor) != 2)
		return 0; /* an odd release string: let the features decide */
	if (major > TRACER_MIN_MAJOR ||
	    (major == TRACER_MIN_MAJOR && minor >= TRACER_MIN_MINOR))
		return 0;
	char shown[80];

	snprintf(shown, sizeof(shown), "%s", rel);
	str_printable(shown);
	snprintf(msg, len,
		 "Linux %d.%d or later needed, this is %s: older kernels lack the drop sites and BPF features udpdrop relies on (kfree_skb's location as udpdrop reads it, BTF for CO-RE)",
		 TRACER_MIN_MAJOR, TRACER_MIN_MINOR, shown);
	return -ENOTSUP;
}

/* The member of struct (or union) type id named name, or NULL. */
static const struct btf_member *btf_member_named(const struct btf *btf, int id,
						 const char *name)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m;

	if (!t || (!btf_is_struct(t) && !btf_is_union(t)))
		return NULL;
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), name))
			return &m[i];
	return NULL;
}

/* Does this kernel's BTF have struct st with a member named member? */
static bool kernel_struct_has(const char *st, const char *member)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool found;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, st, BTF_KIND_STRUCT);
	found = id > 0 && btf_member_named(btf, id, member);
	btf__free(btf);
	return found;
}

/*
 * Does kmem:kmem_cache_free pass the cache (6.1+: call_site, ptr, s)?
 * 5.12 to 6.0 pass its name instead, 5.10 neither: then the kmem_cache_free
 * program cannot check that a freed object went back to its proto's slab.
 */
static bool kernel_kmem_free_names_cache(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t;
	const struct btf_param *p;
	bool found = false;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "btf_trace_kmem_cache_free", BTF_KIND_TYPEDEF);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	/* typedef -> pointer -> func proto (void *, call_site, ptr, s) */
	t = t ? btf__type_by_id(btf, t->type) : NULL;
	t = t && btf_is_ptr(t) ? btf__type_by_id(btf, t->type) : NULL;
	if (t && btf_is_func_proto(t) && btf_vlen(t) == 4) {
		p = btf_params(t);
		t = btf__type_by_id(btf, p[3].type);
		t = t && btf_is_ptr(t) ? btf__type_by_id(btf, t->type) : NULL;
		while (t && (btf_is_const(t) || btf_is_volatile(t)))
			t = btf__type_by_id(btf, t->type);
		found = t && btf_is_struct(t) &&
			!strcmp(btf__name_by_offset(btf, t->name_off), "kmem_cache");
	}
	btf__free(btf);
	return found;
}

/* Does this kernel's kfree_skb tracepoint carry rx_sk (6.11+)? */
static bool kernel_has_rx_sk(void)
{
	return kernel_struct_has("trace_event_raw_kfree_skb", "rx_sk");
}

/*
 * Does udp:udp_fail_queue_rcv_skb name its skb (6.10+, with the sport
 * field)? Only then does it fire BEFORE that skb's kfree_skb: earlier
 * kernels fire it after kfree_skb_reason() (net/ipv4/udp.c
 * __udp_queue_rcv_skb), so its socket belongs to the drop just counted,
 * and handing it to the next kfree_skb on the CPU, whatever skb that is
 * (an ICMPv6 router solicitation, another socket's drop), miscounts.
 */
static bool kernel_fail_tp_names_skb(void)
{
	return kernel_struct_has("trace_event_raw_udp_fail_queue_rcv_skb", "sport");
}

/*
 * Does this kernel count the classic tracepoint runs it skips? Such a
 * program runs through trace_call_bpf(), which skips it while the CPU's
 * bpf_prog_active is raised: another kprobe or tracepoint program
 * running there, or any process's BPF map syscall (bpf_disable_
 * instrumentation), preempted or interrupted by the softirq that drops.
 * Since 6.7 ("bpf: Count missed stats in trace_call_bpf") each skip
 * counts in the program's recursion_misses, which udpdrop reports as
 * missed; before, the drop is gone without a trace. The same series added
 * bpf_link_info.kprobe_multi.missed, which BTF shows.
 */
static bool kernel_counts_tracepoint_skips(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_member *u, *km;
	const struct btf_type *t;
	bool found = false;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "bpf_link_info", BTF_KIND_STRUCT);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	/* the anonymous union of the per-link-type structs */
	for (int i = 0; t && !found && i < btf_vlen(t); i++) {
		u = &btf_members(t)[i];
		if (u->name_off)
			continue;
		km = btf_member_named(btf, u->type, "kprobe_multi");
		found = km && btf_member_named(btf, km->type, "missed");
	}
	btf__free(btf);
	return found;
}

#define TRACEPOINT_SKIPS_UNCOUNTED \
	"this kernel skips classic tracepoint programs without counting the skips " \
	"(trace_call_bpf's recursion_misses, Linux 6.7+): drops would be lost silently"

/* Does this kernel have the sock:sk_data_ready tracepoint (6.6+)? */
static bool kernel_has_sk_data_ready(void)
{
	struct btf *btf;
	bool found;

	/* tests: act as a kernel before 6.6 would, on any kernel */
	if (getenv("UDPDROP_NO_SK_DATA_READY"))
		return false;
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return false;
	found = btf__find_by_name_kind(btf, "btf_trace_sk_data_ready",
				       BTF_KIND_TYPEDEF) > 0;
	btf__free(btf);
	return found;
}

/*
 * Does the verifier take BPF atomics (cmpxchg, xchg: 5.12+)? A kernel
 * before them refuses a program that holds one even where it never runs.
 */
static bool kernel_has_atomics(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_STX | BPF_DW | BPF_MEM, .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_0, .off = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 0 },
		{ .code = BPF_STX | BPF_DW | BPF_ATOMIC, .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_1, .off = -8, .imm = BPF_CMPXCHG },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Load and attach the programs of one variant; with_rx: the deliveries' too. */
static int try_mode(struct tracer *t, const struct tracer_opts *o,
		    enum attach_mode mode, bool with_rx, bool with_close,
		    struct tracer_error *e)
{
	struct udpdrop_bpf *skel;
	struct bpf_program *kfree, *rx, *fail_prog, *close_prog;
	/*
	 * Without rx_sk, the fail handover names the socket: from 6.10 it
	 * fires before the free (see kernel_fail_tp_names_skb); before, after
	 * it, and the drop waits for it in the programs (pend_fail).
	 */
	bool need_fail = !t->rx_sk;
	int err;

	skel = udpdrop_bpf__open();
	if (!skel) {
		err = -errno;
		snprintf(e->msg, sizeof(e->msg), "cannot open the BPF object: %s",
			 strerror(-err));
		return err;
	}
	skel->rodata->filter_netns = o->filter_netns;
	skel->rodata->filter_port = o->filter_port;
	skel->rodata->use_rx_sk = t->rx_sk;
	skel->rodata->close_owner = with_close;
	skel->rodata->close_cache_arg = t->close_cache_arg;
	for (int r = 0; r < UD_RANGE_MAX; r++) {
		skel->rodata->range_start[r] = o->range_start[r];
		skel->rodata->range_end[r] = o->range_end[r];
	}
	skel->rodata->derive_sites = o->derive_sites;
	skel->rodata->pend_fail = need_fail && mode != ATTACH_TRACEPOINT && !t->fail_names_skb;
	skel->rodata->site_base = o->derive_sites ? 0 : o->site_base;
	for (int r = 0; r < UD_SITE_RANGES; r++) {
		skel->rodata->site_start[r] = o->site_start[r];
		skel->rodata->site_end[r] = o->site_end[r];
		skel->rodata->site_loc[r] = o->site_loc[r];
	}
	if (o->frag_window_s)
		skel->rodata->frag_window_ns = o->frag_window_s * 1000000000ull;
	skel->rodata->events_on = o->events;
	skel->rodata->cap_len = o->cap_len < UD_CAP_MAX ? o->cap_len : UD_CAP_MAX;
	/* the ring is a page when unused: top and the others pay no memory */
	uint32_t ring = !o->events ? (uint32_t)getpagesize()
			: o->ring_bytes ? o->ring_bytes : DEFAULT_RING_BYTES;

	bpf_map__set_max_entries(skel->maps.events, ring);
	/* nothing is shed without events: one slot, not 1,024 per CPU */
	bpf_map__set_max_entries(skel->maps.shed, o->events ? UD_SHED_SLOTS : 1);
	/* a quarter full: the reader wakes with room to spare */
	skel->rodata->wakeup_bytes = ring / 4;
	bpf_map__set_max_entries(skel->maps.drops,
				 o->map_entries ?: DEFAULT_MAP_ENTRIES);
	bpf_map__set_max_entries(skel->maps.flows,
				 o->map_entries ?: DEFAULT_MAP_ENTRIES);
	bpf_map__set_max_entries(skel->maps.slots, t->ncpus * UD_SLOTS_PER_CPU);
	bpf_map__set_max_entries(skel->maps.rx, o->map_entries ?: DEFAULT_MAP_ENTRIES);

	if (mode == ATTACH_TP_BTF && !t->atomics) {
		err = -EOPNOTSUPP;
		snprintf(e->msg, sizeof(e->msg),
			 "tp_btf needs BPF atomics (5.12+), which this kernel lacks");
		goto fail;
	}
	/* without atomics, the variants that leave the slot table alone */
	kfree = mode == ATTACH_TP_BTF ? skel->progs.udpdrop_kfree_btf
		: mode == ATTACH_RAW_TP ? (t->atomics ? skel->progs.udpdrop_kfree_raw
						      : skel->progs.udpdrop_kfree_raw_noatomic)
		: t->atomics ? skel->progs.udpdrop_kfree_tp
			     : skel->progs.udpdrop_kfree_tp_noatomic;
	fail_prog = t->atomics ? skel->progs.udpdrop_fail_raw
			       : skel->progs.udpdrop_fail_raw_noatomic;
	bpf_program__set_autoload(skel->progs.udpdrop_kfree_btf, false);
	bpf_program__set_autoload(skel->progs.udpdrop_kfree_raw, false);
	bpf_program__set_autoload(skel->progs.udpdrop_kfree_raw_noatomic, false);
	bpf_program__set_autoload(skel->progs.udpdrop_kfree_tp, false);
	bpf_program__set_autoload(skel->progs.udpdrop_kfree_tp_noatomic, false);
	bpf_program__set_autoload(skel->progs.udpdrop_fail_raw, false);
	bpf_program__set_autoload(skel->progs.udpdrop_fail_raw_noatomic, false);
	bpf_program__set_autoload(kfree, true);
	/*
	 * The classic tracepoint's record has no socket pointer, so the fail
	 * handover (raw_tp) only serves the two BTF-era variants.
	 */
	bpf_program__set_autoload(fail_prog, need_fail && mode != ATTACH_TRACEPOINT);
	/* deliveries: typed where the drops are, else the raw tracepoint
	 * (the classic one's record has no socket to name) */
	rx = mode == ATTACH_TP_BTF ? skel->progs.udpdrop_rx_btf
				   : skel->progs.udpdrop_rx_raw;
	bpf_program__set_autoload(skel->progs.udpdrop_rx_btf, false);
	bpf_program__set_autoload(skel->progs.udpdrop_rx_raw, false);
	bpf_program__set_autoload(rx, with_rx);
	/* the end of a closing socket's purge: the raw tracepoint's program
	 * with tp_btf too (see udpdrop_close_raw) */
	close_prog = mode == ATTACH_TRACEPOINT ? skel->progs.udpdrop_close_tp
					       : skel->progs.udpdrop_close_raw;
	bpf_program__set_autoload(skel->progs.udpdrop_close_raw, false);
	bpf_program__set_autoload(skel->progs.udpdrop_close_tp, false);
	bpf_program__set_autoload(close_prog, with_close);

	err = udpdrop_bpf__load(skel);
	if (err) {
		snprintf(e->msg, sizeof(e->msg), "cannot load the %s program: %s",
			 attach_mode__name(mode), strerror(-err));
		goto fail;
	}
	/* loaded (so a refusal shows now), attached later: tracer__arm_close */
	t->close_owner = with_close;
	t->close_prog = with_close ? close_prog : NULL;
	t->kfree_link = bpf_program__attach(kfree);
	if (!t->kfree_link) {
		err = -errno;
		snprintf(e->msg, sizeof(e->msg), "cannot attach to skb:kfree_skb (%s): %s%s",
			 attach_mode__name(mode), strerror(-err),
			 mode == ATTACH_TRACEPOINT && access("/sys/kernel/tracing/events", F_OK)
				 ? " (tracefs is not mounted at /sys/kernel/tracing)" : "");
		goto fail;
	}
	if (need_fail && mode != ATTACH_TRACEPOINT) {
		t->fail_link = bpf_program__attach(fail_prog);
		if (!t->fail_link) {
			err = -errno;
			snprintf(e->msg, sizeof(e->msg),
				 "cannot attach to udp:udp_fail_queue_rcv_skb: %s",
				 strerror(-err));
			goto fail;
		}
	}
	if (with_rx) {
		t->rx_link = bpf_program__attach(rx);
		if (!t->rx_link)
			pr_info("cannot attach to sock:sk_data_ready (%s): deliveries not counted\n",
				strerror(errno));
	}
	t->rx = t->rx_link != NULL;
	/* the slot table is read in place: no syscall per interval */
	t->nslots = bpf_map__max_entries(skel->maps.slots);
	t->slots_len = (size_t)t->nslots * sizeof(struct ud_slot);
	t->slots_len = (t->slots_len + getpagesize() - 1) & ~((size_t)getpagesize() - 1);
	/* writable: slots of closed sockets are given back (tracer__retire) */
	t->slots = mmap(NULL, t->slots_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			bpf_map__fd(skel->maps.slots), 0);
	if (t->slots == MAP_FAILED) {
		err = -errno;
		t->slots = NULL;
		snprintf(e->msg, sizeof(e->msg), "cannot map the slot table: %s",
			 strerror(-err));
		goto fail;
	}
	t->skel = skel;
	t->mode = mode;
	return 0;
fail:
	bpf_link__destroy(t->kfree_link);
	bpf_link__destroy(t->fail_link);
	bpf_link__destroy(t->rx_link);
	bpf_link__destroy(t->close_link);
	t->kfree_link = t->fail_link = t->rx_link = t->close_link = NULL;
	t->rx = t->close_owner = t->close_armed = false;
	t->close_prog = NULL;
	udpdrop_bpf__destroy(skel);
	return err;
}

/*
 * The deliveries' program is optional: when the variant loads only
 * without it (a verifier that refuses it), go on without.
 */
static int try_mode_rx(struct tracer *t, const struct tracer_opts *o,
		       enum attach_mode mode, bool with_rx, struct tracer_error *e)
{
	/*
	 * A purge is a socket's only where it is recognised as one (the
	 * destructor's range: UD_KEY_CLOSE). UDPDROP_NO_CLOSE_OWNER=1: by
	 * flow, as before (tests compare the two).
	 */
	bool with_close = o->range_end[UD_RANGE_UDP_DESTRUCT] &&
			  !getenv("UDPDROP_NO_CLOSE_OWNER");
	int err = try_mode(t, o, mode, with_rx, with_close, e);

	/* optional too: without it, purged queues go by their flow */
	if (err && with_close) {
		struct tracer_error close_err = *e;

		memset(e, 0, sizeof(*e));
		err = try_mode(t, o, mode, with_rx, false, e);
		if (!err)
			pr_info("closing sockets' purged queues matched by their flow: %s\n",
				close_err.msg);
	}
	if (err && with_rx) {
		struct tracer_error rx_err = *e;

		memset(e, 0, sizeof(*e));
		err = try_mode(t, o, mode, false, false, e);
		if (!err)
			pr_info("deliveries not counted: %s\n", rx_err.msg);
	}
	return err;
}

/*
 * Giving a slot back needs every program that may still be adding to it
 * to have finished: the programs run with preemption disabled (inside
 * the tracepoint), so an RCU grace period, which membarrier's GLOBAL
 * command waits for (synchronize_rcu), covers them.
 */
static bool slots_can_retire(void)
{
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	return cmds > 0 && (cmds & MEMBARRIER_CMD_GLOBAL);
}

static int rcu_grace_period(void)
{
	return syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) ? -errno : 0;
}

int tracer__open(struct tracer *t, const struct tracer_opts *o,
		 struct tracer_error *e)
{
	static const enum attach_mode order[] = { ATTACH_TP_BTF, ATTACH_RAW_TP,
						  ATTACH_TRACEPOINT };
	int err = -ENOENT;

	memset(t, 0, sizeof(*t));
	memset(e, 0, sizeof(*e));
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		e->code = -ENOENT;
		snprintf(e->msg, sizeof(e->msg),
			 "this kernel has no BTF (/sys/kernel/btf/vmlinux): udpdrop needs Linux %d.%d or later built with CONFIG_DEBUG_INFO_BTF=y",
			 TRACER_MIN_MAJOR, TRACER_MIN_MINOR);
		return e->code;
	}
	t->ncpus = libbpf_num_possible_cpus();
	if (t->ncpus <= 0) {
		e->code = t->ncpus ?: -EINVAL;
		snprintf(e->msg, sizeof(e->msg), "cannot count the possible CPUs");
		return e->code;
	}
	t->rx_sk = kernel_has_rx_sk() && !o->no_rx_sk && !o->derive_sites;
	t->fail_names_skb = kernel_fail_tp_names_skb();
	t->close_cache_arg = kernel_kmem_free_names_cache();
	t->atomics = kernel_has_atomics();
	if (!t->atomics)
		pr_info("no BPF atomics (kernels before 5.12): every drop is counted in the hash maps, not the per-CPU slot table\n");
	t->sites = o->derive_sites;
	bool want_rx = !o->no_rx && kernel_has_sk_data_ready();

	if (!o->no_rx && !want_rx)
		pr_info("no sock:sk_data_ready tracepoint (kernels before 6.6): deliveries not counted\n");
	bool tp_exact = kernel_counts_tracepoint_skips();

	if (o->mode == ATTACH_TRACEPOINT && !tp_exact) {
		err = -EOPNOTSUPP;
		snprintf(e->msg, sizeof(e->msg), "--attach tracepoint: %s; use tp_btf or raw_tp",
			 TRACEPOINT_SKIPS_UNCOUNTED);
	} else if (o->mode != ATTACH_AUTO) {
		err = try_mode_rx(t, o, o->mode, want_rx, e);
	} else {
		for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
			bool last = i == sizeof(order) / sizeof(order[0]) - 1;
			struct tracer_error probe_err = {};

			/* an expected failure on the way down is not an error */
			log__set_probing(!last);
			if (order[i] == ATTACH_TRACEPOINT && !tp_exact) {
				err = -EOPNOTSUPP;
				snprintf(probe_err.msg, sizeof(probe_err.msg), "tracepoint: %s",
					 TRACEPOINT_SKIPS_UNCOUNTED);
			} else {
				err = try_mode_rx(t, o, order[i], want_rx, &probe_err);
			}
			log__set_probing(false);
			if (!err)
				break;
			pr_info("%s unavailable (%s), trying the next variant\n",
				attach_mode__name(order[i]), probe_err.msg);
			/* every variant's reason, the best one's first */
			size_t used = strlen(e->msg);

			snprintf(e->msg + used, sizeof(e->msg) - used, "%s%s",
				 used ? "; " : "", probe_err.msg);
		}
	}
	if (!err && (htab__init(&t->retired, sizeof(struct ud_key), sizeof(struct ud_val)) ||
		     htab__init(&t->rx_retired, sizeof(uint64_t), sizeof(struct ud_rx)) ||
		     htab__init(&t->flows_seen, sizeof(struct ud_key), sizeof(struct flow_seen)) ||
		     htab__init(&t->win_done, sizeof(struct win_cpu_key), sizeof(uint32_t)))) {
		tracer__close(t);
		err = -ENOMEM;
		snprintf(e->msg, sizeof(e->msg), "out of memory");
	}
	if (!err) {
		t->win_rb = ring_buffer__new(bpf_map__fd(t->skel->maps.wins), win_record, t, NULL);
		if (!t->win_rb) {
			err = -errno;
			snprintf(e->msg, sizeof(e->msg), "cannot read the drop windows' ring: %s",
				 strerror(-err));
			tracer__close(t);
		}
	}
	if (err) {
		e->code = err;
		return err;
	}
	t->slots_retire = slots_can_retire();
	if (!t->slots_retire)
		pr_info("membarrier(MEMBARRIER_CMD_GLOBAL) unavailable (nohz_full?): slots of closed sockets stay taken, their drops go by the hash map\n");
	pr_info("attached to skb:kfree_skb via %s; causes from %s; receiving socket from %s; deliveries %s; closing sockets' queues %s\n",
		attach_mode__name(t->mode),
		t->sites ? "drop locations (no drop reasons)" : "drop reasons",
		t->rx_sk ? "rx_sk"
		: t->fail_link ? "udp_fail_queue_rcv_skb, else packet headers"
			       : "packet headers",
		t->rx ? "counted (sock:sk_data_ready)" : "not counted",
		t->close_owner ? "matched by their flow, named by the socket's free (kmem:kmem_cache_free) once a port is shared"
			       : "matched by their flow");
	return 0;
}

int tracer__arm_close(struct tracer *t)
{
	int err;

	if (!t->close_owner || t->close_armed || !t->close_prog)
		return 0;
	/* the end of the purges first: a purge held with no program to end
	 * it would wait for the next drop on its CPU */
	t->close_link = bpf_program__attach(t->close_prog);
	if (!t->close_link) {
		err = -errno;
		pr_info("cannot attach to kmem:kmem_cache_free: %s: closing queues stay matched by their flow\n",
			strerror(-err));
		t->close_owner = false;
		return err;
	}
	t->skel->bss->close_armed = true;
	t->close_armed = true;
	return 0;
}

int tracer__events_fd(struct tracer *t)
{
	return t->skel ? bpf_map__fd(t->skel->maps.events) : -EINVAL;
}

/*
 * The whole per-CPU array in one batch; kernels whose per-CPU arrays have
 * no batch lookup (before 5.12: ENOTSUPP) are read an element at a time.
 * *n: room in keys (and vals: value_size bytes times ncpus each) on entry,
 * elements read on return.
 */
static int read_percpu_array(struct tracer *t, struct bpf_map *map, uint32_t *keys,
			     void *vals, uint32_t *n)
{
	int fd = bpf_map__fd(map);
	uint32_t out = 0, room = *n, max = bpf_map__max_entries(map);
	size_t vsz = (size_t)t->ncpus * ((bpf_map__value_size(map) + 7) & ~(size_t)7);
	LIBBPF_OPTS(bpf_map_batch_opts, opts);

	if (!bpf_map_lookup_batch(fd, NULL, &out, keys, vals, n, &opts) || errno == ENOENT)
		return 0;
	if (errno != 524 /* ENOTSUPP */ && errno != EOPNOTSUPP && errno != EINVAL)
		return -errno;
	*n = 0;
	for (uint32_t i = 0; i < max && i < room; i++) {
		if (bpf_map_lookup_elem(fd, &i, (uint8_t *)vals + (size_t)*n * vsz))
			return -errno;
		keys[(*n)++] = i;
	}
	return 0;
}

int tracer__read_shed(struct tracer *t, uint64_t *shed)
{
	uint32_t n = UD_SHED_SLOTS;
	uint32_t *keys = calloc(n, sizeof(*keys));
	uint64_t *vals = calloc((size_t)n * t->ncpus, sizeof(*vals));
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	memset(shed, 0, UD_SHED_SLOTS * sizeof(*shed));
	err = read_percpu_array(t, t->skel->maps.shed, keys, vals, &n);
	if (err)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		if (keys[i] >= UD_SHED_SLOTS)
			continue;
		for (int c = 0; c < t->ncpus; c++)
			shed[keys[i]] += vals[(size_t)i * t->ncpus + c];
	}
out:
	free(keys);
	free(vals);
	return err;
}

void tracer__detach(struct tracer *t)
{
	bpf_link__destroy(t->rx_link);
	bpf_link__destroy(t->fail_link);
	bpf_link__destroy(t->kfree_link);
	/* last: a purge under way may still be waiting for it */
	bpf_link__destroy(t->close_link);
	t->rx_link = t->fail_link = t->kfree_link = t->close_link = NULL;
}

void tracer__close(struct tracer *t)
{
	if (t->slots)
		munmap((void *)t->slots, t->slots_len);
	bpf_link__destroy(t->rx_link);
	bpf_link__destroy(t->fail_link);
	bpf_link__destroy(t->kfree_link);
	bpf_link__destroy(t->close_link);
	ring_buffer__free(t->win_rb);
	udpdrop_bpf__destroy(t->skel);
	htab__free(&t->win_done);
	free(t->wins);
	free(t->opens);
	free(t->keys);
	free(t->vals);
	htab__free(&t->retired);
	htab__free(&t->rx_retired);
	htab__free(&t->flows_seen);
	memset(t, 0, sizeof(*t));
}

/* Room for a whole per-CPU map's keys and values in one batch. */
static int ensure_bufs(struct tracer *t, struct bpf_map *map)
{
	size_t ks = (size_t)bpf_map__max_entries(map) * bpf_map__key_size(map);
	size_t vs = (size_t)bpf_map__max_entries(map) * t->ncpus *
		    ((bpf_map__value_size(map) + 7) & ~(size_t)7);
	void *p;

	if (t->keys_size < ks) {
		p = realloc(t->keys, ks);
		if (!p)
			return -ENOMEM;
		t->keys = p;
		t->keys_size = ks;
	}
	if (t->vals_size < vs) {
		p = realloc(t->vals, vs);
		if (!p)
			return -ENOMEM;
		t->vals = p;
		t->vals_size = vs;
	}
	return 0;
}

static void add_val(struct ud_val *sum, const struct ud_val *v)
{
	sum->datagrams += v->datagrams;
	sum->skbs += v->skbs;
	sum->bytes += v->bytes;
}

/*
 * Deliveries add up, the peak is the most any CPU saw; where the socket
 * lives is on the copy of the CPU that made the entry (the others' zero).
 */
static void add_rx(struct ud_rx *sum, const struct ud_rx *v)
{
	sum->datagrams += v->datagrams;
	if (v->peak > sum->peak)
		sum->peak = v->peak;
	if (v->netns && !sum->netns) {
		sum->netns = v->netns;
		sum->lport = v->lport;
		sum->family = v->family;
		sum->proto = v->proto;
	}
}

/*
 * The overflow array (UD_OVERFLOW_SLOTS per-CPU values) and the stats,
 * which live in the per-CPU hand-over area the programs already touch.
 * The hand-over struct is private to bpf/: only its leading stats array
 * (UD_STAT_MAX u64s, first by contract, see bpf/udpdrop.bpf.c) is read.
 */
static int read_percpu(struct tracer *t, struct ud_val *overflow, uint64_t *stats)
{
	uint32_t n = UD_OVERFLOW_SLOTS, zero = 0;
	size_t ho_size = bpf_map__value_size(t->skel->maps.handover);
	size_t stride = (ho_size + 7) & ~(size_t)7;
	void *keys = calloc(n, sizeof(uint32_t));
	struct ud_val *vals = calloc((size_t)n * t->ncpus, sizeof(*vals));
	uint8_t *ho = calloc(t->ncpus, stride);
	int err = 0;

	if (!keys || !vals || !ho) {
		err = -ENOMEM;
		goto out;
	}
	err = read_percpu_array(t, t->skel->maps.overflow, keys, vals, &n);
	if (err)
		goto out;
	memset(overflow, 0, UD_OVERFLOW_SLOTS * sizeof(*overflow));
	for (uint32_t i = 0; i < n; i++) {
		uint32_t slot = ((uint32_t *)keys)[i];

		if (slot >= UD_OVERFLOW_SLOTS)
			continue;
		for (int c = 0; c < t->ncpus; c++)
			add_val(&overflow[slot], &vals[(size_t)i * t->ncpus + c]);
	}
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.handover), &zero, ho)) {
		err = -errno;
		goto out;
	}
	memset(stats, 0, UD_STAT_MAX * sizeof(*stats));
	for (int c = 0; c < t->ncpus; c++) {
		const uint64_t *cs = (const uint64_t *)(ho + (size_t)c * stride);

		for (int s = 0; s < UD_STAT_MAX; s++)
			stats[s] += cs[s];
	}
out:
	free(keys);
	free(vals);
	free(ho);
	return err;
}

/* Fold one key's per-CPU values (ncpus of them, 8-byte aligned) into out. */
typedef int (*fold_fn)(struct tracer *t, struct htab *out, const void *key,
		       const void *percpu);

static int fold_drops(struct tracer *t, struct htab *out, const void *key,
		      const void *percpu)
{
	struct ud_val *sum = htab__upsert(out, key, NULL);
	const struct ud_val *pc = percpu;

	if (!sum)
		return -ENOMEM;
	for (int c = 0; c < t->ncpus; c++) {
		add_val(sum, &pc[c]);
		win_open(t, key, (uint32_t)c, pc[c].win);
	}
	return 0;
}

/* Deliveries: counts add up, the peak is the most any CPU saw. */
static int fold_rx(struct tracer *t, struct htab *out, const void *key,
		   const void *percpu)
{
	struct ud_rx *sum = htab__upsert(out, key, NULL);
	const struct ud_rx *pc = percpu;
	struct ud_key wk = rx_win_key(*(const uint64_t *)key);

	if (!sum)
		return -ENOMEM;
	for (int c = 0; c < t->ncpus; c++) {
		add_rx(sum, &pc[c]);
		win_open(t, &wk, (uint32_t)c, pc[c].win);
	}
	return 0;
}

/* The deliveries' slots: each CPU's owner, if any, keys its counts. */
static int fold_rx_slot(struct tracer *t, struct htab *out, const void *key,
			const void *percpu)
{
	const struct ud_rx_slot *pc = percpu;

	for (int c = 0; c < t->ncpus; c++) {
		struct ud_rx *sum;

		if (!pc[c].id)
			continue;
		sum = htab__upsert(out, &pc[c].id, NULL);
		if (!sum)
			return -ENOMEM;
		add_rx(sum, &pc[c].val);
		struct ud_key wk = rx_win_key(pc[c].id);

		win_open(t, &wk, (uint32_t)c, pc[c].val.win);
	}
	return 0;
}

/* Fold a per-CPU map's contents into out, in as few syscalls as it takes. */
static int read_batch(struct tracer *t, struct bpf_map *map, struct htab *out,
		     fold_fn fold)
{
	int fd = bpf_map__fd(map);
	uint32_t max = bpf_map__max_entries(map);
	size_t ksz = bpf_map__key_size(map);
	size_t vsz = (size_t)t->ncpus * ((bpf_map__value_size(map) + 7) & ~(size_t)7);
	uint64_t in = 0, out_batch = 0;
	bool first = true;
	int err;

	if (ensure_bufs(t, map))
		return -ENOMEM;
	for (;;) {
		uint32_t count = max;
		LIBBPF_OPTS(bpf_map_batch_opts, opts);

		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out_batch, t->keys,
					   t->vals, &count, &opts);
		if (err && errno != ENOENT)
			return -errno;
		for (uint32_t i = 0; i < count; i++) {
			int ferr = fold(t, out, (uint8_t *)t->keys + i * ksz,
					(uint8_t *)t->vals + i * vsz);

			if (ferr)
				return ferr;
		}
		if (err) /* ENOENT: that was the last batch */
			return 0;
		in = out_batch;
		first = false;
	}
}

static int add_retired(const struct htab *src, struct htab *dst, bool rx);

/* ---- drop windows (UD_WIN_NS) ----------------------------------------- */

static int win_push(struct tracer_win **v, size_t *n, size_t *cap, const struct tracer_win *w)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct tracer_win *p = realloc(*v, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = *w;
	return 0;
}

/*
 * One CPU's window of a socket bucket, from the ring or the bucket's open
 * word: taken once. Per bucket and CPU, windows close in time order and
 * the open word is the newest, so one not after the latest taken is one
 * taken already (from the other place).
 */
static void win_take(struct tracer *t, const struct ud_key *k, uint32_t cpu, uint64_t word)
{
	struct win_cpu_key ck = { .cpu = cpu };
	struct tracer_win w = { .cpu = cpu };
	uint32_t *done;
	int created;

	if (!(k->flags & UD_KEY_SOCK) || !UD_WIN_COUNT(word))
		return;
	ck.key = *k;
	done = htab__upsert(&t->win_done, &ck, &created);
	if (!done) {
		t->win_err = -ENOMEM;
		return;
	}
	if (!created && UD_WIN_INDEX(word) <= *done)
		return;
	*done = UD_WIN_INDEX(word);
	w.key = *k;
	w.win = UD_WIN_INDEX(word);
	w.datagrams = UD_WIN_COUNT(word);
	if (win_push(&t->wins, &t->nwins, &t->wins_cap, &w))
		t->win_err = -ENOMEM;
}

/* A read's open word: kept, taken after the ring is drained (tracer__read). */
static void win_open(struct tracer *t, const struct ud_key *k, uint32_t cpu, uint64_t word)
{
	struct tracer_win w = { .key = *k, .win = UD_WIN_INDEX(word), .cpu = cpu,
				.datagrams = word };

	struct win_cpu_key ck = { .key = *k, .cpu = cpu };
	const uint32_t *done;

	if (!t->win_reading || !(k->flags & UD_KEY_SOCK) || !UD_WIN_COUNT(word) ||
	    w.win >= t->win_before)
		return;
	/* a bucket keeps its last window's word: once taken, not again */
	done = htab__find(&t->win_done, &ck);
	if (done && w.win <= *done)
		return;
	if (win_push(&t->opens, &t->nopens, &t->opens_cap, &w))
		t->win_err = -ENOMEM;
}

static int win_record(void *ctx, void *data, size_t len)
{
	const struct ud_win *r = data;

	if (len >= sizeof(*r))
		win_take(ctx, &r->key, r->cpu, r->win);
	return 0;
}

int tracer__drain_windows(struct tracer *t)
{
	int n;

	if (!t->win_rb)
		return 0;
	n = ring_buffer__consume(t->win_rb);
	if (t->win_err) {
		int err = t->win_err;

		t->win_err = 0;
		return err;
	}
	return n < 0 ? n : 0;
}

const struct tracer_win *tracer__windows(const struct tracer *t, size_t *n, uint32_t *before)
{
	*n = t->nwins;
	*before = t->win_before;
	return t->wins;
}

void tracer__windows_clear(struct tracer *t)
{
	t->nwins = 0;
	t->win_read = false;
}

/*
 * Before the maps are read: what the programs handed over so far, and
 * the window no CPU can still be adding to when the read ends (one before
 * the one in progress now: a program that read the clock in it may still
 * be counting when the read looks).
 */
static int win_read_begin(struct tracer *t)
{
	uint64_t idx = now_ns() / UD_WIN_NS;
	uint32_t before = t->win_all ? UINT32_MAX : (uint32_t)(idx ? idx - 1 : 0);

	/* several reads between two hand-overs (counts, deliveries): the
	 * earliest one's, which every read has seen closed */
	if (!t->win_read || before < t->win_before)
		t->win_before = before;
	t->win_read = true;
	t->nopens = 0;
	t->win_reading = true;
	return tracer__drain_windows(t);
}

/*
 * After: a window closed while the maps were read is in the ring now,
 * taken first; then the open words of closed windows (their ring records,
 * when they come, are the same windows: not taken again).
 */
static int win_read_end(struct tracer *t)
{
	int err;

	t->win_reading = false;
	err = tracer__drain_windows(t);
	for (size_t i = 0; !err && i < t->nopens; i++) {
		const struct tracer_win *o = &t->opens[i];

		if (o->win < t->win_before)
			win_take(t, &o->key, o->cpu, o->datagrams);
	}
	if (!err && t->win_err)
		err = t->win_err;
	t->win_err = 0;
	return err;
}

int tracer__read(struct tracer *t, struct htab *drops, struct ud_val *overflow,
		 uint64_t *stats)
{
	const void *key;
	void *val;
	int err;

	htab__clear(drops);
	err = win_read_begin(t);
	if (!err)
		err = read_batch(t, t->skel->maps.drops, drops, fold_drops);
	t->fill.drops = drops->n;
	t->fill.drops_max = bpf_map__max_entries(t->skel->maps.drops);
	if (!err)
		err = read_batch(t, t->skel->maps.flows, drops, fold_drops);
	t->fill.flows = drops->n - t->fill.drops;
	t->fill.flows_max = bpf_map__max_entries(t->skel->maps.flows);
	if (err)
		return err;

	/* the slot table: owned slots only, their counts only ever grow */
	t->fill.slots = 0;
	t->fill.slots_max = t->nslots;
	for (uint32_t i = 0; i < t->nslots; i++) {
		const struct ud_slot *sl = &t->slots[i];
		struct ud_val *sum;

		if (UD_SLOT_PHASE(__atomic_load_n(&sl->state, __ATOMIC_ACQUIRE)) !=
		    UD_SLOT_READY)
			continue;
		t->fill.slots++;
		sum = htab__upsert(drops, &sl->key, NULL);
		if (!sum)
			return -ENOMEM;
		add_val(sum, &sl->val);
		win_open(t, &sl->key, i / UD_SLOTS_PER_CPU,
			 __atomic_load_n(&sl->val.win, __ATOMIC_RELAXED));
	}
	err = win_read_end(t);
	if (err)
		return err;
	/* and what was given back: the counts stay cumulative */
	err = add_retired(&t->retired, drops, false);
	if (err)
		return err;

	/* overflow slots and stats: per-CPU arrays, one syscall each */
	err = read_percpu(t, overflow, stats);
	if (err)
		return err;
	/* every event was counted once: as an skb somewhere, or not ours, or filtered */
	stats[UD_STAT_EVENTS] = stats[UD_STAT_NOT_OURS] + stats[UD_STAT_FILTERED];
	for (size_t it = 0; htab__next(drops, &it, &key, &val);)
		stats[UD_STAT_EVENTS] += ((struct ud_val *)val)->skbs;
	for (int s = 0; s < UD_OVERFLOW_SLOTS; s++)
		stats[UD_STAT_EVENTS] += overflow[s].skbs;
	return 0;
}

int tracer__read_rx(struct tracer *t, struct htab *rx)
{
	int err;

	htab__clear(rx);
	if (!t->rx)
		return 0;
	/* the deliveries' windows, read as the drops' are (tracer__read) */
	err = win_read_begin(t);
	err = err ?: read_batch(t, t->skel->maps.rx, rx, fold_rx);
	t->fill.rx = rx->n;
	t->fill.rx_max = bpf_map__max_entries(t->skel->maps.rx);
	err = err ?: read_batch(t, t->skel->maps.rx_slots, rx, fold_rx_slot);
	t->win_reading = false;
	err = err ?: win_read_end(t);
	return err ?: add_retired(&t->rx_retired, rx, true);
}

/* Add the given-back counts (src) into a snapshot just read (dst). */
static int add_retired(const struct htab *src, struct htab *dst, bool rx)
{
	size_t it = 0;
	const void *key;
	void *val;

	while (htab__next(src, &it, &key, &val)) {
		void *sum = htab__upsert(dst, key, NULL);

		if (!sum)
			return -ENOMEM;
		if (rx)
			add_rx(sum, val);
		else
			add_val(sum, val);
	}
	return 0;
}

/* One per-CPU hash entry's last counts, deleted in the same call. */
static int take_entry(struct tracer *t, struct bpf_map *map, const void *key)
{
	int fd = bpf_map__fd(map);

	if (!bpf_map_lookup_and_delete_elem(fd, key, t->vals))
		return 0;
	/* before 5.14 hash maps cannot do both at once: read, then delete */
	if (errno != EINVAL && errno != 524 /* ENOTSUPP */ && errno != EOPNOTSUPP)
		return -errno;
	if (bpf_map_lookup_elem(fd, key, t->vals))
		return -errno;
	return bpf_map_delete_elem(fd, key) ? -errno : 0;
}

/* A bucket's last window stays known unless its socket was given back. */
static bool win_bucket_kept(const void *key, void *val, void *want)
{
	uint64_t id = sockid__of_key(&((const struct win_cpu_key *)key)->key);

	return !id || !htab__find(want, &id);
}

int tracer__retire(struct tracer *t, const struct htab *drops,
		   const uint64_t *ids, const bool *keep_rx, size_t n)
{
	uint32_t *slots = NULL;
	size_t nslots = 0, it = 0;
	struct htab want;
	const void *key;
	void *val;
	int err = 0, given = 0;

	if (!n)
		return 0;
	if (htab__init(&want, sizeof(uint64_t), 1))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (ids[i] && !htab__upsert(&want, &ids[i], NULL)) {
			err = -ENOMEM;
			goto out;
		}
	if (ensure_bufs(t, t->skel->maps.drops) || ensure_bufs(t, t->skel->maps.rx)) {
		err = -ENOMEM;
		goto out;
	}
	/* their windows in the ring first: the open words below come after */
	err = tracer__drain_windows(t);
	if (err)
		goto out;

	/* the socket buckets in the hash map: take and delete each */
	while (htab__next(drops, &it, &key, &val)) {
		const struct ud_key *k = key;
		uint64_t id = sockid__of_key(k);
		struct ud_val *sum;
		int terr;

		if (!id || !htab__find(&want, &id))
			continue;
		/* all of it given back before: nothing in the kernel to take */
		const struct ud_val *gone = htab__find(&t->retired, k);

		if (gone && !memcmp(gone, val, sizeof(*gone)))
			continue;
		terr = take_entry(t, t->skel->maps.drops, k);
		if (terr == -ENOENT)
			continue; /* in a slot, or given back before */
		if (terr) {
			err = terr;
			goto out;
		}
		sum = htab__upsert(&t->retired, k, NULL);
		if (!sum) {
			err = -ENOMEM;
			goto out;
		}
		for (int c = 0; c < t->ncpus; c++) {
			add_val(sum, &((const struct ud_val *)t->vals)[c]);
			/* a closed socket's open windows are closed */
			win_take(t, k, (uint32_t)c, ((const struct ud_val *)t->vals)[c].win);
		}
		given++;
	}

	/* deliveries: the hash map's entries (the per-CPU slots stay taken) */
	for (size_t i = 0; t->rx && i < n; i++) {
		struct ud_rx *sum;
		int terr;

		if (!ids[i])
			continue;
		terr = take_entry(t, t->skel->maps.rx, &ids[i]);
		if (terr == -ENOENT)
			continue;
		if (terr) {
			err = terr;
			goto out;
		}
		given++;
		/* a closed socket's open windows of deliveries are closed */
		struct ud_key wk = rx_win_key(ids[i]);

		for (int c = 0; c < t->ncpus; c++)
			win_take(t, &wk, (uint32_t)c, ((const struct ud_rx *)t->vals)[c].win);
		if (!keep_rx[i])
			continue;
		sum = htab__upsert(&t->rx_retired, &ids[i], NULL);
		if (!sum) {
			err = -ENOMEM;
			goto out;
		}
		for (int c = 0; c < t->ncpus; c++)
			add_rx(sum, &((const struct ud_rx *)t->vals)[c]);
	}

	/*
	 * The slots: marked RETIRED (no program starting from now adds to
	 * them), a grace period for those already adding, then the last
	 * count, and the slot is free again with its generation bumped.
	 */
	if (!t->slots_retire)
		goto out;
	slots = malloc(t->nslots * sizeof(*slots));
	if (!slots) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < t->nslots; i++) {
		struct ud_slot *sl = &t->slots[i];
		uint64_t state = __atomic_load_n(&sl->state, __ATOMIC_ACQUIRE);
		uint64_t id;

		if (UD_SLOT_PHASE(state) != UD_SLOT_READY)
			continue;
		id = sockid__of_key(&sl->key);
		if (!id || !htab__find(&want, &id))
			continue;
		if (__atomic_compare_exchange_n(&sl->state, &state,
						(state & ~3ull) | UD_SLOT_RETIRED, false,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			slots[nslots++] = i;
	}
	if (nslots && rcu_grace_period()) {
		/* no grace period, no safe hand-back: keep them taken */
		for (size_t j = 0; j < nslots; j++) {
			struct ud_slot *sl = &t->slots[slots[j]];

			__atomic_store_n(&sl->state, (sl->state & ~3ull) | UD_SLOT_READY,
					 __ATOMIC_RELEASE);
		}
		t->slots_retire = false;
		goto out;
	}
	for (size_t j = 0; j < nslots; j++) {
		struct ud_slot *sl = &t->slots[slots[j]];
		struct ud_val *sum = htab__upsert(&t->retired, &sl->key, NULL);
		uint64_t next = (sl->state & ~3ull) + UD_SLOT_GEN_ONE;

		if (!sum) {
			/* keep it: its count stays in the slot */
			__atomic_store_n(&sl->state, (sl->state & ~3ull) | UD_SLOT_READY,
					 __ATOMIC_RELEASE);
			err = -ENOMEM;
			continue;
		}
		add_val(sum, &sl->val);
		win_take(t, &sl->key, slots[j] / UD_SLOTS_PER_CPU, sl->val.win);
		memset(&sl->key, 0, sizeof(sl->key));
		memset(&sl->val, 0, sizeof(sl->val));
		__atomic_store_n(&sl->state, next | UD_SLOT_FREE, __ATOMIC_RELEASE);
		given++;
	}
out:
	free(slots);
	/* the closed sockets' buckets are gone: so is where their windows were */
	if (given > 0 && htab__retain(&t->win_done, win_bucket_kept, &want))
		err = err ?: -ENOMEM;
	if (!err && t->win_err)
		err = t->win_err;
	t->win_err = 0;
	htab__free(&want);
	t->fill.retired += given;
	return err ?: given;
}

uint64_t tracer__missed(struct tracer *t)
{
	struct bpf_program *progs[3] = { NULL, NULL, NULL };
	uint64_t missed = 0;

	progs[0] = t->mode == ATTACH_TP_BTF ? t->skel->progs.udpdrop_kfree_btf
		   : t->mode == ATTACH_RAW_TP ? t->skel->progs.udpdrop_kfree_raw
					      : t->skel->progs.udpdrop_kfree_tp;
	if (t->fail_link)
		progs[1] = t->skel->progs.udpdrop_fail_raw;
	/*
	 * The kmem_cache_free program's skips lose no drop (at worst a purge
	 * goes by its flow or to the next socket of its port): not counted.
	 */
	for (int i = 0; i < 3; i++) {
		struct bpf_prog_info info = {};
		uint32_t len = sizeof(info);

		if (progs[i] &&
		    !bpf_obj_get_info_by_fd(bpf_program__fd(progs[i]), &info, &len))
			missed += info.recursion_misses;
	}
	return missed;
}

int tracer__prog_ids(struct tracer *t, uint32_t *ids, int n)
{
	struct bpf_link *links[4] = { t->kfree_link, t->fail_link, t->rx_link,
				      t->close_link };
	int got = 0;

	for (int i = 0; i < 4 && got < n; i++) {
		struct bpf_link_info info = {};
		uint32_t len = sizeof(info);

		if (!links[i])
			continue;
		if (!bpf_obj_get_info_by_fd(bpf_link__fd(links[i]), &info, &len))
			ids[got++] = info.prog_id;
	}
	return got;
}

bool tracer__filling(const struct tracer *t)
{
	const struct tracer_fill *f = &t->fill;

	return (f->drops_max && f->drops >= f->drops_max / 4) ||
	       (f->flows_max && f->flows >= f->flows_max / 4) ||
	       (f->rx_max && f->rx >= f->rx_max / 4);
}

int tracer__retire_idle_flows(struct tracer *t, const struct htab *drops,
			      uint64_t now)
{
	struct htab seen;
	size_t it = 0;
	const void *key;
	void *val;
	int given = 0, err = 0;
	/* half full: every flow quiet for an interval; else those quiet for long */
	bool filling = t->fill.flows_max && t->fill.flows >= t->fill.flows_max / 2;

	if (ensure_bufs(t, t->skel->maps.flows))
		return -ENOMEM;
	if (htab__init(&seen, sizeof(struct ud_key), sizeof(struct flow_seen)))
		return -ENOMEM;
	while (htab__next(drops, &it, &key, &val)) {
		const struct ud_key *k = key;
		const struct ud_val *v = val, *gone;
		const struct flow_seen *before;
		struct ud_val *sum;
		int terr;

		if (k->flags & UD_KEY_SOCK)
			continue;
		gone = htab__find(&t->retired, k);
		if (gone && !memcmp(gone, v, sizeof(*v)))
			continue; /* nothing of it left in the kernel */
		before = htab__find(&t->flows_seen, k);
		if (!before || memcmp(&before->v, v, sizeof(*v)) ||
		    (!filling && now - before->since_ns < TRACER_FLOW_IDLE_NS)) {
			struct flow_seen *s = htab__upsert(&seen, k, NULL);

			if (!s) {
				err = -ENOMEM;
				break;
			}
			/* moved since the last call (or new), or not quiet for long: wait */
			s->since_ns = before && !memcmp(&before->v, v, sizeof(*v))
					      ? before->since_ns : now;
			s->v = *v;
			continue;
		}
		terr = take_entry(t, t->skel->maps.flows, k);
		if (terr == -ENOENT)
			continue;
		if (terr) {
			err = terr;
			break;
		}
		sum = htab__upsert(&t->retired, k, NULL);
		if (!sum) {
			err = -ENOMEM;
			break;
		}
		for (int c = 0; c < t->ncpus; c++)
			add_val(sum, &((const struct ud_val *)t->vals)[c]);
		given++;
	}
	htab__free(&t->flows_seen);
	t->flows_seen = seen;
	t->fill.retired += given;
	return err ?: given;
}

/* Has the snapshot key more than was given back (a part in the kernel)? */
static bool live_part(const struct tracer *t, const struct ud_key *k,
		      const struct ud_val *v)
{
	const struct ud_val *gone = htab__find(&t->retired, k);

	return !gone || memcmp(gone, v, sizeof(*v));
}

/* The socket a key of the fold belongs to, and its netns; 0 if none. */
static uint64_t fold_target(const struct ud_key *k, const struct htab *ids,
			    const struct htab *flows, uint32_t *netns)
{
	if (k->flags & UD_KEY_SOCK) {
		uint64_t id = sockid__of_key(k);
		const uint32_t *ns = id ? htab__find(ids, &id) : NULL;

		if (!ns)
			return 0;
		*netns = *ns;
		return id;
	}
	const struct tracer_fold_flow *ff = htab__find(flows, k);

	if (!ff)
		return 0;
	*netns = ff->netns;
	return ff->id;
}

int tracer__fold(struct tracer *t, const struct htab *drops,
		 const struct htab *ids, const struct htab *flows)
{
	struct htab busy, keep, rx_keep;
	size_t it = 0;
	const void *key;
	void *val;
	int folded = 0, err = -ENOMEM;
	uint32_t ns;

	if (!ids->n)
		return 0;
	if (htab__init(&busy, sizeof(uint64_t), 1))
		return -ENOMEM;
	/* a socket with counts still in the kernel is not folded yet */
	while (htab__next(drops, &it, &key, &val)) {
		uint64_t id = fold_target(key, ids, flows, &ns);

		if (id && live_part(t, key, val) && !htab__upsert(&busy, &id, NULL))
			goto out_busy;
	}
	if (htab__init(&keep, sizeof(struct ud_key), sizeof(struct ud_val)))
		goto out_busy;
	if (htab__init(&rx_keep, sizeof(uint64_t), sizeof(struct ud_rx))) {
		htab__free(&keep);
		goto out_busy;
	}
	for (it = 0; htab__next(&t->retired, &it, &key, &val);) {
		struct ud_key nk = *(const struct ud_key *)key;
		uint64_t id = fold_target(&nk, ids, flows, &ns);
		struct ud_val *sum;

		if (id && !htab__find(&busy, &id)) {
			if (!(nk.flags & UD_KEY_SOCK)) {
				/* a socket bucket now: those keep no flow */
				memset(nk.saddr, 0, sizeof(nk.saddr));
				memset(nk.daddr, 0, sizeof(nk.daddr));
				nk.dport = 0;
				nk.flags |= UD_KEY_SOCK | UD_KEY_FLOW_MATCHED;
			}
			nk.cookie = UD_COOKIE_FOLDED | ns;
			nk.netns = ns;
			nk.flags = (nk.flags & ~UD_KEY_INODE) | UD_KEY_FOLDED;
		}
		sum = htab__upsert(&keep, &nk, NULL);
		if (!sum)
			goto out_all;
		add_val(sum, val);
	}
	for (it = 0; htab__next(&t->rx_retired, &it, &key, &val);) {
		struct ud_rx *r;

		if (htab__find(ids, key) && !htab__find(&busy, key))
			continue; /* a folded socket's deliveries: in no view now */
		r = htab__upsert(&rx_keep, key, NULL);
		if (!r)
			goto out_all;
		*r = *(const struct ud_rx *)val;
	}
	for (it = 0; htab__next(ids, &it, &key, &val);)
		folded += !htab__find(&busy, key);
	htab__free(&t->retired);
	htab__free(&t->rx_retired);
	t->retired = keep;
	t->rx_retired = rx_keep;
	err = folded;
	goto out_busy;
out_all:
	htab__free(&keep);
	htab__free(&rx_keep);
out_busy:
	htab__free(&busy);
	return err;
}

int tracer__split_flow(struct tracer *t, const struct ud_key *k,
		       const struct tracer_part *parts, int n)
{
	struct ud_val *flow, *sum;
	int err;

	if (ensure_bufs(t, t->skel->maps.flows))
		return -ENOMEM;
	/* the kernel's part joins what was given back before, if any */
	flow = htab__upsert(&t->retired, k, NULL);
	if (!flow)
		return -ENOMEM;
	err = take_entry(t, t->skel->maps.flows, k);
	if (err && err != -ENOENT)
		return err;
	if (!err)
		for (int c = 0; c < t->ncpus; c++)
			add_val(flow, &((const struct ud_val *)t->vals)[c]);
	for (int i = 0; i < n; i++) {
		struct ud_key sk = *k;
		const struct ud_val *pv = &parts[i].val;

		if (!parts[i].cookie)
			continue; /* no socket then: stays the flow's */
		/* never more than the flow holds (the parts are of a snapshot) */
		if (pv->datagrams > flow->datagrams || pv->skbs > flow->skbs ||
		    pv->bytes > flow->bytes)
			return -ERANGE;
		sk.flags |= UD_KEY_SOCK | UD_KEY_FLOW_MATCHED;
		if (parts[i].cookie & UD_RX_INODE) {
			sk.cookie = (uint32_t)parts[i].cookie;
			sk.flags |= UD_KEY_INODE;
		} else {
			sk.cookie = parts[i].cookie;
		}
		sk.netns = parts[i].netns;
		sum = htab__upsert(&t->retired, &sk, NULL);
		/* upsert may move the table: find the flow again */
		if (!sum || !(flow = htab__find(&t->retired, k)))
			return -ENOMEM;
		add_val(sum, pv);
		flow->datagrams -= pv->datagrams;
		flow->skbs -= pv->skbs;
		flow->bytes -= pv->bytes;
	}
	t->fill.retired++;
	return 0;
}
