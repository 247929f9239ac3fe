#ifndef CRADLE_CLIENT_LINK_H
#define CRADLE_CLIENT_LINK_H
/*
 * link: the client's transport to a cradle-server, the one thing the client
 * library (netclient.h) needs from a network. netclient speaks the wire
 * (encoding, sealing, the session's protocol); a link only carries bytes:
 *   - one connection to the server, which it starts (connect), reports
 *     (CONNECTED, LOST with the server's reason) and ends (leave, close);
 *   - messages over it, each delivered whole, either reliable and in order
 *     or unreliable and unordered (the server's step stream repeats what an
 *     unreliable message lost);
 *   - raw datagrams beside the connection (wire.h "Raw datagrams": the step
 *     stream, PING and PONG), sent at once and handed to the client the
 *     moment the link reads them (datagram callback), with the time they
 *     arrived when the link knows it (arrived).
 * ENet over UDP is the link the programs use (link_enet.h). A browser's
 * would be WebSocket or WebTransport: reliable messages over the socket,
 * unreliable ones and the raw datagrams as WebTransport datagrams (or, over
 * a WebSocket alone, reliable too: the step stream then never needs a
 * repair). A test's is a script in memory (tests/unit/test_netclient_link.c).
 *
 * A link reads no clock for the session: its events carry no time, and the
 * client stamps what arrives with the now it was given. One thread owns a
 * link and its netclient.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cradle_link_event_kind {
    CRADLE_LINK_NONE = 0,
    CRADLE_LINK_CONNECTED, /* the connection is up: messages may go (once a connect) */
    CRADLE_LINK_MESSAGE,   /* data, size: one message from the server */
    CRADLE_LINK_LOST,      /* the connection ended; reason: the server's (wire.h
                              CRADLE_WIRE_DISCONNECT_*), or 0 */
} cradle_link_event_kind;

typedef struct cradle_link_event {
    cradle_link_event_kind kind;
    const uint8_t *data; /* MESSAGE: valid until the next call on the link */
    size_t size;
    uint32_t reason;
} cradle_link_event;

/* A raw datagram the link read: from_server is false when it came from
 * another address than the server's (to be dropped and counted). Within
 * the callback, the link's arrived() tells when it reached this machine. */
typedef void (*cradle_link_datagram_fn)(void *context, const uint8_t *data, size_t size, bool from_server);

typedef struct cradle_link_ops {
    /* Starts connecting (again, after a LOST). Returns 0, or a negative
     * error code (errors.h) with message. */
    int (*connect)(void *link, char *message, size_t message_size);
    /* The connection's id, known to both ends (bound into the secure
     * session's keys); valid once connect returned. */
    uint64_t (*connection_id)(void *link);
    /* Queues one message for the server. Returns false when it could not
     * (no connection, no memory): the message is lost, as on a bad link. */
    bool (*send)(void *link, const void *data, size_t size, bool reliable);
    /* Sends one raw datagram to the server at once. Returns false when it
     * could not. */
    bool (*send_datagram)(void *link, const void *data, size_t size);
    /* The next event into *event: waits up to wait_ms for one when none is
     * there (0: not at all). Raw datagrams read meanwhile go to the
     * datagram callback. Returns 1 (an event), 0 (none) or a negative
     * error code. The client calls it until it returns 0: a link may read
     * its socket once for that whole round. */
    int (*receive)(void *link, uint32_t wait_ms, cradle_link_event *event);
    /* Within the datagram callback: when the datagram reached this machine,
     * by CLOCK_REALTIME (the kernel's receive timestamp), or 0 when the
     * link cannot tell. Asked only of the datagrams whose time counts (a
     * PONG), as it may cost a system call. */
    uint64_t (*arrived)(void *link);
    /* Sends what send queued. */
    void (*flush)(void *link);
    /* Ends the connection politely: what was queued goes first; waits up to
     * wait_ms for the server to acknowledge. */
    void (*leave)(void *link, uint32_t wait_ms);
    /* Ends the connection at once (one last datagram telling the server,
     * when the link can) and frees what the link holds. Safe twice. */
    void (*close)(void *link);
} cradle_link_ops;

/* A link: its functions and its own state. */
typedef struct cradle_link {
    const cradle_link_ops *ops;
    void *self;
} cradle_link;

#endif
