/*
 * ccltune.c - entry point of the `ccltune` command: dispatches git-style subcommands.
 *
 * `ccltune SUBCOMMAND [FLAGS]` looks SUBCOMMAND up in the table below and hands it the
 * remaining arguments.  `ccltune --help` lists the subcommands, `ccltune --version` prints
 * the version.  The subcommands' own conventions (exit codes, error format) are in
 * cct_cli.h.  It installs the sink through which library stages (the search) report while
 * they run (cct_say.h): without it they print nothing.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cct_cli.h"
#include "cct_config.h"
#include "cct_parse.h"
#include "cct_say.h"

static int cmd_version(int argc, char **argv);

static const cct_command commands[] = {
    {"version", "print the version", cmd_version},
    {"validate", "check tuning tables (exit 0 when all are valid)", cct_cmd_validate},
    {"explain", "show a table's decision for every size band", cct_cmd_explain},
    {"diff", "say what changed between two tables (exit 0 when decisions are equal)", cct_cmd_diff},
    {"audit", "say what NCCL ran in recorded jobs, and whether it ran the table's choices",
     cct_cmd_audit},
    {"plot", "draw measurements, models and a table's choices with gnuplot", cct_cmd_plot},
    {"probe", "print this machine's fingerprint and the LL128 verdict", cct_cmd_probe},
    {"search", "measure NCCL collectives into the measurement store", cct_cmd_search},
    {"fit", "fit models to stored measurements and write the table", cct_cmd_fit},
    {"bench", "time a table against NCCL's defaults and the best forced choice", cct_cmd_bench},
    {"tune", "search, fit, table and plots in one command (the main job)", cct_cmd_tune},
    {"import", "read nccl-tests logs or tuner-script CSV into the store", cct_cmd_import},
    {"export", "write a table as NCCL's example tuner plugin CSV", cct_cmd_export},
    {"calibrate", "fit NCCL's cost-model constants to measurements (nccl_constants)",
     cct_cmd_calibrate},
    {"doctor", "say whether a job here will apply a table, and why not", cct_cmd_doctor},
};

static void print_help(FILE *out)
{
    fprintf(out, "usage: ccltune [--version] [--help] COMMAND [ARGS]\n\n"
                 "ccltune measures NCCL collectives on this machine and writes tuning tables\n"
                 "that the ccltune tuner plugin (libnccl-tuner-ccltune.so) applies at run time.\n\n"
                 "Commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n'ccltune COMMAND --help' describes a command's flags.\n"
            "Built %s CUDA/NCCL (GPU measurement) and %s MPI.\n\n"
            "Exit status: the command's (0 success, 1 failure, 2 usage error).\n",
            CCT_HAVE_CUDA ? "with" : "without", CCT_HAVE_MPI ? "with" : "without");
}

/* The sink of the library's messages (cct_say.h): results on stdout, the rest on stderr. */
static void say_stdio(void *ctx, cct_say_stream stream, const char *text)
{
    (void)ctx;
    FILE *f = stream == CCT_SAY_OUT ? stdout : stderr;
    fputs(text, f);
    if (f == stderr)
        fflush(stderr);
}

int cct_cli_fail(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ccltune %s: error: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return CCT_EXIT_FAIL;
}

int cct_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ccltune %s: error: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'ccltune %s --help'.\n", cmd);
    va_end(ap);
    return CCT_EXIT_USAGE;
}

int cct_cli_role_result(const char *cmd, int code, const cct_error *err)
{
    if (code == CCT_EXIT_OK || !err->msg[0])
        return code;
    if (code == CCT_EXIT_USAGE)
        return cct_cli_usage_error(cmd, "%s", err->msg);
    cct_cli_fail(cmd, "%s", err->msg);
    return code;
}

int cct_cli_flag_error(const char *cmd, int c, char **argv)
{
    cct_error err;
    cct_parse_flag_error(c, argv, &err);
    return cct_cli_usage_error(cmd, "%s", err.msg);
}

int cct_cli_extra_args(const char *cmd, int argc, char **argv)
{
    if (optind < argc)
        return cct_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    return CCT_EXIT_OK;
}

static int cmd_version(int argc, char **argv)
{
    static const struct option options[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        if (c != 'h')
            return cct_cli_flag_error("version", c, argv);
        printf("usage: ccltune version\n\n"
               "Print the version of ccltune (the same as ccltune --version).\n\n"
               "Exit status: 0 printed, 2 usage error.\n");
        return CCT_EXIT_OK;
    }
    if (optind < argc)
        return cct_cli_extra_args("version", argc, argv);
    printf("ccltune %s\n", CCT_VERSION);
    return CCT_EXIT_OK;
}

int main(int argc, char **argv)
{
    cct_say_install(say_stdio, NULL, isatty(STDERR_FILENO));
    if (argc < 2) {
        print_help(stderr);
        return CCT_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        print_help(stdout);
        return CCT_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        printf("ccltune %s\n", CCT_VERSION);
        return CCT_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "ccltune: '%s' is not a ccltune command. See 'ccltune --help'.\n", name);
    return CCT_EXIT_USAGE;
}
