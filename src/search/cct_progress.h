/*
 * cct_progress.h - progress of a long search, through the command's message sink (cct_say.h).
 *
 * On a terminal: one line redrawn in place with a bar, points done/total, the group being
 * measured and an ETA.  Elsewhere (logs, CI): a plain line at most every 30 s and at each
 * 10 % step, so a log stays readable and greppable.
 */
#ifndef CCT_PROGRESS_H
#define CCT_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "cct_schedule.h"

typedef struct cct_progress {
    int session, n_sessions;
    bool tty;
    double start_s, last_print_s;
    int last_decile;
    size_t start_done; /* points already stored when this process started (resume) */
    bool started;
} cct_progress;

void cct_progress_init(cct_progress *p, int session, int n_sessions);
/* cct_progress_fn for cct_schedule: arg is a cct_progress. */
void cct_progress_update(void *arg, size_t done, size_t total, const char *what);
/* Final line with the session's counters. */
void cct_progress_finish(cct_progress *p, const cct_schedule *sched);

/* "1h02m", "3m12s", "45s" */
const char *cct_format_duration(double seconds, char *buf, size_t len);

#endif
