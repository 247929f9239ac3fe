#include "cradle/replay.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cradle/contract.h"
#include "cradle/hash.h"
#include "cradle/os.h"
#include "cradle/systime.h"

#define STATE_ALIGN CRADLE_RELOAD_DEFAULT_MAX_ALIGN

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(cradle_replay *r, int code, const char *format, ...) {
    if (r->error) return r->error; /* the first failure is the one to report */
    va_list args;
    va_start(args, format);
    (void)vsnprintf(r->message, sizeof r->message, format, args);
    va_end(args);
    r->error = code;
    return code;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void warn(const cradle_replay *r, const char *format, ...) {
    if (!r->config.warn) return;
    char text[CRADLE_REPLAY_MESSAGE_MAX];
    va_list args;
    va_start(args, format);
    (void)vsnprintf(text, sizeof text, format, args);
    va_end(args);
    r->config.warn(r->config.warn_context, text);
}

static bool file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool all_zero(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

/* Loads path into library slot and checks it against the log: build_id is
 * the build the log runs at this point. Returns 0 or the failure. */
static int load_library(cradle_replay *r, int slot, const char *path, const char *build_id) {
    const char *copy_dir = r->config.copy_dir ? r->config.copy_dir : cradle_os_tmpdir();
    cradle_reload_config config = {.path = path, .copy_dir = copy_dir, .state_capacity = r->capacity};
    char why[CRADLE_RELOAD_MESSAGE_MAX];
    int rc = cradle_reload_open(&r->libraries[slot], &config, cradle_mono_ns(), why, sizeof why);
    if (rc != 0) return fail(r, rc, "cannot load %s: %s", path, why);
    char mismatch[CRADLE_LOG_MESSAGE_MAX];
    rc = cradle_log_check_library(&r->reader.header, build_id, cradle_reload_contract(&r->libraries[slot]),
                                  mismatch, sizeof mismatch);
    if (rc != 0) {
        if (!r->config.force) {
            cradle_reload_close(&r->libraries[slot]);
            return fail(r, rc, "%s: %s (--force replays anyway)", path, mismatch);
        }
        warn(r, "%s: %s; replaying anyway (--force)", path, mismatch);
    }
    return 0;
}

/* The first library: the caller's, or the build archived beside the log. */
static int load_first(cradle_replay *r) {
    const cradle_log_header *h = &r->reader.header;
    if (r->config.start_state) return load_library(r, 0, r->config.game_path, r->config.start_build);
    char archived[CRADLE_LOG_PATH_MAX + 128];
    const char *path = r->config.game_path;
    if (!path) {
        if (all_zero(h->build_file_hash, sizeof h->build_file_hash) ||
            cradle_log_build_path(archived, sizeof archived, r->config.log_path, h->build_file_hash) != 0 ||
            !file_exists(archived))
            return fail(r, CRADLE_EINVAL, "the log's build '%s' is not archived beside it (%s.builds/); pass --game LIB",
                        h->build_id, r->config.log_path);
        path = archived;
    }
    return load_library(r, 0, path, h->build_id);
}

int cradle_replay_open(cradle_replay *r, const cradle_replay_config *config) {
    assert(r && config && config->log_path);
    memset(r, 0, sizeof *r);
    r->config = *config;
    char message[CRADLE_LOG_MESSAGE_MAX];
    assert(!config->start_state || (config->game_path && config->start_build && config->start_step >= 1));
    int rc = config->log_memory
                 ? cradle_log_reader_open_memory(&r->reader, config->log_memory, config->log_bytes, message, sizeof message)
                 : cradle_log_reader_open(&r->reader, config->log_path, message, sizeof message);
    if (rc != 0) return fail(r, rc, "%s", message);
    r->reader_open = true;
    if (config->log_bytes) (void)cradle_log_reader_grow(&r->reader, config->log_bytes);
    if (config->start_state) cradle_log_reader_start_anywhere(&r->reader);
    const cradle_log_header *h = &r->reader.header;
    uint32_t capacity = h->state_size > CRADLE_REPLAY_MIN_CAPACITY ? h->state_size : CRADLE_REPLAY_MIN_CAPACITY;
    r->capacity = (capacity + STATE_ALIGN - 1u) / STATE_ALIGN * STATE_ALIGN;
    rc = load_first(r);
    if (rc != 0) goto out_close;
    r->data = malloc(CRADLE_GAME_DATA_MAX_BYTES);
    if (!r->data) {
        rc = fail(r, CRADLE_ENOMEM, "out of memory for a data file");
        goto out_close;
    }
    char why[CRADLE_RELOAD_MESSAGE_MAX];
    rc = cradle_sim_storage_open(&r->storage, &r->sim, cradle_reload_contract(&r->libraries[0]),
                                 &(cradle_sim_storage_config){.capacity = r->capacity,
                                                              .align = STATE_ALIGN,
                                                              .previous = config->keep_previous,
                                                              .scratch = true,
                                                              .event_capacity = config->event_capacity},
                                 why, sizeof why);
    if (rc != 0) {
        fail(r, rc, "%s", why);
        goto out_close;
    }
    rc = cradle_sim_start(&r->sim, h->seed, h->player_count);
    if (rc != 0) {
        fail(r, rc, "the game refused the log's %" PRIu32 " players", h->player_count);
        goto out_close;
    }
    if (config->start_state) {
        r->skip_before = config->start_step;
        rc = cradle_sim_restore(&r->sim, config->start_state, config->start_state_size, config->start_step);
        if (rc != 0) {
            fail(r, rc, "the keyframe's %" PRIu32 "-byte state does not fit build '%s' (%" PRIu32 " bytes)",
                 config->start_state_size, config->start_build, cradle_sim_state_size(&r->sim));
            goto out_close;
        }
    }
    snprintf(r->build_id, sizeof r->build_id, "%s", config->start_state ? config->start_build : h->build_id);
    if (!config->start_state) memcpy(r->build_file_hash, h->build_file_hash, sizeof r->build_file_hash);
    return 0;

out_close:
    rc = r->error;
    {
        char kept[CRADLE_REPLAY_MESSAGE_MAX];
        memcpy(kept, r->message, sizeof kept);
        cradle_replay_close(r);
        memcpy(r->message, kept, sizeof kept);
        r->error = rc;
    }
    return rc;
}

/* A RELOAD record: the archived build (or the one in use) takes over. */
static int on_reload_record(cradle_replay *r, cradle_replay_item *item) {
    const cradle_log_record *rec = &r->record;
    if (rec->step != r->sim.next_step)
        return fail(r, CRADLE_ELOG_CORRUPT, "the log reloads at step %" PRIu64 " but the replay is at step %" PRIu64,
                    rec->step, r->sim.next_step);
    char path[CRADLE_LOG_PATH_MAX + 128];
    bool archived = cradle_log_build_path(path, sizeof path, r->config.log_path, rec->file_hash) == 0 &&
                    file_exists(path);
    int next = r->in_use;
    if (!archived && r->config.reload_game_path) {
        /* no archive: the caller's library, which must now be the new build */
        snprintf(path, sizeof path, "%s", r->config.game_path);
        archived = true;
    }
    if (archived) {
        next = 1 - r->in_use;
        int rc = load_library(r, next, path, rec->build_id);
        if (rc != 0) return rc;
    } else if (strcmp(r->build_id, rec->build_id) == 0 || r->config.force) {
        warn(r, "build '%s' of step %" PRIu64 " is not archived (%s); the library in use takes over", rec->build_id,
             rec->step, path);
    } else {
        return fail(r, CRADLE_EINVAL,
                    "the log switches to build '%s' at step %" PRIu64 " but %s is missing (--force keeps the library in use)",
                    rec->build_id, rec->step, path);
    }
    const cradle_game_contract *contract = cradle_reload_contract(&r->libraries[next]);
    char why[CRADLE_RELOAD_MESSAGE_MAX];
    if (r->sim.state != r->storage.state &&
        (contract->state_size > r->sim.state_capacity || contract->state_align > r->sim.state_align)) {
        int moved = cradle_sim_move(&r->sim, r->storage.state, r->capacity, STATE_ALIGN, why, sizeof why);
        assert(moved == 0 && "the driver's own storage holds the build in charge");
        (void)moved;
    }
    int rc = cradle_sim_swap(&r->sim, contract, why, sizeof why);
    if (rc != 0) {
        if (next != r->in_use) cradle_reload_close(&r->libraries[next]);
        return fail(r, rc, "build '%s' at step %" PRIu64 ": %s", rec->build_id, rec->step, why);
    }
    if (next != r->in_use) {
        cradle_reload_close(&r->libraries[r->in_use]);
        r->in_use = next;
    }
    snprintf(r->build_id, sizeof r->build_id, "%s", rec->build_id);
    memcpy(r->build_file_hash, rec->file_hash, sizeof r->build_file_hash);
    r->reloads++;
    item->build_id = r->build_id;
    item->archived = archived;
    return 1;
}

/* A DATA record: the archived bytes go into the state as they did in the
 * session. The session's build accepted them, so a refusal here means
 * another build (or a game whose data() is not deterministic). */
static int on_data_record(cradle_replay *r, cradle_replay_item *item) {
    const cradle_log_record *rec = &r->record;
    if (rec->step != r->sim.next_step)
        return fail(r, CRADLE_ELOG_CORRUPT, "the log applies data at step %" PRIu64 " but the replay is at step %" PRIu64,
                    rec->step, r->sim.next_step);
    char why[CRADLE_LOG_MESSAGE_MAX + CRADLE_LOG_PATH_MAX];
    int rc = r->config.read_data
                 ? r->config.read_data(r->config.read_data_context, rec->file_hash, rec->data_size, r->data,
                                       CRADLE_GAME_DATA_MAX_BYTES, why, sizeof why)
                 : cradle_log_read_data(r->config.log_path, rec->file_hash, rec->data_size, r->data,
                                        CRADLE_GAME_DATA_MAX_BYTES, why, sizeof why);
    if (rc != 0) return fail(r, rc, "data %s at step %" PRIu64 ": %s", rec->data_name, rec->step, why);
    uint32_t count = 0;
    const cradle_game_data_file *files = cradle_contract_data(r->sim.contract, &count);
    if (rec->data_file >= count || strcmp(files[rec->data_file].name, rec->data_name) != 0)
        return fail(r, CRADLE_EDATA, "the log applies data file %" PRIu32 " '%s' at step %" PRIu64
                    ", which build '%s' does not declare there", rec->data_file + 1u, rec->data_name, rec->step,
                    r->build_id);
    cradle_data_refusal refusal;
    rc = cradle_sim_apply_data(&r->sim, rec->data_file, r->data, rec->data_size, &refusal);
    if (rc != 0)
        return fail(r, rc, "build '%s' refuses the data the session applied at step %" PRIu64 ": %s:%" PRIu32 ": %s",
                    r->build_id, rec->step, rec->data_name, refusal.line, refusal.message);
    r->data_applied++;
    item->data_name = rec->data_name;
    item->data_bytes = r->data;
    item->data_size = rec->data_size;
    return 1;
}

/* HASH and TRAILER: the replay's state hash against the recorded one. */
static void compare_hash(cradle_replay *r, cradle_replay_item *item, uint64_t step) {
    item->logged_hash = r->record.hash;
    item->replayed_hash = cradle_sim_hash(&r->sim);
    item->matches = item->logged_hash == item->replayed_hash;
    if (item->matches || r->mismatch) return;
    r->mismatch = true;
    r->mismatch_step = step;
    r->mismatch_logged = item->logged_hash;
    r->mismatch_replayed = item->replayed_hash;
}

/* Whether a record comes before a keyframe start (config.start_state, or
 * a seek through the index) and is passed over: the state already holds
 * what it did. */
static bool before_start(const cradle_replay *r, const cradle_log_record *rec) {
    uint64_t start = r->skip_before;
    if (start == 0) return false;
    switch (rec->kind) {
    case CRADLE_LOG_RECORD_HASH: return rec->step + 1u < start;
    case CRADLE_LOG_RECORD_TRAILER: return false;
    default: return rec->step < start; /* STEP; RELOAD, DATA, REFUSED name the step they come before */
    }
}

/* Reads the next record into r->record, unless one is held. Returns 1, 0
 * at the end or at stop_at (the flags say which), or the sticky error. */
static int read_record(cradle_replay *r) {
    if (r->error) return r->error;
    if (r->held) return 1;
    if (r->ended || r->stopped) return 0;
    r->ran_step = false; /* the record about to be read replaces the step's */
    const cradle_log_record *rec = &r->record;
    do {
        int rc = cradle_log_reader_next(&r->reader, &r->record);
        if (rc < 0) return fail(r, rc, "%s", r->reader.message);
        if (rc == 0) {
            r->ended = true;
            return 0;
        }
    } while (before_start(r, rec));
    if (r->config.stop_at && rec->step >= r->config.stop_at &&
        (rec->kind == CRADLE_LOG_RECORD_STEP || rec->kind == CRADLE_LOG_RECORD_RELOAD ||
         rec->kind == CRADLE_LOG_RECORD_DATA)) {
        r->stopped = true;
        return 0;
    }
    return 1;
}

static int take_record(cradle_replay *r, cradle_replay_item *item);

int cradle_replay_next(cradle_replay *r, cradle_replay_item *item) {
    int rc = read_record(r);
    if (rc != 1) return rc;
    r->held = false;
    return take_record(r, item);
}

int cradle_replay_catch_up(cradle_replay *r) {
    cradle_replay_item item;
    for (;;) {
        int rc = read_record(r);
        if (rc != 1) return rc;
        if (r->record.kind == CRADLE_LOG_RECORD_STEP) {
            r->held = true; /* its snapshot stays valid: the reader is not called until next() */
            return 0;
        }
        r->held = false; /* a record peek_step() held is handled now */
        rc = take_record(r, &item);
        if (rc < 0) return rc;
    }
}

const uint8_t *cradle_replay_peek_step(cradle_replay *r) {
    if (read_record(r) != 1) return NULL;
    r->held = true; /* next() takes it; the reader is not called before */
    return r->record.kind == CRADLE_LOG_RECORD_STEP ? r->record.snapshot : NULL;
}

/* Runs the STEP record r->record on the sim as it is (next() and rerun())
 * and writes its output when asked. Returns 1 with *item filled, or the
 * sticky error. */
static int run_step(cradle_replay *r, cradle_replay_item *item) {
    const cradle_log_record *rec = &r->record;
    item->kind = CRADLE_REPLAY_STEP;
    item->snapshot = rec->snapshot;
    cradle_sim_step(&r->sim, rec->snapshot);
    r->ran_step = true;
    if (r->config.output && rec->step >= r->config.output_from) {
        int rc = cradle_sim_output(&r->sim);
        if (rc != 0) return fail(r, rc, "the game's output() at step %" PRIu64 ": %s", rec->step, cradle_strerror(rc));
        item->output = r->sim.output;
        item->output_size = r->sim.output_size;
    }
    return 1;
}

/* Handles r->record (just read): runs a step, compares a hash, takes a
 * reload over. Returns 1 with *item filled, or the sticky error. */
static int take_record(cradle_replay *r, cradle_replay_item *item) {
    const cradle_log_record *rec = &r->record;
    *item = (cradle_replay_item){.step = rec->step, .record = rec};
    switch (rec->kind) {
    case CRADLE_LOG_RECORD_STEP:
        if (rec->step != r->sim.next_step)
            return fail(r, CRADLE_ELOG_CORRUPT, "the log holds step %" PRIu64 " where step %" PRIu64 " belongs",
                        rec->step, r->sim.next_step);
        r->steps++;
        return run_step(r, item);
    case CRADLE_LOG_RECORD_HASH:
        item->kind = CRADLE_REPLAY_HASH;
        r->hashes_checked++;
        compare_hash(r, item, rec->step);
        if (!item->matches) r->hash_mismatches++;
        return 1;
    case CRADLE_LOG_RECORD_RELOAD:
        item->kind = CRADLE_REPLAY_RELOAD;
        return on_reload_record(r, item);
    case CRADLE_LOG_RECORD_TRAILER:
        item->kind = CRADLE_REPLAY_TRAILER;
        compare_hash(r, item, r->sim.next_step);
        return 1;
    case CRADLE_LOG_RECORD_REFUSED:
        item->kind = CRADLE_REPLAY_REFUSED;
        r->refusals++;
        return 1;
    case CRADLE_LOG_RECORD_DATA:
        item->kind = CRADLE_REPLAY_DATA;
        return on_data_record(r, item);
    case CRADLE_LOG_RECORD_SIGN: /* never delivered by the reader */
        break;
    }
    return fail(r, CRADLE_ELOG_CORRUPT, "unknown record kind %d", (int)rec->kind);
}

/* The library of the build a keyframe names, into path: the caller's
 * library when it is the log's first build, else its archive beside the
 * log, else the caller's when it stands for every build (reload_game_path).
 * Returns 0 or the sticky failure. */
static int keyframe_library(cradle_replay *r, const cradle_replay_keyframe *k, char *path, size_t size) {
    const cradle_log_header *h = &r->reader.header;
    bool known = !all_zero(k->build_file_hash, sizeof k->build_file_hash);
    if (r->config.game_path && strcmp(k->key.build_id, h->build_id) == 0 &&
        (!known || memcmp(k->build_file_hash, h->build_file_hash, sizeof h->build_file_hash) == 0)) {
        snprintf(path, size, "%s", r->config.game_path);
        return 0;
    }
    if (known && cradle_log_build_path(path, size, r->config.log_path, k->build_file_hash) == 0 && file_exists(path))
        return 0;
    if (r->config.game_path && r->config.reload_game_path) {
        snprintf(path, size, "%s", r->config.game_path);
        return 0;
    }
    return fail(r, CRADLE_EINVAL, "build '%s' of the keyframe at step %" PRIu64 " is not archived beside the log (%s.builds/)",
                k->key.build_id, k->key.step, r->config.log_path);
}

/* Restores keyframe k: its build in charge, its state, the log read on
 * from its block. Returns 0 or the sticky failure. */
static int restart_at(cradle_replay *r, const cradle_replay_keyframe *k) {
    const cradle_replay_index *index = r->index;
    cradle_broadcast_keyframe key;
    char why[CRADLE_REPLAY_MESSAGE_MAX];
    int rc = cradle_broadcast_keyframe_decode(&r->codec, index->bytes + k->doc_offset, k->doc_size, index->session,
                                              NULL, &key, r->keyframe_state, r->keyframe_capacity, why, sizeof why);
    if (rc != 0) return fail(r, CRADLE_EINDEX, "index keyframe of step %" PRIu64 ": %s", k->key.step, why);
    if (strcmp(key.build_id, r->build_id) != 0 ||
        memcmp(k->build_file_hash, r->build_file_hash, sizeof r->build_file_hash) != 0) {
        char path[CRADLE_LOG_PATH_MAX + 128];
        rc = keyframe_library(r, k, path, sizeof path);
        if (rc != 0) return rc;
        int next = 1 - r->in_use;
        rc = load_library(r, next, path, key.build_id);
        if (rc != 0) return rc;
        const cradle_game_contract *contract = cradle_reload_contract(&r->libraries[next]);
        if (r->sim.state != r->storage.state &&
            (contract->state_size > r->sim.state_capacity || contract->state_align > r->sim.state_align)) {
            int moved = cradle_sim_move(&r->sim, r->storage.state, r->capacity, STATE_ALIGN, why, sizeof why);
            assert(moved == 0 && "the driver's own storage holds any build it loads");
            (void)moved;
        }
        rc = cradle_sim_rebind(&r->sim, contract, why, sizeof why);
        if (rc != 0) {
            cradle_reload_close(&r->libraries[next]);
            return fail(r, rc, "build '%s' of the keyframe at step %" PRIu64 ": %s", key.build_id, key.step, why);
        }
        cradle_reload_close(&r->libraries[r->in_use]);
        r->in_use = next;
        snprintf(r->build_id, sizeof r->build_id, "%s", key.build_id);
        memcpy(r->build_file_hash, k->build_file_hash, sizeof r->build_file_hash);
    }
    rc = cradle_sim_restore_storage(&r->sim, r->keyframe_state, key.state_size, key.step + 1u);
    if (rc != 0)
        return fail(r, rc, "the keyframe of step %" PRIu64 " holds %" PRIu32 " state bytes; build '%s' has %" PRIu32,
                    key.step, key.state_size, r->build_id, cradle_sim_state_size(&r->sim));
    rc = cradle_log_reader_jump(&r->reader, k->block);
    if (rc != 0) return fail(r, CRADLE_EINDEX, "index keyframe of step %" PRIu64 ": %s", key.step, r->reader.message);
    r->skip_before = key.step + 1u;
    r->held = r->ran_step = r->ended = r->stopped = false;
    r->keyframe_seeks++;
    return 0;
}

int cradle_replay_use_index(cradle_replay *r, const cradle_replay_index *index) {
    assert(r && r->reader_open && index);
    if (memcmp(index->session, r->reader.session, sizeof index->session) != 0)
        return fail(r, CRADLE_EINDEX, "the index is of another session than %s", r->config.log_path);
    /* a keyframe holds its recorder's whole storage, which may be larger
       than this replay's (the bytes past it are zero): room for the largest */
    uint32_t need = r->capacity;
    for (uint32_t i = 0; i < index->count; i++)
        if (index->keys[i].key.state_size > need) need = index->keys[i].key.state_size;
    if (need > r->keyframe_capacity) {
        free(r->keyframe_state);
        r->keyframe_state = malloc(need);
        r->keyframe_capacity = r->keyframe_state ? need : 0;
        if (!r->keyframe_state) return fail(r, CRADLE_ENOMEM, "out of memory for a %" PRIu32 "-byte keyframe", need);
    }
    if (!r->codec.decompress && cradle_state_pack_init(&r->codec, 0, CRADLE_STATE_PACK_BOTH) != 0)
        return fail(r, CRADLE_ENOMEM, "out of memory for seeking");
    r->index = index;
    return 0;
}

const uint8_t *cradle_replay_build_file_hash(const cradle_replay *r) {
    return all_zero(r->build_file_hash, sizeof r->build_file_hash) ? NULL : r->build_file_hash;
}

/* The counts a replay keeps over a seek that opens it again. */
typedef struct replay_found {
    uint64_t steps, hashes_checked, hash_mismatches, reloads, refusals, data_applied, reruns, keyframe_seeks;
    bool mismatch;
    uint64_t mismatch_step, mismatch_logged, mismatch_replayed;
} replay_found;

static void keep_found(replay_found *f, const cradle_replay *r) {
    *f = (replay_found){.steps = r->steps, .hashes_checked = r->hashes_checked,
                        .hash_mismatches = r->hash_mismatches, .reloads = r->reloads, .refusals = r->refusals,
                        .data_applied = r->data_applied, .reruns = r->reruns, .keyframe_seeks = r->keyframe_seeks,
                        .mismatch = r->mismatch, .mismatch_step = r->mismatch_step,
                        .mismatch_logged = r->mismatch_logged, .mismatch_replayed = r->mismatch_replayed};
}

static void give_found(cradle_replay *r, const replay_found *f) {
    r->steps = f->steps;
    r->hashes_checked = f->hashes_checked;
    r->hash_mismatches = f->hash_mismatches;
    r->reloads = f->reloads;
    r->refusals = f->refusals;
    r->data_applied = f->data_applied;
    r->reruns = f->reruns;
    r->keyframe_seeks = f->keyframe_seeks;
    r->mismatch = f->mismatch;
    r->mismatch_step = f->mismatch_step;
    r->mismatch_logged = f->mismatch_logged;
    r->mismatch_replayed = f->mismatch_replayed;
}

int cradle_replay_seek(cradle_replay *r, uint64_t step) {
    if (r->error) return r->error;
    const cradle_replay_keyframe *k = r->index ? cradle_replay_index_find(r->index, step) : NULL;
    if (k && (step < r->sim.next_step || k->key.step + 1u > r->sim.next_step)) {
        int rc = restart_at(r, k);
        if (rc != 0) return rc;
    } else if (step < r->sim.next_step) {
        cradle_replay_config config = r->config;
        const cradle_replay_index *index = r->index;
        /* what the replay found so far stays found: a mismatch before the
           seek is still the first mismatch */
        replay_found found;
        keep_found(&found, r);
        cradle_replay_close(r);
        int rc = cradle_replay_open(r, &config);
        if (rc != 0) return rc;
        if (index && (rc = cradle_replay_use_index(r, index)) != 0) return rc;
        give_found(r, &found);
    }
    cradle_replay_item item;
    while (r->sim.next_step < step) {
        int rc = cradle_replay_next(r, &item);
        if (rc < 0) return rc;
        if (rc == 0) return CRADLE_ERANGE;
    }
    return 0;
}

int cradle_replay_rerun(cradle_replay *r, const void *saved, size_t size, cradle_replay_item *item) {
    assert(r && saved && item);
    if (r->error) return r->error;
    if (!r->ran_step || r->held) return CRADLE_EINVAL;
    assert(r->record.kind == CRADLE_LOG_RECORD_STEP && r->sim.next_step == r->record.step + 1);
    int rc = cradle_sim_restore(&r->sim, saved, size, r->record.step);
    if (rc != 0) return rc;
    *item = (cradle_replay_item){.step = r->record.step, .record = &r->record};
    r->reruns++;
    rc = run_step(r, item);
    return rc == 1 ? 0 : rc;
}

/* The alignment storage has: the largest power of two that divides its
 * address, up to the most a build may ask. */
static uint32_t alignment_of(const void *storage) {
    uint32_t align = 1;
    while (align < STATE_ALIGN && (uintptr_t)storage % (2u * align) == 0) align *= 2u;
    return align;
}

int cradle_replay_move(cradle_replay *r, void *storage, uint32_t capacity) {
    assert(r && r->sim.contract);
    if (r->error) return r->error;
    if (!storage) {
        storage = r->storage.state;
        capacity = r->capacity;
    }
    if (storage == r->sim.state) return 0;
    char why[CRADLE_RELOAD_MESSAGE_MAX];
    int rc = cradle_sim_move(&r->sim, storage, capacity, alignment_of(storage), why, sizeof why);
    if (rc != 0) (void)snprintf(r->message, sizeof r->message, "cannot move the state: %s", why);
    return rc;
}

bool cradle_replay_grow(cradle_replay *r, uint64_t size) {
    assert(r && r->reader_open);
    if (!cradle_log_reader_grow(&r->reader, size)) return false;
    if (r->ended && !r->error) r->ended = false;
    return !r->ended;
}

uint64_t cradle_replay_position(const cradle_replay *r) {
    return r->reader_open ? cradle_log_reader_position(&r->reader) : 0;
}

void cradle_replay_close(cradle_replay *r) {
    if (r->reader_open) cradle_log_reader_close(&r->reader);
    r->reader_open = false;
    cradle_reload_close(&r->libraries[0]);
    cradle_reload_close(&r->libraries[1]);
    cradle_sim_storage_close(&r->storage);
    free(r->data);
    r->data = NULL;
    free(r->keyframe_state);
    r->keyframe_state = NULL;
    r->keyframe_capacity = 0;
    if (r->codec.compress || r->codec.decompress) cradle_state_pack_free(&r->codec);
    r->index = NULL;
    r->sim.contract = NULL;
}
