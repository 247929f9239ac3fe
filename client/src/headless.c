/*
 * headless: cradle-client without a window or audio (no SDL at all). One
 * connection, or --bots N connections served by one loop, each stepping
 * every snapshot as soon as it arrives.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "session_run.h"

uint64_t cradle_client_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void cradle_input_source_fill(void *context, uint64_t step, uint8_t *out, uint32_t input_bytes) {
    cradle_input_source *src = context;
    if (!src->script && src->use_bot) {
        /* Before the state block is in (a late join), the game's bot has
         * nothing to read: cradle_bot_fill gives zeros for a NULL state. */
        const cradle_netclient *net = src->net;
        const void *state = cradle_netclient_playing(net) ? net->sim.state : NULL;
        cradle_bot_fill(&src->bot, net->sim.contract, state, step, net->welcome.slot, out, input_bytes);
        return;
    }
    uint64_t bits = src->held;
    if (src->script) bits = cradle_script_bits(src->script, step);
    cradle_pack_bits(out, input_bytes, bits);
}

cradle_netclient_config cradle_client_net_config(const cradle_client_options *o) {
    return (cradle_netclient_config){
        .host = o->host,
        .port = o->port,
        .game = o->game,
        .spectator = o->spectator,
        .requested_slot = o->slot,
        .insecure = o->insecure,
        .server_key = o->server_key,
        .token = o->token,
        .issuer_key = o->issuer_key,
        .client_id = o->client_id,
        .connect_timeout_ms = o->connect_timeout_ms,
        .silence_timeout_ms = o->silence_timeout_ms,
        .reload_timeout_ms = o->reload_timeout_ms,
        .output_until = o->steps,
        /* a player predicts unless told not to; --bots N load bots and spectators show confirmed steps */
        .predict_window = o->lockstep || o->spectator || o->bots ? 0 : o->predict_window,
    };
}

/* The prediction figures of the summary: "predict":null for lockstep. */
static void print_prediction(FILE *to, const cradle_netclient *net) {
    const cradle_predict *p = &net->predict;
    if (!p->window) {
        fprintf(to, ",\"predict\":null");
        return;
    }
    const cradle_predict_figures *f = &p->figures;
    double seconds = net->welcome.steps_per_second ? (double)net->steps_run / net->welcome.steps_per_second : 0.0;
    fprintf(to,
            ",\"predict\":{\"window\":%u,\"on\":%s,\"ahead\":%u,\"predicted_steps\":%" PRIu64
            ",\"rollbacks\":%" PRIu64 ",\"rollbacks_per_s\":%.2f,\"mean_depth\":%.2f,\"max_depth\":%u"
            ",\"corrections\":%" PRIu64 ",\"change_reruns\":%" PRIu64 ",\"own_overridden\":%" PRIu64
            ",\"window_waits\":%" PRIu64 "}",
            (unsigned)p->window, p->on ? "true" : "false", (unsigned)f->ahead, f->predicted_steps, f->rollbacks,
            seconds > 0.0 ? (double)f->rollbacks / seconds : 0.0,
            f->rollbacks ? (double)f->rollback_steps / (double)f->rollbacks : 0.0, (unsigned)f->rollback_max,
            f->corrections, f->change_reruns, f->own_overridden, f->window_waits);
}

void cradle_client_print_done(FILE *to, const cradle_netclient *net) {
    fprintf(to,
            "{\"event\":\"done\",\"slot\":%d,\"start_step\":%" PRIu64 ",\"steps\":%" PRIu64
            ",\"hashes_checked\":%" PRIu64 ",\"last_hash_step\":%" PRId64 ",\"last_hash\":\"%016" PRIx64
            "\",\"final_hash\":\"%016" PRIx64 "\",\"build\":\"%s\",\"rtt_ms\":%.3f,\"desync\":%s"
            ",\"inputs_sent\":%" PRIu64 ",\"steps_early\":%" PRIu64 ",\"steps_repeated\":%" PRIu64
            ",\"reloads\":%" PRIu64 ",\"turned_away\":%u,\"input_delay\":%u,\"delay_changes\":%" PRIu64
            ",\"raw_steps\":%" PRIu64 ",\"raw_dropped\":%" PRIu64 ",\"dropped_unopened\":%" PRIu64,
            net->welcome.slot == CRADLE_WIRE_SPECTATOR ? -1 : (int)net->welcome.slot, net->welcome.start_step,
            net->sim.next_step, net->hashes_checked,
            net->last_hash_step == CRADLE_NETCLIENT_NO_STEP ? (int64_t)-1 : (int64_t)net->last_hash_step,
            net->last_hash, cradle_netclient_state_hash(net), net->sim.contract ? net->sim.contract->build_id : "",
            (double)net->rtt_ns / 1e6, net->desync ? "true" : "false", net->inputs_sent, net->steps_early,
            net->steps_repeated, net->reloads, (unsigned)net->turned_away, (unsigned)net->welcome.input_delay,
            net->delay_changes, net->raw_steps, net->raw_dropped, net->dropped_unopened);
    print_prediction(to, net);
    fprintf(to, "}\n");
    fflush(to);
}

int cradle_client_report_failure(const cradle_netclient *net, const char *who) {
    if (net->desync) {
        fprintf(stderr, "%s: DESYNC at step %" PRIu64 ": client hash %016" PRIx64 ", server hash %016" PRIx64 "%s%s\n",
                who, net->desync_step, net->desync_mine, net->desync_theirs,
                net->config.desync_report ? "; report written to " : "",
                net->config.desync_report ? net->config.desync_report : "");
        if (!net->error) return 4;
    }
    if (net->error) {
        fprintf(stderr, "%s: %s\n", who, net->message);
        return net->desync || !cradle_netclient_ended_normally(net) ? 1 : 0; /* the server stopping is an end */
    }
    return 0;
}

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

typedef struct bot_slot {
    cradle_netclient net;
    char copy_dir[64]; /* bot i > 0: its own directory for the library copy */
    cradle_input_source input;
    bool finished;
    bool playing; /* the "playing" line was printed */
    bool predict_said; /* why prediction ended was said */
    uint32_t turned_said; /* turn-aways said on stderr (a single connection) */
    int status;
} bot_slot;

/* One headless run: its connections and what they share. */
typedef struct headless_run {
    const cradle_client_options *o;
    uint32_t count;  /* connections: --bots N, else 1 */
    bot_slot *bots;
    cradle_script script;
    FILE *output;    /* --output: the first connection's */
    uint32_t running; /* connections not finished */
    int status;
} headless_run;

/* Opens connection i: its library copy directory (i > 0), its input source,
 * and for the first one --output and the desync report; -1 (said on stderr)
 * on failure. */
static int open_bot(headless_run *run, uint32_t i, uint64_t now) {
    static char report[64];
    const cradle_client_options *o = run->o;
    bot_slot *b = &run->bots[i];
    cradle_netclient_config config = cradle_client_net_config(o);
    if (run->count > 1) config.requested_slot = -1;
    if (i > 0) {
        const char *tmp = getenv("TMPDIR");
        snprintf(b->copy_dir, sizeof b->copy_dir, "%s/cradle-bot-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
        if (!mkdtemp(b->copy_dir)) {
            fprintf(stderr, "cradle-client: cannot create %s\n", b->copy_dir);
            b->copy_dir[0] = '\0';
            return -1;
        }
        config.copy_dir = b->copy_dir;
    }
    b->input.script = o->script ? &run->script : NULL;
    b->input.use_bot = o->bot || o->bots;
    b->input.net = &b->net;
    cradle_bot_init(&b->input.bot, o->seed + i);
    config.input = cradle_input_source_fill;
    config.input_context = &b->input;
    if (i == 0) {
        config.output = run->output;
        if (o->desync_report) {
            config.desync_report = o->desync_report;
        } else {
            snprintf(report, sizeof report, "cradle-desync-%ld.bin", (long)getpid());
            config.desync_report = report;
        }
    }
    if (cradle_netclient_open(&b->net, &config, now) != 0) {
        fprintf(stderr, "cradle-client: %s\n", b->net.message);
        return -1;
    }
    return 0;
}

/* Ends connection b with its exit status, leaving the session when that
 * status allows. */
static void finish_bot(headless_run *run, bot_slot *b, int status, uint32_t leave_ms) {
    b->finished = true;
    run->running--;
    b->status = status;
    if (status != 1) cradle_netclient_leave(&b->net, leave_ms);
}

/* One turn of connection b: service it, print "playing" once (a single
 * connection), refuse a --steps already past, run its due steps, and finish
 * it on an error, a desync or --steps reached. */
static void service_bot(headless_run *run, bot_slot *b) {
    const cradle_client_options *o = run->o;
    uint64_t now = cradle_client_now_ns();
    (void)cradle_netclient_service(&b->net, now, run->count == 1 ? 2u : 0u);
    if (run->count == 1 && b->net.turned_away > b->turned_said) {
        /* why a client is not in yet: the server's connect limit or a full table */
        b->turned_said = b->net.turned_away;
        fprintf(stderr, "cradle-client: the server turned this client away (%s); trying again in %u ms\n",
                b->net.turned_busy ? "its table is full" : "too many connects from this address",
                (unsigned)b->net.retry_ms);
    }
    if (!b->playing && run->count == 1 && cradle_netclient_playing(&b->net)) {
        /* WELCOME and any state block are in: it runs steps from here. */
        b->playing = true;
        printf("{\"event\":\"playing\",\"slot\":%d,\"start_step\":%" PRIu64 "}\n",
               b->net.welcome.slot == CRADLE_WIRE_SPECTATOR ? -1 : (int)b->net.welcome.slot,
               b->net.welcome.start_step);
        fflush(stdout);
    }
    if (o->steps && cradle_netclient_playing(&b->net) && b->net.welcome.start_step >= o->steps) {
        /* --steps is the step to stop before: one the session has passed
         * would run nothing. */
        fprintf(stderr,
                "cradle-client: --steps %" PRIu64 " is already past: the session was at step %" PRIu64
                " when this client joined (--steps N stops before step N; give a later step)\n",
                o->steps, b->net.welcome.start_step);
        finish_bot(run, b, 2, 500);
        if (run->status < 2) run->status = 2;
        return;
    }
    while (cradle_netclient_step(&b->net, now) == 1) {
        if (o->steps && b->net.sim.next_step >= o->steps) break;
    }
    (void)cradle_netclient_predict(&b->net);
    if (run->count == 1 && b->net.predict.message[0] && !b->predict_said) {
        b->predict_said = true; /* prediction ended: the player goes on in lockstep */
        fprintf(stderr, "cradle-client: %s\n", b->net.predict.message);
    }
    bool done = o->steps && b->net.sim.next_step >= o->steps && cradle_netclient_playing(&b->net);
    if (b->net.error || b->net.desync || done) {
        int status = cradle_client_report_failure(&b->net, "cradle-client");
        if (status == 0 && run->count == 1) cradle_client_print_done(stdout, &b->net);
        finish_bot(run, b, status, 500);
        if (status > run->status) run->status = status;
    }
}

/* SIGINT or SIGTERM: every connection still running leaves (a single one
 * prints its summary first). */
static void stop_all(headless_run *run) {
    for (uint32_t i = 0; i < run->count; i++)
        if (!run->bots[i].finished) {
            if (run->count == 1) cradle_client_print_done(stdout, &run->bots[i].net);
            cradle_netclient_leave(&run->bots[i].net, 200);
        }
}

/* --bots N: the one summary line over all connections. */
static void print_bots_done(const headless_run *run) {
    uint64_t desyncs = 0, steps = 0;
    for (uint32_t i = 0; i < run->count; i++) {
        desyncs += run->bots[i].net.desync;
        steps += run->bots[i].net.steps_run;
    }
    printf("{\"event\":\"bots_done\",\"bots\":%u,\"steps\":%" PRIu64 ",\"desyncs\":%" PRIu64 ",\"status\":%d}\n",
           run->count, steps, desyncs, run->status);
}

/* Closes every connection and --output; returns the final exit status. */
static int close_run(headless_run *run) {
    const cradle_client_options *o = run->o;
    int status = run->status;
    for (uint32_t i = 0; i < run->count; i++) {
        cradle_netclient_close(&run->bots[i].net);
        if (run->bots[i].copy_dir[0]) (void)rmdir(run->bots[i].copy_dir);
    }
    free(run->bots);
    cradle_script_free(&run->script);
    if (run->output && fclose(run->output) != 0 && status == 0) status = 1;
    if (run->output && status == 2) (void)remove(o->output); /* a refused --steps ran no step: no empty file */
    return status;
}

int cradle_client_run_headless(const cradle_client_options *o) {
    headless_run run = {.o = o, .count = o->bots ? o->bots : 1u, .status = 1};
    run.bots = calloc(run.count, sizeof *run.bots);
    char message[512];
    if (!run.bots) {
        fprintf(stderr, "cradle-client: out of memory\n");
        return 1;
    }
    if (o->script && cradle_script_load(&run.script, o->script, message, sizeof message) != 0) {
        fprintf(stderr, "cradle-client: %s\n", message);
        return close_run(&run);
    }
    if (o->output && !(run.output = fopen(o->output, "wb"))) {
        fprintf(stderr, "cradle-client: cannot create --output %s\n", o->output);
        return close_run(&run);
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    uint64_t now = cradle_client_now_ns();
    for (uint32_t i = 0; i < run.count; i++)
        if (open_bot(&run, i, now) != 0) return close_run(&run);
    run.running = run.count;
    run.status = 0;
    while (run.running > 0) {
        if (stop_requested) {
            stop_all(&run);
            break;
        }
        for (uint32_t i = 0; i < run.count; i++)
            if (!run.bots[i].finished) service_bot(&run, &run.bots[i]);
        if (run.count > 1) {
            struct timespec pause = {0, 1000000};
            nanosleep(&pause, NULL);
        }
    }
    if (run.count > 1) print_bots_done(&run);
    return close_run(&run);
}
