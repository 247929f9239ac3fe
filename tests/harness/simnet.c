/* The test clock and impaired network under ENet (simnet.h). */
#include "simnet.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <enet/enet.h>

#define START_NS 1000000000ull /* the clock starts at 1 s: ENet takes a time of 0 for "never" */

typedef struct simnet_socket {
    bool used;
    int fd;
    cradle_proxy_sched sched;
    cradle_proxy_entry *entries;
    cradle_proxy_packet *packets;
    uint32_t *free_list;
} simnet_socket;

static struct {
    bool open;
    uint64_t now_ns;
    cradle_proxy_impairment link;
    uint32_t capacity, opened;
    uint64_t oversize;
    simnet_counters closed; /* what the sockets ENet closed counted */
    simnet_socket sockets[SIMNET_SOCKETS_MAX];
    cradle_proxy_packet scratch;
} net;

int simnet_open(const cradle_proxy_impairment *link, uint32_t capacity, char *message, size_t message_size) {
    assert(!net.open && capacity > 0);
    if (!cradle_proxy_impairment_valid(link)) {
        snprintf(message, message_size, "the link's impairment is out of range");
        return -1;
    }
    memset(&net, 0, sizeof net);
    net.open = true;
    net.now_ns = START_NS;
    net.link = *link;
    net.capacity = capacity;
    return 0;
}

static void add_counters(simnet_counters *c, const cradle_proxy_counters *s) {
    c->submitted += s->submitted;
    c->lost += s->lost;
    c->duplicated += s->duplicated;
    c->reordered += s->reordered;
    c->overflowed += s->overflowed;
    c->released += s->released;
}

/* A socket ENet closed: its scheduler goes, what it counted stays. */
static void free_socket(simnet_socket *s) {
    if (s->used) add_counters(&net.closed, &s->sched.counters);
    free(s->entries);
    free(s->packets);
    free(s->free_list);
    memset(s, 0, sizeof *s);
}

void simnet_close(void) {
    for (uint32_t i = 0; i < SIMNET_SOCKETS_MAX; i++)
        if (net.sockets[i].used) free_socket(&net.sockets[i]);
    net.open = false;
}

uint64_t simnet_now_ns(void) { return net.now_ns; }

void simnet_advance(uint64_t ns) { net.now_ns += ns; }

simnet_counters simnet_counters_read(void) {
    simnet_counters c = net.closed;
    c.oversize = net.oversize;
    for (uint32_t i = 0; i < SIMNET_SOCKETS_MAX; i++)
        if (net.sockets[i].used) add_counters(&c, &net.sockets[i].sched.counters);
    return c;
}

/* The socket's scheduler, made the first time ENet reads it (a socket a
 * closed host left, whose number came back, starts anew: ENet's sockets
 * are read only by their own host, so a reused number is a new host's). */
static simnet_socket *socket_of(int fd) {
    simnet_socket *free_slot = NULL;
    for (uint32_t i = 0; i < SIMNET_SOCKETS_MAX; i++) {
        simnet_socket *s = &net.sockets[i];
        if (s->used && s->fd == fd) return s;
        if (!s->used && !free_slot) free_slot = s;
    }
    if (!free_slot) return NULL;
    simnet_socket *s = free_slot;
    s->entries = calloc(net.capacity, sizeof *s->entries);
    s->packets = calloc(net.capacity, sizeof *s->packets);
    s->free_list = calloc(net.capacity, sizeof *s->free_list);
    if (!s->entries || !s->packets || !s->free_list) {
        free_socket(s);
        return NULL;
    }
    cradle_proxy_impairment link = net.link;
    link.seed = net.link.seed * UINT64_C(0x9E3779B97F4A7C15) + ++net.opened; /* each socket its own draws */
    cradle_proxy_sched_init(&s->sched, &link, s->entries, s->packets, s->free_list, net.capacity);
    s->used = true;
    s->fd = fd;
    return s;
}

/* A datagram's sender travels in the scheduler's tag: IPv4 address and
 * port, network order. */
static uint64_t tag_of(const struct sockaddr_in *from) {
    return (uint64_t)from->sin_addr.s_addr << 16 | from->sin_port;
}

/* What the kernel holds for the socket, submitted at now. */
static void take_arrivals(simnet_socket *s) {
    uint64_t now_us = net.now_ns / 1000u;
    for (;;) {
        struct sockaddr_in from;
        socklen_t from_length = sizeof from;
        ssize_t n = recvfrom(s->fd, net.scratch.bytes, sizeof net.scratch.bytes, MSG_DONTWAIT | MSG_TRUNC,
                             (struct sockaddr *)&from, &from_length);
        if (n < 0) return; /* EAGAIN: drained (or failed: ENet reads again next service) */
        if ((size_t)n > sizeof net.scratch.bytes || from.sin_family != AF_INET) {
            net.oversize++;
            continue;
        }
        (void)cradle_proxy_sched_submit(&s->sched, now_us, tag_of(&from), net.scratch.bytes, (uint32_t)n);
    }
}

/* ---- ENet's platform functions, replaced (enet/unix.h's signatures) ---- */

enet_uint32 enet_time_get(void) { return (enet_uint32)(net.now_ns / 1000000u); }

int enet_socket_receive(ENetSocket socket, ENetAddress *address, ENetBuffer *buffers, size_t bufferCount) {
    assert(net.open && "simnet_open before the first ENet host");
    simnet_socket *s = socket_of(socket);
    if (!s) {
        errno = ENOMEM;
        return -1;
    }
    take_arrivals(s);
    if (!cradle_proxy_sched_pop_due(&s->sched, net.now_ns / 1000u, &net.scratch)) return 0;
    /* ENet reads into one buffer of its MTU; a datagram is never split */
    assert(bufferCount >= 1);
    size_t length = net.scratch.length;
    if (length > buffers[0].dataLength) return -1; /* ENet's own answer to a truncated datagram */
    memcpy(buffers[0].data, net.scratch.bytes, length);
    if (address) {
        address->host = (enet_uint32)(net.scratch.tag >> 16);
        address->port = ntohs((uint16_t)(net.scratch.tag & 0xFFFFu));
    }
    (void)bufferCount;
    return (int)length;
}

void enet_socket_destroy(ENetSocket socket) {
    for (uint32_t i = 0; i < SIMNET_SOCKETS_MAX; i++)
        if (net.sockets[i].used && net.sockets[i].fd == socket) free_socket(&net.sockets[i]);
    if (socket != ENET_SOCKET_NULL) (void)close(socket);
}
