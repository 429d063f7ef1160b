// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <linux/capability.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "caps.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool have(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

int caps__check_bpf(char *missing, size_t len)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	missing[0] = '\0';
	if (syscall(SYS_capget, &h, d)) {
		snprintf(missing, len, "capabilities (capget failed)");
		return -1;
	}
	/*
	 * Tracing programs need CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN).
	 * Entering other netns to read their counters and sockets needs
	 * CAP_SYS_ADMIN too; without it those reads fail and say so (-v).
	 */
	if (have(d, CAP_SYS_ADMIN) || (have(d, CAP_BPF) && have(d, CAP_PERFMON)))
		return 0;
	snprintf(missing, len, "CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)");
	return -1;
}
