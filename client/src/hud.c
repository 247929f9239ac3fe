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

/* The panel's lines, into lines; returns how many. */
static int panel_lines(const cradle_hud_info *info, char lines[CRADLE_HUD_LINES][64]) {
    int n = 0;
    snprintf(lines[n++], 64, "STEP %" PRIu64, info->step);
    if (info->rtt_ms >= 0.0) snprintf(lines[n++], 64, "RTT %.1f MS", info->rtt_ms);
    if (info->input_delay >= 0) snprintf(lines[n++], 64, "DELAY %d", info->input_delay);
    snprintf(lines[n++], 64, "PLAYERS %u/%u", info->players, info->player_limit);
    if (info->slot == -1) snprintf(lines[n++], 64, "SPECTATOR");
    else if (info->slot >= 0) snprintf(lines[n++], 64, "SLOT P%d", info->slot + 1);
    if (info->pending > 1) snprintf(lines[n++], 64, "BEHIND %" PRIu64, info->pending);
    if (info->window > 0 && info->ahead < 0) {
        snprintf(lines[n++], 64, "PREDICTION OFF");
    } else if (info->window > 0) {
        snprintf(lines[n++], 64, "AHEAD %d/%u", info->ahead, info->window);
        snprintf(lines[n++], 64, "ROLLBACK %.0f/S D%.1f M%u", info->rollbacks_per_s, info->mean_depth,
                 info->max_depth);
    }
    snprintf(lines[n++], 64, "FPS %.0f", info->fps);
    if (info->mode) snprintf(lines[n++], 64, "%s", info->mode);
    if (info->build) snprintf(lines[n++], 64, "BUILD %.16s", info->build);
    return n;
}

/* The panel's geometry: its box, and where its text starts. At least 15
 * characters wide, wider for a longer line, so that no text leaves it. */
static cradle_hud_rect panel_layout(char lines[CRADLE_HUD_LINES][64], int n, int width, int height, float *text_x,
                                    float *text_y, float *line_h, float *scale) {
    *scale = width >= 1200 ? 2.0f : 1.0f;
    *line_h = 10.0f * *scale;
    size_t longest = 15;
    for (int i = 0; i < n; i++)
        if (strlen(lines[i]) > longest) longest = strlen(lines[i]);
    float panel_w = (float)longest * 8.0f * *scale + 8.0f;
    *text_x = (float)width - panel_w - 6.0f;
    *text_y = (float)height - (float)n * *line_h - 12.0f;
    return (cradle_hud_rect){*text_x - 4.0f, *text_y - 4.0f, panel_w, (float)n * *line_h + 6.0f};
}

cradle_hud_rect cradle_hud_panel(const cradle_hud_info *info, int width, int height) {
    char lines[CRADLE_HUD_LINES][64];
    float x, y, line_h, scale;
    return panel_layout(lines, panel_lines(info, lines), width, height, &x, &y, &line_h, &scale);
}

void cradle_hud_draw(const cradle_hud_info *info, const cradle_draw *d, int width, int height) {
    char lines[CRADLE_HUD_LINES][64];
    int n = panel_lines(info, lines);
    float x, y, line_h, scale;
    cradle_hud_rect panel = panel_layout(lines, n, width, height, &x, &y, &line_h, &scale);
    /* Opaque: the game's shapes (shots, particles) pass under the panel and
     * must not show through it, or bright ones cover the text. */
    if (d->rect) d->rect(d->context, panel.x, panel.y, panel.w, panel.h, CRADLE_HUD_PANEL_RGBA);
    for (int i = 0; i < n; i++) text(d, x, y + (float)i * line_h, scale, CRADLE_HUD_TEXT_RGBA, lines[i]);

    if (info->banner) {
        float big = width >= 1200 ? 4.0f : 3.0f;
        float bw = (float)strlen(info->banner) * 8.0f * big;
        float by = (float)height * 0.38f;
        float dw = info->detail ? (float)strlen(info->detail) * 8.0f * scale : 0.0f;
        float box_w = (bw > dw ? bw : dw) + 40.0f;
        if (d->rect)
            d->rect(d->context, ((float)width - box_w) / 2.0f, by - 16.0f, box_w,
                    8.0f * big + 32.0f + (info->detail ? 14.0f * scale : 0.0f), CRADLE_HUD_PANEL_RGBA);
        text(d, ((float)width - bw) / 2.0f, by, big, info->banner_rgba, info->banner);
        if (info->detail)
            text(d, ((float)width - dw) / 2.0f, by + 8.0f * big + 10.0f, scale, 0xeeeeeeffu, info->detail);
    }
}

void cradle_client_replay_hud(const cradle_replay *r, const uint8_t *snapshot, cradle_hud_info *hud) {
    uint32_t players = 0;
    if (r && r->steps && snapshot)
        for (uint32_t slot = 0; slot < r->sim.contract->max_players; slot++)
            players += cradle_snapshot_present(snapshot, slot);
    *hud = (cradle_hud_info){.step = r ? r->sim.next_step : 0,
                             .rtt_ms = -1.0,
                             .input_delay = -1,
                             .players = players,
                             .player_limit = r ? r->reader.header.player_count : 0,
                             .slot = -2};
}
