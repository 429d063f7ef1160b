// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the drop windows' clock (src/kernel/tracer.c:
 * tracer_win_ticks, src/kernel/tracer_windows.c: tracer_win_now): which
 * CONFIG_HZ the jiffies clock takes, and that user space's window in
 * progress is the one the programs count into (jiffies / win_ticks).
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
#include <time.h>
#include <unistd.h>
#include "tracer_internal.h"

static void test_ticks(void **state)
{
	(void)state;
	/* whole windows and an exact times(2): the common configs */
	assert_int_equal(tracer_win_ticks(100), 10);
	assert_int_equal(tracer_win_ticks(200), 20);
	assert_int_equal(tracer_win_ticks(250), 25);
	assert_int_equal(tracer_win_ticks(500), 50);
	assert_int_equal(tracer_win_ticks(1000), 100);
	/* a tick of no whole ns (times(2) drifts), no whole windows, none */
	assert_int_equal(tracer_win_ticks(300), 0);
	assert_int_equal(tracer_win_ticks(1024), 0);
	assert_int_equal(tracer_win_ticks(24), 0);
	assert_int_equal(tracer_win_ticks(0), 0);
	assert_int_equal(tracer_win_ticks(-250), 0);
	assert_int_equal(tracer_win_ticks(20000), 0);
}

/* The fine clock: CLOCK_MONOTONIC's 100 ms windows. */
static void test_now_fine(void **state)
{
	struct tracer t = { .win_ticks = 0 };
	struct timespec a, b;
	uint64_t idx;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &a);
	idx = tracer_win_now(&t);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_true(idx >= (uint64_t)a.tv_sec * 10 + (uint64_t)a.tv_nsec / UD_WIN_NS);
	assert_true(idx <= (uint64_t)b.tv_sec * 10 + (uint64_t)b.tv_nsec / UD_WIN_NS);
}

/* "jiffies: N" from /proc/timer_list (root), -1 where it cannot be read. */
static int64_t read_jiffies(void)
{
	char line[256];
	int64_t j = -1;
	FILE *f = fopen("/proc/timer_list", "r");

	if (!f)
		return -1;
	while (j < 0 && fgets(line, sizeof(line), f))
		if (!strncmp(line, "jiffies: ", 9))
			j = strtoll(line + 9, NULL, 10);
	fclose(f);
	return j;
}

/*
 * On the jiffies clock, user space's window in progress is the kernel's
 * jiffies / win_ticks, the programs' index: read between two looks at the
 * jiffies, it is one of theirs. Needs root (/proc/timer_list) and the
 * kernel's config (CONFIG_HZ); skipped without them, outside CI.
 */
static void test_now_jiffies(void **state)
{
	int hz = tracer_config_hz();
	uint64_t ticks = tracer_win_ticks(hz);
	struct tracer t = { .win_ticks = ticks };
	int64_t j0, j1;
	uint64_t idx;

	(void)state;
	/* a HZ the jiffies clock does not take: the fine clock's, tested above */
	if (hz > 0 && !ticks)
		skip();
	/* CI runs as root on a kernel with its config */
	if (!getenv("CI") && (geteuid() != 0 || !hz))
		skip();
	if (!ticks)
		fail_msg("no CONFIG_HZ in /boot/config-RELEASE or /proc/config.gz");
	j0 = read_jiffies();
	idx = tracer_win_now(&t);
	j1 = read_jiffies();
	if (j0 < 0 || j1 < 0)
		fail_msg("cannot read jiffies from /proc/timer_list: %s", strerror(errno));
	assert_true(idx >= (uint64_t)j0 / ticks);
	assert_true(idx <= (uint64_t)j1 / ticks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ticks),
		cmocka_unit_test(test_now_fine),
		cmocka_unit_test(test_now_jiffies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
