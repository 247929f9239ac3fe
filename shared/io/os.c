#include "cradle/os.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <sys/stat.h>
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

void cradle_os_remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char child[4096];
            int n = snprintf(child, sizeof child, "%s/%s", path, e->d_name);
            if (n > 0 && (size_t)n < sizeof child) cradle_os_remove_tree(child);
        }
        closedir(d);
    }
    rmdir(path);
}

void cradle_os_name_thread(const char *name) {
#if defined(__linux__)
    char kept[16]; /* the kernel's TASK_COMM_LEN, the end included */
    snprintf(kept, sizeof kept, "%s", name);
    (void)prctl(PR_SET_NAME, kept, 0, 0, 0);
#else
    (void)name; /* WebAssembly (the browser's viewer) has no threads to name */
#endif
}
