/*
 * Prediction and rollback in whole sessions (harness.h, predict.h): players
 * that predict on an impaired link end on the server's state with the same
 * confirmed output bytes as the same session in lockstep; a game whose
 * every step depends on every input rolls back at every wrong guess, and a
 * game that guesses right (its predict() entry) never does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cradle/os.h"

#include "harness.h"
#include "simnet.h"

/* One session's outcome, kept after the harness closed. */
typedef struct outcome {
    uint64_t server_hash;
    simnet_counters link;
    uint32_t clients;
    char *output[HARNESS_CLIENTS_MAX]; /* each client's confirmed output bytes */
    size_t output_size[HARNESS_CLIENTS_MAX];
    uint64_t start_step[HARNESS_CLIENTS_MAX];
    cradle_predict_figures figures[HARNESS_CLIENTS_MAX];
    bool predicted[HARNESS_CLIENTS_MAX]; /* prediction ran to the end */
    uint64_t presented[HARNESS_CLIENTS_MAX], confirmed_events[HARNESS_CLIENTS_MAX]; /* the whole session's */
    uint64_t unhappened[HARNESS_CLIENTS_MAX], pending[HARNESS_CLIENTS_MAX];
    uint64_t confirmed_steps[HARNESS_CLIENTS_MAX];
} outcome;

static void fail_session(harness *h, const char *label) {
    char message[sizeof h->message];
    memcpy(message, h->message, sizeof message);
    (void)harness_close(h);
    fail_msg("%s: %s", label, message);
}

/* The counters that start at a join: a player's first steps are the
 * server's guess for it (its inputs are on their way) and its first
 * predictions lack the players who join after it. */
static void subtract(cradle_predict_figures *f, const cradle_predict_figures *base) {
    f->predicted_steps -= base->predicted_steps;
    f->rollbacks -= base->rollbacks;
    f->rollback_steps -= base->rollback_steps;
    f->corrections -= base->corrections;
    f->own_overridden -= base->own_overridden;
    f->window_waits -= base->window_waits;
    f->events_late -= base->events_late;
    f->events_unhappened -= base->events_unhappened;
}

/* Runs a session of `steps` steps and keeps what the tests compare; every
 * client must end on the server's state, its hashes checked. The figures
 * and event counts are those from step `settled` on, once everyone joined. */
static void run(const harness_config *config, uint64_t settled, uint64_t steps, const char *label, outcome *out) {
    static harness h;
    memset(out, 0, sizeof *out);
    harness_config c = *config;
    c.output = true;
    if (harness_open(&h, &c) != 0) fail_session(&h, label);
    if (harness_run(&h, settled, 60000u) != 0) fail_session(&h, label);
    static cradle_predict_figures base[HARNESS_CLIENTS_MAX];
    uint64_t confirmed_steps[HARNESS_CLIENTS_MAX];
    for (uint32_t i = 0; i < h.client_count; i++) {
        base[i] = h.clients[i].net.predict.figures;
        confirmed_steps[i] = h.clients[i].net.steps_run;
    }
    if (harness_run(&h, steps, steps * 1000u / 60u + 60000u) != 0) fail_session(&h, label);
    out->server_hash = cradle_sim_hash(&h.host->sim);
    out->link = simnet_counters_read();
    out->clients = h.client_count;
    for (uint32_t i = 0; i < h.client_count; i++) {
        const cradle_netclient *n = &h.clients[i].net;
        assert_int_equal(n->sim.next_step, steps);
        assert_false(n->desync);
        assert_true(n->hashes_checked > 0);
        assert_true(cradle_sim_hash(&n->sim) == out->server_hash);
        harness_output(&h, i);
        out->output[i] = malloc(h.clients[i].output_size + 1u);
        assert_non_null(out->output[i]);
        memcpy(out->output[i], h.clients[i].output, h.clients[i].output_size);
        out->output_size[i] = h.clients[i].output_size;
        out->start_step[i] = n->welcome.start_step;
        out->figures[i] = n->predict.figures;
        subtract(&out->figures[i], &base[i]);
        out->predicted[i] = n->predict.on;
        out->confirmed_steps[i] = n->steps_run - confirmed_steps[i];
        /* events over the whole session, each step's presented ones counted
         * once it was confirmed; those of steps predicted past the end are
         * still in the record (not confirmed, not unhappened) */
        out->presented[i] = h.clients[i].presented;
        out->confirmed_events[i] = h.clients[i].confirmed_events;
        out->unhappened[i] = n->predict.figures.events_unhappened;
        for (uint32_t r = 0; n->predict.presented && r <= n->predict.window; r++)
            if (n->predict.presented[r].step != UINT64_MAX) out->pending[i] += n->predict.presented[r].count;
        if (n->predict.message[0]) printf("%s: client %u: %s\n", label, (unsigned)i, n->predict.message);
    }
    for (uint32_t i = 0; i < h.client_count; i++) {
        const cradle_predict_figures *f = &out->figures[i];
        if (!out->predicted[i]) continue;
        printf("%s: player %u: %" PRIu64 " steps predicted, %" PRIu64 " rollbacks (%.1f a second), mean depth %.2f, "
               "deepest %u, %" PRIu64 " corrections seen, %" PRIu64 " of its own inputs overridden, %" PRIu64
               " waits at the window\n",
               label, (unsigned)i, f->predicted_steps, f->rollbacks,
               (double)f->rollbacks * 60.0 / (double)out->confirmed_steps[i],
               f->rollbacks ? (double)f->rollback_steps / (double)f->rollbacks : 0.0, (unsigned)f->rollback_max,
               f->corrections, f->own_overridden, f->window_waits);
    }
    (void)harness_close(&h);
    assert_int_equal(h.ended, out->clients);
}

static void release(outcome *o) {
    for (uint32_t i = 0; i < o->clients; i++) free(o->output[i]);
}

/* Client i of a and b confirmed the same steps with the same output bytes. */
static void expect_same_output(const outcome *a, const outcome *b, uint32_t i) {
    assert_int_equal(a->start_step[i], b->start_step[i]);
    assert_int_equal(a->output_size[i], b->output_size[i]);
    assert_memory_equal(a->output[i], b->output[i], a->output_size[i]);
}

/* Players that predict on a link of 100 ms each way with 50 ms of jitter,
 * loss, duplicates and reordering, and a spectator in lockstep: the session
 * is the same one as in lockstep, datagram for datagram (prediction sends
 * nothing else), every client confirms the same output bytes, and the
 * players ran ahead and rolled back on the way. */
static void players_predicting_on_an_impaired_link_confirm_what_lockstep_does(void **unused) {
    (void)unused;
    harness_config config = {.game = HARNESS_VANGUARD,
                             .players = 4,
                             .spectators = 1,
                             .seed = 23,
                             .input_delay = 16,
                             .link = {.latency_ms = 100, .jitter_ms = 50, .loss_pct = 5, .duplicate_pct = 5,
                                      .reorder_pct = 5, .seed = 46}};
    static outcome lockstep, predicted;
    run(&config, 300, 1800, "vanguard, lockstep", &lockstep);
    config.predict_window = 16;
    run(&config, 300, 1800, "vanguard, predicting", &predicted);
    assert_true(lockstep.server_hash == predicted.server_hash);
    assert_memory_equal(&lockstep.link, &predicted.link, sizeof lockstep.link);
    for (uint32_t i = 0; i < predicted.clients; i++) expect_same_output(&lockstep, &predicted, i);
    uint32_t spectator = 4;
    assert_false(predicted.predicted[spectator]);
    for (uint32_t i = 0; i < 4; i++) {
        assert_true(predicted.predicted[i]);
        assert_false(lockstep.predicted[i]);
        const cradle_predict_figures *f = &predicted.figures[i];
        /* it ran ahead of the server: more steps than it confirmed */
        assert_true(f->predicted_steps > predicted.confirmed_steps[i]);
        assert_true(f->rollbacks > 0 && f->rollback_max <= 16);
    }
    release(&lockstep);
    release(&predicted);
}

/* Every step of entangled depends on every input, and the harness's inputs
 * change every step: every guess from the last input is wrong, so every
 * confirmed step a player had predicted rolls it back, and nearly every
 * rollback changes the state on screen. The oracle build guesses right (on
 * a link that delivers every input in time, so that the server's steps are
 * the harness's inputs): no rollback, the same session. */
static void every_wrong_guess_rolls_back_and_a_right_one_never_does(void **unused) {
    (void)unused;
    harness_config config = {.game = HARNESS_ENTANGLED,
                             .players = 3,
                             .spectators = 1,
                             .seed = 29,
                             .input_delay = 8,
                             .predict_window = 16,
                             .effects = true,
                             /* no loss: every input arrives in time, so the
                                server's steps are the harness's inputs */
                             .link = {.latency_ms = 40, .jitter_ms = 20, .seed = 47}};
    static outcome guessed, oracle;
    run(&config, 300, 1200, "entangled, last input", &guessed);
    config.game = HARNESS_ENTANGLED_ORACLE;
    run(&config, 300, 1200, "entangled, oracle", &oracle);
    for (uint32_t i = 0; i < 3; i++) {
        const cradle_predict_figures *g = &guessed.figures[i], *o = &oracle.figures[i];
        assert_true(guessed.predicted[i] && oracle.predicted[i]);
        /* it ran ahead, and every frame that confirmed a guessed step rolled back */
        assert_true(g->predicted_steps > guessed.confirmed_steps[i]);
        assert_true(g->rollbacks > 100);
        assert_true(g->corrections <= g->rollbacks && g->corrections * 10u >= g->rollbacks * 9u);
        /* Effects: every confirmed event presented once, on time or late,
         * and beside them the guessed ones that did not happen, once each. */
        assert_true(guessed.confirmed_events[i] > 0);
        assert_int_equal(guessed.presented[i],
                         guessed.confirmed_events[i] + guessed.unhappened[i] + guessed.pending[i]);
        assert_int_equal(oracle.presented[i], oracle.confirmed_events[i] + oracle.unhappened[i] + oracle.pending[i]);
        assert_true(g->events_late > 0 && g->events_unhappened > 0);
        assert_int_equal(o->events_late, 0);
        assert_int_equal(o->events_unhappened, 0);
        assert_int_equal(o->rollbacks, 0);
        assert_int_equal(o->corrections, 0);
        /* each step predicted once (give or take the frontier's lead) */
        assert_true(o->predicted_steps + 16u >= oracle.confirmed_steps[i] &&
                    o->predicted_steps <= oracle.confirmed_steps[i] + 16u);
    }
    /* the oracle changes only what is shown: the same session */
    assert_memory_equal(&guessed.link, &oracle.link, sizeof guessed.link);
    for (uint32_t i = 0; i < guessed.clients; i++) expect_same_output(&guessed, &oracle, i);
    release(&guessed);
    release(&oracle);
}

/* Writes bytes to path through a temporary file renamed into place, as a
 * build or an editor's save does. */
static void put_file(const char *path, const void *bytes, size_t size) {
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(rename(tmp, path), 0);
}

static void install(const char *library, const char *path) {
    FILE *f = fopen(library, "rb");
    assert_non_null(f);
    static char bytes[8u << 20];
    size_t n = fread(bytes, 1, sizeof bytes, f);
    assert_true(n > 0 && n < sizeof bytes);
    fclose(f);
    put_file(path, bytes, n);
}

/* The counter with a data file (+1 a step, every present input and the
 * file's bonus added: every step depends on every input), played by
 * predicting players on a 40 ms link: mid-session its data file changes and
 * then the server reloads a build that adds 5. Predicted steps that ran
 * past each change run again from the confirmed state once it applied, and
 * every client ends on the server's state under the new build. */
static void predicted_steps_past_a_reload_or_a_data_file_run_again(void **unused) {
    (void)unused;
    char dir[] = "/tmp/cradle-predict-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char game[128], data_dir[160], bonus[192];
    snprintf(game, sizeof game, "%s/counter.so", dir);
    snprintf(data_dir, sizeof data_dir, "%s/counter", dir);
    snprintf(bonus, sizeof bonus, "%s/bonus.json", data_dir);
    assert_int_equal(mkdir(data_dir, 0700), 0);
    install(RELOAD_LIB_DATA, game);
    static harness h;
    harness_config config = {.game = game,
                             .players = 3,
                             .spectators = 1,
                             .seed = 31,
                             .input_delay = 8,
                             .predict_window = 16,
                             .link = {.latency_ms = 40, .jitter_ms = 10, .seed = 48}};
    if (harness_open(&h, &config) != 0 || harness_run(&h, 300, 60000) != 0) fail_session(&h, "before the data file");
    static const char json[] = "{\"bonus\": 7}\n";
    put_file(bonus, json, sizeof json - 1u);
    if (harness_run(&h, 600, 60000) != 0) fail_session(&h, "after the data file");
    assert_int_equal(h.host->data_applies, 1);
    install(RELOAD_LIB_DATA5, game);
    if (harness_reload(&h) != 0 || harness_run(&h, 900, 60000) != 0) fail_session(&h, "after the reload");
    uint64_t server_hash = cradle_sim_hash(&h.host->sim);
    for (uint32_t i = 0; i < h.client_count; i++) {
        const cradle_netclient *n = &h.clients[i].net;
        assert_int_equal(n->sim.next_step, 900);
        assert_true(cradle_sim_hash(&n->sim) == server_hash);
        assert_int_equal(n->reloads, 1);
        assert_int_equal(n->data_applied, 1);
        assert_string_equal(n->sim.contract->build_id, h.host->sim.contract->build_id);
        if (i >= config.players) continue;
        const cradle_predict_figures *f = &n->predict.figures;
        printf("player %u: %" PRIu64 " predicted steps ran again for the two changes, %" PRIu64 " rollbacks\n",
               (unsigned)i, f->change_reruns, f->rollbacks);
        assert_true(n->predict.on);
        assert_true(f->change_reruns > 0 && f->rollbacks > 0);
        /* the predicted sim runs the new build too, past the reload */
        assert_true(n->predict.sim.contract == n->sim.contract);
        assert_true(n->predict.sim.next_step > 900 - 1);
    }
    assert_int_equal(harness_close(&h), h.client_count);
    cradle_os_remove_tree(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(players_predicting_on_an_impaired_link_confirm_what_lockstep_does),
        cmocka_unit_test(every_wrong_guess_rolls_back_and_a_right_one_never_does),
        cmocka_unit_test(predicted_steps_past_a_reload_or_a_data_file_run_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
