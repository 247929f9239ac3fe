/* Tests for replay_index, the keyframe index beside a log, and the replay
 * driver's seek through it. A small host here records a session of the
 * counter game in small blocks: its data variant at step 0, a data file
 * applied, a reload to another build (+5 a step, no data), a reload back to
 * the data build and a second data file; a reference run of the same
 * session keeps the state hash before every step. The index is built from
 * the log (cradle_replay_index_create), then the driver seeks to every step
 * in a shuffled order, back and forth across the reloads and the data
 * files, and must be on the reference hash with the build of that step in
 * charge each time; a damaged, truncated, foreign or stale index is refused
 * with its byte offset; a seek into a torn tail stops at the last complete
 * step. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cradle/cradle.h"
#include "cradle/replay_index.h"

#define STEPS 300u
#define HASH_INTERVAL 10u
#define INTERVAL 25u        /* keyframes after steps 24, 49, ..., 299 */
#define DATA1_AT 60u        /* bonus 3 */
#define RELOAD_AT 130u      /* to the +5 build */
#define BACK_AT 210u        /* to the data build again */
#define DATA2_AT 240u       /* bonus -2 */
#define STATE_MAX CRADLE_REPLAY_MIN_CAPACITY /* the replay's storage for the counter's small state */

static char dir[256], log_path[320], index_path[340];
static uint64_t hash_before[STEPS + 1]; /* the state hash when step s is next, before its records */
static char build_before[STEPS + 1][CRADLE_GAME_BUILD_ID_MAX + 1];
static uint8_t session[CRADLE_BROADCAST_SESSION_BYTES];

static void apply_bonus(cradle_log_writer *w, cradle_sim *sim, uint64_t step, const char *json) {
    uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES];
    crypto_generichash(hash, sizeof hash, (const uint8_t *)json, strlen(json), NULL, 0);
    cradle_data_refusal refusal;
    assert_int_equal(cradle_sim_apply_data(sim, 0, (const uint8_t *)json, (uint32_t)strlen(json), &refusal), 0);
    assert_int_equal(cradle_log_writer_append_data(w, step, 0, "counter/bonus.json", (const uint8_t *)json,
                                                   (uint32_t)strlen(json), hash),
                     0);
}

/* Records the session as a server would and keeps the reference hashes. */
static void record_session(void) {
    static cradle_reload libs[2];
    char message[256];
    cradle_reload_config rcd = {.path = RELOAD_LIB_DATA, .copy_dir = dir, .state_capacity = 4096};
    cradle_reload_config rc5 = {.path = RELOAD_LIB_INC5, .copy_dir = dir, .state_capacity = 4096};
    assert_int_equal(cradle_reload_open(&libs[0], &rcd, 0, message, sizeof message), 0);
    assert_int_equal(cradle_reload_open(&libs[1], &rc5, 0, message, sizeof message), 0);
    static _Alignas(64) uint8_t state[4096], scratch[4096];
    cradle_sim sim;
    cradle_sim_config sc = {.state = state,
                            .state_capacity = sizeof state,
                            .state_align = 64,
                            .scratch = scratch,
                            .hash = cradle_hash64};
    assert_int_equal(cradle_sim_init(&sim, &sc, cradle_reload_contract(&libs[0]), message, sizeof message), 0);
    assert_int_equal(cradle_sim_start(&sim, 9, 3), 0);
    cradle_log_header h;
    assert_int_equal(cradle_log_header_from_contract(&h, sim.contract, 9, 3, 0, HASH_INTERVAL), 0);
    static cradle_log_writer w;
    cradle_log_writer_config wc = {.sync_inline = true, .block_size = CRADLE_LOG_BLOCK_MIN};
    assert_int_equal(cradle_log_writer_open(&w, log_path, &h, &wc, RELOAD_LIB_DATA, message, sizeof message), 0);
    uint8_t snapshot[16] = {0};
    for (uint64_t s = 0; s < STEPS; s++) {
        /* a seek to s stops before s's records (its data, its reload) */
        hash_before[s] = cradle_sim_hash(&sim);
        snprintf(build_before[s], sizeof build_before[s], "%s", sim.contract->build_id);
        if (s == DATA1_AT) apply_bonus(&w, &sim, s, "{\"bonus\": 3}");
        if (s == RELOAD_AT || s == BACK_AT) {
            cradle_reload *to = &libs[s == RELOAD_AT ? 1 : 0];
            assert_int_equal(cradle_sim_swap(&sim, cradle_reload_contract(to), message, sizeof message), 0);
            assert_int_equal(cradle_log_writer_append_reload(&w, s, sim.contract->build_id,
                                                             s == RELOAD_AT ? RELOAD_LIB_INC5 : RELOAD_LIB_DATA),
                             0);
        }
        if (s == DATA2_AT) apply_bonus(&w, &sim, s, "{\"bonus\": -2}");
        snapshot[0] = (uint8_t)(1u + s % 7u); /* slots come and go */
        snapshot[1] = (uint8_t)s;
        snapshot[2] = (uint8_t)(s * 3u);
        assert_int_equal(cradle_log_writer_append_step(&w, s, snapshot), 0);
        cradle_sim_step(&sim, snapshot);
        if ((s + 1) % HASH_INTERVAL == 0)
            assert_int_equal(cradle_log_writer_append_hash(&w, s, cradle_sim_hash(&sim)), 0);
    }
    hash_before[STEPS] = cradle_sim_hash(&sim);
    snprintf(build_before[STEPS], sizeof build_before[STEPS], "%s", sim.contract->build_id);
    assert_int_equal(cradle_log_writer_close(&w, hash_before[STEPS]), 0);
    cradle_reload_close(&libs[0]);
    cradle_reload_close(&libs[1]);
    assert_string_not_equal(build_before[0], build_before[RELOAD_AT + 1u]);
}

static void read_session(void) {
    cradle_log_reader r;
    char message[256];
    assert_int_equal(cradle_log_reader_open(&r, log_path, message, sizeof message), 0);
    memcpy(session, r.session, sizeof session);
    cradle_log_reader_close(&r);
}

static int setup(void **unused) {
    (void)unused;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/cradle-replay-index-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) return -1;
    snprintf(log_path, sizeof log_path, "%s/session.log", dir);
    snprintf(index_path, sizeof index_path, "%s/session.log.index", dir);
    record_session();
    read_session();
    return 0;
}

static int teardown(void **unused) {
    (void)unused;
    cradle_os_remove_tree(dir);
    return 0;
}

static uint64_t file_size(const char *path) {
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

static void build_index(const char *log, const char *index) {
    cradle_replay_index_built built;
    char message[512];
    int rc = cradle_replay_index_create(
        &(cradle_replay_index_build){.log_path = log, .index_path = index, .interval = INTERVAL, .copy_dir = dir},
        &built, message, sizeof message);
    if (rc != 0) fail_msg("%s", message);
    assert_int_equal(built.steps, STEPS);
    assert_int_equal(built.keyframes, STEPS / INTERVAL);
    assert_int_equal(built.index_bytes, file_size(index));
    assert_false(built.mismatch);
}

static void load_index(cradle_replay_index *index, const char *path) {
    char message[512];
    int rc = cradle_replay_index_load(index, path, session, file_size(log_path), STATE_MAX, message, sizeof message);
    if (rc != 0) fail_msg("%s", message);
}

static void open_seeking(cradle_replay *r, const cradle_replay_index *index) {
    int rc = cradle_replay_open(r, &(cradle_replay_config){.log_path = log_path, .copy_dir = dir});
    if (rc != 0) fail_msg("%s", r->message);
    assert_int_equal(cradle_replay_use_index(r, index), 0);
}

static void test_the_index_holds_a_keyframe_every_interval(void **unused) {
    (void)unused;
    build_index(log_path, index_path);
    static cradle_replay_index index;
    load_index(&index, index_path);
    assert_int_equal(index.count, STEPS / INTERVAL);
    assert_int_equal(index.interval, INTERVAL);
    for (uint32_t i = 0; i < index.count; i++) {
        const cradle_replay_keyframe *k = &index.keys[i];
        assert_int_equal(k->key.step, (uint64_t)(i + 1u) * INTERVAL - 1u);
        assert_string_equal(k->key.build_id, build_before[k->key.step + 1u]);
        assert_true(k->block.first_step <= k->key.step);
    }
    /* find: the last keyframe before the step */
    assert_null(cradle_replay_index_find(&index, 0));
    assert_null(cradle_replay_index_find(&index, INTERVAL - 1u));
    assert_int_equal(cradle_replay_index_find(&index, INTERVAL)->key.step, INTERVAL - 1u);
    assert_int_equal(cradle_replay_index_find(&index, 2u * INTERVAL - 1u)->key.step, INTERVAL - 1u);
    assert_int_equal(cradle_replay_index_find(&index, STEPS)->key.step, STEPS - 1u);
    cradle_replay_index_free(&index);
}

/* Every step once, in a shuffled order: both directions, across both
 * reloads and both data files. */
static void test_seek_to_every_step_in_either_direction(void **unused) {
    (void)unused;
    build_index(log_path, index_path);
    static cradle_replay_index index;
    load_index(&index, index_path);
    static cradle_replay r;
    open_seeking(&r, &index);
    uint64_t order[STEPS + 1];
    for (uint64_t i = 0; i <= STEPS; i++) order[i] = i;
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (uint64_t i = STEPS; i > 0; i--) { /* a seeded shuffle */
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t j = x % (i + 1u), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    uint64_t backwards = 0;
    for (uint64_t i = 0; i <= STEPS; i++) {
        uint64_t step = order[i];
        if (step < r.sim.next_step && step >= INTERVAL) backwards++; /* each from a keyframe */
        int rc = cradle_replay_seek(&r, step);
        if (rc != 0) fail_msg("seek to %llu: %s", (unsigned long long)step, r.message);
        assert_int_equal(r.sim.next_step, step);
        if (cradle_sim_hash(&r.sim) != hash_before[step]) fail_msg("seek to %llu: another state", (unsigned long long)step);
        assert_string_equal(r.build_id, build_before[step]);
    }
    assert_true(backwards > STEPS / 4u);
    assert_true(r.keyframe_seeks >= backwards);
    assert_false(r.mismatch); /* every hash the log recorded on the way matched */
    assert_true(r.hashes_checked > 0);

    /* from a step behind the last reload, on to the end: the trailer matches */
    assert_int_equal(cradle_replay_seek(&r, BACK_AT - 7u), 0);
    cradle_replay_item item;
    int rc;
    bool trailer = false;
    while ((rc = cradle_replay_next(&r, &item)) == 1)
        if (item.kind == CRADLE_REPLAY_TRAILER) {
            trailer = true;
            assert_true(item.matches);
        }
    assert_int_equal(rc, 0);
    assert_true(trailer);
    assert_true(r.reader.end == CRADLE_LOG_END_CLOSED);
    assert_int_equal(cradle_replay_seek(&r, STEPS + 1u), CRADLE_ERANGE);
    assert_int_equal(cradle_replay_seek(&r, 3), 0); /* back before the first keyframe: from the start */
    assert_true(cradle_sim_hash(&r.sim) == hash_before[3]);
    cradle_replay_close(&r);
    cradle_replay_index_free(&index);
}

/* The index a driver uses holds the states; seeking with the library the
 * caller names for step 0's build works the same. */
static void test_seek_with_the_callers_library(void **unused) {
    (void)unused;
    build_index(log_path, index_path);
    static cradle_replay_index index;
    load_index(&index, index_path);
    static cradle_replay r;
    int rc = cradle_replay_open(&r, &(cradle_replay_config){.log_path = log_path, .game_path = RELOAD_LIB_DATA,
                                                            .copy_dir = dir});
    if (rc != 0) fail_msg("%s", r.message);
    assert_int_equal(cradle_replay_use_index(&r, &index), 0);
    static const uint64_t steps[] = {290, 140, 20, 250, 75, 131, 129, 300, 0, 212};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        assert_int_equal(cradle_replay_seek(&r, steps[i]), 0);
        assert_true(cradle_sim_hash(&r.sim) == hash_before[steps[i]]);
        assert_string_equal(r.build_id, build_before[steps[i]]);
    }
    cradle_replay_close(&r);
    cradle_replay_index_free(&index);
}

static void copy_file(const char *from, const char *to, uint64_t bytes) {
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    for (uint64_t i = 0; i < bytes; i++) {
        int c = fgetc(in);
        assert_true(c != EOF);
        fputc(c, out);
    }
    fclose(in);
    fclose(out);
}

static void flip_byte(const char *path, uint64_t at) {
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long)at, SEEK_SET), 0);
    int c = fgetc(f);
    assert_int_equal(fseek(f, (long)at, SEEK_SET), 0);
    fputc(c ^ 0x40, f);
    fclose(f);
}

static void expect_refused(const char *path, uint64_t log_size, const char *says) {
    cradle_replay_index index;
    char message[512];
    int rc = cradle_replay_index_load(&index, path, session, log_size, STATE_MAX, message, sizeof message);
    assert_int_equal(rc, CRADLE_EINDEX);
    if (!strstr(message, says)) fail_msg("expected \"%s\" in: %s", says, message);
    assert_null(index.bytes);
    assert_null(index.keys);
}

static void test_a_damaged_or_foreign_index_is_refused(void **unused) {
    (void)unused;
    build_index(log_path, index_path);
    uint64_t size = file_size(index_path), log_size = file_size(log_path);
    char bad[400];
    snprintf(bad, sizeof bad, "%s/bad.index", dir);
    static const struct {
        uint64_t at;
        const char *says;
    } flips[] = {
        {0, "index byte 0: not a Cradle replay index"},
        {20, "index byte 48: header checksum mismatch"},
        {CRADLE_REPLAY_INDEX_HEADER_BYTES + 3, "index byte 64: keyframe checksum mismatch"},
        {CRADLE_REPLAY_INDEX_HEADER_BYTES + CRADLE_REPLAY_INDEX_ENTRY_BYTES + 300, "keyframe checksum mismatch"},
    };
    for (size_t i = 0; i < sizeof flips / sizeof flips[0]; i++) {
        copy_file(index_path, bad, size);
        flip_byte(bad, flips[i].at);
        expect_refused(bad, log_size, flips[i].says);
    }
    /* cut inside the last keyframe */
    copy_file(index_path, bad, size - 5u);
    expect_refused(bad, log_size, "truncated");
    copy_file(index_path, bad, CRADLE_REPLAY_INDEX_HEADER_BYTES + 10u);
    expect_refused(bad, log_size, "index byte 64: the file ends inside a keyframe (truncated)");
    /* keyframes larger than this log's replay holds: refused before their state is allocated */
    {
        cradle_replay_index index;
        char message[512];
        assert_int_equal(cradle_replay_index_load(&index, index_path, session, log_size, 1000, message, sizeof message),
                         CRADLE_EINDEX);
        if (!strstr(message, "index byte 176: a keyframe of 65536 state bytes; this log's replay holds 1000 at most"))
            fail_msg("%s", message);
    }
    /* a log cut short: the index names blocks the log no longer has */
    expect_refused(index_path, 1000, "stale");
    /* another session's index */
    char other_index[420];
    snprintf(other_index, sizeof other_index, "%s/other.log.index", dir);
    {
        /* the same game and steps, another seed: another session */
        cradle_log_reader rd;
        char message[256];
        assert_int_equal(cradle_log_reader_open(&rd, log_path, message, sizeof message), 0);
        uint8_t other_session[CRADLE_BROADCAST_SESSION_BYTES];
        memcpy(other_session, rd.session, sizeof other_session);
        other_session[0] ^= 1u;
        cradle_log_reader_close(&rd);
        cradle_replay_index_writer w;
        assert_int_equal(cradle_replay_index_writer_open(&w, other_index, other_session, INTERVAL, 4096, message,
                                                         sizeof message),
                         0);
        assert_int_equal(cradle_replay_index_writer_finish(&w, message, sizeof message), 0);
        cradle_replay_index_writer_close(&w);
    }
    expect_refused(other_index, log_size, "index byte 16: the index is of another session than this log (stale)");
    /* an empty index of this session is whole: no keyframes, seeks run from the start */
    {
        char message[256];
        cradle_replay_index_writer w;
        assert_int_equal(cradle_replay_index_writer_open(&w, bad, session, INTERVAL, 4096, message, sizeof message), 0);
        assert_int_equal(cradle_replay_index_writer_finish(&w, message, sizeof message), 0);
        cradle_replay_index_writer_close(&w);
        static cradle_replay_index index;
        load_index(&index, bad);
        assert_int_equal(index.count, 0);
        static cradle_replay r;
        open_seeking(&r, &index);
        assert_int_equal(cradle_replay_seek(&r, 200), 0);
        assert_int_equal(cradle_replay_seek(&r, 100), 0);
        assert_true(cradle_sim_hash(&r.sim) == hash_before[100]);
        assert_int_equal(r.keyframe_seeks, 0);
        cradle_replay_close(&r);
        cradle_replay_index_free(&index);
    }
}

/* Two builds of one log's index at once (a --play and a cradle-replay
 * --from): each writes a whole file of its own, the last to finish is the
 * index, and it loads. */
static void test_two_writers_of_one_index_at_once(void **unused) {
    (void)unused;
    char path[400], message[512];
    snprintf(path, sizeof path, "%s/both.index", dir);
    static uint8_t state[4096];
    static cradle_replay_index_writer a, b;
    assert_int_equal(cradle_replay_index_writer_open(&a, path, session, INTERVAL, sizeof state, message, sizeof message), 0);
    assert_int_equal(cradle_replay_index_writer_open(&b, path, session, INTERVAL, sizeof state, message, sizeof message), 0);
    cradle_log_block_place block = {.offset = CRADLE_LOG_HEADER_BYTES, .sequence = 0, .first_step = 0};
    for (uint64_t k = 1; k <= 3; k++) {
        state[0] = (uint8_t)k;
        assert_int_equal(cradle_replay_index_writer_add(&a, k * INTERVAL - 1u, block, "build-a", NULL, state,
                                                        sizeof state, message, sizeof message),
                         0);
        if (k < 3)
            assert_int_equal(cradle_replay_index_writer_add(&b, k * INTERVAL - 1u, block, "build-b", NULL, state,
                                                            sizeof state, message, sizeof message),
                             0);
    }
    assert_int_equal(cradle_replay_index_writer_finish(&a, message, sizeof message), 0);
    assert_int_equal(cradle_replay_index_writer_finish(&b, message, sizeof message), 0);
    cradle_replay_index_writer_close(&a);
    cradle_replay_index_writer_close(&b);
    static cradle_replay_index index;
    load_index(&index, path);
    assert_int_equal(index.count, 2); /* b's, whole */
    assert_string_equal(index.keys[1].key.build_id, "build-b");
    cradle_replay_index_free(&index);
}

/* A log whose tail is torn: the index built from the whole log still
 * serves the part that is there (its keyframes inside it); a seek past the
 * torn tail stops at the last complete step, as a replay does. */
static void test_a_seek_into_a_torn_tail_stops_at_the_last_complete_step(void **unused) {
    (void)unused;
    build_index(log_path, index_path);
    char torn[400], torn_index[420];
    snprintf(torn, sizeof torn, "%s/torn.log", dir);
    snprintf(torn_index, sizeof torn_index, "%s/torn.log.index", dir);
    uint64_t cut = file_size(log_path) * 2u / 3u;
    copy_file(log_path, torn, cut);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cp -r '%s.builds' '%s.builds' && cp -r '%s.data' '%s.data'", log_path, torn, log_path,
             torn);
    assert_int_equal(system(cmd), 0);
    cradle_replay_index_built built;
    char message[512];
    assert_int_equal(cradle_replay_index_create(&(cradle_replay_index_build){.log_path = torn,
                                                                             .index_path = torn_index,
                                                                             .interval = INTERVAL,
                                                                             .copy_dir = dir},
                                                &built, message, sizeof message),
                     0);
    assert_true(built.steps < STEPS && built.steps > STEPS / 2u);
    static cradle_replay_index index;
    assert_int_equal(cradle_replay_index_load(&index, torn_index, session, cut, STATE_MAX, message, sizeof message), 0);
    assert_true(index.count > 0 && index.count < STEPS / INTERVAL);
    static cradle_replay r;
    int rc = cradle_replay_open(&r, &(cradle_replay_config){.log_path = torn, .copy_dir = dir});
    if (rc != 0) fail_msg("%s", r.message);
    assert_int_equal(cradle_replay_use_index(&r, &index), 0);
    assert_int_equal(cradle_replay_seek(&r, STEPS), CRADLE_ERANGE);
    assert_int_equal(r.sim.next_step, built.steps);
    assert_true(r.reader.end == CRADLE_LOG_END_TORN);
    assert_true(cradle_sim_hash(&r.sim) == hash_before[built.steps]);
    assert_int_equal(cradle_replay_seek(&r, 40), 0); /* back from the torn end */
    assert_true(cradle_sim_hash(&r.sim) == hash_before[40]);
    cradle_replay_close(&r);
    cradle_replay_index_free(&index);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_index_holds_a_keyframe_every_interval),
        cmocka_unit_test(test_seek_to_every_step_in_either_direction),
        cmocka_unit_test(test_seek_with_the_callers_library),
        cmocka_unit_test(test_a_damaged_or_foreign_index_is_refused),
        cmocka_unit_test(test_a_seek_into_a_torn_tail_stops_at_the_last_complete_step),
        cmocka_unit_test(test_two_writers_of_one_index_at_once),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
