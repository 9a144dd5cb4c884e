/* Forks once while attached to (crates/cli/tests/attach.rs): loops
 * allocating until the file named by argv[1] exists; once the capture
 * library shows in its memory map (an attach is under way) and 300 ms
 * more have passed, it forks a child that allocates 1,000 blocks at
 * child_site and exits 3; the parent prints the child's status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attached.h"

__attribute__((noinline)) void *child_site(void) { return malloc(100); }


int main(int argc, char **argv) {
    if (argc < 2) return 2;
    printf("ready\n");
    fflush(stdout);
    int seen = 0, forked = 0;
    while (access(argv[1], F_OK) != 0) {
        free(malloc(32));
        if (!forked && (seen || attached()) && ++seen > 300) {
            forked = 1;
            pid_t c = fork();
            if (c == 0) {
                for (int i = 0; i < 1000; i++) free(child_site());
                _exit(3);
            }
            int st;
            waitpid(c, &st, 0);
            printf("child %d\n", WEXITSTATUS(st));
            fflush(stdout);
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}
