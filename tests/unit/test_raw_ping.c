/* raw_ping: the raw PING/PONG datagrams beside ENet (cradle/raw_ping.h):
 * framing both ways, plaintext and sealed, and everything that is not one
 * refused. */
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
#include "cradle/raw_ping.h"
#include "cradle/systime.h"

static cradle_secure client, server;

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
    uint8_t datagram[CRADLE_RAW_PING_MAX];
    size_t n = 0, plain_n = 0;
    cradle_wire_message ping = {.type = CRADLE_WIRE_PING, .as.ping = {.echo = 0x1122334455667788ull, .rtt_us = 59}};
    cradle_wire_message got;
    /* plaintext (an insecure session) */
    assert_int_equal(cradle_raw_ping_encode(NULL, &ping, datagram, sizeof datagram, &plain_n), 0);
    assert_true(cradle_raw_ping_is(datagram, plain_n));
    assert_memory_equal(datagram, CRADLE_WIRE_RAW_PING_MAGIC, CRADLE_WIRE_RAW_PING_MAGIC_BYTES);
    assert_int_equal(cradle_raw_ping_decode(NULL, datagram, plain_n, &got), 0);
    assert_int_equal(got.type, CRADLE_WIRE_PING);
    assert_int_equal(got.as.ping.echo, ping.as.ping.echo);
    assert_int_equal(got.as.ping.rtt_us, 59);
    /* sealed: the client's PING opens on the server, its PONG (as long) on the client */
    assert_int_equal(cradle_raw_ping_encode(&client, &ping, datagram, sizeof datagram, &n), 0);
    assert_int_equal(n, plain_n + CRADLE_SECURE_OVERHEAD);
    assert_int_equal(cradle_raw_ping_decode(&server, datagram, n, &got), 0);
    assert_int_equal(got.as.ping.echo, ping.as.ping.echo);
    cradle_wire_message pong = {.type = CRADLE_WIRE_PONG, .as.ping = {.echo = got.as.ping.echo, .hold_us = 16000}};
    size_t m = 0;
    assert_int_equal(cradle_raw_ping_encode(&server, &pong, datagram, sizeof datagram, &m), 0);
    assert_int_equal(m, n);
    assert_int_equal(cradle_raw_ping_decode(&client, datagram, m, &got), 0);
    assert_int_equal(got.type, CRADLE_WIRE_PONG);
    assert_int_equal(got.as.ping.hold_us, 16000);
    /* the same datagram again is a replay */
    assert_int_equal(cradle_raw_ping_decode(&client, datagram, m, &got), CRADLE_ESECURE_REPLAY);
}

static void test_refusals(void **state) {
    (void)state;
    uint8_t datagram[CRADLE_RAW_PING_MAX + 8];
    size_t n = 0;
    cradle_wire_message got, ping = {.type = CRADLE_WIRE_PING, .as.ping = {.echo = 5}};
    /* only PING and PONG travel raw */
    cradle_wire_message delay = {.type = CRADLE_WIRE_DELAY, .as.delay.input_delay = 3};
    assert_int_equal(cradle_raw_ping_encode(NULL, &delay, datagram, sizeof datagram, &n), CRADLE_EINVAL);
    assert_int_equal(cradle_raw_ping_encode(NULL, &ping, datagram, 10, &n), CRADLE_EFULL);
    /* not the magic: ENet's */
    assert_false(cradle_raw_ping_is("\x0f\xff" "CRP", 5));
    assert_false(cradle_raw_ping_is("\x0f\xfe" "CRPGxxxx", 10));
    /* a plaintext PING where keys are expected, a flipped byte, too long, nothing after the magic */
    assert_int_equal(cradle_raw_ping_encode(NULL, &ping, datagram, sizeof datagram, &n), 0);
    assert_int_equal(cradle_raw_ping_decode(&server, datagram, n, &got), CRADLE_ESECURE_SHORT);
    assert_int_equal(cradle_raw_ping_encode(&client, &ping, datagram, sizeof datagram, &n), 0);
    datagram[n - 1] ^= 1;
    assert_int_equal(cradle_raw_ping_decode(&server, datagram, n, &got), CRADLE_ESECURE_AUTH);
    assert_int_equal(cradle_raw_ping_decode(NULL, datagram, CRADLE_RAW_PING_MAX + 1, &got), CRADLE_ENET_MESSAGE);
    assert_int_equal(cradle_raw_ping_decode(NULL, datagram, CRADLE_WIRE_RAW_PING_MAGIC_BYTES, &got),
                     CRADLE_ENET_MESSAGE);
    /* another message, framed raw by hand: refused */
    uint8_t other[32];
    memcpy(other, CRADLE_WIRE_RAW_PING_MAGIC, CRADLE_WIRE_RAW_PING_MAGIC_BYTES);
    size_t k = 0;
    assert_int_equal(cradle_wire_encode(other + CRADLE_WIRE_RAW_PING_MAGIC_BYTES,
                                        sizeof other - CRADLE_WIRE_RAW_PING_MAGIC_BYTES, &k, &delay), 0);
    assert_int_equal(cradle_raw_ping_decode(NULL, other, CRADLE_WIRE_RAW_PING_MAGIC_BYTES + k, &got),
                     CRADLE_ENET_MESSAGE);
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
    cradle_raw_ping_stamp_arrivals(fd);
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
        uint64_t arrived = cradle_raw_ping_arrival_ns(fd);
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
        cmocka_unit_test(test_arrival_is_the_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
