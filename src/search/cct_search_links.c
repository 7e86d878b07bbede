/*
 * cct_search_links.c - the link matrix a search run stores (table link_matrices, schema 4).
 *
 * On a GPU the launcher measures the links once before the run's first session by running
 * `ccltune probe --links --json` for the run's topology as a child process and keeping what
 * it prints: the stored text is exactly the probe's answer, and a probe that crashes or hangs
 * (it is killed after CCT_LINKS_PROBE_TIMEOUT_S) costs the run its matrix, never the run.
 * --no-links skips it.  The replay backend has no links of its own, so it stores none unless
 * --links-from names a matrix recorded on the box the replayed store came from: a recorded
 * store and its recorded matrix then travel together.  Whatever is stored is first read with
 * the reader `fit` uses later (cct_links_parse), so a bad file is a FILE:LINE:COL error before
 * any run starts and never a stored matrix that no later command can read.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cct_file.h"
#include "cct_json.h"
#include "cct_probe_links.h"
#include "cct_search.h"

/* Check text as a link matrix named name. */
static cct_status check(const char *text, size_t len, const char *name, cct_error *err)
{
    if (memchr(text, '\0', len))
        return cct_error_set(err, CCT_EINVAL, "%s: a NUL byte; a link matrix is JSON text", name);
    cct_links *l = malloc(sizeof *l);
    if (!l)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    cct_status st = cct_links_parse(text, len, name, l, NULL, err);
    free(l);
    return st;
}

/* Make text (checked: st is CCT_OK) the run's link matrix, replacing one loaded before;
 * after a failure (st) free it instead.  Returns st. */
static cct_status keep(cct_search_opts *o, char *text, cct_status st)
{
    if (st != CCT_OK) {
        free(text);
        return st;
    }
    free(o->links_json);
    o->links_json = text;
    return CCT_OK;
}

cct_status cct_search_links_load(cct_search_opts *o, cct_error *err)
{
    if (!o->links_from)
        return CCT_OK;
    char *data = NULL;
    size_t len = 0;
    cct_status st = cct_read_file(o->links_from, &data, &len, err);
    if (st == CCT_OK)
        st = check(data, len, o->links_from, err);
    return keep(o, data, st);
}

void cct_search_links_free(cct_search_opts *o)
{
    free(o->links_json);
    o->links_json = NULL;
}

/* Wait for pid up to timeout_s; kill it after that.  Returns its exit code, 128 + signal, or
 * -1 when it was killed for taking too long. */
static int wait_child(pid_t pid, double timeout_s)
{
    struct timespec start, now, nap = {0, 20000000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        int st;
        pid_t got = waitpid(pid, &st, WNOHANG);
        if (got == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (got < 0 && errno != EINTR)
            return 127;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - start.tv_sec) + 1e-9 * (double)(now.tv_nsec - start.tv_nsec) >
            timeout_s) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        nanosleep(&nap, NULL);
    }
}

/* The probe's own sentence from its failure JSON ({"ok": false, "error": "..."}), or "". */
static void probe_error(const char *text, size_t len, char *out, size_t out_len)
{
    out[0] = '\0';
    cct_json_doc doc;
    cct_json_init(&doc);
    cct_error ignored;
    if (cct_json_parse(&doc, text, len, "probe", &ignored) == CCT_OK) {
        const cct_json_node *e = cct_json_member(&doc, cct_json_root(&doc), "error");
        if (e && e->type == CCT_JSON_STRING)
            snprintf(out, out_len, "%s", cct_json_text(&doc, e));
    }
    cct_json_destroy(&doc);
}

/* The child: stdout to out_fd, stderr discarded (the failure JSON says why), then exec. */
static void run_probe(const char *exe, int out_fd, int ranks, int nodes, int ranks_per_gpu)
{
    char r[16], n[16], g[16];
    snprintf(r, sizeof r, "%d", ranks);
    snprintf(n, sizeof n, "%d", nodes);
    snprintf(g, sizeof g, "%d", ranks_per_gpu);
    int null_fd = open("/dev/null", O_RDWR);
    dup2(out_fd, STDOUT_FILENO);
    if (null_fd >= 0) {
        dup2(null_fd, STDIN_FILENO);
        dup2(null_fd, STDERR_FILENO);
    }
    char *argv[] = {(char *)"ccltune",
                    (char *)"probe",
                    (char *)"--links",
                    (char *)"--json",
                    (char *)"--ranks",
                    r,
                    (char *)"--nodes",
                    n,
                    (char *)"--ranks-per-gpu",
                    g,
                    NULL};
    execv(exe, argv);
    _exit(127);
}

cct_status cct_search_links_probe(cct_search_opts *o, const char *exe, int ranks, int nodes,
                                  double timeout_s, cct_error *err)
{
    char path[] = "/tmp/ccltune-links-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return cct_error_set(err, CCT_EIO, "a scratch file for the link probe: %s",
                             strerror(errno));
    unlink(path);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        run_probe(exe, fd, ranks, nodes, o->ranks_per_gpu);
    if (pid < 0) {
        close(fd);
        return cct_error_set(err, CCT_EIO, "starting the link probe: %s", strerror(errno));
    }
    int code = wait_child(pid, timeout_s);
    off_t size = lseek(fd, 0, SEEK_END);
    char *text = size >= 0 && size < (off_t)CCT_READ_MAX_BYTES ? malloc((size_t)size + 1) : NULL;
    ssize_t got = text ? pread(fd, text, (size_t)size, 0) : -1;
    close(fd);
    cct_status st = CCT_OK;
    if (code == -1)
        st = cct_error_set(err, CCT_EIO, "`ccltune probe --links` did not finish in %.0f s",
                           timeout_s);
    else if (!text || got != (ssize_t)size)
        st = cct_error_set(err, CCT_EIO, "reading what `ccltune probe --links` printed");
    if (st == CCT_OK) {
        text[size] = '\0';
        char why[512];
        probe_error(text, (size_t)size, why, sizeof why);
        if (code != 0)
            st = cct_error_set(err, CCT_EIO, "`ccltune probe --links` exited with %d%s%s", code,
                               why[0] ? ": " : "", why);
        else
            st = check(text, (size_t)size, "`ccltune probe --links --json`", err);
    }
    return keep(o, text, st);
}
