/*
 * cct_nccl_env.c - NCCL environment settings seen in a benchmark log, resolved into the
 * configuration the benchmark measured (see cct_nccl_env.h).
 *
 * NCCL_ALGO/NCCL_PROTO are evaluated the way NCCL's parseList() does (entries separated
 * by ';', an optional "function:" prefix, ',' lists, a leading '^' to exclude), for the
 * collective of the run only, so "ring;allgather:tree" forces Ring for an allreduce log.
 * Channel counts are only known when NCCL_MIN_NCHANNELS and NCCL_MAX_NCHANNELS pin the
 * same number; a single bound leaves NCCL free below or above it, which no cct_config can
 * express, so it is refused rather than recorded as "NCCL's count".
 */
#include "cct_nccl_env.h"

#include "cct_facts.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const env_keys[CCT_ENV_COUNT] = {
    "NCCL_ALGO",           "NCCL_PROTO",         "NCCL_BUFFSIZE",     "NCCL_LL_BUFFSIZE",
    "NCCL_LL128_BUFFSIZE", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS"};

void cct_nccl_env_init(cct_nccl_env *env)
{
    memset(env, 0, sizeof *env);
}

static bool numeric_key(int k)
{
    return k != CCT_ENV_ALGO && k != CCT_ENV_PROTO;
}

/* Copy value without surrounding blanks; numeric parameters lose the '.' that NCCL's
 * "set by environment to %lld." message appends. */
static bool clean_value(const char *value, bool numeric, char *out, size_t cap)
{
    while (*value == ' ' || *value == '\t')
        value++;
    size_t n = strlen(value);
    while (n > 0 && (value[n - 1] == ' ' || value[n - 1] == '\t'))
        n--;
    if (numeric && n > 0 && value[n - 1] == '.')
        n--;
    if (n >= cap)
        return false;
    memcpy(out, value, n);
    out[n] = '\0';
    return true;
}

static cct_status record_one(cct_nccl_env *env, int k, const char *clean, const char *name,
                             unsigned line, unsigned col, cct_error *err)
{
    cct_nccl_env_value *v = &env->v[k];
    if (v->set) {
        if (strcmp(v->value, clean) == 0)
            return CCT_OK;
        return cct_error_at(err, CCT_EINVAL, name, line, col,
                            "%s=%s here but %s=%s at line %u: the processes of one run disagree",
                            env_keys[k], clean, env_keys[k], v->value, v->line);
    }
    v->set = true;
    snprintf(v->value, sizeof v->value, "%s", clean);
    v->line = line;
    v->col = col;
    return CCT_OK;
}

/* The slot of variable key in env->v; -1 for one the importer does not read. */
static int key_index(const char *key)
{
    for (int i = 0; i < CCT_ENV_COUNT; i++)
        if (strcmp(key, env_keys[i]) == 0)
            return i;
    return -1;
}

cct_status cct_nccl_env_record(cct_nccl_env *env, const char *key, const char *value,
                               const char *name, unsigned line, unsigned col, cct_error *err)
{
    if (strcmp(key, "NCCL_HOSTID") == 0) {
        env->hostid = true;
        return CCT_OK;
    }
    int k = key_index(key);
    if (k < 0)
        return CCT_OK;
    char clean[CCT_ENV_VALUE_MAX];
    if (!clean_value(value, numeric_key(k), clean, sizeof clean))
        return cct_error_at(err, CCT_EINVAL, name, line, col, "%s value longer than %d bytes", key,
                            CCT_ENV_VALUE_MAX - 1);
    return record_one(env, k, clean, name, line, col, err);
}

cct_status cct_nccl_env_merge(cct_nccl_env *dst, const cct_nccl_env *src, const char *name,
                              cct_error *err)
{
    dst->hostid |= src->hostid;
    for (int k = 0; k < CCT_ENV_COUNT; k++) {
        const cct_nccl_env_value *v = &src->v[k];
        if (!v->set)
            continue;
        cct_status rc = record_one(dst, k, v->value, name, v->line, v->col, err);
        if (rc != CCT_OK)
            return rc;
    }
    return CCT_OK;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

enum { LIST_DEFAULT, LIST_FORCED, LIST_RESTRICTED };

/* Evaluate NCCL's list syntax for one collective.  *kind says what it amounts to and
 * *index is the forced element for LIST_FORCED. */
static cct_status eval_list(const cct_nccl_env_value *v, const char *key, int coll,
                            int (*lookup)(const char *), int n, const char *what, const char *name,
                            int *kind, int *index, cct_error *err)
{
    unsigned all = (1u << n) - 1, mask = all;
    char buf[CCT_ENV_VALUE_MAX];
    snprintf(buf, sizeof buf, "%s", v->value);
    char *save_entry = NULL;
    for (char *entry = strtok_r(buf, ";", &save_entry); entry;
         entry = strtok_r(NULL, ";", &save_entry)) {
        char *list = entry;
        bool applies = true;
        char *colon = strchr(entry, ':');
        if (colon) {
            *colon = '\0';
            applies = cct_coll_from_name(trim(entry)) == coll;
            list = colon + 1;
        }
        list = trim(list);
        bool exclude = list[0] == '^';
        if (exclude)
            list++;
        unsigned selected = 0;
        char *save_elem = NULL;
        for (char *elem = strtok_r(list, ",", &save_elem); elem;
             elem = strtok_r(NULL, ",", &save_elem)) {
            int i = lookup(trim(elem));
            if (i < 0 || i >= n)
                return cct_error_at(err, CCT_EINVAL, name, v->line, v->col,
                                    "%s=%s names an unknown %s '%s'", key, v->value, what,
                                    trim(elem));
            selected |= 1u << i;
        }
        if (applies)
            mask = exclude ? all & ~selected : selected;
    }
    if (mask == 0)
        return cct_error_at(err, CCT_EINVAL, name, v->line, v->col, "%s=%s enables no %s for %s",
                            key, v->value, what, cct_coll_name(coll));
    if (mask == all) {
        *kind = LIST_DEFAULT;
    } else if ((mask & (mask - 1)) == 0) {
        *kind = LIST_FORCED;
        *index = __builtin_ctz(mask);
    } else {
        *kind = LIST_RESTRICTED;
    }
    return CCT_OK;
}

static const char *choice_name(int v, const char *(*namer)(int))
{
    return v == CCT_DEFAULT ? "default" : namer(v);
}

/* Resolve one of algorithm/protocol from the log's setting and the user's flag. */
static cct_status resolve_choice(const cct_nccl_env_value *v, const char *key, int flag,
                                 const char *flag_name, int coll, int (*lookup)(const char *),
                                 const char *(*namer)(int), int n, const char *what,
                                 const char *name, int *out, cct_error *err)
{
    if (!v->set) {
        *out = flag == CCT_IMPORT_FROM_INPUT ? CCT_DEFAULT : flag;
        return CCT_OK;
    }
    int kind = LIST_DEFAULT, index = -1;
    cct_status rc = eval_list(v, key, coll, lookup, n, what, name, &kind, &index, err);
    if (rc != CCT_OK)
        return rc;
    int from_log = kind == LIST_FORCED ? index : CCT_DEFAULT;
    if (flag == CCT_IMPORT_FROM_INPUT) {
        if (kind == LIST_RESTRICTED)
            return cct_error_at(err, CCT_EINVAL, name, v->line, v->col,
                                "%s=%s lets NCCL choose among several %ss for %s; ccltune "
                                "records one %s or NCCL's default: pass %s",
                                key, v->value, what, cct_coll_name(coll), what, flag_name);
        *out = from_log;
        return CCT_OK;
    }
    if (kind != LIST_RESTRICTED && flag != from_log)
        return cct_error_at(err, CCT_EINVAL, name, v->line, v->col,
                            "the log says %s=%s (%s %s) but %s %s was given", key, v->value, what,
                            choice_name(from_log, namer), flag_name, choice_name(flag, namer));
    *out = flag;
    return CCT_OK;
}

static bool parse_env_u64(const char *s, uint64_t *out)
{
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && s[2]) {
        uint64_t v = 0;
        for (const char *p = s + 2; *p; p++) {
            if (!isxdigit((unsigned char)*p) || v > (UINT64_MAX >> 4))
                return false;
            v = v * 16 + (uint64_t)(isdigit((unsigned char)*p)
                                        ? *p - '0'
                                        : (tolower((unsigned char)*p) - 'a' + 10));
        }
        *out = v;
        return true;
    }
    return cct_parse_u64(s, out);
}

static cct_status env_bytes(const cct_nccl_env_value *v, const char *key, const char *name,
                            uint64_t *out, cct_error *err)
{
    *out = 0;
    if (!v->set)
        return CCT_OK;
    if (!parse_env_u64(v->value, out) || *out == 0)
        return cct_error_at(err, CCT_EINVAL, name, v->line, v->col,
                            "%s=%s is not a positive byte count", key, v->value);
    return CCT_OK;
}

static cct_status env_channels(const cct_nccl_env *env, const char *name, int *out, cct_error *err)
{
    const cct_nccl_env_value *lo = &env->v[CCT_ENV_MIN_NCHANNELS];
    const cct_nccl_env_value *hi = &env->v[CCT_ENV_MAX_NCHANNELS];
    *out = 0;
    if (!lo->set && !hi->set)
        return CCT_OK;
    const cct_nccl_env_value *at = lo->set ? lo : hi;
    long a = 0, b = 0;
    if ((lo->set && !cct_parse_long(lo->value, 1, 64, &a)) ||
        (hi->set && !cct_parse_long(hi->value, 1, 64, &b)))
        return cct_error_at(err, CCT_EINVAL, name, at->line, at->col,
                            "NCCL_MIN_NCHANNELS/NCCL_MAX_NCHANNELS must be 1..64 here (%s/%s)",
                            lo->set ? lo->value : "unset", hi->set ? hi->value : "unset");
    if (!lo->set || !hi->set || a != b)
        return cct_error_at(err, CCT_EINVAL, name, at->line, at->col,
                            "NCCL_MIN_NCHANNELS=%s and NCCL_MAX_NCHANNELS=%s leave the channel "
                            "count to NCCL within bounds; ccltune records an exact count (both "
                            "equal) or NCCL's own (neither set)",
                            lo->set ? lo->value : "unset", hi->set ? hi->value : "unset");
    *out = (int)a;
    return CCT_OK;
}

cct_status cct_nccl_env_apply(const cct_nccl_env *env, const cct_import_opts *opts,
                              const char *name, cct_config *cfg, cct_error *err)
{
    cct_status rc = resolve_choice(&env->v[CCT_ENV_ALGO], "NCCL_ALGO", opts->algo, "--algo",
                                   cfg->coll, cct_algo_from_name, cct_algo_name, CCT_NUM_ALGOS,
                                   "algorithm", name, &cfg->algo, err);
    if (rc == CCT_OK)
        rc = resolve_choice(&env->v[CCT_ENV_PROTO], "NCCL_PROTO", opts->proto, "--proto", cfg->coll,
                            cct_proto_from_name, cct_proto_name, CCT_NUM_PROTOS, "protocol", name,
                            &cfg->proto, err);
    for (int i = 0; i < CCT_NUM_PROTOS && rc == CCT_OK; i++) {
        int p = cct_buffsize_protos[i];
        const char *key = cct_proto_facts_of(p)->buffsize_env;
        rc = env_bytes(&env->v[key_index(key)], key, name, cct_config_buffsize(cfg, p), err);
    }
    if (rc == CCT_OK)
        rc = env_channels(env, name, &cfg->channels, err);
    return rc;
}
