/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a call prints, for the cmocka unit tests of option parsing and
 * help text: capture_begin points stdout and stderr at scratch files,
 * capture_end puts them back and copies what was written into two
 * NUL-terminated buffers (cut to fit). Include after <cmocka.h>.
 */
#ifndef UD_TEST_CAPTURE_H
#define UD_TEST_CAPTURE_H

#include <stdio.h>
#include <unistd.h>

struct capture {
	FILE *out, *err;
	int saved_out, saved_err;
};

static inline void capture_begin(struct capture *c)
{
	c->out = tmpfile();
	c->err = tmpfile();
	assert_non_null(c->out);
	assert_non_null(c->err);
	fflush(stdout);
	fflush(stderr);
	c->saved_out = dup(STDOUT_FILENO);
	c->saved_err = dup(STDERR_FILENO);
	assert_true(c->saved_out >= 0 && c->saved_err >= 0);
	assert_true(dup2(fileno(c->out), STDOUT_FILENO) >= 0);
	assert_true(dup2(fileno(c->err), STDERR_FILENO) >= 0);
}

static inline void capture_slurp(FILE *f, char *buf, size_t len)
{
	size_t n;

	rewind(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static inline void capture_end(struct capture *c, char *out, size_t outlen, char *err,
			       size_t errlen)
{
	fflush(stdout);
	fflush(stderr);
	dup2(c->saved_out, STDOUT_FILENO);
	dup2(c->saved_err, STDERR_FILENO);
	close(c->saved_out);
	close(c->saved_err);
	capture_slurp(c->out, out, outlen);
	capture_slurp(c->err, err, errlen);
}

#endif
