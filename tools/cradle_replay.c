/*
 * cradle-replay: replays a session log (log.h) headless through the game
 * library, as fast as the game allows. It checks every state hash recorded
 * in the log, switches builds where the log recorded a reload, writes the
 * game's output bytes on request and compares them with a golden file.
 *
 *   cradle-replay run.log                         check the hashes
 *   cradle-replay --golden tests/golden/a.golden run.log
 *   cradle-replay --bless  tests/golden/a.golden run.log
 *   cradle-replay --output - --from 100 --to 199 run.log | xxd
 *   cradle-replay --verify-key HEX run.log        also check the log's signature
 *
 * The library defaults to the build archived beside the log
 * (<log>.builds/<hash>.so); --game names another. A library of another game
 * or build is refused (both ids in the message) unless --force.
 * Exit status: 0 success, 1 failure (damaged log, hash or golden mismatch,
 * refused library), 2 usage.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cradle/cradle.h"

#define STATE_MIN_CAPACITY 65536u
#define STATE_ALIGN CRADLE_RELOAD_DEFAULT_MAX_ALIGN
#define SHOW_MAX 64u /* output bytes shown per side in a difference */

typedef struct options {
    const char *log, *game, *output, *golden, *bless;
    uint64_t from, to;
    bool force, json;
    const char *verify_key;        /* hex Ed25519 public key, or NULL */
    uint8_t verify_public[32];
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
    uint64_t golden_byte, golden_step;
    bool golden_past_end;          /* the output ended before the golden file */
    uint64_t reloads;
    const char *failure;           /* a fatal error's message, or NULL */
    char failure_text[512];
} verdict;

static cradle_reload libraries[2];

static void usage(FILE *to) {
    fprintf(to,
            "usage: cradle-replay [options] LOG\n"
            "Replays a session log headless, checks its state hashes and compares output.\n"
            "  --game LIB      game library (default: the build archived in LOG.builds/)\n"
            "  --output FILE   write the game's output bytes to FILE ('-' = stdout)\n"
            "  --golden FILE   compare the output with FILE (exit 1 at the first difference)\n"
            "  --bless FILE    write the output as the golden file FILE\n"
            "  --from STEP     first step whose output is written or compared (default 0)\n"
            "  --to STEP       last step to replay (default: the end of the log)\n"
            "  --force         use a library of another game or build than the log's\n"
            "  --json          print the summary as one JSON object on stdout\n"
            "  --verify-key HEX  check the log's signature against this Ed25519 public\n"
            "                  key (cradle-keys pub server.key --sign); fails if unsigned\n"
            "  --help, --version\n"
            "Exit status: 0 success, 1 failure, 2 usage.\n");
}

static double now_s(void) { return (double)cradle_mono_ns() / 1e9; }

static bool discard_event(void *context, const cradle_event *event) {
    (void)context;
    (void)event;
    return true;
}

static int fail(verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(verdict *v, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->failure_text, sizeof v->failure_text, fmt, ap);
    va_end(ap);
    v->failure = v->failure_text;
    return 1;
}

static int parse_args(int argc, char **argv, options *o) {
    static const struct option longs[] = {
        {"game", required_argument, NULL, 'g'},   {"output", required_argument, NULL, 'o'},
        {"golden", required_argument, NULL, 'G'}, {"bless", required_argument, NULL, 'B'},
        {"from", required_argument, NULL, 'f'},   {"to", required_argument, NULL, 't'},
        {"force", no_argument, NULL, 'F'},        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},         {"version", no_argument, NULL, 'V'},
        {"verify-key", required_argument, NULL, 'K'},
        {NULL, 0, NULL, 0},
    };
    *o = (options){.to = UINT64_MAX};
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 'g': o->game = optarg; break;
        case 'o': o->output = optarg; break;
        case 'G': o->golden = optarg; break;
        case 'B': o->bless = optarg; break;
        case 'F': o->force = true; break;
        case 'j': o->json = true; break;
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
    if (argc - optind != 1) {
        fprintf(stderr, "cradle-replay: expected one LOG argument\n");
        usage(stderr);
        return 2;
    }
    o->log = argv[optind];
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
    return 0;
}

static bool file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool all_zero(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

/* Loads path into *lib and checks it against the log (build_id is the build
 * the log expects at this point). */
static int load_library(cradle_reload *lib, const char *path, uint32_t capacity,
                        const cradle_log_header *h, const char *build_id, bool force,
                        verdict *v) {
    const char *tmp = getenv("TMPDIR");
    cradle_reload_config cfg = {.path = path,
                                .copy_dir = tmp && *tmp ? tmp : "/tmp",
                                .state_capacity = capacity};
    char msg[CRADLE_LOG_MESSAGE_MAX + 256];
    if (cradle_reload_open(lib, &cfg, cradle_mono_ns(), msg, sizeof msg) != 0)
        return fail(v, "cannot load %s: %s", path, msg);
    int rc = cradle_log_check_library(h, build_id, cradle_reload_contract(lib), msg, sizeof msg);
    if (rc != 0) {
        if (!force) {
            cradle_reload_close(lib);
            return fail(v, "%s: %s (--force replays anyway)", path, msg);
        }
        fprintf(stderr, "cradle-replay: warning: %s: %s; replaying anyway (--force)\n", path, msg);
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

int main(int argc, char **argv) {
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc;

    verdict v = {0};
    cradle_log_reader reader;
    bool reader_open = false;
    cradle_reload *lib = &libraries[0], *spare = &libraries[1];
    uint8_t *state = NULL;
    char *golden = NULL;
    size_t golden_size = 0, golden_pos = 0;
    FILE *out = NULL;
    char bless_tmp[4096] = "";
    bool tty = isatty(STDERR_FILENO) && !o.json;
    double t0 = now_s(), t1 = t0;
    char msg[CRADLE_LOG_MESSAGE_MAX];
    /* the output bytes of the step where the golden comparison failed */
    uint8_t diff_ours[CRADLE_GAME_OUTPUT_MAX];
    size_t diff_ours_len = 0, diff_step_start = 0;
    cradle_log_end end = CRADLE_LOG_END_NONE;
    char end_message[CRADLE_LOG_MESSAGE_MAX] = "";
    uint64_t tail_offset = 0;

    if (cradle_log_reader_open(&reader, o.log, msg, sizeof msg) != 0) {
        fail(&v, "%s", msg);
        goto report;
    }
    reader_open = true;
    const cradle_log_header *h = &reader.header;

    char path[CRADLE_LOG_PATH_MAX + 128];
    const char *lib_path = o.game;
    if (!lib_path) {
        if (all_zero(h->build_file_hash, sizeof h->build_file_hash) ||
            cradle_log_build_path(path, sizeof path, o.log, h->build_file_hash) != 0 ||
            !file_exists(path)) {
            fail(&v, "the log's build '%s' is not archived beside it (%s.builds/); pass --game LIB",
                 h->build_id, o.log);
            goto report;
        }
        lib_path = path;
    }
    uint32_t capacity = h->state_size > STATE_MIN_CAPACITY ? h->state_size : STATE_MIN_CAPACITY;
    capacity = (capacity + STATE_ALIGN - 1) / STATE_ALIGN * STATE_ALIGN;
    if (load_library(lib, lib_path, capacity, h, h->build_id, o.force, &v) != 0) goto report;
    const cradle_game_contract *c = cradle_reload_contract(lib);
    char current_build[CRADLE_GAME_BUILD_ID_MAX + 1];
    snprintf(current_build, sizeof current_build, "%s", h->build_id);

    state = aligned_alloc(STATE_ALIGN, capacity);
    if (!state) {
        fail(&v, "out of memory for a %" PRIu32 "-byte state", capacity);
        goto report;
    }
    memset(state, 0, capacity);
    if (c->init(state, h->seed, h->player_count) < 0) {
        fail(&v, "the game refused the log's %" PRIu32 " players", h->player_count);
        goto report;
    }
    if (o.golden) {
        golden = read_whole(o.golden, &golden_size, &v);
        if (!golden) goto report;
        v.golden_checked = true;
    }
    if (o.output) {
        out = strcmp(o.output, "-") == 0 ? stdout : fopen(o.output, "wb");
        if (!out) {
            fail(&v, "cannot create %s: %s", o.output, strerror(errno));
            goto report;
        }
    }
    FILE *bless = NULL;
    if (o.bless) {
        snprintf(bless_tmp, sizeof bless_tmp, "%s.tmp-%ld", o.bless, (long)getpid());
        bless = fopen(bless_tmp, "wb");
        if (!bless) {
            fail(&v, "cannot create %s: %s", bless_tmp, strerror(errno));
            bless_tmp[0] = '\0';
            goto report;
        }
    }

    uint8_t output[CRADLE_GAME_OUTPUT_MAX];
    cradle_event_sink sink = {.context = NULL, .emit = discard_event};
    uint32_t per_frame = h->steps_per_second / h->source_frames_per_second;
    uint64_t output_total = 0, next_step = 0;
    bool stopped_early = false;
    double last_draw = 0;
    cradle_log_record rec;
    t0 = now_s();
    for (;;) {
        rc = cradle_log_reader_next(&reader, &rec);
        if (rc < 0) {
            fail(&v, "%s", reader.message);
            break;
        }
        if (rc == 0) break;
        if (rec.kind == CRADLE_LOG_RECORD_STEP) {
            if (rec.step > o.to) {
                stopped_early = true;
                break;
            }
            cradle_game_step gs = {.index = rec.step,
                                   .source_frame = rec.step / per_frame,
                                   .phase = (uint32_t)(rec.step % per_frame),
                                   .snapshot_size = h->snapshot_size,
                                   .snapshot = rec.snapshot};
            c->step(state, &gs, &sink);
            v.steps++;
            next_step = rec.step + 1;
            if (rec.step >= o.from && c->output) {
                size_t n = c->output(state, rec.step, output, sizeof output);
                if (n > sizeof output) {
                    fail(&v, "the game's output() returned %zu > %zu bytes at step %" PRIu64, n,
                         sizeof output, rec.step);
                    break;
                }
                if (out && fwrite(output, 1, n, out) != n) {
                    fail(&v, "cannot write %s", o.output);
                    break;
                }
                if (bless && fwrite(output, 1, n, bless) != n) {
                    fail(&v, "cannot write %s", bless_tmp);
                    break;
                }
                if (golden && !v.golden_differs) {
                    size_t left = golden_size - golden_pos;
                    cradle_golden_result g = cradle_golden_compare(
                        golden + golden_pos, left < n ? left : n, output, n);
                    if (!g.equal) {
                        v.golden_differs = true;
                        v.golden_byte = golden_pos + g.first_difference;
                        v.golden_step = rec.step;
                        diff_step_start = golden_pos;
                        diff_ours_len = n;
                        memcpy(diff_ours, output, n);
                    }
                    golden_pos += n < left ? n : left;
                }
                output_total += n;
            }
            if (tty && (v.steps & 4095) == 0) {
                double t = now_s();
                if (t - last_draw > 0.1) {
                    progress(cradle_log_reader_position(&reader), reader.size, rec.step);
                    last_draw = t;
                }
            }
        } else if (rec.kind == CRADLE_LOG_RECORD_HASH) {
            if (rec.step > o.to) continue;
            v.hashes_checked++;
            uint64_t mine = cradle_hash64(state, c->state_size);
            if (mine != rec.hash && !v.hash_mismatch) {
                v.hash_mismatch = true;
                v.hash_step = rec.step;
                v.hash_log = rec.hash;
                v.hash_replay = mine;
            }
        } else if (rec.kind == CRADLE_LOG_RECORD_RELOAD) {
            if (rec.step > o.to) continue;
            if (cradle_log_build_path(path, sizeof path, o.log, rec.file_hash) == 0 &&
                file_exists(path)) {
                if (load_library(spare, path, capacity, h, rec.build_id, o.force, &v) != 0) break;
            } else if (strcmp(current_build, rec.build_id) == 0 || o.force) {
                fprintf(stderr, "cradle-replay: warning: build '%s' of step %" PRIu64
                        " is not archived (%s); keeping the library in use\n", rec.build_id,
                        rec.step, path);
                continue;
            } else {
                fail(&v, "the log switches to build '%s' at step %" PRIu64
                     " but %s is missing (--force keeps the library in use)",
                     rec.build_id, rec.step, path);
                break;
            }
            cradle_reload_close(lib);
            cradle_reload *t = lib;
            lib = spare;
            spare = t;
            c = cradle_reload_contract(lib);
            snprintf(current_build, sizeof current_build, "%s", rec.build_id);
            if (c->on_reload) c->on_reload(state);
            v.reloads++;
        } else if (rec.kind == CRADLE_LOG_RECORD_TRAILER) {
            v.trailer_checked = true;
            v.trailer_log = rec.hash;
            v.trailer_replay = cradle_hash64(state, c->state_size);
            v.trailer_mismatch = v.trailer_log != v.trailer_replay;
            if (o.verify_key) {
                v.signature_checked = true;
                v.signature_bad = cradle_log_verify_signature(&rec, o.verify_public) != 0;
            }
        }
    }
    t1 = now_s();
    if (tty) fprintf(stderr, "\r%60s\r", "");
    if (!stopped_early && !v.failure) {
        end = reader.end;
        tail_offset = reader.tail_offset;
        snprintf(end_message, sizeof end_message, "%s", reader.message);
    }
    if (golden && !v.golden_differs && !v.failure && golden_pos < golden_size) {
        v.golden_differs = true;
        v.golden_past_end = true;
        v.golden_byte = output_total;
        v.golden_step = next_step;
        diff_step_start = golden_pos;
        diff_ours_len = 0;
    }
    if (bless) {
        bool ok = fclose(bless) == 0;
        bless = NULL;
        if (!ok && !v.failure) fail(&v, "cannot write %s", bless_tmp);
        if (!v.failure && (v.hash_mismatch || v.trailer_mismatch))
            fail(&v, "not blessing %s: the replay does not match the log's hashes", o.bless);
        if (!v.failure) {
            if (rename(bless_tmp, o.bless) != 0) fail(&v, "cannot write %s: %s", o.bless, strerror(errno));
            else bless_tmp[0] = '\0';
        }
    }
    if (out && fflush(out) != 0 && !v.failure) fail(&v, "cannot write %s", o.output);

report:;
    if (o.verify_key && !v.failure && !v.signature_checked)
        fail(&v, "the replay did not reach the log's trailer, so its signature was not checked");
    bool ok = !v.failure && !v.hash_mismatch && !v.trailer_mismatch && !v.golden_differs &&
              !v.signature_bad;
    double seconds = t1 - t0;
    double rate = seconds > 0 ? (double)v.steps / seconds : 0.0;
    if (end == CRADLE_LOG_END_TORN || end == CRADLE_LOG_END_UNCLOSED)
        fprintf(stderr, "cradle-replay: %s\n", end_message);
    if (v.failure) fprintf(stderr, "cradle-replay: %s\n", v.failure);
    if (v.hash_mismatch)
        fprintf(stderr, "cradle-replay: state hash differs first at step %" PRIu64
                ": log %016" PRIx64 ", replay %016" PRIx64 "\n",
                v.hash_step, v.hash_log, v.hash_replay);
    if (v.trailer_mismatch)
        fprintf(stderr, "cradle-replay: final state hash differs: log %016" PRIx64
                ", replay %016" PRIx64 "\n", v.trailer_log, v.trailer_replay);
    if (v.signature_bad)
        fprintf(stderr, "cradle-replay: log signature is missing or invalid for key %s: the "
                "log was altered after signing, signed by another key, or never signed\n",
                o.verify_key);
    else if (v.signature_checked)
        fprintf(stderr, "cradle-replay: log signature valid\n");
    if (v.golden_differs) {
        if (v.golden_past_end)
            fprintf(stderr, "cradle-replay: first difference at byte %" PRIu64
                    " (step %" PRIu64 "): the output ends, the golden file has %zu more bytes\n",
                    v.golden_byte, v.golden_step, golden_size - golden_pos);
        else
            fprintf(stderr, "cradle-replay: first difference at byte %" PRIu64 " (step %" PRIu64
                    ")\n", v.golden_byte, v.golden_step);
        size_t gl = golden_size > diff_step_start ? golden_size - diff_step_start : 0;
        size_t span = diff_ours_len ? diff_ours_len : gl;
        fprintf(stderr, "  output of step %" PRIu64 " from byte %zu:\n", v.golden_step,
                diff_step_start);
        print_hex(stderr, "golden", (const uint8_t *)golden + diff_step_start, gl < span ? gl : span);
        print_hex(stderr, "replay", diff_ours, diff_ours_len);
    }
    const char *end_name = end == CRADLE_LOG_END_CLOSED     ? "closed"
                           : end == CRADLE_LOG_END_UNCLOSED ? "unclosed"
                           : end == CRADLE_LOG_END_TORN     ? "torn"
                                                            : "not reached";
    fprintf(stderr, "cradle-replay: %" PRIu64 " steps in %.3f s (%.0f steps/s), %" PRIu64
            " hashes checked, log %s: %s\n", v.steps, seconds, rate, v.hashes_checked, end_name,
            ok ? "OK" : "FAILED");
    if (o.json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "log", o.log);
        cJSON_AddStringToObject(j, "verdict", ok ? "ok" : "failed");
        cJSON_AddNumberToObject(j, "steps", (double)v.steps);
        cJSON_AddNumberToObject(j, "seconds", seconds);
        cJSON_AddNumberToObject(j, "steps_per_second", rate);
        cJSON_AddNumberToObject(j, "hashes_checked", (double)v.hashes_checked);
        cJSON_AddNumberToObject(j, "reloads", (double)v.reloads);
        cJSON_AddStringToObject(j, "log_end", end_name);
        if (end == CRADLE_LOG_END_TORN) cJSON_AddNumberToObject(j, "tail_offset", (double)tail_offset);
        if (v.hash_mismatch) cJSON_AddNumberToObject(j, "hash_mismatch_step", (double)v.hash_step);
        if (v.trailer_checked) cJSON_AddBoolToObject(j, "final_hash_equal", !v.trailer_mismatch);
        if (v.signature_checked) cJSON_AddBoolToObject(j, "signature_valid", !v.signature_bad);
        if (v.golden_checked) {
            cJSON_AddBoolToObject(j, "golden_equal", !v.golden_differs);
            if (v.golden_differs) {
                cJSON_AddNumberToObject(j, "first_difference", (double)v.golden_byte);
                cJSON_AddNumberToObject(j, "difference_step", (double)v.golden_step);
            }
        }
        if (v.failure) cJSON_AddStringToObject(j, "error", v.failure);
        char *text = cJSON_PrintUnformatted(j);
        if (text) printf("%s\n", text);
        cJSON_free(text);
        cJSON_Delete(j);
    }
    if (bless_tmp[0]) unlink(bless_tmp);
    if (out && out != stdout) fclose(out);
    free(golden);
    free(state);
    cradle_reload_close(lib);
    cradle_reload_close(spare);
    if (reader_open) cradle_log_reader_close(&reader);
    return ok ? 0 : 1;
}
