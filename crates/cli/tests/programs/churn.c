/* Many short-lived blocks on several threads: N malloc/free pairs per
 * thread, sizes 1..N cycling, so that the raw log outgrows a small
 * --temp-limit while the program runs. Usage: churn THREADS PAIRS. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long pairs;

static void *work(void *arg) {
  long id = (long)arg;
  void *keep[64] = {0};
  for (long i = 0; i < pairs; i++) {
    int k = (int)((i * 7 + id) & 63);
    free(keep[k]);
    keep[k] = malloc(1 + (size_t)(i % 200));
  }
  for (int k = 0; k < 64; k++) free(keep[k]);
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  pairs = argc > 2 ? atol(argv[2]) : 100000;
  pthread_t t[64];
  for (long i = 0; i < threads && i < 64; i++) pthread_create(&t[i], NULL, work, (void *)i);
  for (int i = 0; i < threads && i < 64; i++) pthread_join(t[i], NULL);
  printf("%d %ld\n", threads, pairs);
  return 0;
}
