#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "cradle/cradle.h"

static uint8_t input_bytes[CRADLE_WIRE_INPUT_STEPS_MAX * CRADLE_GAME_MAX_INPUT_BYTES];
static uint8_t snapshot_bytes[CRADLE_WIRE_STEPS_BYTES_MAX];
static uint8_t state_bytes[CRADLE_WIRE_STATE_CHUNK_MAX];
static uint8_t buffer[CRADLE_WIRE_MESSAGE_MAX + 16];
static uint8_t buffer2[CRADLE_WIRE_MESSAGE_MAX + 16];

static void fill(uint8_t *p, size_t n, uint8_t seed) {
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(seed + i * 7u);
}

/* A valid message of each type, with non-trivial values in every field. */
static cradle_wire_message sample(int type) {
    cradle_wire_message m;
    memset(&m, 0, sizeof m);
    m.type = (uint8_t)type;
    fill(input_bytes, sizeof input_bytes, 3);
    fill(snapshot_bytes, sizeof snapshot_bytes, 5);
    fill(state_bytes, sizeof state_bytes, 9);
    switch (type) {
    case CRADLE_WIRE_HELLO:
        m.as.hello.requested_slot = 3;
        strcpy(m.as.hello.game, "counter");
        strcpy(m.as.hello.build_id, "0123456789abcdef");
        m.as.hello.credential_size = 5;
        memcpy(m.as.hello.credential, "\x01\x02\x00\xff\x7f", 5);
        break;
    case CRADLE_WIRE_WELCOME:
        m.as.welcome = (cradle_wire_welcome){.slot = 2,
                                             .players = 4,
                                             .max_players = 8,
                                             .input_bytes = 1,
                                             .state_size = 48,
                                             .steps_per_second = 60,
                                             .source_frames_per_second = 20,
                                             .seed = 0x1122334455667788ull,
                                             .input_delay = 3,
                                             .hash_interval = 30,
                                             .start_step = 1234,
                                             .epoch = 7,
                                             .state_follows = true};
        strcpy(m.as.welcome.game, "counter");
        strcpy(m.as.welcome.build_id, "b1");
        break;
    case CRADLE_WIRE_REFUSE:
        m.as.refuse.reason = CRADLE_WIRE_REFUSE_BUILD;
        strcpy(m.as.refuse.text, "build id differs: server b1, client b2");
        break;
    case CRADLE_WIRE_INPUT:
        m.as.input =
            (cradle_wire_input){.ack = 98, .first_step = 99, .count = 3, .input_bytes = 4, .inputs = input_bytes};
        break;
    case CRADLE_WIRE_STEPS:
        m.as.steps.first_step = 100;
        m.as.steps.epoch = 2;
        m.as.steps.count = 4;
        m.as.steps.snapshot_size = 9;
        m.as.steps.snapshots = snapshot_bytes;
        m.as.steps.hash_count = 2;
        m.as.steps.hashes[0] = (cradle_wire_hash){0, 0xdeadbeefull};
        m.as.steps.hashes[1] = (cradle_wire_hash){3, 0xfeedfaceull};
        break;
    case CRADLE_WIRE_STATE:
        m.as.state = (cradle_wire_state){
            .step = 600, .hash = 77, .total = 5000, .offset = 4096, .length = 904, .bytes = state_bytes};
        break;
    case CRADLE_WIRE_RELOAD:
        m.as.reload.at_step = 321;
        m.as.reload.epoch = 9;
        strcpy(m.as.reload.build_id, "new-build");
        break;
    case CRADLE_WIRE_DATA:
        m.as.data = (cradle_wire_data){
            .at_step = 4321, .epoch = 10, .file = 1, .total = 3000, .offset = 2048, .length = 952, .bytes = state_bytes};
        fill(m.as.data.hash, sizeof m.as.data.hash, 11);
        break;
    case CRADLE_WIRE_PING: m.as.ping = (cradle_wire_ping){.echo = 0x0102030405060708ull, .rtt_us = 1234}; break;
    case CRADLE_WIRE_PONG: m.as.ping = (cradle_wire_ping){.echo = 0x0102030405060708ull, .hold_us = 16000}; break;
    case CRADLE_WIRE_BYE:
        m.as.bye.reason = CRADLE_WIRE_BYE_KICKED;
        strcpy(m.as.bye.text, "kicked by operator");
        break;
    case CRADLE_WIRE_DESYNC: m.as.desync = (cradle_wire_desync){.step = 90, .hash = 1, .expected = 2}; break;
    case CRADLE_WIRE_DELAY: m.as.delay.input_delay = 7; break;
    case CRADLE_WIRE_REPORT:
        m.as.report = (cradle_wire_report){.window = 16, .ahead = 6, .steps = 3600, .rollbacks = 120,
                                           .rollback_steps = 900, .rollback_max = 16, .corrections = 100,
                                           .own_overridden = 2};
        break;
    default: fail();
    }
    return m;
}

static size_t encode_ok(const cradle_wire_message *m, uint8_t *out) {
    size_t n = 0;
    assert_int_equal(cradle_wire_encode(out, CRADLE_WIRE_MESSAGE_MAX, &n, m), 0);
    assert_true(n >= CRADLE_WIRE_HEADER_BYTES);
    assert_int_equal(out[0], m->type);
    assert_int_equal(out[1], CRADLE_WIRE_VERSION);
    return n;
}

static void test_round_trip_every_type(void **state) {
    (void)state;
    for (int type = CRADLE_WIRE_TYPE_FIRST; type <= CRADLE_WIRE_TYPE_LAST; type++) {
        cradle_wire_message m = sample(type);
        size_t n = encode_ok(&m, buffer);
        cradle_wire_message d;
        assert_int_equal(cradle_wire_decode(&d, buffer, n), 0);
        assert_null(d.problem);
        assert_int_equal(d.type, type);
        assert_int_equal(d.version, CRADLE_WIRE_VERSION);
        /* Re-encoding the decoded message gives the same bytes. */
        size_t n2 = encode_ok(&d, buffer2);
        assert_int_equal(n, n2);
        assert_memory_equal(buffer, buffer2, n);
    }
}

static void test_fields_survive(void **state) {
    (void)state;
    cradle_wire_message m = sample(CRADLE_WIRE_HELLO), d;
    size_t n = encode_ok(&m, buffer);
    assert_int_equal(cradle_wire_decode(&d, buffer, n), 0);
    assert_false(d.as.hello.spectator);
    assert_int_equal(d.as.hello.requested_slot, 3);
    assert_string_equal(d.as.hello.game, "counter");
    assert_string_equal(d.as.hello.build_id, "0123456789abcdef");
    assert_int_equal(d.as.hello.credential_size, 5);
    assert_memory_equal(d.as.hello.credential, "\x01\x02\x00\xff\x7f", 5);

    m = sample(CRADLE_WIRE_WELCOME);
    n = encode_ok(&m, buffer);
    assert_int_equal(cradle_wire_decode(&d, buffer, n), 0);
    assert_int_equal(d.as.welcome.slot, 2);
    assert_int_equal(d.as.welcome.players, 4);
    assert_int_equal(d.as.welcome.max_players, 8);
    assert_int_equal(d.as.welcome.state_size, 48);
    assert_int_equal(d.as.welcome.source_frames_per_second, 20);
    assert_true(d.as.welcome.seed == 0x1122334455667788ull);
    assert_int_equal(d.as.welcome.input_delay, 3);
    assert_int_equal(d.as.welcome.hash_interval, 30);
    assert_int_equal(d.as.welcome.start_step, 1234);
    assert_int_equal(d.as.welcome.epoch, 7);
    assert_true(d.as.welcome.state_follows);
    assert_string_equal(d.as.welcome.build_id, "b1");

    m = sample(CRADLE_WIRE_INPUT);
    n = encode_ok(&m, buffer);
    assert_int_equal(n, 2 + 8 + 8 + 1 + 1 + 12);
    assert_int_equal(cradle_wire_decode(&d, buffer, n), 0);
    assert_int_equal(d.as.input.ack, 98);
    assert_int_equal(d.as.input.first_step, 99);
    assert_int_equal(d.as.input.count, 3);
    assert_memory_equal(d.as.input.inputs, input_bytes, 12);
    assert_ptr_equal(d.as.input.inputs, buffer + 20); /* in place, no copy */
    /* A spectator's INPUT: only the ack. */
    m.as.input.count = 0;
    m.as.input.inputs = NULL;
    n = encode_ok(&m, buffer);
    assert_int_equal(n, 2 + 8 + 8 + 1 + 1);
    assert_int_equal(cradle_wire_decode(&d, buffer, n), 0);
    assert_int_equal(d.as.input.count, 0);
    assert_null(d.as.input.inputs);

    m = sample(CRADLE_WIRE_STEPS);
    n = encode_ok(&m, buffer);
    assert_int_equal(cradle_wire_decode(&d, buffer, n), 0);
    assert_int_equal(n, 2 + 4 + 1 + 1 + 1 + 2 * 9 + 36);
    assert_int_equal(d.as.steps.first_step, 100);
    assert_int_equal(d.as.steps.epoch, 2);
    assert_int_equal(d.as.steps.snapshot_size, 9); /* from the length */
    assert_memory_equal(d.as.steps.snapshots, snapshot_bytes, 36);
    assert_int_equal(d.as.steps.hash_count, 2);
    assert_int_equal(d.as.steps.hashes[1].offset, 3);
    assert_true(d.as.steps.hashes[1].hash == 0xfeedfaceull);

    m = sample(CRADLE_WIRE_STATE);
    n = encode_ok(&m, buffer);
    assert_int_equal(cradle_wire_decode(&d, buffer, n), 0);
    assert_int_equal(d.as.state.offset, 4096);
    assert_int_equal(d.as.state.length, 904);
    assert_memory_equal(d.as.state.bytes, state_bytes, 904);

    m = sample(CRADLE_WIRE_REFUSE);
    n = encode_ok(&m, buffer);
    assert_int_equal(cradle_wire_decode(&d, buffer, n), 0);
    assert_int_equal(d.as.refuse.reason, CRADLE_WIRE_REFUSE_BUILD);
    assert_string_equal(d.as.refuse.text, m.as.refuse.text);
}

/* The header and the explicit little-endian layout are fixed: byte for byte. */
static void test_layout_is_little_endian(void **state) {
    (void)state;
    cradle_wire_message m = sample(CRADLE_WIRE_PING);
    size_t n = encode_ok(&m, buffer);
    const uint8_t expect[] = {CRADLE_WIRE_PING, CRADLE_WIRE_VERSION, 8, 7, 6, 5, 4, 3, 2, 1, 0xd2, 0x04, 0, 0};
    assert_int_equal(n, sizeof expect);
    assert_memory_equal(buffer, expect, sizeof expect);
}

static void test_every_truncation_is_refused(void **state) {
    (void)state;
    for (int type = CRADLE_WIRE_TYPE_FIRST; type <= CRADLE_WIRE_TYPE_LAST; type++) {
        cradle_wire_message m = sample(type), d;
        size_t n = encode_ok(&m, buffer);
        for (size_t cut = 0; cut < n; cut++) {
            int rc = cradle_wire_decode(&d, buffer, cut);
            /* STEPS' snapshot size comes from the length: a cut by a multiple
             * of count reads as smaller snapshots, which a receiver refuses
             * by comparing with its game's size. */
            if (type == CRADLE_WIRE_STEPS && rc == 0) {
                assert_int_not_equal(d.as.steps.snapshot_size, m.as.steps.snapshot_size);
                continue;
            }
            assert_int_equal(rc, CRADLE_ENET_MESSAGE);
            assert_non_null(d.problem);
        }
        /* One byte too many is refused too. */
        buffer[n] = 0;
        assert_int_equal(cradle_wire_decode(&d, buffer, n + 1), CRADLE_ENET_MESSAGE);
        if (type != CRADLE_WIRE_STEPS) assert_string_equal(d.problem, "message has trailing bytes");
    }
}

static void test_header_checks(void **state) {
    (void)state;
    cradle_wire_message m = sample(CRADLE_WIRE_HELLO), d;
    size_t n = encode_ok(&m, buffer);
    buffer[1] = CRADLE_WIRE_VERSION + 1;
    assert_int_equal(cradle_wire_decode(&d, buffer, n), CRADLE_ENET_VERSION);
    assert_int_equal(d.type, CRADLE_WIRE_HELLO);
    assert_int_equal(d.version, CRADLE_WIRE_VERSION + 1);
    buffer[1] = CRADLE_WIRE_VERSION;
    buffer[0] = 0;
    assert_int_equal(cradle_wire_decode(&d, buffer, n), CRADLE_ENET_MESSAGE);
    assert_string_equal(d.problem, "unknown message type");
    buffer[0] = CRADLE_WIRE_TYPE_LAST + 1;
    assert_int_equal(cradle_wire_decode(&d, buffer, n), CRADLE_ENET_MESSAGE);
    /* Oversize input is refused before any parsing. */
    memset(buffer, 0, sizeof buffer);
    buffer[0] = CRADLE_WIRE_PING;
    buffer[1] = CRADLE_WIRE_VERSION;
    assert_int_equal(cradle_wire_decode(&d, buffer, CRADLE_WIRE_MESSAGE_MAX + 1), CRADLE_ENET_MESSAGE);
    assert_string_equal(d.problem, "message is longer than the maximum");
    assert_int_equal(cradle_wire_decode(&d, NULL, 0), CRADLE_ENET_MESSAGE);
}

/* Encodes m, applies a byte patch, and expects the decoder to refuse it. */
static void expect_refused_after(cradle_wire_message m, size_t at, uint8_t value) {
    size_t n = encode_ok(&m, buffer);
    assert_true(at < n);
    buffer[at] = value;
    cradle_wire_message d;
    assert_int_equal(cradle_wire_decode(&d, buffer, n), CRADLE_ENET_MESSAGE);
    assert_non_null(d.problem);
}

static void test_bad_fields_are_refused(void **state) {
    (void)state;
    /* hello: unknown flag, slot 64, spectator with a slot, non-printable name,
     * name length beyond the maximum. */
    expect_refused_after(sample(CRADLE_WIRE_HELLO), 2, 0x02);
    expect_refused_after(sample(CRADLE_WIRE_HELLO), 3, 64);
    expect_refused_after(sample(CRADLE_WIRE_HELLO), 2, CRADLE_WIRE_HELLO_SPECTATOR);
    expect_refused_after(sample(CRADLE_WIRE_HELLO), 5, 0x07);
    expect_refused_after(sample(CRADLE_WIRE_HELLO), 4, CRADLE_GAME_NAME_MAX + 1);
    /* welcome: slot 8 of 8, players 0, players 9 > max 8, input_bytes 33,
     * source rate 7 not dividing 60, hash interval 0. */
    expect_refused_after(sample(CRADLE_WIRE_WELCOME), 2, 8);
    expect_refused_after(sample(CRADLE_WIRE_WELCOME), 3, 0);
    expect_refused_after(sample(CRADLE_WIRE_WELCOME), 3, 9);
    expect_refused_after(sample(CRADLE_WIRE_WELCOME), 5, 33);
    expect_refused_after(sample(CRADLE_WIRE_WELCOME), 14, 7);
    {
        cradle_wire_message m = sample(CRADLE_WIRE_WELCOME);
        m.as.welcome.hash_interval = 0;
        size_t n = 0;
        assert_int_equal(cradle_wire_encode(buffer, sizeof buffer, &n, &m), CRADLE_EINVAL);
        assert_int_equal(n, 0);
    }
    /* refuse and bye: unknown reason. */
    expect_refused_after(sample(CRADLE_WIRE_REFUSE), 2, 0);
    expect_refused_after(sample(CRADLE_WIRE_REFUSE), 2, CRADLE_WIRE_REFUSE_LAST + 1);
    expect_refused_after(sample(CRADLE_WIRE_BYE), 2, 0);
    /* input: count 17 (0 is an ack alone, and its bytes then trail),
     * input_bytes 0 and 33. */
    expect_refused_after(sample(CRADLE_WIRE_INPUT), 18, 17);
    expect_refused_after(sample(CRADLE_WIRE_INPUT), 18, 0);
    expect_refused_after(sample(CRADLE_WIRE_INPUT), 19, 0);
    expect_refused_after(sample(CRADLE_WIRE_INPUT), 19, 33);
    /* steps: count 0, 65, or not dividing the snapshot bytes (5: 36 % 5);
     * more hashes than steps; a hash past the steps; offsets not increasing. */
    expect_refused_after(sample(CRADLE_WIRE_STEPS), 7, 0);
    expect_refused_after(sample(CRADLE_WIRE_STEPS), 7, 65);
    expect_refused_after(sample(CRADLE_WIRE_STEPS), 7, 5);
    expect_refused_after(sample(CRADLE_WIRE_STEPS), 8, 5);
    expect_refused_after(sample(CRADLE_WIRE_STEPS), 18, 4);
    expect_refused_after(sample(CRADLE_WIRE_STEPS), 18, 0);
    {
        /* Cut after the hashes: no snapshot bytes at all. */
        cradle_wire_message m = sample(CRADLE_WIRE_STEPS);
        encode_ok(&m, buffer);
        cradle_wire_message d;
        assert_int_equal(cradle_wire_decode(&d, buffer, 2 + 4 + 1 + 1 + 1 + 2 * 9), CRADLE_ENET_MESSAGE);
        assert_string_equal(d.problem, "steps: snapshot bytes are not count equal parts");
    }
    {
        cradle_wire_message m = sample(CRADLE_WIRE_STEPS);
        m.as.steps.count = 64;
        m.as.steps.snapshot_size = 257; /* 16448 bytes > 16384 */
        m.as.steps.hash_count = 0;
        size_t n = 0;
        assert_int_equal(cradle_wire_encode(buffer, sizeof buffer, &n, &m), CRADLE_EINVAL);
    }
    /* state: chunk past the total, length 0, total 0. */
    {
        cradle_wire_message m = sample(CRADLE_WIRE_STATE);
        m.as.state.offset = 4097;
        size_t n = 0;
        assert_int_equal(cradle_wire_encode(buffer, sizeof buffer, &n, &m), CRADLE_EINVAL);
        m = sample(CRADLE_WIRE_STATE);
        n = encode_ok(&m, buffer);
        cradle_cursor_store_u32(buffer + 2 + 16 + 4, 4097); /* offset */
        cradle_wire_message d;
        assert_int_equal(cradle_wire_decode(&d, buffer, n), CRADLE_ENET_MESSAGE);
        assert_string_equal(d.problem, "state: chunk lies outside the block");
        n = encode_ok(&m, buffer);
        cradle_cursor_store_u32(buffer + 2 + 16, 0); /* total */
        assert_int_equal(cradle_wire_decode(&d, buffer, n), CRADLE_ENET_MESSAGE);
    }
    /* reload: empty build id. */
    {
        cradle_wire_message m = sample(CRADLE_WIRE_RELOAD);
        m.as.reload.build_id[0] = '\0';
        size_t n = 0;
        assert_int_equal(cradle_wire_encode(buffer, sizeof buffer, &n, &m), CRADLE_EINVAL);
    }
    /* data: file 16, a total over 1 MiB, a chunk past the total, an empty
     * chunk of a non-empty file, a chunk over 1024 bytes. Offsets: at_step 2,
     * epoch 10, file 11, total 12, hash 16, offset 48, length 52. */
    {
        cradle_wire_message m = sample(CRADLE_WIRE_DATA), d;
        size_t n = encode_ok(&m, buffer);
        assert_int_equal(cradle_wire_decode(&d, buffer, n), 0);
        assert_int_equal(d.as.data.at_step, 4321);
        assert_int_equal(d.as.data.epoch, 10);
        assert_int_equal(d.as.data.file, 1);
        assert_int_equal(d.as.data.total, 3000);
        assert_memory_equal(d.as.data.hash, m.as.data.hash, sizeof m.as.data.hash);
        assert_int_equal(d.as.data.offset, 2048);
        assert_memory_equal(d.as.data.bytes, state_bytes, 952);
        expect_refused_after(sample(CRADLE_WIRE_DATA), 11, 16);
        static const struct {
            size_t at;
            uint32_t value;
            bool u16;
            const char *problem;
        } bad[] = {
            {12, CRADLE_GAME_DATA_MAX_BYTES + 1u, false, "data: total is over 1 MiB"},
            {48, 2049, false, "data: chunk lies outside the file"},
            {52, 0, true, "data: empty chunk of a non-empty file"},
            {52, 1025, true, "data: length is over 1024"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            n = encode_ok(&m, buffer);
            if (bad[i].u16)
                cradle_cursor_store_u16(buffer + bad[i].at, (uint16_t)bad[i].value);
            else
                cradle_cursor_store_u32(buffer + bad[i].at, bad[i].value);
            assert_int_equal(cradle_wire_decode(&d, buffer, n), CRADLE_ENET_MESSAGE);
            assert_string_equal(d.problem, bad[i].problem);
        }
        /* An empty file is one chunk of length 0. */
        m.as.data = (cradle_wire_data){.at_step = 5, .epoch = 1, .file = 0, .total = 0, .offset = 0, .length = 0};
        n = encode_ok(&m, buffer);
        assert_int_equal(n, 2 + 8 + 1 + 1 + 4 + 32 + 4 + 2);
        assert_int_equal(cradle_wire_decode(&d, buffer, n), 0);
        assert_int_equal(d.as.data.total, 0);
        assert_null(d.as.data.bytes);
    }
    {
        /* DELAY: 1..1000 steps, exactly two bytes after the header */
        cradle_wire_message m = sample(CRADLE_WIRE_DELAY), d;
        size_t n = encode_ok(&m, buffer);
        assert_int_equal(n, 2 + 2);
        assert_int_equal(cradle_wire_decode(&d, buffer, n), 0);
        assert_int_equal(d.as.delay.input_delay, 7);
        static const uint16_t bad[] = {0, CRADLE_WIRE_INPUT_DELAY_MAX + 1u, 0xffff};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            cradle_cursor_store_u16(buffer + 2, bad[i]);
            assert_int_equal(cradle_wire_decode(&d, buffer, n), CRADLE_ENET_MESSAGE);
            assert_string_equal(d.problem, "delay: input delay is outside 1..1000");
            m.as.delay.input_delay = bad[i];
            assert_int_equal(cradle_wire_encode(buffer, sizeof buffer, &n, &m), CRADLE_EINVAL);
            n = 4;
        }
        cradle_cursor_store_u16(buffer + 2, CRADLE_WIRE_INPUT_DELAY_MAX);
        assert_int_equal(cradle_wire_decode(&d, buffer, 4), 0);
    }
    {
        /* REPORT: 26 bytes of figures, each within what one client's prediction can count */
        cradle_wire_message m = sample(CRADLE_WIRE_REPORT), d;
        size_t n = encode_ok(&m, buffer);
        assert_int_equal(n, 2 + 2 + 2 + 4 + 4 + 4 + 2 + 4 + 4);
        assert_int_equal(cradle_wire_decode(&d, buffer, n), 0);
        assert_memory_equal(&d.as.report, &m.as.report, sizeof m.as.report);
        static const struct {
            size_t at; /* the field's offset */
            uint32_t value;
            bool wide;
            const char *problem;
        } bad[] = {{2, 0, false, "report: figures from a player in lockstep"},
                   {2, 65, false, "report: window is past 64"},
                   {4, 17, false, "report: ahead is past the window"},
                   {18, 17, false, "report: a rollback deeper than the window"},
                   {20, 121, true, "report: more corrections than rollbacks"},
                   {24, 3601, true, "report: more inputs overridden than steps"}};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            n = encode_ok(&m, buffer);
            if (bad[i].wide) cradle_cursor_store_u32(buffer + bad[i].at, bad[i].value);
            else cradle_cursor_store_u16(buffer + bad[i].at, (uint16_t)bad[i].value);
            assert_int_equal(cradle_wire_decode(&d, buffer, n), CRADLE_ENET_MESSAGE);
            assert_string_equal(d.problem, bad[i].problem);
        }
        /* a player in lockstep reports a window of 0 and nothing else */
        cradle_wire_message lockstep = {.type = CRADLE_WIRE_REPORT};
        n = encode_ok(&lockstep, buffer);
        assert_int_equal(cradle_wire_decode(&d, buffer, n), 0);
        assert_int_equal(d.as.report.window, 0);
        /* what does not decode does not encode either */
        cradle_wire_message e = m;
        e.as.report.ahead = 17;
        assert_int_equal(cradle_wire_encode(buffer, sizeof buffer, &n, &e), CRADLE_EINVAL);
    }
}

static void test_encode_limits(void **state) {
    (void)state;
    cradle_wire_message m = sample(CRADLE_WIRE_STEPS);
    size_t need = encode_ok(&m, buffer), n = 1;
    assert_int_equal(cradle_wire_encode(buffer, need - 1, &n, &m), CRADLE_EFULL);
    assert_int_equal(n, 0);
    assert_int_equal(cradle_wire_encode(buffer, need, &n, &m), 0);
    assert_int_equal(n, need);
    /* The largest STEPS fits CRADLE_WIRE_MESSAGE_MAX exactly. */
    m.as.steps.count = CRADLE_WIRE_STEPS_MAX;
    m.as.steps.snapshot_size = CRADLE_WIRE_STEPS_BYTES_MAX / CRADLE_WIRE_STEPS_MAX;
    m.as.steps.hash_count = CRADLE_WIRE_STEPS_MAX;
    for (uint32_t i = 0; i < CRADLE_WIRE_STEPS_MAX; i++)
        m.as.steps.hashes[i] = (cradle_wire_hash){(uint8_t)i, i * 31u};
    assert_int_equal(cradle_wire_encode(buffer, sizeof buffer, &n, &m), 0);
    assert_int_equal(n, CRADLE_WIRE_MESSAGE_MAX);
    cradle_wire_message d;
    assert_int_equal(cradle_wire_decode(&d, buffer, n), 0);
    assert_int_equal(d.as.steps.hashes[63].hash, 63u * 31u);
    /* A full-size credential. */
    m = sample(CRADLE_WIRE_HELLO);
    m.as.hello.credential_size = CRADLE_WIRE_CREDENTIAL_MAX;
    n = encode_ok(&m, buffer);
    assert_int_equal(cradle_wire_decode(&d, buffer, n), 0);
    m.as.hello.credential_size = CRADLE_WIRE_CREDENTIAL_MAX + 1;
    assert_int_equal(cradle_wire_encode(buffer, sizeof buffer, &n, &m), CRADLE_EINVAL);
    cradle_cursor_store_u16(buffer + 2 + 2 + 1 + 7 + 1 + 16, CRADLE_WIRE_CREDENTIAL_MAX + 1);
    assert_int_equal(cradle_wire_decode(&d, buffer, 2 + 2 + 1 + 7 + 1 + 16 + 2 + 257), CRADLE_ENET_MESSAGE);
}

static void test_names_and_text(void **state) {
    (void)state;
    assert_string_equal(cradle_wire_type_name(CRADLE_WIRE_STEPS), "steps");
    assert_string_equal(cradle_wire_type_name(0), "unknown");
    assert_string_equal(cradle_wire_refusal_name(CRADLE_WIRE_REFUSE_FULL), "full");
    assert_string_equal(cradle_wire_refusal_name(CRADLE_WIRE_REFUSE_GAME), "game");
    assert_string_equal(cradle_wire_refusal_name(99), "unknown");
    assert_string_equal(cradle_wire_bye_name(CRADLE_WIRE_BYE_SHUTDOWN), "shutdown");
    char field[8];
    cradle_wire_set_text(field, sizeof field, "a\tbcdefghij");
    assert_string_equal(field, "a?bcdef");
    cradle_wire_set_text(field, sizeof field, NULL);
    assert_string_equal(field, "");
}

/* A message detached into a record's payload encodes, once attached again,
 * to the same bytes: the typed records of the server's rings. */
static void test_detach_and_attach(void **state) {
    (void)state;
    static const uint8_t snapshots[3 * 5] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    cradle_wire_message m = {.type = CRADLE_WIRE_STEPS};
    m.as.steps = (cradle_wire_steps){.first_step = 40, .epoch = 2, .count = 3, .snapshot_size = 5, .snapshots = snapshots,
                                     .hash_count = 1, .hashes = {{.offset = 2, .hash = 0xfeed}}};
    uint8_t before[256], after[256], payload[32];
    size_t n = 0, k = 0;
    assert_int_equal(cradle_wire_encode(before, sizeof before, &n, &m), 0);

    cradle_wire_message record = m;
    assert_int_equal(cradle_wire_detach(&record, payload, 14), SIZE_MAX); /* too small: unchanged */
    assert_ptr_equal(record.as.steps.snapshots, snapshots);
    assert_int_equal(cradle_wire_detach(&record, payload, sizeof payload), sizeof snapshots);
    assert_null(record.as.steps.snapshots); /* no address crosses the ring */
    assert_memory_equal(payload, snapshots, sizeof snapshots);
    cradle_wire_attach(&record, payload);
    assert_ptr_equal(record.as.steps.snapshots, payload);
    assert_int_equal(cradle_wire_encode(after, sizeof after, &k, &record), 0);
    assert_int_equal(k, n);
    assert_memory_equal(after, before, n);

    /* An INPUT with no inputs (an ack) holds nothing; a HELLO has no pointer. */
    cradle_wire_message ack = {.type = CRADLE_WIRE_INPUT, .as.input = {.ack = 7, .input_bytes = 1}};
    assert_int_equal(cradle_wire_detach(&ack, payload, sizeof payload), 0);
    cradle_wire_attach(&ack, payload);
    assert_null(ack.as.input.inputs);
    cradle_wire_message hello = {.type = CRADLE_WIRE_HELLO};
    assert_int_equal(cradle_wire_detach(&hello, NULL, 0), 0);

    /* STATE's bytes travel too. */
    cradle_wire_message st = {.type = CRADLE_WIRE_STATE};
    st.as.state = (cradle_wire_state){.step = 9, .hash = 1, .total = 4, .offset = 0, .length = 4, .bytes = snapshots};
    assert_int_equal(cradle_wire_detach(&st, payload, sizeof payload), 4);
    assert_null(st.as.state.bytes);
    cradle_wire_attach(&st, payload);
    assert_memory_equal(st.as.state.bytes, snapshots, 4);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_every_type),   cmocka_unit_test(test_fields_survive),
        cmocka_unit_test(test_layout_is_little_endian), cmocka_unit_test(test_every_truncation_is_refused),
        cmocka_unit_test(test_header_checks),           cmocka_unit_test(test_bad_fields_are_refused),
        cmocka_unit_test(test_encode_limits),           cmocka_unit_test(test_names_and_text),
        cmocka_unit_test(test_detach_and_attach),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
