#ifndef CRADLE_CLIENT_LINK_ENET_H
#define CRADLE_CLIENT_LINK_ENET_H
/*
 * link_enet: the client's link (link.h) over ENet and UDP, the programs'
 * transport. One ENet host with one peer, the server; reliable messages on
 * ENet's reliable channel, unreliable ones unsequenced. Raw datagrams
 * arrive at ENet's own socket and are taken in ENet's intercept hook
 * (cradle_link_enet_intercept) before ENet reads them, with the kernel's
 * receive timestamp (raw_datagram.h), and leave through the same socket.
 *
 * ENet keeps its own clock for its retransmissions and pings; its peer
 * timeout follows the client's silence timeout, a second behind, so the
 * client's own check fires first and still has a peer to say goodbye with.
 */
#include <stdbool.h>
#include <stdint.h>

#include <enet/enet.h>

#include "link.h"

typedef struct cradle_link_enet {
    const char *server;             /* the server's address or name */
    uint16_t port;
    cradle_link_datagram_fn datagram;
    void *datagram_context;
    /* Fields for reading (a test injects datagrams through the hook). */
    ENetHost *host;
    ENetPeer *peer;                 /* NULL: not connected */
    ENetAddress address;            /* the server's, resolved at the first connect */
    ENetPacket *held;               /* the last MESSAGE's packet, freed at the next receive */
    bool draining;                  /* the last receive had an event: the next takes ENet's
                                       queued events before reading the socket again */
} cradle_link_enet;

/* A link over ENet to host:port (copied: host must outlive it); datagram
 * gets the raw datagrams. Connects nothing yet. */
cradle_link cradle_link_enet_make(cradle_link_enet *e, const char *host, uint16_t port,
                                  cradle_link_datagram_fn datagram, void *datagram_context);

/* ENet's intercept hook of a link's host (the link is its peer's data):
 * raw datagrams go to the link's callback (returns 1: ENet reads nothing
 * of them), the rest to ENet (returns 0). A program that wraps the hook
 * (to time arrivals) calls it from its own. */
int cradle_link_enet_intercept(ENetHost *host, ENetEvent *event);

/* The socket a caller may wait on beside others, or -1 before connect. */
int cradle_link_enet_socket(const cradle_link_enet *e);

#endif
