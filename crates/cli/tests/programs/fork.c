// A parent and a forked child with distinct allocation sizes.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile sink;

int main(void) {
    for (int i = 0; i < 111; i++) sink = malloc(2222);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 77; i++) sink = malloc(7777);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    for (int i = 0; i < 11; i++) sink = malloc(2223);
    return 0;
}
