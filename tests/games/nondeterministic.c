/*
 * Test builds of a game that break the determinism rules on purpose, so
 * that the tests can provoke a desync from outside the programs (no hook in
 * the client or the server). NONDETERMINISTIC_BREACH picks the breach:
 *
 *   0 (default)  at step NONDETERMINISTIC_FROM the step mixes the process id
 *                into the state, as a game reading a clock or uninitialised
 *                memory would mix something of its own process. Server and
 *                client load the same file (the same build id) and disagree
 *                from there (client_desync.sh).
 *   1 (pointer)  the state keeps a pointer to its own total (set by init)
 *                and each step adds its one through it: once the host moves
 *                the state block, the step writes to the old block.
 *   2 (static)   a static counter outside the state counts the calls of
 *                step() and each step stores it in the state (`calls`, at
 *                byte 16, named by the state's layout): a straight replay in
 *                a fresh process agrees with the recording, a step run twice
 *                does not (synctest.sh).
 *   3 (static)   the same static counter mixed into the total: the state
 *                keeps its layout (a reload to it fits), two runs differ.
 *   4 (crash)    step() writes through a null pointer.
 *   5 (hang)     step() never returns.
 *   6 (hang at)  step NONDETERMINISTIC_FROM never returns: a session that
 *                runs, then hangs (server_hang.sh).
 *
 * The builds a reload trial refuses (server_reload_trial.sh) are 3, 4 and 5
 * of a game named "trial", which the session starts on as breach 0 with
 * NONDETERMINISTIC_FROM beyond any step: a plain counter.
 *
 * Otherwise it is a counter: every step adds one and each present player's
 * input byte to a total. 8 players, one input byte each, 60 steps a second.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "cradle/game_abi.h"
#include "cradle_build_id.h"

#ifndef NONDETERMINISTIC_FROM
#define NONDETERMINISTIC_FROM 250u
#endif
#ifndef NONDETERMINISTIC_BREACH
#define NONDETERMINISTIC_BREACH 0
#endif
#ifndef NONDETERMINISTIC_NAME
#define NONDETERMINISTIC_NAME "nondeterministic"
#endif
#define PLAYERS 8u

typedef struct state {
    uint64_t total;
    uint64_t steps;
#if NONDETERMINISTIC_BREACH == 1
    uint64_t *total_at; /* the breach: a pointer into the state block */
#elif NONDETERMINISTIC_BREACH == 2
    uint64_t calls;     /* the breach: a copy of a counter outside the state */
#endif
#ifdef NONDETERMINISTIC_PAD
    uint8_t pad[NONDETERMINISTIC_PAD]; /* a large state: the sync test's twin on its own thread */
#endif
} state;

static int init(void *block, uint64_t seed, uint32_t players) {
    if (players < 1 || players > PLAYERS) return -1;
    state *s = block;
    s->total = seed;
#if NONDETERMINISTIC_BREACH == 1
    s->total_at = &s->total;
#endif
    return 0;
}

static void step(void *block, const cradle_game_step *st, const cradle_event_sink *events) {
    (void)events;
    state *s = block;
#if NONDETERMINISTIC_BREACH == 1
    *s->total_at += 1; /* the old block's total once the state has moved */
#else
    s->total += 1;
#endif
    for (uint32_t slot = 0; slot < PLAYERS; slot++)
        if (cradle_snapshot_present(st->snapshot, slot))
            s->total += *cradle_snapshot_input(st->snapshot, PLAYERS, 1, slot);
#if NONDETERMINISTIC_BREACH == 0
    if (st->index == NONDETERMINISTIC_FROM) s->total += (uint64_t)getpid(); /* the breach */
#elif NONDETERMINISTIC_BREACH == 2
    static uint64_t calls; /* the breach: mutable data outside the state block */
    s->calls = ++calls;
#elif NONDETERMINISTIC_BREACH == 3
    static uint64_t calls; /* the breach, mixed into a field every build has */
    s->total += ++calls;
#elif NONDETERMINISTIC_BREACH == 4
    /* The breach: a write through a null pointer. The store itself is
     * volatile: an access to a volatile object is behaviour the compiler
     * must keep. A volatile pointer with a plain store was not enough: gcc
     * 12 at -O2 read the pointer, found by points-to analysis that it can
     * only be null, and deleted the store, so the Release build of this
     * "crash" ran clean. */
    volatile uint64_t *volatile nowhere = NULL;
    *nowhere = st->index;
#elif NONDETERMINISTIC_BREACH == 5
    for (volatile int forever = 1; forever;) {
    }
#elif NONDETERMINISTIC_BREACH == 6
    for (volatile int forever = st->index == NONDETERMINISTIC_FROM; forever;) {
    }
#endif
    s->steps++;
}

static size_t output(const void *block, uint64_t index, uint8_t *out, size_t capacity) {
    (void)index;
    if (capacity < sizeof(uint64_t)) return 0;
    memcpy(out, &((const state *)block)->total, sizeof(uint64_t));
    return sizeof(uint64_t);
}

#if NONDETERMINISTIC_BREACH != 1
/* Names for the state's bytes (game_abi.h, minor 3): reports say "total" or
 * "calls". The pointer build keeps none: its reports show the fallback,
 * "state byte N". */
static const cradle_state_region layout[] = {
    {"total", 0, offsetof(state, total), sizeof(uint64_t), 1, 0},
    {"steps", 0, offsetof(state, steps), sizeof(uint64_t), 1, 0},
#if NONDETERMINISTIC_BREACH == 2
    {"calls", 0, offsetof(state, calls), sizeof(uint64_t), 1, 0},
#endif
};
#endif

static const cradle_game_contract contract = {
    .abi_major = CRADLE_ABI_MAJOR,
    .abi_minor = CRADLE_ABI_MINOR,
    .state_size = sizeof(state),
    .state_align = _Alignof(state),
    .input_bytes = 1,
    .max_players = PLAYERS,
    .steps_per_second = 60,
    .source_frames_per_second = 20,
    .view_width = 64,
    .view_height = 64,
    .name = NONDETERMINISTIC_NAME,
    .build_id = CRADLE_BUILD_ID,
    .init = init,
    .step = step,
    .output = output,
#if NONDETERMINISTIC_BREACH != 1
    .layout = layout,
    .layout_count = sizeof layout / sizeof layout[0],
#endif
};

CRADLE_GAME_DEFINE_CONTRACT(&contract)
