#ifndef VANGUARD_INTERNAL_H
#define VANGUARD_INTERNAL_H
/*
 * vanguard internals: the state block, the components, the tuning constants
 * and the helpers the game's files share. Hosts see none of this (they see
 * the contract); the unit tests and the benchmark include it to build small
 * scenarios and to force heavy waves.
 *
 * Units: positions and velocities are fixed point, VG_FP (256) units per
 * pixel, int32; velocities are per step. The view is 640x360 pixels; events
 * report positions in pixels (the ABI's world units).
 *
 * Relocatable: the state is one struct holding the ECS world and the grid as
 * byte arrays (both keep offsets, never pointers), entity ids instead of
 * references, and scalars. Every struct stored in it is free of padding
 * (checked with _Static_assert), so no indeterminate byte ever enters the
 * block and a host hashing the whole block sees the same bytes everywhere.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/ecs.h"
#include "cradle/game_abi.h"
#include "cradle/grid.h"
#include "cradle/rng.h"

/* ---- fixed rules (change one, rebuild, and the running server reloads it) ---- */

#define VG_FP 256                      /* fixed-point units per pixel */
#define VG_VIEW_W 640
#define VG_VIEW_H 360
#define VG_MAX_PLAYERS 8u
#define VG_STEPS_PER_SECOND 60u
#define VG_SOURCE_FRAMES_PER_SECOND 20u

/* vanguard's sounds: the contract's sounds[id - 1], WAV files in the
 * vanguard/ folder beside the library (made by sounds/make_sounds.py). */
enum vg_sound {
    VG_SOUND_SHOT = 1,
    VG_SOUND_EXPLOSION,
    VG_SOUND_HIT,
    VG_SOUND_PICKUP,
    VG_SOUND_WAVE,
    VG_SOUND_NEAR_MISS,
    VG_SOUND_GAME_OVER,
};
#define VG_START_LIVES 3u
#define VG_MAX_LIVES 9u
#define VG_EXPLOSION_STEPS 28

/* ---- the data files' built-in values ------------------------------------------
 *
 * The waves and the tuning live in the state (vg_data below), written by
 * init() from vanguard_data_default and replaced by the data files
 * vanguard/waves.json and vanguard/tuning.json when a host applies them
 * (vanguard_data.c describes the files). These are the built-in values,
 * which the shipped files repeat exactly. */

#define VG_SHIP_SPEED (3 * VG_FP)       /* per step, on each axis */
#define VG_SHOT_SPEED (10 * VG_FP)
/* A test build may change it (tests/games: vanguard_rapid.so, the golden
 * corpus's second build to hot-reload to); the game's own build never does.
 * Such a build fires at its own rate whatever tuning.json says (see
 * vg_ship_update), so a reload to it shows in the output. */
#ifdef VG_FIRE_COOLDOWN
#define VG_FIRE_COOLDOWN_FIXED 1
#else
#define VG_FIRE_COOLDOWN 9              /* steps between shots */
#define VG_FIRE_COOLDOWN_FIXED 0
#endif
#define VG_RAPID_COOLDOWN 5
#define VG_RAPID_STEPS 600              /* rapid fire lasts 10 s */
#define VG_RESPAWN_STEPS 90
#define VG_INVULNERABLE_STEPS 120
#define VG_ENEMY_SHOT_SPEED (3 * VG_FP)
#define VG_PICKUP_STEPS 600
#define VG_PICKUP_PERCENT 8             /* chance a destroyed enemy drops one */
#define VG_FIRST_WAVE_STEPS 60          /* the first wave comes after a second */
#define VG_WAVE_BREAK_STEPS 150         /* quiet time between waves */
#define VG_WAVE_TIMEOUT_STEPS 3600      /* a wave lasts at most a minute */
#define VG_BOSS_EVERY 5                 /* a boss closes every fifth wave */

/* ---- capacities ------------------------------------------------------------ */

#define VG_MAX_ENTITIES 4096u
#define VG_MAX_HITS 64u /* collisions one ship or missile can see per step */
/* Grid rectangle: the view plus a 64-pixel margin, in fixed point. */
#define VG_GRID_X (-64 * VG_FP)
#define VG_GRID_Y (-64 * VG_FP)
#define VG_GRID_W ((VG_VIEW_W + 128) * VG_FP)
#define VG_GRID_H ((VG_VIEW_H + 128) * VG_FP)
#define VG_GRID_CELL (64 * VG_FP) /* objects are 6..60 px */
#define VG_GRID_OBJECTS VG_MAX_ENTITIES

/* ---- components ------------------------------------------------------------ */

enum vg_component {
    VG_C_MOTION, /* vg_motion: every entity */
    VG_C_BODY,   /* vg_body: entities that collide */
    VG_C_TAG,    /* vg_tag: every entity */
    VG_C_ENEMY,  /* vg_enemy: enemies */
    VG_C_TTL,    /* vg_ttl: entities that expire (explosions, pickups) */
    VG_COMPONENT_COUNT
};

typedef struct vg_motion {
    int32_t x, y;   /* centre, fixed point */
    int32_t vx, vy; /* per step, fixed point */
} vg_motion;

/* Collision layers (grid layer and mask bits). */
enum {
    VG_L_SHIP = 1u << 0,
    VG_L_PLAYER_SHOT = 1u << 1,
    VG_L_ENEMY = 1u << 2,
    VG_L_ENEMY_SHOT = 1u << 3,
    VG_L_PICKUP = 1u << 4,
};

typedef struct vg_body {
    int32_t half_w, half_h; /* fixed point */
    uint32_t layer, mask;
} vg_body;

enum vg_kind {
    VG_K_SHIP = 1,
    VG_K_PLAYER_SHOT,
    VG_K_ENEMY,
    VG_K_ENEMY_SHOT,
    VG_K_EXPLOSION,
    VG_K_PICKUP,
};

typedef struct vg_tag {
    uint8_t kind;   /* vg_kind */
    uint8_t sub;    /* enemy type, pickup type or explosion size */
    uint8_t owner;  /* ship/shot: player slot; enemy shot: grazing player or 0xFF */
    uint8_t flags;
    uint32_t mark;  /* enemy shot: tick of its last graze */
} vg_tag;

enum vg_enemy_type { VG_DRIFTER, VG_CHASER, VG_SHOOTER, VG_BOSS, VG_ENEMY_TYPES };

/* The enemy FSM (seed 003): patrol -> chase -> attack -> search -> return. */
enum vg_ai_state { VG_PATROL, VG_CHASE, VG_ATTACK, VG_SEARCH, VG_RETURN, VG_AI_STATES };

typedef struct vg_enemy {
    uint8_t type;   /* vg_enemy_type */
    uint8_t state;  /* vg_ai_state */
    uint8_t target; /* player slot it hunts, or 0xFF */
    uint8_t burst;  /* shots left in the current attack */
    int32_t hp;
    int32_t timer;  /* think frames left in the current state */
    int32_t cooldown;
    int32_t home_x, home_y;
    int32_t phase;  /* per-enemy offset for patrol motion */
    int32_t points;
} vg_enemy;

enum vg_pickup_type { VG_PICKUP_RAPID, VG_PICKUP_LIFE };

typedef struct vg_ttl {
    int32_t steps; /* left; destroyed when it reaches 0 */
} vg_ttl;

/* ---- events (cradle_event.kind) ------------------------------------------- */

enum vg_event_kind {
    VG_EV_FIRED = 1,      /* player; a = missiles fired */
    VG_EV_ENEMY_DESTROYED,/* player = scorer (or none); a = points; b = enemy type */
    VG_EV_PLAYER_HIT,     /* player; a = lives left */
    VG_EV_PLAYER_DIED,    /* player out of lives; a = final score */
    VG_EV_WAVE_STARTED,   /* a = wave number; b = enemies in the wave */
    VG_EV_NEAR_MISS,      /* player; an enemy shot passed within the graze zone */
    VG_EV_PICKUP,         /* player; a = vg_pickup_type */
    VG_EV_GAME_OVER,      /* a = total score; b = wave reached */
    VG_EV_RESTART,        /* player = who restarted */
    VG_EV_ENEMY_HIT,      /* player = shooter; a = hp left; b = enemy type */
    VG_EV_PLAYER_JOINED,  /* player */
};

/* ---- the game's data (waves.json, tuning.json) ------------------------------- */

#define VG_MAX_WAVES 64u /* entries of the wave table */

/* The data files, in the contract's data_files order, and their size limits. */
enum vg_data_file { VG_FILE_WAVES, VG_FILE_TUNING, VG_DATA_FILES };
#define VG_WAVES_MAX_BYTES 65536u
#define VG_TUNING_MAX_BYTES 16384u

/* Where a wave's chasers and shooters make their home (drifters only cross):
 * SCATTER anywhere in 400..600 x 40..320 px, COLUMN on the line x = 500 px,
 * LANES at the height they come in at. Each draws the same random numbers. */
enum vg_formation { VG_FORMATION_SCATTER, VG_FORMATION_COLUMN, VG_FORMATION_LANES, VG_FORMATIONS };

/* One entry of the wave table: what a wave of one player brings. */
typedef struct vg_wave_def {
    uint32_t drifters, chasers, shooters;
    uint32_t formation; /* vg_formation */
} vg_wave_def;

/* Per enemy type. */
typedef struct vg_enemy_def {
    int32_t hp, points;
    int32_t half_w, half_h; /* fixed point */
} vg_enemy_def;

/* What react() makes of an event: particles, and shake in fixed point
 * (pixels of displacement * VG_FP); 0 asks for none. */
enum vg_effect {
    VG_FX_FIRED,
    VG_FX_ENEMY_HIT,
    VG_FX_ENEMY_DESTROYED,
    VG_FX_BOSS_DESTROYED,
    VG_FX_PLAYER_HIT,
    VG_FX_PLAYER_DIED,
    VG_FX_NEAR_MISS,
    VG_FX_PICKUP,
    VG_FX_GAME_OVER,
    VG_EFFECTS
};

typedef struct vg_effect_def {
    uint32_t particles;
    int32_t shake;
} vg_effect_def;

/* Both files' values, as the steps, the AI and react() read them. Steps are
 * steps, speeds fixed point per step. Written only by init() (the
 * defaults) and data(); a restart keeps them. */
typedef struct vg_data {
    /* waves.json */
    uint32_t first_wave_steps;        /* before wave 1, >= 1 */
    uint32_t break_steps;             /* between waves, >= 1 */
    uint32_t timeout_steps;           /* a wave's longest life, >= 1 */
    uint32_t boss_every;              /* a boss closes every Nth wave; 0: never */
    uint32_t spawn_gap_steps;         /* between spawns in wave w: max(steps - */
    uint32_t spawn_gap_less_per_wave; /*   less_per_wave * w, min_steps) */
    uint32_t spawn_gap_min_steps;     /* >= 1 */
    uint32_t wave_count;              /* table entries used, 1..VG_MAX_WAVES */
    vg_wave_def waves[VG_MAX_WAVES];  /* past wave_count the table repeats bigger */
    /* tuning.json */
    int32_t ship_speed, shot_speed, enemy_shot_speed;
    int32_t fire_cooldown, rapid_cooldown, rapid_steps;
    int32_t respawn_steps, invulnerable_steps;
    int32_t pickup_percent, life_pickup_percent; /* of destroyed enemies: drop, of them a life */
    int32_t pickup_steps;
    vg_enemy_def enemies[VG_ENEMY_TYPES];
    int32_t drifter_speed, drifter_speed_per_wave, drifter_speed_waves; /* vx of a wave */
    int32_t drifter_fires_from_wave;
    int32_t boss_hp_per_boss_wave, boss_hp_per_player;
    vg_effect_def effects[VG_EFFECTS];
} vg_data;

/* The built-in values: today's game, equal to the shipped data files. */
extern const vg_data vanguard_data_default;

/* ---- the state block -------------------------------------------------------- */

typedef struct vg_player {
    uint32_t score;
    uint32_t ship;     /* cradle_entity of the ship, CRADLE_ENTITY_NONE when none */
    int32_t respawn;   /* steps until the ship comes back, when it has none */
    int32_t invulnerable; /* steps left */
    int32_t cooldown;  /* steps until the cannon can fire */
    int32_t rapid;     /* steps of rapid fire left */
    uint8_t joined;    /* has a ship or lives (slot in the game) */
    uint8_t present;   /* connected on the last step */
    uint8_t lives;
    uint8_t input;     /* actions of the last step (for edges) */
} vg_player;

#define VG_ECS_BYTES                                                                   \
    (CRADLE_ECS_BASE_BYTES(VG_MAX_ENTITIES) +                                          \
     CRADLE_ECS_COMPONENT_BYTES(VG_MAX_ENTITIES, VG_MAX_ENTITIES, sizeof(vg_motion)) + \
     CRADLE_ECS_COMPONENT_BYTES(VG_MAX_ENTITIES, VG_MAX_ENTITIES, sizeof(vg_body)) +   \
     CRADLE_ECS_COMPONENT_BYTES(VG_MAX_ENTITIES, VG_MAX_ENTITIES, sizeof(vg_tag)) +    \
     CRADLE_ECS_COMPONENT_BYTES(VG_MAX_ENTITIES, VG_MAX_ENTITIES, sizeof(vg_enemy)) +  \
     CRADLE_ECS_COMPONENT_BYTES(VG_MAX_ENTITIES, VG_MAX_ENTITIES, sizeof(vg_ttl)))

#define VG_GRID_ENTRIES (4u * VG_GRID_OBJECTS)
#define VG_GRID_BYTES \
    CRADLE_GRID_BYTES(VG_GRID_W, VG_GRID_H, VG_GRID_CELL, VG_GRID_OBJECTS, VG_GRID_ENTRIES)

#define VG_STATE_MAGIC 0x56414e31u /* "VAN1" */

typedef struct vanguard_state {
    uint32_t magic;         /* VG_STATE_MAGIC once init() ran */
    uint32_t player_count;  /* as passed to init() */
    uint64_t seed;
    cradle_rng rng;
    uint32_t tick;          /* steps since the game (re)started */
    uint32_t wave;          /* current wave, 1-based; 0 before the first */
    uint32_t wave_steps;    /* steps since the wave started */
    uint32_t break_steps;   /* steps until the next wave, while between waves */
    uint32_t spawn_steps;   /* steps until the next spawn of the wave */
    uint32_t pending[VG_ENEMY_TYPES]; /* enemies of the wave still to come */
    uint32_t game_over;     /* 1 once every joined player is out of lives */
    uint32_t restarts;      /* not gameplay: kept across a restart */
    uint32_t reloads;       /* not gameplay: hot reloads seen */
    uint32_t refused_spawns;/* spawns refused because the world was full */
    uint32_t dropped_hits;  /* collisions beyond VG_MAX_HITS (ignored) */
    uint32_t grazing;       /* 0: no enemy shot has a graze owner (see vg_near_misses) */
    vg_player players[VG_MAX_PLAYERS];
    vg_data data;           /* the data files' values (not in the gameplay checksum) */
    _Alignas(64) uint8_t world[VG_ECS_BYTES];
    _Alignas(64) uint8_t grid[VG_GRID_BYTES];
    /* Scratch of one step (rewritten each step; deterministic all the same). */
    uint32_t scratch[VG_MAX_ENTITIES];
    /* Each moving entity's collision-prefilter square by entity index, as
     * vg_move() left it (see vanguard.c). */
    uint16_t square[VG_MAX_ENTITIES];
} vanguard_state;

_Static_assert(sizeof(vg_motion) == 16, "vg_motion has padding");
_Static_assert(sizeof(vg_body) == 16, "vg_body has padding");
_Static_assert(sizeof(vg_tag) == 8, "vg_tag has padding");
_Static_assert(sizeof(vg_enemy) == 32, "vg_enemy has padding");
_Static_assert(sizeof(vg_player) == 28, "vg_player has padding");
_Static_assert(sizeof(vg_wave_def) == 16 && sizeof(vg_enemy_def) == 16 && sizeof(vg_effect_def) == 8,
               "vg_data's parts have padding");
_Static_assert(sizeof(vg_data) == 8 * 4 + VG_MAX_WAVES * 16 + 11 * 4 + VG_ENEMY_TYPES * 16 + 6 * 4 +
                                      VG_EFFECTS * 8,
               "vg_data has padding");
_Static_assert(_Alignof(vanguard_state) <= 64, "state alignment above 64");
_Static_assert(offsetof(vanguard_state, world) % CRADLE_ECS_ALIGN == 0, "world misaligned");
_Static_assert(offsetof(vanguard_state, grid) % CRADLE_GRID_ALIGN == 0, "grid misaligned");

static inline cradle_ecs *vg_world(vanguard_state *s) { return cradle_ecs_of(s->world); }
static inline const cradle_ecs *vg_world_const(const vanguard_state *s) {
    return cradle_ecs_of_const(s->world);
}
static inline cradle_grid *vg_grid(vanguard_state *s) { return cradle_grid_of(s->grid); }

/* ---- shared between the game's files (and the tests) ------------------------ */

/* The game's contract (what cradle_game_get_contract returns). */
const cradle_game_contract *vanguard_contract(void);

/* Emits one event through the sink (NULL sink or NULL emit: dropped). */
void vanguard_emit(const cradle_event_sink *sink, uint16_t kind, uint8_t player, int32_t x,
                   int32_t y, int32_t a, int32_t b);

/* Spawns an enemy of `type` entering towards its home (hx, hy) from (x, y),
 * fixed point. Returns its id, or CRADLE_ENTITY_NONE when the world is full
 * (the spawn is refused and counted in refused_spawns). */
cradle_entity vanguard_spawn_enemy(vanguard_state *s, uint8_t type, int32_t x, int32_t y,
                                   int32_t hx, int32_t hy);

/* Spawns a pickup of `type` at (x, y); CRADLE_ENTITY_NONE when full. */
cradle_entity vanguard_spawn_pickup(vanguard_state *s, uint8_t type, int32_t x, int32_t y);

/* Spawns an enemy shot at (x, y) moving (vx, vy); CRADLE_ENTITY_NONE when full. */
cradle_entity vanguard_spawn_enemy_shot(vanguard_state *s, int32_t x, int32_t y, int32_t vx,
                                        int32_t vy);

/* Runs the enemy FSM for one think (once per source frame). */
void vanguard_ai_think(vanguard_state *s, const cradle_event_sink *events);

/* A bot's actions (VANGUARD_* bits) for `slot` in state s at `step`. */
uint32_t vanguard_bot_actions(const vanguard_state *s, uint32_t slot, uint64_t step);

/* The contract's bot entry: those actions packed into input (game_abi.h). */
void vanguard_bot(const void *state, uint64_t step, uint32_t slot, uint64_t random, uint8_t *input,
                  uint32_t input_bytes);

/* The gameplay checksum output() writes: players, the wave machine and every
 * live entity's components in ECS dense order. */
uint64_t vanguard_checksum(const vanguard_state *s);

/* The contract's data entry (game_abi.h, minor 4; vanguard_data.c): file
 * VG_FILE_WAVES or VG_FILE_TUNING checked and, when accepted, written into
 * the state's data; a refusal leaves the state as it was. */
bool vanguard_data(void *state, uint32_t file, const uint8_t *bytes, uint32_t size,
                   cradle_data_refusal *refusal);

/* Integer square root of v (floor). */
uint32_t vanguard_isqrt(uint64_t v);

/* Render and react (vanguard_render.c). */
void vanguard_render(const void *previous, const void *state, float alpha, const cradle_draw *draw);
void vanguard_react(const void *state, const cradle_event *events, uint32_t count,
                    const cradle_fx *fx);

#endif
