/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A minimal streaming JSON writer into a strbuf: commas and escaping. */
#ifndef UD_JSON_H
#define UD_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include "util.h"

#define JSON_MAX_DEPTH 16

struct json {
	struct strbuf *sb;
	int depth;
	bool need_comma[JSON_MAX_DEPTH];
};

void json_init(struct json *j, struct strbuf *sb);
void json_obj_begin(struct json *j);   /* value position */
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_str(struct json *j, const char *s); /* NULL writes null */
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
void json_double(struct json *j, double v, int decimals);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);

#endif
