#ifndef CRADLE_SERVER_STREAM_H
#define CRADLE_SERVER_STREAM_H
/*
 * stream: delivers the step stream to every peer over an unreliable,
 * unsequenced channel, so that one lost datagram delays nothing behind it
 * (a reliable ordered channel stalls every later step until the lost one is
 * resent, and under heavy loss falls further behind for good).
 *
 * The network thread appends each step the game thread produced (snapshot,
 * build epoch, state hash when the step has one) to a history ring. Each
 * admitted peer has two positions:
 *   acked      the first step it has not confirmed (INPUT's ack: it holds
 *              every step below);
 *   sent_next  the first step never sent to it.
 * cradle_stream_next() writes the STEPS message a peer should get now:
 *   - the new steps (sent_next onwards) first, in messages that fit one
 *     datagram (payload_max bytes), each filled up with the unacknowledged
 *     steps just before them: a lost datagram's steps ride in the next ones.
 *     A peer that acks every N steps (a spectator, cradle/ackpace.h) gets
 *     that fill only when more than N - 1 steps wait for its ack;
 *   - a repair when the peer's ack has not moved for repair_ns (plus the
 *     longest the peer holds an ack: the stall) while steps are
 *     unacknowledged; while it still does not move, each repair after the
 *     first waits twice as long as the one before (at most a second, or the
 *     stall when that is longer), so a peer too busy to ack is not buried
 *     in repairs that make it busier still. A repair sends every
 *     step from acked to sent_next again, in as
 *     many messages as that takes (at most the history: 4,096 steps, about
 *     64 KiB for the sample game). A step lost in every datagram that carried
 *     it, the last steps before a pause, or everything since a WELCOME that
 *     took seconds to arrive (the client drops steps that come before it):
 *     one message per round trip would repair that slower than new steps
 *     are made, and the peer would never catch up.
 * On a clean link the ack of step s arrives before step s + 1 is sent (for
 * a peer that acks every N steps: its ack of s before s + N), so a message carries
 * the one new step and nothing else.
 *
 * A message never mixes build epochs (a client waits for the reliable RELOAD
 * at the boundary). A peer whose ack has fallen out of the history cannot be
 * served: cradle_stream_next returns CRADLE_EFULL and the caller drops the
 * peer, which may rejoin (a join starts from a state block, not history).
 *
 * Pure: no clock (the caller passes now), no I/O. init allocates the history
 * and the peer table; nothing else allocates. One thread owns a stream.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cradle/errors.h"

#define CRADLE_STREAM_PAYLOAD_DEFAULT 1000u /* bytes of one STEPS: one datagram with headers */
#define CRADLE_STREAM_HISTORY_BYTES ((size_t)4 << 20) /* default history budget */
#define CRADLE_STREAM_HISTORY_MIN 256u
#define CRADLE_STREAM_HISTORY_MAX 4096u /* 68 s at 60 steps/s */
#define CRADLE_STREAM_BACKOFF_CAP_NS 1000000000ull /* the longest wait between repairs (unless the stall is longer) */

typedef struct cradle_stream_config {
    uint32_t snapshot_size; /* 1..CRADLE_SNAPSHOT_MAX, required */
    uint32_t peers;         /* peer slots, >= 1, required */
    uint32_t history_steps; /* a power of two; 0: as many as fit 4 MiB within 256..4096 */
    uint32_t payload_max;   /* 0: CRADLE_STREAM_PAYLOAD_DEFAULT; raised to fit one step */
} cradle_stream_config;

typedef struct cradle_stream_stats {
    uint64_t messages;       /* STEPS written */
    uint64_t steps_new;      /* steps sent for the first time */
    uint64_t steps_repeated; /* steps sent again (redundancy and repairs) */
    uint64_t repairs;        /* repairs begun because an ack stalled */
    uint64_t fell_behind;    /* peers whose ack left the history */
    uint64_t bad_acks;       /* acks beyond what was sent to the peer */
} cradle_stream_stats;

typedef struct cradle_stream_peer {
    bool active;
    uint64_t acked;
    uint64_t sent_next;
    uint64_t progress_ns; /* when acked last moved, or steps began to wait for an ack */
    uint64_t repair_ns;   /* when the last repair began */
    uint8_t backoff;      /* repairs begun since the ack last moved (capped) */
    bool repairing;       /* a repair is under way: */
    uint64_t repair_next; /* the next step it sends (done at sent_next) */
    uint32_t ack_every;   /* the peer acks every this many steps (ackpace.h) */
    uint64_t ack_wait_ns; /* and holds a step at most this long unacked */
} cradle_stream_peer;

/* Caller-owned; fields are read-only outside stream.c. */
typedef struct cradle_stream {
    uint32_t snapshot_size;
    uint32_t capacity; /* history steps, a power of two */
    uint32_t payload_max;
    uint32_t peer_count;
    uint8_t *snapshots; /* capacity * snapshot_size */
    uint64_t *hashes;
    uint8_t *epochs;
    uint8_t *has_hash;
    uint8_t *gather;    /* one message's snapshots in step order */
    uint64_t first, end; /* the history holds steps [first, end) */
    bool started;
    cradle_stream_peer *peers;
    cradle_stream_stats stats;
} cradle_stream;

/* Returns 0, CRADLE_EINVAL (a config value out of range) or CRADLE_ENOMEM. */
CRADLE_MUST_CHECK int cradle_stream_init(cradle_stream *stream, const cradle_stream_config *config);
void cradle_stream_deinit(cradle_stream *stream);

/* Appends step (the next one: equal to end once anything was appended or a
 * peer started) with its snapshot (snapshot_size bytes). The oldest step
 * leaves the history when it is full. */
void cradle_stream_append(cradle_stream *stream, uint64_t step, const uint8_t *snapshot, uint8_t epoch,
                          bool has_hash, uint64_t hash);

/* The peer receives the stream from start_step (the WELCOME's; equal to end
 * once the stream has started). */
void cradle_stream_start(cradle_stream *stream, uint32_t peer, uint64_t start_step, uint64_t now_ns);
/* The started peer acks every ack_every (>= 1) steps, holding a step at
 * most ack_wait_ns unacked (a spectator: cradle/ackpace.h). Until this is
 * called a peer acks every step at once. */
void cradle_stream_pace(cradle_stream *stream, uint32_t peer, uint32_t ack_every, uint64_t ack_wait_ns);
void cradle_stream_stop(cradle_stream *stream, uint32_t peer);
bool cradle_stream_active(const cradle_stream *stream, uint32_t peer);

/* An ack from the peer (untrusted): taken when it moves acked forward and
 * does not pass sent_next; an ack beyond sent_next is counted and ignored. */
void cradle_stream_ack(cradle_stream *stream, uint32_t peer, uint64_t ack, uint64_t now_ns);

/* True when the peer has confirmed every step of the history. */
bool cradle_stream_done(const cradle_stream *stream, uint32_t peer);

/* Writes the next STEPS message for the peer into out (capacity >=
 * payload_max) and its length into *written; *written is 0 when there is
 * nothing to send now. Call again until it is 0 (each call makes progress).
 * repair_ns (> 0) is how long an ack may stall before a repair.
 * Returns 0, or CRADLE_EFULL when the peer's ack left the history. */
CRADLE_MUST_CHECK int cradle_stream_next(cradle_stream *stream, uint32_t peer, uint64_t now_ns,
                                         uint64_t repair_ns, uint8_t *out, size_t capacity,
                                         size_t *written);

#endif
