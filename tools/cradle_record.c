/*
 * cradle-record: runs a game library headless from step 0 and writes a
 * session log (log.h), plus optionally the game's output bytes.
 *
 *   cradle-record --game counter.so --log run.log --seed 7 --players 3 \
 *                 --steps 600 [--script input.txt] [--output run.out]
 *
 * Input script (--script): text, one change per line, sorted by step:
 *   <step> <slot> <hex>     slot's input bytes from <step> on, exactly
 *                           2 * input_bytes hex digits ("03", "ff", ...)
 *   <step> <slot> leave     the slot disconnects (its input reads as zero)
 *   <step> <slot> join      the slot connects (input zero until set)
 *   # comment               (also after the fields; blank lines are ignored)
 * Slots 0..players-1 are present from step 0; an input holds until the
 * slot's next line. Errors name the line. Without a script every present
 * slot gets pseudo-random input bytes each step (PCG32 seeded with --seed),
 * so one command records a whole session.
 *
 * --reload STEP:LIB (repeatable) switches to another build of the same game
 * before STEP runs, as a server's hot reload would, and records it.
 * Exit status: 0 success, 1 failure, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/cradle.h"
#include "cradle/os.h"

#define MAX_RELOADS 16
#define STATE_MIN_CAPACITY 65536u
#define STATE_ALIGN CRADLE_RELOAD_DEFAULT_MAX_ALIGN

typedef struct script_entry {
    uint64_t step;
    uint32_t slot;
    int action; /* 0 set input, 1 leave, 2 join */
    uint8_t input[CRADLE_GAME_MAX_INPUT_BYTES];
    unsigned line;
} script_entry;

typedef struct options {
    const char *game, *log, *script, *output;
    uint64_t seed, steps;
    uint32_t players, hash_interval, block_size;
    bool force;
    struct {
        uint64_t step;
        const char *path;
    } reloads[MAX_RELOADS];
    unsigned reload_count;
} options;


static void usage(FILE *to) {
    fprintf(to,
            "usage: cradle-record --game LIB --log FILE [options]\n"
            "Runs a game library headless from step 0 and records a session log.\n"
            "  --game LIB          game library (.so) to run\n"
            "  --log FILE          session log to write (refused if it exists, see --force)\n"
            "  --seed N            seed passed to the game's init (default 1)\n"
            "  --players N         player count (default 1)\n"
            "  --steps N           steps to run (default 600)\n"
            "  --script FILE       input script: lines '<step> <slot> <hex>|leave|join'\n"
            "                      (default: seeded random input for every present slot)\n"
            "  --output FILE       also write the game's output bytes ('-' = stdout)\n"
            "  --hash-interval K   record the state hash every K steps (default 60, 0 = never)\n"
            "  --reload STEP:LIB   switch to another build of the game before STEP (repeatable)\n"
            "  --block-size N      log block payload bytes (default 65536)\n"
            "  --force             overwrite an existing log\n"
            "  --help, --version\n");
}

/* A decimal number from 0 to UINT32_MAX (cradle_parse_u64) into a uint32_t. */
static bool parse_u32(const char *text, uint32_t *out) {
    uint64_t v;
    if (!cradle_parse_u64(text, 0, UINT32_MAX, &v)) return false;
    *out = (uint32_t)v;
    return true;
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Reads and validates the script; returns the entries (malloc'd) or NULL
 * after printing an error naming the line. */
static script_entry *load_script(const char *path, uint32_t max_players, uint32_t input_bytes,
                                 uint32_t players, size_t *count) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cradle-record: cannot open script %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 64, n = 0;
    script_entry *entries = malloc(cap * sizeof *entries);
    bool present[CRADLE_GAME_MAX_PLAYERS] = {0};
    for (uint32_t s = 0; s < players; s++) present[s] = true;
    char line[1024];
    unsigned number = 0;
    uint64_t last_step = 0;
    bool ok = entries != NULL;
    while (ok && fgets(line, sizeof line, f)) {
        number++;
        if (!strchr(line, '\n') && !feof(f)) {
            fprintf(stderr, "%s:%u: line longer than %zu bytes\n", path, number, sizeof line - 2);
            ok = false;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *fields[4];
        int k = 0;
        for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
            if (k == 4) break;
            fields[k++] = tok;
        }
        if (k == 0) continue;
        if (k != 3) {
            fprintf(stderr, "%s:%u: expected '<step> <slot> <hex>|leave|join', got %d fields\n",
                    path, number, k);
            ok = false;
            break;
        }
        script_entry e = {.line = number};
        if (!cradle_parse_u64(fields[0], 0, UINT64_MAX, &e.step)) {
            fprintf(stderr, "%s:%u: bad step '%s'\n", path, number, fields[0]);
            ok = false;
            break;
        }
        if (!parse_u32(fields[1], &e.slot) || e.slot >= max_players) {
            fprintf(stderr, "%s:%u: bad slot '%s' (the game has slots 0..%" PRIu32 ")\n", path,
                    number, fields[1], max_players - 1);
            ok = false;
            break;
        }
        if (n > 0 && e.step < last_step) {
            fprintf(stderr, "%s:%u: step %" PRIu64 " comes after step %" PRIu64
                    " (lines must be sorted by step)\n", path, number, e.step, last_step);
            ok = false;
            break;
        }
        last_step = e.step;
        if (strcmp(fields[2], "leave") == 0) {
            e.action = 1;
            if (!present[e.slot]) {
                fprintf(stderr, "%s:%u: slot %" PRIu32 " leaves but is not present\n", path,
                        number, e.slot);
                ok = false;
                break;
            }
            present[e.slot] = false;
        } else if (strcmp(fields[2], "join") == 0) {
            e.action = 2;
            if (present[e.slot]) {
                fprintf(stderr, "%s:%u: slot %" PRIu32 " joins but is already present\n", path,
                        number, e.slot);
                ok = false;
                break;
            }
            present[e.slot] = true;
        } else {
            size_t len = strlen(fields[2]);
            if (len != 2u * input_bytes) {
                fprintf(stderr, "%s:%u: input '%s' must be exactly %" PRIu32
                        " hex digits (%" PRIu32 " bytes)\n", path, number, fields[2],
                        2u * input_bytes, input_bytes);
                ok = false;
                break;
            }
            for (size_t i = 0; ok && i < input_bytes; i++) {
                int hi = hexval(fields[2][2 * i]), lo = hexval(fields[2][2 * i + 1]);
                if (hi < 0 || lo < 0) {
                    fprintf(stderr, "%s:%u: input '%s' is not hex\n", path, number, fields[2]);
                    ok = false;
                }
                e.input[i] = (uint8_t)(hi * 16 + lo);
            }
            if (ok && !present[e.slot]) {
                fprintf(stderr, "%s:%u: slot %" PRIu32 " is not present at step %" PRIu64
                        " (add a join line first)\n", path, number, e.slot, e.step);
                ok = false;
            }
            if (!ok) break;
        }
        if (n == cap) {
            cap *= 2;
            script_entry *bigger = realloc(entries, cap * sizeof *entries);
            if (!bigger) {
                fprintf(stderr, "cradle-record: out of memory reading %s\n", path);
                ok = false;
                break;
            }
            entries = bigger;
        }
        entries[n++] = e;
    }
    if (ok && ferror(f)) {
        fprintf(stderr, "cradle-record: cannot read %s\n", path);
        ok = false;
    }
    fclose(f);
    if (!ok) {
        free(entries);
        return NULL;
    }
    *count = n;
    return entries;
}

static int open_library(cradle_reload *r, const char *path, uint32_t capacity) {
    cradle_reload_config cfg = {.path = path,
                                .copy_dir = cradle_os_tmpdir(),
                                .state_capacity = capacity};
    char msg[CRADLE_RELOAD_MESSAGE_MAX];
    int rc = cradle_reload_open(r, &cfg, cradle_mono_ns(), msg, sizeof msg);
    if (rc) fprintf(stderr, "cradle-record: cannot load %s: %s\n", path, msg);
    return rc;
}

static int parse_args(int argc, char **argv, options *o) {
    static const struct option longs[] = {
        {"game", required_argument, NULL, 'g'},   {"log", required_argument, NULL, 'l'},
        {"seed", required_argument, NULL, 's'},   {"players", required_argument, NULL, 'p'},
        {"steps", required_argument, NULL, 'n'},  {"script", required_argument, NULL, 'i'},
        {"output", required_argument, NULL, 'o'}, {"hash-interval", required_argument, NULL, 'k'},
        {"reload", required_argument, NULL, 'r'}, {"block-size", required_argument, NULL, 'b'},
        {"force", no_argument, NULL, 'f'},        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0},
    };
    *o = (options){.seed = 1, .steps = 600, .players = 1, .hash_interval = 60};
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'g': o->game = optarg; break;
        case 'l': o->log = optarg; break;
        case 'i': o->script = optarg; break;
        case 'o': o->output = optarg; break;
        case 'f': o->force = true; break;
        case 's': ok = cradle_parse_u64(optarg, 0, UINT64_MAX, &o->seed); break;
        case 'n': ok = cradle_parse_u64(optarg, 0, UINT64_MAX, &o->steps); break;
        case 'p': ok = parse_u32(optarg, &o->players) && o->players >= 1; break;
        case 'k': ok = parse_u32(optarg, &o->hash_interval); break;
        case 'b': ok = parse_u32(optarg, &o->block_size); break;
        case 'r': {
            char *colon = strchr(optarg, ':');
            if (!colon || o->reload_count == MAX_RELOADS) {
                ok = false;
                break;
            }
            *colon = '\0';
            ok = cradle_parse_u64(optarg, 0, UINT64_MAX, &o->reloads[o->reload_count].step) && colon[1];
            o->reloads[o->reload_count++].path = colon + 1;
            if (ok && o->reload_count > 1 &&
                o->reloads[o->reload_count - 1].step <= o->reloads[o->reload_count - 2].step)
                ok = false;
            break;
        }
        case 'h': usage(stdout); exit(0);
        case 'V': {
            char version[CRADLE_VERSION_TEXT_MAX];
            cradle_version_text(version, sizeof version, "cradle-record", NULL);
            printf("%s\n", version);
            exit(0);
        }
        default: usage(stderr); return 2;
        }
        if (!ok) {
            const char *name = "?";
            for (const struct option *l = longs; l->name; l++)
                if (l->val == c) name = l->name;
            const char *allowed = c == 'r'   ? "STEP:LIB, steps increasing, at most 16 of them"
                                  : c == 'p' ? "a whole number from 1 to 4294967295"
                                  : c == 's' || c == 'n' ? "a whole number from 0 to 2^64-1"
                                             : "a whole number from 0 to 4294967295";
            fprintf(stderr, "cradle-record: --%s '%s': expected %s\n", name, optarg, allowed);
            return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "cradle-record: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!o->game || !o->log) {
        fprintf(stderr, "cradle-record: --game and --log are required\n");
        usage(stderr);
        return 2;
    }
    return 0;
}

/* One recording: the library in charge and the one a --reload brings, the
 * sim, the script or the bots' generator, the log and the output. Static:
 * the loaders are large. */
typedef struct recorder {
    options o;
    cradle_reload libraries[2];
    int in_use;
    cradle_sim sim;
    void *state;
    uint32_t capacity;
    script_entry *script;
    size_t script_count, next_entry;
    unsigned next_reload;
    uint8_t held[CRADLE_GAME_MAX_PLAYERS][CRADLE_GAME_MAX_INPUT_BYTES];
    bool present[CRADLE_GAME_MAX_PLAYERS];
    uint8_t snapshot[CRADLE_SNAPSHOT_MAX];
    cradle_rng rng;
    cradle_log_header header;
    cradle_log_writer writer;
    bool writer_open;
    FILE *out;
} recorder;

static recorder the_recorder;

/* Loads --game with the state capacity every later build must fit (as a
 * server does) and starts the game. Returns 0, 1 (failure) or 2 (usage). */
static int open_game(recorder *r) {
    const options *o = &r->o;
    if (open_library(&r->libraries[0], o->game, 0) != 0) return 1;
    uint32_t size = cradle_reload_contract(&r->libraries[0])->state_size;
    uint32_t capacity = size > STATE_MIN_CAPACITY ? size : STATE_MIN_CAPACITY;
    r->capacity = (capacity + STATE_ALIGN - 1) / STATE_ALIGN * STATE_ALIGN;
    cradle_reload_close(&r->libraries[0]);
    if (open_library(&r->libraries[0], o->game, r->capacity) != 0) return 1;
    const cradle_game_contract *c = cradle_reload_contract(&r->libraries[0]);
    if (o->players > c->max_players) {
        fprintf(stderr, "cradle-record: --players %" PRIu32 " > the game's max players %" PRIu32 "\n",
                o->players, c->max_players);
        return 2;
    }
    if (o->script) {
        r->script = load_script(o->script, c->max_players, c->input_bytes, o->players, &r->script_count);
        if (!r->script) return 1;
    }
    r->state = aligned_alloc(STATE_ALIGN, r->capacity);
    if (!r->state) {
        fprintf(stderr, "cradle-record: out of memory for the state\n");
        return 1;
    }
    char msg[CRADLE_RELOAD_MESSAGE_MAX];
    cradle_sim_config sc = {.state = r->state, .state_capacity = r->capacity, .state_align = STATE_ALIGN,
                            .hash = cradle_hash64};
    if (cradle_sim_init(&r->sim, &sc, c, msg, sizeof msg) != 0) {
        fprintf(stderr, "cradle-record: %s\n", msg);
        return 1;
    }
    if (cradle_sim_start(&r->sim, o->seed, o->players) != 0) {
        fprintf(stderr, "cradle-record: the game refused %" PRIu32 " players\n", o->players);
        return 1;
    }
    for (uint32_t s = 0; s < o->players; s++) r->present[s] = true;
    cradle_rng_seed(&r->rng, o->seed, 0x5eed);
    return 0;
}

/* Opens --output and the log (which archives the first build). */
static int open_outputs(recorder *r) {
    const options *o = &r->o;
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

/* --reload STEP:LIB at this step: the build takes over the state (its
 * on_reload runs, as on a server) and the log records and archives it. */
static int take_reload(recorder *r, uint64_t step) {
    if (r->next_reload >= r->o.reload_count || r->o.reloads[r->next_reload].step != step) return 0;
    const char *path = r->o.reloads[r->next_reload++].path;
    int next = 1 - r->in_use;
    cradle_reload *spare = &r->libraries[next];
    if (open_library(spare, path, r->capacity) != 0) return 1;
    const cradle_game_contract *nc = cradle_reload_contract(spare);
    char msg[CRADLE_LOG_MESSAGE_MAX];
    if (cradle_log_check_library(&r->header, nc->build_id, nc, msg, sizeof msg) == CRADLE_ELOG_GAME ||
        cradle_sim_swap(&r->sim, nc, msg, sizeof msg) != 0) {
        fprintf(stderr, "cradle-record: --reload %s: %s\n", path, msg);
        cradle_reload_close(spare);
        return 1;
    }
    if (cradle_log_writer_append_reload(&r->writer, step, nc->build_id, cradle_reload_copy_path(spare)) != 0) {
        fprintf(stderr, "cradle-record: %s\n", r->writer.message);
        return 1;
    }
    cradle_reload_close(&r->libraries[r->in_use]);
    r->in_use = next;
    return 0;
}

/* The snapshot of this step: the script's inputs, or the seeded bytes. */
static void build_snapshot(recorder *r, uint64_t step) {
    const cradle_game_contract *c = r->sim.contract;
    if (r->script) {
        for (; r->next_entry < r->script_count && r->script[r->next_entry].step <= step; r->next_entry++) {
            const script_entry *e = &r->script[r->next_entry];
            if (e->action == 0) memcpy(r->held[e->slot], e->input, c->input_bytes);
            else memset(r->held[e->slot], 0, c->input_bytes);
            r->present[e->slot] = e->action != 1;
        }
    } else {
        for (uint32_t s = 0; s < c->max_players; s++)
            for (uint32_t b = 0; b < c->input_bytes; b++)
                r->held[s][b] = r->present[s] ? (uint8_t)cradle_rng_next(&r->rng) : 0;
    }
    memset(r->snapshot, 0, r->sim.snapshot_size);
    for (uint32_t s = 0; s < c->max_players; s++) {
        if (!r->present[s]) continue;
        r->snapshot[s / 8] = (uint8_t)(r->snapshot[s / 8] | (1u << (s % 8)));
        memcpy(r->snapshot + CRADLE_PRESENCE_BYTES(c->max_players) + s * c->input_bytes, r->held[s],
               c->input_bytes);
    }
}

/* Records and runs one step; writes its output and, every K steps, its hash. */
static int record_step(recorder *r, uint64_t step) {
    if (take_reload(r, step) != 0) return 1;
    build_snapshot(r, step);
    if (cradle_log_writer_append_step(&r->writer, step, r->snapshot) != 0) {
        fprintf(stderr, "cradle-record: %s\n", r->writer.message);
        return 1;
    }
    cradle_sim_step(&r->sim, r->snapshot);
    if (r->out) {
        int rc = cradle_sim_output(&r->sim);
        if (rc != 0) {
            fprintf(stderr, "cradle-record: step %" PRIu64 ": %s\n", step, cradle_strerror(rc));
            return 1;
        }
        if (fwrite(r->sim.output, 1, r->sim.output_size, r->out) != r->sim.output_size) {
            fprintf(stderr, "cradle-record: cannot write %s\n", r->o.output);
            return 1;
        }
    }
    if ((r->o.hash_interval && (step + 1) % r->o.hash_interval == 0 &&
         cradle_log_writer_append_hash(&r->writer, step, cradle_sim_hash(&r->sim)) != 0) ||
        cradle_log_writer_maybe_sync(&r->writer, cradle_mono_ns()) != 0) {
        fprintf(stderr, "cradle-record: %s\n", r->writer.message);
        return 1;
    }
    return 0;
}

/* Closes the log with its trailer and flushes the output. */
static int finish(recorder *r) {
    r->writer_open = false;
    if (cradle_log_writer_close(&r->writer, cradle_sim_hash(&r->sim)) != 0) {
        fprintf(stderr, "cradle-record: %s\n", r->writer.message);
        return 1;
    }
    if (r->out && fflush(r->out) != 0) {
        fprintf(stderr, "cradle-record: cannot write %s\n", r->o.output);
        return 1;
    }
    fprintf(stderr, "cradle-record: %" PRIu64 " steps of %s (build %s) to %s\n", r->o.steps,
            r->header.game_name, r->header.build_id, r->o.log);
    return 0;
}

static void cleanup(recorder *r) {
    if (r->writer_open) cradle_log_writer_abandon(&r->writer);
    if (r->out && r->out != stdout) fclose(r->out);
    free(r->state);
    free(r->script);
    cradle_reload_close(&r->libraries[0]);
    cradle_reload_close(&r->libraries[1]);
}

int main(int argc, char **argv) {
    recorder *r = &the_recorder;
    int status = parse_args(argc, argv, &r->o);
    if (status) return status;
    status = open_game(r);
    if (status == 0) status = open_outputs(r);
    for (uint64_t step = 0; status == 0 && step < r->o.steps; step++) status = record_step(r, step);
    if (status == 0) status = finish(r);
    cleanup(r);
    return status;
}
