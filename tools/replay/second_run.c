/* The sync test's second process (second_run.h). */
#include "second_run.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int second_run_open(second_run *s, const char *log, const char *game, bool force, uint64_t from, uint64_t to) {
    *s = (second_run){.pid = -1};
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        fprintf(stderr, "cradle-replay: --synctest: pipe: %s\n", strerror(errno));
        return -1;
    }
    /* posix_spawn takes char *const argv[]: writable copies of every word. */
    static char program[] = "cradle-replay", output[] = "--output", dash[] = "-", game_flag[] = "--game",
                force_flag[] = "--force";
    static char log_path[4096], game_path[4096];
    snprintf(log_path, sizeof log_path, "%s", log);
    snprintf(game_path, sizeof game_path, "%s", game ? game : "");
    static char from_flag[] = "--from", to_flag[] = "--to", from_text[24], to_text[24];
    snprintf(from_text, sizeof from_text, "%" PRIu64, from);
    snprintf(to_text, sizeof to_text, "%" PRIu64, to);
    char *argv[12];
    int n = 0;
    argv[n++] = program;
    argv[n++] = output;
    argv[n++] = dash;
    if (game) argv[n++] = game_flag, argv[n++] = game_path;
    if (force) argv[n++] = force_flag;
    if (from) argv[n++] = from_flag, argv[n++] = from_text; /* a slice: the same steps, through the index */
    if (to != UINT64_MAX) argv[n++] = to_flag, argv[n++] = to_text;
    argv[n++] = log_path;
    argv[n] = NULL;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipefd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipefd[0]);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawn(&s->pid, "/proc/self/exe", &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(pipefd[1]);
    if (rc != 0) {
        fprintf(stderr, "cradle-replay: --synctest: cannot start the second replay: %s\n", strerror(rc));
        close(pipefd[0]);
        s->pid = -1;
        return -1;
    }
    s->in = fdopen(pipefd[0], "rb");
    if (!s->in) {
        close(pipefd[0]);
        kill(s->pid, SIGKILL);
        (void)waitpid(s->pid, NULL, 0);
        s->pid = -1;
        return -1;
    }
    return 0;
}

int second_run_compare(second_run *s, uint64_t step, const uint8_t *out, size_t n) {
    if (s->differs || !s->in) return s->differs;
    uint8_t theirs[1024];
    size_t done = 0;
    while (done < n) {
        size_t want = n - done < sizeof theirs ? n - done : sizeof theirs;
        size_t got = fread(theirs, 1, want, s->in);
        for (size_t i = 0; i < want; i++) {
            if (i >= got || theirs[i] != out[done + i]) {
                s->differs = true;
                s->step = step;
                s->byte = s->offset + done + i;
                return 1;
            }
        }
        done += want;
    }
    s->offset += n;
    return 0;
}

int second_run_close(second_run *s, bool stop, char *message, size_t message_size) {
    message[0] = '\0';
    if (s->pid < 0) return 0;
    bool longer = !stop && !s->differs && s->in && fgetc(s->in) != EOF;
    if (stop || s->differs || longer) kill(s->pid, SIGKILL);
    if (s->in) fclose(s->in);
    s->in = NULL;
    int status = 0;
    (void)waitpid(s->pid, &status, 0);
    s->pid = -1;
    if (s->differs) {
        snprintf(message, message_size,
                 "output byte %" PRIu64 " (step %" PRIu64 ") differs from a second process's replay of the log: "
                 "does the game depend on its process (an address, uninitialised memory, a pid)?",
                 s->byte, s->step);
        return 1;
    }
    if (stop) return 0;
    if (longer) {
        snprintf(message, message_size, "a second process's replay of the log wrote more output than this one");
        return 1;
    }
    /* Its exit status is the replay's verdict on the log, which this
     * process reports itself: only its output bytes are compared. */
    (void)status;
    return 0;
}
