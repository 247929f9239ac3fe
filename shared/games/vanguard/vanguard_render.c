/*
 * vanguard_render: presentation only. render() draws a state through the
 * host's draw interface and react() turns a step's events into particles,
 * shake and sound (seed 000's react), as many and as strong as the state's
 * data (tuning.json "effects") says. Neither writes to the state, so
 * nothing here can change the game; floats are fine on this side.
 *
 * Interpolation: an entity is drawn between its position in `previous` and
 * in `state` by alpha, matched by entity id (index and generation). An
 * entity that `previous` does not hold (just spawned), or any entity when the
 * game restarted in between, is drawn where it is now.
 */
#include <stddef.h>

#include "vanguard_internal.h"

#define VG_PLAYER_COLOURS                                                                  \
    {0x4fc3f7ffu, 0xffb74dffu, 0x81c784ffu, 0xf06292ffu, 0xba68c8ffu, 0xfff176ffu, \
     0x4db6acffu, 0xe0e0e0ffu}

static const uint32_t vg_player_colour[VG_MAX_PLAYERS] = VG_PLAYER_COLOURS;

static uint32_t vg_with_alpha(uint32_t rgba, float a) {
    if (a < 0.0f) a = 0.0f;
    if (a > 1.0f) a = 1.0f;
    return (rgba & 0xFFFFFF00u) | (uint32_t)(a * 255.0f);
}

/* ---- tiny text formatting (no stdio in a game library) ----------------------- */

/* Appends text to buf (size bytes, kept NUL-terminated); returns the new length. */
static size_t vg_append(char *buf, size_t size, size_t at, const char *text) {
    while (*text && at + 1 < size) buf[at++] = *text++;
    buf[at] = '\0';
    return at;
}

/* Appends v in decimal, zero-padded to at least `width` digits. */
static size_t vg_append_u32(char *buf, size_t size, size_t at, uint32_t v, int width) {
    char digits[12];
    int n = 0;
    do {
        digits[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v && n < 11);
    while (n < width && n < 11) digits[n++] = '0';
    while (n && at + 1 < size) buf[at++] = digits[--n];
    buf[at] = '\0';
    return at;
}

/* ---- pieces ---------------------------------------------------------------------- */

static void vg_rect(const cradle_draw *d, float x, float y, float w, float h, uint32_t c) {
    if (d->rect) d->rect(d->context, x, y, w, h, c);
}
static void vg_outline(const cradle_draw *d, float x, float y, float w, float h, uint32_t c) {
    if (d->rect_outline) d->rect_outline(d->context, x, y, w, h, c);
}
static void vg_line(const cradle_draw *d, float x0, float y0, float x1, float y1, uint32_t c) {
    if (d->line) d->line(d->context, x0, y0, x1, y1, c);
}
static void vg_tri(const cradle_draw *d, float x0, float y0, float x1, float y1, float x2,
                   float y2, uint32_t c) {
    if (d->triangle) d->triangle(d->context, x0, y0, x1, y1, x2, y2, c);
}
static void vg_text(const cradle_draw *d, float x, float y, float scale, uint32_t c,
                    const char *t) {
    if (d->text) d->text(d->context, x, y, scale, c, t);
}

/* Hash of a star's index: where it sits and how bright it is. */
static uint32_t vg_star_hash(uint32_t i) {
    uint32_t h = i * 0x9E3779B1u;
    h ^= h >> 15;
    h *= 0x85EBCA77u;
    h ^= h >> 13;
    return h;
}

/* Three layers of stars scrolling left at different speeds; a function of
 * the tick alone, so it needs no state. */
static void vg_starfield(const cradle_draw *d, float t) {
    static const float speed[3] = {0.25f, 0.6f, 1.4f};
    static const uint32_t colour[3] = {0x5a5a7affu, 0x9090b0ffu, 0xe0e0ffffu};
    for (uint32_t layer = 0; layer < 3; layer++) {
        for (uint32_t i = 0; i < 48; i++) {
            uint32_t h = vg_star_hash(layer * 1000u + i);
            float x0 = (float)(h % (uint32_t)VG_VIEW_W);
            float y = (float)((h >> 10) % (uint32_t)VG_VIEW_H);
            float x = x0 - t * speed[layer];
            float span = (float)VG_VIEW_W;
            x -= span * (float)(int32_t)(x / span);
            if (x < 0.0f) x += span;
            float len = 1.0f + (float)layer * 1.5f;
            vg_rect(d, x, y, len, 1.0f, colour[layer]);
        }
    }
}

static void vg_draw_ship(const cradle_draw *d, float x, float y, uint32_t colour, uint32_t tick) {
    vg_tri(d, x + 11.0f, y, x - 9.0f, y - 7.0f, x - 9.0f, y + 7.0f, colour);
    vg_tri(d, x + 2.0f, y, x - 6.0f, y - 3.0f, x - 6.0f, y + 3.0f, 0x10102aFFu);
    float flame = 4.0f + (float)(tick % 4u);
    vg_line(d, x - 9.0f, y - 2.0f, x - 9.0f - flame, y, 0xff8a3dffu);
    vg_line(d, x - 9.0f, y + 2.0f, x - 9.0f - flame, y, 0xffd54fffu);
}

static void vg_draw_enemy(const cradle_draw *d, float x, float y, const vg_enemy *en,
                          uint32_t tick) {
    switch (en->type) {
    case VG_DRIFTER: /* a green diamond */
        vg_tri(d, x - 8.0f, y, x, y - 8.0f, x + 8.0f, y, 0x66bb6affu);
        vg_tri(d, x - 8.0f, y, x, y + 8.0f, x + 8.0f, y, 0x388e3cffu);
        break;
    case VG_CHASER: { /* a red arrowhead, bright while it dashes */
        uint32_t c = en->state == VG_ATTACK ? 0xff5252ffu : 0xc62828ffu;
        vg_tri(d, x - 10.0f, y, x + 8.0f, y - 7.0f, x + 3.0f, y, c);
        vg_tri(d, x - 10.0f, y, x + 3.0f, y, x + 8.0f, y + 7.0f, c);
        if (en->state == VG_CHASE || en->state == VG_ATTACK)
            vg_rect(d, x - 2.0f, y - 1.0f, 3.0f, 2.0f, 0xffff00ffu);
        break;
    }
    case VG_SHOOTER: /* a violet box with a cannon */
        vg_rect(d, x - 10.0f, y - 9.0f, 20.0f, 18.0f, 0x7e57c2ffu);
        vg_outline(d, x - 10.0f, y - 9.0f, 20.0f, 18.0f, 0xd1c4e9ffu);
        vg_rect(d, x - 16.0f, y - 2.0f, 8.0f, 4.0f,
                en->state == VG_ATTACK ? 0xff7043ffu : 0xb39ddbffu);
        break;
    default: { /* the boss: a hull, two fins and a pulsing core */
        vg_rect(d, x - 28.0f, y - 22.0f, 56.0f, 44.0f, 0x455a64ffu);
        vg_outline(d, x - 28.0f, y - 22.0f, 56.0f, 44.0f, 0xb0bec5ffu);
        vg_tri(d, x - 10.0f, y - 22.0f, x + 28.0f, y - 22.0f, x + 24.0f, y - 32.0f, 0x607d8bffu);
        vg_tri(d, x - 10.0f, y + 22.0f, x + 28.0f, y + 22.0f, x + 24.0f, y + 32.0f, 0x607d8bffu);
        float pulse = 6.0f + (float)(tick % 20u) * 0.3f;
        vg_rect(d, x - 30.0f - pulse / 2.0f, y - pulse / 2.0f, pulse, pulse, 0xff1744ffu);
        break;
    }
    }
}

static void vg_draw_hud(const cradle_draw *d, const vanguard_state *s) {
    char buf[48];
    for (uint32_t slot = 0; slot < VG_MAX_PLAYERS; slot++) {
        const vg_player *p = &s->players[slot];
        if (!p->joined) continue;
        float x = 6.0f + (float)(slot % 4u) * 158.0f;
        float y = slot < 4 ? 4.0f : 344.0f;
        size_t at = vg_append(buf, sizeof buf, 0, "P");
        at = vg_append_u32(buf, sizeof buf, at, slot + 1u, 1);
        at = vg_append(buf, sizeof buf, at, p->present ? " " : "-");
        at = vg_append_u32(buf, sizeof buf, at, p->score, 7);
        uint32_t c = p->lives > 0 ? vg_player_colour[slot] : 0x757575ffu;
        vg_text(d, x, y, 1.0f, c, buf);
        for (uint32_t l = 0; l < p->lives && l < VG_MAX_LIVES; l++) {
            float lx = x + 84.0f + (float)l * 8.0f;
            vg_tri(d, lx + 6.0f, y + 4.0f, lx, y, lx, y + 8.0f, c);
        }
        if (p->rapid > 0) vg_text(d, x + 84.0f, y + 10.0f, 1.0f, 0xffd54fffu, "RAPID");
    }
    size_t at = vg_append(buf, sizeof buf, 0, "WAVE ");
    (void)vg_append_u32(buf, sizeof buf, at, s->wave, 1);
    vg_text(d, (float)VG_VIEW_W - 72.0f, 26.0f, 1.0f, 0xffffffffu, buf);
    if (s->game_over) {
        const char *over = "GAME OVER - press R";
        vg_text(d, (float)VG_VIEW_W / 2.0f - 19.0f * 12.0f, 160.0f, 3.0f, 0xff5252ffu, over);
    } else if (s->wave > 0 && s->wave_steps < 120 && s->break_steps == 0) {
        vg_text(d, (float)VG_VIEW_W / 2.0f - 5.0f * 16.0f - 8.0f, 160.0f, 4.0f,
                vg_with_alpha(0xffffffffu, 1.0f - (float)s->wave_steps / 120.0f), buf);
    }
}

void vanguard_render(const void *previous, const void *state, float alpha,
                     const cradle_draw *draw) {
    const vanguard_state *s = state;
    const vanguard_state *prev = previous;
    /* Interpolate only between consecutive steps of the same game. */
    if (prev && (prev->magic != VG_STATE_MAGIC || prev->tick + 1u != s->tick)) prev = NULL;
    if (prev && prev->restarts != s->restarts) prev = NULL;
    const cradle_ecs *w = vg_world_const(s);
    const cradle_ecs *pw = prev ? vg_world_const(prev) : NULL;
    float t = (float)s->tick + alpha;

    if (draw->clear) draw->clear(draw->context, 0x0b0b1effu);
    vg_starfield(draw, t);

    cradle_ecs_query q;
    cradle_ecs_query_begin(&q, w, (const uint32_t[]){VG_C_MOTION, VG_C_TAG}, 2);
    while (cradle_ecs_query_next(&q)) {
        const vg_motion *m = cradle_ecs_query_get(&q, 0);
        const vg_tag *tag = cradle_ecs_query_get(&q, 1);
        float x = (float)m->x / (float)VG_FP, y = (float)m->y / (float)VG_FP;
        const vg_motion *pm = pw ? cradle_ecs_get_const(pw, q.entity, VG_C_MOTION) : NULL;
        if (pm) {
            float px = (float)pm->x / (float)VG_FP, py = (float)pm->y / (float)VG_FP;
            x = px + (x - px) * alpha;
            y = py + (y - py) * alpha;
        }
        switch (tag->kind) {
        case VG_K_SHIP: {
            const vg_player *p = &s->players[tag->owner % VG_MAX_PLAYERS];
            if (p->invulnerable > 0 && (s->tick / 4u) % 2u) break; /* blink */
            vg_draw_ship(draw, x, y, vg_player_colour[tag->owner % VG_MAX_PLAYERS], s->tick);
            break;
        }
        case VG_K_PLAYER_SHOT:
            vg_rect(draw, x - 6.0f, y - 1.5f, 12.0f, 3.0f, 0xffffffffu);
            vg_rect(draw, x - 10.0f, y - 1.0f, 4.0f, 2.0f,
                    vg_player_colour[tag->owner % VG_MAX_PLAYERS]);
            break;
        case VG_K_ENEMY_SHOT:
            vg_tri(draw, x - 4.0f, y, x, y - 4.0f, x + 4.0f, y, 0xff7043ffu);
            vg_tri(draw, x - 4.0f, y, x, y + 4.0f, x + 4.0f, y, 0xffab91ffu);
            break;
        case VG_K_ENEMY: {
            const vg_enemy *en = cradle_ecs_get_const(w, q.entity, VG_C_ENEMY);
            if (en) vg_draw_enemy(draw, x, y, en, s->tick);
            if (en && en->type == VG_BOSS) {
                float bar = (float)(en->hp > 0 ? en->hp : 0);
                vg_rect(draw, x - 28.0f, y + 36.0f, bar > 56.0f ? 56.0f : bar, 3.0f, 0xff1744ffu);
            }
            break;
        }
        case VG_K_EXPLOSION: {
            const vg_ttl *ttl = cradle_ecs_get_const(w, q.entity, VG_C_TTL);
            float total = (float)(VG_EXPLOSION_STEPS + 8 * tag->sub);
            float left = ttl ? (float)ttl->steps - alpha : 0.0f;
            float age = 1.0f - left / total;
            float r = (4.0f + 10.0f * (float)tag->sub) * (0.3f + 1.2f * age);
            vg_rect(draw, x - r * 0.5f, y - r * 0.5f, r, r,
                    vg_with_alpha(0xffd54fffu, 1.0f - age));
            vg_outline(draw, x - r, y - r, 2.0f * r, 2.0f * r,
                       vg_with_alpha(0xff7043ffu, 1.0f - age));
            break;
        }
        case VG_K_PICKUP: {
            uint32_t c = tag->sub == VG_PICKUP_LIFE ? 0x69f0aeffu : 0xffd54fffu;
            vg_outline(draw, x - 7.0f, y - 7.0f, 14.0f, 14.0f, c);
            vg_text(draw, x - 4.0f, y - 4.0f, 1.0f, c, tag->sub == VG_PICKUP_LIFE ? "+" : "R");
            break;
        }
        default:
            break;
        }
    }
    vg_draw_hud(draw, s);
}

/* ---- react ------------------------------------------------------------------------ */

static void vg_burst(const cradle_fx *fx, const cradle_event *e, uint32_t n, uint32_t c,
                     float speed, float life) {
    if (fx->burst) fx->burst(fx->context, (float)e->x, (float)e->y, n, c, speed, life);
}
static void vg_shake(const cradle_fx *fx, float amount) {
    if (fx->shake) fx->shake(fx->context, amount);
}
static void vg_sound(const cradle_fx *fx, cradle_sound cue, float volume, float pitch) {
    if (fx->sound) fx->sound(fx->context, cue, volume, pitch);
}

/* One event's particles and shake as tuning.json has them (vg_effect_def):
 * a count or an amount of 0 asks for none. */
static void vg_effect(const cradle_fx *fx, const cradle_event *e, const vg_effect_def *def,
                      uint32_t c, float speed, float life) {
    if (def->particles > 0) vg_burst(fx, e, def->particles, c, speed, life);
    if (def->shake > 0) vg_shake(fx, (float)def->shake / (float)VG_FP);
}

void vanguard_react(const void *state, const cradle_event *events, uint32_t count,
                    const cradle_fx *fx) {
    const vanguard_state *s = state;
    const vg_data *d = s ? &s->data : &vanguard_data_default;
    const vg_effect_def *fxd = d->effects;
    for (uint32_t i = 0; i < count; i++) {
        const cradle_event *e = &events[i];
        uint32_t pc = e->player < VG_MAX_PLAYERS ? vg_player_colour[e->player] : 0xffffffffu;
        switch (e->kind) {
        case VG_EV_FIRED:
            vg_effect(fx, e, &fxd[VG_FX_FIRED], pc, 60.0f, 0.12f);
            vg_sound(fx, VG_SOUND_SHOT, 0.25f, 1.0f + 0.04f * (float)(e->player % 8u));
            break;
        case VG_EV_ENEMY_DESTROYED:
            if (e->b == VG_BOSS) {
                vg_effect(fx, e, &fxd[VG_FX_BOSS_DESTROYED], 0xff1744ffu, 260.0f, 1.4f);
                vg_sound(fx, VG_SOUND_EXPLOSION, 1.0f, 0.55f);
            } else {
                vg_effect(fx, e, &fxd[VG_FX_ENEMY_DESTROYED],
                          e->b == VG_SHOOTER ? 0xb39ddbffu : 0xffab40ffu, 150.0f, 0.5f);
                vg_sound(fx, VG_SOUND_EXPLOSION, 0.6f, e->b == VG_DRIFTER ? 1.2f : 1.0f);
            }
            break;
        case VG_EV_ENEMY_HIT:
            vg_effect(fx, e, &fxd[VG_FX_ENEMY_HIT], 0xffffffffu, 90.0f, 0.15f);
            vg_sound(fx, VG_SOUND_HIT, 0.25f, 1.6f);
            break;
        case VG_EV_PLAYER_HIT:
            vg_effect(fx, e, &fxd[VG_FX_PLAYER_HIT], pc, 220.0f, 0.9f);
            vg_sound(fx, VG_SOUND_HIT, 1.0f, 0.8f);
            break;
        case VG_EV_PLAYER_DIED:
            vg_effect(fx, e, &fxd[VG_FX_PLAYER_DIED], pc, 120.0f, 1.5f);
            vg_sound(fx, VG_SOUND_EXPLOSION, 1.0f, 0.5f);
            break;
        case VG_EV_WAVE_STARTED: {
            bool boss = d->boss_every && (uint32_t)e->a % d->boss_every == 0;
            vg_sound(fx, VG_SOUND_WAVE, 0.8f, boss ? 0.7f : 1.0f);
            break;
        }
        case VG_EV_NEAR_MISS:
            vg_effect(fx, e, &fxd[VG_FX_NEAR_MISS], 0xffffffffu, 40.0f, 0.25f);
            vg_sound(fx, VG_SOUND_NEAR_MISS, 0.6f, 1.0f);
            break;
        case VG_EV_PICKUP:
            vg_effect(fx, e, &fxd[VG_FX_PICKUP], e->a == VG_PICKUP_LIFE ? 0x69f0aeffu : 0xffd54fffu,
                      100.0f, 0.6f);
            vg_sound(fx, VG_SOUND_PICKUP, 0.8f, e->a == VG_PICKUP_LIFE ? 1.3f : 1.0f);
            break;
        case VG_EV_GAME_OVER:
            vg_effect(fx, e, &fxd[VG_FX_GAME_OVER], 0xffffffffu, 0.0f, 0.0f);
            vg_sound(fx, VG_SOUND_GAME_OVER, 1.0f, 1.0f);
            break;
        case VG_EV_RESTART:
            vg_sound(fx, VG_SOUND_WAVE, 0.8f, 1.5f);
            break;
        case VG_EV_PLAYER_JOINED:
            vg_sound(fx, VG_SOUND_PICKUP, 0.6f, 0.8f);
            break;
        default:
            break;
        }
    }
}
