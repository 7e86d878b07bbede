/*
 * cct_bind.c - CPU binding near the GPU with hwloc (see cct_bind.h).
 *
 * The GPU's local CPU set comes from hwloc's CUDA runtime helper (sysfs on Linux).  The
 * cores inside it are numbered in hwloc's logical order and cut into `share` contiguous
 * runs, one per rank process on that GPU; with fewer cores than ranks, ranks wrap around.
 */
#include "cct_bind.h"

#include <cuda_runtime.h>
#include <hwloc.h>
#include <hwloc/cudart.h>
#include <stdio.h>

cct_status cct_bind_to_gpu(int device, int slot, int share, char *where, size_t len, cct_error *err)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0)
        return cct_error_set(err, CCT_EIO, "hwloc could not read the machine topology");
    cct_status st = CCT_OK;
    hwloc_cpuset_t local = hwloc_bitmap_alloc();
    hwloc_cpuset_t mine = hwloc_bitmap_alloc();
    if (!local || !mine) {
        st = cct_error_set(err, CCT_ENOMEM, "out of memory");
        goto out;
    }
    if (hwloc_cudart_get_device_cpuset(topo, device, local) != 0 || hwloc_bitmap_iszero(local))
        hwloc_bitmap_copy(local, hwloc_topology_get_allowed_cpuset(topo));
    int ncores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, local, HWLOC_OBJ_CORE);
    if (share < 1)
        share = 1;
    if (ncores <= 0) {
        hwloc_bitmap_copy(mine, local);
    } else {
        int per = ncores / share;
        if (per < 1)
            per = 1;
        int first = (slot * per) % ncores;
        for (int k = 0; k < per; k++) {
            hwloc_obj_t core = hwloc_get_obj_inside_cpuset_by_type(topo, local, HWLOC_OBJ_CORE,
                                                                   (first + k) % ncores);
            if (core)
                hwloc_bitmap_or(mine, mine, core->cpuset);
        }
    }
    if (hwloc_set_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) != 0) {
        st = cct_error_set(err, CCT_EIO, "hwloc could not bind to the cores of GPU %d", device);
        goto out;
    }
    if (where) {
        char list[256];
        hwloc_bitmap_list_snprintf(list, sizeof list, mine);
        snprintf(where, len, "PUs %s (GPU %d has %d local cores, %d rank(s) share them)", list,
                 device, ncores, share);
    }
out:
    hwloc_bitmap_free(local);
    hwloc_bitmap_free(mine);
    hwloc_topology_destroy(topo);
    return st;
}
