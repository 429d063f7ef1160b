// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <inttypes.h>
#include <math.h>
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
 * Length of a valid UTF-8 sequence at p (1-4), or 0 if invalid: no
 * overlong forms, no surrogates, nothing above U+10FFFF (RFC 3629).
 */
static int utf8_len(const unsigned char *p)
{
	int n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
	unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */

	if (p[0] < 0x80)
		return 1;
	if (!n || p[0] > 0xf4)
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/*
 * Runs of plain characters go out in one append; quotes, backslashes and
 * controls are escaped; bytes that are not UTF-8 (a comm or a netns name
 * can hold anything) become U+FFFD so the document stays valid JSON.
 */
static void str_raw(struct json *j, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run = p;

	sb_append(j->sb, "\"", 1);
	while (*p) {
		int n = utf8_len(p);

		if (n && *p != '"' && *p != '\\' && *p >= 0x20) {
			p += n;
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
			if (*p < 0x20)
				sb_printf(j->sb, "\\u%04x", *p);
			else
				sb_append(j->sb, "\\ufffd", 6);
		}
		run = ++p;
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
