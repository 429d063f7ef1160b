// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for src/cmd/serve/http.c: real sockets on 127.0.0.1 (port 0).
 * One thread: the test drives http__serve_until in short slices while its
 * clients, non-blocking, write and read, so a responder that blocked on one
 * client would never answer the next. Times are only bounded generously
 * (the machine is busy); a deadline is checked from below, where the clock
 * makes it exact.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <zlib.h>
#include "http.h"
#include "util.h"

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull
#define SLICE_NS (20 * NS_PER_MS)
#define PUMP_LIMIT_NS (10 * NS_PER_S)  /* generous: only a hang fails */
/* over tcp_wmem's default maximum (4 MiB): it cannot all sit in the
 * kernel's buffers, so it is written over several slices */
#define BIG_LEN (16u << 20)

static const char metrics_body[] = "udpdrop_up 1\nudpdrop_drops_total 42\n";
#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct fx {
	struct http_server srv;
	int calls;
	char method[16], path[256], accept[256];
	bool gzip_ok;
	char page[256];   /* the handler's page: scribbled after every slice */
	char *gz;         /* /pregz's page, gzip'ed once (http__gzip) */
	size_t gz_len;
	char *big;        /* likewise, BIG_LEN bytes */
};

static char big_byte(size_t i) { return 'a' + (i * 7 + i / 4096) % 26; }

/* A handler that answers from pages it owns and rewrites later: the
 * responder must have copied what it sends. */
static void handler(void *arg, const struct http_request *req, struct http_response *resp)
{
	struct fx *f = arg;

	f->calls++;
	snprintf(f->method, sizeof(f->method), "%s", req->method);
	snprintf(f->path, sizeof(f->path), "%s", req->path);
	snprintf(f->accept, sizeof(f->accept), "%s", req->accept);
	f->gzip_ok = req->gzip_ok;

	if (!strcmp(req->path, "/metrics")) {
		memcpy(f->page, metrics_body, sizeof(metrics_body));
		*resp = (struct http_response){ .status = 200, .content_type = METRICS_TYPE,
			.body = f->page, .len = strlen(metrics_body), .may_gzip = true };
	} else if (!strcmp(req->path, "/big")) {
		for (size_t i = 0; i < BIG_LEN; i++)
			f->big[i] = big_byte(i);
		*resp = (struct http_response){ .status = 200, .body = f->big, .len = BIG_LEN };
	} else if (!strcmp(req->path, "/plain")) {
		strcpy(f->page, "never compressed\n");
		*resp = (struct http_response){ .status = 200, .body = f->page,
			.len = strlen(f->page), .may_gzip = false };
	} else if (!strcmp(req->path, "/evil-type")) {
		*resp = (struct http_response){ .status = 200, .content_type = "text/plain\r\nX-Evil: 1",
			.body = "x", .len = 1 };
	} else if (!strcmp(req->path, "/pregz")) {
		/* compressed once by the caller: sent as it is */
		strcpy(f->page, "the page\n");
		*resp = (struct http_response){ .status = 200, .body = f->page, .len = strlen(f->page),
			.may_gzip = true, .gz_body = f->gz, .gz_len = f->gz_len };
	} else if (!strcmp(req->path, "/no-status")) {
		/* the handler forgot the status */
	} else {
		strcpy(f->page, "not found\n");
		*resp = (struct http_response){ .status = 404, .body = f->page, .len = strlen(f->page) };
	}
}

static void scribble(struct fx *f)
{
	memset(f->page, '#', sizeof(f->page));
	memset(f->big, '#', BIG_LEN);
}

static struct fx *fx_new(int max_conns, int timeout_ms)
{
	struct fx *f = calloc(1, sizeof(*f));
	char err[256];

	assert_non_null(f);
	f->big = malloc(BIG_LEN);
	assert_non_null(f->big);
	assert_int_equal(http__listen(&f->srv, "127.0.0.1:0", max_conns, timeout_ms, err, sizeof(err)), 0);
	assert_true(http__port(&f->srv) > 0);
	return f;
}

static int fx_setup(void **state)
{
	*state = fx_new(4, 5000);
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	http__close(&f->srv);
	http__close(&f->srv); /* twice: safe */
	assert_int_equal(f->srv.fd, -1);
	free(f->big);
	free(f->gz);
	free(f);
	return 0;
}

/* ---- the client side ---- */

static int client_connect(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* completes from the backlog, before the responder accepts */
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
	return fd;
}

/* Requests here are small enough for the socket buffers: sent whole. */
static void client_send(int fd, const char *buf, size_t len)
{
	ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

	assert_int_equal(n, (ssize_t)len);
}

struct reply {
	char *buf;
	size_t len, cap;
	bool eof;      /* the responder closed (FIN or reset) */
	int err;       /* the reset's errno, 0 for a FIN */
};

static void reply_free(struct reply *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

static void client_read(int fd, struct reply *r)
{
	while (!r->eof) {
		ssize_t n;

		if (r->cap - r->len < 65536) {
			r->cap = r->cap * 2 + 65536;
			r->buf = realloc(r->buf, r->cap + 1);
			assert_non_null(r->buf);
		}
		n = recv(fd, r->buf + r->len, r->cap - r->len, MSG_DONTWAIT);
		if (n > 0) {
			r->len += n;
			r->buf[r->len] = 0;
		} else if (n == 0) {
			r->eof = true;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			return;
		} else if (errno != EINTR) {
			r->eof = true;
			r->err = errno;
		}
	}
}

static void serve_slice(struct fx *f)
{
	assert_int_equal(http__serve_until(&f->srv, now_ns() + SLICE_NS, NULL, handler, f), 0);
	scribble(f);
}

/* Serve and read until the responder closed every one of fds (or a long
 * bound passed: then the test fails on eof). */
static void pump(struct fx *f, int *fds, struct reply *r, int n)
{
	uint64_t end = now_ns() + PUMP_LIMIT_NS;
	bool all;

	do {
		serve_slice(f);
		all = true;
		for (int i = 0; i < n; i++) {
			client_read(fds[i], &r[i]);
			all = all && r[i].eof;
		}
	} while (!all && now_ns() < end);
}

/* One request on a new connection; the whole reply. */
static void exchange(struct fx *f, const char *req, size_t len, struct reply *r)
{
	int fd = client_connect(http__port(&f->srv));

	memset(r, 0, sizeof(*r));
	client_send(fd, req, len);
	pump(f, &fd, r, 1);
	assert_true(r->eof);
	close(fd);
}

static void get(struct fx *f, const char *req, struct reply *r)
{
	exchange(f, req, strlen(req), r);
}

static int status_of(const struct reply *r)
{
	int status = -1;

	assert_non_null(r->buf);
	assert_int_equal(sscanf(r->buf, "HTTP/1.1 %d ", &status), 1);
	return status;
}

/* The body after the header; its length in *len. */
static const char *body_of(const struct reply *r, size_t *len)
{
	const char *end = r->buf ? strstr(r->buf, "\r\n\r\n") : NULL;

	assert_non_null(end);
	*len = r->len - (end + 4 - r->buf);
	return end + 4;
}

/* A header's value (names case-insensitive), or NULL. */
static const char *header(const struct reply *r, const char *name, char *out, size_t outlen)
{
	const char *p = strstr(r->buf, "\r\n"), *end = strstr(r->buf, "\r\n\r\n");
	size_t nlen = strlen(name);

	while (p && p < end) {
		const char *line = p + 2, *eol = strstr(line, "\r\n");

		if (!strncasecmp(line, name, nlen) && line[nlen] == ':') {
			const char *v = line + nlen + 1;

			while (*v == ' ')
				v++;
			snprintf(out, outlen, "%.*s", (int)(eol - v), v);
			return out;
		}
		p = eol;
	}
	return NULL;
}

static void assert_header(const struct reply *r, const char *name, const char *want)
{
	char v[256];

	assert_non_null(header(r, name, v, sizeof(v)));
	assert_string_equal(v, want);
}

static size_t content_length(const struct reply *r)
{
	char v[64];
	uint64_t n;

	assert_non_null(header(r, "Content-Length", v, sizeof(v)));
	assert_int_equal(parse_u64(v, 0, UINT64_MAX, &n), 0);
	return n;
}

/* ---- answers ---- */

static void test_get_metrics(void **state)
{
	struct fx *f = *state;
	struct reply r;
	const char *body;
	size_t len;

	get(f, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9436\r\nAccept: text/plain;version=0.0.4\r\n"
	       "User-Agent: test\r\n\r\n", &r);
	assert_int_equal(r.err, 0);
	assert_int_equal(status_of(&r), 200);
	assert_true(!strncmp(r.buf, "HTTP/1.1 200 OK\r\n", 17));
	assert_header(&r, "Content-Type", METRICS_TYPE);
	assert_header(&r, "Connection", "close");
	assert_header(&r, "Vary", "Accept, Accept-Encoding");
	assert_null(header(&r, "Content-Encoding", (char[8]){0}, 8));
	body = body_of(&r, &len);
	assert_int_equal(len, strlen(metrics_body));
	assert_int_equal(content_length(&r), len);
	assert_memory_equal(body, metrics_body, len);

	assert_int_equal(f->calls, 1);
	assert_string_equal(f->method, "GET");
	assert_string_equal(f->path, "/metrics");
	assert_string_equal(f->accept, "text/plain;version=0.0.4");
	assert_false(f->gzip_ok);
	assert_int_equal(f->srv.requests, 1);
	assert_int_equal(f->srv.bad + f->srv.timeouts + f->srv.too_large + f->srv.rejected, 0);
	reply_free(&r);
}

/*
 * On loopback, a Host that names no address is refused (a name a web page
 * rebound to 127.0.0.1); addresses, localhost and no Host at all are not.
 */
static void test_host(void **state)
{
	struct fx *f = *state;
	static const char *const ok[] = {
		"127.0.0.1", "127.0.0.1:9436", "localhost", "LocalHost:80", "localhost.",
		"[::1]:9436", "[::1]", "10.1.2.3:9436",
	};
	static const char *const refused[] = {
		"rebind.example", "rebind.example:9436", "127.0.0.1.nip.io:9436", "[::1",
		"[::1]x", "[rebind]:1", "localhost:1:2", "::1",
	};
	struct reply r;
	char req[256];

	assert_true(f->srv.loopback);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(req, sizeof(req), "GET /metrics HTTP/1.1\r\nHost: %s\r\n\r\n", ok[i]);
		get(f, req, &r);
		if (status_of(&r) != 200)
			fail_msg("Host: %s: %d, want 200", ok[i], status_of(&r));
		reply_free(&r);
	}
	get(f, "GET /metrics HTTP/1.0\r\n\r\n", &r);
	assert_int_equal(status_of(&r), 200);
	reply_free(&r);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(req, sizeof(req), "GET /metrics HTTP/1.1\r\nHost: %s\r\n\r\n", refused[i]);
		get(f, req, &r);
		if (status_of(&r) != 403)
			fail_msg("Host: %s: %d, want 403", refused[i], status_of(&r));
		reply_free(&r);
	}
	assert_int_equal(f->srv.bad_host, sizeof(refused) / sizeof(refused[0]));
	/* two Host headers: a bad request */
	get(f, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: rebind.example\r\n\r\n", &r);
	assert_int_equal(status_of(&r), 400);
	reply_free(&r);
}

static void test_head(void **state)
{
	struct fx *f = *state;
	struct reply r;
	size_t len;

	get(f, "HEAD /metrics HTTP/1.1\r\n\r\n", &r);
	assert_int_equal(status_of(&r), 200);
	assert_int_equal(content_length(&r), strlen(metrics_body));
	body_of(&r, &len);
	assert_int_equal(len, 0);
	assert_string_equal(f->method, "HEAD");
	assert_string_equal(f->accept, "");
	reply_free(&r);
}

static void test_not_found(void **state)
{
	struct fx *f = *state;
	struct reply r;
	const char *body;
	size_t len;

	get(f, "GET /nope HTTP/1.1\r\n\r\n", &r);
	assert_int_equal(status_of(&r), 404);
	assert_header(&r, "Content-Type", "text/plain; charset=utf-8");
	body = body_of(&r, &len);
	assert_int_equal(len, 10);
	assert_memory_equal(body, "not found\n", 10);
	reply_free(&r);
}

static void test_method_not_allowed(void **state)
{
	static const char *const reqs[] = {
		/* a body the responder never reads: drained, so the 405 is
		 * not lost to a reset */
		"POST /metrics HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello=world",
		"DELETE /metrics HTTP/1.1\r\n\r\n",
		"get /metrics HTTP/1.1\r\n\r\n", /* methods are case-sensitive */
	};
	struct fx *f = *state;
	struct reply r;

	for (size_t i = 0; i < ARRAY_SIZE(reqs); i++) {
		get(f, reqs[i], &r);
		assert_int_equal(r.err, 0);
		assert_int_equal(status_of(&r), 405);
		assert_header(&r, "Allow", "GET, HEAD");
		assert_header(&r, "Connection", "close");
		reply_free(&r);
	}
	assert_int_equal(f->calls, 0);
	assert_int_equal(f->srv.requests, ARRAY_SIZE(reqs));
	assert_int_equal(f->srv.bad, 0);
}

static void test_bad_requests(void **state)
{
	static const struct { const char *req; size_t len; } cases[] = {
#define C(s) { s, sizeof(s) - 1 }
		C("garbage\r\n\r\n"),
		C("\r\n\r\n"),
		C("GET /metrics\r\n\r\n"),                       /* no version */
		C("GET /metrics HTTP/2.0\r\n\r\n"),
		C("GET /metrics HTTP/1.10\r\n\r\n"),
		C("GET /metrics HTTP/1.x\r\n\r\n"),
		C("GET  /metrics HTTP/1.1\r\n\r\n"),             /* two spaces */
		C("GET /metrics  HTTP/1.1\r\n\r\n"),
		C("GET metrics HTTP/1.1\r\n\r\n"),               /* no slash */
		C("GET /a\tb HTTP/1.1\r\n\r\n"),
		C("G(T /metrics HTTP/1.1\r\n\r\n"),              /* not a token */
		C("GET /metrics HTTP/1.1\r\nAccept text/plain\r\n\r\n"), /* no colon */
		C("GET /metrics HTTP/1.1\r\nAccept : */*\r\n\r\n"),      /* space before it */
		C("GET /metrics HTTP/1.1\r\n: empty\r\n\r\n"),
		C("GET /metrics HTTP/1.1\r\nAccept: a\r\n b\r\n\r\n"),    /* obs-fold */
		C("GET /metrics HTTP/1.1\r\nAccept: a\x01\r\n\r\n"),
		C("GET /metrics HTTP/1.1\r\nAccept: a\x7f\r\n\r\n"),
		C("GET /metrics HTTP/1.1\r\nAccept: a\0b\r\n\r\n"),       /* NUL */
		C("GET /metrics HTTP/1.1\r\nX: a\rb\r\n\r\n"),            /* bare CR */
		C("GET /metrics\0 HTTP/1.1\r\n\r\n"),
		C("POST /metrics HTTP/1.1\r\nX: \x1b[2J\r\n\r\n"),       /* 400 before 405 */
#undef C
	};
	struct fx *f = *state;
	struct reply r;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		exchange(f, cases[i].req, cases[i].len, &r);
		if (status_of(&r) != 400)
			fail_msg("case %zu: %d, not 400", i, status_of(&r));
		assert_header(&r, "Connection", "close");
		reply_free(&r);
	}
	assert_int_equal(f->calls, 0);
	assert_int_equal(f->srv.bad, ARRAY_SIZE(cases));
	assert_int_equal(f->srv.requests, ARRAY_SIZE(cases));
}

/* What a client may send that is still well-formed. */
static void test_lenient_forms(void **state)
{
	struct fx *f = *state;
	struct reply r;

	get(f, "GET /metrics HTTP/1.0\n\n", &r);                  /* bare LF */
	assert_int_equal(status_of(&r), 200);
	reply_free(&r);

	get(f, "GET /metrics?name[]=udpdrop_up&x=%20 HTTP/1.1\r\n\r\n", &r);
	assert_int_equal(status_of(&r), 200);
	assert_string_equal(f->path, "/metrics");
	reply_free(&r);

	get(f, "GET http://127.0.0.1:9436/metrics?x HTTP/1.1\r\n\r\n", &r);
	assert_int_equal(status_of(&r), 200);
	assert_string_equal(f->path, "/metrics");
	reply_free(&r);

	get(f, "GET http://host HTTP/1.1\r\n\r\n", &r);
	assert_int_equal(status_of(&r), 404);
	assert_string_equal(f->path, "/");
	reply_free(&r);

	/* names in any case, the value's spaces cut, the first Accept kept,
	 * other headers (even with odd bytes above 0x7f) ignored */
	get(f, "GET /metrics HTTP/1.1\r\nX-Other: caf\xc3\xa9\r\naCCEPT: \t application/openmetrics-text \t\r\n"
	       "Accept: text/html\r\naccept-ENCODING: GZIP\r\n\r\n", &r);
	assert_int_equal(status_of(&r), 200);
	assert_string_equal(f->accept, "application/openmetrics-text");
	assert_true(f->gzip_ok);
	reply_free(&r);

	/* an empty Accept is "" */
	get(f, "GET /metrics HTTP/1.1\r\nAccept:\r\n\r\n", &r);
	assert_int_equal(status_of(&r), 200);
	assert_string_equal(f->accept, "");
	reply_free(&r);

	assert_int_equal(f->srv.bad, 0);
}

static void test_handler_mistakes(void **state)
{
	struct fx *f = *state;
	struct reply r;

	/* a content type that would end its line and start another header */
	get(f, "GET /evil-type HTTP/1.1\r\n\r\n", &r);
	assert_int_equal(status_of(&r), 500);
	assert_null(header(&r, "X-Evil", (char[8]){0}, 8));
	reply_free(&r);

	get(f, "GET /no-status HTTP/1.1\r\n\r\n", &r);
	assert_int_equal(status_of(&r), 500);
	reply_free(&r);
}

/* ---- limits ---- */

static char *padded_request(size_t total, bool with_end)
{
	static const char start[] = "GET /metrics HTTP/1.1\r\nX-Pad: ";
	char *req = malloc(total + 1);
	size_t tail = with_end ? 4 : 0;

	assert_non_null(req);
	memcpy(req, start, sizeof(start) - 1);
	memset(req + sizeof(start) - 1, 'p', total - (sizeof(start) - 1) - tail);
	if (with_end)
		memcpy(req + total - 4, "\r\n\r\n", 4);
	req[total] = 0;
	return req;
}

static void test_too_large(void **state)
{
	struct fx *f = *state;
	struct reply r;
	char *req;

	req = padded_request(9000, false);
	exchange(f, req, 9000, &r);
	free(req);
	/* read in full before the close: nothing left unread, no reset */
	assert_int_equal(r.err, 0);
	assert_int_equal(status_of(&r), 431);
	assert_header(&r, "Connection", "close");
	assert_int_equal(f->srv.too_large, 1);
	assert_int_equal(f->calls, 0);
	reply_free(&r);

	/* 9000 bytes with the end still are more than the cap */
	req = padded_request(9000, true);
	exchange(f, req, 9000, &r);
	free(req);
	assert_int_equal(status_of(&r), 431);
	assert_int_equal(f->srv.too_large, 2);
	reply_free(&r);

	/* exactly the cap, its end included: answered */
	req = padded_request(HTTP_MAX_REQUEST, true);
	exchange(f, req, HTTP_MAX_REQUEST, &r);
	free(req);
	assert_int_equal(status_of(&r), 200);
	assert_int_equal(f->calls, 1);
	assert_int_equal(f->srv.too_large, 2);
	reply_free(&r);
}

/* A header that arrives a few bytes at a time is found, once. */
static void test_header_in_pieces(void **state)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nAccept: a\r\n\r\n";
	struct fx *f = *state;
	struct reply r = {0};
	int fd = client_connect(http__port(&f->srv));

	for (size_t i = 0; i < sizeof(req) - 1; i += 5) {
		client_send(fd, req + i, sizeof(req) - 1 - i < 5 ? sizeof(req) - 1 - i : 5);
		serve_slice(f);
	}
	pump(f, &fd, &r, 1);
	assert_true(r.eof);
	assert_int_equal(status_of(&r), 200);
	assert_int_equal(f->calls, 1);
	assert_string_equal(f->accept, "a");
	close(fd);
	reply_free(&r);
}

/* A page larger than the socket buffers: written over several slices,
 * while the handler's page is scribbled over after each. */
static void test_big_body(void **state)
{
	struct fx *f = *state;
	struct reply r;
	const char *body;
	size_t len;

	get(f, "GET /big HTTP/1.1\r\n\r\n", &r);
	assert_int_equal(status_of(&r), 200);
	body = body_of(&r, &len);
	assert_int_equal(len, BIG_LEN);
	assert_int_equal(content_length(&r), BIG_LEN);
	for (size_t i = 0; i < BIG_LEN; i++)
		if (body[i] != big_byte(i))
			fail_msg("byte %zu: %c, not %c", i, body[i], big_byte(i));
	reply_free(&r);
}

static void test_slow_client_times_out(void **state)
{
	struct fx *f = fx_new(4, 200);
	struct reply slow = {0}, fast = {0};
	uint64_t slow_connected;
	int slow_fd, fast_fd;
	char c;

	(void)state;
	slow_fd = client_connect(http__port(&f->srv));
	slow_connected = now_ns();
	client_send(slow_fd, "GET /metrics HTTP/1.1\r\nHo", 25);
	serve_slice(f);

	fast_fd = client_connect(http__port(&f->srv));
	client_send(fast_fd, "GET /metrics HTTP/1.1\r\n\r\n", 25);
	pump(f, &fast_fd, &fast, 1);
	assert_true(fast.eof);
	assert_int_equal(status_of(&fast), 200);
	/* answered while the slow one stalled: it is still open if its
	 * deadline (200 ms after an accept that came after its connect) has
	 * not come yet; on a busy machine it may have */
	if (now_ns() - slow_connected < 200 * NS_PER_MS) {
		assert_int_equal(recv(slow_fd, &c, 1, MSG_DONTWAIT), -1);
		assert_int_equal(errno, EAGAIN);
	}

	pump(f, &slow_fd, &slow, 1);
	assert_true(slow.eof);
	assert_true(now_ns() - slow_connected >= 200 * NS_PER_MS);
	/* a best-effort 408, or nothing */
	if (slow.len)
		assert_int_equal(status_of(&slow), 408);
	assert_int_equal(f->srv.timeouts, 1);
	assert_int_equal(f->calls, 1);
	assert_int_equal(f->srv.requests, 1);

	close(slow_fd);
	close(fast_fd);
	reply_free(&slow);
	reply_free(&fast);
	fx_teardown((void **)&f);
}

/* The largest send buffer the kernel grows a socket's to. */
static long tcp_wmem_max(void)
{
	FILE *fp = fopen("/proc/sys/net/ipv4/tcp_wmem", "r");
	long min, def, max = 4 << 20;

	if (fp) {
		if (fscanf(fp, "%ld %ld %ld", &min, &def, &max) != 3)
			max = 4 << 20;
		fclose(fp);
	}
	return max;
}

/* The deadline bounds the writing too: a client that asks for a page
 * larger than the socket buffers and never reads is cut off (reset). The
 * page is larger than the send buffer the kernel grows to. */
static void test_stalled_reader_times_out(void **state)
{
	struct fx *f = fx_new(4, 200);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(http__port(&f->srv)) };
	struct reply r = {0};
	int fd, small = 4096;
	uint64_t end;

	(void)state;
	if (tcp_wmem_max() * 2 > BIG_LEN) {
		fx_teardown((void **)&f);
		skip(); /* this kernel may buffer the whole page */
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	/* a small window, so that the page cannot sit in the buffers */
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	client_send(fd, "GET /big HTTP/1.1\r\n\r\n", 21);

	end = now_ns() + PUMP_LIMIT_NS;
	while (!f->srv.timeouts && now_ns() < end)
		serve_slice(f);
	assert_int_equal(f->srv.timeouts, 1);
	assert_int_equal(f->calls, 1);

	assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
	end = now_ns() + PUMP_LIMIT_NS;
	while (!r.eof && now_ns() < end)
		client_read(fd, &r);
	assert_true(r.eof);
	assert_true(r.len < BIG_LEN);
	close(fd);
	reply_free(&r);
	fx_teardown((void **)&f);
}

/*
 * max_conns + 1: the newcomer takes the place of the connection that has
 * waited longest without a whole request (a stalled client cannot keep a
 * scraper out), which is closed without an answer and counted; the other
 * keeps its slot. Slots come free again when clients close.
 */
static void test_max_conns(void **state)
{
	struct fx *f = fx_new(2, 10000);
	struct reply r[3] = {0};
	int fds[3], extra;
	bool answered = false;
	uint64_t end;
	char c;

	(void)state;
	for (int i = 0; i < 2; i++) {
		fds[i] = client_connect(http__port(&f->srv));
		client_send(fds[i], "GET /metrics HTTP/1.1\r\n", 23);
		for (int k = 0; k < 5; k++)
			serve_slice(f); /* taken, in this order */
	}

	/* one more while both are young: closed at once, they keep theirs */
	extra = client_connect(http__port(&f->srv));
	client_send(extra, "GET /metrics HTTP/1.1\r\n\r\n", 25);
	{
		struct reply none = {0};

		pump(f, &extra, &none, 1);
		assert_true(none.eof);
		assert_int_equal(none.len, 0);
		reply_free(&none);
	}
	close(extra);
	assert_int_equal(f->srv.rejected, 1);

	/* once they have waited past HTTP_EVICT_MIN_AGE_MS without a whole
	 * request, a newcomer with one takes the oldest's place */
	end = now_ns() + 1200 * 1000000ull;
	while (now_ns() < end)
		serve_slice(f);
	fds[2] = client_connect(http__port(&f->srv));
	client_send(fds[2], "GET /metrics HTTP/1.1\r\n\r\n", 25);
	pump(f, &fds[2], &r[2], 1);
	assert_true(r[2].eof);
	assert_int_equal(status_of(&r[2]), 200);
	assert_int_equal(f->srv.rejected, 2);
	pump(f, &fds[0], &r[0], 1);
	assert_true(r[0].eof);
	assert_int_equal(r[0].len, 0);

	/* the second kept its slot (its deadline is 10 s away) */
	assert_int_equal(recv(fds[1], &c, 1, MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	client_send(fds[1], "\r\n", 2);
	pump(f, &fds[1], &r[1], 1);
	assert_true(r[1].eof);
	assert_int_equal(status_of(&r[1]), 200);
	for (int i = 0; i < 3; i++) {
		close(fds[i]);
		reply_free(&r[i]);
	}

	/* once the clients closed, their slots are free again; the
	 * responder sees the closes when the kernel delivers them */
	end = now_ns() + PUMP_LIMIT_NS;
	while (!answered && now_ns() < end) {
		struct reply again = {0};

		serve_slice(f);
		extra = client_connect(http__port(&f->srv));
		client_send(extra, "GET /metrics HTTP/1.1\r\n\r\n", 25);
		pump(f, &extra, &again, 1);
		answered = again.len && status_of(&again) == 200;
		close(extra);
		reply_free(&again);
	}
	assert_true(answered);
	/* into a free slot: nobody refused or evicted for it */
	assert_int_equal(f->srv.rejected, 2);
	assert_int_equal(f->srv.timeouts, 0);
	fx_teardown((void **)&f);
}

/* ---- gzip ---- */

static void inflate_all(const char *in, size_t len, char *out, size_t cap, size_t *out_len)
{
	z_stream zs = {0};

	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)in;
	zs.avail_in = len;
	zs.next_out = (Bytef *)out;
	zs.avail_out = cap;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	assert_int_equal(zs.avail_in, 0);
	*out_len = zs.total_out;
	inflateEnd(&zs);
}

static void test_gzip(void **state)
{
	struct fx *f = *state;
	struct reply r;
	const char *body;
	char plain[256];
	size_t len, plain_len, gz_len;

	get(f, "GET /metrics HTTP/1.1\r\nAccept-Encoding: deflate, gzip, br\r\n\r\n", &r);
	assert_int_equal(status_of(&r), 200);
	assert_true(f->gzip_ok);
	assert_header(&r, "Content-Encoding", "gzip");
	assert_header(&r, "Vary", "Accept, Accept-Encoding");
	body = body_of(&r, &len);
	assert_int_equal(content_length(&r), len);
	inflate_all(body, len, plain, sizeof(plain), &plain_len);
	assert_int_equal(plain_len, strlen(metrics_body));
	assert_memory_equal(plain, metrics_body, plain_len);
	gz_len = len;
	reply_free(&r);

	/* HEAD: the length GET's compressed body has */
	get(f, "HEAD /metrics HTTP/1.1\r\nAccept-Encoding: gzip\r\n\r\n", &r);
	assert_header(&r, "Content-Encoding", "gzip");
	assert_int_equal(content_length(&r), gz_len);
	body_of(&r, &len);
	assert_int_equal(len, 0);
	reply_free(&r);

	/* the client accepts it, the page says no */
	get(f, "GET /plain HTTP/1.1\r\nAccept-Encoding: gzip\r\n\r\n", &r);
	assert_true(f->gzip_ok);
	assert_null(header(&r, "Content-Encoding", (char[8]){0}, 8));
	assert_null(header(&r, "Vary", (char[8]){0}, 8));
	body = body_of(&r, &len);
	assert_int_equal(len, strlen("never compressed\n"));
	reply_free(&r);
}

/* A page gzip'ed once by its owner (serve: once per render) is sent as
 * those bytes, to every client that asks; the others get the page. */
static void test_gzip_once(void **state)
{
	struct fx *f = *state;
	struct reply r;
	const char *body;
	char plain[64];
	size_t len, plain_len;

	assert_int_equal(http__gzip("the page\n", 9, &f->gz, &f->gz_len), 0);
	for (int i = 0; i < 2; i++) {
		get(f, "GET /pregz HTTP/1.1\r\nAccept-Encoding: gzip\r\n\r\n", &r);
		assert_header(&r, "Content-Encoding", "gzip");
		body = body_of(&r, &len);
		assert_int_equal(len, f->gz_len);
		assert_memory_equal(body, f->gz, len);
		inflate_all(body, len, plain, sizeof(plain), &plain_len);
		assert_int_equal(plain_len, 9);
		assert_memory_equal(plain, "the page\n", 9);
		reply_free(&r);
	}
	get(f, "GET /pregz HTTP/1.1\r\n\r\n", &r);
	assert_null(header(&r, "Content-Encoding", (char[8]){0}, 8));
	body = body_of(&r, &len);
	assert_int_equal(len, 9);
	assert_memory_equal(body, "the page\n", 9);
	reply_free(&r);
}

static void test_gzip_negotiation(void **state)
{
	static const struct { const char *header; bool gzip; } cases[] = {
		{ NULL, false },
		{ "Accept-Encoding: identity\r\n", false },
		{ "Accept-Encoding: deflate, br\r\n", false },
		{ "Accept-Encoding: gzip;q=0\r\n", false },
		{ "Accept-Encoding: gzip; q=0.000\r\n", false },
		{ "Accept-Encoding: gzip;q=1.5\r\n", false },     /* malformed: skipped */
		{ "Accept-Encoding: gzip;q=0.0001\r\n", false },  /* 4 decimals: malformed */
		{ "Accept-Encoding: gzipx\r\n", false },
		{ "Accept-Encoding: *;q=0\r\n", false },
		{ "Accept-Encoding: gzip;q=0, *\r\n", false },    /* named beats * */
		{ "Accept-Encoding:\r\n", false },
		{ "Accept-Encoding: gzip\r\nAccept-Encoding: gzip;q=0\r\n", false },
		{ "Accept-Encoding: gzip\r\n", true },
		{ "Accept-Encoding: GZIP;Q=0.5\r\n", true },
		{ "Accept-Encoding: br , gzip ; q=0.001\r\n", true },
		{ "Accept-Encoding: x-gzip\r\n", true },
		{ "Accept-Encoding: *\r\n", true },
		{ "Accept-Encoding: gzip;level=9;q=1.000\r\n", true },
		{ "Accept-Encoding: gzip;q=2, gzip\r\n", true },  /* the good one counts */
		{ "Accept-Encoding: br\r\nAccept-Encoding: gzip\r\n", true },
	};
	struct fx *f = *state;
	struct reply r;
	char req[256];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		snprintf(req, sizeof(req), "GET /metrics HTTP/1.1\r\n%s\r\n",
			 cases[i].header ? cases[i].header : "");
		get(f, req, &r);
		assert_int_equal(status_of(&r), 200);
		if (f->gzip_ok != cases[i].gzip ||
		    !!header(&r, "Content-Encoding", (char[8]){0}, 8) != cases[i].gzip)
			fail_msg("case %zu (%s): gzip should be %d", i,
				 cases[i].header ? cases[i].header : "none", cases[i].gzip);
		reply_free(&r);
	}
}

/* ---- listening ---- */

static bool printable_line(const char *s)
{
	return *s && mem_is_printable(s, strlen(s), false);
}

static void test_listen_specs(void **state)
{
	static const char *const bad[] = {
		"", "9436", "localhost:9436", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
		"127.0.0.1:-1", "127.0.0.1:+80", "127.0.0.1: 80", "127.0.0.1:80x",
		"127.0.0.1:99999999999999999999", "1.2.3:80", "256.0.0.1:80", "::1:9436",
		"[::1]9436", "[::1", "[]:80", "[127.0.0.1]:80", "[::1]:", "[::1]:x",
		"\x1b[31m:80", "fd:", "fd:x", "fd:-1", "fd:3x", "fd: 3", "fd:99999999999",
	};
	struct http_server s;
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	char err[256];
	int ret;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = 0;
		ret = http__listen(&s, bad[i], 0, 0, err, sizeof(err));
		if (ret != -EINVAL)
			fail_msg("spec %zu: %d, not -EINVAL", i, ret);
		assert_true(printable_line(err));
		assert_true(!strncmp(err, "--listen", 8));
		assert_int_equal(s.fd, -1);
		http__close(&s);
	}
	assert_int_equal(http__listen(&s, "::1:9436", 0, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "brackets"));
	assert_int_equal(http__listen(&s, "localhost:9436", 0, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "numeric"));

	/* ":PORT" is loopback */
	assert_int_equal(http__listen(&s, ":0", 0, 0, err, sizeof(err)), 0);
	assert_int_equal(s.max_conns, HTTP_MAX_CONNS);
	assert_int_equal(s.timeout_ms, HTTP_TIMEOUT_MS);
	assert_int_equal(getsockname(s.fd, (struct sockaddr *)&sin, &len), 0);
	assert_int_equal(sin.sin_family, AF_INET);
	assert_int_equal(ntohl(sin.sin_addr.s_addr), INADDR_LOOPBACK);
	assert_true(http__port(&s) > 0);
	assert_int_equal(http__port(&s), ntohs(sin.sin_port));
	assert_true(fcntl(s.fd, F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(s.fd, F_GETFD) & FD_CLOEXEC);
	http__close(&s);
	assert_int_equal(http__port(&s), 0);

	/* IPv6, where this machine has it */
	ret = http__listen(&s, "[::1]:0", 3, 100, err, sizeof(err));
	if (ret == 0) {
		assert_true(http__port(&s) > 0);
		assert_int_equal(s.max_conns, 3);
		http__close(&s);
	} else {
		assert_true(ret == -EAFNOSUPPORT || ret == -EADDRNOTAVAIL);
		assert_true(printable_line(err));
	}
}

static void test_listen_in_use(void **state)
{
	struct http_server a, b;
	char spec[32], err[256];

	(void)state;
	assert_int_equal(http__listen(&a, "127.0.0.1:0", 1, 100, err, sizeof(err)), 0);
	snprintf(spec, sizeof(spec), "127.0.0.1:%d", http__port(&a));
	assert_int_equal(http__listen(&b, spec, 1, 100, err, sizeof(err)), -EADDRINUSE);
	assert_true(printable_line(err));
	assert_non_null(strstr(err, "in use"));
	assert_int_equal(b.fd, -1);
	http__close(&b);
	http__close(&a);
}

static int tcp_socket_bound(bool do_listen)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	if (do_listen)
		assert_int_equal(listen(fd, 8), 0);
	return fd;
}

static void test_fd_spec(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	char spec[32], err[256];
	struct reply r;
	int lfd, fd, pipefd[2];

	(void)state;
	assert_non_null(f);
	f->big = malloc(BIG_LEN);
	assert_non_null(f->big);

	/* an inherited listening socket (blocking, no CLOEXEC, as passed on) */
	lfd = tcp_socket_bound(true);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sin, &len), 0);
	snprintf(spec, sizeof(spec), "fd:%d", lfd);
	assert_int_equal(http__listen(&f->srv, spec, 2, 1000, err, sizeof(err)), 0);
	assert_int_equal(f->srv.fd, lfd);
	assert_int_equal(http__port(&f->srv), ntohs(sin.sin_port));
	assert_true(fcntl(lfd, F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(lfd, F_GETFD) & FD_CLOEXEC);
	get(f, "GET /metrics HTTP/1.1\r\n\r\n", &r);
	assert_int_equal(status_of(&r), 200);
	reply_free(&r);
	http__close(&f->srv);
	assert_int_equal(fcntl(lfd, F_GETFD), -1); /* closed with the server */

	/* not listening, not a stream, not a socket, not open */
	fd = tcp_socket_bound(false);
	snprintf(spec, sizeof(spec), "fd:%d", fd);
	assert_int_equal(http__listen(&f->srv, spec, 2, 1000, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a listening socket"));
	assert_true(fcntl(fd, F_GETFD) >= 0); /* left open: it is not ours */
	close(fd);

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	snprintf(spec, sizeof(spec), "fd:%d", fd);
	assert_int_equal(http__listen(&f->srv, spec, 2, 1000, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a listening socket"));
	close(fd);

	assert_int_equal(pipe(pipefd), 0);
	snprintf(spec, sizeof(spec), "fd:%d", pipefd[0]);
	assert_int_equal(http__listen(&f->srv, spec, 2, 1000, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a socket"));
	assert_true(printable_line(err));
	close(pipefd[0]);
	/* pipefd[0]'s number is free now */
	assert_int_equal(http__listen(&f->srv, spec, 2, 1000, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not open"));
	close(pipefd[1]);

	http__close(&f->srv);
	free(f->big);
	free(f);
}

/* A server never opened is closed safely, and a zeroed one does not close
 * descriptor 0 (or any other) it never owned. */
static void test_close_unopened(void **state)
{
	struct http_server s = { .fd = -1 };
	struct http_server zeroed;
	int pipefd[2];

	(void)state;
	http__close(&s);
	http__close(&s);
	assert_int_equal(http__serve_until(&s, now_ns(), NULL, handler, NULL), -EBADF);

	assert_int_equal(pipe(pipefd), 0);
	memset(&zeroed, 0, sizeof(zeroed));
	zeroed.fd = pipefd[0];
	http__close(&zeroed);
	assert_true(fcntl(pipefd[0], F_GETFD) >= 0);
	assert_int_equal(zeroed.fd, -1);
	close(pipefd[0]);
	close(pipefd[1]);
}

/* ---- the loop's own time ---- */

static volatile sig_atomic_t stop_flag;

static void on_alarm(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void test_deadline_and_stop(void **state)
{
	struct fx *f = *state;
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	struct itimerval it = { .it_value = { .tv_usec = 100000 } };
	uint64_t start, deadline;

	/* returns at the deadline, not before (the clock makes that exact) */
	start = now_ns();
	deadline = start + 100 * NS_PER_MS;
	assert_int_equal(http__serve_until(&f->srv, deadline, NULL, handler, f), 0);
	assert_true(now_ns() >= deadline);
	assert_true(now_ns() - start < PUMP_LIMIT_NS);

	/* a deadline past: one pass, at once */
	start = now_ns();
	assert_int_equal(http__serve_until(&f->srv, start - NS_PER_MS, NULL, handler, f), 0);
	assert_true(now_ns() - start < PUMP_LIMIT_NS);

	/* stop already set */
	stop_flag = 1;
	start = now_ns();
	assert_int_equal(http__serve_until(&f->srv, start + 60 * NS_PER_S, &stop_flag, handler, f), 0);
	assert_true(now_ns() - start < PUMP_LIMIT_NS);

	/* a signal during the wait: EINTR, stop seen; SA_RESTART changes
	 * nothing for poll */
	stop_flag = 0;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	start = now_ns();
	assert_int_equal(http__serve_until(&f->srv, start + 60 * NS_PER_S, &stop_flag, handler, f), 0);
	assert_true(stop_flag);
	assert_true(now_ns() - start < PUMP_LIMIT_NS);
	assert_int_equal(sigaction(SIGALRM, &old, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_get_metrics, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_host, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_head, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_not_found, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_method_not_allowed, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_bad_requests, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_lenient_forms, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_handler_mistakes, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_too_large, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_header_in_pieces, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_big_body, fx_setup, fx_teardown),
		cmocka_unit_test(test_slow_client_times_out),
		cmocka_unit_test(test_stalled_reader_times_out),
		cmocka_unit_test(test_max_conns),
		cmocka_unit_test_setup_teardown(test_gzip, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_gzip_once, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_gzip_negotiation, fx_setup, fx_teardown),
		cmocka_unit_test(test_listen_specs),
		cmocka_unit_test(test_listen_in_use),
		cmocka_unit_test(test_fd_spec),
		cmocka_unit_test(test_close_unopened),
		cmocka_unit_test_setup_teardown(test_deadline_and_stop, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
