/*
 * cct_export_csv.c - a ccltune table as NCCL's example tuner plugin configuration (see
 * cct_export_csv.h for the format and the conversion rules).
 *
 * The example plugin takes the first line that matches a call, in file order, so the
 * order of lines is part of the meaning: sections are sorted by collective, nodes and
 * ranks, and among sections for the same topology the one ccltune's lookup prefers
 * (pipe_ops specific, then reg_buff specific; cct_table_find_section's score) comes first.
 * Every text that comes from the table is cleaned of control characters and cut short
 * before it goes into a comment, so no table can smuggle a configuration line into the
 * file.
 */
#include "cct_export_csv.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* cct_table_find_section's preference: higher first. */
static int score(const cct_section *s)
{
    return (s->pipe_ops != CCT_ANY) * 2 + (s->reg_buff != CCT_ANY);
}

static int cmp_section(const void *va, const void *vb)
{
    const cct_section *a = *(const cct_section *const *)va, *b = *(const cct_section *const *)vb;
    int keys_a[] = {a->coll, a->nodes, a->ranks, -score(a), a->pipe_ops, a->reg_buff};
    int keys_b[] = {b->coll, b->nodes, b->ranks, -score(b), b->pipe_ops, b->reg_buff};
    for (size_t i = 0; i < sizeof keys_a / sizeof keys_a[0]; i++)
        if (keys_a[i] != keys_b[i])
            return keys_a[i] < keys_b[i] ? -1 : 1;
    return 0;
}

/* One comment line: "# " + label + text cleaned and cut to the limit. */
static void comment(FILE *out, const char *label, const char *text)
{
    char line[CCT_EXPORT_CSV_MAX_COMMENT + 1];
    int n = snprintf(line, sizeof line, "# %s%s", label, text ? text : "");
    size_t len = n < 0 ? 0 : (size_t)n;
    if (len >= sizeof line) {
        len = sizeof line - 1;
        memcpy(line + len - 3, "...", 3);
    }
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
            line[i] = '?';
    line[len] = '\0';
    fprintf(out, "%s\n", line);
}

static void header(const cct_table *t, const char *source, size_t chunk_rules, FILE *out)
{
    char buf[CCT_EXPORT_CSV_MAX_COMMENT];
    comment(out, "NCCL example tuner plugin configuration (NCCL_TUNER_CONFIG_FILE)", NULL);
    comment(out, "exported by ccltune from: ", source ? source : "(a table in memory)");
    snprintf(buf, sizeof buf, "%s, created %s, NCCL %s",
             t->provenance.tool ? t->provenance.tool : "?",
             t->provenance.created ? t->provenance.created : "?",
             t->provenance.nccl ? t->provenance.nccl : "?");
    comment(out, "table: ", buf);
    snprintf(buf, sizeof buf, "%s, %d GPUs per node, %d nodes, links %s",
             t->fingerprint.gpu ? t->fingerprint.gpu : "?", t->fingerprint.gpus_per_node,
             t->fingerprint.nodes, t->fingerprint.links ? t->fingerprint.links : "?");
    comment(out, "measured on: ", buf);
    comment(out,
            "format: collective_type,min_bytes,max_bytes,algorithm,protocol,channels,"
            "nNodes,nRanks,numPipeOps,regBuff",
            NULL);
    comment(out,
            "bands are inclusive; 18446744073709551615 = no upper limit; channels 0 = "
            "NCCL's own count",
            NULL);
    if (chunk_rules) {
        snprintf(buf, sizeof buf,
                 "%zu rule(s) choose a chunk size, which this format cannot carry: "
                 "NCCL's own applies",
                 chunk_rules);
        comment(out, "note: ", buf);
    }
    for (size_t i = 0; i < t->n_env; i++) {
        snprintf(buf, sizeof buf, "%s=%s", t->env[i].key ? t->env[i].key : "?",
                 t->env[i].value ? t->env[i].value : "");
        comment(out, "set in the environment as well (no column for it): ", buf);
    }
}

cct_status cct_export_nccl_example_csv(const cct_table *table, const char *source, FILE *out,
                                       cct_error *err)
{
    cct_status rc = cct_table_check(table, err);
    if (rc != CCT_OK) {
        cct_error_prefix(err, "cannot export %s", source ? source : "the table");
        return rc;
    }
    const cct_section **order = NULL;
    if (table->n_sections) {
        order = malloc(table->n_sections * sizeof *order);
        if (!order)
            return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    size_t chunk_rules = 0;
    for (size_t i = 0; i < table->n_sections; i++) {
        order[i] = &table->sections[i];
        for (size_t r = 0; r < order[i]->n_rules; r++)
            chunk_rules += order[i]->rules[r].chunk_bytes != 0;
    }
    if (table->n_sections)
        qsort(order, table->n_sections, sizeof *order, cmp_section);
    header(table, source, chunk_rules, out);
    for (size_t i = 0; i < table->n_sections; i++) {
        const cct_section *s = order[i];
        for (size_t r = 0; r < s->n_rules; r++) {
            const cct_rule *rule = &s->rules[r];
            /* [min, max) -> [min, max - 1]; check() guarantees max > min */
            uint64_t last = rule->max_bytes == CCT_BYTES_INF ? UINT64_MAX : rule->max_bytes - 1;
            fprintf(out, "%s,%" PRIu64 ",%" PRIu64 ",%s,%s,%d,%d,%d,%d,%d\n",
                    cct_coll_name(s->coll), rule->min_bytes, last, cct_algo_name(rule->algo),
                    cct_proto_name(rule->proto), rule->channels, s->nodes, s->ranks,
                    s->pipe_ops == CCT_ANY ? -1 : s->pipe_ops,
                    s->reg_buff == CCT_ANY ? -1 : s->reg_buff);
        }
    }
    free(order);
    if (fflush(out) != 0 || ferror(out))
        return cct_error_set(err, CCT_EIO, "writing the configuration failed");
    return CCT_OK;
}
