/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One logging module: levels, and libbpf's messages routed through it. */
#ifndef UD_LOG_H
#define UD_LOG_H

#include <stdbool.h>

enum log_level { LOG_QUIET, LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log__set_level(enum log_level level);
enum log_level log__level(void);
/* While probing kernel features, libbpf's failures are expected: hush them. */
void log__set_probing(bool probing);
void log__install_libbpf(void);
/*
 * While a full-screen view owns the terminal, messages go to `sink` (one
 * line, no prefix, no newline) instead of stderr; NULL restores stderr.
 */
void log__set_sink(void (*sink)(enum log_level level, const char *line));
void log__msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_err(...) log__msg(LOG_ERROR, __VA_ARGS__)
#define pr_warn(...) log__msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...) log__msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log__msg(LOG_DEBUG, __VA_ARGS__)

#endif
