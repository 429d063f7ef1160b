// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench-sockets: the load for tools/bench-top.sh (udpdrop top's own CPU use
 * with many sockets open and many of them dropping).
 *
 *   bench-sockets hold ADDR PORT N [--rcvbuf BYTES]
 *       bind N UDP sockets to ADDR:PORT .. ADDR:PORT+N-1, each with a small
 *       SO_RCVBUF (default 4096), never read; print "ready" once all are
 *       bound, hold until SIGINT/SIGTERM. Raises RLIMIT_NOFILE as needed.
 *
 *   bench-sockets send ADDR PORT N [--rate DGRAMS_PER_S] [--size BYTES]
 *                      [--fill ROUNDS]
 *       one process, one socket: cycles ADDR:PORT .. PORT+N-1, one datagram
 *       to each port per round, at --rate datagrams/s in total (default
 *       2000), paced on an absolute schedule (a sendmmsg batch every 10 ms).
 *       The first --fill rounds (default 12) go at 10x the rate so every
 *       receive buffer is full, and dropping, within a second or two.
 *       Prints "sending" once started and, at SIGINT/SIGTERM, the totals
 *       and its pacing error.
 *
 *   bench-sockets cpu [-o FILE] -- CMD [ARGS...]
 *       run CMD as a child (same terminal) and, when it exits, write one
 *       line "wall_s W cpu_s C user_s U sys_s S warm_wall_s W2 warm_cpu_s C2
 *       status X" to FILE (default stdout). CPU is the child's
 *       getrusage(RUSAGE_CHILDREN) user + system time; the warm_ pair is
 *       the same from --warm SECS (default 3) after start to the end,
 *       i.e. without the start-up (BPF load, BTF parse).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static void catch_stop_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static double now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int parse_common(char **argv, struct sockaddr_in *a, int *port, int *n)
{
	char *end;
	long p, c;

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	if (inet_pton(AF_INET, argv[0], &a->sin_addr) != 1) {
		fprintf(stderr, "bench-sockets: bad IPv4 address '%s'\n", argv[0]);
		return -1;
	}
	p = strtol(argv[1], &end, 10);
	if (*end || p < 1 || p > 65535) {
		fprintf(stderr, "bench-sockets: bad port '%s'\n", argv[1]);
		return -1;
	}
	c = strtol(argv[2], &end, 10);
	if (*end || c < 1 || p + c - 1 > 65535) {
		fprintf(stderr, "bench-sockets: bad count '%s' (ports %ld.. must stay under 65536)\n",
			argv[2], p);
		return -1;
	}
	*port = p;
	*n = c;
	return 0;
}

/* ---- hold ---------------------------------------------------------------- */

static int raise_nofile(rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur >= want)
		return 0;
	if (rl.rlim_max < want) {
		struct rlimit hard = { want, want };

		if (setrlimit(RLIMIT_NOFILE, &hard)) {
			fprintf(stderr,
				"bench-sockets: need %llu open files, hard limit is %llu and cannot be raised (%s): run as root or raise ulimit -Hn\n",
				(unsigned long long)want, (unsigned long long)rl.rlim_max,
				strerror(errno));
			return -1;
		}
		return 0;
	}
	rl.rlim_cur = want;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		fprintf(stderr, "bench-sockets: cannot raise RLIMIT_NOFILE to %llu: %s\n",
			(unsigned long long)want, strerror(errno));
		return -1;
	}
	return 0;
}

static int do_hold(int argc, char **argv)
{
	struct sockaddr_in a;
	int port, n, rcvbuf = 4096;
	sigset_t block, old;

	if (argc < 4 || parse_common(argv + 1, &a, &port, &n))
		return 2;
	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--rcvbuf") && i + 1 < argc)
			rcvbuf = atoi(argv[++i]);
		else {
			fprintf(stderr, "bench-sockets hold: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (raise_nofile((rlim_t)n + 64))
		return 1;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	catch_stop_signals();

	for (int i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		if (fd < 0) {
			fprintf(stderr, "bench-sockets: socket %d of %d: %s\n", i + 1, n,
				strerror(errno));
			return 1;
		}
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf))) {
			fprintf(stderr, "bench-sockets: SO_RCVBUF: %s\n", strerror(errno));
			return 1;
		}
		a.sin_port = htons(port + i);
		if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
			fprintf(stderr, "bench-sockets: bind port %d: %s\n", port + i,
				strerror(errno));
			return 1;
		}
	}
	if (printf("ready %d\n", n) < 0 || fflush(stdout))
		return 1;
	while (!stop)
		sigsuspend(&old);
	return 0;
}

/* ---- send ---------------------------------------------------------------- */

#define TICK_NS 10000000LL /* one sendmmsg batch every 10 ms */
#define MAX_BATCH 1024

static int do_send(int argc, char **argv)
{
	static struct mmsghdr msgs[MAX_BATCH];
	static struct iovec iov[MAX_BATCH];
	static struct sockaddr_in dst[MAX_BATCH];
	static char payload[1500];
	struct sockaddr_in a;
	int port, n, rate = 2000, size = 64, fill = 12, fd;
	long long sent = 0, errors = 0, ticks = 0, late_ticks = 0, next_port = 0;
	double max_late_ms = 0, credit = 0, fill_end = -1;
	struct timespec t0, next;
	double start;

	if (argc < 4 || parse_common(argv + 1, &a, &port, &n))
		return 2;
	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--rate") && i + 1 < argc)
			rate = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--size") && i + 1 < argc)
			size = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--fill") && i + 1 < argc)
			fill = atoi(argv[++i]);
		else {
			fprintf(stderr, "bench-sockets send: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (rate < 1 || size < 0 || size > (int)sizeof(payload) || fill < 0) {
		fprintf(stderr, "bench-sockets send: bad --rate, --size or --fill\n");
		return 2;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("bench-sockets: socket");
		return 1;
	}
	catch_stop_signals();
	for (int i = 0; i < MAX_BATCH; i++) {
		dst[i] = a;
		iov[i].iov_base = payload;
		iov[i].iov_len = size;
		msgs[i].msg_hdr.msg_name = &dst[i];
		msgs[i].msg_hdr.msg_namelen = sizeof(dst[i]);
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	printf("sending to %d ports at %d datagrams/s (first %d rounds at %d/s)\n",
	       n, rate, fill, rate * 10);
	fflush(stdout);

	start = now_s(CLOCK_MONOTONIC);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	next = t0;
	while (!stop) {
		long long fill_left = (long long)fill * n - sent;
		double r = fill_left > 0 ? rate * 10.0 : rate;

		if (fill_left <= 0 && fill_end < 0)
			fill_end = now_s(CLOCK_MONOTONIC);
		int batch, done = 0;
		struct timespec cur;
		double late;

		credit += r * TICK_NS / 1e9;
		batch = (int)credit;
		if (batch > MAX_BATCH)
			batch = MAX_BATCH;
		credit -= batch;
		for (int i = 0; i < batch; i++) {
			dst[i].sin_port = htons(port + next_port);
			next_port = (next_port + 1) % n;
		}
		while (done < batch) {
			int k = sendmmsg(fd, msgs + done, batch - done, 0);

			if (k < 0) {
				if (errno == EINTR && stop)
					break;
				errors++;
				done++; /* skip the one that failed */
				continue;
			}
			done += k;
			sent += k;
		}
		ticks++;
		next.tv_nsec += TICK_NS;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_gettime(CLOCK_MONOTONIC, &cur);
		late = (cur.tv_sec - next.tv_sec) * 1e3 + (cur.tv_nsec - next.tv_nsec) / 1e6;
		if (late > 0) {
			late_ticks++;
			if (late > max_late_ms)
				max_late_ms = late;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR &&
		       !stop)
			;
	}
	{
		double end = now_s(CLOCK_MONOTONIC), el = end - start;
		long long filled = (long long)fill * n < sent ? (long long)fill * n : sent;
		double steady = fill_end >= 0 && end > fill_end ? (sent - filled) / (end - fill_end) : 0;

		printf("sent %lld (fill %lld) errors %lld seconds %.2f steady_rate %.0f ticks %lld late_ticks %lld max_late_ms %.2f\n",
		       sent, filled, errors, el, steady, ticks, late_ticks, max_late_ms);
	}
	return 0;
}

/* ---- cpu ----------------------------------------------------------------- */

/* user + system ns of a live process, all threads (from schedstat) */
static long long proc_cpu_ns(pid_t pid)
{
	char path[320], line[128];
	long long total = 0;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		FILE *f;
		long long ns;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", pid, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f) && sscanf(line, "%lld", &ns) == 1)
			total += ns;
		fclose(f);
	}
	closedir(d);
	return total;
}

static int do_cpu(int argc, char **argv)
{
	const char *out = NULL;
	double warm = 3, t0, t1, warm_t = -1;
	long long warm_ns = -1;
	struct rusage ru;
	int i, status;
	pid_t pid;
	FILE *f;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "--warm") && i + 1 < argc)
			warm = atof(argv[++i]);
		else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else
			break;
	}
	if (i >= argc) {
		fprintf(stderr, "bench-sockets cpu: no command\n");
		return 2;
	}
	t0 = now_s(CLOCK_MONOTONIC);
	pid = fork();
	if (pid < 0) {
		perror("bench-sockets: fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[i], argv + i);
		fprintf(stderr, "bench-sockets: exec %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	signal(SIGINT, SIG_IGN); /* the child gets the terminal's ^C */
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			perror("bench-sockets: waitpid");
			return 1;
		}
		if (warm_ns < 0 && now_s(CLOCK_MONOTONIC) - t0 >= warm) {
			warm_ns = proc_cpu_ns(pid);
			warm_t = now_s(CLOCK_MONOTONIC);
		}
		usleep(20000);
	}
	t1 = now_s(CLOCK_MONOTONIC);
	getrusage(RUSAGE_CHILDREN, &ru);
	{
		double u = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
		double s = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
		double ww = warm_ns >= 0 ? t1 - warm_t : -1;
		double wc = warm_ns >= 0 ? u + s - warm_ns / 1e9 : -1;

		f = out ? fopen(out, "w") : stdout;
		if (!f) {
			perror("bench-sockets: output file");
			return 1;
		}
		fprintf(f, "wall_s %.3f cpu_s %.4f user_s %.4f sys_s %.4f warm_wall_s %.3f warm_cpu_s %.4f status %d\n",
			t1 - t0, u + s, u, s, ww, wc,
			WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		if (f != stdout)
			fclose(f);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "hold"))
		return do_hold(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "send"))
		return do_send(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "cpu"))
		return do_cpu(argc - 1, argv + 1);
	fprintf(stderr,
		"usage: bench-sockets hold ADDR PORT N [--rcvbuf BYTES]\n"
		"       bench-sockets send ADDR PORT N [--rate DGRAMS_PER_S] [--size BYTES] [--fill ROUNDS]\n"
		"       bench-sockets cpu [-o FILE] [--warm SECS] -- CMD [ARGS...]\n");
	return 2;
}
