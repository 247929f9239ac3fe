/*
 * fuzz_enet_filter: cradle-server's filter in front of ENet (enet_filter.h),
 * which every datagram at the UDP port meets first, from anyone.
 *
 * The first 13 bytes lay out the host: 4 peers (3 bytes each: state,
 * address and port, outgoing id and session) and which address the
 * datagram comes from; the rest is the datagram. Whatever the filter lets
 * through is what ENet can read: long enough for its headers, no claim of
 * compression, a known command, and either a CONNECT to no peer or a
 * command for a live peer of that address in its session.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "enet_filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { PEERS = 4, LAYOUT = PEERS * 3 + 1 };

static ENetAddress address_of(uint8_t choice) {
    /* two hosts, two ports: the datagram's source matches a peer or does not */
    return (ENetAddress){.host = choice & 1u ? 0x0100007fu : 0x0200007fu, .port = choice & 2u ? 7777u : 40000u};
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < LAYOUT) return 0;
    static ENetPeer peers[PEERS];
    ENetHost host;
    memset(&host, 0, sizeof host);
    memset(peers, 0, sizeof peers);
    host.peers = peers;
    host.peerCount = PEERS;
    for (size_t i = 0; i < PEERS; i++) {
        const uint8_t *p = data + i * 3;
        peers[i].state = (ENetPeerState)(p[0] % (ENET_PEER_STATE_ZOMBIE + 1));
        peers[i].address = address_of(p[1]);
        peers[i].outgoingPeerID = p[2] & 0x80u ? ENET_PROTOCOL_MAXIMUM_PEER_ID : (uint16_t)i;
        peers[i].incomingSessionID = (uint8_t)(p[2] & 3u);
    }
    ENetAddress from = address_of(data[PEERS * 3]);
    const uint8_t *datagram = data + LAYOUT;
    size_t n = size - LAYOUT;
    /* a copy of exactly n bytes: a read past the end is the sanitizer's */
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy) abort();
    memcpy(copy, datagram, n);
    bool read = cradle_enet_would_read(&host, copy, n, &from);
    free(copy);
    if (!read) return 0;
    uint16_t field = (uint16_t)(datagram[0] << 8 | datagram[1]);
    size_t header = field & ENET_PROTOCOL_HEADER_FLAG_SENT_TIME ? 4u : 2u;
    if (field & ENET_PROTOCOL_HEADER_FLAG_COMPRESSED) abort();
    if (n < header + sizeof(ENetProtocolCommandHeader)) abort();
    uint8_t command = datagram[header] & ENET_PROTOCOL_COMMAND_MASK;
    if (command == 0 || command >= ENET_PROTOCOL_COMMAND_COUNT) abort();
    uint16_t peer_id = field & ENET_PROTOCOL_MAXIMUM_PEER_ID;
    if (peer_id == ENET_PROTOCOL_MAXIMUM_PEER_ID) {
        if (command != ENET_PROTOCOL_COMMAND_CONNECT || n < header + sizeof(ENetProtocolConnect)) abort();
        return 0;
    }
    if (peer_id >= PEERS) abort();
    const ENetPeer *peer = &peers[peer_id];
    if (peer->state == ENET_PEER_STATE_DISCONNECTED || peer->state == ENET_PEER_STATE_ZOMBIE) abort();
    if (peer->address.host != from.host || peer->address.port != from.port) abort();
    return 0;
}
