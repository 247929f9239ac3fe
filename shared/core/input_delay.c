/*
 * input_delay: the adaptive input delay's rules (cradle/input_delay.h).
 */
#include "cradle/input_delay.h"

#include <assert.h>

static uint16_t clamp(int64_t v, uint16_t max) {
    if (v < 1) return 1;
    if (v > max) return max;
    return (uint16_t)v;
}

void cradle_input_delay_init(cradle_input_delay *d, uint16_t initial, uint16_t max, uint32_t steps_per_second,
                             uint64_t now) {
    assert(d && max >= 1 && steps_per_second >= 1);
    *d = (cradle_input_delay){.max = max,
                              .window_steps = steps_per_second,
                              .window_end = now + steps_per_second,
                              /* a joining client's first inputs come while it catches up */
                              .raise_hold = now + steps_per_second,
                              .window_min = INT64_MAX,
                              .calm_min = INT64_MAX,
                              .last_slack = INT64_MAX,
                              .last_window_min = INT64_MAX};
    d->delay = clamp(initial, max);
}

/* The delay becomes `to` at step now (a change, asserted). */
static uint16_t change(cradle_input_delay *d, uint16_t to, uint64_t now) {
    assert(to != d->delay);
    if (to > d->delay) {
        d->raised++;
        d->raise_hold = now + to + d->window_steps / 4u;
        d->lower_hold = now + (uint64_t)CRADLE_INPUT_DELAY_LOWER_HOLD_WINDOWS * d->window_steps;
    } else {
        d->lowered++;
    }
    d->delay = to;
    d->calm = 0;
    d->calm_min = INT64_MAX;
    d->window_min = INT64_MAX; /* this window measured the old delay */
    return to;
}

uint16_t cradle_input_delay_observe(cradle_input_delay *d, uint64_t newest, uint64_t now) {
    assert(d);
    int64_t slack = newest >= now ? (int64_t)(newest - now) : -(int64_t)(now - newest);
    d->last_slack = slack;
    if (slack < d->window_min) d->window_min = slack;
    if (slack >= 0 || now < d->raise_hold) return 0;
    uint16_t to = clamp((int64_t)d->delay - slack + 1, d->max);
    return to == d->delay ? 0 : change(d, to, now);
}

uint16_t cradle_input_delay_tick(cradle_input_delay *d, uint64_t now) {
    assert(d);
    if (now < d->window_end) return 0;
    d->window_end = now + d->window_steps;
    int64_t min = d->window_min;
    d->window_min = INT64_MAX;
    if (min == INT64_MAX) return 0; /* no input in it: nothing learnt */
    d->last_window_min = min;
    if (min < 1) {
        d->calm = 0;
        d->calm_min = INT64_MAX;
        return 0;
    }
    d->calm++;
    if (min < d->calm_min) d->calm_min = min;
    if (d->calm < CRADLE_INPUT_DELAY_CALM_WINDOWS || now < d->lower_hold || d->delay == 1) return 0;
    int64_t to_steps = (int64_t)d->delay - d->calm_min;
    /* the round trip plus a quarter step, in whole steps (rounded up) */
    int64_t floor = ((int64_t)d->rtt_us * d->window_steps + 250000 + 999999) / 1000000;
    if (to_steps < floor) to_steps = floor;
    uint16_t to = clamp(to_steps, d->max);
    return to == d->delay ? 0 : change(d, to, now);
}
