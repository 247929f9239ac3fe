#ifndef CRADLE_TRIAL_H
#define CRADLE_TRIAL_H
/*
 * trial: a new build proves itself in a child process before it takes over
 * a live session, so that a build that crashes, hangs or is not
 * deterministic is refused and the session keeps the old one.
 *
 * The host stages the build (reload.h, config.stage: copied and its file
 * checked, not opened) and starts a trial. fork() gives the child a copy of
 * the host's whole memory, the state block included, at the cost of copying
 * the page tables (the only stall of the host's thread; the pages are shared
 * until either side writes them). The child, alone with its copy:
 *   1. opens the staged build and checks its contract as a swap would
 *      (cradle_reload_open_staged): a constructor that crashes crashes here;
 *   2. swaps it into its copy of the sim (on_reload runs);
 *   3. runs the given recent snapshots as the next steps, each twice: the
 *      sim and a twin of its state at another address (twin.h), compared
 *      after every step, state and output;
 * and reports one line through a pipe: "ok", or what differed (the step and
 * the field, by the game's layout). The host polls the trial between steps
 * and never waits for it (cradle_trial_wait is for a host that must):
 *   - a line "ok" and exit 0                 CRADLE_TRIAL_PASSED
 *   - another exit, or death by a signal     CRADLE_TRIAL_FAILED, the reason
 *     (a contract the loader refuses keeps the loader's code in t->error)
 *   - still running at the deadline          killed (SIGKILL), FAILED
 * The child ends with _exit(): it flushes nothing of the host's and runs no
 * atexit handler; it touches no file, socket or thread of the host's (it
 * holds their descriptors until it exits and never uses them), and it dies
 * with the host (PR_SET_PDEATHSIG).
 *
 * What it cannot catch: nondeterminism that is the same twice in one
 * process (the process id, a clock read within a microsecond); the sync
 * test's second-process replay is for that. A build that differs from the
 * old one in its rules is not a failure: the trial compares the new build
 * with itself.
 *
 * Memory: the host allocates nothing for a trial; the child allocates its
 * twin's block (its own memory, gone with it). One trial runs at a time.
 * Linux: fork, PR_SET_PDEATHSIG, a pipe.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/reload.h"
#include "cradle/sim.h"

#define CRADLE_TRIAL_DEFAULT_STEPS 60u                   /* one second at 60 steps a second */
#define CRADLE_TRIAL_DEFAULT_DEADLINE_NS 2000000000ull   /* 2 s */
#define CRADLE_TRIAL_MESSAGE_MAX 256u

typedef enum cradle_trial_state {
    CRADLE_TRIAL_IDLE,    /* no trial */
    CRADLE_TRIAL_RUNNING,
    CRADLE_TRIAL_PASSED,
    CRADLE_TRIAL_FAILED,
} cradle_trial_state;

typedef struct cradle_trial {
    long pid;                  /* the child; 0 when none */
    int fd;                    /* the read end of its pipe; -1 when none */
    uint64_t deadline_ns;      /* monotonic time it is killed at */
    uint64_t started_ns;
    char line[CRADLE_TRIAL_MESSAGE_MAX]; /* what the child wrote so far */
    size_t got;
    int error;                 /* after FAILED: CRADLE_ERELOAD_TRIAL, or the loader's code when
                                  the child refused the contract (a size, another game) */
    /* measured */
    uint64_t fork_ns;          /* how long the last fork() held the host's thread */
    uint64_t last_ns;          /* start to result of the last trial */
    uint64_t runs, passed, failed;
} cradle_trial;

/* A trial of r's staged build (r was opened with config.stage and the last
 * poll or reload returned CRADLE_RELOAD_STAGED) on a copy of sim, over
 * `count` snapshots (count x sim->snapshot_size bytes, oldest first) run as
 * the sim's next steps; count 0 runs one step on an empty snapshot.
 * deadline_ns 0 means the default; now_ns and poll's are cradle_mono_ns()
 * (the wait reads that clock too). Returns 0 (RUNNING), or CRADLE_EIO with
 * a message when no child could be started. */
CRADLE_MUST_CHECK int cradle_trial_start(cradle_trial *t, const cradle_reload *r, cradle_sim *sim,
                                         const uint8_t *snapshots, uint32_t count, uint64_t deadline_ns,
                                         uint64_t now_ns, char *message, size_t message_size);

/* Looks at the running trial without waiting: RUNNING, or its end (PASSED;
 * FAILED with the reason in message). IDLE when no trial runs. */
cradle_trial_state cradle_trial_poll(cradle_trial *t, uint64_t now_ns, char *message, size_t message_size);

/* Waits for the running trial's end (at most until its deadline) and
 * returns it as poll does. now_ns is the caller's clock now, the one the
 * trial was started on (a host may run on a test clock): the wait blocks
 * in real time and counts it onto now_ns. */
cradle_trial_state cradle_trial_wait(cradle_trial *t, uint64_t now_ns, char *message, size_t message_size);

/* Kills a running trial and reaps it. Safe when none runs. */
void cradle_trial_stop(cradle_trial *t);

/* The descriptor a host may poll for the trial's news (-1 when none). */
static inline int cradle_trial_fd(const cradle_trial *t) { return t->pid ? t->fd : -1; }

#endif
