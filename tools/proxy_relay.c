#include "proxy_relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cradle/systime.h"

#define TO_SERVER 0u
#define TO_CLIENT 1u

static uint64_t now_us(void) { return cradle_mono_ns() / 1000u; }

static int set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL, 0);
    return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

int cradle_proxy_relay_open(cradle_proxy_relay *relay, const struct sockaddr_in *listen,
                            const struct sockaddr_in *server, const cradle_proxy_impairment *config,
                            uint32_t capacity, char *message, size_t message_size) {
    memset(relay, 0, sizeof *relay);
    relay->listen_fd = -1;
    relay->listen_addr = *listen;
    relay->server_addr = *server;
    relay->capacity = capacity;
    relay->entries = calloc(capacity, sizeof *relay->entries);
    relay->packets = calloc(capacity, sizeof *relay->packets);
    relay->free_list = calloc(capacity, sizeof *relay->free_list);
    if (!relay->entries || !relay->packets || !relay->free_list) {
        snprintf(message, message_size, "out of memory for %u packets", capacity);
        cradle_proxy_relay_close(relay);
        return -1;
    }
    cradle_proxy_sched_init(&relay->sched, config, relay->entries, relay->packets, relay->free_list, capacity);
    relay->listen_fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (relay->listen_fd < 0 || set_nonblocking(relay->listen_fd) != 0 ||
        bind(relay->listen_fd, (const struct sockaddr *)&relay->listen_addr, sizeof relay->listen_addr) != 0) {
        char host[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &listen->sin_addr, host, sizeof host);
        snprintf(message, message_size, "cannot listen on UDP %s:%u: %s", host, (unsigned)ntohs(listen->sin_port),
                 strerror(errno));
        cradle_proxy_relay_close(relay);
        return -1;
    }
    socklen_t length = sizeof relay->listen_addr;
    getsockname(relay->listen_fd, (struct sockaddr *)&relay->listen_addr, &length);
    return 0;
}

/* The flow of a client address, opening (or recycling the least recently
 * used) one with a new upstream socket. Returns its index or -1. */
static int flow_for(cradle_proxy_relay *r, const struct sockaddr_in *from, uint64_t now) {
    int free_index = -1, oldest = 0;
    for (uint32_t i = 0; i < CRADLE_PROXY_RELAY_FLOWS; i++) {
        cradle_proxy_flow *f = &r->flows[i];
        if (f->used && f->client.sin_addr.s_addr == from->sin_addr.s_addr && f->client.sin_port == from->sin_port) {
            f->last_us = now;
            return (int)i;
        }
        if (!f->used && free_index < 0) free_index = (int)i;
        if (f->used && f->last_us < r->flows[oldest].last_us) oldest = (int)i;
    }
    int index = free_index;
    if (index < 0) {
        index = oldest;
        close(r->flows[index].upstream);
        r->flows[index].used = false;
        r->flows_recycled++;
    }
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) return -1;
    if (set_nonblocking(fd) != 0 ||
        connect(fd, (const struct sockaddr *)&r->server_addr, sizeof r->server_addr) != 0) {
        close(fd);
        return -1;
    }
    cradle_proxy_flow *f = &r->flows[index];
    f->used = true;
    f->generation++;
    f->client = *from;
    f->upstream = fd;
    f->last_us = now;
    r->flows_opened++;
    return index;
}

static uint64_t make_tag(uint32_t index, uint32_t generation, uint32_t direction) {
    return (uint64_t)generation << 32 | (uint64_t)index << 1 | direction;
}

static void release_due(cradle_proxy_relay *r, uint64_t now) {
    cradle_proxy_packet packet;
    while (cradle_proxy_sched_pop_due(&r->sched, now, &packet)) {
        uint32_t direction = (uint32_t)(packet.tag & 1u);
        uint32_t index = (uint32_t)(packet.tag >> 1) & 0x7FFFFFFFu;
        uint32_t generation = (uint32_t)(packet.tag >> 32);
        cradle_proxy_flow *f = &r->flows[index];
        if (!f->used || f->generation != generation) {
            r->stale++;
            continue;
        }
        ssize_t n;
        if (direction == TO_SERVER)
            n = send(f->upstream, packet.bytes, packet.length, 0);
        else
            n = sendto(r->listen_fd, packet.bytes, packet.length, 0, (const struct sockaddr *)&f->client,
                       sizeof f->client);
        if (n < 0)
            r->send_errors++; /* full socket buffer or ICMP-refused peer: a loss, as on a network */
        else
            r->bytes_out += (uint64_t)n;
    }
}

/* Reads every datagram waiting on fd (the listen socket when index < 0). */
static void receive(cradle_proxy_relay *r, int fd, int index, uint64_t now) {
    uint8_t buf[CRADLE_PROXY_PACKET_MAX + 1]; /* one more: a longer datagram is seen as too long */
    for (;;) {
        struct sockaddr_in from;
        socklen_t from_len = sizeof from;
        ssize_t n = recvfrom(fd, buf, sizeof buf, MSG_TRUNC, (struct sockaddr *)&from, &from_len);
        if (n < 0) return; /* EAGAIN, or an ICMP error on a connected socket: nothing to forward */
        r->bytes_in += (uint64_t)n;
        if ((size_t)n > CRADLE_PROXY_PACKET_MAX) {
            r->oversize++;
            continue;
        }
        uint32_t direction = TO_CLIENT;
        int fi = index;
        if (index < 0) {
            if (from_len != sizeof from || from.sin_family != AF_INET) continue;
            fi = flow_for(r, &from, now);
            if (fi < 0) {
                r->send_errors++;
                continue;
            }
            direction = TO_SERVER;
        } else {
            r->flows[index].last_us = now;
        }
        uint64_t tag = make_tag((uint32_t)fi, r->flows[fi].generation, direction);
        cradle_proxy_sched_submit(&r->sched, now, tag, buf, (uint32_t)n);
    }
}

bool cradle_proxy_relay_turn(cradle_proxy_relay *r, int max_wait_ms) {
    struct pollfd fds[1 + CRADLE_PROXY_RELAY_FLOWS];
    int owner[1 + CRADLE_PROXY_RELAY_FLOWS];
    nfds_t n = 0;
    fds[n] = (struct pollfd){.fd = r->listen_fd, .events = POLLIN};
    owner[n++] = -1;
    for (uint32_t i = 0; i < CRADLE_PROXY_RELAY_FLOWS; i++) {
        if (!r->flows[i].used) continue;
        fds[n] = (struct pollfd){.fd = r->flows[i].upstream, .events = POLLIN};
        owner[n++] = (int)i;
    }
    int timeout = max_wait_ms;
    uint64_t next = 0, now = now_us();
    if (cradle_proxy_sched_next_release(&r->sched, &next)) {
        /* Round up: waking early would only spin. */
        uint64_t wait = next > now ? (next - now + 999u) / 1000u : 0;
        if (wait < (uint64_t)timeout) timeout = (int)wait;
    }
    int ready = poll(fds, n, timeout);
    if (ready < 0 && errno != EINTR) return false;
    now = now_us();
    for (nfds_t i = 0; ready > 0 && i < n; i++)
        if (fds[i].revents & (POLLIN | POLLERR)) receive(r, fds[i].fd, owner[i], now);
    release_due(r, now_us());
    return true;
}

void cradle_proxy_relay_close(cradle_proxy_relay *r) {
    for (uint32_t i = 0; i < CRADLE_PROXY_RELAY_FLOWS; i++)
        if (r->flows[i].used) close(r->flows[i].upstream);
    memset(r->flows, 0, sizeof r->flows);
    if (r->listen_fd >= 0) close(r->listen_fd);
    r->listen_fd = -1;
    free(r->entries);
    free(r->packets);
    free(r->free_list);
    r->entries = NULL;
    r->packets = NULL;
    r->free_list = NULL;
}
