// Two allocation sites with known names: one leaks, one churns.
#include <stdlib.h>

void *volatile keep[1000];

__attribute__((noinline)) void make_widgets(int n) {
    for (int i = 0; i < n; i++) keep[i] = malloc(4096);
}

__attribute__((noinline)) void churn(void) {
    for (int i = 0; i < 5000; i++) {
        void *p = malloc(32);
        keep[999] = p;
        free(p);
    }
}

int main(void) {
    make_widgets(300);
    churn();
    return 0;
}
