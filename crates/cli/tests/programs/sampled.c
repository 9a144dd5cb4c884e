/* Known allocations for the sampling tests (crates/cli/tests/sampling.rs):
 * sites with sizes from 16 B to 1 MiB, some blocks leaked, some resized.
 * Deterministic (its own generator), so an exact recording, a sampled one
 * and jemalloc's profile all see the same program.
 *
 * Spread sizes (each block its own size):
 *   spread_small    16..256 B     100,000 blocks, 1 in 10 leaked
 *   spread_medium   1..16 KiB      10,000 blocks, 1 in 4 leaked
 *   spread_large    64 KiB..1 MiB     200 blocks, 1 in 2 leaked (calloc)
 * One size per site (jemalloc size classes, so that jemalloc's usable
 * sizes are the sizes asked for and its per-stack unbiasing, which uses
 * the stack's mean size, is exact):
 *   fixed_tiny      16 B          100,000 blocks, none leaked
 *   fixed_small     160 B         100,000 blocks, 1 in 10 leaked
 *   fixed_medium    1280 B         20,000 blocks, 1 in 4 leaked
 *   fixed_large     1 MiB              64 blocks, 1 in 2 leaked
 *   fixed_grown     64 B moved by realloc to 6144 B, 10,000, 1 in 5 leaked
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t state = 0x9e3779b97f4a7c15ull;
static inline __attribute__((always_inline)) uint64_t next(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}
#define BETWEEN(lo, hi) ((size_t)(lo) + next() % ((size_t)(hi) - (lo) + 1))

__attribute__((noinline)) void *spread_small(size_t n) { return malloc(n); }
__attribute__((noinline)) void *spread_medium(size_t n) { return malloc(n); }
__attribute__((noinline)) void *spread_large(size_t n) { return calloc(1, n); }
__attribute__((noinline)) void *fixed_tiny(void) { return malloc(16); }
__attribute__((noinline)) void *fixed_small(void) { return malloc(160); }
__attribute__((noinline)) void *fixed_medium(void) { return malloc(1280); }
__attribute__((noinline)) void *fixed_large(void) { return malloc(1 << 20); }
__attribute__((noinline)) void *fixed_grown(void *p) { return realloc(p, 6144); }
__attribute__((noinline)) void *pin_block(void) { return malloc(64); }

static void *kept[1 << 16];
static size_t nkept;
#define KEEP(p) do { if (nkept < sizeof kept / sizeof *kept) kept[nkept++] = (p); } while (0)

static char *grow[10000];

int main(void) {
    uint64_t sum = 0;
    /* First, on a fresh heap: 10,000 blocks of 64 B side by side and one
     * more after them, so that each realloc moves its block (an exact
     * recording keeps an in-place resize at the block's first site). */
    for (int i = 0; i < 10000; i++) grow[i] = malloc(64);
    char *guard = pin_block();
    for (int i = 0; i < 10000; i++) {
        char *p = fixed_grown(grow[i]);
        p[0] = 2;
        if (i % 5 == 0) KEEP(p); else free(p);
    }
    free(guard);
    for (int i = 0; i < 100000; i++) {
        char *p = spread_small(BETWEEN(16, 256));
        p[0] = (char)i;
        sum += (uint8_t)p[0];
        if (i % 10 == 0) KEEP(p); else free(p);
        char *q = fixed_small();
        q[0] = 1;
        if (i % 10 == 0) KEEP(q); else free(q);
        char *t = fixed_tiny();
        t[0] = 3;
        free(t);
    }
    for (int i = 0; i < 20000; i++) {
        char *p = fixed_medium();
        p[0] = 1;
        if (i % 4 == 0) KEEP(p); else free(p);
        if (i % 2 == 0) {
            char *q = spread_medium(BETWEEN(1024, 16384));
            q[0] = 1;
            if (i % 8 == 0) KEEP(q); else free(q);
        }
    }
    for (int i = 0; i < 200; i++) {
        char *p = spread_large(BETWEEN(65536, 1 << 20));
        sum += (uint8_t)p[0];
        if (i % 2 == 0) KEEP(p); else free(p);
        if (i % 3 == 0 && i < 192) {
            char *q = fixed_large();
            q[0] = 1;
            if (i % 2 == 0) KEEP(q); else free(q);
        }
    }
    printf("kept %zu blocks (%llu)\n", nkept, (unsigned long long)sum);
    return 0;
}
