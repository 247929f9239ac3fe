/* One offline recording: the library in charge (and the one a --reload or
 * a rebuild brings), the sim, the input, the log, the output, and the
 * replay check at the end. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/os.h"
#include "record.h"

#define STATE_MIN_CAPACITY 65536u
#define STATE_ALIGN CRADLE_RELOAD_DEFAULT_MAX_ALIGN
#define EVENT_CAPACITY 1024u

/* Folds one step's output bytes into a running digest: the live run and
 * the replay check compute it alike. */
static uint64_t fold_output(uint64_t digest, const uint8_t *output, size_t size) {
    return (digest ^ cradle_hash64(output, size)) * UINT64_C(0x100000001b3);
}

static int open_library(cradle_reload *r, const char *path, uint32_t capacity) {
    cradle_reload_config cfg = {.path = path, .copy_dir = cradle_os_tmpdir(), .state_capacity = capacity};
    char msg[CRADLE_RELOAD_MESSAGE_MAX];
    int rc = cradle_reload_open(r, &cfg, cradle_mono_ns(), msg, sizeof msg);
    if (rc) fprintf(stderr, "cradle-record: cannot load %s: %s\n", path, msg);
    return rc;
}

/* The sim over a state block every later build must fit (as on a server:
 * the first build's size, at least 64 KiB). */
static int open_sim(recorder *r, const cradle_game_contract *c) {
    char msg[CRADLE_RELOAD_MESSAGE_MAX];
    if (cradle_sim_storage_open(&r->storage, &r->sim, c,
                                &(cradle_sim_storage_config){.capacity = r->capacity,
                                                             .align = STATE_ALIGN,
                                                             .scratch = true,
                                                             .event_capacity = EVENT_CAPACITY},
                                msg, sizeof msg) != 0) {
        fprintf(stderr, "cradle-record: %s\n", msg);
        return 1;
    }
    if (cradle_sim_start(&r->sim, r->o.seed, r->o.players) != 0) {
        fprintf(stderr, "cradle-record: the game refused %" PRIu32 " players\n", r->o.players);
        return 1;
    }
    return 0;
}

/* Loads --game, the script and the input generators, and starts the game. */
static int open_game(recorder *r) {
    const record_options *o = &r->o;
    if (open_library(&r->libraries[0], o->game, 0) != 0) return 1;
    uint32_t size = cradle_reload_contract(&r->libraries[0])->state_size;
    uint32_t capacity = size > STATE_MIN_CAPACITY ? size : STATE_MIN_CAPACITY;
    r->capacity = (capacity + STATE_ALIGN - 1) / STATE_ALIGN * STATE_ALIGN;
    cradle_reload_close(&r->libraries[0]);
    if (open_library(&r->libraries[0], o->game, r->capacity) != 0) return 1;
    const cradle_game_contract *c = cradle_reload_contract(&r->libraries[0]);
    if (o->players > c->max_players) {
        fprintf(stderr, "cradle-record: --players %" PRIu32 " > the game's max players %" PRIu32 "\n", o->players,
                c->max_players);
        return 2;
    }
    if (o->input == RECORD_INPUT_SCRIPT) {
        r->script = record_script_load(o->script, c->max_players, c->input_bytes, o->players, &r->script_count);
        if (!r->script) return 1;
    }
    for (uint32_t s = 0; s < o->players; s++) r->present[s] = true;
    for (uint32_t s = 0; s < CRADLE_GAME_MAX_PLAYERS; s++) cradle_bot_init(&r->bots[s], o->seed + s);
    cradle_rng_seed(&r->rng, o->seed, 0x5eed);
    return open_sim(r, c);
}

/* Opens --output and the log (which archives the first build). */
static int open_outputs(recorder *r) {
    const record_options *o = &r->o;
    if (o->output) {
        r->out = strcmp(o->output, "-") == 0 ? stdout : fopen(o->output, "wb");
        if (!r->out) {
            fprintf(stderr, "cradle-record: cannot create %s: %s\n", o->output, strerror(errno));
            return 1;
        }
    }
    if (cradle_log_header_from_contract(&r->header, r->sim.contract, o->seed, o->players, cradle_wall_ns(),
                                        o->hash_interval) != 0) {
        fprintf(stderr, "cradle-record: the game's contract does not fit a log header\n");
        return 1;
    }
    char msg[CRADLE_LOG_MESSAGE_MAX];
    cradle_log_writer_config cfg = {.block_size = o->block_size, .overwrite = o->force};
    if (cradle_log_writer_open(&r->writer, o->log, &r->header, &cfg, cradle_reload_copy_path(&r->libraries[0]),
                               msg, sizeof msg) != 0) {
        fprintf(stderr, "cradle-record: %s\n", msg);
        return 1;
    }
    r->writer_open = true;
    return 0;
}

/* The game's data files under --data (or the library's folder), each read
 * now; one that cannot be read is said and the game keeps its own values. */
static int open_data(recorder *r) {
    char folder[CRADLE_DATA_PATH_MAX], msg[CRADLE_DATA_MESSAGE_MAX];
    const char *dir = r->o.data;
    if (!dir) {
        if (cradle_data_files_library_folder(folder, sizeof folder, r->o.game) != 0) return 1;
        dir = folder;
    }
    uint64_t now = cradle_mono_ns();
    if (cradle_data_files_open(&r->data, r->sim.contract, dir, 0, now, msg, sizeof msg) != 0) {
        fprintf(stderr, "cradle-record: --data %s: %s\n", dir, msg);
        return 1;
    }
    for (uint32_t i = 0; i < r->data.count; i++)
        if (cradle_data_files_read(&r->data, i, now) != 0)
            fprintf(stderr, "cradle-record: %s; the game keeps its own values for it\n", r->data.message);
    return 0;
}

/* Data file i, just read, into the state before this step (recorded and
 * archived in the log); a refusal is said and the old data stays. */
static int apply_data(recorder *r, uint32_t i) {
    int rc = cradle_data_files_apply(&r->data, i, &r->sim, &r->writer);
    if (rc == CRADLE_DATA_UNCHANGED) return 0;
    if (rc == 0) {
        r->data_applied++;
        if (r->o.pace != RECORD_FAST || r->o.watch) {
            fprintf(r->events, "cradle-record: data %s applied at step %" PRIu64 "\n", r->data.files[i].name,
                    r->sim.next_step);
            fflush(r->events);
        }
        return 0;
    }
    if (rc == CRADLE_EIO) {
        fprintf(stderr, "cradle-record: %s\n", r->data.message);
        return 1;
    }
    r->data_refusals++;
    fprintf(stderr, "cradle-record: data refused at step %" PRIu64 ": %s; the old data stays\n", r->sim.next_step,
            r->data.message);
    return 0;
}

int recorder_open(recorder *r) {
    int status = open_game(r);
    if (status == 0) status = open_data(r);
    if (status == 0) status = open_outputs(r);
    for (uint32_t i = 0; status == 0 && i < r->data.count; i++)
        if (r->data.files[i].valid) status = apply_data(r, i);
    if (status != 0) return status;
    const cradle_game_contract *c = r->sim.contract;
    if (r->o.pace == RECORD_FAST && !r->o.watch) return 0;
    if (r->o.json) {
        fprintf(r->events,
                "{\"event\":\"running\",\"game\":\"%s\",\"build\":\"%s\",\"players\":%" PRIu32
                ",\"rate\":%" PRIu32 "}\n",
                c->name, c->build_id, r->o.players, c->steps_per_second);
    } else {
        fprintf(r->events, "cradle-record: running game '%s' build %s, %" PRIu32 " players, %" PRIu32
                           " steps/s, log %s\n",
                c->name, c->build_id, r->o.players, c->steps_per_second, r->o.log);
    }
    fflush(r->events);
    return 0;
}

/* The new build takes over the state (its on_reload runs, as on a server)
 * and the log records and archives it. */
static int adopt_build(recorder *r, cradle_reload *library, uint64_t step) {
    const cradle_game_contract *nc = cradle_reload_contract(library);
    char msg[CRADLE_RELOAD_MESSAGE_MAX];
    if (cradle_sim_swap(&r->sim, nc, msg, sizeof msg) != 0) {
        fprintf(stderr, "cradle-record: reload at step %" PRIu64 ": %s\n", step, msg);
        return 1;
    }
    if (cradle_log_writer_append_reload(&r->writer, step, nc->build_id, cradle_reload_copy_path(library)) != 0) {
        fprintf(stderr, "cradle-record: %s\n", r->writer.message);
        return 1;
    }
    r->reloads++;
    snprintf(r->last_reload, sizeof r->last_reload, "step %" PRIu64 ": swapped in build %s", step, nc->build_id);
    if (!cradle_data_files_declared_by(&r->data, nc)) {
        /* The new build declares other data files: its own, read and applied now. */
        cradle_data_files_close(&r->data);
        if (open_data(r) != 0) return 1;
        for (uint32_t i = 0; i < r->data.count; i++)
            if (r->data.files[i].valid && apply_data(r, i) != 0) return 1;
    }
    return 0;
}

/* --reload STEP:LIB at this step. */
static int take_scheduled_reload(recorder *r, uint64_t step) {
    if (r->next_reload >= r->o.reload_count || r->o.reloads[r->next_reload].step != step) return 0;
    const char *path = r->o.reloads[r->next_reload++].path;
    int next = 1 - r->in_use;
    cradle_reload *spare = &r->libraries[next];
    if (open_library(spare, path, r->capacity) != 0) return 1;
    const cradle_game_contract *nc = cradle_reload_contract(spare);
    char msg[CRADLE_LOG_MESSAGE_MAX];
    if (cradle_log_check_library(&r->header, nc->build_id, nc, msg, sizeof msg) == CRADLE_ELOG_GAME) {
        fprintf(stderr, "cradle-record: --reload %s: %s\n", path, msg);
        cradle_reload_close(spare);
        return 1;
    }
    if (adopt_build(r, spare, step) != 0) return 1;
    cradle_reload_close(&r->libraries[r->in_use]);
    r->in_use = next;
    return 0;
}

/* --watch: a rebuilt --game that has settled takes over; one that does not
 * fit is refused and the old build keeps running. */
static int take_rebuild(recorder *r, uint64_t step) {
    cradle_reload_result result = cradle_reload_poll(&r->libraries[r->in_use], cradle_mono_ns());
    if (result.kind == CRADLE_RELOAD_SWAPPED) {
        if (adopt_build(r, &r->libraries[r->in_use], step) != 0) return 1;
        fprintf(r->events, "cradle-record: reloaded at step %" PRIu64 ": build %s is running (state kept)\n", step,
                result.contract->build_id);
        fflush(r->events);
    } else if (result.kind == CRADLE_RELOAD_REFUSED) {
        r->refusals++;
        snprintf(r->last_reload, sizeof r->last_reload, "step %" PRIu64 ": refused (%s): %s", step,
                 cradle_error_name(result.error), result.message);
        fprintf(stderr, "cradle-record: reload refused at step %" PRIu64 " (%s): %s; the old build keeps running\n",
                step, cradle_error_name(result.error), result.message);
    }
    return 0;
}

/* The script's changes that take effect at this step. */
static void apply_script(recorder *r, uint64_t step) {
    uint32_t input_bytes = r->sim.contract->input_bytes;
    for (; r->next_entry < r->script_count && r->script[r->next_entry].step <= step; r->next_entry++) {
        const record_script_entry *e = &r->script[r->next_entry];
        if (e->action == RECORD_SCRIPT_SET) memcpy(r->held[e->slot], e->input, input_bytes);
        else memset(r->held[e->slot], 0, input_bytes);
        r->present[e->slot] = e->action != RECORD_SCRIPT_LEAVE;
    }
}

/* The snapshot of this step: the script's inputs, the bots' or the seeded
 * bytes, for every present slot. */
static void build_snapshot(recorder *r, uint64_t step) {
    const cradle_game_contract *c = r->sim.contract;
    if (r->o.input == RECORD_INPUT_SCRIPT) {
        apply_script(r, step);
    } else if (r->o.input == RECORD_INPUT_RANDOM) {
        for (uint32_t s = 0; s < c->max_players; s++)
            for (uint32_t b = 0; b < c->input_bytes; b++)
                r->held[s][b] = r->present[s] ? (uint8_t)cradle_rng_next(&r->rng) : 0;
    } else {
        for (uint32_t s = 0; s < c->max_players; s++)
            if (r->present[s]) cradle_bot_fill(&r->bots[s], c, r->sim.state, step, s, r->held[s], c->input_bytes);
    }
    memset(r->snapshot, 0, r->sim.snapshot_size);
    for (uint32_t s = 0; s < c->max_players; s++) {
        if (!r->present[s]) continue;
        r->snapshot[s / 8] = (uint8_t)(r->snapshot[s / 8] | (1u << (s % 8)));
        memcpy(r->snapshot + CRADLE_PRESENCE_BYTES(c->max_players) + s * c->input_bytes, r->held[s],
               c->input_bytes);
    }
}

/* The game's output of the step just run: folded for the check, written
 * to --output. */
static int take_output(recorder *r, uint64_t step) {
    if (!r->sim.contract->output || (!r->out && !r->o.check)) return 0; /* nobody reads it */
    int rc = cradle_sim_output(&r->sim);
    if (rc != 0) {
        fprintf(stderr, "cradle-record: step %" PRIu64 ": %s\n", step, cradle_strerror(rc));
        return 1;
    }
    r->output_digest = fold_output(r->output_digest, r->sim.output, r->sim.output_size);
    if (r->out && fwrite(r->sim.output, 1, r->sim.output_size, r->out) != r->sim.output_size) {
        fprintf(stderr, "cradle-record: cannot write %s\n", r->o.output);
        return 1;
    }
    return 0;
}

/* --data-at STEP:DIR at this step, and with --watch the data files that
 * changed and settled. */
static int take_data(recorder *r, uint64_t step) {
    uint64_t now = cradle_mono_ns();
    if (r->next_data_at < r->o.data_at_count && r->o.data_at[r->next_data_at].step == step) {
        const char *dir = r->o.data_at[r->next_data_at++].path;
        if (cradle_data_files_move(&r->data, dir, now) != 0) {
            fprintf(stderr, "cradle-record: --data-at %s: %s\n", dir, r->data.message);
            return 1;
        }
        for (uint32_t i = 0; i < r->data.count; i++) {
            if (cradle_data_files_read(&r->data, i, now) != 0) {
                fprintf(stderr, "cradle-record: --data-at %" PRIu64 ":%s: %s\n", step, dir, r->data.message);
                return 1;
            }
            if (apply_data(r, i) != 0) return 1;
        }
    }
    if (!r->o.watch) return 0;
    for (;;) {
        int got = cradle_data_files_poll(&r->data, now);
        if (got == -1) return 0;
        if (got >= 0 && apply_data(r, (uint32_t)got) != 0) return 1;
        if (got < -1) {
            r->data_refusals++;
            fprintf(stderr, "cradle-record: data refused at step %" PRIu64 ": %s; the old data stays\n", step,
                    r->data.message);
        }
    }
}

int recorder_step(recorder *r) {
    uint64_t step = r->sim.next_step;
    int rc = r->o.watch ? take_rebuild(r, step) : take_scheduled_reload(r, step);
    if (rc == 0) rc = take_data(r, step);
    if (rc != 0) return rc;
    build_snapshot(r, step);
    if (cradle_log_writer_append_step(&r->writer, step, r->snapshot) != 0) {
        fprintf(stderr, "cradle-record: %s\n", r->writer.message);
        return 1;
    }
    cradle_sim_step(&r->sim, r->snapshot);
    if (take_output(r, step) != 0) return 1;
    if ((r->o.hash_interval && (step + 1) % r->o.hash_interval == 0 &&
         cradle_log_writer_append_hash(&r->writer, step, cradle_sim_hash(&r->sim)) != 0) ||
        cradle_log_writer_maybe_sync(&r->writer, cradle_mono_ns()) != 0) {
        fprintf(stderr, "cradle-record: %s\n", r->writer.message);
        return 1;
    }
    return 0;
}

int recorder_flush(recorder *r) {
    return r->writer_open ? cradle_log_writer_flush(&r->writer, cradle_mono_ns()) : 0;
}

/* The keyframe index the check replay writes beside the log
 * (--index-interval): opened on the replay's session and storage. A
 * failure only warns: the log is what was asked for. Returns whether it is
 * open. */
static bool open_index(recorder *r, cradle_replay_index_writer *w, const cradle_replay *replay) {
    if (!r->o.index_interval) return false;
    char path[CRADLE_LOG_PATH_MAX], why[CRADLE_REPLAY_INDEX_MESSAGE_MAX];
    if (cradle_replay_index_path(path, sizeof path, r->o.log) != 0 ||
        cradle_replay_index_writer_open(w, path, replay->reader.session, r->o.index_interval,
                                        replay->sim.state_capacity, why, sizeof why) != 0) {
        fprintf(stderr, "cradle-record: warning: no keyframe index beside the log: %s\n", why);
        return false;
    }
    return true;
}

/* Replays the closed log through the replay driver, with the builds it
 * archived, and compares every recorded hash, the final hash, the step
 * count and the output bytes with the live run's; the keyframe index is
 * written on the way and kept only when they match. */
static bool check_replay(recorder *r) {
    static cradle_replay replay; /* large; one check per process */
    cradle_replay_config config = {.log_path = r->o.log, .output = r->sim.contract->output != NULL};
    bool equal = false, indexing = false;
    cradle_replay_index_writer index = {.fd = -1};
    char why[CRADLE_REPLAY_INDEX_MESSAGE_MAX];
    uint64_t digest = 0;
    if (cradle_replay_open(&replay, &config) != 0) {
        snprintf(r->check_message, sizeof r->check_message, "cannot replay the log: %s", replay.message);
        goto out;
    }
    indexing = open_index(r, &index, &replay);
    cradle_replay_item item;
    int rc;
    while ((rc = cradle_replay_next(&replay, &item)) == 1) {
        if (item.kind != CRADLE_REPLAY_STEP) continue;
        if (item.output) digest = fold_output(digest, item.output, item.output_size);
        if (indexing && cradle_replay_index_wants(&index, item.step) &&
            cradle_replay_index_writer_add(&index, item.step, cradle_log_reader_block_place(&replay.reader),
                                           replay.build_id, cradle_replay_build_file_hash(&replay), replay.sim.state,
                                           replay.sim.state_capacity, why, sizeof why) != 0) {
            fprintf(stderr, "cradle-record: warning: no keyframe index beside the log: %s\n", why);
            indexing = false;
        }
    }
    if (rc < 0) {
        snprintf(r->check_message, sizeof r->check_message, "replaying the log: %s", replay.message);
    } else if (replay.mismatch) {
        snprintf(r->check_message, sizeof r->check_message,
                 "the replay's state hash after step %" PRIu64 " is %016" PRIx64 ", the live run's %016" PRIx64,
                 replay.mismatch_step, replay.mismatch_replayed, replay.mismatch_logged);
    } else if (replay.steps != recorder_steps(r) || digest != r->output_digest) {
        snprintf(r->check_message, sizeof r->check_message,
                 "the replay ran %" PRIu64 " steps (live %" PRIu64 ") and its output bytes %s", replay.steps,
                 recorder_steps(r), digest == r->output_digest ? "match" : "differ");
    } else {
        equal = true;
        snprintf(r->check_message, sizeof r->check_message,
                 "the log replays to the same state (%" PRIu64 " recorded hashes and the final one) and output",
                 replay.hashes_checked);
    }
    if (equal && indexing && cradle_replay_index_writer_finish(&index, why, sizeof why) != 0)
        fprintf(stderr, "cradle-record: warning: no keyframe index beside the log: %s\n", why);
out:
    cradle_replay_index_writer_close(&index); /* a log that did not replay keeps no index */
    cradle_replay_close(&replay);
    return equal;
}

int recorder_finish(recorder *r) {
    if (r->finished) return r->checked && !r->replay_equal ? 1 : 0;
    r->finished = true;
    r->writer_open = false;
    if (cradle_log_writer_close(&r->writer, cradle_sim_hash(&r->sim)) != 0) {
        fprintf(stderr, "cradle-record: %s\n", r->writer.message);
        return 1;
    }
    if (r->out && fflush(r->out) != 0) {
        fprintf(stderr, "cradle-record: cannot write %s\n", r->o.output);
        return 1;
    }
    if (!r->o.check) return 0;
    r->checked = true;
    r->replay_equal = check_replay(r);
    if (!r->replay_equal) {
        fprintf(stderr, "cradle-record: %s: the replay differs: %s\n", r->o.log, r->check_message);
        return 1;
    }
    return 0;
}

void recorder_print_status(const recorder *r) {
    const cradle_game_contract *c = r->sim.contract;
    if (r->o.json) {
        fprintf(r->events,
                "{\"event\":\"status\",\"step\":%" PRIu64 ",\"game\":\"%s\",\"build\":\"%s\",\"hash\":\"%016" PRIx64
                "\",\"events\":%" PRIu64 ",\"reloads\":%" PRIu64 "}\n",
                recorder_steps(r), c->name, c->build_id, cradle_sim_hash(&r->sim), r->sim.events.appended_total,
                r->reloads);
    } else {
        fprintf(r->events, "step %6" PRIu64 "  %s build %s  state hash %016" PRIx64 "  events %" PRIu64
                           "  reloads %" PRIu64 "\n",
                recorder_steps(r), c->name, c->build_id, cradle_sim_hash(&r->sim), r->sim.events.appended_total,
                r->reloads);
    }
    fflush(r->events);
}

void recorder_close(recorder *r) {
    if (r->writer_open) cradle_log_writer_abandon(&r->writer);
    r->writer_open = false;
    if (r->out && r->out != stdout) fclose(r->out);
    r->out = NULL;
    cradle_sim_storage_close(&r->storage);
    cradle_data_files_close(&r->data);
    free(r->script);
    r->script = NULL;
    cradle_reload_close(&r->libraries[0]);
    cradle_reload_close(&r->libraries[1]);
}
