// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "util.h"

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	/* strtoull would skip leading space and accept a sign: we do not */
	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_seconds(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	/* decimal only: no leading space, no hex ("0x10"), no "inf" */
	if (!s || !(isdigit((unsigned char)*s) || *s == '-' || *s == '.') ||
	    strpbrk(s, "xXpPiInN"))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end || end == s || isnan(v))
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

void fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = bytes;
	unsigned int u = 0;

	/* step up when the printed figure would round to 1024 */
	while (u < ARRAY_SIZE(units) - 1 &&
	       (v >= 1024 || (u > 0 && v >= 1023.5))) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else if (v < 9.95) /* would print as "10.0": use the integer form */
		snprintf(buf, len, "%.1f %s", v, units[u]);
	else
		snprintf(buf, len, "%.0f %s", v, units[u]);
}

void fmt_count(char *buf, size_t len, uint64_t n)
{
	char tmp[32];
	int digits = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)n);
	size_t o = 0;

	if (!len)
		return;
	for (int i = 0; i < digits && o + 1 < len; i++) {
		if (i && (digits - i) % 3 == 0 && o + 2 < len)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
}

static bool addr_is_any(int family, const void *addr)
{
	static const uint8_t zero[16];

	return !memcmp(addr, zero, family == AF_INET6 ? 16 : 4);
}

void fmt_addr(char *buf, size_t len, int family, const void *addr)
{
	if (family != AF_INET && family != AF_INET6) {
		snprintf(buf, len, "?");
		return;
	}
	if (addr_is_any(family, addr)) {
		snprintf(buf, len, "*");
		return;
	}
	/* an IPv4 peer of a dual-stack socket (::ffff:a.b.c.d): the IPv4
	 * address, so the column lines up with the IPv4 sockets' */
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	/* by bytes: addr may sit unaligned in a packed record (IN6_IS_ADDR_
	 * V4MAPPED reads it as struct in6_addr: UBSan's misaligned access) */
	if (family == AF_INET6 && !memcmp(addr, v4mapped, sizeof(v4mapped))) {
		family = AF_INET;
		addr = (const uint8_t *)addr + 12;
	}
	if (!inet_ntop(family, addr, buf, len))
		snprintf(buf, len, "?");
}

void fmt_endpoint(char *buf, size_t len, int family, const void *addr,
		  uint16_t port)
{
	char a[INET6_ADDRSTRLEN];
	char p[8];

	fmt_addr(a, sizeof(a), family, addr);
	if (port)
		snprintf(p, sizeof(p), "%u", port);
	else
		snprintf(p, sizeof(p), "*");
	if (family == AF_INET6 && strcmp(a, "*") && strchr(a, ':'))
		snprintf(buf, len, "[%s]:%s", a, p);
	else
		snprintf(buf, len, "%s:%s", a, p);
}

static uint64_t started_ns;

void process_mark_start(void)
{
	started_ns = now_ns();
}

uint64_t process_start_ns(void)
{
	return started_ns;
}

int write_all(int fd, const void *p, size_t n, uint64_t *done)
{
	const char *s = p;

	while (n) {
		ssize_t k = write(fd, s, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		s += k;
		n -= k;
		if (done)
			*done += k;
	}
	return 0;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

double wall_time(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t avail = sb->cap - sb->len;

		va_start(ap, fmt);
		n = vsnprintf(sb->buf ? sb->buf + sb->len : NULL, avail, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < avail) {
			sb->len += n;
			return;
		}
		size_t ncap = sb->cap ? sb->cap * 2 : 256;

		while (ncap < sb->len + n + 1)
			ncap *= 2;
		char *nb = realloc(sb->buf, ncap);

		if (!nb)
			abort(); /* out of memory formatting output: nothing sane to do */
		sb->buf = nb;
		sb->cap = ncap;
	}
}

void sb_append(struct strbuf *sb, const char *s, size_t n)
{
	if (sb->len + n + 1 > sb->cap) {
		size_t ncap = sb->cap ? sb->cap * 2 : 256;
		char *nb;

		while (ncap < sb->len + n + 1)
			ncap *= 2;
		nb = realloc(sb->buf, ncap);
		if (!nb)
			abort(); /* out of memory formatting output */
		sb->buf = nb;
		sb->cap = ncap;
	}
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

void str_printable(char *s)
{
	mem_printable(s, strlen(s), false);
}

bool wrap_glued(const char *w)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "ms", "us", "s",
					     "Mbit/s", "kbit/s", "Gbit/s", "bit/s", "pages" };
	size_t n = strcspn(w, " ,.;:)");

	/* a flag: "-w", "--json" (not a minus number) */
	if (w[0] == '-' && (isalpha((unsigned char)w[1]) ||
			    (w[1] == '-' && isalpha((unsigned char)w[2]))))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (strlen(units[i]) == n && !strncmp(w, units[i], n))
			return true;
	return false;
}

void sb_wrapped(struct strbuf *out, const char *label, const char *text, int width)
{
	const int indent = 14, w = width - indent;
	const char *p = text;
	bool first = true;

	while (*p) {
		int len = (int)strlen(p), cut = len;

		if (len > w) {
			cut = w;
			while (cut > 0 && (p[cut] != ' ' || wrap_glued(p + cut + 1)))
				cut--;
			if (!cut) /* one word longer than the line: cut it */
				cut = w;
		}
		if (first)
			sb_printf(out, "    %-9s %.*s\n", label, cut, p);
		else
			sb_printf(out, "%*s%.*s\n", indent, "", cut, p);
		first = false;
		p += cut;
		while (*p == ' ')
			p++;
	}
}

/* ---- output files ---- */

/* a name that keeps changing type between the look and the open */
#define OPEN_TRIES 3

/* err, with msg set to the line that says it */
__attribute__((format(printf, 4, 5)))
static int say(char *msg, size_t msglen, int err, const char *fmt, ...)
{
	va_list ap;

	if (msg && msglen) {
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return err;
}

/*
 * What path names, symlinks followed: 0 with *st for something written to
 * (a regular file only with force), -ENOENT for nothing there (create it;
 * msg untouched), a refusal (-EEXIST, -EINVAL) or stat's error with msg.
 */
static int look(const char *path, bool force, struct stat *st, char *msg, size_t msglen)
{
	struct stat lst;

	if (stat(path, st)) {
		int err = -errno;

		/* O_CREAT would make the missing target of a symlink, which
		 * discard could then not remove: the link is all it knows */
		if (err == -ENOENT && !lstat(path, &lst) && S_ISLNK(lst.st_mode))
			return say(msg, msglen, -EINVAL,
				   "%s is a symlink to a file that does not exist: name the file itself",
				   path);
		if (err == -ENOENT)
			return err; /* not an error yet: the caller creates it */
		return say(msg, msglen, err, "cannot create %s: %s", path, strerror(-err));
	}
	switch (st->st_mode & S_IFMT) {
	case S_IFREG:
		if (!force)
			return say(msg, msglen, -EEXIST,
				   "%s exists: give -f to overwrite it, or another name", path);
		return 0;
	case S_IFCHR:
	case S_IFIFO:
		return 0;
	case S_IFDIR:
		return say(msg, msglen, -EINVAL,
			   "%s is a directory: name a file in it", path);
	case S_IFBLK:
		return say(msg, msglen, -EINVAL,
			   "%s is a block device, which udpdrop never writes to: name a regular file",
			   path);
	case S_IFSOCK:
		return say(msg, msglen, -EINVAL,
			   "%s is a socket: name a regular file, a FIFO or a character device",
			   path);
	default:
		return say(msg, msglen, -EINVAL,
			   "%s is not a regular file, FIFO or character device: name one of those",
			   path);
	}
}

int out_file__check(const char *path, bool force, char *msg, size_t msglen)
{
	struct stat st;
	int err = look(path, force, &st, msg, msglen);

	return err == -EEXIST || err == -EINVAL ? err : 0;
}

static int create(struct out_file *of, const char *path)
{
	struct stat st;
	int fd;

	/* O_EXCL: never through a symlink, never over a file that appeared
	 * since the look; 0600 as a trace and packet headers are private */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		unlink(path);
		return err;
	}
	of->fd = fd;
	of->kind = OUT_FILE_NEW;
	of->dev = st.st_dev;
	of->ino = st.st_ino;
	return 0;
}

/* Open what look found. 1: it changed in between, look again. */
static int open_existing(struct out_file *of, const char *path, const struct stat *st,
			 char *msg, size_t msglen)
{
	struct stat now;
	int fd, fl;

	/* no O_TRUNC before fstat confirms the regular file looked at;
	 * O_NONBLOCK: a FIFO without a reader fails (ENXIO) rather than
	 * waits for one, a serial line does not wait for carrier */
	fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		if (err == -ENOENT)
			return 1;
		if (err == -ENXIO && S_ISFIFO(st->st_mode))
			return say(msg, msglen, err,
				   "%s is a FIFO with no reader: start the reader first", path);
		return say(msg, msglen, err, "cannot open %s: %s", path, strerror(-err));
	}
	if (fstat(fd, &now) || now.st_dev != st->st_dev || now.st_ino != st->st_ino ||
	    (now.st_mode & S_IFMT) != (st->st_mode & S_IFMT)) {
		close(fd);
		return 1;
	}
	/* writes wait for a slow reader, as any writer to a pipe does */
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		goto fail;
	if (S_ISREG(now.st_mode)) {
		if (ftruncate(fd, 0))
			goto fail;
		of->kind = OUT_FILE_EXISTING;
	} else {
		of->kind = OUT_FILE_STREAM;
	}
	of->fd = fd;
	of->dev = now.st_dev;
	of->ino = now.st_ino;
	return 0;
fail:
	fl = -errno;
	close(fd);
	return say(msg, msglen, fl, "cannot open %s: %s", path, strerror(-fl));
}

int out_file__open(struct out_file *of, const char *path, bool force,
		   char *msg, size_t msglen)
{
	struct stat st;
	int err;

	memset(of, 0, sizeof(*of));
	of->fd = -1;
	/* first: discard needs the name to remove what it created */
	of->path = strdup(path);
	if (!of->path)
		return say(msg, msglen, -ENOMEM, "cannot open %s: %s", path, strerror(ENOMEM));
	for (int i = 0; i < OPEN_TRIES; i++) {
		err = look(path, force, &st, msg, msglen);
		if (err == -ENOENT) {
			err = create(of, path);
			if (err == -EEXIST)
				continue; /* made since the look: look at that */
			if (err)
				say(msg, msglen, err, "cannot create %s: %s", path, strerror(-err));
		} else if (!err) {
			err = open_existing(of, path, &st, msg, msglen);
			if (err == 1)
				continue; /* replaced since the look */
		}
		if (err)
			goto fail;
		return 0;
	}
	err = say(msg, msglen, -EAGAIN, "cannot open %s: it keeps being replaced", path);
fail:
	free(of->path);
	of->path = NULL;
	return err;
}

int out_file__sync(struct out_file *of)
{
	if (of->kind == OUT_FILE_STREAM)
		return 0;
	return fsync(of->fd) ? -errno : 0;
}

int out_file__close(struct out_file *of)
{
	int err = 0;

	if (of->fd >= 0 && close(of->fd))
		err = -errno;
	of->fd = -1;
	free(of->path);
	of->path = NULL;
	return err;
}

void out_file__discard(struct out_file *of)
{
	struct stat st;

	if (of->fd < 0)
		return;
	if (of->kind == OUT_FILE_EXISTING)
		(void)!ftruncate(of->fd, 0);
	close(of->fd);
	of->fd = -1;
	/* by name, so only while the name still is the file made here */
	if (of->kind == OUT_FILE_NEW && of->path && !lstat(of->path, &st) &&
	    st.st_dev == of->dev && st.st_ino == of->ino)
		unlink(of->path);
	free(of->path);
	of->path = NULL;
}

int utf8_seq_len(const unsigned char *p, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
	int len;

	if (!n)
		return 0;
	len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
	if (p[0] < 0x80)
		return 1;
	if (!len || p[0] > 0xf4 || (size_t)len > n)
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0; /* overlong */
	else if (p[0] == 0xed)
		hi = 0x9f; /* surrogates */
	else if (p[0] == 0xf0)
		lo = 0x90; /* overlong */
	else if (p[0] == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (int i = 2; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* A C1 control as UTF-8: U+0080..U+009F, 0xc2 0x80..0x9f. */
static bool utf8_c1(const unsigned char *p, int len)
{
	return len == 2 && p[0] == 0xc2 && p[1] < 0xa0;
}

void mem_printable(char *s, size_t n, bool keep_newlines)
{
	unsigned char *p = (unsigned char *)s, *end = p + n;

	while (p < end) {
		int len = utf8_seq_len(p, end - p);

		if (len == 1 && ((*p >= 0x20 && *p != 0x7f) || (*p == '\n' && keep_newlines))) {
			p++;
		} else if (len > 1 && !utf8_c1(p, len)) {
			p += len;
		} else {
			/* a control, or a byte no valid character holds: a
			 * terminal in an 8-bit mode reads 0x9b as CSI */
			for (int i = 0; i < (len ? len : 1); i++)
				*p++ = '?';
		}
	}
}

bool mem_is_printable(const char *s, size_t n, bool newlines)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		int len = utf8_seq_len(p, end - p);

		if (!len || utf8_c1(p, len) ||
		    (len == 1 && (*p == 0x7f || (*p < 0x20 && !(*p == '\n' && newlines)))))
			return false;
		p += len;
	}
	return true;
}

const char *proto_name(int proto, char *buf, int len)
{
	if (proto == IPPROTO_UDP)
		return "udp";
	if (proto == IPPROTO_UDPLITE)
		return "udplite";
	snprintf(buf, len, "%d", proto);
	return buf;
}

void sleep_until_ns(uint64_t deadline, volatile sig_atomic_t *stop)
{
	struct timespec ts = { .tv_sec = deadline / 1000000000ull,
			       .tv_nsec = deadline % 1000000000ull };

	while (!*stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}
