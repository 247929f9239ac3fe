/* enet_pool: ENet's allocator served from start-up blocks. Blocks per class,
 * exhaustion falling back to malloc (counted), fallback and oversize frees,
 * unbound threads, frees after the owner thread exited, the guard against a
 * free while the owner runs, and a real ENet loopback session (server host
 * and client host serviced on this thread) that allocates nothing from malloc
 * once warm. Labels: unit, threads (ThreadSanitizer runs it). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <enet/enet.h>

#include "cradle/enet_pool.h"
#include "cradle_test.h"

static cradle_enet_pool_stats stats_of(const cradle_enet_pool *pool) {
    cradle_enet_pool_stats s;
    cradle_enet_pool_read_stats(pool, &s);
    return s;
}

/* A small pool: `n` blocks in every class. */
static void small_pool(cradle_enet_pool *pool, uint32_t n) {
    cradle_enet_pool_config config = {0};
    for (uint32_t i = 0; i < CRADLE_ENET_POOL_CLASSES; i++) config.blocks[i] = n;
    assert_int_equal(cradle_enet_pool_init(pool, &config), 0);
}

static void test_class_per_size(void **state) {
    (void)state;
    static cradle_enet_pool pool;
    small_pool(&pool, 4);
    cradle_enet_pool_bind(&pool);
    assert_ptr_equal(cradle_enet_pool_bound(), &pool);
    for (uint32_t i = 0; i < CRADLE_ENET_POOL_CLASSES; i++) {
        uint32_t bytes = cradle_enet_pool_class_bytes[i];
        uint32_t smallest = i == 0 ? 0 : cradle_enet_pool_class_bytes[i - 1] + 1u;
        size_t sizes[3] = {smallest, (smallest + bytes) / 2u, bytes};
        void *p[3];
        for (int k = 0; k < 3; k++) {
            p[k] = cradle_enet_pool_malloc(sizes[k]);
            assert_non_null(p[k]);
            assert_int_equal((uintptr_t)p[k] % 16u, 0);
            memset(p[k], 0xA5, sizes[k]); /* every byte asked for is usable (ASan checks) */
        }
        cradle_enet_pool_stats s = stats_of(&pool);
        assert_int_equal(s.classes[i].in_use, 3);
        assert_int_equal(s.classes[i].allocs, 3);
        assert_int_equal(s.classes[i].high_water, 3);
        assert_int_equal(s.in_use, 3); /* nothing landed in another class */
        assert_int_equal(s.fallbacks, 0);
        for (int k = 0; k < 3; k++) cradle_enet_pool_free(p[k]);
        s = stats_of(&pool);
        assert_int_equal(s.classes[i].in_use, 0);
        assert_int_equal(s.classes[i].high_water, 3);
    }
    /* A freed block is reused: the class's high-water mark stays. */
    void *a = cradle_enet_pool_malloc(10);
    cradle_enet_pool_free(a);
    void *b = cradle_enet_pool_malloc(20);
    assert_ptr_equal(a, b);
    cradle_enet_pool_free(b);
    cradle_enet_pool_free(NULL);
    cradle_enet_pool_stats s = stats_of(&pool);
    assert_int_equal(s.classes[0].high_water, 3);
    assert_true(s.bound);
    cradle_enet_pool_deinit(&pool); /* unbinds this thread */
    assert_null(cradle_enet_pool_bound());
}

static void test_exhaustion_falls_back(void **state) {
    (void)state;
    static cradle_enet_pool pool;
    cradle_enet_pool_config config = {.blocks = {2, CRADLE_ENET_POOL_NONE}};
    assert_int_equal(cradle_enet_pool_init(&pool, &config), 0);
    cradle_enet_pool_stats s = stats_of(&pool);
    assert_int_equal(s.classes[0].blocks, 2);
    assert_int_equal(s.classes[1].blocks, 0);
    assert_int_equal(s.classes[2].blocks, cradle_enet_pool_default_blocks(2, 0));
    cradle_enet_pool_bind(&pool);

    void *p[3];
    for (int k = 0; k < 3; k++) {
        p[k] = cradle_enet_pool_malloc(40);
        assert_non_null(p[k]);
        memset(p[k], k, 40);
    }
    s = stats_of(&pool);
    assert_int_equal(s.classes[0].in_use, 2);
    assert_int_equal(s.classes[0].allocs, 2);
    assert_int_equal(s.classes[0].fallbacks, 1);
    assert_int_equal(s.fallbacks, 1);
    /* An empty class and a request above the largest class go to malloc. */
    void *none = cradle_enet_pool_malloc(100);
    void *huge = cradle_enet_pool_malloc(cradle_enet_pool_class_bytes[CRADLE_ENET_POOL_CLASSES - 1] + 1u);
    assert_non_null(none);
    assert_non_null(huge);
    memset(huge, 1, cradle_enet_pool_class_bytes[CRADLE_ENET_POOL_CLASSES - 1] + 1u);
    s = stats_of(&pool);
    assert_int_equal(s.classes[1].fallbacks, 1);
    assert_int_equal(s.oversize, 1);
    assert_int_equal(s.fallbacks, 3);
    assert_int_equal(s.allocs, 2);

    /* Fallback blocks go back to free(): the leak checkers see it. The
     * pool's counts do not move. */
    cradle_enet_pool_free(p[2]);
    cradle_enet_pool_free(none);
    cradle_enet_pool_free(huge);
    s = stats_of(&pool);
    assert_int_equal(s.classes[0].in_use, 2);
    cradle_enet_pool_free(p[0]);
    cradle_enet_pool_free(p[1]);
    s = stats_of(&pool);
    assert_int_equal(s.in_use, 0);
    /* Room again: served from the class. */
    void *again = cradle_enet_pool_malloc(64);
    s = stats_of(&pool);
    assert_int_equal(s.classes[0].allocs, 3);
    assert_int_equal(s.fallbacks, 3);
    cradle_enet_pool_free(again);
    cradle_enet_pool_bind(NULL);
    assert_false(stats_of(&pool).bound);
    cradle_enet_pool_deinit(&pool);
}

static void test_unbound_thread_uses_malloc(void **state) {
    (void)state;
    assert_null(cradle_enet_pool_bound());
    uint64_t before = cradle_enet_pool_unbound_allocs();
    void *p = cradle_enet_pool_malloc(100);
    void *q = cradle_enet_pool_malloc(0);
    assert_non_null(p);
    assert_non_null(q);
    memset(p, 7, 100);
    assert_int_equal(cradle_enet_pool_unbound_allocs(), before + 2);
    cradle_enet_pool_free(p);
    cradle_enet_pool_free(q);
}

static void test_config_checked(void **state) {
    (void)state;
    static cradle_enet_pool pool;
    cradle_enet_pool_config config = {.blocks = {[3] = CRADLE_ENET_POOL_MAX_BLOCKS + 1u}};
    assert_int_equal(cradle_enet_pool_init(&pool, &config), CRADLE_EINVAL);
    cradle_enet_pool_deinit(&pool); /* zeroed: a no-op */
    /* Defaults scale with the peers and keep a floor. */
    assert_true(cradle_enet_pool_default_blocks(0, 128) > cradle_enet_pool_default_blocks(0, 64));
    assert_true(cradle_enet_pool_default_blocks(0, 1) > 0);
    assert_int_equal(cradle_enet_pool_default_blocks(1, 0), cradle_enet_pool_default_blocks(1, 64));
    assert_int_equal(cradle_enet_pool_init(&pool, NULL), 0);
    cradle_enet_pool_stats s = stats_of(&pool);
    assert_true(s.reserved_bytes > 0);
    for (uint32_t i = 0; i < CRADLE_ENET_POOL_CLASSES; i++)
        assert_int_equal(s.classes[i].blocks, cradle_enet_pool_default_blocks(i, 0));
    cradle_enet_pool_deinit(&pool);
}

static void test_rebinding(void **state) {
    (void)state;
    static cradle_enet_pool a, b;
    small_pool(&a, 2);
    small_pool(&b, 2);
    cradle_enet_pool_bind(&a);
    void *from_a = cradle_enet_pool_malloc(8);
    cradle_enet_pool_bind(&b); /* a is released */
    assert_false(stats_of(&a).bound);
    assert_true(stats_of(&b).bound);
    void *from_b = cradle_enet_pool_malloc(8);
    /* a's owner stopped (unbound): its block may be freed here. */
    cradle_enet_pool_free(from_a);
    cradle_enet_pool_free(from_b);
    assert_int_equal(stats_of(&a).in_use, 0);
    assert_int_equal(stats_of(&b).in_use, 0);
    assert_int_equal(stats_of(&a).allocs, 1);
    assert_int_equal(stats_of(&b).allocs, 1);
    cradle_enet_pool_bind(NULL);
    cradle_enet_pool_deinit(&a);
    cradle_enet_pool_deinit(&b);
}

/* ---- another thread ---- */

#define OWNED 40

typedef struct owner_run {
    cradle_enet_pool *pool;
    void *blocks[OWNED];
} owner_run;

/* Binds the pool, allocates, and exits still bound. */
static void *owner_main(void *arg) {
    owner_run *run = arg;
    cradle_enet_pool_bind(run->pool);
    for (size_t i = 0; i < OWNED; i++) {
        size_t size = cradle_enet_pool_class_bytes[i % CRADLE_ENET_POOL_CLASSES]; /* 5 a class */
        run->blocks[i] = cradle_enet_pool_malloc(size);
        if (run->blocks[i]) memset(run->blocks[i], 3, size);
    }
    return NULL;
}

static void test_free_after_owner_joined(void **state) {
    (void)state;
    static cradle_enet_pool pool;
    small_pool(&pool, 8);
    static owner_run run;
    run.pool = &pool;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, owner_main, &run), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    cradle_enet_pool_stats s = stats_of(&pool);
    assert_false(s.bound); /* the thread's exit unbound it */
    assert_int_equal(s.in_use, OWNED);
    assert_int_equal(s.fallbacks, 0);
    assert_null(cradle_enet_pool_bound());
    for (size_t i = 0; i < OWNED; i++) {
        assert_non_null(run.blocks[i]);
        cradle_enet_pool_free(run.blocks[i]);
    }
    s = stats_of(&pool);
    assert_int_equal(s.in_use, 0);
    assert_int_equal(s.foreign_frees, 0);
    /* Now this thread may own it. */
    cradle_enet_pool_bind(&pool);
    void *p = cradle_enet_pool_malloc(5000);
    assert_int_equal(stats_of(&pool).classes[7].in_use, 1);
    cradle_enet_pool_free(p);
    cradle_enet_pool_deinit(&pool);
}

#ifndef NDEBUG
static void *free_main(void *arg) {
    cradle_enet_pool_free(arg);
    return NULL;
}

/* Child process: the main thread owns the pool; another thread frees one of
 * its blocks meanwhile. */
static void foreign_free_while_bound(void) {
    static cradle_enet_pool pool;
    small_pool(&pool, 2);
    cradle_enet_pool_bind(&pool);
    void *p = cradle_enet_pool_malloc(10);
    pthread_t t;
    if (pthread_create(&t, NULL, free_main, p) != 0) return;
    pthread_join(t, NULL);
}

static void *bind_main(void *arg) {
    cradle_enet_pool_bind(arg);
    return NULL;
}

static void bind_on_two_threads(void) {
    static cradle_enet_pool pool;
    small_pool(&pool, 2);
    cradle_enet_pool_bind(&pool);
    pthread_t t;
    if (pthread_create(&t, NULL, bind_main, &pool) != 0) return;
    pthread_join(t, NULL);
}
#endif

static void test_misuse_asserts(void **state) {
    (void)state;
#ifndef NDEBUG
    assert_int_equal(cradle_test_signal_of(foreign_free_while_bound), SIGABRT);
    assert_int_equal(cradle_test_signal_of(bind_on_two_threads), SIGABRT);
#else
    skip();
#endif
}

/* ---- ENet loopback ---- */

#define PACKETS 400u  /* each way */
#define WARM_UP 100u  /* packets each way before the window */

typedef struct side {
    ENetHost *host;
    ENetPeer *peer;
    uint32_t sent, received, bad;
} side;

static size_t packet_size(uint32_t n) {
    static const size_t sizes[] = {16, 23, 100, 500, 1300, 3000};
    return sizes[n % (sizeof sizes / sizeof sizes[0])];
}

static void service(side *s) {
    ENetEvent ev;
    int rc = enet_host_service(s->host, &ev, 0);
    while (rc > 0) {
        if (ev.type == ENET_EVENT_TYPE_CONNECT) s->peer = ev.peer;
        if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
            /* Reliable, one channel: in order. Byte 0..3: the sequence. */
            uint32_t n = 0;
            if (ev.packet->dataLength >= 4) memcpy(&n, ev.packet->data, 4);
            if (n != s->received || ev.packet->dataLength != packet_size(n)) s->bad++;
            s->received++;
            enet_packet_destroy(ev.packet);
        }
        rc = enet_host_check_events(s->host, &ev);
    }
}

static void send_one(side *s) {
    uint8_t data[3000];
    size_t size = packet_size(s->sent);
    memset(data, (int)(s->sent & 0xFFu), size);
    memcpy(data, &s->sent, 4);
    ENetPacket *p = enet_packet_create(data, size, ENET_PACKET_FLAG_RELIABLE);
    assert_non_null(p);
    assert_int_equal(enet_peer_send(s->peer, 0, p), 0);
    s->sent++;
}

/* Sends until `until` packets each way have been received (a bounded number
 * of rounds: loopback delivers everything, so this ends long before). */
static void exchange(side *server, side *client, uint32_t until) {
    for (uint32_t round = 0; round < 200000u && (server->received < until || client->received < until);
         round++) {
        /* At most 8 unacknowledged each way, like a steady stream. */
        if (server->sent < until && server->sent < client->received + 8u) send_one(server);
        if (client->sent < until && client->sent < server->received + 8u) send_one(client);
        service(server);
        service(client);
        if (round % 64u == 63u) {
            struct timespec pause = {.tv_nsec = 100000};
            nanosleep(&pause, NULL);
        }
    }
}

static void test_enet_loopback_zero_fallbacks(void **state) {
    (void)state;
    static cradle_enet_pool pool;
    assert_int_equal(cradle_enet_pool_init(&pool, &(cradle_enet_pool_config){.peers = 2}), 0);
    cradle_enet_pool_bind(&pool);
    uint64_t unbound0 = cradle_enet_pool_unbound_allocs();

    ENetAddress bind = {.port = 0};
    assert_int_equal(enet_address_set_host_ip(&bind, "127.0.0.1"), 0);
    side server = {.host = enet_host_create(&bind, 2, 1, 0, 0)};
    assert_non_null(server.host);
    assert_int_not_equal(server.host->address.port, 0); /* the port the OS chose */
    side client = {.host = enet_host_create(NULL, 1, 1, 0, 0)};
    assert_non_null(client.host);
    client.peer = enet_host_connect(client.host, &server.host->address, 1, 0);
    assert_non_null(client.peer);
    for (int i = 0; i < 100000 && !server.peer; i++) {
        service(&server);
        service(&client);
    }
    assert_non_null(server.peer);

    exchange(&server, &client, WARM_UP);
    assert_int_equal(server.received, WARM_UP);
    assert_int_equal(client.received, WARM_UP);
    cradle_enet_pool_stats warm = stats_of(&pool);

    exchange(&server, &client, PACKETS);
    cradle_enet_pool_stats done = stats_of(&pool);
    assert_int_equal(server.received, PACKETS);
    assert_int_equal(client.received, PACKETS);
    assert_int_equal(server.bad + client.bad, 0);
    /* ENet's memory came from the pool, and none from malloc, while packets
     * flowed (fragmented ones included). */
    assert_true(done.allocs - warm.allocs >= 4u * (PACKETS - WARM_UP));
    assert_int_equal(done.fallbacks - warm.fallbacks, 0);
    assert_int_equal(cradle_enet_pool_unbound_allocs(), unbound0);
    for (uint32_t i = 0; i < CRADLE_ENET_POOL_CLASSES; i++)
        print_message("  class %5u B: %4u blocks, high-water %3u, fallbacks %llu\n", done.classes[i].bytes,
                      done.classes[i].blocks, done.classes[i].high_water,
                      (unsigned long long)done.classes[i].fallbacks);

    enet_peer_disconnect_now(client.peer, 0);
    enet_host_destroy(client.host);
    enet_host_destroy(server.host);
    assert_int_equal(stats_of(&pool).in_use, 0); /* ENet returned every block */
    cradle_enet_pool_deinit(&pool);
}

static int setup_enet(void **state) {
    (void)state;
    return cradle_enet_pool_initialize() == 0 ? 0 : -1;
}

static int teardown_enet(void **state) {
    (void)state;
    enet_deinitialize();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_class_per_size),
        cmocka_unit_test(test_exhaustion_falls_back),
        cmocka_unit_test(test_unbound_thread_uses_malloc),
        cmocka_unit_test(test_config_checked),
        cmocka_unit_test(test_rebinding),
        cmocka_unit_test(test_free_after_owner_joined),
        cmocka_unit_test(test_misuse_asserts),
        cmocka_unit_test(test_enet_loopback_zero_fallbacks),
    };
    return cmocka_run_group_tests(tests, setup_enet, teardown_enet);
}
