/*
 * tramp.h: tell tramp about the blocks of your own allocator.
 *
 * A program whose pool carves objects out of large malloc'd chunks looks
 * to a heap profiler like a few big allocations. Report each block as it
 * is handed out and given back:
 *
 *     void *p = pool_take(pool, size);
 *     TRAMP_ALLOC(p, size);
 *     ...
 *     TRAMP_FREE(p);
 *     pool_give_back(pool, p);
 *
 * (TRAMP_REALLOC(old, size, new) reports a block resized or moved.) Under
 * `tramp record` each reported block is an object of its own, with its
 * call stack, in every analysis: statistics, site tables, the report,
 * `tramp rds` (heap 1 of the trace, beside the malloc'd chunk it lies in;
 * docs/formats/capture.md). Run on its own, the program does nothing more
 * than one load and a branch per report after the first.
 *
 * `tramp header > tramp.h` writes this file; `tramp cc` puts it on the
 * include path. Programs annotated for heaptrack (heaptrack_report_alloc,
 * _realloc, _free from heaptrack_api.h) need no change: tramp's capture
 * library defines the functions those macros call.
 *
 * The functions are found with dlsym once per translation unit, so the
 * reports work from the program itself as well as from its shared
 * libraries (dlsym is in glibc's libc since 2.34; link older ones with
 * -ldl).
 */
#ifndef TRAMP_H
#define TRAMP_H

#include <dlfcn.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*tramp_alloc_fn_)(void *, size_t);
typedef void (*tramp_realloc_fn_)(void *, size_t, void *);
typedef void (*tramp_free_fn_)(void *);

/* This translation unit's view of the capture library: 0 unknown yet,
 * 1 looked up (the pointers are then null when not recorded). */
static struct {
    tramp_alloc_fn_ alloc;
    tramp_realloc_fn_ realloc;
    tramp_free_fn_ free;
    int looked_up;
} tramp_api_;

__attribute__((unused, noinline)) static void tramp_look_up_(void)
{
    /* (void *) 0 is RTLD_DEFAULT: the program and every library it has. */
    void *a = dlsym((void *) 0, "tramp_alloc");
    void *r = dlsym((void *) 0, "tramp_realloc");
    void *f = dlsym((void *) 0, "tramp_free");
    __atomic_store_n(&tramp_api_.alloc, (tramp_alloc_fn_) a, __ATOMIC_RELAXED);
    __atomic_store_n(&tramp_api_.realloc, (tramp_realloc_fn_) r, __ATOMIC_RELAXED);
    __atomic_store_n(&tramp_api_.free, (tramp_free_fn_) f, __ATOMIC_RELAXED);
    __atomic_store_n(&tramp_api_.looked_up, 1, __ATOMIC_RELEASE);
}

/* Each report is a macro, not a function, so that the call the capture
 * library sees comes from the line that uses it (its stack starts there,
 * at any optimization level). */
#define TRAMP_API_(field)                                                        \
    (__builtin_expect(!__atomic_load_n(&tramp_api_.looked_up, __ATOMIC_ACQUIRE), 0) \
         ? (tramp_look_up_(), __atomic_load_n(&tramp_api_.field, __ATOMIC_RELAXED)) \
         : __atomic_load_n(&tramp_api_.field, __ATOMIC_RELAXED))

/* A block of `size` bytes at `ptr` was handed out. */
#define TRAMP_ALLOC(ptr, size)                                \
    do {                                                      \
        tramp_alloc_fn_ tramp_fn_ = TRAMP_API_(alloc);        \
        if (tramp_fn_)                                        \
            tramp_fn_((void *) (ptr), (size_t) (size));       \
    } while (0)

/* The block at `old` is now `size` bytes at `ptr` (old NULL: a new block;
 * size 0 and ptr NULL: old was given back). */
#define TRAMP_REALLOC(old, size, ptr)                                      \
    do {                                                                   \
        tramp_realloc_fn_ tramp_fn_ = TRAMP_API_(realloc);                 \
        if (tramp_fn_)                                                     \
            tramp_fn_((void *) (old), (size_t) (size), (void *) (ptr));    \
    } while (0)

/* The block at `ptr` was given back. */
#define TRAMP_FREE(ptr)                                       \
    do {                                                      \
        tramp_free_fn_ tramp_fn_ = TRAMP_API_(free);          \
        if (tramp_fn_)                                        \
            tramp_fn_((void *) (ptr));                        \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif /* TRAMP_H */
