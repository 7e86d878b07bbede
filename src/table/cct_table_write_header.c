/*
 * cct_table_write_header.c - the table's comment header (cct_table_write_header.h).
 *
 * Paragraphs, each labelled and wrapped at words to the writer's line width: what the file
 * is, the box (GPU, compute capability, NCCL, CUDA), the topology and links in words
 * (cct_table_words.c: a shared-GPU table says it never matches a real deployment), when and
 * how it was measured (the time, the store's runs and the measuring command as the store
 * recorded it, copyable into a shell), the note, how to read the rules, and how to deploy the
 * file.  Every sentence comes from the table itself, so the header is as deterministic as
 * the rest of the file.
 */
#include "cct_table_write_header.h"

#include <stdio.h>
#include <string.h>

#include "cct_table_words.h"
#include "cct_yaml_layout.h"

#define LABEL "#             " /* continuation lines line up after the labels */

static void paragraph(FILE *f, const char *label, const char *text)
{
    char first[32];
    snprintf(first, sizeof first, "# %-12s", label);
    cct_write_comment(f, first, LABEL, text);
}

static void write_box(FILE *f, const cct_table *t)
{
    const cct_fingerprint *fp = &t->fingerprint;
    char text[1024], cc[16], topo[256];
    snprintf(text, sizeof text, "%s, compute capability %s, NCCL %s%s%s", fp->gpu,
             cct_cc_format(fp->cc, cc, sizeof cc), fp->nccl, fp->cuda ? ", CUDA driver " : "",
             fp->cuda ? fp->cuda : "");
    paragraph(f, "Box:", text);
    if (fp->nccl_versions) {
        snprintf(text, sizeof text,
                 "measured with NCCL %s, widened at fit time to NCCL %s (nccl_versions): the "
                 "plugin applies it there too, though nothing was measured there",
                 fp->nccl, fp->nccl_versions);
        paragraph(f, "NCCL:", text);
    }
    paragraph(f, "Topology:", cct_words_topology(fp, topo, sizeof topo));
    paragraph(f, "Links:", cct_words_links(fp->links));
}

static void write_made(FILE *f, const cct_table *t)
{
    const cct_provenance *p = &t->provenance;
    char text[1024];
    char runs[320] = "";
    if (p->runs)
        snprintf(runs, sizeof runs, ", from run%s %s of its measurement store",
                 strchr(p->runs, ',') ? "s" : "", p->runs);
    snprintf(text, sizeof text, "%s (source: %s), by %s%s", p->created, p->source, p->tool, runs);
    paragraph(f, "Measured:", text);
    if (!p->command)
        return;
    /* one shell command per line of the record, continued with backslashes */
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s", p->command);
    bool first = true;
    for (char *line = cmd, *next; line; line = next, first = false) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        cct_write_comment_command(f, first ? "# Command:    " : LABEL, LABEL "  ", line);
    }
}

static void write_reading(FILE *f, const cct_table *t)
{
    if (t->n_sections == 0)
        paragraph(f, "Reading:",
                  "this table has no rules (`collectives: {}`): NCCL picks the algorithm, protocol "
                  "and channels of every call itself.");
    else
        paragraph(
            f, "Reading:",
            "under `collectives`, each section (one collective at a number of ranks and nodes) "
            "has rules: for message sizes min_bytes <= n < max_bytes (bytes; inf: no end) the "
            "plugin makes NCCL use algo, proto and channels (0: NCCL's count; max: all the "
            "communicator has). A rule's first line gives its band in KiB/MiB, its last line "
            "why it is there: its measured gain over NCCL's own choice (evidence: gain with its "
            "95 % ci, the run's noise floor and the cycles measured), NCCL's own choice, or "
            "what the fitted models predict. The models follow the rules of each section.");
    if (t->constants.present)
        paragraph(f, "",
                  "nccl_constants replace entries of NCCL's own cost model at communicator init "
                  "(tuner v5/v6), at any rank count.");
}

/* The section an example command names: the first in the file's order, whatever the order
 * in memory (the writer's output must not depend on it). */
static const cct_section *first_section(const cct_table *t)
{
    const cct_section *best = NULL;
    for (size_t i = 0; i < t->n_sections; i++) {
        const cct_section *s = &t->sections[i];
        if (!best || s->coll < best->coll || (s->coll == best->coll && s->ranks < best->ranks))
            best = s;
    }
    return best;
}

static void write_deploying(FILE *f, const cct_table *t)
{
    const cct_section *example = first_section(t);
    char text[2048];
    int n = snprintf(text, sizeof text,
                     "NCCL_TUNER_PLUGIN=ccltune CCLTUNE_TABLE=/path/to/this.yaml in the job's "
                     "environment (libnccl-tuner-ccltune.so on the library path)");
    for (size_t i = 0; i < t->n_env && n > 0 && (size_t)n < sizeof text; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, "%s%s=%s", i ? ", " : "; also ",
                      t->env[i].key, t->env[i].value);
    if (t->n_env && n > 0 && (size_t)n < sizeof text)
        n += snprintf(text + n, sizeof text - (size_t)n, " (recommended_env)");
    if (n > 0 && (size_t)n < sizeof text)
        n += snprintf(text + n, sizeof text - (size_t)n,
                      ". Check it with `ccltune validate FILE` and `ccltune explain FILE --coll %s "
                      "--ranks %d`.",
                      example ? cct_coll_name(example->coll) : "all", example ? example->ranks : 2);
    if (t->fingerprint.ranks_per_gpu > 1 && n > 0 && (size_t)n < sizeof text)
        snprintf(text + n, sizeof text - (size_t)n,
                 " The plugin applies it only where NCCL_HOSTID is set: the shared-GPU measuring "
                 "setup.");
    paragraph(f, "Deploying:", text);
}

void cct_table_write_header(FILE *f, const cct_table *t)
{
    cct_write_comment(
        f, "# ", "#   ",
        "ccltune tuning table: the NCCL algorithm, protocol and channel count to use per "
        "collective, communicator and message size on one box (docs/table-format.md "
        "describes every field).");
    write_box(f, t);
    write_made(f, t);
    if (t->provenance.note)
        paragraph(f, "Note:", t->provenance.note);
    write_reading(f, t);
    write_deploying(f, t);
}
