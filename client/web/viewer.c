/*
 * viewer: a broadcast's viewer for the browser, built as WebAssembly with
 * one game linked in (client/web/CMakeLists.txt makes <game>.wasm). It is
 * cradle-client --watch without files or threads: the page
 * (deploy/broadcast/viewer.js) fetches what the follower asks for and hands
 * the bytes in; this file checks them with the native code
 * (broadcast_follow.h, broadcast.h: the same checks, the same messages),
 * keeps the verified log of the segment in memory and plays it through the
 * replay driver (replay.h) delay behind live, on the server's clock, and
 * draws with the game's render() through the page's canvas.
 *
 * The page's side, in order:
 *   cv_open(delay_ms, key)          once; key: NULL or a pinned Ed25519 key
 *   loop: cv_ask(now)               what to fetch: the path (cv_path) under
 *                                   the broadcast's base, or nothing
 *         cv_polled(now)            when the request is a sync document's
 *         cv_doc(n) / cv_take(n)    where to put n fetched bytes, then take
 *                                   them: 0, or refused (cv_message says why)
 *         cv_failed()               the fetch failed (HTTP, network)
 *   each frame: cv_advance(now_unix_ms, max), cv_render(alpha), cv_status()
 *
 * Nothing unverified runs: a document that fails its check is refused and
 * asked again after the next sync document, keeping what was verified.
 */
#include <inttypes.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/broadcast.h"
#include "cradle/broadcast_follow.h"
#include "cradle/contract.h"
#include "cradle/input.h"
#include "cradle/reload.h"
#include "cradle/replay.h"
#include "hud.h"
#include "present.h"
#include "soft_frame.h"
#include "softdraw.h"
#include "watch_hud.h"

const cradle_game_contract *cradle_game_get_contract(void); /* the game linked in */

#define EXPORT(name) __attribute__((export_name(#name)))
#define IMPORT(name) __attribute__((import_module("cradle"), import_name(#name)))

/* The page's sound (viewer.js, Web Audio): the game's sound `sound` (its
 * contract's sounds[sound - 1]) at volume and pitch, as audio.c plays it. */
IMPORT(sound) void page_sound(uint32_t sound, float volume, float pitch);

enum {
    LOG_CAPACITY = 32u << 20,   /* one segment's verified log: hours of a session */
    STATE_CAPACITY = CRADLE_REPLAY_MIN_CAPACITY * 16u, /* a keyframe's state, as --watch takes */
    EVENTS = 1024u,
    DATA_FILES = 16u,           /* data files kept: a session's distinct ones */
    STATUS_MAX = 3072u,
    PARTICLES = 4096u,          /* as the native window's pool */
    FRAME_MAX = 4096u,          /* pixels across or down a frame */
};

typedef struct data_file {
    uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES];
    uint32_t size;
    uint8_t *bytes;
} data_file;

typedef struct viewer {
    bool open;
    uint32_t delay_ms;
    bool pinned;
    uint8_t verify_key[32];
    cradle_broadcast_follow_config follow_config;
    cradle_broadcast_follow follow;
    cradle_state_pack codec;
    cradle_broadcast_follow_ask ask; /* the last one handed to the page */
    bool asking_data;                /* it asks for pending's data file `data_wanted` */
    uint32_t data_wanted;
    char path[160];
    uint8_t *doc;                    /* start + a fragment, a keyframe or a data file */
    size_t doc_capacity;
    /* the keyframe the follower took last */
    uint8_t *key_state;
    uint32_t key_size;
    char key_build[CRADLE_GAME_BUILD_ID_MAX + 1];
    /* the segment's verified log */
    uint8_t *log;
    uint64_t log_bytes;
    uint32_t log_segment;            /* follow.segment the log holds; 0: none yet */
    bool log_keyed;
    uint64_t start_step;
    char start_build[CRADLE_GAME_BUILD_ID_MAX + 1];
    bool log_ended;                  /* the trailer is in the log */
    /* a verified fragment waiting for its data files (in doc) */
    size_t pending;
    cradle_broadcast_fragment_info pending_info;
    data_file data[DATA_FILES];
    uint32_t data_count;
    /* the replay of the segment */
    cradle_replay replay;
    bool replay_open;
    uint32_t segment;                /* the log_segment the replay plays */
    uint32_t segments;
    /* what was shown */
    uint64_t steps, first_step, last_step;
    uint8_t snapshot[CRADLE_SNAPSHOT_MAX];   /* the last step's: the players present */
    uint64_t hashes_checked, hash_mismatches; /* of segments closed */
    uint64_t mismatch_step;          /* + 1; 0: none */
    int64_t behind_ms;
    bool buffering, ended;
    uint64_t refused, failures, fragments, bytes_taken;
    char last_refusal[CRADLE_BROADCAST_MESSAGE_MAX];
    char error[CRADLE_REPLAY_MESSAGE_MAX];
    char message[CRADLE_BROADCAST_MESSAGE_MAX]; /* the last cv_take's refusal */
    /* a reload to a build this module does not hold: the page loads that
       build's twin and hands everything across (cv_handoff, cv_adopt) */
    bool handoff;
    uint32_t handoffs;               /* builds this viewer was handed from (0 or 1: this module's) */
    char needs_build[CRADLE_GAME_BUILD_ID_MAX + 1];
    uint64_t needs_step;
    uint8_t *blob;                   /* the handoff's bytes */
    size_t blob_size;
    char status[STATUS_MAX];
    /* the picture: the native window's software path (window.c) */
    cradle_present present;
    cradle_particle particles[PARTICLES];
    cradle_softdraw sd;
    uint32_t *pixels;                /* width x height, ARGB while drawn, RGBA once done */
    uint32_t width, height;
    double last_step_ms;             /* the page's clock when the newest step ran */
    double last_frame_ms;
} viewer;

static viewer v;

static void play_sound(void *context, cradle_sound sound, float volume, float pitch) {
    (void)context;
    page_sound(sound, volume, pitch);
}

/* ---- opening ------------------------------------------------------------ */

static bool hex_key(const char *hex, uint8_t out[32]) {
    if (!hex || strlen(hex) != 64) return false;
    for (int i = 0; i < 32; i++) {
        unsigned byte;
        if (sscanf(hex + 2 * i, "%2x", &byte) != 1) return false;
        out[i] = (uint8_t)byte;
    }
    return true;
}

/* Starts the viewer: delay_ms behind live (2,000..600,000), key_hex the
 * server's signing key to pin (64 hex digits) or NULL. Returns 0, or -1
 * with the reason in cv_message(). */
EXPORT(cv_open) int cv_open(uint32_t delay_ms, const char *key_hex, double now_ms) {
    if (v.open) {
        snprintf(v.message, sizeof v.message, "the viewer is open already");
        return -1;
    }
    if (delay_ms < 2000u || delay_ms > 600000u) {
        snprintf(v.message, sizeof v.message, "delay %" PRIu32 " ms: it must be 2000..600000", delay_ms);
        return -1;
    }
    if (key_hex && !(v.pinned = hex_key(key_hex, v.verify_key))) {
        snprintf(v.message, sizeof v.message, "the server's key must be 64 hex digits (cradle-keys pub --sign)");
        return -1;
    }
    v.delay_ms = delay_ms;
    v.doc_capacity = cradle_broadcast_keyframe_bound(STATE_CAPACITY);
    if (v.doc_capacity < CRADLE_LOG_HEADER_BYTES + CRADLE_BROADCAST_FRAGMENT_MAX + 1u)
        v.doc_capacity = CRADLE_LOG_HEADER_BYTES + CRADLE_BROADCAST_FRAGMENT_MAX + 1u;
    v.doc_capacity += CRADLE_GAME_DATA_MAX_BYTES; /* a data file beside the fragment that names it */
    v.doc = malloc(v.doc_capacity);
    v.key_state = malloc(STATE_CAPACITY);
    v.log = malloc(LOG_CAPACITY);
    if (!v.doc || !v.key_state || !v.log || cradle_state_pack_init(&v.codec, 0, CRADLE_STATE_PACK_BOTH) != 0) {
        snprintf(v.message, sizeof v.message, "out of memory for the viewer's buffers");
        return -1;
    }
    const cradle_game_contract *g = cradle_game_get_contract();
    v.follow_config = (cradle_broadcast_follow_config){.from = CRADLE_BROADCAST_FOLLOW_DELAYED,
                                                       .delay_ms = delay_ms,
                                                       .game = g->name,
                                                       .verify_key = v.pinned ? v.verify_key : NULL};
    cradle_broadcast_follow_init(&v.follow, &v.follow_config, (uint64_t)(now_ms * 1e6));
    v.first_step = UINT64_MAX;
    cradle_present_init(&v.present, v.particles, PARTICLES, 0x5eedu);
    v.present.play = play_sound;
    v.open = true;
    return 0;
}

EXPORT(cv_message) const char *cv_message(void) { return v.message; }
EXPORT(cv_path) const char *cv_path(void) { return v.path; }

/* ---- fetching ----------------------------------------------------------- */

static bool have_data(const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES]) {
    for (uint32_t i = 0; i < v.data_count; i++)
        if (memcmp(v.data[i].hash, hash, CRADLE_LOG_FILE_HASH_BYTES) == 0) return true;
    return false;
}

/* The first data file the pending fragment names that is not here yet;
 * pending_info.data_count when it has them all. */
static uint32_t data_missing(void) {
    uint32_t i = 0;
    while (i < v.pending_info.data_count && have_data(v.pending_info.data_hash[i])) i++;
    return i;
}

/* A new segment's log: the start document, then its verified fragments.
 * The replay of the segment before (a gap ended it) closes: it reads the
 * same memory. */
static void start_log(void) {
    if (v.replay_open) {
        v.hashes_checked += v.replay.hashes_checked;
        v.hash_mismatches += v.replay.hash_mismatches;
        cradle_replay_close(&v.replay);
        v.replay_open = false;
    }
    memcpy(v.log, v.follow.start, CRADLE_LOG_HEADER_BYTES);
    v.log_bytes = CRADLE_LOG_HEADER_BYTES;
    v.log_segment = v.follow.segment;
    v.log_keyed = v.follow.from_keyframe;
    v.log_ended = false;
    if (v.log_keyed) {
        v.start_step = v.follow.key.step + 1u;
        memcpy(v.start_build, v.key_build, sizeof v.start_build);
    }
}

/* The verified fragment in doc, its data files here: into the log. */
static int append_pending(void) {
    if (v.log_segment != v.follow.segment) start_log();
    if (v.log_bytes + v.pending > LOG_CAPACITY) {
        snprintf(v.error, sizeof v.error, "the segment outgrew the viewer's %u MiB", LOG_CAPACITY >> 20);
        return -1;
    }
    memcpy(v.log + v.log_bytes, v.doc + CRADLE_LOG_HEADER_BYTES, v.pending);
    v.log_bytes += v.pending;
    v.fragments++;
    if (v.pending_info.trailer) v.log_ended = true;
    v.pending = 0;
    return 0;
}

/* What to fetch now: the want (0 nothing until later, 16 never again) and,
 * when there is one, its path under the broadcast's base in cv_path(). A
 * fragment verified before waits for its data files, which come first. */
EXPORT(cv_ask) int cv_ask(double now_ms) {
    v.path[0] = '\0';
    v.asking_data = false;
    cradle_broadcast_follow_next(&v.follow, (uint64_t)(now_ms * 1e6), &v.ask);
    if (v.ask.note != CRADLE_BROADCAST_FOLLOW_NOTHING) {
        v.refused++;
        snprintf(v.last_refusal, sizeof v.last_refusal, "%s", v.ask.message);
    }
    if (v.pending && v.ask.want != CRADLE_BROADCAST_FOLLOW_SYNC) {
        uint32_t i = data_missing();
        if (i == v.pending_info.data_count) {
            if (append_pending() != 0) return CRADLE_BROADCAST_FOLLOW_DONE;
            return cv_ask(now_ms);
        }
        if (v.follow.stalled) return CRADLE_BROADCAST_FOLLOW_WAIT; /* the next sync first */
        v.asking_data = true;
        v.data_wanted = i;
        int u = cradle_broadcast_url(v.path, sizeof v.path, "", CRADLE_BROADCAST_DATA, 0, v.pending_info.data_hash[i]);
        (void)u;
        return CRADLE_BROADCAST_DATA;
    }
    if (v.ask.want == CRADLE_BROADCAST_FOLLOW_WAIT || v.ask.want == CRADLE_BROADCAST_FOLLOW_DONE) return (int)v.ask.want;
    int u = cradle_broadcast_follow_url(v.path, sizeof v.path, "", &v.ask);
    (void)u;
    return (int)v.ask.want;
}

EXPORT(cv_polled) void cv_polled(double now_ms) { cradle_broadcast_follow_polled(&v.follow, (uint64_t)(now_ms * 1e6)); }

EXPORT(cv_failed) void cv_failed(void) {
    v.failures++;
    cradle_broadcast_follow_failed(&v.follow);
}

/* Where the page writes the n bytes it fetched for the last ask: NULL when
 * they cannot be a document of that kind (too large: refused unread). */
/* Where a document goes in doc: a fragment after the start document it is
 * checked with; a data file after the fragment waiting for it. */
static size_t doc_offset(void) {
    if (v.asking_data) return CRADLE_LOG_HEADER_BYTES + v.pending;
    return v.ask.want == CRADLE_BROADCAST_FOLLOW_FRAGMENT ? CRADLE_LOG_HEADER_BYTES : 0;
}

EXPORT(cv_doc) uint8_t *cv_doc(uint32_t n) {
    size_t at = doc_offset();
    if (v.asking_data && n > CRADLE_GAME_DATA_MAX_BYTES) return NULL;
    if (v.pending && !v.asking_data && v.ask.want != CRADLE_BROADCAST_FOLLOW_SYNC) return NULL;
    return n <= v.doc_capacity - at ? v.doc + at : NULL;
}

static int refuse(const char *what) {
    v.refused++;
    snprintf(v.message, sizeof v.message, "%s", what);
    snprintf(v.last_refusal, sizeof v.last_refusal, "%s", what);
    return -1;
}

static int take_data(uint32_t n) {
    uint32_t i = v.data_wanted;
    const uint8_t *bytes = v.doc + doc_offset();
    uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES];
    crypto_generichash(hash, sizeof hash, bytes, n, NULL, 0);
    if (n != v.pending_info.data_size[i] || memcmp(hash, v.pending_info.data_hash[i], sizeof hash) != 0) {
        char why[CRADLE_BROADCAST_MESSAGE_MAX];
        snprintf(why, sizeof why, "%s: %" PRIu32 " bytes that are not the ones the log names (%" PRIu32
                 " bytes, its BLAKE2b-256)", v.path, n, v.pending_info.data_size[i]);
        cradle_broadcast_follow_failed(&v.follow); /* asked again after the next sync */
        return refuse(why);
    }
    if (v.data_count == DATA_FILES) {
        free(v.data[0].bytes); /* the oldest goes: a session uses few */
        memmove(&v.data[0], &v.data[1], sizeof v.data[0] * (DATA_FILES - 1u));
        v.data_count--;
    }
    data_file *d = &v.data[v.data_count];
    d->bytes = malloc(n ? n : 1u);
    if (!d->bytes) {
        snprintf(v.message, sizeof v.message, "out of memory for a data file");
        cv_failed();
        return -1;
    }
    memcpy(d->bytes, bytes, n);
    memcpy(d->hash, hash, sizeof hash);
    d->size = n;
    v.data_count++;
    return 0;
}

/* The n bytes the page wrote at cv_doc(n) for the last ask. Returns 0, or
 * -1 with cv_message(): refused (named, counted; asked again after the next
 * sync document) or the viewer's own failure. */
EXPORT(cv_take) int cv_take(uint32_t n) {
    v.message[0] = '\0';
    v.bytes_taken += n;
    if (v.asking_data) return take_data(n);
    char why[CRADLE_BROADCAST_MESSAGE_MAX];
    int rc = 0;
    switch (v.ask.want) {
    case CRADLE_BROADCAST_FOLLOW_SYNC: rc = cradle_broadcast_follow_take_sync(&v.follow, v.doc, n, why, sizeof why); break;
    case CRADLE_BROADCAST_FOLLOW_START: rc = cradle_broadcast_follow_take_start(&v.follow, v.doc, n, why, sizeof why); break;
    case CRADLE_BROADCAST_FOLLOW_KEYFRAME: {
        cradle_broadcast_keyframe k;
        rc = cradle_broadcast_follow_take_keyframe(&v.follow, &v.codec, v.doc, n, v.key_state, STATE_CAPACITY, &k, why,
                                                   sizeof why);
        if (rc == 0) {
            v.key_size = k.state_size;
            memcpy(v.key_build, k.build_id, sizeof v.key_build);
            start_log();
        }
        break;
    }
    case CRADLE_BROADCAST_FOLLOW_FRAGMENT:
        memcpy(v.doc, v.follow.start, CRADLE_LOG_HEADER_BYTES);
        rc = cradle_broadcast_follow_take_fragment(&v.follow, v.doc, CRADLE_LOG_HEADER_BYTES + (size_t)n,
                                                   &v.pending_info, why, sizeof why);
        if (rc == 0) v.pending = n; /* appended once its data files are here (cv_ask) */
        break;
    default: snprintf(why, sizeof why, "nothing was asked for"); rc = -1; break;
    }
    return rc == 0 ? 0 : refuse(why);
}

/* ---- playing ------------------------------------------------------------ */

static int read_data(void *context, const uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES], uint32_t size, uint8_t *out,
                     size_t capacity, char *why, size_t why_size) {
    (void)context;
    for (uint32_t i = 0; i < v.data_count; i++) {
        const data_file *d = &v.data[i];
        if (memcmp(d->hash, hash, CRADLE_LOG_FILE_HASH_BYTES) != 0) continue;
        if (d->size != size || size > capacity) break;
        memcpy(out, d->bytes, size);
        return 0;
    }
    snprintf(why, why_size, "the viewer does not hold that file (%" PRIu32 " bytes)", size);
    return CRADLE_EDATA;
}

static void warn(void *context, const char *message) {
    (void)context;
    fprintf(stderr, "viewer: warning: %s\n", message);
}

/* The replay of the log's segment, from its keyframe. 0 (also while there
 * is none yet), -1 with v.error. */
static int open_replay(void) {
    if (v.log_segment == 0 || v.log_segment == v.segment || v.log_bytes == CRADLE_LOG_HEADER_BYTES) return 0;
    cradle_replay_config config = {.log_path = "the broadcast",
                                   .log_memory = v.log,
                                   .log_bytes = v.log_bytes,
                                   .game_path = CRADLE_RELOAD_LINKED,
                                   .keep_previous = true,
                                   .event_capacity = EVENTS,
                                   .reload_game_path = true,
                                   .read_data = read_data,
                                   .warn = warn};
    if (v.log_keyed) {
        config.start_state = v.key_state;
        config.start_state_size = v.key_size;
        config.start_step = v.start_step;
        config.start_build = v.start_build;
    }
    if (cradle_replay_open(&v.replay, &config) != 0) {
        snprintf(v.error, sizeof v.error, "%s", v.replay.message);
        return -1;
    }
    v.replay_open = true;
    v.segment = v.log_segment;
    v.segments++;
    return 0;
}

/* One step and the records after it: 1, 0 when the log has no more yet
 * (or ended), -1 with v.error. react() sees the step's events. */
static int run_one(void) {
    cradle_replay_item item;
    int rc;
    while ((rc = cradle_replay_next(&v.replay, &item)) == 1) {
        if (item.kind != CRADLE_REPLAY_STEP) continue;
        memcpy(v.snapshot, item.snapshot, v.replay.sim.snapshot_size);
        rc = cradle_replay_catch_up(&v.replay);
        if (rc < 0) break;
        if (v.replay.mismatch && !v.mismatch_step) v.mismatch_step = v.replay.mismatch_step + 1u;
        v.steps++;
        v.last_step = item.step;
        if (v.first_step == UINT64_MAX) v.first_step = item.step;
        const cradle_sim *sim = &v.replay.sim;
        cradle_fx fx = cradle_present_fx(&v.present);
        if (sim->contract->react) sim->contract->react(sim->state, sim->events.events, sim->events.count, &fx);
        cradle_game_react_fn *react_confirmed = cradle_contract_react_confirmed(sim->contract);
        if (react_confirmed) react_confirmed(sim->state, sim->events.events, sim->events.count, &fx);
        if (v.replay.ended && v.replay.reader.end == CRADLE_LOG_END_CLOSED) v.ended = true;
        return 1;
    }
    if (rc == 0) {
        if (v.replay.ended && v.replay.reader.end == CRADLE_LOG_END_CLOSED) v.ended = true;
        return 0;
    }
    const cradle_log_record *rec = &v.replay.record;
    if (rec->kind == CRADLE_LOG_RECORD_RELOAD && rec->step == v.replay.sim.next_step &&
        strcmp(rec->build_id, cradle_game_get_contract()->build_id) != 0) {
        /* Another build takes over at this step: not in this module. The
         * sim holds the state before it, untouched (the build was refused
         * before any swap); the page brings that build's twin. */
        v.handoff = true;
        snprintf(v.needs_build, sizeof v.needs_build, "%s", rec->build_id);
        v.needs_step = rec->step;
        return 0;
    }
    snprintf(v.error, sizeof v.error, "%s", v.replay.message);
    return -1;
}

/* Runs the steps due at now_unix_ms (the server ran them delay ago), at
 * most max. Returns the steps run, or -1 with the error in the status. */
EXPORT(cv_advance) int cv_advance(double now_unix_ms, uint32_t max) {
    if (!v.open || v.error[0]) return -1;
    if (open_replay() != 0) return -1;
    if (!v.replay_open || !v.follow.have_sync || v.ended || v.handoff) return 0;
    (void)cradle_replay_grow(&v.replay, v.log_bytes);
    const cradle_broadcast_sync *s = &v.follow.sync;
    int64_t since_live = (int64_t)now_unix_ms - (int64_t)s->live_unix_ms - (int64_t)v.delay_ms;
    int64_t due = (int64_t)s->live_step + since_live * (int64_t)s->steps_per_second / 1000;
    uint32_t ran = 0;
    v.buffering = false;
    while (ran < max && (int64_t)v.replay.sim.next_step < due) {
        int rc = run_one();
        if (rc < 0) return -1;
        if (rc == 0) {
            v.buffering = !v.ended;
            break;
        }
        ran++;
    }
    if (ran > 0) v.last_step_ms = now_unix_ms;
    if (v.steps) {
        int64_t steps_before_live = (int64_t)s->live_step - 1 - (int64_t)v.last_step;
        v.behind_ms = (int64_t)now_unix_ms - ((int64_t)s->live_unix_ms - steps_before_live * 1000 / (int64_t)s->steps_per_second);
    }
    return (int)ran;
}

/* The picture at now_ms (the page's clock) in a width x height frame, as
 * the native window draws it in software: the game's render() between the
 * state before the newest step and the newest at the alpha of the time
 * since it ran, the particles and shake of react(), the letterbox, and,
 * with hud, the HUD's figures and banner (fps as the page measured it).
 * Returns the frame's RGBA pixels (for an ImageData), or NULL when the
 * size is out of range or memory ran out. */
EXPORT(cv_frame) const uint8_t *cv_frame(uint32_t width, uint32_t height, double now_ms, int hud, double fps) {
    if (width == 0 || height == 0 || width > FRAME_MAX || height > FRAME_MAX) return NULL;
    const cradle_game_contract *g = v.replay_open ? v.replay.sim.contract : cradle_game_get_contract();
    if (width != v.width || height != v.height || !v.pixels) {
        free(v.pixels); /* a new size: the only allocation a frame makes */
        v.pixels = malloc((size_t)width * height * 4u);
        if (!v.pixels) {
            v.width = v.height = 0;
            return NULL;
        }
        v.width = width;
        v.height = height;
        cradle_softdraw_init(&v.sd, v.pixels, (int)width, (int)height, (int)width, g->view_width, g->view_height);
    }
    double elapsed = v.last_frame_ms > 0.0 && now_ms > v.last_frame_ms ? now_ms - v.last_frame_ms : 0.0;
    v.last_frame_ms = now_ms;
    cradle_present_update(&v.present, (float)(elapsed / 1000.0));
    cradle_soft_frame f = {.present = &v.present};
    if (v.replay_open) {
        const cradle_sim *sim = &v.replay.sim;
        double since = now_ms > v.last_step_ms ? now_ms - v.last_step_ms : 0.0;
        f.game = g;
        f.previous = sim->has_previous ? sim->previous : sim->state;
        f.state = sim->state;
        f.alpha = cradle_present_alpha((uint64_t)(since * 1e6), g->steps_per_second, 1.0);
    }
    cradle_hud_info info;
    if (hud) {
        cradle_watch_hud_in in = {.playing = v.replay_open,
                                  .behind_ms = v.behind_ms,
                                  .error = v.error,
                                  .mismatch_step = v.mismatch_step,
                                  .ended = v.ended,
                                  .buffering = v.buffering,
                                  .steps = v.steps,
                                  .fetch_error = v.last_refusal,
                                  .url = "the broadcast"};
        cradle_watch_hud_out text;
        cradle_watch_hud_text(&in, &text);
        cradle_client_replay_hud(v.replay_open ? &v.replay : NULL, v.steps ? v.snapshot : NULL, &info);
        info.fps = fps;
        info.mode = text.mode;
        info.build = v.replay_open ? v.replay.build_id : NULL;
        info.banner = text.banner;
        info.detail = text.detail[0] ? text.detail : NULL;
        info.banner_rgba = text.banner_rgba;
        f.hud = &info;
    }
    cradle_soft_frame_draw(&v.sd, &f);
    return (const uint8_t *)v.pixels;
}

/* ---- a reload: handing the viewer to the next build's twin ----------- */

/* The handoff: everything a twin of another build needs to go on where this
 * one stopped, as bytes the page copies from one module's memory to the
 * other's. Both modules are built from the same sources (the page checked
 * each against the session's announcement), so the structs have the same
 * layout; the header says so, and cv_adopt checks it. */
#define HANDOFF_MAGIC 0x43564844u /* "CVHD" */
#define HANDOFF_VERSION 1u

typedef struct handoff_head {
    uint32_t magic, version;
    uint32_t follow_size, info_size; /* sizeof: the layout both modules share */
    char from_build[CRADLE_GAME_BUILD_ID_MAX + 1];
    char to_build[CRADLE_GAME_BUILD_ID_MAX + 1];
    uint64_t step;                   /* the reload's: the state is the one before it */
    uint32_t state_size;
    uint32_t data_count;
    uint64_t log_bytes;
    uint64_t pending;                /* a verified fragment's bytes awaiting data files */
    uint32_t log_segment, segments;
    uint64_t steps, first_step, last_step, hashes_checked, hash_mismatches, mismatch_step;
    uint64_t refused, failures, fragments, bytes_taken;
    bool log_ended;
} handoff_head;

/* Writes n bytes at *at (NULL: only counts). */
static void put(uint8_t **at, size_t *size, const void *bytes, size_t n) {
    if (*at) {
        memcpy(*at, bytes, n);
        *at += n;
    }
    *size += n;
}

static size_t handoff_write(uint8_t *out) {
    handoff_head h = {.magic = HANDOFF_MAGIC,
                      .version = HANDOFF_VERSION,
                      .follow_size = sizeof v.follow,
                      .info_size = sizeof v.pending_info,
                      .step = v.needs_step,
                      .state_size = cradle_sim_state_size(&v.replay.sim),
                      .data_count = v.data_count,
                      .log_bytes = v.log_bytes,
                      .pending = v.pending,
                      .log_segment = v.log_segment,
                      .segments = v.segments,
                      .steps = v.steps,
                      .first_step = v.first_step,
                      .last_step = v.last_step,
                      .hashes_checked = v.hashes_checked + v.replay.hashes_checked,
                      .hash_mismatches = v.hash_mismatches + v.replay.hash_mismatches,
                      .mismatch_step = v.mismatch_step,
                      .refused = v.refused,
                      .failures = v.failures,
                      .fragments = v.fragments,
                      .bytes_taken = v.bytes_taken,
                      .log_ended = v.log_ended};
    snprintf(h.from_build, sizeof h.from_build, "%s", cradle_game_get_contract()->build_id);
    snprintf(h.to_build, sizeof h.to_build, "%s", v.needs_build);
    uint8_t *at = out;
    size_t size = 0;
    put(&at, &size, &h, sizeof h);
    put(&at, &size, &v.follow, sizeof v.follow);
    put(&at, &size, &v.pending_info, sizeof v.pending_info);
    put(&at, &size, v.replay.sim.state, h.state_size);
    put(&at, &size, v.log, v.log_bytes);
    put(&at, &size, v.doc + CRADLE_LOG_HEADER_BYTES, v.pending);
    for (uint32_t i = 0; i < v.data_count; i++) {
        put(&at, &size, v.data[i].hash, sizeof v.data[i].hash);
        put(&at, &size, &v.data[i].size, sizeof v.data[i].size);
        put(&at, &size, v.data[i].bytes, v.data[i].size);
    }
    return size;
}

/* The handoff's bytes (cv_handoff_size() of them) once the status says
 * "needs_build"; NULL before, or when memory ran out. */
EXPORT(cv_handoff) const uint8_t *cv_handoff(void) {
    if (!v.handoff) return NULL;
    free(v.blob);
    v.blob_size = handoff_write(NULL);
    v.blob = malloc(v.blob_size);
    if (!v.blob) return NULL;
    handoff_write(v.blob);
    return v.blob;
}

EXPORT(cv_handoff_size) uint32_t cv_handoff_size(void) { return (uint32_t)v.blob_size; }

static bool take(const uint8_t **at, const uint8_t *end, void *out, size_t n) {
    if ((size_t)(end - *at) < n) return false;
    memcpy(out, *at, n);
    *at += n;
    return true;
}

/* Goes on from another twin's handoff (size bytes at blob, written into
 * this module's memory by the page after cv_open): the follower where it
 * was, the segment's verified log, the data files, and the state before
 * the reload, from which the replay runs the RELOAD record with this
 * build, on_reload and all, exactly where the session did. Returns 0, or
 * -1 with cv_message(). */
EXPORT(cv_adopt) int cv_adopt(const uint8_t *blob, uint32_t size) {
    const uint8_t *at = blob, *end = blob + size;
    handoff_head h;
    const char *linked = cradle_game_get_contract()->build_id;
    if (!v.open || v.follow.have_sync || !take(&at, end, &h, sizeof h) || h.magic != HANDOFF_MAGIC ||
        h.version != HANDOFF_VERSION || h.follow_size != sizeof v.follow || h.info_size != sizeof v.pending_info) {
        snprintf(v.message, sizeof v.message, "the handoff is not one this twin reads (another Cradle version?)");
        return -1;
    }
    h.to_build[sizeof h.to_build - 1] = h.from_build[sizeof h.from_build - 1] = '\0';
    if (strcmp(h.to_build, linked) != 0) {
        snprintf(v.message, sizeof v.message, "the handoff is for build '%s', this twin is build '%s'", h.to_build,
                 linked);
        return -1;
    }
    const cradle_broadcast_follow_config *config = &v.follow_config;
    if (h.state_size > STATE_CAPACITY || h.log_bytes > LOG_CAPACITY || h.log_bytes < CRADLE_LOG_HEADER_BYTES ||
        h.pending > CRADLE_BROADCAST_FRAGMENT_MAX || h.data_count > DATA_FILES || !take(&at, end, &v.follow, sizeof v.follow) ||
        !take(&at, end, &v.pending_info, sizeof v.pending_info) || !take(&at, end, v.key_state, h.state_size) ||
        !take(&at, end, v.log, h.log_bytes) || !take(&at, end, v.doc + CRADLE_LOG_HEADER_BYTES, h.pending)) {
        snprintf(v.message, sizeof v.message, "the handoff is truncated or out of range");
        return -1;
    }
    v.follow.config = config;
    for (uint32_t i = 0; i < h.data_count; i++) {
        data_file *d = &v.data[i];
        if (!take(&at, end, d->hash, sizeof d->hash) || !take(&at, end, &d->size, sizeof d->size) ||
            d->size > CRADLE_GAME_DATA_MAX_BYTES || !(d->bytes = malloc(d->size ? d->size : 1u)) ||
            !take(&at, end, d->bytes, d->size)) {
            snprintf(v.message, sizeof v.message, "the handoff's data file %" PRIu32 " is truncated", i + 1u);
            return -1;
        }
        v.data_count = i + 1u;
    }
    v.key_size = h.state_size;
    v.log_bytes = h.log_bytes;
    v.pending = h.pending;
    v.log_segment = h.log_segment;
    v.log_keyed = true; /* a keyframe of the page's making: the state before the reload */
    v.log_ended = h.log_ended;
    v.start_step = h.step;
    snprintf(v.start_build, sizeof v.start_build, "%s", linked);
    v.segments = h.segments - 1u; /* open_replay counts the same segment again */
    v.steps = h.steps;
    v.first_step = h.first_step;
    v.last_step = h.last_step;
    v.hashes_checked = h.hashes_checked;
    v.hash_mismatches = h.hash_mismatches;
    v.mismatch_step = h.mismatch_step;
    v.refused = h.refused;
    v.failures = h.failures;
    v.fragments = h.fragments;
    v.bytes_taken = h.bytes_taken;
    v.handoffs = 1u;
    return 0;
}

/* ---- what the page shows ------------------------------------------------ */

static void json_text(char *out, size_t size, const char *text) {
    size_t o = 0;
    for (const char *p = text; *p && o + 7 < size; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\') o += (size_t)snprintf(out + o, size - o, "\\%c", c);
        else if (c < 0x20 || c > 0x7e) o += (size_t)snprintf(out + o, size - o, "\\u%04x", c);
        else out[o++] = (char)c;
    }
    out[o] = '\0';
}

/* The viewer's state as one JSON object (see viewer.js). */
EXPORT(cv_status) const char *cv_status(void) {
    const cradle_game_contract *g = cradle_game_get_contract();
    const cradle_broadcast_sync *s = &v.follow.sync;
    char error[2 * CRADLE_REPLAY_MESSAGE_MAX], refusal[2 * CRADLE_BROADCAST_MESSAGE_MAX], game[64], build[160],
        sync_build[160];
    json_text(error, sizeof error, v.error);
    json_text(refusal, sizeof refusal, v.last_refusal);
    json_text(game, sizeof game, g->name);
    json_text(build, sizeof build, g->build_id);
    json_text(sync_build, sizeof sync_build, v.follow.have_sync ? s->build : "");
    uint64_t hash = v.replay_open ? cradle_sim_hash(&v.replay.sim) : 0;
    char needs_manifest[2 * CRADLE_BROADCAST_WEB_HASH_BYTES + 1] = "", needs_build[160];
    json_text(needs_build, sizeof needs_build, v.handoff ? v.needs_build : "");
    for (uint32_t i = 0; v.handoff && v.follow.have_sync && i < s->web_count; i++)
        if (strcmp(s->web[i].build, v.needs_build) == 0)
            for (uint32_t b = 0; b < CRADLE_BROADCAST_WEB_HASH_BYTES; b++)
                snprintf(needs_manifest + 2 * b, 3, "%02x", s->web[i].manifest[b]);
    uint64_t checked = v.hashes_checked + (v.replay_open ? v.replay.hashes_checked : 0);
    uint64_t mismatches = v.hash_mismatches + (v.replay_open ? v.replay.hash_mismatches : 0);
    snprintf(v.status, sizeof v.status,
             "{\"game\":\"%s\",\"build\":\"%s\",\"view_width\":%" PRIu32 ",\"view_height\":%" PRIu32
             ",\"steps_per_second\":%" PRIu32 ",\"playing\":%s,\"step\":%" PRIu64 ",\"first_step\":%" PRIu64
             ",\"steps\":%" PRIu64 ",\"hash\":\"%016" PRIx64 "\",\"hashes_checked\":%" PRIu64
             ",\"hash_mismatches\":%" PRIu64 ",\"mismatch_step\":%" PRId64 ",\"behind_ms\":%" PRId64
             ",\"buffering\":%s,\"ended\":%s,\"segment\":%" PRIu32 ",\"fragments\":%" PRIu64
             ",\"refused\":%" PRIu64 ",\"failures\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"last_refusal\":\"%s\""
             ",\"error\":\"%s\",\"sync_build\":\"%s\",\"live_step\":%" PRIu64 ",\"signed\":%s"
             ",\"needs_build\":\"%s\",\"needs_manifest\":\"%s\",\"handoffs\":%" PRIu32
             ",\"particles\":%" PRIu32 ",\"shake\":%s}",
             game, build, g->view_width, g->view_height, g->steps_per_second, v.replay_open ? "true" : "false",
             v.last_step, v.first_step == UINT64_MAX ? 0 : v.first_step, v.steps, hash, checked, mismatches,
             v.mismatch_step ? (int64_t)v.mismatch_step - 1 : -1, v.behind_ms, v.buffering ? "true" : "false",
             v.ended ? "true" : "false", v.segment, v.fragments, v.refused, v.failures, v.bytes_taken, refusal, error,
             sync_build, v.follow.have_sync ? s->live_step : 0, v.pinned ? "true" : "false",
             needs_build, needs_manifest, v.handoffs, v.present.count,
             v.present.shake_x != 0.0f || v.present.shake_y != 0.0f ? "true" : "false");
    return v.status;
}

/* The game's sound files (names relative to its folder), one a line. */
EXPORT(cv_sounds) const char *cv_sounds(void) {
    static char list[CRADLE_GAME_MAX_SOUNDS * 32u];
    uint32_t count = 0;
    const char *const *names = cradle_contract_sounds(cradle_game_get_contract(), &count);
    size_t o = 0;
    list[0] = '\0';
    for (uint32_t i = 0; i < count && o < sizeof list; i++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s\n", names[i]);
    return list;
}

/* The page's memory for strings it passes in (the key), freed by cv_free. */
EXPORT(cv_alloc) void *cv_alloc(uint32_t n) { return malloc(n ? n : 1u); }
EXPORT(cv_free) void cv_free(void *p) { free(p); }
