/* Threads whose thread-specific value is freed by its key's destructor,
 * which glibc runs after the capture's own (created first): the free is
 * the thread's, before its end, and each thread is one thread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static pthread_key_t key;
static void *work(void *arg) {
    (void)arg;
    pthread_setspecific(key, malloc(100));
    return NULL;
}
int main(void) {
    void *warm = malloc(10); free(warm);   /* the capture's key first */
    pthread_key_create(&key, free);
    for (int r = 0; r < 50; r++) {
        pthread_t t[4];
        for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, work, NULL);
        for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    }
    puts("passed");
    return 0;
}
