/* watchdog: the stop deadline and the sign of life for health (watchdog.h). */
#include "watchdog.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cradle/errors.h"
#include "cradle/os.h"
#include "cradle/systime.h"

#define LOOK_MS 250u /* the stop deadline is checked this often; a signal returns at once */

bool cradle_server_alive(const cradle_server_host *host, uint64_t now_ms, uint64_t max_silence_ms) {
    uint64_t alive = atomic_load_explicit(&host->alive_ms, memory_order_relaxed);
    return alive + max_silence_ms >= now_ms;
}

/* The deadline passed with the game thread still out: keep what can be kept,
 * tell Agones, end the process. */
static _Noreturn void rescue(cradle_server_watchdog *w, int signo) {
    cradle_server_host *host = w->host;
    uint64_t in_step = atomic_load_explicit(&host->in_step, memory_order_acquire);
    char kept[CRADLE_LOG_MESSAGE_MAX + 64] = "no session log";
    if (host->log_open && in_step) {
        /* inside game code the game thread holds nothing of the log: the
         * acquire above orders its last writes to it before ours */
        cradle_log_mark mark = host->step_mark;
        int rc = cradle_log_writer_rescue(&host->log, mark);
        if (rc == 0)
            snprintf(kept, sizeof kept, "the log is durable up to step %" PRIu64 " (%" PRIu64
                     " steps, no trailer: --resume continues it)", mark.steps ? mark.steps - 1 : 0, mark.steps);
        else
            snprintf(kept, sizeof kept, "the log could not be written: %s", host->log.message);
    } else if (host->log_open) {
        snprintf(kept, sizeof kept, "the log was left as it is (the game thread is not in a step)");
    }
    char where[96] = "not in game code";
    if (in_step)
        snprintf(where, sizeof where, "stuck in the game's step %" PRIu64 ": a step that never returns?", in_step - 1);
    char message[sizeof kept + 256];
    snprintf(message, sizeof message, "stop: the game thread did not finish within %u ms of signal %d (%s); %s; exiting",
             (unsigned)w->stop_timeout_ms, signo, where, kept);
    /* the step the game thread stands at: it writes no more (acquire above) */
    uint64_t step = host->sim.next_step;
    cradle_server_print(host->options, "error", "stop", step, message);
    if (w->agones && w->agones->started) {
        cradle_agones_shutdown(w->agones);
        cradle_server_print(host->options, "info", "agones", step,
                            atomic_load(&w->agones->shutdown_ok) ? "shutdown reported" : "shutdown NOT reported");
    }
    _exit(1);
}

static void *watch(void *arg) {
    cradle_os_name_thread("watchdog");
    cradle_server_watchdog *w = arg;
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    uint64_t deadline = 0;
    while (!atomic_load(&w->done)) {
        /* every thread blocks these, so they wait here for this thread,
         * whatever the game thread is doing */
        struct timespec look = {.tv_sec = 0, .tv_nsec = (long)LOOK_MS * 1000000L};
        int got = sigtimedwait(&stops, NULL, &look);
        if (got > 0) {
            atomic_store(w->signalled, got);
            (void)!write(w->host->net->game_wake_fd[1], "", 1); /* out of its wait */
        }
        int signo = atomic_load(w->signalled);
        if (!signo || atomic_load(&w->done)) continue;
        uint64_t now = cradle_mono_ms();
        if (!deadline) deadline = now + w->stop_timeout_ms;
        if (now >= deadline) rescue(w, signo);
    }
    return NULL;
}

int cradle_server_watchdog_start(cradle_server_watchdog *w, cradle_server_host *host, cradle_agones *agones,
                                 _Atomic int *signalled, uint32_t stop_timeout_ms) {
    *w = (cradle_server_watchdog){.host = host,
                                  .agones = agones,
                                  .signalled = signalled,
                                  .stop_timeout_ms = stop_timeout_ms ? stop_timeout_ms
                                                                     : CRADLE_SERVER_DEFAULT_STOP_TIMEOUT_MS};
    atomic_init(&w->done, false);
    if (pthread_create(&w->thread, NULL, watch, w) != 0) return CRADLE_EIO;
    w->started = true;
    return 0;
}

void cradle_server_watchdog_stop(cradle_server_watchdog *w) {
    if (!w->started) return;
    atomic_store(&w->done, true);
    pthread_join(w->thread, NULL);
    w->started = false;
}
