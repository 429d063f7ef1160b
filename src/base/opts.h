/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Option tables: a command's options declared once, as data (long name,
 * letter, value type, range, default, help), and everything else made
 * from the table: the getopt_long parsing, the range checks and their
 * one-line errors, the --help text and the man page's OPTIONS section.
 * Pure: no kernel, nothing of udpdrop but value types (it belongs with the
 * base helpers). The command keeps one switch that stores each value:
 *
 *	struct opts_parser p;
 *	int id;
 *
 *	opts__begin(&p, &top_opts_cmd, argc, argv);
 *	while ((id = opts__next(&p)) > 0)
 *		switch (id) { case TOP_INTERVAL: o->interval = p.d; break; ... }
 *	if (id < 0)
 *		return id;   (OPTS_DONE: --help or --version printed; or -2)
 *	positional arguments: argv[p.optind...]
 *
 * -h/--help, -V/--version and -v/--verbose (counted in p.verbose) are
 * handled here, the same in every command; a table lists them with
 * OPTS_HELP, OPTS_VERSION and OPTS_VERBOSE(help) so they show in --help.
 */
#ifndef UD_OPTS_H
#define UD_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* What an option's value is, and how it is checked. */
enum opt_type {
	OT_FLAG,     /* no value */
	OT_SECONDS,  /* a decimal number of seconds, min to max: p.d */
	OT_REAL,     /* a decimal number (milliseconds...), min to max: p.d */
	OT_COUNT,    /* a whole number, min to max: p.u */
	OT_PORT,     /* a port, 1 to 65535 unless the table says: p.u */
	OT_PID,      /* a process id, 1 to 2^31-1: p.u */
	OT_NETNS,    /* an `ip netns` name, nsfs path or inode: p.arg (resolved later) */
	OT_SIZE,     /* bytes with K/M/G (powers of 1024), min to max: p.u */
	OT_ENUM,     /* one of values[]: p.index, p.arg */
	OT_STRING,   /* any text the command checks itself: p.arg */
	OT_PATH,     /* a file name, never empty: p.arg */
};

/* spec flags */
#define OPTS_F_APPLY_DEFAULT 0x1  /* opts__next yields def first, as if typed */
#define OPTS_F_POW2          0x2  /* sizes: a power of 2 only */
#define OPTS_F_HIDDEN        0x4  /* parsed, but in neither --help nor the man page */
#define OPTS_F_EMPTY_OK      0x8  /* strings: "" is a value (else refused) */

/* ids the parser keeps for the common options (a command's ids are > 0) */
enum { OPTS_ID_HELP = 10000, OPTS_ID_VERSION, OPTS_ID_VERBOSE };

struct opt_spec {
	int id;                     /* what opts__next returns; > 0 */
	const char *name;           /* long name without "--"; NULL: a letter only */
	int letter;                 /* 0: long only */
	enum opt_type type;
	const char *meta;           /* the value's name in help (SECS, N, PORT) */
	double min, max;            /* numbers, counts, sizes (0, 0: the type's own) */
	const char *range;          /* %r where the numbers say it badly ("4K to 1G") */
	const char *const *values;  /* OT_ENUM: NULL-terminated */
	const char *def;            /* the default as typed, for %d; NULL: none */
	unsigned flags;             /* OPTS_F_* */
	/*
	 * The error's "what to give" ("udpdrop top: invalid --interval 'x':
	 * WANT"). %r expands to the range ("0.1 to 3600"), %d to the default.
	 */
	const char *want;
	/* The help text, %r and %d as in want; --help wraps it to 80 columns
	 * ('\n' is a space there); the man page's OPTIONS have it as one paragraph. */
	const char *help;
	/* other spellings that mean the same, documented as such */
	int alias_letter;           /* an older short form (report -b for --by) */
	const char *alias_name;     /* another long name (--no-colour) */
	const char *alias_note;     /* what the help says of them (NULL: nothing) */
};

#define OPTS_HELP { .id = OPTS_ID_HELP, .name = "help", .letter = 'h', .help = "print this help" }
#define OPTS_VERSION { .id = OPTS_ID_VERSION, .name = "version", .letter = 'V', \
		       .help = "print the version" }
#define OPTS_VERBOSE(text) { .id = OPTS_ID_VERBOSE, .name = "verbose", .letter = 'v', \
			     .help = (text) }

/* A command: its options, and the text around them in --help. */
struct opts_cmd {
	const char *prog;           /* "udpdrop" */
	const char *name;           /* "top" */
	const char *version;        /* what -V prints after prog */
	const char *usage;          /* after "Usage: udpdrop top ": "[OPTIONS]" */
	const char *about;          /* the lines after Usage, before the options */
	void (*about_more)(FILE *f);/* more of them, made at run time (NULL: none) */
	const char *options_title;  /* a line before the options ("Options:"), or NULL */
	const char *epilog;         /* after the options: notes, exit codes */
	const struct opt_spec *specs; /* ends with an entry whose id is 0 */
};

/* The most options a command may have. */
#define OPTS_MAX 48

/* What the parser found; the command reads the value of the id returned. */
struct opts_parser {
	const struct opts_cmd *cmd;
	const struct opt_spec *spec; /* the option just returned */
	int argc;
	char **argv;
	int optind;                  /* after the loop: the first positional */
	const char *arg;             /* the value as typed */
	double d;                    /* OT_SECONDS, OT_REAL */
	uint64_t u;                  /* OT_COUNT, OT_PORT, OT_PID, OT_SIZE */
	int index;                   /* OT_ENUM */
	int verbose;                 /* -v given this many times */
	bool is_default;             /* the value is the table's default */
	/* private */
	int next_default;
	char shortopts[2 + 3 * 2 * OPTS_MAX];
	struct option longopts[2 * OPTS_MAX + 1];
};

#define OPTS_DONE (-1)        /* --help or --version printed: exit 0 */
#define OPTS_USAGE_ERROR (-2) /* one line said: exit 2 (a usage error) */

void opts__begin(struct opts_parser *p, const struct opts_cmd *cmd, int argc, char **argv);
/*
 * The next option's id (its value checked and in p), 0 at the end of the
 * options, OPTS_DONE, or OPTS_USAGE_ERROR after the error line and the
 * hint on stderr. Frees what it allocated when it returns <= 0.
 */
int opts__next(struct opts_parser *p);
/* The current option's value is bad for the command's own reason:
 * "PROG CMD: invalid --NAME 'VALUE': WANT" (the table's want, or want if
 * given). Returns OPTS_USAGE_ERROR. */
int opts__invalid(struct opts_parser *p, const char *want);

/* The lines every command words the same way. Each returns OPTS_USAGE_ERROR. */
int opts__say_bad_value(const char *prog, const char *cmd, const char *opt,
			const char *val, const char *want);
int opts__say_usage(const char *prog, const char *cmd, const char *msg);

/* --help: usage, about, the options, the epilog. */
void opts__help(const struct opts_cmd *cmd, FILE *f);
/*
 * text from column col on, wrapped at spaces and newlines to 80 columns
 * (24 at least), then a newline; the first line continues the current one.
 */
void opts__wrap(FILE *f, const char *text, size_t col);
/* The man page's OPTIONS section body (roff), from the same table. */
void opts__man_options(const struct opts_cmd *cmd, FILE *f);
/* spec's text (help or want) with %r and %d expanded, into buf. */
void opts__expand(const struct opt_spec *s, const char *text, char *buf, size_t len);
/* The option column of spec in --help: "-i, --interval SECS". */
void opts__column(const struct opt_spec *s, char *buf, size_t len);

#endif
