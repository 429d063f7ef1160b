/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * udpdrop report --pcap: a trace's dropped packets (the EVENT records'
 * captured headers) as a pcapng file for tshark, tcpdump and Wireshark,
 * each packet commented with its cause, kernel reason, socket and drop
 * location.
 */
#ifndef UD_REPORT_PCAP_H
#define UD_REPORT_PCAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "trace.h"

struct report_pcap_stats {
	uint64_t events;  /* EVENT records read */
	uint64_t packets; /* written: the events with headers */
	uint64_t skipped; /* events recorded without headers (caplen 0) */
	enum trace_status status; /* how the trace ended */
};

/*
 * Write the EVENT records of the trace at `trace` to the pcapng file
 * `out` (mode 0600: packet headers). The trace is read twice, never held
 * in memory: once for its context (META, REASONS, SYMBOLS, which may come
 * after the events they name), once for the packets; `out` is opened
 * (out_file__open) only after the first pass read the whole trace, so a
 * corrupt one never touches it. An existing regular `out` is refused
 * unless force, then written in place (its mode and owner kept); a FIFO or
 * character device is written through; other types are refused. On an
 * error after the open, a file made here is removed and one given with
 * force is left empty. Errors, and the one-line summary on success, go to
 * msgs as "who: ...".
 *
 * Returns an exit code: EXIT_OK (also for a trace cut short: what is
 * there is written, and msgs says so), EXIT_FAIL, or EXIT_USAGE (out
 * exists, or is a directory, block device or socket). stats (may be NULL)
 * is filled as far as the export got.
 */
int report_pcap__export(const char *trace, const char *out, bool force,
			const char *who, FILE *msgs,
			struct report_pcap_stats *stats);

/* The packet comment for one event, as report_pcap__export writes it
 * (names from the trace's REASONS and SYMBOLS, NULL if unknown). */
void report_pcap__comment(char *buf, size_t len, const struct trace_event *e,
			  const char *reason_name, const char *location_name);

/*
 * META boot_time ("%.9f" realtime seconds of CLOCK_MONOTONIC 0) in
 * nanoseconds, exactly (a double would lose the nanoseconds). -EINVAL
 * when s is not such a number.
 */
int report_pcap__parse_boot_time(const char *s, uint64_t *ns);

#endif
