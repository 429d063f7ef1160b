// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The loader (tracer.h): what this kernel offers (BTF probes), loading
 * and attaching the best variant it takes, detaching and closing, and
 * the programs' own figures. Reading the maps is tracer_read.c, the drop
 * windows tracer_windows.c, giving entries back tracer_retire.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <zlib.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "tracer.h"
#include "tracer_internal.h"
#include "util.h"
#include "udpdrop.skel.h"

#define DEFAULT_MAP_ENTRIES 16384

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

/*
 * The kernel's BTF, parsed once for a start (each parse reads 5 MiB from
 * sysfs and takes 3 to 10 ms): the probes here and the model's drop
 * reasons (tracer__kernel_btf) share it; released once the programs are
 * attached. (libbpf parses its own: it takes none from its caller.)
 */
static struct btf *vmlinux_btf_cache;

static struct btf *vmlinux_btf(void)
{
	if (!vmlinux_btf_cache)
		vmlinux_btf_cache = btf__load_vmlinux_btf();
	return vmlinux_btf_cache;
}

const struct btf *tracer__kernel_btf(void)
{
	return vmlinux_btf();
}

static void vmlinux_btf_release(void)
{
	btf__free(vmlinux_btf_cache);
	vmlinux_btf_cache = NULL;
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
	btf = vmlinux_btf();
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
	struct btf *btf = vmlinux_btf();
	bool found;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, st, BTF_KIND_STRUCT);
	found = id > 0 && btf_member_named(btf, id, member);
	return found;
}

/*
 * CONFIG_HZ from the running kernel's config: /boot/config-RELEASE, else
 * /proc/config.gz (gzread reads either, compressed or not), once; 0 where
 * neither is there (containers, most distributions' /proc).
 */
int tracer_config_hz(void)
{
	static int hz = -1;
	char path[320], line[256];
	struct utsname un;

	if (hz >= 0)
		return hz;
	hz = 0;
	snprintf(path, sizeof(path), "/boot/config-%s", uname(&un) ? "" : un.release);
	const char *paths[] = { path, "/proc/config.gz" };

	for (size_t i = 0; i < 2 && !hz; i++) {
		gzFile f = gzopen(paths[i], "rb");

		if (!f)
			continue;
		/* a line at a time: linear in the file, whatever its size */
		while (gzgets(f, line, sizeof(line)))
			if (!strncmp(line, "CONFIG_HZ=", 10)) {
				hz = atoi(line + 10);
				break;
			}
		gzclose(f);
	}
	if (hz < 0)
		hz = 0;
	return hz;
}

/*
 * Jiffies per drop window (the programs' win_ticks), or 0 for the fine
 * clock (CLOCK_MONOTONIC / UD_WIN_NS). The jiffies need whole windows
 * (CONFIG_HZ a multiple of 10) and a times(2) that reports them exactly,
 * so that user space reads the window in progress from the same counter
 * (tracer_win_now): times(2) returns jiffies_64_to_clock_t(jiffies_64),
 * exact (j * USER_HZ / HZ, rounded down) where USER_HZ is 100 and a tick
 * a whole number of ns; with HZ 300 it scales by a rounded tick, which
 * drifts by windows over days. Read from /boot or /proc/config.gz before
 * the load (its .bss; 0.3 ms on the project's VM): a clock fixed for the
 * run, so that no socket's windows mix two scales.
 */
uint64_t tracer_win_ticks(int hz)
{
	if (hz < 10 || hz > 10000 || hz % 10 || 1000000000 % hz || sysconf(_SC_CLK_TCK) != 100)
		return 0;
	return (uint64_t)hz / 10;
}

/* Is fn a function of this kernel (in its BTF: not inlined away)? */
static bool kernel_has_func(const char *fn)
{
	struct btf *btf = vmlinux_btf();

	return btf && btf__find_by_name_kind(btf, fn, BTF_KIND_FUNC) > 0;
}

/*
 * The classifier's function ranges into the running programs (their .bss,
 * mapped): each pair is written end first, and a program takes a range
 * whose start reads 0 as empty (in_range), so one that reads it meanwhile
 * finds an empty range, never a wrong one. Drops before this are
 * counted all the same, by their reason and flow.
 */
static void copy_ranges(struct udpdrop_bpf__bss *bss, const struct tracer_opts *o)
{
	for (int r = 0; r < UD_RANGE_MAX; r++) {
		bss->range_end[r] = 0;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		bss->range_start[r] = o->range_start[r];
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		bss->range_end[r] = o->range_end[r];
	}
	for (int r = 0; r < UD_SITE_RANGES; r++) {
		bss->site_end[r] = 0;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		bss->site_start[r] = o->site_start[r];
		bss->site_loc[r] = o->site_loc[r];
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		bss->site_end[r] = o->site_end[r];
	}
}

/*
 * Does kmem:kmem_cache_free pass the cache (6.1+: call_site, ptr, s)?
 * 5.12 to 6.0 pass its name instead, 5.10 neither: then the kmem_cache_free
 * program cannot check that a freed object went back to its proto's slab.
 */
static bool kernel_kmem_free_names_cache(void)
{
	struct btf *btf = vmlinux_btf();
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
	struct btf *btf = vmlinux_btf();
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
	btf = vmlinux_btf();
	if (!btf)
		return false;
	found = btf__find_by_name_kind(btf, "btf_trace_sk_data_ready",
				       BTF_KIND_TYPEDEF) > 0;
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
	bool need_fail;
	int err;

	/*
	 * udpdrop_compat.bpf.o in tp_btf would take rx_sk as the kernel's
	 * trusted pointer, which a verifier that does not know the argument
	 * can be NULL (upstream marked raw tracepoint arguments as possibly
	 * NULL late in 2024: 6.11 and early 6.12 are suspect) takes for never
	 * NULL: it then drops the program's NULL checks, and its plain loads
	 * fault on a drop without a socket. udpdrop.bpf.o takes rx_sk
	 * read-only (from_args); the compat object leaves it alone in tp_btf
	 * (raw_tp reads it as a number).
	 */
	t->rx_sk = t->rx_sk_wanted && (t->kfuncs || mode != ATTACH_TP_BTF);
	/*
	 * Without rx_sk, the fail handover names the socket: from 6.10 it
	 * fires before the free (see kernel_fail_tp_names_skb); before, after
	 * it, and the drop waits for it in the programs (pend_fail).
	 */
	need_fail = !t->rx_sk;

	/* UDPDROP_REFUSE_KFUNC_OBJECT (tests only): act as a kernel that
	 * refuses udpdrop.bpf.o, to run the fallback (tracer__open) */
	if (t->kfuncs && getenv("UDPDROP_REFUSE_KFUNC_OBJECT")) {
		snprintf(e->msg, sizeof(e->msg), "cannot load the %s program: %s (UDPDROP_REFUSE_KFUNC_OBJECT)",
			 attach_mode__name(mode), strerror(EINVAL));
		t->load_refused = true;
		return -EINVAL;
	}
	skel = tracer_object_open(t->kfuncs);
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
	/* what is known now (kernels without reasons: all, see watch__open);
	 * the rest comes once the programs count (tracer__set_ranges) */
	copy_ranges(skel->bss, o);
	skel->rodata->derive_sites = o->derive_sites;
	skel->rodata->pend_fail = need_fail && mode != ATTACH_TRACEPOINT && !t->fail_names_skb;
	skel->rodata->site_base = o->derive_sites ? 0 : o->site_base;
	if (o->frag_window_s)
		skel->rodata->frag_window_ns = o->frag_window_s * 1000000000ull;
	skel->rodata->events_on = o->events;
	skel->rodata->cap_len = o->cap_len < UD_CAP_MAX ? o->cap_len : UD_CAP_MAX;
	tracer_events_size(t, skel, o);
	/* nothing is shed without events: one slot, not 1,024 per CPU */
	bpf_map__set_max_entries(skel->maps.shed, o->events ? UD_SHED_SLOTS : 1);
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

	/*
	 * -v: each program's verifier statistics (instructions walked,
	 * states), the start-up's main cost. Not with -vv: there libbpf keeps
	 * the log and prints the verifier's whole walk of a refused program.
	 */
	static char vstats[8][4096];
	struct bpf_program *vprog;
	bool want_stats = log__level() == LOG_INFO;
	int nv = 0;

	if (want_stats) {
		bpf_object__for_each_program(vprog, skel->obj) {
			if (!bpf_program__autoload(vprog) || nv == 8)
				continue;
			vstats[nv][0] = 0;
			bpf_program__set_log_buf(vprog, vstats[nv++], sizeof(vstats[0]));
			bpf_program__set_log_level(vprog, 4 /* BPF_LOG_STATS */);
		}
	}
	/* the windows' clock, fixed for the run (win_ticks in the programs) */
	t->win_ticks = tracer_win_ticks(tracer_config_hz());
	skel->bss->win_ticks = t->win_ticks;
	uint64_t load_start = now_ns();

	err = udpdrop_bpf__load(skel);
	t->load_ns = now_ns() - load_start;
	nv = 0;
	if (want_stats && !err) {
		bpf_object__for_each_program(vprog, skel->obj) {
			if (!bpf_program__autoload(vprog) || nv == 8)
				continue;
			const char *p = strstr(vstats[nv++], "processed ");
			char line[256];
			size_t n = p ? strcspn(p, "\n") : 0;

			snprintf(line, sizeof(line), "%.*s", (int)n, p ? p : "");
			pr_info("verified %s: %s\n", bpf_program__name(vprog),
				n ? line : "(no statistics)");
		}
	}
	if (err) {
		if (err != -EPERM)
			t->load_refused = true;
		snprintf(e->msg, sizeof(e->msg), "cannot load the %s program: %s",
			 attach_mode__name(mode), strerror(-err));
		goto fail;
	}
	/* every CPU's ring in place before the first drop can need one */
	err = tracer_events_install(t, skel);
	if (err) {
		snprintf(e->msg, sizeof(e->msg), "cannot install the per-CPU event rings: %s",
			 strerror(-err));
		goto fail;
	}
	/* loaded (so a refusal shows now), attached later: tracer__arm_close */
	t->close_owner = with_close;
	t->close_prog = with_close ? close_prog : NULL;
	t->kfree_link = bpf_program__attach(kfree);
	t->attached_ns = now_ns();
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
	bool with_close = kernel_has_func("udp_destruct_common") &&
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
 * Load and attach: the mode asked for, or the first of `order` that this
 * kernel takes (auto). e: every refused mode's reason, the best first.
 */
static int open_modes(struct tracer *t, const struct tracer_opts *o, bool want_rx,
		      bool tp_exact, struct tracer_error *e)
{
	static const enum attach_mode order[] = { ATTACH_TP_BTF, ATTACH_RAW_TP,
						  ATTACH_TRACEPOINT };
	int err;

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
	return err;
}

int tracer__open(struct tracer *t, const struct tracer_opts *o,
		 struct tracer_error *e)
{
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
	t->rx_sk_wanted = kernel_has_rx_sk() && !o->no_rx_sk && !o->derive_sites;
	t->fail_names_skb = kernel_fail_tp_names_skb();
	t->close_cache_arg = kernel_kmem_free_names_cache();
	t->atomics = kernel_has_atomics();
	/* UDPDROP_COMPAT_OBJECT: the tests run the probe-read object here too */
	t->kfuncs = kernel_has_func("bpf_rdonly_cast") && !getenv("UDPDROP_COMPAT_OBJECT");
	if (!t->atomics)
		pr_info("no BPF atomics (kernels before 5.12): every drop is counted in the hash maps, not the per-CPU slot table\n");
	t->sites = o->derive_sites;
	bool want_rx = !o->no_rx && kernel_has_sk_data_ready();

	if (!o->no_rx && !want_rx)
		pr_info("no sock:sk_data_ready tracepoint (kernels before 6.6): deliveries not counted\n");
	bool tp_exact = kernel_counts_tracepoint_skips();

	err = open_modes(t, o, want_rx, tp_exact, e);
	if (err && t->kfuncs && t->load_refused) {
		/*
		 * udpdrop.bpf.o refused everywhere: a kernel whose BTF names
		 * bpf_rdonly_cast but which will not call it (no JIT, a JIT
		 * without kfunc calls). The object with probe reads asks
		 * nothing of the kind (tracer_object.c). Not after EPERM or a
		 * failed attach, which the other object would meet again.
		 */
		pr_info("the BPF object that reads packet headers in place was refused (%s): loading the one that copies them\n",
			e->msg);
		t->kfuncs = false;
		memset(e, 0, sizeof(*e));
		err = open_modes(t, o, want_rx, tp_exact, e);
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
		t->win_rb = ring_buffer__new(bpf_map__fd(t->skel->maps.wins), tracer_win_record, t, NULL);
		if (!t->win_rb) {
			err = -errno;
			snprintf(e->msg, sizeof(e->msg), "cannot read the drop windows' ring: %s",
				 strerror(-err));
			tracer__close(t);
		}
	}
	vmlinux_btf_release();
	if (err) {
		tracer_events_free(t);
		e->code = err;
		return err;
	}
	/* start-up: drops count from here (the loader's probes and the
	 * verifier come before; the socket table and symbols after) */
	if (process_start_ns())
		pr_info("attached after %.1f ms (loading and verifying the programs: %.1f ms)\n",
			(t->attached_ns - process_start_ns()) / 1e6, t->load_ns / 1e6);
	if (t->rx_sk_wanted && !t->rx_sk)
		pr_info("kfree_skb's rx_sk left unread: the object that copies packet headers would take it in tp_btf as a trusted pointer, which a verifier that does not know it can be NULL takes for never NULL (raw_tp reads it)\n");
	t->slots_retire = tracer_slots_can_retire();
	if (!t->slots_retire)
		pr_info("membarrier(MEMBARRIER_CMD_GLOBAL) unavailable (nohz_full?): slots of closed sockets stay taken, their drops go by the hash map\n");
	pr_info("attached to skb:kfree_skb via %s (%s); causes from %s; receiving socket from %s; deliveries %s; closing sockets' queues %s\n",
		attach_mode__name(t->mode),
		t->kfuncs ? "packet headers read in place: bpf_rdonly_cast"
			  : "packet headers copied: bpf_probe_read_kernel",
		t->sites ? "drop locations (no drop reasons)" : "drop reasons",
		t->rx_sk ? "rx_sk"
		: t->fail_link ? "udp_fail_queue_rcv_skb, else packet headers"
			       : "packet headers",
		t->rx ? "counted (sock:sk_data_ready)" : "not counted",
		t->close_owner ? "matched by their flow, named by the socket's free (kmem:kmem_cache_free) once a port is shared"
			       : "matched by their flow");
	if (t->win_ticks)
		pr_info("drop windows: 100 ms of the kernel's tick counter (%llu jiffies, CONFIG_HZ %llu)\n",
			(unsigned long long)t->win_ticks, (unsigned long long)t->win_ticks * 10);
	else
		pr_info("drop windows: 100 ms of CLOCK_MONOTONIC (no CONFIG_HZ that times(2) reports exactly)\n");
	if (o->events)
		pr_info("per-drop events: %s of %u KiB\n",
			t->ev_per_cpu ? "a ring per CPU" : "one ring shared by the CPUs",
			t->ev_ring_bytes >> 10);
	return 0;
}

void tracer__set_ranges(struct tracer *t, const struct tracer_opts *o)
{
	if (t->skel)
		copy_ranges(t->skel->bss, o);
}

int tracer__arm_close(struct tracer *t)
{
	int err;

	/* nothing to own until the destructor's range is known */
	if (!t->close_owner || t->close_armed || !t->close_prog ||
	    !t->skel->bss->range_end[UD_RANGE_UDP_DESTRUCT])
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
	tracer_events_free(t);
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

int tracer__prog_stats(struct tracer *t, struct tracer_prog_stats *out, int n)
{
	uint32_t ids[4];
	int nids = tracer__prog_ids(t, ids, 4), got = 0;

	for (int i = 0; i < nids && got < n; i++) {
		struct bpf_prog_info info = {};
		uint32_t len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			snprintf(out[got].name, sizeof(out[got].name), "%s", info.name);
			out[got].run_ns = info.run_time_ns;
			out[got].runs = info.run_cnt;
			out[got].recursion_misses = info.recursion_misses;
			got++;
		}
		close(fd);
	}
	return got;
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
