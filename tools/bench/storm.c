// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench-storm: a loopback UDP drop storm for the benchmark.
 *
 *   bench-storm [-p PORT] [-t SECONDS] [-r RCVBUF] [-s BYTES] [-b BATCH] [-k SENDERS]
 *
 * Binds a receiver on 127.0.0.1:PORT with a small SO_RCVBUF and never reads
 * it while SENDERS threads (default 1), each pinned to its own CPU (sender
 * i on CPU i modulo the CPUs it may use) with its own socket, flood it with
 * sendmmsg() for SECONDS: loopback delivers in the sender's softirq, so
 * each sender's drops happen on its CPU. Once the queue
 * is full every datagram is a receive-buffer drop (SKB_DROP_REASON_
 * SOCKET_RCVBUFF) on loopback. Afterwards the receiver drains its queue
 * (so closing it frees nothing), and one line says what happened:
 *
 *   storm: port=P seconds=T sent=N rate=R received=Q dropped=D sk_drops=K send_errors=E senders=S
 *
 * dropped = sent - received (every loss, wherever it happened);
 * sk_drops = the socket's own drop counter (SO_MEMINFO), the rcvbuf drops.
 * Only loopback is ever used. Build: cc -O2 -pthread -o .output/bench-storm tools/bench/storm.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
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
#define MAX_SENDERS 256

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
		   "  -b BATCH    datagrams per sendmmsg (default 64)\n"
		   "  -k SENDERS  sender threads, one per CPU (default 1)\n");
}

struct sender {
	pthread_t thread;
	int cpu; /* -1: not pinned */
	int fd;
	int batch;
	double end;
	uint64_t sent, errors;
	int err; /* errno of a fatal send error */
	struct mmsghdr msgs[MAX_BATCH];
};

static void *send_loop(void *arg)
{
	struct sender *sd = arg;

	if (sd->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(sd->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	while (!stop) {
		int n = sendmmsg(sd->fd, sd->msgs, sd->batch, 0);

		if (n > 0) {
			sd->sent += n;
		} else if (n < 0 && errno != EINTR) {
			sd->errors++;
			if (errno != ENOBUFS && errno != EAGAIN && errno != ECONNREFUSED) {
				sd->err = errno;
				break;
			}
		}
		if (now_s() >= sd->end)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int port = 0, rcvbuf = 4096, size = 16, batch = 64, senders = 1, c;
	double seconds = 3;
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t alen = sizeof(addr);
	static struct sender sd[MAX_SENDERS];
	static struct iovec iov[MAX_BATCH];
	static char payload[65507];
	uint64_t sent = 0, errors = 0, received = 0;
	uint32_t meminfo[SK_MEMINFO_VARS] = {};
	socklen_t mlen = sizeof(meminfo);
	int rx;

	while ((c = getopt(argc, argv, "p:t:r:s:b:k:h")) != -1) {
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
		case 'k': senders = arg_num(optarg, 1, MAX_SENDERS, "senders"); break;
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

	/* the senders: connected, so sendmmsg needs no address per message */
	cpu_set_t allowed;
	int cpus[CPU_SETSIZE], ncpus = 0;

	if (!sched_getaffinity(0, sizeof(allowed), &allowed))
		for (int i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &allowed))
				cpus[ncpus++] = i;
	memset(payload, 'x', size);
	for (int i = 0; i < batch; i++) {
		iov[i].iov_base = payload;
		iov[i].iov_len = size;
	}

	double start = now_s(), end = start + seconds, t;

	for (int k = 0; k < senders; k++) {
		sd[k].fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (sd[k].fd < 0 || connect(sd[k].fd, (struct sockaddr *)&addr, sizeof(addr))) {
			perror("bench-storm: sender");
			return 1;
		}
		for (int i = 0; i < batch; i++) {
			sd[k].msgs[i].msg_hdr.msg_iov = &iov[i];
			sd[k].msgs[i].msg_hdr.msg_iovlen = 1;
		}
		sd[k].batch = batch;
		sd[k].end = end;
		sd[k].cpu = ncpus ? cpus[k % ncpus] : -1;
		if (pthread_create(&sd[k].thread, NULL, send_loop, &sd[k])) {
			fprintf(stderr, "bench-storm: cannot start sender %d\n", k);
			return 1;
		}
	}
	for (int k = 0; k < senders; k++) {
		pthread_join(sd[k].thread, NULL);
		sent += sd[k].sent;
		errors += sd[k].errors;
		if (sd[k].err) {
			fprintf(stderr, "bench-storm: sendmmsg: %s\n", strerror(sd[k].err));
			return 1;
		}
	}
	t = now_s();
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
	printf("storm: port=%d seconds=%.3f sent=%llu rate=%.0f received=%llu dropped=%llu sk_drops=%u send_errors=%llu senders=%d\n",
	       port, elapsed, (unsigned long long)sent,
	       elapsed > 0 ? sent / elapsed : 0.0, (unsigned long long)received,
	       (unsigned long long)(sent - received), meminfo[SK_MEMINFO_DROPS],
	       (unsigned long long)errors, senders);
	fflush(stdout);
	for (int k = 0; k < senders; k++)
		close(sd[k].fd);
	close(rx);
	return 0;
}
