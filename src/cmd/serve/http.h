/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * udpdrop serve's HTTP responder: a small, hardened HTTP/1.x server for a
 * metrics page, driven by poll() from the caller's loop so that no client
 * can stall the tracing between two refreshes.
 *
 * Hardening (issue 15): a request's header is capped (HTTP_MAX_REQUEST,
 * 8 KiB: more is 431 and a close); each connection has one deadline for
 * its whole life (read and write, HTTP_TIMEOUT_MS), so a slow client
 * (slowloris) costs at most that; at most max_conns connections are open:
 * one more takes the place of the one that has waited longest without a
 * whole request (so stalled clients cannot keep a scraper out), or is
 * closed at once when every slot is writing an answer (the backlog never
 * fills); every answer says `Connection: close` and closes; memory is
 * bounded by max_conns x (request cap + the largest answer). Only GET
 * and HEAD (405 otherwise); a malformed request line or header is 400.
 * Bodies of requests are never read.
 */
#ifndef UDPDROP_HTTP_H
#define UDPDROP_HTTP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_MAX_REQUEST 8192
#define HTTP_TIMEOUT_MS 5000
#define HTTP_MAX_CONNS 16

/* What a handler sees of a request (strings NUL-terminated, borrowed). */
struct http_request {
	const char *method;          /* "GET" or "HEAD" (others never reach a handler) */
	const char *path;            /* the target without its query ("/metrics") */
	const char *accept;          /* the Accept header's value, "" if none */
	bool gzip_ok;                /* Accept-Encoding lists gzip (q > 0) */
	const char *host;            /* the Host header's value, "" if none */
};

/* What the handler answers: the body is copied before the handler returns. */
struct http_response {
	int status;                  /* 200, 404, ... */
	const char *content_type;    /* NULL: text/plain; charset=utf-8 */
	const char *body;
	size_t len;
	bool may_gzip;               /* compress when the client accepts gzip */
	/* body gzip'ed already (http__gzip: a page compressed once, not per
	 * request), copied as body is; NULL: compressed for each answer */
	const char *gz_body;
	size_t gz_len;
};

/* body compressed as one gzip member into a new buffer (the caller frees
 * *out); 0 or -errno (-E2BIG past 4 GiB: then send it as it is) */
int http__gzip(const char *body, size_t len, char **out, size_t *out_len);

typedef void (*http_handler)(void *arg, const struct http_request *req,
			     struct http_response *resp);

struct http_conn;
struct pollfd;

struct http_server {
	int fd;                      /* the listening socket, -1 when closed */
	int max_conns;
	int timeout_ms;
	struct http_conn *conns;     /* max_conns slots */
	/*
	 * counts, for the self-metrics (udpdrop_http_*): requests, every
	 * complete request header (answered by the handler, 400 or 405);
	 * rejected, connections over max_conns: closed at once, or a stalled
	 * one closed for them; timeouts,
	 * connections whose deadline passed before their answer was written;
	 * too_large, 431s; bad, 400s.
	 */
	uint64_t requests, rejected, timeouts, too_large, bad;
	/*
	 * Listening on a loopback address, a request whose Host names neither
	 * an IP address nor localhost is refused (403, counted in bad_host):
	 * a web page the user opens cannot read the page through a name it
	 * resolves to 127.0.0.1 (DNS rebinding). Set by http__listen.
	 */
	bool loopback;
	uint64_t bad_host;
	/* private to http.c */
	struct pollfd *pfds;         /* the listening socket, then one per slot */
	uint64_t accept_resume_ns;   /* out of descriptors: accept again then */
};

/*
 * Listen on `spec`: "ADDR:PORT" (IPv4), "[ADDR]:PORT" (IPv6), ":PORT"
 * (127.0.0.1) or "fd:N" (an inherited listening socket, e.g. systemd's
 * socket activation: SD_LISTEN_FDS_START is 3). Non-blocking, SO_REUSEADDR,
 * close-on-exec. 0, or a negative errno with one line in err saying what
 * to do (-EINVAL: a bad spec; -EADDRINUSE ...).
 *
 * Addresses are numeric (no name lookup); PORT is 0..65535, 0 letting the
 * kernel pick (http__port). An fd:N that is not open, not a socket or not
 * listening is a bad spec too (-EINVAL). max_conns or timeout_ms <= 0:
 * HTTP_MAX_CONNS, HTTP_TIMEOUT_MS. s is overwritten; after a failure
 * s->fd is -1 and http__close(s) is safe.
 */
int http__listen(struct http_server *s, const char *spec, int max_conns,
		 int timeout_ms, char *err, size_t errlen);
/* Is spec well formed (what http__listen parses, nothing opened or
 * looked at)? 0 or -EINVAL: for the option parser, before privileges. */
int http__check_spec(const char *spec);
/* The port it listens on (after ":0"), 0 if unknown. */
int http__port(const struct http_server *s);
/*
 * Accept, read, answer and time out connections until deadline_ns
 * (CLOCK_MONOTONIC, as now_ns()) or until *stop is set (a signal
 * interrupts the wait). Each complete request header is handed to h once.
 * 0, or a negative errno for a failure of the listening socket itself
 * (a client's misbehaviour is never an error here).
 */
int http__serve_until(struct http_server *s, uint64_t deadline_ns,
		      volatile sig_atomic_t *stop, http_handler h, void *arg);
/* Close every connection and the listening socket. Safe twice, and on a
 * server whose http__listen failed or that has fd -1. */
void http__close(struct http_server *s);

#endif
