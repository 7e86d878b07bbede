/*
 * cct_pat.h - where NCCL offers its PAT algorithm (Parallel Aggregated Trees).
 *
 * From NCCL's source (src/graph/tuning.cc, src/enqueue.cc, src/device/all_gather.h and
 * reduce_scatter.h of 2.23 to 2.30): PAT exists since 2.23, for AllGather and ReduceScatter
 * only, with the Simple protocol only (no LL or LL128 kernel), and NCCL enables it by default
 * (NCCL_PAT_ENABLE unset) only with one rank per node (nNodes == nRanks), the network not
 * offloaded to the device, and compute capability 6.0 or more (checked since 2.26).  It is
 * NCCL's default for those collectives at small sizes in exactly the shape of rank processes
 * that are each their own NCCL node.  A ReduceScatter with a scaling reduction (average,
 * premultiplied sum) never runs PAT; ccltune measures sums.
 *
 * The search forces PAT by default where this says NCCL offers it; anywhere else a forced
 * PAT is what NCCL says about it at run time (recorded unsupported where it ignores it).
 */
#ifndef CCT_PAT_H
#define CCT_PAT_H

#include <stdbool.h>

#define CCT_NCCL_PAT_SINCE 22300 /* NCCL_VERSION_CODE of the first release with PAT */

/* True when PAT has a kernel for (coll, proto) in some NCCL release (cct_coll, cct_proto). */
bool cct_pat_has_kernel(int coll, int proto);

/* True when an NCCL of nccl_version (NCCL_VERSION_CODE; <= 0: unknown, taken as recent
 * enough) offers PAT/proto for coll by default at ranks ranks on nodes nodes. */
bool cct_pat_offered(int coll, int proto, int ranks, int nodes, int nccl_version);

#endif
