/*
 * vanguard_data: the game's two data files (game_abi.h, minor 4) checked and
 * taken into the state's vg_data, which the steps, the AI and react() read.
 * Pure like a step: no I/O, no allocation, no floats; the parser
 * (cradle/json_reader.h) works in a token array on the stack.
 *
 * Both files are strict JSON objects. Every field is required, no other
 * field is taken (a misspelt one is refused), and each value is checked for
 * its type and range; a refusal names the field, the value and the line.
 * Steps are steps of the simulation (60 a second). Pixel amounts ("px") are
 * decimals with at most 4 decimals and multiples of 1/16 px (0.0625), which
 * the game's fixed point (1/256 px) holds exactly; speeds are px a step.
 *
 * vanguard/waves.json (at most VG_WAVES_MAX_BYTES):
 *   first_wave_steps  1..36000    from the start (or restart) to wave 1
 *   break_steps       1..36000    between a wave's end and the next wave
 *   timeout_steps     1..216000   a wave ends after this long at the latest
 *   boss_every        0..1000     a boss joins every Nth wave (0: never)
 *   spawn_gap         {"steps": 1..3600, "less_per_wave": 0..3600,
 *                     "min_steps": 1..steps}: in wave w one enemy comes every
 *                     max(steps - less_per_wave * w, min_steps) steps
 *   waves             1..VG_MAX_WAVES objects, the wave table:
 *                     {"drifters": 0..255, "chasers": 0..255,
 *                      "shooters": 0..255, "formation": "scatter" | "column"
 *                      | "lanes"}, the enemies of one player's wave (each
 *                     further player adds a third); past the table the waves
 *                     repeat, half as many again each time round
 *
 * vanguard/tuning.json (at most VG_TUNING_MAX_BYTES):
 *   ship_speed, shot_speed, enemy_shot_speed   px a step, 0.0625..32
 *   fire_cooldown_steps   1..600   between a ship's shots
 *   rapid_cooldown_steps  1..600   the same with rapid fire
 *   rapid_steps           1..36000 how long a rapid-fire pickup lasts
 *   respawn_steps         1..3600  from a lost life to the next ship
 *   invulnerable_steps    0..3600  a new ship's grace
 *   pickup_percent        0..100   of destroyed enemies drop a pickup...
 *   life_pickup_percent   0..pickup_percent  ...and this many an extra life
 *   pickup_steps          1..36000 how long a pickup stays
 *   enemies               {"drifter", "chaser", "shooter", "boss"}: each
 *                         {"hp": 1..10000, "points": 0..1000000, "half_w":
 *                         1..32, "half_h": 1..32} (half extents in whole px),
 *                         the drifter also "speed" (px, 0..32),
 *                         "speed_per_wave" (px, 0..1), "speed_waves"
 *                         (0..1000: its speed is speed + speed_per_wave *
 *                         min(wave, speed_waves)) and "fires_from_wave"
 *                         (0..100000), the boss also "hp_per_boss_wave" and
 *                         "hp_per_player" (0..10000 each, added to its hp)
 *   effects               {"fired", "enemy_hit", "enemy_destroyed",
 *                         "boss_destroyed", "player_hit", "player_died",
 *                         "near_miss", "pickup", "game_over"}: each
 *                         {"particles": 0..1000, "shake": px 0..64}, what a
 *                         client shows for that event (0: none)
 *
 * The shipped files hold the built-in values (vanguard_data_default, which
 * init() writes): a game without them plays the same.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cradle/json_reader.h"
#include "vanguard_internal.h"

/* Tokens one file may take: a wave is 9 (its object, 4 keys, 4 values), so
 * a full table of VG_MAX_WAVES is well inside, and tuning.json is some 200. */
#define VG_DATA_TOKENS 1024u
_Static_assert(VG_MAX_WAVES * 9u + 64u <= VG_DATA_TOKENS, "a full wave table fits the tokens");
_Static_assert(sizeof(((cradle_data_refusal *)0)->message) == sizeof(((cradle_json_error *)0)->message),
               "a reader's message fits a refusal");

/* Pixel amounts: decimals in units of 10^-4 px, multiples of 1/16 px. */
#define VG_PX_DECIMALS 4u
#define VG_PX(px) ((int64_t)(px) * 10000)
#define VG_PX_SIXTEENTH 625 /* 1/16 px in 10^-4 px */

const vg_data vanguard_data_default = {
    .first_wave_steps = VG_FIRST_WAVE_STEPS,
    .break_steps = VG_WAVE_BREAK_STEPS,
    .timeout_steps = VG_WAVE_TIMEOUT_STEPS,
    .boss_every = VG_BOSS_EVERY,
    .spawn_gap_steps = 40,
    .spawn_gap_less_per_wave = 4,
    .spawn_gap_min_steps = 8,
    .wave_count = 10,
    .waves =
        {
            {8, 0, 0, VG_FORMATION_SCATTER},  {8, 3, 0, VG_FORMATION_SCATTER},
            {6, 3, 2, VG_FORMATION_SCATTER},  {10, 4, 3, VG_FORMATION_SCATTER},
            {6, 2, 2, VG_FORMATION_SCATTER},  {12, 6, 3, VG_FORMATION_SCATTER},
            {10, 8, 4, VG_FORMATION_SCATTER}, {14, 6, 6, VG_FORMATION_SCATTER},
            {12, 8, 6, VG_FORMATION_SCATTER}, {8, 4, 4, VG_FORMATION_SCATTER},
        },
    .ship_speed = VG_SHIP_SPEED,
    .shot_speed = VG_SHOT_SPEED,
    .enemy_shot_speed = VG_ENEMY_SHOT_SPEED,
    .fire_cooldown = VG_FIRE_COOLDOWN,
    .rapid_cooldown = VG_RAPID_COOLDOWN,
    .rapid_steps = VG_RAPID_STEPS,
    .respawn_steps = VG_RESPAWN_STEPS,
    .invulnerable_steps = VG_INVULNERABLE_STEPS,
    .pickup_percent = VG_PICKUP_PERCENT,
    .life_pickup_percent = VG_PICKUP_PERCENT / 4,
    .pickup_steps = VG_PICKUP_STEPS,
    .enemies =
        {
            [VG_DRIFTER] = {1, 100, 8 * VG_FP, 7 * VG_FP},
            [VG_CHASER] = {2, 200, 8 * VG_FP, 6 * VG_FP},
            [VG_SHOOTER] = {4, 300, 10 * VG_FP, 9 * VG_FP},
            [VG_BOSS] = {60, 5000, 30 * VG_FP, 30 * VG_FP},
        },
    .drifter_speed = 5 * VG_FP / 4,       /* 1.25 px */
    .drifter_speed_per_wave = VG_FP / 16, /* 0.0625 px */
    .drifter_speed_waves = 15,
    .drifter_fires_from_wave = 4,
    .boss_hp_per_boss_wave = 20,
    .boss_hp_per_player = 10,
    .effects =
        {
            [VG_FX_FIRED] = {2, 0},
            [VG_FX_ENEMY_HIT] = {4, 0},
            [VG_FX_ENEMY_DESTROYED] = {18, 2 * VG_FP},
            [VG_FX_BOSS_DESTROYED] = {160, 18 * VG_FP},
            [VG_FX_PLAYER_HIT] = {48, 10 * VG_FP},
            [VG_FX_PLAYER_DIED] = {80, 16 * VG_FP},
            [VG_FX_NEAR_MISS] = {6, 3 * VG_FP / 2},
            [VG_FX_PICKUP] = {14, 0},
            [VG_FX_GAME_OVER] = {0, 8 * VG_FP},
        },
};

/* ---- readers: each returns false with *e filled --------------------------- */

static bool vg_say(cradle_json_error *e, uint32_t line, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static bool vg_say(cradle_json_error *e, uint32_t line, const char *format, ...) {
    va_list args;
    va_start(args, format);
    e->line = line;
    (void)vsnprintf(e->message, sizeof e->message, format, args);
    va_end(args);
    return false;
}

/* The names of fields, for messages: "waves[2].drifters". */
typedef struct vg_name {
    char text[96];
} vg_name;

static vg_name vg_field(const char *path, const char *key) {
    vg_name n;
    (void)snprintf(n.text, sizeof n.text, "%s.%s", path, key);
    return n;
}

/* Object t (named path) with exactly the fields keys[0..n), all required,
 * into values. An unknown or missing field's message says which object it
 * was in, unless it was the file's (t 0). */
static bool vg_object(const cradle_json_doc *doc, uint32_t t, const char *path, const char *const *keys,
                      uint32_t n, uint32_t *values, cradle_json_error *e) {
    if (cradle_json_object(doc, t, path, keys, NULL, n, values, e)) return true;
    bool field = strncmp(e->message, "unknown field", 13) == 0 || strncmp(e->message, "missing field", 13) == 0;
    size_t used = strlen(e->message); /* vsnprintf terminated it */
    if (field && t != 0 && used < sizeof e->message - 1)
        (void)snprintf(e->message + used, sizeof e->message - used, " in %s", path);
    return false;
}

static bool vg_u32(const cradle_json_doc *doc, uint32_t t, const char *name, int64_t min, int64_t max,
                   uint32_t *out, cradle_json_error *e) {
    int64_t v;
    if (!cradle_json_int(doc, t, name, min, max, &v, e)) return false;
    *out = (uint32_t)v;
    return true;
}

static bool vg_i32(const cradle_json_doc *doc, uint32_t t, const char *name, int64_t min, int64_t max,
                   int32_t *out, cradle_json_error *e) {
    int64_t v;
    if (!cradle_json_int(doc, t, name, min, max, &v, e)) return false;
    *out = (int32_t)v;
    return true;
}

/* A pixel amount (VG_PX units, min..max) into fixed point: exact, because
 * it is a multiple of 1/16 px. */
static bool vg_px(const cradle_json_doc *doc, uint32_t t, const char *name, int64_t min, int64_t max,
                  int32_t *out, cradle_json_error *e) {
    int64_t v;
    if (!cradle_json_decimal(doc, t, name, VG_PX_DECIMALS, min, max, &v, e)) return false;
    if (v % VG_PX_SIXTEENTH != 0) {
        const cradle_json_token *n = &doc->tokens[t];
        int shown = n->length < 32u ? (int)n->length : 32;
        return vg_say(e, n->line, "\"%s\" must be a multiple of 0.0625 px (1/16), got %.*s", name, shown,
                      (const char *)doc->text + n->start);
    }
    *out = (int32_t)(v / VG_PX_SIXTEENTH * (VG_FP / 16));
    return true;
}

/* Whole pixels into fixed point. */
static bool vg_whole_px(const cradle_json_doc *doc, uint32_t t, const char *name, int64_t min, int64_t max,
                        int32_t *out, cradle_json_error *e) {
    if (!vg_i32(doc, t, name, min, max, out, e)) return false;
    *out *= VG_FP;
    return true;
}

/* ---- waves.json ------------------------------------------------------------- */

static const char *const vg_formation_names[VG_FORMATIONS] = {
    [VG_FORMATION_SCATTER] = "scatter",
    [VG_FORMATION_COLUMN] = "column",
    [VG_FORMATION_LANES] = "lanes",
};

static bool vg_read_wave(const cradle_json_doc *doc, uint32_t t, uint32_t index, vg_wave_def *w,
                         cradle_json_error *e) {
    static const char *const keys[] = {"drifters", "chasers", "shooters", "formation"};
    uint32_t v[4];
    char path[32];
    (void)snprintf(path, sizeof path, "waves[%u]", (unsigned)index);
    if (!vg_object(doc, t, path, keys, 4, v, e)) return false;
    return vg_u32(doc, v[0], vg_field(path, keys[0]).text, 0, 255, &w->drifters, e) &&
           vg_u32(doc, v[1], vg_field(path, keys[1]).text, 0, 255, &w->chasers, e) &&
           vg_u32(doc, v[2], vg_field(path, keys[2]).text, 0, 255, &w->shooters, e) &&
           cradle_json_choice(doc, v[3], vg_field(path, keys[3]).text, vg_formation_names, VG_FORMATIONS,
                              &w->formation, e);
}

static bool vg_read_waves(const cradle_json_doc *doc, vg_data *d, cradle_json_error *e) {
    static const char *const keys[] = {"first_wave_steps", "break_steps", "timeout_steps",
                                       "boss_every",       "spawn_gap",   "waves"};
    static const char *const gap_keys[] = {"steps", "less_per_wave", "min_steps"};
    uint32_t v[6], g[3];
    if (!vg_object(doc, 0, "waves.json", keys, 6, v, e) ||
        !vg_u32(doc, v[0], keys[0], 1, 36000, &d->first_wave_steps, e) ||
        !vg_u32(doc, v[1], keys[1], 1, 36000, &d->break_steps, e) ||
        !vg_u32(doc, v[2], keys[2], 1, 216000, &d->timeout_steps, e) ||
        !vg_u32(doc, v[3], keys[3], 0, 1000, &d->boss_every, e) ||
        !vg_object(doc, v[4], "spawn_gap", gap_keys, 3, g, e) ||
        !vg_u32(doc, g[0], "spawn_gap.steps", 1, 3600, &d->spawn_gap_steps, e) ||
        !vg_u32(doc, g[1], "spawn_gap.less_per_wave", 0, 3600, &d->spawn_gap_less_per_wave, e) ||
        !vg_u32(doc, g[2], "spawn_gap.min_steps", 1, d->spawn_gap_steps, &d->spawn_gap_min_steps, e))
        return false;
    uint32_t count;
    if (!cradle_json_array(doc, v[5], "waves", 1, VG_MAX_WAVES, &count, e)) return false;
    uint32_t t = v[5] + 1u;
    for (uint32_t i = 0; i < count; i++, t = doc->tokens[t].next)
        if (!vg_read_wave(doc, t, i, &d->waves[i], e)) return false;
    d->wave_count = count;
    /* Entries past the table are never read; zero them, so the same file
     * gives the same state whatever was there before. */
    memset(&d->waves[count], 0, (VG_MAX_WAVES - count) * sizeof d->waves[0]);
    return true;
}

/* ---- tuning.json ------------------------------------------------------------- */

static const char *const vg_enemy_names[VG_ENEMY_TYPES] = {
    [VG_DRIFTER] = "drifter",
    [VG_CHASER] = "chaser",
    [VG_SHOOTER] = "shooter",
    [VG_BOSS] = "boss",
};

static const char *const vg_effect_names[VG_EFFECTS] = {
    [VG_FX_FIRED] = "fired",
    [VG_FX_ENEMY_HIT] = "enemy_hit",
    [VG_FX_ENEMY_DESTROYED] = "enemy_destroyed",
    [VG_FX_BOSS_DESTROYED] = "boss_destroyed",
    [VG_FX_PLAYER_HIT] = "player_hit",
    [VG_FX_PLAYER_DIED] = "player_died",
    [VG_FX_NEAR_MISS] = "near_miss",
    [VG_FX_PICKUP] = "pickup",
    [VG_FX_GAME_OVER] = "game_over",
};

/* One enemy type: the four stats every type has, then its own extras. */
static bool vg_read_enemy(const cradle_json_doc *doc, uint32_t t, uint32_t type, vg_data *d,
                          cradle_json_error *e) {
    static const char *const drifter_keys[] = {"hp",    "points",         "half_w",      "half_h",
                                               "speed", "speed_per_wave", "speed_waves", "fires_from_wave"};
    static const char *const boss_keys[] = {"hp",     "points",           "half_w",
                                            "half_h", "hp_per_boss_wave", "hp_per_player"};
    const char *const *keys = type == VG_DRIFTER ? drifter_keys : boss_keys;
    uint32_t n = type == VG_DRIFTER ? 8u : type == VG_BOSS ? 6u : 4u;
    uint32_t v[8];
    char path[32];
    (void)snprintf(path, sizeof path, "enemies.%s", vg_enemy_names[type]);
    vg_enemy_def *def = &d->enemies[type];
    if (!vg_object(doc, t, path, keys, n, v, e) ||
        !vg_i32(doc, v[0], vg_field(path, keys[0]).text, 1, 10000, &def->hp, e) ||
        !vg_i32(doc, v[1], vg_field(path, keys[1]).text, 0, 1000000, &def->points, e) ||
        !vg_whole_px(doc, v[2], vg_field(path, keys[2]).text, 1, 32, &def->half_w, e) ||
        !vg_whole_px(doc, v[3], vg_field(path, keys[3]).text, 1, 32, &def->half_h, e))
        return false;
    if (type == VG_DRIFTER)
        return vg_px(doc, v[4], vg_field(path, keys[4]).text, 0, VG_PX(32), &d->drifter_speed, e) &&
               vg_px(doc, v[5], vg_field(path, keys[5]).text, 0, VG_PX(1), &d->drifter_speed_per_wave, e) &&
               vg_i32(doc, v[6], vg_field(path, keys[6]).text, 0, 1000, &d->drifter_speed_waves, e) &&
               vg_i32(doc, v[7], vg_field(path, keys[7]).text, 0, 100000, &d->drifter_fires_from_wave, e);
    if (type == VG_BOSS)
        return vg_i32(doc, v[4], vg_field(path, keys[4]).text, 0, 10000, &d->boss_hp_per_boss_wave, e) &&
               vg_i32(doc, v[5], vg_field(path, keys[5]).text, 0, 10000, &d->boss_hp_per_player, e);
    return true;
}

static bool vg_read_effect(const cradle_json_doc *doc, uint32_t t, uint32_t kind, vg_effect_def *fx,
                           cradle_json_error *e) {
    static const char *const keys[] = {"particles", "shake"};
    uint32_t v[2];
    char path[32];
    (void)snprintf(path, sizeof path, "effects.%s", vg_effect_names[kind]);
    return vg_object(doc, t, path, keys, 2, v, e) &&
           vg_u32(doc, v[0], vg_field(path, keys[0]).text, 0, 1000, &fx->particles, e) &&
           vg_px(doc, v[1], vg_field(path, keys[1]).text, 0, VG_PX(64), &fx->shake, e);
}

static bool vg_read_tuning(const cradle_json_doc *doc, vg_data *d, cradle_json_error *e) {
    static const char *const keys[] = {
        "ship_speed",     "shot_speed",          "enemy_shot_speed",
        "fire_cooldown_steps", "rapid_cooldown_steps", "rapid_steps",
        "respawn_steps",  "invulnerable_steps",
        "pickup_percent", "life_pickup_percent", "pickup_steps",
        "enemies",        "effects",
    };
    enum { N = sizeof keys / sizeof keys[0] };
    uint32_t v[N], enemies[VG_ENEMY_TYPES], effects[VG_EFFECTS];
    if (!vg_object(doc, 0, "tuning.json", keys, N, v, e) ||
        !vg_px(doc, v[0], keys[0], VG_PX_SIXTEENTH, VG_PX(32), &d->ship_speed, e) ||
        !vg_px(doc, v[1], keys[1], VG_PX_SIXTEENTH, VG_PX(32), &d->shot_speed, e) ||
        !vg_px(doc, v[2], keys[2], VG_PX_SIXTEENTH, VG_PX(32), &d->enemy_shot_speed, e) ||
        !vg_i32(doc, v[3], keys[3], 1, 600, &d->fire_cooldown, e) ||
        !vg_i32(doc, v[4], keys[4], 1, 600, &d->rapid_cooldown, e) ||
        !vg_i32(doc, v[5], keys[5], 1, 36000, &d->rapid_steps, e) ||
        !vg_i32(doc, v[6], keys[6], 1, 3600, &d->respawn_steps, e) ||
        !vg_i32(doc, v[7], keys[7], 0, 3600, &d->invulnerable_steps, e) ||
        !vg_i32(doc, v[8], keys[8], 0, 100, &d->pickup_percent, e) ||
        !vg_i32(doc, v[9], keys[9], 0, d->pickup_percent, &d->life_pickup_percent, e) ||
        !vg_i32(doc, v[10], keys[10], 1, 36000, &d->pickup_steps, e) ||
        !vg_object(doc, v[11], "enemies", vg_enemy_names, VG_ENEMY_TYPES, enemies, e))
        return false;
    for (uint32_t type = 0; type < VG_ENEMY_TYPES; type++)
        if (!vg_read_enemy(doc, enemies[type], type, d, e)) return false;
    if (!vg_object(doc, v[12], "effects", vg_effect_names, VG_EFFECTS, effects, e)) return false;
    for (uint32_t kind = 0; kind < VG_EFFECTS; kind++)
        if (!vg_read_effect(doc, effects[kind], kind, &d->effects[kind], e)) return false;
    return true;
}

/* ---- the contract's entry ----------------------------------------------------- */

/* Takes file's bytes into s->data, or returns false with *e filled. */
static bool vg_take(vanguard_state *s, uint32_t file, const uint8_t *bytes, uint32_t size,
                    cradle_json_error *e) {
    if (file >= VG_DATA_FILES) return vg_say(e, 0, "vanguard has no data file %u", (unsigned)file + 1u);
    uint32_t max = file == VG_FILE_WAVES ? VG_WAVES_MAX_BYTES : VG_TUNING_MAX_BYTES;
    if (size > max)
        return vg_say(e, 0, "%u bytes, more than the %u this file may have", (unsigned)size, (unsigned)max);
    cradle_json_token tokens[VG_DATA_TOKENS];
    cradle_json_doc doc;
    if (!cradle_json_parse(&doc, size ? (const void *)bytes : "", size, tokens, VG_DATA_TOKENS, e)) {
        size_t used = strlen(e->message);
        if (e->line == 0 && file == VG_FILE_WAVES && used < sizeof e->message - 1) /* out of tokens */
            (void)snprintf(e->message + used, sizeof e->message - used, "; a wave table holds at most %u waves",
                           (unsigned)VG_MAX_WAVES);
        return false;
    }
    /* Read into a copy, so that a refusal leaves the state as it was even
     * for a caller that does not work on a copy of its own. */
    vg_data data = s->data;
    bool ok = file == VG_FILE_WAVES ? vg_read_waves(&doc, &data, e) : vg_read_tuning(&doc, &data, e);
    if (!ok) return false;
    s->data = data;
    /* init() started the first wave's countdown before any file came (a
     * host applies them after init); wave 1 comes first_wave_steps after
     * the start all the same, or at once when that is past. Later breaks
     * run out as they began. */
    if (file == VG_FILE_WAVES && s->wave == 0 && s->break_steps > 0 && !s->game_over)
        s->break_steps = data.first_wave_steps > s->tick ? data.first_wave_steps - s->tick : 1u;
    return true;
}

bool vanguard_data(void *state, uint32_t file, const uint8_t *bytes, uint32_t size,
                   cradle_data_refusal *refusal) {
    cradle_json_error e = {0};
    if (vg_take(state, file, bytes, size, &e)) return true;
    refusal->line = e.line;
    memcpy(refusal->message, e.message, sizeof refusal->message);
    refusal->message[sizeof refusal->message - 1] = '\0';
    if (!refusal->message[0]) (void)snprintf(refusal->message, sizeof refusal->message, "refused");
    return false;
}
