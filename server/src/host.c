#include "host.h"

#include "agones.h"
#include "broadcast.h"

#include "dev_commands.h"
#include "host_internal.h"
#include "log_index.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cradle/contract.h"
#include "cradle/dev.h"
#include "cradle/hash.h"
#include "cradle/systime.h"
#include "cradle/wire.h"
#include "dev_events.h"

#define RELOAD_POLL_NS 200000000ull
#define TRIAL_POLL_NS 2000000ull /* how often a running reload trial is looked at */
#define BROADCAST_FINISH_MS 1000u /* the broadcast's last uploads after the trailer */
#define IDLE_BATCH 12u /* steps run at once while no peer takes the stream: one wake per reload poll at 60/s */
#define HELLO_TIMEOUT_NS 5000000000ull
#define PREDICTION_LINE_NS 1000000000ull /* a player's prediction line on the event stream, at most once a second */
#define OUT_PUSH_PATIENCE_NS 2000000000ull /* a step command's wait for room, at most */
#define OUT_STEP_ROOM 32u /* free outbound slots a paced turn needs to run its steps */

void cradle_server_say(cradle_server_host *host, const char *level, const char *event, const char *format,
                       ...) {
    char message[512];
    va_list ap;
    va_start(ap, format);
    vsnprintf(message, sizeof message, format, ap);
    va_end(ap);
    cradle_server_print(host ? host->options : NULL, level, event, host ? host->sim.next_step : 0, message);
    if (host) cradle__server_publish_said(host, level, event, message);
}

void cradle_server_print(const cradle_server_options *options, const char *level, const char *event,
                         uint64_t step, const char *message) {
    if (options && options->log_json) {
        char line[1024];
        cradle_writer w;
        cradle_writer_init(&w, line, sizeof line - 1);
        cradle_writer_text(&w, "{\"level\":");
        cradle_writer_json_string(&w, level, strlen(level));
        cradle_writer_text(&w, ",\"event\":");
        cradle_writer_json_string(&w, event, strlen(event));
        cradle_writer_format(&w, ",\"step\":%" PRIu64 ",\"message\":", step);
        cradle_writer_json_string(&w, message, strlen(message));
        cradle_writer_text(&w, "}\n");
        fwrite(line, 1, w.length, stderr);
    } else {
        fprintf(stderr, "cradle-server: %s: %s\n", level, message);
    }
}

/* ---- outbound --------------------------------------------------------------- */

/* The policy for a full ring to the network thread (which drains it every
 * turn): the game thread never sleeps on it. A paced turn runs its steps
 * only when OUT_STEP_ROOM slots are free (has_room_for_steps): otherwise
 * the steps wait for the next turn, and the clock drops what a long stall
 * owes (dropped_steps). A join's state streams while 8 are free
 * (stream_join). What still finds the ring full, a reply or a control, is
 * dropped and counted (dropped_out): the peer's handshake times out and it
 * tries again. Only a step command (commanded mode, the dev protocol) waits
 * for room, up to OUT_PUSH_PATIENCE_NS (wait_for_room). */
static void push_out(cradle_server_host *host) {
    if (!cradle_ring_push(&host->net->out, &host->out_scratch)) host->dropped_out++;
    cradle_server_net_wake(host->net); /* every message: steps go out at once */
}

static bool has_room_for_steps(const cradle_server_host *host) {
    return cradle_ring_count(&host->net->out) + OUT_STEP_ROOM <= cradle_ring_capacity(&host->net->out);
}

/* A step command's wait for the network thread to take what the steps
 * before sent: woken, it drains the ring. Gives up after the patience (the
 * steps then run, and what finds no room is counted in dropped_out). */
static void wait_for_room(cradle_server_host *host) {
    uint64_t start = cradle_mono_ns();
    while (!has_room_for_steps(host) && cradle_mono_ns() - start < OUT_PUSH_PATIENCE_NS) {
        cradle_server_net_wake(host->net);
        cradle_sleep_ns(100000);
    }
}

/* Queues m, with the bytes it points to, for peer (or broadcast): the
 * network thread encodes it. */
static void queue_message(cradle_server_host *host, uint16_t peer, uint32_t generation,
                          const cradle_wire_message *m, uint8_t flags) {
    cradle_server_out *out = &host->out_scratch;
    out->message = *m;
    size_t held = cradle_wire_detach(&out->message, out->payload, sizeof out->payload);
    assert(held != SIZE_MAX); /* the host builds only messages whose bytes fit a slot */
    (void)held;
    out->peer = peer;
    out->generation = generation;
    out->flags = flags;
    push_out(host);
}

static void send_message(cradle_server_host *host, uint16_t peer, uint32_t generation,
                         const cradle_wire_message *m, uint8_t flags) {
    queue_message(host, peer, generation, m, flags);
}

void cradle__server_send_to_peer(cradle_server_host *host, uint16_t peer, const cradle_wire_message *m,
                                 uint8_t flags) {
    send_message(host, peer, host->peers[peer].generation, m, flags);
}

void cradle__server_broadcast(cradle_server_host *host, const cradle_wire_message *m, uint8_t flags) {
    send_message(host, CRADLE_SERVER_BROADCAST, 0, m, flags);
}

static void disconnect_peer(cradle_server_host *host, uint16_t peer) {
    cradle_server_out *out = &host->out_scratch;
    out->peer = peer;
    out->generation = host->peers[peer].generation;
    out->flags = CRADLE_SERVER_OUT_CONTROL | CRADLE_SERVER_OUT_DISCONNECT;
    out->message.type = 0;
    push_out(host);
}

/* Sends the STEPS being packed to every admitted peer. */
/* Whether anyone takes the step stream: a player, a spectator, or a peer
 * whose join streams (it gets the STEPS from its start step on). */
static bool has_listeners(const cradle_server_host *host) {
    for (uint32_t p = 0; p < host->peer_count; p++) {
        cradle_server_peer_state s = host->peers[p].state;
        if (s == CRADLE_SERVER_PEER_PLAYER || s == CRADLE_SERVER_PEER_SPECTATOR || s == CRADLE_SERVER_PEER_WAITING)
            return true;
    }
    return false;
}

void cradle__server_flush_steps(cradle_server_host *host) {
    if (host->pending_count == 0) return;
    cradle_wire_message m = {.type = CRADLE_WIRE_STEPS};
    m.as.steps.first_step = host->pending_first;
    m.as.steps.epoch = host->epoch;
    m.as.steps.count = (uint8_t)host->pending_count;
    m.as.steps.snapshot_size = (uint16_t)host->snapshot_size;
    m.as.steps.snapshots = host->pending;
    m.as.steps.hash_count = (uint8_t)host->pending_hash_count;
    memcpy(m.as.steps.hashes, host->pending_hashes, host->pending_hash_count * sizeof(cradle_wire_hash));
    queue_message(host, CRADLE_SERVER_BROADCAST, 0, &m, CRADLE_SERVER_OUT_RELIABLE);
    host->pending_count = 0;
    host->pending_hash_count = 0;
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void refuse(cradle_server_host *host, uint16_t peer, cradle_wire_refusal reason,
                   const char *format, ...);
static void refuse(cradle_server_host *host, uint16_t peer, cradle_wire_refusal reason, const char *format,
                   ...) {
    cradle_wire_message m = {.type = CRADLE_WIRE_REFUSE};
    m.as.refuse.reason = (uint8_t)reason;
    char text[CRADLE_WIRE_TEXT_MAX + 1];
    va_list ap;
    va_start(ap, format);
    vsnprintf(text, sizeof text, format, ap);
    va_end(ap);
    cradle_wire_set_text(m.as.refuse.text, sizeof m.as.refuse.text, text);
    cradle__server_send_to_peer(host, peer, &m, CRADLE_SERVER_OUT_RELIABLE | CRADLE_SERVER_OUT_DISCONNECT);
    host->peers[peer].state = CRADLE_SERVER_PEER_CLOSING; /* until its disconnect arrives */
    host->refusals++;
    cradle_server_say(host, "info", "refused", "peer %u refused (%s): %s", (unsigned)peer,
                      cradle_wire_refusal_name((int)reason), text);
}

/* ---- the step ----------------------------------------------------------------- */

static void build_snapshot(cradle_server_host *host, uint64_t step) {
    uint8_t *snap = host->snapshot;
    memset(snap, 0, host->snapshot_size);
    for (uint32_t s = 0; s < host->players; s++) {
        cradle_server_slot *slot = &host->slots[s];
        if (!slot->occupied || slot->joined_step > step) continue;
        snap[s / 8u] = (uint8_t)(snap[s / 8u] | (1u << (s % 8u)));
        uint8_t *dst = snap + CRADLE_PRESENCE_BYTES(host->max_players) + s * host->input_bytes;
        uint32_t w = (uint32_t)(step % CRADLE_SERVER_INPUT_WINDOW);
        if (slot->window_step[w] == step) {
            memcpy(slot->last, slot->window[w], host->input_bytes);
            slot->on_time++;
            slot->has_input = true;
        } else if (slot->has_input) {
            slot->late++; /* its last input is repeated */
        }
        memcpy(dst, slot->last, host->input_bytes);
    }
}

static void report_log_error(cradle_server_host *host, int rc) {
    if (rc == 0 || host->log_failed) return;
    host->log_failed = true;
    cradle_server_say(host, "error", "log", "session log write failed (%s): %s; retrying",
                      cradle_strerror(rc), host->log.message);
}

/* The state after hash step s, kept for a desync report about it. */
static void keep_state(cradle_server_host *host, uint64_t s) {
    uint32_t slot = host->kept_next++ % CRADLE_SERVER_KEPT_STATES;
    memcpy(host->kept + (size_t)slot * host->state_capacity, host->sim.state, host->sim.contract->state_size);
    host->kept_step[slot] = s;
}

/* A client reports a desync at hash step `step`: the server's own state
 * there goes beside the log (<log>.desync-<step>.state, once), for
 * cradle-replay --desync to compare field by field. */
static void write_kept_state(cradle_server_host *host, uint64_t step) {
    if (!host->log_open || !host->kept) return;
    for (uint32_t k = 0; k < CRADLE_SERVER_KEPT_STATES; k++) {
        if (host->kept_step[k] != step) continue;
        char path[CRADLE_SERVER_PATH_MAX + 48];
        snprintf(path, sizeof path, "%s.desync-%" PRIu64 ".state", host->options->log, step);
        FILE *f = fopen(path, "wbx"); /* once: a second report of the step finds it there */
        if (!f) return;
        size_t n = host->sim.contract->state_size;
        bool ok = fwrite(host->kept + (size_t)k * host->state_capacity, 1, n, f) == n;
        ok = (fclose(f) == 0) && ok;
        if (ok) cradle_server_say(host, "info", "desync", "kept the server's state at step %" PRIu64 " in %s (cradle-replay --desync)", step, path);
        else cradle_server_say(host, "error", "desync", "cannot write the server's state to %s", path);
        return;
    }
    cradle_server_say(host, "info", "desync", "the server no longer keeps its state at step %" PRIu64
                      " (only the last %u hash steps)", step, (unsigned)CRADLE_SERVER_KEPT_STATES);
}

/* A player's new input delay (adaptive: input_delay.h): the client is told
 * and sends for (last step received) + delay from now on. */
static void set_input_delay(cradle_server_host *host, uint32_t s, uint16_t to) {
    cradle_server_slot *slot = &host->slots[s];
    cradle_wire_message m = {.type = CRADLE_WIRE_DELAY, .as.delay.input_delay = to};
    cradle__server_send_to_peer(host, slot->peer, &m, CRADLE_SERVER_OUT_RELIABLE);
    cradle_server_say(host, "info", "delay",
                      "slot %u: input delay %u -> %u steps (its inputs arrived %" PRId64 " steps %s)", (unsigned)s,
                      (unsigned)slot->input_delay, (unsigned)to,
                      slot->delay.last_slack < 0 ? -slot->delay.last_slack : slot->delay.last_window_min,
                      slot->delay.last_slack < 0 ? "late" : "early at least");
    slot->input_delay = to;
}

/* Each adaptive player's delay, as step `step` is about to run. */
static void tick_input_delays(cradle_server_host *host, uint64_t step) {
    for (uint32_t s = 0; s < host->players; s++) {
        cradle_server_slot *slot = &host->slots[s];
        if (!slot->occupied || !slot->adaptive || host->peers[slot->peer].state != CRADLE_SERVER_PEER_PLAYER)
            continue;
        slot->delay.rtt_us = host->peers[slot->peer].rtt_us;
        uint16_t to = cradle_input_delay_tick(&slot->delay, step);
        if (to) set_input_delay(host, s, to);
    }
}

static void run_step(cradle_server_host *host) {
    uint64_t s = host->sim.next_step;
    uint64_t started = host->step_watchers ? cradle_mono_ns() : 0;
    tick_input_delays(host, s);
    build_snapshot(host, s);
    if (host->log_open) {
        host->step_mark = cradle_log_writer_mark(&host->log); /* what a rescue keeps if step s never returns */
        report_log_error(host, cradle_log_writer_append_step(&host->log, s, host->snapshot));
        if (host->index && cradle_server_log_index_due(host->index, s) && !host->log.sealed)
            host->index_block = cradle_log_writer_block_place(&host->log); /* the block step s is in */
    }
    atomic_store_explicit(&host->in_step, s + 1u, memory_order_release);
    cradle_sim_step(&host->sim, host->snapshot);
    atomic_store_explicit(&host->in_step, 0, memory_order_release);
    memcpy(host->recent + (size_t)host->recent_next * host->snapshot_size, host->snapshot, host->snapshot_size);
    host->recent_next = (host->recent_next + 1u) % CRADLE_TRIAL_DEFAULT_STEPS;
    if (host->recent_count < CRADLE_TRIAL_DEFAULT_STEPS) host->recent_count++;

    if (host->pending_count == host->steps_per_message) cradle__server_flush_steps(host);
    if (host->pending_count == 0) host->pending_first = s;
    memcpy(host->pending + (size_t)host->pending_count * host->snapshot_size, host->snapshot,
           host->snapshot_size);
    host->pending_count++;
    if ((s + 1) % host->options->hash_interval == 0) {
        uint64_t h = cradle_sim_hash(&host->sim);
        host->pending_hashes[host->pending_hash_count++] =
            (cradle_wire_hash){.offset = (uint8_t)(s - host->pending_first), .hash = h};
        host->last_hash_step = s;
        host->last_hash = h;
        if (host->log_open) report_log_error(host, cradle_log_writer_append_hash(&host->log, s, h));
        if (host->kept) keep_state(host, s);
        if (host->broadcast && cradle_server_broadcast_keyframe_due(host->broadcast, s))
            cradle_server_broadcast_keyframe(host->broadcast, s, h, host->sim.state, host->sim.contract->state_size,
                                             host->log.sequence, host->log.block_first_step,
                                             host->sim.contract->build_id);
    }
    if (host->index && cradle_server_log_index_due(host->index, s) && host->index_block.first_step <= s &&
        host->index_block.offset)
        cradle_server_log_index_put(host->index, s, host->index_block, host->sim.contract->build_id,
                                    cradle_log_writer_build_file_hash(&host->log), host->sim.state,
                                    host->sim.state_capacity);
    host->index_block.offset = 0;
    if (host->broadcast) cradle_server_broadcast_live(host->broadcast, s + 1u);
    if (host->step_watchers) cradle__server_publish_step(host, cradle_mono_ns() - started);
}

/* ---- joining ---------------------------------------------------------------------- */

static uint16_t input_delay_for(const cradle_server_host *host, const cradle_server_peer *peer) {
    if (host->options->input_delay != CRADLE_SERVER_INPUT_DELAY_AUTO)
        return (uint16_t)host->options->input_delay;
    /* A client sends the input for (last step received + delay), and the
     * server is a whole round trip past that step when it arrives: the round
     * trip in steps, rounded up, plus one step of slack. */
    uint64_t rate = host->sim.contract->steps_per_second;
    uint64_t delay = ((uint64_t)peer->lowest_rtt_ms * rate + 999u) / 1000u + 1u;
    return (uint16_t)(delay > CRADLE_SERVER_MAX_INPUT_DELAY ? CRADLE_SERVER_MAX_INPUT_DELAY : delay);
}

/* Sends WELCOME and starts the state stream; the peer becomes a player or a
 * spectator from step next_step on. */
static void admit(cradle_server_host *host, uint16_t p) {
    cradle_server_peer *peer = &host->peers[p];
    cradle__server_flush_steps(host); /* earlier steps are not this peer's */
    uint64_t start = host->sim.next_step;
    bool state_follows = start > 0 || host->sim.data_applied > 0; /* what init() alone gives, or not */
    uint32_t state_size = host->sim.contract->state_size;
    size_t packed = 0;
    if (state_follows) {
        /* packed: the state's empty pools and zeroed fields need not cross
         * the link (vanguard's 961,664 bytes travel as about 10 KB) */
        packed = cradle_state_pack_encode(&host->join_pack, host->sim.state, state_size, host->join_state,
                                          cradle_state_pack_bound(host->state_capacity));
        if (packed == 0) {
            /* zstd out of memory: its workspace, made at start-up for the
             * first build's state, had to grow for a larger one's */
            cradle__server_release_peer(host, p, "the state block could not be packed");
            refuse(host, p, CRADLE_WIRE_REFUSE_BUSY, "the server is out of memory for the state block; try again");
            return;
        }
    }
    cradle_wire_message m = {.type = CRADLE_WIRE_WELCOME};
    cradle_wire_welcome *w = &m.as.welcome;
    w->slot = peer->spectator ? (uint8_t)CRADLE_WIRE_SPECTATOR : peer->slot;
    w->players = (uint8_t)host->players;
    w->max_players = (uint8_t)host->max_players;
    w->input_bytes = (uint8_t)host->input_bytes;
    w->state_size = host->sim.contract->state_size;
    w->steps_per_second = host->sim.contract->steps_per_second;
    w->source_frames_per_second = host->sim.contract->source_frames_per_second;
    w->seed = host->options->seed;
    w->input_delay = input_delay_for(host, peer);
    w->hash_interval = host->options->hash_interval;
    w->start_step = start;
    w->epoch = host->epoch;
    w->state_follows = state_follows;
    cradle_wire_set_text(w->game, sizeof w->game, host->sim.contract->name);
    cradle_wire_set_text(w->build_id, sizeof w->build_id, host->sim.contract->build_id);
    cradle__server_send_to_peer(host, p, &m, CRADLE_SERVER_OUT_RELIABLE);
    if (state_follows) {
        assert(packed <= CRADLE_WIRE_STATE_PACKED_MAX); /* zstd's bound on a state of at most STATE_MAX */
        host->join_size = (uint32_t)packed;
        host->join_active = true;
        host->join_peer = p;
        host->join_generation = peer->generation;
        host->join_offset = 0;
        host->join_step = start;
        host->join_hash = cradle_hash64(host->sim.state, state_size);
    }
    if (peer->spectator) {
        peer->state = CRADLE_SERVER_PEER_SPECTATOR;
    } else {
        peer->state = CRADLE_SERVER_PEER_PLAYER;
        cradle_server_slot *slot = &host->slots[peer->slot];
        slot->joined_step = start;
        slot->input_delay = w->input_delay;
        /* paced only: in commanded mode steps follow commands, not time, so
           how early an input arrives says nothing of the link */
        slot->adaptive = host->options->input_delay == CRADLE_SERVER_INPUT_DELAY_AUTO &&
                         host->options->mode == CRADLE_SERVER_PACED;
        if (slot->adaptive)
            cradle_input_delay_init(&slot->delay, w->input_delay, CRADLE_SERVER_MAX_INPUT_DELAY,
                                    host->sim.contract->steps_per_second, start);
    }
    host->joins++;
    char as[32];
    if (peer->spectator)
        snprintf(as, sizeof as, "a spectator");
    else
        snprintf(as, sizeof as, "the player in slot %u", (unsigned)peer->slot);
    char block[64] = "";
    if (w->state_follows)
        snprintf(block, sizeof block, ", state block follows (%u bytes packed from %u)", (unsigned)host->join_size,
                 (unsigned)host->sim.contract->state_size);
    cradle_server_say(host, "info", "join", "peer %u joined as %s at step %" PRIu64 "%s (input delay %u)",
                      (unsigned)p, as, start, block, (unsigned)w->input_delay);
}

/* Streams the join state while the outbound ring has room; admits the next
 * waiting peer once the stream is done. */
static void stream_join(cradle_server_host *host) {
    while (host->join_active) {
        if (cradle_ring_count(&host->net->out) + 8u >= cradle_ring_capacity(&host->net->out)) return;
        uint32_t left = host->join_size - host->join_offset;
        uint16_t length = (uint16_t)(left < CRADLE_WIRE_STATE_CHUNK_MAX ? left : CRADLE_WIRE_STATE_CHUNK_MAX);
        cradle_wire_message m = {.type = CRADLE_WIRE_STATE};
        m.as.state = (cradle_wire_state){.step = host->join_step,
                                         .hash = host->join_hash,
                                         .total = host->join_size,
                                         .offset = host->join_offset,
                                         .length = length,
                                         .bytes = host->join_state + host->join_offset};
        send_message(host, host->join_peer, host->join_generation, &m, CRADLE_SERVER_OUT_RELIABLE);
        host->join_offset += length;
        if (host->join_offset == host->join_size) host->join_active = false;
    }
    /* The next waiting peer, in arrival order. */
    uint16_t next = CRADLE_SERVER_BROADCAST;
    for (uint16_t p = 0; p < host->peer_count; p++) {
        if (host->peers[p].state != CRADLE_SERVER_PEER_WAITING) continue;
        if (next == CRADLE_SERVER_BROADCAST || host->peers[p].wait_order < host->peers[next].wait_order)
            next = p;
    }
    if (next != CRADLE_SERVER_BROADCAST) admit(host, next);
}


/* A HELLO asks for the occupied slot: when both connections carry verified
 * tokens naming the same client, the new one is that player back (its old
 * connection died before this server noticed: a crash, a changed address, a
 * handshake it gave up on). The old connection is told and dropped, and the
 * slot is free for the new one. Returns whether it was. */
static bool take_over(cradle_server_host *host, uint16_t p, uint32_t slot) {
    uint16_t old = host->slots[slot].peer;
    const cradle_server_peer *now = &host->peers[p], *before = &host->peers[old];
    if (old == p || !now->identified || !before->identified || now->client_id != before->client_id) return false;
    cradle_wire_message m = {.type = CRADLE_WIRE_BYE};
    m.as.bye.reason = CRADLE_WIRE_BYE_KICKED;
    cradle_wire_set_text(m.as.bye.text, sizeof m.as.bye.text, "replaced by a new connection of the same client");
    cradle__server_flush_steps(host);
    cradle__server_send_to_peer(host, old, &m, CRADLE_SERVER_OUT_RELIABLE | CRADLE_SERVER_OUT_DISCONNECT);
    char why[64];
    snprintf(why, sizeof why, "client %" PRIu64 " connected again as peer %u", now->client_id, (unsigned)p);
    cradle__server_release_peer(host, old, why);
    host->takeovers++;
    return true;
}

static void on_hello(cradle_server_host *host, uint16_t p, const cradle_wire_message *m, bool other_version) {
    cradle_server_peer *peer = &host->peers[p];
    if (peer->state != CRADLE_SERVER_PEER_CONNECTED) return; /* a repeated HELLO: ignore */
    if (other_version) {
        refuse(host, p, CRADLE_WIRE_REFUSE_PROTOCOL, "protocol version differs: server %u, client %u",
               CRADLE_WIRE_VERSION, (unsigned)m->version);
        return;
    }
    const cradle_wire_hello *h = &m->as.hello;
    if (strcmp(h->game, host->sim.contract->name) != 0) {
        refuse(host, p, CRADLE_WIRE_REFUSE_GAME, "server hosts game '%s', client has '%s'",
               host->sim.contract->name, h->game);
        return;
    }
    if (strcmp(h->build_id, host->sim.contract->build_id) != 0) {
        refuse(host, p, CRADLE_WIRE_REFUSE_BUILD, "server runs build '%s', client has '%s'",
               host->sim.contract->build_id, h->build_id);
        return;
    }
    /* The Security layer checks h->credential here; until then any is accepted. */
    if (h->spectator) {
        if (host->spectator_count >= host->options->spectators) {
            refuse(host, p, CRADLE_WIRE_REFUSE_FULL, "no spectator place left (%u)",
                   host->options->spectators);
            return;
        }
        host->spectator_count++;
        peer->spectator = true;
    } else {
        uint32_t slot = CRADLE_WIRE_ANY_SLOT;
        if (h->requested_slot != CRADLE_WIRE_ANY_SLOT) {
            if (h->requested_slot >= host->players) {
                refuse(host, p, CRADLE_WIRE_REFUSE_FULL, "slot %u is beyond the %u player slots",
                       (unsigned)h->requested_slot, host->players);
                return;
            }
            if (host->slots[h->requested_slot].occupied &&
                !take_over(host, p, h->requested_slot)) {
                refuse(host, p, CRADLE_WIRE_REFUSE_FULL, "slot %u is taken", (unsigned)h->requested_slot);
                return;
            }
            slot = h->requested_slot;
        } else {
            for (uint32_t s = 0; s < host->players && slot == CRADLE_WIRE_ANY_SLOT; s++)
                if (!host->slots[s].occupied) slot = s;
            if (slot == CRADLE_WIRE_ANY_SLOT) {
                refuse(host, p, CRADLE_WIRE_REFUSE_FULL, "all %u player slots are taken", host->players);
                return;
            }
        }
        cradle_server_slot *sl = &host->slots[slot];
        memset(sl, 0, sizeof *sl);
        for (uint32_t i = 0; i < CRADLE_SERVER_INPUT_WINDOW; i++) sl->window_step[i] = UINT64_MAX;
        sl->occupied = true;
        sl->peer = p;
        sl->joined_step = UINT64_MAX;
        peer->slot = (uint8_t)slot;
        peer->spectator = false;
    }
    peer->state = CRADLE_SERVER_PEER_WAITING;
    peer->wait_order = host->wait_counter++;
    if (!host->join_active) stream_join(host);
}

void cradle__server_release_peer(cradle_server_host *host, uint16_t p, const char *why) {
    cradle_server_peer *peer = &host->peers[p];
    bool had_slot = peer->state == CRADLE_SERVER_PEER_PLAYER ||
                    (peer->state == CRADLE_SERVER_PEER_WAITING && !peer->spectator);
    bool was_spectator = peer->state == CRADLE_SERVER_PEER_SPECTATOR ||
                         (peer->state == CRADLE_SERVER_PEER_WAITING && peer->spectator);
    if (had_slot) {
        host->slots[peer->slot].occupied = false;
        host->leaves++;
        cradle_server_say(host, "info", "leave", "player in slot %u left (%s); the slot is free",
                          (unsigned)peer->slot, why);
    }
    if (was_spectator) {
        host->spectator_count--;
        cradle_server_say(host, "info", "leave", "spectator (peer %u) left (%s)", (unsigned)p, why);
    }
    if (host->join_active && host->join_peer == p) host->join_active = false;
    peer->state = CRADLE_SERVER_PEER_CLOSING;
}

static void on_input(cradle_server_host *host, uint16_t p, const cradle_wire_input *in) {
    cradle_server_peer *peer = &host->peers[p];
    if (peer->state != CRADLE_SERVER_PEER_PLAYER || in->input_bytes != host->input_bytes) return;
    cradle_server_slot *slot = &host->slots[peer->slot];
    for (uint32_t i = 0; i < in->count; i++) {
        uint64_t step = in->first_step + i;
        if (step < host->sim.next_step || step >= host->sim.next_step + CRADLE_SERVER_INPUT_WINDOW) continue;
        uint32_t w = (uint32_t)(step % CRADLE_SERVER_INPUT_WINDOW);
        slot->window_step[w] = step;
        memcpy(slot->window[w], in->inputs + (size_t)i * in->input_bytes, in->input_bytes);
    }
    if (slot->adaptive && in->count > 0 && slot->joined_step != UINT64_MAX) {
        uint16_t to = cradle_input_delay_observe(&slot->delay, in->first_step + in->count - 1u, host->sim.next_step);
        if (to) set_input_delay(host, peer->slot, to);
    }
}

static void on_event(cradle_server_host *host, const cradle_server_in *in) {
    if (in->peer >= host->peer_count) return;
    cradle_server_peer *peer = &host->peers[in->peer];
    if (in->kind == CRADLE_SERVER_IN_CONNECT) {
        memset(peer, 0, sizeof *peer);
        peer->state = CRADLE_SERVER_PEER_CONNECTED;
        peer->generation = in->generation;
        peer->address = in->address;
        peer->port = in->port;
        peer->rtt_ms = in->rtt_ms;
        peer->lowest_rtt_ms = in->lowest_rtt_ms;
        peer->rtt_us = in->rtt_us;
        peer->connected_ns = host->now_ns;
        peer->identified = in->identified;
        peer->client_id = in->client_id;
        return;
    }
    if (peer->state == CRADLE_SERVER_PEER_FREE || peer->generation != in->generation) return;
    peer->rtt_ms = in->rtt_ms;
    peer->lowest_rtt_ms = in->lowest_rtt_ms;
    peer->rtt_us = in->rtt_us;
    if (in->kind == CRADLE_SERVER_IN_DISCONNECT) {
        cradle__server_release_peer(host, in->peer, "disconnected");
        peer->state = CRADLE_SERVER_PEER_FREE;
        return;
    }
    cradle_wire_message m; /* decoded and checked by the network thread */
    cradle_server_in_message_of(in, &m);
    if (m.type == CRADLE_WIRE_HELLO) {
        on_hello(host, in->peer, &m, in->other_version);
        return;
    }
    if (in->other_version) return;
    switch (m.type) {
    case CRADLE_WIRE_INPUT: on_input(host, in->peer, &m.as.input); break;
    case CRADLE_WIRE_DESYNC:
        peer->desyncs++;
        host->desyncs++;
        cradle_server_say(host, "warning", "desync",
                          "peer %u reports a desync at step %" PRIu64 ": its hash %016" PRIx64
                          ", server's %016" PRIx64,
                          (unsigned)in->peer, m.as.desync.step, m.as.desync.hash, m.as.desync.expected);
        write_kept_state(host, m.as.desync.step);
        break;
    case CRADLE_WIRE_REPORT: /* a predicting player's figures, for players and the event stream */
        if (peer->state != CRADLE_SERVER_PEER_PLAYER) break;
        peer->report = m.as.report;
        peer->reported = true;
        /* A client sends one a second; one sending more floods no subscriber. */
        if (m.as.report.window &&
            (peer->prediction_lines == 0 || host->now_ns - peer->prediction_line_ns >= PREDICTION_LINE_NS)) {
            peer->prediction_lines++;
            peer->prediction_line_ns = host->now_ns;
            cradle__server_publish_prediction(host, peer->slot);
        }
        break;
    case CRADLE_WIRE_BYE:
        cradle__server_release_peer(host, in->peer, cradle_wire_bye_name(m.as.bye.reason));
        disconnect_peer(host, in->peer);
        break;
    default: break; /* server-to-client types from a client: ignored */
    }
}

/* Sends away peers that connected but said no HELLO in time: a connection
 * slot is not free to hold. */
static void expire_silent_peers(cradle_server_host *host, uint64_t now) {
    for (uint16_t p = 0; p < host->peer_count; p++) {
        cradle_server_peer *peer = &host->peers[p];
        if (peer->state != CRADLE_SERVER_PEER_CONNECTED || now - peer->connected_ns < HELLO_TIMEOUT_NS)
            continue;
        cradle_wire_message m = {.type = CRADLE_WIRE_BYE};
        m.as.bye.reason = CRADLE_WIRE_BYE_TIMEOUT;
        cradle_wire_set_text(m.as.bye.text, sizeof m.as.bye.text, "no HELLO within 5 s");
        cradle__server_send_to_peer(host, p, &m, CRADLE_SERVER_OUT_RELIABLE | CRADLE_SERVER_OUT_DISCONNECT);
        peer->state = CRADLE_SERVER_PEER_CLOSING;
        cradle_server_say(host, "info", "timeout", "peer %u sent no HELLO within 5 s", (unsigned)p);
    }
}

static void drain_in(cradle_server_host *host) {
    while (cradle_ring_pop(&host->net->in, &host->in_scratch)) on_event(host, &host->in_scratch);
}

static int open_data(cradle_server_host *host, const cradle_game_contract *c);

/* ---- reload ------------------------------------------------------------------------ */

/* Refuses the staged build for why: recorded in the log (the session went
 * on with the build in charge), the copy deleted. */
static cradle_reload_result refuse_staged(cradle_server_host *host, int error, const char *why) {
    if (host->log_open)
        report_log_error(host, cradle_log_writer_append_refused(&host->log, host->sim.next_step,
                                                                host->reload.staged_digest, why));
    return cradle_reload_drop(&host->reload, error, why);
}

/* Starts the trial of the staged build on the last steps' snapshots; a
 * trial that cannot start refuses the build. */
static cradle_reload_result start_trial(cradle_server_host *host) {
    uint32_t n = host->recent_count, first = (host->recent_next + CRADLE_TRIAL_DEFAULT_STEPS - n) %
                                             CRADLE_TRIAL_DEFAULT_STEPS;
    for (uint32_t i = 0; i < n; i++)
        memcpy(host->trial_inputs + (size_t)i * host->snapshot_size,
               host->recent + (size_t)((first + i) % CRADLE_TRIAL_DEFAULT_STEPS) * host->snapshot_size,
               host->snapshot_size);
    char message[CRADLE_TRIAL_MESSAGE_MAX];
    int rc = cradle_trial_start(&host->trial, &host->reload, &host->sim, host->trial_inputs, n, 0, host->now_ns,
                                message, sizeof message);
    if (rc != 0) return refuse_staged(host, CRADLE_ERELOAD_TRIAL, message);
    if (host->trial.fork_ns > host->trial_fork_max_ns) host->trial_fork_max_ns = host->trial.fork_ns;
    return (cradle_reload_result){.kind = CRADLE_RELOAD_NONE, .contract = host->sim.contract};
}

/* The end of a trial: the build is taken (opened, checked, swapped) or dropped. */
static cradle_reload_result end_trial(cradle_server_host *host, cradle_trial_state state, const char *why) {
    if (state == CRADLE_TRIAL_PASSED) return cradle_reload_take(&host->reload);
    return refuse_staged(host, host->trial.error, why);
}

/* Between steps: a running trial's news, never waited for. */
static void poll_trial(cradle_server_host *host, uint64_t now) {
    char why[CRADLE_TRIAL_MESSAGE_MAX];
    cradle_trial_state state = cradle_trial_poll(&host->trial, now, why, sizeof why);
    if (state != CRADLE_TRIAL_PASSED && state != CRADLE_TRIAL_FAILED) return;
    cradle_reload_result r = end_trial(host, state, why);
    cradle__server_after_reload(host, &r);
}

cradle_reload_result cradle__server_reload_now(cradle_server_host *host) {
    char why[CRADLE_TRIAL_MESSAGE_MAX];
    if (host->trial.pid) { /* a build from the file watch is in its trial: finish it first */
        cradle_trial_state state = cradle_trial_wait(&host->trial, host->now_ns, why, sizeof why);
        cradle_reload_result r = end_trial(host, state, why);
        cradle__server_after_reload(host, &r);
    }
    cradle_reload_result r = cradle_reload_now(&host->reload);
    if (r.kind != CRADLE_RELOAD_STAGED) return r;
    r = start_trial(host);
    if (r.kind == CRADLE_RELOAD_REFUSED) return r;
    cradle_trial_state state = cradle_trial_wait(&host->trial, host->now_ns, why, sizeof why);
    return end_trial(host, state, why);
}

void cradle__server_after_reload(cradle_server_host *host, const cradle_reload_result *r) {
    if (r->kind == CRADLE_RELOAD_STAGED) {
        cradle_reload_result started = start_trial(host);
        cradle__server_after_reload(host, &started);
    } else if (r->kind == CRADLE_RELOAD_SWAPPED) {
        char why[CRADLE_RELOAD_MESSAGE_MAX];
        int rc = cradle_sim_swap(&host->sim, r->contract, why, sizeof why);
        /* The reloader checked the same identity and capacity already. */
        assert(rc == 0 && "the reloader and the sim agree on what may take over");
        (void)rc;
        host->reloads++;
        cradle_server_net_set_build(host->net, host->sim.contract->build_id); /* tokens name the build */
        if (host->broadcast) { /* the build, and what its web files need: the thread reads them */
            uint32_t sound_count;
            const char *const *sounds = cradle_contract_sounds(host->sim.contract, &sound_count);
            cradle_server_broadcast_build(host->broadcast, host->sim.contract->build_id, host->options->game, sounds,
                                          sound_count);
        }
        snprintf(host->last_reload, sizeof host->last_reload, "swapped to build %s at step %" PRIu64,
                 host->sim.contract->build_id, host->sim.next_step);
        cradle__server_flush_steps(host); /* the steps so far ran the old build: its epoch */
        host->epoch++;
        if (host->log_open)
            report_log_error(host, cradle_log_writer_append_reload(&host->log, host->sim.next_step,
                                                                   host->sim.contract->build_id,
                                                                   cradle_reload_copy_path(&host->reload)));
        cradle_wire_message m = {.type = CRADLE_WIRE_RELOAD};
        m.as.reload.at_step = host->sim.next_step;
        m.as.reload.epoch = host->epoch;
        cradle_wire_set_text(m.as.reload.build_id, sizeof m.as.reload.build_id, host->sim.contract->build_id);
        send_message(host, CRADLE_SERVER_BROADCAST, 0, &m, CRADLE_SERVER_OUT_RELIABLE);
        cradle_server_say(host, "info", "reload", "%s", host->last_reload);
        if (!cradle_data_files_declared_by(&host->data, host->sim.contract)) {
            /* The new build declares other data files: its own, read and applied now. */
            cradle_data_files_close(&host->data);
            if (open_data(host, host->sim.contract) == 0) cradle__server_data_start(host);
        }
    } else if (r->kind == CRADLE_RELOAD_REFUSED) {
        host->reload_refusals++;
        snprintf(host->last_reload, sizeof host->last_reload, "refused (%s): %s", cradle_error_name(r->error),
                 r->message);
        cradle_server_say(host, "error", "reload", "new library %s; the session keeps running the old build",
                          host->last_reload);
    }
}

/* ---- driving the host ---------------------------------------------------------------- */

void cradle_server_host_poll(cradle_server_host *host, uint64_t now) {
    host->now_ns = now;
    drain_in(host);
    stream_join(host);
    cradle__server_flush_steps(host);
}

void cradle_server_host_advance(cradle_server_host *host, uint64_t count, uint64_t now) {
    host->now_ns = now;
    drain_in(host); /* inputs that arrived count for these steps */
    for (uint64_t i = 0; i < count; i++) {
        if (!has_room_for_steps(host)) wait_for_room(host);
        (void)cradle_clock_command_step(&host->clock);
        run_step(host);
        if ((i & 255u) == 255u) /* a long step command is progress too */
            atomic_store_explicit(&host->alive_ms, cradle_mono_ms(), memory_order_relaxed);
    }
    cradle__server_flush_steps(host);
}

/* ---- life cycle -------------------------------------------------------------------------- */

/* The game's data files under --data (or the library's folder), each read
 * once now: applied when the session starts (cradle__server_data_start). A
 * file that cannot be read is reported and the game keeps its own values
 * until the file appears. */
static int open_data(cradle_server_host *host, const cradle_game_contract *c) {
    char folder[CRADLE_DATA_PATH_MAX], message[CRADLE_DATA_MESSAGE_MAX];
    const char *data = host->options->data;
    if (!data[0]) {
        if (cradle_data_files_library_folder(folder, sizeof folder, host->options->game) != 0) return CRADLE_ERANGE;
        data = folder;
    }
    uint64_t now = cradle_mono_ns();
    int rc = cradle_data_files_open(&host->data, c, data, 0, now, message, sizeof message);
    if (rc != 0) {
        fprintf(stderr, "cradle-server: --data '%s': %s\n", data, message);
        return rc;
    }
    for (uint32_t i = 0; i < host->data.count; i++) {
        if (cradle_data_files_read(&host->data, i, now) == 0) continue;
        cradle_server_say(host, "warning", "data", "%s; the game starts with its own values for it",
                          host->data.message);
    }
    return 0;
}

int cradle_server_host_init(cradle_server_host *host, const cradle_server_options *options,
                            cradle_server_net *net, const _Atomic int *signalled) {
    memset(host, 0, sizeof *host);
    host->options = options;
    host->net = net;
    host->signalled = signalled;
    host->last_hash_step = UINT64_MAX;
    host->started_ns = cradle_mono_ns();
    atomic_store(&host->alive_ms, host->started_ns / 1000000u); /* alive from the start */
    host->present_reported = host->spectators_reported = UINT32_MAX;
    char message[CRADLE_RELOAD_MESSAGE_MAX];

    cradle_reload_config rc_config = {.path = options->game, .stage = true};
    int rc = cradle_reload_open(&host->reload, &rc_config, cradle_mono_ns(), message, sizeof message);
    if (rc != 0) {
        fprintf(stderr, "cradle-server: --game '%s': %s: %s\n", options->game, cradle_strerror(rc), message);
        return rc;
    }
    const cradle_game_contract *c = cradle_reload_contract(&host->reload);
    host->max_players = c->max_players;
    host->input_bytes = c->input_bytes;
    host->players = options->players ? options->players : c->max_players;
    if (host->players > c->max_players) {
        fprintf(stderr, "cradle-server: --players must be from 1 to %u (game '%s'), got %u\n", c->max_players,
                c->name, host->players);
        return CRADLE_ERANGE;
    }
    host->snapshot_size = cradle_snapshot_size(c->max_players, c->input_bytes);
    host->steps_per_message = CRADLE_SERVER_OUT_PAYLOAD / host->snapshot_size; /* a STEPS fits a slot */
    if (host->steps_per_message > CRADLE_WIRE_STEPS_MAX) host->steps_per_message = CRADLE_WIRE_STEPS_MAX;
    if (c->state_size > CRADLE_WIRE_STATE_MAX) {
        fprintf(stderr, "cradle-server: game state of %u bytes exceeds the wire's %u\n", c->state_size,
                CRADLE_WIRE_STATE_MAX);
        return CRADLE_EINVAL;
    }
    host->state_capacity = host->reload.state_capacity;
    host->join_state = malloc(cradle_state_pack_bound(host->state_capacity));
    host->peer_count = cradle_server_peer_table_size(host->players, options->spectators);
    host->peers = calloc(host->peer_count, sizeof *host->peers);
    host->recent = malloc((size_t)CRADLE_TRIAL_DEFAULT_STEPS * host->snapshot_size);
    host->trial_inputs = malloc((size_t)CRADLE_TRIAL_DEFAULT_STEPS * host->snapshot_size);
    /* The kept states go beside the log: without one there is nowhere to put them. */
    if (options->log[0]) host->kept = malloc((size_t)CRADLE_SERVER_KEPT_STATES * host->state_capacity);
    for (uint32_t k = 0; k < CRADLE_SERVER_KEPT_STATES; k++) host->kept_step[k] = UINT64_MAX;
    if (!host->join_state || !host->peers || !host->recent || !host->trial_inputs ||
        (options->log[0] && !host->kept) ||
        cradle_state_pack_init(&host->join_pack, 1, CRADLE_STATE_PACK_ENCODE) != 0) {
        fprintf(stderr, "cradle-server: out of memory for a %u-byte state block\n", host->state_capacity);
        return CRADLE_ENOMEM;
    }
    /* Room for every later build: the reload's capacity and alignment. */
    rc = cradle_sim_storage_open(&host->storage, &host->sim, c,
                                 &(cradle_sim_storage_config){.capacity = host->state_capacity,
                                                              .align = (uint32_t)host->reload.max_state_align,
                                                              .scratch = true,
                                                              .event_capacity = CRADLE_SERVER_EVENTS},
                                 message, sizeof message);
    if (rc == CRADLE_ENOMEM) {
        fprintf(stderr, "cradle-server: %s\n", message);
        return rc;
    }
    if (rc == 0) rc = cradle_sim_start(&host->sim, options->seed, host->players);
    if (rc != 0) {
        fprintf(stderr, "cradle-server: game '%s': %s%s%s (%u players)\n", c->name, cradle_strerror(rc),
                rc == CRADLE_ESIM_INIT ? "" : ": ", rc == CRADLE_ESIM_INIT ? "" : message, host->players);
        return CRADLE_EINVAL;
    }
    /* zstd's workspace now, at start-up: a join then packs without
     * allocating (a later build with a larger state may grow it once) */
    if (cradle_state_pack_encode(&host->join_pack, host->sim.state, c->state_size, host->join_state,
                                 cradle_state_pack_bound(host->state_capacity)) == 0) {
        fprintf(stderr, "cradle-server: out of memory for packing a %u-byte state block\n", c->state_size);
        return CRADLE_ENOMEM;
    }
    rc = open_data(host, c);
    if (rc != 0) return rc;
    rc = cradle_clock_init(&host->clock,
                           (cradle_clock_config){.steps_per_second = c->steps_per_second,
                                                 .source_frames_per_second = c->source_frames_per_second});
    if (rc != 0) return rc;

    if (options->dev_socket[0] || options->dev_stdin) {
        cradle_transport_config tc = {
            .socket_path = options->dev_socket[0] ? options->dev_socket : NULL,
            .stdio = options->dev_stdin,
            .handler = cradle_server_dev_line,
            .context = host,
            .max_clients = options->dev_clients,
            .peer_group = options->dev_group_set,
            .peer_gid = options->dev_group,
        };
        rc = cradle_transport_open(&host->transport, &tc);
        if (rc != 0) {
            fprintf(stderr, "cradle-server: --dev-socket '%s': %s%s%s\n", options->dev_socket,
                    cradle_strerror(rc), rc == CRADLE_EIO ? ": " : "",
                    rc == CRADLE_EIO ? strerror(host->transport.system_error) : "");
            return rc;
        }
        host->transport_open = true;
    }
    return 0;
}

/* The log is opened after everything else that can fail at start-up (the
 * dev socket, the UDP port): a start that fails leaves no log behind, and
 * the log's O_EXCL create would otherwise refuse the retry. */
int cradle_server_host_open_log(cradle_server_host *host, const cradle_game_contract *first,
                                const char *first_library) {
    const cradle_server_options *options = host->options;
    if (!options->log[0]) return 0;
    if (!first) {
        first = cradle_reload_contract(&host->reload);
        first_library = cradle_reload_copy_path(&host->reload);
    }
    cradle_log_header header;
    int rc = cradle_log_header_from_contract(&header, first, options->seed, host->players, cradle_wall_ns(),
                                             options->hash_interval);
    if (rc != 0) {
        fprintf(stderr, "cradle-server: --log '%s': %s\n", options->log, cradle_strerror(rc));
        return rc;
    }
    cradle_log_writer_config lc = {0};
    /* a secure server signs every block, so that each proves itself alone (a broadcast's viewer) */
    if (host->net && host->net->secure) lc.sign_secret = host->net->keys.sign_secret;
    if (host->broadcast) {
        /* Every block the log writes is a fragment's: at least two a fragment. */
        lc.on_written = cradle_server_broadcast_written;
        lc.on_written_context = host->broadcast;
        uint64_t half = (uint64_t)options->broadcast_fragment_ms * 1000000u / 2u;
        if (half < CRADLE_LOG_DURABLE_DEFAULT_NS) lc.durable_interval_ns = half;
    }
    char log_message[CRADLE_LOG_MESSAGE_MAX] = "";
    rc = cradle_log_writer_open(&host->log, options->log, &header, &lc, first_library, log_message,
                                sizeof log_message);
    if (rc != 0) {
        fprintf(stderr, "cradle-server: --log '%s': %s: %s\n", options->log, cradle_strerror(rc), log_message);
        return rc;
    }
    host->log_open = true;
    /* The keyframe index beside the log, as it records; not for a resumed
     * session (its log starts where the old one was cut). */
    if (options->index_interval && !options->resume[0]) {
        host->index = calloc(1, sizeof *host->index);
        rc = host->index ? cradle_server_log_index_open(host->index, options->log, host->log.session,
                                                        options->index_interval, host->sim.state_capacity,
                                                        log_message, sizeof log_message)
                         : CRADLE_ENOMEM;
        if (rc != 0) {
            cradle_server_say(host, "warning", "log", "no keyframe index beside the log: %s",
                              host->index ? log_message : "out of memory");
            free(host->index);
            host->index = NULL;
        }
    }
    return 0;
}

/* Waits up to wait_ns for work: a dev client's line (run here), news from
 * the network thread (it wakes this thread for everything but inputs, which
 * wait for their step: net.c) or a signal. */
static void wait_for_work(cradle_server_host *host, uint64_t wait_ns) {
    int wake_fd = host->net->game_wake_fd[0];
    if (!host->transport_open || host->transport_failed) {
        if (wait_ns) (void)cradle_sleep_ns_or_fd(wait_ns, wake_fd);
        return;
    }
    int rc = cradle_transport_poll_ns(&host->transport, (int64_t)wait_ns);
    if (rc != 0) {
        host->transport_failed = true;
        cradle_server_say(host, "error", "dev", "dev protocol transport: %s: %s", cradle_strerror(rc),
                          strerror(host->transport.system_error));
        return;
    }
    /* The end of --dev-stdin's input stops the server, as quit does. */
    if (cradle_transport_state(&host->transport) == CRADLE_TRANSPORT_EOF) host->quit = true;
}

/* Who is here: the Agones labels when it changed, the GameServer's state
 * when the watch saw a new one, and --exit-when-empty. Every turn. */
static void watch_audience(cradle_server_host *host, uint64_t now) {
    uint32_t present = 0;
    for (uint32_t i = 0; i < host->players; i++) present += host->slots[i].occupied;
    if (present > 0) host->had_player = true;
    if (host->agones) {
        if (present != host->present_reported || host->spectator_count != host->spectators_reported) {
            cradle_agones_set_players(host->agones, present, host->spectator_count);
            host->present_reported = present;
            host->spectators_reported = host->spectator_count;
        }
        cradle_agones_state state = cradle_agones_state_now(host->agones);
        if ((int)state != host->agones_state_seen) {
            host->agones_state_seen = (int)state;
            if (state == CRADLE_AGONES_STATE_ALLOCATED) host->had_player = true; /* players are on their way */
            cradle_server_say(host, "info", "agones", "the GameServer is %s%s", cradle_agones_state_name(state),
                              state == CRADLE_AGONES_STATE_ALLOCATED && host->options->exit_when_empty_s
                                  ? ": the session now ends when it stays empty" : "");
        }
    }
    uint32_t wait_s = host->options->exit_when_empty_s;
    if (!wait_s || !host->had_player || present > 0) {
        host->empty_since_ns = 0;
        return;
    }
    if (!host->empty_since_ns) host->empty_since_ns = now;
    if (now - host->empty_since_ns >= (uint64_t)wait_s * 1000000000u) {
        cradle_server_say(host, "info", "empty", "no player for %u s (--exit-when-empty): ending the session",
                          (unsigned)wait_s);
        host->quit = true;
    }
}

void cradle_server_host_start(cradle_server_host *host, uint64_t now) {
    host->now_ns = now;
    host->last_offer_ns = now;
    host->last_reload_poll_ns = now;
    if (host->transport_open) cradle_transport_watch(&host->transport, host->net->game_wake_fd[0]);
    cradle__server_data_start(host);
}

uint64_t cradle_server_host_turn(cradle_server_host *host, uint64_t now) {
    host->now_ns = now;
    drain_in(host);
    atomic_store_explicit(&host->alive_ms, now / 1000000u, memory_order_relaxed); /* the watchdog reads it */
    if (now - host->last_reload_poll_ns >= RELOAD_POLL_NS) {
        host->last_reload_poll_ns = now;
        cradle_reload_result r = cradle_reload_poll(&host->reload, now);
        cradle__server_after_reload(host, &r);
        expire_silent_peers(host, now);
    }
    if (host->trial.pid) poll_trial(host, now);
    cradle__server_data_poll(host, now);
    watch_audience(host, now);
    bool paced = host->options->mode == CRADLE_SERVER_PACED && !host->paused;
    if (paced && has_room_for_steps(host)) {
        /* The clock plans a few steps an offer and drops what a stalled
         * host owes past that; an empty session's batch (below) is no
         * stall: its time is offered a cap's worth at a time. With the
         * ring to the network thread nearly full the time is not
         * offered: it waits for the next turn (push_out's policy). */
        uint64_t left = now - host->last_offer_ns;
        uint64_t cap = (uint64_t)CRADLE_CLOCK_DEFAULT_MAX_STEPS * cradle_clock_step_ns(&host->clock);
        bool batch = !has_listeners(host) && left <= (uint64_t)(IDLE_BATCH + 1u) * cradle_clock_step_ns(&host->clock);
        host->last_offer_ns = now;
        do {
            uint64_t part = batch && left > cap ? cap : left;
            left -= part;
            cradle_clock_plan plan = cradle_clock_offer_elapsed(&host->clock, part);
            host->dropped_steps += plan.dropped;
            for (uint32_t i = 0; i < plan.steps; i++) {
                (void)cradle_clock_next(&host->clock);
                run_step(host);
            }
        } while (left > 0);
    } else if (!paced) {
        host->last_offer_ns = now;
    } /* else the time waits for room (last_offer_ns kept) */
    stream_join(host);
    cradle__server_flush_steps(host);
    if (host->transport_open) cradle__server_publish_lag(host, now);
    if (host->log_open) report_log_error(host, cradle_log_writer_maybe_sync(&host->log, now));
    /* Nothing to do before the next step, reload check or dev line. */
    uint64_t wait = host->last_reload_poll_ns + RELOAD_POLL_NS - now;
    if (paced) {
        uint64_t until = cradle_clock_ns_until_next(&host->clock);
        /* With nobody to send steps to, they run IDLE_BATCH at a time
         * (offered to the clock in parts, so none is dropped): an empty
         * session wakes 5 times a second instead of 60, as often as it
         * looks for a new build anyway. */
        if (!has_listeners(host)) until += (IDLE_BATCH - 1u) * cradle_clock_step_ns(&host->clock);
        if (until < wait) wait = until;
    }
    uint64_t data_at = cradle_data_files_next_ns(&host->data);
    if (data_at <= now) wait = 0; /* a data file settled while this turn ran */
    else if (data_at - now < wait) wait = data_at - now;
    if (host->join_active) wait = 0;
    if (host->trial.pid && wait > TRIAL_POLL_NS) wait = TRIAL_POLL_NS; /* a trial takes milliseconds */
    return wait;
}

bool cradle_server_host_wait(cradle_server_host *host, uint64_t wait_ns) {
    if (host->quit || *host->signalled) return false;
    wait_for_work(host, wait_ns);
    return !host->quit && !*host->signalled;
}

int cradle_server_host_run(cradle_server_host *host) {
    cradle_server_host_start(host, cradle_mono_ns());
    while (cradle_server_host_wait(host, cradle_server_host_turn(host, cradle_mono_ns())))
        ;
    return 0;
}

/* The log's trailer is in the broadcast's ring: its last fragments and the
 * "ended" sync document go up, within a second (the stop deadline is the
 * watchdog's). */
/* The keyframe index: its last keyframe written, the file named. */
static void close_index(cradle_server_host *host) {
    if (!host->index) return;
    char message[CRADLE_REPLAY_INDEX_MESSAGE_MAX];
    uint64_t keyframes = atomic_load_explicit(&host->index->keyframes, memory_order_relaxed);
    if (cradle_server_log_index_close(host->index, message, sizeof message) != 0)
        cradle_server_say(host, "warning", "log", "the keyframe index beside the log failed: %s", message);
    else
        cradle_server_say(host, "info", "log", "keyframe index written: %" PRIu64 " keyframes", keyframes);
    free(host->index);
    host->index = NULL;
}

static void finish_broadcast(cradle_server_host *host) {
    bool done = cradle_server_broadcast_finish(host->broadcast, BROADCAST_FINISH_MS);
    cradle_server_broadcast_stats st;
    cradle_server_broadcast_get_stats(host->broadcast, &st);
    if (done)
        cradle_server_say(host, "info", "broadcast", "ended: %" PRIu64 " fragments, %" PRIu64 " keyframes, %" PRIu64
                          " bytes uploaded", st.fragments, st.keyframes, st.bytes);
    else
        cradle_server_say(host, "error", "broadcast", "the broadcast did not end: %" PRIu64
                          " fragments still waiting (%s)", st.queued, st.last_error[0] ? st.last_error : "no error");
}

int cradle_server_host_finish(cradle_server_host *host) {
    cradle__server_flush_steps(host);
    cradle_wire_message m = {.type = CRADLE_WIRE_BYE};
    m.as.bye.reason = CRADLE_WIRE_BYE_SHUTDOWN;
    cradle_wire_set_text(m.as.bye.text, sizeof m.as.bye.text, "the server is stopping");
    send_message(host, CRADLE_SERVER_BROADCAST, 0, &m, CRADLE_SERVER_OUT_RELIABLE);
    int rc = 0;
    if (host->log_open) {
        uint64_t final_hash = cradle_hash64(host->sim.state, host->sim.contract->state_size);
        /* Secure mode signs the log with the server key (cradle-replay --verify-key). */
        rc = host->net && host->net->secure
                 ? cradle_log_writer_close_signed(&host->log, final_hash, host->net->keys.sign_secret)
                 : cradle_log_writer_close(&host->log, final_hash);
        host->log_open = false;
        if (host->broadcast) finish_broadcast(host);
        close_index(host);
        if (rc != 0)
            cradle_server_say(host, "error", "log", "closing the session log failed: %s",
                              cradle_strerror(rc));
        else
            cradle_server_say(host, "info", "log",
                              "session log closed after %" PRIu64 " steps, final hash %016" PRIx64,
                              host->sim.next_step, final_hash);
    }
    return rc;
}

void cradle_server_host_deinit(cradle_server_host *host) {
    if (host->transport_open) cradle_transport_close(&host->transport);
    host->transport_open = false;
    if (host->log_open) cradle_log_writer_abandon(&host->log);
    host->log_open = false;
    close_index(host);
    cradle_trial_stop(&host->trial);
    cradle_reload_close(&host->reload);
    free(host->recent);
    free(host->trial_inputs);
    host->recent = host->trial_inputs = NULL;
    cradle_sim_storage_close(&host->storage);
    cradle_data_files_close(&host->data);
    free(host->kept);
    host->kept = NULL;
    free(host->join_state);
    cradle_state_pack_free(&host->join_pack);
    free(host->peers);
    host->peers = NULL;
    host->sim.state = NULL;
    host->join_state = NULL;
}
