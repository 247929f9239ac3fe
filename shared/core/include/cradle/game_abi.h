#ifndef CRADLE_GAME_ABI_H
#define CRADLE_GAME_ABI_H
/*
 * The game ABI: the one contract between a host (cradle-server,
 * cradle-client, cradle-replay) and a game built as a shared library.
 * A game includes this header and nothing else of Cradle's I/O side; it may
 * link the pure modules of libcradle_core (ecs, grid, rng, input, ...).
 *
 * The library exports one function, named CRADLE_GAME_CONTRACT_SYMBOL, that
 * returns a pointer to a static, constant cradle_game_contract describing the
 * game: its ABI version, the size and alignment of its state block, its input
 * and player limits, its rates, its name and build id, and its entry points.
 *
 * Rules a game must follow (the host cannot check them all, replays and
 * desync detection will expose any breach):
 *  - The host owns all game memory. It allocates the state block
 *    (state_size bytes aligned to state_align) and passes it in. The game
 *    keeps no global or static mutable data: whatever must survive a step or a
 *    reload lives in the state block.
 *  - The state block holds no pointers, only indices and handles, so the host
 *    can hash it, copy it to another address, save it, send it to a late
 *    joiner and keep it across a reload of new code.
 *  - step() reads no clock, file, socket, environment or unseeded random
 *    source. It depends only on the state and the step (index and snapshot):
 *    the same state and step give the same next state on every machine that
 *    runs the same library build. Build with -ffp-contract=off and without
 *    -ffast-math (cradle_game_library() in CMake does), or use fixed point.
 *  - init(), step() and output() allocate nothing and do no I/O.
 *  - render() and react() only read the state; they present, never decide.
 *
 * Versioning: a host accepts a library whose abi_major equals the host's
 * CRADLE_ABI_MAJOR and whose abi_minor is not newer than the host's
 * CRADLE_ABI_MINOR. Minor versions only add to the end of the contract.
 *
 * The minor rule, for hosts: a library built against an older minor has a
 * shorter contract object (the struct as its compiler saw it), so a field
 * added in minor N exists only when abi_minor >= N. A host reads such a
 * field only through its accessor in contract.h (cradle_contract_bot()),
 * which answers "absent" for an older library and never touches the bytes
 * past its end; nor does a host copy a contract by value (sizeof is the
 * host's, not the library's). Minor history:
 *   0  everything up to react
 *   1  bot (CRADLE_ABI_MINOR_BOT)
 *   2  sounds, sound_count (CRADLE_ABI_MINOR_SOUNDS): the game's own sound
 *      files; before minor 2 a sound id named one of seven cues built into
 *      the client, which no longer exist (an older game plays silent)
 *   3  layout, layout_count (CRADLE_ABI_MINOR_LAYOUT): names for the bytes
 *      of the state block, so reports say "players[3].score" (layout.h)
 *   4  data_files, data_file_count, data (CRADLE_ABI_MINOR_DATA): game data
 *      files (waves, tuning) the host reads, the game validates into its
 *      state, and every host applies at the same steps
 *   5  predict, react_confirmed (CRADLE_ABI_MINOR_PREDICT): a client that
 *      predicts (shows its own input at once, rolls back when the server's
 *      step differs) asks the game what the other players will press, and
 *      tells it which events the server confirmed
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CRADLE_ABI_MAJOR 1u
#define CRADLE_ABI_MINOR 5u

/* The minor version that added each optional entry (see the minor rule). */
#define CRADLE_ABI_MINOR_BOT 1u
#define CRADLE_ABI_MINOR_SOUNDS 2u
#define CRADLE_ABI_MINOR_LAYOUT 3u
#define CRADLE_ABI_MINOR_DATA 4u
#define CRADLE_ABI_MINOR_PREDICT 5u

/* The name of the one symbol a game library exports. */
#define CRADLE_GAME_CONTRACT_SYMBOL "cradle_game_get_contract"

/* Limits every host enforces when it validates a contract. */
#define CRADLE_GAME_MAX_PLAYERS 64u      /* presence mask fits in 8 bytes */
#define CRADLE_GAME_MAX_INPUT_BYTES 32u  /* one player's input */
#define CRADLE_GAME_NAME_MAX 31u         /* bytes, without the NUL */
#define CRADLE_GAME_BUILD_ID_MAX 63u     /* bytes, without the NUL */
#define CRADLE_GAME_OUTPUT_MAX 1024u     /* bytes output() may write per step */
#define CRADLE_GAME_MAX_SOUNDS 256u      /* sound files a game names */
#define CRADLE_GAME_SOUND_NAME_MAX 127u  /* bytes of a sound file's name, without the NUL */
#define CRADLE_GAME_MAX_REGIONS 1024u    /* regions of a state layout */
#define CRADLE_GAME_REGION_NAME_MAX 31u  /* bytes of a region's name, without the NUL */
#define CRADLE_GAME_MAX_DATA_FILES 16u   /* data files a game declares */
#define CRADLE_GAME_DATA_NAME_MAX 127u   /* bytes of a data file's name, without the NUL */
#define CRADLE_GAME_DATA_MAX_BYTES (1u << 20) /* largest data file a game may declare */
#define CRADLE_GAME_DATA_MESSAGE_MAX 191u /* bytes of a refusal's message, without the NUL */

/* ---- what a step receives ------------------------------------------------
 *
 * The snapshot of one step (built by the server, stored in the log, carried
 * on the wire, fed back by replays):
 *
 *   offset 0                  presence mask, CRADLE_PRESENCE_BYTES(max_players)
 *                             bytes; bit s (byte s/8, bit s%8) set = slot s is
 *                             connected
 *   then, for s = 0 .. max_players-1:
 *                             input_bytes bytes of slot s's input, encoded by
 *                             the game with the input.h helpers (little-endian)
 *
 * A slot that is not present has all-zero input bytes.
 */
#define CRADLE_PRESENCE_BYTES(max_players) (((max_players) + 7u) / 8u)

static inline uint32_t cradle_snapshot_size(uint32_t max_players, uint32_t input_bytes) {
    return CRADLE_PRESENCE_BYTES(max_players) + max_players * input_bytes;
}

static inline bool cradle_snapshot_present(const uint8_t *snapshot, uint32_t slot) {
    return ((unsigned)snapshot[slot / 8u] >> (slot % 8u)) & 1u;
}

static inline const uint8_t *cradle_snapshot_input(const uint8_t *snapshot, uint32_t max_players,
                                                   uint32_t input_bytes, uint32_t slot) {
    return snapshot + CRADLE_PRESENCE_BYTES(max_players) + slot * input_bytes;
}

typedef struct cradle_game_step {
    uint64_t index;            /* step number, from 0 */
    uint64_t source_frame;     /* index / (steps per source frame) */
    uint32_t phase;            /* index % (steps per source frame) */
    uint32_t snapshot_size;    /* == cradle_snapshot_size(max_players, input_bytes) */
    const uint8_t *snapshot;   /* valid for the duration of the call */
} cradle_game_step;

/* ---- events: what the simulation reports --------------------------------
 *
 * A step appends events through the sink the host passes; the host keeps them
 * for that step only (clients turn them into particles, shake and sound via
 * react()). Events never feed back into the simulation. `kind` is the game's
 * own tag (0 is reserved); the other fields mean what the game says. */
typedef struct cradle_event {
    uint16_t kind;
    uint8_t player;  /* slot, or CRADLE_EVENT_NO_PLAYER */
    uint8_t flags;
    int32_t x, y;    /* where, in world units */
    int32_t a, b;    /* kind-specific values */
} cradle_event;

#define CRADLE_EVENT_NO_PLAYER 0xFFu

typedef struct cradle_event_sink {
    void *context;
    /* Appends one event. Returns false when the host's buffer is full (the
     * host counts the overflow); the game carries on either way. */
    bool (*emit)(void *context, const cradle_event *event);
} cradle_event_sink;

/* ---- drawing: what render() may do ----------------------------------------
 *
 * Coordinates are in the game's world units (view_width x view_height, origin
 * top-left, y down); the host scales them to its window. Colours are
 * 0xRRGGBBAA. Every function may be a no-op (a headless host). */
typedef struct cradle_draw {
    void *context;
    void (*clear)(void *context, uint32_t rgba);
    void (*rect)(void *context, float x, float y, float w, float h, uint32_t rgba);
    void (*rect_outline)(void *context, float x, float y, float w, float h, uint32_t rgba);
    void (*line)(void *context, float x0, float y0, float x1, float y1, uint32_t rgba);
    void (*triangle)(void *context, float x0, float y0, float x1, float y1, float x2, float y2,
                     uint32_t rgba);
    /* ASCII text, glyphs `scale` world units per font pixel (8x8 font). */
    void (*text)(void *context, float x, float y, float scale, uint32_t rgba, const char *text);
} cradle_draw;

/* ---- effects: what react() may ask of a client ---------------------------- */

/* A sound of the game's own: id i (1..sound_count) plays the contract's
 * sounds[i - 1], a WAV file the client loads when it loads the library
 * (minor 2). 0 and ids past sound_count play nothing. */
typedef uint32_t cradle_sound;

typedef struct cradle_fx {
    void *context;
    /* count particles from (x, y) in world units, moving up to `speed` world
     * units per second, fading over `life` seconds. */
    void (*burst)(void *context, float x, float y, uint32_t count, uint32_t rgba, float speed,
                  float life);
    /* Adds screen shake, in world units of displacement. */
    void (*shake)(void *context, float amount);
    /* Plays the game's sound `sound` at volume [0,1] and pitch (1 = as
     * recorded; 2 = an octave up and twice as fast). */
    void (*sound)(void *context, cradle_sound sound, float volume, float pitch);
} cradle_fx;

/* ---- bots: what bot() may do (minor 1) -------------------------------------
 *
 * A bot plays one slot for load tests, demos and empty seats: it writes the
 * input a player in `slot` would send for step `step`, as the game encodes it
 * (the same bytes a client packs from its key bindings).
 *
 *   state        the host's latest state, read only. It may be some steps
 *                behind `step` (a client asks for input ahead of the steps
 *                it has run), so a bot must not assume it is the state just
 *                before `step`.
 *   random       64 bits the host drew for this call from a generator it
 *                seeded (one per bot, from the bot's seed): the bot's only
 *                source of chance. Derive more from it (cradle_rng_seed() on
 *                a local generator) when 64 bits are not enough.
 *   input        input_bytes (== the contract's input_bytes) bytes, zeroed
 *                by the host; the bot writes the slot's input there.
 *
 * Deterministic in (state, step, slot, random): the same seed gives the same
 * inputs on every host, which is what tests rely on. Like step(), a bot
 * allocates nothing, does no I/O and keeps nothing between calls (whatever it
 * must remember is in the state, which it cannot write). slot is below
 * max_players. */
typedef void cradle_game_bot_fn(const void *state, uint64_t step, uint32_t slot, uint64_t random,
                                uint8_t *input, uint32_t input_bytes);

/* ---- prediction: what predict() may do (minor 5) ---------------------------
 *
 * A client that predicts runs steps before the server has sent them, with
 * its own player's input and a guess for every other slot. Without a
 * predict entry the guess is the slot's last input the server confirmed
 * (what GGPO and most peers do). A game that knows better (a held stick
 * keeps turning, a fire button is released after one shot) exports one:
 *
 *   state        the predicted state before step `step`, read only
 *   slot         the slot guessed for (never the client's own), below
 *                max_players, present in the last confirmed step
 *   last         the slot's last confirmed input (input_bytes bytes), from
 *                step step - steps_since
 *   input        input_bytes bytes, zeroed by the host: the guess
 *
 * Deterministic in its arguments, allocates nothing, does no I/O. A wrong
 * guess costs a rollback, never a wrong result: the server's step wins. */
typedef void cradle_game_predict_fn(const void *state, uint64_t step, uint32_t slot, const uint8_t *last,
                                    uint64_t steps_since, uint8_t *input, uint32_t input_bytes);

/* ---- the state's layout: names for its bytes (minor 3) ---------------------
 *
 * A game may describe its state block as named regions, so a host reports a
 * byte as a path (`players[3].score`, `wave`) rather than an offset. A region
 * is `count` elements of `size` bytes, `stride` bytes apart (stride >= size
 * when count > 1; a plain field has count 1), starting `offset` bytes into
 * one element of its parent region (or into the state, for a top-level
 * region). Regions nest: `parent` is the index + 1 of the enclosing region,
 * which comes earlier in the array (0: top level). Siblings do not overlap,
 * and every region fits inside one element of its parent (or the state).
 * Names are 1..CRADLE_GAME_REGION_NAME_MAX bytes of letters, digits and '_'.
 * Bytes no region covers are reported as offsets. The host checks all of
 * this when it loads the library (contract.h), like the rest. */
typedef struct cradle_state_region {
    const char *name;
    uint32_t parent;
    uint32_t offset;
    uint32_t size;
    uint32_t count;
    uint32_t stride;
} cradle_state_region;

/* ---- game data files (minor 4) ---------------------------------------------
 *
 * Data a designer edits without a compiler (waves, tuning) lives in files the
 * game declares and the host reads: the game does no I/O. Each file has a
 * name relative to the folder that holds the library (as sounds are; a host
 * may be pointed at another folder) and a size limit. The host reads a file
 * whole, hashes it and hands its bytes to data(), which checks them strictly
 * and writes what it accepts into the state block, where the steps read it.
 * Because the data then is part of the state, it is hashed, saved, sent to
 * late joiners and kept across a reload of new code like everything else.
 *
 * When does data() run: after init() at step 0 for every declared file, and
 * again at a step boundary whenever a file changed (the host watches them
 * like the library). The session's log records each application (the
 * file's BLAKE2b with the file archived beside the log), clients receive the
 * same bytes from the server and apply them before the same step, and
 * replays apply the archived bytes there: data() must therefore be as
 * deterministic as step() (no clock, no I/O, no allocation, no float
 * parsing that depends on the C library: parse decimals into fixed point,
 * as cradle/json_reader.h does).
 *
 *   state    the state block, writable. The host runs data() on a copy of
 *            the state and keeps the copy only when data() accepts, so a
 *            refusal never leaves a half-applied change: data() may write
 *            as it goes and give up anywhere.
 *   file     index into data_files
 *   bytes    the file's size bytes (size <= that file's max_bytes; maybe 0)
 *   refusal  zeroed by the host; on a refusal the game sets line (1-based,
 *            0: the file as a whole) and a message naming the field and
 *            the value ("\"count\" must be 1..64, got 0"). The host prints
 *            "<name>:<line>: <message>".
 *
 * Returns true when the bytes are accepted (and written into the state),
 * false when refused. */
typedef struct cradle_data_refusal {
    uint32_t line;
    char message[CRADLE_GAME_DATA_MESSAGE_MAX + 1];
} cradle_data_refusal;

typedef struct cradle_game_data_file {
    const char *name;   /* 1..CRADLE_GAME_DATA_NAME_MAX printable ASCII bytes, no leading
                           '/', no ".." component */
    uint32_t max_bytes; /* 1..CRADLE_GAME_DATA_MAX_BYTES: a larger file is refused */
} cradle_game_data_file;

typedef bool cradle_game_data_fn(void *state, uint32_t file, const uint8_t *bytes, uint32_t size,
                                 cradle_data_refusal *refusal);

/* ---- the contract -------------------------------------------------------- */

typedef struct cradle_game_contract {
    uint32_t abi_major;        /* CRADLE_ABI_MAJOR the game was built against */
    uint32_t abi_minor;        /* CRADLE_ABI_MINOR the game was built against */
    uint32_t state_size;       /* bytes of the state block, >= 1 */
    uint32_t state_align;      /* alignment of the state block, a power of two */
    uint32_t input_bytes;      /* bytes of one player's input, 1..CRADLE_GAME_MAX_INPUT_BYTES */
    uint32_t max_players;      /* 1..CRADLE_GAME_MAX_PLAYERS */
    uint32_t steps_per_second; /* >= 1 */
    uint32_t source_frames_per_second; /* >= 1, divides steps_per_second */
    uint32_t view_width;       /* world units the render() draws across */
    uint32_t view_height;
    const char *name;          /* NUL-terminated, 1..CRADLE_GAME_NAME_MAX bytes, static */
    const char *build_id;      /* NUL-terminated, 1..CRADLE_GAME_BUILD_ID_MAX bytes, static;
                                  changes whenever the game's code changes */

    /* Sets up a new game in the zeroed state block. Returns 0, or a negative
     * value when player_count (1..max_players) is not supported. */
    int (*init)(void *state, uint64_t seed, uint32_t player_count);

    /* Advances the state by one step with that step's snapshot. */
    void (*step)(void *state, const cradle_game_step *step, const cradle_event_sink *events);

    /* Writes the canonical bytes of the state after `step` (what golden files
     * hold) into out (capacity bytes, >= CRADLE_GAME_OUTPUT_MAX). Returns the
     * bytes written, 0..capacity. May be NULL (no golden output). */
    size_t (*output)(const void *state, uint64_t step, uint8_t *out, size_t capacity);

    /* Draws the state, interpolating from `previous` (the state one step
     * earlier) by alpha in [0,1). May be NULL (a headless-only game). */
    void (*render)(const void *previous, const void *state, float alpha, const cradle_draw *draw);

    /* Called after new code took over an existing state block (a hot reload)
     * and before its next step. May be NULL. */
    void (*on_reload)(void *state);

    /* Turns one step's events into particles, shake and sound. May be NULL. */
    void (*react)(const void *state, const cradle_event *events, uint32_t count,
                  const cradle_fx *fx);

    /* ---- minor 1 (CRADLE_ABI_MINOR_BOT) ---- */

    /* Plays one slot (see "bots" above). May be NULL: hosts then use their
     * generic bot, which flips random input bits. Hosts read this field
     * only through cradle_contract_bot() (the minor rule). */
    cradle_game_bot_fn *bot;

    /* ---- minor 2 (CRADLE_ABI_MINOR_SOUNDS) ---- */

    /* The game's sound files, shipped beside its library: sound id i plays
     * sounds[i - 1]. Each name is relative to the folder that holds the
     * library (e.g. "mygame/coin.wav"): 1..CRADLE_GAME_SOUND_NAME_MAX
     * printable ASCII bytes ending in ".wav", no leading '/', no ".."
     * component. A WAV file SDL can read (PCM, any rate, mono or stereo);
     * the client converts it. A missing or unreadable file is reported with
     * its name and that sound stays silent. sound_count 0 (sounds may then
     * be NULL): no sounds. Hosts read these through cradle_contract_sounds(). */
    const char *const *sounds;
    uint32_t sound_count;

    /* ---- minor 3 (CRADLE_ABI_MINOR_LAYOUT) ---- */

    /* The state's layout (above): layout_count regions, or 0 (layout may
     * then be NULL) for none. Hosts read it through cradle_contract_layout(). */
    const cradle_state_region *layout;
    uint32_t layout_count;

    /* ---- minor 4 (CRADLE_ABI_MINOR_DATA) ---- */

    /* The game's data files (above): data_file_count of them (0: none; then
     * data_files and data may be NULL), and the function that takes one
     * file's bytes into the state. Names are distinct. Hosts read these
     * through cradle_contract_data(). */
    const cradle_game_data_file *data_files;
    uint32_t data_file_count;
    cradle_game_data_fn *data;

    /* ---- minor 5 (CRADLE_ABI_MINOR_PREDICT) ---- */

    /* The guess for another player's input (see "prediction" above). May
     * be NULL: the slot's last confirmed input. Hosts read it through
     * cradle_contract_predict(). */
    cradle_game_predict_fn *predict;

    /* A client that predicts calls react() with each event once, as soon
     * as a step (predicted or confirmed) brings it; this one gets the
     * events of the steps the server confirmed since its last call (a
     * frame's), each once, in step order, as the server's simulation made
     * them (some may never have been predicted, some predicted ones may be
     * missing), with the confirmed state: a kill feed or a score
     * that must never show what did not happen. Hosts that show only
     * confirmed steps (a replay, a broadcast, a lockstep client) call it
     * with the same events as react(). May be NULL. Hosts read it through
     * cradle_contract_react_confirmed(). */
    void (*react_confirmed)(const void *state, const cradle_event *events, uint32_t count,
                            const cradle_fx *fx);
} cradle_game_contract;

typedef const cradle_game_contract *(*cradle_game_contract_fn)(void);

#if defined(__GNUC__)
#define CRADLE_GAME_EXPORT __attribute__((visibility("default")))
#else
#define CRADLE_GAME_EXPORT
#endif

/* A game defines its contract function with this macro:
 *   CRADLE_GAME_DEFINE_CONTRACT(&my_contract)
 */
#define CRADLE_GAME_DEFINE_CONTRACT(contract_ptr)                                   \
    CRADLE_GAME_EXPORT const cradle_game_contract *cradle_game_get_contract(void);  \
    CRADLE_GAME_EXPORT const cradle_game_contract *cradle_game_get_contract(void) { \
        return (contract_ptr);                                                      \
    }

#endif
