#ifndef CRADLE_CLIENT_TIMELINE_H
#define CRADLE_CLIENT_TIMELINE_H
/*
 * timeline: --play's seek bar along the top of the window: how far into the
 * session the screen is, the time there and in all ("12:04 / 1:59:58"), and
 * which place a click or a drag on it names. Pure: draws through
 * cradle_draw in screen pixels; no SDL, no clock.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/game_abi.h"
#include "hud.h"

#define CRADLE_TIMELINE_MARGIN 12.0f /* pixels from the window's sides */
#define CRADLE_TIMELINE_TOP 10.0f
#define CRADLE_TIMELINE_HEIGHT 8.0f
#define CRADLE_TIMELINE_GRAB 10.0f   /* a click this far above or below the bar still takes it */

/* The bar's box on a width x height screen. */
cradle_hud_rect cradle_timeline_bar(int width, int height);

/* Whether (x, y) is on the bar (with CRADLE_TIMELINE_GRAB of slack), and
 * its place along it in *fraction, 0..1. */
bool cradle_timeline_hit(int width, int height, float x, float y, double *fraction);

/* The place along the bar of x anywhere (a drag that leaves it), 0..1. */
double cradle_timeline_fraction(int width, int height, float x);

/* "m:ss" or "h:mm:ss" for the time of next_step at steps_per_second. */
void cradle_timeline_clock(char *out, size_t size, uint64_t next_step, uint32_t steps_per_second);

/* Draws the bar for the screen at next_step of a session of `steps` steps,
 * and under it the time there and the session's length. */
void cradle_timeline_draw(const cradle_draw *d, int width, int height, uint64_t next_step, uint64_t steps,
                          uint32_t steps_per_second);

#endif
