/*
 * bench_core: figures for the Foundation core.
 *   - golden compare throughput on two equal 256 MiB buffers, next to memcmp
 *     over the same buffers in the same run;
 *   - clock offers per second.
 * Build in Release (tools/bench.sh) and run; it prints, it asserts nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cradle/cradle.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Keeps the compiler from discarding a result. */
static volatile size_t sink;

int main(void) {
    const size_t size = 256u << 20;
    const int rounds = 8;
    unsigned char *a = malloc(size), *b = malloc(size);
    if (!a || !b) {
        fprintf(stderr, "bench_core: out of memory\n");
        return 1;
    }
    cradle_rng rng;
    cradle_rng_seed(&rng, 1, 1);
    for (size_t i = 0; i < size; i += 4) {
        uint32_t r = cradle_rng_next(&rng);
        memcpy(a + i, &r, 4);
    }
    memcpy(b, a, size);

    double best_memcmp = 1e9, best_golden = 1e9;
    for (int r = 0; r < rounds; r++) {
        double t0 = now_s();
        sink += (size_t)memcmp(a, b, size);
        double t1 = now_s();
        cradle_golden_result g = cradle_golden_compare(a, size, b, size);
        double t2 = now_s();
        sink += g.first_difference;
        if (t1 - t0 < best_memcmp) best_memcmp = t1 - t0;
        if (t2 - t1 < best_golden) best_golden = t2 - t1;
    }
    double gib = (double)size / (1024.0 * 1024.0 * 1024.0);
    printf("golden compare, 256 MiB equal buffers (best of %d):\n", rounds);
    printf("  memcmp          %7.2f GiB/s\n", gib / best_memcmp);
    printf("  golden_compare  %7.2f GiB/s  (%.2fx memcmp)\n", gib / best_golden, best_memcmp / best_golden);

    cradle_clock clock;
    if (cradle_clock_init(&clock, (cradle_clock_config){.steps_per_second = 60, .source_frames_per_second = 20}) != 0) return 1;
    const uint64_t offers = 50000000;
    uint64_t steps = 0;
    double t0 = now_s();
    for (uint64_t i = 0; i < offers; i++) {
        cradle_clock_plan plan = cradle_clock_offer_elapsed(&clock, 16666667u + (i & 7u));
        for (uint32_t s = 0; s < plan.steps; s++) steps += cradle_clock_next(&clock).phase;
    }
    double t1 = now_s();
    sink += (size_t)steps;
    printf("clock: %.1f million offers/s (60 steps/s, 16.67 ms offers, each step taken)\n",
           (double)offers / (t1 - t0) / 1e6);
    free(a);
    free(b);
    return 0;
}
