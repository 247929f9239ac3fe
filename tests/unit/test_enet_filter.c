/* The server's filter in front of ENet (server/src/enet_filter.h): which
 * datagrams at the UDP port ENet would read, and which are garbage. The
 * datagrams are laid out as ENet's protocol.h has them: a 2-byte header
 * (peer id, session, flags), 2 more with the sent-time flag, then commands. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "enet_filter.h"

enum { PEERS = 4 };

static ENetPeer peers[PEERS];
static ENetHost host;
static const ENetAddress player = {.host = 0x0100007fu, .port = 40000u};

/* Peer 1 is connected from `player`, outgoing id known, session 2; the rest
 * are free. */
static int setup(void **unused) {
    (void)unused;
    memset(peers, 0, sizeof peers);
    memset(&host, 0, sizeof host);
    host.peers = peers;
    host.peerCount = PEERS;
    peers[1].state = ENET_PEER_STATE_CONNECTED;
    peers[1].address = player;
    peers[1].outgoingPeerID = 0;
    peers[1].incomingSessionID = 2;
    return 0;
}

/* A datagram with one command: header for peer_id in session (with the
 * sent time), the command byte and body_bytes of zeros after it. */
static size_t datagram(uint8_t *out, uint16_t peer_id, uint8_t session, uint8_t command, size_t body_bytes) {
    uint16_t field = (uint16_t)(peer_id | ENET_PROTOCOL_HEADER_FLAG_SENT_TIME |
                                (uint16_t)(session << ENET_PROTOCOL_HEADER_SESSION_SHIFT));
    out[0] = (uint8_t)(field >> 8);
    out[1] = (uint8_t)field;
    out[2] = 0x12; /* the sent time */
    out[3] = 0x34;
    out[4] = (uint8_t)(command | ENET_PROTOCOL_COMMAND_FLAG_ACKNOWLEDGE);
    memset(out + 5, 0, body_bytes);
    return 5 + body_bytes;
}

static bool reads(const uint8_t *d, size_t n, const ENetAddress *from) {
    return cradle_enet_would_read(&host, d, n, from);
}

static void a_connect_to_no_peer_is_read_when_whole(void **unused) {
    (void)unused;
    uint8_t d[128];
    const ENetAddress stranger = {.host = 0x0900007fu, .port = 1234u};
    size_t whole = 4 + sizeof(ENetProtocolConnect);
    size_t n = datagram(d, ENET_PROTOCOL_MAXIMUM_PEER_ID, 0, ENET_PROTOCOL_COMMAND_CONNECT, whole - 5);
    assert_true(reads(d, n, &stranger));
    assert_false(reads(d, n - 1, &stranger)); /* cut short */
    /* to no peer, only a CONNECT is anything */
    n = datagram(d, ENET_PROTOCOL_MAXIMUM_PEER_ID, 0, ENET_PROTOCOL_COMMAND_PING, whole - 5);
    assert_false(reads(d, n, &stranger));
}

static void short_compressed_and_unknown_are_garbage(void **unused) {
    (void)unused;
    uint8_t d[64];
    size_t n = datagram(d, 1, 2, ENET_PROTOCOL_COMMAND_PING, 3);
    assert_true(reads(d, n, &player));
    assert_false(reads(d, 0, &player));
    assert_false(reads(d, 1, &player));
    assert_false(reads(d, 4, &player)); /* a header and no command */
    d[0] |= ENET_PROTOCOL_HEADER_FLAG_COMPRESSED >> 8;
    assert_false(reads(d, n, &player)); /* no compressor is set */
    n = datagram(d, 1, 2, 0, 3);
    assert_false(reads(d, n, &player));
    n = datagram(d, 1, 2, ENET_PROTOCOL_COMMAND_COUNT, 3);
    assert_false(reads(d, n, &player));
    /* without the sent time the command starts at byte 2 */
    n = datagram(d, 1, 2, ENET_PROTOCOL_COMMAND_PING, 3);
    d[0] &= (uint8_t)~(ENET_PROTOCOL_HEADER_FLAG_SENT_TIME >> 8);
    d[2] = ENET_PROTOCOL_COMMAND_PING;
    assert_true(reads(d, n, &player));
}

static void a_command_is_read_only_from_its_peer_in_its_session(void **unused) {
    (void)unused;
    uint8_t d[64];
    size_t n = datagram(d, 1, 2, ENET_PROTOCOL_COMMAND_SEND_UNRELIABLE, 8);
    assert_true(reads(d, n, &player));
    const ENetAddress other_host = {.host = 0x0200007fu, .port = player.port};
    const ENetAddress other_port = {.host = player.host, .port = 40001u};
    assert_false(reads(d, n, &other_host));
    assert_false(reads(d, n, &other_port));
    n = datagram(d, 1, 3, ENET_PROTOCOL_COMMAND_SEND_UNRELIABLE, 8);
    assert_false(reads(d, n, &player)); /* another session: a stale client's */
    /* before the peer has its outgoing id, ENet takes any session */
    peers[1].outgoingPeerID = ENET_PROTOCOL_MAXIMUM_PEER_ID;
    assert_true(reads(d, n, &player));
    /* a free slot, a zombie, a slot past the table */
    n = datagram(d, 2, 0, ENET_PROTOCOL_COMMAND_SEND_UNRELIABLE, 8);
    assert_false(reads(d, n, &player));
    peers[1].state = ENET_PEER_STATE_ZOMBIE;
    n = datagram(d, 1, 2, ENET_PROTOCOL_COMMAND_SEND_UNRELIABLE, 8);
    assert_false(reads(d, n, &player));
    n = datagram(d, PEERS, 0, ENET_PROTOCOL_COMMAND_SEND_UNRELIABLE, 8);
    assert_false(reads(d, n, &player));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(a_connect_to_no_peer_is_read_when_whole, setup),
        cmocka_unit_test_setup(short_compressed_and_unknown_are_garbage, setup),
        cmocka_unit_test_setup(a_command_is_read_only_from_its_peer_in_its_session, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
