/* The in-process session harness (harness.h). */
#include "harness.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cradle/enet_pool.h"
#include "cradle/errors.h"
#include "cradle/os.h"
#include "cradle/ring.h"
#include "cradle/systime.h"

#define RELAY_CAPACITY 65536u /* packets in flight: a second of a 16-client session at any loss */

static int fail(harness *h, const char *format, ...) __attribute__((format(printf, 2, 3)));

static int fail(harness *h, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    vsnprintf(h->message, sizeof h->message, format, ap);
    va_end(ap);
    return -1;
}

static void *alloc_aligned_zeroed(size_t size) {
    size_t rounded = (size + CRADLE_RING_CACHE_LINE - 1) / CRADLE_RING_CACHE_LINE * CRADLE_RING_CACHE_LINE;
    void *p = aligned_alloc(CRADLE_RING_CACHE_LINE, rounded);
    if (p) memset(p, 0, rounded);
    return p;
}

/* A player's input: every byte from splitmix64 of the seed, the step and the
 * slot, so any run of the same seed sends the same inputs. */
static void harness_input(void *context, uint64_t step, uint8_t *out, uint32_t input_bytes) {
    const harness_client *c = context;
    uint64_t x = c->seed ^ (step * UINT64_C(0x9E3779B97F4A7C15)) ^ ((uint64_t)c->index << 56);
    for (uint32_t i = 0; i < input_bytes; i++) {
        x += UINT64_C(0x9E3779B97F4A7C15);
        uint64_t z = x;
        z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
        out[i] = (uint8_t)(z ^ (z >> 31));
    }
}

static int open_server(harness *h) {
    cradle_server_options *o = &h->options;
    cradle_server_options_defaults(o);
    snprintf(o->game, sizeof o->game, "%s", h->config.game);
    snprintf(o->bind, sizeof o->bind, "127.0.0.1");
    o->players = h->config.players;
    o->spectators = h->config.spectators;
    o->input_delay = h->config.input_delay ? h->config.input_delay : 2;
    o->hash_interval = h->config.hash_interval ? h->config.hash_interval : 30;
    o->mode = CRADLE_SERVER_COMMANDED;
    o->insecure = true;
    o->seed = h->config.seed;
    o->timeout_ms = h->config.timeout_ms;
    h->host = alloc_aligned_zeroed(sizeof *h->host);
    h->net = alloc_aligned_zeroed(sizeof *h->net);
    if (!h->host || !h->net) return fail(h, "out of memory for the server");
    if (cradle_server_host_init(h->host, o, h->net, &h->stop) != 0)
        return fail(h, "the server's host did not start (its reason is on stderr)");
    h->host_ready = true;
    for (int attempt = 0; attempt < 20; attempt++) {
        o->port = (uint16_t)(20000u + (uint32_t)((cradle_mono_ns() / 1000u + (uint64_t)attempt * 7919u) % 40000u));
        cradle_server_net_config nc = {.bind_address = "127.0.0.1",
                                       .port = o->port,
                                       .timeout_ms = o->timeout_ms,
                                       .max_peers = h->host->peer_count,
                                       .build_id = h->host->sim.contract->build_id,
                                       .game = h->host->sim.contract->name,
                                       .connect_rate = 100000,
                                       .connect_burst = 100000,
                                       .snapshot_size = h->host->snapshot_size};
        if (cradle_server_net_open(h->net, &nc) != 0) continue;
        if (cradle_server_net_start(h->net) != 0) return fail(h, "the network thread did not start");
        h->net_started = true;
        return 0;
    }
    return fail(h, "no free UDP port on 127.0.0.1 in 20 tries");
}

static int open_relay(harness *h) {
    struct sockaddr_in listen = {.sin_family = AF_INET, .sin_port = 0};
    struct sockaddr_in server = {.sin_family = AF_INET, .sin_port = htons(h->options.port)};
    listen.sin_addr.s_addr = server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    char why[160];
    if (cradle_proxy_relay_open(&h->relay, &listen, &server, &h->config.link, RELAY_CAPACITY, why, sizeof why) != 0)
        return fail(h, "the relay: %s", why);
    h->relay_open = true;
    return 0;
}

int harness_open(harness *h, const harness_config *config) {
    memset(h, 0, sizeof *h);
    h->config = *config;
    if (!h->config.lead) h->config.lead = 30;
    if (!h->config.timeout_ms) h->config.timeout_ms = 20000;
    h->client_count = config->players + config->spectators;
    if (h->client_count == 0 || h->client_count > HARNESS_CLIENTS_MAX)
        return fail(h, "1..%u clients, not %u", HARNESS_CLIENTS_MAX, h->client_count);
    static bool enet_ready;
    if (!enet_ready && cradle_enet_pool_initialize() != 0) return fail(h, "ENet did not initialise");
    enet_ready = true;
    snprintf(h->dir, sizeof h->dir, "%s/cradle-harness-XXXXXX", cradle_os_tmpdir());
    if (!mkdtemp(h->dir)) {
        h->dir[0] = '\0';
        return fail(h, "no temporary folder");
    }
    if (open_server(h) != 0) return -1;
    if (config->impaired && open_relay(h) != 0) return -1;
    uint16_t port = h->relay_open ? ntohs(h->relay.listen_addr.sin_port) : h->options.port;
    h->clients = calloc(h->client_count, sizeof *h->clients);
    if (!h->clients) return fail(h, "out of memory for the clients");
    uint64_t now = cradle_mono_ns();
    for (uint32_t i = 0; i < h->client_count; i++) {
        harness_client *c = &h->clients[i];
        c->index = i;
        c->seed = config->seed;
        snprintf(c->copy_dir, sizeof c->copy_dir, "%s/client%u", h->dir, (unsigned)i);
        if (mkdir(c->copy_dir, 0700) != 0) return fail(h, "cannot make %s", c->copy_dir);
        cradle_netclient_config nc = {.port = port,
                                      .game = config->game,
                                      .copy_dir = c->copy_dir,
                                      .spectator = i >= config->players,
                                      .requested_slot = -1,
                                      .insecure = true,
                                      .connect_timeout_ms = h->config.timeout_ms,
                                      .silence_timeout_ms = h->config.timeout_ms,
                                      .input = harness_input,
                                      .input_context = c};
        if (cradle_netclient_open(&c->net, &nc, now) != 0)
            return fail(h, "client %u: %s", (unsigned)i, c->net.message);
    }
    return 0;
}

uint64_t harness_server_steps(const harness *h) { return h->host ? h->host->sim.next_step : 0; }

/* One turn of everything: the relay, the host, each client. Sets *slowest
 * to the next step of the slowest client that plays (UINT64_MAX: none yet)
 * and *all to whether every client plays. Returns 0, or -1 on a client's
 * failure (h->message). */
static int turn(harness *h, uint64_t now, uint64_t *slowest, bool *all) {
    if (h->relay_open) (void)cradle_proxy_relay_turn(&h->relay, 0);
    cradle_server_host_poll(h->host, now);
    bool all_playing = true;
    uint64_t low = UINT64_MAX;
    for (uint32_t i = 0; i < h->client_count; i++) {
        harness_client *c = &h->clients[i];
        int rc = cradle_netclient_service(&c->net, now, 0);
        while (rc == 0 && cradle_netclient_step(&c->net, now) == 1) {
        }
        if (c->net.error)
            return fail(h, "client %u (%s): %s", (unsigned)i, c->net.config.spectator ? "spectator" : "player",
                        c->net.message);
        if (c->net.desync)
            return fail(h, "client %u desynced at step %" PRIu64 " (%s)", (unsigned)i, c->net.sim.next_step,
                        c->net.message);
        if (!cradle_netclient_playing(&c->net)) all_playing = false;
        else if (c->net.sim.next_step < low) low = c->net.sim.next_step;
    }
    *slowest = low;
    *all = all_playing;
    return 0;
}

int harness_run(harness *h, uint64_t steps, uint64_t deadline_ms) {
    uint64_t deadline = cradle_mono_ns() + deadline_ms * 1000000u;
    for (;;) {
        uint64_t now = cradle_mono_ns();
        uint64_t slowest = 0;
        bool all = false;
        if (turn(h, now, &slowest, &all) != 0) return -1;
        uint64_t server = harness_server_steps(h);
        if (all && slowest >= steps && server >= steps) return 0;
        if (now > deadline) {
            if (!all) {
                uint32_t playing = 0;
                for (uint32_t i = 0; i < h->client_count; i++) playing += cradle_netclient_playing(&h->clients[i].net);
                return fail(h, "after %" PRIu64 " ms, %u of %u clients were playing", deadline_ms, (unsigned)playing,
                            (unsigned)h->client_count);
            }
            return fail(h, "after %" PRIu64 " ms, the server was at step %" PRIu64 " and the slowest client at %" PRIu64
                           " of %" PRIu64, deadline_ms, server, slowest, steps);
        }
        /* The server steps while the slowest client that plays is within
         * the lead (one still joining gets the state block when it is in). */
        if (slowest != UINT64_MAX && server < steps && server < slowest + h->config.lead) {
            uint64_t count = slowest + h->config.lead - server;
            if (count > steps - server) count = steps - server;
            cradle_server_host_advance(h->host, count, now);
            continue;
        }
        /* Nothing to do until a datagram arrives: wait for one on the
         * first client's socket (1 ms at most: the others, the relay's
         * releases and the network thread's output go on meanwhile). */
        (void)cradle_netclient_service(&h->clients[0].net, cradle_mono_ns(), 1);
    }
}

/* The network thread's stop, on a thread of its own: it holds each BYE
 * until its peer confirmed the last steps, which the clients (serviced on
 * the harness's thread meanwhile) do. */
static void *stop_network(void *arg) {
    harness *h = arg;
    cradle_server_net_stop(h->net, 1000);
    atomic_store(&h->net_stopped, true);
    return NULL;
}

uint32_t harness_close(harness *h) {
    uint32_t normal = 0;
    /* A session that ends as cradle-server's does: BYE to every client. */
    if (h->host_ready) (void)cradle_server_host_finish(h->host);
    pthread_t stopper;
    bool stopping = h->net_started && pthread_create(&stopper, NULL, stop_network, h) == 0;
    if (h->net_started && !stopping) cradle_server_net_stop(h->net, 0);
    uint64_t deadline = cradle_mono_ns() + 10000000000u;
    bool busy = stopping;
    while (busy && cradle_mono_ns() < deadline) {
        if (h->relay_open) (void)cradle_proxy_relay_turn(&h->relay, 0);
        busy = !atomic_load(&h->net_stopped);
        for (uint32_t i = 0; h->clients && i < h->client_count; i++) {
            harness_client *c = &h->clients[i];
            if (c->closed) continue;
            (void)cradle_netclient_service(&c->net, cradle_mono_ns(), 1);
            /* with its BYE read, a client disconnects at once, so the
             * network thread has one peer fewer to wait for */
            if (c->net.phase == CRADLE_NETCLIENT_CLOSED) {
                normal += cradle_netclient_ended_normally(&c->net);
                cradle_netclient_close(&c->net);
                c->closed = true;
            } else {
                busy = true;
            }
        }
    }
    if (stopping) pthread_join(stopper, NULL);
    for (uint32_t i = 0; h->clients && i < h->client_count; i++)
        if (!h->clients[i].closed) cradle_netclient_close(&h->clients[i].net);
    free(h->clients);
    h->clients = NULL;
    if (h->relay_open) cradle_proxy_relay_close(&h->relay);
    h->relay_open = false;
    if (h->net) cradle_server_net_close(h->net);
    if (h->host) cradle_server_host_deinit(h->host);
    free(h->host);
    free(h->net);
    h->host = NULL;
    h->net = NULL;
    if (h->dir[0]) cradle_os_remove_tree(h->dir);
    h->dir[0] = '\0';
    return normal;
}
