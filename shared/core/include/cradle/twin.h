#ifndef CRADLE_TWIN_H
#define CRADLE_TWIN_H
/*
 * twin: a second sim that runs every step beside a first one, from a copy
 * of its state at another address, and the first byte where the two part.
 * The determinism check that the sync test (cradle-replay --synctest) and
 * the reload trial (trial.h) share.
 *
 * Why it is the same check as "run the step again from the state saved
 * before it": the twin starts as a byte copy of the first sim's state, and
 * after every step the two state blocks are compared whole. While they are
 * equal, the state the twin runs the next step from is the state the first
 * ran it from, so the twin's step is that step run again, without saving or
 * restoring anything: per step, one more step() and one memcmp of the
 * state, where save-and-restore costs two copies and a memcmp.
 *
 * What it catches: a step that reads something outside the state block (a
 * static, a clock, uninitialised memory) and a state that depends on its
 * address (a pointer kept in the state: the twin's copy of it points into
 * the first block). Which of the two it was, the twin cannot tell: a
 * caller that can put the first sim back before the step (the replay
 * driver seeks) runs it again at the same address and compares.
 *
 * Usage: init from the first sim (the same contract, numbering and state);
 * each step run both sims on the same snapshot (cradle_sim_step, then
 * cradle_twin_step) and call cradle_twin_check(); at a reload swap both
 * (cradle_sim_swap, cradle_twin_swap). The first difference is kept in
 * t->difference and check returns false from then on.
 *
 * Memory: the caller owns the twin and its storage; nothing allocates.
 * Pure: no OS; the hash is the first sim's function.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/sim.h"

#define CRADLE_TWIN_SHOW 16u /* bytes of each run kept from the first difference */

typedef struct cradle_twin_difference {
    uint64_t step;              /* the step whose two runs differ */
    bool state;                 /* the state block differs; else the output bytes */
    size_t offset;              /* the first differing byte of the state or the output */
    char name[128];             /* that byte: "output byte 3", "state byte 16", or by the
                                   game's layout "players[3].score+2 (state byte 812)" */
    size_t first_size, twin_size;     /* the bytes each run has */
    uint8_t first[CRADLE_TWIN_SHOW], twin[CRADLE_TWIN_SHOW]; /* the bytes from offset */
    size_t first_shown, twin_shown;
    uint64_t first_hash, twin_hash;   /* the state hash after each run */
} cradle_twin_difference;

typedef struct cradle_twin {
    cradle_sim sim;             /* the twin: its own storage, the first's build and step */
    uint64_t checked;           /* steps compared equal */
    bool failed;
    cradle_twin_difference difference;
} cradle_twin;

/* Binds storage (capacity bytes at align, neither less than the first sim's
 * state_capacity and the build's state_align) and copies the first sim's
 * whole state storage, build and next step into it. Returns 0, or
 * CRADLE_ERELOAD_SIZE / _ALIGN with a message when the storage is too
 * small. */
CRADLE_MUST_CHECK int cradle_twin_init(cradle_twin *t, const cradle_sim *first, void *storage, uint32_t capacity,
                                       uint32_t align, char *message, size_t message_size);

/* Runs the twin's next step on snapshot (the one the first sim just ran). */
void cradle_twin_step(cradle_twin *t, const uint8_t *snapshot);

/* Compares the two after the same step: the state blocks, and when
 * first_output is not NULL the output bytes (the first sim's, as the caller
 * has them, against the twin's own output()). True when they are equal; on
 * the first difference fills t->difference, sets t->failed and returns
 * false, as it does on every later call. */
bool cradle_twin_check(cradle_twin *t, const cradle_sim *first, const uint8_t *first_output,
                       size_t first_output_size);

/* Whether bytes [from, to) of the two state blocks are equal (from <= to
 * <= the build's state_size): one part of the state compare, for a caller
 * that splits it across threads. Reads only. */
bool cradle_twin_part_equal(const cradle_twin *t, const cradle_sim *first, size_t from, size_t to);

/* cradle_twin_check() for a caller that compared the whole state blocks in
 * parts (cradle_twin_part_equal) and found them equal: the output bytes
 * only, with the same results. */
bool cradle_twin_check_output(cradle_twin *t, const cradle_sim *first, const uint8_t *first_output,
                              size_t first_output_size);

/* A reload: the build takes over the twin's state too and its on_reload
 * runs there. Return codes as cradle_sim_swap(). */
CRADLE_MUST_CHECK int cradle_twin_swap(cradle_twin *t, const cradle_game_contract *contract, char *message,
                                       size_t message_size);

#endif
