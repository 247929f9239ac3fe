/*
 * test_vanguard: the sample game. Determinism (same seed and scripted input,
 * same bytes), relocation of the state block, the gameplay rules on small
 * scripted scenarios, a long 8-bot run, a full world, render/react, and the
 * data files (the shipped ones are the built-in values; refusals say where
 * and why; changed values change the game; a restart keeps them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cradle/cradle.h"
#include "cradle/contract.h"
#include "cradle/ecs.h"
#include "cradle/layout.h"
#include "vanguard_input.h"
#include "vanguard_internal.h"

/* The symbol a host looks up with dlsym; linked here from vanguard_static. */
CRADLE_GAME_EXPORT const cradle_game_contract *cradle_game_get_contract(void);

#define SNAP_SIZE (CRADLE_PRESENCE_BYTES(VG_MAX_PLAYERS) + VG_MAX_PLAYERS * VANGUARD_INPUT_BYTES)
#define OUT_BYTES 77u

/* ---- harness ------------------------------------------------------------------- */

typedef struct events {
    cradle_event list[4096];
    uint32_t count;
    uint32_t overflow;
} events;

static bool collect(void *context, const cradle_event *e) {
    events *ev = context;
    if (ev->count == sizeof ev->list / sizeof ev->list[0]) {
        ev->overflow++;
        return false;
    }
    ev->list[ev->count++] = *e;
    return true;
}

typedef struct game {
    const cradle_game_contract *c;
    vanguard_state *s;
    cradle_sim sim;             /* steps s */
    uint64_t step;              /* next step index */
    events ev;                  /* events of the last step, copied from the sim's */
    cradle_event storage[4096]; /* the sim's event storage */
} game;

static vanguard_state *state_alloc(void) {
    const cradle_game_contract *c = vanguard_contract();
    size_t size = (c->state_size + 63u) & ~(size_t)63u;
    vanguard_state *s = aligned_alloc(64, size);
    assert_non_null(s);
    memset(s, 0, size);
    return s;
}

static void game_open(game *g, uint64_t seed, uint32_t players) {
    memset(g, 0, sizeof *g);
    g->c = vanguard_contract();
    g->s = state_alloc();
    cradle_sim_config sc = {.state = g->s, .state_capacity = (g->c->state_size + 63u) & ~63u, .state_align = 64,
                            .events = g->storage, .event_capacity = 4096, .hash = cradle_hash64};
    assert_int_equal(cradle_sim_init(&g->sim, &sc, g->c, NULL, 0), 0);
    assert_int_equal(cradle_sim_start(&g->sim, seed, players), 0);
}

static void game_close(game *g) { free(g->s); }

/* Packs per-slot actions into a snapshot; slots with presence bit set. */
static void snapshot_build(uint8_t snap[SNAP_SIZE], uint32_t presence, const uint32_t *actions) {
    memset(snap, 0, SNAP_SIZE);
    for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++) {
        if (!(presence >> slot & 1u)) continue;
        snap[slot / 8] = (uint8_t)(snap[slot / 8] | (1u << (slot % 8)));
        uint8_t *in = snap + CRADLE_PRESENCE_BYTES(VG_MAX_PLAYERS) + slot * VANGUARD_INPUT_BYTES;
        assert_true(vanguard_input_pack(in, VANGUARD_INPUT_BYTES, actions ? actions[slot] : 0));
    }
}

static void game_step_snapshot(game *g, const uint8_t snap[SNAP_SIZE]) {
    assert_int_equal(g->sim.next_step, g->step);
    cradle_sim_step(&g->sim, snap);
    g->ev.count = 0;
    for (uint32_t i = 0; i < cradle_events_count(&g->sim.events); i++)
        (void)collect(&g->ev, cradle_events_at(&g->sim.events, i));
    g->ev.overflow += cradle_events_dropped(&g->sim.events);
    g->step++;
}

/* One step where slot 0..players-1 are present with these actions. */
static void game_step(game *g, uint32_t presence, const uint32_t *actions) {
    uint8_t snap[SNAP_SIZE];
    snapshot_build(snap, presence, actions);
    game_step_snapshot(g, snap);
}

static void game_idle(game *g, uint32_t presence, uint32_t steps) {
    for (uint32_t i = 0; i < steps; i++) game_step(g, presence, NULL);
}

static const cradle_event *find_event(const game *g, uint16_t kind) {
    for (uint32_t i = 0; i < g->ev.count; i++)
        if (g->ev.list[i].kind == kind) return &g->ev.list[i];
    return NULL;
}

/* find_event that fails the test when there is none. cmocka's failure is
 * not declared noreturn: the abort() tells the compiler that the event is
 * not NULL after this (a Release build's -Wnull-dereference). */
static const cradle_event *need_event(const game *g, uint16_t kind) {
    const cradle_event *e = find_event(g, kind);
    if (!e) {
        fail_msg("no event of kind %u", (unsigned)kind);
        abort();
    }
    return e;
}

static vg_motion ship_motion(game *g, uint32_t slot) {
    const vg_motion *m =
        cradle_ecs_get_const(vg_world_const(g->s), g->s->players[slot].ship, VG_C_MOTION);
    assert_non_null(m);
    return *m;
}

/* Input scripts: 8 bits per slot (slot s at bits 8s..8s+7); the restart bits
 * are pulses. */
static uint64_t script_pulse_mask(void) {
    uint64_t m = 0;
    for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++) m |= (uint64_t)VANGUARD_RESTART << (8 * slot);
    return m;
}

static void script_snapshot(const cradle_input_script_change *script, size_t n, uint64_t step,
                            uint32_t presence, uint8_t snap[SNAP_SIZE]) {
    uint64_t bits = 0;
    assert_int_equal(cradle_input_script_at(script, n, script_pulse_mask(), step, &bits), 0);
    uint32_t actions[VG_MAX_PLAYERS];
    for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++) actions[slot] = (uint32_t)(bits >> (8 * slot)) & 0xFFu;
    snapshot_build(snap, presence, actions);
}

/* A bot script: every slot changes its actions every 5..40 steps. */
static size_t script_make(cradle_input_script_change *script, size_t cap, uint64_t seed, uint64_t steps) {
    cradle_rng rng;
    cradle_rng_seed(&rng, seed, 7);
    size_t n = 0;
    uint64_t step = 0;
    while (step < steps && n < cap) {
        uint64_t bits = 0;
        for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++) {
            uint32_t a = cradle_rng_next(&rng) & (VANGUARD_UP | VANGUARD_DOWN | VANGUARD_LEFT |
                                                  VANGUARD_RIGHT | VANGUARD_FIRE);
            if (cradle_rng_below(&rng, 4) != 0) a |= VANGUARD_FIRE; /* bots like shooting */
            if (cradle_rng_below(&rng, 50) == 0) a |= VANGUARD_RESTART;
            bits |= (uint64_t)a << (8 * slot);
        }
        script[n++] = (cradle_input_script_change){.step = step, .bits = bits};
        step += 5 + cradle_rng_below(&rng, 36);
    }
    assert_int_equal(cradle_input_script_check(script, n), 0);
    return n;
}

/* Runs `steps` steps from the script and appends each step's output. */
static size_t run_script(uint64_t seed, uint32_t players, const cradle_input_script_change *script,
                         size_t n, uint64_t steps, uint8_t *out) {
    game g;
    game_open(&g, seed, players);
    size_t at = 0;
    uint8_t snap[SNAP_SIZE];
    uint32_t presence = (1u << players) - 1u;
    for (uint64_t i = 0; i < steps; i++) {
        script_snapshot(script, n, i, presence, snap);
        game_step_snapshot(&g, snap);
        size_t w = g.c->output(g.s, i, out + at, CRADLE_GAME_OUTPUT_MAX);
        assert_int_equal(w, OUT_BYTES);
        at += w;
    }
    game_close(&g);
    return at;
}

/* ---- contract and input ---------------------------------------------------------- */

static void test_contract(void **unused) {
    (void)unused;
    const cradle_game_contract *c = cradle_game_get_contract();
    assert_ptr_equal(c, vanguard_contract());
    assert_string_equal(c->name, "vanguard");
    assert_int_equal(c->abi_major, CRADLE_ABI_MAJOR);
    assert_int_equal(c->max_players, 8);
    assert_int_equal(c->input_bytes, 1);
    assert_int_equal(c->steps_per_second, 60);
    assert_int_equal(c->source_frames_per_second, 20);
    assert_int_equal(c->view_width, 640);
    assert_int_equal(c->view_height, 360);
    assert_int_equal(c->state_size, sizeof(vanguard_state));
    assert_true(c->state_align <= 64 && (c->state_align & (c->state_align - 1)) == 0);
    assert_true(strlen(c->build_id) >= 1 && strlen(c->build_id) <= CRADLE_GAME_BUILD_ID_MAX);
    assert_non_null(c->init);
    assert_non_null(c->step);
    assert_non_null(c->output);
    assert_non_null(c->render);
    assert_non_null(c->react);
    assert_non_null(c->on_reload);
    vanguard_state *s = state_alloc();
    assert_int_equal(c->init(s, 1, 0), CRADLE_EINVAL);
    assert_int_equal(c->init(s, 1, 9), CRADLE_EINVAL);
    assert_int_equal(c->init(s, 1, 8), 0);
    assert_int_equal(cradle_ecs_max_entities(vg_world(s)), VG_MAX_ENTITIES);
    assert_true(VG_MAX_ENTITIES >= 4096);
    c->on_reload(s);
    assert_int_equal(s->reloads, 1);
    free(s);
}

static void test_input_pack(void **unused) {
    (void)unused;
    uint8_t b[2] = {0xFF, 0xEE};
    assert_true(vanguard_input_pack(b, 1, VANGUARD_FIRE | VANGUARD_LEFT));
    assert_int_equal(b[0], 0x14);
    assert_int_equal(b[1], 0xEE); /* one byte only */
    assert_int_equal(vanguard_input_unpack(b, 1), VANGUARD_FIRE | VANGUARD_LEFT);
    assert_true(vanguard_input_pack(b, 1, 0xFFFFFFFFu)); /* unknown bits dropped */
    assert_int_equal(b[0], 0x3F);
    assert_false(vanguard_input_pack(b, 0, VANGUARD_UP));
    assert_int_equal(vanguard_input_unpack(b, 0), 0);
    b[0] = 0xC1; /* reserved bits are ignored */
    assert_int_equal(vanguard_input_unpack(b, 1), VANGUARD_UP);
    assert_int_equal(VANGUARD_UP | VANGUARD_DOWN | VANGUARD_LEFT | VANGUARD_RIGHT | VANGUARD_FIRE |
                         VANGUARD_RESTART,
                     0x3F);
}

/* ---- determinism and relocation ---------------------------------------------------- */

static void test_same_seed_same_bytes(void **unused) {
    (void)unused;
    enum { STEPS = 1500 };
    static cradle_input_script_change script[1024];
    size_t n = script_make(script, 1024, 42, STEPS);
    uint8_t *a = malloc(STEPS * OUT_BYTES), *b = malloc(STEPS * OUT_BYTES),
            *c = malloc(STEPS * OUT_BYTES);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    size_t la = run_script(99, 4, script, n, STEPS, a);
    size_t lb = run_script(99, 4, script, n, STEPS, b);
    cradle_golden_result r = cradle_golden_compare(a, la, b, lb);
    assert_true(r.equal);
    assert_int_equal(la, (size_t)STEPS * OUT_BYTES);
    /* Another seed is another game. */
    size_t lc = run_script(100, 4, script, n, STEPS, c);
    assert_false(cradle_golden_compare(a, la, c, lc).equal);
    free(a);
    free(b);
    free(c);
}

static void test_relocated_state_continues(void **unused) {
    (void)unused;
    enum { N = 700, M = 700 };
    static cradle_input_script_change script[512];
    size_t n = script_make(script, 512, 5, N + M);
    uint8_t *ref = malloc((N + M) * OUT_BYTES), *got = malloc((N + M) * OUT_BYTES);
    assert_non_null(ref);
    assert_non_null(got);
    size_t lref = run_script(7, 8, script, n, N + M, ref);

    game g;
    game_open(&g, 7, 8);
    uint8_t snap[SNAP_SIZE];
    size_t at = 0;
    for (uint64_t i = 0; i < N; i++) {
        script_snapshot(script, n, i, 0xFF, snap);
        game_step_snapshot(&g, snap);
        at += g.c->output(g.s, i, got + at, CRADLE_GAME_OUTPUT_MAX);
    }
    /* Move the block to another place (64-aligned, at another offset inside a
     * bigger allocation), then wreck the original. */
    size_t size = g.c->state_size;
    uint8_t *raw = aligned_alloc(64, size + 4096);
    assert_non_null(raw);
    vanguard_state *moved = (vanguard_state *)(raw + 1024);
    cradle_sim_config sc = {.state = moved, .state_capacity = (uint32_t)size, .state_align = 64,
                            .events = g.storage, .event_capacity = 4096, .hash = cradle_hash64};
    assert_int_equal(cradle_sim_init(&g.sim, &sc, g.c, NULL, 0), 0);
    assert_int_equal(cradle_sim_restore(&g.sim, g.s, size, N), 0);
    memset(g.s, 0xA5, size);
    vanguard_state *original = g.s;
    g.s = moved;
    for (uint64_t i = N; i < N + M; i++) {
        script_snapshot(script, n, i, 0xFF, snap);
        game_step_snapshot(&g, snap);
        at += g.c->output(g.s, i, got + at, CRADLE_GAME_OUTPUT_MAX);
    }
    cradle_golden_result r = cradle_golden_compare(ref, lref, got, at);
    assert_true(r.equal);
    free(raw);
    free(original);
    free(ref);
    free(got);
}

/* ---- gameplay rules ------------------------------------------------------------------ */

static void test_missile_kills_enemy(void **unused) {
    (void)unused;
    game g;
    game_open(&g, 3, 1);
    vg_motion ship = ship_motion(&g, 0);
    cradle_entity enemy = vanguard_spawn_enemy(g.s, VG_DRIFTER, ship.x + 70 * VG_FP, ship.y,
                                               ship.x + 70 * VG_FP, ship.y);
    assert_int_not_equal(enemy, CRADLE_ENTITY_NONE);
    uint32_t fire[VG_MAX_PLAYERS] = {VANGUARD_FIRE};
    bool fired = false, destroyed = false;
    for (int i = 0; i < 20 && !destroyed; i++) {
        game_step(&g, 1, fire);
        fired |= find_event(&g, VG_EV_FIRED) != NULL;
        const cradle_event *e = find_event(&g, VG_EV_ENEMY_DESTROYED);
        if (e) {
            destroyed = true;
            assert_int_equal(e->player, 0);
            assert_int_equal(e->a, 100);
            assert_int_equal(e->b, VG_DRIFTER);
        }
    }
    assert_true(fired);
    assert_true(destroyed);
    assert_false(cradle_ecs_alive(vg_world(g.s), enemy));
    assert_int_equal(g.s->players[0].score, 100);
    uint8_t out[CRADLE_GAME_OUTPUT_MAX];
    assert_int_equal(g.c->output(g.s, g.step - 1, out, sizeof out), OUT_BYTES);
    assert_int_equal(cradle_cursor_load_u32(out + 8 + 8 + 4 + 4 + 1 + 4 + 2), 100); /* slot 0 score */
    game_close(&g);
}

static void test_shooter_takes_several_hits(void **unused) {
    (void)unused;
    game g;
    game_open(&g, 3, 1);
    vg_motion ship = ship_motion(&g, 0);
    cradle_entity enemy = vanguard_spawn_enemy(g.s, VG_SHOOTER, ship.x + 200 * VG_FP, ship.y,
                                               ship.x + 200 * VG_FP, ship.y);
    uint32_t fire[VG_MAX_PLAYERS] = {VANGUARD_FIRE};
    uint32_t hits = 0;
    bool destroyed = false;
    for (int i = 0; i < 120 && !destroyed; i++) {
        g.s->players[0].invulnerable = 10; /* its shots must not stop ours */
        game_step(&g, 1, fire);
        if (find_event(&g, VG_EV_ENEMY_HIT)) hits++;
        destroyed = find_event(&g, VG_EV_ENEMY_DESTROYED) != NULL;
    }
    assert_true(destroyed);
    assert_int_equal(hits, 3); /* 4 hit points: three hits, then the kill */
    assert_false(cradle_ecs_alive(vg_world(g.s), enemy));
    assert_int_equal(g.s->players[0].score, 300);
    game_close(&g);
}

/* A missile hits what its box overlaps by a single fixed-point unit and
 * misses what it only touches, on each side, for a small enemy and for the
 * boss (whose centre is far from the missile: collisions are prefiltered by
 * centre and reach, and larger bodies must bypass that filter). On its
 * first step a missile's box is [ship.x + 14 px, ship.x + 26 px) x
 * [ship.y - 2 px, ship.y + 2 px). The ship first moves 0..5 steps down and
 * right (3 px a step), so the boxes meet at different offsets from the
 * prefilter's 16-pixel squares. */
static void test_missile_hits_at_box_edges(void **unused) {
    (void)unused;
    const struct {
        uint8_t type;
        int32_t half_w, half_h; /* px */
        int32_t side;           /* 0 right, 1 left, 2 above, 3 below the missile */
    } cases[] = {
        {VG_CHASER, 8, 6, 0},  {VG_CHASER, 8, 6, 1},   {VG_CHASER, 8, 6, 2},
        {VG_CHASER, 8, 6, 3},  {VG_SHOOTER, 10, 9, 0}, {VG_SHOOTER, 10, 9, 1},
        {VG_SHOOTER, 10, 9, 3}, {VG_BOSS, 30, 30, 0},  {VG_BOSS, 30, 30, 2},
    };
    /* gap: fixed-point units between the boxes (-1: they overlap by one). */
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int32_t gap = -1; gap <= 0; gap++)
            for (uint32_t moves = 0; moves < 6; moves++) {
                game g;
                game_open(&g, 5, 1);
                uint32_t move[VG_MAX_PLAYERS] = {VANGUARD_RIGHT | VANGUARD_DOWN};
                for (uint32_t i = 0; i < moves; i++) game_step(&g, 1, move);
                vg_motion ship = ship_motion(&g, 0);
                int32_t hw = cases[c].half_w * VG_FP, hh = cases[c].half_h * VG_FP;
                int32_t x = ship.x + 20 * VG_FP, y = ship.y; /* the missile's centre */
                switch (cases[c].side) {
                case 0: x += 6 * VG_FP + hw + gap; break;
                case 1: x -= 6 * VG_FP + hw + gap; break;
                case 2: y -= 2 * VG_FP + hh + gap; break;
                default: y += 2 * VG_FP + hh + gap; break;
                }
                /* Home where it is: the first think keeps it still. */
                cradle_entity e = vanguard_spawn_enemy(g.s, cases[c].type, x, y, x, y);
                assert_int_not_equal(e, CRADLE_ENTITY_NONE);
                uint32_t fire[VG_MAX_PLAYERS] = {VANGUARD_FIRE};
                g.s->players[0].invulnerable = 10; /* touching the ship costs nothing */
                game_step(&g, 1, fire);
                assert_non_null(find_event(&g, VG_EV_FIRED));
                const cradle_event *hit = find_event(&g, VG_EV_ENEMY_HIT);
                if (gap < 0) {
                    assert_non_null(hit);
                    assert_int_equal(hit->player, 0);
                    assert_int_equal(hit->b, cases[c].type);
                } else {
                    assert_null(hit);
                }
                game_close(&g);
            }
}

/* Puts a motionless enemy shot on the ship. */
static cradle_entity shoot_ship(game *g, uint32_t slot) {
    vg_motion ship = ship_motion(g, slot);
    cradle_entity e = vanguard_spawn_enemy_shot(g->s, ship.x, ship.y, 0, 0);
    assert_int_not_equal(e, CRADLE_ENTITY_NONE);
    return e;
}

static void test_collision_costs_a_life(void **unused) {
    (void)unused;
    game g;
    game_open(&g, 3, 1);
    g.s->break_steps = 1000000; /* no waves */
    (void)shoot_ship(&g, 0);
    game_step(&g, 1, NULL);
    const cradle_event *e = need_event(&g, VG_EV_PLAYER_HIT);
    assert_int_equal(e->player, 0);
    assert_int_equal(e->a, 2);
    assert_null(find_event(&g, VG_EV_PLAYER_DIED));
    assert_int_equal(g.s->players[0].lives, 2);
    assert_int_equal(g.s->players[0].ship, CRADLE_ENTITY_NONE);
    /* The ship comes back, invulnerable for a while. */
    game_idle(&g, 1, VG_RESPAWN_STEPS);
    assert_int_not_equal(g.s->players[0].ship, CRADLE_ENTITY_NONE);
    assert_true(g.s->players[0].invulnerable > 0);
    cradle_entity harmless = shoot_ship(&g, 0);
    game_step(&g, 1, NULL);
    assert_null(find_event(&g, VG_EV_PLAYER_HIT));
    assert_int_equal(g.s->players[0].lives, 2);
    assert_true(cradle_ecs_alive(vg_world(g.s), harmless));
    assert_int_equal(cradle_ecs_destroy(vg_world(g.s), harmless), 0);

    /* Ramming an enemy costs a life too, and the enemy. */
    game_idle(&g, 1, VG_INVULNERABLE_STEPS);
    vg_motion ship = ship_motion(&g, 0);
    cradle_entity chaser = vanguard_spawn_enemy(g.s, VG_CHASER, ship.x, ship.y, ship.x, ship.y);
    game_step(&g, 1, NULL);
    assert_non_null(find_event(&g, VG_EV_PLAYER_HIT));
    assert_int_equal(g.s->players[0].lives, 1);
    assert_false(cradle_ecs_alive(vg_world(g.s), chaser));
    game_close(&g);
}

/* Hits slot 0 until it has no lives left (enemies may help); g->ev then
 * holds the events of the step that took the last life. */
static void lose_all_lives(game *g, uint32_t presence) {
    while (g->s->players[0].lives > 0) {
        if (g->s->players[0].ship == CRADLE_ENTITY_NONE || g->s->players[0].invulnerable > 0) {
            game_idle(g, presence, 1);
            continue;
        }
        (void)shoot_ship(g, 0);
        game_step(g, presence, NULL);
        assert_non_null(find_event(g, VG_EV_PLAYER_HIT));
    }
}

static void test_game_over_after_last_life(void **unused) {
    (void)unused;
    game g;
    game_open(&g, 3, 1);
    lose_all_lives(&g, 1);
    assert_non_null(find_event(&g, VG_EV_PLAYER_DIED));
    const cradle_event *over = find_event(&g, VG_EV_GAME_OVER);
    assert_non_null(over);
    assert_int_equal(g.s->game_over, 1);
    uint8_t out[CRADLE_GAME_OUTPUT_MAX];
    assert_int_equal(g.c->output(g.s, g.step - 1, out, sizeof out), OUT_BYTES);
    assert_int_equal(out[24], 1); /* the game-over byte */
    assert_int_equal(out[29 + 1], 0); /* slot 0 lives */
    /* It stays over: no ship comes back, no new wave, no second event. */
    uint32_t wave = g.s->wave;
    for (int i = 0; i < 600; i++) {
        game_step(&g, 1, NULL);
        assert_null(find_event(&g, VG_EV_GAME_OVER));
        assert_null(find_event(&g, VG_EV_WAVE_STARTED));
    }
    assert_int_equal(g.s->players[0].ship, CRADLE_ENTITY_NONE);
    assert_int_equal(g.s->wave, wave);
    game_close(&g);
}

static void test_game_over_needs_every_player_out(void **unused) {
    (void)unused;
    game g;
    game_open(&g, 3, 2);
    g.s->break_steps = 1000000; /* no waves */
    lose_all_lives(&g, 3);
    assert_non_null(find_event(&g, VG_EV_PLAYER_DIED));
    game_idle(&g, 3, 10);
    assert_int_equal(g.s->game_over, 0);
    assert_int_equal(g.s->players[1].lives, 3);
    game_close(&g);
}

static void test_restart_resets(void **unused) {
    (void)unused;
    game g;
    game_open(&g, 11, 1);
    uint32_t fire[VG_MAX_PLAYERS] = {VANGUARD_FIRE};
    for (int i = 0; i < 300; i++) {
        game_step(&g, 1, fire);
        g.s->players[0].invulnerable = 10;
    }
    g.s->players[0].invulnerable = 0;
    uint32_t restart[VG_MAX_PLAYERS] = {VANGUARD_RESTART};
    /* Restart does nothing while the game runs. */
    uint32_t tick = g.s->tick;
    game_step(&g, 1, restart);
    assert_null(find_event(&g, VG_EV_RESTART));
    assert_int_equal(g.s->tick, tick + 1);
    game_idle(&g, 1, 1);
    lose_all_lives(&g, 1);
    assert_int_equal(g.s->game_over, 1);
    game_idle(&g, 1, 5);

    game_step(&g, 1, restart);
    const cradle_event *e = need_event(&g, VG_EV_RESTART);
    assert_int_equal(e->player, 0);
    assert_int_equal(g.s->game_over, 0);
    assert_int_equal(g.s->tick, 0);
    assert_int_equal(g.s->wave, 0);
    assert_int_equal(g.s->players[0].lives, VG_START_LIVES);
    assert_int_equal(g.s->players[0].score, 0);
    assert_int_equal(g.s->restarts, 1);
    /* The same game as a fresh one with the same seed. */
    vanguard_state *fresh = state_alloc();
    assert_int_equal(g.c->init(fresh, 11, 1), 0);
    assert_true(vanguard_checksum(fresh) == vanguard_checksum(g.s));
    /* Holding the button does not restart again. */
    game_step(&g, 1, restart);
    assert_null(find_event(&g, VG_EV_RESTART));
    assert_int_equal(g.s->tick, 1);
    free(fresh);
    game_close(&g);
}

static void test_near_miss(void **unused) {
    (void)unused;
    game g;
    game_open(&g, 3, 1);
    vg_motion ship = ship_motion(&g, 0);
    /* A shot passing 14 px above the ship, right to left. */
    cradle_entity shot = vanguard_spawn_enemy_shot(g.s, ship.x + 60 * VG_FP, ship.y - 14 * VG_FP,
                                                   -3 * VG_FP, 0);
    assert_int_not_equal(shot, CRADLE_ENTITY_NONE);
    uint32_t misses = 0;
    for (int i = 0; i < 60; i++) {
        game_step(&g, 1, NULL);
        assert_null(find_event(&g, VG_EV_PLAYER_HIT));
        const cradle_event *e = find_event(&g, VG_EV_NEAR_MISS);
        if (e) {
            misses++;
            assert_int_equal(e->player, 0);
        }
    }
    assert_int_equal(misses, 1);
    assert_int_equal(g.s->players[0].lives, 3);
    game_close(&g);
}

static void test_pickups(void **unused) {
    (void)unused;
    game g;
    game_open(&g, 3, 1);
    vg_motion ship = ship_motion(&g, 0);
    assert_int_not_equal(vanguard_spawn_pickup(g.s, VG_PICKUP_LIFE, ship.x, ship.y), CRADLE_ENTITY_NONE);
    game_step(&g, 1, NULL);
    const cradle_event *e = need_event(&g, VG_EV_PICKUP);
    assert_int_equal(e->a, VG_PICKUP_LIFE);
    assert_int_equal(g.s->players[0].lives, 4);
    assert_int_not_equal(vanguard_spawn_pickup(g.s, VG_PICKUP_RAPID, ship.x, ship.y), CRADLE_ENTITY_NONE);
    game_step(&g, 1, NULL);
    assert_non_null(find_event(&g, VG_EV_PICKUP));
    assert_true(g.s->players[0].rapid > 0);
    /* Rapid fire: two missiles per shot. */
    uint32_t fire[VG_MAX_PLAYERS] = {VANGUARD_FIRE};
    game_step(&g, 1, fire);
    e = need_event(&g, VG_EV_FIRED);
    assert_int_equal(e->a, 2);
    game_close(&g);
}

static void test_join_and_leave(void **unused) {
    (void)unused;
    game g;
    game_open(&g, 3, 1);
    game_step(&g, 0x3, NULL); /* slot 1 connects */
    assert_non_null(find_event(&g, VG_EV_PLAYER_JOINED));
    assert_int_equal(g.s->players[1].joined, 1);
    assert_int_not_equal(g.s->players[1].ship, CRADLE_ENTITY_NONE);
    uint8_t out[CRADLE_GAME_OUTPUT_MAX];
    (void)g.c->output(g.s, 0, out, sizeof out);
    assert_int_equal(out[29 + 6], 1); /* slot 1 present */
    game_step(&g, 0x1, NULL); /* and leaves, taking its ship along */
    assert_int_equal(g.s->players[1].ship, CRADLE_ENTITY_NONE);
    (void)g.c->output(g.s, 1, out, sizeof out);
    assert_int_equal(out[29 + 6], 0);
    assert_int_equal(out[29 + 7], 3); /* keeps its lives */
    game_step(&g, 0x3, NULL); /* comes back */
    assert_null(find_event(&g, VG_EV_PLAYER_JOINED));
    assert_int_not_equal(g.s->players[1].ship, CRADLE_ENTITY_NONE);
    /* A wrong-sized snapshot reads as everyone absent, never out of bounds. */
    uint8_t small[1] = {0xFF};
    cradle_game_step st = {.index = g.step, .snapshot_size = 1, .snapshot = small};
    g.c->step(g.s, &st, NULL);
    assert_int_equal(g.s->players[0].present, 0);
    game_close(&g);
}

static void test_waves_arrive_and_escalate(void **unused) {
    (void)unused;
    game g;
    game_open(&g, 21, 1);
    uint32_t started = 0, enemies_first = 0;
    for (int i = 0; i < 120; i++) {
        game_step(&g, 1, NULL);
        const cradle_event *e = find_event(&g, VG_EV_WAVE_STARTED);
        if (e) {
            started++;
            assert_int_equal(e->a, 1);
            enemies_first = (uint32_t)e->b;
        }
    }
    assert_int_equal(started, 1);
    assert_true(enemies_first > 0);
    assert_true(cradle_ecs_count(vg_world(g.s), VG_C_ENEMY) > 0);
    /* Clear the screen by hand to move through waves quickly. */
    uint32_t last_total = 0;
    for (uint32_t w = 1; w < 11; w++) {
        uint32_t seen_wave = g.s->wave;
        for (int i = 0; i < 20000 && g.s->wave == seen_wave; i++) {
            cradle_ecs *world = vg_world(g.s);
            while (cradle_ecs_count(world, VG_C_ENEMY) > 0)
                (void)cradle_ecs_destroy(world, cradle_ecs_entities(world, VG_C_ENEMY)[0]);
            game_step(&g, 1, NULL);
            const cradle_event *e = find_event(&g, VG_EV_WAVE_STARTED);
            if (e) last_total = (uint32_t)e->b;
            /* the player must not die while we skip through */
            g.s->players[0].invulnerable = 10;
        }
        assert_int_equal(g.s->wave, seen_wave + 1);
    }
    assert_int_equal(g.s->wave, 11);
    assert_true(last_total > enemies_first); /* wave 11 repeats wave 1, bigger */
    game_close(&g);
}

static void test_boss_wave(void **unused) {
    (void)unused;
    game g;
    game_open(&g, 8, 1);
    g.s->wave = VG_BOSS_EVERY - 1;
    g.s->break_steps = 1;
    bool boss = false;
    for (int i = 0; i < 2000 && !boss; i++) {
        game_step(&g, 1, NULL);
        g.s->players[0].invulnerable = 10;
        cradle_ecs_query q;
        cradle_ecs_query_begin(&q, vg_world(g.s), (const uint32_t[]){VG_C_ENEMY}, 1);
        while (cradle_ecs_query_next(&q)) {
            const vg_enemy *en = cradle_ecs_query_get(&q, 0);
            if (en->type == VG_BOSS) boss = true;
        }
    }
    assert_true(boss);
    assert_int_equal(g.s->wave, VG_BOSS_EVERY);
    game_close(&g);
}

/* The FSM walks patrol -> chase -> attack -> search -> return -> patrol. */
static void test_enemy_fsm_cycle(void **unused) {
    (void)unused;
    game g;
    game_open(&g, 3, 1);
    g.s->break_steps = 100000; /* no waves */
    vg_motion ship = ship_motion(&g, 0);
    int32_t hx = ship.x + 300 * VG_FP, hy = ship.y;
    cradle_entity e = vanguard_spawn_enemy(g.s, VG_SHOOTER, hx + 40 * VG_FP, hy, hx, hy);
    bool seen[VG_AI_STATES] = {false};
    uint8_t order[64];
    uint32_t n = 0;
    uint8_t last = 0xFF;
    for (int i = 0; i < 3000 && n < 64; i++) {
        game_step(&g, 1, NULL);
        g.s->players[0].invulnerable = 10;
        const vg_enemy *en = cradle_ecs_get_const(vg_world_const(g.s), e, VG_C_ENEMY);
        assert_non_null(en);
        if (en->state != last) {
            order[n++] = en->state;
            last = en->state;
            seen[en->state] = true;
        }
    }
    for (int st = 0; st < VG_AI_STATES; st++) assert_true(seen[st]);
    /* Find the full cycle in the recorded transitions. */
    bool cycle = false;
    for (uint32_t i = 0; i + 5 < n; i++) {
        if (order[i] == VG_PATROL && order[i + 1] == VG_CHASE && order[i + 2] == VG_ATTACK &&
            order[i + 3] == VG_SEARCH && order[i + 4] == VG_RETURN && order[i + 5] == VG_PATROL)
            cycle = true;
    }
    assert_true(cycle);
    game_close(&g);
}

/* ---- long run, full world ------------------------------------------------------------- */

/* 8 bots for `steps` steps; returns a hash of every step's output. */
static uint64_t long_run(uint64_t seed, uint32_t steps, uint32_t *peak, uint32_t *waves,
                         uint32_t *restarts) {
    game g;
    game_open(&g, seed, 8);
    uint8_t out[CRADLE_GAME_OUTPUT_MAX];
    uint64_t h = 0xcbf29ce484222325ull;
    *peak = *waves = *restarts = 0;
    for (uint64_t i = 0; i < steps; i++) {
        uint32_t actions[VG_MAX_PLAYERS];
        for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++)
            actions[slot] = vanguard_bot_actions(g.s, slot, i);
        game_step(&g, 0xFF, actions);
        uint32_t live = cradle_ecs_live_count(vg_world(g.s));
        assert_true(live <= VG_MAX_ENTITIES);
        if (live > *peak) *peak = live;
        if (g.s->wave > *waves) *waves = g.s->wave;
        if (find_event(&g, VG_EV_RESTART)) (*restarts)++;
        assert_int_equal(g.ev.overflow, 0);
        size_t n = g.c->output(g.s, i, out, sizeof out);
        assert_int_equal(n, OUT_BYTES);
        for (size_t k = 0; k < n; k++) h = (h ^ out[k]) * 0x100000001b3ull;
    }
    game_close(&g);
    return h;
}

static void test_long_run_eight_bots(void **unused) {
    (void)unused;
    enum { STEPS = 10000 };
    uint32_t peak, waves, restarts;
    uint64_t a = long_run(77, STEPS, &peak, &waves, &restarts);
    print_message("long run: %d steps, peak %u entities, best wave %u, restarts %u\n", STEPS, peak,
                  waves, restarts);
    assert_true(peak > 40);
    assert_true(waves >= 3);
    uint32_t peak2, waves2, restarts2;
    uint64_t b = long_run(77, STEPS, &peak2, &waves2, &restarts2);
    assert_true(a == b);
    assert_int_equal(peak, peak2);
}

static void test_full_world_refuses_spawns(void **unused) {
    (void)unused;
    game g;
    game_open(&g, 3, 8);
    uint32_t spawned = 0;
    for (;;) {
        int32_t x = (int32_t)(200 + spawned % 400) * VG_FP, y = (int32_t)(20 + spawned % 320) * VG_FP;
        if (vanguard_spawn_enemy(g.s, VG_SHOOTER, x, y, x, y) == CRADLE_ENTITY_NONE) break;
        spawned++;
    }
    assert_int_equal(cradle_ecs_live_count(vg_world(g.s)), VG_MAX_ENTITIES);
    assert_int_equal(g.s->refused_spawns, 1);
    uint32_t fire[VG_MAX_PLAYERS];
    for (uint32_t i = 0; i < VG_MAX_PLAYERS; i++) fire[i] = VANGUARD_FIRE | VANGUARD_UP;
    for (int i = 0; i < 200; i++) {
        game_step(&g, 0xFF, fire);
        assert_true(cradle_ecs_live_count(vg_world(g.s)) <= VG_MAX_ENTITIES);
    }
    assert_true(g.s->refused_spawns > 1);
    game_close(&g);
}

/* ---- render and react -------------------------------------------------------------------- */

typedef struct recorder {
    uint32_t clears, rects, outlines, lines, triangles, texts;
    bool game_over_text;
    float first_ship_x; /* the tip of the first triangle in player 0's colour */
    bool have_ship;
    uint32_t bursts, shakes, sounds;
    cradle_sound last_sound;
} recorder;

static void r_clear(void *c, uint32_t rgba) {
    (void)rgba;
    ((recorder *)c)->clears++;
}
static void r_rect(void *c, float x, float y, float w, float h, uint32_t rgba) {
    (void)x, (void)y, (void)w, (void)h, (void)rgba;
    ((recorder *)c)->rects++;
}
static void r_outline(void *c, float x, float y, float w, float h, uint32_t rgba) {
    (void)x, (void)y, (void)w, (void)h, (void)rgba;
    ((recorder *)c)->outlines++;
}
static void r_line(void *c, float x0, float y0, float x1, float y1, uint32_t rgba) {
    (void)x0, (void)y0, (void)x1, (void)y1, (void)rgba;
    ((recorder *)c)->lines++;
}
static void r_tri(void *c, float x0, float y0, float x1, float y1, float x2, float y2,
                  uint32_t rgba) {
    (void)y0, (void)x1, (void)y1, (void)x2, (void)y2;
    recorder *r = c;
    r->triangles++;
    if (rgba == 0x4fc3f7ffu && !r->have_ship) {
        r->have_ship = true;
        r->first_ship_x = x0;
    }
}
static void r_text(void *c, float x, float y, float scale, uint32_t rgba, const char *t) {
    (void)x, (void)y, (void)scale, (void)rgba;
    recorder *r = c;
    r->texts++;
    if (strstr(t, "GAME OVER - press R")) r->game_over_text = true;
}
static void r_burst(void *c, float x, float y, uint32_t n, uint32_t rgba, float speed, float life) {
    (void)x, (void)y, (void)n, (void)rgba, (void)speed, (void)life;
    ((recorder *)c)->bursts++;
}
static void r_shake(void *c, float amount) {
    (void)amount;
    ((recorder *)c)->shakes++;
}
static void r_sound(void *c, cradle_sound cue, float volume, float pitch) {
    (void)volume, (void)pitch;
    recorder *r = c;
    r->sounds++;
    r->last_sound = cue;
}

static void test_render_interpolates(void **unused) {
    (void)unused;
    game g;
    game_open(&g, 3, 1);
    game_idle(&g, 1, 2);
    vanguard_state *prev = state_alloc();
    memcpy(prev, g.s, g.c->state_size);
    uint32_t right[VG_MAX_PLAYERS] = {VANGUARD_RIGHT};
    game_step(&g, 1, right);
    float x0 = (float)ship_motion(&g, 0).x / VG_FP - 3.0f; /* moved 3 px */
    recorder r = {0};
    cradle_draw d = {.context = &r, .clear = r_clear, .rect = r_rect, .rect_outline = r_outline,
                     .line = r_line, .triangle = r_tri, .text = r_text};
    g.c->render(prev, g.s, 0.5f, &d);
    assert_int_equal(r.clears, 1);
    assert_true(r.have_ship);
    assert_true(r.rects > 100); /* the starfield */
    assert_true(r.texts >= 2);  /* score and wave */
    /* The ship tip is 11 px ahead of its centre; halfway through the move. */
    assert_true(r.first_ship_x > x0 + 11.0f + 1.4f && r.first_ship_x < x0 + 11.0f + 1.6f);
    assert_false(r.game_over_text);
    /* Without a previous state, the ship is where it is now. */
    recorder r2 = {0};
    d.context = &r2;
    g.c->render(NULL, g.s, 0.5f, &d);
    assert_true(r2.first_ship_x > x0 + 11.0f + 2.9f && r2.first_ship_x < x0 + 11.0f + 3.1f);
    /* A host without drawing functions is fine. */
    cradle_draw none = {0};
    g.c->render(prev, g.s, 0.25f, &none);

    lose_all_lives(&g, 1);
    recorder r3 = {0};
    d.context = &r3;
    g.c->render(NULL, g.s, 0.0f, &d);
    assert_true(r3.game_over_text);
    free(prev);
    game_close(&g);
}

static void test_react(void **unused) {
    (void)unused;
    game g;
    game_open(&g, 3, 1);
    recorder r = {0};
    cradle_fx fx = {.context = &r, .burst = r_burst, .shake = r_shake, .sound = r_sound};
    cradle_event evs[] = {
        {.kind = VG_EV_FIRED, .player = 0},
        {.kind = VG_EV_ENEMY_DESTROYED, .player = 0, .a = 100, .b = VG_DRIFTER},
        {.kind = VG_EV_PLAYER_HIT, .player = 0, .a = 2},
        {.kind = VG_EV_NEAR_MISS, .player = 0},
        {.kind = VG_EV_GAME_OVER},
        {.kind = 999}, /* unknown kinds are ignored */
    };
    g.c->react(g.s, evs, 6, &fx);
    assert_int_equal(r.bursts, 4);
    assert_int_equal(r.shakes, 4);
    assert_int_equal(r.sounds, 5);
    assert_int_equal(r.last_sound, VG_SOUND_GAME_OVER);
    cradle_fx none = {0};
    g.c->react(g.s, evs, 6, &none);
    game_close(&g);
}

/* ---- data files (game_abi.h, minor 4; vanguard_data.c) ---------------------------------- */

#ifndef VANGUARD_SOURCE_DATA_DIR
#error "VANGUARD_SOURCE_DATA_DIR: vanguard_static gives the source tree's data folder"
#endif

typedef struct text {
    char bytes[65536];
    uint32_t size;
} text;

/* The shipped file vanguard/<name> of the source tree. */
static void shipped(const char *name, text *t) {
    char path[512];
    snprintf(path, sizeof path, "%s/vanguard/%s", VANGUARD_SOURCE_DATA_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    assert_non_null(f);
    size_t n = fread(t->bytes, 1, sizeof t->bytes - 1, f);
    assert_int_equal(ferror(f), 0);
    assert_int_equal(fclose(f), 0);
    assert_true(n > 0 && n < sizeof t->bytes - 1);
    t->bytes[n] = '\0';
    t->size = (uint32_t)n;
}

/* t with its `nth` (0: first) occurrence of `from` replaced by `to`. */
static void edit(text *t, const char *from, const char *to, int nth) {
    char *at = t->bytes;
    for (int i = 0;; i++) {
        at = strstr(at, from);
        if (!at) fail_msg("no \"%s\" to replace", from);
        assert_non_null(at);
        if (i == nth) break;
        at += strlen(from);
    }
    size_t lf = strlen(from), lt = strlen(to), tail = t->size - (size_t)(at - t->bytes) - lf;
    assert_true(t->size - lf + lt < sizeof t->bytes);
    memmove(at + lt, at + lf, tail + 1);
    memcpy(at, to, lt);
    t->size = (uint32_t)(t->size - lf + lt);
}

static bool apply(vanguard_state *s, uint32_t file, const text *t, cradle_data_refusal *r) {
    memset(r, 0, sizeof *r);
    return vanguard_contract()->data(s, file, (const uint8_t *)t->bytes, t->size, r);
}

static void apply_ok(vanguard_state *s, uint32_t file, const text *t) {
    cradle_data_refusal r;
    bool ok = apply(s, file, t, &r);
    if (!ok) fail_msg("refused: %u: %s", (unsigned)r.line, r.message);
    assert_true(ok);
}

/* The refusal of t for file: its line and message (NULL: any; ending in
 * '*': starting so), and the state untouched. */
static void refused(uint32_t file, const text *t, uint32_t line, const char *message) {
    vanguard_state *s = state_alloc(), *before = state_alloc();
    assert_int_equal(vanguard_contract()->init(s, 1, 2), 0);
    memcpy(before, s, sizeof *s);
    cradle_data_refusal r;
    assert_false(apply(s, file, t, &r));
    assert_true(memchr(r.message, '\0', sizeof r.message) != NULL);
    assert_true(r.message[0] != '\0');
    size_t n = message ? strlen(message) : 0;
    if (n && message[n - 1] == '*') {
        if (strncmp(r.message, message, n - 1) != 0) fail_msg("\"%s\" is not \"%s\"", r.message, message);
    } else if (message) {
        assert_string_equal(r.message, message);
    }
    assert_int_equal(r.line, line);
    assert_memory_equal(s, before, sizeof *s);
    free(s);
    free(before);
}

static void test_data_contract(void **unused) {
    (void)unused;
    const cradle_game_contract *c = vanguard_contract();
    assert_int_equal(c->abi_minor, CRADLE_ABI_MINOR);
    assert_true(c->abi_minor >= CRADLE_ABI_MINOR_DATA);
    assert_int_equal(c->data_file_count, 2);
    assert_string_equal(c->data_files[VG_FILE_WAVES].name, "vanguard/waves.json");
    assert_string_equal(c->data_files[VG_FILE_TUNING].name, "vanguard/tuning.json");
    assert_int_equal(c->data_files[VG_FILE_WAVES].max_bytes, VG_WAVES_MAX_BYTES);
    assert_int_equal(c->data_files[VG_FILE_TUNING].max_bytes, VG_TUNING_MAX_BYTES);
    assert_non_null(c->data);
    char message[256];
    cradle_contract_limits limits = cradle_contract_host_limits();
    assert_int_equal(cradle_contract_check(c, &limits, message, sizeof message), 0);
    /* Reports name the data's bytes. */
    assert_int_equal(cradle_layout_check(c->layout, c->layout_count, c->state_size, message, sizeof message), 0);
    char name[128];
    size_t at = offsetof(vanguard_state, data) + offsetof(vg_data, waves) + 2 * sizeof(vg_wave_def) +
                offsetof(vg_wave_def, drifters);
    (void)cradle_layout_name(c->layout, c->layout_count, at, name, sizeof name);
    assert_true(strncmp(name, "data.waves[2].drifters (", 24) == 0);
    at = offsetof(vanguard_state, data) + offsetof(vg_data, effects) + VG_FX_NEAR_MISS * sizeof(vg_effect_def) +
         offsetof(vg_effect_def, shake);
    (void)cradle_layout_name(c->layout, c->layout_count, at, name, sizeof name);
    assert_true(strncmp(name, "data.effects[6].shake (", 23) == 0);
    at = offsetof(vanguard_state, data) + offsetof(vg_data, enemies) + VG_BOSS * sizeof(vg_enemy_def) +
         offsetof(vg_enemy_def, hp);
    (void)cradle_layout_name(c->layout, c->layout_count, at, name, sizeof name);
    assert_true(strncmp(name, "data.enemies[3].hp (", 20) == 0);
}

/* The shipped files hold exactly the built-in values. */
static void test_data_shipped_files_are_the_defaults(void **unused) {
    (void)unused;
    vanguard_state *s = state_alloc();
    assert_int_equal(vanguard_contract()->init(s, 5, 3), 0);
    assert_memory_equal(&s->data, &vanguard_data_default, sizeof s->data);
    /* A non-default state first, so both files must write every field. */
    vanguard_state *before = state_alloc();
    memcpy(before, s, sizeof *s);
    memset(&s->data, 0x5A, sizeof s->data);
    text waves, tuning;
    shipped("waves.json", &waves);
    shipped("tuning.json", &tuning);
    apply_ok(s, VG_FILE_WAVES, &waves);
    apply_ok(s, VG_FILE_TUNING, &tuning);
    assert_memory_equal(&s->data, &vanguard_data_default, sizeof s->data);
    assert_memory_equal(s, before, sizeof *s);
    /* Some values spelled out, so a wrong default cannot hide behind a
     * file that repeats it. */
    const vg_data *d = &s->data;
    assert_int_equal(d->wave_count, 10);
    assert_int_equal(d->waves[3].drifters, 10);
    assert_int_equal(d->waves[3].chasers, 4);
    assert_int_equal(d->waves[3].shooters, 3);
    assert_int_equal(d->first_wave_steps, 60);
    assert_int_equal(d->break_steps, VG_WAVE_BREAK_STEPS);
    assert_int_equal(d->ship_speed, 3 * VG_FP);
    assert_int_equal(d->drifter_speed, 320);
    assert_int_equal(d->drifter_speed_per_wave, 16);
    assert_int_equal(d->fire_cooldown, 9);
    assert_int_equal(d->effects[VG_FX_NEAR_MISS].shake, 384);
    assert_int_equal(d->enemies[VG_SHOOTER].half_w, 10 * VG_FP);
    free(s);
    free(before);
}

static void test_data_refusals(void **unused) {
    (void)unused;
    text t;
    /* Not a JSON document: cut short, not UTF-8, not JSON, empty. */
    shipped("waves.json", &t);
    t.size = (uint32_t)(strstr(t.bytes, "\"waves\"") - t.bytes + 10); /* after the [ */
    refused(VG_FILE_WAVES, &t, 7, NULL);
    memcpy(t.bytes, "{\"waves\": \"\xff\"}", 15);
    t.size = 15;
    refused(VG_FILE_WAVES, &t, 1, NULL);
    memcpy(t.bytes, "\n\nwaves: 3\n", 11);
    t.size = 11;
    refused(VG_FILE_WAVES, &t, 3, NULL);
    t.size = 0;
    refused(VG_FILE_TUNING, &t, 1, NULL);
    memcpy(t.bytes, "[]", 2);
    t.size = 2;
    refused(VG_FILE_WAVES, &t, 1, "\"waves.json\" must be an object, got an array");

    /* Fields: unknown, missing, out of range, of the wrong type. */
    shipped("waves.json", &t);
    edit(&t, "\"boss_every\"", "\"boss_evry\"", 0);
    refused(VG_FILE_WAVES, &t, 5, "unknown field \"boss_evry\"");
    shipped("waves.json", &t);
    edit(&t, ", \"formation\": \"scatter\"", "", 2);
    refused(VG_FILE_WAVES, &t, 10, "missing field \"formation\" in waves[2]");
    shipped("waves.json", &t);
    edit(&t, "\"drifters\": 8", "\"drifters\": 300", 1);
    refused(VG_FILE_WAVES, &t, 9, "\"waves[1].drifters\" must be an integer 0..255, got 300");
    shipped("waves.json", &t);
    edit(&t, "\"chasers\": 3", "\"chasers\": -1", 0);
    refused(VG_FILE_WAVES, &t, 9, "\"waves[1].chasers\" must be an integer 0..255, got -1");
    shipped("waves.json", &t);
    edit(&t, "3600", "\"3600\"", 0);
    refused(VG_FILE_WAVES, &t, 4, "\"timeout_steps\" must be an integer 1..216000, got \"3600\"");
    shipped("waves.json", &t);
    edit(&t, "\"scatter\"", "\"circle\"", 4);
    refused(VG_FILE_WAVES, &t, 12,
            "\"waves[4].formation\" must be one of scatter, column, lanes, got \"circle\"");
    shipped("waves.json", &t);
    edit(&t, "\"min_steps\": 8", "\"min_steps\": 50", 0);
    refused(VG_FILE_WAVES, &t, 6, "\"spawn_gap.min_steps\" must be an integer 1..40, got 50");
    shipped("waves.json", &t);
    edit(&t, "\"less_per_wave\": 4", "\"less_per_wave\": 4, \"max\": 9", 0);
    refused(VG_FILE_WAVES, &t, 6, "unknown field \"max\" in spawn_gap");
    shipped("waves.json", &t);
    edit(&t, "\"break_steps\": 150", "\"break_steps\": 1.5", 0);
    refused(VG_FILE_WAVES, &t, 3, "\"break_steps\" must be an integer 1..36000, got 1.5");

    /* The wave table's bounds: none, too many, far too many. */
    shipped("waves.json", &t);
    char *open = strchr(strstr(t.bytes, "\"waves\""), '[');
    size_t head = (size_t)(open - t.bytes) + 1;
    memcpy(t.bytes + head, "]}", 3);
    t.size = (uint32_t)head + 2;
    refused(VG_FILE_WAVES, &t, 7, "\"waves\" must be an array of 1..64 elements, got 0");
    for (uint32_t waves = 65; waves <= 200; waves += 135) {
        size_t at = head;
        for (uint32_t i = 0; i < waves; i++)
            at += (size_t)snprintf(t.bytes + at, sizeof t.bytes - at, "%s\n{\"drifters\": 1, \"chasers\": 0, "
                                   "\"shooters\": 0, \"formation\": \"lanes\"}", i ? "," : "");
        at += (size_t)snprintf(t.bytes + at, sizeof t.bytes - at, "]}");
        t.size = (uint32_t)at;
        refused(VG_FILE_WAVES, &t, waves == 65 ? 7 : 0,
                waves == 65 ? "\"waves\" must be an array of 1..64 elements, got 65"
                            : "more than 1024 values (keys included) in the document; a wave table holds at "
                              "most 64 waves");
    }
    /* 64 of them are fine. */
    {
        size_t at = head;
        for (uint32_t i = 0; i < VG_MAX_WAVES; i++)
            at += (size_t)snprintf(t.bytes + at, sizeof t.bytes - at, "%s{\"drifters\": %u, \"chasers\": 0, "
                                   "\"shooters\": 0, \"formation\": \"lanes\"}", i ? "," : "", (unsigned)i);
        at += (size_t)snprintf(t.bytes + at, sizeof t.bytes - at, "]}");
        t.size = (uint32_t)at;
        vanguard_state *s = state_alloc();
        assert_int_equal(vanguard_contract()->init(s, 1, 1), 0);
        apply_ok(s, VG_FILE_WAVES, &t);
        assert_int_equal(s->data.wave_count, VG_MAX_WAVES);
        assert_int_equal(s->data.waves[63].drifters, 63);
        assert_int_equal(s->data.waves[63].formation, VG_FORMATION_LANES);
        free(s);
    }

    /* tuning.json: pixels in sixteenths, percentages that fit, each
     * enemy's and effect's own fields. */
    shipped("tuning.json", &t);
    edit(&t, "\"ship_speed\": 3", "\"ship_speed\": 0.1", 0);
    refused(VG_FILE_TUNING, &t, 2, "\"ship_speed\" must be a multiple of 0.0625 px (1/16), got 0.1");
    shipped("tuning.json", &t);
    edit(&t, "\"ship_speed\": 3", "\"ship_speed\": 0.03125", 0);
    refused(VG_FILE_TUNING, &t, 2, "\"ship_speed\" takes at most 4 decimals, got 0.03125");
    shipped("tuning.json", &t);
    edit(&t, "\"ship_speed\": 3", "\"ship_speed\": 0", 0);
    refused(VG_FILE_TUNING, &t, 2, "\"ship_speed\" must be 0.0625..32.0000, got 0");
    shipped("tuning.json", &t);
    edit(&t, "\"life_pickup_percent\": 2", "\"life_pickup_percent\": 9", 0);
    refused(VG_FILE_TUNING, &t, 11, "\"life_pickup_percent\" must be an integer 0..8, got 9");
    shipped("tuning.json", &t);
    edit(&t, "\"half_w\": 30", "\"half_w\": 33", 0);
    refused(VG_FILE_TUNING, &t, 18, "\"enemies.boss.half_w\" must be an integer 1..32, got 33");
    shipped("tuning.json", &t);
    edit(&t, "\"speed_waves\": 15, ", "", 0);
    refused(VG_FILE_TUNING, &t, 14, "missing field \"speed_waves\" in enemies.drifter");
    shipped("tuning.json", &t);
    edit(&t, "\"chaser\": {\"hp\": 2,", "\"chaser\": {\"hp\": 2, \"speed\": 1,", 0);
    refused(VG_FILE_TUNING, &t, 16, "unknown field \"speed\" in enemies.chaser");
    shipped("tuning.json", &t);
    edit(&t, "\"shake\": 1.5", "\"shake\": true", 0);
    refused(VG_FILE_TUNING, &t, 28, "\"effects.near_miss.shake\" must be a number 0.0000..64.0000, got true");
    shipped("tuning.json", &t);
    edit(&t, "\"game_over\"", "\"gameover\"", 0);
    refused(VG_FILE_TUNING, &t, 30, "unknown field \"gameover\" in effects");

    /* A file the game does not have; a file over its limit. */
    shipped("tuning.json", &t);
    refused(VG_DATA_FILES, &t, 0, "vanguard has no data file 3");
    memset(t.bytes, ' ', VG_TUNING_MAX_BYTES + 1);
    t.size = VG_TUNING_MAX_BYTES + 1;
    refused(VG_FILE_TUNING, &t, 0, "16385 bytes, more than the 16384 this file may have");
}

/* The enemies wave 1 brings once it has started, from the state. */
static uint32_t first_wave_enemies(game *g, uint32_t *drifters) {
    for (int i = 0; i < 200 && g->s->wave == 0; i++) game_step(g, 1, NULL);
    assert_int_equal(g->s->wave, 1);
    const cradle_event *e = need_event(g, VG_EV_WAVE_STARTED);
    *drifters = g->s->pending[VG_DRIFTER];
    return (uint32_t)e->b;
}

static void test_data_changes_the_game(void **unused) {
    (void)unused;
    text waves;
    shipped("waves.json", &waves);
    edit(&waves, "{\"drifters\": 8,", "{\"drifters\": 3,", 0);
    edit(&waves, "\"first_wave_steps\": 60", "\"first_wave_steps\": 10", 0);

    game a, b;
    game_open(&a, 4, 1);
    game_open(&b, 4, 1);
    apply_ok(b.s, VG_FILE_WAVES, &waves);
    uint32_t da, db;
    assert_int_equal(first_wave_enemies(&a, &da), 8);
    assert_int_equal(da, 8);
    assert_int_equal(a.step, 60);
    assert_int_equal(first_wave_enemies(&b, &db), 3);
    assert_int_equal(db, 3);
    assert_int_equal(b.step, 10); /* the first wave came sooner */
    /* Three drifters come, and no more. */
    uint32_t most = 0;
    for (int i = 0; i < 200; i++) {
        game_step(&b, 1, NULL);
        uint32_t n = cradle_ecs_count(vg_world(b.s), VG_C_ENEMY);
        if (n > most) most = n;
    }
    assert_int_equal(most, 3);
    assert_int_equal(b.s->wave, 1);

    /* Tuning: a faster ship, a slower cannon. */
    text tuning;
    shipped("tuning.json", &tuning);
    edit(&tuning, "\"ship_speed\": 3", "\"ship_speed\": 4.5", 0);
    edit(&tuning, "\"fire_cooldown_steps\": 9", "\"fire_cooldown_steps\": 20", 0);
    apply_ok(b.s, VG_FILE_TUNING, &tuning);
    b.s->players[0].cooldown = 0;
    vg_motion before = ship_motion(&b, 0);
    uint32_t down_fire[VG_MAX_PLAYERS] = {VANGUARD_DOWN | VANGUARD_FIRE};
    uint32_t shots = 0;
    for (int i = 0; i < 40; i++) {
        b.s->players[0].invulnerable = 10;
        game_step(&b, 1, down_fire);
        if (find_event(&b, VG_EV_FIRED)) shots++;
        if (i == 0) assert_int_equal(ship_motion(&b, 0).y - before.y, 1152); /* 4.5 px */
    }
    assert_int_equal(shots, 2); /* steps 0 and 20 */
    game_close(&a);
    game_close(&b);
}

/* Formations place the homes of chasers and shooters. */
static void test_data_formations(void **unused) {
    (void)unused;
    static const char *const names[] = {"\"column\"", "\"lanes\""};
    for (int f = 0; f < 2; f++) {
        text waves;
        shipped("waves.json", &waves);
        edit(&waves, "{\"drifters\": 8, \"chasers\": 0, \"shooters\": 0, \"formation\": \"scatter\"}",
             "{\"drifters\": 0, \"chasers\": 6, \"shooters\": 0, \"formation\": \"scatter\"}", 0);
        edit(&waves, "\"scatter\"", names[f], 0);
        game g;
        game_open(&g, 9, 1);
        apply_ok(g.s, VG_FILE_WAVES, &waves);
        uint32_t seen = 0;
        for (int i = 0; i < 400; i++) {
            game_step(&g, 1, NULL);
            g.s->players[0].invulnerable = 10;
            const cradle_ecs *w = vg_world_const(g.s);
            const cradle_entity *ids = cradle_ecs_entities(w, VG_C_ENEMY);
            const vg_enemy *en = cradle_ecs_data_const(w, VG_C_ENEMY);
            for (uint32_t k = 0; k < cradle_ecs_count(w, VG_C_ENEMY); k++) {
                assert_int_equal(en[k].type, VG_CHASER);
                if (f == 0) assert_int_equal(en[k].home_x, 500 * VG_FP);
                /* Lanes: home at the height it came in at (checked on its
                 * first step, before it moved much). */
                const vg_motion *m = cradle_ecs_get_const(w, ids[k], VG_C_MOTION);
                if (f == 1 && m->x > (VG_VIEW_W + 20) * VG_FP) {
                    int32_t dy = m->y - en[k].home_y;
                    assert_true(dy >= -2 * VG_FP && dy <= 2 * VG_FP);
                    seen++;
                }
            }
        }
        if (f == 1) assert_true(seen >= 6);
        game_close(&g);
    }
}

/* A restart after game over keeps the data. */
static void test_data_survives_restart(void **unused) {
    (void)unused;
    text waves, tuning;
    shipped("waves.json", &waves);
    edit(&waves, "{\"drifters\": 8,", "{\"drifters\": 3,", 0);
    shipped("tuning.json", &tuning);
    edit(&tuning, "\"respawn_steps\": 90", "\"respawn_steps\": 45", 0);
    game g;
    game_open(&g, 11, 1);
    apply_ok(g.s, VG_FILE_WAVES, &waves);
    apply_ok(g.s, VG_FILE_TUNING, &tuning);
    vg_data data = g.s->data;
    lose_all_lives(&g, 1);
    assert_int_equal(g.s->game_over, 1);
    game_idle(&g, 1, 3);
    uint32_t restart[VG_MAX_PLAYERS] = {VANGUARD_RESTART};
    game_step(&g, 1, restart);
    assert_non_null(find_event(&g, VG_EV_RESTART));
    assert_int_equal(g.s->tick, 0);
    assert_memory_equal(&g.s->data, &data, sizeof data);
    uint32_t drifters;
    assert_int_equal(first_wave_enemies(&g, &drifters), 3);
    game_close(&g);
}

/* 4 bots for `steps` steps: each step's output appended to out; the shipped
 * files applied before step apply_at (never when past steps). */
static size_t bots_run(uint64_t seed, uint64_t steps, uint64_t apply_at, uint8_t *out) {
    text waves, tuning;
    shipped("waves.json", &waves);
    shipped("tuning.json", &tuning);
    game g;
    game_open(&g, seed, 4);
    size_t at = 0;
    for (uint64_t i = 0; i < steps; i++) {
        if (i == apply_at) {
            apply_ok(g.s, VG_FILE_WAVES, &waves);
            apply_ok(g.s, VG_FILE_TUNING, &tuning);
        }
        uint32_t actions[VG_MAX_PLAYERS] = {0};
        for (uint32_t slot = 0; slot < 4; slot++) actions[slot] = vanguard_bot_actions(g.s, slot, i);
        game_step(&g, 0xF, actions);
        size_t n = g.c->output(g.s, i, out + at, CRADLE_GAME_OUTPUT_MAX);
        assert_int_equal(n, OUT_BYTES);
        at += n;
    }
    game_close(&g);
    return at;
}

/* The shipped files change no output byte, applied at the start or in the
 * middle of a game. */
static void test_data_shipped_files_change_nothing(void **unused) {
    (void)unused;
    enum { STEPS = 4000 };
    uint8_t *a = malloc(STEPS * OUT_BYTES), *b = malloc(STEPS * OUT_BYTES), *c = malloc(STEPS * OUT_BYTES);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    size_t la = bots_run(31, STEPS, UINT64_MAX, a);
    size_t lb = bots_run(31, STEPS, 0, b);
    size_t lc = bots_run(31, STEPS, 1777, c);
    assert_true(cradle_golden_compare(a, la, b, lb).equal);
    assert_true(cradle_golden_compare(a, la, c, lc).equal);
    free(a);
    free(b);
    free(c);
}

/* react() shows the effects tuning.json asks for. */
static void test_data_effects(void **unused) {
    (void)unused;
    text tuning;
    shipped("tuning.json", &tuning);
    edit(&tuning, "\"near_miss\": {\"particles\": 6, \"shake\": 1.5}",
         "\"near_miss\": {\"particles\": 0, \"shake\": 0}", 0);
    edit(&tuning, "\"fired\": {\"particles\": 2, \"shake\": 0}", "\"fired\": {\"particles\": 2, \"shake\": 0.5}", 0);
    game g;
    game_open(&g, 3, 1);
    apply_ok(g.s, VG_FILE_TUNING, &tuning);
    recorder r = {0};
    cradle_fx fx = {.context = &r, .burst = r_burst, .shake = r_shake, .sound = r_sound};
    cradle_event near = {.kind = VG_EV_NEAR_MISS, .player = 0};
    g.c->react(g.s, &near, 1, &fx);
    assert_int_equal(r.bursts, 0);
    assert_int_equal(r.shakes, 0);
    assert_int_equal(r.sounds, 1);
    cradle_event fired = {.kind = VG_EV_FIRED, .player = 0};
    g.c->react(g.s, &fired, 1, &fx);
    assert_int_equal(r.bursts, 1);
    assert_int_equal(r.shakes, 1);
    game_close(&g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contract),
        cmocka_unit_test(test_input_pack),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_relocated_state_continues),
        cmocka_unit_test(test_missile_kills_enemy),
        cmocka_unit_test(test_shooter_takes_several_hits),
        cmocka_unit_test(test_missile_hits_at_box_edges),
        cmocka_unit_test(test_collision_costs_a_life),
        cmocka_unit_test(test_game_over_after_last_life),
        cmocka_unit_test(test_game_over_needs_every_player_out),
        cmocka_unit_test(test_restart_resets),
        cmocka_unit_test(test_near_miss),
        cmocka_unit_test(test_pickups),
        cmocka_unit_test(test_join_and_leave),
        cmocka_unit_test(test_waves_arrive_and_escalate),
        cmocka_unit_test(test_boss_wave),
        cmocka_unit_test(test_enemy_fsm_cycle),
        cmocka_unit_test(test_long_run_eight_bots),
        cmocka_unit_test(test_full_world_refuses_spawns),
        cmocka_unit_test(test_render_interpolates),
        cmocka_unit_test(test_react),
        cmocka_unit_test(test_data_contract),
        cmocka_unit_test(test_data_shipped_files_are_the_defaults),
        cmocka_unit_test(test_data_refusals),
        cmocka_unit_test(test_data_changes_the_game),
        cmocka_unit_test(test_data_formations),
        cmocka_unit_test(test_data_survives_restart),
        cmocka_unit_test(test_data_shipped_files_change_nothing),
        cmocka_unit_test(test_data_effects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
