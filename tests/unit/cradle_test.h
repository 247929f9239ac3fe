#ifndef CRADLE_TEST_H
#define CRADLE_TEST_H
/*
 * Helpers shared by the cmocka unit tests (header-only; include after
 * <cmocka.h>).
 *
 * cradle_test_signal_of(fn): runs fn in a child process with stderr silenced
 * and returns the signal that ended the child, or 0 when fn returned. Used to
 * check that a programmer error (a broken call order) asserts: the module's
 * assert() aborts the child with SIGABRT, and the test process goes on.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static inline int cradle_test_signal_of(void (*fn)(void)) {
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, STDERR_FILENO);
        signal(SIGABRT, SIG_DFL);
        fn();
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) fail_msg("waitpid failed");
    }
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

#endif
