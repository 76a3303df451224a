/*
 * Typed option tables. Each command declares one array of struct rt_opt; the
 * same array drives parsing, --help and the error for an unknown flag
 * (with a did-you-mean). Long options only (--name VALUE or --name=VALUE),
 * plus an optional one-letter alias.
 */
#ifndef RT_OPT_H
#define RT_OPT_H

#include <stdbool.h>

#include "runner/base/rt.h"

enum rt_opt_type {
	RT_OPT_END = 0,  /* terminates a table */
	RT_OPT_FLAG,     /* bool, no value */
	RT_OPT_STR,      /* const char *, points into argv */
	RT_OPT_INT,      /* long */
	RT_OPT_DBL,      /* double */
};

struct rt_opt {
	const char *name;      /* long name without "--" */
	char alias;            /* one-letter alias, or 0 */
	enum rt_opt_type type; /* what dst points at */
	void *dst;             /* where the value goes */
	const char *arg;       /* value placeholder for --help, e.g. "FILE" */
	const char *help;      /* one line */
	bool hidden;           /* internal: parsed, never shown in --help, man pages or completion */
};

struct rt_cmd_help {
	const char *usage;   /* "ratchet log [options]" */
	const char *summary; /* one line */
	const char *details; /* optional paragraph printed after the options, or NULL */
};

/*
 * Parse argv[1..] (argv[0] is the command name). Options may come in any
 * order among positional arguments; "--" ends options. Positionals are
 * moved to the front of argv[1..] and their count returned via *npos.
 * "--help"/"-h" prints help to stdout and returns 1. Returns 0 on success,
 * or RT_EUSAGE with the message in err.
 */
int rt_opt_parse(const struct rt_opt *opts, const struct rt_cmd_help *help,
		 int argc, char **argv, int *npos, struct rt_sb *err);
void rt_opt_print_help(const struct rt_opt *opts, const struct rt_cmd_help *help);

#endif
