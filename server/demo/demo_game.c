#include "demo_game.h"

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

static int init_state(const demo_game *g, void *state) {
    memset(state, 0, g->state_capacity);
    return g->contract->init(state, g->seed, g->players);
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
    g->contract = cradle_reload_contract(&g->reload);

    const cradle_game_contract *c = g->contract;
    g->players = players ? players : (c->max_players < 4 ? c->max_players : 4);
    if (g->players > c->max_players) {
        snprintf(message, message_size, "--players %u is more than game '%s' allows (%u)", g->players,
                 c->name, c->max_players);
        rc = CRADLE_EINVAL;
        goto out_close_reload;
    }
    g->seed = seed;
    g->snapshot_size = cradle_snapshot_size(c->max_players, c->input_bytes);
    g->hash_interval = DEMO_GAME_HASH_INTERVAL;
    g->state = alloc_state(g->state_capacity);
    g->replay_state = alloc_state(g->state_capacity);
    if (!g->state || !g->replay_state) {
        snprintf(message, message_size, "out of memory for two %u-byte state blocks", g->state_capacity);
        rc = CRADLE_ENOMEM;
        goto out_free_states;
    }
    if (init_state(g, g->state) != 0) {
        snprintf(message, message_size, "game '%s' refused %u players", c->name, g->players);
        rc = CRADLE_EINVAL;
        goto out_free_states;
    }
    rc = cradle_events_init(&g->events, g->event_storage, DEMO_GAME_EVENTS);
    if (rc != 0) goto out_free_states;
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

void demo_game_bots(demo_game *g, cradle_rng *rng, uint8_t *snapshot) {
    const cradle_game_contract *c = g->contract;
    memset(snapshot, 0, g->snapshot_size);
    for (uint32_t slot = 0; slot < g->players; slot++) {
        snapshot[slot / 8u] = (uint8_t)(snapshot[slot / 8u] | (1u << (slot % 8u)));
        /* About four times a second a bot lets go of everything and picks a
         * new handful of the first five input bits (the four moves and fire
         * of the client's default bindings), now and then with the sixth
         * (restart) as well. Input bits are the game's actions, bit i of the
         * player's input bytes, as the client packs them. */
        if (cradle_rng_below(rng, 15) == 0) {
            uint32_t held = cradle_rng_next(rng) & 0x1fu;
            if (cradle_rng_below(rng, 20) == 0) held |= 0x20u;
            g->bot_bits[slot] = (uint8_t)held;
        }
        uint8_t *in = snapshot + CRADLE_PRESENCE_BYTES(c->max_players) + slot * c->input_bytes;
        (void)cradle_bits_put(in, c->input_bytes, 0, 6, g->bot_bits[slot]);
    }
}

static void note_reload(demo_game *g, uint64_t index, const cradle_reload_result *r) {
    if (r->kind == CRADLE_RELOAD_SWAPPED) {
        g->reloads++;
        g->contract = r->contract;
        snprintf(g->last_reload, sizeof g->last_reload, "step %llu: swapped in build %s",
                 (unsigned long long)index, g->contract->build_id);
    } else if (r->kind == CRADLE_RELOAD_REFUSED) {
        g->refusals++;
        snprintf(g->last_reload, sizeof g->last_reload, "step %llu: refused (%s): %s",
                 (unsigned long long)index, cradle_error_name(r->error), r->message);
    }
}

int demo_game_step(demo_game *g, uint64_t index, const uint8_t *snapshot, uint64_t now_ns,
                   cradle_reload_result *reload_result) {
    *reload_result = cradle_reload_poll(&g->reload, now_ns, g->state);
    note_reload(g, index, reload_result);
    int rc = 0;
    if (g->logging && reload_result->kind == CRADLE_RELOAD_SWAPPED) {
        rc = cradle_log_writer_append_reload(&g->log, index, g->contract->build_id,
                                             cradle_reload_copy_path(&g->reload));
    }
    if (g->logging) {
        int wrc = cradle_log_writer_append_step(&g->log, index, snapshot);
        if (rc == 0) rc = wrc;
    }
    cradle_events_clear(&g->events);
    cradle_event_sink sink = cradle_events_sink(&g->events);
    cradle_game_step step = {
        .index = index,
        .source_frame = index / (g->contract->steps_per_second / g->contract->source_frames_per_second),
        .phase = (uint32_t)(index % (g->contract->steps_per_second / g->contract->source_frames_per_second)),
        .snapshot_size = g->snapshot_size,
        .snapshot = snapshot,
    };
    g->contract->step(g->state, &step, &sink);
    g->events_total += cradle_events_count(&g->events);
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

uint64_t demo_game_hash(const demo_game *g) { return cradle_hash64(g->state, g->contract->state_size); }

void demo_game_output(const demo_game *g, const void *state, uint64_t step, uint8_t out[16]) {
    uint8_t bytes[CRADLE_GAME_OUTPUT_MAX];
    uint64_t digest;
    if (g->contract->output) {
        size_t n = g->contract->output(state, step, bytes, sizeof bytes);
        digest = cradle_hash64(bytes, n > sizeof bytes ? sizeof bytes : n);
    } else {
        digest = cradle_hash64(state, g->contract->state_size);
    }
    cradle_store_u64(out, step);
    cradle_store_u64(out + 8, digest);
}

bool demo_game_replay(demo_game *g, const cradle_session *session, uint8_t *out) {
    if (g->reloads > 0) return false;
    if (init_state(g, g->replay_state) != 0) return false;
    uint64_t per_step = g->contract->steps_per_second / g->contract->source_frames_per_second;
    for (uint64_t index = 0; index < session->count; index++) {
        cradle_events_clear(&g->events);
        cradle_event_sink sink = cradle_events_sink(&g->events);
        cradle_game_step step = {
            .index = index,
            .source_frame = index / per_step,
            .phase = (uint32_t)(index % per_step),
            .snapshot_size = g->snapshot_size,
            .snapshot = cradle_session_snapshot(session, index),
        };
        g->contract->step(g->replay_state, &step, &sink);
        demo_game_output(g, g->replay_state, index, out + index * 16u);
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
