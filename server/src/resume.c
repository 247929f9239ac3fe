#include "resume.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cradle/hash.h"
#include "cradle/log.h"
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

static bool ignore_event(void *context, const cradle_event *event) {
    (void)context;
    (void)event;
    return true;
}

int cradle_server_resume_replay(cradle_server_host *host) {
    const char *path = host->options->resume;
    const cradle_game_contract *c = host->sim.contract;
    cradle_log_reader r;
    char message[CRADLE_LOG_MESSAGE_MAX] = "";
    int rc = cradle_log_reader_open(&r, path, message, sizeof message);
    if (rc != 0) {
        fprintf(stderr, "cradle-server: --resume '%s': %s: %s\n", path, cradle_strerror(rc), message);
        return rc;
    }
    rc = cradle_log_check_library(&r.header, r.header.build_id, c, message, sizeof message);
    if (rc != 0) {
        fprintf(stderr, "cradle-server: --resume '%s': %s\n", path, message);
        goto out_close;
    }
    uint32_t per_frame = c->steps_per_second / c->source_frames_per_second;
    cradle_event_sink sink = {.context = NULL, .emit = ignore_event};
    uint64_t hashes = 0;
    cradle_log_record rec;
    while ((rc = cradle_log_reader_next(&r, &rec)) == 1) {
        if (rec.kind == CRADLE_LOG_RECORD_STEP) {
            uint64_t s = rec.step;
            memcpy(host->snapshot, rec.snapshot, host->snapshot_size);
            rc = cradle_log_writer_append_step(&host->log, s, host->snapshot);
            if (rc != 0) break;
            cradle_game_step step = {.index = s,
                                     .source_frame = s / per_frame,
                                     .phase = (uint32_t)(s % per_frame),
                                     .snapshot_size = host->snapshot_size,
                                     .snapshot = host->snapshot};
            c->step(host->sim.state, &step, &sink);
            host->sim.next_step = s + 1;
        } else if (rec.kind == CRADLE_LOG_RECORD_HASH) {
            uint64_t h = cradle_hash64(host->sim.state, c->state_size);
            if (h != rec.hash) {
                fprintf(stderr,
                        "cradle-server: --resume '%s': the state hash after step %" PRIu64 " is %016" PRIx64
                        ", the log recorded %016" PRIx64 ": this library does not reproduce the session\n",
                        path, rec.step, h, rec.hash);
                rc = CRADLE_ELOG_CORRUPT;
                goto out_close;
            }
            rc = cradle_log_writer_append_hash(&host->log, rec.step, h);
            if (rc != 0) break;
            host->last_hash_step = rec.step;
            host->last_hash = h;
            hashes++;
        } else if (rec.kind == CRADLE_LOG_RECORD_RELOAD) {
            fprintf(stderr,
                    "cradle-server: --resume '%s': the session reloaded its library at step %" PRIu64
                    "; resuming across a reload is not supported\n",
                    path, rec.step);
            rc = CRADLE_EINVAL;
            goto out_close;
        }
    }
    if (rc < 0) {
        fprintf(stderr, "cradle-server: --resume '%s': %s: %s\n", path, cradle_strerror(rc),
                rc == CRADLE_EIO && host->log.message[0] ? host->log.message : r.message);
        goto out_close;
    }
    /* The recovered steps are durable in the new log before anyone plays on. */
    rc = cradle_log_writer_flush(&host->log, cradle_mono_ns());
    if (rc != 0) {
        fprintf(stderr, "cradle-server: --log '%s': %s: %s\n", host->options->log, cradle_strerror(rc),
                host->log.message);
        goto out_close;
    }
    const char *end = r.end == CRADLE_LOG_END_CLOSED     ? "closed"
                      : r.end == CRADLE_LOG_END_UNCLOSED ? "unclosed"
                                                         : "torn";
    cradle_server_say(host, "info", "resume",
                      "resumed '%s' (%s): %" PRIu64 " steps replayed, %" PRIu64
                      " hashes verified; continuing at step %" PRIu64 " in '%s'",
                      path, end, host->sim.next_step, hashes, host->sim.next_step, host->options->log);
    rc = 0;
out_close:
    cradle_log_reader_close(&r);
    if (rc != 0) {
        /* Leave no half-made new log behind (its archived build may stay: content-addressed). */
        cradle_log_writer_abandon(&host->log);
        host->log_open = false;
        (void)unlink(host->options->log);
    }
    return rc;
}
