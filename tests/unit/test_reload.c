/* Tests for reload: a minimal host steps the counter game while its library
 * file is overwritten, replaced, truncated and swapped for bad variants.
 *
 * The variant libraries are built by tests/games/CMakeLists.txt; their paths
 * arrive as RELOAD_LIB_<NAME> compile definitions. Each test copies what it
 * needs into its own mkdtemp directory and never touches the build outputs.
 * Most tests pass a fake clock (settle is exact in it); one runs the default
 * 120 ms window on the real monotonic clock. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cradle/hash.h"
#include "cradle/reload.h"
#include "cradle/sim.h"
#include "cradle/systime.h"
#include "cradle/trial.h"

#define MS 1000000ull
#define FAKE_WINDOW (50u * MS)

/* The counter game's state (shared/games/counter/counter.c), mirrored to read
 * what on_reload did. */
typedef struct counter_state {
    uint64_t steps;
    int64_t total;
    uint64_t presence;
    uint64_t seed;
    uint32_t players;
    uint32_t reloads;
} counter_state;

typedef struct host {
    char dir[256];
    char lib[320];      /* the original a "build" writes: <dir>/counter.so */
    cradle_reload *r;   /* large: on the heap */
    void *state;        /* capacity bytes, zeroed, aligned to 64 */
    uint32_t capacity;
    cradle_sim sim;     /* steps the state; takes every swap, as a host does */
    uint64_t next_step;
    uint64_t now;       /* fake clock, nanoseconds */
    int64_t stamp_s;    /* next distinct modification time for placed files */
} host;

/* ---- files ---------------------------------------------------------------- */

static unsigned char *slurp(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    unsigned char *bytes = malloc((size_t)n);
    assert_non_null(bytes);
    assert_int_equal(fread(bytes, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return bytes;
}

static void spit(const char *path, const unsigned char *bytes, size_t size) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (size) assert_int_equal(fwrite(bytes, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

/* Gives path a modification time no earlier file of this test had. Linux
 * takes file times from a coarse clock, so two writes in quick succession can
 * share one; a build never rewrites a library that fast, a test does. */
static void stamp(host *h, const char *path) {
    struct timespec times[2] = {{.tv_sec = h->stamp_s, .tv_nsec = 0},
                                {.tv_sec = h->stamp_s, .tv_nsec = 0}};
    h->stamp_s++;
    assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
}

/* Writes bytes to a temporary file beside the original and renames it over
 * the original (how most linkers and `cp` into place behave). */
static void place_bytes(host *h, const unsigned char *bytes, size_t size) {
    char tmp[400];
    snprintf(tmp, sizeof tmp, "%s/.incoming", h->dir);
    spit(tmp, bytes, size);
    stamp(h, tmp);
    assert_int_equal(rename(tmp, h->lib), 0);
}

static void place_library(host *h, const char *variant) {
    size_t size;
    unsigned char *bytes = slurp(variant, &size);
    place_bytes(h, bytes, size);
    free(bytes);
}

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        n++;
    }
    closedir(d);
    return n;
}

static bool exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static uint64_t real_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned ms) {
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ---- the host -------------------------------------------------------------- */

static void host_make_dir(host *h) {
    memset(h, 0, sizeof *h);
    const char *tmp = getenv("TMPDIR");
    snprintf(h->dir, sizeof h->dir, "%s/cradle-reload-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(h->dir));
    snprintf(h->lib, sizeof h->lib, "%s/counter.so", h->dir);
    h->stamp_s = 1000000000; /* 2001, distinct from any file the build wrote */
    h->r = calloc(1, sizeof *h->r);
    assert_non_null(h->r);
}

/* Sets up a one-player game of the library the reloader opened. The state
 * block is the reloader's capacity, as a host allocates it. */
static void host_start_game(host *h) {
    char message[256];
    h->capacity = h->r->state_capacity;
    assert_int_equal(posix_memalign(&h->state, 128, h->capacity), 0);
    cradle_sim_config sim_config = {.state = h->state, .state_capacity = h->capacity,
                                    .state_align = 128, .hash = cradle_hash64};
    int rc = cradle_sim_init(&h->sim, &sim_config, cradle_reload_contract(h->r), message, sizeof message);
    if (rc != CRADLE_OK) fail_msg("sim: %s: %s", cradle_error_name(rc), message);
    assert_int_equal(cradle_sim_start(&h->sim, 0, 1), 0);
}

/* Opens the first library (already placed) and sets up a one-player game.
 * The state block is the reloader's capacity, as a host allocates it. */
static void host_start(host *h, cradle_reload_config config) {
    config.path = h->lib;
    if (!config.settle_ns) config.settle_ns = FAKE_WINDOW;
    char message[256];
    int rc = cradle_reload_open(h->r, &config, h->now, message, sizeof message);
    if (rc != CRADLE_OK) fail_msg("open: %s: %s", cradle_error_name(rc), message);
    host_start_game(h);
}

/* What a host does with a poll's result: a swap puts the new build in charge
 * of the state (and runs its on_reload). */
static cradle_reload_result host_take(host *h, cradle_reload_result res) {
    if (res.kind == CRADLE_RELOAD_SWAPPED) {
        char message[256];
        int rc = cradle_sim_swap(&h->sim, res.contract, message, sizeof message);
        if (rc != CRADLE_OK) fail_msg("swap: %s: %s", cradle_error_name(rc), message);
    }
    return res;
}

static void host_open(host *h, const char *first, cradle_reload_config config) {
    host_make_dir(h);
    place_library(h, first);
    host_start(h, config);
}

/* Runs one step of whatever code is loaded now; returns the new total. */
static int64_t host_step(host *h) {
    assert_ptr_equal(h->sim.contract, cradle_reload_contract(h->r));
    uint8_t snapshot[16] = {0}; /* nobody present: the total moves by the increment */
    assert_true(h->sim.snapshot_size <= sizeof snapshot);
    cradle_sim_step(&h->sim, snapshot);
    h->next_step++;
    return ((counter_state *)h->state)->total;
}

/* Steps n times and checks each step added `increment`. */
static void host_expect_increment(host *h, int64_t increment, int n) {
    for (int i = 0; i < n; i++) {
        int64_t before = ((counter_state *)h->state)->total;
        assert_int_equal(host_step(h) - before, increment);
    }
}

static cradle_reload_result host_poll(host *h, uint64_t advance_ns) {
    h->now += advance_ns;
    return host_take(h, cradle_reload_poll(h->r, h->now));
}

static void host_close(host *h) {
    cradle_reload_close(h->r);
    assert_int_equal(count_entries(h->dir), 1); /* only the original is left */
    assert_int_equal(unlink(h->lib), 0);
    assert_int_equal(rmdir(h->dir), 0);
    free(h->state);
    free(h->r);
}

/* Polls until one result that is not NONE, at most max_polls times, each
 * advancing the fake clock by step_ns. */
static cradle_reload_result host_poll_until(host *h, uint64_t step_ns, int max_polls) {
    for (int i = 0; i < max_polls; i++) {
        cradle_reload_result res = host_poll(h, step_ns);
        if (res.kind != CRADLE_RELOAD_NONE) return res;
        host_step(h);
    }
    fail_msg("no reload after %d polls", max_polls);
    return (cradle_reload_result){.kind = CRADLE_RELOAD_NONE};
}

/* ---- tests ----------------------------------------------------------------- */

static void test_open_steps_and_close_leaves_nothing(void **unused) {
    (void)unused;
    host h;
    host_open(&h, RELOAD_LIB_INC1, (cradle_reload_config){0});
    const cradle_game_contract *c = cradle_reload_contract(h.r);
    assert_string_equal(c->name, "counter");
    assert_int_equal(c->state_size, sizeof(counter_state));
    assert_int_equal(h.r->state_capacity, sizeof(counter_state)); /* 0 = first library's */
    assert_int_equal(h.r->max_state_align, 64);
    assert_int_equal(h.r->file_size_bound, 64ull * 1024 * 1024);
    assert_int_equal(h.r->settle_ns, FAKE_WINDOW);
    /* The copy is numbered, beside the original, and is not the original. */
    char expect[512];
    snprintf(expect, sizeof expect, "%s/counter.so.cradle-%ld-1.so", h.dir, (long)getpid());
    assert_string_equal(cradle_reload_copy_path(h.r), expect);
    assert_true(exists(expect));
    assert_int_equal(count_entries(h.dir), 2);
    host_expect_increment(&h, 1, 10);
    assert_int_equal(((counter_state *)h.state)->total, 10);
    /* Polls of an unchanged file do nothing, however long. */
    for (int i = 0; i < 20; i++) {
        cradle_reload_result res = host_poll(&h, 100u * MS);
        assert_int_equal(res.kind, CRADLE_RELOAD_NONE);
        assert_int_equal(res.error, 0);
        assert_ptr_equal(res.contract, c);
    }
    cradle_reload_close(h.r);
    assert_false(exists(expect));
    host_close(&h); /* closes again (harmless) and checks only the original is left */
}

static void test_default_settle_on_real_clock_rename_over(void **unused) {
    (void)unused;
    host h;
    host_make_dir(&h);
    place_library(&h, RELOAD_LIB_INC1);
    h.now = real_now();
    /* settle_ns 0: the default 120 ms, on the real clock this time. */
    char message[256];
    cradle_reload_config config = {.path = h.lib};
    assert_int_equal(cradle_reload_open(h.r, &config, h.now, message, sizeof message), CRADLE_OK);
    assert_int_equal(h.r->settle_ns, 120u * MS);
    host_start_game(&h);

    counter_state *s = h.state;
    uint64_t change_at = 0;
    uint64_t swapped_at = 0;
    int64_t total_before_swap = 0;
    int steps_after = 0;
    for (int i = 0; i < 5000 && steps_after < 10; i++) {
        int64_t before = s->total;
        int64_t after = host_step(&h);
        /* +1 until the swap, then +5: the new code, the same state. */
        assert_int_equal(after - before, swapped_at ? 5 : 1);
        if (swapped_at) steps_after++;
        if (i == 20) {
            change_at = real_now();
            place_library(&h, RELOAD_LIB_INC5);
        }
        uint64_t now = real_now();
        cradle_reload_result res = host_take(&h, cradle_reload_poll(h.r, now));
        if (res.kind == CRADLE_RELOAD_SWAPPED) {
            assert_int_equal(swapped_at, 0); /* one swap for one change */
            assert_true(change_at != 0);
            swapped_at = now;
            total_before_swap = after;
            assert_int_equal(s->total, total_before_swap); /* state untouched by the swap */
            assert_int_equal(s->reloads, 1);               /* on_reload ran on it */
            assert_ptr_equal(res.contract, cradle_reload_contract(h.r));
            assert_int_equal(res.error, 0);
            assert_string_equal(res.message, "");
        } else {
            assert_int_equal(res.kind, CRADLE_RELOAD_NONE);
        }
        sleep_ms(2);
    }
    assert_true(swapped_at != 0);
    /* Never before the window: the change was seen after change_at. */
    assert_true(swapped_at - change_at >= 120u * MS);
    assert_int_equal(s->total, total_before_swap + 5 * 10);
    assert_int_equal(s->steps, h.next_step);
    /* The first copy was deleted, the second is in use. */
    char expect[512];
    snprintf(expect, sizeof expect, "%s/counter.so.cradle-%ld-2.so", h.dir, (long)getpid());
    assert_string_equal(cradle_reload_copy_path(h.r), expect);
    assert_int_equal(count_entries(h.dir), 2);
    assert_int_equal(h.r->swaps, 1);
    host_close(&h);
}

static void test_chunked_overwrite_is_never_loaded_half_written(void **unused) {
    (void)unused;
    host h;
    host_open(&h, RELOAD_LIB_INC1, (cradle_reload_config){0});
    size_t size;
    unsigned char *bytes = slurp(RELOAD_LIB_INC5, &size);
    /* Overwrite the original in place (same inode), a chunk at a time, with
     * pauses of 40 ms (fake) between chunks: shorter than the 50 ms window. */
    int fd = open(h.lib, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    size_t chunk = size / 16 + 1;
    int polls = 0;
    for (size_t at = 0; at < size; at += chunk) {
        size_t n = size - at < chunk ? size - at : chunk;
        assert_int_equal(write(fd, bytes + at, n), (ssize_t)n);
        for (int p = 0; p < 4; p++) {
            cradle_reload_result res = host_poll(&h, 10u * MS);
            assert_int_equal(res.kind, CRADLE_RELOAD_NONE);
            polls++;
            host_expect_increment(&h, 1, 1); /* the old code keeps stepping */
        }
    }
    assert_int_equal(close(fd), 0);
    stamp(&h, h.lib); /* the build's last act: the final time */
    free(bytes);
    assert_true(polls >= 64);
    /* The change of the final stamp is seen at the next poll; then the window. */
    assert_int_equal(host_poll(&h, 1u * MS).kind, CRADLE_RELOAD_NONE);
    assert_int_equal(host_poll(&h, FAKE_WINDOW - 1).kind, CRADLE_RELOAD_NONE);
    cradle_reload_result res = host_poll(&h, 1);
    assert_int_equal(res.kind, CRADLE_RELOAD_SWAPPED);
    assert_int_equal(((counter_state *)h.state)->reloads, 1);
    host_expect_increment(&h, 5, 5);
    assert_int_equal(h.r->refusals, 0);
    host_close(&h);
}

typedef struct bad_variant {
    const char *path;
    int error;
    const char *message;
} bad_variant;

static void test_bad_variants_refused_while_old_keeps_stepping(void **unused) {
    (void)unused;
    char major[64], minor[64];
    snprintf(major, sizeof major, "abi major %u != host abi major %u", CRADLE_ABI_MAJOR + 1u,
             CRADLE_ABI_MAJOR);
    snprintf(minor, sizeof minor, "abi minor %u > host abi minor %u", CRADLE_ABI_MINOR + 1u,
             CRADLE_ABI_MINOR);
    char big[64];
    snprintf(big, sizeof big, "state size 4096 > capacity %zu", sizeof(counter_state));
    const bad_variant bad[] = {
        {RELOAD_LIB_MAJOR, CRADLE_ERELOAD_MAJOR, major},
        {RELOAD_LIB_MINOR, CRADLE_ERELOAD_MINOR, minor},
        {RELOAD_LIB_BIG_STATE, CRADLE_ERELOAD_SIZE, big},
        {RELOAD_LIB_ALIGN3, CRADLE_ERELOAD_ALIGN,
         "state alignment 3 is not a power of two (maximum 64)"},
        {RELOAD_LIB_ALIGN128, CRADLE_ERELOAD_ALIGN, "state alignment 128 > maximum 64"},
        {RELOAD_LIB_NO_CONTRACT, CRADLE_ERELOAD_SYMBOL,
         "contract symbol cradle_game_get_contract not found in counter.so"},
        {RELOAD_LIB_OTHER_NAME, CRADLE_ERELOAD_MISMATCH,
         "game name \"other\" != \"counter\" of the first library"},
    };
    host h;
    host_open(&h, RELOAD_LIB_INC1, (cradle_reload_config){0});
    const cradle_game_contract *first = cradle_reload_contract(h.r);
    char first_copy[CRADLE_RELOAD_PATH_MAX];
    snprintf(first_copy, sizeof first_copy, "%s", cradle_reload_copy_path(h.r));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        place_library(&h, bad[i].path);
        assert_int_equal(host_poll(&h, 1u * MS).kind, CRADLE_RELOAD_NONE);
        host_expect_increment(&h, 1, 1);
        assert_int_equal(host_poll(&h, FAKE_WINDOW - 1).kind, CRADLE_RELOAD_NONE);
        host_expect_increment(&h, 1, 1);
        cradle_reload_result res = host_poll(&h, 1);
        assert_int_equal(res.kind, CRADLE_RELOAD_REFUSED);
        if (res.error != bad[i].error) {
            fail_msg("%s: got %s (%s)", bad[i].path, cradle_error_name(res.error), res.message);
        }
        assert_string_equal(res.message, bad[i].message);
        /* The old library stays loaded and in use. */
        assert_ptr_equal(res.contract, first);
        assert_ptr_equal(cradle_reload_contract(h.r), first);
        assert_string_equal(cradle_reload_copy_path(h.r), first_copy);
        assert_true(exists(first_copy));
        assert_int_equal(count_entries(h.dir), 2); /* the refused copy is gone */
        host_expect_increment(&h, 1, 3);
        /* Refused once: the same file is not tried again. */
        for (int p = 0; p < 5; p++) {
            assert_int_equal(host_poll(&h, FAKE_WINDOW).kind, CRADLE_RELOAD_NONE);
        }
    }
    assert_int_equal(h.r->refusals, sizeof bad / sizeof bad[0]);
    assert_int_equal(((counter_state *)h.state)->reloads, 0);
    /* A good build afterwards is taken. */
    place_library(&h, RELOAD_LIB_INC5);
    cradle_reload_result res = host_poll_until(&h, 10u * MS, 20);
    assert_int_equal(res.kind, CRADLE_RELOAD_SWAPPED);
    host_expect_increment(&h, 5, 3);
    host_close(&h);
}

static void expect_refused_bytes(host *h, const unsigned char *bytes, size_t size, int error,
                                 const char *needle) {
    const cradle_game_contract *before = cradle_reload_contract(h->r);
    place_bytes(h, bytes, size);
    cradle_reload_result res = host_poll_until(h, 10u * MS, 20);
    assert_int_equal(res.kind, CRADLE_RELOAD_REFUSED);
    if (res.error != error || !strstr(res.message, needle)) {
        fail_msg("size %zu: got %s (%s), want %s (...%s...)", size, cradle_error_name(res.error),
                 res.message, cradle_error_name(error), needle);
    }
    assert_ptr_equal(res.contract, before);
    assert_int_equal(count_entries(h->dir), 2);
    host_expect_increment(h, 1, 2);
}

static void test_truncated_and_broken_files_refused(void **unused) {
    (void)unused;
    host h;
    host_open(&h, RELOAD_LIB_INC1, (cradle_reload_config){0});
    size_t size;
    unsigned char *bytes = slurp(RELOAD_LIB_INC5, &size);
    /* Cut at many points: each must be refused, none may crash the host. */
    const size_t cuts[] = {0, 1, 16, 63, 64, 100, 1000, size / 4, size / 2, size * 3 / 4,
                           size - 4096, size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        size_t n = cuts[i];
        place_bytes(&h, bytes, n);
        cradle_reload_result res = host_poll_until(&h, 10u * MS, 20);
        if (res.kind == CRADLE_RELOAD_SWAPPED) fail_msg("a file cut at %zu bytes loaded", n);
        assert_int_equal(res.kind, CRADLE_RELOAD_REFUSED);
        assert_true(res.error == CRADLE_ERELOAD_OPEN);
        host_expect_increment(&h, 1, 2);
        assert_int_equal(count_entries(h.dir), 2);
    }
    expect_refused_bytes(&h, bytes, size / 2, CRADLE_ERELOAD_OPEN, "(truncated?)");
    expect_refused_bytes(&h, bytes, 10, CRADLE_ERELOAD_OPEN, "file size 10 < ELF header size");
    /* Not an ELF file at all. */
    unsigned char text[200];
    memset(text, '#', sizeof text);
    expect_refused_bytes(&h, text, sizeof text, CRADLE_ERELOAD_OPEN, "not an ELF file");
    /* A valid ELF header with garbage after it: dlopen refuses it, no crash. */
    unsigned char *mangled = malloc(size);
    assert_non_null(mangled);
    memcpy(mangled, bytes, size);
    for (size_t i = 64; i < size; i++) mangled[i] = (unsigned char)(i * 131u);
    place_bytes(&h, mangled, size);
    cradle_reload_result res = host_poll_until(&h, 10u * MS, 20);
    assert_int_equal(res.kind, CRADLE_RELOAD_REFUSED);
    assert_int_equal(res.error, CRADLE_ERELOAD_OPEN);
    free(mangled);
    /* The whole file again: accepted. */
    place_bytes(&h, bytes, size);
    res = host_poll_until(&h, 10u * MS, 20);
    assert_int_equal(res.kind, CRADLE_RELOAD_SWAPPED);
    host_expect_increment(&h, 5, 2);
    free(bytes);
    host_close(&h);
}

static void test_file_size_bound(void **unused) {
    (void)unused;
    size_t size1, size5;
    unsigned char *inc1 = slurp(RELOAD_LIB_INC1, &size1);
    free(inc1);
    unsigned char *inc5 = slurp(RELOAD_LIB_INC5, &size5);
    uint64_t bound = (uint64_t)(size1 > size5 ? size1 : size5) + 8192u;
    host h;
    host_open(&h, RELOAD_LIB_INC1, (cradle_reload_config){.file_size_bound = bound});
    assert_int_equal(h.r->file_size_bound, bound);
    /* Padded with zeros after the image (still a loadable ELF file). */
    unsigned char *padded = calloc(1, (size_t)bound + 1);
    assert_non_null(padded);
    memcpy(padded, inc5, size5);
    char expect[128];
    snprintf(expect, sizeof expect, "file size %llu bytes >= bound %llu bytes",
             (unsigned long long)bound, (unsigned long long)bound);
    expect_refused_bytes(&h, padded, (size_t)bound, CRADLE_ERELOAD_FILE_SIZE, expect);
    snprintf(expect, sizeof expect, "file size %llu bytes >= bound %llu bytes",
             (unsigned long long)bound + 1, (unsigned long long)bound);
    expect_refused_bytes(&h, padded, (size_t)bound + 1, CRADLE_ERELOAD_FILE_SIZE, expect);
    /* bound - 1 bytes is the largest accepted file. */
    place_bytes(&h, padded, (size_t)bound - 1);
    cradle_reload_result res = host_poll_until(&h, 10u * MS, 20);
    if (res.kind != CRADLE_RELOAD_SWAPPED) fail_msg("bound - 1 refused: %s", res.message);
    host_expect_increment(&h, 5, 2);
    free(padded);
    free(inc5);
    host_close(&h);
}

static void test_missing_file_refused_then_recovers(void **unused) {
    (void)unused;
    host h;
    host_open(&h, RELOAD_LIB_INC1, (cradle_reload_config){0});
    assert_int_equal(unlink(h.lib), 0); /* a `make clean` */
    cradle_reload_result res = host_poll_until(&h, 10u * MS, 20);
    assert_int_equal(res.kind, CRADLE_RELOAD_REFUSED);
    assert_int_equal(res.error, CRADLE_ERELOAD_COPY);
    assert_non_null(strstr(res.message, "cannot open"));
    assert_non_null(strstr(res.message, "No such file"));
    host_expect_increment(&h, 1, 3);
    assert_int_equal(count_entries(h.dir), 1); /* just the copy in use */
    place_library(&h, RELOAD_LIB_INC5);
    res = host_poll_until(&h, 10u * MS, 20);
    assert_int_equal(res.kind, CRADLE_RELOAD_SWAPPED);
    host_expect_increment(&h, 5, 3);
    host_close(&h);
}

static void test_reload_now_skips_settle_and_is_not_repeated(void **unused) {
    (void)unused;
    host h;
    host_open(&h, RELOAD_LIB_INC1, (cradle_reload_config){0});
    place_library(&h, RELOAD_LIB_INC5);
    cradle_reload_result res = host_take(&h, cradle_reload_now(h.r));
    assert_int_equal(res.kind, CRADLE_RELOAD_SWAPPED);
    assert_int_equal(((counter_state *)h.state)->reloads, 1);
    host_expect_increment(&h, 5, 2);
    /* The file as loaded is settle's baseline now: no second load. */
    for (int i = 0; i < 10; i++) {
        assert_int_equal(host_poll(&h, FAKE_WINDOW).kind, CRADLE_RELOAD_NONE);
    }
    /* A forced reload of an unchanged file loads it again (a fresh copy),
     * and the host runs on_reload for it like for any build. */
    res = host_take(&h, cradle_reload_now(h.r));
    assert_int_equal(res.kind, CRADLE_RELOAD_SWAPPED);
    assert_int_equal(((counter_state *)h.state)->reloads, 2);
    assert_int_equal(h.r->swaps, 2);
    assert_int_equal(count_entries(h.dir), 2);
    /* A forced reload of a bad file is refused like a polled one. */
    place_library(&h, RELOAD_LIB_ALIGN3);
    res = host_take(&h, cradle_reload_now(h.r));
    assert_int_equal(res.kind, CRADLE_RELOAD_REFUSED);
    assert_int_equal(res.error, CRADLE_ERELOAD_ALIGN);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(host_poll(&h, FAKE_WINDOW).kind, CRADLE_RELOAD_NONE);
    }
    host_expect_increment(&h, 5, 2);
    host_close(&h);
}

static void test_open_refusals_leave_nothing(void **unused) {
    (void)unused;
    host h;
    host_make_dir(&h);
    char message[256];
    struct {
        const char *variant;
        uint32_t capacity;
        int error;
        const char *message;
    } cases[] = {
        {RELOAD_LIB_ALIGN3, 0, CRADLE_ERELOAD_ALIGN,
         "state alignment 3 is not a power of two (maximum 64)"},
        {RELOAD_LIB_NO_CONTRACT, 0, CRADLE_ERELOAD_SYMBOL,
         "contract symbol cradle_game_get_contract not found in counter.so"},
        {RELOAD_LIB_INC1, 16, CRADLE_ERELOAD_SIZE, NULL},
    };
    char small[64];
    snprintf(small, sizeof small, "state size %zu > capacity 16", sizeof(counter_state));
    cases[2].message = small;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        place_library(&h, cases[i].variant);
        cradle_reload_config config = {.path = h.lib, .state_capacity = cases[i].capacity};
        int rc = cradle_reload_open(h.r, &config, 0, message, sizeof message);
        assert_int_equal(rc, cases[i].error);
        assert_string_equal(message, cases[i].message);
        assert_int_equal(count_entries(h.dir), 1);
        assert_null(h.r->handle);
        cradle_reload_close(h.r); /* harmless after a failed open */
    }
    /* Without a message buffer. */
    place_library(&h, RELOAD_LIB_NO_CONTRACT);
    cradle_reload_config config = {.path = h.lib};
    assert_int_equal(cradle_reload_open(h.r, &config, 0, NULL, 0), CRADLE_ERELOAD_SYMBOL);
    /* A missing file, a directory, an unwritable copy dir. */
    assert_int_equal(unlink(h.lib), 0);
    assert_int_equal(cradle_reload_open(h.r, &config, 0, message, sizeof message),
                     CRADLE_ERELOAD_COPY);
    assert_non_null(strstr(message, "No such file"));
    config.path = h.dir;
    assert_int_equal(cradle_reload_open(h.r, &config, 0, message, sizeof message),
                     CRADLE_ERELOAD_COPY);
    assert_non_null(strstr(message, "not a regular file"));
    char slash[300];
    snprintf(slash, sizeof slash, "%s/", h.dir);
    config.path = slash;
    assert_int_equal(cradle_reload_open(h.r, &config, 0, message, sizeof message), CRADLE_EINVAL);
    place_library(&h, RELOAD_LIB_INC1);
    char nodir[400];
    snprintf(nodir, sizeof nodir, "%s/no-such-dir", h.dir);
    config = (cradle_reload_config){.path = h.lib, .copy_dir = nodir};
    assert_int_equal(cradle_reload_open(h.r, &config, 0, message, sizeof message),
                     CRADLE_ERELOAD_COPY);
    assert_non_null(strstr(message, "cannot create"));
    assert_int_equal(count_entries(h.dir), 1);
    assert_int_equal(unlink(h.lib), 0);
    assert_int_equal(rmdir(h.dir), 0);
    free(h.r);
}

static void test_private_copy_dir(void **unused) {
    (void)unused;
    host h;
    host_make_dir(&h);
    place_library(&h, RELOAD_LIB_INC1);
    char copies[400];
    snprintf(copies, sizeof copies, "%s/copies", h.dir);
    assert_int_equal(mkdir(copies, 0700), 0);
    host_start(&h, (cradle_reload_config){.copy_dir = copies});
    char expect[512];
    snprintf(expect, sizeof expect, "%s/counter.so.cradle-%ld-1.so", copies, (long)getpid());
    assert_string_equal(cradle_reload_copy_path(h.r), expect);
    assert_int_equal(count_entries(copies), 1);
    place_library(&h, RELOAD_LIB_INC5);
    assert_int_equal(host_poll_until(&h, 10u * MS, 20).kind, CRADLE_RELOAD_SWAPPED);
    snprintf(expect, sizeof expect, "%s/counter.so.cradle-%ld-2.so", copies, (long)getpid());
    assert_string_equal(cradle_reload_copy_path(h.r), expect);
    assert_int_equal(count_entries(copies), 1);
    cradle_reload_close(h.r);
    assert_int_equal(count_entries(copies), 0);
    assert_int_equal(rmdir(copies), 0);
    host_close(&h);
}

/* A killed host leaves its copy behind; a later host with the same pid (a
 * container restart) must skip that name, never load or delete it. */
static void test_stale_copy_of_a_recycled_pid_is_skipped(void **unused) {
    (void)unused;
    host h;
    host_make_dir(&h);
    place_library(&h, RELOAD_LIB_INC1);
    char copies[400], stale[512];
    snprintf(copies, sizeof copies, "%s/copies", h.dir);
    assert_int_equal(mkdir(copies, 0700), 0);
    snprintf(stale, sizeof stale, "%s/counter.so.cradle-%ld-1.so", copies, (long)getpid());
    spit(stale, (const unsigned char *)"stale", 5);
    host_start(&h, (cradle_reload_config){.copy_dir = copies});
    char expect[512];
    snprintf(expect, sizeof expect, "%s/counter.so.cradle-%ld-2.so", copies, (long)getpid());
    assert_string_equal(cradle_reload_copy_path(h.r), expect);
    size_t size = 0;
    unsigned char *left = slurp(stale, &size);
    assert_int_equal(size, 5);
    assert_memory_equal(left, "stale", 5);
    free(left);
    cradle_reload_close(h.r);
    assert_int_equal(count_entries(copies), 1); /* only the stale file, untouched */
    assert_int_equal(unlink(stale), 0);
    assert_int_equal(rmdir(copies), 0);
    host_close(&h);
}

/* A touch, or a rebuild that wrote the same bytes, is no reload: nothing is
 * swapped, so no host runs on_reload and no client is told of one. */
static void test_unchanged_bytes_are_no_reload(void **unused) {
    (void)unused;
    host h;
    host_open(&h, RELOAD_LIB_INC1, (cradle_reload_config){0});
    host_expect_increment(&h, 1, 2);
    place_library(&h, RELOAD_LIB_INC1); /* the same file, a new modification time */
    for (int i = 0; i < 10; i++) {
        assert_int_equal(host_poll(&h, 10u * MS).kind, CRADLE_RELOAD_NONE);
        host_expect_increment(&h, 1, 1);
    }
    assert_int_equal(h.r->unchanged, 1);
    assert_int_equal(h.r->swaps, 0);
    assert_int_equal(((counter_state *)h.state)->reloads, 0);
    assert_int_equal(count_entries(h.dir), 2); /* the original and the copy in use */
    /* A real change afterwards is still taken. */
    place_library(&h, RELOAD_LIB_INC5);
    assert_int_equal(host_poll_until(&h, 10u * MS, 20).kind, CRADLE_RELOAD_SWAPPED);
    host_expect_increment(&h, 5, 2);
    host_close(&h);
}

static void test_state_growth_and_alignment_within_limits(void **unused) {
    (void)unused;
    host h;
    /* The host allocated 4096 bytes aligned to 128 and said so. */
    host_open(&h, RELOAD_LIB_INC1,
              (cradle_reload_config){.state_capacity = 4096, .max_state_align = 128});
    assert_int_equal(h.capacity, 4096);
    host_expect_increment(&h, 1, 4);
    place_library(&h, RELOAD_LIB_BIG_STATE);
    cradle_reload_result res = host_poll_until(&h, 10u * MS, 20);
    if (res.kind != CRADLE_RELOAD_SWAPPED) fail_msg("refused: %s", res.message);
    assert_int_equal(res.contract->state_size, 4096);
    place_library(&h, RELOAD_LIB_ALIGN128);
    res = host_poll_until(&h, 10u * MS, 20);
    if (res.kind != CRADLE_RELOAD_SWAPPED) fail_msg("refused: %s", res.message);
    assert_int_equal(res.contract->state_align, 128);
    assert_int_equal(((counter_state *)h.state)->reloads, 2);
    /* The total counted every step through both swaps. */
    assert_int_equal(((counter_state *)h.state)->total, (int64_t)h.next_step);
    host_close(&h);
}

/* Staging: a settled change waits (the old build keeps stepping); a trial
 * of it in a child passes and take() swaps it in; a second staged build is
 * dropped for the host's reason and its copy deleted; a staged build the
 * contract check refuses fails its trial with the loader's own code. */
static void test_staged_build_is_tried_then_taken_or_dropped(void **unused) {
    (void)unused;
    host h;
    host_open(&h, RELOAD_LIB_INC1, (cradle_reload_config){.stage = true});
    host_expect_increment(&h, 1, 3);
    h.stamp_s++;
    place_library(&h, RELOAD_LIB_INC5);
    cradle_reload_result res = host_poll_until(&h, FAKE_WINDOW / 2, 10);
    assert_int_equal(res.kind, CRADLE_RELOAD_STAGED);
    assert_true(h.r->staged_path[0] != '\0');
    assert_int_equal(count_entries(h.dir), 3); /* the original, the copy in use, the staged copy */
    host_expect_increment(&h, 1, 2);           /* the old build is still in charge */
    assert_int_equal(cradle_reload_poll(h.r, h.now + FAKE_WINDOW).kind, CRADLE_RELOAD_NONE);

    static cradle_trial t;
    uint8_t snapshots[4 * 16] = {0};
    char message[CRADLE_TRIAL_MESSAGE_MAX];
    int64_t total = ((counter_state *)h.state)->total;
    assert_int_equal(cradle_trial_start(&t, h.r, &h.sim, snapshots, 4, 0, cradle_mono_ns(), message, sizeof message), 0);
    assert_true(cradle_trial_fd(&t) >= 0);
    cradle_trial_state ended = cradle_trial_wait(&t, cradle_mono_ns(), message, sizeof message);
    if (ended != CRADLE_TRIAL_PASSED) fail_msg("trial: %s", message);
    assert_string_equal(message, "ok 4 steps");
    assert_int_equal(((counter_state *)h.state)->total, total); /* the child stepped its own copy */
    assert_int_equal(cradle_trial_poll(&t, h.now, message, sizeof message), CRADLE_TRIAL_IDLE);
    host_take(&h, res = cradle_reload_take(h.r));
    assert_int_equal(res.kind, CRADLE_RELOAD_SWAPPED);
    host_expect_increment(&h, 5, 3);

    h.stamp_s++;
    place_library(&h, RELOAD_LIB_INC1);
    res = cradle_reload_now(h.r);
    assert_int_equal(res.kind, CRADLE_RELOAD_STAGED);
    res = cradle_reload_drop(h.r, CRADLE_ERELOAD_TRIAL, "it hung");
    assert_int_equal(res.kind, CRADLE_RELOAD_REFUSED);
    assert_int_equal(res.error, CRADLE_ERELOAD_TRIAL);
    assert_string_equal(res.message, "it hung");
    assert_int_equal(count_entries(h.dir), 2);
    host_expect_increment(&h, 5, 2);

    h.stamp_s++;
    place_library(&h, RELOAD_LIB_OTHER_NAME);
    assert_int_equal(cradle_reload_now(h.r).kind, CRADLE_RELOAD_STAGED);
    assert_int_equal(cradle_trial_start(&t, h.r, &h.sim, snapshots, 1, 0, cradle_mono_ns(), message, sizeof message), 0);
    assert_int_equal(cradle_trial_wait(&t, cradle_mono_ns(), message, sizeof message), CRADLE_TRIAL_FAILED);
    assert_int_equal(t.error, CRADLE_ERELOAD_MISMATCH);
    assert_non_null(strstr(message, "game name"));
    assert_int_equal(t.runs, 2);
    assert_int_equal(t.failed, 1);
    res = cradle_reload_drop(h.r, t.error, message);
    assert_int_equal(res.error, CRADLE_ERELOAD_MISMATCH);
    host_expect_increment(&h, 5, 1);
    cradle_trial_stop(&t); /* none runs: a no-op */
    host_close(&h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_steps_and_close_leaves_nothing),
        cmocka_unit_test(test_staged_build_is_tried_then_taken_or_dropped),
        cmocka_unit_test(test_default_settle_on_real_clock_rename_over),
        cmocka_unit_test(test_chunked_overwrite_is_never_loaded_half_written),
        cmocka_unit_test(test_bad_variants_refused_while_old_keeps_stepping),
        cmocka_unit_test(test_truncated_and_broken_files_refused),
        cmocka_unit_test(test_file_size_bound),
        cmocka_unit_test(test_missing_file_refused_then_recovers),
        cmocka_unit_test(test_reload_now_skips_settle_and_is_not_repeated),
        cmocka_unit_test(test_open_refusals_leave_nothing),
        cmocka_unit_test(test_private_copy_dir),
        cmocka_unit_test(test_stale_copy_of_a_recycled_pid_is_skipped),
        cmocka_unit_test(test_state_growth_and_alignment_within_limits),
        cmocka_unit_test(test_unchanged_bytes_are_no_reload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
