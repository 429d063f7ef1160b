// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "json.h"

void json_init(struct json *j, struct strbuf *sb)
{
	j->sb = sb;
	j->depth = 0;
	j->need_comma[0] = false;
}

/* Called before every value and key: the comma, if one is due. */
static void sep(struct json *j)
{
	if (j->need_comma[j->depth])
		sb_printf(j->sb, ",");
	j->need_comma[j->depth] = true;
}

static void open_(struct json *j, char c)
{
	sep(j);
	sb_printf(j->sb, "%c", c);
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_(struct json *j, char c)
{
	if (j->depth > 0)
		j->depth--;
	sb_printf(j->sb, "%c", c);
}

void json_obj_begin(struct json *j) { open_(j, '{'); }
void json_obj_end(struct json *j) { close_(j, '}'); }
void json_arr_begin(struct json *j) { open_(j, '['); }
void json_arr_end(struct json *j) { close_(j, ']'); }

/*
 * Runs of plain characters go out in one append; quotes, backslashes and
 * controls are escaped, DEL and the C1 controls (U+0080..U+009F) too, so
 * a document printed on a terminal cannot drive it; bytes that are not
 * UTF-8 (a comm or a netns name can hold anything) become U+FFFD so the
 * document stays valid JSON.
 */
static void str_raw(struct json *j, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run = p;
	size_t left = strlen(s);

	sb_append(j->sb, "\"", 1);
	while (*p) {
		int n = utf8_seq_len(p, left);

		if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) { /* C1 */
			sb_append(j->sb, (const char *)run, p - run);
			sb_printf(j->sb, "\\u%04x", p[1]);
			p += 2;
			left -= 2;
			run = p;
			continue;
		}
		if (n && *p != '"' && *p != '\\' && *p >= 0x20 && *p != 0x7f) {
			p += n;
			left -= n;
			continue;
		}
		sb_append(j->sb, (const char *)run, p - run);
		switch (*p) {
		case '"': sb_append(j->sb, "\\\"", 2); break;
		case '\\': sb_append(j->sb, "\\\\", 2); break;
		case '\n': sb_append(j->sb, "\\n", 2); break;
		case '\t': sb_append(j->sb, "\\t", 2); break;
		case '\r': sb_append(j->sb, "\\r", 2); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				sb_printf(j->sb, "\\u%04x", *p);
			else
				sb_append(j->sb, "\\ufffd", 6);
		}
		run = ++p;
		left--;
	}
	sb_append(j->sb, (const char *)run, p - run);
	sb_append(j->sb, "\"", 1);
}

void json_key(struct json *j, const char *key)
{
	sep(j);
	str_raw(j, key);
	sb_printf(j->sb, ":");
	/* the value that follows needs no comma of its own */
	j->need_comma[j->depth] = false;
	/* ...but the next key does: re-armed by the value's sep() */
}

void json_str(struct json *j, const char *s)
{
	if (!s) {
		json_null(j);
		return;
	}
	sep(j);
	str_raw(j, s);
}

void json_u64(struct json *j, uint64_t v)
{
	sep(j);
	sb_printf(j->sb, "%" PRIu64, v);
}

void json_i64(struct json *j, int64_t v)
{
	sep(j);
	sb_printf(j->sb, "%" PRId64, v);
}

void json_double(struct json *j, double v, int decimals)
{
	sep(j);
	if (!isfinite(v))
		sb_printf(j->sb, "null");
	else
		sb_printf(j->sb, "%.*f", decimals, v);
}

void json_bool(struct json *j, bool v)
{
	sep(j);
	sb_printf(j->sb, v ? "true" : "false");
}

void json_null(struct json *j)
{
	sep(j);
	sb_printf(j->sb, "null");
}
