/*
 * cradle-replay: replays a session log (log.h) headless through the game
 * library, as fast as the game allows. It checks every state hash recorded
 * in the log, switches builds where the log recorded a reload, writes the
 * game's output bytes on request and compares them with a golden file.
 *
 *   cradle-replay run.log                         check the hashes
 *   cradle-replay --golden tests/golden/a.golden run.log
 *   cradle-replay --bless  tests/golden/a.golden run.log
 *   cradle-replay --bless  tests/golden/corpus/a.digest --digest 250 run.log
 *   cradle-replay --output - --from 100 --to 199 run.log | xxd
 *   cradle-replay --verify-key HEX run.log        also check the log's signature
 *   cradle-replay --synctest [--every N] run.log  run every step twice, compare (replay/synctest.h)
 *   cradle-replay --desync REPORT [run.log]       a client's desync, field by field (replay/desync.h)
 *   cradle-replay --changes run.log               also list the reloads and data files applied
 *   cradle-replay --index run.log                 build the keyframe index (run.log.index)
 *   cradle-replay --from 90000 --to 90599 run.log seek to 90000 through the index, replay 600 steps
 *
 * The library defaults to the build archived beside the log
 * (<log>.builds/<hash>.so); --game names another. A library of another game
 * or build is refused (both ids in the message) unless --force.
 * A golden file is of one of two kinds, told apart by its first line: the
 * output's bytes (golden.h: a difference names the step and the byte) or
 * one digest per window of steps (golden_digest.h, replay/digest_golden.h:
 * a difference names the window and its steps).
 * Exit status: 0 success, 1 failure (damaged log, hash or golden mismatch,
 * refused library, a step whose two runs differ), 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cradle/cradle.h"
#include "cradle/help.h"
#include "replay/broadcast_fetch.h"
#include "replay/desync.h"
#include "replay/digest_golden.h"
#include "replay/second_run.h"
#include "replay/synctest.h"

#define SHOW_MAX 64u /* output bytes shown per side in a difference */

typedef struct options {
    const char *log, *game, *output, *golden, *bless;
    uint64_t from, to;
    uint64_t digest;               /* --digest W: --bless writes a digest golden file */
    bool force, json;
    bool changes;                  /* --changes: list reloads and data files with their steps */
    bool synctest;                 /* --synctest: every step run twice */
    const char *desync;            /* --desync REPORT: the LOG is optional */
    uint64_t every;                /* --every N: move the state every N steps */
    bool every_given;
    const char *verify_key;        /* hex Ed25519 public key, or NULL */
    uint8_t verify_public[32];
    bool index;                    /* --index: build the keyframe index and stop */
    const char *index_file;        /* --index-file: the index to build or use; NULL = LOG.index */
    uint64_t interval;             /* --interval: steps between keyframes; 0 = the default */
} options;

/* What the run found; printed as the summary. */
typedef struct verdict {
    uint64_t steps;               /* steps replayed */
    uint64_t hashes_checked;
    bool hash_mismatch;
    uint64_t hash_step, hash_log, hash_replay;
    bool trailer_checked, trailer_mismatch;
    bool signature_checked, signature_bad;
    uint64_t trailer_log, trailer_replay;
    bool golden_checked, golden_differs;
    bool golden_digest;            /* the golden file is of the digest kind (run.digest says where) */
    uint64_t golden_byte, golden_step;
    bool golden_past_end;          /* the output ended before the golden file */
    uint64_t reloads;
    uint64_t start_step;           /* the step the replay ran first (--from through the index) */
    const char *index;             /* with --from: how the index served ("loaded", "rebuilt", "absent") */
    const char *failure;           /* a fatal error's message, or NULL */
    char failure_text[512];
} verdict;

/* The one table of cradle-replay's options (help.h); long options only. */
static const cradle_option rows[] = {
    {"game", 'g', "LIB", "game library (default: the build archived in LOG.builds/)"},
    {"output", 'o', "FILE", "write the game's output bytes to FILE ('-' = stdout)"},
    {"golden", 'G', "FILE", "compare the output with the golden file FILE (exit 1 at the\n"
                            "first difference): the output's bytes, or one digest per\n"
                            "window of steps (a file --digest wrote; told by its first line)"},
    {"bless", 'B', "FILE", "write the output as the golden file FILE"},
    {"digest", 'W', "W", "with --bless: write a digest golden file instead, one\n"
                         "BLAKE2b-128 of the output per W steps (W 1..4294967295)"},
    {"from", 'f', "STEP", "first step whose output is written or compared (default 0);\n"
                          "with a keyframe index (--index) the replay seeks there\n"
                          "and runs only the steps from the keyframe before it"},
    {"to", 't', "STEP", "last step to replay (default: the end of the log)"},
    {"force", 'F', NULL, "use a library of another game or build than the log's"},
    {"json", 'j', NULL, "print the summary as one JSON object on stdout"},
    {"changes", 'L', NULL, "list on stderr what changed the session and before which\n"
                           "step: each build reload, refused build and game data file"},
    {"verify-key", 'K', "HEX", "check the log's signature against this Ed25519 public\n"
                               "key (cradle-keys pub server.key --sign); fails if unsigned;\n"
                               "for a broadcast URL, also every fragment's blocks"},
    {"synctest", 'S', NULL, "sync test: run every step a second time from the state\n"
                            "before it and compare the state block and the output bytes"},
    {"every", 'E', "N", "with --synctest: move the state block to another address\n"
                        "every N steps (default 100)"},
    {"desync", 'D', "REPORT", "a client's desync report against the server's state at\n"
                              "its step: from LOG when given, else the report re-run with\n"
                              "--game; prints the differing fields"},
    {"index", 'I', NULL, "build the log's keyframe index (LOG.index): its state every\n"
                         "--interval steps, for seeking (--from, --desync,\n"
                         "cradle-client --play); a damaged or stale one is rebuilt"},
    {"interval", 'N', "N", "with --index: steps between keyframes (default 1200)"},
    {"index-file", 'X', "FILE", "the keyframe index to build or use (default: LOG.index;\n"
                                "required to --index a broadcast URL)"},
    {"help", 'h', NULL, "show this help"},
    {"version", 'V', NULL, "show the version"},
};
#define ROWS (sizeof rows / sizeof rows[0])

static void usage(FILE *to) {
    fprintf(to, "usage: cradle-replay [options] LOG\n"
                "       cradle-replay --game LIB [options] URL\n"
                "Replays a session log headless, checks its state hashes and compares output.\n"
                "A URL (http:// or https://) is a broadcast (cradle-server --broadcast): its\n"
                "fragments are fetched and checked, and replayed as the session log they make.\n");
    cradle_options_help(to, rows, ROWS, sizeof rows[0], 18, 0);
    fprintf(to, "Exit status: 0 success, 1 failure, 2 usage.\n");
}

static double now_s(void) { return (double)cradle_mono_ns() / 1e9; }

static int fail(verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(verdict *v, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->failure_text, sizeof v->failure_text, fmt, ap);
    va_end(ap);
    v->failure = v->failure_text;
    return 1;
}

static int check_args(const options *o);

static int parse_args(int argc, char **argv, options *o) {
    struct option longs[ROWS + 1];
    cradle_options_getopt(rows, ROWS, sizeof rows[0], longs, NULL);
    *o = (options){.to = UINT64_MAX, .every = SYNCTEST_DEFAULT_EVERY};
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 'g': o->game = optarg; break;
        case 'o': o->output = optarg; break;
        case 'G': o->golden = optarg; break;
        case 'B': o->bless = optarg; break;
        case 'F': o->force = true; break;
        case 'L': o->changes = true; break;
        case 'j': o->json = true; break;
        case 'S': o->synctest = true; break;
        case 'D': o->desync = optarg; break;
        case 'I': o->index = true; break;
        case 'X': o->index_file = optarg; break;
        case 'N':
            if (!cradle_parse_u64(optarg, 1, CRADLE_REPLAY_INDEX_INTERVAL_MAX, &o->interval)) {
                fprintf(stderr, "cradle-replay: --interval '%s': expected steps between keyframes, 1..%u in decimal\n",
                        optarg, CRADLE_REPLAY_INDEX_INTERVAL_MAX);
                return 2;
            }
            break;
        case 'E':
            if (!cradle_parse_u64(optarg, 1, UINT64_MAX, &o->every)) {
                fprintf(stderr, "cradle-replay: --every '%s': expected a number of steps, 1..2^64-1 in decimal\n",
                        optarg);
                return 2;
            }
            o->every_given = true;
            break;
        case 'W':
            if (!cradle_parse_u64(optarg, 1, CRADLE_GOLDEN_DIGEST_WINDOW_MAX, &o->digest)) {
                fprintf(stderr, "cradle-replay: --digest '%s': expected steps per window, 1..%u in decimal\n",
                        optarg, CRADLE_GOLDEN_DIGEST_WINDOW_MAX);
                return 2;
            }
            break;
        case 'K':
            if (cradle_keys_from_hex(o->verify_public, optarg) != 0) {
                fprintf(stderr, "cradle-replay: --verify-key '%s': expected 64 hex digits (cradle-keys pub "
                                "server.key --sign)\n", optarg);
                return 2;
            }
            o->verify_key = optarg;
            break;
        case 'f':
        case 't':
            if (!cradle_parse_u64(optarg, 0, UINT64_MAX, c == 'f' ? &o->from : &o->to)) {
                fprintf(stderr, "cradle-replay: --%s '%s': expected a step number, 0..2^64-1 in decimal\n",
                        c == 'f' ? "from" : "to", optarg);
                return 2;
            }
            break;
        case 'h': usage(stdout); exit(0);
        case 'V': {
            char extra[32], version[CRADLE_VERSION_TEXT_MAX];
            snprintf(extra, sizeof extra, ", log format %u", (unsigned)CRADLE_LOG_FORMAT_VERSION);
            cradle_version_text(version, sizeof version, "cradle-replay", extra);
            printf("%s\n", version);
            exit(0);
        }
        default: usage(stderr); return 2;
        }
    }
    if (argc - optind != 1 && !(o->desync && argc == optind)) {
        fprintf(stderr, "cradle-replay: expected one LOG argument%s\n", o->desync ? " (or none, with --game)" : "");
        usage(stderr);
        return 2;
    }
    o->log = optind < argc ? argv[optind] : NULL;
    return check_args(o);
}

/* The options that exclude each other. Returns 0 or 2 (said on stderr). */
static int check_args(const options *o) {
    if (o->from > o->to) {
        fprintf(stderr, "cradle-replay: --from %" PRIu64 " is after --to %" PRIu64 "\n", o->from,
                o->to);
        return 2;
    }
    if (o->json && o->output && strcmp(o->output, "-") == 0) {
        fprintf(stderr, "cradle-replay: --json and --output - both use stdout\n");
        return 2;
    }
    if (o->golden && o->bless) {
        fprintf(stderr, "cradle-replay: --golden and --bless exclude each other\n");
        return 2;
    }
    if (o->digest && !o->bless) {
        fprintf(stderr, "cradle-replay: --digest is for --bless (a digest golden file given to --golden "
                        "names its own window)\n");
        return 2;
    }
    if (o->every_given && !o->synctest) {
        fprintf(stderr, "cradle-replay: --every is for --synctest\n");
        return 2;
    }
    if (o->desync && (o->synctest || o->output || o->golden || o->bless || o->from || o->verify_key)) {
        fprintf(stderr, "cradle-replay: --desync compares one step's states; it takes only LOG, --game, "
                        "--force and --json\n");
        return 2;
    }
    if (o->synctest && (o->output || o->golden || o->bless)) {
        fprintf(stderr, "cradle-replay: --synctest compares each step's two runs; it takes no --output, "
                        "--golden or --bless\n");
        return 2;
    }
    if (o->index && (o->synctest || o->output || o->golden || o->bless || o->from || o->to != UINT64_MAX ||
                     o->desync || o->changes)) {
        fprintf(stderr, "cradle-replay: --index builds the index of the whole log; it takes only LOG, --game, "
                        "--force, --interval, --index-file, --verify-key and --json\n");
        return 2;
    }
    if (o->interval && !o->index) {
        fprintf(stderr, "cradle-replay: --interval is for --index\n");
        return 2;
    }
    return 0;
}

static void print_hex(FILE *to, const char *label, const uint8_t *p, size_t n) {
    fprintf(to, "  %-8s %4zu bytes:", label, n);
    size_t shown = n < SHOW_MAX ? n : SHOW_MAX;
    for (size_t i = 0; i < shown; i++) fprintf(to, "%s%02x", i % 8 == 0 ? "  " : " ", p[i]);
    if (shown < n) fprintf(to, " ...");
    fputc('\n', to);
}

static void progress(uint64_t done_bytes, uint64_t total_bytes, uint64_t step) {
    const int width = 30;
    double f = total_bytes ? (double)done_bytes / (double)total_bytes : 1.0;
    if (f > 1.0) f = 1.0;
    int fill = (int)(f * width);
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = '\0';
    fprintf(stderr, "\r[%s] %3d%%  step %" PRIu64, bar, (int)(f * 100.0), step);
}

static char *read_whole(const char *path, size_t *size, verdict *v) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail(v, "cannot open golden file %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        fail(v, "golden file %s is not a regular file", path);
        return NULL;
    }
    size_t n = (size_t)st.st_size;
    char *data = malloc(n ? n : 1);
    if (!data || fread(data, 1, n, f) != n) {
        free(data);
        fclose(f);
        fail(v, "cannot read golden file %s", path);
        return NULL;
    }
    fclose(f);
    *size = n;
    return data;
}

/* One run of the tool: the options, the replay driver, the outputs and
 * what was found. Static: the driver is large. */
typedef struct run {
    options o;
    second_run second;            /* --synctest: the same replay in a second process */
    bool second_open;
    verdict v;
    cradle_replay replay;
    bool replay_open;
    char *golden;                 /* --golden's bytes */
    size_t golden_size, golden_pos;
    FILE *out;                    /* --output */
    FILE *bless;                  /* --bless, written to bless_tmp then renamed */
    char bless_tmp[4096];
    uint64_t output_total;        /* output bytes of the steps replayed */
    cradle_replay_index index;    /* --from: the keyframe index the driver seeks through */
    /* the output bytes of the step where the golden comparison failed */
    uint8_t diff_ours[CRADLE_GAME_OUTPUT_MAX];
    size_t diff_ours_len, diff_step_start;
    digest_golden digest;         /* --golden of the digest kind, --bless --digest */
    bool digesting;
    bool tty, stopped_early;
    double t0, t1;
    synctest sync;                /* --synctest */
} run;

static run the_run;

static void warn(void *context, const char *message) {
    (void)context;
    fprintf(stderr, "cradle-replay: warning: %s\n", message);
}

/* Reads --golden: the output's bytes, or a digest golden file parsed (and
 * its bytes let go). */
static int open_golden(run *r) {
    const options *o = &r->o;
    r->golden = read_whole(o->golden, &r->golden_size, &r->v);
    if (!r->golden) return 1;
    r->v.golden_checked = true;
    if (!cradle_golden_digest_is(r->golden, r->golden_size)) return 0;
    char why[512];
    int rc = digest_golden_check(&r->digest, (const uint8_t *)r->golden, r->golden_size,
                                 r->replay.sim.contract->name, o->from, why, sizeof why);
    free(r->golden);
    r->golden = NULL;
    r->golden_size = 0;
    r->digesting = true;
    r->v.golden_digest = true;
    return rc == 0 ? 0 : fail(&r->v, "golden file %s: %s", o->golden, why);
}

/* Opens the golden file, --output and --bless's temporary file. */
static int open_outputs(run *r) {
    const options *o = &r->o;
    if (o->golden && open_golden(r) != 0) return 1;
    if (o->output) {
        r->out = strcmp(o->output, "-") == 0 ? stdout : fopen(o->output, "wb");
        if (!r->out) return fail(&r->v, "cannot create %s: %s", o->output, strerror(errno));
    }
    if (o->bless) {
        snprintf(r->bless_tmp, sizeof r->bless_tmp, "%s.tmp-%ld", o->bless, (long)getpid());
        r->bless = fopen(r->bless_tmp, "wb");
        if (!r->bless) {
            fail(&r->v, "cannot create %s: %s", r->bless_tmp, strerror(errno));
            r->bless_tmp[0] = '\0';
            return 1;
        }
        if (o->digest) {
            digest_golden_bless(&r->digest, o->digest, o->from);
            r->digesting = true;
        }
    }
    return 0;
}

/* A step's output bytes: written, blessed and compared with the golden file. */
static int take_output(run *r, const cradle_replay_item *item) {
    const uint8_t *bytes = item->output;
    size_t n = item->output_size;
    if (r->out && fwrite(bytes, 1, n, r->out) != n) return fail(&r->v, "cannot write %s", r->o.output);
    if (r->bless && !r->digesting && fwrite(bytes, 1, n, r->bless) != n)
        return fail(&r->v, "cannot write %s", r->bless_tmp);
    if (r->digesting && digest_golden_take(&r->digest, item->step, bytes, n) != 0)
        return fail(&r->v, "out of memory for the output's digests");
    if (r->golden && !r->v.golden_differs) {
        size_t left = r->golden_size - r->golden_pos;
        cradle_golden_result g =
            cradle_golden_compare(r->golden + r->golden_pos, left < n ? left : n, bytes, n);
        if (!g.equal) {
            r->v.golden_differs = true;
            r->v.golden_byte = r->golden_pos + g.first_difference;
            r->v.golden_step = item->step;
            r->diff_step_start = r->golden_pos;
            r->diff_ours_len = n;
            memcpy(r->diff_ours, bytes, n);
        }
        r->golden_pos += n < left ? n : left;
    }
    r->output_total += n;
    return 0;
}

/* Replays the log through the driver up to --to. */
static void replay_all(run *r) {
    verdict *v = &r->v;
    cradle_replay *p = &r->replay;
    double last_draw = 0;
    cradle_replay_item item;
    int rc;
    r->t0 = now_s();
    for (;;) {
        if ((rc = cradle_replay_next(p, &item)) != 1) break;
        int sync = r->o.synctest ? synctest_take(&r->sync, p, &item) : 0;
        if (sync < 0) fail(v, "%s", p->message);
        if (sync != 0) break;
        if (item.kind == CRADLE_REPLAY_STEP) {
            if (item.output && take_output(r, &item) != 0) break;
            if (r->second_open && item.output && second_run_compare(&r->second, item.step, item.output,
                                                                    item.output_size) != 0)
                break;
            if (r->tty && (p->steps & 4095) == 0 && now_s() - last_draw > 0.1) {
                progress(cradle_replay_position(p), p->reader.size, item.step);
                last_draw = now_s();
            }
        } else if (item.kind == CRADLE_REPLAY_HASH && !item.matches && !v->hash_mismatch) {
            v->hash_mismatch = true;
            v->hash_step = item.step;
            v->hash_log = item.logged_hash;
            v->hash_replay = item.replayed_hash;
        } else if (item.kind == CRADLE_REPLAY_RELOAD && r->o.changes) {
            fprintf(stderr, "cradle-replay: build %s takes over before step %" PRIu64 "\n", item.build_id, item.step);
        } else if (item.kind == CRADLE_REPLAY_DATA && r->o.changes) {
            char hex[2 * CRADLE_DATA_HASH_BYTES + 1];
            cradle_data_hash_hex(hex, item.record->file_hash);
            fprintf(stderr, "cradle-replay: data %s (%" PRIu32 " bytes, %s) applied before step %" PRIu64 "\n",
                    item.data_name, item.data_size, hex, item.step);
        } else if (item.kind == CRADLE_REPLAY_REFUSED) { /* the session went on with the build in charge */
            fprintf(stderr, "cradle-replay: a new build was refused before step %" PRIu64 ": %s\n", item.step,
                    item.record->reason);
        } else if (item.kind == CRADLE_REPLAY_TRAILER) {
            v->trailer_checked = true;
            v->trailer_log = item.logged_hash;
            v->trailer_replay = item.replayed_hash;
            v->trailer_mismatch = !item.matches;
            if (r->o.verify_key) {
                v->signature_checked = true;
                v->signature_bad = cradle_log_verify_signature(item.record, r->o.verify_public) != 0;
            }
        }
    }
    if (rc < 0) fail(v, "%s", p->message);
    r->stopped_early = p->stopped;
    r->t1 = now_s();
    if (r->tty) fprintf(stderr, "\r%60s\r", "");
    v->steps = p->steps;
    v->hashes_checked = p->hashes_checked;
    v->reloads = p->reloads;
    if (r->digesting && !v->failure) {
        if (digest_golden_finish(&r->digest) != 0) fail(v, "out of memory for the output's digests");
        else if (r->digest.checking && r->digest.why != DIGEST_SAME) v->golden_differs = true;
    }
    if (r->golden && !v->golden_differs && !v->failure && r->golden_pos < r->golden_size) {
        v->golden_differs = true;
        v->golden_past_end = true;
        v->golden_byte = r->output_total;
        v->golden_step = p->sim.next_step;
        r->diff_step_start = r->golden_pos;
        r->diff_ours_len = 0;
    }
}

/* --bless --digest: the digest golden file's text into the temporary file. */
static void write_digests(run *r) {
    size_t n = 0;
    char *text = digest_golden_text(&r->digest, r->replay.sim.contract->name, &n);
    if (!text) fail(&r->v, "out of memory for the digest golden file");
    else if (fwrite(text, 1, n, r->bless) != n) fail(&r->v, "cannot write %s", r->bless_tmp);
    free(text);
}

/* Renames the blessed output into place when everything matched. */
static void finish_bless(run *r) {
    verdict *v = &r->v;
    if (!r->bless) return;
    if (r->digesting && !v->failure) write_digests(r);
    bool ok = fclose(r->bless) == 0;
    r->bless = NULL;
    if (!ok && !v->failure) fail(v, "cannot write %s", r->bless_tmp);
    if (!v->failure && (v->hash_mismatch || v->trailer_mismatch))
        fail(v, "not blessing %s: the replay does not match the log's hashes", r->o.bless);
    if (!v->failure) {
        if (rename(r->bless_tmp, r->o.bless) != 0) {
            fail(v, "cannot write %s: %s", r->o.bless, strerror(errno));
        } else {
            r->bless_tmp[0] = '\0';
            uint64_t steps = v->steps > r->o.from ? v->steps - r->o.from : 0; /* steps 0..v->steps-1 ran */
            if (r->digesting)
                fprintf(stderr, "cradle-replay: wrote the digest golden file %s: %" PRIu64 " windows of %" PRIu64
                        " steps, the output of %" PRIu64 " steps (%" PRIu64 " bytes) from step %" PRIu64 "\n",
                        r->o.bless, r->digest.digester.windows, r->o.digest, steps, r->output_total, r->o.from);
            else
                fprintf(stderr, "cradle-replay: wrote the golden file %s: %" PRIu64 " bytes, the output of %" PRIu64
                        " steps from step %" PRIu64 "\n", r->o.bless, r->output_total, steps, r->o.from);
        }
    }
}

/* How the log ended, as far as the replay read it. */
static cradle_log_end log_end(const run *r) {
    if (!r->replay_open || r->stopped_early || r->v.failure || r->sync.failed) return CRADLE_LOG_END_NONE;
    return r->replay.reader.end;
}

/* The log's end for --json's log_end (stable values scripts compare). */
static const char *end_name(cradle_log_end end) {
    return end == CRADLE_LOG_END_CLOSED     ? "closed"
           : end == CRADLE_LOG_END_UNCLOSED ? "unclosed"
           : end == CRADLE_LOG_END_TORN     ? "torn"
                                            : "not reached";
}

/* The same for the summary line, for people: "not reached" read as an
 * error where --to stopped the replay on purpose. */
static const char *end_words(const run *r, cradle_log_end end) {
    if (end != CRADLE_LOG_END_NONE) return end == CRADLE_LOG_END_CLOSED     ? "log closed"
                                           : end == CRADLE_LOG_END_UNCLOSED ? "log not closed"
                                                                            : "log torn";
    if (r->stopped_early) return "stopped at --to, before the log's end";
    if (r->sync.failed) return "stopped at the step whose two runs differ";
    return "stopped before the log's end";
}

static void print_golden_difference(const run *r) {
    const verdict *v = &r->v;
    if (v->golden_past_end)
        fprintf(stderr, "cradle-replay: first difference at byte %" PRIu64
                " (step %" PRIu64 "): the output ends, the golden file has %zu more bytes\n",
                v->golden_byte, v->golden_step, r->golden_size - r->golden_pos);
    else
        fprintf(stderr, "cradle-replay: first difference at byte %" PRIu64 " (step %" PRIu64 ")\n",
                v->golden_byte, v->golden_step);
    size_t gl = r->golden_size > r->diff_step_start ? r->golden_size - r->diff_step_start : 0;
    size_t span = r->diff_ours_len ? r->diff_ours_len : gl;
    fprintf(stderr, "  output of step %" PRIu64 " from byte %zu:\n", v->golden_step, r->diff_step_start);
    print_hex(stderr, "golden", (const uint8_t *)r->golden + r->diff_step_start, gl < span ? gl : span);
    print_hex(stderr, "replay", r->diff_ours, r->diff_ours_len);
}

/* A count as a JSON integer (counts here stay far below 2^63). */
static void put_count(json_t *j, const char *key, uint64_t value) {
    json_object_set_new(j, key, json_integer((json_int_t)value));
}

/* A time or a rate as a JSON number: 15 significant digits (a real, or 0
 * when it is not finite: JSON has no infinity). */
static void put_real(json_t *j, const char *key, double value) {
    json_t *number = json_real(value);
    json_object_set_new(j, key, number ? number : json_integer(0));
}

/* Text as a JSON string; bytes that are not UTF-8 (a path may hold any)
 * become '?', since JSON text is UTF-8. */
static void put_text(json_t *j, const char *key, const char *text) {
    json_t *string = json_string(text);
    if (!string) {
        char *copy = strdup(text);
        if (!copy) return;
        for (char *c = copy; *c; c++)
            if ((unsigned char)*c >= 0x80) *c = '?';
        string = json_string(copy);
        free(copy);
    }
    json_object_set_new(j, key, string);
}

/* --synctest's keys: whether every step's two runs agreed, the steps re-run
 * and the moves; at a difference its step, what differed ("state" or
 * "output"), its first byte and its name (by the game's layout), both runs'
 * values there (-1: none) and whether the re-run followed a move. */
static void put_synctest(json_t *j, const synctest *t) {
    json_object_set_new(j, "sync_equal", json_boolean(!t->failed));
    put_count(j, "steps_rerun", t->reruns);
    put_count(j, "moves", t->moves);
    if (!t->failed) return;
    const synctest_failure *f = &t->failure;
    put_count(j, "sync_difference_step", f->step);
    json_object_set_new(j, "sync_difference", json_string(f->state ? "state" : "output"));
    put_count(j, "sync_first_difference", f->offset);
    put_text(j, "sync_difference_name", f->name);
    json_object_set_new(j, "sync_first_run_byte", json_integer(f->first_shown ? f->first[0] : -1));
    json_object_set_new(j, "sync_rerun_byte", json_integer(f->rerun_shown ? f->rerun[0] : -1));
    json_object_set_new(j, "sync_moved", json_boolean(f->moved));
}

/* A digest golden file's first difference: what differs ("digest", "ends":
 * the output ends early, "goes_on": it goes on past the file's steps,
 * "bytes"), the window and its steps, and the step where one is known. */
static void put_digest_difference(json_t *j, const digest_golden *g) {
    static const char *const names[] = {
        [DIGEST_DIFFERS] = "digest", [DIGEST_ENDS_EARLY] = "ends", [DIGEST_GOES_ON] = "goes_on",
        [DIGEST_BYTES] = "bytes"};
    json_object_set_new(j, "difference", json_string(names[g->why]));
    if (g->why == DIGEST_BYTES) return;
    put_count(j, "difference_window", g->window);
    put_count(j, "difference_first_step", g->first);
    put_count(j, "difference_last_step", g->last);
    if (g->why != DIGEST_DIFFERS) put_count(j, "difference_step", g->step);
}

static void print_json(const run *r, bool ok, double seconds, double rate) {
    const verdict *v = &r->v;
    cradle_log_end end = log_end(r);
    json_t *j = json_object();
    if (!j) return;
    put_text(j, "log", r->o.log);
    json_object_set_new(j, "verdict", json_string(ok ? "ok" : "failed"));
    put_count(j, "steps", v->steps);
    if (r->o.from) {
        put_count(j, "start_step", v->start_step);
        put_text(j, "index", v->index);
    }
    put_real(j, "seconds", seconds);
    put_real(j, "steps_per_second", rate);
    put_count(j, "hashes_checked", v->hashes_checked);
    put_count(j, "reloads", v->reloads);
    put_count(j, "refusals", r->replay.refusals); /* REFUSED records: builds the session turned away */
    put_count(j, "data_applied", r->replay.data_applied); /* DATA records: game data files applied */
    json_object_set_new(j, "log_end", json_string(end_name(end)));
    if (r->replay_open && r->replay.sim.state) {
        /* the state where the replay stopped, as status and the browser's viewer show it */
        char hash[17];
        snprintf(hash, sizeof hash, "%016" PRIx64, cradle_sim_hash(&r->replay.sim));
        json_object_set_new(j, "state_hash", json_string(hash));
        put_count(j, "next_step", r->replay.sim.next_step);
    }
    if (end == CRADLE_LOG_END_TORN) put_count(j, "tail_offset", r->replay.reader.tail_offset);
    if (v->hash_mismatch) put_count(j, "hash_mismatch_step", v->hash_step);
    if (v->trailer_checked) json_object_set_new(j, "final_hash_equal", json_boolean(!v->trailer_mismatch));
    if (v->signature_checked) json_object_set_new(j, "signature_valid", json_boolean(!v->signature_bad));
    if (v->golden_checked) {
        json_object_set_new(j, "golden_kind", json_string(v->golden_digest ? "digest" : "full"));
        json_object_set_new(j, "golden_equal", json_boolean(!v->golden_differs));
        if (v->golden_differs && v->golden_digest) put_digest_difference(j, &r->digest);
        else if (v->golden_differs) {
            put_count(j, "first_difference", v->golden_byte);
            put_count(j, "difference_step", v->golden_step);
        }
    }
    if (r->o.synctest) put_synctest(j, &r->sync);
    if (v->failure) put_text(j, "error", v->failure);
    /* One line, the keys in the order set. */
    char *text = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(15));
    if (text) printf("%s\n", text);
    free(text);
    json_decref(j);
}

/* Prints the summary (stderr, and JSON on stdout with --json). Returns
 * whether the run passed. */
static bool report(run *r) {
    verdict *v = &r->v;
    if (r->o.verify_key && !v->failure && !v->signature_checked)
        fail(v, "the replay did not reach the log's trailer, so its signature was not checked");
    bool ok = !v->failure && !v->hash_mismatch && !v->trailer_mismatch && !v->golden_differs && !v->signature_bad &&
              !r->sync.failed;
    double seconds = r->t1 - r->t0;
    double rate = seconds > 0 ? (double)v->steps / seconds : 0.0;
    cradle_log_end end = log_end(r);
    if (end == CRADLE_LOG_END_TORN || end == CRADLE_LOG_END_UNCLOSED)
        fprintf(stderr, "cradle-replay: %s\n", r->replay.reader.message);
    if (v->failure) fprintf(stderr, "cradle-replay: %s\n", v->failure);
    if (v->hash_mismatch)
        fprintf(stderr, "cradle-replay: state hash differs first at step %" PRIu64 ": log %016" PRIx64
                ", replay %016" PRIx64 "\n", v->hash_step, v->hash_log, v->hash_replay);
    if (v->trailer_mismatch)
        fprintf(stderr, "cradle-replay: final state hash differs: log %016" PRIx64 ", replay %016" PRIx64 "\n",
                v->trailer_log, v->trailer_replay);
    if (v->signature_bad)
        fprintf(stderr, "cradle-replay: log signature is missing or invalid for key %s: the "
                "log was altered after signing, signed by another key, or never signed\n", r->o.verify_key);
    else if (v->signature_checked)
        fprintf(stderr, "cradle-replay: log signature valid\n");
    if (v->golden_differs && v->golden_digest) digest_golden_print(&r->digest, stderr, r->o.log);
    else if (v->golden_differs) print_golden_difference(r);
    synctest_print_failure(&r->sync, stderr, "cradle-replay");
    char sync[128] = "";
    if (r->o.synctest && r->sync.failed)
        snprintf(sync, sizeof sync, ", sync test failed at step %" PRIu64, r->sync.failure.step);
    else if (r->o.synctest)
        snprintf(sync, sizeof sync, ", sync test %s: %" PRIu64 " steps re-run, %" PRIu64 " moves",
                 v->failure ? "stopped" : "passed", r->sync.reruns, r->sync.moves);
    fprintf(stderr, "cradle-replay: %" PRIu64 " steps in %.3f s (%.0f steps/s), %" PRIu64
            " hashes checked, %s%s: %s\n", v->steps, seconds, rate, v->hashes_checked, end_words(r, end), sync,
            ok ? "OK" : "FAILED");
    if (r->o.json) print_json(r, ok, seconds, rate);
    return ok;
}

static void warn_index(void *context, const char *message) {
    (void)context;
    fprintf(stderr, "cradle-replay: warning: %s\n", message);
}

static void index_progress(void *context, uint64_t done, uint64_t total, uint64_t step) {
    if (*(const bool *)context) progress(done, total, step);
}

/* --index: the keyframe index of the whole log, built and written. For a
 * broadcast URL the log is the fetched copy: the index goes where
 * --index-file says (it fits the server's log too, byte for byte the
 * same). Returns whether it was written. */
static bool build_index(run *r, bool from_url) {
    if (from_url && !r->o.index_file) {
        fprintf(stderr, "cradle-replay: --index of a broadcast URL needs --index-file FILE (the fetched log is "
                        "not kept)\n");
        return false;
    }
    bool tty = isatty(STDERR_FILENO) && !r->o.json;
    cradle_replay_index_built built;
    char message[1024];
    double t0 = now_s();
    int rc = cradle_replay_index_create(&(cradle_replay_index_build){.log_path = r->o.log,
                                                                     .game_path = r->o.game,
                                                                     .index_path = r->o.index_file,
                                                                     .interval = (uint32_t)r->o.interval,
                                                                     .force = r->o.force,
                                                                     .reload_game_path = from_url,
                                                                     .progress = index_progress,
                                                                     .progress_context = &tty,
                                                                     .warn = warn_index},
                                        &built, message, sizeof message);
    double seconds = now_s() - t0;
    if (tty) fprintf(stderr, "\r%60s\r", "");
    char path[CRADLE_LOG_PATH_MAX];
    if (r->o.index_file) snprintf(path, sizeof path, "%s", r->o.index_file);
    else if (cradle_replay_index_path(path, sizeof path, r->o.log) != 0) snprintf(path, sizeof path, "?");
    if (rc != 0) {
        fprintf(stderr, "cradle-replay: --index: %s\n", message);
        if (r->o.json) {
            json_t *j = json_pack("{s:s, s:s, s:s}", "log", r->o.log, "verdict", "failed", "error", message);
            char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
            if (text) printf("%s\n", text);
            free(text);
            json_decref(j);
        }
        return false;
    }
    double share = built.log_bytes ? 100.0 * (double)built.index_bytes / (double)built.log_bytes : 0.0;
    fprintf(stderr, "cradle-replay: indexed %" PRIu64 " steps in %.3f s: %" PRIu64 " keyframes, %" PRIu64
                    " bytes (%.0f%% of the log's %" PRIu64 ") in %s\n",
            built.steps, seconds, built.keyframes, built.index_bytes, share, built.log_bytes, path);
    if (r->o.json) {
        json_t *j = json_object();
        if (!j) return true;
        put_text(j, "log", r->o.log);
        json_object_set_new(j, "verdict", json_string("ok"));
        put_text(j, "index", path);
        put_count(j, "steps", built.steps);
        put_count(j, "keyframes", built.keyframes);
        put_count(j, "interval", r->o.interval ? r->o.interval : CRADLE_REPLAY_INDEX_INTERVAL_DEFAULT);
        put_count(j, "index_bytes", built.index_bytes);
        put_count(j, "log_bytes", built.log_bytes);
        put_real(j, "seconds", seconds);
        char *text = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(15));
        if (text) printf("%s\n", text);
        free(text);
        json_decref(j);
    }
    return true;
}

/* --from: through the log's keyframe index (LOG.index, or --index-file),
 * the replay starts at the keyframe before --from instead of step 0; a
 * damaged or stale index is built again first; without one the replay runs
 * from step 0 as always. Returns 0, or 1 with the failure in the verdict. */
static int seek_from(run *r) {
    char why[1024];
    int outcome = cradle_replay_attach_index(&r->replay, &r->index, r->o.index_file, CRADLE_REPLAY_INDEX_REBUILD, why,
                                             sizeof why);
    if (outcome < 0) return fail(&r->v, "keyframe index: %s", why);
    r->v.index = cradle_replay_index_outcome_name((cradle_replay_index_outcome)outcome);
    if (outcome == CRADLE_REPLAY_INDEX_REBUILT)
        fprintf(stderr, "cradle-replay: keyframe index: %s\n", why);
    if (outcome == CRADLE_REPLAY_INDEX_ABSENT) {
        fprintf(stderr, "cradle-replay: no keyframe index%s%s: replaying from step 0 (cradle-replay --index "
                        "makes one)\n", why[0] ? ": " : "", why);
        return 0;
    }
    const cradle_replay_keyframe *k = cradle_replay_index_find(&r->index, r->o.from);
    if (!k) return 0; /* --from is before the first keyframe: from step 0 */
    if (cradle_replay_seek(&r->replay, k->key.step + 1u) != 0) return fail(&r->v, "%s", r->replay.message);
    r->v.start_step = k->key.step + 1u;
    fprintf(stderr, "cradle-replay: from the keyframe after step %" PRIu64 " (%" PRIu64 " steps before --from)\n",
                k->key.step, r->o.from - r->v.start_step);
    return 0;
}

static void cleanup(run *r) {
    if (r->bless) fclose(r->bless);
    if (r->bless_tmp[0]) unlink(r->bless_tmp);
    if (r->out && r->out != stdout) fclose(r->out);
    free(r->golden);
    digest_golden_close(&r->digest);
    cradle_replay_close(&r->replay);
    synctest_close(&r->sync); /* after the driver: the state may be in its block */
}

int main(int argc, char **argv) {
    run *r = &the_run;
    int rc = parse_args(argc, argv, &r->o);
    if (rc) return rc;
    if (r->o.desync) {
        desync_options d = {.report = r->o.desync, .log = r->o.log, .game = r->o.game, .force = r->o.force,
                            .json = r->o.json};
        return replay_desync(&d);
    }
    r->tty = isatty(STDERR_FILENO) && !r->o.json;
    static broadcast_fetch fetched;
    bool from_url = strncmp(r->o.log, "http://", 7) == 0 || strncmp(r->o.log, "https://", 8) == 0;
    if (from_url) {
        char why[512];
        if (!r->o.game) {
            fprintf(stderr, "cradle-replay: %s: a broadcast carries no build: pass --game LIB\n", r->o.log);
            return 2;
        }
        if (broadcast_fetch_run(&fetched, r->o.log, r->o.verify_key ? r->o.verify_public : NULL, why, sizeof why) != 0) {
            fprintf(stderr, "cradle-replay: %s: %s\n", r->o.log, why);
            broadcast_fetch_clean(&fetched);
            return 1;
        }
        if (!r->o.json)
            fprintf(stderr, "cradle-replay: fetched %llu fragments (%llu bytes) from %s%s\n", fetched.fragments,
                    fetched.bytes, r->o.log, fetched.ended ? "" : " (still live: up to now)");
        r->o.log = fetched.log;
    }
    if (r->o.index) {
        bool ok = build_index(r, from_url);
        broadcast_fetch_clean(&fetched);
        return ok ? 0 : 1;
    }
    cradle_replay_config config = {.log_path = r->o.log,
                                   .reload_game_path = from_url,
                                   .game_path = r->o.game,
                                   .force = r->o.force,
                                   .output = r->o.output || r->o.golden || r->o.bless || r->o.synctest,
                                   .output_from = r->o.from,
                                   .stop_at = r->o.to == UINT64_MAX ? 0 : r->o.to + 1,
                                   .warn = warn};
    if (cradle_replay_open(&r->replay, &config) != 0) {
        fail(&r->v, "%s", r->replay.message);
    } else {
        r->replay_open = true;
        if (r->o.from && seek_from(r) != 0)
            ; /* said in the verdict */
        else if (r->o.synctest && synctest_open(&r->sync, &r->replay, r->o.every) != 0) /* where the seek left it */
            fail(&r->v, "out of memory for the sync test's %" PRIu32 "-byte state blocks", r->replay.capacity);
        else if (r->o.synctest && second_run_open(&r->second, r->o.log, r->o.game, r->o.force, r->o.from, r->o.to) != 0)
            fail(&r->v, "cannot start the sync test's second process");
        else if (open_outputs(r) == 0) {
            r->second_open = r->o.synctest;
            replay_all(r);
            if (r->second_open) {
                char why[256];
                bool stopped = r->sync.failed || r->v.failure || r->replay.stopped;
                if (second_run_close(&r->second, stopped, why, sizeof why) != 0 && !r->v.failure) fail(&r->v, "%s", why);
            }
            finish_bless(r);
            if (r->out && fflush(r->out) != 0 && !r->v.failure) fail(&r->v, "cannot write %s", r->o.output);
        }
    }
    bool ok = report(r);
    cleanup(r);
    cradle_replay_index_free(&r->index);
    broadcast_fetch_clean(&fetched);
    return ok ? 0 : 1;
}
