#include <stdlib.h>
#include <stdio.h>
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10000000;
  void *slots[4096] = {0};
  unsigned x = 12345;
  for (long i = 0; i < n; i++) {
    x = x * 1103515245 + 12345;
    unsigned k = (x >> 8) & 4095;
    free(slots[k]);
    slots[k] = malloc(16 + ((x >> 20) & 255));
  }
  for (int k = 0; k < 4096; k++) free(slots[k]);
  printf("%ld\n", n);
  return 0;
}
