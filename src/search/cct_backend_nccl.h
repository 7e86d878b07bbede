/*
 * cct_backend_nccl.h - the real measurement backend: CUDA + NCCL + the ccltune plugin.
 *
 * One instance per rank process.  It owns the device buffers, a stream, events, the NCCL
 * communicator (non-blocking, so the watchdog can abort it) and the handle on the plugin's
 * control interface that switches algorithm/protocol/channels per call.
 *
 * Ownership: cct_nccl_backend_create() allocates everything; cct_nccl_backend_destroy()
 * releases it (and finalises the communicator, or aborts it after a hang).
 */
#ifndef CCT_BACKEND_NCCL_H
#define CCT_BACKEND_NCCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_backend.h"

#define CCT_NCCL_UNIQUE_ID_BYTES 128
/* Exit status of a rank whose NCCL call blocked on the host past the watchdog. */
#define CCT_BACKEND_EXIT_STUCK 4

typedef struct cct_nccl_params {
    int rank, nranks;
    int device;
    const unsigned char *unique_id; /* CCT_NCCL_UNIQUE_ID_BYTES, the same on every rank */
    uint64_t max_bytes;             /* largest message of the session */
    unsigned max_align;             /* largest alignment offset of the session */
    const char *plugin_path;        /* libnccl-tuner-ccltune.so (also NCCL_TUNER_PLUGIN) */
    double timeout_s;               /* watchdog: longest wait for one call */
    uint32_t seed;
    int max_pipe_ops; /* largest group of the session: buffers for that many ops (0 reads 1) */
    bool reg_buff;    /* the session has registered-buffer configurations */
    /* 'default' configurations run on a second communicator initialised without the table's
     * NCCL model constants (ccltune bench of a table with nccl_constants) */
    bool default_without_constants;
} cct_nccl_params;

/* Rank 0 calls this before the others start; the id travels to every rank. */
cct_status cct_nccl_get_unique_id(unsigned char id[CCT_NCCL_UNIQUE_ID_BYTES], cct_error *err);

cct_status cct_nccl_backend_create(const cct_nccl_params *params, cct_backend *backend,
                                   cct_error *err);
void cct_nccl_backend_destroy(cct_backend *backend);

/* The probe of cct_model_capture.h: join a communicator of nranks ranks on device, then
 * finalise and destroy it -- NCCL prints its model while it is set up.  A host-side guard
 * ends the process with CCT_BACKEND_EXIT_STUCK if set-up blocks past 3 x (2 x timeout_s). */
cct_status cct_nccl_probe_comm(int rank, int nranks, int device,
                               const unsigned char unique_id[CCT_NCCL_UNIQUE_ID_BYTES],
                               double timeout_s, cct_error *err);

/* "2.28.9" from ncclGetVersion. */
cct_status cct_nccl_version(char *buf, size_t len, cct_error *err);

#endif
