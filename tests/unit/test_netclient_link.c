/*
 * Tests for netclient over a link of the test's own (link.h): a script in
 * memory. It is a second transport beside ENet, proving the interface, and it
 * lets the test play the server: the events the client receives are the
 * script (messages encoded with cradle_wire_encode, CONNECTED, LOST, raw
 * datagrams handed to the datagram callback), what the client sends is logged
 * decoded. No socket, no sleep, no real time: every now_ns is the test's and
 * the client never waits (wait_ms 0). The game is the counter; the test runs
 * it through the core library too, for the hashes the server would send.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cradle/raw_datagram.h"
#include "cradle/reload.h"
#include "cradle/sim_storage.h"
#include "cradle/wire.h"
#include "netclient.h"

#define MS 1000000ull
#define T0 (1000u * MS) /* the test clock's start */
#define SEED 1234u
#define PLAYERS 4u
#define SLOT 3u
#define STEPS 60u  /* steps the reference runs */
#define BATCH 10u  /* steps per STEPS message */
#define K 10u      /* the hash interval: a hash after step s when (s + 1) % K == 0 (server/src/host.c) */
#define SCRIPT_MAX 32u
#define LOG_MAX 64u
#define DATAGRAM 100 /* a script entry that is a raw datagram, not a cradle_link_event_kind */

/* ---- the memory link ----------------------------------------------------- */

typedef struct script_entry {
    int kind; /* cradle_link_event_kind, or DATAGRAM */
    uint32_t reason;
    bool from_server;
    size_t size;
    uint8_t bytes[CRADLE_WIRE_MESSAGE_MAX];
} script_entry;

typedef struct log_entry {
    bool reliable, datagram;
    cradle_wire_message m; /* points into bytes (or scratch, for a datagram) */
    uint8_t bytes[CRADLE_WIRE_MESSAGE_MAX];
    uint8_t scratch[CRADLE_RAW_MESSAGE_MAX];
} log_entry;

typedef struct mem_link {
    script_entry script[SCRIPT_MAX];
    uint32_t head, tail;
    log_entry log[LOG_MAX];
    uint32_t logged;
    cradle_link_datagram_fn datagram; /* the client's: cradle_netclient_datagram */
    void *datagram_context;
    uint32_t connects, flushes, closes, waits; /* waits: receives asked to wait */
} mem_link;

static int mem_connect(void *self, char *message, size_t message_size) {
    (void)message, (void)message_size;
    ((mem_link *)self)->connects++;
    return 0;
}

static uint64_t mem_connection_id(void *self) { (void)self; return 42; }

static log_entry *mem_log(mem_link *l, const void *data, size_t size) {
    assert_true(l->logged < LOG_MAX && size <= CRADLE_WIRE_MESSAGE_MAX);
    log_entry *e = &l->log[l->logged++];
    memcpy(e->bytes, data, size);
    return e;
}

static bool mem_send(void *self, const void *data, size_t size, bool reliable) {
    log_entry *e = mem_log(self, data, size);
    e->reliable = reliable;
    assert_int_equal(cradle_wire_decode(&e->m, e->bytes, size), 0);
    return true;
}

static bool mem_send_datagram(void *self, const void *data, size_t size) {
    log_entry *e = mem_log(self, data, size);
    e->datagram = true;
    assert_int_equal(cradle_raw_decode(NULL, e->bytes, size, e->scratch, &e->m), 0);
    return true;
}

/* The next scripted event; raw datagrams on the way go to the callback, as a
 * link hands over the datagrams it reads meanwhile. */
static int mem_receive(void *self, uint32_t wait_ms, cradle_link_event *event) {
    mem_link *l = self;
    if (wait_ms) l->waits++;
    while (l->head < l->tail && l->script[l->head].kind == DATAGRAM) {
        script_entry *s = &l->script[l->head++];
        l->datagram(l->datagram_context, s->bytes, s->size, s->from_server);
    }
    if (l->head == l->tail) return 0;
    script_entry *s = &l->script[l->head++];
    *event = (cradle_link_event){.kind = (cradle_link_event_kind)s->kind, .data = s->bytes, .size = s->size,
                                 .reason = s->reason};
    return 1;
}

static uint64_t mem_arrived(void *self) { (void)self; return 0; }
static void mem_flush(void *self) { ((mem_link *)self)->flushes++; }
static void mem_leave(void *self, uint32_t wait_ms) { (void)self, (void)wait_ms; }
static void mem_close(void *self) { ((mem_link *)self)->closes++; }

static const cradle_link_ops mem_ops = {
    .connect = mem_connect, .connection_id = mem_connection_id, .send = mem_send,
    .send_datagram = mem_send_datagram, .receive = mem_receive, .arrived = mem_arrived,
    .flush = mem_flush, .leave = mem_leave, .close = mem_close};

static script_entry *script_add(mem_link *l, int kind) {
    assert_true(l->tail < SCRIPT_MAX);
    l->script[l->tail] = (script_entry){.kind = kind};
    return &l->script[l->tail++];
}

static void script_event(mem_link *l, cradle_link_event_kind kind, uint32_t reason) {
    script_add(l, (int)kind)->reason = reason;
}

static void script_message(mem_link *l, const cradle_wire_message *m) {
    script_entry *s = script_add(l, CRADLE_LINK_MESSAGE);
    assert_int_equal(cradle_wire_encode(s->bytes, sizeof s->bytes, &s->size, m), 0);
}

static void script_datagram(mem_link *l, const cradle_wire_message *m, bool from_server) {
    script_entry *s = script_add(l, DATAGRAM);
    s->from_server = from_server;
    assert_int_equal(cradle_raw_encode(NULL, m, s->bytes, sizeof s->bytes, &s->size), 0);
}

/* The last message of this type the client sent; the test fails when none. */
static const log_entry *last_sent(const mem_link *l, int type) {
    for (uint32_t i = l->logged; i-- > 0;)
        if (l->log[i].m.type == type) return &l->log[i];
    fail_msg("the client sent no %s", cradle_wire_type_name(type));
    static const log_entry none; /* not reached: fail_msg leaves the test */
    return &none;
}

static uint32_t count_sent(const mem_link *l, int type) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < l->logged; i++) n += l->log[i].m.type == type;
    return n;
}

/* ---- the server's side: the game, its snapshots and hashes ---------------- */

static char dir[256], ref_dir[300], report_path[300];
static cradle_reload ref_lib;                  /* the test's own load of the counter */
static uint8_t snapshots[STEPS][16];
static uint32_t snapshot_size;
static uint64_t hashes[STEPS];                 /* the state hash after each step */
static cradle_netclient net;
static mem_link link_;

static int8_t player_input(uint64_t step) { return (int8_t)((int)(step % 7u) - 3); }

static void input_fn(void *context, uint64_t step, uint8_t *out, uint32_t input_bytes) {
    (void)context;
    assert_int_equal(input_bytes, 1);
    out[0] = (uint8_t)player_input(step);
}

static int group_setup(void **unused) {
    (void)unused;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/cradle-netclient-link-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) return -1;
    snprintf(ref_dir, sizeof ref_dir, "%s/ref", dir);
    snprintf(report_path, sizeof report_path, "%s/desync.txt", dir);
    char why[CRADLE_RELOAD_MESSAGE_MAX];
    if (mkdir(ref_dir, 0700) != 0 ||
        cradle_reload_open(&ref_lib, &(cradle_reload_config){.path = COUNTER_LIB, .copy_dir = ref_dir}, 0, why,
                           sizeof why) != 0)
        return -1;
    const cradle_game_contract *k = cradle_reload_contract(&ref_lib);
    snapshot_size = cradle_snapshot_size(k->max_players, k->input_bytes);
    if (snapshot_size > sizeof snapshots[0]) return -1;
    cradle_sim sim;
    cradle_sim_storage storage;
    if (cradle_sim_storage_open(&storage, &sim, k, &(cradle_sim_storage_config){0}, why, sizeof why) != 0) return -1;
    int rc = cradle_sim_start(&sim, SEED, PLAYERS);
    for (uint64_t s = 0; s < STEPS && rc == 0; s++) {
        /* slot 0 (another player, +1 every step) and ours, slot 3, with its inputs */
        uint8_t *snap = snapshots[s];
        snap[0] = 1u | 1u << SLOT;
        snap[CRADLE_PRESENCE_BYTES(k->max_players) + 0] = 1;
        snap[CRADLE_PRESENCE_BYTES(k->max_players) + SLOT] = (uint8_t)player_input(s);
        cradle_sim_step(&sim, snap);
        hashes[s] = cradle_sim_hash(&sim);
    }
    cradle_sim_storage_close(&storage);
    return rc;
}

static int group_teardown(void **unused) {
    (void)unused;
    cradle_reload_close(&ref_lib);
    (void)unlink(report_path);
    (void)rmdir(ref_dir);
    return rmdir(dir);
}

/* STEPS for steps first .. first + count - 1, with the true hashes where the
 * server sends them; flip spoils the one at bad_step. */
static cradle_wire_message steps_message(uint64_t first, uint8_t count, uint64_t bad_step, uint64_t flip) {
    static uint8_t bytes[STEPS * 16];
    cradle_wire_message m = {.type = CRADLE_WIRE_STEPS};
    cradle_wire_steps *s = &m.as.steps;
    *s = (cradle_wire_steps){.first_step = first, .count = count, .snapshot_size = (uint16_t)snapshot_size,
                             .snapshots = bytes};
    for (uint8_t i = 0; i < count; i++) {
        memcpy(bytes + (size_t)i * snapshot_size, snapshots[first + i], snapshot_size);
        if ((first + i + 1) % K == 0)
            s->hashes[s->hash_count++] =
                (cradle_wire_hash){.offset = i, .hash = hashes[first + i] ^ (first + i == bad_step ? flip : 0)};
    }
    return m;
}

/* ---- the client ------------------------------------------------------------ */

static uint32_t predict_window; /* the next open_client's */

static void open_client(const char *report, uint32_t silence_ms) {
    memset(&link_, 0, sizeof link_);
    link_.datagram = cradle_netclient_datagram;
    link_.datagram_context = &net;
    cradle_link link = {.ops = &mem_ops, .self = &link_};
    cradle_netclient_config config = {
        .link = &link, .game = COUNTER_LIB, .copy_dir = dir, .requested_slot = SLOT, .insecure = true,
        .input = input_fn, .desync_report = report, .silence_timeout_ms = silence_ms,
        .predict_window = predict_window};
    assert_int_equal(cradle_netclient_open(&net, &config, T0), 0);
    assert_int_equal(link_.connects, 1);
    assert_int_equal(net.phase, CRADLE_NETCLIENT_CONNECTING);
}

static int teardown(void **unused) {
    (void)unused;
    cradle_netclient_close(&net);
    return 0;
}

/* WELCOME (after the client's HELLO) at `now`: the client then plays from step 0. */
static uint16_t welcome_delay = 2; /* the next WELCOME's input delay */

static void welcome(uint64_t now) {
    const cradle_game_contract *k = cradle_reload_contract(&ref_lib);
    cradle_wire_message w = {.type = CRADLE_WIRE_WELCOME};
    w.as.welcome = (cradle_wire_welcome){
        .slot = SLOT, .players = PLAYERS, .max_players = (uint8_t)k->max_players,
        .input_bytes = (uint8_t)k->input_bytes, .state_size = k->state_size,
        .steps_per_second = k->steps_per_second, .source_frames_per_second = k->source_frames_per_second,
        .seed = SEED, .input_delay = welcome_delay, .hash_interval = K, .start_step = 0};
    cradle_wire_set_text(w.as.welcome.game, sizeof w.as.welcome.game, k->name);
    cradle_wire_set_text(w.as.welcome.build_id, sizeof w.as.welcome.build_id, k->build_id);
    script_message(&link_, &w);
    assert_int_equal(cradle_netclient_service(&net, now, 0), 0);
    assert_true(cradle_netclient_playing(&net));
}

static void join(uint64_t now) {
    script_event(&link_, CRADLE_LINK_CONNECTED, 0);
    assert_int_equal(cradle_netclient_service(&net, now, 0), 0);
    welcome(now);
}

static uint32_t run_all(uint64_t now) {
    uint32_t ran = 0;
    int rc;
    while ((rc = cradle_netclient_step(&net, now)) == 1) ran++;
    assert_int_equal(rc, 0);
    return ran;
}

/* ---- the tests ------------------------------------------------------------- */

static void test_join_and_play(void **unused) {
    (void)unused;
    open_client(NULL, 0);
    assert_int_equal(cradle_netclient_service(&net, T0, 0), 0);
    assert_int_equal(link_.logged, 0); /* nothing before the connection is up */

    script_event(&link_, CRADLE_LINK_CONNECTED, 0);
    assert_int_equal(cradle_netclient_service(&net, T0, 0), 0);
    assert_int_equal(link_.logged, 1);
    const cradle_wire_hello *h = &link_.log[0].m.as.hello;
    assert_int_equal(link_.log[0].m.type, CRADLE_WIRE_HELLO);
    assert_true(link_.log[0].reliable);
    assert_string_equal(h->game, "counter");
    assert_string_equal(h->build_id, cradle_reload_contract(&ref_lib)->build_id);
    assert_int_equal(h->requested_slot, SLOT);
    assert_false(h->spectator);
    assert_int_equal(net.phase, CRADLE_NETCLIENT_HELLO);

    welcome(T0);
    /* the first INPUT goes with the WELCOME: inputs for steps 0 .. 0 + delay - 1 */
    const log_entry *in = last_sent(&link_, CRADLE_WIRE_INPUT);
    assert_false(in->reliable);
    assert_int_equal(in->m.as.input.ack, 0);
    assert_int_equal(in->m.as.input.first_step, 0);
    assert_int_equal(in->m.as.input.count, 2);
    assert_int_equal((int8_t)in->m.as.input.inputs[1], player_input(1));

    uint64_t now = T0;
    for (uint64_t first = 0; first < STEPS; first += BATCH) {
        now += 16 * MS;
        cradle_wire_message m = steps_message(first, BATCH, UINT64_MAX, 0);
        script_message(&link_, &m);
        assert_int_equal(cradle_netclient_service(&net, now, 0), 0);
        in = last_sent(&link_, CRADLE_WIRE_INPUT);
        assert_int_equal(in->m.as.input.ack, first + BATCH);
        assert_int_equal(run_all(now), BATCH);
    }
    assert_int_equal(net.steps_run, STEPS);
    assert_int_equal(net.hashes_checked, STEPS / K);
    assert_int_equal(net.last_hash_step, STEPS - 1);
    assert_false(net.desync);
    assert_int_equal(count_sent(&link_, CRADLE_WIRE_DESYNC), 0);
    assert_true(cradle_netclient_state_hash(&net) == hashes[STEPS - 1]);
    assert_int_equal(cradle_netclient_players_present(&net), 2);
    /* the last INPUT: ack 60, the player's inputs up to 60 + 2 - 1, the last REDUNDANCY of them */
    assert_int_equal(in->m.as.input.first_step, STEPS + 1 - CRADLE_NETCLIENT_REDUNDANCY + 1);
    assert_int_equal(in->m.as.input.count, CRADLE_NETCLIENT_REDUNDANCY);
    for (uint32_t i = 0; i < in->m.as.input.count; i++)
        assert_int_equal((int8_t)in->m.as.input.inputs[i], player_input(in->m.as.input.first_step + i));
    assert_int_equal(count_sent(&link_, CRADLE_WIRE_INPUT), 1 + STEPS / BATCH);
    /* a link that says CONNECTED again changes nothing: no second HELLO, the session plays on */
    script_event(&link_, CRADLE_LINK_CONNECTED, 0);
    assert_int_equal(cradle_netclient_service(&net, now, 0), 0);
    assert_int_equal(count_sent(&link_, CRADLE_WIRE_HELLO), 1);
    assert_true(cradle_netclient_playing(&net));
    /* the round trip's PING went as a raw datagram */
    const log_entry *ping = last_sent(&link_, CRADLE_WIRE_PING);
    assert_true(ping->datagram);
    assert_int_equal(link_.waits, 0);
    assert_true(link_.flushes >= 1 + STEPS / BATCH);
    cradle_netclient_close(&net);
    assert_int_equal(link_.closes, 1);
}

static void test_raw_datagram_steps(void **unused) {
    (void)unused;
    open_client(NULL, 0);
    join(T0);
    cradle_wire_message m = steps_message(0, BATCH, UINT64_MAX, 0);
    script_datagram(&link_, &m, true);
    assert_int_equal(cradle_netclient_service(&net, T0 + 16 * MS, 0), 0);
    assert_int_equal(net.raw_steps, 1);
    assert_int_equal(net.raw_dropped, 0);
    assert_int_equal(cradle_netclient_pending(&net), BATCH);
    assert_int_equal(last_sent(&link_, CRADLE_WIRE_INPUT)->m.as.input.ack, BATCH);
    assert_int_equal(run_all(T0 + 16 * MS), BATCH);
    assert_int_equal(net.hashes_checked, 1);

    /* the next steps from another address: dropped, counted, nothing queued */
    m = steps_message(BATCH, BATCH, UINT64_MAX, 0);
    script_datagram(&link_, &m, false);
    assert_int_equal(cradle_netclient_service(&net, T0 + 32 * MS, 0), 0);
    assert_int_equal(net.raw_dropped, 1);
    assert_int_equal(net.raw_steps, 1);
    assert_int_equal(cradle_netclient_pending(&net), 0);
    assert_int_equal(net.received_next, BATCH);
    /* ... and the same from the server: taken */
    script_datagram(&link_, &m, true);
    assert_int_equal(cradle_netclient_service(&net, T0 + 48 * MS, 0), 0);
    assert_int_equal(net.raw_steps, 2);
    assert_int_equal(run_all(T0 + 48 * MS), BATCH);
    assert_int_equal(net.hashes_checked, 2);
}

static void test_desync(void **unused) {
    (void)unused;
    open_client(report_path, 0);
    join(T0);
    const uint64_t bad = 2 * K - 1, flip = 0x5a5a;
    cradle_wire_message m = steps_message(0, 2 * K, bad, flip);
    script_message(&link_, &m);
    assert_int_equal(cradle_netclient_service(&net, T0 + 16 * MS, 0), 0);
    assert_int_equal(run_all(T0 + 16 * MS), 2 * K);
    assert_true(net.desync);
    assert_int_equal(net.hashes_checked, 1);
    assert_int_equal(net.desync_step, bad);
    assert_true(net.desync_mine == hashes[bad]);
    assert_true(net.desync_theirs == (hashes[bad] ^ flip));
    const log_entry *d = last_sent(&link_, CRADLE_WIRE_DESYNC);
    assert_true(d->reliable);
    assert_int_equal(d->m.as.desync.step, bad);
    assert_true(d->m.as.desync.hash == hashes[bad]);
    assert_true(d->m.as.desync.expected == (hashes[bad] ^ flip));

    /* the whole header, then base state, the K snapshots since it, the client's state */
    const cradle_game_contract *k = cradle_reload_contract(&ref_lib);
    char expect[512], bytes[1024];
    int len = snprintf(expect, sizeof expect,
                       "cradle-desync 1\ngame counter\nbuild %s\nstep %u\nclient_hash %016" PRIx64
                       "\nserver_hash %016" PRIx64 "\nbase_step %u\nsnapshot_size %u\nsnapshots %u\n"
                       "truncated 0\nstate_size %u\nend\n",
                       k->build_id, (unsigned)bad, hashes[bad], hashes[bad] ^ flip, (unsigned)(K - 1),
                       (unsigned)snapshot_size, (unsigned)K, (unsigned)k->state_size);
    FILE *f = fopen(report_path, "rb");
    assert_non_null(f);
    size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    assert_int_equal(n, (size_t)len + 2u * k->state_size + K * snapshot_size);
    assert_memory_equal(bytes, expect, (size_t)len);
}

static void test_refusal(void **unused) {
    (void)unused;
    open_client(NULL, 0);
    script_event(&link_, CRADLE_LINK_CONNECTED, 0);
    assert_int_equal(cradle_netclient_service(&net, T0, 0), 0);
    assert_int_equal(last_sent(&link_, CRADLE_WIRE_HELLO)->m.as.hello.requested_slot, SLOT);
    cradle_wire_message r = {.type = CRADLE_WIRE_REFUSE, .as.refuse.reason = CRADLE_WIRE_REFUSE_BUILD};
    cradle_wire_set_text(r.as.refuse.text, sizeof r.as.refuse.text, "the server runs build b2");
    script_message(&link_, &r);
    assert_int_equal(cradle_netclient_service(&net, T0 + MS, 0), CRADLE_ENET_REFUSED);
    assert_int_equal(net.error, CRADLE_ENET_REFUSED);
    assert_int_equal(net.refusal, CRADLE_WIRE_REFUSE_BUILD);
    assert_string_equal(net.refusal_text, "the server runs build b2");
    assert_int_equal(net.phase, CRADLE_NETCLIENT_CLOSED);
    assert_non_null(strstr(net.message, "build"));
    assert_int_equal(cradle_netclient_step(&net, T0 + 2 * MS), CRADLE_ENET_REFUSED);
    assert_int_equal(cradle_netclient_service(&net, T0 + 2 * MS, 0), CRADLE_ENET_REFUSED);
}

static void test_turned_away(void **unused) {
    (void)unused;
    open_client(NULL, 0);
    script_event(&link_, CRADLE_LINK_LOST, CRADLE_WIRE_DISCONNECT_RATE_LIMITED);
    assert_int_equal(cradle_netclient_service(&net, T0, 0), 0);
    assert_int_equal(net.turned_away, 1);
    assert_int_equal(net.turned_busy, 0);
    assert_int_equal(net.phase, CRADLE_NETCLIENT_CONNECTING);
    assert_int_equal(cradle_netclient_service(&net, T0 + 249 * MS, 0), 0);
    assert_int_equal(link_.connects, 1); /* the first wait is 250 ms */
    assert_int_equal(cradle_netclient_service(&net, T0 + 250 * MS, 0), 0);
    assert_int_equal(link_.connects, 2);
    assert_int_equal(cradle_netclient_service(&net, T0 + 400 * MS, 0), 0);
    assert_int_equal(link_.connects, 2); /* once */
    /* turned away again after its HELLO: the wait doubles */
    script_event(&link_, CRADLE_LINK_CONNECTED, 0);
    script_event(&link_, CRADLE_LINK_LOST, CRADLE_WIRE_DISCONNECT_BUSY);
    assert_int_equal(cradle_netclient_service(&net, T0 + 500 * MS, 0), 0);
    assert_int_equal(count_sent(&link_, CRADLE_WIRE_HELLO), 1);
    assert_int_equal(net.turned_away, 2);
    assert_int_equal(net.turned_busy, 1);
    assert_int_equal(cradle_netclient_service(&net, T0 + 999 * MS, 0), 0);
    assert_int_equal(link_.connects, 2);
    assert_int_equal(cradle_netclient_service(&net, T0 + 1000 * MS, 0), 0);
    assert_int_equal(link_.connects, 3);
    assert_int_equal(net.error, 0);
}

static void test_silence(void **unused) {
    (void)unused;
    open_client(NULL, 1000);
    join(T0);
    /* a PING from the server at 600 ms is heard (and answered) */
    cradle_wire_message ping = {.type = CRADLE_WIRE_PING, .as.ping.echo = 77};
    script_message(&link_, &ping);
    assert_int_equal(cradle_netclient_service(&net, T0 + 600 * MS, 0), 0);
    const log_entry *pong = last_sent(&link_, CRADLE_WIRE_PONG);
    assert_int_equal(pong->m.as.ping.echo, 77);
    assert_int_equal(cradle_netclient_service(&net, T0 + 1600 * MS, 0), 0); /* 1000 ms: not more */
    assert_int_equal(cradle_netclient_service(&net, T0 + 1600 * MS + 1, 0), CRADLE_ENET_TIMEOUT);
    assert_int_equal(net.error, CRADLE_ENET_TIMEOUT);
    assert_non_null(strstr(net.message, "1000 ms"));
    assert_int_equal(link_.waits, 0);
}

/* The server's word on the client's own slot wins: a step whose input for
 * it is not the one sent (the server took it late and repeated the last)
 * is what the confirmed state runs, and is counted; the prediction that
 * guessed otherwise rolls back. */
static void test_prediction_takes_the_servers_word(void **unused) {
    (void)unused;
    predict_window = 8;
    open_client(NULL, 0);
    predict_window = 0;
    join(T0);
    assert_int_equal(cradle_netclient_predict(&net), 0);
    assert_true(net.predict.on);
    /* inputs for steps 0 and 1 went with the WELCOME's answer: it shows step 1 */
    assert_int_equal(cradle_netclient_shown(&net)->next_step, 2);
    assert_ptr_equal(cradle_netclient_shown(&net), &net.predict.sim);

    /* Steps 0..4, step 1 with our slot's input as the server took it: 0. */
    static uint8_t altered[5][16];
    memcpy(altered, snapshots, sizeof altered);
    const cradle_game_contract *k = cradle_reload_contract(&ref_lib);
    altered[1][CRADLE_PRESENCE_BYTES(k->max_players) + SLOT] = 0;
    assert_true(player_input(1) != 0);
    memcpy(snapshots[1], altered[1], snapshot_size); /* the server's step 1, for this message only */
    cradle_wire_message m = steps_message(0, 5, UINT64_MAX, 0);
    script_message(&link_, &m);
    snapshots[1][CRADLE_PRESENCE_BYTES(k->max_players) + SLOT] = (uint8_t)player_input(1);
    assert_int_equal(cradle_netclient_service(&net, T0 + MS, 0), 0);
    assert_int_equal(run_all(T0 + MS), 5);
    assert_int_equal(cradle_netclient_predict(&net), 0);
    const cradle_predict_figures *f = &net.predict.figures;
    assert_int_equal(f->own_overridden, 1);
    assert_int_equal(f->rollbacks, 1); /* its guess lacked slot 0 from step 0 on */
    /* The confirmed state is the server's steps' (the reference run of them). */
    cradle_sim ref;
    cradle_sim_storage storage;
    char why[CRADLE_SIM_STORAGE_MESSAGE_MAX];
    assert_int_equal(cradle_sim_storage_open(&storage, &ref, k, &(cradle_sim_storage_config){0}, why, sizeof why), 0);
    assert_int_equal(cradle_sim_start(&ref, SEED, PLAYERS), 0);
    for (int i = 0; i < 5; i++) cradle_sim_step(&ref, altered[i]);
    assert_true(cradle_sim_hash(&ref) == cradle_sim_hash(&net.sim));
    /* ... and the predicted state runs on from it with the steps the client
     * guessed: slot 0 as in the newest step (1), ours as sent */
    assert_int_equal(net.predict.sim.next_step, net.input_sent_through);
    while (ref.next_step < net.predict.sim.next_step) cradle_sim_step(&ref, snapshots[ref.next_step]);
    assert_true(cradle_sim_hash(&ref) == cradle_sim_hash(&net.predict.sim));
    cradle_sim_storage_close(&storage);
    assert_false(net.desync);
}

/* An input delay past the inputs a client keeps for prediction ends the
 * prediction with a message, never the session: the player goes on in
 * lockstep and sees the confirmed steps. */
static void test_prediction_ends_past_what_it_keeps(void **unused) {
    (void)unused;
    predict_window = 8;
    open_client(NULL, 0);
    predict_window = 0;
    welcome_delay = CRADLE_NETCLIENT_INPUTS_KEPT + 40u;
    join(T0);
    welcome_delay = 2;
    cradle_wire_message m = steps_message(0, 5, UINT64_MAX, 0);
    script_message(&link_, &m);
    assert_int_equal(cradle_netclient_service(&net, T0 + MS, 0), 0);
    assert_int_equal(run_all(T0 + MS), 5);
    assert_int_equal(cradle_netclient_predict(&net), 0);
    assert_false(net.predict.on);
    assert_string_equal(net.predict.message, "prediction off: the input delay is longer than the inputs a client keeps");
    assert_ptr_equal(cradle_netclient_shown(&net), &net.sim);
    assert_int_equal(net.error, 0);
    m = steps_message(5, 10, UINT64_MAX, 0);
    script_message(&link_, &m);
    assert_int_equal(cradle_netclient_service(&net, T0 + 2 * MS, 0), 0);
    assert_int_equal(run_all(T0 + 2 * MS), 10);
    assert_int_equal(net.hashes_checked, 1); /* step 9's: the confirmed steps are exact */
    assert_false(net.desync);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_join_and_play, teardown),
        cmocka_unit_test_teardown(test_raw_datagram_steps, teardown),
        cmocka_unit_test_teardown(test_desync, teardown),
        cmocka_unit_test_teardown(test_refusal, teardown),
        cmocka_unit_test_teardown(test_turned_away, teardown),
        cmocka_unit_test_teardown(test_silence, teardown),
        cmocka_unit_test_teardown(test_prediction_takes_the_servers_word, teardown),
        cmocka_unit_test_teardown(test_prediction_ends_past_what_it_keeps, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
