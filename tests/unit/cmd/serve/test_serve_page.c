// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * udpdrop serve's page (src/cmd/serve/serve_page.c) from a model fed by
 * hand: the drops per netns, cause and reason sum to the model's totals
 * (overflow under netns ""), and stay put when a row changes its key.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "model_fixture.h"
#include "serve_page.h"

#define COOKIE 4242

struct fx {
	struct model_fx x;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || model_fx__open(&f->x))
		return -1;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	model_fx__close(&f->x);
	free(f);
	return 0;
}

static void put(struct fx *f, const struct ud_key *k, uint64_t n)
{
	struct ud_val *v = htab__upsert(&f->x.drops, k, NULL);

	assert_non_null(v);
	v->datagrams = v->skbs = n;
	v->bytes = n * 100;
}

static void update_at(struct fx *f, uint64_t ms)
{
	assert_int_equal(model__update(&f->x.m, &f->x.drops, f->x.overflow, f->x.stats,
				       f->x.m.start_ns + ms * 1000000ull), 0);
}

/* The value of NAME{LABELS} in the page; -1 when absent. */
static long long sample(const char *page, const char *series)
{
	size_t n = strlen(series);

	for (const char *p = page; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, series, n) && p[n] == ' ')
			return atoll(p + n + 1);
	return -1;
}

static char *render(struct fx *f, enum expo_format fmt)
{
	struct serve_self self = { .version = "0.1.0", .kernel = "6.18", .attach = "tp_btf",
				   .overflow = f->x.overflow };

	f->x.sb.len = 0;
	if (f->x.sb.buf)
		f->x.sb.buf[0] = '\0';
	serve_page__render(&f->x.m, &self, fmt, &f->x.sb);
	return f->x.sb.buf;
}

static void test_sums_and_labels(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	int64_t rcvbuff, noport;
	char want[256];

	model_fx__init(&f->x, &o);
	rcvbuff = reasons__value(&f->x.m.reasons, "SOCKET_RCVBUFF");
	noport = reasons__value(&f->x.m.reasons, "NO_SOCKET");
	if (rcvbuff < 0 || noport < 0)
		skip();
	struct ud_key sock = { .netns = f->x.netns, .reason = rcvbuff, .cookie = COOKIE,
			       .flags = UD_KEY_SOCK | UD_KEY_RX_SK };
	struct ud_key flow = { .netns = f->x.netns, .reason = noport, .family = AF_INET,
			       .proto = IPPROTO_UDP, .dport = 53 };

	inet_pton(AF_INET, "10.0.0.1", flow.saddr);
	inet_pton(AF_INET, "10.0.0.2", flow.daddr);
	put(f, &sock, 30);
	put(f, &flow, 7);
	f->x.overflow[rcvbuff].datagrams = f->x.overflow[rcvbuff].skbs = 5;
	update_at(f, 1000);

	const char *p = render(f, EXPO_TEXT);

	snprintf(want, sizeof(want),
		 "udpdrop_drops_total{netns=\"%u\",cause=\"rcvbuf\",reason=\"SOCKET_RCVBUFF\"}",
		 f->x.netns);
	assert_int_equal(sample(p, want), 30);
	snprintf(want, sizeof(want),
		 "udpdrop_drops_total{netns=\"%u\",cause=\"no_socket\",reason=\"NO_SOCKET\"}",
		 f->x.netns);
	assert_int_equal(sample(p, want), 7);
	/* the kernel's table was full: the cause kept, no netns */
	assert_int_equal(sample(p, "udpdrop_drops_total{netns=\"\",cause=\"rcvbuf\",reason=\"SOCKET_RCVBUFF\"}"), 5);
	assert_int_equal(f->x.m.totals.drops, 42);
	assert_int_equal(sample(p, "udpdrop_overflow_drops_total"), 5);
	assert_non_null(strstr(p, "# TYPE udpdrop_drops_total counter\n"));
	assert_non_null(strstr(p, "udpdrop_build_info{version=\"0.1.0\",kernel=\"6.18\",attach=\"tp_btf\"} 1\n"));
	assert_null(strstr(p, "# EOF"));
	/* no cookie, pid or address in any label */
	assert_null(strstr(p, "4242"));
	assert_null(strstr(p, "10.0.0."));

	p = render(f, EXPO_OPENMETRICS);
	assert_non_null(strstr(p, "# TYPE udpdrop_drops counter\n"));
	assert_non_null(strstr(p, "# TYPE udpdrop_build info\n"));
	assert_int_equal(strcmp(p + strlen(p) - 6, "# EOF\n"), 0);
}

/*
 * A socket counted by its inode, then joined to its cookie by a dump: the
 * row changes its key, the series keep their value (counters never go
 * down); closed sockets folded into one row likewise.
 */
static void test_monotonic_across_rekey(void **state)
{
	struct fx *f = *state;
	struct model_opts o = {};
	int64_t rcvbuff;
	char want[256];

	model_fx__init(&f->x, &o);
	rcvbuff = reasons__value(&f->x.m.reasons, "SOCKET_RCVBUFF");
	if (rcvbuff < 0)
		skip();
	struct ud_key by_inode = { .netns = f->x.netns, .reason = rcvbuff, .cookie = 777,
				   .flags = UD_KEY_SOCK | UD_KEY_RX_SK | UD_KEY_INODE };
	struct ud_key folded = by_inode;

	put(f, &by_inode, 10);
	update_at(f, 1000);
	snprintf(want, sizeof(want),
		 "udpdrop_drops_total{netns=\"%u\",cause=\"rcvbuf\",reason=\"SOCKET_RCVBUFF\"}",
		 f->x.netns);
	assert_int_equal(sample(render(f, EXPO_TEXT), want), 10);
	/* the tracer gives the entry back: its counts live on, folded */
	htab__clear(&f->x.drops);
	folded.cookie = UD_COOKIE_FOLDED | f->x.netns;
	folded.flags &= ~UD_KEY_INODE;
	put(f, &folded, 10);
	update_at(f, 2000);
	assert_int_equal(sample(render(f, EXPO_TEXT), want), 10);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_sums_and_labels),
		T(test_monotonic_across_rekey),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
