/* A long-running program to attach to (crates/cli/tests/attach.rs): two
 * worker threads allocate in a loop at two call sites (site_a: 64-byte
 * blocks, freed soon; site_b: 4 KiB blocks, one in 64 kept), paced at
 * 100,000 iterations a second each, until the file named by argv[1] exists; then they stop, the
 * main thread frees what was kept, prints the counts and exits 0. Blocks
 * allocated before an attach are freed after it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static atomic_long allocs;

__attribute__((noinline)) void *site_a(void) { return malloc(64); }
__attribute__((noinline)) void *site_b(void) { return malloc(4096); }

struct worker {
    void *kept[4096];
    int nkept;
};

static void *work(void *arg) {
    struct worker *w = arg;
    void *ring[32] = {0};
    long i = 0;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (!atomic_load(&stop)) {
        int k = (int)(i & 31);
        free(ring[k]);
        ring[k] = site_a();
        void *b = site_b();
        if (i % 64 == 0 && w->nkept < 4096) w->kept[w->nkept++] = b; else free(b);
        atomic_fetch_add(&allocs, 2);
        i++;
        /* Paced: iteration i is due 10 us after the thread's start times
         * i, so the allocation rate (100,000 per site per second per
         * thread) does not depend on what a tracer costs per call. */
        if (i % 64 == 0) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            long ahead = (start.tv_sec * 1000000000L + start.tv_nsec + i * 10000L)
                         - (now.tv_sec * 1000000000L + now.tv_nsec);
            if (ahead > 0) {
                struct timespec ts = {ahead / 1000000000L, ahead % 1000000000L};
                nanosleep(&ts, NULL);
            }
        }
    }
    for (int k = 0; k < 32; k++) free(ring[k]);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    static struct worker w[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, work, &w[i]);
    printf("ready\n");
    fflush(stdout);
    while (access(argv[1], F_OK) != 0) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < w[i].nkept; k++) free(w[i].kept[k]);
    printf("done %ld\n", atomic_load(&allocs) > 0 ? 1L : 0L);
    return 0;
}
