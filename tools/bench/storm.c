// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench-storm: a loopback UDP drop storm for the benchmark.
 *
 *   bench-storm [-p PORT] [-t SECONDS] [-r RCVBUF] [-s BYTES] [-b BATCH]
 *
 * Binds a receiver on 127.0.0.1:PORT with a small SO_RCVBUF and never reads
 * it while a sender floods it with sendmmsg() for SECONDS: once the queue
 * is full every datagram is a receive-buffer drop (SKB_DROP_REASON_
 * SOCKET_RCVBUFF) on loopback. Afterwards the receiver drains its queue
 * (so closing it frees nothing), and one line says what happened:
 *
 *   storm: port=P seconds=T sent=N rate=R received=Q dropped=D sk_drops=K send_errors=E
 *
 * dropped = sent - received (every loss, wherever it happened);
 * sk_drops = the socket's own drop counter (SO_MEMINFO), the rcvbuf drops.
 * Only loopback is ever used. Build: cc -O2 -o .output/bench-storm tools/bench/storm.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif

#define MAX_BATCH 1024

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long arg_num(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		fprintf(stderr, "bench-storm: bad %s '%s' (%ld..%ld)\n", what, s, lo, hi);
		exit(2);
	}
	return v;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: bench-storm [-p PORT] [-t SECONDS] [-r RCVBUF] [-s BYTES] [-b BATCH]\n"
		   "  -p PORT     receiver port on 127.0.0.1 (default 0: any free port)\n"
		   "  -t SECONDS  how long to send (default 3, may be fractional)\n"
		   "  -r RCVBUF   receiver SO_RCVBUF (default 4096; the kernel doubles it)\n"
		   "  -s BYTES    payload size (default 16)\n"
		   "  -b BATCH    datagrams per sendmmsg (default 64)\n");
}

int main(int argc, char **argv)
{
	int port = 0, rcvbuf = 4096, size = 16, batch = 64, c;
	double seconds = 3;
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t alen = sizeof(addr);
	static struct mmsghdr msgs[MAX_BATCH];
	static struct iovec iov[MAX_BATCH];
	static char payload[65507];
	uint64_t sent = 0, errors = 0, received = 0;
	uint32_t meminfo[SK_MEMINFO_VARS] = {};
	socklen_t mlen = sizeof(meminfo);
	int rx, tx;

	while ((c = getopt(argc, argv, "p:t:r:s:b:h")) != -1) {
		switch (c) {
		case 'p': port = arg_num(optarg, 0, 65535, "port"); break;
		case 't': {
			char *end;

			seconds = strtod(optarg, &end);
			if (*end || !(seconds > 0 && seconds <= 3600)) {
				fprintf(stderr, "bench-storm: bad seconds '%s'\n", optarg);
				return 2;
			}
			break;
		}
		case 'r': rcvbuf = arg_num(optarg, 1, 1 << 30, "rcvbuf"); break;
		case 's': size = arg_num(optarg, 0, sizeof(payload), "size"); break;
		case 'b': batch = arg_num(optarg, 1, MAX_BATCH, "batch"); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}

	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	/* the receiver: bound by us, small buffer, never read while sending */
	rx = socket(AF_INET, SOCK_DGRAM, 0);
	if (rx < 0) {
		perror("bench-storm: socket");
		return 1;
	}
	if (setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf))) {
		perror("bench-storm: SO_RCVBUF");
		return 1;
	}
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = htons(port);
	if (bind(rx, (struct sockaddr *)&addr, sizeof(addr)) ||
	    getsockname(rx, (struct sockaddr *)&addr, &alen)) {
		fprintf(stderr, "bench-storm: bind 127.0.0.1:%d: %s\n", port,
			strerror(errno));
		return 1;
	}
	port = ntohs(addr.sin_port);

	/* the sender: connected, so sendmmsg needs no address per message */
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	if (tx < 0 || connect(tx, (struct sockaddr *)&addr, sizeof(addr))) {
		perror("bench-storm: sender");
		return 1;
	}
	memset(payload, 'x', size);
	for (int i = 0; i < batch; i++) {
		iov[i].iov_base = payload;
		iov[i].iov_len = size;
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}

	double start = now_s(), end = start + seconds, t = start;

	while (!stop) {
		int n = sendmmsg(tx, msgs, batch, 0);

		if (n > 0) {
			sent += n;
		} else if (n < 0 && errno != EINTR) {
			errors++;
			if (errno != ENOBUFS && errno != EAGAIN &&
			    errno != ECONNREFUSED) {
				perror("bench-storm: sendmmsg");
				return 1;
			}
		}
		t = now_s();
		if (t >= end)
			break;
	}
	double elapsed = t - start;

	/* the socket's drop counter, then drain: closing frees nothing */
	if (getsockopt(rx, SOL_SOCKET, SO_MEMINFO, meminfo, &mlen))
		meminfo[SK_MEMINFO_DROPS] = 0;
	for (;;) {
		ssize_t r = recv(rx, payload, sizeof(payload), MSG_DONTWAIT);

		if (r < 0)
			break;
		received++;
	}
	printf("storm: port=%d seconds=%.3f sent=%llu rate=%.0f received=%llu dropped=%llu sk_drops=%u send_errors=%llu\n",
	       port, elapsed, (unsigned long long)sent,
	       elapsed > 0 ? sent / elapsed : 0.0, (unsigned long long)received,
	       (unsigned long long)(sent - received), meminfo[SK_MEMINFO_DROPS],
	       (unsigned long long)errors);
	fflush(stdout);
	close(tx);
	close(rx);
	return 0;
}
