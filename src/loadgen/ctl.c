// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The gen <-> sink control channel: see ctl.h for the protocol. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "ctl.h"
#include "util.h"

void ctl_msg__init(struct ctl_msg *m, const char *type)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->type, sizeof(m->type), "%s", type);
}

void ctl_msg__free(struct ctl_msg *m)
{
	for (int i = 0; i < m->n; i++) {
		free(m->kv[i].key);
		free(m->kv[i].val);
	}
	free(m->kv);
	m->kv = NULL;
	m->n = m->cap = 0;
}

static bool key_ok(const char *k)
{
	if (!*k)
		return false;
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') ||
		      *k == '_' || *k == '.'))
			return false;
	return true;
}

/* Values travel without spaces, '=' or control bytes: those are %XX. */
static char *encode(const char *v)
{
	size_t n = strlen(v);
	char *out = malloc(n * 3 + 1), *o = out;

	if (!out)
		return NULL;
	for (; *v; v++) {
		unsigned char c = (unsigned char)*v;

		if (c <= ' ' || c == '%' || c == '=' || c >= 0x7f)
			o += sprintf(o, "%%%02X", c);
		else
			*o++ = (char)c;
	}
	*o = 0;
	return out;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static char *decode(const char *v, size_t n)
{
	char *out = malloc(n + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (v[i] == '%' && i + 2 < n && hexval(v[i + 1]) >= 0 &&
		    hexval(v[i + 2]) >= 0) {
			*o++ = (char)(hexval(v[i + 1]) * 16 + hexval(v[i + 2]));
			i += 2;
		} else {
			*o++ = v[i];
		}
	}
	*o = 0;
	return out;
}

/* Append key=val (both copied); 0 or -ENOMEM / -E2BIG. */
static int append(struct ctl_msg *m, const char *key, char *val_owned)
{
	if (m->n >= CTL_MAX_KEYS) {
		free(val_owned);
		return -E2BIG;
	}
	if (m->n == m->cap) {
		int cap = m->cap ? m->cap * 2 : 16;
		struct ctl_kv *kv = realloc(m->kv, cap * sizeof(*kv));

		if (!kv) {
			free(val_owned);
			return -ENOMEM;
		}
		m->kv = kv;
		m->cap = cap;
	}
	m->kv[m->n].key = strdup(key);
	if (!m->kv[m->n].key) {
		free(val_owned);
		return -ENOMEM;
	}
	m->kv[m->n++].val = val_owned;
	return 0;
}

void ctl_msg__set(struct ctl_msg *m, const char *key, const char *val)
{
	char *v = strdup(val);

	if (!v)
		return;
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->kv[i].key, key)) {
			free(m->kv[i].val);
			m->kv[i].val = v;
			return;
		}
	append(m, key, v);
}

void ctl_msg__set_u64(struct ctl_msg *m, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	ctl_msg__set(m, key, buf);
}

void ctl_msg__set_double(struct ctl_msg *m, const char *key, double v)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.17g", v);
	ctl_msg__set(m, key, buf);
}

const char *ctl_msg__get(const struct ctl_msg *m, const char *key)
{
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->kv[i].key, key))
			return m->kv[i].val;
	return NULL;
}

int ctl_msg__get_u64(const struct ctl_msg *m, const char *key, uint64_t *v)
{
	const char *s = ctl_msg__get(m, key);

	if (!s)
		return -ENOENT;
	return parse_u64(s, 0, UINT64_MAX, v);
}

int ctl_msg__get_double(const struct ctl_msg *m, const char *key, double *v)
{
	const char *s = ctl_msg__get(m, key);
	char *end;

	if (!s)
		return -ENOENT;
	errno = 0;
	*v = strtod(s, &end);
	if (!*s || *end || errno)
		return -EINVAL;
	return 0;
}

char *ctl_msg__format(const struct ctl_msg *m)
{
	struct strbuf sb = {};

	sb_printf(&sb, "%s %s", CTL_MAGIC, m->type);
	for (int i = 0; i < m->n; i++) {
		char *v = encode(m->kv[i].val);

		if (!v) {
			sb_free(&sb);
			return NULL;
		}
		sb_printf(&sb, " %s=%s", m->kv[i].key, v);
		free(v);
	}
	return sb.buf;
}

int ctl_msg__parse(const char *line, struct ctl_msg *m)
{
	const char *p = line;
	size_t n;

	ctl_msg__init(m, "");
	/* "UDPDROPn": another n is another protocol version */
	if (strncmp(p, "UDPDROP", 7))
		return -EINVAL;
	n = strspn(p + 7, "0123456789");
	if (!n)
		return -EINVAL;
	if (strncmp(p, CTL_MAGIC, strlen(CTL_MAGIC)) || n != strlen(CTL_MAGIC) - 7)
		return -EPROTO;
	p += strlen(CTL_MAGIC);
	if (*p++ != ' ')
		return -EINVAL;
	n = strcspn(p, " ");
	if (!n || n >= sizeof(m->type))
		return -EINVAL;
	memcpy(m->type, p, n);
	m->type[n] = 0;
	for (size_t i = 0; i < n; i++)
		if (m->type[i] < 'A' || m->type[i] > 'Z')
			return -EINVAL;
	p += n;
	while (*p == ' ') {
		char key[64], *val;
		const char *eq;

		p++;
		n = strcspn(p, " ");
		eq = memchr(p, '=', n);
		if (!eq || eq == p || (size_t)(eq - p) >= sizeof(key))
			goto bad;
		memcpy(key, p, eq - p);
		key[eq - p] = 0;
		if (!key_ok(key))
			goto bad;
		val = decode(eq + 1, n - (eq + 1 - p));
		if (!val || append(m, key, val))
			goto bad;
		p += n;
	}
	if (*p)
		goto bad;
	return 0;
bad:
	ctl_msg__free(m);
	return -EINVAL;
}

/* ---- TCP ---- */

static int wait_fd(int fd, short events, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int n;

	n = poll(&pfd, 1, timeout_ms);
	if (n < 0)
		return -errno; /* -EINTR too: a signal is the caller's to act on */
	return n ? 0 : -ETIMEDOUT;
}

int ctl_listen(const struct sockaddr *addr, socklen_t len)
{
	int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, err;

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, addr, len) || listen(fd, 4)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int ctl_accept(int lfd, int timeout_ms)
{
	int err = wait_fd(lfd, POLLIN, timeout_ms), fd, one = 1;

	if (err)
		return err;
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int ctl_connect(const struct sockaddr *addr, socklen_t len, int timeout_ms)
{
	int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int err = 0, one = 1;
	socklen_t elen = sizeof(err);

	if (fd < 0)
		return -errno;
	if (connect(fd, addr, len) && errno != EINPROGRESS) {
		err = -errno;
		goto fail;
	}
	err = wait_fd(fd, POLLOUT, timeout_ms);
	if (err)
		goto fail;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) || err) {
		err = err ? -err : -errno;
		goto fail;
	}
	/* blocking from here: messages are small and sent whole */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
fail:
	close(fd);
	return err;
}

int ctl_send(int fd, const struct ctl_msg *m)
{
	char *line = ctl_msg__format(m);
	uint64_t deadline = now_ns() + (uint64_t)CTL_SEND_MS * 1000000;
	size_t len, off = 0;
	int err = 0;

	if (!line)
		return -ENOMEM;
	len = strlen(line);
	line[len++] = '\n'; /* format's strbuf always leaves room for the NUL */
	/* never blocking: a peer that stops reading must not hang us */
	while (off < len) {
		ssize_t n = send(fd, line + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		uint64_t now;

		if (n >= 0) {
			off += n;
			continue;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			err = -errno;
			break;
		}
		now = now_ns();
		if (now >= deadline) {
			err = -ETIMEDOUT;
			break;
		}
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };

		if (poll(&pfd, 1, (int)((deadline - now) / 1000000) + 1) < 0) {
			err = -errno; /* -EINTR: the caller's stop signal */
			break;
		}
	}
	free(line);
	return err;
}

int ctl_recv(int fd, struct ctl_msg *m, int timeout_ms)
{
	struct strbuf sb = {};
	uint64_t deadline = timeout_ms < 0 ? 0 : now_ns() + (uint64_t)timeout_ms * 1000000;
	int err;

	ctl_msg__init(m, "");
	/* a byte at a time: a few messages per run, and nothing is read past
	 * the newline, so the next message stays in the socket */
	for (;;) {
		int left = -1;
		char c;
		ssize_t n;

		if (deadline) {
			uint64_t now = now_ns();

			left = now >= deadline ? 0 : (int)((deadline - now) / 1000000);
		}
		err = wait_fd(fd, POLLIN, left);
		if (err)
			goto out;
		n = recv(fd, &c, 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto out;
		}
		if (n == 0) {
			err = -ECONNRESET;
			goto out;
		}
		if (c == '\n')
			break;
		if (sb.len >= CTL_LINE_MAX) {
			err = -EMSGSIZE;
			goto out;
		}
		sb_append(&sb, &c, 1);
	}
	err = ctl_msg__parse(sb.buf ? sb.buf : "", m);
out:
	sb_free(&sb);
	return err;
}
