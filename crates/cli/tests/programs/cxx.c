// C++ new and delete reach malloc and free on this glibc/libstdc++: the
// operators of the libstdc++ that every gcc installation carries, called
// from C (no C++ compiler needed), looked up the way a C++ program binds
// them (the first definition in the global scope).
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

typedef void *(*new_fn)(size_t);
typedef void (*delete_fn)(void *);

int main(void) {
    if (!dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    new_fn op_new = (new_fn)dlsym(RTLD_DEFAULT, "_Znwm");         // operator new(size_t)
    delete_fn op_delete = (delete_fn)dlsym(RTLD_DEFAULT, "_ZdlPv"); // operator delete(void*)
    new_fn op_new_array = (new_fn)dlsym(RTLD_DEFAULT, "_Znam");   // operator new[](size_t)
    delete_fn op_delete_array = (delete_fn)dlsym(RTLD_DEFAULT, "_ZdaPv");
    if (!op_new || !op_delete || !op_new_array || !op_delete_array) {
        fprintf(stderr, "libstdc++ lacks its operators\n");
        return 1;
    }
    void *blobs[100];
    for (int i = 0; i < 100; i++) blobs[i] = op_new(5555);
    for (int i = 0; i < 100; i++) op_delete(blobs[i]);
    char *arr = op_new_array(6061);
    arr[0] = 1;
    int r = arr[0] - 1;
    op_delete_array(arr);
    return r;
}
