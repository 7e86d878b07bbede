/*
 * test_bad_input.c - the bad-input catalogue: every malformed table, unsafe table file,
 * nccl-tests log, CSV, measurement store and command-line flag we try, run through the
 * `ccltune` command a user runs, each required to fail cleanly with a clear message.
 *
 * Sources: tests/bad_tables (each file's "# expect:" line), tests/bad_logs (FILE.expect
 * sidecars), the unsafe files of safe_file_cases.h, stores made here (newer schema, foreign
 * and truncated files, missing folders, a full disk) and a list of bad flags below.  Every
 * case must exit 1 or 2 (never a signal: no crash) and print a line holding the expected
 * text; table and log messages must also begin with FILE:LINE:COL where the expectation
 * has a position.  The cases then render docs/bad-input.md and the test fails if the
 * committed file differs, so the catalogue's "exact message" column stays true
 * (CCT_UPDATE_CATALOGUE=1 rewrites it).  Paths are shown relative to the repository and
 * the scratch folder as $TMP.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sqlite3.h>

#include "cli_test_util.h"
#include "recorded_test_util.h"
#include "safe_file_cases.h"
#include "fixture_test_util.h"

#define MAX_CASES 256
#define MAX_ARGS 24

typedef struct bad_case {
    const char *section; /* heading it is listed under */
    char cls[128];       /* the class, in words */
    char input[512];     /* what was given, for the reader */
    char expect[512];    /* a substring the message must hold */
    bool positioned;     /* the message must hold FILE:LINE:COL */
    char *argv[MAX_ARGS];
    const char *env[6]; /* extra NAME=VALUE for the run, NULL-terminated */
    int status;         /* observed */
    char message[2048]; /* observed, normalised */
} bad_case;

static bad_case cases[MAX_CASES];
static int n_cases;
static char *tmp, repo[4096], recording[4200];
static bool incomplete; /* some case could not be set up here: do not compare the file */

static bad_case *add(const char *section, const char *cls, const char *input, const char *expect)
{
    assert_true(n_cases < MAX_CASES);
    bad_case *c = &cases[n_cases++];
    memset(c, 0, sizeof *c);
    c->section = section;
    snprintf(c->cls, sizeof c->cls, "%s", cls);
    snprintf(c->input, sizeof c->input, "%s", input);
    snprintf(c->expect, sizeof c->expect, "%s", expect);
    return c;
}

static void set_args(bad_case *c, ...)
{
    va_list ap;
    va_start(ap, c);
    int n = 0;
    for (const char *a = va_arg(ap, const char *); a && n < MAX_ARGS - 1;
         a = va_arg(ap, const char *))
        c->argv[n++] = strdup(a);
    va_end(ap);
}

/* "unknown-key-root" -> "unknown key root" */
static void words(const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s", name);
    char *dot = strrchr(out, '.');
    if (dot)
        *dot = '\0';
    for (char *p = out; *p; p++)
        if (*p == '-' || *p == '_')
            *p = ' ';
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_dir(const char *dir, char **names, int cap)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < cap) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0 ||
            (l > 7 && strcmp(e->d_name + l - 7, ".expect") == 0))
            continue;
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_name);
    return n;
}

/* The value after `key` on the first line of path that has it ("" if none). */
static void line_value(const char *path, const char *key, char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *p = strstr(line, key);
        if (p) {
            snprintf(out, len, "%s", p + strlen(key));
            out[strcspn(out, "\r\n")] = '\0';
            break;
        }
    }
    fclose(f);
}

static void tables(void)
{
    char dir[4200], *names[256];
    snprintf(dir, sizeof dir, "%s/tests/bad_tables", repo);
    int n = list_dir(dir, names, 256);
    for (int i = 0; i < n; i++) {
        char path[4400], expect[512], cls[128], input[300];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        line_value(path, "# expect: ", expect, sizeof expect);
        assert_true(expect[0] != '\0');
        words(names[i], cls, sizeof cls);
        snprintf(input, sizeof input, "`tests/bad_tables/%s`", names[i]);
        bad_case *c = add("tables", cls, input, expect);
        unsigned l, col;
        c->positioned = sscanf(expect, "%u:%u:", &l, &col) == 2;
        set_args(c, "validate", path, NULL);
        free(names[i]);
    }
}

static void logs(void)
{
    char dir[4200], *names[256];
    snprintf(dir, sizeof dir, "%s/tests/bad_logs", repo);
    int n = list_dir(dir, names, 256);
    for (int i = 0; i < n; i++) {
        char path[4400], side[4500], expect[512], args[512], cls[128], input[800];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        snprintf(side, sizeof side, "%s.expect", path);
        line_value(side, "expect: ", expect, sizeof expect);
        line_value(side, "args: ", args, sizeof args);
        assert_true(expect[0] != '\0');
        words(names[i], cls, sizeof cls);
        snprintf(input, sizeof input, "`tests/bad_logs/%s`%s%s%s", names[i], args[0] ? " `" : "",
                 args, args[0] ? "`" : "");
        bad_case *c = add("logs", cls, input, expect);
        c->positioned = true; /* the sidecars all name NAME:LINE:COL */
        int k = 0;
        c->argv[k++] = strdup("import");
        c->argv[k++] = strdup("--dry-run");
        char *save = NULL;
        for (char *t = strtok_r(args, " ", &save); t && k < MAX_ARGS - 2;
             t = strtok_r(NULL, " ", &save))
            c->argv[k++] = strdup(t);
        c->argv[k++] = strdup(path);
        free(names[i]);
    }
}

static void unsafe_files(void)
{
    char dir[1024]; /* short enough for every case's name after it */
    snprintf(dir, sizeof dir, "%s/unsafe", tmp);
    assert_int_equal(mkdir(dir, 0755), 0);
    static sf_case sf[SF_MAX];
    int n = sf_make(dir, sf);
    for (int i = 0; i < n; i++) {
        if (!sf[i].rule)
            continue;
        if (sf[i].skip) {
            incomplete = true;
            continue;
        }
        char cls[128], input[300];
        words(sf[i].name, cls, sizeof cls);
        snprintf(input, sizeof input, "`$TMP/unsafe/%s`", sf[i].name);
        bad_case *c = add("unsafe", cls, input, sf[i].rule);
        set_args(c, "validate", sf[i].path, NULL);
    }
}

static void exec_sql(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

static bool copy_file(const char *from, const char *to, long max_bytes)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    bool ok = in && out;
    int ch;
    for (long n = 0; ok && (max_bytes < 0 || n < max_bytes) && (ch = fgetc(in)) != EOF; n++)
        fputc(ch, out);
    if (in)
        fclose(in);
    if (out)
        ok = fclose(out) == 0 && ok;
    return ok;
}

#define SEARCH(c, store, ...)                                                                      \
    set_args(c, "search", "--replay", recording, "--store", store, "--ranks", "2",                 \
             "--ranks-per-gpu", "2", "--colls", "allreduce", "--max-bytes", "64K", "--channels",   \
             "nccl", "--cycles", "2", ##__VA_ARGS__, NULL)

static char *tmp_path(const char *name)
{
    static char buf[8][4300];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, 4300, "%s/%s", tmp, name);
    return p;
}

static void stores(void)
{
    char from[4200];
    snprintf(from, sizeof from, "%s/tests/data/h200/search-2ranks.db.gz", repo);
    snprintf(recording, sizeof recording, "%s/recording.db", tmp);
    assert_true(recorded_copy(from, recording));
    /* a small good store to spoil in different ways */
    char *good = tmp_path("good.db");
    bad_case probe = {0};
    SEARCH(&probe, good);
    ct_result r = ct_run((const char *const *)probe.argv);
    assert_int_equal(r.status, 0);
    ct_result_free(&r);
    for (int i = 0; probe.argv[i]; i++)
        free(probe.argv[i]);

    bad_case *c;
    char *p = tmp_path("newer.db");
    assert_true(copy_file(good, p, -1));
    exec_sql(p, "PRAGMA user_version = 99");
    c = add("stores", "store from a newer schema", "`PRAGMA user_version = 99`",
            "written by a newer ccltune (schema 99");
    SEARCH(c, p);
    p = tmp_path("table.yaml");
    assert_true(sf_write(p, 0644));
    c = add("stores", "a table given as the store", "a YAML file", "is not a ccltune store");
    SEARCH(c, p);
    p = tmp_path("foreign.db");
    exec_sql(p, "CREATE TABLE recipes (name TEXT)");
    c = add("stores", "another application's SQLite file", "a foreign SQLite database",
            "not a ccltune store");
    SEARCH(c, p);
    p = tmp_path("dump.db");
    assert_true(copy_file(good, p, -1));
    exec_sql(p, "PRAGMA user_version = 0; PRAGMA application_id = 0");
    c = add("stores", "store restored from an SQL dump", "our tables, no header marks",
            "header is incomplete");
    SEARCH(c, p);
    p = tmp_path("truncated.db");
    assert_true(copy_file(good, p, 8192));
    c = add("stores", "truncated store file", "the first 8 KiB of a store", "store");
    SEARCH(c, p);
    static char cut[4300], cut_out[4300], packed[4300]; /* tmp_path's buffers rotate */
    snprintf(cut, sizeof cut, "%s/cut.db.gz", tmp);
    snprintf(cut_out, sizeof cut_out, "%s/cut.yaml", tmp);
    snprintf(packed, sizeof packed, "%s/packed.db.gz", tmp);
    assert_true(copy_file(from, cut, 4096));
    c = add("stores", "cut-short gzipped store", "the first 4 KiB of a `.db.gz`",
            "cannot be decompressed");
    set_args(c, "fit", "--store", cut, "-o", cut_out, NULL);
    p = packed;
    assert_true(copy_file(from, p, -1));
    c = add("stores", "recording into a gzipped store", "`--store NAME.db.gz`",
            "it can be read but not recorded into");
    SEARCH(c, p);
    p = tmp_path("a-folder.db");
    assert_int_equal(mkdir(p, 0755), 0);
    c = add("stores", "a folder given as the store", "a directory",
            "is a folder, not a store file");
    SEARCH(c, p);
    static char links[4300], links_db[4300]; /* not tmp_path's: `good` is one of those */
    snprintf(links, sizeof links, "%s/links.json", tmp);
    snprintf(links_db, sizeof links_db, "%s/links.db", tmp);
    FILE *lf = fopen(links, "w");
    assert_non_null(lf);
    fputs("{\"link_matrix\": {\"host\": [{\"gpu\": 0, \"h2d_gbps\": -5}], \"pairs\": []}}\n", lf);
    assert_int_equal(fclose(lf), 0);
    c = add("stores", "link matrix with a negative figure", "`--links-from` JSON, `h2d_gbps: -5`",
            "links.json:1:50:");
    SEARCH(c, links_db, "--links-from", links);
    c = add("stores", "store in a missing folder", "`$TMP/missing/store.db`", "does not exist");
    SEARCH(c, tmp_path("missing/store.db"));
    c = add("stores", "resume of a run the store lacks", "`--resume 99`", "99");
    SEARCH(c, good, "--resume", "99");
    c = add("stores", "resume with a different plan", "`--resume 1 --max-bytes 1M`", "plan");
    set_args(c, "search", "--replay", recording, "--store", good, "--ranks", "2", "--ranks-per-gpu",
             "2", "--colls", "allreduce", "--max-bytes", "1M", "--channels", "nccl", "--cycles",
             "2", "--resume", "1", NULL);
    static char preload[4300], fault[4300];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", getenv("CCT_FAULT_LIB"));
    snprintf(fault, sizeof fault, "CCT_FAULT_PATH=%s", tmp_path("full.db"));
    c = add("stores", "disk full while creating the store", "ENOSPC on every write",
            "disk is full");
    SEARCH(c, tmp_path("full.db"));
    c->env[0] = preload;
    c->env[1] = fault;
    c->env[2] = "CCT_FAULT_ENOSPC_AFTER=0";
    /* under ASan the preloaded fault library comes before ASan's runtime: let it */
    static char asan[4300];
    const char *old_asan = getenv("ASAN_OPTIONS");
    snprintf(asan, sizeof asan, "ASAN_OPTIONS=%s%sverify_asan_link_order=0",
             old_asan ? old_asan : "", old_asan && *old_asan ? ":" : "");
    c->env[3] = asan;
    c = add("stores", "replay of a file that is no store", "`--replay` a YAML file",
            "is not a ccltune store");
    set_args(c, "search", "--replay", tmp_path("table.yaml"), "--store", tmp_path("r.db"),
             "--ranks", "2", NULL);
    c = add("stores", "import into a newer store", "`ccltune import --store` newer schema",
            "newer ccltune");
    char log[4300];
    snprintf(log, sizeof log, "%s/tests/data/nccl-tests/allreduce_ring_simple_2.19.txt", repo);
    set_args(c, "import", "--store", tmp_path("newer.db"), log, NULL);
}

/* Bad flags: (class, expected text, argv...). */
static void flag(const char *cls, const char *expect, ...)
{
    bad_case *c = add("flags", cls, "", expect);
    va_list ap;
    va_start(ap, expect);
    int n = 0;
    char input[512] = "`ccltune";
    for (const char *a = va_arg(ap, const char *); a && n < MAX_ARGS - 1;
         a = va_arg(ap, const char *)) {
        c->argv[n++] = strdup(a);
        size_t l = strlen(input);
        if (strncmp(a, tmp, strlen(tmp)) == 0)
            a = "...";
        else if (strncmp(a, repo, strlen(repo)) == 0 && a[strlen(repo)] == '/')
            a += strlen(repo) + 1; /* repository files by their relative name */
        snprintf(input + l, sizeof input - l, " %s", a);
    }
    va_end(ap);
    size_t l = strlen(input);
    snprintf(input + l, sizeof input - l, "`");
    snprintf(c->input, sizeof c->input, "%s", input);
}

static void flags(void)
{
    char table[4300];
    snprintf(table, sizeof table, "%s/tests/data/tables/minimal.yaml", repo);
    const char *st = tmp_path("flags.db");
    flag("unknown command", "'frobnicate' is not a ccltune command", "frobnicate", NULL);
    flag("unknown option", "--frobnicate", "search", "--frobnicate", NULL);
    flag("channel count out of range", "'65' is not a channel count", "search", "--replay",
         recording, "--store", st, "--channels", "65", NULL);
    flag("unknown collective", "alltoall", "search", "--replay", recording, "--store", st,
         "--colls", "alltoall", NULL);
    flag("unknown algorithm", "ringg", "search", "--replay", recording, "--store", st, "--algos",
         "ringg", NULL);
    flag("unknown protocol", "ll256", "search", "--replay", recording, "--store", st, "--protos",
         "ll256", NULL);
    flag("size with a bad suffix", "1Q", "search", "--replay", recording, "--store", st,
         "--max-bytes", "1Q", NULL);
    flag("smallest size above the largest", "--min-bytes", "search", "--replay", recording,
         "--store", st, "--min-bytes", "1M", "--max-bytes", "1K", NULL);
    flag("size step of 1", "--factor", "search", "--replay", recording, "--store", st, "--factor",
         "1", NULL);
    flag("zero cycles", "--cycles", "search", "--replay", recording, "--store", st, "--cycles", "0",
         NULL);
    flag("negative CV threshold", "--cv", "search", "--replay", recording, "--store", st, "--cv",
         "-1", NULL);
    flag("zero ranks", "--ranks", "search", "--replay", recording, "--store", st, "--ranks", "0",
         NULL);
    flag("run id that is no number", "--resume", "search", "--replay", recording, "--store", st,
         "--resume", "last", NULL);
    flag("recording that does not exist", "does not exist", "search", "--replay",
         tmp_path("no-such.db"), "--store", st, NULL);
    flag("validate without files", "no table given", "validate", NULL);
    flag("explain: unknown collective", "nope", "explain", table, "--coll", "nope", "--ranks", "2",
         NULL);
    flag("explain: ranks missing", "--ranks", "explain", table, "--coll", "allreduce", NULL);
    flag("explain: no such topology", "ranks", "explain", table, "--coll", "allreduce", "--ranks",
         "3", NULL);
    flag("bench: bad --rules", "--rules: 'maybe' is not on or off", "bench", "--rules", "maybe",
         table, NULL);
    flag("bench: --rules off without constants", "has no nccl_constants", "bench", "--rules", "off",
         table, NULL);
    flag("import: unknown format", "xml", "import", "--format", "xml", "--dry-run", table, NULL);
    flag("import: unknown collective", "nope", "import", "--coll", "nope", "--dry-run", table,
         NULL);
    flag("import: no files", "no file given", "import", "--dry-run", NULL);
    flag("export: unknown format", "yaml", "export", table, "--format", "yaml", NULL);
    flag("diff: one table", "expected two tables", "diff", table, NULL);
    flag("fit: NCCL versions range backwards", "ends below where it starts", "fit", "--store",
         recording, "--nccl-versions", "2.30..2.28", NULL);
    flag("tune: NCCL version with a wildcard", "'2.*' is not an NCCL version", "tune", "--recorded",
         recording, "--no-plots", "--nccl-versions", "2.*", NULL);
    char bad_previous[4300];
    snprintf(bad_previous, sizeof bad_previous, "%s/tests/bad_tables/channels-negative.yaml", repo);
    flag("fit: previous table that does not load", "--previous: ", "fit", "--store", recording,
         "--previous", bad_previous, NULL);
    flag("fit: previous table with the argmin", "exclude each other", "fit", "--store", recording,
         "--previous", table, "--argmin", NULL);
    flag("tune: previous table that does not exist", "--previous: ", "tune", "--recorded",
         recording, "--no-plots", "--previous", tmp_path("no-such.yaml"), NULL);
}

static void run_case(bad_case *c)
{
    /* set the case's variables, then put back what was there (ASAN_OPTIONS from CI) */
    char *saved[6] = {NULL};
    for (int i = 0; c->env[i]; i++) {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(c->env[i], "="), c->env[i]);
        const char *old = getenv(name);
        saved[i] = old ? strdup(old) : NULL;
        putenv((char *)c->env[i]);
    }
    ct_result r = ct_run((const char *const *)c->argv);
    for (int i = 0; c->env[i]; i++) {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(c->env[i], "="), c->env[i]);
        if (saved[i])
            setenv(name, saved[i], 1);
        else
            unsetenv(name);
        free(saved[i]);
    }
    c->status = r.status;
    /* the line that holds the expected text, else the first line */
    const char *err = r.err ? r.err : "", *line = err;
    for (const char *p = err; *p;) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (memmem(p, n, c->expect, strlen(c->expect))) {
            line = p;
            break;
        }
        if (!end)
            break;
        p = end + 1;
    }
    size_t len = strcspn(line, "\n");
    /* normalise: repository paths relative, the scratch folder as $TMP */
    char raw[2048], out[2048];
    snprintf(raw, sizeof raw, "%.*s", (int)len, line);
    size_t o = 0;
    for (const char *p = raw; *p && o + 8 < sizeof out;) {
        if (strncmp(p, tmp, strlen(tmp)) == 0) {
            o += (size_t)snprintf(out + o, sizeof out - o, "$TMP");
            p += strlen(tmp);
        } else if (strncmp(p, repo, strlen(repo)) == 0 && p[strlen(repo)] == '/') {
            p += strlen(repo) + 1;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
    snprintf(c->message, sizeof c->message, "%s", out);
    ct_result_free(&r);
}

/* Returns 0 when the case failed cleanly with a clear message. */
static int judge(const bad_case *c)
{
    if (c->status != 1 && c->status != 2) {
        fprintf(stderr, "%s (%s): exit status %d%s\n", c->cls, c->input, c->status,
                c->status >= 128 ? " (killed by a signal: a crash)" : "");
        return 1;
    }
    /* sidecars name other lines of a log by base name; the command prints the path */
    char plain[2048];
    snprintf(plain, sizeof plain, "%s", c->message);
    for (char *d; (d = strstr(plain, "tests/bad_logs/")) != NULL;)
        memmove(d, d + 15, strlen(d + 15) + 1);
    if (!strstr(c->message, c->expect) && !strstr(plain, c->expect)) {
        fprintf(stderr, "%s (%s): message lacks \"%s\": %s\n", c->cls, c->input, c->expect,
                c->message);
        return 1;
    }
    if (c->positioned) {
        /* somewhere: FILE:LINE:COL: with 1-based numbers (the CLI may prefix its name) */
        bool found = false;
        unsigned l, col;
        for (const char *q = strchr(c->message, ':'); q && !found; q = strchr(q + 1, ':'))
            found = q > c->message && sscanf(q, ":%u:%u: ", &l, &col) == 2 && l > 0 && col > 0;
        if (!found) {
            fprintf(stderr, "%s (%s): no FILE:LINE:COL in: %s\n", c->cls, c->input, c->message);
            return 1;
        }
    }
    return 0;
}

static void md_cell(FILE *f, const char *text, bool code)
{
    if (code)
        fputc('`', f);
    for (const char *p = text; *p; p++) {
        if (*p == '|')
            fputs("\\|", f);
        else if (*p == '`' && code)
            fputc('\'', f);
        else
            fputc(*p, f);
    }
    if (code)
        fputc('`', f);
}

/* How a section is shown: the text its intro already says is cut from each message. */
typedef enum { AS_LIST, AS_CASES, AS_COMMANDS } layout;

static const struct {
    const char *key, *title, *intro;
    layout how;
    const char *cut[2]; /* removed wherever they occur in a message */
} sections[] = {
    {"tables",
     "Malformed tables",
     "`ccltune validate FILE` (the plugin logs the same sentence as its one WARN, and so do "
     "`explain`, `export` and `diff`). Corpus: `tests/bad_tables/`, each file's `# expect:` "
     "line; messages below omit the folder.",
     AS_LIST,
     {"tests/bad_tables/", NULL}},
    {"unsafe",
     "Unsafe table files",
     "The safe-loading rules (docs/plugin.md, \"Safe loading\"), files made by "
     "`tests/safe_file_cases.h` in `$TMP/unsafe/` (omitted below); `ccltune validate FILE`.",
     AS_LIST,
     {"$TMP/unsafe/", NULL}},
    {"logs",
     "nccl-tests logs and tuner CSV",
     "`ccltune import --dry-run [args] FILE`, each message after `ccltune import: error: "
     "tests/bad_logs/`. Corpus: `tests/bad_logs/`, each file's `.expect` sidecar.",
     AS_LIST,
     {"ccltune import: error: ", "tests/bad_logs/"}},
    {"stores",
     "Measurement stores",
     "`ccltune search --replay ... --store FILE` unless the case says otherwise, messages after "
     "`ccltune search: error: `; stores made by this test from a small good one.",
     AS_CASES,
     {"ccltune search: error: ", NULL}},
    {"flags",
     "Command-line flags",
     "Usage errors exit 2; errors about the input exit 1. Commands are shown without "
     "`ccltune`, and `search` ones also pass `--replay REC --store DB`; messages after "
     "`ccltune COMMAND: error: `.",
     AS_COMMANDS,
     {NULL, NULL}},
};

/* text with every occurrence of each cut removed */
static void cut_all(char *text, const char *const cut[], int n)
{
    for (int k = 0; k < n; k++) {
        if (!cut[k] || !*cut[k])
            continue;
        size_t l = strlen(cut[k]);
        for (char *d; (d = strstr(text, cut[k])) != NULL;)
            memmove(d, d + l, strlen(d + l) + 1);
    }
}

/* the exit status every case of the section shares, or -1 */
static int common_status(const char *key)
{
    int st = -1;
    for (int i = 0; i < n_cases; i++) {
        if (strcmp(cases[i].section, key) != 0)
            continue;
        if (st >= 0 && cases[i].status != st)
            return -1;
        st = cases[i].status;
    }
    return st;
}

/* "`ccltune search --replay ... --store ... --cv -1`" -> "search --cv -1" */
static void short_command(const char *input, char *out, size_t len)
{
    snprintf(out, len, "%s", input);
    const char *const noise[] = {"`", "ccltune ", " --replay ... --store ..."};
    cut_all(out, noise, 3);
}

static void render_case(FILE *f, const bad_case *c, layout how, const char *const cut[],
                        bool exit_col)
{
    char msg[2048], first[600];
    snprintf(msg, sizeof msg, "%s", c->message);
    cut_all(msg, cut, 2);
    if (how == AS_LIST) {
        /* the message names the file; the input is named only where it does not */
        snprintf(first, sizeof first, "%s", c->input + (c->input[0] == '`'));
        first[strcspn(first, "`")] = '\0';
        cut_all(first, cut, 2);
        fputs("- ", f);
        if (strncmp(msg, first, strlen(first)) != 0) {
            md_cell(f, first, true);
            fputs(": ", f);
        }
        md_cell(f, msg, true);
        const char *args = strstr(c->input, "` `");
        if (args)
            fprintf(f, " (with %s)", args + 2);
        if (exit_col)
            fprintf(f, ", exit %d", c->status);
        fputc('\n', f);
        return;
    }
    fputs("| ", f);
    if (how == AS_COMMANDS) {
        char cmd[512], prefix[128];
        short_command(c->input, cmd, sizeof cmd);
        md_cell(f, cmd, true);
        snprintf(prefix, sizeof prefix, "ccltune %s: error: ", c->argv[0]);
        const char *const mine[] = {prefix};
        cut_all(msg, mine, 1);
    } else {
        md_cell(f, c->cls, false);
        if (c->input[0]) {
            fputs(" (", f);
            md_cell(f, c->input, false);
            fputs(")", f);
        }
    }
    if (exit_col)
        fprintf(f, " | %d", c->status);
    fputs(" | ", f);
    md_cell(f, msg, true);
    fputs(" |\n", f);
}

static void render(FILE *f)
{
    fprintf(f,
            "# Bad input catalogue\n\n"
            "Every class of malformed input ccltune is tested with, and the message it gets. "
            "Generated by\n"
            "`tests/test_bad_input.c` (suite `badinput`): each case runs through `ccltune`, "
            "must exit 1 or 2\n"
            "(never a crash) with the expected text (FILE:LINE:COLUMN for tables and logs), "
            "and the test fails\n"
            "when this file no longer matches. Regenerate: "
            "`CCT_UPDATE_CATALOGUE=1 meson test -C build bad_input`.\n\n"
            "%d classes: ",
            n_cases);
    for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++) {
        int k = 0;
        for (int i = 0; i < n_cases; i++)
            k += strcmp(cases[i].section, sections[s].key) == 0;
        fprintf(f, "%s%d %s", s ? ", " : "", k, sections[s].title);
    }
    fprintf(f, ". `$TMP` is the test's scratch folder.\n");
    for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++) {
        int st = common_status(sections[s].key);
        layout how = sections[s].how;
        fprintf(f, "\n## %s\n\n%s", sections[s].title, sections[s].intro);
        if (st >= 0)
            fprintf(f, " All exit %d.", st);
        fputs("\n\n", f);
        if (how == AS_CASES)
            fputs(st >= 0 ? "| case | message |\n| --- | --- |\n"
                          : "| case | exit | message |\n| --- | --- | --- |\n",
                  f);
        else if (how == AS_COMMANDS)
            fputs(st >= 0 ? "| command | message |\n| --- | --- |\n"
                          : "| command | exit | message |\n| --- | --- | --- |\n",
                  f);
        for (int i = 0; i < n_cases; i++)
            if (strcmp(cases[i].section, sections[s].key) == 0)
                render_case(f, &cases[i], how, sections[s].cut, st < 0);
    }
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
    if (buf)
        buf[got] = '\0';
    fclose(f);
    return buf;
}

static void catalogue(void **state)
{
    (void)state;
    tables();
    unsafe_files();
    logs();
    stores();
    flags();
    int bad = 0;
    for (int i = 0; i < n_cases; i++) {
        run_case(&cases[i]);
        bad += judge(&cases[i]);
    }
    print_message("%d classes of bad input, %d without a clean, clear refusal\n", n_cases, bad);
    assert_int_equal(bad, 0);
    assert_true(n_cases >= 30);

    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_non_null(m);
    render(m);
    fclose(m);
    char doc[4300];
    snprintf(doc, sizeof doc, "%s/docs/bad-input.md", repo);
    const char *update = getenv("CCT_UPDATE_CATALOGUE");
    if (update && strcmp(update, "1") == 0) {
        FILE *f = fopen(doc, "w");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
        print_message("wrote %s\n", doc);
    } else if (incomplete) {
        print_message("some cases need root here: docs/bad-input.md not compared\n");
    } else {
        char *have = slurp(doc);
        if (!have || strcmp(have, text) != 0) {
            char fresh[4300];
            snprintf(fresh, sizeof fresh, "%s/bad-input.md", getenv("CCT_TEST_BUILDDIR"));
            FILE *f = fopen(fresh, "w");
            if (f) {
                fputs(text, f);
                fclose(f);
            }
            fail_msg("docs/bad-input.md differs from what the commands print now (new text in "
                     "%s); if the change is intended run CCT_UPDATE_CATALOGUE=1 meson test -C "
                     "BUILD bad_input",
                     fresh);
        }
        free(have);
    }
    free(text);
}

static int setup(void **state)
{
    (void)state;
    const char *src = getenv("CCT_TEST_SRCDIR");
    char *r = src ? realpath(src, NULL) : NULL;
    if (!r)
        return -1;
    snprintf(repo, sizeof repo, "%s", r);
    free(r);
    char *slash = strrchr(repo, '/'); /* CCT_TEST_SRCDIR is REPO/tests */
    if (!slash)
        return -1;
    *slash = '\0';
    tmp = ct_tmpdir("bad-input");
    return tmp && chmod(tmp, 0755) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < n_cases; i++)
        for (int k = 0; cases[i].argv[k]; k++)
            free(cases[i].argv[k]);
    ct_rm_rf(tmp);
    free(tmp);
    return 0;
}

int main(void)
{
    if (!fixture_mirror()) /* tables read from private 0644 copies */
        return 1;
    alarm(600); /* a FIFO or a hang must fail the test, not stall CI */
    const struct CMUnitTest tests[] = {cmocka_unit_test(catalogue)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
