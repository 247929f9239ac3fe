#ifndef CRADLE_TOOLS_SYNCTEST_H
#define CRADLE_TOOLS_SYNCTEST_H
/*
 * synctest: cradle-replay --synctest, the determinism check to run first on
 * a new game. It rides on the replay driver (cradle/replay.h): after each
 * step the driver ran, it runs that step again from the state saved before
 * it (cradle_replay_rerun: the same state, snapshot and build) and compares
 * the two runs byte for byte, the whole state block and the output bytes.
 * Two equal state blocks have equal state hashes, so the hashes are
 * computed only to report a difference. Every `every` steps the re-run
 * happens with the state block moved to another address (in turn the
 * driver's own storage, 64-byte aligned, and a second block at an offset of
 * the build's state_align, the least the contract allows), and the replay
 * goes on from there: a pointer kept in the state shows as a difference at
 * that step, and the log's hashes after the move must still match.
 *
 * The caller opens the replay with config.output (the outputs are compared
 * from config.output_from on), hands every item next() returns to
 * synctest_take(), and handles the items as a plain replay does (the
 * driver compares the log's hashes and its trailer). A RELOAD item saves
 * the state the new build took over, so the re-run of the next step runs
 * the build in charge from it.
 *
 * Memory: open allocates three state blocks of the driver's capacity; take
 * allocates nothing.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cradle/cradle.h"

#define SYNCTEST_DEFAULT_EVERY 100u
#define SYNCTEST_SHOW 16u /* bytes of each run shown from the first difference */

/* The first difference between a step's two runs. */
typedef struct synctest_failure {
    uint64_t step;
    bool state;                 /* the state block differs; else the output */
    bool moved;                 /* the re-run ran after the state moved */
    size_t offset;              /* the first differing byte of the state or the output */
    char name[128];             /* that byte: "output byte 3", "state byte 16", or by the
                                   game's layout "players[3].score+2 (state byte 812)" */
    size_t first_size, rerun_size; /* the bytes each run has (the state: both state_size) */
    uint8_t first[SYNCTEST_SHOW], rerun[SYNCTEST_SHOW]; /* the bytes from offset */
    size_t first_shown, rerun_shown;
    uint64_t first_hash, rerun_hash; /* the state hash after each run */
} synctest_failure;

typedef struct synctest {
    uint64_t every;             /* move the state before the re-run of every every-th step */
    uint32_t capacity;          /* bytes of each block: the driver's state capacity */
    uint8_t *before;            /* the state before the step about to run */
    uint8_t *after;             /* the first run's state after the step */
    uint8_t *block;             /* the second storage, capacity + 64 bytes at 64 */
    bool away;                  /* the state is in the second storage */
    uint8_t output[CRADLE_GAME_OUTPUT_MAX]; /* the first run's output */
    size_t output_size;
    uint64_t reruns, moves;
    bool failed;
    synctest_failure failure;
} synctest;

/* Allocates the blocks for the open replay r and saves its state (step 0's,
 * or the step the replay is at). every >= 1. Returns 0 or CRADLE_ENOMEM. */
int synctest_open(synctest *t, const cradle_replay *r, uint64_t every);

/* Takes the item cradle_replay_next() just returned: a STEP is run again
 * and compared (and the state moved first when its turn comes), a RELOAD
 * saves the state. Returns 0; 1 when the two runs differ (t->failed,
 * t->failure; stop replaying); or a negative code with r->message (the
 * driver's sticky error, or a move it refused). */
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
