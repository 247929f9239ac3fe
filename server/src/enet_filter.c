#include "enet_filter.h"

bool cradle_enet_would_read(const ENetHost *host, const uint8_t *datagram, size_t size, const ENetAddress *from) {
    if (size < 2) return false;
    uint16_t field = (uint16_t)(datagram[0] << 8 | datagram[1]);
    uint16_t peer_id = (uint16_t)(field & ENET_PROTOCOL_MAXIMUM_PEER_ID); /* less the flags and session */
    uint8_t session = (uint8_t)((field & ENET_PROTOCOL_HEADER_SESSION_MASK) >> ENET_PROTOCOL_HEADER_SESSION_SHIFT);
    size_t header = field & ENET_PROTOCOL_HEADER_FLAG_SENT_TIME ? 4u : 2u;
    if (field & ENET_PROTOCOL_HEADER_FLAG_COMPRESSED || size < header + sizeof(ENetProtocolCommandHeader)) return false;
    uint8_t command = datagram[header] & ENET_PROTOCOL_COMMAND_MASK;
    if (command == 0 || command >= ENET_PROTOCOL_COMMAND_COUNT) return false;
    if (peer_id == ENET_PROTOCOL_MAXIMUM_PEER_ID)
        return command == ENET_PROTOCOL_COMMAND_CONNECT && size >= header + sizeof(ENetProtocolConnect);
    if (peer_id >= host->peerCount) return false;
    const ENetPeer *peer = &host->peers[peer_id];
    if (peer->state == ENET_PEER_STATE_DISCONNECTED || peer->state == ENET_PEER_STATE_ZOMBIE) return false;
    if (peer->address.host != from->host || peer->address.port != from->port) return false;
    return peer->outgoingPeerID >= ENET_PROTOCOL_MAXIMUM_PEER_ID || session == peer->incomingSessionID;
}
