#ifndef CRADLE_CLIENT_BOT_H
#define CRADLE_CLIENT_BOT_H
/*
 * bot: seeded simple play for load tests (--bot, --bots N). Deterministic in
 * (seed, slot, step) order of calls, reads nothing else.
 *
 * For vanguard (game name "vanguard"): a movement direction held for 10..60
 * steps, then another; fire held 80% of the time; restart pressed now and
 * then (it only acts when the game is over). Any other game: each of the
 * input bits flips with probability 1/16 per step (random bits with
 * persistence).
 */
#include <stdbool.h>
#include <stdint.h>

typedef struct cradle_bot {
    uint64_t rng;
    bool vanguard;
    uint32_t bits;       /* current */
    uint32_t hold;       /* steps left on the current movement */
    uint32_t bit_count;  /* input bits of the game, <= 32 */
} cradle_bot;

void cradle_bot_init(cradle_bot *bot, uint64_t seed, const char *game_name, uint32_t input_bytes);

/* The bits for the next step (call once per step, in order). */
uint32_t cradle_bot_next(cradle_bot *bot);

#endif
