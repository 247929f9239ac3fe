/*
 * cradle-demo: the headless demo host.
 *
 * It steps a small built-in simulation driven by seeded bots, records every
 * step's snapshot in a session, and at the end replays the recording and
 * checks, byte for byte with golden compare, that the replay produced the
 * same output as the live run.
 *
 * Two modes:
 *   paced (default)  the clock paces --steps steps in real time (or as fast
 *                    as possible with --fast); with --dev-socket, status and
 *                    quit work while it runs.
 *   commanded        only the dev protocol's step command advances it, over
 *                    --dev-stdin (replies on stdout) and/or --dev-socket;
 *                    quit (or end of stdin, SIGINT, SIGTERM) ends it.
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/cradle.h"
#include "demo_game.h"

#define DEMO_PLAYERS 4u
#define DEMO_INPUT_BYTES 1u
#define DEMO_SNAPSHOT_SIZE (CRADLE_PRESENCE_BYTES(DEMO_PLAYERS) + DEMO_PLAYERS * DEMO_INPUT_BYTES)
#define DEMO_OUTPUT_BYTES 16u
#define DEMO_MAX_STEPS_LIMIT 100000000u /* 37 bytes a step: 3.7 GB */

/* The built-in simulation: four dots on a ring of 1000 positions; each
 * player's input byte moves its dot. Integer-only, so every machine agrees. */
typedef struct demo_world {
    int32_t position[DEMO_PLAYERS];
    uint64_t steps;
} demo_world;

static void demo_world_step(demo_world *w, const uint8_t *snapshot) {
    for (uint32_t p = 0; p < DEMO_PLAYERS; p++) {
        if (!cradle_snapshot_present(snapshot, p)) continue;
        int32_t move = (int8_t)cradle_snapshot_input(snapshot, DEMO_PLAYERS, 1, p)[0];
        w->position[p] = ((w->position[p] + move) % 1000 + 1000) % 1000;
    }
    w->steps++;
}

static void demo_world_output(const demo_world *w, uint8_t out[DEMO_OUTPUT_BYTES]) {
    cradle_cursor c = cradle_cursor_writer(out, DEMO_OUTPUT_BYTES);
    cradle_cursor_put_u64(&c, w->steps);
    for (uint32_t p = 0; p < DEMO_PLAYERS; p++) cradle_cursor_put_u16(&c, (uint16_t)w->position[p]);
}

/* Fills a step's snapshot from the seeded bots: each moves -3..3. */
static void demo_bots(cradle_rng *rng, uint8_t snapshot[DEMO_SNAPSHOT_SIZE]) {
    memset(snapshot, 0, DEMO_SNAPSHOT_SIZE);
    for (uint32_t p = 0; p < DEMO_PLAYERS; p++) {
        snapshot[p / 8] = (uint8_t)(snapshot[p / 8] | (1u << (p % 8)));
        int32_t move = cradle_rng_range(rng, -3, 3);
        snapshot[CRADLE_PRESENCE_BYTES(DEMO_PLAYERS) + p] = (uint8_t)(int8_t)move;
    }
}

typedef struct replay_ctx {
    demo_world world;
    uint8_t *output;
} replay_ctx;

static void replay_update(void *context, uint64_t step, const uint8_t *snapshot, uint32_t size) {
    (void)size;
    replay_ctx *r = context;
    demo_world_step(&r->world, snapshot);
    demo_world_output(&r->world, r->output + step * DEMO_OUTPUT_BYTES);
}

/* ---- the host ---- */

typedef struct demo_options {
    uint64_t steps, rate, seed, max_steps, max_count, players;
    bool fast, json, commanded, dev_stdin;
    const char *dev_socket;
    const char *game; /* a game library to run instead of the built-in simulation */
    const char *log;  /* game mode: the session log to write */
} demo_options;

typedef struct demo_host {
    demo_options opt;
    uint64_t capacity; /* steps the session storage holds */
    uint8_t *storage, *live_output, *replay_output;
    cradle_session session;
    cradle_clock clock;
    cradle_rng bots;
    demo_world world;
    uint64_t dropped;
    bool checked, replay_equal;
    size_t first_difference;
    uint32_t snapshot_size;
    bool game_mode;
    demo_game game; /* game mode only */
    bool replay_skipped; /* game mode: the session spanned a reload */
    cradle_transport dev;
    bool dev_open;
    bool dev_failed;
    FILE *events; /* status and done lines: stderr when stdout carries replies */
} demo_host;

static volatile sig_atomic_t demo_stop_signal = 0;

static void on_stop_signal(int signal_number) { demo_stop_signal = signal_number; }

static int demo_host_init(demo_host *h) {
    h->capacity = h->opt.commanded ? h->opt.max_steps : h->opt.steps;
    h->snapshot_size = DEMO_SNAPSHOT_SIZE;
    uint32_t source_rate = (uint32_t)h->opt.rate;
    if (h->game_mode) {
        char message[512] = "";
        int rc = demo_game_open(&h->game, h->opt.game, h->opt.seed, (uint32_t)h->opt.players, h->opt.log,
                                cradle_wall_ns(), cradle_mono_ns(), message, sizeof message);
        if (rc != 0) {
            fprintf(stderr, "cradle-demo: --game '%s': %s: %s\n", h->opt.game, cradle_strerror(rc), message);
            return rc;
        }
        const cradle_game_contract *c = h->game.sim.contract;
        h->snapshot_size = h->game.snapshot_size;
        h->opt.rate = c->steps_per_second; /* a game runs at its own rate */
        source_rate = c->source_frames_per_second;
        fprintf(h->events, "cradle-demo: running game '%s' build %s, %u players, %u steps/s%s%s\n", c->name,
                c->build_id, h->game.players, c->steps_per_second, h->opt.log ? ", log " : "",
                h->opt.log ? h->opt.log : "");
        fflush(h->events);
    }
    h->storage = malloc(h->capacity * h->snapshot_size);
    h->live_output = malloc(h->capacity * DEMO_OUTPUT_BYTES);
    h->replay_output = malloc(h->capacity * DEMO_OUTPUT_BYTES);
    if (!h->storage || !h->live_output || !h->replay_output) {
        fprintf(stderr, "cradle-demo: out of memory for %" PRIu64 " steps\n", h->capacity);
        return CRADLE_ENOMEM;
    }
    int rc = cradle_session_init(&h->session, h->storage, h->capacity * h->snapshot_size, h->snapshot_size);
    if (rc == 0) {
        rc = cradle_clock_init(&h->clock, (cradle_clock_config){.steps_per_second = (uint32_t)h->opt.rate,
                                                                .source_frames_per_second = source_rate});
    }
    if (rc != 0) {
        fprintf(stderr, "cradle-demo: %s\n", cradle_strerror(rc));
        return rc;
    }
    cradle_rng_seed(&h->bots, h->opt.seed, 7);
    return 0;
}

static void demo_host_deinit(demo_host *h) {
    if (h->dev_open) cradle_transport_close(&h->dev);
    if (h->game_mode) demo_game_close(&h->game);
    free(h->storage);
    free(h->live_output);
    free(h->replay_output);
}

/* Game mode: one step of the game library, with what a reload said. */
static int demo_host_game_step(demo_host *h, cradle_step step, const uint8_t *snapshot) {
    cradle_reload_result reload;
    int rc = demo_game_step(&h->game, step.index, snapshot, cradle_mono_ns(), &reload);
    if (reload.kind == CRADLE_RELOAD_SWAPPED) {
        fprintf(h->events, "cradle-demo: reloaded at step %" PRIu64 ": build %s is running (state kept)\n",
                step.index, reload.contract->build_id);
    } else if (reload.kind == CRADLE_RELOAD_REFUSED) {
        fprintf(stderr, "cradle-demo: reload refused at step %" PRIu64 " (%s): %s; the old build keeps running\n",
                step.index, cradle_error_name(reload.error), reload.message);
    }
    if (reload.kind != CRADLE_RELOAD_NONE) fflush(h->events);
    if (rc != 0) {
        /* The step ran; only the log is behind. Say so once per failure. */
        fprintf(stderr, "cradle-demo: session log: %s: %s\n", cradle_strerror(rc), h->game.log.message);
    }
    h->world.steps = h->game.steps;
    demo_game_output(&h->game.sim, h->live_output + step.index * DEMO_OUTPUT_BYTES);
    return 0;
}

/* Runs one step: the bots' input is recorded, then simulated. */
static int demo_host_step(demo_host *h, cradle_step step) {
    uint8_t snapshot[CRADLE_SNAPSHOT_MAX];
    if (h->game_mode) {
        demo_game_bots(&h->game, step.index, snapshot);
    } else {
        demo_bots(&h->bots, snapshot);
    }
    int rc = cradle_session_append(&h->session, step.index, snapshot);
    if (rc != 0) return rc;
    if (h->game_mode) return demo_host_game_step(h, step, snapshot);
    demo_world_step(&h->world, snapshot);
    demo_world_output(&h->world, h->live_output + step.index * DEMO_OUTPUT_BYTES);
    return 0;
}

/* Replays the recording once and compares it with the live output. */
static bool demo_host_check(demo_host *h) {
    if (h->checked) return h->replay_equal;
    uint64_t steps = h->world.steps;
    if (h->game_mode) {
        if (!demo_game_replay(&h->game, &h->session, h->replay_output)) {
            h->checked = h->replay_skipped = h->replay_equal = true;
            return true;
        }
    } else {
        replay_ctx replay = {.world = {{0}, 0}, .output = h->replay_output};
        cradle_session_replay(&h->session, replay_update, &replay);
    }
    cradle_golden_result verdict = cradle_golden_compare(h->live_output, steps * DEMO_OUTPUT_BYTES,
                                                         h->replay_output, steps * DEMO_OUTPUT_BYTES);
    h->checked = true;
    h->replay_equal = verdict.equal;
    h->first_difference = verdict.first_difference;
    return h->replay_equal;
}

static void demo_print_game_status(const demo_host *h) {
    const demo_game *g = &h->game;
    if (h->opt.json) {
        fprintf(h->events,
                "{\"event\":\"status\",\"step\":%" PRIu64 ",\"game\":\"%s\",\"build\":\"%s\",\"hash\":\"%016" PRIx64
                "\",\"events\":%" PRIu64 ",\"reloads\":%" PRIu64 ",\"dropped\":%" PRIu64 "}\n",
                g->steps, g->sim.contract->name, g->sim.contract->build_id, demo_game_hash(g), g->sim.events.appended_total, g->reloads,
                h->dropped);
    } else {
        fprintf(h->events, "step %6" PRIu64 "  %s build %s  state hash %016" PRIx64 "  events %" PRIu64
                "  reloads %" PRIu64 "  dropped %" PRIu64 "\n",
                g->steps, g->sim.contract->name, g->sim.contract->build_id, demo_game_hash(g), g->sim.events.appended_total, g->reloads,
                h->dropped);
    }
    fflush(h->events);
}

static void demo_print_status(const demo_host *h) {
    if (h->game_mode) {
        demo_print_game_status(h);
        return;
    }
    const demo_world *w = &h->world;
    if (h->opt.json) {
        fprintf(h->events, "{\"event\":\"status\",\"step\":%" PRIu64 ",\"positions\":[%d,%d,%d,%d],\"dropped\":%" PRIu64 "}\n",
                w->steps, w->position[0], w->position[1], w->position[2], w->position[3], h->dropped);
    } else {
        fprintf(h->events, "step %6" PRIu64 "  dots at %3d %3d %3d %3d  dropped %" PRIu64 "\n", w->steps,
                w->position[0], w->position[1], w->position[2], w->position[3], h->dropped);
    }
    fflush(h->events);
}

/* ---- dev commands ---- */

static bool demo_cmd_step(void *context, cradle_dev_request *request, cradle_writer *reply) {
    demo_host *h = context;
    uint64_t count = request->command.count;
    if (!h->opt.commanded) {
        cradle_dev_reply_error(reply, request, CRADLE_EDEV_STATE,
                               "step needs commanded mode; this host is paced (start it with --commanded)");
        return false;
    }
    if (count > h->capacity - h->world.steps) {
        char message[CRADLE_DEV_MESSAGE_BYTES];
        snprintf(message, sizeof message,
                 "%" PRIu64 " more steps would pass the session capacity: %" PRIu64 " of %" PRIu64
                 " steps recorded (start with a larger --max-steps)",
                 count, h->world.steps, h->capacity);
        cradle_dev_reply_error(reply, request, CRADLE_ESESSION_CAPACITY, message);
        return false;
    }
    for (uint64_t i = 0; i < count; i++) {
        int rc = demo_host_step(h, cradle_clock_command_step(&h->clock));
        if (rc != 0) { /* not expected: capacity was checked and steps come in order */
            cradle_dev_reply_error(reply, request, rc, NULL);
            return false;
        }
    }
    cradle_dev_reply_begin(reply, request);
    cradle_dev_field_u64(reply, "step", h->world.steps);
    cradle_dev_reply_end(reply);
    return false;
}

static bool demo_cmd_status(void *context, cradle_dev_request *request, cradle_writer *reply) {
    demo_host *h = context;
    const demo_world *w = &h->world;
    char positions[64];
    snprintf(positions, sizeof positions, "[%d,%d,%d,%d]", w->position[0], w->position[1], w->position[2],
             w->position[3]);
    cradle_dev_reply_begin(reply, request);
    cradle_dev_field_u64(reply, "step", w->steps);
    cradle_dev_field_string(reply, "mode", h->opt.commanded ? "commanded" : "paced");
    cradle_dev_field_u64(reply, "seed", h->opt.seed);
    cradle_dev_field_u64(reply, "rate", h->opt.rate);
    if (h->game_mode) {
        char hash[24];
        snprintf(hash, sizeof hash, "%016" PRIx64, demo_game_hash(&h->game));
        cradle_dev_field_string(reply, "game", h->game.sim.contract->name);
        cradle_dev_field_string(reply, "build", h->game.sim.contract->build_id);
        cradle_dev_field_u64(reply, "players", h->game.players);
        cradle_dev_field_string(reply, "hash", hash);
        cradle_dev_field_u64(reply, "reloads", h->game.reloads);
        cradle_dev_field_u64(reply, "refused_reloads", h->game.refusals);
        cradle_dev_field_string(reply, "last_reload", h->game.last_reload);
        cradle_dev_field_string(reply, "log", h->opt.log ? h->opt.log : "");
    } else {
        cradle_dev_field_raw(reply, "positions", positions);
    }
    cradle_dev_field_u64(reply, "capacity", h->capacity);
    cradle_dev_field_u64(reply, "dropped", h->dropped);
    cradle_dev_reply_end(reply);
    return false;
}

static bool demo_cmd_quit(void *context, cradle_dev_request *request, cradle_writer *reply) {
    demo_host *h = context;
    bool equal = demo_host_check(h);
    cradle_dev_reply_begin(reply, request);
    cradle_dev_field_u64(reply, "step", h->world.steps);
    cradle_dev_field_bool(reply, "replay_equal", equal);
    if (h->replay_skipped) cradle_dev_field_bool(reply, "replay_skipped", true);
    cradle_dev_reply_end(reply);
    return true;
}

static bool demo_cmd_flush(void *context, cradle_dev_request *request, cradle_writer *reply) {
    demo_host *h = context;
    int rc = h->game_mode ? demo_game_flush(&h->game, cradle_mono_ns()) : 0;
    if (rc != 0) {
        cradle_dev_reply_error(reply, request, rc, h->game.log.message);
        return false;
    }
    cradle_dev_reply_begin(reply, request);
    cradle_dev_field_u64(reply, "step", h->world.steps);
    cradle_dev_field_u64(reply, "durable_steps",
                         h->game_mode && h->game.logging ? cradle_log_writer_durable_steps(&h->game.log) : 0);
    cradle_dev_reply_end(reply);
    return false;
}

static const cradle_dev_entry demo_commands[] = {
    {"step", demo_cmd_step},
    {"status", demo_cmd_status},
    {"quit", demo_cmd_quit},
    {"flush", demo_cmd_flush},
};

/* The transport's handler: one request line, one reply line. */
static bool demo_dev_line(void *context, const char *line, size_t length, cradle_writer *reply,
                          cradle_arena *scratch) {
    (void)scratch;
    demo_host *h = context;
    cradle_dev_request request;
    int rc = cradle_dev_parse(&request, line, length, h->opt.max_count);
    bool quit = false;
    const cradle_dev_entry *entry = NULL;
    if (rc == 0 || rc == CRADLE_EDEV_UNKNOWN) {
        entry = cradle_dev_find(demo_commands, sizeof demo_commands / sizeof demo_commands[0], request.cmd);
    }
    if (entry) quit = entry->handle(h, &request, reply);
    else cradle_dev_reply_parse_error(reply, &request);
    cradle_dev_request_deinit(&request);
    return quit;
}

static int demo_dev_open(demo_host *h) {
    cradle_transport_config config = {
        .socket_path = h->opt.dev_socket,
        .stdio = h->opt.dev_stdin,
        .handler = demo_dev_line,
        .context = h,
    };
    int rc = cradle_transport_open(&h->dev, &config);
    if (rc != 0) {
        fprintf(stderr, "cradle-demo: dev %s: %s", h->opt.dev_socket ? h->opt.dev_socket : "stdin",
                cradle_strerror(rc));
        if (rc == CRADLE_EIO) fprintf(stderr, " (%s)", strerror(h->dev.system_error));
        fprintf(stderr, "\n");
        return rc;
    }
    h->dev_open = true;
    char event[256];
    cradle_writer w;
    cradle_writer_init(&w, event, sizeof event);
    cradle_transport_listening_event(&h->dev, &w);
    fwrite(event, 1, w.length, stdout);
    fflush(stdout);
    return 0;
}

/* Polls the dev transport; false once it stopped (quit, end of stdin) or
 * failed. */
static bool demo_dev_poll(demo_host *h, int timeout_ms) {
    int rc = cradle_transport_poll(&h->dev, timeout_ms);
    if (rc != 0) {
        fprintf(stderr, "cradle-demo: dev transport: %s (%s)\n", cradle_strerror(rc), strerror(h->dev.system_error));
        h->dev_failed = true;
        return false;
    }
    return cradle_transport_state(&h->dev) == CRADLE_TRANSPORT_RUNNING;
}

/* ---- the two modes ---- */

static int demo_run_paced(demo_host *h) {
    uint64_t last = cradle_mono_ns();
    uint64_t report_every = h->opt.rate; /* one status line per simulated second */
    uint32_t rounds = 0;
    while (h->world.steps < h->opt.steps && !demo_stop_signal) {
        uint64_t now = cradle_mono_ns();
        cradle_clock_plan plan = cradle_clock_offer_elapsed(&h->clock, h->opt.fast ? UINT64_MAX / 2 : now - last);
        last = now;
        h->dropped += h->opt.fast ? 0 : plan.dropped;
        for (uint32_t i = 0; i < plan.steps; i++) {
            cradle_step step = cradle_clock_next(&h->clock);
            if (h->world.steps >= h->opt.steps) continue;
            int rc = demo_host_step(h, step);
            if (rc != 0) {
                fprintf(stderr, "cradle-demo: recording step %" PRIu64 ": %s\n", step.index, cradle_strerror(rc));
                return 1;
            }
            if (h->world.steps % report_every == 0 || h->world.steps == h->opt.steps) demo_print_status(h);
        }
        if (h->world.steps >= h->opt.steps) break;
        uint64_t wait = h->opt.fast ? 0 : cradle_clock_ns_until_next(&h->clock);
        if (h->dev_open) {
            /* Fast runs look at the socket every 256 rounds, paced ones while
             * they wait for the next step (rounded up to whole ms). */
            if ((h->opt.fast && ++rounds % 256 != 0)) continue;
            if (!demo_dev_poll(h, (int)((wait + 999999) / 1000000))) return h->dev_failed ? 1 : 0;
        } else if (wait) {
            (void)cradle_sleep_ns_unless(wait, &demo_stop_signal); /* SIGINT ends it early */
        }
    }
    return 0;
}

static int demo_run_commanded(demo_host *h) {
    while (!demo_stop_signal && demo_dev_poll(h, 1000)) {
    }
    return h->dev_failed ? 1 : 0;
}

/* ---- options ---- */

static void usage(FILE *to) {
    fprintf(to,
            "usage: cradle-demo [options]\n"
            "Steps Cradle's built-in demo simulation (or a game library, --game) with\n"
            "seeded bots, records it, replays the recording and checks the replay's\n"
            "output byte for byte.\n\n"
            "  -g, --game LIB        run this game library (hot-reloaded when rebuilt)\n"
            "  -p, --players N       game mode: bot players (default min(4, the game's maximum))\n"
            "  -l, --log PATH        game mode: write the session log to PATH\n"
            "  -n, --steps N         paced mode: steps to run (default 300)\n"
            "  -r, --rate N          steps per second (default 60; a game runs at its own)\n"
            "  -s, --seed N          seed of the bots (default 1)\n"
            "  -f, --fast            paced mode: do not pace in real time\n"
            "  -j, --json            print status as JSON lines\n"
            "  -c, --commanded       only the dev command step advances the simulation;\n"
            "                        needs --dev-stdin or --dev-socket\n"
            "      --dev-stdin       dev protocol on stdin, replies on stdout (implies\n"
            "                        --commanded; status lines then go to stderr)\n"
            "      --dev-socket PATH dev protocol on a Unix socket (mode 0600); in paced\n"
            "                        mode status and quit work while it runs\n"
            "      --max-steps N     commanded mode: session capacity (default 1000000)\n"
            "      --max-count N     largest step count one command may ask (default 100000)\n"
            "  -h, --help            show this help\n"
            "  -V, --version         show the version\n\n"
            "Dev protocol: one JSON object per line, one reply line each:\n"
            "  {\"cmd\":\"step\",\"count\":N}  {\"cmd\":\"status\"}  {\"cmd\":\"quit\"}  {\"cmd\":\"flush\"}\n");
}

enum { OPT_DEV_STDIN = 1000, OPT_DEV_SOCKET, OPT_MAX_STEPS, OPT_MAX_COUNT };

/* Fills *o from argv. Returns -1 to go on, or the exit status. */
static int parse_options(int argc, char **argv, demo_options *o) {
    static const struct option options[] = {
        {"steps", required_argument, NULL, 'n'},      {"rate", required_argument, NULL, 'r'},
        {"seed", required_argument, NULL, 's'},       {"fast", no_argument, NULL, 'f'},
        {"json", no_argument, NULL, 'j'},             {"commanded", no_argument, NULL, 'c'},
        {"dev-stdin", no_argument, NULL, OPT_DEV_STDIN}, {"dev-socket", required_argument, NULL, OPT_DEV_SOCKET},
        {"max-steps", required_argument, NULL, OPT_MAX_STEPS}, {"max-count", required_argument, NULL, OPT_MAX_COUNT},
        {"game", required_argument, NULL, 'g'},       {"players", required_argument, NULL, 'p'},
        {"log", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},             {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const struct {
        int opt;
        const char *flag;
        uint64_t min, max;
        uint64_t *out;
    } numbers[] = {
        {'n', "--steps", 1, 10000000, &o->steps},
        {'r', "--rate", 1, 1000, &o->rate},
        {'s', "--seed", 0, UINT64_MAX, &o->seed},
        {OPT_MAX_STEPS, "--max-steps", 1, DEMO_MAX_STEPS_LIMIT, &o->max_steps},
        {OPT_MAX_COUNT, "--max-count", 1, CRADLE_DEV_COUNT_LIMIT, &o->max_count},
        {'p', "--players", 1, CRADLE_GAME_MAX_PLAYERS, &o->players},
    };
    int opt;
    while ((opt = getopt_long(argc, argv, "n:r:s:fjchVg:p:l:", options, NULL)) != -1) {
        bool numeric = false;
        for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
            if (numbers[i].opt != opt) continue;
            numeric = true;
            if (!cradle_parse_u64(optarg, numbers[i].min, numbers[i].max, numbers[i].out)) {
                fprintf(stderr, "cradle-demo: %s must be an integer from %" PRIu64 " to %" PRIu64 ", got '%s'\n",
                        numbers[i].flag, numbers[i].min, numbers[i].max, optarg);
                return 2;
            }
        }
        if (numeric) continue;
        switch (opt) {
        case 'f': o->fast = true; break;
        case 'g': o->game = optarg; break;
        case 'l': o->log = optarg; break;
        case 'j': o->json = true; break;
        case 'c': o->commanded = true; break;
        case OPT_DEV_STDIN: o->dev_stdin = o->commanded = true; break;
        case OPT_DEV_SOCKET: o->dev_socket = optarg; break;
        case 'h': usage(stdout); return 0;
        case 'V': {
            char version[CRADLE_VERSION_TEXT_MAX];
            cradle_version_text(version, sizeof version, "cradle-demo", NULL);
            printf("%s\n", version);
            return 0;
        }
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "cradle-demo: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if ((o->log || o->players) && !o->game) {
        fprintf(stderr, "cradle-demo: --log and --players need --game LIB (the built-in simulation has neither)\n");
        return 2;
    }
    if (o->commanded && !o->dev_stdin && !o->dev_socket) {
        fprintf(stderr, "cradle-demo: --commanded needs --dev-stdin or --dev-socket PATH (nothing could step it)\n");
        return 2;
    }
    return -1;
}

int main(int argc, char **argv) {
    demo_host host = {.opt = {.steps = 300, .rate = 60, .seed = 1, .max_steps = 1000000, .max_count = 100000}};
    demo_host *h = &host;
    int status = parse_options(argc, argv, &h->opt);
    if (status >= 0) return status;
    status = 1;
    h->events = h->opt.dev_stdin ? stderr : stdout;
    h->game_mode = h->opt.game != NULL;

    /* A client that vanishes must not kill the host; SIGINT and SIGTERM end
     * the run cleanly (socket removed, replay checked). */
    signal(SIGPIPE, SIG_IGN);
    struct sigaction stop = {.sa_handler = on_stop_signal};
    sigemptyset(&stop.sa_mask);
    sigaction(SIGINT, &stop, NULL);
    sigaction(SIGTERM, &stop, NULL);

    if (demo_host_init(h) != 0) goto out;
    if ((h->opt.dev_stdin || h->opt.dev_socket) && demo_dev_open(h) != 0) goto out;

    uint64_t started = cradle_mono_ns();
    if ((h->opt.commanded ? demo_run_commanded(h) : demo_run_paced(h)) != 0) goto out;
    double seconds = (double)(cradle_mono_ns() - started) / 1e9;

    bool equal = demo_host_check(h);
    uint64_t steps = h->world.steps;
    if (h->opt.json) {
        fprintf(h->events, "{\"event\":\"done\",\"steps\":%" PRIu64 ",\"seconds\":%.3f,\"replay_equal\":%s%s}\n", steps,
                seconds, equal ? "true" : "false", h->replay_skipped ? ",\"replay_skipped\":true" : "");
    } else {
        fprintf(h->events, "ran %" PRIu64 " steps in %.2f s; replay of the recording %s\n", steps, seconds,
                h->replay_skipped ? "skipped: the session spanned a reload (cradle-replay on the log replays it)"
                : equal ? "matches the live run byte for byte" : "DIFFERS");
    }
    fflush(h->events);
    if (!equal) {
        fprintf(stderr, "cradle-demo: replay differs at byte %zu (step %zu)\n", h->first_difference,
                h->first_difference / DEMO_OUTPUT_BYTES);
        goto out;
    }
    status = 0;
out:
    demo_host_deinit(h);
    return status;
}
