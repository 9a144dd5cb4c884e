/* Known amounts for `tramp check`: `budgets N [STATUS]` keeps N blocks of
 * 1000 bytes from cache_put to the end (leaked), makes 5000 temporary
 * 64-byte allocations in churn (each freed as the next heap event), and
 * exits with STATUS (default 0). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *keep[1000];
char *volatile sink;

__attribute__((noinline)) char *cache_put(size_t n) {
  char *p = malloc(n);
  memset(p, 1, n);
  return p;
}

__attribute__((noinline)) void churn(int n) {
  for (int i = 0; i < n; i++) {
    sink = malloc(64);
    free(sink);
  }
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  for (int i = 0; i < n && i < 1000; i++)
    keep[i] = cache_put(1000);
  churn(5000);
  printf("%d\n", n > 0 ? keep[0][0] : 0);
  return argc > 2 ? atoi(argv[2]) : 0;
}
