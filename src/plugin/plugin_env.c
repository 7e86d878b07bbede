/*
 * plugin_env.c - the environment variables the plugin reads, parsed without side effects.
 *
 * NCCL_ALGO / NCCL_PROTO: with tuner v1/v2 on NCCL 2.19-2.21 there is no cost table, and
 * NCCL uses whatever algorithm/protocol the tuner returns without checking it against the
 * user's restrictions, so the plugin must apply them itself, exactly as those releases
 * parse them (tuning.cc parseList): a comma list of names compared case-insensitively
 * with NCCL's spellings, a leading '^' meaning "all but these", unknown names ignored,
 * and an empty list enabling nothing.
 *
 * CCLTUNE_FORCE=algo/proto[/channels[/chunk]] lets external tools (nccl-tests) run one
 * configuration through the plugin without the control API (the chunk: tuner v6 only).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ccltune_control.h"
#include "cct_parse.h"
#include "plugin_internal.h"

/* NCCL 2.19-2.21's spellings (ncclAlgoStr, ncclProtoStr); PAT did not exist yet. */
static const char *const nccl_algo_names[CCT_NUM_ALGOS] = {
    "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
static const char *const nccl_proto_names[CCT_NUM_PROTOS] = {"LL", "LL128", "Simple"};

void cct_env_list_parse(const char *text, const char *const *names, int n, bool *enabled)
{
    bool def = false, set = true;
    if (text[0] == '^') {
        def = true;
        set = false;
        text++;
    }
    for (int i = 0; i < n; i++)
        enabled[i] = def;
    const char *p = text;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        for (int i = 0; i < n; i++)
            if (len == strlen(names[i]) && strncasecmp(p, names[i], len) == 0)
                enabled[i] = set;
        p += len;
        if (*p == ',')
            p++;
    }
}

void cct_env_mask_parse(const char *algo_env, const char *proto_env, cct_env_mask *out)
{
    for (int a = 0; a < CCT_NUM_ALGOS; a++)
        out->algo[a] = true;
    for (int p = 0; p < CCT_NUM_PROTOS; p++)
        out->proto[p] = true;
    out->algo_set = algo_env != NULL;
    out->proto_set = proto_env != NULL;
    /* the list covers the six algorithms those releases know; PAT stays as parsed
     * (it cannot be chosen there anyway, cct_select_check_v2 refuses it) */
    if (algo_env)
        cct_env_list_parse(algo_env, nccl_algo_names, CCT_NUM_ALGOS, out->algo);
    if (proto_env)
        cct_env_list_parse(proto_env, nccl_proto_names, CCT_NUM_PROTOS, out->proto);
}

cct_status cct_force_parse(const char *text, cct_force *out, cct_error *err)
{
    char buf[128];
    if (!text || strlen(text) >= sizeof buf)
        return cct_error_set(err, CCT_EINVAL,
                             "CCLTUNE_FORCE must be algo/proto[/channels[/chunk]]");
    strcpy(buf, text);
    char *algo = buf, *proto = strchr(buf, '/');
    if (!proto)
        return cct_error_set(
            err, CCT_EINVAL,
            "CCLTUNE_FORCE=\"%s\": expected algo/proto[/channels[/chunk]], e.g. ring/ll/2", text);
    *proto++ = '\0';
    char *chan = strchr(proto, '/'), *chunk = NULL;
    if (chan)
        *chan++ = '\0';
    if (chan && (chunk = strchr(chan, '/')) != NULL)
        *chunk++ = '\0';
    int a = cct_algo_from_name(algo), p = cct_proto_from_name(proto);
    if (a < 0)
        return cct_error_set(err, CCT_EINVAL, "CCLTUNE_FORCE=\"%s\": unknown algorithm \"%s\"",
                             text, algo);
    if (p < 0)
        return cct_error_set(err, CCT_EINVAL, "CCLTUNE_FORCE=\"%s\": unknown protocol \"%s\"", text,
                             proto);
    long c = 0;
    if (chan) {
        char *end;
        c = strtol(chan, &end, 10);
        if (end == chan || *end || c < 0 || c > CCT_TABLE_MAX_CHANNELS)
            return cct_error_set(err, CCT_EINVAL, "CCLTUNE_FORCE=\"%s\": channels must be 0..%d",
                                 text, CCT_TABLE_MAX_CHANNELS);
    }
    uint64_t k = 0; /* "nccl": NCCL's own chunk, as `search --chunk` spells it */
    if (chunk && strcmp(chunk, "nccl") != 0 &&
        (cct_parse_bytes(chunk, &k, NULL) != CCT_OK || k < 1024 || k > CCLTUNE_CONTROL_CHUNK_MAX))
        return cct_error_set(err, CCT_EINVAL,
                             "CCLTUNE_FORCE=\"%s\": the chunk must be a size from 1K to 1G, e.g. "
                             "256K, or nccl",
                             text);
    out->algo = a;
    out->proto = p;
    out->channels = (int)c;
    out->chunk = k;
    return CCT_OK;
}

bool cct_env_off(const char *name)
{
    const char *v = getenv(name);
    if (!v)
        return false;
    return strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0 || strcasecmp(v, "no") == 0 ||
           strcasecmp(v, "off") == 0;
}

bool cct_env_flag(const char *name)
{
    const char *v = getenv(name);
    if (!v)
        return false;
    return strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 ||
           strcasecmp(v, "on") == 0;
}
