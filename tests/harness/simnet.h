#ifndef CRADLE_TEST_SIMNET_H
#define CRADLE_TEST_SIMNET_H
/*
 * simnet: a test clock and an impaired network under ENet, for the
 * in-process harness (harness.h). ENet keeps its own clock and reads its
 * own sockets; a program that links this module replaces two of ENet's
 * platform functions (ELF symbol interposition: libenet calls them through
 * its PLT, and an executable's definition comes first):
 *
 *   enet_time_get        the test clock (simnet_now_ns), in ms: ENet's
 *                        retransmissions, pings and timeouts run on it;
 *   enet_socket_receive  reads what the kernel holds for the socket (real
 *                        UDP sockets on loopback, so ENet's sends and the
 *                        server's raw batches, sendmmsg, need nothing
 *                        replaced), submits each datagram at the test
 *                        clock's now to the socket's scheduler
 *                        (tools/proxy_sched.h: loss, latency and jitter,
 *                        reordering, duplicates, from a seed) and hands
 *                        ENet only what the scheduler released by now.
 *
 * Everything else that decides by time in the server and the clients takes
 * its time as a parameter (cradle_server_net_turn, cradle_server_host_poll,
 * cradle_netclient_service, ...): the harness passes simnet_now_ns. So a
 * session runs on one thread, as fast as the machine computes it, and the
 * same seeds impair the same datagrams the same way.
 *
 * What stays real: the kernel's receive timestamps of the raw PING and PONG
 * (raw_datagram.h), so the link's measured round trip (rtt_us) is the real
 * loopback's, not the simulated one. ENet's own round trip, which paces its
 * retransmissions and the step stream's repairs, is on the test clock.
 *
 * One network per process (ENet's functions have no context): simnet_open
 * before the first ENet host, simnet_close after the last. Memory: each
 * socket's scheduler (capacity packets) is allocated the first time the
 * socket is read; nothing after that.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proxy_sched.h"

#define SIMNET_SOCKETS_MAX 64u

typedef struct simnet_counters {
    uint64_t submitted, lost, duplicated, reordered, overflowed, released;
    uint64_t oversize; /* datagrams longer than CRADLE_PROXY_PACKET_MAX (or not IPv4), dropped */
} simnet_counters;

/* Opens the network: every socket's link is `link` (its seed made distinct
 * per socket, in the order the sockets are first read); capacity packets in
 * flight toward one socket. The clock starts at 1 s. Returns 0, or -1 with
 * message. */
int simnet_open(const cradle_proxy_impairment *link, uint32_t capacity, char *message, size_t message_size);

/* Frees every socket's scheduler (the sockets are ENet's: it closes them). */
void simnet_close(void);

/* The test clock, ns (any origin: it starts at 1 s). */
uint64_t simnet_now_ns(void);

/* Moves the test clock on by ns. */
void simnet_advance(uint64_t ns);

/* What every socket's scheduler did since simnet_open, summed (the
 * sockets ENet closed since included). */
simnet_counters simnet_counters_read(void);

#endif
