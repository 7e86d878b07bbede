/*
 * cct_cli_import_rec.h - `ccltune import RECORDING...`: recorded jobs into the store as
 * production observations (cct_import_recording.h), one run whose source is
 * "production".  cmd_import.c decides that its operands are recordings and calls this.
 */
#ifndef CCT_CLI_IMPORT_REC_H
#define CCT_CLI_IMPORT_REC_H

#include <stdbool.h>

typedef struct cct_rec_import_args {
    const char *store;
    const char *table; /* the table the job ran with; NULL: NCCL's own choices */
    const char *nccl;  /* --nccl, NULL when not given */
    bool dry_run;
} cct_rec_import_args;

/* Whether path is a folder or a file that starts like a recording. */
bool cct_cli_is_recording(const char *path);

/* Import paths (files or folders of *.rec); returns the exit status (0 imported, 1 a
 * recording or the table was refused or the store failed), having printed what happened. */
int cct_cli_import_recordings(const cct_rec_import_args *a, char **paths, int n, int argc,
                              char **argv);

#endif
