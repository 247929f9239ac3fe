/*
 * bench_world: figures for the world data structures.
 *   - grid vs brute force: 10,000 moving objects in an arena, time per step;
 *   - ecs: iteration over 100,000 entities with two components, ns per entity;
 *   - ring: items per second between two threads.
 * Build in Release (tools/bench.sh) and run; it prints, it asserts nothing.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
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

static volatile uint64_t sink;

static void *aligned_or_die(size_t align, size_t size) {
    void *p = aligned_alloc(align, (size + align - 1) / align * align);
    if (!p) {
        fprintf(stderr, "bench_world: out of memory\n");
        exit(1);
    }
    memset(p, 0, size);
    return p;
}

/* ---- grid ----------------------------------------------------------------- */

/* Fixed point: 8 fractional bits, as a game would use. */
#define FX 256
#define ARENA_W (3200 * FX)
#define ARENA_H (1800 * FX)
#define OBJECTS 10000u

typedef struct mover {
    cradle_box box;
    int32_t vx, vy;
    uint32_t layer, mask;
} mover;

/* player, player shots, enemies, enemy shots: enemies ignore enemies, shots
 * hit only their targets. */
static const uint32_t layers[4] = {1u, 2u, 4u, 8u};
static const uint32_t masks[4] = {4u | 8u, 4u, 1u | 2u, 1u};

static void move_all(mover *m, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        m[i].box.x += m[i].vx;
        m[i].box.y += m[i].vy;
        if (m[i].box.x < 0 || m[i].box.x + m[i].box.w > ARENA_W) m[i].vx = -m[i].vx;
        if (m[i].box.y < 0 || m[i].box.y + m[i].box.h > ARENA_H) m[i].vy = -m[i].vy;
    }
}

static uint32_t brute(const mover *m, uint32_t n, cradle_grid_pair *out, uint32_t cap) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i + 1; j < n; j++)
            if (((m[i].mask & m[j].layer) || (m[j].mask & m[i].layer)) &&
                cradle_box_overlap(m[i].box, m[j].box) && k < cap)
                out[k++] = (cradle_grid_pair){i, j};
    return k;
}

static void bench_grid(void) {
    mover *m = malloc(sizeof(mover) * OBJECTS);
    cradle_rng rng;
    cradle_rng_seed(&rng, 77, 1);
    for (uint32_t i = 0; i < OBJECTS; i++) {
        uint32_t kind = cradle_rng_below(&rng, 100) < 60 ? 2u : cradle_rng_below(&rng, 4);
        int32_t size = (kind == 1 || kind == 3) ? 6 * FX : cradle_rng_range(&rng, 12, 28) * FX;
        m[i] = (mover){
            .box = {cradle_rng_range(&rng, 0, ARENA_W - size), cradle_rng_range(&rng, 0, ARENA_H - size), size, size},
            .vx = cradle_rng_range(&rng, -4 * FX, 4 * FX),
            .vy = cradle_rng_range(&rng, -4 * FX, 4 * FX),
            .layer = layers[kind],
            .mask = masks[kind],
        };
    }
    cradle_grid_config cfg = {.width = ARENA_W, .height = ARENA_H, .cell_size = 32 * FX, .max_objects = OBJECTS};
    size_t bytes = cradle_grid_bytes(&cfg);
    cradle_grid *g = cradle_grid_init(aligned_or_die(CRADLE_GRID_ALIGN, bytes), bytes, &cfg);
    enum { CAP = 1u << 16 };
    cradle_grid_pair *pairs = malloc(sizeof *pairs * CAP), *check = malloc(sizeof *check * CAP);
    if (!g || !pairs || !check || !m) {
        fprintf(stderr, "bench_world: grid set-up failed\n");
        exit(1);
    }

    const int grid_steps = 600, brute_steps = 6;
    uint64_t total_pairs = 0;
    double t_grid = 0, best_grid = 1e9;
    for (int s = 0; s < grid_steps; s++) {
        move_all(m, OBJECTS);
        double t0 = now_s();
        cradle_grid_clear(g);
        for (uint32_t i = 0; i < OBJECTS; i++) (void)cradle_grid_insert(g, i, m[i].box, m[i].layer, m[i].mask);
        uint32_t dropped;
        uint32_t n = cradle_grid_pairs(g, pairs, CAP, &dropped);
        double t = now_s() - t0;
        t_grid += t;
        if (t < best_grid) best_grid = t;
        total_pairs += n + dropped;
    }
    double t_brute = 0;
    int agree = 1;
    for (int s = 0; s < brute_steps; s++) {
        move_all(m, OBJECTS);
        double t0 = now_s();
        uint32_t nb = brute(m, OBJECTS, check, CAP);
        t_brute += now_s() - t0;
        cradle_grid_clear(g);
        for (uint32_t i = 0; i < OBJECTS; i++) (void)cradle_grid_insert(g, i, m[i].box, m[i].layer, m[i].mask);
        uint32_t ng = cradle_grid_pairs(g, pairs, CAP, NULL);
        if (ng != nb || memcmp(pairs, check, sizeof *pairs * ng) != 0) agree = 0;
    }
    double grid_ms = t_grid / grid_steps * 1e3, brute_ms = t_brute / brute_steps * 1e3;
    printf("grid vs brute force, %u moving objects, arena %dx%d units, cells %d units:\n", OBJECTS,
           ARENA_W / FX, ARENA_H / FX, cfg.cell_size / FX);
    printf("  grid (clear + insert + pairs)  %8.3f ms/step mean, %.3f ms best  (%.0f colliding pairs/step, %d steps)\n",
           grid_ms, best_grid * 1e3, (double)total_pairs / grid_steps, grid_steps);
    printf("  brute force O(n^2)             %8.3f ms/step  (%d steps)\n", brute_ms, brute_steps);
    printf("  speed-up                       %8.1fx   same pairs as brute force: %s\n", brute_ms / grid_ms,
           agree ? "yes" : "NO");
    free(m);
    free(pairs);
    free(check);
    free(g);
}

/* ---- ecs ------------------------------------------------------------------ */

typedef struct pos {
    int32_t x, y;
} pos;
typedef struct vel {
    int32_t dx, dy;
} vel;
enum { C_POS, C_VEL, C_TAG };

static void bench_ecs(void) {
    const uint32_t n = 100000;
    cradle_ecs_config cfg = {.max_entities = n, .component_count = 3};
    cfg.components[C_POS] = CRADLE_ECS_COMPONENT(pos, 0);
    cfg.components[C_VEL] = CRADLE_ECS_COMPONENT(vel, 0);
    cfg.components[C_TAG] = CRADLE_ECS_COMPONENT(uint32_t, 0);
    size_t bytes = cradle_ecs_bytes(&cfg);
    cradle_ecs *w = cradle_ecs_init(aligned_or_die(CRADLE_ECS_ALIGN, bytes), bytes, &cfg);
    if (!w) exit(1);
    cradle_rng rng;
    cradle_rng_seed(&rng, 1, 2);
    for (uint32_t i = 0; i < n; i++) {
        cradle_entity e = cradle_ecs_create(w);
        pos p = {(int32_t)i, 0};
        vel v = {1, (int32_t)(i & 7)};
        (void)cradle_ecs_add(w, e, C_POS, &p);
        (void)cradle_ecs_add(w, e, C_VEL, &v);
    }
    /* Churn so the two dense arrays are no longer in the same order. */
    for (uint32_t k = 0; k < n / 2; k++) {
        cradle_entity e = cradle_ecs_entities(w, C_POS)[cradle_rng_below(&rng, n)];
        vel v;
        memcpy(&v, cradle_ecs_get(w, e, C_VEL), sizeof v);
        (void)cradle_ecs_remove(w, e, C_VEL);
        (void)cradle_ecs_add(w, e, C_VEL, &v);
    }
    const int rounds = 200;
    double best_query = 1e9, best_dense = 1e9;
    for (int r = 0; r < rounds; r++) {
        double t0 = now_s();
        cradle_ecs_query q;
        cradle_ecs_query_begin(&q, w, (const uint32_t[]){C_POS, C_VEL}, 2);
        while (cradle_ecs_query_next(&q)) {
            pos *p = cradle_ecs_query_get(&q, 0);
            const vel *v = cradle_ecs_query_get(&q, 1);
            p->x += v->dx;
            p->y += v->dy;
        }
        double t1 = now_s();
        /* The hand-written form: walk one dense array, get() the other. */
        uint32_t count = cradle_ecs_count(w, C_POS);
        const cradle_entity *ids = cradle_ecs_entities(w, C_POS);
        pos *ps = cradle_ecs_data(w, C_POS);
        for (uint32_t i = 0; i < count; i++) {
            const vel *v = cradle_ecs_get(w, ids[i], C_VEL);
            if (v) {
                ps[i].x -= v->dx;
                ps[i].y -= v->dy;
            }
        }
        double t2 = now_s();
        if (t1 - t0 < best_query) best_query = t1 - t0;
        if (t2 - t1 < best_dense) best_dense = t2 - t1;
    }
    sink += (uint64_t)((const pos *)cradle_ecs_data_const(w, C_POS))[5].x;
    printf("ecs iteration, %u entities with two components (pos += vel), best of %d:\n", n, rounds);
    printf("  query iterator                 %8.2f ns/entity\n", best_query / n * 1e9);
    printf("  dense walk + get()             %8.2f ns/entity\n", best_dense / n * 1e9);
    free(w);
}

/* ---- ring ----------------------------------------------------------------- */

#define RING_ITEMS 50000000ull

typedef struct ring_run {
    cradle_ring ring;
    uint64_t storage[4096];
    uint32_t batch;
    uint64_t checksum;
} ring_run;

static void *ring_producer(void *arg) {
    ring_run *r = arg;
    uint64_t buf[256];
    uint64_t next = 0;
    while (next < RING_ITEMS) {
        if (r->batch == 1) {
            if (cradle_ring_push(&r->ring, &next)) next++;
        } else {
            uint32_t n = 0;
            while (n < r->batch && next + n < RING_ITEMS) {
                buf[n] = next + n;
                n++;
            }
            next += cradle_ring_push_many(&r->ring, buf, n);
        }
    }
    return NULL;
}

static void *ring_consumer(void *arg) {
    ring_run *r = arg;
    uint64_t buf[256];
    uint64_t got = 0, sum = 0;
    while (got < RING_ITEMS) {
        uint32_t n = r->batch == 1 ? (cradle_ring_pop(&r->ring, buf) ? 1u : 0u)
                                   : cradle_ring_pop_many(&r->ring, buf, r->batch);
        for (uint32_t i = 0; i < n; i++) sum += buf[i];
        got += n;
    }
    r->checksum = sum;
    return NULL;
}

static void bench_ring(uint32_t batch) {
    ring_run *r = aligned_or_die(CRADLE_RING_CACHE_LINE, sizeof(ring_run));
    if (cradle_ring_init(&r->ring, r->storage, sizeof r->storage, 4096, 8) != 0) exit(1);
    r->batch = batch;
    pthread_t p, c;
    double t0 = now_s();
    pthread_create(&c, NULL, ring_consumer, r);
    pthread_create(&p, NULL, ring_producer, r);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    double t = now_s() - t0;
    uint64_t want = RING_ITEMS * (RING_ITEMS - 1) / 2;
    printf("  %-30s %8.1f M items/s  (%llu u64 items, %s)\n",
           batch == 1 ? "push/pop one at a time" : "push_many/pop_many, 64", RING_ITEMS / t / 1e6,
           (unsigned long long)RING_ITEMS, r->checksum == want ? "sum of items matches" : "CHECKSUM MISMATCH");
    free(r);
}

int main(void) {
    bench_grid();
    bench_ecs();
    printf("spsc ring, 2 threads, capacity 4096:\n");
    bench_ring(1);
    bench_ring(64);
    return 0;
}
