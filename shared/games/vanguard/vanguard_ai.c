/*
 * vanguard_ai: the enemies' finite state machine (seed 003's enemy AI),
 *
 *   [PATROL]  player detected     --> [CHASE]
 *   [CHASE]   player within range --> [ATTACK]
 *             player lost         --> [SEARCH]
 *   [ATTACK]  attack finished     --> [SEARCH]
 *   [SEARCH]  player seen again   --> [CHASE]
 *             search timer ended  --> [RETURN]
 *   [RETURN]  home reached        --> [PATROL]
 *
 * with one behaviour per state and per enemy type:
 *   drifter  always patrols: crosses the screen right to left on a wave,
 *            and from wave 4 on (tuning.json) sometimes fires at a ship
 *            ahead;
 *   chaser   hovers at home, chases the nearest ship, dashes at it when
 *            close, searches where it lost it, goes home;
 *   shooter  hovers at home, lines up with a ship ahead, fires a burst of
 *            three aimed shots, hovers, goes home;
 *   boss     sways up and down, fires fans of five shots in volleys.
 * Enemies are spawned in RETURN, so they fly in to their home first.
 *
 * Thinking happens once per source frame (every third step at 60/20): the
 * think sets velocities and fires; the step moves everything every step.
 * Timers count think frames. Integer arithmetic only.
 */
#include <assert.h>
#include <stdint.h>

#include "vanguard_input.h"
#include "vanguard_internal.h"

#define VG_NONE 0xFFu
#define PX(n) ((int32_t)(n) * VG_FP)
#define PXQ(q) ((int32_t)(q) * VG_FP / 4) /* quarter pixels */

/* Distances in pixels, squared, as int64 to stay exact. */
static int64_t vg_dist2(int32_t ax, int32_t ay, int32_t bx, int32_t by) {
    int64_t dx = (int64_t)(bx - ax) / VG_FP, dy = (int64_t)(by - ay) / VG_FP;
    return dx * dx + dy * dy;
}

/* Velocity of magnitude `speed` from (ax, ay) towards (bx, by); straight
 * left when the points coincide. */
static void vg_aim(int32_t ax, int32_t ay, int32_t bx, int32_t by, int32_t speed, int32_t *vx,
                   int32_t *vy) {
    int64_t dx = (int64_t)bx - ax, dy = (int64_t)by - ay;
    uint32_t len = vanguard_isqrt((uint64_t)(dx * dx + dy * dy));
    if (len == 0) {
        *vx = -speed;
        *vy = 0;
        return;
    }
    *vx = (int32_t)(dx * speed / (int64_t)len);
    *vy = (int32_t)(dy * speed / (int64_t)len);
}

/* The ships' positions, gathered once per think. */
typedef struct vg_ships {
    uint32_t count;
    uint8_t slot[VG_MAX_PLAYERS];
    vg_motion at[VG_MAX_PLAYERS];
} vg_ships;

static void vg_ships_gather(const vanguard_state *s, vg_ships *out) {
    out->count = 0;
    for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++) {
        const vg_player *p = &s->players[slot];
        if (p->ship == CRADLE_ENTITY_NONE) continue;
        const vg_motion *m = cradle_ecs_get_const(vg_world_const(s), p->ship, VG_C_MOTION);
        assert(m);
        out->slot[out->count] = (uint8_t)slot;
        out->at[out->count++] = *m;
    }
}

/* The slot of the nearest ship within range_px (optionally only ships to the
 * left of `from`), or VG_NONE. Ties go to the lower slot. */
static uint8_t vg_nearest_ship(const vg_ships *ships, const vg_motion *from, int32_t range_px,
                               bool ahead_only) {
    uint8_t best = VG_NONE;
    int64_t best_d = (int64_t)range_px * range_px;
    for (uint32_t i = 0; i < ships->count; i++) {
        const vg_motion *m = &ships->at[i];
        if (ahead_only && m->x >= from->x) continue;
        int64_t d = vg_dist2(from->x, from->y, m->x, m->y);
        if (d < best_d || (d == best_d && best == VG_NONE)) {
            best = ships->slot[i];
            best_d = d;
        }
    }
    return best;
}

/* The target's ship motion, or NULL when it has no ship any more. */
static const vg_motion *vg_target(const vanguard_state *s, uint8_t slot) {
    if (slot == VG_NONE) return NULL;
    const vg_player *p = &s->players[slot];
    if (p->ship == CRADLE_ENTITY_NONE) return NULL;
    return cradle_ecs_get_const(vg_world_const(s), p->ship, VG_C_MOTION);
}

static void vg_fire_at(vanguard_state *s, const vg_motion *from, const vg_motion *to, int32_t spread) {
    int32_t vx, vy;
    vg_aim(from->x, from->y, to->x, to->y, s->data.enemy_shot_speed, &vx, &vy);
    /* A fan: each step of spread turns the shot by about 14 degrees. */
    int32_t fx = vx - (vy * spread) / 4, fy = vy + (vx * spread) / 4;
    (void)vanguard_spawn_enemy_shot(s, from->x - PX(6), from->y, fx, fy);
}

/* Hovering at home: a slow vertical sway around home_y. */
static void vg_patrol_sway(const vanguard_state *s, vg_enemy *en, vg_motion *m, int32_t speed) {
    int32_t beat = ((int32_t)(s->tick / 3u) + en->phase) / 32;
    m->vy = (beat % 2 == 0) ? speed : -speed;
    if (m->y > en->home_y + PX(40)) m->vy = -speed;
    if (m->y < en->home_y - PX(40)) m->vy = speed;
    m->vx = (en->home_x - m->x) / 32;
}

static void vg_enter(vg_enemy *en, uint8_t state, int32_t timer) {
    en->state = state;
    en->timer = timer;
}

/* Steers towards home; arrives -> PATROL. */
static void vg_return_home(vg_enemy *en, vg_motion *m, int32_t speed) {
    if (vg_dist2(m->x, m->y, en->home_x, en->home_y) <= 16) {
        m->vx = m->vy = 0;
        vg_enter(en, VG_PATROL, 0);
        return;
    }
    vg_aim(m->x, m->y, en->home_x, en->home_y, speed, &m->vx, &m->vy);
}

static void vg_think_drifter(vanguard_state *s, const vg_ships *ships, vg_enemy *en, vg_motion *m) {
    int32_t beat = ((int32_t)(s->tick / 3u) + en->phase) / 12;
    m->vy = (beat % 2 == 0) ? PXQ(3) : -PXQ(3);
    if (s->wave < (uint32_t)s->data.drifter_fires_from_wave) return;
    if (--en->cooldown > 0) return;
    en->cooldown = 30 + (int32_t)cradle_rng_below(&s->rng, 40);
    uint8_t slot = vg_nearest_ship(ships, m, 320, true);
    const vg_motion *t = vg_target(s, slot);
    if (t) vg_fire_at(s, m, t, 0);
}

static void vg_think_chaser(vanguard_state *s, const vg_ships *ships, vg_enemy *en, vg_motion *m) {
    switch (en->state) {
    case VG_PATROL:
        vg_patrol_sway(s, en, m, PXQ(3));
        en->target = vg_nearest_ship(ships, m, 260, false);
        if (en->target != VG_NONE) vg_enter(en, VG_CHASE, 0);
        break;
    case VG_CHASE: {
        const vg_motion *t = vg_target(s, en->target);
        if (!t || vg_dist2(m->x, m->y, t->x, t->y) > 340 * 340) {
            vg_enter(en, VG_SEARCH, 40);
            break;
        }
        if (vg_dist2(m->x, m->y, t->x, t->y) < 90 * 90) {
            /* Lock the dash direction now: the ship can still dodge it. */
            vg_aim(m->x, m->y, t->x, t->y, PXQ(18), &m->vx, &m->vy);
            vg_enter(en, VG_ATTACK, 12);
            break;
        }
        vg_aim(m->x, m->y, t->x, t->y, PX(2), &m->vx, &m->vy);
        break;
    }
    case VG_ATTACK:
        if (--en->timer <= 0) vg_enter(en, VG_SEARCH, 40);
        break;
    case VG_SEARCH:
        m->vx /= 2;
        m->vy /= 2;
        en->target = vg_nearest_ship(ships, m, 200, false);
        if (en->target != VG_NONE) {
            vg_enter(en, VG_CHASE, 0);
        } else if (--en->timer <= 0) {
            vg_enter(en, VG_RETURN, 0);
        }
        break;
    case VG_RETURN:
        vg_return_home(en, m, PXQ(6));
        break;
    default:
        vg_enter(en, VG_RETURN, 0);
        break;
    }
}

static void vg_think_shooter(vanguard_state *s, const vg_ships *ships, vg_enemy *en, vg_motion *m) {
    switch (en->state) {
    case VG_PATROL:
        vg_patrol_sway(s, en, m, PXQ(2));
        if (en->cooldown > 0) en->cooldown--;
        if (en->cooldown > 0) break;
        en->target = vg_nearest_ship(ships, m, 420, true);
        if (en->target != VG_NONE) vg_enter(en, VG_CHASE, 60);
        break;
    case VG_CHASE: {
        const vg_motion *t = vg_target(s, en->target);
        if (!t || t->x >= m->x || --en->timer <= 0) {
            vg_enter(en, VG_SEARCH, 20);
            break;
        }
        int32_t dy = t->y - m->y;
        m->vx = (en->home_x - m->x) / 32;
        m->vy = dy > PX(2) ? PXQ(6) : dy < -PX(2) ? -PXQ(6) : 0;
        if (dy < PX(20) && dy > -PX(20)) {
            en->burst = 3;
            en->cooldown = 0;
            vg_enter(en, VG_ATTACK, 0);
        }
        break;
    }
    case VG_ATTACK: {
        m->vx = m->vy = 0;
        const vg_motion *t = vg_target(s, en->target);
        if (!t || en->burst == 0) {
            vg_enter(en, VG_SEARCH, 20);
            break;
        }
        if (--en->cooldown > 0) break;
        vg_fire_at(s, m, t, 0);
        en->burst--;
        en->cooldown = 3;
        break;
    }
    case VG_SEARCH:
        m->vx = m->vy = 0;
        if (--en->timer <= 0) {
            en->cooldown = 20 + (int32_t)cradle_rng_below(&s->rng, 30);
            vg_enter(en, VG_RETURN, 0);
        }
        break;
    case VG_RETURN:
        vg_return_home(en, m, PXQ(6));
        break;
    default:
        vg_enter(en, VG_RETURN, 0);
        break;
    }
}

static void vg_think_boss(vanguard_state *s, const vg_ships *ships, vg_enemy *en, vg_motion *m) {
    switch (en->state) {
    case VG_PATROL:
    case VG_CHASE:
        m->vx = (en->home_x - m->x) / 32;
        if (m->vy == 0) m->vy = PX(1);
        if (m->y > PX(VG_VIEW_H - 60)) m->vy = -PX(1);
        if (m->y < PX(60)) m->vy = PX(1);
        if (--en->cooldown <= 0) {
            en->target = vg_nearest_ship(ships, m, 2000, false);
            if (en->target != VG_NONE) {
                en->burst = 4;
                vg_enter(en, VG_ATTACK, 0);
            }
        }
        break;
    case VG_ATTACK: {
        const vg_motion *t = vg_target(s, en->target);
        if (!t || en->burst == 0) {
            vg_enter(en, VG_SEARCH, 10);
            break;
        }
        if (--en->timer > 0) break;
        /* A copy: spawning shots may move the ship's motion element. */
        const vg_motion aim = *t;
        for (int32_t k = -2; k <= 2; k++) vg_fire_at(s, m, &aim, k);
        en->burst--;
        en->timer = 6;
        break;
    }
    case VG_SEARCH:
        if (--en->timer <= 0) {
            en->cooldown = 30;
            vg_enter(en, VG_PATROL, 0);
        }
        break;
    case VG_RETURN:
        vg_return_home(en, m, PX(1));
        if (en->state == VG_PATROL) en->cooldown = 20;
        break;
    default:
        vg_enter(en, VG_RETURN, 0);
        break;
    }
}

void vanguard_ai_think(vanguard_state *s, const cradle_event_sink *events) {
    (void)events;
    cradle_ecs *w = vg_world(s);
    vg_ships ships;
    vg_ships_gather(s, &ships);
    /* Every enemy once, in the order a query over (ENEMY, MOTION) visits
     * them: the enemy pool is the smaller one (every enemy moves), walked
     * from its last element down. Thinking removes nobody and only adds
     * shots, which have no enemy component, so a plain dense walk is that
     * query without its per-entity bookkeeping. */
    uint32_t n = cradle_ecs_count(w, VG_C_ENEMY);
    const cradle_entity *ids = cradle_ecs_entities(w, VG_C_ENEMY);
    vg_enemy *enemies = cradle_ecs_data(w, VG_C_ENEMY);
    for (uint32_t i = n; i-- > 0;) {
        cradle_entity e = ids[i];
        vg_motion *mp = CRADLE_ECS_GET(w, e, VG_C_MOTION, vg_motion);
        if (!mp) continue; /* as the query would (every enemy has a motion) */
        /* Think on copies: firing adds shots, and adding to a component type
         * may move its elements; they are found again afterwards. */
        vg_enemy *ep = &enemies[i];
        vg_enemy en = *ep;
        vg_motion m = *mp;
        uint32_t live = cradle_ecs_live_count(w);
        switch (en.type) {
        case VG_DRIFTER: vg_think_drifter(s, &ships, &en, &m); break;
        case VG_CHASER: vg_think_chaser(s, &ships, &en, &m); break;
        case VG_SHOOTER: vg_think_shooter(s, &ships, &en, &m); break;
        default: vg_think_boss(s, &ships, &en, &m); break;
        }
        if (cradle_ecs_live_count(w) != live) { /* something spawned */
            ids = cradle_ecs_entities(w, VG_C_ENEMY);
            enemies = cradle_ecs_data(w, VG_C_ENEMY);
            ep = &enemies[i];
            mp = CRADLE_ECS_GET(w, e, VG_C_MOTION, vg_motion);
        }
        *ep = en;
        *mp = m;
    }
}

/* ---- a bot player (tests, the benchmark, load tools) ---------------------------
 *
 * Reads the state, never writes it: fires all the time, lines up with the
 * nearest enemy ahead, keeps to its own column, dodges now and then, and
 * presses restart once the game is over. Deterministic in (state, slot, step).
 */

uint32_t vanguard_bot_actions(const vanguard_state *s, uint32_t slot, uint64_t step) {
    assert(slot < VG_MAX_PLAYERS);
    if (s->game_over) return (step % 20u == slot) ? VANGUARD_RESTART : 0u;
    const vg_motion *ship = vg_target(s, (uint8_t)slot);
    if (!ship) return 0;
    const cradle_ecs *w = vg_world_const(s);
    int64_t best = INT64_MAX;
    int32_t goal_y = ship->y;
    cradle_ecs_query q;
    cradle_ecs_query_begin(&q, w, (const uint32_t[]){VG_C_ENEMY, VG_C_MOTION}, 2);
    while (cradle_ecs_query_next(&q)) {
        const vg_motion *m = cradle_ecs_query_get(&q, 1);
        if (m->x <= ship->x) continue;
        int64_t d = vg_dist2(ship->x, ship->y, m->x, m->y);
        if (d < best) {
            best = d;
            goal_y = m->y;
        }
    }
    uint32_t a = VANGUARD_FIRE;
    uint32_t wobble = (uint32_t)((step / 16u) * 2654435761u + slot * 40503u) >> 28;
    if (wobble < 3) goal_y += (wobble == 0 ? -PX(40) : PX(40)); /* dodge */
    if (goal_y < ship->y - PX(3)) a |= VANGUARD_UP;
    if (goal_y > ship->y + PX(3)) a |= VANGUARD_DOWN;
    int32_t goal_x = PX(60 + 24 * (int32_t)slot);
    if (ship->x < goal_x - PX(4)) a |= VANGUARD_RIGHT;
    if (ship->x > goal_x + PX(4)) a |= VANGUARD_LEFT;
    return a;
}

/* The contract's bot entry (game_abi.h, minor 1): vanguard_bot_actions()
 * packed as a client packs its keys. The AI is a function of (state, slot,
 * step), so the host's random bits go unused: two bots differ by their slot,
 * and a test's inputs do not depend on the bot's seed. */
void vanguard_bot(const void *state, uint64_t step, uint32_t slot, uint64_t random, uint8_t *input,
                  uint32_t input_bytes) {
    (void)random;
    if (slot >= VG_MAX_PLAYERS) return; /* the host passes slot < max_players */
    (void)vanguard_input_pack(input, input_bytes, vanguard_bot_actions(state, slot, step));
}
