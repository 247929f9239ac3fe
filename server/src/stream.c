#include "stream.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/input.h"
#include "cradle/wire.h"

static bool power_of_two(uint32_t n) { return n != 0 && (n & (n - 1u)) == 0; }

int cradle_stream_init(cradle_stream *stream, const cradle_stream_config *config) {
    assert(stream && config);
    memset(stream, 0, sizeof *stream);
    if (config->snapshot_size < 1 || config->snapshot_size > CRADLE_SNAPSHOT_MAX || config->peers < 1)
        return CRADLE_EINVAL;
    uint32_t capacity = config->history_steps;
    if (capacity == 0) {
        capacity = CRADLE_STREAM_HISTORY_MAX;
        while (capacity > CRADLE_STREAM_HISTORY_MIN &&
               (size_t)capacity * config->snapshot_size > CRADLE_STREAM_HISTORY_BYTES)
            capacity /= 2u;
    }
    if (!power_of_two(capacity)) return CRADLE_EINVAL;
    uint32_t one_step = CRADLE_WIRE_STEPS_HEADER_BYTES + CRADLE_WIRE_STEPS_HASH_BYTES + config->snapshot_size;
    uint32_t payload = config->payload_max ? config->payload_max : CRADLE_STREAM_PAYLOAD_DEFAULT;
    stream->payload_max = payload < one_step ? one_step : payload;
    stream->snapshot_size = config->snapshot_size;
    stream->capacity = capacity;
    stream->peer_count = config->peers;
    stream->snapshots = malloc((size_t)capacity * config->snapshot_size);
    stream->hashes = calloc(capacity, sizeof *stream->hashes);
    stream->epochs = calloc(capacity, 1);
    stream->has_hash = calloc(capacity, 1);
    stream->peers = calloc(config->peers, sizeof *stream->peers);
    stream->gather = malloc((size_t)CRADLE_WIRE_STEPS_MAX * config->snapshot_size);
    if (!stream->gather || !stream->snapshots || !stream->hashes || !stream->epochs || !stream->has_hash || !stream->peers) {
        cradle_stream_deinit(stream);
        return CRADLE_ENOMEM;
    }
    return 0;
}

void cradle_stream_deinit(cradle_stream *stream) {
    free(stream->snapshots);
    free(stream->hashes);
    free(stream->epochs);
    free(stream->has_hash);
    free(stream->peers);
    free(stream->gather);
    memset(stream, 0, sizeof *stream);
}

static uint32_t slot_of(const cradle_stream *stream, uint64_t step) {
    return (uint32_t)(step & (stream->capacity - 1u));
}

void cradle_stream_append(cradle_stream *stream, uint64_t step, const uint8_t *snapshot, uint8_t epoch,
                          bool has_hash, uint64_t hash) {
    if (!stream->started) {
        stream->first = stream->end = step;
        stream->started = true;
    }
    assert(step == stream->end); /* the game thread's steps are contiguous */
    if (stream->end - stream->first == stream->capacity) stream->first++;
    uint32_t i = slot_of(stream, step);
    memcpy(stream->snapshots + (size_t)i * stream->snapshot_size, snapshot, stream->snapshot_size);
    stream->epochs[i] = epoch;
    stream->has_hash[i] = has_hash ? 1u : 0u;
    stream->hashes[i] = hash;
    stream->end = step + 1u;
}

void cradle_stream_start(cradle_stream *stream, uint32_t peer, uint64_t start_step, uint64_t now_ns) {
    assert(peer < stream->peer_count);
    if (!stream->started) {
        stream->first = stream->end = start_step;
        stream->started = true;
    }
    assert(start_step >= stream->first && start_step <= stream->end);
    stream->peers[peer] = (cradle_stream_peer){
        .active = true, .acked = start_step, .sent_next = start_step, .progress_ns = now_ns, .ack_every = 1};
}

void cradle_stream_pace(cradle_stream *stream, uint32_t peer, uint32_t ack_every, uint64_t ack_wait_ns) {
    assert(peer < stream->peer_count && stream->peers[peer].active && ack_every >= 1);
    stream->peers[peer].ack_every = ack_every;
    stream->peers[peer].ack_wait_ns = ack_wait_ns;
}

void cradle_stream_stop(cradle_stream *stream, uint32_t peer) {
    assert(peer < stream->peer_count);
    stream->peers[peer].active = false;
}

bool cradle_stream_active(const cradle_stream *stream, uint32_t peer) {
    return peer < stream->peer_count && stream->peers[peer].active;
}

void cradle_stream_ack(cradle_stream *stream, uint32_t peer, uint64_t ack, uint64_t now_ns) {
    assert(peer < stream->peer_count);
    cradle_stream_peer *p = &stream->peers[peer];
    if (!p->active || ack <= p->acked) return; /* old or duplicated: acks travel unordered */
    if (ack > p->sent_next) {
        stream->stats.bad_acks++;
        return;
    }
    p->acked = ack;
    p->progress_ns = now_ns;
    p->backoff = 0;
}

/* How long after the last repair the next may begin, the ack still where it
 * was: stall, doubled for each repair since it last moved, capped. */
static uint64_t repair_gap(const cradle_stream_peer *p, uint64_t stall_ns) {
    uint64_t cap = stall_ns > CRADLE_STREAM_BACKOFF_CAP_NS ? stall_ns : CRADLE_STREAM_BACKOFF_CAP_NS;
    uint64_t gap = stall_ns;
    for (uint8_t i = 0; i < p->backoff && gap < cap; i++) gap *= 2u;
    return gap < cap ? gap : cap;
}

bool cradle_stream_done(const cradle_stream *stream, uint32_t peer) {
    assert(peer < stream->peer_count);
    const cradle_stream_peer *p = &stream->peers[peer];
    return !p->active || p->acked >= stream->end;
}

static uint32_t step_bytes(const cradle_stream *stream, uint64_t step) {
    return stream->snapshot_size + (stream->has_hash[slot_of(stream, step)] ? CRADLE_WIRE_STEPS_HASH_BYTES : 0u);
}

static uint8_t epoch_of(const cradle_stream *stream, uint64_t step) {
    return stream->epochs[slot_of(stream, step)];
}

/* The end of the longest run of steps from lo that stays in lo's epoch,
 * holds at most STEPS_MAX steps and fits budget bytes (adds them to *used);
 * at least one step (payload_max always fits one). */
static uint64_t extend_forward(const cradle_stream *stream, uint64_t lo, uint32_t budget, uint32_t *used) {
    uint8_t epoch = epoch_of(stream, lo);
    uint64_t hi = lo;
    while (hi < stream->end && hi - lo < CRADLE_WIRE_STEPS_MAX && epoch_of(stream, hi) == epoch &&
           *used + step_bytes(stream, hi) <= budget) {
        *used += step_bytes(stream, hi);
        hi++;
    }
    return hi == lo ? lo + 1u : hi;
}

/* Encodes steps [lo, hi) (one epoch, within the history) as one STEPS. */
static int encode_range(cradle_stream *stream, uint64_t lo, uint64_t hi, uint8_t *out, size_t capacity,
                        size_t *written) {
    cradle_wire_message m = {.type = CRADLE_WIRE_STEPS};
    cradle_wire_steps *s = &m.as.steps;
    s->first_step = lo;
    s->epoch = epoch_of(stream, lo);
    s->count = (uint8_t)(hi - lo);
    s->snapshot_size = (uint16_t)stream->snapshot_size;
    /* The snapshots may wrap around the ring: gather them in order first. */
    for (uint64_t step = lo; step < hi; step++) {
        uint32_t i = slot_of(stream, step);
        memcpy(stream->gather + (size_t)(step - lo) * stream->snapshot_size,
               stream->snapshots + (size_t)i * stream->snapshot_size, stream->snapshot_size);
        if (stream->has_hash[i])
            s->hashes[s->hash_count++] = (cradle_wire_hash){.offset = (uint8_t)(step - lo), .hash = stream->hashes[i]};
    }
    s->snapshots = stream->gather;
    return cradle_wire_encode(out, capacity, written, &m);
}

int cradle_stream_next(cradle_stream *stream, uint32_t peer, uint64_t now_ns, uint64_t repair_ns, uint8_t *out,
                       size_t capacity, size_t *written) {
    assert(peer < stream->peer_count && repair_ns > 0 && capacity >= stream->payload_max);
    *written = 0;
    cradle_stream_peer *p = &stream->peers[peer];
    if (!p->active) return 0;
    if (p->acked < stream->first) {
        stream->stats.fell_behind++;
        p->active = false;
        return CRADLE_EFULL;
    }
    uint32_t budget = stream->payload_max - CRADLE_WIRE_STEPS_HEADER_BYTES;
    uint64_t lo, hi;
    if (p->sent_next < stream->end) {
        /* New steps forward from sent_next, then older unacknowledged ones
         * backward, as many as fit, in one epoch. */
        lo = p->sent_next;
        uint8_t epoch = epoch_of(stream, lo);
        uint32_t used = 0;
        hi = extend_forward(stream, lo, budget, &used);
        /* The last ack_every - 1 steps sent are in flight, not lost: the peer
         * acks them together with the next. */
        bool overdue = p->acked + (p->ack_every - 1u) < lo;
        while (overdue && lo > p->acked && lo > stream->first && hi - lo < CRADLE_WIRE_STEPS_MAX &&
               epoch_of(stream, lo - 1u) == epoch && used + step_bytes(stream, lo - 1u) <= budget) {
            lo--;
            used += step_bytes(stream, lo);
        }
        if (p->acked == p->sent_next) p->progress_ns = now_ns; /* unacknowledged from now */
        stream->stats.steps_new += hi - p->sent_next;
        stream->stats.steps_repeated += p->sent_next - lo;
        p->sent_next = hi;
    } else {
        uint64_t stall_ns = repair_ns + p->ack_wait_ns;
        if (p->acked < stream->end && now_ns - p->progress_ns >= stall_ns &&
            now_ns - p->repair_ns >= repair_gap(p, stall_ns)) {
            p->repair_ns = now_ns;
            p->repair_next = p->acked;
            p->repairing = true;
            if (p->backoff < 32u) p->backoff++;
            stream->stats.repairs++;
        }
        lo = p->repair_next > p->acked ? p->repair_next : p->acked;
        if (!p->repairing || lo >= p->sent_next) {
            p->repairing = false;
            return 0;
        }
        uint32_t used = 0;
        hi = extend_forward(stream, lo, budget, &used);
        stream->stats.steps_repeated += hi - lo;
        p->repair_next = hi;
    }
    int rc = encode_range(stream, lo, hi, out, capacity, written);
    assert(rc == 0); /* payload_max fits the range and capacity >= payload_max */
    if (rc != 0) return rc;
    stream->stats.messages++;
    return 0;
}
