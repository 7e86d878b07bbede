/*
 * cct_names.c - name lookups for collectives, algorithms and protocols (their rows are in
 * cct_facts.c), and byte-size formatting (see cct_names.h; sizes are parsed in cct_parse.c).
 *
 * Each enum has two spellings: ours (lower case with underscores, used in YAML tables and
 * on the command line) and NCCL's (used in NCCL_ALGO/NCCL_PROTO and in NCCL's logs).
 * Lookups accept both, case-insensitively, so an imported nccl-tests log ("NCCL_ALGO set
 * by environment to Ring") and a hand-written table use the same functions.
 */
#include "cct_names.h"

#include "cct_facts.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The spellings of item i, or NULL past the end: rows of cct_facts.c. */
static const char *coll_spelling(int i, bool nccl)
{
    const cct_coll_facts *f = cct_coll_facts_of(i);
    return f ? (nccl ? f->nccl_name : f->name) : NULL;
}
static const char *algo_spelling(int i, bool nccl)
{
    const cct_algo_facts *f = cct_algo_facts_of(i);
    return f ? (nccl ? f->nccl_name : f->name) : NULL;
}
static const char *proto_spelling(int i, bool nccl)
{
    const cct_proto_facts *f = cct_proto_facts_of(i);
    return f ? (nccl ? f->nccl_name : f->name) : NULL;
}

static const char *or_unknown(const char *name)
{
    return name ? name : "?";
}

static int index_of(const char *(*spelling)(int, bool), const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; spelling(i, false); i++)
        if (strcasecmp(name, spelling(i, false)) == 0 || strcasecmp(name, spelling(i, true)) == 0)
            return i;
    return -1;
}

const char *cct_coll_name(int coll)
{
    return or_unknown(coll_spelling(coll, false));
}
const char *cct_algo_name(int algo)
{
    return or_unknown(algo_spelling(algo, false));
}
const char *cct_proto_name(int proto)
{
    return or_unknown(proto_spelling(proto, false));
}
const char *cct_algo_nccl_name(int algo)
{
    return or_unknown(algo_spelling(algo, true));
}
const char *cct_proto_nccl_name(int proto)
{
    return or_unknown(proto_spelling(proto, true));
}

int cct_coll_from_name(const char *name)
{
    int i = index_of(coll_spelling, name);
    if (i < 0 && name) {
        /* nccl-tests binaries and hyphenated spellings: all_reduce, all-gather, reduce_scatter */
        char squeezed[32];
        size_t k = 0;
        for (const char *p = name; *p && k + 1 < sizeof squeezed; p++)
            if (*p != '_' && *p != '-')
                squeezed[k++] = *p;
        squeezed[k] = '\0';
        i = index_of(coll_spelling, squeezed);
    }
    return i;
}

int cct_algo_from_name(const char *name)
{
    return index_of(algo_spelling, name);
}

int cct_proto_from_name(const char *name)
{
    return index_of(proto_spelling, name);
}

const char *cct_format_bytes(uint64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes == CCT_BYTES_INF) {
        snprintf(buf, len, "inf");
        return buf;
    }
    unsigned u = 0;
    uint64_t whole = bytes;
    while (whole >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        whole >>= 10;
        u++;
    }
    if (u == 0) {
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    } else {
        uint64_t unit = (uint64_t)1 << (10 * u);
        if (bytes % unit == 0)
            snprintf(buf, len, "%llu %s", (unsigned long long)(bytes / unit), units[u]);
        else
            snprintf(buf, len, "%.4g %s", (double)bytes / (double)unit, units[u]);
    }
    return buf;
}

const char *cct_format_bytes_exact(uint64_t bytes, char *buf, size_t len)
{
    cct_format_bytes(bytes, buf, len);
    if (bytes != CCT_BYTES_INF && bytes >= 1024) {
        uint64_t unit = 1024;
        while (bytes / unit >= 1024 && unit < ((uint64_t)1 << 60))
            unit <<= 10;
        if (bytes % unit != 0)
            snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    }
    return buf;
}
