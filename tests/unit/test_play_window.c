/*
 * --play's window scrubbing a recording: cradle_client_play() runs its real
 * window loop (SDL's dummy video driver: a window and a software renderer,
 * nothing shown) on a counter session across two hot reloads (+1, +5 from
 * step RELOAD_AT, +1 again from BACK_AT), fed SDL events pushed before it
 * starts: clicks on the seek bar, J (10 s back), Left (a step back while
 * paused), End, then Escape. Each run's summary (stdout) must name the step
 * the moves lead to and the state there: the one a replay from step 0 has
 * at that step, with the build of that step. The first run builds the log's
 * keyframe index; the others load it and seek through its keyframes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <SDL.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cradle/cradle.h"
#include "options.h"
#include "play.h"
#include "timeline.h"

#define STEPS 3000u
#define RELOAD_AT 1000u /* to the +5 build */
#define BACK_AT 2000u   /* to the +1 build again */
#define WIDTH 1000
#define HEIGHT 600
#define SPS 60u         /* the counter's steps per second */

static char dir[256], log_path[320], out_path[320];

/* The session, as a server records it: the sim steps the loaded build,
 * the writer records steps, hashes (every 30) and the reloads. */
static void record_session(void) {
    static cradle_reload libs[2];
    char message[256];
    cradle_reload_config rc1 = {.path = RELOAD_LIB_INC1, .copy_dir = dir, .state_capacity = 4096};
    cradle_reload_config rc5 = {.path = RELOAD_LIB_INC5, .copy_dir = dir, .state_capacity = 4096};
    assert_int_equal(cradle_reload_open(&libs[0], &rc1, 0, message, sizeof message), 0);
    assert_int_equal(cradle_reload_open(&libs[1], &rc5, 0, message, sizeof message), 0);
    static _Alignas(64) uint8_t state[4096];
    cradle_sim sim;
    cradle_sim_config sc = {.state = state, .state_capacity = sizeof state, .state_align = 64, .hash = cradle_hash64};
    assert_int_equal(cradle_sim_init(&sim, &sc, cradle_reload_contract(&libs[0]), message, sizeof message), 0);
    assert_int_equal(cradle_sim_start(&sim, 5, 2), 0);
    cradle_log_header h;
    assert_int_equal(cradle_log_header_from_contract(&h, sim.contract, 5, 2, 0, 30), 0);
    static cradle_log_writer w;
    cradle_log_writer_config wc = {.sync_inline = true};
    assert_int_equal(cradle_log_writer_open(&w, log_path, &h, &wc, RELOAD_LIB_INC1, message, sizeof message), 0);
    uint8_t snapshot[16] = {0};
    for (uint64_t s = 0; s < STEPS; s++) {
        if (s == RELOAD_AT || s == BACK_AT) {
            cradle_reload *to = &libs[s == RELOAD_AT ? 1 : 0];
            assert_int_equal(cradle_sim_swap(&sim, cradle_reload_contract(to), message, sizeof message), 0);
            assert_int_equal(cradle_log_writer_append_reload(&w, s, sim.contract->build_id,
                                                             s == RELOAD_AT ? RELOAD_LIB_INC5 : RELOAD_LIB_INC1),
                             0);
        }
        snapshot[0] = 3;
        snapshot[1] = (uint8_t)(s % 7u);
        snapshot[2] = (uint8_t)(s % 5u);
        assert_int_equal(cradle_log_writer_append_step(&w, s, snapshot), 0);
        cradle_sim_step(&sim, snapshot);
        if ((s + 1) % 30 == 0) assert_int_equal(cradle_log_writer_append_hash(&w, s, cradle_sim_hash(&sim)), 0);
    }
    assert_int_equal(cradle_log_writer_close(&w, cradle_sim_hash(&sim)), 0);
    cradle_reload_close(&libs[0]);
    cradle_reload_close(&libs[1]);
}

static int setup(void **unused) {
    (void)unused;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/cradle-play-window-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) return -1;
    snprintf(log_path, sizeof log_path, "%s/session.log", dir);
    snprintf(out_path, sizeof out_path, "%s/summary.out", dir);
    record_session();
    if (setenv("SDL_VIDEODRIVER", "dummy", 1) != 0 || setenv("SDL_AUDIODRIVER", "dummy", 1) != 0) return -1;
    return 0;
}

static int teardown(void **unused) {
    (void)unused;
    cradle_os_remove_tree(dir);
    return 0;
}

/* The state and build a replay from step 0 has at `step`, its records
 * handled as after a step (what --play shows there). */
static void reference(uint64_t step, uint64_t *hash, char *build, size_t build_size) {
    static cradle_replay r;
    int rc = cradle_replay_open(&r, &(cradle_replay_config){.log_path = log_path, .copy_dir = dir});
    if (rc != 0) fail_msg("%s", r.message);
    int sought = cradle_replay_seek(&r, step);
    assert_true(sought == 0 || (sought == CRADLE_ERANGE && step == STEPS));
    assert_int_equal(cradle_replay_catch_up(&r), 0);
    assert_int_equal(r.keyframe_seeks, 0);
    *hash = cradle_sim_hash(&r.sim);
    snprintf(build, build_size, "%s", r.build_id);
    cradle_replay_close(&r);
}

static void push_key(SDL_Keycode key) {
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = key;
    e.key.keysym.scancode = SDL_GetScancodeFromKey(key);
    assert_int_equal(SDL_PushEvent(&e), 1);
    e.type = SDL_KEYUP;
    e.key.state = SDL_RELEASED;
    assert_int_equal(SDL_PushEvent(&e), 1);
}

/* Where a click at `fraction` of the bar lands: a whole pixel. */
static int click_x(double fraction) {
    cradle_hud_rect bar = cradle_timeline_bar(WIDTH, HEIGHT);
    return (int)(bar.x + (float)fraction * bar.w + 0.5f);
}

/* The step a click at `fraction` names: the pixel's place along the bar. */
static uint64_t click_step(double fraction) {
    return (uint64_t)(cradle_timeline_fraction(WIDTH, HEIGHT, (float)click_x(fraction)) * (double)STEPS + 0.5);
}

static void push_click(double fraction) {
    cradle_hud_rect bar = cradle_timeline_bar(WIDTH, HEIGHT);
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEBUTTONDOWN;
    e.button.button = SDL_BUTTON_LEFT;
    e.button.state = SDL_PRESSED;
    e.button.x = click_x(fraction);
    e.button.y = (int)(bar.y + bar.h / 2.0f);
    assert_int_equal(SDL_PushEvent(&e), 1);
    e.type = SDL_MOUSEBUTTONUP;
    e.button.state = SDL_RELEASED;
    assert_int_equal(SDL_PushEvent(&e), 1);
}

typedef struct summary {
    uint64_t next_step, keyframe_seeks, hash;
    char build[CRADLE_GAME_BUILD_ID_MAX + 1], index[16], verdict[16];
} summary;

static void text_field(const char *line, const char *key, char *out, size_t size) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    const char *at = strstr(line, pattern);
    if (!at) fail_msg("no %s in %s", key, line);
    at += strlen(pattern);
    size_t n = strcspn(at, "\"");
    assert_true(n < size);
    memcpy(out, at, n);
    out[n] = '\0';
}

static uint64_t number_field(const char *line, const char *key) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *at = strstr(line, pattern);
    if (!at) fail_msg("no %s in %s", key, line);
    return strtoull(at + strlen(pattern), NULL, 10);
}

/* Runs --play LOG in its window (from --seek `from` when given) with the
 * events `push` queues for its first frame, after Space (paused: no step
 * runs on the clock, however slow the frame) and before Escape; returns its
 * summary. */
static summary play(bool seek_given, uint64_t from, void (*push)(void)) {
    /* SDL's event queue lives while SDL is up: the window's own SDL_Init
     * keeps it, so the events pushed here wait for the loop's first poll. */
    assert_int_equal(SDL_Init(SDL_INIT_VIDEO), 0);
    push_key(SDLK_SPACE);
    push();
    push_key(SDLK_ESCAPE);
    cradle_client_options o = {.play = log_path, .mute = true, .width = WIDTH, .height = HEIGHT,
                               .seek = from, .seek_given = seek_given};
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    assert_true(dup2(fd, STDOUT_FILENO) >= 0);
    close(fd);
    int status = cradle_client_play(&o);
    fflush(stdout);
    assert_true(dup2(saved, STDOUT_FILENO) >= 0);
    close(saved);
    SDL_Quit();
    assert_int_equal(status, 0);
    char line[1024] = "";
    FILE *f = fopen(out_path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f) && !strstr(line, "\"event\":\"played\"")) {
    }
    fclose(f);
    assert_non_null(strstr(line, "\"event\":\"played\""));
    summary s;
    s.next_step = number_field(line, "next_step");
    s.keyframe_seeks = number_field(line, "keyframe_seeks");
    char hash[32];
    text_field(line, "final_hash", hash, sizeof hash);
    s.hash = strtoull(hash, NULL, 16);
    text_field(line, "build", s.build, sizeof s.build);
    text_field(line, "index", s.index, sizeof s.index);
    text_field(line, "verdict", s.verdict, sizeof s.verdict);
    return s;
}

static void expect_at(const summary *s, uint64_t step) {
    uint64_t hash;
    char build[CRADLE_GAME_BUILD_ID_MAX + 1];
    reference(step, &hash, build, sizeof build);
    if (s->next_step != step) fail_msg("at step %" PRIu64 ", expected %" PRIu64, s->next_step, step);
    if (s->hash != hash) fail_msg("step %" PRIu64 ": state %016" PRIx64 ", a replay from 0 has %016" PRIx64, step, s->hash, hash);
    assert_string_equal(s->build, build);
    assert_string_equal(s->verdict, "ok");
}

static void click_at_60_percent(void) { push_click(0.6); }
static void two_jumps_back(void) {
    push_key(SDLK_j);
    push_key(SDLK_j);
}
static void two_steps_back(void) {
    push_key(SDLK_LEFT);
    push_key(SDLK_COMMA);
}
static void to_the_end(void) { push_key(SDLK_END); }
static void click_at_10_percent(void) { push_click(0.1); }

static void test_the_window_scrubs_back_and_forth_across_the_reloads(void **unused) {
    (void)unused;
    char index_path[400];
    snprintf(index_path, sizeof index_path, "%s.index", log_path);
    assert_int_equal(access(index_path, F_OK), -1);

    /* a click on the bar at 60%: step 1800 (to the pixel), under the +5 build; the index is built first */
    summary s = play(false, 0, click_at_60_percent);
    expect_at(&s, click_step(0.6));
    assert_string_equal(s.index, "built");
    assert_int_equal(access(index_path, F_OK), 0);
    assert_int_equal(s.keyframe_seeks, 1); /* from the keyframe after step 1199 */

    /* from 2500 (the +1 build again), 10 s back twice: 1300, across the reload at 2000 */
    s = play(true, 2500, two_jumps_back);
    expect_at(&s, 2500u - 2u * 10u * SPS);
    assert_string_equal(s.index, "loaded");

    /* paused at 1001, two steps back: 999, before the reload to +5 */
    s = play(true, RELOAD_AT + 1u, two_steps_back);
    expect_at(&s, RELOAD_AT - 1u);

    /* End: the state after the last step */
    s = play(true, 100, to_the_end);
    expect_at(&s, STEPS);

    /* from the end, back to 10%: before the first keyframe, from step 0 */
    s = play(true, STEPS, click_at_10_percent);
    expect_at(&s, click_step(0.1));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_window_scrubs_back_and_forth_across_the_reloads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
