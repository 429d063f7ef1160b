// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for src/model/reasons.c: the drop reason table read from BTF (live kernel and built fixtures). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "reasons.h"
#include "udpdrop.h"

#define VMLINUX "/sys/kernel/btf/vmlinux"

/* ---- helpers ---- */

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void temp_path(char *buf, size_t len)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(buf, len, "%s/udpdrop-test-btf.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(buf);
	assert_true(fd >= 0);
	close(fd);
}

/* Write btf's raw form to a new temp file; path into buf. */
static void write_btf(struct btf *btf, char *buf, size_t len)
{
	const void *raw;
	uint32_t size = 0;

	raw = btf__raw_data(btf, &size);
	assert_non_null(raw);
	assert_true(size > 0);
	temp_path(buf, len);
	write_file(buf, raw, size);
}

static void add_enum(struct btf *btf, const char *name,
		     const char *const *names, const uint32_t *vals, int n)
{
	assert_true(btf__add_enum(btf, name, 4) > 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(btf__add_enum_value(btf, names[i], vals[i]), 0);
}

static void check_invariants(const struct reasons *r)
{
	char buf[32];

	for (int i = 0; i < r->n; i++) {
		const char *name = r->v[i].name;

		assert_non_null(name);
		assert_true(strlen(name) > 0);
		if (!strncmp(name, "SKB_DROP_REASON_", 16))
			fail_msg("entry %d keeps the prefix: %s", i, name);
		if (!strcmp(name, "MAX") || !strcmp(name, "SUBSYS_MASK"))
			fail_msg("bookkeeping entry %s (%u) in the table",
				 name, r->v[i].value);
		if (i && r->v[i - 1].value >= r->v[i].value)
			fail_msg("not sorted/unique at %d: %s=%u after %s=%u", i,
				 name, r->v[i].value, r->v[i - 1].name,
				 r->v[i - 1].value);
		assert_int_equal(reasons__value(r, name), r->v[i].value);
		assert_string_equal(reasons__name(r, r->v[i].value, buf,
						  sizeof(buf)), name);
	}
}

/* ---- the running kernel ---- */

static int live_setup(void **state)
{
	static struct reasons r;
	int err;

	if (access(VMLINUX, R_OK)) {
		print_message("no readable %s: %s\n", VMLINUX, strerror(errno));
		return -1;
	}
	err = reasons__load(&r, NULL);
	if (err) {
		print_message("reasons__load(NULL): %s\n", strerror(-err));
		return -1;
	}
	*state = &r;
	return 0;
}

static int live_teardown(void **state)
{
	reasons__free(*state);
	return 0;
}

static void test_live_has_core_reasons(void **state)
{
	struct reasons *r = *state;

	assert_true(r->n > 10);
	assert_true(reasons__value(r, "NOT_SPECIFIED") >= 0);
	assert_true(reasons__value(r, "NO_SOCKET") > 0);
	assert_true(reasons__value(r, "SOCKET_RCVBUFF") > 0);
	assert_true(reasons__value(r, "UDP_CSUM") > 0);
	assert_true(reasons__value(r, "PROTO_MEM") > 0);
	/* the kernel's own order: NOT_SPECIFIED, then NO_SOCKET */
	assert_true(reasons__value(r, "NOT_SPECIFIED") <
		    reasons__value(r, "NO_SOCKET"));
}

/* Every member of the kernel's enum, read here with libbpf directly. */
static void test_live_matches_btf(void **state)
{
	struct reasons *r = *state;
	struct btf *btf = btf__parse(VMLINUX, NULL);
	const struct btf_type *t;
	const struct btf_enum *e;
	int id, members = 0;

	assert_non_null(btf);
	id = btf__find_by_name_kind(btf, "skb_drop_reason", BTF_KIND_ENUM);
	assert_true(id > 0);
	t = btf__type_by_id(btf, id);
	e = btf_enum(t);
	for (int i = 0; i < btf_vlen(t); i++) {
		const char *name = btf__name_by_offset(btf, e[i].name_off);

		if (!strcmp(name, "SKB_DROP_REASON_MAX") ||
		    !strcmp(name, "SKB_DROP_REASON_SUBSYS_MASK"))
			continue;
		if (!strncmp(name, "SKB_DROP_REASON_", 16))
			name += 16;
		if (reasons__value(r, name) != (int64_t)e[i].val)
			fail_msg("%s: table %lld, BTF %u", name,
				 (long long)reasons__value(r, name), e[i].val);
		members++;
	}
	btf__free(btf);
	assert_true(members > 10);
	assert_true(r->n >= members); /* plus any subsystem reasons */
}

static void test_live_round_trip_sorted(void **state)
{
	check_invariants(*state);
}

static void test_live_no_bookkeeping(void **state)
{
	struct reasons *r = *state;

	assert_int_equal(reasons__value(r, "MAX"), -1);
	assert_int_equal(reasons__value(r, "SUBSYS_MASK"), -1);
	assert_int_equal(reasons__value(r, "SKB_DROP_REASON_MAX"), -1);
	assert_int_equal(reasons__value(r, "SKB_DROP_REASON_NOT_SPECIFIED"), -1);
	for (int i = 0; i < r->n; i++)
		assert_null(strstr(r->v[i].name, "SUBSYS"));
}

static void test_live_unknown_value(void **state)
{
	struct reasons *r = *state;
	char buf[32];

	/* far above any core reason and outside every subsystem */
	assert_string_equal(reasons__name(r, 0x7fff0123u, buf, sizeof(buf)),
			    "REASON_2147418403");
	assert_string_equal(reasons__name(r, 65535, buf, sizeof(buf)),
			    "REASON_65535");
	assert_int_equal(reasons__value(r, "SOMETHING_NEW"), -1);
	assert_int_equal(reasons__value(r, ""), -1);
}

/* ---- load errors ---- */

static void test_not_btf(void **state)
{
	struct reasons r;
	char path[256];
	static const char junk[] = "not a BTF file, just some text\n";
	/* libbpf would log "failed to get EHDR": expected here */
	libbpf_print_fn_t old = libbpf_set_print(NULL);

	temp_path(path, sizeof(path));
	write_file(path, junk, sizeof(junk) - 1);
	memset(&r, 0xa5, sizeof(r));
	assert_true(reasons__load(&r, path) < 0);
	assert_null(r.v);
	assert_int_equal(r.n, 0);
	unlink(path);

	if (access("/etc/hostname", R_OK) == 0) {
		memset(&r, 0xa5, sizeof(r));
		assert_true(reasons__load(&r, "/etc/hostname") < 0);
		assert_null(r.v);
		assert_int_equal(r.n, 0);
	}
	libbpf_set_print(old);
}

static void test_missing_file(void **state)
{
	struct reasons r;

	memset(&r, 0xa5, sizeof(r));
	assert_int_equal(reasons__load(&r, "/nonexistent/udpdrop/btf"), -ENOENT);
	assert_null(r.v);
	assert_int_equal(r.n, 0);
}

/* ---- built BTF fixtures ---- */

static void test_fixture_minimal(void **state)
{
	static const char *const names[] = {
		"SKB_DROP_REASON_NOT_SPECIFIED",
		"SKB_DROP_REASON_FOO",
		"SKB_DROP_REASON_MAX",
	};
	static const uint32_t vals[] = { 2, 7, 8 };
	struct btf *btf = btf__new_empty();
	struct reasons r;
	char path[256], buf[32];

	assert_non_null(btf);
	add_enum(btf, "skb_drop_reason", names, vals, 3);
	write_btf(btf, path, sizeof(path));
	btf__free(btf);

	assert_int_equal(reasons__load(&r, path), 0);
	unlink(path);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.v[0].value, 2);
	assert_string_equal(r.v[0].name, "NOT_SPECIFIED");
	assert_int_equal(r.v[1].value, 7);
	assert_string_equal(r.v[1].name, "FOO");
	assert_int_equal(reasons__value(&r, "FOO"), 7);
	assert_int_equal(reasons__value(&r, "NOT_SPECIFIED"), 2);
	assert_int_equal(reasons__value(&r, "MAX"), -1);
	/* names the live kernel has, absent here: not a hard-coded table */
	assert_int_equal(reasons__value(&r, "NO_SOCKET"), -1);
	assert_int_equal(reasons__value(&r, "SOCKET_RCVBUFF"), -1);
	assert_string_equal(reasons__name(&r, 7, buf, sizeof(buf)), "FOO");
	assert_string_equal(reasons__name(&r, 3, buf, sizeof(buf)), "REASON_3");
	assert_string_equal(reasons__name(&r, 8, buf, sizeof(buf)), "REASON_8");
	check_invariants(&r);
	reasons__free(&r);
	assert_null(r.v);
	assert_int_equal(r.n, 0);
}

/*
 * Subsystem enums: members with subsystem bits are added (names kept as
 * they are), their own bookkeeping (no upper bits) is not; the
 * skb_drop_reason_subsys enum itself is not a reason list; out-of-order
 * BTF values come back sorted.
 */
static void test_fixture_subsystems(void **state)
{
	static const char *const core[] = {
		"SKB_DROP_REASON_SUBSYS_MASK",
		"SKB_DROP_REASON_FOO",
		"SKB_NOT_DROPPED_YET",
		"SKB_DROP_REASON_NOT_SPECIFIED",
		"SKB_DROP_REASON_MAX",
	};
	static const uint32_t core_v[] = { 0xffff0000u, 7, 0, 2, 8 };
	static const char *const subsys[] = {
		"SKB_DROP_REASON_SUBSYS_CORE",
		"SKB_DROP_REASON_SUBSYS_BAR",
		"SKB_DROP_REASON_SUBSYS_NUM",
	};
	static const uint32_t subsys_v[] = { 0, 1, 2 };
	static const char *const bar[] = {
		"BAR_DROP_FIRST",
		"BAR_DROP_SECOND",
		"BAR_DROP_MAX",
	};
	static const uint32_t bar_v[] = { 0x10002, 0x10001, 3 };
	static const char *const other[] = { "ZAP_ONE", "ZAP_TWO" };
	static const uint32_t other_v[] = { 0x20001, 0x20002 };
	struct btf *btf = btf__new_empty();
	struct reasons r;
	char path[256], buf[32];

	assert_non_null(btf);
	add_enum(btf, "bar_drop_reason", bar, bar_v, 3);
	add_enum(btf, "skb_drop_reason_subsys", subsys, subsys_v, 3);
	add_enum(btf, "skb_drop_reason", core, core_v, 5);
	add_enum(btf, "zap_things", other, other_v, 2); /* not a drop reason enum */
	write_btf(btf, path, sizeof(path));
	btf__free(btf);

	assert_int_equal(reasons__load(&r, path), 0);
	unlink(path);
	assert_int_equal(r.n, 5);
	assert_int_equal(r.v[0].value, 0);
	assert_string_equal(r.v[0].name, "SKB_NOT_DROPPED_YET");
	assert_int_equal(r.v[1].value, 2);
	assert_string_equal(r.v[1].name, "NOT_SPECIFIED");
	assert_int_equal(r.v[2].value, 7);
	assert_string_equal(r.v[2].name, "FOO");
	assert_int_equal(r.v[3].value, 0x10001);
	assert_string_equal(r.v[3].name, "BAR_DROP_SECOND");
	assert_int_equal(r.v[4].value, 0x10002);
	assert_string_equal(r.v[4].name, "BAR_DROP_FIRST");
	assert_int_equal(reasons__value(&r, "BAR_DROP_MAX"), -1);
	assert_int_equal(reasons__value(&r, "SUBSYS_BAR"), -1);
	assert_int_equal(reasons__value(&r, "ZAP_ONE"), -1);
	assert_string_equal(reasons__name(&r, 0x20001, buf, sizeof(buf)),
			    "REASON_131073");
	check_invariants(&r);

	/*
	 * NOT_SPECIFIED drops named by site: numbered from one above the
	 * largest core reason (FOO, 7; subsystem reasons are above 0xffff),
	 * named as the sites are, and still sorted for the lookups.
	 */
	uint32_t base = reasons__site_base(&r);

	assert_int_equal(base, 8);
	assert_int_equal(reasons__add_sites(&r, base), 0);
	assert_int_equal(r.n, 5 + UD_SITE_MAX);
	assert_string_equal(reasons__name(&r, base + UD_SITE_RECV_CSUM, buf, sizeof(buf)),
			    "udp_recvmsg:bad_checksum");
	assert_string_equal(reasons__name(&r, base + UD_SITE_FRAG_EXPIRE, buf, sizeof(buf)),
			    "frag_expire");
	assert_string_equal(reasons__name(&r, 7, buf, sizeof(buf)), "FOO");
	assert_string_equal(reasons__name(&r, 0x10001, buf, sizeof(buf)), "BAR_DROP_SECOND");
	check_invariants(&r);
	reasons__free(&r);
}

static void test_fixture_without_enum(void **state)
{
	static const char *const names[] = { "A_B", "A_C" };
	static const uint32_t vals[] = { 1, 2 };
	struct btf *btf = btf__new_empty();
	struct reasons r;
	char path[256];

	assert_non_null(btf);
	add_enum(btf, "something_else", names, vals, 2);
	write_btf(btf, path, sizeof(path));
	btf__free(btf);

	memset(&r, 0xa5, sizeof(r));
	assert_int_equal(reasons__load(&r, path), -ENOENT);
	unlink(path);
	assert_null(r.v);
	assert_int_equal(r.n, 0);
}

int main(void)
{
	const struct CMUnitTest live[] = {
		cmocka_unit_test(test_live_has_core_reasons),
		cmocka_unit_test(test_live_matches_btf),
		cmocka_unit_test(test_live_round_trip_sorted),
		cmocka_unit_test(test_live_no_bookkeeping),
		cmocka_unit_test(test_live_unknown_value),
	};
	const struct CMUnitTest offline[] = {
		cmocka_unit_test(test_not_btf),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_fixture_minimal),
		cmocka_unit_test(test_fixture_subsystems),
		cmocka_unit_test(test_fixture_without_enum),
	};
	int failed = 0;

	failed += cmocka_run_group_tests_name("reasons_live", live, live_setup,
					      live_teardown);
	failed += cmocka_run_group_tests_name("reasons_btf_fixtures", offline,
					      NULL, NULL);
	return failed;
}
