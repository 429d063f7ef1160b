// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The BPF object this kernel loads. bpf/udpdrop.bpf.c is built twice
 * (Makefile): udpdrop.bpf.o reads packet headers in place with a kfunc,
 * bpf_rdonly_cast (6.2+), which turns each read into a plain load the
 * verifier makes fault-safe; udpdrop_compat.bpf.o copies them with
 * bpf_probe_read_kernel, a helper call per header (with record, about a
 * sixth of an event's cost). Both open through the one skeleton
 * (udpdrop_bpf): only the ELF bytes it hands libbpf differ, and the build
 * checks that the two lay out maps, programs and globals alike.
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/libbpf.h>
#include "tracer_internal.h"
#include "udpdrop.skel.h"
#include "udpdrop_compat.skel.h"

struct udpdrop_bpf *tracer_object_open(bool kfuncs)
{
	struct udpdrop_bpf *obj = calloc(1, sizeof(*obj));
	int err;

	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	err = udpdrop_bpf__create_skeleton(obj);
	if (!err && !kfuncs)
		obj->skeleton->data = (void *)udpdrop_compat_bpf__elf_bytes(&obj->skeleton->data_sz);
	if (!err)
		err = bpf_object__open_skeleton(obj->skeleton, NULL);
	if (err) {
		udpdrop_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}
