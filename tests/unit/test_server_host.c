/*
 * cradle-server's game thread (server/src/host.c) driven through its rings,
 * without sockets: the test plays the network thread. It pushes connects and
 * messages into the inbound ring and reads what the host queues outbound.
 *
 * The step path's allocations are counted by wrapping malloc and friends at
 * link time (-Wl,--wrap=...): every call from Cradle's own code (host, ring,
 * wire, hash) goes through the counters below.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cradle/hash.h"
#include "cradle/wire.h"
#include "host.h"
#include "net.h"

/* ---- allocation counting ---- */

/* volatile: the compiler knows malloc touches no program variable and would
 * otherwise drop the "counting = true" before a malloc it can see (-O2). */
static volatile bool counting;
static volatile unsigned long allocations;

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_aligned_alloc(size_t align, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *p, size_t size);
void *__wrap_aligned_alloc(size_t align, size_t size);

void *__wrap_malloc(size_t size) {
    if (counting) allocations++;
    return __real_malloc(size);
}
void *__wrap_calloc(size_t count, size_t size) {
    if (counting) allocations++;
    return __real_calloc(count, size);
}
void *__wrap_realloc(void *p, size_t size) {
    if (counting) allocations++;
    return __real_realloc(p, size);
}
void *__wrap_aligned_alloc(size_t align, size_t size) {
    if (counting) allocations++;
    return __real_aligned_alloc(align, size);
}

/* ---- fixture ---- */

static cradle_server_options options;
static cradle_server_net *net;
static cradle_server_host *host;
static _Atomic int no_signal;
/* The time the tests pass to the host's calls: it never reads a clock of
 * its own for a decision. */
static const uint64_t test_now = 1000000000000ull;
static cradle_server_in in_slot;
static cradle_server_out out_slot;
static cradle_wire_message out_msg;

static cradle_server_mode setup_mode = CRADLE_SERVER_COMMANDED;

static int setup(void **state) {
    (void)state;
    memset(&options, 0, sizeof options);
    strcpy(options.game, RELOAD_LIB_INC1);
    options.players = 2;
    options.mode = setup_mode;
    options.hash_interval = 10;
    options.spectators = 1;
    options.input_delay = 2;
    options.seed = 42;
    net = aligned_alloc(CRADLE_RING_CACHE_LINE, (sizeof *net + 63u) & ~(size_t)63u);
    host = aligned_alloc(CRADLE_RING_CACHE_LINE, (sizeof *host + 63u) & ~(size_t)63u);
    assert_non_null(net);
    assert_non_null(host);
    assert_int_equal(cradle_server_net_init_rings(net), 0);
    assert_int_equal(cradle_server_host_init(host, &options, net, &no_signal), 0);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    cradle_server_host_deinit(host);
    cradle_server_net_close(net);
    free(host);
    free(net);
    return 0;
}

/* The next CONNECT carries a verified identity (as the network thread's
 * after a token verified). */
static bool identify_next;
static uint64_t identify_id;

static void push_event(uint16_t peer, uint32_t generation, uint8_t kind) {
    memset(&in_slot, 0, sizeof in_slot);
    if (kind == CRADLE_SERVER_IN_CONNECT && identify_next) {
        in_slot.identified = true;
        in_slot.client_id = identify_id;
    }
    in_slot.peer = peer;
    in_slot.generation = generation;
    in_slot.kind = kind;
    in_slot.rtt_ms = 1;
    in_slot.lowest_rtt_ms = 1;
    assert_true(cradle_ring_push(&net->in, &in_slot));
}

static void push_message(uint16_t peer, uint32_t generation, const cradle_wire_message *m) {
    memset(&in_slot, 0, sizeof in_slot);
    in_slot.peer = peer;
    in_slot.generation = generation;
    in_slot.kind = CRADLE_SERVER_IN_MESSAGE;
    /* as the network thread does: the bytes decoded, the record typed */
    static uint8_t bytes[CRADLE_SERVER_IN_BYTES];
    size_t n = 0;
    assert_int_equal(cradle_wire_encode(bytes, sizeof bytes, &n, m), 0);
    cradle_wire_message decoded;
    assert_int_equal(cradle_wire_decode(&decoded, bytes, n), 0);
    assert_true(cradle_server_in_take(&in_slot, &decoded, false));
    assert_true(cradle_ring_push(&net->in, &in_slot));
}

static void push_hello(uint16_t peer, uint32_t generation, bool spectator, uint8_t slot, const char *game,
                       const char *build) {
    cradle_wire_message m = {.type = CRADLE_WIRE_HELLO};
    m.as.hello.spectator = spectator;
    m.as.hello.requested_slot = slot;
    strcpy(m.as.hello.game, game ? game : host->sim.contract->name);
    strcpy(m.as.hello.build_id, build ? build : host->sim.contract->build_id);
    push_message(peer, generation, &m);
}

static void connect_player(uint16_t peer, uint32_t generation, uint8_t slot) {
    push_event(peer, generation, CRADLE_SERVER_IN_CONNECT);
    push_hello(peer, generation, false, slot, NULL, NULL);
    cradle_server_host_poll(host, test_now);
}

static void push_input(uint16_t peer, uint32_t generation, uint64_t first, uint8_t count,
                       const uint8_t *bytes) {
    cradle_wire_message m = {
        .type = CRADLE_WIRE_INPUT,
        .as.input = {.first_step = first, .count = count, .input_bytes = 1, .inputs = bytes}};
    push_message(peer, generation, &m);
}

/* Pops the next outbound record into out_msg, through the wire as the
 * network thread sends it (the host's message must encode). */
static bool pop_out(void) {
    if (!cradle_ring_pop(&net->out, &out_slot)) return false;
    if (out_slot.flags & CRADLE_SERVER_OUT_CONTROL) {
        memset(&out_msg, 0, sizeof out_msg);
        return true;
    }
    static uint8_t bytes[CRADLE_SERVER_OUT_BYTES];
    size_t n = 0;
    cradle_wire_attach(&out_slot.message, out_slot.payload);
    assert_int_equal(cradle_wire_encode(bytes, sizeof bytes, &n, &out_slot.message), 0);
    assert_int_equal(cradle_wire_decode(&out_msg, bytes, n), 0);
    return true;
}

static void expect_out(uint8_t type, uint16_t peer) {
    assert_true(pop_out());
    assert_int_equal(out_msg.type, type);
    assert_int_equal(out_slot.peer, peer);
}

static void drain_out(void) {
    while (cradle_ring_pop(&net->out, &out_slot)) {
    }
}

/* ---- tests ---- */

static void test_welcome_inputs_and_hashes(void **state) {
    (void)state;
    connect_player(3, 1, CRADLE_WIRE_ANY_SLOT);
    expect_out(CRADLE_WIRE_WELCOME, 3);
    assert_int_equal(out_slot.generation, 1);
    assert_true(out_slot.flags & CRADLE_SERVER_OUT_RELIABLE);
    const cradle_wire_welcome *w = &out_msg.as.welcome;
    assert_int_equal(w->slot, 0);
    assert_int_equal(w->players, 2);
    assert_int_equal(w->max_players, 8);
    assert_int_equal(w->input_bytes, 1);
    assert_int_equal(w->start_step, 0);
    assert_false(w->state_follows);
    assert_int_equal(w->input_delay, 2);
    assert_int_equal(w->hash_interval, 10);
    assert_int_equal(w->seed, 42);
    assert_string_equal(w->game, "counter");
    assert_string_equal(w->build_id, host->sim.contract->build_id);
    assert_false(pop_out());

    /* A message from an older connection at the same index is ignored. */
    push_hello(3, 0, false, CRADLE_WIRE_ANY_SLOT, NULL, NULL);
    cradle_server_host_poll(host, test_now);
    assert_false(pop_out());

    const uint8_t inputs[4] = {5, 6, 7, 8};
    push_input(3, 1, 0, 4, inputs);
    cradle_server_host_advance(host, 6, test_now);
    expect_out(CRADLE_WIRE_STEPS, CRADLE_SERVER_BROADCAST);
    const cradle_wire_steps *s = &out_msg.as.steps;
    assert_int_equal(s->first_step, 0);
    assert_int_equal(s->count, 6);
    assert_int_equal(s->snapshot_size, 9);
    assert_int_equal(s->hash_count, 0);
    for (uint32_t i = 0; i < 6; i++) {
        const uint8_t *snap = s->snapshots + i * 9u;
        assert_int_equal(snap[0], 0x01); /* slot 0 present, slot 1 empty */
        assert_int_equal(snap[1], i < 4 ? 5 + i : 8); /* late steps repeat the last input */
        assert_int_equal(snap[2], 0);
    }
    assert_int_equal(host->slots[0].on_time, 4);
    assert_int_equal(host->slots[0].late, 2);

    cradle_server_host_advance(host, 4, test_now);
    expect_out(CRADLE_WIRE_STEPS, CRADLE_SERVER_BROADCAST);
    assert_int_equal(out_msg.as.steps.first_step, 6);
    assert_int_equal(out_msg.as.steps.hash_count, 1);
    assert_int_equal(out_msg.as.steps.hashes[0].offset, 3); /* step 9 */
    assert_true(out_slot.message.as.steps.first_step == 6); /* the whole number, in the record */
    assert_true(out_msg.as.steps.hashes[0].hash == cradle_hash64(host->sim.state, host->sim.contract->state_size));
}

static void expect_refusal(uint8_t reason, uint16_t peer) {
    expect_out(CRADLE_WIRE_REFUSE, peer);
    assert_int_equal(out_msg.as.refuse.reason, reason);
    assert_true(out_slot.flags & CRADLE_SERVER_OUT_DISCONNECT);
    assert_true(strlen(out_msg.as.refuse.text) > 0);
}

static void test_refusals(void **state) {
    (void)state;
    push_event(1, 1, CRADLE_SERVER_IN_CONNECT);
    push_hello(1, 1, false, CRADLE_WIRE_ANY_SLOT, "other", NULL);
    cradle_server_host_poll(host, test_now);
    expect_refusal(CRADLE_WIRE_REFUSE_GAME, 1);

    push_event(2, 1, CRADLE_SERVER_IN_CONNECT);
    push_hello(2, 1, false, CRADLE_WIRE_ANY_SLOT, NULL, "another-build");
    cradle_server_host_poll(host, test_now);
    expect_refusal(CRADLE_WIRE_REFUSE_BUILD, 2);

    /* Peer 4 takes slot 0. */
    connect_player(4, 1, CRADLE_WIRE_ANY_SLOT);
    expect_out(CRADLE_WIRE_WELCOME, 4);
    assert_int_equal(out_msg.as.welcome.slot, 0);

    /* Another protocol version in the header's version byte. */
    cradle_wire_message m = {.type = CRADLE_WIRE_HELLO};
    strcpy(m.as.hello.game, "counter");
    strcpy(m.as.hello.build_id, host->sim.contract->build_id);
    m.as.hello.requested_slot = CRADLE_WIRE_ANY_SLOT;
    push_event(5, 1, CRADLE_SERVER_IN_CONNECT);
    memset(&in_slot, 0, sizeof in_slot);
    in_slot.peer = 5;
    in_slot.generation = 1;
    in_slot.kind = CRADLE_SERVER_IN_MESSAGE;
    static uint8_t bytes[CRADLE_SERVER_IN_BYTES];
    size_t n = 0;
    assert_int_equal(cradle_wire_encode(bytes, sizeof bytes, &n, &m), 0);
    bytes[1] = CRADLE_WIRE_VERSION + 1;
    cradle_wire_message decoded;
    assert_int_equal(cradle_wire_decode(&decoded, bytes, n), CRADLE_ENET_VERSION);
    assert_true(cradle_server_in_take(&in_slot, &decoded, true));
    assert_true(cradle_ring_push(&net->in, &in_slot));
    cradle_server_host_poll(host, test_now);
    expect_refusal(CRADLE_WIRE_REFUSE_PROTOCOL, 5);

    /* Slot 0 is taken, slot 5 is beyond this session's 2, slot 1 is free, then all are full. */
    push_event(6, 1, CRADLE_SERVER_IN_CONNECT);
    push_hello(6, 1, false, 0, NULL, NULL);
    cradle_server_host_poll(host, test_now);
    expect_refusal(CRADLE_WIRE_REFUSE_FULL, 6);
    push_event(7, 1, CRADLE_SERVER_IN_CONNECT);
    push_hello(7, 1, false, 5, NULL, NULL); /* beyond the 2 slots of this session */
    cradle_server_host_poll(host, test_now);
    expect_refusal(CRADLE_WIRE_REFUSE_FULL, 7);
    connect_player(8, 1, CRADLE_WIRE_ANY_SLOT);
    expect_out(CRADLE_WIRE_WELCOME, 8);
    assert_int_equal(out_msg.as.welcome.slot, 1);
    connect_player(9, 1, CRADLE_WIRE_ANY_SLOT);
    expect_refusal(CRADLE_WIRE_REFUSE_FULL, 9);

    /* One spectator place. */
    push_event(10, 1, CRADLE_SERVER_IN_CONNECT);
    push_hello(10, 1, true, CRADLE_WIRE_ANY_SLOT, NULL, NULL);
    cradle_server_host_poll(host, test_now);
    expect_out(CRADLE_WIRE_WELCOME, 10);
    assert_int_equal(out_msg.as.welcome.slot, CRADLE_WIRE_SPECTATOR);
    push_event(11, 1, CRADLE_SERVER_IN_CONNECT);
    push_hello(11, 1, true, CRADLE_WIRE_ANY_SLOT, NULL, NULL);
    cradle_server_host_poll(host, test_now);
    expect_refusal(CRADLE_WIRE_REFUSE_FULL, 11);
    assert_int_equal(host->refusals, 7);
}

/* A secure server's peer whose verified token named client_id. */
static void connect_identified(uint16_t peer, uint32_t generation, uint64_t client_id, uint8_t slot) {
    identify_next = true;
    identify_id = client_id;
    connect_player(peer, generation, slot);
    identify_next = false;
}

/* A client whose old connection still holds its slot (the server has not
 * noticed it died) takes the slot back when its token names the same client;
 * nobody else does, and an unidentified (insecure) peer never does. */
static void test_same_client_takes_its_slot_back(void **state) {
    (void)state;
    connect_identified(1, 1, 7, 0);
    expect_out(CRADLE_WIRE_WELCOME, 1);
    drain_out();
    connect_player(2, 1, 0); /* no identity */
    expect_refusal(CRADLE_WIRE_REFUSE_FULL, 2);
    connect_identified(3, 1, 8, 0); /* another client */
    expect_refusal(CRADLE_WIRE_REFUSE_FULL, 3);
    assert_int_equal(host->takeovers, 0);
    connect_identified(4, 1, 7, 0);
    bool bye = false, welcome = false;
    while (pop_out()) {
        if (out_slot.peer == 1 && out_msg.type == CRADLE_WIRE_BYE) {
            assert_true(out_slot.flags & CRADLE_SERVER_OUT_DISCONNECT);
            assert_false(welcome); /* the old connection goes first */
            bye = true;
        }
        if (out_slot.peer == 4 && out_msg.type == CRADLE_WIRE_WELCOME) {
            assert_int_equal(out_msg.as.welcome.slot, 0);
            welcome = true;
        }
    }
    assert_true(bye && welcome);
    assert_int_equal(host->takeovers, 1);
    assert_true(host->slots[0].occupied && host->slots[0].peer == 4);
    /* The old connection's late disconnect does not free the new one's slot. */
    push_event(1, 1, CRADLE_SERVER_IN_DISCONNECT);
    cradle_server_host_poll(host, test_now);
    assert_true(host->slots[0].occupied && host->slots[0].peer == 4);
}

static void test_join_in_progress_and_rejoin(void **state) {
    (void)state;
    connect_player(0, 1, CRADLE_WIRE_ANY_SLOT);
    expect_out(CRADLE_WIRE_WELCOME, 0);
    cradle_server_host_advance(host, 25, test_now);
    expect_out(CRADLE_WIRE_STEPS, CRADLE_SERVER_BROADCAST);
    assert_false(pop_out());

    connect_player(1, 1, CRADLE_WIRE_ANY_SLOT);
    expect_out(CRADLE_WIRE_WELCOME, 1);
    assert_int_equal(out_msg.as.welcome.slot, 1);
    assert_int_equal(out_msg.as.welcome.start_step, 25);
    assert_true(out_msg.as.welcome.state_follows);
    expect_out(CRADLE_WIRE_STATE, 1);
    const cradle_wire_state *st = &out_msg.as.state;
    assert_int_equal(st->step, 25);
    assert_int_equal(st->offset, 0);
    assert_int_equal(st->length, st->total); /* the counter's state packs into one chunk */
    assert_true(st->hash == cradle_hash64(host->sim.state, host->sim.contract->state_size));
    /* the chunk is the state packed: it unpacks to the server's state */
    cradle_state_pack unpack;
    assert_int_equal(cradle_state_pack_init(&unpack, 0, CRADLE_STATE_PACK_DECODE), 0);
    uint8_t unpacked[64];
    assert_true(host->sim.contract->state_size <= sizeof unpacked);
    assert_null(cradle_state_pack_decode(&unpack, st->bytes, st->total, unpacked, host->sim.contract->state_size,
                                         st->hash));
    assert_memory_equal(unpacked, host->sim.state, host->sim.contract->state_size);
    cradle_state_pack_free(&unpack);

    cradle_server_host_advance(host, 1, test_now);
    expect_out(CRADLE_WIRE_STEPS, CRADLE_SERVER_BROADCAST);
    assert_int_equal(out_msg.as.steps.first_step, 25);
    assert_int_equal(out_msg.as.steps.snapshots[0], 0x03); /* both present */

    /* Player 0 drops: its slot is empty from the next step and can be rejoined. */
    push_event(0, 1, CRADLE_SERVER_IN_DISCONNECT);
    cradle_server_host_advance(host, 1, test_now);
    expect_out(CRADLE_WIRE_STEPS, CRADLE_SERVER_BROADCAST);
    assert_int_equal(out_msg.as.steps.snapshots[0], 0x02);
    connect_player(0, 2, 0);
    expect_out(CRADLE_WIRE_WELCOME, 0);
    assert_int_equal(out_msg.as.welcome.slot, 0);
    assert_int_equal(out_msg.as.welcome.start_step, 27);
    expect_out(CRADLE_WIRE_STATE, 0);
    cradle_server_host_advance(host, 1, test_now);
    expect_out(CRADLE_WIRE_STEPS, CRADLE_SERVER_BROADCAST);
    assert_int_equal(out_msg.as.steps.snapshots[0], 0x03);
}

static void test_bye_and_desync(void **state) {
    (void)state;
    connect_player(0, 1, CRADLE_WIRE_ANY_SLOT);
    expect_out(CRADLE_WIRE_WELCOME, 0);
    cradle_wire_message d = {.type = CRADLE_WIRE_DESYNC, .as.desync = {.step = 9, .hash = 1, .expected = 2}};
    push_message(0, 1, &d);
    cradle_wire_message b = {.type = CRADLE_WIRE_BYE, .as.bye = {.reason = CRADLE_WIRE_BYE_LEAVING}};
    push_message(0, 1, &b);
    cradle_server_host_poll(host, test_now);
    assert_int_equal(host->desyncs, 1);
    assert_false(host->slots[0].occupied);
    assert_true(pop_out());
    assert_true(out_slot.flags & CRADLE_SERVER_OUT_DISCONNECT);
    assert_int_equal(out_slot.peer, 0);
}

/* A player's REPORT is kept for players and status, and becomes a
 * "prediction" event line at most once a second however often it comes; a
 * spectator's is ignored, and a report of lockstep (window 0) is no line. */
static void test_prediction_reports(void **state) {
    (void)state;
    connect_player(0, 1, CRADLE_WIRE_ANY_SLOT);
    expect_out(CRADLE_WIRE_WELCOME, 0);
    cradle_server_peer *peer = &host->peers[0];
    cradle_wire_message r = {.type = CRADLE_WIRE_REPORT,
                             .as.report = {.window = 16, .ahead = 6, .steps = 600, .rollbacks = 40,
                                           .rollback_steps = 240, .rollback_max = 12, .corrections = 30}};
    for (int i = 0; i < 5; i++) push_message(0, 1, &r);
    cradle_server_host_poll(host, test_now);
    assert_true(peer->reported);
    assert_memory_equal(&peer->report, &r.as.report, sizeof r.as.report);
    assert_int_equal(peer->prediction_lines, 1); /* five in one second: one line */
    r.as.report.rollbacks = 41;
    push_message(0, 1, &r);
    cradle_server_host_poll(host, test_now + 1000000000ull);
    assert_int_equal(peer->report.rollbacks, 41);
    assert_int_equal(peer->prediction_lines, 2);
    push_message(0, 1, &(cradle_wire_message){.type = CRADLE_WIRE_REPORT}); /* lockstep from now on */
    cradle_server_host_poll(host, test_now + 3000000000ull);
    assert_int_equal(peer->report.window, 0);
    assert_int_equal(peer->prediction_lines, 2);
    /* a spectator's report is not a player's */
    push_event(1, 1, CRADLE_SERVER_IN_CONNECT);
    push_hello(1, 1, true, CRADLE_WIRE_ANY_SLOT, NULL, NULL);
    cradle_server_host_poll(host, test_now + 3000000000ull);
    drain_out();
    push_message(1, 1, &r);
    cradle_server_host_poll(host, test_now + 3000000000ull);
    assert_false(host->peers[1].reported);
}

static void test_step_path_allocates_nothing(void **state) {
    (void)state;
    connect_player(0, 1, CRADLE_WIRE_ANY_SLOT);
    push_event(1, 1, CRADLE_SERVER_IN_CONNECT);
    push_hello(1, 1, true, CRADLE_WIRE_ANY_SLOT, NULL, NULL);
    cradle_server_host_poll(host, test_now);
    drain_out();
    allocations = 0;
    counting = true;
    for (uint64_t step = 0; step < 1000; step++) {
        uint8_t in[4] = {(uint8_t)step, 1, 2, 3};
        push_input(0, 1, step + 2, 4, in);
        cradle_server_host_advance(host, 1, test_now);
        cradle_server_host_poll(host, test_now);
        drain_out();
    }
    counting = false;
    assert_int_equal(host->sim.next_step, 1000);
    assert_int_equal(allocations, 0);
    /* The counter works: an allocation from this code would be seen. */
    counting = true;
    void *volatile block = malloc(16); /* volatile: -O2 would drop an unused allocation */
    free(block);
    counting = false;
    assert_int_equal(allocations, 1);
}

/* The step path never sleeps on the ring to the network thread: with it
 * nearly full, a paced turn runs no step and owes the time; once the
 * network thread took the messages, the next turn runs the steps owed, none
 * dropped. The turns get their time passed in: no clock is read. */
static void test_paced_steps_wait_for_room(void **state) {
    (void)state;
    assert_int_equal(host->options->mode, CRADLE_SERVER_PACED);
    uint64_t t0 = 1000000000000ull, step_ns = cradle_clock_step_ns(&host->clock);
    cradle_server_host_start(host, t0);
    connect_player(3, 1, CRADLE_WIRE_ANY_SLOT);
    drain_out();
    (void)cradle_server_host_turn(host, t0 + 3 * step_ns + step_ns / 2);
    uint64_t ran = host->sim.next_step;
    assert_true(ran >= 3);
    drain_out();
    memset(&out_slot, 0, sizeof out_slot);
    out_slot.flags = CRADLE_SERVER_OUT_CONTROL;
    uint32_t capacity = cradle_ring_capacity(&net->out);
    while (cradle_ring_count(&net->out) + 32u <= capacity) assert_true(cradle_ring_push(&net->out, &out_slot));
    (void)cradle_server_host_turn(host, t0 + 6 * step_ns + step_ns / 2);
    assert_int_equal(host->sim.next_step, ran); /* no room: the steps wait */
    drain_out();
    (void)cradle_server_host_turn(host, t0 + 6 * step_ns + step_ns / 2);
    assert_int_equal(host->sim.next_step, ran + 3); /* the time owed, run now */
    assert_int_equal(host->dropped_steps, 0);
    assert_int_equal(host->dropped_out, 0);
}

static int setup_paced(void **state) {
    setup_mode = CRADLE_SERVER_PACED;
    int rc = setup(state);
    setup_mode = CRADLE_SERVER_COMMANDED;
    return rc;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_welcome_inputs_and_hashes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_same_client_takes_its_slot_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_join_in_progress_and_rejoin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bye_and_desync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prediction_reports, setup, teardown),
        cmocka_unit_test_setup_teardown(test_step_path_allocates_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paced_steps_wait_for_room, setup_paced, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
