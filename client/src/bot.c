/*
 * bot: seeded play (see bot.h).
 */
#include "bot.h"

#include <string.h>

static uint64_t bot_random(cradle_bot *bot) {
    uint64_t x = (bot->rng += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void cradle_bot_init(cradle_bot *bot, uint64_t seed, const char *game_name, uint32_t input_bytes) {
    memset(bot, 0, sizeof *bot);
    bot->rng = seed * 0x2545f4914f6cdd1dull + 1u;
    bot->vanguard = game_name && strcmp(game_name, "vanguard") == 0;
    bot->bit_count = input_bytes * 8u > 32u ? 32u : input_bytes * 8u;
}

uint32_t cradle_bot_next(cradle_bot *bot) {
    uint64_t r = bot_random(bot);
    if (bot->vanguard) {
        /* bits 0..3 up/down/left/right, 4 fire, 5 restart (vanguard_input.h) */
        if (bot->hold == 0) {
            static const uint32_t moves[9] = {0x0, 0x1, 0x2, 0x4, 0x8, 0x5, 0x9, 0x6, 0xA};
            bot->bits = (bot->bits & ~0xFu) | moves[r % 9u];
            bot->hold = 10u + (uint32_t)((r >> 8) % 51u);
        }
        bot->hold--;
        uint32_t fire = ((r >> 16) % 10u) < 8u ? 0x10u : 0u;
        uint32_t restart = ((r >> 24) % 64u) == 0 ? 0x20u : 0u;
        bot->bits = (bot->bits & 0xFu) | fire | restart;
        return bot->bits;
    }
    for (uint32_t i = 0; i < bot->bit_count; i++)
        if (((r >> (i * 2u % 60u)) & 0xFu) == 0) bot->bits ^= 1u << i;
    return bot->bits;
}
