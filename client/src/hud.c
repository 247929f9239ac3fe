/*
 * hud: see hud.h.
 */
#include "hud.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void text(const cradle_draw *d, float x, float y, float scale, uint32_t rgba, const char *s) {
    if (d->text) d->text(d->context, x, y, scale, rgba, s);
}

void cradle_hud_draw(const cradle_hud_info *info, const cradle_draw *d, int width, int height) {
    char lines[8][64];
    int n = 0;
    snprintf(lines[n++], sizeof lines[0], "STEP %" PRIu64, info->step);
    if (info->rtt_ms >= 0.0) snprintf(lines[n++], sizeof lines[0], "RTT %.1f MS", info->rtt_ms);
    if (info->input_delay >= 0) snprintf(lines[n++], sizeof lines[0], "DELAY %d", info->input_delay);
    snprintf(lines[n++], sizeof lines[0], "PLAYERS %u/%u", info->players, info->player_limit);
    if (info->slot == -1) snprintf(lines[n++], sizeof lines[0], "SPECTATOR");
    else if (info->slot >= 0) snprintf(lines[n++], sizeof lines[0], "SLOT P%d", info->slot + 1);
    if (info->pending > 1) snprintf(lines[n++], sizeof lines[0], "BEHIND %" PRIu64, info->pending);
    snprintf(lines[n++], sizeof lines[0], "FPS %.0f", info->fps);
    if (info->mode) snprintf(lines[n++], sizeof lines[0], "%s", info->mode);
    float scale = width >= 1200 ? 2.0f : 1.0f;
    float line_h = 10.0f * scale, panel_w = 15.0f * 8.0f * scale + 8.0f;
    float x = (float)width - panel_w - 6.0f, y = (float)height - (float)n * line_h - 12.0f;
    if (d->rect) d->rect(d->context, x - 4.0f, y - 4.0f, panel_w, (float)n * line_h + 6.0f, 0x00000099u);
    for (int i = 0; i < n; i++) text(d, x, y + (float)i * line_h, scale, 0xb0bec5ffu, lines[i]);

    if (info->banner) {
        float big = width >= 1200 ? 4.0f : 3.0f;
        float bw = (float)strlen(info->banner) * 8.0f * big;
        float by = (float)height * 0.38f;
        float dw = info->detail ? (float)strlen(info->detail) * 8.0f * scale : 0.0f;
        float box_w = (bw > dw ? bw : dw) + 40.0f;
        if (d->rect)
            d->rect(d->context, ((float)width - box_w) / 2.0f, by - 16.0f, box_w,
                    8.0f * big + 32.0f + (info->detail ? 14.0f * scale : 0.0f), 0x000000ccu);
        text(d, ((float)width - bw) / 2.0f, by, big, info->banner_rgba, info->banner);
        if (info->detail)
            text(d, ((float)width - dw) / 2.0f, by + 8.0f * big + 10.0f, scale, 0xeeeeeeffu, info->detail);
    }
}
