/*
 * replay_run: a session log replayed through the replay driver
 * (shared/io/replay.h) with one game linked in (CRADLE_RELOAD_LINKED:
 * shared/io/reload_linked.c), built for WebAssembly (wasm32-wasi) with the
 * browser viewer's runtime (client/web) and run by node or a browser. It is
 * cradle-replay's golden check on the other machine: the step outputs are
 * compared with a golden file the way cradle-replay --golden compares them
 * (shared/core/golden.c for a full golden file, tools/replay/digest_golden.c
 * for a digest one), so "native and wasm agree" means the same bytes and
 * the same verdict, not merely the same hashes.
 *
 * Usage: replay_run [--output FILE] [--golden FILE] LOG
 *   LOG        a session log; "-" reads it from stdin into memory and
 *              replays it from there (cradle_replay_config.log_memory), as
 *              the browser's viewer does: a page without files gives the
 *              log as stdin (tools/bench/bench_wasm.mjs). A log from
 *              memory has no LOG.data/ beside it: one with DATA records
 *              fails there, naming the file
 *   --output   write every step's output bytes to FILE
 *   --golden   compare every step's output bytes with FILE, a full or a
 *              digest golden file (told apart by its first line); exit 1 at
 *              a difference, which stderr names as cradle-replay does
 * Without --output or --golden no output is asked of the game, as with
 * cradle-replay --json (the figure tools/bench/bench_wasm.mjs compares).
 *
 * Stdout: one JSON line: the log, the game and its build id, "verdict"
 * ("ok" or "failed"), the steps run, hashes checked and mismatched, reloads,
 * data files applied, "log_end" (as cradle-replay's), "state_hash" (the
 * state where the replay stopped, cradle_sim_hash) and "next_step", whether
 * the trailer's final hash matched, the golden file's kind and whether it
 * matched, the output bytes, and "seconds" and "steps_per_second": the
 * replay loop alone on CLOCK_MONOTONIC (not the start-up, the golden file's
 * reading or the module's compilation). "error" holds a failure's message.
 * Exit: 0 when everything matched, 1 on a failure or a difference, 2 on a
 * usage error.
 *
 * One build per module: a RELOAD record loads the linked build again
 * (config.reload_game_path), which must then be the build the record names,
 * so a session that reloads the same build replays and one that switches
 * to another build fails naming both ids. The log's archived builds
 * (LOG.builds/) are native libraries: keep them out of the module's sight,
 * or a RELOAD tries to open one and fails ("this program runs only the build
 * linked into it"). DATA records read LOG.data/ as natively.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cradle/golden.h"
#include "cradle/golden_digest.h"
#include "cradle/replay.h"
#include "replay/digest_golden.h"

#define SHOW_MAX 32u /* output bytes shown per side at a full golden file's difference */

typedef struct options {
    const char *log, *output, *golden;
} options;

/* --golden, compared as cradle-replay compares (tools/cradle_replay.c:
 * open_golden, take_output and the end of replay_all). */
typedef struct golden_check {
    char *bytes;                  /* the full kind's bytes; NULL for the digest kind */
    size_t size, pos;
    bool digesting;               /* the digest kind: digest holds the file */
    digest_golden digest;
    bool differs, past_end;
    uint64_t byte, step;          /* the full kind's first difference */
    size_t diff_start;            /* where the differing step's output starts in the file */
    uint8_t ours[CRADLE_GAME_OUTPUT_MAX];
    size_t ours_size;
} golden_check;

/* One run; static, the driver is large. */
typedef struct run {
    options o;
    cradle_replay replay;
    bool replay_open;
    uint8_t *log_memory;          /* LOG "-": the log's bytes */
    size_t log_size;
    FILE *out;
    golden_check golden;
    bool golden_given;
    uint64_t output_bytes;
    bool trailer_checked, trailer_equal;
    double seconds;
    const char *failure;
    char failure_text[CRADLE_REPLAY_MESSAGE_MAX + 256];
} run;

static run the_run;

static int fail(run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(run *r, const char *fmt, ...) {
    if (r->failure) return 1; /* the first failure is the one reported */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->failure_text, sizeof r->failure_text, fmt, ap);
    va_end(ap);
    r->failure = r->failure_text;
    return 1;
}

static void warn(void *context, const char *message) {
    (void)context;
    fprintf(stderr, "replay_run: warning: %s\n", message);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int parse_args(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--output") == 0 && i + 1 < argc) {
            o->output = argv[++i];
        } else if (strcmp(a, "--golden") == 0 && i + 1 < argc) {
            o->golden = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "replay_run: unknown option '%s'\n", a);
            return 2;
        } else if (!o->log) {
            o->log = a;
        } else {
            fprintf(stderr, "replay_run: one LOG only ('%s' and '%s')\n", o->log, a);
            return 2;
        }
    }
    if (!o->log) {
        fprintf(stderr, "usage: replay_run [--output FILE] [--golden FILE] LOG|-\n");
        return 2;
    }
    return 0;
}

/* Reads all of `f` into a malloc'd buffer (*size bytes). NULL with errno
 * when reading fails or memory runs out. */
static uint8_t *read_all(FILE *f, size_t *size) {
    size_t n = 0, capacity = 1u << 20;
    uint8_t *data = malloc(capacity);
    while (data) {
        n += fread(data + n, 1, capacity - n, f);
        if (n < capacity) break;
        uint8_t *grown = realloc(data, capacity * 2);
        if (!grown) break;
        data = grown;
        capacity *= 2;
    }
    if (!data || n == capacity || ferror(f)) {
        if (data && !ferror(f)) errno = ENOMEM;
        free(data);
        return NULL;
    }
    *size = n;
    return data;
}

/* --golden: the full kind's bytes, or the digest kind parsed (and its
 * bytes let go), checked against the game the log runs. */
static int open_golden(run *r) {
    golden_check *g = &r->golden;
    FILE *f = fopen(r->o.golden, "rb");
    if (!f) return fail(r, "cannot open golden file %s: %s", r->o.golden, strerror(errno));
    g->bytes = (char *)read_all(f, &g->size);
    int read_errno = errno;
    fclose(f);
    if (!g->bytes) return fail(r, "cannot read golden file %s: %s", r->o.golden, strerror(read_errno));
    r->golden_given = true;
    if (!cradle_golden_digest_is(g->bytes, g->size)) return 0;
    char why[512];
    int rc = digest_golden_check(&g->digest, (const uint8_t *)g->bytes, g->size, r->replay.sim.contract->name, 0,
                                 why, sizeof why);
    free(g->bytes);
    g->bytes = NULL;
    g->size = 0;
    g->digesting = true;
    return rc == 0 ? 0 : fail(r, "golden file %s: %s", r->o.golden, why);
}

/* A step's output: written, and compared with the golden file. */
static int take_output(run *r, const cradle_replay_item *item) {
    golden_check *g = &r->golden;
    size_t n = item->output_size;
    if (r->out && fwrite(item->output, 1, n, r->out) != n) return fail(r, "cannot write %s", r->o.output);
    if (g->digesting && digest_golden_take(&g->digest, item->step, item->output, n) != 0)
        return fail(r, "out of memory for the output's digests");
    if (g->bytes && !g->differs) {
        size_t left = g->size - g->pos;
        cradle_golden_result c = cradle_golden_compare(g->bytes + g->pos, left < n ? left : n, item->output, n);
        if (!c.equal) {
            g->differs = true;
            g->byte = g->pos + c.first_difference;
            g->step = item->step;
            g->diff_start = g->pos;
            g->ours_size = n;
            memcpy(g->ours, item->output, n);
        }
        g->pos += n < left ? n : left;
    }
    r->output_bytes += n;
    return 0;
}

/* After the last step: the digest kind's last window, and whether the
 * full kind's file goes on past the output. */
static void finish_golden(run *r) {
    golden_check *g = &r->golden;
    if (g->digesting) {
        if (digest_golden_finish(&g->digest) != 0) fail(r, "out of memory for the output's digests");
        else if (g->digest.why != DIGEST_SAME) g->differs = true;
    }
    if (g->bytes && !g->differs && g->pos < g->size) {
        g->differs = true;
        g->past_end = true;
        g->byte = r->output_bytes;
        g->step = r->replay.sim.next_step;
        g->diff_start = g->pos;
        g->ours_size = 0;
    }
}

/* Runs every record; the clock reads bracket this loop only. */
static void replay_all(run *r) {
    cradle_replay *p = &r->replay;
    cradle_replay_item item;
    int rc;
    double t0 = now_s();
    while ((rc = cradle_replay_next(p, &item)) == 1) {
        if (item.kind == CRADLE_REPLAY_STEP) {
            if (item.output && take_output(r, &item) != 0) break;
        } else if (item.kind == CRADLE_REPLAY_TRAILER) {
            r->trailer_checked = true;
            r->trailer_equal = item.matches;
        } else if (item.kind == CRADLE_REPLAY_REFUSED) { /* the session went on with the build in charge */
            fprintf(stderr, "replay_run: a new build was refused before step %" PRIu64 ": %s\n", item.step,
                    item.record->reason);
        }
    }
    r->seconds = now_s() - t0;
    if (rc < 0) fail(r, "%s", p->message);
    if (!r->failure) finish_golden(r);
}

static void print_hex(const char *label, const uint8_t *bytes, size_t n) {
    fprintf(stderr, "  %-7s", label);
    for (size_t i = 0; i < n && i < SHOW_MAX; i++) fprintf(stderr, " %02x", bytes[i]);
    fprintf(stderr, "%s\n", n > SHOW_MAX ? " ..." : "");
}

/* The golden file's first difference, in cradle-replay's words. */
static void print_golden_difference(const run *r) {
    const golden_check *g = &r->golden;
    if (g->digesting) {
        digest_golden_print(&g->digest, stderr, r->o.log);
        return;
    }
    if (g->past_end)
        fprintf(stderr, "replay_run: first difference at byte %" PRIu64 " (step %" PRIu64
                "): the output ends, the golden file has %zu more bytes\n", g->byte, g->step, g->size - g->pos);
    else
        fprintf(stderr, "replay_run: first difference at byte %" PRIu64 " (step %" PRIu64 ")\n", g->byte, g->step);
    fprintf(stderr, "  output of step %" PRIu64 " from byte %zu:\n", g->step, g->diff_start);
    size_t golden_left = g->size - g->diff_start;
    size_t span = g->ours_size ? g->ours_size : golden_left;
    print_hex("golden", (const uint8_t *)g->bytes + g->diff_start, golden_left < span ? golden_left : span);
    print_hex("replay", g->ours, g->ours_size);
}

/* A JSON string: quotes, backslashes and control bytes escaped, bytes
 * that may not be UTF-8 as '?' (a path may hold any), as cradle-replay. */
static void put_string(const char *key, const char *text) {
    printf("\"%s\":\"", key);
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\') printf("\\%c", *c);
        else if (*c < 0x20) printf("\\u%04x", *c);
        else if (*c >= 0x80) putchar('?');
        else putchar(*c);
    }
    printf("\"");
}

static const char *end_name(const run *r) {
    if (!r->replay_open || r->failure) return "not reached";
    switch (r->replay.reader.end) {
    case CRADLE_LOG_END_CLOSED: return "closed";
    case CRADLE_LOG_END_UNCLOSED: return "unclosed";
    case CRADLE_LOG_END_TORN: return "torn";
    default: return "not reached";
    }
}

/* The summary: stderr's findings, then the JSON line. Returns whether the
 * run passed. */
static bool report(const run *r) {
    const cradle_replay *p = &r->replay;
    bool ok = !r->failure && p->hash_mismatches == 0 && (!r->trailer_checked || r->trailer_equal) &&
              !r->golden.differs;
    if (r->failure) fprintf(stderr, "replay_run: %s\n", r->failure);
    if (r->replay_open && p->mismatch)
        fprintf(stderr, "replay_run: state hash differs first at step %" PRIu64 ": log %016" PRIx64
                ", replay %016" PRIx64 "\n", p->mismatch_step, p->mismatch_logged, p->mismatch_replayed);
    if (r->golden.differs) print_golden_difference(r);
    double rate = r->seconds > 0 ? (double)p->steps / r->seconds : 0.0;
    printf("{");
    put_string("log", r->o.log);
    if (r->replay_open) {
        printf(",");
        put_string("game", p->sim.contract->name);
        printf(",");
        put_string("build_id", p->build_id);
    }
    printf(",\"verdict\":\"%s\",\"steps\":%" PRIu64 ",\"hashes_checked\":%" PRIu64 ",\"hash_mismatches\":%" PRIu64
           ",\"reloads\":%" PRIu64 ",\"data_applied\":%" PRIu64 ",\"log_end\":\"%s\"",
           ok ? "ok" : "failed", p->steps, p->hashes_checked, p->hash_mismatches, p->reloads, p->data_applied,
           end_name(r));
    if (r->replay_open && p->sim.state)
        printf(",\"state_hash\":\"%016" PRIx64 "\",\"next_step\":%" PRIu64, cradle_sim_hash(&p->sim),
               p->sim.next_step);
    if (r->trailer_checked) printf(",\"final_hash_equal\":%s", r->trailer_equal ? "true" : "false");
    if (r->golden_given)
        printf(",\"golden_kind\":\"%s\",\"golden_equal\":%s", r->golden.digesting ? "digest" : "full",
               r->golden.differs ? "false" : "true");
    if (r->golden.differs && !r->golden.digesting)
        printf(",\"first_difference\":%" PRIu64 ",\"difference_step\":%" PRIu64, r->golden.byte, r->golden.step);
    printf(",\"output_bytes\":%" PRIu64 ",\"seconds\":%.6f,\"steps_per_second\":%.0f", r->output_bytes, r->seconds,
           rate);
    if (r->failure) {
        printf(",");
        put_string("error", r->failure);
    }
    printf("}\n");
    return ok;
}

/* Opens the log (from the file or from stdin) and the driver. */
static int open_replay(run *r) {
    cradle_replay_config config = {.log_path = r->o.log,
                                   .game_path = CRADLE_RELOAD_LINKED,
                                   .reload_game_path = true,
                                   .output = r->o.output || r->o.golden,
                                   .warn = warn};
    if (strcmp(r->o.log, "-") == 0) {
        r->log_memory = read_all(stdin, &r->log_size);
        if (!r->log_memory) return fail(r, "cannot read the log from stdin: %s", strerror(errno));
        config.log_path = "(stdin)";
        config.log_memory = r->log_memory;
        config.log_bytes = r->log_size;
    }
    if (cradle_replay_open(&r->replay, &config) != 0) return fail(r, "%s", r->replay.message);
    r->replay_open = true;
    return 0;
}

static int open_outputs(run *r) {
    if (r->o.golden && open_golden(r) != 0) return 1;
    if (r->o.output && !(r->out = fopen(r->o.output, "wb")))
        return fail(r, "cannot create %s: %s", r->o.output, strerror(errno));
    return 0;
}

int main(int argc, char **argv) {
    run *r = &the_run;
    int rc = parse_args(argc, argv, &r->o);
    if (rc != 0) return rc;
    if (open_replay(r) == 0 && open_outputs(r) == 0) replay_all(r);
    if (r->out && fclose(r->out) != 0) fail(r, "cannot write %s", r->o.output);
    r->out = NULL;
    bool ok = report(r);
    free(r->golden.bytes);
    digest_golden_close(&r->golden.digest); /* safe when zeroed */
    cradle_replay_close(&r->replay);
    free(r->log_memory);
    return ok ? 0 : 1;
}
