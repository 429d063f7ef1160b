/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Privileges: the check before touching BPF, so the error names what is
 * missing; and, for a run that has enough to trace, the parts it cannot do
 * with the capabilities it has (each said once at the start, and in JSON).
 */
#ifndef UD_CAPS_H
#define UD_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json;
struct ksyms;

/* 0 if we may load tracing BPF; else fills `missing` ("CAP_BPF, CAP_PERFMON"). */
int caps__check_bpf(char *missing, size_t len);
/*
 * 0 if we may load and attach XDP (sink --xdp): CAP_BPF + CAP_PERFMON (or
 * CAP_SYS_ADMIN) and CAP_NET_ADMIN; else fills `missing`.
 */
int caps__check_xdp(char *missing, size_t len);
/* Is cap (CAP_*) in the effective set? */
bool caps__have(int cap);
/* Does process pid hold cap in its effective set (/proc/PID/status
 * CapEff)? 1 or 0; -1 when it cannot be read (gone, no permission). */
int caps__of_pid(int pid, int cap);

/* What a tracing run may lack beyond caps__check_bpf. */
enum caps_part {
	CAPS_SYMBOLS, /* drop locations' function names (/proc/kallsyms addresses) */
	CAPS_NETNS,   /* other network namespaces: counters, sockets, sysctls (setns) */
	CAPS_OWNERS,  /* the processes behind other users' sockets (/proc/PID/fd) */
	CAPS_NPARTS,
};

struct caps_scope {
	const struct ksyms *ks; /* the model's symbols, read (NULL: none) */
	/* the run looks at network namespaces other than its own (top's
	 * default of all of them, or -N naming another) */
	bool other_netns;
	const char *netns_spec; /* -N as given, for the message (NULL: all) */
	bool owners;            /* the run names the processes behind sockets */
	bool locations;         /* the run shows drop locations (top, record, doctor) */
};

/*
 * Look at what this process may do in that scope, and keep it for
 * caps__warn, caps__json and caps__list (one survey per process).
 */
void caps__survey(const struct caps_scope *s);
/*
 * One line on stderr per part unavailable: what is lost, what it needs,
 * what to do ("udpdrop: without CAP_SYSLOG ..."). `who` starts the line.
 */
void caps__warn(const char *who);
/*
 * "unavailable": [{"part", "needs", "lost"}...] into an open object: []
 * when nothing is, or no survey was made.
 */
void caps__json(struct json *j);
/* "symbols:CAP_SYSLOG,netns:CAP_SYS_ADMIN" ("" for none), for META. */
void caps__list(char *buf, size_t len);
/* The part's name in JSON and META ("symbols", "netns", "owners"). */
const char *caps__part_name(enum caps_part p);
/* Is the part unavailable (after caps__survey)? */
bool caps__unavailable(enum caps_part p);

#endif
