/* Eight threads share 256 slots, each under its own lock: a thread picks
 * a slot, and allocates, grows or shrinks (realloc) or frees what is in
 * it, whoever allocated it. A correct program: every block is freed once. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define SLOTS 256
#define THREADS 8
#define OPS 40000
static void *slot[SLOTS];
static pthread_mutex_t lock[SLOTS];
static void *work(void *arg) {
    unsigned seed = (unsigned)(size_t)arg * 2654435761u;
    for (int i = 0; i < OPS; i++) {
        unsigned r = rand_r(&seed);
        int s = r % SLOTS;
        size_t size = 8 + (r >> 8) % 2000;
        pthread_mutex_lock(&lock[s]);
        switch ((r >> 20) % 3) {
        case 0: free(slot[s]); slot[s] = malloc(size); break;
        case 1: slot[s] = realloc(slot[s], size); break;
        default: free(slot[s]); slot[s] = NULL; break;
        }
        if (slot[s]) memset(slot[s], 1, size < 16 ? size : 16);
        pthread_mutex_unlock(&lock[s]);
    }
    return NULL;
}
int main(void) {
    pthread_t t[THREADS];
    for (int i = 0; i < SLOTS; i++) pthread_mutex_init(&lock[i], NULL);
    for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, work, (void *)(size_t)(i + 1));
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < SLOTS; i++) free(slot[i]);
    puts("passed");
    return 0;
}
