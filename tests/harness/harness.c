/* The in-process session harness (harness.h). */
#include "harness.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cradle/enet_pool.h"
#include "host_internal.h"
#include "cradle/errors.h"
#include "cradle/os.h"
#include "cradle/ring.h"
#include "simnet.h"

#define SIMNET_CAPACITY 8192u /* packets in flight toward one socket: seconds of a session at any loss */
#define TICK_NS 1000000u      /* the test clock's step: every party has a turn each millisecond */
#define UNIX_EPOCH 1800000000u /* the wall clock's seconds at the test clock's 0 (tokens' lifetimes) */

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
 * slot, so any run of the same seed sends the same inputs (and a game can
 * know them: tests/games/entangled.c's oracle). */
static void harness_input(void *context, uint64_t step, uint8_t *out, uint32_t input_bytes) {
    const harness_client *c = context;
    uint64_t x = c->seed ^ (step * UINT64_C(0x9E3779B97F4A7C15)) ^ ((uint64_t)c->net.welcome.slot << 56);
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
    /* A real UDP port on loopback, the kernel's choice: its datagrams
     * reach ENet through simnet. */
    cradle_server_net_config nc = {.bind_address = "127.0.0.1",
                                   .port = 0,
                                   .timeout_ms = o->timeout_ms,
                                   .max_peers = h->host->peer_count,
                                   .build_id = h->host->sim.contract->build_id,
                                   .game = h->host->sim.contract->name,
                                   .connect_rate = 100000,
                                   .connect_burst = 100000,
                                   .snapshot_size = h->host->snapshot_size};
    if (cradle_server_net_open(h->net, &nc) != 0) return fail(h, "the server's network did not open on 127.0.0.1");
    h->net_open = true;
    ENetAddress bound;
    if (enet_socket_get_address(h->net->host->socket, &bound) != 0) return fail(h, "the server's port is unknown");
    o->port = bound.port;
    h->step_ns = 1000000000u / h->host->sim.contract->steps_per_second;
    h->next_step_ns = simnet_now_ns();
    return 0;
}

/* Opens client c (again: each time with a folder of its own for its copy
 * of the game library). It connects as the harness runs. */
static int open_client(harness *h, harness_client *c) {
    snprintf(c->copy_dir, sizeof c->copy_dir, "%s/client%u.%u", h->dir, (unsigned)c->index, (unsigned)c->opened++);
    if (mkdir(c->copy_dir, 0700) != 0) return fail(h, "cannot make %s", c->copy_dir);
    cradle_netclient_config nc = {.port = h->options.port,
                                  .game = h->config.game,
                                  .copy_dir = c->copy_dir,
                                  .spectator = c->index >= h->config.players,
                                  .requested_slot = -1,
                                  .insecure = true,
                                  .connect_timeout_ms = h->config.timeout_ms,
                                  .silence_timeout_ms = h->config.timeout_ms,
                                  .input = harness_input,
                                  .input_context = c,
                                  .predict_window = h->config.predict_window,
                                  .effects = h->config.effects};
    if (h->config.output && !c->output_file) {
        c->output_file = open_memstream(&c->output, &c->output_size);
        if (!c->output_file) return fail(h, "client %u: no memory for its output", (unsigned)c->index);
        nc.output = c->output_file;
    }
    if (cradle_netclient_open(&c->net, &nc, simnet_now_ns()) != 0)
        return fail(h, "client %u: %s", (unsigned)c->index, c->net.message);
    return 0;
}

int harness_open(harness *h, const harness_config *config) {
    memset(h, 0, sizeof *h);
    h->config = *config;
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
    char why[160];
    if (simnet_open(&config->link, SIMNET_CAPACITY, why, sizeof why) != 0) return fail(h, "the network: %s", why);
    h->simnet_open = true;
    h->opened_ns = simnet_now_ns();
    if (open_server(h) != 0) return -1;
    h->clients = calloc(h->client_count, sizeof *h->clients);
    if (!h->clients) return fail(h, "out of memory for the clients");
    for (uint32_t i = 0; i < h->client_count; i++) {
        h->clients[i].index = i;
        h->clients[i].seed = config->seed;
        if (open_client(h, &h->clients[i]) != 0) return -1;
    }
    return 0;
}

int harness_drop(harness *h, uint32_t i) {
    assert(i < h->client_count);
    harness_client *c = &h->clients[i];
    if (c->closed) return fail(h, "client %u is not open", (unsigned)i);
    cradle_netclient_close(&c->net); /* its link's one DISCONNECT datagram tells the server */
    c->closed = true;
    return 0;
}

int harness_rejoin(harness *h, uint32_t i) {
    assert(i < h->client_count);
    harness_client *c = &h->clients[i];
    if (!c->closed) return fail(h, "client %u is still open", (unsigned)i);
    memset(&c->net, 0, sizeof c->net);
    c->closed = false;
    return open_client(h, c);
}

void harness_output(harness *h, uint32_t i) {
    assert(i < h->client_count && h->clients[i].output_file);
    fflush(h->clients[i].output_file);
}

int harness_reload(harness *h) {
    cradle_reload_result r = cradle__server_reload_now(h->host);
    cradle__server_after_reload(h->host, &r);
    if (r.kind != CRADLE_RELOAD_SWAPPED)
        return fail(h, "the server did not reload %s: %s", h->config.game,
                    r.kind == CRADLE_RELOAD_REFUSED ? r.message : "the same build");
    return 0;
}

uint64_t harness_server_steps(const harness *h) { return h->host ? h->host->sim.next_step : 0; }

/* One millisecond of everything, at the test clock's now: the server's
 * network and host, then each client (its service, then the steps it may
 * run). Sets *slowest to the next step of the slowest client that plays
 * (UINT64_MAX: none yet) and *all to whether every client plays. Returns
 * 0, or -1 on a client's failure (h->message). */
static int turn(harness *h, uint64_t now, uint64_t *slowest, bool *all) {
    bool watch_socket;
    (void)cradle_server_net_turn(h->net, now, UNIX_EPOCH + now / 1000000000u, &watch_socket);
    cradle_enet_pool_bind(NULL); /* the clients' ENet memory is their own */
    cradle_server_host_poll(h->host, now);
    cradle__server_data_poll(h->host, now); /* a data file that changed: applied, as the host's turn does */
    bool all_playing = true;
    uint64_t low = UINT64_MAX;
    for (uint32_t i = 0; i < h->client_count; i++) {
        harness_client *c = &h->clients[i];
        if (c->closed) continue; /* dropped (harness_drop) */
        int rc = cradle_netclient_service(&c->net, now, 0);
        while (rc == 0 && cradle_netclient_step(&c->net, now) == 1) {
        }
        (void)cradle_netclient_predict(&c->net);
        if (h->config.effects && !c->net.error) {
            cradle_event_queue *present, *confirmed;
            cradle_netclient_effects(&c->net, &present, &confirmed);
            c->presented += cradle_events_count(present);
            c->confirmed_events += cradle_events_count(confirmed);
            assert(cradle_events_dropped_total(present) == 0 && cradle_events_dropped_total(confirmed) == 0);
            cradle_events_clear(present);
            cradle_events_clear(confirmed);
        }
        if (c->net.error)
            return fail(h, "client %u (%s), %.3f s into the session: %s (the server: step %" PRIu64
                           ", %" PRIu64 " streams fell behind, %" PRIu64 " repairs)",
                        (unsigned)i, c->net.config.spectator ? "spectator" : "player",
                        (double)(now - h->opened_ns) / 1e9, c->net.message, harness_server_steps(h),
                        (uint64_t)atomic_load(&h->net->stats.fell_behind),
                        (uint64_t)atomic_load(&h->net->stats.repairs));
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
    uint64_t deadline = simnet_now_ns() + deadline_ms * 1000000u;
    /* after an earlier call, the steps go on from now, not from its last */
    if (h->next_step_ns < simnet_now_ns()) h->next_step_ns = simnet_now_ns();
    for (;;) {
        uint64_t now = simnet_now_ns();
        /* the server's step, when due at the game's rate */
        uint64_t server = harness_server_steps(h);
        if (server < steps && now >= h->next_step_ns) {
            cradle_server_host_advance(h->host, 1, now);
            h->next_step_ns += h->step_ns;
        }
        uint64_t slowest = 0;
        bool all = false;
        if (turn(h, now, &slowest, &all) != 0) return -1;
        server = harness_server_steps(h);
        if (all && slowest >= steps && server >= steps) return 0;
        if (now > deadline) {
            if (!all) {
                uint32_t playing = 0;
                for (uint32_t i = 0; i < h->client_count; i++)
                    playing += !h->clients[i].closed && cradle_netclient_playing(&h->clients[i].net);
                return fail(h, "after %" PRIu64 " ms of the test clock, %u of %u clients were playing", deadline_ms,
                            (unsigned)playing, (unsigned)h->client_count);
            }
            return fail(h, "after %" PRIu64 " ms of the test clock, the server was at step %" PRIu64
                           " and the slowest client at %" PRIu64 " of %" PRIu64,
                        deadline_ms, server, slowest, steps);
        }
        simnet_advance(TICK_NS);
    }
}

uint32_t harness_close(harness *h) {
    uint32_t normal = 0;
    /* A session that ends as cradle-server's does: BYE to every client,
     * each held until its client confirmed the last steps (the linger). */
    bool lingering = false;
    if (h->host_ready) (void)cradle_server_host_finish(h->host);
    if (h->net_open) {
        cradle_server_net_finish(h->net, 1000, simnet_now_ns());
        lingering = true;
    }
    /* Every client ends: with the BYE, or (a link that lost every try of
     * it within the linger) by its silence timeout once the server is gone. */
    uint64_t deadline = simnet_now_ns() + (uint64_t)(h->config.timeout_ms + 10000u) * 1000000u;
    bool busy = lingering;
    while (busy && simnet_now_ns() < deadline) {
        uint64_t now = simnet_now_ns();
        lingering = lingering && cradle_server_net_linger(h->net, now);
        cradle_enet_pool_bind(NULL);
        busy = lingering;
        for (uint32_t i = 0; h->clients && i < h->client_count; i++) {
            harness_client *c = &h->clients[i];
            if (c->closed) continue;
            (void)cradle_netclient_service(&c->net, now, 0);
            /* with its BYE read, a client disconnects at once, so the
             * linger has one peer fewer to wait for */
            if (c->net.phase == CRADLE_NETCLIENT_CLOSED) {
                normal += cradle_netclient_ended_normally(&c->net);
                h->ended++;
                cradle_netclient_close(&c->net);
                c->closed = true;
            } else {
                busy = true;
            }
        }
        simnet_advance(TICK_NS);
    }
    for (uint32_t i = 0; h->clients && i < h->client_count; i++) {
        if (!h->clients[i].closed) cradle_netclient_close(&h->clients[i].net);
        if (h->clients[i].output_file) fclose(h->clients[i].output_file);
        free(h->clients[i].output);
    }
    free(h->clients);
    h->clients = NULL;
    if (h->net) cradle_server_net_close(h->net);
    if (h->host) cradle_server_host_deinit(h->host);
    free(h->host);
    free(h->net);
    h->host = NULL;
    h->net = NULL;
    h->net_open = false;
    if (h->simnet_open) simnet_close();
    h->simnet_open = false;
    if (h->dir[0]) cradle_os_remove_tree(h->dir);
    h->dir[0] = '\0';
    return normal;
}
