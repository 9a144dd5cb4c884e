// Loads a library at run time, then allocates: the module map must list it.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *volatile sink;

int main(void) {
    void *h = dlopen("libz.so.1", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    for (int i = 0; i < 50000; i++) {
        sink = malloc(24);
        free(sink);
    }
    return 0;
}
