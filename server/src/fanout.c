/*
 * fanout: batched sends of the step stream's raw datagrams (fanout.h).
 */
#define _GNU_SOURCE /* sendmmsg */
#include "fanout.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

#include <arpa/inet.h>

void cradle_fanout_init(cradle_fanout *f, int socket) {
    memset(&f->stats, 0, sizeof f->stats);
    f->socket = socket;
    f->count = 0;
}

uint8_t *cradle_fanout_buffer(cradle_fanout *f) {
    assert(f->count < CRADLE_FANOUT_BATCH);
    return f->data[f->count];
}

void cradle_fanout_queue(cradle_fanout *f, size_t length, uint32_t host, uint16_t port) {
    assert(f->count < CRADLE_FANOUT_BATCH && length <= CRADLE_RAW_DATAGRAM_MAX);
    uint32_t k = f->count++;
    f->addresses[k] = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = host};
    f->vectors[k] = (struct iovec){.iov_base = f->data[k], .iov_len = length};
    if (f->count == CRADLE_FANOUT_BATCH) cradle_fanout_flush(f);
}

void cradle_fanout_flush(cradle_fanout *f) {
    struct mmsghdr messages[CRADLE_FANOUT_BATCH];
    for (uint32_t k = 0; k < f->count; k++)
        messages[k] = (struct mmsghdr){.msg_hdr = {.msg_name = &f->addresses[k],
                                                   .msg_namelen = sizeof f->addresses[k],
                                                   .msg_iov = &f->vectors[k],
                                                   .msg_iovlen = 1}};
    uint32_t next = 0;
    while (next < f->count) {
        int sent = sendmmsg(f->socket, messages + next, f->count - next, MSG_DONTWAIT | MSG_NOSIGNAL);
        f->stats.batches++;
        if (sent < 0) {
            if (errno == EINTR) continue;
            /* The first datagram failed (a full buffer, an unroutable
             * address): it is dropped, the rest are tried. */
            f->stats.dropped++;
            next++;
            continue;
        }
        for (int k = 0; k < sent; k++) f->stats.bytes += f->vectors[next + (uint32_t)k].iov_len;
        f->stats.datagrams += (uint64_t)sent;
        next += (uint32_t)sent;
    }
    f->count = 0;
}
