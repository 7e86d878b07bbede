/*
 * cct_store_schema.c - the store's schema: recognising a file as a ccltune store, creating
 * the tables in an empty file, and the migration list that future versions extend.
 *
 * A file is a ccltune store when its header carries our PRAGMA application_id and its
 * meta table says application = 'ccltune'; PRAGMA user_version is the schema version.
 * The checks only read the file: a foreign database, a newer schema or a damaged header is
 * refused before anything is written, so opening the wrong file can never alter it (not
 * even its journal mode).  An empty file is created in one transaction together with its
 * version, so a crash during creation leaves an empty file, never half a schema.
 * migrations[0] creates version 1; migrations[v] upgrades version v to v + 1.  A new store
 * runs them all; a writable older store is upgraded when it is opened, in one transaction
 * (foreign keys off meanwhile, so rebuilding a table cascades nothing); a read-only older
 * store is read as it is (cct_store_load.c fills the newer columns' defaults).  Column meanings are
 * documented for users in docs/store.md.
 */
#include "cct_store_internal.h"

#include <stdio.h>
#include <string.h>

/* The points table's columns from version 1 up to measured; version 2 rebuilds the table
 * with these and its new columns. */
#define POINTS_V1_COLUMNS                                                                          \
    "    id             INTEGER PRIMARY KEY,\n"                                                    \
    "    run_id         INTEGER NOT NULL REFERENCES runs (id),\n"                                  \
    "    coll           TEXT    NOT NULL,\n"                                                       \
    "    algo           TEXT    NOT NULL,\n"                                                       \
    "    proto          TEXT    NOT NULL,\n"                                                       \
    "    channels       INTEGER NOT NULL,\n"                                                       \
    "    buffsize       INTEGER NOT NULL,\n"                                                       \
    "    ll_buffsize    INTEGER NOT NULL,\n"                                                       \
    "    ll128_buffsize INTEGER NOT NULL,\n"                                                       \
    "    align          INTEGER NOT NULL,\n"                                                       \
    "    ranks          INTEGER NOT NULL,\n"                                                       \
    "    nodes          INTEGER NOT NULL,\n"                                                       \
    "    dtype          TEXT    NOT NULL,\n"                                                       \
    "    bytes          INTEGER NOT NULL,\n"                                                       \
    "    in_place       INTEGER NOT NULL CHECK (in_place IN (0, 1)),\n"                            \
    "    status         TEXT    NOT NULL\n"                                                        \
    "                   CHECK (status IN ('ok', 'corrupt', 'hang', 'unsupported', 'error')),\n"    \
    "    wrong_elements INTEGER NOT NULL,\n"                                                       \
    "    noisy          INTEGER NOT NULL CHECK (noisy IN (0, 1)),\n"                               \
    "    nccl_algo      TEXT,\n"                                                                   \
    "    nccl_proto     TEXT,\n"                                                                   \
    "    n_samples      INTEGER NOT NULL,\n"                                                       \
    "    median_us      REAL,\n"                                                                   \
    "    p95_us         REAL,\n"                                                                   \
    "    min_us         REAL,\n"                                                                   \
    "    max_us         REAL,\n"                                                                   \
    "    mean_us        REAL,\n"                                                                   \
    "    cv             REAL,\n"                                                                   \
    "    measured       TEXT    NOT NULL,\n"

/* point_summary's columns up to busbw_gbps, its joins after them; version 2 recreates the
 * view with the new point columns added between the two.  busbw as nccl-tests computes it
 * (cct_busbw_factor); ranks < 1 counts as 1 there too.  A zero or missing median gives NULL,
 * never a division error. */
#define POINT_SUMMARY_SELECT                                                                       \
    "SELECT p.id AS point_id, p.run_id, r.fingerprint_id, f.gpu, f.nccl,\n"                        \
    "       p.coll, p.algo, p.proto, p.channels, p.buffsize, p.ll_buffsize, p.ll128_buffsize,\n"   \
    "       p.align, p.ranks, p.nodes, p.dtype, p.bytes, p.in_place, p.status,\n"                  \
    "       p.wrong_elements, p.noisy, p.nccl_algo, p.nccl_proto, p.n_samples,\n"                  \
    "       p.median_us, p.p95_us, p.min_us, p.max_us, p.mean_us, p.cv,\n"                         \
    "       p.bytes / (NULLIF(p.median_us, 0) * 1e3) AS algbw_gbps,\n"                             \
    "       p.bytes / (NULLIF(p.median_us, 0) * 1e3) *\n"                                          \
    "           CASE p.coll\n"                                                                     \
    "           WHEN 'allreduce' THEN 2.0 * (MAX(p.ranks, 1) - 1) / MAX(p.ranks, 1)\n"             \
    "           WHEN 'allgather' THEN 1.0 * (MAX(p.ranks, 1) - 1) / MAX(p.ranks, 1)\n"             \
    "           WHEN 'reducescatter' THEN 1.0 * (MAX(p.ranks, 1) - 1) / MAX(p.ranks, 1)\n"         \
    "           ELSE 1.0 END AS busbw_gbps"

#define POINT_SUMMARY_FROM                                                                         \
    "FROM points AS p\n"                                                                           \
    "JOIN runs AS r ON r.id = p.run_id\n"                                                          \
    "JOIN fingerprints AS f ON f.id = r.fingerprint_id;\n"

static const char schema_v1[] =
    "CREATE TABLE meta (\n"
    "    key   TEXT PRIMARY KEY NOT NULL,\n"
    "    value TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE fingerprints (\n"
    "    id            INTEGER PRIMARY KEY,\n"
    "    gpu           TEXT    NOT NULL,\n"
    "    cc            INTEGER NOT NULL,\n"
    "    gpus_per_node INTEGER NOT NULL,\n"
    "    nodes         INTEGER NOT NULL,\n"
    "    ranks_per_gpu INTEGER NOT NULL,\n"
    "    links         TEXT    NOT NULL,\n"
    "    nccl          TEXT    NOT NULL,\n"
    "    cuda          TEXT    NOT NULL,\n"
    "    host          TEXT    NOT NULL,\n"
    "    ll128_allowed INTEGER NOT NULL CHECK (ll128_allowed IN (0, 1)),\n"
    "    ll128_reason  TEXT    NOT NULL,\n"
    "    UNIQUE (gpu, cc, gpus_per_node, nodes, ranks_per_gpu, links, nccl, cuda, host,\n"
    "            ll128_allowed, ll128_reason)\n"
    ");\n"
    "CREATE TABLE runs (\n"
    "    id             INTEGER PRIMARY KEY,\n"
    "    fingerprint_id INTEGER NOT NULL REFERENCES fingerprints (id),\n"
    "    started        TEXT    NOT NULL,\n"
    "    finished       TEXT,\n"
    "    state          TEXT    NOT NULL CHECK (state IN ('running', 'done', 'failed')),\n"
    "    tool           TEXT    NOT NULL,\n"
    "    source         TEXT    NOT NULL,\n"
    "    plan_hash      TEXT    NOT NULL,\n"
    "    command        TEXT    NOT NULL\n"
    ");\n"
    "CREATE INDEX runs_by_fingerprint ON runs (fingerprint_id);\n"
    "CREATE TABLE points (\n" POINTS_V1_COLUMNS
    "    UNIQUE (run_id, coll, algo, proto, channels, buffsize, ll_buffsize, ll128_buffsize,\n"
    "            align, ranks, nodes, dtype, bytes, in_place)\n"
    ");\n"
    "CREATE INDEX points_by_shape ON points (coll, ranks, nodes, bytes);\n"
    "CREATE INDEX points_not_ok ON points (status) WHERE status <> 'ok';\n"
    "CREATE TABLE samples (\n"
    "    point_id INTEGER NOT NULL REFERENCES points (id) ON DELETE CASCADE,\n"
    "    seq      INTEGER NOT NULL,\n"
    "    time_us  REAL    NOT NULL,\n"
    "    PRIMARY KEY (point_id, seq)\n"
    ") WITHOUT ROWID;\n"
    "CREATE VIEW point_summary AS\n" POINT_SUMMARY_SELECT "\n" POINT_SUMMARY_FROM;

/* Version 2: call modes.  pipe_ops / reg_buff join the point's key (a grouped or registered
 * measurement is another point than the plain one); tuner_* record what NCCL passed its tuner
 * (NULL: unknown).  The UNIQUE key changes, so the table is rebuilt; old points are plain
 * calls: pipe_ops 1, reg_buff 0. */
static const char schema_v2[] =
    "DROP VIEW point_summary;\n"
    "CREATE TABLE points_v2 (\n" POINTS_V1_COLUMNS
    "    pipe_ops       INTEGER NOT NULL DEFAULT 1 CHECK (pipe_ops >= 1),\n"
    "    reg_buff       INTEGER NOT NULL DEFAULT 0 CHECK (reg_buff IN (0, 1)),\n"
    "    tuner_pipe_ops INTEGER CHECK (tuner_pipe_ops >= 1),\n"
    "    tuner_reg_buff INTEGER CHECK (tuner_reg_buff IN (-1, 0, 1)),\n"
    "    tuner_bytes    INTEGER,\n"
    "    UNIQUE (run_id, coll, algo, proto, channels, buffsize, ll_buffsize, ll128_buffsize,\n"
    "            align, ranks, nodes, dtype, bytes, in_place, pipe_ops, reg_buff)\n"
    ");\n"
    "INSERT INTO points_v2 (id, run_id, coll, algo, proto, channels, buffsize, ll_buffsize,\n"
    "    ll128_buffsize, align, ranks, nodes, dtype, bytes, in_place, status, wrong_elements,\n"
    "    noisy, nccl_algo, nccl_proto, n_samples, median_us, p95_us, min_us, max_us, mean_us,\n"
    "    cv, measured, pipe_ops, reg_buff)\n"
    "SELECT id, run_id, coll, algo, proto, channels, buffsize, ll_buffsize, ll128_buffsize,\n"
    "    align, ranks, nodes, dtype, bytes, in_place, status, wrong_elements, noisy, nccl_algo,\n"
    "    nccl_proto, n_samples, median_us, p95_us, min_us, max_us, mean_us, cv, measured, 1, 0\n"
    "FROM points;\n"
    "DROP TABLE points;\n"
    "ALTER TABLE points_v2 RENAME TO points;\n"
    "CREATE INDEX points_by_shape ON points (coll, ranks, nodes, bytes);\n"
    "CREATE INDEX points_not_ok ON points (status) WHERE status <> 'ok';\n"
    "CREATE VIEW point_summary AS\n" POINT_SUMMARY_SELECT ",\n"
    "       p.pipe_ops, p.reg_buff, p.tuner_pipe_ops, p.tuner_reg_buff, "
    "p.tuner_bytes\n" POINT_SUMMARY_FROM;

/* Version 3: NCCL's init-time model printout (INIT, GRAPH and TUNING lines of its debug log)
 * for a run's communicator, captured by the search so that `ccltune tune` and `ccltune
 * calibrate` can fit NCCL's cost-model constants without a hand-made log.  A new table only:
 * older runs simply have no row. */
static const char schema_v3[] = "CREATE TABLE nccl_logs (\n"
                                "    run_id   INTEGER PRIMARY KEY REFERENCES runs (id),\n"
                                "    ranks    INTEGER NOT NULL CHECK (ranks >= 1),\n"
                                "    nodes    INTEGER NOT NULL CHECK (nodes >= 1),\n"
                                "    captured TEXT    NOT NULL,\n"
                                "    text     TEXT    NOT NULL\n"
                                ");\n";

/* Version 4: the link matrix measured at the start of a run (`ccltune probe --links --json`),
 * or one recorded elsewhere and given with --links-from.  A new table only: older runs have
 * no row. */
static const char schema_v4[] = "CREATE TABLE link_matrices (\n"
                                "    run_id   INTEGER PRIMARY KEY REFERENCES runs (id),\n"
                                "    stored   TEXT    NOT NULL,\n"
                                "    json     TEXT    NOT NULL\n"
                                ");\n";
/* Version 5: chunk sizes (tuner v6).  chunk is the size the plugin answered NCCL (0: NCCL's
 * own) and joins the point's key; chunk_used the chunk NCCL ran after capping and rounding
 * it, chunk_source whether NCCL's output said so ('observed') or NCCL's rule gave it
 * ('computed'); both NULL for NCCL's own chunk.  The UNIQUE key changes, so the table is
 * rebuilt; old points ran NCCL's own chunk. */
#define POINTS_V2_COLUMNS                                                                          \
    "    pipe_ops       INTEGER NOT NULL DEFAULT 1 CHECK (pipe_ops >= 1),\n"                       \
    "    reg_buff       INTEGER NOT NULL DEFAULT 0 CHECK (reg_buff IN (0, 1)),\n"                  \
    "    tuner_pipe_ops INTEGER CHECK (tuner_pipe_ops >= 1),\n"                                    \
    "    tuner_reg_buff INTEGER CHECK (tuner_reg_buff IN (-1, 0, 1)),\n"                           \
    "    tuner_bytes    INTEGER,\n"
#define POINTS_V3_NAMES                                                                            \
    "id, run_id, coll, algo, proto, channels, buffsize, ll_buffsize, ll128_buffsize, align, "      \
    "ranks, nodes, dtype, bytes, in_place, status, wrong_elements, noisy, nccl_algo, nccl_proto, " \
    "n_samples, median_us, p95_us, min_us, max_us, mean_us, cv, measured, pipe_ops, reg_buff, "    \
    "tuner_pipe_ops, tuner_reg_buff, tuner_bytes"
static const char schema_v5[] =
    "DROP VIEW point_summary;\n"
    "CREATE TABLE points_v5 (\n" POINTS_V1_COLUMNS POINTS_V2_COLUMNS
    "    chunk          INTEGER NOT NULL DEFAULT 0 CHECK (chunk >= 0),\n"
    "    chunk_used     INTEGER CHECK (chunk_used > 0),\n"
    "    chunk_source   TEXT    CHECK (chunk_source IN ('observed', 'computed')),\n"
    "    UNIQUE (run_id, coll, algo, proto, channels, buffsize, ll_buffsize, ll128_buffsize,\n"
    "            align, ranks, nodes, dtype, bytes, in_place, pipe_ops, reg_buff, chunk)\n"
    ");\n"
    "INSERT INTO points_v5 (" POINTS_V3_NAMES ")\n"
    "SELECT " POINTS_V3_NAMES " FROM points;\n"
    "DROP TABLE points;\n"
    "ALTER TABLE points_v5 RENAME TO points;\n"
    "CREATE INDEX points_by_shape ON points (coll, ranks, nodes, bytes);\n"
    "CREATE INDEX points_not_ok ON points (status) WHERE status <> 'ok';\n"
    "CREATE VIEW point_summary AS\n" POINT_SUMMARY_SELECT ",\n"
    "       p.pipe_ops, p.reg_buff, p.tuner_pipe_ops, p.tuner_reg_buff, p.tuner_bytes,\n"
    "       p.chunk, p.chunk_used, p.chunk_source\n" POINT_SUMMARY_FROM;

static const char *const migrations[] = {schema_v1, schema_v2, schema_v3, schema_v4, schema_v5};
_Static_assert(sizeof migrations / sizeof migrations[0] == CCT_STORE_SCHEMA_VERSION,
               "one migration per schema version");

typedef struct header {
    long long application_id;
    long long user_version;
    long long objects;    /* rows of sqlite_master */
    bool has_meta;        /* a table named meta exists */
    char application[32]; /* meta.application, "" if absent */
} header;

static cct_status pragma_int(cct_store *s, const char *sql, long long *out, cct_error *err)
{
    sqlite3_stmt *st;
    cct_status rc = cct_store_prepare(s, sql, &st, "reading its header", err);
    if (rc != CCT_OK)
        return rc;
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        step = SQLITE_DONE;
    }
    if (step != SQLITE_DONE)
        rc = cct_store_db_error(s, step, "reading its header", NULL, err);
    sqlite3_finalize(st);
    return rc;
}

static cct_status read_header(cct_store *s, header *h, cct_error *err)
{
    memset(h, 0, sizeof *h);
    cct_status rc;
    long long has_meta = 0;
    /* The first read is where a file that is not SQLite at all is found (SQLITE_NOTADB). */
    if ((rc = pragma_int(s, "SELECT count(*) FROM sqlite_master", &h->objects, err)) ||
        (rc = pragma_int(s, "PRAGMA application_id", &h->application_id, err)) ||
        (rc = pragma_int(s, "PRAGMA user_version", &h->user_version, err)) ||
        (rc = pragma_int(s,
                         "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                         "name = 'meta'",
                         &has_meta, err)))
        return rc;
    h->has_meta = has_meta > 0;
    if (!h->has_meta)
        return CCT_OK;
    sqlite3_stmt *st;
    /* A foreign meta table may have other columns; then we just do not find ours. */
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = 'application'", -1, &st,
                           NULL) != SQLITE_OK)
        return CCT_OK;
    if (sqlite3_step(st) == SQLITE_ROW)
        cct_store_column_text(st, 0, h->application, sizeof h->application);
    sqlite3_finalize(st);
    return CCT_OK;
}

static bool is_empty(const header *h)
{
    return h->objects == 0 && h->user_version == 0 && h->application_id == 0;
}

/* Everything that makes a file not ours, or not ours to read, with a sentence. */
static cct_status check_header(cct_store *s, const header *h, cct_error *err)
{
    bool ours_by_id = h->application_id == CCT_STORE_APPLICATION_ID;
    bool ours_by_meta = strcmp(h->application, "ccltune") == 0;
    if (!ours_by_id && !ours_by_meta)
        return cct_error_set(err, CCT_ESTORE,
                             "%s is an SQLite database but not a ccltune store (application_id "
                             "%lld, no meta row application = 'ccltune'); refusing to touch it",
                             s->path, h->application_id);
    if (h->user_version > CCT_STORE_SCHEMA_VERSION)
        return cct_error_set(err, CCT_EUNSUPPORTED,
                             "store %s was written by a newer ccltune (schema %lld, this build "
                             "reads up to %d); use that version or a new store",
                             s->path, h->user_version, CCT_STORE_SCHEMA_VERSION);
    if (!ours_by_id || !ours_by_meta || h->user_version < 1)
        return cct_error_set(err, CCT_ESTORE,
                             "store %s looks like a ccltune store but its header is incomplete "
                             "(application_id %lld, user_version %lld, meta application '%s'); "
                             "was it restored from an SQL dump?  Refusing to touch it",
                             s->path, h->application_id, h->user_version, h->application);
    return CCT_OK;
}

static cct_status set_wal(cct_store *s, cct_error *err)
{
    sqlite3_stmt *st;
    cct_status rc = cct_store_prepare(s, "PRAGMA journal_mode = WAL", &st,
                                      "switching to write-ahead logging", err);
    if (rc != CCT_OK)
        return rc;
    int step = sqlite3_step(st);
    char mode[16] = "";
    if (step == SQLITE_ROW)
        cct_store_column_text(st, 0, mode, sizeof mode);
    else
        rc = cct_store_db_error(s, step, "switching to write-ahead logging", NULL, err);
    sqlite3_finalize(st);
    /* WAL needs shared memory beside the file; some network file systems refuse it, and
     * without WAL a reader could block the search's commits. */
    if (rc == CCT_OK && strcmp(mode, "wal") != 0)
        rc = cct_error_set(err, CCT_ESTORE,
                           "store %s: the file system refused write-ahead logging (journal "
                           "mode stayed '%s'); put the store on a local disk",
                           s->path, mode);
    return rc;
}

static cct_status create_schema(cct_store *s, cct_error *err)
{
    cct_status rc;
    for (size_t v = 0; v < sizeof migrations / sizeof migrations[0]; v++)
        if ((rc = cct_store_exec(s, migrations[v], "creating its tables", err)) != CCT_OK)
            return rc;
    char sql[512], now[32];
    cct_store_now(now);
    snprintf(sql, sizeof sql,
             "PRAGMA application_id = %d; PRAGMA user_version = %d;\n"
             "INSERT INTO meta (key, value) VALUES ('application', 'ccltune'),\n"
             "    ('created_by', 'ccltune %s'), ('created', '%s');",
             CCT_STORE_APPLICATION_ID, CCT_STORE_SCHEMA_VERSION, CCT_VERSION, now);
    return cct_store_exec(s, sql, "creating its tables", err);
}

static cct_status create_store(cct_store *s, cct_error *err)
{
    cct_status rc = set_wal(s, err);
    if (rc == CCT_OK)
        rc = cct_store_begin_write(s, "creating its tables", err);
    if (rc != CCT_OK)
        return rc;
    /* Another process may have created the schema between our check and our lock. */
    header h;
    if ((rc = read_header(s, &h, err)) == CCT_OK) {
        if (is_empty(&h))
            rc = create_schema(s, err);
        else
            rc = check_header(s, &h, err);
    }
    if (rc == CCT_OK)
        return cct_store_commit(s, "creating its tables", err);
    cct_store_rollback(s);
    return rc;
}

/* Upgrade an older writable store to this build's schema, in one transaction.  Foreign keys
 * are off meanwhile (SQLite ignores that pragma inside a transaction), so rebuilding the
 * points table does not cascade into its samples; foreign_key_check proves nothing dangles
 * before the commit. */
static cct_status migrate(cct_store *s, cct_error *err)
{
    cct_status rc = cct_store_exec(s, "PRAGMA foreign_keys = OFF", "upgrading its schema", err);
    if (rc == CCT_OK)
        rc = cct_store_begin_write(s, "upgrading its schema", err);
    if (rc != CCT_OK) {
        cct_error ignored;
        cct_store_exec(s, "PRAGMA foreign_keys = ON", "upgrading its schema", &ignored);
        return rc;
    }
    header h;
    /* another process may have upgraded it between our check and our lock */
    if ((rc = read_header(s, &h, err)) == CCT_OK) {
        for (long long v = h.user_version; rc == CCT_OK && v < CCT_STORE_SCHEMA_VERSION; v++)
            rc = cct_store_exec(s, migrations[v], "upgrading its schema", err);
    }
    long long dangling = 0;
    if (rc == CCT_OK &&
        (rc = pragma_int(s, "SELECT count(*) FROM pragma_foreign_key_check", &dangling, err)) ==
            CCT_OK &&
        dangling != 0)
        rc = cct_error_set(err, CCT_ESTORE,
                           "store %s: upgrading its schema would leave %lld rows without their "
                           "parent; left unchanged",
                           s->path, dangling);
    if (rc == CCT_OK) {
        char sql[64];
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", CCT_STORE_SCHEMA_VERSION);
        rc = cct_store_exec(s, sql, "upgrading its schema", err);
    }
    if (rc == CCT_OK)
        rc = cct_store_commit(s, "upgrading its schema", err);
    else
        cct_store_rollback(s);
    cct_error ignored;
    cct_store_exec(s, "PRAGMA foreign_keys = ON", "upgrading its schema", &ignored);
    if (rc == CCT_OK)
        s->schema = CCT_STORE_SCHEMA_VERSION;
    return rc;
}

cct_status cct_store_schema_attach(cct_store *s, cct_error *err)
{
    header h;
    cct_status rc = read_header(s, &h, err);
    if (rc != CCT_OK)
        return rc;
    if (is_empty(&h)) {
        if (s->read_only)
            return cct_error_set(err, CCT_ESTORE,
                                 "%s is empty, not a ccltune store (open it for writing to "
                                 "create one)",
                                 s->path);
        cct_status created = create_store(s, err);
        s->schema = CCT_STORE_SCHEMA_VERSION;
        return created;
    }
    if ((rc = check_header(s, &h, err)) != CCT_OK)
        return rc;
    s->schema = (int)h.user_version;
    if (s->read_only)
        return CCT_OK;
    if ((rc = set_wal(s, err)) != CCT_OK)
        return rc;
    return s->schema < CCT_STORE_SCHEMA_VERSION ? migrate(s, err) : CCT_OK;
}
