// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udptest: the integration tests' ground truth. A sender that says how
 * many datagrams it handed to the kernel, and a receiver that says how many
 * it read, so "dropped = sent - read" is known exactly.
 *
 *   udptest send HOST:PORT [-c N] [-s BYTES] [--bad-csum] [--src ADDR]
 *                [--gap-us USEC] [--sport PORT] [--linger-ms MS]
 *                [--gso SEGSIZE] [--ports N] [--ip-options]
 *                [--rounds K --every-ms MS] [--mid-window]
 *                [--no-first-frag --src ADDR]
 *   udptest recv ADDR:PORT [--rcvbuf BYTES] [--read] [--filter-drop]
 *                [--share] [--gro] [--sockets N] [--read-gap-us USEC]
 *                [--reuseport N] [--peer HOST:PORT] [--connect ADDR:PORT]
 *                [--join GROUP@IFNAME]
 *
 * recv prints "ready" once bound, then holds (or reads, with --read) until
 * SIGUSR1 or SIGTERM, drains what is queued and prints "received N".
 * --share forks after binding so two processes hold the socket; the child
 * waits for the parent to finish.
 *
 * --gso SEGSIZE: each of the N sends is one buffer of -s BYTES that the
 * kernel cuts into SEGSIZE datagrams (UDP_SEGMENT): "sent" counts those
 * datagrams, "buffers" the sends. --gro: the receiver takes coalesced
 * datagrams (UDP_GRO) and counts each buffer's segments, so "received"
 * stays in datagrams.
 *
 * --reuseport N: N sockets bound to ADDR:PORT with SO_REUSEPORT; the
 * first is read (with --read), the rest are held. --peer HOST:PORT: the
 * member made i-th (0 first) connects to HOST:PORT+i, so the datagrams
 * from that port are its own (a connected socket wins the lookup), and a
 * test knows what each member has queued.
 *
 * --connect ADDR:PORT: the socket is connected to that peer (it then takes
 * only that peer's datagrams), for the views' REMOTE column.
 *
 * --join GROUP@IFNAME: the socket (each --reuseport member) joins the
 * multicast group GROUP (IPv4 or IPv6) on interface IFNAME. send sets
 * SO_BROADCAST always, so a test may send to a broadcast address.
 *
 * --read-gap-us USEC: read, but sleep USEC after each datagram (a slow
 * reader, for the demo).
 *
 * --ip-options (IPv4): each datagram carries 8 bytes of IP options
 * (NOPs), so its UDP header starts 28 bytes in, not 20.
 *
 * --rounds K --every-ms MS: K rounds of the -c N sends, one every MS ms
 * (CLOCK_MONOTONIC deadlines, so a slow machine does not stretch the
 * run); "sent" counts all. --mid-window: the first round starts where
 * udpdrop's drop windows are far from an edge. udpdrop counts drops in
 * 100 ms windows of the kernel's tick counter (jiffies, whose windows
 * turn where times(2)'s tenth does) or of CLOCK_MONOTONIC, and views
 * running at once each read that clock for themselves, so a drop within
 * the microseconds between their reads of an edge may fall either side
 * of it (on an emulated CPU, tens of microseconds). Rounds every whole
 * 100 ms keep that place: their drops stay inside windows, and every
 * view counts the same ones (tests of the views' agreement).
 *
 * --ports N: the sends go round the N ports from PORT. --sockets N: N - 1
 * more sockets on the ports after PORT, held but never read (not counted).
 *
 *   udptest churn ADDR [-n SOCKETS] [--rate PER_S] [--drops K] [--queued Q]
 *
 * Short-lived sockets, one after another, as a DNS client makes them: each
 * binds ADDR:0, gets Q datagrams queued, then a drop-everything socket
 * filter and K more datagrams (K socket_filter drops), and closes (its Q
 * queued datagrams: socket_close drops). Prints "churned N" (sockets),
 * "dropped D" (N * K filter drops) and "closed C" (N * Q queued at close)
 * once every socket has closed.
 *
 *   udptest churn ADDR [-n SOCKETS] [--rate PER_S] --rcvbuf-drops K
 *                 [--seconds S]
 *
 * The same churn with receive-buffer drops instead: each socket has the
 * smallest SO_RCVBUF, gets 1 + K datagrams of 3000 B (one fits), reads
 * until nothing is queued, and closes with an empty queue (no
 * socket_close drop). --seconds S: churn for S seconds (-n is then a
 * bound). Prints "churned N", "rcvbuf_dropped D" (the sockets' own
 * sk_drops, SO_MEMINFO, summed), "read R" and "queued_at_close 0" (or
 * how many were found queued: the run is then no test of "nothing
 * queued").
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <linux/filter.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

static volatile sig_atomic_t done;

static void on_sig(int s)
{
	done = 1;
}

static int parse_ep(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[128];
	const char *colon = strrchr(s, ':');
	int port;

	if (!colon || colon - s >= (int)sizeof(host))
		return -1;
	memcpy(host, s, colon - s);
	host[colon - s] = '\0';
	port = atoi(colon + 1);
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[') {
		struct sockaddr_in6 *a = (void *)ss;
		size_t l = strlen(host);

		if (host[l - 1] != ']')
			return -1;
		host[l - 1] = '\0';
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
			return -1;
		*len = sizeof(*a);
		return 0;
	}
	struct sockaddr_in *a = (void *)ss;

	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
		return -1;
	*len = sizeof(*a);
	return 0;
}

static uint16_t csum16(const void *data, size_t len, uint32_t sum)
{
	const uint8_t *p = data;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* IPv4 UDP with a deliberately wrong checksum, through a raw socket. */
static int send_bad_csum(struct sockaddr_in *dst, const char *src, int count,
			 int size, int sport, long gap_us)
{
	int fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	uint8_t *pkt = calloc(1, 28 + size);
	struct iphdr *ip = (void *)pkt;
	struct udphdr *uh = (void *)(pkt + 20);
	int sent = 0;

	if (fd < 0 || !pkt) {
		perror("raw socket");
		return -1;
	}
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->tot_len = htons(28 + size);
	ip->daddr = dst->sin_addr.s_addr;
	if (!src || inet_pton(AF_INET, src, &ip->saddr) != 1) {
		fprintf(stderr, "send --bad-csum needs --src ADDR\n");
		return -1;
	}
	uh->source = htons(sport ?: 40000);
	uh->dest = dst->sin_port;
	uh->len = htons(8 + size);
	for (int i = 0; i < count; i++) {
		ip->id = htons(i + 1);
		uh->check = 0;
		/* a valid checksum, then broken: never 0 (which means "none") */
		uh->check = htons(csum16(uh, 8 + size, 0) ^ 0x5555) ?: 1;
		if (sendto(fd, pkt, 28 + size, 0, (void *)dst, sizeof(*dst)) == 28 + size)
			sent++;
		if (gap_us)
			usleep(gap_us);
	}
	printf("sent %d\n", sent);
	return 0;
}

/*
 * --no-first-frag (IPv4): each datagram of 8 + size UDP bytes as the
 * fragments a 1500-byte MTU makes, but for its first: a raw socket sends
 * the fragments from offset 1480 on, so the receiver queues them and its
 * reassembly timer finds no head (as when the first fragment was lost on
 * the way). IP IDs from a random base. Prints "sent N" (datagrams).
 */
static uint64_t mono_ns(void);

static int send_no_first_frag(struct sockaddr_in *dst, const char *src, int count, int size,
			      long gap_us)
{
	int fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW), ulen = 8 + size, sent = 0;
	uint8_t *pkt = calloc(1, 20 + 1480);
	struct iphdr *ip = (void *)pkt;
	uint16_t id0;

	if (fd < 0 || !pkt) {
		perror("raw socket");
		return -1;
	}
	if (!src || inet_pton(AF_INET, src, &ip->saddr) != 1 || ulen <= 1480) {
		fprintf(stderr, "send --no-first-frag needs --src ADDR and -s over 1472\n");
		return -1;
	}
	srand((unsigned)mono_ns());
	id0 = (uint16_t)rand();
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->daddr = dst->sin_addr.s_addr;
	for (int i = 0; i < count; i++) {
		bool all = true;

		ip->id = htons((uint16_t)(id0 + i));
		for (int off = 1480; off < ulen; off += 1480) {
			int len = ulen - off < 1480 ? ulen - off : 1480;

			ip->frag_off = htons((off / 8) | (off + len < ulen ? IP_MF : 0));
			ip->tot_len = htons(20 + len);
			memset(pkt + 20, 0xab, len);
			if (sendto(fd, pkt, 20 + len, 0, (void *)dst, sizeof(*dst)) != 20 + len)
				all = false;
		}
		sent += all;
		if (gap_us)
			usleep(gap_us);
	}
	printf("sent %d\n", sent);
	return 0;
}

/* A whole number from 1 to max, or -1. */
static int positive(const char *s, int max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return errno || end == s || *end || v < 1 || v > max ? -1 : (int)v;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define WIN_NS 100000000ull /* udpdrop's drop window (UD_WIN_NS) */

/*
 * --mid-window: the next CLOCK_MONOTONIC instant at which both clocks'
 * windows are well inside, not near an edge. The tick counter's windows
 * turn where times(2)'s count (USER_HZ, 100 a second) passes a multiple
 * of 10: waited for here, so its edges' place in CLOCK_MONOTONIC's 100 ms
 * is known (within a poll). With edges at 0 and there, the larger gap is
 * at least 50 ms; the rounds start a quarter into it, leaving room before
 * its end for a round's drops.
 */
static uint64_t mid_window_start(void)
{
	struct tms tm;
	clock_t c0 = times(&tm);
	uint64_t now, edge, gap, at, start;

	while (times(&tm) / 10 == c0 / 10)
		usleep(100);
	now = mono_ns();
	edge = now % WIN_NS;
	if (edge >= WIN_NS - edge) /* from 0 to edge */
		gap = edge, at = gap / 4;
	else /* from edge to 100 ms */
		gap = WIN_NS - edge, at = edge + gap / 4;
	start = now - now % WIN_NS + at;
	while (start < now + 2000000) /* not one about to pass */
		start += WIN_NS;
	return start;
}

/* Round r's start (--rounds): its deadline, and a word if it came late. */
static uint64_t round_wait(uint64_t start, int r, int every_ms)
{
	uint64_t at = start + (uint64_t)r * (uint64_t)every_ms * 1000000u;
	struct timespec ts = { .tv_sec = at / 1000000000u, .tv_nsec = at % 1000000000u };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	if (mono_ns() > at + 10000000u)
		fprintf(stderr, "send: round %d began %.1f ms late\n", r, (mono_ns() - at) / 1e6);
	return at;
}

/* The longest round so far, with the one begun at `at` just ended. */
static uint64_t round_end(uint64_t longest, uint64_t at)
{
	uint64_t took = mono_ns() - at;

	return took > longest ? took : longest;
}

static int do_send(int argc, char **argv)
{
	struct sockaddr_storage dst;
	socklen_t dlen;
	int count = 1, size = 100, sport = 0, errors = 0, sent = 0;
	bool bad = false, ip_options = false;
	const char *src = NULL;
	long gap_us = 0;
	int linger_ms = 0, gso = 0, buffers = 0, ports = 1, rounds = 1, every_ms = 0;
	bool mid_window = false, no_first = false;
	uint64_t start = 0, round_at = 0, longest = 0;
	uint16_t port0;

	if (argc < 2 || parse_ep(argv[1], &dst, &dlen)) {
		fprintf(stderr, "send: need HOST:PORT\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "-c") && i + 1 < argc)
			count = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			size = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--bad-csum"))
			bad = true;
		else if (!strcmp(argv[i], "--src") && i + 1 < argc)
			src = argv[++i];
		else if (!strcmp(argv[i], "--gap-us") && i + 1 < argc)
			gap_us = atol(argv[++i]);
		else if (!strcmp(argv[i], "--sport") && i + 1 < argc)
			sport = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--linger-ms") && i + 1 < argc)
			linger_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--gso") && i + 1 < argc)
			gso = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--ports") && i + 1 < argc)
			ports = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--ip-options"))
			ip_options = true;
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = positive(argv[++i], 1000000);
		else if (!strcmp(argv[i], "--every-ms") && i + 1 < argc)
			every_ms = positive(argv[++i], 3600000);
		else if (!strcmp(argv[i], "--mid-window"))
			mid_window = true;
		else if (!strcmp(argv[i], "--no-first-frag"))
			no_first = true;
		else {
			fprintf(stderr, "send: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (rounds < 1 || every_ms < 0 || (rounds > 1) != (every_ms > 0) ||
	    (long long)rounds * count > INT_MAX || ((rounds > 1 || mid_window) && bad)) {
		fprintf(stderr, "send: --rounds K (1 to 1000000) and --every-ms MS (1 to 3600000) "
				"go together, K * -c N under 2^31, not with --bad-csum\n");
		return 2;
	}
	if (bad)
		return send_bad_csum((void *)&dst, src, count, size, sport, gap_us) ? 1 : 0;
	if (no_first)
		return send_no_first_frag((void *)&dst, src, count, size, gap_us) ? 1 : 0;

	int fd = socket(dst.ss_family, SOCK_DGRAM, 0);
	char *buf = calloc(1, size ?: 1);

	if (fd < 0 || !buf) {
		perror("socket");
		return 1;
	}
	/* a broadcast destination needs it; harmless for any other */
	setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &(int){ 1 }, sizeof(int));
	if (sport) {
		struct sockaddr_storage b = { .ss_family = dst.ss_family };

		((struct sockaddr_in *)&b)->sin_port = htons(sport);
		if (bind(fd, (void *)&b, dlen)) {
			perror("bind");
			return 1;
		}
	}
	if (ip_options) {
		/* seven NOPs and an END: IHL 7 */
		static const unsigned char opts[8] = { IPOPT_NOP, IPOPT_NOP, IPOPT_NOP, IPOPT_NOP,
						       IPOPT_NOP, IPOPT_NOP, IPOPT_NOP, IPOPT_END };

		if (dst.ss_family != AF_INET ||
		    setsockopt(fd, IPPROTO_IP, IP_OPTIONS, opts, sizeof(opts))) {
			perror("IP_OPTIONS (IPv4 only)");
			return 1;
		}
	}
	if (gso > 0 && setsockopt(fd, SOL_UDP, UDP_SEGMENT, &gso, sizeof(gso))) {
		perror("UDP_SEGMENT");
		return 1;
	}
	/* sin_port and sin6_port sit at the same offset */
	port0 = ntohs(((struct sockaddr_in *)&dst)->sin_port);
	start = mid_window ? mid_window_start() : mono_ns();
	for (int i = 0; i < rounds * count; i++) {
		if (i % count == 0) {
			if (i)
				longest = round_end(longest, round_at);
			round_at = round_wait(start, i / count, every_ms);
		}
		memcpy(buf, &i, size >= 4 ? 4 : size);
		if (ports > 1)
			((struct sockaddr_in *)&dst)->sin_port = htons(port0 + i % ports);
		if (sendto(fd, buf, size, 0, (void *)&dst, dlen) == size) {
			/* with GSO one buffer is size / gso datagrams (the last short) */
			sent += gso > 0 ? (size + gso - 1) / gso : 1;
			buffers++;
		} else {
			if (gso > 0 && errors == 0)
				perror("sendto (GSO)");
			errors++;
		}
		if (gap_us)
			usleep(gap_us);
	}
	if (rounds > 1)
		fprintf(stderr, "send: %d rounds, the longest %.1f ms\n", rounds,
			round_end(longest, round_at) / 1e6);
	/* sent = datagrams handed to the kernel without error; ENOBUFS is not
	 * reported for UDP unless IP_RECVERR, so sender drops show in the tracer */
	printf("sent %d errors %d buffers %d\n", sent, errors, buffers);
	/* keep the socket open a while, e.g. so a tracer can still name it */
	if (linger_ms)
		usleep(linger_ms * 1000);
	return 0;
}

/*
 * Read one buffer: how many datagrams it held (-1: none to read). With
 * UDP_GRO a buffer may be several datagrams of gso_size bytes (the last
 * may be shorter), as the UDP_GRO control message says.
 */
static int recv_count(int fd, char *buf, size_t len, int flags, bool gro)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = gro ? ctl : NULL,
			     .msg_controllen = gro ? sizeof(ctl) : 0 };
	ssize_t n = recvmsg(fd, &mh, flags);
	int gso_size = 0;

	if (n < 0)
		return -1;
	for (struct cmsghdr *c = gro ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO)
			memcpy(&gso_size, CMSG_DATA(c), sizeof(gso_size));
	if (gso_size > 0 && n > gso_size)
		return (n + gso_size - 1) / gso_size;
	return 1;
}

static int drain(int fd, char *buf, size_t len, bool gro)
{
	int n = 0, k;

	while ((k = recv_count(fd, buf, len, MSG_DONTWAIT, gro)) >= 0)
		n += k;
	return n;
}

/* --join GROUP@IFNAME: fd joins GROUP on IFNAME (IPv4 or IPv6). */
static int join_group(int fd, const char *spec)
{
	char group[INET6_ADDRSTRLEN];
	const char *at = strchr(spec, '@');
	unsigned int ifindex = at ? if_nametoindex(at + 1) : 0;
	struct ip_mreqn m4 = { .imr_ifindex = (int)ifindex };
	struct ipv6_mreq m6 = { .ipv6mr_interface = ifindex };

	if (!at || at - spec >= (int)sizeof(group) || !ifindex) {
		fprintf(stderr, "recv --join: need GROUP@IFNAME (an existing interface)\n");
		return -1;
	}
	memcpy(group, spec, at - spec);
	group[at - spec] = '\0';
	if (inet_pton(AF_INET, group, &m4.imr_multiaddr) == 1) {
		if (!setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m4, sizeof(m4)))
			return 0;
	} else if (inet_pton(AF_INET6, group, &m6.ipv6mr_multiaddr) == 1) {
		if (!setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &m6, sizeof(m6)))
			return 0;
	} else {
		fprintf(stderr, "recv --join: %s is not an address\n", group);
		return -1;
	}
	perror("recv --join");
	return -1;
}

static int do_recv(int argc, char **argv)
{
	struct sockaddr_storage a;
	socklen_t alen;
	int rcvbuf = 0, fd, received = 0;
	bool reading = false, filter_drop = false, share = false, gro = false;
	int nsock = 1, read_gap_us = 0, reuseport = 0;
	const char *connect_to = NULL; /* --connect: a connected socket (REMOTE) */
	const char *join = NULL;       /* --join GROUP@IFNAME */
	struct sockaddr_storage peer;
	socklen_t peer_len = 0;
	static char buf[65536];
	pid_t child = 0;

	if (argc < 2 || parse_ep(argv[1], &a, &alen)) {
		fprintf(stderr, "recv: need ADDR:PORT\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--rcvbuf") && i + 1 < argc)
			rcvbuf = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--read"))
			reading = true;
		else if (!strcmp(argv[i], "--filter-drop"))
			filter_drop = true;
		else if (!strcmp(argv[i], "--share"))
			share = true;
		else if (!strcmp(argv[i], "--gro"))
			gro = true;
		else if (!strcmp(argv[i], "--connect") && i + 1 < argc)
			connect_to = argv[++i];
		else if (!strcmp(argv[i], "--join") && i + 1 < argc)
			join = argv[++i];
		else if (!strcmp(argv[i], "--sockets") && i + 1 < argc)
			nsock = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--reuseport") && i + 1 < argc)
			reuseport = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--peer") && i + 1 < argc) {
			if (parse_ep(argv[++i], &peer, &peer_len)) {
				fprintf(stderr, "recv: --peer needs HOST:PORT\n");
				return 2;
			}
		}
		else if (!strcmp(argv[i], "--read-gap-us") && i + 1 < argc) {
			read_gap_us = atoi(argv[++i]);
			reading = true;
		} else {
			fprintf(stderr, "recv: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	struct sigaction sa = { .sa_handler = on_sig };

	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	for (int i = reuseport > 1 ? reuseport - 1 : 0; i >= 0; i--) {
		/* the extra SO_REUSEPORT members first; the one we keep in fd last */
		fd = socket(a.ss_family, SOCK_DGRAM, 0);
		if (fd < 0 ||
		    (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &(int){ 1 }, sizeof(int))) ||
		    (rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf))) ||
		    bind(fd, (void *)&a, alen)) {
			perror("recv socket");
			return 1;
		}
		if (join && join_group(fd, join))
			return 1;
		if (peer_len) {
			struct sockaddr_storage p = peer;
			int made = (reuseport > 1 ? reuseport - 1 : 0) - i;

			/* sin_port and sin6_port sit at the same offset */
			((struct sockaddr_in *)&p)->sin_port =
				htons(ntohs(((struct sockaddr_in *)&peer)->sin_port) + made);
			if (connect(fd, (void *)&p, peer_len)) {
				perror("recv --peer");
				return 1;
			}
		}
	}
	if (connect_to) {
		struct sockaddr_storage p;
		socklen_t plen;

		if (parse_ep(connect_to, &p, &plen) || connect(fd, (void *)&p, plen)) {
			fprintf(stderr, "recv --connect %s: cannot connect\n", connect_to);
			return 1;
		}
	}
	if (gro && setsockopt(fd, SOL_UDP, UDP_GRO, &(int){ 1 }, sizeof(int))) {
		perror("UDP_GRO");
		return 1;
	}
	for (int i = 1; i < nsock; i++) {
		struct sockaddr_storage b = a;
		int more = socket(a.ss_family, SOCK_DGRAM, 0);

		((struct sockaddr_in *)&b)->sin_port =
			htons(ntohs(((struct sockaddr_in *)&a)->sin_port) + i);
		if (more < 0 || bind(more, (void *)&b, alen)) {
			perror("recv --sockets");
			return 1;
		}
	}
	if (filter_drop) {
		/* classic BPF "ret #0": reject every datagram */
		struct sock_filter code[] = { { BPF_RET | BPF_K, 0, 0, 0 } };
		struct sock_fprog prog = { .len = 1, .filter = code };

		if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog))) {
			perror("SO_ATTACH_FILTER");
			return 1;
		}
	}
	if (share) {
		child = fork();
		if (child == 0) {
			/* holds the same socket until the parent is done */
			while (!done)
				usleep(20000);
			_exit(0);
		}
	}
	printf("ready\n");
	fflush(stdout);
	struct timeval tv = { .tv_usec = 100000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (!done) {
		if (!reading) {
			usleep(20000); /* not pause(): a signal may come before it */
			continue;
		}
		int k = recv_count(fd, buf, sizeof(buf), 0, gro);

		if (k > 0)
			received += k;
		if (k > 0 && read_gap_us)
			usleep(read_gap_us);
	}
	received += drain(fd, buf, sizeof(buf), gro);
	printf("received %d\n", received);
	fflush(stdout);
	if (child) {
		kill(child, SIGUSR1);
		waitpid(child, NULL, 0);
	}
	return 0;
}

static int do_churn(int argc, char **argv)
{
	struct sockaddr_storage a;
	socklen_t alen;
	int n = 100, rate = 60, drops = 4, queued = 0, made = 0, rcvbuf_drops = -1, seconds = 0;
	uint64_t sk_dropped = 0, was_read = 0, left = 0, until = 0;
	struct sock_filter drop_all = BPF_STMT(BPF_RET | BPF_K, 0);
	struct sock_fprog prog = { .len = 1, .filter = &drop_all };
	char buf[64] = "churn";
	int tx;

	if (argc < 2 || parse_ep(argv[1], &a, &alen)) {
		fprintf(stderr, "churn: need ADDR:0\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rate") && i + 1 < argc)
			rate = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--drops") && i + 1 < argc)
			drops = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--queued") && i + 1 < argc)
			queued = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rcvbuf-drops") && i + 1 < argc)
			rcvbuf_drops = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atoi(argv[++i]);
		else {
			fprintf(stderr, "churn: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	tx = socket(a.ss_family, SOCK_DGRAM, 0);
	if (tx < 0) {
		perror("socket");
		return 1;
	}
	signal(SIGTERM, on_sig);
	if (rcvbuf_drops >= 0) {
		static char big[3000];

		if (seconds > 0)
			until = mono_ns() + (uint64_t)seconds * 1000000000ull;
		for (; (seconds > 0 ? mono_ns() < until : made < n) && !done; made++) {
			struct sockaddr_storage bound;
			socklen_t blen = sizeof(bound);
			int fd = socket(a.ss_family, SOCK_DGRAM, 0), one = 1;
			uint32_t mi[SK_MEMINFO_VARS];
			socklen_t mlen = sizeof(mi);

			/* the smallest buffer: one 3000 B datagram's truesize fills it */
			if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one)) ||
			    bind(fd, (void *)&a, alen) || getsockname(fd, (void *)&bound, &blen)) {
				perror("churn socket");
				return 1;
			}
			for (int j = 0; j < 1 + rcvbuf_drops; j++)
				if (sendto(tx, big, sizeof(big), 0, (void *)&bound, blen) < 0) {
					perror("sendto");
					return 1;
				}
			/* loopback delivers in the send: read what was queued, to the end */
			while (recv(fd, big, sizeof(big), MSG_DONTWAIT) >= 0)
				was_read++;
			if (!getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &mlen))
				sk_dropped += mi[SK_MEMINFO_DROPS];
			int q = 0;

			if (ioctl(fd, SIOCINQ, &q) == 0 && q > 0)
				left++;
			close(fd);
			if (rate > 0)
				usleep(1000000 / rate);
		}
		usleep(200000);
		printf("churned %d\nrcvbuf_dropped %llu\nread %llu\nqueued_at_close %llu\n", made,
		       (unsigned long long)sk_dropped, (unsigned long long)was_read,
		       (unsigned long long)left);
		return 0;
	}
	for (; made < n && !done; made++) {
		struct sockaddr_storage bound;
		socklen_t blen = sizeof(bound);
		int fd = socket(a.ss_family, SOCK_DGRAM, 0);

		if (fd < 0 || bind(fd, (void *)&a, alen) ||
		    getsockname(fd, (void *)&bound, &blen)) {
			perror("churn socket");
			return 1;
		}
		for (int j = 0; j < queued; j++)
			if (sendto(tx, buf, sizeof(buf), 0, (void *)&bound, blen) < 0) {
				perror("sendto");
				return 1;
			}
		/* all Q queued (SO_MEMINFO's rmem counts them) before the filter */
		for (int tries = 0; queued && tries < 1000; tries++) {
			uint32_t mi[SK_MEMINFO_VARS];
			socklen_t mlen = sizeof(mi);
			int q = 0;

			if (!getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &mlen) &&
			    ioctl(fd, SIOCINQ, &q) == 0 && q > 0 &&
			    mi[SK_MEMINFO_RMEM_ALLOC] >= (uint32_t)queued * 256)
				break;
			usleep(100);
		}
		if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog))) {
			perror("SO_ATTACH_FILTER");
			return 1;
		}
		for (int j = 0; j < drops; j++)
			if (sendto(tx, buf, sizeof(buf), 0, (void *)&bound, blen) < 0) {
				perror("sendto");
				return 1;
			}
		close(fd);
		if (rate > 0)
			usleep(1000000 / rate);
	}
	/* the queues of closed sockets are freed after an RCU grace period */
	usleep(200000);
	printf("churned %d\ndropped %d\nclosed %d\n", made, made * drops, made * queued);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "churn"))
		return do_churn(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "send"))
		return do_send(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "recv"))
		return do_recv(argc - 1, argv + 1);
	fprintf(stderr, "usage: udptest send|recv ...\n");
	return 2;
}
