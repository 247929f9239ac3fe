#ifndef CRADLE_BOT_H
#define CRADLE_BOT_H
/*
 * bot: seeded play for one slot (cradle-client's --bot and --bots, the demo
 * host's players). A host knows no game: when the game's contract has a bot
 * entry (game_abi.h, minor 1) the bot asks it, passing the state and 64
 * random bits from its own generator; otherwise it plays generically,
 * holding random input bits and flipping each with probability 1/16 per
 * step (random bits with persistence), knowing nothing of what they mean.
 *
 * Deterministic: the same seed and the same calls (contract, state, step,
 * slot, in order) give the same inputs on every host. Pure: no OS, no
 * allocation; the caller owns the struct (init, then fill once per step).
 */
#include <stdint.h>

#include "cradle/game_abi.h"
#include "cradle/rng.h"

typedef struct cradle_bot {
    cradle_rng rng;
    uint8_t held[CRADLE_GAME_MAX_INPUT_BYTES]; /* the generic bot's current bits */
} cradle_bot;

/* A bot with its generator seeded from seed, holding no input. */
void cradle_bot_init(cradle_bot *bot, uint64_t seed);

/* Writes slot's input for `step` into input (input_bytes bytes, at most
 * CRADLE_GAME_MAX_INPUT_BYTES). With the game's bot (cradle_contract_bot())
 * when the contract has one, the state is there (not NULL), slot is below
 * max_players and input_bytes is the contract's; a game bot with no state yet
 * (a client still receiving it) gives an input of zeros. Otherwise the
 * generic bot. contract is checked (cradle_contract_check()) and may change
 * between calls (a reload): each call asks the one in charge. */
void cradle_bot_fill(cradle_bot *bot, const cradle_game_contract *contract, const void *state,
                     uint64_t step, uint32_t slot, uint8_t *input, uint32_t input_bytes);

#endif
