/* Execs while attached to (crates/cli/tests/attach.rs): loops allocating
 * until the file named by argv[1] exists; once the capture library shows
 * in its memory map (an attach is under way) and 300 ms more have passed,
 * it forks a child that allocates 200 blocks at before_exec and execs this
 * program as `execer --execd`, which allocates and frees 700 blocks at
 * execd_site, leaks 3 of 4,242 bytes and exits 4; the parent prints the
 * child's status. At the end it prints its own LD_PRELOAD ("none" when
 * unset), which a detach must have given back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attached.h"

__attribute__((noinline)) void *before_exec(void) { return malloc(300); }
__attribute__((noinline)) void *execd_site(void) { return malloc(700); }


int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--execd") == 0) {
        for (int i = 0; i < 700; i++) free(execd_site());
        for (int i = 0; i < 3; i++) memset(malloc(4242), 1, 4242);
        return 4;
    }
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
                for (int i = 0; i < 200; i++) free(before_exec());
                execl(argv[0], argv[0], "--execd", (char *)0);
                _exit(5);
            }
            int st;
            waitpid(c, &st, 0);
            printf("child %d\n", WEXITSTATUS(st));
            fflush(stdout);
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    const char *p = getenv("LD_PRELOAD");
    printf("LD_PRELOAD %s\n", p ? p : "none");
    return 0;
}
