/*
 * bench_log: figures for session logs (log.h).
 *   - BLAKE2b-128 throughput (the block checksum) and, in the same run, the
 *     reader's throughput over a page-cached log file: every record delivered
 *     through cradle_log_reader_next, checksums verified (goal >= 0.8x);
 *   - replay steps per second: reader + the game's step + output, for the
 *     counter game and for any game library given on the command line
 *     (replayed with bot input for its maximum player count), then the
 *     same log under cradle-replay --synctest's check (tools/replay/: the
 *     state compare split across two threads for a large state, as
 *     cradle-replay runs it);
 *   - a server's cost of keeping states for desync analysis (a copy of the
 *     state at every hash step, four kept);
 *   - the game thread's cost per step of writing a log at 60 steps/s
 *     (append + maybe_sync with a 1 s durability interval, amortized,
 *     including the periodic write() and, inline, the fdatasync).
 * Build in Release (tools/bench.sh) and run: bench_log [GAME.so ...]
 * Temporary files go to $TMPDIR (default /tmp). It prints, it asserts nothing.
 */
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cradle/cradle.h"
#include "replay/synctest.h"

#ifndef BENCH_LOG_COUNTER
#define BENCH_LOG_COUNTER "counter.so"
#endif

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of this thread: the throughput figures compare the reader with
 * BLAKE2b on a shared, busy machine, where wall time mostly measures the
 * other processes. Both sides are measured the same way. */
static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile uint64_t sink;
static char tmpdir[512];
static cradle_reload library;

static cradle_log_header header_for(uint32_t max_players, uint32_t input_bytes) {
    cradle_log_header h;
    memset(&h, 0, sizeof h);
    strcpy(h.game_name, "bench");
    strcpy(h.build_id, "bench-build");
    h.abi_major = CRADLE_ABI_MAJOR;
    h.state_size = 64;
    h.state_align = 8;
    h.input_bytes = input_bytes;
    h.max_players = max_players;
    h.steps_per_second = 60;
    h.source_frames_per_second = 20;
    h.player_count = max_players;
    h.snapshot_size = cradle_snapshot_size(max_players, input_bytes);
    h.hash_interval = 60;
    return h;
}

/* Writes `steps` steps of random snapshots (and a hash every 60) to path. */
static int write_log(const char *path, const cradle_log_header *h, uint64_t steps,
                     const cradle_log_writer_config *cfg) {
    cradle_log_writer w;
    char msg[256];
    if (cradle_log_writer_open(&w, path, h, cfg, NULL, msg, sizeof msg) != 0) {
        fprintf(stderr, "bench_log: %s\n", msg);
        return -1;
    }
    cradle_rng rng;
    cradle_rng_seed(&rng, 9, 9);
    uint8_t snap[CRADLE_SNAPSHOT_MAX];
    for (uint64_t s = 0; s < steps; s++) {
        for (uint32_t i = 0; i < h->snapshot_size; i++) snap[i] = (uint8_t)cradle_rng_next(&rng);
        snap[0] = 0xff;
        if (cradle_log_writer_append_step(&w, s, snap) != 0) return -1;
        if ((s + 1) % 60 == 0 && cradle_log_writer_append_hash(&w, s, s) != 0) return -1;
    }
    return cradle_log_writer_close(&w, 0);
}

static double blake_mb_s(void) {
    const size_t size = 64u << 20, chunk = 64u << 10;
    uint8_t *buf = malloc(size);
    if (!buf) return 0;
    memset(buf, 0x5a, size);
    double best = 1e9;
    for (int round = 0; round < 3; round++) {
        double t0 = cpu_s();
        uint8_t out[16];
        for (size_t at = 0; at < size; at += chunk) {
            crypto_generichash(out, sizeof out, buf + at, chunk, NULL, 0);
            sink += out[0];
        }
        double t = cpu_s() - t0;
        if (t < best) best = t;
    }
    free(buf);
    return (double)size / 1e6 / best;
}

static double read_mb_s(const char *path, uint64_t *records) {
    double best = 1e9;
    uint64_t size = 0;
    for (int round = 0; round < 3; round++) {
        cradle_log_reader r;
        char msg[256];
        double t0 = cpu_s();
        if (cradle_log_reader_open(&r, path, msg, sizeof msg) != 0) {
            fprintf(stderr, "bench_log: %s\n", msg);
            return 0;
        }
        cradle_log_record rec;
        uint64_t n = 0, sum = 0;
        while (cradle_log_reader_next(&r, &rec) == 1) {
            if (rec.kind == CRADLE_LOG_RECORD_STEP) sum += rec.snapshot[1];
            n++;
        }
        sink += sum;
        size = r.size;
        cradle_log_reader_close(&r);
        double t = cpu_s() - t0;
        if (t < best) best = t;
        *records = n;
    }
    return (double)size / 1e6 / best;
}

/* Records `steps` steps of bot input for contract c's game through a sim
 * into path (a hash every 60 steps, as a server's log). Returns 0 or -1. */
static int record_log(const cradle_game_contract *c, const char *path, uint64_t steps) {
    cradle_log_header h;
    char msg[256];
    if (cradle_log_header_from_contract(&h, c, 1, c->max_players, 0, 60) != 0) return -1;
    int rc = -1;
    cradle_sim sim;
    cradle_sim_storage storage = {0};
    if (cradle_sim_storage_open(&storage, &sim, c, &(cradle_sim_storage_config){0}, msg, sizeof msg) != 0 ||
        cradle_sim_start(&sim, 1, c->max_players) != 0)
        goto out;
    cradle_log_writer_config wcfg = {.overwrite = true, .sync_inline = true};
    cradle_log_writer w;
    if (cradle_log_writer_open(&w, path, &h, &wcfg, NULL, msg, sizeof msg) != 0) goto out;
    cradle_rng rng;
    cradle_rng_seed(&rng, 1, 2);
    uint8_t snap[CRADLE_SNAPSHOT_MAX];
    for (uint64_t s = 0; s < steps; s++) {
        for (uint32_t i = 0; i < h.snapshot_size; i++) snap[i] = (uint8_t)cradle_rng_next(&rng);
        memset(snap, 0xff, CRADLE_PRESENCE_BYTES(c->max_players));
        if (cradle_log_writer_append_step(&w, s, snap) != 0) break;
        cradle_sim_step(&sim, snap);
        if ((s + 1) % 60 == 0 && cradle_log_writer_append_hash(&w, s, cradle_sim_hash(&sim)) != 0) break;
    }
    rc = cradle_log_writer_close(&w, cradle_sim_hash(&sim)) == 0 ? 0 : -1;
out:
    cradle_sim_storage_close(&storage);
    return rc;
}

/* Replays path through the replay driver as cradle-replay does, with
 * --synctest's check (replay/synctest.h) when sync, up to `limit` steps (0:
 * all): steps per second, best of 3 (wall time, since the check may split
 * its compare across two threads; the driver's opening excluded); *matched
 * says whether every hash matched (and every step's two runs). */
static double time_replay(const char *path, const char *lib_path, bool sync, uint64_t limit, uint64_t *steps,
                          bool *matched) {
    static cradle_replay r;
    static synctest t;
    double best = 1e9;
    *matched = true;
    for (int round = 0; round < 3; round++) {
        cradle_replay_config rc = {
            .log_path = path, .game_path = lib_path, .copy_dir = tmpdir, .output = true, .stop_at = limit};
        if (cradle_replay_open(&r, &rc) != 0 || (sync && synctest_open(&t, &r, SYNCTEST_DEFAULT_EVERY) != 0)) {
            printf("  %-40s cannot replay: %s\n", lib_path, r.message);
            cradle_replay_close(&r);
            return 0;
        }
        double t0 = (double)cradle_mono_ns() / 1e9;
        cradle_replay_item item;
        for (;;) {
            if (cradle_replay_next(&r, &item) != 1) break;
            if (sync && synctest_take(&t, &r, &item) != 0) break;
            if (item.kind == CRADLE_REPLAY_STEP) sink += item.output_size;
        }
        double seconds = (double)cradle_mono_ns() / 1e9 - t0;
        *steps = r.steps;
        *matched = *matched && !r.mismatch && (r.ended || r.stopped) && !r.error && !t.failed;
        cradle_replay_close(&r);
        if (sync) synctest_close(&t);
        if (seconds < best) best = seconds;
    }
    return (double)*steps / best;
}

/* The replay's steps per second for a library's game (reader + step +
 * output + hash checks), then with cradle-replay --synctest's check (each
 * step run again by a twin of the state at another address and compared,
 * the state moved every 100 steps) over the first sync_steps steps of the
 * same log. */
static void bench_replay(const char *lib_path, uint64_t steps, uint64_t sync_steps) {
    cradle_reload_config cfg = {.path = lib_path, .copy_dir = tmpdir};
    char msg[256];
    if (cradle_reload_open(&library, &cfg, 0, msg, sizeof msg) != 0) {
        printf("  %-40s cannot load: %s\n", lib_path, msg);
        return;
    }
    const cradle_game_contract *c = cradle_reload_contract(&library);
    char path[600];
    snprintf(path, sizeof path, "%s/bench_log_replay_%ld.log", tmpdir, (long)getpid());
    if (record_log(c, path, steps) == 0) {
        uint64_t replayed = 0, synced = 0;
        bool plain_ok, sync_ok;
        double plain = time_replay(path, lib_path, false, 0, &replayed, &plain_ok);
        double sync = time_replay(path, lib_path, true, sync_steps < steps ? sync_steps : 0, &synced, &sync_ok);
        printf("  %-12s %2" PRIu32 " players, %" PRIu64 " steps: %12.0f steps/s%s\n", c->name, c->max_players,
               replayed, plain, plain_ok ? "" : " (HASH MISMATCH)");
        printf("  %-12s --synctest, %" PRIu64 " steps (%" PRIu32 "-byte state): %12.0f steps/s, %.2fx the plain "
               "replay%s\n", c->name, synced, c->state_size, sync, plain > 0 ? sync / plain : 0.0,
               sync_ok ? "" : " (SYNC TEST FAILED)");
    }
    unlink(path);
    cradle_reload_close(&library);
}

/* What a server with --log pays for desync analysis (server/src/host.c
 * keep_state): at every hash step (every 30 by default) it copies the state
 * into one of CRADLE_SERVER_KEPT_STATES = 4 slots. The copy's time, per
 * copy and per step, and the memory the slots take. */
static void bench_kept_states(const char *lib_path) {
    cradle_reload_config cfg = {.path = lib_path, .copy_dir = tmpdir};
    char msg[256];
    if (cradle_reload_open(&library, &cfg, 0, msg, sizeof msg) != 0) return;
    size_t size = cradle_reload_contract(&library)->state_size;
    const char *name = cradle_reload_contract(&library)->name;
    enum { SLOTS = 4, COPIES = 4000, INTERVAL = 30 };
    uint8_t *state = malloc(size), *slots = malloc(SLOTS * size);
    if (state && slots) {
        for (size_t i = 0; i < size; i++) state[i] = (uint8_t)(i * 2654435761u >> 13);
        memset(slots, 0, SLOTS * size);
        double best = 1e9;
        for (int round = 0; round < 3; round++) {
            double t0 = cpu_s();
            for (int k = 0; k < COPIES; k++) {
                state[(size_t)k % size] ^= 1u; /* a step changed it */
                memcpy(slots + (size_t)(k % SLOTS) * size, state, size);
            }
            double each = (cpu_s() - t0) / COPIES;
            if (each < best) best = each;
        }
        sink += slots[size / 2];
        printf("  %-12s kept states for desync analysis: %zu-byte copy %.1f us, %.2f us a step at one hash "
               "every %d steps; %.2f MiB for %d states\n",
               name, size, best * 1e6, best * 1e6 / INTERVAL, (int)INTERVAL, (double)(SLOTS * size) / (1 << 20),
               (int)SLOTS);
    }
    free(state);
    free(slots);
    cradle_reload_close(&library);
}

/* Game-thread time per step at 60 steps/s: the clock is simulated (step *
 * 1/60 s), so an hour of play runs in well under a second of real time;
 * what is timed is exactly what the game thread pays. */
static void bench_writer(bool inline_sync, uint64_t steps) {
    char path[600];
    snprintf(path, sizeof path, "%s/bench_log_write_%ld.log", tmpdir, (long)getpid());
    cradle_log_header h = header_for(8, 4);
    cradle_log_writer_config cfg = {.overwrite = true, .sync_inline = inline_sync};
    cradle_log_writer w;
    char msg[256];
    if (cradle_log_writer_open(&w, path, &h, &cfg, NULL, msg, sizeof msg) != 0) {
        fprintf(stderr, "bench_log: %s\n", msg);
        return;
    }
    uint8_t snap[64];
    memset(snap, 0x11, sizeof snap);
    double t0 = now_s();
    for (uint64_t s = 0; s < steps; s++) {
        snap[1] = (uint8_t)s;
        if (cradle_log_writer_append_step(&w, s, snap) != 0) break;
        if ((s + 1) % 60 == 0 && cradle_log_writer_append_hash(&w, s, s) != 0) break;
        if (cradle_log_writer_maybe_sync(&w, s * 1000000000ull / 60u) != 0) break;
    }
    double t = now_s() - t0;
    uint64_t bytes = w.bytes_written;
    if (cradle_log_writer_close(&w, 0) != 0) fprintf(stderr, "bench_log: %s\n", w.message);
    printf("  %-30s %7" PRIu64 " steps (%4.0f s of play, %3" PRIu64 " syncs): %7.3f us/step\n",
           inline_sync ? "fdatasync on the game thread" : "fdatasync on the sync thread", steps,
           (double)steps / 60.0, steps / 60, t / (double)steps * 1e6);
    (void)bytes;
    unlink(path);
}

int main(int argc, char **argv) {
    if (sodium_init() < 0) return 1;
    snprintf(tmpdir, sizeof tmpdir, "%s", cradle_os_tmpdir());

    printf("checksum and reader throughput (thread CPU time, best of 3; BLAKE2b measured "
           "next to each):\n");
    const struct {
        uint32_t players, input;
        uint64_t steps;
    } shapes[] = {{8, 4, 2000000}, {8, 1, 4000000}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/bench_log_read_%ld.log", tmpdir, (long)getpid());
        cradle_log_header h = header_for(shapes[i].players, shapes[i].input);
        cradle_log_writer_config cfg = {.overwrite = true, .sync_inline = true};
        if (write_log(path, &h, shapes[i].steps, &cfg) != 0) return 1;
        uint64_t records = 0;
        double blake = blake_mb_s();
        double mb = read_mb_s(path, &records);
        double blake_after = blake_mb_s();
        if (blake_after > blake) blake = blake_after;
        printf("  BLAKE2b-128 over 64 KiB blocks   %8.0f MB/s\n", blake);
        struct stat st;
        stat(path, &st);
        printf("  reader, %2" PRIu32 "-byte snapshots (%5.1f MB)  %8.0f MB/s  (%.2fx BLAKE2b, "
               "%.1f M records/s)\n",
               h.snapshot_size, (double)st.st_size / 1e6, mb, mb / blake,
               (double)records / ((double)st.st_size / 1e6 / mb) / 1e6);
        unlink(path);
    }

    printf("replay (reader + step + output + hash checks; thread CPU time, best of 3), and the sync test:\n");
    bench_replay(BENCH_LOG_COUNTER, 2000000, 2000000);
    for (int i = 1; i < argc; i++) bench_replay(argv[i], 200000, 50000);
    printf("a server's cost of desync analysis (--log; thread CPU time, best of 3):\n");
    for (int i = 1; i < argc; i++) bench_kept_states(argv[i]);

    printf("log writing at 60 steps/s, 8 players x 4 input bytes, 1 s durability interval:\n");
    bench_writer(false, 216000);
    bench_writer(true, 3600);
    return 0;
}
