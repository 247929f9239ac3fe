/*
 * bench_predict: the client library's CPU per frame when prediction is at its
 * worst (Release; prints, asserts nothing about time).
 *
 * A real cradle_netclient (client/net/netclient.h) plays vanguard as slot 0
 * of 8 players with predict_window 16 and effects kept (as the window keeps
 * them), over a link in memory (link.h) whose other end is this program
 * playing the server: CONNECTED, the client's HELLO, a WELCOME (input delay
 * 16, start step 0, seed 1), then every frame ONE STEPS carrying exactly the
 * next step. Its snapshot has all 8 slots present: slot 0's input is what the
 * client sent for that step over the link (its INPUTs, decoded), slots 1..7
 * get fresh random bytes every step. The client guesses the others' inputs
 * from the newest step received (vanguard has no predict()), so every
 * confirmed step differs from its prediction and every frame rolls back the
 * whole window: the confirmed step, then 16 predicted steps run again.
 *
 * A frame is: the STEPS handed to the link (encoded outside the clock), then
 * cradle_netclient_service, cradle_netclient_step until none is ready, and
 * cradle_netclient_predict, timed together by this thread's CPU clock
 * (CLOCK_THREAD_CPUTIME_ID: the machine may be shared). 600 warm-up frames
 * (vanguard fills up with ships, shots and enemies), then 3,000 timed ones.
 * The rollbacks are checked: fewer than 99% of the timed frames rolling back
 * the full window means this is not the worst case, and the bench exits 1.
 * For comparison, a lockstep client (predict_window 0) gets the same feed.
 *
 * Usage: bench_predict
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cradle/wire.h"
#include "netclient.h"
#include "vanguard_internal.h"

#define PLAYERS 8u
#define WINDOW 16u
#define DELAY 16u
#define WARMUP 600u
#define FRAMES 3000u
#define T0 1000000000ull /* the bench's clock at open */
#define SENT_MAX 4u      /* messages the client may send in one service */
#define OWN_KEPT 256u    /* slot 0's inputs as sent, by step */

/* ---- the memory link: one server event at a time, the client's sends kept ---- */

typedef struct mem_link {
    bool pending;
    cradle_link_event_kind kind;
    size_t size;
    uint8_t bytes[CRADLE_WIRE_MESSAGE_MAX];
    uint32_t sent;
    uint64_t sent_lost; /* more than SENT_MAX in one service */
    size_t sent_size[SENT_MAX];
    uint8_t sent_bytes[SENT_MAX][CRADLE_WIRE_MESSAGE_MAX];
} mem_link;

static int mem_connect(void *self, char *message, size_t size) { (void)self, (void)message, (void)size; return 0; }
static uint64_t mem_connection_id(void *self) { (void)self; return 1; }
static bool mem_send(void *self, const void *data, size_t size, bool reliable) {
    mem_link *l = self;
    (void)reliable;
    if (l->sent == SENT_MAX || size > CRADLE_WIRE_MESSAGE_MAX) {
        l->sent_lost++;
        return true;
    }
    memcpy(l->sent_bytes[l->sent], data, size);
    l->sent_size[l->sent++] = size;
    return true;
}
/* The raw PING: nobody answers it. */
static bool mem_send_datagram(void *self, const void *data, size_t size) {
    (void)self, (void)data, (void)size;
    return true;
}
static int mem_receive(void *self, uint32_t wait_ms, cradle_link_event *event) {
    mem_link *l = self;
    (void)wait_ms;
    if (!l->pending) return 0;
    l->pending = false;
    *event = (cradle_link_event){.kind = l->kind, .data = l->bytes, .size = l->size};
    return 1;
}
static uint64_t mem_arrived(void *self) { (void)self; return 0; }
static void mem_flush(void *self) { (void)self; }
static void mem_leave(void *self, uint32_t wait_ms) { (void)self, (void)wait_ms; }
static void mem_close(void *self) { (void)self; }

static const cradle_link_ops mem_ops = {
    .connect = mem_connect, .connection_id = mem_connection_id, .send = mem_send,
    .send_datagram = mem_send_datagram, .receive = mem_receive, .arrived = mem_arrived,
    .flush = mem_flush, .leave = mem_leave, .close = mem_close};

/* ---- the server's side ---------------------------------------------------- */

static mem_link link_;
static uint8_t own[OWN_KEPT][CRADLE_GAME_MAX_INPUT_BYTES]; /* slot 0's input for step s at s % OWN_KEPT */
static uint64_t own_step[OWN_KEPT];

static cradle_netclient *open_net; /* closed on the way out, so its library copy goes */

static void die(const char *what, const cradle_netclient *net) {
    fprintf(stderr, "bench_predict: %s%s%s\n", what, net && net->message[0] ? ": " : "", net ? net->message : "");
    if (open_net) cradle_netclient_close(open_net);
    exit(1);
}

static uint64_t mix(uint64_t x) { /* splitmix64: the same bytes for the same step, in both runs */
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The player's input: random too, a function of the step. */
static void input_fn(void *context, uint64_t step, uint8_t *out, uint32_t input_bytes) {
    (void)context;
    for (uint32_t i = 0; i < input_bytes; i++) out[i] = (uint8_t)(mix(step * 64u + i + 7u) >> 24);
}

static void put_message(const cradle_wire_message *m) {
    if (cradle_wire_encode(link_.bytes, sizeof link_.bytes, &link_.size, m) != 0) die("cannot encode a message", NULL);
    link_.kind = CRADLE_LINK_MESSAGE;
    link_.pending = true;
}

/* Reads what the client sent: the inputs of its INPUTs are slot 0's. Returns
 * the types seen, as bits. */
static uint32_t drain_sent(void) {
    uint32_t types = 0;
    for (uint32_t i = 0; i < link_.sent; i++) {
        cradle_wire_message m;
        if (cradle_wire_decode(&m, link_.sent_bytes[i], link_.sent_size[i]) != 0)
            die("the client sent an undecodable message", NULL);
        types |= 1u << m.type;
        if (m.type != CRADLE_WIRE_INPUT) continue;
        for (uint32_t k = 0; k < m.as.input.count; k++) {
            uint64_t s = m.as.input.first_step + k;
            memcpy(own[s % OWN_KEPT], m.as.input.inputs + (size_t)k * m.as.input.input_bytes, m.as.input.input_bytes);
            own_step[s % OWN_KEPT] = s;
        }
    }
    link_.sent = 0;
    return types;
}

/* One STEPS with step s alone: every slot present, slot 0 as the client sent
 * it (zeros when it did not), slots 1..7 random. */
static void feed_step(const cradle_game_contract *k, uint64_t s) {
    uint8_t snap[CRADLE_SNAPSHOT_MAX];
    uint32_t ib = k->input_bytes, size = cradle_snapshot_size(k->max_players, ib);
    memset(snap, 0, size);
    for (uint32_t p = 0; p < PLAYERS; p++) {
        snap[p / 8u] = (uint8_t)(snap[p / 8u] | 1u << (p % 8u));
        uint8_t *in = snap + CRADLE_PRESENCE_BYTES(k->max_players) + p * ib;
        if (p == 0 && own_step[s % OWN_KEPT] == s)
            memcpy(in, own[s % OWN_KEPT], ib);
        else if (p != 0)
            for (uint32_t i = 0; i < ib; i++) in[i] = (uint8_t)(mix(s * 4096u + p * 64u + i) >> 40);
    }
    cradle_wire_message m = {.type = CRADLE_WIRE_STEPS};
    m.as.steps = (cradle_wire_steps){.first_step = s, .count = 1, .snapshot_size = (uint16_t)size, .snapshots = snap};
    put_message(&m);
}

/* ---- one session ------------------------------------------------------------ */

typedef struct run_result {
    double ms[FRAMES];                /* each timed frame's CPU time */
    cradle_predict_figures figures;   /* over the timed frames */
    uint32_t live_warm, live_end;     /* vanguard's live entities on screen after warm-up, at the end */
    uint32_t wave_end, restarts_end;
} run_result;

static uint32_t live_shown(const cradle_netclient *net, uint32_t *wave, uint32_t *restarts) {
    const vanguard_state *s = (const vanguard_state *)(const void *)cradle_netclient_shown(net)->state;
    if (wave) *wave = s->wave;
    if (restarts) *restarts = s->restarts;
    return cradle_ecs_live_count(vg_world_const(s));
}

static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void run(uint32_t window, run_result *r) {
    memset(&link_, 0, sizeof link_);
    for (uint32_t i = 0; i < OWN_KEPT; i++) own_step[i] = UINT64_MAX;
    cradle_netclient *net = calloc(1, sizeof *net);
    if (!net) die("out of memory", NULL);
    cradle_link link = {.ops = &mem_ops, .self = &link_};
    cradle_netclient_config config = {.link = &link, .game = BENCH_PREDICT_GAME, .requested_slot = -1,
                                      .insecure = true, .input = input_fn, .predict_window = window,
                                      .effects = true};
    uint64_t now = T0;
    open_net = net;
    if (cradle_netclient_open(net, &config, now) != 0) die("cannot open the client", net);
    const cradle_game_contract *k = net->sim.contract;
    uint64_t frame_ns = 1000000000ull / k->steps_per_second;

    link_.kind = CRADLE_LINK_CONNECTED;
    link_.pending = true;
    if (cradle_netclient_service(net, now, 0) != 0 || !(drain_sent() & 1u << CRADLE_WIRE_HELLO))
        die("no HELLO after CONNECTED", net);
    cradle_wire_message w = {.type = CRADLE_WIRE_WELCOME};
    w.as.welcome = (cradle_wire_welcome){
        .slot = 0, .players = PLAYERS, .max_players = (uint8_t)k->max_players,
        .input_bytes = (uint8_t)k->input_bytes, .state_size = k->state_size,
        .steps_per_second = k->steps_per_second, .source_frames_per_second = k->source_frames_per_second,
        .seed = 1, .input_delay = DELAY, .hash_interval = k->steps_per_second, .start_step = 0, .epoch = 0,
        .state_follows = false};
    cradle_wire_set_text(w.as.welcome.game, sizeof w.as.welcome.game, k->name);
    cradle_wire_set_text(w.as.welcome.build_id, sizeof w.as.welcome.build_id, k->build_id);
    put_message(&w);
    if (cradle_netclient_service(net, now, 0) != 0 || !cradle_netclient_playing(net))
        die("the WELCOME did not start play", net);
    (void)drain_sent();

    cradle_predict_figures before = {0};
    for (uint32_t f = 0; f < WARMUP + FRAMES; f++) {
        now += frame_ns;
        feed_step(k, f);
        double t0 = cpu_ms();
        int rc = cradle_netclient_service(net, now, 0);
        while (rc == 0 && (rc = cradle_netclient_step(net, now)) == 1) rc = 0;
        if (rc == 0) rc = cradle_netclient_predict(net);
        double t1 = cpu_ms();
        if (rc != 0) die("the session failed", net);
        if (net->desync) die("desync", net);
        if (window && !net->predict.on) die("prediction ended", NULL);
        cradle_event_queue *present, *confirmed;
        cradle_netclient_effects(net, &present, &confirmed);
        cradle_events_clear(present);
        cradle_events_clear(confirmed);
        (void)drain_sent();
        if (f + 1 == WARMUP) {
            before = net->predict.figures;
            r->live_warm = live_shown(net, NULL, NULL);
        }
        if (f >= WARMUP) r->ms[f - WARMUP] = t1 - t0;
    }
    if (link_.sent_lost) die("the client sent more per frame than the memory link keeps", NULL);
    r->figures = net->predict.figures;
    r->figures.rollbacks -= before.rollbacks;
    r->figures.rollback_steps -= before.rollback_steps;
    r->figures.predicted_steps -= before.predicted_steps;
    r->figures.corrections -= before.corrections;
    r->figures.window_waits -= before.window_waits;
    r->live_end = live_shown(net, &r->wave_end, &r->restarts_end);
    if (net->steps_run != WARMUP + FRAMES) die("the client did not run every step", NULL);
    cradle_netclient_close(net);
    open_net = NULL;
    free(net);
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts ms; mean, p50, p99 and max into out. */
static void stats(double *ms, double out[4]) {
    qsort(ms, FRAMES, sizeof ms[0], compare_double);
    double sum = 0;
    for (uint32_t f = 0; f < FRAMES; f++) sum += ms[f];
    out[0] = sum / FRAMES;
    out[1] = ms[FRAMES / 2];
    out[2] = ms[(FRAMES * 99u) / 100u];
    out[3] = ms[FRAMES - 1];
}

static run_result predicted, lockstep;

int main(void) {
    run(WINDOW, &predicted);
    run(0, &lockstep);
    const cradle_predict_figures *g = &predicted.figures;
    double depth = g->rollbacks ? (double)g->rollback_steps / (double)g->rollbacks : 0.0;
    double p[4], l[4];
    stats(predicted.ms, p);
    stats(lockstep.ms, l);
    printf("predict worst case: vanguard, %u players, window %u, %u frames each rolling back %.2f steps: "
           "mean %.3f ms, p50 %.3f ms, p99 %.3f ms, max %.3f ms per frame (goal <= 2 ms)\n",
           PLAYERS, WINDOW, FRAMES, depth, p[0], p[1], p[2], p[3]);
    printf("lockstep, same feed: mean %.3f ms, p50 %.3f ms, p99 %.3f ms, max %.3f ms per frame "
           "(prediction costs %.1fx)\n",
           l[0], l[1], l[2], l[3], l[0] > 0 ? p[0] / l[0] : 0.0);
    printf("rollbacks: %" PRIu64 " in %u timed frames, mean depth %.2f, deepest %u (whole run), "
           "predicted steps %.2f per frame, corrections %" PRIu64 ", window waits %" PRIu64 "\n",
           g->rollbacks, FRAMES, depth, g->rollback_max, (double)g->predicted_steps / FRAMES, g->corrections,
           g->window_waits);
    printf("vanguard state: %u live entities after %u warm-up frames, %u at the end (wave %u, %u restarts)\n",
           predicted.live_warm, WARMUP, predicted.live_end, predicted.wave_end, predicted.restarts_end);
    if (g->rollbacks < FRAMES * 99u / 100u || depth < WINDOW - 0.5) {
        fprintf(stderr, "bench_predict: warning: %" PRIu64 " rollbacks of mean depth %.2f in %u frames: "
                        "not the worst case this bench means to measure\n", g->rollbacks, depth, FRAMES);
        return 1;
    }
    return 0;
}
