#ifndef CRADLE_TEST_HARNESS_H
#define CRADLE_TEST_HARNESS_H
/*
 * harness: one whole session in one test process. The server library's
 * host (cradle_server) and network thread on loopback, N clients of the
 * client library (cradle_netclient: players and spectators), and, when
 * asked, cradle-proxy's relay (cradle_proxy_relay) between them: an
 * impaired link from a seed (latency, jitter, loss, duplicates, reordering).
 *
 * The session is commanded: the harness, not a clock, decides when the
 * server steps, so a session of many minutes of game time runs as fast as
 * the link lets the clients keep up. One thread (the test's) runs the host's
 * turns (cradle_server_host_poll, cradle_server_host_advance), every
 * client's service and steps, and the relay; only ENet's server host has a
 * thread of its own (the network thread, as in cradle-server). Time is real
 * where the programs read it (ENet's timers, the clients' timeouts): what a
 * test waits for, it waits for with a deadline.
 *
 * The server advances a step while the slowest client that plays is at most
 * `lead` steps behind it: the window the step stream (server/src/stream.h)
 * and the inputs fill, and what a link's round trip costs in steps. A
 * client still joining does not hold the session: it joins where the
 * session is, with the state block, as on a real server.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cradle/sim.h"
#include "host.h"
#include "net.h"
#include "netclient.h"
#include "proxy_relay.h"

#define HARNESS_CLIENTS_MAX 16u

typedef struct harness_config {
    const char *game;               /* the game library (server and clients load it) */
    uint32_t players;               /* player clients, each in its own slot */
    uint32_t spectators;            /* spectator clients */
    uint32_t input_delay;           /* steps (commanded: fixed); 0 = 2 */
    uint32_t hash_interval;         /* 0 = 30 */
    uint32_t lead;                  /* steps the server may run ahead of the slowest client; 0 = 30 */
    uint32_t timeout_ms;            /* a peer silent this long is dropped, by the server (its
                                       --timeout) and by the clients; 0 = 20000 */
    bool impaired;                  /* the clients connect through the relay, with `link` */
    cradle_proxy_impairment link;   /* its seed makes a run repeatable */
    uint64_t seed;                  /* the session's; each player's input is splitmix(seed, step, slot) */
} harness_config;

typedef struct harness_client {
    cradle_netclient net;
    uint32_t index;
    uint64_t seed;
    char copy_dir[128];             /* its copy of the game library */
    bool closed;                    /* cradle_netclient_close done */
} harness_client;

typedef struct harness {
    harness_config config;
    char dir[96];                   /* the run's temporary folder */
    cradle_server_options options;
    cradle_server_host *host;
    cradle_server_net *net;
    _Atomic int stop;
    bool host_ready, net_started;
    atomic_bool net_stopped;
    cradle_proxy_relay relay;
    bool relay_open;
    harness_client *clients;        /* players first, then spectators */
    uint32_t client_count;
    char message[512];              /* what went wrong, for the test's failure */
} harness;

/* Starts the server and the relay, and opens every client (they connect as
 * the harness runs). Returns 0, or -1 with h->message; harness_close is
 * safe either way. */
int harness_open(harness *h, const harness_config *config);

/* Runs the session until every client has run every step below `steps`
 * (the server runs exactly that many), or until deadline_ms of real time
 * passed, or a client failed. Returns 0, or -1 with h->message naming what
 * did not happen. May be called again for more steps. */
int harness_run(harness *h, uint64_t steps, uint64_t deadline_ms);

/* The steps the server has run. */
uint64_t harness_server_steps(const harness *h);

/* Ends the session as cradle-server does (BYE, then the network thread
 * stops) and frees everything. Returns how many clients saw the end as a
 * normal one (the server's BYE "shutdown", cradle_netclient_ended_normally). */
uint32_t harness_close(harness *h);

#endif
