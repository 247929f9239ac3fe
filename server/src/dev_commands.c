/*
 * dev_commands: the dev protocol's commands on the game thread (see
 * dev_commands.h). Each handler reads or acts on the host and writes one
 * reply; bad arguments get an error reply, never a crash.
 */
#include "dev_commands.h"
#include "log_index.h"
#include "broadcast.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cradle/log.h"
#include "cradle/systime.h"
#include "dev_events.h"
#include "host_internal.h"

static void write_hash_field(cradle_writer *reply, const char *key, uint64_t hash) {
    char hex[17];
    snprintf(hex, sizeof hex, "%016" PRIx64, hash);
    cradle_dev_field_string(reply, key, hex);
}

/* The rest of a player's entry: how early its inputs arrived over the last
 * second (input_delay.h; null before a second of them, or with a fixed
 * --input-delay), whether its delay adapts, and how often it was raised and
 * lowered. */
static void write_slack(cradle_writer *reply, const cradle_server_slot *slot) {
    if (slot->adaptive && slot->delay.last_window_min != INT64_MAX)
        cradle_writer_format(reply, ",\"input_slack\":%" PRId64 ",\"input_delay_auto\":true", slot->delay.last_window_min);
    else
        cradle_writer_format(reply, ",\"input_slack\":null,\"input_delay_auto\":%s", slot->adaptive ? "true" : "false");
    cradle_writer_format(reply, ",\"input_delay_raised\":%" PRIu64 ",\"input_delay_lowered\":%" PRIu64 "}",
                         slot->adaptive ? slot->delay.raised : 0, slot->adaptive ? slot->delay.lowered : 0);
}

void cradle__server_write_prediction(cradle_writer *w, const cradle_server_host *host,
                                     const cradle_server_peer *peer) {
    if (!peer->reported || peer->report.window == 0) {
        cradle_writer_text(w, ",\"predict\":null");
        return;
    }
    const cradle_wire_report *r = &peer->report;
    double seconds = (double)r->steps / (double)host->sim.contract->steps_per_second;
    cradle_writer_format(w,
                         ",\"predict\":{\"window\":%u,\"ahead\":%u,\"rollbacks_per_s\":%.2f,\"mean_depth\":%.2f"
                         ",\"max_depth\":%u,\"rollbacks\":%" PRIu32 ",\"corrections\":%" PRIu32
                         ",\"own_overridden\":%" PRIu32 "}",
                         (unsigned)r->window, (unsigned)r->ahead, seconds > 0.0 ? (double)r->rollbacks / seconds : 0.0,
                         r->rollbacks ? (double)r->rollback_steps / (double)r->rollbacks : 0.0,
                         (unsigned)r->rollback_max, r->rollbacks, r->corrections, r->own_overridden);
}

static void dev_status(cradle_server_host *host, const cradle_dev_request *req, cradle_writer *reply) {
    cradle_dev_reply_begin(reply, req);
    cradle_dev_field_u64(reply, "step", host->sim.next_step);
    cradle_dev_field_string(reply, "mode",
                            host->options->mode == CRADLE_SERVER_PACED ? "paced" : "commanded");
    cradle_dev_field_bool(reply, "paused", host->paused);
    cradle_writer_text(reply, ",\"players\":[");
    bool first = true;
    for (uint32_t s = 0; s < host->players; s++) {
        const cradle_server_slot *slot = &host->slots[s];
        if (!slot->occupied) continue;
        const cradle_server_peer *peer = &host->peers[slot->peer];
        cradle_writer_format(reply,
                             "%s{\"slot\":%u,\"peer\":%u,\"rtt_ms\":%u,\"rtt_us\":%u,\"late\":%" PRIu64
                             ",\"on_time\":%" PRIu64 ",\"desyncs\":%" PRIu64 ",\"joined\":%s,\"input_delay\":%u",
                             first ? "" : ",", s, (unsigned)slot->peer, peer->rtt_ms, peer->rtt_us, slot->late,
                             slot->on_time, peer->desyncs,
                             slot->joined_step == UINT64_MAX ? "false" : "true", (unsigned)slot->input_delay);
        cradle__server_write_prediction(reply, host, peer);
        write_slack(reply, slot);
        first = false;
    }
    cradle_writer_text(reply, "]");
    cradle_dev_field_u64(reply, "player_limit", host->players);
    cradle_dev_field_u64(reply, "spectators", host->spectator_count);
    cradle_dev_field_u64(reply, "bytes_in", atomic_load(&host->net->stats.bytes_in));
    cradle_dev_field_u64(reply, "bytes_out", atomic_load(&host->net->stats.bytes_out));
    cradle_dev_field_u64(reply, "packets_in", atomic_load(&host->net->stats.packets_in));
    cradle_dev_field_u64(reply, "packets_out", atomic_load(&host->net->stats.packets_out));
    cradle_dev_field_u64(reply, "dropped_malformed", atomic_load(&host->net->stats.dropped_malformed));
    cradle_dev_field_u64(reply, "dropped_garbage", atomic_load(&host->net->stats.dropped_garbage));
    cradle_dev_field_u64(reply, "steps_repeated", atomic_load(&host->net->stats.steps_repeated));
    cradle_dev_field_u64(reply, "repairs", atomic_load(&host->net->stats.repairs));
    cradle_dev_field_u64(reply, "fell_behind", atomic_load(&host->net->stats.fell_behind));
    {
        const cradle_server_net_stats *ns = &host->net->stats;
        cradle_dev_field_bool(reply, "secure", host->net->secure);
        cradle_dev_field_u64(reply, "rate_limited", atomic_load(&ns->rate_limited));
        cradle_dev_field_u64(reply, "rate_refunded", atomic_load(&ns->rate_refunded));
        cradle_dev_field_u64(reply, "rate_addresses_evicted", atomic_load(&ns->rate_evicted));
        cradle_dev_field_u64(reply, "auth_failed", atomic_load(&ns->auth_failed));
        cradle_dev_field_u64(reply, "replayed", atomic_load(&ns->replayed));
        cradle_dev_field_u64(reply, "unauthenticated", atomic_load(&ns->unauthenticated));
        cradle_dev_field_u64(reply, "auth_timeouts", atomic_load(&ns->auth_timeouts));
        cradle_dev_field_u64(reply, "evicted_unauthenticated", atomic_load(&ns->evicted_unauthenticated));
        cradle_dev_field_u64(reply, "bad_credential", atomic_load(&ns->bad_credential));
        cradle_dev_field_u64(reply, "tokens_accepted", atomic_load(&ns->tokens_accepted));
        /* Tokens refused, per reason. */
        cradle_dev_field_u64(reply, "token_malformed", atomic_load(&ns->token_malformed));
        cradle_dev_field_u64(reply, "token_signature", atomic_load(&ns->token_signature));
        cradle_dev_field_u64(reply, "token_server", atomic_load(&ns->token_server));
        cradle_dev_field_u64(reply, "token_build", atomic_load(&ns->token_build));
        cradle_dev_field_u64(reply, "token_future", atomic_load(&ns->token_future));
        cradle_dev_field_u64(reply, "token_lifetime", atomic_load(&ns->token_lifetime));
        cradle_dev_field_u64(reply, "token_expired", atomic_load(&ns->token_expired));
        cradle_dev_field_u64(reply, "token_reused", atomic_load(&ns->token_reused));
        cradle_dev_field_u64(reply, "token_cache_full", atomic_load(&ns->token_cache_full));
    }
    cradle_dev_field_string(reply, "game", host->sim.contract->name);
    cradle_dev_field_string(reply, "build", host->sim.contract->build_id);
    if (host->log_open)
        cradle_dev_field_string(reply, "log", host->options->log);
    else
        cradle_dev_field_raw(reply, "log", "null");
    cradle_dev_field_u64(reply, "uptime_ms", (cradle_mono_ns() - host->started_ns) / 1000000u);
    cradle_dev_field_string(reply, "last_reload", host->last_reload[0] ? host->last_reload : "none");
    cradle_dev_field_u64(reply, "joins", host->joins);
    cradle_dev_field_u64(reply, "refusals", host->refusals);
    cradle_dev_field_u64(reply, "takeovers", host->takeovers);
    cradle_dev_field_u64(reply, "desyncs", host->desyncs);
    cradle_dev_field_u64(reply, "dropped_steps", host->dropped_steps);
    cradle_dev_field_u64(reply, "leaves", host->leaves);
    cradle_dev_field_u64(reply, "reloads", host->reloads);
    cradle_dev_field_u64(reply, "reload_refusals", host->reload_refusals);
    /* Library changes whose bytes were the build in use (a touch): no reload. */
    cradle_dev_field_u64(reply, "reload_unchanged", host->reload.unchanged);
    /* Reload trials (a new build run twice in a child first): run, failed, the
     * longest fork() (the step loop's one stall) and the last one's length. */
    cradle_dev_field_u64(reply, "reload_trials", host->trial.runs);
    cradle_dev_field_u64(reply, "reload_trial_failures", host->trial.failed);
    cradle_dev_field_u64(reply, "reload_trial_fork_max_us", host->trial_fork_max_ns / 1000u);
    cradle_dev_field_u64(reply, "reload_trial_last_us", host->trial.last_ns / 1000u);
    /* Game data files: changes applied and refused, and the last one of either. */
    cradle_dev_field_u64(reply, "data_files", host->data.count);
    cradle_dev_field_u64(reply, "data_applied", host->data_applies);
    cradle_dev_field_u64(reply, "data_refusals", host->data_refusals);
    cradle_dev_field_string(reply, "last_data", host->last_data[0] ? host->last_data : "none");
    cradle_dev_field_u64(reply, "data_delay_last_us", host->data_delay_last_ns / 1000u);
    cradle_dev_field_u64(reply, "data_apply_last_us", host->data_apply_last_ns / 1000u);
    cradle_dev_field_u64(reply, "data_apply_max_us", host->data_apply_max_ns / 1000u);
    if (host->index) { /* the keyframe index beside the log (log_index.h) */
        cradle_dev_field_u64(reply, "index_keyframes",
                             atomic_load_explicit(&host->index->keyframes, memory_order_relaxed));
        cradle_dev_field_u64(reply, "index_skipped", atomic_load_explicit(&host->index->skipped, memory_order_relaxed));
        if (atomic_load_explicit(&host->index->failed, memory_order_acquire))
            cradle_dev_field_string(reply, "index_error", host->index->error);
    }
    /* --broadcast: the uploads to the HTTP origin (broadcast.h). */
    if (host->broadcast) {
        cradle_server_broadcast_stats b;
        cradle_server_broadcast_get_stats(host->broadcast, &b);
        cradle_dev_field_string(reply, "broadcast", host->options->broadcast);
        cradle_dev_field_string(reply, "broadcast_state", b.state);
        cradle_dev_field_u64(reply, "broadcast_fragments", b.fragments);
        cradle_dev_field_u64(reply, "broadcast_queued", b.queued);
        cradle_dev_field_u64(reply, "broadcast_behind_ms", b.behind_ms);
        cradle_dev_field_u64(reply, "broadcast_keyframes", b.keyframes);
        cradle_dev_field_u64(reply, "broadcast_keyframes_skipped", b.keyframes_skipped);
        cradle_dev_field_u64(reply, "broadcast_bytes", b.bytes);
        cradle_dev_field_u64(reply, "broadcast_requests", b.requests);
        cradle_dev_field_u64(reply, "broadcast_retries", b.retries);
        cradle_dev_field_u64(reply, "broadcast_lost", b.lost);
        cradle_dev_field_u64(reply, "broadcast_lost_pieces", b.lost_pieces);
        cradle_dev_field_raw(reply, "broadcast_gaps", b.gaps);
        cradle_dev_field_string(reply, "broadcast_web", b.web);
        cradle_dev_field_string(reply, "broadcast_last_error", b.last_error[0] ? b.last_error : "none");
    } else {
        cradle_dev_field_string(reply, "broadcast", "off");
    }
    cradle_dev_field_u64(reply, "events", host->sim.events.appended_total);
    cradle_dev_field_u64(reply, "events_dropped", cradle_events_dropped_total(&host->sim.events));
    /* Messages to clients dropped because the outbound ring stayed full for 2 s. */
    cradle_dev_field_u64(reply, "dropped_out", host->dropped_out);
    /* The network thread's drops: inbound messages with the ring to this thread full;
     * outbound messages for a connection that had gone before they were sent. */
    cradle_dev_field_u64(reply, "dropped_in_full", atomic_load(&host->net->stats.dropped_in_full));
    cradle_dev_field_u64(reply, "dropped_stale", atomic_load(&host->net->stats.dropped_stale));
    cradle_dev_field_u64(reply, "silent_dropped", atomic_load(&host->net->stats.silent_dropped));
    cradle_dev_field_u64(reply, "raw_pings", atomic_load(&host->net->stats.raw_pings));
    cradle_dev_field_u64(reply, "raw_dropped", atomic_load(&host->net->stats.raw_dropped));
    /* The step stream's raw datagrams (fanout.h): sent, in how many batches, refused by the kernel. */
    cradle_dev_field_u64(reply, "raw_steps", atomic_load(&host->net->stats.raw_steps));
    cradle_dev_field_u64(reply, "raw_batches", atomic_load(&host->net->stats.raw_batches));
    cradle_dev_field_u64(reply, "raw_refused", atomic_load(&host->net->stats.raw_refused));
    /* Steps on disk after an fdatasync: a crash from now on keeps at least these. */
    cradle_dev_field_u64(reply, "durable_steps", host->log_open ? cradle_log_writer_durable_steps(&host->log) : 0);
    /* The dev protocol itself: connections now, accepted, refused (all
     * --dev-clients taken) and denied (the credential check); lines handled
     * and refused as too long; replies too large to send; event
     * subscribers, the lines published to them and those dropped for not
     * reading. */
    const cradle_transport_stats *dev = cradle_transport_get_stats(&host->transport);
    cradle_dev_field_u64(reply, "dev_clients", dev->clients);
    cradle_dev_field_u64(reply, "dev_accepted", dev->accepted);
    cradle_dev_field_u64(reply, "dev_refused", dev->refused);
    cradle_dev_field_u64(reply, "dev_denied", dev->denied);
    cradle_dev_field_u64(reply, "dev_lines", dev->lines);
    cradle_dev_field_u64(reply, "dev_too_long", dev->too_long);
    cradle_dev_field_u64(reply, "dev_overflowed", dev->overflowed);
    cradle_dev_field_u64(reply, "dev_subscribers", dev->subscribers);
    cradle_dev_field_u64(reply, "dev_published", dev->published);
    cradle_dev_field_u64(reply, "dev_subscribers_dropped", dev->subscribers_dropped);
    cradle_dev_reply_end(reply);
}

static bool dev_players(void *context, cradle_dev_request *req, cradle_writer *reply) {
    cradle_server_host *host = context;
    cradle_dev_reply_begin(reply, req);
    cradle_writer_text(reply, ",\"players\":[");
    bool first = true;
    for (uint32_t s = 0; s < host->players; s++) {
        const cradle_server_slot *slot = &host->slots[s];
        if (!slot->occupied) continue;
        const cradle_server_peer *peer = &host->peers[slot->peer];
        cradle_writer_format(
            reply, "%s{\"slot\":%u,\"address\":\"%u.%u.%u.%u:%u\",\"rtt_ms\":%u,\"rtt_us\":%u,\"late\":%" PRIu64
                   ",\"input_delay\":%u",
            first ? "" : ",", s, peer->address & 0xffu, (peer->address >> 8) & 0xffu,
            (peer->address >> 16) & 0xffu, peer->address >> 24, (unsigned)peer->port, peer->rtt_ms, peer->rtt_us,
            slot->late, (unsigned)slot->input_delay);
        cradle__server_write_prediction(reply, host, peer);
        write_slack(reply, slot);
        first = false;
    }
    cradle_writer_text(reply, "]");
    cradle_dev_field_u64(reply, "spectators", host->spectator_count);
    cradle_dev_reply_end(reply);
    return false;
}

static bool dev_kick(void *context, cradle_dev_request *req, cradle_writer *reply) {
    cradle_server_host *host = context;
    int64_t slot = 0;
    int rc = cradle_dev_arg_integer(req, "slot", true, 0, CRADLE_GAME_MAX_PLAYERS - 1, 0, &slot);
    if (rc != 0) {
        cradle_dev_reply_error(reply, req, rc, req->message);
        return false;
    }
    if ((uint32_t)slot >= host->players || !host->slots[slot].occupied) {
        cradle_dev_reply_error(reply, req, CRADLE_EDEV_ARGUMENT, "no player in that slot");
        return false;
    }
    uint16_t p = host->slots[slot].peer;
    cradle_wire_message m = {.type = CRADLE_WIRE_BYE};
    m.as.bye.reason = CRADLE_WIRE_BYE_KICKED;
    cradle_wire_set_text(m.as.bye.text, sizeof m.as.bye.text, "kicked by the operator");
    cradle__server_flush_steps(host);
    cradle__server_send_to_peer(host, p, &m, CRADLE_SERVER_OUT_RELIABLE | CRADLE_SERVER_OUT_DISCONNECT);
    cradle_server_say(host, "info", "kick", "the operator kicked the player in slot %d", (int)slot);
    cradle__server_release_peer(host, p, "kicked");
    cradle_dev_reply_ok(reply, req);
    return false;
}

static bool dev_pause(void *context, cradle_dev_request *req, cradle_writer *reply) {
    cradle_server_host *host = context;
    if (!host->paused) cradle_server_say(host, "info", "pause", "paused by the operator at step %" PRIu64, host->sim.next_step);
    host->paused = true;
    cradle_dev_reply_ok(reply, req);
    return false;
}

static bool dev_resume(void *context, cradle_dev_request *req, cradle_writer *reply) {
    cradle_server_host *host = context;
    if (host->paused) cradle_server_say(host, "info", "pause", "resumed by the operator at step %" PRIu64, host->sim.next_step);
    host->paused = false;
    host->last_offer_ns = host->now_ns; /* no burst of owed steps */
    cradle_dev_reply_ok(reply, req);
    return false;
}

static bool dev_hash(void *context, cradle_dev_request *req, cradle_writer *reply) {
    cradle_server_host *host = context;
    cradle_dev_reply_begin(reply, req);
    cradle_dev_field_u64(reply, "step", host->sim.next_step);
    write_hash_field(reply, "hash", cradle_sim_hash(&host->sim));
    if (host->last_hash_step != UINT64_MAX) {
        cradle_dev_field_u64(reply, "last_hash_step", host->last_hash_step);
        write_hash_field(reply, "last_hash", host->last_hash);
    }
    cradle_dev_reply_end(reply);
    return false;
}

static bool dev_reload(void *context, cradle_dev_request *req, cradle_writer *reply) {
    cradle_server_host *host = context;
    cradle_reload_result r = cradle__server_reload_now(host);
    cradle__server_after_reload(host, &r);
    if (r.kind == CRADLE_RELOAD_REFUSED) {
        cradle_dev_reply_error(reply, req, r.error, r.message);
        return false;
    }
    cradle_dev_reply_begin(reply, req);
    cradle_dev_field_bool(reply, "swapped", r.kind == CRADLE_RELOAD_SWAPPED);
    cradle_dev_field_string(reply, "build", host->sim.contract->build_id);
    cradle_dev_reply_end(reply);
    return false;
}

static bool dev_flush(void *context, cradle_dev_request *req, cradle_writer *reply) {
    cradle_server_host *host = context;
    if (!host->log_open) {
        cradle_dev_reply_error(reply, req, CRADLE_EDEV_STATE, "no session log (start with --log PATH)");
        return false;
    }
    int rc = cradle_log_writer_flush(&host->log, host->now_ns);
    if (rc != 0) {
        cradle_dev_reply_error(reply, req, rc, host->log.message);
        return false;
    }
    cradle_dev_reply_begin(reply, req);
    cradle_dev_field_u64(reply, "durable_steps", cradle_log_writer_durable_steps(&host->log));
    cradle_dev_reply_end(reply);
    return false;
}

static const cradle_dev_entry dev_table[] = {
    {"players", dev_players}, {"kick", dev_kick},     {"pause", dev_pause}, {"resume", dev_resume},
    {"hash", dev_hash},       {"reload", dev_reload}, {"flush", dev_flush},
    {"subscribe", cradle__server_dev_subscribe}, {"unsubscribe", cradle__server_dev_unsubscribe},
};

bool cradle_server_dev_line(void *context, const char *line, size_t length, cradle_writer *reply,
                              cradle_arena *scratch) {
    (void)scratch;
    cradle_server_host *host = context;
    cradle_dev_request req;
    int rc = cradle_dev_parse(&req, line, length, CRADLE_SERVER_MAX_STEP_COMMAND);
    bool quit = false;
    const cradle_dev_command *common = cradle_dev_common(&req);
    if (common) {
        switch (common->kind) {
        case CRADLE_DEV_STATUS: dev_status(host, &req, reply); break;
        case CRADLE_DEV_QUIT:
            cradle_dev_reply_ok(reply, &req);
            host->quit = true;
            quit = true;
            break;
        case CRADLE_DEV_STEP:
            if (host->options->mode != CRADLE_SERVER_COMMANDED) {
                cradle_dev_reply_error(reply, &req, CRADLE_EDEV_STATE, "step needs --mode commanded");
                break;
            }
            cradle_server_host_advance(host, common->count, host->now_ns);
            cradle_dev_reply_begin(reply, &req);
            cradle_dev_field_u64(reply, "step", host->sim.next_step);
            cradle_dev_reply_end(reply);
            break;
        }
    } else if (rc == CRADLE_EDEV_UNKNOWN) {
        const cradle_dev_entry *e =
            cradle_dev_find(dev_table, sizeof dev_table / sizeof dev_table[0], req.cmd);
        if (e)
            quit = e->handle(host, &req, reply);
        else
            cradle_dev_reply_parse_error(reply, &req);
    } else {
        cradle_dev_reply_parse_error(reply, &req);
    }
    cradle_dev_request_deinit(&req);
    return quit;
}

