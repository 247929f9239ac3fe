#ifndef CRADLE_SERVER_FANOUT_H
#define CRADLE_SERVER_FANOUT_H
/*
 * fanout: the step stream's raw datagrams (cradle/raw_datagram.h) to every
 * peer, sent in batches on ENet's socket: one sendmmsg for up to
 * CRADLE_FANOUT_BATCH datagrams, where ENet makes one sendmsg per peer
 * (and builds, queues and frees a packet and a command for each first).
 *
 * The network thread asks for a buffer, writes one peer's sealed datagram
 * into it and queues it with the peer's address; a full batch leaves at
 * once, the rest at cradle_fanout_flush (after every peer had its turn).
 * A datagram the kernel refuses (its socket buffer full) is dropped and
 * counted: the stream is unreliable and repairs what an ack does not
 * confirm, as it does for a datagram lost on the way.
 *
 * The batch lives in the struct: nothing allocates. One thread owns it.
 */
#include <stddef.h>
#include <stdint.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include "cradle/raw_datagram.h"

#define CRADLE_FANOUT_BATCH 64u

typedef struct cradle_fanout_stats {
    uint64_t datagrams; /* sent */
    uint64_t bytes;     /* of them (UDP payload) */
    uint64_t batches;   /* sendmmsg calls */
    uint64_t dropped;   /* refused by the kernel */
} cradle_fanout_stats;

typedef struct cradle_fanout {
    int socket;
    uint32_t count; /* queued, not yet sent */
    struct iovec vectors[CRADLE_FANOUT_BATCH];
    struct sockaddr_in addresses[CRADLE_FANOUT_BATCH];
    uint8_t data[CRADLE_FANOUT_BATCH][CRADLE_RAW_DATAGRAM_MAX];
    cradle_fanout_stats stats;
} cradle_fanout;

/* Sends on socket (ENet's: non-blocking, IPv4). */
void cradle_fanout_init(cradle_fanout *f, int socket);

/* The next datagram's buffer: CRADLE_RAW_DATAGRAM_MAX bytes. */
uint8_t *cradle_fanout_buffer(cradle_fanout *f);

/* Queues the buffer's first length bytes for host:port (network order,
 * host order: ENetAddress's); sends the batch when it is full. */
void cradle_fanout_queue(cradle_fanout *f, size_t length, uint32_t host, uint16_t port);

/* Sends what is queued. */
void cradle_fanout_flush(cradle_fanout *f);

#endif
