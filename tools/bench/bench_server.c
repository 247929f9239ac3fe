/*
 * bench_server: cradle-server's game and network threads (server/src/host.c,
 * net.c) hosting the counter game on loopback for 64 headless bots (8 players,
 * 56 spectators) at the game's 60 steps/s.
 *
 * The server's two threads and the bots run in this one process: the bots
 * share one ENet host (one UDP socket, 64 peers) on the main thread. Printed:
 *   - server CPU: the game and network threads' CPU time over wall time
 *     (also for 5 s before the bots join: the cost of a session nobody plays);
 *   - step delivery latency, p50/p99/max, from the moment the game thread
 *     queues a STEPS message (host->sent_ns; the network thread sends it
 *     after that) to the bot's receipt, at three points: the datagram in the
 *     bot's socket (the kernel's receive timestamp, SIOCGSTAMPNS, read in
 *     ENet's intercept hook), read by the bots' thread, and handled by the
 *     bot. The first is the delivery; the other two add the time one thread
 *     takes to play 64 clients (ENet reads every waiting datagram of all 64
 *     peers before it hands out the first). The bots send their inputs and
 *     acks after each step's burst, so one bot's sending does not delay
 *     another's receipt, as it would not with a machine each; spectators ack
 *     every other step, as cradle-client's do (cradle/ackpace.h);
 *   - bytes per second per client on the wire, IPv4 + UDP headers included
 *     (28 bytes per datagram), down (server->client) and up;
 *   - process RSS (server and bots together) and the server's share estimated
 *     as RSS before the bots connected;
 *   - heap allocations per step on the game thread and on the network
 *     thread (every malloc in the process is counted by interposing malloc;
 *     ENet's memory comes from the network thread's pool, enet_pool.h, whose
 *     fallbacks to malloc are printed too);
 *   - the time for a client to join a session that has run 2 hours of steps
 *     (432000 steps run in commanded mode first).
 *
 *   - the same bots against a raw ENet reference (raw_main below): what ENet
 *     alone costs for this traffic, CPU and latency, in the same run;
 *
 *   - the same 64-bot measurement with the secure channel (server key,
 *     issuer tokens, every packet sealed: net.h) and, last, secure play while
 *     the bots' thread also sprays random UDP datagrams at the server port:
 *     the garbage rate absorbed with play going on (steps/s and hashes
 *     printed alongside).
 *
 *   bench_server [SECONDS]    (default 60; each of the three runs)
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <enet/enet.h>
#include <sodium.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>

#include "cradle/ackpace.h"
#include "cradle/enet_pool.h"
#include "cradle/hash.h"
#include "cradle/keys.h"
#include "cradle/reload.h"
#include "cradle/secure.h"
#include "cradle/token.h"
#include "cradle/wire.h"
#include "host.h"
#include "net.h"

#define BOTS 64u
#define PLAYERS 8u
#define LAT_SAMPLES (1u << 22)
#define SENT_RING (1u << 16)

/* ---- malloc interposition: counts every allocation, per thread kind ---- */

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
extern void __libc_free(void *p);

enum { KIND_OTHER = 0, KIND_GAME = 1, KIND_BOTS = 2 };
static _Thread_local int thread_kind;
static atomic_uint_fast64_t alloc_count[3];

static void count_alloc(void) {
    atomic_fetch_add_explicit(&alloc_count[thread_kind], 1, memory_order_relaxed);
}

void *malloc(size_t size) {
    count_alloc();
    return __libc_malloc(size);
}
void *calloc(size_t count, size_t size) {
    count_alloc();
    return __libc_calloc(count, size);
}
void *realloc(void *p, size_t size) {
    count_alloc();
    return __libc_realloc(p, size);
}
void *aligned_alloc(size_t align, size_t size) {
    count_alloc();
    return __libc_memalign(align, size);
}
int posix_memalign(void **out, size_t align, size_t size) {
    count_alloc();
    void *p = __libc_memalign(align, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
void free(void *p) { __libc_free(p); }

/* ---- helpers ---- */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(pthread_t t) {
    clockid_t id;
    struct timespec ts;
    if (pthread_getcpuclockid(t, &id) != 0 || clock_gettime(id, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &v) == 1) break;
    fclose(f);
    return v;
}

static int compare_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* ---- the server under test ---- */

typedef struct server {
    cradle_server_options options;
    cradle_server_net *net;
    cradle_server_host *host;
    int stop;
    pthread_t game_thread;
} server;

static _Atomic uint64_t sent_ns[SENT_RING];

static void *game_main(void *arg) {
    thread_kind = KIND_GAME;
    server *s = arg;
    (void)cradle_server_host_run(s->host);
    return NULL;
}

/* Secure runs: the server's keys and the issuer that signs the bots' tokens. */
static bool bench_secure;
static cradle_keys server_keys, issuer_keys;

static int server_open(server *s, cradle_server_mode mode) {
    memset(&s->options, 0, sizeof s->options);
    snprintf(s->options.game, sizeof s->options.game, "%s", BENCH_SERVER_COUNTER);
    snprintf(s->options.bind, sizeof s->options.bind, "127.0.0.1");
    s->options.players = PLAYERS;
    s->options.spectators = BOTS - PLAYERS;
    s->options.input_delay = 2;
    s->options.hash_interval = 30;
    s->options.timeout_ms = 5000;
    s->options.mode = mode;
    s->stop = 0;
    s->net = aligned_alloc(CRADLE_RING_CACHE_LINE, (sizeof *s->net + 63u) & ~(size_t)63u);
    s->host = aligned_alloc(CRADLE_RING_CACHE_LINE, (sizeof *s->host + 63u) & ~(size_t)63u);
    if (!s->net || !s->host) return -1;
    memset(s->net, 0, sizeof *s->net);
    if (cradle_server_host_init(s->host, &s->options, s->net, &s->stop) != 0) return -1;
    s->host->sent_ns = sent_ns;
    s->host->sent_mask = SENT_RING - 1u;
    for (int attempt = 0; attempt < 20; attempt++) {
        s->options.port =
            (uint16_t)(20000 + (unsigned)(now_ns() / 1000u + (uint64_t)attempt * 7919u) % 40000u);
        cradle_server_net_config nc = {.bind_address = "127.0.0.1",
                                       .port = s->options.port,
                                       .max_peers = BOTS + 8u,
                                       .keys = bench_secure ? &server_keys : NULL,
                                       .issuers = (const uint8_t(*)[CRADLE_TOKEN_KEY_BYTES])issuer_keys.sign_public,
                                       .issuer_count = 1,
                                       .build_id = s->host->sim.contract->build_id,
                                       .connect_rate = 100000,
                                       .connect_burst = 100000,
                                       .snapshot_size = s->host->snapshot_size};
        if (cradle_server_net_open(s->net, &nc) == 0) return cradle_server_net_start(s->net);
    }
    return -1;
}

static void server_start_loop(server *s) { pthread_create(&s->game_thread, NULL, game_main, s); }

static void server_close(server *s) {
    s->stop = 1;
    pthread_join(s->game_thread, NULL);
    (void)cradle_server_host_finish(s->host);
    cradle_server_net_stop(s->net, 200);
    cradle_server_net_close(s->net);
    cradle_server_host_deinit(s->host);
    free(s->host);
    free(s->net);
}

/* ---- bots ---- */

typedef struct bot {
    ENetPeer *peer;
    bool secure;
    cradle_secure session;
    bool welcomed, ready, ack_due;
    cradle_ackpace pace; /* a spectator acks every other step (cradle/ackpace.h) */
    uint8_t slot;
    uint16_t input_delay;
    uint64_t next_step, start_step, sent_through;
    uint32_t state_size, state_received;
    uint8_t state[256];
    uint64_t hashes_checked, mismatches;
    uint64_t arrived_ns; /* its latest datagram: the kernel's receive time (CLOCK_MONOTONIC) */
    uint64_t read_ns;    /* ... and when ENet read it from the socket */
} bot;

static bot bots[BOTS];
/* Step latencies in microseconds, each from the game thread's queueing. */
typedef struct latency {
    uint32_t *us;
    uint64_t count;
} latency;
static latency arrived; /* in the bot's socket: the kernel's receive timestamp */
static latency read_at; /* read from the socket by the bots' thread */
static latency handled; /* handled by the bot, after ENet's receive batch */
static int64_t realtime_minus_mono; /* socket timestamps are CLOCK_REALTIME */

static void latency_add(latency *l, uint64_t sent, uint64_t at) {
    if (sent && at >= sent && l->count < LAT_SAMPLES) l->us[l->count++] = (uint32_t)((at - sent) / 1000u);
}

static void latency_print(latency *l, const char *to) {
    qsort(l->us, l->count, sizeof *l->us, compare_u32);
    if (l->count == 0) {
        printf("    %s: no samples\n", to);
        return;
    }
    printf("    %s: p50 %u us, p99 %u us, max %u us (%" PRIu64 " samples)\n", to, l->us[l->count / 2],
           l->us[l->count * 99 / 100], l->us[l->count - 1], l->count);
}
static const cradle_game_contract *contract;
static bool raw_reference; /* the bots play against the raw ENet reference */

static void bot_send(bot *b, const cradle_wire_message *m, uint32_t flags) {
    uint8_t buf[1024];
    size_t n = 0;
    if (cradle_wire_encode(buf, sizeof buf, &n, m) != 0) return;
    uint8_t sealed[1024 + CRADLE_SECURE_OVERHEAD];
    const uint8_t *data = buf;
    if (b->secure && m->type != CRADLE_WIRE_HELLO) {
        cradle_secure_lane_id lane =
            (flags & ENET_PACKET_FLAG_RELIABLE) ? CRADLE_SECURE_ORDERED : CRADLE_SECURE_UNORDERED;
        if (cradle_secure_seal_lane(&b->session, lane, sealed, sizeof sealed, &n, buf, n) != 0) return;
        data = sealed;
    }
    ENetPacket *p = enet_packet_create(data, n, flags);
    if (p && enet_peer_send(b->peer, 0, p) != 0) enet_packet_destroy(p);
}

static bool no_event(void *c, const cradle_event *e) {
    (void)c;
    (void)e;
    return true;
}

/* Runs the next step when it is in s (a repeat or a step after a gap is
 * dropped: the server repeats from the ack). Latency is taken at a step's
 * first arrival. */
static void bot_steps(bot *b, const cradle_wire_steps *s, uint64_t received) {
    uint64_t first = cradle_wire_step_expand(b->next_step, (uint32_t)s->first_step);
    for (uint32_t i = 0; i < s->count; i++) {
        uint64_t step = first + i;
        /* The raw reference never resends: a bot skips a lost step there
         * (its state is not checked) rather than wait for it forever. */
        if (raw_reference && step > b->next_step) b->next_step = step;
        if (step != b->next_step) continue;
        uint64_t sent = atomic_load(&sent_ns[step & (SENT_RING - 1u)]);
        latency_add(&handled, sent, received);
        latency_add(&arrived, sent, b->arrived_ns);
        latency_add(&read_at, sent, b->read_ns);
        uint32_t per_frame = contract->steps_per_second / contract->source_frames_per_second;
        cradle_game_step gs = {.index = step,
                               .source_frame = step / per_frame,
                               .phase = (uint32_t)(step % per_frame),
                               .snapshot_size = s->snapshot_size,
                               .snapshot = s->snapshots + (size_t)i * s->snapshot_size};
        cradle_event_sink sink = {.emit = no_event};
        contract->step(b->state, &gs, &sink);
        for (uint32_t h = 0; h < s->hash_count; h++) {
            if (first + s->hashes[h].offset != step) continue;
            b->hashes_checked++;
            if (cradle_hash64(b->state, contract->state_size) != s->hashes[h].hash) b->mismatches++;
        }
        b->next_step++;
    }
    if (b->slot != CRADLE_WIRE_SPECTATOR || cradle_ackpace_due(&b->pace, b->next_step, received)) b->ack_due = true;
}

static void bot_packet(bot *b, const uint8_t *data, size_t size, uint64_t received) {
    static uint8_t opened[CRADLE_SECURE_PACKET_MAX];
    if (b->secure) {
        size_t plain = 0;
        if (cradle_secure_open(&b->session, opened, sizeof opened, &plain, data, size) != 0) return;
        data = opened;
        size = plain;
    }
    cradle_wire_message m;
    if (cradle_wire_decode(&m, data, size) != 0) return;
    if (m.type == CRADLE_WIRE_WELCOME) {
        b->welcomed = true;
        b->slot = m.as.welcome.slot;
        b->input_delay = m.as.welcome.input_delay;
        b->start_step = b->next_step = b->sent_through = m.as.welcome.start_step;
        b->state_size = m.as.welcome.state_size;
        cradle_ackpace_init(&b->pace, b->slot == CRADLE_WIRE_SPECTATOR, m.as.welcome.steps_per_second,
                            b->start_step);
        if (!m.as.welcome.state_follows) {
            memset(b->state, 0, sizeof b->state);
            contract->init(b->state, m.as.welcome.seed, m.as.welcome.players);
            b->ready = true;
        }
    } else if (m.type == CRADLE_WIRE_STATE && !b->ready) {
        memcpy(b->state + m.as.state.offset, m.as.state.bytes, m.as.state.length);
        b->state_received += m.as.state.length;
        if (b->state_received == m.as.state.total) b->ready = true;
    } else if (m.type == CRADLE_WIRE_STEPS && b->ready) {
        bot_steps(b, &m.as.steps, received);
    }
    b->arrived_ns = b->read_ns = 0;
}

/* ENet calls this for every datagram the bots' socket gives it: the
 * low 12 bits of its header's first 16 name the receiving peer; the socket's
 * timestamp of the datagram just read is the moment it arrived. */
static int bots_intercept(ENetHost *h, ENetEvent *event) {
    (void)event;
    if (h->receivedDataLength < 2) return 0;
    uint16_t peer_id = (uint16_t)(((unsigned)h->receivedData[0] << 8 | h->receivedData[1]) & 0x0FFFu);
    struct timespec ts;
    if (peer_id >= h->peerCount || ioctl(h->socket, SIOCGSTAMPNS, &ts) != 0) return 0;
    bot *b = h->peers[peer_id].data;
    if (b) { /* the latest: a later ping in the same batch only makes it later */
        b->read_ns = now_ns();
        b->arrived_ns = (uint64_t)((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - realtime_minus_mono);
    }
    return 0;
}

/* An INPUT when there is a new input to send or STEPS to acknowledge (a
 * spectator's carries only the ack). */
static void bot_inputs(bot *b, uint64_t seed) {
    if (!b->ready) return;
    if (b->slot == CRADLE_WIRE_SPECTATOR) {
        if (!b->ack_due && !cradle_ackpace_due(&b->pace, b->next_step, now_ns())) return;
        cradle_wire_message ack = {.type = CRADLE_WIRE_INPUT,
                                   .as.input = {.ack = b->next_step, .first_step = b->next_step, .input_bytes = 1}};
        bot_send(b, &ack, ENET_PACKET_FLAG_UNSEQUENCED);
        cradle_ackpace_sent(&b->pace, b->next_step);
        b->ack_due = false;
        return;
    }
    uint64_t target = b->next_step + b->input_delay;
    if (b->sent_through > target && !b->ack_due) return;
    b->ack_due = false;
    uint8_t bytes[4];
    uint64_t first = target >= 3 ? target - 3 : 0;
    if (first < b->start_step) first = b->start_step;
    uint8_t count = (uint8_t)(target - first + 1);
    for (uint32_t i = 0; i < count; i++) bytes[i] = (uint8_t)((first + i + seed) % 7u + 253u); /* -3..3 */
    cradle_wire_message m = {
        .type = CRADLE_WIRE_INPUT,
        .as.input = {.ack = b->next_step, .first_step = first, .count = count, .input_bytes = 1, .inputs = bytes}};
    bot_send(b, &m, ENET_PACKET_FLAG_UNSEQUENCED);
    b->sent_through = target + 1;
}

/* Handles what arrives within timeout_ms; returns the number of events. */
static uint32_t bots_service(ENetHost *h, uint32_t timeout_ms) {
    ENetEvent ev;
    uint32_t events = 0;
    int rc = enet_host_service(h, &ev, timeout_ms);
    while (rc > 0) {
        events++;
        if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
            bot *b = ev.peer->data;
            bot_packet(b, ev.packet->data, ev.packet->dataLength, now_ns());
            enet_packet_destroy(ev.packet);
        }
        rc = enet_host_check_events(h, &ev);
    }
    return events;
}

/* One turn of the bots' thread. It stands in for 64 clients that would
 * each have their own machine, so one bot's sending must not hold up
 * another's receiving: the bots answer (inputs, acks) once the burst of
 * datagrams the server sends every step is over (1 ms without one). */
static void bots_turn(ENetHost *h) {
    if (bots_service(h, 1) > 0) return;
    for (uint32_t i = 0; i < BOTS; i++) bot_inputs(&bots[i], i);
}

static ENetHost *bots_connect(uint16_t port, uint32_t count, bool first_players) {
    ENetHost *h = enet_host_create(NULL, count, 1, 0, 0);
    h->intercept = bots_intercept;
    ENetAddress a = {.port = port};
    enet_address_set_host_ip(&a, "127.0.0.1");
    for (uint32_t i = 0; i < count; i++) {
        memset(&bots[i], 0, sizeof bots[i]);
        bots[i].peer = enet_host_connect(h, &a, 1, 0);
        bots[i].peer->data = &bots[i];
    }
    uint32_t connected = 0;
    uint64_t deadline = now_ns() + 5000000000ull;
    while (connected < count && now_ns() < deadline) {
        ENetEvent ev;
        if (enet_host_service(h, &ev, 10) <= 0) continue;
        if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
            /* An early bot's WELCOME while the others still connect. */
            bot_packet(ev.peer->data, ev.packet->data, ev.packet->dataLength, now_ns());
            enet_packet_destroy(ev.packet);
        }
        if (ev.type == ENET_EVENT_TYPE_CONNECT) {
            bot *b = ev.peer->data;
            cradle_wire_message m = {.type = CRADLE_WIRE_HELLO};
            uint32_t index = (uint32_t)(b - bots);
            m.as.hello.spectator = !(first_players && index < PLAYERS);
            m.as.hello.requested_slot = CRADLE_WIRE_ANY_SLOT;
            snprintf(m.as.hello.game, sizeof m.as.hello.game, "%s", contract->name);
            snprintf(m.as.hello.build_id, sizeof m.as.hello.build_id, "%s", contract->build_id);
            if (bench_secure) {
                /* A token per bot from the bench's issuer; fresh session keys. */
                cradle_token t = {.client_id = index, .issued_unix = (uint64_t)time(NULL)};
                t.expires_unix = t.issued_unix + 600u;
                randombytes_buf(t.id, sizeof t.id);
                memcpy(t.server_id, server_keys.kx_public, sizeof t.server_id);
                snprintf(t.build_id, sizeof t.build_id, "%s", contract->build_id);
                uint8_t token[CRADLE_TOKEN_MAX_BYTES], pk[32], sk[32];
                size_t token_size = 0, n = 0;
                if (cradle_token_issue(token, sizeof token, &token_size, &t, issuer_keys.sign_secret) != 0 ||
                    cradle_secure_keypair(pk, sk) != 0 ||
                    cradle_token_credential(m.as.hello.credential, sizeof m.as.hello.credential, &n, token,
                                            token_size, pk) != 0 ||
                    cradle_secure_client_init(&b->session, pk, sk, server_keys.kx_public,
                                              &(cradle_secure_config){.context = b->peer->connectID}) != 0)
                    continue;
                m.as.hello.credential_size = (uint16_t)n;
                b->secure = true;
            }
            bot_send(b, &m, ENET_PACKET_FLAG_RELIABLE);
            connected++;
        }
    }
    return connected == count ? h : NULL;
}

/* One 64-bot run: plain or secure, with or without a garbage spray. Prints
 * its figures; returns the hash mismatches (or UINT64_MAX on failure). */
static uint64_t run_phase(double seconds, bool secure, bool garbage, double *cpu_share) {
    bench_secure = secure;
    static server s;
    if (server_open(&s, CRADLE_SERVER_PACED) != 0) {
        fprintf(stderr, "bench_server: cannot start the server\n");
        return UINT64_MAX;
    }
    contract = s.host->sim.contract;
    long rss_server = rss_kib();
    server_start_loop(&s);
    double idle_share = -1;
    if (!secure && !garbage) {
        /* Before anyone joins: what a running session costs with no clients. */
        uint64_t i0 = now_ns(), g0 = thread_cpu_ns(s.game_thread), n0 = thread_cpu_ns(s.net->thread);
        struct timespec idle = {.tv_sec = 5};
        while (nanosleep(&idle, &idle) != 0) {
        }
        idle_share = (double)(thread_cpu_ns(s.game_thread) - g0 + thread_cpu_ns(s.net->thread) - n0) /
                     (double)(now_ns() - i0);
    }

    ENetHost *h = bots_connect(s.options.port, BOTS, true);
    if (!h) {
        fprintf(stderr, "bench_server: bots could not connect\n");
        return UINT64_MAX;
    }
    /* Let everyone join, then measure a clean window. */
    uint64_t settle_until = now_ns() + 1000000000ull;
    while (now_ns() < settle_until) {
        bots_turn(h);
    }
    uint32_t ready = 0;
    for (uint32_t i = 0; i < BOTS; i++) ready += bots[i].ready;
    arrived.count = read_at.count = handled.count = 0;
    uint64_t t0 = now_ns();
    uint64_t game_cpu0 = thread_cpu_ns(s.game_thread), net_cpu0 = thread_cpu_ns(s.net->thread);
    uint64_t step0 = s.host->sim.next_step;
    uint64_t bytes_out0 = atomic_load(&s.net->stats.bytes_out),
             packets_out0 = atomic_load(&s.net->stats.packets_out);
    uint64_t bytes_in0 = atomic_load(&s.net->stats.bytes_in),
             packets_in0 = atomic_load(&s.net->stats.packets_in);
    uint64_t game_alloc0 = atomic_load(&alloc_count[KIND_GAME]),
             net_alloc0 = atomic_load(&alloc_count[KIND_OTHER]);
    cradle_enet_pool_stats pool0;
    cradle_enet_pool_read_stats(&s.net->pool, &pool0);
    uint64_t end = t0 + (uint64_t)(seconds * 1e9);
    int spray = garbage ? socket(AF_INET, SOCK_DGRAM, 0) : -1;
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(s.options.port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    uint64_t sprayed = 0;
    uint8_t junk[256];
    while (now_ns() < end) {
        bots_turn(h);
        for (int k = 0; spray >= 0 && k < 256; k++) {
            randombytes_buf(junk, sizeof junk);
            size_t len = 1u + junk[0] % sizeof junk;
            if (sendto(spray, junk, len, MSG_DONTWAIT, (const struct sockaddr *)&to, sizeof to) > 0) sprayed++;
        }
    }
    if (spray >= 0) close(spray);
    uint64_t wall = now_ns() - t0;
    uint64_t game_cpu = thread_cpu_ns(s.game_thread) - game_cpu0, net_cpu = thread_cpu_ns(s.net->thread) - net_cpu0;
    uint64_t cpu = game_cpu + net_cpu;
    uint64_t steps = s.host->sim.next_step - step0;
    uint64_t bytes_out = atomic_load(&s.net->stats.bytes_out) - bytes_out0;
    uint64_t packets_out = atomic_load(&s.net->stats.packets_out) - packets_out0;
    uint64_t bytes_in = atomic_load(&s.net->stats.bytes_in) - bytes_in0;
    uint64_t packets_in = atomic_load(&s.net->stats.packets_in) - packets_in0;
    uint64_t game_allocs = atomic_load(&alloc_count[KIND_GAME]) - game_alloc0;
    uint64_t net_allocs = atomic_load(&alloc_count[KIND_OTHER]) - net_alloc0;
    long rss_all = rss_kib();
    uint64_t checked = 0, mismatches = 0;
    for (uint32_t i = 0; i < BOTS; i++) {
        checked += bots[i].hashes_checked;
        mismatches += bots[i].mismatches;
    }
    double secs = (double)wall / 1e9;
    printf("bench_server: counter game, %s%s, %u bots (%u players, %u spectators), %u ready, %.1f s, %" PRIu64
           " steps (%.1f steps/s)\n",
           secure ? "SECURE (sealed packets, tokens)" : "plaintext", garbage ? " + garbage spray" : "", BOTS,
           PLAYERS, BOTS - PLAYERS, ready, secs, steps, (double)steps / secs);
    if (garbage)
        printf("  garbage absorbed: %.0f random UDP datagrams/s (1..256 B) sent to the server port during play\n",
               (double)sprayed / secs);
    *cpu_share = (double)cpu / (double)wall;
    printf("  server CPU: %.2f%% of one core (game thread %.2f%%, network thread %.2f%%)\n",
           100.0 * (double)cpu / (double)wall, 100.0 * (double)game_cpu / (double)wall,
           100.0 * (double)net_cpu / (double)wall);
    if (idle_share >= 0)
        printf("  server CPU with no client, stepping at 60/s (5 s before the bots join): %.2f%% of one core\n",
               100.0 * idle_share);
    printf("  step delivery latency, from the game thread queueing a step to\n");
    latency_print(&arrived, "the bot's socket holding it (kernel receive timestamp)");
    latency_print(&read_at, "the bots' thread reading it (one thread reads for all 64)");
    latency_print(&handled, "the bot handling it (after ENet's receive batch over all 64 peers)");
    printf("  wire per client, incl. 28 B IPv4+UDP per datagram: down %.0f B/s (%.1f datagrams/s), up %.0f "
           "B/s\n",
           (double)(bytes_out + 28u * packets_out) / secs / BOTS, (double)packets_out / secs / BOTS,
           (double)(bytes_in + 28u * packets_in) / secs / BOTS);
    printf("  RSS: %ld KiB before the bots connected (server), %ld KiB with %u bots in the same process\n",
           rss_server, rss_all, BOTS);
    printf("  heap allocations per step: game thread %.3f, network thread %.3f (ENet's memory comes from "
           "the thread's pool)\n",
           steps ? (double)game_allocs / (double)steps : 0.0,
           steps ? (double)net_allocs / (double)steps : 0.0);
    cradle_enet_pool_stats pool;
    cradle_enet_pool_read_stats(&s.net->pool, &pool);
    printf("  ENet pool (network thread): %" PRIu64 " fallbacks to malloc in the window (%" PRIu64
           " since start, %" PRIu64 " oversize), %zu KiB reserved; high-water/blocks per class:",
           pool.fallbacks - pool0.fallbacks, pool.fallbacks, pool.oversize, pool.reserved_bytes / 1024u);
    for (uint32_t c = 0; c < CRADLE_ENET_POOL_CLASSES; c++)
        printf(" %u B %u/%u", pool.classes[c].bytes, pool.classes[c].high_water, pool.classes[c].blocks);
    printf("\n");
    printf("  hashes checked by the bots: %" PRIu64 ", mismatches %" PRIu64 "\n", checked, mismatches);
    enet_host_destroy(h);
    server_close(&s);
    for (uint32_t i = 0; i < BOTS; i++) cradle_secure_wipe(&bots[i].session);
    return ready == BOTS ? mismatches : UINT64_MAX;
}

/* ---- the raw ENet reference ----
 *
 * What ENet alone costs for the same traffic, measured the same way: one
 * thread written as a plain ENet game server is (enet_host_service waits for
 * datagrams until the next tick), answering each HELLO with a WELCOME and
 * sending, 60 times a second, one STEPS datagram of the size Cradle sends to
 * every peer (enet_host_broadcast, unsequenced). It reads the bots' inputs
 * and acks and throws them away: no game, no log, no acks or redundancy, no
 * second thread. */
typedef struct raw_server {
    ENetHost *host;
    uint16_t port;
    const cradle_game_contract *contract;
    pthread_t thread;
    atomic_bool stop;
    uint64_t next_step;
    uint32_t welcomed;
} raw_server;

static void raw_welcome(raw_server *r, ENetPeer *peer, bool spectator) {
    const cradle_game_contract *k = r->contract;
    cradle_wire_message m = {.type = CRADLE_WIRE_WELCOME};
    cradle_wire_welcome *w = &m.as.welcome;
    w->slot = spectator || r->welcomed >= PLAYERS ? CRADLE_WIRE_SPECTATOR : (uint8_t)r->welcomed;
    w->players = PLAYERS;
    w->max_players = (uint8_t)k->max_players;
    w->input_bytes = (uint8_t)k->input_bytes;
    w->state_size = k->state_size;
    w->steps_per_second = k->steps_per_second;
    w->source_frames_per_second = k->source_frames_per_second;
    w->seed = 1;
    w->input_delay = 2;
    w->hash_interval = 30;
    w->start_step = r->next_step;
    snprintf(w->game, sizeof w->game, "%s", k->name);
    snprintf(w->build_id, sizeof w->build_id, "%s", k->build_id);
    uint8_t buf[1024];
    size_t n = 0;
    if (cradle_wire_encode(buf, sizeof buf, &n, &m) != 0) return;
    ENetPacket *p = enet_packet_create(buf, n, ENET_PACKET_FLAG_RELIABLE);
    if (p && enet_peer_send(peer, 0, p) != 0) enet_packet_destroy(p);
    if (w->slot != CRADLE_WIRE_SPECTATOR) r->welcomed++;
}

static void *raw_main(void *arg) {
    raw_server *r = arg;
    const cradle_game_contract *k = r->contract;
    uint8_t snapshot[CRADLE_SNAPSHOT_MAX] = {0};
    uint64_t period = 1000000000ull / k->steps_per_second, next_tick = now_ns() + period;
    while (!atomic_load(&r->stop)) {
        uint64_t now = now_ns();
        if (now >= next_tick) {
            cradle_wire_message m = {.type = CRADLE_WIRE_STEPS};
            m.as.steps.first_step = r->next_step;
            m.as.steps.count = 1;
            m.as.steps.snapshot_size = (uint16_t)cradle_snapshot_size(k->max_players, k->input_bytes);
            m.as.steps.snapshots = snapshot;
            uint8_t buf[256];
            size_t n = 0;
            if (cradle_wire_encode(buf, sizeof buf, &n, &m) == 0) {
                atomic_store(&sent_ns[r->next_step & (SENT_RING - 1u)], now_ns());
                ENetPacket *packet = enet_packet_create(buf, n, ENET_PACKET_FLAG_UNSEQUENCED);
                if (packet) enet_host_broadcast(r->host, 0, packet);
                enet_host_flush(r->host);
            }
            r->next_step++;
            next_tick += period;
            continue;
        }
        ENetEvent ev;
        int rc = enet_host_service(r->host, &ev, (uint32_t)((next_tick - now + 999999u) / 1000000u));
        while (rc > 0) {
            if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
                cradle_wire_message m;
                if (cradle_wire_decode(&m, ev.packet->data, ev.packet->dataLength) == 0 &&
                    m.type == CRADLE_WIRE_HELLO)
                    raw_welcome(r, ev.peer, m.as.hello.spectator);
                enet_packet_destroy(ev.packet);
            }
            rc = enet_host_check_events(r->host, &ev);
        }
    }
    return NULL;
}

/* The reference run: prints its figures; returns its CPU share (< 0: failed). */
static double run_raw_reference(double seconds) {
    cradle_reload lib;
    char why[CRADLE_RELOAD_MESSAGE_MAX];
    if (cradle_reload_open(&lib, &(cradle_reload_config){.path = BENCH_SERVER_COUNTER}, now_ns(), why, sizeof why) !=
        0) {
        fprintf(stderr, "bench_server: cannot load the counter game: %s\n", why);
        return -1;
    }
    static raw_server r;
    memset(&r, 0, sizeof r);
    r.contract = contract = cradle_reload_contract(&lib);
    for (int attempt = 0; attempt < 20 && !r.host; attempt++) {
        ENetAddress a = {.port = (uint16_t)(20000 + (unsigned)(now_ns() / 1000u + (uint64_t)attempt * 7919u) % 40000u)};
        enet_address_set_host_ip(&a, "127.0.0.1");
        r.host = enet_host_create(&a, BOTS + 8u, 1, 0, 0);
        r.port = a.port;
    }
    if (!r.host || pthread_create(&r.thread, NULL, raw_main, &r) != 0) {
        fprintf(stderr, "bench_server: cannot start the raw ENet reference\n");
        cradle_reload_close(&lib);
        return -1;
    }
    double share = -1;
    raw_reference = true;
    ENetHost *h = bots_connect(r.port, BOTS, true);
    if (h) {
        uint64_t settle_until = now_ns() + 1000000000ull;
        while (now_ns() < settle_until) bots_turn(h);
        uint32_t ready = 0;
        for (uint32_t i = 0; i < BOTS; i++) ready += bots[i].ready;
        arrived.count = read_at.count = handled.count = 0;
        uint64_t t0 = now_ns(), cpu0 = thread_cpu_ns(r.thread);
        uint32_t out0 = r.host->totalSentData, outp0 = r.host->totalSentPackets;
        uint32_t in0 = r.host->totalReceivedData, inp0 = r.host->totalReceivedPackets;
        uint64_t end = t0 + (uint64_t)(seconds * 1e9);
        while (now_ns() < end) bots_turn(h);
        uint64_t wall = now_ns() - t0, cpu = thread_cpu_ns(r.thread) - cpu0;
        double secs = (double)wall / 1e9;
        uint32_t out = r.host->totalSentData - out0, outp = r.host->totalSentPackets - outp0;
        uint32_t in = r.host->totalReceivedData - in0, inp = r.host->totalReceivedPackets - inp0;
        share = (double)cpu / (double)wall;
        printf("bench_server: raw ENet reference (one thread, enet_host_service until each tick, one STEPS "
               "datagram per peer per step; no game, log, acks or redundancy), %u bots, %u ready, %.1f s\n",
               BOTS, ready, secs);
        printf("  CPU: %.2f%% of one core\n", 100.0 * share);
        printf("  step delivery latency, from the tick's send to\n");
        latency_print(&arrived, "the bot's socket holding it (kernel receive timestamp)");
        printf("  wire per client, incl. 28 B IPv4+UDP per datagram: down %.0f B/s (%.1f datagrams/s), up %.0f "
               "B/s\n",
               ((double)out + 28.0 * outp) / secs / BOTS, (double)outp / secs / BOTS,
               ((double)in + 28.0 * inp) / secs / BOTS);
        if (ready != BOTS) share = -1;
        enet_host_destroy(h);
    } else {
        fprintf(stderr, "bench_server: bots could not connect to the raw ENet reference\n");
    }
    raw_reference = false;
    atomic_store(&r.stop, true);
    pthread_join(r.thread, NULL);
    enet_host_destroy(r.host);
    cradle_reload_close(&lib);
    return share;
}

int main(int argc, char **argv) {
    thread_kind = KIND_BOTS;
    double seconds = argc > 1 ? atof(argv[1]) : 60.0;
    if (!(seconds > 0)) seconds = 60.0;
    if (cradle_enet_pool_initialize() != 0 || cradle_keys_generate(&server_keys) != 0 ||
        cradle_keys_generate(&issuer_keys) != 0)
        return 1;
    latency *all[] = {&arrived, &read_at, &handled};
    for (size_t i = 0; i < 3; i++)
        if (!(all[i]->us = malloc(LAT_SAMPLES * sizeof *all[i]->us))) return 1;
    /* The closest pair of clock readings gives the offset between them. */
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 100; i++) {
        struct timespec real;
        uint64_t m0 = now_ns();
        clock_gettime(CLOCK_REALTIME, &real);
        uint64_t m1 = now_ns();
        if (m1 - m0 < best) {
            best = m1 - m0;
            realtime_minus_mono = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec - (int64_t)(m0 + (m1 - m0) / 2);
        }
    }
    double plain_cpu = 0, secure_cpu = 0, spray_cpu = 0;
    uint64_t mismatches = run_phase(seconds, false, false, &plain_cpu);
    double raw_cpu = run_raw_reference(seconds);
    if (raw_cpu > 0)
        printf("  Cradle's server against raw ENet in this run: %.2f%% vs %.2f%% of a core (%.2fx)\n",
               100.0 * plain_cpu, 100.0 * raw_cpu, plain_cpu / raw_cpu);
    else
        mismatches = UINT64_MAX;
    uint64_t m2 = run_phase(seconds, true, false, &secure_cpu);
    uint64_t m3 = run_phase(seconds, true, true, &spray_cpu);
    if (m2 != 0 || m3 != 0) mismatches = m2 ? m2 : m3;
    printf("  encryption cost: server CPU %.2f%% plaintext -> %.2f%% secure (%+.1f%%); %.2f%% while absorbing "
           "garbage\n",
           100.0 * plain_cpu, 100.0 * secure_cpu, plain_cpu > 0 ? 100.0 * (secure_cpu / plain_cpu - 1.0) : 0.0,
           100.0 * spray_cpu);
    bench_secure = false;

    /* Join after 2 hours of steps: 432000 steps in commanded mode, then one bot. */
    static server j;
    if (server_open(&j, CRADLE_SERVER_COMMANDED) != 0) return 1;
    contract = j.host->sim.contract;
    uint64_t a0 = now_ns();
    cradle_server_host_advance(j.host, 2u * 3600u * 60u);
    uint64_t advance_ns = now_ns() - a0;
    server_start_loop(&j);
    uint64_t c0 = now_ns();
    ENetHost *jh = bots_connect(j.options.port, 1, true);
    while (jh && !bots[0].ready && now_ns() - c0 < 5000000000ull) bots_service(jh, 1);
    uint64_t join_ns = now_ns() - c0;
    printf("  join after %u steps (2 h at 60/s; ran in %.2f s): %.2f ms from connect to a ready state (%s)\n",
           2u * 3600u * 60u, (double)advance_ns / 1e9, (double)join_ns / 1e6,
           bots[0].ready ? "ok" : "FAILED");
    if (jh) enet_host_destroy(jh);
    server_close(&j);
    for (size_t i = 0; i < 3; i++) free(all[i]->us);
    enet_deinitialize();
    return mismatches == 0 ? 0 : 1;
}
