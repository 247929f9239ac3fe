#ifndef CRADLE_RECORD_H
#define CRADLE_RECORD_H
/*
 * cradle-record, the offline host: it runs a game library from step 0 with
 * no network, feeds every present slot's input from a script, seeded random
 * bytes or the game's bots, records the session log and, at the end, replays
 * the log through the replay driver (replay.h) to check that it gives the
 * same state hashes and output bytes as the live run.
 *
 *   record_options.c  the command line
 *   record_script.c   input scripts (text: "<step> <slot> <hex>|leave|join")
 *   recorder.c        one recording: the sim, its inputs, the log, reloads,
 *                     the final replay check
 *   record_dev.c      the dev protocol (step, status, flush, quit)
 *   cradle_record.c   main: the fast, paced and commanded runs
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cradle/bot.h"
#include "cradle/cradle.h"

#define RECORD_MAX_RELOADS 16u

typedef enum record_input {
    RECORD_INPUT_RANDOM, /* seeded random bytes for every present slot, each step */
    RECORD_INPUT_SCRIPT, /* --script FILE */
    RECORD_INPUT_BOTS,   /* --bots: the game's bot entry, else the generic bot (bot.h) */
} record_input;

typedef enum record_pace {
    RECORD_FAST,      /* as fast as it goes (the default) */
    RECORD_PACED,     /* the game's steps per second in real time */
    RECORD_COMMANDED, /* only the dev protocol's step advances it */
} record_pace;

typedef struct record_step_path {
    uint64_t step;
    const char *path;
} record_step_path;

typedef struct record_options {
    const char *game, *log, *script, *output;
    const char *data;               /* --data DIR, or NULL: the library's folder */
    uint64_t seed, steps, max_count;
    bool steps_given;
    uint32_t players, hash_interval, block_size, dev_clients;
    uint32_t index_interval;        /* --index-interval: the check replay writes LOG.index; 0 = none */
    bool force, watch, json, check, dev_stdin;
    record_input input;
    record_pace pace;
    const char *dev_socket;
    record_step_path reloads[RECORD_MAX_RELOADS];
    unsigned reload_count;
    record_step_path data_at[RECORD_MAX_RELOADS]; /* --data-at STEP:DIR */
    unsigned data_at_count;
} record_options;

/* Fills *o from argv. Returns -1 to go on, or the exit status (0 after
 * --help or --version, 2 on a usage error, said on stderr). */
int record_options_parse(record_options *o, int argc, char **argv);

/* ---- input scripts ---- */

typedef enum record_script_action {
    RECORD_SCRIPT_SET,
    RECORD_SCRIPT_LEAVE,
    RECORD_SCRIPT_JOIN,
} record_script_action;

typedef struct record_script_entry {
    uint64_t step;
    uint32_t slot;
    record_script_action action;
    uint8_t input[CRADLE_GAME_MAX_INPUT_BYTES];
    unsigned line;
} record_script_entry;

/* Reads and checks the script at path for a game of max_players slots of
 * input_bytes each, slots 0..players-1 present at step 0. Returns the
 * entries (malloc'd, *count of them) or NULL after printing an error naming
 * the file and line. */
record_script_entry *record_script_load(const char *path, uint32_t max_players, uint32_t input_bytes,
                                        uint32_t players, size_t *count);

/* ---- one recording ---- */

typedef struct recorder {
    record_options o;
    FILE *events;                   /* status and done lines */
    cradle_reload libraries[2];     /* the build in charge, and the one a --reload brings */
    int in_use;
    cradle_sim sim;
    cradle_sim_storage storage;     /* the sim's blocks, capacity bytes each, and its events */
    uint32_t capacity;
    cradle_data_files data;         /* the game's data files */
    unsigned next_data_at;
    uint64_t data_applied, data_refusals;
    record_script_entry *script;
    size_t script_count, next_entry;
    unsigned next_reload;
    uint8_t held[CRADLE_GAME_MAX_PLAYERS][CRADLE_GAME_MAX_INPUT_BYTES];
    bool present[CRADLE_GAME_MAX_PLAYERS];
    uint8_t snapshot[CRADLE_SNAPSHOT_MAX];
    cradle_rng rng;
    cradle_bot bots[CRADLE_GAME_MAX_PLAYERS];
    cradle_log_header header;
    cradle_log_writer writer;
    bool writer_open;
    FILE *out;
    uint64_t output_digest;         /* every step's output bytes, folded */
    uint64_t reloads, refusals;
    char last_reload[CRADLE_RELOAD_MESSAGE_MAX + 64];
    bool finished;                  /* the log is closed */
    bool checked, replay_equal;     /* the replay check ran; what it found */
    char check_message[CRADLE_REPLAY_MESSAGE_MAX + 64];
} recorder;

/* Loads --game, starts it, loads the script and opens the log and
 * --output. Returns 0, 1 (failure, said on stderr) or 2 (usage). */
int recorder_open(recorder *r);

/* Records and runs the next step; with --watch it first picks up a rebuilt
 * library. Returns 0 or 1 (said on stderr). */
int recorder_step(recorder *r);

/* Steps run so far. */
static inline uint64_t recorder_steps(const recorder *r) { return r->sim.next_step; }

/* Makes the log durable now. Returns 0 or a negative code (message in
 * r->writer.message). */
int recorder_flush(recorder *r);

/* Closes the log with its trailer, flushes --output, and (unless
 * --no-check) replays the log and compares. Idempotent. Returns 0, or 1
 * when closing failed or the replay differs (said on stderr). */
int recorder_finish(recorder *r);

/* One status line on r->events (JSON with --json). */
void recorder_print_status(const recorder *r);

/* Releases everything; a log not finished is abandoned. */
void recorder_close(recorder *r);

/* ---- the dev protocol ---- */

typedef struct record_dev {
    recorder *recorder;
    cradle_transport transport;
    bool open, failed;
} record_dev;

/* Opens the transport (--dev-socket and/or --dev-stdin) and prints its
 * listening event on stdout. Returns 0 or 1 (said on stderr). */
int record_dev_open(record_dev *d, recorder *r);

/* Serves requests for up to timeout_ms. False once the transport stopped
 * (quit, end of stdin) or failed (d->failed). */
bool record_dev_poll(record_dev *d, int timeout_ms);

void record_dev_close(record_dev *d);

#endif
