#ifndef CRADLE_TOOLS_SYNCTEST_H
#define CRADLE_TOOLS_SYNCTEST_H
/*
 * synctest: cradle-replay --synctest, the determinism check to run first on
 * a new game. It rides on the replay driver (cradle/replay.h) and a twin
 * (cradle/twin.h): a second sim that started as a copy of the driver's
 * state at another address (the build's state_align into a 64-byte block,
 * the least the contract allows) and runs every step the driver runs, on
 * the same snapshot. After each step the two state blocks and output bytes
 * are compared whole. While they are equal, the twin's step is that step
 * run again from the state saved before it, so this is the check "run each
 * step twice" at the cost of one more step() and one memcmp of the state
 * (saving and restoring would cost two copies more).
 *
 * Every `every` steps the driver's state block also moves to another
 * storage and back (cradle_replay_move), and the replay goes on from there:
 * the log's hashes after a move must still match.
 *
 * At the first difference the sync test says why: it seeks the replay back
 * before that step and runs the step twice at the same address
 * (cradle_replay_rerun). If those two agree, only the copy elsewhere
 * differed: the state depends on its address (a pointer kept in it). If they
 * differ too, the step reads something outside its state block.
 *
 * The caller opens the replay with config.output (the outputs are compared
 * from config.output_from on), hands every item next() returns to
 * synctest_take(), and handles the items as a plain replay does (the
 * driver compares the log's hashes and its trailer). At a RELOAD item the
 * twin takes a fresh copy of the state the new build took over.
 *
 * The game runs on one thread only: the twin's step follows the driver's on
 * the caller's thread, never beside it. The ABI does not ask a game to be
 * thread-safe, and a game that breaks it by keeping mutable data outside
 * its state block (the very breach this test looks for) would race between
 * two concurrent runs of a step: the report would then depend on which run
 * got there first, and ThreadSanitizer would stop the program before the
 * report. Run one after the other, the same broken game fails the same way
 * every run. What the second thread may do is read: with two cores and a
 * state of SYNCTEST_PARALLEL_MIN bytes or more, the two state blocks are
 * compared in halves, one on each thread (the same check; only the time
 * differs). The threads hand over through two atomic counters
 * (release/acquire), spinning briefly and then yielding.
 *
 * Memory: open allocates two blocks of the driver's capacity (the twin's
 * and the moves') and may start the worker; take allocates nothing.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cradle/cradle.h"

#define SYNCTEST_DEFAULT_EVERY 100u
#define SYNCTEST_SHOW 16u /* bytes of each run shown from the first difference */
#define SYNCTEST_PARALLEL_MIN (64u * 1024u) /* state bytes from which the compare is split across two threads */

/* The first difference between a step's two runs. */
typedef struct synctest_failure {
    uint64_t step;
    bool state;                 /* the state block differs; else the output */
    bool moved;                 /* the step repeats at one address, not at another: the
                                   state depends on its address (see above) */
    bool classified;            /* the step was run twice in place to tell the cause */
    size_t offset;              /* the first differing byte of the state or the output */
    char name[128];             /* that byte: "output byte 3", "state byte 16", or by the
                                   game's layout "players[3].score+2 (state byte 812)" */
    size_t first_size, rerun_size; /* the bytes each run has (the state: both state_size) */
    uint8_t first[SYNCTEST_SHOW], rerun[SYNCTEST_SHOW]; /* the bytes from offset */
    size_t first_shown, rerun_shown;
    uint64_t first_hash, rerun_hash; /* the state hash after each run */
} synctest_failure;

/* The second thread's one job at a time: posted is the count of jobs the
 * main thread handed over, done the count the worker finished. */
typedef enum synctest_job { SYNCTEST_JOB_COMPARE = 1, SYNCTEST_JOB_QUIT } synctest_job;

typedef struct synctest_worker {
    bool started;
    pthread_t thread;
    _Atomic uint64_t posted, done;
    synctest_job job;
    const cradle_sim *first;    /* COMPARE: the driver's sim, bytes [from, to) */
    size_t from, to;
    bool equal;                 /* COMPARE: the result */
} synctest_worker;

typedef struct synctest {
    uint64_t every;             /* move the state before the re-run of every every-th step */
    uint32_t capacity;          /* bytes of each block: the driver's state capacity */
    cradle_twin twin;           /* runs every step beside the driver's sim */
    uint8_t *twin_block;        /* the twin's storage, capacity + 64 bytes at 64 */
    uint8_t *block;             /* where the driver's state moves, capacity + 64 bytes at 64 */
    bool away;                  /* the driver's state is in block */
    uint64_t reruns, moves;
    bool failed;
    synctest_failure failure;
    synctest_worker worker;     /* started when parallel */
} synctest;

/* Allocates the blocks for the open replay r and starts the twin from its
 * state (step 0's, or the step the replay is at). every >= 1. Returns 0,
 * CRADLE_ENOMEM, or a twin that does not fit (r cannot hold it either). */
int synctest_open(synctest *t, cradle_replay *r, uint64_t every);

/* Takes the item cradle_replay_next() just returned: a STEP is run by the
 * twin and compared (and the driver's state moved after it when its turn
 * comes), a RELOAD restarts the twin from the state. Returns 0; 1 when the
 * two runs differ (t->failed, t->failure, the cause told; stop replaying:
 * the replay was sought back for it); or a negative code with r->message
 * (the driver's sticky error, or a move it refused). */
int synctest_take(synctest *t, cradle_replay *r, const cradle_replay_item *item);

/* Prints the failure: the step, the first differing byte (named by the
 * game's state layout when it has one: cradle/layout.h), both runs'
 * bytes in hex, the state hashes and what such a difference usually
 * means. Each line starts with program and ": " or two spaces. */
void synctest_print_failure(const synctest *t, FILE *to, const char *program);

/* Releases the blocks. Safe on a zeroed struct and twice. Call it after
 * cradle_replay_close() or after moving the state home (the state may be
 * in t->block). */
void synctest_close(synctest *t);

#endif
