#ifndef CRADLE_SERVER_WATCHDOG_H
#define CRADLE_SERVER_WATCHDOG_H
/*
 * watchdog: cradle-server's guard against a game thread that never comes
 * back (a step that loops forever), and the thread that takes SIGINT and
 * SIGTERM: every other thread blocks them (main blocks them before it
 * starts any thread), this one waits for them (sigtimedwait), sets the
 * flag the game loop reads and wakes that loop through its wake pipe, so a
 * signal is seen even while the game thread runs game code that never
 * returns. Its own thread looks, every 250 ms, at
 * the signs of life the game thread leaves in the host (host.h: alive_ms,
 * the loop's last turn; in_step, whether game code runs and which step):
 *
 *   - alive: the game loop turned within the last max_silence_ms. The Agones
 *     health ping goes out only then (agones.h), so a hung step stops health
 *     and Agones marks the server Unhealthy within its failure threshold.
 *   - the stop deadline: once SIGTERM or SIGINT arrives, the game thread has
 *     stop_timeout_ms to finish the session (it closes the log, sends Agones
 *     Shutdown). If it has not, the watchdog does what it can from outside:
 *     when the game thread is inside a step (it holds nothing of the log
 *     then), it makes the log durable up to the last complete step
 *     (cradle_log_writer_rescue: no trailer, --resume continues it), sends
 *     Agones Shutdown, says so on stderr and ends the process with exit
 *     status 1. The default (3 s) is well inside the systemd unit's
 *     TimeoutStopSec and Kubernetes' grace period.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "agones.h"
#include "host.h"
#include "options.h"

typedef struct cradle_server_watchdog {
    cradle_server_host *host;
    cradle_agones *agones;            /* NULL or not started: no Agones */
    _Atomic int *signalled;           /* the program's signal flag: set here */
    uint32_t stop_timeout_ms;
    pthread_t thread;
    bool started;
    _Atomic bool done;                /* the game thread finished the session */
} cradle_server_watchdog;

/* Starts the thread. Returns 0 or CRADLE_EIO. */
int cradle_server_watchdog_start(cradle_server_watchdog *w, cradle_server_host *host, cradle_agones *agones,
                                 _Atomic int *signalled, uint32_t stop_timeout_ms);

/* The session ended on the game thread: stops and joins the watchdog. */
void cradle_server_watchdog_stop(cradle_server_watchdog *w);

/* Whether the game loop turned within max_silence_ms of now_ms (for the
 * health ping). */
bool cradle_server_alive(const cradle_server_host *host, uint64_t now_ms, uint64_t max_silence_ms);

#endif
