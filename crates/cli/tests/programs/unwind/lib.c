/* A shared library between the program and malloc: the stacks through it
   must unwind the same as glibc's backtrace() sees them. */
#include <stdlib.h>

typedef void *(*alloc_fn)(size_t);

__attribute__((noinline)) void *lib_call(alloc_fn f, size_t id) {
    void *p = f(id);
    __asm__ volatile("" ::: "memory"); /* not a tail call */
    return p;
}
