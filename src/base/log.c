// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "log.h"

static enum log_level cur_level = LOG_WARN;
static bool probing;
static void (*sink)(enum log_level level, const char *line);

void log__set_sink(void (*fn)(enum log_level, const char *)) { sink = fn; }

/* One line for the sink: formatted, trailing newline cut. */
static void to_sink(enum log_level level, const char *fmt, va_list ap)
{
	char line[256];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = 0;
	if (n)
		sink(level, line);
}

void log__set_level(enum log_level level) { cur_level = level; }
enum log_level log__level(void) { return cur_level; }
void log__set_probing(bool p) { probing = p; }

void log__msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > cur_level)
		return;
	va_start(ap, fmt);
	if (sink) {
		to_sink(level, fmt, ap);
		va_end(ap);
		return;
	}
	fputs("udpdrop: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* libbpf speaks one level quieter than ours: its warnings are our debug. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (cur_level < LOG_DEBUG)
		return 0;
	if (sink) {
		to_sink(LOG_DEBUG, fmt, ap);
		return 0;
	}
	if (probing && level != LIBBPF_DEBUG)
		fputs("udpdrop: (probing) libbpf: ", stderr);
	else
		fputs("udpdrop: libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

void log__install_libbpf(void) { libbpf_set_print(libbpf_print); }
