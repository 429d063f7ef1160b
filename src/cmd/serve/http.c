// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop serve's HTTP responder: see http.h for what it promises.
 *
 * Each connection lives in one slot and walks READING -> WRITING ->
 * DRAINING -> closed, never blocking: every socket is non-blocking and the
 * one wait is the ppoll() in http__serve_until, bounded by the caller's
 * deadline and the earliest connection's. The request is parsed in place in
 * the slot's buffer, once, after its end was found, so every reader is
 * linear in what the client sent.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <zlib.h>
#include "http.h"
#include "log.h"
#include "util.h"

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

/*
 * After the answer is written the connection is shut for writing and read
 * until the client closes: closing a socket with unread bytes makes the
 * kernel send a reset, which can destroy the answer before the client read
 * it (a 431 to a client still sending its header, a 405 to a POST with a
 * body). A client that keeps sending is cut off after this many bytes, and
 * one that never closes after this long (well-behaved ones close at once).
 */
#define HTTP_DRAIN_MAX (64 * 1024)
#define HTTP_LINGER_MS 1000
/* Out of descriptors (EMFILE): the pending connection stays queued and the
 * listening socket stays readable; poll it again only after this. */
#define HTTP_ACCEPT_PAUSE_MS 100
/* Connections taken from the backlog per wakeup, so that a flood of
 * connects cannot keep the loop from serving the open ones. */
#define HTTP_ACCEPT_BURST 64
/* a connection without a whole request gives its slot to a newcomer only
 * once it has had this long: a scraper sends its request at once, and a
 * flood of new connections then evicts itself, not the scraper */
#define HTTP_EVICT_MIN_AGE_MS 1000

#define DEFAULT_CONTENT_TYPE "text/plain; charset=utf-8"
#define LISTEN_FORMS "expected ADDR:PORT, [ADDR]:PORT, :PORT or fd:N"

enum conn_state {
	CONN_FREE,
	CONN_READING,   /* the request header */
	CONN_WRITING,   /* the answer, from out */
	CONN_DRAINING,  /* shut for writing, reading until the client closes */
};

struct http_conn {
	int fd;
	enum conn_state state;
	uint64_t deadline_ns;      /* from accept, for the whole life */
	size_t len;                /* request bytes in req */
	size_t scanned;            /* req[0, scanned) holds no header end */
	size_t drained;            /* bytes discarded while draining */
	char *out;                 /* the answer: status line, headers, body */
	size_t out_len, out_sent;
	char req[HTTP_MAX_REQUEST + 1];
};

/* ---- characters (RFC 9110 5.6.2; not <ctype.h>: no locale here) ---- */

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_ows(char c) { return c == ' ' || c == '\t'; }

static bool is_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_token(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!is_tchar(*s))
			return false;
	return true;
}

/* ---- listening ---- */

/* The user's spec in a message: short and without terminal controls. */
static void shown_spec(char *buf, size_t len, const char *spec)
{
	snprintf(buf, len, "%s", spec);
	mem_printable(buf, strlen(buf), false);
}

#define SPEC_ERR(err, errlen, shown, fmt, ...) \
	snprintf(err, errlen, "--listen %s: " fmt, shown, ##__VA_ARGS__)

/* "fd:N": an inherited socket, which must already be listening (we do not
 * bind or listen on what someone else set up). */
static int adopt_fd(const char *num, const char *shown, char *err, size_t errlen)
{
	int fd, listening = 0, flags;
	socklen_t optlen = sizeof(listening);
	struct stat st;
	uint64_t v;

	if (parse_u64(num, 0, INT_MAX, &v)) {
		SPEC_ERR(err, errlen, shown, "fd:N needs a descriptor number (fd:3 under systemd's socket activation)");
		return -EINVAL;
	}
	fd = (int)v;
	if (fstat(fd, &st)) {
		SPEC_ERR(err, errlen, shown, "descriptor %d is not open: pass the listening socket on to udpdrop", fd);
		return -EINVAL;
	}
	if (!S_ISSOCK(st.st_mode)) {
		SPEC_ERR(err, errlen, shown, "descriptor %d is not a socket: pass a listening TCP socket", fd);
		return -EINVAL;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &optlen) || listening != 1) {
		SPEC_ERR(err, errlen, shown, "descriptor %d is not a listening socket: pass one that listen() was called on", fd);
		return -EINVAL;
	}
	/* O_NONBLOCK is the open file's, shared with whoever passed it on:
	 * harmless for a socket only we accept on. */
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC)) {
		int e = errno;

		SPEC_ERR(err, errlen, shown, "cannot make descriptor %d non-blocking: %s", fd, strerror(e));
		return -e;
	}
	return fd;
}

/* "ADDR:PORT", "[ADDR]:PORT" or ":PORT" into a socket address. */
static int parse_addr_spec(const char *spec, const char *shown,
			   struct sockaddr_storage *ss, socklen_t *sslen,
			   char *err, size_t errlen)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	char host[INET6_ADDRSTRLEN];
	const char *port_s, *colon;
	size_t hostlen;
	uint64_t port;

	memset(ss, 0, sizeof(*ss));
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');

		if (!close || close[1] != ':') {
			SPEC_ERR(err, errlen, shown, LISTEN_FORMS " ([::1]:9436)");
			return -EINVAL;
		}
		hostlen = close - spec - 1;
		if (!hostlen || hostlen >= sizeof(host)) {
			SPEC_ERR(err, errlen, shown, "expected a numeric IPv6 address in the brackets ([::1]:9436)");
			return -EINVAL;
		}
		memcpy(host, spec + 1, hostlen);
		host[hostlen] = 0;
		if (inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1) {
			SPEC_ERR(err, errlen, shown, "expected a numeric IPv6 address in the brackets ([::1]:9436)");
			return -EINVAL;
		}
		sin6->sin6_family = AF_INET6;
		*sslen = sizeof(*sin6);
		port_s = close + 2;
	} else {
		colon = strrchr(spec, ':');
		if (!colon) {
			SPEC_ERR(err, errlen, shown, LISTEN_FORMS " (127.0.0.1:9436)");
			return -EINVAL;
		}
		hostlen = colon - spec;
		if (memchr(spec, ':', hostlen)) {
			SPEC_ERR(err, errlen, shown, "an IPv6 address goes in brackets ([::1]:9436)");
			return -EINVAL;
		}
		if (hostlen >= sizeof(host)) {
			SPEC_ERR(err, errlen, shown, "expected a numeric IPv4 address (127.0.0.1:9436); names are not looked up");
			return -EINVAL;
		}
		memcpy(host, spec, hostlen);
		host[hostlen] = 0;
		/* ":PORT": loopback, so that only a deliberate address exposes
		 * the page to the network */
		if (inet_pton(AF_INET, hostlen ? host : "127.0.0.1", &sin->sin_addr) != 1) {
			SPEC_ERR(err, errlen, shown, "expected a numeric IPv4 address (127.0.0.1:9436); names are not looked up");
			return -EINVAL;
		}
		sin->sin_family = AF_INET;
		*sslen = sizeof(*sin);
		port_s = colon + 1;
	}
	if (parse_u64(port_s, 0, 65535, &port)) {
		SPEC_ERR(err, errlen, shown, "the port must be a number from 0 to 65535 (0: any free one)");
		return -EINVAL;
	}
	if (ss->ss_family == AF_INET)
		sin->sin_port = htons(port);
	else
		sin6->sin6_port = htons(port);
	return 0;
}

static int open_listener(const char *spec, const char *shown, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	int fd, one = 1, e;

	e = parse_addr_spec(spec, shown, &ss, &sslen, err, errlen);
	if (e)
		return e;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		SPEC_ERR(err, errlen, shown, "socket: %s%s", strerror(e),
			 e == EAFNOSUPPORT ? " (IPv6 is off here: listen on an IPv4 address)" : "");
		return -e;
	}
	/* a restarted serve binds again while its old connections wait out
	 * TIME_WAIT */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, sslen)) {
		e = errno;
		if (e == EADDRINUSE)
			SPEC_ERR(err, errlen, shown, "the address is in use: pick another port, or stop what listens there");
		else if (e == EACCES)
			SPEC_ERR(err, errlen, shown, "ports below 1024 need CAP_NET_BIND_SERVICE: pick a port from 1024 up");
		else if (e == EADDRNOTAVAIL)
			SPEC_ERR(err, errlen, shown, "no interface here has that address: pick one of this host's");
		else
			SPEC_ERR(err, errlen, shown, "bind: %s", strerror(e));
		close(fd);
		return -e;
	}
	if (listen(fd, SOMAXCONN)) {
		e = errno;
		SPEC_ERR(err, errlen, shown, "listen: %s", strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

int http__check_spec(const char *spec)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	uint64_t v;
	char err[8];

	if (!spec || !*spec)
		return -EINVAL;
	if (!strncmp(spec, "fd:", 3))
		return parse_u64(spec + 3, 0, INT_MAX, &v) ? -EINVAL : 0;
	return parse_addr_spec(spec, spec, &ss, &sslen, err, sizeof(err));
}

/* Is the socket bound to 127.0.0.0/8 or ::1 (an inherited one too)? */
static bool bound_to_loopback(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return false;
	if (ss.ss_family == AF_INET)
		return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss.ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
	return false;
}

int http__listen(struct http_server *s, const char *spec, int max_conns,
		 int timeout_ms, char *err, size_t errlen)
{
	char shown[80];
	int fd;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (errlen)
		err[0] = 0;
	if (!spec || !*spec) {
		snprintf(err, errlen, "--listen: " LISTEN_FORMS);
		return -EINVAL;
	}
	shown_spec(shown, sizeof(shown), spec);
	if (max_conns <= 0)
		max_conns = HTTP_MAX_CONNS;
	if (timeout_ms <= 0)
		timeout_ms = HTTP_TIMEOUT_MS;

	/* the slots first: an inherited socket is not closed for want of memory */
	s->conns = calloc(max_conns, sizeof(*s->conns));
	s->pfds = calloc((size_t)max_conns + 1, sizeof(*s->pfds));
	if (!s->conns || !s->pfds) {
		snprintf(err, errlen, "--listen %s: out of memory for %d connections", shown, max_conns);
		http__close(s);
		return -ENOMEM;
	}
	for (int i = 0; i < max_conns; i++)
		s->conns[i].fd = -1;

	if (!strncmp(spec, "fd:", 3))
		fd = adopt_fd(spec + 3, shown, err, errlen);
	else
		fd = open_listener(spec, shown, err, errlen);
	if (fd < 0) {
		http__close(s);
		return fd;
	}
	s->fd = fd;
	s->loopback = bound_to_loopback(fd);
	s->max_conns = max_conns;
	s->timeout_ms = timeout_ms;
	return 0;
}

int http__port(const struct http_server *s)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (s->fd < 0 || getsockname(s->fd, (struct sockaddr *)&ss, &len))
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

static void conn_close(struct http_server *s, struct http_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	c->out = NULL;
	c->fd = -1;
	c->state = CONN_FREE;
	/* a descriptor came free: EMFILE may be over */
	s->accept_resume_ns = 0;
}

void http__close(struct http_server *s)
{
	/* conns is set only by a successful start: a zeroed server (fd 0)
	 * does not close standard input */
	if (s->conns) {
		for (int i = 0; i < s->max_conns; i++)
			if (s->conns[i].state != CONN_FREE)
				conn_close(s, &s->conns[i]);
		if (s->fd >= 0)
			close(s->fd);
	}
	free(s->conns);
	free(s->pfds);
	s->conns = NULL;
	s->pfds = NULL;
	s->fd = -1;
}

/* ---- the request ---- */

/*
 * The header ends at the first empty line: "\r\n\r\n" or a bare "\n\n"
 * (RFC 9112 2.2 lets a recipient take a bare LF as a line end). The
 * search resumes where it stopped: it looks back at most two bytes, which
 * are already in the buffer. Returns the header's length, 0 while it has
 * no end yet.
 */
static size_t header_end(struct http_conn *c)
{
	const char *b = c->req;

	for (size_t i = c->scanned; i < c->len; i++) {
		if (b[i] != '\n')
			continue;
		if (i >= 1 && b[i - 1] == '\n')
			return i + 1;
		if (i >= 2 && b[i - 1] == '\r' && b[i - 2] == '\n')
			return i + 1;
	}
	c->scanned = c->len;
	return 0;
}

/* The next line of buf[*pos, n), NUL-terminated in place, its CRLF or LF
 * cut. The header ends with a LF, so one is always there. */
static char *next_line(char *buf, size_t n, size_t *pos)
{
	size_t start = *pos, end = start;

	while (end < n && buf[end] != '\n')
		end++;
	*pos = end + 1;
	if (end > start && buf[end - 1] == '\r')
		end--;
	buf[end] = 0;
	return buf + start;
}

/* RFC 9110 12.4.2: qvalue = "0" [ "." 0*3DIGIT ] / "1" [ "." 0*3"0" ], in
 * thousandths; -1 if malformed. */
static int parse_qvalue(const char **pp)
{
	const char *p = *pp;
	int q;

	if (*p != '0' && *p != '1')
		return -1;
	q = (*p++ - '0') * 1000;
	if (*p == '.') {
		p++;
		for (int scale = 100, k = 0; k < 3 && is_digit(*p); k++, scale /= 10)
			q += (*p++ - '0') * scale;
	}
	if (q > 1000)
		return -1;
	*pp = p;
	return q;
}

/*
 * One Accept-Encoding value: a list of codings, each with an optional
 * weight ("gzip;q=0.5"). Records the weights of gzip (or its alias x-gzip)
 * and of "*" (any coding not named); -1 stays where not listed. A malformed
 * element is skipped, the rest still count. Repeated headers are one list
 * (RFC 9110 5.3): a later weight for the same coding wins.
 */
static void parse_accept_encoding(const char *p, int *gzip_q, int *any_q)
{
	while (*p) {
		const char *coding;
		size_t len;
		int q = 1000;
		bool ok = true;

		while (*p == ',' || is_ows(*p))
			p++;
		if (!*p)
			break;
		coding = p;
		while (is_tchar(*p))
			p++;
		len = p - coding;
		if (!len)
			ok = false;
		while (ok) {
			while (is_ows(*p))
				p++;
			if (*p != ';')
				break;
			p++;
			while (is_ows(*p))
				p++;
			if ((*p == 'q' || *p == 'Q') && p[1] == '=') {
				p += 2;
				q = parse_qvalue(&p);
				ok = q >= 0;
			} else {
				/* another parameter: not ours to read */
				while (*p && *p != ',' && *p != ';')
					p++;
			}
		}
		if (*p && *p != ',')
			ok = false;
		while (*p && *p != ',')
			p++;
		if (!ok)
			continue;
		if (len == 1 && *coding == '*')
			*any_q = q;
		else if ((len == 4 && !strncasecmp(coding, "gzip", 4)) ||
			 (len == 6 && !strncasecmp(coding, "x-gzip", 6)))
			*gzip_q = q;
	}
}

/*
 * Bytes a header may not hold: NUL and the other controls but HTAB, and a
 * CR that does not end a line. A stray CR or NUL is how requests are
 * smuggled past a proxy that reads the header another way; 400 for all.
 */
static bool header_bytes_ok(const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = b[i];

		if (c == '\n' || c == '\t')
			continue;
		if (c == '\r') {
			if (i + 1 < n && b[i + 1] == '\n')
				continue;
			return false;
		}
		if (c < 0x20 || c == 0x7f)
			return false;
	}
	return true;
}

/* The request target as a path: origin-form ("/metrics?x") or
 * absolute-form ("http://host:9436/metrics", RFC 9112 3.2.2: a server
 * must accept it), its query cut. NULL if neither. */
static const char *target_path(char *t)
{
	char *q;

	if (*t != '/') {
		char *p = t;

		while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
			p++;
		if (p == t || strncmp(p, "://", 3))
			return NULL;
		p += 3;
		while (*p && *p != '/' && *p != '?')
			p++;
		if (*p != '/')
			return "/";
		t = p;
	}
	q = strchr(t, '?');
	if (q)
		*q = 0;
	return t;
}

/*
 * Parse the n header bytes in buf, in place (NULs are written into it):
 * 0 with req filled in, or the status to answer (400, 405).
 */
static int parse_request(char *buf, size_t n, struct http_request *req)
{
	char *line, *method, *target, *version, *sp;
	const char *path;
	int gzip_q = -1, any_q = -1;
	size_t pos = 0;
	bool have_accept = false;

	if (!header_bytes_ok(buf, n))
		return 400;

	/* METHOD SP request-target SP HTTP/1.x, single spaces (RFC 9112 3) */
	line = next_line(buf, n, &pos);
	method = line;
	sp = strchr(method, ' ');
	if (!sp)
		return 400;
	*sp = 0;
	target = sp + 1;
	sp = strchr(target, ' ');
	if (!sp)
		return 400;
	*sp = 0;
	version = sp + 1;
	if (!is_token(method) || !*target || strchr(target, '\t') ||
	    strlen(version) != 8 || strncmp(version, "HTTP/1.", 7) || !is_digit(version[7]))
		return 400;
	path = target_path(target);
	if (!path)
		return 400;

	while (pos < n) {
		char *name, *value, *colon, *end;

		line = next_line(buf, n, &pos);
		if (!*line)
			break; /* the empty line that ends the header */
		/* obs-fold (a line that continues the one before): RFC 9112
		 * 5.2 lets a server reject it */
		if (is_ows(*line))
			return 400;
		colon = strchr(line, ':');
		if (!colon)
			return 400;
		*colon = 0;
		name = line;
		/* no space before the colon (RFC 9112 5.1): 400 */
		if (!is_token(name))
			return 400;
		value = colon + 1;
		while (is_ows(*value))
			value++;
		end = value + strlen(value);
		while (end > value && is_ows(end[-1]))
			end--;
		*end = 0;
		if (!strcasecmp(name, "Accept")) {
			/* the first one: a handler picks a format by it */
			if (!have_accept)
				req->accept = value;
			have_accept = true;
		} else if (!strcasecmp(name, "Accept-Encoding")) {
			parse_accept_encoding(value, &gzip_q, &any_q);
		} else if (!strcasecmp(name, "Host")) {
			/* two Host headers: 400 (RFC 9112 3.2) */
			if (req->host)
				return 400;
			req->host = value;
		}
	}

	req->method = method;
	req->path = path;
	if (!have_accept)
		req->accept = "";
	if (!req->host)
		req->host = "";
	req->gzip_ok = gzip_q >= 0 ? gzip_q > 0 : any_q > 0;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return 405;
	return 0;
}

/* ---- the answer ---- */

static const char *reason_phrase(int status)
{
	switch (status) {
	case 200: return "OK";
	case 204: return "No Content";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	default: return ""; /* the reason phrase may be empty (RFC 9112 4) */
	}
}

int http__gzip(const char *body, size_t len, char **out, size_t *out_len)
{
	z_stream zs = {0};
	uLong bound;
	int ret;

	if (len > UINT_MAX) /* avail_in is an uInt: send such a page as it is */
		return -E2BIG;
	/* windowBits 15 + 16: a gzip header and trailer, not a zlib one */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&zs, len);
	*out = malloc(bound);
	if (!*out) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)body;
	zs.avail_in = len;
	zs.next_out = (Bytef *)*out;
	zs.avail_out = bound;
	/* deflateBound's room always holds the whole stream in one call */
	ret = deflate(&zs, Z_FINISH);
	deflateEnd(&zs);
	if (ret != Z_STREAM_END) {
		free(*out);
		*out = NULL;
		return -EIO;
	}
	/* only now: on failure the caller sends the body as it is */
	*out_len = zs.total_out;
	return 0;
}

static int format_head(char *buf, size_t size, int status, const char *type,
		       size_t body_len, bool gzipped, bool vary, const char *extra)
{
	return snprintf(buf, size,
			"HTTP/1.1 %d %s\r\n"
			"Content-Type: %s\r\n"
			"Content-Length: %zu\r\n"
			"%s%s%s"
			"Connection: close\r\n"
			"\r\n",
			status, reason_phrase(status), type, body_len,
			gzipped ? "Content-Encoding: gzip\r\n" : "",
			/* the page depends on both (serve negotiates the format) */
			vary ? "Vary: Accept, Accept-Encoding\r\n" : "",
			extra ? extra : "");
}

/*
 * The whole answer into the connection's own buffer (the handler's page may
 * change once it returned): status line, headers and, but for HEAD, the
 * body, gzip'ed when both sides want it. extra: more header lines, each
 * ending in CRLF. 0 or -ENOMEM.
 */
static int conn_compose(struct http_conn *c, const struct http_response *r,
			bool head, bool gzip, const char *extra)
{
	const char *type = r->content_type ? r->content_type : DEFAULT_CONTENT_TYPE;
	const char *body = r->body;
	size_t body_len = r->len, total;
	char *zbody = NULL;
	int hlen;

	/* the page's own (compressed once per render), else this answer's */
	if (gzip && body_len && r->gz_body) {
		body = r->gz_body;
		body_len = r->gz_len;
	} else if (gzip && body_len && !http__gzip(body, body_len, &zbody, &body_len)) {
		body = zbody;
	} else {
		gzip = false;
	}
	hlen = format_head(NULL, 0, r->status, type, body_len, gzip, r->may_gzip, extra);
	total = hlen + (head ? 0 : body_len);
	c->out = malloc(total + 1);
	if (!c->out) {
		free(zbody);
		return -ENOMEM;
	}
	format_head(c->out, hlen + 1, r->status, type, body_len, gzip, r->may_gzip, extra);
	if (!head && body_len)
		memcpy(c->out + hlen, body, body_len);
	free(zbody);
	c->out_len = total;
	c->out_sent = 0;
	return 0;
}

static void conn_write(struct http_server *s, struct http_conn *c, uint64_t now);

/* An answer the responder makes itself: short text. */
static void conn_answer_text(struct http_server *s, struct http_conn *c,
			     int status, const char *text, const char *extra,
			     uint64_t now)
{
	struct http_response r = {
		.status = status, .body = text, .len = strlen(text),
	};

	if (conn_compose(c, &r, false, false, extra)) {
		conn_close(s, c);
		return;
	}
	c->state = CONN_WRITING;
	conn_write(s, c, now);
}

/* A content type a handler gave goes into the header as it is: one that
 * could end the line would let it write other headers. */
static bool content_type_ok(const char *t)
{
	for (; *t; t++)
		if ((unsigned char)*t < 0x20 || *t == 0x7f)
			return false;
	return true;
}

/*
 * Does a Host value name an IP address or localhost (with a port or
 * not), or is it empty (HTTP/1.0)? A browser sends the name of the page's
 * origin: a rebinding name is neither.
 */
static bool host_is_address(const char *host)
{
	char name[64];
	const char *end;
	struct in6_addr a6;
	struct in_addr a4;
	size_t n;

	if (!*host)
		return true;
	if (host[0] == '[') {
		end = strchr(host, ']');
		if (!end || (end[1] && end[1] != ':'))
			return false;
		n = end - host - 1;
		if (n >= sizeof(name))
			return false;
		memcpy(name, host + 1, n);
		name[n] = 0;
		return inet_pton(AF_INET6, name, &a6) == 1;
	}
	end = strchr(host, ':');
	n = end ? (size_t)(end - host) : strlen(host);
	if (n >= sizeof(name) || (end && strchr(end + 1, ':')))
		return false;
	memcpy(name, host, n);
	name[n] = 0;
	return inet_pton(AF_INET, name, &a4) == 1 || !strcasecmp(name, "localhost") ||
	       !strcasecmp(name, "localhost.");
}

/* A complete header of `head_len` bytes is in c->req: answer it. */
static void conn_respond(struct http_server *s, struct http_conn *c, size_t head_len,
			 http_handler h, void *arg, uint64_t now)
{
	struct http_request req = {0};
	struct http_response resp = {0};
	int status;

	s->requests++;
	status = parse_request(c->req, head_len, &req);
	if (status == 400) {
		s->bad++;
		conn_answer_text(s, c, 400, "bad request\n", NULL, now);
		return;
	}
	if (status == 405) {
		conn_answer_text(s, c, 405, "only GET and HEAD\n", "Allow: GET, HEAD\r\n", now);
		return;
	}
	if (s->loopback && !host_is_address(req.host)) {
		s->bad_host++;
		conn_answer_text(s, c, 403, "on a loopback address serve answers requests to an IP "
				 "address or localhost only (Host: 127.0.0.1:PORT); listen on another "
				 "address (--listen) to be reached by name\n", NULL, now);
		return;
	}
	if (!h) {
		conn_answer_text(s, c, 404, "not found\n", NULL, now);
		return;
	}
	h(arg, &req, &resp);
	/* 1xx would promise another answer, which never comes */
	if (resp.status < 200 || resp.status > 599 || (resp.len && !resp.body) ||
	    (resp.content_type && !content_type_ok(resp.content_type))) {
		pr_debug("http: the handler's answer to %s is malformed (status %d): 500\n",
			 req.path, resp.status);
		conn_answer_text(s, c, 500, "internal error\n", NULL, now);
		return;
	}
	if (conn_compose(c, &resp, !strcmp(req.method, "HEAD"),
			 req.gzip_ok && resp.may_gzip, NULL)) {
		conn_close(s, c);
		return;
	}
	c->state = CONN_WRITING;
	conn_write(s, c, now);
}

/* ---- the connection's life ---- */

/* Read and discard until the client closes (see HTTP_DRAIN_MAX). */
static void conn_drain(struct http_server *s, struct http_conn *c)
{
	char sink[4096];

	for (;;) {
		ssize_t n = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT);

		if (n > 0) {
			c->drained += n;
			if (c->drained > HTTP_DRAIN_MAX)
				break;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		break; /* the client closed, or the connection failed */
	}
	conn_close(s, c);
}

static void conn_write(struct http_server *s, struct http_conn *c, uint64_t now)
{
	uint64_t linger_end;

	while (c->out_sent < c->out_len) {
		/* MSG_NOSIGNAL: a client gone is an error here, not SIGPIPE */
		ssize_t n = send(c->fd, c->out + c->out_sent, c->out_len - c->out_sent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				conn_close(s, c);
			return;
		}
		c->out_sent += n;
	}
	free(c->out);
	c->out = NULL;
	/* FIN after the answer: the client reads to the end and closes */
	shutdown(c->fd, SHUT_WR);
	c->state = CONN_DRAINING;
	c->drained = 0;
	linger_end = now + HTTP_LINGER_MS * NS_PER_MS;
	if (linger_end < c->deadline_ns)
		c->deadline_ns = linger_end;
	conn_drain(s, c);
}

static void conn_read(struct http_server *s, struct http_conn *c,
		      http_handler h, void *arg, uint64_t now)
{
	for (;;) {
		size_t room = HTTP_MAX_REQUEST - c->len, end;
		ssize_t n;

		if (!room) {
			/* full, and no end in it */
			s->too_large++;
			conn_answer_text(s, c, 431, "request header too large\n", NULL, now);
			return;
		}
		n = recv(c->fd, c->req + c->len, room, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			/* gone before its header ended: nobody to answer */
			conn_close(s, c);
			return;
		}
		c->len += n;
		end = header_end(c);
		if (end) {
			/* what follows the header (a body, a pipelined request)
			 * is never read: drained after the answer */
			conn_respond(s, c, end, h, arg, now);
			return;
		}
	}
}

/* Close connections whose deadline passed. */
static void expire(struct http_server *s, uint64_t now)
{
	static const char timeout_answer[] =
		"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
	static const struct linger abort_linger = { .l_onoff = 1, .l_linger = 0 };

	for (int i = 0; i < s->max_conns; i++) {
		struct http_conn *c = &s->conns[i];

		if (c->state == CONN_FREE || c->deadline_ns > now)
			continue;
		if (c->state != CONN_DRAINING)
			s->timeouts++;
		/* best effort, never waited for; only to a client that sent
		 * something: one that sent nothing (a browser's preconnect)
		 * waits for no answer */
		if (c->state == CONN_READING && c->len)
			(void)send(c->fd, timeout_answer, sizeof(timeout_answer) - 1,
				    MSG_NOSIGNAL | MSG_DONTWAIT);
		/* a client that stopped reading its answer: reset, so that
		 * the kernel does not keep the unsent rest for it, orphaned */
		if (c->state == CONN_WRITING)
			(void)setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &abort_linger,
					 sizeof(abort_linger));
		conn_close(s, c);
	}
}

/*
 * A slot for a new connection: a free one; else one lingering after its
 * answer; else the one that has waited longest without a whole request,
 * if it has had HTTP_EVICT_MIN_AGE_MS (a slow or stalled client), closed
 * for it and counted as rejected. A scraper sends its request at once (and
 * accept_some reads what is there at once), so clients that hold slots
 * open without one (slowloris) cannot keep it out, and a flood of new
 * connections evicts itself. NULL when every slot is writing an answer
 * or too young to go.
 */
static struct http_conn *free_slot(struct http_server *s, uint64_t now)
{
	struct http_conn *oldest = NULL;

	for (int i = 0; i < s->max_conns; i++) {
		struct http_conn *c = &s->conns[i];

		if (c->state == CONN_FREE)
			return c;
		/* lingering after an answer: the first to go */
		if (c->state == CONN_DRAINING &&
		    (!oldest || oldest->state != CONN_DRAINING || c->deadline_ns < oldest->deadline_ns))
			oldest = c;
		else if (c->state == CONN_READING &&
			 c->deadline_ns - (uint64_t)s->timeout_ms * NS_PER_MS +
				 HTTP_EVICT_MIN_AGE_MS * NS_PER_MS <= now &&
			 (!oldest || (oldest->state == CONN_READING && c->deadline_ns < oldest->deadline_ns)))
			oldest = c;
	}
	if (!oldest)
		return NULL;
	if (oldest->state == CONN_READING)
		s->rejected++;
	conn_close(s, oldest);
	return oldest;
}

/* Take what is in the backlog; 0, or -errno when the listening socket
 * itself failed. */
static int accept_some(struct http_server *s, uint64_t now, http_handler h, void *arg)
{
	for (int k = 0; k < HTTP_ACCEPT_BURST; k++) {
		int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct http_conn *c;

		if (fd < 0) {
			switch (errno) {
			case EAGAIN:
				return 0;
			case EBADF: case ENOTSOCK: case EINVAL: case EFAULT:
				return -errno;
			/* a connection that failed before it was taken
			 * (accept(2): Linux passes on its pending error) */
			case EINTR: case ECONNABORTED: case EPROTO: case EPERM:
			case ENETDOWN: case ENOPROTOOPT: case EHOSTDOWN:
			case ENONET: case EHOSTUNREACH: case EOPNOTSUPP:
			case ENETUNREACH:
				continue;
			default:
				/* EMFILE, ENFILE, ENOBUFS, ENOMEM: the socket
				 * stays readable, and polling it would spin */
				pr_debug("http: accept: %s: pausing\n", strerror(errno));
				s->accept_resume_ns = now + HTTP_ACCEPT_PAUSE_MS * NS_PER_MS;
				return 0;
			}
		}
		c = free_slot(s, now);
		if (!c) {
			/* taken and closed rather than left in the backlog, where
			 * it would hold a place a good client needs */
			close(fd);
			s->rejected++;
			continue;
		}
		c->fd = fd;
		c->state = CONN_READING;
		c->deadline_ns = now + (uint64_t)s->timeout_ms * NS_PER_MS;
		c->len = c->scanned = c->drained = 0;
		c->out = NULL;
		c->out_len = c->out_sent = 0;
		/* a request already here is read now: answered, its slot is
		 * not one a newcomer can take */
		conn_read(s, c, h, arg, now);
	}
	return 0;
}

static int listener_failed(struct http_server *s, short revents)
{
	int e = 0;
	socklen_t len = sizeof(e);

	if (revents & POLLNVAL)
		return -EBADF;
	if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &e, &len) || !e)
		e = EIO;
	return -e;
}

int http__serve_until(struct http_server *s, uint64_t deadline_ns,
		      volatile sig_atomic_t *stop, http_handler h, void *arg)
{
	if (!s->conns || s->fd < 0)
		return -EBADF;

	/* at least one pass, without waiting, even past the deadline: a
	 * caller running late still serves what is ready */
	for (;;) {
		uint64_t now, wake, wait_ns;
		struct timespec ts;
		int n, ret;

		if (stop && *stop)
			return 0;
		now = now_ns();
		expire(s, now);

		wake = deadline_ns;
		s->pfds[0].fd = s->fd;
		s->pfds[0].events = POLLIN;
		if (s->accept_resume_ns > now) {
			s->pfds[0].fd = -1; /* poll skips it */
			if (s->accept_resume_ns < wake)
				wake = s->accept_resume_ns;
		}
		for (int i = 0; i < s->max_conns; i++) {
			struct http_conn *c = &s->conns[i];
			struct pollfd *p = &s->pfds[i + 1];

			p->fd = c->state == CONN_FREE ? -1 : c->fd;
			p->events = c->state == CONN_WRITING ? POLLOUT : POLLIN;
			p->revents = 0;
			if (c->state != CONN_FREE && c->deadline_ns < wake)
				wake = c->deadline_ns;
		}
		wait_ns = wake > now ? wake - now : 0;
		ts.tv_sec = wait_ns / NS_PER_S;
		ts.tv_nsec = wait_ns % NS_PER_S;
		/*
		 * A signal sets *stop and interrupts this wait (EINTR; poll
		 * is never restarted, SA_RESTART or not). One that comes
		 * between the check above and the wait is seen at the next
		 * wakeup, at the latest at the deadline.
		 */
		n = ppoll(s->pfds, (nfds_t)s->max_conns + 1, &ts, NULL);
		if (n < 0 && errno != EINTR)
			return -errno;
		now = now_ns();
		if (n > 0) {
			for (int i = 0; i < s->max_conns; i++) {
				struct http_conn *c = &s->conns[i];

				if (!s->pfds[i + 1].revents || c->state == CONN_FREE)
					continue;
				if (c->state == CONN_READING)
					conn_read(s, c, h, arg, now);
				else if (c->state == CONN_WRITING)
					conn_write(s, c, now);
				else
					conn_drain(s, c);
			}
			if (s->pfds[0].fd >= 0 && s->pfds[0].revents) {
				if (s->pfds[0].revents & (POLLERR | POLLNVAL))
					return listener_failed(s, s->pfds[0].revents);
				ret = accept_some(s, now, h, arg);
				if (ret)
					return ret;
			}
		}
		if (now >= deadline_ns)
			return 0;
	}
}
