/* trial: a new build tried in a child process before it takes over (trial.h). */
#include "cradle/trial.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cradle/input.h"
#include "cradle/internal.h"
#include "cradle/os.h"
#include "cradle/systime.h"
#include "cradle/twin.h"

#define TWIN_BLOCK_ALIGN 64u

/* A twin's block: capacity bytes at up to 64 into it, rounded up to the
 * alignment as aligned_alloc() asks. */
static size_t block_bytes(uint32_t capacity) {
    return ((size_t)capacity + 2u * TWIN_BLOCK_ALIGN - 1u) / TWIN_BLOCK_ALIGN * TWIN_BLOCK_ALIGN;
}

/* The child's exit codes: each says which report line it wrote. */
enum { CHILD_OK = 0, CHILD_REFUSED = 3, CHILD_DIFFERS = 4, CHILD_OUTPUT = 5, CHILD_NO_MEMORY = 6 };

/* The child's twin block: freed before it exits, so a leak checker in the
 * child (valgrind follows a fork) finds nothing left. */
static uint8_t *child_block;

/* Writes the report line and ends the child. */
static _Noreturn void child_exit(int fd, int code, const char *format, ...) __attribute__((format(printf, 3, 4)));
static _Noreturn void child_exit(int fd, int code, const char *format, ...) {
    char line[CRADLE_TRIAL_MESSAGE_MAX];
    va_list args;
    va_start(args, format);
    int n = vsnprintf(line, sizeof line, format, args);
    va_end(args);
    size_t length = n < 0 ? 0 : (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    (void)cradle_os_write_all(fd, line, length);
    free(child_block);
    _exit(code);
}

/* Hex of up to 8 bytes, for a report line. */
static void hex(char *out, size_t size, const uint8_t *bytes, size_t n) {
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && i < 8 && at + 3 < size; i++) at += (size_t)snprintf(out + at, size - at, "%02x", bytes[i]);
    if (n == 0) snprintf(out, size, "none");
}

/* The child: the build takes over its copy of the sim and runs each step
 * twice. Never returns. */
static _Noreturn void run_child(int fd, const cradle_reload *r, cradle_sim *sim, const uint8_t *snapshots,
                                uint32_t count) {
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* A crash of the game ends the child by its signal, whatever handlers the
     * host (or a sanitizer in it) installed, so the host can name it. */
    static const int crashes[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
    for (size_t i = 0; i < sizeof crashes / sizeof crashes[0]; i++) (void)signal(crashes[i], SIG_DFL);
    char message[CRADLE_RELOAD_MESSAGE_MAX];
    void *handle = NULL;
    const cradle_game_contract *contract = NULL;
    int rc = cradle_reload_open_staged(r, &handle, &contract, message, sizeof message);
    /* a refusal's line starts with its code, which the host's refusal keeps */
    if (rc != CRADLE_OK) child_exit(fd, CHILD_REFUSED, "%d %s", rc, message);
    rc = cradle_sim_swap(sim, contract, message, sizeof message);
    if (rc != CRADLE_OK) child_exit(fd, CHILD_REFUSED, "%d %s", rc, message);
    uint32_t offset = contract->state_align < TWIN_BLOCK_ALIGN ? contract->state_align : TWIN_BLOCK_ALIGN;
    uint8_t *block = child_block = aligned_alloc(TWIN_BLOCK_ALIGN, block_bytes(sim->state_capacity));
    if (!block) child_exit(fd, CHILD_NO_MEMORY, "no memory for the twin's state block");
    static cradle_twin twin;
    rc = cradle_twin_init(&twin, sim, block + offset, sim->state_capacity, offset, message, sizeof message);
    if (rc != CRADLE_OK) child_exit(fd, CHILD_REFUSED, "%d %s", rc, message);
    static const uint8_t empty[CRADLE_SNAPSHOT_MAX];
    uint32_t steps = count ? count : 1;
    for (uint32_t i = 0; i < steps; i++) {
        const uint8_t *snapshot = count ? snapshots + (size_t)i * sim->snapshot_size : empty;
        cradle_sim_step(sim, snapshot);
        cradle_twin_step(&twin, snapshot);
        if (cradle_sim_output(sim) != CRADLE_OK)
            child_exit(fd, CHILD_OUTPUT, "output() of step %" PRIu64 " claimed more bytes than its buffer holds",
                       sim->next_step - 1);
        if (!cradle_twin_check(&twin, sim, sim->output, sim->output_size)) {
            const cradle_twin_difference *d = &twin.difference;
            char a[20], b[20];
            hex(a, sizeof a, d->first, d->first_shown);
            hex(b, sizeof b, d->twin, d->twin_shown);
            child_exit(fd, CHILD_DIFFERS,
                       "not deterministic: step %" PRIu64 " (trial step %" PRIu32 " of %" PRIu32 ") run twice "
                       "differs at %s: %s, then %s (a read outside the state, or a pointer in it; "
                       "cradle-replay --synctest on a log of it says which)",
                       d->step, i + 1, steps, d->name, a, b);
        }
    }
    child_exit(fd, CHILD_OK, "ok %" PRIu32 " steps", steps);
}

int cradle_trial_start(cradle_trial *t, const cradle_reload *r, cradle_sim *sim, const uint8_t *snapshots,
                       uint32_t count, uint64_t deadline_ns, uint64_t now_ns, char *message,
                       size_t message_size) {
    assert(t && r && sim && r->staged_path[0] && t->pid == 0 && "a staged build, no trial running");
    assert((snapshots || count == 0) && sim->snapshot_size <= CRADLE_SNAPSHOT_MAX);
    int fds[2];
    if (pipe(fds) != 0)
        return cradle__say(CRADLE_EIO, message, message_size, "cannot make the trial's pipe: %s", strerror(errno));
    (void)fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    (void)fcntl(fds[0], F_SETFL, O_NONBLOCK);
    uint64_t before = cradle_mono_ns();
    pid_t pid = fork();
    int fork_errno = errno;
    if (pid == 0) {
        (void)close(fds[0]);
        run_child(fds[1], r, sim, snapshots, count);
    }
    t->fork_ns = cradle_mono_ns() - before;
    (void)close(fds[1]);
    if (pid < 0) {
        (void)close(fds[0]);
        return cradle__say(CRADLE_EIO, message, message_size, "cannot fork the trial: %s", strerror(fork_errno));
    }
    t->pid = (long)pid;
    t->fd = fds[0];
    t->started_ns = now_ns;
    t->deadline_ns = now_ns + (deadline_ns ? deadline_ns : CRADLE_TRIAL_DEFAULT_DEADLINE_NS);
    t->got = 0;
    t->line[0] = '\0';
    t->runs++;
    return CRADLE_OK;
}

/* Reads what the child wrote so far (a line, at most the buffer). */
static void read_line(cradle_trial *t) {
    while (t->got + 1 < sizeof t->line) {
        ssize_t n = read(t->fd, t->line + t->got, sizeof t->line - 1 - t->got);
        if (n > 0) {
            t->got += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        break;
    }
    t->line[t->got] = '\0';
}

static void finish(cradle_trial *t, uint64_t now_ns) {
    (void)close(t->fd);
    t->fd = -1;
    t->pid = 0;
    t->last_ns = now_ns - t->started_ns;
}

/* A contract refusal's line, "<code> <message>": the code is kept when it
 * is a loader's refusal (the same the host would make loading it itself). */
static bool refusal(cradle_trial *t, char *message, size_t message_size) {
    char *end = NULL;
    long code = strtol(t->line, &end, 10);
    if (end == t->line || *end != ' ' || code > CRADLE_ERELOAD_OPEN || code < CRADLE_ERELOAD_MISMATCH) return false;
    t->error = (int)code;
    if (message && message_size) snprintf(message, message_size, "%s", end + 1);
    return true;
}

/* What an ended child's status and line mean. */
static cradle_trial_state verdict(cradle_trial *t, int status, char *message, size_t message_size) {
    read_line(t);
    if (WIFEXITED(status) && WEXITSTATUS(status) == CHILD_OK && strncmp(t->line, "ok", 2) == 0) {
        t->passed++;
        if (message && message_size) snprintf(message, message_size, "%s", t->line);
        return CRADLE_TRIAL_PASSED;
    }
    t->failed++;
    t->error = CRADLE_ERELOAD_TRIAL;
    if (WIFEXITED(status) && WEXITSTATUS(status) == CHILD_REFUSED && refusal(t, message, message_size))
        return CRADLE_TRIAL_FAILED;
    if (WIFSIGNALED(status))
        (void)cradle__say(CRADLE_ERELOAD_TRIAL, message, message_size, "the new build crashed in its trial: %s "
                          "(signal %d)", strsignal(WTERMSIG(status)), WTERMSIG(status));
    else if (t->got > 0 && WIFEXITED(status) && WEXITSTATUS(status) != CHILD_OK)
        (void)cradle__say(CRADLE_ERELOAD_TRIAL, message, message_size, "%s", t->line);
    else
        (void)cradle__say(CRADLE_ERELOAD_TRIAL, message, message_size, "the new build ended its trial early "
                          "(exit status %d) without a report: a crash a sanitizer caught, or exit() in the game",
                          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return CRADLE_TRIAL_FAILED;
}

cradle_trial_state cradle_trial_poll(cradle_trial *t, uint64_t now_ns, char *message, size_t message_size) {
    assert(t);
    if (t->pid == 0) return CRADLE_TRIAL_IDLE;
    int status = 0;
    pid_t done = waitpid((pid_t)t->pid, &status, WNOHANG);
    if (done == (pid_t)t->pid) {
        cradle_trial_state s = verdict(t, status, message, message_size);
        finish(t, now_ns);
        return s;
    }
    if (now_ns < t->deadline_ns) return CRADLE_TRIAL_RUNNING;
    t->error = CRADLE_ERELOAD_TRIAL;
    (void)kill((pid_t)t->pid, SIGKILL);
    (void)waitpid((pid_t)t->pid, &status, 0);
    uint64_t ms = (t->deadline_ns - t->started_ns) / 1000000u;
    finish(t, now_ns);
    t->failed++;
    (void)cradle__say(CRADLE_ERELOAD_TRIAL, message, message_size, "the new build did not finish its trial "
                      "within %" PRIu64 " ms (a step that never returns?); it was killed", ms);
    return CRADLE_TRIAL_FAILED;
}

cradle_trial_state cradle_trial_wait(cradle_trial *t, uint64_t now_ns, char *message, size_t message_size) {
    assert(t);
    uint64_t waited_from = cradle_mono_ns(); /* the real time waited, counted onto the caller's clock */
    for (;;) {
        uint64_t now = now_ns + (cradle_mono_ns() - waited_from);
        cradle_trial_state s = cradle_trial_poll(t, now, message, message_size);
        if (s != CRADLE_TRIAL_RUNNING) return s;
        /* the pipe ends (EOF) when the child exits or dies; until then sleep on it */
        uint64_t left_ms = (t->deadline_ns - now) / 1000000u + 1u;
        struct pollfd p = {.fd = t->fd, .events = POLLIN};
        if (poll(&p, 1, left_ms > 1000u ? 1000 : (int)left_ms) > 0) read_line(t);
        if (p.revents & POLLHUP) {
            int status = 0;
            (void)waitpid((pid_t)t->pid, &status, 0); /* it is exiting: the pipe closed */
            cradle_trial_state end = verdict(t, status, message, message_size);
            finish(t, now_ns + (cradle_mono_ns() - waited_from));
            return end;
        }
    }
}

void cradle_trial_stop(cradle_trial *t) {
    assert(t);
    if (t->pid == 0) return;
    (void)kill((pid_t)t->pid, SIGKILL);
    int status;
    (void)waitpid((pid_t)t->pid, &status, 0);
    finish(t, cradle_mono_ns());
}
