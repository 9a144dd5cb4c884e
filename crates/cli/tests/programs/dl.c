// Loads a library at run time (the path given, a library the test builds
// itself), then allocates: the module map must list it.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *volatile sink;

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: dl LIBRARY.so\n");
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    for (int i = 0; i < 50000; i++) {
        sink = malloc(4040);
        free(sink);
    }
    return 0;
}
