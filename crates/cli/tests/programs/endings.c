// Ways out: abort, _exit, a fatal signal, SIGKILL, exec; and a program that
// closes every descriptor (ours too) before allocating.
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile sink;

int main(int argc, char **argv) {
    const char *how = argc > 1 ? argv[1] : "return";
    int n = strcmp(how, "kill") == 0 ? 100000 : 500;
    if (strcmp(how, "closefds") == 0)
        for (int fd = 3; fd < 4096; fd++) close(fd);
    for (int i = 0; i < n; i++) sink = malloc(1111);
    if (strcmp(how, "abort") == 0) abort();
    if (strcmp(how, "_exit") == 0) _exit(7);
    if (strcmp(how, "segv") == 0) raise(SIGSEGV);
    if (strcmp(how, "kill") == 0) kill(getpid(), SIGKILL);
    if (strcmp(how, "exec") == 0) execl("/bin/true", "true", (char *)0);
    return 0;
}
