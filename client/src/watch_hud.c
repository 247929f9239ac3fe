/*
 * watch_hud: a broadcast viewer's HUD text (see watch_hud.h).
 */
#include "watch_hud.h"

#include <inttypes.h>
#include <stdio.h>

void cradle_watch_hud_text(const cradle_watch_hud_in *in, cradle_watch_hud_out *out) {
    out->banner = NULL;
    out->detail[0] = '\0';
    out->banner_rgba = in->error[0] || in->mismatch_step ? 0xff5252ffu : in->ended ? 0x69f0aeffu : 0xffab40ffu;
    if (!in->playing) {
        snprintf(out->mode, sizeof out->mode, "BROADCAST");
        out->banner = in->error[0] ? "BROADCAST ERROR" : "WAITING FOR THE BROADCAST";
        snprintf(out->detail, sizeof out->detail, "%.100s",
                 in->error[0] ? in->error : in->fetch_error[0] ? in->fetch_error : in->url);
        return;
    }
    snprintf(out->mode, sizeof out->mode, "BROADCAST %.1f S BEHIND", (double)in->behind_ms / 1000.0);
    if (in->error[0]) {
        out->banner = "BROADCAST ERROR";
        snprintf(out->detail, sizeof out->detail, "%.100s", in->error);
    } else if (in->mismatch_step) {
        out->banner = "HASH MISMATCH";
        snprintf(out->detail, sizeof out->detail, "AT STEP %" PRIu64, in->mismatch_step - 1u);
    } else if (in->ended) {
        out->banner = "BROADCAST ENDED";
        snprintf(out->detail, sizeof out->detail, "%" PRIu64 " STEPS SHOWN", in->steps);
    } else if (in->buffering) {
        out->banner = "BUFFERING";
        snprintf(out->detail, sizeof out->detail, "%.100s",
                 in->fetch_error[0] ? in->fetch_error : "WAITING FOR THE NEXT FRAGMENT");
    }
}
