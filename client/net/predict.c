/*
 * predict: the predicted sim beside the netclient's confirmed one, its
 * rollbacks and the effects rule (see predict.h).
 */
#include "predict.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/contract.h"
#include "netclient.h"

static uint32_t state_bytes(const cradle_sim *sim) { return sim->contract->state_size; }

/* Prediction ends for the session (the player sees confirmed steps, as
 * lockstep): said once in the message, never a failure of the session. */
static void predict_off(cradle_netclient *net, const char *why) {
    cradle_predict *p = &net->predict;
    if (!p->on) return;
    p->on = false;
    p->valid = false;
    p->shown_changes++;
    snprintf(p->message, sizeof p->message, "prediction off: %s", why);
}

int cradle_predict_start(cradle_netclient *net, char *message, size_t message_size) {
    cradle_predict *p = &net->predict;
    uint32_t window = net->config.predict_window;
    if (window == 0 || net->welcome.slot == CRADLE_WIRE_SPECTATOR) return 0;
    if (window > CRADLE_PREDICT_WINDOW_MAX) window = CRADLE_PREDICT_WINDOW_MAX;
    p->window = window;
    int rc = cradle_sim_storage_open(&p->storage, &p->sim, net->sim.contract,
                                     &(cradle_sim_storage_config){.capacity = (uint32_t)net->state_bytes,
                                                                  .align = net->sim.state_align,
                                                                  .previous = true,
                                                                  .event_capacity = CRADLE_NETCLIENT_EVENTS},
                                     message, message_size);
    if (rc != 0) return rc;
    p->snapshots = malloc((size_t)window * net->snapshot_size);
    p->newest = malloc(net->snapshot_size);
    p->shown = malloc(net->state_bytes);
    p->presented = malloc((size_t)(window + 1u) * sizeof *p->presented);
    if (!p->snapshots || !p->newest || !p->shown || !p->presented) {
        snprintf(message, message_size, "out of memory for prediction");
        return CRADLE_ENOMEM;
    }
    for (uint32_t i = 0; i <= window; i++) p->presented[i].step = UINT64_MAX;
    p->newest_step = UINT64_MAX;
    p->on = true;
    return 0;
}

void cradle_predict_close(cradle_predict *p) {
    cradle_sim_storage_close(&p->storage);
    free(p->snapshots);
    free(p->newest);
    free(p->shown);
    free(p->presented);
    p->snapshots = p->newest = p->shown = NULL;
    p->presented = NULL;
    p->on = p->valid = false;
}

/* ---- effects ------------------------------------------------------------- */

/* Step s's events as a step run brings them (predicted, run again, or
 * confirmed): those not presented yet for s go to the effects queue. With
 * confirmed, s is done: its record is freed, and what was presented but
 * did not happen is counted. */
static void present(cradle_netclient *net, uint64_t s, const cradle_event_queue *events, bool confirmed) {
    cradle_predict *p = &net->predict;
    uint32_t n = cradle_events_count(events);
    const cradle_event *e = cradle_events_data(events);
    if (!p->presented) { /* lockstep: a confirmed step's events are new */
        for (uint32_t i = 0; i < n; i++) (void)cradle_events_push(&net->effects, &e[i]);
        return;
    }
    cradle_predict_presented *r = &p->presented[s % (p->window + 1u)];
    bool again = r->step == s;
    if (!again) {
        r->step = s;
        r->count = 0;
    }
    memset(r->matched, 0, sizeof r->matched);
    for (uint32_t i = 0; i < n; i++) {
        bool seen = false;
        for (uint32_t j = 0; j < r->count && !seen; j++)
            if (!r->matched[j] && r->kind[j] == e[i].kind && r->player[j] == e[i].player) seen = r->matched[j] = true;
        if (seen) continue;
        (void)cradle_events_push(&net->effects, &e[i]);
        if (again) p->figures.events_late++;
        if (r->count < CRADLE_PREDICT_PRESENTED) {
            r->kind[r->count] = e[i].kind;
            r->player[r->count] = e[i].player;
            r->matched[r->count++] = true;
        }
    }
    if (!confirmed) return;
    for (uint32_t j = 0; j < r->count; j++) p->figures.events_unhappened += !r->matched[j];
    r->step = UINT64_MAX;
}

void cradle_predict_confirmed(cradle_netclient *net, uint64_t s, const uint8_t *snapshot) {
    cradle_predict *p = &net->predict;
    if (net->config.effects) {
        present(net, s, &net->sim.events, true);
        for (uint32_t i = 0; i < cradle_events_count(&net->sim.events); i++)
            (void)cradle_events_push(&net->effects_confirmed, &cradle_events_data(&net->sim.events)[i]);
    }
    if (!p->on) return;
    /* The server's word on our own slot wins; a differing one came late. */
    uint32_t ib = net->welcome.input_bytes, slot = net->welcome.slot;
    if (s < net->input_sent_through && net->input_sent_through - s <= CRADLE_NETCLIENT_INPUTS_KEPT &&
        memcmp(cradle_snapshot_input(snapshot, net->welcome.max_players, ib, slot),
               net->inputs[s % CRADLE_NETCLIENT_INPUTS_KEPT], ib) != 0)
        p->figures.own_overridden++;
    if (!p->valid || s < p->first || s >= p->sim.next_step) return;
    if (p->sim.next_step - s > p->window) {
        predict_off(net, "a confirmed step is past what the window keeps");
        return;
    }
    if (memcmp(p->snapshots + (s % p->window) * net->snapshot_size, snapshot, net->snapshot_size) != 0) {
        p->valid = false;
        p->mispredicted = true;
        return;
    }
    p->first = s + 1;
}

/* ---- the predicted run ------------------------------------------------- */

/* The snapshot step s runs on: the server's when received, else the guess. */
static void build_snapshot(cradle_netclient *net, uint64_t s, uint8_t *out) {
    cradle_predict *p = &net->predict;
    uint32_t q = (uint32_t)(s % CRADLE_NETCLIENT_QUEUE_STEPS);
    if (s < net->received_next && net->queue_step[q] == s) {
        memcpy(out, net->queue + (size_t)q * net->snapshot_size, net->snapshot_size);
        return;
    }
    uint32_t players = net->welcome.max_players, ib = net->welcome.input_bytes, slot = net->welcome.slot;
    memset(out, 0, net->snapshot_size);
    cradle_game_predict_fn *guess = cradle_contract_predict(p->sim.contract);
    if (p->newest_step != UINT64_MAX) {
        memcpy(out, p->newest, CRADLE_PRESENCE_BYTES(players));
        for (uint32_t other = 0; other < players; other++) {
            if (other == slot || !cradle_snapshot_present(p->newest, other)) continue;
            const uint8_t *last = cradle_snapshot_input(p->newest, players, ib, other);
            uint8_t *in = out + CRADLE_PRESENCE_BYTES(players) + other * ib;
            if (guess)
                guess(p->sim.state, s, other, last, s - p->newest_step, in, ib);
            else
                memcpy(in, last, ib);
        }
    }
    out[slot / 8u] = (uint8_t)(out[slot / 8u] | (1u << (slot % 8u)));
    memcpy(out + CRADLE_PRESENCE_BYTES(players) + slot * ib, net->inputs[s % CRADLE_NETCLIENT_INPUTS_KEPT], ib);
}

/* The predicted sim takes the confirmed state, and its previous when no
 * predicted step will follow this frame (a step keeps its own). */
static int take_confirmed(cradle_netclient *net, bool previous) {
    cradle_predict *p = &net->predict;
    const cradle_sim *c = &net->sim;
    char why[CRADLE_PREDICT_MESSAGE_MAX - 32];
    if (p->sim.contract != c->contract && cradle_sim_rebind(&p->sim, c->contract, why, sizeof why) != 0) {
        predict_off(net, why);
        return -1;
    }
    int rc = cradle_sim_restore_storage(&p->sim, c->state, c->state_capacity, c->next_step);
    assert(rc == 0); /* the same storage size and contract */
    (void)rc;
    p->sim.has_previous = previous && c->has_previous;
    if (p->sim.has_previous) memcpy(p->sim.previous, c->previous, c->state_capacity);
    p->first = c->next_step;
    p->epoch = net->epoch;
    p->valid = true;
    p->mispredicted = false;
    return 0;
}

/* The step the predicted sim runs up to (its next_step): the step of the
 * newest input sent, within the window, before any announced change. */
static uint64_t predict_target(cradle_netclient *net) {
    cradle_predict *p = &net->predict;
    uint64_t confirmed = net->sim.next_step;
    uint64_t target = net->input_sent_through;
    if (target > confirmed + p->window) {
        target = confirmed + p->window;
        p->figures.window_waits++;
    }
    if (net->reload_pending && net->reload_at < target) target = net->reload_at;
    if (net->data_queued && net->data_queue[net->data_head].at_step < target)
        target = net->data_queue[net->data_head].at_step;
    return target < confirmed ? confirmed : target;
}

int cradle_netclient_predict(cradle_netclient *net) {
    cradle_predict *p = &net->predict;
    if (!p->on) return 0;
    if (net->error) { /* the session ended: what it shows is its last confirmed state */
        p->on = p->valid = false;
        return 0;
    }
    if (net->desync) { /* the state shown is the one that disagrees with the server's */
        predict_off(net, "the client's state differs from the server's (desync)");
        return 0;
    }
    if (net->phase != CRADLE_NETCLIENT_PLAYING) return 0;
    const cradle_sim *c = &net->sim;
    if (net->received_next > net->welcome.start_step && net->received_next - 1 != p->newest_step) {
        p->newest_step = net->received_next - 1;
        memcpy(p->newest, net->queue + (size_t)(p->newest_step % CRADLE_NETCLIENT_QUEUE_STEPS) * net->snapshot_size,
               net->snapshot_size);
    }
    uint64_t target = predict_target(net);
    if (target > net->received_next && net->input_sent_through - net->received_next > CRADLE_NETCLIENT_INPUTS_KEPT) {
        predict_off(net, "the input delay is longer than the inputs a client keeps");
        return 0;
    }
    /* A change the confirmed sim applied, or one announced at a step the
     * predicted sim has passed (the target only ever falls for that): its
     * predicted steps run again from the confirmed state. */
    bool change = p->valid && (p->epoch != net->epoch || p->sim.contract != c->contract || p->sim.next_step > target);
    bool rollback = p->valid ? false : p->mispredicted;
    uint64_t check_step = UINT64_MAX; /* the step on screen before a rollback */
    if (!p->valid || change || p->sim.next_step < c->next_step) {
        if (change && p->sim.next_step > c->next_step) p->figures.change_reruns += p->sim.next_step - c->next_step;
        if (rollback && p->sim.next_step >= c->next_step && p->sim.next_step <= target) {
            memcpy(p->shown, p->sim.state, state_bytes(c));
            check_step = p->sim.next_step;
        }
        if (take_confirmed(net, target == c->next_step) != 0) return 0;
        if (check_step == p->sim.next_step && memcmp(p->shown, p->sim.state, state_bytes(c)) != 0)
            p->figures.corrections++;
        if (rollback) {
            uint64_t depth = target - c->next_step;
            p->figures.rollbacks++;
            p->figures.rollback_steps += depth;
            if (depth > p->figures.rollback_max) p->figures.rollback_max = (uint32_t)depth;
        }
        p->shown_changes++;
    }
    while (p->sim.next_step < target) {
        uint64_t s = p->sim.next_step;
        uint8_t *snapshot = p->snapshots + (s % p->window) * net->snapshot_size;
        build_snapshot(net, s, snapshot);
        /* Only the frame's last step is drawn from its previous state: the
         * steps before it (a rollback's) skip that copy of the state. */
        uint8_t *previous = p->sim.previous;
        if (s + 1 < target) p->sim.previous = NULL;
        cradle_sim_step(&p->sim, snapshot);
        p->sim.previous = previous;
        p->figures.predicted_steps++;
        if (net->config.effects) present(net, s, &p->sim.events, false);
        if (s + 1 == check_step && memcmp(p->shown, p->sim.state, state_bytes(c)) != 0) p->figures.corrections++;
        p->shown_changes++;
    }
    p->figures.ahead = (uint32_t)(p->sim.next_step - c->next_step);
    return 0;
}

const cradle_sim *cradle_netclient_shown(const cradle_netclient *net) {
    const cradle_predict *p = &net->predict;
    return p->on && p->valid ? &p->sim : &net->sim;
}
