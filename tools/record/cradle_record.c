/*
 * cradle-record: the offline host (record.h). It runs a game library with
 * no network from step 0 and records a session log; at the end it replays
 * the log and checks that the replay reproduces the live run.
 *
 *   cradle-record --game counter.so --log run.log --seed 7 --players 3 \
 *                 --steps 600 [--script input.txt] [--output run.out]
 *
 * Three ways to run:
 *   fast (default)  as fast as it goes: golden sessions, test logs
 *   --paced         at the game's steps per second in real time; with
 *                   --watch a rebuilt library takes over mid-run
 *   --commanded     only the dev protocol's step command advances it
 * With --dev-socket, status, flush and quit work in every mode. SIGINT and
 * SIGTERM end a run early and cleanly: the log is closed and checked.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "record.h"

static volatile sig_atomic_t stop_signal = 0;

static void on_stop_signal(int signal_number) { stop_signal = signal_number; }

static recorder the_recorder; /* large: the loaders and the log writer */

/* Fast: step after step; a dev socket is looked at every 256 steps. */
static int run_fast(recorder *r, record_dev *dev) {
    while (recorder_steps(r) < r->o.steps && !stop_signal && !r->finished) {
        if (recorder_step(r) != 0) return 1;
        if (dev->open && recorder_steps(r) % 256 == 0 && !record_dev_poll(dev, 0)) return dev->failed ? 1 : 0;
    }
    return 0;
}

/* Paced: the clock says how many steps are owed; between them the host
 * waits on the dev socket or sleeps. A status line each game second. */
static int run_paced(recorder *r, record_dev *dev) {
    /* Every build of the game has these rates (the loader checks). */
    uint32_t rate = r->sim.contract->steps_per_second;
    cradle_clock clock;
    int rc = cradle_clock_init(&clock, (cradle_clock_config){
                                           .steps_per_second = rate,
                                           .source_frames_per_second = r->sim.contract->source_frames_per_second});
    if (rc != 0) {
        fprintf(stderr, "cradle-record: the game's rates: %s\n", cradle_strerror(rc));
        return 1;
    }
    uint64_t last = cradle_mono_ns();
    while (recorder_steps(r) < r->o.steps && !stop_signal && !r->finished) {
        uint64_t now = cradle_mono_ns();
        cradle_clock_plan plan = cradle_clock_offer_elapsed(&clock, now - last);
        last = now;
        for (uint32_t i = 0; i < plan.steps; i++) {
            (void)cradle_clock_next(&clock);
            if (recorder_steps(r) >= r->o.steps) continue;
            if (recorder_step(r) != 0) return 1;
            uint64_t done = recorder_steps(r);
            if (done % rate == 0 || done == r->o.steps) recorder_print_status(r);
        }
        if (recorder_steps(r) >= r->o.steps) break;
        uint64_t wait = cradle_clock_ns_until_next(&clock);
        if (dev->open) {
            if (!record_dev_poll(dev, (int)((wait + 999999) / 1000000))) return dev->failed ? 1 : 0;
        } else if (wait) {
            (void)cradle_sleep_ns_unless(wait, &stop_signal);
        }
    }
    return 0;
}

/* Commanded: the dev protocol steps it until quit or end of input. */
static int run_commanded(record_dev *dev) {
    while (!stop_signal && record_dev_poll(dev, 1000)) {
    }
    return dev->failed ? 1 : 0;
}

static void print_done(const recorder *r, double seconds) {
    const cradle_game_contract *c = r->sim.contract;
    if (r->o.json) {
        fprintf(r->events,
                "{\"event\":\"done\",\"steps\":%" PRIu64 ",\"seconds\":%.3f,\"game\":\"%s\",\"build\":\"%s\","
                "\"reloads\":%" PRIu64 ",\"data_applied\":%" PRIu64 ",\"data_refusals\":%" PRIu64 "%s%s}\n",
                recorder_steps(r), seconds, c->name, c->build_id, r->reloads, r->data_applied, r->data_refusals,
                r->checked ? ",\"replay_equal\":" : "",
                !r->checked ? "" : r->replay_equal ? "true" : "false");
    } else {
        fprintf(r->events, "cradle-record: %" PRIu64 " steps of %s (build %s) to %s in %.2f s; %s\n",
                recorder_steps(r), c->name, c->build_id, r->o.log, seconds,
                r->checked ? r->check_message : "not checked (--no-check)");
    }
    fflush(r->events);
}

int main(int argc, char **argv) {
    recorder *r = &the_recorder;
    int status = record_options_parse(&r->o, argc, argv);
    if (status >= 0) return status;
    /* Status lines share stdout unless it carries dev replies or output bytes. */
    bool stdout_taken = r->o.dev_stdin || (r->o.output && strcmp(r->o.output, "-") == 0);
    r->events = stdout_taken ? stderr : stdout;

    /* A dev client that vanishes must not kill the host; SIGINT and SIGTERM
     * end the run cleanly (log closed and checked, socket removed). */
    signal(SIGPIPE, SIG_IGN);
    struct sigaction stop = {.sa_handler = on_stop_signal};
    sigemptyset(&stop.sa_mask);
    sigaction(SIGINT, &stop, NULL);
    sigaction(SIGTERM, &stop, NULL);

    record_dev dev = {0};
    status = recorder_open(r);
    if (status == 0 && (r->o.dev_stdin || r->o.dev_socket)) status = record_dev_open(&dev, r);
    uint64_t started = cradle_mono_ns();
    if (status == 0) {
        status = r->o.pace == RECORD_COMMANDED ? run_commanded(&dev)
                 : r->o.pace == RECORD_PACED   ? run_paced(r, &dev)
                                               : run_fast(r, &dev);
    }
    if (status == 0) {
        status = recorder_finish(r);
        if (r->finished) print_done(r, (double)(cradle_mono_ns() - started) / 1e9);
    }
    record_dev_close(&dev);
    recorder_close(r);
    return status;
}
