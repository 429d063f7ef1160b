/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Assertions on printed text for the cmocka unit tests: a substring is
 * there or not, and a jq filter holds of a JSON document. Include after
 * <cmocka.h>.
 */
#ifndef UD_TEST_TEXT_H
#define UD_TEST_TEXT_H

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

/* jq -e FILTER over text: 0 when the filter is true. */
static inline int jq_status(const char *text, const char *filter)
{
	char cmd[1024];
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "jq -e '%s' >/dev/null 2>&1", filter);
	fflush(NULL);
	p = popen(cmd, "w");
	assert_non_null(p);
	fputs(text, p);
	st = pclose(p);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

#define ASSERT_JQ(text, ...) do {					\
	char filter_[768];						\
									\
	snprintf(filter_, sizeof(filter_), __VA_ARGS__);		\
	if (jq_status((text), filter_) != 0)				\
		fail_msg("jq -e '%s' is not true of:\n%s", filter_, (text)); \
} while (0)

#define ASSERT_HAS(text, ...) do {					\
	char want_[1024];						\
									\
	snprintf(want_, sizeof(want_), __VA_ARGS__);			\
	if (!strstr((text), want_))					\
		fail_msg("missing \"%s\" in:\n%s", want_, (text));	\
} while (0)

#define ASSERT_LACKS(text, s) do {					\
	if (strstr((text), (s)))					\
		fail_msg("unexpected \"%s\" in:\n%s", (s), (text));	\
} while (0)

#endif
