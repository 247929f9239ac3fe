/*
 * gather: the template game. Copy this folder to start your own game: it
 * shows every part of the game ABI (cradle/game_abi.h) in one small file.
 *
 * 1 to 8 players each steer a square on a 32 x 18 grid; a coin appears at a
 * seeded random cell, and whoever reaches it scores a point and a new coin
 * appears. Whole numbers only, so every machine computes the same states.
 *
 * The parts, in the order a host uses them:
 *   input    1 byte per player: bit 0 up, 1 down, 2 left, 3 right
 *   state    one block the host allocates (gather_state): no pointers, no
 *            globals; the coin's generator lives inside it
 *   init     a new game from the seed and the player count
 *   step     one step: presence from the snapshot, moves every 6th step
 *   output   the bytes golden files hold: step, coin, each player
 *   render   squares and the coin, interpolated between two states
 *   react    a sound and a burst when a coin is taken (client only); the
 *            sound is a WAV file shipped beside the library (gather/coin.wav,
 *            from sounds/ here: CMakeLists.txt copies it)
 *   bot      plays one slot: walks toward the coin (optional)
 *   layout   names for the state's bytes, for reports (optional)
 *   data     gather/rules.json, a file a designer edits while a session runs
 *            (how often players move, what a coin is worth): the host reads
 *            it, gather_data() checks it with cradle/json_reader.h and keeps
 *            it in the state; shipped beside the library from data/ here
 *            (CMakeLists.txt copies it), the built-in values are the same
 *            (optional)
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cradle/game_abi.h"
#include "cradle/json_reader.h"
#include "cradle/rng.h"
#ifndef CRADLE_BUILD_ID
#include "cradle_build_id.h" /* cradle_game_library() writes it; with plain cc, pass -DCRADLE_BUILD_ID */
#endif

#define GATHER_MAX_PLAYERS 8u
#define GATHER_W 32
#define GATHER_H 18
#define GATHER_CELL 20               /* world units per cell: a 640 x 360 view */
#define GATHER_MOVE_EVERY 6u         /* built-in steps per move: 10 moves a second at 60 steps/s */
#define GATHER_COIN_POINTS 1u        /* built-in points a coin is worth */
#define GATHER_EVENT_COIN 1u         /* event kind: a coin was taken (a = the new score) */

enum { GATHER_UP = 1, GATHER_DOWN = 2, GATHER_LEFT = 4, GATHER_RIGHT = 8 };

/* Sound ids: sound i plays GATHER_SOUNDS[i - 1], relative to the library's folder. */
enum { GATHER_SOUND_COIN = 1 };
static const char *const GATHER_SOUNDS[] = {"gather/coin.wav"};

typedef struct gather_player {
    int32_t x, y;
    uint32_t score;
    uint32_t present;
} gather_player;

/* What gather/rules.json sets. */
typedef struct gather_rules {
    uint32_t move_every;  /* steps per move, 1..60 */
    uint32_t coin_points; /* 1..100 */
} gather_rules;

typedef struct gather_state {
    uint64_t steps;
    cradle_rng coins; /* seeded in init: the only source of chance */
    int32_t coin_x, coin_y;
    uint32_t players;
    uint32_t reloads;
    gather_player player[GATHER_MAX_PLAYERS];
    gather_rules rules; /* the data file's, in the state like everything the step reads */
} gather_state;

static void place_coin(gather_state *s) {
    s->coin_x = (int32_t)cradle_rng_below(&s->coins, GATHER_W);
    s->coin_y = (int32_t)cradle_rng_below(&s->coins, GATHER_H);
}

static int gather_init(void *state, uint64_t seed, uint32_t player_count) {
    if (player_count < 1 || player_count > GATHER_MAX_PLAYERS) return -1;
    gather_state *s = state;
    memset(s, 0, sizeof *s);
    s->players = player_count;
    s->rules = (gather_rules){.move_every = GATHER_MOVE_EVERY, .coin_points = GATHER_COIN_POINTS};
    cradle_rng_seed(&s->coins, seed, 1);
    for (uint32_t p = 0; p < GATHER_MAX_PLAYERS; p++) {
        s->player[p].x = (int32_t)(p * 4u % GATHER_W);
        s->player[p].y = GATHER_H / 2;
    }
    place_coin(s);
    return 0;
}

static int32_t clamp(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static void gather_step(void *state, const cradle_game_step *step, const cradle_event_sink *events) {
    gather_state *s = state;
    s->steps++;
    for (uint32_t p = 0; p < GATHER_MAX_PLAYERS; p++) {
        gather_player *pl = &s->player[p];
        pl->present = cradle_snapshot_present(step->snapshot, p);
        if (!pl->present || step->index % s->rules.move_every != 0) continue;
        uint8_t in = cradle_snapshot_input(step->snapshot, GATHER_MAX_PLAYERS, 1, p)[0];
        pl->y = clamp(pl->y + ((in & GATHER_DOWN) ? 1 : 0) - ((in & GATHER_UP) ? 1 : 0), 0, GATHER_H - 1);
        pl->x = clamp(pl->x + ((in & GATHER_RIGHT) ? 1 : 0) - ((in & GATHER_LEFT) ? 1 : 0), 0, GATHER_W - 1);
        if (pl->x == s->coin_x && pl->y == s->coin_y) {
            pl->score += s->rules.coin_points;
            cradle_event e = {.kind = GATHER_EVENT_COIN, .player = (uint8_t)p, .x = s->coin_x * GATHER_CELL,
                              .y = s->coin_y * GATHER_CELL, .a = (int32_t)pl->score};
            (void)events->emit(events->context, &e);
            place_coin(s);
        }
    }
}

/* Little-endian, 12 + 8 x 9 bytes: u64 steps, i16 coin x, i16 coin y, then
 * per slot: u8 present, i16 x, i16 y, u32 score. */
static size_t gather_output(const void *state, uint64_t step, uint8_t *out, size_t capacity) {
    (void)step;
    const gather_state *s = state;
    size_t n = 0;
    if (capacity < 12 + GATHER_MAX_PLAYERS * 9) return 0;
    for (int i = 0; i < 8; i++) out[n++] = (uint8_t)(s->steps >> (8 * i));
    out[n++] = (uint8_t)s->coin_x, out[n++] = (uint8_t)(s->coin_x >> 8);
    out[n++] = (uint8_t)s->coin_y, out[n++] = (uint8_t)(s->coin_y >> 8);
    for (uint32_t p = 0; p < GATHER_MAX_PLAYERS; p++) {
        const gather_player *pl = &s->player[p];
        out[n++] = (uint8_t)pl->present;
        out[n++] = (uint8_t)pl->x, out[n++] = (uint8_t)(pl->x >> 8);
        out[n++] = (uint8_t)pl->y, out[n++] = (uint8_t)(pl->y >> 8);
        for (int i = 0; i < 4; i++) out[n++] = (uint8_t)(pl->score >> (8 * i));
    }
    return n;
}

static const uint32_t COLOURS[GATHER_MAX_PLAYERS] = {0x4fc3f7ffu, 0xffb74dffu, 0x81c784ffu, 0xe57373ffu,
                                                     0xba68c8ffu, 0xfff176ffu, 0x4db6acffu, 0xf06292ffu};

static void gather_render(const void *previous, const void *state, float alpha, const cradle_draw *draw) {
    const gather_state *a = previous, *b = state;
    draw->clear(draw->context, 0x101820ffu);
    draw->rect(draw->context, (float)(b->coin_x * GATHER_CELL + 6), (float)(b->coin_y * GATHER_CELL + 6), 8, 8,
               0xffd700ffu);
    char line[64];
    for (uint32_t p = 0; p < GATHER_MAX_PLAYERS; p++) {
        const gather_player *from = &a->player[p], *to = &b->player[p];
        if (!to->present) continue;
        float x = ((float)from->x + ((float)to->x - (float)from->x) * alpha) * GATHER_CELL;
        float y = ((float)from->y + ((float)to->y - (float)from->y) * alpha) * GATHER_CELL;
        draw->rect(draw->context, x + 2, y + 2, GATHER_CELL - 4, GATHER_CELL - 4, COLOURS[p]);
        snprintf(line, sizeof line, "P%u %u", (unsigned)p + 1, (unsigned)to->score);
        draw->text(draw->context, 8, 8 + (float)p * 12, 1, COLOURS[p], line);
    }
}

static void gather_on_reload(void *state) { ((gather_state *)state)->reloads++; }

static void gather_react(const void *state, const cradle_event *events, uint32_t count, const cradle_fx *fx) {
    (void)state;
    for (uint32_t i = 0; i < count; i++) {
        if (events[i].kind != GATHER_EVENT_COIN) continue;
        fx->burst(fx->context, (float)events[i].x + 10, (float)events[i].y + 10, 16, 0xffd700ffu, 120, 0.4f);
        fx->sound(fx->context, GATHER_SOUND_COIN, 0.6f, 1.0f);
    }
}

/* Walks toward the coin, now and then the wrong way (random's low bits). */
static void gather_bot(const void *state, uint64_t step, uint32_t slot, uint64_t random, uint8_t *input,
                       uint32_t input_bytes) {
    (void)step;
    const gather_state *s = state;
    const gather_player *me = &s->player[slot];
    uint8_t in = 0;
    if (me->x < s->coin_x) in |= GATHER_RIGHT;
    if (me->x > s->coin_x) in |= GATHER_LEFT;
    if (me->y < s->coin_y) in |= GATHER_DOWN;
    if (me->y > s->coin_y) in |= GATHER_UP;
    if (random % 8u == 0) in = (uint8_t)(1u << (random / 8u % 4u));
    if (input_bytes >= 1) input[0] = in;
}

/* The state's layout (optional): names for its bytes, so a sync test or a
 * desync report says "player[2].score" rather than "state byte 60". A row's
 * parent is the index + 1 of the row it sits in (0: the state itself). */
static const cradle_state_region GATHER_LAYOUT[] = {
    {"steps", 0, offsetof(gather_state, steps), sizeof(uint64_t), 1, 0},
    {"coins", 0, offsetof(gather_state, coins), sizeof(cradle_rng), 1, 0},
    {"coin_x", 0, offsetof(gather_state, coin_x), sizeof(int32_t), 1, 0},
    {"coin_y", 0, offsetof(gather_state, coin_y), sizeof(int32_t), 1, 0},
    {"players", 0, offsetof(gather_state, players), sizeof(uint32_t), 1, 0},
    {"reloads", 0, offsetof(gather_state, reloads), sizeof(uint32_t), 1, 0},
    {"player", 0, offsetof(gather_state, player), sizeof(gather_player), GATHER_MAX_PLAYERS, sizeof(gather_player)},
    {"x", 7, offsetof(gather_player, x), sizeof(int32_t), 1, 0},
    {"y", 7, offsetof(gather_player, y), sizeof(int32_t), 1, 0},
    {"score", 7, offsetof(gather_player, score), sizeof(uint32_t), 1, 0},
    {"present", 7, offsetof(gather_player, present), sizeof(uint32_t), 1, 0},
    {"rules", 0, offsetof(gather_state, rules), sizeof(gather_rules), 1, 0},
    {"move_every", 12, offsetof(gather_rules, move_every), sizeof(uint32_t), 1, 0},
    {"coin_points", 12, offsetof(gather_rules, coin_points), sizeof(uint32_t), 1, 0},
};

/* The data file (optional): names relative to the library's folder, each
 * with a size limit. The host reads a file whole and hands it to
 * gather_data(), on a copy of the state it keeps only when this accepts,
 * before step 0 and again at a step boundary whenever the file changes. It
 * runs on every host at the same step, so like step() it does no I/O and
 * no allocation: the parser works in a token array on the stack. A refusal
 * names the line and the field: "gather/rules.json:3: \"move_every\" must
 * be an integer 1..60, got 0". */
static const cradle_game_data_file GATHER_DATA[] = {{"gather/rules.json", 4096}};

static bool gather_data(void *state, uint32_t file, const uint8_t *bytes, uint32_t size,
                        cradle_data_refusal *refusal) {
    (void)file; /* the only one */
    static const char *const keys[] = {"move_every", "coin_points"};
    cradle_json_token tokens[16];
    cradle_json_doc doc;
    cradle_json_error error;
    uint32_t values[2];
    int64_t move_every = 0, coin_points = 0;
    if (!cradle_json_parse(&doc, bytes, size, tokens, 16, &error) ||
        !cradle_json_object(&doc, 0, "rules.json", keys, NULL, 2, values, &error) ||
        !cradle_json_int(&doc, values[0], "move_every", 1, 60, &move_every, &error) ||
        !cradle_json_int(&doc, values[1], "coin_points", 1, 100, &coin_points, &error)) {
        refusal->line = error.line;
        memcpy(refusal->message, error.message, sizeof refusal->message);
        return false;
    }
    gather_state *s = state;
    s->rules = (gather_rules){.move_every = (uint32_t)move_every, .coin_points = (uint32_t)coin_points};
    return true;
}

static const cradle_game_contract GATHER = {
    .abi_major = CRADLE_ABI_MAJOR,
    .abi_minor = CRADLE_ABI_MINOR,
    .state_size = sizeof(gather_state),
    .state_align = _Alignof(gather_state),
    .input_bytes = 1,
    .max_players = GATHER_MAX_PLAYERS,
    .steps_per_second = 60,
    .source_frames_per_second = 10,
    .view_width = GATHER_W * GATHER_CELL,
    .view_height = GATHER_H * GATHER_CELL,
    .name = "gather",
    .build_id = CRADLE_BUILD_ID,
    .init = gather_init,
    .step = gather_step,
    .output = gather_output,
    .render = gather_render,
    .on_reload = gather_on_reload,
    .react = gather_react,
    .bot = gather_bot,
    .sounds = GATHER_SOUNDS,
    .sound_count = 1,
    .layout = GATHER_LAYOUT,
    .layout_count = sizeof GATHER_LAYOUT / sizeof GATHER_LAYOUT[0],
    .data_files = GATHER_DATA,
    .data_file_count = 1,
    .data = gather_data,
};

/* The one exported symbol (CRADLE_GAME_CONTRACT_SYMBOL); everything else is
 * hidden (cradle_game_library() builds with -fvisibility=hidden). */
CRADLE_GAME_DEFINE_CONTRACT(&GATHER)
