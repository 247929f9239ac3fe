/* Tests for data_files, the host's side of a game's data files (game_abi.h,
 * minor 4): finding the files a build declares under a folder, reading one
 * whole with its BLAKE2b-256, refusing one over the game's limit, watching
 * them (a change is reported once it has held still for settle_ns counted
 * from the file's own modification time), a vanished file, another folder,
 * and applying a file to a sim and a session log.
 *
 * Two games: "watched", a fake declared here with two files (its data()
 * takes any bytes and counts them into its state), for the watching; and
 * the counter's data variant (RELOAD_LIB_DATA, loaded through reload as a
 * host does), whose real data() parses counter/bonus.json, for applying
 * and logging. Every test works in its own folder under one mkdtemp.
 *
 * Time: most tests pass a fake monotonic clock and set the files'
 * modification times explicitly (utimensat), so "old" and "from the
 * future" are exact; the one test on the real clocks waits for its
 * condition with a deadline. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cradle/data_files.h"
#include "cradle/hash.h"
#include "cradle/log.h"
#include "cradle/reload.h"
#include "cradle/sim.h"
#include "cradle/systime.h"

#define MS 1000000ull
#define SETTLE (50u * MS)
#define FAKE_NOW (1000000u * MS) /* a fake monotonic clock, far from the real one */
#define DEADLINE_NS (5000u * MS)

static char root[256]; /* the mkdtemp every test works under */

/* ---- the fake game: two data files, any bytes taken ----------------------- */

typedef struct watched_state {
    uint64_t applied;  /* data() calls that accepted */
    uint32_t sizes[2]; /* bytes of each file's last application */
    uint8_t first[2];  /* each file's first byte */
} watched_state;

static bool watched_data(void *state, uint32_t file, const uint8_t *bytes, uint32_t size,
                         cradle_data_refusal *refusal) {
    (void)refusal;
    watched_state *s = state;
    s->applied++;
    s->sizes[file] = size;
    s->first[file] = size ? bytes[0] : 0;
    return true;
}

static int watched_init(void *state, uint64_t seed, uint32_t players) {
    (void)state, (void)seed, (void)players;
    return 0;
}

static void watched_step(void *state, const cradle_game_step *step, const cradle_event_sink *events) {
    (void)state, (void)step, (void)events;
}

static const cradle_game_data_file watched_files[] = {{"game/a.json", 64}, {"b.txt", 16}};

static const cradle_game_contract watched = {
    .abi_major = CRADLE_ABI_MAJOR,
    .abi_minor = CRADLE_ABI_MINOR,
    .state_size = sizeof(watched_state),
    .state_align = 8,
    .input_bytes = 1,
    .max_players = 1,
    .steps_per_second = 60,
    .source_frames_per_second = 60,
    .name = "watched",
    .build_id = "watched-1",
    .init = watched_init,
    .step = watched_step,
    .data_files = watched_files,
    .data_file_count = 2,
    .data = watched_data,
};

typedef struct watched_sim {
    alignas(64) uint8_t state[64];
    alignas(64) uint8_t scratch[64];
    cradle_sim sim;
} watched_sim;

static void open_watched_sim(watched_sim *w) {
    cradle_sim_config config = {.state = w->state, .scratch = w->scratch, .state_capacity = sizeof w->state,
                                .state_align = 64, .hash = cradle_hash64};
    char message[128];
    assert_int_equal(cradle_sim_init(&w->sim, &config, &watched, message, sizeof message), 0);
    assert_int_equal(cradle_sim_start(&w->sim, 1, 1), 0);
}

/* ---- files ----------------------------------------------------------------- */

/* "<root>/<name>" into out, and the folder made. */
static void folder(char *out, size_t size, const char *name) {
    int k = snprintf(out, size, "%s/%s", root, name);
    assert_true(k > 0 && (size_t)k < size);
    assert_int_equal(mkdir(out, 0755), 0);
}

static void join(char *out, size_t size, const char *dir, const char *name) {
    int k = snprintf(out, size, "%s/%s", dir, name);
    assert_true(k > 0 && (size_t)k < size);
}

/* Sets path's modification (and access) time to wall-clock nanoseconds. */
static void set_mtime(const char *path, uint64_t wall_ns) {
    struct timespec times[2] = {{.tv_sec = (time_t)(wall_ns / 1000000000u), .tv_nsec = (long)(wall_ns % 1000000000u)},
                                {.tv_sec = (time_t)(wall_ns / 1000000000u), .tv_nsec = (long)(wall_ns % 1000000000u)}};
    assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
}

/* Writes the file dir/name (its folder made), modified at wall_ns. */
static void put_at(const char *dir, const char *name, const void *bytes, size_t size, uint64_t wall_ns) {
    char path[600];
    join(path, sizeof path, dir, name);
    const char *slash = strrchr(name, '/');
    if (slash) {
        char sub[600];
        snprintf(sub, sizeof sub, "%s/%.*s", dir, (int)(slash - name), name);
        assert_true(mkdir(sub, 0755) == 0 || errno == EEXIST);
    }
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (size) assert_int_equal(fwrite(bytes, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
    set_mtime(path, wall_ns);
}

/* A time long enough ago to have settled: seconds_ago before now. Distinct
 * values give distinct modification times (a change a look can see). */
static uint64_t ago(unsigned seconds_ago) { return cradle_wall_ns() - (uint64_t)seconds_ago * 1000000000u; }

static void put_old(const char *dir, const char *name, const char *text, unsigned seconds_ago) {
    put_at(dir, name, text, strlen(text), ago(seconds_ago));
}

static void remove_file(const char *dir, const char *name) {
    char path[600];
    join(path, sizeof path, dir, name);
    assert_int_equal(unlink(path), 0);
}

static void expect_hash_of(const cradle_data_file *f, const void *bytes, size_t size) {
    uint8_t expect[CRADLE_DATA_HASH_BYTES];
    crypto_generichash(expect, sizeof expect, bytes, size, NULL, 0);
    assert_true(f->valid);
    assert_int_equal(f->size, size);
    if (size) assert_memory_equal(f->bytes, bytes, size);
    assert_memory_equal(f->hash, expect, sizeof expect);
}

static void open_watched(cradle_data_files *d, const char *dir, uint64_t now) {
    char message[256] = "junk";
    assert_int_equal(cradle_data_files_open(d, &watched, dir, SETTLE, now, message, sizeof message), 0);
    assert_string_equal(message, "");
}

static int setup(void **unused) {
    (void)unused;
    if (sodium_init() < 0) return -1;
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/cradle-data-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **unused) {
    (void)unused;
    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s'", root);
    return system(command);
}

/* ---- tests ----------------------------------------------------------------- */

static void test_open_finds_the_declared_files(void **unused) {
    (void)unused;
    char dir[400];
    folder(dir, sizeof dir, "open");
    static cradle_data_files d;
    open_watched(&d, dir, FAKE_NOW);
    assert_int_equal(d.count, 2);
    assert_int_equal(d.settle_ns, SETTLE);
    char expect[600];
    assert_string_equal(d.files[0].name, "game/a.json");
    join(expect, sizeof expect, dir, "game/a.json");
    assert_string_equal(d.files[0].path, expect);
    assert_int_equal(d.files[0].max_bytes, 64);
    assert_string_equal(d.files[1].name, "b.txt");
    assert_int_equal(d.files[1].max_bytes, 16);
    for (uint32_t i = 0; i < 2; i++) {
        assert_non_null(d.files[i].bytes);
        assert_false(d.files[i].valid);
        assert_false(d.files[i].applied);
        assert_false(d.files[i].pending); /* neither exists: nothing seen */
    }
    assert_true(cradle_data_files_next_ns(&d) == UINT64_MAX);
    assert_int_equal(cradle_data_files_poll(&d, FAKE_NOW + 10 * SETTLE), -1);
    cradle_data_files_close(&d);
    cradle_data_files_close(&d); /* twice is safe */
    assert_int_equal(d.count, 0);

    /* settle 0: the default. */
    char message[256];
    assert_int_equal(cradle_data_files_open(&d, &watched, dir, 0, FAKE_NOW, message, sizeof message), 0);
    assert_true(d.settle_ns == CRADLE_DATA_DEFAULT_SETTLE_NS);
    cradle_data_files_close(&d);

    /* A build without data files (none declared, or of minor 3): none. */
    cradle_game_contract none = watched;
    none.data_file_count = 0;
    assert_int_equal(cradle_data_files_open(&d, &none, dir, SETTLE, FAKE_NOW, message, sizeof message), 0);
    assert_int_equal(d.count, 0);
    assert_int_equal(cradle_data_files_poll(&d, FAKE_NOW), -1);
    assert_true(cradle_data_files_next_ns(&d) == UINT64_MAX);
    cradle_data_files_close(&d);
    cradle_game_contract old = watched;
    old.abi_minor = CRADLE_ABI_MINOR_LAYOUT;
    assert_int_equal(cradle_data_files_open(&d, &old, dir, SETTLE, FAKE_NOW, message, sizeof message), 0);
    assert_int_equal(d.count, 0);
    cradle_data_files_close(&d);

    /* A folder whose paths do not fit: refused with the file's name, nothing held. */
    static char deep[CRADLE_DATA_PATH_MAX];
    memset(deep, 'd', sizeof deep - 8);
    deep[sizeof deep - 8] = '\0';
    assert_int_equal(cradle_data_files_open(&d, &watched, deep, SETTLE, FAKE_NOW, message, sizeof message),
                     CRADLE_ERANGE);
    /* The message names the file and the reason first, then the folder's
     * first 200 bytes (a folder of 4 KiB would not fit a message). */
    char wanted[300];
    snprintf(wanted, sizeof wanted, "data file game/a.json: the path is too long under %.200s...", deep);
    assert_string_equal(message, wanted);
    assert_int_equal(d.count, 0);
    assert_null(d.files[0].bytes);
    cradle_data_files_close(&d);
}

static void test_library_folder_and_hash_hex(void **unused) {
    (void)unused;
    char out[64];
    assert_int_equal(cradle_data_files_library_folder(out, sizeof out, "/opt/games/vanguard.so"), 0);
    assert_string_equal(out, "/opt/games");
    assert_int_equal(cradle_data_files_library_folder(out, sizeof out, "build/counter.so"), 0);
    assert_string_equal(out, "build");
    assert_int_equal(cradle_data_files_library_folder(out, sizeof out, "counter.so"), 0);
    assert_string_equal(out, ".");
    assert_int_equal(cradle_data_files_library_folder(out, sizeof out, "/counter.so"), 0);
    assert_string_equal(out, "/");
    assert_int_equal(cradle_data_files_library_folder(out, 5, "/opt/games/vanguard.so"), CRADLE_ERANGE);

    uint8_t hash[CRADLE_DATA_HASH_BYTES];
    for (size_t i = 0; i < sizeof hash; i++) hash[i] = (uint8_t)(i * 17u + 1u);
    char hex[2 * CRADLE_DATA_HASH_BYTES + 1];
    cradle_data_hash_hex(hex, hash);
    assert_int_equal(strlen(hex), 64);
    assert_memory_equal(hex, "0112233445566778", 16);
    assert_string_equal(hex + 60, "ff10"); /* bytes 30, 31: 511 and 528 mod 256 */
}

/* read: a missing file, a valid one (its size, bytes and BLAKE2b-256), an
 * empty one, one at and one over the game's limit, a folder. */
static void test_read_reports_each_file_or_why_not(void **unused) {
    (void)unused;
    char dir[400];
    folder(dir, sizeof dir, "read");
    static cradle_data_files d;
    open_watched(&d, dir, FAKE_NOW);

    assert_int_equal(cradle_data_files_read(&d, 0, FAKE_NOW), CRADLE_EIO);
    assert_non_null(strstr(d.message, "game/a.json"));
    assert_non_null(strstr(d.message, strerror(ENOENT)));
    assert_false(d.files[0].valid);

    const char *text = "{\"bonus\": 5}\n";
    put_old(dir, "game/a.json", text, 10);
    assert_int_equal(cradle_data_files_read(&d, 0, FAKE_NOW), 0);
    expect_hash_of(&d.files[0], text, strlen(text));
    assert_false(d.files[0].pending); /* the read took the change */
    assert_int_equal(cradle_data_files_poll(&d, FAKE_NOW + 10 * SETTLE), -1);

    put_at(dir, "b.txt", "", 0, ago(10));
    assert_int_equal(cradle_data_files_read(&d, 1, FAKE_NOW), 0);
    expect_hash_of(&d.files[1], "", 0);

    static const char sixteen[] = "0123456789abcdef";
    put_at(dir, "b.txt", sixteen, 16, ago(9));
    assert_int_equal(cradle_data_files_read(&d, 1, FAKE_NOW), 0);
    expect_hash_of(&d.files[1], sixteen, 16);

    put_at(dir, "b.txt", "0123456789abcdefg", 17, ago(8));
    assert_int_equal(cradle_data_files_read(&d, 1, FAKE_NOW), CRADLE_EDATA);
    assert_string_equal(d.message, "b.txt is 17 bytes, over the game's limit of 16 bytes");
    assert_false(d.files[1].valid);
    static char big[1000];
    memset(big, 'z', sizeof big);
    put_at(dir, "b.txt", big, sizeof big, ago(7));
    assert_int_equal(cradle_data_files_read(&d, 1, FAKE_NOW), CRADLE_EDATA);
    assert_string_equal(d.message, "b.txt is 1000 bytes, over the game's limit of 16 bytes");
    assert_false(d.files[1].valid);
    assert_true(d.files[0].valid); /* the other file is untouched */

    /* A folder where the file should be: not a file. */
    remove_file(dir, "b.txt");
    char path[600];
    join(path, sizeof path, dir, "b.txt");
    assert_int_equal(mkdir(path, 0755), 0);
    errno = ENOENT; /* a stale errno from an earlier call must not name the failure */
    assert_int_equal(cradle_data_files_read(&d, 1, FAKE_NOW), CRADLE_EIO);
    assert_non_null(strstr(d.message, "b.txt"));
    assert_non_null(strstr(d.message, "not a regular file"));
    assert_false(d.files[1].valid);
    cradle_data_files_close(&d);
}

/* An old file is reported at the first poll; one from the future counts its
 * settle from the look that saw it, exactly. */
static void test_poll_reports_a_settled_change_once(void **unused) {
    (void)unused;
    char dir[400];
    folder(dir, sizeof dir, "poll");
    const char *text = "old";
    put_old(dir, "game/a.json", text, 10);
    static cradle_data_files d;
    open_watched(&d, dir, FAKE_NOW);
    assert_true(d.files[0].pending);
    assert_false(d.files[1].pending);
    assert_true(cradle_data_files_next_ns(&d) == FAKE_NOW); /* settled already */
    assert_int_equal(cradle_data_files_poll(&d, FAKE_NOW), 0);
    expect_hash_of(&d.files[0], text, strlen(text));
    assert_int_equal(cradle_data_files_poll(&d, FAKE_NOW), -1); /* once */
    assert_true(cradle_data_files_next_ns(&d) == UINT64_MAX);

    /* From the future (a clock step): settle counted from the look. */
    uint64_t now = FAKE_NOW + 1000 * MS;
    put_at(dir, "b.txt", "later", 5, cradle_wall_ns() + 3600ull * 1000000000u);
    assert_int_equal(cradle_data_files_poll(&d, now), -1);
    assert_true(cradle_data_files_next_ns(&d) == now + SETTLE);
    assert_int_equal(cradle_data_files_poll(&d, now + SETTLE - 1), -1);
    /* ... and written again before it settled: the wait starts again. */
    put_at(dir, "b.txt", "later!", 6, cradle_wall_ns() + 3601ull * 1000000000u);
    assert_int_equal(cradle_data_files_poll(&d, now + SETTLE - 1), -1);
    assert_true(cradle_data_files_next_ns(&d) == now + 2 * SETTLE - 1);
    assert_int_equal(cradle_data_files_poll(&d, now + 2 * SETTLE - 2), -1);
    assert_int_equal(cradle_data_files_poll(&d, now + 2 * SETTLE - 1), 1);
    expect_hash_of(&d.files[1], "later!", 6);
    assert_int_equal(cradle_data_files_poll(&d, now + 10 * SETTLE), -1);
    cradle_data_files_close(&d);
}

/* On the real clocks: a file just written is not read before it has held
 * still for settle_ns from its modification time; polling at every turn of
 * a loop reads it once that has passed. */
static void test_a_fresh_file_waits_for_settle_on_the_real_clocks(void **unused) {
    (void)unused;
    char dir[400];
    folder(dir, sizeof dir, "fresh");
    static cradle_data_files d;
    open_watched(&d, dir, cradle_mono_ns());
    uint64_t written_mono = cradle_mono_ns();
    put_at(dir, "game/a.json", "fresh", 5, cradle_wall_ns());
    int first = cradle_data_files_poll(&d, cradle_mono_ns());
    uint64_t elapsed = cradle_mono_ns() - written_mono;
    if (elapsed < SETTLE / 2) { /* a machine this busy proves nothing either way */
        assert_int_equal(first, -1);
        assert_true(d.files[0].pending);
        uint64_t next = cradle_data_files_next_ns(&d);
        assert_true(next != UINT64_MAX);
        assert_true(next <= cradle_mono_ns() + SETTLE);
    }
    int got = first;
    uint64_t at = cradle_mono_ns();
    while (got == -1 && at - written_mono < DEADLINE_NS) {
        struct timespec pause = {.tv_nsec = 2 * (long)MS};
        nanosleep(&pause, NULL);
        at = cradle_mono_ns();
        got = cradle_data_files_poll(&d, at);
    }
    assert_int_equal(got, 0);
    /* written_mono was taken before the modification time was: the report is
     * at least settle_ns after it (1 ms for the clocks' rounding). */
    assert_true(at + MS >= written_mono + SETTLE);
    expect_hash_of(&d.files[0], "fresh", 5);
    cradle_data_files_close(&d);
}

/* A file rewritten with the same bytes is reported (a new time), but
 * applying it runs nothing; new bytes, and the old ones again, apply. */
static void test_the_same_bytes_again_apply_as_unchanged(void **unused) {
    (void)unused;
    char dir[400];
    folder(dir, sizeof dir, "same");
    static watched_sim w;
    open_watched_sim(&w);
    const watched_state *s = (const watched_state *)w.state;
    put_old(dir, "game/a.json", "A1", 20);
    static cradle_data_files d;
    open_watched(&d, dir, FAKE_NOW);
    assert_int_equal(cradle_data_files_poll(&d, FAKE_NOW), 0);
    assert_int_equal(cradle_data_files_apply(&d, 0, &w.sim, NULL), 0);
    assert_true(d.files[0].applied);
    assert_memory_equal(d.files[0].applied_hash, d.files[0].hash, CRADLE_DATA_HASH_BYTES);
    assert_int_equal(d.files[0].applied_step, 0);
    assert_int_equal(w.sim.data_applied, 1);
    assert_int_equal(s->first[0], 'A');

    uint8_t snapshot[2] = {1, 0};
    cradle_sim_step(&w.sim, snapshot);
    put_old(dir, "game/a.json", "A1", 19); /* the same bytes, another time */
    assert_int_equal(cradle_data_files_poll(&d, FAKE_NOW + 1), 0);
    assert_int_equal(cradle_data_files_apply(&d, 0, &w.sim, NULL), CRADLE_DATA_UNCHANGED);
    assert_int_equal(w.sim.data_applied, 1);
    assert_int_equal(s->applied, 1);
    assert_int_equal(d.files[0].applied_step, 0); /* still the first application */

    put_old(dir, "game/a.json", "B22", 18);
    assert_int_equal(cradle_data_files_poll(&d, FAKE_NOW + 2), 0);
    assert_int_equal(cradle_data_files_apply(&d, 0, &w.sim, NULL), 0);
    assert_int_equal(d.files[0].applied_step, 1);
    assert_int_equal(s->first[0], 'B');
    assert_int_equal(s->sizes[0], 3);
    put_old(dir, "game/a.json", "A1", 17); /* back to the first bytes: they apply again */
    assert_int_equal(cradle_data_files_poll(&d, FAKE_NOW + 3), 0);
    assert_int_equal(cradle_data_files_apply(&d, 0, &w.sim, NULL), 0);
    assert_int_equal(s->first[0], 'A');
    assert_int_equal(w.sim.data_applied, 3);
    cradle_data_files_close(&d);
}

/* A file that goes away is reported once, as -2 - i, after settle; when it
 * comes back it is read again. */
static void test_a_vanished_file_is_reported(void **unused) {
    (void)unused;
    char dir[400];
    folder(dir, sizeof dir, "vanish");
    put_old(dir, "game/a.json", "a", 10);
    put_old(dir, "b.txt", "b", 10);
    static cradle_data_files d;
    open_watched(&d, dir, FAKE_NOW);
    assert_int_equal(cradle_data_files_read(&d, 0, FAKE_NOW), 0);
    assert_int_equal(cradle_data_files_read(&d, 1, FAKE_NOW), 0);
    assert_true(cradle_data_files_next_ns(&d) == UINT64_MAX);

    remove_file(dir, "b.txt");
    uint64_t now = FAKE_NOW + 100 * MS;
    assert_int_equal(cradle_data_files_poll(&d, now), -1);
    assert_true(cradle_data_files_next_ns(&d) == now + SETTLE);
    assert_int_equal(cradle_data_files_poll(&d, now + SETTLE - 1), -1);
    assert_int_equal(cradle_data_files_poll(&d, now + SETTLE), -2 - 1);
    assert_non_null(strstr(d.message, "b.txt"));
    assert_non_null(strstr(d.message, strerror(ENOENT)));
    assert_false(d.files[1].valid);
    assert_true(d.files[0].valid);
    assert_int_equal(cradle_data_files_poll(&d, now + 10 * SETTLE), -1); /* once */
    assert_true(cradle_data_files_next_ns(&d) == UINT64_MAX);

    /* The first file gone too: -2 - 0. */
    remove_file(dir, "game/a.json");
    now += 20 * SETTLE;
    assert_int_equal(cradle_data_files_poll(&d, now), -1);
    assert_int_equal(cradle_data_files_poll(&d, now + SETTLE), -2);
    assert_non_null(strstr(d.message, "game/a.json"));

    put_old(dir, "b.txt", "back", 5);
    now += 20 * SETTLE;
    assert_int_equal(cradle_data_files_poll(&d, now), 1);
    expect_hash_of(&d.files[1], "back", 4);
    cradle_data_files_close(&d);
}

/* move: the files are found under another folder; what was applied stays
 * applied, so the same bytes there do not apply again. */
static void test_move_finds_the_files_under_another_folder(void **unused) {
    (void)unused;
    char one[400], two[400];
    folder(one, sizeof one, "move1");
    folder(two, sizeof two, "move2");
    put_old(one, "game/a.json", "one", 10);
    put_old(one, "b.txt", "same", 10);
    put_old(two, "game/a.json", "two", 10);
    put_old(two, "b.txt", "same", 12);
    static watched_sim w;
    open_watched_sim(&w);
    static cradle_data_files d;
    open_watched(&d, one, FAKE_NOW);
    for (uint32_t i = 0; i < 2; i++) {
        assert_int_equal(cradle_data_files_read(&d, i, FAKE_NOW), 0);
        assert_int_equal(cradle_data_files_apply(&d, i, &w.sim, NULL), 0);
    }
    assert_int_equal(w.sim.data_applied, 2);

    /* A folder too long: refused, nothing changes. */
    static char deep[CRADLE_DATA_PATH_MAX];
    memset(deep, 'd', sizeof deep - 4);
    deep[sizeof deep - 4] = '\0';
    char before[CRADLE_DATA_PATH_MAX];
    memcpy(before, d.files[0].path, sizeof before);
    assert_int_equal(cradle_data_files_move(&d, deep, FAKE_NOW), CRADLE_ERANGE);
    char wanted[300];
    snprintf(wanted, sizeof wanted, "data file game/a.json: the path is too long under %.200s...", deep);
    assert_string_equal(d.message, wanted);
    assert_string_equal(d.files[0].path, before);
    assert_int_equal(cradle_data_files_poll(&d, FAKE_NOW + SETTLE), -1);

    uint64_t now = FAKE_NOW + 1000 * MS;
    assert_int_equal(cradle_data_files_move(&d, two, now), 0);
    char expect[600];
    join(expect, sizeof expect, two, "game/a.json");
    assert_string_equal(d.files[0].path, expect);
    join(expect, sizeof expect, two, "b.txt");
    assert_string_equal(d.files[1].path, expect);
    assert_true(cradle_data_files_next_ns(&d) == now); /* both old there: settled */
    bool seen[2] = {false, false};
    for (int k = 0; k < 2; k++) {
        int i = cradle_data_files_poll(&d, now);
        assert_true(i == 0 || i == 1);
        assert_false(seen[i]);
        seen[i] = true;
        if (i == 0) {
            expect_hash_of(&d.files[0], "two", 3);
            assert_int_equal(cradle_data_files_apply(&d, 0, &w.sim, NULL), 0);
        } else {
            expect_hash_of(&d.files[1], "same", 4);
            assert_int_equal(cradle_data_files_apply(&d, 1, &w.sim, NULL), CRADLE_DATA_UNCHANGED);
        }
    }
    assert_int_equal(cradle_data_files_poll(&d, now), -1);
    assert_int_equal(w.sim.data_applied, 3);
    /* Changes in the old folder are no longer seen; in the new one they are. */
    put_old(one, "game/a.json", "one again", 5);
    assert_int_equal(cradle_data_files_poll(&d, now + SETTLE), -1);
    put_old(two, "game/a.json", "two again", 5);
    assert_int_equal(cradle_data_files_poll(&d, now + SETTLE), 0);
    expect_hash_of(&d.files[0], "two again", 9);
    cradle_data_files_close(&d);
}

/* ---- the counter's data variant, applied and logged ------------------------- */

typedef struct counter_state { /* shared/games/counter/counter.c with COUNTER_DATA */
    uint64_t steps;
    int64_t total;
    uint64_t presence;
    uint64_t seed;
    uint32_t players;
    uint32_t reloads;
    int64_t bonus;
} counter_state;

/* Checks that the archive of the log holds exactly these bytes. */
static void expect_archived(const char *log_path, const cradle_log_record *rec, const char *text) {
    size_t size = strlen(text);
    uint8_t hash[CRADLE_LOG_FILE_HASH_BYTES];
    crypto_generichash(hash, sizeof hash, (const uint8_t *)text, size, NULL, 0);
    assert_memory_equal(rec->file_hash, hash, sizeof hash);
    assert_int_equal(rec->data_size, size);
    static uint8_t got[4096];
    char message[1024];
    if (cradle_log_read_data(log_path, rec->file_hash, rec->data_size, got, sizeof got, message, sizeof message) != 0)
        fail_msg("read_data: %s", message);
    assert_memory_equal(got, text, size);
    /* and the file itself is <log>.data/<hex>, those bytes */
    char path[1200], hex[2 * CRADLE_DATA_HASH_BYTES + 1], expect[1200];
    assert_int_equal(cradle_log_data_path(path, sizeof path, log_path, hash), 0);
    cradle_data_hash_hex(hex, hash);
    snprintf(expect, sizeof expect, "%s.data/%s", log_path, hex);
    assert_string_equal(path, expect);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(got, 1, sizeof got, f);
    fclose(f);
    assert_int_equal(n, size);
    assert_memory_equal(got, text, size);
}

/* A host's session: the counter's data variant loaded as a host loads it,
 * bonus.json applied at step 0 and again at step 5 (a refused edit between
 * changes nothing), the log's DATA records and archive. */
static void test_apply_runs_the_games_data_and_logs_it(void **unused) {
    (void)unused;
    char dir[400], data_dir[400], log_path[600];
    folder(dir, sizeof dir, "apply");
    folder(data_dir, sizeof data_dir, "apply/data");
    join(log_path, sizeof log_path, dir, "session.log");
    static cradle_reload lib;
    char message[512];
    cradle_reload_config rc = {.path = RELOAD_LIB_DATA, .copy_dir = dir, .state_capacity = 4096};
    if (cradle_reload_open(&lib, &rc, 0, message, sizeof message) != 0) fail_msg("reload: %s", message);
    const cradle_game_contract *c = cradle_reload_contract(&lib);
    static _Alignas(64) uint8_t state[4096], scratch[4096];
    cradle_sim sim;
    cradle_sim_config sc = {.state = state, .scratch = scratch, .state_capacity = sizeof state, .state_align = 64,
                            .hash = cradle_hash64};
    assert_int_equal(cradle_sim_init(&sim, &sc, c, message, sizeof message), 0);
    assert_int_equal(cradle_sim_start(&sim, 7, 1), 0);
    const counter_state *s = (const counter_state *)state;
    cradle_log_header h;
    assert_int_equal(cradle_log_header_from_contract(&h, c, 7, 1, 0, 5), 0);
    static cradle_log_writer w;
    cradle_log_writer_config wc = {.sync_inline = true};
    assert_int_equal(cradle_log_writer_open(&w, log_path, &h, &wc, RELOAD_LIB_DATA, message, sizeof message), 0);

    const char *first = "{\"bonus\": 7}\n";
    put_old(data_dir, "counter/bonus.json", first, 30);
    static cradle_data_files d;
    assert_int_equal(cradle_data_files_open(&d, c, data_dir, SETTLE, FAKE_NOW, message, sizeof message), 0);
    assert_int_equal(d.count, 1);
    assert_string_equal(d.files[0].name, "counter/bonus.json");
    assert_int_equal(d.files[0].max_bytes, 4096);
    assert_int_equal(cradle_data_files_read(&d, 0, FAKE_NOW), 0); /* the session's start reads every file */
    assert_int_equal(cradle_data_files_apply(&d, 0, &sim, &w), 0);
    assert_int_equal(s->bonus, 7);
    assert_int_equal(sim.data_applied, 1);
    assert_int_equal(d.files[0].applied_step, 0);

    uint8_t snapshot[16] = {0};
    uint64_t step = 0;
    for (; step < 3; step++) {
        assert_int_equal(cradle_log_writer_append_step(&w, step, snapshot), 0);
        cradle_sim_step(&sim, snapshot);
    }
    assert_int_equal(s->total, 7 + 3 * (1 + 7)); /* init: seed % 1000 */

    /* A designer's bad edits: refused with the file, the line and the game's
     * message; the state unchanged; nothing logged. */
    static uint8_t saved[4096];
    memcpy(saved, state, sizeof saved);
    put_old(data_dir, "counter/bonus.json", "{\"bonus\": 2000}", 29);
    assert_int_equal(cradle_data_files_poll(&d, FAKE_NOW + 1), 0);
    assert_int_equal(cradle_data_files_apply(&d, 0, &sim, &w), CRADLE_EDATA_REFUSED);
    assert_string_equal(d.message, "counter/bonus.json:1: \"bonus\" must be an integer -1000..1000, got 2000");
    assert_memory_equal(state, saved, sizeof saved);
    assert_int_equal(sim.data_applied, 1);
    put_old(data_dir, "counter/bonus.json", "{\n  \"bonus\": 1,\n  \"bonsu\": 2\n}\n", 28);
    assert_int_equal(cradle_data_files_poll(&d, FAKE_NOW + 2), 0);
    assert_int_equal(cradle_data_files_apply(&d, 0, &sim, &w), CRADLE_EDATA_REFUSED);
    assert_string_equal(d.message, "counter/bonus.json:3: unknown field \"bonsu\"");
    assert_memory_equal(state, saved, sizeof saved);
    /* more values than the game's token array: a refusal of the file as a whole (line 0) */
    put_old(data_dir, "counter/bonus.json", "[1, 2, 3, 4, 5, 6, 7, 8, 9]", 27);
    assert_int_equal(cradle_data_files_poll(&d, FAKE_NOW + 2), 0);
    assert_int_equal(cradle_data_files_apply(&d, 0, &sim, &w), CRADLE_EDATA_REFUSED);
    assert_true(strncmp(d.message, "counter/bonus.json: ", 20) == 0);
    assert_true(strlen(d.message) > 20);
    assert_memory_equal(state, saved, sizeof saved);
    assert_int_equal(d.files[0].applied_step, 0); /* still the first */
    for (; step < 5; step++) {
        assert_int_equal(cradle_log_writer_append_step(&w, step, snapshot), 0);
        cradle_sim_step(&sim, snapshot);
    }

    const char *second = "{\"bonus\": -3}";
    put_old(data_dir, "counter/bonus.json", second, 26);
    assert_int_equal(cradle_data_files_poll(&d, FAKE_NOW + 3), 0);
    assert_int_equal(cradle_data_files_apply(&d, 0, &sim, &w), 0);
    assert_int_equal(s->bonus, -3);
    assert_int_equal(d.files[0].applied_step, 5);
    /* the same bytes again: nothing runs, nothing is logged */
    put_old(data_dir, "counter/bonus.json", second, 25);
    assert_int_equal(cradle_data_files_poll(&d, FAKE_NOW + 4), 0);
    assert_int_equal(cradle_data_files_apply(&d, 0, &sim, &w), CRADLE_DATA_UNCHANGED);
    assert_int_equal(sim.data_applied, 2);
    for (; step < 8; step++) {
        assert_int_equal(cradle_log_writer_append_step(&w, step, snapshot), 0);
        cradle_sim_step(&sim, snapshot);
    }
    assert_int_equal(s->total, 7 + 5 * (1 + 7) + 3 * (1 - 3));
    assert_int_equal(cradle_log_writer_close(&w, cradle_sim_hash(&sim)), 0);
    cradle_data_files_close(&d);
    cradle_reload_close(&lib);

    /* The log: two DATA records, before steps 0 and 5, and their archives. */
    static cradle_log_reader reader;
    assert_int_equal(cradle_log_reader_open(&reader, log_path, message, sizeof message), 0);
    cradle_log_record rec;
    int data_records = 0, rcode;
    uint64_t steps = 0;
    while ((rcode = cradle_log_reader_next(&reader, &rec)) == 1) {
        if (rec.kind == CRADLE_LOG_RECORD_STEP) steps++;
        if (rec.kind != CRADLE_LOG_RECORD_DATA) continue;
        assert_int_equal(rec.step, data_records == 0 ? 0 : 5);
        assert_int_equal(rec.step, steps); /* before that step */
        assert_int_equal(rec.data_file, 0);
        assert_string_equal(rec.data_name, "counter/bonus.json");
        expect_archived(log_path, &rec, data_records == 0 ? first : second);
        data_records++;
    }
    assert_int_equal(rcode, 0);
    assert_int_equal(reader.end, CRADLE_LOG_END_CLOSED);
    assert_int_equal(data_records, 2);
    assert_int_equal(steps, 8);
    cradle_log_reader_close(&reader);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_finds_the_declared_files),
        cmocka_unit_test(test_library_folder_and_hash_hex),
        cmocka_unit_test(test_read_reports_each_file_or_why_not),
        cmocka_unit_test(test_poll_reports_a_settled_change_once),
        cmocka_unit_test(test_a_fresh_file_waits_for_settle_on_the_real_clocks),
        cmocka_unit_test(test_the_same_bytes_again_apply_as_unchanged),
        cmocka_unit_test(test_a_vanished_file_is_reported),
        cmocka_unit_test(test_move_finds_the_files_under_another_folder),
        cmocka_unit_test(test_apply_runs_the_games_data_and_logs_it),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
