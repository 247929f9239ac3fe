#ifndef CRADLE_SIM_STORAGE_H
#define CRADLE_SIM_STORAGE_H
/*
 * sim_storage: the memory a sim runs in, allocated once at start-up, and the
 * sim bound to it (cradle/sim.h). Every program, test and benchmark that
 * steps a game makes its sim here: the state block of one capacity at one
 * alignment, the previous state and a scratch block when asked, the step's
 * event storage. The sim is then ready for cradle_sim_start() or
 * cradle_sim_restore(); nothing allocates after.
 *
 *   cradle_sim_storage storage;
 *   char why[CRADLE_SIM_STORAGE_MESSAGE_MAX];
 *   int rc = cradle_sim_storage_open(&storage, &sim, contract,
 *                                    &(cradle_sim_storage_config){.previous = true}, why, sizeof why);
 *   ... cradle_sim_start(&sim, seed, players) ...
 *   cradle_sim_storage_close(&storage);
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/game_abi.h"
#include "cradle/sim.h"

#define CRADLE_SIM_STORAGE_MESSAGE_MAX 256u
#define CRADLE_SIM_STORAGE_MIN_ALIGN 64u /* a cache line, at the least */

typedef struct cradle_sim_storage_config {
    uint32_t capacity;       /* state bytes; 0 = the contract's state_size (a host that reloads
                                gives room for later builds) */
    uint32_t align;          /* 0 = the contract's, at least CRADLE_SIM_STORAGE_MIN_ALIGN */
    bool previous;           /* keep the previous state (interpolation) */
    bool scratch;            /* a scratch block: data files are tried on a copy of the state */
    uint32_t event_capacity; /* the step's events kept; 0 = dropped */
} cradle_sim_storage_config;

typedef struct cradle_sim_storage {
    uint8_t *state, *previous, *scratch; /* previous and scratch NULL when not asked */
    cradle_event *events;
    uint32_t capacity, align;
} cradle_sim_storage;

/* Allocates the blocks for contract and binds sim to them (cradle_sim_init).
 * Returns 0; CRADLE_ENOMEM; or cradle_sim_init's error when the capacity or
 * alignment does not fit the contract. A message names what failed. On
 * failure nothing is left allocated. */
int cradle_sim_storage_open(cradle_sim_storage *storage, cradle_sim *sim, const cradle_game_contract *contract,
                            const cradle_sim_storage_config *config, char *message, size_t message_size);

/* Frees the blocks (the sim bound to them is then unusable). Safe on a
 * zeroed or closed storage. */
void cradle_sim_storage_close(cradle_sim_storage *storage);

#endif
