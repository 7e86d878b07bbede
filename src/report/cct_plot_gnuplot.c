/*
 * cct_plot_gnuplot.c - finding gnuplot and running it on a figure's script.
 *
 * gnuplot runs as a child process inside the output folder (the scripts name their files
 * relative to it, so a reviewer can rerun them there), with its stdout and stderr captured
 * through a pipe: library code never prints, and a failure's message carries gnuplot's own
 * first line.  A zero exit is not trusted alone: the four images must exist and be
 * non-empty, since gnuplot reports some problems (an unknown terminal) as warnings.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cct_plot_internal.h"

#define CAPTURE_MAX 4096

static bool executable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

cct_status cct_plot_find_gnuplot(const char *program, char *buf, size_t len, cct_error *err)
{
    if (strchr(program, '/')) {
        if (executable_file(program) && snprintf(buf, len, "%s", program) < (int)len)
            return CCT_OK;
        return cct_error_set(err, CCT_ENOTFOUND, "gnuplot program %s is not an executable file",
                             program);
    }
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n > 0 && snprintf(buf, len, "%.*s/%s", (int)n, p, program) < (int)len &&
            executable_file(buf))
            return CCT_OK;
        p += n + (end != NULL);
    }
    return cct_error_set(err, CCT_ENOTFOUND,
                         "%s not found on PATH: the plots need gnuplot (install it with `%s`)",
                         program, CCT_PLOT_GNUPLOT_HINT);
}

/* The first non-empty line of gnuplot's output, for the error message. */
static const char *first_line(char *out)
{
    char *p = out;
    while (*p == '\n' || *p == ' ')
        p++;
    char *nl = strchr(p, '\n');
    if (nl)
        *nl = '\0';
    return *p ? p : "(no output)";
}

static cct_status check_images(const cct_plot_figure *fig, const char *dir, size_t *n_images,
                               cct_error *err)
{
    static const char *const suffixes[] = {"-time.png", "-time.svg", "-busbw.png", "-busbw.svg"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char path[4096];
        cct_status st = cct_plot_path(path, sizeof path, dir, fig->name, suffixes[i], err);
        if (st != CCT_OK)
            return st;
        struct stat sb;
        if (stat(path, &sb) != 0 || sb.st_size == 0)
            return cct_error_set(err, CCT_EIO, "gnuplot did not write %s", path);
        (*n_images)++;
    }
    return CCT_OK;
}

cct_status cct_plot_run_gnuplot(const cct_plot_figure *fig, const char *gnuplot, const char *dir,
                                size_t *n_images, cct_error *err)
{
    char script[CCT_PLOT_NAME_MAX + 4];
    snprintf(script, sizeof script, "%s.gp", fig->name);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return cct_error_set(err, CCT_EIO, "cannot run gnuplot: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return cct_error_set(err, CCT_EIO, "cannot run gnuplot: %s", strerror(errno));
    }
    if (pid == 0) { /* child: only async-signal-safe calls until exec */
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        if (chdir(dir) != 0)
            _exit(126);
        char *const argv[] = {(char *)"gnuplot", script, NULL};
        execv(gnuplot, argv);
        _exit(127);
    }
    close(fds[1]);
    char out[CAPTURE_MAX + 1];
    size_t used = 0;
    char sink[1024];
    for (;;) { /* read everything, keep the start: a full pipe would stall gnuplot */
        ssize_t k = used < CAPTURE_MAX ? read(fds[0], out + used, CAPTURE_MAX - used)
                                       : read(fds[0], sink, sizeof sink);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        if (used < CAPTURE_MAX)
            used += (size_t)k;
    }
    out[used] = '\0';
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 126)
        return cct_error_set(err, CCT_EIO, "cannot enter %s to run gnuplot", dir);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return cct_error_set(err, CCT_EIO, "cannot execute %s", gnuplot);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return cct_error_set(err, CCT_EIO, "gnuplot failed on %s/%s (%s %d): %s", dir, script,
                             WIFEXITED(status) ? "exit status" : "signal",
                             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                             first_line(out));
    return check_images(fig, dir, n_images, err);
}
