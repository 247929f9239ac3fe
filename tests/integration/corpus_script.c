/*
 * cradle-corpus-script: writes a cradle-record input script for the golden
 * corpus (tests/golden/corpus.txt, input column "gen:STYLE") on stdout:
 *
 *   cradle-corpus-script STYLE SEED PLAYERS STEPS
 *
 * The same arguments give the same bytes on every machine (PCG32 from
 * libcradle_core, integers only), so the corpus commits the arguments and
 * its goldens, never the scripts. Both corpus games have 8 slots of one
 * input byte; any byte is valid input for either (vanguard ignores bits 6
 * and 7; for the counter it is a signed delta). Slots 0..PLAYERS-1 are
 * present from step 0, as cradle-record has it. The styles:
 *
 *   churn   players leave and join all through the session (never the last
 *           one present), inputs change every 12 steps or so
 *   late    the absent slots join one by one in the first two thirds
 *   leave   players leave one by one down to one; one comes back at 3/4
 *   hold    nobody joins or leaves; inputs held for about 120 steps
 *   mash    inputs change about every other step (edges: restart, fire)
 *
 * Exit status: 0, 1 when stdout cannot be written, 2 with a usage message.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cradle/parse.h"
#include "cradle/rng.h"

#define SLOTS 8u

typedef enum style { CHURN, LATE, LEAVE, HOLD, MASH } style;

typedef struct script {
    style style;
    uint64_t steps;
    uint32_t players;
    cradle_rng rng;
    bool present[SLOTS];
    uint32_t count; /* slots present */
    uint64_t next_change[SLOTS]; /* LATE and LEAVE: the step of the slot's join or leave */
} script;

/* True once in `one_in` draws. */
static bool chance(script *s, uint32_t one_in) { return cradle_rng_below(&s->rng, one_in) == 0; }

static void set_input(script *s, uint64_t step, uint32_t slot) {
    printf("%" PRIu64 " %u %02x\n", step, slot, (unsigned)(cradle_rng_next(&s->rng) & 0xffu));
}

static void join(script *s, uint64_t step, uint32_t slot) {
    printf("%" PRIu64 " %u join\n", step, slot);
    s->present[slot] = true;
    s->count++;
}

static void leave(script *s, uint64_t step, uint32_t slot) {
    printf("%" PRIu64 " %u leave\n", step, slot);
    s->present[slot] = false;
    s->count--;
}

/* LATE and LEAVE: when each slot changes presence, drawn up front. */
static void plan(script *s) {
    for (uint32_t slot = 0; slot < SLOTS; slot++) s->next_change[slot] = UINT64_MAX;
    uint64_t span = s->steps * 2 / 3 > 1 ? s->steps * 2 / 3 : 1;
    if (s->style == LATE)
        for (uint32_t slot = s->players; slot < SLOTS; slot++)
            s->next_change[slot] = 1 + cradle_rng_next(&s->rng) % span;
    if (s->style == LEAVE)
        for (uint32_t slot = 1; slot < s->players; slot++) s->next_change[slot] = 1 + cradle_rng_next(&s->rng) % span;
}

/* Presence changes at one step. */
static void presence(script *s, uint64_t step) {
    for (uint32_t slot = 0; slot < SLOTS; slot++) {
        if (s->style == CHURN) {
            if (s->present[slot] && s->count > 1 && chance(s, 2000)) leave(s, step, slot);
            else if (!s->present[slot] && chance(s, 1500)) join(s, step, slot);
        } else if (s->next_change[slot] == step) {
            if (s->present[slot]) leave(s, step, slot);
            else join(s, step, slot);
        }
    }
    if (s->style == LEAVE && step == s->steps * 3 / 4)
        for (uint32_t slot = 1; slot < s->players; slot++)
            if (!s->present[slot] && s->next_change[slot] < step) {
                join(s, step, slot); /* one comes back */
                break;
            }
}

static void run(script *s) {
    static const uint32_t every[] = {[CHURN] = 12, [LATE] = 12, [LEAVE] = 12, [HOLD] = 120, [MASH] = 2};
    for (uint32_t slot = 0; slot < s->players; slot++) s->present[slot] = true;
    s->count = s->players;
    plan(s);
    for (uint64_t step = 0; step < s->steps; step++) {
        if (step > 0) presence(s, step);
        for (uint32_t slot = 0; slot < SLOTS; slot++)
            if (s->present[slot] && (step == 0 || chance(s, every[s->style]))) set_input(s, step, slot);
    }
}

int main(int argc, char **argv) {
    static const char *const names[] = {[CHURN] = "churn", [LATE] = "late", [LEAVE] = "leave", [HOLD] = "hold",
                                        [MASH] = "mash"};
    script s = {0};
    uint64_t seed = 0, players = 0;
    bool known = false;
    for (size_t i = 0; argc == 5 && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(argv[1], names[i]) == 0) {
            s.style = (style)i;
            known = true;
        }
    if (!known || !cradle_parse_u64(argv[2], 0, UINT64_MAX, &seed) ||
        !cradle_parse_u64(argv[3], 1, SLOTS, &players) || !cradle_parse_u64(argv[4], 1, UINT64_MAX, &s.steps)) {
        fprintf(stderr, "usage: cradle-corpus-script churn|late|leave|hold|mash SEED PLAYERS(1..8) STEPS(>=1)\n");
        return 2;
    }
    s.players = (uint32_t)players;
    cradle_rng_seed(&s.rng, seed, 0xc0de);
    run(&s);
    return fflush(stdout) == 0 ? 0 : 1;
}
