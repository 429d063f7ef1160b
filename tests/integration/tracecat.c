// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tracecat FILE: the records of a udpdrop trace as JSON lines, one per
 * record, for the integration tests (jq does the checking), then a last
 * line {"type":"STATUS","status":"complete"|"cut"|...,"message":...,
 * "version":"MAJOR.MINOR"} (the file header's; "0.0" when none was read).
 * Kernel addresses are hex strings (jq's numbers are doubles).
 * Exit 0 when the file reads to its end (complete or cut), 1 otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "trace.h"
#include "util.h"

static void jstr(const char *s)
{
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

static void jaddr(int family, const uint8_t *a)
{
	char buf[64];

	if (family == AF_INET || family == AF_INET6)
		fmt_addr(buf, sizeof(buf), family, a);
	else
		snprintf(buf, sizeof(buf), "?");
	jstr(buf);
}

static void causes(uint32_t n, const struct trace_cause_count *v)
{
	printf("{");
	for (uint32_t i = 0; i < n; i++)
		printf("%s\"%u\":%llu", i ? "," : "", v[i].cause,
		       (unsigned long long)v[i].n);
	printf("}");
}

static void print(const struct trace_record *r)
{
	printf("{\"type\":");
	jstr(trace_type__name(r->type) ? trace_type__name(r->type) : "?");
	switch (r->type) {
	case TRACE_META:
		printf(",\"meta\":{");
		for (uint32_t i = 0; i < r->meta.n; i++) {
			printf("%s", i ? "," : "");
			jstr(r->meta.v[i].key);
			putchar(':');
			jstr(r->meta.v[i].value);
		}
		printf("}");
		break;
	case TRACE_REASONS:
		printf(",\"reasons\":{");
		for (uint32_t i = 0; i < r->reasons.n; i++) {
			printf("%s", i ? "," : "");
			jstr(r->reasons.v[i].name);
			printf(":%u", r->reasons.v[i].value);
		}
		printf("}");
		break;
	case TRACE_SYMBOLS:
		printf(",\"symbols\":{");
		for (uint32_t i = 0; i < r->symbols.n; i++) {
			printf("%s\"0x%llx\":", i ? "," : "",
			       (unsigned long long)r->symbols.v[i].addr);
			jstr(r->symbols.v[i].name);
		}
		printf("}");
		break;
	case TRACE_IFACES:
		printf(",\"ifaces\":[");
		for (uint32_t i = 0; i < r->ifaces.n; i++) {
			const struct trace_iface *f = &r->ifaces.v[i];

			printf("%s{\"ifindex\":%u,\"netns\":%u,\"mtu\":%u,\"txqueuelen\":%u,\"name\":",
			       i ? "," : "", f->ifindex, f->netns, f->mtu, f->txqueuelen);
			jstr(f->name);
			printf("}");
		}
		printf("]");
		break;
	case TRACE_EVENT: {
		const struct trace_event *e = &r->event;

		printf(",\"time_ns\":%llu,\"cpu\":%u,\"netns\":%u,\"cookie\":%llu,\"cause\":%u,\"reason\":%u,\"location\":\"0x%llx\",\"flags\":%u,\"family\":%u,\"proto\":%u,\"saddr\":",
		       (unsigned long long)e->time_ns, e->cpu, e->netns,
		       (unsigned long long)e->cookie, e->cause, e->reason,
		       (unsigned long long)e->location, e->flags, e->family, e->proto);
		jaddr(e->family, e->saddr);
		printf(",\"daddr\":");
		jaddr(e->family, e->daddr);
		printf(",\"sport\":%u,\"dport\":%u,\"len\":%u,\"datagrams\":%u,\"caplen\":%u,\"cap\":\"",
		       e->sport, e->dport, e->len, e->datagrams, e->caplen);
		for (uint32_t i = 0; i < e->caplen; i++)
			printf("%02x", e->cap[i]);
		printf("\"");
		break;
	}
	case TRACE_COUNTS:
		printf(",\"time_ns\":%llu,\"counts\":[", (unsigned long long)r->counts.time_ns);
		for (uint32_t i = 0; i < r->counts.n; i++) {
			const struct ud_key *k = &r->counts.v[i].key;
			const struct ud_val *v = &r->counts.v[i].val;

			printf("%s{\"cookie\":%llu,\"location\":\"0x%llx\",\"netns\":%u,\"reason\":%u,\"saddr\":",
			       i ? "," : "", (unsigned long long)k->cookie,
			       (unsigned long long)k->location, k->netns, k->reason);
			jaddr(k->family, k->saddr);
			printf(",\"daddr\":");
			jaddr(k->family, k->daddr);
			printf(",\"dport\":%u,\"family\":%u,\"proto\":%u,\"flags\":%u,\"datagrams\":%llu,\"skbs\":%llu,\"bytes\":%llu}",
			       k->dport, k->family, k->proto, k->flags,
			       (unsigned long long)v->datagrams,
			       (unsigned long long)v->skbs, (unsigned long long)v->bytes);
		}
		printf("]");
		break;
	case TRACE_SOCKETS:
		printf(",\"time_ns\":%llu,\"sockets\":[", (unsigned long long)r->sockets.time_ns);
		for (uint32_t i = 0; i < r->sockets.n; i++) {
			const struct trace_socket *s = &r->sockets.v[i];

			printf("%s{\"cookie\":%llu,\"netns\":%u,\"inode\":%u,\"pid\":%u,\"family\":%u,\"proto\":%u,\"laddr\":",
			       i ? "," : "", (unsigned long long)s->cookie, s->netns,
			       s->inode, s->pid, s->family, s->proto);
			jaddr(s->family, s->laddr);
			printf(",\"lport\":%u,\"raddr\":", s->lport);
			jaddr(s->family, s->raddr);
			printf(",\"rport\":%u,\"comm\":", s->rport);
			jstr(s->comm);
			printf(",\"rcvbuf\":%u,\"queued\":%u}", s->rcvbuf, s->queued);
		}
		printf("]");
		break;
	case TRACE_MIB:
		printf(",\"time_ns\":%llu,\"netns\":%u,\"counters\":{",
		       (unsigned long long)r->mib.time_ns, r->mib.netns);
		for (uint32_t i = 0; i < r->mib.n; i++) {
			printf("%s", i ? "," : "");
			jstr(r->mib.v[i].name);
			printf(":%llu", (unsigned long long)r->mib.v[i].value);
		}
		printf("}");
		break;
	case TRACE_SHED:
		printf(",\"time_ns\":%llu,\"shed\":", (unsigned long long)r->shed.time_ns);
		causes(r->shed.n, r->shed.v);
		break;
	case TRACE_WINDOWS:
		printf(",\"time_ns\":%llu,\"windows\":[", (unsigned long long)r->windows.time_ns);
		for (uint32_t i = 0; i < r->windows.n; i++)
			printf("%s{\"id\":%llu,\"cause\":%u,\"win\":%u,\"datagrams\":%llu}",
			       i ? "," : "", (unsigned long long)r->windows.v[i].id,
			       r->windows.v[i].cause, r->windows.v[i].win,
			       (unsigned long long)r->windows.v[i].datagrams);
		printf("]");
		break;
	case TRACE_END:
		printf(",\"events\":%llu,\"duration_ns\":%llu,\"shed\":",
		       (unsigned long long)r->end.events,
		       (unsigned long long)r->end.duration_ns);
		causes(r->end.n, r->end.v);
		break;
	}
	printf("}\n");
}

int main(int argc, char **argv)
{
	static const char *const status[] = {
		[TRACE_READING] = "reading", [TRACE_COMPLETE] = "complete",
		[TRACE_CUT] = "cut", [TRACE_CORRUPT] = "corrupt",
		[TRACE_NOT_TRACE] = "not_trace", [TRACE_NEWER] = "newer",
		[TRACE_IO_ERROR] = "io_error",
	};
	struct trace_reader *r;
	uint16_t major, minor;
	struct trace_record rec;
	enum trace_status st;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: tracecat FILE\n");
		return 2;
	}
	err = trace_reader__open(argv[1], &r);
	if (err) {
		fprintf(stderr, "tracecat: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	while ((err = trace_reader__next(r, &rec)) > 0)
		print(&rec);
	st = trace_reader__status(r);
	printf("{\"type\":\"STATUS\",\"status\":");
	jstr(st <= TRACE_IO_ERROR ? status[st] : "?");
	printf(",\"message\":");
	jstr(trace_reader__message(r) ? trace_reader__message(r) : "");
	trace_reader__version(r, &major, &minor);
	printf(",\"version\":\"%u.%u\"}\n", major, minor);
	trace_reader__close(r);
	return err < 0 ? 1 : 0;
}
