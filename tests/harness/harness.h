#ifndef CRADLE_TEST_HARNESS_H
#define CRADLE_TEST_HARNESS_H
/*
 * harness: one whole session in one test process, on one thread, on a test
 * clock. The server library's host (cradle_server) and network, driven a
 * turn at a time (cradle_server_net_turn: no network thread), N clients of
 * the client library (cradle_netclient: players and spectators), and
 * simnet (simnet.h) under ENet: the test clock that ENet and every turn
 * read, and an impaired link from a seed (latency, jitter, loss,
 * duplicates, reordering) on every socket's arrivals.
 *
 * The harness advances the test clock a millisecond at a time; each
 * millisecond every party has its turn (the network, the host, each
 * client's service and steps). The server steps at the game's rate on that
 * clock, as cradle-server does, its steps commanded by the harness: so a
 * session of many minutes of game time runs as fast as the machine
 * computes it, and waits on nothing. The sockets are real UDP on loopback
 * (ENet's own, and the server's raw batches); what they receive reaches
 * ENet through simnet.
 *
 * A client still joining does not hold the session: it joins where the
 * session is, with the state block, as on a real server.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cradle/sim.h"
#include "host.h"
#include "net.h"
#include "netclient.h"
#include "proxy_sched.h"

#define HARNESS_CLIENTS_MAX 16u

typedef struct harness_config {
    const char *game;               /* the game library (server and clients load it) */
    uint32_t players;               /* player clients, each in its own slot */
    uint32_t spectators;            /* spectator clients */
    uint32_t input_delay;           /* steps (commanded: fixed); 0 = 2 */
    uint32_t hash_interval;         /* 0 = 30 */
    uint32_t timeout_ms;            /* a peer silent this long is dropped, by the server (its
                                       --timeout) and by the clients; 0 = 20000 */
    cradle_proxy_impairment link;   /* every socket's arrivals (zero: a clean link); its seed
                                       makes a run repeatable */
    uint64_t seed;                  /* the session's; each player's input is splitmix(seed, step, slot) */
    uint32_t predict_window;        /* players predict this many steps ahead (predict.h); 0 = lockstep */
    bool output;                    /* every client keeps the game's output bytes of the steps it
                                       confirmed (harness_client.output) */
    bool effects;                   /* every client keeps its events to present, and the harness
                                       takes them each turn as a window's frame does (counted) */
} harness_config;

typedef struct harness_client {
    cradle_netclient net;
    uint32_t index;
    uint64_t seed;
    char copy_dir[128];             /* its copy of the game library */
    uint32_t opened;                /* times it was opened (harness_rejoin) */
    bool closed;                    /* cradle_netclient_close done: dropped, or ended */
    uint64_t presented;             /* with config.effects: events handed over to present */
    uint64_t confirmed_events;      /* ... and confirmed steps' events (react_confirmed's) */
    FILE *output_file;              /* with config.output: the output bytes, into output */
    char *output;
    size_t output_size;
} harness_client;

typedef struct harness {
    harness_config config;
    char dir[96];                   /* the run's temporary folder */
    cradle_server_options options;
    cradle_server_host *host;
    cradle_server_net *net;
    _Atomic int stop;
    bool host_ready, net_open, simnet_open;
    uint64_t opened_ns;             /* the test clock when the harness opened */
    uint64_t step_ns;               /* the game's step on the test clock */
    uint64_t next_step_ns;          /* when the server's next step is due */
    harness_client *clients;        /* players first, then spectators */
    uint32_t client_count;
    uint32_t ended;                 /* clients that ended by themselves in harness_close */
    char message[512];              /* what went wrong, for the test's failure */
} harness;

/* Opens the network, starts the server and opens every client (they
 * connect as the harness runs). One harness at a time (simnet is the
 * process's). Returns 0, or -1 with h->message; harness_close is safe
 * either way. */
int harness_open(harness *h, const harness_config *config);

/* Runs the session until every open client has run every step below `steps`
 * (the server runs exactly that many), or until the test clock reached
 * deadline_ms past the call, or a client failed. Returns 0, or -1 with
 * h->message naming what did not happen. May be called again for more
 * steps. */
int harness_run(harness *h, uint64_t steps, uint64_t deadline_ms);

/* Client i drops out: its connection closes at once (one DISCONNECT
 * datagram, which the link may lose: then the server's --timeout), as a
 * client that quits or crashes. Returns 0, or -1 (h->message) when it was
 * not open. */
int harness_drop(harness *h, uint32_t i);

/* Client i, dropped, connects again: a new connection that joins where
 * the session is (a player takes a free slot), with the state block.
 * Returns 0, or -1 (h->message). */
int harness_rejoin(harness *h, uint32_t i);

/* The server reloads its game library now (as cradlectl reload does: the
 * file at config.game, after its trial), announcing the build to the
 * clients, which load the same path at the announced step. Returns 0, or
 * -1 (h->message) when the server did not swap. A changed data file of the
 * game (beside config.game) is applied as cradle-server does, at a turn
 * once it held still. */
int harness_reload(harness *h);

/* The steps the server has run. */
uint64_t harness_server_steps(const harness *h);

/* With config.output: client i's output bytes so far (flushed), in
 * c->output and c->output_size. */
void harness_output(harness *h, uint32_t i);

/* Ends the session as cradle-server does (BYE, then the network's linger
 * until every client confirmed the last steps), waits on the test clock
 * until every client ended (h->ended: with the BYE, or by its silence
 * timeout when the link lost the BYE) and frees everything. Returns how many clients saw the end as a
 * normal one (the server's BYE "shutdown", cradle_netclient_ended_normally). */
uint32_t harness_close(harness *h);

#endif
