/* Pointer-chasing benchmark for the pointer capture: a binary search tree
 * of N keys from a fixed pseudo-random sequence, then M lookups, then a
 * linked list of the found nodes walked R times. Prints a checksum. */
#include <stdio.h>
#include <stdlib.h>

struct node { unsigned long key; struct node *left, *right; };
struct item { struct node *n; struct item *next; };

static unsigned long rng = 88172645463325252UL;
static unsigned long next_rand(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return rng;
}

static struct node *insert(struct node *root, unsigned long key) {
    struct node **at = &root;
    while (*at) at = key < (*at)->key ? &(*at)->left : &(*at)->right;
    struct node *n = malloc(sizeof *n);
    n->key = key; n->left = n->right = NULL;
    *at = n;
    return root;
}

static struct node *find(struct node *t, unsigned long key) {
    while (t && t->key != key) t = key < t->key ? t->left : t->right;
    return t;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000, m = argc > 2 ? atol(argv[2]) : 100000;
    unsigned long *keys = malloc(n * sizeof *keys);
    struct node *root = NULL;
    for (long i = 0; i < n; i++) { keys[i] = next_rand(); root = insert(root, keys[i]); }
    struct item *found = NULL;
    unsigned long sum = 0;
    for (long i = 0; i < m; i++) {
        struct node *x = find(root, keys[(i * 7919) % n]);
        if (x) { struct item *it = malloc(sizeof *it); it->n = x; it->next = found; found = it; }
    }
    for (int r = 0; r < 3; r++)
        for (struct item *it = found; it; it = it->next) sum += it->n->key >> 32;
    printf("%lu\n", sum);
    return 0;
}
