/*
 * profiler_agg.c - one communicator's recorder: what NCCL ran, aggregated as it happens.
 *
 * A collective event (on the thread that launches NCCL's kernel plan) is counted at once
 * in a fixed open-addressed table keyed by (collective, bytes, algorithm, protocol,
 * channels): a slot is claimed with one compare-and-swap on its key, counters are atomic
 * adds, a full table counts the call as dropped.  The event also takes the next slot of
 * a ring of in-flight collectives and returns it as its handle.  NCCL's proxy thread then
 * reports each kernel channel's GPU start and stop stamps with that handle as parent:
 * the ring slot keeps the earliest start and the latest stop, and when as many channels
 * stopped as the collective announced (or when the slot is reused, or at finalize) the
 * span goes into the entry's total and log2 histogram, once (an atomic flag).
 *
 * NCCL stops the collective event on the host right after queuing the work, long before
 * the GPU finishes, so host stamps say nothing about its duration: only GPU time is kept.
 * Nothing here allocates, locks or does I/O.  A slot reused while a very late channel of
 * its previous collective is still reporting can mix the two collectives' stamps; every
 * access is atomic, so that costs one time's accuracy, never memory safety.
 */
#include <stddef.h>
#include <string.h>

#include "cct_names.h"
#include "profiler_internal.h"

#define KEY_BYTES_MAX ((UINT64_C(1) << 48) - 1)
#define MAX_SPAN_NS (UINT64_C(3600) * 1000000000u) /* longer: a bad stamp, not a time */

static uint64_t key_pack(uint64_t bytes, int coll, int algo, int proto, int channels)
{
    if (bytes > KEY_BYTES_MAX)
        bytes = KEY_BYTES_MAX;
    if (channels < 0)
        channels = 0;
    if (channels > 127)
        channels = 127;
    return bytes | (uint64_t)(coll + 1) << 48 | (uint64_t)(algo & 7) << 52 |
           (uint64_t)(proto & 3) << 55 | (uint64_t)channels << 57;
}

void cct_rec_key_unpack(uint64_t key, uint64_t *bytes, int *coll, int *algo, int *proto,
                        int *channels)
{
    *bytes = key & KEY_BYTES_MAX;
    *coll = (int)((key >> 48) & 15) - 1;
    *algo = (int)((key >> 52) & 7);
    *proto = (int)((key >> 55) & 3);
    *channels = (int)(key >> 57);
}

static uint32_t key_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    k *= UINT64_C(0xc4ceb9fe1a85ec53);
    k ^= k >> 33;
    return (uint32_t)k;
}

int cct_rec_bucket(uint64_t ns)
{
    if (ns < (UINT64_C(1) << (CCT_REC_HIST_BASE_SHIFT + 1)))
        return 0;
    int b = 63 - __builtin_clzll(ns) - CCT_REC_HIST_BASE_SHIFT;
    return b >= CCT_REC_HIST_BUCKETS ? CCT_REC_HIST_BUCKETS - 1 : b;
}

void cct_recorder_setup(cct_recorder *r, uint64_t comm_id, int rank, int nranks, int nnodes,
                        int abi)
{
    r->comm_id = comm_id;
    r->rank = rank;
    r->nranks = nranks;
    r->nnodes = nnodes;
    r->abi = abi;
    for (int i = 0; i < CCT_REC_INFLIGHT; i++) {
        cct_rec_flight *f = &r->flights[i];
        f->kind = CCT_REC_KIND_COLL;
        f->kind_ch = CCT_REC_KIND_CH;
        f->rec = r;
        atomic_init(&f->flushed, true);
    }
}

/* The entry of key, claimed if new: its index + 1, or 0 when the table is full. */
static uint32_t entry_of(cct_recorder *r, uint64_t key)
{
    uint32_t i = key_hash(key) & (CCT_REC_SLOTS - 1);
    for (int probe = 0; probe < CCT_REC_SLOTS; probe++) {
        cct_rec_entry *e = &r->entries[i];
        uint_fast64_t k = atomic_load_explicit(&e->key, memory_order_acquire);
        if (k == key)
            return i + 1;
        if (k == 0) {
            uint_fast64_t expect = 0;
            if (atomic_compare_exchange_strong_explicit(&e->key, &expect, key, memory_order_acq_rel,
                                                        memory_order_acquire) ||
                expect == key)
                return i + 1;
        }
        i = (i + 1) & (CCT_REC_SLOTS - 1);
    }
    return 0;
}

/* Put a flight's GPU span into its entry, once. */
static void flight_flush(cct_rec_flight *f)
{
    if (atomic_exchange_explicit(&f->flushed, true, memory_order_acq_rel))
        return;
    uint32_t idx = atomic_load_explicit(&f->entry, memory_order_acquire);
    uint64_t t0 = atomic_load_explicit(&f->t_start, memory_order_relaxed);
    uint64_t t1 = atomic_load_explicit(&f->t_stop, memory_order_relaxed);
    if (idx == 0 || t1 == 0 || t0 == UINT64_MAX || t1 < t0 || t1 - t0 > MAX_SPAN_NS)
        return; /* dropped, or no usable stamps: counted, untimed */
    cct_rec_entry *e = &f->rec->entries[idx - 1];
    uint64_t ns = t1 - t0;
    atomic_fetch_add_explicit(&e->timed, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&e->total_ns, ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&e->hist[cct_rec_bucket(ns)], 1, memory_order_relaxed);
}

void *cct_recorder_coll(cct_recorder *r, const char *func, size_t count, const char *datatype,
                        int n_channels, const char *algo, const char *proto)
{
    if (!r)
        return NULL;
    int coll = cct_prof_func(func);
    uint64_t bytes = (uint64_t)count * cct_prof_type_size(datatype);
    if (coll == CCT_COLL_ALLGATHER || coll == CCT_COLL_REDUCESCATTER)
        bytes *= (uint64_t)(r->nranks > 0 ? r->nranks : 1); /* as the tuner is asked */
    uint64_t key = key_pack(bytes, coll, cct_prof_algo(algo), cct_prof_proto(proto), n_channels);
    uint32_t idx = entry_of(r, key);
    if (idx)
        atomic_fetch_add_explicit(&r->entries[idx - 1].calls, 1, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);

    uint64_t seq = atomic_fetch_add_explicit(&r->next, 1, memory_order_relaxed);
    cct_rec_flight *f = &r->flights[seq & (CCT_REC_INFLIGHT - 1)];
    flight_flush(f); /* the slot's previous collective, if its channels never all stopped */
    atomic_store_explicit(&f->t_start, UINT64_MAX, memory_order_relaxed);
    atomic_store_explicit(&f->t_stop, 0, memory_order_relaxed);
    atomic_store_explicit(&f->stopped, 0, memory_order_relaxed);
    atomic_store_explicit(&f->expected, n_channels > 0 ? n_channels : 1, memory_order_relaxed);
    atomic_store_explicit(&f->entry, idx, memory_order_relaxed);
    atomic_store_explicit(&f->flushed, false, memory_order_release);
    return &f->kind;
}

static cct_rec_flight *flight_of(void *handle, unsigned char kind)
{
    if (!handle || *(unsigned char *)handle != kind)
        return NULL;
    size_t off = kind == CCT_REC_KIND_COLL ? offsetof(cct_rec_flight, kind)
                                           : offsetof(cct_rec_flight, kind_ch);
    return (cct_rec_flight *)(void *)((unsigned char *)handle - off);
}

void *cct_recorder_channel_start(void *parent, uint64_t t)
{
    cct_rec_flight *f = flight_of(parent, CCT_REC_KIND_COLL);
    if (!f)
        return NULL;
    uint_fast64_t cur = atomic_load_explicit(&f->t_start, memory_order_relaxed);
    while (t < cur && !atomic_compare_exchange_weak_explicit(
                          &f->t_start, &cur, t, memory_order_relaxed, memory_order_relaxed))
        ;
    return &f->kind_ch;
}

void cct_recorder_channel_stamp(void *handle, uint64_t t)
{
    cct_rec_flight *f = flight_of(handle, CCT_REC_KIND_CH);
    if (!f)
        return;
    uint_fast64_t cur = atomic_load_explicit(&f->t_stop, memory_order_relaxed);
    while (t > cur && !atomic_compare_exchange_weak_explicit(
                          &f->t_stop, &cur, t, memory_order_relaxed, memory_order_relaxed))
        ;
}

void cct_recorder_stop(void *handle)
{
    cct_rec_flight *f = flight_of(handle, CCT_REC_KIND_CH);
    if (!f)
        return; /* the collective's own stop: host side, nothing to time */
    if (atomic_load_explicit(&f->flushed, memory_order_acquire)) {
        atomic_fetch_add_explicit(&f->rec->late, 1, memory_order_relaxed);
        return;
    }
    int n = atomic_fetch_add_explicit(&f->stopped, 1, memory_order_acq_rel) + 1;
    if (n >= atomic_load_explicit(&f->expected, memory_order_relaxed))
        flight_flush(f);
}

void cct_recorder_flush_all(cct_recorder *r)
{
    for (int i = 0; i < CCT_REC_INFLIGHT; i++)
        flight_flush(&r->flights[i]);
}
