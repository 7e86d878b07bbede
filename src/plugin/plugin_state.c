/*
 * plugin_state.c - the process-wide half of the plugin: the table, parsed once.
 *
 * Jobs create hundreds of communicators, often from several threads; all their contexts
 * share one table parsed at the first init (pthread_once) and never modified afterwards,
 * so lookups need no locks.  The environment that shapes every decision (table path,
 * CCLTUNE_STRICT, NCCL_DEBUG, NCCL_ALGO/PROTO, NCCL_HOSTID, NCCL_LL128_C2C) and the NCCL
 * version are read at the same moment, once.  The table path is CCLTUNE_TABLE, else
 * NCCL_TUNER_CONFIG_FILE when it names a .yaml/.yml file (that variable also serves other
 * tuners' formats); the file is read under the safe-loading rules (cct_safe_file.h) and
 * the search index (plugin_index.c: sections by communicator shape, rules by size) is built
 * here too, so a communicator's init costs a binary search whatever the table holds.
 *
 * CCLTUNE_TABLE may name a folder instead (a fleet: one table per kind of box, cct_fleet.h):
 * every *.yaml in it is read the same way, once, and each communicator's init picks the one
 * that matches (plugin_context.c); a file that cannot be used is skipped and reported.
 *
 * NCCL dlcloses the plugin when its last communicator is destroyed; the destructor frees
 * the table then, unless contexts are still alive (a process exiting without destroying its
 * communicators): the memory stays with the exiting process rather than risk a use-after-free.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cct_fleet.h"
#include "cct_safe_file.h"
#include "plugin_internal.h"

static cct_pstate state;
static pthread_once_t state_once = PTHREAD_ONCE_INIT;
static atomic_int live_contexts;

static bool is_yaml_path(const char *path)
{
    const char *dot = strrchr(path, '.');
    return dot && (strcasecmp(dot, ".yaml") == 0 || strcasecmp(dot, ".yml") == 0);
}

static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return fallback;
    char *end;
    long x = strtol(v, &end, 0);
    return (*end == '\0') ? (int)x : fallback;
}

static void load_table(cct_pstate *ps)
{
    const char *path = getenv("CCLTUNE_TABLE");
    ps->path_from = "CCLTUNE_TABLE";
    if (!path || !*path) {
        path = getenv("NCCL_TUNER_CONFIG_FILE");
        ps->path_from = "NCCL_TUNER_CONFIG_FILE";
        if (path && !is_yaml_path(path))
            path = NULL;
    }
    if (!path || !*path) {
        ps->path_from = NULL;
        ps->status = CCT_TABLE_NONE;
        cct_error_set(&ps->err, CCT_ENOTFOUND,
                      "no table configured (set CCLTUNE_TABLE=/path/to/table.yaml)");
        return;
    }
    if (strlen(path) >= sizeof ps->path) {
        ps->status = CCT_TABLE_FAILED;
        cct_error_set(&ps->err, CCT_EINVAL, "table path in %s is too long", ps->path_from);
        return;
    }
    strcpy(ps->path, path);
    if (cct_fleet_is_folder(ps->path)) {
        cct_pstate_load_folder(ps);
        return;
    }
    /* the safe-loading rules (cct_safe_file.h, docs/plugin.md): a table steers every job
     * that loads it, so one others could have written is refused like a malformed one */
    cct_safe_rules rules = cct_safe_rules_default(CCT_TABLE_MAX_FILE_BYTES);
    char *data = NULL;
    size_t len = 0;
    cct_status st = cct_safe_read(ps->path, &rules, &data, &len, &ps->err, &ps->waived);
    if (st == CCT_OK)
        st = cct_table_load_buffer(data, len, ps->path, &ps->table, &ps->err);
    free(data);
    if (st != CCT_OK) {
        ps->status = CCT_TABLE_FAILED;
        if (!ps->err.msg[0])
            cct_error_set(&ps->err, st, "%s: %s", ps->path, cct_strerror(st));
        return;
    }
    ps->status = cct_pstate_index_table(ps) == CCT_OK ? CCT_TABLE_OK : CCT_TABLE_FAILED;
}

cct_status cct_pstate_index_table(cct_pstate *ps)
{
    ps->n_rules = 0;
    for (size_t i = 0; i < ps->table.n_sections; i++)
        ps->n_rules += ps->table.sections[i].n_rules;
    if (cct_table_index_build(&ps->table, &ps->index) != CCT_OK) {
        cct_table_destroy(&ps->table);
        return cct_error_set(&ps->err, CCT_ENOMEM, "%s: out of memory indexing the table",
                             ps->path);
    }
    return CCT_OK;
}

/* Read and index one file of the folder; false (and err) when it cannot be used. */
static bool load_one(const char *path, cct_ptable *t, cct_error *err)
{
    cct_safe_rules rules = cct_safe_rules_default(CCT_TABLE_MAX_FILE_BYTES);
    char *data = NULL;
    size_t len = 0;
    cct_table_init(&t->table);
    cct_status st = cct_safe_read(path, &rules, &data, &len, err, &t->waived);
    if (st == CCT_OK)
        st = cct_table_load_buffer(data, len, path, &t->table, err);
    free(data);
    if (st == CCT_OK && cct_table_index_build(&t->table, &t->index) != CCT_OK) {
        cct_table_destroy(&t->table);
        st = cct_error_set(err, CCT_ENOMEM, "%s: out of memory indexing the table", path);
    }
    if (st != CCT_OK) {
        if (!err->msg[0])
            cct_error_set(err, st, "%s: %s", path, cct_strerror(st));
        return false;
    }
    t->n_rules = 0;
    for (size_t i = 0; i < t->table.n_sections; i++)
        t->n_rules += t->table.sections[i].n_rules;
    return true;
}

void cct_pstate_load_folder(cct_pstate *ps)
{
    ps->folder = true;
    char **names = NULL;
    size_t n = 0;
    if (cct_fleet_list(ps->path, &names, &n, &ps->err) != CCT_OK) {
        ps->status = CCT_TABLE_FAILED;
        return;
    }
    ps->tables = calloc(n ? n : 1, sizeof *ps->tables);
    ps->skipped = calloc(n ? n : 1, sizeof *ps->skipped);
    if (!ps->tables || !ps->skipped) {
        cct_fleet_list_free(names, n);
        ps->status = CCT_TABLE_FAILED;
        cct_error_set(&ps->err, CCT_ENOMEM, "%s: out of memory loading the folder", ps->path);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        cct_ptable *t = &ps->tables[ps->n_tables];
        size_t len = strlen(ps->path) + strlen(names[i]) + 2;
        t->path = malloc(len);
        cct_error err = {0};
        if (!t->path) {
            cct_error_set(&ps->skipped[ps->n_skipped++], CCT_ENOMEM, "%s/%s: out of memory",
                          ps->path, names[i]);
            continue;
        }
        snprintf(t->path, len, "%s/%s", ps->path, names[i]);
        t->name = t->path + strlen(ps->path) + 1;
        if (load_one(t->path, t, &err)) {
            ps->n_tables++;
        } else {
            ps->skipped[ps->n_skipped++] = err;
            free(t->path);
            memset(t, 0, sizeof *t);
        }
    }
    cct_fleet_list_free(names, n);
    if (ps->n_tables > 0) {
        ps->status = CCT_TABLE_OK;
        return;
    }
    ps->status = CCT_TABLE_FAILED;
    if (n == 0)
        cct_error_set(&ps->err, CCT_ENOTFOUND, "%s: folder holds no *.yaml table", ps->path);
    else
        cct_error_set(&ps->err, CCT_EINVAL, "%s: none of the folder's %zu tables can be used",
                      ps->path, n);
}

void cct_pstate_free_folder(cct_pstate *ps)
{
    for (size_t i = 0; i < ps->n_tables; i++) {
        cct_table_index_free(&ps->tables[i].index);
        cct_table_destroy(&ps->tables[i].table);
        free(ps->tables[i].path);
    }
    free(ps->tables);
    free(ps->skipped);
    ps->tables = NULL;
    ps->skipped = NULL;
    ps->n_tables = ps->n_skipped = 0;
}

void cct_pstate_free_table(cct_pstate *ps)
{
    cct_table_index_free(&ps->index);
    cct_table_destroy(&ps->table);
}

static void load_once(void)
{
    cct_pstate *ps = &state;
    cct_table_init(&ps->table);
    ps->strict = cct_env_flag("CCLTUNE_STRICT");
    ps->rules_off = cct_env_off("CCLTUNE_RULES");
    ps->constants_off = cct_env_off("CCLTUNE_CONSTANTS");
    const char *dbg = getenv("NCCL_DEBUG");
    ps->trace = dbg && strcasecmp(dbg, "TRACE") == 0;
    ps->nccl_version = cct_device_nccl_version();
    ps->rccl = cct_device_is_rccl(ps->rccl_why, sizeof ps->rccl_why);
    ps->hostid_set = getenv("NCCL_HOSTID") != NULL;
    ps->ll128_c2c = env_int("NCCL_LL128_C2C", -1);
    ps->proto_env_set = getenv("NCCL_PROTO") != NULL;
    cct_env_mask_parse(getenv("NCCL_ALGO"), getenv("NCCL_PROTO"), &ps->env);
    load_table(ps);
    const char *force = getenv("CCLTUNE_FORCE");
    if (force) {
        ps->force_set = cct_force_parse(force, &ps->force, &ps->force_err) == CCT_OK;
        ps->force_env_bad = !ps->force_set;
    }
    cct_control_from_env(ps);
}

const cct_pstate *cct_pstate_get(void)
{
    pthread_once(&state_once, load_once);
    return &state;
}

void cct_pstate_ctx_add(int delta)
{
    atomic_fetch_add(&live_contexts, delta);
}

__attribute__((destructor)) static void cct_pstate_unload(void)
{
    if (atomic_load(&live_contexts) == 0) {
        cct_pstate_free_table(&state);
        cct_pstate_free_folder(&state);
    }
}
