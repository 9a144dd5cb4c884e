/* Allocations whose call stacks tramp's unwinder must see as glibc's
   backtrace() does: call sites reached from several callers at the same
   depth, recursion, a shared library in between, and a signal handler.

   Each allocation is made by traced(id), which first prints backtrace()'s
   frames as "bt ID F1 F2 ..." (its caller outwards) and then allocates
   BASE + id bytes, so the test can pair each allocation with its frames.
   Built by the test with and without frame pointers, at -O0 and -O2. */
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#define BASE 50000

void *lib_call(void *(*f)(size_t), size_t id);

static void *keep[4096];
static int kept;

__attribute__((noinline)) void *traced(size_t id) {
    void *bt[80];
    int n = backtrace(bt, 80);
    printf("bt %zu", id);
    for (int i = 1; i < n; i++)
        printf(" %p", bt[i]);
    printf("\n");
    void *p = malloc(BASE + id);
    __asm__ volatile("" ::: "memory");
    keep[kept++ % 4096] = p;
    return p;
}

static size_t next_id = 1;

/* One call site, reached from three callers at the same depth. */
__attribute__((noinline)) void shared(void) {
    traced(next_id++);
    __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void from_a(void) { shared(); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void from_b(void) { shared(); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void from_c(void) { from_a(); __asm__ volatile("" ::: "memory"); }

__attribute__((noinline)) void recurse(int depth) {
    if (depth == 0) {
        traced(next_id++);
        return;
    }
    recurse(depth - 1);
    __asm__ volatile("" ::: "memory");
}

static void on_signal(int sig) {
    (void)sig;
    traced(next_id++);
}

__attribute__((noinline)) void signal_path(void) {
    raise(SIGUSR1);
    __asm__ volatile("" ::: "memory");
}

int main(void) {
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    signal(SIGUSR1, on_signal);
    for (int round = 0; round < 20; round++) {
        from_a();
        from_b();
        from_c();
        shared();
        recurse(round % 7);
        lib_call(traced, next_id++);
        if (round % 5 == 0)
            signal_path();
        from_b();
        from_b();
    }
    printf("done %d\n", kept);
    return 0;
}
