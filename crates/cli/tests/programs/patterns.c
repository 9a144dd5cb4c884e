// Known allocation patterns; prints the realloc outcomes it observed so the
// test can compare the trace with what really happened.
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *volatile sink;

static void *worker(void *arg) {
    (void)arg;
    // A pointer of this thread's own: four threads sharing `sink` could
    // free each other's blocks (a double free that aborts the program).
    void *volatile mine;
    for (int i = 0; i < 1000; i++) {
        mine = malloc(3333);
        free(mine);
    }
    return 0;
}

static const char *outcome(void *old, void *new) {
    if (old == NULL) return "alloc";
    if (new == NULL) return "free";
    return old == new ? "no-alloc" : "alloc-free";
}

int main(void) {
    void *p[1234];
    for (int i = 0; i < 1234; i++) p[i] = malloc(4321);
    for (int i = 0; i < 1234; i++) free(p[i]);

    for (int i = 0; i < 3; i++) { sink = calloc(7, 13); free(sink); }

    // Every realloc outcome.
    void *volatile none = NULL;  // keeps the compiler from turning realloc(NULL, n) into malloc
    void *a = realloc(none, 555);               printf("realloc %s\n", outcome(NULL, a));
    void *b = realloc(a, 500);                  printf("realloc %s\n", outcome(a, b));
    void *guard = malloc(64);
    void *c = realloc(b, 200000);               printf("realloc %s\n", outcome(b, c));
    void *d = realloc(c, 0);                    printf("realloc %s\n", outcome(c, d));
    free(guard);
    void *e = reallocarray(none, 11, 101);      printf("realloc %s\n", outcome(NULL, e));
    free(e);

    void *m;
    if (posix_memalign(&m, 64, 1001) == 0) free(m);
    sink = aligned_alloc(128, 1024); free(sink);
    sink = memalign(256, 1003); free(sink);
    sink = valloc(1004); free(sink);
    sink = pvalloc(1005); free(sink);
    free(NULL);

    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], 0, worker, 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
    printf("done\n");
    return 42;
}
