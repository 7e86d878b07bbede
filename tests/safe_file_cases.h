/*
 * safe_file_cases.h - table files with each property the safe-loading rules refuse (and a
 * few they accept), made in a scratch folder, shared by the library/CLI test
 * (test_safe_file.c) and the plugin test (test_plugin_safe.c) so all three readers are held
 * to the same list.
 *
 * sf_make() builds every case under a fresh folder: modes by chmod, a foreign owner by
 * chown to 65534 (tests run as root; without root that case is marked skipped), an oversized
 * file as a sparse file, a FIFO, a socket, a directory, links to /dev/null and to bad files,
 * and world-writable folders with and without the sticky bit.  `rule` is the text the
 * message must contain ("(rule mode)"), NULL for files that must load; `waivable` says
 * whether CCLTUNE_TABLE_UNSAFE_OK=1 lets it load.
 */
#ifndef CCT_SAFE_FILE_CASES_H
#define CCT_SAFE_FILE_CASES_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cct_table.h"

typedef struct sf_case {
    const char *name;
    char path[4096];
    const char *rule;   /* substring of the refusal; NULL: must load */
    const char *detail; /* a second substring (what exactly is wrong); NULL: none */
    bool waivable;      /* CCLTUNE_TABLE_UNSAFE_OK=1 lets it load */
    bool skip;          /* could not be set up here (e.g. chown without root) */
} sf_case;

#define SF_MAX 24

static const char sf_table[] =
    "ccltune_table: 1\n"
    "provenance: {tool: vi, created: 2026-11-29, source: hand-written}\n"
    "fingerprint: {gpu: NVIDIA H200, cc: 9.0, gpus_per_node: 1, nodes: 1, links: socket, nccl: "
    "2.28.9}\n"
    "ll128: {allowed: false}\n"
    "collectives:\n"
    "  allreduce:\n"
    "    - ranks: 4\n"
    "      nodes: 4\n"
    "      rules:\n"
    "        - {min_bytes: 0, max_bytes: 64KiB, algo: ring, proto: ll}\n"
    "        - {min_bytes: 64KiB, max_bytes: inf, algo: tree, proto: simple}\n";

static bool sf_write(const char *path, mode_t mode)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    bool ok = fputs(sf_table, f) >= 0;
    ok = (fclose(f) == 0) && ok;
    return ok && chmod(path, mode) == 0;
}

static sf_case *sf_add(sf_case *c, int *n, const char *dir, const char *name, const char *rule,
                       const char *detail, bool waivable)
{
    sf_case *x = &c[(*n)++];
    memset(x, 0, sizeof *x);
    x->name = name;
    snprintf(x->path, sizeof x->path, "%s/%s", dir, name);
    x->rule = rule;
    x->detail = detail;
    x->waivable = waivable;
    return x;
}

/* Make every case under dir; returns how many (at most SF_MAX). */
static int sf_make(const char *dir, sf_case *c)
{
    int n = 0;
    char sub[4096], target[4096];
    sf_case *x;

    x = sf_add(c, &n, dir, "good.yaml", NULL, NULL, true);
    x->skip = !sf_write(x->path, 0644);
    x = sf_add(c, &n, dir, "readonly.yaml", NULL, NULL, true);
    x->skip = !sf_write(x->path, 0400);
    x = sf_add(c, &n, dir, "group-writable.yaml", "(rule mode)",
               "writable by its group (mode 0664)", true);
    x->skip = !sf_write(x->path, 0664);
    x = sf_add(c, &n, dir, "other-writable.yaml", "(rule mode)", "writable by others (mode 0646)",
               true);
    x->skip = !sf_write(x->path, 0646);
    x = sf_add(c, &n, dir, "world-writable.yaml", "(rule mode)",
               "writable by group and others (mode 0666)", true);
    x->skip = !sf_write(x->path, 0666);
    x = sf_add(c, &n, dir, "foreign-owner.yaml", "(rule owner)", "owned by uid 65534", true);
    x->skip = !sf_write(x->path, 0644) || chown(x->path, 65534, 65534) != 0;
    x = sf_add(c, &n, dir, "too-large.yaml", "(rule size)", "more than the limit of 64 MiB", false);
    x->skip = !sf_write(x->path, 0644) || truncate(x->path, (off_t)CCT_TABLE_MAX_FILE_BYTES + 1);
    x = sf_add(c, &n, dir, "a-directory.yaml", "(rule regular-file)", "it is a directory", false);
    x->skip = mkdir(x->path, 0755) != 0;
    x = sf_add(c, &n, dir, "a-fifo.yaml", "(rule regular-file)", "it is a FIFO", false);
    x->skip = mkfifo(x->path, 0644) != 0;
    x = sf_add(c, &n, dir, "a-socket.yaml", "(rule regular-file)", "it is a socket", false);
    {
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        x->skip = s < 0 || strlen(x->path) >= sizeof a.sun_path;
        if (!x->skip) {
            memcpy(a.sun_path, x->path, strlen(x->path) + 1);
            x->skip = bind(s, (struct sockaddr *)&a, sizeof a) != 0;
        }
        if (s >= 0)
            close(s);
    }
    x = sf_add(c, &n, dir, "dev-null.yaml", "(rule regular-file)",
               "it leads to /dev/null, which is a character device", false);
    x->skip = symlink("/dev/null", x->path) != 0;
    snprintf(target, sizeof target, "%s/good.yaml", dir);
    x = sf_add(c, &n, dir, "link-to-good.yaml", NULL, NULL, true);
    x->skip = symlink(target, x->path) != 0;
    snprintf(target, sizeof target, "%s/group-writable.yaml", dir);
    x = sf_add(c, &n, dir, "link-to-group-writable.yaml", "(rule mode)", "mode 0664", true);
    x->skip = symlink(target, x->path) != 0;
    x = sf_add(c, &n, dir, "link-to-directory.yaml", "(rule regular-file)", "which is a directory",
               false);
    snprintf(target, sizeof target, "%s/a-directory.yaml", dir);
    x->skip = symlink(target, x->path) != 0;

    /* folders: world-writable without and with the sticky bit, group-writable */
    snprintf(sub, sizeof sub, "%s/open-folder", dir);
    bool made = mkdir(sub, 0755) == 0 && chmod(sub, 0777) == 0;
    x = sf_add(c, &n, dir, "open-folder/table.yaml", "(rule directory)",
               "is writable by everyone without the sticky bit (mode 0777)", true);
    x->skip = !made || !sf_write(x->path, 0644);
    x = sf_add(c, &n, dir, "link-into-open-folder.yaml", "(rule directory)", "open-folder", true);
    snprintf(target, sizeof target, "%s/open-folder/table.yaml", dir);
    x->skip = !made || symlink(target, x->path) != 0;
    snprintf(sub, sizeof sub, "%s/sticky-folder", dir);
    made = mkdir(sub, 0755) == 0 && chmod(sub, 01777) == 0;
    x = sf_add(c, &n, dir, "sticky-folder/table.yaml", NULL, NULL, true);
    x->skip = !made || !sf_write(x->path, 0644);
    snprintf(sub, sizeof sub, "%s/group-folder", dir);
    made = mkdir(sub, 0755) == 0 && chmod(sub, 0775) == 0;
    x = sf_add(c, &n, dir, "group-folder/table.yaml", NULL, NULL, true);
    x->skip = !made || !sf_write(x->path, 0644);
    return n;
}

#endif
