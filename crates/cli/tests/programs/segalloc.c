/* A second allocator for the replay tests, built from source by the test
 * itself (no system package): segregated power-of-two size classes from
 * 16 bytes to 1 MiB carved from mmap'd chunks, one free list per class
 * behind one mutex, and mmap of its own for anything larger. Every block
 * has a 16-byte header holding its class (or, for large blocks, its mapped
 * length), so free and realloc need no lookup. Small, slow-ish, correct:
 * what a replay needs to compare against glibc.
 *
 *   cc -O2 -fno-builtin -shared -fPIC -pthread -o libsegalloc.so segalloc.c
 *
 * -fno-builtin matters: without it the compiler turns calloc's malloc +
 * memset back into a call to calloc, which recurses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define HEADER 16
#define MIN_SHIFT 4              /* 16 bytes */
#define MAX_SHIFT 20             /* 1 MiB */
#define CLASSES (MAX_SHIFT - MIN_SHIFT + 1)
#define CHUNK (4u << 20)         /* carved into blocks of one class */
#define LARGE 0xffu

struct block { struct block *next; };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct block *free_list[CLASSES];
static char *chunk_at, *chunk_end;

static unsigned class_of(size_t total) {
    unsigned c = 0;
    while (((size_t)1 << (c + MIN_SHIFT)) < total) c++;
    return c;
}

static void *carve(size_t size) {
    if (chunk_at == NULL || (size_t)(chunk_end - chunk_at) < size) {
        size_t len = size > CHUNK ? size : CHUNK;
        void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return NULL;
        chunk_at = p;
        chunk_end = chunk_at + len;
    }
    void *p = chunk_at;
    chunk_at += size;
    return p;
}

/* The header: word 0 is the class (or LARGE), word 1 the mapped length,
 * counted from the page the header is on. */
static void *finish(char *raw, size_t cls, size_t len) {
    ((size_t *)raw)[0] = cls;
    ((size_t *)raw)[1] = len;
    return raw + HEADER;
}

void *malloc(size_t n) {
    if (n > ((size_t)1 << 62)) { errno = ENOMEM; return NULL; }
    size_t total = n + HEADER;
    if (total > ((size_t)1 << MAX_SHIFT)) {
        size_t len = (total + 4095) & ~(size_t)4095;
        void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) { errno = ENOMEM; return NULL; }
        return finish(p, LARGE, len);
    }
    unsigned c = class_of(total);
    pthread_mutex_lock(&lock);
    struct block *b = free_list[c];
    void *raw;
    if (b) {
        free_list[c] = b->next;
        raw = b;
    } else {
        raw = carve((size_t)1 << (c + MIN_SHIFT));
    }
    pthread_mutex_unlock(&lock);
    if (!raw) { errno = ENOMEM; return NULL; }
    return finish(raw, c, 0);
}

static char *page_of(char *raw) { return (char *)((uintptr_t)raw & ~(uintptr_t)4095); }

static size_t usable(void *p) {
    char *raw = (char *)p - HEADER;
    size_t *h = (size_t *)raw;
    if (h[0] == LARGE) return h[1] - (size_t)(raw - page_of(raw)) - HEADER;
    return ((size_t)1 << (h[0] + MIN_SHIFT)) - HEADER;
}

void free(void *p) {
    if (!p) return;
    char *raw = (char *)p - HEADER;
    size_t cls = ((size_t *)raw)[0];
    if (cls == LARGE) {
        munmap(page_of(raw), ((size_t *)raw)[1]);
        return;
    }
    struct block *b = (struct block *)raw;
    pthread_mutex_lock(&lock);
    b->next = free_list[cls];
    free_list[cls] = b;
    pthread_mutex_unlock(&lock);
}

void *calloc(size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) { errno = ENOMEM; return NULL; }
    void *p = malloc(n * size);
    if (p) memset(p, 0, n * size);
    return p;
}

void *realloc(void *p, size_t n) {
    if (!p) return malloc(n);
    if (n == 0) { free(p); return NULL; }
    size_t have = usable(p);
    if (n <= have) return p;
    void *q = malloc(n);
    if (!q) return NULL;
    memcpy(q, p, have);
    free(p);
    return q;
}

/* Aligned requests: over-allocate and keep the header right before the
 * aligned address, pointing at a block of its own class. Alignment of 16
 * (the header) is what every block already has. */
void *memalign(size_t align, size_t n) {
    if (align <= HEADER) return malloc(n);
    if (align & (align - 1)) { errno = EINVAL; return NULL; }
    /* A large block whose start is page-aligned: mapped lengths are pages. */
    size_t len = (n + HEADER + align + 4095) & ~(size_t)4095;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { errno = ENOMEM; return NULL; }
    uintptr_t user = ((uintptr_t)p + HEADER + align - 1) & ~(uintptr_t)(align - 1);
    char *raw = (char *)user - HEADER;
    char *base = page_of(raw);
    if (base > p) munmap(p, (size_t)(base - p));
    return finish(raw, LARGE, len - (size_t)(base - p));
}

int posix_memalign(void **out, size_t align, size_t n) {
    if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
    void *p = memalign(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n) { return memalign(align, n); }
void *valloc(size_t n) { return memalign(4096, n); }
void *pvalloc(size_t n) { return memalign(4096, (n + 4095) & ~(size_t)4095); }
size_t malloc_usable_size(void *p) { return p ? usable(p) : 0; }

void *reallocarray(void *p, size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) { errno = ENOMEM; return NULL; }
    return realloc(p, n * size);
}
