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

static void run_session(const harness_config *config, uint64_t steps, uint64_t deadline_ms, const char *label) {
    static harness h;
    if (harness_open(&h, config) != 0) {
        (void)harness_close(&h);
        fail_msg("%s: %s", label, h.message);
    }
    uint64_t start = cradle_mono_ns();
    if (harness_run(&h, steps, deadline_ms) != 0) {
        char message[sizeof h.message];
        memcpy(message, h.message, sizeof message);
        (void)harness_close(&h);
        fail_msg("%s: %s", label, message);
    }
    uint32_t clients = h.client_count;
    double seconds = (double)(cradle_mono_ns() - start) / 1e9;
    expect_agreement(&h, steps);
    if (h.relay_open) {
        const cradle_proxy_counters *c = &h.relay.sched.counters;
        printf("%s: %" PRIu64 " steps (%.0f s of game time) in %.1f s; the link lost %" PRIu64 " of %" PRIu64
               " datagrams, duplicated %" PRIu64 ", reordered %" PRIu64 "\n",
               label, steps, (double)steps / 60.0, seconds, c->lost, c->submitted, c->duplicated, c->reordered);
        /* the impairment happened: a run of this length always loses some */
        if (config->link.loss_pct) assert_true(c->lost > 0);
        if (config->link.duplicate_pct) assert_true(c->duplicated > 0);
    } else {
        printf("%s: %" PRIu64 " steps (%.0f s of game time) in %.1f s\n", label, steps, (double)steps / 60.0,
               seconds);
    }
    /* every client hears the server stop: a normal end (BYE "shutdown") */
    assert_int_equal(harness_close(&h), clients);
}

static void players_and_spectators_agree_on_a_clean_link(void **unused) {
    (void)unused;
    harness_config config = {.game = HARNESS_VANGUARD, .players = 4, .spectators = 2, .seed = 7};
    run_session(&config, 3600, 60000, "4 players, 2 spectators, loopback");
}

/* netcode.io's "netcode" profile: 250 ms each way, 250 ms of jitter, 5%
 * lost, 10% duplicated. The lead covers the round trip and its jitter. */
static void eight_players_agree_through_loss_jitter_and_duplicates(void **unused) {
    (void)unused;
    harness_config config = {.game = HARNESS_VANGUARD,
                             .players = 8,
                             .seed = 11,
                             .lead = 600,
                             .impaired = true,
                             .link = {.latency_ms = 250, .jitter_ms = 250, .loss_pct = 5, .duplicate_pct = 10,
                                      .reorder_pct = 5, .seed = 42}};
    run_session(&config, 7200, 120000, "8 players, netcode profile");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(players_and_spectators_agree_on_a_clean_link),
        cmocka_unit_test(eight_players_agree_through_loss_jitter_and_duplicates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
