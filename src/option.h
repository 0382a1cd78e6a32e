/* SPDX-License-Identifier: MIT */
/*
 * Options as data: each option of each command (and each parameter of each
 * workload) is one struct option_spec with its name, value, help, default,
 * parser and validation. The parser of a command line, its --help, and the
 * bash completion are made from these tables, so an option is declared once.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A number as a string literal, so a limit is written once for the code and the help: OPTION_STR(1000). */
#define OPTION_STR_(x) #x
#define OPTION_STR(x) OPTION_STR_(x)

/* How parsing a command line ended. */
enum option_result {
	OPTION_OK = 0,		/* every value is valid: run */
	OPTION_EXIT = 1,	/* --help or --version was printed: exit 0 */
	OPTION_USAGE = 2,	/* bad option or value: msg holds one line; exit 2 */
	OPTION_NO_OUTPUT = 4,	/* an output cannot be created: msg holds one line; exit 4 */
};

struct option_spec;

/*
 * Parse and validate arg (never NULL; "" for a flag) for option o into the
 * options struct opts (at o->offset). Returns OPTION_OK, or OPTION_USAGE
 * with a one-line error in msg that names the option and the value.
 */
typedef enum option_result (*option_set_fn)(const struct option_spec *o, const char *arg, void *opts, char *msg,
					    size_t len);

/* What bash completion offers for an option's value. */
enum option_complete {
	OPTION_COMPLETE_NOTHING,	/* a number or free text */
	OPTION_COMPLETE_WORD,		/* one of the choices */
	OPTION_COMPLETE_LIST,		/* a comma list of the choices */
	OPTION_COMPLETE_FILE,		/* a file, or - */
	OPTION_COMPLETE_JSON,		/* a .json file (directories to get there), or - */
	OPTION_COMPLETE_DIR,		/* a directory */
	OPTION_COMPLETE_OUTPUT,		/* --output: a file, a directory, -, or FORMAT=FILE pairs */
};

/* Flags of an option. */
enum {
	OPTION_HIDDEN = 1 << 0,		/* internal (--internal-child): not in --help or completion */
	OPTION_MIN_OPEN = 1 << 1,	/* option_set_double: min itself is refused */
	OPTION_MAX_OPEN = 1 << 2,	/* option_set_double: max itself is refused */
	OPTION_HELP = 1 << 3,		/* -h, --help: print the command's usage and exit 0 */
	OPTION_VERSION = 1 << 4,	/* -V, --version: print the version and exit 0 */
};

struct option_spec {
	const char *name;	/* the long option without "--": "stride" */
	char short_name;	/* 'q'; 0: none */
	const char *value;	/* how --help names the value: "SIZE"; NULL: a flag that takes none */
	/*
	 * The help text: lines separated by '\n', printed from column 24. The
	 * default follows the last line, or gets a line of its own when the
	 * text ends in '\n'.
	 */
	const char *help;
	const char *def;	/* the default as a user would type it, set before the command line; NULL: none */
	const char *def_help;	/* what --help calls the default when def cannot say it ("none"; '\n' breaks); NULL: def */
	option_set_fn set;	/* parse and validate a value into the options */
	size_t offset;		/* where set() stores it in the options struct */
	double min, max;	/* the range option_set_count and option_set_double accept */
	const char *range_help;	/* option_set_double: how the error states the range ("a number from 0 to 1") */
	const char *const *choices;	/* option_set_choice: the words, NULL-terminated; their values in values */
	const int *values;	/* option_set_choice: the value of each choice; NULL: its index */
	/* Completion words computed at run time (e.g. the workloads): the i-th, NULL after the last. */
	const char *(*choice_at)(size_t i);
	enum option_complete complete;
	unsigned flags;
};

/* One word of o's choices (choices, else choice_at), NULL past the last. */
const char *option_choice(const struct option_spec *o, size_t i);

/*
 * Store n bytes of v into opts at o->offset: how a setter writes its field
 * (memcpy, so a setter says the field's type once, by what it stores).
 */
void option_store(const struct option_spec *o, void *opts, const void *v, size_t n);

/* The value setters every command uses; see the fields each reads. */
enum option_result option_set_flag(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len);
/* A string, borrowed from argv (a const char * at offset); the command checks what it names. */
enum option_result option_set_string(const struct option_spec *o, const char *arg, void *opts, char *msg,
				     size_t len);
/* A whole number from min to max with k/M/G suffixes (an unsigned at offset). */
enum option_result option_set_count(const struct option_spec *o, const char *arg, void *opts, char *msg,
				    size_t len);
/* The same into a uint64_t, any value (--seed). */
enum option_result option_set_u64(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len);
/* A finite number in [min, max] (or open ends by flags) into a double; the error says range_help. */
enum option_result option_set_double(const struct option_spec *o, const char *arg, void *opts, char *msg,
				     size_t len);
/* One of the choices (case-insensitive) into an int, its value from values (or its index). */
enum option_result option_set_choice(const struct option_spec *o, const char *arg, void *opts, char *msg,
				     size_t len);

/*
 * Write a one-line usage error "FMT..." to msg and return OPTION_USAGE. The
 * shape of every error: it names the option and the value.
 */
__attribute__((format(printf, 3, 4))) enum option_result option_error(char *msg, size_t len, const char *fmt, ...);

/* Split the comma list arg of --NAME into items (into buf). The count, or -1 after the error went to msg. */
int option_split_list(const struct option_spec *o, const char *arg, const char *what, char *buf, size_t buf_len,
		      char **items, size_t max, char *msg, size_t len);

/* A table of specs (ended by a spec with name NULL) and the options struct its offsets point into. */
struct option_table {
	const struct option_spec *specs;
	void *opts;
};

/* The options a command line is parsed against. */
#define OPTION_MAX_TABLES 8
#define OPTION_MAX_SPECS 64	/* in one table */
#define OPTION_MAX_OPERANDS 8
struct option_parser {
	const char *command;	/* "analyze" in errors ("see tlbprof analyze --help"); NULL: the default command */
	struct option_table tables[OPTION_MAX_TABLES];	/* ended by one with specs NULL */
	bool stop_at_operand;	/* stop at the first operand (tlbprof run: CMD's options are CMD's) */
	void (*usage)(FILE *f);	/* what --help prints */
	/* Whether name (n bytes, no "--") is an option of measuring, for the error; NULL: not asked. */
	bool (*measuring_has)(const char *name, size_t n);
	bool given[OPTION_MAX_TABLES][OPTION_MAX_SPECS];	/* out: which specs the command line gave */
	/*
	 * out: the operands, in their order (the first OPTION_MAX_OPERANDS; their
	 * count may be larger). With stop_at_operand the options end at the first
	 * operand, and argv + optind is the rest of the command line as given.
	 */
	char *operands[OPTION_MAX_OPERANDS];
	int n_operands;
	int optind;
};

/*
 * Set every default (def), then parse argv[0..argc-1] (argv[0] is the
 * command's name) against p's tables, each value through its spec's set().
 * argv is not reordered (getopt_long works on a copy); the operands go to
 * p->operands. Returns OPTION_OK, OPTION_EXIT after --help or --version, or
 * OPTION_USAGE with a one-line error in msg.
 */
enum option_result option_parse(struct option_parser *p, int argc, char **argv, char *msg, size_t len);

/* Whether the command line gave the option named name (any table); false for an unknown name. */
bool option_given(const struct option_parser *p, const char *name);

/* The spec named name in p's tables, or NULL. */
const struct option_spec *option_find(const struct option_parser *p, const char *name);

/* Set option name to value as if given (into its table's options). OPTION_USAGE when unknown or refused. */
enum option_result option_apply(const struct option_parser *p, const char *name, const char *value, char *msg,
				size_t len);

/* Print one option the way every --help does: "  -q, --quiet          help..." with its default. */
void option_print(FILE *f, const struct option_spec *o, unsigned indent, const char *def_help);

/* Print every visible option of specs (ended by name NULL). */
void option_print_table(FILE *f, const struct option_spec *specs);
