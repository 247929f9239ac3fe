/*
 * Whole sessions in one process (harness.h): a server and its players and
 * spectators, on a clean link and on an impaired one, every client's state
 * checked against the server's at every hash step and at the end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cradle/systime.h"
#include "harness.h"
#include "simnet.h"

/* Every client ran up to the server's last step, checked every hash the
 * server sent on the way (from the step it joined at), and holds the
 * server's state. */
static void expect_agreement(const harness *h, uint64_t steps) {
    uint64_t server_hash = cradle_sim_hash(&h->host->sim);
    assert_int_equal(harness_server_steps(h), steps);
    for (uint32_t i = 0; i < h->client_count; i++) {
        const cradle_netclient *n = &h->clients[i].net;
        assert_int_equal(n->sim.next_step, steps);
        assert_false(n->desync);
        /* a hash every 30 steps; the last is checked once its step ran */
        assert_true(n->steps_run > 0);
        assert_true(n->hashes_checked + 1u >= n->steps_run / 30u);
        assert_int_equal(cradle_sim_hash(&n->sim), server_hash);
    }
}

/* Fails the test with what went wrong, after closing the session (its
 * message copied first: closing frees what it names). */
static void fail_session(harness *h, const char *label) {
    char message[sizeof h->message];
    memcpy(message, h->message, sizeof message);
    (void)harness_close(h);
    fail_msg("%s: %s", label, message);
}

typedef struct session_result {
    uint64_t server_hash;
    simnet_counters link;
    uint64_t late;    /* steps the players' slots ran with a repeated input: theirs came late */
    uint64_t on_time; /* ... with the input sent for them */
} session_result;

/* How a session must end: every client hearing the server's BYE, or (a
 * link that loses a quarter of the datagrams, whose BYE may miss every try
 * within the server's linger) every client ending, most of them normally. */
typedef enum session_ending { ALL_NORMAL, ALL_ENDED } session_ending;

static session_result run_session(const harness_config *config, uint64_t steps, session_ending ending,
                                  const char *label) {
    static harness h;
    if (harness_open(&h, config) != 0) fail_session(&h, label);
    uint64_t start = cradle_mono_ns();
    /* the test clock's deadline: the session's time and a minute to join in */
    if (harness_run(&h, steps, steps * 1000u / 60u + 60000u) != 0) fail_session(&h, label);
    uint32_t clients = h.client_count;
    double seconds = (double)(cradle_mono_ns() - start) / 1e9;
    expect_agreement(&h, steps);
    session_result result = {.server_hash = cradle_sim_hash(&h.host->sim), .link = simnet_counters_read()};
    for (uint32_t slot = 0; slot < config->players; slot++) {
        result.late += h.host->slots[slot].late;
        result.on_time += h.host->slots[slot].on_time;
    }
    const simnet_counters *c = &result.link;
    printf("%s: %" PRIu64 " steps (%.0f s of game time) in %.1f s; the link lost %" PRIu64 " of %" PRIu64
           " datagrams, duplicated %" PRIu64 ", reordered %" PRIu64 "\n",
           label, steps, (double)steps / 60.0, seconds, c->lost, c->submitted, c->duplicated, c->reordered);
    assert_int_equal(c->overflowed, 0);
    /* the impairment happened: a run of this length always loses some */
    if (config->link.loss_pct) assert_true(c->lost > 0);
    if (config->link.duplicate_pct) assert_true(c->duplicated > 0);
    uint32_t normal = harness_close(&h);
    printf("%s: %u of %u clients heard the server's BYE\n", label, (unsigned)normal, (unsigned)clients);
    assert_int_equal(h.ended, clients);
    if (ending == ALL_NORMAL) assert_int_equal(normal, clients); /* a normal end: BYE "shutdown" */
    else assert_true(normal * 2u > clients);
    return result;
}

static void players_and_spectators_agree_on_a_clean_link(void **unused) {
    (void)unused;
    harness_config config = {.game = HARNESS_VANGUARD, .players = 4, .spectators = 2, .seed = 7};
    (void)run_session(&config, 3600, ALL_NORMAL, "4 players, 2 spectators, clean link");
}

/* netcode.io's "netcode" profile: 250 ms each way, 250 ms of jitter, 5%
 * lost, 10% duplicated, and 5% held back to arrive out of order. */
static void eight_players_agree_through_loss_jitter_and_duplicates(void **unused) {
    (void)unused;
    harness_config config = {.game = HARNESS_VANGUARD,
                             .players = 8,
                             .seed = 11,
                             .link = {.latency_ms = 250, .jitter_ms = 250, .loss_pct = 5, .duplicate_pct = 10,
                                      .reorder_pct = 5, .seed = 42}};
    (void)run_session(&config, 7200, ALL_NORMAL, "8 players, netcode profile");
}

/* A player drops out mid-session and connects again; meanwhile the
 * session runs on without it. Back, it joins where the session is, from a
 * state block, and ends on the server's state with the others. */
static void a_player_who_drops_out_rejoins_from_a_state_block(void **unused) {
    (void)unused;
    static harness h;
    harness_config config = {.game = HARNESS_VANGUARD,
                             .players = 3,
                             .spectators = 1,
                             .seed = 19,
                             .link = {.latency_ms = 40, .jitter_ms = 10, .seed = 45}};
    if (harness_open(&h, &config) != 0 || harness_run(&h, 600, 60000) != 0 || harness_drop(&h, 1) != 0 ||
        harness_run(&h, 1200, 60000) != 0)
        fail_session(&h, "before the rejoin");
    /* the dropped player's slot is free: the server runs on without it */
    uint32_t occupied = 0;
    for (uint32_t slot = 0; slot < config.players; slot++) occupied += h.host->slots[slot].occupied;
    assert_int_equal(occupied, 2);
    if (harness_rejoin(&h, 1) != 0 || harness_run(&h, 2400, 60000) != 0) fail_session(&h, "after the rejoin");
    expect_agreement(&h, 2400);
    const cradle_netclient *back = &h.clients[1].net;
    assert_true(back->welcome.start_step >= 1200 && back->welcome.state_follows);
    assert_int_equal(back->steps_run, 2400 - back->welcome.start_step);
    assert_int_equal(harness_close(&h), 4);
}

/* yojimbo's soak profile (its tests' network simulator): a second each
 * way, 100 ms of jitter, a quarter of the datagrams lost and a quarter
 * duplicated, for ten minutes of an 8-player session. */
static void eight_players_agree_for_ten_minutes_of_the_yojimbo_profile(void **unused) {
    (void)unused;
    harness_config config = {.game = HARNESS_VANGUARD,
                             .players = 8,
                             .seed = 13,
                             .timeout_ms = 60000,
                             .link = {.latency_ms = 1000, .jitter_ms = 100, .loss_pct = 25, .duplicate_pct = 25,
                                      .seed = 43}};
    (void)run_session(&config, 36000, ALL_ENDED, "8 players, yojimbo profile, 10 minutes");
}

/* The test clock and the seeded link make a session repeatable: the same
 * seeds give the same datagrams lost, duplicated and delivered, the same
 * inputs taken on time and the same final state (on real time and sockets
 * none of these repeat). */
static void the_same_seeds_make_the_same_session(void **unused) {
    (void)unused;
    harness_config config = {.game = HARNESS_VANGUARD,
                             .players = 4,
                             .seed = 17,
                             .input_delay = 2,
                             .link = {.latency_ms = 6, .jitter_ms = 6, .loss_pct = 10, .duplicate_pct = 5,
                                      .reorder_pct = 5, .seed = 44}};
    session_result a = run_session(&config, 1200, ALL_NORMAL, "4 players, first run");
    session_result b = run_session(&config, 1200, ALL_NORMAL, "4 players, second run");
    assert_true(a.server_hash == b.server_hash);
    assert_memory_equal(&a.link, &b.link, sizeof a.link);
    assert_true(a.late == b.late && a.on_time == b.on_time);
    /* a link whose delays decide which inputs count: some on time, some late */
    assert_true(a.on_time > 0 && a.late > 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(players_and_spectators_agree_on_a_clean_link),
        cmocka_unit_test(eight_players_agree_through_loss_jitter_and_duplicates),
        cmocka_unit_test(the_same_seeds_make_the_same_session),
        cmocka_unit_test(a_player_who_drops_out_rejoins_from_a_state_block),
        cmocka_unit_test(eight_players_agree_for_ten_minutes_of_the_yojimbo_profile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
