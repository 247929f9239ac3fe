/*
 * vanguard: a co-op shoot-'em-up for 1 to 8 players, Cradle's sample game.
 *
 * Ships fly on the left of a 640x360 view and fire right; enemies come in
 * waves from the right (drifters, chasers, shooters, and a boss every fifth
 * wave), think with a finite state machine once per source frame
 * (vanguard_ai.c), shoot back, explode and sometimes drop pick-ups (rapid
 * fire, extra life). Each player has three lives; when every player in the
 * game is out, the game is over until someone presses restart.
 *
 * Everything lives in the ECS world and is collided through the grid, both
 * inside the one relocatable state block (vanguard_internal.h). The step uses
 * integer fixed point only and draws randomness from the seeded cradle_rng in
 * the state, so the same seed and inputs give the same game everywhere.
 *
 * One step, in order:
 *   1. input: presence (join, leave, come back) and actions per slot; a
 *      restart pressed while the game is over re-initialises and ends the step
 *   2. ships: move, fire, respawn, timers
 *   3. enemy AI, on the first step of each source frame (phase 0)
 *   4. motion: every entity moves by its velocity; those far outside the view
 *      are removed; lifetimes run down
 *   5. collisions: ships and missiles query the grid of enemies, shots and
 *      pick-ups, in a fixed order
 *   6. near misses, game over, waves
 *
 * Restart (the pulse bit of vanguard_input.h): on a step where the game is
 * over and a present player's restart bit goes from 0 to 1, the state is set
 * up again exactly as init() did with the same seed and player count (so the
 * new game replays the same waves for the same inputs), keeping only the
 * restart and reload counters and the data files' values, and the step does
 * nothing else.
 *
 * Data (game_abi.h, minor 4): the wave table, the spawn timing and the
 * tuning are not constants but s->data, which init() fills with the
 * built-in values and the host replaces from vanguard/waves.json and
 * vanguard/tuning.json through data() (vanguard_data.c). The data is part of
 * the state block (hashed with it) but not of the gameplay checksum or the
 * output, which show its effects.
 *
 * output() per step, 77 bytes, little-endian:
 *   u64 step index
 *   u64 gameplay checksum (vanguard_checksum: players, the wave machine, the
 *       rng and every live entity's components in ECS dense order)
 *   u32 wave, u32 tick (steps since the game started or restarted),
 *   u8 game over (0/1), u32 live entities,
 *   then for each of the 8 slots: u8 present (joined and connected),
 *       u8 lives, u32 score
 */
#include <assert.h>
#include <string.h>

#include "cradle/input.h"
#include "cradle_build_id.h"
#include "vanguard_input.h"
#include "vanguard_internal.h"

#define VG_OUTPUT_BYTES 77u
#define VG_NO_PLAYER 0xFFu

/* Where an enemy's hit points and points stop growing: the formulas grow
 * with the wave, and data may make waves come fast. */
#define VG_STAT_MAX 1000000000

static int32_t vg_stat(int64_t v) { return v > VG_STAT_MAX ? VG_STAT_MAX : (int32_t)v; }

/* How many times the wave table has gone round before the current wave
 * (0 during the first pass): what makes repeated waves bigger. */
static uint32_t vg_cycle(const vanguard_state *s) {
    uint32_t n = s->data.wave_count ? s->data.wave_count : 1u; /* data() keeps it >= 1 */
    return s->wave > 0 ? (s->wave - 1) / n : 0;
}

/* The wave table's entry for the current wave (>= 1). */
static const vg_wave_def *vg_wave_def_of(const vanguard_state *s) {
    uint32_t n = s->data.wave_count ? s->data.wave_count : 1u;
    return &s->data.waves[(s->wave - 1) % n];
}

/* ---- small helpers ---------------------------------------------------------- */

void vanguard_emit(const cradle_event_sink *sink, uint16_t kind, uint8_t player, int32_t x,
                   int32_t y, int32_t a, int32_t b) {
    if (!sink || !sink->emit) return;
    cradle_event ev = {
        .kind = kind, .player = player, .flags = 0, .x = x / VG_FP, .y = y / VG_FP, .a = a, .b = b};
    (void)sink->emit(sink->context, &ev);
}

uint32_t vanguard_isqrt(uint64_t v) {
    uint64_t r = 0, bit = 1ull << 62;
    while (bit > v) bit >>= 2;
    /* Digit by digit, with selects instead of a branch: whether each digit
     * is 1 is data no predictor learns, and a miss costs more than the
     * arithmetic. */
    for (; bit; bit >>= 2) {
        uint64_t t = r + bit;
        uint64_t take = (uint64_t)0 - (uint64_t)(v >= t); /* all ones or zero */
        v -= t & take;
        r = (r >> 1) + (bit & take);
    }
    return (uint32_t)r;
}

static cradle_ecs_config vg_ecs_config(void) {
    cradle_ecs_config c = {.max_entities = VG_MAX_ENTITIES, .component_count = VG_COMPONENT_COUNT};
    c.components[VG_C_MOTION] = CRADLE_ECS_COMPONENT(vg_motion, 0);
    c.components[VG_C_BODY] = CRADLE_ECS_COMPONENT(vg_body, 0);
    c.components[VG_C_TAG] = CRADLE_ECS_COMPONENT(vg_tag, 0);
    c.components[VG_C_ENEMY] = CRADLE_ECS_COMPONENT(vg_enemy, 0);
    c.components[VG_C_TTL] = CRADLE_ECS_COMPONENT(vg_ttl, 0);
    return c;
}

static cradle_grid_config vg_grid_config(void) {
    return (cradle_grid_config){.x = VG_GRID_X,
                                .y = VG_GRID_Y,
                                .width = VG_GRID_W,
                                .height = VG_GRID_H,
                                .cell_size = VG_GRID_CELL,
                                .max_objects = VG_GRID_OBJECTS,
                                .max_entries = VG_GRID_ENTRIES};
}

/* Creates an entity with motion and tag (and a body when half_w > 0).
 * Returns CRADLE_ENTITY_NONE, counting the refusal, when the world is full. */
static cradle_entity vg_spawn(vanguard_state *s, vg_motion motion, vg_tag tag, int32_t half_w,
                              int32_t half_h, uint32_t layer, uint32_t mask) {
    cradle_ecs *w = vg_world(s);
    cradle_entity e = cradle_ecs_create(w);
    if (e == CRADLE_ENTITY_NONE) {
        s->refused_spawns++;
        return CRADLE_ENTITY_NONE;
    }
    /* Every component type has capacity max_entities, so a live entity can
     * always take each of them once. */
    int rc = cradle_ecs_add(w, e, VG_C_MOTION, &motion);
    rc |= cradle_ecs_add(w, e, VG_C_TAG, &tag);
    if (half_w > 0) {
        vg_body body = {.half_w = half_w, .half_h = half_h, .layer = layer, .mask = mask};
        rc |= cradle_ecs_add(w, e, VG_C_BODY, &body);
    }
    assert(rc == 0);
    (void)rc;
    return e;
}

static void vg_add_ttl(vanguard_state *s, cradle_entity e, int32_t steps) {
    vg_ttl ttl = {.steps = steps};
    int rc = cradle_ecs_add(vg_world(s), e, VG_C_TTL, &ttl);
    assert(rc == 0);
    (void)rc;
}

static cradle_entity vg_spawn_explosion(vanguard_state *s, const vg_motion *at, uint8_t size) {
    vg_motion m = {.x = at->x, .y = at->y, .vx = at->vx / 4, .vy = at->vy / 4};
    vg_tag tag = {.kind = VG_K_EXPLOSION, .sub = size, .owner = VG_NO_PLAYER};
    cradle_entity e = vg_spawn(s, m, tag, 0, 0, 0, 0);
    if (e != CRADLE_ENTITY_NONE) vg_add_ttl(s, e, VG_EXPLOSION_STEPS + 8 * (int32_t)size);
    return e;
}

static cradle_entity vg_spawn_ship(vanguard_state *s, uint32_t slot) {
    uint32_t n = s->player_count > slot ? s->player_count : slot + 1;
    vg_motion m = {.x = 64 * VG_FP,
                   .y = (int32_t)((slot + 1) * VG_VIEW_H / (n + 1)) * VG_FP,
                   .vx = 0,
                   .vy = 0};
    vg_tag tag = {.kind = VG_K_SHIP, .owner = (uint8_t)slot};
    return vg_spawn(s, m, tag, 9 * VG_FP, 5 * VG_FP, VG_L_SHIP,
                    VG_L_ENEMY | VG_L_ENEMY_SHOT | VG_L_PICKUP);
}

cradle_entity vanguard_spawn_enemy(vanguard_state *s, uint8_t type, int32_t x, int32_t y,
                                   int32_t hx, int32_t hy) {
    assert(type < VG_ENEMY_TYPES);
    const vg_data *d = &s->data;
    const vg_enemy_def *def = &d->enemies[type];
    uint32_t cycle = vg_cycle(s);
    vg_motion m = {.x = x, .y = y, .vx = 0, .vy = 0};
    vg_tag tag = {.kind = VG_K_ENEMY, .sub = type, .owner = VG_NO_PLAYER};
    cradle_entity e = vg_spawn(s, m, tag, def->half_w, def->half_h, VG_L_ENEMY,
                               VG_L_SHIP | VG_L_PLAYER_SHOT);
    if (e == CRADLE_ENTITY_NONE) return e;
    int64_t hp = (int64_t)def->hp + cycle;
    if (type == VG_BOSS) {
        uint32_t bosses = d->boss_every ? s->wave / d->boss_every : 0u;
        hp += (int64_t)d->boss_hp_per_boss_wave * bosses +
              (int64_t)d->boss_hp_per_player * s->player_count;
    }
    vg_enemy enemy = {
        .type = type,
        .state = type == VG_DRIFTER ? VG_PATROL : VG_RETURN,
        .target = VG_NO_PLAYER,
        .burst = 0,
        .hp = vg_stat(hp),
        .timer = 0,
        .cooldown = 20 + (int32_t)cradle_rng_below(&s->rng, 40),
        .home_x = hx,
        .home_y = hy,
        .phase = (int32_t)cradle_rng_below(&s->rng, 64),
        .points = vg_stat((int64_t)def->points * (1 + (int64_t)cycle)),
    };
    int rc = cradle_ecs_add(vg_world(s), e, VG_C_ENEMY, &enemy);
    assert(rc == 0);
    (void)rc;
    if (type == VG_DRIFTER) {
        vg_motion *mm = CRADLE_ECS_GET(vg_world(s), e, VG_C_MOTION, vg_motion);
        uint32_t cap = (uint32_t)d->drifter_speed_waves;
        int32_t w = (int32_t)(s->wave < cap ? s->wave : cap);
        mm->vx = -(d->drifter_speed + d->drifter_speed_per_wave * w);
    }
    return e;
}

cradle_entity vanguard_spawn_pickup(vanguard_state *s, uint8_t type, int32_t x, int32_t y) {
    vg_motion m = {.x = x, .y = y, .vx = -VG_FP / 2, .vy = 0};
    vg_tag tag = {.kind = VG_K_PICKUP, .sub = type, .owner = VG_NO_PLAYER};
    cradle_entity e = vg_spawn(s, m, tag, 7 * VG_FP, 7 * VG_FP, VG_L_PICKUP, VG_L_SHIP);
    if (e != CRADLE_ENTITY_NONE) vg_add_ttl(s, e, s->data.pickup_steps);
    return e;
}

cradle_entity vanguard_spawn_enemy_shot(vanguard_state *s, int32_t x, int32_t y, int32_t vx,
                                        int32_t vy) {
    vg_motion m = {.x = x, .y = y, .vx = vx, .vy = vy};
    vg_tag tag = {.kind = VG_K_ENEMY_SHOT, .owner = VG_NO_PLAYER, .mark = 0};
    return vg_spawn(s, m, tag, 3 * VG_FP, 3 * VG_FP, VG_L_ENEMY_SHOT, VG_L_SHIP);
}

static void vg_spawn_player_shot(vanguard_state *s, uint32_t slot, int32_t x, int32_t y) {
    vg_motion m = {.x = x, .y = y, .vx = s->data.shot_speed, .vy = 0};
    vg_tag tag = {.kind = VG_K_PLAYER_SHOT, .owner = (uint8_t)slot};
    (void)vg_spawn(s, m, tag, 6 * VG_FP, 2 * VG_FP, VG_L_PLAYER_SHOT, VG_L_ENEMY);
}

/* ---- set-up ------------------------------------------------------------------ */

/* Lays out a new game in s (any contents) with `data` (which must not lie in
 * s): what init() and a restart share. */
static int vg_setup(vanguard_state *s, uint64_t seed, uint32_t player_count, const vg_data *data) {
    memset(s, 0, sizeof *s);
    s->data = *data;
    s->magic = VG_STATE_MAGIC;
    s->player_count = player_count;
    s->seed = seed;
    cradle_rng_seed(&s->rng, seed, 0x76616e6775617264ull); /* "vanguard" */
    cradle_ecs_config ec = vg_ecs_config();
    cradle_grid_config gc = vg_grid_config();
    /* The block sizes are compile-time constants; they must match what the
     * ECS and grid compute at run time, or the layout is wrong. */
    if (cradle_ecs_bytes(&ec) != VG_ECS_BYTES || cradle_grid_bytes(&gc) != VG_GRID_BYTES)
        return CRADLE_EINVAL;
    if (!cradle_ecs_init(s->world, sizeof s->world, &ec)) return CRADLE_EINVAL;
    if (!cradle_grid_init(s->grid, sizeof s->grid, &gc)) return CRADLE_EINVAL;
    for (uint32_t slot = 0; slot < player_count; slot++) {
        vg_player *p = &s->players[slot];
        p->joined = 1;
        p->present = 1;
        p->lives = VG_START_LIVES;
        p->ship = vg_spawn_ship(s, slot);
    }
    s->break_steps = data->first_wave_steps;
    return 0;
}

static int vanguard_init(void *state, uint64_t seed, uint32_t player_count) {
    if (player_count < 1 || player_count > VG_MAX_PLAYERS) return CRADLE_EINVAL;
    return vg_setup(state, seed, player_count, &vanguard_data_default);
}

/* ---- players ------------------------------------------------------------------ */

static void vg_player_hit(vanguard_state *s, uint32_t slot, const cradle_event_sink *events) {
    vg_player *p = &s->players[slot];
    cradle_ecs *w = vg_world(s);
    const vg_motion *m = CRADLE_ECS_GET(w, p->ship, VG_C_MOTION, vg_motion);
    assert(m);
    vg_motion at = *m;
    (void)cradle_ecs_destroy(w, p->ship);
    p->ship = CRADLE_ENTITY_NONE;
    (void)vg_spawn_explosion(s, &at, 2);
    p->lives = (uint8_t)(p->lives - 1);
    p->rapid = 0;
    vanguard_emit(events, VG_EV_PLAYER_HIT, (uint8_t)slot, at.x, at.y, p->lives, 0);
    if (p->lives == 0) {
        vanguard_emit(events, VG_EV_PLAYER_DIED, (uint8_t)slot, at.x, at.y, (int32_t)p->score, 0);
    } else {
        p->respawn = s->data.respawn_steps;
    }
}

static void vg_ship_update(vanguard_state *s, uint32_t slot, uint32_t actions,
                           const cradle_event_sink *events) {
    vg_player *p = &s->players[slot];
    if (p->invulnerable > 0) p->invulnerable--;
    if (p->rapid > 0) p->rapid--;
    if (p->cooldown > 0) p->cooldown--;
    if (p->ship == CRADLE_ENTITY_NONE) {
        if (p->lives == 0 || !p->present) return;
        if (p->respawn > 0) p->respawn--;
        if (p->respawn > 0) return;
        p->ship = vg_spawn_ship(s, slot);
        if (p->ship != CRADLE_ENTITY_NONE) p->invulnerable = s->data.invulnerable_steps;
        return;
    }
    vg_motion *m = CRADLE_ECS_GET(vg_world(s), p->ship, VG_C_MOTION, vg_motion);
    assert(m);
    int32_t dx = ((actions & VANGUARD_RIGHT) ? 1 : 0) - ((actions & VANGUARD_LEFT) ? 1 : 0);
    int32_t dy = ((actions & VANGUARD_DOWN) ? 1 : 0) - ((actions & VANGUARD_UP) ? 1 : 0);
    m->x += dx * s->data.ship_speed;
    m->y += dy * s->data.ship_speed;
    const int32_t min_x = 12 * VG_FP, max_x = (VG_VIEW_W - 12) * VG_FP;
    const int32_t min_y = 8 * VG_FP, max_y = (VG_VIEW_H - 8) * VG_FP;
    m->x = m->x < min_x ? min_x : m->x > max_x ? max_x : m->x;
    m->y = m->y < min_y ? min_y : m->y > max_y ? max_y : m->y;
    if ((actions & VANGUARD_FIRE) && p->cooldown == 0) {
        int32_t x = m->x + 10 * VG_FP, y = m->y;
        if (p->rapid > 0) {
            vg_spawn_player_shot(s, slot, x, y - 4 * VG_FP);
            vg_spawn_player_shot(s, slot, x, y + 4 * VG_FP);
        } else {
            vg_spawn_player_shot(s, slot, x, y);
        }
        /* A test build's own rate (vanguard_internal.h) wins over the data. */
        int32_t cooldown = VG_FIRE_COOLDOWN_FIXED ? VG_FIRE_COOLDOWN : s->data.fire_cooldown;
        p->cooldown = p->rapid > 0 ? s->data.rapid_cooldown : cooldown;
        vanguard_emit(events, VG_EV_FIRED, (uint8_t)slot, x, y, p->rapid > 0 ? 2 : 1, 0);
    }
}

/* Presence, joining and leaving for one slot. Returns whether the slot's
 * ship acts this step. */
static bool vg_presence(vanguard_state *s, uint32_t slot, bool present,
                        const cradle_event_sink *events) {
    vg_player *p = &s->players[slot];
    if (!present) {
        if (p->present && p->ship != CRADLE_ENTITY_NONE) {
            /* A player who leaves takes the ship along; it comes back (with
             * its lives and score) when they reconnect. */
            (void)cradle_ecs_destroy(vg_world(s), p->ship);
            p->ship = CRADLE_ENTITY_NONE;
            p->respawn = 1;
        }
        p->present = 0;
        return false;
    }
    if (!p->joined) {
        if (s->game_over) return false; /* late joiners wait for the restart */
        p->joined = 1;
        p->lives = VG_START_LIVES;
        p->score = 0;
        p->respawn = 1;
        vanguard_emit(events, VG_EV_PLAYER_JOINED, (uint8_t)slot, 64 * VG_FP, 0, 0, 0);
    }
    p->present = 1;
    return true;
}

/* ---- enemies dying ----------------------------------------------------------- */

static void vg_enemy_destroy(vanguard_state *s, cradle_entity e, uint8_t scorer,
                             const cradle_event_sink *events) {
    cradle_ecs *w = vg_world(s);
    const vg_motion *m = CRADLE_ECS_GET(w, e, VG_C_MOTION, vg_motion);
    const vg_enemy *en = CRADLE_ECS_GET(w, e, VG_C_ENEMY, vg_enemy);
    assert(m && en);
    vg_motion at = *m;
    uint8_t type = en->type;
    int32_t points = en->points;
    (void)cradle_ecs_destroy(w, e);
    (void)vg_spawn_explosion(s, &at, type == VG_BOSS ? 3 : type == VG_SHOOTER ? 1 : 0);
    if (scorer == VG_NO_PLAYER) {
        vanguard_emit(events, VG_EV_ENEMY_DESTROYED, VG_NO_PLAYER, at.x, at.y, 0, type);
        return;
    }
    s->players[scorer].score += (uint32_t)points;
    vanguard_emit(events, VG_EV_ENEMY_DESTROYED, scorer, at.x, at.y, points, type);
    uint32_t roll = cradle_rng_below(&s->rng, 100);
    uint32_t drop = (uint32_t)s->data.pickup_percent, life = (uint32_t)s->data.life_pickup_percent;
    if (type == VG_BOSS || roll < drop) {
        uint8_t kind = (type == VG_BOSS || roll < life) ? VG_PICKUP_LIFE : VG_PICKUP_RAPID;
        (void)vanguard_spawn_pickup(s, kind, at.x, at.y);
    }
}

static void vg_enemy_damage(vanguard_state *s, cradle_entity e, int32_t damage, uint8_t scorer,
                            const cradle_event_sink *events) {
    vg_enemy *en = CRADLE_ECS_GET(vg_world(s), e, VG_C_ENEMY, vg_enemy);
    assert(en);
    en->hp -= damage;
    if (en->hp <= 0) {
        vg_enemy_destroy(s, e, scorer, events);
        return;
    }
    const vg_motion *m = CRADLE_ECS_GET(vg_world(s), e, VG_C_MOTION, vg_motion);
    vanguard_emit(events, VG_EV_ENEMY_HIT, scorer, m->x, m->y, en->hp, en->type);
}

/* ---- the collision pre-filter -------------------------------------------------
 *
 * A coarse map of where this step's queries look: one bit per 16-pixel
 * square of the grid rectangle, one map per layer bit a query asks for. Each
 * query box is marked grown by VG_COVER_REACH on every side. An object with
 * half extents up to VG_COVER_REACH that overlaps a query box has its centre
 * inside the grown box, so the square holding its centre is marked (squares
 * clamp to the border like the grid's cells, which keeps that true off the
 * map). An object whose centre square is not marked for its layer therefore
 * overlaps no query box asking for that layer, is in no query's answer, and
 * vg_collide() leaves it out of the grid; larger objects always go in. The
 * answers (objects in insertion order, the inserted ones still in body
 * order) are exactly those of the full grid, and a crowded wave costs a
 * lookup per object instead of a grid insert.
 *
 * vg_move() notes each moving entity's centre square by entity index
 * (s->square, a small table that stays in cache), so the filter needs no
 * lookup of the entity's motion. */

#define VG_COVER_SHIFT 12 /* 16-pixel squares: 16 * VG_FP == 1 << 12 */
#define VG_COVER_COLUMNS 48u
#define VG_COVER_ROWS 31u
#define VG_COVER_LAYERS 5u           /* layer bits 0..4 (VG_L_*) */
#define VG_COVER_REACH (10 * VG_FP)  /* the largest half extent but the boss's */

_Static_assert(16 * VG_FP == 1 << VG_COVER_SHIFT, "VG_COVER_SHIFT");
_Static_assert((int64_t)VG_COVER_COLUMNS << VG_COVER_SHIFT >= VG_GRID_W &&
                   VG_COVER_COLUMNS <= 64u,
               "a row of squares covers the grid's width in one 64-bit word");
_Static_assert((int64_t)VG_COVER_ROWS << VG_COVER_SHIFT >= VG_GRID_H,
               "the rows cover the grid's height");
_Static_assert(VG_L_PICKUP < 1u << VG_COVER_LAYERS, "every layer has a map");

typedef struct vg_cover {
    uint64_t rows[VG_COVER_LAYERS][VG_COVER_ROWS]; /* bit c of rows[l][r]: square (c, r) */
} vg_cover;

static inline uint32_t vg_cover_square(int64_t d, uint32_t n) {
    uint64_t q = d < 0 ? 0u : (uint64_t)d >> VG_COVER_SHIFT;
    return q < n ? (uint32_t)q : n - 1u;
}

/* Marks the non-empty box of a query that asks for the layers in mask. */
static void vg_cover_mark(vg_cover *c, uint32_t mask, cradle_box box) {
    int64_t dx = (int64_t)box.x - VG_COVER_REACH - VG_GRID_X;
    int64_t dy = (int64_t)box.y - VG_COVER_REACH - VG_GRID_Y;
    uint32_t x0 = vg_cover_square(dx, VG_COVER_COLUMNS);
    uint32_t x1 = vg_cover_square(dx + box.w + 2 * VG_COVER_REACH - 1, VG_COVER_COLUMNS);
    uint32_t y0 = vg_cover_square(dy, VG_COVER_ROWS);
    uint32_t y1 = vg_cover_square(dy + box.h + 2 * VG_COVER_REACH - 1, VG_COVER_ROWS);
    uint64_t columns = ((2ull << x1) - 1u) & ~((1ull << x0) - 1u); /* x1 < 63 */
    for (uint32_t l = 0; l < VG_COVER_LAYERS; l++) {
        if (!(mask & (1u << l))) continue;
        for (uint32_t r = y0; r <= y1; r++) c->rows[l][r] |= columns;
    }
}

/* The view and the margin vg_move() keeps entities in. */
#define VG_KEEP_MARGIN (48 * VG_FP)
#define VG_KEEP_X0 (-VG_KEEP_MARGIN)
#define VG_KEEP_X1 (VG_VIEW_W * VG_FP + VG_KEEP_MARGIN)
#define VG_KEEP_Y0 (-VG_KEEP_MARGIN)
#define VG_KEEP_Y1 (VG_VIEW_H * VG_FP + VG_KEEP_MARGIN)

/* The square holding point (x, y) of that area, row << 8 | column: there
 * the squares need no clamping. */
static inline uint16_t vg_cover_square_of(int32_t x, int32_t y) {
    _Static_assert(VG_COVER_COLUMNS <= 256u && VG_COVER_ROWS <= 256u, "a square fits 16 bits");
    _Static_assert(VG_KEEP_X0 >= VG_GRID_X && VG_KEEP_Y0 >= VG_GRID_Y &&
                       ((int64_t)VG_KEEP_X1 - VG_GRID_X) >> VG_COVER_SHIFT < VG_COVER_COLUMNS &&
                       ((int64_t)VG_KEEP_Y1 - VG_GRID_Y) >> VG_COVER_SHIFT < VG_COVER_ROWS,
                   "the kept area lies on the map");
    assert(x >= VG_KEEP_X0 && x <= VG_KEEP_X1 && y >= VG_KEEP_Y0 && y <= VG_KEEP_Y1);
    return (uint16_t)((uint32_t)(y - VG_GRID_Y) >> VG_COVER_SHIFT << 8 |
                      (uint32_t)(x - VG_GRID_X) >> VG_COVER_SHIFT);
}

/* Whether an object of `layer` whose centre is in `square` and whose half
 * extents are (hw, hh) may be in some query's answer. */
static inline bool vg_cover_touches(const vg_cover *c, uint32_t layer, uint32_t square,
                                    int32_t hw, int32_t hh) {
    _Static_assert(VG_L_ENEMY == 1u << 2 && VG_L_ENEMY_SHOT == 1u << 3 && VG_L_PICKUP == 1u << 4,
                   "map indices of the passive layers");
    uint32_t l = layer == VG_L_ENEMY         ? 2u
                 : layer == VG_L_ENEMY_SHOT  ? 3u
                 : layer == VG_L_PICKUP      ? 4u
                                             : VG_COVER_LAYERS;
    if (l == VG_COVER_LAYERS || hw > VG_COVER_REACH || hh > VG_COVER_REACH) return true;
    return (c->rows[l][square >> 8] >> (square & 0xFFu)) & 1u;
}

/* ---- motion and lifetimes ------------------------------------------------------ */

static void vg_move(vanguard_state *s) {
    cradle_ecs *w = vg_world(s);
    /* Ships keep zero velocity (vg_ship_update moves them) and stay inside
     * the view, so one dense walk moves everything else. Walk down, so that
     * the element destroy() moves into the hole was already visited. */
    uint32_t n = cradle_ecs_count(w, VG_C_MOTION);
    const cradle_entity *ids = cradle_ecs_entities(w, VG_C_MOTION);
    vg_motion *mo = cradle_ecs_data(w, VG_C_MOTION);
    uint16_t *square = s->square;
    for (uint32_t i = n; i-- > 0;) {
        vg_motion *m = &mo[i];
        m->x += m->vx;
        m->y += m->vy;
        if (m->x < VG_KEEP_X0 || m->x > VG_KEEP_X1 || m->y < VG_KEEP_Y0 || m->y > VG_KEEP_Y1) {
            (void)cradle_ecs_destroy(w, ids[i]);
        } else {
            square[cradle_entity_index(ids[i])] = vg_cover_square_of(m->x, m->y);
        }
    }
    n = cradle_ecs_count(w, VG_C_TTL);
    ids = cradle_ecs_entities(w, VG_C_TTL);
    vg_ttl *ttl = cradle_ecs_data(w, VG_C_TTL);
    for (uint32_t i = n; i-- > 0;) {
        if (--ttl[i].steps <= 0) (void)cradle_ecs_destroy(w, ids[i]);
    }
}

/* ---- collisions ---------------------------------------------------------------- */

static cradle_box vg_box(const vg_motion *m, int32_t half_w, int32_t half_h) {
    return (cradle_box){m->x - half_w, m->y - half_h, 2 * half_w, 2 * half_h};
}

/* What a ship touched: a pickup is collected; an enemy shot or an enemy
 * costs a life unless the ship is invulnerable. */
static void vg_ship_touch(vanguard_state *s, uint32_t slot, cradle_entity other,
                          const cradle_event_sink *events) {
    cradle_ecs *w = vg_world(s);
    vg_player *p = &s->players[slot];
    const vg_tag *t = CRADLE_ECS_GET(w, other, VG_C_TAG, vg_tag);
    if (!t || p->ship == CRADLE_ENTITY_NONE) return; /* gone earlier this step */
    if (t->kind == VG_K_PICKUP) {
        const vg_motion *m = CRADLE_ECS_GET(w, other, VG_C_MOTION, vg_motion);
        uint8_t kind = t->sub;
        vanguard_emit(events, VG_EV_PICKUP, (uint8_t)slot, m->x, m->y, kind, 0);
        (void)cradle_ecs_destroy(w, other);
        if (kind == VG_PICKUP_LIFE) {
            if (p->lives < VG_MAX_LIVES) p->lives++;
        } else {
            p->rapid = s->data.rapid_steps;
        }
        return;
    }
    if (p->invulnerable > 0) return;
    if (t->kind == VG_K_ENEMY_SHOT) {
        (void)cradle_ecs_destroy(w, other);
    } else if (t->kind == VG_K_ENEMY) {
        const vg_enemy *en = CRADLE_ECS_GET(w, other, VG_C_ENEMY, vg_enemy);
        /* Ramming kills the small fry (no points); the boss shrugs. */
        if (en->type != VG_BOSS) vg_enemy_damage(s, other, en->hp, VG_NO_PLAYER, events);
    } else {
        return;
    }
    vg_player_hit(s, slot, events);
}

/* Collisions through the grid. The grid holds the passive side (enemies,
 * enemy shots, pickups); the active side (ships, their graze zones, player
 * missiles) queries it. Querying from the few active objects avoids testing
 * enemy against enemy, which a crowded wave would make quadratic. Query
 * results come in insertion order, so the outcome is deterministic. */
static void vg_collide(vanguard_state *s, const cradle_event_sink *events) {
    cradle_ecs *w = vg_world(s);
    cradle_grid *g = vg_grid(s);
    cradle_grid_clear(g);
    uint32_t shots = 0;
    uint32_t count = cradle_ecs_count(w, VG_C_BODY);
    const cradle_entity *ids = cradle_ecs_entities(w, VG_C_BODY);
    const vg_body *bodies = cradle_ecs_data_const(w, VG_C_BODY);

    /* Where the queries below will look (the same boxes and masks; marking
     * more than they ask is harmless, less would lose collisions). */
    vg_cover cover;
    memset(&cover, 0, sizeof cover);
    for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++) {
        const vg_player *p = &s->players[slot];
        if (p->ship == CRADLE_ENTITY_NONE) continue;
        const vg_motion *m = CRADLE_ECS_GET(w, p->ship, VG_C_MOTION, vg_motion);
        const vg_body *b = CRADLE_ECS_GET(w, p->ship, VG_C_BODY, vg_body);
        vg_cover_mark(&cover, b->mask, vg_box(m, b->half_w, b->half_h));
        if (p->invulnerable <= 0)
            vg_cover_mark(&cover, VG_L_ENEMY_SHOT, vg_box(m, 26 * VG_FP, 20 * VG_FP));
    }
    for (uint32_t i = 0; i < count; i++) {
        const vg_body *b = &bodies[i];
        if (b->layer != VG_L_PLAYER_SHOT) continue;
        s->scratch[shots++] = ids[i];
        const vg_motion *m = cradle_ecs_get_const(w, ids[i], VG_C_MOTION);
        vg_cover_mark(&cover, VG_L_ENEMY, vg_box(m, b->half_w, b->half_h));
    }

    for (uint32_t i = 0; i < count; i++) {
        const vg_body *b = &bodies[i];
        if (b->layer == VG_L_SHIP || b->layer == VG_L_PLAYER_SHOT) continue;
        /* vg_move() noted the square of every entity here (none spawned
         * since). */
        uint32_t square = s->square[cradle_entity_index(ids[i])];
        if (!vg_cover_touches(&cover, b->layer, square, b->half_w, b->half_h)) continue;
        const vg_motion *m = cradle_ecs_get_const(w, ids[i], VG_C_MOTION);
        cradle_box box = vg_box(m, b->half_w, b->half_h);
        /* Fails only past VG_GRID_OBJECTS, which the entity capacity bounds. */
        (void)cradle_grid_insert(g, ids[i], box, b->layer, b->mask);
    }

    uint32_t hits[VG_MAX_HITS];
    uint32_t dropped = 0;
    for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++) {
        const vg_player *p = &s->players[slot];
        if (p->ship == CRADLE_ENTITY_NONE) continue;
        const vg_motion *m = CRADLE_ECS_GET(w, p->ship, VG_C_MOTION, vg_motion);
        const vg_body *b = CRADLE_ECS_GET(w, p->ship, VG_C_BODY, vg_body);
        cradle_box box = vg_box(m, b->half_w, b->half_h);
        uint32_t n = cradle_grid_query(g, box, b->mask, hits, VG_MAX_HITS, &dropped);
        s->dropped_hits += dropped;
        for (uint32_t i = 0; i < n; i++) vg_ship_touch(s, slot, hits[i], events);
    }
    for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++) {
        const vg_player *p = &s->players[slot];
        if (p->ship == CRADLE_ENTITY_NONE || p->invulnerable > 0) continue;
        const vg_motion *m = CRADLE_ECS_GET(w, p->ship, VG_C_MOTION, vg_motion);
        uint32_t n = cradle_grid_query(g, vg_box(m, 26 * VG_FP, 20 * VG_FP), VG_L_ENEMY_SHOT, hits,
                                       VG_MAX_HITS, &dropped);
        s->dropped_hits += dropped;
        for (uint32_t i = 0; i < n; i++) {
            /* Remember who it grazed; vg_near_misses() reports it once it
             * leaves the zone without hitting. */
            vg_tag *t = CRADLE_ECS_GET(w, hits[i], VG_C_TAG, vg_tag);
            if (!t) continue;
            t->owner = (uint8_t)slot;
            t->mark = s->tick;
            s->grazing = 1;
        }
    }
    /* Each missile hits the first live enemy it overlaps, in grid order. */
    for (uint32_t i = 0; i < shots; i++) {
        cradle_entity shot = s->scratch[i];
        const vg_motion *m = CRADLE_ECS_GET(w, shot, VG_C_MOTION, vg_motion);
        const vg_body *b = CRADLE_ECS_GET(w, shot, VG_C_BODY, vg_body);
        uint32_t n = cradle_grid_query(g, vg_box(m, b->half_w, b->half_h), VG_L_ENEMY, hits,
                                       VG_MAX_HITS, &dropped);
        for (uint32_t k = 0; k < n; k++) {
            if (!cradle_ecs_alive(w, hits[k])) continue; /* killed earlier this step */
            uint8_t owner = CRADLE_ECS_GET(w, shot, VG_C_TAG, vg_tag)->owner;
            (void)cradle_ecs_destroy(w, shot);
            vg_enemy_damage(s, hits[k], 1, owner, events);
            break;
        }
    }
}

/* Enemy shots that grazed a ship on an earlier step and no longer do were
 * near misses (those that hit were destroyed). s->grazing is 0 only while no
 * live enemy shot has an owner (owners are set only where grazing is set to
 * 1, and a walk that leaves none clears it): then there is nothing to walk
 * for, the common case of a crowded wave with no ship to graze. */
static void vg_near_misses(vanguard_state *s, const cradle_event_sink *events) {
    if (!s->grazing) return;
    cradle_ecs *w = vg_world(s);
    uint32_t n = cradle_ecs_count(w, VG_C_TAG);
    const cradle_entity *ids = cradle_ecs_entities(w, VG_C_TAG);
    vg_tag *tags = cradle_ecs_data(w, VG_C_TAG);
    uint32_t still = 0;
    for (uint32_t i = 0; i < n; i++) {
        vg_tag *t = &tags[i];
        if (t->kind != VG_K_ENEMY_SHOT || t->owner == VG_NO_PLAYER) continue;
        if (t->mark == s->tick) {
            still = 1; /* grazing now: owner kept */
            continue;
        }
        uint8_t slot = t->owner;
        t->owner = VG_NO_PLAYER;
        if (s->players[slot].ship == CRADLE_ENTITY_NONE) continue;
        const vg_motion *m = CRADLE_ECS_GET(w, ids[i], VG_C_MOTION, vg_motion);
        vanguard_emit(events, VG_EV_NEAR_MISS, slot, m->x, m->y, 0, 0);
    }
    s->grazing = still;
}

/* ---- waves ---------------------------------------------------------------------- */

static void vg_wave_start(vanguard_state *s, const cradle_event_sink *events) {
    s->wave++;
    s->wave_steps = 0;
    const vg_wave_def *d = vg_wave_def_of(s);
    uint32_t cycle = vg_cycle(s);
    uint32_t extra = s->player_count - 1; /* more players, more enemies */
    const uint32_t base[3] = {d->drifters, d->chasers, d->shooters};
    uint32_t total = 0;
    for (int t = 0; t < 3; t++) {
        s->pending[t] = base[t] + base[t] * cycle / 2 + base[t] * extra / 3;
        total += s->pending[t];
    }
    uint32_t every = s->data.boss_every;
    s->pending[VG_BOSS] = every && s->wave % every == 0 ? 1u : 0u;
    total += s->pending[VG_BOSS];
    s->spawn_steps = 1;
    vanguard_emit(events, VG_EV_WAVE_STARTED, VG_NO_PLAYER, VG_VIEW_W / 2 * VG_FP,
                  VG_VIEW_H / 2 * VG_FP, (int32_t)s->wave, (int32_t)total);
}

static void vg_wave_spawn_one(vanguard_state *s) {
    uint32_t small = s->pending[VG_DRIFTER] + s->pending[VG_CHASER] + s->pending[VG_SHOOTER];
    uint8_t type = VG_BOSS;
    if (small > 0) {
        uint32_t r = cradle_rng_below(&s->rng, small);
        type = r < s->pending[VG_DRIFTER]                          ? VG_DRIFTER
               : r < s->pending[VG_DRIFTER] + s->pending[VG_CHASER] ? VG_CHASER
                                                                    : VG_SHOOTER;
    }
    s->pending[type]--;
    int32_t x = (VG_VIEW_W + 24) * VG_FP;
    int32_t y = cradle_rng_range(&s->rng, 24, VG_VIEW_H - 24) * VG_FP;
    int32_t hx = cradle_rng_range(&s->rng, 400, 600) * VG_FP;
    int32_t hy = cradle_rng_range(&s->rng, 40, VG_VIEW_H - 40) * VG_FP;
    switch (vg_wave_def_of(s)->formation) {
    case VG_FORMATION_COLUMN: hx = 500 * VG_FP; break;
    case VG_FORMATION_LANES: hy = y; break;
    default: break; /* VG_FORMATION_SCATTER */
    }
    if (type == VG_BOSS) {
        x = (VG_VIEW_W + 40) * VG_FP;
        y = hy = VG_VIEW_H / 2 * VG_FP;
        hx = 560 * VG_FP;
    }
    (void)vanguard_spawn_enemy(s, type, x, y, hx, hy);
}

/* Steps until the next spawn in the current wave: the gap shrinks by
 * less_per_wave a wave down to min_steps (<= steps). */
static uint32_t vg_spawn_gap(const vanguard_state *s) {
    const vg_data *d = &s->data;
    uint64_t less = (uint64_t)d->spawn_gap_less_per_wave * s->wave;
    uint32_t room = d->spawn_gap_steps - d->spawn_gap_min_steps;
    return less < room ? d->spawn_gap_steps - (uint32_t)less : d->spawn_gap_min_steps;
}

static void vg_waves(vanguard_state *s, const cradle_event_sink *events) {
    if (s->game_over) return;
    if (s->break_steps > 0) {
        if (--s->break_steps == 0) vg_wave_start(s, events);
        return;
    }
    s->wave_steps++;
    if (s->pending[0] + s->pending[1] + s->pending[2] + s->pending[3] > 0) {
        if (--s->spawn_steps == 0) {
            vg_wave_spawn_one(s);
            s->spawn_steps = vg_spawn_gap(s);
        }
        return;
    }
    if (cradle_ecs_count(vg_world(s), VG_C_ENEMY) == 0 || s->wave_steps >= s->data.timeout_steps)
        s->break_steps = s->data.break_steps;
}

/* ---- the step ---------------------------------------------------------------------- */

static void vg_check_game_over(vanguard_state *s, const cradle_event_sink *events) {
    if (s->game_over) return;
    uint32_t joined = 0, total = 0;
    for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++) {
        const vg_player *p = &s->players[slot];
        if (!p->joined) continue;
        if (p->lives > 0) return;
        joined++;
        total += p->score;
    }
    if (joined == 0) return;
    s->game_over = 1;
    vanguard_emit(events, VG_EV_GAME_OVER, VG_NO_PLAYER, VG_VIEW_W / 2 * VG_FP,
                  VG_VIEW_H / 2 * VG_FP, (int32_t)total, (int32_t)s->wave);
}

static void vanguard_step(void *state, const cradle_game_step *step,
                          const cradle_event_sink *events) {
    vanguard_state *s = state;
    assert(s->magic == VG_STATE_MAGIC);
    uint32_t actions[VG_MAX_PLAYERS] = {0};
    bool present[VG_MAX_PLAYERS] = {false};
    /* A snapshot of the wrong size carries no usable input: every slot reads
     * as absent rather than reading out of bounds. */
    bool valid = step->snapshot &&
                 step->snapshot_size == cradle_snapshot_size(VG_MAX_PLAYERS, VANGUARD_INPUT_BYTES);
    for (uint32_t slot = 0; valid && slot < VG_MAX_PLAYERS; slot++) {
        present[slot] = cradle_snapshot_present(step->snapshot, slot);
        if (!present[slot]) continue;
        actions[slot] = vanguard_input_unpack(
            cradle_snapshot_input(step->snapshot, VG_MAX_PLAYERS, VANGUARD_INPUT_BYTES, slot),
            VANGUARD_INPUT_BYTES);
    }

    if (s->game_over) {
        for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++) {
            if (!present[slot] || !(actions[slot] & VANGUARD_RESTART) ||
                (s->players[slot].input & VANGUARD_RESTART))
                continue;
            uint32_t restarts = s->restarts + 1, reloads = s->reloads;
            vg_data data = s->data; /* the data files' values outlive the game */
            int rc = vg_setup(s, s->seed, s->player_count, &data);
            assert(rc == 0); /* it succeeded at init with the same arguments */
            (void)rc;
            s->restarts = restarts;
            s->reloads = reloads;
            for (uint32_t i = 0; i < VG_MAX_PLAYERS; i++) s->players[i].input = (uint8_t)actions[i];
            vanguard_emit(events, VG_EV_RESTART, (uint8_t)slot, VG_VIEW_W / 2 * VG_FP,
                          VG_VIEW_H / 2 * VG_FP, (int32_t)restarts, 0);
            return;
        }
    }

    s->tick++;
    for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++) {
        if (vg_presence(s, slot, present[slot], events))
            vg_ship_update(s, slot, actions[slot], events);
        s->players[slot].input = (uint8_t)actions[slot];
    }
    if (step->phase == 0) vanguard_ai_think(s, events);
    vg_move(s);
    vg_collide(s, events);
    vg_near_misses(s, events);
    vg_check_game_over(s, events);
    vg_waves(s, events);
}

/* ---- checksum and output --------------------------------------------------------- */

/* The checksum reads component arrays as little-endian words; every
 * platform Cradle targets is little-endian. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vanguard_checksum assumes a little-endian machine"
#endif

static uint64_t vg_mix(uint64_t h, uint64_t v) {
    h ^= v;
    h *= 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

/* Folds `bytes` bytes (a multiple of 4) into four independent lanes, 8 bytes
 * at a time, so the multiplies overlap instead of forming one long chain. */
static void vg_hash_bytes(uint64_t lane[4], const void *data, size_t bytes) {
    const uint8_t *p = data;
    size_t i = 0;
    for (; i + 32 <= bytes; i += 32) {
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, p + i + 8 * (size_t)k, 8);
            lane[k] = vg_mix(lane[k], w);
        }
    }
    for (; i + 4 <= bytes; i += 4) {
        uint32_t w;
        memcpy(&w, p + i, 4);
        lane[0] = vg_mix(lane[0], w);
    }
}

uint64_t vanguard_checksum(const vanguard_state *s) {
    uint64_t h = 0x76616e6775617264ull;
    h = vg_mix(h, s->seed);
    h = vg_mix(h, s->rng.state);
    h = vg_mix(h, s->rng.increment);
    h = vg_mix(h, (uint64_t)s->player_count << 32 | s->tick);
    h = vg_mix(h, (uint64_t)s->wave << 32 | s->wave_steps);
    h = vg_mix(h, (uint64_t)s->break_steps << 32 | s->spawn_steps);
    for (int t = 0; t < VG_ENEMY_TYPES; t++) h = vg_mix(h, s->pending[t]);
    h = vg_mix(h, s->game_over);
    for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++) {
        const vg_player *p = &s->players[slot];
        h = vg_mix(h, (uint64_t)p->score << 32 | p->ship);
        h = vg_mix(h, (uint64_t)(uint32_t)p->respawn << 32 | (uint32_t)p->invulnerable);
        h = vg_mix(h, (uint64_t)(uint32_t)p->cooldown << 32 | (uint32_t)p->rapid);
        h = vg_mix(h, (uint64_t)p->joined << 16 | (uint64_t)p->present << 8 | p->lives);
    }
    /* Each component type's dense arrays (ids, then values, padding-free):
     * their order is deterministic, and walking arrays needs no lookups. */
    const cradle_ecs *w = vg_world_const(s);
    uint64_t lane[4] = {h, h ^ 1u, h ^ 2u, h ^ 3u};
    for (uint32_t c = 0; c < VG_COMPONENT_COUNT; c++) {
        uint32_t n = cradle_ecs_count(w, c);
        lane[c % 4u] = vg_mix(lane[c % 4u], n);
        vg_hash_bytes(lane, cradle_ecs_entities(w, c), (size_t)n * sizeof(cradle_entity));
        vg_hash_bytes(lane, cradle_ecs_data_const(w, c), (size_t)n * cradle_ecs_stride(w, c));
    }
    return vg_mix(vg_mix(vg_mix(lane[0], lane[1]), lane[2]), lane[3]);
}

static size_t vanguard_output(const void *state, uint64_t step, uint8_t *out, size_t capacity) {
    const vanguard_state *s = state;
    cradle_cursor c = cradle_cursor_writer(out, capacity);
    cradle_cursor_put_u64(&c, step);
    cradle_cursor_put_u64(&c, vanguard_checksum(s));
    cradle_cursor_put_u32(&c, s->wave);
    cradle_cursor_put_u32(&c, s->tick);
    cradle_cursor_put_u8(&c, (uint8_t)s->game_over);
    cradle_cursor_put_u32(&c, cradle_ecs_live_count(vg_world_const(s)));
    for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++) {
        const vg_player *p = &s->players[slot];
        cradle_cursor_put_u8(&c, (uint8_t)(p->joined && p->present));
        cradle_cursor_put_u8(&c, p->lives);
        cradle_cursor_put_u32(&c, p->score);
    }
    assert(c.failed || c.pos == VG_OUTPUT_BYTES);
    return c.failed ? 0 : c.pos;
}

static void vanguard_on_reload(void *state) {
    vanguard_state *s = state;
    s->reloads++;
    /* A state from another build may not keep the grazing invariant: the
     * next near-miss pass walks and sets it again. */
    s->grazing = 1;
}

/* In vg_sound order (vanguard_internal.h). */
static const char *const vg_sounds[] = {
    "vanguard/shot.wav", "vanguard/explosion.wav", "vanguard/hit.wav",       "vanguard/pickup.wav",
    "vanguard/wave.wav", "vanguard/near_miss.wav", "vanguard/game_over.wav",
};

/* The state's layout (game_abi.h, minor 3): reports name the field a byte
 * belongs to. Region i + 1 is the parent of the rows that name it. */
#define VG_FIELD(name, parent, type, field)                                                      \
    {#name, parent, (uint32_t)offsetof(type, field), (uint32_t)sizeof(((type *)0)->field), 1, 0}
#define VG_ARRAY(name, parent, type, field, n)                                                   \
    {#name, parent, (uint32_t)offsetof(type, field), (uint32_t)sizeof(((type *)0)->field[0]), n, \
     (uint32_t)sizeof(((type *)0)->field[0])}
static const cradle_state_region vg_layout[] = {
    VG_FIELD(magic, 0, vanguard_state, magic),
    VG_FIELD(player_count, 0, vanguard_state, player_count),
    VG_FIELD(seed, 0, vanguard_state, seed),
    VG_FIELD(rng, 0, vanguard_state, rng), /* 3 */
    VG_FIELD(tick, 0, vanguard_state, tick),
    VG_FIELD(wave, 0, vanguard_state, wave),
    VG_FIELD(wave_steps, 0, vanguard_state, wave_steps),
    VG_FIELD(break_steps, 0, vanguard_state, break_steps),
    VG_FIELD(spawn_steps, 0, vanguard_state, spawn_steps),
    VG_ARRAY(pending, 0, vanguard_state, pending, VG_ENEMY_TYPES),
    VG_FIELD(game_over, 0, vanguard_state, game_over),
    VG_FIELD(restarts, 0, vanguard_state, restarts),
    VG_FIELD(reloads, 0, vanguard_state, reloads),
    VG_FIELD(refused_spawns, 0, vanguard_state, refused_spawns),
    VG_FIELD(dropped_hits, 0, vanguard_state, dropped_hits),
    VG_FIELD(grazing, 0, vanguard_state, grazing),
    VG_ARRAY(players, 0, vanguard_state, players, VG_MAX_PLAYERS), /* 16 */
    VG_FIELD(score, 17, vg_player, score),
    VG_FIELD(ship, 17, vg_player, ship),
    VG_FIELD(respawn, 17, vg_player, respawn),
    VG_FIELD(invulnerable, 17, vg_player, invulnerable),
    VG_FIELD(cooldown, 17, vg_player, cooldown),
    VG_FIELD(rapid, 17, vg_player, rapid),
    VG_FIELD(joined, 17, vg_player, joined),
    VG_FIELD(present, 17, vg_player, present),
    VG_FIELD(lives, 17, vg_player, lives),
    VG_FIELD(input, 17, vg_player, input),
    VG_FIELD(world, 0, vanguard_state, world), /* the ECS block (ecs.h) */
    VG_FIELD(grid, 0, vanguard_state, grid),
    VG_ARRAY(scratch, 0, vanguard_state, scratch, VG_MAX_ENTITIES),
    VG_ARRAY(square, 0, vanguard_state, square, VG_MAX_ENTITIES),
    {"state", 4, 0, 8, 1, 0},      /* rng.state */
    {"increment", 4, 8, 8, 1, 0},  /* rng.increment */
    VG_FIELD(data, 0, vanguard_state, data), /* 33 */
    VG_FIELD(first_wave_steps, 34, vg_data, first_wave_steps),
    VG_FIELD(break_steps, 34, vg_data, break_steps),
    VG_FIELD(timeout_steps, 34, vg_data, timeout_steps),
    VG_FIELD(boss_every, 34, vg_data, boss_every),
    VG_FIELD(spawn_gap_steps, 34, vg_data, spawn_gap_steps),
    VG_FIELD(spawn_gap_less_per_wave, 34, vg_data, spawn_gap_less_per_wave),
    VG_FIELD(spawn_gap_min_steps, 34, vg_data, spawn_gap_min_steps),
    VG_FIELD(wave_count, 34, vg_data, wave_count),
    VG_ARRAY(waves, 34, vg_data, waves, VG_MAX_WAVES), /* 42 */
    VG_FIELD(drifters, 43, vg_wave_def, drifters),
    VG_FIELD(chasers, 43, vg_wave_def, chasers),
    VG_FIELD(shooters, 43, vg_wave_def, shooters),
    VG_FIELD(formation, 43, vg_wave_def, formation),
    VG_FIELD(ship_speed, 34, vg_data, ship_speed),
    VG_FIELD(shot_speed, 34, vg_data, shot_speed),
    VG_FIELD(enemy_shot_speed, 34, vg_data, enemy_shot_speed),
    VG_FIELD(fire_cooldown, 34, vg_data, fire_cooldown),
    VG_FIELD(rapid_cooldown, 34, vg_data, rapid_cooldown),
    VG_FIELD(rapid_steps, 34, vg_data, rapid_steps),
    VG_FIELD(respawn_steps, 34, vg_data, respawn_steps),
    VG_FIELD(invulnerable_steps, 34, vg_data, invulnerable_steps),
    VG_FIELD(pickup_percent, 34, vg_data, pickup_percent),
    VG_FIELD(life_pickup_percent, 34, vg_data, life_pickup_percent),
    VG_FIELD(pickup_steps, 34, vg_data, pickup_steps),
    VG_ARRAY(enemies, 34, vg_data, enemies, VG_ENEMY_TYPES), /* 58, by vg_enemy_type */
    VG_FIELD(hp, 59, vg_enemy_def, hp),
    VG_FIELD(points, 59, vg_enemy_def, points),
    VG_FIELD(half_w, 59, vg_enemy_def, half_w),
    VG_FIELD(half_h, 59, vg_enemy_def, half_h),
    VG_FIELD(drifter_speed, 34, vg_data, drifter_speed),
    VG_FIELD(drifter_speed_per_wave, 34, vg_data, drifter_speed_per_wave),
    VG_FIELD(drifter_speed_waves, 34, vg_data, drifter_speed_waves),
    VG_FIELD(drifter_fires_from_wave, 34, vg_data, drifter_fires_from_wave),
    VG_FIELD(boss_hp_per_boss_wave, 34, vg_data, boss_hp_per_boss_wave),
    VG_FIELD(boss_hp_per_player, 34, vg_data, boss_hp_per_player),
    VG_ARRAY(effects, 34, vg_data, effects, VG_EFFECTS), /* 69, by vg_effect */
    VG_FIELD(particles, 70, vg_effect_def, particles),
    VG_FIELD(shake, 70, vg_effect_def, shake),
};

/* The data files (game_abi.h, minor 4), in vg_data_file order: beside the
 * library like the sounds; vanguard_data.c describes them. */
static const cradle_game_data_file vg_data_files[VG_DATA_FILES] = {
    [VG_FILE_WAVES] = {"vanguard/waves.json", VG_WAVES_MAX_BYTES},
    [VG_FILE_TUNING] = {"vanguard/tuning.json", VG_TUNING_MAX_BYTES},
};

static const cradle_game_contract vg_contract = {
    .abi_major = CRADLE_ABI_MAJOR,
    .abi_minor = CRADLE_ABI_MINOR,
    .state_size = (uint32_t)sizeof(vanguard_state),
    .state_align = (uint32_t)_Alignof(vanguard_state),
    .input_bytes = VANGUARD_INPUT_BYTES,
    .max_players = VG_MAX_PLAYERS,
    .steps_per_second = VG_STEPS_PER_SECOND,
    .source_frames_per_second = VG_SOURCE_FRAMES_PER_SECOND,
    .view_width = VG_VIEW_W,
    .view_height = VG_VIEW_H,
    .name = "vanguard",
    .build_id = CRADLE_BUILD_ID,
    .init = vanguard_init,
    .step = vanguard_step,
    .output = vanguard_output,
    .render = vanguard_render,
    .on_reload = vanguard_on_reload,
    .react = vanguard_react,
    .bot = vanguard_bot,
    .sounds = vg_sounds,
    .sound_count = (uint32_t)(sizeof vg_sounds / sizeof vg_sounds[0]),
    .layout = vg_layout,
    .layout_count = (uint32_t)(sizeof vg_layout / sizeof vg_layout[0]),
    .data_files = vg_data_files,
    .data_file_count = VG_DATA_FILES,
    .data = vanguard_data,
};

const cradle_game_contract *vanguard_contract(void) { return &vg_contract; }

CRADLE_GAME_DEFINE_CONTRACT(&vg_contract)
