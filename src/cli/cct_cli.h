/*
 * cct_cli.h - conventions shared by the `ccltune` subcommands (src/cmd_*.c).
 *
 * Every subcommand is a function `int cct_cmd_NAME(int argc, char **argv)` where argv[0]
 * is the subcommand name.  It parses its own flags with getopt_long (optstring ":...",
 * opterr = 0, values through cct_parse.h), prints `--help` to stdout ending with its
 * "Exit status:" paragraph, prints errors to stderr as "ccltune NAME: error: ...", and
 * returns an exit
 * status: 0 success, 1 the operation failed or found a problem (validation errors, a diff,
 * a failed measurement), 2 usage error (unknown flag, bad value, missing argument).
 */
#ifndef CCT_CLI_H
#define CCT_CLI_H

#include <stdint.h>

#include "cct_error.h"
#include "cct_exit.h"

typedef int (*cct_cmd_fn)(int argc, char **argv);

typedef struct cct_command {
    const char *name;
    const char *summary;
    cct_cmd_fn run;
} cct_command;

/* Print "ccltune CMD: error: MESSAGE\n" to stderr; returns CCT_EXIT_FAIL. */
int cct_cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print "ccltune CMD: error: MESSAGE\nTry 'ccltune CMD --help'.\n"; returns CCT_EXIT_USAGE. */
int cct_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Report a search role's outcome (cct_search.h): print err as an error (with the --help hint
 * for CCT_EXIT_USAGE) when code is not CCT_EXIT_OK and err has a message; returns code. */
int cct_cli_role_result(const char *cmd, int code, const cct_error *err);

/* The usage error for getopt_long's ':' or '?' return c (cct_parse_flag_error): every
 * command passes an optstring starting with ':' and opterr = 0.  Returns CCT_EXIT_USAGE. */
int cct_cli_flag_error(const char *cmd, int c, char **argv);
/* CCT_EXIT_OK when getopt left no word in argv, else the usage error naming the first. */
int cct_cli_extra_args(const char *cmd, int argc, char **argv);

/* The subcommands.  Each lives in src/cmd_NAME.c. */
int cct_cmd_validate(int argc, char **argv);
int cct_cmd_explain(int argc, char **argv);
int cct_cmd_diff(int argc, char **argv);
int cct_cmd_plot(int argc, char **argv);
int cct_cmd_probe(int argc, char **argv);
int cct_cmd_search(int argc, char **argv);
int cct_cmd_fit(int argc, char **argv);
int cct_cmd_bench(int argc, char **argv);
int cct_cmd_tune(int argc, char **argv);
int cct_cmd_import(int argc, char **argv);
int cct_cmd_export(int argc, char **argv);
int cct_cmd_calibrate(int argc, char **argv);
int cct_cmd_doctor(int argc, char **argv);
int cct_cmd_audit(int argc, char **argv);

#endif
