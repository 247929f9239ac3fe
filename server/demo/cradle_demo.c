/*
 * cradle-demo: the headless demo host.
 *
 * It paces a small built-in simulation with the clock in real time (or as
 * fast as possible with --fast), drives it with a seeded input script,
 * records every step's snapshot in a session, prints its status, and at the
 * end replays the recording and checks, byte for byte with golden compare,
 * that the replay produced the same output as the live run.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cradle/cradle.h"

#define DEMO_PLAYERS 4u
#define DEMO_INPUT_BYTES 1u
#define DEMO_SNAPSHOT_SIZE (CRADLE_PRESENCE_BYTES(DEMO_PLAYERS) + DEMO_PLAYERS * DEMO_INPUT_BYTES)
#define DEMO_OUTPUT_BYTES 16u

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
    cradle_put_u64(&c, w->steps);
    for (uint32_t p = 0; p < DEMO_PLAYERS; p++) cradle_put_u16(&c, (uint16_t)w->position[p]);
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

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns) {
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static void usage(FILE *to) {
    fprintf(to,
            "usage: cradle-demo [options]\n"
            "Steps Cradle's built-in demo simulation with four seeded bots, records it,\n"
            "replays the recording and checks the replay's output byte for byte.\n\n"
            "  -n, --steps N     steps to run (default 300)\n"
            "  -r, --rate N      steps per second (default 60)\n"
            "  -s, --seed N      seed of the bots (default 1)\n"
            "  -f, --fast        do not pace in real time\n"
            "  -j, --json        print status as JSON lines\n"
            "  -h, --help        show this help\n"
            "  -V, --version     show the version\n");
}

static int parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out) {
    char *end = NULL;
    errno = 0;
    if (text[0] == '-') return -1;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < min || v > max) return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv) {
    uint64_t steps = 300, rate = 60, seed = 1;
    bool fast = false, json = false;
    static const struct option options[] = {
        {"steps", required_argument, NULL, 'n'}, {"rate", required_argument, NULL, 'r'},
        {"seed", required_argument, NULL, 's'},  {"fast", no_argument, NULL, 'f'},
        {"json", no_argument, NULL, 'j'},        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},     {NULL, 0, NULL, 0},
    };
    int opt;
    while ((opt = getopt_long(argc, argv, "n:r:s:fjhV", options, NULL)) != -1) {
        switch (opt) {
        case 'n':
            if (parse_u64(optarg, 1, 10000000, &steps) != 0) {
                fprintf(stderr, "cradle-demo: --steps must be an integer from 1 to 10000000, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'r':
            if (parse_u64(optarg, 1, 1000, &rate) != 0) {
                fprintf(stderr, "cradle-demo: --rate must be an integer from 1 to 1000, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 's':
            if (parse_u64(optarg, 0, UINT64_MAX, &seed) != 0) {
                fprintf(stderr, "cradle-demo: --seed must be a non-negative integer, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'f': fast = true; break;
        case 'j': json = true; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("cradle-demo %s\n", CRADLE_VERSION_STRING); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "cradle-demo: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }

    int status = 1;
    uint8_t *storage = malloc(steps * DEMO_SNAPSHOT_SIZE);
    uint8_t *live_output = malloc(steps * DEMO_OUTPUT_BYTES);
    uint8_t *replay_output = malloc(steps * DEMO_OUTPUT_BYTES);
    if (!storage || !live_output || !replay_output) {
        fprintf(stderr, "cradle-demo: out of memory for %" PRIu64 " steps\n", steps);
        goto out_free;
    }
    cradle_session session;
    int rc = cradle_session_init(&session, storage, steps * DEMO_SNAPSHOT_SIZE, DEMO_SNAPSHOT_SIZE);
    cradle_clock clock;
    if (rc == 0) {
        rc = cradle_clock_init(&clock, (cradle_clock_config){.steps_per_second = (uint32_t)rate,
                                                             .source_frames_per_second = (uint32_t)rate});
    }
    if (rc != 0) {
        fprintf(stderr, "cradle-demo: %s\n", cradle_strerror(rc));
        goto out_free;
    }
    cradle_rng bots;
    cradle_rng_seed(&bots, seed, 7);
    demo_world world = {{0}, 0};
    uint8_t snapshot[DEMO_SNAPSHOT_SIZE];
    uint64_t started = now_ns(), last = started, dropped = 0;
    uint64_t report_every = rate; /* one status line per simulated second */
    while (world.steps < steps) {
        uint64_t now = now_ns();
        cradle_clock_plan plan = cradle_clock_offer_elapsed(&clock, fast ? UINT64_MAX / 2 : now - last);
        last = now;
        dropped += fast ? 0 : plan.dropped;
        for (uint32_t i = 0; i < plan.steps; i++) {
            cradle_step step = cradle_clock_next(&clock);
            if (world.steps >= steps) continue;
            demo_bots(&bots, snapshot);
            rc = cradle_session_append(&session, step.index, snapshot);
            if (rc != 0) {
                fprintf(stderr, "cradle-demo: recording step %" PRIu64 ": %s\n", step.index, cradle_strerror(rc));
                goto out_free;
            }
            demo_world_step(&world, snapshot);
            demo_world_output(&world, live_output + step.index * DEMO_OUTPUT_BYTES);
            if (world.steps % report_every == 0 || world.steps == steps) {
                if (json) {
                    printf("{\"event\":\"status\",\"step\":%" PRIu64 ",\"positions\":[%d,%d,%d,%d],\"dropped\":%" PRIu64 "}\n",
                           world.steps, world.position[0], world.position[1], world.position[2],
                           world.position[3], dropped);
                } else {
                    printf("step %6" PRIu64 "  dots at %3d %3d %3d %3d  dropped %" PRIu64 "\n", world.steps,
                           world.position[0], world.position[1], world.position[2], world.position[3], dropped);
                }
                fflush(stdout);
            }
        }
        if (!fast && world.steps < steps) sleep_ns(cradle_clock_ns_until_next(&clock));
    }
    double seconds = (double)(now_ns() - started) / 1e9;

    replay_ctx replay = {.world = {{0}, 0}, .output = replay_output};
    cradle_session_replay(&session, replay_update, &replay);
    cradle_golden_result verdict = cradle_golden_compare(live_output, steps * DEMO_OUTPUT_BYTES,
                                                         replay_output, steps * DEMO_OUTPUT_BYTES);
    if (json) {
        printf("{\"event\":\"done\",\"steps\":%" PRIu64 ",\"seconds\":%.3f,\"replay_equal\":%s}\n", steps,
               seconds, verdict.equal ? "true" : "false");
    } else {
        printf("ran %" PRIu64 " steps in %.2f s; replay of the recording %s\n", steps, seconds,
               verdict.equal ? "matches the live run byte for byte" : "DIFFERS");
    }
    if (!verdict.equal) {
        fprintf(stderr, "cradle-demo: replay differs at byte %zu (step %zu)\n", verdict.first_difference,
                verdict.first_difference / DEMO_OUTPUT_BYTES);
        goto out_free;
    }
    status = 0;
out_free:
    free(storage);
    free(live_output);
    free(replay_output);
    return status;
}
