#include "demo_game.h"

#include <assert.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for a rebuilt library whose state grew: the loader refuses anything
 * larger than the block the host allocated. */
#define DEMO_GAME_STATE_HEADROOM 2u
#define DEMO_GAME_STATE_ALIGN 64u
#define DEMO_GAME_HASH_INTERVAL 60u

static void *alloc_state(uint32_t capacity) {
    size_t bytes = ((size_t)capacity + DEMO_GAME_STATE_ALIGN - 1u) / DEMO_GAME_STATE_ALIGN *
                   DEMO_GAME_STATE_ALIGN;
    void *p = aligned_alloc(DEMO_GAME_STATE_ALIGN, bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

int demo_game_open(demo_game *g, const char *path, uint64_t seed, uint32_t players,
                   const char *log_path, uint64_t now_unix_ns, uint64_t now_ns, char *message,
                   size_t message_size) {
    memset(g, 0, sizeof *g);
    /* The first library fixes the state capacity: its size with headroom. */
    cradle_reload_config probe = {.path = path};
    int rc = cradle_reload_open(&g->reload, &probe, now_ns, message, message_size);
    if (rc != 0) return rc;
    uint32_t first_size = cradle_reload_contract(&g->reload)->state_size;
    cradle_reload_close(&g->reload);
    uint64_t capacity = (uint64_t)first_size * DEMO_GAME_STATE_HEADROOM;
    g->state_capacity = capacity > UINT32_MAX ? UINT32_MAX : (uint32_t)capacity;
    cradle_reload_config config = {.path = path, .state_capacity = g->state_capacity};
    rc = cradle_reload_open(&g->reload, &config, now_ns, message, message_size);
    if (rc != 0) return rc;

    const cradle_game_contract *c = cradle_reload_contract(&g->reload);
    g->players = players ? players : (c->max_players < 4 ? c->max_players : 4);
    if (g->players > c->max_players) {
        snprintf(message, message_size, "--players %u is more than game '%s' allows (%u)", g->players,
                 c->name, c->max_players);
        rc = CRADLE_EINVAL;
        goto out_close_reload;
    }
    g->seed = seed;
    for (uint32_t slot = 0; slot < g->players; slot++) cradle_bot_init(&g->bots[slot], seed + slot);
    g->snapshot_size = cradle_snapshot_size(c->max_players, c->input_bytes);
    g->hash_interval = DEMO_GAME_HASH_INTERVAL;
    g->state = alloc_state(g->state_capacity);
    g->replay_state = alloc_state(g->state_capacity);
    if (!g->state || !g->replay_state) {
        snprintf(message, message_size, "out of memory for two %u-byte state blocks", g->state_capacity);
        rc = CRADLE_ENOMEM;
        goto out_free_states;
    }
    cradle_sim_config sc = {.state = g->state,
                            .state_capacity = g->state_capacity,
                            .state_align = DEMO_GAME_STATE_ALIGN,
                            .events = g->event_storage,
                            .event_capacity = DEMO_GAME_EVENTS,
                            .hash = cradle_hash64};
    rc = cradle_sim_init(&g->sim, &sc, c, message, message_size);
    if (rc != 0) goto out_free_states;
    sc.state = g->replay_state;
    sc.events = NULL; /* the replay check compares output, not events */
    sc.event_capacity = 0;
    rc = cradle_sim_init(&g->replay, &sc, c, message, message_size);
    if (rc != 0) goto out_free_states;
    if (cradle_sim_start(&g->sim, g->seed, g->players) != 0) {
        snprintf(message, message_size, "game '%s' refused %u players", c->name, g->players);
        rc = CRADLE_EINVAL;
        goto out_free_states;
    }
    if (log_path) {
        cradle_log_header header;
        rc = cradle_log_header_from_contract(&header, c, seed, g->players, now_unix_ns, g->hash_interval);
        if (rc == 0) {
            cradle_log_writer_config lc = {0};
            rc = cradle_log_writer_open(&g->log, log_path, &header, &lc, cradle_reload_copy_path(&g->reload),
                                        message, message_size);
        }
        if (rc != 0) goto out_free_states;
        g->logging = true;
    }
    return 0;

out_free_states:
    free(g->state);
    free(g->replay_state);
    g->state = g->replay_state = NULL;
out_close_reload:
    cradle_reload_close(&g->reload);
    return rc;
}

void demo_game_bots(demo_game *g, uint64_t index, uint8_t *snapshot) {
    const cradle_game_contract *c = g->sim.contract;
    memset(snapshot, 0, g->snapshot_size);
    for (uint32_t slot = 0; slot < g->players; slot++) {
        snapshot[slot / 8u] = (uint8_t)(snapshot[slot / 8u] | (1u << (slot % 8u)));
        uint8_t *in = snapshot + CRADLE_PRESENCE_BYTES(c->max_players) + slot * c->input_bytes;
        cradle_bot_fill(&g->bots[slot], c, g->sim.state, index, slot, in, c->input_bytes);
    }
}

static void note_reload(demo_game *g, uint64_t index, const cradle_reload_result *r) {
    if (r->kind == CRADLE_RELOAD_SWAPPED) {
        char why[CRADLE_RELOAD_MESSAGE_MAX];
        int rc = cradle_sim_swap(&g->sim, r->contract, why, sizeof why);
        assert(rc == 0 && "the reloader checked what the sim checks");
        (void)rc;
        g->reloads++;
        snprintf(g->last_reload, sizeof g->last_reload, "step %llu: swapped in build %s",
                 (unsigned long long)index, g->sim.contract->build_id);
    } else if (r->kind == CRADLE_RELOAD_REFUSED) {
        g->refusals++;
        snprintf(g->last_reload, sizeof g->last_reload, "step %llu: refused (%s): %s",
                 (unsigned long long)index, cradle_error_name(r->error), r->message);
    }
}

int demo_game_step(demo_game *g, uint64_t index, const uint8_t *snapshot, uint64_t now_ns,
                   cradle_reload_result *reload_result) {
    assert(index == g->sim.next_step);
    *reload_result = cradle_reload_poll(&g->reload, now_ns);
    note_reload(g, index, reload_result);
    int rc = 0;
    if (g->logging && reload_result->kind == CRADLE_RELOAD_SWAPPED) {
        rc = cradle_log_writer_append_reload(&g->log, index, g->sim.contract->build_id,
                                             cradle_reload_copy_path(&g->reload));
    }
    if (g->logging) {
        int wrc = cradle_log_writer_append_step(&g->log, index, snapshot);
        if (rc == 0) rc = wrc;
    }
    cradle_sim_step(&g->sim, snapshot);
    g->steps = index + 1;
    if (g->logging) {
        if ((index + 1) % g->hash_interval == 0) {
            int hrc = cradle_log_writer_append_hash(&g->log, index, demo_game_hash(g));
            if (rc == 0) rc = hrc;
        }
        int src = cradle_log_writer_maybe_sync(&g->log, now_ns);
        if (rc == 0) rc = src;
    }
    return rc;
}

uint64_t demo_game_hash(const demo_game *g) { return cradle_sim_hash(&g->sim); }

void demo_game_output(cradle_sim *sim, uint8_t out[16]) {
    uint64_t digest;
    if (sim->contract->output) {
        /* A game that claims more than its buffer is compared as the empty output. */
        if (cradle_sim_output(sim) != 0) sim->output_size = 0;
        digest = cradle_hash64(sim->output, sim->output_size);
    } else {
        digest = cradle_sim_hash(sim);
    }
    cradle_cursor_store_u64(out, sim->next_step - 1);
    cradle_cursor_store_u64(out + 8, digest);
}

bool demo_game_replay(demo_game *g, const cradle_session *session, uint8_t *out) {
    if (g->reloads > 0) return false;
    if (cradle_sim_start(&g->replay, g->seed, g->players) != 0) return false;
    for (uint64_t index = 0; index < session->count; index++) {
        cradle_sim_step(&g->replay, cradle_session_snapshot(session, index));
        demo_game_output(&g->replay, out + index * 16u);
    }
    return true;
}

int demo_game_flush(demo_game *g, uint64_t now_ns) {
    return g->logging ? cradle_log_writer_flush(&g->log, now_ns) : 0;
}

void demo_game_close(demo_game *g) {
    if (g->logging) {
        if (cradle_log_writer_close(&g->log, demo_game_hash(g)) != 0) {
            fprintf(stderr, "cradle-demo: closing the log: %s\n", g->log.message);
        }
        g->logging = false;
    }
    if (g->state) cradle_reload_close(&g->reload);
    free(g->state);
    free(g->replay_state);
    g->state = g->replay_state = NULL;
}
