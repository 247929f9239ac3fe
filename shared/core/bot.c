/*
 * bot: the game's bot entry when it has one, else generic bit flipping (see
 * bot.h).
 */
#include "cradle/bot.h"

#include <assert.h>
#include <string.h>

#include "cradle/contract.h"

/* A stream of its own, so a bot seeded like some other generator in the
 * host (the demo's, a game's) does not replay its numbers. */
#define BOT_STREAM 0xb07u

void cradle_bot_init(cradle_bot *bot, uint64_t seed) {
    assert(bot);
    memset(bot, 0, sizeof *bot);
    cradle_rng_seed(&bot->rng, seed, BOT_STREAM);
}

/* Each held bit flips when its 4-bit draw is 0: one 32-bit draw serves 8
 * bits, so a step costs input_bytes draws. */
static void bot_generic(cradle_bot *bot, uint8_t *input, uint32_t input_bytes) {
    for (uint32_t byte = 0; byte < input_bytes; byte++) {
        uint32_t r = cradle_rng_next(&bot->rng);
        for (uint32_t bit = 0; bit < 8u; bit++)
            if (((r >> (bit * 4u)) & 0xFu) == 0) bot->held[byte] ^= (uint8_t)(1u << bit);
        input[byte] = bot->held[byte];
    }
}

void cradle_bot_fill(cradle_bot *bot, const cradle_game_contract *contract, const void *state,
                     uint64_t step, uint32_t slot, uint8_t *input, uint32_t input_bytes) {
    assert(bot && contract && (input || input_bytes == 0));
    assert(input_bytes <= CRADLE_GAME_MAX_INPUT_BYTES && "a checked contract's input size");
    cradle_game_bot_fn *game_bot = cradle_contract_bot(contract);
    if (game_bot && slot < contract->max_players && input_bytes == contract->input_bytes) {
        memset(input, 0, input_bytes);
        if (!state) return; /* nothing to read yet: nothing pressed */
        uint64_t random = (uint64_t)cradle_rng_next(&bot->rng) << 32;
        random |= cradle_rng_next(&bot->rng);
        game_bot(state, step, slot, random, input, input_bytes);
        return;
    }
    bot_generic(bot, input, input_bytes);
}
