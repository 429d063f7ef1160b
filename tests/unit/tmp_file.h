/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A scratch file per test for the cmocka unit tests that write files (the
 * trace writer and reader, the report): a fresh directory under /tmp in
 * setup, removed in teardown, and whole-file read/write helpers. Include
 * after <cmocka.h>.
 */
#ifndef UD_TEST_TMP_FILE_H
#define UD_TEST_TMP_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp_dir[64], path[128];

/* mkdtemp /tmp/PREFIX.XXXXXX; path = that directory/NAME (not created) */
static inline int tmp_file_setup(const char *prefix, const char *name)
{
	snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/%s.XXXXXX", prefix);
	if (!mkdtemp(tmp_dir))
		return -1;
	snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
	return 0;
}

static inline int tmp_file_teardown(void)
{
	unlink(path);
	return rmdir(tmp_dir);
}

/* The whole file, NUL-terminated (so text can be compared as a string). */
static inline uint8_t *slurp(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	uint8_t *b;
	long n;

	if (!f)
		fail_msg("cannot open %s", p);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = malloc(n + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, n, f), n);
	b[n] = 0;
	fclose(f);
	*len = n;
	return b;
}

static inline void spit(const char *p, const void *b, size_t len)
{
	FILE *f = fopen(p, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, len, f), len);
	fclose(f);
}

#endif
