// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for src/kernel/ksyms.c: reading a kallsyms file (text symbols only,
 * modules, hidden addresses, lines that are not symbols), the ranges the
 * classifier needs (looked up ahead in a read that stops early, or from
 * the table), and naming a drop location; plus the real /proc/kallsyms.
 */
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
#include "ksyms.h"

static char path[64];

static int write_file(const char *text)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/udpdrop-ksyms.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	if (path[0])
		unlink(path);
	path[0] = '\0';
	return 0;
}

static const char fixture[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000010 t early\n"
	"ffffffff81200000 D some_data\n"               /* not code */
	"ffffffff81100000 T inet_sock_destruct\n"      /* out of order */
	"ffffffff81100000 T inet_sock_destruct_alias\n"
	"ffffffff81100200 t udp_destruct_common\n"
	"ffffffff81100300 T __pfx_next_one\n"
	"garbage line\n"
	"ffffffff81100310 W weak_one\n"
	"0000000000000000 T hidden\n"                  /* kptr_restrict */
	"ffffffffc0001000 t nft_do_chain\t[nf_tables]\n"
	"ffffffffc0002000 t bpf_prog_abc_udpdrop\t[bpf]";  /* no newline at the end */

static void test_load(void **state)
{
	struct ksyms ks;
	char buf[64];
	uint64_t s, e;

	assert_int_equal(write_file(fixture), 0);
	assert_int_equal(ksyms__load(&ks, path), 0);
	/* t/T with an address only, sorted */
	assert_int_equal(ks.n, 8);
	for (int i = 1; i < ks.n; i++)
		assert_true(ks.v[i - 1].addr <= ks.v[i].addr);
	assert_string_equal(ks.v[ks.n - 1].name, "bpf_prog_abc_udpdrop");
	assert_string_equal(ks.v[ks.n - 2].name, "nft_do_chain");

	/* a range ends at the next symbol up, aliases skipped */
	assert_int_equal(ksyms__range(&ks, "inet_sock_destruct", &s, &e), 0);
	assert_int_equal(s, 0xffffffff81100000ull);
	assert_int_equal(e, 0xffffffff81100200ull);
	assert_int_equal(ksyms__range(&ks, "udp_destruct_common", &s, &e), 0);
	assert_int_equal(e, 0xffffffff81100300ull);
	assert_int_equal(ksyms__range(&ks, "some_data", &s, &e), -ENOENT);
	assert_int_equal(ksyms__range(&ks, "hidden", &s, &e), -ENOENT);
	assert_int_equal(ksyms__range(&ks, "weak_one", &s, &e), -ENOENT);
	/* the last symbol has no end */
	assert_int_equal(ksyms__range(&ks, "bpf_prog_abc_udpdrop", &s, &e), -ENOENT);

	assert_string_equal(ksyms__format(&ks, 0xffffffff81100245ull, buf, sizeof(buf)),
			    "udp_destruct_common+0x45");
	assert_string_equal(ksyms__format(&ks, 0xffffffffc0001010ull, buf, sizeof(buf)),
			    "nft_do_chain+0x10");
	assert_string_equal(ksyms__format(&ks, 0xffffffff81000000ull, buf, sizeof(buf)),
			    "_text+0x0");
	assert_string_equal(ksyms__format(&ks, 0x1000, buf, sizeof(buf)), "0x1000");
	ksyms__free(&ks);
	assert_int_equal(ks.n, 0);
	assert_null(ks.v);
}

static void test_empty_and_missing(void **state)
{
	struct ksyms ks;
	char buf[32];

	assert_int_equal(write_file(""), 0);
	assert_int_equal(ksyms__load(&ks, path), 0);
	assert_int_equal(ks.n, 0);
	assert_string_equal(ksyms__format(&ks, 0xffffffff81000000ull, buf, sizeof(buf)),
			    "0xffffffff81000000");
	ksyms__free(&ks);
	assert_int_equal(ksyms__load(&ks, "/nonexistent/kallsyms"), -ENOENT);
	ksyms__free(&ks);
}

/* Bigger than one read: the whole file is read. */
static void test_many(void **state)
{
	size_t cap = 4 << 20, len = 0;
	char *text = malloc(cap);
	struct ksyms ks;
	uint64_t s, e;

	assert_non_null(text);
	for (int i = 0; i < 60000; i++)
		len += snprintf(text + len, cap - len, "%016llx t sym_%d\n",
				0xffffffff81000000ull + 16ull * i, i);
	assert_int_equal(write_file(text), 0);
	free(text);
	assert_int_equal(ksyms__load(&ks, path), 0);
	assert_int_equal(ks.n, 60000);
	assert_int_equal(ksyms__range(&ks, "sym_59998", &s, &e), 0);
	assert_int_equal(e - s, 16);
	ksyms__free(&ks);
}

static const char sorted_fixture[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000100 t alpha\n"
	"ffffffff81000100 t alpha_alias\n"
	"ffffffff81000180 D data\n"
	"ffffffff81000200 T beta\n"
	"ffffffff81000300 t gamma\n"
	"ffffffff81000400 T delta\n"
	"ffffffff81000500 t last_one";

/* Ahead of the table: each range from one read; the table comes later. */
static void test_prefetch(void **state)
{
	const char *names[] = { "beta", "alpha", "nowhere", "last_one" };
	struct ksyms ks;
	uint64_t s, e;
	char buf[64];

	assert_int_equal(write_file(sorted_fixture), 0);
	assert_int_equal(ksyms__prefetch(&ks, path, names, 4), 0);
	assert_false(ks.loaded);
	assert_int_equal(ks.n, 0);
	assert_int_equal(ksyms__range(&ks, "alpha", &s, &e), 0);
	assert_int_equal(s, 0xffffffff81000100ull);
	assert_int_equal(e, 0xffffffff81000200ull); /* alias and data skipped */
	assert_int_equal(ksyms__range(&ks, "beta", &s, &e), 0);
	assert_int_equal(e - s, 0x100);
	/* read to the end for it: not there; the last has no end */
	assert_int_equal(ksyms__range(&ks, "nowhere", &s, &e), -ENOENT);
	assert_int_equal(ksyms__range(&ks, "last_one", &s, &e), -ENOENT);
	assert_false(ks.loaded);
	/* naming a location loads the table */
	assert_string_equal(ksyms__format(&ks, 0xffffffff81000310ull, buf, sizeof(buf)),
			    "gamma+0x10");
	assert_true(ks.loaded);
	assert_int_equal(ks.n, 7);
	ksyms__free(&ks);

	/* a name not asked for ahead: from the table */
	assert_int_equal(ksyms__prefetch(&ks, path, names, 2), 0);
	assert_int_equal(ksyms__range(&ks, "gamma", &s, &e), 0);
	assert_true(ks.loaded);
	assert_int_equal(s, 0xffffffff81000300ull);
	assert_int_equal(e, 0xffffffff81000400ull);
	ksyms__free(&ks);
}

/*
 * Every classifier name at once (3 ranges and 29 sites: more than the 8 it
 * once took) in one read, hashed: each found with its own end, absent ones
 * not, and the table never loaded for them.
 */
static void test_prefetch_many_names(void **state)
{
	char text[64 * 48], *p = text;
	const char *names[40];
	char name_buf[40][16];
	struct ksyms ks;
	uint64_t s, e;

	(void)state;
	/* fn_0 ... fn_35, 0x100 apart, and the file's last line */
	p += sprintf(p, "ffffffff81000000 T _text\n");
	for (int i = 0; i < 36; i++)
		p += sprintf(p, "%016llx t fn_%d\n", 0xffffffff81001000ull + 0x100ull * i, i);
	p += sprintf(p, "ffffffff81010000 T the_end\n");
	assert_int_equal(write_file(text), 0);
	/* every other one asked, backwards, and 4 that are nowhere */
	for (int i = 0; i < 36; i++)
		snprintf(name_buf[i], sizeof(name_buf[i]), i < 32 ? "fn_%d" : "gone_%d",
			 i < 32 ? 35 - i : i);
	for (int i = 0; i < 36; i++)
		names[i] = name_buf[i];
	assert_int_equal(ksyms__prefetch(&ks, path, names, 36), 0);
	assert_false(ks.loaded);
	for (int i = 4; i < 36; i++) {
		char n[16];

		snprintf(n, sizeof(n), "fn_%d", i);
		assert_int_equal(ksyms__range(&ks, n, &s, &e), 0);
		assert_int_equal(s, 0xffffffff81001000ull + 0x100ull * i);
		assert_int_equal(e, i == 35 ? 0xffffffff81010000ull : s + 0x100);
	}
	assert_int_equal(ksyms__range(&ks, "gone_33", &s, &e), -ENOENT);
	assert_false(ks.loaded);
	ksyms__free(&ks);
}

/* Lines out of address order before the answers: the table decides. */
static void test_prefetch_unsorted(void **state)
{
	const char *names[] = { "inet_sock_destruct", "udp_destruct_common" };
	struct ksyms ks;
	uint64_t s, e;

	assert_int_equal(write_file("ffffffff81000000 T _text\n"
				    "ffffffff81100300 t later_up\n"   /* before the others */
				    "ffffffff81100000 T inet_sock_destruct\n"
				    "ffffffff81100200 t udp_destruct_common\n"
				    "ffffffff81100400 t the_end\n"), 0);
	assert_int_equal(ksyms__prefetch(&ks, path, names, 2), 0);
	assert_true(ks.loaded);
	assert_int_equal(ksyms__range(&ks, "inet_sock_destruct", &s, &e), 0);
	assert_int_equal(s, 0xffffffff81100000ull);
	assert_int_equal(e, 0xffffffff81100200ull);
	assert_int_equal(ksyms__range(&ks, "udp_destruct_common", &s, &e), 0);
	assert_int_equal(e, 0xffffffff81100300ull);
	ksyms__free(&ks);
	assert_int_equal(ksyms__prefetch(&ks, "/nonexistent/kallsyms", names, 2), -ENOENT);
	ksyms__free(&ks);
}

/*
 * The running kernel's: the functions the classifier looks for are
 * there, and looking them up ahead gives what the table says.
 */
static void test_proc_kallsyms(void **state)
{
	const char *names[] = { "inet_frag_rbtree_purge", "udp_destruct_common",
				"inet_sock_destruct" };
	struct ksyms ks, pre;
	uint64_t s, e, ps, pe;
	int err = ksyms__load(&ks, NULL);

	if (err || !ks.n) {
		print_message("no readable /proc/kallsyms (%d symbols, %s)\n", ks.n, strerror(-err));
		ksyms__free(&ks);
		skip();
	}
	assert_int_equal(ksyms__range(&ks, "inet_sock_destruct", &s, &e), 0);
	assert_true(e > s);
	assert_int_equal(ksyms__prefetch(&pre, NULL, names, 3), 0);
	if (pre.loaded)
		print_message("/proc/kallsyms out of order here: read whole\n");
	for (int i = 0; i < 3; i++) {
		int a = ksyms__range(&ks, names[i], &s, &e);

		assert_int_equal(ksyms__range(&pre, names[i], &ps, &pe), a);
		if (!a) {
			assert_int_equal(ps, s);
			assert_int_equal(pe, e);
		}
	}
	ksyms__free(&pre);
	ksyms__free(&ks);
}

/*
 * kptr_restrict: every address 0. Hidden is said; nothing is named; a
 * range asked for that the file lists but the kernel cannot resolve (not
 * in BTF, or listed twice) is lost, and one not listed is just absent.
 */
static void test_hidden(void **state)
{
	const char *names[] = { "fake_fn_a", "dup_fn", "nowhere" };
	struct ksyms ks;
	uint64_t s, e;
	char buf[64];

	assert_int_equal(write_file("0000000000000000 T _text\n"
				    "0000000000000000 t fake_fn_a\n"
				    "0000000000000000 t __pfx_fake_fn_b\n"
				    "0000000000000000 t fake_fn_b\n"
				    "0000000000000000 t dup_fn\n"
				    "0000000000000000 t fake_fn_c\n"
				    "0000000000000000 D some_data\n"
				    "0000000000000000 t dup_fn\n"), 0);
	assert_int_equal(ksyms__prefetch(&ks, path, names, 3), 0);
	assert_true(ks.hidden);
	assert_int_equal(ksyms__range(&ks, "fake_fn_a", &s, &e), -ENOENT);
	assert_int_equal(ksyms__range(&ks, "dup_fn", &s, &e), -ENOENT);
	assert_int_equal(ksyms__range(&ks, "nowhere", &s, &e), -ENOENT);
	assert_int_equal(ksyms__lost(&ks), 2); /* nowhere is not this kernel's */
	ksyms__free(&ks);
	assert_int_equal(ksyms__load(&ks, path), 0);
	assert_true(ks.hidden);
	assert_int_equal(ks.n, 0);
	assert_string_equal(ksyms__format(&ks, 0xffffffff81000010ull, buf, sizeof(buf)),
			    "0xffffffff81000010");
	ksyms__free(&ks);
	/* one address shown: not hidden */
	assert_int_equal(write_file("0000000000000000 T _text\nffffffff81000100 t alpha\n"), 0);
	assert_int_equal(ksyms__load(&ks, path), 0);
	assert_false(ks.hidden);
	ksyms__free(&ks);
}

/*
 * The running kernel's /proc/kallsyms with every address zeroed, as a
 * reader without CAP_SYSLOG sees it: the classifier's ranges come from the
 * kernel by BTF, start where kallsyms says, and end at the next function
 * (past its padding and CFI symbols only). Needs root: the addresses to
 * compare with, and CAP_BPF + CAP_PERFMON to ask the kernel.
 */
static void test_hidden_real(void **state)
{
	const char *names[] = { "inet_frag_rbtree_purge", "udp_destruct_common",
				"inet_sock_destruct" };
	struct ksyms ks, pre;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int err = ksyms__load(&ks, NULL), checked = 0;

	if (err || !ks.n || geteuid()) {
		print_message("needs root and a readable /proc/kallsyms\n");
		ksyms__free(&ks);
		skip();
	}
	f = open_memstream(&text, &len);
	assert_non_null(f);
	{
		FILE *in = fopen("/proc/kallsyms", "re");
		char line[512];

		assert_non_null(in);
		while (fgets(line, sizeof(line), in)) {
			char *sp = strchr(line, ' ');

			if (sp)
				fprintf(f, "0000000000000000%s", sp);
		}
		fclose(in);
	}
	fclose(f);
	assert_int_equal(write_file(text), 0);
	free(text);
	assert_int_equal(ksyms__prefetch(&pre, path, names, 3), 0);
	assert_true(pre.hidden);
	for (int i = 0; i < 3; i++) {
		uint64_t s, e, hs, he;

		if (ksyms__range(&ks, names[i], &s, &e))
			continue; /* not this kernel's */
		assert_int_equal(ksyms__range(&pre, names[i], &hs, &he), 0);
		assert_int_equal(hs, s);
		assert_true(he >= e);
		/* between the two ends: padding and CFI symbols only */
		for (int k = 0; k < ks.n; k++)
			if (ks.v[k].addr >= e && ks.v[k].addr < he)
				assert_true(!strncmp(ks.v[k].name, "__pfx_", 6) ||
					    !strncmp(ks.v[k].name, "__cfi_", 6));
		checked++;
	}
	assert_true(checked > 0);
	assert_int_equal(ksyms__lost(&pre), 0);
	ksyms__free(&pre);
	ksyms__free(&ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_load, teardown),
		cmocka_unit_test_teardown(test_empty_and_missing, teardown),
		cmocka_unit_test_teardown(test_many, teardown),
		cmocka_unit_test_teardown(test_prefetch, teardown),
		cmocka_unit_test_teardown(test_prefetch_many_names, teardown),
		cmocka_unit_test_teardown(test_prefetch_unsorted, teardown),
		cmocka_unit_test(test_proc_kallsyms),
		cmocka_unit_test_teardown(test_hidden, teardown),
		cmocka_unit_test_teardown(test_hidden_real, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
