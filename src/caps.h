/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Privilege check before touching BPF, so the error names what is missing. */
#ifndef UD_CAPS_H
#define UD_CAPS_H

#include <stddef.h>

/* 0 if we may load tracing BPF; else fills `missing` ("CAP_BPF, CAP_PERFMON"). */
int caps__check_bpf(char *missing, size_t len);

#endif
