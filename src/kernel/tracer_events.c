// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The per-drop event rings of `udpdrop record` (tracer.h:
 * tracer__event_rings): one BPF ring buffer per possible CPU, in the
 * cpu_events array of maps, so that CPUs dropping at once never contend
 * on one ring's lock and producer position (with one shared ring, two
 * senders made record's per-drop cost 4.9x the floor on 2 CPUs, 95x with
 * 15 on 16). Kernels that refuse a ring buffer inside an array of maps
 * keep the one shared ring (probed before loading).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "tracer.h"
#include "tracer_internal.h"
#include "udpdrop.skel.h"

/* The shared ring's default (kernels without per-CPU rings): 16 MiB,
 * ~190,000 events of 88 B, a fraction of a second of a storm while the
 * writer compresses a block. */
#define SHARED_RING_BYTES (16u << 20)
/*
 * Per-CPU rings: the same 16 MiB in all, split among the CPUs (8 MiB
 * each on 2 CPUs: a CPU alone holds what the shared ring held for it),
 * but never under 256 KiB a CPU (~3,000 events: 3 ms of one CPU's storm
 * at the 1 M drops/s a CPU reaches, more than a wake-up and a drain
 * take), so the total grows past 16 MiB only beyond 64 CPUs.
 */
#define PER_CPU_TOTAL_BYTES (16u << 20)
#define PER_CPU_MIN_BYTES (256u << 10)

uint32_t tracer__event_ring_default(int ncpus)
{
	uint32_t per = PER_CPU_TOTAL_BYTES / (ncpus > 0 ? (uint32_t)ncpus : 1u), p = 1;

	if (per < PER_CPU_MIN_BYTES)
		per = PER_CPU_MIN_BYTES;
	while (p < per)
		p <<= 1;
	return p;
}

/*
 * Does this kernel take a ring buffer inside an array of maps? Since 5.10
 * (ringbuf_map_ops has map_meta_equal, which bpf_map_meta_alloc requires
 * of an inner map) it does. UDPDROP_SHARED_RING=1: act as a kernel that
 * does not (tests and the benchmark compare the two).
 */
static bool kernel_takes_ring_in_array(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, outer);
	int inner, fd;

	if (getenv("UDPDROP_SHARED_RING"))
		return false;
	inner = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ud_probe_rb", 0, 0,
			       (uint32_t)getpagesize(), NULL);
	if (inner < 0)
		return false;
	outer.inner_map_fd = inner;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "ud_probe_rbs", sizeof(uint32_t),
			    sizeof(uint32_t), 1, &outer);
	close(inner);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* (a zeroed tracer has none open: fd 0 is never closed by mistake) */
static void close_template(struct tracer *t)
{
	if (t->ev_template_open)
		close(t->ev_template_fd);
	t->ev_template_open = false;
}

/* the filling thread's end, once (its result stays in ev_fill_err) */
static void fill_wait(struct tracer *t)
{
	if (t->ev_filling)
		pthread_join(t->ev_fill_thread, NULL);
	t->ev_filling = false;
}

void tracer_events_free(struct tracer *t)
{
	fill_wait(t);
	if (t->ev_array_open)
		close(t->ev_array_fd);
	t->ev_array_open = false;
	close_template(t);
	for (int i = 0; i < t->nev; i++)
		if (t->ev_fds[i] >= 0)
			close(t->ev_fds[i]);
	free(t->ev_fds);
	t->ev_fds = NULL;
	t->nev = 0;
	t->ev_per_cpu = false;
}

/*
 * The per-CPU rings, made once (a variant that fails to load leaves them
 * for the next): 0, or -errno when the kernel cannot give them (memory).
 */
static int make_rings(struct tracer *t, uint32_t bytes)
{
	if (t->ev_fds)
		return 0;
	t->ev_fds = malloc(t->ncpus * sizeof(*t->ev_fds));
	if (!t->ev_fds)
		return -ENOMEM;
	for (t->nev = 0; t->nev < t->ncpus; t->nev++) {
		char name[16];
		int fd;

		snprintf(name, sizeof(name), "ud_ev%u", (unsigned)t->nev & 0xffffff);
		fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, name, 0, 0, bytes, NULL);
		if (fd < 0) {
			int err = -errno;

			tracer_events_free(t);
			return err;
		}
		t->ev_fds[t->nev] = fd;
	}
	return 0;
}

/*
 * Each CPU's ring into its slot of the array: 0 or -errno. In one batch
 * where the kernel supports one for arrays of maps, else slot by slot.
 * The kernel waits for an RCU grace period after each update of a map of
 * maps from user space (10 to 20 ms here), even of one no program uses
 * yet: a 16-CPU machine would wait 16 of them, slot by slot.
 */
static int fill_array(struct tracer *t, int array_fd)
{
	uint32_t *keys = calloc(t->nev, sizeof(*keys));
	uint32_t count = t->nev;
	int err;

	if (!keys)
		return -ENOMEM;
	for (uint32_t cpu = 0; cpu < (uint32_t)t->nev; cpu++)
		keys[cpu] = cpu;
	err = bpf_map_update_batch(array_fd, keys, t->ev_fds, &count, NULL) ? -errno : 0;
	free(keys);
	if (!err && count == (uint32_t)t->nev)
		return 0;
	for (uint32_t cpu = 0; cpu < (uint32_t)t->nev; cpu++)
		if (bpf_map_update_elem(array_fd, &cpu, &t->ev_fds[cpu], BPF_ANY))
			return -errno;
	return 0;
}

static void *fill_thread(void *arg)
{
	struct tracer *t = arg;

	t->ev_fill_err = fill_array(t, t->ev_array_fd);
	return NULL;
}

/*
 * The array of the rings, made here rather than by libbpf, so that it
 * can be filled before the programs are attached but without making the
 * start-up wait for the grace period: a thread fills it while the
 * verifier runs (tracer_events_install waits for it). Made and filled
 * once; a variant that fails to load leaves it for the next.
 */
static int make_array(struct tracer *t)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .inner_map_fd = t->ev_fds[0]);
	int fd;

	if (t->ev_array_open)
		return 0;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "cpu_events", sizeof(uint32_t),
			    sizeof(uint32_t), (uint32_t)t->nev, &opts);
	if (fd < 0)
		return -errno;
	t->ev_array_fd = fd;
	t->ev_array_open = true;
	if (pthread_create(&t->ev_fill_thread, NULL, fill_thread, t) == 0)
		t->ev_filling = true;
	else
		t->ev_fill_err = fill_array(t, t->ev_array_fd);
	return 0;
}

/*
 * The events one CPU sends between two wake-ups of the reader: a quarter
 * of a ring of ring_bytes (each event with its 8-byte ring header,
 * 8-aligned), shared by `writers` CPUs (the shared ring: every CPU counts
 * only its own, and all together must not fill it unseen); at least 1.
 */
static uint32_t event_wakeup_count(uint32_t ring_bytes, uint32_t cap_len, int writers)
{
	uint32_t rec = (BPF_RINGBUF_HDR_SZ + sizeof(struct ud_event) + cap_len + 7) & ~7u;
	uint32_t n = ring_bytes / 4 / rec / (uint32_t)(writers > 0 ? writers : 1);

	return n ? n : 1;
}

void tracer_events_size(struct tracer *t, struct udpdrop_bpf *skel, const struct tracer_opts *o)
{
	uint32_t page = (uint32_t)getpagesize();
	uint32_t ring = page;

	if (o->events && !t->ev_per_cpu_probed) {
		t->ev_per_cpu_probed = true;
		t->ev_per_cpu = kernel_takes_ring_in_array();
		if (t->ev_per_cpu) {
			uint32_t bytes = o->ring_bytes ? o->ring_bytes
					 : tracer__event_ring_default(t->ncpus);
			int err = make_rings(t, bytes);

			if (!err)
				err = make_array(t);
			if (err) {
				tracer_events_free(t);
				pr_info("cannot make %d event rings of %u KiB (%s): one shared ring\n",
					t->ncpus, bytes >> 10, strerror(-err));
				t->ev_per_cpu = false;
			} else {
				t->ev_ring_bytes = bytes;
			}
		} else {
			pr_info("this kernel takes no ring buffer in an array of maps: one event ring shared by the CPUs\n");
		}
	}
	if (o->events && !t->ev_per_cpu) {
		ring = o->ring_bytes ? o->ring_bytes : SHARED_RING_BYTES;
		t->ev_ring_bytes = ring;
	}
	skel->rodata->per_cpu_events = t->ev_per_cpu;
	/* the ring is a page when unused: top and the others pay no memory */
	bpf_map__set_max_entries(skel->maps.events, ring);
	/*
	 * A quarter of a ring's worth of events wakes the reader: with room
	 * to spare (the programs count each CPU's events, not the backlog).
	 */
	skel->rodata->wakeup_events =
		t->ev_per_cpu ? event_wakeup_count(t->ev_ring_bytes, skel->rodata->cap_len, 1)
			      : event_wakeup_count(ring, skel->rodata->cap_len, t->ncpus);
	/*
	 * Per-CPU rings: the array made above, in place of libbpf's. Else
	 * the array is unused (the programs name it, so it is made all the
	 * same): a one-slot array of plain arrays, which every kernel takes,
	 * its inner maps' template given by fd (libbpf 1.1 cannot resize the
	 * one it would make from BTF).
	 */
	close_template(t);
	/* UDPDROP_LIBBPF_EVENT_ARRAY=1 (tests only): as if the skeleton
	 * could not take ours */
	t->ev_array_used = t->ev_per_cpu && t->ev_array_open &&
			   !getenv("UDPDROP_LIBBPF_EVENT_ARRAY") &&
			   !bpf_map__reuse_fd(skel->maps.cpu_events, t->ev_array_fd);
	if (t->ev_per_cpu && !t->ev_array_used) {
		/* not ours after all: libbpf's, filled after the load */
		bpf_map__set_max_entries(skel->maps.cpu_events, t->ncpus);
		bpf_map__set_inner_map_fd(skel->maps.cpu_events, t->ev_fds[0]);
	} else if (!t->ev_per_cpu) {
		int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ud_ev_none", sizeof(uint32_t),
					sizeof(uint32_t), 1, NULL);

		bpf_map__set_max_entries(skel->maps.cpu_events, 1);
		if (fd >= 0) {
			t->ev_template_fd = fd;
			t->ev_template_open = true;
			bpf_map__set_inner_map_fd(skel->maps.cpu_events, fd);
		}
	}
}

int tracer_events_install(struct tracer *t, struct udpdrop_bpf *skel)
{
	close_template(t);
	if (!t->ev_per_cpu)
		return 0;
	if (!t->ev_array_used) {
		/* libbpf's array after all (tracer_events_size): ours goes */
		fill_wait(t);
		if (t->ev_array_open)
			close(t->ev_array_fd);
		t->ev_array_open = false;
		return fill_array(t, bpf_map__fd(skel->maps.cpu_events));
	}
	fill_wait(t);
	/* a failure (memory) is tried again, once per variant, as before */
	if (t->ev_fill_err)
		t->ev_fill_err = fill_array(t, t->ev_array_fd);
	return t->ev_fill_err;
}

int tracer__event_rings(struct tracer *t, const int **fds)
{
	if (!t->skel)
		return -EINVAL;
	if (t->ev_per_cpu) {
		*fds = t->ev_fds;
		return t->nev;
	}
	t->ev_shared_fd = bpf_map__fd(t->skel->maps.events);
	*fds = &t->ev_shared_fd;
	return 1;
}
