/*
 * cradle-softframe LOG WIDTH HEIGHT OUT: the picture the native client's
 * software renderer (client/src/softdraw.c, through soft_frame.h as the
 * browser's viewer draws) makes of the log's last step,
 * as the window would once the picture has settled: the game's render()
 * between the state before that step and after it at the highest alpha
 * (cradle_present_alpha's 0.999), no particles or shake, letterboxed, no
 * HUD. OUT gets width x height pixels as R, G, B, A bytes (what a canvas's
 * ImageData holds). The browser viewer's test (viewer_chromium.sh) compares
 * the page's canvas with it: the same rasterizer compiled twice.
 * The log's builds come from its archive (LOG.builds/), as cradle-replay's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cradle/replay.h"
#include "present.h"
#include "soft_frame.h"

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: cradle-softframe LOG WIDTH HEIGHT OUT\n");
        return 2;
    }
    int width = atoi(argv[2]), height = atoi(argv[3]);
    if (width < 1 || height < 1 || width > 4096 || height > 4096) {
        fprintf(stderr, "cradle-softframe: size %sx%s: 1..4096 each\n", argv[2], argv[3]);
        return 2;
    }
    static cradle_replay r;
    cradle_replay_config config = {.log_path = argv[1], .keep_previous = true};
    if (cradle_replay_open(&r, &config) != 0) {
        fprintf(stderr, "cradle-softframe: %s\n", r.message);
        return 1;
    }
    cradle_replay_item item;
    int rc;
    while ((rc = cradle_replay_next(&r, &item)) == 1) {}
    if (rc < 0 || r.hash_mismatches) {
        fprintf(stderr, "cradle-softframe: %s\n", rc < 0 ? r.message : "a state hash differs from the log's");
        cradle_replay_close(&r);
        return 1;
    }
    const cradle_game_contract *g = r.sim.contract;
    uint32_t *pixels = malloc((size_t)width * (size_t)height * 4u);
    if (!pixels) return 1;
    static cradle_softdraw sd;
    cradle_softdraw_init(&sd, pixels, width, height, width, g->view_width, g->view_height);
    cradle_soft_frame f = {.game = g,
                           .previous = r.sim.has_previous ? r.sim.previous : r.sim.state,
                           .state = r.sim.state,
                           .alpha = cradle_present_alpha(UINT64_MAX / 2u, g->steps_per_second, 1.0)};
    cradle_soft_frame_draw(&sd, &f);
    FILE *out = fopen(argv[4], "wb");
    size_t bytes = (size_t)width * (size_t)height * 4u;
    bool ok = out && fwrite(pixels, 1, bytes, out) == bytes;
    if (out && fclose(out) != 0) ok = false;
    if (!ok) fprintf(stderr, "cradle-softframe: cannot write %s\n", argv[4]);
    else
        fprintf(stderr, "cradle-softframe: step %" PRIu64 " of build %s, %dx%d, to %s\n", r.sim.next_step - 1u,
                r.build_id, width, height, argv[4]);
    free(pixels);
    cradle_replay_close(&r);
    return ok ? 0 : 1;
}
