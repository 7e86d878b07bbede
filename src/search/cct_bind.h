/*
 * cct_bind.h - bind a rank process to CPU cores close to its GPU (hwloc).
 *
 * NCCL's proxy threads and the launch path run on the CPU; running them on the socket
 * that owns the GPU's PCIe root keeps host latencies (and their variance) down.  When
 * several rank processes share one GPU, the GPU's local cores are split between them.
 */
#ifndef CCT_BIND_H
#define CCT_BIND_H

#include <stddef.h>

#include "cct_error.h"

/* Bind the calling process to its share (slot of share) of the cores local to CUDA
 * device `device`.  On success `where` describes the cores ("cores 0-7 of 16"). */
cct_status cct_bind_to_gpu(int device, int slot, int share, char *where, size_t len,
                           cct_error *err);

#endif
