#ifndef CRADLE_SIM_H
#define CRADLE_SIM_H
/*
 * sim: how a step runs. One loaded game contract, its state block and the
 * state one step earlier, the step numbering (index, source frame, phase by
 * the clock's rules), the step's events, the state hash and the output
 * bytes. Every program that steps a game steps it here: the server, the
 * client, --play, cradle-replay, cradle-record, the tests and the benches.
 *
 *   cradle_sim_init()     binds caller storage to a contract (no game call)
 *   cradle_sim_start()    zeroes the state and runs the game's init() for
 *                         step 0; or cradle_sim_restore() takes a state
 *                         block saved at some step (a late join, a resume)
 *   cradle_sim_step()     runs the next step on its snapshot
 *   cradle_sim_swap()     puts another build of the game in charge at a step
 *                         boundary and runs its on_reload(), the one act a
 *                         reload is on server, clients and replays alike
 *   cradle_sim_apply_data()  takes a game data file into the state at a step
 *                         boundary (game_abi.h, minor 4), all or nothing
 *   cradle_sim_hash(), cradle_sim_output()   what hosts compare and record
 *   cradle_sim_move()     puts the state block at another address
 *
 * Memory: the caller owns the sim and every buffer in its config and keeps
 * them alive while the sim is in use; nothing here allocates. The state
 * storage holds state_capacity bytes at state_align, enough for every build
 * the host may swap in. The previous-state storage is optional (a renderer
 * interpolates between the two; a replay does not need it).
 *
 * Trust: the contract must already have passed cradle_contract_check() (the
 * reload module does it for every library it loads); calling with one that
 * did not is a programmer error. What a game returns at run time is checked
 * here: an init() that refuses, an output() that claims more bytes than it
 * was given.
 *
 * Pure: the sim reads no clock, file or socket. The state hash is a function
 * the caller passes (the I/O layer's cradle_hash64, which uses libsodium).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"
#include "cradle/events.h"
#include "cradle/game_abi.h"

typedef uint64_t (*cradle_sim_hash_fn)(const void *data, size_t size);

/* Zero means default where a field says so. */
typedef struct cradle_sim_config {
    void *state;                /* required: state_capacity bytes at state_align */
    void *previous;             /* NULL: no previous state kept */
    void *scratch;              /* NULL: no data files applied; else state_capacity bytes at
                                   state_align, where data() works on a copy of the state */
    uint32_t state_capacity;    /* bytes of state (and previous); 0 = the contract's state_size */
    uint32_t state_align;       /* alignment the storage has; 0 = the contract's state_align */
    cradle_event *events;       /* the step's event storage; NULL with capacity 0 drops them all */
    uint32_t event_capacity;
    cradle_sim_hash_fn hash;    /* required */
} cradle_sim_config;

typedef struct cradle_sim {
    const cradle_game_contract *contract; /* the build in charge */
    uint8_t *state;
    uint8_t *previous;          /* NULL when not kept */
    uint8_t *scratch;           /* NULL when data files are not applied */
    uint32_t scratch_capacity, scratch_align; /* what the scratch storage holds (moves keep it) */
    uint32_t state_capacity;
    uint32_t state_align;
    uint32_t snapshot_size;     /* cradle_snapshot_size() of the contract */
    uint32_t steps_per_source_frame;
    uint64_t next_step;         /* the index the next cradle_sim_step() runs */
    bool has_previous;          /* previous holds the state before the last step */
    cradle_event_queue events;  /* the last step's events */
    cradle_sim_hash_fn hash;
    uint64_t steps_run;         /* steps run since init */
    uint64_t swaps;             /* cradle_sim_swap() calls that took effect */
    uint64_t data_applied;      /* cradle_sim_apply_data() calls that took effect */
    /* The game the sim was set up for, kept by value: at a reload the old
     * build's library may already be closed, and its contract with it. */
    char game_name[CRADLE_GAME_NAME_MAX + 1];
    uint32_t input_bytes, max_players, steps_per_second, source_frames_per_second;
    size_t output_size;         /* bytes in output after cradle_sim_output() */
    uint8_t output[CRADLE_GAME_OUTPUT_MAX];
} cradle_sim;

/* Binds the storage to a checked contract. The state starts zeroed at step
 * 0 and no game function runs. Returns 0, or CRADLE_ERELOAD_SIZE /
 * CRADLE_ERELOAD_ALIGN when the storage is too small or less aligned than
 * the contract needs (with a message naming both values). */
CRADLE_MUST_CHECK int cradle_sim_init(cradle_sim *sim, const cradle_sim_config *config,
                                      const cradle_game_contract *contract, char *message,
                                      size_t message_size);

/* A new game: zeroes the state and runs init(seed, player_count); the next
 * step is 0. Returns 0, or CRADLE_ESIM_INIT when the game refuses the player
 * count (the state is zero again). */
CRADLE_MUST_CHECK int cradle_sim_start(cradle_sim *sim, uint64_t seed, uint32_t player_count);

/* Takes a state block saved before step next_step (size must be the
 * contract's state_size): the next step run is next_step. Returns 0 or
 * CRADLE_ESIM_STATE for another size (nothing changes). */
CRADLE_MUST_CHECK int cradle_sim_restore(cradle_sim *sim, const void *state, size_t size,
                                         uint64_t next_step);

/* Takes the whole state storage saved before step next_step: size bytes,
 * at least the contract's state_size (the bytes past it are what a later
 * build grows into, kept across reloads as the sim keeps them); the
 * storage past size is zero, and bytes past state_capacity are not taken.
 * For a seek that restores a keyframe across reloads. Returns 0 or
 * CRADLE_ESIM_STATE when size is below the state_size (nothing changes). */
CRADLE_MUST_CHECK int cradle_sim_restore_storage(cradle_sim *sim, const void *storage, size_t size,
                                                 uint64_t next_step);

/* Copies the state block (the contract's state_size bytes) to out. */
void cradle_sim_save(const cradle_sim *sim, void *out);

/* Runs step next_step on snapshot (snapshot_size bytes), numbered by the
 * clock's rules (source frame, phase: clock.h): keeps the state it starts
 * from as previous (when kept), clears the events, calls step() and
 * advances next_step. */
void cradle_sim_step(cradle_sim *sim, const uint8_t *snapshot);

/* The state hash of the state block as it is now. */
uint64_t cradle_sim_hash(const cradle_sim *sim);

/* Writes the game's canonical output for the last step run (index
 * next_step - 1) into sim->output and sets output_size (0 when the game has
 * no output()). Returns 0, or CRADLE_ESIM_OUTPUT when output() claimed more
 * bytes than the buffer holds (output_size is then 0). Asserts that a step
 * has run. */
CRADLE_MUST_CHECK int cradle_sim_output(cradle_sim *sim);

/* A reload at the step boundary before next_step: the build described by
 * contract takes over the state block as it is and its on_reload() runs,
 * whether or not it is the build already in charge (a reload is one act,
 * the same on every host). The build in charge before may already be
 * unloaded: nothing of its contract is read. Returns 0, or without any change
 * CRADLE_ERELOAD_SIZE / _ALIGN when the build's state does not fit the
 * storage, CRADLE_ERELOAD_MISMATCH when it is another game (name, input
 * bytes, players or rates differ), each with a message. */
CRADLE_MUST_CHECK int cradle_sim_swap(cradle_sim *sim, const cradle_game_contract *contract,
                                      char *message, size_t message_size);

/* Game data (game_abi.h, minor 4) at the step boundary before next_step:
 * runs the build in charge's data() for data file `file` on a copy of the
 * state (in the scratch storage) with size bytes, and makes the copy the
 * state only when data() accepts, so a refusal changes nothing. The same
 * act on server, clients and replays. Returns 0; CRADLE_EDATA_REFUSED with
 * *refusal as the game filled it (its message made printable and never
 * empty); or CRADLE_EDATA when the build declares no file `file` or size
 * exceeds its max_bytes, or the state (moved to larger storage) has
 * outgrown the scratch storage (refusal->message says which). Asserts that
 * the sim has scratch storage. */
CRADLE_MUST_CHECK int cradle_sim_apply_data(cradle_sim *sim, uint32_t file, const uint8_t *bytes, uint32_t size,
                                            cradle_data_refusal *refusal);

/* Points the sim at another build's contract without a reload: no
 * on_reload runs and swaps does not count it. For a host whose loader had to
 * unload the build in charge while it waits for the announced one (a client
 * that loaded the wrong build): the sim must not keep a closed library's
 * contract, and it runs no step until cradle_sim_swap() brings the right
 * build. Checks and return codes as cradle_sim_swap(). */
CRADLE_MUST_CHECK int cradle_sim_rebind(cradle_sim *sim, const cradle_game_contract *contract,
                                        char *message, size_t message_size);

/* Moves the state block to other storage: capacity bytes at align (the
 * config's rules), which the caller owns from now on; the storage used
 * before is the caller's again. The sim copies its whole state storage
 * (the bytes past the build's state_size too, for a later build to grow
 * into; a smaller capacity keeps the first capacity bytes, a larger one is
 * zero past the old capacity) and the game sees the same bytes at another
 * address on its next call. No game function runs and previous stays where
 * it is. For a host that relocates the state, such as a sync test checking
 * that the state holds no pointer into itself. Returns 0, or without any
 * change CRADLE_ERELOAD_SIZE / _ALIGN when the build in charge does not fit
 * (a message names both values). */
CRADLE_MUST_CHECK int cradle_sim_move(cradle_sim *sim, void *storage, uint32_t capacity, uint32_t align,
                                      char *message, size_t message_size);

/* Bytes of the state block of the build in charge. */
static inline uint32_t cradle_sim_state_size(const cradle_sim *sim) { return sim->contract->state_size; }

#endif
