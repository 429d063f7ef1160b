// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop gen's side of the control channel (ctl.h): HELLO and the sink's
 * READY before the first datagram; DONE with the sender's counts, and the
 * sink's LEDGER, after the last.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "causes.h"
#include "cli.h"
#include "ctl.h"
#include "gen_internal.h"
#include "ledger.h"
#include "units.h"

#define CONNECT_MS 3000
#define READY_MS 5000
#define LEDGER_MS 10000

static int ctl_fail(struct gen *g, const char *what, int err)
{
	if (err == -EINTR && gen_stop_signal) {
		fprintf(stderr, WHO ": interrupted\n");
		return EXIT_OK;
	}
	fprintf(stderr, WHO ": %s %s: %s; is `udpdrop sink %s` running there? (--no-control sends without it)\n",
		what, g->dst_str, err == -ETIMEDOUT ? "no answer" : strerror(-err),
		g->dst_str);
	return EXIT_FAIL;
}

int gen_ctl_hello(struct gen *g)
{
	struct ctl_msg m;
	uint64_t run;
	int err, fd;

	fd = ctl_connect((struct sockaddr *)&g->dst, g->dstlen, CONNECT_MS);
	if (fd < 0)
		return ctl_fail(g, "no control channel (TCP) at", fd);
	g->ctl = fd;
	ctl_msg__init(&m, "HELLO");
	ctl_msg__set_u64(&m, "run", g->run);
	ctl_msg__set_u64(&m, "flows", g->nflows);
	ctl_msg__set_u64(&m, "size", g->o.size);
	ctl_msg__set_double(&m, "pps", g->pps);
	ctl_msg__set_u64(&m, "count", g->o.count);
	ctl_msg__set_double(&m, "duration", g->o.count ? 0 : g->o.duration);
	ctl_msg__set_u64(&m, "gso", g->o.gso);
	ctl_msg__set_u64(&m, "family", gen_is_v6(g) ? 6 : 4);
	ctl_msg__set_u64(&m, "burst", g->o.burst);
	err = ctl_send(fd, &m);
	ctl_msg__free(&m);
	if (err)
		return ctl_fail(g, "the control channel to", err);
	err = ctl_recv(fd, &m, READY_MS);
	if (err) {
		ctl_msg__free(&m);
		return ctl_fail(g, "no READY from", err);
	}
	if (!strcmp(m.type, "ERROR")) {
		const char *msg = ctl_msg__get(&m, "msg");

		fprintf(stderr, WHO ": the sink at %s refused the run: %s\n", g->dst_str,
			msg ? msg : "(no reason given)");
		ctl_msg__free(&m);
		return EXIT_FAIL;
	}
	if (strcmp(m.type, "READY") || ctl_msg__get_u64(&m, "run", &run) || run != g->run) {
		fprintf(stderr, WHO ": the sink at %s answered HELLO with %s, not READY for run %u\n",
			g->dst_str, m.type, g->run);
		ctl_msg__free(&m);
		return EXIT_FAIL;
	}
	if (!g->o.json) {
		uint64_t rcvbuf = 0, xdp = 0, tracer = 0;
		char b[32];

		ctl_msg__get_u64(&m, "rcvbuf", &rcvbuf);
		ctl_msg__get_u64(&m, "xdp", &xdp);
		ctl_msg__get_u64(&m, "tracer", &tracer);
		fmt_bytes(b, sizeof(b), rcvbuf);
		printf(WHO ": sink ready: rcvbuf %s, XDP %s, tracer %s\n", b,
		       xdp ? "on" : "off", tracer ? "on" : "off");
	}
	ctl_msg__free(&m);
	return 0;
}

/* ctl_fail for gen_ctl_done: 1 when it was a Ctrl-C, else -EXIT_FAIL. */
static int done_fail(struct gen *g, const char *what, int err)
{
	return ctl_fail(g, what, err) ? -EXIT_FAIL : 1;
}

/*
 * DONE with the sender's counts, then the sink's LEDGER into l. 0 with
 * the ledger; 1 without, interrupted (a Ctrl-C while waiting for the
 * ledger: not an error, the sink has the counts); or -EXIT_FAIL after one
 * line on stderr (also when sending DONE failed or was interrupted: ctl_send
 * gives up on a sink that stops reading, and returns at a signal).
 */
int gen_ctl_done(struct gen *g, struct ledger *l)
{
	struct ctl_msg m;
	uint64_t refused = 0;
	char key[48];
	int err;

	ctl_msg__init(&m, "DONE");
	ctl_msg__set_u64(&m, "run", g->run);
	ctl_msg__set_u64(&m, "flows", g->nflows);
	for (int i = 0; i < g->nflows; i++) {
		snprintf(key, sizeof(key), "f%d.sent", i);
		ctl_msg__set_u64(&m, key, g->flows[i].seq);
		snprintf(key, sizeof(key), "f%d.sender_drops", i);
		ctl_msg__set_u64(&m, key, gen_flow_snd_drops(g, &g->flows[i]));
		refused += g->flows[i].refused;
	}
	ctl_msg__set_u64(&m, "snd_errors", refused);
	ctl_msg__set_u64(&m, "sender_tracer", g->tracer);
	for (int c = 0; c < CAUSE_MAX; c++)
		if (g->snd_cause[c]) {
			snprintf(key, sizeof(key), "snd.%s", cause__name(c));
			ctl_msg__set_u64(&m, key, g->snd_cause[c]);
		}
	ctl_msg__set_double(&m, "seconds", g->elapsed);
	err = ctl_send(g->ctl, &m);
	ctl_msg__free(&m);
	if (err) {
		/* a sink that stops reading, or a signal (Ctrl-C, -EINTR):
		 * either way it has not got the counts, so no ledger will
		 * come; a failure, not a stop, whatever ended it */
		fprintf(stderr, WHO ": the control channel failed: sending DONE to %s: %s; the sink did not get this run's counts, no ledger (the sender's side follows)\n",
			g->dst_str, err == -EINTR ? "interrupted" :
			err == -ETIMEDOUT ? "the sink stopped reading" : strerror(-err));
		return -EXIT_FAIL;
	}
	/* the Ctrl-C that ended the run must not also end this wait */
	gen_stop_signal = 0;
	err = ctl_recv(g->ctl, &m, LEDGER_MS);
	if (err == -EINTR) {
		ctl_msg__free(&m);
		fprintf(stderr, WHO ": interrupted while waiting for the sink's ledger\n");
		return 1;
	}
	if (err) {
		ctl_msg__free(&m);
		return done_fail(g, "no LEDGER from", err);
	}
	if (!strcmp(m.type, "ERROR")) {
		const char *msg = ctl_msg__get(&m, "msg");

		fprintf(stderr, WHO ": the sink at %s: %s\n", g->dst_str, msg ? msg : "error");
		ctl_msg__free(&m);
		return -EXIT_FAIL;
	}
	err = strcmp(m.type, "LEDGER") ? -EPROTO : ledger__from_msg(l, &m);
	ctl_msg__free(&m);
	if (err) {
		fprintf(stderr, WHO ": the sink at %s sent a ledger this version cannot read (%s)\n",
			g->dst_str, strerror(-err));
		return -EXIT_FAIL;
	}
	return 0;
}
