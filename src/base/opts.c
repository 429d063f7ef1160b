// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Option tables: parsing, checks, --help and man text from one table (opts.h). */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opts.h"
#include "units.h"
#include "util.h"

/* long options without a letter are told apart by this + their index */
#define LONG_BASE 256

static const char *printable(const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s", s);
	str_printable(buf);
	return buf;
}

int opts__say_bad_value(const char *prog, const char *cmd, const char *opt,
			const char *val, const char *want)
{
	char shown[256];

	fprintf(stderr, "%s %s: invalid %s '%s': %s\nTry '%s %s --help'.\n", prog, cmd, opt,
		printable(val, shown, sizeof(shown)), want, prog, cmd);
	return OPTS_USAGE_ERROR;
}

int opts__say_usage(const char *prog, const char *cmd, const char *msg)
{
	fprintf(stderr, "%s %s: %s\nTry '%s %s --help'.\n", prog, cmd, msg, prog, cmd);
	return OPTS_USAGE_ERROR;
}

static bool takes_value(const struct opt_spec *s)
{
	return s->type != OT_FLAG;
}

/* The range a type has when the table gives none. */
static void type_range(const struct opt_spec *s, double *min, double *max)
{
	*min = s->min;
	*max = s->max;
	if (s->min || s->max)
		return;
	switch (s->type) {
	case OT_PORT: *min = 1; *max = 65535; break;
	case OT_PID: *min = 1; *max = INT32_MAX; break;
	case OT_COUNT: case OT_SIZE: *min = 0; *max = (double)UINT64_MAX; break;
	default: *min = 0; *max = HUGE_VAL; break;
	}
}

/* 0.1, 3600, 4294967295: whole numbers without an exponent. */
static void fmt_num(char *buf, size_t len, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%g", v);
}

void opts__expand(const struct opt_spec *s, const char *text, char *buf, size_t len)
{
	size_t n = 0;

	if (!len)
		return;
	for (const char *c = text ? text : ""; *c && n + 1 < len; c++) {
		char piece[128];

		if (c[0] != '%' || !c[1]) {
			buf[n++] = *c;
			continue;
		}
		c++;
		if (*c == 'r') {
			double min, max;
			char a[48], b[48];

			type_range(s, &min, &max);
			fmt_num(a, sizeof(a), min);
			fmt_num(b, sizeof(b), max);
			if (s->range)
				snprintf(piece, sizeof(piece), "%s", s->range);
			else
				snprintf(piece, sizeof(piece), "%s to %s", a, b);
		} else if (*c == 'd') {
			snprintf(piece, sizeof(piece), "%s", s->def ? s->def : "");
		} else {
			snprintf(piece, sizeof(piece), "%c", *c); /* %% */
		}
		for (const char *q = piece; *q && n + 1 < len; q++)
			buf[n++] = *q;
	}
	buf[n] = 0;
}

void opts__column(const struct opt_spec *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s%c%s%s%s%s%s",
		 s->letter ? "-" : "    ", s->letter ? s->letter : ' ',
		 s->letter && s->name ? ", " : "",
		 s->name ? "--" : "", s->name ? s->name : "",
		 takes_value(s) ? " " : "", takes_value(s) && s->meta ? s->meta : "");
	if (!s->letter) /* "      --port PORT": the letter's place kept */
		memmove(buf, buf + 1, strlen(buf));
}

/* "(also -b: the older spelling, still accepted)", or "" */
static void alias_text(const struct opt_spec *s, char *buf, size_t len)
{
	char spell[64] = "";

	if (s->alias_letter && s->alias_name)
		snprintf(spell, sizeof(spell), "-%c, --%s", s->alias_letter, s->alias_name);
	else if (s->alias_letter)
		snprintf(spell, sizeof(spell), "-%c", s->alias_letter);
	else if (s->alias_name)
		snprintf(spell, sizeof(spell), "--%s", s->alias_name);
	if (!spell[0])
		buf[0] = 0;
	else
		snprintf(buf, len, "(also %s%s%s)", spell, s->alias_note ? ": " : "",
			 s->alias_note ? s->alias_note : "");
}

/* Terminal width --help fits in; a line's text never narrower than this. */
#define HELP_COLS 80
#define HELP_MIN_ROOM 24

/* ('\n' in a table's help is a space: the words are re-wrapped, so no line
 * outgrows a terminal whatever the option column's width) */
void opts__wrap(FILE *f, const char *text, size_t col)
{
	size_t room = HELP_COLS > col + HELP_MIN_ROOM ? HELP_COLS - col : HELP_MIN_ROOM;
	size_t used = 0;
	const char *w = text;

	for (;;) {
		w += strspn(w, " \n");
		if (!*w)
			break;
		size_t len = strcspn(w, " \n");

		if (used && used + 1 + len > room) {
			fprintf(f, "\n%*s", (int)col, "");
			used = 0;
		}
		fprintf(f, "%s%.*s", used ? " " : "", (int)len, w);
		used += (used ? 1 : 0) + len;
		w += len;
	}
	fputc('\n', f);
}

static bool shown(const struct opt_spec *s)
{
	return !(s->flags & OPTS_F_HIDDEN);
}

void opts__help(const struct opts_cmd *cmd, FILE *f)
{
	char col[128], text[2048], also[128];
	size_t width = 25;

	fprintf(f, "Usage: %s %s %s\n", cmd->prog, cmd->name, cmd->usage);
	if (cmd->about)
		fputs(cmd->about, f);
	if (cmd->about_more)
		cmd->about_more(f);
	fputc('\n', f);
	if (cmd->options_title)
		fprintf(f, "%s\n", cmd->options_title);
	/* one column for all: the longest option and two spaces */
	for (const struct opt_spec *s = cmd->specs; s->id; s++) {
		opts__column(s, col, sizeof(col));
		if (shown(s) && 2 + strlen(col) + 2 > width)
			width = 2 + strlen(col) + 2;
	}
	for (const struct opt_spec *s = cmd->specs; s->id; s++) {
		if (!shown(s))
			continue;
		opts__column(s, col, sizeof(col));
		opts__expand(s, s->help, text, sizeof(text));
		alias_text(s, also, sizeof(also));
		fprintf(f, "  %-*s", (int)(width - 2), col);
		opts__wrap(f, text, width);
		if (also[0]) {
			fprintf(f, "%*s", (int)width, "");
			opts__wrap(f, also, width);
		}
	}
	if (cmd->epilog) {
		fputc('\n', f);
		fputs(cmd->epilog, f);
	}
}

/* text for roff: backslashes and dashes escaped, no line starting a request */
static void roff(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

void opts__man_options(const struct opts_cmd *cmd, FILE *f)
{
	char text[2048], also[128];

	for (const struct opt_spec *s = cmd->specs; s->id; s++) {
		if (!shown(s))
			continue;
		fputs(".TP\n", f);
		if (s->letter)
			fprintf(f, "\\fB\\-%c\\fR%s", s->letter, s->name ? ", " : "");
		if (s->name) {
			fputs("\\fB\\-\\-", f);
			roff(f, s->name);
			fputs("\\fR", f);
		}
		if (takes_value(s) && s->meta) {
			fputs(" \\fI", f);
			roff(f, s->meta);
			fputs("\\fR", f);
		}
		fputc('\n', f);
		opts__expand(s, s->help, text, sizeof(text));
		for (char *c = text; *c; c++)
			if (*c == '\n')
				*c = ' ';
		alias_text(s, also, sizeof(also));
		if (also[0])
			snprintf(text + strlen(text), sizeof(text) - strlen(text), " %s", also);
		/* a line that starts with . or ' would be a request */
		if (text[0] == '.' || text[0] == '\'')
			fputs("\\&", f);
		roff(f, text);
		fputc('\n', f);
	}
}

/* ---- parsing --------------------------------------------------------- */

void opts__begin(struct opts_parser *p, const struct opts_cmd *cmd, int argc, char **argv)
{
	size_t k = 0, sn = 0;
	struct option *lo = p->longopts;

	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	p->argc = argc;
	p->argv = argv;
	/* ':' first: a missing value is told apart from an unknown option */
	p->shortopts[sn++] = ':';
	for (const struct opt_spec *s = cmd->specs; s->id; s++) {
		int val = s->letter ? s->letter : LONG_BASE + (int)(s - cmd->specs);
		int has = takes_value(s) ? required_argument : no_argument;

		for (int i = 0; i < 2; i++) {
			int letter = i ? s->alias_letter : s->letter;

			if (letter && sn + 3 < sizeof(p->shortopts)) {
				p->shortopts[sn++] = (char)letter;
				if (has)
					p->shortopts[sn++] = ':';
			}
		}
		if (k + 2 >= 2 * OPTS_MAX) /* a table too long: caught by its unit test */
			continue;
		if (s->name)
			lo[k++] = (struct option){ s->name, has, NULL, val };
		if (s->alias_name)
			lo[k++] = (struct option){ s->alias_name, has, NULL, val };
	}
	p->shortopts[sn] = 0;
	optind = 0; /* 0, not 1: glibc then also forgets a half-read "-zb" */
	opterr = 0;
}

static const struct opt_spec *spec_of(const struct opts_parser *p, int c)
{
	if (c >= LONG_BASE)
		return &p->cmd->specs[c - LONG_BASE];
	for (const struct opt_spec *s = p->cmd->specs; s->id; s++)
		if (s->letter == c || s->alias_letter == c)
			return s;
	return NULL;
}

/* getopt_long's '?' or ':' as one line, naming the option as it was typed. */
static int bad_option(struct opts_parser *p, int c)
{
	/*
	 * A long option has been stepped over (argv[optind - 1]); a short one
	 * may sit inside a bundle ("-zb"): name it by optopt, as
	 * argv[optind - 1] is still the word before.
	 */
	const char *word = p->argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, 0 }, shown[256];
	const char *name = optopt > 0 && optopt < LONG_BASE ? shortopt : word;
	const struct option *lo = p->longopts;

	/* a long option's value is its optopt too: is it this word? */
	for (; optopt && lo && lo->name; lo++)
		if (lo->val == optopt && !strncmp(word, "--", 2) &&
		    !strncmp(word + 2, lo->name, strlen(lo->name)))
			name = word;
	fprintf(stderr, c == ':' ? "%s %s: option '%s' needs a value\n"
				 : "%s %s: unknown option '%s'\n", p->cmd->prog, p->cmd->name,
		printable(name, shown, sizeof(shown)));
	fprintf(stderr, "Try '%s %s --help'.\n", p->cmd->prog, p->cmd->name);
	return OPTS_USAGE_ERROR;
}

int opts__invalid(struct opts_parser *p, const char *want)
{
	const struct opt_spec *s = p->spec;
	char name[80], text[512];

	if (s->name)
		snprintf(name, sizeof(name), "--%s", s->name);
	else
		snprintf(name, sizeof(name), "-%c", s->letter);
	opts__expand(s, want ? want : s->want ? s->want : "see --help", text, sizeof(text));
	return opts__say_bad_value(p->cmd->prog, p->cmd->name, name, p->arg ? p->arg : "", text);
}

/* p->arg against p->spec's type and range: 0, or the error said. */
static int check_value(struct opts_parser *p)
{
	const struct opt_spec *s = p->spec;
	double min, max;
	bool bad = false;

	type_range(s, &min, &max);
	switch (s->type) {
	case OT_FLAG:
		break;
	case OT_SECONDS:
	case OT_REAL:
		bad = parse_seconds(p->arg, min, max, &p->d) != 0;
		break;
	case OT_COUNT:
	case OT_PORT:
	case OT_PID:
		bad = parse_u64(p->arg, (uint64_t)min,
				max >= (double)UINT64_MAX ? UINT64_MAX : (uint64_t)max, &p->u) != 0;
		break;
	case OT_SIZE:
		bad = parse_size(p->arg, (uint64_t)min,
				 max >= (double)UINT64_MAX ? UINT64_MAX : (uint64_t)max, &p->u) != 0 ||
		      ((s->flags & OPTS_F_POW2) && (p->u & (p->u - 1)));
		break;
	case OT_ENUM:
		bad = true;
		for (int i = 0; s->values && s->values[i]; i++)
			if (!strcmp(p->arg, s->values[i])) {
				p->index = i;
				bad = false;
			}
		break;
	case OT_NETNS: /* the caller resolves it, and words its own errors */
		break;
	case OT_STRING:
	case OT_PATH:
		bad = !p->arg[0] && !(s->flags & OPTS_F_EMPTY_OK);
		break;
	}
	return bad ? opts__invalid(p, NULL) : 0;
}

int opts__next(struct opts_parser *p)
{
	const struct opts_cmd *cmd = p->cmd;
	int c;

	p->is_default = false;
	/* the defaults the table applies: as if typed before everything */
	for (const struct opt_spec *s; (s = &cmd->specs[p->next_default])->id; p->next_default++) {
		if (!(s->flags & OPTS_F_APPLY_DEFAULT) || !s->def)
			continue;
		p->next_default++;
		p->spec = s;
		p->arg = s->def;
		p->is_default = true;
		if (check_value(p)) /* a table's mistake: said like any other */
			return OPTS_USAGE_ERROR;
		return s->id;
	}
	while ((c = getopt_long(p->argc, p->argv, p->shortopts, p->longopts, NULL)) != -1) {
		if (c == '?' || c == ':' || !(p->spec = spec_of(p, c)))
			return bad_option(p, c);
		p->arg = optarg;
		switch (p->spec->id) {
		case OPTS_ID_HELP:
			opts__help(cmd, stdout);
			return OPTS_DONE;
		case OPTS_ID_VERSION:
			printf("%s %s\n", cmd->prog, cmd->version);
			return OPTS_DONE;
		case OPTS_ID_VERBOSE:
			p->verbose++;
			continue;
		}
		if (takes_value(p->spec) && check_value(p))
			return OPTS_USAGE_ERROR;
		return p->spec->id;
	}
	p->optind = optind;
	return 0;
}
