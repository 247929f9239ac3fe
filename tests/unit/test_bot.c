/*
 * Tests for bot (shared/core/bot.c): the game's bot entry is used when the
 * contract has one, the generic bit-flipping bot otherwise; the same seed
 * gives the same inputs; a contract of minor 0 is never read past its end.
 * Plus the two games' entries: vanguard's is its AI packed, the counter's is
 * found in the built library, and a minor-0 build of it is not asked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cradle/bot.h"
#include "cradle/contract.h"
#include "cradle/hash.h" /* cradle_hash64, for the sim */
#include "cradle/reload.h"
#include "cradle/sim.h"
#include "vanguard_input.h"
#include "vanguard_internal.h"

static int fake_init(void *state, uint64_t seed, uint32_t players) {
    (void)state, (void)seed, (void)players;
    return 0;
}

static void fake_step(void *state, const cradle_game_step *step, const cradle_event_sink *events) {
    (void)state, (void)step, (void)events;
}

/* What the recording bot saw on its last call. */
static struct {
    int calls;
    const void *state;
    uint64_t step, random;
    uint32_t slot, input_bytes;
    bool input_was_zero;
} seen;

/* Writes the low bytes of random into the input, so a test sees both that it
 * ran and what the host drew. */
static void recording_bot(const void *state, uint64_t step, uint32_t slot, uint64_t random,
                          uint8_t *input, uint32_t input_bytes) {
    seen.calls++;
    seen.state = state;
    seen.step = step;
    seen.slot = slot;
    seen.random = random;
    seen.input_bytes = input_bytes;
    seen.input_was_zero = true;
    for (uint32_t i = 0; i < input_bytes; i++) {
        if (input[i] != 0) seen.input_was_zero = false;
        input[i] = (uint8_t)(random >> (8u * (i % 8u)));
    }
}

static void never_bot(const void *state, uint64_t step, uint32_t slot, uint64_t random, uint8_t *input,
                      uint32_t input_bytes) {
    (void)state, (void)step, (void)slot, (void)random, (void)input, (void)input_bytes;
    fail_msg("a bot the host must not call was called");
}

static cradle_game_contract game(uint32_t minor, cradle_game_bot_fn *bot) {
    return (cradle_game_contract){
        .abi_major = CRADLE_ABI_MAJOR,
        .abi_minor = minor,
        .state_size = 16,
        .state_align = 8,
        .input_bytes = 4,
        .max_players = 8,
        .steps_per_second = 60,
        .source_frames_per_second = 20,
        .name = "game",
        .build_id = "b1",
        .init = fake_init,
        .step = fake_step,
        .bot = bot,
    };
}

static void test_the_games_entry_is_used_when_present(void **unused) {
    (void)unused;
    cradle_game_contract c = game(CRADLE_ABI_MINOR_BOT, recording_bot);
    assert_int_equal(cradle_contract_check(&c, &(cradle_contract_limits){.abi_major = CRADLE_ABI_MAJOR,
                                                                        .abi_minor = CRADLE_ABI_MINOR},
                                           NULL, 0),
                     CRADLE_OK);
    assert_ptr_equal(cradle_contract_bot(&c), recording_bot);
    uint64_t state[2] = {0};
    cradle_bot bot;
    cradle_bot_init(&bot, 5);
    uint8_t in[4];
    memset(in, 0xAA, sizeof in);
    memset(&seen, 0, sizeof seen);
    cradle_bot_fill(&bot, &c, state, 77, 3, in, 4);
    assert_int_equal(seen.calls, 1);
    assert_ptr_equal(seen.state, state);
    assert_int_equal(seen.step, 77);
    assert_int_equal(seen.slot, 3);
    assert_int_equal(seen.input_bytes, 4);
    assert_true(seen.input_was_zero); /* the host zeroes the input first */
    for (uint32_t i = 0; i < 4; i++) assert_int_equal(in[i], (uint8_t)(seen.random >> (8u * i)));
    /* Each call gets fresh bits. */
    uint64_t first = seen.random;
    cradle_bot_fill(&bot, &c, state, 78, 3, in, 4);
    assert_int_equal(seen.calls, 2);
    assert_true(seen.random != first);
}

static void test_no_state_yet_gives_zeros(void **unused) {
    (void)unused;
    cradle_game_contract c = game(CRADLE_ABI_MINOR_BOT, never_bot);
    cradle_bot bot;
    cradle_bot_init(&bot, 5);
    uint8_t in[4] = {1, 2, 3, 4};
    cradle_bot_fill(&bot, &c, NULL, 0, 0, in, 4);
    assert_memory_equal(in, ((uint8_t[4]){0}), 4);
}

/* Runs the generic bot for n steps over input_bytes and checks its bits stay
 * in the input, persist (few change per step) and all get pressed. */
static void check_generic(const cradle_game_contract *c, uint32_t input_bytes) {
    cradle_bot bot;
    cradle_bot_init(&bot, 7);
    uint8_t last[CRADLE_GAME_MAX_INPUT_BYTES + 1] = {0}, in[CRADLE_GAME_MAX_INPUT_BYTES + 1];
    uint8_t ever[CRADLE_GAME_MAX_INPUT_BYTES] = {0};
    uint32_t flips = 0;
    const uint32_t steps = 1000;
    for (uint32_t s = 0; s < steps; s++) {
        in[input_bytes] = 0x5A; /* a guard byte past the input */
        cradle_bot_fill(&bot, c, &bot, s, 0, in, input_bytes);
        assert_int_equal(in[input_bytes], 0x5A);
        for (uint32_t i = 0; i < input_bytes; i++) {
            flips += (uint32_t)__builtin_popcount((unsigned)(in[i] ^ last[i]));
            ever[i] |= in[i];
            last[i] = in[i];
        }
    }
    /* Each bit flips with probability 1/16 per step. */
    uint32_t expect = steps * input_bytes * 8u / 16u;
    assert_true(flips > expect * 3u / 4u && flips < expect * 5u / 4u);
    for (uint32_t i = 0; i < input_bytes; i++) assert_int_equal(ever[i], 0xFF);
}

static void test_the_generic_bot_when_the_game_has_none(void **unused) {
    (void)unused;
    cradle_game_contract c = game(CRADLE_ABI_MINOR_BOT, NULL);
    assert_null(cradle_contract_bot(&c));
    check_generic(&c, 4);
    c.input_bytes = 1;
    check_generic(&c, 1);
    c.input_bytes = CRADLE_GAME_MAX_INPUT_BYTES;
    check_generic(&c, CRADLE_GAME_MAX_INPUT_BYTES);
    /* A game's bot is not asked for a slot it does not have, nor for an
     * input of another size than its own: the generic bot plays them. */
    c = game(CRADLE_ABI_MINOR_BOT, never_bot);
    uint8_t in[8];
    cradle_bot bot;
    cradle_bot_init(&bot, 1);
    cradle_bot_fill(&bot, &c, &bot, 0, c.max_players, in, 4);
    cradle_bot_fill(&bot, &c, &bot, 0, 0, in, 8);
}

/* Both kinds of bot: n steps of the input bytes for seed into out. */
static void play(const cradle_game_contract *c, uint64_t seed, uint32_t steps, uint8_t *out) {
    cradle_bot bot;
    cradle_bot_init(&bot, seed);
    uint64_t state[2] = {0};
    for (uint32_t s = 0; s < steps; s++) cradle_bot_fill(&bot, c, state, s, 2, out + s * 4u, 4);
}

static void test_the_same_seed_gives_the_same_inputs(void **unused) {
    (void)unused;
    static uint8_t a[200 * 4], b[200 * 4], d[200 * 4];
    cradle_game_contract kinds[2] = {game(CRADLE_ABI_MINOR_BOT, recording_bot),
                                     game(CRADLE_ABI_MINOR_BOT, NULL)};
    for (int k = 0; k < 2; k++) {
        play(&kinds[k], 42, 200, a);
        play(&kinds[k], 42, 200, b);
        play(&kinds[k], 43, 200, d);
        assert_memory_equal(a, b, sizeof a);
        assert_memory_not_equal(a, d, sizeof a);
    }
    /* Pinned: the generic bot's inputs for seed 42 at steps 0 and 199, so a
     * change to the generator or its use shows here, not as a changed
     * session somewhere else. */
    play(&kinds[1], 42, 200, a);
    assert_memory_equal(a, ((uint8_t[4]){0x00, 0x49, 0x00, 0x01}), 4);
    assert_memory_equal(a + 199 * 4, ((uint8_t[4]){0xbf, 0x54, 0xfd, 0x61}), 4);
}

static void test_a_minor_0_contract_is_never_read_past_its_end(void **unused) {
    (void)unused;
    /* A minor-0 contract whose bot bytes hold a function: ignored. */
    cradle_game_contract c = game(0, never_bot);
    assert_null(cradle_contract_bot(&c));
    check_generic(&c, 4);
    /* An older library's object ends where the bot field would begin: a copy
     * of exactly that size on the heap, so any read of the field is an ASan
     * finding. The check and the bot both use it. */
    const size_t v0_size = offsetof(cradle_game_contract, bot);
    cradle_game_contract *old = malloc(v0_size);
    assert_non_null(old);
    memcpy(old, &c, v0_size);
    cradle_contract_limits limits = cradle_contract_host_limits();
    assert_int_equal(cradle_contract_check(old, &limits, NULL, 0), CRADLE_OK);
    assert_null(cradle_contract_bot(old));
    cradle_bot bot;
    cradle_bot_init(&bot, 3);
    uint8_t in[4];
    for (uint32_t s = 0; s < 50; s++) cradle_bot_fill(&bot, old, &bot, s, 1, in, 4);
    free(old);
}

/* vanguard's entry is its AI (vanguard_bot_actions) packed as the client
 * packs keys, whatever the seed, over a game that it plays. */
static void test_vanguards_entry_is_its_ai(void **unused) {
    (void)unused;
    const cradle_game_contract *k = vanguard_contract();
    cradle_game_bot_fn *entry = cradle_contract_bot(k);
    assert_ptr_equal(entry, vanguard_bot);
    size_t bytes = ((size_t)k->state_size + k->state_align - 1u) / k->state_align * k->state_align;
    void *state = aligned_alloc(k->state_align, bytes);
    assert_non_null(state);
    cradle_sim sim;
    cradle_sim_config sc = {.state = state, .state_capacity = (uint32_t)bytes, .hash = cradle_hash64};
    assert_int_equal(cradle_sim_init(&sim, &sc, k, NULL, 0), 0);
    assert_int_equal(cradle_sim_start(&sim, 11, 3), 0);
    cradle_bot bots[3];
    for (uint32_t slot = 0; slot < 3; slot++) cradle_bot_init(&bots[slot], 100 + slot);
    uint8_t snapshot[64];
    uint32_t size = cradle_snapshot_size(k->max_players, k->input_bytes);
    assert_true(size <= sizeof snapshot);
    uint32_t pressed = 0;
    for (uint64_t s = 0; s < 600; s++) {
        memset(snapshot, 0, size);
        for (uint32_t slot = 0; slot < 3; slot++) {
            snapshot[0] |= (uint8_t)(1u << slot);
            uint8_t *in = snapshot + CRADLE_PRESENCE_BYTES(k->max_players) + slot;
            cradle_bot_fill(&bots[slot], k, state, s, slot, in, k->input_bytes);
            uint8_t expect = 0;
            assert_true(vanguard_input_pack(&expect, 1, vanguard_bot_actions(state, slot, s)));
            assert_int_equal(*in, expect);
            pressed |= *in;
        }
        cradle_sim_step(&sim, snapshot);
    }
    assert_true((pressed & VANGUARD_FIRE) && (pressed & (VANGUARD_UP | VANGUARD_DOWN)));
    free(state);
}

/* Loads a built library as a host does (checked by the loader) and returns
 * its contract's bot entry; the library stays open in *r. */
static cradle_game_bot_fn *library_bot(cradle_reload *r, const char *path,
                                       const cradle_game_contract **contract) {
    char message[512];
    cradle_reload_config config = {.path = path};
    int rc = cradle_reload_open(r, &config, 0, message, sizeof message);
    if (rc != 0) fail_msg("%s: %s", path, message);
    *contract = cradle_reload_contract(r);
    return cradle_contract_bot(*contract);
}

static void test_the_counters_entry_and_a_minor_0_build(void **unused) {
    (void)unused;
    cradle_reload r;
    const cradle_game_contract *c;
    cradle_game_bot_fn *entry = library_bot(&r, RELOAD_LIB_INC1, &c);
    assert_int_equal(c->abi_minor, CRADLE_ABI_MINOR);
    assert_non_null(entry);
    /* A delta 0..63: the counter's total only climbs under its bots. */
    cradle_bot bot;
    cradle_bot_init(&bot, 9);
    uint8_t in[1], ever = 0;
    for (uint32_t s = 0; s < 500; s++) {
        cradle_bot_fill(&bot, c, &bot, s, 0, in, 1);
        assert_true(in[0] <= 63);
        ever |= in[0];
    }
    assert_int_equal(ever, 63);
    cradle_reload_close(&r);

    /* The same source built as minor 0: the loader takes it, and its bot
     * field (there, since it was compiled with this header) is not asked. */
    entry = library_bot(&r, RELOAD_LIB_MINOR0, &c);
    assert_int_equal(c->abi_minor, 0);
    assert_null(entry);
    cradle_reload_close(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_games_entry_is_used_when_present),
        cmocka_unit_test(test_no_state_yet_gives_zeros),
        cmocka_unit_test(test_the_generic_bot_when_the_game_has_none),
        cmocka_unit_test(test_the_same_seed_gives_the_same_inputs),
        cmocka_unit_test(test_a_minor_0_contract_is_never_read_past_its_end),
        cmocka_unit_test(test_vanguards_entry_is_its_ai),
        cmocka_unit_test(test_the_counters_entry_and_a_minor_0_build),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
