#ifndef CRADLE_OS_H
#define CRADLE_OS_H
/*
 * os: the few POSIX chores the I/O modules and the programs share.
 */
#include <stdbool.h>
#include <stddef.h>

/* Writes all count bytes to fd, resuming after EINTR and short writes.
 * Returns false on the first failure (errno says why). */
bool cradle_os_write_all(int fd, const void *bytes, size_t count);

/* The directory for temporary files: $TMPDIR when set and not empty,
 * else "/tmp". The string stays valid while the environment is unchanged. */
const char *cradle_os_tmpdir(void);

/* Removes path and, when it is a folder, everything under it (symlinks are
 * removed, never followed). For a program's own temporary folders; errors
 * leave what could not be removed. */
void cradle_os_remove_tree(const char *path);

/* Names the calling thread (at most 15 bytes are kept), as top -H, ps -L,
 * perf and /proc/PID/task/TID/comm show it. Best effort: a name is a help
 * to whoever reads the process, never a condition for running. */
void cradle_os_name_thread(const char *name);

#endif
