/*
 * cct_nccl_env.h - what NCCL environment variables say about the configuration a
 * benchmark measured: the forced algorithm and protocol, buffer sizes, an exact channel
 * count, and whether NCCL_HOSTID made host names meaningless as a node count.
 *
 * The nccl-tests importers collect settings from NCCL's INFO lines ("NCCL_ALGO set by
 * environment to Ring") or from the environment a JSON log recorded ("NCCL_ALGO=Ring"),
 * then resolve them with the user's flags into a cct_config.  NCCL_ALGO and NCCL_PROTO
 * are evaluated with NCCL's own list syntax ("Tree,Ring", "^LL128",
 * "ring;allreduce:tree") for the log's collective: one enabled entry forces it, all
 * enabled is NCCL's default, anything in between is a restriction ccltune cannot record
 * and needs a flag.
 *
 * Plain values, no ownership.
 */
#ifndef CCT_NCCL_ENV_H
#define CCT_NCCL_ENV_H

#include <stdbool.h>

#include "cct_error.h"
#include "cct_import.h"
#include "cct_measure.h"

enum {
    CCT_ENV_ALGO,
    CCT_ENV_PROTO,
    CCT_ENV_BUFFSIZE,
    CCT_ENV_LL_BUFFSIZE,
    CCT_ENV_LL128_BUFFSIZE,
    CCT_ENV_MIN_NCHANNELS,
    CCT_ENV_MAX_NCHANNELS,
    CCT_ENV_COUNT
};

#define CCT_ENV_VALUE_MAX 256

typedef struct cct_nccl_env_value {
    bool set;
    char value[CCT_ENV_VALUE_MAX];
    unsigned line, col; /* where the input said so, for messages */
} cct_nccl_env_value;

typedef struct cct_nccl_env {
    cct_nccl_env_value v[CCT_ENV_COUNT];
    bool hostid; /* NCCL_HOSTID was set: NCCL's node count need not follow host names */
} cct_nccl_env;

void cct_nccl_env_init(cct_nccl_env *env);

/* Record KEY=VALUE if KEY matters (others are ignored: CCT_OK).  A second, different
 * value for the same key is an error at line:col (processes of one run disagree). */
cct_status cct_nccl_env_record(cct_nccl_env *env, const char *key, const char *value,
                               const char *name, unsigned line, unsigned col, cct_error *err);

/* Merge src into dst with the same conflict rule. */
cct_status cct_nccl_env_merge(cct_nccl_env *dst, const cct_nccl_env *src, const char *name,
                              cct_error *err);

/* Resolve algorithm, protocol, channels and buffer sizes of cfg (whose coll is set) from
 * env and the user's options; a flag that contradicts the log is an error. */
cct_status cct_nccl_env_apply(const cct_nccl_env *env, const cct_import_opts *opts,
                              const char *name, cct_config *cfg, cct_error *err);

#endif
