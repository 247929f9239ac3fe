/*
 * dev_events: the dev protocol's event stream (dev_events.h), on the game
 * thread. Topics are bits of the transport's subscription mask, one per
 * name in TOPICS; the events cradle_server_say logs map onto them by name.
 */
#include "dev_events.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "dev_commands.h"
#include "host_internal.h"

#define DEFAULT_EVERY 60u
#define MAX_EVERY 1000000u
#define EVENT_LINE_MAX 1024u

static const char *const TOPICS[] = {"join",   "leave", "refused", "desync",      "timeout", "reload",
                                     "pause",  "kick",  "log",     "fell_behind", "step",    "server",
                                     "data",   "garbage", "prediction"};
#define TOPIC_COUNT (sizeof TOPICS / sizeof TOPICS[0])
#define TOPIC_STEP (UINT64_C(1) << 10)
#define TOPIC_SERVER (UINT64_C(1) << 11)

_Static_assert(TOPIC_COUNT == 15, "TOPIC_STEP and TOPIC_SERVER are TOPICS' 11th and 12th");

/* Sets client's step-line interval (0: none), keeping the count of
 * clients that have one. */
static void set_every(cradle_server_host *host, uint32_t client, uint32_t every) {
    host->step_watchers -= host->step_every[client] != 0;
    host->step_every[client] = every;
    host->step_watchers += every != 0;
}

/* The topic of a logged event: its own name, else "server" (start, stop,
 * signals, dev transport errors, ...). */
static uint64_t topic_of(const char *event) {
    for (size_t i = 0; i < TOPIC_COUNT; i++)
        if (strcmp(TOPICS[i], event) == 0) return UINT64_C(1) << i;
    return TOPIC_SERVER;
}

bool cradle__server_dev_subscribe(void *context, cradle_dev_request *req, cradle_writer *reply) {
    cradle_server_host *host = context;
    uint64_t topics = 0;
    int64_t every = 0;
    int rc = cradle_dev_arg_names(req, "events", TOPICS, TOPIC_COUNT, &topics);
    if (rc == 0) rc = cradle_dev_arg_integer(req, "every", false, 1, MAX_EVERY, DEFAULT_EVERY, &every);
    if (rc == 0 && topics == 0) rc = CRADLE_EDEV_ARGUMENT, snprintf(req->message, sizeof req->message,
                                                                    "\"events\" is empty: name at least one");
    if (rc != 0) {
        cradle_dev_reply_error(reply, req, rc, req->message);
        return false;
    }
    uint32_t client = cradle_transport_current(&host->transport);
    cradle_transport_subscribe(&host->transport, client, topics);
    set_every(host, client, (topics & TOPIC_STEP) ? (uint32_t)every : 0);
    cradle_dev_reply_begin(reply, req);
    cradle_writer_text(reply, ",\"events\":[");
    bool first = true;
    for (size_t i = 0; i < TOPIC_COUNT; i++) {
        if (!(topics & (UINT64_C(1) << i))) continue;
        if (!first) cradle_writer_text(reply, ",");
        cradle_writer_json_string(reply, TOPICS[i], strlen(TOPICS[i]));
        first = false;
    }
    cradle_writer_text(reply, "]");
    if (topics & TOPIC_STEP) cradle_dev_field_u64(reply, "every", (uint64_t)every);
    cradle_dev_reply_end(reply);
    return false;
}

bool cradle__server_dev_unsubscribe(void *context, cradle_dev_request *req, cradle_writer *reply) {
    cradle_server_host *host = context;
    uint32_t client = cradle_transport_current(&host->transport);
    cradle_transport_subscribe(&host->transport, client, 0);
    set_every(host, client, 0);
    cradle_dev_reply_ok(reply, req);
    return false;
}

/* {"event":E,"level":L,"step":S,"message":M}: the start of every line. */
static void begin_line(cradle_writer *w, const cradle_server_host *host, const char *event, const char *level) {
    cradle_writer_text(w, "{\"event\":");
    cradle_writer_json_string(w, event, strlen(event));
    if (level) {
        cradle_writer_text(w, ",\"level\":");
        cradle_writer_json_string(w, level, strlen(level));
    }
    cradle_writer_format(w, ",\"step\":%" PRIu64, host->sim.next_step);
}

void cradle__server_publish_said(cradle_server_host *host, const char *level, const char *event,
                                 const char *message) {
    if (!host->transport_open) return;
    uint64_t topic = topic_of(event);
    if (!cradle_transport_has_subscribers(&host->transport, topic)) return;
    char line[EVENT_LINE_MAX];
    cradle_writer w;
    cradle_writer_init(&w, line, sizeof line);
    begin_line(&w, host, event, level);
    cradle_writer_text(&w, ",\"message\":");
    cradle_writer_json_string(&w, message, strlen(message));
    cradle_writer_text(&w, "}\n");
    if (!w.overflow) (void)cradle_transport_publish(&host->transport, topic, line, w.length);
}

void cradle__server_publish_prediction(cradle_server_host *host, uint32_t slot) {
    if (!host->transport_open) return;
    uint64_t topic = topic_of("prediction");
    if (!cradle_transport_has_subscribers(&host->transport, topic)) return;
    char line[EVENT_LINE_MAX];
    cradle_writer w;
    cradle_writer_init(&w, line, sizeof line);
    begin_line(&w, host, "prediction", NULL);
    cradle_writer_format(&w, ",\"slot\":%" PRIu32, slot);
    cradle__server_write_prediction(&w, host, &host->peers[host->slots[slot].peer]);
    cradle_writer_text(&w, "}\n");
    if (!w.overflow) (void)cradle_transport_publish(&host->transport, topic, line, w.length);
}

void cradle__server_publish_step(cradle_server_host *host, uint64_t step_ns) {
    /* A running average over about 16 steps, in ns. */
    host->step_ns_avg = host->step_ns_avg ? (host->step_ns_avg * 15 + step_ns) / 16 : step_ns;
    uint64_t done = host->sim.next_step;
    uint32_t clients = cradle_transport_capacity(&host->transport);
    char line[EVENT_LINE_MAX];
    size_t length = 0;
    for (uint32_t c = 0; c < clients; c++) {
        uint32_t every = host->step_every[c];
        if (!every || done % every != 0) continue;
        if (!(cradle_transport_topics(&host->transport, c) & TOPIC_STEP)) {
            set_every(host, c, 0); /* gone, dropped, or another client in the slot now */
            continue;
        }
        if (length == 0) {
            cradle_writer w;
            cradle_writer_init(&w, line, sizeof line);
            begin_line(&w, host, "step", NULL);
            uint32_t players = 0;
            for (uint32_t s = 0; s < host->players; s++) players += host->slots[s].occupied;
            cradle_writer_format(&w, ",\"hash\":\"%016" PRIx64 "\",\"players\":%" PRIu32 ",\"step_us\":%.1f}\n",
                                 cradle_sim_hash(&host->sim), players, (double)host->step_ns_avg / 1000.0);
            length = w.overflow ? 0 : w.length;
            if (length == 0) return;
        }
        (void)cradle_transport_publish_to(&host->transport, c, line, length);
    }
}

void cradle__server_publish_lag(cradle_server_host *host, uint64_t now_ns) {
    uint64_t fell = host->net ? atomic_load(&host->net->stats.fell_behind) : 0;
    if (fell > host->seen_fell_behind) {
        cradle_server_say(host, "warning", "fell_behind",
                          "%" PRIu64 " more client stream(s) fell behind and were repaired (%" PRIu64 " in all)",
                          fell - host->seen_fell_behind, fell);
        host->seen_fell_behind = fell;
    }
    if (host->dropped_steps > host->seen_dropped_steps) {
        cradle_server_say(host, "warning", "fell_behind",
                          "the host fell behind its clock: %" PRIu64 " steps dropped (%" PRIu64 " in all)",
                          host->dropped_steps - host->seen_dropped_steps, host->dropped_steps);
        host->seen_dropped_steps = host->dropped_steps;
    }
    /* Garbage at the UDP port (an attack, a scanner): said at most once a
     * second, so a flood cannot flood the stream too. */
    uint64_t garbage = host->net ? atomic_load(&host->net->stats.dropped_garbage) : 0;
    if (garbage > host->seen_garbage && (!host->garbage_said_ns || now_ns - host->garbage_said_ns >= 1000000000u)) {
        cradle_server_say(host, "warning", "garbage",
                          "%" PRIu64 " datagrams at the UDP port were no peer's and no connect: dropped (%" PRIu64
                          " in all)",
                          garbage - host->seen_garbage, garbage);
        host->seen_garbage = garbage;
        host->garbage_said_ns = now_ns;
    }
}
