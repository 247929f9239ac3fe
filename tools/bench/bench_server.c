/*
 * bench_server: cradle-server's game and network threads (server/src/host.c,
 * net.c) hosting the counter game on loopback for 64 headless bots (8 players,
 * 56 spectators) at the game's 60 steps/s.
 *
 * The server's two threads and the bots run in this one process. Each bot
 * is the client library's session (cradle_netclient, client/src/netclient.h:
 * what cradle-client runs), with its own ENet host and UDP socket; one
 * thread, the main one, plays all 64. Printed:
 *   - server CPU: the game and network threads' CPU time over wall time
 *     (also for 5 s before the bots join: the cost of a session nobody plays);
 *   - step delivery latency, p50/p99/max, from the moment the game thread
 *     queues a STEPS message (seen by wrapping the call that wakes the
 *     network thread after it: __wrap_cradle_server_net_wake below; the
 *     server has no hook for it) to the bot's receipt, at three points: the
 *     datagram in the bot's socket (the kernel's receive timestamp,
 *     SIOCGSTAMPNS, read in ENet's intercept hook), read by the bots' thread,
 *     and run by the bot. The first is the delivery; the other two add the
 *     time one thread takes to play 64 clients (it reads the bots' sockets in
 *     turn). The bots send their inputs, acks and pings after each step's
 *     burst (cradle_netclient_receive, then cradle_netclient_send), so one
 *     bot's sending does not delay another's receipt, as it would not with a
 *     machine each; spectators ack every other step (cradle/ackpace.h);
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
 *   bench_server SECONDS CLIENTS   one point of the cost curve: CLIENTS bots
 *                             (8..1024: 8 players, the rest spectators),
 *                             plaintext, raw ENet and secure, then a
 *                             "curve:" summary line (tools/bench.sh
 *                             server-curve runs 8, 64, 256 and 1024)
 */
#include <errno.h>
#include <stddef.h>
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
#include <sys/stat.h>
#include <malloc.h>
#include <poll.h>
#include <unistd.h>

#include "cradle/ackpace.h"
#include "cradle/enet_pool.h"
#include "cradle/hash.h"
#include "cradle/keys.h"
#include "cradle/raw_datagram.h"
#include "cradle/reload.h"
#include "cradle/secure.h"
#include "cradle/token.h"
#include "cradle/wire.h"
#include "host.h"
#include "net.h"
#include "netclient.h"

#define BOTS_MAX 1024u /* the largest client count a run takes */
static uint32_t clients = 64; /* this run's: 8 players and the rest spectators */
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
    _Atomic int stop;
    pthread_t game_thread;
} server;

/* When each step was queued (CLOCK_MONOTONIC ns), by step & (SENT_RING - 1). */
static _Atomic uint64_t sent_ns[SENT_RING];
static uint64_t stamped_through; /* steps below it are stamped (the game thread's) */
static const cradle_server_host *stamped_host;
static atomic_bool stamping; /* the bots have joined: their latency counts */

/* The moment the game thread queues a STEPS message, taken without a hook in
 * the server: host.c's push_out wakes the network thread right after each
 * message enters the outbound ring, and this program is linked with
 * -Wl,--wrap=cradle_server_net_wake (tools/bench/CMakeLists.txt), so host.c's
 * calls come here first. A broadcast STEPS in the host's out_scratch (the
 * message just queued, on the game thread that owns it) stamps each of its
 * steps, once: push_out may wake the thread again for the same message, and
 * the host queues each step in one STEPS, in order (net.c repeats them). */
void __real_cradle_server_net_wake(cradle_server_net *net);
void __wrap_cradle_server_net_wake(cradle_server_net *net);
void __wrap_cradle_server_net_wake(cradle_server_net *net) {
    const cradle_server_host *host = stamped_host;
    const cradle_server_out *out = host ? &host->out_scratch : NULL;
    cradle_wire_message m;
    if (out && host->net == net && atomic_load_explicit(&stamping, memory_order_relaxed) &&
        out->peer == CRADLE_SERVER_BROADCAST && cradle_wire_decode(&m, out->bytes, out->length) == 0 &&
        m.type == CRADLE_WIRE_STEPS) {
        uint64_t t = now_ns();
        for (uint64_t step = out->first_step; step < out->first_step + m.as.steps.count; step++) {
            if (step < stamped_through) continue;
            atomic_store(&sent_ns[step & (SENT_RING - 1u)], t);
            stamped_through = step + 1;
        }
    }
    __real_cradle_server_net_wake(net);
}

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
    s->options.spectators = clients - PLAYERS;
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
    stamped_through = 0; /* a new session counts from step 0 again */
    stamped_host = s->host;
    for (int attempt = 0; attempt < 20; attempt++) {
        s->options.port =
            (uint16_t)(20000 + (unsigned)(now_ns() / 1000u + (uint64_t)attempt * 7919u) % 40000u);
        cradle_server_net_config nc = {.bind_address = "127.0.0.1",
                                       .port = s->options.port,
                                       .max_peers = cradle_server_peer_table_size(PLAYERS, clients - PLAYERS),
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
    stamped_host = NULL; /* set before the free below; the game thread is the only other reader */
    pthread_join(s->game_thread, NULL);
    (void)cradle_server_host_finish(s->host);
    cradle_server_net_stop(s->net, 200);
    cradle_server_net_close(s->net);
    cradle_server_host_deinit(s->host);
    free(s->host);
    free(s->net);
}

/* ---- bots ----
 *
 * Each bot is a cradle_netclient (client/src/netclient.h), the session
 * cradle-client runs, with its own ENet host and socket; one thread plays
 * all of them. */

typedef struct bot {
    cradle_netclient net;
    uint32_t index;
    char copy_dir[96];   /* its own directory for the library copy */
    uint64_t arrived_ns; /* its latest datagram: the kernel's receive time (CLOCK_MONOTONIC) */
    uint64_t read_ns;    /* ... and when ENet read it from the socket */
} bot;

static bot bots[BOTS_MAX];
static uint32_t bot_count;
static char bench_dir[64];  /* the bots' library copies and the issuer key file */
static char issuer_path[96];
/* Step latencies in microseconds, each from the game thread's queueing. */
typedef struct latency {
    uint32_t *us;
    uint64_t count;
} latency;
static latency arrived; /* in the bot's socket: the kernel's receive timestamp */
static latency read_at; /* read from the socket by the bots' thread */
static latency handled; /* run by the bot, after its receive */
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

/* A player's input: -3..3, seeded by the bot. */
static void bot_input(void *context, uint64_t step, uint8_t *out, uint32_t input_bytes) {
    const bot *b = context;
    if (input_bytes > 0) out[0] = (uint8_t)((step + b->index) % 7u + 253u);
}

/* ENet calls this for every datagram a bot's socket gives it: the socket's
 * timestamp of the datagram just read is the moment it arrived. */
static int bots_intercept(ENetHost *h, ENetEvent *event) {
    /* the peer's data is its netclient, the bot's first member */
    bot *b = h->peers[0].data;
    if (b) {
        /* the latest: a later ping in the same read only makes it later */
        b->read_ns = now_ns();
        b->arrived_ns = (uint64_t)((int64_t)cradle_raw_arrival_ns(h->socket) - realtime_minus_mono);
    }
    return cradle_netclient_intercept(h, event); /* the raw PONGs are the client's */
}

/* Reads what arrived for b, then runs its steps. Latency is taken for the
 * steps this read completed (the next ones in order: a step after a gap
 * counts when the gap closes). */
static void bot_receive(bot *b) {
    cradle_netclient *net = &b->net;
    uint64_t before = net->received_next;
    b->arrived_ns = b->read_ns = 0;
    if (cradle_netclient_receive(net, now_ns(), 0) != 0) return;
    if (!cradle_netclient_playing(net)) return;
    while (cradle_netclient_step(net, now_ns()) == 1) {
    }
    uint64_t ran = now_ns();
    for (uint64_t step = before; step < net->received_next; step++) {
        uint64_t sent = atomic_load(&sent_ns[step & (SENT_RING - 1u)]);
        latency_add(&handled, sent, ran);
        latency_add(&arrived, sent, b->arrived_ns);
        latency_add(&read_at, sent, b->read_ns);
    }
}

/* Waits up to timeout_ms for a datagram on any bot's socket and has every
 * bot with one read it. Returns the number of bots that read. */
static uint32_t bots_receive(uint32_t timeout_ms) {
    struct pollfd fds[BOTS_MAX];
    for (uint32_t i = 0; i < bot_count; i++)
        fds[i] = (struct pollfd){.fd = bots[i].net.enet ? (int)bots[i].net.enet->socket : -1, .events = POLLIN};
    if (poll(fds, bot_count, (int)timeout_ms) <= 0) return 0;
    uint32_t read = 0;
    for (uint32_t i = 0; i < bot_count; i++) {
        if (!(fds[i].revents & POLLIN)) continue;
        bot_receive(&bots[i]);
        read++;
    }
    return read;
}

/* One turn of the bots' thread. It stands in for 64 clients that would
 * each have their own machine, so one bot's sending must not hold up
 * another's receiving: the bots answer (inputs, acks, pings) once the burst
 * of datagrams the server sends every step is over (1 ms without one). */
static void bots_turn(void) {
    if (bots_receive(1) > 0) return;
    for (uint32_t i = 0; i < bot_count; i++) (void)cradle_netclient_send(&bots[i].net, now_ns());
}

static uint32_t bots_playing(void) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < bot_count; i++) n += cradle_netclient_playing(&bots[i].net);
    return n;
}

static void bots_close(void) {
    for (uint32_t i = 0; i < bot_count; i++) {
        cradle_netclient_close(&bots[i].net);
        if (bots[i].copy_dir[0]) (void)rmdir(bots[i].copy_dir);
        bots[i].copy_dir[0] = '\0';
    }
    bot_count = 0;
    malloc_trim(0); /* the next phase's RSS "before the bots" is the server's */
}

/* Opens bots first..first+count-1 against port (the first PLAYERS as
 * players when first_players): each loads the game and starts connecting.
 * Returns false (said why) when one could not; bots_close() in either case. */
static bool bots_open_range(uint16_t port, uint32_t first, uint32_t count, bool first_players) {
    char server_key[CRADLE_KEYS_HEX_SIZE];
    cradle_keys_to_hex(server_key, server_keys.kx_public);
    uint64_t now = now_ns();
    for (uint32_t i = first; i < first + count; i++) {
        bot *b = &bots[i];
        memset(b, 0, sizeof *b);
        b->index = i;
        bot_count = i + 1;
        snprintf(b->copy_dir, sizeof b->copy_dir, "%s/bot%u", bench_dir, i);
        if (mkdir(b->copy_dir, 0700) != 0) {
            fprintf(stderr, "bench_server: cannot create %s\n", b->copy_dir);
            b->copy_dir[0] = '\0';
            return false;
        }
        cradle_netclient_config config = {.port = port,
                                          .game = BENCH_SERVER_COUNTER,
                                          .copy_dir = b->copy_dir,
                                          .spectator = !(first_players && i < PLAYERS),
                                          .requested_slot = -1,
                                          .insecure = !bench_secure,
                                          .server_key = server_key,
                                          .issuer_key = issuer_path,
                                          .client_id = i,
                                          .input = bot_input,
                                          .input_context = b};
        if (cradle_netclient_open(&b->net, &config, now) != 0) {
            fprintf(stderr, "bench_server: bot %u: %s\n", i, b->net.message);
            return false;
        }
        _Static_assert(offsetof(bot, net) == 0, "the peer's data (the netclient) is the bot");
        b->net.enet->intercept = bots_intercept;
    }
    return true;
}

static bool bots_open(uint16_t port, uint32_t count, bool first_players) {
    return bots_open_range(port, 0, count, first_players);
}

/* Services the open bots until all are playing, at most 5 s: those from
 * `from` on (joining) every pass, the others (playing already) every 8th.
 * Returns true when they all are. */
static bool bots_join_from(uint32_t from) {
    uint64_t deadline = now_ns() + 5000000000ull;
    for (uint32_t pass = 0; bots_playing() < bot_count && now_ns() < deadline; pass++) {
        for (uint32_t i = pass % 8u == 0 ? 0 : from; i < bot_count; i++)
            (void)cradle_netclient_service(&bots[i].net, now_ns(), 0);
        (void)bots_receive(1);
    }
    for (uint32_t i = 0; i < bot_count; i++)
        if (bots[i].net.error) fprintf(stderr, "bench_server: bot %u: %s\n", i, bots[i].net.message);
    return bots_playing() == bot_count;
}

static bool bots_join(void) { return bots_join_from(0); }

/* Opens and joins count bots, JOIN_BATCH at a time: a steady state is
 * measured, not a thousand clients' handshakes served by one thread at once
 * (whose connections the server drops when they stay silent too long). */
#define JOIN_BATCH 64u
static bool bots_open_join(uint16_t port, uint32_t count) {
    for (uint32_t first = 0; first < count; first += JOIN_BATCH) {
        uint32_t n = count - first < JOIN_BATCH ? count - first : JOIN_BATCH;
        if (!bots_open_range(port, first, n, true) || !bots_join_from(first)) return false;
    }
    return true;
}

/* The server's counters a measured window reports the change of. */
typedef struct phase_counters {
    uint64_t t, game_cpu, net_cpu, step;
    uint64_t bytes_out, packets_out, bytes_in, packets_in;
    uint64_t game_allocs, net_allocs;
} phase_counters;

/* What one phase measured, for print_phase. */
typedef struct phase_result {
    bool secure, garbage;
    uint32_t ready;           /* bots playing when the window began */
    phase_counters d;         /* the change over the window */
    uint64_t sprayed;         /* garbage datagrams sent */
    double idle_share;        /* server CPU before the bots joined; < 0: not measured */
    long rss_server, rss_all; /* KiB: before the bots, and with them */
    uint64_t checked, mismatches, ended;
    cradle_enet_pool_stats pool0; /* the pool when the window began */
} phase_result;

/* The server's CPU share over 5 s of stepping before anyone joins: what a
 * running session costs with no clients. */
static double idle_cpu_share(server *s) {
    uint64_t i0 = now_ns(), g0 = thread_cpu_ns(s->game_thread), n0 = thread_cpu_ns(s->net->thread);
    struct timespec idle = {.tv_sec = 5};
    while (nanosleep(&idle, &idle) != 0) {
    }
    return (double)(thread_cpu_ns(s->game_thread) - g0 + thread_cpu_ns(s->net->thread) - n0) /
           (double)(now_ns() - i0);
}

static void counters_read(server *s, phase_counters *c) {
    c->t = now_ns();
    c->game_cpu = thread_cpu_ns(s->game_thread);
    c->net_cpu = thread_cpu_ns(s->net->thread);
    c->step = s->host->sim.next_step;
    c->bytes_out = atomic_load(&s->net->stats.bytes_out);
    c->packets_out = atomic_load(&s->net->stats.packets_out);
    c->bytes_in = atomic_load(&s->net->stats.bytes_in);
    c->packets_in = atomic_load(&s->net->stats.packets_in);
    c->game_allocs = atomic_load(&alloc_count[KIND_GAME]);
    c->net_allocs = atomic_load(&alloc_count[KIND_OTHER]);
}

static phase_counters counters_since(const phase_counters *after, const phase_counters *before) {
    return (phase_counters){.t = after->t - before->t,
                            .game_cpu = after->game_cpu - before->game_cpu,
                            .net_cpu = after->net_cpu - before->net_cpu,
                            .step = after->step - before->step,
                            .bytes_out = after->bytes_out - before->bytes_out,
                            .packets_out = after->packets_out - before->packets_out,
                            .bytes_in = after->bytes_in - before->bytes_in,
                            .packets_in = after->packets_in - before->packets_in,
                            .game_allocs = after->game_allocs - before->game_allocs,
                            .net_allocs = after->net_allocs - before->net_allocs};
}

/* The measured window: the bots play until end, with (garbage) 256 random
 * UDP datagrams sent to the server's port every turn. Returns how many went. */
static uint64_t play_window(uint16_t port, uint64_t end, bool garbage) {
    int spray = garbage ? socket(AF_INET, SOCK_DGRAM, 0) : -1;
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    uint64_t sprayed = 0;
    uint8_t junk[256];
    while (now_ns() < end) {
        bots_turn();
        for (int k = 0; spray >= 0 && k < 256; k++) {
            randombytes_buf(junk, sizeof junk);
            size_t len = 1u + junk[0] % sizeof junk;
            if (sendto(spray, junk, len, MSG_DONTWAIT, (const struct sockaddr *)&to, sizeof to) > 0) sprayed++;
        }
    }
    if (spray >= 0) close(spray);
    return sprayed;
}

/* The bots' hash checks, desyncs and sessions ended early (each said on stderr). */
static void bots_tally(phase_result *r) {
    for (uint32_t i = 0; i < clients; i++) {
        r->checked += bots[i].net.hashes_checked;
        r->mismatches += bots[i].net.desync; /* a bot reports its first mismatch */
        r->ended += bots[i].net.error != 0;
        if (bots[i].net.error) fprintf(stderr, "bench_server: bot %u: %s\n", i, bots[i].net.message);
    }
}

/* The ENet pool's line: fallbacks in the window and since start, and each class's use. */
static void print_pool(server *s, const cradle_enet_pool_stats *pool0) {
    cradle_enet_pool_stats pool;
    cradle_enet_pool_read_stats(&s->net->pool, &pool);
    printf("  ENet pool (network thread): %" PRIu64 " fallbacks to malloc in the window (%" PRIu64
           " since start, %" PRIu64 " oversize), %zu KiB reserved; high-water/blocks per class:",
           pool.fallbacks - pool0->fallbacks, pool.fallbacks, pool.oversize, pool.reserved_bytes / 1024u);
    for (uint32_t c = 0; c < CRADLE_ENET_POOL_CLASSES; c++)
        printf(" %u B %u/%u", pool.classes[c].bytes, pool.classes[c].high_water, pool.classes[c].blocks);
    printf("\n");
}

/* Prints one phase's figures. */
static void print_phase(server *s, const phase_result *r) {
    const phase_counters *d = &r->d;
    uint64_t cpu = d->game_cpu + d->net_cpu;
    double secs = (double)d->t / 1e9;
    printf("bench_server: counter game, %s%s, %u bots (%u players, %u spectators), %u ready, %.1f s, %" PRIu64
           " steps (%.1f steps/s)\n",
           r->secure ? "SECURE (sealed packets, tokens)" : "plaintext", r->garbage ? " + garbage spray" : "", clients,
           PLAYERS, clients - PLAYERS, r->ready, secs, d->step, (double)d->step / secs);
    if (r->garbage)
        printf("  garbage absorbed: %.0f random UDP datagrams/s (1..256 B) sent to the server port during play\n",
               (double)r->sprayed / secs);
    printf("  server CPU: %.2f%% of one core (game thread %.2f%%, network thread %.2f%%)\n",
           100.0 * (double)cpu / (double)d->t, 100.0 * (double)d->game_cpu / (double)d->t,
           100.0 * (double)d->net_cpu / (double)d->t);
    if (r->idle_share >= 0)
        printf("  server CPU with no client, stepping at 60/s (5 s before the bots join): %.2f%% of one core\n",
               100.0 * r->idle_share);
    printf("  step delivery latency, from the game thread queueing a step to\n");
    latency_print(&arrived, "the bot's socket holding it (kernel receive timestamp)");
    char what[128];
    snprintf(what, sizeof what, "the bots' thread reading it (one thread reads for all %u)", clients);
    latency_print(&read_at, what);
    snprintf(what, sizeof what, "the bot running it (the bots read their sockets in turn, one thread for all %u)",
             clients);
    latency_print(&handled, what);
    printf("  wire per client, incl. 28 B IPv4+UDP per datagram: down %.0f B/s (%.1f datagrams/s), up %.0f "
           "B/s\n",
           (double)(d->bytes_out + 28u * d->packets_out) / secs / clients, (double)d->packets_out / secs / clients,
           (double)(d->bytes_in + 28u * d->packets_in) / secs / clients);
    printf("  RSS: %ld KiB before the bots connected (server), %ld KiB with %u bots in the same process\n",
           r->rss_server, r->rss_all, clients);
    printf("  heap allocations per step: game thread %.3f, network thread %.3f (ENet's memory comes from "
           "the thread's pool)\n",
           d->step ? (double)d->game_allocs / (double)d->step : 0.0,
           d->step ? (double)d->net_allocs / (double)d->step : 0.0);
    print_pool(s, &r->pool0);
    printf("  hashes checked by the bots: %" PRIu64 ", mismatches %" PRIu64 " (bots that desynced), sessions "
           "ended early %" PRIu64 "\n", r->checked, r->mismatches, r->ended);
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
    phase_result r = {.secure = secure, .garbage = garbage, .idle_share = -1};
    r.rss_server = rss_kib();
    server_start_loop(&s);
    if (!secure && !garbage) r.idle_share = idle_cpu_share(&s);

    if (!bots_open_join(s.options.port, clients)) {
        fprintf(stderr, "bench_server: bots could not join\n");
        bots_close();
        server_close(&s);
        return UINT64_MAX;
    }
    atomic_store(&stamping, true);
    /* Let everyone settle, then measure a clean window. */
    uint64_t settle_until = now_ns() + 1000000000ull;
    while (now_ns() < settle_until) bots_turn();
    r.ready = bots_playing();
    arrived.count = read_at.count = handled.count = 0;
    phase_counters before, after;
    counters_read(&s, &before);
    cradle_enet_pool_read_stats(&s.net->pool, &r.pool0);
    r.sprayed = play_window(s.options.port, before.t + (uint64_t)(seconds * 1e9), garbage);
    counters_read(&s, &after);
    r.d = counters_since(&after, &before);
    r.rss_all = rss_kib();
    bots_tally(&r);
    *cpu_share = (double)(r.d.game_cpu + r.d.net_cpu) / (double)r.d.t;
    print_phase(&s, &r);
    atomic_store(&stamping, false);
    bots_close();
    server_close(&s);
    return r.ready == clients && r.ended == 0 ? r.mismatches : UINT64_MAX;
}

/* ---- the raw ENet reference ----
 *
 * What ENet alone costs for the same traffic, measured the same way: one
 * thread written as a plain ENet game server is (enet_host_service waits for
 * datagrams until the next tick), answering each HELLO with a WELCOME and
 * sending, 60 times a second, one STEPS datagram of the size Cradle sends to
 * every peer (enet_host_broadcast, unsequenced). It reads the bots' inputs
 * and acks and throws them away: no game, no log, no acks or redundancy, no
 * second thread. It starts stepping once every bot has its WELCOME, so each
 * WELCOME is for step 0: a later start needs a state block, which a client
 * (the bots are cradle_netclients) waits for. */
typedef struct raw_server {
    ENetHost *host;
    uint16_t port;
    const cradle_game_contract *contract;
    pthread_t thread;
    atomic_bool stop;
    uint64_t next_step;
    uint32_t welcomed; /* players */
    uint32_t joined;   /* players and spectators */
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
    r->joined++;
}

static void *raw_main(void *arg) {
    raw_server *r = arg;
    const cradle_game_contract *k = r->contract;
    uint8_t snapshot[CRADLE_SNAPSHOT_MAX] = {0};
    uint64_t period = 1000000000ull / k->steps_per_second, next_tick = now_ns() + period;
    while (!atomic_load(&r->stop)) {
        uint64_t now = now_ns();
        if (now >= next_tick && r->joined < clients) {
            next_tick += period; /* stepping starts with every bot in */
            continue;
        }
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
            /* The peers as net.c sets them up: with ENet's default throttle
             * deceleration ENet drops unreliable datagrams when a round trip
             * varies, and this reference never resends. */
            if (ev.type == ENET_EVENT_TYPE_CONNECT)
                enet_peer_throttle_configure(ev.peer, ENET_PEER_PACKET_THROTTLE_INTERVAL,
                                             ENET_PEER_PACKET_THROTTLE_ACCELERATION, 0);
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
    r.contract = cradle_reload_contract(&lib);
    for (int attempt = 0; attempt < 20 && !r.host; attempt++) {
        ENetAddress a = {.port = (uint16_t)(20000 + (unsigned)(now_ns() / 1000u + (uint64_t)attempt * 7919u) % 40000u)};
        enet_address_set_host_ip(&a, "127.0.0.1");
        r.host = enet_host_create(&a, clients + 8u, 1, 0, 0);
        r.port = a.port;
    }
    if (!r.host || pthread_create(&r.thread, NULL, raw_main, &r) != 0) {
        fprintf(stderr, "bench_server: cannot start the raw ENet reference\n");
        cradle_reload_close(&lib);
        return -1;
    }
    double share = -1;
    if (bots_open_join(r.port, clients)) {
        uint64_t settle_until = now_ns() + 1000000000ull;
        while (now_ns() < settle_until) bots_turn();
        uint32_t ready = bots_playing();
        arrived.count = read_at.count = handled.count = 0;
        uint64_t t0 = now_ns(), cpu0 = thread_cpu_ns(r.thread);
        uint32_t out0 = r.host->totalSentData, outp0 = r.host->totalSentPackets;
        uint32_t in0 = r.host->totalReceivedData, inp0 = r.host->totalReceivedPackets;
        uint64_t end = t0 + (uint64_t)(seconds * 1e9);
        while (now_ns() < end) bots_turn();
        uint64_t wall = now_ns() - t0, cpu = thread_cpu_ns(r.thread) - cpu0;
        double secs = (double)wall / 1e9;
        uint32_t out = r.host->totalSentData - out0, outp = r.host->totalSentPackets - outp0;
        uint32_t in = r.host->totalReceivedData - in0, inp = r.host->totalReceivedPackets - inp0;
        share = (double)cpu / (double)wall;
        printf("bench_server: raw ENet reference (one thread, enet_host_service until each tick, one STEPS "
               "datagram per peer per step; no game, log, acks or redundancy), %u bots, %u ready, %.1f s\n",
               clients, ready, secs);
        printf("  CPU: %.2f%% of one core\n", 100.0 * share);
        printf("  step delivery latency, from the tick's send to\n");
        latency_print(&arrived, "the bot's socket holding it (kernel receive timestamp)");
        printf("  wire per client, incl. 28 B IPv4+UDP per datagram: down %.0f B/s (%.1f datagrams/s), up %.0f "
               "B/s\n",
               ((double)out + 28.0 * outp) / secs / clients, (double)outp / secs / clients,
               ((double)in + 28.0 * inp) / secs / clients);
        /* The reference never resends: a bot that lost a step waits for it
         * from then on, and its samples stop. */
        uint32_t stalled = 0;
        for (uint32_t i = 0; i < clients; i++) stalled += bots[i].net.steps_early > 0;
        if (stalled) printf("  %u bots lost a step (never resent here): their samples stop there\n", stalled);
        if (ready != clients) share = -1;
    } else {
        fprintf(stderr, "bench_server: bots could not join the raw ENet reference\n");
    }
    bots_close();
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
    /* A point of the cost curve (tools/bench.sh server-curve): that many
       clients, plaintext, raw ENet and secure, and a summary line. */
    bool curve = argc > 2;
    if (curve) {
        long n = atol(argv[2]);
        if (n < (long)PLAYERS || n > (long)BOTS_MAX) {
            fprintf(stderr, "bench_server: CLIENTS must be %u..%u, got '%s'\n", PLAYERS, BOTS_MAX, argv[2]);
            return 2;
        }
        clients = (uint32_t)n;
    }
    if (cradle_enet_pool_initialize() != 0 || cradle_keys_generate(&server_keys) != 0 ||
        cradle_keys_generate(&issuer_keys) != 0)
        return 1;
    latency *all[] = {&arrived, &read_at, &handled};
    for (size_t i = 0; i < 3; i++)
        if (!(all[i]->us = malloc(LAT_SAMPLES * sizeof *all[i]->us))) return 1;
    /* The bots' library copies and the issuer key they mint their tokens with. */
    const char *tmp = getenv("TMPDIR");
    snprintf(bench_dir, sizeof bench_dir, "%s/cradle-bench-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    snprintf(issuer_path, sizeof issuer_path, "%s/issuer.key", mkdtemp(bench_dir) ? bench_dir : "/nonexistent");
    char why[256];
    if (cradle_keys_save(&issuer_keys, issuer_path, why, sizeof why) != 0) {
        fprintf(stderr, "bench_server: %s\n", why);
        return 1;
    }
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
    if (curve) {
        if (m2 != 0) mismatches = m2;
        double client_steps = 60.0 * clients; /* a second's */
        printf("curve: %u clients: server CPU plaintext %.2f%%, raw ENet %.2f%% (%.2fx), secure %.2f%% (%.2fx); "
               "%.2f / %.2f / %.2f us of CPU per client-step\n",
               clients, 100.0 * plain_cpu, 100.0 * raw_cpu, raw_cpu > 0 ? plain_cpu / raw_cpu : 0.0,
               100.0 * secure_cpu, raw_cpu > 0 ? secure_cpu / raw_cpu : 0.0, 1e6 * plain_cpu / client_steps,
               1e6 * raw_cpu / client_steps, 1e6 * secure_cpu / client_steps);
        for (size_t i = 0; i < 3; i++) free(all[i]->us);
        (void)remove(issuer_path);
        (void)rmdir(bench_dir);
        enet_deinitialize();
        return mismatches == 0 ? 0 : 1;
    }
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
    uint64_t a0 = now_ns();
    cradle_server_host_advance(j.host, 2u * 3600u * 60u);
    uint64_t advance_ns = now_ns() - a0;
    server_start_loop(&j);
    /* From connecting (the bot has loaded its game) to a state to step from. */
    bool opened = bots_open(j.options.port, 1, true);
    uint64_t c0 = now_ns();
    bool joined = opened && bots_join();
    uint64_t join_ns = now_ns() - c0;
    printf("  join after %u steps (2 h at 60/s; ran in %.2f s): %.2f ms from connect to a ready state (%s)\n",
           2u * 3600u * 60u, (double)advance_ns / 1e9, (double)join_ns / 1e6, joined ? "ok" : "FAILED");
    bots_close();
    server_close(&j);
    for (size_t i = 0; i < 3; i++) free(all[i]->us);
    (void)remove(issuer_path);
    (void)rmdir(bench_dir);
    enet_deinitialize();
    return mismatches == 0 ? 0 : 1;
}
