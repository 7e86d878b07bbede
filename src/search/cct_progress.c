/*
 * cct_progress.c - progress display for searches (see cct_progress.h).
 *
 * The ETA extrapolates from the points measured by this process only, so a resumed run
 * whose first groups are skipped does not predict an absurdly short remaining time.
 */
#include "cct_progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cct_say.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *cct_format_duration(double s, char *buf, size_t len)
{
    if (s < 0)
        s = 0;
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
    else if (t >= 60)
        snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(buf, len, "%lds", t);
    return buf;
}

void cct_progress_init(cct_progress *p, int session, int n_sessions)
{
    p->session = session;
    p->n_sessions = n_sessions;
    p->tty = cct_say_terminal();
    p->start_s = now_s();
    p->last_print_s = 0.0;
    p->last_decile = -1;
    p->start_done = 0;
    p->started = false;
}

void cct_progress_update(void *arg, size_t done, size_t total, const char *what)
{
    cct_progress *p = arg;
    double t = now_s();
    if (!p->started) {
        p->started = true;
        p->start_done = 0;
    }
    double frac = total ? (double)done / (double)total : 1.0;
    double elapsed = t - p->start_s;
    char eta[32] = "?";
    if (done > p->start_done && done < total) {
        double rate = (double)(done - p->start_done) / (elapsed > 1e-3 ? elapsed : 1e-3);
        cct_format_duration((double)(total - done) / rate, eta, sizeof eta);
    } else if (done >= total) {
        snprintf(eta, sizeof eta, "0s");
    }
    if (p->tty) {
        char bar[31];
        int fill = (int)(frac * 30.0);
        for (int i = 0; i < 30; i++)
            bar[i] = i < fill ? '#' : '.';
        bar[30] = '\0';
        cct_say(CCT_SAY_ERR, "\r[%s] %3.0f%% %zu/%zu points  session %d/%d  %-24s ETA %-8s", bar,
                frac * 100.0, done, total, p->session + 1, p->n_sessions, what, eta);
        return;
    }
    int decile = (int)(frac * 10.0);
    if (decile != p->last_decile || t - p->last_print_s >= 30.0) {
        cct_say(CCT_SAY_ERR, "progress: session %d/%d %zu/%zu points (%.0f%%) at %s, ETA %s\n",
                p->session + 1, p->n_sessions, done, total, frac * 100.0, what, eta);
        p->last_decile = decile;
        p->last_print_s = t;
    }
}

void cct_progress_finish(cct_progress *p, const cct_schedule *s)
{
    char dur[32];
    if (p->tty)
        cct_say(CCT_SAY_ERR, "\n");
    cct_say(CCT_SAY_ERR,
            "session %d/%d: %zu points measured, %zu already stored, %zu pruned, %zu corrupt, "
            "%zu unsupported, %zu noisy (%zu re-measured), %zu cycles saved, %zu sizes confirmed "
            "in %s\n",
            p->session + 1, p->n_sessions, s->points_done, s->points_skipped, s->points_pruned,
            s->n_corrupt, s->n_unsupported, s->n_noisy, s->n_remeasured, s->cycles_saved,
            s->n_confirmed, cct_format_duration(now_s() - p->start_s, dur, sizeof dur));
}
