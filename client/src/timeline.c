/*
 * timeline: --play's seek bar (see timeline.h).
 */
#include "timeline.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define TRACK_RGBA 0x101418ffu
#define PLAYED_RGBA 0x4fc3f7ffu
#define THUMB_RGBA 0xeceff1ffu

cradle_hud_rect cradle_timeline_bar(int width, int height) {
    (void)height;
    float w = (float)width - 2.0f * CRADLE_TIMELINE_MARGIN;
    return (cradle_hud_rect){CRADLE_TIMELINE_MARGIN, CRADLE_TIMELINE_TOP, w > 1.0f ? w : 1.0f,
                             CRADLE_TIMELINE_HEIGHT};
}

double cradle_timeline_fraction(int width, int height, float x) {
    cradle_hud_rect bar = cradle_timeline_bar(width, height);
    double f = ((double)x - (double)bar.x) / (double)bar.w;
    return f < 0.0 ? 0.0 : f > 1.0 ? 1.0 : f;
}

bool cradle_timeline_hit(int width, int height, float x, float y, double *fraction) {
    cradle_hud_rect bar = cradle_timeline_bar(width, height);
    if (x < bar.x || x > bar.x + bar.w || y < bar.y - CRADLE_TIMELINE_GRAB || y > bar.y + bar.h + CRADLE_TIMELINE_GRAB)
        return false;
    *fraction = cradle_timeline_fraction(width, height, x);
    return true;
}

void cradle_timeline_clock(char *out, size_t size, uint64_t next_step, uint32_t steps_per_second) {
    uint64_t s = steps_per_second ? next_step / steps_per_second : 0;
    if (s >= 3600u)
        snprintf(out, size, "%" PRIu64 ":%02u:%02u", s / 3600u, (unsigned)(s / 60u % 60u), (unsigned)(s % 60u));
    else
        snprintf(out, size, "%u:%02u", (unsigned)(s / 60u), (unsigned)(s % 60u));
}

void cradle_timeline_draw(const cradle_draw *d, int width, int height, uint64_t next_step, uint64_t steps,
                          uint32_t steps_per_second) {
    cradle_hud_rect bar = cradle_timeline_bar(width, height);
    uint64_t end = steps;
    double f = end ? (double)(next_step < end ? next_step : end) / (double)end : 0.0;
    float played = (float)(f * (double)bar.w);
    if (d->rect) {
        d->rect(d->context, bar.x, bar.y, bar.w, bar.h, TRACK_RGBA);
        if (played > 0.0f) d->rect(d->context, bar.x, bar.y, played, bar.h, PLAYED_RGBA);
        d->rect(d->context, bar.x + played - 2.0f, bar.y - 3.0f, 4.0f, bar.h + 6.0f, THUMB_RGBA);
    }
    char now[32], all[32], text[80];
    cradle_timeline_clock(now, sizeof now, next_step, steps_per_second);
    cradle_timeline_clock(all, sizeof all, end, steps_per_second);
    snprintf(text, sizeof text, "%s / %s", now, all);
    float scale = width >= 1200 ? 2.0f : 1.0f;
    if (d->rect) d->rect(d->context, bar.x, bar.y + bar.h + 4.0f, (float)strlen(text) * 8.0f * scale + 8.0f,
                         8.0f * scale + 6.0f, TRACK_RGBA);
    if (d->text) d->text(d->context, bar.x + 4.0f, bar.y + bar.h + 7.0f, scale, CRADLE_HUD_TEXT_RGBA, text);
}
