#ifndef CRADLE_SERVER_AGONES_H
#define CRADLE_SERVER_AGONES_H
/*
 * agones: cradle-server's side of the Agones SDK (Kubernetes game-server
 * fleets), over the SDK sidecar's local REST API with libcurl:
 *   POST /health    every health_interval_ms (default 2 s; Agones' default
 *                   period is 5 s) from start to shutdown, while config.alive
 *                   says the game thread turned within that interval (a
 *                   hung step withholds it: Agones then marks the server
 *                   Unhealthy);
 *   POST /ready     once, after cradle_agones_ready (the server listens);
 *   POST /shutdown  once, after cradle_agones_shutdown (the session ended or
 *                   SIGTERM arrived).
 *   PUT /metadata/label  {"key":"players","value":"N"} and the same for
 *                   "spectators" whenever cradle_agones_set_players changes
 *                   them (Agones prefixes "agones.dev/sdk-": a matchmaker or
 *                   `kubectl get gs -L agones.dev/sdk-players` reads them);
 *   GET /watch/gameserver  a stream of {"result":{GameServer}} lines, one per
 *                   change, read on a second thread: the GameServer's
 *                   status.state ("Ready", "Allocated", "Shutdown", ...) is
 *                   kept for the host (cradle_agones_state), which acts on
 *                   Allocated. A stream that ends or fails is opened again
 *                   with backoff; a line that is not such an object is
 *                   counted (watch_errors) and skipped.
 * The sidecar is http://localhost:$AGONES_SDK_HTTP_PORT (default 9358). It
 * may start after the server: a failed call is retried with backoff (100 ms
 * doubling to 2 s) until it succeeds; shutdown is retried for at most
 * shutdown_budget_ms, then given up (the pod is being torn down anyway).
 *
 * Everything runs on the module's own thread; the calls below only set a flag
 * and signal it, so the game thread never waits for HTTP.
 *
 * Built only with CRADLE_AGONES (libcurl); without it cradle_agones_start
 * returns CRADLE_EINVAL and `--agones` is refused as a usage error.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CRADLE_AGONES_DEFAULT_PORT 9358u

/* Zero means default. */
typedef struct cradle_agones_config {
    const char *host; /* NULL = "localhost" */
    uint16_t port; /* 0 = $AGONES_SDK_HTTP_PORT, else 9358 */
    uint32_t health_interval_ms; /* 0 = 2000 */
    uint32_t shutdown_budget_ms; /* 0 = 5000 */
    /* NULL: always alive. Else asked before each health ping: did the game
     * thread show progress within max_silence_ms (the health interval)? */
    bool (*alive)(void *context, uint64_t now_ms, uint64_t max_silence_ms);
    void *alive_context;
} cradle_agones_config;

typedef struct cradle_agones {
    char base_url[96];
    uint32_t health_interval_ms, shutdown_budget_ms;
    bool (*alive)(void *context, uint64_t now_ms, uint64_t max_silence_ms);
    void *alive_context;
    pthread_t thread;
    bool started;
    pthread_mutex_t mutex;
    pthread_cond_t cond; /* CLOCK_MONOTONIC */
    bool ready_requested, shutdown_requested, stop; /* guarded by mutex */
    uint32_t players, spectators;                   /* guarded: what the labels should say */
    bool labels_wanted;                             /* guarded: they changed since the last PUT */
    bool labels_sent_once;                          /* guarded: the first numbers were asked for */
    pthread_t watch_thread;
    bool watch_started;
    _Atomic bool watch_stop;
    _Atomic int state;                              /* cradle_agones_state values */
    /* counters, read by status and tests */
    _Atomic uint64_t health_ok, ready_ok, shutdown_ok, failures;
    _Atomic uint64_t health_withheld; /* pings not sent: the game thread showed no progress */
    _Atomic uint64_t labels_ok, watch_updates, watch_errors;
} cradle_agones;

/* The GameServer's state as the watch stream last said. */
typedef enum cradle_agones_state {
    CRADLE_AGONES_STATE_UNKNOWN = 0, /* nothing heard yet */
    CRADLE_AGONES_STATE_READY,
    CRADLE_AGONES_STATE_ALLOCATED,
    CRADLE_AGONES_STATE_RESERVED,
    CRADLE_AGONES_STATE_SHUTDOWN,
    CRADLE_AGONES_STATE_OTHER,       /* Scheduled, RequestReady, Unhealthy, Error, ... */
} cradle_agones_state;

/* "Ready", "Allocated", ...; "unknown" and "other" for the two others. */
const char *cradle_agones_state_name(cradle_agones_state state);

/* One line of the watch stream: {"result":{...,"status":{"state":"X",...}}}
 * (strict JSON, as cradle_json_load reads it). True with *state (OTHER for a
 * state not named above); false for anything else: not JSON, an
 * {"error":...} line, no string at result.status.state. Outside bytes:
 * fuzzed (tests/fuzz/fuzz_agones_watch.c). */
bool cradle_agones_parse_watch_line(const char *line, size_t length, cradle_agones_state *state);

/* The state last seen (any thread). */
static inline cradle_agones_state cradle_agones_state_now(const cradle_agones *a) {
    return a->started ? (cradle_agones_state)atomic_load(&a->state) : CRADLE_AGONES_STATE_UNKNOWN;
}

/* Asks for the players and spectators labels to say these numbers (sent
 * when they differ from the last ones sent). Does not block. */
void cradle_agones_set_players(cradle_agones *a, uint32_t players, uint32_t spectators);

/* Whether this build has the Agones integration. */
bool cradle_agones_available(void);

/* Reads the port from config or the environment (a bad AGONES_SDK_HTTP_PORT
 * is CRADLE_ERANGE) and starts the thread, which begins the health pings.
 * Returns 0, CRADLE_EINVAL (built without Agones), CRADLE_ERANGE or
 * CRADLE_EIO (thread or libcurl failed to start). Prints nothing. */
int cradle_agones_start(cradle_agones *a, const cradle_agones_config *config);

/* Asks for POST /ready (once; retried until it succeeds). Does not block. */
void cradle_agones_ready(cradle_agones *a);

/* Asks for POST /shutdown, stops the health pings and waits for the thread
 * to finish (at most about shutdown_budget_ms). Safe when never started. */
void cradle_agones_shutdown(cradle_agones *a);

#endif
