// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <linux/capability.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "caps.h"
#include "json.h"
#include "ksyms.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* The effective set, or 0 when capget fails (then nothing is claimed). */
static uint64_t effective(bool *ok)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	*ok = !syscall(SYS_capget, &h, d);
	if (!*ok)
		return 0;
	return (uint64_t)d[1].effective << 32 | d[0].effective;
}

static bool in(uint64_t set, int cap)
{
	return set & (1ull << cap);
}

bool caps__have(int cap)
{
	bool ok;

	return in(effective(&ok), cap);
}

int caps__of_pid(int pid, int cap)
{
	char path[48], line[128];
	unsigned long long eff;
	int ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	/* one line at a time; a longer one is read on in pieces, none CapEff */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			ret = cap >= 0 && cap < 64 && (eff >> cap & 1);
			break;
		}
	fclose(f);
	return ret;
}

int caps__check_bpf(char *missing, size_t len)
{
	bool ok;
	uint64_t e = effective(&ok);

	missing[0] = '\0';
	if (!ok) {
		snprintf(missing, len, "capabilities (capget failed)");
		return -1;
	}
	/*
	 * Tracing programs need CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN).
	 * What else a run would like (other netns, symbols, owners) it does
	 * without, and says so: caps__survey.
	 */
	if (in(e, CAP_SYS_ADMIN) || (in(e, CAP_BPF) && in(e, CAP_PERFMON)))
		return 0;
	snprintf(missing, len, "CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)");
	return -1;
}

int caps__check_xdp(char *missing, size_t len)
{
	bool ok;
	uint64_t e = effective(&ok);

	missing[0] = '\0';
	if (!ok) {
		snprintf(missing, len, "capabilities (capget failed)");
		return -1;
	}
	/*
	 * Loading the program: CAP_BPF, and CAP_PERFMON for its packet
	 * pointer arithmetic (the verifier's "!root" rules), or CAP_SYS_ADMIN
	 * for both; attaching it to a device: CAP_NET_ADMIN.
	 */
	if ((in(e, CAP_SYS_ADMIN) || (in(e, CAP_BPF) && in(e, CAP_PERFMON))) &&
	    in(e, CAP_NET_ADMIN))
		return 0;
	snprintf(missing, len, "CAP_BPF, CAP_PERFMON (or CAP_SYS_ADMIN for both) and CAP_NET_ADMIN");
	return -1;
}

/* ---- the survey ----------------------------------------------------- */

static const char *const part_names[CAPS_NPARTS] = {
	[CAPS_SYMBOLS] = "symbols",
	[CAPS_NETNS] = "netns",
	[CAPS_OWNERS] = "owners",
};

static struct {
	bool off[CAPS_NPARTS];
	char needs[CAPS_NPARTS][64];
	char lost[CAPS_NPARTS][160];
	char line[CAPS_NPARTS][480];
} survey;

const char *caps__part_name(enum caps_part p)
{
	return p < CAPS_NPARTS ? part_names[p] : "?";
}

bool caps__unavailable(enum caps_part p)
{
	return p < CAPS_NPARTS && survey.off[p];
}

/* A small integer sysctl, -1 if it cannot be read. */
static int sysctl_int(const char *path)
{
	FILE *f = fopen(path, "re");
	int v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static void set_part(enum caps_part p, const char *needs, const char *lost)
{
	survey.off[p] = true;
	snprintf(survey.needs[p], sizeof(survey.needs[p]), "%s", needs);
	snprintf(survey.lost[p], sizeof(survey.lost[p]), "%s", lost);
}

/*
 * /proc/kallsyms shows addresses to a reader with CAP_SYSLOG when
 * kernel.kptr_restrict is 0 or 1, and to everyone at 0 when
 * kernel.perf_event_paranoid <= 1; at 2 to no one.
 */
static void survey_symbols(const struct ksyms *ks, bool locations)
{
	int restrict_, paranoid;
	bool lost;
	char why[160], *line = survey.line[CAPS_SYMBOLS];
	const char *what;

	if (!ks || !ks->hidden)
		return;
	lost = ksyms__lost(ks) > 0;
	if (!lost && !locations)
		return; /* nothing this run shows is missing */
	restrict_ = sysctl_int("/proc/sys/kernel/kptr_restrict");
	paranoid = sysctl_int("/proc/sys/kernel/perf_event_paranoid");
	what = lost ?
		"drop locations show as addresses, and drops of a closing socket's queue as cause other (the kernel did not give the close-time functions' addresses either)" :
		"drop locations show as addresses, not function names (causes are not affected)";
	if (restrict_ >= 2) {
		set_part(CAPS_SYMBOLS, "kernel.kptr_restrict<=1", lost ?
			 "function names of drop locations; the socket_close cause" :
			 "function names of drop locations");
		snprintf(why, sizeof(why), "kernel.kptr_restrict=2 hides kernel addresses in /proc/kallsyms even from root");
		snprintf(line, sizeof(survey.line[0]), "%s: %s; set it to 1 (sysctl -w kernel.kptr_restrict=1) and run as root for names", why, what);
		return;
	}
	set_part(CAPS_SYMBOLS, "CAP_SYSLOG", lost ?
		 "function names of drop locations; the socket_close cause" :
		 "function names of drop locations");
	snprintf(why, sizeof(why), "without CAP_SYSLOG /proc/kallsyms hides kernel addresses (kernel.kptr_restrict=%d, kernel.perf_event_paranoid=%d)",
		 restrict_, paranoid);
	snprintf(line, sizeof(survey.line[0]), "%s: %s; run as root (or add CAP_SYSLOG) for names", why, what);
}

void caps__survey(const struct caps_scope *s)
{
	bool ok;
	uint64_t e = effective(&ok);

	memset(&survey, 0, sizeof(survey));
	if (!ok)
		return; /* nothing known: nothing claimed */
	if (s->ks)
		survey_symbols(s->ks, s->locations);
	/* setns(CLONE_NEWNET) wants CAP_SYS_ADMIN, in both user namespaces */
	if (s->other_netns && !in(e, CAP_SYS_ADMIN)) {
		set_part(CAPS_NETNS, "CAP_SYS_ADMIN",
			 "sockets' addresses and owners, where closing sockets' queue drops belong, kernel counters (reconciliation) and sysctls of other network namespaces");
		if (s->netns_spec)
			snprintf(survey.line[CAPS_NETNS], sizeof(survey.line[0]),
				 "without CAP_SYS_ADMIN netns %s cannot be entered: its sockets show ? for addresses and no owner, drops of its closing sockets' queues cannot be placed in it (left out), and its kernel counters (the reconciliation) and sysctls are missing; run as root",
				 s->netns_spec);
		else
			snprintf(survey.line[CAPS_NETNS], sizeof(survey.line[0]),
				 "without CAP_SYS_ADMIN other network namespaces cannot be entered: their sockets show ? for addresses and no owner, drops of their closing sockets' queues show netns 0, and their kernel counters (the reconciliation) and sysctls are missing; run as root");
	}
	/*
	 * The owner of a socket is whoever holds its fd: /proc/PID/fd, whose
	 * links need ptrace read access (CAP_SYS_PTRACE for processes of other
	 * users, or with capabilities udpdrop lacks), and whose directory a
	 * user other than root may not even list without CAP_DAC_READ_SEARCH.
	 */
	if (s->owners) {
		bool ptrace = in(e, CAP_SYS_PTRACE);
		bool list = !geteuid() || in(e, CAP_DAC_READ_SEARCH) || in(e, CAP_DAC_OVERRIDE);

		if (!ptrace || !list) {
			char needs[64];

			snprintf(needs, sizeof(needs), "%s%s%s", ptrace ? "" : "CAP_SYS_PTRACE",
				 !ptrace && !list ? " and " : "", list ? "" : "CAP_DAC_READ_SEARCH");
			set_part(CAPS_OWNERS, needs,
				 "the owning process (PID/COMM) of sockets held by other users' processes, or by processes with more capabilities");
			snprintf(survey.line[CAPS_OWNERS], sizeof(survey.line[0]),
				 "without %s the /proc/PID/fd of other users' processes (and of processes with more capabilities) cannot be read: their sockets show no owner (PID/COMM); run as root",
				 needs);
		}
	}
}

void caps__warn(const char *who)
{
	for (int p = 0; p < CAPS_NPARTS; p++)
		if (survey.off[p])
			fprintf(stderr, "%s: %s\n", who, survey.line[p]);
}

void caps__json(struct json *j)
{
	json_key(j, "unavailable");
	json_arr_begin(j);
	for (int p = 0; p < CAPS_NPARTS; p++) {
		if (!survey.off[p])
			continue;
		json_obj_begin(j);
		json_key(j, "part");
		json_str(j, part_names[p]);
		json_key(j, "needs");
		json_str(j, survey.needs[p]);
		json_key(j, "lost");
		json_str(j, survey.lost[p]);
		json_obj_end(j);
	}
	json_arr_end(j);
}

void caps__list(char *buf, size_t len)
{
	size_t n = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (int p = 0; p < CAPS_NPARTS; p++) {
		int w;

		if (!survey.off[p])
			continue;
		w = snprintf(buf + n, len - n, "%s%s:%s", n ? "," : "", part_names[p],
			     survey.needs[p]);
		if (w < 0 || (size_t)w >= len - n)
			return; /* cut: what fits */
		n += w;
	}
}
