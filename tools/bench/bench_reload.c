/*
 * bench_reload: figures for hot reload of a game library (issue 5).
 *   1. stall of a 60 Hz step loop while swaps happen: 20 swaps alternating
 *      two builds of the counter game, written by another thread (a "build")
 *      with rename-over; gaps between step starts and the duration of each
 *      swapping poll;
 *   2. time from the last byte of a rebuilt library written to the first step
 *      running the new code, polling every 1 ms (goal: settle window + 5 ms);
 *   3. edit -> rebuild -> new code running: edits a copy of counter.c and runs
 *      the C compiler on it (the command a build runs for this one-file game)
 *      while the host keeps stepping and polling every 1 ms.
 * The counter game is compiled by this program with the project's compiler,
 * so it needs no test build. Build in Release and run; it asserts nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cradle/hash.h"
#include "cradle/os.h"
#include "cradle/reload.h"
#include "cradle/sim.h"
#include "cradle/sim_storage.h"
#include "cradle/systime.h"

#define MS 1000000ull
#define SWAPS 20

extern char **environ;

typedef struct counter_state {
    uint64_t steps;
    int64_t total;
    uint64_t presence;
    uint64_t seed;
    uint32_t players;
    uint32_t reloads;
} counter_state;

static char dir[256];
static char lib[320];

static void sleep_until(uint64_t deadline) {
    struct timespec ts = {.tv_sec = (time_t)(deadline / 1000000000ull),
                          .tv_nsec = (long)(deadline % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_u64);
    return n ? v[n / 2] : 0;
}

static uint64_t maximum(const uint64_t *v, size_t n) {
    uint64_t m = 0;
    for (size_t i = 0; i < n; i++) m = v[i] > m ? v[i] : m;
    return m;
}

static double ms(uint64_t ns) { return (double)ns / 1e6; }

static bool write_file(const char *path, const void *bytes, size_t size) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return false;
    const unsigned char *p = bytes;
    while (size > 0) {
        ssize_t n = write(fd, p, size);
        if (n <= 0) {
            close(fd);
            return false;
        }
        p += (size_t)n;
        size -= (size_t)n;
    }
    return close(fd) == 0;
}

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *bytes = n > 0 ? malloc((size_t)n) : NULL;
    if (bytes && fread(bytes, 1, (size_t)n, f) != (size_t)n) {
        free(bytes);
        bytes = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return bytes;
}

/* Starts the compiler on `source` (the counter game) writing `out`; the build
 * id header it includes is written first, in dir. */
static pid_t start_compile(const char *source, const char *out, int increment, unsigned id) {
    char header[400], text[160];
    snprintf(header, sizeof header, "%s/cradle_build_id.h", dir);
    snprintf(text, sizeof text, "#define CRADLE_BUILD_ID \"bench%08u\"\n", id);
    if (!write_file(header, text, strlen(text))) return -1;
    char inc_dir[300], inc_def[64];
    snprintf(inc_dir, sizeof inc_dir, "-I%s", dir);
    snprintf(inc_def, sizeof inc_def, "-DCOUNTER_INCREMENT=%d", increment);
    const char *args[] = {BENCH_RELOAD_CC, "-std=c11", "-O2", "-fPIC", "-shared",
                          "-fvisibility=hidden", "-ffp-contract=off", inc_dir,
                          "-I" BENCH_RELOAD_INCLUDE, increment ? inc_def : "-DCOUNTER_BENCH_EDIT",
                          "-o", out, source, BENCH_RELOAD_CORE};
    enum { ARGS = sizeof args / sizeof args[0] };
    /* posix_spawn wants mutable strings: give it copies. */
    static char storage[ARGS][1024];
    char *argv[ARGS + 1];
    for (size_t i = 0; i < ARGS; i++) {
        snprintf(storage[i], sizeof storage[i], "%s", args[i]);
        argv[i] = storage[i];
    }
    argv[ARGS] = NULL;
    pid_t pid;
    if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) != 0) return -1;
    return pid;
}

static bool compile(const char *out, int increment, unsigned id) {
    pid_t pid = start_compile(BENCH_RELOAD_COUNTER, out, increment, id);
    int status;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

typedef struct host {
    cradle_reload r;
    cradle_sim_storage storage;
    cradle_sim sim;
} host;

static bool host_open(host *h, uint64_t settle_ns) {
    char message[256];
    cradle_reload_config config = {.path = lib, .settle_ns = settle_ns, .state_capacity = 4096};
    int rc = cradle_reload_open(&h->r, &config, cradle_mono_ns(), message, sizeof message);
    if (rc != CRADLE_OK) {
        fprintf(stderr, "bench_reload: open: %s\n", message);
        return false;
    }
    if (cradle_sim_storage_open(&h->storage, &h->sim, cradle_reload_contract(&h->r),
                                &(cradle_sim_storage_config){.capacity = 4096}, message, sizeof message) != 0)
        return false;
    return cradle_sim_start(&h->sim, 0, 1) == 0;
}

/* Polls the loader; a swap takes over the state as in every host. */
static cradle_reload_result host_poll(host *h) {
    cradle_reload_result res = cradle_reload_poll(&h->r, cradle_mono_ns());
    if (res.kind == CRADLE_RELOAD_SWAPPED && cradle_sim_swap(&h->sim, res.contract, NULL, 0) != 0) {
        fprintf(stderr, "bench_reload: the swapped build cannot take over the state\n");
        exit(1);
    }
    return res;
}

static int64_t host_step(host *h) {
    uint8_t snapshot[16] = {0};
    counter_state *s = (counter_state *)h->storage.state;
    int64_t before = s->total;
    cradle_sim_step(&h->sim, snapshot);
    return s->total - before;
}

static void host_close(host *h) {
    cradle_reload_close(&h->r);
    cradle_sim_storage_close(&h->storage);
}

/* ---- 1. stall of a 60 Hz loop ------------------------------------------- */

typedef struct writer {
    const unsigned char *bytes[2];
    size_t size[2];
    atomic_int written;
    atomic_bool done;
} writer;

static void *writer_main(void *arg) {
    writer *w = arg;
    char incoming[400];
    snprintf(incoming, sizeof incoming, "%s/.incoming", dir);
    for (int i = 0; i < SWAPS; i++) {
        cradle_sleep_ns(300u * MS);
        int v = (i % 2 == 0) ? 1 : 0; /* starts on variant 0, so first write is 1 */
        if (!write_file(incoming, w->bytes[v], w->size[v]) || rename(incoming, lib) != 0) break;
        atomic_fetch_add(&w->written, 1);
    }
    atomic_store(&w->done, true);
    return NULL;
}

static void bench_stall(const unsigned char *a, size_t a_size, const unsigned char *b,
                        size_t b_size) {
    if (!write_file(lib, a, a_size)) return;
    static host h;
    if (!host_open(&h, 0)) return;
    writer w = {.bytes = {a, b}, .size = {a_size, b_size}};
    pthread_t thread;
    if (pthread_create(&thread, NULL, writer_main, &w) != 0) return;

    const uint64_t period = 1000000000ull / 60u;
    enum { MAX_TICKS = 2000 };
    static uint64_t gaps[MAX_TICKS], swap_gaps[SWAPS * 2], polls[MAX_TICKS], swaps[SWAPS * 2];
    size_t n_gaps = 0, n_swap_gaps = 0, n_polls = 0, n_swaps = 0;
    unsigned refusals = 0, late = 0;
    bool swapped_last_tick = false;
    uint64_t deadline = cradle_mono_ns() + period, prev = 0;
    for (int tick = 0; tick < MAX_TICKS; tick++) {
        sleep_until(deadline);
        deadline += period;
        uint64_t t = cradle_mono_ns();
        if (prev) {
            uint64_t gap = t - prev;
            gaps[n_gaps++] = gap;
            if (gap > period + 1u * MS) late++;
            if (swapped_last_tick && n_swap_gaps < SWAPS * 2) swap_gaps[n_swap_gaps++] = gap;
        }
        prev = t;
        uint64_t p0 = cradle_mono_ns();
        cradle_reload_result res = host_poll(&h);
        uint64_t p1 = cradle_mono_ns();
        swapped_last_tick = res.kind == CRADLE_RELOAD_SWAPPED;
        if (swapped_last_tick && n_swaps < SWAPS * 2) {
            swaps[n_swaps++] = p1 - p0;
        } else {
            polls[n_polls++] = p1 - p0;
        }
        if (res.kind == CRADLE_RELOAD_REFUSED) refusals++;
        host_step(&h);
        if (atomic_load(&w.done) && n_swaps >= (size_t)atomic_load(&w.written)) break;
    }
    pthread_join(thread, NULL);
    printf("1. stall of a 60 Hz loop during swaps (%zu swaps, %u refused, %zu ticks):\n", n_swaps,
           refusals, n_gaps + 1);
    printf("   swap (poll that swapped)  median %.3f ms  max %.3f ms   (goal <= 1 ms)\n",
           ms(median(swaps, n_swaps)), ms(maximum(swaps, n_swaps)));
    printf("   other polls (stat)        median %.4f ms  max %.4f ms\n",
           ms(median(polls, n_polls)), ms(maximum(polls, n_polls)));
    printf("   gap between steps, all    median %.3f ms  max %.3f ms  (period %.3f ms)\n",
           ms(median(gaps, n_gaps)), ms(maximum(gaps, n_gaps)), ms(period));
    printf("   gap after a swapping tick median %.3f ms  max %.3f ms\n",
           ms(median(swap_gaps, n_swap_gaps)), ms(maximum(swap_gaps, n_swap_gaps)));
    printf("   ticks later than period + 1 ms: %u\n", late);
    host_close(&h);
}

/* ---- 2. last byte written -> new code running ----------------------------- */

static void bench_latency(const unsigned char *a, size_t a_size, const unsigned char *b,
                          size_t b_size) {
    if (!write_file(lib, a, a_size)) return;
    static host h;
    if (!host_open(&h, 0)) return;
    enum { ROUNDS = 10 };
    uint64_t lat[ROUNDS];
    size_t n = 0;
    for (int round = 0; round < ROUNDS; round++) {
        bool to_b = round % 2 == 0;
        int64_t want = to_b ? 5 : 1;
        cradle_sleep_ns(30u * MS);
        /* In place, as a build that truncates and rewrites the file. */
        if (!write_file(lib, to_b ? b : a, to_b ? b_size : a_size)) return;
        uint64_t last_byte = cradle_mono_ns();
        for (int i = 0; i < 5000; i++) {
            (void)host_poll(&h);
            if (host_step(&h) == want) {
                lat[n++] = cradle_mono_ns() - last_byte;
                break;
            }
            cradle_sleep_ns(1u * MS);
        }
    }
    uint64_t window = h.r.settle_ns;
    uint64_t max = maximum(lat, n), med = median(lat, n);
    printf("2. last byte written -> first step of new code (%zu rounds, polling every 1 ms):\n", n);
    printf("   median %.2f ms  max %.2f ms  = settle %.0f ms + median %.2f / max %.2f ms"
           "   (goal: settle + <= 5 ms)\n",
           ms(med), ms(max), ms(window), ms(med - window), ms(max - window));
    host_close(&h);
}

/* ---- 3. edit -> rebuild -> new code running -------------------------------- */

static void bench_edit(void) {
    size_t size;
    unsigned char *source = read_file(BENCH_RELOAD_COUNTER, &size);
    if (!source) return;
    char edited[400];
    snprintf(edited, sizeof edited, "%s/counter.c", dir);
    static const char needle[] = "#define COUNTER_INCREMENT 1\n";
    char *at = strstr((char *)source, needle);
    if (!at) {
        fprintf(stderr, "bench_reload: counter.c has no '%s'\n", needle);
        free(source);
        return;
    }
    size_t prefix = (size_t)(at - (char *)source);
    size_t suffix = size - prefix - (sizeof needle - 1);
    if (!write_file(edited, source, size) || !compile(lib, 0, 100)) {
        free(source);
        return;
    }
    static host h;
    if (!host_open(&h, 0)) return;
    enum { ROUNDS = 5 };
    uint64_t build[ROUNDS], total[ROUNDS];
    size_t n = 0;
    unsigned refusals = 0;
    char *text = malloc(size + 64);
    for (int round = 0; round < ROUNDS; round++) {
        int increment = 2 + round;
        cradle_sleep_ns(50u * MS);
        uint64_t t0 = cradle_mono_ns();
        /* The edit: change the increment line and save the file. */
        memcpy(text, source, prefix);
        int len = sprintf(text + prefix, "#define COUNTER_INCREMENT %d\n", increment);
        memcpy(text + prefix + (size_t)len, at + sizeof needle - 1, suffix);
        if (!write_file(edited, text, prefix + (size_t)len + suffix)) break;
        pid_t pid = start_compile(edited, lib, 0, 200u + (unsigned)round);
        if (pid <= 0) break;
        uint64_t built = 0;
        for (int i = 0; i < 20000; i++) {
            int status;
            if (!built && waitpid(pid, &status, WNOHANG) == pid) built = cradle_mono_ns();
            cradle_reload_result res = host_poll(&h);
            if (res.kind == CRADLE_RELOAD_REFUSED) refusals++;
            if (host_step(&h) == increment) {
                if (!built) {
                    waitpid(pid, &status, 0);
                    built = cradle_mono_ns();
                }
                build[n] = built - t0;
                total[n] = cradle_mono_ns() - t0;
                n++;
                break;
            }
            cradle_sleep_ns(1u * MS);
        }
    }
    printf("3. edit counter.c -> %s -O2 -shared -> new code stepping (%zu rounds, %u refused):\n",
           BENCH_RELOAD_CC, n, refusals);
    printf("   compile+link median %.1f ms  max %.1f ms\n", ms(median(build, n)),
           ms(maximum(build, n)));
    printf("   edit -> new code median %.1f ms  max %.1f ms   (goal <= 1000 ms)\n",
           ms(median(total, n)), ms(maximum(total, n)));
    free(text);
    free(source);
    host_close(&h);
}

static void remove_dir(void) {
    const char *names[] = {"a.so", "b.so", "counter.so", "counter.c", "cradle_build_id.h",
                           ".incoming"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[400];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        (void)unlink(path);
    }
    (void)rmdir(dir);
}

int main(void) {
    snprintf(dir, sizeof dir, "%s/cradle-bench-reload-XXXXXX", cradle_os_tmpdir());
    if (!mkdtemp(dir)) {
        perror("bench_reload: mkdtemp");
        return 1;
    }
    snprintf(lib, sizeof lib, "%s/counter.so", dir);
    char a_path[400], b_path[400];
    snprintf(a_path, sizeof a_path, "%s/a.so", dir);
    snprintf(b_path, sizeof b_path, "%s/b.so", dir);
    if (!compile(a_path, 1, 1) || !compile(b_path, 5, 5)) {
        fprintf(stderr, "bench_reload: cannot compile the counter game with %s\n",
                BENCH_RELOAD_CC);
        remove_dir();
        return 1;
    }
    size_t a_size, b_size;
    unsigned char *a = read_file(a_path, &a_size), *b = read_file(b_path, &b_size);
    if (a && b) {
        printf("counter game library: %zu bytes (settle window 120 ms)\n", a_size);
        bench_stall(a, a_size, b, b_size);
        bench_latency(a, a_size, b, b_size);
        bench_edit();
    }
    free(a);
    free(b);
    remove_dir();
    return 0;
}
