/* cradle-record's command line: one table gives each option its name,
 * argument, help text and, for numbers, the range it accepts. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

#define RECORD_MAX_STEPS UINT64_MAX

enum {
    OPT_GAME = 1000, OPT_LOG, OPT_SEED, OPT_PLAYERS, OPT_STEPS, OPT_SCRIPT, OPT_BOTS, OPT_OUTPUT,
    OPT_HASH_INTERVAL, OPT_INDEX_INTERVAL, OPT_RELOAD, OPT_DATA, OPT_DATA_AT, OPT_WATCH, OPT_BLOCK_SIZE, OPT_FORCE, OPT_PACED, OPT_COMMANDED,
    OPT_DEV_STDIN, OPT_DEV_SOCKET, OPT_DEV_CLIENTS, OPT_MAX_COUNT, OPT_JSON, OPT_NO_CHECK, OPT_HELP, OPT_VERSION,
};

typedef struct option_row {
    cradle_option option; /* help.h: name, id, the value's name (NULL: a flag), help */
    uint64_t min, max;    /* numbers: the range; max 0: not a number */
} option_row;

static const option_row ROWS[] = {
    {{"game", OPT_GAME, "LIB", "the game library (.so) to run (required)"}, 0, 0},
    {{"log", OPT_LOG, "FILE", "the session log to write (required; refused if it exists, see --force)"}, 0, 0},
    {{"seed", OPT_SEED, "N", "seed of the game's init and of the input (default 1)"}, 0, UINT64_MAX},
    {{"players", OPT_PLAYERS, "N", "players present from step 0 (default 1)"}, 1, CRADLE_GAME_MAX_PLAYERS},
    {{"steps", OPT_STEPS, "N", "steps to run (default 600); commanded: the most the session may run\n(default no limit)"}, 0, RECORD_MAX_STEPS},
    {{"script", OPT_SCRIPT, "FILE", "input script: lines '<step> <slot> <hex>|leave|join'"}, 0, 0},
    {{"bots", OPT_BOTS, NULL, "the game's own bots play (its bot entry, else random bits with\npersistence); default: seeded random "
     "input bytes each step"}, 0, 0},
    {{"output", OPT_OUTPUT, "FILE", "also write the game's output bytes ('-' = stdout)"}, 0, 0},
    {{"hash-interval", OPT_HASH_INTERVAL, "K", "record the state hash every K steps (default 60, 0 = never)"}, 0, UINT32_MAX},
    {{"index-interval", OPT_INDEX_INTERVAL, "N", "the check replay also writes the log's keyframe index (LOG.index)\nwith the state every N steps, for seeking (default 1200, 0 = none)"}, 0, CRADLE_REPLAY_INDEX_INTERVAL_MAX},
    {{"reload", OPT_RELOAD, "STEP:LIB", "switch to another build of the game before STEP (repeatable)"}, 0, 0},
    {{"data", OPT_DATA, "DIR", "the folder the game's data files are under (default: the\nlibrary's folder)"}, 0, 0},
    {{"data-at", OPT_DATA_AT, "STEP:DIR", "before STEP, read the game's data files from DIR instead and apply\nthose that changed (repeatable)"}, 0, 0},
    {{"watch", OPT_WATCH, NULL, "hot reload: a rebuilt --game takes over between two steps, as on\nthe server (not with --reload), and "
     "edited data files apply"}, 0, 0},
    {{"block-size", OPT_BLOCK_SIZE, "N", "log block payload bytes (default 65536)"}, 0, UINT32_MAX},
    {{"force", OPT_FORCE, NULL, "overwrite an existing log"}, 0, 0},
    {{"paced", OPT_PACED, NULL, "step at the game's steps per second in real time (default: as\nfast as it goes)"}, 0, 0},
    {{"commanded", OPT_COMMANDED, NULL, "only the dev protocol's step command advances it; needs\n--dev-stdin or --dev-socket"}, 0, 0},
    {{"dev-stdin", OPT_DEV_STDIN, NULL, "dev protocol on stdin, replies on stdout (implies --commanded;\nstatus lines then go to stderr)"}, 0, 0},
    {{"dev-socket", OPT_DEV_SOCKET, "PATH", "dev protocol on a Unix socket (mode 0600); paced or fast, status,\nflush and quit work while it runs"}, 0, 0},
    {{"dev-clients", OPT_DEV_CLIENTS, "N", "dev socket connections at once (default 16)"}, 1, 1024},
    {{"max-count", OPT_MAX_COUNT, "N", "largest step count one command may ask (default 100000)"}, 1, CRADLE_DEV_COUNT_LIMIT},
    {{"json", OPT_JSON, NULL, "status and done lines as JSON"}, 0, 0},
    {{"no-check", OPT_NO_CHECK, NULL, "do not replay the log at the end to check it"}, 0, 0},
    {{"help", OPT_HELP, NULL, "show this help"}, 0, 0},
    {{"version", OPT_VERSION, NULL, "show the version"}, 0, 0},
};
#define ROW_COUNT (sizeof ROWS / sizeof ROWS[0])

static void usage(FILE *to) {
    fprintf(to, "usage: cradle-record --game LIB --log FILE [options]\n"
                "Runs a game library offline from step 0, records the session log and\n"
                "replays the log at the end to check it reproduces the live run.\n\n");
    cradle_options_help(to, &ROWS[0].option, ROW_COUNT, sizeof ROWS[0], 24, 0);
    fprintf(to, "\nDev protocol: one JSON object per line, one reply line each:\n"
                "  {\"cmd\":\"step\",\"count\":N}  {\"cmd\":\"status\"}  {\"cmd\":\"flush\"}  {\"cmd\":\"quit\"}\n"
                "Exit status: 0 success, 1 failure (the replay check included), 2 usage.\n");
}

/* --reload STEP:LIB and --data-at STEP:DIR, steps increasing. */
static bool parse_step_path(record_step_path *list, unsigned *count, char *text) {
    char *colon = strchr(text, ':');
    if (!colon || !colon[1] || *count == RECORD_MAX_RELOADS) return false;
    *colon = '\0';
    uint64_t step;
    bool ok = cradle_parse_u64(text, 0, UINT64_MAX, &step);
    *colon = ':';
    if (!ok || (*count > 0 && step <= list[*count - 1].step)) return false;
    list[*count].step = step;
    list[(*count)++].path = colon + 1;
    return true;
}

static void store_number(record_options *o, int id, uint64_t v) {
    switch (id) {
    case OPT_SEED: o->seed = v; break;
    case OPT_PLAYERS: o->players = (uint32_t)v; break;
    case OPT_STEPS: o->steps = v; o->steps_given = true; break;
    case OPT_HASH_INTERVAL: o->hash_interval = (uint32_t)v; break;
    case OPT_INDEX_INTERVAL: o->index_interval = (uint32_t)v; break;
    case OPT_BLOCK_SIZE: o->block_size = (uint32_t)v; break;
    case OPT_MAX_COUNT: o->max_count = v; break;
    case OPT_DEV_CLIENTS: o->dev_clients = (uint32_t)v; break;
    default: break;
    }
}

/* One option that is not a number. Returns -1 to go on or an exit status. */
static int apply_flag(record_options *o, int id, char *value) {
    switch (id) {
    case OPT_GAME: o->game = value; break;
    case OPT_LOG: o->log = value; break;
    case OPT_SCRIPT: o->script = value; o->input = RECORD_INPUT_SCRIPT; break;
    case OPT_BOTS: o->input = RECORD_INPUT_BOTS; break;
    case OPT_OUTPUT: o->output = value; break;
    case OPT_WATCH: o->watch = true; break;
    case OPT_FORCE: o->force = true; break;
    case OPT_PACED: o->pace = RECORD_PACED; break;
    case OPT_COMMANDED: o->pace = RECORD_COMMANDED; break;
    case OPT_DEV_STDIN: o->dev_stdin = true; o->pace = RECORD_COMMANDED; break;
    case OPT_DEV_SOCKET: o->dev_socket = value; break;
    case OPT_JSON: o->json = true; break;
    case OPT_NO_CHECK: o->check = false; break;
    case OPT_DATA: o->data = value; break;
    case OPT_RELOAD:
        if (parse_step_path(o->reloads, &o->reload_count, value)) break;
        fprintf(stderr, "cradle-record: --reload '%s': expected STEP:LIB, steps increasing, at most %u of them\n",
                value, RECORD_MAX_RELOADS);
        return 2;
    case OPT_DATA_AT:
        if (parse_step_path(o->data_at, &o->data_at_count, value)) break;
        fprintf(stderr, "cradle-record: --data-at '%s': expected STEP:DIR, steps increasing, at most %u of them\n",
                value, RECORD_MAX_RELOADS);
        return 2;
    case OPT_HELP: usage(stdout); return 0;
    case OPT_VERSION: {
        char version[CRADLE_VERSION_TEXT_MAX];
        cradle_version_text(version, sizeof version, "cradle-record", NULL);
        printf("%s\n", version);
        return 0;
    }
    default: usage(stderr); return 2;
    }
    return -1;
}

/* The combinations that cannot work, said before anything starts. */
static int check_combinations(const record_options *o, bool bots_and_script) {
    const char *why = NULL;
    if (!o->game || !o->log) why = "--game and --log are required";
    else if (bots_and_script) why = "--bots and --script both set the input: choose one";
    else if (o->watch && o->reload_count) why = "--watch and --reload both switch builds: choose one";
    else if (o->pace == RECORD_COMMANDED && !o->dev_stdin && !o->dev_socket)
        why = "--commanded needs --dev-stdin or --dev-socket PATH (nothing could step it)";
    else if (o->dev_stdin && o->output && strcmp(o->output, "-") == 0)
        why = "--dev-stdin replies on stdout: --output - cannot share it";
    if (!why) return -1;
    fprintf(stderr, "cradle-record: %s\n", why);
    if (!o->game || !o->log) usage(stderr);
    return 2;
}

int record_options_parse(record_options *o, int argc, char **argv) {
    *o = (record_options){.seed = 1, .steps = 600, .players = 1, .hash_interval = 60, .max_count = 100000,
                          .check = true, .index_interval = CRADLE_REPLAY_INDEX_INTERVAL_DEFAULT};
    struct option longs[ROW_COUNT + 1];
    cradle_options_getopt(&ROWS[0].option, ROW_COUNT, sizeof ROWS[0], longs, NULL);
    bool bots = false, script = false;
    int id;
    opterr = 0;
    while ((id = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        const option_row *row = NULL;
        for (size_t i = 0; i < ROW_COUNT; i++)
            if (ROWS[i].option.id == id) row = &ROWS[i];
        if (!row) {
            fprintf(stderr, "cradle-record: unknown option or missing value: '%s'\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
        bots |= id == OPT_BOTS;
        script |= id == OPT_SCRIPT;
        if (row->max) {
            uint64_t v;
            if (!cradle_parse_u64(optarg, row->min, row->max, &v)) {
                fprintf(stderr, "cradle-record: --%s must be a whole number from %" PRIu64 " to %" PRIu64
                                ", got '%s'\n",
                        row->option.name, row->min, row->max, optarg);
                return 2;
            }
            store_number(o, id, v);
            continue;
        }
        int status = apply_flag(o, id, optarg);
        if (status >= 0) return status;
    }
    if (optind != argc) {
        fprintf(stderr, "cradle-record: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (o->pace == RECORD_COMMANDED && !o->steps_given) o->steps = RECORD_MAX_STEPS;
    return check_combinations(o, bots && script);
}
