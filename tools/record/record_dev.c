/* cradle-record's dev protocol (dev.h): step (commanded mode only),
 * status, flush and quit, over --dev-stdin and/or --dev-socket. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "record.h"

static const char *mode_name(record_pace pace) {
    return pace == RECORD_COMMANDED ? "commanded" : pace == RECORD_PACED ? "paced" : "fast";
}

static bool cmd_step(recorder *r, cradle_dev_request *request, cradle_writer *reply) {
    uint64_t count = request->command.count, done = recorder_steps(r);
    if (r->o.pace != RECORD_COMMANDED) {
        cradle_dev_reply_error(reply, request, CRADLE_EDEV_STATE,
                               "step needs commanded mode; this host runs on its own (start it with --commanded)");
        return false;
    }
    if (r->finished || count > r->o.steps - done) {
        char message[CRADLE_DEV_MESSAGE_BYTES];
        snprintf(message, sizeof message,
                 "%" PRIu64 " more steps would pass --steps: %" PRIu64 " of %" PRIu64 " steps run", count, done,
                 r->o.steps);
        cradle_dev_reply_error(reply, request, CRADLE_ESESSION_CAPACITY, message);
        return false;
    }
    for (uint64_t i = 0; i < count; i++) {
        if (recorder_step(r) != 0) {
            cradle_dev_reply_error(reply, request, CRADLE_EIO, "the step failed: see the host's stderr");
            return false;
        }
    }
    cradle_dev_reply_begin(reply, request);
    cradle_dev_field_u64(reply, "step", recorder_steps(r));
    cradle_dev_reply_end(reply);
    return false;
}

static bool cmd_status(recorder *r, cradle_dev_request *request, cradle_writer *reply) {
    const cradle_game_contract *c = r->sim.contract;
    char hash[24];
    snprintf(hash, sizeof hash, "%016" PRIx64, cradle_sim_hash(&r->sim));
    cradle_dev_reply_begin(reply, request);
    cradle_dev_field_u64(reply, "step", recorder_steps(r));
    cradle_dev_field_string(reply, "mode", mode_name(r->o.pace));
    cradle_dev_field_u64(reply, "seed", r->o.seed);
    cradle_dev_field_u64(reply, "rate", c->steps_per_second);
    cradle_dev_field_string(reply, "game", c->name);
    cradle_dev_field_string(reply, "build", c->build_id);
    cradle_dev_field_u64(reply, "players", r->o.players);
    cradle_dev_field_string(reply, "hash", hash);
    cradle_dev_field_u64(reply, "events", r->sim.events.appended_total);
    cradle_dev_field_u64(reply, "reloads", r->reloads);
    cradle_dev_field_u64(reply, "refused_reloads", r->refusals);
    cradle_dev_field_string(reply, "last_reload", r->last_reload);
    cradle_dev_field_string(reply, "log", r->o.log);
    cradle_dev_field_u64(reply, "durable_steps", r->writer_open ? cradle_log_writer_durable_steps(&r->writer) : 0);
    cradle_dev_reply_end(reply);
    return false;
}

static bool cmd_flush(recorder *r, cradle_dev_request *request, cradle_writer *reply) {
    int rc = recorder_flush(r);
    if (rc != 0) {
        cradle_dev_reply_error(reply, request, rc, r->writer.message);
        return false;
    }
    cradle_dev_reply_begin(reply, request);
    cradle_dev_field_u64(reply, "step", recorder_steps(r));
    cradle_dev_field_u64(reply, "durable_steps", r->writer_open ? cradle_log_writer_durable_steps(&r->writer) : 0);
    cradle_dev_reply_end(reply);
    return false;
}

/* Ends the session: the log is closed and checked before the reply. */
static bool cmd_quit(recorder *r, cradle_dev_request *request, cradle_writer *reply) {
    (void)recorder_finish(r); /* what failed is said on stderr and in the reply */
    cradle_dev_reply_begin(reply, request);
    cradle_dev_field_u64(reply, "step", recorder_steps(r));
    if (r->checked) cradle_dev_field_bool(reply, "replay_equal", r->replay_equal);
    cradle_dev_reply_end(reply);
    return true;
}

typedef bool (*record_command)(recorder *r, cradle_dev_request *request, cradle_writer *reply);

static const struct {
    const char *name;
    record_command run;
} COMMANDS[] = {{"step", cmd_step}, {"status", cmd_status}, {"flush", cmd_flush}, {"quit", cmd_quit}};

/* The transport's handler: one request line, one reply line. */
static bool handle_line(void *context, const char *line, size_t length, cradle_writer *reply, cradle_arena *scratch) {
    (void)scratch;
    record_dev *d = context;
    cradle_dev_request request;
    int rc = cradle_dev_parse(&request, line, length, d->recorder->o.max_count);
    record_command run = NULL;
    if (rc == 0 || rc == CRADLE_EDEV_UNKNOWN) {
        for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
            if (strcmp(COMMANDS[i].name, request.cmd) == 0) run = COMMANDS[i].run;
    }
    bool quit = false;
    if (run) quit = run(d->recorder, &request, reply);
    else cradle_dev_reply_parse_error(reply, &request);
    cradle_dev_request_deinit(&request);
    return quit;
}

int record_dev_open(record_dev *d, recorder *r) {
    *d = (record_dev){.recorder = r};
    cradle_transport_config config = {
        .socket_path = r->o.dev_socket,
        .stdio = r->o.dev_stdin,
        .max_clients = r->o.dev_clients, /* 0: the transport's default */
        .handler = handle_line,
        .context = d,
    };
    int rc = cradle_transport_open(&d->transport, &config);
    if (rc != 0) {
        fprintf(stderr, "cradle-record: dev %s: %s", r->o.dev_socket ? r->o.dev_socket : "stdin", cradle_strerror(rc));
        if (rc == CRADLE_EIO) fprintf(stderr, " (%s)", strerror(d->transport.system_error));
        fprintf(stderr, "\n");
        return 1;
    }
    d->open = true;
    char event[256];
    cradle_writer w;
    cradle_writer_init(&w, event, sizeof event);
    cradle_transport_listening_event(&d->transport, &w);
    fwrite(event, 1, w.length, stdout);
    fflush(stdout);
    return 0;
}

bool record_dev_poll(record_dev *d, int timeout_ms) {
    int rc = cradle_transport_poll(&d->transport, timeout_ms);
    if (rc != 0) {
        fprintf(stderr, "cradle-record: dev transport: %s (%s)\n", cradle_strerror(rc),
                strerror(d->transport.system_error));
        d->failed = true;
        return false;
    }
    return cradle_transport_state(&d->transport) == CRADLE_TRANSPORT_RUNNING;
}

void record_dev_close(record_dev *d) {
    if (d->open) cradle_transport_close(&d->transport);
    d->open = false;
}
