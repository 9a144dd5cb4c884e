/* Four threads that pass heap objects between them: two producers
 * allocate messages and put them on a shared queue, two consumers take
 * them off, resize some, and free them: nearly every free is of an
 * object another thread allocated. For the threaded replay's tests. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PER_PRODUCER 20000
#define QUEUE 64

static void *queue[QUEUE];
static int head, tail, count, producers_left = 2;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

static void *produce(void *arg) {
    unsigned seed = (unsigned)(size_t)arg;
    for (int i = 0; i < PER_PRODUCER; i++) {
        size_t size = 16 + (rand_r(&seed) % 512);
        char *m = malloc(size);
        memset(m, i & 0xff, size);
        pthread_mutex_lock(&lock);
        while (count == QUEUE) pthread_cond_wait(&changed, &lock);
        queue[tail] = m;
        tail = (tail + 1) % QUEUE;
        count++;
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&lock);
    }
    pthread_mutex_lock(&lock);
    producers_left--;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void *consume(void *arg) {
    long sum = 0, n = 0;
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (count == 0 && producers_left > 0) pthread_cond_wait(&changed, &lock);
        if (count == 0) { pthread_mutex_unlock(&lock); break; }
        char *m = queue[head];
        head = (head + 1) % QUEUE;
        count--;
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&lock);
        if (++n % 7 == 0) m = realloc(m, 1024);   /* another thread's block */
        sum += m[0];
        free(m);
    }
    return (void *)sum;
}

int main(void) {
    pthread_t t[4];
    pthread_create(&t[0], NULL, produce, (void *)1);
    pthread_create(&t[1], NULL, produce, (void *)2);
    pthread_create(&t[2], NULL, consume, NULL);
    pthread_create(&t[3], NULL, consume, NULL);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    puts("passed");
    return 0;
}
