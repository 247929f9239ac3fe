/*
 * game_data: the session's game data files (game_abi.h, minor 4) on the
 * game thread. The files are watched by data_files.h; a change is applied
 * between two steps through the sim, recorded in the log (which archives
 * the bytes) and sent to every client as DATA chunks before the steps of
 * the new epoch, so each client applies the same bytes before the same
 * step. A refused change leaves the session on the data it had.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cradle/systime.h"
#include "cradle/wire.h"
#include "host_internal.h"

/* The file's bytes to every admitted peer, in order, reliable. */
static void announce(cradle_server_host *host, uint32_t i) {
    const cradle_data_file *f = &host->data.files[i];
    cradle_wire_message m = {.type = CRADLE_WIRE_DATA};
    cradle_wire_data *d = &m.as.data;
    d->at_step = host->sim.next_step;
    d->epoch = host->epoch;
    d->file = (uint8_t)i;
    d->total = f->size;
    memcpy(d->hash, f->hash, sizeof d->hash);
    uint32_t offset = 0;
    do {
        uint32_t left = f->size - offset;
        d->offset = offset;
        d->length = (uint16_t)(left < CRADLE_WIRE_DATA_CHUNK_MAX ? left : CRADLE_WIRE_DATA_CHUNK_MAX);
        d->bytes = f->bytes + offset;
        cradle__server_broadcast(host, &m, CRADLE_SERVER_OUT_RELIABLE);
        offset += d->length;
    } while (offset < f->size);
}

/* A change that did not apply (host->data.message says why): counted,
 * shown in status and said; the session keeps its data. */
static void refused(cradle_server_host *host) {
    host->data_refusals++;
    snprintf(host->last_data, sizeof host->last_data, "refused at step %" PRIu64 ": %s", host->sim.next_step,
             host->data.message);
    cradle_server_say(host, "error", "data", "%s; the session keeps the data it had", host->data.message);
}

/* Applies file i, just read: the state first, the clients next, the log
 * last (its archive is synced to disk: the clients need not wait for it). */
static void apply(cradle_server_host *host, uint32_t i) {
    uint64_t started = cradle_mono_ns();
    cradle__server_flush_steps(host); /* the steps so far ran the old data: their epoch */
    cradle_data_file *f = &host->data.files[i];
    int rc = cradle_data_files_apply(&host->data, i, &host->sim, NULL);
    if (rc == CRADLE_DATA_UNCHANGED) return;
    if (rc != 0) {
        refused(host);
        return;
    }
    host->data_applies++;
    host->epoch++;
    announce(host, i);
    /* What an operator (and tools/bench.sh data) reads: the file's last write
     * to applied and announced, and the step loop's stall for it. */
    int64_t since_write = (int64_t)cradle_wall_ns() - f->mtime_seen_ns;
    host->data_delay_last_ns = since_write > 0 ? (uint64_t)since_write : 0;
    if (host->log_open &&
        cradle_log_writer_append_data(&host->log, host->sim.next_step, i, f->name, f->bytes, f->size, f->hash) != 0)
        cradle_server_say(host, "error", "log", "%s applied at step %" PRIu64 ", but the log could not record it: %s",
                          f->name, host->sim.next_step, host->log.message);
    host->data_apply_last_ns = cradle_mono_ns() - started;
    if (host->data_apply_last_ns > host->data_apply_max_ns) host->data_apply_max_ns = host->data_apply_last_ns;
    char hex[2 * CRADLE_DATA_HASH_BYTES + 1];
    cradle_data_hash_hex(hex, f->hash);
    snprintf(host->last_data, sizeof host->last_data, "%s (%" PRIu32 " bytes, %.16s) applied at step %" PRIu64, f->name,
             f->size, hex, host->sim.next_step);
    cradle_server_say(host, "info", "data", "%s", host->last_data);
}

void cradle__server_data_start(cradle_server_host *host) {
    for (uint32_t i = 0; i < host->data.count; i++)
        if (host->data.files[i].valid) apply(host, i);
}

void cradle__server_data_poll(cradle_server_host *host, uint64_t now_ns) {
    for (;;) {
        int got = cradle_data_files_poll(&host->data, now_ns);
        if (got == -1) return;
        if (got >= 0) {
            apply(host, (uint32_t)got);
            continue;
        }
        refused(host); /* a file that vanished, grew past its limit or cannot be read */
    }
}
