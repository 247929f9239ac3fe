#include "resume.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cradle/log.h"
#include "cradle/replay.h"
#include "cradle/systime.h"

int cradle_server_resume_prepare(cradle_server_options *o) {
    if (o->log[0] == '\0') {
        fprintf(stderr, "cradle-server: --resume needs --log NEW.log: the continued session is recorded "
                        "in a new log\n");
        return 2;
    }
    if (strcmp(o->log, o->resume) == 0) {
        fprintf(stderr, "cradle-server: --resume and --log must name different files (the old log is "
                        "never modified)\n");
        return 2;
    }
    cradle_log_reader r;
    char message[CRADLE_LOG_MESSAGE_MAX] = "";
    int rc = cradle_log_reader_open(&r, o->resume, message, sizeof message);
    if (rc != 0) {
        fprintf(stderr, "cradle-server: --resume '%s': %s: %s\n", o->resume, cradle_strerror(rc), message);
        return 1;
    }
    o->seed = r.header.seed;
    o->players = r.header.player_count;
    if (r.header.hash_interval) o->hash_interval = r.header.hash_interval;
    cradle_log_reader_close(&r);
    return 0;
}

static void warn(void *context, const char *message) {
    cradle_server_say(context, "warning", "resume", "%s", message);
}

/* Copies what the replay read into the new log: every step and hash, each
 * reload with the build it switched to, each refused build and each data
 * file applied. */
static int record(cradle_server_host *host, const cradle_replay *r, const cradle_replay_item *item) {
    switch (item->kind) {
    case CRADLE_REPLAY_STEP: return cradle_log_writer_append_step(&host->log, item->step, item->snapshot);
    case CRADLE_REPLAY_HASH:
        host->last_hash_step = item->step;
        host->last_hash = item->replayed_hash;
        return cradle_log_writer_append_hash(&host->log, item->step, item->replayed_hash);
    case CRADLE_REPLAY_RELOAD:
        return cradle_log_writer_append_reload(&host->log, item->step, item->build_id,
                                               cradle_reload_copy_path(&r->libraries[r->in_use]));
    case CRADLE_REPLAY_REFUSED:
        return cradle_log_writer_append_refused(&host->log, item->step, item->record->file_hash,
                                                item->record->reason);
    case CRADLE_REPLAY_DATA: {
        /* The state holds these bytes now: the session goes on from them, and
         * the file as it is now applies at the start only if it differs. */
        uint32_t file = item->record->data_file;
        if (file < host->data.count) {
            host->data.files[file].applied = true;
            memcpy(host->data.files[file].applied_hash, item->record->file_hash, CRADLE_DATA_HASH_BYTES);
            host->data.files[file].applied_step = item->step;
        }
        return cradle_log_writer_append_data(&host->log, item->step, file, item->data_name, item->data_bytes,
                                             item->data_size, item->record->file_hash);
    }
    case CRADLE_REPLAY_TRAILER: return 0;
    }
    return 0;
}

int cradle_server_resume_replay(cradle_server_host *host) {
    const char *path = host->options->resume;
    static cradle_replay r; /* large */
    /* The builds archived beside the log replay it (a session that reloaded
     * ran several); a log without an archive replays with --game. Either way
     * the session must end on --game's build (checked below). */
    cradle_replay_config config = {.log_path = path, .warn = warn, .warn_context = host};
    int rc = cradle_replay_open(&r, &config);
    if (rc != 0) {
        config.game_path = host->options->game;
        rc = cradle_replay_open(&r, &config);
    }
    if (rc != 0) {
        fprintf(stderr, "cradle-server: --resume '%s': %s\n", path, r.message);
        goto out_close;
    }
    /* The new log starts as the old one did: the same first build. */
    rc = cradle_server_host_open_log(host, cradle_reload_contract(&r.libraries[0]),
                                     cradle_reload_copy_path(&r.libraries[0]));
    if (rc != 0) goto out_close;
    cradle_replay_item item;
    while ((rc = cradle_replay_next(&r, &item)) == 1) {
        if (item.kind == CRADLE_REPLAY_HASH && !item.matches) {
            fprintf(stderr,
                    "cradle-server: --resume '%s': the state hash after step %" PRIu64 " is %016" PRIx64
                    ", the log recorded %016" PRIx64 ": this library does not reproduce the session\n",
                    path, item.step, item.replayed_hash, item.logged_hash);
            rc = CRADLE_ELOG_CORRUPT;
            goto out_close;
        }
        rc = record(host, &r, &item);
        if (rc != 0) break;
    }
    if (rc < 0) {
        fprintf(stderr, "cradle-server: --resume '%s': %s: %s\n", path, cradle_strerror(rc),
                rc == CRADLE_EIO && host->log.message[0] ? host->log.message : r.message);
        goto out_close;
    }
    if (strcmp(r.sim.contract->build_id, host->sim.contract->build_id) != 0) {
        fprintf(stderr,
                "cradle-server: --resume '%s': the session ended on build '%s', --game is build '%s': "
                "resume with the library of the last build\n",
                path, r.sim.contract->build_id, host->sim.contract->build_id);
        rc = CRADLE_ERELOAD_MISMATCH;
        goto out_close;
    }
    rc = cradle_sim_restore(&host->sim, r.sim.state, cradle_sim_state_size(&r.sim), r.sim.next_step);
    if (rc != 0) {
        fprintf(stderr, "cradle-server: --resume '%s': %s\n", path, cradle_strerror(rc));
        goto out_close;
    }
    /* The recovered steps are durable in the new log before anyone plays on. */
    rc = cradle_log_writer_flush(&host->log, cradle_mono_ns());
    if (rc != 0) {
        fprintf(stderr, "cradle-server: --log '%s': %s: %s\n", host->options->log, cradle_strerror(rc),
                host->log.message);
        goto out_close;
    }
    const char *end = r.reader.end == CRADLE_LOG_END_CLOSED     ? "closed"
                      : r.reader.end == CRADLE_LOG_END_UNCLOSED ? "unclosed"
                                                                : "torn";
    cradle_server_say(host, "info", "resume",
                      "resumed '%s' (%s): %" PRIu64 " steps replayed, %" PRIu64 " hashes verified, %" PRIu64
                      " reloads; continuing at step %" PRIu64 " in '%s'",
                      path, end, r.steps, r.hashes_checked, r.reloads, host->sim.next_step, host->options->log);
    rc = 0;
out_close:
    cradle_replay_close(&r);
    if (rc != 0 && host->log_open) {
        /* Leave no half-made new log behind (its archived build may stay: content-addressed). */
        cradle_log_writer_abandon(&host->log);
        host->log_open = false;
        (void)unlink(host->options->log);
    }
    return rc;
}
