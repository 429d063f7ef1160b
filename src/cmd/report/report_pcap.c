// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop report --pcap: a trace's EVENT records as pcapng packets. The
 * captures start at the IP header, so one LINKTYPE_RAW interface holds
 * IPv4 and IPv6 alike; what the headers cannot say (why the kernel
 * dropped the packet, whose socket it was for) goes in each packet's
 * comment, where tshark (frame.comment) and Wireshark show it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "causes.h"
#include "cli.h"
#include "pcapng.h"
#include "report_pcap.h"
#include "util.h"

/* Blocks are gathered and written in chunks of about this much. */
#define WRITE_CHUNK (64u * 1024)

struct sym {
	uint64_t addr;
	char *name;
};

/* What the first pass learns: the context the packets' comments need. */
struct ctx {
	char *kernel, *host;
	bool have_boot;
	uint64_t boot_ns;
	uint32_t nreasons;
	struct trace_reason *reasons; /* names owned */
	size_t nsyms, capsyms;
	struct sym *syms;             /* names owned; sorted after the pass */
	uint64_t events, with_headers;
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

static void ctx_free(struct ctx *c)
{
	free(c->kernel);
	free(c->host);
	for (uint32_t i = 0; i < c->nreasons; i++)
		free((char *)c->reasons[i].name);
	free(c->reasons);
	for (size_t i = 0; i < c->nsyms; i++)
		free(c->syms[i].name);
	free(c->syms);
	memset(c, 0, sizeof(*c));
}

int report_pcap__parse_boot_time(const char *s, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	int digits = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (sec > (UINT64_MAX / 1000000000u - 10) / 10)
			return -EINVAL;
		sec = sec * 10 + (*s - '0');
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++)
			if (digits < 9) {
				frac = frac * 10 + (*s - '0');
				digits++;
			}
	}
	if (*s)
		return -EINVAL;
	for (; digits < 9; digits++)
		frac *= 10;
	*ns = sec * 1000000000u + frac;
	return 0;
}

static int meta(struct ctx *c, const struct trace_meta *m)
{
	for (uint32_t i = 0; i < m->n; i++) {
		const struct trace_kv *kv = &m->v[i];
		char **dst = NULL;

		if (!strcmp(kv->key, TRACE_META_KERNEL))
			dst = &c->kernel;
		else if (!strcmp(kv->key, TRACE_META_HOST))
			dst = &c->host;
		else if (!strcmp(kv->key, TRACE_META_BOOT_TIME))
			c->have_boot = !report_pcap__parse_boot_time(kv->value, &c->boot_ns);
		if (dst) {
			free(*dst);
			*dst = strdup(kv->value);
			if (!*dst)
				return -ENOMEM;
		}
	}
	return 0;
}

/* The last REASONS record wins: a trace has one, written at the start. */
static int reasons(struct ctx *c, const struct trace_reasons *r)
{
	struct trace_reason *v = calloc(r->n + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < r->n; i++) {
		v[i].value = r->v[i].value;
		v[i].name = strdup(r->v[i].name);
		if (!v[i].name) {
			while (i--)
				free((char *)v[i].name);
			free(v);
			return -ENOMEM;
		}
	}
	for (uint32_t i = 0; i < c->nreasons; i++)
		free((char *)c->reasons[i].name);
	free(c->reasons);
	c->reasons = v;
	c->nreasons = r->n;
	return 0;
}

/* SYMBOLS come as new drop locations appear; duplicates go at the sort. */
static int symbols(struct ctx *c, const struct trace_symbols *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		if (c->nsyms == c->capsyms) {
			size_t ncap = c->capsyms ? 2 * c->capsyms : 64;
			struct sym *nv = realloc(c->syms, ncap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			c->syms = nv;
			c->capsyms = ncap;
		}
		c->syms[c->nsyms].addr = s->v[i].addr;
		c->syms[c->nsyms].name = strdup(s->v[i].name);
		if (!c->syms[c->nsyms].name)
			return -ENOMEM;
		c->nsyms++;
	}
	return 0;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Sorted by address for bsearch. An address named twice keeps one of
 * its names: the recorder names an address the same way each time. */
static void syms_index(struct ctx *c)
{
	size_t n = 0;

	if (!c->nsyms)
		return;
	qsort(c->syms, c->nsyms, sizeof(*c->syms), sym_cmp);
	for (size_t i = 1; i < c->nsyms; i++) {
		if (c->syms[i].addr == c->syms[n].addr) {
			free(c->syms[i].name);
			continue;
		}
		c->syms[++n] = c->syms[i];
	}
	c->nsyms = n + 1;
}

static const char *sym_name(const struct ctx *c, uint64_t addr)
{
	struct sym key = { .addr = addr }, *s;

	if (!c->nsyms)
		return NULL;
	s = bsearch(&key, c->syms, c->nsyms, sizeof(*c->syms), sym_cmp);
	return s ? s->name : NULL;
}

static int reason_cmp(const void *a, const void *b)
{
	const struct trace_reason *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

/* Sorted by value for bsearch (one lookup per event: a walk of a table of
 * 65,536 per event would make a hostile file quadratic). A value named
 * twice keeps one of its names, as the symbols. */
static void reasons_index(struct ctx *c)
{
	uint32_t n = 0;

	if (!c->nreasons)
		return;
	qsort(c->reasons, c->nreasons, sizeof(*c->reasons), reason_cmp);
	for (uint32_t i = 1; i < c->nreasons; i++) {
		if (c->reasons[i].value == c->reasons[n].value) {
			free((char *)c->reasons[i].name);
			continue;
		}
		c->reasons[++n] = c->reasons[i];
	}
	c->nreasons = n + 1;
}

static const char *reason_name(const struct ctx *c, uint32_t reason)
{
	struct trace_reason key = { .value = reason }, *r;

	if (!c->nreasons)
		return NULL;
	r = bsearch(&key, c->reasons, c->nreasons, sizeof(*c->reasons), reason_cmp);
	return r ? r->name : NULL;
}

void report_pcap__comment(char *buf, size_t len, const struct trace_event *e,
			  const char *reason_name, const char *location_name)
{
	char cause[16], reason[24], sock[48], loc[24];

	/* the recorder's own number for an unknown cause, not "other":
	 * a newer recorder's cause is not ours to rename */
	if (e->cause < CAUSE_MAX)
		snprintf(cause, sizeof(cause), "%s", cause__name(e->cause));
	else
		snprintf(cause, sizeof(cause), "%u", e->cause);
	if (!reason_name) {
		snprintf(reason, sizeof(reason), "%u", e->reason);
		reason_name = reason;
	}
	if (!e->cookie)
		snprintf(sock, sizeof(sock), "none");
	else
		snprintf(sock, sizeof(sock), "%s:%" PRIu64,
			 e->flags & UD_KEY_INODE ? "inode" : "cookie", e->cookie);
	if (!location_name) {
		snprintf(loc, sizeof(loc), "0x%" PRIx64, e->location);
		location_name = loc;
	}
	snprintf(buf, len, "cause=%s reason=%s socket=%s netns=%u cpu=%u location=%s",
		 cause, reason_name, sock, e->netns, e->cpu, location_name);
	/* names come from the file: no control bytes into a terminal */
	str_printable(buf);
}

/* First pass. 0, or a negative errno with the reader's status in *st. */
static int scan(const char *trace, struct ctx *c, enum trace_status *st,
		char *msg, size_t msglen)
{
	struct trace_reader *r;
	struct trace_record rec;
	int err;

	err = trace_reader__open(trace, &r);
	if (err) {
		*st = TRACE_IO_ERROR;
		snprintf(msg, msglen, "cannot open: %s", strerror(-err));
		return err;
	}
	while ((err = trace_reader__next(r, &rec)) > 0 && !interrupted) {
		switch (rec.type) {
		case TRACE_META:
			err = meta(c, &rec.meta);
			break;
		case TRACE_REASONS:
			err = reasons(c, &rec.reasons);
			break;
		case TRACE_SYMBOLS:
			err = symbols(c, &rec.symbols);
			break;
		case TRACE_EVENT:
			c->events++;
			c->with_headers += rec.event.caplen > 0;
			break;
		}
		if (err < 0) {
			*st = TRACE_IO_ERROR;
			snprintf(msg, msglen, "%s", strerror(-err));
			trace_reader__close(r);
			return err;
		}
	}
	*st = trace_reader__status(r);
	snprintf(msg, msglen, "%s", trace_reader__message(r));
	trace_reader__close(r);
	if (interrupted)
		return -EINTR;
	syms_index(c);
	reasons_index(c);
	return err;
}

/* write_all (base/util) but for Ctrl-C: a reader of a FIFO that stopped
 * reading must not hold report forever */
static int write_until_stopped(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0) {
			if (errno == EINTR && !interrupted)
				continue;
			return -errno;
		}
		b += w;
		n -= w;
	}
	return 0;
}

static int flush(int fd, struct pcapng_buf *b)
{
	int err = write_until_stopped(fd, b->p, b->len);

	pcapng_buf__reset(b);
	return err;
}

static int write_head(struct pcapng_buf *b, const struct ctx *c,
		      const char *trace)
{
	char appl[64], comment[512];
	struct pcapng_opt shb[4];
	size_t n = 0;
	int err;

	snprintf(appl, sizeof(appl), "udpdrop %s", UDPDROP_VERSION);
	snprintf(comment, sizeof(comment), "udpdrop trace %s%s%s", trace,
		 c->host ? " recorded on " : "", c->host ? c->host : "");
	shb[n++] = pcapng_opt__str(PCAPNG_OPT_COMMENT, comment);
	if (c->kernel && *c->kernel)
		shb[n++] = pcapng_opt__str(PCAPNG_SHB_OS, c->kernel);
	shb[n++] = pcapng_opt__str(PCAPNG_SHB_USERAPPL, appl);
	err = pcapng__shb(b, shb, n);
	if (err < 0)
		return err;

	uint8_t tsresol = 9; /* 10^-9 s: the trace's nanoseconds as they are */
	struct pcapng_opt idb[] = {
		pcapng_opt__str(PCAPNG_IF_NAME, "udpdrop"),
		pcapng_opt__str(PCAPNG_IF_DESCRIPTION,
				"UDP packets the kernel dropped, from their IP header"),
		{ PCAPNG_IF_TSRESOL, 1, &tsresol },
	};

	err = pcapng__idb(b, PCAPNG_LINKTYPE_RAW, TRACE_CAP_MAX, idb, ARRAY_SIZE(idb));
	return err < 0 ? err : 0;
}

/* The packet's length as its IP header gives it, 0 if it cannot say. */
static uint32_t ip_len(const uint8_t *cap, uint16_t caplen)
{
	if (caplen >= 4 && cap[0] >> 4 == 4)
		return cap[2] << 8 | cap[3];
	/* payload length 0: a jumbogram, whose length is in an option */
	if (caplen >= 6 && cap[0] >> 4 == 6 && (cap[4] | cap[5]))
		return 40 + (cap[4] << 8 | cap[5]);
	return 0;
}

/*
 * The original length: skb->len counts from skb->data, which at the drop
 * point is often past the IP header the capture starts at (UDP pulled it
 * before queueing), so alone it would make every IP header claim more
 * bytes than the packet had (Wireshark: "IPv4 total length exceeds packet
 * length"). The IP header's own length is what was on the wire; skb->len
 * is larger for a GSO skb, whose header describes one segment.
 */
static uint32_t orig_len(const struct trace_event *e)
{
	uint32_t n = e->len, ip = ip_len(e->cap, e->caplen);

	if (n < ip)
		n = ip;
	return n < e->caplen ? e->caplen : n;
}

static int write_packet(struct pcapng_buf *b, const struct ctx *c,
			const struct trace_event *e)
{
	char comment[1024];
	uint64_t ts = c->have_boot ? c->boot_ns + e->time_ns : e->time_ns;
	uint32_t origlen = orig_len(e);

	report_pcap__comment(comment, sizeof(comment), e, reason_name(c, e->reason),
			     sym_name(c, e->location));

	struct pcapng_opt opt = pcapng_opt__str(PCAPNG_OPT_COMMENT, comment);
	int err = pcapng__epb(b, 0, ts, e->cap, e->caplen, origlen, &opt, 1);

	return err < 0 ? err : 0;
}

/* Second pass: every EVENT with headers into fd. */
static int write_packets(const char *trace, const struct ctx *c, struct out_file *of,
			 struct report_pcap_stats *st, char *msg, size_t msglen)
{
	struct pcapng_buf b = {};
	struct trace_reader *r;
	struct trace_record rec;
	int err;

	err = write_head(&b, c, trace);
	if (err) {
		snprintf(msg, msglen, "%s", strerror(-err));
		goto out_buf;
	}
	err = trace_reader__open(trace, &r);
	if (err) {
		snprintf(msg, msglen, "cannot open %s: %s", trace, strerror(-err));
		goto out_buf;
	}
	while ((err = trace_reader__next(r, &rec)) > 0 && !interrupted) {
		if (rec.type != TRACE_EVENT)
			continue;
		st->events++;
		if (!rec.event.caplen) {
			st->skipped++;
			continue;
		}
		err = write_packet(&b, c, &rec.event);
		if (!err && b.len >= WRITE_CHUNK)
			err = flush(of->fd, &b);
		if (err) {
			snprintf(msg, msglen, "%s", strerror(-err));
			goto out_reader;
		}
		st->packets++;
	}
	st->status = trace_reader__status(r);
	if (err < 0) {
		/* the file changed since the first pass read it whole */
		snprintf(msg, msglen, "%s: %s", trace, trace_reader__message(r));
		goto out_reader;
	}
	if (interrupted) {
		err = -EINTR;
		snprintf(msg, msglen, "interrupted");
		goto out_reader;
	}
	err = flush(of->fd, &b);
	err = err ?: out_file__sync(of);
	if (err)
		snprintf(msg, msglen, "%s", strerror(-err));
out_reader:
	trace_reader__close(r);
out_buf:
	pcapng_buf__free(&b);
	return err;
}

/* What a failed export leaves at OUT, for its message. */
static const char *left_as(const struct out_file *of)
{
	switch (of->kind) {
	case OUT_FILE_NEW:
		return "no pcapng written";
	case OUT_FILE_EXISTING:
		return "the file is left empty";
	default:
		return "the reader has what was written before";
	}
}

static int export(const char *trace, const char *out, bool force,
		  const char *who, FILE *msgs, struct report_pcap_stats *st)
{
	struct ctx c = {};
	struct stat in_st, out_st;
	struct out_file of = { .fd = -1 };
	char msg[512], open_msg[PATH_MAX + 128];
	int err, ret = EXIT_FAIL;

	if (!stat(trace, &in_st) && !stat(out, &out_st) &&
	    in_st.st_dev == out_st.st_dev && in_st.st_ino == out_st.st_ino) {
		fprintf(msgs, "%s: --pcap %s is the trace itself: give another name\n",
			who, out);
		return EXIT_USAGE;
	}
	/* an existing file without -f, a directory, a block device...:
	 * refused before the trace is read */
	err = out_file__check(out, force, open_msg, sizeof(open_msg));
	if (err) {
		fprintf(msgs, "%s: %s\n", who, open_msg);
		return EXIT_USAGE;
	}

	err = scan(trace, &c, &st->status, msg, sizeof(msg));
	if (err == -EINTR) {
		fprintf(msgs, "%s: interrupted: no pcapng written\n", who);
		goto out;
	}
	if (err) {
		fprintf(msgs, "%s: %s: %s: no pcapng written\n", who, trace, msg);
		goto out;
	}
	if (!c.events && st->status == TRACE_CUT) {
		fprintf(msgs, "%s: %s: %s, before any EVENT record: no packets to write\n",
			who, trace, msg);
		goto out;
	}
	if (!c.events) {
		fprintf(msgs, "%s: %s has no EVENT records (per-drop events): no packets to "
			"write; record with --headers BYTES to capture them\n", who, trace);
		goto out;
	}
	if (!c.with_headers) {
		fprintf(msgs, "%s: %s: none of its %" PRIu64 " events carries packet headers: "
			"record with --headers BYTES to export packets\n", who, trace, c.events);
		goto out;
	}

	/*
	 * OUT only now that the whole trace has read back: a corrupt one
	 * never touches it. Written in place (a new file 0600: packet headers
	 * are private; one given with -f keeps its mode, owner and links, as
	 * `>` would; a FIFO or device written through); a failure from here
	 * removes a file made here and empties one given with -f.
	 */
	/* its own line: msg keeps the first pass's word on a trace cut short */
	err = out_file__open(&of, out, force, open_msg, sizeof(open_msg));
	if (err) {
		fprintf(msgs, "%s: %s\n", who, open_msg);
		ret = err == -EEXIST || err == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
		goto out;
	}
	err = write_packets(trace, &c, &of, st, msg, sizeof(msg));
	if (err == -EINTR)
		fprintf(msgs, "%s: interrupted: %s\n", who, left_as(&of));
	else if (err)
		fprintf(msgs, "%s: cannot write %s: %s: %s\n", who, out, msg, left_as(&of));
	if (err)
		goto out;
	err = out_file__close(&of);
	if (err) {
		fprintf(msgs, "%s: cannot write %s: %s\n", who, out, strerror(-err));
		goto out;
	}
	ret = EXIT_OK;

	if (st->status == TRACE_CUT)
		fprintf(msgs, "%s: %s: %s; the pcapng holds what is there\n", who, trace, msg);
	if (!c.have_boot)
		fprintf(msgs, "%s: %s has no boot_time: timestamps are time since its boot, not wall clock\n",
			who, trace);
	fprintf(msgs, "%s: %" PRIu64 " packet%s written to %s (%" PRIu64 " event%s without headers skipped)\n",
		who, st->packets, st->packets == 1 ? "" : "s", out,
		st->skipped, st->skipped == 1 ? "" : "s");
out:
	/* no half-written file left behind */
	out_file__discard(&of);
	ctx_free(&c);
	return ret;
}

int report_pcap__export(const char *trace, const char *out, bool force,
			const char *who, FILE *msgs,
			struct report_pcap_stats *stats)
{
	struct report_pcap_stats st = {};
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term, old_hup;
	int ret;

	/* a large trace takes a while: Ctrl-C must still remove the
	 * half-written file rather than leave it under its name */
	interrupted = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	ret = export(trace, out, force, who, msgs, &st);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	if (stats)
		*stats = st;
	return ret;
}
