/* Tests for replay, the replay driver: a small host here records a session
 * of the counter game (+1 a step, its reloads counted in its state) with a
 * reload to another build (+5 a step) and one back to the same build, then
 * the driver replays it: every step, every hash, both reloads (on_reload runs
 * for the same build too), the trailer; stop_at, seek back and forth, a
 * tampered hash, a missing archived build, and --force's fallback; each step
 * run again from its saved state (rerun) and the state moved to another
 * address (move), across the reloads too. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cradle/cradle.h"

#define STEPS 90u
#define HASH_INTERVAL 10u
#define RELOAD_AT 30u      /* to the +5 build */
#define SAME_AT 60u        /* the +5 build again: a reload of the same build */
#define REFUSED_AT 50u     /* a build refused: a record that changes nothing */

typedef struct counter_state { /* shared/games/counter/counter.c */
    uint64_t steps;
    int64_t total;
    uint64_t presence;
    uint64_t seed;
    uint32_t players;
    uint32_t reloads;
} counter_state;

static char dir[256], log_path[320];
static uint64_t final_hash;
static uint64_t hash_at_45;

static void warn_count(void *context, const char *message) {
    (void)message;
    ++*(int *)context;
}

/* Records the session the tests replay, as a server would: a sim steps the
 * loaded build, the writer records steps, hashes and reloads. */
static void record_session(void) {
    static cradle_reload libs[2];
    char message[256];
    cradle_reload_config rc1 = {.path = RELOAD_LIB_INC1, .copy_dir = dir, .state_capacity = 4096};
    cradle_reload_config rc5 = {.path = RELOAD_LIB_INC5, .copy_dir = dir, .state_capacity = 4096};
    assert_int_equal(cradle_reload_open(&libs[0], &rc1, 0, message, sizeof message), 0);
    assert_int_equal(cradle_reload_open(&libs[1], &rc5, 0, message, sizeof message), 0);
    static _Alignas(64) uint8_t state[4096];
    cradle_sim sim;
    cradle_sim_config sc = {.state = state, .state_capacity = sizeof state, .state_align = 64, .hash = cradle_hash64};
    assert_int_equal(cradle_sim_init(&sim, &sc, cradle_reload_contract(&libs[0]), message, sizeof message), 0);
    assert_int_equal(cradle_sim_start(&sim, 7, 2), 0);
    cradle_log_header h;
    assert_int_equal(cradle_log_header_from_contract(&h, sim.contract, 7, 2, 0, HASH_INTERVAL), 0);
    static cradle_log_writer w;
    cradle_log_writer_config wc = {.sync_inline = true};
    assert_int_equal(cradle_log_writer_open(&w, log_path, &h, &wc, RELOAD_LIB_INC1, message, sizeof message), 0);
    uint8_t snapshot[16] = {0};
    for (uint64_t s = 0; s < STEPS; s++) {
        if (s == RELOAD_AT || s == SAME_AT) {
            assert_int_equal(cradle_sim_swap(&sim, cradle_reload_contract(&libs[1]), message, sizeof message), 0);
            assert_int_equal(cradle_log_writer_append_reload(&w, s, sim.contract->build_id, RELOAD_LIB_INC5), 0);
        }
        if (s == REFUSED_AT) {
            static const uint8_t refused_file[CRADLE_LOG_FILE_HASH_BYTES] = {0xab};
            assert_int_equal(cradle_log_writer_append_refused(&w, s, refused_file, "it crashed\n in its trial"), 0);
        }
        snapshot[0] = (uint8_t)(s % 4u); /* slots 0 and 1 come and go */
        snapshot[1] = (uint8_t)s;
        assert_int_equal(cradle_log_writer_append_step(&w, s, snapshot), 0);
        cradle_sim_step(&sim, snapshot);
        if ((s + 1) % HASH_INTERVAL == 0)
            assert_int_equal(cradle_log_writer_append_hash(&w, s, cradle_sim_hash(&sim)), 0);
        if (s == 44) hash_at_45 = cradle_sim_hash(&sim);
    }
    assert_int_equal(((counter_state *)state)->reloads, 2);
    final_hash = cradle_sim_hash(&sim);
    assert_int_equal(cradle_log_writer_close(&w, final_hash), 0);
    cradle_reload_close(&libs[0]);
    cradle_reload_close(&libs[1]);
}

static int setup(void **unused) {
    (void)unused;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/cradle-replay-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) return -1;
    snprintf(log_path, sizeof log_path, "%s/session.log", dir);
    record_session();
    return 0;
}

/* A second session: the counter for 10 steps, then the build that asks for
 * 64-byte alignment (the most) for 10 more. */
static void record_align_session(const char *path) {
    static cradle_reload libs[2];
    char message[256];
    cradle_reload_config rc1 = {.path = RELOAD_LIB_INC1, .copy_dir = dir, .state_capacity = 4096};
    cradle_reload_config rc64 = {.path = RELOAD_LIB_ALIGN64, .copy_dir = dir, .state_capacity = 4096};
    assert_int_equal(cradle_reload_open(&libs[0], &rc1, 0, message, sizeof message), 0);
    assert_int_equal(cradle_reload_open(&libs[1], &rc64, 0, message, sizeof message), 0);
    static _Alignas(64) uint8_t state[4096];
    cradle_sim sim;
    cradle_sim_config sc = {.state = state, .state_capacity = sizeof state, .state_align = 64, .hash = cradle_hash64};
    assert_int_equal(cradle_sim_init(&sim, &sc, cradle_reload_contract(&libs[0]), message, sizeof message), 0);
    assert_int_equal(cradle_sim_start(&sim, 3, 1), 0);
    cradle_log_header h;
    assert_int_equal(cradle_log_header_from_contract(&h, sim.contract, 3, 1, 0, 5), 0);
    static cradle_log_writer w;
    cradle_log_writer_config wc = {.sync_inline = true};
    assert_int_equal(cradle_log_writer_open(&w, path, &h, &wc, RELOAD_LIB_INC1, message, sizeof message), 0);
    uint8_t snapshot[16] = {1, 2};
    for (uint64_t s = 0; s < 20; s++) {
        if (s == 10) {
            assert_int_equal(cradle_sim_swap(&sim, cradle_reload_contract(&libs[1]), message, sizeof message), 0);
            assert_int_equal(cradle_log_writer_append_reload(&w, s, sim.contract->build_id, RELOAD_LIB_ALIGN64), 0);
        }
        assert_int_equal(cradle_log_writer_append_step(&w, s, snapshot), 0);
        cradle_sim_step(&sim, snapshot);
        if ((s + 1) % 5 == 0) assert_int_equal(cradle_log_writer_append_hash(&w, s, cradle_sim_hash(&sim)), 0);
    }
    assert_int_equal(cradle_log_writer_close(&w, cradle_sim_hash(&sim)), 0);
    cradle_reload_close(&libs[0]);
    cradle_reload_close(&libs[1]);
}

static int teardown(void **unused) {
    (void)unused;
    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    return system(command);
}

static void open_replay(cradle_replay *r, cradle_replay_config config) {
    config.log_path = log_path;
    config.copy_dir = dir;
    if (cradle_replay_open(r, &config) != 0) fail_msg("open: %s", r->message);
}

static void test_replays_every_record_and_both_reloads(void **unused) {
    (void)unused;
    static cradle_replay r;
    open_replay(&r, (cradle_replay_config){.output = true, .output_from = 85});
    cradle_replay_item item;
    uint64_t steps = 0, hashes = 0, outputs = 0, reloads = 0, refused = 0;
    bool trailer = false;
    int rc;
    while ((rc = cradle_replay_next(&r, &item)) == 1) {
        switch (item.kind) {
        case CRADLE_REPLAY_STEP:
            assert_int_equal(item.step, steps++);
            assert_int_equal(r.sim.next_step, item.step + 1);
            if (item.step >= 85) {
                assert_non_null(item.output);
                outputs++;
            } else {
                assert_null(item.output);
            }
            break;
        case CRADLE_REPLAY_HASH:
            assert_true(item.matches);
            assert_int_equal((item.step + 1) % HASH_INTERVAL, 0);
            hashes++;
            break;
        case CRADLE_REPLAY_RELOAD:
            assert_true(item.archived);
            assert_true(item.step == RELOAD_AT || item.step == SAME_AT);
            reloads++;
            break;
        case CRADLE_REPLAY_TRAILER:
            assert_true(item.matches);
            assert_true(item.logged_hash == final_hash);
            assert_int_equal(item.step, STEPS);
            trailer = true;
            break;
        case CRADLE_REPLAY_DATA: /* this log holds none */
            fail_msg("a data record at step %llu", (unsigned long long)item.step);
            break;
        case CRADLE_REPLAY_REFUSED: /* the control byte became '?' */
            assert_int_equal(item.step, REFUSED_AT);
            assert_string_equal(item.record->reason, "it crashed? in its trial");
            assert_int_equal(item.record->file_hash[0], 0xab);
            refused++;
            break;
        }
    }
    assert_int_equal(rc, 0);
    assert_int_equal(refused, 1);
    assert_int_equal(r.refusals, 1);
    assert_true(r.ended);
    assert_int_equal(r.reader.end, CRADLE_LOG_END_CLOSED);
    assert_int_equal(steps, STEPS);
    assert_int_equal(hashes, STEPS / HASH_INTERVAL);
    assert_int_equal(r.hashes_checked, hashes);
    assert_int_equal(outputs, 5);
    assert_int_equal(reloads, 2);
    assert_true(trailer);
    assert_false(r.mismatch);
    /* on_reload ran at both reloads, the same build's included. */
    assert_int_equal(((const counter_state *)r.sim.state)->reloads, 2);
    assert_int_equal(cradle_replay_next(&r, &item), 0); /* and stays at the end */
    cradle_replay_close(&r);
    cradle_replay_close(&r); /* twice is safe */
}

static void test_stop_at_and_seek(void **unused) {
    (void)unused;
    static cradle_replay r;
    open_replay(&r, (cradle_replay_config){.stop_at = RELOAD_AT});
    cradle_replay_item item;
    while (cradle_replay_next(&r, &item) == 1) {
    }
    assert_true(r.stopped);
    assert_false(r.ended);
    assert_int_equal(r.sim.next_step, RELOAD_AT);
    assert_int_equal(r.reloads, 0); /* the reload at stop_at did not take effect */
    cradle_replay_close(&r);

    open_replay(&r, (cradle_replay_config){0});
    assert_int_equal(cradle_replay_seek(&r, 45), 0);
    assert_int_equal(r.sim.next_step, 45);
    assert_true(cradle_sim_hash(&r.sim) == hash_at_45);
    assert_int_equal(cradle_replay_seek(&r, 80), 0);
    assert_int_equal(cradle_replay_seek(&r, 45), 0); /* back: from the start again */
    assert_int_equal(r.sim.next_step, 45);
    assert_true(cradle_sim_hash(&r.sim) == hash_at_45);
    assert_int_equal(cradle_replay_seek(&r, STEPS + 1), CRADLE_ERANGE);
    assert_int_equal(r.sim.next_step, STEPS);
    cradle_replay_close(&r);
}

/* --play's pattern: after each step, the records that follow it (its hash,
 * at the end the trailer) are handled without running the next step. */
static void test_catch_up_handles_a_steps_records_without_running_the_next(void **unused) {
    (void)unused;
    static cradle_replay r;
    open_replay(&r, (cradle_replay_config){0});
    cradle_replay_item item;
    for (uint64_t s = 0; s < 10; s++) {
        assert_int_equal(cradle_replay_next(&r, &item), 1);
        assert_int_equal(item.kind, CRADLE_REPLAY_STEP);
        assert_int_equal(item.step, s);
        assert_int_equal(cradle_replay_catch_up(&r), 0);
        assert_int_equal(r.sim.next_step, s + 1); /* the next step is held, not run */
    }
    assert_int_equal(r.hashes_checked, 1); /* the hash after step 9 */
    assert_int_equal(cradle_replay_catch_up(&r), 0); /* again: nothing more to do */
    assert_int_equal(r.sim.next_step, 10);
    assert_int_equal(cradle_replay_next(&r, &item), 1); /* the held step runs */
    assert_int_equal(item.kind, CRADLE_REPLAY_STEP);
    assert_int_equal(item.step, 10);
    assert_int_equal(cradle_replay_seek(&r, STEPS), 0);
    assert_false(r.ended);
    assert_int_equal(cradle_replay_catch_up(&r), 0); /* the last hash, the trailer */
    assert_true(r.ended);
    assert_int_equal(r.hashes_checked, STEPS / HASH_INTERVAL);
    assert_false(r.mismatch);
    cradle_replay_close(&r);
}

/* Copies the log with the hash recorded after step 19 changed. */
static void tamper(const char *to) {
    static cradle_log_reader reader;
    char message[256];
    assert_int_equal(cradle_log_reader_open(&reader, log_path, message, sizeof message), 0);
    cradle_log_header h = reader.header;
    static cradle_log_writer w;
    cradle_log_writer_config wc = {.sync_inline = true};
    assert_int_equal(cradle_log_writer_open(&w, to, &h, &wc, RELOAD_LIB_INC1, message, sizeof message), 0);
    cradle_log_record rec;
    while (cradle_log_reader_next(&reader, &rec) == 1) {
        if (rec.kind == CRADLE_LOG_RECORD_STEP) assert_int_equal(cradle_log_writer_append_step(&w, rec.step, rec.snapshot), 0);
        if (rec.kind == CRADLE_LOG_RECORD_HASH)
            assert_int_equal(cradle_log_writer_append_hash(&w, rec.step, rec.step == 19 ? rec.hash ^ 1u : rec.hash), 0);
        if (rec.kind == CRADLE_LOG_RECORD_RELOAD)
            assert_int_equal(cradle_log_writer_append_reload(&w, rec.step, rec.build_id, RELOAD_LIB_INC5), 0);
        if (rec.kind == CRADLE_LOG_RECORD_TRAILER) assert_int_equal(cradle_log_writer_close(&w, rec.hash), 0);
    }
    cradle_log_reader_close(&reader);
}

static void test_a_tampered_hash_is_the_first_mismatch(void **unused) {
    (void)unused;
    char tampered[400];
    snprintf(tampered, sizeof tampered, "%s/tampered.log", dir);
    tamper(tampered);
    static cradle_replay r;
    cradle_replay_config config = {.log_path = tampered, .copy_dir = dir};
    assert_int_equal(cradle_replay_open(&r, &config), 0);
    cradle_replay_item item;
    while (cradle_replay_next(&r, &item) == 1) {
    }
    assert_true(r.ended);
    assert_true(r.mismatch);
    assert_int_equal(r.mismatch_step, 19);
    assert_int_equal(r.hash_mismatches, 1);
    assert_true(r.mismatch_logged == (r.mismatch_replayed ^ 1u));
    cradle_replay_close(&r);
}

/* Removes every archived build but step 0's: the reload's file is gone. */
static void remove_reload_build(void) {
    uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES];
    char path[600];
    assert_int_equal(cradle_log_file_hash(RELOAD_LIB_INC5, hash), 0);
    assert_int_equal(cradle_log_build_path(path, sizeof path, log_path, hash), 0);
    assert_int_equal(unlink(path), 0);
}

static void test_a_missing_build_fails_unless_forced(void **unused) {
    (void)unused;
    remove_reload_build();
    static cradle_replay r;
    open_replay(&r, (cradle_replay_config){0});
    cradle_replay_item item;
    int rc;
    while ((rc = cradle_replay_next(&r, &item)) == 1) {
    }
    assert_int_equal(rc, CRADLE_EINVAL);
    assert_non_null(strstr(r.message, "at step 30"));
    assert_non_null(strstr(r.message, "is missing"));
    assert_int_equal(r.sim.next_step, RELOAD_AT);
    assert_int_equal(cradle_replay_next(&r, &item), CRADLE_EINVAL); /* sticky */
    cradle_replay_close(&r);

    int warnings = 0;
    open_replay(&r, (cradle_replay_config){.force = true, .warn = warn_count, .warn_context = &warnings});
    while ((rc = cradle_replay_next(&r, &item)) == 1) {
    }
    assert_int_equal(rc, 0);
    assert_int_equal(warnings, 2);           /* both reloads kept the library in use */
    assert_int_equal(r.reloads, 2);
    assert_int_equal(((const counter_state *)r.sim.state)->reloads, 2); /* on_reload ran all the same */
    assert_true(r.mismatch);                 /* +1 builds cannot reproduce +5 steps */
    assert_int_equal(r.mismatch_step, 39);
    cradle_replay_close(&r);
}

static void test_open_refusals(void **unused) {
    (void)unused;
    static cradle_replay r;
    cradle_replay_config config = {.log_path = "/nonexistent/session.log"};
    assert_int_not_equal(cradle_replay_open(&r, &config), 0);
    assert_non_null(strstr(r.message, "/nonexistent/session.log"));
    cradle_replay_close(&r);
    /* Another game than the log's: refused with both names. */
    config = (cradle_replay_config){.log_path = log_path, .copy_dir = dir, .game_path = RELOAD_LIB_OTHER_NAME};
    assert_int_equal(cradle_replay_open(&r, &config), CRADLE_ELOG_GAME);
    assert_non_null(strstr(r.message, "'other'"));
    assert_non_null(strstr(r.message, "'counter'"));
    cradle_replay_close(&r);
}

/* The sync test's pattern: save the state before each step (after a
 * reload: on_reload changed it), run the step, then run it again from the
 * saved state: the same state and output, with the build in charge. */
static void test_rerun_runs_each_step_again_from_its_saved_state(void **unused) {
    (void)unused;
    static cradle_replay r;
    open_replay(&r, (cradle_replay_config){.output = true});
    static uint8_t before[sizeof(counter_state)], after[sizeof(counter_state)];
    uint8_t output[CRADLE_GAME_OUTPUT_MAX];
    cradle_replay_item item, again;
    assert_int_equal(cradle_replay_rerun(&r, before, sizeof before, &again), CRADLE_EINVAL); /* no step yet */
    cradle_sim_save(&r.sim, before);
    int rc;
    while ((rc = cradle_replay_next(&r, &item)) == 1) {
        if (item.kind == CRADLE_REPLAY_RELOAD) cradle_sim_save(&r.sim, before);
        if (item.kind != CRADLE_REPLAY_STEP) {
            assert_int_equal(cradle_replay_rerun(&r, before, sizeof before, &again), CRADLE_EINVAL);
            continue;
        }
        cradle_sim_save(&r.sim, after);
        memcpy(output, item.output, item.output_size);
        assert_int_equal(cradle_replay_rerun(&r, before, sizeof before - 1, &again), CRADLE_ESIM_STATE);
        assert_int_equal(cradle_replay_rerun(&r, before, sizeof before, &again), 0);
        assert_int_equal(again.kind, CRADLE_REPLAY_STEP);
        assert_int_equal(again.step, item.step);
        assert_ptr_equal(again.snapshot, item.snapshot);
        assert_int_equal(again.output_size, item.output_size);
        assert_memory_equal(again.output, output, item.output_size);
        assert_memory_equal(r.sim.state, after, sizeof after);
        assert_int_equal(r.sim.next_step, item.step + 1);
        cradle_sim_save(&r.sim, before);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(r.steps, STEPS);
    assert_int_equal(r.reruns, STEPS);
    assert_int_equal(r.reloads, 2);
    assert_false(r.mismatch);
    assert_int_equal(((const counter_state *)r.sim.state)->reloads, 2);
    cradle_replay_close(&r);
}

/* A re-run really starts from the state it is given, and a step that
 * catch_up() holds is not one to run again. */
static void test_rerun_starts_from_the_given_state(void **unused) {
    (void)unused;
    static cradle_replay r;
    open_replay(&r, (cradle_replay_config){0});
    cradle_replay_item item, again;
    assert_int_equal(cradle_replay_seek(&r, 5), 0);
    counter_state before;
    cradle_sim_save(&r.sim, &before);
    assert_int_equal(cradle_replay_next(&r, &item), 1);
    assert_int_equal(item.kind, CRADLE_REPLAY_STEP);
    int64_t total = ((const counter_state *)r.sim.state)->total;
    before.total += 1000;
    assert_int_equal(cradle_replay_rerun(&r, &before, sizeof before, &again), 0);
    assert_int_equal(((const counter_state *)r.sim.state)->total, total + 1000);
    assert_null(again.output); /* config.output is off */
    assert_int_equal(r.reruns, 1);
    assert_int_equal(r.steps, 6);
    assert_int_equal(cradle_replay_catch_up(&r), 0); /* holds step 6 */
    assert_int_equal(cradle_replay_rerun(&r, &before, sizeof before, &again), CRADLE_EINVAL);
    assert_int_equal(r.error, 0);
    cradle_replay_close(&r);
}

/* The state moved to the caller's storage, less aligned than the driver's:
 * the replay goes on there, its hashes still match, across both reloads,
 * and back home. A move the build does not fit is refused, not sticky. */
static void test_move_goes_on_from_another_address(void **unused) {
    (void)unused;
    static cradle_replay r;
    static _Alignas(64) uint8_t storage[64 + 4096];
    open_replay(&r, (cradle_replay_config){0});
    assert_int_equal(cradle_replay_seek(&r, 15), 0);
    uint64_t hash = cradle_sim_hash(&r.sim);
    assert_int_equal(cradle_replay_move(&r, storage + 8, 8), CRADLE_ERELOAD_SIZE);
    assert_non_null(strstr(r.message, "cannot move the state"));
    assert_int_equal(r.error, 0);
    assert_int_equal(cradle_replay_move(&r, storage + 8, 4096), 0);
    assert_ptr_equal(r.sim.state, storage + 8);
    assert_int_equal(r.sim.state_align, 8);
    assert_true(cradle_sim_hash(&r.sim) == hash);
    assert_int_equal(cradle_replay_seek(&r, 65), 0); /* both reloads, in the caller's storage */
    assert_ptr_equal(r.sim.state, storage + 8);
    assert_int_equal(cradle_replay_move(&r, NULL, 0), 0);
    assert_ptr_equal(r.sim.state, r.storage.state);
    assert_int_equal(r.sim.state_align, 64);
    assert_int_equal(cradle_replay_move(&r, storage + 64, 4096), 0);
    cradle_replay_item item;
    while (cradle_replay_next(&r, &item) == 1) {
    }
    assert_true(r.ended);
    assert_int_equal(r.hashes_checked, STEPS / HASH_INTERVAL);
    assert_false(r.mismatch);
    assert_int_equal(((const counter_state *)(storage + 64))->reloads, 2);
    cradle_replay_close(&r);
}

/* A reload to a build that needs more alignment than the storage the state
 * was moved to: the driver moves it home first, and the replay matches. */
static void test_a_reload_needing_more_alignment_moves_the_state_home(void **unused) {
    (void)unused;
    char path[400];
    snprintf(path, sizeof path, "%s/align.log", dir);
    record_align_session(path);
    static cradle_replay r;
    static _Alignas(64) uint8_t storage[64 + 4096];
    cradle_replay_config config = {.log_path = path, .copy_dir = dir};
    assert_int_equal(cradle_replay_open(&r, &config), 0);
    assert_int_equal(cradle_replay_move(&r, storage + 8, 4096), 0);
    cradle_replay_item item;
    while (cradle_replay_next(&r, &item) == 1) {
        if (item.kind == CRADLE_REPLAY_STEP && item.step < 10) assert_ptr_equal(r.sim.state, storage + 8);
        if (item.kind == CRADLE_REPLAY_RELOAD) assert_ptr_equal(r.sim.state, r.storage.state);
    }
    assert_true(r.ended);
    assert_int_equal(r.error, 0);
    assert_int_equal(r.reloads, 1);
    assert_int_equal(r.sim.state_align, 64);
    assert_int_equal(r.hashes_checked, 4);
    assert_false(r.mismatch);
    cradle_replay_close(&r);
}

/* ---- game data files (minor 4) ----------------------------------------------
 *
 * A session of the counter's data variant (counter/bonus.json's bonus is
 * added every step) recorded as a host records it: the file read and
 * applied before step 0 (data_files), another version before DATA_AT
 * (cradle_sim_apply_data and the writer's DATA record), a hash after every
 * step. The replay applies the archived bytes at the same steps. */
#define DATA_STEPS 80u
#define DATA_AT 40u
#define DATA_FIRST "{\"bonus\": 3}\n"
#define DATA_SECOND "{\"bonus\": -2}"

typedef struct data_counter_state { /* counter.c built with COUNTER_DATA */
    uint64_t steps;
    int64_t total;
    uint64_t presence;
    uint64_t seed;
    uint32_t players;
    uint32_t reloads;
    int64_t bonus;
} data_counter_state;

static char data_log[320];
static uint64_t data_hashes[DATA_STEPS]; /* the session's hash after each step */

static void put_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

static void record_data_session(void) {
    static cradle_reload lib;
    char message[512];
    cradle_reload_config rc = {.path = RELOAD_LIB_DATA, .copy_dir = dir, .state_capacity = 4096};
    assert_int_equal(cradle_reload_open(&lib, &rc, 0, message, sizeof message), 0);
    const cradle_game_contract *c = cradle_reload_contract(&lib);
    static _Alignas(64) uint8_t state[4096], scratch[4096];
    cradle_sim sim;
    cradle_sim_config sc = {.state = state, .scratch = scratch, .state_capacity = sizeof state, .state_align = 64,
                            .hash = cradle_hash64};
    assert_int_equal(cradle_sim_init(&sim, &sc, c, message, sizeof message), 0);
    assert_int_equal(cradle_sim_start(&sim, 11, 2), 0);
    cradle_log_header h;
    assert_int_equal(cradle_log_header_from_contract(&h, c, 11, 2, 0, 1), 0);
    static cradle_log_writer w;
    cradle_log_writer_config wc = {.sync_inline = true};
    snprintf(data_log, sizeof data_log, "%s/data.log", dir);
    assert_int_equal(cradle_log_writer_open(&w, data_log, &h, &wc, RELOAD_LIB_DATA, message, sizeof message), 0);

    /* the game's folder, as a host is pointed at one */
    char game_dir[400], sub[420], file[460];
    snprintf(game_dir, sizeof game_dir, "%s/data_game", dir);
    snprintf(sub, sizeof sub, "%s/counter", game_dir);
    snprintf(file, sizeof file, "%s/bonus.json", sub);
    assert_int_equal(mkdir(game_dir, 0755), 0);
    assert_int_equal(mkdir(sub, 0755), 0);
    put_file(file, DATA_FIRST);
    static cradle_data_files d;
    assert_int_equal(cradle_data_files_open(&d, c, game_dir, 0, 0, message, sizeof message), 0);
    assert_int_equal(cradle_data_files_read(&d, 0, 0), 0);
    if (cradle_data_files_apply(&d, 0, &sim, &w) != 0) fail_msg("apply: %s", d.message);

    uint8_t snapshot[16] = {0};
    for (uint64_t s = 0; s < DATA_STEPS; s++) {
        if (s == DATA_AT) { /* the other way a host may take it: sim, then log */
            static const char second[] = DATA_SECOND;
            uint32_t size = (uint32_t)strlen(second);
            uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES];
            crypto_generichash(hash, sizeof hash, (const uint8_t *)second, size, NULL, 0);
            cradle_data_refusal refusal;
            assert_int_equal(cradle_sim_apply_data(&sim, 0, (const uint8_t *)second, size, &refusal), 0);
            assert_int_equal(
                cradle_log_writer_append_data(&w, s, 0, "counter/bonus.json", (const uint8_t *)second, size, hash), 0);
        }
        snapshot[0] = (uint8_t)(s % 4u);
        snapshot[1] = (uint8_t)s;
        assert_int_equal(cradle_log_writer_append_step(&w, s, snapshot), 0);
        cradle_sim_step(&sim, snapshot);
        data_hashes[s] = cradle_sim_hash(&sim);
        assert_int_equal(cradle_log_writer_append_hash(&w, s, data_hashes[s]), 0);
    }
    assert_int_equal(sim.data_applied, 2);
    assert_int_equal(((const data_counter_state *)state)->bonus, -2);
    assert_int_equal(cradle_log_writer_close(&w, data_hashes[DATA_STEPS - 1]), 0);
    cradle_data_files_close(&d);
    cradle_reload_close(&lib);
}

/* Replays the data session to its end or its first failure; returns the code. */
static int replay_data_session(cradle_replay *r, int *data_items) {
    cradle_replay_config config = {.log_path = data_log, .copy_dir = dir};
    if (cradle_replay_open(r, &config) != 0) fail_msg("open: %s", r->message);
    cradle_replay_item item;
    int rc;
    *data_items = 0;
    while ((rc = cradle_replay_next(r, &item)) == 1) {
        if (item.kind == CRADLE_REPLAY_DATA) ++*data_items;
    }
    return rc;
}

/* The archive file of the data the session applied as `text`. */
static void data_archive_path(char *out, size_t size, const char *text) {
    uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES];
    crypto_generichash(hash, sizeof hash, (const uint8_t *)text, strlen(text), NULL, 0);
    assert_int_equal(cradle_log_data_path(out, size, data_log, hash), 0);
}

static void test_replays_the_data_files_at_their_steps(void **unused) {
    (void)unused;
    record_data_session();
    static cradle_replay r;
    cradle_replay_config config = {.log_path = data_log, .copy_dir = dir};
    if (cradle_replay_open(&r, &config) != 0) fail_msg("open: %s", r.message);
    cradle_replay_item item;
    uint64_t steps = 0, hashes = 0;
    int data = 0, rc;
    bool trailer = false;
    while ((rc = cradle_replay_next(&r, &item)) == 1) {
        switch (item.kind) {
        case CRADLE_REPLAY_STEP:
            assert_int_equal(item.step, steps++);
            break;
        case CRADLE_REPLAY_HASH:
            assert_true(item.matches);
            assert_true(item.logged_hash == data_hashes[item.step]);
            hashes++;
            break;
        case CRADLE_REPLAY_DATA: {
            const char *text = data == 0 ? DATA_FIRST : DATA_SECOND;
            assert_int_equal(item.step, data == 0 ? 0 : DATA_AT);
            assert_int_equal(r.sim.next_step, item.step); /* before that step */
            assert_string_equal(item.data_name, "counter/bonus.json");
            assert_int_equal(item.record->data_file, 0);
            assert_int_equal(item.data_size, strlen(text));
            assert_memory_equal(item.data_bytes, text, strlen(text));
            assert_int_equal(((const data_counter_state *)r.sim.state)->bonus, data == 0 ? 3 : -2);
            data++;
            break;
        }
        case CRADLE_REPLAY_TRAILER:
            assert_true(item.matches);
            assert_true(item.logged_hash == data_hashes[DATA_STEPS - 1]);
            assert_int_equal(item.step, DATA_STEPS);
            trailer = true;
            break;
        default:
            fail_msg("an item of kind %d at step %llu", (int)item.kind, (unsigned long long)item.step);
        }
    }
    if (rc != 0) fail_msg("replay: %s", r.message);
    assert_true(r.ended);
    assert_int_equal(data, 2);
    assert_int_equal(r.data_applied, 2);
    assert_int_equal(r.sim.data_applied, 2);
    assert_int_equal(steps, DATA_STEPS);
    assert_int_equal(hashes, DATA_STEPS);
    assert_int_equal(r.hashes_checked, DATA_STEPS);
    assert_false(r.mismatch);
    assert_true(trailer);
    cradle_replay_close(&r);

    /* stop_at the second file's step: it has not taken effect; seek across it
     * and back reproduces the session's hashes. */
    config.stop_at = DATA_AT;
    assert_int_equal(cradle_replay_open(&r, &config), 0);
    while (cradle_replay_next(&r, &item) == 1) {
    }
    assert_true(r.stopped);
    assert_int_equal(r.sim.next_step, DATA_AT);
    assert_int_equal(r.data_applied, 1);
    assert_int_equal(((const data_counter_state *)r.sim.state)->bonus, 3);
    cradle_replay_close(&r);
    config.stop_at = 0;
    assert_int_equal(cradle_replay_open(&r, &config), 0);
    assert_int_equal(cradle_replay_seek(&r, DATA_AT + 5), 0);
    assert_true(cradle_sim_hash(&r.sim) == data_hashes[DATA_AT + 4]);
    assert_int_equal(cradle_replay_seek(&r, 10), 0); /* back: from the start again */
    assert_true(cradle_sim_hash(&r.sim) == data_hashes[9]);
    assert_int_equal(((const data_counter_state *)r.sim.state)->bonus, 3);
    cradle_replay_close(&r);

    /* A build that declares no data files cannot apply them (forced past the
     * build check): the replay fails at step 0 naming the file. */
    config.game_path = RELOAD_LIB_INC1;
    config.force = true;
    config.warn = warn_count;
    int warnings = 0;
    config.warn_context = &warnings;
    if (cradle_replay_open(&r, &config) != 0) fail_msg("open: %s", r.message);
    assert_true(warnings >= 1); /* another build than the log's */
    while ((rc = cradle_replay_next(&r, &item)) == 1) {
    }
    assert_int_equal(rc, CRADLE_EDATA);
    assert_non_null(strstr(r.message, "data file 1 'counter/bonus.json' at step 0"));
    assert_non_null(strstr(r.message, "does not declare"));
    assert_int_equal(r.sim.next_step, 0);
    assert_int_equal(r.data_applied, 0);
    cradle_replay_close(&r);
}

/* The archive is what the replay trusts: an altered file (the same size or
 * another) or a missing one fails the replay, naming the file and the step. */
static void test_an_altered_or_missing_data_archive_fails_the_replay(void **unused) {
    (void)unused;
    if (!data_log[0]) record_data_session(); /* alone: -R or a filter */
    char first[700], second[700];
    data_archive_path(first, sizeof first, DATA_FIRST);
    data_archive_path(second, sizeof second, DATA_SECOND);
    static cradle_replay r;
    int data = 0;

    put_file(first, "{\"bonus\": 4}\n"); /* the same size, other bytes */
    assert_int_equal(replay_data_session(&r, &data), CRADLE_ELOG_CORRUPT);
    assert_non_null(strstr(r.message, "data counter/bonus.json at step 0"));
    assert_non_null(strstr(r.message, first));
    assert_non_null(strstr(r.message, "another size or hash"));
    assert_int_equal(data, 0);
    assert_int_equal(r.data_applied, 0);
    assert_int_equal(r.sim.next_step, 0);
    assert_int_equal(cradle_replay_next(&r, &(cradle_replay_item){0}), CRADLE_ELOG_CORRUPT); /* sticky */
    cradle_replay_close(&r);

    put_file(first, DATA_FIRST "\n"); /* one byte more */
    assert_int_equal(replay_data_session(&r, &data), CRADLE_ELOG_CORRUPT);
    assert_non_null(strstr(r.message, "another size or hash"));
    cradle_replay_close(&r);
    put_file(first, "{\"bonus\": 3}"); /* one byte less */
    assert_int_equal(replay_data_session(&r, &data), CRADLE_ELOG_CORRUPT);
    cradle_replay_close(&r);

    put_file(first, DATA_FIRST); /* restored: the replay goes on to the second file */
    assert_int_equal(unlink(second), 0);
    assert_int_equal(replay_data_session(&r, &data), CRADLE_EIO);
    assert_non_null(strstr(r.message, "data counter/bonus.json at step 40"));
    assert_non_null(strstr(r.message, second));
    assert_non_null(strstr(r.message, "missing"));
    assert_int_equal(data, 1);
    assert_int_equal(r.data_applied, 1);
    assert_int_equal(r.sim.next_step, DATA_AT);
    assert_int_equal(r.hashes_checked, DATA_AT);
    assert_false(r.mismatch);
    cradle_replay_close(&r);

    put_file(second, DATA_SECOND); /* and back as it was: the replay is whole again */
    assert_int_equal(replay_data_session(&r, &data), 0);
    assert_int_equal(data, 2);
    assert_false(r.mismatch);
    cradle_replay_close(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replays_every_record_and_both_reloads),
        cmocka_unit_test(test_stop_at_and_seek),
        cmocka_unit_test(test_catch_up_handles_a_steps_records_without_running_the_next),
        cmocka_unit_test(test_a_tampered_hash_is_the_first_mismatch),
        cmocka_unit_test(test_open_refusals),
        cmocka_unit_test(test_rerun_runs_each_step_again_from_its_saved_state),
        cmocka_unit_test(test_rerun_starts_from_the_given_state),
        cmocka_unit_test(test_move_goes_on_from_another_address),
        cmocka_unit_test(test_a_reload_needing_more_alignment_moves_the_state_home),
        cmocka_unit_test(test_replays_the_data_files_at_their_steps),
        cmocka_unit_test(test_an_altered_or_missing_data_archive_fails_the_replay),
        cmocka_unit_test(test_a_missing_build_fails_unless_forced), /* last: removes a build */
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
