/* Shared by the programs attached to in crates/cli/tests/attach.rs:
 * whether the capture library is in this process's memory map yet (an
 * attach is under way). */
#include <stdio.h>
#include <string.h>

static int attached(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "libtramp_capture")) found = 1;
    if (f) fclose(f);
    return found;
}
