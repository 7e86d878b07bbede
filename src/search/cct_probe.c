/*
 * cct_probe.c - collects the machine's fingerprint (see cct_probe.h).
 *
 * Sources, in order of authority: the CUDA runtime (GPUs, compute capability, PCI ids,
 * peer access), NVML through dlopen (active NVLinks; missing NVML only loses that fact),
 * hwloc's I/O tree (PCIe bridges between devices, NICs, NUMA locality), and NCCL itself
 * (version).  PCIe paths are classified as NCCL does: PIX when both devices sit under one
 * PCIe switch, PXB through several switches, PHB through the host bridge of one CPU, SYS
 * across CPUs.  Nothing here initialises a CUDA context beyond device queries.
 */
#include "cct_json_write.h"
#include "cct_probe.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <hwloc.h>
#include <nccl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cct_ll128.h"
#include "cct_probe_links.h"

/* ---- NVML, opened at run time ---- */
typedef struct nvml_api {
    void *lib;
    int (*init)(void);
    int (*shutdown)(void);
    int (*by_bus)(const char *, void **);
    int (*link_state)(void *, unsigned, int *);
} nvml_api;

static bool nvml_open(nvml_api *n)
{
    memset(n, 0, sizeof *n);
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n->lib)
        return false;
    n->init = (int (*)(void))dlsym(n->lib, "nvmlInit_v2");
    n->shutdown = (int (*)(void))dlsym(n->lib, "nvmlShutdown");
    n->by_bus = (int (*)(const char *, void **))dlsym(n->lib, "nvmlDeviceGetHandleByPciBusId_v2");
    n->link_state = (int (*)(void *, unsigned, int *))dlsym(n->lib, "nvmlDeviceGetNvLinkState");
    if (!n->init || !n->shutdown || !n->by_bus || !n->link_state || n->init() != 0) {
        dlclose(n->lib);
        n->lib = NULL;
        return false;
    }
    return true;
}

static int nvml_active_links(nvml_api *n, const char *bus_id)
{
    void *dev = NULL;
    if (n->by_bus(bus_id, &dev) != 0)
        return -1;
    int active = 0;
    for (unsigned link = 0; link < 18; link++) {
        int state = 0;
        if (n->link_state(dev, link, &state) == 0 && state == 1)
            active++;
    }
    return active;
}

/* ---- hwloc PCIe paths ---- */
static hwloc_obj_t pci_by_busid(hwloc_topology_t topo, const char *bus_id)
{
    unsigned dom = 0, bus = 0, dev = 0, fn = 0;
    if (sscanf(bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
        return NULL;
    return hwloc_get_pcidev_by_busid(topo, dom, bus, dev, fn);
}

static int bridges_up_to(hwloc_obj_t obj, hwloc_obj_t ancestor)
{
    int n = 0;
    for (hwloc_obj_t o = obj->parent; o && o != ancestor; o = o->parent)
        if (o->type == HWLOC_OBJ_BRIDGE)
            n++;
    return n;
}

static int classify_pci(hwloc_topology_t topo, hwloc_obj_t a, hwloc_obj_t b)
{
    if (!a || !b)
        return CCT_PATH_UNKNOWN;
    hwloc_obj_t anc = hwloc_get_common_ancestor_obj(topo, a, b);
    if (anc && anc->type == HWLOC_OBJ_BRIDGE &&
        anc->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI) {
        /* under a PCIe switch: directly (PIX) or through further switches (PXB) */
        return (bridges_up_to(a, anc) <= 1 && bridges_up_to(b, anc) <= 1) ? CCT_PATH_PIX
                                                                          : CCT_PATH_PXB;
    }
    hwloc_obj_t ca = hwloc_get_non_io_ancestor_obj(topo, a);
    hwloc_obj_t cb = hwloc_get_non_io_ancestor_obj(topo, b);
    if (ca && cb && hwloc_bitmap_isequal(ca->cpuset, cb->cpuset))
        return CCT_PATH_PHB;
    return CCT_PATH_SYS;
}

static int numa_of(hwloc_topology_t topo, hwloc_obj_t pci)
{
    if (!pci)
        return -1;
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, pci);
    if (!anc)
        return -1;
    hwloc_obj_t numa =
        hwloc_get_next_obj_covering_cpuset_by_type(topo, anc->cpuset, HWLOC_OBJ_NUMANODE, NULL);
    return numa ? (int)numa->logical_index : -1;
}

static void probe_hwloc(cct_probe_info *info)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return;
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return;
    }
    hwloc_obj_t gpu_obj[CCT_PROBE_MAX_GPUS];
    for (int i = 0; i < info->n_gpus; i++) {
        gpu_obj[i] = pci_by_busid(topo, info->gpus[i].bus_id);
        info->gpus[i].numa = numa_of(topo, gpu_obj[i]);
    }
    for (int i = 0; i < info->n_gpus; i++)
        for (int j = 0; j < info->n_gpus; j++)
            if (i != j && info->path[i][j] == CCT_PATH_UNKNOWN)
                info->path[i][j] = classify_pci(topo, gpu_obj[i], gpu_obj[j]);
    hwloc_obj_t os = NULL;
    while ((os = hwloc_get_next_osdev(topo, os)) != NULL) {
        if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK &&
            os->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS)
            continue;
        if (!os->name || strcmp(os->name, "lo") == 0 || info->n_nics >= CCT_PROBE_MAX_NICS)
            continue;
        hwloc_obj_t pci = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PCI_DEVICE, os);
        snprintf(info->nics[info->n_nics++], sizeof info->nics[0], "%s%s", os->name,
                 pci ? "" : " (virtual)");
        for (int i = 0; i < info->n_gpus; i++) {
            int p = pci ? classify_pci(topo, gpu_obj[i], pci) : CCT_PATH_SYS;
            if (info->gpus[i].nic_path == CCT_PATH_UNKNOWN || p < info->gpus[i].nic_path)
                info->gpus[i].nic_path = p;
        }
    }
    hwloc_topology_destroy(topo);
}

/* The CUDA version NCCL itself was built with (CUDART_VERSION, e.g. 13000), read from the
 * "NCCL version 2.28.9+cuda13.0" string every NCCL library carries; 0 when not found.  It
 * decides NCCL's one LL128 exception (CUDA 11.8, ring allreduce on 2 ranks at cc 9.0). */
int cct_probe_nccl_cuda(void)
{
    Dl_info dl;
    if (!dladdr((void *)ncclGetVersion, &dl) || !dl.dli_fname)
        return 0;
    FILE *f = fopen(dl.dli_fname, "rb");
    if (!f)
        return 0;
    static const char key[] = "NCCL version ";
    char buf[1 << 20];
    size_t keep = 0;
    int found = 0;
    for (;;) {
        size_t n = fread(buf + keep, 1, sizeof buf - keep, f);
        if (n == 0)
            break;
        size_t len = keep + n;
        for (size_t i = 0; i + sizeof key + 16 < len && !found; i++) {
            if (buf[i] != 'N' || memcmp(buf + i, key, sizeof key - 1) != 0)
                continue;
            const char *p = memchr(buf + i, '+', 24);
            int major = 0, minor = 0;
            if (p && sscanf(p, "+cuda%d.%d", &major, &minor) == 2 && major > 0)
                found = major * 1000 + minor * 10;
        }
        if (found)
            break;
        keep = len < 64 ? len : 64; /* a match may straddle two reads */
        memmove(buf, buf + len - keep, keep);
    }
    fclose(f);
    return found;
}

static void version_text(int v, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

cct_status cct_probe_collect(cct_probe_info *info, cct_error *err)
{
    memset(info, 0, sizeof *info);
    gethostname(info->host, sizeof info->host - 1);
    int v = 0;
    if (ncclGetVersion(&v) == ncclSuccess) {
        info->nccl_code = v;
        snprintf(info->nccl, sizeof info->nccl, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
    }
    info->nccl_cuda = cct_probe_nccl_cuda();
    if (cudaRuntimeGetVersion(&v) == cudaSuccess)
        version_text(v, info->cuda_runtime, sizeof info->cuda_runtime);
    int driver = 0;
    cudaError_t e = cudaDriverGetVersion(&driver);
    if (e == cudaSuccess && driver > 0)
        version_text(driver, info->cuda_driver, sizeof info->cuda_driver);
    int n = 0;
    e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n <= 0)
        return cct_error_set(err, CCT_ENOGPU, "no GPU found on this machine (%s)",
                             e == cudaSuccess ? "the CUDA runtime sees 0 devices"
                             : e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice
                                 ? "no NVIDIA driver or device is available"
                                 : cudaGetErrorString(e));
    if (n > CCT_PROBE_MAX_GPUS)
        n = CCT_PROBE_MAX_GPUS;
    info->n_gpus = n;
    nvml_api nvml;
    info->nvml = nvml_open(&nvml);
    for (int i = 0; i < n; i++) {
        cct_probe_gpu *g = &info->gpus[i];
        struct cudaDeviceProp prop;
        if ((e = cudaGetDeviceProperties(&prop, i)) != cudaSuccess)
            return cct_error_set(err, CCT_ECUDA, "GPU %d: %s", i, cudaGetErrorString(e));
        snprintf(g->name, sizeof g->name, "%s", prop.name);
        g->cc = prop.major * 10 + prop.minor;
        g->mem_bytes = prop.totalGlobalMem;
        g->sms = prop.multiProcessorCount;
        cudaDeviceGetPCIBusId(g->bus_id, sizeof g->bus_id, i);
        g->nvlinks = info->nvml ? nvml_active_links(&nvml, g->bus_id) : -1;
        g->numa = -1;
        g->nic_path = CCT_PATH_UNKNOWN;
        for (int j = 0; j < CCT_PROBE_MAX_GPUS; j++)
            info->path[i][j] = i == j ? CCT_PATH_LOC : CCT_PATH_UNKNOWN;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j)
                continue;
            int access = 0;
            cudaDeviceGetP2PAttribute(&access, cudaDevP2PAttrAccessSupported, i, j);
            if (access && info->gpus[i].nvlinks > 0 && info->gpus[j].nvlinks > 0)
                info->path[i][j] = CCT_PATH_NVL;
        }
    if (info->nvml) {
        nvml.shutdown();
        dlclose(nvml.lib);
    }
    probe_hwloc(info);
    return CCT_OK;
}

static int worst_gpu_path(const cct_probe_info *info)
{
    int worst = CCT_PATH_LOC;
    for (int i = 0; i < info->n_gpus; i++)
        for (int j = 0; j < info->n_gpus; j++)
            if (info->path[i][j] > worst)
                worst = info->path[i][j];
    return worst;
}

static int worst_nic_path(const cct_probe_info *info)
{
    int worst = CCT_PATH_UNKNOWN;
    for (int i = 0; i < info->n_gpus; i++)
        if (info->gpus[i].nic_path > worst)
            worst = info->gpus[i].nic_path;
    return worst;
}

const char *cct_probe_links(const cct_probe_info *info, int nodes, int ranks_per_gpu)
{
    if (ranks_per_gpu > 1)
        return "socket";
    if (nodes > 1)
        return "net";
    if (info->n_gpus < 2)
        return "local"; /* one GPU, one rank: nothing to link */
    return worst_gpu_path(info) <= CCT_PATH_NVB ? "nvlink" : "pcie";
}

bool cct_probe_ll128(const cct_probe_info *info, int ranks, int nodes, int ranks_per_gpu,
                     char *reason, size_t len)
{
    cct_ll128_query q = cct_ll128_query_blank();
    q.nccl_version = info->nccl_code;
    q.min_cc = q.max_cc = info->n_gpus ? info->gpus[0].cc : 0;
    for (int i = 0; i < info->n_gpus; i++) {
        if (info->gpus[i].cc < q.min_cc)
            q.min_cc = info->gpus[i].cc;
        if (info->gpus[i].cc > q.max_cc)
            q.max_cc = info->gpus[i].cc;
    }
    q.nranks = ranks;
    q.cudart_version = info->nccl_cuda;
    q.coll = CCT_COLL_ALLREDUCE;
    q.algo = CCT_ALGO_RING;
    if (ranks_per_gpu > 1) {
        /* one rank per NCCL "node", each alone on its node, joined by NET/Socket */
        q.intra_path = CCT_PATH_LOC;
        int nic = worst_nic_path(info);
        q.inter_path = nic == CCT_PATH_UNKNOWN ? CCT_PATH_SYS : nic;
    } else {
        q.intra_path = worst_gpu_path(info);
        /* NCCL's single-node graphs start typeInter at PIX and never raise it */
        q.inter_path = nodes > 1 ? worst_nic_path(info) : CCT_PATH_PIX;
    }
    char why[256];
    cct_ll128_verdict v = cct_ll128_check(&q, why, sizeof why);
    /* the CUDA 11.8 exception needs NCCL's build CUDA version; treat "unless" as blocked
     * for that one case only, which is what NCCL does on 11.8 builds */
    bool allowed = v == CCT_LL128_ALLOWED || (v == CCT_LL128_UNLESS_CUDA_11_8 && ranks != 2);
    if (reason) {
        if (ranks_per_gpu > 1)
            snprintf(reason, len,
                     "%s (ranks share a GPU and are joined over sockets; GPU-to-NIC "
                     "path %s)",
                     why, cct_path_name(q.inter_path));
        else
            snprintf(reason, len, "%s", why);
    }
    return allowed;
}

void cct_probe_fingerprint(const cct_probe_info *info, int ranks, int nodes, int ranks_per_gpu,
                           cct_store_fingerprint *fp)
{
    memset(fp, 0, sizeof *fp);
    const char *name = info->n_gpus ? info->gpus[0].name : "?";
    size_t len = strnlen(name, sizeof fp->gpu - 1); /* GPU names are far below 128 bytes */
    memcpy(fp->gpu, name, len);
    fp->gpu[len] = '\0';
    fp->cc = info->n_gpus ? info->gpus[0].cc : 0;
    fp->gpus_per_node = info->n_gpus;
    fp->nodes = nodes;
    fp->ranks_per_gpu = ranks_per_gpu;
    snprintf(fp->links, sizeof fp->links, "%s", cct_probe_links(info, nodes, ranks_per_gpu));
    snprintf(fp->nccl, sizeof fp->nccl, "%s", info->nccl);
    snprintf(fp->cuda, sizeof fp->cuda, "%s", info->cuda_driver);
    snprintf(fp->host, sizeof fp->host, "%s", info->host);
    fp->ll128_allowed = cct_probe_ll128(info, ranks, nodes, ranks_per_gpu, fp->ll128_reason,
                                        sizeof fp->ll128_reason);
}

void cct_probe_print(FILE *out, const cct_probe_info *info, int ranks, int nodes, int ranks_per_gpu)
{
    fprintf(out, "host:          %s\n", info->host);
    fprintf(out, "NCCL:          %s (built with CUDA %d.%d)\n", info->nccl[0] ? info->nccl : "?",
            info->nccl_cuda / 1000, (info->nccl_cuda % 1000) / 10);
    fprintf(out, "CUDA:          driver %s, runtime %s\n", info->cuda_driver, info->cuda_runtime);
    fprintf(out, "NVML:          %s\n",
            info->nvml ? "yes" : "not available (NVLink state unknown)");
    fprintf(out, "GPUs:          %d\n", info->n_gpus);
    for (int i = 0; i < info->n_gpus; i++) {
        const cct_probe_gpu *g = &info->gpus[i];
        char nv[16];
        snprintf(nv, sizeof nv, "%d", g->nvlinks);
        fprintf(out,
                "  GPU %d: %s, cc %d.%d, %zu GiB, %d SMs, PCI %s, NUMA %d, NVLinks %s, "
                "closest NIC %s\n",
                i, g->name, g->cc / 10, g->cc % 10, g->mem_bytes >> 30, g->sms, g->bus_id, g->numa,
                g->nvlinks < 0 ? "?" : nv,
                g->nic_path == CCT_PATH_UNKNOWN ? "-" : cct_path_name(g->nic_path));
    }
    if (info->n_gpus > 1) {
        fprintf(out, "links:        ");
        for (int j = 0; j < info->n_gpus; j++)
            fprintf(out, " GPU%-2d", j);
        fputc('\n', out);
        for (int i = 0; i < info->n_gpus; i++) {
            fprintf(out, "  GPU%-2d      ", i);
            for (int j = 0; j < info->n_gpus; j++)
                fprintf(out, " %-5s", i == j ? "X" : cct_path_name(info->path[i][j]));
            fputc('\n', out);
        }
    }
    fprintf(out, "NICs:          %d", info->n_nics);
    for (int i = 0; i < info->n_nics; i++)
        fprintf(out, "%s%s", i ? ", " : " (", info->nics[i]);
    fprintf(out, "%s\n", info->n_nics ? ")" : "");
    char reason[512];
    bool ok = cct_probe_ll128(info, ranks, nodes, ranks_per_gpu, reason, sizeof reason);
    fprintf(out, "topology:      %d ranks, %d nodes, %d rank(s) per GPU, links %s\n", ranks, nodes,
            ranks_per_gpu, cct_probe_links(info, nodes, ranks_per_gpu));
    fprintf(out, "LL128:         %s: %s\n", ok ? "allowed" : "not allowed", reason);
}

void cct_probe_print_json(FILE *out, const cct_probe_info *info, int ranks, int nodes,
                          int ranks_per_gpu)
{
    cct_probe_print_json_links(out, info, ranks, nodes, ranks_per_gpu, NULL);
}

void cct_probe_print_json_links(FILE *out, const cct_probe_info *info, int ranks, int nodes,
                                int ranks_per_gpu, const struct cct_links *links)
{
    char reason[512];
    bool ok = cct_probe_ll128(info, ranks, nodes, ranks_per_gpu, reason, sizeof reason);
    fprintf(out, "{\"ok\": true, \"host\": ");
    cct_json_write_string(out, info->host);
    fprintf(out, ", \"nccl\": ");
    cct_json_write_string(out, info->nccl);
    fprintf(out, ", \"cuda_driver\": ");
    cct_json_write_string(out, info->cuda_driver);
    fprintf(out, ", \"gpus\": [");
    for (int i = 0; i < info->n_gpus; i++) {
        const cct_probe_gpu *g = &info->gpus[i];
        fprintf(out, "%s{\"name\": ", i ? ", " : "");
        cct_json_write_string(out, g->name);
        fprintf(out, ", \"cc\": \"%d.%d\", \"bus_id\": ", g->cc / 10, g->cc % 10);
        cct_json_write_string(out, g->bus_id);
        fprintf(out,
                ", \"memory_bytes\": %zu, \"sms\": %d, \"nvlinks\": %d, \"numa\": %d, "
                "\"nic_path\": \"%s\"}",
                g->mem_bytes, g->sms, g->nvlinks, g->numa,
                g->nic_path == CCT_PATH_UNKNOWN ? "" : cct_path_name(g->nic_path));
    }
    fprintf(out, "], \"links\": [");
    for (int i = 0; i < info->n_gpus; i++) {
        fprintf(out, "%s[", i ? ", " : "");
        for (int j = 0; j < info->n_gpus; j++)
            fprintf(out, "%s\"%s\"", j ? ", " : "", cct_path_name(info->path[i][j]));
        fputc(']', out);
    }
    fprintf(out, "], \"nics\": [");
    for (int i = 0; i < info->n_nics; i++) {
        fprintf(out, "%s", i ? ", " : "");
        cct_json_write_string(out, info->nics[i]);
    }
    fprintf(out,
            "], \"topology\": {\"ranks\": %d, \"nodes\": %d, \"ranks_per_gpu\": %d, "
            "\"links\": \"%s\"}, \"ll128\": {\"allowed\": %s, \"reason\": ",
            ranks, nodes, ranks_per_gpu, cct_probe_links(info, nodes, ranks_per_gpu),
            ok ? "true" : "false");
    cct_json_write_string(out, reason);
    fputc('}', out);
    if (links) {
        fprintf(out, ", ");
        cct_links_print_json(out, links, info);
    }
    fprintf(out, "}\n");
}
