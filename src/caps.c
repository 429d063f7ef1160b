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
	 * Tracing programs need CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN);
	 * entering other netns to read their counters needs CAP_SYS_ADMIN.
	 */
	if (have(d, CAP_SYS_ADMIN))
		return 0;
	if (!have(d, CAP_BPF))
		snprintf(missing + strlen(missing), len - strlen(missing), "CAP_BPF");
	if (!have(d, CAP_PERFMON))
		snprintf(missing + strlen(missing), len - strlen(missing), "%sCAP_PERFMON",
			 missing[0] ? ", " : "");
	snprintf(missing + strlen(missing), len - strlen(missing), "%sCAP_SYS_ADMIN",
		 missing[0] ? ", " : "");
	return -1;
}
