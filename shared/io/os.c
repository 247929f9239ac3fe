#include "cradle/os.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

bool cradle_os_write_all(int fd, const void *bytes, size_t count) {
    const unsigned char *p = bytes;
    while (count > 0) {
        ssize_t n = write(fd, p, count);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += (size_t)n;
        count -= (size_t)n;
    }
    return true;
}

const char *cradle_os_tmpdir(void) {
    const char *tmp = getenv("TMPDIR");
    return tmp && *tmp ? tmp : "/tmp";
}
