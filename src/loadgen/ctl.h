/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The control channel between `udpdrop gen` and `udpdrop sink`, as iperf3
 * has one: TCP to the sink's UDP port number, one text line per message,
 *
 *     UDPDROP1 TYPE key=value key=value ...\n
 *
 * keys [a-z0-9_.], values without spaces (numbers, mostly). Text so a
 * person can follow a run with tcpdump -A. The exchange:
 *
 *   gen  -> sink  HELLO  run= flows= size= pps= count= duration= gso= family=
 *   sink -> gen   READY  run= rcvbuf= rcvbuf_asked= xdp=0|1 tracer=0|1
 *   (gen sends the datagrams)
 *   gen  -> sink  DONE   flows= f<i>.sent= f<i>.sender_drops= snd.<cause>= ...
 *   sink -> gen   LEDGER (ledger__to_msg: the whole ledger)
 *   sink -> gen   ERROR  msg=<percent-encoded>   (instead of any reply)
 */
#ifndef UD_CTL_H
#define UD_CTL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define CTL_MAGIC "UDPDROP1"
#define CTL_LINE_MAX (256 * 1024)
#define CTL_MAX_KEYS 16384   /* a LEDGER of 1024 flows has about 10,300 */
#define CTL_SEND_MS 5000     /* a peer that does not read for this long is gone */

struct ctl_kv {
	char *key, *val;
};

struct ctl_msg {
	char type[16];
	struct ctl_kv *kv;
	int n, cap;
};

void ctl_msg__init(struct ctl_msg *m, const char *type);
void ctl_msg__free(struct ctl_msg *m);
/* Setters replace an existing key. */
void ctl_msg__set(struct ctl_msg *m, const char *key, const char *val);
void ctl_msg__set_u64(struct ctl_msg *m, const char *key, uint64_t v);
void ctl_msg__set_double(struct ctl_msg *m, const char *key, double v);
/* NULL / -ENOENT when absent, -EINVAL when not a number. */
const char *ctl_msg__get(const struct ctl_msg *m, const char *key);
int ctl_msg__get_u64(const struct ctl_msg *m, const char *key, uint64_t *v);
int ctl_msg__get_double(const struct ctl_msg *m, const char *key, double *v);

/* One line without the newline, and back; parse: 0 or -EINVAL (not ours,
 * malformed, more than CTL_MAX_KEYS keys), -EPROTO for another protocol
 * version. A key given twice: the first counts (parsing stays linear). */
char *ctl_msg__format(const struct ctl_msg *m);
int ctl_msg__parse(const char *line, struct ctl_msg *m);

/* TCP. Listen with SO_REUSEADDR; connect/accept/recv wait at most
 * timeout_ms (-1: forever) and return -ETIMEDOUT; all return a
 * negative errno on failure. A peer that closes early: -ECONNRESET.
 * ctl_send waits at most CTL_SEND_MS for a peer that does not read
 * (-ETIMEDOUT); a signal interrupts recv and send: -EINTR. */
int ctl_listen(const struct sockaddr *addr, socklen_t len);
int ctl_accept(int lfd, int timeout_ms);
int ctl_connect(const struct sockaddr *addr, socklen_t len, int timeout_ms);
int ctl_send(int fd, const struct ctl_msg *m);
int ctl_recv(int fd, struct ctl_msg *m, int timeout_ms);

#endif
