/*
 * cct_nccl_lib.h - which NCCL library and which tuner plugin a job started from this
 * environment would load, found the way NCCL and the dynamic loader find them.
 *
 * NCCL: `libnccl.so.2` (or a path) is dlopened as a job's loader would resolve it
 * (LD_LIBRARY_PATH first, then the loader's own search), its file found with dlinfo and its
 * version with ncclGetVersion.  A job whose binary or framework carries its own NCCL (a
 * RUNPATH, PyTorch's bundled copy) loads that one instead: name it by path.  Tuner:
 * NCCL_TUNER_PLUGIN as NCCL's plugin_open.cc reads it -- "none" disables plugins; the value is
 * dlopened as given (a path, or a library file name), and a plain name X, from NCCL 2.21, also as
 * libnccl-tuner-X.so; unset means libnccl-tuner.so -- and the tuner symbol NCCL picks is the newest
 * ncclTunerPlugin_vN that both the library exports and the release knows (docs/plugin.md, "NCCL
 * versions and their ABI"). Used by `ccltune doctor`.  Libraries opened here are closed again
 * before returning.
 */
#ifndef CCT_NCCL_LIB_H
#define CCT_NCCL_LIB_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cct_nccl_lib {
    bool found;      /* the library loaded */
    char path[4096]; /* the file the loader chose */
    int version;     /* NCCL_VERSION_CODE; 0 when ncclGetVersion is missing or failed */
    char why[512];   /* why not found / no version; "" otherwise */
} cct_nccl_lib;

/* Load name ("libnccl.so.2" when NULL) as a job would and fill out. */
void cct_nccl_lib_probe(const char *name, cct_nccl_lib *out);

/* The newest tuner ABI (1..6) release version (NCCL_VERSION_CODE) looks up; 0 before 2.19. */
int cct_tuner_abi_for_nccl(int version);

typedef struct cct_tuner_lib {
    bool disabled;    /* NCCL_TUNER_PLUGIN=none */
    bool found;       /* a library loaded under one of the names tried */
    char tried[1024]; /* the names tried, in order, space-separated */
    char name[512];   /* the name that loaded */
    char path[4096];  /* its file */
    int abi;          /* the ncclTunerPlugin_vN NCCL will use; 0: none it knows */
    bool ours;        /* it is libnccl-tuner-ccltune (exports ccltune_control_abi) */
    char why[512];    /* the loader's last error when nothing loaded */
} cct_tuner_lib;

/* Resolve env_value (the value of NCCL_TUNER_PLUGIN, NULL when unset) for NCCL release
 * nccl_version (0: unknown, treated as the newest) and fill out. */
void cct_tuner_lib_resolve(const char *env_value, int nccl_version, cct_tuner_lib *out);

#endif
