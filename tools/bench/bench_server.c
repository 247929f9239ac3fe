#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, SOCK_CLOEXEC */
/*
 * bench_server: cradle-server's game and network threads (server/src/host.c,
 * net.c) hosting the counter game on loopback for 64 headless bots (8 players,
 * 56 spectators) at the game's 60 steps/s.
 *
 * Two processes. main() forks first, before any thread or ENet host exists:
 * the parent runs the servers and takes and prints every figure; the child
 * plays the bots, so that the server's process holds only the server and
 * the bench's driver. Each bot is the client library's session
 * (cradle_netclient, client/net/netclient.h: what cradle-client runs), with
 * its own ENet host and UDP socket; one thread, the child's only one, plays
 * them all. The parent drives the child over a socketpair, one fixed-size
 * command and one reply at a time (bot_command, bot_reply: open N bots
 * against a port and join them, join, play a window, close them, quit).
 * Neither waits forever on the other: the child ends at EOF (the parent
 * gone: it looks every 100 ms while it plays or joins, bots_orphaned), the
 * parent at EOF or a deadline on every reply, after which it reaps the
 * child and exits 1 (bots_lost). The one thing both touch is an
 * anonymous MAP_SHARED mapping made before the fork: the ring of the moments
 * steps were queued, stamped by the server's process and read by the bots'
 * (CLOCK_MONOTONIC is one clock for the whole machine). Printed:
 *   - server CPU: the game and network threads' CPU time over wall time
 *     (their thread CPU clocks, read in the parent; also for 5 s before the
 *     bots join: the cost of a session nobody plays);
 *   - the bots' CPU: the child's process CPU time over the same window, on
 *     its own line. It is in no server figure, but the two processes share
 *     the machine's cores;
 *   - step delivery latency, p50/p99/max, from the start of the game
 *     thread's turn that runs the step (this program drives the server
 *     library's turns, game_main below) to the bot's receipt, at three points: the
 *     datagram in the bot's socket (the kernel's receive timestamp,
 *     SIOCGSTAMPNS, read in ENet's intercept hook), read by the bots' thread,
 *     and run by the bot. The first is the delivery; the other two add the
 *     time one thread takes to play 64 clients (it reads the bots' sockets in
 *     turn). The bots send their inputs, acks and pings after each step's
 *     burst (cradle_netclient_receive, then cradle_netclient_send), so one
 *     bot's sending does not delay another's receipt, as it would not with a
 *     machine each; spectators ack every fourth step (cradle/ackpace.h). The
 *     child keeps the samples and reports the percentiles;
 *   - bytes per second per client on the wire, IPv4 + UDP headers included
 *     (28 bytes per datagram), down (server->client) and up;
 *   - RSS: the server's process's own (the parent's VmRSS at the end of the
 *     window, every bot connected), and the bots' process's apart;
 *   - heap allocations per step on the game thread and on the network
 *     thread (every malloc in the server's process is counted by
 *     interposing malloc; ENet's memory comes from the network thread's
 *     pool, enet_pool.h, whose fallbacks to malloc are printed too);
 *   - the time for a client to join a session that has run 2 hours of steps
 *     (432000 steps run in commanded mode first).
 *
 *   - the same bots against a raw ENet reference (raw_main below, a thread
 *     of the parent): what ENet alone costs for this traffic, CPU and
 *     latency, in the same run;
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
#include <signal.h>
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <malloc.h>
#include <poll.h>
#include <unistd.h>

#include "cradle/ackpace.h"
#include "cradle/enet_pool.h"
#include "cradle/hash.h"
#include "cradle/keys.h"
#include "cradle/os.h"
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

/* ---- malloc interposition: counts every allocation, per thread kind ----
 *
 * Each process has its own counts; the parent's are the server's. */

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
extern void __libc_free(void *p);

/* The game thread; the main thread (the parent's driver, the child's bots);
 * every other thread, which in the parent is the network thread (and the
 * raw reference's, outside the windows that count). */
enum { KIND_OTHER = 0, KIND_GAME = 1, KIND_MAIN = 2 };
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

/* Sleeps until CLOCK_MONOTONIC reads at least t (ns). */
static void sleep_until(uint64_t t) {
    struct timespec at = {.tv_sec = (time_t)(t / 1000000000ull), .tv_nsec = (long)(t % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR) {
    }
}

static uint64_t thread_cpu_ns(pthread_t t) {
    clockid_t id;
    struct timespec ts;
    if (pthread_getcpuclockid(t, &id) != 0 || clock_gettime(id, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t process_cpu_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling process's resident set (VmRSS), KiB; -1 when unknown. */
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

/* ---- what the two processes share ----
 *
 * When each step was queued (CLOCK_MONOTONIC ns), by step & (SENT_RING - 1):
 * written by the server's process (the game thread's turns, or the raw
 * reference's thread) before the step is sent, read by the bots' process
 * after the step arrived. An anonymous MAP_SHARED mapping made before the
 * fork, so both have it at the same address; its atomics must be lock-free
 * to work across processes. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "the shared ring's atomics are lock-free");
typedef struct shared_ring {
    _Atomic uint64_t sent_ns[SENT_RING];
} shared_ring;
static shared_ring *shared;

/* ---- the pipe between the two processes ----
 *
 * A SOCK_SEQPACKET socketpair: each command and each reply is one record of
 * its fixed size. The parent sends a command and waits for its reply
 * (bots_send, bots_wait); the child answers each command in turn. */

typedef enum bot_command_kind {
    BOT_OPEN = 1, /* open count bots against port (the first PLAYERS players); join them too if join */
    BOT_JOIN,     /* service the open bots until all are playing (5 s at most); timed */
    BOT_PLAY,     /* play until start_ns, then measure until end_ns (garbage: spray port too) */
    BOT_CLOSE,    /* close the bots */
    BOT_QUIT,     /* close them and exit */
} bot_command_kind;

typedef struct bot_command {
    uint32_t kind; /* bot_command_kind */
    uint32_t count;
    uint16_t port;
    bool secure, join, garbage;
    uint64_t start_ns, end_ns;             /* BOT_PLAY's window, CLOCK_MONOTONIC */
    char server_key[CRADLE_KEYS_HEX_SIZE]; /* BOT_OPEN, secure: the server's public key */
    char dir[64];                          /* BOT_OPEN: where each bot makes its library copy's directory */
    char issuer_path[96];                  /* BOT_OPEN: the issuer's key file the bots mint tokens with */
} bot_command;

/* A latency's percentiles, in microseconds. */
typedef struct percentiles {
    uint32_t p50, p99, max;
    uint64_t count; /* samples; 0: no figure */
} percentiles;

typedef struct bot_reply {
    uint32_t kind; /* the command's */
    bool ok;       /* BOT_OPEN, BOT_JOIN: every bot is playing (the child said why not on stderr) */
    uint64_t join_ns;
    /* BOT_PLAY: */
    uint32_t ready;           /* bots playing when the window began */
    uint32_t stalled;         /* bots that lost a step for good (steps_early) */
    uint64_t wall_ns, cpu_ns; /* the window, and the bots' process CPU time in it */
    uint64_t sprayed;         /* garbage datagrams sent */
    uint64_t checked, mismatches, ended;
    long rss_kib;             /* the bots' process's, at the window's end */
    uint64_t sample_bytes;    /* of it, the latency samples */
    percentiles arrived, read_at, handled;
} bot_reply;

/* ---- the server under test (the parent) ---- */

typedef struct server {
    cradle_server_options options;
    cradle_server_net *net;
    cradle_server_host *host;
    _Atomic int stop;
    pthread_t game_thread;
} server;

static atomic_bool stamping; /* the bots have joined: their latency counts */

/* The game thread, driven here as cradle_server_host_run drives it (start,
 * then turn and wait), so that each step is stamped with the moment its
 * turn began, before the turn can send it: before every turn the steps it
 * may run (a paced turn runs at most the clock's CRADLE_CLOCK_DEFAULT_MAX_STEPS
 * and drops the rest) are stamped with its start, and a step a turn did
 * not run is stamped again by the next. The delivery measured from here
 * includes the turn's own work (snapshot, log, step), as a player's does. */
static void *game_main(void *arg) {
    thread_kind = KIND_GAME;
    server *s = arg;
    cradle_server_host *host = s->host;
    cradle_server_host_start(host, now_ns());
    uint64_t wait = 0;
    do {
        uint64_t now = now_ns();
        if (atomic_load_explicit(&stamping, memory_order_relaxed))
            for (uint64_t step = host->sim.next_step; step < host->sim.next_step + CRADLE_CLOCK_DEFAULT_MAX_STEPS; step++)
                atomic_store(&shared->sent_ns[step & (SENT_RING - 1u)], now);
        wait = cradle_server_host_turn(host, now);
    } while (cradle_server_host_wait(host, wait));
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
    pthread_join(s->game_thread, NULL);
    (void)cradle_server_host_finish(s->host);
    cradle_server_net_stop(s->net, 200);
    cradle_server_net_close(s->net);
    cradle_server_host_deinit(s->host);
    free(s->host);
    free(s->net);
    malloc_trim(0); /* the next phase's RSS is its own server's, not this one's freed heap too */
}

/* ---- the bots (the child) ----
 *
 * Each bot is a cradle_netclient (client/net/netclient.h), the session
 * cradle-client runs, with its own ENet host and socket; one thread, the
 * child's only one, plays all of them. */

typedef struct bot {
    cradle_netclient net;
    uint32_t index;
    char copy_dir[96];   /* its own directory for the library copy */
    uint64_t arrived_ns; /* its latest datagram: the kernel's receive time (CLOCK_MONOTONIC) */
    uint64_t read_ns;    /* ... and when ENet read it from the socket */
} bot;

static bot bots[BOTS_MAX];
static uint32_t bot_count;
/* Step latencies in microseconds, each from the server's queueing. */
typedef struct latency {
    uint32_t *us;
    uint64_t count;
} latency;
static latency arrived; /* in the bot's socket: the kernel's receive timestamp */
static latency read_at; /* read from the socket by the bots' thread */
static latency handled; /* run by the bot, after its receive */
static int64_t realtime_minus_mono; /* socket timestamps are CLOCK_REALTIME */
static int parent_fd = -1;          /* the child's end of the pipe */
static bot_command opened;          /* the last BOT_OPEN: its dir and issuer_path */

static void bots_close(void);

/* Ends the child when the parent is gone: the bots close (removing their
 * directories), and so does the parent's temporary directory, which it
 * cannot remove now. */
static _Noreturn void bots_orphaned(void) {
    fprintf(stderr, "bench_server (bots): the server's process went away; the bots stop\n");
    bots_close();
    if (opened.dir[0]) {
        (void)remove(opened.issuer_path);
        (void)rmdir(opened.dir);
    }
    _exit(1);
}

/* In the loops that run for seconds (joining, playing): whether the parent
 * is gone, its end of the socket closed, looked at every 100 ms at most. */
static void bots_check_parent(void) {
    static uint64_t next;
    uint64_t now = now_ns();
    if (now < next) return;
    next = now + 100000000ull;
    char byte;
    if (recv(parent_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0) bots_orphaned();
}

static void latency_add(latency *l, uint64_t sent, uint64_t at) {
    if (sent && at >= sent && l->count < LAT_SAMPLES) l->us[l->count++] = (uint32_t)((at - sent) / 1000u);
}

static percentiles latency_percentiles(latency *l) {
    qsort(l->us, l->count, sizeof *l->us, compare_u32);
    if (l->count == 0) return (percentiles){0};
    return (percentiles){.p50 = l->us[l->count / 2],
                         .p99 = l->us[l->count * 99 / 100],
                         .max = l->us[l->count - 1],
                         .count = l->count};
}

/* A player's input: -3..3, seeded by the bot. */
static void bot_input(void *context, uint64_t step, uint8_t *out, uint32_t input_bytes) {
    const bot *b = context;
    if (input_bytes > 0) out[0] = (uint8_t)((step + b->index) % 7u + 253u);
}

/* ENet calls this for every datagram a bot's socket gives it: the socket's
 * timestamp of the datagram just read is the moment it arrived. */
static int bots_intercept(ENetHost *h, ENetEvent *event) {
    /* the peer's data is the link; its datagrams' context the netclient, the bot's first member */
    const cradle_link_enet *link = h->peers[0].data;
    bot *b = link ? link->datagram_context : NULL;
    if (b) {
        /* the latest: a later ping in the same read only makes it later */
        b->read_ns = now_ns();
        b->arrived_ns = (uint64_t)((int64_t)cradle_raw_arrival_ns(h->socket) - realtime_minus_mono);
    }
    return cradle_link_enet_intercept(h, event); /* the raw PONGs are the client's */
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
        uint64_t sent = atomic_load(&shared->sent_ns[step & (SENT_RING - 1u)]);
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
        fds[i] = (struct pollfd){.fd = cradle_link_enet_socket(&bots[i].net.enet), .events = POLLIN};
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
    malloc_trim(0); /* the next phase's bots' RSS is theirs, not these ones' freed heap too */
}

/* Opens bots first..first+count-1 against c->port (the first PLAYERS as
 * players), secure or not as c says: each loads the game and starts
 * connecting. Returns false (said why) when one could not; bots_close() in
 * either case. */
static bool bots_open_range(const bot_command *c, uint32_t first, uint32_t count) {
    uint64_t now = now_ns();
    for (uint32_t i = first; i < first + count; i++) {
        bot *b = &bots[i];
        memset(b, 0, sizeof *b);
        b->index = i;
        bot_count = i + 1;
        snprintf(b->copy_dir, sizeof b->copy_dir, "%s/bot%u", c->dir, i);
        if (mkdir(b->copy_dir, 0700) != 0) {
            fprintf(stderr, "bench_server: cannot create %s\n", b->copy_dir);
            b->copy_dir[0] = '\0';
            return false;
        }
        cradle_netclient_config config = {.port = c->port,
                                          .game = BENCH_SERVER_COUNTER,
                                          .copy_dir = b->copy_dir,
                                          .spectator = i >= PLAYERS,
                                          .requested_slot = -1,
                                          .insecure = !c->secure,
                                          .server_key = c->server_key,
                                          .issuer_key = c->issuer_path,
                                          .client_id = i,
                                          .input = bot_input,
                                          .input_context = b};
        if (cradle_netclient_open(&b->net, &config, now) != 0) {
            fprintf(stderr, "bench_server: bot %u: %s\n", i, b->net.message);
            return false;
        }
        _Static_assert(offsetof(bot, net) == 0, "the link's datagram context (the netclient) is the bot");
        b->net.enet.host->intercept = bots_intercept;
    }
    return true;
}

/* Services the open bots until all are playing, at most 5 s: those from
 * `from` on (joining) every pass, the others (playing already) every 8th.
 * Returns true when they all are. */
static bool bots_join_from(uint32_t from) {
    uint64_t deadline = now_ns() + 5000000000ull;
    for (uint32_t pass = 0; bots_playing() < bot_count && now_ns() < deadline; pass++) {
        bots_check_parent();
        for (uint32_t i = pass % 8u == 0 ? 0 : from; i < bot_count; i++)
            (void)cradle_netclient_service(&bots[i].net, now_ns(), 0);
        (void)bots_receive(1);
    }
    for (uint32_t i = 0; i < bot_count; i++)
        if (bots[i].net.error) fprintf(stderr, "bench_server: bot %u: %s\n", i, bots[i].net.message);
    return bots_playing() == bot_count;
}

/* Opens and joins c->count bots, JOIN_BATCH at a time: a steady state is
 * measured, not a thousand clients' handshakes served by one thread at once
 * (whose connections the server drops when they stay silent too long). */
#define JOIN_BATCH 64u
static bool bots_open_join(const bot_command *c) {
    for (uint32_t first = 0; first < c->count; first += JOIN_BATCH) {
        uint32_t n = c->count - first < JOIN_BATCH ? c->count - first : JOIN_BATCH;
        if (!bots_open_range(c, first, n) || !bots_join_from(first)) return false;
    }
    return true;
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
        bots_check_parent();
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

/* BOT_PLAY: plays until c->start_ns (everyone settles), then measures a
 * window until c->end_ns, and fills r with it: the bots' hash checks,
 * desyncs and sessions ended early (each said on stderr), their CPU and RSS,
 * and the latencies. */
static void bots_play(const bot_command *c, bot_reply *r) {
    while (now_ns() < c->start_ns) {
        bots_check_parent();
        bots_turn();
    }
    r->ready = bots_playing();
    arrived.count = read_at.count = handled.count = 0;
    uint64_t t0 = now_ns(), cpu0 = process_cpu_ns();
    r->sprayed = play_window(c->port, c->end_ns, c->garbage);
    r->cpu_ns = process_cpu_ns() - cpu0;
    r->wall_ns = now_ns() - t0;
    r->rss_kib = rss_kib();
    r->sample_bytes = (arrived.count + read_at.count + handled.count) * sizeof(uint32_t);
    for (uint32_t i = 0; i < bot_count; i++) {
        r->checked += bots[i].net.hashes_checked;
        r->mismatches += bots[i].net.desync; /* a bot reports its first mismatch */
        r->ended += bots[i].net.error != 0;
        r->stalled += bots[i].net.steps_early > 0;
        if (bots[i].net.error) fprintf(stderr, "bench_server: bot %u: %s\n", i, bots[i].net.message);
    }
    r->arrived = latency_percentiles(&arrived);
    r->read_at = latency_percentiles(&read_at);
    r->handled = latency_percentiles(&handled);
}

/* The child's whole life: answers the parent's commands on fd until
 * BOT_QUIT (returns 0) or a record that is not a command (returns 1, said
 * why). When the parent is gone it exits (bots_orphaned). */
static int bots_main(int fd) {
    thread_kind = KIND_MAIN;
    parent_fd = fd;
    if (sodium_init() < 0 || cradle_enet_pool_initialize() != 0) {
        fprintf(stderr, "bench_server (bots): cannot initialise libsodium or ENet\n");
        return 1;
    }
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
    int status = 1;
    for (;;) {
        bot_command c;
        /* No deadline here: the parent may take its time between commands
         * (an idle window, a 2-hour session to advance), and when it is gone
         * its end of the socket closes and this read returns 0. */
        ssize_t n = recv(fd, &c, sizeof c, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) bots_orphaned();
        if (n != (ssize_t)sizeof c) {
            fprintf(stderr, "bench_server (bots): a command of %zd bytes (%s), not %zu\n", n,
                    n < 0 ? strerror(errno) : "short", sizeof c);
            break;
        }
        bot_reply r = {.kind = c.kind};
        switch ((bot_command_kind)c.kind) {
        case BOT_OPEN:
            opened = c;
            r.ok = c.count <= BOTS_MAX && (c.join ? bots_open_join(&c) : bots_open_range(&c, 0, c.count));
            break;
        case BOT_JOIN: {
            uint64_t t0 = now_ns();
            r.ok = bots_join_from(0);
            r.join_ns = now_ns() - t0;
            break;
        }
        case BOT_PLAY:
            bots_play(&c, &r);
            r.ok = true;
            break;
        case BOT_CLOSE:
        case BOT_QUIT:
            bots_close();
            r.ok = true;
            break;
        }
        if (send(fd, &r, sizeof r, MSG_NOSIGNAL) != (ssize_t)sizeof r) {
            if (errno == EPIPE || errno == ECONNRESET) bots_orphaned();
            fprintf(stderr, "bench_server (bots): cannot reply: %s\n", strerror(errno));
            break;
        }
        if (c.kind == BOT_QUIT) {
            status = 0;
            break;
        }
    }
    bots_close();
    for (size_t i = 0; i < 3; i++) free(all[i]->us);
    enet_deinitialize();
    return status;
}

/* ---- the parent's side of the pipe ---- */

static pid_t bots_pid = -1; /* the child; -1 once reaped */
static int bots_fd = -1;
static char bench_dir[64]; /* the bots' library copies and the issuer key file */
static char issuer_path[96];

/* The temporary directory, the issuer key in it and the bots' directories:
 * these hold their library copies when the bots' process died before it
 * closed them (it removes them itself when it does). */
static void bench_dir_remove(void) {
    if (!bench_dir[0]) return;
    cradle_os_remove_tree(bench_dir);
    if (access(bench_dir, F_OK) == 0) fprintf(stderr, "bench_server: %s is left behind\n", bench_dir);
}

/* Describes a child's wait status into out. */
static const char *exit_status(int status, char *out, size_t size) {
    if (WIFEXITED(status))
        snprintf(out, size, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(out, size, "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(out, size, "ended with wait status %d", status);
    return out;
}

/* The bots' process failed the run (why: what the parent saw): reaps it
 * (killing it first when it is still there, hung), says what became of it
 * and exits 1. The server's threads die with the process. */
static _Noreturn void bots_lost(const char *why) {
    fflush(stdout);
    int status = 0;
    char how[96] = "was not there";
    if (bots_pid > 0) {
        /* A child that is exiting has closed its socket a moment before it
         * can be reaped: it gets 2 s to be done. */
        pid_t w = 0;
        for (uint64_t deadline = now_ns() + 2000000000ull;
             (w = waitpid(bots_pid, &status, WNOHANG)) == 0 && now_ns() < deadline;) {
            struct timespec pause = {.tv_nsec = 10000000};
            nanosleep(&pause, NULL);
        }
        if (w == 0) {
            (void)kill(bots_pid, SIGKILL); /* our own child, by its pid */
            (void)waitpid(bots_pid, &status, 0);
            snprintf(how, sizeof how, "was still running: killed");
        } else if (w == bots_pid) {
            exit_status(status, how, sizeof how);
        }
        bots_pid = -1;
    }
    fprintf(stderr, "bench_server: the bots' process failed (%s; it %s)\n", why, how);
    bench_dir_remove();
    _exit(1);
}

static void bots_send(const bot_command *c) {
    if (send(bots_fd, c, sizeof *c, MSG_NOSIGNAL) != (ssize_t)sizeof *c) bots_lost("cannot send it a command");
}

/* Waits for the reply to the command of kind `kind`, until CLOCK_MONOTONIC
 * reads deadline. Any failure (EOF: the child is gone; the deadline; a
 * record that is not the reply) ends the run in bots_lost. */
static void bots_wait(uint32_t kind, bot_reply *r, uint64_t deadline) {
    for (;;) {
        uint64_t now = now_ns();
        if (now >= deadline) bots_lost("no reply in time");
        struct pollfd p = {.fd = bots_fd, .events = POLLIN};
        uint64_t left_ms = (deadline - now + 999999u) / 1000000u;
        int rc = poll(&p, 1, left_ms > 60000u ? 60000 : (int)left_ms);
        if (rc < 0 && errno != EINTR) bots_lost("cannot poll its socket");
        if (rc <= 0) continue;
        ssize_t n = recv(bots_fd, r, sizeof *r, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n == 0) bots_lost("it closed the socket");
        if (n != (ssize_t)sizeof *r || r->kind != kind) bots_lost("a reply that is not the one awaited");
        return;
    }
}

/* A command and its reply, which must come within timeout_ns. */
static void bots_call(const bot_command *c, bot_reply *r, uint64_t timeout_ns) {
    bots_send(c);
    bots_wait(c->kind, r, now_ns() + timeout_ns);
}

/* Has the child open `count` bots against port, secure or not, and (join)
 * join them JOIN_BATCH at a time. Returns true when all are playing. */
static bool bots_open(uint16_t port, uint32_t count, bool secure, bool join) {
    bot_command c = {.kind = BOT_OPEN, .count = count, .port = port, .secure = secure, .join = join};
    cradle_keys_to_hex(c.server_key, server_keys.kx_public);
    snprintf(c.dir, sizeof c.dir, "%s", bench_dir);
    snprintf(c.issuer_path, sizeof c.issuer_path, "%s", issuer_path);
    bot_reply r;
    /* each batch: its bots' opening (each copies and loads the game) and up to 5 s of joining */
    bots_call(&c, &r, 30000000000ull + (uint64_t)(count / JOIN_BATCH + 1u) * 15000000000ull);
    return r.ok;
}

static void bots_close_all(void) {
    bot_reply r;
    bots_call(&(bot_command){.kind = BOT_CLOSE}, &r, 60000000000ull);
}

/* Has the bots play until start_ns (settling), then measure until end_ns
 * (garbage: spraying port). Returns at once; bots_play_wait takes the reply. */
static void bots_play_start(uint16_t port, uint64_t start_ns, uint64_t end_ns, bool garbage) {
    bots_send(&(bot_command){
        .kind = BOT_PLAY, .port = port, .garbage = garbage, .start_ns = start_ns, .end_ns = end_ns});
}

/* Sleeps until end_ns, the end of a BOT_PLAY window, watching the child:
 * one that dies meanwhile ends the run at once, not after the window (no
 * reply comes before end_ns: the child plays until then on the same clock). */
static void bots_watch_until(uint64_t end_ns) {
    for (uint64_t now = now_ns(); now < end_ns; now = now_ns()) {
        struct pollfd p = {.fd = bots_fd, .events = POLLIN};
        uint64_t left_ms = (end_ns - now) / 1000000u;
        if (poll(&p, 1, left_ms > 60000u ? 60000 : (int)left_ms) > 0) {
            char byte;
            if (recv(bots_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0) bots_lost("it closed the socket");
            break; /* a reply, at the very end */
        }
        if (left_ms == 0) break;
    }
    sleep_until(end_ns);
}

static void bots_play_wait(bot_reply *r, uint64_t end_ns) { bots_wait(BOT_PLAY, r, end_ns + 60000000000ull); }

/* ---- the measurements (the parent) ---- */

/* The server's counters a measured window reports the change of. */
typedef struct phase_counters {
    uint64_t t, game_cpu, net_cpu, step;
    uint64_t bytes_out, packets_out, bytes_in, packets_in;
    uint64_t game_allocs, net_allocs;
} phase_counters;

/* What one phase measured, for print_phase. */
typedef struct phase_result {
    bool secure, garbage;
    phase_counters d;  /* the change over the window */
    double idle_share; /* server CPU before the bots joined; < 0: not measured */
    long rss_server;   /* KiB: the server's process, at the window's end */
    bot_reply bots;    /* what the bots' process measured */
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

static void percentiles_print(const percentiles *p, const char *to) {
    if (p->count == 0) {
        printf("    %s: no samples\n", to);
        return;
    }
    printf("    %s: p50 %u us, p99 %u us, max %u us (%" PRIu64 " samples)\n", to, p->p50, p->p99, p->max,
           p->count);
}

/* The bots' process's CPU line. */
static void print_bots_cpu(const bot_reply *b) {
    printf("  bots' CPU: %.2f%% of one core (their own process, one thread for all %u; in no server figure)\n",
           b->wall_ns ? 100.0 * (double)b->cpu_ns / (double)b->wall_ns : 0.0, clients);
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
    const bot_reply *b = &r->bots;
    uint64_t cpu = d->game_cpu + d->net_cpu;
    double secs = (double)d->t / 1e9;
    printf("bench_server: counter game, %s%s, %u bots (%u players, %u spectators), %u ready, %.1f s, %" PRIu64
           " steps (%.1f steps/s)\n",
           r->secure ? "SECURE (sealed packets, tokens)" : "plaintext", r->garbage ? " + garbage spray" : "", clients,
           PLAYERS, clients - PLAYERS, b->ready, secs, d->step, (double)d->step / secs);
    if (r->garbage)
        printf("  garbage absorbed: %.0f random UDP datagrams/s (1..256 B) sent to the server port during play\n",
               (double)b->sprayed / secs);
    printf("  server CPU: %.2f%% of one core (game thread %.2f%%, network thread %.2f%%)\n",
           100.0 * (double)cpu / (double)d->t, 100.0 * (double)d->game_cpu / (double)d->t,
           100.0 * (double)d->net_cpu / (double)d->t);
    if (r->idle_share >= 0)
        printf("  server CPU with no client, stepping at 60/s (5 s before the bots join): %.2f%% of one core\n",
               100.0 * r->idle_share);
    print_bots_cpu(b);
    printf("  step delivery latency, from the start of the game thread's turn that runs a step to\n");
    percentiles_print(&b->arrived, "the bot's socket holding it (kernel receive timestamp)");
    char what[128];
    snprintf(what, sizeof what, "the bots' thread reading it (one thread reads for all %u)", clients);
    percentiles_print(&b->read_at, what);
    snprintf(what, sizeof what, "the bot running it (the bots read their sockets in turn, one thread for all %u)",
             clients);
    percentiles_print(&b->handled, what);
    printf("  wire per client, incl. 28 B IPv4+UDP per datagram: down %.0f B/s (%.1f datagrams/s), up %.0f "
           "B/s\n",
           (double)(d->bytes_out + 28u * d->packets_out) / secs / clients, (double)d->packets_out / secs / clients,
           (double)(d->bytes_in + 28u * d->packets_in) / secs / clients);
    printf("  RSS: %ld KiB the server's process with %u bots connected; the bots' process %ld KiB (%" PRIu64
           " KiB of it latency samples)\n",
           r->rss_server, clients, b->rss_kib, b->sample_bytes / 1024u);
    printf("  heap allocations per step: game thread %.3f, network thread %.3f (ENet's memory comes from "
           "the thread's pool)\n",
           d->step ? (double)d->game_allocs / (double)d->step : 0.0,
           d->step ? (double)d->net_allocs / (double)d->step : 0.0);
    print_pool(s, &r->pool0);
    printf("  hashes checked by the bots: %" PRIu64 ", mismatches %" PRIu64 " (bots that desynced), sessions "
           "ended early %" PRIu64 "\n", b->checked, b->mismatches, b->ended);
}

/* One Cradle run: plain or secure, with or without a garbage spray. Prints
 * its figures and gives its server CPU share and server RSS (KiB); returns
 * the hash mismatches (or UINT64_MAX on failure). */
static uint64_t run_phase(double seconds, bool secure, bool garbage, double *cpu_share, long *rss_server) {
    bench_secure = secure;
    static server s;
    if (server_open(&s, CRADLE_SERVER_PACED) != 0) {
        fprintf(stderr, "bench_server: cannot start the server\n");
        return UINT64_MAX;
    }
    phase_result r = {.secure = secure, .garbage = garbage, .idle_share = -1};
    server_start_loop(&s);
    if (!secure && !garbage) r.idle_share = idle_cpu_share(&s);

    if (!bots_open(s.options.port, clients, secure, true)) {
        fprintf(stderr, "bench_server: bots could not join\n");
        bots_close_all();
        server_close(&s);
        return UINT64_MAX;
    }
    atomic_store(&stamping, true);
    /* Let everyone settle for a second, then measure a clean window: both
     * processes take it between the same two instants. */
    uint64_t start = now_ns() + 1000000000ull, end = start + (uint64_t)(seconds * 1e9);
    bots_play_start(s.options.port, start, end, garbage);
    phase_counters before, after;
    sleep_until(start);
    counters_read(&s, &before);
    cradle_enet_pool_read_stats(&s.net->pool, &r.pool0);
    bots_watch_until(end);
    counters_read(&s, &after);
    r.rss_server = rss_kib();
    bots_play_wait(&r.bots, end);
    r.d = counters_since(&after, &before);
    *cpu_share = (double)(r.d.game_cpu + r.d.net_cpu) / (double)r.d.t;
    *rss_server = r.rss_server;
    print_phase(&s, &r);
    atomic_store(&stamping, false);
    bots_close_all();
    server_close(&s);
    return r.bots.ready == clients && r.bots.ended == 0 ? r.bots.mismatches : UINT64_MAX;
}

/* ---- the raw ENet reference (the parent) ----
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
                atomic_store(&shared->sent_ns[r->next_step & (SENT_RING - 1u)], now_ns());
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
    if (bots_open(r.port, clients, false, true)) {
        uint64_t start = now_ns() + 1000000000ull, end = start + (uint64_t)(seconds * 1e9);
        bots_play_start(r.port, start, end, false);
        sleep_until(start);
        uint64_t t0 = now_ns(), cpu0 = thread_cpu_ns(r.thread);
        uint32_t out0 = r.host->totalSentData, outp0 = r.host->totalSentPackets;
        uint32_t in0 = r.host->totalReceivedData, inp0 = r.host->totalReceivedPackets;
        bots_watch_until(end);
        uint64_t wall = now_ns() - t0, cpu = thread_cpu_ns(r.thread) - cpu0;
        uint32_t out = r.host->totalSentData - out0, outp = r.host->totalSentPackets - outp0;
        uint32_t in = r.host->totalReceivedData - in0, inp = r.host->totalReceivedPackets - inp0;
        bot_reply b;
        bots_play_wait(&b, end);
        double secs = (double)wall / 1e9;
        share = (double)cpu / (double)wall;
        printf("bench_server: raw ENet reference (one thread, enet_host_service until each tick, one STEPS "
               "datagram per peer per step; no game, log, acks or redundancy), %u bots, %u ready, %.1f s\n",
               clients, b.ready, secs);
        printf("  CPU: %.2f%% of one core\n", 100.0 * share);
        print_bots_cpu(&b);
        printf("  step delivery latency, from the tick's send to\n");
        percentiles_print(&b.arrived, "the bot's socket holding it (kernel receive timestamp)");
        printf("  wire per client, incl. 28 B IPv4+UDP per datagram: down %.0f B/s (%.1f datagrams/s), up %.0f "
               "B/s\n",
               ((double)out + 28.0 * outp) / secs / clients, (double)outp / secs / clients,
               ((double)in + 28.0 * inp) / secs / clients);
        /* The reference never resends: a bot that lost a step waits for it
         * from then on, and its samples stop. */
        if (b.stalled) printf("  %u bots lost a step (never resent here): their samples stop there\n", b.stalled);
        if (b.ready != clients) share = -1;
    } else {
        fprintf(stderr, "bench_server: bots could not join the raw ENet reference\n");
    }
    bots_close_all();
    atomic_store(&r.stop, true);
    pthread_join(r.thread, NULL);
    enet_host_destroy(r.host);
    cradle_reload_close(&lib);
    malloc_trim(0);
    return share;
}

/* Has the bots' process quit and reaps it (10 s at most, then kills it).
 * Returns true when it exited with status 0; says why not. */
static bool bots_quit(void) {
    bot_reply r;
    bots_call(&(bot_command){.kind = BOT_QUIT}, &r, 60000000000ull);
    close(bots_fd);
    bots_fd = -1;
    int status = 0;
    pid_t w = 0;
    for (uint64_t deadline = now_ns() + 10000000000ull; (w = waitpid(bots_pid, &status, WNOHANG)) == 0;) {
        if (now_ns() >= deadline) bots_lost("it did not exit after quitting");
        struct timespec pause = {.tv_nsec = 10000000};
        nanosleep(&pause, NULL);
    }
    bots_pid = -1;
    if (w < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char how[96];
        fprintf(stderr, "bench_server: the bots' process %s\n",
                w < 0 ? "could not be reaped" : exit_status(status, how, sizeof how));
        return false;
    }
    return true;
}

int main(int argc, char **argv) {
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
    /* The bots' process, forked before any thread or ENet host exists (a
     * fork copies only the calling thread), with the ring both use. */
    shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int pair[2];
    if (shared == MAP_FAILED || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
        fprintf(stderr, "bench_server: cannot set up the bots' process: %s\n", strerror(errno));
        return 1;
    }
    fflush(NULL); /* nothing buffered is copied into the child to be written twice */
    bots_pid = fork();
    if (bots_pid < 0) {
        fprintf(stderr, "bench_server: cannot fork the bots' process: %s\n", strerror(errno));
        return 1;
    }
    if (bots_pid == 0) {
        close(pair[0]);
        exit(bots_main(pair[1]));
    }
    close(pair[1]); /* so that the child's end closing is our EOF */
    bots_fd = pair[0];

    thread_kind = KIND_MAIN;
    if (cradle_enet_pool_initialize() != 0 || cradle_keys_generate(&server_keys) != 0 ||
        cradle_keys_generate(&issuer_keys) != 0)
        bots_lost("the server's process could not initialise ENet or make its keys");
    /* The bots' library copies and the issuer key they mint their tokens with. */
    const char *tmp = getenv("TMPDIR");
    snprintf(bench_dir, sizeof bench_dir, "%s/cradle-bench-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    if (!mkdtemp(bench_dir)) {
        fprintf(stderr, "bench_server: cannot create %s: %s\n", bench_dir, strerror(errno));
        bench_dir[0] = '\0';
        bots_lost("no directory for the bots");
    }
    snprintf(issuer_path, sizeof issuer_path, "%s/issuer.key", bench_dir);
    char why[256];
    if (cradle_keys_save(&issuer_keys, issuer_path, why, sizeof why) != 0) {
        fprintf(stderr, "bench_server: %s\n", why);
        bots_lost("no issuer key for the bots");
    }
    double plain_cpu = 0, secure_cpu = 0, spray_cpu = 0;
    long plain_rss = 0, secure_rss = 0, spray_rss = 0;
    uint64_t mismatches = run_phase(seconds, false, false, &plain_cpu, &plain_rss);
    double raw_cpu = run_raw_reference(seconds);
    if (raw_cpu > 0)
        printf("  Cradle's server against raw ENet in this run: %.2f%% vs %.2f%% of a core (%.2fx)\n",
               100.0 * plain_cpu, 100.0 * raw_cpu, plain_cpu / raw_cpu);
    else
        mismatches = UINT64_MAX;
    uint64_t m2 = run_phase(seconds, true, false, &secure_cpu, &secure_rss);
    if (curve) {
        if (m2 != 0) mismatches = m2;
        double client_steps = 60.0 * clients; /* a second's */
        printf("curve: %u clients: server CPU plaintext %.2f%%, raw ENet %.2f%% (%.2fx), secure %.2f%% (%.2fx); "
               "%.2f / %.2f / %.2f us of CPU per client-step; server RSS %.1f / %.1f MiB\n",
               clients, 100.0 * plain_cpu, 100.0 * raw_cpu, raw_cpu > 0 ? plain_cpu / raw_cpu : 0.0,
               100.0 * secure_cpu, raw_cpu > 0 ? secure_cpu / raw_cpu : 0.0, 1e6 * plain_cpu / client_steps,
               1e6 * raw_cpu / client_steps, 1e6 * secure_cpu / client_steps, (double)plain_rss / 1024.0,
               (double)secure_rss / 1024.0);
    } else {
        uint64_t m3 = run_phase(seconds, true, true, &spray_cpu, &spray_rss);
        if (m2 != 0 || m3 != 0) mismatches = m2 ? m2 : m3;
        printf("  encryption cost: server CPU %.2f%% plaintext -> %.2f%% secure (%+.1f%%); %.2f%% while absorbing "
               "garbage\n",
               100.0 * plain_cpu, 100.0 * secure_cpu, plain_cpu > 0 ? 100.0 * (secure_cpu / plain_cpu - 1.0) : 0.0,
               100.0 * spray_cpu);
        bench_secure = false;

        /* Join after 2 hours of steps: 432000 steps in commanded mode, then one bot. */
        static server j;
        if (server_open(&j, CRADLE_SERVER_COMMANDED) != 0) {
            fprintf(stderr, "bench_server: cannot start the server\n");
            mismatches = UINT64_MAX;
        } else {
            uint64_t a0 = now_ns();
            cradle_server_host_advance(j.host, 2u * 3600u * 60u, a0);
            uint64_t advance_ns = now_ns() - a0;
            server_start_loop(&j);
            /* From connecting (the bot has loaded its game) to a state to step from. */
            bool joined = false;
            bot_reply r = {0};
            if (bots_open(j.options.port, 1, false, false)) {
                bots_call(&(bot_command){.kind = BOT_JOIN}, &r, 60000000000ull);
                joined = r.ok;
            }
            printf("  join after %u steps (2 h at 60/s; ran in %.2f s): %.2f ms from connect to a ready state (%s)\n",
                   2u * 3600u * 60u, (double)advance_ns / 1e9, (double)r.join_ns / 1e6, joined ? "ok" : "FAILED");
            bots_close_all();
            server_close(&j);
        }
    }
    fflush(stdout);
    bool bots_ok = bots_quit();
    bench_dir_remove();
    enet_deinitialize();
    return mismatches == 0 && bots_ok ? 0 : 1;
}
