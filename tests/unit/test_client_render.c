/*
 * cradle-client's rendering against a golden image hash: a known vanguard
 * state (seed 7, 4 bot players, 300 steps), drawn by the game's render()
 * through the client's SDL drawing (client/src/render_sdl.c), with particles
 * and the HUD, into an SDL_Surface with SDL's software renderer (no window,
 * no display: the software renderer is deterministic). The pixels' hash must
 * equal the one in client/render_golden.txt ("<vanguard build id> <16 hex>":
 * the hash, and the vanguard build it was blessed with). A vanguard edit that
 * leaves the picture alone keeps passing; one that changes it fails, naming
 * both builds.
 *
 * Re-bless after an intended change to the client's drawing or to vanguard:
 *   CRADLE_BLESS_RENDER=1 build/<dir>/tests/test_client_render
 * (it rewrites the file with this build and hash). CRADLE_RENDER_DUMP=out.bmp
 * also saves the image to look at.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <SDL.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/cradle.h"
#include "hud.h"
#include "present.h"
#include "render_sdl.h"
#include "vanguard_input.h"
#include "vanguard_internal.h"

#define W 960
#define H 540

static uint64_t render_scene(SDL_Surface **out_surface) {
    const cradle_game_contract *k = vanguard_contract();
    void *state = aligned_alloc(k->state_align, (k->state_size + k->state_align - 1) / k->state_align * k->state_align);
    void *previous = aligned_alloc(k->state_align, (k->state_size + k->state_align - 1) / k->state_align * k->state_align);
    assert_non_null(state);
    assert_non_null(previous);
    cradle_sim sim;
    cradle_sim_config sc = {.state = state, .previous = previous,
                            .state_capacity = (k->state_size + k->state_align - 1) / k->state_align * k->state_align,
                            .hash = cradle_hash64};
    assert_int_equal(cradle_sim_init(&sim, &sc, k, NULL, 0), 0);
    assert_int_equal(cradle_sim_start(&sim, 7, 4), 0);
    uint32_t size = cradle_snapshot_size(k->max_players, k->input_bytes);
    uint8_t snapshot[64];
    assert_true(size <= sizeof snapshot);
    for (uint64_t s = 0; s < 300; s++) {
        memset(snapshot, 0, size);
        for (uint32_t slot = 0; slot < 4; slot++) {
            snapshot[slot / 8] |= (uint8_t)(1u << (slot % 8));
            uint32_t actions = vanguard_bot_actions(state, slot, s);
            assert_true(vanguard_input_pack(snapshot + CRADLE_PRESENCE_BYTES(k->max_players) + slot, 1, actions));
        }
        cradle_sim_step(&sim, snapshot);
    }
    SDL_Surface *surface = SDL_CreateRGBSurfaceWithFormat(0, W, H, 32, SDL_PIXELFORMAT_RGBA32);
    assert_non_null(surface);
    SDL_Renderer *renderer = SDL_CreateSoftwareRenderer(surface);
    assert_non_null(renderer);
    cradle_render_sdl r;
    char message[256];
    assert_int_equal(cradle_render_sdl_init(&r, renderer, k->view_width, k->view_height, message, sizeof message), 0);
    static cradle_particle storage[256];
    cradle_present p;
    cradle_present_init(&p, storage, 256, 99);
    cradle_fx fx = cradle_present_fx(&p);
    fx.burst(fx.context, 320.0f, 180.0f, 64, 0xffab40ffu, 150.0f, 1.0f);
    cradle_present_update(&p, 0.1f);
    p.shake_x = p.shake_y = 0.0f;
    cradle_render_sdl_frame(&r, 0.0f, 0.0f);
    cradle_draw world = cradle_render_sdl_world(&r), screen = cradle_render_sdl_screen(&r);
    SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255);
    SDL_RenderClear(renderer);
    k->render(previous, state, 0.5f, &world);
    cradle_present_draw(&p, &world);
    cradle_render_sdl_letterbox(&r);
    cradle_hud_info hud = {.step = 300, .rtt_ms = 1.25, .input_delay = 3, .players = 4, .player_limit = 8,
                           .slot = 0, .pending = 0, .fps = 60.0, .banner = "DESYNC",
                           .detail = "FIRST DIFFERING STEP 299", .banner_rgba = 0xffab40ffu};
    cradle_hud_draw(&hud, &screen, r.output_w, r.output_h);
    SDL_RenderPresent(renderer);

    /* Hash the visible pixels row by row (the pitch may pad rows). */
    uint8_t *packed = malloc((size_t)W * H * 4);
    assert_non_null(packed);
    for (int y = 0; y < H; y++)
        memcpy(packed + (size_t)y * W * 4, (uint8_t *)surface->pixels + (size_t)y * (size_t)surface->pitch, (size_t)W * 4);
    uint64_t hash = cradle_hash64(packed, (size_t)W * H * 4);
    /* Not blank: the HUD, ships and background differ. */
    uint32_t distinct = 0, seen[16] = {0};
    for (size_t i = 0; i < (size_t)W * H && distinct < 16; i += 7) {
        uint32_t px;
        memcpy(&px, packed + i * 4, 4);
        bool known = false;
        for (uint32_t j = 0; j < distinct; j++) known |= seen[j] == px;
        if (!known) seen[distinct++] = px;
    }
    assert_true(distinct >= 8);
    free(packed);
    cradle_render_sdl_deinit(&r);
    SDL_DestroyRenderer(renderer);
    free(state);
    free(previous);
    *out_surface = surface;
    return hash;
}

static void test_render_matches_golden(void **unused) {
    (void)unused;
    SDL_Surface *surface = NULL;
    uint64_t hash = render_scene(&surface);
    uint64_t again = 0;
    SDL_Surface *second = NULL;
    again = render_scene(&second);
    assert_true(hash == again); /* deterministic within the process */
    const char *dump = getenv("CRADLE_RENDER_DUMP");
    if (dump) assert_int_equal(SDL_SaveBMP(surface, dump), 0);
    SDL_FreeSurface(surface);
    SDL_FreeSurface(second);

    const char *build = vanguard_contract()->build_id;
    char blessed_build[80] = "";
    uint64_t golden = 0;
    bool found = false;
    FILE *f = fopen(CRADLE_RENDER_GOLDEN, "r");
    if (f) {
        found = fscanf(f, "%79s %" SCNx64, blessed_build, &golden) == 2;
        fclose(f);
    }
    if (getenv("CRADLE_BLESS_RENDER")) {
        f = fopen(CRADLE_RENDER_GOLDEN, "w");
        assert_non_null(f);
        fprintf(f, "%s %016" PRIx64 "\n", build, hash);
        fclose(f);
        print_message("blessed %s %016" PRIx64 " in %s\n", build, hash, CRADLE_RENDER_GOLDEN);
        return;
    }
    if (!found)
        fail_msg("no golden render hash in %s (this image: %016" PRIx64 "); bless with CRADLE_BLESS_RENDER=1",
                 CRADLE_RENDER_GOLDEN, hash);
    if (hash != golden)
        fail_msg("render hash %016" PRIx64 " differs from the golden %016" PRIx64
                 " (blessed with vanguard build %s, this is build %s%s); look with CRADLE_RENDER_DUMP=x.bmp, "
                 "and if the change is intended bless with CRADLE_BLESS_RENDER=1",
                 hash, golden, blessed_build, build,
                 strcmp(blessed_build, build) != 0 ? ": the game changed since" : ": the client's drawing changed");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_matches_golden),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
