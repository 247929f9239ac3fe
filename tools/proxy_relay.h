#ifndef CRADLE_PROXY_RELAY_H
#define CRADLE_PROXY_RELAY_H
/*
 * proxy_relay: the UDP relay of cradle-proxy, and of the tests' in-process
 * harness, that puts an impaired link (proxy_sched.h) between clients and a
 * server on one machine.
 *
 *   clients ──UDP──> listen ADDR:PORT  [relay]  ──UDP──> server ADDR:PORT
 *
 * Every datagram in either direction goes through the scheduler (loss,
 * latency with jitter, reordering, duplicates, from its seed). Each client
 * address gets its own upstream socket, so the server sees one distinct
 * peer per client; CRADLE_PROXY_RELAY_FLOWS at once, the least recently
 * used recycled. Memory is allocated at open for `capacity` packets in
 * flight; a turn allocates nothing.
 *
 * One thread drives a relay: cradle_proxy_relay_turn waits (at most the
 * given time, less when a packet falls due) and forwards what arrived and
 * what is due. The scheduler's settings (relay->sched.config) may be changed
 * between turns: cradle-proxy's --latency-at does.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netinet/in.h>

#include "proxy_sched.h"

#define CRADLE_PROXY_RELAY_FLOWS 64u

typedef struct cradle_proxy_flow {
    bool used;
    uint32_t generation; /* bumped on reuse: packets still queued for the old client are dropped */
    struct sockaddr_in client;
    int upstream; /* connected to the server */
    uint64_t last_us;
} cradle_proxy_flow;

typedef struct cradle_proxy_relay {
    struct sockaddr_in listen_addr; /* after open: the port the kernel chose for port 0 */
    struct sockaddr_in server_addr;
    int listen_fd;
    cradle_proxy_flow flows[CRADLE_PROXY_RELAY_FLOWS];
    cradle_proxy_sched sched;
    uint32_t capacity;
    cradle_proxy_entry *entries; /* the scheduler's storage, capacity each */
    cradle_proxy_packet *packets;
    uint32_t *free_list;
    uint64_t oversize, stale, send_errors, flows_opened, flows_recycled;
    uint64_t bytes_in, bytes_out;
} cradle_proxy_relay;

/* Binds listen (port 0: the kernel chooses) and sets up the scheduler with
 * config for capacity packets. Returns 0, or -1 with message saying why
 * (out of memory, the socket). */
int cradle_proxy_relay_open(cradle_proxy_relay *relay, const struct sockaddr_in *listen,
                            const struct sockaddr_in *server, const cradle_proxy_impairment *config,
                            uint32_t capacity, char *message, size_t message_size);

/* Waits up to max_wait_ms (less when a packet falls due first) for
 * datagrams, forwards them through the scheduler and releases what is due.
 * Returns false when poll failed. */
bool cradle_proxy_relay_turn(cradle_proxy_relay *relay, int max_wait_ms);

void cradle_proxy_relay_close(cradle_proxy_relay *relay);

#endif
