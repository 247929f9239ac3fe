/*
 * bench_seek: seeking through a session log's keyframe index
 * (replay_index.h; replay.h: cradle_replay_use_index, cradle_replay_seek)
 * on a 2-hour 8-player vanguard session: 432,000 steps at 60 a second,
 * recorded by the real cradle-record with the game's bots. The goal
 * (issue text): any seek <= 50 ms.
 *   1. the session: recorded once per build of the game and kept under
 *      BENCH_SEEK_CACHE/vanguard-<the library file's BLAKE2b>-8p-<steps>/
 *      (the name its build archive has beside a log); a rerun says it
 *      reused it. Entries of older builds stay until removed by hand.
 *   2. a plain replay of the whole log (open, next to the end) and the
 *      index build (cradle_replay_index_create: that replay plus a keyframe
 *      written every interval), in seconds and steps/s, and their ratio;
 *   3. log bytes, index bytes, keyframes, index/log;
 *   4. the index's load (every keyframe checked), then SEEKS (1,000) seeks
 *      to seeded-random steps in [0, steps], one driver, each timed alone:
 *      p50/p99/max. The same targets without an index, for comparison: all
 *      when the plain replay's speed predicts under 60 s, else the first 20;
 *   5. peak RSS while seeking (ru_maxrss, its high-water mark reset before
 *      the index loads through /proc/self/clear_refs; blocks of 128 KiB and
 *      more are mmapped, so freed ones leave it: see main) and the index's
 *      bytes in memory (the file, the keyframe array as allocated).
 * Steps 3-5 run for each interval of --interval N[,N...] (repeatable;
 * default the index's default); --steps N records a shorter session for a
 * quick check. Every seek must land on its step; the states after the
 * seeks must agree between intervals and with the replays from step 0.
 * Build in Release (tools/bench.sh) and run; it prints, it asserts nothing
 * about time. Library copies go to $TMPDIR (default /tmp).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cradle/cradle.h"
#include "cradle/replay_index.h"

#ifndef BENCH_SEEK_RECORD
#define BENCH_SEEK_RECORD "cradle-record"
#endif
#ifndef BENCH_SEEK_GAME
#define BENCH_SEEK_GAME "vanguard.so"
#endif
#ifndef BENCH_SEEK_CACHE
#define BENCH_SEEK_CACHE "bench-seek"
#endif

#define PLAYERS 8u
#define STEPS_DEFAULT 432000u /* 2 hours at 60 steps a second */
#define SEEKS_DEFAULT 1000u
#define INTERVALS_MAX 16u
#define UNINDEXED_BUDGET_S 60.0 /* the comparison without an index runs all seeks only under this */
#define UNINDEXED_FEW 20u
#define SEEK_SEED 0x5eec5eedu

extern char **environ;

typedef struct bench_options {
    uint64_t steps;
    uint32_t seeks;
    uint32_t intervals[INTERVALS_MAX];
    unsigned interval_count;
} bench_options;

/* What every interval's seeks are compared with. */
typedef struct bench_session {
    char log_path[CRADLE_LOG_PATH_MAX];
    uint8_t session[CRADLE_BROADCAST_SESSION_BYTES];
    uint64_t log_bytes, steps;
    uint32_t capacity;     /* the replay's state storage: the largest keyframe an index may hold */
    double plain_s;        /* the plain replay's time */
    uint64_t *targets;     /* seeks: the steps to seek to */
    uint64_t *hashes;      /* the state hash after each seek, from the first run */
    uint32_t hashes_kept;  /* how many of them that run filled */
    double *times;         /* seeks: one run's seek times, seconds */
} bench_session;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void warn(void *context, const char *message) {
    (void)context;
    fprintf(stderr, "bench_seek: warning: %s\n", message);
}

/* ---- options ------------------------------------------------------------ */

enum { OPT_STEPS = 1000, OPT_INTERVAL, OPT_SEEKS, OPT_HELP };

static const cradle_option OPTIONS[] = {
    {"steps", OPT_STEPS, "N", "steps of the session (default 432000: 2 hours at 60 a second)"},
    {"interval", OPT_INTERVAL, "N[,N...]", "keyframe intervals to measure (repeatable; default 1200,\nthe index's default)"},
    {"seeks", OPT_SEEKS, "N", "random seeks per interval (default 1000)"},
    {"help", OPT_HELP, NULL, "show this help"},
};
#define OPTION_COUNT (sizeof OPTIONS / sizeof OPTIONS[0])

static void usage(FILE *to) {
    fprintf(to, "usage: bench_seek [--steps N] [--interval N[,N...]]... [--seeks N]\n"
                "Seeks through a keyframe index on an 8-player vanguard session that cradle-record\n"
                "records (once per build of the game; kept in " BENCH_SEEK_CACHE ").\n\n");
    cradle_options_help(to, OPTIONS, OPTION_COUNT, sizeof OPTIONS[0], 24, 0);
}

/* "600,1200,3600" appended to o->intervals. */
static bool parse_intervals(bench_options *o, char *text) {
    for (char *save = NULL, *item = strtok_r(text, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (o->interval_count == INTERVALS_MAX || !cradle_parse_u64(item, 1, CRADLE_REPLAY_INDEX_INTERVAL_MAX, &v))
            return false;
        o->intervals[o->interval_count++] = (uint32_t)v;
    }
    return true;
}

/* Returns -1 to go on, else the exit status. */
static int parse_options(bench_options *o, int argc, char **argv) {
    *o = (bench_options){.steps = STEPS_DEFAULT, .seeks = SEEKS_DEFAULT};
    struct option longs[OPTION_COUNT + 1];
    cradle_options_getopt(OPTIONS, OPTION_COUNT, sizeof OPTIONS[0], longs, NULL);
    int id;
    while ((id = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        uint64_t v = 0;
        bool ok = true;
        switch (id) {
        case OPT_STEPS: ok = cradle_parse_u64(optarg, 1, UINT32_MAX, &v); o->steps = v; break;
        case OPT_SEEKS: ok = cradle_parse_u64(optarg, 1, 1000000, &v); o->seeks = (uint32_t)v; break;
        case OPT_INTERVAL: ok = parse_intervals(o, optarg); break;
        case OPT_HELP: usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (!ok) {
            fprintf(stderr, "bench_seek: bad value '%s' for --%s\n", optarg, OPTIONS[id - OPT_STEPS].name);
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "bench_seek: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (o->interval_count == 0) o->intervals[o->interval_count++] = CRADLE_REPLAY_INDEX_INTERVAL_DEFAULT;
    return -1;
}

/* ---- the session -------------------------------------------------------- */

/* Runs argv[0] and waits. Returns its exit status, or -1. */
static int run_program(char *const argv[]) {
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
    if (rc != 0) {
        fprintf(stderr, "bench_seek: cannot run %s: %s\n", argv[0], strerror(rc));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Records the session into dir (made under a temporary name, renamed when
 * whole, so an interrupted recording is never reused). */
static int record_session(const char *dir, uint64_t steps) {
    /* posix_spawn takes char *const argv[]: writable copies of every word. */
    static char record[] = BENCH_SEEK_RECORD, game_flag[] = "--game", game[] = BENCH_SEEK_GAME,
                log_flag[] = "--log", players_flag[] = "--players", bots_flag[] = "--bots", steps_flag[] = "--steps";
    static char temp[CRADLE_LOG_PATH_MAX], log[CRADLE_LOG_PATH_MAX + 16], steps_text[24], players_text[8];
    snprintf(temp, sizeof temp, "%s.tmp", dir);
    snprintf(log, sizeof log, "%s/session.log", temp);
    snprintf(steps_text, sizeof steps_text, "%" PRIu64, steps);
    snprintf(players_text, sizeof players_text, "%u", PLAYERS);
    cradle_os_remove_tree(temp);
    if (mkdir(temp, 0755) != 0) {
        fprintf(stderr, "bench_seek: cannot create %s: %s\n", temp, strerror(errno));
        return -1;
    }
    char *argv[] = {record, game_flag, game, log_flag, log, players_flag, players_text,
                    bots_flag, steps_flag, steps_text, NULL};
    printf("recording %s steps with %u bots: %s ... --log %s\n", steps_text, PLAYERS, BENCH_SEEK_RECORD, log);
    fflush(stdout);
    double t0 = now_s();
    if (run_program(argv) != 0) {
        fprintf(stderr, "bench_seek: cradle-record failed\n");
        return -1;
    }
    printf("  recorded in %.1f s\n", now_s() - t0);
    if (rename(temp, dir) != 0) {
        fprintf(stderr, "bench_seek: cannot rename %s: %s\n", temp, strerror(errno));
        return -1;
    }
    return 0;
}

/* The session's log: the cached one for this build of the game, else a
 * new recording. */
static int find_session(bench_session *s, uint64_t steps) {
    uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES];
    if (cradle_log_file_hash(BENCH_SEEK_GAME, hash) != 0) {
        fprintf(stderr, "bench_seek: cannot read %s (tools/bench.sh builds it)\n", BENCH_SEEK_GAME);
        return -1;
    }
    char hex[17], dir[CRADLE_LOG_PATH_MAX - 16];
    for (int i = 0; i < 8; i++) snprintf(hex + 2 * i, 3, "%02x", hash[i]);
    snprintf(dir, sizeof dir, "%s/vanguard-%s-%up-%" PRIu64, BENCH_SEEK_CACHE, hex, PLAYERS, steps);
    snprintf(s->log_path, sizeof s->log_path, "%s/session.log", dir);
    struct stat st;
    if (stat(s->log_path, &st) == 0) {
        printf("session: reusing %s (recorded earlier with this build of vanguard.so, %s)\n", s->log_path, hex);
        return 0;
    }
    if (mkdir(BENCH_SEEK_CACHE, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "bench_seek: cannot create %s: %s\n", BENCH_SEEK_CACHE, strerror(errno));
        return -1;
    }
    return record_session(dir, steps);
}

/* Replays the whole log once: its session, size and steps (said the first
 * time), and the time. */
static int replay_plain(bench_session *s) {
    static cradle_replay r;
    double t0 = now_s();
    int rc = cradle_replay_open(&r, &(cradle_replay_config){.log_path = s->log_path, .warn = warn});
    cradle_replay_item item;
    if (rc == 0)
        while ((rc = cradle_replay_next(&r, &item)) == 1) continue;
    s->plain_s = now_s() - t0;
    if (rc != 0 || r.mismatch || r.reader.end != CRADLE_LOG_END_CLOSED) {
        fprintf(stderr, "bench_seek: replay of %s: %s\n", s->log_path,
                rc != 0 ? r.message : r.mismatch ? "a state hash differs" : "the log is not closed");
        cradle_replay_close(&r);
        return -1;
    }
    if (s->steps == 0)
        printf("session: %" PRIu64 " steps, %" PRIu32 " players, build %s, state %" PRIu32 " bytes (capacity %" PRIu32
               "), a hash every %" PRIu32 " steps, log %" PRIu64 " bytes\n",
               r.steps, r.reader.header.player_count, r.reader.header.build_id, r.reader.header.state_size,
               r.capacity, r.reader.header.hash_interval, r.reader.size);
    memcpy(s->session, r.reader.session, sizeof s->session);
    s->capacity = r.capacity;
    s->log_bytes = r.reader.size;
    s->steps = r.steps;
    printf("  plain replay: %.2f s, %.0f steps/s (%" PRIu64 " hashes checked)\n", s->plain_s,
           (double)s->steps / s->plain_s, r.hashes_checked);
    cradle_replay_close(&r);
    return 0;
}

/* ---- seeking ------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts times and prints "p50 ... p99 ... max" in ms (nearest rank). */
static void print_times(const char *label, double *times, uint32_t n) {
    qsort(times, n, sizeof *times, by_value);
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) sum += times[i];
    uint32_t p50 = (n * 50u + 99u) / 100u - 1u, p99 = (n * 99u + 99u) / 100u - 1u;
    printf("  %s: %u seeks: p50 %.2f ms, p99 %.2f ms, max %.2f ms, mean %.2f ms\n", label, n, times[p50] * 1e3,
           times[p99] * 1e3, times[n - 1] * 1e3, sum / n * 1e3);
}

/* Seeks r to the first n targets, timing each; checks every landing, the
 * log's hashes on the way and the state against the hashes the first run
 * kept (or keeps them). Returns the states that disagreed, or -1 when a
 * seek failed. *hashes: the log's hashes compared on the way. A seek that
 * starts over from step 0 opens the driver again, which zeroes its
 * counters and its mismatch flag: both are read after every seek. */
static int64_t seek_all(cradle_replay *r, bench_session *s, uint32_t n, uint64_t *hashes) {
    int64_t differ = 0;
    bool keep = s->hashes_kept == 0;
    *hashes = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t checked = r->hashes_checked;
        double t0 = now_s();
        int rc = cradle_replay_seek(r, s->targets[i]);
        s->times[i] = now_s() - t0;
        if (rc != 0 || r->sim.next_step != s->targets[i] || r->mismatch) {
            fprintf(stderr, "bench_seek: seek to %" PRIu64 ": %s\n", s->targets[i],
                    rc != 0 ? r->message : r->mismatch ? "a state hash differs from the log's" : "landed elsewhere");
            return -1;
        }
        *hashes += r->hashes_checked >= checked ? r->hashes_checked - checked : r->hashes_checked;
        uint64_t hash = cradle_sim_hash(&r->sim);
        if (keep) s->hashes[i] = hash;
        else differ += s->hashes[i] != hash;
    }
    if (keep) s->hashes_kept = n;
    return differ;
}

/* Peak RSS from here on: resets the high-water mark ru_maxrss reports
 * (Linux: /proc/self/clear_refs). Returns false when it cannot. */
static bool reset_peak_rss(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return false;
    bool ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

static double peak_rss_mib(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_maxrss / 1024.0; /* KiB on Linux */
}

/* Builds, loads and seeks through the index at one interval. */
static int measure_interval(bench_session *s, uint32_t interval, uint32_t seeks) {
    char index_path[CRADLE_LOG_PATH_MAX + 32], message[CRADLE_REPLAY_INDEX_MESSAGE_MAX];
    snprintf(index_path, sizeof index_path, "%s.index-%" PRIu32, s->log_path, interval);
    printf("interval %" PRIu32 " steps (%.1f s of play):\n", interval, interval / 60.0);
    if (replay_plain(s) != 0) return -1; /* beside the build, so a busier machine shows in both */
    cradle_replay_index_built built;
    double t0 = now_s();
    int rc = cradle_replay_index_create(&(cradle_replay_index_build){.log_path = s->log_path,
                                                                     .index_path = index_path,
                                                                     .interval = interval,
                                                                     .warn = warn},
                                        &built, message, sizeof message);
    double build_s = now_s() - t0;
    if (rc != 0) {
        fprintf(stderr, "bench_seek: index build: %s\n", message);
        return -1;
    }
    printf("  index build: %.2f s, %.0f steps/s; %.2fx the plain replay's time\n", build_s,
           (double)built.steps / build_s, build_s / s->plain_s);
    printf("  log %" PRIu64 " bytes, index %" PRIu64 " bytes, %" PRIu64 " keyframes (%.0f bytes each); "
           "index/log %.3f\n",
           built.log_bytes, built.index_bytes, built.keyframes,
           built.keyframes ? (double)(built.index_bytes - CRADLE_REPLAY_INDEX_HEADER_BYTES) / (double)built.keyframes : 0.0,
           (double)built.index_bytes / (double)built.log_bytes);

    malloc_trim(0); /* the builds' freed memory back to the system, out of the baseline */
    bool reset = reset_peak_rss();
    double rss_before = peak_rss_mib();
    static cradle_replay_index index;
    t0 = now_s();
    rc = cradle_replay_index_load(&index, index_path, s->session, s->log_bytes, s->capacity, message, sizeof message);
    if (rc != 0) {
        fprintf(stderr, "bench_seek: index load: %s\n", message);
        return -1;
    }
    printf("  index load (every keyframe checked): %.1f ms\n", (now_s() - t0) * 1e3);
    static cradle_replay r;
    rc = cradle_replay_open(&r, &(cradle_replay_config){.log_path = s->log_path, .warn = warn});
    if (rc == 0) rc = cradle_replay_use_index(&r, &index);
    uint64_t hashes = 0;
    int64_t differ = rc == 0 ? seek_all(&r, s, seeks, &hashes) : -1;
    if (rc != 0) fprintf(stderr, "bench_seek: %s\n", r.message);
    if (differ >= 0) {
        print_times("with the index", s->times, seeks);
        printf("  %" PRIu64 " seeks restored a keyframe; %" PRIu64 " log hashes matched on the way; states %s\n",
               r.keyframe_seeks, hashes, differ ? "DIFFER" : "agree with the other runs");
        printf("  peak RSS while seeking: %.1f MiB (%.1f MiB before the index loaded%s)\n", peak_rss_mib(),
               rss_before, reset ? "" : "; not reset: the process's peak");
        printf("  index in memory: %zu bytes of file + %zu of keyframe array (%u keyframes of %zu bytes) + "
               "%" PRIu32 " of the driver's keyframe buffer\n",
               index.size, malloc_usable_size(index.keys), index.count, sizeof *index.keys, r.capacity);
    }
    cradle_replay_close(&r);
    cradle_replay_index_free(&index);
    return differ == 0 ? 0 : -1;
}

/* The same targets with no index (all when the plain replay's speed
 * predicts under the budget, else the first few), for comparison. */
static int measure_unindexed(bench_session *s, uint32_t seeks) {
    uint64_t at = 0, run = 0;
    for (uint32_t i = 0; i < seeks; i++) {
        run += s->targets[i] >= at ? s->targets[i] - at : s->targets[i];
        at = s->targets[i];
    }
    double predicted = (double)run * s->plain_s / (double)s->steps;
    uint32_t n = predicted < UNINDEXED_BUDGET_S || seeks <= UNINDEXED_FEW ? seeks : UNINDEXED_FEW;
    printf("without an index:");
    if (n < seeks) printf(" all %u seeks would take about %.0f s: the first %u only", seeks, predicted, n);
    printf("\n");
    static cradle_replay r;
    int rc = cradle_replay_open(&r, &(cradle_replay_config){.log_path = s->log_path, .warn = warn});
    uint64_t hashes = 0;
    int64_t differ = rc == 0 ? seek_all(&r, s, n, &hashes) : -1;
    if (rc != 0) fprintf(stderr, "bench_seek: %s\n", r.message);
    if (differ >= 0) {
        print_times("no index", s->times, n);
        printf("  %" PRIu64 " log hashes matched on the way; states %s\n", hashes,
               differ ? "DIFFER from the indexed seeks'" : "agree with the indexed seeks'");
    }
    cradle_replay_close(&r);
    return differ == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
    /* Large blocks always mmapped and unmapped when freed: with glibc's
       dynamic threshold, the blocks of the driver's reopens (a seek behind
       the first keyframe starts over) stay in the heap, and the peak RSS
       then depends on what ran before in this process more than on the
       seeks. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    bench_options o;
    int status = parse_options(&o, argc, argv);
    if (status >= 0) return status;
    static bench_session s;
    s.targets = calloc(o.seeks, sizeof *s.targets);
    s.hashes = calloc(o.seeks, sizeof *s.hashes);
    s.times = calloc(o.seeks, sizeof *s.times);
    if (!s.targets || !s.hashes || !s.times) return 1;
    status = 1;
    if (find_session(&s, o.steps) != 0 || replay_plain(&s) != 0) goto out_free; /* a first one warms the cache */
    uint64_t x = SEEK_SEED;
    for (uint32_t i = 0; i < o.seeks; i++) s.targets[i] = splitmix64(&x) % (s.steps + 1u);
    printf("seeks: %u to seeded-random steps in [0, %" PRIu64 "], timed one by one (CLOCK_MONOTONIC)\n", o.seeks,
           s.steps);
    for (unsigned i = 0; i < o.interval_count; i++)
        if (measure_interval(&s, o.intervals[i], o.seeks) != 0) goto out_free;
    if (measure_unindexed(&s, o.seeks) != 0) goto out_free;
    status = 0;
out_free:
    free(s.targets);
    free(s.hashes);
    free(s.times);
    return status;
}
