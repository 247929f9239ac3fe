/* raw_datagram: the datagrams beside ENet (cradle/raw_datagram.h): PING,
 * PONG and STEPS framed both ways, plaintext and sealed, and everything
 * that is not one refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cradle/keys.h"
#include "cradle/raw_datagram.h"
#include "cradle/systime.h"

static cradle_secure client, server;
static uint8_t scratch[CRADLE_RAW_MESSAGE_MAX];

static int setup(void **state) {
    (void)state;
    cradle_keys keys;
    uint8_t seed[32], pk[32], sk[32];
    memset(seed, 7, sizeof seed);
    assert_int_equal(cradle_keys_from_seeds(&keys, seed, seed), 0);
    assert_int_equal(cradle_secure_keypair(pk, sk), 0);
    assert_int_equal(cradle_secure_client_init(&client, pk, sk, keys.kx_public, NULL), 0);
    assert_int_equal(cradle_secure_server_init(&server, keys.kx_public, keys.kx_secret, pk, NULL), 0);
    return 0;
}

static void test_round_trips(void **state) {
    (void)state;
    uint8_t datagram[CRADLE_RAW_DATAGRAM_MAX];
    size_t n = 0, plain_n = 0;
    cradle_wire_message ping = {.type = CRADLE_WIRE_PING, .as.ping = {.echo = 0x1122334455667788ull, .rtt_us = 59}};
    cradle_wire_message got;
    /* plaintext (an insecure session) */
    assert_int_equal(cradle_raw_encode(NULL, &ping, datagram, sizeof datagram, &plain_n), 0);
    assert_true(cradle_raw_is(datagram, plain_n));
    assert_memory_equal(datagram, CRADLE_WIRE_RAW_MAGIC, CRADLE_WIRE_RAW_MAGIC_BYTES);
    assert_int_equal(cradle_raw_decode(NULL, datagram, plain_n, scratch, &got), 0);
    assert_int_equal(got.type, CRADLE_WIRE_PING);
    assert_int_equal(got.as.ping.echo, ping.as.ping.echo);
    assert_int_equal(got.as.ping.rtt_us, 59);
    /* sealed: the client's PING opens on the server, its PONG (as long) on the client */
    assert_int_equal(cradle_raw_encode(&client, &ping, datagram, sizeof datagram, &n), 0);
    assert_int_equal(n, plain_n + CRADLE_SECURE_OVERHEAD);
    assert_int_equal(cradle_raw_decode(&server, datagram, n, scratch, &got), 0);
    assert_int_equal(got.as.ping.echo, ping.as.ping.echo);
    cradle_wire_message pong = {.type = CRADLE_WIRE_PONG, .as.ping = {.echo = got.as.ping.echo, .hold_us = 16000}};
    size_t m = 0;
    assert_int_equal(cradle_raw_encode(&server, &pong, datagram, sizeof datagram, &m), 0);
    assert_int_equal(m, n);
    assert_int_equal(cradle_raw_decode(&client, datagram, m, scratch, &got), 0);
    assert_int_equal(got.type, CRADLE_WIRE_PONG);
    assert_int_equal(got.as.ping.hold_us, 16000);
    /* the same datagram again is a replay */
    assert_int_equal(cradle_raw_decode(&client, datagram, m, scratch, &got), CRADLE_ESECURE_REPLAY);
}

static void test_refusals(void **state) {
    (void)state;
    uint8_t datagram[CRADLE_RAW_DATAGRAM_MAX + 8];
    size_t n = 0;
    cradle_wire_message got, ping = {.type = CRADLE_WIRE_PING, .as.ping = {.echo = 5}};
    /* only PING, PONG and STEPS travel raw */
    cradle_wire_message delay = {.type = CRADLE_WIRE_DELAY, .as.delay.input_delay = 3};
    assert_int_equal(cradle_raw_encode(NULL, &delay, datagram, sizeof datagram, &n), CRADLE_EINVAL);
    assert_int_equal(cradle_raw_encode(NULL, &ping, datagram, 10, &n), CRADLE_EFULL);
    /* not the magic: ENet's */
    assert_false(cradle_raw_is("\x0f\xff" "CRD", 5));
    assert_false(cradle_raw_is("\x0f\xfe" "CRDGxxxx", 10));
    /* a plaintext PING where keys are expected, a flipped byte, too long, nothing after the magic */
    assert_int_equal(cradle_raw_encode(NULL, &ping, datagram, sizeof datagram, &n), 0);
    assert_int_equal(cradle_raw_decode(&server, datagram, n, scratch, &got), CRADLE_ESECURE_SHORT);
    assert_int_equal(cradle_raw_encode(&client, &ping, datagram, sizeof datagram, &n), 0);
    datagram[n - 1] ^= 1;
    assert_int_equal(cradle_raw_decode(&server, datagram, n, scratch, &got), CRADLE_ESECURE_AUTH);
    assert_int_equal(cradle_raw_decode(NULL, datagram, CRADLE_RAW_DATAGRAM_MAX + 1, scratch, &got), CRADLE_ENET_MESSAGE);
    assert_int_equal(cradle_raw_decode(NULL, datagram, CRADLE_WIRE_RAW_MAGIC_BYTES, scratch, &got),
                     CRADLE_ENET_MESSAGE);
    /* another message, framed raw by hand: refused */
    uint8_t other[32];
    memcpy(other, CRADLE_WIRE_RAW_MAGIC, CRADLE_WIRE_RAW_MAGIC_BYTES);
    size_t k = 0;
    assert_int_equal(cradle_wire_encode(other + CRADLE_WIRE_RAW_MAGIC_BYTES,
                                        sizeof other - CRADLE_WIRE_RAW_MAGIC_BYTES, &k, &delay), 0);
    assert_int_equal(cradle_raw_decode(NULL, other, CRADLE_WIRE_RAW_MAGIC_BYTES + k, scratch, &got),
                     CRADLE_ENET_MESSAGE);
}

/* The step stream's STEPS, sealed per peer: a round trip with its
 * snapshots and hashes, a replay refused, and one too long for a raw
 * datagram refused at the sender (it goes through ENet). */
static void test_steps(void **state) {
    (void)state;
    uint8_t snapshots[3 * 10];
    for (size_t k = 0; k < sizeof snapshots; k++) snapshots[k] = (uint8_t)(k * 7u + 1u);
    cradle_wire_message steps = {.type = CRADLE_WIRE_STEPS};
    steps.as.steps.first_step = 1000;
    steps.as.steps.count = 3;
    steps.as.steps.snapshot_size = 10;
    steps.as.steps.snapshots = snapshots;
    steps.as.steps.hash_count = 1;
    steps.as.steps.hashes[0].offset = 2;
    steps.as.steps.hashes[0].hash = 0xfeedfacecafebeefull;
    uint8_t plain[CRADLE_WIRE_MESSAGE_MAX], datagram[CRADLE_RAW_DATAGRAM_MAX];
    size_t p = 0, n = 0;
    assert_int_equal(cradle_wire_encode(plain, sizeof plain, &p, &steps), 0);
    assert_int_equal(cradle_raw_seal(&server, plain, p, datagram, sizeof datagram, &n), 0);
    assert_int_equal(n, CRADLE_WIRE_RAW_MAGIC_BYTES + p + CRADLE_SECURE_OVERHEAD);
    cradle_wire_message got;
    assert_int_equal(cradle_raw_decode(&client, datagram, n, scratch, &got), 0);
    assert_int_equal(got.type, CRADLE_WIRE_STEPS);
    assert_int_equal(got.as.steps.first_step, 1000);
    assert_int_equal(got.as.steps.count, 3);
    assert_memory_equal(got.as.steps.snapshots, snapshots, sizeof snapshots);
    assert_int_equal(got.as.steps.hash_count, 1);
    assert_true(got.as.steps.hashes[0].hash == 0xfeedfacecafebeefull);
    assert_int_equal(cradle_raw_decode(&client, datagram, n, scratch, &got), CRADLE_ESECURE_REPLAY);
    /* the same through cradle_raw_encode, plaintext */
    assert_int_equal(cradle_raw_encode(NULL, &steps, datagram, sizeof datagram, &n), 0);
    assert_int_equal(n, CRADLE_WIRE_RAW_MAGIC_BYTES + p);
    assert_int_equal(cradle_raw_decode(NULL, datagram, n, scratch, &got), 0);
    assert_int_equal(got.as.steps.count, 3);
    /* the largest message fits; one byte more does not travel raw */
    uint8_t big[CRADLE_RAW_MESSAGE_MAX + 1];
    memset(big, 0, sizeof big);
    uint8_t room[CRADLE_RAW_DATAGRAM_MAX + 8];
    assert_int_equal(cradle_raw_seal(&server, big, CRADLE_RAW_MESSAGE_MAX, room, sizeof room, &n), 0);
    assert_int_equal(n, CRADLE_RAW_DATAGRAM_MAX);
    assert_int_equal(cradle_raw_seal(&server, big, sizeof big, room, sizeof room, &n), CRADLE_EINVAL);
    uint8_t many[20 * 64];
    memset(many, 3, sizeof many);
    steps.as.steps.count = 64;
    steps.as.steps.snapshot_size = 20;
    steps.as.steps.snapshots = many;
    assert_int_equal(cradle_raw_encode(&server, &steps, room, sizeof room, &n), CRADLE_EINVAL);
    /* another protocol version is named as such */
    plain[1] = (uint8_t)(CRADLE_WIRE_VERSION + 1u); /* the header's second byte (wire.h) */
    assert_int_equal(cradle_raw_seal(NULL, plain, p, datagram, sizeof datagram, &n), 0);
    assert_int_equal(cradle_raw_decode(NULL, datagram, n, scratch, &got), CRADLE_ENET_VERSION);
}

/* The kernel's receive timestamp of a datagram read from a UDP socket is
 * when it arrived: after its sending and before the read, on
 * cradle_wall_ns's clock. */
static void test_arrival_is_the_kernels(void **state) {
    (void)state;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    cradle_raw_stamp_arrivals(fd);
    /* The kernel turns stamping on a moment later, so a datagram or two may
     * go unstamped (read as "now"): a ping's measure then counts the wait
     * once. Each datagram waits 5 ms in the socket before it is read; within
     * a second of them, one is stamped on its arrival, 5 ms before the read,
     * and every one after it too. */
    bool stamped = false;
    uint64_t deadline = cradle_mono_ns() + 1000000000u;
    for (int seen = 0; seen < 3 && cradle_mono_ns() < deadline;) {
        uint64_t before = cradle_wall_ns();
        assert_int_equal(sendto(fd, "x", 1, 0, (struct sockaddr *)&a, sizeof a), 1);
        cradle_sleep_ns(5000000u); /* the wait measured, not a wait for anything */
        uint64_t read_at = cradle_wall_ns();
        char c;
        assert_int_equal(recv(fd, &c, 1, 0), 1);
        uint64_t arrived = cradle_raw_arrival_ns(fd);
        assert_true(arrived >= before);
        if (arrived + 4000000u <= read_at) {
            stamped = true; /* the kernel's, not the read's */
            seen++;
        } else {
            assert_false(stamped); /* once stamping is on, it stays on */
        }
    }
    assert_true(stamped);
    close(fd);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_round_trips, setup),
        cmocka_unit_test_setup(test_refusals, setup),
        cmocka_unit_test_setup(test_steps, setup),
        cmocka_unit_test(test_arrival_is_the_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
