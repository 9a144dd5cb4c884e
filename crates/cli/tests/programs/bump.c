/* A bump allocator for the replay tests and the driver's overhead
 * benchmark, built from source by them (no system package): every
 * allocation takes the next bytes of one large mapping (an atomic add),
 * free does nothing, realloc copies. Its calls cost a few nanoseconds, so
 * a replay through it measures the replay driver itself; and as it never
 * reuses memory, its footprint is every byte ever allocated.
 *
 *   cc -O2 -fno-builtin -shared -fPIC -o libbump.so bump.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define HEADER 16
#define RESERVE (1ull << 40)     /* address space only: pages come on use */

static char *base;
static _Atomic size_t used;

static void *take(size_t size, size_t align) {
    if (!base) {
        void *m = mmap(NULL, RESERVE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) return NULL;
        char *expected = NULL;
        if (!__atomic_compare_exchange_n(&base, &expected, (char *)m, 0,
                                         __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            munmap(m, RESERVE);
    }
    if (align < HEADER) align = HEADER;
    size_t need = (size + HEADER + align - 1 + 15) & ~(size_t)15;
    size_t at = __atomic_fetch_add(&used, need, __ATOMIC_RELAXED);
    if (at + need > RESERVE) { errno = ENOMEM; return NULL; }
    uintptr_t p = ((uintptr_t)base + at + HEADER + align - 1) & ~(uintptr_t)(align - 1);
    ((size_t *)p)[-1] = size;
    return (void *)p;
}

void *malloc(size_t size) { return take(size, HEADER); }
void free(void *p) { (void)p; }
void *calloc(size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) { errno = ENOMEM; return NULL; }
    return take(n * size, HEADER);   /* fresh mapping: already zero */
}
size_t malloc_usable_size(void *p) { return p ? ((size_t *)p)[-1] : 0; }
void *realloc(void *p, size_t size) {
    if (!p) return malloc(size);
    if (!size) { free(p); return NULL; }
    void *q = malloc(size);
    if (q) {
        size_t old = ((size_t *)p)[-1];
        memcpy(q, p, old < size ? old : size);
    }
    return q;
}
void *memalign(size_t align, size_t size) { return take(size, align); }
void *aligned_alloc(size_t align, size_t size) { return take(size, align); }
int posix_memalign(void **out, size_t align, size_t size) {
    void *p = take(size, align);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
void *valloc(size_t size) { return take(size, 4096); }
void *pvalloc(size_t size) { return take((size + 4095) & ~(size_t)4095, 4096); }
