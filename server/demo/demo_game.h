#ifndef CRADLE_DEMO_GAME_H
#define CRADLE_DEMO_GAME_H
/*
 * demo_game: the demo host's game-library mode. It runs a game library
 * (game_abi.h) offline with seeded local bots: the loader (reload.h) picks up
 * a rebuilt library between two steps, the session log (log.h) records every
 * step when asked, and a replay of the recorded snapshots through a fresh
 * state checks that the run was deterministic.
 *
 * Memory: demo_game_open allocates the two state blocks and the log's block;
 * stepping allocates nothing.
 */
#include <stdbool.h>
#include <stdint.h>

#include "cradle/bot.h"
#include "cradle/cradle.h"

#define DEMO_GAME_EVENTS 1024u

typedef struct demo_game {
    cradle_reload reload;
    cradle_sim sim;                       /* the live run: build in charge, state, events */
    cradle_sim replay;                    /* the replay check's own state */
    void *state;                          /* sim's storage: state_capacity bytes, 64-aligned */
    void *replay_state;                   /* the same, for the replay check */
    uint32_t state_capacity;
    uint32_t players;
    uint32_t snapshot_size;
    uint32_t hash_interval;
    uint64_t seed;
    uint64_t steps;           /* steps run */
    uint64_t reloads;         /* swaps done */
    uint64_t refusals;        /* reloads refused */
    char last_reload[CRADLE_RELOAD_MESSAGE_MAX + 64]; /* "" until a poll said something */
    cradle_event event_storage[DEMO_GAME_EVENTS];
    cradle_log_writer log;
    bool logging;
    cradle_bot bots[CRADLE_GAME_MAX_PLAYERS]; /* slot s's bot, seeded with seed + s */
} demo_game;

/* Loads the library at path, allocates and initialises the state with seed
 * and players (0 = min(4, the game's maximum)), and opens the session log at
 * log_path (NULL: no log). On failure writes what went wrong to message and
 * returns a negative code; nothing is left open. */
int demo_game_open(demo_game *g, const char *path, uint64_t seed, uint32_t players,
                   const char *log_path, uint64_t now_unix_ns, uint64_t now_ns, char *message,
                   size_t message_size);

/* Fills snapshot (snapshot_size bytes) for step `index` with every slot's
 * presence and the seeded bots' input (bot.h): the game's bot entry reading
 * the state before that step when the game has one, else random input bits
 * with persistence. */
void demo_game_bots(demo_game *g, uint64_t index, uint8_t *snapshot);

/* Polls the loader (a rebuilt library swaps in here, between two steps),
 * then records and runs step `index` with `snapshot`. Returns 0 or the log's
 * error (the step still ran). *reload_result is the poll's result. */
int demo_game_step(demo_game *g, uint64_t index, const uint8_t *snapshot, uint64_t now_ns,
                   cradle_reload_result *reload_result);

/* The 16 bytes the host compares per step, for the step sim ran last: u64
 * step, u64 hash of the game's output bytes (of the state hash when the
 * game has no output()). */
void demo_game_output(cradle_sim *sim, uint8_t out[16]);

/* The state hash (cradle_hash64 over the contract's state size). */
uint64_t demo_game_hash(const demo_game *g);

/* Replays the recorded session through a fresh state with the library in
 * use, writing 16 output bytes per step to out. Returns false (doing
 * nothing) when the session spanned a reload: one library cannot replay it
 * (cradle-replay on the log can). */
bool demo_game_replay(demo_game *g, const cradle_session *session, uint8_t *out);

/* Makes the log durable now (the dev protocol's flush). */
int demo_game_flush(demo_game *g, uint64_t now_ns);

/* Closes the log with its trailer, unloads the library and frees. */
void demo_game_close(demo_game *g);

#endif
