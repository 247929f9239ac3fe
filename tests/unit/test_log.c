/* test_log: session log writer and reader (log.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cradle/cradle.h"

enum { PLAYERS = 4, INPUT = 2, SNAP = 1 + PLAYERS * INPUT };

static char dir[256];

static int setup_dir(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/cradle-test-log-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown_dir(void **state) {
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

static cradle_log_header test_header(void) {
    cradle_log_header h;
    memset(&h, 0, sizeof h);
    strcpy(h.game_name, "testgame");
    strcpy(h.build_id, "build-one");
    h.abi_major = 1;
    h.state_size = 40;
    h.state_align = 8;
    h.input_bytes = INPUT;
    h.max_players = PLAYERS;
    h.steps_per_second = 60;
    h.source_frames_per_second = 20;
    h.seed = 42;
    h.player_count = 3;
    h.snapshot_size = SNAP;
    h.created_unix_ns = 1700000000000000000ull;
    h.hash_interval = 10;
    return h;
}

static void snapshot_for(uint64_t step, uint8_t out[SNAP]) {
    for (unsigned i = 0; i < SNAP; i++) out[i] = (uint8_t)(step * 31u + i * 7u + (step >> 8));
}

static uint64_t hash_for(uint64_t step) { return step * 0x9E3779B97F4A7C15ull + 1; }

/* Writes `steps` steps (a hash every 10), flushing every `flush_every`
 * steps (0 = never) so blocks stay small; closes when `close_it` (signed
 * when sign_secret is not NULL, whose key then also signs every block). The
 * header's seed is `seed`. */
static void write_log_as(const char *path, uint64_t steps, uint32_t flush_every, bool close_it,
                         const uint8_t *sign_secret, uint64_t seed) {
    cradle_log_writer w;
    cradle_log_header h = test_header();
    h.seed = seed;
    char msg[256];
    cradle_log_writer_config cfg = {.block_size = 512, .sync_inline = true, .overwrite = true, .sign_secret = sign_secret};
    assert_int_equal(cradle_log_writer_open(&w, path, &h, &cfg, NULL, msg, sizeof msg), 0);
    uint8_t snap[SNAP];
    for (uint64_t s = 0; s < steps; s++) {
        snapshot_for(s, snap);
        assert_int_equal(cradle_log_writer_append_step(&w, s, snap), 0);
        if ((s + 1) % 10 == 0) assert_int_equal(cradle_log_writer_append_hash(&w, s, hash_for(s)), 0);
        if (flush_every && (s + 1) % flush_every == 0)
            assert_int_equal(cradle_log_writer_flush(&w, 0), 0);
    }
    if (close_it) {
        assert_int_equal(sign_secret ? cradle_log_writer_close_signed(&w, 777, sign_secret)
                                     : cradle_log_writer_close(&w, 777),
                         0);
    } else {
        assert_int_equal(cradle_log_writer_flush(&w, 0), 0);
        cradle_log_writer_abandon(&w);
    }
}

static void write_log(const char *path, uint64_t steps, uint32_t flush_every, bool close_it) {
    write_log_as(path, steps, flush_every, close_it, NULL, test_header().seed);
}

static uint8_t *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc((size_t)n + 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return data;
}

static void write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

typedef struct drained {
    int rc;           /* the last next() result: 0 or an error */
    uint64_t steps;   /* STEP records seen */
    uint64_t hashes;
    bool trailer;
    uint64_t trailer_hash;
    bool snapshots_ok;
} drained;

/* Reads to the end or an error; the steps must run on from `first`. */
static drained drain_from(cradle_log_reader *r, uint64_t first) {
    drained d = {.snapshots_ok = true};
    cradle_log_record rec;
    int rc;
    uint8_t want[SNAP];
    while ((rc = cradle_log_reader_next(r, &rec)) == 1) {
        if (rec.kind == CRADLE_LOG_RECORD_STEP) {
            snapshot_for(rec.step, want);
            if (rec.step != first + d.steps || memcmp(want, rec.snapshot, SNAP) != 0) d.snapshots_ok = false;
            d.steps++;
        } else if (rec.kind == CRADLE_LOG_RECORD_HASH) {
            if (rec.hash != hash_for(rec.step)) d.snapshots_ok = false;
            d.hashes++;
        } else if (rec.kind == CRADLE_LOG_RECORD_TRAILER) {
            d.trailer = true;
            d.trailer_hash = rec.hash;
        }
    }
    d.rc = rc;
    return d;
}

static drained drain(cradle_log_reader *r) { return drain_from(r, 0); }

/* ---- round trip ------------------------------------------------------------ */

#define DATA_TEXT "{\"waves\":[1,2]}"

/* BLAKE2b-256 of DATA_TEXT, as a host computes it. */
static const uint8_t *data_hash(void) {
    static uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES];
    crypto_generichash(hash, sizeof hash, (const uint8_t *)DATA_TEXT, strlen(DATA_TEXT), NULL, 0);
    return hash;
}

static void test_round_trip(void **state) {
    (void)state;
    char path[300], lib[300], msg[256];
    path_of(path, sizeof path, "round.log");
    path_of(lib, sizeof lib, "fake-library.so");
    write_file(lib, "not really a library", 20);

    cradle_log_writer w;
    cradle_log_header h = test_header();
    assert_int_equal(cradle_log_writer_open(&w, path, &h, NULL, lib, msg, sizeof msg), 0);
    uint8_t snap[SNAP];
    for (uint64_t s = 0; s < 1000; s++) {
        if (s == 500) {
            write_file(lib, "the second library", 18);
            assert_int_equal(cradle_log_writer_append_reload(&w, s, "build-two", lib), 0);
        }
        if (s == 700) /* a game data file, archived beside the log under its hash */
            assert_int_equal(cradle_log_writer_append_data(&w, s, 1, "game/waves.json", (const uint8_t *)DATA_TEXT,
                                                           (uint32_t)strlen(DATA_TEXT), data_hash()),
                             0);
        snapshot_for(s, snap);
        assert_int_equal(cradle_log_writer_append_step(&w, s, snap), 0);
        if ((s + 1) % 10 == 0) assert_int_equal(cradle_log_writer_append_hash(&w, s, hash_for(s)), 0);
    }
    /* Buffered: 1000 steps of 10 bytes fit the default 64 KiB block, so
     * nothing but the header has been written yet. */
    assert_int_equal(w.bytes_written, CRADLE_LOG_HEADER_BYTES);
    assert_int_equal(cradle_log_writer_close(&w, 12345), 0);

    cradle_log_reader r;
    assert_int_equal(cradle_log_reader_open(&r, path, msg, sizeof msg), 0);
    assert_string_equal(r.header.game_name, "testgame");
    assert_string_equal(r.header.build_id, "build-one");
    assert_int_equal(r.header.seed, 42);
    assert_int_equal(r.header.player_count, 3);
    assert_int_equal(r.header.snapshot_size, SNAP);
    assert_int_equal(r.header.hash_interval, 10);
    assert_int_equal(r.header.created_unix_ns, 1700000000000000000ull);

    uint8_t first_hash[CRADLE_LOG_FILE_HASH_BYTES], archived[CRADLE_LOG_FILE_HASH_BYTES];
    char build_path[512];
    assert_int_equal(cradle_log_build_path(build_path, sizeof build_path, path,
                                           r.header.build_file_hash), 0);
    assert_int_equal(cradle_log_file_hash(build_path, archived), 0);
    assert_memory_equal(archived, r.header.build_file_hash, sizeof archived);
    memcpy(first_hash, archived, sizeof first_hash);

    cradle_log_record rec;
    uint64_t steps = 0, hashes = 0, reloads = 0, data = 0;
    uint8_t read_back[64];
    int rc;
    while ((rc = cradle_log_reader_next(&r, &rec)) == 1) {
        switch (rec.kind) {
        case CRADLE_LOG_RECORD_DATA:
            assert_int_equal(rec.step, 700);
            assert_int_equal(steps, 700);
            assert_int_equal(rec.data_file, 1);
            assert_string_equal(rec.data_name, "game/waves.json");
            assert_int_equal(rec.data_size, strlen(DATA_TEXT));
            assert_memory_equal(rec.file_hash, data_hash(), CRADLE_LOG_FILE_HASH_BYTES);
            assert_int_equal(cradle_log_read_data(path, rec.file_hash, rec.data_size, read_back, sizeof read_back,
                                                  msg, sizeof msg), 0);
            assert_memory_equal(read_back, DATA_TEXT, strlen(DATA_TEXT));
            /* Another size than the record's is refused, naming the archive. */
            assert_int_equal(cradle_log_read_data(path, rec.file_hash, rec.data_size - 1, read_back,
                                                  sizeof read_back, msg, sizeof msg), CRADLE_ELOG_CORRUPT);
            assert_non_null(strstr(msg, ".data/"));
            data++;
            break;
        case CRADLE_LOG_RECORD_STEP:
            assert_int_equal(rec.step, steps);
            snapshot_for(rec.step, snap);
            assert_memory_equal(rec.snapshot, snap, SNAP);
            steps++;
            break;
        case CRADLE_LOG_RECORD_HASH:
            assert_int_equal(rec.step, steps - 1);
            assert_int_equal(rec.hash, hash_for(rec.step));
            hashes++;
            break;
        case CRADLE_LOG_RECORD_RELOAD:
            assert_int_equal(rec.step, 500);
            assert_int_equal(steps, 500);
            assert_string_equal(rec.build_id, "build-two");
            assert_int_equal(cradle_log_build_path(build_path, sizeof build_path, path,
                                                   rec.file_hash), 0);
            assert_int_equal(cradle_log_file_hash(build_path, archived), 0);
            assert_memory_equal(archived, rec.file_hash, sizeof archived);
            assert_memory_not_equal(first_hash, rec.file_hash, sizeof archived);
            reloads++;
            break;
        case CRADLE_LOG_RECORD_REFUSED: /* this log holds none */
            fail_msg("a refusal record at step %llu", (unsigned long long)rec.step);
            break;
        case CRADLE_LOG_RECORD_SIGN:
            fail_msg("the reader delivered a signature record");
            break;
        case CRADLE_LOG_RECORD_TRAILER:
            assert_int_equal(rec.step, 1000);
            assert_int_equal(rec.hash, 12345);
            assert_int_equal(rec.signature_length, 0);
            break;
        }
    }
    assert_int_equal(rc, 0);
    assert_int_equal(r.end, CRADLE_LOG_END_CLOSED);
    assert_int_equal(steps, 1000);
    assert_int_equal(hashes, 100);
    assert_int_equal(reloads, 1);
    assert_int_equal(data, 1);
    cradle_log_reader_close(&r);
    /* An archive altered after the session is refused by its hash. */
    char archive[600];
    assert_int_equal(cradle_log_data_path(archive, sizeof archive, path, data_hash()), 0);
    write_file(archive, "{\"waves\":[3]}", 13);
    assert_int_equal(cradle_log_read_data(path, data_hash(), (uint32_t)strlen(DATA_TEXT), read_back, sizeof read_back,
                                          msg, sizeof msg), CRADLE_ELOG_CORRUPT);
}

/* The reader hands out runs of STEP records on a fast path and folds them
 * back before any other record: every way a block can end (on a STEP, on a
 * HASH, on a HASH right after the block started) must read back exactly.
 * Block sizes from the minimum up by one byte at a time, hash intervals 1..5,
 * from a file and from memory. */
static void test_every_block_boundary_reads_back(void **state) {
    (void)state;
    char path[300], msg[256];
    path_of(path, sizeof path, "bounds.log");
    for (uint32_t block = CRADLE_LOG_BLOCK_MIN; block < CRADLE_LOG_BLOCK_MIN + 48; block++) {
        for (uint64_t every = 1; every <= 5; every++) {
            cradle_log_writer w;
            cradle_log_header h = test_header();
            cradle_log_writer_config cfg = {.block_size = block, .sync_inline = true, .overwrite = true};
            assert_int_equal(cradle_log_writer_open(&w, path, &h, &cfg, NULL, msg, sizeof msg), 0);
            uint8_t snap[SNAP];
            uint64_t hashes = 0;
            for (uint64_t step = 0; step < 150; step++) {
                snapshot_for(step, snap);
                assert_int_equal(cradle_log_writer_append_step(&w, step, snap), 0);
                if ((step + 1) % every == 0) {
                    assert_int_equal(cradle_log_writer_append_hash(&w, step, hash_for(step)), 0);
                    hashes++;
                }
            }
            assert_int_equal(cradle_log_writer_close(&w, 42), 0);

            cradle_log_reader r;
            assert_int_equal(cradle_log_reader_open(&r, path, msg, sizeof msg), 0);
            drained d = drain(&r);
            cradle_log_reader_close(&r);
            assert_int_equal(d.rc, 0);
            assert_true(d.snapshots_ok);
            assert_int_equal(d.steps, 150);
            assert_int_equal(d.hashes, hashes);
            assert_true(d.trailer);

            size_t n = 0;
            uint8_t *data = read_file(path, &n);
            assert_int_equal(cradle_log_reader_open_memory(&r, data, n, msg, sizeof msg), 0);
            d = drain(&r);
            cradle_log_reader_close(&r);
            free(data);
            assert_int_equal(d.rc, 0);
            assert_true(d.snapshots_ok);
            assert_int_equal(d.steps, 150);
            assert_int_equal(d.hashes, hashes);
            assert_int_equal(unlink(path), 0);
        }
    }
}

static void test_open_refuses_existing_file(void **state) {
    (void)state;
    char path[300], msg[256];
    path_of(path, sizeof path, "exists.log");
    write_file(path, "x", 1);
    cradle_log_writer w;
    cradle_log_header h = test_header();
    assert_int_equal(cradle_log_writer_open(&w, path, &h, NULL, NULL, msg, sizeof msg), CRADLE_EIO);
    assert_non_null(strstr(msg, "exists"));
    /* the existing file is left alone */
    size_t n;
    uint8_t *data = read_file(path, &n);
    assert_int_equal(n, 1);
    free(data);
    cradle_log_writer_config cfg = {.overwrite = true};
    assert_int_equal(cradle_log_writer_open(&w, path, &h, &cfg, NULL, msg, sizeof msg), 0);
    assert_int_equal(cradle_log_writer_close(&w, 0), 0);
}

static void test_open_refuses_bad_header(void **state) {
    (void)state;
    char path[300], msg[256];
    path_of(path, sizeof path, "badheader.log");
    cradle_log_writer w;
    cradle_log_header h = test_header();
    h.snapshot_size = 3;
    assert_int_equal(cradle_log_writer_open(&w, path, &h, NULL, NULL, msg, sizeof msg),
                     CRADLE_EINVAL);
    assert_non_null(strstr(msg, "snapshot size 3"));
    h = test_header();
    cradle_log_writer_config cfg = {.block_size = 100};
    assert_int_equal(cradle_log_writer_open(&w, path, &h, &cfg, NULL, msg, sizeof msg),
                     CRADLE_EINVAL);
    assert_non_null(strstr(msg, "block max 100"));
    assert_int_equal(access(path, F_OK), -1); /* nothing left behind */
}

/* ---- header errors name the field ----------------------------------------- */

static int open_bytes(const uint8_t *data, size_t n, char *msg, size_t msg_size) {
    cradle_log_reader r;
    int rc = cradle_log_reader_open_memory(&r, data, n, msg, msg_size);
    if (rc == 0) cradle_log_reader_close(&r);
    return rc;
}

static void test_header_errors(void **state) {
    (void)state;
    char path[300], msg[256];
    path_of(path, sizeof path, "header.log");
    write_log(path, 30, 0, true);
    size_t n;
    uint8_t *data = read_file(path, &n);
    assert_int_equal(open_bytes(data, n, msg, sizeof msg), 0);

    data[1] ^= 0xff;
    assert_int_equal(open_bytes(data, n, msg, sizeof msg), CRADLE_ELOG_MAGIC);
    assert_non_null(strstr(msg, "bad magic"));
    data[1] ^= 0xff;

    data[8] = 9;
    assert_int_equal(open_bytes(data, n, msg, sizeof msg), CRADLE_ELOG_VERSION);
    assert_non_null(strstr(msg, "unknown format version 9"));
    data[8] = 1;

    data[20] ^= 1; /* inside the game name */
    assert_int_equal(open_bytes(data, n, msg, sizeof msg), CRADLE_ELOG_HEADER);
    assert_non_null(strstr(msg, "checksum"));
    data[20] ^= 1;

    assert_int_equal(open_bytes(data, 100, msg, sizeof msg), CRADLE_ETRUNCATED);
    assert_non_null(strstr(msg, "inside the header"));
    assert_int_equal(open_bytes(data, 0, msg, sizeof msg), CRADLE_ETRUNCATED);
    assert_int_equal(open_bytes((const uint8_t *)"GIF89a", 6, msg, sizeof msg), CRADLE_ELOG_MAGIC);

    /* a field that is wrong even with a valid checksum is named */
    cradle_cursor_store_u32(data + 152, 9); /* player count 9 > max players 4 */
    uint8_t sum[16];
    crypto_generichash(sum, 16, data, 240, NULL, 0);
    memcpy(data + 240, sum, 16);
    assert_int_equal(open_bytes(data, n, msg, sizeof msg), CRADLE_ELOG_HEADER);
    assert_non_null(strstr(msg, "player count 9"));
    free(data);

    cradle_log_reader r;
    assert_int_equal(cradle_log_reader_open(&r, "/nonexistent/x.log", msg, sizeof msg), CRADLE_EIO);
    assert_non_null(strstr(msg, "/nonexistent/x.log"));
}

static size_t fake_counter_output(const void *s, uint64_t step, uint8_t *o, size_t c) {
    (void)s; (void)step; (void)o; (void)c;
    return 0;
}

static void test_check_library(void **state) {
    (void)state;
    cradle_log_header h = test_header();
    cradle_game_contract c = {
        .abi_major = 1, .state_size = 40, .state_align = 8, .input_bytes = INPUT,
        .max_players = PLAYERS, .steps_per_second = 60, .source_frames_per_second = 20,
        .name = "testgame", .build_id = "build-one", .output = fake_counter_output,
    };
    char msg[512];
    assert_int_equal(cradle_log_check_library(&h, h.build_id, &c, msg, sizeof msg), 0);
    c.build_id = "build-9";
    assert_int_equal(cradle_log_check_library(&h, h.build_id, &c, msg, sizeof msg),
                     CRADLE_ERELOAD_MISMATCH);
    assert_non_null(strstr(msg, "build-9"));
    assert_non_null(strstr(msg, "build-one"));
    c.name = "othergame";
    assert_int_equal(cradle_log_check_library(&h, h.build_id, &c, msg, sizeof msg),
                     CRADLE_ELOG_GAME);
    assert_non_null(strstr(msg, "othergame"));
    assert_non_null(strstr(msg, "testgame"));
    c.name = "testgame";
    c.build_id = "build-one";
    c.max_players = 8;
    assert_int_equal(cradle_log_check_library(&h, h.build_id, &c, msg, sizeof msg),
                     CRADLE_ELOG_GAME);
}

/* ---- damage and tails ------------------------------------------------------- */

/* Block boundaries of a log: offsets[i] is the end of block i, steps[i] the
 * steps in blocks 0..i. */
typedef struct layout {
    uint64_t offsets[256];
    uint64_t steps[256];
    unsigned count;
} layout;

static layout layout_of(const uint8_t *data, size_t n) {
    layout l = {.count = 0};
    cradle_log_reader r;
    assert_int_equal(cradle_log_reader_open_memory(&r, data, n, NULL, 0), 0);
    uint64_t position = cradle_log_reader_position(&r);
    cradle_log_record rec;
    int rc;
    while ((rc = cradle_log_reader_next(&r, &rec)) == 1) {
        uint64_t p = cradle_log_reader_position(&r);
        if (p != position) {
            /* A new block was loaded: the previous one ended at `position`
             * with r.steps - (1 if rec is a step) steps before it. */
            if (position != CRADLE_LOG_HEADER_BYTES) {
                assert_true(l.count < 256);
                l.offsets[l.count] = position;
                l.steps[l.count] = r.steps - (rec.kind == CRADLE_LOG_RECORD_STEP ? 1 : 0);
                l.count++;
            }
            position = p;
        }
    }
    assert_int_equal(rc, 0);
    l.offsets[l.count] = position;
    l.steps[l.count] = r.steps;
    l.count++;
    cradle_log_reader_close(&r);
    return l;
}

static void test_truncated_at_every_offset_recovers_complete_steps(void **state) {
    (void)state;
    char path[300];
    path_of(path, sizeof path, "trunc.log");
    write_log(path, 300, 7, false); /* unclosed, small blocks of 7 steps */
    size_t n;
    uint8_t *data = read_file(path, &n);
    layout l = layout_of(data, n);
    assert_true(l.count > 30);
    assert_int_equal(l.offsets[l.count - 1], n);
    assert_int_equal(l.steps[l.count - 1], 300);

    for (size_t cut = CRADLE_LOG_HEADER_BYTES; cut <= n; cut++) {
        uint64_t expect_steps = 0, block_end = CRADLE_LOG_HEADER_BYTES;
        for (unsigned i = 0; i < l.count && l.offsets[i] <= cut; i++) {
            expect_steps = l.steps[i];
            block_end = l.offsets[i];
        }
        uint8_t *copy = malloc(cut ? cut : 1); /* exact size: ASan sees any overread */
        memcpy(copy, data, cut);
        cradle_log_reader r;
        assert_int_equal(cradle_log_reader_open_memory(&r, copy, cut, NULL, 0), 0);
        drained d = drain(&r);
        assert_int_equal(d.rc, 0);
        assert_true(d.snapshots_ok);
        assert_int_equal(d.steps, expect_steps);
        if (cut == block_end) {
            assert_int_equal(r.end, CRADLE_LOG_END_UNCLOSED);
        } else {
            assert_int_equal(r.end, CRADLE_LOG_END_TORN);
            assert_int_equal(r.tail_offset, block_end);
            char want[128];
            snprintf(want, sizeof want,
                     "recovered %llu complete steps; ignored the tail from byte %llu",
                     (unsigned long long)expect_steps, (unsigned long long)block_end);
            assert_string_equal(r.message, want);
        }
        cradle_log_reader_close(&r);
        free(copy);
    }
    for (size_t cut = 1; cut < CRADLE_LOG_HEADER_BYTES; cut += 17) {
        char msg[256];
        assert_int_equal(open_bytes(data, cut, msg, sizeof msg), CRADLE_ETRUNCATED);
    }
    free(data);
}

static void test_flipped_byte_names_offset_and_step(void **state) {
    (void)state;
    char path[300], msg[256];
    path_of(path, sizeof path, "flip.log");
    write_log(path, 200, 20, true);
    size_t n;
    uint8_t *data = read_file(path, &n);
    layout l = layout_of(data, n);
    assert_true(l.count > 5);
    /* Damage block 3 at several places: its header fields, its checksum, its
     * records. Block 3 starts where block 2 ended. */
    uint64_t start = l.offsets[2], end = l.offsets[3];
    uint64_t first_step = l.steps[2];
    uint64_t spots[] = {start, start + 5, start + 9, start + 20, start + 30, start + 40,
                        start + 48, (start + end) / 2, end - 1};
    for (size_t i = 0; i < sizeof spots / sizeof spots[0]; i++) {
        data[spots[i]] ^= 0x10;
        cradle_log_reader r;
        assert_int_equal(cradle_log_reader_open_memory(&r, data, n, msg, sizeof msg), 0);
        drained d = drain(&r);
        if (d.rc != CRADLE_ELOG_CHECKSUM) print_error("flip at %llu (block %llu..%llu): %s\n", (unsigned long long)spots[i], (unsigned long long)start, (unsigned long long)end, r.message);
        assert_int_equal(d.rc, CRADLE_ELOG_CHECKSUM);
        assert_int_equal(r.error_offset, start);
        assert_int_equal(r.error_step, first_step);
        assert_int_equal(d.steps, first_step); /* everything before was delivered */
        char want[64];
        snprintf(want, sizeof want, "damaged block at byte %llu", (unsigned long long)start);
        assert_non_null(strstr(r.message, want));
        snprintf(want, sizeof want, "from step %llu", (unsigned long long)first_step);
        assert_non_null(strstr(r.message, want));
        cradle_log_reader_close(&r);
        data[spots[i]] ^= 0x10;
    }
    /* A flipped byte in the last block (the trailer) cannot be told from a
     * torn write: it reads as a tail, and the log as not closed. */
    data[n - 3] ^= 1;
    cradle_log_reader r;
    assert_int_equal(cradle_log_reader_open_memory(&r, data, n, msg, sizeof msg), 0);
    drained d = drain(&r);
    assert_int_equal(d.rc, 0);
    assert_int_equal(r.end, CRADLE_LOG_END_TORN);
    assert_int_equal(d.steps, 200);
    assert_false(d.trailer);
    cradle_log_reader_close(&r);
    free(data);
}

static void test_verified_but_misplaced_block_is_corrupt(void **state) {
    (void)state;
    char path[300];
    path_of(path, sizeof path, "dup.log");
    write_log(path, 100, 10, false);
    size_t n;
    uint8_t *data = read_file(path, &n);
    layout l = layout_of(data, n);
    /* Append a copy of block 1 at the end: it verifies, but its sequence is
     * wrong, so it is corruption rather than a tail. */
    size_t len = (size_t)(l.offsets[1] - l.offsets[0]);
    uint8_t *bigger = malloc(n + len);
    memcpy(bigger, data, n);
    memcpy(bigger + n, data + l.offsets[0], len);
    cradle_log_reader r;
    assert_int_equal(cradle_log_reader_open_memory(&r, bigger, n + len, NULL, 0), 0);
    drained d = drain(&r);
    assert_int_equal(d.rc, CRADLE_ELOG_CORRUPT);
    assert_int_equal(r.error_offset, n);
    assert_non_null(strstr(r.message, "sequence"));
    cradle_log_reader_close(&r);
    free(bigger);

    /* Bytes after a trailer are refused. */
    write_log(path, 50, 0, true);
    free(data);
    data = read_file(path, &n);
    bigger = malloc(n + 10);
    memcpy(bigger, data, n);
    memset(bigger + n, 0, 10);
    assert_int_equal(cradle_log_reader_open_memory(&r, bigger, n + 10, NULL, 0), 0);
    d = drain(&r);
    assert_int_equal(d.rc, CRADLE_ELOG_CORRUPT);
    assert_non_null(strstr(r.message, "after the trailer"));
    cradle_log_reader_close(&r);
    free(bigger);
    free(data);
}

/* ---- durability --------------------------------------------------------------- */

static void test_sync_interval_and_flush(void **state) {
    (void)state;
    for (int threaded = 0; threaded < 2; threaded++) {
        char path[300], msg[256];
        path_of(path, sizeof path, "sync.log");
        cradle_log_writer w;
        cradle_log_header h = test_header();
        cradle_log_writer_config cfg = {.durable_interval_ns = 1000,
                                        .sync_inline = !threaded,
                                        .overwrite = true};
        assert_int_equal(cradle_log_writer_open(&w, path, &h, &cfg, NULL, msg, sizeof msg), 0);
        uint8_t snap[SNAP] = {0};
        assert_int_equal(cradle_log_writer_maybe_sync(&w, 5000), 0); /* nothing to write */
        for (uint64_t s = 0; s < 10; s++) assert_int_equal(cradle_log_writer_append_step(&w, s, snap), 0);
        assert_int_equal(cradle_log_writer_maybe_sync(&w, 5500), 0); /* within the interval */
        assert_int_equal(w.bytes_written, CRADLE_LOG_HEADER_BYTES);
        assert_int_equal(cradle_log_writer_durable_steps(&w), 0);
        assert_int_equal(cradle_log_writer_maybe_sync(&w, 6000), 0); /* interval elapsed */
        assert_true(w.bytes_written > CRADLE_LOG_HEADER_BYTES);
        assert_int_equal(w.steps_written, 10);
        if (threaded) {
            for (int i = 0; i < 5000 && cradle_log_writer_durable_steps(&w) < 10; i++)
                cradle_sleep_ns(1000000u);
        }
        assert_int_equal(cradle_log_writer_durable_steps(&w), 10);
        for (uint64_t s = 10; s < 15; s++) assert_int_equal(cradle_log_writer_append_step(&w, s, snap), 0);
        assert_int_equal(cradle_log_writer_flush(&w, 6100), 0);
        assert_int_equal(cradle_log_writer_durable_steps(&w), 15);
        assert_int_equal(cradle_log_writer_close(&w, 1), 0);

        cradle_log_reader r;
        assert_int_equal(cradle_log_reader_open(&r, path, msg, sizeof msg), 0);
        cradle_log_record rec;
        uint64_t steps = 0;
        int rc;
        while ((rc = cradle_log_reader_next(&r, &rec)) == 1) steps += rec.kind == CRADLE_LOG_RECORD_STEP;
        assert_int_equal(rc, 0);
        assert_int_equal(steps, 15);
        assert_int_equal(r.end, CRADLE_LOG_END_CLOSED);
        cradle_log_reader_close(&r);
    }
}

/* A write that fails (ENOSPC, via /dev/full) refuses the record that needed
 * it and keeps the sealed block buffered; once the disk has room again the
 * next flush writes it and nothing recorded is lost. */
static void test_write_error_loses_nothing(void **state) {
    (void)state;
    char path[300], msg[256];
    path_of(path, sizeof path, "enospc.log");
    cradle_log_writer w;
    cradle_log_header h = test_header();
    cradle_log_writer_config cfg = {.block_size = 256, .sync_inline = true, .overwrite = true};
    assert_int_equal(cradle_log_writer_open(&w, path, &h, &cfg, NULL, msg, sizeof msg), 0);
    int real_fd = w.fd;
    int full = open("/dev/full", O_WRONLY);
    if (full < 0) skip();
    uint8_t snap[SNAP];
    uint64_t s = 0;
    for (; s < 25; s++) { /* 25 x 10 bytes fit one 256-byte block */
        snapshot_for(s, snap);
        assert_int_equal(cradle_log_writer_append_step(&w, s, snap), 0);
    }
    w.fd = full; /* the disk is full from now on */
    snapshot_for(s, snap);
    assert_int_equal(cradle_log_writer_append_step(&w, s, snap), CRADLE_EIO);
    assert_non_null(strstr(w.message, "log write failed"));
    assert_int_equal(w.steps, 25); /* the refused step was not appended */
    assert_int_equal(cradle_log_writer_append_step(&w, s, snap), CRADLE_EIO); /* still full */
    w.fd = real_fd; /* room again */
    close(full);
    for (; s < 40; s++) {
        snapshot_for(s, snap);
        assert_int_equal(cradle_log_writer_append_step(&w, s, snap), 0);
    }
    assert_int_equal(cradle_log_writer_close(&w, 5), 0);
    cradle_log_reader r;
    assert_int_equal(cradle_log_reader_open(&r, path, msg, sizeof msg), 0);
    drained d = drain(&r);
    assert_int_equal(d.rc, 0);
    assert_true(d.snapshots_ok);
    assert_int_equal(d.steps, 40);
    assert_true(d.trailer);
    cradle_log_reader_close(&r);
}

/* A child writes a log with a short durability interval and reports each new
 * durable step count through a pipe; the parent kills it with SIGKILL at a
 * random moment. The log must always recover at least the last reported
 * durable step and never read as damaged. */
static void test_killed_writer_recovers_durable_steps(void **state) {
    (void)state;
    cradle_rng rng;
    cradle_rng_seed(&rng, 2024, 7);
    const int runs = 60;
    uint64_t total_durable = 0;
    for (int run = 0; run < runs; run++) {
        char path[300];
        snprintf(path, sizeof path, "%s/kill-%d.log", dir, run);
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        bool threaded = run % 2 == 0;
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            cradle_log_writer w;
            cradle_log_header h = test_header();
            cradle_log_writer_config cfg = {.block_size = 1024 + (uint32_t)run * 64,
                                            .durable_interval_ns = 2000000,
                                            .sync_inline = !threaded};
            if (cradle_log_writer_open(&w, path, &h, &cfg, NULL, NULL, 0) != 0) _exit(3);
            uint64_t ready = UINT64_MAX, durable = 0;
            if (write(fds[1], &ready, sizeof ready) != sizeof ready) _exit(4);
            uint8_t snap[SNAP];
            for (uint64_t s = 0;; s++) {
                snapshot_for(s, snap);
                if (cradle_log_writer_append_step(&w, s, snap) != 0) _exit(5);
                if ((s + 1) % 10 == 0 && cradle_log_writer_append_hash(&w, s, hash_for(s)) != 0)
                    _exit(6);
                if (cradle_log_writer_maybe_sync(&w, cradle_mono_ns()) != 0) _exit(7);
                uint64_t d = cradle_log_writer_durable_steps(&w);
                if (d != durable) {
                    durable = d;
                    if (write(fds[1], &d, sizeof d) != sizeof d) _exit(8);
                }
                if (s % 64 == 63) cradle_sleep_ns(50000u);
            }
        }
        close(fds[1]);
        uint64_t v = 0;
        assert_int_equal(read(fds[0], &v, sizeof v), sizeof v);
        assert_true(v == UINT64_MAX);
        cradle_sleep_ns(1000000u + cradle_rng_below(&rng, 30000000u));
        kill(pid, SIGKILL);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        uint64_t durable = 0;
        while (read(fds[0], &v, sizeof v) == sizeof v) durable = v;
        close(fds[0]);

        char msg[256];
        cradle_log_reader r;
        assert_int_equal(cradle_log_reader_open(&r, path, msg, sizeof msg), 0);
        drained d = drain(&r);
        if (d.rc != 0) print_error("run %d: %s\n", run, r.message);
        assert_int_equal(d.rc, 0);
        assert_true(d.snapshots_ok);
        assert_true(d.steps >= durable);
        assert_true(r.end == CRADLE_LOG_END_TORN || r.end == CRADLE_LOG_END_UNCLOSED);
        cradle_log_reader_close(&r);
        unlink(path);
        total_durable += durable;
    }
    assert_true(total_durable > 0); /* the test did observe durable data */
}

/* rescue: a host whose thread hangs in step s has appended s's record
 * after its mark; another thread writes the log up to the mark. At every
 * step count around the 512-byte blocks' boundaries (so the hung step's
 * record sometimes opened a new block), the file reads back as exactly the
 * steps before the mark, unclosed. */
static void test_rescue_keeps_the_steps_before_the_mark(void **state) {
    (void)state;
    char path[300];
    path_of(path, sizeof path, "rescue.log");
    for (uint64_t complete = 1; complete <= 60; complete++) {
        cradle_log_writer w;
        cradle_log_header h = test_header();
        char msg[256];
        cradle_log_writer_config cfg = {.block_size = 512, .overwrite = true}; /* the sync thread runs */
        assert_int_equal(cradle_log_writer_open(&w, path, &h, &cfg, NULL, msg, sizeof msg), 0);
        uint8_t snap[SNAP];
        cradle_log_mark mark = cradle_log_writer_mark(&w);
        for (uint64_t s = 0; s <= complete; s++) {
            mark = cradle_log_writer_mark(&w); /* before step s: everything up to s - 1 */
            snapshot_for(s, snap);
            assert_int_equal(cradle_log_writer_append_step(&w, s, snap), 0);
            if (s < complete && (s + 1) % 10 == 0)
                assert_int_equal(cradle_log_writer_append_hash(&w, s, hash_for(s)), 0);
        }
        assert_int_equal(mark.steps, complete);
        assert_int_equal(cradle_log_writer_rescue(&w, mark), 0);
        cradle_log_writer_abandon(&w);
        cradle_log_reader r;
        assert_int_equal(cradle_log_reader_open(&r, path, msg, sizeof msg), 0);
        drained d = drain(&r);
        assert_int_equal(d.rc, 0);
        assert_int_equal(d.steps, complete);
        assert_int_equal(d.hashes, complete / 10);
        assert_true(d.snapshots_ok);
        assert_false(d.trailer);
        assert_int_equal(r.end, CRADLE_LOG_END_UNCLOSED);
        cradle_log_reader_close(&r);
    }
}

/* ---- part of a log: start anywhere, grow ----------------------------------- */

/* Where block i starts in the file, and its first step. */
static uint64_t block_start(const layout *l, unsigned i) { return i ? l->offsets[i - 1] : CRADLE_LOG_HEADER_BYTES; }
static uint64_t block_first_step(const layout *l, unsigned i) { return i ? l->steps[i - 1] : 0; }

/* The log's header followed by its blocks first..end-1 (a broadcast's start
 * and fragments), in a buffer of exactly that size. */
static uint8_t *part_of(const uint8_t *data, const layout *l, unsigned first, unsigned end, size_t *size) {
    uint64_t from = block_start(l, first), to = block_start(l, end);
    size_t n = CRADLE_LOG_HEADER_BYTES + (size_t)(to - from);
    uint8_t *part = malloc(n);
    assert_non_null(part);
    memcpy(part, data, CRADLE_LOG_HEADER_BYTES);
    memcpy(part + CRADLE_LOG_HEADER_BYTES, data + from, (size_t)(to - from));
    *size = n;
    return part;
}

static void test_start_anywhere_reads_from_that_block_on(void **state) {
    (void)state;
    char path[300], msg[256];
    path_of(path, sizeof path, "anywhere.log");
    write_log(path, 300, 7, true); /* blocks of 7 steps, a hash every 10, a trailer */
    size_t n;
    uint8_t *data = read_file(path, &n);
    layout l = layout_of(data, n);
    assert_true(l.count > 40);
    for (unsigned first = 0; first < l.count; first++) {
        size_t size;
        uint8_t *part = part_of(data, &l, first, l.count, &size);
        cradle_log_reader r;
        assert_int_equal(cradle_log_reader_open_memory(&r, part, size, msg, sizeof msg), 0);
        cradle_log_reader_start_anywhere(&r);
        drained d = drain_from(&r, block_first_step(&l, first));
        if (d.rc != 0) fail_msg("from block %u: %s", first, r.message);
        assert_true(d.snapshots_ok);
        assert_int_equal(d.steps, 300 - block_first_step(&l, first));
        assert_true(d.trailer); /* its digest covers blocks this reader never saw */
        assert_int_equal(d.trailer_hash, 777);
        assert_int_equal(r.end, CRADLE_LOG_END_CLOSED);
        assert_int_equal(r.steps, 300);
        cradle_log_reader_close(&r);
        /* a reader from block 0 still refuses it: blocks out of sequence */
        if (first > 0) {
            assert_int_equal(cradle_log_reader_open_memory(&r, part, size, msg, sizeof msg), 0);
            d = drain(&r);
            assert_int_equal(d.rc, CRADLE_ELOG_CORRUPT);
            assert_int_equal(d.steps, 0);
            cradle_log_reader_close(&r);
        }
        free(part);
    }

    /* from a file, without the trailer: an unclosed end at the last block */
    unsigned first = 9, end = 20;
    size_t size;
    uint8_t *part = part_of(data, &l, first, end, &size);
    char part_path[300];
    path_of(part_path, sizeof part_path, "anywhere.part");
    write_file(part_path, part, size);
    cradle_log_reader r;
    assert_int_equal(cradle_log_reader_open(&r, part_path, msg, sizeof msg), 0);
    cradle_log_reader_start_anywhere(&r);
    drained d = drain_from(&r, l.steps[first - 1]);
    assert_int_equal(d.rc, 0);
    assert_true(d.snapshots_ok);
    assert_int_equal(d.steps, l.steps[end - 1] - l.steps[first - 1]);
    assert_false(d.trailer);
    assert_int_equal(r.end, CRADLE_LOG_END_UNCLOSED);
    cradle_log_reader_close(&r);
    free(part);

    /* a missing block is corruption, after the steps before it */
    size_t a_size, b_size;
    uint8_t *a = part_of(data, &l, first, first + 2, &a_size), *b = part_of(data, &l, first + 3, l.count, &b_size);
    size_t gap_size = a_size + b_size - CRADLE_LOG_HEADER_BYTES;
    uint8_t *gap = malloc(gap_size);
    assert_non_null(gap);
    memcpy(gap, a, a_size);
    memcpy(gap + a_size, b + CRADLE_LOG_HEADER_BYTES, b_size - CRADLE_LOG_HEADER_BYTES);
    assert_int_equal(cradle_log_reader_open_memory(&r, gap, gap_size, msg, sizeof msg), 0);
    cradle_log_reader_start_anywhere(&r);
    d = drain_from(&r, l.steps[first - 1]);
    assert_int_equal(d.rc, CRADLE_ELOG_CORRUPT);
    assert_true(d.snapshots_ok);
    assert_int_equal(d.steps, l.steps[first + 1] - l.steps[first - 1]);
    char want[80];
    snprintf(want, sizeof want, "has sequence %u, expected %u", first + 3, first + 2);
    assert_non_null(strstr(r.message, want));
    assert_int_equal(r.error_offset, a_size);
    cradle_log_reader_close(&r);
    free(gap);
    free(a);
    free(b);
    free(data);
}

static void append_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static uint64_t file_size(const char *path) {
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

/* A viewer's mirror: whole blocks appended to a file that a reader has
 * already read to its unclosed end. */
static void test_grow_reads_on_after_an_unclosed_end(void **state) {
    (void)state;
    char path[300], mirror[300], msg[256];
    path_of(path, sizeof path, "grow.log");
    path_of(mirror, sizeof mirror, "grow.mirror");
    write_log(path, 300, 7, true);
    size_t n;
    uint8_t *data = read_file(path, &n);
    layout l = layout_of(data, n);
    unsigned k = 10; /* the mirror holds blocks 0..k-1, then 2k, then all */
    write_file(mirror, data, (size_t)block_start(&l, k));
    cradle_log_reader r;
    assert_int_equal(cradle_log_reader_open(&r, mirror, msg, sizeof msg), 0);
    drained d = drain(&r);
    assert_int_equal(d.rc, 0);
    assert_int_equal(d.steps, l.steps[k - 1]);
    assert_int_equal(r.end, CRADLE_LOG_END_UNCLOSED);
    /* nothing new: nothing to read */
    assert_false(cradle_log_reader_grow(&r, file_size(mirror)));
    assert_int_equal(r.end, CRADLE_LOG_END_UNCLOSED);

    append_file(mirror, data + block_start(&l, k), (size_t)(block_start(&l, 2 * k) - block_start(&l, k)));
    assert_true(cradle_log_reader_grow(&r, file_size(mirror)));
    assert_int_equal(r.end, CRADLE_LOG_END_NONE);
    d = drain_from(&r, l.steps[k - 1]);
    assert_int_equal(d.rc, 0);
    assert_true(d.snapshots_ok);
    assert_int_equal(d.steps, l.steps[2 * k - 1] - l.steps[k - 1]);
    assert_int_equal(r.end, CRADLE_LOG_END_UNCLOSED);

    /* the rest and the trailer, whose digest this reader from block 0 checks */
    append_file(mirror, data + block_start(&l, 2 * k), n - (size_t)block_start(&l, 2 * k));
    assert_true(cradle_log_reader_grow(&r, file_size(mirror)));
    d = drain_from(&r, l.steps[2 * k - 1]);
    assert_int_equal(d.rc, 0);
    assert_true(d.snapshots_ok);
    assert_int_equal(d.steps, 300 - l.steps[2 * k - 1]);
    assert_true(d.trailer);
    assert_int_equal(r.end, CRADLE_LOG_END_CLOSED);
    assert_int_equal(r.steps, 300);
    /* a closed log does not go on */
    assert_false(cradle_log_reader_grow(&r, file_size(mirror)));
    assert_int_equal(r.end, CRADLE_LOG_END_CLOSED);
    cradle_log_record rec;
    assert_int_equal(cradle_log_reader_next(&r, &rec), 0);
    cradle_log_reader_close(&r);

    /* a partial reader over memory that fills in: blocks k.., one at a time */
    size_t size;
    uint8_t *part = part_of(data, &l, k, l.count, &size);
    assert_int_equal(cradle_log_reader_open_memory(&r, part, CRADLE_LOG_HEADER_BYTES, msg, sizeof msg), 0);
    cradle_log_reader_start_anywhere(&r);
    d = drain(&r);
    assert_int_equal(d.rc, 0);
    assert_int_equal(d.steps, 0);
    assert_int_equal(r.end, CRADLE_LOG_END_UNCLOSED);
    uint64_t steps = 0;
    for (unsigned i = k; i < l.count; i++) {
        uint64_t now = CRADLE_LOG_HEADER_BYTES + block_start(&l, i + 1) - block_start(&l, k);
        assert_true(cradle_log_reader_grow(&r, now));
        d = drain_from(&r, l.steps[k - 1] + steps);
        if (d.rc != 0) fail_msg("block %u: %s", i, r.message);
        assert_true(d.snapshots_ok);
        steps += d.steps;
        assert_int_equal(d.steps, l.steps[i] - block_first_step(&l, i));
        assert_int_equal(r.end, i + 1 < l.count ? CRADLE_LOG_END_UNCLOSED : CRADLE_LOG_END_CLOSED);
    }
    assert_true(d.trailer);
    assert_int_equal(r.steps, 300);
    cradle_log_reader_close(&r);

    /* after an error the reader stays stopped: a block out of sequence */
    write_file(mirror, data, (size_t)block_start(&l, k));
    assert_int_equal(cradle_log_reader_open(&r, mirror, msg, sizeof msg), 0);
    d = drain(&r);
    assert_int_equal(r.end, CRADLE_LOG_END_UNCLOSED);
    append_file(mirror, data + block_start(&l, k + 1), (size_t)(block_start(&l, k + 2) - block_start(&l, k + 1)));
    assert_true(cradle_log_reader_grow(&r, file_size(mirror)));
    d = drain_from(&r, l.steps[k - 1]);
    assert_int_equal(d.rc, CRADLE_ELOG_CORRUPT);
    append_file(mirror, data + block_start(&l, k + 2), (size_t)(block_start(&l, k + 3) - block_start(&l, k + 2)));
    assert_false(cradle_log_reader_grow(&r, file_size(mirror)));
    assert_int_equal(cradle_log_reader_next(&r, &rec), CRADLE_ELOG_CORRUPT);
    cradle_log_reader_close(&r);

    /* and so does one at a torn end: the other party appends whole blocks */
    write_file(mirror, data, (size_t)block_start(&l, k) + 20);
    assert_int_equal(cradle_log_reader_open(&r, mirror, msg, sizeof msg), 0);
    d = drain(&r);
    assert_int_equal(d.rc, 0);
    assert_int_equal(r.end, CRADLE_LOG_END_TORN);
    append_file(mirror, data + block_start(&l, k) + 20, (size_t)(block_start(&l, k + 1) - block_start(&l, k)) - 20);
    assert_false(cradle_log_reader_grow(&r, file_size(mirror)));
    assert_int_equal(r.end, CRADLE_LOG_END_TORN);
    cradle_log_reader_close(&r);
    free(part);
    free(data);
}

/* ---- signed blocks ------------------------------------------------------------ */

/* Recomputes a block's checksum (log_format.c: BLAKE2b-128 of header bytes
 * 0..31 and the payload) after a test changed its payload, so that only a
 * signature can tell. */
static void reseal_checksum(uint8_t *block) {
    uint32_t payload = (uint32_t)block[20] | (uint32_t)block[21] << 8 | (uint32_t)block[22] << 16 |
                       (uint32_t)block[23] << 24;
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 16);
    crypto_generichash_update(&st, block, 32);
    crypto_generichash_update(&st, block + CRADLE_LOG_BLOCK_HEADER_BYTES, payload);
    crypto_generichash_final(&st, block + 32, 16);
}

typedef struct signer_keys {
    cradle_keys server, other;
} signer_keys;

static signer_keys make_keys(void) {
    signer_keys k;
    uint8_t a[32], b[32];
    memset(a, 1, sizeof a);
    memset(b, 2, sizeof b);
    assert_int_equal(cradle_keys_from_seeds(&k.server, a, b), 0);
    memset(b, 3, sizeof b);
    assert_int_equal(cradle_keys_from_seeds(&k.other, a, b), 0);
    return k;
}

/* A reader of data (n bytes) that requires `key`, optionally from `first`
 * on (start_anywhere). */
static drained drain_signed(const uint8_t *data, size_t n, const uint8_t *key, bool anywhere, uint64_t first,
                            cradle_log_reader *r) {
    assert_int_equal(cradle_log_reader_open_memory(r, data, n, NULL, 0), 0);
    if (anywhere) cradle_log_reader_start_anywhere(r);
    if (key) cradle_log_reader_require_signer(r, key);
    return drain_from(r, first);
}

static void test_signed_blocks_read_back_and_verify(void **state) {
    (void)state;
    signer_keys k = make_keys();
    char path[300];
    path_of(path, sizeof path, "signed.log");
    write_log_as(path, 200, 10, true, k.server.sign_secret, 42);
    size_t n;
    uint8_t *data = read_file(path, &n);
    layout l = layout_of(data, n);
    assert_true(l.count > 10);

    /* Any reader sees the same records as an unsigned log's; the pinned key
     * verifies every block, the trailer's too, and the trailer signature. */
    cradle_log_reader r;
    drained d = drain_signed(data, n, NULL, false, 0, &r);
    assert_int_equal(d.rc, 0);
    assert_int_equal(d.steps, 200);
    assert_int_equal(d.hashes, 20);
    assert_true(d.trailer && d.snapshots_ok);
    assert_int_equal(r.signed_blocks, l.count);
    cradle_log_reader_close(&r);
    d = drain_signed(data, n, k.server.sign_public, false, 0, &r);
    assert_int_equal(d.rc, 0);
    assert_true(d.trailer && d.snapshots_ok && d.steps == 200);
    assert_int_equal(r.end, CRADLE_LOG_END_CLOSED);
    cradle_log_reader_close(&r);

    /* From any block on (a viewer joining a broadcast), trailer included. */
    for (unsigned first = 1; first < l.count; first += 3) {
        size_t pn;
        uint8_t *part = part_of(data, &l, first, l.count, &pn);
        d = drain_signed(part, pn, k.server.sign_public, true, block_first_step(&l, first), &r);
        assert_int_equal(d.rc, 0);
        assert_true(d.trailer && d.snapshots_ok);
        assert_int_equal(d.steps, 200 - block_first_step(&l, first));
        cradle_log_reader_close(&r);
        free(part);
    }

    /* Another key: refused at block 0, before any of its steps. */
    d = drain_signed(data, n, k.other.sign_public, false, 0, &r);
    assert_int_equal(d.rc, CRADLE_ELOG_SIGNATURE);
    assert_int_equal(d.steps, 0);
    assert_non_null(strstr(r.message, "block 0 at byte 256"));
    assert_non_null(strstr(r.message, "not signed by the pinned key"));
    cradle_log_reader_close(&r);
    free(data);
}

static void test_unsigned_forged_or_moved_blocks_are_refused(void **state) {
    (void)state;
    signer_keys k = make_keys();
    char path[300];
    size_t n;
    cradle_log_reader r;
    drained d;

    /* An unsigned log, with a key pinned. */
    path_of(path, sizeof path, "plain.log");
    write_log(path, 50, 10, true);
    uint8_t *plain = read_file(path, &n);
    d = drain_signed(plain, n, k.server.sign_public, false, 0, &r);
    assert_int_equal(d.rc, CRADLE_ELOG_SIGNATURE);
    assert_int_equal(d.steps, 0);
    cradle_log_reader_close(&r);
    free(plain);

    /* A step changed in block 2 and its checksum made to match: the
     * checksum cannot tell, the signature can; blocks 0 and 1 are kept. */
    path_of(path, sizeof path, "forged.log");
    write_log_as(path, 100, 10, true, k.server.sign_secret, 42);
    uint8_t *data = read_file(path, &n);
    layout l = layout_of(data, n);
    uint8_t *block = data + block_start(&l, 2);
    block[CRADLE_LOG_BLOCK_HEADER_BYTES + 3] ^= 0x40;
    reseal_checksum(block);
    /* unpinned, the forged steps are delivered; only the trailer's digest,
     * at the very end, tells (and a reader from a later block has none) */
    d = drain_signed(data, n, NULL, false, 0, &r);
    assert_int_equal(d.rc, CRADLE_ELOG_CORRUPT);
    assert_non_null(strstr(r.message, "digest mismatch"));
    assert_int_equal(d.steps, 100);
    assert_false(d.snapshots_ok);
    cradle_log_reader_close(&r);
    d = drain_signed(data, n, k.server.sign_public, false, 0, &r);
    assert_int_equal(d.rc, CRADLE_ELOG_SIGNATURE);
    assert_int_equal(d.steps, block_first_step(&l, 2));
    assert_true(d.snapshots_ok);
    assert_int_equal(r.error_offset, block_start(&l, 2));
    cradle_log_reader_close(&r);
    free(data);

    /* Blocks of another session by the same key (another seed, so another
     * header checksum) under this session's header. */
    path_of(path, sizeof path, "one.log");
    write_log_as(path, 100, 10, true, k.server.sign_secret, 42);
    uint8_t *one = read_file(path, &n);
    path_of(path, sizeof path, "two.log");
    write_log_as(path, 100, 10, true, k.server.sign_secret, 43);
    size_t n2;
    uint8_t *two = read_file(path, &n2);
    assert_int_equal(n, n2);
    memcpy(two, one, CRADLE_LOG_HEADER_BYTES);
    d = drain_signed(one, n, k.server.sign_public, false, 0, &r);
    assert_int_equal(d.rc, 0);
    cradle_log_reader_close(&r);
    d = drain_signed(two, n2, k.server.sign_public, false, 0, &r);
    assert_int_equal(d.rc, CRADLE_ELOG_SIGNATURE);
    assert_non_null(strstr(r.message, "for this session"));
    cradle_log_reader_close(&r);
    free(one);
    free(two);

    /* A SIGN record in the middle of a block is corrupt even unpinned:
     * turn block 0's first STEP into a SIGN kind byte. */
    path_of(path, sizeof path, "misplaced.log");
    write_log_as(path, 30, 10, true, k.server.sign_secret, 42);
    data = read_file(path, &n);
    data[CRADLE_LOG_HEADER_BYTES + CRADLE_LOG_BLOCK_HEADER_BYTES] = CRADLE_LOG_RECORD_SIGN;
    reseal_checksum(data + CRADLE_LOG_HEADER_BYTES);
    d = drain_signed(data, n, NULL, false, 0, &r);
    assert_int_equal(d.rc, CRADLE_ELOG_CORRUPT);
    assert_non_null(strstr(r.message, "misplaced signature record"));
    cradle_log_reader_close(&r);
    free(data);
}

static void test_signed_writer_needs_room_and_rescues_signed(void **state) {
    (void)state;
    signer_keys k = make_keys();
    char path[300], msg[256];
    path_of(path, sizeof path, "small.log");
    cradle_log_writer w;
    cradle_log_header h = test_header();
    cradle_log_writer_config cfg = {.block_size = 300, .sync_inline = true, .overwrite = true,
                                    .sign_secret = k.server.sign_secret};
    assert_int_equal(cradle_log_writer_open(&w, path, &h, &cfg, NULL, msg, sizeof msg), CRADLE_EINVAL);
    assert_non_null(strstr(msg, "too small for signed blocks (at least 321)"));

    /* Rescue from the mark seals a signed block too. */
    cfg.block_size = 321;
    assert_int_equal(cradle_log_writer_open(&w, path, &h, &cfg, NULL, msg, sizeof msg), 0);
    uint8_t snap[SNAP];
    for (uint64_t s = 0; s < 70; s++) {
        snapshot_for(s, snap);
        assert_int_equal(cradle_log_writer_append_step(&w, s, snap), 0);
    }
    cradle_log_mark mark = cradle_log_writer_mark(&w);
    snapshot_for(70, snap);
    assert_int_equal(cradle_log_writer_append_step(&w, 70, snap), 0);
    assert_int_equal(cradle_log_writer_rescue(&w, mark), 0);
    cradle_log_writer_abandon(&w);
    size_t n;
    uint8_t *data = read_file(path, &n);
    cradle_log_reader r;
    drained d = drain_signed(data, n, k.server.sign_public, false, 0, &r);
    assert_int_equal(d.rc, 0);
    assert_int_equal(d.steps, 70);
    assert_int_equal(r.end, CRADLE_LOG_END_UNCLOSED);
    cradle_log_reader_close(&r);
    free(data);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_every_block_boundary_reads_back),
        cmocka_unit_test(test_open_refuses_existing_file),
        cmocka_unit_test(test_open_refuses_bad_header),
        cmocka_unit_test(test_header_errors),
        cmocka_unit_test(test_check_library),
        cmocka_unit_test(test_truncated_at_every_offset_recovers_complete_steps),
        cmocka_unit_test(test_flipped_byte_names_offset_and_step),
        cmocka_unit_test(test_verified_but_misplaced_block_is_corrupt),
        cmocka_unit_test(test_sync_interval_and_flush),
        cmocka_unit_test(test_write_error_loses_nothing),
        cmocka_unit_test(test_killed_writer_recovers_durable_steps),
        cmocka_unit_test(test_rescue_keeps_the_steps_before_the_mark),
        cmocka_unit_test(test_start_anywhere_reads_from_that_block_on),
        cmocka_unit_test(test_grow_reads_on_after_an_unclosed_end),
        cmocka_unit_test(test_signed_blocks_read_back_and_verify),
        cmocka_unit_test(test_unsigned_forged_or_moved_blocks_are_refused),
        cmocka_unit_test(test_signed_writer_needs_room_and_rescues_signed),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
