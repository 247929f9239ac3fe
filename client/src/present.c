/*
 * present: particles, shake and sound requests (see present.h).
 */
#include "present.h"

#include <math.h>
#include <string.h>

static float present_random(cradle_present *p) { /* [0, 1) */
    p->rng ^= p->rng << 13;
    p->rng ^= p->rng >> 7;
    p->rng ^= p->rng << 17;
    return (float)(p->rng >> 40) / 16777216.0f;
}

void cradle_present_init(cradle_present *p, cradle_particle *storage, uint32_t capacity, uint64_t seed) {
    memset(p, 0, sizeof *p);
    p->particles = storage;
    p->capacity = capacity;
    p->rng = seed ? seed : 0x853c49e6748fea9bull;
}

static void fx_burst(void *context, float x, float y, uint32_t count, uint32_t rgba, float speed, float life) {
    cradle_present *p = context;
    if (!(life > 0.0f) || !(speed >= 0.0f)) return;
    for (uint32_t i = 0; i < count; i++) {
        if (p->count == p->capacity) {
            p->dropped += count - i;
            return;
        }
        float angle = present_random(p) * 6.2831853f;
        float v = speed * (0.2f + 0.8f * present_random(p));
        p->particles[p->count++] = (cradle_particle){.x = x,
                                                     .y = y,
                                                     .vx = cosf(angle) * v,
                                                     .vy = sinf(angle) * v,
                                                     .life = life * (0.5f + 0.5f * present_random(p)),
                                                     .rgba = rgba};
    }
}

static void fx_shake(void *context, float amount) {
    cradle_present *p = context;
    if (amount > 0.0f) p->shake += amount;
    if (p->shake > 40.0f) p->shake = 40.0f;
}

static void fx_sound(void *context, cradle_sound sound, float volume, float pitch) {
    cradle_present *p = context;
    p->sounds++;
    if (p->play) p->play(p->play_context, sound, volume, pitch);
}

cradle_fx cradle_present_fx(cradle_present *p) {
    return (cradle_fx){.context = p, .burst = fx_burst, .shake = fx_shake, .sound = fx_sound};
}

void cradle_present_update(cradle_present *p, float dt) {
    if (dt < 0.0f) dt = 0.0f;
    if (dt > 0.25f) dt = 0.25f; /* a stall must not fling particles across the screen */
    float drag = expf(-2.5f * dt);
    for (uint32_t i = 0; i < p->count;) {
        cradle_particle *q = &p->particles[i];
        q->age += dt;
        if (q->age >= q->life) {
            *q = p->particles[--p->count];
            continue;
        }
        q->x += q->vx * dt;
        q->y += q->vy * dt;
        q->vx *= drag;
        q->vy *= drag;
        i++;
    }
    p->shake *= exp2f(-dt / 0.08f);
    if (p->shake < 0.05f) p->shake = 0.0f;
    p->shake_x = (present_random(p) * 2.0f - 1.0f) * p->shake;
    p->shake_y = (present_random(p) * 2.0f - 1.0f) * p->shake;
}

void cradle_present_draw(const cradle_present *p, const cradle_draw *draw) {
    if (!draw->rect) return;
    for (uint32_t i = 0; i < p->count; i++) {
        const cradle_particle *q = &p->particles[i];
        float fade = 1.0f - q->age / q->life;
        uint32_t alpha = (uint32_t)((float)(q->rgba & 0xFFu) * fade);
        float size = 1.5f + 1.5f * fade;
        draw->rect(draw->context, q->x - size / 2.0f, q->y - size / 2.0f, size, size,
                   (q->rgba & 0xFFFFFF00u) | alpha);
    }
}

float cradle_present_alpha(uint64_t since_step_ns, uint32_t steps_per_second, double rate) {
    if (rate <= 0.0) return 0.999f; /* stopped: the newest state */
    double alpha = (double)since_step_ns * (double)steps_per_second * rate / 1e9;
    return alpha > 0.999 ? 0.999f : alpha < 0.0 ? 0.0f : (float)alpha;
}
