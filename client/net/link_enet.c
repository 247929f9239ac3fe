/*
 * link_enet: the client's link over ENet and UDP (see link_enet.h).
 */
#include "link_enet.h"

#include <assert.h>
#include <poll.h>
#include <stdio.h>

#include "cradle/errors.h"
#include "cradle/raw_datagram.h"

int cradle_link_enet_intercept(ENetHost *host, ENetEvent *event) {
    (void)event;
    if (!cradle_raw_is(host->receivedData, host->receivedDataLength)) return 0; /* ENet's */
    cradle_link_enet *e = host->peerCount ? host->peers[0].data : NULL;
    if (!e) return 1; /* no connection yet: nobody to hand it to */
    bool from_server = e->peer && host->receivedAddress.host == e->peer->address.host &&
                       host->receivedAddress.port == e->peer->address.port;
    e->datagram(e->datagram_context, host->receivedData, host->receivedDataLength, from_server);
    return 1;
}

static int link_connect(void *self, char *message, size_t message_size) {
    cradle_link_enet *e = self;
    if (!e->host) {
        e->address = (ENetAddress){.port = e->port};
        if (enet_address_set_host(&e->address, e->server) != 0) {
            snprintf(message, message_size, "cannot resolve the server address '%s'", e->server);
            return CRADLE_EINVAL;
        }
        e->host = enet_host_create(NULL, 1, 1, 0, 0);
        if (!e->host) {
            snprintf(message, message_size, "cannot create an ENet host");
            return CRADLE_ENET_INIT;
        }
        e->host->intercept = cradle_link_enet_intercept;
        cradle_raw_stamp_arrivals(e->host->socket);
    }
    e->peer = enet_host_connect(e->host, &e->address, 1, 0);
    if (!e->peer) {
        snprintf(message, message_size, "cannot start connecting to %s:%u", e->server, (unsigned)e->port);
        return CRADLE_ENET_INIT;
    }
    e->peer->data = e; /* cradle_link_enet_intercept finds the link by it */
    /* ENet's own timeout is off (wire.h): the client's silence check
     * (silence_timeout_ms, netclient.h) ends a connection the server stopped
     * talking on, and still has a peer to send the server its disconnect. */
    enet_peer_timeout(e->peer, 0, CRADLE_WIRE_ENET_TIMEOUT_MS, CRADLE_WIRE_ENET_TIMEOUT_MS);
    return 0;
}

static uint64_t link_connection_id(void *self) {
    const cradle_link_enet *e = self;
    return e->peer ? e->peer->connectID : 0;
}

static bool link_send(void *self, const void *data, size_t size, bool reliable) {
    cradle_link_enet *e = self;
    if (!e->peer) return false;
    ENetPacket *packet = enet_packet_create(data, size, reliable ? ENET_PACKET_FLAG_RELIABLE : ENET_PACKET_FLAG_UNSEQUENCED);
    if (!packet) return false;
    if (enet_peer_send(e->peer, 0, packet) != 0) {
        enet_packet_destroy(packet);
        return false;
    }
    return true;
}

static bool link_send_datagram(void *self, const void *data, size_t size) {
    cradle_link_enet *e = self;
    if (!e->peer) return false;
    ENetBuffer buffer = {.data = (void *)(uintptr_t)data, .dataLength = size};
    return enet_socket_send(e->host->socket, &e->peer->address, &buffer, 1) > 0;
}

static void release_held(cradle_link_enet *e) {
    if (e->held) enet_packet_destroy(e->held);
    e->held = NULL;
}

static int link_receive(void *self, uint32_t wait_ms, cradle_link_event *event) {
    cradle_link_enet *e = self;
    release_held(e);
    *event = (cradle_link_event){.kind = CRADLE_LINK_NONE};
    if (!e->host) return 0;
    ENetEvent ev;
    int rc;
    if (e->draining) {
        /* the events the last service made, without reading the socket again */
        rc = enet_host_check_events(e->host, &ev);
    } else {
        /* The wait is the socket's, not ENet's: ENet waits on until an
         * event, and a raw datagram, taken in its hook, is none. */
        rc = enet_host_service(e->host, &ev, 0);
        if (rc == 0 && wait_ms > 0) {
            struct pollfd socket = {.fd = e->host->socket, .events = POLLIN};
            if (poll(&socket, 1, wait_ms > INT32_MAX ? INT32_MAX : (int)wait_ms) > 0)
                rc = enet_host_service(e->host, &ev, 0);
        }
    }
    e->draining = rc > 0; /* the next call takes what this service made; after none, it reads again */
    if (rc <= 0) return rc < 0 ? CRADLE_ENET_INIT : 0;
    switch (ev.type) {
    case ENET_EVENT_TYPE_CONNECT: event->kind = CRADLE_LINK_CONNECTED; break;
    case ENET_EVENT_TYPE_RECEIVE:
        e->held = ev.packet;
        *event = (cradle_link_event){.kind = CRADLE_LINK_MESSAGE, .data = ev.packet->data, .size = ev.packet->dataLength};
        break;
    case ENET_EVENT_TYPE_DISCONNECT:
        e->peer = NULL;
        *event = (cradle_link_event){.kind = CRADLE_LINK_LOST, .reason = ev.data};
        break;
    case ENET_EVENT_TYPE_NONE: return 0;
    }
    return 1;
}

static uint64_t link_arrived(void *self) {
    const cradle_link_enet *e = self;
    return e->host ? cradle_raw_arrival_ns(e->host->socket) : 0; /* still the datagram's just read */
}

static void link_flush(void *self) {
    cradle_link_enet *e = self;
    if (e->host) enet_host_flush(e->host);
}

static void link_leave(void *self, uint32_t wait_ms) {
    cradle_link_enet *e = self;
    release_held(e);
    if (!e->host || !e->peer) return;
    enet_peer_disconnect_later(e->peer, 0);
    ENetEvent event;
    for (uint32_t waited = 0; waited < wait_ms; waited += 10) {
        int rc = enet_host_service(e->host, &event, 10);
        if (rc < 0) break;
        if (rc == 0) continue;
        if (event.type == ENET_EVENT_TYPE_RECEIVE) enet_packet_destroy(event.packet);
        if (event.type == ENET_EVENT_TYPE_DISCONNECT) break;
    }
    e->peer = NULL;
}

static void link_close(void *self) {
    cradle_link_enet *e = self;
    release_held(e);
    /* One datagram tells the server, so the client's slot is free at once
     * rather than after the server's peer timeout. */
    if (e->peer && e->peer->state != ENET_PEER_STATE_DISCONNECTED) enet_peer_disconnect_now(e->peer, 0);
    if (e->host) enet_host_destroy(e->host);
    e->host = NULL;
    e->peer = NULL;
}

static const cradle_link_ops enet_ops = {
    .connect = link_connect,
    .connection_id = link_connection_id,
    .send = link_send,
    .send_datagram = link_send_datagram,
    .receive = link_receive,
    .arrived = link_arrived,
    .flush = link_flush,
    .leave = link_leave,
    .close = link_close,
};

cradle_link cradle_link_enet_make(cradle_link_enet *e, const char *host, uint16_t port,
                                  cradle_link_datagram_fn datagram, void *datagram_context) {
    assert(e && host && datagram);
    *e = (cradle_link_enet){.server = host,
                            .port = port,
                            .datagram = datagram,
                            .datagram_context = datagram_context};
    return (cradle_link){.ops = &enet_ops, .self = e};
}

int cradle_link_enet_socket(const cradle_link_enet *e) { return e->host ? (int)e->host->socket : -1; }
